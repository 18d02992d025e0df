/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fmtp.h - what a receiver takes from the format parameters of a session
 * description (SDP a=fmtp, or the same fields in GStreamer caps), and the
 * rules that go with them.
 *
 * Promises:
 *  - Parameters are given one at a time, by name and text value, in any
 *    order; names it does not know are ignored, as RFC 8866 asks.
 *  - Parameter sets (H.264 sprop-parameter-sets; H.265 and H.266 sprop-vps,
 *    -sps, -pps, H.266 sprop-dci) come out as one Annex-B block in decoding
 *    order (DCI, VPS, SPS, PPS), whatever order they were given in.
 *  - A stream this library cannot read is refused when it is described,
 *    not after its packets fail: H.264 interleaved mode
 *    (packetization-mode=2), decoding order numbers (sprop-max-don-diff > 0)
 *    outside H.265. why says it in a sentence that names the parameter.
 *  - Memory: allocated while parameters are set (configuration time),
 *    freed by urtp_fmtp_clear().
 */
#ifndef URTP_FMTP_H
#define URTP_FMTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

enum { URTP_FMTP_DCI, URTP_FMTP_VPS, URTP_FMTP_SPS, URTP_FMTP_PPS, URTP_FMTP_KINDS };

typedef struct urtp_fmtp {
  urtp_codec_t codec;
  bool donl;                    /* H.265: sprop-max-don-diff > 0 */
  unsigned channels;            /* Opus sprop-stereo: 2 or 1; 0: not given */
  unsigned rate;                /* Opus sprop-maxcapturerate; 0: not given */
  /* MULTIOPUS: num_streams, coupled_streams, channel_mapping and the
   * channel count (encoding-params, the rtpmap's); streams 0: none given.
   * Check it with urtp_opus_multi_valid before use. */
  urtp_opus_multi_t multi;
  /* decoded parameter sets of each kind (H.264's all under SPS) */
  uint8_t *sets[URTP_FMTP_KINDS];
  size_t sets_len[URTP_FMTP_KINDS];
} urtp_fmtp_t;

void urtp_fmtp_init(urtp_fmtp_t *f, urtp_codec_t codec);
void urtp_fmtp_clear(urtp_fmtp_t *f);

/* One parameter. Returns 0 (taken or ignored), -EINVAL (a value that is
 * not what the parameter holds), -ENOTSUP (a stream this library does not
 * read), -ENOMEM; on failure why (if not NULL) says what, naming the
 * parameter. */
int urtp_fmtp_set(urtp_fmtp_t *f, const char *name, const char *value, char *why,
                  size_t why_len);

/* The parameter sets given, as Annex-B in decoding order, into out (NULL:
 * only the length). Returns the length. */
size_t urtp_fmtp_params(const urtp_fmtp_t *f, uint8_t *out);

#endif
