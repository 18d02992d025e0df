/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * history.h - what a sender sent, kept for retransmission without copying.
 *
 * A sending stream packetizes into batches whose packets point into the
 * bytes pushed to it (batch.h; sendstream.h calls the reference that keeps
 * those bytes alive a hold). Once a batch is sent, the history keeps it
 * whole, holds and all, instead of clearing it: a packet asked for again
 * is found by its sequence number and copied out (urtp_history_get), and
 * nothing is copied for the packets nobody asks for. The sending path
 * pays a swap of a few pointers per batch.
 *
 * Promises:
 *  - Bounded: batches leave, oldest first, once they are older than
 *    max_age, or while the packets kept exceed max_packets or the batches
 *    max_batches; the newest batch is always kept whole. Their holds are
 *    released (the callback) as they leave, on the thread keeping the
 *    batch that pushed them out.
 *  - Memory is reused: a batch that leaves gives its arrays and arena to
 *    the next one kept (urtp_history_keep hands them back to the caller),
 *    so the batch memories in use are the batches kept plus a few.
 *  - urtp_history_get() finds the newest packet with a sequence number
 *    among batches not older than max_age; a sequence number repeats only
 *    after 65536 packets, so with max_packets at most 32768 there is never
 *    a doubt which.
 *  - Thread-safe: one lock, held by keep for a few pointer moves (and the
 *    releases of what leaves), by get for one packet's copy.
 */
#ifndef URTP_HISTORY_H
#define URTP_HISTORY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"

#define URTP_HISTORY_PACKETS 8192        /* default max_packets */
#define URTP_HISTORY_MAX_PACKETS 32768   /* the largest max_packets */
#define URTP_HISTORY_AGE 1000000000ull   /* default max_age, ns */
#define URTP_HISTORY_BATCHES 128         /* default max_batches */

/* The holds of the pushes whose packets are in one batch. */
typedef struct urtp_holds {
  void **v;
  size_t n, cap;
} urtp_holds_t;

/* Appends hold; 0 or -ENOMEM. */
int urtp_holds_add(urtp_holds_t *h, void *hold);

typedef void (*urtp_history_release_fn)(void *user, void *hold);

typedef struct urtp_history_config {
  size_t max_packets;           /* 0: URTP_HISTORY_PACKETS; at most
                                 * URTP_HISTORY_MAX_PACKETS */
  uint64_t max_age;             /* ns; 0: URTP_HISTORY_AGE */
  size_t max_batches;           /* 0: URTP_HISTORY_BATCHES */
  urtp_history_release_fn release;
  void *user;
} urtp_history_config_t;

typedef struct urtp_history_stats {
  uint64_t batches, packets;    /* kept now */
  uint64_t found, missing;      /* urtp_history_get: copied, not there */
} urtp_history_stats_t;

typedef struct urtp_history_slot {
  urtp_batch_t batch;
  urtp_holds_t holds;
  uint64_t t;                   /* when it was kept */
  uint16_t first_seq;
  bool refs_ps;                 /* points into the parameter sets */
} urtp_history_slot_t;

typedef struct urtp_history {
  pthread_mutex_t lock;
  urtp_history_config_t cfg;
  urtp_history_slot_t *ring;    /* cfg.max_batches of them */
  size_t head, count;
  size_t packets;
  urtp_history_slot_t *spare;   /* memory of batches that left */
  size_t nspare;
  urtp_history_stats_t st;
} urtp_history_t;

/* Returns 0, -EINVAL (max_packets above the largest), -ENOMEM. */
int urtp_history_init(urtp_history_t *h, const urtp_history_config_t *cfg);
/* Releases every hold kept and frees. */
void urtp_history_destroy(urtp_history_t *h);

/* Keeps batch b, sent at now (ns, any monotonic clock), with holds, its
 * packets numbered consecutively; refs_ps: some point into the stream's
 * parameter sets (see urtp_history_drop_ps). b and holds come back empty,
 * with reused memory. An empty batch is not kept: its holds are released.
 * Then what is too old or too much leaves. */
void urtp_history_keep(urtp_history_t *h, urtp_batch_t *b, urtp_holds_t *holds, bool refs_ps,
                       uint64_t now);

/* Before the parameter sets change: the batches pointing into them leave. */
void urtp_history_drop_ps(urtp_history_t *h);

/* Copies the packet with sequence number seq into buf, if it is kept and
 * not older than max_age at now. Returns its length, 0 if it is not there,
 * -ENOSPC when cap is too small. */
int urtp_history_get(urtp_history_t *h, uint16_t seq, uint64_t now, uint8_t *buf, size_t cap);

void urtp_history_get_stats(urtp_history_t *h, urtp_history_stats_t *out);

#endif
