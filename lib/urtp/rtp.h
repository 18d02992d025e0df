/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtp.h - the RTP fixed header (RFC 3550, section 5.1).
 *
 * Promises:
 *  - urtp_rtp_parse() never reads outside [buf, buf + len) and accepts a packet
 *    only if version, CSRC list, header extension and padding all fit in it.
 *  - urtp_rtp_write() writes exactly urtp_rtp_hdr_size() bytes or fails.
 *  - urtp_seq_extend() turns 16-bit sequence numbers into a 64-bit count that
 *    keeps rising across wrap-around, tolerating reordering of up to 32767.
 * Nothing here allocates.
 */
#ifndef URTP_RTP_H
#define URTP_RTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URTP_RTP_VERSION 2
#define URTP_RTP_HDR_MIN 12
#define URTP_RTP_MAX_CSRC 15

typedef struct urtp_rtp_hdr {
  uint8_t pt;                 /* payload type, 0..127 */
  bool marker;
  bool padding;               /* P bit; parse: set when padding was present */
  uint16_t seq;
  uint32_t ts;
  uint32_t ssrc;
  uint8_t csrc_count;         /* 0..15 */
  uint32_t csrc[URTP_RTP_MAX_CSRC];
  bool has_ext;               /* X bit */
  uint16_t ext_profile;       /* "defined by profile" field */
  const uint8_t *ext_data;    /* parse: points into the packet; write: source */
  size_t ext_len;             /* bytes of extension data, a multiple of 4 */
} urtp_rtp_hdr_t;

typedef struct urtp_rtp_pkt {
  urtp_rtp_hdr_t hdr;
  const uint8_t *payload;     /* points into the parsed buffer */
  size_t payload_len;         /* excludes padding */
  size_t pad_len;             /* padding bytes stripped from the end */
} urtp_rtp_pkt_t;

/* Parses and validates an RTP packet. Returns 0, or -EBADMSG when the
 * packet is malformed (wrong version, lengths that overrun the buffer,
 * padding count 0 or larger than the payload). */
int urtp_rtp_parse(const uint8_t *buf, size_t len, urtp_rtp_pkt_t *out);

/* Size in bytes of the header urtp_rtp_write() would produce. */
size_t urtp_rtp_hdr_size(const urtp_rtp_hdr_t *h);

/* Writes the header. Returns bytes written, -ENOSPC if cap is too small or
 * -EINVAL for an impossible header (pt > 127, csrc_count > 15, ext_len not
 * a multiple of 4 or above 262140). */
int urtp_rtp_write(uint8_t *buf, size_t cap, const urtp_rtp_hdr_t *h);

/* Hot path: the plain 12-byte header (no CSRC, no extension, no padding). */
static inline void urtp_rtp_write_fixed(uint8_t *buf, uint8_t pt, bool marker,
                                        uint16_t seq, uint32_t ts, uint32_t ssrc);

/* Writes RTP padding of n bytes (1..255) at dst: n-1 zeros, then n. The
 * caller sets hdr.padding and counts the bytes in the packet length. */
void urtp_rtp_write_padding(uint8_t *dst, uint8_t n);

/* Fast accessors for a buffer already known to hold >= 12 bytes. */
static inline uint16_t urtp_rtp_peek_seq(const uint8_t *buf);
static inline uint32_t urtp_rtp_peek_ts(const uint8_t *buf);
static inline uint32_t urtp_rtp_peek_ssrc(const uint8_t *buf);
static inline bool urtp_rtp_peek_marker(const uint8_t *buf);

/* Sequence number extension. Zero-initialise before first use. */
typedef struct urtp_seq_ext {
  uint64_t max;               /* highest extended sequence number seen */
  bool started;
} urtp_seq_ext_t;

/* Returns the 64-bit extended value of seq: the one nearest to the highest
 * seen so far. The first value seen is extended to 65536 + seq, so that
 * packets reordered before it stay non-negative. */
uint64_t urtp_seq_extend(urtp_seq_ext_t *e, uint16_t seq);

/* Inline definitions. */

static inline void urtp_rtp_write_fixed(uint8_t *buf, uint8_t pt, bool marker,
                                        uint16_t seq, uint32_t ts, uint32_t ssrc)
{
  buf[0] = URTP_RTP_VERSION << 6;
  buf[1] = (uint8_t)((marker ? 0x80 : 0) | (pt & 0x7f));
  buf[2] = (uint8_t)(seq >> 8);
  buf[3] = (uint8_t)seq;
  buf[4] = (uint8_t)(ts >> 24);
  buf[5] = (uint8_t)(ts >> 16);
  buf[6] = (uint8_t)(ts >> 8);
  buf[7] = (uint8_t)ts;
  buf[8] = (uint8_t)(ssrc >> 24);
  buf[9] = (uint8_t)(ssrc >> 16);
  buf[10] = (uint8_t)(ssrc >> 8);
  buf[11] = (uint8_t)ssrc;
}

static inline uint16_t urtp_rtp_peek_seq(const uint8_t *buf)
{
  return (uint16_t)(buf[2] << 8 | buf[3]);
}

static inline uint32_t urtp_rtp_peek_ts(const uint8_t *buf)
{
  return (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 | (uint32_t)buf[6] << 8 | buf[7];
}

static inline uint32_t urtp_rtp_peek_ssrc(const uint8_t *buf)
{
  return (uint32_t)buf[8] << 24 | (uint32_t)buf[9] << 16 | (uint32_t)buf[10] << 8 | buf[11];
}

static inline bool urtp_rtp_peek_marker(const uint8_t *buf)
{
  return (buf[1] & 0x80) != 0;
}

#endif
