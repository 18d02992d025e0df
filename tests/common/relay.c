/* SPDX-License-Identifier: BSD-2-Clause */
#include "relay.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: deterministic for a seed, good enough for impairment. */
static double rnd_of(uint64_t *state)
{
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / (double)(1ULL << 53);
}

static double rnd(relay_t *r)
{
  return rnd_of(&r->rng);
}

static void send_now(relay_t *r, const uint8_t *data, size_t len, bool back)
{
  if (back) {
    if (r->last_from_len && sendto(r->in_fd, data, len, 0, (struct sockaddr *)&r->last_from,
                                   r->last_from_len) == (ssize_t)len)
      r->stats.back_forwarded++;
  } else if (send(r->out_fd, data, len, 0) == (ssize_t)len) {
    r->stats.forwarded++;
  }
}

static void forward_dir(relay_t *r, const uint8_t *data, size_t len, bool back)
{
  if (!r->cfg.delay_ms || r->ndelayed == RELAY_MAX_DELAYED || len > sizeof(r->delayed[0].data)) {
    send_now(r, data, len, back);
    return;
  }
  struct delayed *d = &r->delayed[(r->delayed_head + r->ndelayed++) % RELAY_MAX_DELAYED];
  d->due = mono_ns() + (uint64_t)r->cfg.delay_ms * 1000000ull;
  d->back = back;
  d->len = (uint16_t)len;
  memcpy(d->data, data, len);
}

static void forward(relay_t *r, const uint8_t *data, size_t len)
{
  forward_dir(r, data, len, false);
}

/* A reply from the destination: back to the last sender, or lost. */
static void relay_back(relay_t *r, uint8_t *buf, size_t cap)
{
  ssize_t n = recv(r->out_fd, buf, cap, MSG_DONTWAIT);
  if (n < 0)
    return;
  r->stats.back_received++;
  if (!r->cfg.reverse)
    return;
  if (rnd_of(&r->rng_back) < r->cfg.reverse_drop) {
    r->stats.back_dropped++;
    return;
  }
  forward_dir(r, buf, (size_t)n, true);
}

/* Sends what has waited out the delay (everything with all); returns the
 * nanoseconds until the next is due (each leaves at its own time, not in
 * bunches per millisecond), -1 if none waits. */
static int64_t send_delayed(relay_t *r, bool all)
{
  uint64_t now = mono_ns();
  while (r->ndelayed) {
    struct delayed *d = &r->delayed[r->delayed_head];
    if (!all && d->due > now)
      return (int64_t)(d->due - now);
    send_now(r, d->data, d->len, d->back);
    r->delayed_head = (r->delayed_head + 1) % RELAY_MAX_DELAYED;
    r->ndelayed--;
  }
  return -1;
}

static void hold(relay_t *r, const uint8_t *data, size_t len, uint64_t due)
{
  if (r->nheld == RELAY_MAX_HELD || len > sizeof(r->held[0].data)) {
    forward(r, data, len);
    return;
  }
  struct held *h = &r->held[r->nheld++];
  h->due = due;
  h->len = (uint16_t)len;
  memcpy(h->data, data, len);
}

/* Forwards held datagrams that are due, oldest first. */
static void release(relay_t *r, bool all)
{
  unsigned k = 0;
  for (unsigned i = 0; i < r->nheld; i++) {
    if (all || r->held[i].due <= r->stats.received)
      forward(r, r->held[i].data, r->held[i].len);
    else
      r->held[k++] = r->held[i];
  }
  r->nheld = k;
}

static void *run(void *arg)
{
  relay_t *r = arg;
  uint8_t buf[65536];
  struct pollfd pfd[3] = {{r->in_fd, POLLIN, 0}, {r->stop_fd, POLLIN, 0},
                          {r->out_fd, POLLIN, 0}};

  uint64_t last_rx = mono_ns();
  for (;;) {
    int64_t timeout = send_delayed(r, false);
    if (r->nheld) {
      uint64_t idle_at = last_rx + RELAY_IDLE_MS * 1000000ull, now = mono_ns();
      if (idle_at <= now) {
        /* Nothing more has come for a while: what is held would otherwise
         * wait for traffic that may never follow (the end of a stream). */
        release(r, true);
        continue;
      }
      int64_t idle = (int64_t)(idle_at - now);
      if (timeout < 0 || idle < timeout)
        timeout = idle;
    }
    struct timespec ts = {(time_t)(timeout / 1000000000), (long)(timeout % 1000000000)};
    int n_ready = ppoll(pfd, 3, timeout < 0 ? NULL : &ts, NULL);
    if (n_ready < 0 && errno != EINTR)
      break;
    if (pfd[1].revents)
      break;
    if (n_ready <= 0)
      continue;
    if (pfd[2].revents)
      relay_back(r, buf, sizeof buf);
    struct sockaddr_storage from;
    socklen_t from_len = sizeof from;
    ssize_t n = recvfrom(r->in_fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from,
                         &from_len);
    if (n < 0)
      continue;
    r->last_from = from;
    r->last_from_len = from_len;
    last_rx = mono_ns();
    __atomic_fetch_add(&r->stats.received, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&r->stats.bytes, (uint64_t)n, __ATOMIC_RELAXED);
    if (r->ntrace < RELAY_MAX_TRACE && n >= 12)
      r->trace[r->ntrace++] = (relay_trace_t){(uint16_t)(buf[2] << 8 | buf[3]),
                                              (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 |
                                                  (uint32_t)buf[6] << 8 | buf[7],
                                              false, buf[1]};
    if (r->stats.received <= r->cfg.skip_first) {
      forward(r, buf, (size_t)n);
      continue;
    }
    /* Draw all three numbers for every datagram so the pattern of one
     * impairment does not shift with the probabilities of the others. */
    double d = rnd(r), u = rnd(r), o = rnd(r), loss = r->cfg.drop;
    if (r->cfg.burst_p > 0) {
      /* a fourth number only then: patterns without bursts stay as they were */
      double g = rnd(r);
      r->bad = r->bad ? !(g < r->cfg.burst_r) : g < r->cfg.burst_p;
      if (r->bad)
        loss = r->cfg.burst_loss > 0 ? r->cfg.burst_loss : 1.0;
    }
    if (d < loss) {
      r->stats.dropped++;
      r->stats.burst_dropped += r->bad;
      if (n >= 4 && r->ndropped_seqs < RELAY_MAX_DROPS)
        r->dropped_seqs[r->ndropped_seqs++] = (uint16_t)(buf[2] << 8 | buf[3]);
      if (r->ntrace && n >= 12 && r->ntrace <= RELAY_MAX_TRACE)
        r->trace[r->ntrace - 1].dropped = true;
    } else if (o < r->cfg.reorder) {
      r->stats.reordered++;
      hold(r, buf, (size_t)n, r->stats.received + r->cfg.reorder_depth);
    } else {
      forward(r, buf, (size_t)n);
      if (u < r->cfg.dup) {
        r->stats.duplicated++;
        if (r->cfg.dup_delay == 0)
          forward(r, buf, (size_t)n);
        else
          hold(r, buf, (size_t)n, r->stats.received + r->cfg.dup_delay);
      }
    }
    release(r, false);
  }
  release(r, true);
  send_delayed(r, true);
  return NULL;
}

int relay_start(relay_t *r, const relay_config_t *cfg)
{
  memset(r, 0, sizeof(*r));
  r->cfg = *cfg;
  r->rng = cfg->seed ? cfg->seed : 1;
  r->rng_back = r->rng ^ 0x9e3779b97f4a7c15ull;
  r->in_fd = r->out_fd = r->stop_fd = -1;
  r->held = calloc(RELAY_MAX_HELD, sizeof(*r->held));
  r->dropped_seqs = calloc(RELAY_MAX_DROPS, sizeof(*r->dropped_seqs));
  r->trace = calloc(RELAY_MAX_TRACE, sizeof(*r->trace));
  if (cfg->delay_ms)
    r->delayed = calloc(RELAY_MAX_DELAYED, sizeof(*r->delayed));
  if (!r->held || !r->dropped_seqs || !r->trace || (cfg->delay_ms && !r->delayed))
    goto fail;

  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(cfg->listen_addr ? cfg->listen_addr
                                                                    : INADDR_LOOPBACK),
                          .sin_port = htons(cfg->listen_port)};
  struct sockaddr_in o = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(cfg->out_addr ? cfg->out_addr
                                                                 : INADDR_LOOPBACK),
                          .sin_port = htons(cfg->out_port)};
  socklen_t alen = sizeof a;
  int rcvbuf = cfg->rcvbuf > 0 ? cfg->rcvbuf : 8 << 20;
  r->in_fd = socket(AF_INET, SOCK_DGRAM, 0);
  r->out_fd = socket(AF_INET, SOCK_DGRAM, 0);
  r->stop_fd = eventfd(0, EFD_NONBLOCK);
  if (r->in_fd < 0 || r->out_fd < 0 || r->stop_fd < 0)
    goto fail;
  if (setsockopt(r->in_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0)
    setsockopt(r->in_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  /* a queue after the relay (a tbf on the way out) holds what it sent
   * against this socket: a small buffer would block the relay instead of
   * letting that queue drop */
  if (setsockopt(r->out_fd, SOL_SOCKET, SO_SNDBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0)
    setsockopt(r->out_fd, SOL_SOCKET, SO_SNDBUF, &rcvbuf, sizeof rcvbuf);
  if (bind(r->in_fd, (struct sockaddr *)&a, sizeof a) < 0 ||
      getsockname(r->in_fd, (struct sockaddr *)&a, &alen) < 0)
    goto fail;
  r->port = ntohs(a.sin_port);
  a.sin_addr.s_addr = htonl(cfg->to_addr ? cfg->to_addr : INADDR_LOOPBACK);
  a.sin_port = htons(cfg->to_port);
  if (((cfg->out_addr || cfg->out_port) && bind(r->out_fd, (struct sockaddr *)&o, sizeof o) < 0) ||
      connect(r->out_fd, (struct sockaddr *)&a, sizeof a) < 0)
    goto fail;
  if (pthread_create(&r->thread, NULL, run, r) != 0)
    goto fail;
  return 0;

fail:;
  int err = errno ? -errno : -ENOMEM;
  if (r->in_fd >= 0)
    close(r->in_fd);
  if (r->out_fd >= 0)
    close(r->out_fd);
  if (r->stop_fd >= 0)
    close(r->stop_fd);
  free(r->held);
  free(r->dropped_seqs);
  free(r->trace);
  free(r->delayed);
  r->held = NULL;
  r->dropped_seqs = NULL;
  r->trace = NULL;
  r->delayed = NULL;
  return err;
}

void relay_stop(relay_t *r)
{
  uint64_t one = 1;
  if (write(r->stop_fd, &one, sizeof one) != sizeof one)
    return;
  pthread_join(r->thread, NULL);
  close(r->in_fd);
  close(r->out_fd);
  close(r->stop_fd);
  free(r->held);
  free(r->dropped_seqs);
  free(r->delayed);
  r->held = NULL;
  r->dropped_seqs = NULL;
  r->delayed = NULL;
}

void relay_free(relay_t *r)
{
  free(r->trace);
  r->trace = NULL;
}
