/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_sdp.c - the session description (lib/urtp/sdp.h): exact text for
 * each codec and address form, as RFC 8866 lays it out and RFC 6184, 7798,
 * 9328 and 7587 fill the fmtp line. The parameter sets are real (x264,
 * x265, libvvenc; see test_params.c), their base64 computed independently.
 */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "urtp/fmtp.h"
#include "urtp/params.h"
#include "urtp/sdp.h"

static const uint8_t h264_sps[] = {
  0x67, 0x64, 0x00, 0x14, 0xac, 0xd9, 0x41, 0x41, 0xfb, 0x01, 0x6a, 0x0c, 0x0c, 0x0d, 0x4a, 0x00,
  0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x79, 0x1e, 0x28, 0x53, 0x2c,
};
static const uint8_t h264_pps[] = { 0x68, 0xeb, 0xec, 0xb2, 0x2c };
static const uint8_t h265_vps[] = {
  0x40, 0x01, 0x0c, 0x01, 0xff, 0xff, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03,
  0x00, 0x00, 0x03, 0x00, 0x3f, 0x95, 0x98, 0x09,
};
static const uint8_t h265_sps[] = {
  0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
  0x00, 0x3f, 0xa0, 0x0a, 0x08, 0x0f, 0x16, 0x59, 0x59, 0xa4, 0x93, 0x2b, 0xff, 0xc0, 0x00, 0x40,
  0x00, 0x5a, 0x83, 0x03, 0x03, 0x02, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x3c,
  0x10,
};
static const uint8_t h265_pps[] = { 0x44, 0x01, 0xc1, 0x72, 0xb4, 0x62, 0x40 };
static const uint8_t h266_sps[] = {
  0x00, 0x79, 0x00, 0xab, 0x02, 0x20, 0x80, 0x00, 0x00, 0x80, 0x28, 0x20, 0x3c, 0x46, 0xa0, 0x07,
};
static const uint8_t h266_pps[] = { 0x00, 0x81, 0x00, 0x00, 0x14, 0x10, 0x1e, 0x22, 0x24, 0x1f, 0x41 };

static char out[2048];

static void check_text(const urtp_sdp_desc_t *d, const char *want)
{
  int n = urtp_sdp_write(d, out, sizeof(out));
  CHECK_EQ(n, (int)strlen(want));
  if (strcmp(out, want) != 0)
    printf("#   got:\n%s#   want:\n%s", out, want);
  CHECK(strcmp(out, want) == 0);
}

static void test_h264_ipv4(void)
{
  urtp_params_t ps;
  urtp_params_init(&ps, URTP_CODEC_H264);
  urtp_params_add(&ps, h264_sps, sizeof(h264_sps));
  urtp_params_add(&ps, h264_pps, sizeof(h264_pps));
  urtp_sdp_desc_t d = { .addr = "192.0.2.7", .port = 5004, .ttl = 1, .session_id = 305419896,
                        .session_name = "uvgrtpsink", .codec = URTP_CODEC_H264, .pt = 96,
                        .params = &ps };
  check_text(&d, "v=0\r\n"
                 "o=- 305419896 1 IN IP4 127.0.0.1\r\n"
                 "s=uvgrtpsink\r\n"
                 "c=IN IP4 192.0.2.7\r\n"
                 "t=0 0\r\n"
                 "m=video 5004 RTP/AVP 96\r\n"
                 "a=rtpmap:96 H264/90000\r\n"
                 "a=fmtp:96 packetization-mode=1;profile-level-id=640014;"
                 "sprop-parameter-sets=Z2QAFKzZQUH7AWoMDA1KAAADAAIAAAMAeR4oUyw=,aOvssiw=\r\n");

  /* without a PPS: profile-level-id only; without sets: the mode only */
  urtp_params_reset(&ps, URTP_CODEC_H264);
  urtp_params_add(&ps, h264_sps, sizeof(h264_sps));
  int n = urtp_sdp_write(&d, out, sizeof(out));
  CHECK(n > 0);
  CHECK(strstr(out, "a=fmtp:96 packetization-mode=1;profile-level-id=640014\r\n") != NULL);
  d.params = NULL;
  urtp_sdp_write(&d, out, sizeof(out));
  CHECK(strstr(out, "a=fmtp:96 packetization-mode=1\r\n") != NULL);
  /* where RTCP goes, last in the media section */
  d.rtcp_port = 5005;
  n = urtp_sdp_write(&d, out, sizeof(out));
  CHECK(n > 13 && strcmp(out + n - 13, "a=rtcp:5005\r\n") == 0);
  d.rtcp_mux = true;
  n = urtp_sdp_write(&d, out, sizeof(out));
  CHECK(n > 12 && strcmp(out + n - 12, "a=rtcp-mux\r\n") == 0);
  CHECK(strstr(out, "a=rtcp:") == NULL);
  urtp_params_free(&ps);
}

static void test_h265_ipv6(void)
{
  urtp_params_t ps;
  urtp_params_init(&ps, URTP_CODEC_H265);
  urtp_params_add(&ps, h265_vps, sizeof(h265_vps));
  urtp_params_add(&ps, h265_sps, sizeof(h265_sps));
  urtp_params_add(&ps, h265_pps, sizeof(h265_pps));
  urtp_sdp_desc_t d = { .addr = "2001:db8::1", .port = 40000, .ttl = 1, .session_id = 7,
                        .session_name = "uvgrtpsink", .codec = URTP_CODEC_H265, .pt = 97,
                        .params = &ps };
  check_text(&d, "v=0\r\n"
                 "o=- 7 1 IN IP6 ::1\r\n"
                 "s=uvgrtpsink\r\n"
                 "c=IN IP6 2001:db8::1\r\n"
                 "t=0 0\r\n"
                 "m=video 40000 RTP/AVP 97\r\n"
                 "a=rtpmap:97 H265/90000\r\n"
                 "a=fmtp:97 profile-id=1;tier-flag=0;level-id=63;"
                 "sprop-vps=QAEMAf//AWAAAAMAkAAAAwAAAwA/lZgJ;"
                 "sprop-sps=QgEBAWAAAAMAkAAAAwAAAwA/oAoIDxZZWaSTK//AAEAAWoMDAwIAAAMAAgAAAwA8EA==;"
                 "sprop-pps=RAHBcrRiQA==\r\n");

  /* no sets known yet: no fmtp line at all */
  urtp_params_reset(&ps, URTP_CODEC_H265);
  check_text(&d, "v=0\r\n"
                 "o=- 7 1 IN IP6 ::1\r\n"
                 "s=uvgrtpsink\r\n"
                 "c=IN IP6 2001:db8::1\r\n"
                 "t=0 0\r\n"
                 "m=video 40000 RTP/AVP 97\r\n"
                 "a=rtpmap:97 H265/90000\r\n");
  /* a PPS only: its sprop without profile fields */
  urtp_params_add(&ps, h265_pps, sizeof(h265_pps));
  urtp_sdp_write(&d, out, sizeof(out));
  CHECK(strstr(out, "\r\na=fmtp:97 sprop-pps=RAHBcrRiQA==\r\n") != NULL);
  urtp_params_free(&ps);
}

static void test_h266_multicast(void)
{
  urtp_params_t ps;
  urtp_params_init(&ps, URTP_CODEC_H266);
  urtp_params_add(&ps, h266_sps, sizeof(h266_sps));
  urtp_params_add(&ps, h266_pps, sizeof(h266_pps));
  urtp_sdp_desc_t d = { .addr = "239.1.2.3", .port = 5006, .ttl = 4, .session_id = 1,
                        .codec = URTP_CODEC_H266, .pt = 98, .params = &ps };
  /* an IPv4 group carries its TTL; no session name gives "-" */
  check_text(&d, "v=0\r\n"
                 "o=- 1 1 IN IP4 127.0.0.1\r\n"
                 "s=-\r\n"
                 "c=IN IP4 239.1.2.3/4\r\n"
                 "t=0 0\r\n"
                 "m=video 5006 RTP/AVP 98\r\n"
                 "a=rtpmap:98 H266/90000\r\n"
                 "a=fmtp:98 profile-id=1;tier-flag=0;level-id=32;"
                 "sprop-sps=AHkAqwIggAAAgCggPEagBw==;sprop-pps=AIEAABQQHiIkH0E=\r\n");
  urtp_params_free(&ps);
}

static void test_opus(void)
{
  urtp_sdp_desc_t d = { .addr = "ff02::1234", .port = 5008, .ttl = 4, .session_id = 42,
                        .session_name = "uvgrtpsink", .codec = URTP_CODEC_OPUS, .pt = 111,
                        .channels = 2 };
  /* IPv6 groups have no TTL in c= (RFC 8866 5.7) */
  check_text(&d, "v=0\r\n"
                 "o=- 42 1 IN IP6 ::1\r\n"
                 "s=uvgrtpsink\r\n"
                 "c=IN IP6 ff02::1234\r\n"
                 "t=0 0\r\n"
                 "m=audio 5008 RTP/AVP 111\r\n"
                 "a=rtpmap:111 opus/48000/2\r\n"
                 "a=fmtp:111 sprop-stereo=1\r\n");
  d.channels = 1;
  d.addr = "127.0.0.1";
  check_text(&d, "v=0\r\n"
                 "o=- 42 1 IN IP4 127.0.0.1\r\n"
                 "s=uvgrtpsink\r\n"
                 "c=IN IP4 127.0.0.1\r\n"
                 "t=0 0\r\n"
                 "m=audio 5008 RTP/AVP 111\r\n"
                 "a=rtpmap:111 opus/48000/2\r\n"
                 "a=fmtp:111 sprop-stereo=0\r\n");
}

/* Opus of six channels (5.1), as rtpopuspay and libwebrtc name it: the
 * SDP says multiopus with the layout; reading the same fields back
 * (fmtp.h) gives the layout again; inconsistent layouts are refused. */
static void test_multiopus(void)
{
  urtp_opus_multi_t m = { .channels = 6, .streams = 4, .coupled = 2,
                          .mapping = { 0, 4, 1, 2, 3, 5 } };
  CHECK(urtp_opus_multi_valid(&m));
  urtp_sdp_desc_t d = { .addr = "127.0.0.1", .port = 5004, .session_id = 7,
                        .codec = URTP_CODEC_OPUS, .pt = 96, .channels = 6, .opus_multi = &m };
  check_text(&d, "v=0\r\n"
                 "o=- 7 1 IN IP4 127.0.0.1\r\n"
                 "s=-\r\n"
                 "c=IN IP4 127.0.0.1\r\n"
                 "t=0 0\r\n"
                 "m=audio 5004 RTP/AVP 96\r\n"
                 "a=rtpmap:96 multiopus/48000/6\r\n"
                 "a=fmtp:96 num_streams=4;coupled_streams=2;channel_mapping=0,4,1,2,3,5\r\n");

  urtp_fmtp_t f;
  char why[200];
  urtp_fmtp_init(&f, URTP_CODEC_OPUS);
  CHECK_EQ(urtp_fmtp_set(&f, "encoding-params", "6", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_set(&f, "num_streams", "4", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_set(&f, "coupled_streams", "2", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_set(&f, "channel_mapping", "0,4,1,2,3,5", why, sizeof why), 0);
  CHECK(urtp_opus_multi_valid(&f.multi));
  CHECK_MEM(f.multi.mapping, m.mapping, 6);
  CHECK_EQ(f.multi.channels, 6);
  /* five entries for six channels */
  CHECK_EQ(urtp_fmtp_set(&f, "channel_mapping", "0,1,2,3,4", why, sizeof why), -EINVAL);
  CHECK(strstr(why, "channel_mapping") != NULL);
  CHECK_EQ(urtp_fmtp_set(&f, "num_streams", "x", why, sizeof why), -EINVAL);
  urtp_fmtp_clear(&f);

  urtp_opus_multi_t bad = m;
  bad.mapping[1] = 6; /* streams + coupled = 6: 0..5 only */
  CHECK(!urtp_opus_multi_valid(&bad));
  bad = m;
  bad.coupled = 5;
  CHECK(!urtp_opus_multi_valid(&bad));
  bad = m;
  bad.mapping[1] = 255; /* a silent channel is fine */
  CHECK(urtp_opus_multi_valid(&bad));
}

/* Feedback and retransmission (RFC 4585, 5104, 4588): the AVPF profile,
 * what may be asked for, the rtx payload type tied to the media's. */
static void test_feedback_rtx(void)
{
  urtp_sdp_desc_t d = { .addr = "192.0.2.7", .port = 5004, .session_id = 9,
                        .session_name = "uvgrtpsink", .codec = URTP_CODEC_H265, .pt = 96,
                        .rtcp_port = 5005, .feedback = true, .rtx = true, .rtx_pt = 97,
                        .rtx_time_ms = 1000, .transport_cc = true, .ccfb = true };
  check_text(&d, "v=0\r\n"
                 "o=- 9 1 IN IP4 127.0.0.1\r\n"
                 "s=uvgrtpsink\r\n"
                 "c=IN IP4 192.0.2.7\r\n"
                 "t=0 0\r\n"
                 "m=video 5004 RTP/AVPF 96 97\r\n"
                 "a=rtpmap:96 H265/90000\r\n"
                 "a=rtcp:5005\r\n"
                 "a=rtcp-fb:96 nack\r\n"
                 "a=rtcp-fb:96 nack pli\r\n"
                 "a=rtcp-fb:96 ccm fir\r\n"
                 "a=rtcp-fb:96 transport-cc\r\n"
                 "a=rtcp-fb:96 ack ccfb\r\n"
                 "a=rtpmap:97 rtx/90000\r\n"
                 "a=fmtp:97 apt=96;rtx-time=1000\r\n");
  /* Opus: NACKs only; its clock */
  urtp_sdp_desc_t o = { .addr = "192.0.2.7", .port = 5006, .session_id = 9,
                        .codec = URTP_CODEC_OPUS, .pt = 111, .channels = 2, .feedback = true,
                        .rtx = true, .rtx_pt = 112 };
  check_text(&o, "v=0\r\n"
                 "o=- 9 1 IN IP4 127.0.0.1\r\n"
                 "s=-\r\n"
                 "c=IN IP4 192.0.2.7\r\n"
                 "t=0 0\r\n"
                 "m=audio 5006 RTP/AVPF 111 112\r\n"
                 "a=rtpmap:111 opus/48000/2\r\n"
                 "a=fmtp:111 sprop-stereo=1\r\n"
                 "a=rtcp-fb:111 nack\r\n"
                 "a=rtpmap:112 rtx/48000\r\n"
                 "a=fmtp:112 apt=111\r\n");
}

/* Header extensions (RFC 8285 5, 6): a=extmap per extension, entries
 * without an ID or URI left out, extmap-allow-mixed for IDs above 14. */
static void test_extmap(void)
{
  urtp_sdp_desc_t d = { .addr = "192.0.2.7", .port = 5004, .session_id = 9,
                        .codec = URTP_CODEC_H264, .pt = 96, .n_extmap = 4,
                        .extmap = { { 1, "urn:ietf:params:rtp-hdrext:ntp-64" },
                                    { 0, "urn:ietf:params:rtp-hdrext:sdes:mid" },
                                    { 3, NULL },
                                    { 5, "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01" } } };
  check_text(&d, "v=0\r\n"
                 "o=- 9 1 IN IP4 127.0.0.1\r\n"
                 "s=-\r\n"
                 "c=IN IP4 192.0.2.7\r\n"
                 "t=0 0\r\n"
                 "m=video 5004 RTP/AVP 96\r\n"
                 "a=rtpmap:96 H264/90000\r\n"
                 "a=fmtp:96 packetization-mode=1\r\n"
                 "a=extmap:1 urn:ietf:params:rtp-hdrext:ntp-64\r\n"
                 "a=extmap:5 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r\n");
  d.extmap[0].id = 20;
  d.n_extmap = 1;
  check_text(&d, "v=0\r\n"
                 "o=- 9 1 IN IP4 127.0.0.1\r\n"
                 "s=-\r\n"
                 "c=IN IP4 192.0.2.7\r\n"
                 "t=0 0\r\n"
                 "m=video 5004 RTP/AVP 96\r\n"
                 "a=rtpmap:96 H264/90000\r\n"
                 "a=fmtp:96 packetization-mode=1\r\n"
                 "a=extmap-allow-mixed\r\n"
                 "a=extmap:20 urn:ietf:params:rtp-hdrext:ntp-64\r\n");
}

static void test_sizes(void)
{
  urtp_params_t ps;
  urtp_params_init(&ps, URTP_CODEC_H265);
  urtp_params_add(&ps, h265_vps, sizeof(h265_vps));
  urtp_params_add(&ps, h265_sps, sizeof(h265_sps));
  urtp_params_add(&ps, h265_pps, sizeof(h265_pps));
  urtp_sdp_desc_t d = { .addr = "127.0.0.1", .port = 5004, .codec = URTP_CODEC_H265, .pt = 96,
                        .params = &ps };
  int n = urtp_sdp_write(&d, out, sizeof(out));
  REQUIRE(n > 0);
  char full[2048];
  memcpy(full, out, (size_t)n + 1);
  /* every size too small, the sprop lists included: the length, and "" */
  for (int cap = 0; cap <= n; cap++) {
    char small[2048];
    memset(small, 'x', sizeof(small));
    CHECK_EQ(urtp_sdp_write(&d, small, (size_t)cap), n);
    if (cap > 0)
      CHECK_EQ(small[0], '\0');
    CHECK_EQ(small[cap], 'x'); /* nothing written past cap */
  }
  CHECK_EQ(urtp_sdp_write(&d, out, (size_t)n + 1), n);
  CHECK(strcmp(out, full) == 0);
  d.addr = NULL;
  CHECK_EQ(urtp_sdp_write(&d, out, sizeof(out)), -EINVAL);
  d.addr = "";
  CHECK_EQ(urtp_sdp_write(&d, out, sizeof(out)), -EINVAL);
  urtp_params_free(&ps);
}

/* The receiving side's reading of fmtp (fmtp.h): parameter sets in
 * decoding order whatever order they come in, streams this library cannot
 * read refused by name, bad values refused, unknown names ignored. */
static void test_fmtp_rules(void)
{
  urtp_fmtp_t f;
  char why[200];
  uint8_t sets[256];
  urtp_fmtp_init(&f, URTP_CODEC_H265);
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-pps", "RAHBcrRiQA==", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_set(&f, "x-unknown", "1", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-vps", "QAEMAf//AWAAAAMAkAAAAwAAAwA/lZgJ", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-max-don-diff", "2", why, sizeof why), 0);
  CHECK(f.donl);
  size_t n = urtp_fmtp_params(&f, NULL);
  REQUIRE(n == 4 + sizeof h265_vps + 4 + sizeof h265_pps);
  CHECK_EQ(urtp_fmtp_params(&f, sets), n);
  static const uint8_t sc[] = { 0, 0, 0, 1 };
  CHECK_MEM(sets, sc, 4);
  CHECK_MEM(sets + 4, h265_vps, sizeof h265_vps);
  CHECK_MEM(sets + 8 + sizeof h265_vps, h265_pps, sizeof h265_pps);
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-sps", "not base64!", why, sizeof why), -EINVAL);
  CHECK(strstr(why, "sprop-sps") != NULL);
  urtp_fmtp_clear(&f);
  CHECK_EQ(urtp_fmtp_params(&f, NULL), 0);

  urtp_fmtp_init(&f, URTP_CODEC_H264);
  CHECK_EQ(urtp_fmtp_set(&f, "packetization-mode", "1", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_set(&f, "packetization-mode", "2", why, sizeof why), -ENOTSUP);
  CHECK(strstr(why, "packetization-mode=2") != NULL);
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-max-don-diff", "1", why, sizeof why), -ENOTSUP);
  CHECK(strstr(why, "sprop-max-don-diff") != NULL);
  /* H.265's names mean nothing for H.264 */
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-vps", "QAEMAf//AWAAAAMAkAAAAwAAAwA/lZgJ", why, sizeof why), 0);
  CHECK_EQ(urtp_fmtp_params(&f, NULL), 0);
  urtp_fmtp_clear(&f);

  urtp_fmtp_init(&f, URTP_CODEC_OPUS);
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-stereo", "0", why, sizeof why), 0);
  CHECK_EQ(f.channels, 1);
  CHECK_EQ(urtp_fmtp_set(&f, "sprop-maxcapturerate", "16000", why, sizeof why), 0);
  CHECK_EQ(f.rate, 16000);
  urtp_fmtp_clear(&f);
}

int main(void)
{
  TAP_RUN(test_h264_ipv4);
  TAP_RUN(test_multiopus);
  TAP_RUN(test_h265_ipv6);
  TAP_RUN(test_h266_multicast);
  TAP_RUN(test_opus);
  TAP_RUN(test_feedback_rtx);
  TAP_RUN(test_extmap);
  TAP_RUN(test_sizes);
  TAP_RUN(test_fmtp_rules);
  return tap_done();
}
