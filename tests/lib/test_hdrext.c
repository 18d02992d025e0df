/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_hdrext.c - RTP header extensions (RFC 8285): the blocks we write
 * byte for byte, the elements of RFC 8285's examples found again, forms and
 * limits refused, and the packetizer writing a block into every packet
 * with consecutive transport-wide sequence numbers and nothing else
 * changed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "urtp/batch.h"
#include "urtp/depay.h"
#include "urtp/hdrext.h"
#include "urtp/pay.h"
#include "urtp/rtp.h"

static void test_one_byte_block(void)
{
  urtp_hdrext_t x;
  urtp_hdrext_reset(&x, false);
  const uint8_t ntp[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  CHECK_EQ(urtp_hdrext_add(&x, 1, ntp, 8), 0);
  CHECK_EQ(urtp_hdrext_add(&x, 3, "a", 1), 0);
  urtp_hdrext_block_t b;
  CHECK_EQ(urtp_hdrext_seal(&x, 0, &b), 0);
  /* 0xBEDE, 3 words: 0x17 + 8 bytes, 0x30 'a', one padding byte */
  const uint8_t want[] = { 0xbe, 0xde, 0, 3, 0x17, 1, 2, 3, 4, 5, 6, 7, 8, 0x30, 'a', 0 };
  CHECK_EQ(b.len, sizeof want);
  CHECK_MEM(b.bytes, want, sizeof want);
  CHECK_EQ(b.tw_off, 0);

  /* with a transport-wide sequence number: 0x51 then two bytes */
  CHECK_EQ(urtp_hdrext_seal(&x, 5, &b), 0);
  const uint8_t want_tw[] = { 0xbe, 0xde, 0, 4, 0x17, 1, 2, 3, 4, 5, 6, 7, 8, 0x30, 'a', 0x51,
                              0, 0, 0, 0 };
  CHECK_EQ(b.len, sizeof want_tw);
  CHECK_MEM(b.bytes, want_tw, sizeof want_tw);
  CHECK_EQ(b.tw_off, 16);

  /* nothing at all: no extension; the sequence number alone: one word */
  CHECK_EQ(urtp_hdrext_seal(NULL, 0, &b), 0);
  CHECK_EQ(b.len, 0);
  CHECK_EQ(urtp_hdrext_seal(NULL, 3, &b), 0);
  const uint8_t want_alone[] = { 0xbe, 0xde, 0, 1, 0x31, 0, 0, 0 };
  CHECK_EQ(b.len, sizeof want_alone);
  CHECK_MEM(b.bytes, want_alone, sizeof want_alone);
  CHECK_EQ(b.tw_off, 5);
}

static void test_two_byte_block(void)
{
  urtp_hdrext_t x;
  uint8_t big[40];
  for (size_t i = 0; i < sizeof big; i++)
    big[i] = (uint8_t)(i + 1);
  CHECK(urtp_hdrext_needs_two_byte(20, 1));
  CHECK(urtp_hdrext_needs_two_byte(1, 17));
  CHECK(!urtp_hdrext_needs_two_byte(14, 16));
  urtp_hdrext_reset(&x, true);
  CHECK_EQ(urtp_hdrext_add(&x, 20, big, 17), 0);
  CHECK_EQ(urtp_hdrext_add(&x, 2, NULL, 0), 0);    /* empty: the two-byte form says 0 */
  urtp_hdrext_block_t b;
  CHECK_EQ(urtp_hdrext_seal(&x, 0, &b), 0);
  /* 2 + 17 + 2 = 21 bytes: 6 words */
  CHECK_EQ(b.len, 4 + 24);
  CHECK_EQ(b.bytes[0], 0x10);
  CHECK_EQ(b.bytes[1], 0x00);
  CHECK_EQ(b.bytes[3], 6);
  CHECK_EQ(b.bytes[4], 20);
  CHECK_EQ(b.bytes[5], 17);
  CHECK_MEM(b.bytes + 6, big, 17);
  CHECK_EQ(b.bytes[23], 2);
  CHECK_EQ(b.bytes[24], 0);
  CHECK_EQ(b.bytes[25] | b.bytes[26] | b.bytes[27], 0);

  /* one-byte elements with a sequence number that needs the two-byte form:
   * every element rewritten in it */
  urtp_hdrext_reset(&x, false);
  CHECK_EQ(urtp_hdrext_add(&x, 1, big, 3), 0);
  CHECK_EQ(urtp_hdrext_seal(&x, 200, &b), 0);
  const uint8_t want[] = { 0x10, 0x00, 0, 3, 1, 3, 1, 2, 3, 200, 2, 0, 0, 0, 0, 0 };
  CHECK_EQ(b.len, sizeof want);
  CHECK_MEM(b.bytes, want, sizeof want);
  CHECK_EQ(b.tw_off, 11);
}

static void test_refused(void)
{
  urtp_hdrext_t x;
  uint8_t d[300] = { 0 };
  urtp_hdrext_reset(&x, false);
  CHECK_EQ(urtp_hdrext_add(&x, 0, d, 1), -EINVAL);
  CHECK_EQ(urtp_hdrext_add(&x, 15, d, 1), -EINVAL);
  CHECK_EQ(urtp_hdrext_add(&x, 16, d, 1), -EINVAL);
  CHECK_EQ(urtp_hdrext_add(&x, 1, d, 17), -EINVAL);
  CHECK(urtp_hdrext_reserve(&x, 1, 17) == NULL);
  /* one-byte: an empty element cannot be said and is left out */
  CHECK_EQ(urtp_hdrext_add(&x, 1, d, 0), 0);
  CHECK_EQ(x.len, 0);
  /* commit without the reservation before it */
  CHECK_EQ(urtp_hdrext_commit(&x, 2, 1), -EINVAL);
  /* fill up: 15 elements of 17 bytes, then no room; what was there stays */
  for (int i = 0; i < 15; i++)
    CHECK_EQ(urtp_hdrext_add(&x, 1 + (unsigned)(i % 14), d, 16), 0);
  CHECK_EQ(x.len, 255);
  CHECK_EQ(urtp_hdrext_add(&x, 1, d, 1), -ENOSPC);
  CHECK_EQ(x.len, 255);
  urtp_hdrext_block_t b;
  CHECK_EQ(urtp_hdrext_seal(&x, 1, &b), 0);
  CHECK(b.len <= URTP_HDREXT_BLOCK_MAX);
  CHECK_EQ(b.len % 4, 0);
  /* ... and grown by the two-byte form a sequence number needs: too much */
  CHECK_EQ(urtp_hdrext_seal(&x, 100, &b), -ENOSPC);
  CHECK_EQ(urtp_hdrext_seal(&x, 256, &b), -EINVAL);

  /* a reservation commits fewer bytes than it asked for */
  urtp_hdrext_reset(&x, false);
  uint8_t *w = urtp_hdrext_reserve(&x, 4, 16);
  REQUIRE(w);
  w[0] = 0xaa;
  w[1] = 0xbb;
  CHECK_EQ(urtp_hdrext_commit(&x, 4, 2), 0);
  CHECK_EQ(x.len, 3);
  CHECK_EQ(x.data[0], 0x41);
  CHECK_EQ(urtp_hdrext_commit(&x, 4, 20), -EINVAL);
}

/* RFC 8285's one-byte example (section 4.2): padding between elements. */
static void test_parse(void)
{
  const uint8_t one[] = { 0x10, 0xaa, 0x21, 0xbb, 0xbb, 0x00, 0x00, 0x33, 0xcc, 0xcc, 0xcc, 0xcc };
  urtp_hdrext_iter_t it;
  unsigned id;
  const uint8_t *d;
  size_t n;
  CHECK_EQ(urtp_hdrext_iter_init(&it, URTP_HDREXT_ONE_BYTE, one, sizeof one), 0);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 1);
  CHECK_EQ(id, 1);
  CHECK_EQ(n, 1);
  CHECK_EQ(d[0], 0xaa);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 1);
  CHECK_EQ(id, 2);
  CHECK_EQ(n, 2);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 1);
  CHECK_EQ(id, 3);
  CHECK_EQ(n, 4);
  CHECK(d == one + 8);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 0);

  /* ID 15 ends the elements; what follows is not read */
  const uint8_t stop[] = { 0x10, 0xaa, 0xf0, 0x33, 0, 0, 0, 0 };
  CHECK_EQ(urtp_hdrext_iter_init(&it, URTP_HDREXT_ONE_BYTE, stop, sizeof stop), 0);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 1);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 0);
  CHECK(urtp_hdrext_find(URTP_HDREXT_ONE_BYTE, stop, sizeof stop, 3, &n) == NULL);

  /* an element running past the end is malformed */
  const uint8_t over[] = { 0x10, 0xaa, 0x23, 0xbb };
  CHECK_EQ(urtp_hdrext_iter_init(&it, URTP_HDREXT_ONE_BYTE, over, sizeof over), 0);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 1);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), -EBADMSG);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 0);
  const uint8_t over2[] = { 0x00, 0x00, 0x00, 0x05 };   /* two-byte: 5 bytes of none */
  CHECK_EQ(urtp_hdrext_iter_init(&it, 0x1000, over2, sizeof over2), 0);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), -EBADMSG);
  const uint8_t half[] = { 0, 0, 0, 7 };                /* a lone ID byte */
  CHECK_EQ(urtp_hdrext_iter_init(&it, 0x1000, half, sizeof half), 0);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), -EBADMSG);

  /* two-byte with appbits, an empty element; other profiles are not ours */
  const uint8_t two[] = { 0x07, 0x00, 0x00, 0x09, 0x02, 0xab, 0xcd, 0x00 };
  CHECK_EQ(urtp_hdrext_iter_init(&it, 0x100f, two, sizeof two), 0);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 1);
  CHECK_EQ(id, 7);
  CHECK_EQ(n, 0);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 1);
  CHECK_EQ(id, 9);
  CHECK_EQ(n, 2);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 0);
  CHECK_EQ(urtp_hdrext_iter_init(&it, 0x1234, two, sizeof two), -ENOTSUP);
  CHECK_EQ(urtp_hdrext_next(&it, &id, &d, &n), 0);
  CHECK(urtp_hdrext_find(0x1234, two, sizeof two, 9, &n) == NULL);
}

/* Random elements sealed and parsed again give back what went in. */
static void test_round_trip(void)
{
  uint64_t seed = 0x4d5e6f;
  unsigned bad = 0;
  for (int iter = 0; iter < 2000; iter++) {
    bool two = tap_rand(&seed) & 1;
    urtp_hdrext_t x;
    urtp_hdrext_reset(&x, two);
    /* IDs are unique in a session: the sequence number's is no other's */
    unsigned tw = tap_rand(&seed) % 3 == 0 ? 0 : 1 + (unsigned)(tap_rand(&seed) % 14);
    unsigned ids[64];
    size_t lens[64], n = 0;
    uint8_t vals[64];
    while (n < 64) {
      unsigned id = two ? 1 + (unsigned)(tap_rand(&seed) % 255) : 1 + (unsigned)(tap_rand(&seed) % 14);
      if (id == tw)
        continue;
      size_t len = two ? tap_rand(&seed) % 40 : 1 + tap_rand(&seed) % 16;
      uint8_t v = (uint8_t)tap_rand(&seed);
      uint8_t buf[40];
      memset(buf, v, sizeof buf);
      if (urtp_hdrext_add(&x, id, buf, len) != 0)
        break;
      ids[n] = id;
      lens[n] = len;
      vals[n++] = v;
    }
    urtp_hdrext_block_t b;
    if (urtp_hdrext_seal(&x, tw, &b) != 0) {
      bad++;
      continue;
    }
    uint8_t pkt[12 + URTP_HDREXT_BLOCK_MAX + 4];
    urtp_rtp_write_fixed(pkt, 96, false, 1, 2, 3);
    pkt[0] |= 0x10;
    memcpy(pkt + 12, b.bytes, b.len);
    memset(pkt + 12 + b.len, 0x77, 4);
    urtp_rtp_pkt_t p;
    if (urtp_rtp_parse(pkt, 12 + b.len + 4, &p) != 0 || p.payload_len != 4) {
      bad++;
      continue;
    }
    urtp_hdrext_iter_t it;
    urtp_hdrext_iter_init(&it, p.hdr.ext_profile, p.hdr.ext_data, p.hdr.ext_len);
    unsigned id;
    const uint8_t *d;
    size_t len, k = 0;
    bool ok = true;
    while (urtp_hdrext_next(&it, &id, &d, &len) == 1) {
      if (k < n) {
        ok &= id == ids[k] && len == lens[k] && (len == 0 || (d[0] == vals[k] && d[len - 1] == vals[k]));
      } else {
        ok &= tw && k == n && id == tw && len == 2 && d == pkt + 12 + b.tw_off;
      }
      k++;
    }
    ok &= k == n + (tw ? 1 : 0);
    if (tw) {
      ok &= urtp_hdrext_restamp(pkt, 12 + b.len + 4, tw, 0xbeef) == 0;
      ok &= pkt[12 + b.tw_off] == 0xbe && pkt[13 + b.tw_off] == 0xef;
    } else {
      ok &= urtp_hdrext_restamp(pkt, 12 + b.len + 4, 1, 0xbeef) == -ENOENT || n > 0;
    }
    if (!ok)
      bad++;
  }
  CHECK_EQ(bad, 0);
}

/* The packetizer with a block: each packet is the one a packetizer without
 * it makes at an mtu smaller by the block, with the block after the fixed
 * header (X bit) and consecutive transport-wide sequence numbers. */
static void test_pay_block(void)
{
  uint64_t seed = 0xb10c;
  const size_t in_len = 200000;
  uint8_t *in = malloc(in_len), *a = malloc(65536), *c = malloc(65536);
  REQUIRE(in && a && c);
  for (size_t i = 0; i < in_len; i++)
    in[i] = (uint8_t)(1 + tap_rand(&seed) % 255);
  urtp_hdrext_t x;
  urtp_hdrext_reset(&x, false);
  const uint8_t ntp[8] = { 9, 8, 7, 6, 5, 4, 3, 2 };
  REQUIRE(urtp_hdrext_add(&x, 1, ntp, 8) == 0);
  urtp_hdrext_block_t blk;
  REQUIRE(urtp_hdrext_seal(&x, 3, &blk) == 0);
  urtp_tw_counter_t tw = 65530;     /* and across the wrap */

  unsigned bad = 0, packets = 0;
  uint16_t want_tw = 65530;
  for (int iter = 0; iter < 300; iter++) {
    urtp_codec_t codec = (urtp_codec_t)(tap_rand(&seed) % 4);
    size_t mtu = 200 + tap_rand(&seed) % 1400;
    bool agg = tap_rand(&seed) & 1;
    urtp_pay_config_t cw = { .codec = codec, .pt = 96, .ssrc = 7, .seq_start = 100, .mtu = mtu,
                             .aggregate = agg };
    urtp_pay_config_t co = cw;
    co.mtu = mtu - blk.len;
    urtp_pay_t pw, po;
    REQUIRE(urtp_pay_init(&pw, &cw) == 0 && urtp_pay_init(&po, &co) == 0);
    urtp_pay_set_hdrext(&pw, &blk, &tw);
    urtp_batch_t bw, bo;
    urtp_batch_init(&bw);
    urtp_batch_init(&bo);
    int rw, ro;
    if (codec == URTP_CODEC_OPUS) {
      size_t len = tap_rand(&seed) % (co.mtu - 12);
      rw = urtp_pay_frame(&pw, in, len, 1234, true, &bw);
      ro = urtp_pay_frame(&po, in, len, 1234, true, &bo);
    } else {
      urtp_nal_t nals[6];
      size_t off = 0, n = 1 + tap_rand(&seed) % 6;
      for (size_t i = 0; i < n; i++) {
        nals[i].data = in + off;
        nals[i].len = 2 + tap_rand(&seed) % 5000;
        off += nals[i].len;
      }
      rw = urtp_pay_nals(&pw, nals, n, 1234, true, &bw);
      ro = urtp_pay_nals(&po, nals, n, 1234, true, &bo);
    }
    bool ok = rw == ro && rw > 0 && bw.npkts == bo.npkts;
    for (size_t i = 0; ok && i < bw.npkts; i++) {
      size_t lw = urtp_batch_copy_pkt(&bw, i, a, 65536), lo = urtp_batch_copy_pkt(&bo, i, c, 65536);
      ok &= lw == lo + blk.len && lw <= mtu && lw == bw.pkts[i].len;
      ok &= (a[0] & 0x10) && memcmp(a + 1, c + 1, 11) == 0 && (a[0] & ~0x10) == c[0];
      ok &= memcmp(a + 12, blk.bytes, blk.tw_off) == 0;
      ok &= a[12 + blk.tw_off] == (uint8_t)(want_tw >> 8) && a[13 + blk.tw_off] == (uint8_t)want_tw;
      ok &= memcmp(a + 14 + blk.tw_off, blk.bytes + blk.tw_off + 2, blk.len - blk.tw_off - 2) == 0;
      ok &= memcmp(a + 12 + blk.len, c + 12, lo - 12) == 0;
      want_tw++;
      packets++;
    }
    if (!ok)
      bad++;
    urtp_batch_free(&bw);
    urtp_batch_free(&bo);
    urtp_pay_destroy(&pw);
    urtp_pay_destroy(&po);
  }
  CHECK_EQ(bad, 0);
  CHECK(packets > 1000);
  CHECK_EQ((uint16_t)tw, want_tw);

  /* a block that leaves no room for payload: the call fails, nothing made */
  urtp_pay_config_t cfg = { .codec = URTP_CODEC_H264, .pt = 96, .ssrc = 7, .mtu = 64 };
  urtp_pay_t p;
  REQUIRE(urtp_pay_init(&p, &cfg) == 0);
  urtp_hdrext_reset(&x, true);
  uint8_t big[60] = { 0 };
  REQUIRE(urtp_hdrext_add(&x, 20, big, 60) == 0);
  REQUIRE(urtp_hdrext_seal(&x, 0, &blk) == 0);
  urtp_pay_set_hdrext(&p, &blk, &tw);
  urtp_batch_t b;
  urtp_batch_init(&b);
  urtp_nal_t nal = { in, 100 };
  CHECK_EQ(urtp_pay_nals(&p, &nal, 1, 0, true, &b), -EMSGSIZE);
  CHECK_EQ(urtp_pay_frame(&p, in, 1, 0, true, &b), -EMSGSIZE);
  CHECK_EQ(b.npkts, 0);
  /* and without it again, as before */
  urtp_pay_set_hdrext(&p, NULL, NULL);
  CHECK_EQ(urtp_pay_nals(&p, &nal, 1, 0, true, &b), 2);
  CHECK_EQ(b.pkts[0].len, 64);
  urtp_batch_free(&b);
  urtp_pay_destroy(&p);
  free(in);
  free(a);
  free(c);
}

/* The depacketizer gives each access unit the union of its packets'
 * elements (a packet without any takes nothing away); one too large to
 * keep is left out. */
static void test_depay_keeps(void)
{
  urtp_hdrext_t x;
  urtp_hdrext_reset(&x, false);
  REQUIRE(urtp_hdrext_add(&x, 2, "mid0", 4) == 0);
  urtp_hdrext_block_t blk;
  REQUIRE(urtp_hdrext_seal(&x, 3, &blk) == 0);
  urtp_tw_counter_t tw = 500;

  urtp_pay_config_t pc = { .codec = URTP_CODEC_H265, .pt = 96, .ssrc = 9, .mtu = 400 };
  urtp_pay_t pay;
  REQUIRE(urtp_pay_init(&pay, &pc) == 0);
  urtp_depay_config_t dc = { .codec = URTP_CODEC_H265, .pt = 96, .ssrc = -1 };
  urtp_depay_t *d = urtp_depay_new(&dc);
  REQUIRE(d);
  uint8_t nal[3000];
  memset(nal, 0x33, sizeof nal);
  nal[0] = 19 << 1;     /* IDR_W_RADL */
  nal[1] = 1;
  urtp_nal_t n = { nal, sizeof nal };
  uint8_t pkt[2000];
  urtp_batch_t b;
  urtp_batch_init(&b);

  /* the block on every packet, but AU 1's first packet has none */
  int per_au = 0;
  for (int au = 0; au < 3; au++) {
    urtp_batch_clear(&b);
    urtp_pay_set_hdrext(&pay, &blk, &tw);
    REQUIRE((per_au = urtp_pay_nals(&pay, &n, 1, 3000u * (uint32_t)au, true, &b)) > 2);
    for (size_t i = 0; i < b.npkts; i++) {
      size_t len = urtp_batch_copy_pkt(&b, i, pkt, sizeof pkt);
      if (au == 1 && i == 0) {
        /* rewrite the first packet without its extension */
        memmove(pkt + 12, pkt + 12 + blk.len, len - 12 - blk.len);
        pkt[0] &= (uint8_t)~0x10;
        len -= blk.len;
      }
      urtp_depay_push(d, pkt, len);
    }
  }
  urtp_au_t a;
  for (int au = 0; au < 3; au++) {
    REQUIRE(urtp_depay_pop(d, &a));
    CHECK_EQ(a.len, 4 + sizeof nal);   /* with its start code */
    CHECK_EQ(a.ext_profile, URTP_HDREXT_ONE_BYTE);
    CHECK_EQ(a.ext_len, blk.len - 4);
    size_t ml = 0;
    const uint8_t *mid = urtp_hdrext_find(a.ext_profile, a.ext, a.ext_len, 2, &ml);
    CHECK(mid && ml == 4 && memcmp(mid, "mid0", 4) == 0);
    const uint8_t *t = urtp_hdrext_find(a.ext_profile, a.ext, a.ext_len, 3, &ml);
    REQUIRE(t && ml == 2);
    /* the last packet's number: a later packet's element wins */
    uint16_t last = (uint16_t)(t[0] << 8 | t[1]);
    CHECK_EQ(last, 500 + (au + 1) * per_au - 1);
    free(a.data);
  }
  CHECK(!urtp_depay_pop(d, &a));

  /* an extension larger than URTP_HDREXT_MAX: the AU comes, without it */
  uint8_t big[12 + 4 + 400 + 40];
  urtp_rtp_write_fixed(big, 96, true, pay.seq, 99999, 9);
  big[0] |= 0x10;
  big[12] = 0xbe;
  big[13] = 0xde;
  big[14] = 0;
  big[15] = 100;
  memset(big + 16, 0, 400);
  memcpy(big + 416, nal, 40);
  urtp_depay_push(d, big, sizeof big);
  REQUIRE(urtp_depay_pop(d, &a));
  CHECK_EQ(a.len, 4 + 40);
  CHECK_EQ(a.ext_len, 0);
  free(a.data);

  urtp_batch_free(&b);
  urtp_pay_destroy(&pay);
  urtp_depay_free(d);
}

/* The union of two packets' elements: the second's replace the first's
 * with their IDs, the form becomes two-byte when either is. */
static void test_merge(void)
{
  uint8_t au[URTP_HDREXT_MAX];
  uint16_t prof = URTP_HDREXT_ONE_BYTE, len = 0;
  urtp_hdrext_t x;
  urtp_hdrext_block_t b;

  urtp_hdrext_reset(&x, false);
  REQUIRE(urtp_hdrext_add(&x, 1, "abcd", 4) == 0 && urtp_hdrext_add(&x, 3, "m", 1) == 0);
  REQUIRE(urtp_hdrext_seal(&x, 5, &b) == 0);
  memcpy(au, b.bytes + 4, b.len - 4);
  len = (uint16_t)(b.len - 4);
  /* the marker packet: colour space (2), a new number (5), no MID */
  urtp_hdrext_reset(&x, false);
  REQUIRE(urtp_hdrext_add(&x, 2, "\x09\x10\x09\x11", 4) == 0);
  REQUIRE(urtp_hdrext_seal(&x, 5, &b) == 0);
  b.bytes[b.tw_off + 1] = 7;
  CHECK_EQ(urtp_hdrext_merge(&prof, au, &len, sizeof au, URTP_HDREXT_ONE_BYTE, b.bytes + 4,
                             b.len - 4), 0);
  size_t n;
  const uint8_t *d;
  CHECK((d = urtp_hdrext_find(prof, au, len, 1, &n)) && n == 4 && memcmp(d, "abcd", 4) == 0);
  CHECK((d = urtp_hdrext_find(prof, au, len, 2, &n)) && n == 4 && d[3] == 0x11);
  CHECK((d = urtp_hdrext_find(prof, au, len, 3, &n)) && n == 1 && d[0] == 'm');
  CHECK((d = urtp_hdrext_find(prof, au, len, 5, &n)) && n == 2 && d[1] == 7);
  CHECK_EQ(prof, URTP_HDREXT_ONE_BYTE);
  /* a two-byte packet makes the union two-byte */
  const uint8_t two[] = { 20, 2, 0xaa, 0xbb };
  CHECK_EQ(urtp_hdrext_merge(&prof, au, &len, sizeof au, 0x1000, two, sizeof two), 0);
  CHECK_EQ(prof, URTP_HDREXT_TWO_BYTE);
  CHECK((d = urtp_hdrext_find(prof, au, len, 20, &n)) && n == 2 && d[0] == 0xaa);
  CHECK((d = urtp_hdrext_find(prof, au, len, 1, &n)) && n == 4 && memcmp(d, "abcd", 4) == 0);
  /* malformed or foreign: nothing changes */
  uint16_t before = len;
  const uint8_t bad[] = { 0x13, 1 };
  CHECK_EQ(urtp_hdrext_merge(&prof, au, &len, sizeof au, URTP_HDREXT_ONE_BYTE, bad, sizeof bad),
           -EBADMSG);
  CHECK_EQ(urtp_hdrext_merge(&prof, au, &len, sizeof au, 0x1234, two, sizeof two), -ENOTSUP);
  CHECK_EQ(len, before);
  /* too much together: nothing changes */
  uint8_t big[200];
  memset(big, 0, sizeof big);
  big[0] = 30;
  big[1] = 198;
  CHECK_EQ(urtp_hdrext_merge(&prof, au, &len, 32, 0x1000, big, sizeof big), -ENOSPC);
  CHECK_EQ(len, before);
}

/* Contributing sources (RFC 3550 CC): listed in every packet of an access
 * unit, before the extension block when there is one, with the payload
 * intact and the mtu still the bound; more than 15 are cut to 15; none
 * again gives the plain header. */
static void test_pay_csrcs(void)
{
  static uint8_t nalu[5000];
  nalu[0] = 0x65;
  for (size_t i = 1; i < sizeof nalu; i++)
    nalu[i] = (uint8_t)(i * 7);
  urtp_pay_config_t cfg = { .codec = URTP_CODEC_H264, .pt = 96, .ssrc = 7, .mtu = 1200 };
  urtp_pay_t p;
  REQUIRE(urtp_pay_init(&p, &cfg) == 0);
  const uint32_t cs[16] = { 11, 22, 33, 44, 55, 66, 77, 88, 99, 111, 122, 133, 144, 155, 166, 177 };
  urtp_hdrext_t x;
  urtp_hdrext_block_t blk;
  urtp_tw_counter_t tw = 5;
  urtp_hdrext_reset(&x, true);
  const uint8_t mid[2] = { 'a', 'v' };
  REQUIRE(urtp_hdrext_add(&x, 3, mid, 2) == 0);
  REQUIRE(urtp_hdrext_seal(&x, 4, &blk) == 0);
  for (int round = 0; round < 3; round++) {
    unsigned n = round == 0 ? 2 : round == 1 ? 16 : 0;
    urtp_pay_set_csrcs(&p, cs, n);
    urtp_pay_set_hdrext(&p, round == 0 ? &blk : NULL, &tw);
    urtp_batch_t b;
    urtp_batch_init(&b);
    urtp_nal_t u = { nalu, sizeof nalu };
    int np = urtp_pay_nals(&p, &u, 1, 90000, true, &b);
    REQUIRE(np > 1);
    uint8_t pkt[1500], re[sizeof nalu];
    size_t got = 0;
    for (int i = 0; i < np; i++) {
      size_t l = urtp_batch_copy_pkt(&b, (size_t)i, pkt, sizeof pkt);
      urtp_rtp_pkt_t rp;
      REQUIRE(l <= 1200 && urtp_rtp_parse(pkt, l, &rp) == 0);
      unsigned want = n > 15 ? 15 : n;
      CHECK_EQ(rp.hdr.csrc_count, want);
      for (unsigned k = 0; k < want; k++)
        CHECK_EQ(rp.hdr.csrc[k], cs[k]);
      CHECK_EQ(rp.hdr.has_ext, round == 0);
      if (round == 0) {
        size_t vl = 0;
        const uint8_t *v = urtp_hdrext_find(rp.hdr.ext_profile, rp.hdr.ext_data, rp.hdr.ext_len, 3, &vl);
        CHECK(v && vl == 2 && memcmp(v, mid, 2) == 0);
      }
      /* FU-A: the NAL header rebuilt, then the fragments */
      REQUIRE(rp.payload_len > 2);
      if (i == 0)
        re[got++] = (uint8_t)((rp.payload[0] & 0xe0) | (rp.payload[1] & 0x1f));
      memcpy(re + got, rp.payload + 2, rp.payload_len - 2);
      got += rp.payload_len - 2;
    }
    CHECK_EQ(got, sizeof nalu);
    CHECK_MEM(re, nalu, sizeof nalu);
    urtp_batch_free(&b);
  }
  urtp_pay_destroy(&p);
}

int main(void)
{
  TAP_RUN(test_one_byte_block);
  TAP_RUN(test_two_byte_block);
  TAP_RUN(test_refused);
  TAP_RUN(test_parse);
  TAP_RUN(test_round_trip);
  TAP_RUN(test_pay_block);
  TAP_RUN(test_pay_csrcs);
  TAP_RUN(test_merge);
  TAP_RUN(test_depay_keeps);
  return tap_done();
}
