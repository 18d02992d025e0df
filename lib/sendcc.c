/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sendcc.c - the sending stream's side of congestion control feedback
 * (urtp_sendstream_set_ccfb): what left and when, by transport-wide and by
 * RTP sequence number (twcc.h), matched against the feedback of trusted
 * receivers (ccfb.h). Internal; see sendstream.h.
 */
#include "sendstream_priv.h"

#include "urtp/hdrext.h"

struct sendstream_cc {
  urtp_twcc_history_t tw;       /* by transport-wide number */
  urtp_twcc_history_t seq;      /* by our RTP sequence number (RFC 8888) */
  bool control;                 /* the controller runs */
  bool fed;                     /* ... and has had feedback */
  urtp_cc_t cc;
  urtp_ccfb_pkt_t pkts[URTP_TWCC_MAX_PACKETS];
  urtp_twcc_result_t res[URTP_TWCC_MAX_PACKETS];
};

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
    cc->control = cc->fed = false;
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
    urtp_cc_set_bounds(&cc->cc, cfg->min_bps, cfg->max_bps);
  } else if (cc && cfg) {
    urtp_cc_init(&cc->cc, cfg);
    cc->control = true;
    cc->fed = false;
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
  bool on = cc && cc->control && cc->fed;
  if (on && out)
    urtp_cc_stats(&cc->cc, out);
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
    *rate = urtp_cc_pacing_for(&cc->cc, bytes, backlog, t / 1000);
  pthread_mutex_unlock(&ss->cc_lock);
  return on;
}

bool sendstream_cc_target(urtp_sendstream_t *ss, uint64_t *bps, int64_t *queue_us)
{
  pthread_mutex_lock(&ss->cc_lock);
  sendstream_cc_t *cc = ss->cc;
  bool on = cc && cc->control;
  if (on) {
    *bps = urtp_cc_target(&cc->cc);
    *queue_us = cc->fed ? cc->cc.st.queue_us : 0;
  }
  pthread_mutex_unlock(&ss->cc_lock);
  return on;
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
  urtp_twcc_history_t *h = &cc->tw;
  uint64_t unknown0, repeated0;
  if (fmt == URTP_CCFB_FMT_TWCC) {
    urtp_twcc_info_t info;
    r = urtp_twcc_parse(raw, len, &info, cc->pkts, URTP_TWCC_MAX_PACKETS, &n);
  } else {
    uint32_t sender;
    uint64_t report;
    r = urtp_rfc8888_parse(raw, len, &sender, &report, cc->pkts, URTP_TWCC_MAX_PACKETS, &n);
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
  if (r == 0)
    m = urtp_twcc_history_match(h, cc->pkts, n, cc->res, URTP_TWCC_MAX_PACKETS);
  uint64_t acked = 0, lost = 0;
  for (size_t i = 0; i < m; i++) {
    acked += cc->res[i].received;
    lost += !cc->res[i].received;
  }
  /* the controller takes one of the two: transport-wide numbers when the
   * packets carry them (they number retransmissions too), else RFC 8888 */
  bool tw = atomic_load(&ss->tw_id) != 0;
  if (cc->control && m && (fmt == URTP_CCFB_FMT_TWCC) == tw) {
    urtp_cc_feedback(&cc->cc, cc->res, m, now_ns() / 1000);
    cc->fed = true;
  }
  uint64_t unknown = h->unknown - unknown0, repeated = h->repeated - repeated0;
  pthread_mutex_unlock(&ss->cc_lock);

  pthread_mutex_lock(&ss->stats_lock);
  if (r < 0) {
    ss->st.ccfb_malformed++;
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
