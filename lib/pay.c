/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/pay.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/bytes.h"
#include "urtp/rtp.h"
#include "urtp/scl.h"

#define RTP_HDR URTP_RTP_HDR_MIN

/* FU header: |S|E|...| then the type in the low bits (fu_type_mask). */
#define FU_S 0x80
#define FU_E 0x40

/*
 * Aggregation units are described by two iovecs each (size field, NAL unit).
 * Cap them so that a packet stays within the kernel's IOV_MAX (1024) for
 * sendmsg(); at a 1400-byte MTU the cap is never reached.
 */
#define AP_MAX_UNITS 511

int urtp_pay_init(urtp_pay_t *p, const urtp_pay_config_t *cfg)
{
  memset(p, 0, sizeof(*p));
  if (!cfg || cfg->codec > URTP_CODEC_OPUS || cfg->pt > 127)
    return -EINVAL;
  p->cfg = *cfg;
  if (p->cfg.mtu == 0)
    p->cfg.mtu = URTP_PAY_DEFAULT_MTU;
  if (p->cfg.mtu < URTP_PAY_MIN_MTU || p->cfg.mtu > 65535)
    return -EINVAL;
  p->desc = urtp_h26x_desc(cfg->codec);
  p->seq = cfg->seq_start;
  return 0;
}

void urtp_pay_destroy(urtp_pay_t *p)
{
  free(p->nals);
  p->nals = NULL;
  p->nals_cap = 0;
}

void urtp_pay_set_hdrext(urtp_pay_t *p, const urtp_hdrext_block_t *b, urtp_tw_counter_t *tw_next)
{
  p->ext = b;
  p->tw_next = tw_next;
}

void urtp_pay_set_csrcs(urtp_pay_t *p, const uint32_t *csrc, unsigned n)
{
  p->ncsrc = n > 15 ? 15 : n;
  if (p->ncsrc)
    memcpy(p->csrc, csrc, p->ncsrc * sizeof *csrc);
}

/* The header's length for the packets of this call: the extension block
 * may have changed since the last (MIN_PAYLOAD: room for a FU's headers
 * and a byte of payload at least). */
#define MIN_PAYLOAD 4
static int begin_call(urtp_pay_t *p)
{
  p->hlen = RTP_HDR + 4 * p->ncsrc + (p->ext ? p->ext->len : 0);
  return p->hlen + MIN_PAYLOAD > p->cfg.mtu ? -EMSGSIZE : 0;
}

/* Out of line: with no CSRC and no extension the fast path is a compare
 * more. */
static void write_ext(urtp_pay_t *p, uint8_t *h)
{
  uint8_t *x = h + RTP_HDR;
  if (p->ncsrc) {
    h[0] |= (uint8_t)p->ncsrc;  /* CC */
    for (unsigned i = 0; i < p->ncsrc; i++, x += 4)
      urtp_wr32(x, p->csrc[i]);
  }
  const urtp_hdrext_block_t *b = p->ext;
  if (!b || !b->len)
    return;
  h[0] |= 0x10;   /* X bit */
  memcpy(x, b->bytes, b->len);
  if (b->tw_off)
    urtp_wr16(x + b->tw_off,
              (uint16_t)atomic_fetch_add_explicit(p->tw_next, 1, memory_order_relaxed));
}

static inline void write_hdr(urtp_pay_t *p, uint8_t *h, bool marker, uint32_t ts)
{
  urtp_rtp_write_fixed(h, p->cfg.pt, marker, p->seq, ts, p->cfg.ssrc);
  if (p->hlen != RTP_HDR)
    write_ext(p, h);
}

static inline void *unconst(const void *ptr)
{
  return (void *)(uintptr_t)ptr;
}

/* Stores the packet whose iovecs the caller has put at out->iov + out->niov. */
static inline void commit(urtp_pay_t *p, urtp_batch_t *out, uint16_t niov, size_t len)
{
  urtp_batch_commit(out, niov, (uint16_t)len);
  p->seq++;
  p->packets++;
  p->bytes += len;
}

static int emit_single(urtp_pay_t *p, urtp_batch_t *out, const urtp_nal_t *nal, uint32_t ts,
                       bool marker)
{
  uint8_t *h = urtp_batch_arena_take(out, p->hlen);
  if (!h)
    return -ENOMEM;
  write_hdr(p, h, marker, ts);
  struct iovec *v = out->iov + out->niov;
  v[0].iov_base = h;
  v[0].iov_len = p->hlen;
  v[1].iov_base = unconst(nal->data);
  v[1].iov_len = nal->len;
  commit(p, out, 2, p->hlen + nal->len);
  return 0;
}

/* Padding is used only where a packet can give up 255 bytes of payload and
 * still carry a good deal, and where it costs at most 1/32 of the NAL unit. */
#define PAD_MIN_FRAG 1024
#define PAD_MAX_SHARE 32

/* How many of the last FUs of a NAL unit with `left` payload bytes carry RTP
 * padding so that every FU is frag_max + headers long (0: none), and the
 * padding in all: *shortfall. */
static size_t pad_plan(const urtp_pay_t *p, size_t nal_len, size_t left, size_t frag_max,
                       size_t *shortfall)
{
  size_t nfrag = (left + frag_max - 1) / frag_max;
  size_t d = nfrag * frag_max - left;
  *shortfall = d;
  if (!p->cfg.pad_fragments || d == 0 || frag_max < PAD_MIN_FRAG ||
      d > nal_len / PAD_MAX_SHARE)
    return 0;
  size_t m = (d + 254) / 255;
  return m < nfrag ? m : 0;
}

/* Fragments nal: the payload header and FU header are the same for every
 * fragment but for S/E/P, and all fragments but the last carry exactly
 * frag_max bytes, so that a run of them can go out as one GSO send. With a
 * padding plan (pad_plan()), the last npad fragments instead carry
 * frag_max - k bytes and k bytes of padding each, k = d / npad rounded up
 * for the first d % npad of them. */
static int emit_fu(urtp_pay_t *p, urtp_batch_t *out, const urtp_nal_t *nal, uint32_t ts,
                   bool marker, bool pbit, size_t frag_max, bool may_pad)
{
  const urtp_h26x_desc_t *d = p->desc;
  const size_t hl = d->hdr_len, rh = p->hlen, hdr = rh + hl + 1;
  uint8_t ind[2] = { 0, 0 };
  urtp_h26x_write_hdr(d, ind, nal->data, d->fu_type);
  const uint8_t fu_type = (uint8_t)(urtp_h26x_type(d, nal->data) & d->fu_type_mask);

  const uint8_t *src = nal->data + hl;
  size_t left = nal->len - hl;
  size_t shortfall = 0;
  size_t npad = may_pad ? pad_plan(p, nal->len, left, frag_max, &shortfall) : 0;
  size_t nfrag = (left + frag_max - 1) / frag_max;
  for (size_t i = 0; left; i++) {
    size_t pad = 0;
    if (npad && i >= nfrag - npad) {
      size_t j = i - (nfrag - npad);
      pad = shortfall / npad + (j < shortfall % npad ? 1 : 0);
    }
    size_t n = frag_max - pad;
    if (n > left)
      n = left;
    bool first = i == 0, last = n == left;
    uint8_t *h = urtp_batch_arena_take(out, hdr);
    if (!h)
      return -ENOMEM;
    write_hdr(p, h, marker && last, ts);
    h[rh] = ind[0];
    if (hl == 2)
      h[rh + 1] = ind[1];
    h[rh + hl] = (uint8_t)((first ? FU_S : 0) | (last ? FU_E : 0) |
                                (last && pbit ? d->fu_p_bit : 0) | fu_type);
    struct iovec *v = out->iov + out->niov;
    v[0].iov_base = h;
    v[0].iov_len = hdr;
    v[1].iov_base = unconst(src);
    v[1].iov_len = n;
    uint16_t niov = 2;
    if (pad) {
      uint8_t *t = urtp_batch_arena_take(out, pad);
      if (!t)
        return -ENOMEM;
      urtp_rtp_write_padding(t, (uint8_t)pad);
      h[0] |= 0x20;   /* P bit */
      v[2].iov_base = t;
      v[2].iov_len = pad;
      niov = 3;
      p->pad_bytes += pad;
    }
    commit(p, out, niov, hdr + n + pad);
    src += n;
    left -= n;
  }
  return 0;
}

static inline uint16_t hdr_word(const urtp_h26x_desc_t *d, const uint8_t *nal)
{
  return d->hdr_len == 2 ? (uint16_t)(nal[0] << 8 | nal[1]) : (uint16_t)(nal[0] << 8);
}

static inline uint16_t merge_min(uint16_t w, uint16_t x, uint16_t m)
{
  return (x & m) < (w & m) ? (uint16_t)((w & ~m) | (x & m)) : w;
}

/* Aggregates the k valid NAL units among nals[0..n) (payload bytes `size`
 * after the RTP header) into one packet. Each unit is preceded by its 16-bit
 * size; the size fields sit in the arena right after the payload header, the
 * first one sharing the header's iovec. */
static int emit_ap(urtp_pay_t *p, urtp_batch_t *out, const urtp_nal_t *nals, size_t n, size_t k,
                   size_t size, uint32_t ts, bool marker)
{
  const urtp_h26x_desc_t *d = p->desc;
  const size_t hl = d->hdr_len, rh = p->hlen;
  uint8_t *h = urtp_batch_arena_take(out, rh + hl + 2 * k);
  if (!h)
    return -ENOMEM;
  write_hdr(p, h, marker, ts);

  struct iovec *v = out->iov + out->niov;
  uint8_t *sz = h + rh + hl;
  uint16_t w = 0, niov = 0;
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    const urtp_nal_t *nal = &nals[i];
    if (nal->len < hl)
      continue;
    uint16_t x = hdr_word(d, nal->data);
    if (!any) {
      w = x;
      any = true;
    } else {
      w |= x & d->ap_or_mask;
      if ((x & d->ap_max_mask) > (w & d->ap_max_mask))
        w = (uint16_t)((w & ~d->ap_max_mask) | (x & d->ap_max_mask));
      w = merge_min(w, x, d->ap_min_mask[0]);
      w = merge_min(w, x, d->ap_min_mask[1]);
    }
    sz[0] = (uint8_t)(nal->len >> 8);
    sz[1] = (uint8_t)nal->len;
    if (niov == 0) {
      v[0].iov_base = h;
      v[0].iov_len = rh + hl + 2;
    } else {
      v[niov].iov_base = sz;
      v[niov].iov_len = 2;
    }
    v[niov + 1].iov_base = unconst(nal->data);
    v[niov + 1].iov_len = nal->len;
    niov += 2;
    sz += 2;
  }
  uint8_t tmpl[2] = { (uint8_t)(w >> 8), (uint8_t)w };
  urtp_h26x_write_hdr(d, h + rh, tmpl, d->ap_type);
  commit(p, out, niov, rh + size);
  return 0;
}

int urtp_pay_nals(urtp_pay_t *p, const urtp_nal_t *nals, size_t n, uint32_t ts, bool end_of_au,
                  urtp_batch_t *out)
{
  const urtp_h26x_desc_t *d = p->desc;
  if (!d)
    return -EINVAL;
  int r = begin_call(p);
  if (r < 0)
    return r;
  const size_t hl = d->hdr_len;
  const size_t room = p->cfg.mtu - p->hlen;     /* payload bytes per packet */
  const size_t frag_max = room - hl - 1;

  /* First pass: an upper bound on packets (so that one reservation covers
   * the call), the last NAL unit (marker) and the last VCL one (P bit). */
  size_t bound = 0, last = SIZE_MAX, last_vcl = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    size_t len = nals[i].len;
    if (len < hl)
      continue;
    last = i;
    if (urtp_h26x_is_vcl(d, urtp_h26x_type(d, nals[i].data)))
      last_vcl = i;
    bound += len <= room ? 1 : (len - hl + frag_max - 1) / frag_max;
  }
  if (bound == 0)
    return 0;
  /* two iovecs per packet, three for a padded FU */
  if (bound > INT32_MAX || urtp_batch_reserve(out, bound, 3 * bound))
    return -ENOMEM;

  const size_t npkts0 = out->npkts, niov0 = out->niov;
  const uint16_t seq0 = p->seq;
  const uint64_t packets0 = p->packets, bytes0 = p->bytes, pad0 = p->pad_bytes;
  int err = 0;
  for (size_t i = 0; i <= last && !err;) {
    const urtp_nal_t *nal = &nals[i];
    if (nal->len < hl) {
      i++;
      continue;
    }
    if (nal->len > room) {
      bool pbit = end_of_au && i == last_vcl;
      /* the last NAL unit of the call: no packet of ours follows to share
       * its GSO send, so padding would buy nothing */
      err = emit_fu(p, out, nal, ts, end_of_au && i == last, pbit, frag_max, i != last);
      i++;
      continue;
    }
    if (p->cfg.aggregate) {
      /* Greedily take the following units while they fit. */
      size_t k = 1, size = hl + 2 + nal->len, end = i + 1;
      for (size_t j = i + 1; j <= last && k < AP_MAX_UNITS; j++) {
        size_t len = nals[j].len;
        if (len < hl)
          continue;
        if (size + 2 + len > room)
          break;
        size += 2 + len;
        k++;
        end = j + 1;
      }
      if (k >= 2) {
        err = emit_ap(p, out, nal, end - i, k, size, ts, end_of_au && end - 1 == last);
        i = end;
        continue;
      }
    }
    err = emit_single(p, out, nal, ts, end_of_au && i == last);
    i++;
  }
  if (err) {
    /* Out of arena memory: take back what this call appended. */
    out->npkts = npkts0;
    out->niov = niov0;
    p->seq = seq0;
    p->packets = packets0;
    p->bytes = bytes0;
    p->pad_bytes = pad0;
    return err;
  }
  return (int)(out->npkts - npkts0);
}

int urtp_pay_annexb(urtp_pay_t *p, const uint8_t *buf, size_t len, uint32_t ts, bool end_of_au,
                    urtp_batch_t *out)
{
  size_t n = urtp_scl_split(buf, len, p->nals, p->nals_cap);
  if (n > p->nals_cap) {
    size_t cap = p->nals_cap ? p->nals_cap : 16;
    while (cap < n)
      cap *= 2;
    urtp_nal_t *nals = realloc(p->nals, cap * sizeof(*nals));
    if (!nals)
      return -ENOMEM;
    p->nals = nals;
    p->nals_cap = cap;
    n = urtp_scl_split(buf, len, p->nals, p->nals_cap);
  }
  return urtp_pay_nals(p, p->nals, n, ts, end_of_au, out);
}

int urtp_pay_frame(urtp_pay_t *p, const uint8_t *data, size_t len, uint32_t ts, bool marker,
                   urtp_batch_t *out)
{
  if (begin_call(p) < 0 || len > p->cfg.mtu - p->hlen)
    return -EMSGSIZE;
  if (urtp_batch_reserve(out, 1, 2))
    return -ENOMEM;
  uint8_t *h = urtp_batch_arena_take(out, p->hlen);
  if (!h)
    return -ENOMEM;
  write_hdr(p, h, marker, ts);
  struct iovec *v = out->iov + out->niov;
  v[0].iov_base = h;
  v[0].iov_len = p->hlen;
  uint16_t niov = 1;
  if (len) {
    v[1].iov_base = unconst(data);
    v[1].iov_len = len;
    niov = 2;
  }
  commit(p, out, niov, p->hlen + len);
  return 1;
}
