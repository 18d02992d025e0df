/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/rtp.h"
#include "urtp/bytes.h"

#include <errno.h>
#include <string.h>

/*
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|X|  CC   |M|     PT      |       sequence number         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           timestamp                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |           synchronization source (SSRC) identifier            |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |            contributing source (CSRC) identifiers             |
 * |                             ....                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  defined by profile (X=1)     |           length (words)      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */

int urtp_rtp_parse(const uint8_t *buf, size_t len, urtp_rtp_pkt_t *out)
{
  if (len < URTP_RTP_HDR_MIN || (buf[0] >> 6) != URTP_RTP_VERSION)
    return -EBADMSG;

  urtp_rtp_hdr_t *h = &out->hdr;
  h->padding = (buf[0] & 0x20) != 0;
  h->has_ext = (buf[0] & 0x10) != 0;
  h->csrc_count = buf[0] & 0x0f;
  h->marker = (buf[1] & 0x80) != 0;
  h->pt = buf[1] & 0x7f;
  h->seq = urtp_rtp_peek_seq(buf);
  h->ts = urtp_rtp_peek_ts(buf);
  h->ssrc = urtp_rtp_peek_ssrc(buf);

  size_t off = URTP_RTP_HDR_MIN + 4u * h->csrc_count;
  if (off > len)
    return -EBADMSG;
  for (unsigned i = 0; i < h->csrc_count; i++)
    h->csrc[i] = urtp_rd32(buf + URTP_RTP_HDR_MIN + 4 * i);

  h->ext_profile = 0;
  h->ext_data = NULL;
  h->ext_len = 0;
  if (h->has_ext) {
    if (len - off < 4)
      return -EBADMSG;
    h->ext_profile = urtp_rd16(buf + off);
    size_t words = (size_t)urtp_rd16(buf + off + 2);
    off += 4;
    if (len - off < 4 * words)
      return -EBADMSG;
    h->ext_data = buf + off;
    h->ext_len = 4 * words;
    off += 4 * words;
  }

  size_t pad = 0;
  if (h->padding) {
    /* The last byte counts itself; 0 or more than the payload is malformed. */
    pad = buf[len - 1];
    if (pad == 0 || pad > len - off)
      return -EBADMSG;
  }
  out->payload = buf + off;
  out->payload_len = len - off - pad;
  out->pad_len = pad;
  return 0;
}

size_t urtp_rtp_hdr_size(const urtp_rtp_hdr_t *h)
{
  return URTP_RTP_HDR_MIN + 4u * h->csrc_count + (h->has_ext ? 4 + h->ext_len : 0);
}

int urtp_rtp_write(uint8_t *buf, size_t cap, const urtp_rtp_hdr_t *h)
{
  if (h->pt > 127 || h->csrc_count > URTP_RTP_MAX_CSRC)
    return -EINVAL;
  if (h->has_ext && (h->ext_len % 4 != 0 || h->ext_len / 4 > 0xffff))
    return -EINVAL;
  size_t n = urtp_rtp_hdr_size(h);
  if (cap < n)
    return -ENOSPC;

  urtp_rtp_write_fixed(buf, h->pt, h->marker, h->seq, h->ts, h->ssrc);
  buf[0] |= (uint8_t)((h->padding ? 0x20 : 0) | (h->has_ext ? 0x10 : 0) | h->csrc_count);
  size_t off = URTP_RTP_HDR_MIN;
  for (unsigned i = 0; i < h->csrc_count; i++, off += 4)
    urtp_wr32(buf + off, h->csrc[i]);
  if (h->has_ext) {
    urtp_wr16(buf + off, h->ext_profile);
    urtp_wr16(buf + off + 2, (uint16_t)(h->ext_len / 4));
    if (h->ext_len)
      memcpy(buf + off + 4, h->ext_data, h->ext_len);
  }
  return (int)n;
}

void urtp_rtp_write_padding(uint8_t *dst, uint8_t n)
{
  if (n == 0)
    return;
  memset(dst, 0, n - 1u);
  dst[n - 1] = n;
}

uint64_t urtp_seq_extend(urtp_seq_ext_t *e, uint16_t seq)
{
  if (!e->started) {
    e->started = true;
    e->max = 65536u + seq;
    return e->max;
  }
  /* Signed distance from the highest value seen, in [-32768, 32767]. */
  int16_t delta = (int16_t)(uint16_t)(seq - (uint16_t)e->max);
  uint64_t v = e->max + (uint64_t)(int64_t)delta;
  if (delta > 0)
    e->max = v;
  return v;
}
