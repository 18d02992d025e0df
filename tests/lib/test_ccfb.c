/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_ccfb.c - congestion control feedback on the wire (lib/urtp/ccfb.h):
 * transport-wide feedback (RTPFB FMT 15) and RFC 8888 (FMT 11).
 *
 * Known answers worked out by hand from the formats' layouts; random
 * arrival patterns (loss, reordering, long gaps, wraps of the sequence
 * number) written and read back exactly, at the formats' resolutions;
 * every truncation and a set of corruptions refused; random bytes never
 * read past what they hold (run under ASan).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "urtp/ccfb.h"

static int64_t floor250(int64_t us)
{
  return (us >= 0 ? us / 250 : -((-us + 249) / 250)) * 250;
}

/* Three packets at 64, 65 and 66 ms: one run-length chunk of three small
 * deltas (0, 4, 4 ticks), reference time 1 (64 ms), padded to 28 bytes. */
static void test_twcc_known_answer(void)
{
  static const uint8_t want[] = {
    0x8f, 0xcd, 0x00, 0x06, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22, 0x00, 0x01,
    0x00, 0x03, 0x00, 0x00, 0x01, 0x05, 0x20, 0x03, 0x00, 0x04, 0x04, 0x00, 0x00, 0x00,
  };
  urtp_ccfb_pkt_t in[3] = {
    { 0, 1, true, 0, 64000 }, { 0, 2, true, 0, 65000 }, { 0, 3, true, 0, 66100 },
  };
  uint8_t buf[64];
  size_t taken;
  int n = urtp_twcc_write(buf, sizeof buf, 0x11111111, 0x22222222, 5, in, 3, &taken);
  CHECK_EQ(n, (int)sizeof want);
  CHECK_EQ(taken, 3);
  CHECK_MEM(buf, want, sizeof want);

  urtp_twcc_info_t info;
  urtp_ccfb_pkt_t out[8];
  size_t got;
  REQUIRE(urtp_twcc_parse(want, sizeof want, &info, out, 8, &got) == 0);
  CHECK_EQ(got, 3);
  CHECK_EQ(info.sender_ssrc, 0x11111111);
  CHECK_EQ(info.media_ssrc, 0x22222222);
  CHECK_EQ(info.base_seq, 1);
  CHECK_EQ(info.ref_time, 1);
  CHECK_EQ(info.fb_count, 5);
  CHECK(out[0].received && out[0].arrival_us == 64000);
  CHECK(out[1].received && out[1].arrival_us == 65000);
  CHECK(out[2].received && out[2].arrival_us == 66000); /* 66.1 ms in 250 us steps */

  /* a status vector: received, lost, lost, received late (a large
   * negative delta), received */
  urtp_ccfb_pkt_t v[5] = {
    { 0, 65534, true, 0, 1000000 }, { 0, 65535, false, 0, 0 }, { 0, 0, false, 0, 0 },
    { 0, 1, true, 0, 990000 }, { 0, 2, true, 0, 1000500 },
  };
  n = urtp_twcc_write(buf, sizeof buf, 1, 2, 0, v, 5, &taken);
  REQUIRE(n > 0 && taken == 5);
  /* chunk: a 2-bit vector 1 0 0 2 1, two unused symbols after them */
  CHECK_EQ(buf[20], 0xd0);
  CHECK_EQ(buf[21], 0x90);
  REQUIRE(urtp_twcc_parse(buf, (size_t)n, &info, out, 8, &got) == 0);
  CHECK_EQ(got, 5);
  CHECK_EQ(info.base_seq, 65534);
  CHECK(out[0].received && !out[1].received && !out[2].received && out[3].received);
  CHECK_EQ(out[2].seq, 0);
  CHECK_EQ(out[3].arrival_us, 990000);
  CHECK_EQ(out[4].arrival_us, 1000500);
  /* nothing received, not consecutive, no room */
  CHECK_EQ(urtp_twcc_write(buf, sizeof buf, 1, 2, 0, v + 1, 2, &taken), -EINVAL);
  v[4].seq = 9;
  CHECK_EQ(urtp_twcc_write(buf, sizeof buf, 1, 2, 0, v, 5, &taken), -EINVAL);
  CHECK_EQ(urtp_twcc_write(buf, 20, 1, 2, 0, in, 3, &taken), -ENOSPC);
}

/* Random patterns written message after message and read back: every
 * status, and every arrival at 250 us resolution. */
static void test_twcc_round_trip(void)
{
  enum { N = 3000 };
  static urtp_ccfb_pkt_t in[N], out[N + 64];
  static uint8_t buf[1 << 16];
  unsigned bad = 0, messages = 0;
  srand(11);
  for (int round = 0; round < 40; round++) {
    int64_t t = (int64_t)(rand() % 1000000) * 1000;
    uint16_t seq = (uint16_t)rand();
    size_t cap = round % 4 == 0 ? 64 + (size_t)(rand() % 200) : 1200;
    for (size_t i = 0; i < N; i++) {
      in[i].seq = (uint16_t)(seq + i);
      in[i].received = rand() % 10 != 0 && !(round % 5 == 1 && i % 100 < 30);
      in[i].ecn = 0;
      int r = rand() % 100;
      t += r < 80 ? rand() % 2000 : r < 95 ? rand() % 70000 : r < 98 ? -(rand() % 20000)
                                                                   : (rand() % 4) * 5000000;
      in[i].arrival_us = t;
    }
    in[0].received = true;
    size_t at = 0, o = 0;
    while (at < N) {
      size_t taken = 0;
      size_t first = at;
      while (first < N && !in[first].received)
        first++;
      if (first == N)
        break;
      int n = urtp_twcc_write(buf, cap, 7, 8, (uint8_t)messages, in + at, N - at, &taken);
      if (n <= 0 || taken == 0 || (size_t)n > cap || n % 4) {
        bad++;
        break;
      }
      urtp_twcc_info_t info;
      size_t got;
      if (urtp_twcc_parse(buf, (size_t)n, &info, out + o, N + 64 - o, &got) != 0 ||
          got != taken || info.fb_count != (uint8_t)messages) {
        bad++;
        break;
      }
      o += got;
      at += taken;
      messages++;
    }
    for (size_t i = 0; i < o; i++) {
      if (out[i].seq != in[i].seq || out[i].received != in[i].received ||
          (in[i].received && out[i].arrival_us != floor250(in[i].arrival_us))) {
        if (bad < 5)
          printf("# round %d packet %zu: seq %u/%u received %d/%d at %lld/%lld\n", round, i,
                 out[i].seq, in[i].seq, out[i].received, in[i].received,
                 (long long)out[i].arrival_us, (long long)in[i].arrival_us);
        bad++;
      }
    }
  }
  printf("# %u messages\n", messages);
  CHECK_EQ(bad, 0);
}

static void check_refused(int (*parse)(const uint8_t *, size_t), const uint8_t *msg, size_t len)
{
  uint8_t b[256];
  /* the packet's length field names more than is held */
  for (size_t cut = 0; cut < len; cut++)
    CHECK(parse(msg, cut) < 0);
  memcpy(b, msg, len);
  b[3]++; /* one word more than held */
  CHECK_EQ(parse(b, len), -EBADMSG);
  memcpy(b, msg, len);
  b[0] = (uint8_t)(b[0] ^ 0x01); /* another FMT */
  CHECK_EQ(parse(b, len), -EINVAL);
}

static int twcc_parse_len(const uint8_t *p, size_t len)
{
  urtp_twcc_info_t info;
  urtp_ccfb_pkt_t out[64];
  size_t n;
  return urtp_twcc_parse(p, len, &info, out, 64, &n);
}

static int rfc8888_parse_len(const uint8_t *p, size_t len)
{
  uint32_t s;
  uint64_t r;
  urtp_ccfb_pkt_t out[64];
  size_t n;
  return urtp_rfc8888_parse(p, len, &s, &r, out, 64, &n);
}

static void test_twcc_malformed(void)
{
  uint8_t msg[64];
  urtp_ccfb_pkt_t in[9];
  for (int i = 0; i < 9; i++)
    in[i] = (urtp_ccfb_pkt_t){ 0, (uint16_t)(100 + i), i != 3, 0, 500000 + i * 3000 };
  size_t taken;
  int n = urtp_twcc_write(msg, sizeof msg, 1, 2, 0, in, 9, &taken);
  REQUIRE(n > 0 && taken == 9);
  CHECK_EQ(twcc_parse_len(msg, (size_t)n), 0);
  check_refused(twcc_parse_len, msg, (size_t)n);
  uint8_t b[64];
  /* a count beyond the chunks and deltas held */
  memcpy(b, msg, (size_t)n);
  b[15] = 40;
  CHECK_EQ(twcc_parse_len(b, (size_t)n), -EBADMSG);
  /* a count of zero; more than the caller's room */
  b[15] = 0;
  CHECK_EQ(twcc_parse_len(b, (size_t)n), -EBADMSG);
  urtp_twcc_info_t info;
  urtp_ccfb_pkt_t out[4];
  size_t got;
  CHECK_EQ(urtp_twcc_parse(msg, (size_t)n, &info, out, 4, &got), -ENOSPC);
  /* a run of the reserved symbol; a run of length zero */
  memcpy(b, msg, (size_t)n);
  b[20] = 0x60;
  b[21] = 0x09;
  CHECK_EQ(twcc_parse_len(b, (size_t)n), -EBADMSG);
  b[20] = 0x20;
  b[21] = 0x00;
  CHECK_EQ(twcc_parse_len(b, (size_t)n), -EBADMSG);
  /* the padding bit with a pad count larger than the packet */
  memcpy(b, msg, (size_t)n);
  b[0] |= 0x20;
  b[n - 1] = 200;
  CHECK_EQ(twcc_parse_len(b, (size_t)n), -EBADMSG);
}

/* Two packets received 10 ms and 0 ms before a report at 2 s, one lost,
 * one with ECN CE (3): begin 500, three reports padded to a word. */
static void test_rfc8888_known_answer(void)
{
  static const uint8_t want[] = {
    0x8b, 0xcd, 0x00, 0x06, 0x00, 0x00, 0x00, 0x09, 0xaa, 0xbb, 0xcc, 0xdd, 0x01, 0xf4,
    0x00, 0x03, 0x80, 0x0a, 0x00, 0x00, 0xe0, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
  };
  urtp_ccfb_pkt_t in[3] = {
    { 0xaabbccdd, 500, true, 0, 1990000 },
    { 0xaabbccdd, 501, false, 0, 0 },
    { 0xaabbccdd, 502, true, 3, 2000000 },
  };
  uint8_t buf[64];
  size_t taken;
  int n = urtp_rfc8888_write(buf, sizeof buf, 9, 2000000, in, 3, &taken);
  CHECK_EQ(n, (int)sizeof want);
  CHECK_EQ(taken, 3);
  CHECK_MEM(buf, want, sizeof want);
  uint32_t sender;
  uint64_t report;
  urtp_ccfb_pkt_t out[8];
  size_t got;
  REQUIRE(urtp_rfc8888_parse(want, sizeof want, &sender, &report, out, 8, &got) == 0);
  CHECK_EQ(got, 3);
  CHECK_EQ(sender, 9);
  CHECK_EQ(report, 2000000);
  CHECK(out[0].received && out[0].arrival_us == 2000000 - 9766); /* 10/1024 s */
  CHECK(!out[1].received);
  CHECK(out[2].received && out[2].ecn == 3 && out[2].arrival_us == 2000000);
  CHECK_EQ(out[2].ssrc, 0xaabbccdd);
  /* over range, and no time */
  in[0].arrival_us = 2000000 - 9000000;
  in[2].arrival_us = INT64_MIN;
  n = urtp_rfc8888_write(buf, sizeof buf, 9, 2000000, in, 3, &taken);
  REQUIRE(n > 0);
  REQUIRE(urtp_rfc8888_parse(buf, (size_t)n, &sender, &report, out, 8, &got) == 0);
  CHECK(out[0].received && out[0].arrival_us == INT64_MIN);
  CHECK(out[2].received && out[2].arrival_us == INT64_MIN);
  check_refused(rfc8888_parse_len, want, sizeof want);
  /* a count past the bytes; more than the caller's room */
  uint8_t b[64];
  memcpy(b, want, sizeof want);
  b[15] = 9;
  CHECK_EQ(rfc8888_parse_len(b, sizeof want), -EBADMSG);
  CHECK_EQ(urtp_rfc8888_parse(want, sizeof want, &sender, &report, out, 2, &got), -ENOSPC);
  /* a small room: as many as fit */
  CHECK_EQ(urtp_rfc8888_write(buf, 24, 9, 2000000, in, 3, &taken), 24);
  CHECK_EQ(taken, 2);
}

/* Random bytes, and random corruptions of valid messages: parsed or
 * refused, never a read past the bytes (ASan), never more packets than
 * room. */
static void test_random_bytes(void)
{
  uint8_t b[300];
  urtp_ccfb_pkt_t out[64];
  unsigned ok = 0;
  srand(5);
  for (int i = 0; i < 200000; i++) {
    size_t len = (size_t)(rand() % 300);
    for (size_t j = 0; j < len; j++)
      b[j] = (uint8_t)rand();
    if (len >= 4) {
      b[0] = (uint8_t)(0x80 | (rand() % 2 ? 15 : 11) | (rand() % 8 == 0 ? 0x20 : 0));
      b[1] = 205;
      b[2] = 0;
      b[3] = (uint8_t)(rand() % 80);
    }
    urtp_twcc_info_t info;
    size_t n = 99;
    if (urtp_twcc_parse(b, len, &info, out, 64, &n) == 0) {
      ok++;
      CHECK(n <= 64);
    }
    uint32_t s;
    uint64_t r;
    if (urtp_rfc8888_parse(b, len, &s, &r, out, 64, &n) == 0) {
      ok++;
      CHECK(n <= 64);
    }
  }
  printf("# %u of 400000 parsed\n", ok);
}

int main(void)
{
  TAP_RUN(test_twcc_known_answer);
  TAP_RUN(test_twcc_round_trip);
  TAP_RUN(test_twcc_malformed);
  TAP_RUN(test_rfc8888_known_answer);
  TAP_RUN(test_random_bytes);
  return tap_done();
}
