/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The two programs that stream with lib/ alone (examples/urtp-send and
 * examples/urtp-recv, no GStreamer in them), against each other, against
 * GStreamer's stock receiver and against our elements: a real x265 stream
 * (three slices a picture) written to an Annex-B file goes through every
 * pairing; every access unit must arrive with its NAL units byte for byte,
 * and what urtp-recv writes must decode, picture for picture.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>

#include "testutil.h"

#define FRAMES 40

/* Buffers of an appsink named "out" until `want` (0: EOS or timeout). */
static GPtrArray *
pull_all (GstElement * pipeline, guint want, GstClockTime timeout)
{
  GstElement *out = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  GPtrArray *bufs = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GstSample *s;

  while ((want == 0 || bufs->len < want)
      && (s = gst_app_sink_try_pull_sample (GST_APP_SINK (out), timeout))) {
    g_ptr_array_add (bufs, gst_buffer_ref (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  gst_object_unref (out);
  return bufs;
}

static GstElement *
launch (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);

  fail_unless (p != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  return p;
}

/* NAL units of Annex-B bytes (start code 00 00 01; trailing zero bytes
 * belong to no NAL unit), as GBytes, appended to out. */
static void
nal_units (const guint8 * d, gsize size, GPtrArray * out)
{
  gsize i = 0, start = G_MAXSIZE;

  for (; i + 3 <= size; i++) {
    if (d[i] || d[i + 1] || d[i + 2] != 1)
      continue;
    if (start != G_MAXSIZE) {
      gsize e = i;
      while (e > start && d[e - 1] == 0)
        e--;
      g_ptr_array_add (out, g_bytes_new (d + start, e - start));
    }
    start = i + 3;
  }
  if (start != G_MAXSIZE) {
    gsize e = size;
    while (e > start && d[e - 1] == 0)
      e--;
    g_ptr_array_add (out, g_bytes_new (d + start, e - start));
  }
}

static GPtrArray *
buffer_nals (GstBuffer * b)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);
  GstMapInfo m;

  fail_unless (gst_buffer_map (b, &m, GST_MAP_READ));
  nal_units (m.data, m.size, out);
  gst_buffer_unmap (b, &m);
  return out;
}

static void
check_same_nals (GPtrArray * a, GPtrArray * b, const gchar * what)
{
  fail_unless_equals_int (b->len, a->len);
  for (guint k = 0; k < a->len; k++)
    fail_unless (g_bytes_equal (g_ptr_array_index (a, k),
            g_ptr_array_index (b, k)), "%s: NAL unit %u differs", what, k);
}

/* Every access unit of got has exactly the NAL units of sent's. */
static void
check_same_aus (GPtrArray * sent, GPtrArray * got)
{
  fail_unless_equals_int (got->len, sent->len);
  for (guint i = 0; i < sent->len; i++) {
    GPtrArray *a = buffer_nals (g_ptr_array_index (sent, i));
    GPtrArray *b = buffer_nals (g_ptr_array_index (got, i));
    gchar *what = g_strdup_printf ("access unit %u", i);

    check_same_nals (a, b, what);
    g_free (what);
    g_ptr_array_unref (a);
    g_ptr_array_unref (b);
  }
}

/* A real x265 stream, one access unit a buffer; and the same as a file. */
static GPtrArray *
make_stream (gchar ** file)
{
  GstElement *enc = launch ("videotestsrc num-buffers=" G_STRINGIFY (FRAMES)
      " ! video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! "
      "x265enc speed-preset=ultrafast key-int-max=15 log-level=none "
      "option-string=slices=3 ! h265parse ! video/x-h265,"
      "stream-format=byte-stream,alignment=au ! appsink name=out sync=false");
  GPtrArray *sent;
  FILE *f;

  gst_element_set_state (enc, GST_STATE_PLAYING);
  sent = pull_all (enc, 0, 30 * GST_SECOND);
  gst_element_set_state (enc, GST_STATE_NULL);
  gst_object_unref (enc);
  fail_unless_equals_int (sent->len, FRAMES);
  *file = g_build_filename (g_get_tmp_dir (), "urtp-example-test.h265", NULL);
  f = fopen (*file, "wb");
  fail_unless (f != NULL);
  for (guint i = 0; i < sent->len; i++) {
    GstMapInfo m;

    gst_buffer_map (g_ptr_array_index (sent, i), &m, GST_MAP_READ);
    fail_unless (fwrite (m.data, 1, m.size, f) == m.size);
    gst_buffer_unmap (g_ptr_array_index (sent, i), &m);
  }
  fclose (f);
  return sent;
}

/* urtp-send the file to port, paced at 100 frames a second, no parameter
 * sets added (config-interval 0) so that what arrives is the file's
 * bytes. Returns what it printed on stderr. */
static gchar *
run_sender (const gchar * file, gint port, const gchar * sdp_path,
    const gchar * option)
{
  gchar *port_s = g_strdup_printf ("%d", port), *out = NULL, *errs = NULL;
  const gchar *argv[12] = { URTP_SEND_EXE, "--port", port_s, "--fps", "100",
    "--config-interval", "0"
  };
  guint n = 7;
  GError *err = NULL;
  gint status = -1;

  if (sdp_path) {
    argv[n++] = "--sdp";
    argv[n++] = sdp_path;
  }
  if (option)
    argv[n++] = option;
  argv[n++] = file;
  fail_unless (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_DEFAULT,
          NULL, NULL, &out, &errs, &status, &err), "%s",
      err ? err->message : "");
  fail_unless (g_spawn_check_wait_status (status, NULL), "urtp-send: %s",
      errs);
  fail_unless (strstr (errs, G_STRINGIFY (FRAMES) " access units") != NULL,
      "%s", errs);
  g_free (out);
  g_free (port_s);
  return errs;
}

/* urtp-recv on port, writing to a file; started before the sender. */
static GSubprocess *
start_receiver (gint port, gchar ** file, const gchar * option)
{
  gchar *port_s = g_strdup_printf ("%d", port);
  GError *err = NULL;
  GSubprocess *p;

  *file = g_build_filename (g_get_tmp_dir (), "urtp-recv-test.h265", NULL);
  p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &err, URTP_RECV_EXE,
      "--address", "127.0.0.1", "--port", port_s, "--output", *file,
      "--frames", G_STRINGIFY (FRAMES), "--idle-ms", "3000", option, NULL);
  fail_unless (p != NULL, "%s", err ? err->message : "");
  g_free (port_s);
  g_usleep (200 * 1000);        /* bound before anything is sent */
  return p;
}

/* Waits for urtp-recv; checks what it wrote against the stream sent, NAL
 * unit for NAL unit, and that it decodes to every picture. */
static gchar *
finish_receiver (GSubprocess * p, const gchar * file, GPtrArray * sent)
{
  GError *err = NULL;
  gchar *text = NULL, *got = NULL, *desc;
  gsize len;
  GPtrArray *a, *b;
  GstElement *dec;
  GPtrArray *pics;

  fail_unless (g_subprocess_communicate_utf8 (p, NULL, NULL, &text, NULL,
          &err), "%s", err ? err->message : "");
  fail_unless (g_subprocess_get_successful (p), "urtp-recv: %s", text);
  GST_INFO ("urtp-recv: %s", text);
  fail_unless (strstr (text, G_STRINGIFY (FRAMES) " access units") != NULL,
      "%s", text);
  fail_unless (strstr (text, " 0 lost") != NULL, "%s", text);

  a = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint i = 0; i < sent->len; i++) {
    GPtrArray *n = buffer_nals (g_ptr_array_index (sent, i));

    for (guint k = 0; k < n->len; k++)
      g_ptr_array_add (a, g_bytes_ref (g_ptr_array_index (n, k)));
    g_ptr_array_unref (n);
  }
  b = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  fail_unless (g_file_get_contents (file, &got, &len, NULL));
  nal_units ((const guint8 *) got, len, b);
  check_same_nals (a, b, "urtp-recv's file");

  desc = g_strdup_printf ("filesrc location=%s ! h265parse ! avdec_h265 ! "
      "appsink name=out sync=false", file);
  dec = launch (desc);
  gst_element_set_state (dec, GST_STATE_PLAYING);
  pics = pull_all (dec, 0, 10 * GST_SECOND);
  fail_unless_equals_int (pics->len, FRAMES);
  gst_element_set_state (dec, GST_STATE_NULL);
  gst_object_unref (dec);

  g_ptr_array_unref (pics);
  g_ptr_array_unref (a);
  g_ptr_array_unref (b);
  g_unlink (file);
  g_free (desc);
  g_free (got);
  g_object_unref (p);
  return text;
}

/* Pushes the stream into the appsrc src of pipeline tx, 10 ms apart from
 * 0 (the encoder's timestamps carry its offset), and waits for EOS. */
static void
push_all (GstElement * tx, GstElement * src, GPtrArray * sent)
{
  for (guint i = 0; i < sent->len; i++) {
    GstBuffer *b = gst_buffer_copy (g_ptr_array_index (sent, i));

    GST_BUFFER_PTS (b) = i * 10 * GST_MSECOND;
    GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    fail_unless (gst_app_src_push_buffer (GST_APP_SRC (src), b) ==
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_message_unref (gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (tx),
          30 * GST_SECOND, GST_MESSAGE_EOS));
}

/* urtp-send -> udpsrc ! rtph265depay (GStreamer's stock receiver), two of
 * them (--client: one stream to both), and the SDP file it writes. */
GST_START_TEST (test_send_to_stock)
{
  GstElement *rx, *rx2;
  GPtrArray *sent, *got, *got2;
  gchar *file, *sdp_path, *sdp = NULL, *desc, *errs, *client;
  gint port = free_udp_port (), port2;

  while ((port2 = free_udp_port ()) == port);

  sent = make_stream (&file);
  sdp_path = g_build_filename (g_get_tmp_dir (), "urtp-send-test.sdp", NULL);
  g_unlink (sdp_path);
  desc = g_strdup_printf ("udpsrc address=127.0.0.1 port=%d buffer-size=%d "
      "caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H265,payload=96\" ! rtph265depay ! video/x-h265,"
      "stream-format=byte-stream,alignment=au ! appsink name=out sync=false",
      port, 8 << 20);
  rx = launch (desc);
  g_free (desc);
  /* a second receiver of the same packets (urtp_sender_add_client) */
  desc = g_strdup_printf ("udpsrc address=127.0.0.1 port=%d buffer-size=%d "
      "caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H265,payload=96\" ! rtph265depay ! video/x-h265,"
      "stream-format=byte-stream,alignment=au ! appsink name=out sync=false",
      port2, 8 << 20);
  rx2 = launch (desc);
  g_free (desc);
  fail_unless (gst_element_set_state (rx, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_set_state (rx2, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  client = g_strdup_printf ("--client=127.0.0.1:%d", port2);
  errs = run_sender (file, port, sdp_path, client);
  g_free (client);
  got = pull_all (rx, FRAMES, 5 * GST_SECOND);
  got2 = pull_all (rx2, FRAMES, 5 * GST_SECOND);
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_object_unref (rx);
  gst_element_set_state (rx2, GST_STATE_NULL);
  gst_object_unref (rx2);
  check_same_aus (sent, got);
  check_same_aus (sent, got2);
  g_ptr_array_unref (got2);

  /* the SDP names the stream and carries the encoder's parameter sets */
  fail_unless (g_file_get_contents (sdp_path, &sdp, NULL, NULL));
  desc = g_strdup_printf ("m=video %d RTP/AVP 96\r\n", port);
  fail_unless (strstr (sdp, desc) != NULL, "%s", sdp);
  fail_unless (strstr (sdp, "a=rtpmap:96 H265/90000\r\n") != NULL, "%s", sdp);
  fail_unless (strstr (sdp, "profile-id=1;tier-flag=0;") != NULL, "%s", sdp);
  fail_unless (strstr (sdp, ";sprop-vps=") && strstr (sdp, ";sprop-sps=")
      && strstr (sdp, ";sprop-pps="), "%s", sdp);

  g_free (desc);
  g_unlink (file);
  g_unlink (sdp_path);
  g_free (file);
  g_free (sdp_path);
  g_free (sdp);
  g_free (errs);
  g_ptr_array_unref (sent);
  g_ptr_array_unref (got);
}

GST_END_TEST;

/* urtp-send -> urtp-recv: lib/ on both ends, no GStreamer between. */
GST_START_TEST (test_send_to_recv)
{
  GPtrArray *sent;
  gchar *file, *out_file, *errs;
  gint port = free_udp_port ();
  GSubprocess *rx;

  sent = make_stream (&file);
  rx = start_receiver (port, &out_file, NULL);
  errs = run_sender (file, port, NULL, NULL);
  g_free (finish_receiver (rx, out_file, sent));
  g_unlink (file);
  g_free (file);
  g_free (out_file);
  g_free (errs);
  g_ptr_array_unref (sent);
}

GST_END_TEST;

/* urtp-send -> uvgrtpsrc. */
GST_START_TEST (test_send_to_uvgrtpsrc)
{
  GstElement *rx;
  GPtrArray *sent, *got;
  gchar *file, *desc, *errs;
  gint port = free_udp_port ();

  sent = make_stream (&file);
  desc = g_strdup_printf ("uvgrtpsrc address=127.0.0.1 port=%d "
      "encoding-name=H265 ! appsink name=out sync=false", port);
  rx = launch (desc);
  g_free (desc);
  fail_unless (gst_element_set_state (rx, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  errs = run_sender (file, port, NULL, NULL);
  got = pull_all (rx, FRAMES, 5 * GST_SECOND);
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_object_unref (rx);
  check_same_aus (sent, got);
  g_unlink (file);
  g_free (file);
  g_free (errs);
  g_ptr_array_unref (sent);
  g_ptr_array_unref (got);
}

GST_END_TEST;

/* uvgrtpsink -> urtp-recv. */
GST_START_TEST (test_uvgrtpsink_to_recv)
{
  GstElement *tx, *src;
  GPtrArray *sent;
  gchar *file, *out_file, *desc;
  gint port = free_udp_port ();
  GSubprocess *rx;

  sent = make_stream (&file);
  rx = start_receiver (port, &out_file, NULL);
  desc = g_strdup_printf ("appsrc name=in format=time "
      "caps=video/x-h265,stream-format=byte-stream,alignment=au ! "
      "uvgrtpsink host=127.0.0.1 port=%d config-interval=0", port);
  tx = launch (desc);
  g_free (desc);
  src = gst_bin_get_by_name (GST_BIN (tx), "in");
  fail_unless (gst_element_set_state (tx, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  push_all (tx, src, sent);
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (tx);
  g_free (finish_receiver (rx, out_file, sent));
  g_unlink (file);
  g_free (file);
  g_free (out_file);
  g_ptr_array_unref (sent);
}

GST_END_TEST;

/* The SAS a program printed ("... ZRTP secure, SAS xxxx"), or NULL. */
static gchar *
printed_sas (const gchar * text)
{
  const gchar *at = strstr (text, "ZRTP secure, SAS ");

  if (!at)
    return NULL;
  at += strlen ("ZRTP secure, SAS ");
  return g_strndup (at, strcspn (at, "\n"));
}

/* urtp-send --zrtp -> urtp-recv --zrtp: the keys agreed by the two
 * streams of lib/ (urtp.h's zrtp), the same SAS on both ends, every
 * picture decoded. */
GST_START_TEST (test_zrtp_send_to_recv)
{
  GPtrArray *sent;
  gchar *file, *out_file, *errs, *text, *sas_tx, *sas_rx;
  gint port = free_udp_port ();
  GSubprocess *rx;

  sent = make_stream (&file);
  rx = start_receiver (port, &out_file, "--zrtp");
  errs = run_sender (file, port, NULL, "--zrtp");
  text = finish_receiver (rx, out_file, sent);
  sas_tx = printed_sas (errs);
  sas_rx = printed_sas (text);
  fail_unless (sas_tx && sas_rx && strlen (sas_tx) == 4, "%s / %s", errs, text);
  fail_unless_equals_string (sas_rx, sas_tx);
  g_unlink (file);
  g_free (file);
  g_free (out_file);
  g_free (errs);
  g_free (text);
  g_free (sas_tx);
  g_free (sas_rx);
  g_ptr_array_unref (sent);
}

GST_END_TEST;

/* urtp-send --zrtp -> uvgrtpsrc zrtp=true, and uvgrtpsink zrtp=true ->
 * urtp-recv --zrtp: lib/'s streams agree keys with our elements. */
GST_START_TEST (test_zrtp_with_elements)
{
  GstElement *rx, *tx, *src, *el;
  GPtrArray *sent, *got;
  gchar *file, *out_file, *desc, *errs, *text, *sas_tx, *sas_el = NULL;
  gint port = free_udp_port (), state = 0;
  GSubprocess *p;

  sent = make_stream (&file);
  desc = g_strdup_printf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H265 zrtp=true ! appsink name=out sync=false", port);
  rx = launch (desc);
  g_free (desc);
  fail_unless (gst_element_set_state (rx, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  errs = run_sender (file, port, NULL, "--zrtp");
  got = pull_all (rx, FRAMES, 5 * GST_SECOND);
  el = gst_bin_get_by_name (GST_BIN (rx), "src");
  g_object_get (el, "zrtp-sas", &sas_el, NULL);
  gst_object_unref (el);
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_object_unref (rx);
  check_same_aus (sent, got);
  sas_tx = printed_sas (errs);
  fail_unless (sas_tx != NULL, "%s", errs);
  fail_unless_equals_string (sas_el, sas_tx);
  g_free (sas_tx);
  g_free (sas_el);
  g_free (errs);
  g_ptr_array_unref (got);

  port = free_udp_port ();
  p = start_receiver (port, &out_file, "--zrtp");
  desc = g_strdup_printf ("appsrc name=in format=time "
      "caps=video/x-h265,stream-format=byte-stream,alignment=au ! "
      "uvgrtpsink name=sink host=127.0.0.1 port=%d config-interval=0 "
      "zrtp=true", port);
  tx = launch (desc);
  g_free (desc);
  src = gst_bin_get_by_name (GST_BIN (tx), "in");
  el = gst_bin_get_by_name (GST_BIN (tx), "sink");
  fail_unless (gst_element_set_state (tx, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  /* what is pushed before the keys is held back: wait for them */
  for (guint i = 0; i < 1000 && state != 3; i++) {
    g_usleep (10 * 1000);
    g_object_get (el, "zrtp-state", &state, NULL);
  }
  fail_unless_equals_int (state, 3);    /* GST_UVGRTP_ZRTP_STATE_SECURE */
  g_object_get (el, "zrtp-sas", &sas_el, NULL);
  push_all (tx, src, sent);
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_object_unref (el);
  gst_object_unref (src);
  gst_object_unref (tx);
  text = finish_receiver (p, out_file, sent);
  sas_tx = printed_sas (text);
  fail_unless (sas_tx != NULL, "%s", text);
  fail_unless_equals_string (sas_tx, sas_el);

  g_unlink (file);
  g_free (file);
  g_free (out_file);
  g_free (text);
  g_free (sas_tx);
  g_free (sas_el);
  g_ptr_array_unref (sent);
}

GST_END_TEST;

GST_START_TEST (test_help)
{
  const gchar *progs[] = { URTP_SEND_EXE, URTP_RECV_EXE };

  for (guint i = 0; i < G_N_ELEMENTS (progs); i++) {
    gchar *argv[] = { (gchar *) progs[i], (gchar *) "--help", NULL };
    gchar *out = NULL;
    gint status = -1;

    fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
            &out, NULL, &status, NULL));
    fail_unless (g_spawn_check_wait_status (status, NULL));
    fail_unless (g_str_has_prefix (out, "usage: urtp-"), "%s", out);
    g_free (out);
  }
}

GST_END_TEST;

static Suite *
lib_examples_suite (void)
{
  Suite *s = suite_create ("lib_examples");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_help);
  tcase_add_test (tc, test_send_to_stock);
  tcase_add_test (tc, test_send_to_recv);
  tcase_add_test (tc, test_send_to_uvgrtpsrc);
  tcase_add_test (tc, test_uvgrtpsink_to_recv);
#ifdef TEST_HAVE_ZRTP
  tcase_add_test (tc, test_zrtp_send_to_recv);
  tcase_add_test (tc, test_zrtp_with_elements);
#endif
  return s;
}

GST_CHECK_MAIN (lib_examples);
