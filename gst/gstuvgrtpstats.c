/* SPDX-License-Identifier: BSD-2-Clause */
/* The `stats` structures of uvgrtpsink and uvgrtpsrc: see the header. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <netdb.h>

#include "gstuvgrtpstats.h"

/* One field of a statistics structure: its name and GType, where its value
 * is in a C struct (an integer, bool, char array or const char pointer of
 * any size and signedness; see STAT), and what it means, unit
 * included. A negative value read into an unsigned type wraps: -1 as
 * guint64 is GST_CLOCK_TIME_NONE. A NULL string leaves the field out. */
typedef struct
{
  const gchar *name;
  GType type;
  guint16 offset;
  guint16 size;
  guint8 kind;                  /* STAT_KIND of the C member */
  const gchar *doc;
} StatsField;

#define STAT_UNSIGNED 0
#define STAT_SIGNED 1
#define STAT_CHARS 2 /* a char array (it decays to char *) */
#define STAT_STRING 3        /* a const char * */
#define STAT_KIND(x) _Generic ((x), \
    signed char: STAT_SIGNED, short: STAT_SIGNED, \
    int: STAT_SIGNED, long: STAT_SIGNED, \
    long long: STAT_SIGNED, char *: STAT_CHARS, \
    const char *: STAT_STRING, default: STAT_UNSIGNED)
/* A table entry: field `name` of GType `type` from `member` of struct
 * `view`. */
#define STAT(view, member, name, type, doc) \
  { name, type, G_STRUCT_OFFSET (view, member), \
    sizeof (((view *) 0)->member), \
    STAT_KIND (((view *) 0)->member), doc }

/* The integer of size bytes at p, sign-extended when it is signed. */
static guint64
read_integer (const guint8 * p, guint size, gboolean is_signed)
{
  guint8 u8;
  guint16 u16;
  guint32 u32;
  guint64 u64;

  switch (size) {
    case 1:
      memcpy (&u8, p, 1);
      return is_signed ? (guint64) (gint64) (gint8) u8 : u8;
    case 2:
      memcpy (&u16, p, 2);
      return is_signed ? (guint64) (gint64) (gint16) u16 : u16;
    case 4:
      memcpy (&u32, p, 4);
      return is_signed ? (guint64) (gint64) (gint32) u32 : u32;
    default:
      memcpy (&u64, p, 8);
      return u64;
  }
}

static void
stats_fill (GstStructure * s, const StatsField * table,
    guint n, gconstpointer view)
{
  for (guint i = 0; i < n; i++) {
    const StatsField *f = &table[i];
    const guint8 *p = (const guint8 *) view + f->offset;
    GValue v = G_VALUE_INIT;
    guint64 x;

    g_value_init (&v, f->type);
    if (f->type == G_TYPE_STRING) {
      const gchar *str = f->kind == STAT_CHARS ?
          (const gchar *) p : *(const gchar * const *) p;

      if (!str) {
        g_value_unset (&v);
        continue;
      }
      g_value_set_string (&v, str);
    } else {
      x = read_integer (p, f->size, f->kind == STAT_SIGNED);
      switch (f->type) {
        case G_TYPE_UINT64:
          g_value_set_uint64 (&v, x);
          break;
        case G_TYPE_INT64:
          g_value_set_int64 (&v, (gint64) x);
          break;
        case G_TYPE_UINT:
          g_value_set_uint (&v, (guint) x);
          break;
        case G_TYPE_INT:
          g_value_set_int (&v, (gint) x);
          break;
        case G_TYPE_BOOLEAN:
          g_value_set_boolean (&v, x != 0);
          break;
        default:
          g_assert_not_reached ();
      }
    }
    gst_structure_take_value (s, f->name, &v);
  }
}

static void
stats_describe (GString * out, const StatsField * table,
    guint n)
{
  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "\n  %s (%s): %s", table[i].name,
        g_type_name (table[i].type), table[i].doc);
}

/* A snapshot of what the common fields come from. */
typedef struct
{
  GstUvgRtpCommonStats c;
  const gchar *srtp_backend;
} CommonView;

#define COMMON(member, name, type, doc) \
  STAT (CommonView, member, name, type, doc)
static const StatsField common_fields[] = {
  COMMON (c.ssrc, "ssrc", G_TYPE_UINT, "our media's SSRC (uvgrtpsink), the "
      "source followed (uvgrtpsrc)"),
  COMMON (c.buffer_size, "buffer-size", G_TYPE_INT, "bytes: the socket "
      "buffer the kernel granted (send or receive)"),
  COMMON (c.rtcp_sent, "rtcp-sent", G_TYPE_UINT64, "our RTCP reports"),
  COMMON (c.rtcp_received, "rtcp-received", G_TYPE_UINT64, "RTCP compound "
      "packets taken"),
  COMMON (c.rtcp_bad, "rtcp-bad", G_TYPE_UINT64, "RTCP compound packets "
      "that failed RFC 3550's checks, or SRTCP's"),
  COMMON (c.rtcp_foreign, "rtcp-foreign", G_TYPE_UINT64, "plain RTCP from "
      "another host than the peer's: nothing of it taken"),
  COMMON (c.srtcp.auth_fail, "srtcp-auth-failures", G_TYPE_UINT64, "SRTCP "
      "whose tag did not verify (also in rtcp-bad)"),
  COMMON (c.srtcp.replay, "srtcp-replays", G_TYPE_UINT64, "SRTCP that came "
      "again (also in rtcp-bad)"),
  COMMON (c.srtcp.other, "srtcp-errors", G_TYPE_UINT64, "SRTCP refused "
      "otherwise (also in rtcp-bad)"),
  COMMON (c.block.fraction, "fraction-lost", G_TYPE_UINT, "1/256: loss in "
      "the latest report block about the stream (uvgrtpsink: a receiver's; "
      "uvgrtpsrc: what our next report says)"),
  COMMON (c.block.lost, "packets-lost", G_TYPE_INT, "packets, cumulative, "
      "in that block"),
  COMMON (c.block.jitter, "jitter", G_TYPE_UINT, "RTP timestamp units: "
      "interarrival jitter in that block"),
  COMMON (c.round_trip_time, "round-trip-time", G_TYPE_UINT64, "ns "
      "(GST_CLOCK_TIME_NONE until measured): uvgrtpsink, from the latest "
      "receiver report; uvgrtpsrc, from NACK to retransmission, smoothed"),
  COMMON (c.rtx_ssrc, "rtx-ssrc", G_TYPE_UINT, "SSRC of the "
      "retransmissions (0: none)"),
  COMMON (c.zrtp.sent, "zrtp-sent", G_TYPE_UINT64, "ZRTP packets sent, "
      "retransmissions included"),
  COMMON (c.zrtp.received, "zrtp-received", G_TYPE_UINT64, "ZRTP packets "
      "received"),
  COMMON (c.zrtp.retransmits, "zrtp-retransmits", G_TYPE_UINT64, "ZRTP "
      "packets sent again"),
  COMMON (c.zrtp.bad, "zrtp-bad", G_TYPE_UINT64, "malformed ZRTP packets"),
  COMMON (c.zrtp.unexpected, "zrtp-unexpected", G_TYPE_UINT64, "ZRTP "
      "packets valid but not for the state"),
  COMMON (c.zrtp.auth_fail, "zrtp-auth-failures", G_TYPE_UINT64, "ZRTP "
      "packets whose hash chain or MAC was wrong"),
  COMMON (c.zrtp.restarts, "zrtp-restarts", G_TYPE_UINT64, "exchanges "
      "started over after a timeout or for a peer that started over"),
  COMMON (c.zrtp.foreign, "zrtp-foreign", G_TYPE_UINT64, "ZRTP ignored: not "
      "from the peer the element is bound to (docs/zrtp.md)"),
  COMMON (srtp_backend, "srtp-backend", G_TYPE_STRING, "the libsrtp2 in use "
      "and its crypto library (only in builds with SRTP)"),
};
#undef COMMON


static void
fill_common (GstStructure * s, const GstUvgRtpCommonStats * c)
{
  CommonView v;

  v.c = *c;
#ifdef URTP_HAVE_SRTP
  v.srtp_backend = urtp_srtp_backend ();
#else
  v.srtp_backend = NULL;
#endif
  stats_fill (s, common_fields, G_N_ELEMENTS (common_fields), &v);
}

static GParamSpec *
stats_param_spec (const gchar * structure_name, const StatsField * table,
    guint n, const gchar * more)
{
  GString *blurb = g_string_new (NULL);
  GParamSpec *ps;

  g_string_append_printf (blurb, "Counters of the session, readable at any "
      "time and after stopping (GstStructure %s):", structure_name);
  stats_describe (blurb, table, n);
  stats_describe (blurb, common_fields, G_N_ELEMENTS (common_fields));
  if (more)
    g_string_append_printf (blurb, "\n  %s", more);
  /* built once per class: the blurb is copied, not static */
  ps = g_param_spec_boxed ("stats", "Statistics", blurb->str,
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_NAME |
      G_PARAM_STATIC_NICK);
  g_string_free (blurb, TRUE);
  return ps;
}

/* ------------------------------------------------------------------------ */
/* uvgrtpsrc                                                                */

typedef struct
{
  urtp_recvstream_stats_t st;
  guint64 malformed, foreign;
  const gchar *recv_mode;
  guint64 dropped_on_latency, lost_events;
} SrcView;

#define SRC(member, name, type, doc) STAT (SrcView, member, name, type, doc)
static const StatsField src_fields[] = {
  SRC (st.depay.packets, "packets", G_TYPE_UINT64, "RTP packets whose "
      "payload was used"),
  SRC (st.depay.bytes, "bytes", G_TYPE_UINT64, "bytes: their payload"),
  SRC (st.frames, "access-units", G_TYPE_UINT64, "access units delivered"),
  SRC (st.depay.seq.lost, "lost", G_TYPE_UINT64, "sequence numbers given "
      "up on"),
  SRC (st.depay.dropped_aus, "dropped", G_TYPE_UINT64, "access units lost "
      "to damage, keyframe wait or queue overflow"),
  SRC (st.depay.dropped_nals, "dropped-nal-units", G_TYPE_UINT64, "NAL "
      "units lost to damage"),
  SRC (st.depay.skipped, "skipped", G_TYPE_UINT64, "fragments of a NAL unit "
      "already given up"),
  SRC (malformed, "malformed", G_TYPE_UINT64, "datagrams not RTP (RTCP on "
      "the RTP port without rtcp-mux included), or "
      "payloads that break their format"),
  SRC (foreign, "foreign", G_TYPE_UINT64, "packets of another payload "
      "type, or of an SSRC not followed"),
  SRC (st.depay.unsupported, "unsupported", G_TYPE_UINT64, "packets of a "
      "structure not supported (such as H.265 PACI)"),
  SRC (st.depay.seq.duplicates, "duplicates", G_TYPE_UINT64, "packets "
      "received twice"),
  SRC (st.depay.seq.late, "late", G_TYPE_UINT64, "packets after their "
      "sequence number was given up"),
  SRC (st.depay.seq.reordered, "reordered", G_TYPE_UINT64, "packets after "
      "one with a higher sequence number"),
  SRC (st.depay.oversize, "oversize", G_TYPE_UINT64, "access units above "
      "max-au-size"),
  SRC (st.truncated, "truncated", G_TYPE_UINT64, "datagrams larger than a "
      "receive slot"),
  SRC (st.kernel_drops, "kernel-drops", G_TYPE_UINT64, "datagrams the "
      "kernel dropped: receive buffer full"),
  SRC (st.flushed, "flushed", G_TYPE_UINT64, "datagrams that arrived while "
      "paused"),
  SRC (st.syscalls, "syscalls", G_TYPE_UINT64, "receive system calls"),
  SRC (recv_mode, "recv-mode", G_TYPE_STRING, "how datagrams are read: "
      "gro, mmsg, plain (none before start)"),
  SRC (st.have_source, "have-source", G_TYPE_BOOLEAN, "a source is "
      "followed"),
  SRC (st.source.changes, "source-changes", G_TYPE_UINT64, "times another "
      "SSRC took over"),
  SRC (st.source.restarts, "source-restarts", G_TYPE_UINT64, "times the "
      "source restarted its numbering"),
  SRC (st.source.stray, "stray", G_TYPE_UINT64, "sequence number jumps the "
      "next packet did not confirm"),
  SRC (st.source.pending, "held", G_TYPE_UINT64, "packets of a new source "
      "kept while it waits to take over"),
  SRC (st.source.held_dropped, "held-dropped", G_TYPE_UINT64, "packets of a "
      "new source beyond what is kept"),
  SRC (st.timing_resets, "timing-resets", G_TYPE_UINT64, "times the "
      "timestamp mapping re-anchored on a jump"),
  SRC (st.skew, "skew", G_TYPE_INT64, "ns: the clock drift estimate"),
  SRC (st.srtp.auth_fail, "srtp-auth-failures", G_TYPE_UINT64, "SRTP "
      "packets whose tag did not verify"),
  SRC (st.srtp.replay, "srtp-replays", G_TYPE_UINT64, "SRTP packets "
      "received already, or older than replay-window-size"),
  SRC (st.srtp.other, "srtp-errors", G_TYPE_UINT64, "SRTP packets refused "
      "otherwise"),
  SRC (st.zrtp_dropped, "zrtp-dropped", G_TYPE_UINT64, "datagrams in clear "
      "dropped before the ZRTP keys were agreed"),
  SRC (st.zrtp_clear, "zrtp-received-clear", G_TYPE_UINT64, "datagrams "
      "passed in clear with zrtp-allow-clear"),
  SRC (st.sr_rejected, "sr-rejected", G_TYPE_UINT64, "sender reports whose "
      "NTP/RTP mapping disagreed by more than 20 ms: ignored"),
  SRC (st.sr_remapped, "sr-remapped", G_TYPE_UINT64, "such reports taken "
      "after all: the next agreed (the sender's clock was stepped)"),
  SRC (st.rtcp_sr, "sr-received", G_TYPE_UINT64, "sender reports of the "
      "followed source"),
  SRC (st.rtcp_bye, "bye-received", G_TYPE_UINT64, "BYEs of the followed "
      "source"),
  SRC (st.cname, "sender-cname", G_TYPE_STRING, "the followed source's "
      "CNAME (\"\" until known)"),
  SRC (st.sr_ntp, "sr-ntp-time", G_TYPE_UINT64, "NTP format (32.32 "
      "seconds): the last sender report's wall-clock time"),
  SRC (st.sr_rtp_ts, "sr-rtp-time", G_TYPE_UINT, "RTP timestamp units: the "
      "last sender report's RTP time"),
  SRC (st.sr_packets, "sr-packets", G_TYPE_UINT, "packets the sender sent, "
      "by its last report"),
  SRC (st.sr_octets, "sr-octets", G_TYPE_UINT, "payload bytes the sender "
      "sent, by its last report"),
  SRC (st.sr_arrival, "last-sr-time", G_TYPE_UINT64, "ns on the pipeline "
      "clock: when the last sender report arrived"),
  SRC (st.reception.ext_max_seq, "ext-max-seq", G_TYPE_UINT, "the extended "
      "highest sequence number our next report gives"),
  SRC (st.synced, "synced", G_TYPE_BOOLEAN, "lip sync has a sender report "
      "and the CNAME"),
  SRC (st.sync_delay, "sync-delay", G_TYPE_INT64, "ns: added to be in step "
      "with the sender's other streams"),
  SRC (st.nack.missing, "missing", G_TYPE_UINT64, "packets found missing"),
  SRC (st.nack.recovered, "recovered", G_TYPE_UINT64, "missing packets a "
      "retransmission filled in"),
  SRC (st.nack.late, "recovered-late", G_TYPE_UINT64, "missing packets "
      "retransmitted after they were given up"),
  SRC (st.nack.reordered, "reordered-missing", G_TYPE_UINT64, "missing "
      "packets that arrived late by themselves before being asked for"),
  SRC (st.nack.lost, "lost-unrecovered", G_TYPE_UINT64, "missing packets "
      "never recovered"),
  SRC (st.nack.requests, "nack-requests", G_TYPE_UINT64, "packets asked "
      "for, repeats included"),
  SRC (st.nacks_sent, "nacks-sent", G_TYPE_UINT64, "NACK packets sent"),
  SRC (st.rtx, "rtx-received", G_TYPE_UINT64, "retransmissions taken (also "
      "counted among the packets)"),
  SRC (st.rtx_dropped, "rtx-dropped", G_TYPE_UINT64, "retransmissions of "
      "packets not missing, or malformed"),
  SRC (st.nack.fast_retries, "fast-retries", G_TYPE_UINT64, "packets asked "
      "for again at once: the retransmissions' own numbering showed the "
      "answer lost"),
  SRC (st.pli_sent, "pli-sent", G_TYPE_UINT64, "picture loss indications "
      "sent"),
  SRC (st.fir_sent, "fir-sent", G_TYPE_UINT64, "full intra requests sent"),
  SRC (st.keyframe_requests, "keyframe-requests", G_TYPE_UINT64,
      "force-key-unit events taken from downstream"),
  SRC (st.nack_unanswered, "nack-unanswered", G_TYPE_UINT64, "sources NACKs "
      "stopped for: no retransmission came 3 s after the first request"),
  SRC (st.ccfb_sent, "ccfb-sent", G_TYPE_UINT64, "RTCP packets with "
      "congestion control feedback sent"),
  SRC (st.twcc_recorded, "twcc-packets", G_TYPE_UINT64, "packets with a "
      "transport-wide sequence number recorded for feedback"),
  SRC (st.rfc8888_recorded, "rfc8888-packets", G_TYPE_UINT64, "packets "
      "recorded for RFC 8888 feedback"),
  SRC (st.ccfb_strays, "ccfb-strays", G_TYPE_UINT64, "packets whose "
      "number jumped away from the others and were not followed by a "
      "second: not reported"),
  SRC (dropped_on_latency, "dropped-on-latency", G_TYPE_UINT64, "access "
      "units dropped because they were older than the latency when they "
      "were ready (drop-on-latency)"),
  SRC (lost_events, "lost-events", G_TYPE_UINT64, "GstRTPPacketLost events "
      "pushed, one per gap (do-lost)"),
};
#undef SRC

/**
 * GstUvgRtpSrc:stats:
 *
 * Counters of the session (each a #guint64 count unless its type is
 * given), a GstStructure named
 * "application/x-uvgrtp-src-stats", readable at any time without
 * waiting for the streaming thread, and after the element stopped.
 *
 * Packets and access units (guint64): packets (RTP packets whose payload
 * was used), bytes (their payload), access-units (delivered), lost
 * (sequence numbers given up on), dropped (access units lost to damage,
 * keyframe wait or queue overflow), dropped-nal-units, skipped (fragments
 * of a NAL unit already given up), duplicates, late, reordered (arrived
 * after a packet with a higher sequence number), oversize (access units
 * above max-au-size).
 *
 * What was refused (guint64; each datagram is counted once, in one of
 * these or among the packets): malformed (not RTP, or a payload that
 * breaks its format), foreign (wrong payload type, or an SSRC that is
 * not followed), unsupported (such as H.265 PACI), stray (a sequence
 * number jump the next packet did not confirm), held (packets of a new
 * source kept while it waits to take over), held-dropped (beyond what is
 * kept), srtp-auth-failures (SRTP tag did not verify: tampered,
 * truncated, or another key), srtp-replays (already received, or older
 * than #GstUvgRtpSrc:replay-window-size), srtp-errors (other SRTP
 * rejections), zrtp-dropped (datagrams in clear dropped before the ZRTP
 * keys were agreed), and, not offered to the stream at all, truncated
 * (datagrams larger than a receive slot), kernel-drops (datagrams the
 * kernel dropped because the receive buffer was full), flushed
 * (datagrams that arrived while paused).
 *
 * RTCP (#GstUvgRtpSrc:rtcp): rtcp-received, rtcp-bad (compound packets
 * that failed RFC 3550's checks, or SRTCP's), rtcp-foreign (plain
 * compounds, in rtcp-received, from another host than the one the
 * followed source's media comes from: nothing of them is taken, and our
 * reports never go there), sr-rejected (sender reports of the followed
 * source whose NTP/RTP mapping disagreed with the one in use by more
 * than 20 ms: ignored), sr-remapped (taken after all: the next one
 * agreed with it, the sender's clock was stepped), srtcp-auth-failures,
 * srtcp-replays and srtcp-errors (SRTCP that did not verify, came again,
 * or was refused otherwise; each also in rtcp-bad), rtcp-sent (our
 * receiver reports),
 * sr-received and bye-received (of the followed source), sender-cname
 * (gchararray, "" until known), its last sender report: sr-ntp-time
 * (guint64, NTP format), sr-rtp-time, sr-packets, sr-octets (guint),
 * last-sr-time (guint64, when it arrived, on the pipeline clock); what
 * our next report says of it: fraction-lost (guint, 1/256), packets-lost
 * (gint, cumulative), jitter (guint, timestamp units), ext-max-seq. Each
 * sender report of the followed source is also posted as an element
 * message "uvgrtp-rtcp" with type "sr", ssrc, cname, ntp-time, rtp-time,
 * packets and octets. Lip sync (#GstUvgRtpSrc:lip-sync): synced
 * (gboolean: a sender report and the CNAME are in), sync-delay (gint64,
 * ns: added to be in step with the sender's other streams).
 *
 * Loss recovery (#GstUvgRtpSrc:do-retransmission, guint64): missing
 * (packets found missing; each counted once in recovered (by a
 * retransmission), recovered-late (after it was given up),
 * reordered-missing (arrived late by itself before being asked for),
 * lost-unrecovered, or
 * still pending), nack-requests (packets asked for, repeats included),
 * nacks-sent (NACK packets), rtx-received (retransmissions taken, also
 * counted among the packets), rtx-dropped (retransmissions of packets
 * not missing, or malformed), rtx-ssrc (guint), round-trip-time
 * (guint64, ns: from NACK to retransmission, smoothed), fast-retries
 * (packets asked for again at once: a gap in the retransmissions'
 * own sequence numbers showed their answer lost); pli-sent,
 * fir-sent, keyframe-requests (force-key-unit events taken),
 * nack-unanswered (sources NACKs stopped for: not one retransmission
 * came 3 s after the first request).
 *
 * Congestion control feedback (#GstUvgRtpSrc:twcc-feedback-interval,
 * #GstUvgRtpSrc:rfc8888-feedback; guint64): ccfb-sent (RTCP packets that
 * carried it), twcc-packets (packets with a transport-wide sequence
 * number recorded, retransmissions included), rfc8888-packets (packets
 * recorded by their own sequence number), ccfb-strays (packets whose
 * number jumped away and no second followed: not reported).
 *
 * Sources: ssrc (guint, the source followed), have-source (gboolean),
 * source-changes (another SSRC took over), source-restarts (the source
 * restarted its numbering), timing-resets (the timestamp mapping
 * re-anchored on a jump), skew (gint64, ns: the clock drift estimate).
 *
 * ZRTP (0 without #GstUvgRtpSrc:zrtp): zrtp-sent, zrtp-received (ZRTP
 * packets, retransmissions included), zrtp-retransmits, zrtp-bad
 * (malformed), zrtp-unexpected (valid but not for the state),
 * zrtp-auth-failures (hash chain or MAC wrong), zrtp-restarts (exchanges
 * started over), zrtp-foreign (ZRTP ignored: not from the peer the
 * element is bound to, see docs/zrtp.md), zrtp-received-clear (datagrams passed in clear
 * with #GstUvgRtpSrc:zrtp-allow-clear).
 *
 * Socket: syscalls (receive system calls), buffer-size (gint, receive
 * buffer in effect, bytes), recv-mode (string: gro, mmsg or plain), and,
 * in builds with SRTP, srtp-backend (the libsrtp2 in use and its crypto
 * library).
 */
GParamSpec *
gst_uvgrtp_src_stats_param_spec (void)
{
  return stats_param_spec ("application/x-uvgrtp-src-stats", src_fields,
      G_N_ELEMENTS (src_fields), NULL);
}

GstStructure *
gst_uvgrtp_src_stats_to_structure (const GstUvgRtpSrcStats * in)
{
  GstStructure *s = gst_structure_new_empty ("application/x-uvgrtp-src-stats");
  SrcView v;

  v.st = in->st;
  v.malformed = in->st.malformed_rtp + in->st.depay.malformed;
  v.foreign = in->st.wrong_pt + in->st.source.foreign;
  v.recv_mode = in->recv_mode;
  v.dropped_on_latency = in->dropped_on_latency;
  v.lost_events = in->lost_events;
  stats_fill (s, src_fields, G_N_ELEMENTS (src_fields), &v);
  fill_common (s, &in->c);
  return s;
}

/* ------------------------------------------------------------------------ */
/* uvgrtpsink                                                               */

#define SINK(member, name, type, doc) \
  STAT (GstUvgRtpSinkStats, member, name, type, doc)
static const StatsField sink_fields[] = {
  SINK (st.packets, "packets", G_TYPE_UINT64, "RTP packets sent"),
  SINK (st.bytes, "bytes", G_TYPE_UINT64, "bytes: their size, SRTP tags "
      "included"),
  SINK (st.access_units, "access-units", G_TYPE_UINT64, "access units (or "
      "Opus packets) sent"),
  SINK (st.send_errors, "send-errors", G_TYPE_UINT64, "packets the kernel "
      "refused, plus ICMP error reports for earlier packets"),
  SINK (st.syscalls, "syscalls", G_TYPE_UINT64, "send system calls"),
  SINK (st.send_messages, "send-messages", G_TYPE_UINT64, "what those calls "
      "handed the kernel: a packet, or a UDP GSO run of packets, each"),
  SINK (st.padding_bytes, "padding-bytes", G_TYPE_UINT64, "bytes of RTP "
      "padding sent (pad-fragments)"),
  SINK (st.srtp_errors, "srtp-errors", G_TYPE_UINT64, "packets SRTP "
      "protection refused"),
  SINK (st.held_aus, "zrtp-held", G_TYPE_UINT64, "access units not sent "
      "while the ZRTP keys were pending"),
  SINK (st.held_packets, "zrtp-held-packets", G_TYPE_UINT64, "their RTP "
      "packets"),
  SINK (st.sent_clear, "zrtp-sent-clear", G_TYPE_UINT64, "packets sent in "
      "clear with zrtp-allow-clear"),
  SINK (st.bitrate, "bitrate", G_TYPE_UINT64, "bits per second sent over "
      "the last second"),
  SINK (st.pacing_rate, "pacing-rate", G_TYPE_UINT64, "bits per second the "
      "pacer uses now (0: not pacing)"),
  SINK (st.pacing_waits, "pacing-waits", G_TYPE_UINT64, "sends that waited "
      "for their turn"),
  SINK (st.pacing_waited_ns, "pacing-waited", G_TYPE_UINT64, "ns: their "
      "waits, summed"),
  SINK (st.pacing_max_wait_ns, "pacing-max-wait", G_TYPE_UINT64, "ns: the "
      "longest wait"),
  SINK (st.pacing_max_queue, "pacing-max-queue", G_TYPE_UINT64, "bytes: "
      "the most held back by the pacer at once"),
  SINK (st.pacing_behind, "pacing-behind", G_TYPE_UINT64, "times the "
      "stream fell behind its pacing rate"),
  SINK (st.rr_blocks, "rr-received", G_TYPE_UINT64, "report blocks about "
      "this stream"),
  SINK (st.rr_rejected, "rr-rejected", G_TYPE_UINT64, "blocks about it "
      "that echo none of our last 16 sender reports: ignored"),
  SINK (st.rr_ssrc, "rr-ssrc", G_TYPE_UINT, "who sent the latest block"),
  SINK (st.nacks_received, "nacks-received", G_TYPE_UINT64, "NACK packets "
      "about this stream"),
  SINK (st.nack_seqs, "nack-seqs", G_TYPE_UINT64, "packets they asked for"),
  SINK (st.rtx_packets, "rtx-packets", G_TYPE_UINT64, "packets sent again"),
  SINK (st.rtx_bytes, "rtx-bytes", G_TYPE_UINT64, "bytes: their size (not "
      "in bitrate)"),
  SINK (st.rtx_missing, "rtx-missing", G_TYPE_UINT64, "asked for but no "
      "longer kept"),
  SINK (st.rtx_repeats, "rtx-repeats", G_TYPE_UINT64, "asked for but sent "
      "again within half a round trip already"),
  SINK (st.rtx_over_budget, "rtx-over-budget", G_TYPE_UINT64, "asked for "
      "beyond half the bitrate"),
  SINK (st.rtx_errors, "rtx-errors", G_TYPE_UINT64, "retransmissions SRTP "
      "or the socket refused"),
  SINK (st.history_packets, "history-packets", G_TYPE_UINT64, "packets "
      "kept for retransmission now"),
  SINK (st.pli_received, "pli-received", G_TYPE_UINT64, "picture loss "
      "indications of receivers that report on the stream"),
  SINK (st.fir_received, "fir-received", G_TYPE_UINT64, "full intra "
      "requests of those receivers"),
  SINK (st.keyframe_requests, "keyframe-requests", G_TYPE_UINT64, "those "
      "passed upstream as force-key-unit events"),
  SINK (st.keyframe_requests_unknown, "keyframe-requests-unknown",
      G_TYPE_UINT64, "key frame requests of receivers that never reported: "
      "ignored"),
  SINK (st.ccfb_received, "ccfb-received", G_TYPE_UINT64, "transport-wide "
      "congestion control feedback messages taken"),
  SINK (st.rfc8888_received, "rfc8888-received", G_TYPE_UINT64, "RFC 8888 "
      "feedback messages taken"),
  SINK (st.ccfb_malformed, "ccfb-malformed", G_TYPE_UINT64, "congestion "
      "control feedback messages refused as malformed"),
  SINK (st.ccfb_acked, "ccfb-acked", G_TYPE_UINT64, "packets the feedback "
      "reported received"),
  SINK (st.ccfb_lost, "ccfb-lost", G_TYPE_UINT64, "packets the feedback "
      "reported lost"),
  SINK (st.ccfb_unknown, "ccfb-unknown", G_TYPE_UINT64, "reports of "
      "packets never sent or no longer remembered: ignored"),
  SINK (st.ccfb_repeated, "ccfb-repeated", G_TYPE_UINT64, "reports of "
      "packets the same receiver reported already: ignored"),
  SINK (st.ccfb_untracked, "ccfb-untracked", G_TYPE_UINT64, "feedback "
      "messages of receivers past the 4 told apart: ignored"),
  SINK (st.ccfb_receivers, "ccfb-receivers", G_TYPE_UINT, "receivers whose "
      "feedback was heard in the last 5 s: each has a controller, and the "
      "stream goes at the least estimate"),
  SINK (cc.target_bps, "estimated-bitrate", G_TYPE_UINT64, "bits/s "
      "congestion control estimates the path carries: the encoder's target"),
  SINK (cc.encoder_bps, "cc-encoder-bitrate", G_TYPE_UINT64, "bits/s "
      "asked of the encoder: the estimate, or up to 1.25 x it while an "
      "encoder alone on the path ramps up after a raise"),
  SINK (cc.leads, "cc-leads", G_TYPE_UINT64, "raises after which the "
      "encoder was asked for more than the estimate until it followed"),
  SINK (cc.pacing_bps, "cc-pacing-rate", G_TYPE_UINT64, "bits/s the pacer "
      "sends normal frames at under congestion control"),
  SINK (cc.delivered_bps, "delivered-bitrate", G_TYPE_UINT64, "bits/s the "
      "receiver got over the last 500 ms (feedback)"),
  SINK (cc.capacity_bps, "capacity", G_TYPE_UINT64, "bits/s the narrowest "
      "link carries, from the spread of paced frames (0: not measured)"),
  SINK (cc.queue_us, "queue-delay-us", G_TYPE_INT64, "us of standing queue "
      "on the path: the least one-way delay of the last 100 ms over its "
      "10 s minimum"),
  SINK (cc.rtt_us, "cc-rtt-us", G_TYPE_INT64, "us from sending a frame's "
      "last packet to its feedback"),
  SINK (cc.packets, "cc-packets", G_TYPE_UINT64, "packets the controller "
      "had feedback on"),
  SINK (cc.lost, "cc-lost", G_TYPE_UINT64, "... of them reported lost"),
  SINK (cc.overuses, "cc-overuses", G_TYPE_UINT64, "cuts on a rising "
      "delay gradient"),
  SINK (cc.queue_cuts, "cc-queue-cuts", G_TYPE_UINT64, "cuts on a "
      "standing queue"),
  SINK (cc.loss_cuts, "cc-loss-cuts", G_TYPE_UINT64, "cuts on loss over "
      "10 %"),
  SINK (cc.step_downs, "cc-step-downs", G_TYPE_UINT64, "cuts at once, "
      "to as low as half the rate the link served our queued packets at "
      "when that fell well under what it carried: a step down"),
  SINK (cc.capacity_raises, "cc-raises", G_TYPE_UINT64, "raises to the "
      "capacity paced frames showed"),
  SINK (cc.probes, "cc-probes", G_TYPE_UINT64, "frames sent at twice the "
      "capacity to measure it"),
  SINK (cc.competes, "cc-competes", G_TYPE_UINT64, "times a queue that "
      "stood through the cuts on delay was taken for another flow's (a "
      "loss-based one, TCP): delay then cuts only beyond 250 ms, for 20 s"),
  SINK (cc.competing, "cc-competing", G_TYPE_BOOLEAN, "... and it still "
      "is"),
  SINK (rtx_pt, "rtx-pt", G_TYPE_UINT, "payload type of retransmissions "
      "(0: none)"),
  SINK (send_mode, "send-mode", G_TYPE_STRING, "the send mode in use: gso, "
      "mmsg or plain"),
  SINK (seqnum_offset, "seqnum-offset", G_TYPE_UINT, "the first packet's "
      "sequence number"),
  SINK (timestamp_offset, "timestamp-offset", G_TYPE_UINT, "RTP timestamp "
      "units added to every timestamp"),
  SINK (clock_rate, "clock-rate", G_TYPE_UINT, "Hz: the RTP clock (0 before "
      "caps)"),
  SINK (pt, "pt", G_TYPE_UINT, "the payload type"),
  SINK (seqnum, "seqnum", G_TYPE_UINT, "the last packet's sequence number"),
  SINK (timestamp, "timestamp", G_TYPE_UINT, "the last access unit's RTP "
      "timestamp"),
  SINK (running_time, "running-time", G_TYPE_UINT64, "ns: the last access "
      "unit's running time (GST_CLOCK_TIME_NONE: none yet)"),
  SINK (st.packets_served, "packets-served", G_TYPE_UINT64, "RTP packets "
      "handed to the kernel for all clients together"),
  SINK (st.bytes_served, "bytes-served", G_TYPE_UINT64, "their bytes"),
  SINK (nclients, "n-clients", G_TYPE_UINT, "clients now"),
};
#undef SINK

#define RECEIVER(member, name, type, doc) \
  STAT (urtp_sendstream_receiver_t, member, name, type, doc)
static const StatsField receiver_fields[] = {
  RECEIVER (ssrc, "ssrc", G_TYPE_UINT, "the receiver's SSRC"),
  RECEIVER (reports, "reports", G_TYPE_UINT64, "its report blocks about the "
      "stream"),
  RECEIVER (rr.fraction, "fraction-lost", G_TYPE_UINT, "1/256: loss in its "
      "latest block"),
  RECEIVER (rr.lost, "packets-lost", G_TYPE_INT, "packets, cumulative"),
  RECEIVER (rr.jitter, "jitter", G_TYPE_UINT, "RTP timestamp units"),
  RECEIVER (rr.ext_max_seq, "ext-max-seq", G_TYPE_UINT, "extended highest "
      "sequence number received"),
  RECEIVER (rtt_ns, "round-trip-time", G_TYPE_UINT64, "ns "
      "(GST_CLOCK_TIME_NONE until measured)"),
  RECEIVER (last_ntp, "last-rr-time", G_TYPE_UINT64, "ns on the pipeline "
      "clock: when its latest block arrived"),
};
#undef RECEIVER

#define CLIENT(member, name, type, doc) \
  STAT (urtp_sendstream_client_t, member, name, type, doc)
static const StatsField client_fields[] = {
  CLIENT (adds, "adds", G_TYPE_UINT, "times added"),
  CLIENT (packets, "packets-sent", G_TYPE_UINT64, "RTP packets the kernel "
      "took for it, retransmissions included"),
  CLIENT (bytes, "bytes-sent", G_TYPE_UINT64, "their bytes"),
  CLIENT (rtx_packets, "rtx-packets", G_TYPE_UINT64, "retransmissions "
      "answering its NACKs"),
  CLIENT (send_errors, "send-errors", G_TYPE_UINT64, "packets the kernel "
      "refused for it"),
  CLIENT (added_ns, "connect-time", G_TYPE_UINT64, "ns since the Unix "
      "epoch: when it was added"),
};
#undef CLIENT

/* The receiver that reports from c's host: from its RTCP or RTP address,
 * else any on that host; NULL: none. */
static const urtp_sendstream_receiver_t *
client_receiver (const urtp_sendstream_client_t * c,
    const GstUvgRtpSinkStats * v)
{
  const urtp_sendstream_receiver_t *host = NULL;

  for (guint i = 0; i < v->st.nreceivers; i++) {
    const urtp_sendstream_receiver_t *r = &v->st.receivers[i];

    if (!r->from.ss_family)
      continue;
    if (urtp_addr_equal (&r->from, &c->rtcp) ||
        urtp_addr_equal (&r->from, &c->addr))
      return r;
    if (!host && urtp_addr_same_host (&r->from, &c->addr))
      host = r;
  }
  return host;
}

static GstStructure *
client_to_structure (const urtp_sendstream_client_t * c,
    const GstUvgRtpSinkStats * v)
{
  GstStructure *s = gst_structure_new_empty ("application/x-uvgrtp-client");
  const urtp_sendstream_receiver_t *r = client_receiver (c, v);
  gchar host[NI_MAXHOST] = "";

  getnameinfo ((const struct sockaddr *) &c->addr, urtp_addr_len (&c->addr),
      host, sizeof host, NULL, 0, NI_NUMERICHOST);
  gst_structure_set (s, "host", G_TYPE_STRING, host, "port", G_TYPE_INT,
      (gint) urtp_addr_port (&c->addr), NULL);
  stats_fill (s, client_fields, G_N_ELEMENTS (client_fields), c);
  if (r) {
    GValue e = G_VALUE_INIT;

    g_value_init (&e, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&e, gst_uvgrtp_receiver_to_structure (r, v));
    gst_structure_take_value (s, "receiver", &e);
  }
  return s;
}

/**
 * GstUvgRtpSink:stats:
 *
 * A #GstStructure named "application/x-uvgrtp-sink-stats" with the fields
 * packets, bytes (RTP packets and their bytes sent, SRTP tags
 * included), access-units,
 * send-errors (packets the kernel refused, plus ICMP error reports for
 * earlier packets), syscalls (send system calls), send-messages (what
 * those calls handed the kernel: a packet each, or with UDP GSO a run of
 * equal-sized packets each, so packets / send-messages is the packets per
 * GSO send), padding-bytes (RTP
 * padding added by #GstUvgRtpSink:pad-fragments, counted in bytes once
 * sent),
 * srtp-errors (packets SRTP protection refused: a repeated sequence
 * number, or a packet too large to take its tag; 0 without SRTP),
 * with #GstUvgRtpSink:zrtp: zrtp-sent, zrtp-received (ZRTP packets,
 * retransmissions included), zrtp-retransmits, zrtp-bad (malformed),
 * zrtp-unexpected (valid but not for the state), zrtp-auth-failures
 * (hash chain or MAC wrong), zrtp-restarts (exchanges started over after
 * a timeout or a peer that started over), zrtp-foreign (ZRTP ignored:
 * not from the peer the element is bound to, see docs/zrtp.md), zrtp-held (access units not
 * sent while the keys were pending), zrtp-held-packets (their RTP
 * packets), zrtp-sent-clear (packets sent in clear with
 * #GstUvgRtpSink:zrtp-allow-clear), all 0 without ZRTP;
 * bitrate (bits per second sent over the last second), pacing-rate (the
 * rate the pacer uses now, 0 when not pacing), pacing-waits (sends that
 * waited for their turn), pacing-waited and pacing-max-wait (their time,
 * summed and the longest, in nanoseconds), pacing-max-queue (the most
 * bytes held back by the pacer at once), pacing-behind (times the stream
 * fell behind its pacing rate);
 * RTCP (#GstUvgRtpSink:rtcp): rtcp-sent (our sender reports),
 * rtcp-received, rtcp-bad (compound packets that failed RFC 3550's
 * checks, or SRTCP's), rtcp-foreign (plain RTCP from another host than
 * the one our media goes to: dropped whole, in neither of those),
 * rr-received (report blocks about this stream), rr-rejected (blocks
 * about it that echo none of our last 16 sender reports: ignored), with
 * SRTP srtcp-auth-failures, srtcp-replays and srtcp-errors (SRTCP
 * that did not verify, came again, or was refused otherwise; each also
 * in rtcp-bad);
 * all #guint64; from the latest of those blocks: rr-ssrc (guint, who
 * sent it), fraction-lost (guint, 1/256), packets-lost (gint,
 * cumulative), jitter (guint, timestamp units), round-trip-time (guint64,
 * ns; GST_CLOCK_TIME_NONE before a block with a sender report time), each also posted as
 * an element message "uvgrtp-rtcp" with type "rr"; loss recovery
 * (#GstUvgRtpSink:do-retransmission): nacks-received (NACK packets about
 * this stream), nack-seqs (the packets they asked for, each counted once
 * in rtx-packets (sent again; rtx-bytes their bytes, not in bitrate),
 * rtx-missing (no longer kept), rtx-repeats (sent again within half a round
 * trip already), rtx-over-budget (beyond half the bitrate) or
 * rtx-errors), history-packets (kept now), pli-received, fir-received
 * (key frame requests of receivers that report on the stream),
 * keyframe-requests-unknown (those of receivers that never did:
 * ignored) and keyframe-requests (those passed upstream as
 * force-key-unit events, at most one per
 * #GstUvgRtpSink:min-force-key-unit-interval), all #guint64, and
 * rtx-ssrc, rtx-pt (#guint); congestion control feedback (on while the
 * transport-wide sequence number's extension is in use; #guint64):
 * ccfb-received and rfc8888-received (transport-wide and RFC 8888
 * messages taken from receivers whose RTCP is trusted), ccfb-malformed,
 * ccfb-acked and ccfb-lost (packets of ours reported received or lost,
 * each once), ccfb-unknown (reports of packets never sent or no longer
 * remembered) and ccfb-repeated (of packets the same receiver reported
 * already), both ignored, ccfb-untracked (messages of receivers past the
 * four told apart: ignored) and ccfb-receivers (#guint: receivers heard
 * from in the last 5 s; each has a controller, and the stream goes at the
 * least estimate of theirs); congestion control (#GstUvgRtpSink:congestion-control; 0
 * while off or before its first feedback): estimated-bitrate (#guint64,
 * bits/s, the encoder's target), cc-encoder-bitrate (what the encoder
 * is asked for: the estimate, or up to 1.25 x it while an encoder alone
 * on the path ramps up after a raise), cc-leads (raises after which it
 * was), cc-pacing-rate, delivered-bitrate
 * (what the receiver got over the last 500 ms), capacity (what the
 * narrowest link carries, from the spread of paced frames; 0: not
 * measured), queue-delay-us and cc-rtt-us (#gint64, us), cc-packets and
 * cc-lost (packets the controller had feedback on, lost among them),
 * cc-overuses, cc-queue-cuts and cc-loss-cuts (the target cut on a rising
 * delay gradient, a standing queue, loss), cc-step-downs (cut at once, to
 * as low as half the rate the link served our queued packets at: a step
 * down), cc-raises (raised to a measured capacity), cc-probes (frames
 * sent at twice the capacity), cc-competes (times a queue that stood
 * through the cuts on delay was taken for a loss-based flow's: delay then
 * cuts only beyond 250 ms, for 20 s) and cc-competing (#gboolean, it
 * still is); receivers (a
 * #GstValueArray of "application/x-uvgrtp-receiver" structures, one per
 * receiver that reports, the latest 16, one that says BYE leaves: ssrc,
 * reports, fraction-lost, packets-lost, jitter, ext-max-seq,
 * round-trip-time as above, last-rr-time: when its last block arrived,
 * #guint64 ns on the pipeline clock); buffer-size (#gint, the send buffer the kernel granted),
 * send-mode (#gchararray, the mode in use: gso, mmsg or plain), ssrc,
 * seqnum-offset, timestamp-offset and clock-rate (#guint), as
 * RTPBasePayload's: pt, seqnum (the last packet's), timestamp (the last
 * access unit's, #guint) and running-time (its running time, #guint64
 * ns); fan-out: packets-served and bytes-served (#guint64, for all clients
 * together, where packets and bytes count each packet once), n-clients
 * (#guint) and clients (a #GstValueArray of "application/x-uvgrtp-client"
 * structures, one per client now: host (numeric), port, adds,
 * packets-sent, bytes-sent, rtx-packets (answering its NACKs),
 * send-errors, connect-time (ns since the Unix epoch), and receiver, the
 * "application/x-uvgrtp-receiver" of the receiver reporting from its host
 * when there is one);
 * srtp-backend (#gchararray, the libsrtp2 in use and its crypto library;
 * only in builds with SRTP); then #GstBaseSink's own fields (rendered,
 * dropped, average-rate).
 *
 * This replaces #GstBaseSink:stats, whose fields it includes. The fields
 * both elements have (ssrc, buffer-size, rtcp-*, srtcp-*, fraction-lost,
 * packets-lost, jitter, round-trip-time, rtx-ssrc, zrtp-*, srtp-backend)
 * have one type on both.
 */
GParamSpec *
gst_uvgrtp_sink_stats_param_spec (void)
{
  return stats_param_spec ("application/x-uvgrtp-sink-stats", sink_fields,
      G_N_ELEMENTS (sink_fields), "receivers (GstValueArray): an "
      "application/x-uvgrtp-receiver structure per receiver that reports "
      "(the latest 16), with ssrc, reports, fraction-lost, packets-lost, "
      "jitter, ext-max-seq, round-trip-time and last-rr-time (as above); "
      "clients (GstValueArray): an application/x-uvgrtp-client structure "
      "per client, with host, port, adds, packets-sent, bytes-sent, "
      "rtx-packets, send-errors, connect-time (ns since the epoch) and "
      "receiver (its receiver structure, when one reports from its host); "
      "then GstBaseSink's rendered, dropped and average-rate");
}

GstStructure *
gst_uvgrtp_receiver_to_structure (const urtp_sendstream_receiver_t * in,
    const GstUvgRtpSinkStats * v)
{
  urtp_sendstream_receiver_t copy = *in, *r = &copy;
  guint64 age;

  /* NTP (32.32 s, our wall clock) to the pipeline clock */
  if (!GST_CLOCK_TIME_IS_VALID (v->now_clock) || !in->last_ntp) {
    copy.last_ntp = GST_CLOCK_TIME_NONE;
  } else {
    age = v->now_ntp > in->last_ntp ? gst_util_uint64_scale (v->now_ntp -
        in->last_ntp, GST_SECOND, G_GUINT64_CONSTANT (1) << 32) : 0;
    copy.last_ntp = age < v->now_clock ? v->now_clock - age : 0;
  }
  GstStructure *s = gst_structure_new_empty ("application/x-uvgrtp-receiver");

  stats_fill (s, receiver_fields, G_N_ELEMENTS (receiver_fields), r);
  return s;
}

/* Appends s (taken) to the GstValueArray arr. */
static void
append_structure (GValue * arr, GstStructure * s)
{
  GValue e = G_VALUE_INIT;

  g_value_init (&e, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&e, s);
  gst_value_array_append_and_take_value (arr, &e);
}

GstStructure *
gst_uvgrtp_sink_stats_to_structure (const GstUvgRtpSinkStats * v)
{
  GstStructure *s = gst_structure_new_empty ("application/x-uvgrtp-sink-stats");
  GValue arr = G_VALUE_INIT;

  stats_fill (s, sink_fields, G_N_ELEMENTS (sink_fields), v);
  fill_common (s, &v->c);
  gst_value_array_init (&arr, v->st.nreceivers);
  for (guint i = 0; i < v->st.nreceivers; i++)
    append_structure (&arr,
        gst_uvgrtp_receiver_to_structure (&v->st.receivers[i], v));
  gst_structure_take_value (s, "receivers", &arr);
  gst_value_array_init (&arr, v->nclients);
  for (guint i = 0; i < v->nclients; i++)
    append_structure (&arr, client_to_structure (&v->clients[i], v));
  gst_structure_take_value (s, "clients", &arr);
  return s;
}
