/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_twcc.c - transport-wide sequence numbers at both ends
 * (lib/urtp/twcc.h): the receiver's record written as feedback, the
 * sender's history matched against it.
 *
 * A simulated path (send times, a queue that grows, loss, reordering)
 * feeds both: the results give back every packet's send time, size and
 * one-way delay at the feedback's 250 us resolution. Forged and repeated
 * feedback yields nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "urtp/twcc.h"

static urtp_twcc_recorder_t rec;
static urtp_twcc_history_t hist;
static urtp_ccfb_pkt_t fb[4 * URTP_TWCC_MAX_PACKETS];
static urtp_twcc_result_t res[4 * URTP_TWCC_MAX_PACKETS];
static uint8_t buf[1 << 16];

/* Everything the recorder has to say, parsed: messages of at most cap
 * bytes each round. Returns the statuses. */
static size_t drain(size_t cap)
{
  size_t n = 0;
  for (;;) {
    size_t w = urtp_twcc_recorder_feedback(&rec, buf, cap, 1, 2);
    if (w == 0)
      break;
    for (size_t off = 0; off < w;) {
      size_t len = ((size_t)(buf[off + 2] << 8 | buf[off + 3]) + 1) * 4;
      urtp_twcc_info_t info;
      size_t got;
      if (urtp_twcc_parse(buf + off, len, &info, fb + n, sizeof fb / sizeof fb[0] - n, &got) != 0) {
        CHECK(!"feedback the recorder wrote parses");
        return n;
      }
      n += got;
      off += len;
    }
  }
  return n;
}

static int64_t q250(int64_t us)
{
  return us / 250 * 250;
}

/* Arrivals with losses, reordering, a duplicate and a packet after its
 * loss was reported; across the 16-bit wrap. */
static void test_recorder(void)
{
  urtp_twcc_recorder_init(&rec);
  CHECK(!urtp_twcc_recorder_pending(&rec));
  CHECK_EQ(urtp_twcc_recorder_feedback(&rec, buf, sizeof buf, 1, 2), 0);
  uint16_t base = 65500;
  for (unsigned i = 0; i < 100; i++) {
    if (i % 17 == 5)
      continue; /* lost */
    unsigned k = i % 10 == 3 ? i + 1 : i % 10 == 4 ? i - 1 : i; /* pairs swapped */
    urtp_twcc_recorder_add(&rec, (uint16_t)(base + k), 1000000 + k * 1000);
  }
  urtp_twcc_recorder_add(&rec, (uint16_t)(base + 50), 5); /* duplicate */
  CHECK_EQ(rec.duplicates, 1);
  CHECK(urtp_twcc_recorder_pending(&rec));
  size_t n = drain(sizeof buf);
  CHECK_EQ(n, 100);
  unsigned bad = 0;
  for (unsigned i = 0; i < n; i++) {
    /* the loop above added packet i when it was at i, i - 1 (3s) or i + 1 (4s) */
    unsigned from = i % 10 == 4 ? i - 1 : i % 10 == 3 ? i + 1 : i;
    bool lost = from % 17 == 5;
    if (fb[i].seq != (uint16_t)(base + i) || fb[i].received == lost ||
        (!lost && fb[i].arrival_us != 1000000 + i * 1000))
      bad++;
  }
  CHECK_EQ(bad, 0);
  CHECK(!urtp_twcc_recorder_pending(&rec));
  /* a packet reported missing arrives: counted, not reported again */
  urtp_twcc_recorder_add(&rec, (uint16_t)(base + 5), 2000000);
  CHECK_EQ(rec.late, 1);
  CHECK_EQ(drain(sizeof buf), 0);
  /* the next ones start where the last feedback ended */
  urtp_twcc_recorder_add(&rec, (uint16_t)(base + 101), 2100000);
  n = drain(sizeof buf);
  CHECK_EQ(n, 2);
  CHECK(!fb[0].received && fb[0].seq == (uint16_t)(base + 100));
  CHECK(fb[1].received && fb[1].arrival_us == 2100000);
  /* a lone jump no window spans: a stray, nothing else */
  urtp_twcc_recorder_add(&rec, (uint16_t)(base + 20000), 2900000);
  CHECK(rec.restarts == 0 && rec.strays == 1);
  CHECK(!urtp_twcc_recorder_pending(&rec));
  /* a jump confirmed by a second packet (one number lost between): a
   * restart from the first */
  urtp_twcc_recorder_add(&rec, (uint16_t)(base + 30000), 3000000);
  CHECK_EQ(rec.strays, 2);
  urtp_twcc_recorder_add(&rec, (uint16_t)(base + 30002), 3000600);
  CHECK(rec.restarts == 1 && rec.strays == 1);
  n = drain(sizeof buf);
  CHECK(n == 3 && fb[0].seq == (uint16_t)(base + 30000) && fb[0].arrival_us == 3000000);
  CHECK(!fb[1].received && fb[2].received && fb[2].arrival_us == 3000500);
  /* small messages: the same statuses, more messages */
  urtp_twcc_recorder_add(&rec, (uint16_t)(base + 30001), 3000300);
  CHECK_EQ(rec.late, 2);
  for (unsigned i = 3; i <= 300; i++)
    urtp_twcc_recorder_add(&rec, (uint16_t)(base + 30000 + i), 3000000 + i * 700);
  uint8_t before = rec.fb_count;
  n = drain(48);
  CHECK_EQ(n, 298);
  CHECK((uint8_t)(rec.fb_count - before) > 10);
}

/* A path: 1200-byte packets every 1 ms, one-way delay 20 ms plus a queue
 * growing 0.1 ms a packet from packet 1000 (a bottleneck), 2 % loss,
 * feedback every 50 packets. Each result gives back its packet exactly. */
static void test_history_matches_path(void)
{
  urtp_twcc_recorder_init(&rec);
  urtp_twcc_history_init(&hist);
  srand(3);
  unsigned bad = 0, results = 0, lost = 0;
  int64_t first_delay = 0;
  for (unsigned i = 0; i < 3000; i++) {
    uint16_t seq = (uint16_t)(60000 + i);
    int64_t send = 5000000 + (int64_t)i * 1000;
    uint32_t size = 1200 + i % 7;
    urtp_twcc_history_add(&hist, seq, send, size, i % 100 == 0 ? URTP_TWCC_SENT_RTX : 0);
    bool drop = i != 2999 && rand() % 50 == 0;
    int64_t queue = i > 1000 ? (int64_t)(i - 1000) * 100 : 0;
    if (!drop)
      urtp_twcc_recorder_add(&rec, seq, 777000 + send + 20000 + queue);
    lost += drop;
    if (i % 50 == 49) {
      size_t n = drain(1200);
      size_t m = urtp_twcc_history_match(&hist, fb, n, res, sizeof res / sizeof res[0]);
      if (m != n)
        bad++;
      for (size_t k = 0; k < m; k++) {
        const urtp_twcc_result_t *r = &res[k];
        unsigned j = (unsigned)(r->send_us - 5000000) / 1000;
        int64_t want = q250(777000 + r->send_us + 20000 + (j > 1000 ? (j - 1000) * 100 : 0));
        if (r->size != 1200 + j % 7 || (r->flags != 0) != (j % 100 == 0) ||
            (r->received && r->arrival_us != want))
          bad++;
        if (results == 0)
          first_delay = r->arrival_us - r->send_us;
        results++;
        lost -= !r->received;
      }
    }
  }
  printf("# %u results, first one-way delay (clocks apart) %lld us\n", results,
         (long long)first_delay);
  CHECK_EQ(bad, 0);
  CHECK_EQ(results, 3000);
  CHECK_EQ(lost, 0);
  CHECK_EQ(hist.unknown, 0);
}

/* Feedback about numbers never sent, repeated, or long forgotten yields
 * nothing. */
static void test_history_refuses(void)
{
  urtp_twcc_history_init(&hist);
  urtp_ccfb_pkt_t f[4] = { { 0, 10, true, 0, 1 } };
  CHECK_EQ(urtp_twcc_history_match(&hist, f, 1, res, 8), 0);
  CHECK_EQ(hist.unknown, 1);
  for (unsigned i = 0; i < 20; i++)
    urtp_twcc_history_add(&hist, (uint16_t)(100 + i), i * 1000, 1000, 0);
  f[0] = (urtp_ccfb_pkt_t){ 0, 105, true, 0, 5 };
  f[1] = (urtp_ccfb_pkt_t){ 0, 130, true, 0, 6 };   /* not sent yet */
  f[2] = (urtp_ccfb_pkt_t){ 0, 105, true, 0, 7 };   /* repeated */
  f[3] = (urtp_ccfb_pkt_t){ 0, 40000, true, 0, 8 }; /* far away */
  CHECK_EQ(urtp_twcc_history_match(&hist, f, 4, res, 8), 1);
  CHECK_EQ(res[0].arrival_us, 5);
  CHECK_EQ(hist.unknown, 3);
  CHECK_EQ(hist.repeated, 1);
  /* sent long ago: overwritten by a window of newer ones */
  for (unsigned i = 20; i < 20 + URTP_TWCC_WINDOW; i++)
    urtp_twcc_history_add(&hist, (uint16_t)(100 + i), i * 1000, 1000, 0);
  f[0] = (urtp_ccfb_pkt_t){ 0, 110, true, 0, 5 };
  CHECK_EQ(urtp_twcc_history_match(&hist, f, 1, res, 8), 0);
}

int main(void)
{
  TAP_RUN(test_recorder);
  TAP_RUN(test_history_matches_path);
  TAP_RUN(test_history_refuses);
  return tap_done();
}
