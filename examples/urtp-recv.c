/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp-recv: receives an RTP stream with lib/ alone (no GStreamer) and
 * writes its access units to a file in Annex-B byte-stream form, as a
 * decoder or `ffplay` reads it. The receiving half of uvgRTP-style use of
 * the library: a receiver (urtp/urtp.h) that owns its sockets and RTCP.
 *
 *   urtp-recv --port P --output FILE [--codec h265|h264|h266]
 *             [--address A] [--pt N] [--frames N] [--idle-ms MS]
 *             [--srtp-key HEX [--srtp-profile NAME] | --zrtp [--zrtp-cache FILE]]
 *
 * It stops after --frames access units, or once the stream has been idle
 * for --idle-ms after the first packet (default 2000), then prints what it
 * received.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urtp/urtp.h>

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
          "                 [--srtp-key HEX [--srtp-profile NAME] | --zrtp [--zrtp-cache FILE]]\n"
          "Receives RTP with lib/ alone and writes the access units as Annex-B.\n"
          "NAME: AES_CM_128_HMAC_SHA1_80 (default), AEAD_AES_128_GCM, ...\n"
          "--zrtp: the keys agreed with the sender (ZRTP); the SAS is printed.\n");
}

int main(int argc, char **argv)
{
  const char *address = "0.0.0.0", *output = NULL, *codec_name = "h265";
  const char *srtp_key = NULL, *srtp_profile = NULL, *zrtp_cache = NULL;
  bool zrtp = false;
  int port = 0, pt = -1;
  long frames_max = 0, idle_ms = 2000;
  static const struct option opts[] = {
    { "port", required_argument, NULL, 'p' },   { "output", required_argument, NULL, 'o' },
    { "codec", required_argument, NULL, 'c' },  { "address", required_argument, NULL, 'a' },
    { "pt", required_argument, NULL, 't' },     { "frames", required_argument, NULL, 'n' },
    { "idle-ms", required_argument, NULL, 'i' }, { "srtp-key", required_argument, NULL, 'k' },
    { "srtp-profile", required_argument, NULL, 'r' }, { "help", no_argument, NULL, 'h' },
    { "zrtp", no_argument, NULL, 'z' }, { "zrtp-cache", required_argument, NULL, 'C' },
    { NULL, 0, NULL, 0 },
  };
  int o;
  while ((o = getopt_long(argc, argv, "p:o:c:a:t:n:i:k:r:hzC:", opts, NULL)) != -1) {
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
    case 'z': zrtp = true; break;
    case 'C': zrtp_cache = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  urtp_codec_t codec;
  if (port <= 0 || port > 65535 || !output || urtp_codec_from_name(codec_name, &codec) < 0 ||
      codec == URTP_CODEC_OPUS || idle_ms <= 0) {
    usage(stderr);
    return 2;
  }

  urtp_recv_config_t cfg;
  urtp_recv_config_init(&cfg, codec);
  cfg.port = (uint16_t)port;
  cfg.bind_addr = address;
  cfg.pt = pt;
  cfg.srtp_key = srtp_key;
  cfg.srtp_profile = srtp_profile;
  cfg.zrtp = zrtp;
  cfg.zrtp_cache = zrtp_cache;
  urtp_receiver_t *r;
  int rc = urtp_receiver_open(&r, &cfg);
  if (rc < 0) {
    fprintf(stderr, "urtp-recv: cannot receive on %s:%d: %s\n", address, port,
            rc == -EINVAL ? "bad --srtp-key or --srtp-profile (not with --zrtp)" : strerror(-rc));
    return rc == -EINVAL ? 2 : 1;
  }
  FILE *out = strcmp(output, "-") == 0 ? stdout : fopen(output, "wb");
  if (!out) {
    fprintf(stderr, "urtp-recv: cannot write %s: %s\n", output, strerror(errno));
    return 1;
  }

  /* until --frames, or --idle-ms without an access unit once one came */
  uint64_t frames = 0, bytes = 0, started = 0, last = 0;
  urtp_frame_t f;
  while (!frames_max || frames < (uint64_t)frames_max) {
    int n = urtp_receiver_pull(r, &f, started ? (int)idle_ms : -1);
    if (n < 0)
      fprintf(stderr, "urtp-recv: receive failed: %s\n", strerror(-n));
    if (n <= 0)
      break;
    last = now_ns();
    if (!started)
      started = last;
    if (f.params)
      fwrite(f.params, 1, f.params_len, out);
    fwrite(f.data, 1, f.len, out);
    bytes += f.len;
    frames++;
  }
  if (out != stdout)
    fclose(out);

  urtp_receiver_stats_t st;
  urtp_receiver_stats(r, &st);
  urtp_receiver_close(r);
  double secs = started ? (double)(last - started) / 1e9 : 0;
  printf("urtp-recv: %llu access units, %llu bytes in %.2f s; %llu packets, %llu lost, "
         "%llu access units dropped, %llu source changes, %llu kernel drops\n",
         (unsigned long long)frames, (unsigned long long)bytes, secs,
         (unsigned long long)st.packets, (unsigned long long)st.lost,
         (unsigned long long)st.frames_dropped, (unsigned long long)st.sender_changes,
         (unsigned long long)st.kernel_drops);
  if (st.sender_reports)
    printf("urtp-recv: RTCP: %llu sender reports from %s, %llu receiver reports sent\n",
           (unsigned long long)st.sender_reports, st.cname, (unsigned long long)st.rtcp_sent);
  if (st.security == URTP_SECURITY_ZRTP_SECURE)
    printf("urtp-recv: ZRTP secure, SAS %s\n", st.sas);
  else if (zrtp)
    printf("urtp-recv: ZRTP not secure\n");
  return frames > 0 ? 0 : 1;
}
