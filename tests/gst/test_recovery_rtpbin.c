/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_recovery_rtpbin - loss recovery between our elements and
 * GStreamer's stock ones, the media through the tests' relay (seeded
 * random loss, 10 ms, the stream's start untouched), RTCP straight:
 *
 *  1. uvgrtpsink -> rtpbin (do-retransmission, avpf, rtprtxreceive as its
 *     aux receiver): rtpbin's NACKs make our sink retransmit; every access
 *     unit arrives byte for byte and decodes.
 *  2. rtph264pay ! rtpbin (avpf, rtprtxsend as its aux sender) ->
 *     uvgrtpsrc: our NACKs make rtpbin retransmit; the same.
 *  3. uvgrtpsink -> rtpbin ! rtph264depay request-keyframe=true: the
 *     depayloader's key unit requests become rtpbin's PLIs (or FIRs),
 *     which our sink passes to x264enc: new IDRs arrive.
 *  4. rtpbin -> uvgrtpsrc request-keyframe=true: our PLIs make rtpbin ask
 *     x264enc for key units: new IDRs arrive.
 *
 * What crosses between the two is read on the way (probes parse every
 * RTP and RTCP datagram at rtpbin's udpsrc / udpsink), so each side's
 * counters are compared with what the other put on the wire: rtpbin's
 * NACKs, PLIs and FIRs with what our sink read, ours with what rtpbin
 * read, and the relay's, rtprtxsend's, rtprtxreceive's, rtpbin's session
 * and jitter buffer's counts with our elements'.
 */
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "relay.h"
#include "rtcputil.h"
#include "streamutil.h"

#define FPS 60
#define FRAMES 150

/* What rtpbin's udpsrc says of our sink's stream. */
#define RTP_CAPS "application/x-rtp,media=video,clock-rate=90000," \
  "encoding-name=H264,payload=96"

/* The session bandwidth rtpbin is told (bits/s: x264enc's ceiling). Left
 * at 0, a receiving rtpbin plans its RTCP for 64 kbit/s: its 5 % then
 * allows a compound every half second or more and one early (AVPF) one in
 * between, and the NACKs asked for meanwhile expire unsent ("Removing N
 * expired NACKS"): most losses stay lost. */
#define SESSION_BANDWIDTH 3000000.0

/* ---- the stream: pre-encoded access units ------------------------------- */

static Stream h264;

static Stream *
stream_h264 (void)
{
  stream_encode (&h264, FRAMES, FPS, "x264enc key-int-max=60 "
      "tune=zerolatency speed-preset=ultrafast bitrate=3000 ! h264parse ! "
      "video/x-h264,stream-format=byte-stream,alignment=au ! appsink "
      "name=sink sync=false");
  return &h264;
}

/* Plays tx and pushes the stream into its appsrc "in" as a live source
 * would, each access unit at its time (rtpbin's rtprtxsend queues
 * retransmissions behind the media it holds: pushed all at once, a
 * retransmission waited up to 250 ms and missed the receiver's latency);
 * waits for tx's EOS. A sending rtpbin
 * posts it only once its RTCP has said BYE, by RTCP's timing, and now and
 * then not at all (seen here and in bench/recovery.py, GStreamer 1.22):
 * its media has left by then, so only an error fails. */
static void
send_stream (GstElement * tx, Stream * st)
{
  GstBus *bus = gst_element_get_bus (tx);
  GstMessage *m;

  stream_push_full (tx, st, FPS, TRUE);
  m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (!m) {
    GstElement *rb = gst_bin_get_by_name (GST_BIN (tx), "rb");
    fail_unless (rb != NULL, "no EOS from our sink");
    GST_INFO ("the sending rtpbin posted no EOS in 10 s");
    gst_object_unref (rb);
  }
  fail_if (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
  if (m)
    gst_message_unref (m);
  gst_object_unref (bus);
}

/* What rx's appsink "sink" has, until it has been quiet for 0.5 s: the
 * last retransmissions have come. */
static GPtrArray *
receive_all (GstElement * rx)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (rx), "sink");
  GPtrArray *got = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GstSample *s;

  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), GST_SECOND / 2))) {
    g_ptr_array_add (got, gst_buffer_ref (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  gst_object_unref (sink);
  return got;
}


/* ---- what crosses, read on the way -------------------------------------- */

typedef struct
{
  guint compounds;              /* RTCP datagrams */
  guint reduced;                /* of those: not led by SR or RR (RFC 5506) */
  guint nack_compounds;         /* of those: with a NACK */
  guint nacks;                  /* generic NACK packets (RTPFB 1) */
  guint seqs;                   /* the sequence numbers they asked for */
  guint plis, firs;             /* PSFB 1, PSFB 4 */
  guint rtp[128];               /* RTP datagrams by payload type */
  guint rtx_ssrc;               /* of the last of payload type 97 */
} WireCounts;

/* The datagrams between rtpbin and our element, parsed by hand at
 * rtpbin's udpsrc / udpsink pads, with when they passed. */
typedef struct Wire
{
  GMutex lock;
  WireCounts n;
  GArray *seqs;                 /* guint16: every sequence number NACKed */
  /* sequence number -> gint64 * (monotonic us): the jitter buffer's first
   * request, the first NACK, the original's arrival (payload type 96),
   * the first retransmission (97, by its original sequence number) */
  GHashTable *asked, *nacked, *arrived, *rtx_seen;
} Wire;

static void
wire_init (Wire * w)
{
  memset (w, 0, sizeof *w);
  g_mutex_init (&w->lock);
  w->seqs = g_array_new (FALSE, FALSE, sizeof (guint16));
  w->asked = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  w->nacked = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  w->arrived = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  w->rtx_seen = g_hash_table_new_full (NULL, NULL, NULL, g_free);
}

static void
wire_clear (Wire * w)
{
  g_array_unref (w->seqs);
  g_hash_table_unref (w->asked);
  g_hash_table_unref (w->nacked);
  g_hash_table_unref (w->arrived);
  g_hash_table_unref (w->rtx_seen);
  g_mutex_clear (&w->lock);
}

/* The first time seq was seen in t (lock held). */
static void
note_time (GHashTable * t, guint seq, gint64 now)
{
  if (!g_hash_table_contains (t, GUINT_TO_POINTER (seq)))
    g_hash_table_insert (t, GUINT_TO_POINTER (seq), g_memdup2 (&now,
            sizeof now));
}

/* When seq was first seen in t, or -1 (lock held). */
static gint64
time_of (GHashTable * t, guint seq)
{
  gint64 *v = g_hash_table_lookup (t, GUINT_TO_POINTER (seq));

  return v ? *v : -1;
}

/* The mean and the longest time (ms) from a sequence number's entry in
 * `from` to its entry in `to` (lock held). */
static void
delay_between (GHashTable * from, GHashTable * to, gdouble * mean,
    gdouble * max)
{
  GHashTableIter it;
  gpointer key, value;
  gint64 sum = 0, most = 0, n = 0;

  g_hash_table_iter_init (&it, to);
  while (g_hash_table_iter_next (&it, &key, &value)) {
    gint64 t = time_of (from, GPOINTER_TO_UINT (key));
    if (t >= 0) {
      sum += *(gint64 *) value - t;
      most = MAX (most, *(gint64 *) value - t);
      n++;
    }
  }
  *mean = n ? sum / 1000.0 / n : 0.0;
  *max = most / 1000.0;
}

/* An RTCP datagram (RFC 3550 6.1, RFC 4585 6.1): its feedback counted. */
static void
take_rtcp (Wire * w, const guint8 * d, gsize n, gint64 now)
{
  gboolean nack = FALSE;

  w->n.compounds++;
  if (d[1] != 200 && d[1] != 201)
    w->n.reduced++;
  for (gsize off = 0; off + 4 <= n;) {
    guint fmt = d[off] & 0x1f, pt = d[off + 1];
    gsize len = ((gsize) (d[off + 2] << 8 | d[off + 3]) + 1) * 4;

    if ((d[off] >> 6) != 2 || off + len > n)
      break;
    if (pt == 205 && fmt == 1 && len >= 12) {
      /* the FCI after the two SSRCs: a PID, a bitmask of the 16 after it */
      w->n.nacks++;
      nack = TRUE;
      for (gsize f = off + 12; f + 4 <= off + len; f += 4) {
        guint16 pid = (guint16) (d[f] << 8 | d[f + 1]);
        guint16 blp = (guint16) (d[f + 2] << 8 | d[f + 3]);
        for (gint i = -1; i < 16; i++) {
          guint16 seq = (guint16) (pid + i + 1);
          if (i >= 0 && !(blp & (1u << i)))
            continue;
          g_array_append_val (w->seqs, seq);
          w->n.seqs++;
          note_time (w->nacked, seq, now);
        }
      }
    } else if (pt == 206 && fmt == 1) {
      w->n.plis++;
    } else if (pt == 206 && fmt == 4) {
      w->n.firs++;
    }
    off += len;
  }
  w->n.nack_compounds += nack;
}

/* An RTP or RTCP datagram (lock held). */
static void
take_datagram (Wire * w, GstBuffer * buf, gint64 now)
{
  GstMapInfo map;
  const guint8 *d;
  guint pt;

  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return;
  d = map.data;
  pt = map.size >= 12 ? d[1] & 0x7f : 0;
  if (map.size < 12) {
  } else if (d[1] >= 192 && d[1] <= 223) {
    take_rtcp (w, d, map.size, now);
  } else if (pt == 96) {
    w->n.rtp[pt]++;
    note_time (w->arrived, (guint) (d[2] << 8 | d[3]), now);
  } else {
    /* RFC 4588 4: the original sequence number leads the payload */
    gsize off = 12 + 4 * (d[0] & 0x0f);
    if ((d[0] & 0x10) && off + 4 <= map.size)
      off += 4 + 4 * (gsize) (d[off + 2] << 8 | d[off + 3]);
    w->n.rtp[pt]++;
    if (pt == 97 && off + 2 <= map.size) {
      note_time (w->rtx_seen, (guint) (d[off] << 8 | d[off + 1]), now);
      w->n.rtx_ssrc = (guint) d[8] << 24 | (guint) d[9] << 16 |
          (guint) d[10] << 8 | d[11];
    }
  }
  gst_buffer_unmap (buf, &map);
}

static GstPadProbeReturn
on_datagram (GstPad * pad, GstPadProbeInfo * info, Wire * w)
{
  gint64 now = g_get_monotonic_time ();

  g_mutex_lock (&w->lock);
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    take_datagram (w, GST_PAD_PROBE_INFO_BUFFER (info), now);
  } else {
    GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST (info);
    for (guint i = 0; i < gst_buffer_list_length (list); i++)
      take_datagram (w, gst_buffer_list_get (list, i), now);
  }
  g_mutex_unlock (&w->lock);
  return GST_PAD_PROBE_OK;
}

/* Reads the datagrams element `name` of p passes on pad `pad`. */
static void
watch (GstElement * p, const gchar * name, const gchar * pad, Wire * w)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), name);
  GstPad *sp = gst_element_get_static_pad (e, pad);

  fail_unless (sp != NULL);
  gst_pad_add_probe (sp,
      GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
      (GstPadProbeCallback) on_datagram, w, NULL);
  gst_object_unref (sp);
  gst_object_unref (e);
}

/* A retransmission request on its way up from the jitter buffer. */
static GstPadProbeReturn
on_request (GstPad * pad, GstPadProbeInfo * info, Wire * w)
{
  const GstStructure *s =
      gst_event_get_structure (GST_PAD_PROBE_INFO_EVENT (info));
  guint seq;

  if (s && gst_structure_has_name (s, "GstRTPRetransmissionRequest") &&
      gst_structure_get_uint (s, "seqnum", &seq)) {
    g_mutex_lock (&w->lock);
    note_time (w->asked, seq, g_get_monotonic_time ());
    g_mutex_unlock (&w->lock);
  }
  return GST_PAD_PROBE_OK;
}

/* ---- rtpbin: linked by hand, its aux elements on request ---------------- */

/* rtpbin asks for its aux elements while its pads are requested, so it is
 * linked once its signals are connected rather than by the launch line. */
static void
link_pads (GstElement * p, const gchar * a, const gchar * apad,
    const gchar * b, const gchar * bpad)
{
  GstElement *ea = gst_bin_get_by_name (GST_BIN (p), a);
  GstElement *eb = gst_bin_get_by_name (GST_BIN (p), b);

  fail_unless (ea != NULL && eb != NULL);
  fail_unless (gst_element_link_pads (ea, apad, eb, bpad), "%s.%s ! %s.%s",
      a, apad, b, bpad);
  gst_object_unref (ea);
  gst_object_unref (eb);
}

typedef struct
{
  const gchar *factory;         /* rtprtxreceive, rtprtxsend; NULL: none */
  GstElement *rtx;              /* the one made */
  GstElement *jb;               /* the first jitter buffer */
  GstElement *next;             /* where the received stream goes */
  Wire *wire;                   /* when the jitter buffer asks */
} Rtpbin;

/* request-aux-receiver / request-aux-sender: a bin around the rtx element
 * with pads sink_%u and src_%u, payload type 96 retransmitted as 97. */
static GstElement *
on_request_aux (GstElement * rtpbin, guint session, Rtpbin * rb)
{
  const gchar *dir[] = { "sink", "src" };
  GstElement *bin, *rtx;
  GstStructure *map;

  if (!rb->factory)
    return NULL;
  bin = gst_bin_new (NULL);
  rtx = gst_element_factory_make (rb->factory, NULL);
  fail_unless (rtx != NULL, "no %s", rb->factory);
  map = gst_structure_new ("application/x-rtp-pt-map", "96", G_TYPE_UINT, 97,
      NULL);
  g_object_set (rtx, "payload-type-map", map, NULL);
  gst_structure_free (map);
  if (g_str_equal (rb->factory, "rtprtxsend"))
    g_object_set (rtx, "max-size-time", 1000, NULL);
  gst_bin_add (GST_BIN (bin), rtx);
  for (guint i = 0; i < G_N_ELEMENTS (dir); i++) {
    GstPad *pad = gst_element_get_static_pad (rtx, dir[i]);
    gchar *name = g_strdup_printf ("%s_%u", dir[i], session);
    gst_element_add_pad (bin, gst_ghost_pad_new (name, pad));
    g_free (name);
    gst_object_unref (pad);
  }
  rb->rtx = gst_object_ref (rtx);
  return bin;
}

static void
on_new_jitterbuffer (GstElement * rtpbin, GstElement * jb, guint session,
    guint ssrc, Rtpbin * rb)
{
  GstPad *pad;

  if (rb->jb)
    return;
  rb->jb = gst_object_ref (jb);
  if (!rb->wire)
    return;
  pad = gst_element_get_static_pad (jb, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM,
      (GstPadProbeCallback) on_request, rb->wire, NULL);
  gst_object_unref (pad);
}

static void
on_pad_added (GstElement * rtpbin, GstPad * pad, Rtpbin * rb)
{
  gchar *name = gst_pad_get_name (pad);

  if (g_str_has_prefix (name, "recv_rtp_src_") && rb->next) {
    GstPad *sink = gst_element_get_static_pad (rb->next, "sink");
    /* the first stream; a second (the retransmissions' SSRC, when rtpbin
     * has no rtprtxreceive) stays unlinked */
    if (!gst_pad_is_linked (sink) &&
        gst_pad_link (pad, sink) != GST_PAD_LINK_OK)
      GST_ERROR ("could not link %s", name);
    gst_object_unref (sink);
  }
  g_free (name);
}

/* The rtpbin "rb" of pipeline p, its signals connected: `aux` its aux
 * receiver or sender, `next` gets its received stream, and the jitter
 * buffer's requests are timed into w (each may be NULL). */
static void
setup_rtpbin (GstElement * p, Rtpbin * rb, const gchar * aux,
    const gchar * next, Wire * w)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), "rb");

  memset (rb, 0, sizeof *rb);
  rb->factory = aux;
  rb->wire = w;
  if (next)
    rb->next = gst_bin_get_by_name (GST_BIN (p), next);
  g_signal_connect (e, "request-aux-receiver", G_CALLBACK (on_request_aux),
      rb);
  g_signal_connect (e, "request-aux-sender", G_CALLBACK (on_request_aux), rb);
  g_signal_connect (e, "new-jitterbuffer", G_CALLBACK (on_new_jitterbuffer),
      rb);
  g_signal_connect (e, "pad-added", G_CALLBACK (on_pad_added), rb);
  gst_object_unref (e);
}

static void
clear_rtpbin (Rtpbin * rb)
{
  gst_clear_object (&rb->rtx);
  gst_clear_object (&rb->jb);
  gst_clear_object (&rb->next);
}

/* Session 0's bandwidth (SESSION_BANDWIDTH), once its pads exist. */
static void
set_session_bandwidth (GstElement * p)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), "rb");
  GObject *session = NULL;

  g_signal_emit_by_name (e, "get-internal-session", 0, &session);
  fail_unless (session != NULL);
  g_object_set (session, "bandwidth", SESSION_BANDWIDTH, NULL);
  g_object_unref (session);
  gst_object_unref (e);
}

/* A guint64 field of the stats of rtpbin's source with this SSRC (0: no
 * such source). */
static guint64
source_u64 (GstElement * p, guint ssrc, const gchar * field)
{
  GObject *src = rtpbin_source (p, ssrc, NULL, NULL);
  GstStructure *st = NULL;
  guint64 v = 0;

  if (!src)
    return 0;
  g_object_get (src, "stats", &st, NULL);
  fail_unless (gst_structure_get_uint64 (st, field, &v), "no %s", field);
  gst_structure_free (st);
  g_object_unref (src);
  return v;
}

/* ---- 1. our sink retransmits to rtpbin ---------------------------------- */

/* Of the sequence numbers NACKed (each time it was): *never* outside the
 * stream's first .. first + n - 1, never sent; *early* in it, asked for
 * before the original arrived (late, not lost). Lock held. */
static void
classify_nacks (Wire * w, guint first, guint64 n, guint * never,
    guint * early)
{
  *never = *early = 0;
  for (guint i = 0; i < w->seqs->len; i++) {
    guint16 seq = g_array_index (w->seqs, guint16, i);
    gint64 arrived = time_of (w->arrived, seq);
    if ((guint16) (seq - first) >= n)
      (*never)++;
    else if (arrived >= 0 && arrived > time_of (w->nacked, seq))
      (*early)++;
  }
}

/* appsrc ! uvgrtpsink -> relay (1.5 %, 10 ms) -> udpsrc ! rtpbin
 * (do-retransmission, avpf, rtprtxreceive as aux receiver) !
 * rtph264depay ! appsink; rtpbin's RTCP udpsink aims at the sink's
 * rtcp-bind-port, the sink's reports go to rtpbin's RTCP udpsrc.
 * sink_rtx: the sink's do-retransmission; aux: rtpbin has rtprtxreceive. */
static void
run_sink_to_rtpbin (gboolean sink_rtx, gboolean aux)
{
  Stream *st = stream_h264 ();
  gint p = free_ports (4);
  relay_config_t mc = {.seed = 4242,.drop = 0.015,.delay_ms = 10,
    .skip_first = 40,.to_port = (guint16) p
  };
  GstElement *rx = launchf ("rtpbin name=rb latency=200 "
      "do-retransmission=true rtp-profile=avpf "
      "udpsrc name=rtp_in port=%d caps=\"" RTP_CAPS "\" "
      "udpsrc name=rtcp_in port=%d "
      "udpsink name=rtcp_out host=127.0.0.1 port=%d sync=false async=false "
      "rtph264depay name=depay ! video/x-h264,stream-format=byte-stream,"
      "alignment=au ! appsink name=sink sync=false", p, p + 1, p + 3);
  Rtpbin rb;
  Wire wire;
  WireCounts n;
  relay_t media;
  GstElement *tx;
  GPtrArray *got;
  GstStructure *ss, *js = NULL;
  guint ssrc = 0, rtx_ssrc = 0, seq0 = 0, req = 0, rtx_in = 0, assoc = 0;
  guint never, early;
  gdouble to_nack, to_nack_max, to_rtx, to_rtx_max;
  guint64 media_in, rtx_rx, jb_requests = 0, jb_lost = 0;

  wire_init (&wire);
  setup_rtpbin (rx, &rb, aux ? "rtprtxreceive" : NULL, "depay", &wire);
  link_pads (rx, "rtp_in", "src", "rb", "recv_rtp_sink_0");
  link_pads (rx, "rtcp_in", "src", "rb", "recv_rtcp_sink_0");
  link_pads (rx, "rb", "send_rtcp_src_0", "rtcp_out", "sink");
  set_session_bandwidth (rx);
  watch (rx, "rtcp_out", "sink", &wire);
  watch (rx, "rtp_in", "src", &wire);
  play (rx);

  fail_unless_equals_int (relay_start (&media, &mc), 0);
  tx = launchf ("appsrc name=in format=time is-live=true ! uvgrtpsink "
      "name=net host=127.0.0.1 port=%u rtcp-port=%d rtcp-bind-port=%d "
      "mtu=600 sync=true do-retransmission=%s", media.port, p + 1, p + 3,
      sink_rtx ? "true" : "false");
  send_stream (tx, st);
  got = receive_all (rx);
  relay_stop (&media);

  ss = stats_of (tx, "net");
  fail_unless (gst_structure_get_uint (ss, "ssrc", &ssrc));
  fail_unless (gst_structure_get_uint (ss, "rtx-ssrc", &rtx_ssrc));
  fail_unless (gst_structure_get_uint (ss, "seqnum-offset", &seq0));
  media_in = source_u64 (rx, ssrc, "packets-received");
  rtx_rx = source_u64 (rx, rtx_ssrc, "packets-received");
  fail_unless (rb.jb != NULL);
  g_object_get (rb.jb, "stats", &js, NULL);
  fail_unless (gst_structure_get_uint64 (js, "rtx-count", &jb_requests));
  fail_unless (gst_structure_get_uint64 (js, "num-lost", &jb_lost));
  if (rb.rtx)
    g_object_get (rb.rtx, "num-rtx-requests", &req, "num-rtx-packets",
        &rtx_in, "num-rtx-assoc-packets", &assoc, NULL);
  g_mutex_lock (&wire.lock);
  n = wire.n;
  classify_nacks (&wire, seq0, u64 (ss, "packets"), &never, &early);
  delay_between (wire.asked, wire.nacked, &to_nack, &to_nack_max);
  delay_between (wire.nacked, wire.rtx_seen, &to_rtx, &to_rtx_max);
  g_mutex_unlock (&wire.lock);
  GST_INFO ("uvgrtpsink -> rtpbin%s%s: relay dropped %" G_GUINT64_FORMAT
      " of %" G_GUINT64_FORMAT "; rtpbin sent %u RTCP (%u reduced-size, %u "
      "with a NACK), %u NACKs for %u seqs (%u never sent, %u early), a "
      "NACK %.2f ms (mean) / %.2f ms (max) after the jitter buffer's "
      "request, its answer %.2f / %.2f ms after the NACK; jitter buffer: %"
      G_GUINT64_FORMAT " requests, %" G_GUINT64_FORMAT " lost; sink: NACKs %"
      G_GUINT64_FORMAT ", seqs %" G_GUINT64_FORMAT ", rtx %" G_GUINT64_FORMAT
      ", missing %" G_GUINT64_FORMAT ", repeats %" G_GUINT64_FORMAT
      "; rtprtxreceive: requests %u, rtx %u (associated %u); session: "
      "media %" G_GUINT64_FORMAT ", rtx %" G_GUINT64_FORMAT "; %u of %u AUs",
      sink_rtx ? "" : " (sink do-retransmission=false)",
      aux ? "" : " (no rtprtxreceive)", media.stats.dropped,
      media.stats.received, n.compounds, n.reduced, n.nack_compounds,
      n.nacks, n.seqs, never, early, to_nack, to_nack_max, to_rtx,
      to_rtx_max, jb_requests, jb_lost, u64 (ss, "nacks-received"), u64 (ss,
          "nack-seqs"), u64 (ss, "rtx-packets"), u64 (ss, "rtx-missing"),
      u64 (ss, "rtx-repeats"), req, rtx_in, assoc, media_in, rtx_rx,
      got->len, st->aus->len);

  stream_check_all (st, "h264parse ! avdec_h264", got);

  /* the relay dropped media, rtpbin asked for it, our sink sent it again */
  fail_unless (media_in < u64 (ss, "packets"), "the seed impaired nothing");
  fail_unless (u64 (ss, "nacks-received") > 0);
  fail_unless (u64 (ss, "rtx-packets") > 0);
  /* the relay had the sink's datagrams, rtpbin's session those it passed
   * on: media under the sink's SSRC, retransmissions under its rtx-ssrc,
   * each of which rtprtxreceive took and tied to a request */
  fail_unless_equals_uint64 (u64 (ss, "packets") + u64 (ss, "rtx-packets"),
      media.stats.received);
  fail_unless_equals_uint64 (media_in + rtx_rx, media.stats.forwarded);
  fail_unless_equals_uint64 (rtx_in, rtx_rx);
  fail_unless_equals_int (assoc, rtx_in);
  fail_unless_equals_uint64 (jb_requests, req);
  /* rtpbin's NACKs are what the sink read, packet for packet */
  fail_unless_equals_uint64 (u64 (ss, "nacks-received"), n.nacks);
  fail_unless_equals_uint64 (u64 (ss, "nack-seqs"), n.seqs);
  /* each sequence number asked for went again, unless the sink never had
   * it: the jitter buffer also asks for the one after the stream's last,
   * due by then, which never existed (and, were the sender late by more
   * than the jitter buffer's rtx-delay, for one not sent yet) */
  fail_unless_equals_uint64 (u64 (ss, "rtx-packets") + u64 (ss,
          "rtx-missing") + u64 (ss, "rtx-repeats"), u64 (ss, "nack-seqs"));
  fail_unless (u64 (ss, "rtx-missing") >= never &&
      u64 (ss, "rtx-missing") <= never + early, "%" G_GUINT64_FORMAT
      " missing, %u never sent, %u early", u64 (ss, "rtx-missing"), never,
      early);
  fail_unless_equals_uint64 (u64 (ss, "rtx-over-budget"), 0);
  fail_unless_equals_uint64 (u64 (ss, "rtx-errors"), 0);

  gst_structure_free (js);
  gst_structure_free (ss);
  g_ptr_array_unref (got);
  relay_free (&media);
  clear_rtpbin (&rb);
  stop (tx);
  stop (rx);
  wire_clear (&wire);
}

GST_START_TEST (test_sink_rtx_to_rtpbin)
{
  run_sink_to_rtpbin (TRUE, TRUE);
}

GST_END_TEST;

/* ---- 2. our source's NACKs make rtpbin + rtprtxsend retransmit ---------- */

/* appsrc ! rtph264pay ! rtpbin (rtprtxsend as aux sender) ! udpsink ->
 * relay (1.5 %, 10 ms) -> uvgrtpsrc; rtpbin's RTCP udpsink aims at our
 * source's RTCP port, our source's reports and NACKs go to rtpbin's RTCP
 * udpsrc (rtcp-remote-*). aux: rtpbin has rtprtxsend; avpf: its
 * rtp-profile is avpf (its first report goes at once) rather than its
 * default, avp (the first report a second or two in). The access units
 * come at their time (send_stream), so a retransmission leaves at once and
 * each loss is asked for once. */
static void
run_rtpbin_to_src (gboolean aux, gboolean avpf)
{
  Stream *st = stream_h264 ();
  gint p = free_ports (6);
  relay_config_t mc = {.seed = 5151,.drop = 0.015,.delay_ms = 10,
    .skip_first = 40,.to_port = (guint16) p
  };
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H264 latency=200 rtcp-remote-host=127.0.0.1 "
      "rtcp-remote-port=%d ! appsink name=sink sync=false", p, p + 5);
  Rtpbin rb;
  Wire wire;
  WireCounts n;
  relay_t media;
  GstElement *tx;
  GPtrArray *got;
  GstStructure *rs;
  guint rtx_ssrc = 0, req = 0, rtx_out = 0;
  gdouble to_rtx, to_rtx_max;

  wire_init (&wire);
  play (rx);
  fail_unless_equals_int (relay_start (&media, &mc), 0);
  tx = launchf ("rtpbin name=rb rtp-profile=%s "
      "appsrc name=in format=time is-live=true ! rtph264pay name=pay pt=96 "
      "mtu=600 "
      "udpsink name=rtp_out host=127.0.0.1 port=%u sync=true "
      "udpsink name=rtcp_out host=127.0.0.1 port=%d sync=false async=false "
      "udpsrc name=rtcp_in port=%d", avpf ? "avpf" : "avp", media.port,
      p + 1, p + 5);
  setup_rtpbin (tx, &rb, aux ? "rtprtxsend" : NULL, NULL, NULL);
  link_pads (tx, "pay", "src", "rb", "send_rtp_sink_0");
  link_pads (tx, "rb", "send_rtp_src_0", "rtp_out", "sink");
  link_pads (tx, "rb", "send_rtcp_src_0", "rtcp_out", "sink");
  link_pads (tx, "rtcp_in", "src", "rb", "recv_rtcp_sink_0");
  set_session_bandwidth (tx);
  /* what rtpbin sends our source, what our source sends rtpbin */
  watch (tx, "rtp_out", "sink", &wire);
  watch (tx, "rtcp_in", "src", &wire);
  send_stream (tx, st);
  got = receive_all (rx);
  relay_stop (&media);

  rs = stats_of (rx, "src");
  fail_unless (gst_structure_get_uint (rs, "rtx-ssrc", &rtx_ssrc));
  if (rb.rtx)
    g_object_get (rb.rtx, "num-rtx-requests", &req, "num-rtx-packets",
        &rtx_out, NULL);
  g_mutex_lock (&wire.lock);
  n = wire.n;
  delay_between (wire.nacked, wire.rtx_seen, &to_rtx, &to_rtx_max);
  g_mutex_unlock (&wire.lock);
  GST_INFO ("rtpbin (%s)%s -> uvgrtpsrc: relay dropped %" G_GUINT64_FORMAT
      " of %" G_GUINT64_FORMAT "; src: missing %" G_GUINT64_FORMAT
      ", asked %" G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT " NACKs, "
      "recovered %" G_GUINT64_FORMAT ", rtx in %" G_GUINT64_FORMAT
      " (dropped %" G_GUINT64_FORMAT "), lost %" G_GUINT64_FORMAT ", rtt %"
      G_GUINT64_FORMAT " ns; rtpbin read %u RTCP (%u reduced-size), %u "
      "NACKs for %u seqs, sent a retransmission %.2f ms (mean) / %.2f ms "
      "(max) after the NACK; rtprtxsend: requests %u, rtx %u; rtpbin sent "
      "%u media, %u rtx; %u of %u AUs", avpf ? "avpf" : "avp",
      aux ? "" : " without rtprtxsend", media.stats.dropped,
      media.stats.received, u64 (rs, "missing"), u64 (rs, "nack-requests"),
      u64 (rs, "nacks-sent"), u64 (rs, "recovered"), u64 (rs,
          "rtx-received"), u64 (rs, "rtx-dropped"), u64 (rs, "lost"),
      u64 (rs, "round-trip-time"), n.compounds, n.reduced, n.nacks, n.seqs,
      to_rtx, to_rtx_max, req, rtx_out, n.rtp[96], n.rtp[97], got->len,
      st->aus->len);

  stream_check_all (st, "h264parse ! avdec_h264", got);

  /* the relay dropped media, our source asked for it, rtprtxsend sent it
   * again, and nothing was given up */
  fail_unless (u64 (rs, "missing") > 0, "the seed impaired nothing");
  fail_unless (u64 (rs, "rtx-received") > 0);
  fail_unless_equals_uint64 (u64 (rs, "recovered"), u64 (rs, "missing"));
  fail_unless_equals_uint64 (u64 (rs, "lost"), 0);
  fail_unless_equals_uint64 (u64 (rs, "lost-unrecovered"), 0);
  fail_unless_equals_uint64 (u64 (rs, "recovered-late"), 0);
  /* the relay had rtpbin's datagrams: the media, all of which our source
   * has, and rtprtxsend's retransmissions, whose SSRC it took */
  fail_unless_equals_uint64 (n.rtp[96] + n.rtp[97], media.stats.received);
  fail_unless_equals_uint64 (u64 (rs, "packets"), n.rtp[96]);
  fail_unless_equals_int (n.rtp[97], rtx_out);
  fail_unless_equals_int (rtx_ssrc, n.rtx_ssrc);
  /* our NACKs as rtpbin read them: each sequence number one request to
   * rtprtxsend, each answered */
  fail_unless_equals_uint64 (u64 (rs, "nacks-sent"), n.nacks);
  fail_unless_equals_uint64 (u64 (rs, "nack-requests"), n.seqs);
  fail_unless_equals_int (req, n.seqs);
  fail_unless_equals_int (rtx_out, req);
  /* what the relay dropped: media the source missed, and retransmissions
   * it neither took nor dropped (as answers to a repeated request) */
  fail_unless_equals_uint64 (u64 (rs, "missing") + rtx_out - u64 (rs,
          "rtx-received") - u64 (rs, "rtx-dropped"), media.stats.dropped);
  /* NACK to retransmission: the relay's 10 ms at least */
  fail_unless (u64 (rs, "round-trip-time") >= 10 * GST_MSECOND);
  fail_unless (u64 (rs, "round-trip-time") < 80 * GST_MSECOND);

  gst_structure_free (rs);
  g_ptr_array_unref (got);
  relay_free (&media);
  clear_rtpbin (&rb);
  stop (tx);
  stop (rx);
  wire_clear (&wire);
}

GST_START_TEST (test_rtpbin_rtx_to_src)
{
  run_rtpbin_to_src (TRUE, TRUE);
}

GST_END_TEST;

/* The same from rtpbin's default profile, whose first report comes 1 to
 * 3 s in: uvgrtpsrc, told where RTCP goes (rtcp-remote-host), asks for
 * what the relay drops from the first loss on, not from its first RTCP
 * round (it did not, and this failed when a loss came early). */
GST_START_TEST (test_rtpbin_avp_rtx_to_src)
{
  run_rtpbin_to_src (TRUE, FALSE);
}

GST_END_TEST;

/* ---- key frames on request ---------------------------------------------- */

#define MAX_KEYS 64

/* What arrives at a receiver's appsink "sink". */
typedef struct
{
  GMutex lock;
  gint frames, keys;
  gint64 key_at[MAX_KEYS];      /* monotonic us each key frame arrived */
} Count;

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer user)
{
  Count *c = user;
  GstSample *s = gst_app_sink_pull_sample (sink);

  if (s) {
    g_mutex_lock (&c->lock);
    c->frames++;
    if (!GST_BUFFER_FLAG_IS_SET (gst_sample_get_buffer (s),
            GST_BUFFER_FLAG_DELTA_UNIT) && c->keys < MAX_KEYS)
      c->key_at[c->keys++] = g_get_monotonic_time ();
    g_mutex_unlock (&c->lock);
    gst_sample_unref (s);
  }
  return GST_FLOW_OK;
}

static void
count_samples (GstElement * p, Count * c)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (p), "sink");

  memset (c, 0, sizeof *c);
  g_mutex_init (&c->lock);
  g_object_set (sink, "emit-signals", TRUE, NULL);
  g_signal_connect (sink, "new-sample", G_CALLBACK (on_sample), c);
  gst_object_unref (sink);
}

/* Key frames that arrived after t (lock held). */
static gint
keys_after (Count * c, gint64 t)
{
  gint n = 0;

  for (gint i = 0; i < c->keys; i++)
    n += c->key_at[i] > t;
  return n;
}

static GstPadProbeReturn
on_key_unit_event (GstPad * pad, GstPadProbeInfo * info, gint * n)
{
  if (gst_video_event_is_force_key_unit (GST_PAD_PROBE_INFO_EVENT (info)))
    g_atomic_int_inc (n);
  return GST_PAD_PROBE_OK;
}

/* Force-key-unit events that reach element `name` from downstream. */
static void
count_key_unit_events (GstElement * p, const gchar * name, gint * n)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), name);
  GstPad *pad = gst_element_get_static_pad (e, "src");

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM,
      (GstPadProbeCallback) on_key_unit_event, n, NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
}

/* Live H.264 with one IDR at the start: only requests bring more. */
#define LIVE_H264 "videotestsrc is-live=true pattern=ball ! video/x-raw," \
  "width=320,height=240,framerate=30/1 ! x264enc name=enc " \
  "key-int-max=100000 tune=zerolatency speed-preset=ultrafast bitrate=2000"

#define RUN_US (3 * G_USEC_PER_SEC)
#define SETTLE_US (600 * 1000)

/* The media stops (the relay forwards nothing more) and the requests its
 * last losses bring have gone (the receivers' latency is 100 ms, our
 * source asks at most every 300 ms): both ends' counts are final. */
static void
settle (relay_t * media)
{
  relay_stop (media);
  g_usleep (SETTLE_US);
}

/* ---- 3. rtph264depay's requests, through rtpbin, reach x264enc ---------- */

/* When the relay first dropped a datagram: when the next it passed on
 * arrived at rtpbin (monotonic us; -1: it dropped none). Lock held. */
static gint64
first_loss (relay_t * media, Wire * w)
{
  guint i = 0;

  while (i < media->ntrace && !media->trace[i].dropped)
    i++;
  while (i < media->ntrace && media->trace[i].dropped)
    i++;
  return i < media->ntrace ? time_of (w->arrived, media->trace[i].seq) : -1;
}

/* LIVE_H264 ! uvgrtpsink -> relay (2 %, 10 ms) -> rtpbin (avpf, no
 * retransmission) ! rtph264depay ! h264parse ! appsink: the depayloader
 * (request: its request-keyframe) asks for a key unit on every gap,
 * rtpbin's session sends a PLI or a FIR (what the caps' rtcp-fb fields,
 * fb_caps, allow: without either it sends nothing), our sink passes it to
 * x264enc as a force-key-unit event. rtph264depay also asks once as the
 * stream starts, whatever request-keyframe says: the relay passes the
 * first second untouched, and only key frames after the first loss
 * count. */
static void
run_depay_keyframes (gboolean request, const gchar * fb_caps)
{
  gint p = free_ports (4);
  relay_config_t mc = {.seed = 77,.drop = 0.02,.delay_ms = 10,
    .skip_first = 120,.to_port = (guint16) p
  };
  GstElement *rx = launchf ("rtpbin name=rb latency=100 rtp-profile=avpf "
      "udpsrc name=rtp_in port=%d caps=\"" RTP_CAPS ",%s\" "
      "udpsrc name=rtcp_in port=%d "
      "udpsink name=rtcp_out host=127.0.0.1 port=%d sync=false async=false "
      "rtph264depay name=depay request-keyframe=%s ! h264parse ! "
      "appsink name=sink sync=false", p, fb_caps, p + 1, p + 3,
      request ? "true" : "false");
  Rtpbin rb;
  Wire wire;
  WireCounts n;
  Count c;
  gint events = 0, frames, keys, later;
  gint64 loss;
  relay_t media;
  GstElement *tx;
  GstStructure *ss;

  wire_init (&wire);
  setup_rtpbin (rx, &rb, NULL, "depay", NULL);
  link_pads (rx, "rtp_in", "src", "rb", "recv_rtp_sink_0");
  link_pads (rx, "rtcp_in", "src", "rb", "recv_rtcp_sink_0");
  link_pads (rx, "rb", "send_rtcp_src_0", "rtcp_out", "sink");
  set_session_bandwidth (rx);
  watch (rx, "rtcp_out", "sink", &wire);
  watch (rx, "rtp_in", "src", &wire);
  count_samples (rx, &c);
  play (rx);
  fail_unless_equals_int (relay_start (&media, &mc), 0);
  tx = launchf (LIVE_H264 " ! uvgrtpsink name=net host=127.0.0.1 port=%u "
      "rtcp-port=%d rtcp-bind-port=%d mtu=600", media.port, p + 1, p + 3);
  count_key_unit_events (tx, "enc", &events);
  play (tx);
  g_usleep (RUN_US);
  settle (&media);

  ss = stats_of (tx, "net");
  g_mutex_lock (&wire.lock);
  n = wire.n;
  loss = first_loss (&media, &wire);
  g_mutex_unlock (&wire.lock);
  g_mutex_lock (&c.lock);
  frames = c.frames;
  keys = c.keys;
  later = keys_after (&c, loss);
  g_mutex_unlock (&c.lock);
  GST_INFO ("uvgrtpsink -> rtpbin (%s) ! rtph264depay request-keyframe=%d: "
      "relay dropped %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT "; rtpbin "
      "sent %u PLIs, %u FIRs (%u RTCP, %u reduced-size); sink: PLIs %"
      G_GUINT64_FORMAT ", FIRs %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
      " requests upstream, %d at x264enc; %d frames, %d key frames, %d "
      "after the first loss", fb_caps, request, media.stats.dropped,
      media.stats.received, n.plis, n.firs, n.compounds, n.reduced,
      u64 (ss, "pli-received"), u64 (ss, "fir-received"), u64 (ss,
          "keyframe-requests"), g_atomic_int_get (&events), frames, keys,
      later);
  fail_unless (frames > 60);
  fail_unless (loss >= 0, "the seed impaired nothing");
  /* rtpbin asked, and our sink read each request: every PLI, every FIR
   * (each with a new sequence number) */
  fail_unless (n.plis + n.firs > 0, "rtpbin asked for no key frame");
  fail_unless_equals_uint64 (u64 (ss, "pli-received"), n.plis);
  fail_unless_equals_uint64 (u64 (ss, "fir-received"), n.firs);
  /* ... and asked x264enc, at most once per 200 ms */
  fail_unless (u64 (ss, "keyframe-requests") > 0);
  fail_unless_equals_uint64 (u64 (ss, "keyframe-requests"),
      g_atomic_int_get (&events));
  fail_unless (u64 (ss, "keyframe-requests") <=
      (RUN_US + SETTLE_US) / 200000 + 1);
  fail_unless (later > 0, "no key frame followed the losses");

  gst_structure_free (ss);
  relay_free (&media);
  clear_rtpbin (&rb);
  stop (tx);
  stop (rx);
  g_mutex_clear (&c.lock);
  wire_clear (&wire);
}

/* rtpsession sends PLIs when the caps say rtcp-fb-nack-pli */
GST_START_TEST (test_depay_pli_to_sink)
{
  run_depay_keyframes (TRUE, "rtcp-fb-nack-pli=(boolean)true");
}

GST_END_TEST;

/* rtph264depay asks for all headers: FIRs when rtcp-fb-ccm-fir allows */
GST_START_TEST (test_depay_fir_to_sink)
{
  run_depay_keyframes (TRUE, "rtcp-fb-ccm-fir=(boolean)true");
}

GST_END_TEST;

/* ---- 4. our source's PLIs make rtpbin ask x264enc for key units -------- */

/* LIVE_H264 ! rtph264pay ! rtpbin (avpf) ! udpsink -> relay (2 %, 10 ms)
 * -> uvgrtpsrc do-retransmission=false: packets given up make it send
 * PLIs (request: its request-keyframe) to rtpbin's RTCP udpsrc, rtpbin's
 * session sends force-key-unit upstream, new IDRs follow. */
static void
run_src_keyframes (gboolean request)
{
  gint p = free_ports (6);
  relay_config_t mc = {.seed = 77,.drop = 0.02,.delay_ms = 10,
    .skip_first = 40,.to_port = (guint16) p
  };
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H264 latency=100 do-retransmission=false "
      "request-keyframe=%s rtcp-remote-host=127.0.0.1 rtcp-remote-port=%d ! "
      "appsink name=sink sync=false", p, request ? "true" : "false", p + 5);
  Rtpbin rb;
  Wire wire;
  WireCounts n;
  Count c;
  gint events = 0, frames, keys;
  relay_t media;
  GstElement *tx;
  GstStructure *rs;

  wire_init (&wire);
  count_samples (rx, &c);
  play (rx);
  fail_unless_equals_int (relay_start (&media, &mc), 0);
  tx = launchf ("rtpbin name=rb rtp-profile=avpf " LIVE_H264 " ! "
      "rtph264pay name=pay pt=96 mtu=600 config-interval=-1 "
      "udpsink name=rtp_out host=127.0.0.1 port=%u "
      "udpsink name=rtcp_out host=127.0.0.1 port=%d sync=false async=false "
      "udpsrc name=rtcp_in port=%d", media.port, p + 1, p + 5);
  setup_rtpbin (tx, &rb, NULL, NULL, NULL);
  link_pads (tx, "pay", "src", "rb", "send_rtp_sink_0");
  link_pads (tx, "rb", "send_rtp_src_0", "rtp_out", "sink");
  link_pads (tx, "rb", "send_rtcp_src_0", "rtcp_out", "sink");
  link_pads (tx, "rtcp_in", "src", "rb", "recv_rtcp_sink_0");
  set_session_bandwidth (tx);
  watch (tx, "rtcp_in", "src", &wire);
  count_key_unit_events (tx, "enc", &events);
  play (tx);
  g_usleep (RUN_US);
  settle (&media);

  rs = stats_of (rx, "src");
  g_mutex_lock (&wire.lock);
  n = wire.n;
  g_mutex_unlock (&wire.lock);
  g_mutex_lock (&c.lock);
  frames = c.frames;
  keys = c.keys;
  g_mutex_unlock (&c.lock);
  GST_INFO ("rtpbin -> uvgrtpsrc request-keyframe=%d: relay dropped %"
      G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT "; src: lost %"
      G_GUINT64_FORMAT ", PLIs %" G_GUINT64_FORMAT ", FIRs %" G_GUINT64_FORMAT
      "; rtpbin read %u PLIs (%u RTCP, %u reduced-size), %d force-key-unit "
      "events at x264enc; %d frames, %d key frames", request,
      media.stats.dropped, media.stats.received, u64 (rs, "lost"), u64 (rs,
          "pli-sent"), u64 (rs, "fir-sent"), n.plis, n.compounds, n.reduced,
      g_atomic_int_get (&events), frames, keys);
  fail_unless (frames > 60);
  fail_unless (u64 (rs, "lost") > 0, "the seed impaired nothing");
  /* our source asked, at most once per 300 ms, rtpbin read each PLI */
  fail_unless (u64 (rs, "pli-sent") > 0);
  fail_unless_equals_uint64 (u64 (rs, "fir-sent"), 0);
  fail_unless (u64 (rs, "pli-sent") <= (RUN_US + SETTLE_US) / 300000 + 1);
  fail_unless_equals_uint64 (u64 (rs, "pli-sent"), n.plis);
  /* ... and asked x264enc (rtpsession may hold back one of two requests a
   * round trip apart) */
  fail_unless (g_atomic_int_get (&events) > 0 &&
      g_atomic_int_get (&events) <= (gint) n.plis);
  /* x264enc makes no key frame unasked */
  fail_unless (keys >= 2, "no key frame followed the PLIs");

  gst_structure_free (rs);
  relay_free (&media);
  clear_rtpbin (&rb);
  stop (tx);
  stop (rx);
  g_mutex_clear (&c.lock);
  wire_clear (&wire);
}

GST_START_TEST (test_src_pli_to_rtpbin)
{
  run_src_keyframes (TRUE);
}

GST_END_TEST;

static Suite *
recovery_rtpbin_suite (void)
{
  Suite *s = suite_create ("uvgrtp-recovery-rtpbin");
  TCase *tc = tcase_create ("rtpbin");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sink_rtx_to_rtpbin);
  tcase_add_test (tc, test_rtpbin_rtx_to_src);
  tcase_add_test (tc, test_rtpbin_avp_rtx_to_src);
  tcase_add_test (tc, test_depay_pli_to_sink);
  tcase_add_test (tc, test_depay_fir_to_sink);
  tcase_add_test (tc, test_src_pli_to_rtpbin);
  return s;
}

GST_CHECK_MAIN (recovery_rtpbin);
