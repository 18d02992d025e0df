/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pacer.h - spreads sends in time so that a link slower than the host's
 * sees no burst larger than it can queue.
 *
 * A token bucket in the form of the generic cell rate algorithm: bytes go
 * out at `rate` on average, and at most `burst` bytes at once after a
 * quiet time. The socket layer (net.h) asks before each chunk of a batch
 * when it may go and waits until then, without spinning, interruptibly;
 * chunks stay GSO runs, only spread in time. Everything sent through the
 * sockets that share one pacer (media, retransmissions, RTCP) shares its
 * budget.
 *
 * Promises:
 *  - Over any interval, what the pacer let go is at most burst + rate x
 *    the interval's length; a chunk no larger than burst that finds the
 *    bucket full goes at once (no latency for what fits the budget).
 *  - Thread-safe: one lock held for a few arithmetic operations; rate and
 *    burst may change at any time (the next chunk uses them).
 *  - rate 0 means off: everything goes at once.
 *  - No allocation.
 * Times are nanoseconds of CLOCK_MONOTONIC (or the caller's clock, the same
 * for every call).
 */
#ifndef URTP_PACER_H
#define URTP_PACER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URTP_PACER_DEFAULT_BURST 65536  /* bytes: one GSO send */

typedef struct urtp_pacer_stats {
  uint64_t bytes;           /* let go through the pacer */
  uint64_t waits;           /* chunks that had to wait */
  uint64_t waited_ns;       /* the time they waited, summed */
  uint64_t max_wait_ns;     /* the longest single wait */
  uint64_t max_queue;       /* the most bytes held back at once */
} urtp_pacer_stats_t;

typedef struct urtp_pacer {
  pthread_mutex_t lock;
  uint64_t rate;            /* bytes per second; 0: off */
  uint64_t burst;           /* bytes */
  uint64_t tat;             /* when the bucket is full again (ns) */
  urtp_pacer_stats_t stats;
} urtp_pacer_t;

/* rate_bps in bits per second (0: off); burst in bytes (0: the default).
 * Returns 0 or -errno from pthread_mutex_init. */
int urtp_pacer_init(urtp_pacer_t *p, uint64_t rate_bps, uint64_t burst);
void urtp_pacer_destroy(urtp_pacer_t *p);

/* Changes the rate (bits per second, 0: off) and the burst (bytes, 0: the
 * default); any thread. */
void urtp_pacer_set(urtp_pacer_t *p, uint64_t rate_bps, uint64_t burst);

/* The largest chunk worth asking for at once: the burst, or SIZE_MAX when
 * off. */
size_t urtp_pacer_chunk(urtp_pacer_t *p);

/* Books `bytes` to go at `now` at the earliest; returns when they may go
 * (<= now: at once). `queued`: bytes waiting behind them as well, for the
 * statistics. */
uint64_t urtp_pacer_take(urtp_pacer_t *p, size_t bytes, size_t queued, uint64_t now);

/* Gives back bytes booked by urtp_pacer_take() that did not go after all
 * (the send was interrupted while waiting for them). */
void urtp_pacer_give_back(urtp_pacer_t *p, size_t bytes);

/* Records a wait of `ns` that was made for a chunk. */
void urtp_pacer_waited(urtp_pacer_t *p, uint64_t ns);

void urtp_pacer_get_stats(urtp_pacer_t *p, urtp_pacer_stats_t *out);

/* Whether what was booked still keeps the pacer busy past now. */
bool urtp_pacer_busy(urtp_pacer_t *p, uint64_t now);

static inline bool urtp_pacer_active(urtp_pacer_t *p)
{
  return p && __atomic_load_n(&p->rate, __ATOMIC_RELAXED) != 0;
}

#endif
