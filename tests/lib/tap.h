/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tap.h - a minimal TAP producer for the lib/ unit tests (meson protocol 'tap').
 *
 * Each CHECK prints nothing when it holds and a diagnostic when it fails;
 * each test function becomes one "ok"/"not ok" line. main() is
 *   int main(void) { TAP_RUN(test_a); TAP_RUN(test_b); return tap_done(); }
 */
#ifndef URTP_TAP_H
#define URTP_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_cur_failed;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);             \
      tap_cur_failed = 1;                                                             \
    }                                                                                 \
  } while (0)

#define CHECK_EQ(a, b)                                                                \
  do {                                                                                \
    long long tap_a_ = (long long)(a), tap_b_ = (long long)(b);                       \
    if (tap_a_ != tap_b_) {                                                           \
      printf("#   %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, \
             tap_a_, tap_b_);                                                         \
      tap_cur_failed = 1;                                                             \
    }                                                                                 \
  } while (0)

#define CHECK_MEM(a, b, n)                                                            \
  do {                                                                                \
    if (memcmp((a), (b), (n)) != 0) {                                                 \
      printf("#   %s:%d: memcmp(%s, %s, %s) differs\n", __FILE__, __LINE__, #a, #b, #n); \
      tap_cur_failed = 1;                                                             \
    }                                                                                 \
  } while (0)

/* Stops the current test function (after a failure that makes going on pointless). */
#define REQUIRE(cond)                                                                 \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      printf("#   %s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond);           \
      tap_cur_failed = 1;                                                             \
      return;                                                                         \
    }                                                                                 \
  } while (0)

#define TAP_RUN(fn)                                                                   \
  do {                                                                                \
    tap_cur_failed = 0;                                                               \
    fn();                                                                             \
    tap_n++;                                                                          \
    if (tap_cur_failed)                                                               \
      tap_failed++;                                                                   \
    printf("%s %d - %s\n", tap_cur_failed ? "not ok" : "ok", tap_n, #fn);             \
    fflush(stdout);                                                                   \
  } while (0)

static inline int tap_done(void)
{
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

/* Deterministic PRNG for tests (xorshift64*), so failures reproduce. */
static inline uint64_t tap_rand(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

#endif
