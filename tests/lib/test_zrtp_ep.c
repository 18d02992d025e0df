/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_zrtp_ep - the ZRTP endpoint policy (lib/urtp/zrtp_ep.h): endpoints
 * wired through an in-memory network where each has its own address, on a
 * virtual clock, with SRTP media flowing between them through the keys the
 * endpoints hand out. Each test is one rule of the header: start, silent
 * restarts after timeouts, failures reported once, the peer binding (a
 * third party running an ordinary exchange is ignored and counted, the
 * real peer restarting is followed when the rule says so), Multistream,
 * the bounded cache file, and the endpoint's own thread on UDP sockets.
 */
#include "tap.h"
#include "urtp/srtp.h"
#include "urtp/zrtp.h"
#include "urtp/zrtp_ep.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* the network                                                         */
/* ------------------------------------------------------------------ */

#define MAXN 6
#define MAXQ 512
#define LATENCY_MS 5
#define MEDIA_EVERY_MS 20

typedef struct net net_t;

typedef struct node {
  net_t *net;
  int idx;
  struct sockaddr_in sa;
  urtp_zrtp_ep_t *ep;
  uint64_t rng;
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  bool blocked;                 /* what it sends is lost */
  int default_dst;              /* where packets sent to no address go */
  /* events seen */
  int ev[URTP_ZRTP_EP_EV_ERROR + 1];
  uint64_t secure_at, restarted_at;
  urtp_zrtp_ep_restart_t reason;
  urtp_zrtp_info_t failed;      /* of the last FAILED event */
  bool leader_failed;
  int info_calls_ok;            /* the endpoint was usable from its callback */
  /* ZRTP packets delivered from this node to each other node */
  unsigned sent_to[MAXN];
  /* media: SRTP to media_dst every MEDIA_EVERY_MS once it has keys */
  int media_dst;
  urtp_srtp_t tx, rx;
  int tx_serial, rx_serial;
  uint16_t seq;
  unsigned media_ok, media_bad, media_sent;
  uint64_t media_ok_at;         /* last authenticated packet received */
} node_t;

typedef struct qpkt {
  uint64_t at, order;
  int from, to;
  uint16_t len;
  uint8_t data[URTP_ZRTP_MAX_PACKET];
} qpkt_t;

struct net {
  uint64_t now, order, next_media;
  node_t n[MAXN];
  qpkt_t q[MAXQ];
  int nq;
  unsigned lost;                /* to an address nobody listens on */
  /* one-shot tamper: the first packet of this type from this node */
  int tamper_from;
  char tamper_type[9];          /* a prefix of the type */
  size_t tamper_off;
  bool tampered;
};

static uint64_t net_clock(void *user)
{
  return ((net_t *)user)->now;
}

static int node_rng(void *user, uint8_t *buf, size_t len)
{
  uint64_t *s = user;
  while (len) {
    uint64_t x = tap_rand(s);
    size_t k = len < 8 ? len : 8;
    memcpy(buf, &x, k);
    buf += k;
    len -= k;
  }
  return 0;
}

static void fix_crc(uint8_t *p, size_t len)
{
  uint32_t c = urtp_zrtp_crc32c(p, len - 4);
  for (int i = 0; i < 4; i++)
    p[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
}

static int node_by_addr(net_t *net, const struct sockaddr *to)
{
  if (!to || to->sa_family != AF_INET)
    return -1;
  const struct sockaddr_in *in = (const struct sockaddr_in *)to;
  for (int i = 0; i < MAXN; i++)
    if (net->n[i].sa.sin_port == in->sin_port && net->n[i].sa.sin_addr.s_addr == in->sin_addr.s_addr)
      return i;
  return -1;
}

static int net_send(void *user, const uint8_t *pkt, size_t len, const struct sockaddr *to,
                    socklen_t to_len)
{
  node_t *nd = user;
  net_t *net = nd->net;
  (void)to_len;
  if (nd->blocked)
    return 0;
  int dst = to ? node_by_addr(net, to) : nd->default_dst;
  if (dst < 0 || net->nq == MAXQ || len > URTP_ZRTP_MAX_PACKET) {
    net->lost++;
    return 0;
  }
  qpkt_t *q = &net->q[net->nq++];
  q->at = net->now + LATENCY_MS;
  q->order = net->order++;
  q->from = nd->idx;
  q->to = dst;
  q->len = (uint16_t)len;
  memcpy(q->data, pkt, len);
  if (!net->tampered && net->tamper_from == nd->idx && len >= 24 &&
      memcmp(pkt + 16, net->tamper_type, strlen(net->tamper_type)) == 0) {
    net->tampered = true;
    q->data[net->tamper_off] ^= 0x20;
    fix_crc(q->data, len);
  }
  return 0;
}

static void on_event(void *user, const urtp_zrtp_ep_event_t *ev)
{
  node_t *nd = user;
  nd->ev[ev->type]++;
  switch (ev->type) {
  case URTP_ZRTP_EP_EV_SECURE:
    nd->secure_at = nd->net->now;
    break;
  case URTP_ZRTP_EP_EV_FAILED:
    nd->failed = ev->info;
    nd->leader_failed = ev->leader_failed;
    break;
  case URTP_ZRTP_EP_EV_RESTARTED:
    nd->restarted_at = nd->net->now;
    nd->reason = ev->reason;
    break;
  default:
    break;
  }
  /* callbacks run without the endpoint's lock: this must not deadlock */
  urtp_zrtp_info_t info;
  urtp_zrtp_ep_counters_t c;
  urtp_zrtp_ep_get_info(nd->ep, &info);
  urtp_zrtp_ep_get_counters(nd->ep, &c);
  nd->info_calls_ok++;
}

static net_t *net_new(void)
{
  net_t *net = calloc(1, sizeof *net);
  net->tamper_from = -1;
  for (int i = 0; i < MAXN; i++) {
    node_t *nd = &net->n[i];
    nd->net = net;
    nd->idx = i;
    nd->media_dst = -1;
    nd->default_dst = -1;
    nd->sa.sin_family = AF_INET;
    nd->sa.sin_addr.s_addr = htonl(0x7f000001);
    nd->sa.sin_port = htons((uint16_t)(5000 + 1000 * i));
  }
  net->now = 1000;
  return net;
}

static void node_stop(node_t *nd)
{
  urtp_zrtp_ep_free(nd->ep);
  nd->ep = NULL;
  urtp_srtp_destroy(&nd->tx);
  urtp_srtp_destroy(&nd->rx);
}

static void net_free(net_t *net)
{
  for (int i = 0; i < MAXN; i++)
    node_stop(&net->n[i]);
  free(net);
}

typedef struct opts {
  int remote;                   /* node index a SENDER talks to */
  const char *group;
  const char *cache;
  bool fixed_zid;               /* use node->zid */
  uint8_t ka;                   /* key agreement, 0: default (EC25) */
} opts_t;

/* Creates node i's endpoint; its event and media state start afresh. */
static int node_start(net_t *net, int i, urtp_zrtp_ep_mode_t mode, const opts_t *o, uint64_t seed)
{
  node_t *nd = &net->n[i];
  node_stop(nd);
  memset(nd->ev, 0, sizeof nd->ev);
  memset(nd->sent_to, 0, sizeof nd->sent_to);
  nd->secure_at = nd->restarted_at = 0;
  nd->info_calls_ok = 0;
  nd->media_ok = nd->media_bad = nd->media_sent = 0;
  nd->tx_serial = nd->rx_serial = -1;
  nd->rng = seed * 0x9E3779B97F4A7C15ULL + 17;
  urtp_zrtp_ep_config_t c;
  memset(&c, 0, sizeof c);
  c.mode = mode;
  if (mode == URTP_ZRTP_EP_SENDER) {
    c.remote = (const struct sockaddr *)&net->n[o->remote].sa;
    c.remote_len = sizeof(struct sockaddr_in);
  }
  c.ssrc = 0x1000u + (uint32_t)i;
  c.zid = o && o->fixed_zid ? nd->zid : NULL;
  c.cache_path = o ? o->cache : NULL;
  c.group = o ? o->group : NULL;
  c.key_agreements[0] = o ? o->ka : 0;
  c.send = net_send;
  c.send_user = nd;
  c.on_event = on_event;
  c.event_user = nd;
  c.clock = net_clock;
  c.clock_user = net;
  c.rng = node_rng;
  c.rng_user = &nd->rng;
  return urtp_zrtp_ep_new(&c, &nd->ep);
}

/* One media packet from node s to its media_dst, if s has keys. */
static void media_step(net_t *net, node_t *s)
{
  node_t *d = &net->n[s->media_dst];
  if (!s->ep || !urtp_zrtp_ep_sync_srtp(s->ep, &s->tx, &s->tx_serial, true, 0x1000u + (uint32_t)s->idx, 0))
    return;
  uint8_t pkt[200 + URTP_SRTP_MAX_TRAILER];
  memset(pkt, 0, sizeof pkt);
  pkt[0] = 0x80;
  pkt[1] = 96;
  pkt[2] = (uint8_t)(s->seq >> 8);
  pkt[3] = (uint8_t)s->seq;
  s->seq++;
  pkt[8] = 0x00, pkt[9] = 0x00, pkt[10] = 0x10, pkt[11] = (uint8_t)s->idx;
  for (int k = 12; k < 200; k++)
    pkt[k] = (uint8_t)(k * 7 + s->seq);
  uint8_t plain[200];
  memcpy(plain, pkt, 200);
  int n = urtp_srtp_protect(&s->tx, pkt, 200, sizeof pkt);
  if (n < 0)
    return;
  s->media_sent++;
  if (!d->ep || s->blocked)
    return;
  if (!urtp_zrtp_ep_sync_srtp(d->ep, &d->rx, &d->rx_serial, false, 0, 1024)) {
    urtp_zrtp_ep_media_without_keys(d->ep, (const struct sockaddr *)&s->sa, sizeof s->sa);
    return;
  }
  int r = urtp_srtp_unprotect(&d->rx, pkt, (size_t)n);
  if (r == 200 && memcmp(pkt, plain, 200) == 0) {
    d->media_ok++;
    d->media_ok_at = net->now;
    urtp_zrtp_ep_peer_srtp_ok(d->ep, (const struct sockaddr *)&s->sa, sizeof s->sa);
  } else {
    d->media_bad++;
  }
}

/* Runs the network and the endpoints' timers until the virtual clock
 * reaches `until`. */
static void net_run(net_t *net, uint64_t until)
{
  for (;;) {
    uint64_t t = UINT64_MAX;
    int qi = -1;
    for (int i = 0; i < net->nq; i++)
      if (net->q[i].at < t || (net->q[i].at == t && net->q[i].order < net->q[qi].order)) {
        t = net->q[i].at;
        qi = i;
      }
    for (int i = 0; i < MAXN; i++)
      if (net->n[i].ep) {
        uint64_t e = urtp_zrtp_ep_next_timeout(net->n[i].ep);
        t = e < t ? e : t;
      }
    if (net->next_media <= net->now)
      net->next_media = net->now - net->now % MEDIA_EVERY_MS + MEDIA_EVERY_MS;
    t = net->next_media < t ? net->next_media : t;
    if (t > until) {
      net->now = until;
      return;
    }
    if (t > net->now)
      net->now = t;
    if (qi >= 0 && net->q[qi].at <= net->now) {
      qpkt_t p = net->q[qi];
      net->q[qi] = net->q[--net->nq];
      node_t *d = &net->n[p.to];
      if (d->ep) {
        net->n[p.from].sent_to[p.to]++;
        urtp_zrtp_ep_recv(d->ep, p.data, p.len, (const struct sockaddr *)&net->n[p.from].sa,
                          sizeof(struct sockaddr_in));
      } else {
        net->lost++;
      }
      continue;
    }
    for (int i = 0; i < MAXN; i++)
      if (net->n[i].ep && urtp_zrtp_ep_next_timeout(net->n[i].ep) <= net->now)
        urtp_zrtp_ep_tick(net->n[i].ep);
    if (net->next_media <= net->now) {
      for (int i = 0; i < MAXN; i++)
        if (net->n[i].media_dst >= 0)
          media_step(net, &net->n[i]);
      net->next_media = net->now + MEDIA_EVERY_MS;
    }
  }
}

static bool secure(node_t *nd)
{
  return nd->ep && urtp_zrtp_ep_is_secure(nd->ep);
}

/* Runs until nodes a and b are both secure (or the limit). */
static bool run_until_secure(net_t *net, int a, int b, uint64_t limit)
{
  while (net->now < limit && !(secure(&net->n[a]) && secure(&net->n[b])))
    net_run(net, net->now + 10);
  return secure(&net->n[a]) && secure(&net->n[b]);
}

/* a and b agreed: both SECURE, crosswise equal keys, one SAS, each the
 * other's ZID. */
static bool agreed(node_t *a, node_t *b)
{
  urtp_zrtp_keys_t ka, kb;
  urtp_zrtp_info_t ia, ib;
  if (!a->ep || !b->ep || urtp_zrtp_ep_get_keys(a->ep, &ka) || urtp_zrtp_ep_get_keys(b->ep, &kb))
    return false;
  urtp_zrtp_ep_get_info(a->ep, &ia);
  urtp_zrtp_ep_get_info(b->ep, &ib);
  return ia.state == URTP_ZRTP_SECURE && ib.state == URTP_ZRTP_SECURE &&
         ka.key_len == kb.key_len && memcmp(ka.local, kb.remote, ka.key_len) == 0 &&
         memcmp(ka.remote, kb.local, ka.key_len) == 0 && ia.sas[0] &&
         strcmp(ia.sas, ib.sas) == 0 && memcmp(ia.peer_zid, ib.zid, URTP_ZRTP_ZID_LEN) == 0 &&
         memcmp(ib.peer_zid, ia.zid, URTP_ZRTP_ZID_LEN) == 0;
}

static urtp_zrtp_ep_counters_t counters(node_t *nd)
{
  urtp_zrtp_ep_counters_t c;
  urtp_zrtp_ep_get_counters(nd->ep, &c);
  return c;
}

static void peer_zid_of(node_t *nd, uint8_t out[URTP_ZRTP_ZID_LEN])
{
  urtp_zrtp_info_t i;
  urtp_zrtp_ep_get_info(nd->ep, &i);
  memcpy(out, i.peer_zid, URTP_ZRTP_ZID_LEN);
}

static void zid_of(node_t *nd, uint8_t out[URTP_ZRTP_ZID_LEN])
{
  urtp_zrtp_info_t i;
  urtp_zrtp_ep_get_info(nd->ep, &i);
  memcpy(out, i.zid, URTP_ZRTP_ZID_LEN);
}

enum { A = 0, B = 1, C = 2, A2 = 3 };

/* A (sender, at its own address) and B (receiver) secure, media A -> B. */
static net_t *secure_pair(void)
{
  net_t *net = net_new();
  opts_t oa = { .remote = B };
  if (node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) || node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1)) {
    net_free(net);
    return NULL;
  }
  net->n[A].media_dst = B;
  if (!run_until_secure(net, A, B, net->now + 5000)) {
    net_free(net);
    return NULL;
  }
  net_run(net, net->now + 200);
  return net;
}

/* ------------------------------------------------------------------ */
/* start, keys                                                         */
/* ------------------------------------------------------------------ */

/* A sender starts at once, a receiver answers: both SECURE with one SAS,
 * the keys the media path gets carry media one way, and each side's
 * counters match what the other sent. */
static void test_secure_pair(void)
{
  net_t *net = net_new();
  opts_t oa = { .remote = B };
  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) == 0);
  /* a receiver waits for the peer */
  CHECK_EQ(urtp_zrtp_ep_next_timeout(net->n[B].ep), UINT64_MAX);
  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
  CHECK_EQ(urtp_zrtp_ep_next_timeout(net->n[A].ep), net->now);
  int serial_a = urtp_zrtp_ep_serial(net->n[A].ep);
  net->n[A].media_dst = B;
  REQUIRE(run_until_secure(net, A, B, net->now + 5000));
  CHECK(agreed(&net->n[A], &net->n[B]));
  CHECK(urtp_zrtp_ep_serial(net->n[A].ep) != serial_a);
  net_run(net, net->now + 1000);
  CHECK(net->n[B].media_ok >= 45);
  CHECK_EQ(net->n[B].media_bad, 0);
  CHECK_EQ(net->n[B].media_ok, net->n[A].media_sent);
  for (int i = 0; i < 2; i++) {
    node_t *nd = &net->n[i], *o = &net->n[1 - i];
    urtp_zrtp_ep_counters_t c = counters(nd), co = counters(o);
    CHECK_EQ(nd->ev[URTP_ZRTP_EP_EV_SECURE], 1);
    CHECK_EQ(nd->ev[URTP_ZRTP_EP_EV_FAILED], 0);
    CHECK_EQ(c.restarts, 0);
    CHECK_EQ(c.foreign, 0);
    CHECK_EQ(c.received, o->sent_to[i]);
    CHECK_EQ(co.sent, o->sent_to[i]);
    CHECK(nd->info_calls_ok > 0);
  }
  urtp_zrtp_ep_peer_t p;
  urtp_zrtp_ep_get_peer(net->n[B].ep, &p);
  CHECK(p.have_addr && p.have_zid && p.alive);
  CHECK(((struct sockaddr_in *)&p.addr)->sin_port == net->n[A].sa.sin_port);
  net_free(net);
}

/* A DUPLEX endpoint starts on begin() with that SSRC, or start_delay_ms
 * after the peer's first packet. */
static void test_duplex_start(void)
{
  net_t *net = net_new();
  urtp_zrtp_ep_config_t c;
  for (int i = 0; i < 2; i++) {
    node_t *nd = &net->n[i];
    memset(&c, 0, sizeof c);
    c.mode = URTP_ZRTP_EP_DUPLEX;
    c.start_delay_ms = 200;
    c.send = net_send;
    c.send_user = nd;
    c.on_event = on_event;
    c.event_user = nd;
    c.clock = net_clock;
    c.clock_user = net;
    c.rng = node_rng;
    nd->rng = 77 + (uint64_t)i;
    c.rng_user = &nd->rng;
    REQUIRE(urtp_zrtp_ep_new(&c, &nd->ep) == 0);
  }
  net->n[A].default_dst = B;
  net->n[B].default_dst = A;
  net_run(net, net->now + 1000);
  CHECK_EQ(counters(&net->n[A]).sent, 0);
  uint64_t t0 = net->now;
  urtp_zrtp_ep_begin(net->n[A].ep, 0xabcd1234u);
  /* B hears A's Hello 5 ms later and starts 200 ms after that */
  net_run(net, t0 + 5 + 199);
  CHECK(counters(&net->n[A]).sent > 0);
  CHECK_EQ(counters(&net->n[B]).sent, 0);
  REQUIRE(run_until_secure(net, A, B, t0 + 3000));
  CHECK(agreed(&net->n[A], &net->n[B]));
  urtp_zrtp_info_t ia;
  urtp_zrtp_ep_get_info(net->n[A].ep, &ia);
  urtp_zrtp_info_t ib;
  urtp_zrtp_ep_get_info(net->n[B].ep, &ib);
  CHECK_EQ(ib.peer_ssrc, 0xabcd1234u);
  net_free(net);
}

/* ------------------------------------------------------------------ */
/* timeouts and failures                                               */
/* ------------------------------------------------------------------ */

/* A sender without a peer: each Hello phase times out and a fresh session
 * follows, silently, counted; the peer turning up later gets secure. */
static void test_timeouts_restart_silently(void)
{
  net_t *net = net_new();
  opts_t oa = { .remote = B };
  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
  net_run(net, net->now + 20000);
  node_t *a = &net->n[A];
  urtp_zrtp_ep_counters_t c = counters(a);
  CHECK(c.restarts >= 4);
  CHECK_EQ(a->ev[URTP_ZRTP_EP_EV_RESTARTED], (int)c.restarts);
  CHECK_EQ(a->reason, URTP_ZRTP_EP_RESTART_TIMEOUT);
  CHECK_EQ(a->ev[URTP_ZRTP_EP_EV_FAILED], 0);
  /* 21 Hellos per session (the first and 20 retransmissions) */
  CHECK(c.sent >= 21 * c.restarts && c.sent <= 21 * (c.restarts + 1));
  CHECK_EQ(c.sent, net->lost);
  urtp_zrtp_info_t i;
  urtp_zrtp_ep_get_info(a->ep, &i);
  CHECK_EQ(i.state, URTP_ZRTP_DISCOVERY);

  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) == 0);
  REQUIRE(run_until_secure(net, A, B, net->now + 5000));
  CHECK(agreed(a, &net->n[B]));
  CHECK_EQ(a->ev[URTP_ZRTP_EP_EV_FAILED], 0);
  net_free(net);
}

/* A receiver whose peer vanishes mid-exchange gives up silently and waits;
 * the peer's next exchange is answered and counted as a restart. */
static void test_receiver_timeout_waits(void)
{
  net_t *net = net_new();
  opts_t oa = { .remote = B, .fixed_zid = true };
  memcpy(net->n[A].zid, "peer-A-zid-1", 12);
  net->tamper_from = -1;
  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) == 0);
  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
  net_run(net, net->now + 6);   /* B has A's Hello */
  node_stop(&net->n[A]);
  net_run(net, net->now + 20000);
  node_t *b = &net->n[B];
  urtp_zrtp_info_t i;
  urtp_zrtp_ep_get_info(b->ep, &i);
  CHECK_EQ(i.state, URTP_ZRTP_FAILED);
  CHECK_EQ(i.error, URTP_ZRTP_ERR_TIMEOUT);
  CHECK_EQ(b->ev[URTP_ZRTP_EP_EV_FAILED], 0);
  CHECK_EQ(counters(b).restarts, 0);
  /* nothing more is sent once given up */
  uint64_t sent = counters(b).sent;
  net_run(net, net->now + 5000);
  CHECK_EQ(counters(b).sent, sent);

  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 3) == 0);
  REQUIRE(run_until_secure(net, A, B, net->now + 5000));
  CHECK(agreed(&net->n[A], b));
  CHECK_EQ(counters(b).restarts, 1);
  CHECK_EQ(b->reason, URTP_ZRTP_EP_RESTART_PEER);
  net_free(net);
}

/* A real failure (a DH value changed on the way) is reported once on each
 * side, and nothing starts over by itself. */
static void test_failure_reported_once(void)
{
  net_t *net = net_new();
  opts_t oa = { .remote = B };
  net->tamper_from = A;
  memcpy(net->tamper_type, "DHPart", 7);
  net->tamper_off = 12 + 76 + 5;  /* into pvi */
  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) == 0);
  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
  net_run(net, net->now + 30000);
  CHECK(net->tampered);
  for (int k = 0; k < 2; k++) {
    node_t *nd = &net->n[k];
    CHECK_EQ(nd->ev[URTP_ZRTP_EP_EV_FAILED], 1);
    CHECK_EQ(nd->ev[URTP_ZRTP_EP_EV_SECURE], 0);
    /* the changed DH value breaks the hvi or the value itself */
    CHECK(nd->failed.error == URTP_ZRTP_ERR_HVI || nd->failed.error == URTP_ZRTP_ERR_BAD_DH);
    CHECK_EQ(nd->failed.error, net->n[1 - k].failed.error);
    CHECK_EQ(counters(nd).restarts, 0);
    CHECK(!nd->leader_failed);
    urtp_zrtp_keys_t k2;
    CHECK_EQ(urtp_zrtp_ep_get_keys(nd->ep, &k2), -EAGAIN);
  }
  CHECK(net->n[A].failed.error_from_peer != net->n[B].failed.error_from_peer);
  net_free(net);
}

/* ------------------------------------------------------------------ */
/* the peer binding                                                    */
/* ------------------------------------------------------------------ */

/* A third party at its own address runs an ordinary exchange (it is a
 * ZRTP sender like any other) against a SECURE receiver whose peer keeps
 * sending media: every one of its packets is ignored and counted, the
 * receiver never answers it, its keys stay and the media keeps flowing.
 * Also when the third party claims the real peer's ZID. */
static void test_third_party_vs_receiver(void)
{
  for (int claim = 0; claim < 2; claim++) {
    net_t *net = secure_pair();
    REQUIRE(net);
    node_t *b = &net->n[B], *c = &net->n[C];
    urtp_zrtp_keys_t before, after;
    REQUIRE(urtp_zrtp_ep_get_keys(b->ep, &before) == 0);
    int serial = urtp_zrtp_ep_serial(b->ep);
    unsigned media = b->media_ok;
    opts_t oc = { .remote = B, .fixed_zid = claim == 1 };
    if (claim)
      zid_of(&net->n[A], c->zid);
    REQUIRE(node_start(net, C, URTP_ZRTP_EP_SENDER, &oc, 3) == 0);
    net_run(net, net->now + 12000);
    urtp_zrtp_ep_counters_t cb = counters(b);
    CHECK(c->sent_to[B] >= 60);   /* three Hello phases at least */
    CHECK_EQ(cb.foreign, c->sent_to[B]);
    CHECK_EQ(b->sent_to[C], 0);
    CHECK_EQ(counters(c).received, 0);
    CHECK(!secure(c));
    CHECK(secure(b));
    CHECK_EQ(urtp_zrtp_ep_serial(b->ep), serial);
    REQUIRE(urtp_zrtp_ep_get_keys(b->ep, &after) == 0);
    CHECK_MEM(before.remote, after.remote, before.key_len);
    CHECK(agreed(&net->n[A], b));
    uint8_t pz[12], az[12];
    peer_zid_of(b, pz);
    zid_of(&net->n[A], az);
    CHECK_MEM(pz, az, 12);
    CHECK(b->media_ok - media >= 590);
    CHECK_EQ(b->media_bad, 0);
    CHECK_EQ(cb.restarts, 0);
    CHECK_EQ(b->ev[URTP_ZRTP_EP_EV_SECURE], 1);
    net_free(net);
  }
}

/* The same against the SECURE sender, whose peer (a receiver) says
 * nothing once secure: a sender only ever talks to its remote. */
static void test_third_party_vs_sender(void)
{
  net_t *net = secure_pair();
  REQUIRE(net);
  node_t *a = &net->n[A], *b = &net->n[B], *c = &net->n[C];
  urtp_zrtp_keys_t before, after;
  REQUIRE(urtp_zrtp_ep_get_keys(a->ep, &before) == 0);
  unsigned media = b->media_ok;
  opts_t oc = { .remote = A };
  REQUIRE(node_start(net, C, URTP_ZRTP_EP_SENDER, &oc, 3) == 0);
  net_run(net, net->now + 12000);
  urtp_zrtp_ep_counters_t ca = counters(a);
  CHECK(c->sent_to[A] >= 60);
  CHECK_EQ(ca.foreign, c->sent_to[A]);
  CHECK_EQ(a->sent_to[C], 0);
  CHECK(!secure(c));
  CHECK(secure(a));
  REQUIRE(urtp_zrtp_ep_get_keys(a->ep, &after) == 0);
  CHECK_MEM(before.local, after.local, before.key_len);
  CHECK(agreed(a, b));
  CHECK(b->media_ok - media >= 590);
  CHECK_EQ(b->media_bad, 0);
  CHECK_EQ(ca.restarts, 0);
  urtp_zrtp_ep_peer_t p;
  urtp_zrtp_ep_get_peer(a->ep, &p);
  CHECK(!p.alive);  /* the receiver has been silent: still bound */
  net_free(net);
}

/* The real sender restarts on another port (a new ZID, no cache): its
 * exchange is ignored while the old one's media was heard within
 * peer_timeout, and followed after that. */
static void test_peer_restart_new_address(void)
{
  net_t *net = secure_pair();
  REQUIRE(net);
  node_t *b = &net->n[B];
  uint64_t last_media = b->media_ok_at;
  node_stop(&net->n[A]);
  net->n[A].media_dst = -1;
  net_run(net, net->now + 100);
  opts_t o2 = { .remote = B };
  REQUIRE(node_start(net, A2, URTP_ZRTP_EP_SENDER, &o2, 9) == 0);
  net->n[A2].media_dst = B;
  net_run(net, last_media + URTP_ZRTP_EP_PEER_TIMEOUT_MS - 1);
  CHECK(counters(b).foreign > 0);
  CHECK_EQ(counters(b).foreign, net->n[A2].sent_to[B]);
  CHECK_EQ(counters(b).restarts, 0);
  CHECK(secure(b));
  REQUIRE(run_until_secure(net, A2, B, net->now + 5000));
  CHECK(agreed(&net->n[A2], b));
  CHECK_EQ(counters(b).restarts, 1);
  CHECK(b->restarted_at >= last_media + URTP_ZRTP_EP_PEER_TIMEOUT_MS);
  CHECK(b->restarted_at < last_media + URTP_ZRTP_EP_PEER_TIMEOUT_MS + 300);
  net_run(net, net->now + 500);
  CHECK(net->n[B].media_ok > 0);
  urtp_zrtp_ep_peer_t p;
  urtp_zrtp_ep_get_peer(b->ep, &p);
  CHECK(((struct sockaddr_in *)&p.addr)->sin_port == net->n[A2].sa.sin_port);
  net_free(net);
}

/* The bound peer starts over from its own address: with its ZID it is
 * followed at once, though its media was heard a moment ago; with another
 * ZID only after peer_timeout of silence. */
static void test_peer_starts_over(void)
{
  for (int same_zid = 1; same_zid >= 0; same_zid--) {
    net_t *net = net_new();
    opts_t oa = { .remote = B, .fixed_zid = true };
    memcpy(net->n[A].zid, "peer-A-zid-1", 12);
    REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) == 0);
    REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
    net->n[A].media_dst = B;
    REQUIRE(run_until_secure(net, A, B, net->now + 5000));
    net_run(net, net->now + 500);
    node_t *b = &net->n[B];
    urtp_zrtp_keys_t before, after;
    REQUIRE(urtp_zrtp_ep_get_keys(b->ep, &before) == 0);
    uint64_t last_media = b->media_ok_at;
    /* the same address, a new session */
    if (!same_zid)
      memcpy(net->n[A].zid, "peer-A-zid-2", 12);
    REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 5) == 0);
    uint64_t t1 = net->now;
    REQUIRE(run_until_secure(net, A, B, net->now + 6000));
    CHECK(agreed(&net->n[A], b));
    CHECK_EQ(counters(b).restarts, 1);
    REQUIRE(urtp_zrtp_ep_get_keys(b->ep, &after) == 0);
    CHECK(memcmp(before.remote, after.remote, before.key_len) != 0);
    if (same_zid) {
      CHECK(b->restarted_at < t1 + 100);
      CHECK_EQ(counters(b).foreign, 0);
    } else {
      CHECK(b->restarted_at >= last_media + URTP_ZRTP_EP_PEER_TIMEOUT_MS);
      CHECK(counters(b).foreign > 0);
    }
    net_free(net);
  }
}

/* A receiver in the middle of an exchange with one address ignores the
 * others (counted) while that peer is alive; when the peer vanishes, the
 * next one may start after peer_timeout. */
static void test_receiver_mid_exchange(void)
{
  for (int vanish = 0; vanish < 2; vanish++) {
    net_t *net = net_new();
    opts_t oa = { .remote = B }, oc = { .remote = B };
    REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) == 0);
    REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
    net->n[A].media_dst = B;
    net_run(net, net->now + 6);   /* B answers A's Hello */
    if (vanish)
      node_stop(&net->n[A]);
    uint64_t t_a = net->now;
    REQUIRE(node_start(net, C, URTP_ZRTP_EP_SENDER, &oc, 3) == 0);
    node_t *b = &net->n[B], *c = &net->n[C];
    if (!vanish) {
      REQUIRE(run_until_secure(net, A, B, net->now + 5000));
      net_run(net, net->now + 3000);
      CHECK(agreed(&net->n[A], b));
      CHECK(c->sent_to[B] > 0);
      CHECK_EQ(counters(b).foreign, c->sent_to[B]);
      CHECK_EQ(b->sent_to[C], 0);
      CHECK(!secure(c));
    } else {
      REQUIRE(run_until_secure(net, C, B, net->now + 6000));
      CHECK(agreed(c, b));
      CHECK(counters(b).foreign > 0);
      CHECK(b->restarted_at >= t_a + URTP_ZRTP_EP_PEER_TIMEOUT_MS - LATENCY_MS);
    }
    net_free(net);
  }
}

/* A packet whose CRC fails neither binds nor starts anything (a stray
 * datagram before the real peer's Hello); not-ZRTP bytes are counted as
 * bad too. */
static void test_garbage_does_not_bind(void)
{
  for (int mode = URTP_ZRTP_EP_RECEIVER; mode <= URTP_ZRTP_EP_DUPLEX; mode++) {
    net_t *net = net_new();
    REQUIRE(node_start(net, B, (urtp_zrtp_ep_mode_t)mode, NULL, 2) == 0);
    node_t *b = &net->n[B];
    /* a Hello of C's, its CRC broken */
    opts_t oc = { .remote = B };
    REQUIRE(node_start(net, C, URTP_ZRTP_EP_SENDER, &oc, 3) == 0);
    net->tamper_from = C;
    memcpy(net->tamper_type, "Hello", 6);
    net->tamper_off = 40;
    net->n[C].blocked = false;
    net_run(net, net->now + 1);
    REQUIRE(net->nq == 1);
    net->q[0].data[net->q[0].len - 1] ^= 1;  /* after the CRC fix */
    node_stop(&net->n[C]);
    net_run(net, net->now + 10);
    uint8_t junk[8] = { 0x10, 0, 0, 0, 'Z', 'R', 'T', 'P' };
    urtp_zrtp_ep_recv(b->ep, junk, sizeof junk, (struct sockaddr *)&net->n[C].sa, sizeof net->n[C].sa);
    urtp_zrtp_ep_counters_t cb = counters(b);
    CHECK_EQ(cb.received, 2);
    CHECK_EQ(cb.bad, 2);
    CHECK_EQ(cb.sent, 0);
    CHECK_EQ(urtp_zrtp_ep_next_timeout(b->ep), UINT64_MAX);
    urtp_zrtp_ep_peer_t p;
    urtp_zrtp_ep_get_peer(b->ep, &p);
    CHECK(!p.have_addr && !p.alive);
    /* the real peer's exchange goes through at once */
    opts_t oa = { .remote = B };
    REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
    CHECK(run_until_secure(net, A, B, net->now + 1000));
    CHECK_EQ(counters(b).foreign, 0);
    net_free(net);
  }
}

/* A receiver restarts while the sender keeps its keys: the sender's media
 * without keys starts a new exchange towards it, and the sender, its
 * peer silent since it went secure, follows the new ZID. */
static void test_receiver_restart_media(void)
{
  net_t *net = secure_pair();
  REQUIRE(net);
  node_stop(&net->n[B]);
  net_run(net, net->now + 300);
  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 8) == 0);
  net_run(net, net->now + 100);
  /* B restarted: A's media without keys made it start an exchange */
  CHECK(counters(&net->n[B]).sent > 0);
  REQUIRE(run_until_secure(net, A, B, net->now + 6000));
  net_run(net, net->now + 200);
  CHECK(agreed(&net->n[A], &net->n[B]));
  CHECK_EQ(counters(&net->n[A]).restarts, 1);
  CHECK_EQ(counters(&net->n[B]).restarts, 0);
  CHECK(net->n[B].media_ok > 0);
  net_free(net);
}

/* ------------------------------------------------------------------ */
/* Multistream                                                         */
/* ------------------------------------------------------------------ */

/* Two streams per side in one group: the first does DH, the second waits
 * and joins in Multistream mode with the same SAS. */
static void test_multistream_join(void)
{
  net_t *net = net_new();
  /* A and C send to B and A2; B and A2 receive */
  opts_t oa = { .remote = B, .group = "mjoin" }, oc = { .remote = A2, .group = "mjoin" };
  opts_t ob = { .group = "mjoin" };
  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, &ob, 2) == 0);
  REQUIRE(node_start(net, A2, URTP_ZRTP_EP_RECEIVER, &ob, 4) == 0);
  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
  net_run(net, net->now + 1);
  REQUIRE(node_start(net, C, URTP_ZRTP_EP_SENDER, &oc, 3) == 0);
  net_run(net, net->now + 2);
  /* the second waits for the first: nothing sent yet */
  CHECK_EQ(counters(&net->n[C]).sent, 0);
  REQUIRE(run_until_secure(net, A, B, net->now + 5000));
  REQUIRE(run_until_secure(net, C, A2, net->now + 5000));
  CHECK(agreed(&net->n[A], &net->n[B]));
  CHECK(agreed(&net->n[C], &net->n[A2]));
  urtp_zrtp_info_t i1, i2;
  urtp_zrtp_ep_get_info(net->n[A].ep, &i1);
  urtp_zrtp_ep_get_info(net->n[C].ep, &i2);
  CHECK(!i1.multistream && i2.multistream);
  CHECK_EQ(strcmp(i2.key_agreement, "Mult"), 0);
  CHECK_EQ(strcmp(i1.sas, i2.sas), 0);
  CHECK_MEM(i1.zid, i2.zid, 12);
  net_free(net);
}

/* The group's first stream fails for real: the waiting one fails with its
 * error, once, flagged, having sent nothing. */
static void test_multistream_leader_fails(void)
{
  net_t *net = net_new();
  opts_t oa = { .remote = B, .group = "mfail" }, oc = { .remote = A2, .group = "mfail" };
  net->tamper_from = A;
  memcpy(net->tamper_type, "DHPart", 7);
  net->tamper_off = 12 + 76 + 5;
  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, NULL, 2) == 0);
  REQUIRE(node_start(net, A2, URTP_ZRTP_EP_RECEIVER, NULL, 4) == 0);
  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
  REQUIRE(node_start(net, C, URTP_ZRTP_EP_SENDER, &oc, 3) == 0);
  net_run(net, net->now + 10000);
  node_t *c = &net->n[C];
  CHECK_EQ(net->n[A].ev[URTP_ZRTP_EP_EV_FAILED], 1);
  CHECK_EQ(c->ev[URTP_ZRTP_EP_EV_FAILED], 1);
  CHECK(c->leader_failed);
  CHECK(c->failed.error != 0 && c->failed.error != URTP_ZRTP_ERR_TIMEOUT);
  CHECK_EQ(c->failed.error, net->n[A].failed.error);
  CHECK_EQ(counters(c).sent, 0);
  urtp_zrtp_info_t i;
  urtp_zrtp_ep_get_info(c->ep, &i);
  CHECK_EQ(i.state, URTP_ZRTP_FAILED);
  CHECK_EQ(urtp_zrtp_ep_next_timeout(c->ep), UINT64_MAX);
  net_free(net);
}

/* ------------------------------------------------------------------ */
/* the cache file                                                      */
/* ------------------------------------------------------------------ */

static char g_dir[64];

static void write_cache(const char *path, size_t n, uint32_t tag)
{
  FILE *f = fopen(path, "w");
  fputs("urtp-zrtp-cache 1\nzid 0102030405060708090a0b0c\n", f);
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "peer %08x%016zx ", tag, i);
    for (int k = 0; k < 32; k++)
      fprintf(f, "%02x", (unsigned)((i * 31 + (size_t)k) & 0xff));
    fputs(" - 0\n", f);
  }
  fclose(f);
}

/* The peer lines' ZIDs, in file order. */
static size_t read_peers(const char *path, char (*zids)[25], size_t max)
{
  FILE *f = fopen(path, "r");
  char line[512];
  size_t n = 0;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "peer ", 5) == 0) {
      if (n < max) {
        memcpy(zids[n], line + 5, 24);
        zids[n][24] = 0;
      }
      n++;
    }
  if (f)
    fclose(f);
  return n;
}

/* A full cache stays full: each new peer pushes out the least recently
 * used, and a peer seen again moves to the end. */
static void test_cache_bounded(void)
{
  snprintf(g_dir, sizeof g_dir, "/tmp/zrtp-ep-XXXXXX");
  REQUIRE(mkdtemp(g_dir) != NULL);
  char path[128];
  snprintf(path, sizeof path, "%s/b.cache", g_dir);
  const size_t max = URTP_ZRTP_CACHE_MAX_PEERS;
  write_cache(path, max - 2, 0xc0ffee00);
  char(*zids)[25] = calloc(max + 8, sizeof *zids);
  REQUIRE(read_peers(path, zids, max + 8) == max - 2);
  char old0[25], old1[25], old2[25], old3[25];
  memcpy(old0, zids[0], 25);
  memcpy(old1, zids[1], 25);
  memcpy(old2, zids[2], 25);
  memcpy(old3, zids[3], 25);

  /* peer 0 of the file is used again, then five new peers */
  for (int k = 0; k < 6; k++) {
    net_t *net = net_new();
    opts_t oa = { .remote = B, .fixed_zid = true };
    opts_t ob = { .cache = path };
    if (k == 0) {
      for (int j = 0; j < 12; j++)
        sscanf(old0 + 2 * j, "%2hhx", &net->n[A].zid[j]);
    } else {
      memcpy(net->n[A].zid, "new-peer-00", 11);
      net->n[A].zid[11] = (uint8_t)k;
    }
    REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, &ob, 2 + (uint64_t)k) == 0);
    REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 100 + (uint64_t)k) == 0);
    CHECK(run_until_secure(net, A, B, net->now + 5000));
    net_free(net);
  }
  size_t n = read_peers(path, zids, max + 8);
  CHECK_EQ(n, max);
  bool have0 = false, have1 = false, have2 = false, have3 = false, have4 = false;
  for (size_t i = 0; i < n && i < max; i++) {
    have0 |= strcmp(zids[i], old0) == 0;
    have1 |= strcmp(zids[i], old1) == 0;
    have2 |= strcmp(zids[i], old2) == 0;
    have3 |= strcmp(zids[i], old3) == 0;
    have4 |= strcmp(zids[i], "6e65772d706565722d303005") == 0;
  }
  /* 998 + 5 new = 1003: the three least recently used (1, 2, 3) went;
   * 0 was used again */
  CHECK(have0 && !have1 && !have2 && !have3 && have4);
  CHECK_EQ(strcmp(zids[n - 1], "6e65772d706565722d303005"), 0);
  CHECK_EQ(strcmp(zids[n - 6], old0), 0);
  free(zids);
  unlink(path);
}

static double seconds_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reading a cache costs time linear in its size, even one far larger than
 * the bound (written by hand or by an older version): eight times the
 * peers, not sixty-four times the time. */
static void no_send(void *user, const uint8_t *pkt, size_t len)
{
  (void)user, (void)pkt, (void)len;
}

static double time_read(const char *path)
{
  double best = 1e9;
  for (int r = 0; r < 3; r++) {
    urtp_zrtp_config_t c;
    memset(&c, 0, sizeof c);
    c.cache_path = path;
    c.send = no_send;
    urtp_zrtp_t *z = NULL;
    double t0 = seconds_now();
    int rc = urtp_zrtp_new(&c, &z);
    double t = seconds_now() - t0;
    urtp_zrtp_free(z);
    if (rc != 0)
      return -1;
    best = t < best ? t : best;
  }
  return best;
}

static void test_cache_read_linear(void)
{
  char small[128], large[128];
  snprintf(small, sizeof small, "%s/small.cache", g_dir);
  snprintf(large, sizeof large, "%s/large.cache", g_dir);
  write_cache(small, 8000, 1);
  write_cache(large, 64000, 2);
  double ts = time_read(small), tl = time_read(large);
  printf("# read %d peers: %.1f ms, %d peers: %.1f ms\n", 8000, ts * 1e3, 64000, tl * 1e3);
  REQUIRE(ts > 0 && tl > 0);
  CHECK(tl < 24 * ts + 0.005);
  CHECK(tl < 3.0);
  /* and the next write keeps the bound */
  net_t *net = net_new();
  opts_t oa = { .remote = B };
  opts_t ob = { .cache = large };
  REQUIRE(node_start(net, B, URTP_ZRTP_EP_RECEIVER, &ob, 2) == 0);
  REQUIRE(node_start(net, A, URTP_ZRTP_EP_SENDER, &oa, 1) == 0);
  CHECK(run_until_secure(net, A, B, net->now + 5000));
  net_free(net);
  CHECK_EQ(read_peers(large, NULL, 0), URTP_ZRTP_CACHE_MAX_PEERS);
  unlink(small);
  unlink(large);
  rmdir(g_dir);
}

/* ------------------------------------------------------------------ */
/* the thread, on real sockets                                         */
/* ------------------------------------------------------------------ */

typedef struct rxside {
  int fd;
  urtp_zrtp_ep_t *ep;
  volatile int stop;
} rxside_t;

/* What uvgrtpsrc's streaming thread does: ZRTP from its socket to the
 * endpoint. */
static void *rx_thread(void *arg)
{
  rxside_t *r = arg;
  uint8_t buf[2048];
  while (!r->stop) {
    struct pollfd p = { r->fd, POLLIN, 0 };
    if (poll(&p, 1, 20) <= 0)
      continue;
    struct sockaddr_storage from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(r->fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
    if (n > 0 && urtp_zrtp_is_zrtp(buf, (size_t)n))
      urtp_zrtp_ep_recv(r->ep, buf, (size_t)n, (struct sockaddr *)&from, fl);
  }
  return NULL;
}

static int udp_socket(struct sockaddr_in *a)
{
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  socklen_t al = sizeof *a;
  memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof *a) || getsockname(fd, (struct sockaddr *)a, &al))
    return -1;
  return fd;
}

typedef struct tevents {
  pthread_mutex_t lock;
  int secure;
  pthread_t thread;
  bool other_thread;
} tevents_t;

static void t_event(void *user, const urtp_zrtp_ep_event_t *ev)
{
  tevents_t *t = user;
  pthread_mutex_lock(&t->lock);
  if (ev->type == URTP_ZRTP_EP_EV_SECURE)
    t->secure++;
  /* the media path never runs callbacks while the thread runs */
  if (pthread_equal(pthread_self(), t->thread))
    t->other_thread = true;
  pthread_mutex_unlock(&t->lock);
}

static void test_thread_udp(void)
{
  struct sockaddr_in sa, sb;
  int fa = udp_socket(&sa), fb = udp_socket(&sb);
  REQUIRE(fa >= 0 && fb >= 0);
  tevents_t ta, tb;
  memset(&ta, 0, sizeof ta);
  memset(&tb, 0, sizeof tb);
  pthread_mutex_init(&ta.lock, NULL);
  pthread_mutex_init(&tb.lock, NULL);
  urtp_zrtp_ep_t *a = NULL, *b = NULL;
  urtp_zrtp_ep_config_t c;
  memset(&c, 0, sizeof c);
  c.mode = URTP_ZRTP_EP_RECEIVER;
  c.ssrc = 2;
  c.send = urtp_zrtp_ep_send_udp;
  c.send_user = URTP_ZRTP_EP_FD(fb);
  c.on_event = t_event;
  c.event_user = &tb;
  REQUIRE(urtp_zrtp_ep_new(&c, &b) == 0);
  c.mode = URTP_ZRTP_EP_SENDER;
  c.remote = (struct sockaddr *)&sb;
  c.remote_len = sizeof sb;
  c.ssrc = 1;
  c.send_user = URTP_ZRTP_EP_FD(fa);
  c.event_user = &ta;
  REQUIRE(urtp_zrtp_ep_new(&c, &a) == 0);
  rxside_t r = { fb, b, 0 };
  pthread_t rt;
  tb.thread = ta.thread = pthread_self();
  REQUIRE(pthread_create(&rt, NULL, rx_thread, &r) == 0);
  pthread_mutex_lock(&tb.lock);
  tb.thread = rt;
  pthread_mutex_unlock(&tb.lock);
  CHECK_EQ(urtp_zrtp_ep_start(b, -1), 0);
  CHECK_EQ(urtp_zrtp_ep_start(a, fa), 0);
  CHECK_EQ(urtp_zrtp_ep_start(a, fa), -EALREADY);
  for (int i = 0; i < 500 && !(urtp_zrtp_ep_is_secure(a) && urtp_zrtp_ep_is_secure(b)); i++)
    usleep(10000);
  CHECK(urtp_zrtp_ep_is_secure(a) && urtp_zrtp_ep_is_secure(b));
  urtp_zrtp_keys_t ka, kb;
  CHECK(urtp_zrtp_ep_get_keys(a, &ka) == 0 && urtp_zrtp_ep_get_keys(b, &kb) == 0 &&
        memcmp(ka.local, kb.remote, ka.key_len) == 0);
  /* What else reaches the sender's socket is read, dropped and counted:
   * RTP or RTCP from the peer, stray datagrams, and too long ones. */
  urtp_zrtp_ep_counters_t before, after;
  usleep(50000);
  urtp_zrtp_ep_get_counters(a, &before);
  static uint8_t junk[URTP_ZRTP_MAX_PACKET + 100];
  for (int k = 0; k < 6; k++) {
    size_t len = k == 5 ? sizeof junk : 12 + 20 * (size_t)k;
    memset(junk, 0x5a, len);
    junk[0] = k < 4 ? 0x80 : 0x00;   /* RTP/RTCP-like, then not even that */
    junk[1] = k == 3 ? 200 : 96;     /* one RTCP sender report */
    CHECK_EQ(sendto(fb, junk, len, 0, (struct sockaddr *)&sa, sizeof sa), (ssize_t)len);
  }
  for (int k = 0; k < 100; k++) {
    urtp_zrtp_ep_get_counters(a, &after);
    if (after.discarded >= before.discarded + 6)
      break;
    usleep(10000);
  }
  CHECK_EQ(after.discarded - before.discarded, 6);
  CHECK_EQ(after.received, before.received);
  CHECK_EQ(after.bad, before.bad);
  CHECK(urtp_zrtp_ep_is_secure(a));
  r.stop = 1;
  pthread_join(rt, NULL);
  urtp_zrtp_ep_stop(a);
  urtp_zrtp_ep_stop(b);
  CHECK_EQ(ta.secure, 1);
  CHECK_EQ(tb.secure, 1);
  CHECK(!tb.other_thread);
  urtp_zrtp_ep_get_counters(b, &after);
  CHECK_EQ(after.discarded, 0);   /* a receiver reads no socket */
  /* stopped: the last state stays readable, nothing more happens */
  urtp_zrtp_info_t i;
  urtp_zrtp_ep_get_info(a, &i);
  CHECK_EQ(i.state, URTP_ZRTP_SECURE);
  CHECK(!urtp_zrtp_ep_is_secure(a));
  urtp_zrtp_ep_free(a);
  urtp_zrtp_ep_free(b);
  close(fa);
  close(fb);
}

int main(void)
{
  TAP_RUN(test_secure_pair);
  TAP_RUN(test_duplex_start);
  TAP_RUN(test_timeouts_restart_silently);
  TAP_RUN(test_receiver_timeout_waits);
  TAP_RUN(test_failure_reported_once);
  TAP_RUN(test_third_party_vs_receiver);
  TAP_RUN(test_third_party_vs_sender);
  TAP_RUN(test_peer_restart_new_address);
  TAP_RUN(test_peer_starts_over);
  TAP_RUN(test_receiver_mid_exchange);
  TAP_RUN(test_garbage_does_not_bind);
  TAP_RUN(test_receiver_restart_media);
  TAP_RUN(test_multistream_join);
  TAP_RUN(test_multistream_leader_fails);
  TAP_RUN(test_cache_bounded);
  TAP_RUN(test_cache_read_linear);
  TAP_RUN(test_thread_udp);
  return tap_done();
}
