/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtx.h - retransmission (RFC 4588): the RTX packet format, and the
 * sender's limiter that keeps retransmissions from multiplying the stream.
 *
 * An RTX packet carries one packet of the media stream again, in a stream
 * of its own (SSRC multiplexing, RFC 4588 section 4): its own payload type
 * (the SDP's apt= ties it to the media's) and SSRC, its own sequence
 * numbers, the original's timestamp, marker, CSRCs and header extension;
 * its payload is the original sequence number (OSN, 2 bytes) followed by
 * the original payload, and the original's padding after it. This is what
 * rtprtxsend sends and rtprtxreceive takes.
 *
 * Promises:
 *  - urtp_rtx_wrap() and urtp_rtx_unwrap() are inverses: unwrapping a
 *    wrapped packet with the media's payload type and SSRC gives back the
 *    original bytes exactly.
 *  - Both read only the bytes given and write only the caller's memory;
 *    every length comes from urtp_rtp_parse(), which checks it first.
 *    Unwrapping works in place: the original packet starts two bytes into
 *    the RTX packet, no payload byte moves.
 *  - The limiter (urtp_rtx_limiter_t) decides per packet, in constant time
 *    and without allocation: a sequence number goes again at most once per
 *    hold time (a NACK repeated by every receiver, or forged, costs one
 *    retransmission), and the bytes retransmitted stay within a token
 *    bucket whose rate the caller gives (a share of the stream's bitrate):
 *    it holds URTP_RTX_BUCKET_NS of that rate (at least one largest
 *    packet) and starts a quarter full, so over any time T no more than
 *    rate x (T + URTP_RTX_BUCKET_NS) goes, whatever is asked.
 *  - One thread at a time.
 */
#ifndef URTP_RTX_H
#define URTP_RTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The RTX packet of original packet orig[0..len) into out: payload type
 * pt, SSRC ssrc, sequence number seq. Returns its length (len + 2),
 * -EBADMSG when orig is not an RTP packet, -ENOSPC when cap is short. */
int urtp_rtx_wrap(const uint8_t *orig, size_t len, uint8_t pt, uint32_t ssrc, uint16_t seq,
                  uint8_t *out, size_t cap);

/* The original packet of the RTX packet pkt[0..len), in place: its header
 * moves two bytes on and takes media_pt, media_ssrc and the OSN; *orig
 * (pkt + 2) and the returned length (len - 2) describe it. Returns
 * -EBADMSG when pkt is not an RTP packet with an OSN. */
int urtp_rtx_unwrap(uint8_t *pkt, size_t len, uint8_t media_pt, uint32_t media_ssrc,
                    uint8_t **orig);

/* The OSN of an RTX packet, without changing it: 0, or -EBADMSG. */
int urtp_rtx_osn(const uint8_t *pkt, size_t len, uint16_t *osn);

/* The RTX payload type both ends take when none is configured: the one
 * after the media's (97 for 96), 96 after 127. */
static inline uint8_t urtp_rtx_default_pt(uint8_t pt)
{
  return pt < 127 ? (uint8_t)(pt + 1) : 96;
}

#define URTP_RTX_RECENT 4096     /* sequence numbers the limiter remembers */
#define URTP_RTX_BUCKET_NS 250000000ull  /* the bucket's depth, in time at its rate */
#define URTP_RTX_BUCKET_MIN 1500 /* ... in bytes, at least */

typedef struct urtp_rtx_recent {
  uint64_t t;                    /* when seq last went */
  uint16_t seq;
  bool used;
} urtp_rtx_recent_t;

typedef struct urtp_rtx_limiter {
  urtp_rtx_recent_t recent[URTP_RTX_RECENT];
  uint64_t tokens;               /* bytes */
  uint64_t last;                 /* when tokens were last added (ns) */
  bool started;
} urtp_rtx_limiter_t;

void urtp_rtx_limiter_init(urtp_rtx_limiter_t *l);

typedef enum urtp_rtx_verdict {
  URTP_RTX_SEND,                 /* counted as sent */
  URTP_RTX_REPEAT,               /* sent within the hold time */
  URTP_RTX_OVER_BUDGET,          /* no tokens for it */
} urtp_rtx_verdict_t;

/* Whether seq was sent within the last hold_ns at now (a repeat): what
 * urtp_rtx_limiter_check would say first, without taking anything. */
bool urtp_rtx_limiter_repeat(const urtp_rtx_limiter_t *l, uint16_t seq, uint64_t now,
                             uint64_t hold_ns);

/* Whether packet seq (bytes long) may be retransmitted at now (ns): not
 * sent within the last hold_ns, and tokens for it at rate_bps bits per
 * second (the bucket: see the promises). */
urtp_rtx_verdict_t urtp_rtx_limiter_check(urtp_rtx_limiter_t *l, uint16_t seq, size_t bytes,
                                          uint64_t now, uint64_t hold_ns, uint64_t rate_bps);

#endif
