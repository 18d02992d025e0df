/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The current source follows RFC 3550 A.1's update_seq() without the
 * counters (the reorder window keeps those): max_seq and one kept packet
 * for an unconfirmed jump. Other SSRCs are candidates in a small table,
 * each with copies of its first packets while on probation; at most one
 * validated candidate at a time waits with a hold (a ring of copies) for
 * the current source to go quiet.
 */

struct urtp_source_cand {
  bool used;
  bool valid;               /* passed probation */
  uint32_t ssrc;
  uint16_t max_seq;
  unsigned run;             /* packets in sequence so far */
  uint64_t last_heard;
  unsigned nkept;           /* probation copies */
  uint32_t kept_len[URTP_SOURCE_MAX_PROBATION - 1];
  uint64_t kept_at[URTP_SOURCE_MAX_PROBATION - 1];
};

/* A hold entry older than this many timeouts cannot belong to a takeover
 * still to come (one happens within a timeout of the current source's
 * last packet): the hold is emptied rather than let it go stale. */
#define HOLD_MAX_AGE_TIMEOUTS 2

int urtp_source_init(urtp_source_t *s, const urtp_source_config_t *cfg)
{
  memset(s, 0, sizeof(*s));
  if (!cfg || cfg->ssrc < -1 || cfg->ssrc > (int64_t)UINT32_MAX ||
      cfg->probation > URTP_SOURCE_MAX_PROBATION || cfg->max_dropout > 32768 ||
      cfg->max_misorder > 32768)
    return -EINVAL;
  s->cfg = *cfg;
  if (!s->cfg.probation)
    s->cfg.probation = URTP_SOURCE_PROBATION;
  if (!s->cfg.max_dropout)
    s->cfg.max_dropout = URTP_SOURCE_MAX_DROPOUT;
  if (!s->cfg.max_misorder)
    s->cfg.max_misorder = URTP_SOURCE_MAX_MISORDER;
  if (!s->cfg.hold_packets)
    s->cfg.hold_packets = URTP_SOURCE_HOLD;
  if (!s->cfg.max_packet)
    s->cfg.max_packet = 1500;
  if (!s->cfg.bye_grace)
    s->cfg.bye_grace = s->cfg.timeout / 4;
  if (s->cfg.max_packet > UINT32_MAX || s->cfg.hold_packets > SIZE_MAX / 2 / s->cfg.max_packet)
    return -EINVAL;
  s->hold_owner = -1;
  s->cand = calloc(URTP_SOURCE_CANDIDATES, sizeof(*s->cand));
  s->jump_pkt = malloc(s->cfg.max_packet);
  if (s->cfg.probation > 1)
    s->cand_mem = malloc(URTP_SOURCE_CANDIDATES * (s->cfg.probation - 1) * s->cfg.max_packet);
  if (!s->cand || !s->jump_pkt || (s->cfg.probation > 1 && !s->cand_mem)) {
    urtp_source_destroy(s);
    return -ENOMEM;
  }
  return 0;
}

void urtp_source_destroy(urtp_source_t *s)
{
  free(s->cand);
  free(s->cand_mem);
  free(s->jump_pkt);
  free(s->hold_mem);
  free(s->hold_len);
  free(s->hold_at);
  memset(s, 0, sizeof(*s));
  s->hold_owner = -1;
}

/* ---- kept copies ---- */

static uint8_t *kept_slot(urtp_source_t *s, size_t cand, unsigned k)
{
  return s->cand_mem + (cand * (s->cfg.probation - 1) + k) * s->cfg.max_packet;
}

static uint8_t *hold_slot(urtp_source_t *s, size_t i)
{
  return s->hold_mem + i * s->cfg.max_packet;
}

static void drop_kept(urtp_source_t *s, urtp_source_cand_t *c)
{
  s->stats.foreign += c->nkept;
  s->stats.pending -= c->nkept;
  c->nkept = 0;
}

static void hold_clear(urtp_source_t *s)
{
  s->stats.foreign += s->hold_count;
  s->stats.pending -= s->hold_count;
  s->hold_count = 0;
  s->hold_head = 0;
}

static void hold_release(urtp_source_t *s)
{
  hold_clear(s);
  s->hold_owner = -1;
}

static bool hold_alloc(urtp_source_t *s)
{
  if (s->hold_mem)
    return true;
  size_t n = s->cfg.hold_packets;
  s->hold_mem = malloc(n * s->cfg.max_packet);
  s->hold_len = malloc(n * sizeof(*s->hold_len));
  s->hold_at = malloc(n * sizeof(*s->hold_at));
  if (!s->hold_mem || !s->hold_len || !s->hold_at) {
    free(s->hold_mem);
    free(s->hold_len);
    free(s->hold_at);
    s->hold_mem = NULL;
    s->hold_len = NULL;
    s->hold_at = NULL;
    return false;
  }
  return true;
}

static void hold_append(urtp_source_t *s, const uint8_t *pkt, size_t len, uint64_t now)
{
  if (s->hold_count == s->cfg.hold_packets || len > s->cfg.max_packet) {
    s->stats.held_dropped++;
    return;
  }
  size_t i = (s->hold_head + s->hold_count) % s->cfg.hold_packets;
  memcpy(hold_slot(s, i), pkt, len);
  s->hold_len[i] = (uint32_t)len;
  s->hold_at[i] = now;
  s->hold_count++;
  s->stats.pending++;
}

/* ---- the current source ---- */

static void deliver_now(urtp_source_t *s, const uint8_t *pkt, size_t len, uint64_t arrival,
                        urtp_source_deliver_fn deliver, void *user)
{
  s->stats.delivered++;
  deliver(user, pkt, len, arrival);
}

static void drop_jump(urtp_source_t *s)
{
  if (s->jump_held) {
    s->jump_held = false;
    s->stats.stray++;
    s->stats.pending--;
  }
}

/* Candidate c becomes the current source; its kept packets are delivered,
 * then pkt (if any). */
static void take_over(urtp_source_t *s, size_t ci, const uint8_t *pkt, size_t len,
                      uint64_t now, urtp_source_deliver_fn deliver,
                      urtp_source_event_fn event, void *user)
{
  urtp_source_cand_t *c = &s->cand[ci];
  urtp_source_event_t ev = {
    .kind = s->had ? URTP_SOURCE_CHANGE : URTP_SOURCE_FIRST,
    .reason = !s->had ? URTP_SOURCE_REASON_NONE :
              s->active && !s->left ? URTP_SOURCE_REASON_TIMEOUT : URTP_SOURCE_REASON_BYE,
    .old_ssrc = s->ssrc,
    .new_ssrc = c->ssrc,
    .old_seq = s->max_seq,
    .new_seq = c->max_seq,
  };
  if (s->had)
    s->stats.changes++;
  drop_jump(s);
  s->had = true;
  s->active = true;
  s->left = false;
  s->ssrc = c->ssrc;
  s->max_seq = c->max_seq;
  s->last_heard = now;
  event(user, &ev);

  if (s->hold_owner == (int)ci) {
    size_t n = s->hold_count;
    s->hold_count = 0;
    s->hold_owner = -1;
    for (size_t k = 0; k < n; k++) {
      size_t i = (s->hold_head + k) % s->cfg.hold_packets;
      s->stats.pending--;
      deliver_now(s, hold_slot(s, i), s->hold_len[i], s->hold_at[i], deliver, user);
    }
    s->hold_head = 0;
  } else {
    for (unsigned k = 0; k < c->nkept; k++) {
      s->stats.pending--;
      deliver_now(s, kept_slot(s, ci, k), c->kept_len[k], c->kept_at[k], deliver, user);
    }
  }
  c->nkept = 0;
  c->used = false;
  if (pkt)
    deliver_now(s, pkt, len, now, deliver, user);
}

static bool may_take_over(const urtp_source_t *s, uint64_t now)
{
  return !s->active || s->left || now - s->last_heard >= s->cfg.timeout;
}

/* The current source starts again within its SSRC: its numbering jumped
 * (to first_seq, then on to max_seq). */
static void restart(urtp_source_t *s, urtp_source_reason_t reason, uint16_t first_seq,
                    uint16_t max_seq, urtp_source_event_fn event, void *user)
{
  urtp_source_event_t ev = {
    .kind = URTP_SOURCE_RESTART,
    .reason = reason,
    .old_ssrc = s->ssrc,
    .new_ssrc = s->ssrc,
    .old_seq = s->max_seq,
    .new_seq = first_seq,
  };
  s->stats.restarts++;
  s->max_seq = max_seq;
  event(user, &ev);
}

static void current_packet(urtp_source_t *s, const uint8_t *pkt, size_t len, uint16_t seq,
                           uint64_t now, urtp_source_deliver_fn deliver,
                           urtp_source_event_fn event, void *user)
{
  s->last_heard = now;
  uint16_t udelta = (uint16_t)(seq - s->max_seq);
  if (udelta < s->cfg.max_dropout) {
    /* in order, with a permissible gap: a kept jump was a stray */
    drop_jump(s);
    /* new packets well after its BYE: it has not left */
    if (s->left && udelta != 0 && now - s->bye_at > s->cfg.bye_grace) {
      s->left = false;
      s->stats.byes_revoked++;
    }
    s->max_seq = seq;
    deliver_now(s, pkt, len, now, deliver, user);
    return;
  }
  if (udelta <= 65536u - s->cfg.max_misorder) {
    /* a very large jump: the next packet decides; once the source said
     * BYE, it restarted (a sender back with the same SSRC) */
    if (s->left) {
      drop_jump(s);
      s->left = false;
      restart(s, URTP_SOURCE_REASON_BYE, seq, seq, event, user);
      deliver_now(s, pkt, len, now, deliver, user);
      return;
    }
    if (s->jump_held && seq == (uint16_t)(s->jump_seq + 1)) {
      s->jump_held = false;
      s->stats.pending--;
      restart(s, URTP_SOURCE_REASON_SEQ_JUMP, s->jump_seq, seq, event, user);
      deliver_now(s, s->jump_pkt, s->jump_len, s->jump_at, deliver, user);
      deliver_now(s, pkt, len, now, deliver, user);
      return;
    }
    drop_jump(s);
    if (len > s->cfg.max_packet) {
      s->stats.stray++;
      return;
    }
    memcpy(s->jump_pkt, pkt, len);
    s->jump_len = (uint32_t)len;
    s->jump_at = now;
    s->jump_seq = seq;
    s->jump_held = true;
    s->stats.pending++;
    return;
  }
  /* a little behind: duplicate or reordered, the reorder window decides */
  deliver_now(s, pkt, len, now, deliver, user);
}

/* ---- candidates ---- */

static size_t find_cand(urtp_source_t *s, uint32_t ssrc, uint64_t now, bool *fresh)
{
  size_t victim = SIZE_MAX;
  *fresh = false;
  for (size_t i = 0; i < URTP_SOURCE_CANDIDATES; i++) {
    urtp_source_cand_t *c = &s->cand[i];
    if (c->used && c->ssrc == ssrc)
      return i;
  }
  /* a free entry, else the one heard least recently (not the waiting one) */
  for (size_t i = 0; i < URTP_SOURCE_CANDIDATES; i++) {
    urtp_source_cand_t *c = &s->cand[i];
    if (!c->used) {
      victim = i;
      break;
    }
    if ((int)i == s->hold_owner)
      continue;
    if (victim == SIZE_MAX || c->last_heard < s->cand[victim].last_heard)
      victim = i;
  }
  urtp_source_cand_t *c = &s->cand[victim];
  if (c->used)
    drop_kept(s, c);
  memset(c, 0, sizeof(*c));
  c->used = true;
  c->ssrc = ssrc;
  c->last_heard = now;
  *fresh = true;
  return victim;
}

/* Moves candidate ci's probation copies into the hold, which it now owns. */
static void hold_take(urtp_source_t *s, size_t ci, uint64_t now)
{
  urtp_source_cand_t *c = &s->cand[ci];
  if (s->hold_owner >= 0)
    hold_release(s);
  s->hold_owner = (int)ci;
  for (unsigned k = 0; k < c->nkept; k++) {
    s->stats.pending--;   /* hold_append counts it again */
    hold_append(s, kept_slot(s, ci, k), c->kept_len[k], c->kept_at[k]);
  }
  c->nkept = 0;
}

static void candidate_packet(urtp_source_t *s, const uint8_t *pkt, size_t len, uint32_t ssrc,
                             uint16_t seq, uint64_t now, urtp_source_deliver_fn deliver,
                             urtp_source_event_fn event, void *user)
{
  bool fresh;
  size_t ci = find_cand(s, ssrc, now, &fresh);
  urtp_source_cand_t *c = &s->cand[ci];
  uint64_t since = now - c->last_heard;
  c->last_heard = now;
  if (fresh) {
    c->run = 1;
    c->max_seq = seq;
  } else if (!c->valid) {
    if (seq == (uint16_t)(c->max_seq + 1)) {
      c->run++;
    } else {
      drop_kept(s, c);
      c->run = 1;
    }
    c->max_seq = seq;
  } else {
    /* validated and waiting: a large jump or a long silence puts it back
     * on probation */
    uint16_t udelta = (uint16_t)(seq - c->max_seq);
    bool jump = udelta >= s->cfg.max_dropout && udelta <= 65536u - s->cfg.max_misorder;
    if (jump || since >= s->cfg.timeout * HOLD_MAX_AGE_TIMEOUTS) {
      if ((int)ci == s->hold_owner)
        hold_release(s);
      c->valid = false;
      c->run = 1;
      c->max_seq = seq;
    } else if (udelta < s->cfg.max_dropout) {
      c->max_seq = seq;
    }
  }

  if (!c->valid) {
    if (c->run < s->cfg.probation) {
      if (len > s->cfg.max_packet) {
        s->stats.foreign++;
        return;
      }
      memcpy(kept_slot(s, ci, c->nkept), pkt, len);
      c->kept_at[c->nkept] = now;
      c->kept_len[c->nkept++] = (uint32_t)len;
      s->stats.pending++;
      return;
    }
    c->valid = true;
  }

  if (may_take_over(s, now)) {
    take_over(s, ci, pkt, len, now, deliver, event, user);
    return;
  }
  /* Wait for the current source to go quiet, keeping what arrives. */
  if (s->hold_owner != (int)ci) {
    bool owner_stale = s->hold_owner >= 0 &&
        now - s->cand[s->hold_owner].last_heard >= s->cfg.timeout;
    if ((s->hold_owner < 0 || owner_stale) && hold_alloc(s)) {
      hold_take(s, ci, now);
    } else {
      drop_kept(s, c);
      s->stats.foreign++;
      return;
    }
  }
  /* A hold that is all old cannot be a restart in progress any more. */
  if (s->hold_count > 0 &&
      now - s->hold_at[s->hold_head] >= s->cfg.timeout * HOLD_MAX_AGE_TIMEOUTS)
    hold_clear(s);
  hold_append(s, pkt, len, now);
}

/* ---- public ---- */

void urtp_source_push(urtp_source_t *s, const uint8_t *pkt, size_t len, uint32_t ssrc,
                      uint16_t seq, uint64_t now, urtp_source_deliver_fn deliver,
                      urtp_source_event_fn event, void *user)
{
  if (s->cfg.ssrc >= 0) {
    if (ssrc != (uint32_t)s->cfg.ssrc) {
      s->stats.foreign++;
      return;
    }
    if (!s->active) {
      /* pinned: no probation (once followed, it stays: after a BYE, its
       * return with a jump is a restart in current_packet) */
      urtp_source_event_t ev = {
        .kind = URTP_SOURCE_FIRST, .reason = URTP_SOURCE_REASON_NONE,
        .old_ssrc = ssrc, .new_ssrc = ssrc, .old_seq = s->max_seq, .new_seq = seq,
      };
      s->had = s->active = true;
      s->ssrc = ssrc;
      s->max_seq = seq;
      s->last_heard = now;
      event(user, &ev);
      deliver_now(s, pkt, len, now, deliver, user);
      return;
    }
  }
  if (s->active && ssrc == s->ssrc)
    current_packet(s, pkt, len, seq, now, deliver, event, user);
  else
    candidate_packet(s, pkt, len, ssrc, seq, now, deliver, event, user);
}

void urtp_source_bye(urtp_source_t *s, uint32_t ssrc, uint64_t now,
                     urtp_source_deliver_fn deliver, urtp_source_event_fn event, void *user)
{
  if (s->active && !s->left && ssrc == s->ssrc) {
    /* its packets still on their way are taken; anything else may take
     * over at once */
    s->left = true;
    s->bye_at = now;
    s->stats.byes++;
    drop_jump(s);
    if (s->hold_owner >= 0 && s->cand[s->hold_owner].valid)
      take_over(s, (size_t)s->hold_owner, NULL, 0, now, deliver, event, user);
    return;
  }
  for (size_t i = 0; i < URTP_SOURCE_CANDIDATES; i++) {
    urtp_source_cand_t *c = &s->cand[i];
    if (!c->used || c->ssrc != ssrc)
      continue;
    if ((int)i == s->hold_owner)
      hold_release(s);
    drop_kept(s, c);
    c->used = false;
  }
}

void urtp_source_expire(urtp_source_t *s, uint64_t now, urtp_source_deliver_fn deliver,
                        urtp_source_event_fn event, void *user)
{
  if (s->hold_owner >= 0 && s->cand[s->hold_owner].valid && s->hold_count > 0 &&
      may_take_over(s, now)) {
    take_over(s, (size_t)s->hold_owner, NULL, 0, now, deliver, event, user);
    return;
  }
  /* Candidates silent for a timeout will not validate in time to matter:
   * what they left is dropped, so that it stops counting as pending. */
  for (size_t i = 0; i < URTP_SOURCE_CANDIDATES; i++) {
    urtp_source_cand_t *c = &s->cand[i];
    if (!c->used || now - c->last_heard < s->cfg.timeout)
      continue;
    if ((int)i == s->hold_owner) {
      if (now - c->last_heard < s->cfg.timeout * HOLD_MAX_AGE_TIMEOUTS)
        continue;
      hold_release(s);
    }
    drop_kept(s, c);
    c->used = false;
  }
}

uint64_t urtp_source_deadline(const urtp_source_t *s)
{
  if (s->hold_owner < 0 || !s->cand[s->hold_owner].valid || s->hold_count == 0)
    return UINT64_MAX;
  if (!s->active || s->left)
    return 0;
  return s->last_heard > UINT64_MAX - s->cfg.timeout ? UINT64_MAX
                                                     : s->last_heard + s->cfg.timeout;
}

void urtp_source_reset(urtp_source_t *s)
{
  if (s->hold_owner >= 0)
    hold_release(s);
  for (size_t i = 0; i < URTP_SOURCE_CANDIDATES; i++) {
    drop_kept(s, &s->cand[i]);
    s->cand[i].used = false;
  }
  if (s->jump_held) {
    s->jump_held = false;
    s->stats.foreign++;
    s->stats.pending--;
  }
  s->active = false;
  s->left = false;
  s->had = false;
}

const char *urtp_source_reason_name(urtp_source_reason_t r)
{
  switch (r) {
  case URTP_SOURCE_REASON_NONE: return "first";
  case URTP_SOURCE_REASON_TIMEOUT: return "timeout";
  case URTP_SOURCE_REASON_BYE: return "bye";
  case URTP_SOURCE_REASON_SEQ_JUMP: return "sequence-jump";
  }
  return "unknown";
}
