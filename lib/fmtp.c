/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/fmtp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/params.h"

void urtp_fmtp_init(urtp_fmtp_t *f, urtp_codec_t codec)
{
  memset(f, 0, sizeof *f);
  f->codec = codec;
}

void urtp_fmtp_clear(urtp_fmtp_t *f)
{
  for (int k = 0; k < URTP_FMTP_KINDS; k++)
    free(f->sets[k]);
  urtp_fmtp_init(f, f->codec);
}

/* A whole decimal number, or false. */
static bool parse_long(const char *s, long *out)
{
  char *end;
  if (!s || !*s)
    return false;
  *out = strtol(s, &end, 10);
  return *end == '\0';
}

static int set_sprop(urtp_fmtp_t *f, int kind, const char *name, const char *value, char *why,
                     size_t why_len)
{
  int n = urtp_sprop_decode(value, strlen(value), NULL, 0);
  if (n < 0) {
    if (why)
      snprintf(why, why_len, "%s is not a comma-separated list of base64 parameter sets", name);
    return -EINVAL;
  }
  uint8_t *p = realloc(f->sets[kind], (size_t)n + 1);
  if (!p)
    return -ENOMEM;
  urtp_sprop_decode(value, strlen(value), p, (size_t)n);
  f->sets[kind] = p;
  f->sets_len[kind] = (size_t)n;
  return 0;
}

int urtp_fmtp_set(urtp_fmtp_t *f, const char *name, const char *value, char *why,
                  size_t why_len)
{
  static const struct {
    const char *name;
    int kind;
  } sprops[] = {
    { "sprop-dci", URTP_FMTP_DCI }, { "sprop-vps", URTP_FMTP_VPS },
    { "sprop-sps", URTP_FMTP_SPS }, { "sprop-pps", URTP_FMTP_PPS },
  };
  long v;
  bool h26x = f->codec != URTP_CODEC_OPUS;
  if (!value)
    return 0;
  if (f->codec == URTP_CODEC_H264 && strcmp(name, "sprop-parameter-sets") == 0)
    return set_sprop(f, URTP_FMTP_SPS, name, value, why, why_len);
  for (size_t i = 0; h26x && f->codec != URTP_CODEC_H264 && i < sizeof sprops / sizeof *sprops;
       i++) {
    if (strcmp(name, sprops[i].name) == 0 &&
        (sprops[i].kind != URTP_FMTP_DCI || f->codec == URTP_CODEC_H266))
      return set_sprop(f, sprops[i].kind, name, value, why, why_len);
  }
  if (strcmp(name, "sprop-max-don-diff") == 0 && parse_long(value, &v) && v > 0) {
    if (f->codec != URTP_CODEC_H265) {
      if (why)
        snprintf(why, why_len,
                 "sprop-max-don-diff=%ld for %s: decoding order numbers are only supported "
                 "for H.265",
                 v, urtp_codec_name(f->codec));
      return -ENOTSUP;
    }
    f->donl = true;
  } else if (f->codec == URTP_CODEC_H264 && strcmp(name, "packetization-mode") == 0 &&
             parse_long(value, &v) && v == 2) {
    if (why)
      snprintf(why, why_len, "packetization-mode=2: H.264 interleaved mode is not supported");
    return -ENOTSUP;
  } else if (f->codec == URTP_CODEC_OPUS && strcmp(name, "sprop-stereo") == 0) {
    f->channels = strcmp(value, "1") == 0 ? 2 : 1;
  } else if (f->codec == URTP_CODEC_OPUS && (strcmp(name, "num_streams") == 0 ||
                                              strcmp(name, "coupled_streams") == 0 ||
                                              strcmp(name, "encoding-params") == 0)) {
    if (!parse_long(value, &v) || v < 0 || v > 255) {
      if (why)
        snprintf(why, why_len, "%s=%s: not a number of 0 to 255", name, value);
      return -EINVAL;
    }
    if (name[0] == 'n')
      f->multi.streams = (unsigned)v;
    else if (name[0] == 'c')
      f->multi.coupled = (unsigned)v;
    else if (f->multi.channels && f->multi.channels != (unsigned)v)
      goto mapping_mismatch;
    else
      f->multi.channels = (unsigned)v;
  } else if (f->codec == URTP_CODEC_OPUS && strcmp(name, "channel_mapping") == 0) {
    if (urtp_opus_multi_parse_mapping(&f->multi, value) < 0)
      goto mapping_mismatch;
  } else if (f->codec == URTP_CODEC_OPUS && strcmp(name, "sprop-maxcapturerate") == 0 &&
             parse_long(value, &v) && v > 0 && v <= 192000) {
    f->rate = (unsigned)v;
  }
  return 0;

mapping_mismatch:
  if (why)
    snprintf(why, why_len, "%s=%s: not a list of 0 to 255 for each channel", name, value);
  return -EINVAL;
}

size_t urtp_fmtp_params(const urtp_fmtp_t *f, uint8_t *out)
{
  size_t n = 0;
  for (int k = 0; k < URTP_FMTP_KINDS; k++) {
    if (out && f->sets_len[k])
      memcpy(out + n, f->sets[k], f->sets_len[k]);
    n += f->sets_len[k];
  }
  return n;
}
