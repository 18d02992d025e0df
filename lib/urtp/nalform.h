/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nalform.h - the forms a receiver hands H.264, H.265 and H.266 access units
 * on in: Annex-B byte-stream as depay.h makes them, or length-prefixed
 * (ISO/IEC 14496-15: H.264 avc and avc3, H.265 hvc1 and hev1) with the
 * configuration record that goes with them (params.h writes it).
 *
 * Promises:
 *  - Works in place on depay.h's output (a 4-byte start code before every
 *    NAL unit): each start code becomes a 4-byte length. With the
 *    parameter sets out of band (avc, hvc1) they are cut out of the access
 *    unit, and the record alone carries them. Nothing is allocated per
 *    access unit once the largest sets have been seen.
 *  - Tracks the stream's parameter sets (those given before the stream,
 *    e.g. from sprop-*, then those in band, an access unit's taken
 *    together as params.h does) in both length-prefixed forms, and says
 *    which access unit changed them, so that the record is made anew
 *    before that access unit goes out.
 *  - Access units that are not in depay.h's form (not starting with
 *    00 00 00 01) are refused unchanged. Bytes from the wire are trusted
 *    for nothing: a NAL unit that holds a start code itself becomes two.
 *  - Walks the NAL units of an access unit in either form (alignment=nal).
 */
#ifndef URTP_NALFORM_H
#define URTP_NALFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "params.h"

typedef enum urtp_nalform_kind {
  URTP_NALFORM_BYTE_STREAM, /* as depay.h makes them: nothing to do */
  URTP_NALFORM_LENGTH,      /* avc3, hev1: lengths, parameter sets in band too */
  URTP_NALFORM_LENGTH_OOB,  /* avc, hvc1: lengths, parameter sets in the record only */
} urtp_nalform_kind_t;

typedef struct urtp_nalform {
  urtp_codec_t codec;
  urtp_nalform_kind_t kind;
  urtp_params_t ps;
} urtp_nalform_t;

/* Returns 0; -EINVAL for Opus, or a length-prefixed form of H.266 (which
 * GStreamer and this library carry as byte-stream only). */
int urtp_nalform_init(urtp_nalform_t *f, urtp_codec_t codec, urtp_nalform_kind_t kind);
void urtp_nalform_free(urtp_nalform_t *f);

/* Parameter sets known before the stream (Annex-B, as urtp_sprop_decode()
 * gives them); NAL units that are not parameter sets are ignored. Returns
 * 1 if the sets changed, 0, or -ENOMEM. */
int urtp_nalform_seed(urtp_nalform_t *f, const uint8_t *annexb, size_t len);

/* Converts one access unit in place to the form; *len becomes its new
 * length (cut parameter sets may leave it shorter, even empty). Returns 1
 * if its parameter sets changed the current ones, 0 if not, -EINVAL if it
 * is not in depay.h's form (left as it was), -ENOMEM. Byte-stream: 0,
 * nothing done. */
int urtp_nalform_convert(urtp_nalform_t *f, uint8_t *au, size_t *len);

/* Whether the sets a decoder needs (params.h's urtp_params_complete) are
 * known, so that the record can be written. */
bool urtp_nalform_ready(const urtp_nalform_t *f);

/* The record of the current sets, with 4-byte lengths (params.h's
 * urtp_params_record). */
int urtp_nalform_record(const urtp_nalform_t *f, uint8_t *out, size_t cap);

/* The NAL unit of a converted access unit that starts at *off (its 4-byte
 * start code or length included): returns false at the end or if the
 * access unit is not well formed from there; else sets *unit_len and moves
 * *off to the next one. */
bool urtp_nalform_next(const urtp_nalform_t *f, const uint8_t *au, size_t len, size_t *off,
                       size_t *unit_len);

#endif
