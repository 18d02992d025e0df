/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpzrtp: ZRTP key agreement and SRTP for any RTP pipeline. */
#ifndef __GST_UVGRTP_ZRTP_H__
#define __GST_UVGRTP_ZRTP_H__

#include <gst/gst.h>

#include "urtp/srtp.h"
#include "urtp/zrtp.h"
#include "urtp/zrtp_ep.h"

#include "gstuvgrtpzrtpctl.h"

G_BEGIN_DECLS

#define GST_TYPE_UVGRTP_ZRTP (gst_uvgrtp_zrtp_get_type ())
G_DECLARE_FINAL_TYPE (GstUvgRtpZrtp, gst_uvgrtp_zrtp, GST, UVGRTP_ZRTP,
    GstElement)

/* Media counters, under the element's lock; reset when the element
 * starts. The ZRTP ones are the endpoint's (urtp_zrtp_ep_counters_t). */
typedef struct
{
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

  /* Properties, the SRTP contexts and the counters are under lock. The
   * policy (when the exchange starts and starts over, who may talk to it)
   * is the endpoint's, lib/urtp/zrtp_ep.h; its thread sends the ZRTP
   * packets and calls back with no lock held. Never is lock held while
   * stopping the endpoint, pushing or posting. */
  GMutex lock;
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

  /* from READY to PAUSED on; kept after stopping, for its last state */
  urtp_zrtp_ep_t *ep;
  gboolean begun;               /* urtp_zrtp_ep_begin() called */
  urtp_srtp_t tx, rx;           /* one context per direction */
  gint tx_serial, rx_serial;
  gint64 srtp_ok_told_us;       /* when the endpoint last heard the peer's
                                   media authenticates */
  GstUvgRtpZrtpStats stats;

  /* set under push_lock: send_rtp_src has stream-start, caps, segment */
  gboolean send_events_ok;
};

G_END_DECLS

#endif
