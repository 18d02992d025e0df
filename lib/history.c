/* SPDX-License-Identifier: BSD-2-Clause */
/* The sender's history of sent batches: see urtp/history.h. */
#include "urtp/history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/rtp.h"

int urtp_holds_add(urtp_holds_t *h, void *hold)
{
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 16;
    void **v = realloc(h->v, cap * sizeof(*v));
    if (!v)
      return -ENOMEM;
    h->v = v;
    h->cap = cap;
  }
  h->v[h->n++] = hold;
  return 0;
}

static void holds_release(urtp_history_t *h, urtp_holds_t *holds)
{
  for (size_t i = 0; i < holds->n; i++)
    if (h->cfg.release)
      h->cfg.release(h->cfg.user, holds->v[i]);
  holds->n = 0;
}

int urtp_history_init(urtp_history_t *h, const urtp_history_config_t *cfg)
{
  memset(h, 0, sizeof(*h));
  h->cfg = *cfg;
  if (!h->cfg.max_packets)
    h->cfg.max_packets = URTP_HISTORY_PACKETS;
  if (!h->cfg.max_age)
    h->cfg.max_age = URTP_HISTORY_AGE;
  if (!h->cfg.max_batches)
    h->cfg.max_batches = URTP_HISTORY_BATCHES;
  if (h->cfg.max_packets > URTP_HISTORY_MAX_PACKETS)
    return -EINVAL;
  h->ring = calloc(h->cfg.max_batches, sizeof(*h->ring));
  h->spare = calloc(h->cfg.max_batches, sizeof(*h->spare));
  if (!h->ring || !h->spare || pthread_mutex_init(&h->lock, NULL) != 0) {
    free(h->ring);
    free(h->spare);
    return -ENOMEM;
  }
  return 0;
}

static void slot_free(urtp_history_slot_t *s)
{
  urtp_batch_free(&s->batch);
  free(s->holds.v);
}

void urtp_history_destroy(urtp_history_t *h)
{
  if (!h->ring)
    return;
  for (size_t i = 0; i < h->count; i++) {
    urtp_history_slot_t *s = &h->ring[(h->head + i) % h->cfg.max_batches];
    holds_release(h, &s->holds);
    slot_free(s);
  }
  for (size_t i = 0; i < h->nspare; i++)
    slot_free(&h->spare[i]);
  free(h->ring);
  free(h->spare);
  pthread_mutex_destroy(&h->lock);
  memset(h, 0, sizeof(*h));
}

/* The oldest batch leaves: its holds are released, its memory is spare.
 * Lock held. */
static void leave_oldest(urtp_history_t *h)
{
  urtp_history_slot_t *s = &h->ring[h->head];
  h->head = (h->head + 1) % h->cfg.max_batches;
  h->count--;
  h->packets -= s->batch.npkts;
  holds_release(h, &s->holds);
  urtp_batch_clear(&s->batch);
  /* the spare stack holds at most what the ring can: every memory not in
   * the ring and not the caller's */
  urtp_history_slot_t *sp = &h->spare[h->nspare++];
  sp->batch = s->batch;
  sp->holds = s->holds;
  memset(s, 0, sizeof(*s));
}

void urtp_history_keep(urtp_history_t *h, urtp_batch_t *b, urtp_holds_t *holds, bool refs_ps,
                       uint64_t now)
{
  size_t n = b->npkts;
  uint16_t first = 0;
  bool keep = n > 0;
  if (keep) {
    /* the packets must be numbered consecutively to be found by number */
    const urtp_pkt_t *p0 = &b->pkts[0], *pl = &b->pkts[n - 1];
    first = urtp_rtp_peek_seq(b->iov[p0->iov_first].iov_base);
    uint16_t last = urtp_rtp_peek_seq(b->iov[pl->iov_first].iov_base);
    keep = (uint16_t)(last - first) == (uint16_t)(n - 1);
  }
  pthread_mutex_lock(&h->lock);
  if (!keep) {
    holds_release(h, holds);
    urtp_batch_clear(b);
    pthread_mutex_unlock(&h->lock);
    return;
  }
  if (h->count == h->cfg.max_batches)
    leave_oldest(h);
  urtp_history_slot_t *s = &h->ring[(h->head + h->count) % h->cfg.max_batches];
  s->batch = *b;
  s->holds = *holds;
  s->t = now;
  s->first_seq = first;
  s->refs_ps = refs_ps;
  h->count++;
  h->packets += n;
  /* the caller gets spare memory back, or none */
  if (h->nspare) {
    urtp_history_slot_t *sp = &h->spare[--h->nspare];
    *b = sp->batch;
    *holds = sp->holds;
  } else {
    urtp_batch_init(b);
    memset(holds, 0, sizeof(*holds));
  }
  while (h->count > 1) {
    const urtp_history_slot_t *o = &h->ring[h->head];
    if (h->packets <= h->cfg.max_packets && (now <= o->t || now - o->t <= h->cfg.max_age))
      break;
    leave_oldest(h);
  }
  pthread_mutex_unlock(&h->lock);
}

void urtp_history_drop_ps(urtp_history_t *h)
{
  pthread_mutex_lock(&h->lock);
  /* they leave in order: everything up to the newest that points into
   * the sets (older ones are no use without it) */
  size_t last = 0;
  bool any = false;
  for (size_t i = 0; i < h->count; i++)
    if (h->ring[(h->head + i) % h->cfg.max_batches].refs_ps) {
      last = i;
      any = true;
    }
  for (size_t i = 0; any && i <= last; i++)
    leave_oldest(h);
  pthread_mutex_unlock(&h->lock);
}

int urtp_history_get(urtp_history_t *h, uint16_t seq, uint64_t now, uint8_t *buf, size_t cap)
{
  int r = 0;
  pthread_mutex_lock(&h->lock);
  for (size_t i = h->count; i-- > 0;) {
    const urtp_history_slot_t *s = &h->ring[(h->head + i) % h->cfg.max_batches];
    if (now > s->t && now - s->t > h->cfg.max_age)
      break;                      /* this one and those before are too old */
    uint16_t off = (uint16_t)(seq - s->first_seq);
    if (off < s->batch.npkts) {
      size_t len = urtp_batch_copy_pkt(&s->batch, off, buf, cap);
      r = len ? (int)len : -ENOSPC;
      break;
    }
  }
  if (r > 0)
    h->st.found++;
  else if (r == 0)
    h->st.missing++;
  pthread_mutex_unlock(&h->lock);
  return r;
}

void urtp_history_get_stats(urtp_history_t *h, urtp_history_stats_t *out)
{
  pthread_mutex_lock(&h->lock);
  *out = h->st;
  out->batches = h->count;
  out->packets = h->packets;
  pthread_mutex_unlock(&h->lock);
}
