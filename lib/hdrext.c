/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/hdrext.h"
#include "urtp/bytes.h"
#include "urtp/rtp.h"

#include <errno.h>
#include <string.h>

/*
 * One-byte form (profile 0xBEDE):  |ID(4)|L(4)| then L + 1 bytes
 * Two-byte form (profile 0x100X):  |  ID(8)  |  L(8)  | then L bytes
 * ID 0 is a padding byte in both; ID 15 ends a one-byte extension.
 */

void urtp_hdrext_reset(urtp_hdrext_t *x, bool two_byte)
{
  x->len = 0;
  x->two_byte = two_byte;
  x->reserved_at = 0;
}

static bool valid(bool two_byte, unsigned id, size_t n)
{
  if (two_byte)
    return id >= 1 && id <= 255 && n <= 255;
  return id >= 1 && id <= URTP_HDREXT_ONE_BYTE_MAX_ID && n <= URTP_HDREXT_ONE_BYTE_MAX_LEN;
}

uint8_t *urtp_hdrext_reserve(urtp_hdrext_t *x, unsigned id, size_t max)
{
  size_t head = x->two_byte ? 2 : 1;
  if (!valid(x->two_byte, id, max) || URTP_HDREXT_MAX - x->len < head + max)
    return NULL;
  x->reserved_at = x->len + head;
  return x->data + x->reserved_at;
}

int urtp_hdrext_commit(urtp_hdrext_t *x, unsigned id, size_t n)
{
  size_t head = x->two_byte ? 2 : 1;
  if (!valid(x->two_byte, id, n) || x->reserved_at != x->len + head ||
      URTP_HDREXT_MAX - x->len < head + n)
    return -EINVAL;
  x->reserved_at = 0;
  if (n == 0 && !x->two_byte)
    return 0;
  uint8_t *h = x->data + x->len;
  if (x->two_byte) {
    h[0] = (uint8_t)id;
    h[1] = (uint8_t)n;
  } else {
    h[0] = (uint8_t)(id << 4 | (n - 1));
  }
  x->len += head + n;
  return 0;
}

int urtp_hdrext_add(urtp_hdrext_t *x, unsigned id, const void *data, size_t n)
{
  uint8_t *d = urtp_hdrext_reserve(x, id, n);
  if (!d)
    return valid(x->two_byte, id, n) ? -ENOSPC : -EINVAL;
  if (n)
    memcpy(d, data, n);
  return urtp_hdrext_commit(x, id, n);
}

static size_t put(uint8_t *p, bool two_byte, unsigned id, const uint8_t *d, size_t n)
{
  if (two_byte) {
    p[0] = (uint8_t)id;
    p[1] = (uint8_t)n;
    memcpy(p + 2, d, n);
    return 2 + n;
  }
  p[0] = (uint8_t)(id << 4 | (n - 1));
  memcpy(p + 1, d, n);
  return 1 + n;
}

int urtp_hdrext_seal(const urtp_hdrext_t *x, unsigned tw_id, urtp_hdrext_block_t *out)
{
  out->len = 0;
  out->tw_off = 0;
  bool have = x && x->len > 0;
  if (!have && tw_id == 0)
    return 0;
  if (tw_id > 255)
    return -EINVAL;
  bool two = (have && x->two_byte) || urtp_hdrext_needs_two_byte(tw_id, 2);
  uint8_t *b = out->bytes;
  size_t off = 4;
  if (have) {
    /* re-encoded element by element: the form may change for tw_id */
    urtp_hdrext_iter_t it;
    urtp_hdrext_iter_init(&it, x->two_byte ? URTP_HDREXT_TWO_BYTE : URTP_HDREXT_ONE_BYTE,
                          x->data, x->len);
    unsigned id;
    const uint8_t *d;
    size_t n;
    int r;
    while ((r = urtp_hdrext_next(&it, &id, &d, &n)) == 1) {
      if (n == 0 && !two)
        continue;
      if (off + (two ? 2 : 1) + n > 4 + URTP_HDREXT_MAX)
        return -ENOSPC;   /* one-byte elements grown by the two-byte form */
      off += put(b + off, two, id, d, n);
    }
    if (r < 0)
      return -EINVAL;
  }
  if (tw_id) {
    static const uint8_t zero[2] = { 0, 0 };
    off += put(b + off, two, tw_id, zero, 2);
    out->tw_off = off - 2;
  }
  size_t words = (off - 4 + 3) / 4;
  memset(b + off, 0, 4 + 4 * words - off);
  urtp_wr16(b, two ? URTP_HDREXT_TWO_BYTE : URTP_HDREXT_ONE_BYTE);
  urtp_wr16(b + 2, (uint16_t)words);
  out->len = 4 + 4 * words;
  return 0;
}

int urtp_hdrext_iter_init(urtp_hdrext_iter_t *it, uint16_t profile, const uint8_t *data,
                          size_t len)
{
  it->p = data;
  it->end = data + len;
  if (profile == URTP_HDREXT_ONE_BYTE)
    it->two_byte = false;
  else if ((profile & 0xfff0) == URTP_HDREXT_TWO_BYTE)
    it->two_byte = true;
  else {
    it->p = it->end;
    return -ENOTSUP;
  }
  return 0;
}

int urtp_hdrext_next(urtp_hdrext_iter_t *it, unsigned *id, const uint8_t **data, size_t *len)
{
  while (it->p < it->end && it->p[0] == 0)
    it->p++;    /* padding */
  if (it->p >= it->end)
    return 0;
  size_t head, n;
  if (it->two_byte) {
    if (it->end - it->p < 2)
      goto bad;
    *id = it->p[0];
    n = it->p[1];
    head = 2;
  } else {
    *id = it->p[0] >> 4;
    if (*id == 15) {
      it->p = it->end;
      return 0;
    }
    n = (size_t)(it->p[0] & 0x0f) + 1;
    head = 1;
  }
  if ((size_t)(it->end - it->p) - head < n)
    goto bad;
  *data = it->p + head;
  *len = n;
  it->p += head + n;
  return 1;
bad:
  it->p = it->end;
  return -EBADMSG;
}

const uint8_t *urtp_hdrext_find(uint16_t profile, const uint8_t *data, size_t len, unsigned id,
                                size_t *out_len)
{
  urtp_hdrext_iter_t it;
  if (urtp_hdrext_iter_init(&it, profile, data, len) < 0)
    return NULL;
  unsigned eid;
  const uint8_t *d;
  size_t n;
  while (urtp_hdrext_next(&it, &eid, &d, &n) == 1) {
    if (eid == id) {
      *out_len = n;
      return d;
    }
  }
  return NULL;
}

int urtp_hdrext_restamp(uint8_t *pkt, size_t len, unsigned tw_id, uint16_t seq)
{
  urtp_rtp_pkt_t p;
  if (urtp_rtp_parse(pkt, len, &p) != 0 || !p.hdr.has_ext)
    return -ENOENT;
  size_t n = 0;
  const uint8_t *d = urtp_hdrext_find(p.hdr.ext_profile, p.hdr.ext_data, p.hdr.ext_len, tw_id, &n);
  if (!d || n != 2)
    return -ENOENT;
  urtp_wr16(pkt + (d - pkt), seq);
  return 0;
}

int urtp_hdrext_merge(uint16_t *profile, uint8_t *data, uint16_t *len, size_t cap,
                      uint16_t profile2, const uint8_t *data2, size_t len2)
{
  struct {
    unsigned id;
    const uint8_t *d;
    size_t n;
  } el[2 * URTP_HDREXT_MAX / 2];
  size_t nel = 0;
  urtp_hdrext_iter_t it;
  unsigned id;
  const uint8_t *d;
  size_t n;
  int r;

  if (urtp_hdrext_iter_init(&it, profile2, data2, len2) < 0)
    return -ENOTSUP;
  bool two = it.two_byte;
  /* the new elements first: they win */
  while ((r = urtp_hdrext_next(&it, &id, &d, &n)) == 1) {
    if (nel == sizeof el / sizeof el[0])
      return -ENOSPC;
    el[nel].id = id;
    el[nel].d = d;
    el[nel++].n = n;
  }
  if (r < 0)
    return -EBADMSG;
  size_t nnew = nel;
  if (*len && urtp_hdrext_iter_init(&it, *profile, data, *len) == 0) {
    two |= it.two_byte;
    while (urtp_hdrext_next(&it, &id, &d, &n) == 1) {
      bool dup = false;
      for (size_t k = 0; k < nnew && !dup; k++)
        dup = el[k].id == id;
      if (dup)
        continue;
      if (nel == sizeof el / sizeof el[0])
        return -ENOSPC;
      el[nel].id = id;
      el[nel].d = d;
      el[nel++].n = n;
    }
  }
  /* written aside first: the old elements point into data */
  uint8_t out[URTP_HDREXT_MAX + 2 * URTP_HDREXT_MAX / 2];
  size_t off = 0;
  for (size_t k = 0; k < nel; k++) {
    if (el[k].n == 0 && !two)
      continue;
    if (off + (two ? 2 : 1) + el[k].n > cap || off + (two ? 2 : 1) + el[k].n > sizeof out)
      return -ENOSPC;
    off += put(out + off, two, el[k].id, el[k].d, el[k].n);
  }
  memcpy(data, out, off);
  *len = (uint16_t)off;
  *profile = two ? URTP_HDREXT_TWO_BYTE : URTP_HDREXT_ONE_BYTE;
  return 0;
}
