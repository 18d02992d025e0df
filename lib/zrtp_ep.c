/* SPDX-License-Identifier: BSD-2-Clause */
/* One stream's ZRTP endpoint: see urtp/zrtp_ep.h. */
#include "urtp/zrtp_ep.h"
#include "urtp/bytes.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#define TYPE_OFFSET 16        /* packet header 12, preamble 2, length 2 */
#define HELLO_ZID_OFFSET 76   /* packet header 12 + 64 into the message */
#define MAX_OUT 16            /* packets waiting for the send callback */
#define MAX_EVENTS 16

typedef struct pkt {
  bool has_addr;
  struct sockaddr_storage addr;  /* where it came from, or goes */
  socklen_t addr_len;
  size_t len;
  uint8_t data[URTP_ZRTP_MAX_PACKET];
} pkt_t;

/* A fixed ring of packets. */
typedef struct ring {
  pkt_t *p;
  unsigned cap, head, n;
} ring_t;

typedef struct group group_t;

struct urtp_zrtp_ep {
  atomic_int refs;
  /* for the media path, without the lock */
  atomic_int secure;
  atomic_int serial;

  pthread_mutex_t lock;

  /* configuration */
  urtp_zrtp_ep_mode_t mode;
  uint32_t ssrc;
  bool have_zid;                 /* configured, or the first session's */
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  char *client_id, *cache_path, *group_name;
  uint8_t prefs[4][URTP_ZRTP_MAX_PREFS];
  unsigned peer_timeout, start_delay;
  int (*send)(void *, const uint8_t *, size_t, const struct sockaddr *, socklen_t);
  void *send_user;
  void (*on_event)(void *, const urtp_zrtp_ep_event_t *);
  void *event_user;
  uint64_t (*clock)(void *);
  void *clock_user;
  int (*rng)(void *, uint8_t *, size_t);
  void *rng_user;
  group_t *group;

  /* the driver thread */
  bool driver;
  pthread_t thread;
  int efd, fd;
  bool stop_req, stopped;

  /* sessions (under lock) */
  urtp_zrtp_t *z;
  uint8_t peer_hello[URTP_ZRTP_MAX_PACKET];  /* message of the first Hello fed */
  size_t peer_hello_len;         /* 0: none */
  bool start_pending, starting;
  uint64_t start_at;
  urtp_zrtp_ep_restart_t next_reason;
  uint64_t sessions;             /* created so far */
  bool failed_pending;           /* judged once the session call returns */
  bool secure_seen;
  bool fatal;                    /* no session will be created any more */
  bool poked;
  uint64_t last_poke;
  urtp_zrtp_info_t last_info;    /* of the last session freed, or the leader's */
  bool have_last_info;
  uint64_t old_retransmits;
  urtp_zrtp_ep_counters_t counters;
  uint64_t now;                  /* of the call in progress, for callbacks */

  /* the binding */
  bool have_addr;
  struct sockaddr_storage addr;
  socklen_t addr_len;
  bool have_peer_zid;
  uint8_t peer_zid[URTP_ZRTP_ZID_LEN];
  bool heard;
  uint64_t last_heard;

  /* queues (under lock) */
  ring_t early, inq, out;
  urtp_zrtp_ep_event_t events[MAX_EVENTS];
  unsigned nevents;
  bool info_changed;
  bool draining;
  /* the drainer's copies, used outside the lock by one thread at a time */
  pkt_t *scratch_out;
  urtp_zrtp_ep_event_t *scratch_ev;
  pkt_t *scratch_in;             /* a packet handled at once, under lock */
};

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

static void wipe(void *p, size_t n)
{
  OPENSSL_cleanse(p, n);
}

static uint64_t mono_ms(void *user)
{
  (void)user;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_of(urtp_zrtp_ep_t *ep)
{
  return ep->clock(ep->clock_user);
}

static bool is_type(const uint8_t *pkt, size_t len, const char *type)
{
  return len >= TYPE_OFFSET + 8 && memcmp(pkt + TYPE_OFFSET, type, 8) == 0;
}

/* Address and port; an IPv4-mapped IPv6 address equals its IPv4 one (a
 * dual-stack socket reports one form, the caller may hold the other). */
typedef struct norm_addr {
  int family;
  uint8_t a[16];
  uint16_t port;
  uint32_t scope;
} norm_addr_t;

static bool normalise(const struct sockaddr *sa, socklen_t len, norm_addr_t *out)
{
  memset(out, 0, sizeof *out);
  if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    out->family = AF_INET;
    memcpy(out->a, &in->sin_addr, 4);
    out->port = in->sin_port;
    return true;
  }
  if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    out->port = in6->sin6_port;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      out->family = AF_INET;
      memcpy(out->a, in6->sin6_addr.s6_addr + 12, 4);
    } else {
      out->family = AF_INET6;
      memcpy(out->a, &in6->sin6_addr, 16);
      out->scope = in6->sin6_scope_id;
    }
    return true;
  }
  return false;
}

static bool addr_eq(const struct sockaddr *a, socklen_t alen, const struct sockaddr *b,
                    socklen_t blen)
{
  norm_addr_t x, y;
  if (normalise(a, alen, &x) && normalise(b, blen, &y))
    return x.family == y.family && x.port == y.port && x.scope == y.scope &&
           memcmp(x.a, y.a, 16) == 0;
  return alen == blen && memcmp(a, b, alen) == 0;
}

/* ------------------------------------------------------------------ */
/* rings                                                               */
/* ------------------------------------------------------------------ */

static int ring_init(ring_t *r, unsigned cap)
{
  r->p = calloc(cap, sizeof *r->p);
  r->cap = cap;
  r->head = r->n = 0;
  return r->p ? 0 : -ENOMEM;
}

static void ring_clear(ring_t *r)
{
  r->head = r->n = 0;
}

/* The slot for a new packet at the tail, or NULL when full. */
static pkt_t *ring_push(ring_t *r)
{
  if (r->n == r->cap)
    return NULL;
  pkt_t *p = &r->p[(r->head + r->n) % r->cap];
  r->n++;
  return p;
}

static pkt_t *ring_peek(ring_t *r)
{
  return r->n ? &r->p[r->head] : NULL;
}

static void ring_pop(ring_t *r)
{
  r->head = (r->head + 1) % r->cap;
  r->n--;
}

static bool ring_put(ring_t *r, const uint8_t *data, size_t len, const struct sockaddr *addr,
                     socklen_t addr_len)
{
  pkt_t *p = ring_push(r);
  if (!p)
    return false;
  p->has_addr = addr != NULL && addr_len > 0 && addr_len <= sizeof p->addr;
  p->addr_len = p->has_addr ? addr_len : 0;
  if (p->has_addr)
    memcpy(&p->addr, addr, addr_len);
  p->len = len;
  memcpy(p->data, data, len);
  return true;
}

/* ------------------------------------------------------------------ */
/* the Multistream registry                                            */
/* ------------------------------------------------------------------ */

struct group {
  char *key;                     /* "<mode>/<name>" */
  urtp_zrtp_ep_t *leader;        /* holds a reference; NULL: none yet */
  unsigned members;
  group_t *next;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static group_t *registry;

static void ep_ref(urtp_zrtp_ep_t *ep)
{
  atomic_fetch_add(&ep->refs, 1);
}

static void ep_destroy(urtp_zrtp_ep_t *ep);

static void ep_unref(urtp_zrtp_ep_t *ep)
{
  if (ep && atomic_fetch_sub(&ep->refs, 1) == 1)
    ep_destroy(ep);
}

static group_t *group_join(urtp_zrtp_ep_mode_t mode, const char *name)
{
  static const char *const prefix[] = { "send", "recv", "duplex" };
  size_t klen = strlen(name) + 8;
  char *key = malloc(klen);
  if (!key)
    return NULL;
  memcpy(key, prefix[mode], strlen(prefix[mode]) + 1);
  strcat(key, "/");
  strcat(key, name);
  pthread_mutex_lock(&registry_lock);
  group_t *g = registry;
  while (g && strcmp(g->key, key) != 0)
    g = g->next;
  if (!g) {
    g = calloc(1, sizeof *g);
    if (g) {
      g->key = key;
      key = NULL;
      g->next = registry;
      registry = g;
    }
  }
  if (g)
    g->members++;
  pthread_mutex_unlock(&registry_lock);
  free(key);
  return g;
}

static void group_leave(group_t *g, urtp_zrtp_ep_t *ep)
{
  urtp_zrtp_ep_t *old = NULL;
  pthread_mutex_lock(&registry_lock);
  if (g->leader == ep) {
    old = g->leader;
    g->leader = NULL;
  }
  if (--g->members == 0) {
    group_t **pp = &registry;
    while (*pp != g)
      pp = &(*pp)->next;
    *pp = g->next;
    free(g->key);
    free(g);
  }
  pthread_mutex_unlock(&registry_lock);
  /* outside the registry lock: the last reference frees */
  ep_unref(old);
}

/* ------------------------------------------------------------------ */
/* queued callbacks                                                    */
/* ------------------------------------------------------------------ */

static urtp_zrtp_ep_event_t *push_event(urtp_zrtp_ep_t *ep, urtp_zrtp_ep_event_type_t type)
{
  if (ep->nevents == MAX_EVENTS)
    return NULL;  /* nobody drains: the oldest ones tell the story */
  urtp_zrtp_ep_event_t *ev = &ep->events[ep->nevents++];
  memset(ev, 0, sizeof *ev);
  ev->type = type;
  ev->group = ep->group_name;
  return ev;
}

static void wake(urtp_zrtp_ep_t *ep)
{
  uint64_t one = 1;
  if (ep->efd >= 0)
    (void)!write(ep->efd, &one, sizeof one);
}

static bool in_driver(urtp_zrtp_ep_t *ep)
{
  return ep->driver && pthread_equal(pthread_self(), ep->thread);
}

/* Runs the send and event callbacks for what was queued, without the lock,
 * in order. One thread drains at a time; a call made from a callback only
 * queues, and the drainer picks it up before it returns. */
static void deliver(urtp_zrtp_ep_t *ep)
{
  pthread_mutex_lock(&ep->lock);
  if (ep->driver && !in_driver(ep)) {
    /* the media path never runs the callbacks */
    bool work = ep->out.n || ep->nevents || ep->info_changed;
    pthread_mutex_unlock(&ep->lock);
    if (work)
      wake(ep);
    return;
  }
  if (ep->draining) {
    pthread_mutex_unlock(&ep->lock);
    return;
  }
  ep->draining = true;
  for (;;) {
    unsigned nout = 0, nev = 0;
    while (ep->out.n) {
      ep->scratch_out[nout++] = *ring_peek(&ep->out);
      ring_pop(&ep->out);
    }
    memcpy(ep->scratch_ev, ep->events, ep->nevents * sizeof *ep->events);
    nev = ep->nevents;
    ep->nevents = 0;
    bool info = ep->info_changed;
    ep->info_changed = false;
    if (!nout && !nev && !info)
      break;
    pthread_mutex_unlock(&ep->lock);
    for (unsigned i = 0; i < nout; i++) {
      pkt_t *p = &ep->scratch_out[i];
      ep->send(ep->send_user, p->data, p->len,
               p->has_addr ? (const struct sockaddr *)&p->addr : NULL, p->addr_len);
    }
    for (unsigned i = 0; i < nev; i++) {
      if (ep->on_event)
        ep->on_event(ep->event_user, &ep->scratch_ev[i]);
      wipe(&ep->scratch_ev[i], sizeof ep->scratch_ev[i]);
    }
    if (info && ep->on_event) {
      urtp_zrtp_ep_event_t ev = { .type = URTP_ZRTP_EP_EV_INFO_CHANGED, .group = ep->group_name };
      ep->on_event(ep->event_user, &ev);
    }
    pthread_mutex_lock(&ep->lock);
  }
  ep->draining = false;
  pthread_mutex_unlock(&ep->lock);
}

/* ------------------------------------------------------------------ */
/* the session (under lock)                                            */
/* ------------------------------------------------------------------ */

static void bump_serial(urtp_zrtp_ep_t *ep)
{
  atomic_fetch_add(&ep->serial, 1);
}

static bool peer_alive(const urtp_zrtp_ep_t *ep, uint64_t now)
{
  return ep->heard && now - ep->last_heard < ep->peer_timeout;
}

static void heard(urtp_zrtp_ep_t *ep, uint64_t now)
{
  ep->heard = true;
  ep->last_heard = now;
}

/* Binds to a new peer address (not a SENDER's: its remote is fixed). */
static void bind_addr(urtp_zrtp_ep_t *ep, const pkt_t *p, uint64_t now)
{
  if (ep->mode == URTP_ZRTP_EP_SENDER || !p->has_addr)
    return;
  memcpy(&ep->addr, &p->addr, p->addr_len);
  ep->addr_len = p->addr_len;
  ep->have_addr = true;
  heard(ep, now);
}

static void session_send(void *user, const uint8_t *pkt, size_t len)
{
  urtp_zrtp_ep_t *ep = user;
  /* dropped if nobody drains fast enough: retransmission covers it */
  if (len <= URTP_ZRTP_MAX_PACKET &&
      ring_put(&ep->out, pkt, len, ep->have_addr ? (struct sockaddr *)&ep->addr : NULL,
               ep->addr_len))
    ep->counters.sent++;
}

static const char *keys_profile(urtp_zrtp_ep_t *ep)
{
  urtp_zrtp_keys_t keys;
  const char *name = NULL;
  if (ep->z && urtp_zrtp_get_keys(ep->z, &keys) == 0) {
    name = urtp_srtp_profile_name(keys.profile);
    wipe(&keys, sizeof keys);
  }
  return name;
}

static void session_event(void *user, urtp_zrtp_event_t ev)
{
  urtp_zrtp_ep_t *ep = user;
  switch (ev) {
  case URTP_ZRTP_EV_KEYS_READY:
    bump_serial(ep);
    ep->info_changed = true;
    break;
  case URTP_ZRTP_EV_SECURE: {
    if (ep->secure_seen)
      break;
    ep->secure_seen = true;
    atomic_store(&ep->secure, 1);
    urtp_zrtp_ep_event_t *e = push_event(ep, URTP_ZRTP_EP_EV_SECURE);
    urtp_zrtp_info_t info;
    urtp_zrtp_get_info(ep->z, &info);
    /* from now on bound to this ZID too */
    memcpy(ep->peer_zid, info.peer_zid, URTP_ZRTP_ZID_LEN);
    ep->have_peer_zid = true;
    heard(ep, ep->now);
    if (e) {
      e->info = info;
      e->srtp_profile = keys_profile(ep);
    }
    wipe(&info, sizeof info);
    ep->info_changed = true;
    break;
  }
  case URTP_ZRTP_EV_FAILED:
    atomic_store(&ep->secure, 0);
    bump_serial(ep);
    ep->failed_pending = true;
    ep->info_changed = true;
    break;
  case URTP_ZRTP_EV_CACHE_MISMATCH:
    ep->info_changed = true;
    break;
  }
}

static void schedule_start(urtp_zrtp_ep_t *ep, uint64_t at, urtp_zrtp_ep_restart_t reason)
{
  if (ep->fatal || ep->stopped)
    return;
  if (!ep->start_pending || at < ep->start_at)
    ep->start_at = at;
  ep->start_pending = true;
  ep->next_reason = reason;
}

/* Frees the session, keeping what it reported. */
static void drop_session(urtp_zrtp_ep_t *ep)
{
  if (!ep->z)
    return;
  urtp_zrtp_get_info(ep->z, &ep->last_info);
  ep->have_last_info = true;
  ep->old_retransmits += ep->last_info.stats.retransmits;
  urtp_zrtp_free(ep->z);
  ep->z = NULL;
  ep->peer_hello_len = 0;
  atomic_store(&ep->secure, 0);
  bump_serial(ep);
  ep->secure_seen = false;
  ep->failed_pending = false;
  ep->info_changed = true;
}

/* After every call into the session: a failure is reported, except a
 * timeout (the peer never answered, or went away), after which a SENDER or
 * DUPLEX endpoint starts over and a RECEIVER waits for the peer. */
static void after_call(urtp_zrtp_ep_t *ep)
{
  if (!ep->failed_pending || !ep->z)
    return;
  ep->failed_pending = false;
  urtp_zrtp_info_t info;
  urtp_zrtp_get_info(ep->z, &info);
  if (info.error == URTP_ZRTP_ERR_TIMEOUT) {
    if (ep->mode != URTP_ZRTP_EP_RECEIVER)
      schedule_start(ep, ep->now, URTP_ZRTP_EP_RESTART_TIMEOUT);
  } else {
    urtp_zrtp_ep_event_t *e = push_event(ep, URTP_ZRTP_EP_EV_FAILED);
    if (e)
      e->info = info;
  }
  wipe(&info, sizeof info);
}

static void count_rc(urtp_zrtp_ep_t *ep, int rc)
{
  switch (rc) {
  case 0:
    break;
  case -EBADMSG:
    ep->counters.bad++;
    break;
  case -EPERM:
    ep->counters.auth_fail++;
    break;
  default:
    ep->counters.unexpected++;
    break;
  }
}

/* Feeds one packet to the session; the first Hello is remembered. */
static void feed(urtp_zrtp_ep_t *ep, const pkt_t *p)
{
  int rc = urtp_zrtp_recv(ep->z, p->data, p->len, ep->now);
  count_rc(ep, rc);
  /* a session we started ourselves learns the peer's address here */
  if (rc == 0 && !ep->have_addr)
    bind_addr(ep, p, ep->now);
  if (rc == 0 && (!p->has_addr || !ep->have_addr ||
                  addr_eq((const struct sockaddr *)&p->addr, p->addr_len,
                          (const struct sockaddr *)&ep->addr, ep->addr_len)))
    heard(ep, ep->now);
  if (rc != -EBADMSG && !ep->peer_hello_len && is_type(p->data, p->len, "Hello   ")) {
    ep->peer_hello_len = p->len - 16;
    memcpy(ep->peer_hello, p->data + 12, ep->peer_hello_len);
  }
}

static int new_session(urtp_zrtp_ep_t *ep, const urtp_zrtp_t *parent, urtp_zrtp_t **out)
{
  urtp_zrtp_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.role = URTP_ZRTP_ROLE_AUTO;
  cfg.ssrc = ep->ssrc;
  /* a Multistream stream has its parent's ZID */
  cfg.zid = (!parent && ep->have_zid) ? ep->zid : NULL;
  cfg.client_id = ep->client_id;
  cfg.cache_path = ep->cache_path;
  memcpy(cfg.key_agreements, ep->prefs[0], URTP_ZRTP_MAX_PREFS);
  memcpy(cfg.ciphers, ep->prefs[1], URTP_ZRTP_MAX_PREFS);
  memcpy(cfg.auth_tags, ep->prefs[2], URTP_ZRTP_MAX_PREFS);
  memcpy(cfg.sas_types, ep->prefs[3], URTP_ZRTP_MAX_PREFS);
  cfg.multistream_parent = parent;
  cfg.send = session_send;
  cfg.on_event = session_event;
  cfg.user = ep;
  cfg.rng = ep->rng;
  cfg.rng_user = ep->rng_user;
  return urtp_zrtp_new(&cfg, out);
}

static uint32_t random_ssrc(urtp_zrtp_ep_t *ep)
{
  uint8_t b[4] = { 0 };
  if (ep->rng)
    (void)ep->rng(ep->rng_user, b, sizeof b);
  else
    (void)RAND_bytes(b, sizeof b);
  uint32_t v = urtp_rd32(b);
  return v ? v : 1;
}

/* The group's first stream failed for real: so does this one, with its
 * error, for good. */
static void fail_by_leader(urtp_zrtp_ep_t *ep, const urtp_zrtp_info_t *li)
{
  urtp_zrtp_ep_event_t *e = push_event(ep, URTP_ZRTP_EP_EV_FAILED);
  if (e) {
    e->info = *li;
    e->leader_failed = true;
  }
  ep->last_info = *li;
  ep->have_last_info = true;
  ep->info_changed = true;
  ep->start_pending = false;
  ep->fatal = true;
  ring_clear(&ep->early);
}

/* Creates and starts a session: on its own, or in Multistream mode with the
 * group's first stream once that is SECURE (else tried again in
 * URTP_ZRTP_EP_JOIN_POLL_MS). May release the lock for a while: never two
 * endpoint locks at once. */
static void try_start(urtp_zrtp_ep_t *ep)
{
  urtp_zrtp_t *z = NULL;
  bool joined = false;
  int rc = 0;
  uint64_t now = ep->now;

  if (ep->starting)
    return;
  drop_session(ep);
  /* a new exchange: the state shown is idle until it starts */
  ep->have_last_info = false;
  if (ep->group) {
    urtp_zrtp_ep_t *leader = NULL;
    pthread_mutex_lock(&registry_lock);
    if (!ep->group->leader) {
      ep_ref(ep);
      ep->group->leader = ep;
    }
    if (ep->group->leader != ep) {
      leader = ep->group->leader;
      ep_ref(leader);
    }
    pthread_mutex_unlock(&registry_lock);

    if (leader) {
      urtp_zrtp_info_t li;
      bool leader_failed = false;

      ep->starting = true;
      pthread_mutex_unlock(&ep->lock);
      pthread_mutex_lock(&leader->lock);
      if (leader->z && urtp_zrtp_state(leader->z) == URTP_ZRTP_SECURE) {
        rc = new_session(ep, leader->z, &z);
        joined = true;
      } else if (leader->z && urtp_zrtp_state(leader->z) == URTP_ZRTP_FAILED) {
        /* a timeout is followed by a fresh attempt; anything else is final */
        urtp_zrtp_get_info(leader->z, &li);
        leader_failed = li.error != URTP_ZRTP_ERR_TIMEOUT;
      } else if (leader->fatal && leader->have_last_info) {
        li = leader->last_info;
        leader_failed = true;
      }
      pthread_mutex_unlock(&leader->lock);
      ep_unref(leader);
      pthread_mutex_lock(&ep->lock);
      ep->starting = false;
      if (ep->stopped) {
        urtp_zrtp_free(z);
        return;
      }
      if (leader_failed) {
        fail_by_leader(ep, &li);
        wipe(&li, sizeof li);
        return;
      }
      if (!z && rc == 0) {
        ep->start_at = now + URTP_ZRTP_EP_JOIN_POLL_MS;
        return;
      }
    } else {
      rc = new_session(ep, NULL, &z);
    }
  } else {
    rc = new_session(ep, NULL, &z);
  }
  ep->start_pending = false;
  if (rc != 0) {
    urtp_zrtp_ep_event_t *e = push_event(ep, URTP_ZRTP_EP_EV_ERROR);
    if (e)
      e->error = rc;
    ep->fatal = true;
    ring_clear(&ep->early);
    return;
  }
  ep->z = z;
  atomic_store(&ep->secure, 0);
  if (ep->sessions++ > 0) {
    ep->counters.restarts++;
    urtp_zrtp_ep_event_t *e = push_event(ep, URTP_ZRTP_EP_EV_RESTARTED);
    if (e)
      e->reason = ep->next_reason;
  }
  /* the same ZID for every session of this endpoint (a Multistream one
   * has its parent's) */
  if (!ep->have_zid && !joined) {
    urtp_zrtp_info_t info;
    urtp_zrtp_get_info(z, &info);
    memcpy(ep->zid, info.zid, URTP_ZRTP_ZID_LEN);
    ep->have_zid = true;
    wipe(&info, sizeof info);
  }
  ep->info_changed = true;
  urtp_zrtp_start(z, now);
  pkt_t *p;
  while (ep->z == z && (p = ring_peek(&ep->early))) {
    feed(ep, p);
    ring_pop(&ep->early);
  }
  after_call(ep);
}

/* Starts what is due and runs the session's timers. */
static void run_due(urtp_zrtp_ep_t *ep)
{
  if (ep->stopped)
    return;
  if (ep->start_pending && !ep->fatal && ep->now >= ep->start_at) {
    if (ep->mode == URTP_ZRTP_EP_DUPLEX && ep->ssrc == 0)
      ep->ssrc = random_ssrc(ep);
    try_start(ep);
  }
  if (ep->z && urtp_zrtp_next_timeout(ep->z) <= ep->now) {
    urtp_zrtp_tick(ep->z, ep->now);
    after_call(ep);
  }
}

static uint64_t next_due(const urtp_zrtp_ep_t *ep)
{
  uint64_t due = UINT64_MAX;
  if (ep->stopped)
    return due;
  if (ep->z)
    due = urtp_zrtp_next_timeout(ep->z);
  if (ep->start_pending && !ep->fatal && ep->start_at < due)
    due = ep->start_at;
  return due;
}

/* Whether a packet is to be ignored: it does not come from the bound peer
 * while that is alive (see the header). */
static bool is_foreign(urtp_zrtp_ep_t *ep, const pkt_t *p, bool hello)
{
  bool same_addr = !p->has_addr || !ep->have_addr ||
                   addr_eq((const struct sockaddr *)&p->addr, p->addr_len,
                           (const struct sockaddr *)&ep->addr, ep->addr_len);
  if (ep->mode == URTP_ZRTP_EP_SENDER && !same_addr)
    return true;  /* only the remote talks to a sender */
  bool in_use = ep->start_pending ||
                (ep->z && urtp_zrtp_state(ep->z) != URTP_ZRTP_FAILED);
  if (!in_use || !peer_alive(ep, ep->now))
    return false;
  if (!same_addr)
    return true;
  return hello && ep->have_peer_zid && p->len >= HELLO_ZID_OFFSET + URTP_ZRTP_ZID_LEN + 4 &&
         memcmp(p->data + HELLO_ZID_OFFSET, ep->peer_zid, URTP_ZRTP_ZID_LEN) != 0;
}

/* Whether the CRC holds (the packet carries it least significant byte
 * first). Nothing binds or starts on a packet that fails it. */
static bool crc_ok(const pkt_t *p)
{
  uint32_t c = urtp_zrtp_crc32c(p->data, p->len - 4);
  const uint8_t *t = p->data + p->len - 4;
  return t[0] == (uint8_t)c && t[1] == (uint8_t)(c >> 8) && t[2] == (uint8_t)(c >> 16) &&
         t[3] == (uint8_t)(c >> 24);
}

static bool hello_differs(const urtp_zrtp_ep_t *ep, const pkt_t *p)
{
  return !ep->peer_hello_len || p->len < 16 || p->len - 16 != ep->peer_hello_len ||
         memcmp(p->data + 12, ep->peer_hello, ep->peer_hello_len) != 0;
}

/* The peer started a new exchange (its Hello is not the one our session
 * holds): ours is over. A RECEIVER or DUPLEX endpoint answers the new
 * exchange, fed with this Hello. A SENDER starts afresh without it: the
 * receiver, seeing our new Hello, starts over in turn, and its Hello held
 * here would be stale; so the two converge instead of restarting each
 * other for ever. */
static void restart_with(urtp_zrtp_ep_t *ep, const pkt_t *p)
{
  drop_session(ep);
  ring_clear(&ep->early);
  ep->have_peer_zid = false;
  if (ep->mode != URTP_ZRTP_EP_SENDER) {
    bind_addr(ep, p, ep->now);
    ring_put(&ep->early, p->data, p->len, p->has_addr ? (const struct sockaddr *)&p->addr : NULL,
             p->addr_len);
  }
  schedule_start(ep, ep->now, URTP_ZRTP_EP_RESTART_PEER);
}

static void handle_packet(urtp_zrtp_ep_t *ep, const pkt_t *p)
{
  bool hello = is_type(p->data, p->len, "Hello   ");

  ep->counters.received++;
  if (ep->fatal || ep->stopped)
    return;
  if (!urtp_zrtp_is_zrtp(p->data, p->len)) {
    ep->counters.bad++;
    return;
  }
  if (is_foreign(ep, p, hello)) {
    ep->counters.foreign++;
    return;
  }
  if (!ep->z) {
    if (!crc_ok(p)) {
      ep->counters.bad++;
      return;
    }
    switch (ep->mode) {
    case URTP_ZRTP_EP_SENDER:
      /* between sessions: the peer repeats itself */
      ep->counters.unexpected++;
      return;
    case URTP_ZRTP_EP_RECEIVER:
      /* a Hello begins an exchange: what came before it is stale */
      if (hello) {
        ring_clear(&ep->early);
        bind_addr(ep, p, ep->now);
        schedule_start(ep, ep->now, URTP_ZRTP_EP_RESTART_PEER);
      } else if (!ep->early.n) {
        ep->counters.unexpected++;
        return;
      }
      break;
    case URTP_ZRTP_EP_DUPLEX:
      if (hello && !ep->have_addr)
        bind_addr(ep, p, ep->now);
      if (!ep->start_pending)
        schedule_start(ep, ep->now + ep->start_delay, URTP_ZRTP_EP_RESTART_PEER);
      break;
    }
    if (!ring_put(&ep->early, p->data, p->len,
                  p->has_addr ? (const struct sockaddr *)&p->addr : NULL, p->addr_len))
      ep->counters.unexpected++;
    return;
  }
  urtp_zrtp_state_t st = urtp_zrtp_state(ep->z);
  if (hello && hello_differs(ep, p) && (ep->peer_hello_len || st == URTP_ZRTP_FAILED) &&
      crc_ok(p)) {
    restart_with(ep, p);
    return;
  }
  if (st == URTP_ZRTP_FAILED) {
    ep->counters.unexpected++;
    return;
  }
  feed(ep, p);
  after_call(ep);
}

/* ------------------------------------------------------------------ */
/* the driver thread                                                   */
/* ------------------------------------------------------------------ */

/* A SENDER's socket: the peer's answers. Anything else (RTCP, stray
 * datagrams, ones too long for ZRTP) is counted as discarded. */
static void recv_socket(urtp_zrtp_ep_t *ep, pkt_t *p)
{
  uint64_t discarded = 0;
  for (int i = 0; i < 64; i++) {
    p->addr_len = sizeof p->addr;
    ssize_t n = recvfrom(ep->fd, p->data, sizeof p->data, MSG_DONTWAIT | MSG_TRUNC,
                         (struct sockaddr *)&p->addr, &p->addr_len);
    if (n < 0) {
      /* ECONNREFUSED: an ICMP error for an earlier send, consumed now */
      if (errno == EINTR || errno == ECONNREFUSED)
        continue;
      break;
    }
    if ((size_t)n > sizeof p->data || !urtp_zrtp_is_zrtp(p->data, (size_t)n)) {
      discarded++;
      continue;
    }
    p->len = (size_t)n;
    p->has_addr = p->addr_len > 0 && p->addr_len <= sizeof p->addr;
    pthread_mutex_lock(&ep->lock);
    ep->counters.discarded += discarded;
    discarded = 0;
    ep->now = now_of(ep);
    handle_packet(ep, p);
    run_due(ep);
    pthread_mutex_unlock(&ep->lock);
  }
  if (discarded) {
    pthread_mutex_lock(&ep->lock);
    ep->counters.discarded += discarded;
    pthread_mutex_unlock(&ep->lock);
  }
}

static void *driver_main(void *arg)
{
  urtp_zrtp_ep_t *ep = arg;
  struct pollfd pfd[2];
  nfds_t nfds = 1;
  pkt_t *rx = malloc(sizeof *rx);

  pfd[0].fd = ep->efd;
  pfd[0].events = POLLIN;
  if (ep->fd >= 0 && rx) {
    pfd[1].fd = ep->fd;
    pfd[1].events = POLLIN;
    nfds = 2;
  }
  pthread_mutex_lock(&ep->lock);
  while (!ep->stop_req) {
    pkt_t *p;
    ep->now = now_of(ep);
    while ((p = ring_peek(&ep->inq))) {
      handle_packet(ep, p);
      ring_pop(&ep->inq);
      run_due(ep);
    }
    run_due(ep);
    uint64_t due = next_due(ep);
    pthread_mutex_unlock(&ep->lock);

    deliver(ep);

    int timeout = -1;
    if (due != UINT64_MAX) {
      uint64_t now = now_of(ep);
      timeout = due <= now ? 0 : (due - now > 60000 ? 60000 : (int)(due - now));
    }
    if (poll(pfd, nfds, timeout) > 0) {
      if (pfd[0].revents & POLLIN) {
        uint64_t v;
        (void)!read(ep->efd, &v, sizeof v);
      }
      if (nfds == 2 && (pfd[1].revents & (POLLIN | POLLERR)))
        recv_socket(ep, rx);
    }
    pthread_mutex_lock(&ep->lock);
  }
  pthread_mutex_unlock(&ep->lock);
  free(rx);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* public                                                              */
/* ------------------------------------------------------------------ */

static char *dup_or_null(const char *s, bool *bad)
{
  if (!s || !*s)
    return NULL;
  char *d = strdup(s);
  if (!d)
    *bad = true;
  return d;
}

int urtp_zrtp_ep_new(const urtp_zrtp_ep_config_t *cfg, urtp_zrtp_ep_t **out)
{
  *out = NULL;
  if (!cfg->send || cfg->mode > URTP_ZRTP_EP_DUPLEX)
    return -EINVAL;
  if (cfg->mode == URTP_ZRTP_EP_SENDER && (!cfg->remote || !cfg->remote_len))
    return -EINVAL;
  if (cfg->remote && cfg->remote_len > sizeof(struct sockaddr_storage))
    return -EINVAL;
  if (cfg->client_id && strlen(cfg->client_id) > 16)
    return -EINVAL;

  urtp_zrtp_ep_t *ep = calloc(1, sizeof *ep);
  if (!ep)
    return -ENOMEM;
  atomic_init(&ep->refs, 1);
  atomic_init(&ep->secure, 0);
  atomic_init(&ep->serial, 0);
  pthread_mutex_init(&ep->lock, NULL);
  ep->efd = ep->fd = -1;
  ep->mode = cfg->mode;
  ep->ssrc = cfg->ssrc;
  if (cfg->zid) {
    memcpy(ep->zid, cfg->zid, URTP_ZRTP_ZID_LEN);
    ep->have_zid = true;
  }
  bool bad = false;
  ep->client_id = dup_or_null(cfg->client_id, &bad);
  ep->cache_path = dup_or_null(cfg->cache_path, &bad);
  ep->group_name = dup_or_null(cfg->group, &bad);
  memcpy(ep->prefs[0], cfg->key_agreements, URTP_ZRTP_MAX_PREFS);
  memcpy(ep->prefs[1], cfg->ciphers, URTP_ZRTP_MAX_PREFS);
  memcpy(ep->prefs[2], cfg->auth_tags, URTP_ZRTP_MAX_PREFS);
  memcpy(ep->prefs[3], cfg->sas_types, URTP_ZRTP_MAX_PREFS);
  ep->peer_timeout = cfg->peer_timeout_ms ? cfg->peer_timeout_ms : URTP_ZRTP_EP_PEER_TIMEOUT_MS;
  ep->start_delay = cfg->start_delay_ms;
  ep->send = cfg->send;
  ep->send_user = cfg->send_user;
  ep->on_event = cfg->on_event;
  ep->event_user = cfg->event_user;
  ep->clock = cfg->clock ? cfg->clock : mono_ms;
  ep->clock_user = cfg->clock_user;
  ep->rng = cfg->rng;
  ep->rng_user = cfg->rng_user;
  if (cfg->remote) {
    memcpy(&ep->addr, cfg->remote, cfg->remote_len);
    ep->addr_len = cfg->remote_len;
    ep->have_addr = true;
  }
  if (bad || ring_init(&ep->early, URTP_ZRTP_EP_MAX_EARLY) ||
      ring_init(&ep->inq, URTP_ZRTP_EP_MAX_INQ) || ring_init(&ep->out, MAX_OUT) ||
      !(ep->scratch_out = calloc(MAX_OUT, sizeof *ep->scratch_out)) ||
      !(ep->scratch_ev = calloc(MAX_EVENTS, sizeof *ep->scratch_ev)) ||
      !(ep->scratch_in = malloc(sizeof *ep->scratch_in)) ||
      (ep->group_name && !(ep->group = group_join(ep->mode, ep->group_name)))) {
    ep_destroy(ep);
    return -ENOMEM;
  }
  /* a sender starts at once; the others when the peer shows up */
  if (ep->mode == URTP_ZRTP_EP_SENDER) {
    ep->start_pending = true;
    ep->start_at = now_of(ep);
  }
  *out = ep;
  return 0;
}

static void ep_destroy(urtp_zrtp_ep_t *ep)
{
  urtp_zrtp_free(ep->z);
  wipe(&ep->last_info, sizeof ep->last_info);
  free(ep->client_id);
  free(ep->cache_path);
  free(ep->group_name);
  free(ep->early.p);
  free(ep->inq.p);
  free(ep->out.p);
  free(ep->scratch_out);
  free(ep->scratch_in);
  if (ep->scratch_ev)
    wipe(ep->scratch_ev, MAX_EVENTS * sizeof *ep->scratch_ev);
  free(ep->scratch_ev);
  wipe(ep->events, sizeof ep->events);
  pthread_mutex_destroy(&ep->lock);
  free(ep);
}

void urtp_zrtp_ep_free(urtp_zrtp_ep_t *ep)
{
  if (!ep)
    return;
  urtp_zrtp_ep_stop(ep);
  ep_unref(ep);
}

int urtp_zrtp_ep_start(urtp_zrtp_ep_t *ep, int fd)
{
  pthread_mutex_lock(&ep->lock);
  if (ep->driver || ep->stopped) {
    pthread_mutex_unlock(&ep->lock);
    return -EALREADY;
  }
  ep->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (ep->efd < 0) {
    int err = -errno;
    pthread_mutex_unlock(&ep->lock);
    return err;
  }
  ep->fd = fd;
  ep->driver = true;
  /* under the lock: the thread's first look at ep->thread waits for it */
  int rc = pthread_create(&ep->thread, NULL, driver_main, ep);
  if (rc != 0) {
    ep->driver = false;
    close(ep->efd);
    ep->efd = -1;
    ep->fd = -1;
  }
  pthread_mutex_unlock(&ep->lock);
  return -rc;
}

void urtp_zrtp_ep_stop(urtp_zrtp_ep_t *ep)
{
  pthread_mutex_lock(&ep->lock);
  if (ep->stopped || ep->stop_req) {
    pthread_mutex_unlock(&ep->lock);
    return;
  }
  ep->stop_req = true;
  bool driver = ep->driver;
  pthread_mutex_unlock(&ep->lock);
  if (driver) {
    wake(ep);
    pthread_join(ep->thread, NULL);
  }

  pthread_mutex_lock(&ep->lock);
  ep->driver = false;
  if (ep->efd >= 0)
    close(ep->efd);
  ep->efd = -1;
  ep->fd = -1;
  drop_session(ep);
  ep->stopped = true;
  ep->start_pending = false;
  ring_clear(&ep->early);
  ring_clear(&ep->inq);
  ring_clear(&ep->out);
  wipe(ep->events, sizeof ep->events);
  ep->nevents = 0;
  ep->info_changed = false;
  group_t *g = ep->group;
  ep->group = NULL;
  pthread_mutex_unlock(&ep->lock);
  if (g)
    group_leave(g, ep);
}

void urtp_zrtp_ep_tick(urtp_zrtp_ep_t *ep)
{
  pthread_mutex_lock(&ep->lock);
  ep->now = now_of(ep);
  run_due(ep);
  pthread_mutex_unlock(&ep->lock);
  deliver(ep);
}

uint64_t urtp_zrtp_ep_next_timeout(urtp_zrtp_ep_t *ep)
{
  pthread_mutex_lock(&ep->lock);
  uint64_t due = next_due(ep);
  pthread_mutex_unlock(&ep->lock);
  return due;
}

/* Ends a call that may have queued work: run it here, or wake the thread. */
static void finish(urtp_zrtp_ep_t *ep)
{
  if (ep->driver) {
    pthread_mutex_unlock(&ep->lock);
    wake(ep);
    return;
  }
  run_due(ep);
  pthread_mutex_unlock(&ep->lock);
  deliver(ep);
}

void urtp_zrtp_ep_begin(urtp_zrtp_ep_t *ep, uint32_t ssrc)
{
  pthread_mutex_lock(&ep->lock);
  if (ep->mode != URTP_ZRTP_EP_DUPLEX || ep->z || ep->fatal || ep->stopped ||
      (ep->start_pending && ep->start_at <= now_of(ep))) {
    pthread_mutex_unlock(&ep->lock);
    return;
  }
  ep->now = now_of(ep);
  if (!ep->ssrc)
    ep->ssrc = ssrc;
  schedule_start(ep, ep->now, URTP_ZRTP_EP_RESTART_PEER);
  finish(ep);
}

bool urtp_zrtp_ep_is_secure(urtp_zrtp_ep_t *ep)
{
  return atomic_load_explicit(&ep->secure, memory_order_acquire) != 0;
}

int urtp_zrtp_ep_serial(urtp_zrtp_ep_t *ep)
{
  return atomic_load_explicit(&ep->serial, memory_order_acquire);
}

bool urtp_zrtp_ep_sync_srtp_dir(urtp_zrtp_ep_t *ep, urtp_srtp_t *ctx, int *serial,
                                urtp_srtp_dir_t dir, bool need_secure, uint32_t ssrc,
                                unsigned replay_window)
{
  if (atomic_load_explicit(&ep->serial, memory_order_acquire) == *serial)
    return ctx->session != NULL;

  urtp_zrtp_keys_t keys;
  bool have = false, secure = false;
  pthread_mutex_lock(&ep->lock);
  /* bumped under this lock: the keys read here go with this number */
  int cur = atomic_load(&ep->serial);
  if (ep->z) {
    have = urtp_zrtp_get_keys(ep->z, &keys) == 0;
    secure = urtp_zrtp_state(ep->z) == URTP_ZRTP_SECURE;
  }
  pthread_mutex_unlock(&ep->lock);

  /* the keys changed: the old ones are gone */
  urtp_srtp_destroy(ctx);
  if (have && need_secure && !secure) {
    /* not yet: *serial stays, so the next call looks again */
    wipe(&keys, sizeof keys);
    return false;
  }
  *serial = cur;
  if (!have)
    return false;
  urtp_srtp_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.profile = keys.profile;
  cfg.key_len = keys.key_len;
  cfg.dir = dir;
  if (dir == URTP_SRTP_OUTBOUND) {
    cfg.key = keys.local;
    cfg.ssrc = ssrc;
    cfg.any_ssrc = ssrc == 0;
  } else {
    cfg.key = keys.remote;
    cfg.any_ssrc = true;
    cfg.replay_window = replay_window;
  }
  int r = urtp_srtp_init(ctx, &cfg);
  wipe(&keys, sizeof keys);
  if (r < 0) {
    memset(ctx, 0, sizeof *ctx);
    return false;
  }
  return true;
}

bool urtp_zrtp_ep_sync_srtp(urtp_zrtp_ep_t *ep, urtp_srtp_t *ctx, int *serial, bool need_secure,
                            uint32_t ssrc, unsigned replay_window)
{
  urtp_srtp_dir_t dir;
  switch (ep->mode) {
  case URTP_ZRTP_EP_SENDER:
    dir = URTP_SRTP_OUTBOUND;
    break;
  case URTP_ZRTP_EP_RECEIVER:
    dir = URTP_SRTP_INBOUND;
    break;
  default:
    dir = need_secure ? URTP_SRTP_OUTBOUND : URTP_SRTP_INBOUND;
    break;
  }
  return urtp_zrtp_ep_sync_srtp_dir(ep, ctx, serial, dir, need_secure, ssrc, replay_window);
}

void urtp_zrtp_ep_recv(urtp_zrtp_ep_t *ep, const uint8_t *pkt, size_t len,
                       const struct sockaddr *from, socklen_t from_len)
{
  pthread_mutex_lock(&ep->lock);
  if (ep->stopped || ep->stop_req) {
    pthread_mutex_unlock(&ep->lock);
    return;
  }
  if (len > URTP_ZRTP_MAX_PACKET) {
    ep->counters.received++;
    ep->counters.bad++;
    pthread_mutex_unlock(&ep->lock);
    return;
  }
  if (ep->driver) {
    if (!ring_put(&ep->inq, pkt, len, from, from_len)) {
      ep->counters.received++;
      ep->counters.unexpected++;
    }
    finish(ep);
    return;
  }
  /* handled here, from a copy as the thread's queue would hold */
  pkt_t *p = ep->scratch_in;
  p->has_addr = from != NULL && from_len > 0 && from_len <= sizeof p->addr;
  p->addr_len = p->has_addr ? from_len : 0;
  if (p->has_addr)
    memcpy(&p->addr, from, from_len);
  p->len = len;
  memcpy(p->data, pkt, len);
  ep->now = now_of(ep);
  handle_packet(ep, p);
  finish(ep);
}

void urtp_zrtp_ep_media_without_keys(urtp_zrtp_ep_t *ep, const struct sockaddr *from,
                                     socklen_t from_len)
{
  if (ep->mode != URTP_ZRTP_EP_RECEIVER || !from || !from_len || from_len > sizeof ep->addr)
    return;
  pthread_mutex_lock(&ep->lock);
  ep->now = now_of(ep);
  bool poke = false;
  if (!ep->stopped && !ep->stop_req && !ep->fatal && !ep->start_pending && !ep->inq.n &&
      (!ep->poked || ep->now - ep->last_poke >= URTP_ZRTP_EP_POKE_INTERVAL_MS)) {
    if (!ep->z) {
      poke = true;
    } else if (urtp_zrtp_state(ep->z) == URTP_ZRTP_FAILED) {
      urtp_zrtp_info_t info;
      urtp_zrtp_get_info(ep->z, &info);
      /* not after a real failure: that needs a new Hello from the peer */
      poke = info.error == URTP_ZRTP_ERR_TIMEOUT;
      wipe(&info, sizeof info);
    }
    /* never towards another address while the bound peer is alive */
    if (poke && ep->have_addr && peer_alive(ep, ep->now) &&
        !addr_eq(from, from_len, (const struct sockaddr *)&ep->addr, ep->addr_len))
      poke = false;
  }
  if (!poke) {
    pthread_mutex_unlock(&ep->lock);
    return;
  }
  ep->poked = true;
  ep->last_poke = ep->now;
  memcpy(&ep->addr, from, from_len);
  ep->addr_len = from_len;
  ep->have_addr = true;
  heard(ep, ep->now);
  ring_clear(&ep->early);
  schedule_start(ep, ep->now, URTP_ZRTP_EP_RESTART_MEDIA);
  finish(ep);
}

void urtp_zrtp_ep_peer_srtp_ok(urtp_zrtp_ep_t *ep, const struct sockaddr *from,
                               socklen_t from_len)
{
  pthread_mutex_lock(&ep->lock);
  if (ep->stopped) {
    pthread_mutex_unlock(&ep->lock);
    return;
  }
  ep->now = now_of(ep);
  /* liveness only from the bound address: a copy of the peer's packet
   * sent from elsewhere must not move the binding */
  if (!from || !ep->have_addr ||
      addr_eq(from, from_len, (const struct sockaddr *)&ep->addr, ep->addr_len))
    heard(ep, ep->now);
  if (ep->z && urtp_zrtp_state(ep->z) == URTP_ZRTP_KEY_AGREEMENT) {
    urtp_zrtp_peer_srtp_ok(ep->z);
    after_call(ep);
    finish(ep);
    return;
  }
  pthread_mutex_unlock(&ep->lock);
}

void urtp_zrtp_ep_get_info(urtp_zrtp_ep_t *ep, urtp_zrtp_info_t *out)
{
  pthread_mutex_lock(&ep->lock);
  if (ep->z)
    urtp_zrtp_get_info(ep->z, out);
  else if (ep->have_last_info)
    *out = ep->last_info;
  else
    memset(out, 0, sizeof *out);
  pthread_mutex_unlock(&ep->lock);
}

void urtp_zrtp_ep_get_counters(urtp_zrtp_ep_t *ep, urtp_zrtp_ep_counters_t *out)
{
  pthread_mutex_lock(&ep->lock);
  *out = ep->counters;
  out->retransmits = ep->old_retransmits;
  if (ep->z) {
    urtp_zrtp_info_t info;
    urtp_zrtp_get_info(ep->z, &info);
    out->retransmits += info.stats.retransmits;
    wipe(&info, sizeof info);
  }
  pthread_mutex_unlock(&ep->lock);
}

void urtp_zrtp_ep_get_peer(urtp_zrtp_ep_t *ep, urtp_zrtp_ep_peer_t *out)
{
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&ep->lock);
  out->have_addr = ep->have_addr;
  if (ep->have_addr) {
    memcpy(&out->addr, &ep->addr, ep->addr_len);
    out->addr_len = ep->addr_len;
  }
  out->have_zid = ep->have_peer_zid;
  memcpy(out->zid, ep->peer_zid, URTP_ZRTP_ZID_LEN);
  out->alive = peer_alive(ep, now_of(ep));
  pthread_mutex_unlock(&ep->lock);
}

int urtp_zrtp_ep_get_keys(urtp_zrtp_ep_t *ep, urtp_zrtp_keys_t *out)
{
  pthread_mutex_lock(&ep->lock);
  int rc = ep->z ? urtp_zrtp_get_keys(ep->z, out) : -EAGAIN;
  pthread_mutex_unlock(&ep->lock);
  return rc;
}

int urtp_zrtp_ep_set_sas_verified(urtp_zrtp_ep_t *ep, bool verified)
{
  pthread_mutex_lock(&ep->lock);
  int rc = ep->z ? urtp_zrtp_set_sas_verified(ep->z, verified) : -EAGAIN;
  if (rc != -EAGAIN)
    ep->info_changed = true;
  ep->now = now_of(ep);
  finish(ep);
  return rc;
}

int urtp_zrtp_ep_send_udp(void *user, const uint8_t *pkt, size_t len,
                          const struct sockaddr *to, socklen_t to_len)
{
  int fd = (int)(intptr_t)user;
  ssize_t r = sendto(fd, pkt, len, MSG_DONTWAIT, to, to ? to_len : 0);
  /* an ICMP error for an earlier datagram is reported by this call, which
   * then sends nothing */
  if (r < 0 && errno == ECONNREFUSED)
    r = sendto(fd, pkt, len, MSG_DONTWAIT, to, to ? to_len : 0);
  return r < 0 ? -errno : 0;
}
