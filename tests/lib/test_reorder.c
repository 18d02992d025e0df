/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp_reorder: packets offered in any order come out in sequence order,
 * every sequence number accounted for exactly once (delivered or lost).
 *
 * The packets here are not RTP: urtp_reorder never looks inside them. Each
 * one is 2 bytes of sequence number followed by a pattern derived from it,
 * so that a delivered packet can be checked byte for byte.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "urtp/reorder.h"

#define MAXREC 70000

/* What the deliver callback saw. */
typedef struct rec {
  size_t n;
  uint16_t seq[MAXREC];
  uint64_t ext[MAXREC];
  uint64_t lost[MAXREC];
  const uint8_t *ptr[MAXREC];
  int bad_bytes;          /* deliveries whose bytes differ from the packet built */
} rec_t;

static rec_t rec;

static size_t pkt_len(uint16_t seq)
{
  return 4 + seq % 29;
}

static void make_pkt(uint8_t *b, uint16_t seq)
{
  size_t n = pkt_len(seq);
  b[0] = (uint8_t)(seq >> 8);
  b[1] = (uint8_t)seq;
  for (size_t i = 2; i < n; i++)
    b[i] = (uint8_t)(seq * 31u + i * 7u);
}

static void on_deliver(void *user, const uint8_t *pkt, size_t len, uint64_t ext,
                       uint64_t lost_before)
{
  rec_t *r = user;
  uint8_t want[64];
  uint16_t seq = len >= 2 ? (uint16_t)(pkt[0] << 8 | pkt[1]) : 0;
  make_pkt(want, seq);
  if (len != pkt_len(seq) || memcmp(pkt, want, len) != 0)
    r->bad_bytes++;
  if (r->n < MAXREC) {
    r->seq[r->n] = seq;
    r->ext[r->n] = ext;
    r->lost[r->n] = lost_before;
    r->ptr[r->n] = pkt;
    r->n++;
  }
}

static void rec_reset(void)
{
  memset(&rec, 0, sizeof(rec));
}

/* Offers seq from a fresh buffer; returns that buffer (valid until the next
 * call), to check zero-copy delivery. */
static const uint8_t *offer(urtp_reorder_t *r, uint16_t seq)
{
  static uint8_t buf[2][64];
  static int which;
  uint8_t *b = buf[which ^= 1];
  make_pkt(b, seq);
  urtp_reorder_push(r, b, pkt_len(seq), seq, on_deliver, &rec);
  return b;
}

static void offer_list(urtp_reorder_t *r, const uint16_t *seqs, size_t n)
{
  for (size_t i = 0; i < n; i++)
    offer(r, seqs[i]);
}

/* ---- tests ---- */

static void test_init_errors(void)
{
  urtp_reorder_t r;
  CHECK_EQ(urtp_reorder_init(&r, 32769, 1500), -EINVAL);
  CHECK_EQ(urtp_reorder_init(&r, 8, 0), -EINVAL);
  CHECK_EQ(urtp_reorder_init(&r, 32768, 16), 0);
  urtp_reorder_destroy(&r);
  CHECK_EQ(urtp_reorder_init(&r, 0, 1500), 0);
  CHECK_EQ(urtp_reorder_pending(&r), 0);
  urtp_reorder_destroy(&r);
}

static void test_in_order_zero_copy(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 16, 64) == 0);
  rec_reset();
  int copies = 0;
  for (uint16_t s = 1000; s < 1100; s++) {
    const uint8_t *b = offer(&r, s);
    /* Delivered during the push, from the caller's own buffer. */
    if (rec.n == 0 || rec.ptr[rec.n - 1] != b)
      copies++;
  }
  CHECK_EQ(copies, 0);
  CHECK_EQ(rec.n, 100);
  CHECK_EQ(rec.bad_bytes, 0);
  for (size_t i = 0; i < rec.n; i++) {
    CHECK_EQ(rec.seq[i], 1000 + i);
    CHECK_EQ(rec.ext[i], 65536 + 1000 + i);
    CHECK_EQ(rec.lost[i], 0);
  }
  CHECK_EQ(r.stats.delivered, 100);
  CHECK_EQ(r.stats.lost + r.stats.duplicates + r.stats.late + r.stats.reordered, 0);
  urtp_reorder_destroy(&r);
}

/* Every permutation of 5 consecutive packets, within a window of 5, comes
 * out in order; a packet counts as reordered exactly when one with a higher
 * number arrived before it. */
static void test_all_permutations(void)
{
  enum { K = 5 };
  int perm[K] = { 0, 1, 2, 3, 4 };
  int count = 0, failures = 0;
  for (;;) {
    urtp_reorder_t r;
    REQUIRE(urtp_reorder_init(&r, K, 64) == 0);
    rec_reset();
    offer(&r, 99);
    uint64_t want_reordered = 0;
    for (int i = 0; i < K; i++) {
      /* reordered: a higher number arrived before it (waiting behind a
       * missing one is not reordering) */
      bool after_higher = false;
      for (int j = 0; j < i; j++)
        after_higher |= perm[j] > perm[i];
      want_reordered += after_higher;
      offer(&r, (uint16_t)(100 + perm[i]));
    }
    bool ok = rec.n == K + 1 && r.stats.lost == 0 && r.stats.reordered == want_reordered &&
              r.stashed == 0 && rec.bad_bytes == 0;
    for (size_t i = 0; ok && i < rec.n; i++)
      ok = rec.seq[i] == 99 + i && rec.lost[i] == 0;
    failures += !ok;
    count++;
    urtp_reorder_destroy(&r);
    /* next permutation (lexicographic) */
    int i = K - 2;
    while (i >= 0 && perm[i] > perm[i + 1])
      i--;
    if (i < 0)
      break;
    int j = K - 1;
    while (perm[j] < perm[i])
      j--;
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    for (int a = i + 1, b = K - 1; a < b; a++, b--) {
      t = perm[a];
      perm[a] = perm[b];
      perm[b] = t;
    }
  }
  CHECK_EQ(count, 120);
  CHECK_EQ(failures, 0);
}

static void test_duplicates_and_late(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 4, 64) == 0);
  rec_reset();
  /* 12 waits for 11; a second 12 is a duplicate of a stashed packet; 10 again
   * is a duplicate of a delivered one. */
  static const uint16_t a[] = { 10, 12, 12, 10, 11, 11 };
  offer_list(&r, a, 6);
  CHECK_EQ(rec.n, 3);
  CHECK_EQ(r.stats.duplicates, 3);
  CHECK_EQ(r.stats.late, 0);
  CHECK_EQ(r.stats.reordered, 1);
  /* 14 is missing; 18 lands 4 beyond it: 14 is given up, 15..18 delivered. */
  static const uint16_t b[] = { 13, 15, 16, 17, 18 };
  offer_list(&r, b, 5);
  CHECK_EQ(rec.n, 8);
  CHECK_EQ(rec.seq[4], 15);
  CHECK_EQ(rec.lost[4], 1);
  CHECK_EQ(r.stats.lost, 1);
  /* 14 now comes too late; 16 again is a duplicate. */
  offer(&r, 14);
  offer(&r, 16);
  CHECK_EQ(r.stats.late, 1);
  CHECK_EQ(r.stats.duplicates, 4);
  /* Far behind (beyond the bitmap of recent positions): late, even where
   * the bitmap's bit (position modulo its size) belongs to a delivered one. */
  offer(&r, 18 - 1024);
  CHECK_EQ(r.stats.late, 2);
  CHECK_EQ(rec.n, 8);
  CHECK_EQ(rec.bad_bytes, 0);
  CHECK_EQ(r.stats.delivered, 8);
  CHECK_EQ(r.stats.resyncs, 0);
  urtp_reorder_destroy(&r);
}

static void test_gap_beyond_window(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 8, 64) == 0);
  rec_reset();
  offer(&r, 500);
  /* 501..503 missing; 504..510 wait: 510 is 9 beyond 501, so 501 and 502
   * are given up (510 must fit in the window starting at 503). */
  for (uint16_t s = 504; s <= 510; s++)
    offer(&r, s);
  CHECK_EQ(rec.n, 1);
  CHECK_EQ(r.stats.lost, 2);
  CHECK_EQ(urtp_reorder_pending(&r), 7);
  offer(&r, 511);   /* gives up 503 too: 504..511 flow out */
  CHECK_EQ(rec.n, 9);
  CHECK_EQ(rec.seq[1], 504);
  CHECK_EQ(rec.lost[1], 3);
  CHECK_EQ(rec.ext[1], 65536 + 504);
  for (size_t i = 2; i < 9; i++)
    CHECK_EQ(rec.lost[i], 0);
  CHECK_EQ(r.stats.lost, 3);
  /* they waited behind a loss, but arrived in order */
  CHECK_EQ(r.stats.reordered, 0);
  CHECK_EQ(urtp_reorder_pending(&r), 0);
  urtp_reorder_destroy(&r);
}

/* A jump far ahead gives up the gap up to the window's reach, delivering
 * what waits first; the packet itself then waits like any early one. */
static void test_big_jump(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 8, 64) == 0);
  rec_reset();
  static const uint16_t a[] = { 10, 12, 13 };
  offer_list(&r, a, 3);
  offer(&r, 5000);
  /* 11 lost, 12 and 13 delivered, 14..4992 lost, 5000 waits for 4993. */
  CHECK_EQ(rec.n, 3);
  CHECK_EQ(rec.seq[1], 12);
  CHECK_EQ(rec.lost[1], 1);
  CHECK_EQ(rec.seq[2], 13);
  CHECK_EQ(rec.lost[2], 0);
  CHECK_EQ(r.stats.lost, 1 + 4993 - 14);
  CHECK_EQ(urtp_reorder_pending(&r), 1);
  /* 4990 was given up: late. 5000 waits already: duplicate. */
  offer(&r, 4990);
  offer(&r, 5000);
  CHECK_EQ(r.stats.late, 1);
  /* 4940 shares its bitmap bit with 12 (64 * 77 apart), which was delivered
   * before the jump: still late. */
  offer(&r, 4940);
  CHECK_EQ(r.stats.late, 2);
  CHECK_EQ(r.stats.duplicates, 1);
  CHECK_EQ(r.stats.duplicates, 1);
  for (uint16_t s = 4993; s < 5000; s++)
    offer(&r, s);
  CHECK_EQ(rec.n, 11);
  CHECK_EQ(rec.seq[3], 4993);
  CHECK_EQ(rec.lost[3], 4993 - 14);
  CHECK_EQ(rec.seq[10], 5000);
  CHECK_EQ(r.stats.lost, 1 + 4993 - 14);
  CHECK_EQ(r.stats.delivered, 11);
  CHECK_EQ(rec.bad_bytes, 0);
  urtp_reorder_destroy(&r);
}

static void test_wrap(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 4, 64) == 0);
  rec_reset();
  static const uint16_t a[] = { 65533, 65535, 65534, 1, 0, 2, 3 };
  offer_list(&r, a, 7);
  CHECK_EQ(rec.n, 7);
  static const uint16_t want[] = { 65533, 65534, 65535, 0, 1, 2, 3 };
  for (size_t i = 0; i < 7; i++) {
    CHECK_EQ(rec.seq[i], want[i]);
    CHECK_EQ(rec.ext[i], 65536 + 65533 + i);
  }
  CHECK_EQ(r.stats.lost, 0);
  CHECK_EQ(r.stats.reordered, 2);
  urtp_reorder_destroy(&r);
}

/* A sender restarts with numbers 20000 behind: after `window` such packets
 * in a row the window follows the new numbering. */
static void test_resync(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 16, 64) == 0);
  rec_reset();
  for (uint16_t s = 30000; s < 30010; s++)
    offer(&r, s);
  offer(&r, 30011);   /* waits for 30010, which never comes */
  CHECK_EQ(urtp_reorder_pending(&r), 1);
  for (uint16_t s = 10000; s < 10015; s++)
    offer(&r, s);
  CHECK_EQ(r.stats.late, 15);
  CHECK_EQ(r.stats.resyncs, 0);
  CHECK_EQ(rec.n, 10);
  offer(&r, 10015);   /* the 16th: resync */
  CHECK_EQ(r.stats.resyncs, 1);
  CHECK_EQ(r.stats.late, 15);
  /* What waited was given up to first (30010 lost, 30011 delivered). */
  CHECK_EQ(rec.n, 12);
  CHECK_EQ(rec.seq[10], 30011);
  CHECK_EQ(rec.lost[10], 1);
  CHECK_EQ(rec.seq[11], 10015);
  CHECK_EQ(rec.ext[11], 65536 + 10015);
  for (uint16_t s = 10016; s < 10030; s++)
    offer(&r, s);
  CHECK_EQ(rec.n, 26);
  CHECK_EQ(rec.seq[25], 10029);
  CHECK_EQ(rec.lost[25], 0);
  CHECK_EQ(r.stats.lost, 1);
  /* Packets reordered beyond the window, interleaved with in-order ones,
   * never add up to a resync. */
  for (uint16_t s = 10030; s < 10130; s++) {
    offer(&r, s);
    if (s >= 10035)
      offer(&r, (uint16_t)(s - 20));
  }
  CHECK_EQ(r.stats.resyncs, 1);
  CHECK_EQ(r.stats.duplicates, 95);
  CHECK_EQ(r.stats.late, 15);
  /* A burst of 40 duplicates within the window, nothing new between them:
   * duplicates, not a restart. */
  for (int k = 0; k < 40; k++)
    offer(&r, (uint16_t)(10129 - k % 16));
  CHECK_EQ(r.stats.resyncs, 1);
  CHECK_EQ(r.stats.duplicates, 135);
  CHECK_EQ(rec.bad_bytes, 0);
  urtp_reorder_destroy(&r);
}

static void test_window_zero(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 0, 64) == 0);
  rec_reset();
  static const uint16_t a[] = { 7, 9, 8, 10, 10, 13, 12, 14 };
  const uint8_t *b = offer(&r, 7);
  CHECK(rec.n == 1 && rec.ptr[0] == b);
  offer_list(&r, a + 1, 7);
  /* 7, 9 (8 lost), 8 late, 10, 10 dup, 13 (11, 12 lost), 12 late, 14 */
  CHECK_EQ(rec.n, 5);
  static const uint16_t want[] = { 7, 9, 10, 13, 14 };
  static const uint64_t want_lost[] = { 0, 1, 0, 2, 0 };
  for (size_t i = 0; i < 5; i++) {
    CHECK_EQ(rec.seq[i], want[i]);
    CHECK_EQ(rec.lost[i], want_lost[i]);
  }
  CHECK_EQ(r.stats.lost, 3);
  CHECK_EQ(r.stats.late, 2);
  CHECK_EQ(r.stats.duplicates, 1);
  CHECK_EQ(r.stats.reordered, 0);
  CHECK_EQ(urtp_reorder_pending(&r), 0);
  urtp_reorder_destroy(&r);
}

static void test_flush(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 32, 64) == 0);
  rec_reset();
  static const uint16_t a[] = { 1, 3, 4, 7 };
  offer_list(&r, a, 4);
  CHECK_EQ(rec.n, 1);
  CHECK_EQ(urtp_reorder_pending(&r), 3);
  urtp_reorder_flush(&r, on_deliver, &rec);
  CHECK_EQ(urtp_reorder_pending(&r), 0);
  CHECK_EQ(rec.n, 4);
  CHECK_EQ(rec.seq[1], 3);
  CHECK_EQ(rec.lost[1], 1);
  CHECK_EQ(rec.seq[2], 4);
  CHECK_EQ(rec.lost[2], 0);
  CHECK_EQ(rec.seq[3], 7);
  CHECK_EQ(rec.lost[3], 2);
  CHECK_EQ(r.stats.lost, 3);
  /* After a flush the stream goes on from there. */
  offer(&r, 8);
  CHECK_EQ(rec.n, 5);
  CHECK_EQ(rec.lost[4], 0);
  offer(&r, 2);
  CHECK_EQ(r.stats.late, 1);
  urtp_reorder_destroy(&r);
}

static void offer_at(urtp_reorder_t *r, uint16_t seq, uint64_t now)
{
  static uint8_t b[64];
  make_pkt(b, seq);
  urtp_reorder_push_at(r, b, pkt_len(seq), seq, now, on_deliver, &rec);
}

/* Each gap waits its own time: expiry gives up the gap that packets have
 * waited behind for max_wait, not a gap that opened just now. */
static void test_expire_per_gap(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 64, 64) == 0);
  rec_reset();
  offer_at(&r, 1, 0);
  CHECK_EQ(urtp_reorder_deadline(&r, 100), UINT64_MAX);
  offer_at(&r, 3, 0);       /* gap at 2, known since t=0 */
  offer_at(&r, 5, 90);      /* gap at 4, known since t=90 */
  CHECK_EQ(urtp_reorder_deadline(&r, 100), 100);
  urtp_reorder_expire(&r, 99, 100, on_deliver, &rec);
  CHECK_EQ(rec.n, 1);       /* not yet */
  urtp_reorder_expire(&r, 100, 100, on_deliver, &rec);
  CHECK_EQ(rec.n, 2);       /* 2 given up, 3 delivered; 4 still awaited */
  CHECK_EQ(rec.seq[1], 3);
  CHECK_EQ(rec.lost[1], 1);
  CHECK_EQ(urtp_reorder_pending(&r), 1);
  CHECK_EQ(urtp_reorder_deadline(&r, 100), 190);
  offer_at(&r, 4, 120);     /* arrives in time: nothing more is lost */
  CHECK_EQ(rec.n, 4);
  CHECK_EQ(rec.seq[2], 4);
  CHECK_EQ(rec.seq[3], 5);
  CHECK_EQ(rec.lost[2], 0);
  CHECK_EQ(r.stats.lost, 1);
  CHECK_EQ(r.stats.late, 0);
  CHECK_EQ(urtp_reorder_deadline(&r, 100), UINT64_MAX);

  /* Several gaps that are all old go at once, in order. */
  offer_at(&r, 7, 200);
  offer_at(&r, 9, 210);
  offer_at(&r, 12, 220);
  urtp_reorder_expire(&r, 1000, 100, on_deliver, &rec);
  CHECK_EQ(urtp_reorder_pending(&r), 0);
  CHECK_EQ(rec.n, 7);
  CHECK_EQ(rec.seq[6], 12);
  CHECK_EQ(rec.lost[6], 2);
  CHECK_EQ(r.stats.lost, 5);
  urtp_reorder_destroy(&r);
}

/* An early packet larger than a slot cannot wait: it is lost when its turn
 * comes, at once, without holding up those behind it. */
static void test_oversize_early(void)
{
  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, 8, 16) == 0);
  rec_reset();
  /* pkt_len(seq) = 4 + seq % 29: 55 -> 30 bytes, 56 -> 31, 57 -> 32, 58 -> 4. */
  static const uint16_t a[] = { 55, 57, 58, 56 };
  const uint8_t *b = offer(&r, a[0]);
  CHECK(rec.n == 1 && rec.ptr[0] == b);   /* in order: no slot needed */
  offer_list(&r, a + 1, 3);
  CHECK_EQ(rec.n, 3);
  CHECK_EQ(rec.seq[1], 56);
  CHECK_EQ(rec.seq[2], 58);
  CHECK_EQ(rec.lost[2], 1);
  CHECK_EQ(r.stats.lost, 1);
  CHECK_EQ(r.stats.reordered, 1);
  CHECK_EQ(urtp_reorder_pending(&r), 0);
  offer(&r, 59);
  CHECK_EQ(rec.n, 4);
  CHECK_EQ(rec.lost[3], 0);
  CHECK_EQ(rec.bad_bytes, 0);
  urtp_reorder_destroy(&r);
}

/* Seeded impairment: drops, duplicates and reordering bounded by the
 * window (packet i never arrives after any packet >= i + window). Then
 * nothing that arrived is late, and the counts are exact. */
static void run_impaired(uint64_t seed, size_t window, uint16_t seq0, size_t n)
{
  enum { N = 20000 };
  static uint16_t order[2 * N];
  static uint64_t key[2 * N];
  static uint8_t dropped[N], delivered[N];
  REQUIRE(n <= N);
  uint64_t s = seed;
  size_t m = 0, dups = 0;
  memset(dropped, 0, sizeof(dropped));
  memset(delivered, 0, sizeof(delivered));
  for (size_t i = 0; i < n; i++) {
    unsigned roll = (unsigned)(tap_rand(&s) % 100);
    if (i > 0 && roll < 4) {
      dropped[i] = 1;
      continue;
    }
    int copies = roll < 7 ? 2 : 1;
    dups += (size_t)copies - 1;
    for (int c = 0; c < copies; c++) {
      order[m] = (uint16_t)i;
      /* packet 0 first: it anchors the numbering */
      key[m] = i == 0 ? 0 : i * 4096 + 1 + (window ? tap_rand(&s) % (window * 4096 - 4095) : 0);
      m++;
    }
  }
  /* Stable insertion by key (n is small enough). */
  for (size_t i = 1; i < m; i++) {
    uint16_t o = order[i];
    uint64_t k = key[i];
    size_t j = i;
    while (j > 0 && key[j - 1] > k) {
      order[j] = order[j - 1];
      key[j] = key[j - 1];
      j--;
    }
    order[j] = o;
    key[j] = k;
  }
  /* key[i] < (i + window) * 4096 <= key of any j >= i + window: bounded. */

  urtp_reorder_t r;
  REQUIRE(urtp_reorder_init(&r, window, 64) == 0);
  rec_reset();
  size_t last = 0;
  for (size_t i = 0; i < m; i++) {
    offer(&r, (uint16_t)(seq0 + order[i]));
    if (order[i] > last)
      last = order[i];
  }
  urtp_reorder_flush(&r, on_deliver, &rec);

  size_t lost_expect = 0;
  for (size_t i = 0; i < last; i++)
    lost_expect += dropped[i];
  int order_ok = 1, twice = 0;
  uint64_t sum_lost = 0;
  for (size_t i = 0; i < rec.n; i++) {
    size_t idx = (uint16_t)(rec.seq[i] - seq0);
    if (idx < N) {
      twice += delivered[idx];
      delivered[idx] = 1;
    }
    if (rec.ext[i] != 65536 + (uint64_t)seq0 + idx)
      order_ok = 0;
    if (i > 0 && rec.ext[i] != rec.ext[i - 1] + rec.lost[i] + 1)
      order_ok = 0;
    sum_lost += rec.lost[i];
  }
  size_t missing = 0;
  for (size_t i = 0; i <= last; i++)
    missing += !dropped[i] && !delivered[i];
  CHECK_EQ(order_ok, 1);
  CHECK_EQ(twice, 0);
  CHECK_EQ(missing, 0);
  CHECK_EQ(rec.bad_bytes, 0);
  CHECK_EQ(rec.n, last + 1 - lost_expect);
  CHECK_EQ(r.stats.delivered, rec.n);
  CHECK_EQ(r.stats.lost, lost_expect);
  CHECK_EQ(sum_lost, lost_expect);
  CHECK_EQ(r.stats.duplicates, dups);
  CHECK_EQ(r.stats.late, 0);
  CHECK_EQ(r.stats.resyncs, 0);
  /* Every arrival is delivered, a duplicate or late. */
  CHECK_EQ(r.stats.delivered + r.stats.duplicates + r.stats.late, m);
  urtp_reorder_destroy(&r);
}

static void test_impaired_w1(void) { run_impaired(1, 1, 0, 5000); }
static void test_impaired_w8(void) { run_impaired(2, 8, 65000, 20000); }
static void test_impaired_w64(void) { run_impaired(3, 64, 12345, 20000); }
static void test_impaired_w0(void) { run_impaired(4, 0, 65535, 5000); }
static void test_impaired_w1000(void) { run_impaired(5, 1000, 60000, 20000); }

int main(void)
{
  TAP_RUN(test_init_errors);
  TAP_RUN(test_in_order_zero_copy);
  TAP_RUN(test_all_permutations);
  TAP_RUN(test_duplicates_and_late);
  TAP_RUN(test_gap_beyond_window);
  TAP_RUN(test_big_jump);
  TAP_RUN(test_wrap);
  TAP_RUN(test_resync);
  TAP_RUN(test_window_zero);
  TAP_RUN(test_flush);
  TAP_RUN(test_expire_per_gap);
  TAP_RUN(test_oversize_early);
  TAP_RUN(test_impaired_w0);
  TAP_RUN(test_impaired_w1);
  TAP_RUN(test_impaired_w8);
  TAP_RUN(test_impaired_w64);
  TAP_RUN(test_impaired_w1000);
  return tap_done();
}
