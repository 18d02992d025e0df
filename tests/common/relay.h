/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * relay.h - the tests' own seeded UDP impairment relay.
 *
 * This kernel has no netem qdisc, so tests impair real traffic themselves: the
 * relay receives datagrams on a loopback port and forwards them to another
 * (or between addresses of its choice, for a path across namespaces),
 * dropping, duplicating and reordering them by a pattern that depends only on
 * the seed and the order of arrival, never on time, so a run reproduces.
 *
 *  - drop: the datagram is not forwarded.
 *  - dup: it is forwarded twice, the copy after `dup_delay` more datagrams.
 *  - reorder: it is held back and forwarded after `reorder_depth` more.
 * Held datagrams are forwarded when no traffic has come for RELAY_IDLE_MS
 * and when the relay stops. The relay remembers the RTP sequence numbers it
 * dropped and keeps a trace of every datagram (sequence number, timestamp,
 * fate), so tests can predict exactly what the receiver must deliver.
 *
 * A time delay (delay_ms) holds every forwarded datagram that long after it
 * arrived, as a longer path would, keeping their order; it is the only
 * impairment that depends on time.
 *
 * Bursty loss (a Gilbert-Elliott model, burst_p > 0): each datagram first
 * moves the channel from good to bad with probability burst_p, or from bad
 * to good with burst_r; in the bad state it is lost with burst_loss (0:
 * always), in the good state with `drop`. The mean burst is 1 / burst_r
 * datagrams; the long-run loss drop * r / (p + r) + burst_loss * p / (p + r).
 *
 * The way back (reverse): what the destination sends to the relay's
 * forwarding socket (replies to where the datagrams came from: RTCP
 * receiver reports, NACKs) goes back to the last sender on the listening
 * port, through the same delay (a round trip of 2 x delay_ms), lost with
 * reverse_drop from a random stream of its own (the forward pattern stays
 * that of the seed). Without it such datagrams are dropped unread.
 */
#ifndef URTP_TEST_RELAY_H
#define URTP_TEST_RELAY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct relay_config {
  uint64_t seed;
  double drop, dup, reorder;    /* probabilities, 0..1 */
  unsigned reorder_depth;       /* datagrams a reordered one waits; >= 1 */
  unsigned dup_delay;           /* datagrams before the copy; 0: right after */
  uint16_t to_port;             /* forward to to_addr:to_port */
  /* Addresses (IPv4, host byte order; 0: 127.0.0.1) and fixed ports (0:
   * ephemeral) for a relay between network namespaces: it listens on
   * listen_addr:listen_port and forwards from out_addr:out_port, where the
   * destination's replies then go (reverse). */
  uint32_t listen_addr, to_addr, out_addr;
  uint16_t listen_port, out_port;
  unsigned skip_first;          /* forward the first N untouched (stream start) */
  unsigned delay_ms;            /* every forwarded datagram this much later */
  double burst_p, burst_r, burst_loss;  /* Gilbert-Elliott; burst_p 0: off */
  bool reverse;                 /* relay the destination's replies back */
  double reverse_drop;
  int rcvbuf;                   /* bytes of the listening socket; 0: 8 MB */
} relay_config_t;

typedef struct relay_stats {
  uint64_t received, forwarded, dropped, duplicated, reordered;
  uint64_t burst_dropped;       /* of dropped: in the bad state */
  uint64_t back_received, back_forwarded, back_dropped;
  uint64_t bytes;               /* of received; atomic: readable while it runs */
} relay_stats_t;

#define RELAY_MAX_HELD 256
#define RELAY_MAX_DROPS 65536
#define RELAY_MAX_TRACE (1 << 20)
#define RELAY_IDLE_MS 20
#define RELAY_MAX_DELAYED 16384       /* datagrams in flight on the delay */

typedef struct relay_trace {
  uint16_t seq;
  uint32_t ts;
  bool dropped;
  uint8_t pt;                   /* the second byte: RTCP's packet type (200-206), RTP's M + PT */
} relay_trace_t;

typedef struct relay {
  relay_config_t cfg;
  int in_fd, out_fd, stop_fd;
  uint16_t port;                /* the relay listens on this port */
  pthread_t thread;
  uint64_t rng, rng_back;
  bool bad;                     /* Gilbert-Elliott state */
  struct sockaddr_storage last_from;  /* the last sender on the listening port */
  socklen_t last_from_len;
  struct held {
    uint64_t due;               /* forward when received reaches this */
    uint16_t len;
    uint8_t data[2048];
  } *held;
  unsigned nheld;
  struct delayed {
    uint64_t due;               /* CLOCK_MONOTONIC ns */
    bool back;                  /* on the way back */
    uint16_t len;
    uint8_t data[2048];
  } *delayed;                   /* a ring, in order of due time */
  unsigned delayed_head, ndelayed;
  uint16_t *dropped_seqs;       /* RTP sequence numbers dropped */
  unsigned ndropped_seqs;
  relay_trace_t *trace;         /* every datagram of 12 bytes or more, in arrival order */
  unsigned ntrace;
  relay_stats_t stats;
} relay_t;

/* Binds the listening port (ephemeral on loopback unless configured) and
 * starts the relay thread. 0 or -errno. */
int relay_start(relay_t *r, const relay_config_t *cfg);
/* Forwards what is held, stops the thread and closes the sockets. The trace
 * stays readable until relay_free(). */
void relay_stop(relay_t *r);
void relay_free(relay_t *r);

#endif
