/* SPDX-License-Identifier: BSD-2-Clause */
/* Retransmission (RFC 4588): see urtp/rtx.h. */
#include "urtp/rtx.h"

#include <errno.h>
#include <string.h>

#include "urtp/rtp.h"
#include "urtp/bytes.h"

#define NS_PER_S 1000000000ull

/* Bytes of the header: everything before the payload. */
static size_t header_len(const uint8_t *pkt, const urtp_rtp_pkt_t *p)
{
  return (size_t)(p->payload - pkt);
}

int urtp_rtx_wrap(const uint8_t *orig, size_t len, uint8_t pt, uint32_t ssrc, uint16_t seq,
                  uint8_t *out, size_t cap)
{
  urtp_rtp_pkt_t p;
  if (pt > 127 || urtp_rtp_parse(orig, len, &p) != 0)
    return -EBADMSG;
  if (cap < len + 2)
    return -ENOSPC;
  size_t h = header_len(orig, &p);
  memcpy(out, orig, h);
  out[1] = (uint8_t)((orig[1] & 0x80) | pt);
  urtp_wr16(out + 2, seq);
  urtp_wr32(out + 8, ssrc);
  out[h] = orig[2];
  out[h + 1] = orig[3];
  /* payload and padding as they were */
  memcpy(out + h + 2, orig + h, len - h);
  return (int)(len + 2);
}

int urtp_rtx_osn(const uint8_t *pkt, size_t len, uint16_t *osn)
{
  urtp_rtp_pkt_t p;
  if (urtp_rtp_parse(pkt, len, &p) != 0 || p.payload_len < 2)
    return -EBADMSG;
  *osn = urtp_rd16(p.payload);
  return 0;
}

int urtp_rtx_unwrap(uint8_t *pkt, size_t len, uint8_t media_pt, uint32_t media_ssrc,
                    uint8_t **orig)
{
  urtp_rtp_pkt_t p;
  if (media_pt > 127 || urtp_rtp_parse(pkt, len, &p) != 0 || p.payload_len < 2)
    return -EBADMSG;
  size_t h = header_len(pkt, &p);
  uint8_t osn0 = pkt[h], osn1 = pkt[h + 1];
  /* the header moves over the OSN; the payload stays where it is */
  memmove(pkt + 2, pkt, h);
  uint8_t *o = pkt + 2;
  o[1] = (uint8_t)((o[1] & 0x80) | media_pt);
  o[2] = osn0;
  o[3] = osn1;
  urtp_wr32(o + 8, media_ssrc);
  *orig = o;
  return (int)(len - 2);
}

void urtp_rtx_limiter_init(urtp_rtx_limiter_t *l)
{
  memset(l, 0, sizeof(*l));
}

bool urtp_rtx_limiter_repeat(const urtp_rtx_limiter_t *l, uint16_t seq, uint64_t now,
                             uint64_t hold_ns)
{
  const urtp_rtx_recent_t *e = &l->recent[seq % URTP_RTX_RECENT];
  return e->used && e->seq == seq && now < e->t + hold_ns;
}

urtp_rtx_verdict_t urtp_rtx_limiter_check(urtp_rtx_limiter_t *l, uint16_t seq, size_t bytes,
                                          uint64_t now, uint64_t hold_ns, uint64_t rate_bps)
{
  uint64_t per_s = rate_bps / 8;
  uint64_t cap = (uint64_t)((unsigned __int128)per_s * URTP_RTX_BUCKET_NS / NS_PER_S);
  if (cap < URTP_RTX_BUCKET_MIN)
    cap = URTP_RTX_BUCKET_MIN;
  if (!l->started) {
    /* a quarter: what a stream just started may need, no more than a
     * storm should get before the rate is known */
    l->started = true;
    l->tokens = cap / 4;
    l->last = now;
  } else if (now > l->last) {
    unsigned __int128 add = (unsigned __int128)(now - l->last) * per_s / NS_PER_S;
    l->tokens = add >= cap || l->tokens + (uint64_t)add > cap ? cap : l->tokens + (uint64_t)add;
    l->last = now;
  }
  if (l->tokens > cap)
    l->tokens = cap;              /* the rate went down */

  if (urtp_rtx_limiter_repeat(l, seq, now, hold_ns))
    return URTP_RTX_REPEAT;
  urtp_rtx_recent_t *e = &l->recent[seq % URTP_RTX_RECENT];
  if (bytes > l->tokens)
    return URTP_RTX_OVER_BUDGET;
  l->tokens -= bytes;
  e->used = true;
  e->seq = seq;
  e->t = now;
  return URTP_RTX_SEND;
}
