/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * NAL unit headers:
 *   H.264 (1 byte):  |F|NRI|  Type   |
 *   H.265 (2 bytes): |F|   Type    |  LayerId  | TID |
 *   H.266 (2 bytes): |F|Z| LayerId   |  Type   | TID |
 */
/*
 * Aggregation header rules: F is the OR of the units' F bits (RFC 6184 5.7.1,
 * RFC 7798 4.4.2, RFC 9328 4.3.2); H.264's NRI is the largest of the units';
 * H.265 and H.266 take the lowest LayerId and the lowest TID.
 */
static const urtp_h26x_desc_t descs[] = {
  [URTP_CODEC_H264] = { URTP_CODEC_H264, 1, 0, 0, 0x1f, 24, 28, 0x1f, -1, 0,
                        0x8000, 0x6000, { 0, 0 } },
  [URTP_CODEC_H265] = { URTP_CODEC_H265, 2, 0, 1, 0x3f, 48, 49, 0x3f, 50, 0,
                        0x8000, 0, { 0x01f8, 0x0007 } },
  [URTP_CODEC_H266] = { URTP_CODEC_H266, 2, 1, 3, 0x1f, 28, 29, 0x1f, -1, 0x20,
                        0x8000, 0, { 0x3f00, 0x0007 } },
};

const urtp_h26x_desc_t *urtp_h26x_desc(urtp_codec_t codec)
{
  return codec <= URTP_CODEC_H266 ? &descs[codec] : NULL;
}

void urtp_h26x_write_hdr(const urtp_h26x_desc_t *d, uint8_t *dst, const uint8_t *tmpl,
                         unsigned type)
{
  uint8_t mask = (uint8_t)(d->type_mask << d->type_shift);
  for (unsigned i = 0; i < d->hdr_len; i++)
    dst[i] = tmpl[i];
  dst[d->type_byte] = (uint8_t)((tmpl[d->type_byte] & ~mask) | ((type << d->type_shift) & mask));
}

bool urtp_h26x_is_vcl(const urtp_h26x_desc_t *d, unsigned type)
{
  switch (d->codec) {
  case URTP_CODEC_H264: return type >= 1 && type <= 5;
  case URTP_CODEC_H265: return type <= 31;
  case URTP_CODEC_H266: return type <= 11;
  default: return false;
  }
}

bool urtp_h26x_is_param_set(const urtp_h26x_desc_t *d, unsigned type)
{
  switch (d->codec) {
  case URTP_CODEC_H264: return type == 7 || type == 8;
  case URTP_CODEC_H265: return type >= 32 && type <= 34;
  case URTP_CODEC_H266: return type >= 13 && type <= 16;
  default: return false;
  }
}

bool urtp_h26x_is_keyframe(const urtp_h26x_desc_t *d, unsigned type)
{
  switch (d->codec) {
  case URTP_CODEC_H264: return type == 5;
  case URTP_CODEC_H265: return type >= 16 && type <= 23;
  case URTP_CODEC_H266: return type >= 7 && type <= 10;
  default: return false;
  }
}

bool urtp_h26x_starts_au(const urtp_h26x_desc_t *d, unsigned type, const uint8_t *body,
                         size_t len)
{
  /* a slice: the first bit of its header says whether it is the picture's
   * first (H.264 first_mb_in_slice == 0 as ue(v) is a single 1 bit; H.265
   * first_slice_segment_in_pic_flag; H.266 sh_picture_header_in_slice_header_flag) */
  if (urtp_h26x_is_vcl(d, type))
    return len > 0 && (body[0] & 0x80);
  switch (d->codec) {
  case URTP_CODEC_H264: /* SEI, SPS, PPS, AUD, prefix NAL, subset SPS */
    return type == 6 || type == 7 || type == 8 || type == 9 || type == 14 || type == 15;
  case URTP_CODEC_H265: /* VPS, SPS, PPS, AUD, prefix SEI */
    return (type >= 32 && type <= 35) || type == 39;
  case URTP_CODEC_H266: /* OPI, DCI, VPS, SPS, PPS, prefix APS, PH, AUD, prefix SEI */
    return (type >= 12 && type <= 17) || type == 19 || type == 20 || type == 23;
  default:
    return false;
  }
}

unsigned urtp_opus_packet_samples(const uint8_t *data, size_t len)
{
  /* RFC 6716 3.1: the TOC byte's configuration gives the frame duration
   * (SILK 10/20/40/60 ms, hybrid 10/20, CELT 2.5/5/10/20), its code the
   * frame count (3: in the next byte) */
  static const unsigned silk[4] = { 480, 960, 1920, 2880 };
  if (len < 1)
    return 0;
  unsigned config = data[0] >> 3, frame, frames;
  if (config < 12)
    frame = silk[config & 3];
  else if (config < 16)
    frame = (config & 1) ? 960 : 480;
  else
    frame = 120u << (config & 3);
  switch (data[0] & 3) {
  case 0: frames = 1; break;
  case 1:
  case 2: frames = 2; break;
  default:
    if (len < 2)
      return 0;
    frames = data[1] & 0x3f;
    break;
  }
  /* at most 120 ms a packet */
  if (frames == 0 || frame * frames > 5760)
    return 0;
  return frame * frames;
}

uint32_t urtp_codec_clock_rate(urtp_codec_t codec)
{
  return codec == URTP_CODEC_OPUS ? 48000 : 90000;
}

static const char *const names[] = {
  [URTP_CODEC_H264] = "H264",
  [URTP_CODEC_H265] = "H265",
  [URTP_CODEC_H266] = "H266",
  [URTP_CODEC_OPUS] = "OPUS",
};

const char *urtp_codec_name(urtp_codec_t codec)
{
  return codec <= URTP_CODEC_OPUS ? names[codec] : "unknown";
}

int urtp_codec_from_name(const char *name, urtp_codec_t *out)
{
  for (unsigned i = 0; i <= URTP_CODEC_OPUS; i++) {
    if (name && strcasecmp(name, names[i]) == 0) {
      *out = (urtp_codec_t)i;
      return 0;
    }
  }
  return -EINVAL;
}

bool urtp_opus_multi_valid(const urtp_opus_multi_t *m)
{
  if (m->channels < 1 || m->channels > 255 || m->streams < 1 || m->coupled > m->streams ||
      m->streams + m->coupled > 255)
    return false;
  for (unsigned i = 0; i < m->channels; i++)
    if (m->mapping[i] != 255 && m->mapping[i] >= m->streams + m->coupled)
      return false;
  return true;
}

int urtp_opus_multi_parse_mapping(urtp_opus_multi_t *m, const char *list)
{
  unsigned n = 0;
  const char *p = list;
  while (*p) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0 || v > 255 || n == 255)
      return -EINVAL;
    m->mapping[n++] = (uint8_t)v;
    p = end;
    while (*p == ' ')
      p++;
    if (*p == ',')
      p++;
    else if (*p)
      return -EINVAL;
  }
  if (n == 0 || (m->channels && m->channels != n))
    return -EINVAL;
  m->channels = n;
  return 0;
}

size_t urtp_opus_multi_format_mapping(const urtp_opus_multi_t *m, char *out, size_t cap)
{
  size_t n = 0;
  for (unsigned i = 0; i < m->channels; i++) {
    char item[8];
    int l = snprintf(item, sizeof item, i ? ",%u" : "%u", (unsigned)m->mapping[i]);
    if (out && n + (size_t)l < cap)
      memcpy(out + n, item, (size_t)l);
    n += (size_t)l;
  }
  if (out && cap)
    out[n < cap ? n : cap - 1] = 0;
  return n;
}
