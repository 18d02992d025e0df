/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsink: RTP payloader and UDP sink in one element, a mapping of
 * GStreamer buffers, caps and properties onto lib/urtp/sendstream.h. */
#ifndef __GST_UVGRTP_SINK_H__
#define __GST_UVGRTP_SINK_H__

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>

#include "urtp/net.h"
#include "urtp/pay.h"
#include "urtp/sendstream.h"
#include "urtp/rtcpio.h"

#include "gstuvgrtpcommon.h"
#include "gstuvgrtpprops.h"
#include "gstuvgrtphdrext.h"
#include "gstuvgrtpsrtp.h"
#include "gstuvgrtpzrtpctl.h"

G_BEGIN_DECLS

#define GST_TYPE_UVGRTP_SINK (gst_uvgrtp_sink_get_type ())
#define GST_UVGRTP_SINK(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), GST_TYPE_UVGRTP_SINK, GstUvgRtpSink))
#define GST_UVGRTP_SINK_CLASS(klass) \
  (G_TYPE_CHECK_CLASS_CAST ((klass), GST_TYPE_UVGRTP_SINK, GstUvgRtpSinkClass))
#define GST_IS_UVGRTP_SINK(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), GST_TYPE_UVGRTP_SINK))
#define GST_IS_UVGRTP_SINK_CLASS(klass) \
  (G_TYPE_CHECK_CLASS_TYPE ((klass), GST_TYPE_UVGRTP_SINK))

/* congestion-control (gstuvgrtpsinkcc.c) */
typedef enum
{
  GST_UVGRTP_CC_NONE,
  GST_UVGRTP_CC_AUTO,
  GST_UVGRTP_CC_GCC,
} GstUvgRtpCongestionControl;

#define GST_TYPE_UVGRTP_CONGESTION_CONTROL \
  (gst_uvgrtp_congestion_control_get_type ())
GType gst_uvgrtp_congestion_control_get_type (void);

/* Its properties, in the order installed from the element's first id. */
enum
{
  GST_UVGRTP_SINK_CC_PROP_MODE,
  GST_UVGRTP_SINK_CC_PROP_MIN,
  GST_UVGRTP_SINK_CC_PROP_START,
  GST_UVGRTP_SINK_CC_PROP_ESTIMATED,
  GST_UVGRTP_SINK_CC_PROP_ADAPT_ENCODER,
  GST_UVGRTP_SINK_CC_PROP_MESSAGE_THRESHOLD,
  GST_UVGRTP_SINK_CC_N_PROPS
};

typedef struct
{
  /* properties, under the object lock */
  gint mode;                    /* GstUvgRtpCongestionControl */
  guint min_bitrate, start_bitrate;     /* bits/s */
  guint64 max_bitrate;          /* GstBaseSink's, as last applied */
  gboolean adapt_encoder;
  gdouble message_threshold;
  gint bounds_changed;          /* atomic: min or max set */
  gint estimated;               /* atomic (guint): bits/s; 0: none yet */
  /* streaming thread, from start() to stop() */
  gboolean on;                  /* the stream's controller runs */
  gint serial;                  /* the extensions' serial it was set up for */
  gboolean looked;              /* the encoder was looked for */
  GstElement *encoder;          /* upstream, or NULL */
  const void *entry;            /* its line of the table */
  guint64 applied;              /* bits/s the encoder was last set to */
  gint64 applied_at;            /* monotonic us */
  guint64 messaged;             /* the estimate the last message gave */
} GstUvgRtpSinkCc;

typedef struct _GstUvgRtpSink GstUvgRtpSink;
typedef struct _GstUvgRtpSinkClass GstUvgRtpSinkClass;
typedef struct _GstUvgRtpSinkHold GstUvgRtpSinkHold;
typedef struct _GstUvgRtpSinkClient GstUvgRtpSinkClient;

struct _GstUvgRtpSink
{
  GstBaseSink parent;

  /* properties, under the object lock; the ones uvgrtpsrc has too in
   * common (gstuvgrtpprops.h) */
  GstUvgRtpCommonSettings common;
  gchar *host;
  gint port;
  gchar *bind_address;
  gint bind_port;
  gint ttl;
  gint ttl_mc;
  gboolean auto_multicast;
  gboolean loop;
  gint qos_dscp;
  guint mtu;
  guint pt;
  guint ssrc;
  gint seqnum_offset;
  guint timestamp_offset;
  gint config_interval;
  GstUvgRtpAggregateMode aggregate_mode;
  GstUvgRtpSendMode send_mode;
  gboolean send_thread;
  gboolean pad_fragments;
  guint64 pacing_rate;          /* bits per second; 0: off */
  gdouble pacing_factor;        /* times the measured bitrate; 0: off */
  guint pacing_burst;           /* bytes; 0: the library's default */
  gint rtcp_bind_port;          /* local; 0: ephemeral */
  guint rtx_max_size_time;      /* ms */
  guint rtx_max_size_packets;
  guint64 min_force_key_unit_interval;  /* ns */
  gchar *sdp_file;
  gboolean send_duplicates;
  GstCaps *rtp_caps;            /* extmap-N fields for header extensions */
  GSocket *socket_v6;           /* the application's IPv6 socket, or NULL */
  GSocket *used_socket_v6;      /* while open, when the socket is IPv6 */
  gboolean perfect_rtptime;     /* accepted: no offsets in clock-rate units */
  gboolean scale_rtptime;       /* RTP time from running time (else stream) */
  gboolean onvif_no_rate_control;       /* RTP time from stream time */
  gboolean source_info;         /* CSRCs from GstRTPSourceMeta */
  gboolean dtx;                 /* Opus packets <= 2 bytes not sent */
  guint64 bytes_to_serve;       /* input bytes (multiudpsink's) */

  /* RTP header extensions (gstuvgrtphdrext.h; a lock of its own) */
  GstUvgRtpHdrExt hdrext;
  /* congestion control (gstuvgrtpsinkcc.c) */
  GstUvgRtpSinkCc cc;

  /* the destinations as given (gstuvgrtpsinkclients.c): host and port are
   * one of them; under the object lock. clients_busy counts callers using
   * the stream outside the lock (stop() waits for none, clients_cond). */
  GPtrArray *clients;           /* of GstUvgRtpSinkClient */
  gchar *clients_error;         /* an entry of 'clients' not host:port */
  guint clients_busy;
  GCond clients_cond;

  /* The socket and the sending stream, from start() to stop(). The stream
   * pointer, and what start() sets for readers of stats and sdp, change
   * under the object lock. */
  urtp_sock_t sock;
  gboolean sock_open;
  GSocket *given_socket;        /* the application's socket in use, or NULL */
  urtp_sendstream_t *stream;
  urtp_rtcpio_t rtcpio;         /* RTCP's socket and schedule (its thread is
                                 * the stream's) */
  gboolean rtcp_on;
  gboolean rtcp_mux_on;         /* rtcpio shares sock */
  gboolean rtx_on;              /* the stream answers NACKs */
  guint8 cur_rtx_pt;
  gint fku_count;               /* atomic: force-key-unit events asked */
  gchar *remote_ip;             /* numeric form of host */
  guint32 cur_ssrc;
  guint16 cur_seq_offset;
  guint32 cur_ts_offset;
  gint eff_buffer_size;
  urtp_sendstream_stats_t last_stats;   /* of the stream last stopped */
  gboolean negotiated;          /* caps set since start() */
  urtp_codec_t codec;
  guint sdp_written_serial;     /* parameter-set serial + 1 last written */
  gint unlocked;                /* atomic: between unlock and unlock_stop */

  /* streaming thread */
  guint cur_mtu;
  guint32 last_rtptime;
  gint rtp_shift;               /* atomic: RTP time used minus that of the
                                 * running time (stream time; sender reports) */
  guint32 csrc[15];             /* the CSRCs the stream lists (source-info) */
  guint ncsrc;
  GstClockTime last_running_time;
  GstUvgRtpSinkHold *free_holds;
  guint64 errors_logged, srtp_errors_logged;
  gint64 last_warning;
  gboolean warned_no_ps;
  gboolean warned_behind;       /* the pacing-behind warning is posted */

  /* ZRTP: the endpoint (pointer under the object lock; set in start(),
   * kept after stop() for the properties); the stream keeps its keys in
   * line with it */
  GstUvgRtpZrtpCtl *zrtp_ctl;
  gboolean zrtp_on;
  guint zrtp_fku_count;
};

struct _GstUvgRtpSinkClass
{
  GstBaseSinkClass parent_class;
};

GType gst_uvgrtp_sink_get_type (void);

/* gstuvgrtpsinkformat.c: GstBaseSink's set_caps; the session description
 * (NULL while the format is unknown; with the object lock held); sdp-file
 * written when it changed (streaming thread; FALSE after posting an
 * error). */
gboolean gst_uvgrtp_sink_set_caps (GstBaseSink * bsink, GstCaps * caps);
gchar *gst_uvgrtp_sink_build_sdp (GstUvgRtpSink * self);
gboolean gst_uvgrtp_sink_write_sdp (GstUvgRtpSink * self);

/* gstuvgrtpsinkclients.c: host, port, clients and multiudpsink's actions
 * and signals; the stream's clients at start (FALSE after posting an
 * error). No lock held when called. */
/* gstuvgrtpsinkcc.c: congestion control's properties installed from id
 * first on (the sink's offset table sets and gets them in the cc fields);
 * whether it runs, given whether the packets carry transport-wide numbers
 * (object lock held); set up at the start (start TRUE: before any packet
 * leaves, so that feedback knows every one) and again whenever the
 * extensions change (the streaming thread);
 * after each send, the estimate onto the property, the bus and the
 * encoder; at stop. */
void gst_uvgrtp_sink_cc_install (GObjectClass * klass, guint first);
void gst_uvgrtp_sink_cc_init (GstUvgRtpSinkCc * cc);
void gst_uvgrtp_sink_cc_clear (GstUvgRtpSinkCc * cc);
gboolean gst_uvgrtp_sink_cc_wanted (GstUvgRtpSink * self, gboolean twcc);
void gst_uvgrtp_sink_cc_setup (GstUvgRtpSink * self, gboolean start);
void gst_uvgrtp_sink_cc_update (GstUvgRtpSink * self);
void gst_uvgrtp_sink_cc_stop (GstUvgRtpSink * self);

void gst_uvgrtp_sink_install_clients (GObjectClass * klass);
void gst_uvgrtp_sink_clients_init (GstUvgRtpSink * self);
void gst_uvgrtp_sink_clients_finalize (GstUvgRtpSink * self);
void gst_uvgrtp_sink_set_clients (GstUvgRtpSink * self, const gchar * list);
gchar *gst_uvgrtp_sink_get_clients (GstUvgRtpSink * self);
void gst_uvgrtp_sink_set_host_port (GstUvgRtpSink * self, const gchar * host,
    gint port);
void gst_uvgrtp_sink_add (GstUvgRtpSink * self, const gchar * host, gint port);
void gst_uvgrtp_sink_remove (GstUvgRtpSink * self, const gchar * host,
    gint port);
void gst_uvgrtp_sink_clear (GstUvgRtpSink * self);
GstStructure *gst_uvgrtp_sink_get_stats (GstUvgRtpSink * self,
    const gchar * host, gint port);
gboolean gst_uvgrtp_sink_clients_start (GstUvgRtpSink * self,
    urtp_sendstream_t * stream);
void gst_uvgrtp_sink_clients_wait_idle (GstUvgRtpSink * self);
/* The first client (host and port), for the socket's family and ZRTP's
 * peer; FALSE: none. Object lock. */
gboolean gst_uvgrtp_sink_first_client (GstUvgRtpSink * self, gchar ** host,
    gint * port, guint * nclients);

G_END_DECLS

#endif /* __GST_UVGRTP_SINK_H__ */
