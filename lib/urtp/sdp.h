/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sdp.h - the session description (RFC 8866) of one sent RTP stream, as
 * receivers such as ffplay, VLC or GStreamer's sdpdemux open it.
 *
 * Promises:
 *  - The text follows from a plain description (urtp_sdp_desc_t) alone: the
 *    same description always gives the same text, lines ending in CRLF.
 *  - Session level: v=, o= (session id from the description), s=, c= (IPv4
 *    or IPv6 from the address's form; an IPv4 multicast group carries its
 *    TTL), t=0 0. Media level: m= (audio for Opus, else video, RTP/AVP,
 *    or RTP/AVPF with feedback; the rtx payload type after the media's),
 *    a=rtpmap, then a=fmtp with what the payload format RFC defines:
 *    H.264 (RFC 6184) packetization-mode=1, profile-level-id and
 *    sprop-parameter-sets; H.265 (RFC 7798) and H.266 (RFC 9328)
 *    profile-id, tier-flag, level-id and the sprop lists of the sets known
 *    (sprop-dci for H.266, sprop-vps, sprop-sps, sprop-pps); Opus (RFC 7587)
 *    opus/48000/2 with sprop-stereo. Fields whose source is not known yet
 *    are left out, never guessed.
 *  - Media-level attributes come in a fixed order, rtpmap and fmtp first;
 *    the attributes of RTCP and retransmission (a=rtcp, a=rtcp-mux,
 *    a=rtcp-fb, the rtx payload type) have their place after them.
 *  - Written the snprintf way into the caller's memory; no allocation.
 */
#ifndef URTP_SDP_H
#define URTP_SDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "params.h"

/* An RTP header extension in use (RFC 8285 section 5): a=extmap:id uri */
typedef struct urtp_sdp_extmap {
  unsigned id;                  /* 1-255 */
  const char *uri;
} urtp_sdp_extmap_t;

#define URTP_SDP_MAX_EXTMAP 32

typedef struct urtp_sdp_desc {
  const char *addr;             /* destination, numeric IPv4 or IPv6 */
  uint16_t port;                /* RTP port */
  int ttl;                      /* IPv4 multicast: the TTL for c= */
  uint32_t session_id;          /* o= sess-id (uvgrtpsink: the SSRC) */
  const char *session_name;     /* s=; NULL: "-" */
  urtp_codec_t codec;
  uint8_t pt;
  unsigned channels;            /* Opus: 2 is sprop-stereo=1 */
  /* Opus of more than two channels: multiopus/48000/N with num_streams,
   * coupled_streams and channel_mapping; NULL: Opus */
  const urtp_opus_multi_t *opus_multi;
  const urtp_params_t *params;  /* H.26x parameter sets; NULL: none known */
  uint16_t rtcp_port;           /* where RTCP goes (a=rtcp, RFC 3605); 0: no line */
  bool rtcp_mux;                /* RTCP on the RTP port (a=rtcp-mux, RFC 5761) */
  /* RTCP feedback: the RTP/AVPF profile (RFC 4585) and a=rtcp-fb nack,
   * and for video nack pli and ccm fir (RFC 5104) */
  bool feedback;
  /* congestion control feedback the sender reads (with feedback):
   * a=rtcp-fb transport-cc (transport-wide, with its extmap among
   * extmap) and ack ccfb (RFC 8888 section 6) */
  bool transport_cc;
  bool ccfb;
  /* retransmission (RFC 4588): payload type rtx_pt, apt= the media's,
   * rtx-time= (ms; 0: not said) */
  bool rtx;
  uint8_t rtx_pt;
  unsigned rtx_time_ms;
  /* header extensions (hdrext.h); entries without a URI or an ID are left
   * out; a=extmap-allow-mixed (RFC 8285 section 6) when one needs the
   * two-byte form */
  urtp_sdp_extmap_t extmap[URTP_SDP_MAX_EXTMAP];
  size_t n_extmap;
} urtp_sdp_desc_t;

/* Writes the description of d into out, NUL-terminated. Returns the text's
 * length without its NUL; if that is cap or more, only an empty string
 * (cap > 0) was written: call again with more room. -EINVAL without an
 * address. */
int urtp_sdp_write(const urtp_sdp_desc_t *d, char *out, size_t cap);

#endif
