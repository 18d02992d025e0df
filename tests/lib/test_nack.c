/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_nack - the receiver's loss tracker (lib/urtp/nack.h) on a virtual
 * clock: when each missing packet is asked for, how often, when it is
 * given up, and that every missing packet is accounted for exactly once.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "urtp/nack.h"
#include "urtp/rtcp.h"

#define MS 1000000ull

static urtp_nack_t t;           /* large: static */
static uint16_t seqs[2048];

/* missing == reordered + recovered + late + lost + still pending */
static uint64_t pending(void)
{
  uint64_t n = 0;
  for (size_t i = 0; i < t.count; i++) {
    const urtp_nack_entry_t *e = &t.e[(t.head + i) % URTP_NACK_MAX];
    n += !e->done || e->gave_up;
  }
  return n;
}

static void check_accounts(void)
{
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.missing, st.reordered + st.recovered + st.late + st.lost + pending());
}

static void test_in_order(void)
{
  urtp_nack_config_t c = { 0 };
  urtp_nack_init(&t, &c);
  for (unsigned i = 0; i < 70000; i++)
    urtp_nack_packet(&t, (uint16_t)(65000 + i), i * MS);
  CHECK(urtp_nack_next(&t) == UINT64_MAX);
  CHECK_EQ(urtp_nack_due(&t, 100000 * MS, seqs, 64), 0);
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.missing, 0);
  CHECK(st.rtt == 40 * MS);
}

/* One lost packet: asked for after the reorder delay, answered, the
 * round trip measured from the answer. */
static void test_one_loss(void)
{
  urtp_nack_config_t c = { 0 };
  urtp_nack_init(&t, &c);
  uint64_t t0 = 1000 * MS;
  for (unsigned i = 0; i < 10; i++)
    if (i != 5)
      urtp_nack_packet(&t, (uint16_t)i, t0);
  CHECK(urtp_nack_next(&t) == t0 + 5 * MS);
  CHECK_EQ(urtp_nack_due(&t, t0 + 4 * MS, seqs, 64), 0);
  REQUIRE(urtp_nack_due(&t, t0 + 5 * MS, seqs, 64) == 1);
  CHECK_EQ(seqs[0], 5);
  CHECK(urtp_nack_next(&t) == t0 + 65 * MS);   /* 1.5 round trips */
  CHECK_EQ(urtp_nack_due(&t, t0 + 64 * MS - 1, seqs, 64), 0);
  urtp_nack_packet(&t, 5, t0 + 25 * MS);
  urtp_nack_packet(&t, 5, t0 + 26 * MS);      /* a duplicate: nothing */
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.missing, 1);
  CHECK_EQ(st.requests, 1);
  CHECK_EQ(st.recovered, 1);
  CHECK_EQ(st.reordered, 0);
  CHECK(st.rtt == 20 * MS);
  /* a second sample is smoothed: 7/8 * 20 + 1/8 * 28 = 21 ms */
  urtp_nack_packet(&t, 11, t0 + 100 * MS);
  REQUIRE(urtp_nack_due(&t, t0 + 105 * MS, seqs, 64) == 1);
  CHECK_EQ(seqs[0], 10);
  urtp_nack_packet(&t, 10, t0 + 133 * MS);
  urtp_nack_stats(&t, &st);
  CHECK(st.rtt == 21 * MS);
  CHECK_EQ(urtp_nack_due(&t, t0 + 500 * MS, seqs, 64), 0);
  CHECK_EQ(t.count, 0);
  check_accounts();
}

/* Arriving late but before the reorder delay: not asked for. */
static void test_reordered(void)
{
  urtp_nack_config_t c = { .reorder_delay = 10 * MS };
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 100, 0);
  urtp_nack_packet(&t, 103, MS);
  urtp_nack_packet(&t, 101, 2 * MS);
  CHECK_EQ(urtp_nack_due(&t, 11 * MS, seqs, 64), 1);
  CHECK_EQ(seqs[0], 102);
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.missing, 2);
  CHECK_EQ(st.reordered, 1);
  check_accounts();
}

/* Asked at 5, 65 and 125 ms; at 185 ms an answer (a round trip, 40 ms)
 * would come after the 200 ms deadline: given up. An answer after that is
 * late; without one it is lost once it leaves, a deadline later. */
static void test_give_up(void)
{
  for (int answer = 0; answer < 2; answer++) {
    urtp_nack_config_t c = { 0 };
    urtp_nack_init(&t, &c);
    urtp_nack_packet(&t, 1, 0);
    urtp_nack_packet(&t, 3, 0);
    uint64_t asked[8];
    unsigned n = 0;
    for (uint64_t now = 0; now <= 300 * MS; now += MS)
      if (urtp_nack_due(&t, now, seqs, 64) == 1 && n < 8)
        asked[n++] = now;
    REQUIRE(n == 3);
    CHECK(asked[0] == 5 * MS && asked[1] == 65 * MS && asked[2] == 125 * MS);
    urtp_nack_stats_t st;
    urtp_nack_stats(&t, &st);
    CHECK_EQ(st.requests, 3);
    CHECK_EQ(st.lost, 0);
    if (answer)
      urtp_nack_packet(&t, 2, 300 * MS);
    CHECK(urtp_nack_next(&t) == 400 * MS);
    CHECK_EQ(urtp_nack_due(&t, 400 * MS, seqs, 64), 0);
    urtp_nack_stats(&t, &st);
    CHECK_EQ(st.late, answer ? 1 : 0);
    CHECK_EQ(st.lost, answer ? 0 : 1);
    CHECK_EQ(t.count, 0);
    check_accounts();
  }
  /* max_retries 1: once */
  urtp_nack_config_t c = { .max_retries = 1 };
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 1, 0);
  urtp_nack_packet(&t, 3, 0);
  unsigned asked = 0;
  for (uint64_t now = 0; now <= 300 * MS; now += MS)
    asked += urtp_nack_due(&t, now, seqs, 64);
  CHECK_EQ(asked, 1);
}

/* Packets 10..13 lost, asked in one NACK at 5 ms. The answers for 10 and
 * 12 arrive at 25 ms, 11's RTX lost: with the gap in the RTX stream shown
 * (RTX lost before 12's), 11 is asked again at once, not at 65 ms; 13,
 * asked after 12 in the same NACK, may still come and is not. Without a
 * gap (11's answer only late, or not sent), nothing is asked early. A
 * later request's answer shows what an earlier request lost too, and an
 * answer nobody waits for shows nothing. */
static void test_rtx_gap(void)
{
  for (int gap = 0; gap < 2; gap++) {
    urtp_nack_config_t c = { 0 };
    urtp_nack_init(&t, &c);
    urtp_nack_packet(&t, 9, 0);
    urtp_nack_packet(&t, 14, 0);
    REQUIRE(urtp_nack_due(&t, 5 * MS, seqs, 64) == 4);
    urtp_nack_packet(&t, 10, 25 * MS);
    /* (however many the gap: only 11 was asked before 12) */
    urtp_nack_rtx_gap(&t, 12, gap ? 3 : 0, 25 * MS);
    urtp_nack_packet(&t, 12, 25 * MS);
    urtp_nack_stats_t st;
    urtp_nack_stats(&t, &st);
    CHECK(st.rtt == 20 * MS);
    CHECK_EQ(st.fast_retries, (gap ? 1u : 0u));
    unsigned n = urtp_nack_due(&t, 25 * MS, seqs, 64);
    CHECK_EQ(n, (gap ? 1u : 0u));
    if (gap)
      CHECK_EQ(seqs[0], 11);
    /* 13 at its usual time: 5 ms + the first sample's 20 ms and four
     * times its deviation (5 ms) */
    CHECK_EQ(urtp_nack_due(&t, 45 * MS - 1, seqs, 64), 0);
    n = urtp_nack_due(&t, 45 * MS, seqs, 64);
    CHECK_EQ(n, (gap ? 1u : 2u));
    CHECK_EQ(seqs[0], (gap ? 13 : 11));
    check_accounts();
  }

  /* two requests: 20 asked at 5 ms, 22 at 8 ms; the answer to 22 with one
   * RTX lost before it: 20's was that one */
  urtp_nack_config_t c = { 0 };
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 19, 0);
  urtp_nack_packet(&t, 21, 0);
  REQUIRE(urtp_nack_due(&t, 5 * MS, seqs, 64) == 1);
  urtp_nack_packet(&t, 23, 3 * MS);
  REQUIRE(urtp_nack_due(&t, 8 * MS, seqs, 64) == 1);
  CHECK_EQ(seqs[0], 22);
  /* the count is a bound: two lost, one to ask for */
  urtp_nack_rtx_gap(&t, 22, 2, 30 * MS);
  urtp_nack_packet(&t, 22, 30 * MS);
  CHECK_EQ(urtp_nack_due(&t, 30 * MS, seqs, 64), 1);
  CHECK_EQ(seqs[0], 20);
  /* 20 asked twice now: its answer is no round trip sample (Karn) */
  urtp_nack_packet(&t, 20, 50 * MS);
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.fast_retries, 1);
  CHECK_EQ(st.recovered, 2);
  CHECK(st.rtt == 22 * MS);
  /* a retransmission of what is not missing, or of what was never asked
   * for, shows nothing */
  urtp_nack_rtx_gap(&t, 22, 5, 60 * MS);
  urtp_nack_packet(&t, 30, 60 * MS);
  urtp_nack_rtx_gap(&t, 29, 5, 60 * MS);
  CHECK_EQ(urtp_nack_due(&t, 60 * MS, seqs, 64), 0);
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.fast_retries, 1);
  check_accounts();

  /* what was asked again after the answer's request (30 at 65 ms, after 32
   * at 45 ms) waits for its new answer */
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 29, 0);
  urtp_nack_packet(&t, 31, 0);
  REQUIRE(urtp_nack_due(&t, 5 * MS, seqs, 64) == 1);
  urtp_nack_packet(&t, 33, 40 * MS);
  REQUIRE(urtp_nack_due(&t, 45 * MS, seqs, 64) == 1 && seqs[0] == 32);
  REQUIRE(urtp_nack_due(&t, 65 * MS, seqs, 64) == 1 && seqs[0] == 30);
  urtp_nack_rtx_gap(&t, 32, 1, 70 * MS);
  urtp_nack_packet(&t, 32, 70 * MS);
  CHECK_EQ(urtp_nack_due(&t, 70 * MS, seqs, 64), 0);
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.fast_retries, 0);
  check_accounts();
}

static void test_wrap(void)
{
  urtp_nack_config_t c = { 0 };
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 65534, 0);
  urtp_nack_packet(&t, 65535, 0);
  urtp_nack_packet(&t, 2, 0);
  REQUIRE(urtp_nack_due(&t, 5 * MS, seqs, 64) == 2);
  CHECK_EQ(seqs[0], 0);
  CHECK_EQ(seqs[1], 1);
  urtp_nack_packet(&t, 0, 10 * MS);
  urtp_nack_packet(&t, 1, 11 * MS);
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.recovered, 2);
  check_accounts();
}

/* A burst of 2000: what one NACK carries (64 pairs of 17), then the rest;
 * each part packs into a NACK and parses back to the same numbers. */
static void test_burst(void)
{
  urtp_nack_config_t c = { 0 };
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 65000, 0);
  urtp_nack_packet(&t, (uint16_t)(65000 + 2001), 0);
  unsigned got = 0;
  uint16_t expect = 65001;
  for (int part = 0; part < 2; part++) {
    unsigned n = urtp_nack_due(&t, 5 * MS, seqs, 2048);
    CHECK_EQ(n, part ? 2000 - 64 * 17 : 64 * 17);
    static uint8_t buf[1024];
    urtp_rtcp_writer_t w;
    urtp_rtcp_writer_init(&w, buf, sizeof buf);
    REQUIRE(urtp_rtcp_write_nack(&w, 1, 2, seqs, n) == 0);
    urtp_rtcp_iter_t it;
    urtp_rtcp_pkt_t pkt;
    urtp_rtcp_fb_t fb;
    urtp_rtcp_iter_init(&it, buf, w.len);
    REQUIRE(urtp_rtcp_next(&it, &pkt) == 1 && urtp_rtcp_parse_fb(&pkt, &fb) == 0);
    static uint16_t back[2048];
    REQUIRE(urtp_rtcp_nack_seqs(&fb, back, 2048, NULL) == (int)n);
    for (unsigned i = 0; i < n; i++, expect++)
      if (back[i] != expect || seqs[i] != expect) {
        CHECK_EQ(back[i], expect);
        break;
      }
    got += n;
  }
  CHECK_EQ(got, 2000);
  CHECK_EQ(urtp_nack_due(&t, 5 * MS, seqs, 2048), 0);
  /* the caller's cap holds too */
  CHECK_EQ(urtp_nack_due(&t, 65 * MS, seqs, 10), 10);
  check_accounts();
}

/* A gap wider than max_gap: one stray packet changes nothing; two in
 * sequence are a jump, and what was pending is lost. */
static void test_jump(void)
{
  urtp_nack_config_t c = { .max_gap = 100 };
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 10, 0);
  urtp_nack_packet(&t, 12, 0);         /* 11 missing */
  urtp_nack_packet(&t, 5000, 0);       /* stray */
  urtp_nack_packet(&t, 13, 0);
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.jumps, 0);
  CHECK_EQ(t.count, 1);
  urtp_nack_packet(&t, 40000, MS);
  urtp_nack_packet(&t, 40001, MS);     /* confirmed */
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.jumps, 1);
  CHECK_EQ(st.lost, 1);
  CHECK_EQ(t.count, 0);
  urtp_nack_packet(&t, 40003, MS);     /* tracking goes on from there */
  CHECK_EQ(urtp_nack_due(&t, 10 * MS, seqs, 64), 1);
  CHECK_EQ(seqs[0], 40002);
  /* backwards as well (a sender restarting lower) */
  urtp_nack_packet(&t, 7, 20 * MS);
  urtp_nack_packet(&t, 8, 20 * MS);
  urtp_nack_packet(&t, 10, 20 * MS);
  CHECK_EQ(urtp_nack_due(&t, 30 * MS, seqs, 64), 1);
  CHECK_EQ(seqs[0], 9);
  check_accounts();
}

/* More missing than the tracker holds: the oldest give way, counted. */
static void test_bounded(void)
{
  urtp_nack_config_t c = { 0 };
  urtp_nack_init(&t, &c);
  urtp_nack_packet(&t, 0, 0);
  urtp_nack_packet(&t, 3001, 0);
  urtp_nack_packet(&t, 6002, 0);
  CHECK_EQ(t.count, URTP_NACK_MAX);
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.missing, 6000);
  CHECK_EQ(st.evicted, 6000 - URTP_NACK_MAX);
  CHECK_EQ(st.lost, 6000 - URTP_NACK_MAX);
  CHECK(t.e[t.head].seq == 0x10000ull + 6000 - URTP_NACK_MAX + 1);
  check_accounts();
}

/* A seeded random run: 3 % loss, reordering, answers that come or not:
 * every missing packet is accounted for exactly once at every step. */
static void test_accounting(void)
{
  urtp_nack_config_t c = { .max_retries = 3 };
  urtp_nack_init(&t, &c);
  uint64_t rng = 7, now = 0;
  uint16_t seq = 60000;
  static uint16_t owed[4096];
  size_t nowed = 0;
  for (int i = 0; i < 200000; i++, seq++, now += 100000) {
    uint64_t r = tap_rand(&rng) % 1000;
    if (r >= 30)
      urtp_nack_packet(&t, seq, now);
    if (r >= 30 && r < 40 && seq > 3)
      urtp_nack_packet(&t, (uint16_t)(seq - 3), now);   /* reordered/dup */
    unsigned n = urtp_nack_due(&t, now, seqs, 2048);
    for (unsigned k = 0; k < n && nowed < 4096; k++)
      if (tap_rand(&rng) % 4)
        owed[nowed++] = seqs[k];                       /* answered later */
    if (i % 50 == 0) {
      for (size_t k = 0; k < nowed; k++)
        urtp_nack_packet(&t, owed[k], now);
      nowed = 0;
      check_accounts();
    }
  }
  urtp_nack_stats_t st;
  urtp_nack_stats(&t, &st);
  printf("# missing %" PRIu64 ": reordered %" PRIu64 ", recovered %" PRIu64 ", late %" PRIu64
         ", lost %" PRIu64 ", requests %" PRIu64 "\n", st.missing, st.reordered, st.recovered,
         st.late, st.lost, st.requests);
  CHECK(st.missing > 5000);
  CHECK(st.recovered > st.missing / 2);
  CHECK(st.reordered > 0);
  check_accounts();
  urtp_nack_reset(&t);
  urtp_nack_stats(&t, &st);
  CHECK_EQ(st.missing, st.reordered + st.recovered + st.late + st.lost);
}

int main(void)
{
  TAP_RUN(test_in_order);
  TAP_RUN(test_one_loss);
  TAP_RUN(test_reordered);
  TAP_RUN(test_give_up);
  TAP_RUN(test_rtx_gap);
  TAP_RUN(test_wrap);
  TAP_RUN(test_burst);
  TAP_RUN(test_jump);
  TAP_RUN(test_bounded);
  TAP_RUN(test_accounting);
  return tap_done();
}
