/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsink: RTP payloader and UDP sink in one element. */
#ifndef __GST_UVGRTP_SINK_H__
#define __GST_UVGRTP_SINK_H__

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>

#include "urtp/batch.h"
#include "urtp/codec.h"
#include "urtp/net.h"
#include "urtp/pay.h"
#include "urtp/sender.h"
#include "urtp/srtp.h"

#include "gstuvgrtpcommon.h"
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

typedef struct _GstUvgRtpSink GstUvgRtpSink;

/* Input buffers mapped for a batch whose iovecs point into them. */
typedef struct
{
  GstBuffer **bufs;             /* one reference each */
  GstMapInfo *maps;
  guint n, cap;
} GstUvgRtpSinkHold;
typedef struct _GstUvgRtpSinkClass GstUvgRtpSinkClass;

/* Parameter-set kinds, in the order they are sent: DCI, VPS, SPS, PPS. */
#define GST_UVGRTP_SINK_PS_KINDS 4

struct _GstUvgRtpSink
{
  GstBaseSink parent;

  /* properties, under the object lock */
  gchar *host;
  gint port;
  gchar *bind_address;
  gint bind_port;
  gint buffer_size;
  gint ttl;
  gint ttl_mc;
  gchar *multicast_iface;
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
  gchar *sdp_file;
  gchar *srtp_key;              /* hex master key || salt; NULL: no SRTP */
  GstUvgRtpSrtpCipher srtp_cipher;
  GstUvgRtpSrtpAuth srtp_auth;
  GstUvgRtpZrtpSettings zrtp;

  /* network: opened in start(), closed in stop() */
  urtp_sock_t sock;
  gboolean sock_open;
  gchar *remote_ip;             /* numeric form of host (object lock) */

  /* payloading: streaming thread */
  urtp_pay_t pay;
  gboolean have_pay;
  urtp_batch_t *batch;          /* being built: batch_store[cur] */
  urtp_codec_t codec;
  gboolean have_codec;          /* object lock */
  guint nal_length_size;        /* 0: Annex-B byte-stream */
  gboolean align_au;
  guint opus_channels;          /* object lock */
  gboolean opus_marker;         /* next Opus packet starts a talkspurt */
  guint32 cur_ssrc;
  guint32 cur_ts_offset;
  guint16 cur_seq_offset;
  guint32 last_rtptime;
  GstClockTime last_running_time;
  urtp_nal_t *nals;
  gsize nals_cap;

  /* Sending: inline, or (send-thread) on a urtp_sender thread while the
   * next access unit is packetized. Two sets of batches and mapped input
   * buffers alternate: [cur] is being built, [cur ^ 1] may be in flight
   * and stays intact until the next submit returns. */
  gboolean send_thread;         /* property (object lock) */
  gboolean pad_fragments;       /* property (object lock) */
  urtp_sender_t *sender;        /* NULL: send inline */
  guint cur;
  urtp_batch_t batch_store[2];
  urtp_batch_t srtp_store[2];
  GstUvgRtpSinkHold hold[2];
  GstFlowReturn tx_flow;        /* sticky failure from the thread (object lock) */

  /* SRTP: started in start(), streaming thread; srtp.session NULL when
   * off. Packets are protected from batch into srtp_batch. */
  urtp_srtp_t srtp;
  urtp_batch_t *srtp_batch;     /* srtp_store[cur] */

  /* ZRTP: the endpoint (pointer under the object lock; set in start(),
   * kept after stop() for the properties), and the streaming thread's view
   * of it. With zrtp, srtp above holds the agreed keys once secure. */
  GstUvgRtpZrtpCtl *zrtp_ctl;
  gboolean zrtp_on;
  gboolean zrtp_allow_clear;
  gint zrtp_serial;             /* of the keys in srtp */
  guint zrtp_fku_count;         /* force-key-unit events sent */
  guint64 zrtp_aus_mark;        /* access_units at the last flush */

  /* access-unit state for parameter-set tracking and config-interval */
  guint au_ps_mask;             /* kinds seen in band in the current AU */
  gboolean au_vcl_seen;
  GstClockTime au_pts;
  GPtrArray *pending_ps[GST_UVGRTP_SINK_PS_KINDS];
  GstClockTime last_config;     /* running time parameter sets last went out */
  gboolean warned_no_ps;

  /* known parameter sets, GBytes each (object lock; written by the
   * streaming thread only) */
  GPtrArray *ps[GST_UVGRTP_SINK_PS_KINDS];
  guint ps_serial;
  guint sdp_written_serial;     /* ps_serial + 1 of the last sdp-file write */

  /* statistics (object lock) */
  guint64 packets;
  guint64 bytes;
  guint64 access_units;
  guint64 send_errors;
  guint64 syscalls;
  guint64 send_messages;        /* messages (GSO runs) the kernel took */
  guint64 padding_bytes;        /* RTP padding packetized (pad-fragments) */
  guint64 srtp_errors;          /* packets SRTP protection refused */
  guint64 zrtp_held;            /* access units not sent: keys pending */
  guint64 zrtp_held_packets;
  guint64 zrtp_sent_clear;      /* packets sent in clear (allow-clear) */
  gint eff_buffer_size;
  urtp_io_mode_t eff_send_mode;
  gint64 fail_since;            /* monotonic µs of the first failed send */
  gint64 last_warning;
};

struct _GstUvgRtpSinkClass
{
  GstBaseSinkClass parent_class;
};

GType gst_uvgrtp_sink_get_type (void);

G_END_DECLS

#endif /* __GST_UVGRTP_SINK_H__ */
