/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/timing.h"

#include <string.h>

#define NS 1000000000ll

void urtp_timing_init(urtp_timing_t *t, uint32_t clock_rate, uint64_t window, uint64_t max_jump)
{
  memset(t, 0, sizeof(*t));
  t->clock_rate = clock_rate ? clock_rate : 90000;
  t->window = window ? window : URTP_TIMING_WINDOW;
  t->max_jump = max_jump ? max_jump : URTP_TIMING_MAX_JUMP;
}

void urtp_timing_reset(urtp_timing_t *t)
{
  t->started = false;
}

int64_t urtp_timing_ticks_to_ns(int64_t ticks, uint32_t rate)
{
  /* whole seconds and the rest separately: ticks * 1e9 alone overflows
   * after about a day at 90 kHz */
  int64_t q = ticks / rate, r = ticks % rate;
  return q * NS + r * NS / (int64_t)rate;
}

static void anchor(urtp_timing_t *t, int64_t ext, uint64_t arrival)
{
  t->started = true;
  t->base_arrival = arrival;
  t->base_ext = ext;
  t->skew = 0;
  t->win_min = 0;
  t->win_start = arrival;
  t->first_window = true;
}

uint64_t urtp_timing_map(urtp_timing_t *t, uint32_t rtp_ts, uint64_t arrival, bool *reanchored)
{
  *reanchored = false;
  int64_t ext;
  if (!t->started) {
    /* a margin below, so that B-frames before the anchor stay positive */
    ext = ((int64_t)1 << 32) + rtp_ts;
    t->last_ext = ext;
    anchor(t, ext, arrival);
    return arrival;
  }
  ext = t->last_ext + (int32_t)(rtp_ts - (uint32_t)t->last_ext);
  t->last_ext = ext;

  int64_t send = urtp_timing_ticks_to_ns(ext - t->base_ext, t->clock_rate);
  int64_t recv = (int64_t)(arrival - t->base_arrival);
  int64_t delta = recv - send;
  int64_t off = delta - t->skew;
  if (off > (int64_t)t->max_jump || off < -(int64_t)t->max_jump) {
    anchor(t, ext, arrival);
    t->resets++;
    *reanchored = true;
    return arrival;
  }

  if (delta < t->win_min)
    t->win_min = delta;
  /* Moves of less than the dead band are left alone: the timestamps keep
   * their exact distances, and jitter does not shake the output. */
  if (t->first_window && t->skew - t->win_min > URTP_TIMING_DEAD_BAND)
    t->skew = t->win_min;
  if (arrival - t->win_start >= t->window) {
    /* Down at once (transit got shorter: no access unit may be presented
     * later than it arrives), up only as far as the last two windows agree
     * (a sender that stalls for one window is not drift). */
    int64_t est = t->win_min > t->prev_win_min && !t->first_window ? t->prev_win_min
                                                                    : t->win_min;
    int64_t d = est - t->skew;
    if (!t->first_window && (d > URTP_TIMING_DEAD_BAND || d < -URTP_TIMING_DEAD_BAND))
      t->skew += d / 2;
    t->first_window = false;
    t->prev_win_min = t->win_min;
    t->win_min = delta;
    t->win_start = arrival;
  }

  int64_t pts = (int64_t)t->base_arrival + send + t->skew;
  return pts > 0 ? (uint64_t)pts : 0;
}
