/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gen_corpus.c - writes the seed corpora of fuzz_rtp, fuzz_rtcp,
 * fuzz_depay and fuzz_zrtp_ep.
 *
 *   cc -std=c11 -D_GNU_SOURCE -Ilib tests/fuzz/gen_corpus.c lib/rtp.c -o /tmp/gen_corpus
 *   /tmp/gen_corpus tests/fuzz/corpus
 *
 * (scripts/fuzz.sh --regen does this.) The packets are built here by hand,
 * independently of lib/pay.c, the way other senders build them: GStreamer-
 * like FU runs (fragments of mtu - headers bytes, parameter sets sent ahead),
 * aggregation packets, every packet type of every codec, DONL fields, and
 * malformed, foreign, lost, reordered and duplicated packets. Output is
 * deterministic; files named crash-* are left alone. The depay seed layout is
 * described in fuzz_depay.c, the zrtp_ep scripts in fuzz_zrtp_ep.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "urtp/rtp.h"

#define SEED_MAX 4000 /* every seed stays below 4 KB */

static const char *out_dir;

/* ---- byte buffers ------------------------------------------------------ */

typedef struct buf {
  uint8_t b[SEED_MAX];
  size_t n;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
  if (b->n + n > sizeof(b->b)) {
    fprintf(stderr, "gen_corpus: seed too large\n");
    exit(1);
  }
  memcpy(b->b + b->n, p, n);
  b->n += n;
}

static void put8(buf_t *b, unsigned v)
{
  uint8_t x = (uint8_t)v;
  put(b, &x, 1);
}

static void put16(buf_t *b, unsigned v)
{
  put8(b, v >> 8);
  put8(b, v);
}

/* n bytes of NAL unit body: a fixed pseudo-random pattern with no zero
 * bytes, so that it holds no start code (as emulation prevention ensures). */
static void body(buf_t *b, size_t n, unsigned seed)
{
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    uint8_t v = (uint8_t)(x >> 16);
    put8(b, v ? v : 0x5a);
  }
}

static void write_file(const char *sub, const char *name, const buf_t *b)
{
  char path[1024];
  if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
    perror(out_dir);
    exit(1);
  }
  snprintf(path, sizeof(path), "%s/%s", out_dir, sub);
  if (mkdir(path, 0755) != 0 && errno != EEXIST) {
    perror(path);
    exit(1);
  }
  snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(b->b, 1, b->n, f) != b->n || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

/* ---- NAL units --------------------------------------------------------- */

enum { H264, H265, H266, OPUS };

/* A NAL unit header for codec, type and temporal id 0. */
static void nal_hdr(buf_t *b, int codec, unsigned type)
{
  switch (codec) {
  case H264: /* F | NRI | Type: reference NAL units get NRI 3 */
    put8(b, (type == 1 || type == 6 || type == 9 ? 0x00 : 0x60) | type);
    break;
  case H265: /* F | Type(6) | LayerId(6) | TID+1(3) */
    put8(b, type << 1);
    put8(b, 1);
    break;
  case H266: /* F | Z | LayerId(6), Type(5) | TID+1(3) */
    put8(b, 0);
    put8(b, type << 3 | 1);
    break;
  }
}

static void nal(buf_t *b, int codec, unsigned type, size_t body_len, unsigned seed)
{
  nal_hdr(b, codec, type);
  body(b, body_len, seed);
}

static size_t hdr_len(int codec)
{
  return codec == H264 ? 1 : 2;
}

/* Type numbers used below, per codec. */
typedef struct types {
  unsigned aud, vps, sps, pps, sei, idr, trail, ap, fu;
} types_t;

static const types_t T[] = {
  [H264] = { 9, 0, 7, 8, 6, 5, 1, 24, 28 },
  [H265] = { 35, 32, 33, 34, 39, 19, 1, 48, 49 },
  [H266] = { 20, 14, 15, 16, 23, 8, 0, 28, 29 },
};

/* ---- RTP streams into depay seeds -------------------------------------- */

typedef struct stream {
  buf_t seed;
  int codec;
  uint8_t pt;
  uint16_t seq;
  uint32_t ts;
  uint32_t ssrc;
} stream_t;

static void stream_init(stream_t *s, int codec, uint8_t opt, uint16_t seq)
{
  memset(s, 0, sizeof(*s));
  s->codec = codec;
  s->pt = 96;
  s->seq = seq;
  s->ts = 0x10000000u + 3000u * seq;
  s->ssrc = 0x11223344;
  put8(&s->seed, codec);
  put8(&s->seed, opt);
}

static void record(stream_t *s, const uint8_t *pkt, size_t n)
{
  put16(&s->seed, (unsigned)n);
  put(&s->seed, pkt, n);
}

static void record_flush(stream_t *s, bool end_au)
{
  put16(&s->seed, end_au ? 0xfffe : 0xffff);
}

/* Builds an RTP packet around payload p with the stream's next sequence
 * number; returns its length in pkt (which holds SEED_MAX bytes). */
static size_t rtp(stream_t *s, uint8_t *pkt, bool marker, const buf_t *p)
{
  urtp_rtp_write_fixed(pkt, s->pt, marker, s->seq++, s->ts, s->ssrc);
  memcpy(pkt + 12, p->b, p->n);
  return 12 + p->n;
}

static void send(stream_t *s, bool marker, const buf_t *p)
{
  uint8_t pkt[SEED_MAX];
  record(s, pkt, rtp(s, pkt, marker, p));
}

static void next_au(stream_t *s)
{
  s->ts += s->codec == OPUS ? 960 : 3000;
}

/* Sends one NAL unit as a single NAL unit packet. */
static void send_nal(stream_t *s, unsigned type, size_t body_len, bool marker)
{
  buf_t p = { .n = 0 };
  nal(&p, s->codec, type, body_len, type * 31 + (unsigned)body_len);
  send(s, marker, &p);
}

/* An aggregation packet of the given types, each with body_len body bytes;
 * donl: DONL before the first unit, DOND (1 byte) before the others. */
static void ap_payload(buf_t *p, int codec, const unsigned *types, size_t n, size_t body_len,
                       bool donl)
{
  nal_hdr(p, codec, T[codec].ap);
  for (size_t i = 0; i < n; i++) {
    if (donl) {
      if (i == 0)
        put16(p, 0);
      else
        put8(p, 0);
    }
    put16(p, (unsigned)(hdr_len(codec) + body_len));
    nal(p, codec, types[i], body_len, types[i]);
  }
}

/* Fragments a NAL unit of the given type and body length into FUs carrying
 * at most frag body bytes each, the way a GStreamer payloader does: all
 * fragments full except the last. skip: index of a fragment not to send
 * (-1: none). p_bit (H.266): set P on the last fragment. */
static void send_fu(stream_t *s, unsigned type, size_t body_len, size_t frag, bool marker,
                    int skip, bool donl, bool p_bit)
{
  buf_t whole = { .n = 0 };
  body(&whole, body_len, type * 7 + (unsigned)body_len);
  size_t off = 0;
  for (int i = 0; off < body_len; i++) {
    size_t n = body_len - off < frag ? body_len - off : frag;
    bool first = off == 0, last = off + n == body_len;
    buf_t p = { .n = 0 };
    uint8_t hdr[2];
    buf_t h = { .n = 0 };
    nal_hdr(&h, s->codec, type);
    memcpy(hdr, h.b, h.n);
    /* FU indicator: the NAL header with the FU type. */
    nal_hdr(&p, s->codec, T[s->codec].fu);
    if (s->codec == H264)
      p.b[0] = (uint8_t)((hdr[0] & 0xe0) | T[H264].fu);
    unsigned fuh = (first ? 0x80 : 0) | (last ? 0x40 : 0);
    if (s->codec == H266)
      fuh |= (last && p_bit ? 0x20 : 0) | type;
    else
      fuh |= type;
    put8(&p, fuh);
    if (donl && first)
      put16(&p, 0);
    put(&p, whole.b + off, n);
    if (i == skip)
      s->seq++;
    else
      send(s, marker && last, &p);
    off += n;
  }
}

static void save(const char *name, stream_t *s)
{
  write_file("depay", name, &s->seed);
}

/* The common H.26x access units: parameter sets then a keyframe, then a
 * predicted picture. */
static void h26x_basic(int codec, const char *prefix)
{
  const types_t *t = &T[codec];
  char name[128];
  stream_t s;

  /* single NAL unit packets only */
  stream_init(&s, codec, 0x00, 1000);
  send_nal(&s, t->aud, 1, false);
  if (codec != H264)
    send_nal(&s, t->vps, 20, false);
  send_nal(&s, t->sps, 24, false);
  send_nal(&s, t->pps, 6, false);
  send_nal(&s, t->sei, 12, false);
  send_nal(&s, t->idr, 300, true);
  next_au(&s);
  send_nal(&s, t->trail, 120, true);
  snprintf(name, sizeof(name), "%s-single", prefix);
  save(name, &s);

  /* aggregation packet with the parameter sets, GStreamer-size FU run for
   * the keyframe (mtu 1400), then a small predicted picture */
  stream_init(&s, codec, 0x00, 2000);
  {
    unsigned types[4] = { t->vps, t->sps, t->pps, t->sei };
    buf_t p = { .n = 0 };
    if (codec == H264)
      ap_payload(&p, codec, types + 1, 3, 10, false);
    else
      ap_payload(&p, codec, types, 4, 10, false);
    send(&s, false, &p);
  }
  send_fu(&s, t->idr, 1388 * 2 - 700, 1400 - 12 - hdr_len(codec) - 1, true, -1, false, true);
  next_au(&s);
  send_nal(&s, t->trail, 40, true);
  snprintf(name, sizeof(name), "%s-ap-fu-mtu1400", prefix);
  save(name, &s);

  /* many small fragments, two pictures */
  stream_init(&s, codec, 0x00, 3000);
  send_fu(&s, t->idr, 400, 37, true, -1, false, true);
  next_au(&s);
  send_fu(&s, t->trail, 200, 50, true, -1, false, true);
  snprintf(name, sizeof(name), "%s-fu-small", prefix);
  save(name, &s);

  /* a lost middle fragment, under both loss policies */
  for (int pol = 0; pol < 2; pol++) {
    stream_init(&s, codec, (uint8_t)pol, 4000);
    send_nal(&s, t->sps, 24, false);
    send_nal(&s, t->pps, 6, false);
    send_fu(&s, t->idr, 300, 60, true, 2, false, true);
    next_au(&s);
    send_nal(&s, t->trail, 30, false);
    send_fu(&s, t->trail, 200, 60, true, -1, false, true);
    next_au(&s);
    send_nal(&s, t->trail, 30, true);
    snprintf(name, sizeof(name), "%s-fu-loss-%s", prefix, pol ? "dropnal" : "dropau");
    save(name, &s);
  }

  /* FU with both S and E set, FU without a start, FU start without end */
  stream_init(&s, codec, 0x01, 5000);
  {
    buf_t p = { .n = 0 };
    nal_hdr(&p, codec, t->fu);
    if (codec == H264)
      p.b[0] = 0x60 | 28;
    put8(&p, 0xc0 | t->idr);
    body(&p, 50, 1);
    send(&s, true, &p);
    next_au(&s);
    p.n = hdr_len(codec);
    put8(&p, 0x00 | t->trail); /* middle fragment out of nowhere */
    body(&p, 50, 2);
    send(&s, false, &p);
    p.n = hdr_len(codec);
    put8(&p, 0x40 | t->trail); /* end fragment */
    body(&p, 50, 3);
    send(&s, true, &p);
    next_au(&s);
    p.n = hdr_len(codec);
    put8(&p, 0x80 | t->trail); /* start, then a single NAL unit packet */
    body(&p, 50, 4);
    send(&s, false, &p);
    send_nal(&s, t->trail, 20, true);
    next_au(&s);
    p.n = hdr_len(codec); /* FU header missing entirely */
    send(&s, true, &p);
  }
  snprintf(name, sizeof(name), "%s-fu-broken", prefix);
  save(name, &s);

  /* aggregation packets with bad sizes: overrunning, zero, truncated
   * length field, a unit shorter than a NAL header */
  stream_init(&s, codec, 0x01, 6000);
  {
    buf_t p = { .n = 0 };
    nal_hdr(&p, codec, t->ap);
    put16(&p, 5);
    nal(&p, codec, t->sps, 5 - hdr_len(codec), 9);
    put16(&p, 200); /* overruns */
    nal(&p, codec, t->pps, 10, 9);
    send(&s, true, &p);
    next_au(&s);
    p.n = 0;
    nal_hdr(&p, codec, t->ap);
    put16(&p, 0);
    put16(&p, 4);
    nal(&p, codec, t->sei, 4 - hdr_len(codec), 9);
    put8(&p, 0); /* half a length field */
    send(&s, true, &p);
    next_au(&s);
    p.n = 0;
    nal_hdr(&p, codec, t->ap);
    put16(&p, 1);
    put8(&p, 0x41);
    put16(&p, 6);
    nal(&p, codec, t->trail, 6 - hdr_len(codec), 9);
    send(&s, true, &p);
    next_au(&s);
    p.n = 0;
    nal_hdr(&p, codec, t->ap); /* empty aggregation packet */
    send(&s, true, &p);
  }
  snprintf(name, sizeof(name), "%s-ap-bad", prefix);
  save(name, &s);

  /* reordering, duplicates and a sequence number wrap, window 8 */
  stream_init(&s, codec, 0x08, 65530);
  {
    uint8_t pkts[8][400];
    size_t lens[8];
    buf_t p = { .n = 0 };
    for (int i = 0; i < 8; i++) {
      p.n = 0;
      if (i % 4 == 3) {
        nal(&p, codec, t->trail, 100, (unsigned)i);
        lens[i] = rtp(&s, pkts[i], true, &p);
        next_au(&s);
      } else {
        nal(&p, codec, i == 0 ? t->idr : t->trail, 100, (unsigned)i);
        lens[i] = rtp(&s, pkts[i], false, &p);
      }
    }
    static const int order[] = { 0, 2, 1, 3, 3, 5, 4, 7, 6, 6, 1 };
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
      record(&s, pkts[order[i]], lens[order[i]]);
  }
  snprintf(name, sizeof(name), "%s-reorder-wrap", prefix);
  save(name, &s);

  /* a new timestamp without a marker, then flushes */
  stream_init(&s, codec, 0x01, 7000);
  send_nal(&s, t->idr, 80, false);
  next_au(&s);
  send_nal(&s, t->trail, 80, false);
  record_flush(&s, false);
  send_nal(&s, t->trail, 80, false);
  record_flush(&s, true);
  next_au(&s);
  send_nal(&s, t->trail, 80, false);
  snprintf(name, sizeof(name), "%s-no-marker-flush", prefix);
  save(name, &s);

  /* waiting for a keyframe: predicted pictures first */
  stream_init(&s, codec, 0x10, 8000);
  send_nal(&s, t->trail, 50, true);
  next_au(&s);
  send_fu(&s, t->trail, 150, 60, true, -1, false, true);
  next_au(&s);
  send_nal(&s, t->sps, 24, false);
  send_fu(&s, t->idr, 150, 60, true, -1, false, true);
  next_au(&s);
  send_fu(&s, t->trail, 150, 60, true, 1, false, true);
  next_au(&s);
  send_nal(&s, t->trail, 50, true);
  snprintf(name, sizeof(name), "%s-wait-keyframe", prefix);
  save(name, &s);

  /* tight limits: an access unit above max_au_size (2048), packets above
   * max_packet (256) in a reorder window */
  stream_init(&s, codec, 0x80 | 0x08, 9000);
  send_fu(&s, t->idr, 2400, 200, true, -1, false, true);
  next_au(&s);
  {
    uint8_t a[SEED_MAX], b[SEED_MAX];
    buf_t p = { .n = 0 };
    nal(&p, codec, t->trail, 400, 5);
    size_t la = rtp(&s, a, false, &p);
    p.n = 0;
    nal(&p, codec, t->trail, 100, 6);
    size_t lb = rtp(&s, b, true, &p);
    record(&s, b, lb);
    record(&s, a, la);
  }
  next_au(&s);
  send_nal(&s, t->trail, 20, true);
  snprintf(name, sizeof(name), "%s-limits", prefix);
  save(name, &s);

  /* payload type and SSRC filters with foreign packets mixed in */
  stream_init(&s, codec, 0x60, 10000);
  send_nal(&s, t->idr, 60, false);
  s.pt = 97;
  send_nal(&s, t->trail, 60, true);
  s.pt = 96;
  s.ssrc = 0x55667788;
  send_nal(&s, t->trail, 60, true);
  s.ssrc = 0x11223344;
  send_nal(&s, t->trail, 60, true);
  snprintf(name, sizeof(name), "%s-foreign", prefix);
  save(name, &s);
}

static void h264_extra(void)
{
  stream_t s;
  /* reserved and unsupported types: 0, STAP-B 25, MTAP16 26, MTAP24 27,
   * FU-B 29, 30, 31, and a NAL unit with the F bit set */
  stream_init(&s, H264, 0x00, 100);
  static const unsigned types[] = { 0, 25, 26, 27, 29, 30, 31 };
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
    buf_t p = { .n = 0 };
    put8(&p, 0x60 | types[i]);
    put16(&p, 0);
    put16(&p, 8);
    body(&p, 20, (unsigned)i);
    send(&s, true, &p);
    next_au(&s);
  }
  send_nal(&s, 5, 20, false);
  {
    buf_t p = { .n = 0 };
    put8(&p, 0x80 | 0x65);
    body(&p, 20, 3);
    send(&s, true, &p);
  }
  save("h264-reserved", &s);

  /* a sender restart in the middle of an access unit (same timestamp): 8
   * packets far behind make the reorder window resynchronise, window 0 */
  stream_init(&s, H264, 0x01, 10000);
  send_nal(&s, 1, 10, false);
  s.seq = 100;
  for (int i = 0; i < 8; i++)
    send_nal(&s, 1, 10, i == 7);
  save("h264-resync-same-ts", &s);

  /* more access units than the output queue holds, popped only at a flush */
  stream_init(&s, H264, 0x00, 20000);
  s.seed.b[0] |= 4; /* lazy popping */
  for (int i = 0; i < 70; i++) {
    send_nal(&s, i == 0 ? 5 : 1, 6, true);
    next_au(&s);
  }
  record_flush(&s, false);
  send_nal(&s, 1, 6, true);
  save("h264-queue-overflow", &s);
}

static void h265_extra(void)
{
  stream_t s;
  /* DONL: single NAL unit packet, AP with DONL/DOND, FU with DONL */
  stream_init(&s, H265, 0x02, 300);
  {
    buf_t p = { .n = 0 };
    nal_hdr(&p, H265, 33);
    put16(&p, 0); /* DONL */
    body(&p, 20, 1);
    send(&s, false, &p);
    unsigned types[3] = { 34, 39, 39 };
    p.n = 0;
    ap_payload(&p, H265, types, 3, 12, true);
    send(&s, false, &p);
  }
  send_fu(&s, 19, 300, 100, true, -1, true, false);
  next_au(&s);
  send_fu(&s, 1, 250, 100, true, 1, true, false);
  save("h265-donl", &s);

  /* DONL negotiated but packets too short to hold it */
  stream_init(&s, H265, 0x03, 400);
  {
    buf_t p = { .n = 0 };
    nal_hdr(&p, H265, 1);
    put8(&p, 0);
    send(&s, true, &p);
    next_au(&s);
    p.n = 0;
    nal_hdr(&p, H265, 49);
    put8(&p, 0x80 | 1);
    put8(&p, 0);
    send(&s, true, &p);
    next_au(&s);
    p.n = 0;
    nal_hdr(&p, H265, 48);
    put16(&p, 0);
    put16(&p, 3);
    nal(&p, H265, 1, 1, 1);
    put8(&p, 1);
    send(&s, true, &p);
  }
  save("h265-donl-short", &s);

  /* PACI (50) and the unspecified types 51..63, then a good picture */
  stream_init(&s, H265, 0x00, 500);
  {
    buf_t p = { .n = 0 };
    nal_hdr(&p, H265, 50);
    put16(&p, 0x0000);
    nal(&p, H265, 19, 30, 2);
    send(&s, true, &p);
    next_au(&s);
    for (unsigned type = 51; type < 64; type += 4) {
      p.n = 0;
      nal(&p, H265, type, 30, type);
      send(&s, true, &p);
      next_au(&s);
    }
  }
  send_nal(&s, 19, 40, true);
  save("h265-paci-reserved", &s);

  /* layers and temporal ids, TID 0 being forbidden */
  stream_init(&s, H265, 0x01, 600);
  {
    buf_t p = { .n = 0 };
    put8(&p, 19 << 1 | 0);
    put8(&p, 1 << 3 | 3); /* LayerId 1, TID 2 */
    body(&p, 30, 1);
    send(&s, false, &p);
    p.n = 0;
    put8(&p, 1 << 1);
    put8(&p, 0); /* TID + 1 = 0 */
    body(&p, 30, 2);
    send(&s, true, &p);
  }
  save("h265-layers", &s);
}

static void h266_extra(void)
{
  stream_t s;
  /* FU with P set on a fragment that is not the last VCL one, reserved
   * types 30 and 31, and the Z bit set */
  stream_init(&s, H266, 0x00, 700);
  send_fu(&s, 7, 200, 70, false, -1, false, true);
  send_fu(&s, 7, 200, 70, true, -1, false, true);
  next_au(&s);
  for (unsigned type = 30; type < 32; type++) {
    buf_t p = { .n = 0 };
    nal(&p, H266, type, 30, type);
    send(&s, true, &p);
    next_au(&s);
  }
  {
    buf_t p = { .n = 0 };
    put8(&p, 0x40);
    put8(&p, 8 << 3 | 1);
    body(&p, 30, 1);
    send(&s, true, &p);
  }
  save("h266-p-bit-reserved", &s);
}

static void opus(void)
{
  stream_t s;
  stream_init(&s, OPUS, 0x00, 1);
  static const size_t sizes[] = { 3, 60, 120, 1, 400, 0, 80, 1275 };
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    buf_t p = { .n = 0 };
    put8(&p, 0xfc); /* TOC: CELT FB 20 ms, one frame */
    if (sizes[i])
      body(&p, sizes[i] - 1, (unsigned)i);
    if (sizes[i] == 0)
      p.n = 0;
    send(&s, i == 0, &p);
    next_au(&s);
  }
  save("opus-basic", &s);

  /* lost, reordered and duplicated packets in a window of 2, across a
   * sequence number wrap, and a timestamp wrap */
  stream_init(&s, OPUS, 0x04, 65533);
  s.ts = 0xfffffd00u;
  {
    uint8_t pkts[6][64];
    size_t lens[6];
    for (int i = 0; i < 6; i++) {
      buf_t p = { .n = 0 };
      put8(&p, 0x78);
      body(&p, 40, (unsigned)i);
      lens[i] = rtp(&s, pkts[i], false, &p);
      next_au(&s);
    }
    static const int order[] = { 0, 2, 1, 1, 4, 5, 3 };
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
      record(&s, pkts[order[i]], lens[order[i]]);
  }
  save("opus-reorder-wrap", &s);

  /* padding, CSRCs and a header extension around the Opus packet */
  stream_init(&s, OPUS, 0x00, 10);
  {
    uint8_t pkt[256];
    urtp_rtp_hdr_t h = { .pt = 96, .seq = 10, .ts = 960, .ssrc = 0x11223344, .padding = true,
                         .csrc_count = 2, .csrc = { 1, 2 }, .has_ext = true,
                         .ext_profile = 0xbede, .ext_len = 4 };
    static const uint8_t ext[4] = { 0x10, 0xaa, 0, 0 };
    h.ext_data = ext;
    int n = urtp_rtp_write(pkt, sizeof(pkt), &h);
    if (n < 0)
      exit(1);
    memset(pkt + n, 0x78, 30);
    urtp_rtp_write_padding(pkt + n + 30, 4);
    record(&s, pkt, (size_t)n + 34);
  }
  save("opus-rtp-fields", &s);

  /* more packets than the output queue holds, popped only at the end */
  stream_init(&s, OPUS, 0x00, 500);
  s.seed.b[0] |= 4; /* lazy popping */
  for (int i = 0; i < 80; i++) {
    buf_t p = { .n = 0 };
    put8(&p, 0x78);
    body(&p, 8, (unsigned)i);
    send(&s, false, &p);
    next_au(&s);
  }
  save("opus-queue-overflow", &s);

  /* tight limits: a packet above max_au_size (2048), then a small one */
  stream_init(&s, OPUS, 0x80, 600);
  {
    buf_t p = { .n = 0 };
    put8(&p, 0x78);
    body(&p, 2099, 1);
    send(&s, false, &p);
    next_au(&s);
    p.n = 1;
    body(&p, 30, 2);
    send(&s, false, &p);
  }
  save("opus-oversize", &s);
}

/* Datagrams that are not RTP at all, or whose headers do not fit. */
static void malformed(void)
{
  for (int codec = 0; codec < 4; codec++) {
    stream_t s;
    stream_init(&s, codec, 0x05, 1);
    static const uint8_t bad[][16] = {
      { 0x00, 96, 0, 1, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x41 }, /* version 0 */
      { 0x40, 96, 0, 1, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x41 }, /* version 1 */
      { 0x8f, 96, 0, 1, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x41 }, /* 15 CSRCs missing */
      { 0x90, 96, 0, 1, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0xbe, 0xde, 0xff, 0xff }, /* ext */
      { 0xa0, 96, 0, 1, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x41, 0x00 }, /* padding 0 */
      { 0xa0, 96, 0, 1, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x41, 0x09 }, /* padding 9 */
      { 0xa0, 96, 0, 1, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x41, 0x02 }, /* all padding */
    };
    static const size_t lens[] = { 13, 13, 13, 16, 14, 14, 14 };
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
      record(&s, bad[i], lens[i]);
    record(&s, bad[0], 0);
    record(&s, bad[0], 11);
    record(&s, bad[0] + 1, 12); /* 12 bytes of nonsense */
    uint8_t empty[12];
    urtp_rtp_write_fixed(empty, 96, true, 2, 0, 0x11223344); /* no payload */
    record(&s, empty, 12);
    char name[64];
    snprintf(name, sizeof(name), "malformed-%s", (const char *[]){ "h264", "h265", "h266",
                                                                    "opus" }[codec]);
    save(name, &s);
  }
}

/* ---- fuzz_rtp seeds ---------------------------------------------------- */

static void rtp_seed(const char *name, const urtp_rtp_hdr_t *h, size_t payload, uint8_t pad)
{
  buf_t b = { .n = 0 };
  int n = urtp_rtp_write(b.b, sizeof(b.b), h);
  if (n < 0)
    exit(1);
  b.n = (size_t)n;
  body(&b, payload, (unsigned)payload);
  if (pad) {
    urtp_rtp_write_padding(b.b + b.n, pad);
    b.n += pad;
  }
  write_file("rtp", name, &b);
}

static void rtp_raw(const char *name, const uint8_t *p, size_t n)
{
  buf_t b = { .n = 0 };
  put(&b, p, n);
  write_file("rtp", name, &b);
}

static void rtp_seeds(void)
{
  static const uint8_t ext_data[64] = { 0x10, 0xaa, 0x21, 0xbb, 0xcc };
  urtp_rtp_hdr_t h = { .pt = 96, .seq = 1234, .ts = 90000, .ssrc = 0xdeadbeef };

  rtp_seed("plain-empty", &h, 0, 0);
  rtp_seed("plain-100", &h, 100, 0);
  rtp_seed("plain-1400", &h, 1388, 0);
  h.marker = true;
  h.pt = 127;
  h.seq = 65535;
  h.ts = 0xffffffffu;
  rtp_seed("marker-pt127-wrap", &h, 20, 0);
  h.marker = false;
  h.pt = 0;
  h.csrc_count = 1;
  h.csrc[0] = 0x01020304;
  rtp_seed("csrc-1", &h, 10, 0);
  h.csrc_count = 15;
  for (int i = 0; i < 15; i++)
    h.csrc[i] = 0x1000u * (unsigned)i;
  rtp_seed("csrc-15", &h, 10, 0);
  h.csrc_count = 0;
  h.has_ext = true;
  h.ext_data = ext_data;
  h.ext_profile = 0xbede;
  h.ext_len = 0;
  rtp_seed("ext-empty", &h, 10, 0);
  h.ext_len = 4;
  rtp_seed("ext-one-byte", &h, 10, 0);
  h.ext_profile = 0x1000;
  h.ext_len = 64;
  rtp_seed("ext-two-byte-64", &h, 0, 0);
  h.padding = true;
  rtp_seed("ext-padding", &h, 10, 4);
  h.has_ext = false;
  rtp_seed("padding-1", &h, 10, 1);
  rtp_seed("padding-255", &h, 10, 255);
  rtp_seed("padding-only", &h, 0, 7);
  h.csrc_count = 3;
  h.has_ext = true;
  h.ext_len = 8;
  rtp_seed("all-fields", &h, 33, 3);

  static const uint8_t bad_ver[] = { 0x40, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0x65 };
  rtp_raw("bad-version-1", bad_ver, sizeof(bad_ver));
  static const uint8_t bad_ver3[] = { 0xc0, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2 };
  rtp_raw("bad-version-3", bad_ver3, sizeof(bad_ver3));
  static const uint8_t short11[] = { 0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0 };
  rtp_raw("bad-short-11", short11, sizeof(short11));
  rtp_raw("bad-short-1", short11, 1);
  static const uint8_t csrc_over[] = { 0x8f, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 3, 4 };
  rtp_raw("bad-csrc-overrun", csrc_over, sizeof(csrc_over));
  static const uint8_t ext_short[] = { 0x90, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0xbe, 0xde };
  rtp_raw("bad-ext-header", ext_short, sizeof(ext_short));
  static const uint8_t ext_over[] = { 0x90, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2,
                                      0xbe, 0xde, 0, 2, 1, 2, 3, 4 };
  rtp_raw("bad-ext-overrun", ext_over, sizeof(ext_over));
  static const uint8_t pad0[] = { 0xa0, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0x41, 0 };
  rtp_raw("bad-padding-0", pad0, sizeof(pad0));
  static const uint8_t pad_over[] = { 0xa0, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0x41, 3 };
  rtp_raw("bad-padding-overrun", pad_over, sizeof(pad_over));
  static const uint8_t pad_hdr[] = { 0xa0, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 13 };
  rtp_raw("bad-padding-into-header", pad_hdr, sizeof(pad_hdr));
  static const uint8_t all_ones[] = { 0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
  rtp_raw("bad-all-ones", all_ones, sizeof(all_ones));
  /* sequence numbers for urtp_seq_extend: a wrap, reordering, a jump of
   * exactly 32768 */
  static const uint8_t seqs[] = { 0x80, 0x60, 0xff, 0xfd, 0xff, 0xfe, 0x00, 0x01, 0xff, 0xff,
                                  0x00, 0x02, 0x80, 0x02, 0x00, 0x02, 0x7f, 0xff, 0x00, 0x03 };
  rtp_raw("seq-wrap", seqs, sizeof(seqs));
}

/* ---- ZRTP endpoint scripts (fuzz_zrtp_ep.c) ----------------------------- */

static void ep_op(buf_t *b, unsigned op, unsigned x, unsigned y)
{
  put8(b, op);
  put8(b, x);
  put8(b, y);
}

/* Timers, then packets and a little time, until an exchange is through. */
static void ep_exchange(buf_t *b, unsigned rounds)
{
  for (unsigned i = 0; i < rounds; i++) {
    ep_op(b, 5, 0, 0);
    ep_op(b, 0, 7, 0);
    ep_op(b, 4, 5, 0);
  }
}

/* Media A -> B for about ms milliseconds, 20 ms apart, with the timers. */
static void ep_media(buf_t *b, unsigned ms)
{
  for (unsigned t = 0; t < ms; t += 20) {
    ep_op(b, 6, 0, 1);
    ep_op(b, 0, 7, 0);
    ep_op(b, 4, 20, 0);
    ep_op(b, 5, 0, 0);
  }
}

/* The first exchange, then the script; or the script from the start. */
static void ep_seed(const char *name, uint8_t flags, bool exchange_first, void (*script)(buf_t *))
{
  buf_t b = { .n = 0 };
  put8(&b, flags);
  if (exchange_first)
    ep_exchange(&b, 30);
  script(&b);
  write_file("zrtp_ep", name, &b);
}

static void ep_nothing(buf_t *b)
{
  ep_media(b, 200);
}

static void ep_third_party(buf_t *b)
{
  ep_media(b, 100);
  ep_op(b, 7, 0, 0);
  ep_media(b, 2500);
}

static void ep_restart_new_address(buf_t *b)
{
  ep_media(b, 100);
  ep_op(b, 8, 0, 1);
  ep_exchange(b, 20);
  ep_op(b, 4, 250, 9);
  ep_exchange(b, 30);
  ep_media(b, 100);
}

static void ep_restart_same(buf_t *b)
{
  ep_media(b, 100);
  ep_op(b, 8, 0, 0);
  ep_exchange(b, 30);
  ep_media(b, 100);
}

static void ep_restart_new_zid(buf_t *b)
{
  ep_media(b, 100);
  ep_op(b, 8, 0, 2);
  ep_exchange(b, 20);
  ep_op(b, 4, 250, 9);
  ep_exchange(b, 30);
}

static void ep_receiver_restart(buf_t *b)
{
  ep_media(b, 100);
  ep_op(b, 9, 0, 0);
  ep_media(b, 3000);
}

static void ep_spoof(buf_t *b)
{
  ep_op(b, 7, 0, 0);
  for (unsigned i = 0; i < 40; i++) {
    ep_op(b, 5, 0, 0);
    ep_op(b, 3, i, 0);
    ep_op(b, 6, 0, 1);
    ep_op(b, 4, 30, 0);
  }
}

static void ep_tamper(buf_t *b)
{
  ep_op(b, 5, 0, 0);
  for (unsigned i = 0; i < 12; i++) {
    ep_op(b, 10, 40 + 2 * i + (i & 1), i);
    ep_op(b, 0, 0, 0);
    ep_op(b, 4, 5, 0);
    ep_op(b, 5, 0, 0);
  }
  ep_exchange(b, 30);
}

static void ep_lossy(buf_t *b)
{
  for (unsigned i = 0; i < 60; i++) {
    ep_op(b, 5, 0, 0);
    ep_op(b, (i % 3) == 0 ? 1 : (i % 5) == 0 ? 2 : 0, 0, 0);
    ep_op(b, 4, 60, 1);
  }
}

static void ep_duplex(buf_t *b)
{
  ep_op(b, 11, 0, 0);
  ep_exchange(b, 30);
  ep_media(b, 200);
}

static void ep_seeds(void)
{
  ep_seed("secure", 0, true, ep_nothing);
  ep_seed("third-party-receiver", 0, true, ep_third_party);
  ep_seed("third-party-sender", 1, true, ep_third_party);
  ep_seed("third-party-claims-zid", 4, true, ep_third_party);
  ep_seed("restart-new-address", 0, true, ep_restart_new_address);
  ep_seed("restart-same-address", 0, true, ep_restart_same);
  ep_seed("restart-new-zid", 0, true, ep_restart_new_zid);
  ep_seed("receiver-restart", 0, true, ep_receiver_restart);
  ep_seed("spoofed-sources", 0, true, ep_spoof);
  ep_seed("tampered", 0, false, ep_tamper);
  ep_seed("lossy", 0, false, ep_lossy);
  ep_seed("multistream", 2, true, ep_third_party);
  ep_seed("duplex", 8, false, ep_duplex);
}

/* ---- recvstream (fuzz_recvstream.c) ---- */

/* A packet of sender `who`: sequence step, timestamp step (frames),
 * marker, and an H.26x payload of 8 * len8 bytes: a NAL header of the
 * codec's type 1 slice (a picture's first), then filler. */
static void rs_pkt(buf_t *b, int codec, unsigned who, int step, int ts_step, bool marker,
                   unsigned len8)
{
  put8(b, who & 3);
  put8(b, (uint8_t)(int8_t)step);
  put8(b, (uint8_t)(int8_t)ts_step);
  put8(b, (marker ? 0x80 : 0) | (len8 & 0x7f));
  size_t n = len8 * 8, i = 0;
  if (codec == H264) {
    put8(b, 0x41);
    put8(b, 0x9a);
    i = 2;
  } else if (codec == H265) {
    put8(b, 1 << 1);
    put8(b, 1);
    put8(b, 0xaf);
    i = 3;
  } else if (codec == H266) {
    put8(b, 0);
    put8(b, 1);
    put8(b, 0x80);
    i = 3;
  }
  for (; i < n; i++)
    put8(b, (uint8_t)(0x11 + i));
}

static void rs_time(buf_t *b, unsigned ms)
{
  put8(b, 0x41);
  put8(b, ms);
}

/* n pictures of one packet each from `who`, 33 ms apart. */
static void rs_run(buf_t *b, int codec, unsigned who, unsigned n)
{
  for (unsigned i = 0; i < n; i++) {
    rs_pkt(b, codec, who, 1, 1, true, 4);
    rs_time(b, 33);
    put8(b, 0x45);
  }
}

/* ---- fuzz_rtcp seeds --------------------------------------------------- */

/* RTCP compound packets written out byte by byte from RFC 3550's layouts
 * (not by lib/rtcp.c): what rtpbin and FFmpeg send, every packet type, and
 * the malformed shapes the parser must refuse. */
static void rtcp_raw(const char *name, const uint8_t *p, size_t n)
{
  buf_t b = { .n = 0 };
  put(&b, p, n);
  write_file("rtcp", name, &b);
}

#define RTCP_SEED(name, ...)                                        \
  do {                                                              \
    static const uint8_t seed_[] = { __VA_ARGS__ };                 \
    rtcp_raw(name, seed_, sizeof seed_);                            \
  } while (0)

#define BLOCK 0x55, 0x66, 0x77, 0x88, 0x40, 0x00, 0x00, 0x03, 0x00, 0x01, 0xFF, 0xFE, \
              0x00, 0x00, 0x00, 0x20, 0x45, 0x67, 0x89, 0xAB, 0x00, 0x01, 0x80, 0x00
#define SR_HEAD(rc, len) 0x80 | (rc), 0xC8, 0x00, (len), 0x11, 0x22, 0x33, 0x44, \
              0xE1, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x02, 0x03, 0x04, \
              0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x10, 0x00
#define SDES_CNAME 0x81, 0xCA, 0x00, 0x04, 0x11, 0x22, 0x33, 0x44, 0x01, 0x09, \
              'u', 's', 'e', 'r', '@', 'h', 'o', 's', 't', 0x00

static void rtcp_seeds(void)
{
  RTCP_SEED("sr-1block", SR_HEAD(1, 12), BLOCK);
  /* congestion control feedback, as test_ccfb's known answers: a
   * transport-wide run length after a receiver report, RFC 8888 alone */
  RTCP_SEED("rr-twcc", 0x80, 0xC9, 0x00, 0x01, 0xAA, 0xBB, 0xCC, 0xDD,
            0x8f, 0xcd, 0x00, 0x06, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22, 0x00, 0x01,
            0x00, 0x03, 0x00, 0x00, 0x01, 0x05, 0x20, 0x03, 0x00, 0x04, 0x04, 0x00, 0x00, 0x00);
  RTCP_SEED("rfc8888", 0x8b, 0xcd, 0x00, 0x06, 0x00, 0x00, 0x00, 0x09, 0xaa, 0xbb, 0xcc, 0xdd,
            0x01, 0xf4, 0x00, 0x03, 0x80, 0x0a, 0x00, 0x00, 0xe0, 0x00, 0x00, 0x00, 0x00, 0x02,
            0x00, 0x00);
  RTCP_SEED("rr-empty", 0x80, 0xC9, 0x00, 0x01, 0xAA, 0xBB, 0xCC, 0xDD);
  RTCP_SEED("rr-2blocks-sdes", 0x82, 0xC9, 0x00, 0x0D, 0xAA, 0xBB, 0xCC, 0xDD, BLOCK, BLOCK,
            SDES_CNAME);
  RTCP_SEED("sr-sdes-bye-app", SR_HEAD(1, 12), BLOCK, SDES_CNAME,
            0x82, 0xCB, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
            0x03, 'b', 'y', 'e',
            0x85, 0xCC, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 'T', 'E', 'S', 'T',
            0xDE, 0xAD, 0xBE, 0xEF);
  /* rtpbin: RR, SDES with CNAME and TOOL */
  RTCP_SEED("rtpbin-rr-sdes", 0x81, 0xC9, 0x00, 0x07, 0x12, 0x34, 0x56, 0x78, BLOCK,
            0x81, 0xCA, 0x00, 0x08, 0x12, 0x34, 0x56, 0x78,
            0x01, 13, 'u', 's', 'e', 'r', '1', '@', 'h', 'o', 's', 't', '-', '2', 'a',
            0x06, 9, 'G', 'S', 't', 'r', 'e', 'a', 'm', 'e', 'r', 0x00, 0x00);
  /* FFmpeg: SR without blocks, SDES, BYE without reason */
  RTCP_SEED("ffmpeg-sr-sdes-bye", SR_HEAD(0, 6),
            0x81, 0xCA, 0x00, 0x04, 0x11, 0x22, 0x33, 0x44,
            0x01, 8, 'f', 'f', 'm', 'p', 'e', 'g', '0', '1', 0x00, 0x00,
            0x81, 0xCB, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44);
  /* two chunks, NAME and PRIV items, generic NACK, XR */
  RTCP_SEED("chunks-priv-fb-xr", 0x80, 0xC9, 0x00, 0x01, 0xAA, 0xAA, 0xAA, 0xAA,
            0x82, 0xCA, 0x00, 0x05, 0xAA, 0xAA, 0xAA, 0xAA, 0x01, 0x01, 'a', 0x00,
            0xBB, 0xBB, 0xBB, 0xBB, 0x02, 0x01, 'b', 0x01, 0x02, 'b', 'b', 0x00,
            0x81, 0xCA, 0x00, 0x03, 0xCC, 0xCC, 0xCC, 0xCC,
            0x08, 0x04, 0x01, 'x', 'y', 'z', 0x00, 0x00,
            0x81, 0xCD, 0x00, 0x03, 0xAA, 0xAA, 0xAA, 0xAA, 0xBB, 0xBB, 0xBB, 0xBB,
            0x00, 0x05, 0x00, 0x00,
            0x80, 0xCF, 0x00, 0x01, 0xAA, 0xAA, 0xAA, 0xAA);
  /* padding on the last packet */
  RTCP_SEED("rr-sdes-padded", 0x80, 0xC9, 0x00, 0x01, 0xAA, 0xBB, 0xCC, 0xDD,
            0xA1, 0xCA, 0x00, 0x05, 0x11, 0x22, 0x33, 0x44, 0x01, 0x09,
            'u', 's', 'e', 'r', '@', 'h', 'o', 's', 't', 0x00, 0x00, 0x00, 0x00, 0x04);
  RTCP_SEED("reduced-sdes", SDES_CNAME);
  /* refused */
  RTCP_SEED("bad-truncated", SR_HEAD(1, 12), 0x55, 0x66, 0x77);
  RTCP_SEED("bad-version-1", 0x40, 0xC9, 0x00, 0x01, 0xAA, 0xBB, 0xCC, 0xDD);
  RTCP_SEED("bad-padding-first", 0xA0, 0xC9, 0x00, 0x02, 1, 2, 3, 4, 0, 0, 0, 4,
            0x81, 0xCB, 0x00, 0x01, 1, 2, 3, 4);
  RTCP_SEED("bad-padding-count", 0xA0, 0xC9, 0x00, 0x02, 1, 2, 3, 4, 0, 0, 0, 9);
  RTCP_SEED("bad-sdes-item", 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4,
            0x81, 0xCA, 0x00, 0x02, 1, 2, 3, 4, 0x01, 0x05, 'a', 0x00);
  RTCP_SEED("bad-bye-reason", 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4,
            0x81, 0xCB, 0x00, 0x02, 1, 2, 3, 4, 9, 'a', 'b', 'c');
}

static void recvstream_seeds(void)
{
  static const int codecs[] = { H264, H265, H266, OPUS };
  static const char *names[] = { "h264", "h265", "h266", "opus" };
  for (int c = 0; c < 4; c++) {
    char name[64];
    buf_t b = { .n = 0 };
    /* a sender, then another SSRC: takeover after the timeout */
    put8(&b, (uint8_t)codecs[c]);
    rs_run(&b, codecs[c], 0, 20);
    rs_run(&b, codecs[c], 1, 5);
    rs_time(&b, 250);
    put8(&b, 0x42);
    rs_run(&b, codecs[c], 1, 10);
    snprintf(name, sizeof name, "%s-restart", names[c]);
    write_file("recvstream", name, &b);

    /* a stray jump, a confirmed jump, reordering, a resync */
    b.n = 0;
    put8(&b, (uint8_t)(codecs[c] | 0x20));
    rs_run(&b, codecs[c], 0, 5);
    rs_pkt(&b, codecs[c], 0, -128, 1, true, 4);
    rs_pkt(&b, codecs[c], 0, -127, 1, true, 4);
    rs_run(&b, codecs[c], 0, 5);
    rs_pkt(&b, codecs[c], 0, -128, 40, true, 4);
    rs_run(&b, codecs[c], 0, 5);
    rs_pkt(&b, codecs[c], 0, 2, 1, true, 4);
    rs_pkt(&b, codecs[c], 0, -1, -1, true, 4);
    rs_pkt(&b, codecs[c], 0, 2, 2, true, 4);
    put8(&b, 0x43);
    put8(&b, 9);
    rs_run(&b, codecs[c], 0, 5);
    snprintf(name, sizeof name, "%s-jumps", names[c]);
    write_file("recvstream", name, &b);
  }

  /* strangers: a raw datagram that looks like RTP, interleaved senders,
   * a pinned SSRC with others around, fragments across a long silence */
  buf_t b = { .n = 0 };
  put8(&b, H265 | 0x10);
  put8(&b, 0x40);
  put16(&b, 14);
  static const uint8_t stray[14] = { 0x80, 96, 0, 1, 0, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef, 2, 1 };
  put(&b, stray, sizeof stray);
  for (unsigned i = 0; i < 30; i++) {
    rs_pkt(&b, H265, i % 3, 1, 1, true, 2);
    rs_time(&b, 11);
  }
  put8(&b, 0x46);
  rs_run(&b, H265, 2, 5);
  write_file("recvstream", "h265-strangers-pinned", &b);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];
  rtp_seeds();
  rtcp_seeds();
  h26x_basic(H264, "h264");
  h26x_basic(H265, "h265");
  h26x_basic(H266, "h266");
  h264_extra();
  h265_extra();
  h266_extra();
  opus();
  malformed();
  ep_seeds();
  recvstream_seeds();
  return 0;
}
