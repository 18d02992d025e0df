/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sendcc.c - the sending stream's side of congestion control feedback
 * (urtp_sendstream_set_ccfb): what left and when, by transport-wide and by
 * RTP sequence number (twcc.h), matched against the feedback of trusted
 * receivers (ccfb.h). Internal; see sendstream.h.
 */
#include "sendstream_priv.h"

#include "urtp/hdrext.h"

/* A receiver whose feedback drives a controller of its own: a fan-out's
 * clients each have their path, and the stream goes at the least of their
 * targets (the slowest path's). */
typedef struct cc_peer {
  uint32_t ssrc;                /* the feedback's sender */
  bool used;
  bool fed;                     /* had feedback */
  int64_t last_us;              /* ... last at */
  urtp_cc_t cc;
} cc_peer_t;

struct sendstream_cc {
  urtp_twcc_history_t tw;       /* by transport-wide number */
  urtp_twcc_history_t seq;      /* by our RTP sequence number (RFC 8888) */
  bool control;                 /* the controllers run */
  urtp_cc_config_t cfg;
  cc_peer_t peer[URTP_SENDSTREAM_CC_RECEIVERS];
  unsigned lead;                /* the peer that sets the rate: the least
                                 * target of those heard from lately */
  urtp_ccfb_pkt_t pkts[URTP_TWCC_MAX_PACKETS];
  urtp_twcc_result_t res[URTP_TWCC_MAX_PACKETS];
};

/* The lead's controller. cc_lock held. */
static urtp_cc_t *lead_cc(sendstream_cc_t *cc)
{
  return &cc->peer[cc->lead].cc;
}

/* The peer whose feedback comes from ssrc: its own, a free one, or the
 * one unheard of longest once it has been quiet for
 * URTP_SENDSTREAM_CC_IDLE (a client gone); NULL: all are taken. A new
 * peer's controller starts at the rate the stream goes at (the path is
 * not known; its feedback soon says). cc_lock held. */
static cc_peer_t *peer_of(sendstream_cc_t *cc, uint32_t ssrc, int64_t now)
{
  cc_peer_t *idle = NULL;
  for (unsigned i = 0; i < URTP_SENDSTREAM_CC_RECEIVERS; i++) {
    cc_peer_t *p = &cc->peer[i];
    if (p->used && p->ssrc == ssrc)
      return p;
  }
  for (unsigned i = 0; i < URTP_SENDSTREAM_CC_RECEIVERS; i++) {
    cc_peer_t *p = &cc->peer[i];
    if (!p->used || !p->fed) {
      idle = p;
      break;
    }
    if (now - p->last_us >= URTP_SENDSTREAM_CC_IDLE / 1000 &&
        (!idle || p->last_us < idle->last_us))
      idle = p;
  }
  if (!idle)
    return NULL;
  /* taken over, or a second receiver: from the rate the stream goes at
   * (the first keeps the controller that paced before any feedback) */
  cc_peer_t *lead = &cc->peer[cc->lead];
  if ((idle->used && idle->fed) || (lead->fed && idle != lead)) {
    urtp_cc_config_t c = cc->cfg;
    c.start_bps = urtp_cc_target(lead_cc(cc));
    urtp_cc_init(&idle->cc, &c);
    idle->fed = false;
  }
  idle->used = true;
  idle->ssrc = ssrc;
  return idle;
}

/* The lead: the least target of the peers heard from within
 * URTP_SENDSTREAM_CC_IDLE (the current one when none are). cc_lock held. */
static void choose_lead(sendstream_cc_t *cc, int64_t now)
{
  unsigned lead = cc->lead;
  uint64_t least = UINT64_MAX;
  for (unsigned i = 0; i < URTP_SENDSTREAM_CC_RECEIVERS; i++) {
    cc_peer_t *p = &cc->peer[i];
    if (!p->fed || now - p->last_us >= URTP_SENDSTREAM_CC_IDLE / 1000)
      continue;
    uint64_t t = urtp_cc_target(&p->cc);
    if (t < least) {
      least = t;
      lead = i;
    }
  }
  cc->lead = lead;
}

int urtp_sendstream_set_ccfb(urtp_sendstream_t *ss, bool on)
{
  sendstream_cc_t *cc = NULL;
  if (!on) {
    /* the controller needs the feedback */
    pthread_mutex_lock(&ss->cc_lock);
    bool control = ss->cc && ss->cc->control;
    pthread_mutex_unlock(&ss->cc_lock);
    if (control)
      return 0;
  }
  if (on) {
    pthread_mutex_lock(&ss->cc_lock);
    bool have = ss->cc != NULL;
    pthread_mutex_unlock(&ss->cc_lock);
    if (have)
      return 0;
    if (!(cc = malloc(sizeof *cc)))
      return -ENOMEM;
    cc->control = false;
    memset(cc->peer, 0, sizeof cc->peer);
    cc->lead = 0;
    urtp_twcc_history_init(&cc->tw);
    urtp_twcc_history_init(&cc->seq);
  }
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *old = ss->cc;
  ss->cc = cc;
  pthread_mutex_unlock(&ss->cc_lock);
  free(old);
  return 0;
}

int urtp_sendstream_set_congestion(urtp_sendstream_t *ss, const urtp_cc_config_t *cfg)
{
  if (cfg) {
    int r = urtp_sendstream_set_ccfb(ss, true);
    if (r < 0)
      return r;
  }
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  if (cc && cfg && cc->control) {
    cc->cfg.min_bps = cfg->min_bps;
    cc->cfg.max_bps = cfg->max_bps;
    for (unsigned i = 0; i < URTP_SENDSTREAM_CC_RECEIVERS; i++)
      urtp_cc_set_bounds(&cc->peer[i].cc, cfg->min_bps, cfg->max_bps);
  } else if (cc && cfg) {
    /* the first controller paces from the start; the first receiver to
     * report takes it */
    cc->cfg = *cfg;
    memset(cc->peer, 0, sizeof cc->peer);
    for (unsigned i = 0; i < URTP_SENDSTREAM_CC_RECEIVERS; i++)
      urtp_cc_init(&cc->peer[i].cc, cfg);
    cc->lead = 0;
    cc->control = true;
  } else if (cc) {
    cc->control = false;
  }
  pthread_mutex_unlock(&ss->cc_lock);
  return 0;
}

bool urtp_sendstream_congestion(urtp_sendstream_t *ss, urtp_cc_stats_t *out)
{
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  bool on = cc && cc->control && cc->peer[cc->lead].fed;
  if (on && out)
    urtp_cc_stats(lead_cc(cc), out);
  pthread_mutex_unlock(&ss->cc_lock);
  return on;
}

bool sendstream_cc_pacing(urtp_sendstream_t *ss, size_t bytes, bool backlog, int64_t t,
                          uint64_t *rate)
{
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  bool on = cc && cc->control;
  if (on)
    *rate = urtp_cc_pacing_for(lead_cc(cc), bytes, backlog, t / 1000);
  pthread_mutex_unlock(&ss->cc_lock);
  return on;
}

bool sendstream_cc_target(urtp_sendstream_t *ss, uint64_t *bps, int64_t *queue_us)
{
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  bool on = cc && cc->control;
  if (on) {
    *bps = urtp_cc_target(lead_cc(cc));
    *queue_us = cc->peer[cc->lead].fed ? lead_cc(cc)->st.queue_us : 0;
  }
  pthread_mutex_unlock(&ss->cc_lock);
  return on;
}

unsigned sendstream_cc_receivers(urtp_sendstream_t *ss, int64_t now)
{
  unsigned n = 0;
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  for (unsigned i = 0; cc && cc->control && i < URTP_SENDSTREAM_CC_RECEIVERS; i++)
    n += cc->peer[i].fed && now - cc->peer[i].last_us < URTP_SENDSTREAM_CC_IDLE / 1000;
  pthread_mutex_unlock(&ss->cc_lock);
  return n;
}

void sendstream_cc_free(urtp_sendstream_t *ss)
{
  free(ss->cc);
  ss->cc = NULL;
}

/* The transport-wide number of an RTP packet whose headers are h[0 .. n)
 * (element tw_id); false when it has none. */
static bool tw_of(const uint8_t *h, size_t n, unsigned tw_id, uint16_t *seq)
{
  if (!tw_id || n < 16 || !(h[0] & 0x10))
    return false;
  size_t off = 12 + 4u * (h[0] & 15u);
  if (off + 4 > n)
    return false;
  size_t len = 4u * urtp_rd16(h + off + 2), got;
  if (off + 4 + len > n)
    return false;
  const uint8_t *d = urtp_hdrext_find(urtp_rd16(h + off), h + off + 4, len, tw_id, &got);
  if (!d || got < 2)
    return false;
  *seq = urtp_rd16(d);
  return true;
}

void sendstream_cc_sent(void *user, const urtp_batch_t *b, size_t first, size_t end,
                        uint64_t mono)
{
  urtp_sendstream_t *ss = user;
  /* each packet once: the fan-out's first copy */
  if (!atomic_load_explicit(&ss->cc, memory_order_relaxed) || ss->cc_copy != 0)
    return;
  unsigned tw_id = atomic_load(&ss->tw_id);
  int64_t us = (int64_t)(mono / 1000);
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  for (size_t i = first; cc && i < end; i++) {
    const struct iovec *v = &b->iov[b->pkts[i].iov_first];
    const uint8_t *h = v->iov_base;
    uint16_t tw;
    if (v->iov_len < 12)
      continue;
    /* the bytes feedback counts: the UDP payload */
    if (tw_of(h, v->iov_len, tw_id, &tw))
      urtp_twcc_history_add(&cc->tw, tw, us, b->pkts[i].len, 0);
    urtp_twcc_history_add(&cc->seq, urtp_rd16(h + 2), us, b->pkts[i].len, 0);
  }
  pthread_mutex_unlock(&ss->cc_lock);
}

void sendstream_cc_rtx_sent(urtp_sendstream_t *ss, const uint8_t *pkt, size_t len, int64_t t)
{
  uint16_t tw;
  if (!tw_of(pkt, len, atomic_load(&ss->tw_id), &tw))
    return;
  pthread_mutex_lock(&ss->cc_lock);
  if (ss->cc)
    urtp_twcc_history_add(&ss->cc->tw, tw, t / 1000, (uint32_t)len, URTP_TWCC_SENT_RTX);
  pthread_mutex_unlock(&ss->cc_lock);
}

void sendstream_cc_feedback(urtp_sendstream_t *ss, const urtp_rtcp_pkt_t *p)
{
  const uint8_t *raw = p->data;
  size_t len = p->len, n = 0, m = 0;
  int fmt = p->count;
  if (fmt != URTP_CCFB_FMT_TWCC && fmt != URTP_CCFB_FMT_RFC8888)
    return;
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  if (!cc) {
    pthread_mutex_unlock(&ss->cc_lock);
    return;
  }
  int r;
  int64_t now = now_ns() / 1000;
  urtp_twcc_history_t *h = &cc->tw;
  uint64_t unknown0, repeated0;
  uint32_t from = 0;            /* the feedback's sender */
  if (fmt == URTP_CCFB_FMT_TWCC) {
    urtp_twcc_info_t info;
    r = urtp_twcc_parse(raw, len, &info, cc->pkts, URTP_TWCC_MAX_PACKETS, &n);
    from = info.sender_ssrc;
  } else {
    uint64_t report;
    r = urtp_rfc8888_parse(raw, len, &from, &report, cc->pkts, URTP_TWCC_MAX_PACKETS, &n);
    /* only our media's block: the RTX stream's numbers are another's */
    size_t k = 0;
    for (size_t i = 0; r == 0 && i < n; i++)
      if (cc->pkts[i].ssrc == ss->cfg.ssrc)
        cc->pkts[k++] = cc->pkts[i];
    n = k;
    h = &cc->seq;
  }
  unknown0 = h->unknown;
  repeated0 = h->repeated;
  /* whose, once it parsed (RTCP that reaches here is trusted) */
  cc_peer_t *peer = &cc->peer[0];
  if (r == 0 && cc->control)
    peer = peer_of(cc, from, now);
  unsigned rcv = peer ? (unsigned)(peer - cc->peer) : 0;
  if (r == 0 && peer)
    m = urtp_twcc_history_match_for(h, rcv, cc->pkts, n, cc->res, URTP_TWCC_MAX_PACKETS);
  uint64_t acked = 0, lost = 0;
  for (size_t i = 0; i < m; i++) {
    acked += cc->res[i].received;
    lost += !cc->res[i].received;
  }
  /* the controller takes one of the two: transport-wide numbers when the
   * packets carry them (they number retransmissions too), else RFC 8888 */
  bool tw = atomic_load(&ss->tw_id) != 0;
  if (cc->control && m && (fmt == URTP_CCFB_FMT_TWCC) == tw) {
    urtp_cc_feedback(&peer->cc, cc->res, m, now);
    peer->fed = true;
    peer->last_us = now;
    choose_lead(cc, now);
  }
  uint64_t unknown = h->unknown - unknown0, repeated = h->repeated - repeated0;
  pthread_mutex_unlock(&ss->cc_lock);

  pthread_mutex_lock(&ss->stats_lock);
  if (r < 0) {
    ss->st.ccfb_malformed++;
  } else if (!peer) {
    ss->st.ccfb_untracked++;
  } else {
    ss->st.ccfb_received += fmt == URTP_CCFB_FMT_TWCC;
    ss->st.rfc8888_received += fmt == URTP_CCFB_FMT_RFC8888;
    ss->st.ccfb_acked += acked;
    ss->st.ccfb_lost += lost;
    ss->st.ccfb_unknown += unknown;
    ss->st.ccfb_repeated += repeated;
  }
  pthread_mutex_unlock(&ss->stats_lock);
}
