/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp_depay: RTP packets built by hand, byte by byte as the RFCs draw
 * them, go in; access units in Annex-B form (00 00 00 01 before every NAL
 * unit) come out, or are dropped and counted.
 *
 *   H.264  RFC 6184  NAL hdr |F|NRI|Type|; STAP-A 24, FU-A 28 + |S|E|R|Type|
 *   H.265  RFC 7798  NAL hdr |F|Type(6)|LayerId(6)|TID(3)|; AP 48, FU 49 +
 *                    |S|E|FuType(6)|, PACI 50; DONL/DOND with max-don-diff
 *   H.266  RFC 9328  NAL hdr |F|Z|LayerId(6)|Type(5)|TID(3)|; AP 28, FU 29 +
 *                    |S|E|P|FuType(5)|
 *   Opus   RFC 7587  one Opus packet per RTP packet
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "urtp/depay.h"
#include "urtp/pay.h"

#define PT 96
#define SSRC 0x11223344u

/* ---- byte builders ---- */

typedef struct buf {
  uint8_t b[16384];
  size_t n;
} buf_t;

static void put(buf_t *p, const void *d, size_t n)
{
  memcpy(p->b + p->n, d, n);
  p->n += n;
}

static void put8(buf_t *p, unsigned v)
{
  p->b[p->n++] = (uint8_t)v;
}

static void put16(buf_t *p, unsigned v)
{
  put8(p, v >> 8);
  put8(p, v);
}

static void put32(buf_t *p, uint32_t v)
{
  put16(p, v >> 16);
  put16(p, v & 0xffff);
}

/* The 12-byte RTP header: V=2, P=0, X=0, CC=0. */
static void rtp_hdr(buf_t *p, uint8_t pt, uint32_t ssrc, uint16_t seq, uint32_t ts, bool m)
{
  p->n = 0;
  put8(p, 0x80);
  put8(p, (m ? 0x80u : 0) | pt);
  put16(p, seq);
  put32(p, ts);
  put32(p, ssrc);
}

static void rtp(buf_t *p, uint16_t seq, uint32_t ts, bool m)
{
  rtp_hdr(p, PT, SSRC, seq, ts, m);
}

/* A NAL unit of the codec's header layout: NRI 3 / LayerId 0 / TID 1, and
 * a body of non-zero bytes that names it (tag) so that no two are equal. */
typedef struct nal {
  uint8_t b[8192];
  size_t n;
} nal_t;

static size_t hdr_len(urtp_codec_t c)
{
  return c == URTP_CODEC_H264 ? 1 : 2;
}

static void mknal(nal_t *nal, urtp_codec_t c, unsigned type, size_t len, uint32_t tag)
{
  size_t i = 0;
  switch (c) {
  case URTP_CODEC_H264: nal->b[i++] = (uint8_t)(0x60 | type); break;
  case URTP_CODEC_H265:
    nal->b[i++] = (uint8_t)(type << 1);
    nal->b[i++] = 1;
    break;
  default:
    nal->b[i++] = 0;
    nal->b[i++] = (uint8_t)(type << 3 | 1);
    break;
  }
  uint64_t s = tag * 0x9E3779B97F4A7C15ull + 1;
  for (; i < len; i++) {
    uint8_t v = (uint8_t)(tap_rand(&s) >> 56);
    nal->b[i] = v ? v : 0x5a;
  }
  /* the tag in the first body bytes makes every NAL unit distinct */
  for (size_t k = 0; k < 4 && hdr_len(c) + k < len; k++)
    nal->b[hdr_len(c) + k] = (uint8_t)((tag >> (8 * k)) | 0x80);
  nal->n = len;
}

/* Single NAL unit packet: the NAL unit as is (H.265 DONL after its header). */
static void pk_single(buf_t *p, urtp_codec_t c, bool donl, uint16_t don, const nal_t *nal)
{
  size_t hl = hdr_len(c);
  put(p, nal->b, hl);
  if (donl)
    put16(p, don);
  put(p, nal->b + hl, nal->n - hl);
}

/* Aggregation packet header: the type replaced, the rest from the first unit. */
static void ap_hdr(buf_t *p, urtp_codec_t c, const nal_t *first)
{
  switch (c) {
  case URTP_CODEC_H264: put8(p, (first->b[0] & 0xe0u) | 24); break;
  case URTP_CODEC_H265:
    put8(p, (first->b[0] & 0x81u) | 48u << 1);
    put8(p, first->b[1]);
    break;
  default:
    put8(p, first->b[0]);
    put8(p, 28u << 3 | (first->b[1] & 7u));
    break;
  }
}

/* STAP-A / AP: [DONL] size NAL [DOND] size NAL ... */
static void pk_ap(buf_t *p, urtp_codec_t c, bool donl, uint16_t don, const nal_t *const *nals,
                  size_t k)
{
  ap_hdr(p, c, nals[0]);
  for (size_t i = 0; i < k; i++) {
    if (donl) {
      if (i == 0)
        put16(p, don);
      else
        put8(p, 0);   /* DOND: next in decoding order */
    }
    put16(p, (unsigned)nals[i]->n);
    put(p, nals[i]->b, nals[i]->n);
  }
}

/* FU indicator + FU header + [DONL in the first] + bytes [off, off+len) of
 * the NAL unit's body (the part after its header). */
static void pk_fu(buf_t *p, urtp_codec_t c, bool donl, uint16_t don, const nal_t *nal,
                  size_t off, size_t len, bool s, bool e, bool pbit)
{
  unsigned type;
  switch (c) {
  case URTP_CODEC_H264:
    type = nal->b[0] & 0x1fu;
    put8(p, (nal->b[0] & 0xe0u) | 28);
    put8(p, (s ? 0x80u : 0) | (e ? 0x40u : 0) | type);
    break;
  case URTP_CODEC_H265:
    type = nal->b[0] >> 1 & 0x3fu;
    put8(p, (nal->b[0] & 0x81u) | 49u << 1);
    put8(p, nal->b[1]);
    put8(p, (s ? 0x80u : 0) | (e ? 0x40u : 0) | type);
    break;
  default:
    type = nal->b[1] >> 3;
    put8(p, nal->b[0]);
    put8(p, 29u << 3 | (nal->b[1] & 7u));
    put8(p, (s ? 0x80u : 0) | (e ? 0x40u : 0) | (pbit ? 0x20u : 0) | type);
    break;
  }
  if (donl && s)
    put16(p, don);
  put(p, nal->b + hdr_len(c) + off, len);
}

/* Expected access unit: 00 00 00 01 NAL ... */
static void expect_nal(buf_t *x, const nal_t *nal)
{
  static const uint8_t sc[4] = { 0, 0, 0, 1 };
  put(x, sc, 4);
  put(x, nal->b, nal->n);
}

/* ---- driving the depayloader ---- */

static urtp_depay_t *mk(urtp_codec_t codec, size_t window, urtp_loss_policy_t pol)
{
  urtp_depay_config_t cfg = {
    .codec = codec, .pt = PT, .ssrc = -1, .reorder_window = window, .loss_policy = pol,
  };
  return urtp_depay_new(&cfg);
}

static void push(urtp_depay_t *d, const buf_t *p)
{
  urtp_depay_push(d, p->b, p->n);
}

/* Sends nal as FUs carrying `chunk` body bytes each (the last shorter). */
static uint16_t push_fu(urtp_depay_t *d, urtp_codec_t c, uint16_t seq, uint32_t ts,
                        const nal_t *nal, size_t chunk, bool marker_at_end)
{
  size_t body = nal->n - hdr_len(c);
  buf_t p;
  for (size_t off = 0; off < body; off += chunk) {
    size_t len = body - off < chunk ? body - off : chunk;
    bool e = off + len == body;
    rtp(&p, seq++, ts, e && marker_at_end);
    pk_fu(&p, c, false, 0, nal, off, len, off == 0, e, e);
    push(d, &p);
  }
  return seq;
}

static uint16_t push_single(urtp_depay_t *d, urtp_codec_t c, uint16_t seq, uint32_t ts,
                            const nal_t *nal, bool m)
{
  buf_t p;
  rtp(&p, seq, ts, m);
  pk_single(&p, c, false, 0, nal);
  push(d, &p);
  return (uint16_t)(seq + 1);
}

/* Pops one AU and compares everything about it. */
#define CHECK_AU(d, x, ts_, nals_, flags_)                                   \
  do {                                                                       \
    urtp_au_t au_;                                                           \
    bool got_ = urtp_depay_pop((d), &au_);                                   \
    CHECK(got_);                                                             \
    if (got_) {                                                              \
      CHECK_EQ(au_.len, (x)->n);                                             \
      if (au_.len == (x)->n)                                                 \
        CHECK_MEM(au_.data, (x)->b, au_.len);                                \
      CHECK_EQ(au_.rtp_ts, (ts_));                                           \
      CHECK_EQ(au_.nal_count, (nals_));                                      \
      CHECK_EQ(au_.flags, (flags_));                                         \
      free(au_.data);                                                        \
    }                                                                        \
  } while (0)

#define CHECK_EMPTY(d)                                                       \
  do {                                                                       \
    urtp_au_t au_;                                                           \
    bool got_ = urtp_depay_pop((d), &au_);                                   \
    CHECK(!got_);                                                            \
    if (got_)                                                                \
      free(au_.data);                                                        \
  } while (0)

/* ---- well-formed streams ---- */

/* RFC 6184: STAP-A carrying SPS and PPS, then an IDR slice in three FU-As,
 * written out byte by byte. */
static void test_h264_stap_a_fu_a(void)
{
  static const uint8_t pkts[][40] = {
    /* V=2, M=0, PT=96, seq 100, ts 3000, SSRC; STAP-A: F=0 NRI=3 type 24 */
    { 0x80, 0x60, 0x00, 0x64, 0x00, 0x00, 0x0b, 0xb8, 0x11, 0x22, 0x33, 0x44,
      0x78,
      0x00, 0x09, 0x67, 0x42, 0xc0, 0x1f, 0xda, 0x01, 0x40, 0x16, 0xe8,
      0x00, 0x04, 0x68, 0xce, 0x3c, 0x80 },
    /* FU indicator NRI=3 type 28; FU header S=1 type 5 (IDR) */
    { 0x80, 0x60, 0x00, 0x65, 0x00, 0x00, 0x0b, 0xb8, 0x11, 0x22, 0x33, 0x44,
      0x7c, 0x85, 0x88, 0x84, 0x21, 0xa0 },
    /* FU header S=0 E=0 */
    { 0x80, 0x60, 0x00, 0x66, 0x00, 0x00, 0x0b, 0xb8, 0x11, 0x22, 0x33, 0x44,
      0x7c, 0x05, 0x11, 0x22, 0x33 },
    /* M=1; FU header E=1 */
    { 0x80, 0xe0, 0x00, 0x67, 0x00, 0x00, 0x0b, 0xb8, 0x11, 0x22, 0x33, 0x44,
      0x7c, 0x45, 0x44, 0x55 },
  };
  static const size_t lens[] = { 30, 18, 17, 16 };
  static const uint8_t want[] = {
    0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1f, 0xda, 0x01, 0x40, 0x16, 0xe8,
    0, 0, 0, 1, 0x68, 0xce, 0x3c, 0x80,
    0, 0, 0, 1, 0x65, 0x88, 0x84, 0x21, 0xa0, 0x11, 0x22, 0x33, 0x44, 0x55,
  };
  urtp_depay_t *d = mk(URTP_CODEC_H264, 8, URTP_LOSS_DROP_AU);
  REQUIRE(d);
  for (int i = 0; i < 4; i++)
    urtp_depay_push(d, pkts[i], lens[i]);
  urtp_au_t au;
  REQUIRE(urtp_depay_pop(d, &au));
  CHECK_EQ(au.len, sizeof(want));
  if (au.len == sizeof(want))
    CHECK_MEM(au.data, want, sizeof(want));
  CHECK_EQ(au.rtp_ts, 3000);
  CHECK_EQ(au.nal_count, 3);
  CHECK_EQ(au.flags, URTP_AU_KEYFRAME);
  CHECK_EQ(au.last_seq - au.first_seq, 3);
  CHECK_EQ(au.first_seq & 0xffff, 100);
  free(au.data);
  CHECK_EMPTY(d);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->packets, 4);
  CHECK_EQ(st->bytes, 18 + 6 + 5 + 4);
  CHECK_EQ(st->aus, 1);
  CHECK_EQ(st->nals, 3);
  CHECK_EQ(st->malformed + st->foreign + st->unsupported + st->dropped_nals +
           st->dropped_aus + st->oversize, 0);
  urtp_depay_free(d);
}

/* One AU per codec: parameter sets aggregated, a keyframe slice in FUs,
 * then a second AU of single NAL units. H.265 as GStreamer's rtph265pay
 * sends it with aggregate-mode=max: VPS+SPS+PPS in one AP, FU for the big
 * IDR slice. */
static void run_codec_basic(urtp_codec_t c)
{
  static nal_t ps[3], idr, sei, p1, p2;
  unsigned t_ps[3], t_idr, t_sei, t_p;
  size_t nps;
  switch (c) {
  case URTP_CODEC_H264:
    nps = 2; t_ps[0] = 7; t_ps[1] = 8; t_idr = 5; t_sei = 6; t_p = 1;
    break;
  case URTP_CODEC_H265:
    nps = 3; t_ps[0] = 32; t_ps[1] = 33; t_ps[2] = 34; t_idr = 19; t_sei = 39; t_p = 1;
    break;
  default:
    nps = 2; t_ps[0] = 15; t_ps[1] = 16; t_idr = 7; t_sei = 23; t_p = 1;
    break;
  }
  for (size_t i = 0; i < nps; i++)
    mknal(&ps[i], c, t_ps[i], 12 + 5 * i, 100 + (uint32_t)i);
  mknal(&sei, c, t_sei, 20, 200);
  mknal(&idr, c, t_idr, 5000, 300);
  mknal(&p1, c, t_p, 700, 400);
  mknal(&p2, c, t_p, 900, 401);

  urtp_depay_t *d = mk(c, 8, URTP_LOSS_DROP_AU);
  REQUIRE(d);
  buf_t p, x1, x2;
  x1.n = x2.n = 0;
  /* AP: parameter sets and SEI */
  const nal_t *units[4];
  size_t k = 0;
  for (size_t i = 0; i < nps; i++)
    units[k++] = &ps[i];
  units[k++] = &sei;
  rtp(&p, 65000, 90000, false);
  pk_ap(&p, c, false, 0, units, k);
  push(d, &p);
  for (size_t i = 0; i < k; i++)
    expect_nal(&x1, units[i]);
  uint16_t seq = push_fu(d, c, 65001, 90000, &idr, 1397, true);
  expect_nal(&x1, &idr);
  CHECK_EQ(seq, 65001 + 4);
  /* second AU: two single NAL unit packets */
  seq = push_single(d, c, seq, 93000, &p1, false);
  seq = push_single(d, c, seq, 93000, &p2, true);
  expect_nal(&x2, &p1);
  expect_nal(&x2, &p2);

  CHECK_AU(d, &x1, 90000, k + 1, URTP_AU_KEYFRAME);
  CHECK_AU(d, &x2, 93000, 2, 0);
  CHECK_EMPTY(d);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->packets, 7);
  CHECK_EQ(st->aus, 2);
  CHECK_EQ(st->nals, k + 3);
  CHECK_EQ(st->malformed + st->unsupported + st->dropped_nals + st->dropped_aus, 0);
  CHECK_EQ(st->seq.lost, 0);
  urtp_depay_free(d);
}

static void test_h264_basic(void) { run_codec_basic(URTP_CODEC_H264); }
static void test_h265_basic(void) { run_codec_basic(URTP_CODEC_H265); }
static void test_h266_basic(void) { run_codec_basic(URTP_CODEC_H266); }

/* RFC 9328: FU header |S|E|P|FuType|, NAL header |F|Z|LayerId|Type|TID|. The
 * reconstructed header keeps LayerId and TID of the FU's payload header. */
static void test_h266_fu_header(void)
{
  static const uint8_t pkts[][20] = {
    /* payload hdr: F=0 Z=0 LayerId=2; Type=29 (FU) TID=3 -> 0x02 0xeb;
     * FU hdr S=1 type 8 (CRA) */
    { 0x80, 0x60, 0x12, 0x34, 0x00, 0x01, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44,
      0x02, 0xeb, 0x88, 0xa1, 0xa2 },
    /* FU hdr E=1 P=1 type 8 */
    { 0x80, 0xe0, 0x12, 0x35, 0x00, 0x01, 0x00, 0x00, 0x11, 0x22, 0x33, 0x44,
      0x02, 0xeb, 0x68, 0xa3 },
  };
  static const uint8_t want[] = { 0, 0, 0, 1, 0x02, 0x43, 0xa1, 0xa2, 0xa3 };
  urtp_depay_t *d = mk(URTP_CODEC_H266, 0, URTP_LOSS_DROP_AU);
  REQUIRE(d);
  urtp_depay_push(d, pkts[0], 17);
  urtp_depay_push(d, pkts[1], 16);
  buf_t x;
  x.n = 0;
  put(&x, want, sizeof(want));
  CHECK_AU(d, &x, 0x10000, 1, URTP_AU_KEYFRAME);
  urtp_depay_free(d);
}

/* RFC 7587: the payload is the Opus packet; every packet is one unit. */
static void test_opus(void)
{
  urtp_depay_config_t cfg = { .codec = URTP_CODEC_OPUS, .pt = 111, .ssrc = 7 };
  urtp_depay_t *d = urtp_depay_new(&cfg);
  REQUIRE(d);
  buf_t p, x;
  static const uint8_t f[3][6] = { { 0xfc, 1, 2, 3 }, { 0xfc, 0xff, 0xfe }, { 0x78, 9, 8, 7, 6, 5 } };
  static const size_t fl[3] = { 4, 3, 6 };
  for (int i = 0; i < 3; i++) {
    rtp_hdr(&p, 111, 7, (uint16_t)(10 + i), 960u * (uint32_t)i, i == 0);
    put(&p, f[i], fl[i]);
    push(d, &p);
  }
  /* seq 13 lost, 14 arrives; 15 has an empty payload (no Opus packet is
   * empty): malformed; 16 follows */
  rtp_hdr(&p, 111, 7, 14, 960u * 4, false);
  put(&p, f[0], 4);
  push(d, &p);
  rtp_hdr(&p, 111, 7, 15, 960u * 5, false);
  push(d, &p);
  rtp_hdr(&p, 111, 7, 16, 960u * 6, false);
  put(&p, f[1], 3);
  push(d, &p);
  for (int i = 0; i < 3; i++) {
    x.n = 0;
    put(&x, f[i], fl[i]);
    CHECK_AU(d, &x, 960u * (uint32_t)i, 1, URTP_AU_KEYFRAME);
  }
  x.n = 0;
  put(&x, f[0], 4);
  CHECK_AU(d, &x, 960u * 4, 1, URTP_AU_KEYFRAME | URTP_AU_DISCONT);
  x.n = 0;
  put(&x, f[1], 3);
  CHECK_AU(d, &x, 960u * 6, 1, URTP_AU_KEYFRAME | URTP_AU_DISCONT);
  CHECK_EMPTY(d);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->packets, 5);
  CHECK_EQ(st->bytes, 4 + 3 + 6 + 4 + 3);
  CHECK_EQ(st->malformed, 1);
  CHECK_EQ(st->seq.lost, 1);
  CHECK_EQ(st->aus, 5);
  urtp_depay_free(d);
}

/* ---- malformed, unsupported and foreign packets ---- */

enum { RAW = 1, PAYLOAD = 2 };
enum { K_MALFORMED_RTP, K_MALFORMED, K_UNSUPPORTED };

typedef struct bad_case {
  const char *name;
  urtp_codec_t codec;
  int form;         /* RAW: bytes are the datagram; PAYLOAD: after a header */
  int kind;
  size_t n;
  uint8_t bytes[40];
} bad_case_t;

/* Every bad packet is sent as seq 2, ts 2000, M=1, between two good AUs. */
#define HDR2 0x80, 0xe0, 0x00, 0x02, 0x00, 0x00, 0x07, 0xd0, 0x11, 0x22, 0x33, 0x44
static const bad_case_t bad_cases[] = {
  { "version 1", URTP_CODEC_H264, RAW, K_MALFORMED_RTP, 14,
    { 0x40, 0xe0, 0x00, 0x02, 0x00, 0x00, 0x07, 0xd0, 0x11, 0x22, 0x33, 0x44, 0x41, 0xaa } },
  { "shorter than the fixed header", URTP_CODEC_H264, RAW, K_MALFORMED_RTP, 11,
    { HDR2 } },
  { "CSRC list overruns", URTP_CODEC_H264, RAW, K_MALFORMED_RTP, 16,
    { 0x83, 0xe0, 0x00, 0x02, 0x00, 0x00, 0x07, 0xd0, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 1 } },
  { "extension overruns", URTP_CODEC_H264, RAW, K_MALFORMED_RTP, 20,
    { 0x90, 0xe0, 0x00, 0x02, 0x00, 0x00, 0x07, 0xd0, 0x11, 0x22, 0x33, 0x44,
      0xbe, 0xde, 0x00, 0x04, 0x41, 0x01, 0x02, 0x03 } },
  { "padding count 0", URTP_CODEC_H264, RAW, K_MALFORMED_RTP, 16,
    { 0xa0, 0xe0, 0x00, 0x02, 0x00, 0x00, 0x07, 0xd0, 0x11, 0x22, 0x33, 0x44, 0x41, 0xaa, 0xbb, 0x00 } },
  { "padding count beyond payload", URTP_CODEC_H264, RAW, K_MALFORMED_RTP, 16,
    { 0xa0, 0xe0, 0x00, 0x02, 0x00, 0x00, 0x07, 0xd0, 0x11, 0x22, 0x33, 0x44, 0x41, 0xaa, 0xbb, 0x09 } },
  { "zero-length payload", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 0, { 0 } },
  { "padding leaves no payload", URTP_CODEC_H264, RAW, K_MALFORMED, 14,
    { 0xa0, 0xe0, 0x00, 0x02, 0x00, 0x00, 0x07, 0xd0, 0x11, 0x22, 0x33, 0x44, 0x00, 0x02 } },
  { "H.265 truncated payload header", URTP_CODEC_H265, PAYLOAD, K_MALFORMED, 1, { 0x02 } },
  { "STAP-A size overruns", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 8,
    { 0x78, 0x00, 0x02, 0x41, 0xaa, 0x00, 0x05, 0x41 } },
  { "STAP-A zero-size unit", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 7,
    { 0x78, 0x00, 0x02, 0x41, 0xaa, 0x00, 0x00 } },
  { "STAP-A truncated size field", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 6,
    { 0x78, 0x00, 0x02, 0x41, 0xaa, 0x00 } },
  { "STAP-A without units", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 1, { 0x78 } },
  { "STAP-A unit is an FU", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 6,
    { 0x78, 0x00, 0x03, 0x7c, 0x85, 0xaa } },
  { "H.265 AP unit shorter than a NAL header", URTP_CODEC_H265, PAYLOAD, K_MALFORMED, 9,
    { 0x60, 0x01, 0x00, 0x01, 0x02, 0x00, 0x02, 0x02, 0x01 } },
  { "FU-A with S and E", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 4, { 0x7c, 0xc5, 0xaa, 0xbb } },
  { "FU-A end without start", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 4, { 0x7c, 0x45, 0xaa, 0xbb } },
  { "FU-A without FU header", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 1, { 0x7c } },
  { "FU-A carrying a STAP-A", URTP_CODEC_H264, PAYLOAD, K_MALFORMED, 3, { 0x7c, 0x98, 0xaa } },
  { "H.265 FU with S and E", URTP_CODEC_H265, PAYLOAD, K_MALFORMED, 5, { 0x62, 0x01, 0xd3, 0xaa, 0xbb } },
  { "H.266 FU with S and E", URTP_CODEC_H266, PAYLOAD, K_MALFORMED, 5, { 0x00, 0xe9, 0xc7, 0xaa, 0xbb } },
  { "H.264 STAP-B", URTP_CODEC_H264, PAYLOAD, K_UNSUPPORTED, 7, { 0x79, 0x00, 0x01, 0x00, 0x02, 0x41, 0xaa } },
  { "H.264 MTAP16", URTP_CODEC_H264, PAYLOAD, K_UNSUPPORTED, 3, { 0x7a, 0x00, 0x01 } },
  { "H.264 FU-B", URTP_CODEC_H264, PAYLOAD, K_UNSUPPORTED, 4, { 0x7d, 0x85, 0x00, 0x01 } },
  { "H.264 type 0", URTP_CODEC_H264, PAYLOAD, K_UNSUPPORTED, 2, { 0x60, 0xaa } },
  { "H.264 type 30", URTP_CODEC_H264, PAYLOAD, K_UNSUPPORTED, 2, { 0x7e, 0xaa } },
  { "H.265 PACI", URTP_CODEC_H265, PAYLOAD, K_UNSUPPORTED, 8,
    { 0x64, 0x01, 0x02, 0x01, 0x00, 0x00, 0x26, 0x01 } },
  { "H.265 type 55", URTP_CODEC_H265, PAYLOAD, K_UNSUPPORTED, 3, { 0x6e, 0x01, 0xaa } },
  { "H.266 type 30", URTP_CODEC_H266, PAYLOAD, K_UNSUPPORTED, 3, { 0x00, 0xf1, 0xaa } },
  { "H.266 type 31", URTP_CODEC_H266, PAYLOAD, K_UNSUPPORTED, 3, { 0x00, 0xf9, 0xaa } },
};

static unsigned key_type(urtp_codec_t c)
{
  return c == URTP_CODEC_H264 ? 5 : c == URTP_CODEC_H265 ? 19 : 7;
}

/* Good AU, bad packet, good AU, good AU, with no reordering so nothing
 * waits, under either loss policy. A bad RTP header leaves its sequence
 * number missing (lost): the AU right after it may have lost its head, so
 * it is dropped (DROP_AU) or delivered DAMAGED (DROP_NAL). A bad payload
 * leaves its own AU without NAL units (dropped) and the next AU, with no
 * sequence gap before it, whole, marked as following a discontinuity.
 * Either way the AU after that is whole. */
static void test_malformed_table(void)
{
  for (size_t i = 0; i < 2 * sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    const bad_case_t *bc = &bad_cases[i / 2];
    urtp_loss_policy_t pol = i % 2 ? URTP_LOSS_DROP_NAL : URTP_LOSS_DROP_AU;
    bool lost = bc->kind == K_MALFORMED_RTP;
    int before = tap_cur_failed;
    tap_cur_failed = 0;
    urtp_codec_t c = bc->codec;
    urtp_depay_t *d = mk(c, 0, pol);
    REQUIRE(d);
    static nal_t a, b, e;
    mknal(&a, c, key_type(c), 40, 1);
    mknal(&b, c, 1, 50, 2);
    mknal(&e, c, 1, 60, 3);
    buf_t p, xa, xb, xe;
    xa.n = xb.n = xe.n = 0;
    expect_nal(&xa, &a);
    expect_nal(&xb, &b);
    expect_nal(&xe, &e);
    push_single(d, c, 1, 1000, &a, true);
    if (bc->form == RAW) {
      urtp_depay_push(d, bc->bytes, bc->n);
    } else {
      rtp(&p, 2, 2000, true);
      put(&p, bc->bytes, bc->n);
      push(d, &p);
    }
    push_single(d, c, 3, 3000, &b, true);
    push_single(d, c, 4, 4000, &e, true);
    CHECK_AU(d, &xa, 1000, 1, URTP_AU_KEYFRAME);
    if (!lost)
      CHECK_AU(d, &xb, 3000, 1, URTP_AU_DISCONT);
    else if (pol == URTP_LOSS_DROP_NAL)
      CHECK_AU(d, &xb, 3000, 1, URTP_AU_DAMAGED | URTP_AU_DISCONT);
    CHECK_AU(d, &xe, 4000, 1, lost && pol == URTP_LOSS_DROP_AU ? URTP_AU_DISCONT : 0);
    CHECK_EMPTY(d);
    const urtp_depay_stats_t *st = urtp_depay_stats(d);
    CHECK_EQ(st->malformed, bc->kind != K_UNSUPPORTED);
    CHECK_EQ(st->unsupported, bc->kind == K_UNSUPPORTED);
    CHECK_EQ(st->seq.lost, lost);
    CHECK_EQ(st->dropped_aus, !lost || pol == URTP_LOSS_DROP_AU);
    CHECK_EQ(st->packets, 3);
    CHECK_EQ(st->aus, lost && pol == URTP_LOSS_DROP_AU ? 2 : 3);
    CHECK_EQ(st->dropped_nals + st->foreign + st->oversize, 0);
    urtp_depay_free(d);
    if (tap_cur_failed)
      printf("#   in case \"%s\", %s\n", bc->name,
             pol == URTP_LOSS_DROP_AU ? "DROP_AU" : "DROP_NAL");
    tap_cur_failed |= before;
  }
}

/* A malformed packet inside an FU cuts it: the NAL unit is dropped, and the
 * rest of its fragments go quietly. */
static void test_fu_errors(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n1, n2, n3;
  mknal(&n1, c, 1, 300, 11);
  mknal(&n2, c, 1, 300, 12);
  mknal(&n3, c, 1, 40, 13);
  urtp_depay_t *d = mk(c, 4, URTP_LOSS_DROP_NAL);
  REQUIRE(d);
  buf_t p, x;
  x.n = 0;
  /* AU 1: n1 started, then a new start (n2) before n1's end: n1 dropped.
   * n2 completes; n3 single. */
  rtp(&p, 1, 100, false);
  pk_fu(&p, c, false, 0, &n1, 0, 100, true, false, false);
  push(d, &p);
  rtp(&p, 2, 100, false);
  pk_fu(&p, c, false, 0, &n2, 0, 150, true, false, false);
  push(d, &p);
  rtp(&p, 3, 100, false);
  pk_fu(&p, c, false, 0, &n2, 150, 149, false, true, false);
  push(d, &p);
  rtp(&p, 4, 100, true);
  pk_single(&p, c, false, 0, &n3);
  push(d, &p);
  expect_nal(&x, &n2);
  expect_nal(&x, &n3);
  CHECK_AU(d, &x, 100, 2, URTP_AU_DAMAGED);
  CHECK_EQ(urtp_depay_stats(d)->dropped_nals, 1);
  CHECK_EQ(urtp_depay_stats(d)->malformed, 0);

  /* AU 2: n1 started, a continuation of another type arrives (malformed,
   * n1 dropped), then n1's own end goes quietly; n3 single. */
  mknal(&n2, c, 5, 300, 14);
  rtp(&p, 5, 200, false);
  pk_fu(&p, c, false, 0, &n1, 0, 100, true, false, false);
  push(d, &p);
  rtp(&p, 6, 200, false);
  pk_fu(&p, c, false, 0, &n2, 100, 100, false, false, false);
  push(d, &p);
  rtp(&p, 7, 200, false);
  pk_fu(&p, c, false, 0, &n1, 100, 199, false, true, false);
  push(d, &p);
  rtp(&p, 8, 200, true);
  pk_single(&p, c, false, 0, &n3);
  push(d, &p);
  x.n = 0;
  expect_nal(&x, &n3);
  CHECK_AU(d, &x, 200, 1, URTP_AU_DAMAGED);
  CHECK_EQ(urtp_depay_stats(d)->dropped_nals, 2);
  CHECK_EQ(urtp_depay_stats(d)->malformed, 1);

  /* AU 3: the marker comes on an FU that has not ended: the open NAL unit is
   * dropped and the AU ends with nothing. */
  rtp(&p, 9, 300, true);
  pk_fu(&p, c, false, 0, &n1, 0, 100, true, false, false);
  push(d, &p);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->dropped_nals, 3);
  CHECK_EQ(urtp_depay_stats(d)->dropped_aus, 1);

  /* AU 4: a middle and an end fragment with no start and no loss: one
   * malformed packet, then its sibling dropped quietly. */
  rtp(&p, 10, 400, false);
  pk_fu(&p, c, false, 0, &n1, 100, 100, false, false, false);
  push(d, &p);
  rtp(&p, 11, 400, false);
  pk_fu(&p, c, false, 0, &n1, 200, 99, false, true, false);
  push(d, &p);
  rtp(&p, 12, 400, true);
  pk_single(&p, c, false, 0, &n3);
  push(d, &p);
  x.n = 0;
  expect_nal(&x, &n3);
  CHECK_AU(d, &x, 400, 1, URTP_AU_DAMAGED | URTP_AU_DISCONT);
  CHECK_EQ(urtp_depay_stats(d)->malformed, 2);
  CHECK_EQ(urtp_depay_stats(d)->dropped_nals, 3);
  CHECK_EQ(urtp_depay_stats(d)->seq.lost, 0);
  urtp_depay_free(d);
}

static void test_foreign_and_ssrc_lock(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n;
  mknal(&n, c, 5, 30, 1);
  buf_t p, x;
  x.n = 0;
  expect_nal(&x, &n);

  /* ssrc -1: locks on the first packet's SSRC */
  urtp_depay_t *d = mk(c, 4, URTP_LOSS_DROP_AU);
  REQUIRE(d);
  rtp_hdr(&p, PT, 0xabcdef01, 1, 10, true);
  pk_single(&p, c, false, 0, &n);
  push(d, &p);
  rtp_hdr(&p, PT, SSRC, 2, 20, true);      /* another source */
  pk_single(&p, c, false, 0, &n);
  push(d, &p);
  rtp_hdr(&p, PT + 1, 0xabcdef01, 2, 20, true);   /* another payload type */
  pk_single(&p, c, false, 0, &n);
  push(d, &p);
  rtp_hdr(&p, PT, 0xabcdef01, 2, 30, true);
  pk_single(&p, c, false, 0, &n);
  push(d, &p);
  CHECK_AU(d, &x, 10, 1, URTP_AU_KEYFRAME);
  CHECK_AU(d, &x, 30, 1, URTP_AU_KEYFRAME);
  CHECK_EQ(urtp_depay_stats(d)->foreign, 2);
  CHECK_EQ(urtp_depay_stats(d)->packets, 2);
  urtp_depay_free(d);

  /* a fixed SSRC and any payload type */
  urtp_depay_config_t cfg = { .codec = c, .pt = -1, .ssrc = SSRC };
  d = urtp_depay_new(&cfg);
  REQUIRE(d);
  rtp_hdr(&p, 100, 0xabcdef01, 1, 10, true);
  pk_single(&p, c, false, 0, &n);
  push(d, &p);
  rtp_hdr(&p, 101, SSRC, 2, 20, true);
  pk_single(&p, c, false, 0, &n);
  push(d, &p);
  CHECK_AU(d, &x, 20, 1, URTP_AU_KEYFRAME);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->foreign, 1);
  urtp_depay_free(d);
}

static void test_bad_config(void)
{
  urtp_depay_config_t cfg = { .codec = URTP_CODEC_H265, .pt = 128, .ssrc = -1 };
  CHECK(urtp_depay_new(&cfg) == NULL);
  cfg.pt = -2;
  CHECK(urtp_depay_new(&cfg) == NULL);
  cfg.pt = 96;
  cfg.ssrc = (int64_t)1 << 32;
  CHECK(urtp_depay_new(&cfg) == NULL);
  cfg.ssrc = -2;
  CHECK(urtp_depay_new(&cfg) == NULL);
  cfg.ssrc = -1;
  cfg.reorder_window = 32769;
  CHECK(urtp_depay_new(&cfg) == NULL);
  cfg.reorder_window = 0;
  cfg.codec = (urtp_codec_t)7;
  CHECK(urtp_depay_new(&cfg) == NULL);
  cfg.codec = URTP_CODEC_H265;
  cfg.loss_policy = (urtp_loss_policy_t)5;
  CHECK(urtp_depay_new(&cfg) == NULL);
  cfg.loss_policy = URTP_LOSS_DROP_NAL;
  urtp_depay_t *d = urtp_depay_new(&cfg);
  CHECK(d != NULL);
  urtp_depay_free(d);
  urtp_depay_free(NULL);
}

/* ---- H.265 DONL, PACI ---- */

/* With sprop-max-don-diff > 0 every single NAL unit packet and first FU has
 * a 16-bit DONL after the payload header, an AP has DONL before its first
 * unit and an 8-bit DOND before each further one; all are stripped. */
static void test_h265_donl(void)
{
  const urtp_codec_t c = URTP_CODEC_H265;
  static nal_t vps, sps, pps, idr, trail;
  mknal(&vps, c, 32, 20, 1);
  mknal(&sps, c, 33, 30, 2);
  mknal(&pps, c, 34, 10, 3);
  mknal(&idr, c, 20, 3000, 4);
  mknal(&trail, c, 1, 200, 5);
  urtp_depay_config_t cfg = { .codec = c, .pt = PT, .ssrc = -1, .reorder_window = 4, .donl = true };
  urtp_depay_t *d = urtp_depay_new(&cfg);
  REQUIRE(d);
  buf_t p, x1, x2;
  x1.n = x2.n = 0;
  const nal_t *u[3] = { &vps, &sps, &pps };
  rtp(&p, 1, 900, false);
  pk_ap(&p, c, true, 0, u, 3);
  push(d, &p);
  for (int i = 0; i < 3; i++)
    expect_nal(&x1, u[i]);
  size_t body = idr.n - 2;
  rtp(&p, 2, 900, false);
  pk_fu(&p, c, true, 3, &idr, 0, 1000, true, false, false);
  push(d, &p);
  rtp(&p, 3, 900, false);
  pk_fu(&p, c, true, 3, &idr, 1000, 1000, false, false, false);
  push(d, &p);
  rtp(&p, 4, 900, true);
  pk_fu(&p, c, true, 3, &idr, 2000, body - 2000, false, true, false);
  push(d, &p);
  expect_nal(&x1, &idr);
  rtp(&p, 5, 1800, true);
  pk_single(&p, c, true, 4, &trail);
  push(d, &p);
  expect_nal(&x2, &trail);
  CHECK_AU(d, &x1, 900, 4, URTP_AU_KEYFRAME);
  CHECK_AU(d, &x2, 1800, 1, 0);
  CHECK_EQ(urtp_depay_stats(d)->malformed, 0);
  /* a single NAL unit packet too short for its DONL */
  rtp(&p, 6, 2700, true);
  put8(&p, 0x02);
  put8(&p, 0x01);
  put8(&p, 0x00);
  push(d, &p);
  CHECK_EQ(urtp_depay_stats(d)->malformed, 1);
  urtp_depay_free(d);
}

/* RFC 7798 4.4.4: PACI packets are not understood: dropped, counted, and
 * the AU they belong to is incomplete. */
static void test_h265_paci(void)
{
  const urtp_codec_t c = URTP_CODEC_H265;
  static nal_t n1, n2;
  mknal(&n1, c, 1, 100, 1);
  mknal(&n2, c, 1, 100, 2);
  urtp_depay_t *d = mk(c, 0, URTP_LOSS_DROP_NAL);
  REQUIRE(d);
  buf_t p, x;
  x.n = 0;
  push_single(d, c, 1, 10, &n1, false);
  /* PayloadHdr type 50, A=0 cType=1 PHSsize=0, TX=0, then the NAL payload */
  rtp(&p, 2, 10, false);
  put8(&p, 50 << 1);
  put8(&p, 0x01);
  put8(&p, 0x00);
  put8(&p, 0x20);
  put(&p, n2.b + 2, n2.n - 2);
  push(d, &p);
  push_single(d, c, 3, 10, &n2, true);
  expect_nal(&x, &n1);
  expect_nal(&x, &n2);
  CHECK_AU(d, &x, 10, 2, URTP_AU_DAMAGED);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->unsupported, 1);
  CHECK_EQ(st->malformed, 0);
  CHECK_EQ(st->packets, 2);
  urtp_depay_free(d);
}

/* ---- ordering and loss ---- */

/* A 7-packet AU (AP + FUs + single) arriving in several orders within the
 * window comes out whole. */
static void test_reordered_au(void)
{
  const urtp_codec_t c = URTP_CODEC_H265;
  static nal_t a, b, big, tail;
  mknal(&a, c, 32, 25, 1);
  mknal(&b, c, 33, 35, 2);
  mknal(&big, c, 19, 5002, 3);
  mknal(&tail, c, 39, 60, 4);
  static buf_t pk[7];
  const nal_t *u[2] = { &a, &b };
  rtp(&pk[0], 65533, 5, false);
  pk_ap(&pk[0], c, false, 0, u, 2);
  for (int i = 0; i < 5; i++) {
    rtp(&pk[1 + i], (uint16_t)(65534 + i), 5, false);
    pk_fu(&pk[1 + i], c, false, 0, &big, 1000u * (size_t)i, 1000, i == 0, i == 4, false);
  }
  rtp(&pk[6], 3, 5, true);
  pk_single(&pk[6], c, false, 0, &tail);
  buf_t x;
  x.n = 0;
  expect_nal(&x, &a);
  expect_nal(&x, &b);
  expect_nal(&x, &big);
  expect_nal(&x, &tail);
  /* The first packet to arrive anchors the numbering, so every order here
   * starts with the first packet, except the reversed one. */
  static const int orders[][7] = {
    { 0, 1, 2, 3, 4, 5, 6 },
    { 6, 5, 4, 3, 2, 1, 0 },
    { 0, 2, 1, 4, 3, 6, 5 },
    { 0, 3, 6, 5, 4, 2, 1 },
    { 0, 6, 1, 5, 2, 4, 3 },
  };
  for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
    urtp_depay_t *d = mk(c, 8, URTP_LOSS_DROP_AU);
    REQUIRE(d);
    for (int i = 0; i < 7; i++)
      push(d, &pk[orders[o][i]]);
    if (o == 1) {
      /* 3 (the last) came first, so the rest are late; the AU, ended by
       * its marker, holds only the last NAL unit, and nothing flags it: no
       * packet before the first to arrive is known to be missing. */
      CHECK_EQ(urtp_depay_stats(d)->seq.late, 6);
      buf_t xt;
      xt.n = 0;
      expect_nal(&xt, &tail);
      CHECK_AU(d, &xt, 5, 1, 0);
      urtp_depay_free(d);
      continue;
    }
    CHECK_AU(d, &x, 5, 4, URTP_AU_KEYFRAME);
    CHECK_EMPTY(d);
    CHECK_EQ(urtp_depay_pending(d), 0);
    CHECK_EQ(urtp_depay_stats(d)->seq.lost, 0);
    urtp_depay_free(d);
  }
}

static void test_wrap_across_au(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n;
  mknal(&n, c, 5, 4001, 9);
  urtp_depay_t *d = mk(c, 4, URTP_LOSS_DROP_AU);
  REQUIRE(d);
  uint16_t seq = push_fu(d, c, 65534, 77, &n, 1000, true);
  CHECK_EQ(seq, 2);   /* 65534, 65535, 0, 1 */
  buf_t x;
  x.n = 0;
  expect_nal(&x, &n);
  urtp_au_t au;
  REQUIRE(urtp_depay_pop(d, &au));
  CHECK_EQ(au.len, x.n);
  CHECK_MEM(au.data, x.b, x.n);
  CHECK_EQ(au.first_seq, 65536 + 65534);
  CHECK_EQ(au.last_seq, 65536 + 65534 + 3);
  free(au.data);
  urtp_depay_free(d);
}

/* Duplicates and packets beyond the window. 12 follows the given-up 11,
 * which may have been its first packet: 12 is dropped, and 13 (no gap
 * before it) comes out whole, marked as following the drop. */
static void test_duplicates_late(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n[6];
  for (int i = 0; i < 6; i++)
    mknal(&n[i], c, 1, 50, 20u + (uint32_t)i);
  urtp_depay_t *d = mk(c, 2, URTP_LOSS_DROP_AU);
  REQUIRE(d);
  static buf_t pk[6];
  for (int i = 0; i < 6; i++) {
    rtp(&pk[i], (uint16_t)(10 + i), 100u * (uint32_t)i, true);
    pk_single(&pk[i], c, false, 0, &n[i]);
  }
  /* 10, 10, 12 (waits), 12 (dup), 13: 11 given up; 11 (late), 15, 14 */
  static const int order[] = { 0, 0, 2, 2, 3, 1, 5, 4 };
  for (int i = 0; i < 8; i++)
    push(d, &pk[order[i]]);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->seq.duplicates, 2);
  CHECK_EQ(st->seq.late, 1);
  CHECK_EQ(st->seq.lost, 1);
  /* 14 after 15; 12 only waited behind the missing 11 */
  CHECK_EQ(st->seq.reordered, 1);
  CHECK_EQ(st->packets, 5);
  CHECK_EQ(st->dropped_aus, 1);
  static const int want[] = { 0, 3, 4, 5 };
  for (int i = 0; i < 4; i++) {
    buf_t x;
    x.n = 0;
    expect_nal(&x, &n[want[i]]);
    CHECK_AU(d, &x, 100u * (uint32_t)want[i], 1, want[i] == 3 ? URTP_AU_DISCONT : 0);
  }
  CHECK_EMPTY(d);
  CHECK_EQ(st->aus, 4);
  urtp_depay_free(d);
}

/* A sender restarts with new sequence numbers (same SSRC): after `window`
 * late packets the depayloader follows it. Nothing tells whether the first
 * AU after the jump is whole, so it is damaged: dropped under DROP_AU,
 * flagged under DROP_NAL; the AUs after it are whole. */
static void run_resync(urtp_loss_policy_t pol)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n;
  mknal(&n, c, 1, 40, 1);
  buf_t x;
  x.n = 0;
  expect_nal(&x, &n);
  urtp_depay_t *d = mk(c, 8, pol);
  REQUIRE(d);
  uint32_t ts = 0;
  for (uint16_t s = 40000; s < 40010; s++, ts += 3000)
    push_single(d, c, s, ts, &n, true);
  for (uint16_t s = 30000; s < 30020; s++, ts += 3000)
    push_single(d, c, s, ts, &n, true);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->seq.resyncs, 1);
  CHECK_EQ(st->seq.late, 7);
  CHECK_EQ(st->seq.lost, 0);
  for (int i = 0; i < 10; i++)
    CHECK_AU(d, &x, 3000u * (uint32_t)i, 1, 0);
  /* 30000..30006 late; 30007 resyncs */
  if (pol == URTP_LOSS_DROP_NAL)
    CHECK_AU(d, &x, 3000u * 17, 1, URTP_AU_DAMAGED | URTP_AU_DISCONT);
  CHECK_AU(d, &x, 3000u * 18, 1, pol == URTP_LOSS_DROP_AU ? URTP_AU_DISCONT : 0);
  for (int i = 19; i < 30; i++)
    CHECK_AU(d, &x, 3000u * (uint32_t)i, 1, 0);
  CHECK_EMPTY(d);
  CHECK_EQ(st->dropped_aus, pol == URTP_LOSS_DROP_AU);
  CHECK_EQ(st->aus, pol == URTP_LOSS_DROP_AU ? 22 : 23);
  urtp_depay_free(d);
}

static void test_resync(void)
{
  run_resync(URTP_LOSS_DROP_AU);
  run_resync(URTP_LOSS_DROP_NAL);
}

/* Window 0: out-of-order packets are late at once. A late packet of an AU
 * already delivered cannot be put back (and before the first packet nothing
 * is known to be missing); a packet given up as lost damages the AU that
 * follows it. */
static void test_window_zero(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n1, n2;
  mknal(&n1, c, 1, 40, 1);
  mknal(&n2, c, 1, 40, 2);
  urtp_depay_t *d = mk(c, 0, URTP_LOSS_DROP_NAL);
  REQUIRE(d);
  buf_t p1, p2, x;
  rtp(&p1, 5, 10, false);
  pk_single(&p1, c, false, 0, &n1);
  rtp(&p2, 6, 10, true);
  pk_single(&p2, c, false, 0, &n2);
  push(d, &p2);
  push(d, &p1);
  x.n = 0;
  expect_nal(&x, &n2);
  CHECK_AU(d, &x, 10, 1, 0);
  CHECK_EQ(urtp_depay_stats(d)->seq.late, 1);
  /* 8 before 7: 7 is lost at once, so 8's AU is damaged */
  rtp(&p1, 7, 20, false);
  pk_single(&p1, c, false, 0, &n1);
  rtp(&p2, 8, 20, true);
  pk_single(&p2, c, false, 0, &n2);
  push(d, &p2);
  push(d, &p1);
  CHECK_EQ(urtp_depay_pending(d), 0);
  CHECK_AU(d, &x, 20, 1, URTP_AU_DAMAGED | URTP_AU_DISCONT);
  CHECK_EQ(urtp_depay_stats(d)->seq.lost, 1);
  CHECK_EQ(urtp_depay_stats(d)->seq.late, 2);
  /* 9, 10 in order: whole */
  rtp(&p1, 9, 30, false);
  pk_single(&p1, c, false, 0, &n1);
  rtp(&p2, 10, 30, true);
  pk_single(&p2, c, false, 0, &n2);
  push(d, &p1);
  push(d, &p2);
  x.n = 0;
  expect_nal(&x, &n1);
  expect_nal(&x, &n2);
  CHECK_AU(d, &x, 30, 2, 0);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->dropped_aus, 0);
  urtp_depay_free(d);
}

/* An AU of [SPS, PPS, IDR in 4 FUs]; the FU numbered `lose` never arrives. */
static void run_fu_loss(urtp_loss_policy_t pol)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t sps, pps, idr, p1;
  mknal(&sps, c, 7, 12, 1);
  mknal(&pps, c, 8, 6, 2);
  mknal(&idr, c, 5, 4001, 3);
  mknal(&p1, c, 1, 300, 4);
  urtp_depay_t *d = mk(c, 4, pol);
  REQUIRE(d);
  buf_t p, x;
  rtp(&p, 1, 1000, false);
  pk_single(&p, c, false, 0, &sps);
  push(d, &p);
  rtp(&p, 2, 1000, false);
  pk_single(&p, c, false, 0, &pps);
  push(d, &p);
  for (int i = 0; i < 4; i++) {
    rtp(&p, (uint16_t)(3 + i), 1000, i == 3);
    pk_fu(&p, c, false, 0, &idr, 1000u * (size_t)i, 1000, i == 0, i == 3, false);
    if (i != 1)
      push(d, &p);
  }
  /* the next AU is whole */
  push_single(d, c, 7, 4000, &p1, true);
  urtp_depay_flush(d, false);
  if (pol == URTP_LOSS_DROP_NAL) {
    x.n = 0;
    expect_nal(&x, &sps);
    expect_nal(&x, &pps);
    CHECK_AU(d, &x, 1000, 2, URTP_AU_DAMAGED | URTP_AU_DISCONT);
  }
  x.n = 0;
  expect_nal(&x, &p1);
  CHECK_AU(d, &x, 4000, 1, pol == URTP_LOSS_DROP_AU ? URTP_AU_DISCONT : 0);
  CHECK_EMPTY(d);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->seq.lost, 1);
  CHECK_EQ(st->dropped_nals, 1);
  CHECK_EQ(st->dropped_aus, pol == URTP_LOSS_DROP_AU);
  CHECK_EQ(st->malformed, 0);
  urtp_depay_free(d);
}

static void test_fu_loss_drop_nal(void) { run_fu_loss(URTP_LOSS_DROP_NAL); }

/* One loss takes the end of FU A and the start of FU B: two NAL units are
 * dropped, B's remaining fragments quietly. */
static void test_loss_spanning_fus(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t na, nb, nc;
  mknal(&na, c, 1, 301, 1);
  mknal(&nb, c, 5, 301, 2);
  mknal(&nc, c, 6, 30, 3);
  urtp_depay_t *d = mk(c, 4, URTP_LOSS_DROP_NAL);
  REQUIRE(d);
  buf_t p, x;
  uint16_t seq = 1;
  for (int i = 0; i < 3; i++) {
    rtp(&p, seq++, 50, false);
    pk_fu(&p, c, false, 0, &na, 100u * (size_t)i, 100, i == 0, i == 2, false);
    if (i != 2)
      push(d, &p);
  }
  for (int i = 0; i < 3; i++) {
    rtp(&p, seq++, 50, false);
    pk_fu(&p, c, false, 0, &nb, 100u * (size_t)i, 100, i == 0, i == 2, false);
    if (i != 0)
      push(d, &p);
  }
  push_single(d, c, seq, 50, &nc, true);
  urtp_depay_flush(d, false);
  x.n = 0;
  expect_nal(&x, &nc);
  CHECK_AU(d, &x, 50, 1, URTP_AU_DAMAGED | URTP_AU_DISCONT);
  CHECK_EQ(urtp_depay_stats(d)->dropped_nals, 2);
  CHECK_EQ(urtp_depay_stats(d)->seq.lost, 2);
  CHECK_EQ(urtp_depay_stats(d)->malformed, 0);
  CHECK_EQ(urtp_depay_stats(d)->packets, 3);
  urtp_depay_free(d);
}
static void test_fu_loss_drop_au(void) { run_fu_loss(URTP_LOSS_DROP_AU); }

/* Loss between AUs. Sequence numbers cannot tell a whole lost AU from the
 * lost head of the next one, so the AU after any gap is damaged: dropped
 * under DROP_AU, delivered with what it has and DAMAGED under DROP_NAL,
 * even when (as far as the receiver can know) all of its packets came.
 * An AU with no gap before it and none inside comes out whole. */
static void run_loss_between_aus(urtp_loss_policy_t pol)
{
  const urtp_codec_t c = URTP_CODEC_H265;
  static nal_t n[16];
  for (int i = 0; i < 16; i++)
    mknal(&n[i], c, 1, 100, 50u + (uint32_t)i);
  urtp_depay_t *d = mk(c, 0, pol);
  REQUIRE(d);
  /* AU k = n[2k] n[2k+1] in seq 2k+1, 2k+2 (M), ts 100 k.
   * AU0 whole; AU1 lost whole; AU2 whole, after AU1's gap; AU3 loses its
   * marker packet 8; AU4 whole, after that gap; AU5 whole, no gap before
   * it; AU6 loses its first packet 13 (to the receiver, just like AU2);
   * AU7 whole, no gap before it. */
  static const bool lost[17] = { [3] = true, [4] = true, [8] = true, [13] = true };
  for (uint16_t seq = 1; seq <= 16; seq++)
    if (!lost[seq])
      push_single(d, c, seq, 100u * ((seq - 1u) / 2u), &n[seq - 1], seq % 2 == 0);
  const bool nal_drop = pol == URTP_LOSS_DROP_NAL;
  const uint32_t damaged = URTP_AU_DAMAGED | URTP_AU_DISCONT;
  buf_t x;
  x.n = 0;
  expect_nal(&x, &n[0]);
  expect_nal(&x, &n[1]);
  CHECK_AU(d, &x, 0, 2, 0);
  if (nal_drop) {
    x.n = 0;
    expect_nal(&x, &n[4]);
    expect_nal(&x, &n[5]);
    CHECK_AU(d, &x, 200, 2, damaged);
    x.n = 0;
    expect_nal(&x, &n[6]);
    CHECK_AU(d, &x, 300, 1, damaged | URTP_AU_NO_MARKER);
    x.n = 0;
    expect_nal(&x, &n[8]);
    expect_nal(&x, &n[9]);
    CHECK_AU(d, &x, 400, 2, damaged);
  }
  x.n = 0;
  expect_nal(&x, &n[10]);
  expect_nal(&x, &n[11]);
  CHECK_AU(d, &x, 500, 2, nal_drop ? 0 : URTP_AU_DISCONT);
  if (nal_drop) {
    x.n = 0;
    expect_nal(&x, &n[13]);
    CHECK_AU(d, &x, 600, 1, damaged);
  }
  x.n = 0;
  expect_nal(&x, &n[14]);
  expect_nal(&x, &n[15]);
  CHECK_AU(d, &x, 700, 2, nal_drop ? 0 : URTP_AU_DISCONT);
  CHECK_EMPTY(d);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->seq.lost, 4);
  CHECK_EQ(st->dropped_aus, nal_drop ? 0 : 4);
  CHECK_EQ(st->aus, nal_drop ? 7 : 3);
  CHECK_EQ(st->nals, nal_drop ? 12 : 6);
  CHECK_EQ(st->packets, 12);
  CHECK_EQ(st->dropped_nals + st->malformed + st->unsupported, 0);
  urtp_depay_free(d);
}

static void test_loss_between_aus(void)
{
  run_loss_between_aus(URTP_LOSS_DROP_AU);
  run_loss_between_aus(URTP_LOSS_DROP_NAL);
}

/* Senders that set no marker: a new timestamp ends the AU; flush(end_au)
 * ends the last one. */
static void test_no_marker_and_flush(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n1, n2, n3;
  mknal(&n1, c, 5, 100, 1);
  mknal(&n2, c, 1, 100, 2);
  mknal(&n3, c, 1, 100, 3);
  urtp_depay_t *d = mk(c, 8, URTP_LOSS_DROP_NAL);
  REQUIRE(d);
  push_single(d, c, 1, 10, &n1, false);
  push_single(d, c, 2, 20, &n2, false);
  push_single(d, c, 4, 30, &n3, false);   /* 3 missing: waits */
  buf_t x;
  x.n = 0;
  expect_nal(&x, &n1);
  CHECK_AU(d, &x, 10, 1, URTP_AU_KEYFRAME | URTP_AU_NO_MARKER);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_pending(d), 1);
  urtp_depay_flush(d, false);
  CHECK_EQ(urtp_depay_pending(d), 0);
  /* the flush gave up on 3: the AU at 20 lost its tail, or the AU at 30
   * its head (or one between them was lost whole): both are damaged */
  x.n = 0;
  expect_nal(&x, &n2);
  CHECK_AU(d, &x, 20, 1, URTP_AU_DAMAGED | URTP_AU_DISCONT | URTP_AU_NO_MARKER);
  CHECK_EMPTY(d);
  urtp_depay_flush(d, true);
  x.n = 0;
  expect_nal(&x, &n3);
  CHECK_AU(d, &x, 30, 1, URTP_AU_DAMAGED | URTP_AU_DISCONT | URTP_AU_NO_MARKER);
  CHECK_EMPTY(d);
  /* in order again: 5 at 40, ended by the flush, is whole */
  push_single(d, c, 5, 40, &n1, false);
  CHECK_EMPTY(d);
  urtp_depay_flush(d, true);
  x.n = 0;
  expect_nal(&x, &n1);
  CHECK_AU(d, &x, 40, 1, URTP_AU_KEYFRAME | URTP_AU_NO_MARKER);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->seq.lost, 1);
  urtp_depay_free(d);
}

static void test_wait_for_keyframe(void)
{
  const urtp_codec_t c = URTP_CODEC_H266;
  static nal_t key, p[3];
  mknal(&key, c, 8, 3000, 1);   /* CRA */
  for (int i = 0; i < 3; i++)
    mknal(&p[i], c, 0, 2500, 10u + (uint32_t)i);   /* TRAIL */
  urtp_depay_config_t cfg = {
    .codec = c, .pt = PT, .ssrc = -1, .reorder_window = 4,
    .loss_policy = URTP_LOSS_DROP_NAL, .wait_for_keyframe = true,
  };
  urtp_depay_t *d = urtp_depay_new(&cfg);
  REQUIRE(d);
  uint16_t s = 100;
  uint32_t ts = 0;
  /* two non-key AUs, a key AU, a non-key AU */
  s = push_fu(d, c, s, ts += 10, &p[0], 1000, true);
  s = push_fu(d, c, s, ts += 10, &p[1], 1000, true);
  s = push_fu(d, c, s, ts += 10, &key, 1000, true);
  s = push_fu(d, c, s, ts += 10, &p[2], 1000, true);
  buf_t x;
  x.n = 0;
  expect_nal(&x, &key);
  CHECK_AU(d, &x, 30, 1, URTP_AU_KEYFRAME | URTP_AU_DISCONT);
  x.n = 0;
  expect_nal(&x, &p[2]);
  CHECK_AU(d, &x, 40, 1, 0);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->dropped_aus, 2);
  /* damage (a lost fragment of p[0]) drops that AU and the next non-key */
  uint16_t s0 = s;
  buf_t pk;
  for (int i = 0; i < 3; i++) {
    rtp(&pk, s++, ts + 10, i == 2);
    pk_fu(&pk, c, false, 0, &p[0], 1000u * (size_t)i, i == 2 ? 498 : 1000, i == 0, i == 2, i == 2);
    if (i != 1)
      push(d, &pk);
  }
  CHECK_EQ(s, s0 + 3);
  ts += 10;
  s = push_fu(d, c, s, ts += 10, &p[1], 1000, true);
  /* a key AU that lost a NAL unit does not end the wait: [key, p[2]] with
   * p[2]'s first fragment (bytes 0..1997) lost */
  ts += 10;
  s = push_single(d, c, s, ts, &key, false);
  s++;   /* p[2]'s start fragment: lost */
  rtp(&pk, s++, ts, true);
  pk_fu(&pk, c, false, 0, &p[2], 1998, 500, false, true, true);
  push(d, &pk);
  s = push_fu(d, c, s, ts += 10, &key, 1000, true);
  urtp_depay_flush(d, false);
  x.n = 0;
  expect_nal(&x, &key);
  CHECK_AU(d, &x, ts, 1, URTP_AU_KEYFRAME | URTP_AU_DISCONT);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->dropped_aus, 5);
  CHECK_EQ(urtp_depay_stats(d)->dropped_nals, 2);
  /* a whole AU lost: the key AU after the gap may have lost its head, so it
   * is damaged, dropped, and starts a new wait: the next non-key AU is
   * dropped too, until a key AU with no gap before it */
  s = (uint16_t)(s + 3);    /* p[0] in 3 FUs: lost */
  ts += 10;
  s = push_fu(d, c, s, ts += 10, &key, 1000, true);
  s = push_fu(d, c, s, ts += 10, &p[1], 1000, true);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->dropped_aus, 7);
  s = push_fu(d, c, s, ts += 10, &key, 1000, true);
  s = push_fu(d, c, s, ts += 10, &p[2], 1000, true);
  x.n = 0;
  expect_nal(&x, &key);
  CHECK_AU(d, &x, ts - 10, 1, URTP_AU_KEYFRAME | URTP_AU_DISCONT);
  x.n = 0;
  expect_nal(&x, &p[2]);
  CHECK_AU(d, &x, ts, 1, 0);
  CHECK_EMPTY(d);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->dropped_aus, 7);
  CHECK_EQ(st->dropped_nals, 2);
  CHECK_EQ(st->seq.lost, 5);
  CHECK_EQ(st->aus, 5);
  urtp_depay_free(d);
}

static void test_oversize(void)
{
  const urtp_codec_t c = URTP_CODEC_H265;
  static nal_t big, small;
  mknal(&big, c, 19, 3000, 1);
  mknal(&small, c, 1, 1000, 2);
  urtp_depay_config_t cfg = { .codec = c, .pt = PT, .ssrc = -1, .reorder_window = 4,
                              .max_au_size = 2000 };
  urtp_depay_t *d = urtp_depay_new(&cfg);
  REQUIRE(d);
  uint16_t s = push_fu(d, c, 1, 10, &big, 1000, true);
  s = push_single(d, c, s, 20, &small, false);
  s = push_single(d, c, s, 20, &small, true);   /* 2 * 1004 > 2000 */
  s = push_single(d, c, s, 30, &small, true);
  buf_t x;
  x.n = 0;
  expect_nal(&x, &small);
  CHECK_AU(d, &x, 30, 1, URTP_AU_DISCONT);
  CHECK_EMPTY(d);
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->oversize, 2);
  CHECK_EQ(st->dropped_aus, 0);
  CHECK_EQ(st->dropped_nals, 0);
  CHECK_EQ(st->malformed, 0);
  urtp_depay_free(d);
}

static void test_queue_overflow(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  static nal_t n;
  mknal(&n, c, 1, 30, 1);
  urtp_depay_t *d = mk(c, 0, URTP_LOSS_DROP_AU);
  REQUIRE(d);
  for (uint32_t i = 0; i < URTP_DEPAY_QUEUE + 6; i++)
    push_single(d, c, (uint16_t)i, i, &n, true);
  CHECK_EQ(urtp_depay_stats(d)->dropped_aus, 6);
  buf_t x;
  x.n = 0;
  expect_nal(&x, &n);
  CHECK_AU(d, &x, 6, 1, URTP_AU_DISCONT);
  for (uint32_t i = 7; i < URTP_DEPAY_QUEUE + 6; i++)
    CHECK_AU(d, &x, i, 1, 0);
  CHECK_EMPTY(d);
  CHECK_EQ(urtp_depay_stats(d)->aus, URTP_DEPAY_QUEUE);
  /* the queued AUs are freed with the depayloader */
  for (uint32_t i = 0; i < 3; i++)
    push_single(d, c, (uint16_t)(100 + i), 100 + i, &n, true);
  urtp_depay_free(d);
}

/* ---- recycled buffers ---- */

static urtp_depay_t *mk_recycle(urtp_codec_t codec, size_t window)
{
  urtp_depay_config_t cfg = {
    .codec = codec, .pt = codec == URTP_CODEC_OPUS ? 111 : PT, .ssrc = -1,
    .reorder_window = window, .recycle = true,
  };
  return urtp_depay_new(&cfg);
}

/* Pops one AU, compares its bytes with the n of x and hands it back (or
 * not: *keep). */
static uint8_t *pop_check_n(urtp_depay_t *d, const uint8_t *x, size_t n, uint8_t **keep)
{
  urtp_au_t au;
  if (!urtp_depay_pop(d, &au)) {
    CHECK(!"an access unit");
    return NULL;
  }
  CHECK_EQ(au.len, n);
  if (au.len == n)
    CHECK_MEM(au.data, x, n);
  if (keep)
    *keep = au.data;
  else
    urtp_depay_release(au.data);
  return au.data;
}

static uint8_t *pop_check(urtp_depay_t *d, const buf_t *x, uint8_t **keep)
{
  return pop_check_n(d, x->b, x->n, keep);
}

/* One buffer going round: every AU is assembled in the one released before
 * it, whatever its size (small, then large enough to make it grow, then
 * small again), and its bytes are right. */
static void test_recycle_reuse(void)
{
  const urtp_codec_t c = URTP_CODEC_H265;
  urtp_depay_t *d = mk_recycle(c, 8);
  REQUIRE(d);
  static nal_t a, big;
  mknal(&a, c, 1, 300, 1);
  mknal(&big, c, 1, 8000, 2);
  buf_t xa, xb;
  xa.n = 0;
  expect_nal(&xa, &a);
  xb.n = 0;
  expect_nal(&xb, &big);
  /* the large AU: that NAL unit 6 times, in FUs (48 KB, beyond the
   * depayloader's first guess of an AU's size) */
  static uint8_t xl[6 * (4 + 8000)];
  for (int i = 0; i < 6; i++)
    memcpy(xl + (size_t)i * xb.n, xb.b, xb.n);

  uint16_t seq = 0;
  uint8_t *p[12];
  for (uint32_t i = 0; i < 12; i++) {
    bool large = i == 5 || i == 6;
    if (large) {
      for (int k = 0; k < 6; k++)
        seq = push_fu(d, c, seq, i, &big, 1000, k == 5);
    } else {
      seq = push_single(d, c, seq, i, &a, true);
    }
    p[i] = large ? pop_check_n(d, xl, sizeof xl, NULL) : pop_check(d, &xa, NULL);
  }
  /* AU 5 outgrew the buffer, which may have moved then */
  for (int i = 1; i < 12; i++)
    if (i != 5)
      CHECK(p[i] == p[i < 5 ? 0 : 5]);
  urtp_au_t au;
  CHECK(!urtp_depay_pop(d, &au));
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->aus, 12);
  CHECK_EQ(st->dropped_aus, 0);
  urtp_depay_free(d);
}

/* Many buffers out at once: each AU has its own; once they come back, the
 * next AU is assembled in the last one released. Buffers released after
 * the depayloader is gone are freed (the sanitizer build checks leaks). */
static void test_recycle_many_and_after_free(void)
{
  const urtp_codec_t c = URTP_CODEC_H264;
  urtp_depay_t *d = mk_recycle(c, 0);
  REQUIRE(d);
  static nal_t n;
  mknal(&n, c, 5, 1500, 3);
  buf_t x;
  x.n = 0;
  expect_nal(&x, &n);
  uint8_t *held[10];
  for (uint32_t i = 0; i < 10; i++)
    push_single(d, c, (uint16_t)i, i, &n, true);
  for (int i = 0; i < 10; i++) {
    pop_check(d, &x, &held[i]);
    for (int k = 0; k < i; k++)
      CHECK(held[k] != held[i]);
  }
  for (int i = 0; i < 10; i++)
    urtp_depay_release(held[i]);
  push_single(d, c, 10, 10, &n, true);
  CHECK(pop_check(d, &x, NULL) == held[9]);

  /* out when the depayloader goes: two popped, three still queued */
  for (uint32_t i = 11; i < 16; i++)
    push_single(d, c, (uint16_t)i, i, &n, true);
  pop_check(d, &x, &held[0]);
  pop_check(d, &x, &held[1]);
  urtp_depay_free(d);
  CHECK_EQ(held[0][3], 1);   /* still valid */
  urtp_depay_release(held[1]);
  urtp_depay_release(held[0]);
  urtp_depay_release(NULL);
}

/* Opus frames come in recycled buffers too; a queue overflow hands the
 * dropped ones back. */
static void test_recycle_opus_overflow(void)
{
  urtp_depay_t *d = mk_recycle(URTP_CODEC_OPUS, 0);
  REQUIRE(d);
  buf_t p, x;
  static const uint8_t f[5] = { 0xfc, 1, 2, 3, 4 };
  x.n = 0;
  put(&x, f, sizeof f);
  for (uint32_t i = 0; i < URTP_DEPAY_QUEUE + 3; i++) {
    rtp_hdr(&p, 111, 7, (uint16_t)i, 960u * i, false);
    put(&p, f, sizeof f);
    push(d, &p);
  }
  CHECK_EQ(urtp_depay_stats(d)->dropped_aus, 3);
  uint8_t *last = NULL;
  for (int i = 0; i < URTP_DEPAY_QUEUE; i++)
    last = pop_check(d, &x, NULL);
  rtp_hdr(&p, 111, 7, URTP_DEPAY_QUEUE + 3, 0, false);
  put(&p, f, sizeof f);
  push(d, &p);
  CHECK(pop_check(d, &x, NULL) == last);
  urtp_depay_free(d);
}

/* Buffers handed back from another thread while the depayloader works, as
 * a GStreamer pipeline does from downstream threads. */
typedef struct rel_ring {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint8_t *q[8];
  size_t head, len;
  bool done;
} rel_ring_t;

static void *releaser(void *arg)
{
  rel_ring_t *r = arg;
  for (;;) {
    pthread_mutex_lock(&r->lock);
    while (r->len == 0 && !r->done)
      pthread_cond_wait(&r->cond, &r->lock);
    if (r->len == 0) {
      pthread_mutex_unlock(&r->lock);
      return NULL;
    }
    uint8_t *b = r->q[r->head];
    r->head = (r->head + 1) % 8;
    r->len--;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    urtp_depay_release(b);
  }
}

static void test_recycle_threads(void)
{
  const urtp_codec_t c = URTP_CODEC_H266;
  urtp_depay_t *d = mk_recycle(c, 4);
  REQUIRE(d);
  rel_ring_t r = { .head = 0 };
  pthread_mutex_init(&r.lock, NULL);
  pthread_cond_init(&r.cond, NULL);
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, releaser, &r) == 0);
  static nal_t n[3];
  buf_t x[3];
  for (int k = 0; k < 3; k++) {
    mknal(&n[k], c, 1, 1700 + 2500 * (size_t)k, 10 + (uint32_t)k);
    x[k].n = 0;
    expect_nal(&x[k], &n[k]);
  }
  uint16_t seq = 0;
  for (uint32_t i = 0; i < 600; i++) {
    int k = (int)(i % 3);
    seq = push_fu(d, c, seq, i, &n[k], 900, true);
    uint8_t *b = NULL;
    pop_check(d, &x[k], &b);
    if (!b)
      break;
    pthread_mutex_lock(&r.lock);
    while (r.len == 8)
      pthread_cond_wait(&r.cond, &r.lock);
    r.q[(r.head + r.len) % 8] = b;
    r.len++;
    pthread_cond_broadcast(&r.cond);
    pthread_mutex_unlock(&r.lock);
  }
  pthread_mutex_lock(&r.lock);
  r.done = true;
  pthread_cond_broadcast(&r.cond);
  pthread_mutex_unlock(&r.lock);
  pthread_join(t, NULL);
  CHECK_EQ(urtp_depay_stats(d)->aus, 600);
  urtp_depay_free(d);
  pthread_mutex_destroy(&r.lock);
  pthread_cond_destroy(&r.cond);
}

/* ---- seeded impairment ---- */

/*
 * A stream of access units (1..6 NAL units of 3..6000 bytes, mostly small,
 * a keyframe every 25) is packetized either by the simple packetizer
 * below or by urtp_pay, then impaired with a seeded generator: packets
 * dropped (alone or in bursts), duplicated, and reordered within the
 * window (packet i never arrives after a packet >= i + window, so nothing
 * that arrives is late). A model computes which NAL units survive: those
 * whose every packet arrived; and which AUs are damaged: those that lose a
 * packet the receiver learns of, end inside an FU, or follow a lost packet
 * (which, for all the receiver can tell, may have been their first).
 */

#define IMP_AUS 400
#define IMP_MAXN 6
#define IMP_MTU 1200
#define IMP_WINDOW 16

typedef struct imp_nal {
  nal_t nal;
  int pkts_total, pkts_arrived;   /* packets carrying (part of) it */
} imp_nal_t;

typedef struct imp_pkt {
  size_t off, len;                /* in imp_arena */
  int au;
  int nal_first, nal_last;        /* NAL units it carries */
  bool fu_open;                   /* an FU fragment other than the last */
} imp_pkt_t;

#define IMP_MAXPKTS (IMP_AUS * IMP_MAXN * 6)
static imp_nal_t imp_nals[IMP_AUS][IMP_MAXN];
static int imp_nn[IMP_AUS];
static imp_pkt_t imp_pkts[IMP_MAXPKTS];
static int imp_np;
static int imp_arrivals[2 * IMP_MAXPKTS];
static uint64_t imp_keys[2 * IMP_MAXPKTS];
static bool imp_dropped[IMP_MAXPKTS];
static bool imp_got[IMP_AUS];
static bool imp_want[IMP_AUS];
static bool imp_marker_arrived[IMP_AUS];
static bool imp_damaged[IMP_AUS];     /* the model's verdict */
static bool imp_after_gap[IMP_AUS];   /* a packet just before its first was lost */
static uint8_t *imp_arena;
static size_t imp_used;

typedef struct imp_cfg {
  urtp_codec_t codec;
  urtp_loss_policy_t pol;
  bool donl;
  bool use_pay;         /* packetize with urtp_pay instead of the simple one */
  uint64_t seed;
  unsigned drop_pct, burst_max, dup_pct;
} imp_cfg_t;

static void imp_keep(const uint8_t *b, size_t n)
{
  imp_pkt_t *ip = &imp_pkts[imp_np++];
  ip->off = imp_used;
  ip->len = n;
  memcpy(imp_arena + imp_used, b, n);
  imp_used += n;
}

/* The simple packetizer: aggregate consecutive NAL units that fit, fragment
 * those that do not fit alone, single NAL unit packets otherwise. */
static void imp_packetize_simple(urtp_codec_t c, bool donl, uint16_t seq)
{
  static buf_t pb;
  size_t hl = hdr_len(c), room = IMP_MTU - 12, dl = donl ? 2 : 0;
  uint16_t don = 0;
  for (int a = 0; a < IMP_AUS; a++) {
    uint32_t ts = 90000u + 3000u * (uint32_t)a;
    int k = 0;
    while (k < imp_nn[a]) {
      const nal_t *nal = &imp_nals[a][k].nal;
      if (nal->n + dl > room) {
        size_t chunk = room - hl - 1 - dl, body = nal->n - hl;
        for (size_t off = 0; off < body; off += chunk) {
          size_t len = body - off < chunk ? body - off : chunk;
          bool e = off + len == body;
          rtp(&pb, seq++, ts, e && k == imp_nn[a] - 1);
          pk_fu(&pb, c, donl, don, nal, off, len, off == 0, e, false);
          imp_keep(pb.b, pb.n);
        }
        k++;
        don++;
        continue;
      }
      size_t used = hl + dl, j = (size_t)k;
      while (j < (size_t)imp_nn[a] &&
             used + 2 + (j > (size_t)k && donl) + imp_nals[a][j].nal.n <= room) {
        used += 2 + (j > (size_t)k && donl) + imp_nals[a][j].nal.n;
        j++;
      }
      int last = j > (size_t)k ? (int)j - 1 : k;   /* fits alone, not in an AP */
      rtp(&pb, seq++, ts, last == imp_nn[a] - 1);
      if (last == k) {
        pk_single(&pb, c, donl, don, nal);
      } else {
        const nal_t *u[IMP_MAXN];
        for (int i = k; i <= last; i++)
          u[i - k] = &imp_nals[a][i].nal;
        pk_ap(&pb, c, donl, don, u, (size_t)(last - k + 1));
      }
      imp_keep(pb.b, pb.n);
      don = (uint16_t)(don + (last - k + 1));
      k = last + 1;
    }
  }
}

static bool imp_packetize_pay(urtp_codec_t c, uint16_t seq)
{
  urtp_pay_config_t pc = { .codec = c, .pt = PT, .ssrc = SSRC, .seq_start = seq,
                           .mtu = IMP_MTU, .aggregate = true };
  urtp_pay_t pay;
  urtp_batch_t batch;
  static uint8_t pb[IMP_MTU];
  if (urtp_pay_init(&pay, &pc) != 0)
    return false;
  urtp_batch_init(&batch);
  bool ok = true;
  for (int a = 0; a < IMP_AUS && ok; a++) {
    urtp_nal_t nals[IMP_MAXN];
    for (int k = 0; k < imp_nn[a]; k++) {
      nals[k].data = imp_nals[a][k].nal.b;
      nals[k].len = imp_nals[a][k].nal.n;
    }
    urtp_batch_clear(&batch);
    ok = urtp_pay_nals(&pay, nals, (size_t)imp_nn[a], 90000u + 3000u * (uint32_t)a, true,
                       &batch) > 0;
    for (size_t i = 0; ok && i < batch.npkts; i++) {
      size_t n = urtp_batch_copy_pkt(&batch, i, pb, sizeof(pb));
      ok = n > 0 && imp_np < IMP_MAXPKTS;
      if (ok)
        imp_keep(pb, n);
    }
  }
  urtp_batch_free(&batch);
  urtp_pay_destroy(&pay);
  return ok;
}

/* Which NAL units each packet carries, read back from the packets (so that
 * it holds for either packetizer). Returns false on a packet it cannot
 * read. */
static bool imp_map(urtp_codec_t c, bool donl)
{
  size_t hl = hdr_len(c);
  unsigned ap = c == URTP_CODEC_H264 ? 24 : c == URTP_CODEC_H265 ? 48 : 28;
  unsigned fu = c == URTP_CODEC_H264 ? 28 : ap + 1;
  int a = -1, k = 0;
  for (int i = 0; i < imp_np; i++) {
    imp_pkt_t *ip = &imp_pkts[i];
    const uint8_t *b = imp_arena + ip->off;
    int au = (int)(((uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7]) -
                   90000u) / 3000;
    if (au != a) {
      a = au;
      k = 0;
    }
    const uint8_t *pl = b + 12;
    size_t n = ip->len - 12;
    unsigned type = c == URTP_CODEC_H264 ? pl[0] & 0x1fu
                    : c == URTP_CODEC_H265 ? (pl[0] >> 1) & 0x3fu : pl[1] >> 3;
    ip->au = a;
    ip->nal_first = k;
    if (type == ap) {
      size_t off = hl;
      int units = 0;
      while (off < n) {
        if (donl)
          off += units == 0 ? 2 : 1;
        off += 2 + ((size_t)pl[off] << 8 | pl[off + 1]);
        units++;
      }
      k += units;
    } else if (type == fu) {
      if (pl[hl] & 0x40)
        k++;
    } else {
      k++;
    }
    ip->nal_last = (type == fu && !(pl[hl] & 0x40)) ? k : k - 1;
    ip->fu_open = type == fu && !(pl[hl] & 0x40);
    if (a < 0 || a >= IMP_AUS || ip->nal_last >= imp_nn[a])
      return false;
    for (int j = ip->nal_first; j <= ip->nal_last; j++)
      imp_nals[a][j].pkts_total++;
  }
  return true;
}

static bool is_start_code(const uint8_t *p)
{
  return p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 1;
}

static void run_impaired(const imp_cfg_t *ic)
{
  urtp_codec_t c = ic->codec;
  uint64_t s = ic->seed;
  unsigned ktype = key_type(c);
  unsigned ptype = c == URTP_CODEC_H266 ? 2 : 1;

  for (int a = 0; a < IMP_AUS; a++) {
    imp_nn[a] = 1 + (int)(tap_rand(&s) % IMP_MAXN);
    for (int k = 0; k < imp_nn[a]; k++) {
      size_t len = tap_rand(&s) % 4 == 0 ? 1000 + tap_rand(&s) % 5000 : 3 + tap_rand(&s) % 300;
      unsigned type = a % 25 == 0 && k == imp_nn[a] - 1 ? ktype : ptype;
      mknal(&imp_nals[a][k].nal, c, type, len, (uint32_t)(a * 16 + k + 1));
      imp_nals[a][k].pkts_total = imp_nals[a][k].pkts_arrived = 0;
    }
  }
  imp_arena = malloc((size_t)IMP_MAXPKTS * IMP_MTU);
  REQUIRE(imp_arena);
  imp_used = 0;
  imp_np = 0;
  uint16_t seq0 = (uint16_t)tap_rand(&s);
  bool ok = true;
  if (ic->use_pay)
    ok = imp_packetize_pay(c, seq0);
  else
    imp_packetize_simple(c, ic->donl, seq0);
  ok = ok && imp_map(c, ic->donl);
  CHECK(ok);
  if (!ok) {
    free(imp_arena);
    return;
  }
  int np = imp_np;

  /* Impair. */
  memset(imp_marker_arrived, 0, sizeof(imp_marker_arrived));
  int m = 0, dups = 0, max_arrived = 0, burst = 0;
  for (int i = 0; i < np; i++) {
    unsigned roll = (unsigned)(tap_rand(&s) % 1000);
    if (i > 0 && burst == 0 && roll < ic->drop_pct * 10)
      burst = 1 + (int)(tap_rand(&s) % ic->burst_max);
    imp_dropped[i] = burst > 0;
    if (burst > 0) {
      burst--;
      continue;
    }
    int copies = roll % 100 < ic->dup_pct ? 2 : 1;
    dups += copies - 1;
    for (int cpy = 0; cpy < copies; cpy++) {
      imp_arrivals[m] = i;
      imp_keys[m] = i == 0 ? 0
                   : (uint64_t)i * 4096 + 1 + tap_rand(&s) % (IMP_WINDOW * 4096 - 4095);
      m++;
    }
    max_arrived = i;
    const imp_pkt_t *ip = &imp_pkts[i];
    if (i == np - 1 || imp_pkts[i + 1].au != ip->au)
      imp_marker_arrived[ip->au] = true;
    for (int k = ip->nal_first; k <= ip->nal_last; k++)
      imp_nals[ip->au][k].pkts_arrived++;
  }
  for (int i = 1; i < m; i++) {   /* stable insertion sort: nearly sorted */
    int v = imp_arrivals[i];
    uint64_t key = imp_keys[i];
    int j = i;
    while (j > 0 && imp_keys[j - 1] > key) {
      imp_arrivals[j] = imp_arrivals[j - 1];
      imp_keys[j] = imp_keys[j - 1];
      j--;
    }
    imp_arrivals[j] = v;
    imp_keys[j] = key;
  }
  int lost_expect = 0;
  for (int i = 0; i < max_arrived; i++)
    lost_expect += imp_dropped[i];

  /* Which AUs must come out. DROP_NAL: those with a whole NAL unit.
   * DROP_AU: those seen undamaged: not following a lost packet (an orphan
   * FU fragment at their start is one case of it), not ending inside an
   * FU, and not missing a packet after their first arrival that a later
   * arrival revealed as lost. */
  int seen_aus = 0, whole_after_gap = 0;
  for (int a = 0, i = 0; a < IMP_AUS; a++) {
    bool any = false;
    int whole = 0;
    for (int k = 0; k < imp_nn[a]; k++) {
      any |= imp_nals[a][k].pkts_arrived > 0;
      whole += imp_nals[a][k].pkts_arrived == imp_nals[a][k].pkts_total;
    }
    int first = -1, last = -1;
    bool damaged = false;
    imp_after_gap[a] = false;
    for (; i < np && imp_pkts[i].au == a; i++) {
      if (!imp_dropped[i] && first < 0) {
        first = i;
        imp_after_gap[a] = damaged = i > 0 && imp_dropped[i - 1];
      } else if (imp_dropped[i] && first >= 0 && i < max_arrived) {
        damaged = true;
      }
      if (!imp_dropped[i])
        last = i;
    }
    if (last >= 0 && imp_pkts[last].fu_open)
      damaged = true;
    imp_damaged[a] = damaged;
    seen_aus += any;
    whole_after_gap += imp_after_gap[a] && whole == imp_nn[a];
    imp_want[a] = ic->pol == URTP_LOSS_DROP_NAL ? whole > 0 : any && !damaged && whole > 0;
  }

  urtp_depay_config_t cfg = {
    .codec = c, .pt = PT, .ssrc = SSRC, .reorder_window = IMP_WINDOW, .loss_policy = ic->pol,
    .donl = ic->donl,
  };
  urtp_depay_t *d = urtp_depay_new(&cfg);
  REQUIRE(d);
  int corrupt = 0, wrong_list = 0, whole_missing = 0, whole_damaged = 0, bad_flags = 0;
  int order = 0, delivered = 0, last_au = -1;
  uint64_t nal_sum = 0;
  memset(imp_got, 0, sizeof(imp_got));
  for (int i = 0; i <= m; i++) {
    if (i < m) {
      const imp_pkt_t *ip = &imp_pkts[imp_arrivals[i]];
      urtp_depay_push(d, imp_arena + ip->off, ip->len);
    } else {
      urtp_depay_flush(d, true);
    }
    urtp_au_t au;
    while (urtp_depay_pop(d, &au)) {
      delivered++;
      nal_sum += au.nal_count;
      int a = (int)((au.rtp_ts - 90000u) / 3000u);
      if (a < 0 || a >= IMP_AUS || au.rtp_ts != 90000u + 3000u * (uint32_t)a || imp_got[a] ||
          a <= last_au) {
        order++;
        free(au.data);
        continue;
      }
      imp_got[a] = true;
      last_au = a;
      /* Every NAL unit must be one of the AU's originals, in order. */
      size_t pos = 0;
      int next = 0, matched = 0, want = 0;
      bool complete = true;
      while (pos < au.len) {
        bool sc = au.len - pos >= 4 && is_start_code(au.data + pos);
        int found = -1;
        for (int k = next; sc && k < imp_nn[a]; k++) {
          const nal_t *nn = &imp_nals[a][k].nal;
          size_t end = pos + 4 + nn->n;
          if (end <= au.len && memcmp(au.data + pos + 4, nn->b, nn->n) == 0 &&
              (end == au.len || (au.len - end >= 4 && is_start_code(au.data + end)))) {
            found = k;
            break;
          }
        }
        if (found < 0) {
          corrupt++;
          break;
        }
        pos += 4 + imp_nals[a][found].nal.n;
        next = found + 1;
        matched++;
      }
      for (int k = 0; k < imp_nn[a]; k++) {
        bool whole = imp_nals[a][k].pkts_arrived == imp_nals[a][k].pkts_total;
        want += whole;
        complete &= whole;
      }
      if ((uint32_t)matched != au.nal_count)
        corrupt++;
      /* an AU all of whose packets arrived comes out whole, and unflagged
       * unless a packet just before it was lost */
      if (complete && (matched != imp_nn[a] ||
                       ((au.flags & URTP_AU_DAMAGED) != 0) != imp_after_gap[a]))
        whole_damaged++;
      /* DROP_NAL: DAMAGED exactly when the model says so; and an AU after
       * a lost packet always says DISCONT */
      if (ic->pol == URTP_LOSS_DROP_NAL && ((au.flags & URTP_AU_DAMAGED) != 0) != imp_damaged[a])
        bad_flags++;
      if (imp_after_gap[a] && !(au.flags & URTP_AU_DISCONT))
        bad_flags++;
      /* DROP_NAL: exactly the NAL units whose packets all arrived */
      if (ic->pol == URTP_LOSS_DROP_NAL && matched != want)
        wrong_list++;
      /* an incomplete AU says so (a lost tail of the last AU shows only as
       * the missing marker) */
      if (!complete && !(au.flags & (URTP_AU_DAMAGED | URTP_AU_DISCONT | URTP_AU_NO_MARKER)))
        bad_flags++;
      if (((au.flags & URTP_AU_NO_MARKER) != 0) != !imp_marker_arrived[a])
        bad_flags++;
      if (ic->pol == URTP_LOSS_DROP_AU && (au.flags & URTP_AU_DAMAGED))
        bad_flags++;
      /* the keyframe NAL unit is the last of every 25th AU */
      bool key = a % 25 == 0 && next == imp_nn[a];
      if (((au.flags & URTP_AU_KEYFRAME) != 0) != key)
        bad_flags++;
      free(au.data);
    }
  }
  int wrong_set = 0;
  for (int a = 0; a < IMP_AUS; a++) {
    bool complete = true;
    for (int k = 0; k < imp_nn[a]; k++)
      complete &= imp_nals[a][k].pkts_arrived == imp_nals[a][k].pkts_total;
    if (complete && !imp_got[a] && !(ic->pol == URTP_LOSS_DROP_AU && imp_after_gap[a]))
      whole_missing++;
    wrong_set += imp_want[a] != imp_got[a];
  }
  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  printf("# seed %" PRIu64 ": %d packets (%d lost, %d duplicated): %d of %d AUs delivered, %" PRIu64
         " dropped, %" PRIu64 " NAL units dropped; %d whole AUs after a loss\n",
         ic->seed, np, lost_expect, dups, delivered, IMP_AUS, st->dropped_aus, st->dropped_nals,
         whole_after_gap);
  CHECK_EQ(corrupt, 0);
  CHECK_EQ(order, 0);
  CHECK_EQ(wrong_list, 0);
  CHECK_EQ(whole_missing, 0);
  CHECK_EQ(wrong_set, 0);
  CHECK_EQ(whole_damaged, 0);
  CHECK_EQ(bad_flags, 0);
  CHECK_EQ(st->aus, delivered);
  CHECK_EQ(st->nals, nal_sum);
  CHECK_EQ(st->aus + st->dropped_aus, seen_aus);
  CHECK_EQ(st->seq.lost, lost_expect);
  CHECK_EQ(st->seq.duplicates, dups);
  CHECK_EQ(st->seq.late, 0);
  CHECK_EQ(st->seq.delivered, max_arrived + 1 - lost_expect);
  CHECK_EQ(st->malformed + st->unsupported + st->foreign + st->oversize, 0);
  CHECK(delivered > IMP_AUS / 2);
  CHECK(st->dropped_nals > 0);
  CHECK(whole_after_gap > 0);   /* the seeds exercise the AU after a loss */
  urtp_depay_free(d);
  free(imp_arena);
}

static void run_impaired_seeds(urtp_codec_t c, urtp_loss_policy_t pol, bool donl, bool use_pay)
{
  for (uint64_t seed = 1; seed <= 4; seed++) {
    imp_cfg_t ic = {
      .codec = c, .pol = pol, .donl = donl, .use_pay = use_pay,
      .seed = seed * 1000 + (uint64_t)c * 10 + (uint64_t)pol,
      .drop_pct = seed % 2 ? 2 : 5, .burst_max = seed <= 2 ? 1 : 6, .dup_pct = 3,
    };
    run_impaired(&ic);
  }
}

static void test_impaired_h264_drop_nal(void) { run_impaired_seeds(URTP_CODEC_H264, URTP_LOSS_DROP_NAL, false, false); }
static void test_impaired_h264_drop_au(void) { run_impaired_seeds(URTP_CODEC_H264, URTP_LOSS_DROP_AU, false, false); }
static void test_impaired_h265_drop_nal(void) { run_impaired_seeds(URTP_CODEC_H265, URTP_LOSS_DROP_NAL, false, false); }
static void test_impaired_h265_drop_au(void) { run_impaired_seeds(URTP_CODEC_H265, URTP_LOSS_DROP_AU, false, false); }
static void test_impaired_h265_donl(void) { run_impaired_seeds(URTP_CODEC_H265, URTP_LOSS_DROP_NAL, true, false); }
static void test_impaired_h266_drop_nal(void) { run_impaired_seeds(URTP_CODEC_H266, URTP_LOSS_DROP_NAL, false, false); }
static void test_impaired_h266_drop_au(void) { run_impaired_seeds(URTP_CODEC_H266, URTP_LOSS_DROP_AU, false, false); }
static void test_impaired_pay_h264(void) { run_impaired_seeds(URTP_CODEC_H264, URTP_LOSS_DROP_NAL, false, true); }
static void test_impaired_pay_h265(void) { run_impaired_seeds(URTP_CODEC_H265, URTP_LOSS_DROP_AU, false, true); }
static void test_impaired_pay_h266(void) { run_impaired_seeds(URTP_CODEC_H266, URTP_LOSS_DROP_NAL, false, true); }

int main(void)
{
  TAP_RUN(test_h264_stap_a_fu_a);
  TAP_RUN(test_h264_basic);
  TAP_RUN(test_h265_basic);
  TAP_RUN(test_h266_basic);
  TAP_RUN(test_h266_fu_header);
  TAP_RUN(test_opus);
  TAP_RUN(test_malformed_table);
  TAP_RUN(test_fu_errors);
  TAP_RUN(test_foreign_and_ssrc_lock);
  TAP_RUN(test_bad_config);
  TAP_RUN(test_h265_donl);
  TAP_RUN(test_h265_paci);
  TAP_RUN(test_reordered_au);
  TAP_RUN(test_wrap_across_au);
  TAP_RUN(test_duplicates_late);
  TAP_RUN(test_resync);
  TAP_RUN(test_window_zero);
  TAP_RUN(test_fu_loss_drop_nal);
  TAP_RUN(test_fu_loss_drop_au);
  TAP_RUN(test_loss_spanning_fus);
  TAP_RUN(test_loss_between_aus);
  TAP_RUN(test_no_marker_and_flush);
  TAP_RUN(test_wait_for_keyframe);
  TAP_RUN(test_oversize);
  TAP_RUN(test_queue_overflow);
  TAP_RUN(test_recycle_reuse);
  TAP_RUN(test_recycle_many_and_after_free);
  TAP_RUN(test_recycle_opus_overflow);
  TAP_RUN(test_recycle_threads);
  TAP_RUN(test_impaired_h264_drop_nal);
  TAP_RUN(test_impaired_h264_drop_au);
  TAP_RUN(test_impaired_h265_drop_nal);
  TAP_RUN(test_impaired_h265_drop_au);
  TAP_RUN(test_impaired_h265_donl);
  TAP_RUN(test_impaired_h266_drop_nal);
  TAP_RUN(test_impaired_h266_drop_au);
  TAP_RUN(test_impaired_pay_h264);
  TAP_RUN(test_impaired_pay_h265);
  TAP_RUN(test_impaired_pay_h266);
  return tap_done();
}
