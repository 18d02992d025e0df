/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtcputil.h - what the RTCP element tests (test_rtcp, test_srtcp,
 * test_rtp_rs, test_lipsync) share: a run of free loopback ports (RTP and
 * RTCP pairs for both sides) and pipelines from printf-style descriptions.
 */
#ifndef UVGRTP_TEST_RTCPUTIL_H
#define UVGRTP_TEST_RTCPUTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

/* A base port P with P .. P+n-1 free for UDP on 127.0.0.1 (n <= 16). */
static G_GNUC_UNUSED gint
free_ports (gint n)
{
  for (gint attempt = 0; attempt < 50; attempt++) {
    gint base = 20000 + g_random_int_range (0, 2500) * 16, ok = 1;
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

#endif
