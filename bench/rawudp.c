/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rawudp.c - the raw UDP ceiling: how fast can the kernel move the packets a
 * 4K H.265 stream turns into, with nothing but system calls around them?
 *
 *   rawudp recv --port P [--bind ADDR] [--mode mmsg|gro] [--rcvbuf BYTES]
 *   rawudp send --host H --port P [--mode mmsg|gso] [--seconds S] [--fps F]
 *               [--mtu BYTES] [--sndbuf BYTES] [--codec h264|h265|h266]
 *
 * The sender cuts the access units of bench/augen.c into datagrams of `mtu`
 * bytes (the size an RTP packetizer with the same MTU makes; the last of an
 * access unit is shorter), each a 12-byte header (sequence number, access
 * unit index, position and count) and payload read in place from the access
 * unit through iovecs. `mmsg` sends one datagram per message with sendmmsg,
 * `gso` sends runs of up to 64 KB as one UDP_SEGMENT message, all messages
 * of an access unit in one sendmmsg. The receiver reads with recvmmsg (64
 * slots) or with UDP_GRO (16 slots of 64 KB, split by the segment size the
 * kernel reports) and counts payload bytes, datagrams, gaps and complete
 * access units.
 *
 * Protocol with bench/run.py: `recv` prints "READY <port>", runs until a line
 * "stop" (or end of file) arrives on standard input and no datagram came for
 * 200 ms, then prints one "RESULT key=value ..." line. `send` prints its own
 * RESULT line when done. CPU seconds are getrusage() differences over the
 * measured part only. Only raw system calls: independent of lib/.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "augen.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define HDR_LEN 12
#define GSO_MAX_BYTES 65000
#define GSO_MAX_SEGS 64
#define RX_BATCH 64
#define GRO_BATCH 16
#define GRO_SLOT 65536

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_seconds(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void *xcalloc(size_t n, size_t sz)
{
  void *p = calloc(n ? n : 1, sz);
  if (!p) {
    fprintf(stderr, "rawudp: out of memory\n");
    exit(1);
  }
  return p;
}

static void set_buf(int fd, int opt_force, int opt, int bytes)
{
  if (bytes <= 0)
    return;
  if (setsockopt(fd, SOL_SOCKET, opt_force, &bytes, sizeof bytes) < 0)
    setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof bytes);
}

static int get_int_opt(int fd, int level, int opt)
{
  int v = 0;
  socklen_t l = sizeof v;
  getsockopt(fd, level, opt, &v, &l);
  return v;
}

static int resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
  struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV };
  struct addrinfo *res;
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  int err = getaddrinfo(host, ps, &hints, &res);
  if (err) {
    fprintf(stderr, "rawudp: %s: %s\n", host, gai_strerror(err));
    return -1;
  }
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- receiver ------------------------------------------------------------ */

typedef struct rx_stats {
  uint64_t dgrams, bytes, gaps, aus_ok, aus_bad, syscalls, truncated;
  uint32_t next_seq;
  bool any;
  uint32_t cur_au;
  uint32_t cur_got, cur_count;
  double t_first, t_last;
} rx_stats_t;

static void rx_finish_au(rx_stats_t *s)
{
  if (s->cur_count == 0)
    return;
  if (s->cur_got == s->cur_count)
    s->aus_ok++;
  else
    s->aus_bad++;
  s->cur_count = 0;
}

static void rx_account(rx_stats_t *s, const uint8_t *d, size_t len, double t)
{
  if (len < HDR_LEN)
    return;
  uint32_t seq = get32(d), au = get32(d + 4);
  uint32_t cnt = (uint32_t)d[10] << 8 | d[11];
  if (!s->any) {
    s->any = true;
    s->t_first = t;
    s->next_seq = seq;
    s->cur_au = au;
    s->cur_count = cnt;
    s->cur_got = 0;
  }
  if ((int32_t)(seq - s->next_seq) > 0)
    s->gaps += (uint32_t)(seq - s->next_seq);
  s->next_seq = seq + 1;
  if (au != s->cur_au) {
    rx_finish_au(s);
    s->cur_au = au;
    s->cur_got = 0;
  }
  s->cur_count = cnt;
  s->cur_got++;
  s->dgrams++;
  s->bytes += len - HDR_LEN;
  s->t_last = t;
}

static int cmd_recv(int argc, char **argv)
{
  const char *bind_addr = "0.0.0.0", *mode = "mmsg";
  int port = 0, rcvbuf = 128 << 20;
  static const struct option opts[] = {
    { "port", required_argument, 0, 'p' }, { "bind", required_argument, 0, 'b' },
    { "mode", required_argument, 0, 'm' }, { "rcvbuf", required_argument, 0, 'r' },
    { 0, 0, 0, 0 },
  };
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'p': port = atoi(optarg); break;
    case 'b': bind_addr = optarg; break;
    case 'm': mode = optarg; break;
    case 'r': rcvbuf = atoi(optarg); break;
    default: return 2;
    }
  }
  bool gro = strcmp(mode, "gro") == 0;
  if (!gro && strcmp(mode, "mmsg") != 0) {
    fprintf(stderr, "rawudp: recv mode must be mmsg or gro\n");
    return 2;
  }
  struct sockaddr_storage ss;
  socklen_t sl;
  if (resolve(bind_addr, port, &ss, &sl) < 0)
    return 1;
  int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    perror("rawudp: socket");
    return 1;
  }
  set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcvbuf);
  if (gro) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) < 0) {
      perror("rawudp: UDP_GRO");
      return 1;
    }
  }
  if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
    perror("rawudp: bind");
    return 1;
  }
  struct sockaddr_storage local;
  socklen_t ll = sizeof local;
  getsockname(fd, (struct sockaddr *)&local, &ll);
  int bound = ntohs(((struct sockaddr_in *)&local)->sin_port);

  size_t batch = gro ? GRO_BATCH : RX_BATCH, slot = gro ? GRO_SLOT : 2048;
  uint8_t *mem = xcalloc(batch, slot);
  struct mmsghdr *msgs = xcalloc(batch, sizeof *msgs);
  struct iovec *iov = xcalloc(batch, sizeof *iov);
  char (*cm)[CMSG_SPACE(sizeof(int))] = xcalloc(batch, sizeof *cm);

  rx_stats_t st;
  memset(&st, 0, sizeof st);
  printf("READY %d\n", bound);
  fflush(stdout);
  double cpu0 = cpu_seconds();
  bool stopping = false;
  double idle_since = now();
  for (;;) {
    struct pollfd pfd[2] = { { fd, POLLIN, 0 }, { 0, POLLIN, 0 } };
    int np = stopping ? 1 : 2;
    int pr = poll(pfd, (nfds_t)np, stopping ? 50 : 1000);
    if (pr < 0 && errno != EINTR)
      break;
    if (!stopping && (pfd[1].revents & (POLLIN | POLLHUP))) {
      char line[64];
      if (!fgets(line, sizeof line, stdin) || strncmp(line, "stop", 4) == 0) {
        stopping = true;
        idle_since = now();
      }
    }
    if (pfd[0].revents & POLLIN) {
      for (;;) {
        for (size_t i = 0; i < batch; i++) {
          iov[i].iov_base = mem + i * slot;
          iov[i].iov_len = slot;
          memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
          msgs[i].msg_hdr.msg_iov = &iov[i];
          msgs[i].msg_hdr.msg_iovlen = 1;
          if (gro) {
            msgs[i].msg_hdr.msg_control = cm[i];
            msgs[i].msg_hdr.msg_controllen = sizeof cm[i];
          }
        }
        int n = recvmmsg(fd, msgs, (unsigned)batch, MSG_DONTWAIT, NULL);
        st.syscalls++;
        if (n <= 0)
          break;
        double t = now();
        for (int i = 0; i < n; i++) {
          uint8_t *d = iov[i].iov_base;
          size_t len = msgs[i].msg_len;
          if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
            st.truncated++;
            continue;
          }
          size_t seg = len;
          if (gro) {
            for (struct cmsghdr *h = CMSG_FIRSTHDR(&msgs[i].msg_hdr); h;
                 h = CMSG_NXTHDR(&msgs[i].msg_hdr, h))
              if (h->cmsg_level == IPPROTO_UDP && h->cmsg_type == UDP_GRO) {
                int gs;
                memcpy(&gs, CMSG_DATA(h), sizeof gs);
                if (gs > 0)
                  seg = (size_t)gs;
              }
          }
          for (size_t off = 0; off < len; off += seg)
            rx_account(&st, d + off, len - off < seg ? len - off : seg, t);
        }
        idle_since = t;
      }
    }
    if (stopping && now() - idle_since > 0.2)
      break;
  }
  rx_finish_au(&st);
  double cpu = cpu_seconds() - cpu0;
  double secs = st.t_last - st.t_first;
  printf("RESULT role=recv mode=%s dgrams=%llu bytes=%llu gaps=%llu aus_ok=%llu aus_bad=%llu "
         "seconds=%.6f cpu=%.4f syscalls=%llu truncated=%llu rcvbuf=%d\n",
      gro ? "gro" : "mmsg", (unsigned long long)st.dgrams, (unsigned long long)st.bytes,
      (unsigned long long)st.gaps, (unsigned long long)st.aus_ok, (unsigned long long)st.aus_bad,
      secs, cpu, (unsigned long long)st.syscalls, (unsigned long long)st.truncated,
      get_int_opt(fd, SOL_SOCKET, SO_RCVBUF));
  fflush(stdout);
  close(fd);
  free(mem);
  free(msgs);
  free(iov);
  free(cm);
  return 0;
}

/* ---- sender -------------------------------------------------------------- */

static int cmd_send(int argc, char **argv)
{
  const char *host = "127.0.0.1", *mode = "mmsg", *codec_name = "h265";
  int port = 0, mtu = 1400, sndbuf = 8 << 20;
  double seconds = 2.0, fps = 0;
  static const struct option opts[] = {
    { "host", required_argument, 0, 'h' }, { "port", required_argument, 0, 'p' },
    { "mode", required_argument, 0, 'm' }, { "seconds", required_argument, 0, 's' },
    { "fps", required_argument, 0, 'f' }, { "mtu", required_argument, 0, 'u' },
    { "sndbuf", required_argument, 0, 'b' }, { "codec", required_argument, 0, 'c' },
    { 0, 0, 0, 0 },
  };
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'h': host = optarg; break;
    case 'p': port = atoi(optarg); break;
    case 'm': mode = optarg; break;
    case 's': seconds = atof(optarg); break;
    case 'f': fps = atof(optarg); break;
    case 'u': mtu = atoi(optarg); break;
    case 'b': sndbuf = atoi(optarg); break;
    case 'c': codec_name = optarg; break;
    default: return 2;
    }
  }
  bool gso = strcmp(mode, "gso") == 0;
  if ((!gso && strcmp(mode, "mmsg") != 0) || mtu <= HDR_LEN || mtu > 9000 || port <= 0) {
    fprintf(stderr, "rawudp: bad send arguments\n");
    return 2;
  }
  augen_config_t gc;
  augen_codec_t codec;
  if (augen_codec_parse(codec_name, &codec) < 0) {
    fprintf(stderr, "rawudp: unknown codec %s\n", codec_name);
    return 2;
  }
  augen_config_default(&gc, codec);
  augen_t g;
  if (augen_init(&g, &gc) < 0) {
    fprintf(stderr, "rawudp: generator failed\n");
    return 1;
  }
  struct sockaddr_storage dst;
  socklen_t dl;
  if (resolve(host, port, &dst, &dl) < 0)
    return 1;
  int fd = socket(dst.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) {
    perror("rawudp: socket");
    return 1;
  }
  set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, sndbuf);
  if (connect(fd, (struct sockaddr *)&dst, dl) < 0) {
    perror("rawudp: connect");
    return 1;
  }

  size_t pl = (size_t)mtu - HDR_LEN;
  size_t max_dg = (g.max_size + pl - 1) / pl;
  uint8_t *hdrs = xcalloc(max_dg, HDR_LEN);
  struct iovec *iov = xcalloc(2 * max_dg, sizeof *iov);
  struct mmsghdr *msgs = xcalloc(max_dg, sizeof *msgs);
  char (*cm)[CMSG_SPACE(sizeof(uint16_t))] = xcalloc(max_dg, sizeof *cm);
  size_t segs_per_msg = GSO_MAX_BYTES / (size_t)mtu;
  if (segs_per_msg > GSO_MAX_SEGS)
    segs_per_msg = GSO_MAX_SEGS;

  uint64_t aus = 0, dgrams = 0, bytes = 0, syscalls = 0, errors = 0, sends = 0;
  uint32_t seq = 0;
  double cpu0 = cpu_seconds();
  double t0 = now(), t = t0;
  while (t - t0 < seconds) {
    if (fps > 0) {
      double due = t0 + (double)aus / fps;
      if (due > t) {
        double d = due - t;
        struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        nanosleep(&ts, NULL);
      }
    }
    const augen_au_t *au = &g.aus[aus % g.n];
    size_t ndg = (au->size + pl - 1) / pl;
    for (size_t i = 0; i < ndg; i++) {
      uint8_t *h = hdrs + i * HDR_LEN;
      put32(h, seq++);
      put32(h + 4, (uint32_t)aus);
      h[8] = (uint8_t)(i >> 8);
      h[9] = (uint8_t)i;
      h[10] = (uint8_t)(ndg >> 8);
      h[11] = (uint8_t)ndg;
      size_t off = i * pl;
      iov[2 * i].iov_base = h;
      iov[2 * i].iov_len = HDR_LEN;
      iov[2 * i + 1].iov_base = au->data + off;
      iov[2 * i + 1].iov_len = au->size - off < pl ? au->size - off : pl;
      bytes += iov[2 * i + 1].iov_len;
    }
    size_t nmsg = 0;
    if (gso) {
      for (size_t i = 0; i < ndg; i += segs_per_msg) {
        size_t k = ndg - i < segs_per_msg ? ndg - i : segs_per_msg;
        struct msghdr *m = &msgs[nmsg].msg_hdr;
        memset(m, 0, sizeof *m);
        m->msg_iov = &iov[2 * i];
        m->msg_iovlen = 2 * k;
        if (k > 1) {
          m->msg_control = cm[nmsg];
          m->msg_controllen = sizeof cm[nmsg];
          struct cmsghdr *h = CMSG_FIRSTHDR(m);
          h->cmsg_level = IPPROTO_UDP;
          h->cmsg_type = UDP_SEGMENT;
          h->cmsg_len = CMSG_LEN(sizeof(uint16_t));
          uint16_t segsz = (uint16_t)mtu;
          memcpy(CMSG_DATA(h), &segsz, sizeof segsz);
        }
        nmsg++;
      }
    } else {
      for (size_t i = 0; i < ndg; i++) {
        struct msghdr *m = &msgs[nmsg++].msg_hdr;
        memset(m, 0, sizeof *m);
        m->msg_iov = &iov[2 * i];
        m->msg_iovlen = 2;
      }
    }
    for (size_t done = 0; done < nmsg;) {
      size_t chunk = nmsg - done > 1024 ? 1024 : nmsg - done;
      int n = sendmmsg(fd, msgs + done, (unsigned)chunk, 0);
      syscalls++;
      if (n < 0) {
        if (errno == EINTR)
          continue;
        /* ICMP unreachable from a receiver not yet there, ENOBUFS: count, go on */
        errors++;
        done++;
        continue;
      }
      done += (size_t)n;
    }
    dgrams += ndg;
    sends += nmsg;
    aus++;
    t = now();
  }
  double secs = t - t0;
  double cpu = cpu_seconds() - cpu0;
  printf("RESULT role=send mode=%s aus=%llu dgrams=%llu bytes=%llu seconds=%.6f cpu=%.4f "
         "syscalls=%llu msgs=%llu errors=%llu mtu=%d\n",
      gso ? "gso" : "mmsg", (unsigned long long)aus, (unsigned long long)dgrams,
      (unsigned long long)bytes, secs, cpu, (unsigned long long)syscalls,
      (unsigned long long)sends, (unsigned long long)errors, mtu);
  fflush(stdout);
  close(fd);
  free(hdrs);
  free(iov);
  free(msgs);
  free(cm);
  augen_free(&g);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: rawudp recv|send [options]\n");
    return 2;
  }
  if (strcmp(argv[1], "recv") == 0)
    return cmd_recv(argc - 1, argv + 1);
  if (strcmp(argv[1], "send") == 0)
    return cmd_send(argc - 1, argv + 1);
  fprintf(stderr, "usage: rawudp recv|send [options]\n");
  return 2;
}
