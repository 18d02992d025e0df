/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * augen.h - deterministic generator of 4K video access units for benchmarks.
 *
 * Stands in for an encoder: it makes Annex-B access units (4-byte start
 * codes) with the NAL structure and frame sizes of a 4K H.265 stream like
 * the one in the uvgRTP papers (3840x2160, intra period 64, about 165 Mbit/s
 * at 30 fps, so ~690 KB per access unit on average, intra pictures several
 * times larger than inter pictures), or the H.264 / H.266 equivalent.
 *
 * Promises:
 *  - Same configuration, same bytes (xorshift64* from cfg.seed).
 *  - H.265: VPS, SPS and PPS before every intra picture, valid for
 *    3840x2160 Main (h265parse accepts them); each picture is cfg.slices
 *    slice segment NAL units (IDR_W_RADL for intra, TRAIL_R for inter)
 *    whose headers parse (first_slice_segment_in_pic_flag, address, POC,
 *    reference set); slice data is pseudo-random.
 *  - H.264: SPS and PPS before every IDR, IDR / non-IDR slices with valid
 *    headers. H.266: SPS and PPS before every intra picture, a picture
 *    header NAL unit, then IDR_W_RADL / TRAIL slices; the H.266 parameter
 *    set and slice bodies are pseudo-random (only NAL headers are real).
 *  - Emulation prevention is applied to every NAL unit, and every NAL unit
 *    ends in a non-zero byte, so no start code appears inside one.
 *  - Every access unit ends in a 6-byte stamp: 5 bytes 0x80|7 bits of an
 *    index, then 0x80. augen_stamp() rewrites it in place; a receiver reads
 *    it back from the last 6 bytes of what it got (augen_read_stamp()) and
 *    knows by index which access unit, hence which size, to expect.
 */
#ifndef AUGEN_H
#define AUGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum augen_codec {
  AUGEN_H264,
  AUGEN_H265,
  AUGEN_H266,
} augen_codec_t;

typedef struct augen_config {
  augen_codec_t codec;
  unsigned width, height;   /* only in the parameter sets and slice addresses */
  unsigned fps;             /* nominal rate the bitrate refers to */
  uint64_t bitrate;         /* bits per second at fps */
  unsigned intra_period;    /* pictures from one intra picture to the next */
  double intra_ratio;       /* intra picture size / mean inter picture size */
  double inter_spread;      /* inter sizes uniform in mean * [1-s, 1+s] */
  unsigned slices;          /* slice NAL units per picture */
  unsigned frames;          /* distinct access units to make (0: intra_period) */
  uint64_t seed;
} augen_config_t;

typedef struct augen_au {
  uint8_t *data;
  size_t size;
  bool intra;
} augen_au_t;

typedef struct augen {
  augen_config_t cfg;
  augen_au_t *aus;
  size_t n;
  size_t max_size;          /* largest access unit */
  uint64_t total;           /* bytes of all n access units */
} augen_t;

#define AUGEN_STAMP_LEN 6

/* 4K H.265-like defaults for the codec: 3840x2160, 30 fps, 165 Mbit/s,
 * intra period 64, intra ratio 5, inter spread 0.25, 8 slices, seed 1. */
void augen_config_default(augen_config_t *cfg, augen_codec_t codec);

/* Makes cfg->frames access units. Returns 0, -EINVAL or -ENOMEM. */
int augen_init(augen_t *g, const augen_config_t *cfg);

/* Takes over already-made access units (e.g. from an encoder) instead of
 * generating them; each gets a stamp appended in a NAL unit of its own (a
 * suffix SEI for H.265, user data unregistered). aus[i].data is copied. */
int augen_init_from(augen_t *g, augen_codec_t codec, const augen_au_t *aus, size_t n);

void augen_free(augen_t *g);

/* Writes index (35 bits kept) into the stamp at the end of au. */
void augen_stamp(uint8_t *au, size_t size, uint64_t index);

/* Reads the stamp from the last AUGEN_STAMP_LEN bytes of an access unit.
 * Returns 0, or -EINVAL if they are not a stamp. */
int augen_read_stamp(const uint8_t *tail, uint64_t *index);

/* Size access unit `index` has when stamped and sent (index modulo n). */
static inline size_t augen_size_of(const augen_t *g, uint64_t index)
{
  return g->aus[index % g->n].size;
}

const char *augen_codec_name(augen_codec_t codec);
int augen_codec_parse(const char *name, augen_codec_t *codec);

#endif
