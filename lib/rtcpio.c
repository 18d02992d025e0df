/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/rtcpio.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#ifdef URTP_HAVE_ZRTP_EP
#include "urtp/zrtp_ep.h"
#endif

/* A report of ours: RR or SR with one block, SDES CNAME; for the average
 * before the first one goes out. */
#define TYPICAL_REPORT 90

static urtp_rtcp_members_t members(const urtp_rtcpio_t *io)
{
  /* us and the other side; a sender counts itself among the senders */
  urtp_rtcp_members_t m = { .members = 2, .senders = 1, .we_sent = io->we_send };
  return m;
}

/* The destination, resolved apart from the socket: a socket given a
 * remote is connected, and a connected socket hears only that peer, while
 * reports come from wherever the other side sends them (rtpbin: another
 * socket than the one it reads on). */
static int resolve(const char *host, uint16_t port, struct sockaddr_storage *out,
                   socklen_t *len)
{
  struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
  char service[8];
  snprintf(service, sizeof service, "%u", port);
  if (getaddrinfo(host, service, &hints, &ai) != 0 || !ai)
    return -EINVAL;
  memcpy(out, ai->ai_addr, ai->ai_addrlen);
  *len = ai->ai_addrlen;
  freeaddrinfo(ai);
  return 0;
}

/* Whether host is a multicast group (a literal address). */
static bool is_group(const char *host)
{
  struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST }, *ai = NULL;
  if (!host || getaddrinfo(host, NULL, &hints, &ai) != 0 || !ai)
    return false;
  struct sockaddr_storage a;
  memcpy(&a, ai->ai_addr, ai->ai_addrlen);
  freeaddrinfo(ai);
  return urtp_addr_is_multicast(&a);
}

/* How soon an early first report that could not be built is tried again. */
#define EARLY_RETRY 20000000ull

int urtp_rtcpio_open(urtp_rtcpio_t *io, const urtp_rtcpio_config_t *cfg, uint64_t now)
{
  memset(io, 0, sizeof(*io));
  if (cfg->remote_addr) {
    if (resolve(cfg->remote_addr, cfg->remote_port, &io->dest, &io->dest_len) < 0)
      return -EINVAL;
    io->dest_fixed = true;
  }
  int r;
  if (cfg->mux) {
    if ((r = urtp_sock_share(&io->sock, cfg->mux)) < 0)
      return r;
    io->mux = true;
    io->zrtp = cfg->zrtp;
    io->other = cfg->other;
    io->other_user = cfg->other_user;
  } else {
    const char *bind = cfg->bind_addr;
    if (!bind)
      bind = io->dest_len && io->dest.ss_family == AF_INET6 ? "::" : "0.0.0.0";
    urtp_sock_config_t sc = {
      .bind_addr = bind,
      .bind_port = cfg->bind_port,
      .dscp = -1,
      .reuse = cfg->reuse && is_group(bind),
      .tx_mode = URTP_IO_PLAIN,
      .rx_mode = URTP_IO_MMSG,
      .multicast_iface = cfg->multicast_iface,
      .multicast_sources = cfg->multicast_sources,
      .no_join = cfg->no_join,
    };
    if ((r = urtp_sock_open(&io->sock, &sc)) < 0)
      return r;
  }
  /* a shared socket with GRO may hand over coalesced RTP */
  size_t slot = io->sock.rx_mode == URTP_IO_GRO ? 65536 : 1500;
  if ((r = urtp_rx_init(&io->rx, 8, slot)) < 0) {
    urtp_sock_close(&io->sock);
    return r;
  }
  io->we_send = cfg->we_send;
  urtp_rtcp_interval_config_t ic = { .min_interval = cfg->min_interval };
  urtp_rtcp_members_t m = members(io);
  urtp_rtcp_sched_init(&io->sched, &ic, now, &m, TYPICAL_REPORT);
  io->early_first = cfg->early_first;
  if (io->early_first)
    io->sched.tn = now;
  return 0;
}

void urtp_rtcpio_close(urtp_rtcpio_t *io)
{
  urtp_rx_destroy(&io->rx);
  urtp_sock_close(&io->sock);
}

bool urtp_rtcpio_due(urtp_rtcpio_t *io, uint64_t now)
{
  if (io->early_first && io->sched.initial)
    return true;
  urtp_rtcp_members_t m = members(io);
  return urtp_rtcp_sched_expire(&io->sched, now, &m);
}

/* To the destination, if there is one yet; counts into *ok when sent. */
static int send_dest(urtp_rtcpio_t *io, const uint8_t *buf, size_t len, uint64_t *ok)
{
  if (!io->dest_len) {
    io->unsent++;
    return 0;
  }
  int r = urtp_sock_sendto(&io->sock, buf, len, (const struct sockaddr *)&io->dest, io->dest_len);
  if (r < 0)
    io->send_errors++;
  else
    (*ok)++;
  return r;
}

int urtp_rtcpio_send(urtp_rtcpio_t *io, const uint8_t *buf, size_t len, uint64_t now)
{
  urtp_rtcp_members_t m = members(io);
  urtp_rtcp_sched_sent(&io->sched, now, &m, len);
  return send_dest(io, buf, len, &io->sent);
}

void urtp_rtcpio_sent(urtp_rtcpio_t *io, size_t len, uint64_t now)
{
  urtp_rtcp_members_t m = members(io);
  urtp_rtcp_sched_sent(&io->sched, now, &m, len);
}

int urtp_rtcpio_send_to(urtp_rtcpio_t *io, const uint8_t *buf, size_t len,
                        const struct sockaddr_storage *to)
{
  int r = urtp_sock_sendto(&io->sock, buf, len, (const struct sockaddr *)to, urtp_addr_len(to));
  if (r < 0)
    io->send_errors++;
  else
    io->sent++;
  return r;
}

int urtp_rtcpio_send_feedback(urtp_rtcpio_t *io, const uint8_t *buf, size_t len)
{
  return send_dest(io, buf, len, &io->feedback_sent);
}

void urtp_rtcpio_skip(urtp_rtcpio_t *io, uint64_t now)
{
  if (io->early_first && io->sched.initial) {
    /* the first report waits for what it needs (a clock), not a turn */
    io->sched.tn = now + EARLY_RETRY;
    io->unsent++;
    return;
  }
  urtp_rtcp_members_t m = members(io);
  urtp_rtcp_sched_sent(&io->sched, now, &m, TYPICAL_REPORT);
  io->unsent++;
}

int urtp_rtcpio_recv(urtp_rtcpio_t *io, int timeout_ms)
{
  int n = urtp_sock_recv(&io->sock, &io->rx, timeout_ms);
  if (n == -EINTR)
    return n;
  int kept = 0;
  for (int i = 0; i < n; i++) {
    const urtp_dgram_t *d = &io->rx.dgrams[i];
    if (io->mux && !urtp_rtcp_is_muxed(d->data, d->len)) {
      io->not_rtcp++;
#ifdef URTP_HAVE_ZRTP_EP
      if (io->zrtp && urtp_zrtp_is_zrtp(d->data, d->len)) {
        urtp_zrtp_ep_recv(io->zrtp, d->data, d->len, (const struct sockaddr *)d->from,
                          d->from->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                         : sizeof(struct sockaddr_in));
        continue;
      }
#endif
      if (io->other)
        io->other(io->other_user, d);
      continue;
    }
    urtp_rtcp_sched_received(&io->sched, d->len);
    io->rx.dgrams[kept++] = *d;
  }
  return kept;
}

void urtp_rtcpio_learn(urtp_rtcpio_t *io, const struct sockaddr_storage *from)
{
  if (io->dest_fixed || !from)
    return;
  io->dest = *from;
  io->dest_len = from->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                              : sizeof(struct sockaddr_in);
}

void urtp_rtcpio_forget(urtp_rtcpio_t *io)
{
  if (!io->dest_fixed)
    io->dest_len = 0;
}
