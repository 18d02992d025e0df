/* SPDX-License-Identifier: BSD-2-Clause */
/* RTP fixed header (RFC 3550 5.1), codec tables and batch arena. */
#include <errno.h>

#include "tap.h"
#include "urtp/batch.h"
#include "urtp/codec.h"
#include "urtp/rtp.h"

static void test_parse_minimal(void)
{
  /* V=2, M=1, PT=96, seq 0x1234, ts 0xdeadbeef, ssrc 0x01020304, payload "ab" */
  static const uint8_t pkt[] = {0x80, 0xe0, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef,
                                0x01, 0x02, 0x03, 0x04, 'a',  'b'};
  urtp_rtp_pkt_t p;
  REQUIRE(urtp_rtp_parse(pkt, sizeof pkt, &p) == 0);
  CHECK_EQ(p.hdr.pt, 96);
  CHECK(p.hdr.marker);
  CHECK_EQ(p.hdr.seq, 0x1234);
  CHECK_EQ(p.hdr.ts, 0xdeadbeefu);
  CHECK_EQ(p.hdr.ssrc, 0x01020304u);
  CHECK_EQ(p.hdr.csrc_count, 0);
  CHECK(!p.hdr.has_ext && !p.hdr.padding);
  CHECK(p.payload == pkt + 12);
  CHECK_EQ(p.payload_len, 2);
  CHECK_EQ(urtp_rtp_peek_seq(pkt), 0x1234);
  CHECK_EQ(urtp_rtp_peek_ts(pkt), 0xdeadbeefu);
  CHECK_EQ(urtp_rtp_peek_ssrc(pkt), 0x01020304u);
  CHECK(urtp_rtp_peek_marker(pkt));
}

static void test_parse_csrc_ext_padding(void)
{
  /* P=1 X=1 CC=2; two CSRCs; extension profile 0xbede with 1 word; 3 payload
   * bytes; 4 padding bytes. */
  static const uint8_t pkt[] = {
    0xb2, 0x60, 0x00, 0x01, 0, 0, 0, 9, 0, 0, 0, 7,
    0xaa, 0xaa, 0xaa, 0xaa, 0xbb, 0xbb, 0xbb, 0xbb,
    0xbe, 0xde, 0x00, 0x01, 0x10, 0x20, 0x30, 0x40,
    'x', 'y', 'z',
    0, 0, 0, 4,
  };
  urtp_rtp_pkt_t p;
  REQUIRE(urtp_rtp_parse(pkt, sizeof pkt, &p) == 0);
  CHECK_EQ(p.hdr.csrc_count, 2);
  CHECK_EQ(p.hdr.csrc[0], 0xaaaaaaaau);
  CHECK_EQ(p.hdr.csrc[1], 0xbbbbbbbbu);
  CHECK(p.hdr.has_ext);
  CHECK_EQ(p.hdr.ext_profile, 0xbede);
  CHECK_EQ(p.hdr.ext_len, 4);
  CHECK(p.hdr.ext_data == pkt + 24);
  CHECK(p.hdr.padding);
  CHECK_EQ(p.pad_len, 4);
  CHECK_EQ(p.payload_len, 3);
  CHECK_MEM(p.payload, "xyz", 3);

  /* Writing the parsed header back gives the same bytes. */
  uint8_t out[64];
  int n = urtp_rtp_write(out, sizeof out, &p.hdr);
  CHECK_EQ(n, 28);
  CHECK_MEM(out, pkt, 28);
  CHECK_EQ(urtp_rtp_hdr_size(&p.hdr), 28);
  CHECK_EQ(urtp_rtp_write(out, 27, &p.hdr), -ENOSPC);
}

static void test_parse_malformed(void)
{
  uint8_t pkt[64] = {0x80, 96};
  urtp_rtp_pkt_t p;
  /* Every length below the fixed header. */
  for (size_t len = 0; len < 12; len++)
    CHECK_EQ(urtp_rtp_parse(pkt, len, &p), -EBADMSG);
  CHECK_EQ(urtp_rtp_parse(pkt, 12, &p), 0);
  CHECK_EQ(p.payload_len, 0);

  /* Wrong versions. */
  for (uint8_t v = 0; v < 4; v++) {
    pkt[0] = (uint8_t)(v << 6);
    CHECK_EQ(urtp_rtp_parse(pkt, 20, &p), v == 2 ? 0 : -EBADMSG);
  }

  /* CSRC count beyond the packet: CC=15 needs 72 bytes. */
  pkt[0] = 0x8f;
  CHECK_EQ(urtp_rtp_parse(pkt, 64, &p), -EBADMSG);
  pkt[0] = 0x81;
  CHECK_EQ(urtp_rtp_parse(pkt, 15, &p), -EBADMSG);
  CHECK_EQ(urtp_rtp_parse(pkt, 16, &p), 0);

  /* Extension header truncated, and extension length overrunning. */
  pkt[0] = 0x90;
  CHECK_EQ(urtp_rtp_parse(pkt, 15, &p), -EBADMSG);
  pkt[12] = 0xbe; pkt[13] = 0xde; pkt[14] = 0x00; pkt[15] = 0x02;
  CHECK_EQ(urtp_rtp_parse(pkt, 23, &p), -EBADMSG);
  CHECK_EQ(urtp_rtp_parse(pkt, 24, &p), 0);
  pkt[14] = 0xff; pkt[15] = 0xff;
  CHECK_EQ(urtp_rtp_parse(pkt, 64, &p), -EBADMSG);

  /* Padding count 0, and larger than the payload. */
  memset(pkt, 0, sizeof pkt);
  pkt[0] = 0xa0;
  pkt[19] = 0;
  CHECK_EQ(urtp_rtp_parse(pkt, 20, &p), -EBADMSG);
  pkt[19] = 9;
  CHECK_EQ(urtp_rtp_parse(pkt, 20, &p), -EBADMSG);
  pkt[19] = 8; /* exactly the 8 bytes after the header */
  CHECK_EQ(urtp_rtp_parse(pkt, 20, &p), 0);
  CHECK_EQ(p.payload_len, 0);
}

static void test_write_fixed_and_padding(void)
{
  uint8_t a[12], b[12];
  urtp_rtp_write_fixed(a, 127, false, 65535, 1, 0xffffffffu);
  urtp_rtp_hdr_t h = {.pt = 127, .seq = 65535, .ts = 1, .ssrc = 0xffffffffu};
  CHECK_EQ(urtp_rtp_write(b, sizeof b, &h), 12);
  CHECK_MEM(a, b, 12);
  static const uint8_t expect[] = {0x80, 0x7f, 0xff, 0xff, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff};
  CHECK_MEM(a, expect, 12);

  h.pt = 128;
  CHECK_EQ(urtp_rtp_write(b, sizeof b, &h), -EINVAL);
  h.pt = 0;
  h.has_ext = true;
  h.ext_len = 3;
  CHECK_EQ(urtp_rtp_write(b, sizeof b, &h), -EINVAL);

  uint8_t pad[5] = {9, 9, 9, 9, 9};
  urtp_rtp_write_padding(pad, 4);
  static const uint8_t pexp[] = {0, 0, 0, 4, 9};
  CHECK_MEM(pad, pexp, 5);
}

static void test_seq_extend(void)
{
  urtp_seq_ext_t e = {0};
  CHECK_EQ(urtp_seq_extend(&e, 65534), 65536 + 65534);
  CHECK_EQ(urtp_seq_extend(&e, 65535), 65536 + 65535);
  CHECK_EQ(urtp_seq_extend(&e, 0), 131072);       /* wrapped forward */
  CHECK_EQ(urtp_seq_extend(&e, 65535), 131071);   /* reordered behind the wrap */
  CHECK_EQ(e.max, 131072);
  CHECK_EQ(urtp_seq_extend(&e, 1), 131073);

  /* Walk 10 wraps forward with some reordering: the value never jumps. */
  urtp_seq_ext_t f = {0};
  uint64_t expect = 65536 + 100;
  CHECK_EQ(urtp_seq_extend(&f, 100), expect);
  for (int i = 0; i < 10 * 65536; i += 3) {
    uint16_t s = (uint16_t)(100 + i + 3);
    CHECK_EQ(urtp_seq_extend(&f, s), expect + 3);
    CHECK_EQ(urtp_seq_extend(&f, (uint16_t)(s - 2)), expect + 1);
    expect += 3;
    if (tap_cur_failed)
      break;
  }
  /* The furthest step backwards that is still seen as backwards. */
  urtp_seq_ext_t g = {0};
  urtp_seq_extend(&g, 40000);
  CHECK_EQ(urtp_seq_extend(&g, (uint16_t)(40000 - 32768)), 65536 + 40000 - 32768);
}

static void test_codec_tables(void)
{
  const urtp_h26x_desc_t *h264 = urtp_h26x_desc(URTP_CODEC_H264);
  const urtp_h26x_desc_t *h265 = urtp_h26x_desc(URTP_CODEC_H265);
  const urtp_h26x_desc_t *h266 = urtp_h26x_desc(URTP_CODEC_H266);
  CHECK(urtp_h26x_desc(URTP_CODEC_OPUS) == NULL);

  /* H.264 IDR with NRI 3: 0x65. */
  static const uint8_t idr264[] = {0x65};
  CHECK_EQ(urtp_h26x_type(h264, idr264), 5);
  CHECK(urtp_h26x_is_keyframe(h264, 5) && urtp_h26x_is_vcl(h264, 5));
  CHECK(urtp_h26x_is_param_set(h264, 7) && !urtp_h26x_is_vcl(h264, 7));
  uint8_t out[2];
  urtp_h26x_write_hdr(h264, out, idr264, 28);
  CHECK_EQ(out[0], 0x7c); /* F=0 NRI=3 type 28: the FU-A indicator */

  /* H.265 IDR_W_RADL (19), layer 0, TID 1: 0x26 0x01. */
  static const uint8_t idr265[] = {0x26, 0x01};
  CHECK_EQ(urtp_h26x_type(h265, idr265), 19);
  CHECK(urtp_h26x_is_keyframe(h265, 19));
  CHECK(urtp_h26x_is_param_set(h265, 32) && urtp_h26x_is_param_set(h265, 34));
  urtp_h26x_write_hdr(h265, out, idr265, 49);
  CHECK_EQ(out[0], 49 << 1);
  CHECK_EQ(out[1], 0x01);
  /* LayerId's top bit lives in byte 0 and must survive. */
  static const uint8_t layer265[] = {0x27, 0x09};
  urtp_h26x_write_hdr(h265, out, layer265, 48);
  CHECK_EQ(out[0], (48 << 1) | 1);
  CHECK_EQ(out[1], 0x09);

  /* H.266 IDR_N_LP (8), layer 0, TID 1: 0x00 0x41. */
  static const uint8_t idr266[] = {0x00, 0x41};
  CHECK_EQ(urtp_h26x_type(h266, idr266), 8);
  CHECK(urtp_h26x_is_keyframe(h266, 8) && urtp_h26x_is_vcl(h266, 8));
  CHECK(urtp_h26x_is_param_set(h266, 15) && !urtp_h26x_is_vcl(h266, 15));
  urtp_h26x_write_hdr(h266, out, idr266, 29);
  CHECK_EQ(out[0], 0x00);
  CHECK_EQ(out[1], (29 << 3) | 1);

  urtp_codec_t c;
  CHECK(urtp_codec_from_name("h265", &c) == 0 && c == URTP_CODEC_H265);
  CHECK(urtp_codec_from_name("OPUS", &c) == 0 && c == URTP_CODEC_OPUS);
  CHECK_EQ(urtp_codec_from_name("VP8", &c), -EINVAL);
  CHECK_EQ(urtp_codec_clock_rate(URTP_CODEC_OPUS), 48000);
  CHECK_EQ(urtp_codec_clock_rate(URTP_CODEC_H266), 90000);
}

static void test_batch_arena(void)
{
  urtp_batch_t b;
  urtp_batch_init(&b);
  /* Take more than a chunk in small pieces: earlier pieces must not move. */
  uint8_t *first = urtp_batch_arena_take(&b, 16);
  REQUIRE(first != NULL);
  memset(first, 0xab, 16);
  size_t taken = 16;
  while (taken < 3 * URTP_BATCH_CHUNK) {
    uint8_t *p = urtp_batch_arena_take(&b, 15);
    REQUIRE(p != NULL);
    memset(p, 0x11, 15);
    taken += 15;
  }
  CHECK_EQ(first[0], 0xab);
  CHECK_EQ(first[15], 0xab);
  CHECK_EQ(b.nchunks, 4);
  CHECK(urtp_batch_arena_take(&b, URTP_BATCH_CHUNK + 1) == NULL);

  /* After a clear the same amount reuses the chunks: no new allocation. */
  urtp_batch_clear(&b);
  for (size_t t = 0; t < 3 * URTP_BATCH_CHUNK; t += 15)
    REQUIRE(urtp_batch_arena_take(&b, 15) != NULL);
  CHECK_EQ(b.nchunks, 4);

  /* Commit and copy a two-iovec packet. */
  urtp_batch_clear(&b);
  REQUIRE(urtp_batch_reserve(&b, 1, 2) == 0);
  uint8_t *h = urtp_batch_arena_take(&b, 3);
  memcpy(h, "hdr", 3);
  static const char body[] = "payload";
  b.iov[b.niov] = (struct iovec){h, 3};
  b.iov[b.niov + 1] = (struct iovec){(void *)body, 7};
  urtp_batch_commit(&b, 2, 10);
  CHECK_EQ(b.npkts, 1);
  uint8_t out[16];
  CHECK_EQ(urtp_batch_copy_pkt(&b, 0, out, sizeof out), 10);
  CHECK_MEM(out, "hdrpayload", 10);
  CHECK_EQ(urtp_batch_copy_pkt(&b, 0, out, 9), 0);
  urtp_batch_free(&b);
}

int main(void)
{
  TAP_RUN(test_parse_minimal);
  TAP_RUN(test_parse_csrc_ext_padding);
  TAP_RUN(test_parse_malformed);
  TAP_RUN(test_write_fixed_and_padding);
  TAP_RUN(test_seq_extend);
  TAP_RUN(test_codec_tables);
  TAP_RUN(test_batch_arena);
  return tap_done();
}
