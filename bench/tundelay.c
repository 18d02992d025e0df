/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tundelay.c - a fixed delay for whatever the kernel routes into a TUN
 * device: each IP packet read from it is written back into it DELAY ms
 * later, in order, and the kernel routes it on from there. With policy
 * routing (`ip rule add iif IF ipproto tcp lookup T`, table T's default
 * route through the device) it delays one protocol's forwarded packets,
 * both ways: what this kernel lacks netem for (bench/congestion.py's case
 * 5.6, a TCP flow that sees the media's 50 ms).
 *
 *   urtp-tundelay --dev NAME --delay MS
 *
 * Creates NAME (and removes it on exit), prints "READY", runs until a line
 * on standard input (or its end), then prints "TUNDELAY packets=N
 * dropped=N". A packet that finds the line of held packets full (8192,
 * about 2 s of 50 Mbit/s in full packets) is dropped and counted: the
 * delay is a wire, not a queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define HELD 8192
#define PKT 2048

typedef struct held {
  uint64_t due;                 /* CLOCK_MONOTONIC ns */
  uint16_t len;
  uint8_t data[PKT];
} held_t;

static held_t line[HELD];       /* a ring: head is the oldest */
static uint8_t scratch[PKT];    /* what is read while the line is full */

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tun_open(const char *name)
{
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
  if (fd < 0)
    return -1;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int main(int argc, char **argv)
{
  const char *dev = NULL;
  uint64_t delay = 0;
  static const struct option lo[] = {
    { "dev", required_argument, NULL, 'd' },
    { "delay", required_argument, NULL, 'm' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    if (c == 'd')
      dev = optarg;
    else if (c == 'm')
      delay = (uint64_t)strtoull(optarg, NULL, 10) * 1000000ull;
    else
      return 2;
  }
  if (!dev) {
    fprintf(stderr, "usage: urtp-tundelay --dev NAME --delay MS\n");
    return 2;
  }
  int fd = tun_open(dev);
  if (fd < 0) {
    fprintf(stderr, "urtp-tundelay: %s: %s\n", dev, strerror(errno));
    return 1;
  }
  printf("READY\n");
  fflush(stdout);

  size_t head = 0, n = 0;
  uint64_t packets = 0, dropped = 0;
  for (;;) {
    uint64_t now = mono_ns();
    /* out: everything due, oldest first (the kernel takes a TUN write at
     * once; a refusal drops that packet, as a wire would) */
    while (n && line[head].due <= now) {
      if (write(fd, line[head].data, line[head].len) < 0 && errno != EAGAIN)
        dropped++;
      head = (head + 1) % HELD;
      n--;
    }
    int timeout = -1;
    if (n) {
      uint64_t wait = line[head].due - now;
      /* poll's milliseconds, rounded up: never early */
      timeout = (int)((wait + 999999) / 1000000);
    }
    struct pollfd p[2] = { { fd, POLLIN, 0 }, { 0, POLLIN, 0 } };
    if (poll(p, 2, timeout) < 0 && errno != EINTR)
      break;
    if (p[1].revents)
      break;                    /* a line on stdin, or its end */
    if (!(p[0].revents & POLLIN))
      continue;
    for (;;) {
      held_t *h = &line[(head + n) % HELD];
      ssize_t r = read(fd, n < HELD ? h->data : scratch, PKT);
      if (r <= 0)
        break;
      packets++;
      if (n == HELD) {
        dropped++;
        continue;
      }
      h->len = (uint16_t)r;
      h->due = mono_ns() + delay;
      n++;
    }
  }
  printf("TUNDELAY packets=%" PRIu64 " dropped=%" PRIu64 "\n", packets, dropped);
  close(fd);
  return 0;
}
