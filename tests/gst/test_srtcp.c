/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_srtcp - RTCP of uvgrtpsink and uvgrtpsrc as SRTCP (RFC 3711) on
 * loopback, whenever SRTP is on:
 *  - with each other and a static srtp-key: each side's statistics show
 *    the other's reports (sender reports with CNAME and counts, receiver
 *    reports with a round trip); RTCP in clear from a plain socket, aimed
 *    at either side, is counted bad and changes nothing;
 *  - with GStreamer's stock srtpenc and srtpdec around rtpbin, both ways:
 *    rtpbin's session has our sender report and CNAME (through srtpdec)
 *    and our sink its receiver report (through srtpenc); our source has
 *    rtpbin's sender report (through srtpenc) and rtpbin our report block
 *    (through srtpdec);
 *  - with ZRTP: the elements' reports are protected with the agreed keys
 *    and read on the other side.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "rtcputil.h"

#define MIN_INTERVAL "300000000"        /* ns: reports every few hundred ms */
/* AES-128-ICM key and salt, HMAC-SHA1-80: srtpenc's defaults */
#define KEY "4142434445464748494a4b4c4d4e4f505152535455565758595a31323334"

static const gchar *const H264 =
    "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,"
    "framerate=30/1 ! x264enc tune=zerolatency speed-preset=ultrafast "
    "key-int-max=30 ! video/x-h264,stream-format=byte-stream,alignment=au";

/* Sends one datagram to 127.0.0.1:port from a socket of its own. */
static void
send_to (gint port, const guint8 * data, gsize len)
{
  struct sockaddr_in a = {.sin_family = AF_INET,
    .sin_port = htons ((guint16) port),
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK)
  };
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  fail_unless (fd >= 0);
  fail_unless (sendto (fd, data, len, 0, (struct sockaddr *) &a,
          sizeof a) == (ssize_t) len);
  close (fd);
}

static void
put32 (guint8 * p, guint32 v)
{
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

/* A valid RTCP compound in clear, as someone without the key could send:
 * an SR from `ssrc` (with a report block about `about`, 99 lost) and SDES
 * with CNAME "mallory". Returns its length. */
static gsize
clear_report (guint8 * buf, guint32 ssrc, guint32 about)
{
  guint8 *p = buf;

  p[0] = 0x81;                  /* V=2, one report block */
  p[1] = 200;
  p[2] = 0;
  p[3] = 12;                    /* 13 words */
  put32 (p + 4, ssrc);
  memset (p + 8, 0x11, 20);     /* NTP, RTP time, counts */
  put32 (p + 28, about);
  put32 (p + 32, 99);           /* fraction 0, 99 lost */
  memset (p + 36, 0, 16);
  p += 52;
  p[0] = 0x81;
  p[1] = 202;
  p[2] = 0;
  p[3] = 4;                     /* 5 words: SSRC, 1+1+7, end, pad */
  put32 (p + 4, ssrc);
  p[8] = 1;
  p[9] = 7;
  memcpy (p + 10, "mallory", 7);
  memset (p + 17, 0, 3);
  p += 20;
  return (gsize) (p - buf);
}

/* uvgrtpsink srtp-key -> uvgrtpsrc srtp-key, RTCP both ways (the receiver
 * replies to where the sender's reports come from); then RTCP in clear
 * from elsewhere at each side's RTCP port, naming the real sources. */
GST_START_TEST (test_ours)
{
  gint p = free_ports (6);
  guint srs, rrs, ssrc = 0x1234abcd, src_ssrc = 0;
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d rtcp-bind-port=%d ssrc=%u cname=alice@test srtp-key=" KEY
      " rtcp-min-interval=" MIN_INTERVAL, H264, p, p + 3, ssrc);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "cname=bob@test srtp-key=" KEY " rtcp-min-interval=" MIN_INTERVAL
      " ! fakesink", p);
  GstStructure *ss, *rs;
  guint64 sr0, rr0;
  gint lost;
  guint8 fake[128];
  gsize n;

  run_for (recv, send, 2500, &srs, &rrs);
  ss = stats_of (send, "sink");
  rs = stats_of (recv, "src");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  /* each side verified and read the other's reports; nothing lost */
  check_ours (ss, rs, srs, rrs, 2, "alice@test");
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 0);
  fail_unless_equals_uint64 (u64 (rs, "srtcp-auth-failures"), 0);
  fail_unless_equals_uint64 (u64 (rs, "srtp-auth-failures"), 0);
  fail_unless (gst_structure_get_uint (rs, "ssrc", &src_ssrc));
  fail_unless_equals_int (src_ssrc, ssrc);
  fail_unless (gst_structure_get_int (ss, "packets-lost", &lost));
  fail_unless_equals_int (lost, 0);
  sr0 = u64 (rs, "sr-received");
  rr0 = u64 (ss, "rr-received");
  gst_structure_free (ss);
  gst_structure_free (rs);

  /* a report in clear claiming to be the sender, at the receiver's RTCP
   * port; one claiming a receiver that lost 99, at the sender's */
  n = clear_report (fake, ssrc, 0x5eed);
  send_to (p + 1, fake, n);
  n = clear_report (fake, 0xbad, ssrc);
  send_to (p + 3, fake, n);
  collect_rtcp (recv, send, 300, &srs, &rrs);
  ss = stats_of (send, "sink");
  rs = stats_of (recv, "src");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 1);
  fail_unless_equals_uint64 (u64 (rs, "srtcp-auth-failures") +
      u64 (rs, "srtcp-replays") + u64 (rs, "srtcp-errors"), 1);
  fail_unless_equals_string (gst_structure_get_string (rs, "sender-cname"),
      "alice@test");
  fail_unless_equals_uint64 (u64 (ss, "rtcp-bad"), 1);
  fail_unless_equals_uint64 (u64 (ss, "srtcp-auth-failures") +
      u64 (ss, "srtcp-replays") + u64 (ss, "srtcp-errors"), 1);
  fail_unless (gst_structure_get_int (ss, "packets-lost", &lost));
  fail_unless_equals_int (lost, 0);
  /* and the genuine reports go on */
  fail_unless (u64 (rs, "sr-received") >= sr0);
  fail_unless (u64 (ss, "rr-received") >= rr0);
  gst_structure_free (ss);
  gst_structure_free (rs);
  stop (send);
  stop (recv);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* rtpbin with srtpenc / srtpdec */

/* srtpdec asks for the key of each SSRC it meets (ours, and for RTCP the
 * other side's): the one key of the test. */
static GstCaps *
request_key (GstElement * dec, guint ssrc, gpointer user_data)
{
  GstBuffer *key = gst_buffer_new_allocate (NULL, 30, NULL);
  GstMapInfo m;
  GstCaps *caps;

  gst_buffer_map (key, &m, GST_MAP_WRITE);
  for (guint i = 0; i < 30; i++) {
    gchar hex[3] = { KEY[2 * i], KEY[2 * i + 1], 0 };
    m.data[i] = (guint8) strtoul (hex, NULL, 16);
  }
  gst_buffer_unmap (key, &m);
  caps = gst_caps_new_simple ("application/x-srtp",
      "srtp-key", GST_TYPE_BUFFER, key,
      "srtp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtp-auth", G_TYPE_STRING, "hmac-sha1-80",
      "srtcp-cipher", G_TYPE_STRING, "aes-128-icm",
      "srtcp-auth", G_TYPE_STRING, "hmac-sha1-80", NULL);
  gst_buffer_unref (key);
  return caps;
}

static void
connect_request_key (GstElement * pipeline)
{
  GstElement *dec = gst_bin_get_by_name (GST_BIN (pipeline), "dec");

  fail_unless (dec != NULL);
  g_signal_connect (dec, "request-key", G_CALLBACK (request_key), NULL);
  gst_object_unref (dec);
}

#define SRTP_CAPS(kind) "application/x-" kind ",media=video,clock-rate=90000," \
    "encoding-name=H264,payload=96,srtp-key=(buffer)" KEY ","                \
    "srtp-cipher=aes-128-icm,srtp-auth=hmac-sha1-80,"                         \
    "srtcp-cipher=aes-128-icm,srtcp-auth=hmac-sha1-80"

/* uvgrtpsink (SRTP) -> udpsrc ! srtpdec ! rtpbin, RTCP both ways: our SRTCP
 * through srtpdec into rtpbin, rtpbin's RTCP through srtpenc to our sink. */
GST_START_TEST (test_to_rtpbin)
{
  gint p = free_ports (6);
  guint srs, rrs, ssrc = 0x1234abcd;
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d rtcp-bind-port=%d ssrc=%u cname=alice@test srtp-key=" KEY
      " rtcp-min-interval=" MIN_INTERVAL, H264, p, p + 3, ssrc);
  GstElement *recv = launchf ("rtpbin name=rb srtpdec name=dec "
      "srtpenc name=enc key=" KEY " "
      "udpsrc port=%d caps=\"" SRTP_CAPS ("srtp") "\" ! dec.rtp_sink "
      "dec.rtp_src ! rb.recv_rtp_sink_0 "
      "udpsrc port=%d caps=\"" SRTP_CAPS ("srtcp") "\" ! dec.rtcp_sink "
      "dec.rtcp_src ! rb.recv_rtcp_sink_0 "
      "rb.send_rtcp_src_0 ! enc.rtcp_sink_0 "
      "enc.rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false async=false "
      "rb. ! rtph264depay ! fakesink", p, p + 1, p + 3);
  GstStructure *ss, *sst = NULL, *sdes = NULL;
  GObject *src;
  guint64 rtt;
  gboolean have_sr = FALSE;

  connect_request_key (recv);
  set_rtpbin_interval (recv);
  run_for (recv, send, 3000, &srs, &rrs);
  ss = stats_of (send, "sink");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  fail_unless (u64 (ss, "rr-received") >= 1, "no receiver report from rtpbin");
  fail_unless_equals_uint64 (u64 (ss, "rtcp-bad"), 0);
  fail_unless (gst_structure_get_uint64 (ss, "round-trip-time", &rtt));
  fail_unless (GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND,
      "rtt %" G_GUINT64_FORMAT, rtt);
  fail_unless (rrs >= 1);

  src = rtpbin_source (recv, ssrc, NULL, NULL);
  fail_unless (src != NULL, "rtpbin does not know our SSRC");
  g_object_get (src, "stats", &sst, "sdes", &sdes, NULL);
  GST_INFO ("rtpbin's view of us: %" GST_PTR_FORMAT, sst);
  fail_unless (gst_structure_get_boolean (sst, "have-sr", &have_sr));
  fail_unless (have_sr, "rtpbin has no sender report from us");
  fail_unless (sdes != NULL);
  fail_unless_equals_string (gst_structure_get_string (sdes, "cname"),
      "alice@test");
  gst_structure_free (sdes);
  gst_structure_free (sst);
  g_object_unref (src);
  gst_structure_free (ss);
  stop (send);
  stop (recv);
}

GST_END_TEST;

/* rtph264pay ! rtpbin ! srtpenc -> uvgrtpsrc (SRTP), our receiver reports
 * (SRTCP) through srtpdec into rtpbin. */
GST_START_TEST (test_from_rtpbin)
{
  gint p = free_ports (6);
  guint srs, rrs, ours = 0, theirs = 0;
  GstElement *send = launchf ("rtpbin name=rb srtpenc name=enc key=" KEY " "
      "srtpdec name=dec "
      "%s ! rtph264pay pt=96 config-interval=-1 ! rb.send_rtp_sink_0 "
      "rb.send_rtp_src_0 ! enc.rtp_sink_0 "
      "enc.rtp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false "
      "rb.send_rtcp_src_0 ! enc.rtcp_sink_0 "
      "enc.rtcp_src_0 ! udpsink host=127.0.0.1 port=%d sync=false async=false "
      "udpsrc port=%d caps=\"application/x-srtcp\" ! dec.rtcp_sink "
      "dec.rtcp_src ! rb.recv_rtcp_sink_0", H264, p, p + 1, p + 5);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "srtp-key=" KEY " rtcp-remote-host=127.0.0.1 rtcp-remote-port=%d "
      "rtcp-min-interval=" MIN_INTERVAL " ! fakesink", p, p + 5);
  GstStructure *rs, *st = NULL;
  GObject *src;
  gboolean other = FALSE, have_rb = FALSE;

  connect_request_key (send);
  set_rtpbin_interval (send);
  run_for (send, recv, 3000, &srs, &rrs);
  rs = stats_of (recv, "src");
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  fail_unless (u64 (rs, "sr-received") >= 1, "no sender report from rtpbin");
  fail_unless (strlen (gst_structure_get_string (rs, "sender-cname")) > 0);
  fail_unless (u64 (rs, "rtcp-sent") >= 1);
  fail_unless_equals_uint64 (u64 (rs, "rtcp-bad"), 0);
  fail_unless_equals_uint64 (u64 (rs, "srtp-auth-failures"), 0);
  fail_unless (srs >= 1);
  fail_unless (gst_structure_get_uint (rs, "ssrc", &theirs));

  /* rtpbin knows our receiver (through srtpdec), with our report block */
  src = rtpbin_source (send, theirs, &other, &ours);
  fail_unless (src != NULL);
  g_object_unref (src);
  fail_unless (other, "rtpbin never heard from our receiver");
  src = rtpbin_source (send, ours, NULL, NULL);
  fail_unless (src != NULL);
  g_object_get (src, "stats", &st, NULL);
  GST_INFO ("rtpbin's view of our receiver: %" GST_PTR_FORMAT, st);
  fail_unless (gst_structure_get_boolean (st, "have-rb", &have_rb));
  fail_unless (have_rb, "rtpbin has no report block from us");
  gst_structure_free (st);
  g_object_unref (src);
  gst_structure_free (rs);
  stop (send);
  stop (recv);
}

GST_END_TEST;

#ifdef TEST_HAVE_ZRTP
/* zrtp=true on both: once the agreement is confirmed, each side's reports
 * go out under its key and are read on the other side. Run twice: RTCP on
 * its own ports, then on the RTP port with ZRTP (rtcp-mux), where the
 * sink's RTCP thread reads ZRTP's answers too and hands them over. */
GST_START_TEST (test_zrtp)
{
  gint p = free_ports (6);
  guint srs, rrs;
  const gchar *mux = __i__ ? "true" : "false";
  GstElement *send = launchf ("%s ! uvgrtpsink name=sink host=127.0.0.1 "
      "port=%d cname=alice@test zrtp=true rtcp-mux=%s rtcp-min-interval="
      MIN_INTERVAL, H264, p, mux);
  GstElement *recv = launchf ("uvgrtpsrc name=src port=%d encoding-name=H264 "
      "zrtp=true rtcp-mux=%s rtcp-min-interval=" MIN_INTERVAL " ! fakesink",
      p, mux);
  GstStructure *ss, *rs;

  run_for (recv, send, 4000, &srs, &rrs);
  ss = stats_of (send, "sink");
  rs = stats_of (recv, "src");
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  fail_unless (u64 (rs, "access-units") > 0, "no media: ZRTP did not agree");
  check_ours (ss, rs, srs, rrs, 2, "alice@test");
  fail_unless_equals_uint64 (u64 (rs, "srtcp-auth-failures"), 0);
  fail_unless_equals_uint64 (u64 (ss, "srtcp-auth-failures"), 0);
  gst_structure_free (ss);
  gst_structure_free (rs);
  stop (send);
  stop (recv);
}

GST_END_TEST;
#endif

static Suite *
srtcp_suite (void)
{
  Suite *s = suite_create ("srtcp");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ours);
  tcase_add_test (tc, test_to_rtpbin);
  tcase_add_test (tc, test_from_rtpbin);
#ifdef TEST_HAVE_ZRTP
  tcase_add_loop_test (tc, test_zrtp, 0, 2);
#endif
  return s;
}

GST_CHECK_MAIN (srtcp);
