/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp-send - streams an H.265 (or H.264, H.266) Annex-B file as RTP with
 * lib/ alone, no GStreamer: the file is split into access units
 * (lib/urtp/au.h), each is stamped at the frame rate and handed to the
 * sending stream (lib/urtp/sendstream.h), paced in real time.
 *
 *   urtp-send --port 5004 --sdp stream.sdp movie.h265
 *   ffplay -protocol_whitelist file,udp,rtp stream.sdp
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "urtp/au.h"
#include "urtp/net.h"
#include "urtp/scl.h"
#include "urtp/sdp.h"
#include "urtp/rtcpio.h"
#include "urtp/sendstream.h"
#include "urtp/srtp.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: urtp-send [options] FILE\n"
          "Streams an Annex-B video file as RTP over UDP, one access unit per frame.\n"
          "\n"
          "  --host ADDR          receiver address (default 127.0.0.1)\n"
          "  --port N             receiver port (default 5004)\n"
          "  --codec NAME         h265 (default), h264 or h266\n"
          "  --fps R              frame rate for RTP timestamps and pacing (default 30)\n"
          "  --fast               send as fast as the socket takes it, no pacing\n"
          "  --mtu N              largest RTP packet (default 1400)\n"
          "  --pt N               payload type (default 96)\n"
          "  --ssrc N             SSRC (default random)\n"
          "  --config-interval N  parameter sets before IRAP pictures: -1 every one\n"
          "                       lacking them (default), 0 never, N seconds\n"
          "  --aggregate          aggregation packets for small NAL units\n"
          "  --send-thread        send from a thread of its own\n"
          "  --sdp FILE           write the session description there\n"
          "  --srtp-key HEX       send SRTP, AES_CM_128_HMAC_SHA1_80 (60 hex digits:\n"
          "                       key and salt, as srtpenc's key)\n"
          "  --help               this text\n");
}

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
  struct timespec ts = { (time_t)(t / 1000000000), (long)(t % 1000000000) };
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

/* Writes the SDP when the parameter sets are first complete or change. */
static int write_sdp(urtp_sendstream_t *ss, const char *path, const char *host, uint16_t port,
                     unsigned *written)
{
  const urtp_params_t *ps = urtp_sendstream_params(ss);
  if (!path || *written == ps->serial + 1 || !urtp_params_complete(ps))
    return 0;
  urtp_sdp_desc_t d = { .addr = host, .port = port, .ttl = 16, .session_name = "urtp-send" };
  char text[4096];
  int n = urtp_sendstream_sdp(ss, &d, text, sizeof(text));
  if (n < 0 || (size_t)n >= sizeof(text)) {
    fprintf(stderr, "urtp-send: SDP: %s\n", n < 0 ? strerror(-n) : "too long");
    return -1;
  }
  FILE *f = fopen(path, "w");
  if (!f || fwrite(text, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0) {
    fprintf(stderr, "urtp-send: %s: %s\n", path, strerror(errno));
    return -1;
  }
  *written = ps->serial + 1;
  return 0;
}

/* RTCP's clock: the RTP timestamp of this moment is the one an access unit
 * due now gets (ts = n * 90000 / fps, due at t0 + n / fps). */
static int64_t rtcp_t0;

static bool rtcp_clock(void *user, uint64_t *ntp, uint32_t *rtp_ts)
{
  (void)user;
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  int64_t since = now_ns() - rtcp_t0;
  *ntp = urtp_ntp_from_unix_ns((uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec);
  *rtp_ts = (uint32_t)(since / 1000 * 9 / 100); /* 90 kHz */
  return since >= 0;
}

int main(int argc, char **argv)
{
  const char *host = "127.0.0.1", *sdp = NULL, *key_hex = NULL;
  long port = 5004, mtu = 1400, pt = 96, interval = -1;
  double fps = 30;
  bool fast = false, aggregate = false, thread = false, have_ssrc = false;
  uint32_t ssrc = 0;
  urtp_codec_t codec = URTP_CODEC_H265;
  static const struct option opts[] = {
    { "host", required_argument, NULL, 'h' }, { "port", required_argument, NULL, 'p' },
    { "codec", required_argument, NULL, 'c' }, { "fps", required_argument, NULL, 'f' },
    { "fast", no_argument, NULL, 'F' }, { "mtu", required_argument, NULL, 'm' },
    { "pt", required_argument, NULL, 't' }, { "ssrc", required_argument, NULL, 's' },
    { "config-interval", required_argument, NULL, 'i' },
    { "aggregate", no_argument, NULL, 'a' }, { "send-thread", no_argument, NULL, 'T' },
    { "sdp", required_argument, NULL, 'S' }, { "srtp-key", required_argument, NULL, 'k' },
    { "help", no_argument, NULL, 'H' }, { NULL, 0, NULL, 0 },
  };
  int o;
  while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (o) {
    case 'h': host = optarg; break;
    case 'p': port = strtol(optarg, NULL, 10); break;
    case 'c':
      if (urtp_codec_from_name(optarg, &codec) < 0 || codec == URTP_CODEC_OPUS) {
        fprintf(stderr, "urtp-send: unknown video codec '%s'\n", optarg);
        return 2;
      }
      break;
    case 'f': fps = strtod(optarg, NULL); break;
    case 'F': fast = true; break;
    case 'm': mtu = strtol(optarg, NULL, 10); break;
    case 't': pt = strtol(optarg, NULL, 10); break;
    case 's': ssrc = (uint32_t)strtoul(optarg, NULL, 0); have_ssrc = true; break;
    case 'i': interval = strtol(optarg, NULL, 10); break;
    case 'a': aggregate = true; break;
    case 'T': thread = true; break;
    case 'S': sdp = optarg; break;
    case 'k': key_hex = optarg; break;
    case 'H': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind + 1 != argc || port <= 0 || port > 65535 || !(fps > 0) || pt < 0 || pt > 127) {
    usage(stderr);
    return 2;
  }

  /* the whole file, mapped: every access unit stays valid until the end,
   * so the stream's holds need no release */
  int fd = open(argv[optind], O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size == 0) {
    fprintf(stderr, "urtp-send: %s: %s\n", argv[optind], fd < 0 ? strerror(errno) : "empty");
    return 1;
  }
  const uint8_t *file = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (file == MAP_FAILED) {
    perror("urtp-send: mmap");
    return 1;
  }
  const uint8_t *end = file + sb.st_size;

  urtp_sock_t sock;
  urtp_sock_config_t sc = { .remote_addr = host, .remote_port = (uint16_t)port,
                            .sndbuf = 4 << 20, .dscp = -1 };
  int r = urtp_sock_open(&sock, &sc);
  if (r < 0) {
    fprintf(stderr, "urtp-send: socket to %s port %ld: %s\n", host, port, strerror(-r));
    return 1;
  }
  if (!have_ssrc) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ssrc = (uint32_t)(ts.tv_nsec ^ (ts.tv_sec << 16) ^ getpid());
  }
  urtp_sendstream_format_t fmt = { .codec = codec, .pt = (uint8_t)pt, .mtu = (size_t)mtu,
                                   .aggregate = aggregate, .pad_fragments = true };
  urtp_sendstream_config_t cfg = { .ssrc = ssrc, .seq_start = (uint16_t)(ssrc >> 7),
                                   .config_interval = (int)interval, .send_thread = thread,
                                   .format = &fmt };
  urtp_srtp_config_t srtp = { .profile = URTP_SRTP_AES_CM_128_HMAC_SHA1_80 };
  uint8_t key[URTP_SRTP_MAX_KEY_LEN];
  if (key_hex) {
#ifdef URTP_HAVE_SRTP
    char why[160];
    if (urtp_srtp_key_from_hex(key_hex, srtp.profile, key, why, sizeof(why)) < 0) {
      fprintf(stderr, "urtp-send: --srtp-key: %s\n", why);
      return 2;
    }
    srtp.key = key;
    srtp.key_len = urtp_srtp_key_len(srtp.profile);
    cfg.srtp = &srtp;
#else
    (void)key;
    (void)srtp;
    fprintf(stderr, "urtp-send: built without SRTP\n");
    return 2;
#endif
  }
  urtp_sendstream_t *ss;
  if ((r = urtp_sendstream_new(&ss, &sock, &cfg)) < 0) {
    fprintf(stderr, "urtp-send: %s\n", strerror(-r));
    return 1;
  }

  /* RTCP: sender reports to port + 1, read receiver reports there (SRTCP
   * with --srtp-key) */
  urtp_rtcpio_t rtcp;
  urtp_rtcpio_config_t rc = { .remote_addr = host, .remote_port = (uint16_t)(port + 1),
                              .we_send = true };
  bool rtcp_on = urtp_rtcpio_open(&rtcp, &rc, (uint64_t)now_ns()) == 0;
  rtcp_t0 = now_ns();
  if (rtcp_on && urtp_sendstream_rtcp_start(ss, &rtcp, rtcp_clock, NULL, NULL) < 0) {
    urtp_rtcpio_close(&rtcp);
    rtcp_on = false;
  }

  /* access units: from the start code of the NAL unit that begins one to
   * the start code of the NAL unit that begins the next */
  urtp_au_split_t split;
  urtp_au_split_init(&split, codec);
  urtp_scl_iter_t it;
  urtp_scl_iter_init(&it, file, (size_t)sb.st_size);
  urtp_nal_t nal;
  const uint8_t *au = NULL;
  uint64_t n = 0;
  unsigned sdp_written = 0;
  const int64_t t0 = rtcp_t0;
  int status = 0;
  for (bool more = true; more && status == 0;) {
    more = urtp_scl_next(&it, &nal);
    const uint8_t *sc_at = more ? nal.data - 3 : end;
    if (more && !urtp_au_split_next(&split, nal.data, nal.len)) {
      if (!au)
        au = sc_at;
      continue;
    }
    if (au) {
      int64_t t = (int64_t)((double)n * 1e9 / fps);
      if (!fast)
        sleep_until(t0 + t);
      uint32_t ts = (uint32_t)((double)n * 90000.0 / fps + 0.5);
      r = urtp_sendstream_push(ss, au, (size_t)(sc_at - au), ts, t, 0, NULL);
      if (r >= 0)
        r = urtp_sendstream_flush(ss);
      if (r < 0) {
        fprintf(stderr, "urtp-send: access unit %" PRIu64 ": %s\n", n, strerror(-r));
        status = 1;
      } else if (write_sdp(ss, sdp, host, (uint16_t)port, &sdp_written) < 0) {
        status = 1;
      }
      n++;
    }
    au = sc_at;
  }
  if (status == 0 && (r = urtp_sendstream_drain(ss)) < 0) {
    fprintf(stderr, "urtp-send: %s\n", strerror(-r));
    status = 1;
  }

  if (rtcp_on)
    urtp_sendstream_rtcp_stop(ss, true); /* a last report with BYE */
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  if (rtcp_on) {
    urtp_rtcpio_close(&rtcp);
    if (st.rr_blocks)
      fprintf(stderr, "urtp-send: RTCP: %" PRIu64 " sender reports, %" PRIu64
              " receiver report blocks, round trip %.3f ms, %d lost\n",
              st.rtcp_sent, st.rr_blocks, (double)st.rtt_ns / 1e6, (int)st.rr.lost);
  }
  fprintf(stderr,
          "urtp-send: %" PRIu64 " access units, %" PRIu64 " packets, %" PRIu64
          " bytes, %" PRIu64 " send errors, %" PRIu64 " sends (%s), %.2f s\n",
          st.access_units, st.packets, st.bytes, st.send_errors, st.syscalls,
          urtp_io_mode_name(st.tx_mode), (double)(now_ns() - t0) / 1e9);
  urtp_sendstream_free(ss);
  urtp_sock_close(&sock);
  munmap((void *)file, (size_t)sb.st_size);
  close(fd);
  return status;
}
