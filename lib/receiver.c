/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * receiver.c - urtp_receiver_t (urtp.h): a receiving stream that owns its
 * I/O.
 *
 * The sockets, the stream and the loop (urtp_recvstream_run(), which
 * uvgrtpsrc runs too) until an access unit is out. One clock
 * (CLOCK_MONOTONIC) for all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/urtp.h"

#include "urtp/depay.h"
#include "urtp/net.h"
#include "urtp/recvstream.h"
#include "urtp/rtcpio.h"
#include "stream_util.h"

/* Receive slots: up to 32 of 64 KiB (GRO hands over up to 64 KiB at
 * once); with rcvbuf 0, 8 to start with, more as the stream needs. */
#define RX_BATCH 32
#define RX_SLOT 65536

struct urtp_receiver {
  urtp_sock_t sock;
  urtp_rx_t rx;
  bool rx_auto_on;              /* rcvbuf 0: memory grows with the stream */
  urtp_rx_auto_t rx_auto;
  urtp_recvstream_t *rs;
  urtp_rtcpio_t rtcp;
  bool rtcp_on;
  uint32_t clock_rate;
  uint8_t *held;                /* the frame handed out last */
  uint64_t frames;
  struct urtp_zrtp_ep *zrtp;    /* with cfg.zrtp; outlives the stream */
  bool static_key;
};

void urtp_recv_config_init(urtp_recv_config_t *cfg, urtp_codec_t codec)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->codec = codec;
  cfg->pt = 96;
  cfg->ssrc = -1;
  cfg->latency_ns = URTP_RECVSTREAM_LATENCY;
  cfg->rtcp = true;
  cfg->rtx_pt = 97;
  cfg->rcvbuf = 0;
  cfg->fd = -1;
}

static int check_config(const urtp_recv_config_t *c)
{
  if (c->zrtp && c->srtp_key)    /* keys come from one or the other */
    return -EINVAL;
  if ((unsigned)c->codec > URTP_CODEC_OPUS || c->pt < -1 || c->pt > 127 || c->ssrc < -1 ||
      c->ssrc > (int64_t)UINT32_MAX || (c->rtx && (!c->rtcp || c->rtx_pt < 0 ||
                                                     c->rtx_pt > 127 || c->rtx_pt == c->pt)) ||
      (c->rtcp_mux && !c->rtcp) || c->rcvbuf < 0 || (c->params_len && !c->params))
    return -EINVAL;
  return 0;
}

int urtp_receiver_open(urtp_receiver_t **out, const urtp_recv_config_t *cfg)
{
  *out = NULL;
  int r = check_config(cfg);
  if (r < 0)
    return r;
  urtp_receiver_t *rv = calloc(1, sizeof *rv);
  if (!rv)
    return -ENOMEM;
  rv->sock.fd = -1;
  rv->clock_rate = urtp_codec_clock_rate(cfg->codec);

  urtp_sock_config_t sc = {
    .bind_addr = cfg->bind_addr ? cfg->bind_addr : "0.0.0.0",
    .bind_port = cfg->port,
    .multicast_iface = cfg->multicast_iface,
    .dscp = -1,
    .rcvbuf = cfg->rcvbuf,
    /* RTCP and ZRTP among the datagrams are read one by one */
    .rx_mode = cfg->rtcp_mux ? URTP_IO_MMSG : URTP_IO_AUTO,
  };
  r = cfg->fd >= 0 ? urtp_sock_adopt(&rv->sock, cfg->fd, &sc) : urtp_sock_open(&rv->sock, &sc);
  if (r < 0)
    goto fail;
  if ((r = urtp_rx_init(&rv->rx, RX_BATCH, RX_SLOT)) < 0)
    goto fail;
  /* a socket the caller made keeps the buffer it set */
  rv->rx_auto_on = cfg->rcvbuf == 0 && cfg->fd < 0;
  if (rv->rx_auto_on)
    urtp_rx_auto_start(&rv->rx_auto, &rv->sock, &rv->rx);

  urtp_recvstream_config_t rc = {
    .codec = cfg->codec,
    .pt = cfg->pt,
    .ssrc = cfg->ssrc,
    .latency = cfg->latency_ns,
    .loss_policy = URTP_LOSS_DROP_AU,
    .params = cfg->params,
    .params_len = cfg->params_len,
    .cname = cfg->cname,
    .rtcp_mux = cfg->rtcp_mux,
    .nack = cfg->rtx,
    .rtx = cfg->rtx,
    .rtx_pt = (uint8_t)cfg->rtx_pt,
    .request_keyframe = cfg->rtx,
  };
  urtp_srtp_config_t srtp;
  uint8_t key[URTP_SRTP_MAX_KEY_LEN];
  if (cfg->srtp_key) {
    if ((r = urtp_stream_srtp_config(cfg->srtp_key, cfg->srtp_profile, &srtp, key)) < 0)
      goto fail;
    srtp.dir = URTP_SRTP_INBOUND;
    srtp.any_ssrc = true;
    srtp.replay_window = 1024;
    rc.srtp = &srtp;
    rv->static_key = true;
  }
  if (cfg->zrtp) {
    /* answers the sender's Hello from where it came, on our RTP socket;
     * the stream hands it the ZRTP packets it reads there */
    if ((r = urtp_stream_zrtp_open(rv->sock.fd, false, NULL, 0, 0, cfg->zrtp_cache, &rv->zrtp)) <
        0)
      goto fail;
    rc.zrtp = rv->zrtp;
  }
  r = urtp_recvstream_new(&rc, &rv->rs);
  memset(key, 0, sizeof key);
  if (r < 0)
    goto fail;

  if (cfg->rtcp) {
    int port = urtp_sock_local_port(&rv->sock);
    urtp_rtcpio_config_t ic = {
      .bind_addr = sc.bind_addr,
      .bind_port = urtp_stream_rtcp_port((uint16_t)port, cfg->rtcp_port),
      .mux = cfg->rtcp_mux ? &rv->sock : NULL,
    };
    if ((r = urtp_rtcpio_open(&rv->rtcp, &ic, urtp_stream_mono_ns())) < 0)
      goto fail;
    rv->rtcp_on = true;
    if (!cfg->rtcp_mux)
      rv->sock.watch_fd = rv->rtcp.sock.fd;
    uint64_t now = urtp_stream_mono_ns();
    urtp_recvstream_rtcp_service(rv->rs, &rv->rtcp, now, now);
  }
  *out = rv;
  return 0;

fail:
  urtp_recvstream_free(rv->rs);
  urtp_stream_zrtp_close(rv->zrtp);
  urtp_rx_destroy(&rv->rx);
  if (rv->sock.fd >= 0)
    urtp_sock_close(&rv->sock);
  free(rv);
  return r;
}

uint16_t urtp_receiver_port(const urtp_receiver_t *r)
{
  return (uint16_t)urtp_sock_local_port(&r->sock);
}

static void release_held(urtp_receiver_t *r)
{
  if (r->held) {
    urtp_depay_release(r->held);
    r->held = NULL;
  }
}

static void fill_frame(urtp_receiver_t *r, const urtp_recvstream_frame_t *in, urtp_frame_t *f)
{
  memset(f, 0, sizeof *f);
  r->held = in->au.data;
  f->data = in->au.data;
  f->len = in->au.len;
  f->pts_ns = in->pts;
  f->rtp_ts = in->au.rtp_ts;
  f->ssrc = in->ssrc;
  if (in->flags & URTP_AU_KEYFRAME)
    f->flags |= URTP_FRAME_KEY;
  if (in->flags & (URTP_FRAME_DISCONT | URTP_AU_DISCONT))
    f->flags |= URTP_FRAME_GAP;
  if (in->flags & URTP_FRAME_PARAMS)
    f->params = urtp_recvstream_params(r->rs, &f->params_len);
  r->frames++;
}

static uint64_t mono_clock(void *user)
{
  (void)user;
  return urtp_stream_mono_ns();
}

int urtp_receiver_pull(urtp_receiver_t *r, urtp_frame_t *f, int timeout_ms)
{
  release_held(r);
  uint64_t now = urtp_stream_mono_ns();
  uint64_t end = timeout_ms < 0 ? UINT64_MAX : now + (uint64_t)timeout_ms * 1000000u;
  for (bool waited = false;; waited = true) {
    urtp_recvstream_frame_t in;
    if (urtp_recvstream_pop(r->rs, &in)) {
      fill_frame(r, &in, f);
      return 1;
    }
    /* a timeout of 0 still takes what has already arrived, once */
    if (waited && now >= end)
      return 0;
    /* one wait, bounded by the caller's end too; datagrams, expiries
     * and RTCP inside */
    urtp_recvstream_io_t io = { &r->sock, &r->rx, r->rtcp_on ? &r->rtcp : NULL, mono_clock, NULL };
    int64_t left = end == UINT64_MAX ? -1 : end > now ? (int64_t)(end - now) : 0;
    int n = urtp_recvstream_run(r->rs, &io, left, NULL);
    if (n < 0 && n != -EINTR)
      return n;
    if (r->rx_auto_on && n > 0)
      urtp_rx_auto_update(&r->rx_auto, &r->sock, &r->rx);
    now = urtp_stream_mono_ns();
  }
}

void urtp_receiver_request_keyframe(urtp_receiver_t *r)
{
  urtp_recvstream_request_keyframe(r->rs, false);
}

void urtp_receiver_stats(urtp_receiver_t *r, urtp_receiver_stats_t *out)
{
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(r->rs, &st);
  memset(out, 0, sizeof *out);
  out->ssrc = st.ssrc;
  out->have_sender = st.have_source;
  memcpy(out->cname, st.cname, sizeof out->cname < sizeof st.cname ? sizeof out->cname
                                                                    : sizeof st.cname);
  out->cname[sizeof out->cname - 1] = '\0';
  out->frames = st.frames;
  out->packets = st.depay.packets;
  out->bytes = st.depay.bytes;
  out->lost = st.depay.seq.lost;
  out->recovered = st.nack.recovered;
  out->frames_dropped = st.depay.dropped_aus;
  out->dropped = st.malformed_rtp + st.wrong_pt + st.source.foreign + st.source.stray +
                 st.srtp.auth_fail + st.srtp.replay + st.srtp.other + st.rtx_dropped;
  out->kernel_drops = st.kernel_drops;
  out->sender_changes = st.source.changes;
  out->sender_reports = st.rtcp_sr;
  out->rtcp_sent = st.rtcp_sent;
  out->nacks_sent = st.nacks_sent;
  out->keyframe_requests = st.pli_sent + st.fir_sent;
  out->jitter_ns = st.have_reception && r->clock_rate
                       ? (int64_t)((uint64_t)st.reception.jitter * 1000000000u / r->clock_rate)
                       : 0;
  out->dropped += st.zrtp_dropped;
  out->security = urtp_stream_security(r->zrtp, r->static_key, out->sas);
}

void urtp_receiver_close(urtp_receiver_t *r)
{
  if (!r)
    return;
  release_held(r);
  if (r->rtcp_on) {
    /* we leave: a last report with BYE */
    uint8_t bye[512];
    uint64_t now = urtp_stream_mono_ns();
    int len = urtp_recvstream_rtcp_report(r->rs, now, true, bye, sizeof bye);
    if (len > 0)
      urtp_rtcpio_send(&r->rtcp, bye, (size_t)len, now);
    r->sock.watch_fd = -1;
    urtp_rtcpio_close(&r->rtcp);
  }
  urtp_recvstream_free(r->rs);
  urtp_stream_zrtp_close(r->zrtp); /* before the socket it sends on */
  urtp_rx_destroy(&r->rx);
  urtp_sock_close(&r->sock);
  free(r);
}
