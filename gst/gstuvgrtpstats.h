/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The `stats` structures of uvgrtpsink and uvgrtpsrc, filled from tables
 * of fields (name, type, where in a C struct, meaning and unit). The same
 * tables write the blurb of each `stats` property, so gst-inspect-1.0 lists
 * every field with its unit; the fields both elements have are one table,
 * with one type and meaning on both.
 */
#ifndef __GST_UVGRTP_STATS_H__
#define __GST_UVGRTP_STATS_H__

#include <gst/gst.h>

#include "urtp/recvstream.h"
#include "urtp/rtcp.h"
#include "urtp/sendstream.h"
#include "urtp/srtp.h"

#include "gstuvgrtpzrtpctl.h"

G_BEGIN_DECLS

/* What both elements' stats have, filled by each element. */
typedef struct
{
  GstUvgRtpZrtpCounters zrtp;
  urtp_srtp_stats_t srtcp;
  guint64 rtcp_sent, rtcp_received, rtcp_bad, rtcp_foreign;
  urtp_rtcp_block_t block;      /* the latest report block about the stream */
  guint64 round_trip_time;      /* ns; GST_CLOCK_TIME_NONE: not known */
  guint32 ssrc, rtx_ssrc;
  gint buffer_size;             /* the kernel's, in effect */
} GstUvgRtpCommonStats;

/* uvgrtpsrc's */
typedef struct
{
  GstUvgRtpCommonStats c;
  urtp_recvstream_stats_t st;
  const gchar *recv_mode;
  /* the element's: access units drop-on-latency dropped, lost events */
  guint64 dropped_on_latency, lost_events;
} GstUvgRtpSrcStats;

/* uvgrtpsink's; its receivers come from st */
typedef struct
{
  GstUvgRtpCommonStats c;
  urtp_sendstream_stats_t st;
  guint rtx_pt, seqnum_offset, timestamp_offset, clock_rate;
  /* RTPBasePayload's: the last packet's sequence number, the last access
   * unit's timestamp and running time, the payload type */
  guint pt, seqnum, timestamp;
  GstClockTime running_time;
  const gchar *send_mode;
  /* congestion control (zero while off or before feedback) */
  urtp_cc_stats_t cc;
  /* the clients now (urtp_sendstream_get_clients), owned by the caller */
  const urtp_sendstream_client_t *clients;
  guint nclients;
  /* one moment on both clocks: the receivers' NTP times to pipeline time */
  guint64 now_ntp;
  GstClockTime now_clock;       /* NONE: no clock */
} GstUvgRtpSinkStats;

/* The `stats` property of each element, its fields in the blurb. */
GParamSpec *gst_uvgrtp_src_stats_param_spec (void);
GParamSpec *gst_uvgrtp_sink_stats_param_spec (void);
GstStructure *gst_uvgrtp_src_stats_to_structure (const GstUvgRtpSrcStats * v);
GstStructure *gst_uvgrtp_sink_stats_to_structure (const GstUvgRtpSinkStats *
    v);
/* One "application/x-uvgrtp-receiver" structure, as in uvgrtpsink's stats
 * (its "receivers" array); v gives the clocks. */
GstStructure *gst_uvgrtp_receiver_to_structure (const
    urtp_sendstream_receiver_t * r, const GstUvgRtpSinkStats * v);

G_END_DECLS

#endif
