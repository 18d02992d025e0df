/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_scl.c - start-code lookup: every implementation against a reference
 * byte loop on random and adversarial inputs; NAL splitting against tables
 * and against streams built from known NAL units.
 */
#include "tap.h"

#include "urtp/scl.h"

static const urtp_scl_impl_t impls[] = {
  URTP_SCL_NAIVE, URTP_SCL_SWAR, URTP_SCL_SSE2, URTP_SCL_AVX2, URTP_SCL_AUTO,
};
#define NIMPLS (sizeof impls / sizeof impls[0])

static unsigned long long comparisons;
static int reported;

/* The test's own reference, independent of the library's naive loop. */
static size_t ref_find(const uint8_t *p, size_t n)
{
  for (size_t i = 0; i + 3 <= n; i++)
    if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1)
      return i;
  return n;
}

static void dump(const uint8_t *p, size_t n)
{
  printf("#     bytes:");
  for (size_t i = 0; i < n && i < 96; i++)
    printf(" %02x", p[i]);
  printf("%s\n", n > 96 ? " ..." : "");
}

/* Checks every available implementation (and urtp_scl_find) on [p, p+n). */
static void check_find(const uint8_t *p, size_t n)
{
  size_t want = ref_find(p, n);
  const uint8_t *end = p + n;

  for (size_t k = 0; k < NIMPLS; k++) {
    if (!urtp_scl_available(impls[k]))
      continue;
    const uint8_t *got = urtp_scl_find_with(impls[k], p, end);
    comparisons++;
    if (got == NULL || (size_t)(got - p) != want) {
      tap_cur_failed = 1;
      if (reported++ < 10) {
        printf("#   %s: len %zu addr%%64 %u: expected %zu, got %lld\n",
               urtp_scl_impl_name(impls[k]), n, (unsigned)((uintptr_t)p % 64), want,
               got ? (long long)(got - p) : -1LL);
        dump(p, n);
      }
    }
  }
  const uint8_t *got = urtp_scl_find(p, end);
  comparisons++;
  if ((size_t)(got - p) != want) {
    tap_cur_failed = 1;
    if (reported++ < 10)
      printf("#   urtp_scl_find: len %zu: expected %zu, got %zu\n", n, want, (size_t)(got - p));
  }
}

static void test_names_and_availability(void)
{
  CHECK(urtp_scl_available(URTP_SCL_AUTO));
  CHECK(urtp_scl_available(URTP_SCL_NAIVE));
  CHECK(urtp_scl_available(URTP_SCL_SWAR));
#if defined(__x86_64__)
  CHECK(urtp_scl_available(URTP_SCL_SSE2));
#endif
  CHECK(strcmp(urtp_scl_impl_name(URTP_SCL_AUTO), "auto") == 0);
  CHECK(strcmp(urtp_scl_impl_name(URTP_SCL_NAIVE), "naive") == 0);
  CHECK(strcmp(urtp_scl_impl_name(URTP_SCL_SWAR), "swar") == 0);
  CHECK(strcmp(urtp_scl_impl_name(URTP_SCL_SSE2), "sse2") == 0);
  CHECK(strcmp(urtp_scl_impl_name(URTP_SCL_AVX2), "avx2") == 0);
  CHECK(strcmp(urtp_scl_impl_name((urtp_scl_impl_t)99), "unknown") == 0);
  CHECK(!urtp_scl_available((urtp_scl_impl_t)99));

  static const uint8_t sc[] = { 0xaa, 0, 0, 1 };
  for (size_t k = 0; k < NIMPLS; k++) {
    const uint8_t *got = urtp_scl_find_with(impls[k], sc, sc + sizeof sc);
    printf("# %s: %s\n", urtp_scl_impl_name(impls[k]),
           urtp_scl_available(impls[k]) ? "available" : "not available");
    if (urtp_scl_available(impls[k]))
      CHECK(got == sc + 1);
    else
      CHECK(got == NULL);
  }
  CHECK(urtp_scl_find_with((urtp_scl_impl_t)99, sc, sc + sizeof sc) == NULL);
}

/* Hand-picked inputs with known answers. */
static void test_fixed(void)
{
  static const struct {
    const char *hex;
    int want;                 /* -1: none */
  } cases[] = {
    { "", -1 },
    { "00", -1 },
    { "0000", -1 },
    { "000001", 0 },
    { "00000001", 1 },
    { "0000000001", 2 },
    { "000002", -1 },
    { "000100", -1 },
    { "010000", -1 },
    { "aa000001", 1 },
    { "aaaa0000", -1 },
    { "aaaa000000", -1 },
    { "000003000001", 3 },
    { "00010000000001", 4 },
    { "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff000001", 32 },
    { "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff000001", 31 },
    { "ffffffffffffffffffffffffffffff000001", 15 },
    { "ffffffffffffff000001", 7 },
    { "ffffffffffffffff000001", 8 },
    { "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
      "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0000", -1 },
  };
  uint8_t buf[256];

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t n = strlen(cases[c].hex) / 2;
    for (size_t i = 0; i < n; i++) {
      unsigned v;
      sscanf(cases[c].hex + 2 * i, "%2x", &v);
      buf[i] = (uint8_t)v;
    }
    size_t want = cases[c].want < 0 ? n : (size_t)cases[c].want;
    CHECK_EQ(ref_find(buf, n), want);
    for (size_t k = 0; k < NIMPLS; k++) {
      if (!urtp_scl_available(impls[k]))
        continue;
      const uint8_t *got = urtp_scl_find_with(impls[k], buf, buf + n);
      if (got != buf + want) {
        printf("#   case %zu (%s) impl %s\n", c, cases[c].hex, urtp_scl_impl_name(impls[k]));
        CHECK(got == buf + want);
      }
    }
  }
  /* An empty range given as NULL, NULL is valid and finds nothing. */
  for (size_t k = 0; k < NIMPLS; k++)
    if (urtp_scl_available(impls[k]))
      CHECK(urtp_scl_find_with(impls[k], NULL, NULL) == NULL);
}

/* Every buffer over the alphabet {00, 01, 02} up to 11 bytes long. */
static void test_exhaustive_small(void)
{
  uint8_t *mem = malloc(64 + 16);
  REQUIRE(mem);
  for (size_t n = 0; n <= 11; n++) {
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
      total *= 3;
    /* end the buffer at the end of the allocation so ASan sees over-reads */
    uint8_t *p = mem + 64 + 16 - n;
    for (size_t code = 0; code < total; code++) {
      size_t c = code;
      for (size_t i = 0; i < n; i++, c /= 3)
        p[i] = (uint8_t)(c % 3);
      check_find(p, n);
    }
  }
  free(mem);
}

/* Every 5-byte window over {00, 01, 02} at every offset of buffers whose
 * lengths sit on the SWAR/SSE2/AVX2 block boundaries, in zero and in
 * non-zero filler. */
static void test_windows(void)
{
  static const size_t lens[] = { 8, 9, 10, 16, 17, 18, 19, 33, 34, 35, 63, 64, 65, 66, 67,
                                 100, 129, 130, 131, 194, 259 };
  static const uint8_t fillers[] = { 0xaa, 0x00 };
  uint8_t *mem = malloc(320);
  REQUIRE(mem);

  for (size_t f = 0; f < sizeof fillers; f++) {
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      size_t n = lens[li];
      uint8_t *p = mem + 320 - n;
      for (size_t off = 0; off + 5 <= n; off++) {
        for (unsigned code = 0; code < 243; code++) {
          memset(p, fillers[f], n);
          unsigned c = code;
          for (size_t i = 0; i < 5; i++, c /= 3)
            p[off + i] = (uint8_t)(c % 3);
          check_find(p, n);
        }
      }
    }
  }
  free(mem);
}

/* A start code at every offset of buffers of every length up to 200, at
 * every alignment; plus the near misses around it. */
static void test_every_offset(void)
{
  uint8_t *mem = malloc(512);
  REQUIRE(mem);
  for (size_t n = 0; n <= 200; n++) {
    for (size_t align = 0; align < 64; align += 9) {
      /* the buffer ends at mem + 512 - align (the last one at the end) */
      uint8_t *p = mem + 512 - align - n;
      memset(p, 0xff, n);
      check_find(p, n);
      for (size_t k = 0; k + 3 <= n; k++) {
        memset(p, 0xff, n);
        p[k] = 0;
        p[k + 1] = 0;
        p[k + 2] = 1;
        if (ref_find(p, n) != k) {
          CHECK_EQ(ref_find(p, n), k);
          break;
        }
        check_find(p, n);
        p[k + 2] = 2;             /* 00 00 02: no start code */
        check_find(p, n);
        p[k + 2] = 0;             /* 00 00 00 */
        check_find(p, n);
      }
      if (n >= 2) {
        memset(p, 0xff, n);
        p[n - 2] = p[n - 1] = 0;  /* 00 00 at the very end */
        check_find(p, n);
        memset(p, 0, n);          /* one long zero run */
        check_find(p, n);
        p[n - 1] = 1;             /* ... ending in a start code */
        check_find(p, n);
      }
    }
  }
  free(mem);
}

static uint8_t biased_byte(uint64_t *s, unsigned mode)
{
  uint64_t r = tap_rand(s);
  unsigned pick = (unsigned)(r >> 56);
  uint8_t any = (uint8_t)(r >> 8);
  switch (mode) {
  case 0: return any;
  case 1: return pick < 110 ? 0 : pick < 160 ? 1 : any;
  case 2: return pick < 230 ? 0 : pick < 245 ? 1 : any;
  default: return pick < 20 ? 0 : pick < 25 ? 1 : (uint8_t)(any | 0x04);
  }
}

/* Random buffers biased toward 00 and 01, with planted start codes, zero
 * runs and trailing zeros, at unaligned addresses, ending at the end of the
 * allocation; searched from random starts and to random ends too. */
static void test_random(void)
{
  uint64_t seed = 0x5c15eedULL;
  enum { CAP = 4096 + 64 };
  uint8_t *mem = malloc(CAP);
  REQUIRE(mem);

  for (unsigned iter = 0; iter < 120000; iter++) {
    uint64_t r = tap_rand(&seed);
    size_t n;
    switch (r & 3) {
    case 0: n = (size_t)(r >> 8) % 24; break;
    case 1: n = (size_t)(r >> 8) % 140; break;
    case 2: n = (size_t)(r >> 8) % 600; break;
    default: n = (size_t)(r >> 8) % 4096; if ((r >> 40) & 1) n = n / 8 * 8 + ((r >> 41) & 1); break;
    }
    size_t tail = (r >> 20) & 1 ? 0 : (size_t)(r >> 24) % 64;
    uint8_t *p = mem + CAP - tail - n;
    unsigned mode = (unsigned)(r >> 32) % 4;
    for (size_t i = 0; i < n; i++)
      p[i] = biased_byte(&seed, mode);

    /* plant a few start codes, zero runs and a tail */
    unsigned plants = (unsigned)(r >> 50) % 4;
    for (unsigned k = 0; k < plants && n >= 3; k++) {
      uint64_t q = tap_rand(&seed);
      size_t at = (size_t)(q % (n - 2));
      switch ((q >> 32) & 3) {
      case 0: p[at] = 0; p[at + 1] = 0; p[at + 2] = 1; break;
      case 1: memset(p + at, 0, n - at > 70 ? (size_t)(q >> 40) % 70 : n - at); break;
      case 2: p[n - 2] = 0; p[n - 1] = 0; break;
      default: p[n - 3] = 0; p[n - 2] = 0; p[n - 1] = 1; break;
      }
    }

    check_find(p, n);
    if (n) {
      uint64_t q = tap_rand(&seed);
      size_t s = (size_t)(q % (n + 1));
      size_t e = s + (size_t)((q >> 32) % (n - s + 1));
      check_find(p + s, n - s);
      check_find(p + s, e - s);
      check_find(p, e);
    }
  }
  free(mem);
  printf("# %llu comparisons so far\n", comparisons);
}

/* Successive searches through one large buffer, as the iterator does. */
static void test_large_scan(void)
{
  uint64_t seed = 42;
  size_t n = 1u << 20;
  uint8_t *buf = malloc(n);
  REQUIRE(buf);
  for (size_t i = 0; i < n; i++)
    buf[i] = biased_byte(&seed, 3);
  for (int k = 0; k < 200; k++) {
    size_t at = (size_t)(tap_rand(&seed) % (n - 2));
    buf[at] = 0;
    buf[at + 1] = 0;
    buf[at + 2] = 1;
  }
  const uint8_t *end = buf + n;
  size_t expect_count = 0;
  for (size_t i = ref_find(buf, n); i < n; i += 1 + ref_find(buf + i + 1, n - i - 1))
    expect_count++;
  CHECK(expect_count >= 200);

  for (size_t k = 0; k < NIMPLS; k++) {
    if (!urtp_scl_available(impls[k]))
      continue;
    size_t count = 0;
    const uint8_t *q = urtp_scl_find_with(impls[k], buf, end);
    size_t ri = ref_find(buf, n);
    while (q != end) {
      if ((size_t)(q - buf) != ri) {
        printf("#   %s: found %zu, expected %zu\n", urtp_scl_impl_name(impls[k]),
               (size_t)(q - buf), ri);
        CHECK((size_t)(q - buf) == ri);
        break;
      }
      count++;
      ri = ri + 1 + ref_find(buf + ri + 1, n - ri - 1);
      q = urtp_scl_find_with(impls[k], q + 1, end);
    }
    CHECK_EQ(count, expect_count);
  }
  free(buf);
}

/* ---- NAL unit iteration ---------------------------------------------- */

static size_t parse_hex(const char *s, uint8_t *out)
{
  size_t n = 0;
  while (*s) {
    if (*s == ' ') {
      s++;
      continue;
    }
    unsigned v;
    sscanf(s, "%2x", &v);
    out[n++] = (uint8_t)v;
    s += 2;
  }
  return n;
}

static void test_iter_tables(void)
{
  static const struct {
    const char *in;
    const char *nals[4];      /* expected NAL units (hex), NULL-terminated */
  } cases[] = {
    { "", { NULL } },
    { "00 00 01", { NULL } },
    { "00 00 00 01", { NULL } },
    { "aa bb cc 00 00", { NULL } },
    { "00 00 01 65 88", { "65 88", NULL } },
    { "00 00 00 01 65 88", { "65 88", NULL } },
    { "00 00 01 01", { "01", NULL } },
    /* 4- and 3-byte start codes mixed */
    { "00 00 00 01 40 01 0c 00 00 01 42 01 00 00 00 01 44 01",
      { "40 01 0c", "42 01", "44 01", NULL } },
    /* trailing_zero_8bits between NAL units and at the end */
    { "00 00 01 26 01 af 00 00 00 00 00 01 02 80", { "26 01 af", "02 80", NULL } },
    { "00 00 01 aa 00", { "aa", NULL } },
    { "00 00 01 aa 00 00", { "aa", NULL } },
    { "00 00 01 aa 00 00 00 00 00 00", { "aa", NULL } },
    /* bytes before the first start code are ignored */
    { "ff 12 00 00 01 aa bb", { "aa bb", NULL } },
    { "12 00 01 00 00 01 bb", { "bb", NULL } },
    { "00 00 00 00 00 00 01 bb", { "bb", NULL } },
    /* emulation prevention and lone zeros stay inside a NAL unit */
    { "00 00 01 aa 00 00 03 01 bb", { "aa 00 00 03 01 bb", NULL } },
    { "00 00 01 aa 00 01 bb", { "aa 00 01 bb", NULL } },
    { "00 00 01 aa 00 bb 00 cc", { "aa 00 bb 00 cc", NULL } },
    { "00 00 01 aa 00 00 02", { "aa 00 00 02", NULL } },
    /* empty NAL units are skipped, including all-zero ones */
    { "00 00 01 00 00 01 00 00 00 01 cc", { "cc", NULL } },
    { "00 00 01 00 00 00 00 00 00 01 dd", { "dd", NULL } },
    { "00 00 01 cc 00 00 01 00 00 01", { "cc", NULL } },
    /* a start code at the very end of the buffer */
    { "00 00 01 aa 00 00 01", { "aa", NULL } },
    { "00 00 01 aa bb 00 00 00 01", { "aa bb", NULL } },
    /* one-byte NAL units back to back */
    { "00 00 01 01 00 00 01 02 00 00 01 03 00 00 01 04", { "01", "02", "03", "04" } },
  };
  uint8_t in[128], want[128];

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t n = parse_hex(cases[c].in, in);
    /* copy to the end of an exact allocation so over-reads are caught */
    uint8_t *buf = malloc(n ? n : 1);
    REQUIRE(buf);
    memcpy(buf, in, n);

    urtp_scl_iter_t it;
    urtp_nal_t nal;
    urtp_scl_iter_init(&it, buf, n);
    size_t k = 0;
    int bad = 0;
    while (urtp_scl_next(&it, &nal)) {
      if (k >= 4 || !cases[c].nals[k]) {
        bad = 1;
        break;
      }
      size_t wn = parse_hex(cases[c].nals[k], want);
      if (nal.len != wn || memcmp(nal.data, want, wn) != 0 || nal.data < buf ||
          nal.data + nal.len > buf + n)
        bad = 1;
      k++;
    }
    if (k < 4 && cases[c].nals[k])
      bad = 1;
    /* the iterator stays finished */
    CHECK(!urtp_scl_next(&it, &nal));
    if (bad) {
      printf("#   case %zu: \"%s\" gave %zu units\n", c, cases[c].in, k);
      CHECK(!bad);
    }

    /* split agrees, and reports the count when the array is too small */
    urtp_nal_t out[5];
    size_t expect = 0;
    while (expect < 4 && cases[c].nals[expect])
      expect++;
    CHECK_EQ(urtp_scl_split(buf, n, out, 5), expect);
    for (size_t i = 0; i < expect; i++) {
      size_t wn = parse_hex(cases[c].nals[i], want);
      CHECK_EQ(out[i].len, wn);
      if (out[i].len == wn)
        CHECK_MEM(out[i].data, want, wn);
    }
    CHECK_EQ(urtp_scl_split(buf, n, NULL, 0), expect);
    free(buf);
  }

  /* NULL buffer of length 0 */
  urtp_scl_iter_t it;
  urtp_nal_t nal;
  urtp_scl_iter_init(&it, NULL, 0);
  CHECK(!urtp_scl_next(&it, &nal));
  CHECK_EQ(urtp_scl_split(NULL, 0, NULL, 0), 0);
}

static void test_split_max(void)
{
  uint8_t buf[64];
  size_t n = parse_hex("00 00 00 01 11 00 00 01 22 22 00 00 01 33 00 00 00 01 44 44 44 00", buf);
  urtp_nal_t out[4];
  const urtp_nal_t sentinel = { (const uint8_t *)"x", 12345 };

  for (size_t max = 0; max <= 4; max++) {
    for (size_t i = 0; i < 4; i++)
      out[i] = sentinel;
    CHECK_EQ(urtp_scl_split(buf, n, out, max), 4);
    for (size_t i = 0; i < 4; i++) {
      if (i < max) {
        CHECK(out[i].data != sentinel.data);
      } else {
        CHECK(out[i].data == sentinel.data);
        CHECK_EQ(out[i].len, 12345);
      }
    }
  }
  CHECK(out[0].data == buf + 4);
  CHECK_EQ(out[0].len, 1);
  CHECK(out[1].data == buf + 8);
  CHECK_EQ(out[1].len, 2);
  CHECK(out[2].data == buf + 13);
  CHECK_EQ(out[2].len, 1);
  CHECK(out[3].data == buf + 18);
  CHECK_EQ(out[3].len, 3);
}

/* Builds Annex-B streams from random NAL units (emulation prevention
 * applied, varied start codes and trailing zeros, junk in front) and checks
 * that exactly those NAL units come back, at their exact addresses. */
static void test_iter_roundtrip(void)
{
  uint64_t seed = 7;
  enum { MAXN = 40, CAP = 64 * 1024 };
  uint8_t *buf = malloc(CAP);
  size_t off[MAXN], len[MAXN];
  urtp_nal_t out[MAXN];
  REQUIRE(buf);

  for (int iter = 0; iter < 3000; iter++) {
    size_t pos = 0, count = (size_t)(tap_rand(&seed) % MAXN);
    /* junk without a start code: a 01 is never preceded by 00 00 */
    size_t junk = (size_t)(tap_rand(&seed) % 6);
    for (size_t i = 0; i < junk; i++) {
      uint8_t b = (uint8_t)(tap_rand(&seed) % 3);
      if (b == 1 && i >= 2 && buf[pos - 1] == 0 && buf[pos - 2] == 0)
        b = 2;
      buf[pos++] = b;
    }
    for (size_t k = 0; k < count; k++) {
      uint64_t r = tap_rand(&seed);
      if (r & 1)
        buf[pos++] = 0;       /* 4-byte start code */
      buf[pos++] = 0;
      buf[pos++] = 0;
      buf[pos++] = 1;
      off[k] = pos;
      size_t target = 1 + (size_t)(r >> 8) % ((r >> 4) & 1 ? 1000 : 12);
      size_t zeros = 0;
      for (size_t i = 0; i < target; i++) {
        uint8_t b = biased_byte(&seed, 1);
        if (zeros >= 2 && b <= 3) {
          buf[pos++] = 3;     /* emulation prevention */
          zeros = 0;
        }
        buf[pos++] = b;
        zeros = b == 0 ? zeros + 1 : 0;
      }
      if (buf[pos - 1] == 0)
        buf[pos++] = 0x80;    /* rbsp_stop_one_bit: never ends in 00 */
      len[k] = pos - off[k];
      size_t tz = (r >> 40) % 4 == 0 ? (size_t)(r >> 44) % 5 : 0;
      for (size_t i = 0; i < tz; i++)
        buf[pos++] = 0;       /* trailing_zero_8bits */
    }
    /* test the exact-size buffer, so any over-read is an ASan error */
    uint8_t *exact = malloc(pos ? pos : 1);
    REQUIRE(exact);
    memcpy(exact, buf, pos);

    size_t got = urtp_scl_split(exact, pos, out, MAXN);
    CHECK_EQ(got, count);
    for (size_t k = 0; k < got && k < count; k++) {
      if (out[k].data != exact + off[k] || out[k].len != len[k]) {
        printf("#   iter %d nal %zu: at %zu len %zu, expected at %zu len %zu\n", iter, k,
               (size_t)(out[k].data - exact), out[k].len, off[k], len[k]);
        CHECK(0);
        break;
      }
    }
    free(exact);
  }
  free(buf);
}

int main(void)
{
  TAP_RUN(test_names_and_availability);
  TAP_RUN(test_fixed);
  TAP_RUN(test_exhaustive_small);
  TAP_RUN(test_windows);
  TAP_RUN(test_every_offset);
  TAP_RUN(test_random);
  TAP_RUN(test_large_scan);
  TAP_RUN(test_iter_tables);
  TAP_RUN(test_split_max);
  TAP_RUN(test_iter_roundtrip);
  printf("# %llu find comparisons in total\n", comparisons);
  return tap_done();
}
