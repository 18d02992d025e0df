/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_rtcp.c - libFuzzer target for the RTCP parser, writer and
 * statistics (lib/rtcp.c).
 *
 * Any input is offered to urtp_rtcp_check() and urtp_rtcp_parse(), with and
 * without reduced size. Parse must agree with check; when it accepts, every
 * count stays within its array, every pointer lies within the input, the
 * iterator's packets tile the input exactly, and what was parsed, built
 * again with the writer and parsed once more, gives the same fields. The
 * input is also read as RTP packets (sequence number, timestamp, arrival
 * step) for the reception statistics, and as numbers for the interval,
 * whose results must stay within A.7's bounds. Congestion control
 * feedback (RTPFB FMT 15 and 11) is parsed (ccfb.h), matched against a
 * history of sends (twcc.h) and fed to the controller (cc.h), whose target
 * must stay within its bounds. Every violation aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/cc.h"
#include "urtp/ccfb.h"
#include "urtp/rtcp.h"
#include "urtp/twcc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)   \
  do {              \
    if (!(c))       \
      abort();      \
  } while (0)

static const uint8_t *in_lo, *in_hi;

static void within(const uint8_t *p, size_t n)
{
  ASSERT(p >= in_lo && p <= in_hi && n <= (size_t)(in_hi - p));
}

static void check_info(const urtp_rtcp_info_t *in)
{
  ASSERT(in->nreports <= URTP_RTCP_INFO_REPORTS && in->nblocks <= URTP_RTCP_INFO_BLOCKS &&
         in->ncnames <= URTP_RTCP_INFO_CNAMES && in->nbyes <= URTP_RTCP_INFO_BYES &&
         in->napps <= URTP_RTCP_INFO_APPS);
  unsigned blocks = 0;
  for (unsigned i = 0; i < in->nreports; i++) {
    ASSERT(in->reports[i].first_block == blocks);
    ASSERT(in->reports[i].nblocks <= URTP_RTCP_MAX_BLOCKS);
    blocks += in->reports[i].nblocks;
  }
  ASSERT(blocks == in->nblocks);
  for (unsigned i = 0; i < in->nblocks; i++)
    ASSERT(in->blocks[i].lost >= -0x800000 && in->blocks[i].lost <= 0x7fffff);
  for (unsigned i = 0; i < in->ncnames; i++)
    within(in->cnames[i].value, in->cnames[i].len);
  if (in->bye_reason)
    within(in->bye_reason, in->bye_reason_len);
  ASSERT(in->bye || (in->nbyes == 0 && !in->bye_reason));
  for (unsigned i = 0; i < in->napps; i++) {
    ASSERT(in->apps[i].subtype <= 31);
    within(in->apps[i].data, in->apps[i].len);
  }
}

/* A NACK's numbers and a FIR's entries stay within the FCI; each PID/BLP
 * pair's numbers, built again, give the same pair. */
static void check_feedback(const urtp_rtcp_fb_t *fb)
{
  static uint16_t seqs[17 * 64];
  unsigned more = 0;
  int n = urtp_rtcp_nack_seqs(fb, seqs, 17 * 64, &more);
  ASSERT(n == -EBADMSG ? fb->fci_len == 0 || fb->fci_len % 4 : n >= 1);
  if (n > 0 && fb->fci_len / 4 <= URTP_RTCP_MAX_NACK_PAIRS && !more) {
    /* as one NACK of its own pairs: ascending within a pair's window */
    static uint8_t out[1024];
    urtp_rtcp_writer_t w;
    unsigned pairs = (unsigned)(fb->fci_len / 4), k = 0;
    for (unsigned i = 0; i < pairs; i++) {
      uint16_t pid = (uint16_t)(fb->fci[4 * i] << 8 | fb->fci[4 * i + 1]);
      unsigned m = 0;
      uint16_t one[17];
      one[m++] = pid;
      for (unsigned bit = 0; bit < 16; bit++)
        if ((fb->fci[4 * i + 2] << 8 | fb->fci[4 * i + 3]) & (1u << bit))
          one[m++] = (uint16_t)(pid + bit + 1);
      urtp_rtcp_writer_init(&w, out, sizeof out);
      ASSERT(urtp_rtcp_write_nack(&w, 1, 2, one, m) == 0);
      ASSERT(w.len == 16 && memcmp(out + 12, fb->fci + 4 * i, 4) == 0);
      k += m;
    }
    ASSERT(k == (unsigned)n);
  }
  int firs = urtp_rtcp_fir_count(fb);
  ASSERT(firs == -EBADMSG ? fb->fci_len % 8 != 0 : (size_t)firs * 8 == fb->fci_len);
  for (int i = 0; i < firs; i++) {
    uint32_t ssrc;
    uint8_t seq;
    urtp_rtcp_fir_entry(fb, (unsigned)i, &ssrc, &seq);
  }
}

/* The packets tile [buf, buf + len), padding included. */
/* Congestion control feedback: parsed within its bytes and the caller's
 * room, matched against sends of every number, fed to a controller that
 * stays within its bounds. */
static void check_ccfb(const urtp_rtcp_pkt_t *p)
{
  static urtp_ccfb_pkt_t pk[URTP_TWCC_MAX_PACKETS];
  static urtp_twcc_result_t res[URTP_TWCC_MAX_PACKETS];
  static urtp_twcc_history_t h;
  static urtp_cc_t cc;
  static bool init;
  static int64_t now = 1000000;
  size_t n = 0;
  int r;
  if (!init) {
    urtp_cc_config_t cfg = { .min_bps = 200000, .max_bps = 5000000, .start_bps = 1000000 };
    urtp_cc_init(&cc, &cfg);
    init = true;
  }
  if (p->count == URTP_CCFB_FMT_TWCC) {
    urtp_twcc_info_t info;
    r = urtp_twcc_parse(p->data, p->len, &info, pk, URTP_TWCC_MAX_PACKETS, &n);
  } else if (p->count == URTP_CCFB_FMT_RFC8888) {
    uint32_t sender;
    uint64_t rep;
    r = urtp_rfc8888_parse(p->data, p->len, &sender, &rep, pk, URTP_TWCC_MAX_PACKETS, &n);
  } else {
    return;
  }
  ASSERT(n <= URTP_TWCC_MAX_PACKETS && (r == 0 || r < 0));
  if (r != 0)
    return;
  /* the history knows every number the feedback names, sent 1 ms apart */
  urtp_twcc_history_init(&h);
  for (size_t i = 0; i < n; i++)
    urtp_twcc_history_add(&h, pk[i].seq, now + (int64_t)i * 1000, 1200, 0);
  size_t m = urtp_twcc_history_match(&h, pk, n, res, URTP_TWCC_MAX_PACKETS);
  ASSERT(m <= n);
  now += 50000;
  urtp_cc_feedback(&cc, res, m, now);
  uint64_t t = urtp_cc_target(&cc);
  ASSERT(t >= 200000 && t <= 5000000 && urtp_cc_pacing(&cc) >= t);
}

static unsigned check_tiling(const uint8_t *buf, size_t len)
{
  urtp_rtcp_iter_t it;
  urtp_rtcp_pkt_t p;
  const uint8_t *at = buf;
  unsigned n = 0;
  int r;
  urtp_rtcp_iter_init(&it, buf, len);
  while ((r = urtp_rtcp_next(&it, &p)) == 1) {
    ASSERT(p.data == at && p.len >= 4);
    size_t whole = ((size_t)(p.data[2] << 8 | p.data[3]) + 1) * 4;
    ASSERT(p.len <= whole);
    ASSERT(p.len == whole || (p.data[0] & 0x20));
    within(p.data, whole);
    at += whole;
    n++;
    /* every accessor on every packet stays in bounds or refuses */
    urtp_rtcp_sr_t sr;
    uint32_t ssrc;
    unsigned nb;
    urtp_rtcp_block_t b;
    if (urtp_rtcp_parse_report(&p, &ssrc, &nb) == 0) {
      ASSERT(nb <= 31);
      for (unsigned i = 0; i < nb; i++)
        ASSERT(urtp_rtcp_block(&p, i, &b) == 0);
      ASSERT(urtp_rtcp_block(&p, nb, &b) == -EBADMSG);
    }
    ASSERT((urtp_rtcp_parse_sr(&p, &sr) == 0) ==
           (p.type == URTP_RTCP_SR && urtp_rtcp_parse_report(&p, &ssrc, &nb) == 0));
    urtp_rtcp_sdes_iter_t si;
    urtp_rtcp_sdes_item_t item;
    if (p.type == URTP_RTCP_SDES) {
      urtp_rtcp_sdes_iter_init(&si, &p);
      while (urtp_rtcp_sdes_next(&si, &item) == 1)
        within(item.value, item.len);
    }
    const uint8_t *reason;
    size_t rlen;
    if (urtp_rtcp_bye_reason(&p, &reason, &rlen) == 0 && reason)
      within(reason, rlen);
    urtp_rtcp_app_t app;
    if (urtp_rtcp_parse_app(&p, &app) == 0)
      within(app.data, app.len);
    urtp_rtcp_fb_t fb;
    if (urtp_rtcp_parse_fb(&p, &fb) == 0) {
      within(fb.fci, fb.fci_len);
      check_feedback(&fb);
    }
    if (p.type == URTP_RTCP_RTPFB)
      check_ccfb(&p);
  }
  if (r == 0)
    ASSERT(at == buf + len);
  return r == 0 ? n : 0;
}

/* What was parsed, built again (where the writer can say it: texts
 * without NUL, APP data in whole words) and parsed again. */
static void check_rebuild(const urtp_rtcp_info_t *in)
{
  static uint8_t out[8192];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, out, sizeof out);
  for (unsigned i = 0; i < in->nreports; i++) {
    const urtp_rtcp_report_t *r = &in->reports[i];
    const urtp_rtcp_block_t *b = &in->blocks[r->first_block];
    ASSERT((r->is_sr ? urtp_rtcp_write_sr(&w, &r->sr, b, r->nblocks)
                     : urtp_rtcp_write_rr(&w, r->sr.ssrc, b, r->nblocks)) == 0);
  }
  unsigned cnames = 0;
  for (unsigned i = 0; i < in->ncnames; i++) {
    char text[256];
    memcpy(text, in->cnames[i].value, in->cnames[i].len);
    text[in->cnames[i].len] = '\0';
    if (strlen(text) != in->cnames[i].len)
      continue;
    ASSERT(urtp_rtcp_write_sdes_cname(&w, in->cnames[i].ssrc, text) == 0);
    cnames++;
  }
  char reason[256];
  bool reason_ok = false;
  if (in->bye_reason) {
    memcpy(reason, in->bye_reason, in->bye_reason_len);
    reason[in->bye_reason_len] = '\0';
    reason_ok = strlen(reason) == in->bye_reason_len;
  }
  if (in->bye)
    ASSERT(urtp_rtcp_write_bye(&w, in->byes, in->nbyes, reason_ok ? reason : NULL) == 0);
  unsigned apps = 0;
  for (unsigned i = 0; i < in->napps; i++) {
    if (in->apps[i].len % 4)
      continue;
    ASSERT(urtp_rtcp_write_app(&w, &in->apps[i]) == 0);
    apps++;
  }
  ASSERT(w.err == 0);
  if (w.len == 0)
    return;

  urtp_rtcp_info_t again;
  ASSERT(urtp_rtcp_parse(out, w.len, in->nreports ? 0 : URTP_RTCP_REDUCED_SIZE, &again) == 0);
  ASSERT(again.malformed == 0 && again.truncated == 0);
  ASSERT(again.nreports == in->nreports && again.nblocks == in->nblocks);
  for (unsigned i = 0; i < in->nreports; i++) {
    const urtp_rtcp_report_t *a = &in->reports[i], *b = &again.reports[i];
    ASSERT(a->is_sr == b->is_sr && a->sr.ssrc == b->sr.ssrc && a->nblocks == b->nblocks &&
           a->first_block == b->first_block);
    if (a->is_sr)
      ASSERT(a->sr.ntp == b->sr.ntp && a->sr.rtp_ts == b->sr.rtp_ts &&
             a->sr.packets == b->sr.packets && a->sr.octets == b->sr.octets);
  }
  for (unsigned i = 0; i < in->nblocks; i++) {
    const urtp_rtcp_block_t *a = &in->blocks[i], *b = &again.blocks[i];
    ASSERT(a->ssrc == b->ssrc && a->fraction == b->fraction && a->lost == b->lost &&
           a->ext_max_seq == b->ext_max_seq && a->jitter == b->jitter && a->lsr == b->lsr &&
           a->dlsr == b->dlsr);
  }
  ASSERT(again.ncnames == cnames);
  ASSERT(again.bye == in->bye && again.nbyes == in->nbyes);
  ASSERT(memcmp(in->byes, again.byes, in->nbyes * sizeof in->byes[0]) == 0);
  if (reason_ok)
    ASSERT(again.bye_reason_len == in->bye_reason_len &&
           memcmp(again.bye_reason, in->bye_reason, in->bye_reason_len) == 0);
  ASSERT(again.napps == apps);
}

static void check_parse(const uint8_t *buf, size_t len, unsigned flags)
{
  urtp_rtcp_info_t in;
  int c = urtp_rtcp_check(buf, len, flags);
  int p = urtp_rtcp_parse(buf, len, flags, &in);
  ASSERT(c == 0 || c == -EBADMSG);
  ASSERT(p == c);
  if (p != 0) {
    ASSERT(in.packets == 0 && in.nreports == 0 && in.ncnames == 0);
    return;
  }
  ASSERT(len >= 4);
  if (!(flags & URTP_RTCP_REDUCED_SIZE))
    ASSERT(buf[1] == URTP_RTCP_SR || buf[1] == URTP_RTCP_RR);
  ASSERT(check_tiling(buf, len) == in.packets);
  check_info(&in);
  check_rebuild(&in);
}

static uint32_t rd32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* 8 bytes a packet: sequence number, timestamp, arrival step in 1/8 ms. */
static void check_stats(const uint8_t *d, size_t n)
{
  if (n < 12)
    return;
  urtp_rtcp_rx_t rx;
  urtp_rtcp_rx_init(&rx, rd32(d), (uint16_t)(d[4] << 8 | d[5]), rd32(d + 6) % 200000);
  uint64_t now = rd32(d + 8);
  for (size_t i = 12; i + 8 <= n; i += 8) {
    now += (uint64_t)(d[i + 6] << 8 | d[i + 7]) * 125000;
    urtp_rtcp_rx_update(&rx, (uint16_t)(d[i] << 8 | d[i + 1]), rd32(d + i + 2), now, d[i + 6]);
    urtp_rtcp_block_t b;
    if (d[i + 7] & 1)
      urtp_rtcp_rx_block(&rx, &b);
    else
      urtp_rtcp_rx_peek(&rx, &b);
    ASSERT(b.lost >= -0x800000 && b.lost <= 0x7fffff);
    ASSERT((uint16_t)b.ext_max_seq == rx.max_seq);
    ASSERT(b.ssrc == rx.ssrc);
    int64_t rtt = urtp_rtcp_rtt(now, b.jitter, b.ext_max_seq);
    ASSERT(rtt >= -1);
  }
}

/* The interval for members, senders, bandwidth and size from the input:
 * within [Td / 2, 3 Td / 2] / (e - 3/2), Td at least the minimum. */
static void check_interval(const uint8_t *d, size_t n)
{
  if (n < 16)
    return;
  urtp_rtcp_interval_config_t cfg = { .session_bw = rd32(d) >> (d[15] & 31),
                                      .reduced_min = d[14] & 1,
                                      .min_interval = (d[14] & 2) ? (uint64_t)d[13] * 100000000 : 0 };
  urtp_rtcp_members_t m = { .members = rd32(d + 4) >> (d[15] >> 3), .senders = d[12],
                            .we_sent = d[14] & 4, .session_bw = rd32(d + 8) };
  double avg = (double)(d[13] + 28);
  bool initial = d[14] & 8;
  uint64_t td = urtp_rtcp_interval_td(&cfg, &m, avg, initial);
  uint32_t r = rd32(d + 8);
  uint64_t t = urtp_rtcp_interval(&cfg, &m, avg, initial, r);
  const double C = 2.718281828459045 - 1.5;
  /* (beyond a few years the module saturates, each value on its own) */
  if (td < 100000000ull * 1000000000ull)
    ASSERT((double)t >= (double)td * 0.5 / C * (1 - 1e-12) - 2 &&
           (double)t <= (double)td * 1.5 / C * (1 + 1e-12) + 2);
  if (!cfg.reduced_min)
    ASSERT(td + 1 >= (cfg.min_interval ? cfg.min_interval : URTP_RTCP_MIN_INTERVAL) /
                         (initial ? 2 : 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* a private copy of exactly size bytes, so that ASan sees any read past
   * the end */
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  buf[0] = 0;
  if (size)
    memcpy(buf, data, size);
  in_lo = buf;
  in_hi = buf + size;
  check_parse(buf, size, 0);
  check_parse(buf, size, URTP_RTCP_REDUCED_SIZE);
  check_stats(buf, size);
  check_interval(buf, size);
  free(buf);
  return 0;
}
