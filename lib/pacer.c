/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/pacer.h"

#include <string.h>

/* The generic cell rate algorithm with chunks of any size: a chunk of n
 * bytes costs n/rate of time; the bucket is `burst` bytes deep, i.e.
 * burst/rate of time (tau). tat is the time at which the bucket would be
 * full again if nothing more were sent. A chunk may go at
 * max(now, tat + cost - tau); then tat moves on from then by its cost. */

#define NS 1000000000ull

static uint64_t cost_ns(const urtp_pacer_t *p, size_t bytes)
{
  return (uint64_t)((unsigned __int128)bytes * NS / p->rate);
}

int urtp_pacer_init(urtp_pacer_t *p, uint64_t rate_bps, uint64_t burst)
{
  memset(p, 0, sizeof(*p));
  int r = pthread_mutex_init(&p->lock, NULL);
  if (r)
    return -r;
  urtp_pacer_set(p, rate_bps, burst);
  return 0;
}

void urtp_pacer_destroy(urtp_pacer_t *p)
{
  pthread_mutex_destroy(&p->lock);
}

void urtp_pacer_set(urtp_pacer_t *p, uint64_t rate_bps, uint64_t burst)
{
  pthread_mutex_lock(&p->lock);
  __atomic_store_n(&p->rate, rate_bps / 8, __ATOMIC_RELAXED);
  p->burst = burst ? burst : URTP_PACER_DEFAULT_BURST;
  pthread_mutex_unlock(&p->lock);
}

size_t urtp_pacer_chunk(urtp_pacer_t *p)
{
  pthread_mutex_lock(&p->lock);
  size_t c = p->rate ? (size_t)p->burst : SIZE_MAX;
  pthread_mutex_unlock(&p->lock);
  return c;
}

uint64_t urtp_pacer_take(urtp_pacer_t *p, size_t bytes, size_t queued, uint64_t now)
{
  pthread_mutex_lock(&p->lock);
  p->stats.bytes += bytes;
  if (!p->rate) {
    pthread_mutex_unlock(&p->lock);
    return now;
  }
  uint64_t cost = cost_ns(p, bytes), tau = cost_ns(p, p->burst);
  /* a chunk larger than the bucket waits for a full bucket and leaves it
   * in debt */
  uint64_t need = cost < tau ? cost : tau;
  uint64_t at = p->tat + need > tau ? p->tat + need - tau : 0;
  if (at < now)
    at = now;
  p->tat = (p->tat > at ? p->tat : at) + cost;
  if (at > now && bytes + queued > p->stats.max_queue)
    p->stats.max_queue = bytes + queued;
  pthread_mutex_unlock(&p->lock);
  return at;
}

void urtp_pacer_give_back(urtp_pacer_t *p, size_t bytes)
{
  pthread_mutex_lock(&p->lock);
  p->stats.bytes -= bytes;
  if (p->rate) {
    uint64_t cost = cost_ns(p, bytes);
    p->tat = p->tat > cost ? p->tat - cost : 0;
  }
  pthread_mutex_unlock(&p->lock);
}

void urtp_pacer_waited(urtp_pacer_t *p, uint64_t ns)
{
  pthread_mutex_lock(&p->lock);
  p->stats.waits++;
  p->stats.waited_ns += ns;
  if (ns > p->stats.max_wait_ns)
    p->stats.max_wait_ns = ns;
  pthread_mutex_unlock(&p->lock);
}

void urtp_pacer_get_stats(urtp_pacer_t *p, urtp_pacer_stats_t *out)
{
  pthread_mutex_lock(&p->lock);
  *out = p->stats;
  pthread_mutex_unlock(&p->lock);
}

bool urtp_pacer_busy(urtp_pacer_t *p, uint64_t now)
{
  pthread_mutex_lock(&p->lock);
  bool busy = p->rate && p->tat > now;
  pthread_mutex_unlock(&p->lock);
  return busy;
}
