/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpzrtp: ZRTP key agreement and SRTP for any RTP pipeline. */
#ifndef __GST_UVGRTP_ZRTP_H__
#define __GST_UVGRTP_ZRTP_H__

#include <gst/gst.h>

#include "urtp/srtp.h"
#include "urtp/zrtp.h"

#include "gstuvgrtpzrtpctl.h"

G_BEGIN_DECLS

#define GST_TYPE_UVGRTP_ZRTP (gst_uvgrtp_zrtp_get_type ())
G_DECLARE_FINAL_TYPE (GstUvgRtpZrtp, gst_uvgrtp_zrtp, GST, UVGRTP_ZRTP,
    GstElement)

/* Counters, under the element's lock; reset when the element starts. */
typedef struct
{
  guint64 zrtp_in;              /* ZRTP packets received and handled */
  guint64 zrtp_out;             /* ZRTP packets sent, retransmissions too */
  guint64 zrtp_bad;             /* malformed (CRC, lengths) */
  guint64 zrtp_unexpected;      /* valid, but not for the state */
  guint64 zrtp_auth_fail;       /* hash chain or MAC failed */
  guint64 dropped_send;         /* RTP/RTCP to send, dropped: not secure */
  guint64 dropped_recv;         /* RTP/RTCP received, dropped: no keys */
  guint64 clear_sent;           /* sent unprotected (allow-clear) */
  guint64 clear_received;       /* passed unprotected (allow-clear) */
  guint64 srtp_protected, srtcp_protected;
  guint64 srtp_unprotected, srtcp_unprotected;
  guint64 srtp_auth_fail;       /* received SRTP/SRTCP failing its tag */
  guint64 srtp_replay;          /* received SRTP/SRTCP replayed or too old */
  guint64 srtp_other;           /* other SRTP failures either way */
} GstUvgRtpZrtpStats;

struct _GstUvgRtpZrtp
{
  GstElement parent;

  GstPad *recv_rtp_sink, *recv_rtp_src;
  GstPad *recv_rtcp_sink, *recv_rtcp_src;
  GstPad *send_rtp_sink, *send_rtp_src;
  GstPad *send_rtcp_sink, *send_rtcp_src;

  /* Everything below is under lock, except where noted. The lock is never
   * held while pushing or posting: what the ZRTP session sends and the
   * messages it causes are queued and handed on after it is released. */
  GMutex lock;
  GCond cond;                   /* wakes the timer thread */
  /* Serialises everything pushed on send_rtp_src (media, ZRTP, events),
   * taken before lock when both are needed. */
  GMutex push_lock;

  /* properties */
  gboolean allow_clear;
  gchar *cache_file;
  gboolean have_zid;
  guint8 zid[URTP_ZRTP_ZID_LEN];
  guint ssrc;
  guint replay_window;

  /* the session */
  urtp_zrtp_t *zrtp;
  gboolean start_failed;        /* the session could not be created */
  gint64 start_at_ms;           /* start without media's SSRC then; 0: no */
  gboolean have_media_ssrc;
  guint32 media_ssrc;           /* of the first RTP packet to send */
  GQueue early;                 /* ZRTP packets from before the start */
  urtp_srtp_t tx, rx;           /* one context per direction */
  gboolean have_srtp;
  gboolean secure_reported;
  gboolean failed_pending;      /* post the failure once the call returns */
  urtp_zrtp_info_t last_info;   /* kept when the session is freed */
  gboolean have_last_info;
  GstUvgRtpZrtpStats stats;

  /* handed on after the lock is released */
  GQueue out_pkts;              /* GstBuffer: ZRTP packets to send */
  GQueue messages;              /* GstMessage */
  guint notify;                 /* bit per property to notify */

  /* the timer thread drives retransmissions and timeouts */
  GThread *timer;
  gboolean timer_stop;

  /* set under push_lock: send_rtp_src has stream-start, caps, segment */
  gboolean send_events_ok;
};

G_END_DECLS

#endif
