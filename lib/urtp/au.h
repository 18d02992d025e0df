/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * au.h - access-unit boundaries in a sequence of H.264, H.265 or H.266 NAL
 * units, for Annex-B streams that come without framing (a file, a pipe).
 *
 * Promises:
 *  - Fed the NAL units of a stream in order, urtp_au_split_next() says
 *    which one starts a new access unit, following the first-of rules of
 *    H.264 7.4.1.2.3, H.265 7.4.2.4.4 and H.266 7.4.2.4.3: once the
 *    current access unit has a picture (a VCL NAL unit), an access unit
 *    delimiter, a parameter set, a prefix SEI (and the other NAL unit types
 *    those rules list), an H.266 picture header, or the first slice of a
 *    new picture starts the next one.
 *  - The first slice of a picture is told by its first slice header bit:
 *    first_mb_in_slice == 0 (H.264, no arbitrary slice order),
 *    first_slice_segment_in_pic_flag (H.265),
 *    sh_picture_header_in_slice_header_flag (H.266, whose other pictures
 *    start with a picture header NAL unit). Pictures of several layers in
 *    one access unit are not told apart.
 *  - Pure functions over bytes the caller holds; no allocation.
 */
#ifndef URTP_AU_H
#define URTP_AU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

typedef struct urtp_au_split {
  const urtp_h26x_desc_t *desc;
  bool vcl_seen;              /* the current access unit has a picture */
} urtp_au_split_t;

/* Returns 0, or -EINVAL for Opus. */
int urtp_au_split_init(urtp_au_split_t *s, urtp_codec_t codec);

/* Feeds the next NAL unit (without start code); returns whether it starts
 * a new access unit. The first NAL unit of a stream returns false (nothing
 * precedes it); NAL units shorter than their header change nothing. */
bool urtp_au_split_next(urtp_au_split_t *s, const uint8_t *nal, size_t len);

/* Whether type is an access unit delimiter (9, 35, 20). */
bool urtp_h26x_is_aud(const urtp_h26x_desc_t *d, unsigned type);

#endif
