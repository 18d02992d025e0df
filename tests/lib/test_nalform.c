/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_nalform.c - output forms of access units (lib/urtp/nalform.h):
 * depay.h's Annex-B turned into avc/avc3/hvc1/hev1 in place, the parameter
 * sets cut or kept and tracked, the NAL units walked in either form.
 *
 * The parameter sets are x264's (High profile, 320x240); random access
 * units with start codes planted inside NAL units check the conversion
 * against a plain reference split, byte for byte.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "urtp/nalform.h"

static const uint8_t sps[] = {
  0x67, 0x64, 0x00, 0x14, 0xac, 0xd9, 0x41, 0x41, 0xfb, 0x01, 0x6a, 0x0c, 0x0c, 0x0d, 0x4a,
  0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x79, 0x1e, 0x28, 0x53, 0x2c,
};
static const uint8_t pps[] = { 0x68, 0xeb, 0xec, 0xb2, 0x2c };
static const uint8_t pps2[] = { 0x68, 0xeb, 0xec, 0xb2, 0x2d };
static const uint8_t idr[] = { 0x65, 0x88, 0x84, 0x00, 0x33, 0xff, 0x01 };
static const uint8_t slice[] = { 0x41, 0x9a, 0x21, 0x6c };

/* Appends a NAL unit after a 4-byte start code (depay.h's form). */
static size_t put(uint8_t *au, size_t at, const uint8_t *nal, size_t len)
{
  static const uint8_t sc[4] = { 0, 0, 0, 1 };
  memcpy(au + at, sc, 4);
  memcpy(au + at + 4, nal, len);
  return at + 4 + len;
}

static bool has_unit(const uint8_t *au, size_t at, const uint8_t *nal, size_t len)
{
  return au[at] == (len >> 24 & 0xff) && au[at + 1] == (len >> 16 & 0xff) &&
         au[at + 2] == (len >> 8 & 0xff) && au[at + 3] == (len & 0xff) &&
         memcmp(au + at + 4, nal, len) == 0;
}

/* avc: the sets leave the access unit for the record; the same sets again
 * change nothing; new ones change it. */
static void test_out_of_band(void)
{
  urtp_nalform_t f;
  uint8_t au[256], rec[128], want[128];
  size_t len;

  REQUIRE(urtp_nalform_init(&f, URTP_CODEC_H264, URTP_NALFORM_LENGTH_OOB) == 0);
  CHECK(!urtp_nalform_ready(&f));
  CHECK_EQ(urtp_nalform_record(&f, rec, sizeof(rec)), -EAGAIN);
  len = put(au, 0, sps, sizeof(sps));
  len = put(au, len, pps, sizeof(pps));
  len = put(au, len, idr, sizeof(idr));
  CHECK_EQ(urtp_nalform_convert(&f, au, &len), 1);
  CHECK_EQ(len, 4 + sizeof(idr));
  CHECK(has_unit(au, 0, idr, sizeof(idr)));
  CHECK(urtp_nalform_ready(&f));
  int n = urtp_nalform_record(&f, rec, sizeof(rec));
  CHECK_EQ(n, urtp_params_record(&f.ps, 4, false, want, sizeof(want)));
  CHECK(n > 0 && memcmp(rec, want, (size_t)n) == 0);
  /* the PPS ends the sets, before the High profile's four bytes */
  CHECK_EQ(rec[6 + 2 + sizeof(sps) + 1 + 2 + sizeof(pps) - 1], pps[4]);

  len = put(au, 0, sps, sizeof(sps));
  len = put(au, len, pps, sizeof(pps));
  len = put(au, len, idr, sizeof(idr));
  CHECK_EQ(urtp_nalform_convert(&f, au, &len), 0);
  len = put(au, 0, slice, sizeof(slice));
  CHECK_EQ(urtp_nalform_convert(&f, au, &len), 0);
  CHECK(len == 4 + sizeof(slice) && has_unit(au, 0, slice, sizeof(slice)));
  /* a new PPS: the record changes, the access unit keeps only its slice */
  len = put(au, 0, pps2, sizeof(pps2));
  len = put(au, len, idr, sizeof(idr));
  CHECK_EQ(urtp_nalform_convert(&f, au, &len), 1);
  CHECK(len == 4 + sizeof(idr) && has_unit(au, 0, idr, sizeof(idr)));
  n = urtp_nalform_record(&f, rec, sizeof(rec));
  CHECK(n > 5 && rec[n - 5] == pps2[4]);
  /* sets alone leave nothing */
  len = put(au, 0, sps, sizeof(sps));
  CHECK_EQ(urtp_nalform_convert(&f, au, &len), 0);
  CHECK_EQ(len, 0);
  urtp_nalform_free(&f);
}

/* avc3: the sets stay, with lengths; seeded sets (sprop) make it ready
 * before the stream. */
static void test_in_band_and_seed(void)
{
  urtp_nalform_t f;
  uint8_t au[256], annexb[64];
  size_t len, a;

  REQUIRE(urtp_nalform_init(&f, URTP_CODEC_H264, URTP_NALFORM_LENGTH) == 0);
  a = put(annexb, 0, sps, sizeof(sps));
  a = put(annexb, a, pps, sizeof(pps));
  a = put(annexb, a, slice, sizeof(slice)); /* not a set: ignored */
  CHECK_EQ(urtp_nalform_seed(&f, annexb, a), 1);
  CHECK(urtp_nalform_ready(&f));
  CHECK_EQ(urtp_params_total(&f.ps), 2);
  CHECK_EQ(urtp_nalform_seed(&f, annexb, a), 0);

  len = put(au, 0, sps, sizeof(sps));
  len = put(au, len, pps, sizeof(pps));
  len = put(au, len, idr, sizeof(idr));
  size_t total = len;
  CHECK_EQ(urtp_nalform_convert(&f, au, &len), 0);
  CHECK_EQ(len, total);
  CHECK(has_unit(au, 0, sps, sizeof(sps)));
  CHECK(has_unit(au, 4 + sizeof(sps), pps, sizeof(pps)));
  CHECK(has_unit(au, 8 + sizeof(sps) + sizeof(pps), idr, sizeof(idr)));

  /* walked in the length form */
  size_t off = 0, ul, units = 0;
  while (urtp_nalform_next(&f, au, len, &off, &ul))
    units++;
  CHECK_EQ(units, 3);
  CHECK_EQ(off, len);
  /* a length beyond the bytes held ends the walk */
  au[3] = 0xff;
  off = 0;
  CHECK(!urtp_nalform_next(&f, au, len, &off, &ul));
  urtp_nalform_free(&f);

  /* not depay.h's form: refused, untouched */
  REQUIRE(urtp_nalform_init(&f, URTP_CODEC_H264, URTP_NALFORM_LENGTH_OOB) == 0);
  uint8_t odd[] = { 0, 0, 1, 0x65, 0x88, 0x84 }, copy[sizeof(odd)];
  memcpy(copy, odd, sizeof(odd));
  len = sizeof(odd);
  CHECK_EQ(urtp_nalform_convert(&f, odd, &len), -EINVAL);
  CHECK(len == sizeof(odd) && memcmp(odd, copy, len) == 0);
  urtp_nalform_free(&f);

  CHECK_EQ(urtp_nalform_init(&f, URTP_CODEC_H266, URTP_NALFORM_LENGTH), -EINVAL);
  CHECK_EQ(urtp_nalform_init(&f, URTP_CODEC_OPUS, URTP_NALFORM_BYTE_STREAM), -EINVAL);
  REQUIRE(urtp_nalform_init(&f, URTP_CODEC_H266, URTP_NALFORM_BYTE_STREAM) == 0);
  urtp_nalform_free(&f);
}

/* The reference: NAL units are what lies between 00 00 00 01 sequences,
 * empty ones skipped (byte loop). */
static size_t ref_split(const uint8_t *au, size_t len, size_t *off, size_t *nlen, size_t max)
{
  size_t n = 0, start = 4;
  for (size_t i = 5; i + 4 <= len; i++) {
    if (au[i] == 0 && au[i + 1] == 0 && au[i + 2] == 0 && au[i + 3] == 1 && i > start) {
      if (n < max) {
        off[n] = start;
        nlen[n] = i - start;
      }
      n++;
      start = i + 4;
      i += 3;
    }
  }
  if (len > start && n < max) {
    off[n] = start;
    nlen[n] = len - start;
    n++;
  }
  return n;
}

/* Random access units, start codes planted inside NAL units: the walk in
 * byte-stream form, the conversion and the walk in length form all give
 * the reference's NAL units. */
static void test_random_units(void)
{
  uint8_t au[2048], orig[2048];
  size_t off[256], nlen[256];
  unsigned bad = 0;
  srand(7);
  for (int round = 0; round < 2000; round++) {
    urtp_nalform_t bs, lf;
    size_t len = 5 + (size_t)(rand() % 1500);
    memset(au, 0, 4);
    au[3] = 1;
    au[4] = (uint8_t)(0x41 + (rand() % 2) * 0x24); /* a slice or an IDR */
    for (size_t i = 5; i < len; i++)
      au[i] = (uint8_t)(rand() % 4 == 0 ? 0 : rand() % 3 == 0 ? 1 : rand());
    memcpy(orig, au, len);
    size_t n = ref_split(orig, len, off, nlen, 256);
    if (n > 256)
      continue;
    urtp_nalform_init(&bs, URTP_CODEC_H264, URTP_NALFORM_BYTE_STREAM);
    urtp_nalform_init(&lf, URTP_CODEC_H264, URTP_NALFORM_LENGTH);
    size_t o = 0, ul, k = 0;
    while (urtp_nalform_next(&bs, au, len, &o, &ul)) {
      if (k >= n || o - ul + 4 != off[k] || ul - 4 != nlen[k])
        bad++;
      k++;
    }
    if (k != n)
      bad++;
    size_t l2 = len;
    if (urtp_nalform_convert(&lf, au, &l2) < 0)
      bad++;
    o = 0;
    k = 0;
    while (urtp_nalform_next(&lf, au, l2, &o, &ul)) {
      if (k >= n || ul - 4 != nlen[k] || memcmp(au + o - ul + 4, orig + off[k], nlen[k]) != 0)
        bad++;
      k++;
    }
    if (k != n || o != l2) {
      bad++;
      printf("# round %d: len %zu -> %zu, %zu units, walked %zu to %zu\n", round, len, l2, n, k, o);
    }
    urtp_nalform_free(&bs);
    urtp_nalform_free(&lf);
  }
  CHECK_EQ(bad, 0);
}

int main(void)
{
  TAP_RUN(test_out_of_band);
  TAP_RUN(test_in_band_and_seed);
  TAP_RUN(test_random_units);
  return tap_done();
}
