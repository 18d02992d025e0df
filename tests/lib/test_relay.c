/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_relay - the tests' impairment relay itself (tests/common/relay.h):
 * the Gilbert-Elliott loss gives the loss rate and burst length its
 * parameters promise, reproducibly for a seed; replies travel back
 * through the delay, twice the delay for the round trip.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "relay.h"
#include "tap.h"

static uint64_t mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A loopback UDP socket, bound (ephemeral port into *port). */
static int udp(uint16_t *port)
{
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  socklen_t l = sizeof a;
  int big = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
      getsockname(fd, (struct sockaddr *)&a, &l) < 0)
    return -1;
  *port = ntohs(a.sin_port);
  return fd;
}

static void to(int fd, uint16_t port, const void *p, size_t len)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  (void)!sendto(fd, p, len, 0, (struct sockaddr *)&a, sizeof a);
}

#define N 20000

/* Sends N RTP-like datagrams through a relay with cfg; its trace says
 * which were dropped. */
static void run(relay_config_t cfg, relay_t *r, uint16_t sink_port)
{
  uint16_t port;
  int fd = udp(&port);
  cfg.to_port = sink_port;
  if (relay_start(r, &cfg) != 0 || fd < 0) {
    CHECK(0);
    return;
  }
  uint8_t pkt[20] = { 0x80, 96 };
  for (unsigned i = 0; i < N; i++) {
    pkt[2] = (uint8_t)(i >> 8);
    pkt[3] = (uint8_t)i;
    to(fd, r->port, pkt, sizeof pkt);
    if (i % 500 == 499)
      usleep(2000);             /* the relay's input buffer keeps up */
  }
  /* the relay's thread may run late on a loaded machine: wait for it to
   * have read them all (5 s at most), not a fixed time */
  for (int k = 0; k < 5000 && __atomic_load_n(&r->ntrace, __ATOMIC_RELAXED) < N; k++)
    usleep(1000);
  relay_stop(r);
  close(fd);
}

static void test_bursts(void)
{
  uint16_t sink_port;
  int sink = udp(&sink_port);
  REQUIRE(sink >= 0);
  /* every one of the N datagrams must reach the relay, however late its
   * thread runs on a loaded machine: room for all of them (a small
   * datagram costs about 1 KiB of receive buffer) */
  relay_config_t c = { .seed = 42, .burst_p = 0.01, .burst_r = 0.25, .rcvbuf = 64 << 20 };
  static relay_t a, b;
  run(c, &a, sink_port);
  run(c, &b, sink_port);
  REQUIRE(a.ntrace == N && b.ntrace == N);
  /* p / (p + r) = 3.85 % lost, in bursts of 1 / r = 4 on average */
  double loss = (double)a.stats.dropped / N;
  printf("# loss %.4f, %" PRIu64 " dropped\n", loss, a.stats.dropped);
  CHECK(loss > 0.030 && loss < 0.047);
  CHECK_EQ(a.stats.burst_dropped, a.stats.dropped);
  unsigned bursts = 0, same = 0;
  for (unsigned i = 0; i < N; i++) {
    if (a.trace[i].dropped && (i == 0 || !a.trace[i - 1].dropped))
      bursts++;
    same += a.trace[i].dropped == b.trace[i].dropped;
  }
  double mean = (double)a.stats.dropped / bursts;
  printf("# %u bursts, mean %.2f\n", bursts, mean);
  CHECK(mean > 3.0 && mean < 5.0);
  CHECK_EQ(same, N);            /* the seed decides */
  relay_free(&a);
  relay_free(&b);
  /* bursts off: the same seed, plain drop, as before the model existed */
  relay_config_t plain = { .seed = 42, .drop = 0.02 };
  run(plain, &a, sink_port);
  CHECK_EQ(a.stats.burst_dropped, 0);
  CHECK(a.stats.dropped > N / 100 && a.stats.dropped < 3 * N / 100);
  relay_free(&a);
  close(sink);
}

/* A reply from the destination goes back to the sender from the relay's
 * port, after the delay both ways. */
static void test_reverse(void)
{
  for (int reverse = 0; reverse < 2; reverse++) {
    uint16_t dst_port, src_port;
    int dst = udp(&dst_port), src = udp(&src_port);
    REQUIRE(dst >= 0 && src >= 0);
    relay_config_t c = { .seed = 1, .to_port = dst_port, .delay_ms = 20, .reverse = reverse };
    static relay_t r;
    REQUIRE(relay_start(&r, &c) == 0);
    uint64_t t0 = mono_ms();
    to(src, r.port, "ping", 4);
    struct pollfd p = { .fd = dst, .events = POLLIN };
    REQUIRE(poll(&p, 1, 1000) == 1);
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    char buf[16];
    REQUIRE(recvfrom(dst, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl) == 4);
    CHECK(mono_ms() - t0 >= 20);
    REQUIRE(sendto(dst, "pong", 4, 0, (struct sockaddr *)&from, fl) == 4);
    p.fd = src;
    int got = poll(&p, 1, 300);
    if (reverse) {
      REQUIRE(got == 1);
      fl = sizeof from;
      CHECK(recvfrom(src, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl) == 4);
      CHECK(memcmp(buf, "pong", 4) == 0);
      CHECK_EQ(ntohs(from.sin_port), r.port);
      CHECK(mono_ms() - t0 >= 40);
    } else {
      CHECK_EQ(got, 0);
    }
    relay_stop(&r);
    CHECK_EQ(r.stats.back_received, 1);
    CHECK_EQ(r.stats.back_forwarded, reverse ? 1 : 0);
    relay_free(&r);
    close(dst);
    close(src);
  }
}

int main(void)
{
  TAP_RUN(test_bursts);
  TAP_RUN(test_reverse);
  return tap_done();
}
