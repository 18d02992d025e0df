/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_pay.c - the packetizer against the payload format RFCs.
 *
 * The table cases spell out, for chosen NAL units, the exact packets the
 * RFCs call for: length, marker, payload header, FU header and payload. The
 * property tests then run random access units through the packetizer and a
 * small reference depacketizer written here from the RFCs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "urtp/batch.h"
#include "urtp/codec.h"
#include "urtp/pay.h"
#include "urtp/rtp.h"
#include "urtp/scl.h"

#define PT 96
#define SSRC 0xdeadbeefu
#define TS 0x12345678u
#define SEQ0 1000

/* ---- helpers ------------------------------------------------------------ */

static int pay_open(urtp_pay_t *p, urtp_codec_t codec, size_t mtu, bool aggregate, uint16_t seq)
{
  urtp_pay_config_t cfg = {
    .codec = codec, .pt = PT, .ssrc = SSRC, .seq_start = seq, .mtu = mtu, .aggregate = aggregate,
  };
  return urtp_pay_init(p, &cfg);
}

static bool in_buf(const void *ptr, const uint8_t *buf, size_t len)
{
  const uint8_t *q = ptr;
  return q >= buf && q < buf + len;
}

/* Body bytes of NAL unit i: never zero, so that an Annex-B stream built
 * from them has no false start codes. */
static uint8_t body_byte(size_t nal, size_t k)
{
  return (uint8_t)(1 + (nal * 31 + k * 7) % 251);
}

/* ---- table cases --------------------------------------------------------- */

typedef struct exp_pkt {
  char kind;          /* 'S' single NAL unit, 'A' aggregation, 'F' fragment */
  uint16_t len;       /* whole RTP packet */
  bool m;             /* marker */
  uint8_t ph[2];      /* A/F: payload header (1 byte for H.264) */
  uint8_t fuh;        /* F: FU header */
  int nal;            /* S/F: the NAL unit; A: the first one */
  int nnal;           /* A: how many consecutive NAL units */
  size_t off, n;      /* F: fragment of the NAL unit's payload (after its header) */
} exp_pkt_t;

typedef struct nal_spec {
  size_t len;
  uint8_t h0, h1;     /* NAL unit header (h1 unused for H.264) */
} nal_spec_t;

#define MAXN 8
#define MAXP 10

typedef struct pay_case {
  const char *name;
  urtp_codec_t codec;
  size_t mtu;
  bool aggregate, eau;
  int nnal;
  nal_spec_t nal[MAXN];
  int npkt;
  exp_pkt_t pkt[MAXP];
} pay_case_t;

#define S(l, m_, i) { 'S', l, m_, { 0, 0 }, 0, i, 0, 0, 0 }
#define A(l, m_, p0, p1, i, k) { 'A', l, m_, { p0, p1 }, 0, i, k, 0, 0 }
#define F(l, m_, p0, p1, fu, i, o, n_) { 'F', l, m_, { p0, p1 }, fu, i, 0, o, n_ }

/*
 * MTU 100 throughout: 88 payload bytes. FU fragments carry at most
 * 88 - 1 - 1 = 86 bytes (H.264) or 88 - 2 - 1 = 85 bytes (H.265, H.266).
 */
static const pay_case_t cases[] = {
  /* ---- H.264, RFC 6184 ---- */
  { "h264 single NAL unit packet", URTP_CODEC_H264, 100, false, true,
    1, { { 50, 0x65, 0 } },
    1, { S(62, true, 0) } },
  { "h264 NAL unit exactly at the MTU", URTP_CODEC_H264, 100, false, true,
    1, { { 88, 0x65, 0 } },
    1, { S(100, true, 0) } },
  { "h264 one byte over the MTU: FU-A, indicator F|NRI|28, header S|E|R|Type",
    URTP_CODEC_H264, 100, false, true,
    1, { { 89, 0x65, 0 } },
    2, { F(100, false, 0x7c, 0, 0x85, 0, 0, 86), F(16, true, 0x7c, 0, 0x45, 0, 86, 2) } },
  { "h264 FU-A keeps NRI 2 of a non-IDR slice", URTP_CODEC_H264, 100, false, false,
    1, { { 100, 0x41, 0 } },
    2, { F(100, false, 0x5c, 0, 0x81, 0, 0, 86), F(27, false, 0x5c, 0, 0x41, 0, 86, 13) } },
  { "h264 header-only NAL units (1 byte)", URTP_CODEC_H264, 100, false, true,
    2, { { 1, 0x09, 0 }, { 1, 0x0a, 0 } },
    2, { S(13, false, 0), S(13, true, 1) } },
  { "h264 empty NAL units are skipped, marker on the last real one",
    URTP_CODEC_H264, 100, true, true,
    3, { { 0, 0, 0 }, { 10, 0x41, 0 }, { 0, 0, 0 } },
    1, { S(22, true, 1) } },
  { "h264 AU with STAP-A: AUD SPS PPS SEI aggregated, IDR fragmented",
    URTP_CODEC_H264, 100, true, true,
    5, { { 2, 0x09, 0 }, { 20, 0x67, 0 }, { 6, 0x68, 0 }, { 30, 0x06, 0 }, { 300, 0x65, 0 } },
    5, { A(79, false, 0x78, 0, 0, 4),
         F(100, false, 0x7c, 0, 0x85, 4, 0, 86), F(100, false, 0x7c, 0, 0x05, 4, 86, 86),
         F(100, false, 0x7c, 0, 0x05, 4, 172, 86), F(55, true, 0x7c, 0, 0x45, 4, 258, 41) } },
  { "h264 same AU without aggregation", URTP_CODEC_H264, 100, false, true,
    5, { { 2, 0x09, 0 }, { 20, 0x67, 0 }, { 6, 0x68, 0 }, { 30, 0x06, 0 }, { 300, 0x65, 0 } },
    8, { S(14, false, 0), S(32, false, 1), S(18, false, 2), S(42, false, 3),
         F(100, false, 0x7c, 0, 0x85, 4, 0, 86), F(100, false, 0x7c, 0, 0x05, 4, 86, 86),
         F(100, false, 0x7c, 0, 0x05, 4, 172, 86), F(55, true, 0x7c, 0, 0x45, 4, 258, 41) } },
  { "h264 STAP-A of one unit is sent as a single NAL unit packet",
    URTP_CODEC_H264, 100, true, true,
    2, { { 80, 0x67, 0 }, { 80, 0x68, 0 } },
    2, { S(92, false, 0), S(92, true, 1) } },
  { "h264 small NAL unit before a fragmented one goes alone", URTP_CODEC_H264, 100, true, false,
    2, { { 10, 0x06, 0 }, { 100, 0x65, 0 } },
    3, { S(22, false, 0), F(100, false, 0x7c, 0, 0x85, 1, 0, 86),
         F(27, false, 0x7c, 0, 0x45, 1, 86, 13) } },
  { "h264 STAP-A takes units greedily while they fit (1+42+42 <= 88)",
    URTP_CODEC_H264, 100, true, true,
    3, { { 40, 0x67, 0 }, { 40, 0x68, 0 }, { 40, 0x06, 0 } },
    2, { A(97, false, 0x78, 0, 0, 2), S(52, true, 2) } },
  { "h264 STAP-A exactly at the MTU (1 + 2+40 + 2+43 = 88)", URTP_CODEC_H264, 100, true, true,
    2, { { 40, 0x67, 0 }, { 43, 0x68, 0 } },
    1, { A(100, true, 0x78, 0, 0, 2) } },
  { "h264 STAP-A one byte over the MTU: two single NAL unit packets",
    URTP_CODEC_H264, 100, true, true,
    2, { { 40, 0x67, 0 }, { 44, 0x68, 0 } },
    2, { S(52, false, 0), S(56, true, 1) } },
  { "h264 STAP-A: F is the OR of F bits, NRI the maximum NRI", URTP_CODEC_H264, 100, true, true,
    4, { { 5, 0x06, 0 }, { 5, 0x41, 0 }, { 5, 0x21, 0 }, { 5, 0x86, 0 } },
    1, { A(41, true, 0xd8, 0, 0, 4) } },
  { "h264 STAP-A: NRI of the first unit is not lowered", URTP_CODEC_H264, 100, true, true,
    2, { { 5, 0x67, 0 }, { 5, 0x06, 0 } },
    1, { A(27, true, 0x78, 0, 0, 2) } },

  /* ---- H.265, RFC 7798: F|Type(6)|LayerId(6)|TID(3) ---- */
  { "h265 NAL unit exactly at the MTU", URTP_CODEC_H265, 100, false, true,
    1, { { 88, 0x26, 0x01 } },
    1, { S(100, true, 0) } },
  { "h265 one byte over the MTU: FU 49, FU header S|E|FuType",
    URTP_CODEC_H265, 100, false, true,
    1, { { 89, 0x26, 0x01 } },
    2, { F(100, false, 0x62, 0x01, 0x93, 0, 0, 85), F(17, true, 0x62, 0x01, 0x53, 0, 85, 2) } },
  { "h265 FU payload header keeps LayerId (33) and TID of the NAL unit",
    URTP_CODEC_H265, 100, false, true,
    1, { { 100, 0x4f, 0x0c } },
    2, { F(100, false, 0x63, 0x0c, 0xa7, 0, 0, 85), F(28, true, 0x63, 0x0c, 0x67, 0, 85, 13) } },
  { "h265 header-only NAL unit (2 bytes); a 1-byte one is skipped",
    URTP_CODEC_H265, 100, false, true,
    2, { { 1, 0x46, 0x01 }, { 2, 0x46, 0x01 } },
    1, { S(14, true, 1) } },
  { "h265 AU with AP: VPS SPS PPS SEI aggregated, IDR fragmented",
    URTP_CODEC_H265, 100, true, true,
    5, { { 20, 0x40, 0x01 }, { 30, 0x42, 0x01 }, { 6, 0x44, 0x01 }, { 10, 0x4e, 0x01 },
         { 200, 0x26, 0x01 } },
    4, { A(88, false, 0x60, 0x01, 0, 4),
         F(100, false, 0x62, 0x01, 0x93, 4, 0, 85), F(100, false, 0x62, 0x01, 0x13, 4, 85, 85),
         F(43, true, 0x62, 0x01, 0x53, 4, 170, 28) } },
  { "h265 AP: F is the OR, LayerId and TID the lowest of the units",
    URTP_CODEC_H265, 100, true, true,
    3, { { 4, 0x4f, 0x0c }, { 4, 0x02, 0x0d }, { 4, 0x82, 0x1a } },
    1, { A(32, true, 0xe0, 0x0a, 0, 3) } },
  { "h265 AP of one unit is sent as a single NAL unit packet", URTP_CODEC_H265, 100, true, true,
    2, { { 50, 0x40, 0x01 }, { 50, 0x42, 0x01 } },
    2, { S(62, false, 0), S(62, true, 1) } },

  /* ---- H.266, RFC 9328: F|Z|LayerId(6)|Type(5)|TID(3) ---- */
  { "h266 NAL unit exactly at the MTU", URTP_CODEC_H266, 100, false, true,
    1, { { 88, 0x00, 0x41 } },
    1, { S(100, true, 0) } },
  { "h266 one byte over: FU 29, last FU of the last VCL NAL unit gets P",
    URTP_CODEC_H266, 100, false, true,
    1, { { 89, 0x00, 0x41 } },
    2, { F(100, false, 0x00, 0xe9, 0x88, 0, 0, 85), F(17, true, 0x00, 0xe9, 0x68, 0, 85, 2) } },
  { "h266 header-only NAL unit (2 bytes); a 1-byte one is skipped",
    URTP_CODEC_H266, 100, false, true,
    2, { { 1, 0x00, 0xa1 }, { 2, 0x00, 0xa1 } },
    1, { S(14, true, 1) } },
  { "h266 P bit only on the last FU of the last VCL NAL unit of the AU",
    URTP_CODEC_H266, 100, false, true,
    4, { { 10, 0x00, 0x81 }, { 200, 0x00, 0x41 }, { 200, 0x00, 0x41 }, { 5, 0x00, 0xc1 } },
    8, { S(22, false, 0),
         F(100, false, 0x00, 0xe9, 0x88, 1, 0, 85), F(100, false, 0x00, 0xe9, 0x08, 1, 85, 85),
         F(43, false, 0x00, 0xe9, 0x48, 1, 170, 28),
         F(100, false, 0x00, 0xe9, 0x88, 2, 0, 85), F(100, false, 0x00, 0xe9, 0x08, 2, 85, 85),
         F(43, false, 0x00, 0xe9, 0x68, 2, 170, 28),
         S(17, true, 3) } },
  { "h266 no P bit and no marker when the NAL units do not end the AU",
    URTP_CODEC_H266, 100, false, false,
    4, { { 10, 0x00, 0x81 }, { 200, 0x00, 0x41 }, { 200, 0x00, 0x41 }, { 5, 0x00, 0xc1 } },
    8, { S(22, false, 0),
         F(100, false, 0x00, 0xe9, 0x88, 1, 0, 85), F(100, false, 0x00, 0xe9, 0x08, 1, 85, 85),
         F(43, false, 0x00, 0xe9, 0x48, 1, 170, 28),
         F(100, false, 0x00, 0xe9, 0x88, 2, 0, 85), F(100, false, 0x00, 0xe9, 0x08, 2, 85, 85),
         F(43, false, 0x00, 0xe9, 0x48, 2, 170, 28),
         S(17, false, 3) } },
  { "h266 no P bit when the last VCL NAL unit is not fragmented",
    URTP_CODEC_H266, 100, false, true,
    2, { { 200, 0x00, 0x01 }, { 50, 0x00, 0x01 } },
    4, { F(100, false, 0x00, 0xe9, 0x80, 0, 0, 85), F(100, false, 0x00, 0xe9, 0x00, 0, 85, 85),
         F(43, false, 0x00, 0xe9, 0x40, 0, 170, 28), S(62, true, 1) } },
  { "h266 AP: F is the OR, LayerId and TID the lowest of the units",
    URTP_CODEC_H266, 100, true, true,
    3, { { 4, 0x05, 0xbb }, { 4, 0x82, 0x84 }, { 4, 0x07, 0x79 } },
    1, { A(32, true, 0x82, 0xe1, 0, 3) } },
  { "h266 AU with AP: AUD SPS PPS aggregated, IDR fragmented with P",
    URTP_CODEC_H266, 100, true, true,
    4, { { 3, 0x00, 0xa1 }, { 20, 0x00, 0x79 }, { 6, 0x00, 0x81 }, { 200, 0x00, 0x41 } },
    4, { A(49, false, 0x00, 0xe1, 0, 3),
         F(100, false, 0x00, 0xe9, 0x88, 3, 0, 85), F(100, false, 0x00, 0xe9, 0x08, 3, 85, 85),
         F(43, true, 0x00, 0xe9, 0x68, 3, 170, 28) } },
  { "h266 AP of one unit is sent as a single NAL unit packet", URTP_CODEC_H266, 100, true, true,
    2, { { 10, 0x00, 0x81 }, { 200, 0x00, 0x41 } },
    4, { S(22, false, 0),
         F(100, false, 0x00, 0xe9, 0x88, 1, 0, 85), F(100, false, 0x00, 0xe9, 0x08, 1, 85, 85),
         F(43, true, 0x00, 0xe9, 0x68, 1, 170, 28) } },
};

/* Builds the expected packet payload from the case's NAL units. */
static size_t expected_payload(const pay_case_t *c, const exp_pkt_t *e, const urtp_nal_t *nals,
                               size_t hl, uint8_t *dst)
{
  size_t n = 0;
  switch (e->kind) {
  case 'S':
    memcpy(dst, nals[e->nal].data, nals[e->nal].len);
    return nals[e->nal].len;
  case 'F':
    memcpy(dst, e->ph, hl);
    dst[hl] = e->fuh;
    memcpy(dst + hl + 1, nals[e->nal].data + hl + e->off, e->n);
    return hl + 1 + e->n;
  case 'A':
    memcpy(dst, e->ph, hl);
    n = hl;
    for (int i = e->nal; i < e->nal + e->nnal; i++) {
      dst[n++] = (uint8_t)(nals[i].len >> 8);
      dst[n++] = (uint8_t)nals[i].len;
      memcpy(dst + n, nals[i].data, nals[i].len);
      n += nals[i].len;
    }
    return n;
  }
  (void)c;
  return 0;
}

/* Payload bytes of the packet that must come from the caller's buffer. */
static size_t expected_borrowed(const exp_pkt_t *e, const urtp_nal_t *nals)
{
  size_t n = 0;
  switch (e->kind) {
  case 'S': return nals[e->nal].len;
  case 'F': return e->n;
  case 'A':
    for (int i = e->nal; i < e->nal + e->nnal; i++)
      n += nals[i].len;
    return n;
  }
  return 0;
}

static void run_case(const pay_case_t *c)
{
  uint8_t in[4096], pkt[200], want[200];
  urtp_nal_t nals[MAXN];
  size_t off = 0;
  for (int i = 0; i < c->nnal; i++) {
    const nal_spec_t *s = &c->nal[i];
    uint8_t *d = in + off;
    for (size_t k = 0; k < s->len; k++)
      d[k] = body_byte((size_t)i, k);
    if (s->len >= 1)
      d[0] = s->h0;
    if (s->len >= 2 && c->codec != URTP_CODEC_H264)
      d[1] = s->h1;
    nals[i].data = d;
    nals[i].len = s->len;
    off += s->len;
  }

  urtp_pay_t p;
  urtp_batch_t b;
  urtp_batch_init(&b);
  if (pay_open(&p, c->codec, c->mtu, c->aggregate, SEQ0) != 0) {
    printf("#   case \"%s\": init failed\n", c->name);
    tap_cur_failed = 1;
    return;
  }
  const size_t hl = urtp_h26x_desc(c->codec)->hdr_len;
  int r = urtp_pay_nals(&p, nals, (size_t)c->nnal, TS, c->eau, &b);
  bool ok = r == c->npkt && b.npkts == (size_t)c->npkt;
  if (!ok)
    printf("#   case \"%s\": %d packets, want %d\n", c->name, r, c->npkt);
  uint64_t bytes = 0;
  for (int i = 0; ok && i < c->npkt; i++) {
    const exp_pkt_t *e = &c->pkt[i];
    size_t len = urtp_batch_copy_pkt(&b, (size_t)i, pkt, sizeof pkt);
    urtp_rtp_pkt_t rp;
    bytes += len;
    if (len != e->len || b.pkts[i].len != e->len || urtp_rtp_parse(pkt, len, &rp) != 0) {
      printf("#   case \"%s\" packet %d: length %zu, want %u\n", c->name, i, len, e->len);
      ok = false;
      break;
    }
    size_t wl = expected_payload(c, e, nals, hl, want);
    if (rp.hdr.marker != e->m || rp.hdr.seq != (uint16_t)(SEQ0 + i) || rp.hdr.ts != TS ||
        rp.hdr.pt != PT || rp.hdr.ssrc != SSRC || rp.hdr.csrc_count || rp.hdr.has_ext ||
        rp.payload_len != wl || memcmp(rp.payload, want, wl) != 0) {
      printf("#   case \"%s\" packet %d: header or payload differs (m=%d seq=%u ph=%02x %02x %02x)\n",
             c->name, i, rp.hdr.marker, rp.hdr.seq, rp.payload[0], rp.payload[1], rp.payload[2]);
      ok = false;
    }
    /* Zero copy: headers in the arena, payload iovecs into our buffer. */
    const struct iovec *v = &b.iov[b.pkts[i].iov_first];
    size_t borrowed = 0;
    for (unsigned k = 0; k < b.pkts[i].iov_count; k++)
      if (in_buf(v[k].iov_base, in, off))
        borrowed += v[k].iov_len;
    if (in_buf(v[0].iov_base, in, off) || borrowed != expected_borrowed(e, nals)) {
      printf("#   case \"%s\" packet %d: payload was copied\n", c->name, i);
      ok = false;
    }
    if (e->kind == 'S' && v[1].iov_base != nals[e->nal].data)
      ok = false;
    if (e->kind == 'F' && v[1].iov_base != nals[e->nal].data + hl + e->off)
      ok = false;
  }
  if (ok && (p.packets != (uint64_t)c->npkt || p.bytes != bytes ||
             p.seq != (uint16_t)(SEQ0 + c->npkt))) {
    printf("#   case \"%s\": counters packets=%llu bytes=%llu seq=%u\n", c->name,
           (unsigned long long)p.packets, (unsigned long long)p.bytes, p.seq);
    ok = false;
  }
  if (!ok)
    tap_cur_failed = 1;
  urtp_batch_free(&b);
  urtp_pay_destroy(&p);
}

static void test_rfc_tables(void)
{
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_case(&cases[i]);
}

/* ---- a reference depacketizer ------------------------------------------- */

typedef struct ref_out {
  uint8_t *buf;           /* reassembled NAL units, back to back */
  size_t len, cap;
  size_t *nal_off, *nal_len;
  size_t nnal, nal_cap;
  bool in_fu;
  size_t fu_start;
  int errors;
  unsigned p_bits;        /* FUs with the H.266 P bit */
  size_t p_nal;           /* index of the NAL unit whose FU carried it */
} ref_out_t;

static void ref_push(ref_out_t *o, size_t start)
{
  if (o->nnal == o->nal_cap) {
    o->nal_cap = o->nal_cap ? 2 * o->nal_cap : 64;
    o->nal_off = realloc(o->nal_off, o->nal_cap * sizeof(size_t));
    o->nal_len = realloc(o->nal_len, o->nal_cap * sizeof(size_t));
  }
  o->nal_off[o->nnal] = start;
  o->nal_len[o->nnal] = o->len - start;
  o->nnal++;
}

static void ref_put(ref_out_t *o, const uint8_t *d, size_t n)
{
  if (o->len + n > o->cap) {
    while (o->len + n > o->cap)
      o->cap = o->cap ? 2 * o->cap : 65536;
    o->buf = realloc(o->buf, o->cap);
  }
  memcpy(o->buf + o->len, d, n);
  o->len += n;
}

static void ref_free(ref_out_t *o)
{
  free(o->buf);
  free(o->nal_off);
  free(o->nal_len);
  memset(o, 0, sizeof(*o));
}

/* Checks the RFC rules a receiver can see and reassembles the NAL units. */
static void ref_depay(const urtp_h26x_desc_t *d, size_t mtu, const uint8_t *pl, size_t n,
                      ref_out_t *o)
{
  const size_t hl = d->hdr_len;
  if (n < hl) {
    o->errors++;
    return;
  }
  unsigned type = urtp_h26x_type(d, pl);
  if (type == d->ap_type) {
    size_t off = hl, units = 0;
    while (off < n) {
      if (n - off < 2) {
        o->errors++;
        return;
      }
      size_t sz = (size_t)(pl[off] << 8 | pl[off + 1]);
      if (sz < hl || sz > n - off - 2) {
        o->errors++;
        return;
      }
      size_t start = o->len;
      ref_put(o, pl + off + 2, sz);
      ref_push(o, start);
      off += 2 + sz;
      units++;
    }
    if (units < 2)
      o->errors++;   /* an AP of one unit must be a single NAL unit packet */
  } else if (type == d->fu_type) {
    uint8_t fuh = pl[hl];
    bool s = fuh & 0x80, e = fuh & 0x40;
    if ((s && e) || s == o->in_fu || (d->codec == URTP_CODEC_H264 && (fuh & 0x20)))
      o->errors++;
    if (s) {
      uint8_t h[2];
      urtp_h26x_write_hdr(d, h, pl, fuh & d->fu_type_mask);
      o->fu_start = o->len;
      ref_put(o, h, hl);
      o->in_fu = true;
    }
    ref_put(o, pl + hl + 1, n - hl - 1);
    /* Equal fragments: every FU but the last fills the MTU exactly. */
    if (!e && 12 + n != mtu)
      o->errors++;
    if (d->codec == URTP_CODEC_H266 && (fuh & 0x20)) {
      if (!e)
        o->errors++;
      o->p_bits++;
      o->p_nal = o->nnal;
    }
    if (e) {
      ref_push(o, o->fu_start);
      o->in_fu = false;
    }
  } else {
    size_t start = o->len;
    ref_put(o, pl, n);
    ref_push(o, start);
  }
}

/* ---- property tests ------------------------------------------------------ */

static size_t rand_nal_len(uint64_t *seed)
{
  uint64_t r = tap_rand(seed) % 100;
  if (r < 25)
    return tap_rand(seed) % 5;
  if (r < 65)
    return 5 + tap_rand(seed) % 300;
  if (r < 95)
    return 300 + tap_rand(seed) % 5000;
  return 5000 + tap_rand(seed) % 60000;
}

/* A NAL unit header with random fields but a type a real encoder emits
 * (never an AP/FU type). */
static void rand_hdr(urtp_codec_t codec, uint64_t *seed, uint8_t *h, size_t len)
{
  uint64_t r = tap_rand(seed);
  switch (codec) {
  case URTP_CODEC_H264:
    h[0] = (uint8_t)((r & 0xe0) | (1 + (r >> 8) % 23));
    break;
  case URTP_CODEC_H265:
    h[0] = (uint8_t)((r & 0x81) | ((r >> 8) % 48) << 1);
    if (len > 1)
      h[1] = (uint8_t)(r >> 16);
    break;
  default:
    h[0] = (uint8_t)(r & 0xbf);
    if (len > 1)
      h[1] = (uint8_t)(((r >> 8) % 28) << 3 | ((r >> 16) & 7));
    break;
  }
}

static void test_random_aus(void)
{
  uint64_t seed = 0x5eed0001;
  const size_t in_cap = 20 * 65100;
  uint8_t *in = malloc(in_cap);
  uint8_t *pkt = malloc(65536);
  REQUIRE(in && pkt);
  for (size_t k = 0; k < in_cap; k++)
    in[k] = (uint8_t)tap_rand(&seed);

  unsigned failures = 0, over_mtu = 0, aps = 0, fus = 0;
  for (int iter = 0; iter < 4000; iter++) {
    urtp_codec_t codec = (urtp_codec_t)(tap_rand(&seed) % 3);
    const urtp_h26x_desc_t *d = urtp_h26x_desc(codec);
    uint64_t mr = tap_rand(&seed) % 10;
    size_t mtu = mr < 6 ? 64 + tap_rand(&seed) % 1437 : mr < 9 ? 1500 + tap_rand(&seed) % 7500
                                                                : 9000 + tap_rand(&seed) % 56536;
    bool aggregate = tap_rand(&seed) & 1, eau = tap_rand(&seed) % 4 != 0;
    uint16_t seq = (uint16_t)tap_rand(&seed);

    urtp_nal_t nals[20];
    size_t n = 1 + tap_rand(&seed) % 20, off = 0, want_nals = 0, last_vcl = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
      nals[i].data = in + off;
      nals[i].len = rand_nal_len(&seed);
      rand_hdr(codec, &seed, in + off, nals[i].len);
      off += nals[i].len;
      if (nals[i].len >= d->hdr_len) {
        if (urtp_h26x_is_vcl(d, urtp_h26x_type(d, nals[i].data)))
          last_vcl = want_nals;
        want_nals++;
      }
    }

    urtp_pay_t p;
    urtp_batch_t b;
    urtp_batch_init(&b);
    REQUIRE(pay_open(&p, codec, mtu, aggregate, seq) == 0);
    int r = urtp_pay_nals(&p, nals, n, TS, eau, &b);
    ref_out_t o;
    memset(&o, 0, sizeof o);
    bool ok = r >= 0 && (size_t)r == b.npkts;
    for (size_t i = 0; ok && i < b.npkts; i++) {
      size_t len = urtp_batch_copy_pkt(&b, i, pkt, 65536);
      urtp_rtp_pkt_t rp;
      if (len > mtu || len != b.pkts[i].len) {
        over_mtu++;
        ok = false;
        break;
      }
      if (urtp_rtp_parse(pkt, len, &rp) != 0 || rp.hdr.seq != (uint16_t)(seq + i) ||
          rp.hdr.marker != (eau && i + 1 == b.npkts) || b.pkts[i].iov_count > 1024) {
        ok = false;
        break;
      }
      /* Only the first iovec (headers) and AP size fields live outside the input. */
      const struct iovec *v = &b.iov[b.pkts[i].iov_first];
      size_t outside = 0;
      for (unsigned k = 0; k < b.pkts[i].iov_count; k++)
        if (!in_buf(v[k].iov_base, in, off))
          outside += v[k].iov_len;
      unsigned type = urtp_h26x_type(d, rp.payload);
      if (type == d->ap_type) {
        aps++;
        if (outside != 12 + 2 * (size_t)(b.pkts[i].iov_count / 2) + d->hdr_len)
          ok = false;
      } else if (type == d->fu_type) {
        fus++;
        if (outside != 12u + d->hdr_len + 1)
          ok = false;
      } else if (outside != 12) {
        ok = false;
      }
      ref_depay(d, mtu, rp.payload, rp.payload_len, &o);
    }
    ok = ok && o.errors == 0 && !o.in_fu && o.nnal == want_nals;
    /* Reassembled NAL units equal the input ones. */
    for (size_t i = 0, j = 0; ok && i < n; i++) {
      if (nals[i].len < d->hdr_len)
        continue;
      if (o.nal_len[j] != nals[i].len || memcmp(o.buf + o.nal_off[j], nals[i].data, nals[i].len))
        ok = false;
      j++;
    }
    /* H.266: P at most once, on the last VCL NAL unit, only at the end of the AU. */
    if (ok && codec == URTP_CODEC_H266 && o.p_bits &&
        (o.p_bits != 1 || !eau || o.p_nal != last_vcl))
      ok = false;
    if (ok && codec == URTP_CODEC_H266 && eau && last_vcl != SIZE_MAX) {
      /* fragmented iff it did not fit alone */
      size_t i = 0, j = 0;
      for (; i < n; i++)
        if (nals[i].len >= d->hdr_len && j++ == last_vcl)
          break;
      if ((nals[i].len + 12 > mtu) != (o.p_bits == 1))
        ok = false;
    }
    if (!ok) {
      if (failures++ < 5)
        printf("#   iteration %d (codec %d mtu %zu agg %d): packetization wrong\n", iter, codec,
               mtu, aggregate);
    }
    ref_free(&o);
    urtp_batch_free(&b);
    urtp_pay_destroy(&p);
  }
  CHECK_EQ(failures, 0);
  CHECK_EQ(over_mtu, 0);
  CHECK(aps > 100);
  CHECK(fus > 1000);
  free(in);
  free(pkt);
}

/* A 1.5 MB NAL unit at MTU 1400: over a thousand FUs, all but the last
 * exactly 1400 bytes. */
static void test_huge_nal(void)
{
  const size_t len = 1500000;
  uint8_t *nal = malloc(len), *pkt = malloc(1500);
  REQUIRE(nal && pkt);
  for (size_t k = 0; k < len; k++)
    nal[k] = body_byte(3, k);
  for (int c = URTP_CODEC_H264; c <= URTP_CODEC_H266; c++) {
    const urtp_h26x_desc_t *d = urtp_h26x_desc((urtp_codec_t)c);
    const size_t hl = d->hdr_len, frag = 1400 - 12 - hl - 1;
    const size_t want = (len - hl + frag - 1) / frag;
    nal[0] = c == URTP_CODEC_H264 ? 0x65 : c == URTP_CODEC_H265 ? 0x26 : 0x00;
    if (hl == 2)
      nal[1] = c == URTP_CODEC_H265 ? 0x01 : 0x41;
    urtp_nal_t u = { nal, len };
    urtp_pay_t p;
    urtp_batch_t b;
    urtp_batch_init(&b);
    REQUIRE(pay_open(&p, (urtp_codec_t)c, 0, true, 0) == 0);
    CHECK_EQ(p.cfg.mtu, 1400);
    int r = urtp_pay_nals(&p, &u, 1, TS, true, &b);
    CHECK_EQ(r, (long long)want);
    CHECK(want > 1000);
    REQUIRE(b.npkts == want);
    size_t pos = hl, bad = 0;
    for (size_t i = 0; i < b.npkts; i++) {
      size_t l = urtp_batch_copy_pkt(&b, i, pkt, 1500);
      bool first = i == 0, last = i + 1 == b.npkts;
      size_t body = l - 12 - hl - 1;
      uint8_t fuh = pkt[12 + hl];
      uint8_t want_fuh = (uint8_t)((first ? 0x80 : 0) | (last ? 0x40 : 0) |
                                   (last && c == URTP_CODEC_H266 ? 0x20 : 0) |
                                   urtp_h26x_type(d, nal));
      if ((!last && l != 1400) || (last && l >= 1400) || fuh != want_fuh ||
          urtp_rtp_peek_seq(pkt) != (uint16_t)i || urtp_rtp_peek_marker(pkt) != last ||
          urtp_h26x_type(d, pkt + 12) != d->fu_type ||
          memcmp(pkt + 12 + hl + 1, nal + pos, body) != 0)
        bad++;
      pos += body;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(pos, len);
    urtp_batch_free(&b);
    urtp_pay_destroy(&p);
  }
  free(nal);
  free(pkt);
}

/* Runs of equal FUs at several MTUs: only the last fragment is shorter. */
static void test_fu_equal_size(void)
{
  static uint8_t nal[20000];
  for (size_t k = 0; k < sizeof nal; k++)
    nal[k] = body_byte(1, k);
  nal[0] = 0x26;
  nal[1] = 0x01;
  const size_t mtus[] = { 64, 65, 100, 576, 1200, 1400, 1500, 9000 };
  for (size_t m = 0; m < sizeof mtus / sizeof mtus[0]; m++) {
    for (size_t len = 9000; len < 9020; len++) {
      urtp_nal_t u = { nal, len };
      urtp_pay_t p;
      urtp_batch_t b;
      urtp_batch_init(&b);
      REQUIRE(pay_open(&p, URTP_CODEC_H265, mtus[m], false, 0) == 0);
      int r = urtp_pay_nals(&p, &u, 1, TS, true, &b);
      const size_t frag = mtus[m] - 12 - 3;
      if (len + 12 <= mtus[m]) {
        CHECK_EQ(r, 1);
      } else {
        CHECK_EQ(r, (long long)((len - 2 + frag - 1) / frag));
        for (size_t i = 0; i + 1 < b.npkts; i++)
          CHECK_EQ(b.pkts[i].len, mtus[m]);
        size_t tail = (len - 2) % frag ? (len - 2) % frag : frag;
        CHECK_EQ(b.pkts[b.npkts - 1].len, 15 + tail);
      }
      urtp_batch_free(&b);
      urtp_pay_destroy(&p);
    }
  }
}

/* The MTU boundary at the extremes of the allowed range. */
static void test_mtu_limits(void)
{
  static uint8_t nal[70000];
  for (size_t k = 0; k < sizeof nal; k++)
    nal[k] = body_byte(2, k);
  nal[0] = 0x41;
  const size_t mtus[] = { URTP_PAY_MIN_MTU, 65535 };
  for (size_t m = 0; m < 2; m++) {
    for (size_t extra = 0; extra < 2; extra++) {
      urtp_nal_t u = { nal, mtus[m] - 12 + extra };
      urtp_pay_t p;
      urtp_batch_t b;
      urtp_batch_init(&b);
      REQUIRE(pay_open(&p, URTP_CODEC_H264, mtus[m], true, 0) == 0);
      int r = urtp_pay_nals(&p, &u, 1, TS, true, &b);
      CHECK_EQ(r, extra ? 2 : 1);
      for (size_t i = 0; i < b.npkts; i++)
        CHECK(b.pkts[i].len <= mtus[m]);
      CHECK_EQ(b.pkts[0].len, mtus[m]);
      urtp_batch_free(&b);
      urtp_pay_destroy(&p);
    }
  }
}

/* Very many tiny NAL units at the largest MTU: APs stay within IOV_MAX. */
static void test_many_tiny_units(void)
{
  static uint8_t buf[3000];
  static urtp_nal_t nals[1500];
  for (size_t i = 0; i < 1500; i++) {
    buf[2 * i] = 0x06;
    buf[2 * i + 1] = (uint8_t)i;
    nals[i].data = buf + 2 * i;
    nals[i].len = 2;
  }
  urtp_pay_t p;
  urtp_batch_t b;
  urtp_batch_init(&b);
  REQUIRE(pay_open(&p, URTP_CODEC_H264, 65535, true, 0) == 0);
  int r = urtp_pay_nals(&p, nals, 1500, TS, true, &b);
  CHECK(r >= 2);
  size_t units = 0;
  for (size_t i = 0; i < b.npkts; i++) {
    CHECK(b.pkts[i].iov_count <= 1024);
    units += b.pkts[i].iov_count / 2;
  }
  CHECK_EQ(units, 1500);
  urtp_batch_free(&b);
  urtp_pay_destroy(&p);
}

/* Sequence numbers continue across calls and wrap from 65535 to 0. */
static void test_seq_wrap(void)
{
  static uint8_t nal[300];
  for (size_t k = 0; k < sizeof nal; k++)
    nal[k] = body_byte(0, k);
  nal[0] = 0x65;
  urtp_nal_t u = { nal, sizeof nal };
  urtp_pay_t p;
  urtp_batch_t b;
  urtp_batch_init(&b);
  REQUIRE(pay_open(&p, URTP_CODEC_H264, 100, false, 65533) == 0);
  CHECK_EQ(urtp_pay_nals(&p, &u, 1, 1, true, &b), 4);
  CHECK_EQ(urtp_pay_nals(&p, &u, 1, 2, true, &b), 4);
  CHECK_EQ(urtp_pay_frame(&p, nal, 10, 3, false, &b), 1);
  const uint16_t want[] = { 65533, 65534, 65535, 0, 1, 2, 3, 4, 5 };
  REQUIRE(b.npkts == 9);
  uint8_t pkt[100];
  for (size_t i = 0; i < 9; i++) {
    CHECK(urtp_batch_copy_pkt(&b, i, pkt, sizeof pkt) > 0);
    CHECK_EQ(urtp_rtp_peek_seq(pkt), want[i]);
    CHECK_EQ(urtp_rtp_peek_ts(pkt), i < 4 ? 1 : i < 8 ? 2 : 3);
    CHECK_EQ(urtp_rtp_peek_marker(pkt), i == 3 || i == 7);
  }
  CHECK_EQ(p.seq, 6);
  CHECK_EQ(p.packets, 9);
  urtp_batch_free(&b);
  urtp_pay_destroy(&p);
}

static void test_opus(void)
{
  static uint8_t frame[1400];
  for (size_t k = 0; k < sizeof frame; k++)
    frame[k] = (uint8_t)k;
  urtp_pay_t p;
  urtp_batch_t b;
  urtp_batch_init(&b);
  urtp_pay_config_t cfg = { .codec = URTP_CODEC_OPUS, .pt = 111, .ssrc = 7, .seq_start = 9 };
  REQUIRE(urtp_pay_init(&p, &cfg) == 0);
  CHECK(p.desc == NULL);
  CHECK_EQ(urtp_pay_frame(&p, frame, 160, 960, true, &b), 1);
  CHECK_EQ(urtp_pay_frame(&p, frame, 1388, 1920, false, &b), 1);
  CHECK_EQ(urtp_pay_frame(&p, frame, 1389, 2880, false, &b), -EMSGSIZE);
  CHECK_EQ(b.npkts, 2);
  CHECK_EQ(p.seq, 11);
  CHECK_EQ(p.packets, 2);
  CHECK_EQ(p.bytes, 172 + 1400);

  uint8_t pkt[1400];
  urtp_rtp_pkt_t rp;
  size_t l = urtp_batch_copy_pkt(&b, 0, pkt, sizeof pkt);
  CHECK_EQ(l, 172);
  REQUIRE(urtp_rtp_parse(pkt, l, &rp) == 0);
  CHECK_EQ(rp.hdr.pt, 111);
  CHECK_EQ(rp.hdr.ssrc, 7);
  CHECK_EQ(rp.hdr.seq, 9);
  CHECK_EQ(rp.hdr.ts, 960);
  CHECK(rp.hdr.marker);
  CHECK_EQ(rp.payload_len, 160);
  CHECK_MEM(rp.payload, frame, 160);
  CHECK(b.iov[b.pkts[0].iov_first + 1].iov_base == frame);
  l = urtp_batch_copy_pkt(&b, 1, pkt, sizeof pkt);
  CHECK_EQ(l, 1400);
  REQUIRE(urtp_rtp_parse(pkt, l, &rp) == 0);
  CHECK_EQ(rp.hdr.seq, 10);
  CHECK(!rp.hdr.marker);
  CHECK_MEM(rp.payload, frame, 1388);

  /* NAL units mean nothing to Opus. */
  urtp_nal_t u = { frame, 10 };
  CHECK_EQ(urtp_pay_nals(&p, &u, 1, 0, true, &b), -EINVAL);
  CHECK_EQ(b.npkts, 2);
  urtp_batch_free(&b);
  urtp_pay_destroy(&p);
}

static void test_config(void)
{
  urtp_pay_t p;
  urtp_pay_config_t cfg = { .codec = URTP_CODEC_H265, .pt = 96 };
  CHECK_EQ(urtp_pay_init(&p, &cfg), 0);
  CHECK_EQ(p.cfg.mtu, URTP_PAY_DEFAULT_MTU);
  CHECK(p.desc == urtp_h26x_desc(URTP_CODEC_H265));
  urtp_pay_destroy(&p);

  const struct { size_t mtu; uint8_t pt; int codec; int want; } t[] = {
    { 63, 96, URTP_CODEC_H264, -EINVAL },
    { 64, 96, URTP_CODEC_H264, 0 },
    { 65535, 96, URTP_CODEC_H266, 0 },
    { 65536, 96, URTP_CODEC_H266, -EINVAL },
    { 1, 96, URTP_CODEC_OPUS, -EINVAL },
    { 1400, 127, URTP_CODEC_H264, 0 },
    { 1400, 128, URTP_CODEC_H264, -EINVAL },
    { 1400, 255, URTP_CODEC_OPUS, -EINVAL },
    { 1400, 96, 4, -EINVAL },
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    cfg.mtu = t[i].mtu;
    cfg.pt = t[i].pt;
    cfg.codec = (urtp_codec_t)t[i].codec;
    int r = urtp_pay_init(&p, &cfg);
    if (r != t[i].want)
      printf("#   config %zu: %d, want %d\n", i, r, t[i].want);
    CHECK_EQ(r, t[i].want);
    urtp_pay_destroy(&p);
  }
}

/* ---- Annex-B ------------------------------------------------------------- */

/* Writes NAL units into an Annex-B stream, alternating 3- and 4-byte start
 * codes, and records where each one landed. */
static size_t annexb_build(uint8_t *dst, const size_t *lens, size_t n, urtp_nal_t *where,
                           uint8_t hdr0)
{
  size_t off = 0;
  for (size_t i = 0; i < n; i++) {
    if (i % 2 == 0)
      dst[off++] = 0;
    dst[off++] = 0;
    dst[off++] = 0;
    dst[off++] = 1;
    where[i].data = dst + off;
    where[i].len = lens[i];
    for (size_t k = 0; k < lens[i]; k++)
      dst[off + k] = body_byte(i, k);
    dst[off] = hdr0;
    off += lens[i];
  }
  return off;
}

/* urtp_pay_annexb() gives the same packets as urtp_pay_nals() on the NAL
 * units, pointing into the Annex-B buffer. */
static void test_annexb(void)
{
  static uint8_t stream[200000];
  static urtp_nal_t where[40];
  size_t lens[40];
  uint64_t seed = 42;
  for (size_t i = 0; i < 40; i++)
    lens[i] = 1 + tap_rand(&seed) % 4000;
  size_t len = annexb_build(stream, lens, 40, where, 0x41);

  urtp_pay_t pa, pn;
  urtp_batch_t ba, bn;
  urtp_batch_init(&ba);
  urtp_batch_init(&bn);
  REQUIRE(pay_open(&pa, URTP_CODEC_H264, 1400, true, 5) == 0);
  REQUIRE(pay_open(&pn, URTP_CODEC_H264, 1400, true, 5) == 0);
  int ra = urtp_pay_annexb(&pa, stream, len, TS, true, &ba);
  int rn = urtp_pay_nals(&pn, where, 40, TS, true, &bn);
  CHECK(rn > 40);
  CHECK_EQ(ra, rn);
  CHECK(pa.nals_cap >= 40);
  REQUIRE(ba.npkts == bn.npkts);
  uint8_t a[1400], n[1400];
  for (size_t i = 0; i < ba.npkts; i++) {
    size_t la = urtp_batch_copy_pkt(&ba, i, a, sizeof a);
    size_t ln = urtp_batch_copy_pkt(&bn, i, n, sizeof n);
    CHECK_EQ(la, ln);
    CHECK_MEM(a, n, ln);
    const struct iovec *v = &ba.iov[ba.pkts[i].iov_first];
    CHECK(!in_buf(v[0].iov_base, stream, len));
    CHECK(in_buf(v[1].iov_base, stream, len));
  }
  /* Bytes before the first start code and trailing zeros belong to no NAL unit. */
  static const uint8_t small[] = { 0xaa, 0xbb, 0, 0, 1, 0x67, 1, 2, 0, 0, 0, 0, 1, 0x68, 3, 0, 0 };
  urtp_batch_clear(&ba);
  CHECK_EQ(urtp_pay_annexb(&pa, small, sizeof small, TS, true, &ba), 1);
  REQUIRE(ba.npkts == 1);
  CHECK_EQ(ba.pkts[0].len, 12 + 1 + 2 + 3 + 2 + 2);
  CHECK(ba.iov[ba.pkts[0].iov_first + 1].iov_base == small + 5);
  CHECK_EQ(ba.iov[ba.pkts[0].iov_first + 1].iov_len, 3);
  CHECK(ba.iov[ba.pkts[0].iov_first + 3].iov_base == small + 13);
  CHECK_EQ(ba.iov[ba.pkts[0].iov_first + 3].iov_len, 2);
  /* Nothing but zeros: no packets. */
  static const uint8_t zeros[64];
  CHECK_EQ(urtp_pay_annexb(&pa, zeros, sizeof zeros, TS, true, &ba), 0);
  CHECK_EQ(urtp_pay_annexb(&pa, NULL, 0, TS, true, &ba), 0);
  urtp_batch_free(&ba);
  urtp_batch_free(&bn);
  urtp_pay_destroy(&pa);
  urtp_pay_destroy(&pn);
}

/* After the largest access unit, packetizing allocates nothing: the batch
 * arrays, the arena chunks and the NAL list stay as they are. */
static void test_batch_reuse(void)
{
  const size_t cap = 600000;
  uint8_t *stream = malloc(cap);
  REQUIRE(stream);
  static urtp_nal_t where[64];
  size_t lens[64];
  uint64_t seed = 7;
  urtp_pay_t p;
  urtp_batch_t b;
  urtp_batch_init(&b);
  REQUIRE(pay_open(&p, URTP_CODEC_H265, 1400, true, 0) == 0);
  size_t pkts_cap = 0, iov_cap = 0, nchunks = 0, nals_cap = 0;
  const urtp_pkt_t *pkts = NULL;
  const struct iovec *iov = NULL;
  bool grew = false;
  uint64_t total = 0;
  for (int au = 0; au < 300; au++) {
    /* AU 0 is the largest: 64 NAL units, one of them 500 kB. */
    size_t n = au == 0 ? 64 : 1 + tap_rand(&seed) % 64;
    for (size_t i = 0; i < n; i++)
      lens[i] = 2 + tap_rand(&seed) % 200;
    lens[n - 1] = au == 0 ? 500000 : 2 + tap_rand(&seed) % 400000;
    size_t len = annexb_build(stream, lens, n, where, 0x26);
    urtp_batch_clear(&b);
    int r = urtp_pay_annexb(&p, stream, len, (uint32_t)au * 3000, true, &b);
    CHECK(r > 0);
    total += (uint64_t)r;
    if (au == 0) {
      pkts_cap = b.pkts_cap;
      iov_cap = b.iov_cap;
      nchunks = b.nchunks;
      nals_cap = p.nals_cap;
      pkts = b.pkts;
      iov = b.iov;
    } else if (b.pkts_cap != pkts_cap || b.iov_cap != iov_cap || b.nchunks != nchunks ||
               p.nals_cap != nals_cap || b.pkts != pkts || b.iov != iov) {
      grew = true;
    }
  }
  CHECK(!grew);
  CHECK(nchunks >= 1);
  CHECK_EQ(p.packets, total);
  urtp_batch_free(&b);
  urtp_pay_destroy(&p);
  free(stream);
}

int main(void)
{
  TAP_RUN(test_rfc_tables);
  TAP_RUN(test_huge_nal);
  TAP_RUN(test_fu_equal_size);
  TAP_RUN(test_mtu_limits);
  TAP_RUN(test_many_tiny_units);
  TAP_RUN(test_seq_wrap);
  TAP_RUN(test_opus);
  TAP_RUN(test_config);
  TAP_RUN(test_annexb);
  TAP_RUN(test_batch_reuse);
  TAP_RUN(test_random_aus);
  return tap_done();
}
