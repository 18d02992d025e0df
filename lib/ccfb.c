/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/ccfb.h"
#include "urtp/bytes.h"

#include <errno.h>
#include <string.h>

/* Status symbols of transport-wide feedback. */
enum { SYM_NONE = 0, SYM_SMALL = 1, SYM_LARGE = 2, SYM_RESERVED = 3 };

#define TWCC_TICK_US 250           /* a receive delta's unit */
#define TWCC_REF_TICKS 256         /* 64 ms, the reference time's unit, in ticks */
#define TWCC_HDR 20                /* through the feedback packet count */
#define RUN_MAX 8191

static int64_t floor_div(int64_t a, int64_t b)
{
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static size_t round4(size_t n)
{
  return (n + 3) & ~(size_t)3;
}

/* V=2, no padding bit, fmt, PT 205, the length in words less one. */
static void put_header(uint8_t *out, unsigned fmt, size_t bytes)
{
  out[0] = (uint8_t)(0x80 | fmt);
  out[1] = URTP_RTCP_RTPFB;
  urtp_wr16(out + 2, (uint16_t)(bytes / 4 - 1));
}

/* The bytes of p a parse may read: the packet's own length, less padding
 * when the bit says so. -EINVAL: not this message; -EBADMSG. */
static int check_header(const uint8_t *p, size_t len, unsigned fmt)
{
  if (len < 4 || (p[0] >> 6) != 2 || p[1] != URTP_RTCP_RTPFB || (p[0] & 0x1f) != fmt)
    return -EINVAL;
  size_t bytes = ((size_t)urtp_rd16(p + 2) + 1) * 4;
  if (bytes > len)
    return -EBADMSG;
  if (p[0] & 0x20) {
    size_t pad = p[bytes - 1];
    if (pad == 0 || pad > bytes - 4)
      return -EBADMSG;
    bytes -= pad;
  }
  return (int)bytes;
}

/* --- transport-wide feedback -------------------------------------------- */

/* The chunk that starts at sym[k] of m: its 16 bits and how many symbols
 * it covers. A run of 7 or more (or the whole rest) is a run-length chunk;
 * else 14 one-bit symbols when none is a large delta, else 7 two-bit ones.
 * Symbols past m in a vector are "not received" and beyond the count. */
static uint16_t next_chunk(const uint8_t *sym, size_t k, size_t m, size_t *covers)
{
  size_t run = 1;
  while (k + run < m && run < RUN_MAX && sym[k + run] == sym[k])
    run++;
  if (run >= 7 || k + run == m) {
    *covers = run;
    return (uint16_t)(sym[k] << 13 | run);
  }
  size_t c14 = m - k < 14 ? m - k : 14;
  bool one_bit = true;
  for (size_t j = 0; j < c14; j++)
    one_bit &= sym[k + j] <= SYM_SMALL;
  uint16_t c;
  if (one_bit) {
    c = 0x8000;
    for (size_t j = 0; j < c14; j++)
      c |= (uint16_t)(sym[k + j] << (13 - j));
    *covers = c14;
  } else {
    size_t c7 = c14 < 7 ? c14 : 7;
    c = 0xc000;
    for (size_t j = 0; j < c7; j++)
      c |= (uint16_t)(sym[k + j] << (12 - 2 * j));
    *covers = c7;
  }
  return c;
}

int urtp_twcc_write(uint8_t *out, size_t cap, uint32_t sender_ssrc, uint32_t media_ssrc,
                    uint8_t fb_count, const urtp_ccfb_pkt_t *pkts, size_t n, size_t *taken)
{
  uint8_t sym[URTP_TWCC_MAX_PACKETS];
  int16_t delta[URTP_TWCC_MAX_PACKETS];

  *taken = 0;
  if (n == 0)
    return -EINVAL;
  if (n > URTP_TWCC_MAX_PACKETS)
    n = URTP_TWCC_MAX_PACKETS;
  size_t first = 0;
  while (first < n && !pkts[first].received)
    first++;
  if (first == n)
    return -EINVAL;
  for (size_t i = 1; i < n; i++)
    if (pkts[i].seq != (uint16_t)(pkts[0].seq + i))
      return -EINVAL;

  /* symbols and deltas (in ticks from the previous arrival, the first
   * from the reference time), up to an arrival no delta can hold */
  int64_t ref = floor_div(pkts[first].arrival_us, (int64_t)TWCC_TICK_US * TWCC_REF_TICKS);
  int64_t prev = ref * TWCC_REF_TICKS;
  size_t m = 0;
  for (; m < n; m++) {
    sym[m] = SYM_NONE;
    if (!pkts[m].received)
      continue;
    int64_t t = floor_div(pkts[m].arrival_us, TWCC_TICK_US), d = t - prev;
    if (d < INT16_MIN || d > INT16_MAX)
      break;
    sym[m] = d >= 0 && d <= 255 ? SYM_SMALL : SYM_LARGE;
    delta[m] = (int16_t)d;
    prev = t;
  }

  /* chunks while the message fits; the last one is cut to the room left
   * (a run shortened, a vector's later symbols left beyond the count) */
  size_t k = 0, nchunks = 0, dbytes = 0;
  while (k < m) {
    size_t covers, add = 0;
    uint16_t c = next_chunk(sym, k, m, &covers);
    for (size_t j = k; j < k + covers; j++)
      add += sym[j];            /* SMALL: 1 byte, LARGE: 2 */
    bool full = false;
    while (covers > 0 && round4(TWCC_HDR + 2 * (nchunks + 1) + dbytes + add) > cap) {
      covers--;
      add -= sym[k + covers];
      full = true;
    }
    if (covers == 0)
      break;
    if (full && !(c & 0x8000))
      c = (uint16_t)((c & 0xe000) | covers);
    urtp_wr16(out + TWCC_HDR + 2 * nchunks, c);
    nchunks++;
    dbytes += add;
    k += covers;
    if (full)
      break;
  }
  if (k <= first)
    return -ENOSPC;

  uint8_t *o = out + TWCC_HDR + 2 * nchunks;
  for (size_t j = 0; j < k; j++) {
    if (sym[j] == SYM_SMALL) {
      *o++ = (uint8_t)delta[j];
    } else if (sym[j] == SYM_LARGE) {
      urtp_wr16(o, (uint16_t)delta[j]);
      o += 2;
    }
  }
  size_t bytes = (size_t)(o - out), total = round4(bytes);
  memset(o, 0, total - bytes);
  put_header(out, URTP_CCFB_FMT_TWCC, total);
  urtp_wr32(out + 4, sender_ssrc);
  urtp_wr32(out + 8, media_ssrc);
  urtp_wr16(out + 12, pkts[0].seq);
  urtp_wr16(out + 14, (uint16_t)k);
  urtp_wr32(out + 16, (uint32_t)ref << 8 | fb_count);
  *taken = k;
  return (int)total;
}

int urtp_twcc_parse(const uint8_t *p, size_t len, urtp_twcc_info_t *info, urtp_ccfb_pkt_t *out,
                    size_t max, size_t *n)
{
  *n = 0;
  int r = check_header(p, len, URTP_CCFB_FMT_TWCC);
  if (r < 0)
    return r;
  size_t bytes = (size_t)r;
  if (bytes < TWCC_HDR + 2)
    return -EBADMSG;
  info->sender_ssrc = urtp_rd32(p + 4);
  info->media_ssrc = urtp_rd32(p + 8);
  info->base_seq = urtp_rd16(p + 12);
  info->count = urtp_rd16(p + 14);
  uint32_t w = urtp_rd32(p + 16);
  info->ref_time = (int32_t)(w >> 8) - ((w & 0x80000000u) ? (1 << 24) : 0);
  info->fb_count = (uint8_t)w;
  size_t count = info->count;
  if (count == 0)
    return -EBADMSG;
  if (count > max)
    return -ENOSPC;

  /* the statuses, chunk by chunk, into out[].received / .ecn (as a
   * scratch for the symbol) */
  size_t off = TWCC_HDR, got = 0;
  while (got < count) {
    if (bytes - off < 2)
      return -EBADMSG;
    uint16_t c = urtp_rd16(p + off);
    off += 2;
    size_t cnt, bits;
    if (!(c & 0x8000)) {
      cnt = c & 0x1fff;
      if (cnt == 0)
        return -EBADMSG;
      unsigned s = (c >> 13) & 3;
      for (size_t j = 0; j < cnt && got < count; j++)
        out[got++].ecn = (uint8_t)s;
      continue;
    }
    bits = (c & 0x4000) ? 2 : 1;
    cnt = bits == 2 ? 7 : 14;
    for (size_t j = 0; j < cnt && got < count; j++) {
      unsigned shift = (unsigned)(14 - bits * (j + 1));
      out[got++].ecn = (uint8_t)((c >> shift) & (bits == 2 ? 3u : 1u));
    }
  }

  /* the deltas of what was received */
  int64_t t = (int64_t)info->ref_time * TWCC_REF_TICKS;
  for (size_t j = 0; j < count; j++) {
    unsigned s = out[j].ecn;
    urtp_ccfb_pkt_t *q = &out[j];
    q->ssrc = info->media_ssrc;
    q->seq = (uint16_t)(info->base_seq + j);
    q->ecn = 0;
    q->received = s == SYM_SMALL || s == SYM_LARGE;
    q->arrival_us = 0;
    if (s == SYM_RESERVED)
      return -EBADMSG;
    if (s == SYM_SMALL) {
      if (bytes - off < 1)
        return -EBADMSG;
      t += p[off++];
    } else if (s == SYM_LARGE) {
      if (bytes - off < 2)
        return -EBADMSG;
      t += (int16_t)urtp_rd16(p + off);
      off += 2;
    }
    if (q->received)
      q->arrival_us = t * TWCC_TICK_US;
  }
  /* what follows is padding to the word */
  if (bytes - off > 3)
    return -EBADMSG;
  *n = count;
  return 0;
}

/* --- RFC 8888 ----------------------------------------------------------- */

#define RFC8888_MAX_REPORTS 16384

int urtp_rfc8888_write(uint8_t *out, size_t cap, uint32_t sender_ssrc, uint64_t report_us,
                       const urtp_ccfb_pkt_t *pkts, size_t n, size_t *taken)
{
  *taken = 0;
  if (n == 0)
    return -EINVAL;
  for (size_t i = 1; i < n; i++)
    if (pkts[i].seq != (uint16_t)(pkts[0].seq + i))
      return -EINVAL;
  /* header, sender, SSRC, begin and count, reports, report timestamp */
  if (cap < 20 + 4)
    return -ENOSPC;
  size_t k = (cap - 20) / 2;
  if (k > n)
    k = n;
  if (k > RFC8888_MAX_REPORTS)
    k = RFC8888_MAX_REPORTS;
  size_t total = 16 + round4(2 * k) + 4;
  put_header(out, URTP_CCFB_FMT_RFC8888, total);
  urtp_wr32(out + 4, sender_ssrc);
  urtp_wr32(out + 8, pkts[0].ssrc);
  urtp_wr16(out + 12, pkts[0].seq);
  urtp_wr16(out + 14, (uint16_t)k);
  for (size_t i = 0; i < k; i++) {
    uint16_t v = 0;
    if (pkts[i].received) {
      uint64_t ato;
      if (pkts[i].arrival_us == INT64_MIN) {
        ato = URTP_RFC8888_ATO_NONE;
      } else {
        int64_t before = (int64_t)report_us - pkts[i].arrival_us;
        ato = before <= 0 ? 0 : ((uint64_t)before * 1024 + 500000) / 1000000;
        if (ato >= URTP_RFC8888_ATO_OVER)
          ato = URTP_RFC8888_ATO_OVER;
      }
      v = (uint16_t)(0x8000 | (pkts[i].ecn & 3u) << 13 | ato);
    }
    urtp_wr16(out + 16 + 2 * i, v);
  }
  if (k & 1)
    urtp_wr16(out + 16 + 2 * k, 0);
  /* compact NTP: seconds and 1/65536 s in 32 bits */
  urtp_wr32(out + total - 4, (uint32_t)(report_us * 65536 / 1000000));
  *taken = k;
  return (int)total;
}

int urtp_rfc8888_parse(const uint8_t *p, size_t len, uint32_t *sender_ssrc, uint64_t *report_us,
                       urtp_ccfb_pkt_t *out, size_t max, size_t *n)
{
  *n = 0;
  int r = check_header(p, len, URTP_CCFB_FMT_RFC8888);
  if (r < 0)
    return r;
  size_t bytes = (size_t)r;
  if (bytes < 12 || bytes % 4)
    return -EBADMSG;
  *sender_ssrc = urtp_rd32(p + 4);
  uint32_t ts = urtp_rd32(p + bytes - 4);
  *report_us = (uint64_t)ts * 1000000 / 65536;
  size_t off = 8, end = bytes - 4, got = 0;
  while (off < end) {
    if (end - off < 8)
      return -EBADMSG;
    uint32_t ssrc = urtp_rd32(p + off);
    uint16_t begin = urtp_rd16(p + off + 4);
    size_t num = urtp_rd16(p + off + 6);
    off += 8;
    if (end - off < round4(2 * num))
      return -EBADMSG;
    if (num > max - got)
      return -ENOSPC;
    for (size_t i = 0; i < num; i++) {
      uint16_t v = urtp_rd16(p + off + 2 * i);
      urtp_ccfb_pkt_t *q = &out[got++];
      q->ssrc = ssrc;
      q->seq = (uint16_t)(begin + i);
      q->received = v & 0x8000;
      q->ecn = q->received ? (uint8_t)((v >> 13) & 3) : 0;
      unsigned ato = v & 0x1fff;
      q->arrival_us = !q->received ? 0
                      : ato >= URTP_RFC8888_ATO_OVER
                          ? INT64_MIN
                          : (int64_t)*report_us - (int64_t)(((uint64_t)ato * 1000000 + 512) / 1024);
    }
    off += round4(2 * num);
  }
  *n = got;
  return 0;
}
