/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Lip sync (sync.h): the registry's arithmetic, then two receiving streams
 * of one sender on a virtual clock, one of them 80 ms later on the way.
 *
 * The sender samples audio (Opus, 48 kHz, 20 ms packets) and video (H.265,
 * 90 kHz, 30 fps) against one wall clock and says so in sender reports;
 * what the receiver outputs for each access unit is compared with when the
 * sender sampled it: once both reports are in, that difference must be the
 * same for both streams (the audio delayed by the video's extra way), and
 * without lip sync it differs by the whole 80 ms.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "urtp/recvstream.h"
#include "urtp/rtcp.h"
#include "urtp/sync.h"

#define MS 1000000ll
#define SEC 1000000000ll

/* ---- the registry ---- */

static void test_group(void)
{
  urtp_sync_member_t *a = urtp_sync_member_new(), *v = urtp_sync_member_new();
  urtp_sync_member_t *x = urtp_sync_member_new(), *y = urtp_sync_member_new();
  REQUIRE(a && v && x && y);
  int64_t off;
  CHECK_EQ(urtp_sync_offset(a, &off), 0);
  CHECK_EQ(urtp_sync_delay(a), 0);

  /* alone: nothing to wait for */
  urtp_sync_update(a, "alice@host", 1, 10 * MS);
  CHECK_EQ(urtp_sync_delay(a), 0);
  CHECK_EQ(urtp_sync_offset(a, &off), 1);
  CHECK_EQ(off, 10 * MS);

  /* the video comes 80 ms later: the audio waits for it */
  urtp_sync_update(v, "alice@host", 1, 90 * MS);
  CHECK_EQ(urtp_sync_delay(a), 80 * MS);
  CHECK_EQ(urtp_sync_delay(v), 0);

  /* same CNAME on another clock, another CNAME on this clock: apart */
  urtp_sync_update(x, "alice@host", 2, 500 * MS);
  urtp_sync_update(y, "bob@host", 1, 700 * MS);
  CHECK_EQ(urtp_sync_delay(a), 80 * MS);
  CHECK_EQ(urtp_sync_delay(x), 0);
  CHECK_EQ(urtp_sync_delay(y), 0);

  /* jitter within the dead band does not move the delay; more does */
  urtp_sync_update(v, "alice@host", 1, 90 * MS + URTP_SYNC_DEAD_BAND / 2);
  CHECK_EQ(urtp_sync_delay(a), 80 * MS);
  urtp_sync_update(v, "alice@host", 1, 93 * MS);
  CHECK_EQ(urtp_sync_delay(a), 83 * MS);

  /* the audio becomes the late one */
  urtp_sync_update(a, "alice@host", 1, 100 * MS);
  CHECK_EQ(urtp_sync_delay(a), 0);
  CHECK_EQ(urtp_sync_delay(v), 7 * MS);

  /* a stream that would need more than URTP_SYNC_MAX_DELAY (a lying
   * report) is not waited for */
  urtp_sync_update(x, "alice@host", 1, 100 * MS + URTP_SYNC_MAX_DELAY + 1);
  CHECK_EQ(urtp_sync_delay(a), 0);
  CHECK_EQ(urtp_sync_delay(v), 7 * MS);
  CHECK_EQ(urtp_sync_delay(x), 0);
  urtp_sync_withdraw(x);
  CHECK_EQ(urtp_sync_offset(x, &off), 0);

  /* moving to another CNAME leaves the group: the others follow */
  urtp_sync_update(a, "carol@host", 1, 100 * MS);
  CHECK_EQ(urtp_sync_delay(v), 0);
  urtp_sync_update(a, "alice@host", 1, 100 * MS);
  CHECK_EQ(urtp_sync_delay(v), 7 * MS);

  /* the late one leaves: no one waits */
  urtp_sync_member_free(a);
  CHECK_EQ(urtp_sync_delay(v), 0);
  urtp_sync_member_free(v);
  urtp_sync_member_free(x);
  urtp_sync_member_free(y);
  urtp_sync_member_free(NULL);
}

/* ---- two streams of one sender ---- */

#define AUDIO_PT 111
#define VIDEO_PT 96
#define NTP0 (3900000000ll * SEC)     /* the sender's wall clock at start, since 1900 */
#define RX0 (5 * SEC)                 /* the receiver's clock at start */
#define AUDIO_TS0 0x7fffff00u         /* wraps within the test */
#define VIDEO_TS0 12345u

typedef struct peer {
  urtp_recvstream_t *r;
  uint32_t ssrc, rate, ts0;
  int pt;
  uint16_t seq;
  int64_t path;                 /* ns on the way */
  int64_t period;               /* ns between access units */
  int64_t worst;                /* of |out - expected| once synced */
  int64_t offset;               /* out - sampled, of the last access unit */
  unsigned out, synced_out;
} peer_t;

static uint32_t ts_at(const peer_t *p, int64_t since_start)
{
  return p->ts0 + (uint32_t)(since_start * p->rate / SEC);
}

static void send_au(peer_t *p, int64_t sampled)
{
  uint8_t pkt[64] = {0x80, (uint8_t)(p->pt | 0x80), (uint8_t)(p->seq >> 8), (uint8_t)p->seq};
  uint32_t ts = ts_at(p, sampled);
  for (int i = 0; i < 4; i++) {
    pkt[4 + i] = (uint8_t)(ts >> (24 - 8 * i));
    pkt[8 + i] = (uint8_t)(p->ssrc >> (24 - 8 * i));
  }
  size_t len = 40;
  if (p->pt == VIDEO_PT) {
    pkt[12] = 0x26;             /* IDR_W_RADL: every picture decodable alone */
    pkt[13] = 0x01;
  } else {
    pkt[12] = 0xfc;             /* Opus TOC: 20 ms CELT */
  }
  for (size_t i = 14; i < len; i++)
    pkt[i] = (uint8_t)(p->seq + i);
  p->seq++;
  urtp_recvstream_push_one(p->r, pkt, len, NULL, (uint64_t)(RX0 + sampled + p->path));
}

static void send_sr(peer_t *p, int64_t at, const char *cname)
{
  uint8_t buf[256];
  urtp_rtcp_writer_t w;
  urtp_rtcp_sr_t sr = {.ssrc = p->ssrc, .ntp = urtp_ntp_from_ns((uint64_t)(NTP0 + at)),
                       .rtp_ts = ts_at(p, at), .packets = p->seq, .octets = p->seq * 28u};
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  urtp_rtcp_write_sr(&w, &sr, NULL, 0);
  urtp_rtcp_write_sdes_cname(&w, p->ssrc, cname);
  REQUIRE(w.err == 0);
  /* reports come the short way: 5 ms */
  CHECK_EQ(urtp_recvstream_push_rtcp(p->r, buf, w.len, (uint64_t)(RX0 + at + 5 * MS)), 0);
}

static void drain(peer_t *p, int64_t now)
{
  urtp_recvstream_frame_t f;
  urtp_recvstream_expire(p->r, (uint64_t)(RX0 + now));
  while (urtp_recvstream_pop(p->r, &f)) {
    /* when the sender sampled it, from its timestamp (the wrap included) */
    int64_t ticks = (int64_t)(uint32_t)(f.au.rtp_ts - p->ts0);
    int64_t sampled = ticks * SEC / p->rate;
    p->offset = (int64_t)f.pts - RX0 - sampled;
    p->out++;
    urtp_recvstream_stats_t st;
    urtp_recvstream_stats(p->r, &st);
    if (st.synced)
      p->synced_out++;
    urtp_depay_release(f.au.data);
  }
}

/* Runs 3 s of both streams with reports from 1 s on (cnames as given);
 * returns the last offset difference video - audio. */
static int64_t run_pair(bool lip_sync, const char *cname_a, const char *cname_v,
                        peer_t *a, peer_t *v)
{
  urtp_recvstream_config_t ca = {.codec = URTP_CODEC_OPUS, .pt = AUDIO_PT, .ssrc = -1,
                                 .lip_sync = lip_sync, .sync_domain = 42};
  urtp_recvstream_config_t cv = {.codec = URTP_CODEC_H265, .pt = VIDEO_PT, .ssrc = -1,
                                 .lip_sync = lip_sync, .sync_domain = 42};
  *a = (peer_t){.ssrc = 0xa0d10, .rate = 48000, .ts0 = AUDIO_TS0, .pt = AUDIO_PT,
                .path = 10 * MS, .period = 20 * MS};
  *v = (peer_t){.ssrc = 0x51de0, .rate = 90000, .ts0 = VIDEO_TS0, .pt = VIDEO_PT,
                .path = 90 * MS, .period = SEC / 30};
  CHECK_EQ(urtp_recvstream_new(&ca, &a->r), 0);
  CHECK_EQ(urtp_recvstream_new(&cv, &v->r), 0);
  if (!a->r || !v->r)
    abort();

  int64_t next_a = 0, next_v = 0, next_sr = 1 * SEC;
  /* t: the receiver's clock since start; a packet arrives its way after
   * it was sampled */
  for (int64_t t = 0; t < 3 * SEC; t += MS) {
    if (t >= next_a + a->path) {
      send_au(a, next_a);
      next_a += a->period;
    }
    if (t >= next_v + v->path) {
      send_au(v, next_v);
      next_v += v->period;
    }
    if (t >= next_sr + 5 * MS) {
      send_sr(a, next_sr, cname_a);
      send_sr(v, next_sr, cname_v);
      next_sr += 500 * MS;
    }
    drain(a, t);
    drain(v, t);
  }
  return v->offset - a->offset;
}

static void free_pair(peer_t *a, peer_t *v)
{
  urtp_recvstream_free(a->r);
  urtp_recvstream_free(v->r);
}

static void test_streams_in_step(void)
{
  peer_t a, v;
  /* without: each stream is timed by its own arrivals */
  int64_t d = run_pair(false, "alice@host", "alice@host", &a, &v);
  CHECK(d > 79 * MS && d < 81 * MS);
  CHECK_EQ(a.synced_out, 0);
  free_pair(&a, &v);

  /* with: in step once the reports are in, the audio 80 ms later */
  d = run_pair(true, "alice@host", "alice@host", &a, &v);
  CHECK(llabs(d) <= 1 * MS);
  CHECK(a.out > 140 && v.out > 80);
  CHECK(a.synced_out > 90 && v.synced_out > 55);
  urtp_recvstream_stats_t sa, sv;
  urtp_recvstream_stats(a.r, &sa);
  urtp_recvstream_stats(v.r, &sv);
  CHECK(sa.synced && sv.synced);
  CHECK(llabs(sa.sync_delay - 80 * MS) <= 1 * MS);
  CHECK_EQ(sv.sync_delay, 0);
  /* offsets as the receiver saw them: the arrival time minus the sender's
   * wall clock, each stream's way included */
  CHECK(llabs(sa.sync_offset - (RX0 + 10 * MS - NTP0)) <= 1 * MS);
  CHECK(llabs(sv.sync_offset - (RX0 + 90 * MS - NTP0)) <= 1 * MS);
  CHECK(!strcmp(sa.cname, "alice@host"));
  /* the video leaves: the audio stops waiting, a step per access unit
   * (presentation times never jump: URTP_RECVSTREAM_SYNC_STEP) */
  urtp_recvstream_free(v.r);
  int64_t before = a.offset, worst_step = 0;
  for (int k = 0; k < 20; k++) {
    int64_t prev = a.offset, at = 3 * SEC + k * a.period;
    send_au(&a, at - a.path);
    drain(&a, at);
    if (llabs(a.offset - prev) > worst_step)
      worst_step = llabs(a.offset - prev);
  }
  printf("# the audio's delay from %.1f to %.1f ms, at most %.1f ms per access unit\n",
           before / 1e6, a.offset / 1e6, worst_step / 1e6);
  CHECK(before > 89 * MS);
  CHECK(worst_step <= URTP_RECVSTREAM_SYNC_STEP + 1 * MS);
  CHECK(a.offset < 11 * MS);
  urtp_recvstream_free(a.r);

  /* different participants are not put in step */
  d = run_pair(true, "alice@host", "bob@host", &a, &v);
  CHECK(d > 79 * MS && d < 81 * MS);
  free_pair(&a, &v);
}

int main(void)
{
  TAP_RUN(test_group);
  TAP_RUN(test_streams_in_step);
  return tap_done();
}
