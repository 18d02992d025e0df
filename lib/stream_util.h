/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stream_util.h - what the sending and the receiving stream (urtp.h) both
 * need: the clock, the RTCP port rule, the static SRTP key. Internal.
 */
#ifndef URTP_STREAM_UTIL_H
#define URTP_STREAM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "urtp/srtp.h"

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

/* Where the start code before nal (found in [data, nal)) begins: its
 * three bytes, and a fourth zero byte before them. */
static inline size_t urtp_stream_start_code_at(const uint8_t *data, const uint8_t *nal)
{
  size_t at = (size_t)(nal - data) - 3;
  return at > 0 && data[at - 1] == 0 ? at - 1 : at;
}

#endif
