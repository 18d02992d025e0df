/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/cc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_GAP_US 2500         /* a longer pause in sending ends a group */
#define GROUP_SPAN_US 50000       /* ... and so does this much sending */
#define TRAIN_MIN_AFTER 2        /* packets from the second send on */
#define TRAIN_MIN_SPAN_US 2000   /* ... over this long at least */
#define DELIVERED_WINDOW_US 500000
#define DELIVERED_MIN_SPAN_US 200000
#define RECENT_WINDOW_US 150000
#define RECENT_MIN_SPAN_US 80000
#define QUEUED_US 10000           /* a packet that queued this long ... */
#define QUEUED_MIN 6              /* ... and this many of them ... */
#define QUEUED_MIN_SPAN_US 10000  /* ... over this long time the link */
#define SERVED_DROP 0.7           /* ... cuts go from it below this x the mean */
#define STEP_WINDOW_US 30000      /* ... and of the last this long below ... */
#define STEP_DROP 0.5             /* ... this x the mean, with ... */
#define STEP_QUEUE_US 150000      /* ... this much queue coming: a step down */
#define STEP_ALONE 0.7            /* ... for a flow delivering this x the trains' */
#define STEP_CUT_MIN 0.5          /* of the link's rate: the deepest such cut */
#define STEP_HOLD_US 2000000      /* pacing at the target after it, at most */
#define TRAIN_WINDOW_US 1000000
#define FORGET_QUIET_US 3000000   /* no forgetting by trains this soon after a delay cut */
#define LB_OUTRANK 1.4            /* an unspread train beyond this x the spread */
#define LB_ALONE 0.8              /* ... while we deliver this x their capacity */
#define LB_MIN_SPAN_US 8000       /* ... and lasting this long */
#define LOSS_WINDOW 20
#define TREND_GAIN 4.0
#define TREND_MAX_DELTAS 60
#define THRESHOLD_INIT 12.5
#define K_UP 0.0087
#define K_DOWN 0.039
#define OVERUSE_TIME_US 10000
#define BETA 0.85
#define QUEUE_BETA 0.95
#define QUEUE_DRAIN_US 300000
#define QUEUE_CUT_MIN 0.7         /* of the rate: the deepest cut on the queue */
#define SHORT_QUEUE_US 40000      /* alone, a queue under this ... */
#define SHORT_DRAIN_US 1000000    /* ... drains over this long */
#define SHORT_AGAIN_US 1000000    /* ... from the target when cut this recently */
#define SHORT_ALONE 0.85          /* alone: delivering this x the trains' capacity */
#define SHORT_TRAINS 1.1          /* ... and no train of ... */
#define SHORT_SPAN_US 3000000     /* ... the last this long above this x it */
#define CUT_FALL_US 1000000       /* no delay cut this soon after one while its queue falls */
#define CUT_SHARE 0.35            /* of the trains' capacity: below, delay cuts scale down */
#define DEEP_SHORT 0.25           /* an encoder making under this x the target: no delay cut */
#define RAISE_SHARE 0.9
#define GROW_SHARE 0.97           /* of the trains' capacity: growth stops */
#define QUEUE_WINDOW_US 100000
#define PROBE_ABOVE 1.25
#define PROBE_FACTOR 2.0
#define RAISE_FAIL_US 1000000
#define CEILING_US 5000000
#define PULL_US 5000000           /* a raise this recent ... */
#define PULL_SPAN_US 2000000      /* ... is taken back if no train of this long showed more */
#define PROBE_INTERVAL_US 1000000
#define LEAD 1.25                 /* a raise: the encoder asked for up to this x the target */
#define LEAD_DONE 0.95            /* ... until we deliver this x the target */
#define LEAD_US 3000000           /* ... or this long after the raise */
#define LEAD_ALONE_US 3000000     /* ... for a flow alone on the path this recently */
#define ALONE_TAU_S 1.0           /* alone: for this x ... */
#define ALONE_FRAC 0.5            /* ... of the time, an average */
#define RTT_MEMORY_US 5000000
#define JITTER_INIT_US 2000.0
#define COMPETE_GAP_US 1500000    /* cuts further apart are episodes apart */
#define COMPETE_SHARE 0.2         /* ... while we deliver under this x the path */
#define COMPETE_PACING 1.25      /* competing, the pacer at this x the target */
#define COMPETE_BETA 0.85         /* competing, a loss cuts to this x */
#define COMPETE_EMPTY_US 3000000  /* an empty queue this long ends competition */
#define COMPETE_RECHECK_US 2000000 /* cuts this long after it resume it */
#define COMPETE_RECHECK_GAP_US 4000000 /* ... the first this late at most */

void urtp_cc_init(urtp_cc_t *cc, const urtp_cc_config_t *cfg)
{
  memset(cc, 0, sizeof(*cc));
  cc->cfg.min_bps = cfg && cfg->min_bps ? cfg->min_bps : URTP_CC_DEFAULT_MIN;
  cc->cfg.max_bps = cfg && cfg->max_bps ? cfg->max_bps : URTP_CC_DEFAULT_MAX;
  if (cc->cfg.max_bps < cc->cfg.min_bps)
    cc->cfg.max_bps = cc->cfg.min_bps;
  cc->cfg.start_bps = cfg && cfg->start_bps ? cfg->start_bps : URTP_CC_DEFAULT_START;
  cc->target = (double)cc->cfg.start_bps;
  urtp_cc_set_bounds(cc, 0, 0);
  cc->threshold = THRESHOLD_INIT;
  /* until the path's jitter is known, a train's ends are taken to move by
   * a millisecond or two */
  cc->jitter_us = JITTER_INIT_US;
  cc->base_slot = -1;
  cc->carried_slot = -1;
  for (size_t i = 0; i < URTP_CC_BASE_SLOTS; i++)
    cc->base[i] = INT64_MAX;
  cc->last_cut = cc->last_raise = cc->last_delay_cut = cc->last_shared_cut = INT64_MIN / 2;
}

void urtp_cc_set_bounds(urtp_cc_t *cc, uint64_t min_bps, uint64_t max_bps)
{
  if (min_bps)
    cc->cfg.min_bps = min_bps;
  if (max_bps)
    cc->cfg.max_bps = max_bps;
  if (cc->cfg.max_bps < cc->cfg.min_bps)
    cc->cfg.max_bps = cc->cfg.min_bps;
  if (cc->target < (double)cc->cfg.min_bps)
    cc->target = (double)cc->cfg.min_bps;
  if (cc->target > (double)cc->cfg.max_bps)
    cc->target = (double)cc->cfg.max_bps;
}

uint64_t urtp_cc_target(const urtp_cc_t *cc)
{
  return (uint64_t)cc->target;
}

/* Encoders follow a raise late (x264enc, asked for 22.3 Mbit/s after
 * 10, made 18.2 a second later and 21.5 two seconds later: 5.1's step up
 * converged in 4.2-6.8 s), so after a raise it is asked for more until
 * it delivers nearly the target (see update). One that follows at once
 * ends that in a few hundred ms. */
uint64_t urtp_cc_encoder(const urtp_cc_t *cc)
{
  double ask = cc->lead_until ? LEAD * cc->target : cc->target;
  if (ask > (double)cc->cfg.max_bps)
    ask = (double)cc->cfg.max_bps;
  return (uint64_t)ask;
}

static double capacity_estimate(const urtp_cc_t *cc, int64_t now, size_t *spread_n);

uint64_t urtp_cc_pacing(const urtp_cc_t *cc)
{
  /* after a step down's deep cut, the bottleneck's buffer is full of
   * what was in flight: a frame sent faster than the link loses its tail */
  if (cc->stepped)
    return (uint64_t)cc->target;
  /* competing for a full drop-tail buffer, a frame's burst loses more
   * of its packets than a steady stream does */
  double p = cc->target * (cc->competing ? COMPETE_PACING : URTP_CC_PACING_FACTOR);
  size_t spread;
  double c = capacity_estimate(cc, cc->last_update, &spread);
  /* only a capacity the path showed (spread trains) bounds the pace: a
   * lower bound is the pace itself, and 1.25 x the pace would hold the
   * trains to the speed they were sent at (and the pacer, which sends a
   * little under its rate, would lower it, train after train) */
  if (c > 0 && spread) {
    double cap = PROBE_ABOVE * c;
    if (cap < 1.1 * cc->target)
      cap = 1.1 * cc->target;
    if (p > cap)
      p = cap;
  }
  return (uint64_t)p;
}

uint64_t urtp_cc_pacing_for(urtp_cc_t *cc, size_t bytes, bool backlog, int64_t now)
{
  double avg = cc->frame_avg;
  bool key = avg > 0 && (double)bytes > 2 * avg;
  cc->frame_avg = avg > 0 ? 0.95 * avg + 0.05 * (double)bytes : (double)bytes;
  uint64_t p = urtp_cc_pacing(cc);
  size_t spread;
  double c = capacity_estimate(cc, cc->last_update, &spread);
  double floor = c > cc->target ? c : cc->target;
  if (!key && !cc->stepped && now - cc->last_probe >= PROBE_INTERVAL_US) {
    /* a probe: this frame at twice what is known (the target, before
     * any train was measured: at the start, too) */
    cc->last_probe = now;
    cc->st.probes++;
    return (uint64_t)(PROBE_FACTOR * floor);
  }
  if (c <= 0)
    return p;
  /* the capacity, or a little above the target so that a backlog drains */
  if ((backlog || key) && (double)p > floor) {
    double k = 1.02 * cc->target > c ? 1.02 * cc->target : c;
    p = (uint64_t)((double)p < k ? (double)p : k);
  }
  return p;
}

/* --- what arrived ---------------------------------------------------------- */

static void delivered_add(urtp_cc_t *cc, int64_t arrival, int64_t owd, uint32_t bytes)
{
  cc->ack[cc->ack_head] = (urtp_cc_ack_t){ arrival, owd, bytes };
  cc->ack_head = (cc->ack_head + 1) % URTP_CC_ACK_RING;
  if (cc->ack_n < URTP_CC_ACK_RING)
    cc->ack_n++;
}

static double delivered_over(const urtp_cc_t *cc, int64_t window, int64_t min_span);

/* The latest arrival among the packets remembered (arrivals need not come
 * in order). */
static int64_t newest_arrival(const urtp_cc_t *cc)
{
  int64_t newest = INT64_MIN;
  for (size_t i = 0; i < cc->ack_n; i++) {
    int64_t a = cc->ack[(cc->ack_head + URTP_CC_ACK_RING - 1 - i) % URTP_CC_ACK_RING].arrival;
    if (a > newest)
      newest = a;
  }
  return newest;
}

/* Bits per second over the last DELIVERED_WINDOW_US of arrivals; 0 while
 * they span too little to say. */
static double delivered_rate(const urtp_cc_t *cc)
{
  return delivered_over(cc, DELIVERED_WINDOW_US, DELIVERED_MIN_SPAN_US);
}

/* The same over the last RECENT_WINDOW_US: while a queue stands, what the
 * bottleneck serves now (after a drop in capacity, the half-second mean
 * still says what it served before). */
static double delivered_recent(const urtp_cc_t *cc)
{
  return delivered_over(cc, RECENT_WINDOW_US, RECENT_MIN_SPAN_US);
}

static double delivered_over(const urtp_cc_t *cc, int64_t window, int64_t min_span)
{
  if (!cc->ack_n)
    return 0;
  int64_t newest = newest_arrival(cc), oldest = INT64_MAX;
  uint64_t bytes = 0;
  for (size_t i = 0; i < cc->ack_n; i++) {
    const urtp_cc_ack_t *e = &cc->ack[(cc->ack_head + URTP_CC_ACK_RING - 1 - i) %
                                           URTP_CC_ACK_RING];
    if (e->arrival < newest - window)
      continue;
    bytes += e->bytes;
    if (e->arrival < oldest)
      oldest = e->arrival;
  }
  int64_t span = newest - oldest;
  if (span < min_span)
    return 0;
  return (double)bytes * 8e6 / (double)span;
}

/* --- queue: one-way delay over its recent minimum -------------------------- */

/* The slot of second s (any sign). */
static size_t base_idx(int64_t s)
{
  int64_t m = s % URTP_CC_BASE_SLOTS;
  return (size_t)(m < 0 ? m + URTP_CC_BASE_SLOTS : m);
}

static void base_add(urtp_cc_t *cc, int64_t send, int64_t owd)
{
  int64_t slot = send >= 0 ? send / 1000000 : -((-send + 999999) / 1000000);
  if (cc->base_slot < 0 || slot > cc->base_slot) {
    int64_t from = cc->base_slot < 0 || slot - cc->base_slot > URTP_CC_BASE_SLOTS
                       ? slot - URTP_CC_BASE_SLOTS + 1 : cc->base_slot + 1;
    for (int64_t s = from; s <= slot; s++)
      cc->base[base_idx(s)] = INT64_MAX;
    cc->base_slot = slot;
  } else if (slot <= cc->base_slot - URTP_CC_BASE_SLOTS) {
    return;                     /* older than the window */
  }
  int64_t *b = &cc->base[base_idx(slot)];
  if (owd < *b)
    *b = owd;
}

static int64_t base_min(const urtp_cc_t *cc)
{
  int64_t m = INT64_MAX;
  for (size_t i = 0; i < URTP_CC_BASE_SLOTS; i++)
    if (cc->base[i] < m)
      m = cc->base[i];
  return m;
}

/* What the bottleneck served while a queue stood: over the arrivals of
 * the last RECENT_WINDOW_US, those that had queued QUEUED_US or more (the
 * link was busy for that long up to each), the bytes after the first over
 * their span; 0 when there are too few, or when two came further apart
 * than QUEUED_US (the link may have idled between them: a flow at its
 * encoder's floor, one small picture every 33 ms behind another flow's
 * queue, read as its own rate) or than 4 x their mean (it served another
 * flow between them: what they show is then our share, which frame
 * bursts make swing). After a drop in capacity this is the new rate at
 * once, where the recent mean still mixes in arrivals from before.
 * With `now_only`, of the last STEP_WINDOW_US only, and of the newest
 * run of them no more than QUEUED_US apart: the link's rate this moment
 * (a step down's, not mixed with a standing queue's at the old rate
 * before it, nor hidden by a gap after a probe's own queue). */
static double delivered_queued(const urtp_cc_t *cc, bool now_only)
{
  int64_t base = base_min(cc);
  if (!cc->ack_n || base == INT64_MAX)
    return 0;
  int64_t newest = newest_arrival(cc);
  int64_t first = INT64_MAX, last = INT64_MIN, prev = INT64_MIN, gap = 0;
  uint64_t bytes = 0, first_bytes = 0;
  size_t n = 0;
  for (size_t i = 0; i < cc->ack_n; i++) {
    const urtp_cc_ack_t *e = &cc->ack[(cc->ack_head + URTP_CC_ACK_RING - 1 - i) %
                                           URTP_CC_ACK_RING];
    if (e->arrival < newest - (now_only ? STEP_WINDOW_US : RECENT_WINDOW_US) ||
        e->owd - base < QUEUED_US)
      continue;
    if (now_only && prev != INT64_MIN && llabs(prev - e->arrival) > QUEUED_US)
      break;
    n++;
    bytes += e->bytes;
    if (prev != INT64_MIN && llabs(prev - e->arrival) > gap)
      gap = llabs(prev - e->arrival);
    prev = e->arrival;
    if (e->arrival < first) {
      first = e->arrival;
      first_bytes = e->bytes;
    }
    if (e->arrival > last)
      last = e->arrival;
  }
  if (n < QUEUED_MIN || last - first < QUEUED_MIN_SPAN_US || gap > QUEUED_US ||
      gap * (int64_t)(n - 1) > 4 * (last - first))
    return 0;
  return (double)(bytes - first_bytes) * 8e6 / (double)(last - first);
}

/* --- what the path has carried ---------------------------------------------- */

#define CARRIED_SLOT_US 3000000

static void carried_add(urtp_cc_t *cc, int64_t now, double rate)
{
  int64_t slot = now >= 0 ? now / CARRIED_SLOT_US : -1;
  if (slot < 0)
    return;
  if (cc->carried_slot < 0 || slot > cc->carried_slot) {
    int64_t from = cc->carried_slot < 0 || slot - cc->carried_slot > URTP_CC_CARRIED_SLOTS
                       ? slot - URTP_CC_CARRIED_SLOTS + 1 : cc->carried_slot + 1;
    for (int64_t s = from < 0 ? 0 : from; s <= slot; s++)
      cc->carried[s % URTP_CC_CARRIED_SLOTS] = 0;
    cc->carried_slot = slot;
  } else if (slot <= cc->carried_slot - URTP_CC_CARRIED_SLOTS) {
    return;
  }
  double *c = &cc->carried[slot % URTP_CC_CARRIED_SLOTS];
  if (rate > *c)
    *c = rate;
}

static double carried_max(const urtp_cc_t *cc)
{
  double m = 0;
  for (size_t i = 0; i < URTP_CC_CARRIED_SLOTS; i++)
    m = cc->carried[i] > m ? cc->carried[i] : m;
  return m;
}

/* --- groups: the delay gradient and the trains ------------------------------ */

static void trend_add(urtp_cc_t *cc, double x, double y)
{
  cc->tx[cc->tpos] = x;
  cc->ty[cc->tpos] = y;
  cc->tpos = (cc->tpos + 1) % URTP_CC_TREND_WINDOW;
  if (cc->tn < URTP_CC_TREND_WINDOW)
    cc->tn++;
  if (cc->tn < URTP_CC_TREND_WINDOW)
    return;
  double mx = 0, my = 0;
  for (size_t i = 0; i < cc->tn; i++) {
    mx += cc->tx[i];
    my += cc->ty[i];
  }
  mx /= (double)cc->tn;
  my /= (double)cc->tn;
  double num = 0, den = 0;
  for (size_t i = 0; i < cc->tn; i++) {
    num += (cc->tx[i] - mx) * (cc->ty[i] - my);
    den += (cc->tx[i] - mx) * (cc->tx[i] - mx);
  }
  if (den > 0) {
    cc->prev_trend = cc->trend;
    cc->trend = num / den;
  }
}

/* Compares the trend with the threshold at `now` (arrival clock), which
 * follows it (GCC's adaptive threshold). */
static void detect(urtp_cc_t *cc, int64_t now)
{
  if (cc->tn < URTP_CC_TREND_WINDOW) {
    cc->usage = URTP_CC_NORMAL;
    return;
  }
  unsigned d = cc->deltas < TREND_MAX_DELTAS ? cc->deltas : TREND_MAX_DELTAS;
  double m = (double)d * cc->trend * TREND_GAIN;
  cc->st.trend = m;
  int64_t dt = cc->last_threshold ? now - cc->last_threshold : 0;
  if (dt > 100000)
    dt = 100000;
  if (dt < 0)
    dt = 0;
  cc->last_threshold = now;
  if (m > cc->threshold) {
    if (!cc->over_since)
      cc->over_since = now ? now : 1;
    cc->over_count++;
    if (now - cc->over_since >= OVERUSE_TIME_US && cc->over_count > 1 &&
        cc->trend >= cc->prev_trend) {
      cc->usage = URTP_CC_OVERUSE;
      cc->over_since = 0;
      cc->over_count = 0;
    }
  } else {
    cc->over_since = 0;
    cc->over_count = 0;
    cc->usage = m < -cc->threshold ? URTP_CC_UNDERUSE : URTP_CC_NORMAL;
  }
  /* a jump far beyond the threshold (a route change) does not move it */
  double a = fabs(m);
  if (a <= cc->threshold + 15) {
    double k = a < cc->threshold ? K_DOWN : K_UP;
    /* GCC's k per ms, as an exponential approach: stable whatever the
     * time between groups (a frame's, here) */
    cc->threshold += (a - cc->threshold) * (1 - exp(-k * (double)dt / 1000.0));
    if (cc->threshold < 6)
      cc->threshold = 6;
    if (cc->threshold > 600)
      cc->threshold = 600;
  }
}

static void train_sample(urtp_cc_t *cc, int64_t at, double bps, bool measured, int64_t span)
{
  cc->trains[cc->trains_head] = (urtp_cc_train_t){ at, bps, measured, span };
  cc->trains_head = (cc->trains_head + 1) % URTP_CC_TRAINS;
  if (cc->trains_n < URTP_CC_TRAINS)
    cc->trains_n++;
}

/* A group ended: its head against the previous group's head (the delay
 * its first packet met: a queue our own burst built behind it does not
 * count), and its spread as a train. */
static void group_done(urtp_cc_t *cc, const urtp_cc_group_t *g, int64_t first_arrival,
                       uint64_t bytes, unsigned n, int64_t now)
{
  if (cc->prev.valid) {
    int64_t send_d = g->first_send - cc->prev.first_send;
    int64_t arr_d = first_arrival - cc->prev.last_arrival;
    double d = (double)(arr_d - send_d) / 1000.0;
    if (fabs(d) > 1000) {
      /* a jump of a second: a new path, or the receiver's clock; start over */
      cc->acc = cc->smoothed = 0;
      cc->tn = cc->tpos = 0;
      cc->deltas = 0;
    } else {
      cc->acc += d;
      cc->smoothed = 0.9 * cc->smoothed + 0.1 * cc->acc;
      /* as RFC 3550's interarrival jitter, over group heads */
      cc->jitter_us += (fabs(d) * 1000.0 - cc->jitter_us) / 16;
      if (cc->deltas < UINT32_MAX)
        cc->deltas++;
      trend_add(cc, (double)(first_arrival - cc->first_arrival) / 1000.0, cc->smoothed);
      detect(cc, first_arrival);
    }
  } else {
    cc->first_arrival = first_arrival;
  }
  /* prev keeps the head's times (last_arrival holds its arrival) */
  cc->prev = (urtp_cc_group_t){ g->first_send, g->last_send, first_arrival, true };
  /* the train from the second send on: what a token bucket lets through
   * at once ahead of a queue (the first send's packets, the bucket's
   * burst) says nothing of the rate behind it */
  (void)bytes;
  (void)n;
  if (cc->train.n2 < TRAIN_MIN_AFTER || !cc->train.bytes2 || g->first_send < cc->trains_from)
    return;
  int64_t send_span = g->last_send - cc->train.second_send;
  int64_t arr_span = cc->train.last_arrival - cc->train.second_arrival;
  bytes = cc->train.bytes2;
  /* too short to time at the receiver's 250 us steps (two packets a step
   * apart read 44.8 Mbit/s, and such bounds outranked the spread trains:
   * a raise to 17 Mbit/s on a 10 Mbit/s link) */
  if (arr_span <= 0 || (arr_span < TRAIN_MIN_SPAN_US && send_span < TRAIN_MIN_SPAN_US))
    return;
  /* spread: arriving slower than sent, beyond the receiver's 250 us steps
   * and beyond what the path's jitter does to a train's ends (a late last
   * packet stretches a train; only the stretched ones would be taken, and
   * the capacity read low) */
  if (arr_span > send_span + send_span / 10 + 250 + (int64_t)(2 * cc->jitter_us)) {
    train_sample(cc, now, (double)bytes * 8e6 / (double)arr_span, true, arr_span);
    return;
  }
  /* not spread: the path carried it as fast as it went, which says no
   * more than what we pace at; a burst a token bucket let through at
   * line rate (a few packets sent at once) would say far more */
  double lb = (double)bytes * 8e6 / (double)(arr_span > send_span ? arr_span : send_span);
  double known = cc->last_capacity > cc->target ? cc->last_capacity : cc->target;
  if (lb > PROBE_FACTOR * known)
    lb = PROBE_FACTOR * known;
  train_sample(cc, now, lb, false, arr_span > send_span ? arr_span : send_span);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Whether we deliver about what the path's capacity is (alone on it, or
 * the other flows' share is no room of ours): now, or when last cut (just
 * after a cut, the encoder has followed it). */
static bool fills(const urtp_cc_t *cc, double capacity)
{
  double d = cc->cap_valid && cc->cap_avg > cc->delivered ? cc->cap_avg : cc->delivered;
  return capacity > 0 && d >= LB_ALONE * capacity;
}

/* What the recent trains say of the capacity: *spread_n of them were
 * spread by the path (the last 2 s; their median is returned, or the
 * largest lower bound of the last second when more), else that lower
 * bound (*spread_n 0); 0: none. */
static double capacity_estimate(const urtp_cc_t *cc, int64_t now, size_t *spread_n)
{
  double v[URTP_CC_TRAINS], lb = 0;
  size_t n = 0;
  for (size_t i = 0; i < cc->trains_n; i++) {
    const urtp_cc_train_t *t = &cc->trains[i];
    if (t->measured && t->at >= now - 2 * TRAIN_WINDOW_US)
      v[n++] = t->bps;
    else if (!t->measured && t->at >= now - TRAIN_WINDOW_US && t->bps > lb)
      lb = t->bps;
  }
  *spread_n = n;
  if (!n)
    return lb;
  qsort(v, n, sizeof v[0], cmp_double);
  double med = v[n / 2];
  /* a train the path carried unspread well faster than the spread ones
   * say (a probe, after a step up) outranks them: jitter stretches trains
   * paced near the capacity known, and alone they would let it grow only
   * as fast as the pace above it. Not one a little faster: a token
   * bucket's burst lets a short train through at the pace (5.1 at 10
   * Mbit/s, tbf: trains of 2-7 packets read 11-12.8 Mbit/s, every few
   * seconds; the target followed them above the link, and back) while
   * we fill what the spread ones measure; nor a short one (a tbf at 10
   * Mbit/s let three packets through in 2 ms: 16.8 Mbit/s). Sharing the
   * path, the other flow's room is what such trains show, and they are
   * how the smaller flow grows (held to 1.25 x always, a real 5.2 run's
   * flows drifted apart: 1.3-3.0) */
  if (fills(cc, med)) {
    lb = 0;
    for (size_t i = 0; i < cc->trains_n; i++) {
      const urtp_cc_train_t *t = &cc->trains[i];
      if (!t->measured && t->at >= now - TRAIN_WINDOW_US && t->span >= LB_MIN_SPAN_US &&
          t->bps > lb)
        lb = t->bps;
    }
    if (lb <= LB_OUTRANK * med)
      return med;
  }
  return med > lb ? med : lb;
}

/* Trains of the last two seconds that showed more than bps. */
static size_t trains_above(const urtp_cc_t *cc, int64_t now, double bps)
{
  size_t n = 0;
  for (size_t i = 0; i < cc->trains_n; i++)
    n += cc->trains[i].at >= now - 2 * TRAIN_WINDOW_US && cc->trains[i].bps > bps;
  return n;
}

/* The most a train of the last `window` us showed, of those that lasted
 * LB_MIN_SPAN_US at least (a token bucket lets shorter ones through at
 * the pace: at 10 Mbit/s, 3-5 ms trains read 11-12.4). */
static double trains_max(const urtp_cc_t *cc, int64_t now, int64_t window)
{
  double m = 0;
  for (size_t i = 0; i < cc->trains_n; i++) {
    const urtp_cc_train_t *t = &cc->trains[i];
    if (t->at >= now - window && t->span >= LB_MIN_SPAN_US && t->bps > m)
      m = t->bps;
  }
  return m;
}

/* capacity_estimate, remembered (the lower bounds' reference). */
static double capacity_now(urtp_cc_t *cc, int64_t now, size_t *spread_n)
{
  double c = capacity_estimate(cc, now, spread_n);
  if (*spread_n)
    cc->last_capacity = c;
  return c;
}

/* --- the target ------------------------------------------------------------- */

static void cut(urtp_cc_t *cc, double to, int64_t now, uint64_t *counter)
{
  /* after a step down's deep cut, the queue what was in flight made is
   * no news: a cut it asks for that does not go below is none, and does
   * not put off the way back */
  if (cc->stepped && to >= cc->target)
    return;
  /* a cut soon after a raise: the raise went too far, and the level it
   * went to is not tried again for a while (a token bucket's burst, or
   * cross traffic, made the trains look faster than the path) */
  if (cc->raised_to > 0 && now - cc->last_raise < RAISE_FAIL_US) {
    cc->ceiling = 0.95 * cc->raised_to;
    /* and while the queue grew, the path carried what was delivered:
     * that, not the trains, says where the raise should have stopped
     * (on a loaded machine, a tbf whose timer fires late sends its
     * bucket's worth at once, and trains read 1.2-2 x its rate) */
    if (cc->delivered > 0 && 1.05 * cc->delivered < cc->ceiling)
      cc->ceiling = 1.05 * cc->delivered;
    cc->ceiling_until = now + CEILING_US;
    cc->raised_to = 0;
  }
  if (to < cc->target) {
    cc->target = to;
    (*counter)++;
  }
  cc->last_cut = now;
  cc->lead_until = 0;
}

/* A cut that is not of the encoder's own queue (see update), at now: what
 * made us alone is past (after 5.1's step down, a raise that led the
 * encoder on the strength of the second before the step overran the new
 * link: a queue of 110 ms for 1.7 s), and for FORGET_QUIET_US trains do
 * not make the capacity just cut at forgotten. A cut of our own queue
 * does neither: it put off 5.1's step up by those 3 s. */
static void not_alone(urtp_cc_t *cc)
{
  cc->alone_frac = 0;
  cc->alone_at = 0;
}

static void shared_cut(urtp_cc_t *cc, int64_t now)
{
  cc->last_shared_cut = now;
  not_alone(cc);
}

/* Remembers the delivered rate at a cut as the capacity, averaged (GCC's
 * average max bitrate, in bits/s, with its variance). */
static void capacity_seen(urtp_cc_t *cc, double rate)
{
  if (rate <= 0)
    return;
  if (!cc->cap_valid || fabs(rate - cc->cap_avg) > 3 * sqrt(cc->cap_var)) {
    cc->cap_avg = rate;
    cc->cap_var = (0.1 * rate) * (0.1 * rate);
    cc->cap_valid = true;
    return;
  }
  cc->cap_avg = 0.95 * cc->cap_avg + 0.05 * rate;
  double e = rate - cc->cap_avg;
  cc->cap_var = 0.95 * cc->cap_var + 0.05 * e * e;
}

/* A cut on delay at now. Cuts no more than COMPETE_GAP_US apart are one
 * episode; one that lasts URTP_CC_COMPETE_SPAN while we deliver less than
 * COMPETE_SHARE of what the path carries says the queue is another
 * flow's (see cc.h). Not the share alone: after a step down, and at an
 * encoder's floor, we deliver little of what the path carried, and our
 * own queue drains after a cut or two. Not the cuts alone: two of our
 * flows cut each other for longer than that (in the simulation, 1-3
 * times in 125 s), but each has about half the path. */
static void delay_cut(urtp_cc_t *cc, int64_t now)
{
  /* the first cut after competing may find the other flow at a trough */
  int64_t gap = cc->recheck && cc->dcut_n == 1 ? COMPETE_RECHECK_GAP_US : COMPETE_GAP_US;
  if (!cc->dcut_n || now - cc->dcut_last > gap) {
    cc->dcut_first = now;
    cc->dcut_n = 0;
    cc->recheck = false;
  }
  cc->dcut_last = now;
  cc->dcut_n++;
  if (cc->competing || now - cc->dcut_first < URTP_CC_COMPETE_SPAN)
    return;
  size_t spread;
  double path = capacity_estimate(cc, now, &spread);
  /* pictures of one packet (the minimum target, an encoder's floor) make
   * no train: then what the path carried for us in the last 30 s says */
  if (!spread && carried_max(cc) > path)
    path = carried_max(cc);
  if (!cc->recheck && cc->delivered >= COMPETE_SHARE * path)
    return;
  cc->competing = true;
  cc->competing_since = now;
  cc->empty_since = 0;
  cc->st.competes++;
}

/* Competition ends once the queue has been empty (below hold) for
 * COMPETE_EMPTY_US: the other flow left. Or after URTP_CC_COMPETE_TIME,
 * to look again: the episode is taken up where it was, so that cuts that
 * go on for COMPETE_RECHECK_US (the queue still stands, whatever our
 * share now) resume it, and a queue of ours drains and ends it. The
 * first of those cuts may come COMPETE_RECHECK_GAP_US late: cubic's
 * queue drains for a second or two after each of its losses. */
static void compete_update(urtp_cc_t *cc, int64_t now, int64_t queue, bool queue_known,
                           int64_t hold)
{
  if (!cc->competing)
    return;
  if (queue_known && queue < hold) {
    if (!cc->empty_since)
      cc->empty_since = now;
  } else {
    cc->empty_since = 0;
  }
  if (cc->empty_since && now - cc->empty_since >= COMPETE_EMPTY_US) {
    cc->competing = false;
    cc->dcut_n = 0;
  } else if (now - cc->competing_since >= URTP_CC_COMPETE_TIME) {
    cc->competing = false;
    cc->recheck = true;
    cc->dcut_n = 1;
    cc->dcut_first = now - URTP_CC_COMPETE_SPAN + COMPETE_RECHECK_US;
    cc->dcut_last = now;
  }
}

/* The queue (us) that what is in flight makes once it has all reached a
 * link now serving us at `served`: the newest packet reported had queued
 * `queued`, and since it was sent, `since` us ago, we went on at about
 * the target. */
static double queue_coming(const urtp_cc_t *cc, double served, int64_t queued, int64_t since)
{
  double more = cc->target / served - 1;
  return (double)queued + (since > 0 && more > 0 ? (double)since * more : 0);
}

/* After a step down, the capacity last cut at is no more than the link
 * served our queued packets at while the queue drained: the rate the
 * step's cut went from is of the moment of the step, and may mix in the
 * old link's (5.1 at 6 Mbit/s: 7.8, and the way back went to 7.0, a
 * queue of 130-170 ms for 1-2 s). */
static void step_drained(urtp_cc_t *cc)
{
  if (cc->stepped && cc->stepped_link > 0 && cc->stepped_link < cc->cap_avg)
    cc->cap_avg = cc->stepped_link;
}

/* Back from a cut that drained a queue: the delivered rate the cut was
 * made at is what the path carried then (or what the trains measure now,
 * `cap`, when less). */
static void raise_back(urtp_cc_t *cc, int64_t now, double cap, int64_t response)
{
  step_drained(cc);
  double back = cap > 0 && cap < cc->cap_avg ? cap : cc->cap_avg;
  if (cc->cap_valid && cc->target < RAISE_SHARE * back && now - cc->last_cut >= 2 * response &&
      now - cc->last_raise >= response) {
    cc->target = RAISE_SHARE * back;
    cc->last_raise = now;
    cc->raised_to = cc->target;
    cc->st.capacity_raises++;
    cc->stepped = false;
  }
}

/* A delay cut to `to`, made shallower for a flow delivering under
 * CUT_SHARE of what the trains measure the path carries: in proportion
 * to its share. The queue is then mostly another flow's, whose own cut
 * (deeper, the larger its share) drains it; cut as deep, the smaller of
 * two flows lost more of its share at each of the larger one's queues,
 * and was held at an encoder's floor (5.2 at 2.5 Mbit/s: 40 kbit/s of
 * 2.5 Mbit/s, for the rest of the run). */
static double delay_cut_to(const urtp_cc_t *cc, double to, double cap, bool measured)
{
  if (!measured || cap <= 0 || to >= cc->target)
    return to;
  double share = cc->delivered / cap / CUT_SHARE;
  if (share >= 1)
    return to;
  return cc->target * (1 - (1 - to / cc->target) * share);
}

/* The cut on a queue of the encoder's own (see update): one that drains
 * it over SHORT_DRAIN_US below `rate`, and to GROW_SHARE x the trains'
 * capacity `cap` at most. Within SHORT_AGAIN_US of the previous delay
 * cut (`again`), the queue is the encoder making more than asked
 * (x264enc at 6 Mbit/s: 2-4 %), and the cut goes from the target: from
 * what was delivered it asked no less, and the queue stood at 20-40 ms
 * for 3 s. */
static double own_cut_to(const urtp_cc_t *cc, double rate, int64_t queue, double cap,
                         bool again)
{
  if (again && cc->target < rate)
    rate = cc->target;
  return fmin((1 - (double)queue / SHORT_DRAIN_US) * rate, GROW_SHARE * cap);
}

static void update(urtp_cc_t *cc, int64_t now, int64_t queue, bool queue_known,
                   bool queue_since_cut, int64_t newest_send, int64_t newest_queue)
{
  double dt = cc->last_update ? (double)(now - cc->last_update) / 1e6 : 0;
  if (dt < 0)
    dt = 0;
  if (dt > 1)
    dt = 1;
  cc->last_update = now;
  double delivered = cc->delivered;
  carried_add(cc, now, delivered);
  int64_t response = (cc->rtt > 0 ? cc->rtt : 100000) + 100000;
  bool may_cut = now - cc->last_cut >= response;
  size_t spread;
  double cap = capacity_now(cc, now, &spread);
  bool measured = spread > 0;
  /* the capacity last cut at is forgotten once the target is well past it
   * (GCC's three deviations), or the trains show well more: while we fill
   * what they measure, their estimate (one spread short train may be a
   * token bucket's burst: at 10 Mbit/s, two of those in two seconds made
   * it forgotten every few seconds, and the target rose above the link);
   * else two trains of the last two seconds (one may be such a burst).
   * Not three of the last second: the pacer sends a little under its
   * rate, so after a step up only the probe frames (one a second) may
   * show more than 1.2 x, and waiting for three in a second held the
   * target to 2 %/s growth. Not by trains within FORGET_QUIET_US of a
   * cut on delay: sharing a path, trains read the link, not our share
   * (the other flow is idle between its frames), and the larger of two
   * flows went back to 0.9 x the link every few seconds, its queue
   * cutting the other each time. */
  if (cc->cap_valid && (cc->target > cc->cap_avg + 3 * sqrt(cc->cap_var) ||
                        (fills(cc, cap) ? cap > 1.2 * cc->cap_avg
                                        : trains_above(cc, now, 1.2 * cc->cap_avg) >= 2 &&
                                              now - cc->last_shared_cut >= FORGET_QUIET_US)))
    cc->cap_valid = false;

  /* the queue that holds growth, plus a full packet's time at the
   * bottleneck: one-way delays include it, and the least of them (the
   * base) may be a small packet's; below a few Mbit/s that difference
   * alone held a flow (and, sharing the path, the one whose packets
   * least often found the queue empty) */
  double link = measured && cap > delivered ? cap : delivered;
  /* an encoder at its quality floor sends far less than it is asked
   * for (x264enc at 720p: 40 kbit/s of 300): see the growth below, and a
   * cut is then of the target (of the delivered rate it would leave the
   * encoder asked for far less than it can make; sharing a path, such a
   * flow was cut to the minimum by each of the other's queues) */
  bool short_of = delivered > 0 && delivered < 0.5 * cc->target;
  /* no cut on delay: for an encoder making under DEEP_SHORT of the target
   * (x264enc at 720p, asked for 400 kbit/s, made 20-40), whose packets
   * are not what queues, and whose cut would only lower an ask it does
   * not follow (it grows back instead: see the growth below); nor, for
   * CUT_FALL_US after one, while the queue it answered falls (the cut,
   * or the other flow's, is working) */
  bool no_delay_cut =
      (delivered > 0 && delivered < DEEP_SHORT * cc->target) ||
      (queue_known && queue < cc->cut_queue && now - cc->last_delay_cut < CUT_FALL_US);
  int64_t hold = URTP_CC_QUEUE_HOLD +
                 (link > 0 ? (int64_t)(1200 * 8 * 1e6 / (link > 1e6 ? link : 1e6)) : 0);

  /* loss, over each LOSS_WINDOW packets or more */
  double loss = -1;
  if (cc->win_total >= LOSS_WINDOW) {
    loss = (double)cc->win_lost / (double)cc->win_total;
    cc->st.loss = loss;
    cc->win_lost = cc->win_total = 0;
  }

  /* while a queue stands, the link's rate now: cuts go from it when it
   * fell well below the mean (a step down; sharing the link, what it
   * shows swings with the frames) */
  double served = delivered_queued(cc, false);
  if (cc->stepped && served > 0)
    cc->stepped_link = served;
  compete_update(cc, now, queue, queue_known, hold);
  /* competing, the queue is another's up to URTP_CC_COMPETE_QUEUE: only
   * beyond it does delay cut, or hold growth beyond half of it */
  int64_t queue_cut = cc->competing ? URTP_CC_COMPETE_QUEUE : URTP_CC_QUEUE_TARGET;
  if (cc->competing)
    hold = URTP_CC_COMPETE_QUEUE / 2;
  /* alone on the path, a short queue is the encoder's: x264enc's output
   * swings a few % around its ask, and a late frame comes with the next.
   * Such a queue, seen on delay or standing, drains over SHORT_DRAIN_US
   * below what was delivered (x264enc swings back under its ask: often
   * no cut at all), and at most to GROW_SHARE x the trains' capacity (a
   * target above it, from a raise on trains a token bucket let through
   * fast, makes a queue that grows). Not with a cut of 12-15 %, which
   * x264enc answered with a second at 20 % under its new ask (5.1 at 25
   * Mbit/s: 88 % utilisation). Alone: we deliver what the trains
   * measure, and none of the last SHORT_SPAN_US showed much more
   * (sharing, the other flow is idle between its frames, and some of
   * ours, probes, read the link: there, as deep a cut as the other's
   * keeps the two fair). */
  bool alone = !cc->competing && measured && delivered >= SHORT_ALONE * cap &&
               trains_max(cc, now, SHORT_SPAN_US) < SHORT_TRAINS * delivered;
  bool own_queue = alone && !short_of && queue_known && queue < SHORT_QUEUE_US;
  bool own_again = now - cc->last_delay_cut < SHORT_AGAIN_US;
  /* alone, and the encoder making what it is asked for, for at least
   * ALONE_FRAC of about the last second: a raise within
   * LEAD_ALONE_US of that leads the encoder (urtp_cc_encoder). Sharing a
   * path, a flow is alone for moments (the other idle, or at its floor),
   * and two flows whose raises led took each other's share (5.2, asked
   * for more after every raise: one starved in three runs of three). The
   * lead ends once the encoder delivers LEAD_DONE x the target, at a
   * queue, a cut, or LEAD_US after the last raise. */
  double w = exp(-dt / ALONE_TAU_S);
  cc->alone_frac = w * cc->alone_frac + (1 - w) * (alone && delivered >= SHORT_ALONE * cc->target);
  if (cc->alone_frac >= ALONE_FRAC)
    cc->alone_at = now;
  if (cc->lead_until &&
      (delivered >= LEAD_DONE * cc->target || (queue_known && queue >= hold) || now >= cc->lead_until))
    cc->lead_until = 0;

  /* a step down, seen in one feedback: the link serves the packets that
   * queued at well under half the rate delivered. The least delay of the
   * last 100 ms that the rules below go by shows the queue only 100 ms
   * late, and what is sent meanwhile at the old rate overflows the
   * bottleneck's buffer (5.1's step from 25 to 6 Mbit/s: 300 ms of
   * pictures lost, none repairable in time behind a full queue). The cut
   * drains what is in flight too, from the link's new rate. Not a key
   * frame's own queue: its packets arrive at the link's rate. */
  double coming = 0, served_now = 0;
  if (!cc->competing && !short_of && newest_queue > URTP_CC_QUEUE_TARGET && measured &&
      delivered >= STEP_ALONE * cap)
    served_now = delivered_queued(cc, true);  /* a second pass only then */
  if (served_now > 0 && served_now < STEP_DROP * delivered)
    coming = queue_coming(cc, served_now, newest_queue, now - newest_send);
  if (coming > STEP_QUEUE_US) {
    /* nor does a milder cut just before it put it off by a response
     * time: the step is news that cut did not answer (5.1 simulated,
     * seed 20: a cut on the 20 ms standing queue one feedback before
     * the step showed; by a response time later the rate delivered had
     * fallen under STEP_ALONE x the trains', the rule never fired, and
     * 1579 packets overflowed) */
    if (may_cut || !cc->stepped) {
      delay_cut(cc, now);
      shared_cut(cc, now);
      capacity_seen(cc, served_now);
      /* what the trains showed is gone (and what was in flight shows
       * it still): they would lift the target back to it, and make the
       * capacity just seen be forgotten */
      cc->trains_n = cc->trains_head = 0;
      cc->trains_from = now;
      double f = QUEUE_BETA - coming / QUEUE_DRAIN_US;
      double before = cc->target;
      cut(cc, (f < STEP_CUT_MIN ? STEP_CUT_MIN : f) * served_now, now, &cc->st.step_downs);
      if (cc->target < before) {
        cc->stepped = true;
        cc->stepped_at = now;
        cc->stepped_link = served_now;
      }
    }
  } else if (cc->usage == URTP_CC_OVERUSE && (!cc->competing || queue > queue_cut)) {
    if (may_cut && !no_delay_cut) {
      delay_cut(cc, now);
      cc->cut_queue = queue_known ? queue : 0;
      cc->last_delay_cut = now;
      if (!own_queue)
        shared_cut(cc, now);
      double rate = served > 0 && served < SERVED_DROP * delivered ? served : delivered;
      if (!short_of)
        capacity_seen(cc, rate);
      double to = BETA * (rate > 0 && !short_of ? rate : cc->target);
      cut(cc, own_queue ? own_cut_to(cc, rate, queue, cap, own_again) : delay_cut_to(cc, to, cap, measured),
          now, &cc->st.overuses);
    }
  } else if (queue_known && queue > queue_cut) {
    /* and only once packets sent since the last cut met it too: the
     * queue delays its own feedback, and a cut is not seen to work
     * until a queue's length after it (after a step down, cut after cut
     * on a full 300 ms queue took the flows far below the capacity) */
    if (may_cut && queue_since_cut && !no_delay_cut) {
      delay_cut(cc, now);
      cc->cut_queue = queue;
      cc->last_delay_cut = now;
      if (!own_queue)
        shared_cut(cc, now);
      /* below the delivered rate by enough to drain the queue in about
       * QUEUE_DRAIN_US; the rate of the last moments when less (the queue
       * makes it the bottleneck's rate now) */
      double f = QUEUE_BETA - (double)queue / QUEUE_DRAIN_US, recent = delivered_recent(cc);
      double rate = recent > 0 && recent < delivered ? recent : delivered;
      if (served > 0 && served < SERVED_DROP * rate)
        rate = served;
      if (short_of)
        rate = cc->target;
      else
        capacity_seen(cc, rate);
      double to = (f < QUEUE_CUT_MIN ? QUEUE_CUT_MIN : f) * (rate > 0 ? rate : cc->target);
      cut(cc, own_queue ? own_cut_to(cc, rate, queue, cap, own_again) : delay_cut_to(cc, to, cap, measured),
          now, &cc->st.queue_cuts);
    }
  } else if (loss > 0.1) {
    if (may_cut) {
      not_alone(cc);
      cut(cc, cc->target * (1 - 0.5 * loss), now, &cc->st.loss_cuts);
    }
  } else if (cc->competing && loss > 0) {
    /* the other flow's buffer is full: as it does, yield a little */
    if (may_cut)
      cut(cc, COMPETE_BETA * cc->target, now, &cc->st.loss_cuts);
  } else if (cc->stepped && cc->usage == URTP_CC_UNDERUSE && loss <= 0.02 &&
             queue_known && queue < hold) {
    /* after a step down's deep cut the delay falls for a second more
     * than the queue takes to drain (GCC holds meanwhile) */
    raise_back(cc, now, measured ? cap : 0, response);
  } else if ((cc->usage == URTP_CC_NORMAL || cc->competing) && loss <= 0.02 &&
             (!queue_known || queue < hold)) {
    double t = cc->target;
    /* the ceiling below would hold an encoder at its floor there for
     * good: it is asked for more, quickly, up to what the path carried in
     * the last 30 s; once it fills the target, the rules are the usual */
    if (short_of) {
      t *= pow(1.25, dt);
    } else if (cc->cap_valid && t > cc->cap_avg - 3 * sqrt(cc->cap_var)) {
      /* near the capacity last seen: slowly, 2 %/s of it (and at least a
       * packet per response time) */
      double step = 0.02 * cc->cap_avg * dt, pkt = 1200 * 8 * dt * 1e6 / (double)response;
      t += step > pkt ? step : pkt;
    } else {
      t *= pow(1.08, dt);
    }
    /* not beyond what the path has shown it carries, nor beyond a little
     * under the capacity the trains measured: they read it 1-2 % high
     * (the receiver's 250 us steps), and an encoder that makes what it is
     * asked for then built a queue at each approach (5.1 at 10 Mbit/s,
     * 20-70 ms every 3-4 s) */
    double ceiling = 1.5 * delivered + 10000;
    if (short_of && RAISE_SHARE * carried_max(cc) > ceiling)
      ceiling = RAISE_SHARE * carried_max(cc);
    if (measured && GROW_SHARE * cap < ceiling)
      ceiling = GROW_SHARE * cap;
    if ((delivered > 0 || measured) && t > ceiling)
      t = cc->target > ceiling ? cc->target : ceiling;
    cc->target = t;
    raise_back(cc, now, measured ? cap : 0, response);
    /* the trains: new capacity, taken in steps of at most double when the
     * path spread them, of a quarter when they only bound it from below
     * (a token bucket lets short trains through faster than it serves) */
    double to = RAISE_SHARE * cap, step = measured ? 2 : PROBE_ABOVE;
    if (to > step * cc->target)
      to = step * cc->target;
    if (cc->cap_valid && to > cc->cap_avg)
      to = cc->cap_avg;
    /* nor beyond 3 x what the path delivered: trains can read many
     * times the link where the receiver timestamps a backlog at once (a
     * loaded host: 9.3 Mbit/s on a 1.5 Mbit/s tbf, raised to in three
     * doublings before the first queue came back). Not for an encoder
     * long at its floor (no raise for a second: a raise outruns what is
     * delivered until the encoder follows): what it delivers says
     * nothing of the path, and the trains are what lift it (5.2: a flow
     * held at 40 kbit/s) */
    bool at_floor = short_of && now - cc->last_raise >= RAISE_FAIL_US;
    if (delivered > 0 && !at_floor && to > 3 * delivered)
      to = 3 * delivered;
    if (now < cc->ceiling_until && to > cc->ceiling)
      to = cc->ceiling;
    if (to > cc->target * 1.05 && now - cc->last_raise >= response &&
        now - cc->last_cut >= response) {
      cc->target = to;
      cc->last_raise = now;
      cc->raised_to = to;
      cc->st.capacity_raises++;
      /* a raise during a lead carries it on */
      if (cc->lead_until || (cc->alone_at && now - cc->alone_at < LEAD_ALONE_US)) {
        cc->st.leads += !cc->lead_until;
        cc->lead_until = now + LEAD_US;
      }
    }
  }
  /* a raise the trains no longer bear out is taken back to what they
   * measure, once, while alone: below the link, a token bucket full of
   * tokens lets a paced frame through faster than it serves, and after a
   * step up the raises went to 0.9 x 26-28 Mbit/s of a 25 Mbit/s tbf;
   * x264enc, ramping up, reached that 3-4 s later, and the queue it made
   * was cut at by 20 % (5.1: 88-91 % utilisation at 25 Mbit/s). The
   * trains are the link's once the encoder fills what they measure: the
   * bucket stays empty */
  if (measured && !cc->competing && !short_of && cc->raised_to > 0 &&
      cc->pulled != cc->last_raise && now - cc->last_raise < PULL_US && cc->target > cap &&
      delivered >= SHORT_ALONE * cap && delivered >= SHORT_ALONE * cc->target &&
      trains_max(cc, now, PULL_SPAN_US) < SHORT_TRAINS * delivered) {
    cc->target = GROW_SHARE * cap;
    cc->pulled = cc->last_raise;
  }
  /* the way back is open once the queue drained (or, whatever came
   * between, after STEP_HOLD_US) */
  if (cc->stepped && ((queue_known && queue < hold && now - cc->last_cut >= 2 * response) ||
                      now - cc->stepped_at >= STEP_HOLD_US)) {
    step_drained(cc);
    cc->stepped = false;
  }
  urtp_cc_set_bounds(cc, 0, 0);
}

void urtp_cc_feedback(urtp_cc_t *cc, const urtp_twcc_result_t *r, size_t n, int64_t now)
{
  int64_t newest_send = INT64_MIN, least_owd = INT64_MAX, least_since_cut = INT64_MAX;
  /* the newest packet that arrived: when it was sent, and its delay */
  int64_t got_send = INT64_MIN, got_owd = 0;
  cc->st.feedbacks++;
  /* a pause longer than the pacer's own spacing of full packets: below
   * a few Mbit/s the pacer leaves more than GROUP_GAP_US between them,
   * and a frame would be as many groups as packets, never a train, and
   * its delay sampled at any phase of a bigger flow's bursts (see
   * docs/congestion.md, two flows) */
  int64_t gap = (int64_t)(1.5 * 1200 * 8 * 1e6 / (double)urtp_cc_pacing(cc));
  if (gap < GROUP_GAP_US)
    gap = GROUP_GAP_US;
  for (size_t i = 0; i < n; i++) {
    /* what was sent before the last cut tells of the congestion that cut
     * answered: its loss does not cut again (an overflowing 300 ms queue
     * reports loss for 300 ms after a step down, and cut after cut took
     * the target to its minimum). The queue still does: it is there. */
    bool after_cut = r[i].send_us > cc->last_cut;
    cc->st.packets++;
    cc->win_total += after_cut;
    if (r[i].send_us > newest_send)
      newest_send = r[i].send_us;
    if (!r[i].received || r[i].arrival_us == INT64_MIN) {
      cc->st.lost += !r[i].received;
      cc->win_lost += !r[i].received && after_cut;
      continue;
    }
    int64_t send = r[i].send_us, arr = r[i].arrival_us;
    int64_t owd = arr - send;
    delivered_add(cc, arr, owd, r[i].size);
    base_add(cc, send, owd);
    if (send > got_send) {
      got_send = send;
      got_owd = owd;
    }
    if (owd < least_owd)
      least_owd = owd;
    if (send > cc->last_cut && owd < least_since_cut)
      least_since_cut = owd;
    /* groups: a pause in sending, or a long one, ends the current */
    if (cc->cur.valid && (send - cc->cur.last_send > gap ||
                          send - cc->cur.first_send > GROUP_SPAN_US || send < cc->cur.first_send)) {
      group_done(cc, &cc->cur, cc->train.first_arrival, cc->train.bytes, cc->train.n,
                 now);
      cc->cur.valid = false;
    }
    if (!cc->cur.valid) {
      cc->cur = (urtp_cc_group_t){ send, send, arr, true };
      cc->train.first_send = cc->train.last_send = send;
      cc->train.first_arrival = cc->train.last_arrival = arr;
      cc->train.bytes = 0;
      cc->train.n = 1;
      cc->train.second_send = INT64_MIN;
      cc->train.bytes2 = 0;
      cc->train.n2 = 0;
      continue;
    }
    if (send > cc->cur.last_send)
      cc->cur.last_send = send;
    if (arr > cc->cur.last_arrival)
      cc->cur.last_arrival = arr;
    if (arr < cc->train.first_arrival)
      cc->train.first_arrival = arr;
    if (arr > cc->train.last_arrival)
      cc->train.last_arrival = arr;
    cc->train.bytes += r[i].size;
    cc->train.n++;
    if (cc->train.second_send == INT64_MIN && send > cc->train.first_send) {
      cc->train.second_send = send;
      cc->train.second_arrival = arr;
      cc->train.n2 = 1;
    } else if (cc->train.second_send != INT64_MIN) {
      if (arr < cc->train.second_arrival)
        cc->train.second_arrival = arr;
      cc->train.bytes2 += r[i].size;
      cc->train.n2++;
    }
  }
  /* the round trip: feedback comes right after the frame's last packet */
  if (newest_send != INT64_MIN && now >= newest_send) {
    int64_t rtt = now - newest_send;
    if (!cc->rtt || rtt < cc->rtt || now - cc->rtt_at > RTT_MEMORY_US) {
      cc->rtt = rtt;
      cc->rtt_at = now;
    }
  }
  cc->delivered = delivered_rate(cc);
  if (least_owd != INT64_MAX) {
    cc->qring[cc->qhead] = (urtp_cc_owd_t){ now, least_owd };
    cc->qhead = (cc->qhead + 1) % URTP_CC_QUEUE_RING;
  }
  int64_t least = INT64_MAX;
  for (size_t i = 0; i < URTP_CC_QUEUE_RING; i++)
    if (cc->qring[i].at && cc->qring[i].at >= now - QUEUE_WINDOW_US && cc->qring[i].owd < least)
      least = cc->qring[i].owd;
  int64_t base = base_min(cc);
  bool queue_known = least != INT64_MAX && base != INT64_MAX;
  int64_t queue = queue_known ? least - base : 0;
  if (queue_known)
    cc->st.queue_us = queue;
  update(cc, now, queue, queue_known,
         least_since_cut != INT64_MAX && base != INT64_MAX &&
             least_since_cut - base > URTP_CC_QUEUE_TARGET,
         got_send, got_send != INT64_MIN && base != INT64_MAX ? got_owd - base : 0);
}

void urtp_cc_stats(const urtp_cc_t *cc, urtp_cc_stats_t *out)
{
  *out = cc->st;
  out->target_bps = urtp_cc_target(cc);
  out->encoder_bps = urtp_cc_encoder(cc);
  out->pacing_bps = urtp_cc_pacing(cc);
  out->delivered_bps = (uint64_t)cc->delivered;
  size_t spread;
  int64_t newest = INT64_MIN;
  for (size_t i = 0; i < cc->trains_n; i++)
    if (cc->trains[i].at > newest)
      newest = cc->trains[i].at;
  double cap = cc->trains_n ? capacity_estimate(cc, newest, &spread) : 0;
  out->capacity_bps = (uint64_t)cap;
  out->rtt_us = cc->rtt;
  out->threshold = cc->threshold;
  out->usage = cc->usage;
  out->competing = cc->competing;
}
