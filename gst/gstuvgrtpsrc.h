/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsrc: UDP receive and RTP depayloading in one element. */
#ifndef __GST_UVGRTP_SRC_H__
#define __GST_UVGRTP_SRC_H__

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

#include "urtp/codec.h"
#include "urtp/depay.h"
#include "urtp/net.h"
#include "urtp/srtp.h"

#include "gstuvgrtpcommon.h"
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
  gint channels;                /* Opus: 0 = unknown */
  gint rate;                    /* Opus: 0 = unknown */
  GstMemory *params;            /* Annex-B parameter sets, or NULL */
} GstUvgRtpSrcSession;

struct _GstUvgRtpSrc
{
  GstPushSrc parent;

  /* properties, under the object lock */
  gchar *address;
  gint port;
  gchar *multicast_iface;
  gint buffer_size;
  gboolean reuse;
  GstCaps *caps;
  guint64 timeout;
  gchar *encoding_name;
  gint recv_mode;
  guint latency;
  gboolean wait_for_keyframe;
  gint loss_policy;
  guint max_au_size;
  gchar *srtp_key;              /* hex master key || salt; NULL: no SRTP */
  GstUvgRtpSrtpCipher srtp_cipher;
  GstUvgRtpSrtpAuth srtp_auth;
  guint replay_window_size;
  GstUvgRtpZrtpSettings zrtp;

  /* streaming state */
  gboolean opened;
  urtp_sock_t sock;
  urtp_rx_t rx;
  urtp_depay_t *depay;
  urtp_srtp_t srtp;             /* session NULL without SRTP; object lock */
  /* ZRTP (object lock): the endpoint, set in start() and kept after stop()
   * for the properties; with zrtp, srtp holds the peer's key once agreed */
  GstUvgRtpZrtpCtl *zrtp_ctl;
  gboolean zrtp_on;
  gboolean zrtp_allow_clear;
  gint zrtp_serial;             /* of the keys in srtp */
  gboolean zrtp_had_keys;       /* keys were in place before in this run */
  guint64 zrtp_dropped;         /* clear datagrams dropped: no keys yet */
  guint64 zrtp_received_clear;  /* clear datagrams passed (allow-clear) */
  GstUvgRtpSrcSession session;
  gboolean caps_changed;        /* caps property set while running */
  gboolean send_params;         /* put parameter sets before the next AU */
  gboolean discont;             /* mark the next AU discontinuous */
  urtp_depay_stats_t stats_base;        /* counters of replaced depayloaders */
  guint64 rx_syscalls, rx_truncated;    /* copies readable under the lock */
  uint64_t last_dropped, last_lost;
  guint unsupported_run;        /* consecutive unsupported packets */

  /* timing, in monotonic microseconds */
  gint64 last_packet_us;

  /* timestamps */
  gboolean have_anchor;
  GstClockTime anchor;          /* running time of the first packet */
  gboolean have_first_ts;
  guint32 first_ts;
  gint64 last_ext_ts;

  /* flags touched from other threads */
  gint flushing;
  gint eos;
  gboolean draining;

  /* last statistics, kept for reading after stop */
  GstStructure *last_stats;
};

G_END_DECLS

#endif
