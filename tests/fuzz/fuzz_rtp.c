/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_rtp.c - libFuzzer target for the RTP header parser and writer.
 *
 * Any input is offered to urtp_rtp_parse(). When it is accepted, the parsed
 * fields must describe the buffer exactly: header, payload and padding tile
 * [buf, buf + len); writing the header back must reproduce the original
 * bytes; and reparsing the rebuilt packet must give the same fields. The
 * input is also read as a series of 16-bit sequence numbers for
 * urtp_seq_extend(). Every violation aborts, so the fuzzer reports it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/rtp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)   \
  do {              \
    if (!(c))       \
      abort();      \
  } while (0)

static bool hdr_equal(const urtp_rtp_hdr_t *a, const urtp_rtp_hdr_t *b)
{
  if (a->pt != b->pt || a->marker != b->marker || a->padding != b->padding ||
      a->seq != b->seq || a->ts != b->ts || a->ssrc != b->ssrc ||
      a->csrc_count != b->csrc_count || a->has_ext != b->has_ext ||
      a->ext_profile != b->ext_profile || a->ext_len != b->ext_len)
    return false;
  if (memcmp(a->csrc, b->csrc, a->csrc_count * sizeof(a->csrc[0])) != 0)
    return false;
  return a->ext_len == 0 || memcmp(a->ext_data, b->ext_data, a->ext_len) == 0;
}

static void check_packet(const uint8_t *buf, size_t len)
{
  urtp_rtp_pkt_t pkt;
  if (urtp_rtp_parse(buf, len, &pkt) != 0)
    return;

  const urtp_rtp_hdr_t *h = &pkt.hdr;
  size_t hs = urtp_rtp_hdr_size(h);
  ASSERT(len >= URTP_RTP_HDR_MIN);
  ASSERT(h->pt <= 127 && h->csrc_count <= URTP_RTP_MAX_CSRC);
  ASSERT(h->ext_len % 4 == 0);
  ASSERT(h->has_ext || h->ext_len == 0);
  if (h->has_ext)
    ASSERT(h->ext_data >= buf + URTP_RTP_HDR_MIN && h->ext_data + h->ext_len <= buf + len);
  /* Header, payload and padding tile the buffer. */
  ASSERT(pkt.payload == buf + hs);
  ASSERT(hs + pkt.payload_len + pkt.pad_len == len);
  ASSERT(h->padding ? (pkt.pad_len >= 1 && pkt.pad_len == buf[len - 1]) : pkt.pad_len == 0);
  ASSERT(urtp_rtp_peek_seq(buf) == h->seq && urtp_rtp_peek_ts(buf) == h->ts &&
         urtp_rtp_peek_ssrc(buf) == h->ssrc && urtp_rtp_peek_marker(buf) == h->marker);

  /* The writer reproduces the header byte for byte, and refuses a buffer
   * one byte short. */
  uint8_t *out = malloc(len);
  ASSERT(out != NULL);
  ASSERT(urtp_rtp_write(out, hs - 1, h) == -ENOSPC);
  ASSERT(urtp_rtp_write(out, len, h) == (int)hs);
  ASSERT(memcmp(out, buf, hs) == 0);

  /* Rebuild the whole packet from the parsed parts and parse it again. */
  if (pkt.payload_len)
    memcpy(out + hs, pkt.payload, pkt.payload_len);
  if (pkt.pad_len)
    memcpy(out + hs + pkt.payload_len, buf + len - pkt.pad_len, pkt.pad_len);
  urtp_rtp_pkt_t again;
  ASSERT(urtp_rtp_parse(out, len, &again) == 0);
  ASSERT(hdr_equal(h, &again.hdr));
  ASSERT(again.payload == out + hs && again.payload_len == pkt.payload_len &&
         again.pad_len == pkt.pad_len);
  ASSERT(memcmp(out, buf, len) == 0);
  free(out);
}

static void check_seq_extend(const uint8_t *data, size_t size)
{
  urtp_seq_ext_t e = { 0 };
  uint64_t max = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    uint16_t seq = (uint16_t)(data[i] << 8 | data[i + 1]);
    uint64_t v = urtp_seq_extend(&e, seq);
    ASSERT((uint16_t)v == seq);
    if (i == 0) {
      ASSERT(v == 65536u + seq);
    } else {
      /* The value nearest to the highest seen, ties going backwards. */
      ASSERT(v + 32768 >= max && v <= max + 32767);
    }
    if (v > max)
      max = v;
    ASSERT(e.max == max);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* Parse from a private copy of exactly size bytes, so that ASan sees any
   * read past the end. */
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  buf[0] = 0;
  if (size)
    memcpy(buf, data, size);
  check_packet(buf, size);
  check_seq_extend(buf, size);
  free(buf);
  return 0;
}
