/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/rtcp.h"
#include "urtp/bytes.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#define NS 1000000000ull

/* --- NTP ------------------------------------------------------------------- */

uint64_t urtp_ntp_from_unix_ns(uint64_t unix_ns)
{
  return urtp_ntp_from_ns(unix_ns + URTP_NTP_UNIX_OFFSET * NS);
}

uint64_t urtp_ntp_from_ns(uint64_t ns)
{
  uint64_t sec = ns / NS, rem = ns % NS;
  /* the fraction rounded to nearest: rem * 2^32 / 1e9 */
  uint64_t frac = ((rem << 32) + NS / 2) / NS;
  if (frac >> 32) {
    sec++;
    frac = 0;
  }
  return sec << 32 | frac;
}

uint64_t urtp_ntp_to_ns(uint64_t ntp)
{
  uint64_t sec = ntp >> 32, frac = ntp & 0xffffffffu;
  return sec * NS + ((frac * NS + (1ull << 31)) >> 32);
}

uint64_t urtp_ntp_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return urtp_ntp_from_unix_ns((uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec);
}

uint32_t urtp_ntp_short_from_ns(uint64_t ns)
{
  /* 65536 units a second: saturates after 18 hours */
  if (ns >= 65536ull * NS)
    return UINT32_MAX;
  return (uint32_t)((ns * 65536 + NS / 2) / NS);
}

uint64_t urtp_ntp_short_to_ns(uint32_t v)
{
  return ((uint64_t)v * NS + 32768) / 65536;
}

/* --- building -------------------------------------------------------------- */

void urtp_rtcp_writer_init(urtp_rtcp_writer_t *w, uint8_t *buf, size_t cap)
{
  w->buf = buf;
  w->cap = cap;
  w->len = 0;
  w->err = 0;
}

/* Room for a packet of len bytes (a multiple of 4, at most 65536 * 4):
 * its header written, the rest to fill; NULL (and the error kept) if it
 * does not fit or an earlier write failed. */
static uint8_t *begin(urtp_rtcp_writer_t *w, uint8_t count, uint8_t type, size_t len)
{
  if (w->err)
    return NULL;
  if (w->cap < w->len || len > w->cap - w->len) {
    w->err = -ENOSPC;
    return NULL;
  }
  uint8_t *p = w->buf + w->len;
  p[0] = (uint8_t)(2 << 6 | (count & 0x1f));
  p[1] = type;
  urtp_wr16(p + 2, (uint16_t)(len / 4 - 1));
  w->len += len;
  return p;
}

static int fail(urtp_rtcp_writer_t *w, int e)
{
  if (!w->err)
    w->err = e;
  return e;
}

static void put_block(uint8_t *p, const urtp_rtcp_block_t *b)
{
  /* cumulative loss is a 24-bit signed number: clamped to its range */
  int32_t lost = b->lost > 0x7fffff ? 0x7fffff : b->lost < -0x800000 ? -0x800000 : b->lost;
  urtp_wr32(p, b->ssrc);
  urtp_wr32(p + 4, (uint32_t)b->fraction << 24 | ((uint32_t)lost & 0xffffff));
  urtp_wr32(p + 8, b->ext_max_seq);
  urtp_wr32(p + 12, b->jitter);
  urtp_wr32(p + 16, b->lsr);
  urtp_wr32(p + 20, b->dlsr);
}

int urtp_rtcp_write_sr(urtp_rtcp_writer_t *w, const urtp_rtcp_sr_t *sr,
                       const urtp_rtcp_block_t *blocks, unsigned n)
{
  if (n > URTP_RTCP_MAX_BLOCKS)
    return fail(w, -EINVAL);
  uint8_t *p = begin(w, (uint8_t)n, URTP_RTCP_SR, 28 + 24 * (size_t)n);
  if (!p)
    return w->err;
  urtp_wr32(p + 4, sr->ssrc);
  urtp_wr32(p + 8, (uint32_t)(sr->ntp >> 32));
  urtp_wr32(p + 12, (uint32_t)sr->ntp);
  urtp_wr32(p + 16, sr->rtp_ts);
  urtp_wr32(p + 20, sr->packets);
  urtp_wr32(p + 24, sr->octets);
  for (unsigned i = 0; i < n; i++)
    put_block(p + 28 + 24 * i, &blocks[i]);
  return 0;
}

int urtp_rtcp_write_rr(urtp_rtcp_writer_t *w, uint32_t ssrc, const urtp_rtcp_block_t *blocks,
                       unsigned n)
{
  if (n > URTP_RTCP_MAX_BLOCKS)
    return fail(w, -EINVAL);
  uint8_t *p = begin(w, (uint8_t)n, URTP_RTCP_RR, 8 + 24 * (size_t)n);
  if (!p)
    return w->err;
  urtp_wr32(p + 4, ssrc);
  for (unsigned i = 0; i < n; i++)
    put_block(p + 8 + 24 * i, &blocks[i]);
  return 0;
}

int urtp_rtcp_write_sdes_cname(urtp_rtcp_writer_t *w, uint32_t ssrc, const char *cname)
{
  size_t n = cname ? strlen(cname) : 0;
  if (n > URTP_RTCP_MAX_TEXT)
    return fail(w, -EINVAL);
  /* header, SSRC, item (type, length, text), then at least one null
   * octet ending the item list, up to the next 32-bit boundary */
  size_t body = 4 + 2 + n + 1;
  size_t len = 4 + ((body + 3) & ~(size_t)3);
  uint8_t *p = begin(w, 1, URTP_RTCP_SDES, len);
  if (!p)
    return w->err;
  urtp_wr32(p + 4, ssrc);
  p[8] = URTP_RTCP_SDES_CNAME;
  p[9] = (uint8_t)n;
  if (n)
    memcpy(p + 10, cname, n);
  memset(p + 10 + n, 0, len - 10 - n);
  return 0;
}

int urtp_rtcp_write_bye(urtp_rtcp_writer_t *w, const uint32_t *ssrcs, unsigned n,
                        const char *reason)
{
  size_t rl = reason ? strlen(reason) : 0;
  if (n > URTP_RTCP_MAX_BLOCKS || rl > URTP_RTCP_MAX_TEXT)
    return fail(w, -EINVAL);
  size_t len = 4 + 4 * (size_t)n;
  if (reason)
    len += (1 + rl + 3) & ~(size_t)3;
  uint8_t *p = begin(w, (uint8_t)n, URTP_RTCP_BYE, len);
  if (!p)
    return w->err;
  for (unsigned i = 0; i < n; i++)
    urtp_wr32(p + 4 + 4 * i, ssrcs[i]);
  if (reason) {
    uint8_t *r = p + 4 + 4 * n;
    r[0] = (uint8_t)rl;
    memcpy(r + 1, reason, rl);
    memset(r + 1 + rl, 0, (size_t)(p + len - (r + 1 + rl)));
  }
  return 0;
}

int urtp_rtcp_write_app(urtp_rtcp_writer_t *w, const urtp_rtcp_app_t *app)
{
  /* the length field counts 32-bit words minus one: at most 65536 */
  if (app->subtype > 31 || app->len % 4 || app->len > 65536 * 4 - 12)
    return fail(w, -EINVAL);
  uint8_t *p = begin(w, app->subtype, URTP_RTCP_APP, 12 + app->len);
  if (!p)
    return w->err;
  urtp_wr32(p + 4, app->ssrc);
  memcpy(p + 8, app->name, 4);
  if (app->len)
    memcpy(p + 12, app->data, app->len);
  return 0;
}

/* --- feedback ------------------------------------------------------------- */

/* b after a, RFC 1982 */
static bool seq_after(uint16_t b, uint16_t a)
{
  return (uint16_t)(b - a) != 0 && (uint16_t)(b - a) < 0x8000;
}

/* The PID/BLP pairs of ascending seqs: how many, or 0 if out of order. */
static unsigned nack_pairs(const uint16_t *seqs, unsigned n)
{
  unsigned pairs = 1;
  uint16_t pid = seqs[0];
  for (unsigned i = 1; i < n; i++) {
    if (seqs[i] == seqs[i - 1])
      continue;
    if (!seq_after(seqs[i], seqs[i - 1]))
      return 0;
    if ((uint16_t)(seqs[i] - pid) > 16) {
      pid = seqs[i];
      pairs++;
    }
  }
  return pairs;
}

static uint8_t *begin_fb(urtp_rtcp_writer_t *w, uint8_t fmt, uint8_t type, size_t len,
                         uint32_t sender_ssrc, uint32_t media_ssrc)
{
  uint8_t *p = begin(w, fmt, type, len);
  if (p) {
    urtp_wr32(p + 4, sender_ssrc);
    urtp_wr32(p + 8, media_ssrc);
  }
  return p;
}

int urtp_rtcp_write_nack(urtp_rtcp_writer_t *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                         const uint16_t *seqs, unsigned n)
{
  unsigned pairs = n ? nack_pairs(seqs, n) : 0;
  if (!pairs || pairs > URTP_RTCP_MAX_NACK_PAIRS)
    return fail(w, -EINVAL);
  uint8_t *p = begin_fb(w, URTP_RTCP_FMT_NACK, URTP_RTCP_RTPFB, 12 + 4 * (size_t)pairs,
                        sender_ssrc, media_ssrc);
  if (!p)
    return w->err;
  uint8_t *f = p + 12;
  uint16_t pid = seqs[0], blp = 0;
  for (unsigned i = 1; i <= n; i++) {
    if (i < n && (uint16_t)(seqs[i] - pid) <= 16) {
      if (seqs[i] != pid)
        blp |= (uint16_t)(1u << ((uint16_t)(seqs[i] - pid) - 1));
      continue;
    }
    urtp_wr16(f, pid);
    urtp_wr16(f + 2, blp);
    f += 4;
    if (i < n) {
      pid = seqs[i];
      blp = 0;
    }
  }
  return 0;
}

int urtp_rtcp_write_pli(urtp_rtcp_writer_t *w, uint32_t sender_ssrc, uint32_t media_ssrc)
{
  return begin_fb(w, URTP_RTCP_FMT_PLI, URTP_RTCP_PSFB, 12, sender_ssrc, media_ssrc) ? 0
                                                                                     : w->err;
}

int urtp_rtcp_write_fir(urtp_rtcp_writer_t *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                        uint8_t seq)
{
  /* RFC 5104 4.3.1.2: the header's media source is 0, the FCI names it */
  uint8_t *p = begin_fb(w, URTP_RTCP_FMT_FIR, URTP_RTCP_PSFB, 20, sender_ssrc, 0);
  if (!p)
    return w->err;
  urtp_wr32(p + 12, media_ssrc);
  p[16] = seq;
  p[17] = p[18] = p[19] = 0;
  return 0;
}

int urtp_rtcp_nack_seqs(const urtp_rtcp_fb_t *fb, uint16_t *seqs, unsigned cap,
                        unsigned *more)
{
  if (fb->fci_len == 0 || fb->fci_len % 4)
    return -EBADMSG;
  unsigned n = 0, extra = 0;
  for (size_t off = 0; off < fb->fci_len; off += 4) {
    uint16_t pid = urtp_rd16(fb->fci + off), blp = urtp_rd16(fb->fci + off + 2);
    for (unsigned bit = 0; bit <= 16; bit++) {
      if (bit && !(blp & (1u << (bit - 1))))
        continue;
      if (n < cap)
        seqs[n++] = (uint16_t)(pid + bit);
      else
        extra++;
    }
  }
  if (more)
    *more = extra;
  return (int)n;
}

int urtp_rtcp_fir_count(const urtp_rtcp_fb_t *fb)
{
  return fb->fci_len % 8 ? -EBADMSG : (int)(fb->fci_len / 8);
}

void urtp_rtcp_fir_entry(const urtp_rtcp_fb_t *fb, unsigned i, uint32_t *ssrc, uint8_t *seq)
{
  *ssrc = urtp_rd32(fb->fci + 8 * (size_t)i);
  *seq = fb->fci[8 * (size_t)i + 4];
}

/* --- parsing --------------------------------------------------------------- */

void urtp_rtcp_iter_init(urtp_rtcp_iter_t *it, const uint8_t *buf, size_t len)
{
  it->p = buf;
  it->left = len;
}

/* The packet at p (left bytes): its length with padding, or 0 if invalid.
 * *pad gets the padding count. */
static size_t packet_len(const uint8_t *p, size_t left, size_t *pad)
{
  if (left < 4 || (p[0] >> 6) != 2)
    return 0;
  size_t len = ((size_t)urtp_rd16(p + 2) + 1) * 4;
  if (len > left)
    return 0;
  *pad = 0;
  if (p[0] & 0x20) {
    /* the last octet counts the padding, itself included; never into
     * the header */
    size_t n = p[len - 1];
    if (n == 0 || n > len - 4)
      return 0;
    *pad = n;
  }
  return len;
}

int urtp_rtcp_next(urtp_rtcp_iter_t *it, urtp_rtcp_pkt_t *pkt)
{
  if (it->left == 0)
    return 0;
  size_t pad;
  size_t len = packet_len(it->p, it->left, &pad);
  if (!len) {
    it->left = 0;
    return -EBADMSG;
  }
  pkt->type = it->p[1];
  pkt->count = it->p[0] & 0x1f;
  pkt->data = it->p;
  pkt->len = len - pad;
  it->p += len;
  it->left -= len;
  return 1;
}

int urtp_rtcp_check(const uint8_t *buf, size_t len, unsigned flags)
{
  if (len < 4)
    return -EBADMSG;
  /* A.2: the first packet is an SR or an RR (RFC 5506 lifts this) */
  if (!(flags & URTP_RTCP_REDUCED_SIZE) && buf[1] != URTP_RTCP_SR && buf[1] != URTP_RTCP_RR)
    return -EBADMSG;
  urtp_rtcp_iter_t it;
  urtp_rtcp_pkt_t p;
  int r;
  urtp_rtcp_iter_init(&it, buf, len);
  while ((r = urtp_rtcp_next(&it, &p)) == 1) {
    /* padding only on the last packet (so a compound of one may have it) */
    if ((p.data[0] & 0x20) && it.left)
      return -EBADMSG;
  }
  return r < 0 ? -EBADMSG : 0;
}

int urtp_rtcp_parse_report(const urtp_rtcp_pkt_t *p, uint32_t *ssrc, unsigned *nblocks)
{
  size_t head = p->type == URTP_RTCP_SR ? 28 : p->type == URTP_RTCP_RR ? 8 : 0;
  if (!head || p->len < head + 24 * (size_t)p->count)
    return -EBADMSG;
  *ssrc = urtp_rd32(p->data + 4);
  *nblocks = p->count;
  return 0;
}

int urtp_rtcp_parse_sr(const urtp_rtcp_pkt_t *p, urtp_rtcp_sr_t *sr)
{
  uint32_t ssrc;
  unsigned n;
  if (p->type != URTP_RTCP_SR || urtp_rtcp_parse_report(p, &ssrc, &n) < 0)
    return -EBADMSG;
  const uint8_t *d = p->data;
  sr->ssrc = ssrc;
  sr->ntp = (uint64_t)urtp_rd32(d + 8) << 32 | urtp_rd32(d + 12);
  sr->rtp_ts = urtp_rd32(d + 16);
  sr->packets = urtp_rd32(d + 20);
  sr->octets = urtp_rd32(d + 24);
  return 0;
}

int urtp_rtcp_block(const urtp_rtcp_pkt_t *p, unsigned i, urtp_rtcp_block_t *b)
{
  uint32_t ssrc;
  unsigned n;
  if (urtp_rtcp_parse_report(p, &ssrc, &n) < 0 || i >= n)
    return -EBADMSG;
  const uint8_t *d = p->data + (p->type == URTP_RTCP_SR ? 28 : 8) + 24 * (size_t)i;
  uint32_t fl = urtp_rd32(d + 4);
  b->ssrc = urtp_rd32(d);
  b->fraction = (uint8_t)(fl >> 24);
  /* sign-extend the 24-bit count */
  b->lost = (int32_t)((fl & 0xffffff) ^ 0x800000) - 0x800000;
  b->ext_max_seq = urtp_rd32(d + 8);
  b->jitter = urtp_rd32(d + 12);
  b->lsr = urtp_rd32(d + 16);
  b->dlsr = urtp_rd32(d + 20);
  return 0;
}

void urtp_rtcp_sdes_iter_init(urtp_rtcp_sdes_iter_t *it, const urtp_rtcp_pkt_t *p)
{
  memset(it, 0, sizeof(*it));
  it->p = p;
  it->off = 4;
}

int urtp_rtcp_sdes_next(urtp_rtcp_sdes_iter_t *it, urtp_rtcp_sdes_item_t *item)
{
  const urtp_rtcp_pkt_t *p = it->p;
  if (p->type != URTP_RTCP_SDES)
    return -EBADMSG;
  for (;;) {
    if (!it->in_chunk) {
      if (it->chunks == p->count)
        return 0;
      if (p->len < 4 || it->off > p->len - 4)
        return -EBADMSG;
      it->ssrc = urtp_rd32(p->data + it->off);
      it->off += 4;
      it->chunks++;
      it->in_chunk = true;
    }
    if (it->off >= p->len)
      return -EBADMSG;
    uint8_t type = p->data[it->off];
    if (type == URTP_RTCP_SDES_END) {
      /* the list ends; the chunk is padded to the next 32-bit boundary
       * (the chunk starts at one, and so does the packet) */
      it->off = (it->off + 4) & ~(size_t)3;
      if (it->off > p->len)
        return -EBADMSG;
      it->in_chunk = false;
      continue;
    }
    if (p->len - it->off < 2 || p->len - it->off - 2 < p->data[it->off + 1])
      return -EBADMSG;
    item->ssrc = it->ssrc;
    item->type = type;
    item->len = p->data[it->off + 1];
    item->value = p->data + it->off + 2;
    it->off += 2 + (size_t)item->len;
    return 1;
  }
}

int urtp_rtcp_bye_ssrc(const urtp_rtcp_pkt_t *p, unsigned i, uint32_t *ssrc)
{
  if (p->type != URTP_RTCP_BYE || i >= p->count || p->len < 4 + 4 * (size_t)p->count)
    return -EBADMSG;
  *ssrc = urtp_rd32(p->data + 4 + 4 * (size_t)i);
  return 0;
}

int urtp_rtcp_bye_reason(const urtp_rtcp_pkt_t *p, const uint8_t **reason, size_t *len)
{
  size_t off = 4 + 4 * (size_t)p->count;
  if (p->type != URTP_RTCP_BYE || p->len < off)
    return -EBADMSG;
  *reason = NULL;
  *len = 0;
  if (p->len == off)
    return 0;
  size_t n = p->data[off];
  if (n > p->len - off - 1)
    return -EBADMSG;
  *reason = p->data + off + 1;
  *len = n;
  return 0;
}

int urtp_rtcp_parse_app(const urtp_rtcp_pkt_t *p, urtp_rtcp_app_t *app)
{
  if (p->type != URTP_RTCP_APP || p->len < 12)
    return -EBADMSG;
  app->subtype = p->count;
  app->ssrc = urtp_rd32(p->data + 4);
  memcpy(app->name, p->data + 8, 4);
  app->data = p->data + 12;
  /* as held (padding excluded); a sender's data is a multiple of 4 */
  app->len = p->len - 12;
  return 0;
}

int urtp_rtcp_parse_fb(const urtp_rtcp_pkt_t *p, urtp_rtcp_fb_t *fb)
{
  if ((p->type != URTP_RTCP_RTPFB && p->type != URTP_RTCP_PSFB) || p->len < 12)
    return -EBADMSG;
  fb->fmt = p->count;
  fb->sender_ssrc = urtp_rd32(p->data + 4);
  fb->media_ssrc = urtp_rd32(p->data + 8);
  fb->fci = p->data + 12;
  fb->fci_len = p->len - 12;
  return 0;
}

/* --- a compound packet at once --------------------------------------------- */

static void parse_report(const urtp_rtcp_pkt_t *p, urtp_rtcp_info_t *out)
{
  uint32_t ssrc;
  unsigned n;
  if (urtp_rtcp_parse_report(p, &ssrc, &n) < 0) {
    out->malformed++;
    return;
  }
  if (out->nreports == URTP_RTCP_INFO_REPORTS) {
    /* its blocks go with it: a block without its reporter says little */
    out->truncated += 1 + n;
    return;
  }
  urtp_rtcp_report_t *r = &out->reports[out->nreports++];
  r->is_sr = p->type == URTP_RTCP_SR;
  if (r->is_sr)
    urtp_rtcp_parse_sr(p, &r->sr);
  else
    r->sr.ssrc = ssrc;
  r->first_block = out->nblocks;
  for (unsigned i = 0; i < n; i++) {
    if (out->nblocks == URTP_RTCP_INFO_BLOCKS) {
      out->truncated += n - i;
      break;
    }
    urtp_rtcp_block(p, i, &out->blocks[out->nblocks++]);
    r->nblocks++;
  }
}

static void parse_sdes(const urtp_rtcp_pkt_t *p, urtp_rtcp_info_t *out)
{
  urtp_rtcp_sdes_iter_t it;
  urtp_rtcp_sdes_item_t item;
  int r;
  urtp_rtcp_sdes_iter_init(&it, p);
  /* items before a fault are kept: they were within the packet */
  while ((r = urtp_rtcp_sdes_next(&it, &item)) == 1) {
    if (item.type != URTP_RTCP_SDES_CNAME) {
      out->sdes_other++;
    } else if (out->ncnames == URTP_RTCP_INFO_CNAMES) {
      out->truncated++;
    } else {
      urtp_rtcp_cname_t *c = &out->cnames[out->ncnames++];
      c->ssrc = item.ssrc;
      c->len = item.len;
      c->value = item.value;
    }
  }
  if (r < 0)
    out->malformed++;
}

static void parse_bye(const urtp_rtcp_pkt_t *p, urtp_rtcp_info_t *out)
{
  const uint8_t *reason;
  size_t rlen;
  if (urtp_rtcp_bye_reason(p, &reason, &rlen) < 0) {
    out->malformed++;
    return;
  }
  out->bye = true;
  for (unsigned i = 0; i < p->count; i++) {
    if (out->nbyes == URTP_RTCP_INFO_BYES) {
      out->truncated += p->count - i;
      break;
    }
    urtp_rtcp_bye_ssrc(p, i, &out->byes[out->nbyes++]);
  }
  if (reason && !out->bye_reason) {
    out->bye_reason = reason;
    out->bye_reason_len = (uint8_t)rlen;
  }
}

int urtp_rtcp_parse(const uint8_t *buf, size_t len, unsigned flags, urtp_rtcp_info_t *out)
{
  memset(out, 0, sizeof(*out));
  if (urtp_rtcp_check(buf, len, flags) < 0)
    return -EBADMSG;
  urtp_rtcp_iter_t it;
  urtp_rtcp_pkt_t p;
  urtp_rtcp_iter_init(&it, buf, len);
  while (urtp_rtcp_next(&it, &p) == 1) {
    out->packets++;
    switch (p.type) {
    case URTP_RTCP_SR:
    case URTP_RTCP_RR:
      parse_report(&p, out);
      break;
    case URTP_RTCP_SDES:
      parse_sdes(&p, out);
      break;
    case URTP_RTCP_BYE:
      parse_bye(&p, out);
      break;
    case URTP_RTCP_APP:
      if (out->napps == URTP_RTCP_INFO_APPS)
        out->truncated++;
      else if (urtp_rtcp_parse_app(&p, &out->apps[out->napps]) == 0)
        out->napps++;
      else
        out->malformed++;
      break;
    case URTP_RTCP_RTPFB:
    case URTP_RTCP_PSFB:
      out->feedback++;
      break;
    default:
      out->other++;
      break;
    }
  }
  return 0;
}

/* --- reception statistics -------------------------------------------------- */

#define MAX_DROPOUT 3000        /* A.1: a larger step forward is a jump */
#define MAX_MISORDER 100        /* A.1: a step back this small is reordering */
#define SEQ_MOD 65536u

/* A.1's init_seq: counting starts at seq. */
static void rx_restart(urtp_rtcp_rx_t *rx, uint16_t seq)
{
  rx->base_seq = seq;
  rx->max_seq = seq;
  rx->bad_seq = SEQ_MOD + 1;  /* matches no sequence number */
  rx->cycles = 0;
  rx->received = 0;
  rx->expected_prior = 0;
  rx->received_prior = 0;
  /* a restarted sender's timestamps start anywhere: no transit to compare */
  rx->have_transit = false;
}

void urtp_rtcp_rx_init(urtp_rtcp_rx_t *rx, uint32_t ssrc, uint16_t seq, uint32_t clock_rate)
{
  memset(rx, 0, sizeof(*rx));
  rx->ssrc = ssrc;
  rx->clock_rate = clock_rate ? clock_rate : 90000;
  rx_restart(rx, seq);
}

/* An arrival in timestamp units, rounded down, modulo 2^32 as RTP
 * timestamps are (only differences count, so any clock origin will do):
 * whole seconds and the rest apart, so that no product overflows. */
static uint32_t arrival_ts(const urtp_rtcp_rx_t *rx, uint64_t arrival)
{
  uint64_t sec = arrival / NS, rem = arrival % NS;
  return (uint32_t)(sec * rx->clock_rate + rem * rx->clock_rate / NS);
}

bool urtp_rtcp_rx_update(urtp_rtcp_rx_t *rx, uint16_t seq, uint32_t rtp_ts, uint64_t arrival,
                         size_t payload_len)
{
  uint16_t udelta = (uint16_t)(seq - rx->max_seq);
  if (udelta < MAX_DROPOUT) {
    /* in order, with a permissible gap */
    if (seq < rx->max_seq)
      rx->cycles += SEQ_MOD;
    rx->max_seq = seq;
  } else if (udelta <= SEQ_MOD - MAX_MISORDER) {
    /* a jump: believed once the next packet follows it */
    if (seq != rx->bad_seq) {
      rx->bad_seq = (uint16_t)(seq + 1);
      return false;
    }
    rx_restart(rx, seq);
  }
  /* else a duplicate or reordered packet: counted, max_seq stays */
  rx->received++;
  rx->octets += payload_len;

  /* A.8: D is the change in transit time between consecutive arrivals,
   * J += (|D| - J) / 16, kept times 16 in integers */
  uint32_t transit = arrival_ts(rx, arrival) - rtp_ts;
  if (rx->have_transit) {
    int32_t d = (int32_t)(transit - rx->transit);
    uint64_t ad = d < 0 ? (uint64_t)(-(int64_t)d) : (uint64_t)d;
    rx->jitter16 += ad - ((rx->jitter16 + 8) >> 4);
  }
  rx->transit = transit;
  rx->have_transit = true;
  rx->last_arrival = arrival;
  return true;
}

/* The block without the fraction; *expected: A.3's expected. */
static void fill_block(const urtp_rtcp_rx_t *rx, urtp_rtcp_block_t *b, uint64_t *expected)
{
  uint64_t ext_max = (uint64_t)rx->cycles + rx->max_seq;
  uint64_t exp = ext_max + 1 - rx->base_seq;
  int64_t lost = (int64_t)exp - (int64_t)rx->received;
  memset(b, 0, sizeof(*b));
  b->ssrc = rx->ssrc;
  /* 24 bits signed on the wire: clamped, not wrapped (A.3) */
  b->lost = lost > 0x7fffff ? 0x7fffff : lost < -0x800000 ? -0x800000 : (int32_t)lost;
  b->ext_max_seq = (uint32_t)ext_max;
  b->jitter = rx->jitter16 >> 4 > UINT32_MAX ? UINT32_MAX : (uint32_t)(rx->jitter16 >> 4);
  *expected = exp;
}

/* A.3: the fraction lost since the interval began; 0 when packets
 * arrived beyond those expected (duplicates). */
static uint8_t fraction(const urtp_rtcp_rx_t *rx, uint64_t expected)
{
  int64_t exp_int = (int64_t)(expected - rx->expected_prior);
  int64_t rcv_int = (int64_t)(rx->received - rx->received_prior);
  int64_t lost_int = exp_int - rcv_int;
  if (exp_int <= 0 || lost_int <= 0)
    return 0;
  return (uint8_t)(((uint64_t)lost_int << 8) / (uint64_t)exp_int);
}

void urtp_rtcp_rx_peek(const urtp_rtcp_rx_t *rx, urtp_rtcp_block_t *b)
{
  uint64_t exp;
  fill_block(rx, b, &exp);
  b->fraction = fraction(rx, exp);
}

void urtp_rtcp_rx_block(urtp_rtcp_rx_t *rx, urtp_rtcp_block_t *b)
{
  uint64_t exp;
  fill_block(rx, b, &exp);
  b->fraction = fraction(rx, exp);
  rx->expected_prior = exp;
  rx->received_prior = rx->received;
}

void urtp_rtcp_block_set_lsr(urtp_rtcp_block_t *b, uint64_t sr_ntp, uint64_t sr_arrival,
                             uint64_t now)
{
  b->lsr = urtp_ntp_mid32(sr_ntp);
  b->dlsr = urtp_ntp_short_from_ns(now > sr_arrival ? now - sr_arrival : 0);
}

int64_t urtp_rtcp_rtt(uint64_t arrival_ntp, uint32_t lsr, uint32_t dlsr)
{
  if (lsr == 0)
    return -1;
  /* 6.4.1: A - LSR - DLSR in 1/65536 s, modulo 2^32 */
  int32_t rtt = (int32_t)(urtp_ntp_mid32(arrival_ntp) - lsr - dlsr);
  if (rtt <= 0)
    return 0;
  return (int64_t)urtp_ntp_short_to_ns((uint32_t)rtt);
}

/* --- the interval ---------------------------------------------------------- */

#define COMPENSATION (2.71828182845904523536 - 1.5)

static double min_time(const urtp_rtcp_interval_config_t *cfg, double bw_bits)
{
  double t = (double)(cfg->min_interval ? cfg->min_interval : URTP_RTCP_MIN_INTERVAL) / 1e9;
  /* 6.2: 360 divided by the session bandwidth in kbit/s */
  if (cfg->reduced_min && bw_bits > 0)
    t = 360.0 / (bw_bits / 1000.0);
  return t;
}

static double interval_td_s(const urtp_rtcp_interval_config_t *cfg, const urtp_rtcp_members_t *m,
                            double avg_size, bool initial)
{
  double bw_bits = (double)(cfg->session_bw ? cfg->session_bw : m->session_bw);
  /* RTCP's share: 5 % of the session, in octets per second */
  double rtcp_bw = bw_bits * 0.05 / 8;
  double tmin = min_time(cfg, bw_bits);
  if (initial)
    tmin /= 2;
  double n = m->members ? m->members : 1;
  double senders = m->senders;
  if (senders <= n * 0.25) {
    /* few senders: a quarter of the bandwidth is theirs */
    if (m->we_sent) {
      rtcp_bw *= 0.25;
      n = senders;
    } else {
      rtcp_bw *= 0.75;
      n -= senders;
    }
  }
  /* an unknown bandwidth gives the minimum */
  double t = rtcp_bw > 0 ? avg_size * n / rtcp_bw : 0;
  return t < tmin ? tmin : t;
}

static uint64_t to_ns(double s)
{
  return s <= 0 ? 0 : s >= 1e9 ? UINT64_MAX / 2 : (uint64_t)(s * 1e9 + 0.5);
}

uint64_t urtp_rtcp_interval_td(const urtp_rtcp_interval_config_t *cfg,
                               const urtp_rtcp_members_t *m, double avg_size, bool initial)
{
  return to_ns(interval_td_s(cfg, m, avg_size, initial));
}

uint64_t urtp_rtcp_interval(const urtp_rtcp_interval_config_t *cfg, const urtp_rtcp_members_t *m,
                            double avg_size, bool initial, uint32_t r)
{
  double u = (double)r / 4294967296.0;
  return to_ns(interval_td_s(cfg, m, avg_size, initial) * (u + 0.5) / COMPENSATION);
}

static uint32_t next_rand(urtp_rtcp_sched_t *s)
{
  if (s->cfg.rand)
    return s->cfg.rand(s->cfg.rand_user);
  /* xorshift64* */
  uint64_t x = s->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  s->rng = x;
  return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

void urtp_rtcp_sched_init(urtp_rtcp_sched_t *s, const urtp_rtcp_interval_config_t *cfg,
                          uint64_t now, const urtp_rtcp_members_t *m, size_t size)
{
  memset(s, 0, sizeof(*s));
  s->cfg = *cfg;
  if (!cfg->rand) {
    /* libcrypto is linked anyway (base64, ZRTP): its generator seeds ours */
    if (RAND_bytes((unsigned char *)&s->rng, sizeof s->rng) != 1)
      s->rng = now ^ (uint64_t)(uintptr_t)s;
    s->rng |= 1;
  }
  s->tp = now;
  s->initial = true;
  s->pmembers = m->members;
  s->avg_size = (double)size + URTP_RTCP_UDP_IP_OVERHEAD;
  s->tn = now + urtp_rtcp_interval(&s->cfg, m, s->avg_size, true, next_rand(s));
}

bool urtp_rtcp_sched_expire(urtp_rtcp_sched_t *s, uint64_t now, const urtp_rtcp_members_t *m)
{
  uint64_t t = urtp_rtcp_interval(&s->cfg, m, s->avg_size, s->initial, next_rand(s));
  uint64_t tn = s->tp + t;
  s->pmembers = m->members;
  if (tn <= now)
    return true;
  s->tn = tn;
  return false;
}

void urtp_rtcp_sched_sent(urtp_rtcp_sched_t *s, uint64_t now, const urtp_rtcp_members_t *m,
                          size_t size)
{
  s->avg_size = (1.0 / 16) * ((double)size + URTP_RTCP_UDP_IP_OVERHEAD) +
                (15.0 / 16) * s->avg_size;
  s->tp = now;
  s->initial = false;
  s->tn = now + urtp_rtcp_interval(&s->cfg, m, s->avg_size, false, next_rand(s));
  s->pmembers = m->members;
}

void urtp_rtcp_sched_received(urtp_rtcp_sched_t *s, size_t size)
{
  s->avg_size = (1.0 / 16) * ((double)size + URTP_RTCP_UDP_IP_OVERHEAD) +
                (15.0 / 16) * s->avg_size;
}

void urtp_rtcp_sched_members_left(urtp_rtcp_sched_t *s, uint64_t now,
                                  const urtp_rtcp_members_t *m)
{
  if (m->members >= s->pmembers || s->pmembers == 0)
    return;
  double f = (double)m->members / (double)s->pmembers;
  if (s->tn > now)
    s->tn = now + (uint64_t)(f * (double)(s->tn - now));
  if (now > s->tp)
    s->tp = now - (uint64_t)(f * (double)(now - s->tp));
  s->pmembers = m->members;
}

/* --- CNAME ----------------------------------------------------------------- */

static pthread_once_t cname_once = PTHREAD_ONCE_INIT;
static char cname_buf[64];

static void make_cname(void)
{
  uint32_t r[2];
  if (RAND_bytes((unsigned char *)r, sizeof r) != 1) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r[0] = (uint32_t)ts.tv_nsec * 2654435761u;
    r[1] = (uint32_t)ts.tv_sec ^ (uint32_t)(uintptr_t)&ts;
  }
  snprintf(cname_buf, sizeof cname_buf, "user%u@host-%x", r[0], r[1]);
}

const char *urtp_rtcp_default_cname(void)
{
  pthread_once(&cname_once, make_cname);
  return cname_buf;
}
