/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/nalform.h"
#include "urtp/bytes.h"
#include "urtp/scl.h"

#include <errno.h>
#include <string.h>

static const uint8_t start_code[4] = { 0, 0, 0, 1 };

int urtp_nalform_init(urtp_nalform_t *f, urtp_codec_t codec, urtp_nalform_kind_t kind)
{
  if (!urtp_h26x_desc(codec) || (codec == URTP_CODEC_H266 && kind != URTP_NALFORM_BYTE_STREAM) ||
      kind > URTP_NALFORM_LENGTH_OOB)
    return -EINVAL;
  memset(f, 0, sizeof(*f));
  f->codec = codec;
  f->kind = kind;
  urtp_params_init(&f->ps, codec);
  return 0;
}

void urtp_nalform_free(urtp_nalform_t *f)
{
  urtp_params_free(&f->ps);
}

int urtp_nalform_seed(urtp_nalform_t *f, const uint8_t *annexb, size_t len)
{
  urtp_scl_iter_t it;
  urtp_nal_t nal;
  int r;

  urtp_params_au_begin(&f->ps);
  urtp_scl_iter_init(&it, annexb, len);
  while (urtp_scl_next(&it, &nal))
    if ((r = urtp_params_au_add(&f->ps, nal.data, nal.len)) < 0)
      return r;
  return urtp_params_au_commit(&f->ps);
}

/* Where the 4-byte start code after the one at `at` begins, or len: the
 * next 00 00 01 that a 00 precedes, at least one byte of NAL unit on. */
static size_t next_start(const uint8_t *au, size_t len, size_t at)
{
  const uint8_t *end = au + len, *p = au + at + 5;
  while (p < end) {
    p = urtp_scl_find(p, end);
    if (p == end)
      break;
    if (p[-1] == 0 && (size_t)(p - 1 - au) > at + 4)
      return (size_t)(p - 1 - au);
    p++;
  }
  return len;
}

int urtp_nalform_convert(urtp_nalform_t *f, uint8_t *au, size_t *len)
{
  const urtp_h26x_desc_t *d = urtp_h26x_desc(f->codec);
  size_t n = *len, r = 0, w = 0;
  int err;

  if (f->kind == URTP_NALFORM_BYTE_STREAM)
    return 0;
  if (n < 5 || memcmp(au, start_code, 4) != 0)
    return -EINVAL;
  urtp_params_au_begin(&f->ps);
  while (r < n) {
    size_t e = next_start(au, n, r), nal_len = e - r - 4;
    const uint8_t *nal = au + r + 4;
    if (nal_len == 0) { /* an empty unit: nothing to carry */
      r = e;
      continue;
    }
    bool ps = nal_len >= d->hdr_len && urtp_ps_kind(f->codec, urtp_h26x_type(d, nal)) >= 0;

    if (ps && (err = urtp_params_au_add(&f->ps, nal, nal_len)) < 0) {
      /* what was converted so far cannot be undone: the caller drops it */
      urtp_params_au_begin(&f->ps);
      *len = 0;
      return err;
    }
    if (!(ps && f->kind == URTP_NALFORM_LENGTH_OOB)) {
      /* the length is written where the start code was, then moved down
       * over the parameter sets cut before it */
      urtp_wr32(au + r, (uint32_t)nal_len);
      if (w != r)
        memmove(au + w, au + r, e - r);
      w += e - r;
    }
    r = e;
  }
  *len = w;
  return urtp_params_au_commit(&f->ps) ? 1 : 0;
}

bool urtp_nalform_ready(const urtp_nalform_t *f)
{
  return urtp_params_complete(&f->ps);
}

int urtp_nalform_record(const urtp_nalform_t *f, uint8_t *out, size_t cap)
{
  return urtp_params_record(&f->ps, 4, f->kind == URTP_NALFORM_LENGTH, out, cap);
}

bool urtp_nalform_next(const urtp_nalform_t *f, const uint8_t *au, size_t len, size_t *off,
                       size_t *unit_len)
{
  size_t o = *off, e;

  if (o >= len || len - o < 5)
    return false;
  if (f->kind == URTP_NALFORM_BYTE_STREAM) {
    if (memcmp(au + o, start_code, 4) != 0)
      return false;
    e = next_start(au, len, o);
  } else {
    uint32_t l = urtp_rd32(au + o);
    if (l == 0 || l > len - o - 4)
      return false;
    e = o + 4 + l;
  }
  *unit_len = e - o;
  *off = e;
  return true;
}
