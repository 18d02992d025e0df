/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cc.h - congestion control: from what feedback says of the packets sent
 * (twcc.h's results), the bitrate the encoder should produce and the rate
 * the pacer should send at. docs/congestion.md says why it is built so.
 *
 * Four signals, each a bound on the target:
 *  - The delay gradient (as GCC, draft-ietf-rmcat-gcc-02): packets are
 *    grouped by send time (a pause of 2.5 ms, or of 1.5 x the pacer's
 *    spacing of full packets when longer, ends a group; so does 50 ms of
 *    sending), the change of one-way delay between
 *    groups is accumulated, smoothed, and its trend over the last 20 groups
 *    compared with an adaptive threshold. A rising trend (a queue growing)
 *    is overuse: the target drops to 0.85 x the delivered rate. Normal:
 *    it grows, by 8 %/s while far from the last capacity seen, by 2 %/s
 *    of it (and at least a packet per response time: round trip + 100 ms)
 *    near it.
 *  - The queue: the least one-way delay of the last 100 ms (a key frame's
 *    own backlog drains in less) over its minimum of the last 10 s. Past
 *    URTP_CC_QUEUE_HOLD (plus a full packet's time at the rate
 *    delivered: one-way delays include it) the target stops growing; past
 *    URTP_CC_QUEUE_TARGET it drops below the delivered rate (of the last
 *    150 ms when less: the bottleneck's now) by enough to drain the queue
 *    in 300 ms; both cuts go from the rate our packets that queued 10 ms
 *    or more arrived at, back to back, when that is under 0.7 x (a step
 *    down: the link's new rate, before the means show it), once per
 *    response time and once packets sent since the last cut met the
 *    queue too: a standing queue that a flat trend hides (a long
 *    drop-tail buffer filling slowly) does not stay.
 *  - A step down, in one feedback: its newest packet queued over
 *    URTP_CC_QUEUE_TARGET, our queued packets of the last 30 ms (their
 *    newest run) came off the link at under half the rate delivered,
 *    and what was sent since will queue over 150 ms: the target is cut
 *    at once (a milder cut just before does not put it off), to drain
 *    that in 300 ms but to no less than half the link's rate; until the
 *    queue drains the pacer
 *    sends at the target (the buffer is full: a faster frame loses its
 *    tail), no probe goes, and the trains from before are forgotten;
 *    then the target goes back to 0.9 x the link, even while the
 *    gradient still falls. Only for a flow that had the path to itself
 *    (delivering 0.7 x what the trains measured): sharing it, that rate
 *    is our share.
 *  - The capacity, probed with the media itself: the pacer sends each
 *    frame at URTP_CC_PACING_FACTOR x the target, and a train of packets
 *    sent back to back arrives spread by the narrowest link on the path.
 *    Its dispersion is that link's rate (or, not spread, a lower bound).
 *    While no queue builds, the target rises towards 0.9 x the median of
 *    the last second's trains, at most doubling per response time and
 *    to no more than 3 x the rate delivered (a receiver on a loaded
 *    host may timestamp a backlog at once, and a train read 6 x the
 *    link; an encoder a second at its floor is exempt): new
 *    capacity is found in a few round trips, without padding and without
 *    loss. Once trains were spread the pacer sends at no more than 1.25 x
 *    the capacity they show (a train still shows capacity a quarter above
 *    what is known), and a key frame at no more than it: it is spread at
 *    the sender rather than queued at the bottleneck ahead of the frames
 *    after it. A train counts as spread only beyond twice the path's
 *    jitter, and an unspread one faster than the spread ones outranks
 *    them (a probe after a step up). Once a second a frame is a probe, at
 *    2 x what is known. A raise followed by a cut within a second is not
 *    tried again for 5 s, nor anything above 1.05 x the rate delivered
 *    then.
 *    Delay is measured on the first packet of each group (packets sent
 *    less than 2.5 ms apart): what a packet's own frame queued ahead of
 *    it is not congestion.
 *  - Loss: over each 20 packets or more sent since the last cut, beyond
 *    10 % the target is cut by half the loss fraction (once per response
 *    time).
 *  - Competition: cuts on delay that keep coming (none 1.5 s after the
 *    last) for URTP_CC_COMPETE_SPAN, while we deliver less than a fifth
 *    of what the trains say the path carries (of what it carried for us
 *    in the last 30 s, when pictures of one packet make no train), mean
 *    the queue is not ours to drain: a loss-based flow (TCP) keeps its
 *    buffer full whatever we send, each cut makes room that it takes,
 *    and a flow that yields to it starves. Ours drains after a cut or
 *    two; two of our flows that cut each other have half the path each.
 *    Then, as the other flow does, delay cuts only beyond
 *    URTP_CC_COMPETE_QUEUE (a drop-tail buffer's worth) and holds growth
 *    beyond half of it, any loss cuts to 0.85 x, and the pacer goes at
 *    1.25 x the target (a frame's burst into a full buffer loses more of
 *    its packets than a steady stream does). It ends when the
 *    queue has been empty for 3 s (the other flow left), or after
 *    URTP_CC_COMPETE_TIME, to look again: cuts on delay that go on for
 *    2 s more (the first up to 4 s late) resume it; a queue of ours
 *    drains and ends it.
 * Growth stops at 1.5 x the delivered rate (as GCC), except while the
 * encoder sends less than half the target (one at its quality floor):
 * then the target grows by 25 %/s up to 0.9 x the most the path delivered
 * in the last 30 s, and cuts are of the target.
 * Retransmissions count like media (they are in the feedback, and in the
 * delivered rate), so the target is the budget for both.
 * The encoder is asked for the target (urtp_cc_encoder), except after a
 * raise to what trains measured, for a flow that had the path to itself
 * (alone, as for the encoder's own queue, for at least half of the last
 * second, within the last 3 s): then for 1.25 x the target until it
 * delivers 0.95 x, or a queue or a cut comes, or 3 s have passed. Encoders
 * follow a raise late (x264enc asked for 22.3 Mbit/s after 10 made 18.2
 * a second later), and an encoder that follows at once ends the lead in
 * a few hundred ms. Not while sharing the path: the flow that asked for
 * more took the other's share.
 *
 * Promises: no allocation, no clock of its own (times are the caller's,
 * us, one clock for send times and `now`; arrival times are the
 * receiver's and only their differences are used); the target stays
 * within [min, max]; nothing in the feedback (forged, reordered, repeated,
 * out of range) can make it leave that range or stop it from moving.
 */
#ifndef URTP_CC_H
#define URTP_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twcc.h"

#define URTP_CC_PACING_FACTOR 2.5
#define URTP_CC_QUEUE_TARGET 20000      /* us of standing queue that cuts */
#define URTP_CC_QUEUE_HOLD 5000         /* ... that stops increases */
#define URTP_CC_DEFAULT_MIN 100000      /* bits/s */
#define URTP_CC_DEFAULT_MAX 100000000
#define URTP_CC_DEFAULT_START 2000000

#define URTP_CC_TREND_WINDOW 20
#define URTP_CC_ACK_RING 1024           /* packets of the delivered rate */
#define URTP_CC_TRAINS 64               /* capacity samples kept */
#define URTP_CC_BASE_SLOTS 10           /* 1 s minima of one-way delay */
#define URTP_CC_QUEUE_RING 32           /* feedbacks' least one-way delays */
#define URTP_CC_CARRIED_SLOTS 10        /* 3 s maxima of the delivered rate */
#define URTP_CC_COMPETE_SPAN 8000000    /* us of cuts on delay: the queue is another's */
#define URTP_CC_COMPETE_TIME 20000000   /* us: then it is looked at again */
#define URTP_CC_COMPETE_QUEUE 250000    /* us of queue that cuts meanwhile */

typedef enum {
  URTP_CC_NORMAL = 0,
  URTP_CC_OVERUSE = 1,
  URTP_CC_UNDERUSE = -1,
} urtp_cc_usage_t;

typedef struct urtp_cc_config {
  uint64_t min_bps, max_bps, start_bps;   /* 0: the defaults */
} urtp_cc_config_t;

typedef struct urtp_cc_stats {
  uint64_t target_bps;      /* what the encoder should produce */
  uint64_t encoder_bps;     /* what to ask of it for that (urtp_cc_encoder) */
  uint64_t pacing_bps;      /* what the pacer should send at */
  uint64_t delivered_bps;   /* what arrived, over the last 500 ms */
  uint64_t capacity_bps;    /* what the last second's trains say; 0: none */
  int64_t queue_us;         /* one-way delay over its recent minimum */
  int64_t rtt_us;           /* round trip, from feedback; 0: unknown */
  double trend;             /* the delay gradient as compared (ms) */
  double threshold;         /* what it is compared with (ms) */
  double loss;              /* fraction lost, last window */
  urtp_cc_usage_t usage;
  uint64_t feedbacks, packets, lost;
  uint64_t overuses;        /* decreases on the delay gradient */
  uint64_t queue_cuts;      /* ... on the standing queue */
  uint64_t loss_cuts;       /* ... on loss */
  uint64_t step_downs;      /* ... on a step down of the link, at once */
  uint64_t capacity_raises; /* raises to what a train measured */
  uint64_t probes;          /* frames sent at twice the capacity */
  uint64_t leads;           /* raises the encoder was asked for more after */
  uint64_t competes;        /* times the queue was found to be another's */
  bool competing;           /* ... and still is */
} urtp_cc_stats_t;

typedef struct urtp_cc_group {
  int64_t first_send, last_send, last_arrival;
  bool valid;
} urtp_cc_group_t;

typedef struct urtp_cc_ack {
  int64_t arrival;
  int64_t owd;              /* one-way delay (arrival - send) */
  uint32_t bytes;
} urtp_cc_ack_t;

typedef struct urtp_cc_train {
  int64_t at;               /* when it was measured (the caller's clock) */
  double bps;
  bool measured;            /* spread by the path; else a lower bound */
  int64_t span;             /* us it lasted (sent or arriving, the longer) */
} urtp_cc_train_t;

typedef struct urtp_cc_owd {
  int64_t at, owd;
} urtp_cc_owd_t;

typedef struct urtp_cc {
  urtp_cc_config_t cfg;
  double target;            /* bits/s */
  int64_t last_update;      /* us; 0: none yet */
  int64_t last_cut;         /* when the target was last cut */
  int64_t last_raise;       /* ... last raised to a train's capacity */
  double raised_to;         /* ... to this (0: a cut came since) */
  int64_t pulled;           /* the last_raise last taken back to the trains */
  double ceiling;           /* raises stop here (a raise that failed) */
  int64_t ceiling_until;
  int64_t cut_queue;        /* the queue the last delay cut answered (us) */
  int64_t last_delay_cut;   /* when that was */
  int64_t last_shared_cut;  /* ... and the last not of our own queue */
  /* delivered rate: the last packets' arrivals and sizes */
  urtp_cc_ack_t ack[URTP_CC_ACK_RING];
  size_t ack_head, ack_n;
  double delivered;
  /* the most delivered in each 3 s of the last 30 (what the path has
   * carried: how far an encoder that sends less than asked may be asked) */
  double carried[URTP_CC_CARRIED_SLOTS];
  int64_t carried_slot;     /* the slot of carried[carried_slot % N]; -1: none */
  /* delay gradient */
  urtp_cc_group_t cur, prev;
  double acc, smoothed;
  double jitter_us;             /* mean |delay change| between group heads */
  int64_t first_arrival;
  double tx[URTP_CC_TREND_WINDOW], ty[URTP_CC_TREND_WINDOW];
  size_t tn, tpos;
  unsigned deltas;
  double trend, prev_trend, threshold;
  int64_t last_threshold, over_since;
  unsigned over_count;
  urtp_cc_usage_t usage;
  /* the capacity near which increases slow down (GCC's average max) */
  double cap_avg, cap_var;
  bool cap_valid;
  /* queue: per-second minima of one-way delay */
  int64_t base[URTP_CC_BASE_SLOTS];
  int64_t base_slot;        /* the second of base[base_slot % N]; -1: none */
  /* each feedback's least one-way delay: the queue is the least of the
   * last 100 ms (a key frame's own backlog drains in less) */
  urtp_cc_owd_t qring[URTP_CC_QUEUE_RING];
  size_t qhead;
  /* trains: the one being followed, and the capacity samples */
  struct {
    int64_t first_send, last_send, first_arrival, last_arrival;
    uint64_t bytes;         /* after the first packet */
    unsigned n;
    /* from the first packet sent later than the first (the next chunk) */
    int64_t second_send, second_arrival;
    uint64_t bytes2;        /* after that packet */
    unsigned n2;
  } train;
  urtp_cc_train_t trains[URTP_CC_TRAINS];
  size_t trains_head, trains_n;
  int64_t trains_from;      /* trains sent before this say nothing */
  bool stepped;             /* cut on a step down, not back yet */
  int64_t stepped_at;
  double stepped_link;      /* the link's rate for our queued packets since */
  double last_capacity;     /* the last measured (spread) estimate */
  /* loss window */
  uint64_t win_lost, win_total;
  double frame_avg;         /* bytes, urtp_cc_pacing_for's frames */
  int64_t last_probe;
  double alone_frac;        /* how much of the last second we filled the path alone */
  int64_t alone_at;         /* when that was ALONE_FRAC or more */
  int64_t lead_until;       /* the encoder is led until then (0: not) */
  /* round trip: the least of the recent samples */
  int64_t rtt, rtt_at;
  /* the cuts on delay of late (the first and the last of an episode): a
   * queue that stands through them is another flow's */
  int64_t dcut_first, dcut_last;
  unsigned dcut_n;
  bool recheck;             /* the episode resumed after competing */
  bool competing;
  int64_t competing_since, empty_since;
  urtp_cc_stats_t st;
} urtp_cc_t;

void urtp_cc_init(urtp_cc_t *cc, const urtp_cc_config_t *cfg);

/* Changes the bounds (0: keep); the target moves into them. */
void urtp_cc_set_bounds(urtp_cc_t *cc, uint64_t min_bps, uint64_t max_bps);

/* What one feedback message said of n packets (twcc.h's results, in the
 * feedback's order), taken at now (us, the send times' clock). */
void urtp_cc_feedback(urtp_cc_t *cc, const urtp_twcc_result_t *r, size_t n, int64_t now);

/* The bitrate the encoder should produce (bits/s). */
uint64_t urtp_cc_target(const urtp_cc_t *cc);
/* What to ask of the encoder (bits/s) so that it produces the target:
 * the target, or while an encoder ramps up after a raise, more. */
uint64_t urtp_cc_encoder(const urtp_cc_t *cc);
/* The rate the pacer should send at (bits/s). */
uint64_t urtp_cc_pacing(const urtp_cc_t *cc);

/* The rate to send a frame (an access unit) of `bytes` at, and the frame
 * counted into the average frame size. A frame more than twice the
 * average (a key frame), or one that finds earlier frames still waiting
 * to be sent (backlog), goes at no more than the capacity known (or 1.15 x
 * the target, when that is more: the backlog drains): it waits
 * at the sender rather than in the bottleneck's queue, where it would
 * delay the frames after it too. Once a second a frame other than a key
 * frame is a probe, sent at twice the capacity known: a capacity grown
 * since shows in its spread (now: the caller's clock, us). */
uint64_t urtp_cc_pacing_for(urtp_cc_t *cc, size_t bytes, bool backlog, int64_t now);

void urtp_cc_stats(const urtp_cc_t *cc, urtp_cc_stats_t *out);

#endif
