/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scl.h - start-code lookup: split an Annex-B byte stream into NAL units.
 *
 * A start code is 00 00 01; a preceding zero byte (the 4-byte form) and the
 * trailing_zero_8bits of the previous NAL unit are not part of any NAL unit.
 * NAL units are therefore the bytes between start codes with trailing zero
 * bytes removed (a NAL unit never ends in 00). Bytes before the first start
 * code are ignored and empty NAL units are skipped.
 *
 * Promises:
 *  - urtp_scl_find() gives the same answer as the naive byte loop for every
 *    input; it reads only inside [p, end) and needs no padding.
 *  - The fastest implementation the CPU supports is picked once (AVX2, SSE2,
 *    or 64-bit word-at-a-time as in the uvgRTP paper); all are selectable
 *    for tests and benchmarks.
 *  - No allocation.
 */
#ifndef URTP_SCL_H
#define URTP_SCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

typedef enum urtp_scl_impl {
  URTP_SCL_AUTO,     /* best available */
  URTP_SCL_NAIVE,    /* byte loop: the reference */
  URTP_SCL_SWAR,     /* 8 bytes at a time (haszero bit trick) */
  URTP_SCL_SSE2,
  URTP_SCL_AVX2,
} urtp_scl_impl_t;

/* Returns a pointer to the first byte of the first 00 00 01 in [p, end), or
 * end if there is none. */
const uint8_t *urtp_scl_find(const uint8_t *p, const uint8_t *end);

/* The same with a chosen implementation; returns NULL if impl is not
 * available on this CPU. */
const uint8_t *urtp_scl_find_with(urtp_scl_impl_t impl, const uint8_t *p,
                                  const uint8_t *end);
bool urtp_scl_available(urtp_scl_impl_t impl);
const char *urtp_scl_impl_name(urtp_scl_impl_t impl);

/* Iterates over the NAL units of an Annex-B buffer. */
typedef struct urtp_scl_iter {
  const uint8_t *p;     /* position of the next start code, or end */
  const uint8_t *end;
} urtp_scl_iter_t;

void urtp_scl_iter_init(urtp_scl_iter_t *it, const uint8_t *buf, size_t len);
/* Stores the next NAL unit in *nal and returns true, or returns false at the
 * end of the buffer. */
bool urtp_scl_next(urtp_scl_iter_t *it, urtp_nal_t *nal);

/* Splits buf into at most max NAL units. Returns how many were found; if
 * that is more than max, only the first max were stored (call again with a
 * larger array). */
size_t urtp_scl_split(const uint8_t *buf, size_t len, urtp_nal_t *out, size_t max);

#endif
