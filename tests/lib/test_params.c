/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_params.c - parameter sets (lib/urtp/params.h) against ISO/IEC
 * 14496-15 and the RFCs' SDP parameters.
 *
 * Known answers come from real encoders: an avcC from x264 and an hvcC from
 * x265 (320x240, 4:2:0), whose H.265 SPS carries emulation prevention bytes
 * inside its profile_tier_level, and an H.266 SPS from libvvenc. Malformed
 * records are cut or lengthened one field at a time and must be refused
 * whole; sprop lists must round-trip through encode and decode.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "urtp/au.h"
#include "urtp/params.h"

/* x264, High profile level 2.0: avcC with one SPS and one PPS. */
static const uint8_t avcc[] = {
  0x01, 0x64, 0x00, 0x14, 0xff, 0xe1, 0x00, 0x1d,
  /* SPS */
  0x67, 0x64, 0x00, 0x14, 0xac, 0xd9, 0x41, 0x41, 0xfb, 0x01, 0x6a, 0x0c, 0x0c, 0x0d, 0x4a, 0x00,
  0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x79, 0x1e, 0x28, 0x53, 0x2c,
  0x01, 0x00, 0x05,
  /* PPS */
  0x68, 0xeb, 0xec, 0xb2, 0x2c,
};
#define AVCC_SPS (avcc + 8)
#define AVCC_SPS_LEN 29
#define AVCC_PPS (avcc + 40)
#define AVCC_PPS_LEN 5

/* x265, Main profile, Main tier, level 2.1 (63): hvcC with VPS, SPS, PPS. */
static const uint8_t hvcc[] = {
  0x01, 0x01, 0x60, 0x00, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0xf0, 0x00, 0xfc,
  0xfd, 0xf8, 0xf8, 0x00, 0x00, 0x0f, 0x03,
  /* VPS array */
  0x20, 0x00, 0x01, 0x00, 0x18,
  0x40, 0x01, 0x0c, 0x01, 0xff, 0xff, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03,
  0x00, 0x00, 0x03, 0x00, 0x3f, 0x95, 0x98, 0x09,
  /* SPS array */
  0x21, 0x00, 0x01, 0x00, 0x31,
  0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
  0x00, 0x3f, 0xa0, 0x0a, 0x08, 0x0f, 0x16, 0x59, 0x59, 0xa4, 0x93, 0x2b, 0xff, 0xc0, 0x00, 0x40,
  0x00, 0x5a, 0x83, 0x03, 0x03, 0x02, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x3c,
  0x10,
  /* PPS array */
  0x22, 0x00, 0x01, 0x00, 0x07,
  0x44, 0x01, 0xc1, 0x72, 0xb4, 0x62, 0x40,
};
#define HVCC_VPS (hvcc + 28)
#define HVCC_VPS_LEN 24
#define HVCC_SPS (hvcc + 57)
#define HVCC_SPS_LEN 49
#define HVCC_PPS (hvcc + 111)
#define HVCC_PPS_LEN 7

/* libvvenc, Main 10, level 2.0 (32): the start of its SPS (15). */
static const uint8_t vvc_sps[] = {
  0x00, 0x79, 0x00, 0xab, 0x02, 0x20, 0x80, 0x00, 0x00, 0x80, 0x28, 0x20, 0x3c, 0x46, 0xa0, 0x07,
};

/* ---- kinds ---------------------------------------------------------------- */

static void test_kinds(void)
{
  /* RFC 6184 5.3, RFC 7798 1.1.4, RFC 9328 1.1.4 */
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H264, 7), URTP_PS_SPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H264, 8), URTP_PS_PPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H264, 5), -1);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H264, 15), -1); /* subset SPS is not one */
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H265, 32), URTP_PS_VPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H265, 33), URTP_PS_SPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H265, 34), URTP_PS_PPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H265, 35), -1);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H266, 13), URTP_PS_DCI);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H266, 14), URTP_PS_VPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H266, 15), URTP_PS_SPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H266, 16), URTP_PS_PPS);
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_H266, 17), -1); /* APS is not one */
  CHECK_EQ(urtp_ps_kind(URTP_CODEC_OPUS, 7), -1);
  CHECK_EQ(urtp_ps_required(URTP_CODEC_H264), URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS));
  CHECK_EQ(urtp_ps_required(URTP_CODEC_H265),
           URTP_PS_BIT(URTP_PS_VPS) | URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS));
  CHECK_EQ(urtp_ps_required(URTP_CODEC_H266), URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS));
  CHECK_EQ(urtp_ps_required(URTP_CODEC_OPUS), 0);
}

/* ---- configuration records ------------------------------------------------ */

static void test_avcc_known_answer(void)
{
  urtp_nal_t sets[8];
  unsigned ls = 0;
  size_t n = 0;
  REQUIRE(urtp_params_parse_record(URTP_CODEC_H264, avcc, sizeof(avcc), &ls, sets, 8, &n) == 0);
  CHECK_EQ(ls, 4); /* lengthSizeMinusOne 3 */
  REQUIRE(n == 2);
  CHECK(sets[0].data == AVCC_SPS && sets[0].len == AVCC_SPS_LEN);
  CHECK(sets[1].data == AVCC_PPS && sets[1].len == AVCC_PPS_LEN);

  urtp_params_t ps;
  urtp_params_init(&ps, URTP_CODEC_H264);
  unsigned s0 = ps.serial;
  REQUIRE(urtp_params_set_record(&ps, avcc, sizeof(avcc), &ls) == 0);
  CHECK(ps.serial != s0);
  CHECK_EQ(urtp_params_count(&ps, URTP_PS_SPS), 1);
  CHECK_EQ(urtp_params_count(&ps, URTP_PS_PPS), 1);
  CHECK(urtp_params_complete(&ps));
  size_t l;
  const uint8_t *p = urtp_params_get(&ps, URTP_PS_SPS, 0, &l);
  REQUIRE(p && l == AVCC_SPS_LEN);
  CHECK_MEM(p, AVCC_SPS, AVCC_SPS_LEN);
  /* the same record again changes nothing */
  unsigned s1 = ps.serial;
  REQUIRE(urtp_params_set_record(&ps, avcc, sizeof(avcc), NULL) == 0);
  CHECK_EQ(ps.serial, s1);
  urtp_params_free(&ps);
}

static void test_hvcc_known_answer(void)
{
  urtp_nal_t sets[8];
  unsigned ls = 0;
  size_t n = 0;
  REQUIRE(urtp_params_parse_record(URTP_CODEC_H265, hvcc, sizeof(hvcc), &ls, sets, 8, &n) == 0);
  CHECK_EQ(ls, 4);
  REQUIRE(n == 3);
  CHECK(sets[0].data == HVCC_VPS && sets[0].len == HVCC_VPS_LEN);
  CHECK(sets[1].data == HVCC_SPS && sets[1].len == HVCC_SPS_LEN);
  CHECK(sets[2].data == HVCC_PPS && sets[2].len == HVCC_PPS_LEN);

  urtp_params_t ps;
  urtp_params_init(&ps, URTP_CODEC_H265);
  REQUIRE(urtp_params_set_record(&ps, hvcc, sizeof(hvcc), &ls) == 0);
  CHECK_EQ(urtp_params_mask(&ps),
           URTP_PS_BIT(URTP_PS_VPS) | URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS));
  CHECK_EQ(urtp_params_total(&ps), 3);
  /* hvcC has no record for H.266 or Opus here */
  CHECK_EQ(urtp_params_parse_record(URTP_CODEC_H266, hvcc, sizeof(hvcc), &ls, sets, 8, &n),
           -ENOTSUP);
  CHECK_EQ(urtp_params_parse_record(URTP_CODEC_OPUS, hvcc, sizeof(hvcc), &ls, sets, 8, &n),
           -ENOTSUP);
  urtp_params_free(&ps);
}

/* x264 High 4:2:2 10-bit (profile 122) and x265 Main 10, through
 * h264parse and h265parse: records whose SPS have chroma and bit depth
 * fields to read. h264parse writes no High-profile extension. */
static const char avcc_422_10[] =
  "017a000dffe1001c677a000db6cd94426c05a8303032000003000200000300791e28532c01000568ebecb22c";
static const char hvcc_main10[] =
  "0102200000009000000000003ff000fcfdfafa00000f03200001001840010c01ffff0220000003009000000300"
  "0003003f959809210001003142010102200000030090000003000003003fa0208104d96566924cafff000100016a"
  "0c0c0c08000003000800000300f04022000100074401c172b42240";

static size_t unhex(const char *h, uint8_t *out)
{
  size_t n = strlen(h) / 2;
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    sscanf(h + 2 * i, "%2x", &v);
    out[i] = (uint8_t)v;
  }
  return n;
}

/* Records written from the sets of records real encoders made give those
 * records back: byte for byte for H.265 (parameter sets in band, as
 * h265parse and x265 mark them), and for H.264 with the four extension
 * bytes ISO/IEC 14496-15 asks of the High profiles after them. */
static void test_record_known_answer(void)
{
  uint8_t rec[512], in[512];
  urtp_params_t ps;

  urtp_params_init(&ps, URTP_CODEC_H264);
  CHECK_EQ(urtp_params_record(&ps, 4, false, rec, sizeof(rec)), -EAGAIN);
  REQUIRE(urtp_params_set_record(&ps, avcc, sizeof(avcc), NULL) == 0);
  CHECK_EQ(urtp_params_record(&ps, 4, false, rec, sizeof(rec)), (int)sizeof(avcc) + 4);
  CHECK_MEM(rec, avcc, sizeof(avcc));
  static const uint8_t ext_420_8[] = { 0xfd, 0xf8, 0xf8, 0x00 };
  CHECK_MEM(rec + sizeof(avcc), ext_420_8, 4);
  /* too small: the length needed, nothing written */
  memset(rec, 0xaa, sizeof(rec));
  CHECK_EQ(urtp_params_record(&ps, 4, false, rec, sizeof(avcc)), (int)sizeof(avcc) + 4);
  CHECK_EQ(rec[0], 0xaa);
  CHECK_EQ(urtp_params_record(&ps, 2, false, rec, sizeof(rec)), (int)sizeof(avcc) + 4);
  CHECK_EQ(rec[4], 0xfd); /* lengthSizeMinusOne 1 */
  CHECK_EQ(urtp_params_record(&ps, 3, false, rec, sizeof(rec)), -EINVAL);

  size_t n = unhex(avcc_422_10, in);
  REQUIRE(urtp_params_set_record(&ps, in, n, NULL) == 0);
  CHECK_EQ(urtp_params_record(&ps, 4, false, rec, sizeof(rec)), (int)n + 4);
  CHECK_MEM(rec, in, n);
  static const uint8_t ext_422_10[] = { 0xfe, 0xfa, 0xfa, 0x00 };
  CHECK_MEM(rec + n, ext_422_10, 4);
  /* an SPS cut short cannot be read */
  urtp_params_reset(&ps, URTP_CODEC_H264);
  urtp_params_add(&ps, in + 8, 4);
  urtp_params_add(&ps, AVCC_PPS, AVCC_PPS_LEN);
  CHECK_EQ(urtp_params_record(&ps, 4, false, rec, sizeof(rec)), -EINVAL);
  urtp_params_free(&ps);

  urtp_params_init(&ps, URTP_CODEC_H265);
  REQUIRE(urtp_params_set_record(&ps, hvcc, sizeof(hvcc), NULL) == 0);
  CHECK_EQ(urtp_params_record(&ps, 4, true, rec, sizeof(rec)), (int)sizeof(hvcc));
  CHECK_MEM(rec, hvcc, sizeof(hvcc));
  /* out of band (hvc1): each array complete */
  CHECK_EQ(urtp_params_record(&ps, 4, false, rec, sizeof(rec)), (int)sizeof(hvcc));
  CHECK_EQ(rec[23], 0xa0);
  CHECK_EQ(rec[52], 0xa1);
  CHECK_EQ(rec[106], 0xa2);
  n = unhex(hvcc_main10, in);
  REQUIRE(urtp_params_set_record(&ps, in, n, NULL) == 0);
  CHECK_EQ(urtp_params_record(&ps, 4, true, rec, sizeof(rec)), (int)n);
  CHECK_MEM(rec, in, n);
  /* without its VPS a decoder cannot start */
  urtp_params_reset(&ps, URTP_CODEC_H265);
  urtp_params_add(&ps, HVCC_SPS, HVCC_SPS_LEN);
  urtp_params_add(&ps, HVCC_PPS, HVCC_PPS_LEN);
  CHECK_EQ(urtp_params_record(&ps, 4, true, rec, sizeof(rec)), -EAGAIN);
  urtp_params_reset(&ps, URTP_CODEC_H266);
  CHECK_EQ(urtp_params_record(&ps, 4, true, rec, sizeof(rec)), -ENOTSUP);
  urtp_params_free(&ps);
}

/* Every truncation of a record is refused, and so is a length one past the
 * bytes held; a refused record leaves the store as it was. */
static void check_malformed(urtp_codec_t codec, const uint8_t *rec, size_t len)
{
  uint8_t buf[256];
  urtp_nal_t sets[8];
  unsigned ls;
  size_t n;
  urtp_params_t ps;
  urtp_params_init(&ps, codec);
  REQUIRE(urtp_params_set_record(&ps, rec, len, NULL) == 0);
  unsigned serial = ps.serial, total = urtp_params_total(&ps);

  for (size_t cut = 0; cut < len; cut++) {
    int r = urtp_params_parse_record(codec, rec, cut, &ls, sets, 8, &n);
    if (r != -EINVAL)
      printf("#   %s record cut to %zu bytes: %d\n", urtp_codec_name(codec), cut, r);
    CHECK_EQ(r, -EINVAL);
    CHECK_EQ(urtp_params_set_record(&ps, rec, cut, NULL), -EINVAL);
  }
  CHECK_EQ(ps.serial, serial);
  CHECK_EQ(urtp_params_total(&ps), total);

  /* each 16-bit NAL unit length one larger than the bytes that follow */
  memcpy(buf, rec, len);
  buf[0] = 2; /* configurationVersion other than 1 */
  CHECK_EQ(urtp_params_parse_record(codec, buf, len, &ls, sets, 8, &n), -EINVAL);
  buf[0] = 1;
  /* count one NAL unit too many in the last array / PPS count */
  if (codec == URTP_CODEC_H264)
    buf[37]++; /* numOfPictureParameterSets */
  else
    buf[108]++; /* numNalus of the PPS array (low byte) */
  CHECK_EQ(urtp_params_parse_record(codec, buf, len, &ls, sets, 8, &n), -EINVAL);
  /* too many NAL units for the caller's array */
  CHECK_EQ(urtp_params_parse_record(codec, rec, len, &ls, sets, 1, &n), -ENOSPC);
  urtp_params_free(&ps);
}

static void test_malformed_records(void)
{
  check_malformed(URTP_CODEC_H264, avcc, sizeof(avcc));
  check_malformed(URTP_CODEC_H265, hvcc, sizeof(hvcc));

  /* a NAL unit length pointing past the end, in the middle of a record */
  uint8_t b[sizeof(hvcc)];
  memcpy(b, hvcc, sizeof(hvcc));
  b[56] = 0xff; /* SPS length low byte: 0x00ff */
  urtp_nal_t sets[8];
  unsigned ls;
  size_t n;
  CHECK_EQ(urtp_params_parse_record(URTP_CODEC_H265, b, sizeof(b), &ls, sets, 8, &n), -EINVAL);
  memcpy(b, avcc, sizeof(avcc));
  b[7] = 0x26; /* SPS length 38: past the end */
  CHECK_EQ(urtp_params_parse_record(URTP_CODEC_H264, b, sizeof(avcc), &ls, sets, 8, &n),
           -EINVAL);
}

/* ---- in-band tracking ----------------------------------------------------- */

static void test_au_tracking(void)
{
  static const uint8_t sps2[] = { 0x67, 0x42, 0xc0, 0x1e, 0x95 };
  urtp_params_t ps;
  urtp_params_init(&ps, URTP_CODEC_H264);
  REQUIRE(urtp_params_set_record(&ps, avcc, sizeof(avcc), NULL) == 0);
  unsigned s0 = ps.serial;

  /* the same SPS and PPS in band: nothing changes */
  urtp_params_au_begin(&ps);
  CHECK_EQ(urtp_params_au_add(&ps, AVCC_SPS, AVCC_SPS_LEN), 1);
  CHECK_EQ(urtp_params_au_add(&ps, AVCC_PPS, AVCC_PPS_LEN), 1);
  CHECK_EQ(urtp_params_au_add(&ps, (const uint8_t *)"\x65\x88", 2), 0); /* IDR slice */
  CHECK_EQ(urtp_params_au_mask(&ps), URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS));
  CHECK(!urtp_params_au_changes(&ps));
  CHECK(!urtp_params_au_commit(&ps));
  CHECK_EQ(ps.serial, s0);

  /* a new SPS only: replaces the SPS, keeps the PPS, changes the serial */
  urtp_params_au_begin(&ps);
  CHECK_EQ(urtp_params_au_add(&ps, sps2, sizeof(sps2)), 1);
  CHECK(urtp_params_au_changes(&ps));
  CHECK(urtp_params_au_commit(&ps));
  CHECK(ps.serial != s0);
  size_t l;
  const uint8_t *p = urtp_params_get(&ps, URTP_PS_SPS, 0, &l);
  CHECK(p && l == sizeof(sps2) && memcmp(p, sps2, l) == 0);
  CHECK_EQ(urtp_params_count(&ps, URTP_PS_PPS), 1);
  /* the kinds carried stay known after the commit; the copies are gone */
  CHECK_EQ(urtp_params_au_mask(&ps), URTP_PS_BIT(URTP_PS_SPS));
  CHECK(!urtp_params_au_changes(&ps));

  /* more than URTP_PARAMS_MAX_PER_KIND in one access unit: the rest ignored */
  urtp_params_au_begin(&ps);
  for (int i = 0; i < URTP_PARAMS_MAX_PER_KIND + 3; i++)
    CHECK_EQ(urtp_params_au_add(&ps, AVCC_PPS, AVCC_PPS_LEN), i < URTP_PARAMS_MAX_PER_KIND);
  urtp_params_au_commit(&ps);
  CHECK_EQ(urtp_params_count(&ps, URTP_PS_PPS), URTP_PARAMS_MAX_PER_KIND);

  /* reset: a codec change forgets everything */
  unsigned s1 = ps.serial;
  urtp_params_reset(&ps, URTP_CODEC_H265);
  CHECK(ps.serial != s1);
  CHECK_EQ(urtp_params_total(&ps), 0);
  CHECK(!urtp_params_complete(&ps));
  /* an H.264 SPS is no parameter set of H.265's (type 51) */
  CHECK_EQ(urtp_params_add(&ps, AVCC_SPS, AVCC_SPS_LEN), 0);
  CHECK_EQ(urtp_params_add(&ps, HVCC_VPS, HVCC_VPS_LEN), 1);
  CHECK_EQ(urtp_params_add(&ps, HVCC_SPS, 1), 0); /* shorter than the header */
  urtp_params_free(&ps);
}

/* ---- sprop ---------------------------------------------------------------- */

static void test_sprop_encode(void)
{
  urtp_params_t ps;
  char out[512];
  urtp_params_init(&ps, URTP_CODEC_H264);
  REQUIRE(urtp_params_set_record(&ps, avcc, sizeof(avcc), NULL) == 0);
  unsigned both = URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS);
  size_t n = urtp_params_sprop(&ps, both, out, sizeof(out));
  /* base64 (RFC 4648) of the SPS, a comma, of the PPS */
  static const char want[] = "Z2QAFKzZQUH7AWoMDA1KAAADAAIAAAMAeR4oUyw=,aOvssiw=";
  CHECK_EQ(n, strlen(want));
  CHECK(strcmp(out, want) == 0);
  /* too small: the length needed, an empty string */
  CHECK_EQ(urtp_params_sprop(&ps, both, out, n), n);
  CHECK_EQ(out[0], '\0');
  CHECK_EQ(urtp_params_sprop(&ps, both, out, n + 1), n);
  CHECK(strcmp(out, want) == 0);
  CHECK_EQ(urtp_params_sprop(&ps, URTP_PS_BIT(URTP_PS_VPS), out, sizeof(out)), 0);
  CHECK_EQ(out[0], '\0');
  urtp_params_free(&ps);
}

static void test_sprop_round_trip(void)
{
  urtp_params_t ps;
  char text[512];
  uint8_t blob[512];
  urtp_params_init(&ps, URTP_CODEC_H265);
  REQUIRE(urtp_params_set_record(&ps, hvcc, sizeof(hvcc), NULL) == 0);
  /* a second VPS of every length mod 3, to cover all paddings */
  for (size_t extra = 0; extra < 3; extra++) {
    uint8_t vps2[HVCC_VPS_LEN + 2];
    memcpy(vps2, HVCC_VPS, HVCC_VPS_LEN);
    vps2[HVCC_VPS_LEN] = vps2[HVCC_VPS_LEN + 1] = 0x5a;
    urtp_params_reset(&ps, URTP_CODEC_H265);
    CHECK_EQ(urtp_params_add(&ps, HVCC_VPS, HVCC_VPS_LEN), 1);
    CHECK_EQ(urtp_params_add(&ps, vps2, HVCC_VPS_LEN + extra), 1);
    CHECK_EQ(urtp_params_add(&ps, HVCC_SPS, HVCC_SPS_LEN), 1);
    size_t tl = urtp_params_sprop(&ps, 0xf, text, sizeof(text));
    REQUIRE(tl < sizeof(text));
    int bl = urtp_sprop_decode(text, tl, NULL, 0);
    REQUIRE(bl > 0);
    CHECK_EQ(urtp_sprop_decode(text, tl, blob, sizeof(blob)), bl);
    /* Annex-B with 4-byte start codes, each set byte-exact */
    size_t off = 0;
    const uint8_t *want[3] = { HVCC_VPS, vps2, HVCC_SPS };
    size_t wl[3] = { HVCC_VPS_LEN, HVCC_VPS_LEN + extra, HVCC_SPS_LEN };
    for (int i = 0; i < 3; i++) {
      CHECK_MEM(blob + off, "\0\0\0\1", 4);
      CHECK_MEM(blob + off + 4, want[i], wl[i]);
      off += 4 + wl[i];
    }
    CHECK_EQ(off, (size_t)bl);
    CHECK_EQ(urtp_sprop_decode(text, tl, blob, (size_t)bl - 1), -ENOSPC);
  }
  urtp_params_free(&ps);
}

static void test_sprop_decode_forms(void)
{
  uint8_t b[64];
  /* "AB" is QUI=; unpadded, with blanks and an empty item */
  static const uint8_t ab[] = { 0, 0, 0, 1, 'A', 'B' };
  CHECK_EQ(urtp_sprop_decode("QUI=", 4, b, sizeof(b)), 6);
  CHECK_MEM(b, ab, 6);
  CHECK_EQ(urtp_sprop_decode("QUI", 3, b, sizeof(b)), 6);
  CHECK_MEM(b, ab, 6);
  CHECK_EQ(urtp_sprop_decode(" QUI= ,, QQ ", 12, b, sizeof(b)), 11);
  CHECK_MEM(b, ab, 6);
  CHECK_MEM(b + 6, "\0\0\0\1A", 5);
  CHECK_EQ(urtp_sprop_decode("", 0, b, sizeof(b)), 0);
  /* not base64 */
  CHECK_EQ(urtp_sprop_decode("QU I=", 5, b, sizeof(b)), -EINVAL);   /* blank inside */
  CHECK_EQ(urtp_sprop_decode("QUI=QUJD", 8, b, sizeof(b)), -EINVAL); /* padding inside */
  CHECK_EQ(urtp_sprop_decode("Q", 1, b, sizeof(b)), -EINVAL);        /* 6 bits left */
  CHECK_EQ(urtp_sprop_decode("QUJDR", 5, b, sizeof(b)), -EINVAL);
  CHECK_EQ(urtp_sprop_decode("QUI==", 5, b, sizeof(b)), -EINVAL);    /* padding that does not pad */
  CHECK_EQ(urtp_sprop_decode("Q===", 4, b, sizeof(b)), -EINVAL);
  CHECK_EQ(urtp_sprop_decode("QU!=", 4, b, sizeof(b)), -EINVAL);
  CHECK_EQ(urtp_sprop_decode("QUI=;", 5, b, sizeof(b)), -EINVAL);
  /* only the given length is read */
  CHECK_EQ(urtp_sprop_decode("QUI=,!!", 4, b, sizeof(b)), 6);
}

/* ---- fmtp profile fields -------------------------------------------------- */

static void test_profile_fields(void)
{
  uint8_t pli[3];
  REQUIRE(urtp_h264_profile_level_id(AVCC_SPS, AVCC_SPS_LEN, pli) == 0);
  CHECK_EQ(pli[0], 0x64); /* High */
  CHECK_EQ(pli[1], 0x00);
  CHECK_EQ(pli[2], 0x14); /* level 2.0 */
  CHECK_EQ(urtp_h264_profile_level_id(AVCC_PPS, AVCC_PPS_LEN, pli), -EINVAL);
  CHECK_EQ(urtp_h264_profile_level_id(AVCC_SPS, 3, pli), -EINVAL);

  urtp_ptl_t t;
  /* H.265: general_level_idc sits behind three emulation prevention bytes;
   * read without removing them it would be 0x00 */
  REQUIRE(urtp_h26x_sps_ptl(URTP_CODEC_H265, HVCC_SPS, HVCC_SPS_LEN, &t) == 0);
  CHECK_EQ(t.profile_id, 1);
  CHECK_EQ(t.tier_flag, 0);
  CHECK_EQ(t.level_id, 63);
  CHECK_EQ(urtp_h26x_sps_ptl(URTP_CODEC_H265, HVCC_SPS, 16, &t), -EINVAL); /* short */
  CHECK_EQ(urtp_h26x_sps_ptl(URTP_CODEC_H265, HVCC_VPS, HVCC_VPS_LEN, &t), -EINVAL);

  REQUIRE(urtp_h26x_sps_ptl(URTP_CODEC_H266, vvc_sps, sizeof(vvc_sps), &t) == 0);
  CHECK_EQ(t.profile_id, 1); /* Main 10 */
  CHECK_EQ(t.tier_flag, 0);
  CHECK_EQ(t.level_id, 32);  /* 2.0 */
  uint8_t noptl[sizeof(vvc_sps)];
  memcpy(noptl, vvc_sps, sizeof(vvc_sps));
  noptl[3] &= 0xfe; /* sps_ptl_dpb_hrd_params_present_flag 0 */
  CHECK_EQ(urtp_h26x_sps_ptl(URTP_CODEC_H266, noptl, sizeof(noptl), &t), -EINVAL);
  CHECK_EQ(urtp_h26x_sps_ptl(URTP_CODEC_H264, AVCC_SPS, AVCC_SPS_LEN, &t), -EINVAL);

  /* unescaping: 00 00 03 -> 00 00, and a 03 not after two zeros stays */
  static const uint8_t esc[] = { 0x00, 0x00, 0x03, 0x01, 0x03, 0x00, 0x00, 0x03, 0x00, 0x03 };
  static const uint8_t unesc[] = { 0x00, 0x00, 0x01, 0x03, 0x00, 0x00, 0x00, 0x03 };
  uint8_t o[16];
  CHECK_EQ(urtp_rbsp_unescape(esc, sizeof(esc), o, sizeof(o)), sizeof(unesc));
  CHECK_MEM(o, unesc, sizeof(unesc));
  CHECK_EQ(urtp_rbsp_unescape(esc, sizeof(esc), o, 3), 3);
}

/* ---- access-unit splitting ------------------------------------------------ */

static void test_au_split(void)
{
  typedef struct {
    uint8_t b[3];
    bool starts;
  } step_t;
  urtp_au_split_t s;
  /* H.265: AUD VPS SPS PPS IDR(first) IDR(second slice) | TRAIL(first) |
   * SEI TRAIL(first) | TRAIL(not first) stays */
  static const step_t h265[] = {
    { { 0x46, 0x01, 0x50 }, false }, { { 0x40, 0x01, 0x0c }, false },
    { { 0x42, 0x01, 0x01 }, false }, { { 0x44, 0x01, 0xc1 }, false },
    { { 0x26, 0x01, 0xaf }, false }, { { 0x26, 0x01, 0x20 }, false },
    { { 0x02, 0x01, 0xd0 }, true },  { { 0x4e, 0x01, 0x05 }, true },
    { { 0x02, 0x01, 0xd0 }, false }, { { 0x02, 0x01, 0x40 }, false },
    { { 0x46, 0x01, 0x50 }, true },
  };
  REQUIRE(urtp_au_split_init(&s, URTP_CODEC_H265) == 0);
  for (size_t i = 0; i < sizeof(h265) / sizeof(h265[0]); i++) {
    bool st = urtp_au_split_next(&s, h265[i].b, 3);
    if (st != h265[i].starts)
      printf("#   h265 step %zu\n", i);
    CHECK_EQ(st, h265[i].starts);
  }
  /* H.264: SPS PPS IDR(mb 0) IDR(mb 40) | slice(mb 0) */
  static const step_t h264[] = {
    { { 0x67, 0x64, 0x00 }, false }, { { 0x68, 0xeb, 0x00 }, false },
    { { 0x65, 0x88, 0x00 }, false }, { { 0x65, 0x0a, 0x00 }, false },
    { { 0x41, 0x9a, 0x00 }, true },  { { 0x09, 0xf0, 0x00 }, true },
  };
  REQUIRE(urtp_au_split_init(&s, URTP_CODEC_H264) == 0);
  for (size_t i = 0; i < sizeof(h264) / sizeof(h264[0]); i++)
    CHECK_EQ(urtp_au_split_next(&s, h264[i].b, 3), h264[i].starts);
  /* H.266: SPS PPS PH IDR | PH TRAIL | slice with its own picture header */
  static const step_t h266[] = {
    { { 0x00, 0x79, 0x00 }, false }, { { 0x00, 0x81, 0x00 }, false },
    { { 0x00, 0x99, 0x00 }, false }, { { 0x00, 0x39, 0x40 }, false },
    { { 0x00, 0x99, 0x00 }, true },  { { 0x00, 0x01, 0x40 }, false },
    { { 0x00, 0x01, 0xc0 }, true },
  };
  REQUIRE(urtp_au_split_init(&s, URTP_CODEC_H266) == 0);
  for (size_t i = 0; i < sizeof(h266) / sizeof(h266[0]); i++)
    CHECK_EQ(urtp_au_split_next(&s, h266[i].b, 3), h266[i].starts);
  CHECK_EQ(urtp_au_split_init(&s, URTP_CODEC_OPUS), -EINVAL);
}

int main(void)
{
  TAP_RUN(test_kinds);
  TAP_RUN(test_avcc_known_answer);
  TAP_RUN(test_hvcc_known_answer);
  TAP_RUN(test_record_known_answer);
  TAP_RUN(test_malformed_records);
  TAP_RUN(test_au_tracking);
  TAP_RUN(test_sprop_encode);
  TAP_RUN(test_sprop_round_trip);
  TAP_RUN(test_sprop_decode_forms);
  TAP_RUN(test_profile_fields);
  TAP_RUN(test_au_split);
  return tap_done();
}
