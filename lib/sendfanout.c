/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sendfanout.c - where the sending stream's packets go (sendstream.h,
 * "Clients"): the socket's remote, or each client of the table, every
 * packet made once and handed to the kernel once per copy; the counting
 * of what the kernel took; the clients' part in RTCP.
 */
#include "sendstream_priv.h"

/* --- the table ------------------------------------------------------------- */

void sendstream_clients_init(urtp_sendstream_t *ss)
{
  pthread_mutex_init(&ss->clients_lock, NULL);
  ss->send_dups = true;
  atomic_init(&ss->clients_gen, 0);
}

void sendstream_clients_free(urtp_sendstream_t *ss)
{
  pthread_mutex_destroy(&ss->clients_lock);
  free(ss->clients);
  free(ss->fan);
}

static int64_t wall_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The entry of addr among the first n, or NULL. clients_lock. */
static urtp_sendstream_client_t *find(urtp_sendstream_t *ss, const struct sockaddr_storage *a,
                                      size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (urtp_addr_equal(&ss->clients[i].addr, a))
      return &ss->clients[i];
  return NULL;
}

/* The table changed: the next flush applies it. clients_lock. */
static void changed(urtp_sendstream_t *ss)
{
  ss->clients_on = true;
  atomic_fetch_add(&ss->clients_gen, 1);
}

/* One addition of a (of the socket's family) with RTCP address r (family
 * 0: none). clients_lock. Returns the additions, or -ENOMEM. */
static int add_locked(urtp_sendstream_t *ss, const struct sockaddr_storage *a,
                      const struct sockaddr_storage *r)
{
  urtp_sendstream_client_t *c = find(ss, a, ss->nclients);
  if (c) {
    c->adds++;
    if (r->ss_family)
      c->rtcp = *r;
  } else {
    size_t all = ss->nclients + ss->ngone;
    if (all == ss->clients_cap) {
      size_t cap = ss->clients_cap ? 2 * ss->clients_cap : 8;
      urtp_sendstream_client_t *v = realloc(ss->clients, cap * sizeof *v);
      if (!v)
        return -ENOMEM;
      ss->clients = v;
      ss->clients_cap = cap;
    }
    /* a gone entry of the same address is forgotten: the new one counts
     * afresh, as multiudpsink's does */
    urtp_sendstream_client_t *g = find(ss, a, all);
    if (g) {
      memmove(g, g + 1, (size_t)(&ss->clients[all] - (g + 1)) * sizeof *g);
      ss->ngone--;
      all--;
    }
    /* present clients first: the new one goes before the gone ones */
    c = &ss->clients[ss->nclients];
    memmove(c + 1, c, ss->ngone * sizeof *c);
    *c = (urtp_sendstream_client_t){ .addr = *a, .rtcp = *r, .adds = 1, .added_ns = wall_ns() };
    ss->nclients++;
  }
  changed(ss);
  return (int)c->adds;
}

/* addr and rtcp in the socket's family into a and r; 0 or -EAFNOSUPPORT
 * / -EINVAL (no port). */
static int client_addrs(urtp_sendstream_t *ss, const struct sockaddr_storage *addr,
                        const struct sockaddr_storage *rtcp, struct sockaddr_storage *a,
                        struct sockaddr_storage *r)
{
  memset(r, 0, sizeof *r);
  if (urtp_addr_to_family(addr, ss->sock->family, a) < 0 ||
      (rtcp && rtcp->ss_family && urtp_addr_to_family(rtcp, ss->sock->family, r) < 0))
    return -EAFNOSUPPORT;
  return urtp_addr_port(a) ? 0 : -EINVAL;
}

int urtp_sendstream_add_client(urtp_sendstream_t *ss, const struct sockaddr_storage *addr,
                               const struct sockaddr_storage *rtcp)
{
  struct sockaddr_storage a, r;
  int e = client_addrs(ss, addr, rtcp, &a, &r);
  if (e < 0)
    return e;
  pthread_mutex_lock(&ss->clients_lock);
  e = add_locked(ss, &a, &r);
  pthread_mutex_unlock(&ss->clients_lock);
  return e;
}

/* Client i leaves the present ones, kept among the gone. clients_lock. */
static void gone(urtp_sendstream_t *ss, size_t i)
{
  urtp_sendstream_client_t c = ss->clients[i];
  c.adds = 0;
  c.removed_ns = wall_ns();
  size_t all = ss->nclients + ss->ngone;
  memmove(&ss->clients[i], &ss->clients[i + 1], (all - i - 1) * sizeof c);
  ss->nclients--;
  if (ss->ngone == URTP_SENDSTREAM_GONE_KEPT) {
    /* the oldest gone one gives way */
    memmove(&ss->clients[ss->nclients], &ss->clients[ss->nclients + 1],
            (ss->ngone - 1) * sizeof c);
    ss->ngone--;
  }
  ss->clients[ss->nclients + ss->ngone++] = c;
}

/* One addition of a taken back. clients_lock. Returns those left or
 * -ENOENT. */
static int remove_locked(urtp_sendstream_t *ss, const struct sockaddr_storage *a)
{
  urtp_sendstream_client_t *c = find(ss, a, ss->nclients);
  if (!c)
    return -ENOENT;
  int left = (int)--c->adds;
  if (!left)
    gone(ss, (size_t)(c - ss->clients));
  changed(ss);
  return left;
}

int urtp_sendstream_remove_client(urtp_sendstream_t *ss, const struct sockaddr_storage *addr)
{
  struct sockaddr_storage a;
  if (urtp_addr_to_family(addr, ss->sock->family, &a) < 0)
    return -ENOENT;
  pthread_mutex_lock(&ss->clients_lock);
  int left = remove_locked(ss, &a);
  pthread_mutex_unlock(&ss->clients_lock);
  return left;
}

int urtp_sendstream_replace_client(urtp_sendstream_t *ss, const struct sockaddr_storage *old,
                                   const struct sockaddr_storage *addr,
                                   const struct sockaddr_storage *rtcp)
{
  struct sockaddr_storage o, a, r;
  int e = client_addrs(ss, addr, rtcp, &a, &r);
  if (e < 0)
    return e;
  pthread_mutex_lock(&ss->clients_lock);
  /* added first: a failure leaves the old one in place */
  e = add_locked(ss, &a, &r);
  if (e >= 0 && old && urtp_addr_to_family(old, ss->sock->family, &o) == 0)
    remove_locked(ss, &o);
  pthread_mutex_unlock(&ss->clients_lock);
  return e;
}

void urtp_sendstream_clear_clients(urtp_sendstream_t *ss)
{
  pthread_mutex_lock(&ss->clients_lock);
  while (ss->nclients)
    gone(ss, 0);
  changed(ss);
  pthread_mutex_unlock(&ss->clients_lock);
}

void urtp_sendstream_set_send_duplicates(urtp_sendstream_t *ss, bool dups)
{
  pthread_mutex_lock(&ss->clients_lock);
  if (ss->send_dups != dups) {
    ss->send_dups = dups;
    atomic_fetch_add(&ss->clients_gen, 1);
  }
  pthread_mutex_unlock(&ss->clients_lock);
}

int urtp_sendstream_get_client(urtp_sendstream_t *ss, const struct sockaddr_storage *addr,
                               urtp_sendstream_client_t *out)
{
  struct sockaddr_storage a;
  if (urtp_addr_to_family(addr, ss->sock->family, &a) < 0)
    return -ENOENT;
  pthread_mutex_lock(&ss->clients_lock);
  urtp_sendstream_client_t *c = find(ss, &a, ss->nclients + ss->ngone);
  if (c)
    *out = *c;
  pthread_mutex_unlock(&ss->clients_lock);
  return c ? 0 : -ENOENT;
}

size_t urtp_sendstream_get_clients(urtp_sendstream_t *ss, urtp_sendstream_client_t *out,
                                   size_t max)
{
  pthread_mutex_lock(&ss->clients_lock);
  size_t n = ss->nclients;
  if (out)
    memcpy(out, ss->clients, (n < max ? n : max) * sizeof *out);
  pthread_mutex_unlock(&ss->clients_lock);
  return n;
}

/* --- the fan-out in effect ------------------------------------------------- */

size_t sendstream_fan_apply(urtp_sendstream_t *ss)
{
  unsigned gen = atomic_load(&ss->clients_gen);
  if (gen == ss->fan_gen)
    return ss->fan_on ? ss->nfan : 1;
  pthread_mutex_lock(&ss->clients_lock);
  size_t n = 0;
  for (size_t i = 0; i < ss->nclients; i++)
    n += ss->send_dups ? ss->clients[i].adds : 1;
  if (n > ss->fan_cap) {
    struct sockaddr_storage *v = realloc(ss->fan, n * sizeof *v);
    if (!v) {
      /* the old fan-out stays, and the next flush tries again */
      pthread_mutex_unlock(&ss->clients_lock);
      return ss->fan_on ? ss->nfan : 1;
    }
    ss->fan = v;
    ss->fan_cap = n;
  }
  ss->nfan = 0;
  for (size_t i = 0; i < ss->nclients; i++)
    for (unsigned k = 0; k < (ss->send_dups ? ss->clients[i].adds : 1u); k++)
      ss->fan[ss->nfan++] = ss->clients[i].addr;
  ss->fan_on = ss->clients_on;
  ss->fan_gen = gen;
  pthread_mutex_unlock(&ss->clients_lock);

  /* one unicast copy: connected, as a stream without clients; else not,
   * which a group needs anyway and several clients must have */
  bool one = ss->nfan == 1 && !urtp_addr_is_multicast(&ss->fan[0]);
  if (one && urtp_sock_set_remote(ss->sock, &ss->fan[0]) == 0) {
    ss->fan_connected = true;
  } else {
    urtp_sock_set_remote(ss->sock, NULL);
    ss->fan_connected = false;
  }
  return ss->nfan;
}

/* --- sending and counting --------------------------------------------------- */

/* Counts a finished send of b (urtp_sock_send's result r, `reported` ICMP
 * error reports among tx_errors): into the stream's packets and bytes when
 * `first` (each packet once), into client `to`'s when there is one (NULL:
 * no clients). Returns the packets the kernel did not take. Runs where the
 * send ran. stats_lock taken. */
static size_t count(urtp_sendstream_t *ss, const urtp_batch_t *b, int r, uint64_t reported,
                    bool first, const struct sockaddr_storage *to)
{
  const urtp_sock_t *s = ss->sock;
  size_t npkts = b->npkts;
  size_t sent = r == -EINTR ? s->tx_sent : r < 0 ? 0 : (size_t)r < npkts ? (size_t)r : npkts;
  uint64_t bytes = 0, unsent = r == -EINTR ? 0 : npkts - sent;
  /* the packets sent are always the first ones */
  for (size_t i = 0; i < sent; i++)
    bytes += b->pkts[i].len;
  int64_t t = now_ns();

  pthread_mutex_lock(&ss->stats_lock);
  if (first) {
    ss->st.packets += sent;
    ss->st.bytes += bytes;
    sendstream_meter_add(&ss->sent_meter, bytes, t);
  }
  ss->st.packets_served += sent;
  ss->st.bytes_served += bytes;
  ss->st.syscalls = s->tx_syscalls;
  ss->st.send_messages = s->tx_msgs;
  ss->st.tx_mode = s->tx_mode;
  if (r == -EINTR)
    ss->st.interrupts++;
  else
    ss->st.send_errors += unsent > reported ? unsent : reported;
  if (unsent)
    ss->st.last_error = r < 0 ? -r : EIO;
  else if (reported)
    ss->st.last_error = ECONNREFUSED;
  pthread_mutex_unlock(&ss->stats_lock);

  if (to) {
    pthread_mutex_lock(&ss->clients_lock);
    urtp_sendstream_client_t *c = find(ss, to, ss->nclients + ss->ngone);
    if (c) {
      c->packets += sent;
      c->bytes += bytes;
      c->send_errors += unsent;
    }
    pthread_mutex_unlock(&ss->clients_lock);
  }
  return unsent;
}

/* A send that left packets unsent (failed), or none: failing without a
 * break for fail_timeout_ns ends the stream. Returns 0 or -ETIMEDOUT. */
static int judge(urtp_sendstream_t *ss, bool failed)
{
  int ret = 0;
  pthread_mutex_lock(&ss->stats_lock);
  if (failed) {
    int64_t now = now_ns();
    if (!ss->fail_since)
      ss->fail_since = now;
    if (now - ss->fail_since >= ss->cfg.fail_timeout_ns)
      ret = -ETIMEDOUT;
  } else {
    ss->fail_since = 0;
  }
  pthread_mutex_unlock(&ss->stats_lock);
  return ret;
}

int sendstream_send_out(urtp_sendstream_t *ss, const urtp_batch_t *b, size_t *copy, size_t *off)
{
  urtp_sock_t *s = ss->sock;
  const bool fan = ss->fan_on && !ss->fan_connected;
  const size_t ncopies = !ss->fan_on ? 1 : ss->nfan;
  bool failed = false;
  for (; *copy < ncopies; (*copy)++, *off = 0) {
    urtp_batch_t view = *b;
    view.pkts += *off;
    view.npkts -= *off;
    const struct sockaddr_storage *to = ss->fan_on ? &ss->fan[*copy] : NULL;
    uint64_t e0 = s->tx_errors;
    ss->cc_copy = *copy;
    int r = fan ? urtp_sock_send_to(s, &view, to) : urtp_sock_send(s, &view);
    size_t sent = s->tx_sent;
    size_t unsent = count(ss, &view, r, s->tx_errors - e0, *copy == 0, to);
    if (r == -EINTR) {
      *off += sent;
      return -EINTR;
    }
    /* a client that cannot be reached is its own loss alone */
    failed |= unsent && !fan;
  }
  return judge(ss, failed);
}

/* --- RTCP ------------------------------------------------------------------- */

bool sendstream_clients_trust(urtp_sendstream_t *ss, const struct sockaddr_storage *from,
                              bool *trusted)
{
  pthread_mutex_lock(&ss->clients_lock);
  bool on = ss->clients_on;
  if (on) {
    *trusted = false;
    for (size_t i = 0; i < ss->nclients && !*trusted; i++)
      *trusted = urtp_addr_is_multicast(&ss->clients[i].addr) ||
                 urtp_addr_same_host(from, &ss->clients[i].addr);
  }
  pthread_mutex_unlock(&ss->clients_lock);
  return on;
}

int sendstream_clients_report(urtp_sendstream_t *ss, urtp_rtcpio_t *io, const uint8_t *buf,
                              size_t len)
{
  pthread_mutex_lock(&ss->clients_lock);
  int n = -1;
  if (ss->clients_on) {
    n = 0;
    /* sends that never wait: holding the lock over them is short */
    for (size_t i = 0; i < ss->nclients; i++)
      if (ss->clients[i].rtcp.ss_family && urtp_rtcpio_send_to(io, buf, len, &ss->clients[i].rtcp) >= 0)
        n++;
  }
  pthread_mutex_unlock(&ss->clients_lock);
  return n;
}

int sendstream_clients_nack_dest(urtp_sendstream_t *ss, const struct sockaddr_storage *from,
                                 struct sockaddr_storage *to)
{
  pthread_mutex_lock(&ss->clients_lock);
  const urtp_sendstream_client_t *hit = NULL, *host = NULL, *group = NULL;
  for (size_t i = 0; i < ss->nclients && !hit; i++) {
    const urtp_sendstream_client_t *c = &ss->clients[i];
    if (from && (urtp_addr_equal(from, &c->rtcp) || urtp_addr_equal(from, &c->addr)))
      hit = c;
    else if (from && !host && urtp_addr_same_host(from, &c->addr))
      host = c;
    else if (!group && urtp_addr_is_multicast(&c->addr))
      group = c;
  }
  /* a member of a group asks through the group: the repair goes there */
  const urtp_sendstream_client_t *c = hit ? hit : host ? host : group;
  if (c)
    *to = c->addr;
  int r = !ss->clients_on ? -1 : c != NULL;
  pthread_mutex_unlock(&ss->clients_lock);
  return r;
}

void sendstream_clients_count_rtx(urtp_sendstream_t *ss, const struct sockaddr_storage *to,
                                  uint64_t packets, uint64_t bytes)
{
  pthread_mutex_lock(&ss->clients_lock);
  urtp_sendstream_client_t *c = find(ss, to, ss->nclients);
  if (c) {
    c->rtx_packets += packets;
    c->bytes += bytes;
    c->packets += packets;
  }
  pthread_mutex_unlock(&ss->clients_lock);
}
