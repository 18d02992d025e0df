/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/scl.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define URTP_SCL_X86 1
#include <immintrin.h>
#else
#define URTP_SCL_X86 0
#endif

typedef const uint8_t *(*scl_fn_t)(const uint8_t *p, const uint8_t *end);

/* The reference: every other implementation hands its tail (the last few
 * bytes, where a wide load would cross end) to this loop. */
static const uint8_t *find_naive(const uint8_t *p, const uint8_t *end)
{
  if (end - p < 3)
    return end;
  for (const uint8_t *last = end - 2; p < last; p++) {
    if (p[0] == 0 && p[1] == 0 && p[2] == 1)
      return p;
  }
  return end;
}

/* ---- 64-bit word at a time (uvgRTP) ---------------------------------- */

#define ONES UINT64_C(0x0101010101010101)
#define LOW7 UINT64_C(0x7f7f7f7f7f7f7f7f)
#define HIGH UINT64_C(0x8080808080808080)

static inline uint64_t load64(const uint8_t *p)
{
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Non-zero iff some byte of v is zero (may flag extra bytes above a zero
 * byte, so it only answers yes/no). */
static inline uint64_t has_zero(uint64_t v)
{
  return (v - ONES) & ~v & HIGH;
}

/* Exactly the high bit of each zero byte of v: no carries between bytes. */
static inline uint64_t zero_bytes(uint64_t v)
{
  return ~(((v & LOW7) + LOW7) | v | LOW7);
}

/* Index of the lowest-addressed byte flagged in a zero_bytes() mask. */
static inline unsigned first_byte(uint64_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return (unsigned)__builtin_clzll(m) / 8;
#else
  return (unsigned)__builtin_ctzll(m) / 8;
#endif
}

/* The uvgRTP idea: test a whole 64-bit word for a zero byte, look at bytes
 * only when there is one. Here the word tested is p[i..i+8) | p[i+1..i+9),
 * whose byte j is zero exactly when p[i+j] and p[i+j+1] both are: that is
 * every start code beginning in [i, i+8), and almost nothing else in
 * emulation-prevented data, so the byte-level check (which also needs the
 * word at i+2, bytes up to i+9) is rare and its branch well predicted.
 * Four words are tested per iteration to keep the loads in flight.
 * Compilers may vectorise this loop; that is welcome on targets without a
 * hand-written SIMD path. */
static inline uint64_t swar_match(const uint8_t *q)
{
  return zero_bytes(load64(q)) & zero_bytes(load64(q + 1)) & zero_bytes(load64(q + 2) ^ ONES);
}

static const uint8_t *find_swar(const uint8_t *p, const uint8_t *end)
{
  size_t n = (size_t)(end - p), i = 0;

  while (n - i >= 34) {
    const uint8_t *q = p + i;
    uint64_t t = has_zero(load64(q) | load64(q + 1)) |
                 has_zero(load64(q + 8) | load64(q + 9)) |
                 has_zero(load64(q + 16) | load64(q + 17)) |
                 has_zero(load64(q + 24) | load64(q + 25));
    if (t) {
      for (int k = 0; k < 32; k += 8) {
        uint64_t m = swar_match(q + k);
        if (m)
          return q + k + first_byte(m);
      }
    }
    i += 32;
  }
  while (n - i >= 10) {
    uint64_t m = swar_match(p + i);
    if (m)
      return p + i + first_byte(m);
    i += 8;
  }
  return find_naive(p + i, end);
}

/* ---- SSE2 and AVX2 ----------------------------------------------------- */

#if URTP_SCL_X86

/* The same filter with vectors: OR of the loads at i and i+1 compared with
 * zero flags the zero pairs of four vectors at once; only then are the
 * exact masks (zero at i, zero at i+1, 01 at i+2) computed. A W-byte vector
 * at q needs bytes up to q+W+1, so each loop stops that far before end and
 * hands the rest to a narrower loop, and finally to the byte loop. */

static inline __m128i sse2_pairs(const uint8_t *q, __m128i zero)
{
  return _mm_cmpeq_epi8(_mm_or_si128(_mm_loadu_si128((const __m128i *)q),
                                     _mm_loadu_si128((const __m128i *)(q + 1))), zero);
}

static inline unsigned sse2_match(const uint8_t *q, __m128i zero, __m128i one)
{
  __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)q), zero);
  __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(q + 1)), zero);
  __m128i c = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(q + 2)), one);
  return (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_and_si128(a, b), c));
}

static const uint8_t *find_sse2(const uint8_t *p, const uint8_t *end)
{
  size_t n = (size_t)(end - p), i = 0;
  const __m128i zero = _mm_setzero_si128(), one = _mm_set1_epi8(1);

  while (n - i >= 66) {
    const uint8_t *q = p + i;
    __m128i t = _mm_or_si128(_mm_or_si128(sse2_pairs(q, zero), sse2_pairs(q + 16, zero)),
                             _mm_or_si128(sse2_pairs(q + 32, zero), sse2_pairs(q + 48, zero)));
    if (_mm_movemask_epi8(t)) {
      for (int k = 0; k < 64; k += 16) {
        unsigned m = sse2_match(q + k, zero, one);
        if (m)
          return q + k + __builtin_ctz(m);
      }
    }
    i += 64;
  }
  while (n - i >= 18) {
    unsigned m = sse2_match(p + i, zero, one);
    if (m)
      return p + i + __builtin_ctz(m);
    i += 16;
  }
  return find_naive(p + i, end);
}

/* target("avx2") lets this file build without -mavx2; these functions run
 * only after the CPU check. */
__attribute__((target("avx2")))
static inline __m256i avx2_pairs(const uint8_t *q, __m256i zero)
{
  return _mm256_cmpeq_epi8(_mm256_or_si256(_mm256_loadu_si256((const __m256i *)q),
                                           _mm256_loadu_si256((const __m256i *)(q + 1))), zero);
}

__attribute__((target("avx2")))
static inline unsigned avx2_match(const uint8_t *q, __m256i zero, __m256i one)
{
  __m256i a = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)q), zero);
  __m256i b = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(q + 1)), zero);
  __m256i c = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(q + 2)), one);
  return (unsigned)_mm256_movemask_epi8(_mm256_and_si256(_mm256_and_si256(a, b), c));
}

__attribute__((target("avx2")))
static const uint8_t *find_avx2(const uint8_t *p, const uint8_t *end)
{
  size_t n = (size_t)(end - p), i = 0;
  const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi8(1);

  while (n - i >= 130) {
    const uint8_t *q = p + i;
    __m256i t = _mm256_or_si256(_mm256_or_si256(avx2_pairs(q, zero), avx2_pairs(q + 32, zero)),
                                _mm256_or_si256(avx2_pairs(q + 64, zero), avx2_pairs(q + 96, zero)));
    if (!_mm256_testz_si256(t, t)) {
      for (int k = 0; k < 128; k += 32) {
        unsigned m = avx2_match(q + k, zero, one);
        if (m)
          return q + k + __builtin_ctz(m);
      }
    }
    i += 128;
  }
  while (n - i >= 34) {
    unsigned m = avx2_match(p + i, zero, one);
    if (m)
      return p + i + __builtin_ctz(m);
    i += 32;
  }
  /* Fewer than 34 bytes left: at most one 16-byte step, then bytes. */
  return find_sse2(p + i, end);
}

#endif /* URTP_SCL_X86 */

/* ---- selection --------------------------------------------------------- */

bool urtp_scl_available(urtp_scl_impl_t impl)
{
  switch (impl) {
  case URTP_SCL_AUTO:
  case URTP_SCL_NAIVE:
  case URTP_SCL_SWAR:
    return true;
#if URTP_SCL_X86
  case URTP_SCL_SSE2:
    return true;            /* part of x86-64 */
  case URTP_SCL_AVX2:
    __builtin_cpu_init();   /* harmless if already done; needed before constructors ran */
    return __builtin_cpu_supports("avx2");
#else
  case URTP_SCL_SSE2:
  case URTP_SCL_AVX2:
    return false;
#endif
  }
  return false;
}

const char *urtp_scl_impl_name(urtp_scl_impl_t impl)
{
  switch (impl) {
  case URTP_SCL_AUTO: return "auto";
  case URTP_SCL_NAIVE: return "naive";
  case URTP_SCL_SWAR: return "swar";
  case URTP_SCL_SSE2: return "sse2";
  case URTP_SCL_AVX2: return "avx2";
  }
  return "unknown";
}

static scl_fn_t impl_fn(urtp_scl_impl_t impl)
{
  if (!urtp_scl_available(impl))
    return NULL;
  switch (impl) {
  case URTP_SCL_NAIVE: return find_naive;
  case URTP_SCL_SWAR: return find_swar;
#if URTP_SCL_X86
  case URTP_SCL_SSE2: return find_sse2;
  case URTP_SCL_AVX2: return find_avx2;
#else
  case URTP_SCL_SSE2:
  case URTP_SCL_AVX2:
    return NULL;
#endif
  case URTP_SCL_AUTO:
    break;
  }
  if (urtp_scl_available(URTP_SCL_AVX2))
    return impl_fn(URTP_SCL_AVX2);
  if (urtp_scl_available(URTP_SCL_SSE2))
    return impl_fn(URTP_SCL_SSE2);
  return find_swar;
}

static const uint8_t *find_first_call(const uint8_t *p, const uint8_t *end);

/* Starts at a resolver that stores the choice. Threads racing through it
 * store the same value, so a relaxed atomic is all that is needed; later
 * calls cost one load and an indirect call. */
static _Atomic(scl_fn_t) find_fn = find_first_call;

static const uint8_t *find_first_call(const uint8_t *p, const uint8_t *end)
{
  scl_fn_t fn = impl_fn(URTP_SCL_AUTO);
  atomic_store_explicit(&find_fn, fn, memory_order_relaxed);
  return fn(p, end);
}

/* Ranges too short for a start code return at once, which also keeps an
 * empty NULL range away from the pointer arithmetic of the loops. */
const uint8_t *urtp_scl_find(const uint8_t *p, const uint8_t *end)
{
  if (end - p < 3)
    return end;
  return atomic_load_explicit(&find_fn, memory_order_relaxed)(p, end);
}

const uint8_t *urtp_scl_find_with(urtp_scl_impl_t impl, const uint8_t *p, const uint8_t *end)
{
  scl_fn_t fn = impl_fn(impl);
  if (!fn)
    return NULL;
  return end - p < 3 ? end : fn(p, end);
}

/* ---- NAL units --------------------------------------------------------- */

void urtp_scl_iter_init(urtp_scl_iter_t *it, const uint8_t *buf, size_t len)
{
  /* buf may be NULL when len is 0; NULL + 0 is not valid C. */
  it->end = len ? buf + len : buf;
  /* Bytes before the first start code belong to no NAL unit. */
  it->p = len ? urtp_scl_find(buf, it->end) : it->end;
}

bool urtp_scl_next(urtp_scl_iter_t *it, urtp_nal_t *nal)
{
  while (it->p != it->end) {
    const uint8_t *start = it->p + 3;
    const uint8_t *next = urtp_scl_find(start, it->end);
    const uint8_t *e = next;
    /* Drops trailing_zero_8bits and the first byte of a 4-byte start code. */
    while (e > start && e[-1] == 0)
      e--;
    it->p = next;
    if (e > start) {
      nal->data = start;
      nal->len = (size_t)(e - start);
      return true;
    }
  }
  return false;
}

size_t urtp_scl_split(const uint8_t *buf, size_t len, urtp_nal_t *out, size_t max)
{
  urtp_scl_iter_t it;
  urtp_nal_t nal;
  size_t n = 0;

  urtp_scl_iter_init(&it, buf, len);
  while (urtp_scl_next(&it, &nal)) {
    if (n < max)
      out[n] = nal;
    n++;
  }
  return n;
}
