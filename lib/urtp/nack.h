/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nack.h - a receiver's loss tracker for one RTP source: which packets to
 * ask for again with generic NACKs (RFC 4585 6.2.1), and when.
 *
 * The receiver tells it every packet of the followed source as it arrives
 * (urtp_nack_packet), retransmissions included. A gap in the sequence
 * numbers opens an entry for each missing packet. An entry is first asked
 * for once reordering can no longer explain it (`reorder_delay` after the
 * gap was seen), then again each retry interval (the round trip and four
 * times its deviation, at least 1.5 round trips and URTP_NACK_MIN_RETRY:
 * the retransmission had its chance; sooner when a gap in the retransmissions shows that it was
 * lost, urtp_nack_rtx_gap), as long as an answer
 * can still arrive before the entry's deadline (the gap's time +
 * `deadline`: when its access unit must be out), at most `max_retries`
 * times. urtp_nack_due() hands out what is due, in ascending order, as
 * much as one NACK packet carries.
 *
 * The round trip is measured from the answers (a packet asked for once
 * and arriving: Karn's rule, no sample from repeated requests) and
 * smoothed as TCP does (RFC 6298: mean and mean deviation, the first
 * deviation a quarter of the first sample); until then it is
 * `initial_rtt` (or what the caller sets) with a deviation of 1/8, and
 * what was asked meanwhile is asked again as the first sample says.
 *
 * Promises:
 *  - Bounded: at most URTP_NACK_MAX entries; when a gap would overflow
 *    them, the oldest give way (counted). A gap wider than `max_gap` is a
 *    jump (a restart, a forgery, a long outage), not loss: nothing is
 *    asked for, what was pending is dropped, and the jump is counted;
 *    it takes two packets in sequence (RFC 3550 A.1's rule), so that one
 *    stray datagram cannot clear the entries.
 *    Entries leave once answered, or a deadline after they gave up.
 *  - Fast path: a packet in order costs a compare and an add; a late one
 *    a binary search. Nothing allocates.
 *  - Counters (urtp_nack_stats_t) are exact: each missing packet is
 *    counted once as reordered (arrived before being asked for),
 *    recovered (after), late (after giving up), lost (never, once it
 *    leaves), or is still pending.
 *  - One thread at a time; times in ns on the caller's monotonic clock.
 */
#ifndef URTP_NACK_H
#define URTP_NACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URTP_NACK_MAX 4096          /* entries: a large 4K picture lost whole */
#define URTP_NACK_MIN_RETRY 5000000ull /* ns: the retry interval at least */

typedef struct urtp_nack_config {
  uint64_t reorder_delay;           /* ns before the first request; 0: 5 ms */
  uint64_t deadline;                /* ns from the gap to when it is too late;
                                     * 0: 200 ms */
  uint64_t initial_rtt;             /* ns; 0: 40 ms */
  unsigned max_retries;             /* requests per packet; 0: unlimited */
  unsigned max_gap;                 /* wider gaps are jumps; 0: 3000 */
} urtp_nack_config_t;

typedef struct urtp_nack_stats {
  uint64_t missing;                 /* packets found missing (entries opened) */
  uint64_t requests;                /* sequence numbers asked for, retries too */
  uint64_t reordered, recovered, late, lost;
  uint64_t evicted;                 /* gave way for newer ones (in lost too) */
  uint64_t jumps;                   /* gaps wider than max_gap */
  uint64_t fast_retries;            /* asked again at once: urtp_nack_rtx_gap */
  uint64_t rtt;                     /* the round trip in use, ns */
} urtp_nack_stats_t;

typedef struct urtp_nack_entry {
  uint64_t seq;                     /* extended */
  uint64_t next;                    /* when to ask (again); UINT64_MAX: never */
  uint64_t deadline;
  uint64_t asked;                   /* when last asked */
  uint16_t tries;
  bool done;                        /* arrived, or gave up */
  bool gave_up;
} urtp_nack_entry_t;

typedef struct urtp_nack {
  urtp_nack_config_t cfg;
  urtp_nack_entry_t e[URTP_NACK_MAX];
  size_t head, count;               /* ring: ascending seq from head */
  uint64_t highest;                 /* extended, of the newest packet */
  bool started;
  bool probation;                   /* a jump to bad_seq - 1 awaits confirmation */
  uint16_t bad_seq;
  uint64_t earliest;                /* no entry is due before this */
  uint64_t rtt, rttvar;
  bool rtt_measured;
  urtp_nack_stats_t st;
} urtp_nack_t;

void urtp_nack_init(urtp_nack_t *t, const urtp_nack_config_t *cfg);
/* Forgets every entry and the sequence (a new source); counters stay,
 * pending entries are counted lost. */
void urtp_nack_reset(urtp_nack_t *t);

/* Packet seq of the source arrived at now. */
void urtp_nack_packet(urtp_nack_t *t, uint16_t seq, uint64_t now);

/* Whether seq is missing (not arrived, or given up): what a
 * retransmission may fill. */
bool urtp_nack_missing(const urtp_nack_t *t, uint16_t seq);

/* When urtp_nack_due() next has something (UINT64_MAX: nothing pending). */
static inline uint64_t urtp_nack_next(const urtp_nack_t *t)
{
  return t->count ? t->earliest : UINT64_MAX;
}

/* What to ask for at now: up to cap sequence numbers into seqs, ascending,
 * within what one NACK carries (URTP_RTCP_MAX_NACK_PAIRS pairs). Each is
 * counted as requested and scheduled again. Returns how many; call again
 * for more (a burst wider than one NACK). */
unsigned urtp_nack_due(urtp_nack_t *t, uint64_t now, uint16_t *seqs, unsigned cap);

/* A retransmission of seq arrived, and the `lost` retransmissions before
 * it in the RTX stream did not (a gap in the RTX stream's own sequence
 * numbers). A sender answers a NACK in order, so the entries asked for
 * before seq (in an earlier request, or lower in the same one) and still
 * unanswered lost theirs: up to `lost` of them, lowest first, are asked
 * again at once instead of after the retry interval (as TCP retransmits
 * on duplicate acknowledgements instead of waiting for its timer). Call
 * before urtp_nack_packet(seq). */
void urtp_nack_rtx_gap(urtp_nack_t *t, uint16_t seq, unsigned lost, uint64_t now);
/* A round trip learnt elsewhere (RTCP), used until answers measure it. */
void urtp_nack_set_rtt(urtp_nack_t *t, uint64_t rtt);

void urtp_nack_stats(const urtp_nack_t *t, urtp_nack_stats_t *out);

#endif
