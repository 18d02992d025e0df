/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timing.h - RTP time to the receiver's clock: when each access unit is to
 * be presented.
 *
 * The sender stamps access units with RTP timestamps on its own clock; the
 * receiver sees them arrive on its clock. Each timestamp is mapped to the
 * receiver's clock as
 *
 *   pts = base_arrival + (ext_ts - base_ts) / clock_rate + skew
 *
 * where (base_arrival, base_ts) come from one access unit, the first one
 * mapped (or the first after a re-anchoring), and skew follows the
 * smallest transit delay seen: delta = (arrival - base_arrival) -
 * (ext_ts - base_ts) / clock_rate is the delay of an access unit relative
 * to the base one plus whatever the two clocks drifted apart since, and
 * its minimum over a window is the part that is not network jitter
 * (the method of Moon, Skelly and Towsley, as rtpjitterbuffer uses it).
 *
 * Promises:
 *  - RTP timestamps are extended to 64 bits, each to the value nearest the
 *    previous one: wrap-around and B-frame order come out right.
 *  - Within the first window skew is the minimum seen so far; after it,
 *    each window's minimum moves skew half of the way (upwards only as far
 *    as the window before agrees, so that one slow window of a stalling
 *    sender is not taken for drift), so that a sender clock a constant
 *    rate off (100 ppm: 0.36 s an hour) is followed without the output
 *    drifting from the arrivals. skew moves only when
 *    the estimate is more than URTP_TIMING_DEAD_BAND away: in between, the
 *    presentation times keep the exact distances of the RTP timestamps,
 *    and jitter does not shake them. An access unit is presented no later
 *    than its arrival except by that band and what skew lags behind a
 *    falling minimum.
 *  - An access unit whose delta differs from skew by more than max_jump
 *    (new timestamps after a sender restart, a sender that paused, a
 *    timestamp jump) re-anchors the mapping on itself; the caller is told,
 *    and the count is kept.
 *  - Integer nanoseconds (exact for any run length), no allocation.
 * Times are nanoseconds on the caller's clock.
 */
#ifndef URTP_TIMING_H
#define URTP_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#define URTP_TIMING_WINDOW 2000000000ull    /* ns */
#define URTP_TIMING_MAX_JUMP 1000000000ull  /* ns */
#define URTP_TIMING_DEAD_BAND 1000000ll      /* ns */

typedef struct urtp_timing {
  uint32_t clock_rate;
  uint64_t window;          /* ns */
  uint64_t max_jump;        /* ns */
  bool started;
  uint64_t base_arrival;
  int64_t base_ext;
  int64_t last_ext;
  int64_t skew;             /* ns */
  int64_t win_min;          /* smallest delta of the window */
  int64_t prev_win_min;     /* ... of the window before */
  uint64_t win_start;
  bool first_window;
  uint64_t resets;          /* re-anchorings after the first mapping */
} urtp_timing_t;

/* window, max_jump: 0 for the defaults above. */
void urtp_timing_init(urtp_timing_t *t, uint32_t clock_rate, uint64_t window, uint64_t max_jump);

/* The next access unit anchors a new mapping (new source or numbering). */
void urtp_timing_reset(urtp_timing_t *t);

/* Maps an access unit's RTP timestamp; arrival is when its first packet
 * arrived. Sets *reanchored when this access unit re-anchored the mapping
 * (not for the first one after init or reset). */
uint64_t urtp_timing_map(urtp_timing_t *t, uint32_t rtp_ts, uint64_t arrival, bool *reanchored);

/* ticks at rate as nanoseconds (exact, any sign, no overflow for 64-bit
 * tick counts of any realistic length). */
int64_t urtp_timing_ticks_to_ns(int64_t ticks, uint32_t rate);

#endif
