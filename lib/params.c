/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/params.h"
#include "urtp/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

int urtp_ps_kind(urtp_codec_t codec, unsigned type)
{
  switch (codec) {
  case URTP_CODEC_H264:
    return type == 7 ? URTP_PS_SPS : type == 8 ? URTP_PS_PPS : -1;
  case URTP_CODEC_H265:
    return type == 32 ? URTP_PS_VPS : type == 33 ? URTP_PS_SPS : type == 34 ? URTP_PS_PPS : -1;
  case URTP_CODEC_H266:
    return type == 13   ? URTP_PS_DCI
           : type == 14 ? URTP_PS_VPS
           : type == 15 ? URTP_PS_SPS
           : type == 16 ? URTP_PS_PPS
                        : -1;
  default:
    return -1;
  }
}

unsigned urtp_ps_required(urtp_codec_t codec)
{
  switch (codec) {
  case URTP_CODEC_H265:
    return URTP_PS_BIT(URTP_PS_VPS) | URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS);
  case URTP_CODEC_H264:
  case URTP_CODEC_H266:
    return URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS);
  default:
    return 0;
  }
}

/* Kind of nal for the store's codec, or -1 (also when too short). */
static int nal_kind(const urtp_params_t *ps, const uint8_t *nal, size_t len)
{
  const urtp_h26x_desc_t *d = urtp_h26x_desc(ps->codec);
  if (!d || len < d->hdr_len)
    return -1;
  return urtp_ps_kind(ps->codec, urtp_h26x_type(d, nal));
}

/* --- lists --------------------------------------------------------------- */

static void list_clear(urtp_params_list_t *l)
{
  l->used = 0;
  l->n = 0;
}

static void list_free(urtp_params_list_t *l)
{
  free(l->buf);
  memset(l, 0, sizeof(*l));
}

/* 1 appended, 0 full, -ENOMEM. */
static int list_append(urtp_params_list_t *l, const uint8_t *d, size_t len)
{
  if (l->n >= URTP_PARAMS_MAX_PER_KIND || len > UINT32_MAX - l->used)
    return 0;
  if (l->used + len > l->cap) {
    size_t cap = l->cap ? l->cap : 256;
    while (cap < l->used + len)
      cap *= 2;
    uint8_t *b = realloc(l->buf, cap);
    if (!b)
      return -ENOMEM;
    l->buf = b;
    l->cap = cap;
  }
  memcpy(l->buf + l->used, d, len);
  l->off[l->n] = (uint32_t)l->used;
  l->len[l->n] = (uint32_t)len;
  l->n++;
  l->used += len;
  return 1;
}

static bool list_equal(const urtp_params_list_t *a, const urtp_params_list_t *b)
{
  if (a->n != b->n || a->used != b->used)
    return false;
  for (unsigned i = 0; i < a->n; i++)
    if (a->len[i] != b->len[i] || memcmp(a->buf + a->off[i], b->buf + b->off[i], a->len[i]))
      return false;
  return true;
}

/* --- the store ----------------------------------------------------------- */

void urtp_params_init(urtp_params_t *ps, urtp_codec_t codec)
{
  memset(ps, 0, sizeof(*ps));
  ps->codec = codec;
}

void urtp_params_free(urtp_params_t *ps)
{
  for (int k = 0; k < URTP_PS_KINDS; k++) {
    list_free(&ps->cur[k]);
    list_free(&ps->au[k]);
  }
  ps->au_mask = 0;
}

void urtp_params_reset(urtp_params_t *ps, urtp_codec_t codec)
{
  if (urtp_params_total(ps) || ps->codec != codec)
    ps->serial++;
  for (int k = 0; k < URTP_PS_KINDS; k++) {
    list_clear(&ps->cur[k]);
    list_clear(&ps->au[k]);
  }
  ps->au_mask = 0;
  ps->codec = codec;
}

int urtp_params_add(urtp_params_t *ps, const uint8_t *nal, size_t len)
{
  int k = nal_kind(ps, nal, len);
  if (k < 0)
    return 0;
  int r = list_append(&ps->cur[k], nal, len);
  if (r > 0)
    ps->serial++;
  return r;
}

unsigned urtp_params_count(const urtp_params_t *ps, urtp_ps_kind_t kind)
{
  return (unsigned)kind < URTP_PS_KINDS ? ps->cur[kind].n : 0;
}

const uint8_t *urtp_params_get(const urtp_params_t *ps, urtp_ps_kind_t kind, unsigned i,
                               size_t *len)
{
  if ((unsigned)kind >= URTP_PS_KINDS || i >= ps->cur[kind].n)
    return NULL;
  const urtp_params_list_t *l = &ps->cur[kind];
  *len = l->len[i];
  return l->buf + l->off[i];
}

unsigned urtp_params_mask(const urtp_params_t *ps)
{
  unsigned m = 0;
  for (int k = 0; k < URTP_PS_KINDS; k++)
    if (ps->cur[k].n)
      m |= URTP_PS_BIT(k);
  return m;
}

bool urtp_params_complete(const urtp_params_t *ps)
{
  unsigned req = urtp_ps_required(ps->codec);
  return req && (urtp_params_mask(ps) & req) == req;
}

unsigned urtp_params_total(const urtp_params_t *ps)
{
  unsigned n = 0;
  for (int k = 0; k < URTP_PS_KINDS; k++)
    n += ps->cur[k].n;
  return n;
}

/* --- in-band tracking ---------------------------------------------------- */

void urtp_params_au_begin(urtp_params_t *ps)
{
  for (int k = 0; k < URTP_PS_KINDS; k++)
    list_clear(&ps->au[k]);
  ps->au_mask = 0;
}

int urtp_params_au_add(urtp_params_t *ps, const uint8_t *nal, size_t len)
{
  int k = nal_kind(ps, nal, len);
  if (k < 0)
    return 0;
  ps->au_mask |= URTP_PS_BIT(k);
  return list_append(&ps->au[k], nal, len);
}

bool urtp_params_au_changes(const urtp_params_t *ps)
{
  for (int k = 0; k < URTP_PS_KINDS; k++)
    if (ps->au[k].n && !list_equal(&ps->au[k], &ps->cur[k]))
      return true;
  return false;
}

/* The gathered list of kind k becomes the current one, if it differs;
 * the gathered one is emptied. Returns whether the current one changed. */
static bool take_au_list(urtp_params_t *ps, int k)
{
  bool changed = false;
  if (!list_equal(&ps->au[k], &ps->cur[k])) {
    urtp_params_list_t t = ps->cur[k];
    ps->cur[k] = ps->au[k];
    ps->au[k] = t;
    changed = true;
  }
  list_clear(&ps->au[k]);
  return changed;
}

bool urtp_params_au_commit(urtp_params_t *ps)
{
  bool changed = false;
  for (int k = 0; k < URTP_PS_KINDS; k++)
    if (ps->au[k].n)
      changed |= take_au_list(ps, k);
  if (changed)
    ps->serial++;
  return changed;
}

/* --- configuration records ----------------------------------------------- */

/* Reads count NAL units, each after a 16-bit length, from rec[*off ..). */
static int read_units(const uint8_t *rec, size_t len, size_t *off, unsigned count,
                      urtp_nal_t *sets, size_t max, size_t *n)
{
  for (unsigned i = 0; i < count; i++) {
    if (len - *off < 2)
      return -EINVAL;
    size_t l = urtp_rd16(rec + *off);
    *off += 2;
    if (l > len - *off)
      return -EINVAL;
    if (*n >= max)
      return -ENOSPC;
    sets[*n].data = rec + *off;
    sets[*n].len = l;
    (*n)++;
    *off += l;
  }
  return 0;
}

int urtp_params_parse_record(urtp_codec_t codec, const uint8_t *rec, size_t len,
                             unsigned *nal_length_size, urtp_nal_t *sets, size_t max,
                             size_t *n)
{
  size_t off;
  int r;
  *n = 0;
  if (codec == URTP_CODEC_H264) {
    /* configurationVersion, AVCProfileIndication, profile_compatibility,
     * AVCLevelIndication, 6 bits reserved | lengthSizeMinusOne,
     * 3 bits reserved | numOfSequenceParameterSets, SPS (16-bit lengths),
     * numOfPictureParameterSets, PPS; profile-dependent extensions after
     * them are not read. */
    if (len < 7 || rec[0] != 1)
      return -EINVAL;
    *nal_length_size = (rec[4] & 3u) + 1;
    off = 6;
    if ((r = read_units(rec, len, &off, rec[5] & 0x1fu, sets, max, n)) < 0)
      return r;
    if (off >= len)
      return -EINVAL;
    unsigned npps = rec[off++];
    return read_units(rec, len, &off, npps, sets, max, n);
  }
  if (codec == URTP_CODEC_H265) {
    /* configurationVersion and 21 more bytes of profile, tier, level,
     * format and rate fields, the last ending in lengthSizeMinusOne; then
     * numOfArrays, each: array_completeness | reserved | NAL_unit_type,
     * numNalus (16 bits), NAL units with 16-bit lengths. */
    if (len < 23 || rec[0] != 1)
      return -EINVAL;
    *nal_length_size = (rec[21] & 3u) + 1;
    unsigned arrays = rec[22];
    off = 23;
    for (unsigned a = 0; a < arrays; a++) {
      if (len - off < 3)
        return -EINVAL;
      unsigned count = urtp_rd16(rec + off + 1);
      off += 3;
      if ((r = read_units(rec, len, &off, count, sets, max, n)) < 0)
        return r;
    }
    return 0;
  }
  return -ENOTSUP;
}

int urtp_params_set_record(urtp_params_t *ps, const uint8_t *rec, size_t len,
                           unsigned *nal_length_size)
{
  urtp_nal_t sets[4 * URTP_PARAMS_MAX_PER_KIND];
  unsigned ls;
  size_t n;
  int r = urtp_params_parse_record(ps->codec, rec, len, &ls, sets, sizeof(sets) / sizeof(sets[0]),
                                   &n);
  if (r < 0)
    return r;
  /* Gathered as an access unit's sets into the spare lists first, so that
   * running out of memory leaves the current ones as they were. */
  urtp_params_au_begin(ps);
  for (size_t i = 0; i < n; i++) {
    if ((r = urtp_params_au_add(ps, sets[i].data, sets[i].len)) < 0) {
      urtp_params_au_begin(ps);
      return r;
    }
  }
  /* the record replaces every kind, those it lacks included */
  bool changed = false;
  for (int k = 0; k < URTP_PS_KINDS; k++)
    changed |= take_au_list(ps, k);
  if (changed)
    ps->serial++;
  ps->au_mask = 0;
  if (nal_length_size)
    *nal_length_size = ls;
  return 0;
}

/* Exp-Golomb reading of an SPS (after emulation prevention is removed):
 * a read past the end sets bad and gives 0. */
typedef struct bits {
  const uint8_t *p;
  size_t n, pos;
  bool bad;
} bits_t;

static unsigned bits_get(bits_t *b, unsigned n)
{
  unsigned v = 0;
  while (n--) {
    if (b->pos >= b->n * 8) {
      b->bad = true;
      return 0;
    }
    v = v << 1 | ((b->p[b->pos >> 3] >> (7 - (b->pos & 7))) & 1u);
    b->pos++;
  }
  return v;
}

static void bits_skip(bits_t *b, size_t n)
{
  b->pos += n;
  if (b->pos > b->n * 8)
    b->bad = true;
}

static unsigned bits_ue(bits_t *b)
{
  unsigned zeros = 0;
  while (!bits_get(b, 1)) {
    if (b->bad || ++zeros > 31) {
      b->bad = true;
      return 0;
    }
  }
  return zeros ? (1u << zeros) - 1 + bits_get(b, zeros) : 0;
}

/* What a record says of the SPS beyond its profile bytes. */
typedef struct sps_fmt {
  unsigned chroma_format_idc, bit_depth_luma_m8, bit_depth_chroma_m8;
  unsigned max_sub_layers_m1, temporal_id_nesting; /* H.265 */
} sps_fmt_t;

/* Reads sps (with its NAL header) as far as the bit depths: H.264 7.3.2.1.1,
 * H.265 7.3.2.2.1 with profile_tier_level 7.3.3. rbsp holds the unescaped
 * bytes after the header. */
static int read_sps_fmt(urtp_codec_t codec, const uint8_t *sps, size_t len, uint8_t *rbsp,
                        size_t cap, size_t *rbsp_len, sps_fmt_t *f)
{
  size_t hdr = codec == URTP_CODEC_H264 ? 1 : 2;
  if (len <= hdr)
    return -EINVAL;
  size_t n = urtp_rbsp_unescape(sps + hdr, len - hdr, rbsp, cap);
  bits_t b = { rbsp, n, 0, false };
  *rbsp_len = n;
  memset(f, 0, sizeof(*f));
  f->chroma_format_idc = 1;
  if (codec == URTP_CODEC_H264) {
    if (n < 3)
      return -EINVAL;
    unsigned profile = rbsp[0];
    bits_skip(&b, 24);
    bits_ue(&b); /* seq_parameter_set_id */
    if (profile == 100 || profile == 110 || profile == 122 || profile == 244 || profile == 44 ||
        profile == 83 || profile == 86 || profile == 118 || profile == 128 || profile == 138 ||
        profile == 139 || profile == 134 || profile == 135) {
      f->chroma_format_idc = bits_ue(&b);
      if (f->chroma_format_idc == 3)
        bits_skip(&b, 1);
      f->bit_depth_luma_m8 = bits_ue(&b);
      f->bit_depth_chroma_m8 = bits_ue(&b);
    }
  } else {
    /* sps_video_parameter_set_id(4) sps_max_sub_layers_minus1(3)
     * sps_temporal_id_nesting_flag(1), the general profile, tier and
     * level (96 bits), then the sub-layers' presence flags and fields */
    bits_skip(&b, 4);
    f->max_sub_layers_m1 = bits_get(&b, 3);
    f->temporal_id_nesting = bits_get(&b, 1);
    bits_skip(&b, 96);
    unsigned prof = 0, lvl = 0;
    for (unsigned i = 0; i < f->max_sub_layers_m1; i++) {
      prof |= bits_get(&b, 1) << i;
      lvl |= bits_get(&b, 1) << i;
    }
    if (f->max_sub_layers_m1 > 0)
      bits_skip(&b, 2 * (8 - f->max_sub_layers_m1));
    for (unsigned i = 0; i < f->max_sub_layers_m1; i++)
      bits_skip(&b, ((prof >> i) & 1u ? 88 : 0) + ((lvl >> i) & 1u ? 8 : 0));
    bits_ue(&b); /* sps_seq_parameter_set_id */
    f->chroma_format_idc = bits_ue(&b);
    if (f->chroma_format_idc == 3)
      bits_skip(&b, 1);
    bits_ue(&b); /* pic_width_in_luma_samples */
    bits_ue(&b); /* pic_height_in_luma_samples */
    if (bits_get(&b, 1))
      for (int i = 0; i < 4; i++)
        bits_ue(&b); /* conformance window offsets */
    f->bit_depth_luma_m8 = bits_ue(&b);
    f->bit_depth_chroma_m8 = bits_ue(&b);
    if (n < 13)
      return -EINVAL;
  }
  if (b.bad || f->chroma_format_idc > 3 || f->bit_depth_luma_m8 > 7 || f->bit_depth_chroma_m8 > 7)
    return -EINVAL;
  return 0;
}

/* Appends the sets of kind k, each after its 16-bit length. */
static uint8_t *put_sets(const urtp_params_list_t *l, uint8_t *o)
{
  for (unsigned i = 0; i < l->n; i++) {
    urtp_wr16(o, (uint16_t)l->len[i]);
    memcpy(o + 2, l->buf + l->off[i], l->len[i]);
    o += 2 + l->len[i];
  }
  return o;
}

int urtp_params_record(const urtp_params_t *ps, unsigned nal_length_size, bool ps_in_band,
                       uint8_t *out, size_t cap)
{
  static const int hevc_kinds[] = { URTP_PS_VPS, URTP_PS_SPS, URTP_PS_PPS };
  uint8_t rbsp[256];
  size_t rbsp_len, need, sps_len = 0;
  sps_fmt_t f;
  bool h264 = ps->codec == URTP_CODEC_H264;

  if (!h264 && ps->codec != URTP_CODEC_H265)
    return -ENOTSUP;
  if (nal_length_size != 1 && nal_length_size != 2 && nal_length_size != 4)
    return -EINVAL;
  if (!urtp_params_complete(ps))
    return -EAGAIN;
  for (int k = 0; k < URTP_PS_KINDS; k++)
    for (unsigned i = 0; i < ps->cur[k].n; i++)
      if (ps->cur[k].len[i] > 0xffff)
        return -EINVAL;
  const uint8_t *sps = urtp_params_get(ps, URTP_PS_SPS, 0, &sps_len);
  if (read_sps_fmt(ps->codec, sps, sps_len, rbsp, sizeof(rbsp), &rbsp_len, &f) < 0)
    return -EINVAL;

  if (h264) {
    /* 6 bytes of header and counts, the SPS, a count and the PPS; the
     * High profiles' chroma and bit depth fields (ISO/IEC 14496-15
     * 5.3.3.1.2) after them */
    const urtp_params_list_t *s = &ps->cur[URTP_PS_SPS], *p = &ps->cur[URTP_PS_PPS];
    bool ext = rbsp[0] == 100 || rbsp[0] == 110 || rbsp[0] == 122 || rbsp[0] == 144;
    need = 7 + 2 * (s->n + p->n) + s->used + p->used + (ext ? 4 : 0);
    if (need > cap)
      return (int)need;
    out[0] = 1;
    memcpy(out + 1, rbsp, 3); /* profile_idc, constraint flags, level_idc */
    out[4] = (uint8_t)(0xfc | (nal_length_size - 1));
    out[5] = (uint8_t)(0xe0 | s->n);
    uint8_t *o = put_sets(s, out + 6);
    *o++ = (uint8_t)p->n;
    o = put_sets(p, o);
    if (ext) {
      *o++ = (uint8_t)(0xfc | f.chroma_format_idc);
      *o++ = (uint8_t)(0xf8 | f.bit_depth_luma_m8);
      *o++ = (uint8_t)(0xf8 | f.bit_depth_chroma_m8);
      *o++ = 0; /* numOfSequenceParameterSetExt */
    }
    return (int)need;
  }

  need = 23;
  for (size_t a = 0; a < 3; a++) {
    const urtp_params_list_t *l = &ps->cur[hevc_kinds[a]];
    need += 3 + 2 * l->n + l->used;
  }
  if (need > cap)
    return (int)need;
  out[0] = 1;
  /* general profile space, tier, profile, compatibility and constraint
   * flags and level: the 12 bytes after the SPS's first */
  memcpy(out + 1, rbsp + 1, 12);
  out[13] = 0xf0; /* min_spatial_segmentation_idc 0: not known */
  out[14] = 0x00;
  out[15] = 0xfc; /* parallelismType 0: not known */
  out[16] = (uint8_t)(0xfc | f.chroma_format_idc);
  out[17] = (uint8_t)(0xf8 | f.bit_depth_luma_m8);
  out[18] = (uint8_t)(0xf8 | f.bit_depth_chroma_m8);
  out[19] = out[20] = 0; /* avgFrameRate: not known */
  /* constantFrameRate 0, numTemporalLayers, temporalIdNested, lengthSizeMinusOne */
  out[21] = (uint8_t)(((f.max_sub_layers_m1 + 1) << 3) | (f.temporal_id_nesting << 2) |
                      (nal_length_size - 1));
  out[22] = 3;
  uint8_t *o = out + 23;
  for (size_t a = 0; a < 3; a++) {
    const urtp_params_list_t *l = &ps->cur[hevc_kinds[a]];
    /* array_completeness: every set of the kind is here, none in band */
    *o++ = (uint8_t)((ps_in_band ? 0 : 0x80) | (32 + a));
    urtp_wr16(o, (uint16_t)l->n);
    o = put_sets(l, o + 2);
  }
  return (int)need;
}

/* --- base64 -------------------------------------------------------------- */

static bool b64_char(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

size_t urtp_params_sprop(const urtp_params_t *ps, unsigned mask, char *out, size_t cap)
{
  size_t need = 0;
  bool first = true;
  for (int k = 0; k < URTP_PS_KINDS; k++) {
    if (!(mask & URTP_PS_BIT(k)))
      continue;
    for (unsigned i = 0; i < ps->cur[k].n; i++) {
      need += (first ? 0 : 1) + 4 * ((ps->cur[k].len[i] + 2) / 3);
      first = false;
    }
  }
  if (cap > 0)
    out[0] = '\0';
  if (need >= cap)
    return need;
  size_t o = 0;
  first = true;
  for (int k = 0; k < URTP_PS_KINDS; k++) {
    if (!(mask & URTP_PS_BIT(k)))
      continue;
    const urtp_params_list_t *l = &ps->cur[k];
    for (unsigned i = 0; i < l->n; i++) {
      if (!first)
        out[o++] = ',';
      first = false;
      /* writes its NUL too, which the next item overwrites */
      o += (size_t)EVP_EncodeBlock((unsigned char *)out + o, l->buf + l->off[i], (int)l->len[i]);
    }
  }
  out[o] = '\0';
  return need;
}

static bool blank(char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Decodes one validated item of n characters (n % 4 != 1, padding only at
 * the end) into out (NULL: measure); returns the bytes. */
static size_t b64_item(const char *s, size_t n, uint8_t *out)
{
  size_t pad = 0;
  while (pad < 2 && n > 0 && s[n - 1] == '=') {
    n--;
    pad++;
  }
  /* n now counts the data characters; whole groups go straight to
   * EVP_DecodeBlock, the unpadded tail through a padded copy, since
   * EVP_DecodeBlock wants whole groups and fills padding with zero bytes. */
  size_t whole = n / 4 * 4, tail = n - whole;
  size_t bytes = whole / 4 * 3 + (tail ? tail - 1 : 0);
  if (!out)
    return bytes;
  if (whole)
    EVP_DecodeBlock(out, (const unsigned char *)s, (int)whole);
  if (tail) {
    unsigned char grp[4] = { '=', '=', '=', '=' }, dec[3];
    memcpy(grp, s + whole, tail);
    EVP_DecodeBlock(dec, grp, 4);
    memcpy(out + whole / 4 * 3, dec, tail - 1);
  }
  return bytes;
}

int urtp_sprop_decode(const char *text, size_t len, uint8_t *out, size_t cap)
{
  size_t o = 0, i = 0;
  while (i <= len) {
    size_t e = i;
    while (e < len && text[e] != ',')
      e++;
    size_t a = i, b = e;
    while (a < b && blank(text[a]))
      a++;
    while (b > a && blank(text[b - 1]))
      b--;
    size_t n = b - a;
    if (n) {
      const char *s = text + a;
      size_t data = n;
      while (data > 0 && n - data < 2 && s[data - 1] == '=')
        data--;
      for (size_t k = 0; k < data; k++)
        if (!b64_char(s[k]))
          return -EINVAL;
      if (data % 4 == 1 || (data < n && n % 4 != 0))
        return -EINVAL; /* 6 bits left over, or padding that does not pad */
      size_t bytes = b64_item(s, n, NULL);
      if (out) {
        if (cap - o < 4 + bytes)
          return -ENOSPC;
        static const uint8_t sc[4] = { 0, 0, 0, 1 };
        memcpy(out + o, sc, 4);
        b64_item(s, n, out + o + 4);
      }
      o += 4 + bytes;
      if (o > INT32_MAX)
        return -EINVAL;
    }
    i = e + 1;
  }
  return (int)o;
}

/* --- SPS fields ---------------------------------------------------------- */

size_t urtp_rbsp_unescape(const uint8_t *src, size_t len, uint8_t *dst, size_t cap)
{
  size_t o = 0;
  unsigned zeros = 0;
  for (size_t i = 0; i < len && o < cap; i++) {
    if (zeros >= 2 && src[i] == 3) {
      zeros = 0;
      continue;
    }
    dst[o++] = src[i];
    zeros = src[i] == 0 ? zeros + 1 : 0;
  }
  return o;
}

int urtp_h264_profile_level_id(const uint8_t *sps, size_t len, uint8_t out[3])
{
  if (len < 1 || (sps[0] & 0x1f) != 7)
    return -EINVAL;
  /* profile_idc, constraint_set flags, level_idc follow the NAL header */
  if (urtp_rbsp_unescape(sps + 1, len - 1, out, 3) != 3)
    return -EINVAL;
  return 0;
}

int urtp_h26x_sps_ptl(urtp_codec_t codec, const uint8_t *sps, size_t len, urtp_ptl_t *out)
{
  const urtp_h26x_desc_t *d = urtp_h26x_desc(codec);
  uint8_t rbsp[16];
  if (!d || codec == URTP_CODEC_H264 || len < 2 ||
      urtp_ps_kind(codec, urtp_h26x_type(d, sps)) != URTP_PS_SPS)
    return -EINVAL;
  size_t n = urtp_rbsp_unescape(sps + 2, len - 2, rbsp, sizeof(rbsp));
  if (codec == URTP_CODEC_H265) {
    /* sps_video_parameter_set_id(4) sps_max_sub_layers_minus1(3)
     * sps_temporal_id_nesting_flag(1) | general_profile_space(2)
     * general_tier_flag(1) general_profile_idc(5) | 32 compatibility flags
     * | 48 constraint flags | general_level_idc */
    if (n < 13 || (rbsp[1] >> 6) != 0)
      return -EINVAL;
    out->tier_flag = (rbsp[1] >> 5) & 1u;
    out->profile_id = rbsp[1] & 0x1fu;
    out->level_id = rbsp[12];
    return 0;
  }
  /* sps_seq_parameter_set_id(4) sps_video_parameter_set_id(4) |
   * sps_max_sublayers_minus1(3) sps_chroma_format_idc(2)
   * sps_log2_ctu_size_minus5(2) sps_ptl_dpb_hrd_params_present_flag(1) |
   * general_profile_idc(7) general_tier_flag(1) | general_level_idc */
  if (n < 4 || !(rbsp[1] & 1))
    return -EINVAL;
  out->profile_id = rbsp[2] >> 1;
  out->tier_flag = rbsp[2] & 1u;
  out->level_id = rbsp[3];
  return 0;
}
