/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_roundtrip.c - packetizer -> depacketizer round trips.
 *
 * Access units made of NAL units with realistic headers go through
 * urtp_pay, out of the batch with urtp_batch_copy_pkt() into datagram
 * buffers, and into urtp_depay. Every packet is checked on the way (size,
 * RTP fields, marker, payload-format headers, its bytes against the NAL
 * units it carries, the packet count against the packing rules of pay.h),
 * and every access unit that comes out must be byte-identical to the one
 * sent, normalised to 4-byte start codes, with exact counters.
 *
 * The impairment tests apply their own seeded loss, reordering (less than
 * the reorder window) and duplication to the datagram list and check that
 * only intact NAL units / access units come out, with exact accounting.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "urtp/batch.h"
#include "urtp/codec.h"
#include "urtp/depay.h"
#include "urtp/pay.h"
#include "urtp/rtp.h"
#include "urtp/scl.h"

#define PT 96
#define SSRC 0x5eed1234u
#define MAX_NALS 48
#define WINDOW 64

static const urtp_codec_t video_codecs[] = { URTP_CODEC_H264, URTP_CODEC_H265, URTP_CODEC_H266 };

/* ---- growable byte buffers --------------------------------------------- */

typedef struct bytes {
  uint8_t *p;
  size_t n, cap;
} bytes_t;

static void *xrealloc(void *p, size_t n)
{
  p = realloc(p, n ? n : 1);
  if (!p) {
    printf("Bail out! out of memory\n");
    exit(1);
  }
  return p;
}

static void bytes_put(bytes_t *b, const void *p, size_t n)
{
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = xrealloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

static void bytes_put8(bytes_t *b, unsigned v)
{
  uint8_t x = (uint8_t)v;
  bytes_put(b, &x, 1);
}

static void bytes_free(bytes_t *b)
{
  free(b->p);
  memset(b, 0, sizeof(*b));
}

/* ---- NAL units ---------------------------------------------------------- */

typedef struct nal_types {
  unsigned aud, vps, sps, pps, sei, suffix_sei, idr, trail, eos;
} nal_types_t;

static const nal_types_t TYPES[] = {
  [URTP_CODEC_H264] = { 9, 0, 7, 8, 6, 6, 5, 1, 10 },
  [URTP_CODEC_H265] = { 35, 32, 33, 34, 39, 40, 19, 1, 36 },
  [URTP_CODEC_H266] = { 20, 14, 15, 16, 23, 24, 8, 0, 21 },
};

static size_t hdr_len(urtp_codec_t c)
{
  return c == URTP_CODEC_H264 ? 1 : 2;
}

static void put_nal_hdr(bytes_t *b, urtp_codec_t c, unsigned type)
{
  switch (c) {
  case URTP_CODEC_H264: { /* F | NRI | Type */
    unsigned nri = (type == 7 || type == 8 || type == 5) ? 3 : (type == 1 ? 2 : 0);
    bytes_put8(b, nri << 5 | type);
    break;
  }
  case URTP_CODEC_H265: /* F | Type(6) | LayerId(6) | TID+1(3), TID 0 */
    bytes_put8(b, type << 1);
    bytes_put8(b, 1);
    break;
  case URTP_CODEC_H266: /* F | Z | LayerId(6), Type(5) | TID+1(3) */
    bytes_put8(b, 0);
    bytes_put8(b, type << 3 | 1);
    break;
  default:
    break;
  }
}

/* n bytes of NAL unit payload as an encoder would write them: random, with
 * plenty of zero bytes, but emulation-prevented (00 00 is never followed by
 * 00..02, it gets an 03) and ending in the RBSP stop bit, so that
 * start-code lookup finds exactly the NAL units we made. */
static void put_body(bytes_t *b, size_t n, uint64_t *rng)
{
  unsigned zeros = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = tap_rand(rng);
    unsigned v = (r & 3) == 0 ? 0 : (unsigned)(r >> 32) & 0xff;
    if (i + 1 == n)
      v = 0x80;
    else if (zeros >= 2 && v <= 3)
      v = 3;
    zeros = v == 0 ? zeros + 1 : 0;
    bytes_put8(b, v);
  }
}

/* An access unit: NAL units back to back in data. */
typedef struct au {
  bytes_t data;
  size_t off[MAX_NALS], len[MAX_NALS];
  size_t n;
  uint32_t ts;
  bool keyframe;
  size_t split;               /* NAL units in the first urtp_pay call (IN_SPLIT) */
  /* filled by packetize() */
  size_t first_pkt, npkts;
} au_t;

static void au_add(au_t *au, urtp_codec_t c, unsigned type, size_t body, uint64_t *rng)
{
  if (au->n == MAX_NALS)
    abort();
  au->off[au->n] = au->data.n;
  put_nal_hdr(&au->data, c, type);
  put_body(&au->data, body, rng);
  au->len[au->n] = au->data.n - au->off[au->n];
  au->n++;
  if (c != URTP_CODEC_OPUS && urtp_h26x_is_keyframe(urtp_h26x_desc(c), type))
    au->keyframe = true;
}

/* Adds raw bytes as one NAL unit (used for NAL units shorter than a header). */
static void au_add_raw(au_t *au, const uint8_t *p, size_t n)
{
  au->off[au->n] = au->data.n;
  bytes_put(&au->data, p, n);
  au->len[au->n] = n;
  au->n++;
}

static urtp_nal_t au_nal(const au_t *au, size_t i)
{
  return (urtp_nal_t){ au->data.p + au->off[i], au->len[i] };
}

static void au_free(au_t *au)
{
  bytes_free(&au->data);
}

static bool nal_usable(urtp_codec_t c, size_t len)
{
  return c == URTP_CODEC_OPUS || len >= hdr_len(c);
}

/* Annex-B of the NAL units the packetizer keeps, with sc-byte start codes.
 * With only[] given, just the NAL units flagged there. */
static void au_annexb(const au_t *au, urtp_codec_t c, int sc, const bool *only, bytes_t *out)
{
  static const uint8_t code[4] = { 0, 0, 0, 1 };
  out->n = 0;
  for (size_t i = 0; i < au->n; i++) {
    if (!nal_usable(c, au->len[i]) || (only && !only[i]))
      continue;
    bytes_put(out, code + 4 - sc, (size_t)sc);
    bytes_put(out, au->data.p + au->off[i], au->len[i]);
  }
}

static size_t au_usable_nals(const au_t *au, urtp_codec_t c)
{
  size_t k = 0;
  for (size_t i = 0; i < au->n; i++)
    k += nal_usable(c, au->len[i]);
  return k;
}

/* A stream of access units the way an encoder writes them: keyframes with
 * AUD, parameter sets, SEI and IDR slices, then predicted pictures of one
 * to three slices, sometimes with a suffix SEI; sizes up to max_slice. */
static void make_stream(au_t *aus, size_t n, urtp_codec_t c, size_t max_slice, uint64_t seed)
{
  const nal_types_t *t = &TYPES[c];
  uint64_t rng = seed;
  uint32_t ts = (uint32_t)(0xffffffffu - 3000u * 20); /* wraps after 20 AUs */
  for (size_t i = 0; i < n; i++) {
    au_t *au = &aus[i];
    memset(au, 0, sizeof(*au));
    au->ts = ts;
    ts += 3000;
    au_add(au, c, t->aud, 1, &rng);
    if (i % 25 == 0) {
      if (c != URTP_CODEC_H264)
        au_add(au, c, t->vps, 10 + tap_rand(&rng) % 20, &rng);
      au_add(au, c, t->sps, 15 + tap_rand(&rng) % 30, &rng);
      au_add(au, c, t->pps, 3 + tap_rand(&rng) % 8, &rng);
      au_add(au, c, t->sei, 10 + tap_rand(&rng) % 40, &rng);
      size_t slices = 1 + tap_rand(&rng) % 2;
      for (size_t s = 0; s < slices; s++)
        au_add(au, c, t->idr, max_slice / 2 + tap_rand(&rng) % (max_slice / 2), &rng);
    } else {
      size_t slices = 1 + tap_rand(&rng) % 3;
      for (size_t s = 0; s < slices; s++) {
        /* mostly small pictures, some large */
        size_t size = (tap_rand(&rng) % 4 == 0) ? tap_rand(&rng) % max_slice
                                                : tap_rand(&rng) % (max_slice / 8 + 1);
        au_add(au, c, t->trail, size, &rng);
      }
      if (tap_rand(&rng) % 5 == 0)
        au_add(au, c, t->suffix_sei, 5 + tap_rand(&rng) % 20, &rng);
    }
    au->split = au->n / 2;
  }
}

/* Opus: one packet of 1..max bytes per access unit, 20 ms apart. */
static void make_opus_stream(au_t *aus, size_t n, size_t max, uint64_t seed)
{
  uint64_t rng = seed;
  uint32_t ts = 0xffffffffu - 960u * 10;
  for (size_t i = 0; i < n; i++) {
    au_t *au = &aus[i];
    memset(au, 0, sizeof(*au));
    au->ts = ts;
    ts += 960;
    size_t len = 1 + tap_rand(&rng) % max;
    au->off[0] = 0;
    bytes_put8(&au->data, 0xfc); /* TOC: CELT fullband 20 ms, one frame */
    put_body(&au->data, len - 1, &rng);
    au->len[0] = len;
    au->n = 1;
  }
}

/* ---- packetizing into datagrams ---------------------------------------- */

typedef enum input {
  IN_NALS,      /* urtp_pay_nals, one call per access unit */
  IN_SPLIT,     /* urtp_pay_nals, two calls, end_of_au on the second */
  IN_ANNEXB3,   /* urtp_pay_annexb, 3-byte start codes */
  IN_ANNEXB4,   /* urtp_pay_annexb, 4-byte start codes */
} input_t;

typedef struct rt_cfg {
  urtp_codec_t codec;
  size_t mtu;
  bool aggregate;
  bool pad;                   /* pad_fragments */
  uint16_t seq_start;
  input_t input;
} rt_cfg_t;

typedef struct dgram {
  uint8_t *p;
  size_t len;
  size_t pad;                 /* RTP padding at the end of len */
  size_t au;
  size_t nal_first, nal_last; /* NAL units (indices into the AU) it carries */
} dgram_t;

typedef struct dlist {
  dgram_t *d;
  size_t n, cap;
} dlist_t;

static void dlist_free(dlist_t *l)
{
  for (size_t i = 0; i < l->n; i++)
    free(l->d[i].p);
  free(l->d);
  memset(l, 0, sizeof(*l));
}

/* Packet types seen, for checking that a test covers what it claims to. */
typedef struct census {
  size_t single, ap, ap_units, fu, fu_runs, p_bits, markers;
  size_t max_fu_run;
  size_t padded, padded_runs, pad_bytes;  /* FUs with padding, their NAL units */
} census_t;

typedef struct pay_run {
  const rt_cfg_t *cfg;
  const urtp_h26x_desc_t *desc;
  urtp_pay_t pay;
  urtp_batch_t batch;
  dlist_t dl;
  census_t cs;
  uint16_t next_seq;
} pay_run_t;

/* Packets the rules of pay.h give for NAL units nals[0..n): a NAL unit that
 * does not fit is fragmented into the fewest FUs; with aggregation,
 * consecutive NAL units that fit together share an aggregation packet. */
static size_t model_packets(const rt_cfg_t *cfg, const au_t *au, size_t from, size_t to)
{
  size_t hl = hdr_len(cfg->codec), mtu = cfg->mtu, count = 0;
  size_t lens[MAX_NALS], m = 0;
  for (size_t i = from; i < to; i++) {
    if (nal_usable(cfg->codec, au->len[i]))
      lens[m++] = au->len[i];
  }
  for (size_t i = 0; i < m;) {
    if (12 + lens[i] > mtu) {
      size_t frag = mtu - 12 - hl - 1;
      count += (lens[i] - hl + frag - 1) / frag;
      i++;
      continue;
    }
    size_t j = i + 1;
    if (cfg->aggregate) {
      size_t size = 12 + hl + 2 + lens[i];
      while (j < m && size + 2 + lens[j] <= mtu)
        size += 2 + lens[j++];
    }
    count++;
    i = j;
  }
  return count;
}

typedef struct cursor {
  size_t nal;        /* NAL unit expected next (index into the AU) */
  bool in_fu;
  size_t fu_off;     /* bytes of it carried so far, header included */
  size_t fu_pkts, fu_len;
  size_t fu_padded;  /* of those, FUs with RTP padding */
  size_t last;       /* index of the last usable NAL unit of the call */
  size_t last_vcl;   /* index of the last VCL NAL unit of the call, or SIZE_MAX */
  bool end_of_au;
} cursor_t;

static size_t next_usable(const rt_cfg_t *cfg, const au_t *au, size_t i)
{
  while (i < au->n && !nal_usable(cfg->codec, au->len[i]))
    i++;
  return i;
}

static uint16_t rd16(const uint8_t *p)
{
  return (uint16_t)(p[0] << 8 | p[1]);
}

/* Checks one H.26x packet against the NAL units it should carry. Returns
 * false when the packet is so wrong that going on is pointless. */
static bool inspect_h26x(pay_run_t *r, const au_t *au, cursor_t *cur, dgram_t *dg)
{
  const urtp_h26x_desc_t *d = r->desc;
  const uint8_t *pl = dg->p + 12;
  size_t plen = dg->len - 12 - dg->pad, hl = d->hdr_len;
  if (plen < hl) {
    CHECK(plen >= hl);
    return false;
  }
  unsigned type = urtp_h26x_type(d, pl);
  cur->nal = cur->in_fu ? cur->nal : next_usable(r->cfg, au, cur->nal);
  dg->nal_first = cur->nal;

  if (type == d->ap_type) {
    CHECK(r->cfg->aggregate);
    CHECK(!cur->in_fu);
    size_t off = hl, units = 0;
    while (off < plen) {
      if (off + 2 > plen || cur->nal >= au->n) {
        CHECK(off + 2 <= plen && cur->nal < au->n);
        return false;
      }
      size_t sz = rd16(pl + off);
      off += 2;
      urtp_nal_t nal = au_nal(au, cur->nal);
      if (sz != nal.len || off + sz > plen) {
        CHECK_EQ(sz, nal.len);
        return false;
      }
      CHECK_MEM(pl + off, nal.data, sz);
      off += sz;
      units++;
      dg->nal_last = cur->nal;
      cur->nal = next_usable(r->cfg, au, cur->nal + 1);
    }
    CHECK(units >= 2);
    r->cs.ap++;
    r->cs.ap_units += units;
    return true;
  }

  if (cur->nal >= au->n) {
    CHECK(cur->nal < au->n);
    return false;
  }
  urtp_nal_t nal = au_nal(au, cur->nal);
  dg->nal_last = cur->nal;

  if (type == d->fu_type) {
    if (plen < hl + 2u) {
      CHECK(plen >= hl + 2u);
      return false;
    }
    uint8_t fuh = pl[hl];
    bool s = fuh & 0x80, e = fuh & 0x40;
    unsigned nal_type = urtp_h26x_type(d, nal.data);
    CHECK_EQ(fuh & d->fu_type_mask, nal_type);
    CHECK(!(s && e));
    if (r->cfg->codec == URTP_CODEC_H264)
      CHECK_EQ(fuh & 0x20, 0); /* R */
    /* The FU indicator is the NAL unit header with the FU type. */
    uint8_t ind[2];
    urtp_h26x_write_hdr(d, ind, nal.data, d->fu_type);
    CHECK_MEM(pl, ind, hl);
    if (s) {
      CHECK(!cur->in_fu);
      cur->in_fu = true;
      cur->fu_off = hl;
      cur->fu_pkts = 0;
      cur->fu_padded = 0;
      cur->fu_len = dg->len;
    } else if (!cur->in_fu) {
      CHECK(cur->in_fu);
      return false;
    }
    size_t n = plen - hl - 1;
    if (cur->fu_off + n > nal.len) {
      CHECK(cur->fu_off + n <= nal.len);
      return false;
    }
    CHECK_MEM(pl + hl + 1, nal.data + cur->fu_off, n);
    cur->fu_off += n;
    cur->fu_pkts++;
    /* equal fragments, only the last one shorter; padded ones are the last
     * few of their NAL unit, and a NAL unit with padding has all its
     * fragments of one size (see pay.h) */
    if (dg->pad) {
      cur->fu_padded++;
      r->cs.padded++;
      r->cs.pad_bytes += dg->pad;
    } else {
      CHECK_EQ(cur->fu_padded, 0);
    }
    if (!e || cur->fu_padded)
      CHECK_EQ(dg->len, cur->fu_len);
    else
      CHECK(dg->len <= cur->fu_len);
    if (r->cfg->codec == URTP_CODEC_H266) {
      bool p = fuh & 0x20;
      CHECK_EQ(p, e && cur->end_of_au && cur->nal == cur->last_vcl);
      r->cs.p_bits += p;
    }
    r->cs.fu++;
    if (e) {
      CHECK_EQ(cur->fu_off, nal.len);
      cur->in_fu = false;
      const bool last_of_call = cur->nal == cur->last;
      cur->nal = next_usable(r->cfg, au, cur->nal + 1);
      r->cs.fu_runs++;
      r->cs.padded_runs += cur->fu_padded ? 1 : 0;
      {
        /* pay.h: the shortfall of the last FU, spread over as few packets
         * as 255-byte paddings allow, where it is at most 1/32 of the NAL
         * unit and fragments hold 1024 bytes or more */
        size_t frag = r->cfg->mtu - 12 - hl - 1;
        size_t shortfall = cur->fu_pkts * frag - (nal.len - hl);
        size_t m = (shortfall + 254) / 255, want = 0;
        if (r->cfg->pad && !last_of_call && frag >= 1024 && shortfall &&
            shortfall <= nal.len / 32 && m < cur->fu_pkts)
          want = m;
        CHECK_EQ(cur->fu_padded, want);
      }
      if (cur->fu_pkts > r->cs.max_fu_run)
        r->cs.max_fu_run = cur->fu_pkts;
    }
    return true;
  }

  /* single NAL unit packet */
  CHECK(!cur->in_fu);
  CHECK_EQ(plen, nal.len);
  if (plen == nal.len)
    CHECK_MEM(pl, nal.data, plen);
  cur->nal = next_usable(r->cfg, au, cur->nal + 1);
  r->cs.single++;
  return true;
}

static void pay_run_init(pay_run_t *r, const rt_cfg_t *cfg)
{
  memset(r, 0, sizeof(*r));
  r->cfg = cfg;
  r->desc = urtp_h26x_desc(cfg->codec);
  urtp_pay_config_t pc = { .codec = cfg->codec, .pt = PT, .ssrc = SSRC,
                           .seq_start = cfg->seq_start, .mtu = cfg->mtu,
                           .aggregate = cfg->aggregate, .pad_fragments = cfg->pad };
  CHECK_EQ(urtp_pay_init(&r->pay, &pc), 0);
  urtp_batch_init(&r->batch);
  r->next_seq = cfg->seq_start;
}

static void pay_run_destroy(pay_run_t *r)
{
  urtp_pay_destroy(&r->pay);
  urtp_batch_free(&r->batch);
  dlist_free(&r->dl);
}

/* Moves the batch into datagrams and checks each packet. */
static bool take_batch(pay_run_t *r, au_t *au, size_t au_idx, cursor_t *cur, bool end_of_au,
                       size_t expect)
{
  urtp_batch_t *b = &r->batch;
  CHECK_EQ(b->npkts, expect);
  for (size_t i = 0; i < b->npkts; i++) {
    size_t len = b->pkts[i].len;
    CHECK(len <= r->cfg->mtu);
    dgram_t dg = { .p = xrealloc(NULL, len), .au = au_idx };
    dg.len = urtp_batch_copy_pkt(b, i, dg.p, len);
    if (len < 12 || dg.len != len) {
      CHECK_EQ(dg.len, len);
      free(dg.p);
      return false;
    }
    urtp_rtp_pkt_t pkt;
    CHECK_EQ(urtp_rtp_parse(dg.p, dg.len, &pkt), 0);
    if (pkt.hdr.padding) {
      /* only asked for, only in full-size packets, n-1 zeros and then n */
      CHECK(r->cfg->pad);
      CHECK_EQ(len, r->cfg->mtu);
      CHECK(pkt.pad_len >= 1 && pkt.pad_len <= 255);
      for (size_t k = len - pkt.pad_len; k + 1 < len; k++)
        CHECK_EQ(dg.p[k], 0);
      dg.pad = pkt.pad_len;
    }
    CHECK_EQ(pkt.payload_len, len - 12 - dg.pad);
    CHECK_EQ(pkt.hdr.pt, PT);
    CHECK_EQ(pkt.hdr.ssrc, SSRC);
    CHECK_EQ(pkt.hdr.ts, au->ts);
    CHECK_EQ(pkt.hdr.seq, r->next_seq);
    r->next_seq++;
    bool last = end_of_au && i + 1 == b->npkts;
    CHECK_EQ(pkt.hdr.marker, last);
    r->cs.markers += pkt.hdr.marker;
    bool ok = true;
    if (r->desc) {
      ok = inspect_h26x(r, au, cur, &dg);
    } else {
      CHECK_EQ(pkt.payload_len, au->len[0]);
      CHECK_MEM(pkt.payload, au->data.p, au->len[0]);
    }
    if (r->dl.n == r->dl.cap) {
      r->dl.cap = r->dl.cap ? 2 * r->dl.cap : 256;
      r->dl.d = xrealloc(r->dl.d, r->dl.cap * sizeof(dgram_t));
    }
    r->dl.d[r->dl.n++] = dg;
    if (!ok)
      return false;
  }
  return true;
}

static size_t last_vcl(const rt_cfg_t *cfg, const au_t *au, size_t from, size_t to)
{
  const urtp_h26x_desc_t *d = urtp_h26x_desc(cfg->codec);
  size_t k = SIZE_MAX;
  for (size_t i = from; i < to; i++) {
    if (nal_usable(cfg->codec, au->len[i]) && urtp_h26x_is_vcl(d, urtp_h26x_type(d, au->data.p + au->off[i])))
      k = i;
  }
  return k;
}

/* The last NAL unit among au's [from, to) that the packetizer sends. */
static size_t last_usable(const rt_cfg_t *cfg, const au_t *au, size_t from, size_t to)
{
  size_t k = SIZE_MAX;
  for (size_t i = from; i < to; i++)
    if (nal_usable(cfg->codec, au->len[i]))
      k = i;
  return k;
}

/* Packetizes one access unit into r->dl. */
static bool packetize(pay_run_t *r, au_t *au, size_t au_idx)
{
  const rt_cfg_t *cfg = r->cfg;
  urtp_batch_t *b = &r->batch;
  au->first_pkt = r->dl.n;

  if (cfg->codec == URTP_CODEC_OPUS) {
    urtp_batch_clear(b);
    CHECK_EQ(urtp_pay_frame(&r->pay, au->data.p, au->len[0], au->ts, au_idx == 0, b), 1);
    cursor_t cur = { 0 };
    /* Opus marks the first packet of a talkspurt, not the end of a unit. */
    bool ok = take_batch(r, au, au_idx, &cur, au_idx == 0, 1);
    au->npkts = r->dl.n - au->first_pkt;
    return ok;
  }

  urtp_nal_t nals[MAX_NALS];
  for (size_t i = 0; i < au->n; i++)
    nals[i] = au_nal(au, i);
  cursor_t cur = { 0 };
  bool ok = true;
  int ret;

  switch (cfg->input) {
  case IN_NALS:
    urtp_batch_clear(b);
    ret = urtp_pay_nals(&r->pay, nals, au->n, au->ts, true, b);
    CHECK_EQ(ret, (int)b->npkts);
    cur.end_of_au = true;
    cur.last_vcl = last_vcl(cfg, au, 0, au->n);
    cur.last = last_usable(cfg, au, 0, au->n);
    ok = take_batch(r, au, au_idx, &cur, true, model_packets(cfg, au, 0, au->n));
    break;
  case IN_SPLIT:
    urtp_batch_clear(b);
    ret = urtp_pay_nals(&r->pay, nals, au->split, au->ts, false, b);
    CHECK_EQ(ret, (int)b->npkts);
    cur.last_vcl = SIZE_MAX;
    cur.last = last_usable(cfg, au, 0, au->split);
    ok = take_batch(r, au, au_idx, &cur, false, model_packets(cfg, au, 0, au->split));
    if (!ok)
      break;
    urtp_batch_clear(b);
    ret = urtp_pay_nals(&r->pay, nals + au->split, au->n - au->split, au->ts, true, b);
    CHECK_EQ(ret, (int)b->npkts);
    cur.end_of_au = true;
    cur.last_vcl = last_vcl(cfg, au, au->split, au->n);
    cur.last = last_usable(cfg, au, au->split, au->n);
    ok = take_batch(r, au, au_idx, &cur, true, model_packets(cfg, au, au->split, au->n));
    break;
  case IN_ANNEXB3:
  case IN_ANNEXB4: {
    bytes_t ab = { 0 };
    au_annexb(au, cfg->codec, cfg->input == IN_ANNEXB3 ? 3 : 4, NULL, &ab);
    urtp_batch_clear(b);
    ret = urtp_pay_annexb(&r->pay, ab.p, ab.n, au->ts, true, b);
    CHECK_EQ(ret, (int)b->npkts);
    cur.end_of_au = true;
    cur.last_vcl = last_vcl(cfg, au, 0, au->n);
    cur.last = last_usable(cfg, au, 0, au->n);
    /* the batch points into ab: copy the packets out before freeing it */
    ok = take_batch(r, au, au_idx, &cur, true, model_packets(cfg, au, 0, au->n));
    bytes_free(&ab);
    break;
  }
  }
  if (ok) {
    CHECK(!cur.in_fu);
    CHECK_EQ(next_usable(cfg, au, cur.nal), au->n);
  }
  au->npkts = r->dl.n - au->first_pkt;
  return ok;
}

/* ---- depacketizing ------------------------------------------------------ */

typedef struct sink {
  urtp_au_t *a;
  size_t n, cap;
} sink_t;

static void sink_free(sink_t *s)
{
  for (size_t i = 0; i < s->n; i++)
    free(s->a[i].data);
  free(s->a);
  memset(s, 0, sizeof(*s));
}

static void drain(urtp_depay_t *d, sink_t *s)
{
  urtp_au_t au;
  while (urtp_depay_pop(d, &au)) {
    if (s->n == s->cap) {
      s->cap = s->cap ? 2 * s->cap : 64;
      s->a = xrealloc(s->a, s->cap * sizeof(urtp_au_t));
    }
    s->a[s->n++] = au;
  }
}

static urtp_depay_t *new_depay(const rt_cfg_t *cfg, urtp_loss_policy_t pol, bool wait_kf)
{
  urtp_depay_config_t dc = { .codec = cfg->codec, .pt = PT, .ssrc = SSRC,
                             .reorder_window = WINDOW,
                             .max_packet = cfg->mtu > 1500 ? cfg->mtu : 0,
                             .loss_policy = pol, .wait_for_keyframe = wait_kf };
  return urtp_depay_new(&dc);
}

/* Splits Annex-B into NAL units (the depacketizer's output uses 4-byte start
 * codes; our NAL units hold no start code, so this is exact). */
static size_t split(const uint8_t *p, size_t n, urtp_nal_t *out, size_t max)
{
  return urtp_scl_split(p, n, out, max);
}

/* ---- clean round trips ---------------------------------------------------- */

/* Packetizes aus, depacketizes in order and checks that everything comes
 * back exactly. Returns the census for coverage checks. */
static census_t roundtrip(const rt_cfg_t *cfg, au_t *aus, size_t n)
{
  pay_run_t r;
  pay_run_init(&r, cfg);
  census_t none = { 0 };
  for (size_t i = 0; i < n; i++) {
    if (!packetize(&r, &aus[i], i)) {
      pay_run_destroy(&r);
      return none;
    }
  }
  CHECK_EQ(r.pay.packets, r.dl.n);

  urtp_depay_t *d = new_depay(cfg, URTP_LOSS_DROP_AU, false);
  if (!d) {
    CHECK(d != NULL);
    pay_run_destroy(&r);
    return none;
  }
  sink_t s = { 0 };
  uint64_t bytes = 0;
  for (size_t i = 0; i < r.dl.n; i++) {
    urtp_depay_push(d, r.dl.d[i].p, r.dl.d[i].len);
    bytes += r.dl.d[i].len - 12 - r.dl.d[i].pad;
    drain(d, &s);
  }
  CHECK_EQ(urtp_depay_pending(d), 0);
  urtp_depay_flush(d, true);
  drain(d, &s);

  CHECK_EQ(s.n, n);
  uint64_t base = 0, nals = 0;
  bytes_t exp = { 0 };
  for (size_t i = 0; i < n && i < s.n; i++) {
    const urtp_au_t *got = &s.a[i];
    const au_t *au = &aus[i];
    if (cfg->codec == URTP_CODEC_OPUS) {
      exp.n = 0;
      bytes_put(&exp, au->data.p, au->len[0]);
    } else {
      au_annexb(au, cfg->codec, 4, NULL, &exp);
      CHECK_EQ(got->nal_count, au_usable_nals(au, cfg->codec));
      nals += au_usable_nals(au, cfg->codec);
      CHECK_EQ(!!(got->flags & URTP_AU_KEYFRAME), au->keyframe);
    }
    CHECK_EQ(got->len, exp.n);
    if (got->len == exp.n)
      CHECK_MEM(got->data, exp.p, exp.n);
    CHECK_EQ(got->rtp_ts, au->ts);
    CHECK_EQ(got->flags & (URTP_AU_DISCONT | URTP_AU_DAMAGED | URTP_AU_NO_MARKER), 0);
    /* extended sequence numbers: contiguous, starting at 65536 + seq_start */
    if (i == 0)
      base = got->first_seq;
    CHECK_EQ(base, 65536u + cfg->seq_start);
    CHECK_EQ(got->first_seq, base + au->first_pkt);
    CHECK_EQ(got->last_seq, base + au->first_pkt + au->npkts - 1);
  }
  bytes_free(&exp);

  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->packets, r.dl.n);
  CHECK_EQ(st->skipped, 0);
  CHECK_EQ(st->bytes, bytes);
  CHECK_EQ(st->aus, n);
  if (cfg->codec != URTP_CODEC_OPUS)
    CHECK_EQ(st->nals, nals);
  CHECK_EQ(st->malformed, 0);
  CHECK_EQ(st->foreign, 0);
  CHECK_EQ(st->unsupported, 0);
  CHECK_EQ(st->dropped_nals, 0);
  CHECK_EQ(st->dropped_aus, 0);
  CHECK_EQ(st->oversize, 0);
  CHECK_EQ(st->seq.delivered, r.dl.n);
  CHECK_EQ(st->seq.lost, 0);
  CHECK_EQ(st->seq.duplicates, 0);
  CHECK_EQ(st->seq.late, 0);
  CHECK_EQ(st->seq.reordered, 0);
  CHECK_EQ(st->seq.resyncs, 0);

  census_t cs = r.cs;
  CHECK_EQ(cs.pad_bytes, r.pay.pad_bytes);
  CHECK_EQ(cs.markers, cfg->codec == URTP_CODEC_OPUS ? 1 : n);
  sink_free(&s);
  urtp_depay_free(d);
  pay_run_destroy(&r);
  return cs;
}

static void free_aus(au_t *aus, size_t n)
{
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  free(aus);
}

/* Every codec, aggregation on and off, NAL list and both Annex-B forms, and
 * access units split over two calls: a realistic stream of 120 access units
 * from seq 65000, so sequence numbers wrap. */
static void test_streams(void)
{
  static const input_t inputs[] = { IN_NALS, IN_SPLIT, IN_ANNEXB3, IN_ANNEXB4 };
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    size_t n = 120;
    au_t *aus = xrealloc(NULL, n * sizeof(au_t));
    make_stream(aus, n, c, 6000, 0x1234 + ci);
    for (int agg = 0; agg < 2; agg++) {
      for (size_t ii = 0; ii < 4; ii++) {
        rt_cfg_t cfg = { .codec = c, .mtu = 1400, .aggregate = agg, .seq_start = 65000,
                         .input = inputs[ii] };
        census_t cs = roundtrip(&cfg, aus, n);
        /* the stream exercises every packet type */
        CHECK(cs.single > 0);
        CHECK(cs.fu_runs > 0);
        CHECK(agg ? cs.ap > 0 : cs.ap == 0);
        if (c == URTP_CODEC_H266)
          CHECK(cs.p_bits > 0);
        else
          CHECK_EQ(cs.p_bits, 0);
      }
    }
    free_aus(aus, n);
  }
}

/* pad_fragments: streams with slices up to 200 KB, where most large NAL
 * units are padded and small ones are not, through every input form, at
 * MTUs on both sides of the 1024-byte fragment threshold; the depayloader
 * strips the padding and rebuilds every AU byte-exact (roundtrip()). */
static void test_padded_fragments(void)
{
  static const input_t inputs[] = { IN_NALS, IN_SPLIT, IN_ANNEXB4 };
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    size_t hl = hdr_len(c), n = 60;
    au_t *aus = xrealloc(NULL, n * sizeof(au_t));
    make_stream(aus, n, c, 200000, 0x9ad + ci);
    /* fragments of 1023, 1024, 1385 (or 1386 for H.264) and 8985 bytes */
    const size_t mtus[] = { 12 + hl + 1 + 1023, 12 + hl + 1 + 1024, 1400, 9000 };
    for (size_t mi = 0; mi < 4; mi++) {
      for (size_t ii = 0; ii < 3; ii++) {
        rt_cfg_t cfg = { .codec = c, .mtu = mtus[mi], .aggregate = ii == 0, .pad = true,
                         .seq_start = 65500, .input = inputs[ii] };
        census_t cs = roundtrip(&cfg, aus, n);
        if (mi == 0) {
          CHECK_EQ(cs.padded, 0);
        } else {
          /* both kinds occur, so the rule is exercised both ways (at 9000
           * bytes only NAL units over ~100 KB may be padded, and never the
           * last of a call) */
          CHECK(cs.padded_runs > (mi == 3 ? 0u : 10u));
          if (ii == 0)
            printf("# %s mtu %zu: %zu of %zu fragmented NAL units padded\n",
                   urtp_codec_name(c), mtus[mi], cs.padded_runs, cs.fu_runs);
          CHECK(cs.padded_runs < cs.fu_runs);
          CHECK(cs.pad_bytes > 0);
        }
      }
    }
    /* and never without the option */
    rt_cfg_t off = { .codec = c, .mtu = 1400, .seq_start = 7, .input = IN_NALS };
    census_t cs = roundtrip(&off, aus, n);
    CHECK(cs.fu_runs > 10);
    CHECK_EQ(cs.padded, 0);
    free_aus(aus, n);
  }
}

/* A ~1.5 MB slice at mtu 1400: more than 1000 fragments, with parameter
 * sets in front (aggregated) and a small slice behind. */
static void test_huge_nal(void)
{
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    const nal_types_t *t = &TYPES[c];
    uint64_t rng = 77 + ci;
    au_t *aus = xrealloc(NULL, 2 * sizeof(au_t));
    memset(aus, 0, 2 * sizeof(au_t));
    aus[0].ts = 1000;
    if (c != URTP_CODEC_H264)
      au_add(&aus[0], c, t->vps, 20, &rng);
    au_add(&aus[0], c, t->sps, 30, &rng);
    au_add(&aus[0], c, t->pps, 6, &rng);
    au_add(&aus[0], c, t->idr, 1500000, &rng);
    au_add(&aus[0], c, t->idr, 700, &rng);
    aus[1].ts = 4000;
    au_add(&aus[1], c, t->trail, 500000, &rng);
    for (int agg = 0; agg < 2; agg++) {
      rt_cfg_t cfg = { .codec = c, .mtu = 1400, .aggregate = agg, .seq_start = 64000,
                       .input = agg ? IN_ANNEXB4 : IN_NALS };
      census_t cs = roundtrip(&cfg, aus, 2);
      size_t frag = 1400 - 12 - hdr_len(c) - 1;
      CHECK_EQ(cs.max_fu_run, (aus[0].len[aus[0].n - 2] - hdr_len(c) + frag - 1) / frag);
      CHECK(cs.max_fu_run > 1000);
      CHECK_EQ(cs.fu_runs, 2);
      CHECK_EQ(cs.ap, agg ? 1 : 0);
    }
    free_aus(aus, 2);
  }
}

/* Header-only NAL units (end of sequence, and one-byte-payload AUD) in every
 * position, and NAL units shorter than a header, which are skipped. */
static void test_tiny_nals(void)
{
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    const nal_types_t *t = &TYPES[c];
    uint64_t rng = 99 + ci;
    size_t n = 6;
    au_t *aus = xrealloc(NULL, n * sizeof(au_t));
    memset(aus, 0, n * sizeof(au_t));
    for (size_t i = 0; i < n; i++)
      aus[i].ts = 90000 * (uint32_t)i;
    au_add(&aus[0], c, t->eos, 0, &rng); /* alone: one header-only packet */
    au_add(&aus[1], c, t->aud, 1, &rng);
    au_add(&aus[1], c, t->eos, 0, &rng);
    au_add(&aus[1], c, t->idr, 3000, &rng);
    au_add(&aus[1], c, t->eos, 0, &rng);
    au_add(&aus[2], c, t->trail, 0, &rng); /* a slice of header only */
    au_add(&aus[2], c, t->trail, 1, &rng);
    au_add(&aus[2], c, t->eos, 0, &rng);
    au_add(&aus[3], c, t->trail, 2000, &rng);
    au_add(&aus[3], c, t->eos, 0, &rng);
    au_add(&aus[4], c, t->aud, 1, &rng);
    au_add(&aus[4], c, t->trail, 1, &rng);
    au_add(&aus[5], c, t->aud, 1, &rng);
    if (c != URTP_CODEC_H264) {
      /* one byte: shorter than the 2-byte header, skipped by the packetizer */
      static const uint8_t one = 0x02;
      au_add_raw(&aus[5], &one, 1);
    }
    au_add(&aus[5], c, t->trail, 100, &rng);
    for (int agg = 0; agg < 2; agg++) {
      rt_cfg_t cfg = { .codec = c, .mtu = 1400, .aggregate = agg, .seq_start = 1,
                       .input = IN_NALS };
      census_t cs = roundtrip(&cfg, aus, n);
      CHECK(cs.single > 0);
      CHECK(agg ? cs.ap == 4 : cs.ap == 0);
    }
    free_aus(aus, n);
  }
}

/* NAL units exactly at the MTU and one byte over, and aggregation packets
 * exactly filling it and one byte over, at several MTUs. */
static void test_mtu_boundaries(void)
{
  static const size_t mtus[] = { URTP_PAY_MIN_MTU, 200, 1400, 9000 };
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    const nal_types_t *t = &TYPES[c];
    size_t hl = hdr_len(c);
    for (size_t mi = 0; mi < sizeof(mtus) / sizeof(mtus[0]); mi++) {
      size_t mtu = mtus[mi];
      uint64_t rng = mtu * 3 + ci;
      for (int agg = 0; agg < 2; agg++) {
        au_t aus[6];
        memset(aus, 0, sizeof(aus));
        for (size_t i = 0; i < 6; i++)
          aus[i].ts = 3000 * (uint32_t)i;
        /* single NAL unit exactly at the MTU: one packet */
        au_add(&aus[0], c, t->idr, mtu - 12 - hl, &rng);
        /* one byte over: two FUs */
        au_add(&aus[1], c, t->trail, mtu - 12 - hl + 1, &rng);
        /* two NAL units filling an aggregation packet exactly */
        size_t room = mtu - 12 - hl - 4; /* bytes of the two NAL units */
        au_add(&aus[2], c, t->sps, room / 2 - hl, &rng);
        au_add(&aus[2], c, t->pps, room - room / 2 - hl, &rng);
        /* ... and one byte over: two single NAL unit packets */
        au_add(&aus[3], c, t->sps, room / 2 - hl, &rng);
        au_add(&aus[3], c, t->pps, room - room / 2 - hl + 1, &rng);
        /* a FU run whose fragments divide the NAL unit exactly */
        size_t frag = mtu - 12 - hl - 1;
        au_add(&aus[4], c, t->trail, 3 * frag, &rng);
        /* and one byte more */
        au_add(&aus[5], c, t->trail, 3 * frag + 1, &rng);

        rt_cfg_t cfg = { .codec = c, .mtu = mtu, .aggregate = agg, .seq_start = 65535,
                         .input = IN_NALS };
        pay_run_t r;
        pay_run_init(&r, &cfg);
        static const size_t expect_agg[] = { 1, 2, 1, 2, 3, 4 };
        static const size_t expect_noagg[] = { 1, 2, 2, 2, 3, 4 };
        for (size_t i = 0; i < 6; i++) {
          if (!packetize(&r, &aus[i], i))
            break;
          CHECK_EQ(aus[i].npkts, agg ? expect_agg[i] : expect_noagg[i]);
          /* the packets at the boundary are exactly mtu bytes */
          if (i == 0 || (i == 2 && agg))
            CHECK_EQ(r.dl.d[aus[i].first_pkt].len, mtu);
        }
        pay_run_destroy(&r);
        roundtrip(&cfg, aus, 6);
        for (size_t i = 0; i < 6; i++)
          au_free(&aus[i]);
      }
    }
  }
}

/* All four combinations of start code length and aggregation, plus a buffer
 * mixing both start codes with trailing zero bytes and leading garbage. */
static void test_start_codes(void)
{
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    size_t n = 30;
    au_t *aus = xrealloc(NULL, n * sizeof(au_t));
    make_stream(aus, n, c, 3000, 0x5c + ci);
    for (int sc = 3; sc <= 4; sc++) {
      for (int agg = 0; agg < 2; agg++) {
        rt_cfg_t cfg = { .codec = c, .mtu = 1400, .aggregate = agg, .seq_start = 65500,
                         .input = sc == 3 ? IN_ANNEXB3 : IN_ANNEXB4 };
        census_t cs = roundtrip(&cfg, aus, n);
        CHECK(cs.single > 0 && cs.fu_runs > 0);
        CHECK(agg ? cs.ap > 0 : cs.ap == 0);
      }
    }

    /* Mixed: 00 00 01, 00 00 00 01, trailing_zero_8bits, bytes before the
     * first start code. Comparing NAL unit lists, as split by scl. */
    const au_t *au = &aus[0];
    bytes_t ab = { 0 };
    static const uint8_t junk[] = { 0x12, 0x00, 0x00 };
    bytes_put(&ab, junk, sizeof(junk));
    for (size_t i = 0; i < au->n; i++) {
      static const uint8_t sc3[] = { 0, 0, 1 }, sc4[] = { 0, 0, 0, 1 }, z[2] = { 0, 0 };
      if (i % 2)
        bytes_put(&ab, sc3, 3);
      else
        bytes_put(&ab, sc4, 4);
      bytes_put(&ab, au->data.p + au->off[i], au->len[i]);
      if (i % 3 == 0)
        bytes_put(&ab, z, 2);
    }
    urtp_pay_t pay;
    urtp_batch_t b;
    urtp_batch_init(&b);
    urtp_pay_config_t pc = { .codec = c, .pt = PT, .ssrc = SSRC, .mtu = 1400, .aggregate = true };
    CHECK_EQ(urtp_pay_init(&pay, &pc), 0);
    int ret = urtp_pay_annexb(&pay, ab.p, ab.n, 1234, true, &b);
    CHECK_EQ(ret, (int)b.npkts);
    rt_cfg_t cfg = { .codec = c, .mtu = 1400 };
    urtp_depay_t *d = new_depay(&cfg, URTP_LOSS_DROP_AU, false);
    REQUIRE(d != NULL);
    sink_t s = { 0 };
    uint8_t pkt[1400];
    for (size_t i = 0; i < b.npkts; i++) {
      size_t len = urtp_batch_copy_pkt(&b, i, pkt, sizeof(pkt));
      CHECK(len > 12);
      urtp_depay_push(d, pkt, len);
    }
    urtp_depay_flush(d, true);
    drain(d, &s);
    CHECK_EQ(s.n, 1);
    if (s.n == 1) {
      urtp_nal_t in[MAX_NALS], out[MAX_NALS];
      size_t nin = split(ab.p, ab.n, in, MAX_NALS), nout = split(s.a[0].data, s.a[0].len, out, MAX_NALS);
      CHECK_EQ(nin, au->n);
      CHECK_EQ(nout, au->n);
      CHECK_EQ(s.a[0].nal_count, au->n);
      for (size_t i = 0; i < nin && i < nout && i < MAX_NALS; i++) {
        CHECK_EQ(out[i].len, au->len[i]);
        if (out[i].len == au->len[i])
          CHECK_MEM(out[i].data, au->data.p + au->off[i], au->len[i]);
        CHECK_EQ(in[i].len, out[i].len);
      }
      /* the output is the input normalised to 4-byte start codes */
      bytes_t norm = { 0 };
      au_annexb(au, c, 4, NULL, &norm);
      CHECK_EQ(s.a[0].len, norm.n);
      if (s.a[0].len == norm.n)
        CHECK_MEM(s.a[0].data, norm.p, norm.n);
      bytes_free(&norm);
    }
    sink_free(&s);
    urtp_depay_free(d);
    urtp_pay_destroy(&pay);
    urtp_batch_free(&b);
    bytes_free(&ab);
    free_aus(aus, n);
  }
}

/* Many access units in sequence across the 16-bit sequence number wrap (and
 * the 32-bit timestamp wrap): 2000 access units from seq 65000. */
static void test_many_aus(void)
{
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    size_t n = 2000;
    au_t *aus = xrealloc(NULL, n * sizeof(au_t));
    make_stream(aus, n, c, 2500, 0xabc + ci);
    rt_cfg_t cfg = { .codec = c, .mtu = 1200, .aggregate = true, .seq_start = 65000,
                     .input = IN_NALS };
    roundtrip(&cfg, aus, n);
    free_aus(aus, n);
  }
}

static void test_opus(void)
{
  size_t n = 500;
  au_t *aus = xrealloc(NULL, n * sizeof(au_t));
  make_opus_stream(aus, n, 1275, 0x0905);
  rt_cfg_t cfg = { .codec = URTP_CODEC_OPUS, .mtu = 1400, .seq_start = 65400 };
  roundtrip(&cfg, aus, n);
  free_aus(aus, n);

  /* the largest frame that fits the MTU, and one byte more */
  urtp_pay_t pay;
  urtp_batch_t b;
  urtp_batch_init(&b);
  urtp_pay_config_t pc = { .codec = URTP_CODEC_OPUS, .pt = PT, .ssrc = SSRC, .mtu = 200 };
  CHECK_EQ(urtp_pay_init(&pay, &pc), 0);
  uint8_t frame[200];
  memset(frame, 0x7a, sizeof(frame));
  CHECK_EQ(urtp_pay_frame(&pay, frame, 188, 0, false, &b), 1);
  CHECK_EQ(b.npkts, 1);
  if (b.npkts == 1)
    CHECK_EQ(b.pkts[0].len, 200);
  CHECK_EQ(urtp_pay_frame(&pay, frame, 189, 960, false, &b), -EMSGSIZE);
  CHECK_EQ(b.npkts, 1);
  urtp_pay_destroy(&pay);
  urtp_batch_free(&b);
}

/* ---- impairment ---------------------------------------------------------- */

typedef enum drop_mode {
  DROP_INTERIOR, /* only packets that are neither first nor last of their AU */
  DROP_ANYWHERE,
} drop_mode_t;

typedef struct arrival {
  size_t pkt;
  uint64_t key;
} arrival_t;

static int arrival_cmp(const void *a, const void *b)
{
  const arrival_t *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  /* ties: sent order (the sort is not stable); copies stay after */
  return x->pkt < y->pkt ? -1 : x->pkt > y->pkt ? 1 : 0;
}

/* Which NAL units of the AU survive: those all of whose packets arrived. */
static void intact_nals(const au_t *au, const dlist_t *dl, const bool *dropped, bool *ok)
{
  for (size_t k = 0; k < au->n; k++)
    ok[k] = true;
  for (size_t p = au->first_pkt; p < au->first_pkt + au->npkts; p++) {
    if (!dropped[p])
      continue;
    for (size_t k = dl->d[p].nal_first; k <= dl->d[p].nal_last; k++)
      ok[k] = false;
  }
}

static void impair_run(urtp_codec_t c, urtp_loss_policy_t pol, drop_mode_t mode, bool wait_kf,
                       uint64_t seed)
{
  int failed_before = tap_cur_failed;
  tap_cur_failed = 0;
  size_t n = c == URTP_CODEC_OPUS ? 5000 : 2000;
  au_t *aus = xrealloc(NULL, n * sizeof(au_t));
  if (c == URTP_CODEC_OPUS)
    make_opus_stream(aus, n, 400, seed);
  else
    make_stream(aus, n, c, 5000, seed);
  rt_cfg_t cfg = { .codec = c, .mtu = 1400, .aggregate = (seed & 1) != 0, .seq_start = 60000,
                   .input = IN_NALS };
  pay_run_t r;
  pay_run_init(&r, &cfg);
  for (size_t i = 0; i < n; i++) {
    if (!packetize(&r, &aus[i], i)) {
      pay_run_destroy(&r);
      free_aus(aus, n);
      return;
    }
  }
  const dlist_t *dl = &r.dl;
  size_t np = dl->n;

  /* Seeded impairment: 3% loss (never the first 16 packets, nor the last
   * access unit, so that every gap is noticed), 2% duplicates arriving up to
   * 8 positions after their original, and a jitter of up to 8 positions,
   * well inside the window of 64 (so no gap is given up while a packet that
   * would fill it is still on its way). */
  uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
  bool *dropped = xrealloc(NULL, np * sizeof(bool));
  memset(dropped, 0, np * sizeof(bool));
  arrival_t *arr = xrealloc(NULL, 2 * np * sizeof(arrival_t));
  size_t na = 0, ndrop = 0, ndup = 0, last_au_first = aus[n - 1].first_pkt;
  for (size_t p = 0; p < np; p++) {
    const au_t *au = &aus[dl->d[p].au];
    bool interior = p != au->first_pkt && p != au->first_pkt + au->npkts - 1;
    bool may_drop = p >= 16 && p < last_au_first && (mode == DROP_ANYWHERE || interior);
    if (may_drop && tap_rand(&rng) % 100 < 3) {
      dropped[p] = true;
      ndrop++;
      continue;
    }
    uint64_t key = 16 * (uint64_t)p + (p < 16 ? 0 : tap_rand(&rng) % (16 * 8));
    arr[na++] = (arrival_t){ p, key };
    if (p >= 16 && tap_rand(&rng) % 100 < 2) {
      arr[na++] = (arrival_t){ p, key + 1 + tap_rand(&rng) % (16 * 8) };
      ndup++;
    }
  }
  qsort(arr, na, sizeof(arr[0]), arrival_cmp);

  urtp_depay_t *d = new_depay(&cfg, pol, wait_kf);
  REQUIRE(d != NULL);
  sink_t s = { 0 };
  size_t reordered = 0, max_seen = 0;
  for (size_t i = 0; i < na; i++) {
    const dgram_t *dg = &dl->d[arr[i].pkt];
    reordered += arr[i].pkt < max_seen;
    if (arr[i].pkt > max_seen)
      max_seen = arr[i].pkt;
    urtp_depay_push(d, dg->p, dg->len);
    drain(d, &s);
  }
  urtp_depay_flush(d, true);
  drain(d, &s);
  CHECK(reordered > 0);
  CHECK(ndrop > 0);
  CHECK(ndup > 0);

  const urtp_depay_stats_t *st = urtp_depay_stats(d);
  CHECK_EQ(st->seq.lost, ndrop);
  CHECK_EQ(st->seq.duplicates, ndup);
  CHECK_EQ(st->seq.late, 0);
  CHECK_EQ(st->seq.resyncs, 0);
  CHECK_EQ(st->seq.delivered, np - ndrop);
  /* every packet delivered in order is used, or skipped as part of a NAL
   * unit already given up on */
  CHECK_EQ(st->packets + st->skipped, np - ndrop);
  CHECK_EQ(st->unsupported, 0);
  CHECK_EQ(st->malformed, 0);
  CHECK_EQ(st->foreign, 0);
  CHECK_EQ(st->oversize, 0);
  CHECK_EQ(st->aus, s.n);

  /* Walk the sent access units alongside the delivered ones (matched by
   * timestamp, which is unique per AU). */
  uint64_t base = 65536u + cfg.seq_start;
  size_t si = 0, vanished = 0, prev_last = SIZE_MAX;
  size_t must_missing = 0, wrong = 0, nal_total = 0;
  bool waiting = wait_kf;
  bool ok[MAX_NALS];
  bytes_t exp = { 0 };
  size_t expected_delivered = 0, expected_dropped = 0;
  for (size_t a = 0; a < n; a++) {
    const au_t *au = &aus[a];
    size_t lost = 0;
    for (size_t p = au->first_pkt; p < au->first_pkt + au->npkts; p++)
      lost += dropped[p];
    if (lost == au->npkts)
      vanished++;
    bool intact = lost == 0;
    bool prev_end_ok = a == 0 || !dropped[au->first_pkt - 1];
    intact_nals(au, dl, dropped, ok);
    size_t good = 0;
    for (size_t k = 0; k < au->n; k++)
      good += ok[k] && nal_usable(c, au->len[k]);

    /* What must happen (exact in DROP_INTERIOR mode, where every loss is
     * unambiguously inside one access unit). */
    bool deliver;
    if (wait_kf) {
      if (!intact)
        waiting = true;
      else if (au->keyframe)
        waiting = false;
      deliver = intact && !waiting;
    } else {
      deliver = pol == URTP_LOSS_DROP_AU ? intact : good > 0;
    }
    if (mode == DROP_INTERIOR) {
      expected_delivered += deliver;
      expected_dropped += !deliver;
    }

    /* In DROP_ANYWHERE mode a loss right before an access unit (the
     * previous one's last packet) may have been this one's head as far as
     * the depacketizer can tell: it may then drop or flag this one too. */
    bool ambiguous = mode == DROP_ANYWHERE && c != URTP_CODEC_OPUS && !prev_end_ok;
    const urtp_au_t *got = si < s.n && s.a[si].rtp_ts == au->ts ? &s.a[si] : NULL;
    if (!got) {
      if (mode == DROP_INTERIOR ? deliver : (intact && !ambiguous))
        must_missing++;
      continue;
    }
    si++;
    if (mode == DROP_INTERIOR && !deliver)
      wrong++;
    /* Byte-exact: the whole AU, or (DROP_NAL) its surviving NAL units. */
    if (c == URTP_CODEC_OPUS) {
      exp.n = 0;
      bytes_put(&exp, au->data.p, au->len[0]);
    } else if (pol == URTP_LOSS_DROP_AU || intact) {
      au_annexb(au, c, 4, NULL, &exp);
    } else if (mode == DROP_INTERIOR) {
      au_annexb(au, c, 4, ok, &exp);
    } else {
      /* Lost packets at AU edges may belong to a neighbour: the delivered
       * NAL units must be NAL units of this AU, in order. */
      urtp_nal_t out[MAX_NALS];
      size_t m = split(got->data, got->len, out, MAX_NALS), k = 0;
      CHECK(m <= MAX_NALS);
      for (size_t j = 0; j < m && j < MAX_NALS; j++) {
        while (k < au->n && !(au->len[k] == out[j].len &&
                              memcmp(au->data.p + au->off[k], out[j].data, out[j].len) == 0))
          k++;
        CHECK(k < au->n);
        k++;
      }
      CHECK_EQ(got->nal_count, m);
      CHECK(m > 0);
      nal_total += m;
      exp.n = 0;
    }
    if (exp.n) {
      CHECK_EQ(got->len, exp.n);
      if (got->len == exp.n)
        CHECK_MEM(got->data, exp.p, exp.n);
      if (c != URTP_CODEC_OPUS) {
        size_t cnt = pol == URTP_LOSS_DROP_AU || intact ? au_usable_nals(au, c) : good;
        CHECK_EQ(got->nal_count, cnt);
        nal_total += cnt;
      }
    }
    /* An AU that lost any packet (its first ones included, although the
     * depacketizer cannot tell them from whole AUs lost before it) must be
     * dropped under DROP_AU and flagged under DROP_NAL. */
    bool damaged = got->flags & URTP_AU_DAMAGED;
    if (!intact)
      CHECK(damaged);
    else if (!ambiguous)
      CHECK(!damaged);
    if (c != URTP_CODEC_OPUS && intact)
      CHECK_EQ(!!(got->flags & URTP_AU_KEYFRAME), au->keyframe);
    if (intact) {
      CHECK_EQ(got->first_seq, base + au->first_pkt);
      CHECK_EQ(got->last_seq, base + au->first_pkt + au->npkts - 1);
    }
    /* DISCONT: packets were lost since the previous delivered AU. */
    if (prev_last != SIZE_MAX) {
      bool gap = false;
      for (size_t p = prev_last + 1; p < au->first_pkt + au->npkts; p++)
        gap |= dropped[p];
      bool discont = got->flags & URTP_AU_DISCONT;
      if (gap && mode == DROP_ANYWHERE)
        CHECK(discont || damaged); /* a lost tail may flag the next AU instead */
      else if (gap)
        CHECK(discont);
      else if (!ambiguous)
        CHECK(!discont);
    }
    prev_last = au->first_pkt + au->npkts - 1;
  }
  bytes_free(&exp);
  CHECK_EQ(si, s.n);    /* nothing delivered out of order or invented */
  CHECK_EQ(must_missing, 0);
  CHECK_EQ(wrong, 0);
  if (mode == DROP_INTERIOR) {
    CHECK_EQ(s.n, expected_delivered);
    CHECK_EQ(st->dropped_aus, expected_dropped);
  } else {
    CHECK_EQ(s.n + st->dropped_aus + vanished, n);
  }
  if (c != URTP_CODEC_OPUS)
    CHECK_EQ(st->nals, nal_total);
  else
    CHECK_EQ(st->dropped_aus, 0);

  if (tap_cur_failed)
    printf("#   in impair_run(%s, %s, %s%s, seed %" PRIu64 ")\n", urtp_codec_name(c),
           pol == URTP_LOSS_DROP_AU ? "DROP_AU" : "DROP_NAL",
           mode == DROP_INTERIOR ? "interior losses" : "losses anywhere",
           wait_kf ? ", wait_for_keyframe" : "", seed);
  tap_cur_failed |= failed_before;
  free(arr);
  free(dropped);
  sink_free(&s);
  urtp_depay_free(d);
  pay_run_destroy(&r);
  free_aus(aus, n);
}

/* The first packet of an access unit is lost, right after the previous
 * one's marker: the depacketizer cannot tell it from a whole access unit
 * lost, so it must treat the access unit that follows as damaged (dropped
 * under DROP_AU, flagged under DROP_NAL) rather than deliver it without
 * its first NAL units as if it were whole. */
static void test_loss_at_au_start(void)
{
  for (size_t ci = 0; ci < 3; ci++) {
    urtp_codec_t c = video_codecs[ci];
    const nal_types_t *t = &TYPES[c];
    uint64_t rng = 5 + ci;
    au_t aus[3];
    memset(aus, 0, sizeof(aus));
    for (size_t i = 0; i < 3; i++) {
      aus[i].ts = 3000 * (uint32_t)i;
      au_add(&aus[i], c, t->aud, 1, &rng);          /* a packet of its own */
      au_add(&aus[i], c, i ? t->trail : t->idr, 3000, &rng); /* three FUs */
    }
    rt_cfg_t cfg = { .codec = c, .mtu = 1400, .seq_start = 7, .input = IN_NALS };
    pay_run_t r;
    pay_run_init(&r, &cfg);
    for (size_t i = 0; i < 3; i++)
      REQUIRE(packetize(&r, &aus[i], i));
    REQUIRE(aus[1].npkts == 4);
    for (int pol = 0; pol < 2; pol++) {
      urtp_depay_t *d = new_depay(&cfg, (urtp_loss_policy_t)pol, false);
      REQUIRE(d != NULL);
      sink_t s = { 0 };
      for (size_t i = 0; i < r.dl.n; i++) {
        if (i != aus[1].first_pkt)
          urtp_depay_push(d, r.dl.d[i].p, r.dl.d[i].len);
        drain(d, &s);
      }
      urtp_depay_flush(d, true);
      drain(d, &s);
      const urtp_depay_stats_t *st = urtp_depay_stats(d);
      CHECK_EQ(st->seq.lost, 1);
      bytes_t exp = { 0 };
      if (pol == URTP_LOSS_DROP_AU) {
        CHECK_EQ(s.n, 2);
        CHECK_EQ(st->dropped_aus, 1);
        if (s.n == 2) {
          CHECK_EQ(s.a[0].rtp_ts, aus[0].ts);
          CHECK_EQ(s.a[1].rtp_ts, aus[2].ts);
          CHECK(s.a[1].flags & URTP_AU_DISCONT);
          au_annexb(&aus[2], c, 4, NULL, &exp);
          CHECK_EQ(s.a[1].len, exp.n);
        }
      } else {
        CHECK_EQ(s.n, 3);
        CHECK_EQ(st->dropped_aus, 0);
        if (s.n == 3) {
          bool only[2] = { false, true };
          au_annexb(&aus[1], c, 4, only, &exp);
          CHECK_EQ(s.a[1].rtp_ts, aus[1].ts);
          CHECK_EQ(s.a[1].len, exp.n);
          if (s.a[1].len == exp.n)
            CHECK_MEM(s.a[1].data, exp.p, exp.n);
          CHECK_EQ(s.a[1].nal_count, 1);
          CHECK(s.a[1].flags & URTP_AU_DAMAGED);
          CHECK(s.a[1].flags & URTP_AU_DISCONT);
          CHECK_EQ(s.a[2].flags & (URTP_AU_DAMAGED | URTP_AU_DISCONT), 0);
        }
      }
      bytes_free(&exp);
      sink_free(&s);
      urtp_depay_free(d);
    }
    pay_run_destroy(&r);
    for (size_t i = 0; i < 3; i++)
      au_free(&aus[i]);
  }
}

static void test_impair_interior(void)
{
  for (size_t ci = 0; ci < 3; ci++) {
    for (int pol = 0; pol < 2; pol++)
      impair_run(video_codecs[ci], (urtp_loss_policy_t)pol, DROP_INTERIOR, false,
                 100 + 2 * ci + (size_t)pol);
  }
}

static void test_impair_anywhere(void)
{
  for (size_t ci = 0; ci < 3; ci++) {
    for (int pol = 0; pol < 2; pol++)
      impair_run(video_codecs[ci], (urtp_loss_policy_t)pol, DROP_ANYWHERE, false,
                 200 + 2 * ci + (size_t)pol);
  }
  impair_run(URTP_CODEC_OPUS, URTP_LOSS_DROP_AU, DROP_ANYWHERE, false, 300);
  impair_run(URTP_CODEC_OPUS, URTP_LOSS_DROP_NAL, DROP_ANYWHERE, false, 301);
}

static void test_impair_wait_keyframe(void)
{
  for (size_t ci = 0; ci < 3; ci++)
    impair_run(video_codecs[ci], URTP_LOSS_DROP_AU, DROP_INTERIOR, true, 400 + ci);
}

int main(void)
{
  TAP_RUN(test_streams);
  TAP_RUN(test_huge_nal);
  TAP_RUN(test_padded_fragments);
  TAP_RUN(test_tiny_nals);
  TAP_RUN(test_mtu_boundaries);
  TAP_RUN(test_start_codes);
  TAP_RUN(test_many_aus);
  TAP_RUN(test_opus);
  TAP_RUN(test_loss_at_au_start);
  TAP_RUN(test_impair_interior);
  TAP_RUN(test_impair_anywhere);
  TAP_RUN(test_impair_wait_keyframe);
  return tap_done();
}
