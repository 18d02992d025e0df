/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_dropin_src - uvgrtpsrc where a pipeline or an application had
 * udpsrc ! (rtpjitterbuffer !) depayloader, on real loopback sockets:
 *
 *  1. RTCP ports that hurt no neighbour: two receivers on consecutive
 *     ports, started in either order, each sent to from eight source
 *     ports in turn. Every datagram reaches the element it was sent to,
 *     or the receiver that cannot have its port fails at start naming
 *     `port`; the one that cannot have its RTCP port warns naming
 *     rtcp-port, rtcp-mux and rtcp, and RTCP meant for that port, read on
 *     its neighbour's RTP port, is counted there and changes nothing.
 */
#include <errno.h>
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>

#include "rtcputil.h"

#define PT 96
#define FLOWS 8
#define PER_FLOW 20

/* A receiver of Opus on 127.0.0.1:port, its buffers in appsink "out". */
static GstElement *
opus_receiver (gint port)
{
  return launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=OPUS ! appsink name=out sync=false", port);
}

/* Sends `n` RTP packets of one source from a new socket (a new source
 * port) to 127.0.0.1:port, numbered on from *seq. */
static void
send_flow (gint port, guint32 ssrc, guint16 * seq, guint n)
{
  struct sockaddr_in to = {.sin_family = AF_INET,
    .sin_port = htons ((guint16) port),
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK)
  };
  int fd = socket (AF_INET, SOCK_DGRAM, 0);
  guint8 pkt[12 + 40];

  fail_unless (fd >= 0);
  memset (pkt, 0x5a, sizeof pkt);
  for (guint i = 0; i < n; i++, (*seq)++) {
    guint32 ts = (guint32) * seq * 960;

    pkt[0] = 0x80;
    pkt[1] = PT;
    pkt[2] = (guint8) (*seq >> 8);
    pkt[3] = (guint8) * seq;
    pkt[4] = (guint8) (ts >> 24);
    pkt[5] = (guint8) (ts >> 16);
    pkt[6] = (guint8) (ts >> 8);
    pkt[7] = (guint8) ts;
    pkt[8] = (guint8) (ssrc >> 24);
    pkt[9] = (guint8) (ssrc >> 16);
    pkt[10] = (guint8) (ssrc >> 8);
    pkt[11] = (guint8) ssrc;
    fail_unless (sendto (fd, pkt, sizeof pkt, 0, (struct sockaddr *) &to,
            sizeof to) == sizeof pkt);
  }
  close (fd);
}

/* A sender report of `ssrc` to 127.0.0.1:port, as a sender whose
 * receiver is on port - 1 sends it. */
static void
send_sr (gint port, guint32 ssrc)
{
  struct sockaddr_in to = {.sin_family = AF_INET,
    .sin_port = htons ((guint16) port),
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK)
  };
  guint8 sr[28] = { 0x80, 200, 0, 6 };
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  GST_WRITE_UINT32_BE (sr + 4, ssrc);
  fail_unless (fd >= 0);
  fail_unless (sendto (fd, sr, sizeof sr, 0, (struct sockaddr *) &to,
          sizeof to) == sizeof sr);
  close (fd);
}

/* Pulls buffers from "out" until `n` came or a second passed without one. */
static guint
pull_count (GstElement * p, guint n)
{
  GstElement *out = gst_bin_get_by_name (GST_BIN (p), "out");
  GstSample *s;
  guint got = 0;

  while (got < n && (s = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              GST_SECOND))) {
    gst_sample_unref (s);
    got++;
  }
  gst_object_unref (out);
  return got;
}

/* The first warning or error on p's bus within `timeout`, or NULL. */
static GstMessage *
pop_problem (GstElement * p, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);

  gst_object_unref (bus);
  return m;
}

/* Both on consecutive ports, `upper_first` saying which starts first. */
static void
run_consecutive (gboolean upper_first)
{
  gint base = free_ports (3);
  GstElement *lower = opus_receiver (base), *upper = opus_receiver (base + 1);
  GstElement *starts = upper_first ? upper : lower;
  GstElement *then = upper_first ? lower : upper;
  GstStateChangeReturn ret;
  GstMessage *m;
  GstStructure *st;
  GError *err = NULL;
  gchar *dbg = NULL;
  guint16 seq[2] = { 100, 5000 };

  play (starts);
  ret = gst_element_set_state (then, GST_STATE_PLAYING);
  /* the lower one cannot have base + 1 for RTCP: it warns and runs; or the
   * upper one cannot have its RTP port: it fails */
  fail_unless ((ret == GST_STATE_CHANGE_FAILURE) == !upper_first);
  m = pop_problem (then, 5 * GST_SECOND);

  /* eight flows each, from eight source ports in turn: all arrive */
  for (guint f = 0; f < FLOWS; f++) {
    send_flow (base, 0x1000, &seq[0], PER_FLOW);
    if (upper_first)
      send_flow (base + 1, 0x2000, &seq[1], PER_FLOW);
  }
  fail_unless_equals_int (pull_count (lower, FLOWS * PER_FLOW),
      FLOWS * PER_FLOW);
  st = stats_of (lower, "src");
  fail_unless_equals_uint64 (u64 (st, "packets"), FLOWS * PER_FLOW);
  gst_structure_free (st);
  if (upper_first)
    fail_unless_equals_int (pull_count (upper, FLOWS * PER_FLOW),
        FLOWS * PER_FLOW);

  fail_unless (m != NULL, "no warning or error");
  if (upper_first) {
    fail_unless (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING);
    gst_message_parse_warning (m, &err, &dbg);
    fail_unless (strstr (err->message, "No RTCP") &&
        strstr (err->message, "'rtcp-port'") &&
        strstr (err->message, "'rtcp-mux=true'") &&
        strstr (err->message, "'rtcp=false'"), "%s", err->message);
  } else {
    fail_unless (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    gst_message_parse_error (m, &err, &dbg);
    fail_unless (strstr (err->message, "'port'"), "%s", err->message);
    fail_unless (dbg && strstr (dbg, "'rtcp-port'"), "%s", GST_STR_NULL (dbg));
  }
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (m);

  if (upper_first) {
    /* the lower stream's sender reports its RTCP to base + 1 */
    send_sr (base + 1, 0x1000);
    send_sr (base + 1, 0x1000);
    for (guint i = 0; i < 100; i++) {
      st = stats_of (upper, "src");
      if (u64 (st, "malformed") == 2)
        break;
      gst_structure_free (st);
      st = NULL;
      g_usleep (20000);
    }
    fail_unless (st != NULL, "the reports were not counted");
    fail_unless_equals_uint64 (u64 (st, "packets"), FLOWS * PER_FLOW);
    fail_unless_equals_uint64 (u64 (st, "foreign"), 0);
    gst_structure_free (st);
  }
  stop (lower);
  stop (upper);
}

GST_START_TEST (test_rtcp_ports_upper_first)
{
  run_consecutive (TRUE);
}

GST_END_TEST;

GST_START_TEST (test_rtcp_ports_lower_first)
{
  run_consecutive (FALSE);
}

GST_END_TEST;

static Suite *
dropin_src_suite (void)
{
  Suite *s = suite_create ("dropin_src");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_rtcp_ports_upper_first);
  tcase_add_test (tc, test_rtcp_ports_lower_first);
  return s;
}

GST_CHECK_MAIN (dropin_src);
