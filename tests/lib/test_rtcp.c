/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp_rtcp: RTCP packets, reception statistics, round-trip time and the
 * transmission interval (RFC 3550 section 6 and appendix A).
 *
 * The byte vectors are written by hand from RFC 3550's packet diagrams
 * (6.4.1 SR, 6.4.2 RR, 6.5 SDES, 6.6 BYE, 6.7 APP), not produced by the
 * writer under test: building must give them byte for byte, and parsing
 * them must give the fields back. Jitter and loss are checked against
 * values worked out by hand and against a floating-point transcription of
 * A.8; the interval against A.7's rtcp_interval() written out here from
 * the RFC, with a fixed random source and a virtual clock.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"
#include "urtp/rtcp.h"

#define NS 1000000000ull
#define MS 1000000ull

/* ---- known answers: building and parsing each packet type ---- */

static const urtp_rtcp_sr_t kat_sr = {
  .ssrc = 0x11223344, .ntp = 0xE123456789ABCDEFull, .rtp_ts = 0x01020304,
  .packets = 16, .octets = 4096,
};
static const urtp_rtcp_block_t kat_block = {
  .ssrc = 0x55667788, .fraction = 0x40, .lost = 3, .ext_max_seq = 0x0001FFFE,
  .jitter = 0x20, .lsr = 0x456789AB, .dlsr = 0x00018000,
};
#define KAT_BLOCK_BYTES                                                         \
  0x55, 0x66, 0x77, 0x88, /* SSRC_1 */                                          \
  0x40, 0x00, 0x00, 0x03, /* fraction lost 64/256, cumulative 3 */              \
  0x00, 0x01, 0xFF, 0xFE, /* extended highest sequence number */                \
  0x00, 0x00, 0x00, 0x20, /* interarrival jitter */                             \
  0x45, 0x67, 0x89, 0xAB, /* LSR */                                             \
  0x00, 0x01, 0x80, 0x00  /* DLSR: 1.5 s */

static const uint8_t sr_bytes[] = {
  0x81, 0xC8, 0x00, 0x0C, /* V=2 P=0 RC=1, PT=200, length 12 (52 bytes) */
  0x11, 0x22, 0x33, 0x44, /* SSRC of sender */
  0xE1, 0x23, 0x45, 0x67, /* NTP timestamp, most significant word */
  0x89, 0xAB, 0xCD, 0xEF, /* least significant word */
  0x01, 0x02, 0x03, 0x04, /* RTP timestamp */
  0x00, 0x00, 0x00, 0x10, /* sender's packet count */
  0x00, 0x00, 0x10, 0x00, /* sender's octet count */
  KAT_BLOCK_BYTES,
};

static const uint8_t rr_bytes[] = {
  0x82, 0xC9, 0x00, 0x0D, /* RC=2, PT=201, length 13 (56 bytes) */
  0xAA, 0xBB, 0xCC, 0xDD, /* SSRC of packet sender */
  KAT_BLOCK_BYTES,
  0x99, 0x88, 0x77, 0x66, 0x00, 0xFF, 0xFF, 0xFE, /* fraction 0, cumulative -2 */
  0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static const uint8_t rr_empty_bytes[] = { 0x80, 0xC9, 0x00, 0x01, 0xAA, 0xBB, 0xCC, 0xDD };

static bool block_eq(const urtp_rtcp_block_t *a, const urtp_rtcp_block_t *b)
{
  return a->ssrc == b->ssrc && a->fraction == b->fraction && a->lost == b->lost &&
         a->ext_max_seq == b->ext_max_seq && a->jitter == b->jitter && a->lsr == b->lsr &&
         a->dlsr == b->dlsr;
}

static void test_sr(void)
{
  uint8_t buf[128];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_sr(&w, &kat_sr, &kat_block, 1), 0);
  CHECK_EQ(w.len, sizeof sr_bytes);
  CHECK_MEM(buf, sr_bytes, sizeof sr_bytes);

  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(sr_bytes, sizeof sr_bytes, 0, &in) == 0);
  CHECK_EQ(in.packets, 1);
  REQUIRE(in.nreports == 1);
  const urtp_rtcp_report_t *r = &in.reports[0];
  CHECK(r->is_sr);
  CHECK_EQ(r->sr.ssrc, kat_sr.ssrc);
  CHECK(r->sr.ntp == kat_sr.ntp);
  CHECK_EQ(r->sr.rtp_ts, kat_sr.rtp_ts);
  CHECK_EQ(r->sr.packets, 16);
  CHECK_EQ(r->sr.octets, 4096);
  CHECK_EQ(r->first_block, 0);
  CHECK_EQ(r->nblocks, 1);
  CHECK_EQ(in.nblocks, 1);
  CHECK(block_eq(&in.blocks[0], &kat_block));
  CHECK_EQ(in.malformed + in.truncated + in.other + in.feedback, 0);
}

static void test_rr(void)
{
  urtp_rtcp_block_t blocks[2] = { kat_block, { .ssrc = 0x99887766, .lost = -2, .ext_max_seq = 5 } };
  uint8_t buf[128];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_rr(&w, 0xAABBCCDD, blocks, 2), 0);
  CHECK_EQ(w.len, sizeof rr_bytes);
  CHECK_MEM(buf, rr_bytes, sizeof rr_bytes);

  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_rr(&w, 0xAABBCCDD, NULL, 0), 0);
  CHECK_EQ(w.len, sizeof rr_empty_bytes);
  CHECK_MEM(buf, rr_empty_bytes, sizeof rr_empty_bytes);

  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(rr_bytes, sizeof rr_bytes, 0, &in) == 0);
  REQUIRE(in.nreports == 1 && in.nblocks == 2);
  CHECK(!in.reports[0].is_sr);
  CHECK_EQ(in.reports[0].sr.ssrc, 0xAABBCCDD);
  CHECK(block_eq(&in.blocks[0], &blocks[0]));
  CHECK(block_eq(&in.blocks[1], &blocks[1]));
  CHECK_EQ(in.blocks[1].lost, -2);

  REQUIRE(urtp_rtcp_parse(rr_empty_bytes, sizeof rr_empty_bytes, 0, &in) == 0);
  CHECK_EQ(in.nreports, 1);
  CHECK_EQ(in.reports[0].nblocks, 0);
}

/* Cumulative loss beyond 24 bits signed is clamped on the wire, not
 * wrapped (A.3). */
static void test_lost_clamped(void)
{
  urtp_rtcp_block_t b[3] = { { .lost = 10000000 }, { .lost = -10000000 }, { .lost = 0x7fffff } };
  uint8_t buf[128];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  REQUIRE(urtp_rtcp_write_rr(&w, 1, b, 3) == 0);
  CHECK_MEM(buf + 8 + 4, ((const uint8_t[]){ 0x00, 0x7F, 0xFF, 0xFF }), 4);
  CHECK_MEM(buf + 32 + 4, ((const uint8_t[]){ 0x00, 0x80, 0x00, 0x00 }), 4);
  CHECK_MEM(buf + 56 + 4, ((const uint8_t[]){ 0x00, 0x7F, 0xFF, 0xFF }), 4);
  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(buf, w.len, 0, &in) == 0 && in.nblocks == 3);
  CHECK_EQ(in.blocks[0].lost, 0x7fffff);
  CHECK_EQ(in.blocks[1].lost, -0x800000);
}

static const uint8_t sdes_userhost[] = {
  0x81, 0xCA, 0x00, 0x04, /* SC=1, PT=202, length 4 (20 bytes) */
  0x11, 0x22, 0x33, 0x44, /* SSRC/CSRC_1 */
  0x01, 0x09, 'u',  's',  /* CNAME=1, length 9 */
  'e',  'r',  '@',  'h',
  'o',  's',  't',  0x00, /* END: the list ends on the word boundary */
};
static const uint8_t sdes_ab[] = {
  0x81, 0xCA, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44,
  0x01, 0x02, 'a',  'b',
  0x00, 0x00, 0x00, 0x00, /* END and padding to the next word: a whole word */
};
static const uint8_t sdes_abc[] = {
  0x81, 0xCA, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 0x01, 0x03, 'a', 'b', 'c', 0x00, 0x00, 0x00,
};
static const uint8_t sdes_empty[] = { 0x81, 0xCA, 0x00, 0x02, 0x11, 0x22, 0x33, 0x44,
                                      0x01, 0x00, 0x00, 0x00 };

static void test_sdes(void)
{
  static const struct {
    const char *cname;
    const uint8_t *bytes;
    size_t len;
  } cases[] = {
    { "user@host", sdes_userhost, sizeof sdes_userhost },
    { "ab", sdes_ab, sizeof sdes_ab },
    { "abc", sdes_abc, sizeof sdes_abc },
    { "", sdes_empty, sizeof sdes_empty },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t buf[64];
    urtp_rtcp_writer_t w;
    urtp_rtcp_writer_init(&w, buf, sizeof buf);
    CHECK_EQ(urtp_rtcp_write_sdes_cname(&w, 0x11223344, cases[i].cname), 0);
    CHECK_EQ(w.len, cases[i].len);
    CHECK_MEM(buf, cases[i].bytes, cases[i].len);

    urtp_rtcp_info_t in;
    REQUIRE(urtp_rtcp_parse(cases[i].bytes, cases[i].len, URTP_RTCP_REDUCED_SIZE, &in) == 0);
    REQUIRE(in.ncnames == 1);
    CHECK_EQ(in.cnames[0].ssrc, 0x11223344);
    CHECK_EQ(in.cnames[0].len, strlen(cases[i].cname));
    CHECK_MEM(in.cnames[0].value, cases[i].cname, in.cnames[0].len);
    CHECK_EQ(in.malformed, 0);
    /* an SDES alone is no valid compound without reduced size */
    CHECK_EQ(urtp_rtcp_parse(cases[i].bytes, cases[i].len, 0, &in), -EBADMSG);
  }
}

static const uint8_t bye_reason_bytes[] = {
  0x82, 0xCB, 0x00, 0x03, /* SC=2, PT=203, length 3 */
  0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
  0x03, 'b',  'y',  'e',  /* length 3, reason */
};
static const uint8_t bye_reason5_bytes[] = {
  0x81, 0xCB, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 0x05, 'g', 'o', 'n', 'e', '!', 0x00, 0x00,
};
static const uint8_t bye_bytes[] = { 0x81, 0xCB, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44 };

static void test_bye(void)
{
  const uint32_t ssrcs[2] = { 0x11223344, 0x55667788 };
  uint8_t buf[64];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_bye(&w, ssrcs, 2, "bye"), 0);
  CHECK_EQ(w.len, sizeof bye_reason_bytes);
  CHECK_MEM(buf, bye_reason_bytes, sizeof bye_reason_bytes);
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_bye(&w, ssrcs, 1, "gone!"), 0);
  CHECK_EQ(w.len, sizeof bye_reason5_bytes);
  CHECK_MEM(buf, bye_reason5_bytes, sizeof bye_reason5_bytes);
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_bye(&w, ssrcs, 1, NULL), 0);
  CHECK_EQ(w.len, sizeof bye_bytes);
  CHECK_MEM(buf, bye_bytes, sizeof bye_bytes);

  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(bye_reason_bytes, sizeof bye_reason_bytes, URTP_RTCP_REDUCED_SIZE,
                          &in) == 0);
  CHECK(in.bye);
  REQUIRE(in.nbyes == 2);
  CHECK_EQ(in.byes[0], 0x11223344);
  CHECK_EQ(in.byes[1], 0x55667788);
  REQUIRE(in.bye_reason != NULL);
  CHECK_EQ(in.bye_reason_len, 3);
  CHECK_MEM(in.bye_reason, "bye", 3);
  REQUIRE(urtp_rtcp_parse(bye_bytes, sizeof bye_bytes, URTP_RTCP_REDUCED_SIZE, &in) == 0);
  CHECK(in.bye && in.nbyes == 1 && in.bye_reason == NULL);
}

static const uint8_t app_bytes[] = {
  0x85, 0xCC, 0x00, 0x03, /* subtype 5, PT=204, length 3 */
  0x11, 0x22, 0x33, 0x44, 'T', 'E', 'S', 'T', 0xDE, 0xAD, 0xBE, 0xEF,
};

static void test_app(void)
{
  static const uint8_t data[4] = { 0xDE, 0xAD, 0xBE, 0xEF };
  urtp_rtcp_app_t app = { .subtype = 5, .ssrc = 0x11223344, .name = { 'T', 'E', 'S', 'T' },
                          .data = data, .len = 4 };
  uint8_t buf[64];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_app(&w, &app), 0);
  CHECK_EQ(w.len, sizeof app_bytes);
  CHECK_MEM(buf, app_bytes, sizeof app_bytes);

  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(app_bytes, sizeof app_bytes, URTP_RTCP_REDUCED_SIZE, &in) == 0);
  REQUIRE(in.napps == 1);
  CHECK_EQ(in.apps[0].subtype, 5);
  CHECK_EQ(in.apps[0].ssrc, 0x11223344);
  CHECK_MEM(in.apps[0].name, "TEST", 4);
  CHECK(in.apps[0].data == app_bytes + 12);
  CHECK_EQ(in.apps[0].len, 4);
}

/* Generic NACK (RFC 4585 6.2.1), across a sequence number wrap: a pair
 * covers its PID and the 16 after it, BLP bit i meaning PID + i + 1. */
static const uint8_t nack_bytes[] = {
  0x81, 0xcd, 0x00, 0x04, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22,
  0xff, 0xfa, 0x80, 0x31,       /* 65530; 65531, 65535, 0, 10 */
  0x00, 0x14, 0x00, 0x00,       /* 20 */
};
static const uint8_t pli_bytes[] = {
  0x81, 0xce, 0x00, 0x02, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22,
};
/* FIR (RFC 5104 4.3.1): media source 0 in the header, the FCI names it */
static const uint8_t fir_bytes[] = {
  0x84, 0xce, 0x00, 0x04, 0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x00,
  0x22, 0x22, 0x22, 0x22, 0x07, 0x00, 0x00, 0x00,
};

static void test_feedback(void)
{
  static const uint16_t lost[] = { 65530, 65531, 65531, 65535, 0, 10, 20 };
  uint8_t buf[128];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_nack(&w, 0x11111111, 0x22222222, lost, 7), 0);
  CHECK_EQ(w.len, sizeof nack_bytes);
  CHECK_MEM(buf, nack_bytes, sizeof nack_bytes);
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_pli(&w, 0x11111111, 0x22222222), 0);
  CHECK_EQ(w.len, sizeof pli_bytes);
  CHECK_MEM(buf, pli_bytes, sizeof pli_bytes);
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_fir(&w, 0x11111111, 0x22222222, 7), 0);
  CHECK_EQ(w.len, sizeof fir_bytes);
  CHECK_MEM(buf, fir_bytes, sizeof fir_bytes);

  /* parsed back */
  urtp_rtcp_iter_t it;
  urtp_rtcp_pkt_t pkt;
  urtp_rtcp_fb_t fb;
  urtp_rtcp_iter_init(&it, nack_bytes, sizeof nack_bytes);
  REQUIRE(urtp_rtcp_next(&it, &pkt) == 1);
  REQUIRE(urtp_rtcp_parse_fb(&pkt, &fb) == 0);
  CHECK_EQ(pkt.type, URTP_RTCP_RTPFB);
  CHECK_EQ(fb.fmt, URTP_RTCP_FMT_NACK);
  CHECK_EQ(fb.sender_ssrc, 0x11111111);
  CHECK_EQ(fb.media_ssrc, 0x22222222);
  uint16_t seqs[8];
  unsigned more = 99;
  REQUIRE(urtp_rtcp_nack_seqs(&fb, seqs, 8, &more) == 6);
  CHECK_EQ(more, 0);
  static const uint16_t want[] = { 65530, 65531, 65535, 0, 10, 20 };
  CHECK_MEM(seqs, want, sizeof want);
  CHECK_EQ(urtp_rtcp_nack_seqs(&fb, seqs, 4, &more), 4);
  CHECK_EQ(more, 2);
  urtp_rtcp_iter_init(&it, fir_bytes, sizeof fir_bytes);
  REQUIRE(urtp_rtcp_next(&it, &pkt) == 1);
  REQUIRE(urtp_rtcp_parse_fb(&pkt, &fb) == 0);
  CHECK_EQ(fb.fmt, URTP_RTCP_FMT_FIR);
  REQUIRE(urtp_rtcp_fir_count(&fb) == 1);
  uint32_t ssrc = 0;
  uint8_t fseq = 0;
  urtp_rtcp_fir_entry(&fb, 0, &ssrc, &fseq);
  CHECK_EQ(ssrc, 0x22222222);
  CHECK_EQ(fseq, 7);
  /* a reduced-size compound of feedback alone passes; counted */
  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(pli_bytes, sizeof pli_bytes, URTP_RTCP_REDUCED_SIZE, &in) == 0);
  CHECK_EQ(in.feedback, 1);

  /* limits: nothing, out of order, too many pairs, FCI not whole pairs */
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_nack(&w, 1, 2, lost, 0), -EINVAL);
  static const uint16_t backwards[] = { 10, 5 };
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_nack(&w, 1, 2, backwards, 2), -EINVAL);
  static uint16_t spread[URTP_RTCP_MAX_NACK_PAIRS + 1];
  for (unsigned i = 0; i < URTP_RTCP_MAX_NACK_PAIRS + 1; i++)
    spread[i] = (uint16_t)(i * 17);
  static uint8_t big[1024];
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_nack(&w, 1, 2, spread, URTP_RTCP_MAX_NACK_PAIRS), 0);
  CHECK_EQ(w.len, 12 + 4 * URTP_RTCP_MAX_NACK_PAIRS);
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_nack(&w, 1, 2, spread, URTP_RTCP_MAX_NACK_PAIRS + 1), -EINVAL);
  urtp_rtcp_writer_init(&w, buf, 16);
  CHECK_EQ(urtp_rtcp_write_nack(&w, 1, 2, lost, 7), -ENOSPC);
  CHECK_EQ(w.len, 0);
  fb.fci_len = 6;
  CHECK_EQ(urtp_rtcp_nack_seqs(&fb, seqs, 8, NULL), -EBADMSG);
  fb.fci_len = 0;
  CHECK_EQ(urtp_rtcp_nack_seqs(&fb, seqs, 8, NULL), -EBADMSG);
  fb.fci_len = 12;
  CHECK_EQ(urtp_rtcp_fir_count(&fb), -EBADMSG);
}

/* SR + SDES + BYE + APP built in one writer equal the concatenation. */
static void test_compound(void)
{
  uint8_t want[256];
  size_t n = 0;
  memcpy(want + n, sr_bytes, sizeof sr_bytes), n += sizeof sr_bytes;
  memcpy(want + n, sdes_userhost, sizeof sdes_userhost), n += sizeof sdes_userhost;
  memcpy(want + n, bye_reason_bytes, sizeof bye_reason_bytes), n += sizeof bye_reason_bytes;
  memcpy(want + n, app_bytes, sizeof app_bytes), n += sizeof app_bytes;

  const uint32_t ssrcs[2] = { 0x11223344, 0x55667788 };
  static const uint8_t data[4] = { 0xDE, 0xAD, 0xBE, 0xEF };
  urtp_rtcp_app_t app = { .subtype = 5, .ssrc = 0x11223344, .name = { 'T', 'E', 'S', 'T' },
                          .data = data, .len = 4 };
  uint8_t buf[256];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  urtp_rtcp_write_sr(&w, &kat_sr, &kat_block, 1);
  urtp_rtcp_write_sdes_cname(&w, 0x11223344, "user@host");
  urtp_rtcp_write_bye(&w, ssrcs, 2, "bye");
  urtp_rtcp_write_app(&w, &app);
  CHECK_EQ(w.err, 0);
  CHECK_EQ(w.len, n);
  CHECK_MEM(buf, want, n);

  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(want, n, 0, &in) == 0);
  CHECK_EQ(in.packets, 4);
  CHECK_EQ(in.nreports, 1);
  CHECK(in.reports[0].is_sr);
  CHECK_EQ(in.ncnames, 1);
  CHECK_EQ(in.nbyes, 2);
  CHECK_EQ(in.napps, 1);
  CHECK_EQ(in.malformed + in.truncated, 0);

  /* the same one by one through the iterator */
  urtp_rtcp_iter_t it;
  urtp_rtcp_pkt_t p;
  static const uint8_t types[] = { 200, 202, 203, 204 };
  urtp_rtcp_iter_init(&it, want, n);
  for (int i = 0; i < 4; i++) {
    REQUIRE(urtp_rtcp_next(&it, &p) == 1);
    CHECK_EQ(p.type, types[i]);
  }
  CHECK_EQ(urtp_rtcp_next(&it, &p), 0);
}

/* What other senders put on the wire: rtpbin's RR with an SDES carrying
 * CNAME and TOOL, FFmpeg's SR + SDES + BYE, chunks for two SSRCs with a
 * NAME item, PRIV, feedback and XR packets. */
static void test_foreign(void)
{
  static const uint8_t rtpbin_like[] = {
    0x81, 0xC9, 0x00, 0x07, 0x12, 0x34, 0x56, 0x78, KAT_BLOCK_BYTES,
    0x81, 0xCA, 0x00, 0x08, 0x12, 0x34, 0x56, 0x78,
    0x01, 13, 'u', 's', 'e', 'r', '1', '@', 'h', 'o', 's', 't', '-', '2', 'a',
    0x06, 9, 'G', 'S', 't', 'r', 'e', 'a', 'm', 'e', 'r', /* TOOL */
    0x00, 0x00,                                          /* END, padding */
  };
  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(rtpbin_like, sizeof rtpbin_like, 0, &in) == 0);
  CHECK_EQ(in.packets, 2);
  CHECK_EQ(in.nreports, 1);
  CHECK_EQ(in.nblocks, 1);
  REQUIRE(in.ncnames == 1);
  CHECK_EQ(in.cnames[0].len, 13);
  CHECK_MEM(in.cnames[0].value, "user1@host-2a", 13);
  CHECK_EQ(in.sdes_other, 1);
  CHECK_EQ(in.malformed, 0);

  static const uint8_t ffmpeg_like[] = {
    0x80, 0xC8, 0x00, 0x06, 0x0A, 0x0B, 0x0C, 0x0D, 0xE9, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x0B, 0xB8, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x27, 0x10,
    0x81, 0xCA, 0x00, 0x04, 0x0A, 0x0B, 0x0C, 0x0D,
    0x01, 8, 'f', 'f', 'm', 'p', 'e', 'g', '0', '1', 0x00, 0x00,
    0x81, 0xCB, 0x00, 0x01, 0x0A, 0x0B, 0x0C, 0x0D,
  };
  REQUIRE(urtp_rtcp_parse(ffmpeg_like, sizeof ffmpeg_like, 0, &in) == 0);
  REQUIRE(in.nreports == 1);
  CHECK(in.reports[0].is_sr);
  CHECK(in.reports[0].sr.ntp == 0xE900000180000000ull);
  CHECK_EQ(in.reports[0].sr.rtp_ts, 3000);
  CHECK_EQ(in.reports[0].sr.packets, 100);
  CHECK_EQ(in.reports[0].sr.octets, 10000);
  CHECK_EQ(in.ncnames, 1);
  CHECK(in.bye && in.nbyes == 1 && in.byes[0] == 0x0A0B0C0D);

  static const uint8_t two_chunks[] = {
    0x80, 0xC9, 0x00, 0x01, 0xAA, 0xAA, 0xAA, 0xAA,
    0x82, 0xCA, 0x00, 0x05,
    0xAA, 0xAA, 0xAA, 0xAA, 0x01, 0x01, 'a', 0x00,
    0xBB, 0xBB, 0xBB, 0xBB, 0x02, 0x01, 'b', 0x01, 0x02, 'b', 'b', 0x00,
    0x81, 0xCA, 0x00, 0x03, 0xCC, 0xCC, 0xCC, 0xCC, /* PRIV: prefix "x", value "yz" */
    0x08, 0x04, 0x01, 'x', 'y', 'z', 0x00, 0x00,
    0x81, 0xCD, 0x00, 0x03, 0xAA, 0xAA, 0xAA, 0xAA, 0xBB, 0xBB, 0xBB, 0xBB, 0x00, 0x05, 0x00, 0x00,
    0x80, 0xCF, 0x00, 0x01, 0xAA, 0xAA, 0xAA, 0xAA, /* XR, empty */
  };
  REQUIRE(urtp_rtcp_parse(two_chunks, sizeof two_chunks, 0, &in) == 0);
  CHECK_EQ(in.packets, 5);
  REQUIRE(in.ncnames == 2);
  CHECK_EQ(in.cnames[0].ssrc, 0xAAAAAAAA);
  CHECK_EQ(in.cnames[0].len, 1);
  CHECK_EQ(in.cnames[1].ssrc, 0xBBBBBBBB);
  CHECK_MEM(in.cnames[1].value, "bb", 2);
  CHECK_EQ(in.sdes_other, 2);
  CHECK_EQ(in.feedback, 1);
  CHECK_EQ(in.other, 1);
  CHECK_EQ(in.malformed, 0);

  /* the feedback packet's common part */
  urtp_rtcp_iter_t it;
  urtp_rtcp_pkt_t p;
  urtp_rtcp_fb_t fb;
  urtp_rtcp_iter_init(&it, two_chunks, sizeof two_chunks);
  for (int i = 0; i < 4; i++)
    REQUIRE(urtp_rtcp_next(&it, &p) == 1);
  REQUIRE(urtp_rtcp_parse_fb(&p, &fb) == 0);
  CHECK_EQ(fb.fmt, 1);
  CHECK_EQ(fb.sender_ssrc, 0xAAAAAAAA);
  CHECK_EQ(fb.media_ssrc, 0xBBBBBBBB);
  CHECK_EQ(fb.fci_len, 4);
}

/* Captured on this machine: the first compound packet of a sending rtpbin
 * (GStreamer 1.22: SR, SDES with CNAME and TOOL) and FFmpeg 8's last
 * (-f rtp -cname ffmpeg-host1 -rtpflags send_bye: SR, SDES, BYE). */
static void test_captured(void)
{
  static const uint8_t rtpbin[] = {
    0x80, 0xC8, 0x00, 0x06, 0x4C, 0x05, 0x12, 0x63, 0xEE, 0xB0, 0xA1, 0x63, 0xBA, 0x29, 0x62, 0xCF,
    0x2F, 0xA2, 0xFE, 0xC0, 0x00, 0x00, 0x00, 0xF6, 0x00, 0x03, 0xD8, 0x00, 0x81, 0xCA, 0x00, 0x0C,
    0x4C, 0x05, 0x12, 0x63, 0x01, 0x1B, 0x75, 0x73, 0x65, 0x72, 0x32, 0x33, 0x38, 0x31, 0x30, 0x32,
    0x36, 0x39, 0x38, 0x40, 0x68, 0x6F, 0x73, 0x74, 0x2D, 0x32, 0x32, 0x64, 0x66, 0x39, 0x37, 0x62,
    0x61, 0x06, 0x09, 0x47, 0x53, 0x74, 0x72, 0x65, 0x61, 0x6D, 0x65, 0x72, 0x00, 0x00, 0x00, 0x00,
  };
  static const uint8_t ffmpeg[] = {
    0x80, 0xC8, 0x00, 0x06, 0x31, 0xBD, 0x01, 0x92, 0xEE, 0xB0, 0xA1, 0x70, 0xD7, 0x8D, 0x4F, 0xDF,
    0x63, 0x1B, 0x1E, 0x22, 0x00, 0x00, 0x00, 0x82, 0x00, 0x02, 0x04, 0xCC, 0x81, 0xCA, 0x00, 0x05,
    0x31, 0xBD, 0x01, 0x92, 0x01, 0x0C, 0x66, 0x66, 0x6D, 0x70, 0x65, 0x67, 0x2D, 0x68, 0x6F, 0x73,
    0x74, 0x31, 0x00, 0x00, 0x81, 0xCB, 0x00, 0x01, 0x31, 0xBD, 0x01, 0x92,
  };
  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(rtpbin, sizeof rtpbin, 0, &in) == 0);
  CHECK_EQ(in.packets, 2);
  REQUIRE(in.nreports == 1);
  CHECK(in.reports[0].is_sr);
  CHECK_EQ(in.reports[0].sr.ssrc, 0x4C051263);
  CHECK(in.reports[0].sr.ntp == 0xEEB0A163BA2962CFull);
  CHECK_EQ(in.reports[0].sr.packets, 246);
  CHECK_EQ(in.reports[0].sr.octets, 251904);
  REQUIRE(in.ncnames == 1);
  CHECK_EQ(in.cnames[0].len, 27);
  CHECK_MEM(in.cnames[0].value, "user238102698@host-22df97ba", 27);
  CHECK_EQ(in.sdes_other, 1);
  CHECK_EQ(in.malformed, 0);

  REQUIRE(urtp_rtcp_parse(ffmpeg, sizeof ffmpeg, 0, &in) == 0);
  CHECK_EQ(in.packets, 3);
  REQUIRE(in.nreports == 1);
  CHECK_EQ(in.reports[0].sr.packets, 130);
  CHECK_EQ(in.reports[0].sr.octets, 132300);
  REQUIRE(in.ncnames == 1);
  CHECK_MEM(in.cnames[0].value, "ffmpeg-host1", 12);
  CHECK(in.bye && in.nbyes == 1 && in.byes[0] == 0x31BD0192 && !in.bye_reason);
  CHECK_EQ(in.malformed, 0);
}

/* ---- malformed input ---- */

typedef struct bad_case {
  const char *what;
  uint8_t bytes[48];
  size_t len;
  int check;         /* urtp_rtcp_check() without flags */
  unsigned malformed; /* when it passes: packets skipped by urtp_rtcp_parse() */
} bad_case_t;

static const bad_case_t bad_cases[] = {
  { "empty", { 0 }, 0, -EBADMSG, 0 },
  { "three bytes", { 0x80, 0xC9, 0x00 }, 3, -EBADMSG, 0 },
  { "version 1", { 0x40, 0xC9, 0x00, 0x01, 1, 2, 3, 4 }, 8, -EBADMSG, 0 },
  { "version 3", { 0xC0, 0xC9, 0x00, 0x01, 1, 2, 3, 4 }, 8, -EBADMSG, 0 },
  { "length past the end", { 0x80, 0xC9, 0x00, 0x02, 1, 2, 3, 4 }, 8, -EBADMSG, 0 },
  { "length 0xffff", { 0x80, 0xC9, 0xFF, 0xFF, 1, 2, 3, 4 }, 8, -EBADMSG, 0 },
  { "two bytes left over", { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x80, 0xCA }, 10, -EBADMSG, 0 },
  { "a word of zeros after", { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0, 0, 0, 0 }, 12, -EBADMSG, 0 },
  { "first packet SDES",
    { 0x81, 0xCA, 0x00, 0x02, 1, 2, 3, 4, 0x01, 0x00, 0x00, 0x00 }, 12, -EBADMSG, 0 },
  { "first packet BYE", { 0x81, 0xCB, 0x00, 0x01, 1, 2, 3, 4 }, 8, -EBADMSG, 0 },
  { "padding on the first of two",
    { 0xA0, 0xC9, 0x00, 0x02, 1, 2, 3, 4, 0, 0, 0, 4, 0x81, 0xCB, 0x00, 0x01, 1, 2, 3, 4 },
    20, -EBADMSG, 0 },
  { "padding count 0", { 0xA0, 0xC9, 0x00, 0x02, 1, 2, 3, 4, 0, 0, 0, 0 }, 12, -EBADMSG, 0 },
  { "padding count past the body",
    { 0xA0, 0xC9, 0x00, 0x02, 1, 2, 3, 4, 0, 0, 0, 9 }, 12, -EBADMSG, 0 },
  { "padding on a lone RR (accepted)",
    { 0xA0, 0xC9, 0x00, 0x02, 1, 2, 3, 4, 0, 0, 0, 4 }, 12, 0, 0 },
  { "padding eating the SSRC",
    { 0xA0, 0xC9, 0x00, 0x02, 1, 2, 3, 4, 0, 0, 0, 8 }, 12, 0, 1 },
  { "RR count past its length", { 0x81, 0xC9, 0x00, 0x01, 1, 2, 3, 4 }, 8, 0, 1 },
  { "RR without SSRC", { 0x80, 0xC9, 0x00, 0x00 }, 4, 0, 1 },
  { "SR too short", { 0x80, 0xC8, 0x00, 0x01, 1, 2, 3, 4 }, 8, 0, 1 },
  { "SDES item past the end",
    { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x81, 0xCA, 0x00, 0x02, 1, 2, 3, 4, 0x01, 0x05, 'a', 0 },
    20, 0, 1 },
  { "SDES without END",
    { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x81, 0xCA, 0x00, 0x02, 1, 2, 3, 4, 0x01, 0x02, 'a', 'b' },
    20, 0, 1 },
  { "SDES count past the chunks",
    { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x82, 0xCA, 0x00, 0x02, 1, 2, 3, 4, 0x00, 0, 0, 0 },
    20, 0, 1 },
  { "BYE count past its length",
    { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x82, 0xCB, 0x00, 0x01, 1, 2, 3, 4 }, 16, 0, 1 },
  { "BYE reason past the end",
    { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x81, 0xCB, 0x00, 0x02, 1, 2, 3, 4, 9, 'a', 'b', 'c' },
    20, 0, 1 },
  { "APP without name",
    { 0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x80, 0xCC, 0x00, 0x01, 1, 2, 3, 4 }, 16, 0, 1 },
};

static void test_malformed(void)
{
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case_t *c = &bad_cases[i];
    /* an exact-size copy: nothing beyond len to read by mistake */
    uint8_t *buf = malloc(c->len ? c->len : 1);
    REQUIRE(buf != NULL);
    memcpy(buf, c->bytes, c->len);
    int r = urtp_rtcp_check(buf, c->len, 0);
    urtp_rtcp_info_t in;
    int p = urtp_rtcp_parse(buf, c->len, 0, &in);
    if (r != c->check || p != c->check || (p == 0 && in.malformed != c->malformed)) {
      printf("#   case '%s': check %d parse %d malformed %u\n", c->what, r, p,
             p == 0 ? in.malformed : 0);
      tap_cur_failed = 1;
    }
    if (p != 0)
      CHECK_EQ(in.packets, 0);
    free(buf);
  }
  /* reduced size lets any packet come first, nothing else */
  CHECK_EQ(urtp_rtcp_check(bad_cases[8].bytes, bad_cases[8].len, URTP_RTCP_REDUCED_SIZE), 0);
  CHECK_EQ(urtp_rtcp_check(bad_cases[2].bytes, bad_cases[2].len, URTP_RTCP_REDUCED_SIZE),
           -EBADMSG);
}

/* Fixed maximums: what does not fit is dropped and counted. */
static void test_truncation(void)
{
  uint8_t buf[2048];
  urtp_rtcp_block_t blocks[31];
  for (unsigned i = 0; i < 31; i++)
    blocks[i] = (urtp_rtcp_block_t){ .ssrc = 1000 + i };
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  urtp_rtcp_write_rr(&w, 1, blocks, 31);
  urtp_rtcp_write_rr(&w, 2, blocks, 31);  /* 30 of these do not fit */
  for (unsigned i = 0; i < 4; i++)
    urtp_rtcp_write_rr(&w, 3 + i, NULL, 0); /* the fifth and sixth report do not */
  for (unsigned i = 0; i < 10; i++)
    urtp_rtcp_write_sdes_cname(&w, 100 + i, "c"); /* two CNAMEs too many */
  REQUIRE(w.err == 0);
  urtp_rtcp_info_t in;
  REQUIRE(urtp_rtcp_parse(buf, w.len, 0, &in) == 0);
  CHECK_EQ(in.packets, 16);
  CHECK_EQ(in.nreports, 4);
  CHECK_EQ(in.nblocks, 32);
  CHECK_EQ(in.reports[1].first_block, 31);
  CHECK_EQ(in.reports[1].nblocks, 1);
  CHECK_EQ(in.blocks[31].ssrc, 1000);
  CHECK_EQ(in.ncnames, 8);
  CHECK_EQ(in.cnames[7].ssrc, 107);
  CHECK_EQ(in.truncated, 30 + 2 + 2);
}

static void test_writer_limits(void)
{
  uint8_t buf[64];
  urtp_rtcp_writer_t w;
  /* one byte short: nothing written, the error sticks */
  urtp_rtcp_writer_init(&w, buf, sizeof sr_bytes - 1);
  memset(buf, 0xEE, sizeof buf);
  CHECK_EQ(urtp_rtcp_write_sr(&w, &kat_sr, &kat_block, 1), -ENOSPC);
  CHECK_EQ(w.len, 0);
  CHECK_EQ(buf[0], 0xEE);
  CHECK_EQ(urtp_rtcp_write_rr(&w, 1, NULL, 0), -ENOSPC);
  CHECK_EQ(w.err, -ENOSPC);
  CHECK_EQ(w.len, 0);
  /* exactly enough */
  urtp_rtcp_writer_init(&w, buf, sizeof sr_bytes);
  CHECK_EQ(urtp_rtcp_write_sr(&w, &kat_sr, &kat_block, 1), 0);
  CHECK_EQ(urtp_rtcp_write_rr(&w, 1, NULL, 0), -ENOSPC);
  CHECK_EQ(w.len, sizeof sr_bytes);

  urtp_rtcp_block_t many[32] = { { 0 } };
  char longname[257];
  memset(longname, 'x', 256);
  longname[256] = '\0';
  uint8_t big[2048];
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_rr(&w, 1, many, 32), -EINVAL);
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_sdes_cname(&w, 1, longname), -EINVAL);
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_bye(&w, (const uint32_t[1]){ 1 }, 1, longname), -EINVAL);
  longname[255] = '\0';
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_sdes_cname(&w, 1, longname), 0);
  CHECK_EQ(w.len, 4 + 264); /* SSRC, item and END: 262 octets, to the word: 264 */
  urtp_rtcp_app_t app = { .subtype = 32, .name = { 'a', 'b', 'c', 'd' } };
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_app(&w, &app), -EINVAL);
  app.subtype = 1;
  app.len = 3;
  app.data = (const uint8_t *)"abc";
  urtp_rtcp_writer_init(&w, big, sizeof big);
  CHECK_EQ(urtp_rtcp_write_app(&w, &app), -EINVAL);
}

/* ---- NTP and round-trip time ---- */

static void test_ntp(void)
{
  /* 1970 is 2208988800 s after 1900 */
  CHECK(urtp_ntp_from_unix_ns(0) == 2208988800ull << 32);
  CHECK(urtp_ntp_from_unix_ns(NS / 2) == (2208988800ull << 32 | 0x80000000u));
  CHECK(urtp_ntp_from_unix_ns(NS / 4 * 3) == (2208988800ull << 32 | 0xC0000000u));
  CHECK(urtp_ntp_to_ns(0x0000000140000000ull) == NS + NS / 4);
  /* round trips to within rounding (a fraction unit is 0.23 ns) */
  for (uint64_t ns = 0; ns < 3 * NS; ns += 123456789) {
    uint64_t back = urtp_ntp_to_ns(urtp_ntp_from_ns(ns));
    CHECK(back + 1 >= ns && back <= ns + 1);
  }
  CHECK_EQ(urtp_ntp_mid32(0x0000B71080000000ull), 0xB7108000u);
  CHECK_EQ(urtp_ntp_short_from_ns(NS + NS / 2), 0x00018000u);
  CHECK_EQ(urtp_ntp_short_from_ns(5 * NS + NS / 4), 0x00054000u);
  CHECK_EQ(urtp_ntp_short_from_ns(100000ull * NS), UINT32_MAX);
  CHECK(urtp_ntp_short_to_ns(0x00062000u) == 6 * NS + NS / 8);
  /* now is after 2020 */
  CHECK(urtp_ntp_now() >> 32 > 3786825600ull);
}

static void test_rtt(void)
{
  /* RFC 3550 6.4.1's example: arrival 46864.250000 (0xb710:8000), LSR
   * 46853.125000 (0xb705:2000), DLSR 5.250 (0x0005:4000): 6.125 s */
  uint64_t arrival = (uint64_t)0xB710 << 32 | 0x80000000u;
  CHECK_EQ(urtp_ntp_mid32(arrival), 0xB7108000u);
  CHECK_EQ(urtp_rtcp_rtt(arrival, 0xB7052000u, 0x00054000u), 6 * NS + NS / 8);
  /* no LSR: no RTT; a block claiming more delay than elapsed: 0 */
  CHECK_EQ(urtp_rtcp_rtt(arrival, 0, 0x00054000u), -1);
  CHECK_EQ(urtp_rtcp_rtt(arrival, 0xB7052000u, 0x00100000u), 0);
  /* across the wrap of the middle 32 bits: 1 - (-0.5) - 0.25 = 1.25 s */
  CHECK_EQ(urtp_rtcp_rtt((uint64_t)0x00010000 << 16, 0xFFFF8000u, 0x4000u), NS + NS / 4);

  /* an SR answered 1.5 s after it arrived, the answer back 40 ms after */
  urtp_rtcp_block_t b = { 0 };
  uint64_t sr_ntp = urtp_ntp_from_unix_ns(1700000000ull * NS);
  uint64_t sr_arrival = 77 * NS; /* the receiver's own clock */
  urtp_rtcp_block_set_lsr(&b, sr_ntp, sr_arrival, sr_arrival + NS + NS / 2);
  CHECK_EQ(b.lsr, urtp_ntp_mid32(sr_ntp));
  CHECK_EQ(b.dlsr, 0x00018000u);
  int64_t rtt = urtp_rtcp_rtt(sr_ntp + urtp_ntp_from_ns(NS + NS / 2 + 40 * MS), b.lsr, b.dlsr);
  /* within one 1/65536 s unit */
  CHECK(rtt >= (int64_t)(40 * MS) - 15259 && rtt <= (int64_t)(40 * MS) + 15259);
}

/* ---- reception statistics ---- */

/* A.8 by hand: 8000 Hz, so 125 us is one timestamp unit. Transit times
 * 1000, 2600, 5800, 5800 units: |D| = 1600, 3200, 0. In A.8's integer
 * form (jitter kept times 16, J += |D| - ((J + 8) >> 4)):
 *   1600; 1600 + 3200 - 100 = 4700; 4700 + 0 - 294 = 4406 -> 4406 >> 4 = 275
 * and in reals J = 100, 293.75, 275.39. */
static void test_jitter_by_hand(void)
{
  static const uint32_t ts[] = { 0, 160, 320, 480 };
  static const uint64_t at[] = { 1000, 2760, 6120, 6280 }; /* units of 125 us */
  static const uint32_t want[] = { 0, 100, 293, 275 };
  urtp_rtcp_rx_t rx;
  urtp_rtcp_rx_init(&rx, 0x1234, 10, 8000);
  for (int i = 0; i < 4; i++) {
    CHECK(urtp_rtcp_rx_update(&rx, (uint16_t)(10 + i), ts[i], at[i] * 125000, 160));
    urtp_rtcp_block_t b;
    urtp_rtcp_rx_peek(&rx, &b);
    CHECK_EQ(b.jitter, want[i]);
  }
}

/* A long run against A.8 in floating point, 90 kHz with arrivals on whole
 * milliseconds (90 units each), transit varying pseudo-randomly. */
static void test_jitter_reference(void)
{
  urtp_rtcp_rx_t rx;
  urtp_rtcp_rx_init(&rx, 1, 0, 90000);
  uint64_t seed = 42;
  double J = 0;
  int64_t prev_transit = 0;
  for (int i = 0; i < 2000; i++) {
    uint32_t ts = 3000u * (uint32_t)i + 0xFFF00000u;  /* 30 fps, wrapping */
    uint64_t ms = (uint64_t)i * 100 / 3 + tap_rand(&seed) % 40;
    urtp_rtcp_rx_update(&rx, (uint16_t)i, ts, 5 * NS + ms * MS, 1000);
    int64_t transit = (int64_t)(ms * 90) - (int64_t)(3000 * i);
    if (i > 0) {
      double d = fabs((double)(transit - prev_transit));
      J += (d - J) / 16;
    }
    prev_transit = transit;
  }
  urtp_rtcp_block_t b;
  urtp_rtcp_rx_peek(&rx, &b);
  /* the integer form rounds each step; it stays within a unit or two */
  if (fabs((double)b.jitter - J) > 2) {
    printf("#   jitter %u, A.8 in reals %.2f\n", b.jitter, J);
    tap_cur_failed = 1;
  }
  CHECK(J > 500); /* the run has real jitter to measure */
}

static void feed(urtp_rtcp_rx_t *rx, const uint16_t *seqs, size_t n)
{
  for (size_t i = 0; i < n; i++)
    urtp_rtcp_rx_update(rx, seqs[i], 0, 0, 100);
}

/* A.3: 100..109 without 103 and 106: expected 10, received 8, lost 2,
 * fraction 2 * 256 / 10 = 51. Then 110..119 with 115 twice: expected 10,
 * received 11: fraction 0 (never negative), cumulative 1. */
static void test_loss(void)
{
  static const uint16_t a[] = { 100, 101, 102, 104, 105, 107, 108, 109 };
  static const uint16_t b[] = { 110, 111, 112, 113, 114, 115, 115, 116, 117, 118, 119 };
  urtp_rtcp_rx_t rx;
  urtp_rtcp_block_t blk;
  urtp_rtcp_rx_init(&rx, 0xABCD, 100, 90000);
  feed(&rx, a, sizeof a / sizeof a[0]);
  urtp_rtcp_rx_peek(&rx, &blk);
  CHECK_EQ(blk.fraction, 51);
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(blk.ssrc, 0xABCD);
  CHECK_EQ(blk.fraction, 51);
  CHECK_EQ(blk.lost, 2);
  CHECK_EQ(blk.ext_max_seq, 109);
  CHECK_EQ(blk.lsr, 0);
  CHECK_EQ(blk.dlsr, 0);
  feed(&rx, b, sizeof b / sizeof b[0]);
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(blk.fraction, 0);
  CHECK_EQ(blk.lost, 1);
  CHECK_EQ(blk.ext_max_seq, 119);
  CHECK_EQ(rx.received, 19);
  /* an interval with nothing: fraction 0 */
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(blk.fraction, 0);
  /* late 103 arrives: cumulative 0, it does not move the maximum */
  urtp_rtcp_rx_update(&rx, 103, 0, 0, 100);
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(blk.lost, 0);
  CHECK_EQ(blk.ext_max_seq, 119);
}

/* Across the wrap: 65530..65535, 0..5 without 2: the extended maximum is
 * 1 << 16 | 5, expected 12, lost 1, fraction 256 / 12 = 21. Duplicates
 * make the cumulative count negative. */
static void test_loss_wrap(void)
{
  static const uint16_t s[] = { 65530, 65531, 65532, 65533, 65534, 65535, 0, 1, 3, 4, 5 };
  urtp_rtcp_rx_t rx;
  urtp_rtcp_block_t blk;
  urtp_rtcp_rx_init(&rx, 1, 65530, 90000);
  feed(&rx, s, sizeof s / sizeof s[0]);
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(blk.ext_max_seq, 0x00010005u);
  CHECK_EQ(blk.lost, 1);
  CHECK_EQ(blk.fraction, 21);
  /* a late 65535 (before the wrap) and three duplicates */
  static const uint16_t d[] = { 65535, 5, 5, 4 };
  feed(&rx, d, 4);
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(blk.ext_max_seq, 0x00010005u);
  CHECK_EQ(blk.lost, -3);
  CHECK_EQ(blk.fraction, 0);
}

/* Steps of 2999 (just within A.1's MAX_DROPOUT) lose 2998 packets each:
 * after 2800 of them the cumulative count passes 2^23 - 1 and is clamped. */
static void test_loss_clamp(void)
{
  urtp_rtcp_rx_t rx;
  urtp_rtcp_block_t blk;
  uint16_t seq = 0;
  urtp_rtcp_rx_init(&rx, 1, seq, 90000);
  urtp_rtcp_rx_update(&rx, seq, 0, 0, 0);
  for (int i = 0; i < 2800; i++) {
    seq = (uint16_t)(seq + 2999);
    CHECK(urtp_rtcp_rx_update(&rx, seq, 0, 0, 0));
  }
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(blk.lost, 0x7fffff);
  CHECK_EQ(blk.ext_max_seq, (uint32_t)(2800ull * 2999));
  CHECK_EQ(blk.fraction, 255);  /* 2998/2999 of the interval */
}

/* A.1: a jump of 3000 or more is believed when the next packet follows it;
 * counting starts over there. A lone stray packet changes nothing. */
static void test_seq_jump(void)
{
  urtp_rtcp_rx_t rx;
  urtp_rtcp_block_t blk;
  urtp_rtcp_rx_init(&rx, 1, 1000, 90000);
  static const uint16_t a[] = { 1000, 1001, 1002 };
  feed(&rx, a, 3);
  CHECK(!urtp_rtcp_rx_update(&rx, 30000, 0, 0, 0)); /* stray */
  CHECK(urtp_rtcp_rx_update(&rx, 1003, 0, 0, 0));
  urtp_rtcp_rx_peek(&rx, &blk);
  CHECK_EQ(blk.ext_max_seq, 1003);
  CHECK_EQ(blk.lost, 0);
  CHECK(!urtp_rtcp_rx_update(&rx, 40000, 0, 0, 0));
  CHECK(urtp_rtcp_rx_update(&rx, 40001, 0, 0, 0));
  CHECK(urtp_rtcp_rx_update(&rx, 40003, 0, 0, 0));
  urtp_rtcp_rx_block(&rx, &blk);
  CHECK_EQ(rx.base_seq, 40001);
  CHECK_EQ(blk.ext_max_seq, 40003);
  CHECK_EQ(blk.lost, 1);
  CHECK_EQ(blk.fraction, 256 / 3);
  /* a step back of up to 100 is reordering, not a jump */
  CHECK(urtp_rtcp_rx_update(&rx, 39950, 0, 0, 0));
  CHECK_EQ(rx.base_seq, 40001);
}

/* ---- the transmission interval ---- */

/* rtcp_interval() of RFC 3550 A.7, transcribed: rtcp_bw is RTCP's share in
 * octets per second, u stands for drand48(). The RFC writes e as 2.71828. */
static double rfc_interval(int members, int senders, double rtcp_bw, int we_sent,
                           double avg_rtcp_size, int initial, double u)
{
  const double RTCP_MIN_TIME = 5.;
  const double RTCP_SENDER_BW_FRACTION = 0.25;
  const double RTCP_RCVR_BW_FRACTION = 1 - RTCP_SENDER_BW_FRACTION;
  const double COMPENSATION = 2.71828 - 1.5;
  double t;
  double rtcp_min_time = RTCP_MIN_TIME;
  int n;
  if (initial)
    rtcp_min_time /= 2;
  n = members;
  if (senders <= members * RTCP_SENDER_BW_FRACTION) {
    if (we_sent) {
      rtcp_bw *= RTCP_SENDER_BW_FRACTION;
      n = senders;
    } else {
      rtcp_bw *= RTCP_RCVR_BW_FRACTION;
      n -= senders;
    }
  }
  t = avg_rtcp_size * n / rtcp_bw;
  if (t < rtcp_min_time)
    t = rtcp_min_time;
  t = t * (u + 0.5);
  t = t / COMPENSATION;
  return t;
}

/* e written as 2.71828 against the exact value: 1.5e-6 relative */
static bool close_to(uint64_t ns, double s)
{
  return fabs((double)ns / 1e9 - s) <= s * 2e-6 + 1e-9;
}

static void test_interval_formula(void)
{
  static const struct {
    unsigned members, senders;
    bool we_sent;
    uint64_t bw;
    double avg;
  } cases[] = {
    { 2, 1, false, 1000000, 100 },     /* the minimum rules */
    { 2, 1, true, 64000, 200 },
    { 1000, 1, false, 1000000, 100 },  /* receivers share 3/4 */
    { 1000, 1, true, 1000000, 100 },   /* the sender has 1/4 to itself */
    { 1000, 400, false, 1000000, 100 },/* many senders: no split */
    { 50, 10, true, 128000, 120 },
    { 5000, 2, false, 20000000, 90 },
  };
  static const uint32_t draws[] = { 0, 1u << 30, 1u << 31, 0xC0000000u, UINT32_MAX };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    urtp_rtcp_interval_config_t cfg = { .session_bw = cases[i].bw };
    urtp_rtcp_members_t m = { .members = cases[i].members, .senders = cases[i].senders,
                              .we_sent = cases[i].we_sent };
    for (int initial = 0; initial < 2; initial++) {
      for (size_t k = 0; k < sizeof draws / sizeof draws[0]; k++) {
        double u = draws[k] / 4294967296.0;
        double want = rfc_interval((int)m.members, (int)m.senders, cases[i].bw * 0.05 / 8,
                                   m.we_sent, cases[i].avg, initial, u);
        uint64_t got = urtp_rtcp_interval(&cfg, &m, cases[i].avg, initial, draws[k]);
        if (!close_to(got, want)) {
          printf("#   case %zu initial %d draw %zu: %.9f s, A.7 %.9f s\n", i, initial, k,
                 (double)got / 1e9, want);
          tap_cur_failed = 1;
        }
      }
    }
  }
  /* the bounds: Td/2 and (nearly) 3 Td/2, over e - 3/2 */
  urtp_rtcp_interval_config_t cfg = { .session_bw = 1000000 };
  urtp_rtcp_members_t m = { .members = 2, .senders = 1 };
  const double C = 2.718281828459045 - 1.5;
  CHECK_EQ(urtp_rtcp_interval_td(&cfg, &m, 100, false), 5 * NS);
  CHECK_EQ(urtp_rtcp_interval_td(&cfg, &m, 100, true), 5 * NS / 2);
  CHECK_EQ(urtp_rtcp_interval(&cfg, &m, 100, false, 0), (uint64_t)llround(2.5e9 / C));
  CHECK_EQ(urtp_rtcp_interval(&cfg, &m, 100, false, UINT32_MAX),
           (uint64_t)llround(5e9 * (1.5 - 1 / 4294967296.0) / C));
  /* a caller's minimum, and the reduced minimum: 360 / 1000 kbit/s */
  cfg.min_interval = 1 * NS;
  CHECK_EQ(urtp_rtcp_interval_td(&cfg, &m, 100, false), NS);
  cfg.reduced_min = true;
  CHECK_EQ(urtp_rtcp_interval_td(&cfg, &m, 100, false), 360 * MS);
  CHECK_EQ(urtp_rtcp_interval_td(&cfg, &m, 100, true), 180 * MS);
  /* without a bandwidth (none configured, none measured): the minimum */
  cfg = (urtp_rtcp_interval_config_t){ .reduced_min = true };
  CHECK_EQ(urtp_rtcp_interval_td(&cfg, &m, 100, false), 5 * NS);
  m.session_bw = 2000000; /* measured */
  CHECK_EQ(urtp_rtcp_interval_td(&cfg, &m, 100, false), 180 * MS);
}

/* Over many draws the mean interval is Td / (e - 3/2) (E[u + 1/2] = 1),
 * and every draw lies within the bounds. */
static void test_interval_mean(void)
{
  urtp_rtcp_interval_config_t cfg = { .session_bw = 256000 };
  urtp_rtcp_members_t m = { .members = 300, .senders = 1 };
  const double C = 2.718281828459045 - 1.5;
  double td = (double)urtp_rtcp_interval_td(&cfg, &m, 110, false) / 1e9;
  CHECK(close_to(urtp_rtcp_interval_td(&cfg, &m, 110, false), 110.0 * 299 / (256000 * 0.05 / 8 * 0.75)));
  uint64_t lo = (uint64_t)(td * 0.5 / C * 1e9), hi = (uint64_t)(td * 1.5 / C * 1e9) + 1;
  uint64_t seed = 7;
  double sum = 0;
  const int N = 100000;
  for (int i = 0; i < N; i++) {
    uint64_t t = urtp_rtcp_interval(&cfg, &m, 110, false, (uint32_t)(tap_rand(&seed) >> 32));
    if (t < lo || t > hi) {
      printf("#   draw %d: %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]\n", i, t, lo, hi);
      tap_cur_failed = 1;
      break;
    }
    sum += (double)t / 1e9;
  }
  double mean = sum / N;
  if (fabs(mean - td / C) > td / C * 0.005) {
    printf("#   mean %.6f s, Td / (e - 3/2) = %.6f s\n", mean, td / C);
    tap_cur_failed = 1;
  }
}

/* A fixed random source: the scripted values in turn. */
typedef struct script {
  const uint32_t *v;
  size_t n, i;
} script_t;

static uint32_t scripted(void *user)
{
  script_t *s = user;
  return s->v[s->i++ % s->n];
}

/* The scheduler on a virtual clock (6.3): the first report half the
 * minimum away, timer reconsideration when the group grew, reverse
 * reconsideration when it shrank, the average size. */
static void test_sched(void)
{
  static const uint32_t half[] = { 1u << 31 }; /* u = 0.5: T = Td / (e - 3/2) */
  script_t sc = { half, 1, 0 };
  urtp_rtcp_interval_config_t cfg = { .session_bw = 1000000, .rand = scripted, .rand_user = &sc };
  urtp_rtcp_members_t m = { .members = 2, .senders = 1 };
  const double C = 2.718281828459045 - 1.5;
  const uint64_t t0 = 1000 * NS;
  urtp_rtcp_sched_t s;
  urtp_rtcp_sched_init(&s, &cfg, t0, &m, 72);
  CHECK(s.initial);
  CHECK(s.avg_size == 100);
  CHECK_EQ(s.tn, t0 + (uint64_t)llround(2.5e9 / C));

  /* due, nothing changed: the redraw says send */
  uint64_t now = s.tn;
  CHECK(urtp_rtcp_sched_expire(&s, now, &m));
  urtp_rtcp_sched_sent(&s, now, &m, 72 + 16 * 4); /* 136 + 28 octets */
  CHECK(!s.initial);
  CHECK_EQ(s.tp, now);
  CHECK(fabs(s.avg_size - (100 * 15.0 / 16 + 164.0 / 16)) < 1e-9);
  CHECK_EQ(s.tn, now + (uint64_t)llround(5e9 / C));
  urtp_rtcp_sched_received(&s, 72);
  CHECK(fabs(s.avg_size - ((100 * 15.0 / 16 + 164.0 / 16) * 15 / 16 + 100.0 / 16)) < 1e-9);

  /* 998 receivers joined meanwhile: the report waits (reconsideration) */
  uint64_t tp = s.tp;
  now = s.tn;
  urtp_rtcp_members_t big = { .members = 1000, .senders = 1 };
  double avg = s.avg_size;
  double td = avg * 999 / (1000000 * 0.05 / 8 * 0.75);
  CHECK(!urtp_rtcp_sched_expire(&s, now, &big));
  CHECK_EQ(s.tp, tp);
  CHECK(close_to(s.tn - tp, td / C));
  CHECK(s.tn > now);
  CHECK_EQ(s.pmembers, 1000);

  /* 990 of them leave at now: tn and tp drawn in by 10/1000 */
  uint64_t tn = s.tn;
  urtp_rtcp_members_t few = { .members = 10, .senders = 1 };
  urtp_rtcp_sched_members_left(&s, now, &few);
  CHECK_EQ(s.tn, now + (uint64_t)((double)(tn - now) * 0.01));
  CHECK_EQ(s.tp, now - (uint64_t)((double)(now - tp) * 0.01));
  CHECK_EQ(s.pmembers, 10);
  /* no change when the count did not fall */
  urtp_rtcp_sched_members_left(&s, now, &few);
  CHECK_EQ(s.pmembers, 10);

  /* the built-in generator: every interval within the bounds */
  urtp_rtcp_interval_config_t own = { .session_bw = 1000000 };
  urtp_rtcp_sched_init(&s, &own, 0, &m, 72);
  for (int i = 0; i < 1000; i++) {
    uint64_t was = s.tn;
    CHECK(s.tn >= s.tp + (uint64_t)(2.5e9 * 0.5 / C) - 1);
    urtp_rtcp_sched_sent(&s, was, &m, 72);
    CHECK(s.tn - was >= (uint64_t)(5e9 * 0.5 / C) && s.tn - was <= (uint64_t)(5e9 * 1.5 / C) + 1);
  }
}

static void test_default_cname(void)
{
  const char *a = urtp_rtcp_default_cname();
  const char *b = urtp_rtcp_default_cname();
  CHECK(a == b);
  unsigned u;
  char host[64];
  CHECK_EQ(sscanf(a, "user%u@host-%63[0-9a-f]", &u, host), 2);
  CHECK(strlen(a) <= URTP_RTCP_MAX_TEXT);
}

int main(void)
{
  TAP_RUN(test_sr);
  TAP_RUN(test_rr);
  TAP_RUN(test_lost_clamped);
  TAP_RUN(test_sdes);
  TAP_RUN(test_bye);
  TAP_RUN(test_app);
  TAP_RUN(test_feedback);
  TAP_RUN(test_compound);
  TAP_RUN(test_foreign);
  TAP_RUN(test_captured);
  TAP_RUN(test_malformed);
  TAP_RUN(test_truncation);
  TAP_RUN(test_writer_limits);
  TAP_RUN(test_ntp);
  TAP_RUN(test_rtt);
  TAP_RUN(test_jitter_by_hand);
  TAP_RUN(test_jitter_reference);
  TAP_RUN(test_loss);
  TAP_RUN(test_loss_wrap);
  TAP_RUN(test_loss_clamp);
  TAP_RUN(test_seq_jump);
  TAP_RUN(test_interval_formula);
  TAP_RUN(test_interval_mean);
  TAP_RUN(test_sched);
  TAP_RUN(test_default_cname);
  return tap_done();
}
