/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp_recvstream: datagrams in, access units out, on a virtual clock.
 *
 * Senders here are lib's own packetizer (urtp_pay) with their own SSRC,
 * sequence numbers and timestamps; every datagram goes into the stream
 * with the time it "arrived". What comes out is checked byte for byte
 * against the access units sent (Annex-B, 4-byte start codes), its
 * presentation time against the arrival clock, its flags and the events,
 * and the counters add up to the datagrams offered.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "urtp/batch.h"
#include "urtp/ccfb.h"
#include "urtp/hdrext.h"
#include "urtp/pay.h"
#include "urtp/net.h"
#include "urtp/recvstream.h"
#include "urtp/rtcpio.h"
#include "urtp/rtp.h"
#include "urtp/rtx.h"
#include "urtp/srtp.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define PT 96
#define MAX_AU 65536
#define MAX_FRAMES 512

/* ---- access units ---- */

typedef struct au {
  size_t annexb_len;
  urtp_nal_t nals[8];
  size_t n;
  bool key;
  uint8_t annexb[MAX_AU];   /* as the receiver must output it */
  uint8_t raw[MAX_AU];      /* NAL units back to back */
} au_t;

static uint64_t rng = 1;

/* H.265 NAL unit of type with len bytes (header included), emulation-free
 * body (never two zero bytes in a row). */
static void add_nal(au_t *a, unsigned type, size_t len)
{
  size_t off = a->n ? (size_t)(a->nals[a->n - 1].data + a->nals[a->n - 1].len - a->raw) : 0;
  uint8_t *p = a->raw + off;
  p[0] = (uint8_t)(type << 1);
  p[1] = 1;
  for (size_t i = 2; i < len; i++)
    p[i] = (uint8_t)(1 + tap_rand(&rng) % 255);
  if (type <= 31)
    p[2] |= 0x80;   /* first_slice_segment_in_pic_flag: one slice a picture */
  a->nals[a->n].data = p;
  a->nals[a->n].len = len;
  a->n++;
  static const uint8_t sc[4] = { 0, 0, 0, 1 };
  memcpy(a->annexb + a->annexb_len, sc, 4);
  memcpy(a->annexb + a->annexb_len + 4, p, len);
  a->annexb_len += 4 + len;
}

/* Access unit i of a stream with a keyframe every `gop`: VPS, SPS, PPS and
 * an IDR slice, else one trailing slice; sizes spread over several FUs. */
static void make_au(au_t *a, int i, int gop)
{
  memset(a, 0, offsetof(au_t, annexb));
  a->key = i % gop == 0;
  if (a->key) {
    add_nal(a, 32, 24);
    add_nal(a, 33, 40);
    add_nal(a, 34, 12);
    add_nal(a, 19, 6000 + (size_t)(tap_rand(&rng) % 4000));
  } else {
    add_nal(a, 1, 200 + (size_t)(tap_rand(&rng) % 3000));
  }
}

/* ---- a sender ---- */

typedef struct sender {
  urtp_pay_t pay;
  urtp_batch_t batch;
  uint32_t ts0;
  uint8_t dg[64][1500];     /* the datagrams of the last AU */
  size_t dg_len[64], ndg;
} sender_t;

static void sender_init(sender_t *s, uint32_t ssrc, uint16_t seq, uint32_t ts0)
{
  memset(s, 0, sizeof(*s));
  urtp_pay_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = ssrc, .seq_start = seq,
                          .mtu = 1400 };
  urtp_pay_init(&s->pay, &c);
  urtp_batch_init(&s->batch);
  s->ts0 = ts0;
}

static void sender_free(sender_t *s)
{
  urtp_pay_destroy(&s->pay);
  urtp_batch_free(&s->batch);
}

/* Packetizes access unit `a`, frame number i (30 fps timestamps). */
static void sender_au(sender_t *s, const au_t *a, int i)
{
  urtp_batch_clear(&s->batch);
  urtp_pay_nals(&s->pay, a->nals, a->n, s->ts0 + (uint32_t)i * 3000u, true, &s->batch);
  s->ndg = 0;
  for (size_t k = 0; k < s->batch.npkts && k < 64; k++)
    s->dg_len[s->ndg++] = urtp_batch_copy_pkt(&s->batch, k, s->dg[k], 1500);
}

/* ---- the receiver's side ---- */

typedef struct frame {
  uint8_t *data;
  size_t len;
  uint64_t pts, missing;
  uint32_t flags, ssrc;
} frame_t;

static frame_t frames[MAX_FRAMES];
static size_t nframes;

static void drain(urtp_recvstream_t *r)
{
  urtp_recvstream_frame_t f;
  while (urtp_recvstream_pop(r, &f)) {
    if (nframes < MAX_FRAMES) {
      frame_t *o = &frames[nframes++];
      o->data = malloc(f.au.len);
      memcpy(o->data, f.au.data, f.au.len);
      o->len = f.au.len;
      o->pts = f.pts;
      o->flags = f.flags;
      o->ssrc = f.ssrc;
      o->missing = f.missing;
    }
    urtp_depay_release(f.au.data);
  }
}

static void frames_reset(void)
{
  for (size_t i = 0; i < nframes; i++)
    free(frames[i].data);
  nframes = 0;
}

static void deliver(urtp_recvstream_t *r, sender_t *s, uint64_t now)
{
  for (size_t k = 0; k < s->ndg; k++)
    urtp_recvstream_push_one(r, s->dg[k], s->dg_len[k], NULL, now);
  drain(r);
}

static urtp_recvstream_t *mkstream(const urtp_recvstream_config_t *extra)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS };
  if (extra)
    c = *extra;
  urtp_recvstream_t *r = NULL;
  return urtp_recvstream_new(&c, &r) == 0 ? r : NULL;
}

/* Every datagram offered is in exactly one counter (recvstream.h). */
static uint64_t accounted(urtp_recvstream_t *r)
{
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  const urtp_reorder_stats_t *q = &st.depay.seq;
  return st.zrtp + st.zrtp_dropped + st.srtp.auth_fail + st.srtp.replay + st.srtp.other +
         st.malformed_rtp + st.wrong_pt + st.source.foreign + st.source.stray +
         st.source.held_dropped + st.source.pending + q->delivered + q->duplicates + q->late +
         st.waiting + st.rtcp + st.rtcp_bad;
}

/* ---- tests ---- */

/* A stream in order: every access unit byte-exact, the first anchored on
 * its arrival, each next one its timestamp distance later; parameter sets
 * from the session description flagged once, before the first. */
static void test_basic(void)
{
  static const uint8_t params[] = { 0, 0, 0, 1, 0x40, 0x01, 0xaa };
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .params = params,
                                 .params_len = sizeof params };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  size_t plen;
  const uint8_t *p = urtp_recvstream_params(r, &plen);
  CHECK(p && plen == sizeof params && memcmp(p, params, plen) == 0);
  frames_reset();
  static sender_t s;
  static au_t a[40];
  sender_init(&s, 0x1111, 65000, 0xfffff000u);
  for (int i = 0; i < 40; i++) {
    make_au(&a[i], i, 10);
    sender_au(&s, &a[i], i);
    deliver(r, &s, 5 * SEC + (uint64_t)i * SEC / 30);
  }
  REQUIRE(nframes == 40);
  bool ok = true;
  for (int i = 0; i < 40; i++) {
    ok &= frames[i].len == a[i].annexb_len &&
          memcmp(frames[i].data, a[i].annexb, a[i].annexb_len) == 0;
    int64_t want = (int64_t)(5 * SEC + (uint64_t)i * SEC / 30);
    ok &= llabs((int64_t)frames[i].pts - want) <= 1;
    ok &= frames[i].ssrc == 0x1111;
    ok &= !!(frames[i].flags & URTP_AU_KEYFRAME) == a[i].key;
    ok &= !!(frames[i].flags & URTP_FRAME_PARAMS) == (i == 0);
    ok &= !!(frames[i].flags & URTP_FRAME_DISCONT) == (i == 0);
  }
  CHECK(ok);
  urtp_recvstream_event_t ev;
  REQUIRE(urtp_recvstream_next_event(r, &ev));
  CHECK_EQ(ev.kind, URTP_RECVSTREAM_EV_SOURCE);
  CHECK_EQ(ev.source.kind, URTP_SOURCE_FIRST);
  CHECK_EQ(ev.source.new_ssrc, 0x1111);
  CHECK(!urtp_recvstream_next_event(r, &ev));
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.frames, 40);
  CHECK_EQ(st.depay.seq.lost, 0);
  CHECK_EQ(st.depay.seq.reordered, 0);
  CHECK(st.have_source && st.ssrc == 0x1111);
  CHECK_EQ(accounted(r), st.datagrams);
  sender_free(&s);
  urtp_recvstream_free(r);
  frames_reset();
}

/* The sender restarts with a new SSRC, sequence numbers and timestamps
 * 100 ms after its last packet: the new stream waits for the source
 * timeout, then comes out from its first access unit on, flagged, with
 * its parameter sets, presentation times on the arrival clock. */
static void test_restart_new_ssrc(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .source_timeout = 300 * MS };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  frames_reset();
  static sender_t s1, s2;
  static au_t a[30];
  sender_init(&s1, 0xAAAA, 100, 1000);
  sender_init(&s2, 0xBBBB, 40000, 0x70000000u);
  uint64_t t0 = 3 * SEC, t;
  for (int i = 0; i < 15; i++) {
    make_au(&a[i], i, 30);
    sender_au(&s1, &a[i], i);
    deliver(r, &s1, t0 + (uint64_t)i * SEC / 30);
  }
  uint64_t last_a = t0 + 14 * SEC / 30;
  uint64_t b0 = last_a + 100 * MS;
  for (int i = 0; i < 15; i++) {
    make_au(&a[15 + i], i, 30);
    sender_au(&s2, &a[15 + i], i);
    t = b0 + (uint64_t)i * SEC / 30;
    if (urtp_recvstream_deadline(r) <= t) {
      CHECK_EQ(urtp_recvstream_deadline(r), last_a + 300 * MS);
      urtp_recvstream_expire(r, urtp_recvstream_deadline(r));
      drain(r);
    }
    deliver(r, &s2, t);
  }
  REQUIRE(nframes == 30);
  bool ok = true;
  for (int i = 0; i < 30; i++) {
    ok &= frames[i].len == a[i].annexb_len &&
          memcmp(frames[i].data, a[i].annexb, a[i].annexb_len) == 0;
    uint64_t want = i < 15 ? t0 + (uint64_t)i * SEC / 30 : b0 + (uint64_t)(i - 15) * SEC / 30;
    ok &= llabs((int64_t)frames[i].pts - (int64_t)want) <= 1;
    ok &= frames[i].ssrc == (i < 15 ? 0xAAAAu : 0xBBBBu);
    ok &= !!(frames[i].flags & URTP_FRAME_DISCONT) == (i == 0 || i == 15);
  }
  CHECK(ok);
  urtp_recvstream_event_t ev;
  REQUIRE(urtp_recvstream_next_event(r, &ev));
  REQUIRE(urtp_recvstream_next_event(r, &ev));
  CHECK_EQ(ev.source.kind, URTP_SOURCE_CHANGE);
  CHECK_EQ(ev.source.reason, URTP_SOURCE_REASON_TIMEOUT);
  CHECK_EQ(ev.source.old_ssrc, 0xAAAA);
  CHECK_EQ(ev.source.new_ssrc, 0xBBBB);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.depay.seq.lost, 0);
  CHECK_EQ(st.depay.dropped_aus, 0);
  CHECK_EQ(accounted(r), st.datagrams);
  sender_free(&s1);
  sender_free(&s2);
  urtp_recvstream_free(r);
  frames_reset();
}

/* The sender restarts keeping its SSRC (fixed ssrc property) but with new
 * sequence numbers and timestamps: the jump is confirmed, the numbering
 * and the timing start over, presentation stays on the arrival clock (it
 * used to jump by hours). */
static void test_restart_same_ssrc(void)
{
  urtp_recvstream_t *r = mkstream(NULL);
  REQUIRE(r);
  frames_reset();
  static sender_t s1, s2;
  static au_t a[20];
  sender_init(&s1, 0xCCCC, 10, 5);
  sender_init(&s2, 0xCCCC, 30000, 0x9a000000u);
  for (int i = 0; i < 20; i++) {
    make_au(&a[i], i % 10, 10);
    sender_t *s = i < 10 ? &s1 : &s2;
    sender_au(s, &a[i], i % 10);
    deliver(r, s, SEC + (uint64_t)i * SEC / 30);
  }
  REQUIRE(nframes == 20);
  bool ok = true;
  for (int i = 0; i < 20; i++) {
    ok &= frames[i].len == a[i].annexb_len &&
          memcmp(frames[i].data, a[i].annexb, a[i].annexb_len) == 0;
    ok &= llabs((int64_t)frames[i].pts - (int64_t)(SEC + (uint64_t)i * SEC / 30)) <= 1;
    ok &= !!(frames[i].flags & URTP_FRAME_DISCONT) == (i == 0 || i == 10);
  }
  CHECK(ok);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.source.restarts, 1);
  CHECK_EQ(st.depay.seq.lost, 0);
  CHECK_EQ(st.timing_resets, 0);   /* the restart re-anchored, not a jump */
  sender_free(&s1);
  sender_free(&s2);
  urtp_recvstream_free(r);
  frames_reset();
}

/* A stray valid RTP packet of another SSRC first, then random datagrams
 * between the stream's packets: the stream comes out whole. */
static void test_strangers(void)
{
  urtp_recvstream_t *r = mkstream(NULL);
  REQUIRE(r);
  frames_reset();
  static sender_t s, x;
  static au_t a[30], junk;
  sender_init(&s, 0x1234, 1, 1);
  sender_init(&x, 0xBAD, 777, 1);
  make_au(&junk, 1, 10);
  sender_au(&x, &junk, 0);
  urtp_recvstream_push_one(r, x.dg[0], x.dg_len[0], NULL, SEC / 2);
  uint8_t garbage[200];
  for (int i = 0; i < 30; i++) {
    make_au(&a[i], i, 10);
    sender_au(&s, &a[i], i);
    uint64_t t = SEC + (uint64_t)i * SEC / 30;
    for (size_t k = 0; k < s.ndg; k++) {
      for (int g = 0; g < 3; g++) {
        size_t n = 1 + tap_rand(&rng) % sizeof garbage;
        for (size_t b = 0; b < n; b++)
          garbage[b] = (uint8_t)tap_rand(&rng);
        if (g == 0 && n >= 12)
          garbage[0] = 0x80;   /* looks like RTP */
        urtp_recvstream_push_one(r, garbage, n, NULL, t);
      }
      urtp_recvstream_push_one(r, s.dg[k], s.dg_len[k], NULL, t);
    }
    drain(r);
  }
  REQUIRE(nframes == 30);
  bool ok = true;
  for (int i = 0; i < 30; i++)
    ok &= frames[i].len == a[i].annexb_len &&
          memcmp(frames[i].data, a[i].annexb, a[i].annexb_len) == 0 &&
          frames[i].ssrc == 0x1234;
  CHECK(ok);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK(st.malformed_rtp + st.wrong_pt + st.source.foreign + st.source.pending > 0);
  CHECK_EQ(st.depay.dropped_aus, 0);
  CHECK_EQ(accounted(r), st.datagrams);
  sender_free(&s);
  sender_free(&x);
  urtp_recvstream_free(r);
  frames_reset();
}

/* One packet of the stream's SSRC 30000 numbers ahead: dropped alone,
 * nothing lost, nothing late (it used to cost a thousand real packets and
 * count 30000 phantom losses). */
static void test_far_ahead(void)
{
  urtp_recvstream_t *r = mkstream(NULL);
  REQUIRE(r);
  frames_reset();
  static sender_t s;
  static au_t a[20];
  sender_init(&s, 0x4242, 500, 0);
  for (int i = 0; i < 20; i++) {
    make_au(&a[i], i, 10);
    sender_au(&s, &a[i], i);
    uint64_t t = SEC + (uint64_t)i * SEC / 30;
    if (i == 10) {
      uint8_t fake[1500];
      memcpy(fake, s.dg[0], s.dg_len[0]);
      uint16_t seq = (uint16_t)(urtp_rtp_peek_seq(fake) + 30000);
      fake[2] = (uint8_t)(seq >> 8);
      fake[3] = (uint8_t)seq;
      urtp_recvstream_push_one(r, fake, s.dg_len[0], NULL, t);
    }
    deliver(r, &s, t);
  }
  CHECK_EQ(nframes, 20);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.source.stray, 1);
  CHECK_EQ(st.depay.seq.lost, 0);
  CHECK_EQ(st.depay.seq.late, 0);
  CHECK_EQ(accounted(r), st.datagrams);
  sender_free(&s);
  urtp_recvstream_free(r);
  frames_reset();
}

/* Joining mid-GOP with wait-for-keyframe: the first access unit out is the
 * keyframe, and its presentation time is its own arrival, not that of the
 * first packet received (the anchor matches what is output). */
static void test_keyframe_anchor(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .wait_for_keyframe = true };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  frames_reset();
  static sender_t s;
  static au_t a[60];
  sender_init(&s, 0x77, 9, 90000);
  for (int i = 0; i < 60; i++) {
    make_au(&a[i], i + 10, 45);   /* keyframe at i = 35 */
    sender_au(&s, &a[i], i);
    deliver(r, &s, 2 * SEC + (uint64_t)i * SEC / 30);
  }
  REQUIRE(nframes == 25);
  CHECK(frames[0].flags & URTP_AU_KEYFRAME);
  CHECK(memcmp(frames[0].data, a[35].annexb, a[35].annexb_len) == 0);
  bool ok = true;
  for (int i = 0; i < 25; i++)
    ok &= llabs((int64_t)frames[i].pts - (int64_t)(2 * SEC + (uint64_t)(35 + i) * SEC / 30)) <= 1;
  CHECK(ok);
  sender_free(&s);
  urtp_recvstream_free(r);
  frames_reset();
}

/* After a pause the caller drops what queued meanwhile and resyncs: no
 * loss is counted, the next whole access unit comes out flagged, and one
 * whose head was among what was dropped does not come out at all;
 * presentation carries on from the arrivals. */
static void test_resync(void)
{
  urtp_recvstream_t *r = mkstream(NULL);
  REQUIRE(r);
  frames_reset();
  static sender_t s;
  static au_t a[40];
  sender_init(&s, 0x99, 1, 0);
  for (int i = 0; i < 40; i++) {
    make_au(&a[i], i, 10);
    sender_au(&s, &a[i], i);
    uint64_t t = SEC + (uint64_t)i * SEC / 30;
    if (i == 10)
      urtp_recvstream_resync(r, 10);
    if (i >= 10 && i < 20)
      continue;   /* "paused": never read */
    if (i == 20) {
      /* only the tail of this one: its head went with the pause */
      REQUIRE(s.ndg > 2);
      for (size_t k = s.ndg / 2; k < s.ndg; k++)
        urtp_recvstream_push_one(r, s.dg[k], s.dg_len[k], NULL, t);
      drain(r);
      continue;
    }
    deliver(r, &s, t);
  }
  CHECK_EQ(nframes, 29);
  CHECK(frames[10].flags & URTP_FRAME_DISCONT);
  CHECK(memcmp(frames[10].data, a[21].annexb, a[21].annexb_len) == 0);
  CHECK(llabs((int64_t)frames[10].pts - (int64_t)(SEC + 21 * SEC / 30)) <= 1);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.depay.seq.lost, 0);
  CHECK_EQ(st.depay.dropped_aus, 1);
  CHECK_EQ(st.flushed, 10);
  sender_free(&s);
  urtp_recvstream_free(r);
  frames_reset();
}

/* Loss, reordering and duplication through the reorder window and the
 * latency deadline: what comes out is byte-exact, and every datagram is
 * accounted for. */
static void test_impaired(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 20 * MS, .loss_policy = URTP_LOSS_DROP_AU };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  frames_reset();
  static sender_t s;
  static au_t a[200];
  sender_init(&s, 0x5150, 60000, 0);
  size_t exact = 0, mismatched = 0;
  uint64_t t = SEC;
  for (int i = 0; i < 200; i++) {
    make_au(&a[i], i, 25);
    sender_au(&s, &a[i], i);
    /* swap neighbours, drop or duplicate now and then */
    for (size_t k = 0; k < s.ndg; k++) {
      uint64_t x = tap_rand(&rng) % 100;
      size_t j = (x < 5 && k + 1 < s.ndg) ? k + 1 : k;
      if (x >= 5 && x < 8)
        continue;
      urtp_recvstream_push_one(r, s.dg[j], s.dg_len[j], NULL, t);
      if (j != k)
        urtp_recvstream_push_one(r, s.dg[k], s.dg_len[k], NULL, t), k++;
      if (x >= 8 && x < 10)
        urtp_recvstream_push_one(r, s.dg[k], s.dg_len[k], NULL, t);
    }
    t += SEC / 30;
    if (urtp_recvstream_deadline(r) <= t)
      urtp_recvstream_expire(r, t);
    drain(r);
  }
  urtp_recvstream_flush(r);
  drain(r);
  /* every frame out is one of those sent, whole */
  for (size_t f = 0; f < nframes; f++) {
    bool found = false;
    for (int i = 0; i < 200 && !found; i++)
      found = frames[f].len == a[i].annexb_len &&
              memcmp(frames[f].data, a[i].annexb, a[i].annexb_len) == 0;
    found ? exact++ : mismatched++;
  }
  printf("# %zu of 200 access units out, all whole: %s\n", nframes, mismatched ? "no" : "yes");
  CHECK_EQ(mismatched, 0);
  CHECK(nframes > 50);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK(st.depay.seq.lost > 0 && st.depay.seq.reordered > 0 && st.depay.seq.duplicates > 0);
  CHECK_EQ(accounted(r), st.datagrams);
  sender_free(&s);
  urtp_recvstream_free(r);
  frames_reset();
}

/* SRTP with a static key: protected packets come out byte-exact; tampered
 * ones and replays are counted and go nowhere. */
static void test_srtp(void)
{
#ifdef URTP_HAVE_SRTP
  uint8_t key[30];
  for (int i = 0; i < 30; i++)
    key[i] = (uint8_t)(i * 7 + 1);
  urtp_srtp_config_t in = { .profile = URTP_SRTP_AES_CM_128_HMAC_SHA1_80,
                            .dir = URTP_SRTP_INBOUND, .key = key, .key_len = 30,
                            .any_ssrc = true };
  urtp_srtp_config_t out = in;
  out.dir = URTP_SRTP_OUTBOUND;
  urtp_srtp_t tx;
  REQUIRE(urtp_srtp_init(&tx, &out) == 0);
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .srtp = &in };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  frames_reset();
  static sender_t s;
  static au_t a[10];
  sender_init(&s, 0x5eed, 1, 0);
  size_t tampered = 0, replayed = 0;
  for (int i = 0; i < 10; i++) {
    make_au(&a[i], i, 10);
    sender_au(&s, &a[i], i);
    for (size_t k = 0; k < s.ndg; k++) {
      uint8_t p[1600];
      memcpy(p, s.dg[k], s.dg_len[k]);
      int n = urtp_srtp_protect(&tx, p, s.dg_len[k], sizeof p);
      REQUIRE(n > 0);
      uint8_t bad[1600];
      memcpy(bad, p, (size_t)n);
      bad[20] ^= 1;
      urtp_recvstream_push_one(r, bad, (size_t)n, NULL, SEC);
      tampered++;
      uint8_t keep[1600];
      memcpy(keep, p, (size_t)n);
      urtp_recvstream_push_one(r, p, (size_t)n, NULL, SEC);
      if (k == 0) {
        urtp_recvstream_push_one(r, keep, (size_t)n, NULL, SEC);
        replayed++;
      }
    }
    drain(r);
  }
  CHECK_EQ(nframes, 10);
  bool ok = true;
  for (int i = 0; i < 10 && i < (int)nframes; i++)
    ok &= frames[i].len == a[i].annexb_len &&
          memcmp(frames[i].data, a[i].annexb, a[i].annexb_len) == 0;
  CHECK(ok);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.srtp.auth_fail, tampered);
  CHECK_EQ(st.srtp.replay, replayed);
  CHECK_EQ(accounted(r), st.datagrams);
  urtp_srtp_destroy(&tx);
  sender_free(&s);
  urtp_recvstream_free(r);
  frames_reset();
#endif
}

/* Statistics read from another thread while the stream runs: every
 * snapshot is consistent (its counters add up). */

/* A sender report (and SDES CNAME) from ssrc into buf; returns its length. */
static size_t sr_packet(uint8_t *buf, size_t cap, uint32_t ssrc, uint64_t ntp, uint32_t ts,
                        const char *cname)
{
  urtp_rtcp_writer_t w;
  urtp_rtcp_sr_t sr = { .ssrc = ssrc, .ntp = ntp, .rtp_ts = ts, .packets = 77, .octets = 7777 };
  urtp_rtcp_writer_init(&w, buf, cap);
  urtp_rtcp_write_sr(&w, &sr, NULL, 0);
  urtp_rtcp_write_sdes_cname(&w, ssrc, cname);
  return w.err ? 0 : w.len;
}

/* RTCP on the followed source: reception statistics exact (one packet
 * lost of a known number), its SR and CNAME kept (arriving among the RTP
 * datagrams, RFC 5761), our RR carrying them back (LSR, DLSR), a broken
 * compound counted apart from RTP, and its BYE handing over to the next
 * source at once instead of after the source timeout. */
static void test_rtcp(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .source_timeout = 2 * SEC,
                                 .rtcp_ssrc = 0xabcd, .cname = "me@test", .rtcp_mux = true };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  CHECK_EQ(urtp_recvstream_rtcp_ssrc(r), 0xabcd);
  frames_reset();
  static sender_t s, s2;
  static au_t a[20];
  sender_init(&s, 0x1111, 65530, 1000);
  uint64_t sent = 0, t = SEC;
  for (int i = 0; i < 20; i++) {
    make_au(&a[i], i, 10);
    sender_au(&s, &a[i], i);
    t = SEC + (uint64_t)i * SEC / 30;
    for (size_t k = 0; k < s.ndg; k++, sent++)
      if (!(i == 7 && k == 0)) /* one packet lost */
        urtp_recvstream_push_one(r, s.dg[k], s.dg_len[k], NULL, t);
    drain(r);
  }
  urtp_recvstream_expire(r, t + SEC);
  drain(r);

  uint8_t buf[512];
  const uint64_t ntp = 0xe1234567abcd0000ull;
  size_t n = sr_packet(buf, sizeof buf, 0x1111, ntp, 1000 + 19 * 3000, "alice@host");
  REQUIRE(n > 0);
  urtp_recvstream_push_one(r, buf, n, NULL, t + 10 * MS);
  static const uint8_t broken[] = { 0x80, 0xc8, 0x00, 0x09, 1, 2, 3, 4 };
  memcpy(buf, broken, sizeof broken);
  urtp_recvstream_push_one(r, buf, sizeof broken, NULL, t + 11 * MS);

  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.rtcp, 1);
  CHECK_EQ(st.rtcp_bad, 1);
  CHECK_EQ(st.malformed_rtp, 0);
  CHECK_EQ(st.rtcp_sr, 1);
  CHECK(st.sr_ntp == ntp);
  CHECK_EQ(st.sr_rtp_ts, 1000 + 19 * 3000);
  CHECK_EQ(st.sr_packets, 77);
  CHECK_EQ(st.sr_octets, 7777);
  CHECK(st.sr_arrival == t + 10 * MS);
  CHECK(strcmp(st.cname, "alice@host") == 0);
  CHECK(st.have_reception);
  CHECK_EQ(st.reception.ssrc, 0x1111);
  CHECK_EQ(st.reception.lost, 1);
  CHECK_EQ(accounted(r), st.datagrams);

  /* our report, 250 ms after the SR: the block says what happened */
  int len = urtp_recvstream_rtcp_report(r, t + 260 * MS, false, buf, sizeof buf);
  REQUIRE(len > 0);
  urtp_rtcp_info_t info;
  REQUIRE(urtp_rtcp_parse(buf, (size_t)len, 0, &info) == 0);
  REQUIRE(info.nreports == 1 && info.nblocks == 1);
  CHECK(!info.reports[0].is_sr);
  CHECK_EQ(info.reports[0].sr.ssrc, 0xabcd);
  const urtp_rtcp_block_t *b = &info.blocks[0];
  CHECK_EQ(b->ssrc, 0x1111);
  CHECK_EQ(b->lost, 1);
  CHECK_EQ(b->ext_max_seq, 65530 + sent - 1); /* across the wrap: cycles counted */
  CHECK_EQ(b->fraction, (uint8_t)(256 / sent));
  CHECK_EQ(b->lsr, urtp_ntp_mid32(ntp));
  CHECK_EQ(b->dlsr, 16384); /* 250 ms in 1/65536 s */
  REQUIRE(info.ncnames == 1);
  CHECK_EQ(info.cnames[0].ssrc, 0xabcd);
  CHECK(info.cnames[0].len == 7 && memcmp(info.cnames[0].value, "me@test", 7) == 0);
  CHECK(!info.bye);
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.rtcp_sent, 1);

  /* a stranger's BYE changes nothing; the source's own hands over at once:
   * a new sender 100 ms later is out after its probation, not after the
   * 2 s source timeout */
  urtp_rtcp_writer_t w;
  uint32_t who = 0x9999;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  urtp_rtcp_write_rr(&w, who, NULL, 0);
  urtp_rtcp_write_bye(&w, &who, 1, NULL);
  CHECK_EQ(urtp_recvstream_push_rtcp(r, buf, w.len, t + 300 * MS), 0);
  who = 0x1111;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  urtp_rtcp_write_rr(&w, who, NULL, 0);
  urtp_rtcp_write_bye(&w, &who, 1, "restarting");
  CHECK_EQ(urtp_recvstream_push_rtcp(r, buf, w.len, t + 300 * MS), 0);
  size_t before = nframes;
  sender_init(&s2, 0x2222, 100, 555);
  for (int i = 0; i < 3; i++) {
    sender_au(&s2, &a[i], i);
    deliver(r, &s2, t + 400 * MS + (uint64_t)i * SEC / 30);
  }
  CHECK_EQ(nframes - before, 3);
  CHECK(nframes > before && frames[before].ssrc == 0x2222);
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.rtcp_bye, 1);
  CHECK(st.ssrc == 0x2222);
  CHECK_EQ(st.rtcp_sr, 0);          /* the new source has not reported */
  CHECK(st.cname[0] == '\0');
  CHECK_EQ(st.reception.ssrc, 0x2222);
  CHECK_EQ(st.reception.lost, 0);

  /* leaving: RR, SDES and our BYE */
  len = urtp_recvstream_rtcp_report(r, t + 500 * MS, true, buf, sizeof buf);
  REQUIRE(len > 0);
  REQUIRE(urtp_rtcp_parse(buf, (size_t)len, 0, &info) == 0);
  CHECK(info.bye && info.nbyes == 1 && info.byes[0] == 0xabcd);
  CHECK_EQ(info.blocks[0].ssrc, 0x2222);
  CHECK_EQ(info.blocks[0].lsr, 0);
  CHECK_EQ(urtp_recvstream_rtcp_report(r, t, false, buf, 20), -ENOSPC);

  sender_free(&s);
  sender_free(&s2);
  urtp_recvstream_free(r);
  frames_reset();
}

static size_t others, other_len;

static void count_other(void *user, const urtp_dgram_t *d)
{
  (void)user;
  others++;
  other_len = d->len;
}

/* RTCP on the RTP port (RFC 5761) over real sockets on loopback: the
 * sender's report among its RTP datagrams reaches the stream; our report
 * leaves from the RTP port (the sender's socket is connected to it, so it
 * hears nothing from anywhere else) to where the report came from; on the
 * sender's shared socket only RTCP is returned, the rest goes to `other`. */
static void test_rtcp_mux_sockets(void)
{
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .dscp = -1, .tx_mode = URTP_IO_PLAIN,
                            .rx_mode = URTP_IO_MMSG };
  static urtp_sock_t rtp, snd;
  REQUIRE(urtp_sock_open(&rtp, &rc) == 0);
  int port = urtp_sock_local_port(&rtp);
  urtp_sock_config_t sc = rc;
  sc.remote_addr = "127.0.0.1";
  sc.remote_port = (uint16_t)port;
  REQUIRE(urtp_sock_open(&snd, &sc) == 0);
  static urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 64, 1500) == 0);

  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .rtcp_mux = true };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  urtp_rtcpio_config_t ic = { .mux = &rtp };
  static urtp_rtcpio_t io;
  REQUIRE(urtp_rtcpio_open(&io, &ic, 0) == 0);
  CHECK_EQ(urtp_sock_local_port(&io.sock), port);

  static sender_t s;
  static au_t a;
  sender_init(&s, 0x1111, 10, 1000);
  size_t sent = 0;
  uint64_t t = SEC;
  for (int i = 0; i < 3; i++) {
    make_au(&a, i, 10);
    sender_au(&s, &a, i);
    for (size_t k = 0; k < s.ndg; k++, sent++)
      CHECK(urtp_sock_sendto(&snd, s.dg[k], s.dg_len[k], NULL, 0) == (int)s.dg_len[k]);
  }
  uint8_t buf[512];
  size_t n = sr_packet(buf, sizeof buf, 0x1111, 0xe1234567abcd0000ull, 1000 + 2 * 3000, "a@b");
  CHECK(urtp_sock_sendto(&snd, buf, n, NULL, 0) == (int)n);
  sent++;
  size_t got = 0;
  for (int tries = 0; got < sent && tries < 50; tries++) {
    int k = urtp_sock_recv(&rtp, &rx, 100);
    if (k > 0) {
      urtp_recvstream_push_rx(r, &rtp, &rx, (size_t)k, t);
      got += (size_t)k;
    }
  }
  CHECK_EQ(got, sent);
  CHECK(urtp_recvstream_rtcp_pending(r));
  /* 10 s on io's clock: our first report is due */
  CHECK_EQ(urtp_recvstream_rtcp_service(r, &io, t + 10 * MS, 10 * SEC), 1);
  CHECK(!urtp_recvstream_rtcp_pending(r));
  CHECK_EQ(io.sent, 1);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.rtcp, 1);
  CHECK_EQ(st.rtcp_sr, 1);
  CHECK_EQ(st.malformed_rtp, 0);

  int k = urtp_sock_recv(&snd, &rx, 1000);
  REQUIRE(k == 1);
  urtp_rtcp_info_t info;
  REQUIRE(urtp_rtcp_parse(rx.dgrams[0].data, rx.dgrams[0].len, 0, &info) == 0);
  REQUIRE(info.nreports == 1 && info.nblocks == 1);
  CHECK_EQ(info.blocks[0].ssrc, 0x1111);
  CHECK_EQ(info.blocks[0].lost, 0);

  /* the sender's side: its RTCP reads the RTP socket it sends on */
  urtp_rtcpio_config_t oc = { .mux = &snd, .other = count_other, .we_send = true };
  static urtp_rtcpio_t sio;
  REQUIRE(urtp_rtcpio_open(&sio, &oc, 0) == 0);
  static const uint8_t zrtp_like[16] = { 0x10, 0x00, 0x00, 0x01, 'Z', 'R', 'T', 'P' };
  int len = urtp_recvstream_rtcp_report(r, t + 20 * MS, false, buf, sizeof buf);
  REQUIRE(len > 0);
  struct sockaddr_storage dst;
  socklen_t dl = sizeof dst;
  REQUIRE(getsockname(snd.fd, (struct sockaddr *)&dst, &dl) == 0);
  CHECK(urtp_sock_sendto(&rtp, zrtp_like, sizeof zrtp_like, (struct sockaddr *)&dst, dl) > 0);
  CHECK(urtp_sock_sendto(&rtp, buf, (size_t)len, (struct sockaddr *)&dst, dl) == len);
  int rtcps = 0;
  for (int tries = 0; (rtcps < 1 || others < 1) && tries < 20; tries++) {
    int m = urtp_rtcpio_recv(&sio, 100);
    for (int i = 0; i < m; i++) {
      CHECK(urtp_rtcp_is_muxed(sio.rx.dgrams[i].data, sio.rx.dgrams[i].len));
      rtcps++;
    }
  }
  CHECK_EQ(rtcps, 1);
  CHECK_EQ(others, 1);
  CHECK_EQ(other_len, sizeof zrtp_like);
  CHECK_EQ(sio.not_rtcp, 1);

  urtp_rtcpio_close(&sio);
  urtp_rtcpio_close(&io);
  sender_free(&s);
  urtp_recvstream_free(r);
  frames_reset();
  urtp_rx_destroy(&rx);
  urtp_sock_close(&snd);
  urtp_sock_close(&rtp);
}

/* A receiving stream sending congestion feedback over real sockets to
 * `peer`, and a sender (ssrc, RTP numbers from seq) numbering its packets
 * by transport-wide number (element 3) from tw0: what the feedback tests
 * share. */
typedef struct {
  urtp_sock_t peer;
  urtp_rx_t rx;
  urtp_recvstream_t *r;
  urtp_rtcpio_t io;
  sender_t s;
  urtp_hdrext_block_t blk;
  urtp_tw_counter_t tw;
} ccfb_rig_t;

static void rig_open(ccfb_rig_t *g, const urtp_recvstream_config_t *c, uint32_t ssrc,
                     uint16_t seq, urtp_tw_counter_t tw0)
{
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .dscp = -1, .tx_mode = URTP_IO_PLAIN,
                            .rx_mode = URTP_IO_MMSG };
  REQUIRE(urtp_sock_open(&g->peer, &rc) == 0);
  REQUIRE(urtp_rx_init(&g->rx, 16, 1500) == 0);
  g->r = mkstream(c);
  REQUIRE(g->r);
  urtp_rtcpio_config_t ic = { .bind_addr = "127.0.0.1", .remote_addr = "127.0.0.1",
                              .remote_port = (uint16_t)urtp_sock_local_port(&g->peer) };
  REQUIRE(urtp_rtcpio_open(&g->io, &ic, 0) == 0);
  urtp_recvstream_rtcp_service(g->r, &g->io, 0, 0);   /* learns the destination */
  sender_init(&g->s, ssrc, seq, 1000);
  REQUIRE(urtp_hdrext_seal(NULL, 3, &g->blk) == 0);
  g->tw = tw0;
  urtp_pay_set_hdrext(&g->s.pay, &g->blk, &g->tw);
}

static void rig_close(ccfb_rig_t *g)
{
  urtp_rtcpio_close(&g->io);
  sender_free(&g->s);
  urtp_recvstream_free(g->r);
  frames_reset();
  urtp_rx_destroy(&g->rx);
  urtp_sock_close(&g->peer);
}

/* Congestion control feedback over real sockets: packets numbered by a
 * transport-wide sequence number (element 3), some lost, one reordered,
 * arriving 1 ms apart; after each marker bit a compound with RR, SDES,
 * transport-wide feedback (FMT 15) and RFC 8888 feedback (FMT 11) goes to
 * the RTCP destination, and the two together say of every packet whether
 * and when it arrived. A lone forged jump changes nothing. */
static void test_ccfb_feedback(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .twcc_id = 3, .rfc8888 = true };
  static ccfb_rig_t g;
  /* RTP numbers wrap, and transport-wide ones too */
  rig_open(&g, &c, 0x2222, 65500, 65530);
  urtp_recvstream_t *r = g.r;
  static au_t a;

  /* what was sent (by transport-wide number - 65530): lost or arrival */
  static int64_t arrived[4096];
  static bool seen[4096], told[4096];
  size_t total = 0, compounds = 0, bad = 0;
  uint64_t t = SEC;
  uint8_t held[1500];
  size_t held_len = 0, held_idx = 0;
  for (int i = 0; i < 12; i++) {
    make_au(&a, i, 10);
    sender_au(&g.s, &a, i);
    for (size_t k = 0; k < g.s.ndg; k++, total++) {
      arrived[total] = INT64_MIN;
      if (total % 13 == 7)
        continue;                               /* lost */
      if (total % 29 == 3 && k + 2 < g.s.ndg && (total + 1) % 13 != 7) {
        memcpy(held, g.s.dg[k], g.s.dg_len[k]);     /* comes after the next */
        held_len = g.s.dg_len[k];
        held_idx = total;
        continue;
      }
      t += MS;
      urtp_recvstream_push_one(r, g.s.dg[k], g.s.dg_len[k], NULL, t);
      arrived[total] = (int64_t)(t / 1000);
      if (held_len) {
        t += MS;
        urtp_recvstream_push_one(r, held, held_len, NULL, t);
        arrived[held_idx] = (int64_t)(t / 1000);
        held_len = 0;
      }
    }
    drain(r);
    if (i == 5) {
      /* a stranger's lone jump, with the source's SSRC and a number it
       * sent (so it is taken in, then a duplicate) */
      urtp_tw_counter_t far = 20000;
      urtp_pay_set_hdrext(&g.s.pay, &g.blk, &far);
      uint16_t save = g.s.pay.seq;
      g.s.pay.seq = (uint16_t)(save - 1);
      au_t one;
      memset(&one, 0, offsetof(au_t, annexb));
      add_nal(&one, 1, 100);
      urtp_batch_clear(&g.s.batch);
      urtp_pay_nals(&g.s.pay, one.nals, one.n, g.s.ts0 + (uint32_t)i * 3000u, false, &g.s.batch);
      size_t n = urtp_batch_copy_pkt(&g.s.batch, 0, g.s.dg[0], 1500);
      urtp_recvstream_push_one(r, g.s.dg[0], n, NULL, t);
      g.s.pay.seq = save;
      urtp_pay_set_hdrext(&g.s.pay, &g.blk, &g.tw);
      drain(r);
    }
    if (arrived[total - 1] != INT64_MIN)
      CHECK_EQ(urtp_recvstream_feedback_deadline(r), 0);   /* a marker came */
    else if (i == 11)
      t += URTP_RECVSTREAM_CCFB_MAX_INTERVAL;              /* due all the same */
    urtp_recvstream_rtcp_service(r, &g.io, t, t);
    CHECK(arrived[total - 1] == INT64_MIN ||
          urtp_recvstream_feedback_deadline(r) == UINT64_MAX);
    int n = urtp_sock_recv(&g.peer, &g.rx, 1000);
    for (int d = 0; d < n; d++, compounds++) {
      const uint8_t *b = g.rx.dgrams[d].data;
      size_t len = g.rx.dgrams[d].len, off = 0;
      bool rr = false;
      while (off + 4 <= len) {
        size_t plen = ((size_t)(b[off + 2] << 8 | b[off + 3]) + 1) * 4;
        REQUIRE(off + plen <= len);
        rr |= b[off + 1] == 201;
        static urtp_ccfb_pkt_t fb[URTP_TWCC_MAX_PACKETS];
        size_t got = 0;
        if (b[off + 1] == URTP_RTCP_RTPFB && (b[off] & 31) == URTP_CCFB_FMT_TWCC) {
          urtp_twcc_info_t info;
          CHECK(urtp_twcc_parse(b + off, plen, &info, fb, URTP_TWCC_MAX_PACKETS, &got) == 0);
          CHECK_EQ(info.media_ssrc, 0x2222);
          for (size_t j = 0; j < got; j++) {
            size_t x = (uint16_t)(fb[j].seq - 65530);
            if (x >= total || told[x] ||
                fb[j].received != (arrived[x] != INT64_MIN) ||
                (fb[j].received && fb[j].arrival_us / 250 != arrived[x] / 250))
              bad++;
            told[x] = true;
          }
        } else if (b[off + 1] == URTP_RTCP_RTPFB && (b[off] & 31) == URTP_CCFB_FMT_RFC8888) {
          uint32_t sender;
          uint64_t rep;
          CHECK(urtp_rfc8888_parse(b + off, plen, &sender, &rep, fb, URTP_TWCC_MAX_PACKETS,
                                   &got) == 0);
          CHECK_EQ(sender, urtp_recvstream_rtcp_ssrc(r));
          for (size_t j = 0; j < got; j++) {
            /* RTP numbers from 65500, one per packet: the same order */
            size_t x = (uint16_t)(fb[j].seq - 65500);
            if (x >= total || seen[x] || fb[j].ssrc != 0x2222 ||
                fb[j].received != (arrived[x] != INT64_MIN))
              bad++;
            /* within a 1/1024 s step of the truth */
            if (fb[j].received &&
                llabs((long long)(fb[j].arrival_us - arrived[x]) -
                      (long long)(rep - t / 1000)) > 1000)
              bad++;
            seen[x] = true;
          }
        }
        off += plen;
      }
      CHECK(rr);
    }
  }
  /* everything up to the last that arrived (what is lost after it is
   * known lost only once a later one arrives) */
  size_t missing = 0, last = total - 1;
  while (arrived[last] == INT64_MIN)
    last--;
  for (size_t x = 0; x <= last; x++)
    missing += !told[x] + !seen[x];
  CHECK_EQ(bad, 0);
  CHECK_EQ(missing, 0);
  CHECK(compounds >= 10);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.ccfb_sent, compounds);
  CHECK_EQ(st.ccfb_strays, 1);
  CHECK_EQ(st.twcc_recorded, total - total / 13 - (total % 13 > 7) + 1);

  rig_close(&g);
}

static int64_t real_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Datagrams handed over in one batch (one `now`) carry the kernel's times
 * (urtp_dgram_t.stamp_ns): the feedback reports those, 4 ms apart, not
 * the batch's one time; without them, the batch's time for all. */
static void stamps_case(bool stamped)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .twcc_id = 3 };
  static ccfb_rig_t g;
  rig_open(&g, &c, 0x3333, 100, 1);
  urtp_recvstream_t *r = g.r;
  static au_t a;
  /* one picture for the source layer's probation (what it holds back is
   * handed on later, at the batch's time), then the one measured */
  make_au(&a, 0, 10);
  sender_au(&g.s, &a, 0);
  for (size_t k = 0; k < g.s.ndg; k++)
    urtp_recvstream_push_one(r, g.s.dg[k], g.s.dg_len[k], NULL, SEC / 2);
  drain(r);
  urtp_recvstream_rtcp_service(r, &g.io, SEC / 2, SEC / 2);
  REQUIRE(urtp_sock_recv(&g.peer, &g.rx, 1000) > 0);
  make_au(&a, 10, 10);                          /* a key picture: several packets */
  sender_au(&g.s, &a, 1);
  REQUIRE(g.s.ndg >= 3);
  /* read at once, taken by the kernel 4 ms apart, the last 1 ms before
   * they were read */
  urtp_dgram_t d[64];
  size_t n = g.s.ndg < 64 ? g.s.ndg : 64;
  int64_t real = real_ns();
  for (size_t k = 0; k < n; k++)
    d[k] = (urtp_dgram_t){ g.s.dg[k], g.s.dg_len[k], NULL,
                           stamped ? real - (int64_t)(n - k) * 4000000 + 3000000 : 0 };
  uint64_t t = SEC;
  urtp_recvstream_push(r, d, n, t);
  drain(r);
  urtp_recvstream_rtcp_service(r, &g.io, t, t);
  int got = urtp_sock_recv(&g.peer, &g.rx, 1000);
  REQUIRE(got > 0);
  const uint8_t *b = g.rx.dgrams[0].data;
  size_t len = g.rx.dgrams[0].len, off = 0, seen = 0;
  while (off + 4 <= len) {
    size_t plen = ((size_t)(b[off + 2] << 8 | b[off + 3]) + 1) * 4;
    REQUIRE(off + plen <= len);
    static urtp_ccfb_pkt_t fb[URTP_TWCC_MAX_PACKETS];
    size_t m = 0;
    urtp_twcc_info_t info;
    if (b[off + 1] == URTP_RTCP_RTPFB && (b[off] & 31) == URTP_CCFB_FMT_TWCC &&
        urtp_twcc_parse(b + off, plen, &info, fb, URTP_TWCC_MAX_PACKETS, &m) == 0) {
      for (size_t j = 1; j < m; j++) {
        int64_t step = fb[j].arrival_us - fb[j - 1].arrival_us;
        /* the kernel's 4 ms (in 250 us steps, and what reading the real
         * clock twice in between took), or nothing */
        CHECK(stamped ? llabs((long long)step - 4000) <= 500 : step == 0);
      }
      /* first to last: (n - 1) x 4 ms, or nothing */
      CHECK(llabs((long long)(fb[m - 1].arrival_us - fb[0].arrival_us) -
                  (long long)(stamped ? (n - 1) * 4000 : 0)) <= 1000);
      seen += m;
    }
    off += plen;
  }
  CHECK_EQ(seen, n);
  rig_close(&g);
}

static void test_ccfb_kernel_stamps(void)
{
  stamps_case(true);
  stamps_case(false);
}

static atomic_int reader_stop;
static atomic_size_t torn, snapshots;

static void *reader(void *arg)
{
  urtp_recvstream_t *r = arg;
  while (!reader_stop) {
    urtp_recvstream_stats_t st;
    urtp_recvstream_stats(r, &st);
    const urtp_reorder_stats_t *q = &st.depay.seq;
    uint64_t sum = st.malformed_rtp + st.wrong_pt + st.source.foreign + st.source.stray +
                   st.source.held_dropped + st.source.pending + q->delivered + q->duplicates +
                   q->late;
    torn += sum != st.datagrams;
    snapshots++;
  }
  return NULL;
}

static void test_stats_thread(void)
{
  urtp_recvstream_t *r = mkstream(NULL);
  REQUIRE(r);
  frames_reset();
  pthread_t th;
  reader_stop = 0;
  torn = snapshots = 0;
  REQUIRE(pthread_create(&th, NULL, reader, r) == 0);
  /* the reader runs before the pushes start: on a loaded machine it was
   * first scheduled after all 3000 (CI: 0 snapshots read meanwhile) */
  for (int w = 0; w < 10000 && !atomic_load(&snapshots); w++)
    usleep(1000);
  static sender_t s;
  static au_t a;
  sender_init(&s, 0x31, 1, 0);
  for (int i = 0; i < 3000; i++) {
    make_au(&a, i, 30);
    sender_au(&s, &a, i);
    deliver(r, &s, SEC + (uint64_t)i * SEC / 30);
    frames_reset();
  }
  reader_stop = 1;
  pthread_join(th, NULL);
  printf("# %zu snapshots read meanwhile\n", (size_t)atomic_load(&snapshots));
  CHECK_EQ(torn, 0);
  CHECK(snapshots > 0);
  sender_free(&s);
  urtp_recvstream_free(r);
}

/* One H.265 picture in one packet: seq, 30 fps timestamps. */
static size_t tiny_pkt(uint8_t *buf, uint8_t pt, uint32_t ssrc, uint16_t seq, uint32_t ts)
{
  urtp_rtp_write_fixed(buf, pt, true, seq, ts, ssrc);
  static const uint8_t nal[] = { 0x02, 0x01, 0x80, 0x55, 0x66, 0x77 };
  memcpy(buf + 12, nal, sizeof nal);
  return 12 + sizeof nal;
}

/* Retransmissions that come far behind the newest packet (a large first
 * picture, NACKs waiting for the sender's first report): two in sequence
 * looked like a sequence jump confirmed, and the stream restarted (losing
 * what was pending). They are the followed source's: late, nothing more. */
static void test_rtx_far_behind(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 10 * SEC, .nack = true, .rtx = true, .rtx_pt = 97 };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  uint8_t pkt[64];
  uint64_t now = SEC;
  for (uint16_t s = 1000; s < 1000 + 6000; s++) {
    if (s == 1010 || s == 1011)
      continue;
    size_t n = tiny_pkt(pkt, PT, 0xabc, s, s * 3000u);
    urtp_recvstream_push_one(r, pkt, n, NULL, now);
    now += 100000;
    drain(r);
  }
  /* the answers to both, as RTX: OSN in front of the original payload */
  for (uint16_t s = 1010; s <= 1011; s++) {
    uint8_t orig[64], rtx[80];
    size_t n = tiny_pkt(orig, PT, 0xabc, s, s * 3000u);
    int m = urtp_rtx_wrap(orig, n, 97, 0xdef, (uint16_t)(s - 1000), rtx, sizeof rtx);
    REQUIRE(m > 0);
    urtp_recvstream_push_one(r, rtx, (size_t)m, NULL, now);
  }
  drain(r);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.source.restarts, 0);
  CHECK(st.have_source && st.ssrc == 0xabc);
  CHECK_EQ(st.rtx, 2);
  CHECK_EQ(st.rtx_ssrc, 0xdef);
  /* the reordering gave up on them 4096 packets on: late */
  CHECK_EQ(st.depay.seq.late, 2);
  CHECK_EQ(st.depay.seq.lost, 2);
  CHECK_EQ(accounted(r) + st.rtx_dropped, st.datagrams);
  urtp_recvstream_free(r);
  frames_reset();
}

/* One Opus packet of 20 ms. */
static size_t opus_pkt(uint8_t *buf, uint32_t ssrc, uint16_t seq)
{
  urtp_rtp_write_fixed(buf, PT, false, seq, (uint32_t)seq * 960u, ssrc);
  static const uint8_t payload[] = { 0xfc, 0x01, 0x02, 0x03 };
  memcpy(buf + 12, payload, sizeof payload);
  return 12 + sizeof payload;
}

/* What a frame says is missing before it: the sequence numbers given up
 * since the previous frame (across the 16-bit wrap), none after a new
 * source, the gap waited for as long as the latency set while running
 * says; RTCP on the RTP port without rtcp_mux is malformed. */
static void test_missing(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_OPUS, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS, .source_timeout = 100 * MS };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  frames_reset();
  uint8_t pkt[64];
  uint64_t now = SEC;
  /* 65530 .. 65545 (wrapping), without 65534, 65535, 0 and 7 */
  for (uint32_t i = 65530; i < 65546; i++) {
    uint16_t seq = (uint16_t)i;
    if (seq == 65534 || seq == 65535 || seq == 0 || seq == 7)
      continue;
    urtp_recvstream_push_one(r, pkt, opus_pkt(pkt, 0x77, seq), NULL, now);
    now += 20 * MS;
    urtp_recvstream_expire(r, now);
    drain(r);
  }
  /* the gap at 7 is given up once it has waited the latency */
  CHECK_EQ(nframes, 10);
  now += 50 * MS;
  urtp_recvstream_expire(r, now);
  drain(r);
  REQUIRE(nframes == 12);
  CHECK_EQ(frames[0].missing, 0);
  CHECK_EQ(frames[4].missing, 3);   /* seq 1 after 65533 */
  CHECK_EQ(frames[10].missing, 1);  /* seq 8 after 6 */
  uint64_t sum = 0;
  for (size_t i = 0; i < nframes; i++)
    sum += frames[i].missing;
  CHECK_EQ(sum, 4);

  /* a shorter latency while running: the next gap is given up after it */
  urtp_recvstream_set_latency(r, 5 * MS);
  urtp_recvstream_push_one(r, pkt, opus_pkt(pkt, 0x77, 11), NULL, now);
  CHECK(urtp_recvstream_deadline(r) <= now + 5 * MS);
  urtp_recvstream_expire(r, now + 5 * MS);
  drain(r);
  REQUIRE(nframes == 13);
  CHECK_EQ(frames[12].missing, 1);

  /* another source takes over: nothing is missing before its first */
  now += 200 * MS;
  for (uint16_t seq = 4000; seq < 4004; seq++) {
    urtp_recvstream_push_one(r, pkt, opus_pkt(pkt, 0x88, seq), NULL, now);
    now += 20 * MS;
    drain(r);
  }
  REQUIRE(nframes == 17);
  CHECK_EQ(frames[13].ssrc, 0x88);
  CHECK_EQ(frames[13].missing, 0);
  CHECK(frames[13].flags & URTP_FRAME_DISCONT);

  /* a sender report on the RTP port (no rtcp_mux): malformed, and no
   * packet of the stream */
  uint8_t sr[28] = { 0x80, 200, 0, 6, 0, 0, 0, 0x88 };
  urtp_recvstream_push_one(r, sr, sizeof sr, NULL, now);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.malformed_rtp, 1);
  CHECK_EQ(st.rtcp_sr, 0);
  CHECK_EQ(accounted(r), st.datagrams);
  urtp_recvstream_free(r);
  frames_reset();
}

/* A burst of 200 Opus packets in one batch (UDP GRO hands over that many
 * at once): the batch stops while the output queue is nearly full and
 * resumes after popping; nothing is dropped. */
static void test_burst(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_OPUS, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS };
  urtp_recvstream_t *r = mkstream(&c);
  REQUIRE(r);
  frames_reset();
  static uint8_t pkts[200][32];
  static urtp_dgram_t d[200];
  for (uint16_t i = 0; i < 200; i++) {
    d[i].data = pkts[i];
    d[i].len = opus_pkt(pkts[i], 0x55, (uint16_t)(1000 + i));
  }
  urtp_recvstream_push(r, d, 200, SEC);
  CHECK(urtp_recvstream_held(r) > 0);
  size_t rounds = 0;
  do {
    drain(r);
    rounds++;
  } while (urtp_recvstream_resume(r) > 0 && rounds < 100);
  drain(r);
  CHECK_EQ(nframes, 200);
  CHECK_EQ(urtp_recvstream_held(r), 0);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  CHECK_EQ(st.depay.dropped_aus, 0);
  CHECK_EQ(accounted(r), st.datagrams);
  urtp_recvstream_free(r);
  frames_reset();
}

int main(void)
{
  TAP_RUN(test_basic);
  TAP_RUN(test_rtx_far_behind);
  TAP_RUN(test_missing);
  TAP_RUN(test_burst);
  TAP_RUN(test_restart_new_ssrc);
  TAP_RUN(test_restart_same_ssrc);
  TAP_RUN(test_strangers);
  TAP_RUN(test_far_ahead);
  TAP_RUN(test_keyframe_anchor);
  TAP_RUN(test_resync);
  TAP_RUN(test_impaired);
  TAP_RUN(test_srtp);
  TAP_RUN(test_stats_thread);
  TAP_RUN(test_rtcp);
  TAP_RUN(test_rtcp_mux_sockets);
  TAP_RUN(test_ccfb_feedback);
  TAP_RUN(test_ccfb_kernel_stamps);
  return tap_done();
}
