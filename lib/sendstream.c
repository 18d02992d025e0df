/* SPDX-License-Identifier: BSD-2-Clause */
#include "sendstream_priv.h"

/* --- holds --------------------------------------------------------------- */

static void release(urtp_sendstream_t *ss, void *hold)
{
  if (ss->cfg.release)
    ss->cfg.release(ss->cfg.user, hold);
}

static void holds_release(urtp_sendstream_t *ss, unsigned set)
{
  urtp_holds_t *h = &ss->holds[set];
  for (size_t i = 0; i < h->n; i++)
    release(ss, h->v[i]);
  h->n = 0;
}

/* A set's batch went out: into the history with its holds (the set gets
 * emptied memory back), or without one its holds are released. */
static void retire(urtp_sendstream_t *ss, unsigned set)
{
  if (!ss->have_hist) {
    holds_release(ss, set);
    return;
  }
  if (ss->batch[set].npkts || ss->holds[set].n)
    urtp_history_keep(&ss->hist, &ss->batch[set], &ss->holds[set], ss->refs_ps[set],
                      (uint64_t)now_ns());
  ss->refs_ps[set] = false;
}

static void set_discard(urtp_sendstream_t *ss, unsigned set);

/* Drops the batch being built and lets go of its input. */
static void discard(urtp_sendstream_t *ss)
{
  set_discard(ss, ss->cur);
}

/* --- accounting ---------------------------------------------------------- */

static void meter_init(meter_t *m)
{
  memset(m, 0, sizeof(*m));
  m->first = -1;
}

/* Moves the meter on to time t (slots since the last are empty). */
static void meter_advance(meter_t *m, int64_t t)
{
  int64_t slot = t / METER_SLOT_NS;
  if (slot - m->slot >= METER_SLOTS)
    memset(m->bytes, 0, sizeof(m->bytes));
  else
    for (int64_t k = m->slot + 1; k <= slot; k++)
      m->bytes[k % METER_SLOTS] = 0;
  if (slot > m->slot)
    m->slot = slot;
}

void sendstream_meter_add(meter_t *m, uint64_t bytes, int64_t t)
{
  if (m->first < 0) {
    m->first = t;
    m->slot = t / METER_SLOT_NS;
  }
  meter_advance(m, t);
  m->bytes[m->slot % METER_SLOTS] += bytes;
}

/* Bits per second over the last second at time t; in the first second,
 * over the time since the first bytes (at least one slot), so that the
 * first pictures are not taken for a trickle. */
uint64_t sendstream_meter_rate(meter_t *m, int64_t t)
{
  if (m->first < 0)
    return 0;
  meter_advance(m, t);
  uint64_t sum = 0;
  for (int i = 0; i < METER_SLOTS; i++)
    sum += m->bytes[i];
  int64_t span = t - m->first;
  if (span > NS_PER_S)
    span = NS_PER_S;
  if (span < METER_SLOT_NS)
    span = METER_SLOT_NS;
  return (uint64_t)((unsigned __int128)sum * 8 * NS_PER_S / (uint64_t)span);
}

/* The send thread's send of one batch, to every copy of the fan-out. */
static void thread_send(void *user, const urtp_batch_t *b)
{
  urtp_sendstream_t *ss = user;
  size_t copy = 0, off = 0;
  int e = sendstream_send_out(ss, b, &copy, &off);
  if (e == -EINTR) {
    ss->int_batch = b;
    ss->int_copy = copy;
    ss->int_off = off;
    atomic_store(&ss->interrupted, true);
  } else if (e < 0) {
    atomic_store(&ss->thread_err, e);
  }
}

/* --- header extensions --------------------------------------------------- */

/* The block from the elements and tw_id, handed to pay. */
static int ext_reseal(urtp_sendstream_t *ss, const urtp_hdrext_t *x, unsigned tw_id)
{
  urtp_hdrext_block_t b;
  int r = urtp_hdrext_seal(x, tw_id, &b);
  if (r < 0)
    return r;
  if (x != &ss->ext_elems) {
    if (x)
      ss->ext_elems = *x;
    else
      urtp_hdrext_reset(&ss->ext_elems, false);
  }
  atomic_store(&ss->tw_id, tw_id);
  memcpy(ss->ext_block.bytes, b.bytes, b.len);
  ss->ext_block.len = b.len;
  ss->ext_block.tw_off = b.tw_off;
  if (ss->have_pay)
    urtp_pay_set_hdrext(&ss->pay, b.len ? &ss->ext_block : NULL, &ss->tw_next);
  return 0;
}

int urtp_sendstream_set_csrcs(urtp_sendstream_t *ss, const uint32_t *csrc, unsigned n)
{
  if (n > 15)
    return -EINVAL;
  ss->ncsrc = n;
  if (n)
    memcpy(ss->csrc, csrc, n * sizeof *csrc);
  if (ss->have_pay)
    urtp_pay_set_csrcs(&ss->pay, csrc, n);
  return 0;
}

int urtp_sendstream_set_hdrext(urtp_sendstream_t *ss, const urtp_hdrext_t *x)
{
  return ext_reseal(ss, x && x->len ? x : NULL, atomic_load(&ss->tw_id));
}

int urtp_sendstream_set_twcc(urtp_sendstream_t *ss, unsigned id)
{
  if (id > 255)
    return -EINVAL;
  return ext_reseal(ss, &ss->ext_elems, id);
}

/* Publishes what push counted since the last call (one lock per flush). */
static void publish_push_counters(urtp_sendstream_t *ss)
{
  uint64_t pad = ss->have_pay ? ss->pay.pad_bytes : ss->pad0;
  pthread_mutex_lock(&ss->stats_lock);
  ss->st.access_units = ss->aus;
  ss->st.next_seq = ss->have_pay ? ss->pay.seq : ss->cfg.seq_start;
  ss->st.padding_bytes += pad - ss->pad0;
  pthread_mutex_unlock(&ss->stats_lock);
  ss->pad0 = pad;
}

/* --- the batch in flight and the interrupted tail ------------------------ */

/* Clears a set's batches and lets go of its input. */
static void set_discard(urtp_sendstream_t *ss, unsigned set)
{
  urtp_batch_clear(&ss->batch[set]);
  urtp_batch_clear(&ss->sbatch[set]);
  holds_release(ss, set);
  ss->refs_ps[set] = false;
  if (set == ss->cur)
    ss->out = NULL;
}

/* A set was sent whole: its plain batch goes to the history. */
static void set_done(urtp_sendstream_t *ss, unsigned set)
{
  retire(ss, set);
  set_discard(ss, set);
}

/* Waits for the batch in flight. Sent: its input is released. Interrupted:
 * it becomes the tail and -EINTR is returned. A lasting failure of the
 * thread is returned every time. */
/* After urtp_sendthread_wait(): a send the thread had interrupted becomes the
 * tail to resume. Returns whether there was one. */
static bool take_interrupted(urtp_sendstream_t *ss)
{
  if (!atomic_exchange(&ss->interrupted, false))
    return false;
  ss->tail = true;
  ss->tail_set = ss->cur ^ 1;
  ss->tail_batch = ss->int_batch;
  ss->tail_copy = ss->int_copy;
  ss->tail_off = ss->int_off;
  return true;
}

static int wait_in_flight(urtp_sendstream_t *ss)
{
  if (!ss->sender)
    return 0;
  urtp_sendthread_wait(ss->sender);
  if (take_interrupted(ss))
    return -EINTR;
  if (!ss->tail || ss->tail_set != (ss->cur ^ 1))
    retire(ss, ss->cur ^ 1);
  return atomic_load(&ss->thread_err);
}

/* Sends the tail inline (nothing is in flight). Done: its set is free. */
static int send_tail(urtp_sendstream_t *ss)
{
  int r = sendstream_send_out(ss, ss->tail_batch, &ss->tail_copy, &ss->tail_off);
  if (r == -EINTR)
    return r;
  ss->tail = false;
  if (r == 0)
    set_done(ss, ss->tail_set);
  else
    set_discard(ss, ss->tail_set);
  return r;
}

int urtp_sendstream_drain(urtp_sendstream_t *ss)
{
  publish_push_counters(ss);
  int r = wait_in_flight(ss);
  if (r == -EINTR || (r == 0 && ss->tail))
    r = send_tail(ss);
  return r;
}

void urtp_sendstream_drop(urtp_sendstream_t *ss)
{
  if (ss->sender) {
    urtp_sendthread_wait(ss->sender);
    take_interrupted(ss);
  }
  uint64_t dropped = ss->batch[ss->cur].npkts + ss->sbatch[ss->cur].npkts;
  if (ss->tail) {
    if (ss->tail_set != ss->cur)
      dropped += ss->tail_batch->npkts - ss->tail_off;
    else
      dropped -= ss->tail_off;
    ss->tail = false;
  }
  set_discard(ss, ss->cur ^ 1);
  set_discard(ss, ss->cur);
  if (dropped) {
    pthread_mutex_lock(&ss->stats_lock);
    ss->st.dropped += dropped;
    pthread_mutex_unlock(&ss->stats_lock);
  }
}

/* --- keys ---------------------------------------------------------------- */

/* Whether the batch may go out: with keys, or in clear where allowed. */
/* The media context in line with the agreed keys; whether it holds any. */
static bool agreed_media_keys(urtp_sendstream_t *ss)
{
#ifdef URTP_HAVE_ZRTP_EP
  if (ss->cfg.zrtp)
    return urtp_zrtp_ep_sync_srtp(ss->cfg.zrtp, &ss->srtp, &ss->zrtp_serial, true, ss->cfg.ssrc,
                                  0);
#endif
  return ss->cfg.key_sync(ss->cfg.user, &ss->srtp);
}

bool sendstream_agreed_rtcp_keys(urtp_sendstream_t *ss, urtp_srtp_t *ctx, urtp_srtp_dir_t dir,
                                 uint32_t ssrc)
{
#ifdef URTP_HAVE_ZRTP_EP
  if (ss->cfg.zrtp) {
    /* our reports with our key once the receiver confirmed it, as the
     * media; theirs with theirs; RTX under its own SSRC */
    bool out = dir == URTP_SRTP_OUTBOUND;
    int *serial = out && ssrc != ss->cfg.ssrc ? &ss->zrtp_rtx_serial : &ss->zrtp_rtcp_serial[dir];
    return urtp_zrtp_ep_sync_srtp_dir(ss->cfg.zrtp, ctx, serial, dir, out, ssrc, 0);
  }
#endif
  return ss->cfg.rtcp_key_sync && ss->cfg.rtcp_key_sync(ss->cfg.user, ctx, dir, ssrc);
}

static bool keys_allow(urtp_sendstream_t *ss, size_t npkts)
{
  if (!ss->agreed)
    return true;
  bool had = ss->srtp.session != NULL;
  bool has = agreed_media_keys(ss) && ss->srtp.session != NULL;
  if (has && !had && ss->cfg.keys_ready)
    ss->cfg.keys_ready(ss->cfg.user);
  bool send = has || ss->cfg.allow_clear;
  pthread_mutex_lock(&ss->stats_lock);
  if (!send) {
    ss->st.held_aus += ss->aus - ss->aus_mark;
    ss->st.held_packets += npkts;
  } else if (!has) {
    ss->st.sent_clear += npkts;
  }
  pthread_mutex_unlock(&ss->stats_lock);
  ss->aus_mark = ss->aus;
  return send;
}

/* Protects the batch being built into its second batch. Returns the batch
 * to send, or NULL when out of memory. */
static const urtp_batch_t *protect(urtp_sendstream_t *ss)
{
  urtp_batch_t *b = &ss->batch[ss->cur];
#ifdef URTP_HAVE_SRTP
  if (!ss->srtp.session)
    return b;
  const urtp_srtp_stats_t *st = &ss->srtp.stats;
  uint64_t refused0 = st->replay + st->other;
  urtp_batch_t *out = &ss->sbatch[ss->cur];
  if (urtp_srtp_protect_batch(&ss->srtp, b, out) < 0)
    return NULL;
  uint64_t refused = st->replay + st->other - refused0;
  if (refused) {
    pthread_mutex_lock(&ss->stats_lock);
    ss->st.srtp_errors += refused;
    pthread_mutex_unlock(&ss->stats_lock);
  }
  /* protected packets are copies: the input and the parameter sets are
   * free at once, or the plain packets go to the history */
  retire(ss, ss->cur);
  urtp_batch_clear(b);
  ss->refs_ps[ss->cur] = false;
  return out;
#else
  return b;
#endif
}

/* --- flush --------------------------------------------------------------- */

/* Takes the batch being built through keys and protection into ss->out
 * (NULL: nothing to send), once. */
static int prepare(urtp_sendstream_t *ss)
{
  urtp_batch_t *b = &ss->batch[ss->cur];
  if (ss->out || (ss->tail && ss->tail_set == ss->cur))
    return 0; /* done before an interruption, or it is the tail itself */
  if (b->npkts == 0 || !keys_allow(ss, b->npkts)) {
    discard(ss);
    return 0;
  }
  const urtp_batch_t *out = protect(ss);
  if (!out) {
    discard(ss);
    return -ENOMEM;
  }
  if (out->npkts == 0)
    discard(ss);
  else
    ss->out = out;
  return 0;
}

/* The pacer's rate for now: the configured one, or the factor times the
 * stream's bitrate (by its own clock, see set_pacing), whichever is
 * higher. Also watches whether the
 * pacer holds the stream back nearly all the time: then the rate is below
 * what the stream needs. Streaming thread, at each flush. */
static void pacing_update(urtp_sendstream_t *ss)
{
  pthread_mutex_lock(&ss->pacing_lock);
  uint64_t rate = ss->pacing_rate;
  double factor = ss->pacing_factor;
  size_t burst = ss->pacing_burst;
  pthread_mutex_unlock(&ss->pacing_lock);
  uint64_t cur = ss->pacing_effective;
  if (factor > 0) {
    uint64_t measured = sendstream_meter_rate(&ss->media_meter, ss->media_now);
    uint64_t by_factor = (uint64_t)(factor * (double)measured);
    if (by_factor > rate)
      rate = by_factor;
  }
  /* congestion control: the rate its controller says for this flush's
   * packets, in small bursts (paced trains); a backlog is what the pacer
   * has booked beyond now */
  int64_t t0 = now_ns();
  if (ss->cc) {
    const urtp_batch_t *b = &ss->batch[ss->cur];
    size_t bytes = 0;
    for (size_t i = 0; i < b->npkts; i++)
      bytes += b->pkts[i].len;
    uint64_t cc_rate;
    if (bytes && sendstream_cc_pacing(ss, bytes, urtp_pacer_busy(&ss->pacer, (uint64_t)t0),
                                      t0, &cc_rate)) {
      rate = cc_rate;
      /* a millisecond's worth at a time: even a small frame leaves as a
       * train of several sends, whose spread shows the path's rate */
      burst = (size_t)(cc_rate / 8000);
      burst = burst < 1500 ? 1500 : burst > URTP_SENDSTREAM_CC_BURST ? URTP_SENDSTREAM_CC_BURST
                                                                       : burst;
    }
  }
  /* the rate is a client's: every copy goes through the one pacer */
  if (ss->fan_on && ss->nfan > 1)
    rate *= ss->nfan;
  /* small changes of a measured rate are not worth the lock */
  bool rate_moved = rate != cur && (rate == 0 || cur == 0 || rate > cur + cur / 64 ||
                                    rate < cur - cur / 64);
  if (rate_moved || burst != ss->pacing_effective_burst) {
    urtp_pacer_set(&ss->pacer, rate, burst);
    ss->pacing_effective = rate;
    ss->pacing_effective_burst = burst;
  }

  /* behind: over a whole second, the sends waited for the pacer more than
   * 95% of the time (a stream paced at or above its bitrate waits at most
   * 1/factor of it, a short while after each large picture) */
  int64_t t = t0;
  if (rate == 0) {
    ss->behind_t0 = 0;
    atomic_store(&ss->behind, false);
    return;
  }
  urtp_pacer_stats_t ps;
  if (ss->behind_t0 == 0 || t - ss->behind_t0 >= NS_PER_S) {
    urtp_pacer_get_stats(&ss->pacer, &ps);
    if (ss->behind_t0 != 0) {
      uint64_t waited = ps.waited_ns - ss->behind_waited0;
      bool behind = waited * 20 > (uint64_t)(t - ss->behind_t0) * 19;
      if (behind && !atomic_load(&ss->behind)) {
        pthread_mutex_lock(&ss->stats_lock);
        ss->st.pacing_behind++;
        pthread_mutex_unlock(&ss->stats_lock);
      }
      atomic_store(&ss->behind, behind);
    }
    ss->behind_t0 = t;
    ss->behind_waited0 = ps.waited_ns;
  }
}

bool urtp_sendstream_pacing_behind(urtp_sendstream_t *ss)
{
  return atomic_load(&ss->behind);
}

/* Nothing is in flight (no thread yet): what the thread sends from now on
 * is the caller's held input. No thread to be had (a process at its
 * limit): sends stay inline, which is correct, only slower; stats tell. */
static void start_send_thread(urtp_sendstream_t *ss)
{
  int r = urtp_sendthread_start_fn(&ss->sender, thread_send, ss);
  if (r < 0) {
    pthread_mutex_lock(&ss->stats_lock);
    ss->st.send_thread_error = r;
    pthread_mutex_unlock(&ss->stats_lock);
    ss->cfg.send_thread = false;
    ss->sender = NULL;
  }
}

int urtp_sendstream_flush(urtp_sendstream_t *ss)
{
  int r;

  publish_push_counters(ss);
  pacing_update(ss);
  /* the pacer's waits on the caller's thread add to its own time: a live
   * encoder paced at 1.25 x its bitrate made 26-28 of its 30 pictures a
   * second (x264enc, 720p, the congestion benchmark) */
  if (!ss->sender && ss->cfg.send_thread_paced && ss->pacing_effective &&
      !ss->st.send_thread_error)
    start_send_thread(ss);
  /* keys and protection first: with the send thread they overlap the send
   * of the batch before, which must then be out (its failure or
   * interruption is this flush's too) */
  if ((r = prepare(ss)) < 0)
    return r;
  r = wait_in_flight(ss);
  if (r == -EINTR)
    return r; /* kept: the next flush resumes */
  if (r < 0) {
    urtp_sendstream_drop(ss);
    return r;
  }
  if (ss->tail) {
    if ((r = send_tail(ss)) == -EINTR)
      return r;
    if (r < 0) {
      urtp_sendstream_drop(ss);
      return r;
    }
  }
  /* nothing in flight: the clients' changes may take effect */
  sendstream_fan_apply(ss);
  const urtp_batch_t *out = ss->out;
  if (!out)
    return 0;
  ss->out = NULL;

  if (ss->sender) {
    /* nothing is in flight (waited above): this returns at once */
    urtp_sendthread_submit(ss->sender, out);
    ss->cur ^= 1;
    urtp_batch_clear(&ss->batch[ss->cur]);
    urtp_batch_clear(&ss->sbatch[ss->cur]);
    ss->refs_ps[ss->cur] = false;
    return 0;
  }

  size_t copy = 0, off = 0;
  r = sendstream_send_out(ss, out, &copy, &off);
  if (r == -EINTR) {
    ss->tail = true;
    ss->tail_set = ss->cur;
    ss->tail_batch = out;
    ss->tail_copy = copy;
    ss->tail_off = off;
    return r;
  }
  if (r == 0)
    set_done(ss, ss->cur);
  else
    discard(ss);
  return r;
}

/* Before the current parameter sets change: nothing may point into them,
 * neither the batch being built (sent first) nor the one in flight. */
static int ps_will_change(urtp_sendstream_t *ss)
{
  int r = 0;
  if (ss->refs_ps[ss->cur])
    r = urtp_sendstream_flush(ss);
  if (r == 0)
    r = urtp_sendstream_drain(ss);
  if (r == 0 && ss->have_hist)
    urtp_history_drop_ps(&ss->hist);
  return r;
}

/* --- setup --------------------------------------------------------------- */

static void au_begin(urtp_sendstream_t *ss)
{
  urtp_params_au_begin(&ss->ps);
  ss->au_vcl_seen = false;
}

/* The history, the RTX socket handle (pacing with the media) and SSRC. */
static int rtx_init(urtp_sendstream_t *ss)
{
  urtp_history_config_t hc = {
    .max_packets = ss->cfg.rtx_max_packets,
    .max_age = ss->cfg.rtx_max_age_ns,
    .release = ss->cfg.release,
    .user = ss->cfg.user,
  };
  int r;
  if (ss->cfg.rtx_pt > 127 || ss->cfg.rtx_max_packets > URTP_HISTORY_MAX_PACKETS)
    return -EINVAL;
  if (!(ss->rtx_bufs = malloc(sizeof *ss->rtx_bufs)))
    return -ENOMEM;
  if ((r = urtp_history_init(&ss->hist, &hc)) < 0)
    return r;
  ss->have_hist = true;
  if ((r = urtp_sock_share(&ss->rtx_sock, ss->sock)) < 0)
    return r;
  ss->rtx_sock.pacer = &ss->pacer;
  ss->have_rtx_sock = true;
  urtp_rtx_limiter_init(&ss->rtx_limit);
  uint32_t ssrc = ss->cfg.rtx_ssrc;
  while (ssrc == 0 || ssrc == ss->cfg.ssrc)
    if (RAND_bytes((unsigned char *)&ssrc, sizeof ssrc) != 1)
      ssrc = ss->cfg.ssrc ^ 0x5a5a5a5au;
  ss->st.rtx_ssrc = ssrc;
  if (RAND_bytes((unsigned char *)&ss->rtx_seq, sizeof ss->rtx_seq) != 1)
    ss->rtx_seq = (uint16_t)ssrc;
  return 0;
}

int urtp_sendstream_new(urtp_sendstream_t **out, urtp_sock_t *sock,
                        const urtp_sendstream_config_t *cfg)
{
  *out = NULL;
  if ((cfg->srtp ? 1 : 0) + (cfg->key_sync ? 1 : 0) + (cfg->zrtp ? 1 : 0) > 1)
    return -EINVAL;
#ifndef URTP_HAVE_SRTP
  if (cfg->srtp || cfg->key_sync)
    return -ENOTSUP;
#endif
#ifndef URTP_HAVE_ZRTP_EP
  if (cfg->zrtp)
    return -ENOTSUP;
#endif
  urtp_sendstream_t *ss = calloc(1, sizeof(*ss));
  if (!ss)
    return -ENOMEM;
  ss->sock = sock;
  /* congestion control times packets as they leave (nothing while off) */
  sock->on_sent = sendstream_cc_sent;
  sock->on_sent_user = ss;
  ss->cfg = *cfg;
  ss->cfg.srtp = NULL;
  ss->cfg.format = NULL;
  ss->cfg.cname = NULL;
  if (!ss->cfg.keyframe_interval)
    ss->cfg.keyframe_interval = URTP_SENDSTREAM_KEYFRAME_INTERVAL;
  ss->agreed = cfg->key_sync || cfg->zrtp;
  ss->secure = cfg->srtp || ss->agreed;
#ifdef URTP_HAVE_ZRTP_EP
  if (cfg->zrtp)
    ss->zrtp_serial = ss->zrtp_rtcp_serial[0] = ss->zrtp_rtcp_serial[1] = ss->zrtp_rtx_serial =
        urtp_zrtp_ep_serial(cfg->zrtp) - 1;
#endif
  snprintf(ss->cname, sizeof ss->cname, "%s", cfg->cname ? cfg->cname : urtp_rtcp_default_cname());
  ss->st.rtt_ns = -1;
  ss->st.next_seq = cfg->seq_start;
  if (ss->cfg.fail_timeout_ns <= 0)
    ss->cfg.fail_timeout_ns = DEFAULT_FAIL_TIMEOUT_NS;
  atomic_init(&ss->config_interval, cfg->config_interval);
  atomic_init(&ss->interrupted, false);
  atomic_init(&ss->thread_err, 0);
  atomic_init(&ss->behind, false);
  pthread_mutex_init(&ss->ps_lock, NULL);
  pthread_mutex_init(&ss->stats_lock, NULL);
  pthread_mutex_init(&ss->pacing_lock, NULL);
  pthread_mutex_init(&ss->srtcp_lock, NULL);
  pthread_mutex_init(&ss->rtx_lock, NULL);
  pthread_mutex_init(&ss->cc_lock, NULL);
  sendstream_clients_init(ss);
  if (urtp_pacer_init(&ss->pacer, 0, 0) < 0) {
    pthread_mutex_destroy(&ss->ps_lock);
    pthread_mutex_destroy(&ss->stats_lock);
    pthread_mutex_destroy(&ss->pacing_lock);
    pthread_mutex_destroy(&ss->srtcp_lock);
    pthread_mutex_destroy(&ss->rtx_lock);
  sendstream_cc_free(ss);
  pthread_mutex_destroy(&ss->cc_lock);
    pthread_mutex_destroy(&ss->cc_lock);
    sendstream_clients_free(ss);
    free(ss);
    return -ENOMEM;
  }
  meter_init(&ss->sent_meter);
  meter_init(&ss->media_meter);
  sock->pacer = &ss->pacer;
  urtp_params_init(&ss->ps, URTP_CODEC_H264);
  for (int i = 0; i < 2; i++) {
    urtp_batch_init(&ss->batch[i]);
    urtp_batch_init(&ss->sbatch[i]);
  }
  ss->last_config = -1;
  ss->opus_marker = true;
  ss->st.tx_mode = sock->tx_mode;

  int r = 0;
  if (cfg->rtx && (r = rtx_init(ss)) < 0)
    goto fail;
#ifdef URTP_HAVE_SRTP
  if (cfg->srtp) {
    urtp_srtp_config_t sc = *cfg->srtp;
    sc.dir = URTP_SRTP_OUTBOUND;
    sc.any_ssrc = false;
    sc.ssrc = cfg->ssrc;
    sc.replay_window = 0;
    if ((r = urtp_srtp_init(&ss->srtp, &sc)) < 0)
      goto fail;
    /* SRTCP with the same master key: our reports under our SSRC, the
     * receivers' under theirs */
    if ((r = urtp_srtp_init(&ss->srtcp_out, &sc)) < 0)
      goto fail;
    sc.dir = URTP_SRTP_INBOUND;
    sc.any_ssrc = true;
    sc.ssrc = 0;
    if ((r = urtp_srtp_init(&ss->srtcp_in, &sc)) < 0)
      goto fail;
    /* RTX under its own SSRC, same master key (RFC 4588 section 9) */
    sc.dir = URTP_SRTP_OUTBOUND;
    sc.any_ssrc = false;
    sc.ssrc = ss->st.rtx_ssrc;
    if (cfg->rtx && (r = urtp_srtp_init(&ss->srtp_rtx, &sc)) < 0)
      goto fail;
  }
#endif
  if (cfg->format && (r = urtp_sendstream_set_format(ss, cfg->format)) < 0)
    goto fail;
  if (cfg->send_thread)
    start_send_thread(ss);
  *out = ss;
  return 0;

fail:
  urtp_sendstream_free(ss);
  return r;
}

void urtp_sendstream_free(urtp_sendstream_t *ss)
{
  if (!ss)
    return;
  urtp_sendstream_rtcp_stop(ss, false);
  urtp_sendstream_drop(ss);
  urtp_sendthread_stop(ss->sender);
  ss->sender = NULL;
  if (ss->sock->on_sent_user == ss)
    ss->sock->on_sent = NULL;
  /* the sent packets' holds go back, on this thread */
  if (ss->have_hist)
    urtp_history_destroy(&ss->hist);
  ss->have_hist = false;
  if (ss->have_rtx_sock)
    urtp_sock_close(&ss->rtx_sock);
  free(ss->rtx_bufs);
  for (int i = 0; i < 2; i++) {
    urtp_batch_free(&ss->batch[i]);
    urtp_batch_free(&ss->sbatch[i]);
    free(ss->holds[i].v);
  }
#ifdef URTP_HAVE_SRTP
  urtp_srtp_destroy(&ss->srtp);
  urtp_srtp_destroy(&ss->srtcp_out);
  urtp_srtp_destroy(&ss->srtcp_in);
  urtp_srtp_destroy(&ss->srtp_rtx);
#endif
  if (ss->have_pay)
    urtp_pay_destroy(&ss->pay);
  urtp_params_free(&ss->ps);
  free(ss->nals);
  if (ss->sock->pacer == &ss->pacer)
    ss->sock->pacer = NULL;
  urtp_pacer_destroy(&ss->pacer);
  pthread_mutex_destroy(&ss->ps_lock);
  pthread_mutex_destroy(&ss->stats_lock);
  pthread_mutex_destroy(&ss->pacing_lock);
  pthread_mutex_destroy(&ss->srtcp_lock);
  pthread_mutex_destroy(&ss->rtx_lock);
  sendstream_cc_free(ss);
  pthread_mutex_destroy(&ss->cc_lock);
  sendstream_clients_free(ss);
  free(ss);
}

int urtp_sendstream_set_format(urtp_sendstream_t *ss, const urtp_sendstream_format_t *fmt)
{
  bool video = fmt->codec != URTP_CODEC_OPUS;
  size_t mtu = fmt->mtu ? fmt->mtu : URTP_PAY_DEFAULT_MTU;
  if ((unsigned)fmt->codec > URTP_CODEC_OPUS || mtu < URTP_PAY_MIN_MTU || mtu > 65535 ||
      fmt->pt > 127 || fmt->nal_length_size > 4 || (unsigned)fmt->input > URTP_INPUT_LENGTH_PREFIXED ||
      (!video && !fmt->opus_multi.channels && (fmt->channels < 1 || fmt->channels > 2)) ||
      (!video && fmt->opus_multi.channels && !urtp_opus_multi_valid(&fmt->opus_multi)) ||
      (fmt->input == URTP_INPUT_LENGTH_PREFIXED &&
       fmt->codec != URTP_CODEC_H264 && fmt->codec != URTP_CODEC_H265))
    return -EINVAL;
  if (mtu > urtp_sendstream_mtu_max(ss))
    return -EMSGSIZE;

  urtp_pay_config_t pc = {
    .codec = fmt->codec,
    .pt = fmt->pt,
    .ssrc = ss->cfg.ssrc,
    .seq_start = ss->have_pay ? ss->pay.seq : ss->cfg.seq_start,
    .mtu = mtu,
    .aggregate = fmt->aggregate,
    /* padding buys nothing where packets go one per message */
    .pad_fragments = fmt->pad_fragments && ss->sock->tx_mode == URTP_IO_GSO,
  };
  int r;
  if (!ss->have_format || ss->fmt.codec != fmt->codec) {
    if ((r = ps_will_change(ss)) < 0)
      return r;
  }
  urtp_pay_t pay;
  if ((r = urtp_pay_init(&pay, &pc)) < 0)
    return r;
  urtp_pay_set_hdrext(&pay, ss->ext_block.len ? &ss->ext_block : NULL, &ss->tw_next);
  urtp_pay_set_csrcs(&pay, ss->csrc, ss->ncsrc);
  /* counters continue across formats */
  pay.packets = ss->have_pay ? ss->pay.packets : 0;
  pay.bytes = ss->have_pay ? ss->pay.bytes : 0;
  pay.pad_bytes = ss->have_pay ? ss->pay.pad_bytes : ss->pad0;

  pthread_mutex_lock(&ss->ps_lock);
  if (!ss->have_format || ss->fmt.codec != fmt->codec) {
    urtp_params_reset(&ss->ps, fmt->codec);
    ss->nal_length_size = 0;
  }
  if (ss->have_pay)
    urtp_pay_destroy(&ss->pay);
  ss->pay = pay;
  ss->have_pay = true;
  ss->fmt = *fmt;
  ss->fmt.mtu = mtu;
  if (fmt->nal_length_size)
    ss->nal_length_size = fmt->nal_length_size;
  ss->have_format = true;
  pthread_mutex_unlock(&ss->ps_lock);
  au_begin(ss);
  ss->au_ts_valid = false;
  return 0;
}

size_t urtp_sendstream_mtu_max(const urtp_sendstream_t *ss)
{
  /* agreed keys come later: their tag is not known here */
  return ss->srtp.session && !ss->agreed ? 65535 - ss->srtp.rtp_trailer : 65535;
}

int urtp_sendstream_set_codec_data(urtp_sendstream_t *ss, const uint8_t *data, size_t len)
{
  if (!ss->have_format)
    return -EINVAL;
  unsigned ls;
  size_t n;
  urtp_nal_t probe[4 * URTP_PARAMS_MAX_PER_KIND];
  /* checked before anything is flushed for it */
  int r = urtp_params_parse_record(ss->fmt.codec, data, len, &ls, probe,
                                   sizeof(probe) / sizeof(probe[0]), &n);
  if (r < 0)
    return r;
  if ((r = ps_will_change(ss)) < 0)
    return r;
  pthread_mutex_lock(&ss->ps_lock);
  r = urtp_params_set_record(&ss->ps, data, len, &ls);
  pthread_mutex_unlock(&ss->ps_lock);
  if (r < 0)
    return r;
  if (ss->fmt.input == URTP_INPUT_LENGTH_PREFIXED && !ss->fmt.nal_length_size)
    ss->nal_length_size = ls;
  au_begin(ss);
  return 0;
}

void urtp_sendstream_set_config_interval(urtp_sendstream_t *ss, int interval)
{
  atomic_store(&ss->config_interval, interval);
}

const urtp_params_t *urtp_sendstream_params(const urtp_sendstream_t *ss)
{
  return &ss->ps;
}

/* --- push ---------------------------------------------------------------- */

static int nals_reserve(urtp_sendstream_t *ss, size_t n)
{
  if (n <= ss->nals_cap)
    return 0;
  size_t cap = ss->nals_cap ? ss->nals_cap : 64;
  while (cap < n)
    cap *= 2;
  urtp_nal_t *v = realloc(ss->nals, cap * sizeof(*v));
  if (!v)
    return -ENOMEM;
  ss->nals = v;
  ss->nals_cap = cap;
  return 0;
}

/* Splits data into ss->nals, leaving `spare` entries free for parameter
 * sets. Returns the count, -EBADMSG for lengths that overrun, -ENOMEM. */
static long split_nals(urtp_sendstream_t *ss, const uint8_t *data, size_t len, size_t spare)
{
  size_t n = 0;
  if (ss->fmt.input == URTP_INPUT_ANNEXB) {
    if (nals_reserve(ss, spare + 32) < 0)
      return -ENOMEM;
    n = urtp_scl_split(data, len, ss->nals, ss->nals_cap - spare);
    if (n > ss->nals_cap - spare) {
      if (nals_reserve(ss, n + spare) < 0)
        return -ENOMEM;
      n = urtp_scl_split(data, len, ss->nals, ss->nals_cap - spare);
    }
    return (long)n;
  }
  const unsigned ls = ss->nal_length_size;
  size_t off = 0;
  if (!ls)
    return -EBADMSG; /* no codec data told the length size */
  while (off < len) {
    size_t l = 0;
    if (len - off < ls)
      return -EBADMSG;
    for (unsigned i = 0; i < ls; i++)
      l = l << 8 | data[off + i];
    off += ls;
    if (l > len - off)
      return -EBADMSG;
    if (l > 0) {
      if (nals_reserve(ss, n + 1 + spare) < 0)
        return -ENOMEM;
      ss->nals[n].data = data + off;
      ss->nals[n].len = l;
      n++;
    }
    off += l;
  }
  return (long)n;
}

/* Whether config_interval asks for the sets before an IRAP picture at t. */
static bool want_config(urtp_sendstream_t *ss, int64_t t)
{
  int interval = atomic_load(&ss->config_interval);
  if (interval == 0)
    return false;
  if (interval < 0 || ss->last_config < 0 || t < 0 || t < ss->last_config)
    return true;
  return t - ss->last_config >= (int64_t)interval * NS_PER_S;
}

/* Inserts the current sets of the kinds not in `have` at position at of
 * the n NAL units (room reserved). Returns the new count. */
static size_t insert_ps(urtp_sendstream_t *ss, size_t n, size_t at, unsigned have)
{
  const urtp_params_t *ps = &ss->ps;
  size_t count = 0;
  for (int k = 0; k < URTP_PS_KINDS; k++)
    if (!(have & URTP_PS_BIT(k)))
      count += urtp_params_count(ps, (urtp_ps_kind_t)k);
  if (!count)
    return n;
  memmove(ss->nals + at + count, ss->nals + at, (n - at) * sizeof(urtp_nal_t));
  size_t i = at;
  for (int k = 0; k < URTP_PS_KINDS; k++) {
    if (have & URTP_PS_BIT(k))
      continue;
    for (unsigned j = 0; j < urtp_params_count(ps, (urtp_ps_kind_t)k); j++) {
      ss->nals[i].data = urtp_params_get(ps, (urtp_ps_kind_t)k, j, &ss->nals[i].len);
      i++;
    }
  }
  ss->refs_ps[ss->cur] = true;
  return n + count;
}

/* Commits the sets the access unit carried, first making sure nothing
 * points into the ones they replace. */
static int commit_ps(urtp_sendstream_t *ss)
{
  if (!urtp_params_au_changes(&ss->ps)) {
    urtp_params_au_commit(&ss->ps); /* forgets the gathered copies */
    return 0;
  }
  int r = ps_will_change(ss);
  if (r < 0)
    return r;
  pthread_mutex_lock(&ss->ps_lock);
  urtp_params_au_commit(&ss->ps);
  pthread_mutex_unlock(&ss->ps_lock);
  return 0;
}

/* Packetizes with the push's hold taken; on failure the batch is dropped. */
static int pay_held(urtp_sendstream_t *ss, void *hold, const urtp_nal_t *nals, size_t n,
                    const uint8_t *frame, size_t len, uint32_t ts, bool mark)
{
  if (urtp_holds_add(&ss->holds[ss->cur], hold) < 0) {
    release(ss, hold);
    return -ENOMEM;
  }
  int r = frame ? urtp_pay_frame(&ss->pay, frame, len, ts, mark, &ss->batch[ss->cur])
                : urtp_pay_nals(&ss->pay, nals, n, ts, mark, &ss->batch[ss->cur]);
  if (r == -EMSGSIZE) {
    /* nothing was added: only this push goes */
    ss->holds[ss->cur].n--;
    release(ss, hold);
  } else if (r < 0) {
    discard(ss);
  }
  return r;
}

static int push_opus(urtp_sendstream_t *ss, const uint8_t *data, size_t len, uint32_t ts,
                     unsigned flags, void *hold)
{
  /* Stream headers (OpusHead, OpusTags) are not sent over RTP. */
  if ((flags & URTP_SEND_HEADER) ||
      (len >= 8 && (memcmp(data, "OpusHead", 8) == 0 || memcmp(data, "OpusTags", 8) == 0))) {
    release(ss, hold);
    return 0;
  }
  if (flags & URTP_SEND_DISCONT)
    ss->opus_marker = true;
  int r = pay_held(ss, hold, NULL, 0, data, len, ts, ss->opus_marker);
  if (r < 0)
    return r;
  ss->opus_marker = false;
  ss->aus++;
  return r;
}

int urtp_sendstream_push(urtp_sendstream_t *ss, const uint8_t *data, size_t len, uint32_t ts,
                         int64_t time_ns, unsigned flags, void *hold)
{
  if (!ss->have_format || ss->tail) {
    release(ss, hold);
    return ss->tail ? -EBUSY : -EINVAL;
  }
  if (len == 0) {
    release(ss, hold);
    return 0;
  }
  /* the stream's bitrate, by its own clock where it has one */
  ss->media_now = time_ns >= 0 ? time_ns : now_ns();
  sendstream_meter_add(&ss->media_meter, len, ss->media_now);
  if (ss->fmt.codec == URTP_CODEC_OPUS)
    return push_opus(ss, data, len, ts, flags, hold);

  const urtp_h26x_desc_t *d = ss->pay.desc;
  const bool align_au = !ss->fmt.align_nal;
  long sn = split_nals(ss, data, len, urtp_params_total(&ss->ps));
  if (sn < 0) {
    release(ss, hold);
    return (int)sn;
  }
  size_t n = (size_t)sn, first_vcl = SIZE_MAX, insert_at = 0;
  bool leading_aud = true, key = false;
  int r;

  /* NAL-aligned input without markers: a new timestamp starts an AU. */
  if (align_au || (ss->au_ts_valid && ts != ss->au_ts && ss->au_vcl_seen))
    au_begin(ss);
  ss->au_ts = ts;
  ss->au_ts_valid = true;

  /* The parameter sets of an access unit precede its first picture. */
  for (size_t i = 0; i < n && !ss->au_vcl_seen; i++) {
    const urtp_nal_t *nal = &ss->nals[i];
    if (nal->len < d->hdr_len)
      continue;
    unsigned type = urtp_h26x_type(d, nal->data);
    if (leading_aud && urtp_h26x_is_aud(d, type))
      insert_at = i + 1;
    else
      leading_aud = false;
    if (urtp_ps_kind(ss->fmt.codec, type) >= 0) {
      if (urtp_params_au_add(&ss->ps, nal->data, nal->len) < 0) {
        release(ss, hold);
        return -ENOMEM;
      }
    } else if (urtp_h26x_is_vcl(d, type)) {
      ss->au_vcl_seen = true;
      first_vcl = i;
      key = urtp_h26x_is_keyframe(d, type);
    }
  }

  if (first_vcl != SIZE_MAX) {
    if ((r = commit_ps(ss)) < 0) {
      release(ss, hold);
      return r;
    }
    if (key && want_config(ss, time_ns)) {
      unsigned req = urtp_ps_required(ss->fmt.codec), carried = urtp_params_au_mask(&ss->ps);
      if ((carried & req) == req) {
        ss->last_config = time_ns; /* carried in band already */
      } else if ((urtp_params_mask(&ss->ps) & req) == req) {
        n = insert_ps(ss, n, align_au ? insert_at : first_vcl, carried);
        ss->last_config = time_ns;
      } else {
        pthread_mutex_lock(&ss->stats_lock);
        ss->st.config_missing++;
        pthread_mutex_unlock(&ss->stats_lock);
      }
    }
  }

  bool end_of_au = align_au || (flags & URTP_SEND_END_AU);
  r = pay_held(ss, hold, ss->nals, n, NULL, 0, ts, end_of_au);
  if (r < 0)
    return r;
  if (end_of_au) {
    /* an access unit without pictures still carries its parameter sets */
    int c = commit_ps(ss);
    au_begin(ss);
    ss->au_ts_valid = false;
    ss->aus++;
    if (c < 0)
      return c;
  }
  return r;
}

/* --- any thread ---------------------------------------------------------- */

void urtp_sendstream_unlock(urtp_sendstream_t *ss)
{
  urtp_sock_wake(ss->sock);
}

void urtp_sendstream_unlock_stop(urtp_sendstream_t *ss)
{
  urtp_sock_unwake(ss->sock);
}

void urtp_sendstream_get_stats(urtp_sendstream_t *ss, urtp_sendstream_stats_t *out)
{
  urtp_pacer_stats_t ps;
  urtp_pacer_get_stats(&ss->pacer, &ps);
  pthread_mutex_lock(&ss->stats_lock);
  *out = ss->st;
  out->bitrate = sendstream_meter_rate(&ss->sent_meter, now_ns());
  pthread_mutex_unlock(&ss->stats_lock);
  pthread_mutex_lock(&ss->clients_lock);
  out->nclients = (unsigned)ss->nclients;
  pthread_mutex_unlock(&ss->clients_lock);
  out->ccfb_receivers = sendstream_cc_receivers(ss, now_ns() / 1000);
  out->pacing_rate = __atomic_load_n(&ss->pacer.rate, __ATOMIC_RELAXED) * 8;
  out->pacing_waits = ps.waits;
  out->pacing_waited_ns = ps.waited_ns;
  out->pacing_max_wait_ns = ps.max_wait_ns;
  out->pacing_max_queue = ps.max_queue;
  if (ss->have_hist) {
    urtp_history_stats_t hs;
    urtp_history_get_stats(&ss->hist, &hs);
    out->history_packets = hs.packets;
  }
}

void urtp_sendstream_set_pacing(urtp_sendstream_t *ss, uint64_t rate_bps, double factor,
                                size_t burst)
{
  pthread_mutex_lock(&ss->pacing_lock);
  ss->pacing_rate = rate_bps;
  ss->pacing_factor = factor > 0 ? factor : 0;
  ss->pacing_burst = burst;
  pthread_mutex_unlock(&ss->pacing_lock);
}

urtp_pacer_t *urtp_sendstream_pacer(urtp_sendstream_t *ss)
{
  return &ss->pacer;
}

int urtp_sendstream_sdp(urtp_sendstream_t *ss, const urtp_sdp_desc_t *base, char *out,
                        size_t cap)
{
  urtp_sdp_desc_t d = *base;
  int r = -ENODATA;
  pthread_mutex_lock(&ss->ps_lock);
  if (ss->have_format) {
    d.session_id = ss->cfg.ssrc;
    d.codec = ss->fmt.codec;
    d.pt = ss->fmt.pt;
    d.channels = ss->fmt.channels;
    d.opus_multi = d.codec == URTP_CODEC_OPUS && ss->fmt.opus_multi.channels ? &ss->fmt.opus_multi
                                                                                : NULL;
    d.params = d.codec == URTP_CODEC_OPUS ? NULL : &ss->ps;
    r = urtp_sdp_write(&d, out, cap);
  }
  pthread_mutex_unlock(&ss->ps_lock);
  return r;
}
