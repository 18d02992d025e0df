/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp-send - streams an H.265 (or H.264, H.266) Annex-B file as RTP with
 * lib/ alone, no GStreamer: the file is split into access units
 * (urtp_au_length), each is stamped at the frame rate and handed to a
 * sender (urtp/urtp.h), paced in real time.
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

#include <urtp/urtp.h>

static void usage(FILE *f)
{
  fprintf(f,
          "usage: urtp-send [options] FILE\n"
          "Streams an Annex-B video file as RTP over UDP, one access unit per frame.\n"
          "\n"
          "  --host ADDR          receiver address (default 127.0.0.1)\n"
          "  --port N             receiver port (default 5004)\n"
          "  --client HOST:PORT   another receiver, sent the same packets (repeatable)\n"
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
          "  --srtp-profile NAME  another profile: AEAD_AES_128_GCM, ...\n"
          "  --zrtp               agree the SRTP keys with the receiver (ZRTP); sending\n"
          "                       starts once they are agreed, and the SAS is printed\n"
          "  --zrtp-cache FILE    ZRTP's ZID and retained secrets (default none)\n"
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

/* Writes the SDP whenever it changes (the parameter sets come with the
 * first access unit that carries them). */
static int write_sdp(urtp_sender_t *s, const char *path, char *last, size_t cap)
{
  char text[4096];
  int n = path ? urtp_sender_sdp(s, text, sizeof text) : 0;
  if (n <= 0 || (strlen(last) == (size_t)n && memcmp(last, text, (size_t)n) == 0))
    return 0;
  FILE *f = fopen(path, "w");
  if (!f || fwrite(text, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0) {
    fprintf(stderr, "urtp-send: %s: %s\n", path, strerror(errno));
    return -1;
  }
  snprintf(last, cap, "%s", text);
  return 0;
}

/* ZRTP: what is pushed before the keys are agreed is held back, so wait
 * for them (the receiver answers the sender's Hello). */
static int wait_secure(urtp_sender_t *s, int timeout_ms)
{
  urtp_sender_stats_t st;
  for (int waited = 0;; waited += 10) {
    urtp_sender_stats(s, &st);
    if (st.security == URTP_SECURITY_ZRTP_SECURE)
      break;
    if (st.security == URTP_SECURITY_ZRTP_FAILED || waited >= timeout_ms) {
      fprintf(stderr, "urtp-send: ZRTP: %s\n",
              st.security == URTP_SECURITY_ZRTP_FAILED ? "failed" : "no answer");
      return -1;
    }
    struct timespec ts = { 0, 10000000 };
    nanosleep(&ts, NULL);
  }
  /* to be compared by voice with the receiver's */
  fprintf(stderr, "urtp-send: ZRTP secure, SAS %s\n", st.sas);
  return 0;
}

int main(int argc, char **argv)
{
  const char *host = "127.0.0.1", *sdp = NULL, *key_hex = NULL, *profile = NULL;
  const char *zrtp_cache = NULL;
  const char *clients[16];
  int nclients = 0;
  long port = 5004, mtu = 1400, pt = 96, interval = -1;
  double fps = 30;
  bool fast = false, aggregate = false, thread = false, zrtp = false;
  int64_t ssrc = -1;
  urtp_codec_t codec = URTP_CODEC_H265;
  static const struct option opts[] = {
    { "host", required_argument, NULL, 'h' }, { "port", required_argument, NULL, 'p' },
    { "codec", required_argument, NULL, 'c' }, { "fps", required_argument, NULL, 'f' },
    { "fast", no_argument, NULL, 'F' }, { "mtu", required_argument, NULL, 'm' },
    { "pt", required_argument, NULL, 't' }, { "ssrc", required_argument, NULL, 's' },
    { "config-interval", required_argument, NULL, 'i' },
    { "aggregate", no_argument, NULL, 'a' }, { "send-thread", no_argument, NULL, 'T' },
    { "sdp", required_argument, NULL, 'S' }, { "srtp-key", required_argument, NULL, 'k' },
    { "srtp-profile", required_argument, NULL, 'P' }, { "zrtp", no_argument, NULL, 'z' },
    { "zrtp-cache", required_argument, NULL, 'C' },
    { "client", required_argument, NULL, 'L' },
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
    case 's': ssrc = (int64_t)strtoul(optarg, NULL, 0); break;
    case 'i': interval = strtol(optarg, NULL, 10); break;
    case 'a': aggregate = true; break;
    case 'T': thread = true; break;
    case 'S': sdp = optarg; break;
    case 'k': key_hex = optarg; break;
    case 'P': profile = optarg; break;
    case 'z': zrtp = true; break;
    case 'C': zrtp_cache = optarg; break;
    case 'L':
      if (nclients == 16 || !strrchr(optarg, ':')) {
        fprintf(stderr, "urtp-send: --client %s: HOST:PORT, at most 16\n", optarg);
        return 2;
      }
      clients[nclients++] = optarg;
      break;
    case 'H': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind + 1 != argc || port <= 0 || port > 65535 || !(fps > 0) || pt < 0 || pt > 127 ||
      mtu <= 0) {
    usage(stderr);
    return 2;
  }

  /* the whole file, mapped */
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

  urtp_send_config_t cfg;
  urtp_send_config_init(&cfg, codec);
  cfg.host = host;
  cfg.port = (uint16_t)port;
  cfg.pt = (int)pt;
  cfg.mtu = (size_t)mtu;
  cfg.ssrc = ssrc;
  cfg.config_interval = (int)interval;
  cfg.aggregate = aggregate;
  cfg.send_thread = thread;
  cfg.srtp_key = key_hex;
  cfg.srtp_profile = profile;
  cfg.zrtp = zrtp;
  cfg.zrtp_cache = zrtp_cache;
  urtp_sender_t *s;
  int r = urtp_sender_open(&s, &cfg);
  if (r < 0) {
    fprintf(stderr, "urtp-send: to %s port %ld: %s\n", host, port,
            r == -EINVAL ? "a bad option (--srtp-key? not with --zrtp)" : strerror(-r));
    return r == -EINVAL ? 2 : 1;
  }

  /* more receivers of the same packets (fan-out) */
  for (int i = 0; i < nclients; i++) {
    char h[256];
    const char *colon = strrchr(clients[i], ':');
    snprintf(h, sizeof h, "%.*s", (int)(colon - clients[i]), clients[i]);
    if ((r = urtp_sender_add_client(s, h, (uint16_t)strtol(colon + 1, NULL, 10))) < 0) {
      fprintf(stderr, "urtp-send: --client %s: %s\n", clients[i], strerror(-r));
      urtp_sender_close(s);
      return 2;
    }
  }

  if (zrtp && wait_secure(s, 10000) < 0) {
    urtp_sender_close(s);
    return 1;
  }

  char sdp_text[4096] = "";
  uint64_t n = 0;
  const int64_t t0 = now_ns();
  int status = 0;
  for (size_t at = 0, len; at < (size_t)sb.st_size && status == 0; at += len, n++) {
    len = urtp_au_length(codec, file + at, (size_t)sb.st_size - at);
    uint64_t pts = (uint64_t)((double)n * 1e9 / fps);
    if (!fast)
      sleep_until(t0 + (int64_t)pts);
    if ((r = urtp_sender_push(s, file + at, len, pts)) < 0) {
      fprintf(stderr, "urtp-send: access unit %" PRIu64 ": %s\n", n, strerror(-r));
      status = 1;
    } else if (write_sdp(s, sdp, sdp_text, sizeof sdp_text) < 0) {
      status = 1;
    }
  }

  urtp_sender_stats_t st;
  urtp_sender_stats(s, &st);
  if ((r = urtp_sender_close(s)) < 0 && status == 0) {
    fprintf(stderr, "urtp-send: %s\n", strerror(-r));
    status = 1;
  }
  if (st.receivers)
    fprintf(stderr, "urtp-send: RTCP: %" PRIu64 " sender reports, %u receivers, round trip %.3f ms, %"
            PRId64 " lost\n", st.rtcp_sent, st.receivers, (double)st.rtt_ns / 1e6, st.lost);
  fprintf(stderr, "urtp-send: %" PRIu64 " access units, %" PRIu64 " packets, %" PRIu64
          " bytes, %" PRIu64 " send errors, %.2f s\n", st.access_units, st.packets, st.bytes,
          st.send_errors, (double)(now_ns() - t0) / 1e9);
  munmap((void *)file, (size_t)sb.st_size);
  close(fd);
  return status;
}
