/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * augen.c - see augen.h. Parameter sets and slice headers are written bit by
 * bit into an RBSP, then everything goes through one emulation-prevention
 * writer, so header bytes and random slice data alike are escaped.
 */
#include "augen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ---------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, 1). */
static double rng_unit(uint64_t *s)
{
  return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- RBSP bit writer --------------------------------------------------- */

typedef struct bw {
  uint8_t buf[256];
  size_t bits;
} bw_t;

static void bw_u(bw_t *w, unsigned n, uint64_t v)
{
  while (n-- > 0) {
    if ((v >> n) & 1)
      w->buf[w->bits >> 3] |= (uint8_t)(0x80u >> (w->bits & 7));
    w->bits++;
  }
}

static void bw_ue(bw_t *w, uint32_t v)
{
  uint64_t x = (uint64_t)v + 1;
  unsigned len = 64 - (unsigned)__builtin_clzll(x);
  bw_u(w, len - 1, 0);
  bw_u(w, len, x);
}

static void bw_se(bw_t *w, int32_t v)
{
  bw_ue(w, v > 0 ? (uint32_t)(2 * v - 1) : (uint32_t)(-2 * (int64_t)v));
}

/* rbsp_trailing_bits() and byte_alignment(): a one, then zeros. */
static void bw_trailing(bw_t *w)
{
  bw_u(w, 1, 1);
  while (w->bits & 7)
    bw_u(w, 1, 0);
}

/* H.264 CABAC slice data starts byte aligned with one bits. */
static void bw_align_ones(bw_t *w)
{
  while (w->bits & 7)
    bw_u(w, 1, 1);
}

static size_t bw_bytes(const bw_t *w)
{
  return (w->bits + 7) >> 3;
}

/* ---- emulation-prevention writer -------------------------------------- */

typedef struct ew {
  uint8_t *p;
  size_t len;
  unsigned zeros;   /* zero bytes just written */
} ew_t;

static void ew_start_code(ew_t *w)
{
  static const uint8_t sc[4] = { 0, 0, 0, 1 };
  memcpy(w->p + w->len, sc, 4);
  w->len += 4;
  w->zeros = 0;
}

static void ew_byte(ew_t *w, uint8_t b)
{
  if (w->zeros >= 2 && b <= 3) {
    w->p[w->len++] = 3;
    w->zeros = 0;
  }
  w->p[w->len++] = b;
  w->zeros = b ? 0 : w->zeros + 1;
}

static void ew_bytes(ew_t *w, const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++)
    ew_byte(w, b[i]);
}

/* Random bytes until the NAL unit reaches `end` bytes of output, the last
 * one non-zero (trailing bits never end in a zero byte). */
static void ew_fill(ew_t *w, size_t end, uint64_t *rng)
{
  uint64_t r = 0;
  unsigned left = 0;
  while (w->len + 1 < end) {
    if (left == 0) {
      r = rng_next(rng);
      left = 8;
    }
    uint8_t b = (uint8_t)r;
    r >>= 8;
    left--;
    /* an escape would overshoot by one: take a byte that needs none */
    if (w->zeros >= 2 && b <= 3 && w->len + 2 >= end)
      b |= 0x10;
    ew_byte(w, b);
  }
  if (w->len < end)
    ew_byte(w, (uint8_t)(0x80 | (rng_next(rng) & 0x7f)));
}

static void ew_nal(ew_t *w, const uint8_t *hdr, size_t hlen, const bw_t *rbsp)
{
  ew_start_code(w);
  ew_bytes(w, hdr, hlen);
  if (rbsp)
    ew_bytes(w, rbsp->buf, bw_bytes(rbsp));
}

/* ---- H.265 ------------------------------------------------------------- */

#define H265_POC_BITS 8

static void h265_ptl(bw_t *w)
{
  bw_u(w, 2, 0);            /* general_profile_space */
  bw_u(w, 1, 1);            /* general_tier_flag: High (165 Mbit/s) */
  bw_u(w, 5, 1);            /* general_profile_idc: Main */
  bw_u(w, 32, 0x60000000);  /* compatible with Main and Main 10 */
  bw_u(w, 1, 1);            /* progressive_source */
  bw_u(w, 1, 0);            /* interlaced_source */
  bw_u(w, 1, 0);            /* non_packed_constraint */
  bw_u(w, 1, 1);            /* frame_only_constraint */
  bw_u(w, 32, 0);           /* 43 reserved bits + 1 */
  bw_u(w, 12, 0);
  bw_u(w, 8, 156);          /* general_level_idc: 5.2 */
}

static void h265_vps(bw_t *w)
{
  bw_u(w, 4, 0);            /* vps_video_parameter_set_id */
  bw_u(w, 1, 1);            /* base_layer_internal */
  bw_u(w, 1, 1);            /* base_layer_available */
  bw_u(w, 6, 0);            /* max_layers_minus1 */
  bw_u(w, 3, 0);            /* max_sub_layers_minus1 */
  bw_u(w, 1, 1);            /* temporal_id_nesting */
  bw_u(w, 16, 0xffff);
  h265_ptl(w);
  bw_u(w, 1, 1);            /* sub_layer_ordering_info_present */
  bw_ue(w, 1);              /* max_dec_pic_buffering_minus1 */
  bw_ue(w, 0);              /* max_num_reorder_pics */
  bw_ue(w, 0);              /* max_latency_increase_plus1 */
  bw_u(w, 6, 0);            /* vps_max_layer_id */
  bw_ue(w, 0);              /* num_layer_sets_minus1 */
  bw_u(w, 1, 0);            /* timing_info_present */
  bw_u(w, 1, 0);            /* extension */
  bw_trailing(w);
}

static void h265_sps(bw_t *w, unsigned width, unsigned height)
{
  bw_u(w, 4, 0);            /* sps_video_parameter_set_id */
  bw_u(w, 3, 0);            /* max_sub_layers_minus1 */
  bw_u(w, 1, 1);            /* temporal_id_nesting */
  h265_ptl(w);
  bw_ue(w, 0);              /* sps_seq_parameter_set_id */
  bw_ue(w, 1);              /* chroma_format_idc: 4:2:0 */
  bw_ue(w, width);
  bw_ue(w, height);
  bw_u(w, 1, 0);            /* conformance_window (sizes are multiples of 8) */
  bw_ue(w, 0);              /* bit_depth_luma_minus8 */
  bw_ue(w, 0);              /* bit_depth_chroma_minus8 */
  bw_ue(w, H265_POC_BITS - 4);
  bw_u(w, 1, 1);            /* sub_layer_ordering_info_present */
  bw_ue(w, 1);
  bw_ue(w, 0);
  bw_ue(w, 0);
  bw_ue(w, 0);              /* log2_min_luma_coding_block_size_minus3: 8 */
  bw_ue(w, 3);              /* ... up to 64x64 CTBs */
  bw_ue(w, 0);              /* log2_min_luma_transform_block_size_minus2 */
  bw_ue(w, 3);
  bw_ue(w, 1);              /* max_transform_hierarchy_depth_inter */
  bw_ue(w, 1);              /* max_transform_hierarchy_depth_intra */
  bw_u(w, 1, 0);            /* scaling_list_enabled */
  bw_u(w, 1, 0);            /* amp_enabled */
  bw_u(w, 1, 0);            /* sample_adaptive_offset_enabled */
  bw_u(w, 1, 0);            /* pcm_enabled */
  bw_ue(w, 1);              /* num_short_term_ref_pic_sets */
  bw_ue(w, 1);              /*   num_negative_pics: the previous picture */
  bw_ue(w, 0);              /*   num_positive_pics */
  bw_ue(w, 0);              /*   delta_poc_s0_minus1 */
  bw_u(w, 1, 1);            /*   used_by_curr_pic_s0 */
  bw_u(w, 1, 0);            /* long_term_ref_pics_present */
  bw_u(w, 1, 0);            /* sps_temporal_mvp_enabled */
  bw_u(w, 1, 0);            /* strong_intra_smoothing_enabled */
  bw_u(w, 1, 0);            /* vui_parameters_present */
  bw_u(w, 1, 0);            /* sps_extension_present */
  bw_trailing(w);
}

static void h265_pps(bw_t *w)
{
  bw_ue(w, 0);              /* pps_pic_parameter_set_id */
  bw_ue(w, 0);              /* pps_seq_parameter_set_id */
  bw_u(w, 1, 0);            /* dependent_slice_segments_enabled */
  bw_u(w, 1, 0);            /* output_flag_present */
  bw_u(w, 3, 0);            /* num_extra_slice_header_bits */
  bw_u(w, 1, 0);            /* sign_data_hiding_enabled */
  bw_u(w, 1, 0);            /* cabac_init_present */
  bw_ue(w, 0);              /* num_ref_idx_l0_default_active_minus1 */
  bw_ue(w, 0);              /* num_ref_idx_l1_default_active_minus1 */
  bw_se(w, 0);              /* init_qp_minus26 */
  bw_u(w, 1, 0);            /* constrained_intra_pred */
  bw_u(w, 1, 0);            /* transform_skip_enabled */
  bw_u(w, 1, 0);            /* cu_qp_delta_enabled */
  bw_se(w, 0);              /* pps_cb_qp_offset */
  bw_se(w, 0);              /* pps_cr_qp_offset */
  bw_u(w, 1, 0);            /* pps_slice_chroma_qp_offsets_present */
  bw_u(w, 1, 0);            /* weighted_pred */
  bw_u(w, 1, 0);            /* weighted_bipred */
  bw_u(w, 1, 0);            /* transquant_bypass_enabled */
  bw_u(w, 1, 0);            /* tiles_enabled */
  bw_u(w, 1, 0);            /* entropy_coding_sync_enabled */
  bw_u(w, 1, 0);            /* loop_filter_across_slices_enabled */
  bw_u(w, 1, 0);            /* deblocking_filter_control_present */
  bw_u(w, 1, 0);            /* pps_scaling_list_data_present */
  bw_u(w, 1, 0);            /* lists_modification_present */
  bw_ue(w, 0);              /* log2_parallel_merge_level_minus2 */
  bw_u(w, 1, 0);            /* slice_segment_header_extension_present */
  bw_u(w, 1, 0);            /* pps_extension_present */
  bw_trailing(w);
}

static unsigned ceil_log2(uint32_t v)
{
  unsigned n = 0;
  while ((1u << n) < v)
    n++;
  return n;
}

static void h265_slice_header(bw_t *w, bool intra, unsigned poc, uint32_t addr, uint32_t ctbs)
{
  bw_u(w, 1, addr == 0);    /* first_slice_segment_in_pic */
  if (intra)
    bw_u(w, 1, 0);          /* no_output_of_prior_pics */
  bw_ue(w, 0);              /* slice_pic_parameter_set_id */
  if (addr != 0)
    bw_u(w, ceil_log2(ctbs), addr);
  bw_ue(w, intra ? 2 : 1);  /* slice_type: I or P */
  if (!intra) {
    bw_u(w, H265_POC_BITS, poc & ((1u << H265_POC_BITS) - 1));
    bw_u(w, 1, 1);          /* short_term_ref_pic_set_sps_flag */
    bw_u(w, 1, 0);          /* num_ref_idx_active_override */
    bw_ue(w, 0);            /* five_minus_max_num_merge_cand */
  }
  bw_se(w, 0);              /* slice_qp_delta */
  bw_trailing(w);           /* byte_alignment() */
}

/* ---- H.264 ------------------------------------------------------------- */

static void h264_sps(bw_t *w, unsigned width, unsigned height)
{
  bw_u(w, 8, 100);          /* profile_idc: High */
  bw_u(w, 8, 0);            /* constraint flags */
  bw_u(w, 8, 52);           /* level 5.2 */
  bw_ue(w, 0);              /* seq_parameter_set_id */
  bw_ue(w, 1);              /* chroma_format_idc */
  bw_ue(w, 0);              /* bit_depth_luma_minus8 */
  bw_ue(w, 0);              /* bit_depth_chroma_minus8 */
  bw_u(w, 1, 0);            /* qpprime_y_zero_transform_bypass */
  bw_u(w, 1, 0);            /* seq_scaling_matrix_present */
  bw_ue(w, 4);              /* log2_max_frame_num_minus4: 8 bits */
  bw_ue(w, 2);              /* pic_order_cnt_type */
  bw_ue(w, 1);              /* max_num_ref_frames */
  bw_u(w, 1, 0);            /* gaps_in_frame_num_allowed */
  bw_ue(w, (width + 15) / 16 - 1);
  bw_ue(w, (height + 15) / 16 - 1);
  bw_u(w, 1, 1);            /* frame_mbs_only */
  bw_u(w, 1, 1);            /* direct_8x8_inference */
  bw_u(w, 1, (height & 15) != 0);   /* frame_cropping */
  if (height & 15) {
    bw_ue(w, 0);
    bw_ue(w, 0);
    bw_ue(w, 0);
    bw_ue(w, (16 - (height & 15)) / 2);
  }
  bw_u(w, 1, 0);            /* vui_parameters_present */
  bw_trailing(w);
}

static void h264_pps(bw_t *w)
{
  bw_ue(w, 0);              /* pic_parameter_set_id */
  bw_ue(w, 0);              /* seq_parameter_set_id */
  bw_u(w, 1, 1);            /* entropy_coding_mode: CABAC */
  bw_u(w, 1, 0);            /* bottom_field_pic_order_in_frame_present */
  bw_ue(w, 0);              /* num_slice_groups_minus1 */
  bw_ue(w, 0);              /* num_ref_idx_l0_default_active_minus1 */
  bw_ue(w, 0);              /* num_ref_idx_l1_default_active_minus1 */
  bw_u(w, 1, 0);            /* weighted_pred */
  bw_u(w, 2, 0);            /* weighted_bipred_idc */
  bw_se(w, 0);              /* pic_init_qp_minus26 */
  bw_se(w, 0);              /* pic_init_qs_minus26 */
  bw_se(w, 0);              /* chroma_qp_index_offset */
  bw_u(w, 1, 1);            /* deblocking_filter_control_present */
  bw_u(w, 1, 0);            /* constrained_intra_pred */
  bw_u(w, 1, 0);            /* redundant_pic_cnt_present */
  bw_trailing(w);
}

static void h264_slice_header(bw_t *w, bool intra, unsigned frame_num, uint32_t first_mb)
{
  bw_ue(w, first_mb);
  bw_ue(w, intra ? 7 : 5);  /* slice_type: all I / all P */
  bw_ue(w, 0);              /* pic_parameter_set_id */
  bw_u(w, 8, frame_num & 0xff);
  if (intra)
    bw_ue(w, 0);            /* idr_pic_id */
  else {
    bw_u(w, 1, 0);          /* num_ref_idx_active_override */
    bw_u(w, 1, 0);          /* ref_pic_list_modification_flag_l0 */
  }
  if (intra) {
    bw_u(w, 1, 0);          /* no_output_of_prior_pics */
    bw_u(w, 1, 0);          /* long_term_reference */
  } else {
    bw_u(w, 1, 0);          /* adaptive_ref_pic_marking_mode */
    bw_ue(w, 0);            /* cabac_init_idc */
  }
  bw_se(w, 0);              /* slice_qp_delta */
  bw_ue(w, 0);              /* disable_deblocking_filter_idc */
  bw_se(w, 0);              /* slice_alpha_c0_offset_div2 */
  bw_se(w, 0);              /* slice_beta_offset_div2 */
  bw_align_ones(w);         /* cabac_alignment_one_bit */
}

/* ---- access units -------------------------------------------------------- */

static void random_body(bw_t *w, size_t n, uint64_t *rng)
{
  for (size_t i = 0; i < n; i++)
    bw_u(w, 8, rng_next(rng) | 0x01);
}

/* Writes the parameter sets that precede an intra picture. */
static void write_param_sets(ew_t *w, const augen_config_t *c, uint64_t *rng)
{
  bw_t b;
  switch (c->codec) {
  case AUGEN_H265: {
    static const uint8_t vps[2] = { 32 << 1, 1 }, sps[2] = { 33 << 1, 1 }, pps[2] = { 34 << 1, 1 };
    memset(&b, 0, sizeof b);
    h265_vps(&b);
    ew_nal(w, vps, 2, &b);
    memset(&b, 0, sizeof b);
    h265_sps(&b, c->width, c->height);
    ew_nal(w, sps, 2, &b);
    memset(&b, 0, sizeof b);
    h265_pps(&b);
    ew_nal(w, pps, 2, &b);
    break;
  }
  case AUGEN_H264: {
    static const uint8_t sps[1] = { 0x67 }, pps[1] = { 0x68 };
    memset(&b, 0, sizeof b);
    h264_sps(&b, c->width, c->height);
    ew_nal(w, sps, 1, &b);
    memset(&b, 0, sizeof b);
    h264_pps(&b);
    ew_nal(w, pps, 1, &b);
    break;
  }
  case AUGEN_H266: {
    /* F|Z|LayerId = 0, then Type << 3 | TemporalId + 1 */
    static const uint8_t sps[2] = { 0, 15 << 3 | 1 }, pps[2] = { 0, 16 << 3 | 1 };
    memset(&b, 0, sizeof b);
    random_body(&b, 40, rng);
    bw_trailing(&b);
    ew_nal(w, sps, 2, &b);
    memset(&b, 0, sizeof b);
    random_body(&b, 10, rng);
    bw_trailing(&b);
    ew_nal(w, pps, 2, &b);
    break;
  }
  }
}

/* Writes access unit `pic` (position in the intra period) of `target` bytes
 * into w; returns its size (== target unless target is too small). */
static size_t write_au(ew_t *w, const augen_config_t *c, unsigned pic, size_t target,
    uint64_t *rng)
{
  bool intra = pic == 0;
  size_t start = w->len;
  if (intra)
    write_param_sets(w, c, rng);
  if (c->codec == AUGEN_H266) {
    static const uint8_t ph[2] = { 0, 19 << 3 | 1 };
    bw_t b;
    memset(&b, 0, sizeof b);
    random_body(&b, 6, rng);
    bw_trailing(&b);
    ew_nal(w, ph, 2, &b);
  }

  size_t used = w->len - start;
  size_t budget = target > used ? target - used : 0;
  unsigned ns = c->slices ? c->slices : 1;
  /* slice shares vary +-30% around the mean */
  double weights[256], sum = 0;
  if (ns > 256)
    ns = 256;
  for (unsigned s = 0; s < ns; s++) {
    weights[s] = 0.7 + 0.6 * rng_unit(rng);
    sum += weights[s];
  }

  uint32_t units;       /* addressable units: CTBs (H.265) or macroblocks */
  if (c->codec == AUGEN_H264)
    units = ((c->width + 15) / 16) * ((c->height + 15) / 16);
  else
    units = ((c->width + 63) / 64) * ((c->height + 63) / 64);

  size_t left = budget;
  for (unsigned s = 0; s < ns; s++) {
    size_t sz = s + 1 == ns ? left : (size_t)((double)budget * weights[s] / sum);
    if (sz > left)
      sz = left;
    if (sz < 64)
      sz = 64;    /* room for start code, headers and the stamp */
    left = left > sz ? left - sz : 0;

    bw_t b;
    memset(&b, 0, sizeof b);
    uint8_t hdr[2];
    size_t hlen = 2;
    uint32_t addr = (uint32_t)((uint64_t)units * s / ns);
    switch (c->codec) {
    case AUGEN_H265: {
      unsigned type = intra ? 19 : 1;   /* IDR_W_RADL : TRAIL_R */
      hdr[0] = (uint8_t)(type << 1);
      hdr[1] = 1;
      h265_slice_header(&b, intra, pic, addr, units);
      break;
    }
    case AUGEN_H264:
      hdr[0] = intra ? 0x65 : 0x41;     /* IDR nri 3 : non-IDR nri 2 */
      hlen = 1;
      h264_slice_header(&b, intra, pic, addr);
      break;
    case AUGEN_H266: {
      unsigned type = intra ? 7 : 0;    /* IDR_W_RADL : TRAIL */
      hdr[0] = 0;
      hdr[1] = (uint8_t)(type << 3 | 1);
      random_body(&b, 4, rng);
      bw_trailing(&b);
      break;
    }
    }
    size_t nal_start = w->len;
    ew_nal(w, hdr, hlen, &b);
    bool last = s + 1 == ns;
    size_t end = nal_start + sz - (last ? AUGEN_STAMP_LEN : 0);
    ew_fill(w, end, rng);
    if (last) {
      /* placeholder stamp; augen_init writes the real index */
      for (int i = 0; i < AUGEN_STAMP_LEN; i++)
        w->p[w->len++] = 0x80;
      w->zeros = 0;
    }
  }
  return w->len - start;
}

void augen_config_default(augen_config_t *cfg, augen_codec_t codec)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->codec = codec;
  cfg->width = 3840;
  cfg->height = 2160;
  cfg->fps = 30;
  cfg->bitrate = 165000000;
  cfg->intra_period = 64;
  cfg->intra_ratio = 5.0;
  cfg->inter_spread = 0.25;
  cfg->slices = 8;
  cfg->frames = 0;
  cfg->seed = 1;
}

static int alloc_aus(augen_t *g, size_t n, size_t bytes)
{
  g->aus = calloc(n, sizeof *g->aus);
  uint8_t *mem = malloc(bytes ? bytes : 1);
  if (!g->aus || !mem) {
    free(g->aus);
    free(mem);
    g->aus = NULL;
    return -ENOMEM;
  }
  g->aus[0].data = mem;   /* one block; aus[0].data is what gets freed */
  g->n = n;
  return 0;
}

int augen_init(augen_t *g, const augen_config_t *cfg)
{
  memset(g, 0, sizeof *g);
  if (!cfg->width || !cfg->height || !cfg->fps || !cfg->bitrate || !cfg->intra_period ||
      cfg->intra_ratio <= 0 || cfg->inter_spread < 0 || cfg->inter_spread >= 1 ||
      !cfg->slices || cfg->slices > 256)
    return -EINVAL;
  g->cfg = *cfg;
  size_t n = cfg->frames ? cfg->frames : cfg->intra_period;
  g->cfg.frames = (unsigned)n;

  uint64_t rng = cfg->seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
  if (!rng)
    rng = 1;
  /* mean picture size so that the average over an intra period matches */
  double mean = (double)cfg->bitrate / 8.0 / cfg->fps;
  double inter = mean * cfg->intra_period / (cfg->intra_ratio + cfg->intra_period - 1);
  size_t *targets = malloc(n * sizeof *targets);
  if (!targets)
    return -ENOMEM;
  double *f = malloc(n * sizeof *f), fsum = 0;
  size_t ninter = 0;
  if (!f) {
    free(targets);
    return -ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    f[i] = 1.0 - cfg->inter_spread + 2 * cfg->inter_spread * rng_unit(&rng);
    if (i % cfg->intra_period) {
      fsum += f[i];
      ninter++;
    }
  }
  /* inter factors average exactly 1, so the mean size is exact */
  double norm = ninter ? (double)ninter / fsum : 1.0;
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned pic = (unsigned)(i % cfg->intra_period);
    double sz = pic == 0 ? inter * cfg->intra_ratio : inter * f[i] * norm;
    targets[i] = (size_t)sz;
    /* slack: parameter sets and minimum slice sizes may exceed a tiny target */
    bytes += targets[i] + 512 + 64 * (size_t)cfg->slices;
  }
  free(f);
  int err = alloc_aus(g, n, bytes);
  if (err) {
    free(targets);
    return err;
  }
  ew_t w = { .p = g->aus[0].data, .len = 0, .zeros = 0 };
  for (size_t i = 0; i < n; i++) {
    unsigned pic = (unsigned)(i % cfg->intra_period);
    size_t off = w.len;
    size_t sz = write_au(&w, cfg, pic, targets[i], &rng);
    g->aus[i].data = g->aus[0].data + off;
    g->aus[i].size = sz;
    g->aus[i].intra = pic == 0;
    augen_stamp(g->aus[i].data, sz, i);
    g->total += sz;
    if (sz > g->max_size)
      g->max_size = sz;
  }
  free(targets);
  return 0;
}

/* Stamp NAL unit appended to foreign access units: SEI, user data
 * unregistered (payload type 5), 16-byte UUID then the stamp. */
static const uint8_t stamp_uuid[16] = "uvgrtp-bench-au!";

int augen_init_from(augen_t *g, augen_codec_t codec, const augen_au_t *aus, size_t n)
{
  memset(g, 0, sizeof *g);
  if (!n)
    return -EINVAL;
  augen_config_default(&g->cfg, codec);
  g->cfg.frames = (unsigned)n;
  uint8_t hdr[2];
  size_t hlen;
  switch (codec) {
  case AUGEN_H265:
    hdr[0] = 40 << 1;     /* SUFFIX_SEI_NUT */
    hdr[1] = 1;
    hlen = 2;
    break;
  case AUGEN_H266:
    hdr[0] = 0;
    hdr[1] = 24 << 3 | 1; /* SUFFIX_SEI_NUT */
    hlen = 2;
    break;
  default:
    hdr[0] = 0x06;        /* SEI */
    hlen = 1;
    break;
  }
  const size_t extra = 4 + hlen + 2 + sizeof stamp_uuid + AUGEN_STAMP_LEN;
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++)
    bytes += aus[i].size + extra;
  int err = alloc_aus(g, n, bytes);
  if (err)
    return err;
  uint8_t *p = g->aus[0].data;
  for (size_t i = 0; i < n; i++) {
    g->aus[i].data = p;
    memcpy(p, aus[i].data, aus[i].size);
    size_t o = aus[i].size;
    /* the input may end in trailing zero bytes; keep them, they precede a
     * 4-byte start code harmlessly */
    p[o++] = 0;
    p[o++] = 0;
    p[o++] = 0;
    p[o++] = 1;
    memcpy(p + o, hdr, hlen);
    o += hlen;
    p[o++] = 5;                                              /* payloadType */
    p[o++] = (uint8_t)(sizeof stamp_uuid + AUGEN_STAMP_LEN - 1);  /* payloadSize */
    memcpy(p + o, stamp_uuid, sizeof stamp_uuid);
    o += sizeof stamp_uuid;
    o += AUGEN_STAMP_LEN;
    g->aus[i].size = o;
    g->aus[i].intra = aus[i].intra;
    augen_stamp(p, o, i);
    g->total += o;
    if (o > g->max_size)
      g->max_size = o;
    p += o;
  }
  return 0;
}

void augen_free(augen_t *g)
{
  if (g->aus)
    free(g->aus[0].data);
  free(g->aus);
  memset(g, 0, sizeof *g);
}

void augen_stamp(uint8_t *au, size_t size, uint64_t index)
{
  uint8_t *t = au + size - AUGEN_STAMP_LEN;
  for (int i = 0; i < 5; i++)
    t[i] = (uint8_t)(0x80 | ((index >> (7 * (4 - i))) & 0x7f));
  t[5] = 0x80;
}

int augen_read_stamp(const uint8_t *tail, uint64_t *index)
{
  uint64_t v = 0;
  if (tail[5] != 0x80)
    return -EINVAL;
  for (int i = 0; i < 5; i++) {
    if (!(tail[i] & 0x80))
      return -EINVAL;
    v = v << 7 | (tail[i] & 0x7f);
  }
  *index = v;
  return 0;
}

const char *augen_codec_name(augen_codec_t codec)
{
  switch (codec) {
  case AUGEN_H264:
    return "H264";
  case AUGEN_H265:
    return "H265";
  case AUGEN_H266:
    return "H266";
  }
  return "?";
}

int augen_codec_parse(const char *name, augen_codec_t *codec)
{
  static const struct {
    const char *n;
    augen_codec_t c;
  } names[] = {
    { "h264", AUGEN_H264 }, { "H264", AUGEN_H264 }, { "h265", AUGEN_H265 },
    { "H265", AUGEN_H265 }, { "h266", AUGEN_H266 }, { "H266", AUGEN_H266 },
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i].n) == 0) {
      *codec = names[i].c;
      return 0;
    }
  return -EINVAL;
}
