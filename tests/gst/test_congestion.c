/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_congestion - congestion control between our elements and
 * GStreamer's stock ones, on loopback:
 *
 *  1. rtph264pay (rtphdrexttwcc) ! rtpbin -> uvgrtpsrc: our transport-wide
 *     feedback is read by rtpbin's session, which hands it upstream as the
 *     RTPTWCCPackets event rtpgccbwe reads; every packet rtpbin sent is in
 *     it, received, with arrival times that follow the send times.
 *  2. uvgrtpsink -> rtpbin (its TWCC feedback): our sink matches rtpbin's
 *     feedback against what it sent: every packet acknowledged once, none
 *     lost, nothing unknown.
 *  3. RFC 8888: uvgrtpsrc rfc8888-feedback=true -> uvgrtpsink
 *     congestion-control=gcc, no transport-wide numbers: the controller
 *     runs on RFC 8888 feedback alone, every packet acknowledged.
 *  3b. the same to two clients, each a uvgrtpsrc with RFC 8888 feedback:
 *     each receiver's feedback is its own (every packet acknowledged by
 *     both, none a repeat), and the sink counts two receivers.
 *  4. x264enc ! uvgrtpsink -> uvgrtpsrc across a bottleneck (two network
 *     namespaces of the test's own, a veth pair, tbf on the sender's side):
 *     with no application code the estimate, and x264enc's bitrate with
 *     it, settle below the bottleneck's rate, and follow it down when
 *     `tc qdisc change` halves it.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/rtp/rtp.h>

#include "rtcputil.h"
#include "streamutil.h"

#define FPS 30
#define FRAMES 60

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif
#define URI_TWCC "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

static Stream h264;

/* Plays tx and pushes st into its appsrc "in" in real time, a frame every
 * 1/FPS s, so that what rtpbin's session sees is when each packet goes.
 * No EOS: a sending rtpbin's session takes no RTCP after it, and the
 * feedback on the last frame comes after the last frame. */
static void
push_live (GstElement * tx, Stream * st)
{
  GstElement *in = gst_bin_get_by_name (GST_BIN (tx), "in");
  gint64 t0;

  g_object_set (in, "caps", st->caps, NULL);
  play (tx);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < st->aus->len; i++) {
    GstBuffer *b = gst_buffer_copy (g_ptr_array_index (st->aus, i));
    gint64 due = t0 + (gint64) i * G_USEC_PER_SEC / FPS;
    if (due > g_get_monotonic_time ())
      g_usleep ((gulong) (due - g_get_monotonic_time ()));
    /* appsrc's do-timestamp: the running time it is pushed at */
    GST_BUFFER_PTS (b) = GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION (b) = GST_SECOND / FPS;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (in), b),
        GST_FLOW_OK);
  }
  gst_object_unref (in);
}

static Stream *
stream_h264 (void)
{
  stream_encode (&h264, FRAMES, FPS, "x264enc key-int-max=30 "
      "tune=zerolatency speed-preset=ultrafast bitrate=1500 ! h264parse ! "
      "video/x-h264,stream-format=byte-stream,alignment=au ! appsink "
      "name=sink sync=false");
  return &h264;
}

/* What rtpbin's RTPTWCCPackets events said, per transport-wide number. */
typedef struct
{
  GMutex lock;
  guint events;
  guint reports;                /* packets reported, repeats included */
  GHashTable *received;         /* seqnum -> remote-ts + 1 */
  GHashTable *local;            /* seqnum -> local-ts + 1 */
  guint lost;
} TwccSeen;

static GstPadProbeReturn
on_upstream_event (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  TwccSeen *seen = user;
  GstEvent *ev = GST_PAD_PROBE_INFO_EVENT (info);
  const GstStructure *s = gst_event_get_structure (ev);
  const GValue *arr;

  if (!s || !gst_structure_has_name (s, "RTPTWCCPackets"))
    return GST_PAD_PROBE_OK;
  arr = gst_structure_get_value (s, "packets");
  g_mutex_lock (&seen->lock);
  seen->events++;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS;
  fail_unless (arr != NULL && G_VALUE_HOLDS_BOXED (arr));
  {
    GValueArray *va = g_value_get_boxed (arr);
    for (guint i = 0; i < va->n_values; i++) {
      const GstStructure *p =
          gst_value_get_structure (g_value_array_get_nth (va, i));
      guint seqnum = 0;
      GstClockTime remote = GST_CLOCK_TIME_NONE, local = GST_CLOCK_TIME_NONE;
      gboolean lost = FALSE;

      gst_structure_get_uint (p, "seqnum", &seqnum);
      gst_structure_get_clock_time (p, "remote-ts", &remote);
      gst_structure_get_clock_time (p, "local-ts", &local);
      gst_structure_get_boolean (p, "lost", &lost);
      seen->reports++;
      if (lost) {
        seen->lost++;
        continue;
      }
      if (GST_CLOCK_TIME_IS_VALID (remote))
        g_hash_table_insert (seen->received, GUINT_TO_POINTER (seqnum),
            GSIZE_TO_POINTER ((gsize) remote + 1));
      if (GST_CLOCK_TIME_IS_VALID (local))
        g_hash_table_insert (seen->local, GUINT_TO_POINTER (seqnum),
            GSIZE_TO_POINTER ((gsize) local + 1));
    }
  }
  G_GNUC_END_IGNORE_DEPRECATIONS;
  g_mutex_unlock (&seen->lock);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_twcc_feedback_to_rtpbin)
{
  Stream *st = stream_h264 ();
  gint port = free_ports (4);
  GstElement *tx, *rx, *pay, *src;
  GstRTPHeaderExtension *ext;
  GstPad *pad;
  TwccSeen seen = { 0 };
  GstStructure *ss;
  guint64 sent, fb_sent;
  guint64 first_remote = 0, first_local = 0;
  guint checked = 0, off = 0;

  g_mutex_init (&seen.lock);
  seen.received = g_hash_table_new (NULL, NULL);
  seen.local = g_hash_table_new (NULL, NULL);

  /* ours: RTP on port, RTCP on port + 1, feedback to rtpbin's port + 2 */
  rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "rtcp-remote-host=127.0.0.1 rtcp-remote-port=%d caps=\"application/x-rtp,"
      "media=video,clock-rate=90000,encoding-name=H264,payload=96,"
      "extmap-5=(string)" URI_TWCC "\" ! fakesink sync=false", port, port + 2);
  play (rx);
  tx = launchf ("appsrc name=in format=time is-live=true do-timestamp=true ! "
      "rtph264pay name=pay pt=96 config-interval=-1 ! rb.send_rtp_sink_0 "
      "rtpbin name=rb rb.send_rtp_src_0 ! udpsink host=127.0.0.1 port=%d "
      "sync=false async=false "
      "rb.send_rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "async=false udpsrc address=127.0.0.1 port=%d "
      "caps=application/x-rtcp ! rb.recv_rtcp_sink_0", port, port + 1,
      port + 2);
  pay = gst_bin_get_by_name (GST_BIN (tx), "pay");
  ext = gst_rtp_header_extension_create_from_uri (URI_TWCC);
  fail_unless (ext != NULL, "no rtphdrexttwcc");
  gst_rtp_header_extension_set_id (ext, 5);
  g_signal_emit_by_name (pay, "add-extension", ext);
  gst_object_unref (ext);
  pad = gst_element_get_static_pad (pay, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM,
      on_upstream_event, &seen, NULL);
  gst_object_unref (pad);

  /* the stream takes 2 s; the last feedback comes
   * after its last frame: done when rtpbin has heard of every packet our
   * element took and no more came for 0.5 s (a sending rtpbin's EOS comes
   * by RTCP's timing, if at all) */
  push_live (tx, st);
  {
    guint64 last = 0;
    gint still = 0;
    for (gint k = 0; k < 100 && still < 5; k++) {
      guint n;
      g_usleep (100000);
      g_mutex_lock (&seen.lock);
      n = g_hash_table_size (seen.received);
      g_mutex_unlock (&seen.lock);
      ss = stats_of (rx, "src");
      sent = u64 (ss, "packets");
      fb_sent = u64 (ss, "ccfb-sent");
      gst_structure_free (ss);
      still = sent > 0 && sent == last && n >= sent ? still + 1 : 0;
      last = sent;
    }
  }
  src = gst_bin_get_by_name (GST_BIN (rx), "src");
  ss = NULL;
  g_object_get (src, "stats", &ss, NULL);
  fail_unless_equals_uint64 (u64 (ss, "twcc-packets"), sent);
  gst_structure_free (ss);
  gst_object_unref (src);

  g_mutex_lock (&seen.lock);
  GST_INFO ("%u events, %u reports, %u received, %u lost; %" G_GUINT64_FORMAT
      " packets, %" G_GUINT64_FORMAT " feedbacks", seen.events, seen.reports,
      g_hash_table_size (seen.received), seen.lost, sent, fb_sent);
  fail_unless (seen.events > 0, "rtpbin read none of our feedback");
  fail_unless (fb_sent >= FRAMES / 2);
  /* every packet, received, none lost on loopback */
  fail_unless_equals_int (g_hash_table_size (seen.received), sent);
  fail_unless_equals_int (seen.lost, 0);
  /* arrival times follow send times (a frame every 33 ms): each arrival
   * is within 20 ms of its send time plus the first's offset (250 us
   * steps, loopback, two threads' scheduling) */
  {
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init (&it, seen.received);
    while (g_hash_table_iter_next (&it, &k, &v)) {
      gsize local = GPOINTER_TO_SIZE (g_hash_table_lookup (seen.local, k));
      gint64 d;
      if (!local)
        continue;
      if (!first_remote) {
        first_remote = GPOINTER_TO_SIZE (v);
        first_local = local;
      }
      d = ((gint64) GPOINTER_TO_SIZE (v) - (gint64) first_remote) -
          ((gint64) local - (gint64) first_local);
      checked++;
      if (ABS (d) > 20 * GST_MSECOND)
        off++;
    }
  }
  g_mutex_unlock (&seen.lock);
  fail_unless (checked >= sent / 2, "%u of %" G_GUINT64_FORMAT " timed",
      checked, sent);
  fail_unless (off <= checked / 20, "%u of %u arrivals off their send times",
      off, checked);

  gst_object_unref (pay);
  stop (tx);
  stop (rx);
  g_hash_table_unref (seen.received);
  g_hash_table_unref (seen.local);
  g_mutex_clear (&seen.lock);
}

GST_END_TEST;

GST_START_TEST (test_twcc_feedback_from_rtpbin)
{
  Stream *st = stream_h264 ();
  gint port = free_ports (4);
  GstElement *tx, *rx;
  GstStructure *ss = NULL;
  guint64 packets = 0, acked = 0;

  rx = launchf ("rtpbin name=rb rtp-profile=avpf udpsrc address=127.0.0.1 "
      "port=%d caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H264,payload=96,extmap-5=(string)" URI_TWCC "\" ! "
      "rb.recv_rtp_sink_0 udpsrc address=127.0.0.1 port=%d ! "
      "rb.recv_rtcp_sink_0 rb.send_rtcp_src_0 ! udpsink host=127.0.0.1 "
      "port=%d sync=false async=false rb. ! rtph264depay ! fakesink "
      "sync=false", port, port + 1, port + 3);
  set_rtpbin_interval (rx);
  play (rx);
  tx = launchf ("appsrc name=in format=time is-live=true do-timestamp=true ! "
      "uvgrtpsink name=sink host=127.0.0.1 port=%d rtcp-bind-port=%d "
      "rtp-caps=\"application/x-rtp,extmap-5=(string)" URI_TWCC "\"", port,
      port + 3);
  push_live (tx, st);
  /* rtpbin's feedback comes with its RTCP (early with AVPF) */
  for (gint k = 0; k < 60; k++) {
    g_usleep (100000);
    if (ss)
      gst_structure_free (ss);
    ss = stats_of (tx, "sink");
    packets = u64 (ss, "packets");
    acked = u64 (ss, "ccfb-acked");
    if (k > 25 && acked >= packets)
      break;
  }
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  fail_unless (u64 (ss, "ccfb-received") > 0, "no feedback taken");
  fail_unless_equals_uint64 (acked, packets);
  fail_unless_equals_uint64 (u64 (ss, "ccfb-lost"), 0);
  fail_unless_equals_uint64 (u64 (ss, "ccfb-unknown"), 0);
  fail_unless_equals_uint64 (u64 (ss, "ccfb-malformed"), 0);
  gst_structure_free (ss);
  stop (tx);
  stop (rx);
}

GST_END_TEST;

GST_START_TEST (test_rfc8888)
{
  gint port = free_ports (4);
  GstElement *tx, *rx;
  GstStructure *ss;
  guint est = 0;

  rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "rfc8888-feedback=true rtcp-remote-host=127.0.0.1 rtcp-remote-port=%d "
      "encoding-name=H264 ! fakesink sync=false", port, port + 3);
  play (rx);
  tx = launchf ("videotestsrc is-live=true num-buffers=90 pattern=ball ! "
      "video/x-raw,width=320,height=240,framerate=30/1 ! x264enc "
      "tune=zerolatency speed-preset=ultrafast bitrate=800 ! uvgrtpsink "
      "name=sink host=127.0.0.1 port=%d rtcp-bind-port=%d "
      "congestion-control=gcc", port, port + 3);
  play (tx);
  wait_eos (tx);
  g_usleep (300000);            /* the last frame's feedback */
  ss = stats_of (tx, "sink");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  est = (guint) u64 (ss, "estimated-bitrate");
  fail_unless (u64 (ss, "rfc8888-received") >= 30, "%" G_GUINT64_FORMAT
      " RFC 8888 messages", u64 (ss, "rfc8888-received"));
  fail_unless_equals_uint64 (u64 (ss, "ccfb-received"), 0);
  /* every packet, once; none lost on loopback */
  fail_unless_equals_uint64 (u64 (ss, "ccfb-acked"), u64 (ss, "packets"));
  fail_unless_equals_uint64 (u64 (ss, "ccfb-lost"), 0);
  fail_unless_equals_uint64 (u64 (ss, "ccfb-unknown"), 0);
  /* the controller ran on them */
  fail_unless (u64 (ss, "cc-packets") > 0 && est > 0, "cc-packets %"
      G_GUINT64_FORMAT ", estimate %u", u64 (ss, "cc-packets"), est);
  gst_structure_free (ss);
  stop (tx);
  stop (rx);
}

GST_END_TEST;

GST_START_TEST (test_two_receivers)
{
  gint port = free_ports (6);
  GstElement *tx, *rx[2];
  GstStructure *ss;

  for (gint k = 0; k < 2; k++) {
    rx[k] = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
        "rfc8888-feedback=true rtcp-remote-host=127.0.0.1 rtcp-remote-port=%d "
        "encoding-name=H264 ! fakesink sync=false", port + 2 * k, port + 5);
    play (rx[k]);
  }
  tx = launchf ("videotestsrc is-live=true num-buffers=90 pattern=ball ! "
      "video/x-raw,width=320,height=240,framerate=30/1 ! x264enc "
      "tune=zerolatency speed-preset=ultrafast bitrate=800 ! uvgrtpsink "
      "name=sink clients=127.0.0.1:%d,127.0.0.1:%d rtcp-bind-port=%d "
      "congestion-control=gcc", port, port + 2, port + 5);
  play (tx);
  wait_eos (tx);
  g_usleep (300000);            /* the last frame's feedback */
  ss = stats_of (tx, "sink");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  guint receivers = 0;
  fail_unless (gst_structure_get_uint (ss, "ccfb-receivers", &receivers));
  fail_unless_equals_int (receivers, 2);
  /* every packet, once from each receiver */
  fail_unless_equals_uint64 (u64 (ss, "ccfb-acked"), 2 * u64 (ss, "packets"));
  fail_unless_equals_uint64 (u64 (ss, "ccfb-repeated"), 0);
  fail_unless_equals_uint64 (u64 (ss, "ccfb-untracked"), 0);
  fail_unless_equals_uint64 (u64 (ss, "ccfb-lost"), 0);
  fail_unless (u64 (ss, "estimated-bitrate") > 0);
  gst_structure_free (ss);
  stop (tx);
  stop (rx[0]);
  stop (rx[1]);
}

GST_END_TEST;

/* Runs cmd through the shell; TRUE when it succeeded. */
static gboolean
sh (const gchar * fmt, ...) G_GNUC_PRINTF (1, 2);

static gboolean
sh (const gchar * fmt, ...)
{
  va_list ap;
  gchar *cmd;
  gint r;

  va_start (ap, fmt);
  cmd = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  r = system (cmd);
  GST_INFO ("%s: %d", cmd, r);
  g_free (cmd);
  return r == 0;
}

static gint
cmp_uint (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

/* Runs tx for `ms`, collecting uvgrtp-congestion messages; over its last
 * 3 s, every 100 ms, the estimate (bits/s) and how far x264enc's bitrate
 * (kbit/s) is from what the sink asks of it (cc-encoder-bitrate: the
 * estimate, or more for a while after a raise): their medians, and the
 * median queue delay (us). */
static void
run_cc (GstElement * tx, guint ms, guint * est, guint * enc_off,
    gint64 * queue, guint * messages)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (tx), "sink");
  GstElement *enc = gst_bin_get_by_name (GST_BIN (tx), "enc");
  GstBus *bus = gst_element_get_bus (tx);
  gint64 t0 = g_get_monotonic_time (), end = t0 + (gint64) ms * 1000;
  GArray *ests = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *offs = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *qs = g_array_new (FALSE, FALSE, sizeof (guint));
  GstMessage *m;

  while (g_get_monotonic_time () < end) {
    while ((m = gst_bus_pop (bus))) {
      const GstStructure *s = gst_message_get_structure (m);
      fail_if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR, "error from %s",
          GST_OBJECT_NAME (GST_MESSAGE_SRC (m)));
      if (s && gst_structure_has_name (s, "uvgrtp-congestion"))
        (*messages)++;
      gst_message_unref (m);
    }
    g_usleep (100000);
    if (end - g_get_monotonic_time () < 3 * G_USEC_PER_SEC) {
      GstStructure *st = NULL;
      guint e, k, q, ask;
      g_object_get (sink, "estimated-bitrate", &e, NULL);
      g_object_get (enc, "bitrate", &k, NULL);
      g_object_get (sink, "stats", &st, NULL);
      q = (guint) MAX (0, g_value_get_int64 (gst_structure_get_value (st,
                  "queue-delay-us")));
      ask = (guint) (g_value_get_uint64 (gst_structure_get_value (st,
                  "cc-encoder-bitrate")) / 1000);
      gst_structure_free (st);
      k = (guint) ABS ((gint) k - (gint) ask);
      g_array_append_val (ests, e);
      g_array_append_val (offs, k);
      g_array_append_val (qs, q);
    }
  }
  g_array_sort (ests, cmp_uint);
  g_array_sort (offs, cmp_uint);
  g_array_sort (qs, cmp_uint);
  fail_unless (ests->len > 10);
  *est = g_array_index (ests, guint, ests->len / 2);
  *enc_off = g_array_index (offs, guint, offs->len / 2);
  *queue = g_array_index (qs, guint, qs->len / 2);
  g_array_free (ests, TRUE);
  g_array_free (offs, TRUE);
  g_array_free (qs, TRUE);
  gst_object_unref (bus);
  gst_object_unref (enc);
  gst_object_unref (sink);
}

GST_START_TEST (test_bottleneck)
{
  gchar *ns = g_strdup_printf ("uvgcc%d", (gint) getpid ());
  gchar *ns_path = g_strdup_printf ("/run/netns/%s", ns);
  gint here, there, port = 6000;
  GstElement *tx, *rx;
  GstStructure *ss;
  guint est = 0, enc_off = 0, messages = 0;
  gint64 queue = 0;

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0) {
    GST_INFO ("needs check's fork mode for its network namespaces: skipped");
    goto out;
  }
#ifdef UNDER_ASAN
  /* a live encoder against the clock: what it checks is timing, which a
   * sanitizer's slowdown distorts; the code it runs, the interop tests
   * above run under the sanitizers too */
  GST_INFO ("under a sanitizer: skipped");
  goto out;
#endif
  /* a failed run (its checks end the process) leaves its namespace: those
   * of runs no longer alive go first */
  sh ("for n in $(ip netns list 2>/dev/null | grep -o '^uvgcc[0-9]*'); do "
      "[ -d /proc/${n#uvgcc} ] || ip netns del $n; done");
  /* here: the sender, v0, the bottleneck on its way out; there: the
   * receiver, v1 */
  if (unshare (CLONE_NEWNET) < 0 || !sh ("ip link set lo up && "
          "ip netns add %s && ip link add v0 type veth peer name v1 && "
          "ip link set v1 netns %s && ip addr add 10.77.0.1/24 dev v0 && "
          "ip link set v0 up && ip -n %s link set lo up && "
          "ip -n %s addr add 10.77.0.2/24 dev v1 && ip -n %s link set v1 up && "
          "tc qdisc add dev v0 root tbf rate 3mbit burst 2kb latency 300ms",
          ns, ns, ns, ns, ns)) {
    GST_INFO ("no network namespaces with veth and tbf here: skipped");
    sh ("ip netns del %s 2>/dev/null", ns);
    goto out;
  }
  here = open ("/proc/self/ns/net", O_RDONLY);
  there = open (ns_path, O_RDONLY);
  fail_unless (here >= 0 && there >= 0);

  /* the receiver's sockets are made in its namespace */
  fail_unless (setns (there, CLONE_NEWNET) == 0);
  rx = launchf ("uvgrtpsrc name=src address=10.77.0.2 port=%d "
      "rtcp-remote-host=10.77.0.1 rtcp-remote-port=%d caps=\"application/x-rtp,"
      "media=video,clock-rate=90000,encoding-name=H264,payload=96,"
      "extmap-5=(string)" URI_TWCC "\" ! fakesink sync=false", port, port + 3);
  play (rx);
  fail_unless (gst_element_get_state (rx, NULL, NULL, 5 * GST_SECOND) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless (setns (here, CLONE_NEWNET) == 0);

  /* snow: x264enc makes whatever bitrate it is told */
  tx = launchf ("videotestsrc is-live=true pattern=snow ! video/x-raw,"
      "width=640,height=360,framerate=30/1 ! x264enc name=enc bitrate=1000 vbv-buf-capacity=120 "
      "tune=zerolatency speed-preset=ultrafast key-int-max=60 ! "
      "uvgrtpsink name=sink host=10.77.0.2 port=%d rtcp-bind-port=%d "
      "rtp-caps=\"application/x-rtp,extmap-5=(string)" URI_TWCC "\"", port,
      port + 3);
  play (tx);
  run_cc (tx, 8000, &est, &enc_off, &queue, &messages);
  GST_INFO ("3 Mbit/s: estimate %u bit/s, x264enc %u kbit/s off, queue %"
      G_GINT64_FORMAT " us, %u messages", est, enc_off, queue, messages);
  /* the medians of the last 3 s: within 10 % above the bottleneck's rate,
   * not far below it */
  fail_unless (est >= 1800000 && est <= 3300000, "estimate %u at 3 Mbit/s",
      est);
  /* the encoder follows without application code */
  fail_unless (enc_off <= est / 1000 / 10, "x264enc %u kbit/s off the "
      "ask (estimate %u bit/s)", enc_off, est);
  fail_unless (queue <= 50000, "standing queue %" G_GINT64_FORMAT " us",
      queue);
  fail_unless (messages >= 1);

  fail_unless (sh ("tc qdisc change dev v0 root tbf rate 1500kbit burst 2kb "
          "latency 300ms"));
  run_cc (tx, 5000, &est, &enc_off, &queue, &messages);
  GST_INFO ("1.5 Mbit/s: estimate %u bit/s, x264enc %u kbit/s off, queue %"
      G_GINT64_FORMAT " us", est, enc_off, queue);
  fail_unless (est >= 900000 && est <= 1650000, "estimate %u at 1.5 Mbit/s",
      est);
  fail_unless (enc_off <= est / 1000 / 10, "x264enc %u kbit/s off the "
      "ask (estimate %u bit/s)", enc_off, est);
  fail_unless (queue <= 50000, "standing queue %" G_GINT64_FORMAT " us",
      queue);
  ss = stats_of (tx, "sink");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  fail_unless (u64 (ss, "ccfb-received") > 100);
  gst_structure_free (ss);

  stop (tx);
  stop (rx);
  close (here);
  close (there);
  sh ("ip netns del %s", ns);
out:
  g_free (ns);
  g_free (ns_path);
}

GST_END_TEST;

static Suite *
congestion_suite (void)
{
  Suite *s = suite_create ("uvgrtp-congestion");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_twcc_feedback_to_rtpbin);
  tcase_add_test (tc, test_twcc_feedback_from_rtpbin);
  tcase_add_test (tc, test_rfc8888);
  tcase_add_test (tc, test_two_receivers);
  tcase_add_test (tc, test_bottleneck);
  return s;
}

GST_CHECK_MAIN (congestion);
