/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsrc: UDP receive and RTP depayloading in one element. */
#ifndef __GST_UVGRTP_SRC_H__
#define __GST_UVGRTP_SRC_H__

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>
#include <gio/gio.h>
#include <sys/socket.h>

#include "urtp/codec.h"
#include "urtp/nalform.h"
#include "urtp/net.h"
#include "urtp/recvstream.h"
#include "urtp/rtcpio.h"
#include "urtp/srtp.h"

#include "gstuvgrtpcommon.h"
#include "gstuvgrtpprops.h"
#include "gstuvgrtphdrext.h"
#include "gstuvgrtpsrtp.h"
#include "gstuvgrtpzrtpctl.h"

G_BEGIN_DECLS

#define GST_TYPE_UVGRTP_SRC (gst_uvgrtp_src_get_type ())
G_DECLARE_FINAL_TYPE (GstUvgRtpSrc, gst_uvgrtp_src, GST, UVGRTP_SRC, GstPushSrc)

/* What the properties resolve to for one session: codec, payload type,
 * parameter sets to put in band. */
typedef struct
{
  urtp_codec_t codec;
  gint pt;                      /* -1: any */
  guint clock_rate;
  gboolean donl;
  gboolean ccfb;                /* rtcp-fb-ack-ccfb: RFC 8888 feedback asked */
  gint channels;                /* Opus: 0 = unknown */
  gint rate;                    /* Opus: 0 = unknown */
  urtp_opus_multi_t opus_multi; /* MULTIOPUS; channels 0: Opus */
  GstMemory *params;            /* Annex-B parameter sets, or NULL */
} GstUvgRtpSrcSession;

/* What rtpjitterbuffer and a depayloader tell downstream and the bus of
 * a loss (gstuvgrtpsrcloss.c); the streaming thread's, but for the
 * counters, which the object lock guards. */
typedef struct
{
  GstClockTime prev_end;        /* running time the last buffer ended at */
  GstClockTime gap_start;       /* where the media missing now starts */
  guint64 gap_missing;          /* sequence numbers missing before the next */
  guint64 late_seen;            /* the stream's late packets, last looked */
  guint num_too_late, num_drop_on_latency;  /* since the last drop-msg */
  gint64 last_drop_msg;         /* monotonic us; 0: none yet */
  guint64 dropped_on_latency, lost_events;  /* object lock */
} GstUvgRtpSrcLoss;

/* The output form downstream chose (gstuvgrtpsrcout.c), streaming thread. */
typedef struct
{
  urtp_nalform_kind_t kind;     /* byte-stream, or length-prefixed */
  gboolean nal_aligned;         /* alignment=nal */
  gboolean form_init;
  urtp_nalform_t form;          /* conversion and the parameter sets */
  gboolean caps_due;            /* caps with codec_data before the next buffer */
  gboolean waiting;             /* dropping until the sets are known */
  GstCaps *caps;                /* negotiated, without codec_data */
} GstUvgRtpSrcOut;

struct _GstUvgRtpSrc
{
  GstPushSrc parent;

  /* properties, under the object lock; the ones uvgrtpsink has too in
   * common (gstuvgrtpprops.h) */
  GstUvgRtpCommonSettings common;
  gchar *address;
  gint port;
  gboolean reuse;
  GstCaps *caps;
  /* RTP header extensions (gstuvgrtphdrext.h; a lock of its own) */
  GstUvgRtpHdrExt hdrext;
  guint64 timeout;
  gchar *encoding_name;
  gint recv_mode;
  guint latency;
  gint64 ssrc;                  /* -1: any */
  guint source_timeout;         /* ms */
  gboolean wait_for_keyframe;
  gint loss_policy;
  guint max_au_size;
  guint replay_window_size;
  gchar *rtcp_remote_host;      /* NULL: reply to the sender's reports' source */
  gint rtcp_remote_port;        /* 0: the local RTCP port's number */
  gboolean lip_sync;
  gboolean request_keyframe;    /* PLI when packets are given up */
  /* rtpjitterbuffer's (gstuvgrtpsrcloss.c); read with atomics too */
  gboolean do_lost;
  gboolean drop_on_latency;
  gboolean post_drop_messages;
  guint drop_messages_interval; /* ms */
  gint max_reorder;             /* -1: the reorder window */
  gint latency_changed;         /* atomic: latency set while running */
  /* udpsrc's */
  gchar *multicast_source;
  gboolean auto_multicast;
  gboolean loop;
  gboolean retrieve_sender_address;
  gint skip_first_bytes;
  guint mtu;                    /* accepted, not used */
  gint keyframe_asked;          /* atomic: 0, or 1 (PLI) / 2 (FIR) from
                                 * an upstream force-key-unit event */
  /* congestion control feedback */
  guint64 twcc_feedback_interval;       /* ns; 0: after each frame */
  gboolean rfc8888_feedback;
  gint ccfb_changed;            /* atomic: one of them set while running */

  /* set in start(), cleared in stop(), under the object lock; used by the
   * streaming thread in between */
  gboolean opened;
  urtp_sock_t sock;
  GSocket *given_socket;        /* the application's socket in use, or NULL */
  urtp_rx_t rx;
  gboolean rx_auto_on;          /* buffer-size 0: receive memory grows */
  urtp_rx_auto_t rx_auto;
  urtp_recvstream_t *stream;    /* stats: urtp_recvstream_stats(), any thread */
  urtp_rtcpio_t rtcpio;         /* RTCP's socket and schedule */
  gboolean rtcp_on;
  GstUvgRtpSrcSession session;
  /* ZRTP: the endpoint, set in start() and kept after stop() for the
   * properties (object lock) */
  GstUvgRtpZrtpCtl *zrtp_ctl;

  /* streaming thread */
  gboolean have_clock;          /* the last arrival was on the pipeline clock */
  guint64 clock_domain;         /* which clock (lip sync): its address, 0: none */
  gint64 last_packet_us;        /* monotonic, for the timeout message */
  guint64 warned_drops;         /* kernel drops already warned about */
  gint64 last_drop_warning;
  gboolean draining;
  gint ccfb_serial;             /* the extensions' serial the stream was told */
  GstUvgRtpSrcLoss loss;        /* gstuvgrtpsrcloss.c */
  GstUvgRtpSrcOut out;          /* gstuvgrtpsrcout.c */
  GSocketAddress *sender_addr;  /* the followed source's, for the meta */
  struct sockaddr_storage sender_native;

  /* set from other threads (atomics) */
  gint caps_changed;            /* caps property set while running */
  gint flushing;
  gint eos;
  gint resume;                  /* PAUSED -> PLAYING after PLAYING: flush */
  gboolean was_playing;         /* state-change thread */

  /* last statistics, kept for reading after stop */
  GstStructure *last_stats;
};

/* Kinds of configuration error, for the bus message. */
enum
{
  GST_UVGRTP_SRC_ERR_SETTINGS,
  GST_UVGRTP_SRC_ERR_STREAM,
};

/* gstuvgrtpsrcsession.c. Resolves the codec, payload type and parameter
 * sets from the properties; called with the object lock. On failure
 * returns FALSE with a message for the bus in *err_msg (and the kind of
 * error in *err_code, for gst_uvgrtp_src_post_config_error, which takes
 * msg). */
gboolean gst_uvgrtp_src_session_resolve (GstUvgRtpSrc * self,
    GstUvgRtpSrcSession * out, gchar ** err_msg, gint * err_code);
void gst_uvgrtp_src_post_config_error (GstUvgRtpSrc * self, gchar * msg,
    gint code);
/* gstuvgrtpsrcloss.c, streaming thread. Resets for a new start (called
 * with the object lock). */
void gst_uvgrtp_src_loss_reset (GstUvgRtpSrc * self);
/* With drop-on-latency, whether f is too old to go out (then it is
 * released, counted and its media is part of the next gap). */
gboolean gst_uvgrtp_src_loss_drop_late (GstUvgRtpSrc * self,
    urtp_recvstream_frame_t * f);
/* Before buf (made of f) goes out: the lost event and, for audio, the gap
 * event of what is missing before it (do-lost). */
void gst_uvgrtp_src_loss_before (GstUvgRtpSrc * self,
    const urtp_recvstream_frame_t * f, GstBuffer * buf);
/* Late packets the stream counted since the last look: drop-msg. */
void gst_uvgrtp_src_loss_check_late (GstUvgRtpSrc * self,
    const urtp_recvstream_stats_t * st);

/* gstuvgrtpsrcout.c, streaming thread (reset also in start and stop).
 * Negotiate picks downstream's first choice of ours and sets the caps,
 * or leaves them for the first access unit whose parameter sets complete
 * codec_data. Convert brings f into that form; FALSE: f was released
 * and nothing goes out. Finish gives buf back, or NULL when it went as a
 * buffer list of NAL units (submitted to the base class). */
void gst_uvgrtp_src_out_reset (GstUvgRtpSrc * self);
gboolean gst_uvgrtp_src_out_negotiate (GstUvgRtpSrc * self, GstCaps * ours);
gboolean gst_uvgrtp_src_out_convert (GstUvgRtpSrc * self,
    urtp_recvstream_frame_t * f);
GstBuffer *gst_uvgrtp_src_out_finish (GstUvgRtpSrc * self, GstBuffer * buf);

/* The output caps for s: each form it can take. */
GstCaps *gst_uvgrtp_src_session_caps (const GstUvgRtpSrcSession * s);
void gst_uvgrtp_src_session_clear (GstUvgRtpSrcSession * s);

G_END_DECLS

#endif
