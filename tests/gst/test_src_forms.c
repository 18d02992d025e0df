/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_src_forms - uvgrtpsrc's output in the forms rtph264depay and
 * rtph265depay negotiate, on loopback from uvgrtpsink, with x264enc's and
 * x265enc's streams:
 *
 *  1. `uvgrtpsrc ! flvmux ! filesink`, no parser: the file plays, every
 *     picture decoded (flvdemux ! h264parse ! avdec_h264).
 *  2. avc into avdec_h264 while the sender changes resolution: codec_data
 *     follows the new parameter sets (avc carries them nowhere else), so
 *     both halves decode at their own size.
 *  3. avc3 with alignment=nal: one buffer per NAL unit, each length
 *     prefix right, the last of each access unit flagged MARKER, and put
 *     back together they are the sent access units, byte for byte.
 *  4. hvc1 into avdec_h265: every picture decoded.
 */
#include <string.h>

#include <glib/gstdio.h>

#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "rtcputil.h"
#include "streamutil.h"

#define FPS 60
#define FRAMES 30

static Stream big, small, hevc;

static Stream *
stream_of (Stream * st, const gchar * enc, guint w, guint h)
{
  gchar *desc;

  if (st->aus)
    return st;
  desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! "
      "video/x-raw,format=I420,width=%u,height=%u,framerate=%u/1 ! %s ! "
      "appsink name=sink sync=false", FRAMES, w, h, FPS, enc);
  stream_make (st, desc);
  g_free (desc);
  fail_unless_equals_int (st->aus->len, FRAMES);
  return st;
}

#define X264 "x264enc key-int-max=15 tune=zerolatency speed-preset=ultrafast " \
  "! h264parse ! video/x-h264,stream-format=byte-stream,alignment=au"
#define X265 "x265enc key-int-max=15 tune=zerolatency speed-preset=ultrafast " \
  "! h265parse ! video/x-h265,stream-format=byte-stream,alignment=au"

/* Pushes the access units of a and then b (may be NULL) through
 * uvgrtpsink to 127.0.0.1:port, live at FPS, and waits for the end. */
static void
send_streams (gint port, Stream * a, Stream * b)
{
  GstElement *tx = launchf ("appsrc name=in format=time ! uvgrtpsink "
      "host=127.0.0.1 port=%d", port);
  GstElement *in = gst_bin_get_by_name (GST_BIN (tx), "in");
  guint n = 0;

  g_object_set (in, "caps", a->caps, NULL);
  play (tx);
  for (Stream * st = a; st; st = st == a ? b : NULL) {
    for (guint i = 0; i < st->aus->len; i++, n++) {
      GstBuffer *buf = gst_buffer_copy (g_ptr_array_index (st->aus, i));

      GST_BUFFER_PTS (buf) = n * GST_SECOND / FPS;
      GST_BUFFER_DTS (buf) = GST_CLOCK_TIME_NONE;
      GST_BUFFER_DURATION (buf) = GST_SECOND / FPS;
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (in),
              buf), GST_FLOW_OK);
    }
  }
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  gst_object_unref (in);
  wait_eos (tx);
  stop (tx);
}

/* Waits until rx's uvgrtpsrc "src" delivered n access units (10 s). */
static void
wait_delivered (GstElement * rx, guint64 n)
{
  for (gint i = 0; i < 1000; i++) {
    GstStructure *st = stats_of (rx, "src");
    guint64 got = u64 (st, "access-units");

    gst_structure_free (st);
    if (got >= n)
      return;
    g_usleep (10000);
  }
  fail ("fewer than %" G_GUINT64_FORMAT " access units arrived", n);
}

/* Pulls what reaches appsink "out" of p until 500 ms pass without any;
 * counts the decoded pictures of each width. */
static guint
count_width (GPtrArray * samples, gint width)
{
  guint n = 0;

  for (guint i = 0; i < samples->len; i++) {
    GstStructure *s = gst_caps_get_structure (gst_sample_get_caps
        (g_ptr_array_index (samples, i)), 0);
    gint w = 0;

    gst_structure_get_int (s, "width", &w);
    n += w == width;
  }
  return n;
}

static GPtrArray *
pull_samples (GstElement * p)
{
  GstElement *out = gst_bin_get_by_name (GST_BIN (p), "out");
  GPtrArray *got = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_sample_unref);
  GstSample *s;

  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              500 * GST_MSECOND)))
    g_ptr_array_add (got, s);
  gst_object_unref (out);
  return got;
}

GST_START_TEST (test_flvmux_file_plays)
{
  Stream *st = stream_of (&big, X264, 320, 240);
  gint port = free_ports (2);
  gchar *path = g_strdup_printf ("%s/uvgrtp-forms-%d.flv", g_get_tmp_dir (),
      (gint) getpid ());
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H264 ! flvmux ! filesink location=%s", port, path);
  GstElement *dec;
  GPtrArray *pics;

  play (rx);
  send_streams (port, st, NULL);
  wait_delivered (rx, FRAMES);
  gst_element_send_event (rx, gst_event_new_eos ());
  wait_eos (rx);
  stop (rx);

  dec = launchf ("filesrc location=%s ! flvdemux ! h264parse ! avdec_h264 ! "
      "appsink name=out sync=false", path);
  play (dec);
  pics = pull_samples (dec);
  fail_unless_equals_int (count_width (pics, 320), FRAMES);
  fail_unless_equals_int (pics->len, FRAMES);
  g_ptr_array_unref (pics);
  stop (dec);
  g_unlink (path);
  g_free (path);
}

GST_END_TEST;

/* Distinct codec_data that went by the probe. */
static GstPadProbeReturn
on_caps (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  GPtrArray *seen = user;
  GstCaps *caps;
  const GValue *v;

  if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) != GST_EVENT_CAPS)
    return GST_PAD_PROBE_OK;
  gst_event_parse_caps (GST_PAD_PROBE_INFO_EVENT (info), &caps);
  v = gst_structure_get_value (gst_caps_get_structure (caps, 0),
      "codec_data");
  if (v) {
    GstBuffer *cd = gst_value_get_buffer (v);

    if (seen->len == 0 || !bytes_equal (cd,
            g_ptr_array_index (seen, seen->len - 1)))
      g_ptr_array_add (seen, gst_buffer_ref (cd));
  }
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_avc_codec_data_follows)
{
  Stream *a = stream_of (&big, X264, 320, 240);
  Stream *b = stream_of (&small, X264, 160, 128);
  gint port = free_ports (2);
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H264 ! video/x-h264,stream-format=avc ! "
      "identity name=id ! avdec_h264 ! appsink name=out sync=false", port);
  GstElement *id = gst_bin_get_by_name (GST_BIN (rx), "id");
  GstPad *pad = gst_element_get_static_pad (id, "sink");
  GPtrArray *seen = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GPtrArray *pics;

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, on_caps, seen,
      NULL);
  play (rx);
  send_streams (port, a, b);
  pics = pull_samples (rx);
  fail_unless_equals_int (count_width (pics, 320), FRAMES);
  fail_unless_equals_int (count_width (pics, 160), FRAMES);
  fail_unless_equals_int (seen->len, 2);
  g_ptr_array_unref (pics);
  stop (rx);
  g_ptr_array_unref (seen);
  gst_object_unref (pad);
  gst_object_unref (id);
}

GST_END_TEST;

/* Byte by byte: the NAL units of a buffer list start anywhere. */
static guint32
get_be32 (const guint8 * p)
{
  return (guint32) p[0] << 24 | (guint32) p[1] << 16 | (guint32) p[2] << 8 | p[3];
}

static void
put_be32 (guint8 * p, guint32 v)
{
  p[0] = (guint8) (v >> 24);
  p[1] = (guint8) (v >> 16);
  p[2] = (guint8) (v >> 8);
  p[3] = (guint8) v;
}

/* The NAL units of an Annex-B access unit, each after a 4-byte length. */
static GByteArray *
length_prefixed (GstBuffer * au)
{
  GByteArray *out = g_byte_array_new ();
  GstMapInfo m;
  gsize i = 0, start = 0;
  gboolean in = FALSE;

  fail_unless (gst_buffer_map (au, &m, GST_MAP_READ));
  for (;;) {
    gboolean sc = i + 3 <= m.size && m.data[i] == 0 && m.data[i + 1] == 0
        && m.data[i + 2] == 1;

    if (sc || i >= m.size) {
      if (in) {
        gsize end = i;
        guint8 len[4];

        while (end > start && m.data[end - 1] == 0)
          end--;
        put_be32 (len, (guint32) (end - start));
        g_byte_array_append (out, len, 4);
        g_byte_array_append (out, m.data + start, (guint) (end - start));
      }
      if (i >= m.size)
        break;
      in = TRUE;
      start = i += 3;
      continue;
    }
    i++;
  }
  gst_buffer_unmap (au, &m);
  return out;
}

GST_START_TEST (test_avc3_nal_aligned)
{
  Stream *st = stream_of (&big, X264, 320, 240);
  gint port = free_ports (2);
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H264 ! "
      "video/x-h264,stream-format=avc3,alignment=nal ! "
      "appsink name=out sync=false", port);
  GByteArray *au = g_byte_array_new ();
  GstCaps *caps = NULL;
  GPtrArray *got;
  guint aus = 0, nals = 0;

  play (rx);
  send_streams (port, st, NULL);
  got = appsink_pull_all (rx, "out", &caps);
  fail_unless (caps != NULL);
  fail_unless (gst_structure_has_field (gst_caps_get_structure (caps, 0),
          "codec_data"));
  for (guint i = 0; i < got->len; i++) {
    GstBuffer *b = g_ptr_array_index (got, i);
    GstMapInfo m;

    fail_unless (gst_buffer_map (b, &m, GST_MAP_READ));
    fail_unless (m.size > 4 && get_be32 (m.data) == m.size - 4,
        "NAL unit %u: length %u in %u bytes", nals, get_be32 (m.data),
        (guint) m.size);
    g_byte_array_append (au, m.data, (guint) m.size);
    gst_buffer_unmap (b, &m);
    nals++;
    if (GST_BUFFER_FLAG_IS_SET (b, GST_VIDEO_BUFFER_FLAG_MARKER)) {
      GByteArray *want;

      fail_unless (aus < st->aus->len);
      want = length_prefixed (g_ptr_array_index (st->aus, aus));
      fail_unless (au->len == want->len && memcmp (au->data, want->data,
              au->len) == 0, "access unit %u differs", aus);
      g_byte_array_unref (want);
      g_byte_array_set_size (au, 0);
      aus++;
    }
  }
  fail_unless_equals_int (aus, FRAMES);
  fail_unless (nals > aus);     /* the key frames' parameter sets at least */
  fail_unless_equals_int (au->len, 0);
  g_byte_array_unref (au);
  g_ptr_array_unref (got);
  gst_caps_unref (caps);
  stop (rx);
}

GST_END_TEST;

GST_START_TEST (test_hvc1_decodes)
{
  Stream *st = stream_of (&hevc, X265, 320, 240);
  gint port = free_ports (2);
  GstElement *rx = launchf ("uvgrtpsrc name=src address=127.0.0.1 port=%d "
      "encoding-name=H265 ! video/x-h265,stream-format=hvc1 ! avdec_h265 ! "
      "appsink name=out sync=false", port);
  GPtrArray *pics;

  play (rx);
  send_streams (port, st, NULL);
  pics = pull_samples (rx);
  fail_unless_equals_int (count_width (pics, 320), FRAMES);
  fail_unless_equals_int (pics->len, FRAMES);
  g_ptr_array_unref (pics);
  stop (rx);
}

GST_END_TEST;

static Suite *
src_forms_suite (void)
{
  Suite *s = suite_create ("uvgrtpsrc output forms");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_flvmux_file_plays);
  tcase_add_test (tc, test_avc_codec_data_follows);
  tcase_add_test (tc, test_avc3_nal_aligned);
  tcase_add_test (tc, test_hvc1_decodes);
  return s;
}

GST_CHECK_MAIN (src_forms);
