/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_recvstream.c - libFuzzer target for the receiving stream: the
 * source layer, reordering, reassembly and timing together, with several
 * senders and time that moves.
 *
 * Input layout:
 *   byte 0   bits 0-1  codec: H.264, H.265, H.266, Opus
 *            bit 2     loss policy DROP_NAL (else DROP_AU)
 *            bit 3     wait_for_keyframe
 *            bit 4     pin SSRC 0x1000 (else follow any)
 *            bit 5     tight limits: max_packet 256, max_au_size 4096,
 *                      reorder window 16 (else 1500, 256 KiB, 64)
 *            bit 6     payload type 96 only
 *   then records, each starting with an op byte:
 *     0x00-0x3f  a packet from sender (op & 3): SSRC 0x1000 + sender; the
 *                next byte is a signed step for its sequence number (-128:
 *                a jump of 30000), the
 *                next a timestamp step in 1/30 s units (signed), the next a
 *                marker flag and a payload length L (low 7 bits, times 8),
 *                then L payload bytes (fewer if the input ends)
 *     0x40       a raw datagram: a 16-bit length and that many bytes
 *     0x41       time goes on by the next byte in ms (times 16 if op & 0x80)
 *     0x42       expire at the current time
 *     0x43       resync (as after a pause), dropping the next byte's count
 *     0x44       flush (end of stream)
 *     0x45       pop everything
 *     0x46       BYE from nobody (no RTCP yet): a time jump of 10 s
 *     0x47       RTCP bytes as a separate socket brings them: a length byte,
 *                then that many bytes
 *     0x48-0x4b  a sender's BYE
 *     0x4c       our receiver report, parsed back
 *     0x50-0x53  a retransmission (RTX, payload type 97) from RTX stream
 *                (op & 3), SSRC 0x2000 + (op & 3): the next two bytes the
 *                original sequence number, the next a payload length L
 *                (times 8, low 7 bits), then L bytes
 *     0x54       a key frame asked for (a FIR if the next byte is odd)
 *   anything else: skipped.
 * NACKs and RTX are on (payload type 97), and PLIs on loss.
 *
 * After every record the counters must account for every datagram
 * offered (recvstream.h), and every access unit popped must be within
 * max_au_size and well-formed Annex-B at its start.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/recvstream.h"
#include "urtp/rtp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)   \
  do {              \
    if (!(c))       \
      abort();      \
  } while (0)

#define MS 1000000ull

typedef struct sender {
  uint16_t seq;
  uint32_t ts;
} sender_t;

/* direct: RTCP compounds given to urtp_recvstream_push_rtcp(), not among
 * the datagrams */
static void check_accounts(urtp_recvstream_t *r, uint64_t direct)
{
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r, &st);
  const urtp_reorder_stats_t *q = &st.depay.seq;
  uint64_t sum = st.zrtp + st.zrtp_dropped + st.srtp.auth_fail + st.srtp.replay +
                 st.srtp.other + st.malformed_rtp + st.wrong_pt + st.source.foreign +
                 st.source.stray + st.source.held_dropped + st.source.pending + q->delivered +
                 q->duplicates + q->late + st.waiting + st.rtcp + st.rtcp_bad + st.rtx_dropped -
                 direct;
  /* packets too large for a reorder slot that had to wait are given up
   * as lost, not counted among the packets: at most that many short */
  ASSERT(sum <= st.datagrams);
  ASSERT(st.datagrams - sum <= q->lost);
  ASSERT(st.depay.packets + st.depay.malformed + st.depay.unsupported + st.depay.skipped <=
         q->delivered);
}

static void drain(urtp_recvstream_t *r, urtp_codec_t codec, size_t max_au)
{
  urtp_recvstream_frame_t f;
  while (urtp_recvstream_pop(r, &f)) {
    ASSERT(f.au.len > 0 && f.au.len <= max_au);
    if (codec != URTP_CODEC_OPUS) {
      static const uint8_t sc[4] = { 0, 0, 0, 1 };
      ASSERT(f.au.len >= 5 && memcmp(f.au.data, sc, 4) == 0);
    }
    urtp_depay_release(f.au.data);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t opt = data[0];
  bool tight = opt & 0x20;
  urtp_recvstream_config_t cfg = {
    .codec = (urtp_codec_t)(opt & 3),
    .pt = (opt & 0x40) ? 96 : -1,
    .ssrc = (opt & 0x10) ? 0x1000 : -1,
    .source_timeout = 200 * MS,
    .latency = 30 * MS,
    .reorder_window = tight ? 16 : 64,
    .max_packet = tight ? 256 : 1500,
    .max_au_size = tight ? 4096 : 256 * 1024,
    .loss_policy = (opt & 4) ? URTP_LOSS_DROP_NAL : URTP_LOSS_DROP_AU,
    .wait_for_keyframe = (opt & 8) != 0,
    .rtcp_mux = (opt & 0x80) != 0,
    .nack = true,
    .rtx = true,
    .rtx_pt = 97,
    .request_keyframe = true,
    /* congestion control feedback's records: extension element 3 */
    .twcc_id = 3,
    .rfc8888 = true,
  };
  urtp_recvstream_t *r;
  ASSERT(urtp_recvstream_new(&cfg, &r) == 0);

  sender_t snd[4] = { { 100, 0 }, { 20000, 5555 }, { 65500, 0xfffff000u }, { 7, 7 } };
  uint16_t rtx_seq[4] = { 1, 2, 3, 4 };
  uint64_t now = 1000 * MS, direct = 0;
  uint8_t pkt[1600];
  size_t off = 1;
  while (off < size) {
    uint8_t op = data[off++];
    if (op < 0x40) {
      if (size - off < 3)
        break;
      sender_t *s = &snd[op & 3];
      int8_t step = (int8_t)data[off];
      s->seq = (uint16_t)(s->seq + (step == -128 ? 30000 : step));
      s->ts += (uint32_t)((int8_t)data[off + 1] * 3000);
      uint8_t m = data[off + 2];
      off += 3;
      size_t len = (size_t)(m & 0x7f) * 8;
      if (len > size - off)
        len = size - off;
      urtp_rtp_write_fixed(pkt, 96, m & 0x80, s->seq, s->ts, 0x1000u + (op & 3u));
      memcpy(pkt + 12, data + off, len);
      off += len;
      urtp_recvstream_push_one(r, pkt, 12 + len, NULL, now);
    } else if (op == 0x40) {
      if (size - off < 2)
        break;
      size_t len = (size_t)data[off] << 8 | data[off + 1];
      off += 2;
      if (len > size - off)
        len = size - off;
      if (len > sizeof pkt)
        len = sizeof pkt;
      memcpy(pkt, data + off, len);
      off += len;
      urtp_recvstream_push_one(r, pkt, len, NULL, now);
    } else if ((op & 0x7f) == 0x41) {
      if (off >= size)
        break;
      now += (uint64_t)data[off++] * MS * ((op & 0x80) ? 16 : 1);
    } else if (op == 0x42) {
      urtp_recvstream_expire(r, now);
    } else if (op == 0x43) {
      if (off >= size)
        break;
      urtp_recvstream_resync(r, data[off++]);
    } else if (op == 0x44) {
      urtp_recvstream_flush(r);
    } else if (op == 0x45) {
      drain(r, cfg.codec, cfg.max_au_size);
    } else if (op == 0x46) {
      now += 10000 * MS;
      urtp_recvstream_expire(r, now);
    } else if (op == 0x47) {
      /* RTCP as a separate socket would bring it: bytes as given */
      if (off >= size)
        break;
      size_t len = data[off++];
      if (len > size - off)
        len = size - off;
      memcpy(pkt, data + off, len);
      off += len;
      urtp_recvstream_push_rtcp(r, pkt, len, now);
      direct++;
    } else if ((op & 0xfc) == 0x48) {
      /* a sender's BYE */
      urtp_rtcp_writer_t w;
      uint32_t who = 0x1000u + (op & 3u);
      urtp_rtcp_writer_init(&w, pkt, sizeof pkt);
      urtp_rtcp_write_rr(&w, who, NULL, 0);
      urtp_rtcp_write_bye(&w, &who, 1, NULL);
      ASSERT(urtp_recvstream_push_rtcp(r, pkt, w.len, now) == 0);
      direct++;
    } else if ((op & 0xfc) == 0x50) {
      if (size - off < 3)
        break;
      uint16_t osn = (uint16_t)(data[off] << 8 | data[off + 1]);
      size_t len = (size_t)(data[off + 2] & 0x7f) * 8;
      off += 3;
      if (len > size - off)
        len = size - off;
      urtp_rtp_write_fixed(pkt, 97, false, rtx_seq[op & 3]++, snd[0].ts, 0x2000u + (op & 3u));
      pkt[12] = (uint8_t)(osn >> 8);
      pkt[13] = (uint8_t)osn;
      memcpy(pkt + 14, data + off, len);
      off += len;
      urtp_recvstream_push_one(r, pkt, 14 + len, NULL, now);
    } else if (op == 0x54) {
      if (off >= size)
        break;
      urtp_recvstream_request_keyframe(r, data[off++] & 1);
      ASSERT(urtp_recvstream_feedback_deadline(r) == UINT64_MAX); /* nowhere to send yet */
    } else if (op == 0x4c) {
      /* our report parses, and says no more than the stream knows */
      int n = urtp_recvstream_rtcp_report(r, now, false, pkt, sizeof pkt);
      urtp_rtcp_info_t info;
      ASSERT(n > 0 && urtp_rtcp_parse(pkt, (size_t)n, 0, &info) == 0);
      ASSERT(info.nreports == 1 && info.nblocks <= 1 && info.ncnames == 1);
    }
    check_accounts(r, direct);
    urtp_recvstream_event_t ev;
    while (urtp_recvstream_next_event(r, &ev))
      ASSERT(ev.kind == URTP_RECVSTREAM_EV_SOURCE);
  }
  urtp_recvstream_flush(r);
  drain(r, cfg.codec, cfg.max_au_size);
  check_accounts(r, direct);
  urtp_recvstream_free(r);
  return 0;
}
