/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stream_util.h - what the sending and the receiving stream (urtp.h) both
 * need: the clock, the RTCP port rule, the static SRTP key, ZRTP's
 * endpoint and what it tells. Internal.
 */
#ifndef URTP_STREAM_UTIL_H
#define URTP_STREAM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "urtp/srtp.h"
#include "urtp/urtp.h"

struct urtp_zrtp_ep;

/* The clock of both streams: pts, deadlines and RTCP's schedule. */
static inline uint64_t urtp_stream_mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* RTCP's port (RFC 3550 11): the one given, else the RTP port + 1. */
static inline uint16_t urtp_stream_rtcp_port(uint16_t rtp_port, uint16_t rtcp_port)
{
  return rtcp_port ? rtcp_port : (uint16_t)(rtp_port + 1);
}

/* A static SRTP key given as hex digits and a profile name (NULL: the
 * default) into cfg, its bytes in key. Returns 0, -EINVAL (bad key or
 * name) or -ENOTSUP (no SRTP in this build, or not this profile). */
int urtp_stream_srtp_config(const char *key_hex, const char *profile, urtp_srtp_config_t *cfg,
                            uint8_t key[URTP_SRTP_MAX_KEY_LEN]);

/* ZRTP for a stream (urtp.h's zrtp and zrtp_cache): an endpoint that
 * sends on fd, its thread started. A sender (remote set) starts at once;
 * its thread reads the peer's answers from fd unless thread_reads is
 * false (RTCP's reader hands them over, rtcp_mux). A receiver (remote
 * NULL) answers the first Hello. Returns 0, -ENOTSUP (no ZRTP in this
 * build) or -errno. */
int urtp_stream_zrtp_open(int fd, bool thread_reads, const struct sockaddr *remote,
                          socklen_t remote_len, uint32_t ssrc, const char *cache,
                          struct urtp_zrtp_ep **out);
/* Stops and frees; NULL is fine. */
void urtp_stream_zrtp_close(struct urtp_zrtp_ep *ep);
/* What the stats say of a stream's protection; sas gets ZRTP's SAS. */
urtp_security_t urtp_stream_security(struct urtp_zrtp_ep *ep, bool static_key, char sas[40]);

/* Where the start code before nal (found in [data, nal)) begins: its
 * three bytes, and a fourth zero byte before them. */
static inline size_t urtp_stream_start_code_at(const uint8_t *data, const uint8_t *nal)
{
  size_t at = (size_t)(nal - data) - 3;
  return at > 0 && data[at - 1] == 0 ? at - 1 : at;
}

/* host (a name or address) and port as an address of family (AF_INET or
 * AF_INET6; an IPv4 address on an IPv6 socket in its mapped form).
 * Returns 0, -ENOENT (does not resolve) or -EAFNOSUPPORT. */
int urtp_stream_resolve(const char *host, uint16_t port, int family,
                        struct sockaddr_storage *out);

#endif
