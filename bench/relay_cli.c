/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * relay_cli.c - the tests' seeded impairment relay (tests/common/relay.h)
 * as a program, for benchmarks across processes:
 *
 *   urtp-relay --to [ADDR:]PORT [--listen [ADDR:]PORT] [--from ADDR:PORT]
 *              [--drop P] [--burst-p P --burst-r R [--burst-loss L]]
 *              [--delay MS] [--reverse] [--reverse-drop P] [--seed N]
 *              [--skip-first N] [--rcvbuf BYTES] [--report MS]
 *
 * It listens on an ephemeral loopback port (or --listen), prints "PORT n",
 * forwards to 127.0.0.1:PORT (or ADDR:PORT; from --from, where replies then
 * come with --reverse) until a line on standard input (or its end), then
 * prints "RELAY received=... forwarded=... dropped=... burst_dropped=...
 * back_received=... back_forwarded=... back_dropped=... bytes=..." and exits.
 * --report MS: meanwhile a line "T <CLOCK_MONOTONIC ns> <datagrams>
 * <bytes>" every MS milliseconds, what has arrived so far (a sender's rate
 * over time, read at the relay).
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "relay.h"

/* "ADDR:PORT" or "PORT" into addr (host order; left as is without one)
 * and port. */
static int parse_addr(const char *s, uint32_t *addr, uint16_t *port)
{
  const char *colon = strrchr(s, ':');
  if (colon) {
    char host[64];
    struct in_addr in;
    size_t n = (size_t)(colon - s);
    if (n >= sizeof host)
      return -1;
    memcpy(host, s, n);
    host[n] = 0;
    if (inet_pton(AF_INET, host, &in) != 1)
      return -1;
    *addr = ntohl(in.s_addr);
    s = colon + 1;
  }
  *port = (uint16_t)atoi(s);
  return 0;
}

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  relay_config_t c = { .seed = 1, .rcvbuf = 64 << 20 };
  static const struct option lo[] = {
    { "to", required_argument, 0, 't' }, { "drop", required_argument, 0, 'd' },
    { "burst-p", required_argument, 0, 'p' }, { "burst-r", required_argument, 0, 'r' },
    { "burst-loss", required_argument, 0, 'l' }, { "delay", required_argument, 0, 'D' },
    { "reverse", no_argument, 0, 'R' }, { "reverse-drop", required_argument, 0, 'x' },
    { "seed", required_argument, 0, 's' }, { "skip-first", required_argument, 0, 'k' },
    { "rcvbuf", required_argument, 0, 'b' }, { "listen", required_argument, 0, 'L' },
    { "from", required_argument, 0, 'F' }, { "report", required_argument, 0, 'T' },
    { 0, 0, 0, 0 },
  };
  int o, report_ms = 0, bad = 0;
  while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (o) {
    case 't': bad |= parse_addr(optarg, &c.to_addr, &c.to_port); break;
    case 'L': bad |= parse_addr(optarg, &c.listen_addr, &c.listen_port); break;
    case 'F': bad |= parse_addr(optarg, &c.out_addr, &c.out_port); break;
    case 'T': report_ms = atoi(optarg); break;
    case 'd': c.drop = atof(optarg); break;
    case 'p': c.burst_p = atof(optarg); break;
    case 'r': c.burst_r = atof(optarg); break;
    case 'l': c.burst_loss = atof(optarg); break;
    case 'D': c.delay_ms = (unsigned)atoi(optarg); break;
    case 'R': c.reverse = true; break;
    case 'x': c.reverse_drop = atof(optarg); break;
    case 's': c.seed = strtoull(optarg, NULL, 0); break;
    case 'k': c.skip_first = (unsigned)atoi(optarg); break;
    case 'b': c.rcvbuf = atoi(optarg); break;
    default: return 2;
    }
  }
  if (!c.to_port || bad) {
    fprintf(stderr, "urtp-relay: --to [ADDR:]PORT is required; addresses are IPv4\n");
    return 2;
  }
  static relay_t r;
  if (relay_start(&r, &c) != 0) {
    perror("urtp-relay");
    return 1;
  }
  printf("PORT %u\n", (unsigned)r.port);
  fflush(stdout);
  char line[64];
  struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
  while (report_ms > 0 && poll(&in, 1, report_ms) == 0) {
    printf("T %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", mono_ns(),
           __atomic_load_n(&r.stats.received, __ATOMIC_RELAXED),
           __atomic_load_n(&r.stats.bytes, __ATOMIC_RELAXED));
    fflush(stdout);
  }
  (void)!fgets(line, sizeof line, stdin);
  relay_stop(&r);
  const relay_stats_t *s = &r.stats;
  printf("RELAY received=%" PRIu64 " forwarded=%" PRIu64 " dropped=%" PRIu64
         " burst_dropped=%" PRIu64 " back_received=%" PRIu64 " back_forwarded=%" PRIu64
         " back_dropped=%" PRIu64 " bytes=%" PRIu64 "\n", s->received, s->forwarded, s->dropped,
         s->burst_dropped, s->back_received, s->back_forwarded, s->back_dropped, s->bytes);
  fflush(stdout);
  relay_free(&r);
  return 0;
}
