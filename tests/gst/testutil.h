/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * testutil.h - small helpers the element tests share: a free UDP port on
 * loopback, and the CRC-32C that ZRTP packets end with (written here
 * independently of lib/, so that tests forging or tampering with packets
 * do not rely on the code they test). Header-only; include after
 * <gst/check/gstcheck.h>.
 */
#ifndef UVGRTP_TEST_UTIL_H
#define UVGRTP_TEST_UTIL_H

#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

/* A UDP port on 127.0.0.1 that was free a moment ago. */
static inline guint16
free_udp_port (void)
{
  struct sockaddr_in a;
  socklen_t alen = sizeof a;
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  fail_unless (fd >= 0);
  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (getsockname (fd, (struct sockaddr *) &a, &alen) == 0);
  close (fd);
  return ntohs (a.sin_port);
}

/* CRC-32C (reflected) as RFC 6189 packets carry it. */
static inline guint32
zrtp_crc32c (const guint8 * p, gsize len)
{
  guint32 c = 0xffffffffu;

  for (gsize i = 0; i < len; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
  }
  return ~c;
}

/* Rewrites the CRC at the end of a ZRTP packet of len bytes (least
 * significant byte first), so that a change made to it is caught by the
 * protocol and not by the CRC. */
static inline void
zrtp_fix_crc (guint8 * p, gsize len)
{
  guint32 c = zrtp_crc32c (p, len - 4);

  p[len - 4] = (guint8) c;
  p[len - 3] = (guint8) (c >> 8);
  p[len - 2] = (guint8) (c >> 16);
  p[len - 1] = (guint8) (c >> 24);
}

#endif
