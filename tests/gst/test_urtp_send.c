/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * examples/urtp-send (lib/ alone, no GStreamer) against GStreamer's stock
 * receiver: a real x265 stream written to an Annex-B file, streamed by the
 * example into `udpsrc ! rtph265depay`; every access unit must arrive with
 * its NAL units byte for byte, and the SDP file must describe the stream.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>

#include "testutil.h"

#define FRAMES 40

/* Runs desc (ending in "appsink name=out") to EOS and returns its buffers
 * (appsink's sample buffers, referenced). */
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

/* NAL units of an Annex-B buffer (start code 00 00 01; trailing zero bytes
 * belong to no NAL unit), as GBytes. */
static GPtrArray *
nal_units (GstBuffer * b)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);
  GstMapInfo m;
  gsize i = 0, start = G_MAXSIZE;

  fail_unless (gst_buffer_map (b, &m, GST_MAP_READ));
  for (; i + 3 <= m.size; i++) {
    if (m.data[i] || m.data[i + 1] || m.data[i + 2] != 1)
      continue;
    if (start != G_MAXSIZE) {
      gsize e = i;
      while (e > start && m.data[e - 1] == 0)
        e--;
      g_ptr_array_add (out, g_bytes_new (m.data + start, e - start));
    }
    start = i + 3;
  }
  if (start != G_MAXSIZE) {
    gsize e = m.size;
    while (e > start && m.data[e - 1] == 0)
      e--;
    g_ptr_array_add (out, g_bytes_new (m.data + start, e - start));
  }
  gst_buffer_unmap (b, &m);
  return out;
}

GST_START_TEST (test_urtp_send_x265_file)
{
  GError *err = NULL;
  GstElement *enc, *rx;
  GPtrArray *sent, *got;
  gchar *file, *sdp_path, *sdp = NULL, *desc, *port_s, *out = NULL, *errs = NULL;
  gint port = free_udp_port (), status = -1;
  FILE *f;

  /* a real encoder's stream, one access unit per buffer, to a file */
  enc = gst_parse_launch ("videotestsrc num-buffers=" G_STRINGIFY (FRAMES)
      " ! video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! x265enc "
      "speed-preset=ultrafast key-int-max=15 ! h265parse ! video/x-h265,"
      "stream-format=byte-stream,alignment=au ! appsink name=out sync=false",
      &err);
  fail_unless (enc != NULL && err == NULL);
  gst_element_set_state (enc, GST_STATE_PLAYING);
  sent = pull_all (enc, 0, 30 * GST_SECOND);
  gst_element_set_state (enc, GST_STATE_NULL);
  gst_object_unref (enc);
  fail_unless_equals_int (sent->len, FRAMES);
  file = g_build_filename (g_get_tmp_dir (), "urtp-send-test.h265", NULL);
  sdp_path = g_build_filename (g_get_tmp_dir (), "urtp-send-test.sdp", NULL);
  g_unlink (sdp_path);
  f = fopen (file, "wb");
  fail_unless (f != NULL);
  for (guint i = 0; i < sent->len; i++) {
    GstMapInfo m;
    gst_buffer_map (g_ptr_array_index (sent, i), &m, GST_MAP_READ);
    fail_unless (fwrite (m.data, 1, m.size, f) == m.size);
    gst_buffer_unmap (g_ptr_array_index (sent, i), &m);
  }
  fclose (f);

  /* GStreamer's stock receiver */
  desc = g_strdup_printf ("udpsrc address=127.0.0.1 port=%d buffer-size=%d "
      "caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H265,payload=96\" ! rtph265depay ! video/x-h265,"
      "stream-format=byte-stream,alignment=au ! appsink name=out sync=false",
      port, 8 << 20);
  rx = gst_parse_launch (desc, &err);
  g_free (desc);
  fail_unless (rx != NULL && err == NULL);
  fail_unless (gst_element_set_state (rx, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);

  /* the example, paced at 100 frames a second; no parameter sets added
   * (config-interval 0), so that what arrives is the file's bytes */
  port_s = g_strdup_printf ("%d", port);
  {
    gchar *argv[] = { (gchar *) URTP_SEND_EXE, (gchar *) "--port", port_s,
      (gchar *) "--fps", (gchar *) "100", (gchar *) "--config-interval",
      (gchar *) "0", (gchar *) "--sdp", sdp_path, file, NULL
    };
    fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
            &out, &errs, &status, &err), "%s", err ? err->message : "");
  }
  GST_INFO ("urtp-send: %s", errs);
  fail_unless (g_spawn_check_wait_status (status, NULL), "urtp-send: %s",
      errs);
  fail_unless (strstr (errs, G_STRINGIFY (FRAMES) " access units") != NULL,
      "%s", errs);

  got = pull_all (rx, FRAMES, 5 * GST_SECOND);
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_object_unref (rx);
  fail_unless_equals_int (got->len, FRAMES);
  for (guint i = 0; i < FRAMES; i++) {
    GPtrArray *a = nal_units (g_ptr_array_index (sent, i));
    GPtrArray *b = nal_units (g_ptr_array_index (got, i));

    fail_unless_equals_int (b->len, a->len);
    for (guint k = 0; k < a->len; k++)
      fail_unless (g_bytes_equal (g_ptr_array_index (a, k),
              g_ptr_array_index (b, k)), "access unit %u, NAL unit %u", i, k);
    g_ptr_array_unref (a);
    g_ptr_array_unref (b);
  }

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
  g_free (port_s);
  g_free (out);
  g_free (errs);
  g_ptr_array_unref (sent);
  g_ptr_array_unref (got);
}

GST_END_TEST;

GST_START_TEST (test_urtp_send_help)
{
  gchar *argv[] = { (gchar *) URTP_SEND_EXE, (gchar *) "--help", NULL };
  gchar *out = NULL;
  gint status = -1;

  fail_unless (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
          &out, NULL, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL));
  fail_unless (g_str_has_prefix (out, "usage: urtp-send"), "%s", out);
  g_free (out);
}

GST_END_TEST;

static Suite *
urtp_send_suite (void)
{
  Suite *s = suite_create ("urtp_send");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_urtp_send_help);
  tcase_add_test (tc, test_urtp_send_x265_file);
  return s;
}

GST_CHECK_MAIN (urtp_send);
