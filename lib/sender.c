/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sender.c - urtp_sender_t (urtp.h): a sending stream that owns its I/O.
 *
 * The wiring every user of sendstream.h would otherwise repeat: the RTP
 * socket, RTCP beside it (port + 1, or on it with rtcp_mux) on the
 * stream's RTCP thread, random SSRC, sequence and timestamp, the static
 * SRTP key or ZRTP's endpoint, and the clock RTCP's sender reports need.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "urtp/urtp.h"

#include "urtp/au.h"
#include "urtp/net.h"
#include "urtp/rtcp.h"
#include "urtp/rtcpio.h"
#include "urtp/scl.h"
#include "urtp/sendstream.h"
#include "urtp/srtp.h"
#include "stream_util.h"

struct hold {
  struct hold *next;
  size_t cap;
  uint8_t data[];
};

struct urtp_sender {
  urtp_sock_t sock;
  urtp_sendstream_t *ss;
  urtp_rtcpio_t rtcp;
  bool rtcp_on;
  urtp_codec_t codec;
  uint32_t rate;                /* the codec's RTP clock */
  uint32_t ts_start;
  /* RTCP's clock: the pts of the first push, and when it came, on the
   * monotonic clock; sender reports assume pts runs in real time */
  bool started;
  uint64_t pts0, mono0;
  uint32_t ssrc;
  char *host;
  uint16_t port;
  /* where a client's RTCP goes: 0 none, else its port + 1, rtcp_port, or
   * its own port with rtcp_mux */
  bool rtcp_cfg, rtcp_mux;
  uint16_t rtcp_port;
  /* with rtx or the send thread the stream keeps pointers into what was
   * pushed after push returns: copies, in buffers reused as the stream
   * releases them (no allocation once they are as large as the largest
   * access unit) */
  bool copy;
  struct hold *pool;
  void (*keyframe)(void *user);
  void *user;
  struct urtp_zrtp_ep *zrtp;    /* with cfg.zrtp; outlives the stream */
  bool static_key;
};

void urtp_send_config_init(urtp_send_config_t *cfg, urtp_codec_t codec)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->codec = codec;
  cfg->pt = 96;
  cfg->mtu = 1400;
  cfg->channels = 2;
  cfg->ssrc = -1;
  cfg->seq_start = -1;
  cfg->ts_start = -1;
  cfg->rtcp = true;
  cfg->rtx_pt = 97;
  cfg->config_interval = -1;
  cfg->fd = -1;
}

static uint32_t rtp_ts_at(const urtp_sender_t *s, uint64_t pts_ns)
{
  /* pts_ns * rate would overflow 64 bits after a few days: whole seconds
   * and the rest apart */
  uint64_t sec = pts_ns / 1000000000u, rem = pts_ns % 1000000000u;
  return s->ts_start + (uint32_t)(sec * s->rate) +
         (uint32_t)((rem * s->rate + 500000000u) / 1000000000u);
}

static bool rtcp_clock(void *user, uint64_t *ntp, uint32_t *rtp_ts)
{
  urtp_sender_t *s = user;
  if (!__atomic_load_n(&s->started, __ATOMIC_ACQUIRE))
    return false;
  uint64_t mono = urtp_stream_mono_ns();
  *ntp = urtp_ntp_now();
  *rtp_ts = rtp_ts_at(s, s->pts0 + (mono - s->mono0));
  return true;
}

/* The stream is done with a copy (streaming thread): back to the pool. */
static void release_hold(void *user, void *hold)
{
  urtp_sender_t *s = user;
  struct hold *h = hold;
  if (h) {
    h->next = s->pool;
    s->pool = h;
  }
}

static struct hold *take_hold(urtp_sender_t *s, size_t len)
{
  struct hold *h = s->pool;
  if (h)
    s->pool = h->next;
  if (!h || h->cap < len) {
    struct hold *g = realloc(h, sizeof *h + len);
    if (!g) {
      free(h);
      return NULL;
    }
    h = g;
    h->cap = len;
  }
  return h;
}

static void keyframe_cb(void *user, bool fir)
{
  (void)fir;
  urtp_sender_t *s = user;
  if (s->keyframe)
    s->keyframe(s->user);
}

/* Keys agreed at last: what went out before never reached the receiver,
 * whose decoder needs a key frame to start from. */
static void keys_ready_cb(void *user)
{
  urtp_sender_t *s = user;
  if (s->keyframe && s->codec != URTP_CODEC_OPUS)
    s->keyframe(s->user);
}

static int check_config(const urtp_send_config_t *c)
{
  if (c->zrtp && c->srtp_key)    /* keys come from one or the other */
    return -EINVAL;
  if (!c->host || !*c->host || c->port == 0 || c->pt < 0 || c->pt > 127 ||
      c->ssrc < -1 || c->ssrc > (int64_t)UINT32_MAX || c->seq_start < -1 ||
      c->seq_start > 65535 || c->ts_start < -1 || c->ts_start > (int64_t)UINT32_MAX ||
      (unsigned)c->codec > URTP_CODEC_OPUS || (c->rtx && (c->rtx_pt < 0 || c->rtx_pt > 127 ||
                                                      c->rtx_pt == c->pt)) ||
      (c->rtcp_mux && !c->rtcp) || (c->codec == URTP_CODEC_OPUS && (c->channels < 1 ||
                                                                 c->channels > 2)))
    return -EINVAL;
  return 0;
}

int urtp_sender_open(urtp_sender_t **out, const urtp_send_config_t *cfg)
{
  *out = NULL;
  int r = check_config(cfg);
  if (r < 0)
    return r;
  urtp_sender_t *s = calloc(1, sizeof *s);
  if (!s || !(s->host = strdup(cfg->host))) {
    free(s);
    return -ENOMEM;
  }
  s->sock.fd = -1;
  s->codec = cfg->codec;
  s->rate = urtp_codec_clock_rate(cfg->codec);
  s->port = cfg->port;
  s->keyframe = cfg->keyframe;
  s->user = cfg->user;

  uint32_t rnd[3] = { 0 };
  if (RAND_bytes((unsigned char *)rnd, sizeof rnd) != 1) {
    r = -EIO;
    goto fail;
  }
  s->ts_start = cfg->ts_start >= 0 ? (uint32_t)cfg->ts_start : rnd[1];

  urtp_sock_config_t sc = {
    .bind_addr = cfg->bind_addr,
    .bind_port = cfg->bind_port,
    .remote_addr = cfg->host,
    .remote_port = cfg->port,
    .dscp = -1,
    .sndbuf = 4 << 20,
    /* RTCP and ZRTP read a muxed socket datagram by datagram */
    .rx_mode = cfg->rtcp_mux ? URTP_IO_MMSG : URTP_IO_AUTO,
  };
  r = cfg->fd >= 0 ? urtp_sock_adopt(&s->sock, cfg->fd, &sc) : urtp_sock_open(&s->sock, &sc);
  if (r < 0)
    goto fail;

  urtp_sendstream_format_t fmt = {
    .codec = cfg->codec,
    .pt = (uint8_t)cfg->pt,
    .mtu = cfg->mtu,
    .aggregate = cfg->aggregate,
    .pad_fragments = true,
    .channels = cfg->codec == URTP_CODEC_OPUS ? cfg->channels : 0,
  };
  urtp_sendstream_config_t ssc = {
    .ssrc = cfg->ssrc >= 0 ? (uint32_t)cfg->ssrc : rnd[0],
    .seq_start = (uint16_t)(cfg->seq_start >= 0 ? (uint32_t)cfg->seq_start : rnd[2]),
    .config_interval = cfg->config_interval,
    .send_thread = cfg->send_thread,
    .format = &fmt,
    .cname = cfg->cname,
    .rtx = cfg->rtx,
    .rtx_pt = (uint8_t)cfg->rtx_pt,
    .keyframe = keyframe_cb,
    .release = release_hold,
    .user = s,
  };
  s->ssrc = ssc.ssrc;
  s->copy = cfg->rtx || cfg->send_thread;
  urtp_srtp_config_t srtp;
  uint8_t key[URTP_SRTP_MAX_KEY_LEN];
  if (cfg->srtp_key) {
    if ((r = urtp_stream_srtp_config(cfg->srtp_key, cfg->srtp_profile, &srtp, key)) < 0)
      goto fail;
    ssc.srtp = &srtp;
    s->static_key = true;
  }
  if (cfg->zrtp) {
    /* with rtcp_mux, RTCP's reader hands the peer's answers over */
    if ((r = urtp_stream_zrtp_open(s->sock.fd, !cfg->rtcp_mux,
                                   (const struct sockaddr *)&s->sock.remote, s->sock.remote_len,
                                   ssc.ssrc, cfg->zrtp_cache, &s->zrtp)) < 0)
      goto fail;
    ssc.zrtp = s->zrtp;
    ssc.keys_ready = keys_ready_cb;
  }
  r = urtp_sendstream_new(&s->ss, &s->sock, &ssc);
  memset(key, 0, sizeof key);
  if (r < 0)
    goto fail;
  if (cfg->pacing_bps)
    urtp_sendstream_set_pacing(s->ss, cfg->pacing_bps, 0, 0);

  if (cfg->rtcp) {
    urtp_rtcpio_config_t rc = {
      .bind_addr = cfg->bind_addr,
      .remote_addr = cfg->host,
      .remote_port = cfg->rtcp_mux ? cfg->port : urtp_stream_rtcp_port(cfg->port, cfg->rtcp_port),
      .we_send = true,
      .early_first = true,  /* receivers learn from it where feedback goes */
      .mux = cfg->rtcp_mux ? &s->sock : NULL,
      .zrtp = cfg->rtcp_mux ? s->zrtp : NULL,
    };
    if ((r = urtp_rtcpio_open(&s->rtcp, &rc, urtp_stream_mono_ns())) < 0)
      goto fail;
    /* RTCP draws on the media's pacing budget, not beside it */
    s->rtcp.sock.pacer = urtp_sendstream_pacer(s->ss);
    if ((r = urtp_sendstream_rtcp_start(s->ss, &s->rtcp, rtcp_clock, NULL, s)) < 0) {
      urtp_rtcpio_close(&s->rtcp);
      goto fail;
    }
    s->rtcp_on = true;
  }
  s->rtcp_cfg = cfg->rtcp;
  s->rtcp_mux = cfg->rtcp_mux;
  s->rtcp_port = cfg->rtcp_port;
  /* the configured host is the first client; more may come */
  if ((r = urtp_sender_add_client(s, cfg->host, cfg->port)) < 0) {
    urtp_sendstream_rtcp_stop(s->ss, false);
    if (s->rtcp_on)
      urtp_rtcpio_close(&s->rtcp);
    goto fail;
  }
  *out = s;
  return 0;

fail:
  urtp_sendstream_free(s->ss);
  urtp_stream_zrtp_close(s->zrtp);
  if (s->sock.fd >= 0)
    urtp_sock_close(&s->sock);
  free(s->host);
  free(s);
  return r;
}

/* A client's RTP and RTCP addresses. */
static int client_addrs(urtp_sender_t *s, const char *host, uint16_t port,
                        struct sockaddr_storage *rtp, struct sockaddr_storage *rtcp)
{
  memset(rtcp, 0, sizeof *rtcp);
  int r = urtp_stream_resolve(host, port, s->sock.family, rtp);
  if (r == 0 && s->rtcp_cfg) {
    *rtcp = *rtp;
    urtp_addr_set_port(rtcp, s->rtcp_mux ? port : urtp_stream_rtcp_port(port, s->rtcp_port));
  }
  return r;
}

int urtp_sender_add_client(urtp_sender_t *s, const char *host, uint16_t port)
{
  struct sockaddr_storage rtp, rtcp;
  if (!port)
    return -EINVAL;
  int r = client_addrs(s, host, port, &rtp, &rtcp);
  if (r == 0)
    r = urtp_sendstream_add_client(s->ss, &rtp, &rtcp);
  return r < 0 ? r : 0;
}

int urtp_sender_remove_client(urtp_sender_t *s, const char *host, uint16_t port)
{
  struct sockaddr_storage rtp, rtcp;
  int r = client_addrs(s, host, port, &rtp, &rtcp);
  if (r == 0)
    r = urtp_sendstream_remove_client(s->ss, &rtp);
  return r < 0 ? -ENOENT : 0;
}

int urtp_sender_push(urtp_sender_t *s, const uint8_t *data, size_t len, uint64_t pts_ns)
{
  if (!s->started) {
    s->pts0 = pts_ns;
    s->mono0 = urtp_stream_mono_ns();
    __atomic_store_n(&s->started, true, __ATOMIC_RELEASE);
  }
  /* the bytes are the caller's only during the call: inline sends are
   * done when flush returns; the send thread and rtx's history get a copy */
  struct hold *h = NULL;
  if (s->copy) {
    if (!(h = take_hold(s, len)))
      return -ENOMEM;
    memcpy(h->data, data, len);
    data = h->data;
  }
  int r = urtp_sendstream_push(s->ss, data, len, rtp_ts_at(s, pts_ns), (int64_t)pts_ns, 0, h);
  if (r >= 0)
    r = urtp_sendstream_flush(s->ss);
  return r < 0 ? r : 0;
}

int urtp_sender_sdp(urtp_sender_t *s, char *out, size_t cap)
{
  urtp_sdp_desc_t d = { .addr = s->host, .port = s->port, .ttl = 16, .session_name = "urtp" };
  int n = urtp_sendstream_sdp(s->ss, &d, out, cap);
  return n >= 0 && (size_t)n >= cap ? -ENOSPC : n;
}

void urtp_sender_stats(urtp_sender_t *s, urtp_sender_stats_t *out)
{
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(s->ss, &st);
  memset(out, 0, sizeof *out);
  out->ssrc = s->ssrc;
  out->access_units = st.access_units;
  out->packets = st.packets;
  out->bytes = st.bytes;
  out->send_errors = st.send_errors;
  out->bitrate = st.bitrate;
  out->rtcp_sent = st.rtcp_sent;
  out->receivers = st.nreceivers;
  out->rtt_ns = st.rr_blocks ? st.rtt_ns : -1;
  out->lost = st.rr.lost;
  out->jitter = st.rr.jitter;
  out->fraction_lost = st.rr.fraction;
  out->nacks = st.nacks_received;
  out->retransmitted = st.rtx_packets;
  out->keyframe_requests = st.keyframe_requests;
  out->held = st.held_aus;
  out->clients = st.nclients;
  out->security = urtp_stream_security(s->zrtp, s->static_key, out->sas);
}

int urtp_sender_close(urtp_sender_t *s)
{
  if (!s)
    return 0;
  int r = urtp_sendstream_drain(s->ss);
  if (s->rtcp_on) {
    urtp_sendstream_rtcp_stop(s->ss, true); /* a last report with BYE */
    urtp_rtcpio_close(&s->rtcp);
  }
  urtp_sendstream_free(s->ss);  /* releases every hold into the pool */
  urtp_stream_zrtp_close(s->zrtp); /* its thread reads the socket */
  urtp_sock_close(&s->sock);
  while (s->pool) {
    struct hold *h = s->pool;
    s->pool = h->next;
    free(h);
  }
  free(s->host);
  free(s);
  return r < 0 ? r : 0;
}

size_t urtp_au_length(urtp_codec_t codec, const uint8_t *data, size_t len)
{
  urtp_au_split_t split;
  if (urtp_au_split_init(&split, codec) < 0)
    return len;
  urtp_scl_iter_t it;
  urtp_scl_iter_init(&it, data, len);
  urtp_nal_t nal;
  bool first = true;
  while (urtp_scl_next(&it, &nal)) {
    /* the first NAL unit always belongs to this access unit */
    if (urtp_au_split_next(&split, nal.data, nal.len) && !first)
      return urtp_stream_start_code_at(data, nal.data);
    first = false;
  }
  return len;
}
