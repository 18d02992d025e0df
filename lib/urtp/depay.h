/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * depay.h - depacketizer: RTP packets in, whole access units out.
 *
 * Accepts every packet type of the formats in pay.h from any conformant
 * sender: single NAL unit packets, STAP-A / AP, FU-A / FU; for H.265 also
 * DONL fields when the session negotiated them (sprop-max-don-diff > 0;
 * they are stripped, transmission order being taken as decoding order).
 * Output is Annex-B with a 4-byte start code before every NAL unit, one
 * buffer per access unit (or the Opus packet, as is).
 *
 * Promises:
 *  - Nothing from the wire is trusted: every length and count is checked
 *    against the bytes the packet holds. Malformed packets, packets of a
 *    foreign payload type or SSRC, PACI packets (H.265), reserved types and
 *    FUs with both S and E set are dropped and counted.
 *  - Never emits a corrupt NAL unit: a NAL unit whose fragments did not all
 *    arrive is dropped. With URTP_LOSS_DROP_AU the whole access unit is
 *    dropped instead; with URTP_LOSS_DROP_NAL it is delivered without the
 *    damaged NAL units and flagged URTP_AU_DAMAGED. An access unit that
 *    follows lost packets counts as damaged too: the lost packets may have
 *    been its first ones.
 *  - Memory is bounded: the reorder window is fixed at creation; an access
 *    unit growing beyond max_au_size is dropped (counted as oversize); at
 *    most URTP_DEPAY_QUEUE finished access units wait for urtp_depay_pop()
 *    and older ones are dropped when it overflows.
 *  - Packets in order are copied once, straight into the access unit.
 *  - With recycle set, access unit buffers are reused: the caller hands each
 *    back with urtp_depay_release() and later access units are assembled in
 *    it, so that a stream does not take fresh memory (page faults, pages
 *    zeroed by the kernel, cache misses) for every access unit.
 */
#ifndef URTP_DEPAY_H
#define URTP_DEPAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "hdrext.h"
#include "reorder.h"

#define URTP_DEPAY_QUEUE 64
#define URTP_DEPAY_DEFAULT_MAX_AU (32u << 20)

typedef enum urtp_loss_policy {
  URTP_LOSS_DROP_AU,    /* drop any access unit that lost a packet */
  URTP_LOSS_DROP_NAL,   /* drop only damaged NAL units; flag the AU */
} urtp_loss_policy_t;

typedef struct urtp_au urtp_au_t;

typedef struct urtp_depay_config {
  urtp_codec_t codec;
  int pt;                   /* expected payload type; -1: any */
  int64_t ssrc;             /* expected SSRC; -1: lock on the first packet */
  size_t reorder_window;    /* packets; 0: no reordering */
  size_t max_packet;        /* largest RTP packet kept for reordering; 0 = 1500 */
  size_t max_au_size;       /* bytes; 0 = URTP_DEPAY_DEFAULT_MAX_AU */
  urtp_loss_policy_t loss_policy;
  bool wait_for_keyframe;   /* after start and after damage, drop until a keyframe */
  bool donl;                /* H.265: DONL/DOND fields present */
  bool recycle;             /* urtp_au_t.data is released with urtp_depay_release() */
  /* Called as each access unit is queued, so that its owner can fill in
   * pts (recvstream.h maps the timestamp then, before a change of source
   * can reset the mapping). Optional. */
  void (*on_au)(void *user, urtp_au_t *au);
  void *user;
} urtp_depay_config_t;

/* Access unit flags. */
enum {
  URTP_AU_KEYFRAME = 1 << 0,  /* holds an IDR / IRAP picture */
  URTP_AU_DISCONT = 1 << 1,   /* packets were lost since the previous AU */
  URTP_AU_DAMAGED = 1 << 2,   /* NAL units of this AU were dropped */
  URTP_AU_NO_MARKER = 1 << 3, /* ended by a new timestamp or a flush, not a marker */
};

struct urtp_au {
  uint8_t *data;            /* the caller owns it: free(), or with recycle
                             * urtp_depay_release() */
  size_t len;
  uint32_t rtp_ts;
  uint64_t first_seq, last_seq; /* extended sequence numbers */
  uint32_t nal_count;
  uint32_t flags;
  uint32_t ssrc;            /* of its first packet */
  uint64_t arrival;         /* when its first packet arrived (push_at's now) */
  uint64_t pts;             /* for the owner's on_au callback; else 0 */
  /* the RTP header extension elements of its packets (profile and data as
   * urtp_rtp_parse gives them; hdrext.h reads the elements): their union,
   * a later packet's element replacing an earlier one's with its ID, as
   * long as they fit in URTP_HDREXT_MAX bytes; ext_len 0: none */
  uint16_t ext_profile;
  uint16_t ext_len;
  uint8_t ext[URTP_HDREXT_MAX];
};

/* Unsupported packets in a row, none usable, that make a stream one this
 * depacketizer cannot read (H.265 PACI, H.264 interleaved mode, reserved
 * types only): an error, not an empty stream. */
#define URTP_DEPAY_UNSUPPORTED_STREAM 64

typedef struct urtp_depay_stats {
  /* Every packet the reorder window delivers in order is counted once in
   * packets, malformed, unsupported or skipped. */
  uint64_t packets;         /* RTP packets whose payload was used */
  uint64_t bytes;           /* their payload bytes */
  uint64_t skipped;         /* fragments of a NAL unit already given up on */
  uint64_t aus;             /* access units delivered */
  uint64_t nals;            /* NAL units delivered */
  uint64_t malformed;       /* not RTP, or payload that breaks the format */
  uint64_t foreign;         /* wrong payload type or SSRC */
  uint64_t unsupported;     /* PACI, reserved types */
  /* unsupported packets since the last one whose payload was used (not
   * summed by those who add stats up: it is the current run) */
  uint64_t unsupported_run;
  uint64_t dropped_nals;    /* NAL units lost to damage */
  uint64_t dropped_aus;     /* access units lost to damage, keyframe wait, queue overflow */
  uint64_t oversize;        /* access units above max_au_size */
  urtp_reorder_stats_t seq; /* lost, duplicates, late, reordered, resyncs */
} urtp_depay_stats_t;

typedef struct urtp_depay urtp_depay_t;

/* Returns NULL on a bad configuration or out of memory. */
urtp_depay_t *urtp_depay_new(const urtp_depay_config_t *cfg);
void urtp_depay_free(urtp_depay_t *d);

/* Offers one datagram. Always consumes it: what cannot be used is counted
 * in the statistics. */
void urtp_depay_push(urtp_depay_t *d, const uint8_t *pkt, size_t len);

/* Offers a packet the caller has parsed (p describes pkt) and whose
 * payload type and SSRC it has checked, that arrived at now. */
void urtp_depay_push_parsed(urtp_depay_t *d, const uint8_t *pkt, size_t len,
                            const urtp_rtp_pkt_t *p, uint64_t now);

/* The same for a datagram that arrived at time now (the caller's monotonic
 * clock and unit), for urtp_depay_expire(). */
void urtp_depay_push_at(urtp_depay_t *d, const uint8_t *pkt, size_t len, uint64_t now);

/* Gives up on missing packets that packets behind them have waited max_wait
 * for (the receiver's latency); later gaps keep waiting. */
void urtp_depay_expire(urtp_depay_t *d, uint64_t now, uint64_t max_wait);

/* When urtp_depay_expire() next has work; UINT64_MAX if nothing waits. */
uint64_t urtp_depay_deadline(const urtp_depay_t *d, uint64_t max_wait);

/* Takes the oldest finished access unit. Returns true if *au was filled. */
bool urtp_depay_pop(urtp_depay_t *d, urtp_au_t *au);

/* Gives up on missing packets (call after a timeout without progress). With
 * end_au the access unit being assembled is finished too (end of stream). */
void urtp_depay_flush(urtp_depay_t *d, bool end_au);

/* The stream restarts (another source, new numbering, or a resume after a
 * pause): gives up every gap, finishes the access unit in progress, and
 * takes the next packet, of any SSRC, as the start of a new numbering,
 * without counting anything in between as lost; the next access unit is
 * flagged DISCONT. */
void urtp_depay_restart(urtp_depay_t *d);

/* Packets waiting for a gap to fill. */
size_t urtp_depay_pending(const urtp_depay_t *d);

/* Finished access units not yet popped (at most URTP_DEPAY_QUEUE: one
 * more drops the oldest). */
size_t urtp_depay_queued(const urtp_depay_t *d);

const urtp_depay_stats_t *urtp_depay_stats(const urtp_depay_t *d);

/* Hands back urtp_au_t.data of a depayloader created with recycle (and only
 * such data; NULL is ignored). Thread-safe, and valid after urtp_depay_free()
 * too: the buffer is then freed. The 8 most recently released buffers are
 * kept, and the next access unit is assembled in the last one released
 * (the likeliest to be in cache); older ones are freed. Its signature fits
 * GDestroyNotify. */
void urtp_depay_release(void *data);

#endif
