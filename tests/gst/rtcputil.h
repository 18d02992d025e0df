/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtcputil.h - what the RTCP element tests (test_rtcp, test_srtcp,
 * test_rtp_rs, test_lipsync) share: a run of free loopback ports (RTP and
 * RTCP pairs for both sides), pipelines from printf-style descriptions,
 * the elements' statistics and uvgrtp-rtcp messages, and rtpbin's session.
 */
#ifndef UVGRTP_TEST_RTCPUTIL_H
#define UVGRTP_TEST_RTCPUTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

/* The lowest port the kernel hands out to sockets bound to port 0. */
static gint
ephemeral_low (void)
{
  gchar *text = NULL;
  gint low = 32768;

  if (g_file_get_contents ("/proc/sys/net/ipv4/ip_local_port_range", &text,
          NULL, NULL))
    low = atoi (text);
  g_free (text);
  return low > 12000 ? low : 32768;
}

/* A base port P with P .. P+n-1 free for UDP on 127.0.0.1 (n <= 16), below
 * the ephemeral range: a socket bound to port 0 later (a relay's, a
 * sink's, another test's) cannot take one of them between this check and
 * the pipeline's bind. */
static G_GNUC_UNUSED gint
free_ports (gint n)
{
  gint blocks = (ephemeral_low () - 10000) / 16;

  for (gint attempt = 0; attempt < 50; attempt++) {
    gint base = 10000 + g_random_int_range (0, blocks) * 16, ok = 1;
    for (gint k = 0; k < n && ok; k++) {
      struct sockaddr_in a = {.sin_family = AF_INET,
        .sin_port = htons ((guint16) (base + k)),
        .sin_addr.s_addr = htonl (INADDR_LOOPBACK)
      };
      int fd = socket (AF_INET, SOCK_DGRAM, 0);
      ok = fd >= 0 && bind (fd, (struct sockaddr *) &a, sizeof a) == 0;
      if (fd >= 0)
        close (fd);
    }
    if (ok)
      return base;
  }
  fail ("no free ports");
  return 0;
}

static GstElement *launchf (const gchar * fmt, ...) G_GNUC_PRINTF (1, 2);

/* gst_parse_launch of the formatted description; fails the test if it
 * does not build. */
static G_GNUC_UNUSED GstElement *
launchf (const gchar * fmt, ...)
{
  GError *err = NULL;
  GstElement *p;
  gchar *desc;
  va_list ap;

  va_start (ap, fmt);
  desc = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL && err == NULL, "%s: %s", desc, err ? err->message :
      "");
  g_free (desc);
  return p;
}

/* Waits `ms` (the pipelines playing; b may be NULL), collecting "uvgrtp-rtcp" messages
 * of each type; fails on an error message. */
static G_GNUC_UNUSED void
collect_rtcp (GstElement * a, GstElement * b, guint ms, guint * srs,
    guint * rrs)
{
  GstBus *bus[2] = { gst_element_get_bus (a), b ? gst_element_get_bus (b) :
        NULL
  };
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  *srs = *rrs = 0;
  while (g_get_monotonic_time () < end) {
    for (guint i = 0; i < 2 && bus[i]; i++) {
      GstMessage *m;
      while ((m = gst_bus_pop (bus[i]))) {
        const GstStructure *s = gst_message_get_structure (m);
        if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
          GError *e;
          gst_message_parse_error (m, &e, NULL);
          fail ("error from %s: %s", GST_OBJECT_NAME (GST_MESSAGE_SRC (m)),
              e->message);
        }
        if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT && s
            && gst_structure_has_name (s, "uvgrtp-rtcp")) {
          const gchar *t = gst_structure_get_string (s, "type");
          if (g_strcmp0 (t, "sr") == 0)
            (*srs)++;
          else if (g_strcmp0 (t, "rr") == 0)
            (*rrs)++;
        }
        gst_message_unref (m);
      }
    }
    g_usleep (20000);
  }
  for (guint i = 0; i < 2; i++)
    if (bus[i])
      gst_object_unref (bus[i]);
}

static G_GNUC_UNUSED void
play (GstElement * p)
{
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
}

static G_GNUC_UNUSED void
stop (GstElement * p)
{
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
}

/* Plays a, then b (may be NULL), for `ms`, collecting uvgrtp-rtcp
 * messages (collect_rtcp). */
static G_GNUC_UNUSED void
run_for (GstElement * a, GstElement * b, guint ms, guint * srs, guint * rrs)
{
  play (a);
  if (b)
    play (b);
  collect_rtcp (a, b, ms, srs, rrs);
}

static G_GNUC_UNUSED GstStructure *
stats_of (GstElement * pipeline, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), name);
  GstStructure *st = NULL;

  fail_unless (e != NULL);
  g_object_get (e, "stats", &st, NULL);
  gst_object_unref (e);
  fail_unless (st != NULL);
  return st;
}

static G_GNUC_UNUSED guint64
u64 (const GstStructure * s, const gchar * f)
{
  guint64 v = 0;
  fail_unless (gst_structure_get_uint64 (s, f, &v), "no %s", f);
  return v;
}

/* The rtpbin session's source with this SSRC, or NULL. */
static G_GNUC_UNUSED GObject *
rtpbin_source (GstElement * pipeline, guint ssrc, gboolean * found_other,
    guint * other_ssrc)
{
  GstElement *rb = gst_bin_get_by_name (GST_BIN (pipeline), "rb");
  GObject *session = NULL, *ret = NULL;
  GValueArray *arr = NULL;

  fail_unless (rb != NULL);
  g_signal_emit_by_name (rb, "get-internal-session", 0, &session);
  fail_unless (session != NULL);
  /* rtpsession's "sources" is a GValueArray, deprecated in GLib */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS;
  g_object_get (session, "sources", &arr, NULL);
  for (guint i = 0; arr && i < arr->n_values; i++) {
    GObject *src = g_value_get_object (g_value_array_get_nth (arr, i));
    guint s;
    gboolean internal;
    g_object_get (src, "ssrc", &s, "is-validated", &internal, NULL);
    if (s == ssrc)
      ret = g_object_ref (src);
    else if (found_other) {
      *found_other = TRUE;
      *other_ssrc = s;
    }
  }
  if (arr)
    g_value_array_free (arr);
  G_GNUC_END_IGNORE_DEPRECATIONS;
  g_object_unref (session);
  gst_object_unref (rb);
  return ret;
}

static G_GNUC_UNUSED void
set_rtpbin_interval (GstElement * pipeline)
{
  GstElement *rb = gst_bin_get_by_name (GST_BIN (pipeline), "rb");
  GObject *session = NULL;

  g_signal_emit_by_name (rb, "get-internal-session", 0, &session);
  if (session) {
    g_object_set (session, "rtcp-min-interval", (guint64) 300 * GST_MSECOND,
        NULL);
    g_object_unref (session);
  }
  gst_object_unref (rb);
}

/* Our sink (stats ss) -> our source (stats rs), reports both ways: the
 * receiver has at least n sender reports with the sender's CNAME and sent
 * n of its own; the sender has at least n receiver reports, none refused,
 * with a round trip of loopback; at least n messages of each kind. */
static G_GNUC_UNUSED void
check_ours (const GstStructure * ss, const GstStructure * rs, guint srs,
    guint rrs, guint n, const gchar * cname)
{
  guint64 rtt;

  fail_unless (u64 (rs, "sr-received") >= n);
  fail_unless_equals_string (gst_structure_get_string (rs, "sender-cname"),
      cname);
  fail_unless (u64 (rs, "rtcp-sent") >= n);
  fail_unless (srs >= n, "%u sr messages", srs);
  fail_unless (u64 (ss, "rr-received") >= n);
  fail_unless (u64 (ss, "rtcp-sent") >= n);
  fail_unless_equals_uint64 (u64 (ss, "rtcp-bad"), 0);
  fail_unless (gst_structure_get_uint64 (ss, "round-trip-time", &rtt));
  fail_unless (GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND,
      "rtt %" G_GUINT64_FORMAT, rtt);
  fail_unless (rrs >= n, "%u rr messages", rrs);
}

#endif
