/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/recvstream.h"

#include <errno.h>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_util.h"
#include "urtp/bytes.h"
#include "urtp/rtcpio.h"
#include "urtp/rtp.h"
#include "urtp/rtx.h"
#include "urtp/scl.h"
#include "urtp/sync.h"
#include "urtp/timing.h"
#include "urtp/twcc.h"
#ifdef URTP_HAVE_ZRTP_EP
#include "urtp/zrtp.h"
#include "urtp/zrtp_ep.h"
#endif

#define EVENTS 16

struct urtp_recvstream {
  urtp_recvstream_config_t cfg;
  uint8_t *params;              /* own copy of cfg.params */
  size_t params_len;
  urtp_depay_t *depay;
  urtp_source_t src;
  urtp_timing_t timing;

  /* SRTP: a static key, or ZRTP's keys kept in line per datagram */
  urtp_srtp_t srtp;
  bool srtp_ready;
  int zrtp_serial;
  bool zrtp_had_keys;
  /* SRTCP out (our reports under rtcp_ssrc), the same key's or ZRTP's
   * local one; SRTCP in goes through srtp */
  urtp_srtp_t srtcp_out;
  int srtcp_serial;

  /* the datagram being pushed: parsed once, passed on without a copy;
   * where it came from (NULL: not known) */
  const uint8_t *cur_raw;
  urtp_rtp_pkt_t cur;
  const struct sockaddr_storage *cur_from;

  /* where the followed source's media comes from (RFC 3550 8.2: a source
   * is an SSRC at a transport address): its RTCP is taken from that host
   * only, and our reports go there. Set from the packet that made it the
   * followed source, or its next one (a takeover from kept packets). */
  struct sockaddr_storage peer;
  bool peer_set;
  /* the last sender report that disagreed with the mapping in use
   * (sr_sane): a second one that agrees with it is a new mapping */
  bool sr_odd_valid;
  urtp_rtcp_sr_t sr_odd;

  /* RTCP: the current source's reception statistics and last SR; ours */
  urtp_rtcp_rx_t rx;
  bool rx_valid;
  uint32_t rtcp_ssrc;
  /* RTCP among the datagrams (cfg.rtcp_mux), for urtp_recvstream_rtcp_service:
   * compounds and their bytes, sender reports of the current source and
   * where the last one came from (where our reports go) */
  uint64_t mux_in, mux_bytes, mux_srs;
  struct sockaddr_storage mux_from;
  bool mux_from_set;
  char cname[URTP_RTCP_MAX_TEXT + 1];
  /* the last sender report of an SSRC not followed (yet), and where it
   * came from; once its source is followed, where our reports go */
  struct {
    bool valid, has_from;
    urtp_rtcp_sr_t sr;
    uint64_t arrival;
    struct sockaddr_storage from;
    char cname[URTP_RTCP_MAX_TEXT + 1];
  } early;
  uint64_t early_srs;           /* taken since the last service */
  bool learn;
  struct sockaddr_storage learn_from;

  /* lip sync (sync.h): our member, the clock we time on, the offset given,
   * the delay applied to the last frame */
  urtp_sync_member_t *sync;
  uint64_t sync_domain;
  int64_t sync_given;
  bool sync_valid;
  bool sync_applied_valid;
  int64_t sync_applied;

  /* loss recovery (cfg.nack, cfg.rtx, cfg.request_keyframe) */
  urtp_nack_t *nack;            /* NULL: no NACKs */
  bool fb_ok;                   /* where feedback goes is known */
  bool cur_rtx;                 /* the packet being pushed came as RTX */
  bool rtx_seq_valid;           /* the RTX stream's next sequence number: */
  uint32_t rtx_seq_ssrc;        /* a gap is retransmissions lost */
  uint16_t rtx_seq_next;
  int media_pt;                 /* the followed source's; -1: none yet */
  int kf_pending;               /* -1: none; 0: PLI; 1: FIR */
  bool kf_sent;                 /* one was sent, at kf_last */
  uint64_t kf_last;
  uint8_t fir_seq;
  uint64_t lost_seen;           /* packets given up, when last looked */
  /* NACKs end for a source that never answers one: the requests and RTX
   * taken when it became the followed source */
  uint64_t nack_base_requests, nack_base_rtx;
  uint64_t nack_first_ask;       /* when a request first went; 0: none yet */
  bool nack_off;

  /* congestion control feedback (cfg.twcc_id, cfg.rfc8888): the
   * recorders (NULL: off), whether a marker bit came since the last,
   * when the last went */
  urtp_twcc_recorder_t *twcc, *rfc8888;
  bool ccfb_marker;
  bool ccfb_more;               /* the last compound had no room for all */
  uint64_t ccfb_last;

  bool discont;                 /* next frame DISCONT */
  bool out_valid;               /* out_last is of the current numbering */
  uint64_t out_last;            /* last sequence number of the last frame */
  uint64_t out_missing;         /* missing before the next frame */
  /* the rest of a batch, waiting for room in the output queue */
  const urtp_dgram_t *held;
  size_t held_n;
  uint64_t held_now;
  int64_t held_real;            /* CLOCK_REALTIME ns when held_now was read */
  /* the datagram being pushed: when the kernel took it, on the caller's
   * clock (0: not known), for congestion control feedback */
  uint64_t cur_stamp;
  bool params_due;              /* next frame gets the parameter sets */

  urtp_recvstream_event_t ev[EVENTS];
  size_t ev_head, ev_len;

  urtp_recvstream_stats_t st;   /* streaming thread's; depay, source and
                                 * srtp counters are read from their owners */
  urtp_depay_stats_t depay_base;  /* of depayloaders replaced by set_format */
  pthread_mutex_t snap_lock;
  urtp_recvstream_stats_t snap;
};

/* ---- callbacks from the layers ---- */

/* depay: an access unit is queued; it is timed now, with the mapping of
 * the source it came from. */
static void on_au(void *user, urtp_au_t *au)
{
  urtp_recvstream_t *r = user;
  bool reanchored;
  au->pts = urtp_timing_map(&r->timing, au->rtp_ts, au->arrival, &reanchored);
  if (reanchored) {
    r->st.timing_resets++;
    au->flags |= URTP_AU_DISCONT;
  }
}

static void take_early(urtp_recvstream_t *r);

/* A packet of the followed source (p, parsed), for congestion control
 * feedback. */
static void ccfb_record(urtp_recvstream_t *r, const urtp_rtp_pkt_t *p, uint64_t arrival)
{
  size_t n;
  const uint8_t *d;
  if (r->twcc && p->hdr.ext_len &&
      (d = urtp_hdrext_find(p->hdr.ext_profile, p->hdr.ext_data, p->hdr.ext_len, r->cfg.twcc_id,
                            &n)) && n >= 2) {
    urtp_twcc_recorder_add(r->twcc, urtp_rd16(d), (int64_t)(arrival / 1000));
    r->st.twcc_recorded++;
  }
  /* RFC 8888 is about the media stream's own numbers: a retransmission
   * is not its packet arriving */
  if (r->rfc8888 && !r->cur_rtx) {
    urtp_twcc_recorder_add(r->rfc8888, p->hdr.seq, (int64_t)(arrival / 1000));
    r->st.rfc8888_recorded++;
  }
  if (p->hdr.marker)
    r->ccfb_marker = true;
}

/* source: a packet of the stream. */
static void on_packet(void *user, const uint8_t *pkt, size_t len, uint64_t arrival)
{
  urtp_recvstream_t *r = user;
  urtp_rtp_pkt_t kept;
  const urtp_rtp_pkt_t *p = &r->cur;
  if (pkt != r->cur_raw) {
    /* a copy the source layer kept: it parsed before */
    if (urtp_rtp_parse(pkt, len, &kept) != 0)
      return;
    p = &kept;
  }
  urtp_depay_push_parsed(r->depay, pkt, len, p, arrival);
  if (r->nack)
    urtp_nack_packet(r->nack, p->hdr.seq, arrival);
  if (r->twcc || r->rfc8888)
    ccfb_record(r, p, pkt == r->cur_raw && r->cur_stamp ? r->cur_stamp : arrival);
  if (!r->peer_set && pkt == r->cur_raw && r->cur_from && !r->cur_rtx) {
    r->peer = *r->cur_from;
    r->peer_set = true;
    take_early(r);
  }
  /* a retransmission is not the network's own delivery: the reports say
   * what the network lost, and its transit is not the path's jitter */
  if (r->cur_rtx && pkt == r->cur_raw)
    return;
  r->media_pt = p->hdr.pt;
  if (!r->rx_valid || r->rx.ssrc != p->hdr.ssrc) {
    urtp_rtcp_rx_init(&r->rx, p->hdr.ssrc, p->hdr.seq, r->cfg.clock_rate);
    r->rx_valid = true;
  }
  urtp_rtcp_rx_update(&r->rx, p->hdr.seq, p->hdr.ts, arrival, p->payload_len);
}

static void queue_event(urtp_recvstream_t *r, const urtp_recvstream_event_t *ev)
{
  if (r->ev_len == EVENTS) {
    r->ev_head = (r->ev_head + 1) % EVENTS;
    r->ev_len--;
  }
  r->ev[(r->ev_head + r->ev_len) % EVENTS] = *ev;
  r->ev_len++;
}

/* Everything that depends on the old numbering and timeline starts over. */
static void new_stream(urtp_recvstream_t *r)
{
  /* a new source (or numbering): its statistics, reports and name start
   * over */
  r->rx_valid = false;
  r->st.rtcp_sr = 0;
  r->st.sr_ntp = r->st.sr_arrival = 0;
  r->st.sr_rtp_ts = r->st.sr_packets = r->st.sr_octets = 0;
  r->st.cname[0] = '\0';
  if (r->sync_valid)
    urtp_sync_withdraw(r->sync);
  r->sync_valid = false;
  r->st.sync_offset = r->st.sync_delay = 0;
  r->st.synced = false;
  r->sync_applied_valid = false;
  r->sr_odd_valid = false;
  if (r->nack) {
    urtp_nack_reset(r->nack);
    urtp_nack_stats(r->nack, &r->st.nack);
    r->nack_base_requests = r->st.nack.requests;
  }
  r->nack_base_rtx = r->st.rtx;
  r->nack_off = false;
  r->nack_first_ask = 0;
  r->media_pt = -1;
  urtp_depay_restart(r->depay);
  urtp_timing_reset(&r->timing);
  r->discont = true;
  r->out_valid = false;
  r->params_due = r->params != NULL;
}

/* Whether sender report b agrees with a's NTP/RTP mapping: b's NTP time is
 * where a's mapping and the RTP clock put b's RTP timestamp, within
 * URTP_RECVSTREAM_SR_TOLERANCE plus the drift of two clocks over the time
 * between them (URTP_RECVSTREAM_SR_DRIFT_PPM). */
static bool sr_agrees(const urtp_rtcp_sr_t *a, const urtp_rtcp_sr_t *b, uint32_t clock_rate)
{
  int64_t ticks = (int32_t)(b->rtp_ts - a->rtp_ts);
  int64_t by_rtp = urtp_timing_ticks_to_ns(ticks, clock_rate);
  int64_t by_ntp = (int64_t)(urtp_ntp_to_ns(b->ntp) - urtp_ntp_to_ns(a->ntp));
  int64_t err = by_ntp - by_rtp;
  int64_t span = by_rtp < 0 ? -by_rtp : by_rtp;
  int64_t tol = (int64_t)URTP_RECVSTREAM_SR_TOLERANCE + span / 1000000 * URTP_RECVSTREAM_SR_DRIFT_PPM;
  return err <= tol && err >= -tol;
}

/* Whether sr may replace the current source's mapping: the first one, one
 * that agrees with it, or the second in a row to agree with each other
 * but not with it (the sender's clock was stepped); else counted and
 * ignored. */
static bool sr_sane(urtp_recvstream_t *r, const urtp_rtcp_sr_t *sr)
{
  if (r->st.rtcp_sr == 0)
    return true;
  urtp_rtcp_sr_t cur = { .ntp = r->st.sr_ntp, .rtp_ts = r->st.sr_rtp_ts };
  if (sr_agrees(&cur, sr, r->cfg.clock_rate)) {
    r->sr_odd_valid = false;
    return true;
  }
  if (r->sr_odd_valid && sr_agrees(&r->sr_odd, sr, r->cfg.clock_rate)) {
    r->sr_odd_valid = false;
    r->st.sr_remapped++;
    return true;
  }
  r->sr_odd = *sr;
  r->sr_odd_valid = true;
  r->st.sr_rejected++;
  return false;
}

/* The source's sender report (and CNAME) at now. */
static void take_sr(urtp_recvstream_t *r, const urtp_rtcp_sr_t *sr, uint64_t now)
{
  r->st.rtcp_sr++;
  r->st.sr_ntp = sr->ntp;
  r->st.sr_rtp_ts = sr->rtp_ts;
  r->st.sr_packets = sr->packets;
  r->st.sr_octets = sr->octets;
  r->st.sr_arrival = now;
}

/* Whether RTCP from `from` may speak for the followed source: from its
 * host (RTCP may come from another port: rtpbin sends from its own
 * socket), verified by SRTCP, or handed over with no address (the caller
 * vouches for it). */
static bool rtcp_trusted(const urtp_recvstream_t *r, const struct sockaddr_storage *from)
{
  return !from || r->srtp_ready || (r->peer_set && urtp_addr_same_host(from, &r->peer));
}

/* The followed source's report that came before it was followed, once
 * where the source sends from is known: taken if it came from there (or
 * its address is not known), and its address is where our reports and
 * feedback go. */
static void take_early(urtp_recvstream_t *r)
{
  uint32_t cur;
  if (!r->early.valid || !urtp_source_current(&r->src, &cur) || r->early.sr.ssrc != cur)
    return;
  if (r->early.has_from && !r->srtp_ready && !r->peer_set)
    return;  /* until the source's next packet says where it is */
  r->early.valid = false;
  if (!rtcp_trusted(r, r->early.has_from ? &r->early.from : NULL)) {
    r->st.rtcp_foreign++;
    return;
  }
  take_sr(r, &r->early.sr, r->early.arrival);
  snprintf(r->st.cname, sizeof r->st.cname, "%s", r->early.cname);
  r->early_srs++;
  r->learn = r->early.has_from;
  r->learn_from = r->early.from;
}

/* source: the stream changes before the packet that comes next. */
static void on_source_event(void *user, const urtp_source_event_t *ev)
{
  urtp_recvstream_t *r = user;
  urtp_recvstream_event_t e = { .kind = URTP_RECVSTREAM_EV_SOURCE, .source = *ev };
  new_stream(r);
  /* the packet in hand made it the source: that is where it sends from
   * (a takeover from kept packets learns it from its next one) */
  r->peer_set = r->cur_raw && r->cur_from && r->cur.hdr.ssrc == ev->new_ssrc;
  if (r->peer_set)
    r->peer = *r->cur_from;
  if (r->early.valid && r->early.sr.ssrc != ev->new_ssrc)
    r->early.valid = false;
  take_early(r);
  queue_event(r, &e);
}

/* ---- statistics ---- */

static void depay_stats_add(urtp_depay_stats_t *d, const urtp_depay_stats_t *s)
{
  d->packets += s->packets;
  d->bytes += s->bytes;
  d->skipped += s->skipped;
  d->aus += s->aus;
  d->nals += s->nals;
  d->malformed += s->malformed;
  d->foreign += s->foreign;
  d->unsupported += s->unsupported;
  d->dropped_nals += s->dropped_nals;
  d->dropped_aus += s->dropped_aus;
  d->oversize += s->oversize;
  d->seq.delivered += s->seq.delivered;
  d->seq.lost += s->seq.lost;
  d->seq.duplicates += s->seq.duplicates;
  d->seq.late += s->seq.late;
  d->seq.last_late = s->seq.last_late;
  d->seq.reordered += s->seq.reordered;
  d->seq.resyncs += s->seq.resyncs;
}

static void publish(urtp_recvstream_t *r)
{
  urtp_recvstream_stats_t *st = &r->st;
  st->srtp = r->srtp.stats;
  st->source = r->src.stats;
  st->depay = r->depay_base;
  depay_stats_add(&st->depay, urtp_depay_stats(r->depay));
  st->waiting = urtp_depay_pending(r->depay);
  st->skew = r->timing.skew;
  st->have_source = urtp_source_current(&r->src, &st->ssrc);
  if (r->nack)
    urtp_nack_stats(r->nack, &st->nack);
  st->ccfb_duplicates = st->ccfb_late = st->ccfb_strays = 0;
  for (int i = 0; i < 2; i++) {
    const urtp_twcc_recorder_t *c = i ? r->rfc8888 : r->twcc;
    if (c) {
      st->ccfb_duplicates += c->duplicates;
      st->ccfb_late += c->late;
      st->ccfb_strays += c->strays;
    }
  }
  st->have_reception = r->rx_valid;
  if (r->rx_valid)
    urtp_rtcp_rx_peek(&r->rx, &st->reception);
  pthread_mutex_lock(&r->snap_lock);
  r->snap = *st;
  pthread_mutex_unlock(&r->snap_lock);
}

void urtp_recvstream_stats(urtp_recvstream_t *r, urtp_recvstream_stats_t *out)
{
  pthread_mutex_lock(&r->snap_lock);
  *out = r->snap;
  pthread_mutex_unlock(&r->snap_lock);
}

/* ---- set-up ---- */

static urtp_depay_t *make_depay(urtp_recvstream_t *r)
{
  const urtp_recvstream_config_t *c = &r->cfg;
  urtp_depay_config_t dc = {
    .codec = c->codec,
    .pt = -1,           /* checked here, before the source layer */
    .ssrc = -1,
    .reorder_window = c->reorder_window,
    .max_packet = c->max_packet,
    .max_au_size = c->max_au_size,
    .loss_policy = c->loss_policy,
    .wait_for_keyframe = c->wait_for_keyframe,
    .donl = c->donl,
    .recycle = true,
    .on_au = on_au,
    .user = r,
  };
  return urtp_depay_new(&dc);
}

static int set_params(urtp_recvstream_t *r, const uint8_t *params, size_t len)
{
  uint8_t *copy = NULL;
  if (params && len) {
    copy = malloc(len);
    if (!copy)
      return -ENOMEM;
    memcpy(copy, params, len);
  }
  free(r->params);
  r->params = copy;
  r->params_len = copy ? len : 0;
  r->params_due = copy != NULL;
  return 0;
}

int urtp_recvstream_new(const urtp_recvstream_config_t *cfg, urtp_recvstream_t **out)
{
  *out = NULL;
  if (!cfg || (unsigned)cfg->codec > URTP_CODEC_OPUS || cfg->pt < -1 || cfg->pt > 127 ||
      (cfg->srtp && cfg->zrtp) || (cfg->rtx && (cfg->rtx_pt > 127 || cfg->rtx_pt == cfg->pt)))
    return -EINVAL;
#ifndef URTP_HAVE_ZRTP_EP
  if (cfg->zrtp)
    return -ENOTSUP;
#endif
#ifndef URTP_HAVE_SRTP
  if (cfg->srtp)
    return -ENOTSUP;
#endif
  urtp_recvstream_t *r = calloc(1, sizeof(*r));
  if (!r)
    return -ENOMEM;
  r->cfg = *cfg;
  r->cfg.params = NULL;
  r->cfg.params_len = 0;
  if (!r->cfg.clock_rate)
    r->cfg.clock_rate = urtp_codec_clock_rate(cfg->codec);
  if (!r->cfg.source_timeout)
    r->cfg.source_timeout = URTP_RECVSTREAM_SOURCE_TIMEOUT;
  if (!r->cfg.reorder_window)
    r->cfg.reorder_window = URTP_RECVSTREAM_WINDOW;
  if (!r->cfg.max_packet)
    r->cfg.max_packet = 1500;
  /* NACKs need something to wait for; a gap must wait for its answer
   * while a large picture arrives behind it */
  r->cfg.nack = cfg->nack && r->cfg.latency > 0;
  if (r->cfg.nack && cfg->codec != URTP_CODEC_OPUS &&
      r->cfg.reorder_window < URTP_RECVSTREAM_NACK_WINDOW)
    r->cfg.reorder_window = URTP_RECVSTREAM_NACK_WINDOW;
  r->media_pt = -1;
  r->kf_pending = -1;
  pthread_mutex_init(&r->snap_lock, NULL);

  int err = -ENOMEM;
  urtp_source_config_t sc = {
    .ssrc = cfg->ssrc,
    .timeout = r->cfg.source_timeout,
    .max_packet = r->cfg.max_packet,
    /* a jump back within the reorder window is reordering, not a restart */
    .max_misorder = cfg->max_misorder ? cfg->max_misorder :
                    r->cfg.reorder_window > URTP_SOURCE_MAX_MISORDER ?
                    (unsigned)r->cfg.reorder_window : 0,
  };
  if ((err = urtp_source_init(&r->src, &sc)) < 0)
    goto fail;
  if (r->cfg.nack) {
    urtp_nack_config_t nc = { .deadline = r->cfg.latency };
    err = -ENOMEM;
    if (!(r->nack = malloc(sizeof *r->nack)))
      goto fail;
    urtp_nack_init(r->nack, &nc);
  }
  err = -EINVAL;
  if (!(r->depay = make_depay(r)))
    goto fail;
  if ((err = set_params(r, cfg->params, cfg->params_len)) < 0)
    goto fail;
  urtp_timing_init(&r->timing, r->cfg.clock_rate, 0, 0);
  if ((err = urtp_recvstream_set_ccfb(r, cfg->twcc_id, cfg->rfc8888, cfg->ccfb_interval)) < 0)
    goto fail;
  err = -ENOMEM;
  if (cfg->lip_sync && !(r->sync = urtp_sync_member_new()))
    goto fail;
  r->sync_domain = cfg->sync_domain;
  r->rtcp_ssrc = cfg->rtcp_ssrc;
  while (r->rtcp_ssrc == 0 && RAND_bytes((unsigned char *)&r->rtcp_ssrc, sizeof r->rtcp_ssrc) == 1)
    ;
  if (r->rtcp_ssrc == 0)
    r->rtcp_ssrc = (uint32_t)(uintptr_t)r ^ 0x5eed5eedu;
  snprintf(r->cname, sizeof r->cname, "%s", cfg->cname ? cfg->cname : urtp_rtcp_default_cname());
  r->cfg.cname = NULL;
#ifdef URTP_HAVE_SRTP
  if (cfg->srtp) {
    if ((err = urtp_srtp_init(&r->srtp, cfg->srtp)) < 0)
      goto fail;
    r->srtp_ready = true;
    urtp_srtp_config_t sc_out = *cfg->srtp;
    sc_out.dir = URTP_SRTP_OUTBOUND;
    sc_out.any_ssrc = false;
    sc_out.ssrc = r->rtcp_ssrc;
    sc_out.replay_window = 0;
    if ((err = urtp_srtp_init(&r->srtcp_out, &sc_out)) < 0)
      goto fail;
  }
#endif
#ifdef URTP_HAVE_ZRTP_EP
  /* the first sync sets the keys up if there are any already */
  if (cfg->zrtp)
    r->zrtp_serial = r->srtcp_serial = urtp_zrtp_ep_serial(cfg->zrtp) - 1;
#endif
  publish(r);
  *out = r;
  return 0;
fail:
  urtp_recvstream_free(r);
  return err;
}

void urtp_recvstream_free(urtp_recvstream_t *r)
{
  if (!r)
    return;
  urtp_depay_free(r->depay);
  urtp_source_destroy(&r->src);
  urtp_sync_member_free(r->sync);
  free(r->nack);
  free(r->twcc);
  free(r->rfc8888);
#ifdef URTP_HAVE_SRTP
  urtp_srtp_destroy(&r->srtp);
  urtp_srtp_destroy(&r->srtcp_out);
#endif
  free(r->params);
  pthread_mutex_destroy(&r->snap_lock);
  free(r);
}

/* A recorder in *slot when on (made once), none when off. */
static int ccfb_recorder(urtp_twcc_recorder_t **slot, bool on)
{
  if (!on) {
    free(*slot);
    *slot = NULL;
  } else if (!*slot) {
    if (!(*slot = malloc(sizeof **slot)))
      return -ENOMEM;
    urtp_twcc_recorder_init(*slot);
  }
  return 0;
}

int urtp_recvstream_set_ccfb(urtp_recvstream_t *r, unsigned twcc_id, bool rfc8888,
                             uint64_t interval)
{
  if (twcc_id > 255)
    return -EINVAL;
  int err;
  if ((err = ccfb_recorder(&r->twcc, twcc_id != 0)) < 0 ||
      (err = ccfb_recorder(&r->rfc8888, rfc8888)) < 0)
    return err;
  r->cfg.twcc_id = twcc_id;
  r->cfg.rfc8888 = rfc8888;
  r->cfg.ccfb_interval = interval;
  return 0;
}

int urtp_recvstream_set_format(urtp_recvstream_t *r, urtp_codec_t codec, int pt,
                               uint32_t clock_rate, bool donl, const uint8_t *params,
                               size_t params_len)
{
  if ((unsigned)codec > URTP_CODEC_OPUS || pt < -1 || pt > 127)
    return -EINVAL;
  if (!clock_rate)
    clock_rate = urtp_codec_clock_rate(codec);
  bool same = codec == r->cfg.codec && pt == r->cfg.pt && donl == r->cfg.donl &&
              clock_rate == r->cfg.clock_rate;
  if (same) {
    /* new parameter sets only: they go before the next access unit */
    int err = set_params(r, params, params_len);
    publish(r);
    return err;
  }
  urtp_recvstream_config_t old = r->cfg;
  r->cfg.codec = codec;
  r->cfg.pt = pt;
  r->cfg.donl = donl;
  r->cfg.clock_rate = clock_rate;
  urtp_depay_t *d = make_depay(r);
  if (!d) {
    r->cfg = old;
    return -EINVAL;
  }
  int err = set_params(r, params, params_len);
  if (err < 0) {
    urtp_depay_free(d);
    r->cfg = old;
    return err;
  }
  /* what the old depayloader still holds is of the old format: a new
   * format starts a new stream */
  depay_stats_add(&r->depay_base, urtp_depay_stats(r->depay));
  urtp_depay_free(r->depay);
  r->depay = d;
  urtp_timing_init(&r->timing, r->cfg.clock_rate, 0, 0);
  r->discont = true;
  r->out_valid = false;
  publish(r);
  return 0;
}

/* ---- receiving ---- */

#ifdef URTP_HAVE_ZRTP_EP
static socklen_t addr_len(const struct sockaddr_storage *a)
{
  return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Brings the SRTP context (media and SRTCP in) in line with ZRTP's keys. */
static void zrtp_sync(urtp_recvstream_t *r)
{
  int serial = r->zrtp_serial;
  r->srtp_ready = urtp_zrtp_ep_sync_srtp(r->cfg.zrtp, &r->srtp, &r->zrtp_serial, false, 0,
                                         r->cfg.replay_window);
  if (r->srtp_ready && r->zrtp_serial != serial) {
    if (r->zrtp_had_keys) {
      /* keys of a new exchange replaced the ones in use: the sender
       * started over, and the old source can no longer authenticate */
      urtp_recvstream_event_t e = { .kind = URTP_RECVSTREAM_EV_REKEYED };
      urtp_source_reset(&r->src);
      new_stream(r);
      queue_event(r, &e);
      r->st.rekeys++;
    }
    r->zrtp_had_keys = true;
  }
}

/* ZRTP on the stream's socket. Returns whether the datagram goes on. */
static bool zrtp_filter(urtp_recvstream_t *r, const uint8_t *pkt, size_t len,
                        const struct sockaddr_storage *from, const struct sockaddr_storage **nokeys)
{
  urtp_zrtp_ep_t *ep = r->cfg.zrtp;
  if (len >= 1 && (pkt[0] >> 4) == 1 && urtp_zrtp_is_zrtp(pkt, len)) {
    r->st.zrtp++;
    if (from)
      urtp_zrtp_ep_recv(ep, pkt, len, (const struct sockaddr *)from, addr_len(from));
    return false;
  }
  zrtp_sync(r);
  if (r->srtp_ready)
    return true;
  /* this side may have restarted while the sender kept its keys */
  if (from)
    *nokeys = from;
  if (r->cfg.zrtp_allow_clear) {
    r->st.zrtp_clear++;
    return true;
  }
  r->st.zrtp_dropped++;
  return false;
}
#endif

/* ---- RTCP ---- */

/* Whether a compound speaks for ssrc: its report, name or BYE. */
static bool names_source(const urtp_rtcp_info_t *info, uint32_t ssrc)
{
  for (unsigned i = 0; i < info->nreports; i++)
    if (info->reports[i].is_sr && info->reports[i].sr.ssrc == ssrc)
      return true;
  for (unsigned i = 0; i < info->ncnames; i++)
    if (info->cnames[i].ssrc == ssrc)
      return true;
  for (unsigned i = 0; i < info->nbyes; i++)
    if (info->byes[i] == ssrc)
      return true;
  return false;
}

/* An RTCP compound arrived at now from `from` (NULL: not known). The
 * current source's sender report is taken (the caller learns where our
 * reports go from it); one of an SSRC not followed (yet) is kept aside:
 * a sender's first report may come before its media. */
static void rtcp_in(urtp_recvstream_t *r, uint8_t *pkt, size_t len, uint64_t now,
                    const struct sockaddr_storage *from)
{
#ifdef URTP_HAVE_ZRTP_EP
  if (r->cfg.zrtp) {
    zrtp_sync(r);
    if (!r->srtp_ready) {
      /* no keys yet: it cannot be verified (counted as bad only) */
      r->st.rtcp_bad++;
      return;
    }
  }
#endif
#ifdef URTP_HAVE_SRTP
  if (r->srtp_ready) {
    /* counted here: a ZRTP key change replaces the context's counters */
    int n = urtp_srtp_unprotect_rtcp(&r->srtp, pkt, len);
    urtp_srtp_count(&r->st.srtcp, n);
    if (n < 0) {
      r->st.rtcp_bad++;
      return;
    }
    len = (size_t)n;
  }
#endif
  urtp_rtcp_info_t info;
  if (urtp_rtcp_parse(pkt, len, URTP_RTCP_REDUCED_SIZE, &info) != 0) {
    r->st.rtcp_bad++;
    return;
  }
  r->st.rtcp++;
  uint32_t cur;
  bool have = urtp_source_current(&r->src, &cur);
  /* a stranger's word on the followed source (its report, name or BYE) is
   * not taken: anyone can read the SSRC off the wire */
  bool trusted = rtcp_trusted(r, from);
  if (have && !trusted && names_source(&info, cur))
    r->st.rtcp_foreign++;
  for (unsigned i = 0; i < info.nreports; i++) {
    const urtp_rtcp_report_t *rep = &info.reports[i];
    if (!rep->is_sr)
      continue;
    if (have && rep->sr.ssrc == cur) {
      if (trusted && sr_sane(r, &rep->sr))
        take_sr(r, &rep->sr, now);
      continue;
    }
    r->early.valid = true;
    r->early.sr = rep->sr;
    r->early.arrival = now;
    r->early.has_from = from != NULL;
    if (from)
      r->early.from = *from;
    r->early.cname[0] = '\0';
    for (unsigned k = 0; k < info.ncnames; k++)
      if (info.cnames[k].ssrc == rep->sr.ssrc) {
        memcpy(r->early.cname, info.cnames[k].value, info.cnames[k].len);
        r->early.cname[info.cnames[k].len] = '\0';
      }
  }
  if (!trusted)
    return;
  for (unsigned i = 0; have && i < info.ncnames; i++)
    if (info.cnames[i].ssrc == cur) {
      memcpy(r->st.cname, info.cnames[i].value, info.cnames[i].len);
      r->st.cname[info.cnames[i].len] = '\0';
    }
  for (unsigned i = 0; i < info.nbyes; i++) {
    if (have && info.byes[i] == cur)
      r->st.rtcp_bye++;
    urtp_source_bye(&r->src, info.byes[i], now, on_packet, on_source_event, r);
  }
}

int urtp_recvstream_push_rtcp(urtp_recvstream_t *r, uint8_t *pkt, size_t len, uint64_t now)
{
  uint64_t bad = r->st.rtcp_bad;
  rtcp_in(r, pkt, len, now, NULL);
  publish(r);
  return r->st.rtcp_bad != bad ? -EBADMSG : 0;
}

/* Feedback to send with a report (build_report). */
typedef struct feedback {
  const uint16_t *seqs;         /* NACK: these, about the current source */
  unsigned nseqs;
  int kf;                       /* -1: no key frame request; 0: PLI; 1: FIR */
  bool ccfb;                    /* congestion control feedback */
  uint32_t media_ssrc;
} feedback_t;

/* RR + SDES (+ BYE) (+ feedback) at now into buf, SRTCP-protected with
 * SRTP. A report with feedback only peeks at the reception statistics:
 * the regular reports keep their intervals (A.3's fraction lost). */
static int build_report(urtp_recvstream_t *r, uint64_t now, bool bye, const feedback_t *fb,
                        uint8_t *buf, size_t cap)
{
#ifdef URTP_HAVE_SRTP
  bool secure = r->cfg.srtp || r->cfg.zrtp;
#ifdef URTP_HAVE_ZRTP_EP
  /* our key once the agreement is confirmed; nothing built before (a
   * report ends the interval of the fraction lost) */
  if (r->cfg.zrtp &&
      !urtp_zrtp_ep_sync_srtp_dir(r->cfg.zrtp, &r->srtcp_out, &r->srtcp_serial,
                                  URTP_SRTP_OUTBOUND, true, r->rtcp_ssrc, 0))
    return -EAGAIN;
#endif
  if (secure && cap < URTP_SRTP_MAX_TRAILER)
    return -ENOSPC;
  size_t room = secure ? cap - URTP_SRTP_MAX_TRAILER : cap;
#else
  size_t room = cap;
#endif
  urtp_rtcp_writer_t w;
  urtp_rtcp_block_t b;
  unsigned n = 0;
  urtp_rtcp_writer_init(&w, buf, room);
  if (r->rx_valid) {
    if (fb)
      urtp_rtcp_rx_peek(&r->rx, &b);
    else
      urtp_rtcp_rx_block(&r->rx, &b);
    if (r->st.rtcp_sr)
      urtp_rtcp_block_set_lsr(&b, r->st.sr_ntp, r->st.sr_arrival, now);
    n = 1;
  }
  urtp_rtcp_write_rr(&w, r->rtcp_ssrc, &b, n);
  urtp_rtcp_write_sdes_cname(&w, r->rtcp_ssrc, r->cname);
  if (bye)
    urtp_rtcp_write_bye(&w, &r->rtcp_ssrc, 1, NULL);
  if (fb && fb->nseqs)
    urtp_rtcp_write_nack(&w, r->rtcp_ssrc, fb->media_ssrc, fb->seqs, fb->nseqs);
  if (fb && fb->kf == 0)
    urtp_rtcp_write_pli(&w, r->rtcp_ssrc, fb->media_ssrc);
  if (fb && fb->kf == 1)
    urtp_rtcp_write_fir(&w, r->rtcp_ssrc, fb->media_ssrc, r->fir_seq);
  if (fb && fb->ccfb && !w.err) {
    /* as much as fits; the rest stays pending for the next compound */
    if (r->twcc)
      w.len += urtp_twcc_recorder_feedback(r->twcc, w.buf + w.len, w.cap - w.len, r->rtcp_ssrc,
                                           fb->media_ssrc);
    if (r->rfc8888)
      w.len += urtp_twcc_recorder_rfc8888(r->rfc8888, w.buf + w.len, w.cap - w.len, r->rtcp_ssrc,
                                          fb->media_ssrc, now / 1000);
  }
  if (w.err)
    return w.err;
  int len = (int)w.len;
#ifdef URTP_HAVE_SRTP
  if (secure && (len = urtp_srtp_protect_rtcp(&r->srtcp_out, buf, w.len, cap)) < 0)
    return -EPROTO;
#endif
  if (!fb)
    r->st.rtcp_sent++;
  return len;
}

int urtp_recvstream_rtcp_report(urtp_recvstream_t *r, uint64_t now, bool bye, uint8_t *buf,
                                size_t cap)
{
  int len = build_report(r, now, bye, NULL, buf, cap);
  publish(r);
  return len;
}

/* ---- feedback ---- */

/* Packets given up for lost since the last look: a key frame is wanted. */
static void note_loss(urtp_recvstream_t *r)
{
  if (!r->cfg.request_keyframe)
    return;
  uint64_t lost = r->depay_base.seq.lost + urtp_depay_stats(r->depay)->seq.lost;
  if (lost > r->lost_seen && r->kf_pending < 0)
    r->kf_pending = 0;
  r->lost_seen = lost;
}

void urtp_recvstream_request_keyframe(urtp_recvstream_t *r, bool fir)
{
  r->st.keyframe_requests++;
  if (fir || r->kf_pending < 0)
    r->kf_pending = fir;
  publish(r);
}

/* When the pending key frame request may go; UINT64_MAX: none, or no
 * source to ask. */
static uint64_t kf_deadline(const urtp_recvstream_t *r)
{
  uint32_t cur;
  if (r->kf_pending < 0 || !urtp_source_current(&r->src, &cur))
    return UINT64_MAX;
  return r->kf_sent ? r->kf_last + URTP_RECVSTREAM_PLI_INTERVAL : 0;
}

/* NACKs go to a source until URTP_RECVSTREAM_NACK_GIVE_UP after its first
 * request has passed, with at least URTP_RECVSTREAM_NACK_UNANSWERED
 * requests, and not one retransmission came back: it does not do RTX,
 * and asking on would only load it and the path. A new source starts
 * over. */
static bool nack_on(urtp_recvstream_t *r, uint64_t now)
{
  if (!r->nack || r->nack_off)
    return false;
  uint64_t asked = r->nack->st.requests - r->nack_base_requests;
  if (r->st.rtx != r->nack_base_rtx || asked == 0)
    return true;
  if (!r->nack_first_ask)
    r->nack_first_ask = now ? now : 1;
  if (now - r->nack_first_ask >= URTP_RECVSTREAM_NACK_GIVE_UP &&
      asked >= URTP_RECVSTREAM_NACK_UNANSWERED) {
    r->nack_off = true;
    r->st.nack_unanswered++;
    return false;
  }
  return true;
}

/* When congestion control feedback is due; UINT64_MAX: nothing to say. */
static uint64_t ccfb_deadline(const urtp_recvstream_t *r)
{
  if (!(r->twcc && urtp_twcc_recorder_pending(r->twcc)) &&
      !(r->rfc8888 && urtp_twcc_recorder_pending(r->rfc8888)))
    return UINT64_MAX;
  if (r->ccfb_more)
    return 0;
  if (r->cfg.ccfb_interval)
    return r->ccfb_last + r->cfg.ccfb_interval;
  return r->ccfb_marker ? 0 : r->ccfb_last + URTP_RECVSTREAM_CCFB_MAX_INTERVAL;
}

uint64_t urtp_recvstream_feedback_deadline(const urtp_recvstream_t *r)
{
  if (!r->fb_ok)
    return UINT64_MAX;
  uint64_t a = r->nack && !r->nack_off ? urtp_nack_next(r->nack) : UINT64_MAX,
           b = kf_deadline(r), c = ccfb_deadline(r);
  a = a < b ? a : b;
  return a < c ? a : c;
}

/* Sends what feedback is due at now over io, a compound each NACK's worth
 * (at most a few per call: the rest is due again at once). */
static void send_feedback(urtp_recvstream_t *r, urtp_rtcpio_t *io, uint64_t now)
{
  uint16_t seqs[URTP_RTCP_MAX_NACK_PAIRS * 17];
  /* a datagram that any path carries (a large picture's congestion
   * control feedback takes a few) */
  uint8_t buf[1200];
  _Static_assert(sizeof buf >= URTP_RTCP_MAX_NACK_PAIRS * 4 + 512, "room for NACKs");
  feedback_t fb = { .seqs = seqs, .kf = -1 };
  if (!urtp_source_current(&r->src, &fb.media_ssrc))
    return;
  for (int round = 0; round < 8; round++) {
    fb.nseqs = nack_on(r, now) ? urtp_nack_due(r->nack, now, seqs, sizeof seqs / sizeof seqs[0]) : 0;
    fb.kf = kf_deadline(r) <= now ? r->kf_pending : -1;
    fb.ccfb = ccfb_deadline(r) <= now;
    if (!fb.nseqs && fb.kf < 0 && !fb.ccfb)
      return;
    if (fb.ccfb) {
      r->ccfb_marker = false;
      r->ccfb_last = now;
    }
    if (fb.kf >= 0) {
      /* gone, whether or not it gets out: the next waits its turn */
      r->kf_pending = -1;
      r->kf_sent = true;
      r->kf_last = now;
      if (fb.kf == 1)
        r->fir_seq++;
    }
    int len = build_report(r, now, false, &fb, buf, sizeof buf);
    if (fb.ccfb)
      r->ccfb_more = (r->twcc && urtp_twcc_recorder_pending(r->twcc)) ||
                     (r->rfc8888 && urtp_twcc_recorder_pending(r->rfc8888));
    if (len <= 0 || urtp_rtcpio_send_feedback(io, buf, (size_t)len) <= 0)
      continue;
    r->st.nacks_sent += fb.nseqs != 0;
    r->st.ccfb_sent += fb.ccfb;
    r->st.pli_sent += fb.kf == 0;
    r->st.fir_sent += fb.kf == 1;
  }
}

/* RTCP that came among the RTP datagrams since the last service (io shares
 * the RTP socket and must not read it): into io's schedule and where our
 * reports go. Returns the sender reports of the current source. */
static int take_muxed(urtp_recvstream_t *r, urtp_rtcpio_t *io)
{
  /* about a receive batch between two services: their mean size, for at
   * most 64 (more moves the average no further) */
  for (uint64_t i = 0; i < r->mux_in && i < 64; i++)
    urtp_rtcp_sched_received(&io->sched, (size_t)(r->mux_bytes / r->mux_in));
  if (r->mux_from_set)
    urtp_rtcpio_learn(io, &r->mux_from);
  int srs = r->mux_srs > INT32_MAX ? INT32_MAX : (int)r->mux_srs;
  r->mux_in = r->mux_bytes = r->mux_srs = 0;
  return srs;
}

int urtp_recvstream_rtcp_service(urtp_recvstream_t *r, urtp_rtcpio_t *io, uint64_t now,
                                 uint64_t mono)
{
  int srs = 0, n;
  if (io->mux)
    srs = take_muxed(r, io);
  else
    while ((n = urtp_rtcpio_recv(io, 0)) > 0)
      for (int i = 0; i < n; i++) {
        const urtp_dgram_t *d = &io->rx.dgrams[i];
        uint64_t before = r->st.rtcp_sr;
        rtcp_in(r, d->data, d->len, now, d->from);
        if (r->st.rtcp_sr > before) {
          urtp_rtcpio_learn(io, d->from);
          srs++;
        }
      }
  /* a report that came before its source was followed */
  if (r->learn)
    urtp_rtcpio_learn(io, &r->learn_from);
  r->learn = false;
  /* a destination learnt from a source no longer followed (or not yet
   * placed) is forgotten: the new one's report says where it listens */
  if (!io->dest_fixed && io->dest_len && !r->srtp_ready &&
      !(r->peer_set && urtp_addr_same_host(&io->dest, &r->peer)))
    urtp_rtcpio_forget(io);
  srs += r->early_srs > 64 ? 64 : (int)r->early_srs;
  r->early_srs = 0;
  /* feedback goes once there is somewhere to send it */
  r->fb_ok = io->dest_len != 0;
  if (r->fb_ok && urtp_recvstream_feedback_deadline(r) <= now)
    send_feedback(r, io, now);
  if (mono >= urtp_rtcpio_deadline(io) && urtp_rtcpio_due(io, mono)) {
    uint8_t buf[512];
    int len = urtp_recvstream_rtcp_report(r, now, false, buf, sizeof buf);
    if (len > 0)
      urtp_rtcpio_send(io, buf, (size_t)len, mono);
    else
      urtp_rtcpio_skip(io, mono);
  }
  publish(r);
  return srs;
}

bool urtp_recvstream_unsupported(const urtp_recvstream_t *r)
{
  return urtp_depay_stats(r->depay)->unsupported_run >= URTP_DEPAY_UNSUPPORTED_STREAM;
}

bool urtp_recvstream_rtcp_pending(const urtp_recvstream_t *r)
{
  return r->mux_in != 0 || r->early_srs != 0;
}

uint32_t urtp_recvstream_rtcp_ssrc(const urtp_recvstream_t *r)
{
  return r->rtcp_ssrc;
}

/* A datagram of the RTX payload type (parsed into r->cur): unwrapped in
 * place into the original the tracker misses, reparsed; *pkt and *len
 * then describe it. Returns whether it goes on: the original, or media
 * that happens to use the RTX payload type. */
static bool rtx_in(urtp_recvstream_t *r, uint8_t **pkt, size_t *len, uint64_t now)
{
  uint32_t cur;
  uint16_t osn;
  uint8_t *orig;
  /* media until told otherwise: the followed source's packets, anything
   * before there is a source (retransmissions answer NACKs, which need
   * one), and everything while the media's payload type is the RTX one */
  if (!urtp_source_current(&r->src, &cur) || r->cur.hdr.ssrc == cur || r->media_pt < 0 ||
      r->media_pt == r->cfg.rtx_pt)
    return true;
  if (!r->nack || urtp_rtx_osn(*pkt, *len, &osn) != 0) {
    r->st.rtx_dropped++;
    return false;
  }
  /* retransmissions lost on the way: the RTX stream's own sequence numbers
   * skip them (late ones, and jumps, count as none) */
  unsigned lost = 0;
  uint16_t rseq = r->cur.hdr.seq, ahead = (uint16_t)(rseq - r->rtx_seq_next);
  if (!r->rtx_seq_valid || r->rtx_seq_ssrc != r->cur.hdr.ssrc) {
    r->rtx_seq_valid = true;
    r->rtx_seq_ssrc = r->cur.hdr.ssrc;
    r->rtx_seq_next = (uint16_t)(rseq + 1);
  } else if (ahead < 0x8000) {
    lost = ahead <= URTP_RECVSTREAM_RTX_MAX_GAP ? ahead : 0;
    r->rtx_seq_next = (uint16_t)(rseq + 1);
  }
  if (!urtp_nack_missing(r->nack, osn)) {
    r->st.rtx_dropped++;
    return false;
  }
  urtp_nack_rtx_gap(r->nack, osn, lost, now);
  uint32_t rtx_ssrc = r->cur.hdr.ssrc;
  int n = urtp_rtx_unwrap(*pkt, *len, (uint8_t)r->media_pt, cur, &orig);
  if (n < 0 || urtp_rtp_parse(orig, (size_t)n, &r->cur) != 0) {
    r->st.rtx_dropped++;
    return false;
  }
  /* RFC 4588 5.3: an answer to a request names the RTX stream */
  r->st.rtx_ssrc = rtx_ssrc;
  r->st.rtx++;
  r->cur_rtx = true;
  *pkt = orig;
  *len = (size_t)n;
  return true;
}

/* One datagram; `authed` and `nokeys` collect, per batch, what the ZRTP
 * endpoint is told once. */
static void push_one(urtp_recvstream_t *r, uint8_t *pkt, size_t len,
                     const struct sockaddr_storage *from, uint64_t now,
                     const struct sockaddr_storage **authed,
                     const struct sockaddr_storage **nokeys)
{
  r->st.datagrams++;
  if (r->cfg.skip_bytes) {
    if (len < r->cfg.skip_bytes) {
      r->st.malformed_rtp++;
      return;
    }
    pkt += r->cfg.skip_bytes;
    len -= r->cfg.skip_bytes;
  }
  if (urtp_rtcp_is_muxed(pkt, len)) {
    /* without rtcp-mux, RTCP here was meant for another port: a sender
     * whose receiver on the port below could not have its RTCP port */
    if (!r->cfg.rtcp_mux) {
      r->st.malformed_rtp++;
      return;
    }
    uint64_t srs = r->st.rtcp_sr;
    r->mux_in++;
    r->mux_bytes += len;
    rtcp_in(r, pkt, len, now, from);
    if (r->st.rtcp_sr != srs) {
      r->mux_srs++;
      if (from) {
        r->mux_from = *from;
        r->mux_from_set = true;
      }
    }
    return;
  }
#ifdef URTP_HAVE_ZRTP_EP
  if (r->cfg.zrtp && !zrtp_filter(r, pkt, len, from, nokeys))
    return;
#else
  (void)nokeys;
#endif
#ifdef URTP_HAVE_SRTP
  if (r->srtp_ready) {
    /* verified and decrypted in place; a rejected datagram is counted by
     * the SRTP context and goes no further */
    int n = urtp_srtp_unprotect(&r->srtp, pkt, len);
    if (n < 0)
      return;
    len = (size_t)n;
    *authed = from;
  }
#else
  (void)authed;
#endif
  if (urtp_rtp_parse(pkt, len, &r->cur) != 0) {
    r->st.malformed_rtp++;
    return;
  }
  r->cur_rtx = false;
  if (r->cfg.rtx && r->cur.hdr.pt == r->cfg.rtx_pt && !rtx_in(r, &pkt, &len, now))
    return;
  if (r->cfg.pt >= 0 && r->cur.hdr.pt != r->cfg.pt) {
    r->st.wrong_pt++;
    return;
  }
  r->cur_raw = pkt;
  r->cur_from = from;
  /* a retransmission the tracker misses is the followed source's, however
   * far behind: the source layer would take it for a sequence jump */
  if (r->cur_rtx)
    on_packet(r, pkt, len, now);
  else
    urtp_source_push(&r->src, pkt, len, r->cur.hdr.ssrc, r->cur.hdr.seq, now, on_packet,
                     on_source_event, r);
  r->cur_raw = NULL;
  r->cur_from = NULL;
}

static void after_batch(urtp_recvstream_t *r, const struct sockaddr_storage *authed,
                        const struct sockaddr_storage *nokeys)
{
#ifdef URTP_HAVE_ZRTP_EP
  if (r->cfg.zrtp) {
    if (authed)
      urtp_zrtp_ep_peer_srtp_ok(r->cfg.zrtp, (const struct sockaddr *)authed, addr_len(authed));
    if (nokeys)
      urtp_zrtp_ep_media_without_keys(r->cfg.zrtp, (const struct sockaddr *)nokeys,
                                      addr_len(nokeys));
  }
#else
  (void)authed;
  (void)nokeys;
#endif
  note_loss(r);
  publish(r);
}

/* Room for what one more datagram can finish: the access unit it ends
 * and the one before it. */
#define QUEUE_HEADROOM 2

static int64_t realtime_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A kernel timestamp on the caller's clock: `now` less how long before
 * `real` (the real time when now was read) it was taken; 0 for none or one
 * that makes no sense (the real clock was set meanwhile). */
static uint64_t stamp_on(int64_t stamp, uint64_t now, int64_t real)
{
  int64_t age = real - stamp;
  if (!stamp || age < 0 || age >= 1000000000 || (uint64_t)age >= now)
    return 0;
  return now - (uint64_t)age;
}

static void push_batch(urtp_recvstream_t *r, const urtp_dgram_t *dgrams, size_t n,
                       uint64_t now, int64_t real)
{
  const struct sockaddr_storage *authed = NULL, *nokeys = NULL;
  size_t i = 0;
  for (; i < n && urtp_depay_queued(r->depay) + QUEUE_HEADROOM <= URTP_DEPAY_QUEUE; i++) {
    r->cur_stamp = real ? stamp_on(dgrams[i].stamp_ns, now, real) : 0;
    push_one(r, dgrams[i].data, dgrams[i].len, dgrams[i].from, now, &authed, &nokeys);
  }
  r->cur_stamp = 0;
  r->held = i < n ? dgrams + i : NULL;
  r->held_n = n - i;
  r->held_now = now;
  r->held_real = real;
  after_batch(r, authed, nokeys);
}

void urtp_recvstream_push(urtp_recvstream_t *r, const urtp_dgram_t *dgrams, size_t n,
                          uint64_t now)
{
  /* the real clock only when the kernel's times are wanted */
  push_batch(r, dgrams, n, now, (r->twcc || r->rfc8888) && n && dgrams[0].stamp_ns ?
                                    realtime_ns() : 0);
}

size_t urtp_recvstream_held(const urtp_recvstream_t *r)
{
  return r->held_n;
}

size_t urtp_recvstream_resume(urtp_recvstream_t *r)
{
  size_t n = r->held_n;
  if (n)
    push_batch(r, r->held, n, r->held_now, r->held_real);
  return n - r->held_n;
}

void urtp_recvstream_push_rx(urtp_recvstream_t *r, const urtp_sock_t *sock, const urtp_rx_t *rx,
                             size_t n, uint64_t now)
{
  r->st.syscalls = sock->rx_syscalls;
  r->st.truncated = rx->truncated;
  r->st.kernel_drops = rx->kernel_drops;
  urtp_recvstream_push(r, rx->dgrams, n, now);
}

void urtp_recvstream_push_one(urtp_recvstream_t *r, uint8_t *pkt, size_t len,
                              const struct sockaddr_storage *from, uint64_t now)
{
  const struct sockaddr_storage *authed = NULL, *nokeys = NULL;
  push_one(r, pkt, len, from, now, &authed, &nokeys);
  after_batch(r, authed, nokeys);
}

void urtp_recvstream_expire(urtp_recvstream_t *r, uint64_t now)
{
  urtp_source_expire(&r->src, now, on_packet, on_source_event, r);
  urtp_depay_expire(r->depay, now, r->cfg.latency);
  note_loss(r);
  publish(r);
}

uint64_t urtp_recvstream_deadline(const urtp_recvstream_t *r)
{
  uint64_t a = urtp_depay_deadline(r->depay, r->cfg.latency);
  uint64_t b = urtp_source_deadline(&r->src);
  uint64_t c = urtp_recvstream_feedback_deadline(r);
  a = a < b ? a : b;
  return a < c ? a : c;
}

void urtp_recvstream_flush(urtp_recvstream_t *r)
{
  urtp_depay_flush(r->depay, true);
  publish(r);
}

void urtp_recvstream_resync(urtp_recvstream_t *r, uint64_t dropped)
{
  /* what was held is as stale as what the caller dropped */
  r->st.flushed += dropped + r->held_n;
  r->held_n = 0;
  urtp_depay_restart(r->depay);
  r->discont = true;
  r->out_valid = false;
  publish(r);
}

void urtp_recvstream_set_latency(urtp_recvstream_t *r, uint64_t latency)
{
  r->cfg.latency = latency;
  if (r->nack)
    r->nack->cfg.deadline = latency;
}

/* ---- output ---- */

/* Parameter sets repeated after the first slice of an access unit
 * (rtph264pay with config-interval=-1 puts SPS and PPS before every IDR
 * slice) start a new access unit by the letter of H.264 7.4.1.2.3 and
 * H.265 7.4.2.4.4, so parsers split the picture. Drops such repeats when
 * they are identical to a parameter set earlier in the AU. Only keyframes
 * are scanned, and the AU is compacted in place when there is something to
 * drop. */
#define MAX_PARAM_SETS 32

static bool is_repeat(const urtp_nal_t *ps, size_t nps, const urtp_nal_t *nal)
{
  for (size_t i = 0; i < nps; i++)
    if (ps[i].len == nal->len && memcmp(ps[i].data, nal->data, nal->len) == 0)
      return true;
  return false;
}

static void drop_repeated_param_sets(urtp_codec_t codec, urtp_au_t *au)
{
  const urtp_h26x_desc_t *desc = urtp_h26x_desc(codec);
  urtp_nal_t ps[MAX_PARAM_SETS], nal;
  urtp_scl_iter_t it;
  size_t nps = 0, out_len = 0;
  bool seen_vcl = false, drop = false;
  const uint8_t *prev_end = au->data;

  if (!desc)
    return;
  urtp_scl_iter_init(&it, au->data, au->len);
  while (urtp_scl_next(&it, &nal)) {
    if (nal.len < desc->hdr_len)
      return;
    /* In-place compaction below needs 4 bytes before every NAL unit, as
     * the depayloader writes them; a 3-byte start code inside a
     * (malformed) NAL unit would make the output outgrow the input. */
    if (nal.data < prev_end + 4)
      return;
    prev_end = nal.data + nal.len;
    unsigned type = urtp_h26x_type(desc, nal.data);
    bool repeat = false;
    if (urtp_h26x_is_vcl(desc, type)) {
      seen_vcl = true;
    } else if (urtp_h26x_is_param_set(desc, type)) {
      repeat = seen_vcl && is_repeat(ps, nps, &nal);
      if (!repeat) {
        if (nps == MAX_PARAM_SETS)
          return;
        ps[nps++] = nal;
      }
    }
    if (repeat)
      drop = true;
    else
      out_len += 4 + nal.len;
  }
  if (!drop)
    return;

  /* Kept NAL units move towards the start, never past bytes still to be
   * read; the parameter sets compared against are tracked where they move. */
  uint8_t *w = au->data;
  nps = 0;
  seen_vcl = false;
  urtp_scl_iter_init(&it, au->data, au->len);
  while (urtp_scl_next(&it, &nal)) {
    unsigned type = urtp_h26x_type(desc, nal.data);
    bool ps_type = urtp_h26x_is_param_set(desc, type);
    if (urtp_h26x_is_vcl(desc, type))
      seen_vcl = true;
    else if (ps_type && seen_vcl && is_repeat(ps, nps, &nal))
      continue;
    memmove(w + 4, nal.data, nal.len);
    w[0] = 0;
    w[1] = 0;
    w[2] = 0;
    w[3] = 1;
    if (ps_type) {
      ps[nps].data = w + 4;
      ps[nps++].len = nal.len;
    }
    w += 4 + nal.len;
  }
  au->len = out_len;
}

/* Lip sync: the frame's offset from its sender's NTP time (once a sender
 * report and the CNAME are in) goes to the group when it moved; the
 * group's delay for us goes onto the frame. */
static void sync_frame(urtp_recvstream_t *r, urtp_recvstream_frame_t *f)
{
  if (r->st.rtcp_sr == 0 || r->st.cname[0] == '\0')
    return;
  int64_t since_sr = (int32_t)(f->au.rtp_ts - r->st.sr_rtp_ts);
  uint64_t sent = urtp_ntp_to_ns(r->st.sr_ntp) +
                  (uint64_t)urtp_timing_ticks_to_ns(since_sr, r->cfg.clock_rate);
  int64_t offset = (int64_t)f->pts - (int64_t)sent;
  /* a tenth of the dead band: the group sees real moves, not rounding */
  if (!r->sync_valid || llabs(offset - r->sync_given) > URTP_SYNC_DEAD_BAND / 10) {
    urtp_sync_update(r->sync, r->st.cname, r->sync_domain, offset);
    r->sync_given = offset;
    r->sync_valid = true;
  }
  /* in step at once; after that one step per access unit, whatever a
   * report (or the group) says */
  int64_t delay = urtp_sync_delay(r->sync);
  if (r->sync_applied_valid) {
    int64_t d = delay - r->sync_applied;
    if (d > URTP_RECVSTREAM_SYNC_STEP)
      delay = r->sync_applied + URTP_RECVSTREAM_SYNC_STEP;
    else if (d < -URTP_RECVSTREAM_SYNC_STEP)
      delay = r->sync_applied - URTP_RECVSTREAM_SYNC_STEP;
  }
  r->sync_applied = delay;
  r->sync_applied_valid = true;
  f->pts += (uint64_t)delay;
  r->st.sync_offset = offset;
  r->st.sync_delay = delay;
  r->st.synced = true;
}

void urtp_recvstream_set_sync_domain(urtp_recvstream_t *r, uint64_t domain)
{
  if (domain == r->sync_domain)
    return;
  r->sync_domain = domain;
  if (r->sync_valid)
    urtp_sync_withdraw(r->sync);
  r->sync_valid = false;
}

bool urtp_recvstream_pop(urtp_recvstream_t *r, urtp_recvstream_frame_t *f)
{
  urtp_au_t au;
  while (urtp_depay_pop(r->depay, &au)) {
    bool opus = r->cfg.codec == URTP_CODEC_OPUS;
    /* what is missing since the last frame; a jump wider than a source
     * may drop out is a new numbering the depayloader resynchronised to */
    if (!r->out_valid)
      r->out_missing = 0;
    else if (au.first_seq > r->out_last &&
             au.first_seq - r->out_last - 1 <= URTP_SOURCE_MAX_DROPOUT)
      r->out_missing += au.first_seq - r->out_last - 1;
    r->out_last = au.last_seq;
    r->out_valid = true;
    if (!opus && (au.flags & URTP_AU_KEYFRAME))
      drop_repeated_param_sets(r->cfg.codec, &au);
    if (au.len == 0) {
      urtp_depay_release(au.data);
      continue;
    }
    /* a key frame answers the requests made before it */
    if (au.flags & URTP_AU_KEYFRAME)
      r->kf_pending = -1;
    f->au = au;
    f->pts = au.pts;
    if (r->sync)
      sync_frame(r, f);
    f->ssrc = au.ssrc;
    f->flags = au.flags;
    f->missing = r->out_missing;
    r->out_missing = 0;
    if (r->discont || (au.flags & URTP_AU_DISCONT))
      f->flags |= URTP_FRAME_DISCONT;
    r->discont = false;
    if (r->params_due && !opus)
      f->flags |= URTP_FRAME_PARAMS;
    r->params_due = false;
    r->st.frames++;
    publish(r);
    return true;
  }
  return false;
}

bool urtp_recvstream_next_event(urtp_recvstream_t *r, urtp_recvstream_event_t *ev)
{
  if (r->ev_len == 0)
    return false;
  *ev = r->ev[r->ev_head];
  r->ev_head = (r->ev_head + 1) % EVENTS;
  r->ev_len--;
  return true;
}

const uint8_t *urtp_recvstream_params(const urtp_recvstream_t *r, size_t *len)
{
  *len = r->params_len;
  return r->params;
}

/* ---- the receive loop ---- */

int urtp_recvstream_run(urtp_recvstream_t *r, const urtp_recvstream_io_t *io, int64_t max_wait_ns,
                        bool *sr)
{
  if (sr)
    *sr = false;
  /* a destination given (rtcp-remote-host) takes feedback from the first
   * loss on, not from the first RTCP round (1 to 3 s in) */
  if (io->rtcp && !r->fb_ok && io->rtcp->dest_len)
    r->fb_ok = true;
  /* the nearest of: the caller's bound, the stream's deadline, RTCP's */
  uint64_t now = io->now(io->user), mono = urtp_stream_mono_ns();
  int64_t wait = max_wait_ns;
  uint64_t d = urtp_recvstream_deadline(r);
  if (d != UINT64_MAX) {
    int64_t t = d > now ? (int64_t)(d - now) : 0;
    wait = wait < 0 ? t : (t < wait ? t : wait);
  }
  if (io->rtcp) {
    uint64_t rd = urtp_rtcpio_deadline(io->rtcp);
    int64_t t = rd > mono ? (int64_t)(rd - mono) : 0;
    wait = wait < 0 ? t : (t < wait ? t : wait);
  }
  int wait_ms = wait < 0 ? -1 : wait / 1000000 >= INT32_MAX ? INT32_MAX
                                                              : (int)((wait + 999999) / 1000000);
  /* the rest of the last batch first: the receive buffer still holds it */
  int n;
  /* feedback on arrival times: the kernel's, taken as the datagrams come */
  if ((r->twcc || r->rfc8888) && !io->sock->rx_timestamps)
    urtp_sock_set_rx_timestamps(io->sock, true);
  if (r->held_n) {
    n = (int)urtp_recvstream_resume(r);
    now = io->now(io->user);
  } else {
    n = urtp_sock_recv(io->sock, io->rx, wait_ms);
    if (n < 0)
      return n;
    now = io->now(io->user);
    if (n > 0)
      urtp_recvstream_push_rx(r, io->sock, io->rx, (size_t)n, now);
  }
  urtp_recvstream_expire(r, now);
  if (io->rtcp) {
    mono = urtp_stream_mono_ns();
    if (io->sock->watch_ready || mono >= urtp_rtcpio_deadline(io->rtcp) ||
        urtp_recvstream_rtcp_pending(r) || urtp_recvstream_feedback_deadline(r) <= now) {
      if (urtp_recvstream_rtcp_service(r, io->rtcp, now, mono) > 0 && sr)
        *sr = true;
    }
  }
  return n;
}

bool urtp_recvstream_source_addr(const urtp_recvstream_t *r, struct sockaddr_storage *addr)
{
  if (!r->peer_set)
    return false;
  *addr = r->peer;
  return true;
}
