/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/au.h"

#include <errno.h>

int urtp_au_split_init(urtp_au_split_t *s, urtp_codec_t codec)
{
  s->desc = urtp_h26x_desc(codec);
  s->vcl_seen = false;
  return s->desc ? 0 : -EINVAL;
}

bool urtp_h26x_is_aud(const urtp_h26x_desc_t *d, unsigned type)
{
  switch (d->codec) {
  case URTP_CODEC_H264: return type == 9;
  case URTP_CODEC_H265: return type == 35;
  case URTP_CODEC_H266: return type == 20;
  default: return false;
  }
}

/* Non-VCL NAL unit types that, after a picture, begin the next access unit. */
static bool starts_after_vcl(urtp_codec_t codec, unsigned t)
{
  switch (codec) {
  case URTP_CODEC_H264:
    /* SEI, SPS, PPS, AUD, prefix, subset SPS, DPS, reserved 17..18 */
    return (t >= 6 && t <= 9) || (t >= 14 && t <= 18);
  case URTP_CODEC_H265:
    /* VPS, SPS, PPS, AUD, prefix SEI, reserved 41..44, unspecified 48..55 */
    return (t >= 32 && t <= 35) || t == 39 || (t >= 41 && t <= 44) || (t >= 48 && t <= 55);
  case URTP_CODEC_H266:
    /* DCI, VPS, SPS, PPS, prefix APS, picture header, AUD, prefix SEI,
     * reserved 26 */
    return (t >= 13 && t <= 17) || t == 19 || t == 20 || t == 23 || t == 26;
  default:
    return false;
  }
}

bool urtp_au_split_next(urtp_au_split_t *s, const uint8_t *nal, size_t len)
{
  const urtp_h26x_desc_t *d = s->desc;
  if (len < d->hdr_len)
    return false;
  unsigned t = urtp_h26x_type(d, nal);
  if (!urtp_h26x_is_vcl(d, t)) {
    bool start = s->vcl_seen && starts_after_vcl(d->codec, t);
    if (start)
      s->vcl_seen = false;
    return start;
  }
  /* The slice header's first bit (a '1' is ue(v) 0 for H.264); a slice
   * without header bytes is taken as continuing its picture. */
  bool first = len > d->hdr_len && (nal[d->hdr_len] & 0x80);
  bool start = s->vcl_seen && first;
  s->vcl_seen = true;
  return start;
}
