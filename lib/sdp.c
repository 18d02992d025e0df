/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/sdp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Text written while it fits, measured always. */
typedef struct sb {
  char *p;
  size_t cap, len;
} sb_t;

__attribute__((format(printf, 2, 3))) static void sb_printf(sb_t *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->len < b->cap ? b->p + b->len : NULL, b->len < b->cap ? b->cap - b->len : 0,
                    fmt, ap);
  va_end(ap);
  if (n > 0)
    b->len += (size_t)n;
}

/* The sprop list of the kinds in mask. */
static void sb_sprop(sb_t *b, const urtp_params_t *ps, unsigned mask)
{
  b->len += urtp_params_sprop(ps, mask, b->len < b->cap ? b->p + b->len : NULL,
                              b->len < b->cap ? b->cap - b->len : 0);
}

static bool addr_v6(const char *addr)
{
  return strchr(addr, ':') != NULL;
}

static bool addr_multicast(const char *addr)
{
  if (addr_v6(addr)) {
    struct in6_addr a6;
    return inet_pton(AF_INET6, addr, &a6) == 1 && IN6_IS_ADDR_MULTICAST(&a6);
  }
  struct in_addr a4;
  return inet_pton(AF_INET, addr, &a4) == 1 && IN_MULTICAST(ntohl(a4.s_addr));
}

static void session_level(sb_t *b, const urtp_sdp_desc_t *d)
{
  bool v6 = addr_v6(d->addr);
  sb_printf(b, "v=0\r\n");
  sb_printf(b, "o=- %u 1 IN %s %s\r\n", (unsigned)d->session_id, v6 ? "IP6" : "IP4",
            v6 ? "::1" : "127.0.0.1");
  sb_printf(b, "s=%s\r\n", d->session_name ? d->session_name : "-");
  if (!v6 && addr_multicast(d->addr))
    sb_printf(b, "c=IN IP4 %s/%d\r\n", d->addr, d->ttl);
  else
    sb_printf(b, "c=IN %s %s\r\n", v6 ? "IP6" : "IP4", d->addr);
  sb_printf(b, "t=0 0\r\n");
}

/* The fmtp parameters of an H.26x stream (without "a=fmtp:pt "). */
static void h26x_fmtp(sb_t *b, const urtp_sdp_desc_t *d)
{
  const urtp_params_t *ps = d->params;
  const uint8_t *sps = NULL;
  size_t sps_len = 0;
  if (ps)
    sps = urtp_params_get(ps, URTP_PS_SPS, 0, &sps_len);

  if (d->codec == URTP_CODEC_H264) {
    uint8_t pli[3];
    sb_printf(b, "packetization-mode=1");
    if (sps && urtp_h264_profile_level_id(sps, sps_len, pli) == 0)
      sb_printf(b, ";profile-level-id=%02x%02x%02x", pli[0], pli[1], pli[2]);
    if (ps && urtp_params_count(ps, URTP_PS_SPS) && urtp_params_count(ps, URTP_PS_PPS)) {
      sb_printf(b, ";sprop-parameter-sets=");
      sb_sprop(b, ps, URTP_PS_BIT(URTP_PS_SPS) | URTP_PS_BIT(URTP_PS_PPS));
    }
    return;
  }

  static const char *const names[URTP_PS_KINDS] = { "sprop-dci", "sprop-vps", "sprop-sps",
                                                    "sprop-pps" };
  const char *sep = "";
  urtp_ptl_t ptl;
  if (sps && urtp_h26x_sps_ptl(d->codec, sps, sps_len, &ptl) == 0) {
    sb_printf(b, "profile-id=%u;tier-flag=%u;level-id=%u", ptl.profile_id, ptl.tier_flag,
              ptl.level_id);
    sep = ";";
  }
  for (int k = d->codec == URTP_CODEC_H266 ? URTP_PS_DCI : URTP_PS_VPS; ps && k < URTP_PS_KINDS;
       k++) {
    if (!urtp_params_count(ps, (urtp_ps_kind_t)k))
      continue;
    sb_printf(b, "%s%s=", sep, names[k]);
    sb_sprop(b, ps, URTP_PS_BIT(k));
    sep = ";";
  }
}

/* The m= line's transport and formats: RTP/AVPF with feedback (RFC
 * 4585), the rtx payload type after the media's. */
static void m_line(sb_t *b, const urtp_sdp_desc_t *d, const char *media)
{
  sb_printf(b, "m=%s %u RTP/%s %u", media, (unsigned)d->port, d->feedback ? "AVPF" : "AVP",
            (unsigned)d->pt);
  if (d->rtx)
    sb_printf(b, " %u", (unsigned)d->rtx_pt);
  sb_printf(b, "\r\n");
}

static void media_level(sb_t *b, const urtp_sdp_desc_t *d)
{
  unsigned pt = d->pt;
  bool opus = d->codec == URTP_CODEC_OPUS;
  if (opus && d->opus_multi) {
    const urtp_opus_multi_t *m = d->opus_multi;
    char map[255 * 4];
    urtp_opus_multi_format_mapping(m, map, sizeof map);
    m_line(b, d, "audio");
    sb_printf(b, "a=rtpmap:%u multiopus/48000/%u\r\n", pt, m->channels);
    sb_printf(b, "a=fmtp:%u num_streams=%u;coupled_streams=%u;channel_mapping=%s\r\n", pt,
              m->streams, m->coupled, map);
  } else if (opus) {
    m_line(b, d, "audio");
    sb_printf(b, "a=rtpmap:%u opus/48000/2\r\n", pt);
    sb_printf(b, "a=fmtp:%u sprop-stereo=%d\r\n", pt, d->channels == 2);
  } else {
    m_line(b, d, "video");
    sb_printf(b, "a=rtpmap:%u %s/90000\r\n", pt, urtp_codec_name(d->codec));
    /* "a=fmtp:pt " only when parameters follow: written, then taken back
     * if none did */
    size_t mark = b->len;
    sb_printf(b, "a=fmtp:%u ", pt);
    size_t start = b->len;
    h26x_fmtp(b, d);
    if (b->len == start)
      b->len = mark;
    else
      sb_printf(b, "\r\n");
  }
  /* RTCP: its port when it is not the RTP port + 1 is what receivers
   * would assume otherwise, so it is always written when known */
  if (d->rtcp_mux)
    sb_printf(b, "a=rtcp-mux\r\n");
  else if (d->rtcp_port)
    sb_printf(b, "a=rtcp:%u\r\n", (unsigned)d->rtcp_port);
  /* what the receiver may ask for (RFC 4585 4.2, RFC 5104 7.1): NACKs,
   * and for video key frames by PLI or FIR */
  if (d->feedback) {
    sb_printf(b, "a=rtcp-fb:%u nack\r\n", pt);
    if (!opus) {
      sb_printf(b, "a=rtcp-fb:%u nack pli\r\n", pt);
      sb_printf(b, "a=rtcp-fb:%u ccm fir\r\n", pt);
    }
    if (d->transport_cc)
      sb_printf(b, "a=rtcp-fb:%u transport-cc\r\n", pt);
    if (d->ccfb)
      sb_printf(b, "a=rtcp-fb:%u ack ccfb\r\n", pt);
  }
  /* retransmissions (RFC 4588 8.6): their payload type, tied to the
   * media's, and how long they are offered */
  if (d->rtx) {
    sb_printf(b, "a=rtpmap:%u rtx/%u\r\n", (unsigned)d->rtx_pt, urtp_codec_clock_rate(d->codec));
    sb_printf(b, "a=fmtp:%u apt=%u", (unsigned)d->rtx_pt, pt);
    if (d->rtx_time_ms)
      sb_printf(b, ";rtx-time=%u", d->rtx_time_ms);
    sb_printf(b, "\r\n");
  }
  /* header extensions (RFC 8285 section 5), IDs beyond the one-byte form
   * announced as mixed (section 6) */
  bool two_byte = false;
  for (size_t i = 0; i < d->n_extmap && i < URTP_SDP_MAX_EXTMAP; i++)
    two_byte |= d->extmap[i].uri && d->extmap[i].id > 14 && d->extmap[i].id <= 255;
  if (two_byte)
    sb_printf(b, "a=extmap-allow-mixed\r\n");
  for (size_t i = 0; i < d->n_extmap && i < URTP_SDP_MAX_EXTMAP; i++) {
    const urtp_sdp_extmap_t *e = &d->extmap[i];
    if (e->uri && *e->uri && e->id >= 1 && e->id <= 255 && !strpbrk(e->uri, " \r\n"))
      sb_printf(b, "a=extmap:%u %s\r\n", e->id, e->uri);
  }
}

int urtp_sdp_write(const urtp_sdp_desc_t *d, char *out, size_t cap)
{
  if (!d->addr || !*d->addr)
    return -EINVAL;
  sb_t b = { out, cap, 0 };
  session_level(&b, d);
  media_level(&b, d);
  if (b.len >= cap) {
    if (cap > 0)
      out[0] = '\0';
  } else {
    out[b.len] = '\0';
  }
  return b.len > INT32_MAX ? -EINVAL : (int)b.len;
}
