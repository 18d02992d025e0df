/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp-recv: receives an RTP stream with lib/ alone (no GStreamer) and
 * writes its access units to a file in Annex-B byte-stream form, as a
 * decoder or `ffplay` reads it. The receiving half of uvgRTP-style use of
 * the library: a socket (net.h), a receiving stream (recvstream.h), a loop.
 *
 *   urtp-recv --port P --output FILE [--codec h265|h264|h266]
 *             [--address A] [--pt N] [--frames N] [--idle-ms MS]
 *             [--srtp-key HEX [--srtp-profile NAME]]
 *
 * It stops after --frames access units, or once the stream has been idle
 * for --idle-ms after the first packet (default 2000), then prints what it
 * received.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "urtp/net.h"
#include "urtp/recvstream.h"
#include "urtp/rtcpio.h"
#include "urtp/srtp.h"

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: urtp-recv --port P --output FILE [--codec h265|h264|h266] [--address A]\n"
          "                 [--pt N] [--frames N] [--idle-ms MS]\n"
          "                 [--srtp-key HEX [--srtp-profile NAME]]\n"
          "Receives RTP with lib/ alone and writes the access units as Annex-B.\n"
          "NAME: AES_CM_128_HMAC_SHA1_80 (default), AEAD_AES_128_GCM, ...\n");
}

#ifdef URTP_HAVE_SRTP
static int profile_from_name(const char *name, urtp_srtp_profile_t *out)
{
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
    const char *n = urtp_srtp_profile_name((urtp_srtp_profile_t)p);
    if (n && strcmp(n, name) == 0) {
      *out = (urtp_srtp_profile_t)p;
      return 0;
    }
  }
  return -EINVAL;
}
#endif

int main(int argc, char **argv)
{
  const char *address = "0.0.0.0", *output = NULL, *codec_name = "h265";
  const char *srtp_key = NULL, *srtp_profile = "AES_CM_128_HMAC_SHA1_80";
  int port = 0, pt = -1;
  long frames_max = 0, idle_ms = 2000;
  static const struct option opts[] = {
    { "port", required_argument, NULL, 'p' },   { "output", required_argument, NULL, 'o' },
    { "codec", required_argument, NULL, 'c' },  { "address", required_argument, NULL, 'a' },
    { "pt", required_argument, NULL, 't' },     { "frames", required_argument, NULL, 'n' },
    { "idle-ms", required_argument, NULL, 'i' }, { "srtp-key", required_argument, NULL, 'k' },
    { "srtp-profile", required_argument, NULL, 'r' }, { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int o;
  while ((o = getopt_long(argc, argv, "p:o:c:a:t:n:i:k:r:h", opts, NULL)) != -1) {
    switch (o) {
    case 'p': port = atoi(optarg); break;
    case 'o': output = optarg; break;
    case 'c': codec_name = optarg; break;
    case 'a': address = optarg; break;
    case 't': pt = atoi(optarg); break;
    case 'n': frames_max = atol(optarg); break;
    case 'i': idle_ms = atol(optarg); break;
    case 'k': srtp_key = optarg; break;
    case 'r': srtp_profile = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  urtp_codec_t codec;
  if (port <= 0 || port > 65535 || !output || urtp_codec_from_name(codec_name, &codec) < 0 ||
      codec == URTP_CODEC_OPUS) {
    usage(stderr);
    return 2;
  }

  urtp_recvstream_config_t cfg = {
    .codec = codec,
    .pt = pt,
    .ssrc = -1,
    .latency = 50000000,
    .loss_policy = URTP_LOSS_DROP_AU,
  };
  urtp_srtp_config_t srtp = { .dir = URTP_SRTP_INBOUND, .any_ssrc = true, .replay_window = 1024 };
  uint8_t key[URTP_SRTP_MAX_KEY_LEN];
  if (srtp_key) {
#ifdef URTP_HAVE_SRTP
    char why[160];
    if (profile_from_name(srtp_profile, &srtp.profile) < 0 ||
        urtp_srtp_key_from_hex(srtp_key, srtp.profile, key, why, sizeof why) < 0) {
      fprintf(stderr, "urtp-recv: bad --srtp-key or --srtp-profile\n");
      return 2;
    }
    srtp.key = key;
    srtp.key_len = urtp_srtp_key_len(srtp.profile);
    cfg.srtp = &srtp;
#else
    (void)srtp;
    (void)key;
    (void)srtp_profile;
    fprintf(stderr, "urtp-recv: built without SRTP\n");
    return 2;
#endif
  }

  urtp_sock_t sock;
  urtp_sock_config_t sc = {
    .bind_addr = address,
    .bind_port = (uint16_t)port,
    .dscp = -1,
    .rcvbuf = 32 << 20,
    .reuse = true,
    .rx_mode = URTP_IO_AUTO,
  };
  int r = urtp_sock_open(&sock, &sc);
  if (r < 0) {
    fprintf(stderr, "urtp-recv: cannot bind %s:%d: %s\n", address, port, strerror(-r));
    return 1;
  }
  urtp_rx_t rx;
  urtp_recvstream_t *stream;
  if ((r = urtp_rx_init(&rx, 64, 65536)) < 0 || (r = urtp_recvstream_new(&cfg, &stream)) < 0) {
    fprintf(stderr, "urtp-recv: %s\n", strerror(-r));
    return 1;
  }
  /* RTCP on port + 1 (SRTCP with --srtp-key): receiver reports go back to
   * where the sender's reports come from */
  urtp_rtcpio_t rtcp;
  urtp_rtcpio_config_t rc = { .bind_addr = address, .bind_port = (uint16_t)(port + 1),
                              .reuse = true };
  bool rtcp_on = urtp_rtcpio_open(&rtcp, &rc, now_ns()) == 0;
  if (rtcp_on)
    sock.watch_fd = rtcp.sock.fd;
  FILE *out = strcmp(output, "-") == 0 ? stdout : fopen(output, "wb");
  if (!out) {
    fprintf(stderr, "urtp-recv: cannot write %s: %s\n", output, strerror(errno));
    return 1;
  }

  uint64_t frames = 0, bytes = 0, started = 0, last = now_ns();
  for (;;) {
    /* wait no longer than the stream's next deadline (a gap given up) */
    uint64_t t = now_ns(), deadline = urtp_recvstream_deadline(stream);
    if (rtcp_on && urtp_rtcpio_deadline(&rtcp) < deadline)
      deadline = urtp_rtcpio_deadline(&rtcp);
    int wait = deadline == UINT64_MAX ? 100 : deadline > t ? (int)((deadline - t) / 1000000) + 1 : 0;
    int n = urtp_sock_recv(&sock, &rx, wait < 100 ? wait : 100);
    if (n < 0 && n != -EINTR) {
      fprintf(stderr, "urtp-recv: receive failed: %s\n", strerror(-n));
      break;
    }
    t = now_ns();
    if (n > 0) {
      urtp_recvstream_push_rx(stream, &sock, &rx, (size_t)n, t);
      last = t;
      if (!started)
        started = t;
    }
    urtp_recvstream_expire(stream, t);
    if (rtcp_on)
      urtp_recvstream_rtcp_service(stream, &rtcp, t, t);

    urtp_recvstream_frame_t f;
    while (urtp_recvstream_pop(stream, &f)) {
      size_t plen;
      const uint8_t *params = urtp_recvstream_params(stream, &plen);
      if ((f.flags & URTP_FRAME_PARAMS) && params)
        fwrite(params, 1, plen, out);
      fwrite(f.au.data, 1, f.au.len, out);
      bytes += f.au.len;
      frames++;
      urtp_depay_release(f.au.data);
    }
    if (frames_max && frames >= (uint64_t)frames_max)
      break;
    if (started && t - last >= (uint64_t)idle_ms * 1000000u)
      break;
  }
  if (out != stdout)
    fclose(out);

  urtp_recvstream_stats_t st;
  if (rtcp_on) {
    uint8_t bye[512];
    int len = urtp_recvstream_rtcp_report(stream, now_ns(), true, bye, sizeof bye);
    if (len > 0)
      urtp_rtcpio_send(&rtcp, bye, (size_t)len, now_ns());
    urtp_rtcpio_close(&rtcp);
  }
  urtp_recvstream_stats(stream, &st);
  double secs = started ? (double)(last - started) / 1e9 : 0;
  printf("urtp-recv: %llu access units, %llu bytes in %.2f s; %llu packets, %llu lost, "
         "%llu access units dropped, %llu source changes, %llu kernel drops\n",
         (unsigned long long)frames, (unsigned long long)bytes, secs,
         (unsigned long long)st.depay.packets, (unsigned long long)st.depay.seq.lost,
         (unsigned long long)st.depay.dropped_aus, (unsigned long long)st.source.changes,
         (unsigned long long)st.kernel_drops);
  if (st.rtcp_sr)
    printf("urtp-recv: RTCP: %llu sender reports from %s, %llu receiver reports sent\n",
           (unsigned long long)st.rtcp_sr, st.cname, (unsigned long long)st.rtcp_sent);
  urtp_recvstream_free(stream);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&sock);
  return frames > 0 ? 0 : 1;
}
