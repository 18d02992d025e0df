/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sendrtcp.c - the RTCP half of the sending stream (sendstream.h): our
 * sender reports, the receivers' reports and the table of receivers,
 * NACKs answered with retransmissions, key frame requests, and the
 * thread that runs them. Any thread may call in: the state it shares
 * with the streaming thread is under stats_lock, rtx_lock and srtcp_lock.
 */
#include "sendstream_priv.h"

/* --- RTCP ------------------------------------------------------------------ */

#ifdef URTP_HAVE_SRTP
/* The SRTCP context of dir, in line with the keys; NULL while there are
 * none. srtcp_lock held. */
static urtp_srtp_t *srtcp_ctx(urtp_sendstream_t *ss, urtp_srtp_dir_t dir)
{
  bool out = dir == URTP_SRTP_OUTBOUND;
  urtp_srtp_t *ctx = out ? &ss->srtcp_out : &ss->srtcp_in;
  if (ss->agreed && !sendstream_agreed_rtcp_keys(ss, ctx, dir, out ? ss->cfg.ssrc : 0))
    return NULL;
  return ctx->session ? ctx : NULL;
}
#endif

int urtp_sendstream_rtcp_report(urtp_sendstream_t *ss, uint64_t ntp, uint32_t rtp_ts, bool bye,
                                uint8_t *buf, size_t cap)
{
  if (ss->secure && ss->cfg.key_sync && !ss->cfg.rtcp_key_sync)
    return -ENOTSUP;
  urtp_rtcp_sr_t sr = { .ssrc = ss->cfg.ssrc, .ntp = ntp, .rtp_ts = rtp_ts };
  pthread_mutex_lock(&ss->stats_lock);
  /* payload octets: our packets have 12-byte headers, no CSRC or
   * extension; RTP padding is not payload (6.4.1) */
  uint64_t hdr = ss->st.packets * 12 + ss->st.padding_bytes;
  sr.packets = (uint32_t)ss->st.packets;
  sr.octets = (uint32_t)(ss->st.bytes > hdr ? ss->st.bytes - hdr : 0);
  pthread_mutex_unlock(&ss->stats_lock);

  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, cap);
  if (ntp) {
    urtp_rtcp_write_sr(&w, &sr, NULL, 0);
    pthread_mutex_lock(&ss->stats_lock);
    ss->sr_mid[ss->sr_next++ % URTP_SENDSTREAM_SR_KEPT] = urtp_ntp_mid32(ntp);
    pthread_mutex_unlock(&ss->stats_lock);
  } else
    urtp_rtcp_write_rr(&w, ss->cfg.ssrc, NULL, 0);  /* no timing to give */
  urtp_rtcp_write_sdes_cname(&w, ss->cfg.ssrc, ss->cname);
  if (bye)
    urtp_rtcp_write_bye(&w, &ss->cfg.ssrc, 1, NULL);
  if (w.err)
    return w.err;
  int len = (int)w.len;
#ifdef URTP_HAVE_SRTP
  if (ss->secure) {
    pthread_mutex_lock(&ss->srtcp_lock);
    urtp_srtp_t *ctx = srtcp_ctx(ss, URTP_SRTP_OUTBOUND);
    len = ctx ? urtp_srtp_protect_rtcp(ctx, buf, w.len, cap) : -EAGAIN;
    pthread_mutex_unlock(&ss->srtcp_lock);
    if (len < 0)
      return len == -ENOSPC || len == -EAGAIN ? len : -EPROTO;
  }
#endif
  pthread_mutex_lock(&ss->stats_lock);
  ss->st.rtcp_sent++;
  pthread_mutex_unlock(&ss->stats_lock);
  return len;
}

/* A receiver's block about us: its entry, or a new one (the entry heard
 * from least recently gives way when the table is full). stats_lock. */
static void note_receiver(urtp_sendstream_stats_t *st, uint32_t ssrc,
                          const urtp_rtcp_block_t *b, int64_t rtt, uint64_t arrival_ntp,
                          const struct sockaddr_storage *from)
{
  urtp_sendstream_receiver_t *e = NULL;
  for (unsigned i = 0; i < st->nreceivers && !e; i++)
    if (st->receivers[i].ssrc == ssrc)
      e = &st->receivers[i];
  if (!e && st->nreceivers < URTP_SENDSTREAM_MAX_RECEIVERS) {
    e = &st->receivers[st->nreceivers++];
    *e = (urtp_sendstream_receiver_t){.ssrc = ssrc};
  }
  if (!e) {
    e = &st->receivers[0];
    for (unsigned i = 1; i < st->nreceivers; i++)
      if (st->receivers[i].last_ntp < e->last_ntp)
        e = &st->receivers[i];
    *e = (urtp_sendstream_receiver_t){.ssrc = ssrc};
  }
  e->rr = *b;
  e->rtt_ns = rtt;
  e->last_ntp = arrival_ntp;
  e->reports++;
  if (from)
    e->from = *from;
}

static void forget_receiver(urtp_sendstream_stats_t *st, uint32_t ssrc)
{
  for (unsigned i = 0; i < st->nreceivers; i++)
    if (st->receivers[i].ssrc == ssrc) {
      memmove(&st->receivers[i], &st->receivers[i + 1],
              (st->nreceivers - i - 1) * sizeof(st->receivers[0]));
      st->nreceivers--;
      return;
    }
}

/* --- retransmission and key frame requests ------------------------------- */

/* Sequence numbers one compound may have answered: a forged NACK of 16,000
 * pairs must not buy 270,000 history lookups. The rest is over budget. */
#define RTX_MAX_PER_COMPOUND 4096
#ifdef URTP_HAVE_SRTP
/* The RTX packets' SRTP context, in line with the keys; NULL: none yet.
 * rtx_lock held. */
static urtp_srtp_t *rtx_srtp(urtp_sendstream_t *ss)
{
  if (ss->agreed &&
      !sendstream_agreed_rtcp_keys(ss, &ss->srtp_rtx, URTP_SRTP_OUTBOUND, ss->st.rtx_ssrc))
    return NULL;
  return ss->srtp_rtx.session ? &ss->srtp_rtx : NULL;
}
#endif

/* What retransmitting one sequence number came to. */
enum rtx_result { RTX_SENT, RTX_MISSING, RTX_REPEAT, RTX_OVER, RTX_ERROR };

/* Retransmits packet seq as RTX, if the history has it and the limiter
 * lets it go (hold: the round trip; rate: the budget). rtx_lock held. */
static enum rtx_result retransmit(urtp_sendstream_t *ss, uint16_t seq, uint64_t now,
                                  uint64_t hold, uint64_t rate, const struct sockaddr_storage *to,
                                  size_t *bytes)
{
  /* a repeat costs no copy out of the history */
  if (urtp_rtx_limiter_repeat(&ss->rtx_limit, seq, now, hold))
    return RTX_REPEAT;
  int len = urtp_history_get(&ss->hist, seq, now, ss->rtx_bufs->orig, sizeof ss->rtx_bufs->orig);
  if (len <= 0)
    return RTX_MISSING;
  switch (urtp_rtx_limiter_check(&ss->rtx_limit, seq, (size_t)len + 2, now, hold, rate)) {
  case URTP_RTX_REPEAT:
    return RTX_REPEAT;
  case URTP_RTX_OVER_BUDGET:
    return RTX_OVER;
  case URTP_RTX_SEND:
    break;
  }
  uint8_t *out = ss->rtx_bufs->out;
  int n = urtp_rtx_wrap(ss->rtx_bufs->orig, (size_t)len, ss->cfg.rtx_pt, ss->st.rtx_ssrc,
                        ss->rtx_seq, out, RTX_BUF);
  if (n < 0)
    return RTX_ERROR;
  /* a retransmission is a packet of its own for transport-wide feedback */
  unsigned tw = atomic_load(&ss->tw_id);
  if (tw)
    urtp_hdrext_restamp(out, (size_t)n, tw,
                        (uint16_t)atomic_fetch_add_explicit(&ss->tw_next, 1, memory_order_relaxed));
#ifdef URTP_HAVE_SRTP
  if (ss->secure) {
    urtp_srtp_t *ctx = rtx_srtp(ss);
    if (!ctx || (n = urtp_srtp_protect(ctx, out, (size_t)n, RTX_BUF)) < 0)
      return RTX_ERROR;
  }
#endif
  ss->rtx_seq++;
  if (urtp_sock_sendto(&ss->rtx_sock, out, (size_t)n, (const struct sockaddr *)to,
                       to ? urtp_addr_len(to) : 0) < 0)
    return RTX_ERROR;
  if (tw && ss->cc)
    sendstream_cc_rtx_sent(ss, out, (size_t)n, now_ns());
  *bytes = (size_t)n;
  return RTX_SENT;
}

/* A key frame request about this stream at now: passed on unless one was
 * within the interval. Returns whether to call cfg.keyframe. rtx_lock. */
static bool keyframe_due(urtp_sendstream_t *ss, uint64_t now)
{
  if (ss->keyframe_asked && now - ss->last_keyframe < ss->cfg.keyframe_interval)
    return false;
  ss->keyframe_asked = true;
  ss->last_keyframe = now;
  return true;
}

/* Whether ssrc has reported on this stream (its entry in the receivers'
 * table). Takes stats_lock (never held while rtx_lock is taken). */
static bool known_receiver(urtp_sendstream_t *ss, uint32_t ssrc)
{
  pthread_mutex_lock(&ss->stats_lock);
  bool known = false;
  for (unsigned i = 0; i < ss->st.nreceivers && !known; i++)
    known = ss->st.receivers[i].ssrc == ssrc;
  pthread_mutex_unlock(&ss->stats_lock);
  return known;
}

/* The feedback packets of a verified compound: NACKs answered, key frame
 * requests passed on. Any thread taking RTCP. */
static void take_feedback(urtp_sendstream_t *ss, const uint8_t *buf, size_t len,
                          const struct sockaddr_storage *from)
{
  urtp_rtcp_iter_t it;
  urtp_rtcp_pkt_t p;
  urtp_rtcp_fb_t fb;
  uint64_t now = (uint64_t)now_ns();
  uint64_t nacks = 0, asked = 0, counts[RTX_ERROR + 1] = {0}, bytes = 0, plis = 0, firs = 0;
  uint64_t strangers = 0;       /* key frame requests of receivers not known */
  int keyframe = -1;            /* -1: none; else whether it was a FIR */

  pthread_mutex_lock(&ss->stats_lock);
  int64_t rtt = ss->st.rtt_ns;
  double rate = URTP_SENDSTREAM_RTX_SHARE *
                (double)sendstream_meter_rate(&ss->sent_meter, (int64_t)now);
  pthread_mutex_unlock(&ss->stats_lock);
  /* the same number again within half a round trip is a repeat: a
   * receiver asks again a round trip after our answer at the earliest
   * (when a later answer shows that this one was lost) */
  uint64_t hold = rtt > 0 ? (uint64_t)rtt / 2 : 10000000ull;
  hold = hold < 1000000ull ? 1000000ull : hold > 1000000000ull ? 1000000000ull : hold;
  /* with congestion control, a share of what the path takes now: the
   * rate sent over the last second says what it took before a step down,
   * and retransmissions into the queue that followed kept it full */
  uint64_t target;
  int64_t queue;
  if (sendstream_cc_target(ss, &target, &queue)) {
    if (URTP_SENDSTREAM_RTX_SHARE * (double)target < rate)
      rate = URTP_SENDSTREAM_RTX_SHARE * (double)target;
    if (queue > URTP_SENDSTREAM_RTX_QUEUE_MAX)
      rate = 0;
  }
  uint64_t budget = (uint64_t)rate;
  /* with clients, the repair goes to the one that asked (none: nowhere) */
  struct sockaddr_storage dest;
  int found = sendstream_clients_nack_dest(ss, from, &dest);
  const struct sockaddr_storage *to = found > 0 ? &dest : NULL;

  pthread_mutex_lock(&ss->rtx_lock);
  urtp_rtcp_iter_init(&it, buf, len);
  while (urtp_rtcp_next(&it, &p) > 0) {
    if (p.type == URTP_RTCP_RTPFB && (p.count == URTP_CCFB_FMT_TWCC ||
                                      p.count == URTP_CCFB_FMT_RFC8888)) {
      if (ss->cc)
        sendstream_cc_feedback(ss, &p);
      continue;
    }
    if ((p.type != URTP_RTCP_RTPFB && p.type != URTP_RTCP_PSFB) || urtp_rtcp_parse_fb(&p, &fb) < 0)
      continue;
    if (p.type == URTP_RTCP_RTPFB && fb.fmt == URTP_RTCP_FMT_NACK &&
        fb.media_ssrc == ss->cfg.ssrc && fb.fci_len % 4 == 0 && fb.fci_len) {
      nacks++;
      for (size_t off = 0; off < fb.fci_len; off += 4) {
        uint16_t pid = urtp_rd16(fb.fci + off);
        uint16_t blp = urtp_rd16(fb.fci + off + 2);
        for (int i = -1; i < 16; i++) {
          if (i >= 0 && !(blp & (1u << i)))
            continue;
          asked++;
          if (!ss->have_hist || !ss->have_rtx_sock || found == 0) {
            counts[RTX_MISSING]++;
            continue;
          }
          if (asked > RTX_MAX_PER_COMPOUND) {
            counts[RTX_OVER]++;
            continue;
          }
          size_t n = 0;
          counts[retransmit(ss, (uint16_t)(pid + i + 1), now, hold, budget, to, &n)]++;
          bytes += n;
        }
      }
    } else if (p.type == URTP_RTCP_PSFB && (fb.fmt == URTP_RTCP_FMT_PLI ||
                                            fb.fmt == URTP_RTCP_FMT_FIR) &&
               !known_receiver(ss, fb.sender_ssrc)) {
      /* a key frame costs every receiver bandwidth: only a receiver that
       * reports on the stream may ask for one */
      strangers++;
    } else if (p.type == URTP_RTCP_PSFB && fb.fmt == URTP_RTCP_FMT_PLI &&
               fb.media_ssrc == ss->cfg.ssrc) {
      plis++;
      if (keyframe_due(ss, now))
        keyframe = 0;
    } else if (p.type == URTP_RTCP_PSFB && fb.fmt == URTP_RTCP_FMT_FIR) {
      int n = urtp_rtcp_fir_count(&fb);
      for (int i = 0; i < n; i++) {
        uint32_t ssrc;
        uint8_t seq;
        urtp_rtcp_fir_entry(&fb, (unsigned)i, &ssrc, &seq);
        /* RFC 5104 4.3.1: a repeated request keeps its number */
        if (ssrc != ss->cfg.ssrc ||
            (ss->fir_seen && ss->fir_ssrc == fb.sender_ssrc && ss->fir_seq == seq))
          continue;
        ss->fir_seen = true;
        ss->fir_ssrc = fb.sender_ssrc;
        ss->fir_seq = seq;
        firs++;
        if (keyframe_due(ss, now))
          keyframe = 1;
      }
    }
  }
  pthread_mutex_unlock(&ss->rtx_lock);

  if (nacks || plis || firs || strangers) {
    pthread_mutex_lock(&ss->stats_lock);
    ss->st.keyframe_requests_unknown += strangers;
    ss->st.nacks_received += nacks;
    ss->st.nack_seqs += asked;
    ss->st.rtx_packets += counts[RTX_SENT];
    ss->st.rtx_bytes += bytes;
    ss->st.rtx_missing += counts[RTX_MISSING];
    ss->st.rtx_repeats += counts[RTX_REPEAT];
    ss->st.rtx_over_budget += counts[RTX_OVER];
    ss->st.rtx_errors += counts[RTX_ERROR];
    ss->st.pli_received += plis;
    ss->st.fir_received += firs;
    ss->st.keyframe_requests += keyframe >= 0;
    pthread_mutex_unlock(&ss->stats_lock);
  }
  if (to && counts[RTX_SENT])
    sendstream_clients_count_rtx(ss, to, counts[RTX_SENT], bytes);
  /* outside every lock: the callback may push an event upstream */
  if (keyframe >= 0 && ss->cfg.keyframe)
    ss->cfg.keyframe(ss->cfg.user, keyframe == 1);
}

/* Whether lsr (a block's) is 0 (no report received yet) or the middle of
 * one of our last sender reports' NTP times. stats_lock. */
static bool sr_sent(const urtp_sendstream_t *ss, uint32_t lsr)
{
  if (lsr == 0)
    return true;
  unsigned n = ss->sr_next < URTP_SENDSTREAM_SR_KEPT ? ss->sr_next : URTP_SENDSTREAM_SR_KEPT;
  for (unsigned i = 0; i < n; i++)
    if (ss->sr_mid[i] == lsr)
      return true;
  return false;
}

/* The compound's blocks about this stream go into the statistics (those
 * that echo no report of ours are rejected); returns how many there were,
 * -EBADMSG, or -EPERM when it was not trusted (plain RTCP from an address
 * that is none of our receivers'). */
static int take_rtcp(urtp_sendstream_t *ss, uint8_t *buf, size_t len, uint64_t arrival_ntp,
                     bool trusted, const struct sockaddr_storage *from)
{
  if (!trusted && !ss->secure) {
    /* plain RTCP from where no receiver of ours is: anyone's forgery */
    pthread_mutex_lock(&ss->stats_lock);
    ss->st.rtcp_foreign++;
    pthread_mutex_unlock(&ss->stats_lock);
    return -EPERM;
  }
#ifdef URTP_HAVE_SRTP
  if (ss->secure) {
    pthread_mutex_lock(&ss->srtcp_lock);
    urtp_srtp_t *ctx = srtcp_ctx(ss, URTP_SRTP_INBOUND);
    int n = ctx ? urtp_srtp_unprotect_rtcp(ctx, buf, len) : -ENOKEY;
    pthread_mutex_unlock(&ss->srtcp_lock);
    pthread_mutex_lock(&ss->stats_lock);
    /* counted here rather than copied from the context, which a key
     * change replaces */
    if (n != -ENOKEY)
      urtp_srtp_count(&ss->st.srtcp, n);
    if (n < 0) {
      ss->st.rtcp_bad++;
      pthread_mutex_unlock(&ss->stats_lock);
      return -EBADMSG;
    }
    pthread_mutex_unlock(&ss->stats_lock);
    len = (size_t)n;
  }
#endif
  urtp_rtcp_info_t info;
  int r = urtp_rtcp_parse(buf, len, URTP_RTCP_REDUCED_SIZE, &info), ours = 0;
  pthread_mutex_lock(&ss->stats_lock);
  if (r < 0) {
    ss->st.rtcp_bad++;
    pthread_mutex_unlock(&ss->stats_lock);
    return -EBADMSG;
  }
  ss->st.rtcp_in++;
  for (unsigned i = 0; i < info.nreports; i++) {
    const urtp_rtcp_report_t *rep = &info.reports[i];
    for (unsigned k = 0; k < rep->nblocks; k++) {
      const urtp_rtcp_block_t *b = &info.blocks[rep->first_block + k];
      if (b->ssrc != ss->cfg.ssrc)
        continue;
      if (!sr_sent(ss, b->lsr)) {
        ss->st.rr_rejected++;
        continue;
      }
      ours++;
      ss->st.rr_blocks++;
      ss->st.rr_ssrc = rep->sr.ssrc;
      ss->st.rr = *b;
      ss->st.rtt_ns = urtp_rtcp_rtt(arrival_ntp, b->lsr, b->dlsr);
      note_receiver(&ss->st, rep->sr.ssrc, b, ss->st.rtt_ns, arrival_ntp, from);
    }
  }
  for (unsigned i = 0; i < info.nbyes; i++)
    forget_receiver(&ss->st, info.byes[i]);
  pthread_mutex_unlock(&ss->stats_lock);
  if (info.feedback)
    take_feedback(ss, buf, len, from);
  return ours;
}

int urtp_sendstream_push_rtcp(urtp_sendstream_t *ss, uint8_t *buf, size_t len,
                              uint64_t arrival_ntp)
{
  int r = take_rtcp(ss, buf, len, arrival_ntp, true, NULL);
  return r < 0 ? r : 0;
}

static uint64_t mono_now(void)
{
  return (uint64_t)now_ns();
}

/* One report at mono, if the clock has a mapping; else the turn is
 * skipped. */
static void rtcp_report_now(urtp_sendstream_t *ss, uint64_t mono, bool bye)
{
  uint8_t buf[512];               /* SR, SDES of the longest CNAME, BYE, SRTCP */
  uint64_t ntp;
  uint32_t ts;
  int len = -1;
  if (ss->rtcp.clock(ss->rtcp.user, &ntp, &ts))
    len = urtp_sendstream_rtcp_report(ss, ntp, ts, bye, buf, sizeof buf);
  else if (bye)
    /* stopping, the clock no longer running: the BYE still goes */
    len = urtp_sendstream_rtcp_report(ss, 0, 0, true, buf, sizeof buf);
  if (len > 0 && sendstream_clients_report(ss, ss->rtcp.io, buf, (size_t)len) >= 0)
    urtp_rtcpio_sent(ss->rtcp.io, (size_t)len, mono); /* to the clients */
  else if (len > 0)
    urtp_rtcpio_send(ss->rtcp.io, buf, (size_t)len, mono);
  else
    urtp_rtcpio_skip(ss->rtcp.io, mono);
}

/* Whether RTCP from `from` may speak for a receiver: it comes from the
 * host our media goes to (from another port maybe: rtpbin reports from
 * its own socket), or our media goes to a group, whose members may be
 * anywhere (SRTCP is then the only way to know them). With clients: the
 * host of one of them. */
static bool rtcp_trusted(urtp_sendstream_t *ss, const urtp_rtcpio_t *io,
                         const struct sockaddr_storage *from)
{
  bool trusted;
  if (from && sendstream_clients_trust(ss, from, &trusted))
    return trusted;
  if (!from || !io->dest_len || urtp_addr_is_multicast(&io->dest))
    return true;
  return urtp_addr_same_host(from, &io->dest);
}

static void *rtcp_thread(void *arg)
{
  urtp_sendstream_t *ss = arg;
  urtp_rtcpio_t *io = ss->rtcp.io;
  while (!atomic_load(&ss->rtcp.stop)) {
    uint64_t mono = mono_now(), due = urtp_rtcpio_deadline(io);
    if (mono >= due) {
      if (urtp_rtcpio_due(io, mono))
        rtcp_report_now(ss, mono, false);
      continue;
    }
    uint64_t wait = (due - mono + 999999) / 1000000;
    /* -EINTR: woken by stop, checked above */
    int n = urtp_rtcpio_recv(io, (int)(wait > 1000 ? 1000 : wait));
    for (int i = 0; i < n; i++) {
      const urtp_dgram_t *d = &io->rx.dgrams[i];
      if (take_rtcp(ss, d->data, d->len, urtp_ntp_now(), rtcp_trusted(ss, io, d->from),
                    d->from) > 0 &&
          ss->rtcp.on_rr)
        ss->rtcp.on_rr(ss->rtcp.user);
    }
  }
  return NULL;
}

int urtp_sendstream_rtcp_start(urtp_sendstream_t *ss, urtp_rtcpio_t *io,
                               urtp_sendstream_clock_fn clock, urtp_sendstream_rr_fn on_rr,
                               void *user)
{
  if (ss->rtcp.running || !clock)
    return -EINVAL;
  ss->rtcp.io = io;
  ss->rtcp.clock = clock;
  ss->rtcp.on_rr = on_rr;
  ss->rtcp.user = user;
  atomic_store(&ss->rtcp.stop, false);
  int r = pthread_create(&ss->rtcp.thread, NULL, rtcp_thread, ss);
  if (r)
    return -r;
  ss->rtcp.running = true;
  return 0;
}

void urtp_sendstream_rtcp_stop(urtp_sendstream_t *ss, bool bye)
{
  if (!ss->rtcp.running)
    return;
  atomic_store(&ss->rtcp.stop, true);
  urtp_sock_wake(&ss->rtcp.io->sock);
  if (ss->have_rtx_sock)
    urtp_sock_wake(&ss->rtx_sock);    /* a retransmission waiting for the pacer */
  pthread_join(ss->rtcp.thread, NULL);
  ss->rtcp.running = false;
  urtp_sock_unwake(&ss->rtcp.io->sock);
  if (ss->have_rtx_sock)
    urtp_sock_unwake(&ss->rtx_sock);
  if (bye)
    rtcp_report_now(ss, mono_now(), true);
}

