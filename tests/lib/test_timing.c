/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp_timing: RTP timestamps mapped to the receiver's clock, against a
 * virtual sender and network whose truth is known: frames leave at e_i
 * (real time), stamped by a sender clock that may run fast or slow, and
 * arrive at e_i + delay + jitter. The mapping must follow the fastest path
 * (e_i + delay) whatever the sender's clock does, for hours.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "urtp/timing.h"

#define MS 1000000ll
#define SEC 1000000000ll

typedef struct net {
  double ppm;               /* sender clock rate error */
  int64_t delay;            /* ns, the fastest path */
  int64_t jitter;           /* ns, uniform on top */
  uint32_t ts0;             /* first RTP timestamp */
  uint64_t rng;
} net_t;

static uint32_t rtp_ts(const net_t *n, int64_t e)
{
  /* what the sender's clock reads at real time e, at 90 kHz */
  double sender_ns = (double)e * (1.0 + n->ppm * 1e-6);
  return n->ts0 + (uint32_t)(int64_t)llround(sender_ns * 90000.0 / 1e9);
}

static uint64_t arrival(net_t *n, int64_t e)
{
  int64_t j = n->jitter ? (int64_t)(tap_rand(&n->rng) % (uint64_t)n->jitter) : 0;
  return (uint64_t)(10 * SEC + e + n->delay + j);
}

/* Runs `seconds` of 30 fps through the mapping; returns the largest
 * |pts - (e + delay)| after the first window, and checks monotony. */
static int64_t run(urtp_timing_t *t, net_t *n, int seconds, bool *monotonic, int64_t *final_err)
{
  int64_t worst = 0;
  uint64_t last = 0;
  *monotonic = true;
  for (int64_t i = 0; i < (int64_t)seconds * 30; i++) {
    int64_t e = i * SEC / 30;
    bool re;
    uint64_t pts = urtp_timing_map(t, rtp_ts(n, e), arrival(n, e), &re);
    int64_t err = (int64_t)pts - (10 * SEC + e + n->delay);
    if (i > 0 && pts <= last)
      *monotonic = false;
    last = pts;
    if (e >= 2 * (int64_t)URTP_TIMING_WINDOW && llabs(err) > worst)
      worst = llabs(err);
    *final_err = err;
  }
  return worst;
}

/* No drift, constant delay plus 10 ms of jitter: presentation follows the
 * fastest path within a fraction of the jitter. */
static void test_jitter_only(void)
{
  urtp_timing_t t;
  net_t n = { .delay = 5 * MS, .jitter = 10 * MS, .ts0 = 12345, .rng = 1 };
  urtp_timing_init(&t, 90000, 0, 0);
  bool mono;
  int64_t fin, worst = run(&t, &n, 60, &mono, &fin);
  CHECK(worst < 1 * MS);
  CHECK(mono);
  CHECK_EQ(t.resets, 0);
}

/* A sender clock 100 ppm fast, then one 100 ppm slow, over a virtual hour
 * each: without skew correction the output would be 360 ms off by the
 * end; with it, it stays within a millisecond or two of the arrivals'
 * fastest path all along. */
static void test_skew_100ppm(void)
{
  for (int sign = -1; sign <= 1; sign += 2) {
    urtp_timing_t t;
    net_t n = { .ppm = 100.0 * sign, .delay = 20 * MS, .jitter = 5 * MS,
                .ts0 = 0xfff00000u, .rng = 9 };
    urtp_timing_init(&t, 90000, 0, 0);
    bool mono;
    int64_t fin, worst = run(&t, &n, 3600, &mono, &fin);
    printf("# %+d ppm: worst %.3f ms, at the end %.3f ms, skew %.1f ms\n", 100 * sign,
           worst / 1e6, fin / 1e6, t.skew / 1e6);
    CHECK(worst < 2 * MS);
    CHECK(llabs(fin) < 2 * MS);
    CHECK(mono);
    CHECK_EQ(t.resets, 0);
    /* and the drift was real: 360 ms over the hour */
    CHECK(llabs(t.skew) > 300 * MS);
  }
}

/* RTP timestamps wrap every 13 hours at 90 kHz; start just before. */
static void test_wrap(void)
{
  urtp_timing_t t;
  net_t n = { .delay = 1 * MS, .ts0 = 0xffffffffu - 90000u * 5 };
  urtp_timing_init(&t, 90000, 0, 0);
  bool mono;
  int64_t fin, worst = run(&t, &n, 20, &mono, &fin);
  CHECK(worst < 1 * MS);
  CHECK(mono);
  CHECK_EQ(t.resets, 0);
}

/* B-frames: timestamps out of order in transmission; once the first
 * forward reference has set the transit estimate, each maps to its own
 * presentation time, exactly its distance from the others. */
static void test_bframes(void)
{
  urtp_timing_t t;
  urtp_timing_init(&t, 90000, 0, 0);
  /* I P B B per group of 3 presentation slots: I0 P3 B1 B2 P6 B4 B5 ... */
  uint64_t pts[60];
  for (int k = 0; k < 60; k++) {
    bool re;
    int f = k == 0 ? 0 : k % 3 == 1 ? k + 2 : k - 1;
    if (f >= 60)
      continue;
    /* decode order k leaves at k/30, stamped with presentation f */
    pts[f] = urtp_timing_map(&t, 1000u + (uint32_t)f * 3000u,
                             (uint64_t)(SEC + k * SEC / 30), &re);
    CHECK(!re);
  }
  for (int f = 4; f < 58; f++)
    CHECK(llabs((int64_t)(pts[f] - pts[f - 1]) - SEC / 30) <= 1);   /* ns rounding */
  /* presented no later than they arrive */
  CHECK(pts[3] <= SEC + SEC / 30);
}

/* New timestamps for the same clock (a sender restarted with a random
 * offset), or a sender that paused: the mapping re-anchors on the access
 * unit that shows it, instead of putting presentation hours away. */
static void test_reanchor(void)
{
  urtp_timing_t t;
  urtp_timing_init(&t, 90000, 0, 0);
  bool re;
  uint64_t p = 0;
  for (int i = 0; i < 30; i++)
    p = urtp_timing_map(&t, 5000u + (uint32_t)i * 3000u, (uint64_t)(SEC + i * SEC / 30), &re);
  CHECK_EQ(p, SEC + 29 * SEC / 30);
  /* restart: timestamps from somewhere else entirely */
  p = urtp_timing_map(&t, 0x9abcdef0u, 2 * SEC, &re);
  CHECK(re);
  CHECK_EQ(p, 2 * SEC);
  p = urtp_timing_map(&t, 0x9abcdef0u + 3000u, 2 * SEC + SEC / 30, &re);
  CHECK(!re);
  CHECK_EQ(p, 2 * SEC + SEC / 30);
  /* the sender paused for 5 s: its timestamps did not move meanwhile */
  p = urtp_timing_map(&t, 0x9abcdef0u + 6000u, 7 * SEC, &re);
  CHECK(re);
  CHECK_EQ(p, 7 * SEC);
  CHECK_EQ(t.resets, 2);
  /* reset() makes the next one anchor without counting */
  urtp_timing_reset(&t);
  p = urtp_timing_map(&t, 77u, 8 * SEC, &re);
  CHECK(!re);
  CHECK_EQ(p, 8 * SEC);
  CHECK_EQ(t.resets, 2);
}

/* Tick counts to nanoseconds: exact, both signs, far beyond a day. */
static void test_ticks(void)
{
  CHECK_EQ(urtp_timing_ticks_to_ns(90000, 90000), SEC);
  CHECK_EQ(urtp_timing_ticks_to_ns(-90000, 90000), -SEC);
  CHECK_EQ(urtp_timing_ticks_to_ns(1, 48000), 20833);
  CHECK_EQ(urtp_timing_ticks_to_ns(90000ll * 86400 * 30, 90000), 86400ll * 30 * SEC);
  CHECK_EQ(urtp_timing_ticks_to_ns(90000ll * 86400 * 30 + 45000, 90000),
           86400ll * 30 * SEC + SEC / 2);
}

int main(void)
{
  TAP_RUN(test_jitter_only);
  TAP_RUN(test_skew_100ppm);
  TAP_RUN(test_wrap);
  TAP_RUN(test_bframes);
  TAP_RUN(test_reanchor);
  TAP_RUN(test_ticks);
  return tap_done();
}
