/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * relay_cli.c - the tests' seeded impairment relay (tests/common/relay.h)
 * as a program, for benchmarks across processes:
 *
 *   urtp-relay --to PORT [--drop P] [--burst-p P --burst-r R [--burst-loss L]]
 *              [--delay MS] [--reverse] [--reverse-drop P] [--seed N]
 *              [--skip-first N] [--rcvbuf BYTES]
 *
 * It listens on an ephemeral loopback port, prints "PORT n", forwards to
 * 127.0.0.1:PORT until a line on standard input (or its end), then prints
 * "RELAY received=... forwarded=... dropped=... burst_dropped=...
 * back_received=... back_forwarded=... back_dropped=... bytes=..." and exits.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "relay.h"

int main(int argc, char **argv)
{
  relay_config_t c = { .seed = 1, .rcvbuf = 64 << 20 };
  static const struct option lo[] = {
    { "to", required_argument, 0, 't' }, { "drop", required_argument, 0, 'd' },
    { "burst-p", required_argument, 0, 'p' }, { "burst-r", required_argument, 0, 'r' },
    { "burst-loss", required_argument, 0, 'l' }, { "delay", required_argument, 0, 'D' },
    { "reverse", no_argument, 0, 'R' }, { "reverse-drop", required_argument, 0, 'x' },
    { "seed", required_argument, 0, 's' }, { "skip-first", required_argument, 0, 'k' },
    { "rcvbuf", required_argument, 0, 'b' }, { 0, 0, 0, 0 },
  };
  int o;
  while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (o) {
    case 't': c.to_port = (uint16_t)atoi(optarg); break;
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
  if (!c.to_port) {
    fprintf(stderr, "urtp-relay: --to PORT is required\n");
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
  (void)!fgets(line, sizeof line, stdin);
  relay_stop(&r);
  const relay_stats_t *s = &r.stats;
  printf("RELAY received=%" PRIu64 " forwarded=%" PRIu64 " dropped=%" PRIu64
         " burst_dropped=%" PRIu64 " back_received=%" PRIu64 " back_forwarded=%" PRIu64
         " back_dropped=%" PRIu64 "\n", s->received, s->forwarded, s->dropped, s->burst_dropped,
         s->back_received, s->back_forwarded, s->back_dropped);
  fflush(stdout);
  relay_free(&r);
  return 0;
}
