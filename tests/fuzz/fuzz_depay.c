/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_depay.c - libFuzzer target for the depacketizer.
 *
 * Input layout:
 *   byte 0      bits 0-1  codec: H.264, H.265, H.266, Opus
 *               bit 2     pop access units only at flush records and at
 *                         the end, so that the output queue overflows
 *   byte 1      options:
 *                 bit 0     loss policy DROP_NAL (else DROP_AU)
 *                 bit 1     H.265 DONL fields
 *                 bits 2-3  reorder window 0, 2, 8 or 16
 *                 bit 4     wait_for_keyframe
 *                 bit 5     payload type 96 only (else any)
 *                 bit 6     SSRC 0x11223344 only (else lock on the first)
 *                 bit 7     tight limits: max_packet 256, max_au_size 2048
 *                           (else max_packet 1500, max_au_size 256 KiB)
 *   then records: a 16-bit big-endian length L and L bytes (fewer if the
 *   input ends first) pushed as one datagram; L = 0xffff instead calls
 *   urtp_depay_flush(d, false) and L = 0xfffe urtp_depay_flush(d, true).
 *
 * After every call the finished access units are popped, checked and freed:
 * size within max_au_size, and for H.26x well-formed Annex-B (see
 * check_annexb()). At the end the access unit in progress is flushed out
 * and the counters are checked against what was popped. All state lives in the depacketizer
 * created for this input, so inputs do not influence each other.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/depay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)   \
  do {              \
    if (!(c))       \
      abort();      \
  } while (0)

#define FLUSH_KEEP 0xffff
#define FLUSH_END 0xfffe

typedef struct fuzz_state {
  urtp_depay_t *d;
  urtp_depay_config_t cfg;
  bool lazy;
  uint64_t aus, nals;
} fuzz_state_t;

static const uint8_t start_code[4] = { 0, 0, 0, 1 };

/* Output is Annex-B with a 4-byte start code before each of the nal_count
 * NAL units. Nothing makes NAL units from the wire free of start-code-like
 * bytes, so the strict check (every 00 00 01 is a 4-byte start code followed
 * by a NAL unit of at least a header) is only possible when the AU holds no
 * more 00 00 01 than NAL units; it can never hold fewer. */
static void check_annexb(const fuzz_state_t *s, const urtp_au_t *au)
{
  const urtp_h26x_desc_t *desc = urtp_h26x_desc(s->cfg.codec);
  size_t hl = desc->hdr_len;
  ASSERT(au->nal_count >= 1);
  ASSERT(au->len >= au->nal_count * (4 + hl));
  ASSERT(memcmp(au->data, start_code, 4) == 0);

  size_t found = 0;
  for (size_t i = 0; i + 3 <= au->len; i++)
    found += au->data[i] == 0 && au->data[i + 1] == 0 && au->data[i + 2] == 1;
  ASSERT(found >= au->nal_count);
  if (found > au->nal_count)
    return;

  size_t pos = 0, nals = 0;
  while (pos < au->len) {
    ASSERT(au->len - pos >= 4 + hl && memcmp(au->data + pos, start_code, 4) == 0);
    size_t next = pos + 4;
    while (next + 3 <= au->len &&
           !(au->data[next] == 0 && au->data[next + 1] == 0 && au->data[next + 2] == 1))
      next++;
    if (next + 3 > au->len) {
      next = au->len;
    } else {
      /* the next start code has its leading zero: this NAL unit ends before it */
      ASSERT(next >= pos + 4 + hl + 1 && au->data[next - 1] == 0);
      next--;
    }
    ASSERT(next - pos >= 4 + hl);
    nals++;
    pos = next;
  }
  ASSERT(nals == au->nal_count);
}

static void drain(fuzz_state_t *s)
{
  urtp_au_t au;
  while (urtp_depay_pop(s->d, &au)) {
    ASSERT(au.len <= s->cfg.max_au_size);
    ASSERT(au.len == 0 || au.data != NULL);
    /* Extended numbering only restarts on a resync (a sender restart). */
    ASSERT(au.first_seq <= au.last_seq);
    ASSERT((au.flags & ~(uint32_t)(URTP_AU_KEYFRAME | URTP_AU_DISCONT | URTP_AU_DAMAGED |
                                   URTP_AU_NO_MARKER)) == 0);
    if (s->cfg.codec != URTP_CODEC_OPUS)
      check_annexb(s, &au);
    if (s->cfg.loss_policy == URTP_LOSS_DROP_AU)
      ASSERT(!(au.flags & URTP_AU_DAMAGED));
    s->aus++;
    s->nals += au.nal_count;
    free(au.data);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 2)
    return 0;

  static const size_t windows[4] = { 0, 2, 8, 16 };
  fuzz_state_t s = { 0 };
  uint8_t opt = data[1];
  s.cfg.codec = (urtp_codec_t)(data[0] & 3);
  s.lazy = (data[0] & 4) != 0;
  s.cfg.loss_policy = (opt & 0x01) ? URTP_LOSS_DROP_NAL : URTP_LOSS_DROP_AU;
  s.cfg.donl = (opt & 0x02) != 0;
  s.cfg.reorder_window = windows[(opt >> 2) & 3];
  s.cfg.wait_for_keyframe = (opt & 0x10) != 0;
  s.cfg.pt = (opt & 0x20) ? 96 : -1;
  s.cfg.ssrc = (opt & 0x40) ? 0x11223344 : -1;
  s.cfg.max_packet = (opt & 0x80) ? 256 : 1500;
  s.cfg.max_au_size = (opt & 0x80) ? 2048 : 256 * 1024;

  s.d = urtp_depay_new(&s.cfg);
  ASSERT(s.d != NULL);

  uint64_t pushed = 0;
  size_t off = 2;
  while (size - off >= 2) {
    size_t n = (size_t)data[off] << 8 | data[off + 1];
    off += 2;
    if (n == FLUSH_KEEP || n == FLUSH_END) {
      urtp_depay_flush(s.d, n == FLUSH_END);
      ASSERT(urtp_depay_pending(s.d) == 0);
    } else {
      if (n > size - off)
        n = size - off;
      /* A private copy of exactly n bytes, so that ASan sees any overread. */
      uint8_t *pkt = malloc(n ? n : 1);
      ASSERT(pkt != NULL);
      memcpy(pkt, data + off, n);
      urtp_depay_push(s.d, pkt, n);
      free(pkt);
      off += n;
      pushed++;
      ASSERT(urtp_depay_pending(s.d) <= s.cfg.reorder_window);
      if (s.lazy)
        continue;
    }
    drain(&s);
  }

  urtp_depay_flush(s.d, true);
  ASSERT(urtp_depay_pending(s.d) == 0);
  drain(&s);

  const urtp_depay_stats_t *st = urtp_depay_stats(s.d);
  ASSERT(st->packets <= pushed);
  /* Access units are counted when popped, those lost to queue overflow
   * (lazy popping) as dropped. */
  ASSERT(st->aus == s.aus);
  ASSERT(st->nals == s.nals);
  ASSERT(st->seq.delivered <= pushed);
  /* each packet the reorder window delivers is counted in one of these
   * (malformed also counts datagrams that are not RTP at all) */
  ASSERT(st->packets + st->malformed + st->unsupported + st->skipped >= st->seq.delivered);
  urtp_depay_free(s.d);
  return 0;
}
