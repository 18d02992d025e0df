/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reorder.h - puts RTP packets back in sequence order within a bounded window.
 *
 * Packets are offered with their 16-bit sequence number and come out, through
 * a callback, in order of their extended sequence number, each told how many
 * packets were given up as lost just before it.
 *
 * Promises:
 *  - The packet that is next in order is delivered straight from the
 *    caller's buffer, with no copy; only packets that arrive early are
 *    copied into one of `window` preallocated slots.
 *  - Memory is fixed at init (window * slot_size bytes); nothing allocates
 *    afterwards.
 *  - A gap is given up on when a packet arrives `window` or more positions
 *    beyond it, when the packets waiting behind it have waited long enough
 *    (urtp_reorder_expire, with arrival times from urtp_reorder_push_at),
 *    or when the caller flushes. Every sequence number is accounted for
 *    exactly once: delivered, or counted in `lost`.
 *  - A packet whose sequence number was already delivered or is already
 *    stashed is counted as a duplicate and dropped; one that arrives after
 *    its gap was given up on is counted as late and dropped. After
 *    max(window, 8) packets in a row that are more than `window` positions
 *    behind (a sender restart), the window resynchronises on the new
 *    numbering, counting a `resync`.
 *  - window 0 means no reordering: every packet is delivered at once, and
 *    each gap ahead counts as lost immediately.
 */
#ifndef URTP_REORDER_H
#define URTP_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtp.h"

/* Called for every packet that comes out in order. lost_before: packets
 * given up as lost immediately before this one. */
typedef void (*urtp_reorder_deliver_fn)(void *user, const uint8_t *pkt, size_t len,
                                        uint64_t ext_seq, uint64_t lost_before);

typedef struct urtp_reorder_stats {
  uint64_t delivered;
  uint64_t lost;          /* sequence numbers given up on */
  uint64_t duplicates;
  uint64_t late;
  uint16_t last_late;     /* the sequence number of the last late one */
  uint64_t reordered;     /* packets used although one with a higher
                           * sequence number arrived before them (waiting
                           * behind a loss does not count) */
  uint64_t resyncs;
} urtp_reorder_stats_t;

typedef struct urtp_reorder {
  size_t window;          /* slots; 0 = no reordering */
  size_t slot_size;       /* largest packet a slot can hold */
  uint8_t *mem;           /* window * slot_size */
  uint32_t *lens;         /* per slot: 0 = empty */
  size_t stashed;         /* slots in use */
  urtp_seq_ext_t ext;
  uint64_t next;          /* extended seq expected next */
  uint64_t highest;       /* highest extended seq seen */
  bool started;
  size_t late_run;        /* consecutive late packets, for resync */
  uint64_t pending_lost;  /* given up, not yet reported as lost_before */
  uint64_t *hist;         /* delivered (1) or given up (0), per position */
  uint64_t *arrival;      /* per slot: when its packet arrived */
  uint64_t now;           /* arrival time of the packet being pushed */
  uint64_t delivered_at;  /* arrival time of the packet being delivered */
  size_t hist_bits;       /* positions the bitmap covers, a power of two >= 64 */
  urtp_reorder_stats_t stats;
} urtp_reorder_t;

/* Returns 0, -EINVAL (window above 32768 or slot_size 0) or -ENOMEM. */
int urtp_reorder_init(urtp_reorder_t *r, size_t window, size_t slot_size);
void urtp_reorder_destroy(urtp_reorder_t *r);

/* Offers a packet. Packets larger than slot_size that cannot be delivered at
 * once are dropped and counted as lost when their turn comes. */
void urtp_reorder_push(urtp_reorder_t *r, const uint8_t *pkt, size_t len, uint16_t seq,
                       urtp_reorder_deliver_fn deliver, void *user);

/* The same, for a packet that arrived at time now (any monotonic clock; the
 * unit is the caller's). Only needed with urtp_reorder_expire(). */
void urtp_reorder_push_at(urtp_reorder_t *r, const uint8_t *pkt, size_t len, uint16_t seq,
                          uint64_t now, urtp_reorder_deliver_fn deliver, void *user);

/* Gives up on gaps, oldest first, for as long as some packet waiting behind
 * the oldest gap has waited max_wait or more; a gap that opened later keeps
 * its own time. */
void urtp_reorder_expire(urtp_reorder_t *r, uint64_t now, uint64_t max_wait,
                         urtp_reorder_deliver_fn deliver, void *user);

/* When urtp_reorder_expire() will next give up a gap: the oldest waiting
 * packet's arrival plus max_wait; UINT64_MAX when nothing waits. */
uint64_t urtp_reorder_deadline(const urtp_reorder_t *r, uint64_t max_wait);

/* Gives up on every gap: delivers all stashed packets in order. */
void urtp_reorder_flush(urtp_reorder_t *r, urtp_reorder_deliver_fn deliver, void *user);

/* Flushes, then takes the next packet as the start of a new numbering:
 * nothing between the old numbers and the new is counted lost. */
void urtp_reorder_restart(urtp_reorder_t *r, urtp_reorder_deliver_fn deliver, void *user);

/* Packets waiting in slots. */
static inline size_t urtp_reorder_pending(const urtp_reorder_t *r)
{
  return r->stashed;
}

#endif
