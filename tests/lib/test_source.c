/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp_source: which SSRC a receiver follows (RFC 3550 A.1 and 8.2).
 *
 * Cases are tables: packets (SSRC, sequence number, arrival in ms) go in,
 * and the packets delivered, the events and the counters are checked.
 * Every packet is 8 bytes holding its own SSRC and sequence number, so a
 * delivered packet (even a kept copy) tells which one it was.
 */
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "urtp/source.h"

#define MS 1000000ull
#define MAXREC 8192

enum { PKT, BYE, EXPIRE, END };

typedef struct step {
  int op;
  uint32_t ssrc;
  uint16_t seq;
  uint64_t ms;
} step_t;

typedef struct delivered {
  uint32_t ssrc;
  uint16_t seq;
  uint64_t arrival_ms;
} delivered_t;

static struct {
  size_t n;
  delivered_t d[MAXREC];
  size_t nev;
  urtp_source_event_t ev[64];
  size_t ev_at[64];         /* deliveries before the event */
} rec;

static void on_deliver(void *user, const uint8_t *pkt, size_t len, uint64_t arrival)
{
  (void)user;
  if (len != 8 || rec.n == MAXREC)
    return;
  delivered_t *d = &rec.d[rec.n++];
  d->ssrc = (uint32_t)pkt[0] << 24 | (uint32_t)pkt[1] << 16 | (uint32_t)pkt[2] << 8 | pkt[3];
  d->seq = (uint16_t)(pkt[4] << 8 | pkt[5]);
  d->arrival_ms = arrival / MS;
}

static void on_event(void *user, const urtp_source_event_t *ev)
{
  (void)user;
  if (rec.nev < 64) {
    rec.ev_at[rec.nev] = rec.n;
    rec.ev[rec.nev++] = *ev;
  }
}

static void push(urtp_source_t *s, uint32_t ssrc, uint16_t seq, uint64_t ms)
{
  uint8_t p[8] = { (uint8_t)(ssrc >> 24), (uint8_t)(ssrc >> 16), (uint8_t)(ssrc >> 8),
                   (uint8_t)ssrc, (uint8_t)(seq >> 8), (uint8_t)seq, 0xAB, 0xCD };
  urtp_source_push(s, p, sizeof p, ssrc, seq, ms * MS, on_deliver, on_event, NULL);
}

static void run(urtp_source_t *s, const step_t *steps)
{
  for (; steps->op != END; steps++) {
    switch (steps->op) {
    case PKT:
      push(s, steps->ssrc, steps->seq, steps->ms);
      break;
    case BYE:
      urtp_source_bye(s, steps->ssrc, steps->ms * MS, on_deliver, on_event, NULL);
      break;
    case EXPIRE:
      urtp_source_expire(s, steps->ms * MS, on_deliver, on_event, NULL);
      break;
    }
  }
}

static bool start(urtp_source_t *s, int64_t pin, uint64_t timeout_ms, size_t hold)
{
  memset(&rec, 0, sizeof rec);
  urtp_source_config_t c = { .ssrc = pin, .timeout = timeout_ms * MS, .hold_packets = hold };
  return urtp_source_init(s, &c) == 0;
}

/* Delivered packets equal want (SSRC, seq pairs; ends at ssrc 0). */
static bool delivered_are(const delivered_t *want)
{
  size_t i = 0;
  for (; want[i].ssrc; i++)
    if (i >= rec.n || rec.d[i].ssrc != want[i].ssrc || rec.d[i].seq != want[i].seq) {
      printf("#   delivery %zu: got %s%08x/%u, want %08x/%u\n", i, i >= rec.n ? "none " : "",
             i < rec.n ? rec.d[i].ssrc : 0, i < rec.n ? rec.d[i].seq : 0, want[i].ssrc,
             want[i].seq);
      return false;
    }
  if (i != rec.n)
    printf("#   %zu deliveries, want %zu\n", rec.n, i);
  return i == rec.n;
}

/* received = delivered + foreign + stray + held_dropped + pending */
static uint64_t accounted(const urtp_source_t *s)
{
  const urtp_source_stats_t *st = &s->stats;
  return st->delivered + st->foreign + st->stray + st->held_dropped + st->pending;
}

enum { A = 0xA0A0A0A0u, B = 0xB0B0B0B0u, X = 0x77777777u };

/* A new SSRC is on probation: its first packet is kept and delivered with
 * the second, in sequence, so the stream starts at its first packet. */
static void test_probation(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 500, 0));
  push(&s, A, 100, 0);
  CHECK_EQ(rec.n, 0);
  CHECK_EQ(s.stats.pending, 1);
  CHECK(!urtp_source_current(&s, NULL));
  static const step_t st[] = { { PKT, A, 101, 1 }, { PKT, A, 102, 2 }, { END } };
  run(&s, st);
  static const delivered_t want[] = { { A, 100, 0 }, { A, 101, 0 }, { A, 102, 0 }, { 0 } };
  CHECK(delivered_are(want));
  CHECK_EQ(rec.d[0].arrival_ms, 0);   /* the kept copy keeps its arrival */
  CHECK_EQ(rec.nev, 1);
  CHECK_EQ(rec.ev[0].kind, URTP_SOURCE_FIRST);
  CHECK_EQ(rec.ev[0].new_ssrc, A);
  CHECK_EQ(rec.ev_at[0], 0);
  uint32_t cur;
  CHECK(urtp_source_current(&s, &cur) && cur == A);
  CHECK_EQ(s.stats.pending, 0);
  CHECK_EQ(accounted(&s), 3);
  urtp_source_destroy(&s);
}

/* A valid-looking packet of a stranger arrives first: it never validates,
 * and the real stream starts at its first packet (it once locked the
 * receiver on the stranger for good). */
static void test_stranger_first(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 500, 0));
  static const step_t st[] = {
    { PKT, X, 9000, 0 },
    { PKT, A, 1, 1 }, { PKT, A, 2, 1 }, { PKT, A, 3, 2 }, { END },
  };
  run(&s, st);
  static const delivered_t want[] = { { A, 1 }, { A, 2 }, { A, 3 }, { 0 } };
  CHECK(delivered_are(want));
  CHECK_EQ(rec.nev, 1);
  CHECK_EQ(s.stats.pending, 1);   /* the stranger's packet, until evicted */
  CHECK_EQ(accounted(&s), 4);
  urtp_source_destroy(&s);
}

/* A flood of random SSRCs and sequence numbers interleaved with the real
 * stream from its first packet: the stream is followed, every packet of it
 * delivered, the flood never delivered, and every packet accounted for. */
static void test_flood(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 500, 0));
  uint64_t rng = 42, total = 0;
  for (uint16_t i = 0; i < 1000; i++) {
    for (int k = 0; k < 3; k++) {
      uint32_t ssrc = (uint32_t)tap_rand(&rng);
      push(&s, ssrc == A ? ssrc + 1 : ssrc, (uint16_t)tap_rand(&rng), i);
      total++;
    }
    push(&s, A, (uint16_t)(5000 + i), i);
    total++;
  }
  bool ok = rec.n == 1000;
  for (size_t i = 0; ok && i < rec.n; i++)
    ok = rec.d[i].ssrc == A && rec.d[i].seq == 5000 + i;
  CHECK(ok);
  CHECK_EQ(rec.nev, 1);
  CHECK_EQ(s.stats.delivered, 1000);
  CHECK_EQ(accounted(&s), total);
  urtp_source_destroy(&s);
}

/* A sender restarts with a new SSRC while the old one was heard a moment
 * ago: the new one waits, kept, until the old one has been silent for the
 * timeout, then takes over with everything it sent, first packet first. */
static void test_restart_new_ssrc(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 500, 0));
  static const step_t st[] = {
    { PKT, A, 10, 0 }, { PKT, A, 11, 10 }, { PKT, A, 12, 20 },
    /* the restarted sender, 30 ms later */
    { PKT, B, 700, 50 }, { PKT, B, 701, 60 }, { PKT, B, 702, 70 },
    { EXPIRE, 0, 0, 519 },    /* A heard at 20: not yet */
    { PKT, B, 703, 400 },
    { EXPIRE, 0, 0, 520 },    /* now */
    { PKT, B, 704, 530 }, { END },
  };
  run(&s, st);
  static const delivered_t want[] = {
    { A, 10 }, { A, 11 }, { A, 12 },
    { B, 700 }, { B, 701 }, { B, 702 }, { B, 703 }, { B, 704 }, { 0 },
  };
  CHECK(delivered_are(want));
  CHECK_EQ(rec.nev, 2);
  CHECK_EQ(rec.ev[1].kind, URTP_SOURCE_CHANGE);
  CHECK_EQ(rec.ev[1].reason, URTP_SOURCE_REASON_TIMEOUT);
  CHECK_EQ(rec.ev[1].old_ssrc, A);
  CHECK_EQ(rec.ev[1].new_ssrc, B);
  CHECK_EQ(rec.ev_at[1], 3);
  CHECK_EQ(rec.d[3].arrival_ms, 50);
  CHECK_EQ(s.stats.changes, 1);
  CHECK_EQ(accounted(&s), 8);
  CHECK_EQ(s.stats.pending, 0);
  urtp_source_destroy(&s);
}

/* The same without a timer: the new source's own next packet after the
 * timeout takes over. And the deadline says when. */
static void test_takeover_on_packet(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 300, 0));
  static const step_t st[] = {
    { PKT, A, 1, 0 }, { PKT, A, 2, 100 },
    { PKT, B, 50, 150 }, { PKT, B, 51, 200 }, { END },
  };
  run(&s, st);
  CHECK_EQ(urtp_source_deadline(&s), 400 * MS);
  push(&s, B, 52, 399);
  CHECK_EQ(rec.n, 2);
  push(&s, B, 53, 401);
  CHECK_EQ(rec.n, 6);
  CHECK_EQ(urtp_source_deadline(&s), UINT64_MAX);
  urtp_source_destroy(&s);
}

/* A stranger streaming in sequence while the real source is alive never
 * takes over; it keeps at most the hold, the rest is dropped and counted,
 * and a hold gone stale is emptied. */
static void test_stranger_while_alive(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 200, 8));
  for (uint16_t i = 0; i < 100; i++) {
    push(&s, A, i, i * 10);
    push(&s, X, (uint16_t)(3000 + i), i * 10 + 5);
  }
  bool ok = rec.n == 100;
  for (size_t i = 0; ok && i < rec.n; i++)
    ok = rec.d[i].ssrc == A && rec.d[i].seq == i;
  CHECK(ok);
  CHECK_EQ(rec.nev, 1);
  CHECK(s.stats.pending <= 8);
  CHECK(s.stats.held_dropped + s.stats.foreign >= 100 - 8);
  CHECK_EQ(accounted(&s), 200);
  urtp_source_destroy(&s);
}

/* One packet far ahead (a stray, or a forgery) is dropped alone: nothing
 * else is lost or delayed (it used to cost ~1000 real packets and 30000
 * phantom losses downstream). */
static void test_stray_jump(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 500, 0));
  static const step_t st[] = {
    { PKT, A, 1, 0 }, { PKT, A, 2, 0 }, { PKT, A, 3, 0 },
    { PKT, A, 30003, 1 },
    { PKT, A, 4, 2 }, { PKT, A, 5, 3 }, { END },
  };
  run(&s, st);
  static const delivered_t want[] = { { A, 1 }, { A, 2 }, { A, 3 }, { A, 4 }, { A, 5 }, { 0 } };
  CHECK(delivered_are(want));
  CHECK_EQ(s.stats.stray, 1);
  CHECK_EQ(rec.nev, 1);
  CHECK_EQ(accounted(&s), 6);
  urtp_source_destroy(&s);
}

/* A jump the next packet confirms is a new numbering (a sender restarted
 * with the same SSRC): an event, then both packets. Backwards too. */
static void test_confirmed_jump(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 500, 0));
  static const step_t st[] = {
    { PKT, A, 1, 0 }, { PKT, A, 2, 0 },
    { PKT, A, 40000, 1 }, { PKT, A, 40001, 1 }, { PKT, A, 40002, 2 },
    { PKT, A, 7, 3 }, { PKT, A, 8, 3 }, { END },
  };
  run(&s, st);
  static const delivered_t want[] = {
    { A, 1 }, { A, 2 }, { A, 40000 }, { A, 40001 }, { A, 40002 }, { A, 7 }, { A, 8 }, { 0 },
  };
  CHECK(delivered_are(want));
  CHECK_EQ(rec.nev, 3);
  CHECK_EQ(rec.ev[1].kind, URTP_SOURCE_RESTART);
  CHECK_EQ(rec.ev[1].reason, URTP_SOURCE_REASON_SEQ_JUMP);
  CHECK_EQ(rec.ev[1].old_seq, 2);
  CHECK_EQ(rec.ev[1].new_seq, 40000);
  CHECK_EQ(rec.ev_at[1], 2);
  CHECK_EQ(rec.ev[2].kind, URTP_SOURCE_RESTART);
  CHECK_EQ(rec.ev_at[2], 5);
  CHECK_EQ(s.stats.restarts, 2);
  CHECK_EQ(s.stats.stray, 0);
  urtp_source_destroy(&s);
}

/* Reordering, duplicates and ordinary gaps pass through untouched: the
 * reorder window deals with them. */
static void test_reordering_passes(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 500, 0));
  static const step_t st[] = {
    { PKT, A, 65534, 0 }, { PKT, A, 65535, 0 }, { PKT, A, 1, 0 }, { PKT, A, 0, 0 },
    { PKT, A, 0, 0 }, { PKT, A, 900, 0 }, { PKT, A, 2, 0 }, { END },
  };
  run(&s, st);
  static const delivered_t want[] = {
    { A, 65534 }, { A, 65535 }, { A, 1 }, { A, 0 }, { A, 0 }, { A, 900 }, { A, 2 }, { 0 },
  };
  CHECK(delivered_are(want));
  CHECK_EQ(rec.nev, 1);
  urtp_source_destroy(&s);
}

/* A pinned SSRC is followed from its first packet; nothing else ever. */
static void test_pinned(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, B, 500, 0));
  static const step_t st[] = {
    { PKT, A, 1, 0 }, { PKT, A, 2, 0 }, { PKT, A, 3, 0 },
    { PKT, B, 9, 1 }, { PKT, A, 4, 2000 }, { PKT, A, 5, 2000 }, { PKT, B, 10, 3000 }, { END },
  };
  run(&s, st);
  static const delivered_t want[] = { { B, 9 }, { B, 10 }, { 0 } };
  CHECK(delivered_are(want));
  CHECK_EQ(s.stats.foreign, 5);
  CHECK_EQ(rec.nev, 1);
  CHECK_EQ(rec.ev[0].new_ssrc, B);
  urtp_source_destroy(&s);

  /* after its BYE: its stragglers go on; back with a jump, it restarted */
  REQUIRE(start(&s, B, 500, 0));
  static const step_t st2[] = {
    { PKT, B, 9, 0 }, { BYE, B, 0, 1 }, { PKT, B, 10, 2 }, { PKT, B, 30000, 3 },
    { PKT, B, 30001, 4 }, { END },
  };
  run(&s, st2);
  static const delivered_t want2[] = { { B, 9 }, { B, 10 }, { B, 30000 }, { B, 30001 }, { 0 } };
  CHECK(delivered_are(want2));
  REQUIRE(rec.nev == 2);
  CHECK_EQ(rec.ev[1].kind, URTP_SOURCE_RESTART);
  CHECK_EQ(rec.ev[1].reason, URTP_SOURCE_REASON_BYE);
  CHECK_EQ(s.stats.restarts, 1);
  urtp_source_destroy(&s);
}

/* A BYE of the current source lets the waiting one take over at once. */
static void test_bye(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 5000, 0));
  static const step_t st[] = {
    { PKT, A, 1, 0 }, { PKT, A, 2, 0 },
    { PKT, B, 1, 10 }, { PKT, B, 2, 10 }, { PKT, B, 3, 10 },
    { BYE, X, 0, 11 },        /* not the current source: nothing */
    { BYE, A, 0, 12 }, { PKT, B, 4, 13 }, { END },
  };
  run(&s, st);
  static const delivered_t want[] = {
    { A, 1 }, { A, 2 }, { B, 1 }, { B, 2 }, { B, 3 }, { B, 4 }, { 0 },
  };
  CHECK(delivered_are(want));
  CHECK_EQ(rec.nev, 2);
  CHECK_EQ(rec.ev[1].reason, URTP_SOURCE_REASON_BYE);
  CHECK_EQ(s.stats.byes, 1);
  urtp_source_destroy(&s);
}

/* After its BYE, the source's packets still on their way (overtaken by
 * the BYE, or retransmissions) are delivered, late ones too; the next
 * candidate to validate takes over at once; the source itself back with
 * a jump in its numbering restarts at once. */
static void test_bye_stragglers(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 5000, 0));
  static const step_t st[] = {
    { PKT, A, 1, 0 }, { PKT, A, 2, 0 }, { PKT, A, 4, 1 },
    { BYE, A, 0, 2 },
    { PKT, A, 5, 3 }, { PKT, A, 3, 4 },           /* after the BYE: still A's */
    { PKT, A, 30000, 5 },                         /* back, renumbered */
    { PKT, A, 30001, 5 },
    { BYE, A, 0, 6 },
    { PKT, B, 7, 7 }, { PKT, B, 8, 8 },           /* validates: at once */
    { END },
  };
  run(&s, st);
  static const delivered_t want[] = {
    { A, 1 }, { A, 2 }, { A, 4 }, { A, 5 }, { A, 3 }, { A, 30000 }, { A, 30001 },
    { B, 7 }, { B, 8 }, { 0 },
  };
  CHECK(delivered_are(want));
  REQUIRE(rec.nev == 3);
  CHECK_EQ(rec.ev[1].kind, URTP_SOURCE_RESTART);
  CHECK_EQ(rec.ev[1].reason, URTP_SOURCE_REASON_BYE);
  CHECK_EQ(rec.ev_at[1], 5);
  CHECK_EQ(rec.ev[2].kind, URTP_SOURCE_CHANGE);
  CHECK_EQ(rec.ev[2].reason, URTP_SOURCE_REASON_BYE);
  CHECK_EQ(rec.ev[2].new_ssrc, B);
  CHECK_EQ(s.stats.byes, 2);
  CHECK_EQ(s.stats.restarts, 1);
  CHECK_EQ(accounted(&s), 9);
  urtp_source_destroy(&s);
}

/* A source that sends on after its BYE, later than bye_grace (a quarter of
 * the timeout: 1250 ms here), has not left: a candidate that validates
 * afterwards waits for it to go quiet, as before the BYE. New packets
 * within the grace are stragglers and change nothing. */
static void test_bye_revoked(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 5000, 0));
  static const step_t st[] = {
    { PKT, A, 1, 0 }, { PKT, A, 2, 0 },
    { BYE, A, 0, 10 },
    { PKT, A, 3, 500 },                           /* a straggler: still left */
    { PKT, A, 4, 2000 },                          /* sending on: not left */
    { PKT, B, 1, 2100 }, { PKT, B, 2, 2100 },     /* validates, waits */
    { PKT, A, 5, 2200 },
    { END },
  };
  run(&s, st);
  static const delivered_t want[] = {
    { A, 1 }, { A, 2 }, { A, 3 }, { A, 4 }, { A, 5 }, { 0 },
  };
  CHECK(delivered_are(want));
  CHECK_EQ(rec.nev, 1);
  CHECK_EQ(s.stats.byes, 1);
  CHECK_EQ(s.stats.byes_revoked, 1);
  CHECK(!s.left);
  CHECK_EQ(s.stats.changes, 0);
  CHECK_EQ(s.stats.pending, 2);
  urtp_source_destroy(&s);
}

/* Random traffic of a few SSRCs with random numbers and times, the
 * leading sender changing now and then: every packet is accounted for
 * exactly once, and sources change. */
static void test_accounting(void)
{
  urtp_source_t s;
  REQUIRE(start(&s, -1, 50, 16));
  uint64_t rng = 7, t = 0;
  uint16_t seq[4] = { 0, 100, 200, 300 };
  unsigned leader = 0;
  for (int i = 0; i < 200000; i++) {
    uint64_t r = tap_rand(&rng);
    if (r % 2000 == 0)
      leader = (leader + 1) % 4;
    unsigned who = (r >> 4) % 64 == 0 ? (unsigned)(r >> 8) % 4 : leader;
    uint16_t sq = (r >> 12) % 50 == 0 ? (uint16_t)(r >> 16) : seq[who]++;
    t += (r >> 40) % 3;
    if (rec.n >= MAXREC - 64)
      rec.n = 0;
    push(&s, 0x1000u + who, sq, t);
    if ((r >> 32) % 1000 == 0)
      urtp_source_expire(&s, t * MS, on_deliver, on_event, NULL);
  }
  CHECK_EQ(accounted(&s), 200000);
  CHECK(s.stats.changes > 10);
  CHECK(s.stats.delivered > 100000);
  urtp_source_destroy(&s);
}

int main(void)
{
  TAP_RUN(test_probation);
  TAP_RUN(test_stranger_first);
  TAP_RUN(test_flood);
  TAP_RUN(test_restart_new_ssrc);
  TAP_RUN(test_takeover_on_packet);
  TAP_RUN(test_stranger_while_alive);
  TAP_RUN(test_stray_jump);
  TAP_RUN(test_confirmed_jump);
  TAP_RUN(test_reordering_passes);
  TAP_RUN(test_pinned);
  TAP_RUN(test_bye);
  TAP_RUN(test_bye_stragglers);
  TAP_RUN(test_bye_revoked);
  TAP_RUN(test_accounting);
  return tap_done();
}
