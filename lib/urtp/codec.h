/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * codec.h - what the payload formats need to know about each codec.
 *
 * The three H.26x payload formats (RFC 6184, 7798, 9328) share one design:
 * single NAL unit packets, aggregation packets and fragmentation units. They
 * differ only in the NAL unit header layout and the type numbers, so each is
 * described by a small table (urtp_h26x_desc_t) that the packetizer and the
 * depacketizer read; there is no per-codec copy of the logic.
 *
 * Promises: pure functions over bytes the caller has bounds-checked (callers
 * pass NAL units of at least urtp_codec_nal_hdr_len() bytes). No allocation.
 */
#ifndef URTP_CODEC_H
#define URTP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* urtp_codec_t, urtp_codec_name() and urtp_codec_from_name() are public */
#include "urtp/urtp.h"

/* A NAL unit (or an Opus packet): bytes without start code. */
typedef struct urtp_nal {
  const uint8_t *data;
  size_t len;
} urtp_nal_t;

/* Table describing one H.26x payload format. */
typedef struct urtp_h26x_desc {
  urtp_codec_t codec;
  uint8_t hdr_len;          /* NAL unit header bytes: 1 (H.264) or 2 */
  uint8_t type_byte;        /* byte of the header holding the type */
  uint8_t type_shift;       /* type = (hdr[type_byte] >> shift) & mask */
  uint8_t type_mask;
  uint8_t ap_type;          /* aggregation packet: 24, 48, 28 */
  uint8_t fu_type;          /* fragmentation unit: 28, 49, 29 */
  uint8_t fu_type_mask;     /* bits of the FU header carrying the type */
  int paci_type;            /* 50 for H.265, -1 otherwise */
  uint8_t fu_p_bit;         /* H.266 FU header P bit (0x20); 0 if none */
  /* How an aggregation packet's header derives from its units' headers,
   * viewing a header as a 16-bit big-endian word (H.264's byte high): */
  uint16_t ap_or_mask;      /* ORed over all units (F) */
  uint16_t ap_max_mask;     /* largest value (H.264 NRI) */
  uint16_t ap_min_mask[2];  /* each the lowest value (LayerId, TID) */
} urtp_h26x_desc_t;

/* The description of codec, or NULL for Opus. */
const urtp_h26x_desc_t *urtp_h26x_desc(urtp_codec_t codec);

/* NAL unit type of nal (which has at least d->hdr_len bytes). */
static inline unsigned urtp_h26x_type(const urtp_h26x_desc_t *d, const uint8_t *nal)
{
  return (unsigned)(nal[d->type_byte] >> d->type_shift) & d->type_mask;
}

/* Writes a NAL unit header of d's layout into dst, copying every field from
 * the template header tmpl but with the type replaced. Used for AP and FU
 * indicators, which inherit F/NRI (H.264) or LayerId/TID (H.265, H.266). */
void urtp_h26x_write_hdr(const urtp_h26x_desc_t *d, uint8_t *dst,
                         const uint8_t *tmpl, unsigned type);

bool urtp_h26x_is_vcl(const urtp_h26x_desc_t *d, unsigned type);
/* Parameter sets: SPS/PPS; VPS/SPS/PPS; DCI/VPS/SPS/PPS (APS is not one). */
bool urtp_h26x_is_param_set(const urtp_h26x_desc_t *d, unsigned type);
/* Random access point: IDR (H.264), IRAP 16..23 (H.265), IDR/CRA/GDR 7..10 (H.266). */
bool urtp_h26x_is_keyframe(const urtp_h26x_desc_t *d, unsigned type);

/* Whether a NAL unit of this type, whose payload after the NAL header
 * begins with body[0..len), may begin an access unit: a parameter set,
 * AUD, prefix SEI or picture header, or the first slice of a picture.
 * A slice that is not its picture's first cannot. */
bool urtp_h26x_starts_au(const urtp_h26x_desc_t *d, unsigned type, const uint8_t *body,
                         size_t len);

/* Samples at 48 kHz in an Opus packet, from its TOC byte (RFC 6716, 3.1),
 * or 0 if it is not a valid packet. */
unsigned urtp_opus_packet_samples(const uint8_t *data, size_t len);

/* Opus with more than two channels (RFC 7845 channel mapping family 1,
 * as "multiopus" in SDP, GStreamer's and libwebrtc's MULTIOPUS): each RTP
 * payload is one multistream packet (streams Opus streams, the first
 * coupled of them stereo), channel i of the output being decoded from
 * mapping[i] (255: silent). RTP carries it as it carries Opus. */
typedef struct urtp_opus_multi {
  unsigned channels;            /* 1..255; 0: not multistream */
  unsigned streams, coupled;
  uint8_t mapping[255];
} urtp_opus_multi_t;

/* Whether m is a consistent multistream layout (RFC 7845 5.1.1: streams
 * >= 1, coupled <= streams, streams + coupled <= 255, every mapping entry
 * below streams + coupled or 255). */
bool urtp_opus_multi_valid(const urtp_opus_multi_t *m);
/* Reads a channel_mapping list ("0,4,1,2,3,5") into m->mapping and
 * m->channels when it is not set yet; returns 0 or -EINVAL. */
int urtp_opus_multi_parse_mapping(urtp_opus_multi_t *m, const char *list);
/* Writes the list form of m's mapping into out (NUL-terminated, cut at
 * cap); returns the length it needs. */
size_t urtp_opus_multi_format_mapping(const urtp_opus_multi_t *m, char *out, size_t cap);

/* RTP clock rate: 90000, or 48000 for Opus. */
uint32_t urtp_codec_clock_rate(urtp_codec_t codec);

#endif
