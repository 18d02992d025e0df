/* SPDX-License-Identifier: BSD-2-Clause */
/* A receiver's loss tracker: see urtp/nack.h. */
#include "urtp/nack.h"

#include <string.h>

#include "urtp/rtcp.h"

#define MS 1000000ull

static urtp_nack_entry_t *at(urtp_nack_t *t, size_t i)
{
  return &t->e[(t->head + i) % URTP_NACK_MAX];
}

void urtp_nack_init(urtp_nack_t *t, const urtp_nack_config_t *cfg)
{
  memset(t, 0, sizeof(*t));
  t->cfg = *cfg;
  if (!t->cfg.reorder_delay)
    t->cfg.reorder_delay = 5 * MS;
  if (!t->cfg.deadline)
    t->cfg.deadline = 200 * MS;
  if (!t->cfg.initial_rtt)
    t->cfg.initial_rtt = 40 * MS;
  if (!t->cfg.max_gap)
    t->cfg.max_gap = 3000;
  t->rtt = t->cfg.initial_rtt;
  t->rttvar = t->rtt / 8;
  t->earliest = UINT64_MAX;
}

/* The entry at the front leaves: lost unless it was answered. */
static void pop(urtp_nack_t *t)
{
  urtp_nack_entry_t *e = at(t, 0);
  if (!e->done || e->gave_up)
    t->st.lost++;
  t->head = (t->head + 1) % URTP_NACK_MAX;
  t->count--;
}

static void clear(urtp_nack_t *t)
{
  while (t->count)
    pop(t);
  t->head = 0;
  t->earliest = UINT64_MAX;
}

void urtp_nack_reset(urtp_nack_t *t)
{
  clear(t);
  t->started = t->probation = false;
}

/* The entry of extended seq, or NULL: a binary search (ascending). */
static urtp_nack_entry_t *find(urtp_nack_t *t, uint64_t seq)
{
  size_t lo = 0, hi = t->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    urtp_nack_entry_t *e = at(t, mid);
    if (e->seq == seq)
      return e;
    if (e->seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

bool urtp_nack_missing(const urtp_nack_t *t, uint16_t seq)
{
  int16_t d = (int16_t)(seq - (uint16_t)t->highest);
  if (!t->count || d >= 0)
    return false;
  const urtp_nack_entry_t *e = find((urtp_nack_t *)t, t->highest - (uint64_t)(-(int32_t)d));
  return e && (!e->done || e->gave_up);
}

/* The answer had its chance: a round trip and four times its deviation,
 * at least half a round trip more, and at least URTP_NACK_MIN_RETRY (a
 * round trip measured on loopback would ask every few microseconds). */
static uint64_t retry_interval(const urtp_nack_t *t)
{
  uint64_t spread = 4 * t->rttvar > t->rtt / 2 ? 4 * t->rttvar : t->rtt / 2;
  uint64_t retry = t->rtt + spread;
  return retry > URTP_NACK_MIN_RETRY ? retry : URTP_NACK_MIN_RETRY;
}

static void arrived(urtp_nack_t *t, uint64_t seq, uint64_t now)
{
  urtp_nack_entry_t *e = find(t, seq);
  if (!e || (e->done && !e->gave_up))
    return;                     /* not missing, or a duplicate */
  if (e->gave_up) {
    t->st.late++;
    e->gave_up = false;         /* answered after all: not lost */
    return;
  }
  e->done = true;
  if (!e->tries) {
    t->st.reordered++;
    return;
  }
  t->st.recovered++;
  if (e->tries == 1 && now >= e->asked) {
    /* RFC 6298's estimator: the mean and the mean deviation */
    uint64_t sample = now - e->asked;
    if (t->rtt_measured) {
      uint64_t dev = sample > t->rtt ? sample - t->rtt : t->rtt - sample;
      t->rttvar = (3 * t->rttvar + dev) / 4;
      t->rtt = (7 * t->rtt + sample) / 8;
    } else {
      /* the first: a quarter of it for the deviation (RFC 6298 takes half:
       * a spurious TCP retransmission is costly, a spurious NACK costs a
       * packet); what was asked on the initial guess is asked again as
       * the measured round trip says */
      t->rtt = sample;
      t->rttvar = sample / 4;
      uint64_t retry = retry_interval(t);
      for (size_t i = 0; i < t->count; i++) {
        urtp_nack_entry_t *o = at(t, i);
        if (!o->done && o->tries && o->asked + retry < o->next) {
          o->next = o->asked + retry;
          if (o->next < t->earliest)
            t->earliest = o->next;
        }
      }
    }
    t->rtt_measured = true;
  }
}

/* seq .. seq + n - 1 went missing at now. */
static void open_gap(urtp_nack_t *t, uint64_t seq, uint64_t n, uint64_t now)
{
  for (uint64_t i = 0; i < n; i++) {
    if (t->count == URTP_NACK_MAX) {
      t->st.evicted += !at(t, 0)->done;
      pop(t);
    }
    urtp_nack_entry_t *e = at(t, t->count++);
    *e = (urtp_nack_entry_t){ .seq = seq + i, .next = now + t->cfg.reorder_delay,
                              .deadline = now + t->cfg.deadline };
    t->st.missing++;
  }
  if (now + t->cfg.reorder_delay < t->earliest)
    t->earliest = now + t->cfg.reorder_delay;
}

void urtp_nack_packet(urtp_nack_t *t, uint16_t seq, uint64_t now)
{
  if (!t->started) {
    t->started = true;
    t->highest = 0x10000ull + seq;  /* room below for late ones */
    return;
  }
  int16_t d = (int16_t)(seq - (uint16_t)t->highest);
  if (d == 1) {
    t->highest++;
    return;
  }
  uint32_t dist = (uint32_t)(d < 0 ? -(int32_t)d : d);
  if ((d > 0 ? dist - 1 : dist) > t->cfg.max_gap) {
    /* a jump, once the next packet follows it (as RFC 3550 A.1 does):
     * one stray datagram does not clear what is pending */
    if (t->probation && seq == t->bad_seq) {
      t->st.jumps++;
      clear(t);
      t->highest = 0x10000ull + seq;
      t->probation = false;
    } else {
      t->probation = true;
      t->bad_seq = (uint16_t)(seq + 1);
    }
    return;
  }
  t->probation = false;
  if (d <= 0) {
    if (t->count)
      arrived(t, t->highest - dist, now);
    return;
  }
  open_gap(t, t->highest + 1, (uint64_t)d - 1, now);
  t->highest += (uint64_t)d;
}

unsigned urtp_nack_due(urtp_nack_t *t, uint64_t now, uint16_t *seqs, unsigned cap)
{
  if (!t->count || now < t->earliest)
    return 0;
  /* answered entries leave; those given up linger a deadline more, so
   * that an answer arriving then counts as late, not as nothing */
  uint64_t earliest = UINT64_MAX;
  while (t->count) {
    urtp_nack_entry_t *e = at(t, 0);
    if (!e->done)
      break;
    if (e->gave_up && now < e->deadline + t->cfg.deadline) {
      earliest = e->deadline + t->cfg.deadline;
      break;
    }
    pop(t);
  }
  uint64_t retry = retry_interval(t);
  unsigned n = 0, pairs = 0;
  uint16_t pid = 0;
  for (size_t i = 0; i < t->count; i++) {
    urtp_nack_entry_t *e = at(t, i);
    if (e->done)
      continue;
    if (e->next > now) {
      if (e->next < earliest)
        earliest = e->next;
      continue;
    }
    /* an answer asked for now arrives about a round trip later */
    if (now + t->rtt > e->deadline ||
        (t->cfg.max_retries && e->tries >= t->cfg.max_retries)) {
      e->done = e->gave_up = true;
      if (e->deadline + t->cfg.deadline < earliest)
        earliest = e->deadline + t->cfg.deadline;   /* when it leaves */
      continue;
    }
    uint16_t s = (uint16_t)e->seq;
    bool new_pair = !n || (uint16_t)(s - pid) > 16;
    if (n == cap || (new_pair && pairs == URTP_RTCP_MAX_NACK_PAIRS)) {
      earliest = now;         /* more is due: for the caller's next call */
      break;
    }
    if (new_pair) {
      pid = s;
      pairs++;
    }
    seqs[n++] = s;
    e->tries++;
    e->asked = now;
    e->next = now + retry;
    if (e->next < earliest)
      earliest = e->next;
    t->st.requests++;
  }
  t->earliest = earliest;
  return n;
}

void urtp_nack_rtx_gap(urtp_nack_t *t, uint16_t seq, unsigned lost, uint64_t now)
{
  int16_t d = (int16_t)(seq - (uint16_t)t->highest);
  if (!lost || !t->count || d >= 0)
    return;
  const urtp_nack_entry_t *x = find(t, t->highest - (uint64_t)(-(int32_t)d));
  if (!x || x->done || !x->tries)
    return;
  /* The sender answers in the order it was asked (ascending within a
   * NACK): what was asked before x, still unanswered, lost its answer. */
  for (size_t i = 0; i < t->count && lost; i++) {
    urtp_nack_entry_t *e = at(t, i);
    if (e == x || e->done || !e->tries || e->next <= now)
      continue;
    if (e->asked > x->asked || (e->asked == x->asked && e->seq > x->seq))
      continue;
    e->next = now;
    lost--;
    t->st.fast_retries++;
    t->earliest = now;          /* (no entry is due before now) */
  }
}

void urtp_nack_set_rtt(urtp_nack_t *t, uint64_t rtt)
{
  if (!t->rtt_measured && rtt) {
    t->rtt = rtt;
    t->rttvar = rtt / 8;
  }
}

void urtp_nack_stats(const urtp_nack_t *t, urtp_nack_stats_t *out)
{
  *out = t->st;
  out->rtt = t->rtt;
}
