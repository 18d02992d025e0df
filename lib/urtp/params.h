/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * params.h - parameter sets of H.264, H.265 and H.266: the current ones of a
 * stream, their configuration records and their SDP forms.
 *
 * Promises:
 *  - A store (urtp_params_t) holds the current parameter sets of a stream
 *    per kind (DCI, VPS, SPS, PPS; at most URTP_PARAMS_MAX_PER_KIND each, in
 *    the order they came) and a serial number that changes whenever they
 *    change, and only then.
 *  - In-band tracking: the sets one access unit carries are gathered
 *    (urtp_params_au_add) and replace the current ones of their kinds only
 *    when committed, so a decoder-facing view never mixes two generations
 *    of one kind. Committing sets equal to the current ones changes nothing.
 *  - Configuration records (avcC, ISO/IEC 14496-15 5.3.3.1; hvcC, 8.3.3.1):
 *    every length is checked against the bytes held, and a record is taken
 *    whole or not at all; the record of the current sets can be written.
 *  - SDP forms: sprop lists (RFC 6184 sprop-parameter-sets, RFC 7798 and
 *    RFC 9328 sprop-vps/sps/pps/dci) are encoded and decoded with standard
 *    base64 (RFC 4648) through OpenSSL's libcrypto; decoding gives Annex-B
 *    with 4-byte start codes, ready to be put in band by a receiver. The
 *    fmtp profile fields come from the SPS, read after removing emulation
 *    prevention bytes.
 *  - Memory grows to the largest sets seen and is then reused: tracking the
 *    sets a stream repeats in band allocates nothing. No printing.
 */
#ifndef URTP_PARAMS_H
#define URTP_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

/* Parameter-set kinds, in the order a decoder needs them (and they are sent). */
typedef enum urtp_ps_kind {
  URTP_PS_DCI,  /* H.266 decoding capability information (13) */
  URTP_PS_VPS,  /* H.265 (32), H.266 (14) */
  URTP_PS_SPS,  /* H.264 (7), H.265 (33), H.266 (15) */
  URTP_PS_PPS,  /* H.264 (8), H.265 (34), H.266 (16) */
} urtp_ps_kind_t;

#define URTP_PS_KINDS 4
#define URTP_PS_BIT(k) (1u << (k))
/* Sets held per kind; further ones are ignored (and reported by the adders). */
#define URTP_PARAMS_MAX_PER_KIND 16

/* The kind of NAL unit type `type` of codec, or -1 if it is no parameter set. */
int urtp_ps_kind(urtp_codec_t codec, unsigned type);
/* Kinds a decoder cannot start without, as URTP_PS_BIT mask: SPS and PPS;
 * for H.265 also VPS. 0 for Opus. */
unsigned urtp_ps_required(urtp_codec_t codec);

/* The sets of one kind, back to back in buf. */
typedef struct urtp_params_list {
  uint8_t *buf;
  size_t used, cap;
  unsigned n;
  uint32_t off[URTP_PARAMS_MAX_PER_KIND];
  uint32_t len[URTP_PARAMS_MAX_PER_KIND];
} urtp_params_list_t;

typedef struct urtp_params {
  urtp_codec_t codec;
  unsigned serial;                      /* changes with the current sets */
  urtp_params_list_t cur[URTP_PS_KINDS];
  urtp_params_list_t au[URTP_PS_KINDS]; /* gathered in the current AU */
  unsigned au_mask;                     /* kinds the current AU carried */
} urtp_params_t;

/* An empty store for codec. Zero-initialised stores are empty H.264 ones. */
void urtp_params_init(urtp_params_t *ps, urtp_codec_t codec);
void urtp_params_free(urtp_params_t *ps);
/* Forgets every set and sets the codec; the serial changes if any set was
 * known or the codec differs. Keeps the memory. */
void urtp_params_reset(urtp_params_t *ps, urtp_codec_t codec);

/* Appends a parameter set (NAL unit without start code) to the current
 * ones of its kind. Returns 1 if added (the serial changed), 0 if ignored
 * (not a parameter set of the store's codec, shorter than its NAL header,
 * or its kind is full), -ENOMEM. */
int urtp_params_add(urtp_params_t *ps, const uint8_t *nal, size_t len);

/* Number of current sets of kind, and set i of them. */
unsigned urtp_params_count(const urtp_params_t *ps, urtp_ps_kind_t kind);
const uint8_t *urtp_params_get(const urtp_params_t *ps, urtp_ps_kind_t kind, unsigned i,
                               size_t *len);
/* Kinds with at least one current set, as URTP_PS_BIT mask. */
unsigned urtp_params_mask(const urtp_params_t *ps);
/* Whether every kind urtp_ps_required() names is known. */
bool urtp_params_complete(const urtp_params_t *ps);
/* Current sets in all kinds. */
unsigned urtp_params_total(const urtp_params_t *ps);

/* --- in-band tracking, one access unit at a time ------------------------- */

/* Starts an access unit: forgets what was gathered and the kinds carried. */
void urtp_params_au_begin(urtp_params_t *ps);
/* Gathers nal if it is a parameter set: 1 gathered, 0 not a parameter set
 * (or its kind is full), -ENOMEM. */
int urtp_params_au_add(urtp_params_t *ps, const uint8_t *nal, size_t len);
/* Kinds the current access unit carried so far (committed or not). */
static inline unsigned urtp_params_au_mask(const urtp_params_t *ps)
{
  return ps->au_mask;
}
/* Whether committing now would change the current sets. */
bool urtp_params_au_changes(const urtp_params_t *ps);
/* Makes the gathered sets the current ones of their kinds (the others stay)
 * and forgets them; the kinds carried are kept. Returns whether the current
 * sets changed. Memory is swapped, not copied: a caller holding pointers
 * into the current sets must be done with them when this returns true. */
bool urtp_params_au_commit(urtp_params_t *ps);

/* --- configuration records ----------------------------------------------- */

/* Parses an avcC (H.264) or hvcC (H.265) record: *nal_length_size gets the
 * size of the NAL unit length fields of the stream (1 to 4), sets[0 .. *n)
 * the parameter sets it holds (pointing into rec; NAL units that are not
 * parameter sets, such as SEI in hvcC, are included as found). Returns 0;
 * -EINVAL if the record is malformed (a version other than 1, a length
 * beyond the bytes held, bytes missing); -ENOSPC if more than max NAL units;
 * -ENOTSUP for H.266 and Opus, which have no such record here. */
int urtp_params_parse_record(urtp_codec_t codec, const uint8_t *rec, size_t len,
                             unsigned *nal_length_size, urtp_nal_t *sets, size_t max,
                             size_t *n);
/* Makes the parameter sets of a record the current ones (all kinds replaced,
 * even when the record holds none of a kind); nal_length_size may be NULL.
 * On error (as urtp_params_parse_record, or -ENOMEM) nothing changes. */
int urtp_params_set_record(urtp_params_t *ps, const uint8_t *rec, size_t len,
                           unsigned *nal_length_size);

/* Writes the configuration record of the current sets: avcC (H.264, with
 * the chroma and bit depth fields the High profiles' records carry) or
 * hvcC (H.265: VPS, SPS and PPS arrays; profile, tier, level, chroma format,
 * bit depths and temporal layers read from the first SPS; spatial
 * segmentation, parallelism and frame rate given as not known). Its NAL
 * unit length fields are nal_length_size bytes (1, 2 or 4); with
 * ps_in_band the stream carries parameter sets too (hev1: hvcC's
 * array_completeness 0; avcC has no such flag). Returns the record's length,
 * written only if it is at most cap (out may be NULL with cap 0: measure); -EAGAIN if a kind a decoder needs is
 * missing; -EINVAL if the first SPS cannot be read or a set is longer than
 * 65535 bytes; -ENOTSUP for H.266 and Opus. */
int urtp_params_record(const urtp_params_t *ps, unsigned nal_length_size, bool ps_in_band,
                       uint8_t *out, size_t cap);

/* --- SDP forms ----------------------------------------------------------- */

/* Writes the current sets of the kinds in mask (kind order, then arrival
 * order) as comma-separated base64 into out, NUL-terminated: the value of
 * sprop-parameter-sets (mask SPS|PPS) or sprop-vps etc. (one kind). Returns
 * the text's length without its NUL; if that is cap or more, nothing but
 * an empty string (cap > 0) was written. */
size_t urtp_params_sprop(const urtp_params_t *ps, unsigned mask, char *out, size_t cap);

/* Decodes an sprop list (comma-separated base64; blanks around items and
 * empty items are skipped, missing '=' padding is accepted) into Annex-B:
 * each set preceded by 00 00 00 01. out NULL measures. Returns the bytes
 * written (or needed), -EINVAL if an item is not base64 (a character
 * outside the alphabet, padding inside, a length of 4k+1), -ENOSPC if cap
 * is too small. */
int urtp_sprop_decode(const char *text, size_t len, uint8_t *out, size_t cap);

/* Removes emulation prevention bytes (00 00 03 -> 00 00) from src, writing
 * at most cap bytes; returns how many were written. */
size_t urtp_rbsp_unescape(const uint8_t *src, size_t len, uint8_t *dst, size_t cap);

/* H.264 profile-level-id (RFC 6184 8.1): profile_idc, the constraint flags
 * byte and level_idc of an SPS NAL unit (with its header). Returns 0 or
 * -EINVAL if the SPS is too short or no SPS. */
int urtp_h264_profile_level_id(const uint8_t *sps, size_t len, uint8_t out[3]);

/* H.265 / H.266 profile-id, tier-flag and level-id (RFC 7798 7.1, RFC 9328
 * 7.1) from the general profile_tier_level of an SPS NAL unit (with its
 * header). H.265: general_profile_space must be 0; H.266: the SPS must
 * carry its profile_tier_level (sps_ptl_dpb_hrd_params_present_flag).
 * Returns 0 or -EINVAL (too short, no SPS, or none of the above). */
typedef struct urtp_ptl {
  unsigned profile_id, tier_flag, level_id;
} urtp_ptl_t;
int urtp_h26x_sps_ptl(urtp_codec_t codec, const uint8_t *sps, size_t len, urtp_ptl_t *out);

#endif
