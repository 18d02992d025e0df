/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * codec.h's small judgements, against the specifications' bit layouts:
 * Opus TOC durations (RFC 6716 3.1) and which NAL units may begin an
 * access unit (H.264 7.4.1.2.3, H.265 7.4.2.4.4, H.266 7.4.2.4.3).
 */
#include <stdint.h>

#include "tap.h"
#include "urtp/codec.h"

static void test_opus_samples(void)
{
  /* config 1 (SILK NB 20 ms), code 0: one frame */
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 1 << 3 }, 1), 960);
  /* config 3 (SILK 60 ms) */
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 3 << 3 }, 1), 2880);
  /* config 13 (hybrid 20 ms), code 1: two frames */
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 13 << 3 | 1 }, 1), 1920);
  /* config 16 (CELT 2.5 ms), code 3 with 6 frames */
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 16 << 3 | 3, 6 }, 2), 720);
  /* config 31 (CELT 20 ms), code 3 with 6 frames: 120 ms, the most */
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 31 << 3 | 3, 6 }, 2), 5760);
  /* ... 7 frames would be 140 ms: invalid; code 3 without its count; none */
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 31 << 3 | 3, 7 }, 2), 0);
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 31 << 3 | 3 }, 1), 0);
  CHECK_EQ(urtp_opus_packet_samples((const uint8_t[]){ 31 << 3 | 3, 0 }, 2), 0);
  CHECK_EQ(urtp_opus_packet_samples(NULL, 0), 0);
}

static void test_starts_au(void)
{
  const urtp_h26x_desc_t *h264 = urtp_h26x_desc(URTP_CODEC_H264);
  const urtp_h26x_desc_t *h265 = urtp_h26x_desc(URTP_CODEC_H265);
  const urtp_h26x_desc_t *h266 = urtp_h26x_desc(URTP_CODEC_H266);
  const uint8_t first[] = { 0x88 }, later[] = { 0x08 };

  /* slices: first_mb_in_slice 0 is ue(v) "1"; any other value starts "0" */
  CHECK(urtp_h26x_starts_au(h264, 5, first, 1));
  CHECK(urtp_h26x_starts_au(h264, 1, first, 1));
  CHECK(!urtp_h26x_starts_au(h264, 1, later, 1));
  CHECK(!urtp_h26x_starts_au(h264, 1, first, 0));
  CHECK(urtp_h26x_starts_au(h264, 9, NULL, 0));    /* AUD */
  CHECK(urtp_h26x_starts_au(h264, 7, NULL, 0));    /* SPS */
  CHECK(!urtp_h26x_starts_au(h264, 12, NULL, 0));  /* filler */
  /* H.265: first_slice_segment_in_pic_flag */
  CHECK(urtp_h26x_starts_au(h265, 19, first, 1));
  CHECK(!urtp_h26x_starts_au(h265, 1, later, 1));
  CHECK(urtp_h26x_starts_au(h265, 35, NULL, 0));   /* AUD */
  CHECK(urtp_h26x_starts_au(h265, 32, NULL, 0));   /* VPS */
  CHECK(urtp_h26x_starts_au(h265, 39, NULL, 0));   /* prefix SEI */
  CHECK(!urtp_h26x_starts_au(h265, 40, NULL, 0));  /* suffix SEI */
  /* H.266: sh_picture_header_in_slice_header_flag, or a picture header */
  CHECK(urtp_h26x_starts_au(h266, 7, first, 1));
  CHECK(!urtp_h26x_starts_au(h266, 0, later, 1));
  CHECK(urtp_h26x_starts_au(h266, 19, NULL, 0));   /* PH */
  CHECK(urtp_h26x_starts_au(h266, 20, NULL, 0));   /* AUD */
  CHECK(!urtp_h26x_starts_au(h266, 24, NULL, 0));  /* suffix SEI */
}

int main(void)
{
  TAP_RUN(test_opus_samples);
  TAP_RUN(test_starts_au);
  return tap_done();
}
