/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pay.h - packetizer: access units in, RTP packets out.
 *
 * H.264 (RFC 6184, packetization-mode 1): single NAL unit, STAP-A, FU-A.
 * H.265 (RFC 7798): single NAL unit, AP (48), FU (49); no DONL, no PACI.
 * H.266 (RFC 9328): single NAL unit, AP (28), FU (29) with the P bit on the
 *   last FU of the last VCL NAL unit of the picture.
 * Opus (RFC 7587): one Opus packet per RTP packet.
 *
 * Promises:
 *  - Payload bytes are never copied: packets reference the caller's NAL
 *    units through iovecs (see batch.h); only headers are written.
 *  - Every packet is at most mtu bytes (RTP header included). A NAL unit that
 *    fits goes alone (or aggregated); one that does not is fragmented into
 *    FUs of equal size, only the last one shorter, so that the socket layer
 *    can send each run with UDP GSO.
 *  - With pad_fragments set, a fragmented NAL unit that is not the last of
 *    the call and whose shortfall (what its last FU lacks of the mtu) is at
 *    most 1/32 of its size gets all FUs of exactly mtu bytes: the last few carry less payload and RTP padding
 *    (RFC 3550, at most 255 bytes each) instead. Then the FUs of consecutive
 *    NAL units are all of one size and a single GSO send can carry packets
 *    of several of them (the benchmark's 4K pictures of 8 slices: 11.4
 *    sends per picture instead of 15.3; docs/benchmarks.md).
 *  - With aggregate set, consecutive NAL units that fit together in one
 *    packet are sent in one aggregation packet; a packet holding a single
 *    NAL unit is always sent as a single NAL unit packet.
 *  - The marker bit is set on the last packet of an access unit.
 *  - Sequence numbers continue across calls; nothing allocates once the
 *    batch and the NAL list have grown to the stream's largest access unit.
 *  - With a header extension block set (urtp_pay_set_hdrext), every packet
 *    of a call carries it after the fixed header (X bit set), each with the
 *    next transport-wide sequence number when the block has one; the mtu
 *    bounds the packet with the block. Without one, packets are as before.
 *  - With contributing sources set (urtp_pay_set_csrcs), every packet lists
 *    them (RFC 3550 5.1, CC), before any extension block.
 */
#ifndef URTP_PAY_H
#define URTP_PAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "batch.h"
#include "codec.h"
#include "hdrext.h"

#define URTP_PAY_DEFAULT_MTU 1400
#define URTP_PAY_MIN_MTU 64

typedef struct urtp_pay_config {
  urtp_codec_t codec;
  uint8_t pt;               /* payload type, 0..127 */
  uint32_t ssrc;
  uint16_t seq_start;       /* sequence number of the first packet */
  size_t mtu;               /* max RTP packet size; 0 = 1400 */
  bool aggregate;           /* use aggregation packets (STAP-A / AP) */
  bool pad_fragments;       /* equal-size FUs through RTP padding (above) */
} urtp_pay_config_t;

typedef struct urtp_pay {
  urtp_pay_config_t cfg;
  const urtp_h26x_desc_t *desc;   /* NULL for Opus */
  uint16_t seq;                   /* next sequence number */
  uint64_t packets, bytes;        /* totals packetized (padding included) */
  uint64_t pad_bytes;             /* RTP padding among those bytes */
  urtp_nal_t *nals;               /* scratch for urtp_pay_annexb() */
  size_t nals_cap;
  const urtp_hdrext_block_t *ext; /* urtp_pay_set_hdrext(); NULL: none */
  uint32_t csrc[15];              /* urtp_pay_set_csrcs() */
  unsigned ncsrc;
  urtp_tw_counter_t *tw_next;
  size_t hlen;                    /* RTP header bytes in this call's packets */
} urtp_pay_t;

/* Returns 0, or -EINVAL for a bad configuration (mtu < 64 or > 65535, pt >
 * 127). */
int urtp_pay_init(urtp_pay_t *p, const urtp_pay_config_t *cfg);
void urtp_pay_destroy(urtp_pay_t *p);

/* The header extension block every packet gets from the next call on (b
 * NULL: none), read at each call: the caller may change it between calls.
 * tw_next: the transport-wide sequence numbers (the next one; shared with
 * whoever else numbers packets of the session, such as retransmissions);
 * needed when b has one. A call whose packets cannot hold b and some
 * payload within the mtu fails with -EMSGSIZE. */
void urtp_pay_set_hdrext(urtp_pay_t *p, const urtp_hdrext_block_t *b, urtp_tw_counter_t *tw_next);

/* The contributing sources every packet lists from the next call on (n 0:
 * none; at most 15, RFC 3550's CC field: more are left out). */
void urtp_pay_set_csrcs(urtp_pay_t *p, const uint32_t *csrc, unsigned n);

/* Packetizes NAL units (without start codes) with RTP timestamp ts,
 * appending the packets to out. end_of_au: the NAL units end an access unit,
 * so the last packet gets the marker bit (and, for H.266, the P bit goes on
 * the last FU of the last VCL NAL unit among them). NAL units shorter than
 * the codec's NAL header are skipped. Returns the number of packets
 * appended, or -ENOMEM. */
int urtp_pay_nals(urtp_pay_t *p, const urtp_nal_t *nals, size_t n, uint32_t ts,
                  bool end_of_au, urtp_batch_t *out);

/* The same for an Annex-B buffer: runs start-code lookup first. */
int urtp_pay_annexb(urtp_pay_t *p, const uint8_t *buf, size_t len, uint32_t ts,
                    bool end_of_au, urtp_batch_t *out);

/* Opus (or any codec sent one frame per packet): one packet holding data.
 * Returns 1, -EMSGSIZE if it does not fit in the MTU, or -ENOMEM. */
int urtp_pay_frame(urtp_pay_t *p, const uint8_t *data, size_t len, uint32_t ts,
                   bool marker, urtp_batch_t *out);

#endif
