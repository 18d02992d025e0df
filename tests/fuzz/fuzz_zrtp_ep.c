/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_zrtp_ep.c - libFuzzer target for the ZRTP endpoint policy
 * (lib/urtp/zrtp_ep.h): who an endpoint listens to, when it starts over,
 * Multistream groups, keys handed to the media path.
 *
 * A world of endpoints, each at its own address, on a virtual clock:
 *   node 0  A, a SENDER talking to B (or, after op 8, at another address)
 *   node 1  B, a RECEIVER
 *   node 2  C, a third party: a SENDER talking to B (flag bit 0: to A)
 *   node 3  D, a RECEIVER that C talks to instead in group mode (bit 1:
 *           A and C form a Multistream group, so do B and D)
 * Packets wait in one queue; the input is a script that says what the
 * network and the clock do:
 *
 *   byte 0      flags: bit 0 C attacks A, bit 1 group mode, bit 2 C claims
 *               A's ZID, bit 3 B is DUPLEX rather than a RECEIVER
 *   then records of 3 bytes, op and two arguments x, y:
 *     0  deliver the next x % 8 + 1 packets
 *     1  drop the next packet
 *     2  duplicate the next packet
 *     3  deliver the next packet as if from node x % 5 (a spoofed source;
 *        4: no address known)
 *     4  advance the clock by x * (y + 1) ms (up to 65 s)
 *     5  run the endpoints' due timers
 *     6  media from node x % 4 reached node y % 4: peer_srtp_ok, or
 *        media_without_keys when the receiver has no keys (real SRTP)
 *     7  start (or stop) C
 *     8  restart A: y bit 0 at a new address, bit 1 with a new ZID
 *     9  restart B
 *    10  flip bit y % 8 of byte x of the next packet (CRC fixed if x odd)
 *    11  DUPLEX B: urtp_zrtp_ep_begin()
 *
 * Checked after every step: nothing crashes or leaks; counters add up; a
 * SENDER only ever sends to its remote; a packet from anywhere but the
 * bound address of an endpoint whose peer is alive and whose session is
 * SECURE changes nothing (serial, keys); two endpoints that are SECURE with
 * each other hold crosswise equal keys; keys handed to the media path
 * protect and unprotect between them.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/srtp.h"
#include "urtp/zrtp.h"
#include "urtp/zrtp_ep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)   \
  do {              \
    if (!(c))       \
      abort();      \
  } while (0)

#define NNODES 4
#define NADDR 5      /* the nodes' addresses and A's second one */
#define MAXQ 64
#define MAX_OPS 1333    /* a 4000-byte input */

typedef struct qpkt {
  int from, to;
  int from_addr;                 /* where the sender was when it sent */
  uint16_t len;
  uint8_t buf[URTP_ZRTP_MAX_PACKET];
} qpkt_t;

typedef struct node {
  urtp_zrtp_ep_t *ep;
  int addr;                      /* index into world.addr */
  uint64_t rng;
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  urtp_zrtp_ep_mode_t mode;
  int remote;                    /* a SENDER's: address index */
  urtp_srtp_t tx, rx;
  int tx_serial, rx_serial;
  uint16_t seq;
} node_t;

typedef struct world {
  uint64_t now;
  struct sockaddr_in addr[NADDR];
  node_t n[NNODES];
  qpkt_t q[MAXQ];
  int nq;
  uint8_t flags;
  int sending;                   /* node whose callback runs */
} world_t;

static world_t *g;

static uint64_t clock_cb(void *user)
{
  return ((world_t *)user)->now;
}

static int rng_cb(void *user, uint8_t *buf, size_t len)
{
  uint64_t *s = user;
  for (size_t i = 0; i < len; i++) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    buf[i] = (uint8_t)(*s >> 24);
  }
  return 0;
}

static void fix_crc(uint8_t *p, size_t len)
{
  if (len < 4)
    return;
  uint32_t c = urtp_zrtp_crc32c(p, len - 4);
  for (int i = 0; i < 4; i++)
    p[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
}

static int addr_index(const struct sockaddr *to)
{
  if (!to || to->sa_family != AF_INET)
    return -1;
  const struct sockaddr_in *in = (const struct sockaddr_in *)to;
  for (int i = 0; i < NADDR; i++)
    if (g->addr[i].sin_port == in->sin_port)
      return i;
  return -1;
}

static int node_at(int addr)
{
  for (int i = 0; i < NNODES; i++)
    if (g->n[i].ep && g->n[i].addr == addr)
      return i;
  return -1;
}

static int send_cb(void *user, const uint8_t *pkt, size_t len, const struct sockaddr *to,
                   socklen_t to_len)
{
  node_t *nd = user;
  int from = (int)(nd - g->n);
  int a = addr_index(to);
  (void)to_len;
  /* a sender talks to its remote, and to nobody else */
  if (nd->mode == URTP_ZRTP_EP_SENDER)
    ASSERT(a == nd->remote);
  int dst = a >= 0 ? node_at(a) : (from == 1 ? 0 : 1);
  if (dst < 0 || g->nq == MAXQ || len > URTP_ZRTP_MAX_PACKET)
    return 0;
  qpkt_t *q = &g->q[g->nq++];
  q->from = from;
  q->from_addr = nd->addr;
  q->to = dst;
  q->len = (uint16_t)len;
  memcpy(q->buf, pkt, len);
  return 0;
}

static void node_stop(node_t *nd)
{
  urtp_zrtp_ep_free(nd->ep);
  nd->ep = NULL;
  urtp_srtp_destroy(&nd->tx);
  urtp_srtp_destroy(&nd->rx);
}

static void node_start(int i, urtp_zrtp_ep_mode_t mode, int addr, int remote, const char *group)
{
  node_t *nd = &g->n[i];
  node_stop(nd);
  nd->mode = mode;
  nd->addr = addr;
  nd->remote = remote;
  nd->tx_serial = nd->rx_serial = -1;
  urtp_zrtp_ep_config_t c;
  memset(&c, 0, sizeof c);
  c.mode = mode;
  if (mode == URTP_ZRTP_EP_SENDER) {
    c.remote = (const struct sockaddr *)&g->addr[remote];
    c.remote_len = sizeof(struct sockaddr_in);
  }
  c.ssrc = 0x100u + (uint32_t)i;
  c.zid = nd->zid;
  c.key_agreements[0] = URTP_ZRTP_KA_EC25;
  c.group = group;
  c.send = send_cb;
  c.send_user = nd;
  c.clock = clock_cb;
  c.clock_user = g;
  c.rng = rng_cb;
  c.rng_user = &nd->rng;
  ASSERT(urtp_zrtp_ep_new(&c, &nd->ep) == 0);
}

static bool secure_with(int i, int j, urtp_zrtp_info_t *ii, urtp_zrtp_info_t *ij)
{
  node_t *a = &g->n[i], *b = &g->n[j];
  if (!a->ep || !b->ep)
    return false;
  urtp_zrtp_ep_get_info(a->ep, ii);
  urtp_zrtp_ep_get_info(b->ep, ij);
  return ii->state == URTP_ZRTP_SECURE && ij->state == URTP_ZRTP_SECURE &&
         memcmp(ii->peer_zid, ij->zid, URTP_ZRTP_ZID_LEN) == 0 &&
         memcmp(ij->peer_zid, ii->zid, URTP_ZRTP_ZID_LEN) == 0 && !ii->multistream == !ij->multistream &&
         strcmp(ii->sas, ij->sas) == 0;
}

static void check(void)
{
  for (int i = 0; i < NNODES; i++) {
    node_t *nd = &g->n[i];
    if (!nd->ep)
      continue;
    urtp_zrtp_ep_counters_t c;
    urtp_zrtp_ep_get_counters(nd->ep, &c);
    ASSERT(c.foreign + c.bad + c.unexpected + c.auth_fail <= c.received);
    ASSERT(c.retransmits <= c.sent);
    urtp_zrtp_info_t info;
    urtp_zrtp_ep_get_info(nd->ep, &info);
    urtp_zrtp_keys_t k;
    if (info.state == URTP_ZRTP_FAILED)
      ASSERT(urtp_zrtp_ep_get_keys(nd->ep, &k) == -EAGAIN);
    ASSERT(urtp_zrtp_ep_is_secure(nd->ep) == (info.state == URTP_ZRTP_SECURE));
  }
  /* two endpoints secure with each other agree on their keys; but a
   * restarted node may be secure with a peer that moved on: compare only
   * pairs whose SAS match (the same exchange) */
  for (int i = 0; i < NNODES; i++)
    for (int j = i + 1; j < NNODES; j++) {
      urtp_zrtp_info_t ii, ij;
      urtp_zrtp_keys_t ki, kj;
      if (!secure_with(i, j, &ii, &ij) || ii.sas_value != ij.sas_value || ii.initiator == ij.initiator)
        continue;
      ASSERT(urtp_zrtp_ep_get_keys(g->n[i].ep, &ki) == 0);
      ASSERT(urtp_zrtp_ep_get_keys(g->n[j].ep, &kj) == 0);
      ASSERT(ki.key_len == kj.key_len);
      ASSERT(memcmp(ki.local, kj.remote, ki.key_len) == 0);
      ASSERT(memcmp(ki.remote, kj.local, ki.key_len) == 0);
    }
}

/* Delivers the head of the queue to its node, as if from address `as`
 * (-1: its real source, NADDR: unknown). */
static void deliver(int as)
{
  if (!g->nq)
    return;
  qpkt_t p = g->q[0];
  memmove(&g->q[0], &g->q[1], (size_t)(g->nq - 1) * sizeof g->q[0]);
  g->nq--;
  node_t *d = &g->n[p.to];
  if (!d->ep)
    return;
  int src = as >= 0 ? as : p.from_addr;
  const struct sockaddr *from = src < NADDR ? (const struct sockaddr *)&g->addr[src] : NULL;

  /* the binding: ZRTP from elsewhere than the bound, alive peer of a
   * SECURE endpoint changes nothing (what is not ZRTP at all, damaged on
   * the way, is counted as bad first) */
  urtp_zrtp_ep_peer_t peer;
  urtp_zrtp_ep_get_peer(d->ep, &peer);
  bool guarded = from && urtp_zrtp_is_zrtp(p.buf, p.len) && peer.have_addr && peer.alive && urtp_zrtp_ep_is_secure(d->ep) &&
                 addr_index((const struct sockaddr *)&peer.addr) != src;
  int serial = urtp_zrtp_ep_serial(d->ep);
  urtp_zrtp_keys_t before, after;
  bool had = urtp_zrtp_ep_get_keys(d->ep, &before) == 0;
  urtp_zrtp_ep_counters_t c0, c1;
  urtp_zrtp_ep_get_counters(d->ep, &c0);

  urtp_zrtp_ep_recv(d->ep, p.buf, p.len, from, from ? sizeof(struct sockaddr_in) : 0);

  urtp_zrtp_ep_get_counters(d->ep, &c1);
  ASSERT(c1.received == c0.received + 1);
  if (guarded) {
    ASSERT(c1.foreign == c0.foreign + 1);
    ASSERT(urtp_zrtp_ep_serial(d->ep) == serial);
    ASSERT(urtp_zrtp_ep_is_secure(d->ep));
    ASSERT(had && urtp_zrtp_ep_get_keys(d->ep, &after) == 0);
    ASSERT(memcmp(before.remote, after.remote, before.key_len) == 0);
  }
}

/* Media from s to d through the keys the endpoints hand out. */
static void media(int s, int d)
{
  node_t *ns = &g->n[s], *nd = &g->n[d];
  if (s == d || !ns->ep || !nd->ep)
    return;
  bool tx = urtp_zrtp_ep_sync_srtp_dir(ns->ep, &ns->tx, &ns->tx_serial, URTP_SRTP_OUTBOUND, true,
                                       0x100u + (uint32_t)s, 0);
  const struct sockaddr *from = (const struct sockaddr *)&g->addr[ns->addr];
  if (!urtp_zrtp_ep_sync_srtp_dir(nd->ep, &nd->rx, &nd->rx_serial, URTP_SRTP_INBOUND, false, 0, 1024)) {
    if (tx)
      urtp_zrtp_ep_media_without_keys(nd->ep, from, sizeof(struct sockaddr_in));
    return;
  }
  if (!tx)
    return;
  uint8_t pkt[64 + URTP_SRTP_MAX_TRAILER];
  memset(pkt, 0x5a, sizeof pkt);
  pkt[0] = 0x80;
  pkt[1] = 96;
  pkt[2] = (uint8_t)(ns->seq >> 8);
  pkt[3] = (uint8_t)ns->seq++;
  pkt[8] = 0, pkt[9] = 0, pkt[10] = 1, pkt[11] = (uint8_t)s;
  int n = urtp_srtp_protect(&ns->tx, pkt, 64, sizeof pkt);
  if (n < 0)
    return;
  if (urtp_srtp_unprotect(&nd->rx, pkt, (size_t)n) == 64) {
    /* it authenticated: the two are secure with each other */
    urtp_zrtp_keys_t ks, kd;
    ASSERT(urtp_zrtp_ep_get_keys(ns->ep, &ks) == 0 && urtp_zrtp_ep_get_keys(nd->ep, &kd) == 0);
    ASSERT(memcmp(ks.local, kd.remote, ks.key_len) == 0);
    urtp_zrtp_ep_peer_srtp_ok(nd->ep, from, sizeof(struct sockaddr_in));
  }
}

static void tick_all(void)
{
  for (int i = 0; i < NNODES; i++)
    if (g->n[i].ep && urtp_zrtp_ep_next_timeout(g->n[i].ep) <= g->now)
      urtp_zrtp_ep_tick(g->n[i].ep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  g = calloc(1, sizeof *g);
  ASSERT(g);
  g->now = 10000;
  g->flags = data[0];
  for (int i = 0; i < NADDR; i++) {
    g->addr[i].sin_family = AF_INET;
    g->addr[i].sin_addr.s_addr = htonl(0x7f000001);
    g->addr[i].sin_port = htons((uint16_t)(4000 + 2 * i));
  }
  for (int i = 0; i < NNODES; i++) {
    g->n[i].rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
    memcpy(g->n[i].zid, "fuzz-ep-zid", 11);
    g->n[i].zid[11] = (uint8_t)i;
  }
  const bool group = g->flags & 2;
  const char *gname = group ? "fuzz" : NULL;
  if (g->flags & 4)
    memcpy(g->n[2].zid, g->n[0].zid, URTP_ZRTP_ZID_LEN);
  node_start(1, (g->flags & 8) ? URTP_ZRTP_EP_DUPLEX : URTP_ZRTP_EP_RECEIVER, 1, 0, gname);
  if (group)
    node_start(3, URTP_ZRTP_EP_RECEIVER, 3, 0, gname);
  node_start(0, URTP_ZRTP_EP_SENDER, 0, 1, gname);
  const int c_target = group ? 3 : (g->flags & 1) ? 0 : 1;

  size_t pos = 1;
  for (int ops = 0; ops < MAX_OPS && pos + 3 <= size; ops++, pos += 3) {
    uint8_t op = data[pos] % 12, x = data[pos + 1], y = data[pos + 2];
    switch (op) {
    case 0:
      for (int k = 0; k <= x % 8; k++)
        deliver(-1);
      break;
    case 1:
      if (g->nq) {
        memmove(&g->q[0], &g->q[1], (size_t)(g->nq - 1) * sizeof g->q[0]);
        g->nq--;
      }
      break;
    case 2:
      if (g->nq && g->nq < MAXQ) {
        memmove(&g->q[1], &g->q[0], (size_t)g->nq * sizeof g->q[0]);
        g->nq++;
      }
      break;
    case 3:
      deliver(x % NADDR == 4 ? NADDR : x % NADDR);
      break;
    case 4:
      g->now += (uint64_t)x * ((uint64_t)y + 1);
      break;
    case 5:
      tick_all();
      break;
    case 6:
      media(x % NNODES, y % NNODES);
      break;
    case 7:
      if (g->n[2].ep)
        node_stop(&g->n[2]);
      else
        node_start(2, URTP_ZRTP_EP_SENDER, 2, c_target, gname);
      break;
    case 8:
      if (y & 2)
        g->n[0].zid[0] ^= 0x80;
      node_start(0, URTP_ZRTP_EP_SENDER, (y & 1) ? 4 : 0, 1, gname);
      break;
    case 9:
      node_start(1, (g->flags & 8) ? URTP_ZRTP_EP_DUPLEX : URTP_ZRTP_EP_RECEIVER, 1, 0, gname);
      break;
    case 10:
      if (g->nq && g->q[0].len) {
        qpkt_t *q = &g->q[0];
        q->buf[x % q->len] ^= (uint8_t)(1u << (y % 8));
        if (x & 1)
          fix_crc(q->buf, q->len);
      }
      break;
    case 11:
      if (g->n[1].ep)
        urtp_zrtp_ep_begin(g->n[1].ep, 0x4242);
      break;
    }
    check();
  }

  /* let it settle: the rest of the packets and timers, 60 s at most */
  uint64_t end = g->now + 60000;
  for (int steps = 0; steps < 2000 && g->now < end; steps++) {
    if (g->nq) {
      deliver(-1);
      continue;
    }
    uint64_t t = UINT64_MAX;
    for (int i = 0; i < NNODES; i++)
      if (g->n[i].ep) {
        uint64_t e = urtp_zrtp_ep_next_timeout(g->n[i].ep);
        t = e < t ? e : t;
      }
    if (t == UINT64_MAX || t > end)
      break;
    if (t > g->now)
      g->now = t;
    tick_all();
  }
  check();
  /* what a seed reached, to check that it tests what it says */
  if (getenv("FUZZ_ZRTP_EP_VERBOSE"))
    for (int i = 0; i < NNODES; i++) {
      urtp_zrtp_ep_counters_t c;
      urtp_zrtp_info_t info;
      if (!g->n[i].ep)
        continue;
      urtp_zrtp_ep_get_counters(g->n[i].ep, &c);
      urtp_zrtp_ep_get_info(g->n[i].ep, &info);
      fprintf(stderr, "  node %d: %s%s, sent %llu received %llu foreign %llu bad %llu restarts %llu\n",
              i, urtp_zrtp_state_name(info.state), info.multistream ? " (Mult)" : "",
              (unsigned long long)c.sent, (unsigned long long)c.received,
              (unsigned long long)c.foreign, (unsigned long long)c.bad,
              (unsigned long long)c.restarts);
    }
  for (int i = 0; i < NNODES; i++)
    node_stop(&g->n[i]);
  free(g);
  g = NULL;
  return 0;
}
