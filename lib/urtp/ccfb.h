/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ccfb.h - congestion control feedback on the wire: what a receiver tells
 * a sender about every packet, so that the sender can tell a queue that
 * grows from a path that keeps up. Two formats, both RTCP RTPFB (PT 205):
 *  - transport-wide feedback, FMT 15
 *    (draft-holmer-rmcat-transport-wide-cc-extensions-01, as GStreamer's
 *    rtpsession and libwebrtc send it): packets numbered across the session
 *    by a header extension (hdrext.h), a 24-bit reference time in 64 ms
 *    units, one status per packet in run-length and status-vector chunks,
 *    and arrival deltas of 250 us;
 *  - RFC 8888 feedback, FMT 11: per SSRC, the RTP sequence numbers from
 *    begin_seq, each with a received bit, its ECN bits and its arrival time
 *    as an offset (1/1024 s) before the report's timestamp.
 *
 * Promises:
 *  - Writing covers as many of the given packets as fit the room and the
 *    format (a gap between two arrivals a TWCC delta cannot hold ends a
 *    message), says how many, and never writes past the room given.
 *    Messages end on a 32-bit boundary, zero-filled, without the padding
 *    bit (GStreamer's way), so they may sit anywhere in a compound packet.
 *  - Parsing trusts nothing: every count, chunk and delta is checked
 *    against the bytes held, statuses beyond the packet count are ignored,
 *    reserved symbols and short packets are refused (-EBADMSG) whole.
 *    Trailing zero bytes and the padding bit are both accepted.
 *  - Arrival times are the receiver's clock in microseconds (TWCC: from the
 *    reference time, which wraps every 2^24 x 64 ms, 12.4 days, and is
 *    read sign-extended; RFC 8888: from the report timestamp, 18.2 hours):
 *    only their differences mean anything to the sender, which unwraps.
 *  - No allocation; pure functions over the caller's memory.
 */
#ifndef URTP_CCFB_H
#define URTP_CCFB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtcp.h"               /* URTP_RTCP_RTPFB */

#define URTP_CCFB_FMT_TWCC 15
#define URTP_CCFB_FMT_RFC8888 11

/* One packet, as reported. */
typedef struct urtp_ccfb_pkt {
  uint32_t ssrc;            /* RFC 8888: the stream; TWCC: the media SSRC field */
  uint16_t seq;             /* TWCC: transport-wide; RFC 8888: the stream's RTP seq */
  bool received;
  uint8_t ecn;              /* RFC 8888's two ECN bits; 0 for TWCC */
  int64_t arrival_us;       /* the receiver's clock; when received */
} urtp_ccfb_pkt_t;

/* --- transport-wide feedback (FMT 15) ------------------------------------ */

typedef struct urtp_twcc_info {
  uint32_t sender_ssrc, media_ssrc;
  uint16_t base_seq;
  uint16_t count;           /* packet status count */
  int32_t ref_time;         /* 64 ms units, from the 24-bit field */
  uint8_t fb_count;         /* feedback packet count, for the sender to
                             * notice lost feedback */
} urtp_twcc_info_t;

/* Smallest message: header, base, count, reference time, one chunk. */
#define URTP_TWCC_MIN_LEN 20

/* Packets one message covers at most (a writer's limit, not the
 * format's; a reader takes up to its max). */
#define URTP_TWCC_MAX_PACKETS 2048

/* Writes one message for pkts[0 .. n): consecutive sequence numbers from
 * pkts[0].seq, at least one of them received. The
 * reference time is the first received arrival's, rounded down to 64 ms;
 * arrivals are taken in 250 us steps. *taken says how many of the packets
 * it covers: fewer than n when cap runs out or an arrival is more than
 * 8.19 s after (or 8.19 s before) the previous one, or n is above
 * URTP_TWCC_MAX_PACKETS; the caller writes the rest into the next
 * message. Returns the bytes written, -EINVAL (nothing
 * received among them, sequence numbers not consecutive, n 0), -ENOSPC
 * (cap below URTP_TWCC_MIN_LEN plus the first packet's delta). */
int urtp_twcc_write(uint8_t *out, size_t cap, uint32_t sender_ssrc, uint32_t media_ssrc,
                    uint8_t fb_count, const urtp_ccfb_pkt_t *pkts, size_t n, size_t *taken);

/* Parses one RTCP packet (its 4-byte header first; len at most its
 * length) of transport-wide feedback into info and out[0 .. *n), every
 * status in order of sequence number. Returns 0, -EINVAL if it is not
 * RTPFB FMT 15, -EBADMSG if malformed, -ENOSPC if it reports more than max
 * packets. */
int urtp_twcc_parse(const uint8_t *p, size_t len, urtp_twcc_info_t *info, urtp_ccfb_pkt_t *out,
                    size_t max, size_t *n);

/* --- RFC 8888 feedback (FMT 11) ------------------------------------------ */

/* Arrival time offsets: 1/1024 s; the two highest values are reserved. */
#define URTP_RFC8888_ATO_OVER 0x1ffe  /* more than 8189/1024 s before the report */
#define URTP_RFC8888_ATO_NONE 0x1fff  /* received, time not known */

/* Writes one message for the packets of one SSRC, pkts[0 .. n) with
 * consecutive sequence numbers (n at most 16384), reported at report_us
 * on the receiver's clock (the report timestamp is its compact NTP form:
 * seconds and 1/65536 s, 32 bits). *taken as for urtp_twcc_write (cap).
 * Returns the bytes written, -EINVAL, -ENOSPC. */
int urtp_rfc8888_write(uint8_t *out, size_t cap, uint32_t sender_ssrc, uint64_t report_us,
                       const urtp_ccfb_pkt_t *pkts, size_t n, size_t *taken);

/* Parses one RTCP packet of RFC 8888 feedback (every SSRC block) into
 * out[0 .. *n); arrival_us is the report time less the offset, the report
 * time being the timestamp as microseconds (its 32 bits wrap every 18.2
 * hours: only differences between reports mean anything). Packets
 * received over range or without a time have received set and arrival_us
 * INT64_MIN. *report_us gets the report time. Returns 0, -EINVAL (not
 * RTPFB FMT 11), -EBADMSG, -ENOSPC. */
int urtp_rfc8888_parse(const uint8_t *p, size_t len, uint32_t *sender_ssrc, uint64_t *report_us,
                       urtp_ccfb_pkt_t *out, size_t max, size_t *n);

#endif
