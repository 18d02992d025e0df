/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rtx - retransmission's pieces: the RTX packet format (RFC 4588) as
 * known answers, the sender's limiter on a virtual clock, and the history
 * of sent batches (lib/urtp/history.h): what it finds, what it releases
 * and when, exactly.
 */
#include <inttypes.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "urtp/batch.h"
#include "urtp/history.h"
#include "urtp/rtp.h"
#include "urtp/rtx.h"

#define MS 1000000ull

/* An original with two CSRCs, a header extension and 3 bytes of padding. */
static const uint8_t orig[] = {
  0xa2, 0xe0, 0x12, 0x34,             /* V=2 P=1 X=0 CC=2; M=1 PT=96; seq 0x1234 */
  0x00, 0x01, 0x02, 0x03,             /* timestamp */
  0xde, 0xad, 0xbe, 0xef,             /* SSRC */
  0x11, 0x11, 0x11, 0x11,             /* CSRC 1 */
  0x22, 0x22, 0x22, 0x22,             /* CSRC 2 */
  'p', 'a', 'y', 'l', 'o', 'a', 'd',  /* payload */
  0x00, 0x00, 0x03,                   /* padding */
};

static void test_wrap_known_answer(void)
{
  static const uint8_t want[] = {
    0xa2, 0xe1, 0xab, 0xcd,           /* same flags, marker; PT=97; seq 0xabcd */
    0x00, 0x01, 0x02, 0x03,           /* the original's timestamp */
    0x01, 0x02, 0x03, 0x04,           /* RTX SSRC */
    0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22,
    0x12, 0x34,                       /* OSN */
    'p', 'a', 'y', 'l', 'o', 'a', 'd', 0x00, 0x00, 0x03,
  };
  uint8_t out[64];
  CHECK_EQ(urtp_rtx_wrap(orig, sizeof orig, 97, 0x01020304, 0xabcd, out, sizeof out),
           sizeof want);
  CHECK_MEM(out, want, sizeof want);
  CHECK_EQ(urtp_rtx_wrap(orig, sizeof orig, 97, 1, 1, out, sizeof orig + 1), -ENOSPC);
  CHECK_EQ(urtp_rtx_wrap(orig, 11, 97, 1, 1, out, sizeof out), -EBADMSG);

  uint16_t osn = 0;
  CHECK_EQ(urtp_rtx_osn(want, sizeof want, &osn), 0);
  CHECK_EQ(osn, 0x1234);
  /* back, in place: byte for byte the original */
  uint8_t pkt[64], *o = NULL;
  memcpy(pkt, want, sizeof want);
  CHECK_EQ(urtp_rtx_unwrap(pkt, sizeof want, 96, 0xdeadbeef, &o), sizeof orig);
  CHECK(o == pkt + 2);
  CHECK_MEM(o, orig, sizeof orig);
}

static void test_unwrap_malformed(void)
{
  uint8_t pkt[32], *o;
  uint16_t osn;
  /* a header and one payload byte: no room for an OSN */
  memcpy(pkt, orig, 12);
  pkt[0] = 0x80;
  pkt[12] = 0x55;
  CHECK_EQ(urtp_rtx_unwrap(pkt, 13, 96, 1, &o), -EBADMSG);
  CHECK_EQ(urtp_rtx_osn(pkt, 13, &osn), -EBADMSG);
  /* padding that leaves one byte of payload */
  pkt[0] = 0xa0;
  pkt[13] = 0;
  pkt[14] = 2;
  CHECK_EQ(urtp_rtx_unwrap(pkt, 15, 96, 1, &o), -EBADMSG);
  /* CSRCs claimed beyond the end */
  pkt[0] = 0x8f;
  CHECK_EQ(urtp_rtx_unwrap(pkt, 20, 96, 1, &o), -EBADMSG);
  /* the smallest that is one: OSN and no payload */
  pkt[0] = 0x80;
  pkt[12] = 0x00;
  pkt[13] = 0x07;
  CHECK_EQ(urtp_rtx_unwrap(pkt, 14, 96, 1, &o), 12);
  CHECK_EQ(urtp_rtp_peek_seq(o), 7);
}

static void test_limiter(void)
{
  static urtp_rtx_limiter_t l;
  urtp_rtx_limiter_init(&l);
  /* 10,000 bytes a second: a bucket of 2,500 (250 ms), starting with 625 */
  uint64_t t = 5000 * MS, hold = 20 * MS, rate = 80000;
  CHECK_EQ(urtp_rtx_limiter_check(&l, 1, 600, t, hold, rate), URTP_RTX_SEND);
  /* the same number again within the hold time: a repeat, no tokens taken */
  CHECK_EQ(urtp_rtx_limiter_check(&l, 1, 200, t + 19 * MS, hold, rate), URTP_RTX_REPEAT);
  /* 25 left, 200 refilled over 20 ms */
  CHECK_EQ(urtp_rtx_limiter_check(&l, 1, 200, t + 20 * MS, hold, rate), URTP_RTX_SEND);
  CHECK_EQ(urtp_rtx_limiter_check(&l, 2, 100, t + 20 * MS, hold, rate), URTP_RTX_OVER_BUDGET);
  CHECK_EQ(urtp_rtx_limiter_check(&l, 2, 25, t + 20 * MS, hold, rate), URTP_RTX_SEND);
  /* refills at the rate, never beyond the bucket */
  CHECK_EQ(urtp_rtx_limiter_check(&l, 3, 1000, t + 119 * MS, hold, rate), URTP_RTX_OVER_BUDGET);
  CHECK_EQ(urtp_rtx_limiter_check(&l, 3, 1000, t + 120 * MS, hold, rate), URTP_RTX_SEND);
  CHECK_EQ(urtp_rtx_limiter_check(&l, 4, 2501, t + 60000 * MS, hold, rate), URTP_RTX_OVER_BUDGET);
  CHECK_EQ(urtp_rtx_limiter_check(&l, 4, 2500, t + 60000 * MS, hold, rate), URTP_RTX_SEND);
  CHECK_EQ(urtp_rtx_limiter_check(&l, 5, 1, t + 60000 * MS, hold, rate), URTP_RTX_OVER_BUDGET);
  /* a slow stream's bucket still holds one large packet (1,000 bytes a
   * second would make it 250) */
  CHECK_EQ(urtp_rtx_limiter_check(&l, 6, 1500, t + 70000 * MS, hold, 8000), URTP_RTX_SEND);
  CHECK_EQ(urtp_rtx_limiter_check(&l, 7, 1, t + 70000 * MS, hold, 8000), URTP_RTX_OVER_BUDGET);
  /* a sequence number 4096 on shares the slot, and is no repeat */
  CHECK_EQ(urtp_rtx_limiter_check(&l, 6 + URTP_RTX_RECENT, 1, t + 70000 * MS + hold / 2, 0, rate),
           URTP_RTX_SEND);
  CHECK(!urtp_rtx_limiter_repeat(&l, 6, t + 70000 * MS + hold / 2, hold));

  /* over any time, no more than the rate and the bucket: a storm asking
   * 1,200 bytes every millisecond for 10 s gets 10 s x 10,000 + 2,500 at
   * the most */
  urtp_rtx_limiter_init(&l);
  uint64_t sent = 0;
  for (uint64_t k = 0; k < 10000; k++)
    if (urtp_rtx_limiter_check(&l, (uint16_t)k, 1200, t + k * MS, hold, rate) == URTP_RTX_SEND)
      sent += 1200;
  printf("# a storm got %" PRIu64 " bytes in 10 s at 10,000 bytes a second\n", sent);
  CHECK(sent <= 10 * 10000 + 2500);
  CHECK(sent >= 10 * 10000 - 2 * 1200);
}

/* --- the history ---------------------------------------------------------- */

static uint8_t payload[1 << 16];
static unsigned released[64];
static unsigned nreleased;

static void on_release(void *user, void *hold)
{
  (void)user;
  released[nreleased++ % 64] = (unsigned)(uintptr_t)hold;
}

/* A batch of n packets from seq on, each 12 header bytes (in the arena)
 * and 100 payload bytes pointing into payload[] at seq * 7 (so their
 * contents differ). */
static void make_batch(urtp_batch_t *b, uint16_t seq, size_t n)
{
  REQUIRE(urtp_batch_reserve(b, n, 2 * n) == 0);
  for (size_t i = 0; i < n; i++) {
    uint16_t s = (uint16_t)(seq + i);
    uint8_t *h = urtp_batch_arena_take(b, 12);
    urtp_rtp_write_fixed(h, 96, i == n - 1, s, 9000 * s, 0x1234);
    struct iovec *v = b->iov + b->niov;
    v[0].iov_base = h;
    v[0].iov_len = 12;
    v[1].iov_base = payload + (size_t)s * 7 % 60000;
    v[1].iov_len = 100;
    urtp_batch_commit(b, 2, 112);
  }
}

static bool got(urtp_history_t *h, uint16_t seq, uint64_t now)
{
  uint8_t buf[256];
  int n = urtp_history_get(h, seq, now, buf, sizeof buf);
  if (n <= 0)
    return false;
  return n == 112 && urtp_rtp_peek_seq(buf) == seq &&
         memcmp(buf + 12, payload + (size_t)seq * 7 % 60000, 100) == 0;
}

static void keep(urtp_history_t *h, urtp_batch_t *b, urtp_holds_t *holds, uint16_t seq, size_t n,
                 unsigned hold, bool refs_ps, uint64_t now)
{
  make_batch(b, seq, n);
  urtp_holds_add(holds, (void *)(uintptr_t)hold);
  urtp_history_keep(h, b, holds, refs_ps, now);
}

static void test_history_find_and_bounds(void)
{
  for (size_t i = 0; i < sizeof payload; i++)
    payload[i] = (uint8_t)(i * 131 + 7);
  urtp_history_t h;
  urtp_history_config_t c = { .max_packets = 100, .max_age = 50 * MS, .max_batches = 4,
                              .release = on_release };
  REQUIRE(urtp_history_init(&h, &c) == 0);
  urtp_batch_t b;
  urtp_holds_t holds = { 0 };
  urtp_batch_init(&b);
  nreleased = 0;

  /* across the wrap of the sequence numbers */
  uint64_t t = 1000 * MS;
  keep(&h, &b, &holds, 65530, 10, 1, false, t);
  CHECK_EQ(b.npkts, 0);
  CHECK_EQ(holds.n, 0);
  CHECK_EQ(nreleased, 0);
  CHECK(got(&h, 65530, t) && got(&h, 65535, t) && got(&h, 0, t) && got(&h, 3, t));
  CHECK(!got(&h, 4, t) && !got(&h, 65529, t));

  /* 10 + 40 + 40 + 10 = 100 packets in 4 batches: all stay */
  keep(&h, &b, &holds, 4, 40, 2, false, t + 1 * MS);
  keep(&h, &b, &holds, 44, 40, 3, false, t + 2 * MS);
  keep(&h, &b, &holds, 84, 10, 4, false, t + 3 * MS);
  CHECK_EQ(nreleased, 0);
  /* a fifth batch: the oldest leaves (the batch bound) */
  keep(&h, &b, &holds, 94, 1, 5, false, t + 4 * MS);
  CHECK_EQ(nreleased, 1);
  CHECK_EQ(released[0], 1);
  CHECK(!got(&h, 65535, t + 4 * MS) && got(&h, 4, t + 4 * MS) && got(&h, 94, t + 4 * MS));
  keep(&h, &b, &holds, 95, 1, 6, false, t + 5 * MS);
  CHECK_EQ(nreleased, 2);
  CHECK_EQ(released[1], 2);
  urtp_history_stats_t st;
  urtp_history_get_stats(&h, &st);
  CHECK_EQ(st.batches, 4);
  CHECK_EQ(st.packets, 52);

  /* the age bound: too old to be sent, then gone with the next keep */
  CHECK(got(&h, 44, t + 52 * MS));
  CHECK(!got(&h, 44, t + 53 * MS));
  CHECK(got(&h, 95, t + 53 * MS));
  keep(&h, &b, &holds, 96, 1, 7, false, t + 54 * MS);
  CHECK_EQ(nreleased, 4);
  CHECK_EQ(released[2], 3);
  CHECK_EQ(released[3], 4);
  CHECK(got(&h, 94, t + 54 * MS));

  /* an empty batch is not kept: its holds go at once */
  urtp_holds_add(&holds, (void *)(uintptr_t)8);
  urtp_history_keep(&h, &b, &holds, false, t + 55 * MS);
  CHECK_EQ(nreleased, 5);
  CHECK_EQ(released[4], 8);

  /* the packet bound, and the newest batch stays whole, however large */
  keep(&h, &b, &holds, 97, 300, 9, false, t + 56 * MS);
  CHECK(got(&h, 97, t + 56 * MS) && got(&h, 396, t + 56 * MS));
  CHECK(!got(&h, 96, t + 56 * MS));
  CHECK_EQ(nreleased, 8);
  urtp_history_get_stats(&h, &st);
  CHECK_EQ(st.batches, 1);

  urtp_history_destroy(&h);
  CHECK_EQ(nreleased, 9);
  CHECK_EQ(released[8], 9);
  urtp_batch_free(&b);
  free(holds.v);
}

/* Batches that point into the parameter sets leave when they change, with
 * every older one; the memory of batches that left is handed back. */
static void test_history_drop_ps_and_reuse(void)
{
  urtp_history_t h;
  urtp_history_config_t c = { .release = on_release };
  REQUIRE(urtp_history_init(&h, &c) == 0);
  urtp_batch_t b;
  urtp_holds_t holds = { 0 };
  urtp_batch_init(&b);
  nreleased = 0;
  uint64_t t = 7 * MS;
  keep(&h, &b, &holds, 0, 5, 1, false, t);
  keep(&h, &b, &holds, 5, 5, 2, true, t);
  keep(&h, &b, &holds, 10, 5, 3, false, t);
  urtp_history_drop_ps(&h);
  CHECK_EQ(nreleased, 2);
  CHECK(!got(&h, 9, t) && got(&h, 10, t));
  /* the next batch kept hands back the memory of one that left */
  keep(&h, &b, &holds, 15, 5, 4, false, t);
  CHECK(b.pkts_cap >= 5 && b.npkts == 0 && holds.cap >= 1 && holds.n == 0);
  urtp_history_drop_ps(&h);        /* none points into them now */
  CHECK_EQ(nreleased, 2);
  urtp_history_destroy(&h);
  CHECK_EQ(nreleased, 4);
  urtp_batch_free(&b);
  free(holds.v);
}

/* A batch whose numbers do not follow each other cannot be found by
 * number: not kept, released. */
static void test_history_gapped_batch(void)
{
  urtp_history_t h;
  urtp_history_config_t c = { .release = on_release };
  REQUIRE(urtp_history_init(&h, &c) == 0);
  urtp_batch_t b;
  urtp_holds_t holds = { 0 };
  urtp_batch_init(&b);
  nreleased = 0;
  make_batch(&b, 10, 2);
  make_batch(&b, 20, 2);
  urtp_holds_add(&holds, (void *)(uintptr_t)1);
  urtp_history_keep(&h, &b, &holds, false, 0);
  CHECK_EQ(nreleased, 1);
  CHECK(!got(&h, 10, 0));
  urtp_history_destroy(&h);
  urtp_batch_free(&b);
  free(holds.v);
}

int main(void)
{
  TAP_RUN(test_wrap_known_answer);
  TAP_RUN(test_unwrap_malformed);
  TAP_RUN(test_limiter);
  TAP_RUN(test_history_find_and_bounds);
  TAP_RUN(test_history_drop_ps_and_reuse);
  TAP_RUN(test_history_gapped_batch);
  return tap_done();
}
