/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/reorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Positions are extended sequence numbers. Everything below `next` has been
 * delivered or given up on; an early packet at position p (next < p <
 * next + window) waits in slot p % window.
 *
 * A bitmap over the last hist_bits positions behind `next` (bit p % hist_bits
 * set: p was delivered, clear: given up) tells duplicates from late packets.
 */

/* lens[] values: 0 empty, OVERSIZE for an early packet too big for a slot
 * (kept only as a marker so that its turn is given up at once), otherwise
 * packet length + 1 (so that an empty packet is not an empty slot). */
#define OVERSIZE UINT32_MAX

/* A sender restart must be told from ordinary late packets: wait for at
 * least this many far-behind packets in a row even with tiny windows. */
#define RESYNC_MIN 8

/* A power of two (at least 64): the bitmap is indexed with a mask, as a
 * division for every packet delivered costs more than the rest of the
 * in-order path. */
static size_t hist_bits_for(size_t window)
{
  size_t h = 64;
  while (h < window)
    h *= 2;
  return h;
}

static void hist_set(urtp_reorder_t *r, uint64_t pos, bool delivered)
{
  uint64_t b = pos & (r->hist_bits - 1);
  if (delivered)
    r->hist[b / 64] |= (uint64_t)1 << (b % 64);
  else
    r->hist[b / 64] &= ~((uint64_t)1 << (b % 64));
}

static bool hist_get(const urtp_reorder_t *r, uint64_t pos)
{
  uint64_t b = pos & (r->hist_bits - 1);
  return (r->hist[b / 64] >> (b % 64)) & 1;
}

int urtp_reorder_init(urtp_reorder_t *r, size_t window, size_t slot_size)
{
  memset(r, 0, sizeof(*r));
  if (window > 32768 || slot_size == 0)
    return -EINVAL;
  if (window > 0 && (slot_size >= OVERSIZE - 1u || slot_size > SIZE_MAX / window))
    return -ENOMEM;
  size_t hb = hist_bits_for(window);
  r->lens = calloc(window ? window : 1, sizeof(*r->lens));
  r->hist = calloc(hb / 64, sizeof(*r->hist));
  r->arrival = calloc(window ? window : 1, sizeof(*r->arrival));
  if (!r->lens || !r->hist || !r->arrival) {
    urtp_reorder_destroy(r);
    return -ENOMEM;
  }
  if (window > 0) {
    r->mem = malloc(window * slot_size);
    if (!r->mem) {
      urtp_reorder_destroy(r);
      return -ENOMEM;
    }
  }
  r->window = window;
  r->slot_size = slot_size;
  r->hist_bits = hb;
  return 0;
}

void urtp_reorder_destroy(urtp_reorder_t *r)
{
  free(r->mem);
  free(r->lens);
  free(r->hist);
  free(r->arrival);
  memset(r, 0, sizeof(*r));
}

static void deliver_one(urtp_reorder_t *r, const uint8_t *pkt, size_t len, uint64_t arrival,
                        urtp_reorder_deliver_fn deliver, void *user)
{
  r->delivered_at = arrival;
  uint64_t lost = r->pending_lost;
  uint64_t pos = r->next++;
  r->pending_lost = 0;
  hist_set(r, pos, true);
  r->stats.delivered++;
  deliver(user, pkt, len, pos, lost);
}

static void lose_one(urtp_reorder_t *r)
{
  hist_set(r, r->next++, false);
  r->pending_lost++;
  r->stats.lost++;
}

/* Settles position `next`, which holds a stashed packet, a marker or
 * nothing (a gap being given up). */
static void settle_slot(urtp_reorder_t *r, urtp_reorder_deliver_fn deliver, void *user)
{
  size_t i = (size_t)(r->next % r->window);
  uint32_t l = r->lens[i];
  if (l == 0) {
    lose_one(r);
    return;
  }
  r->lens[i] = 0;
  r->stashed--;
  if (l == OVERSIZE)
    lose_one(r);
  else
    deliver_one(r, r->mem + i * r->slot_size, l - 1u, r->arrival[i], deliver, user);
}

/* Delivers stashed packets that have become next in order. */
static void drain(urtp_reorder_t *r, urtp_reorder_deliver_fn deliver, void *user)
{
  while (r->stashed > 0 && r->lens[r->next % r->window] != 0)
    settle_slot(r, deliver, user);
}

/* Gives up every position below target, delivering what waits in slots. */
static void advance_to(urtp_reorder_t *r, uint64_t target, urtp_reorder_deliver_fn deliver,
                       void *user)
{
  /* Slots only cover [next, next + window): walk them while any is used. */
  while (r->next < target && r->stashed > 0)
    settle_slot(r, deliver, user);
  if (r->next >= target)
    return;
  /* The rest is one run of lost positions; only the last hist_bits of them
   * are still visible in the bitmap. */
  uint64_t span = target - r->next;
  if (span >= r->hist_bits) {
    memset(r->hist, 0, r->hist_bits / 8);
  } else {
    for (uint64_t pos = r->next; pos < target; pos++)
      hist_set(r, pos, false);
  }
  r->next = target;
  r->pending_lost += span;
  r->stats.lost += span;
}

/* Starts numbering afresh at seq (first packet, or after a sender restart). */
static void restart(urtp_reorder_t *r, uint16_t seq)
{
  memset(r->hist, 0, r->hist_bits / 8);
  memset(&r->ext, 0, sizeof(r->ext));
  r->next = urtp_seq_extend(&r->ext, seq);
  r->highest = r->next;
  r->started = true;
  r->late_run = 0;
}

void urtp_reorder_push(urtp_reorder_t *r, const uint8_t *pkt, size_t len, uint16_t seq,
                       urtp_reorder_deliver_fn deliver, void *user)
{
  if (!r->started) {
    restart(r, seq);
    deliver_one(r, pkt, len, r->now, deliver, user);
    return;
  }

  uint64_t e = urtp_seq_extend(&r->ext, seq);
  bool behind = e < r->highest;
  if (e < r->next) {
    uint64_t dist = r->next - e;
    /* Far behind the window: not plain reordering; a run of them is a
     * sender that restarted its numbering. */
    if (dist > r->window) {
      size_t need = r->window < RESYNC_MIN ? RESYNC_MIN : r->window;
      if (++r->late_run >= need) {
        urtp_reorder_flush(r, deliver, user);
        restart(r, seq);
        r->stats.resyncs++;
        deliver_one(r, pkt, len, r->now, deliver, user);
        return;
      }
    }
    if (dist <= r->hist_bits && hist_get(r, e))
      r->stats.duplicates++;
    else {
      r->stats.late++;
      r->stats.last_late = seq;
    }
    return;
  }
  r->late_run = 0;
  if (!behind)
    r->highest = e;

  /* A gap is given up when a packet lands `window` or more beyond it (at
   * once with window 0). */
  size_t w = r->window ? r->window : 1;
  if (e - r->next >= w) {
    advance_to(r, e - w + 1, deliver, user);
    if (r->window)
      drain(r, deliver, user);
  }

  if (e == r->next) {
    r->stats.reordered += behind;
    deliver_one(r, pkt, len, r->now, deliver, user);
    if (r->window)
      drain(r, deliver, user);
    return;
  }

  /* Early: copy into its slot. */
  size_t i = (size_t)(e % r->window);
  if (r->lens[i] != 0) {
    r->stats.duplicates++;
    return;
  }
  r->stashed++;
  r->stats.reordered += behind;
  if (len > r->slot_size) {
    r->lens[i] = OVERSIZE;
    r->arrival[i] = r->now;
    return;
  }
  memcpy(r->mem + i * r->slot_size, pkt, len);
  r->lens[i] = (uint32_t)len + 1u;
  r->arrival[i] = r->now;
}

void urtp_reorder_flush(urtp_reorder_t *r, urtp_reorder_deliver_fn deliver, void *user)
{
  while (r->stashed > 0)
    settle_slot(r, deliver, user);
}

void urtp_reorder_restart(urtp_reorder_t *r, urtp_reorder_deliver_fn deliver, void *user)
{
  urtp_reorder_flush(r, deliver, user);
  r->started = false;
  r->late_run = 0;
  r->pending_lost = 0;
}

void urtp_reorder_push_at(urtp_reorder_t *r, const uint8_t *pkt, size_t len, uint16_t seq,
                          uint64_t now, urtp_reorder_deliver_fn deliver, void *user)
{
  r->now = now;
  urtp_reorder_push(r, pkt, len, seq, deliver, user);
}

/* Arrival of the packet that has waited longest; only with stashed > 0.
 * A scan of the window, done once per expiry check rather than per packet. */
static uint64_t oldest_arrival(const urtp_reorder_t *r)
{
  uint64_t oldest = UINT64_MAX;
  for (size_t i = 0; i < r->window; i++)
    if (r->lens[i] != 0 && r->arrival[i] < oldest)
      oldest = r->arrival[i];
  return oldest;
}

uint64_t urtp_reorder_deadline(const urtp_reorder_t *r, uint64_t max_wait)
{
  if (r->stashed == 0)
    return UINT64_MAX;
  uint64_t oldest = oldest_arrival(r);
  return oldest > UINT64_MAX - max_wait ? UINT64_MAX : oldest + max_wait;
}

void urtp_reorder_expire(urtp_reorder_t *r, uint64_t now, uint64_t max_wait,
                         urtp_reorder_deliver_fn deliver, void *user)
{
  /* Any waiting packet proves the gap in front of all of them: the oldest
   * one's wait is that gap's age. Give it up, deliver the run behind it,
   * and look again at what still waits. */
  while (r->stashed > 0 && urtp_reorder_deadline(r, max_wait) <= now) {
    while (r->lens[r->next % r->window] == 0)
      lose_one(r);
    drain(r, deliver, user);
  }
}
