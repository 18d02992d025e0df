/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_net.c - batched UDP I/O over real loopback sockets.
 *
 * The stream tests send RTP-shaped traffic (runs of 1400-byte packets with
 * a shorter last one, and small packets) and a receiver thread checks that
 * every datagram arrives, in order, with its exact length and bytes. The
 * sender keeps at most WINDOW packets in flight, counted by the receiver,
 * so loopback never overflows the receive buffer and zero loss is asserted
 * without depending on timing.
 */
#include "urtp/net.h"
#include "urtp/pay.h"
#include "urtp/urtp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#ifndef SOL_UDP
#define SOL_UDP 17
#endif

#define HDR 8              /* test header: seq (32), len (16), 0xa5, seq & 0xff */
#define POOL (1u << 20)    /* payload bytes are taken from this random pool */
#define WINDOW 1024        /* packets in flight at most */
#define BATCH_MAX 256      /* packets per urtp_sock_send at most */
#define RECV_STALL_MS 20000 /* receiver gives up (test fails) after this */

static uint8_t pool[POOL];

static void pool_init(void)
{
  uint64_t seed = 0x5eed0001;
  for (size_t i = 0; i < POOL; i += 8) {
    uint64_t v = tap_rand(&seed);
    memcpy(pool + i, &v, 8);
  }
}

static size_t pool_off(uint32_t seq)
{
  return (size_t)((seq * 2654435761u) % (POOL - 1500));
}

static void wr32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint32_t rd32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Appends test packet `seq` of `len` bytes: header in the arena, payload
 * pointing into the pool, split in two iovecs for every third packet. */
static void add_pkt(urtp_batch_t *b, uint32_t seq, uint16_t len)
{
  urtp_batch_reserve(b, 1, 3);
  uint8_t *h = urtp_batch_arena_take(b, HDR);
  wr32(h, seq);
  h[4] = (uint8_t)(len >> 8);
  h[5] = (uint8_t)len;
  h[6] = 0xa5;
  h[7] = (uint8_t)seq;
  struct iovec *v = b->iov + b->niov;
  const uint8_t *pl = pool + pool_off(seq);
  size_t plen = (size_t)len - HDR;
  uint16_t n = 0;
  v[n++] = (struct iovec){ h, HDR };
  if (seq % 3 == 0 && plen >= 2) {
    v[n++] = (struct iovec){ (void *)pl, plen / 2 };
    v[n++] = (struct iovec){ (void *)(pl + plen / 2), plen - plen / 2 };
  } else {
    v[n++] = (struct iovec){ (void *)pl, plen };
  }
  urtp_batch_commit(b, n, len);
}

static bool pkt_ok(const uint8_t *d, size_t len, uint32_t seq, size_t want_len)
{
  return len == want_len && len >= HDR && rd32(d) == seq && d[4] == (uint8_t)(len >> 8) &&
         d[5] == (uint8_t)len && d[6] == 0xa5 && d[7] == (uint8_t)seq &&
         memcmp(d + HDR, pool + pool_off(seq), len - HDR) == 0;
}

/* Packet lengths shaped like video RTP: frames of 1..80 packets of 1400
 * bytes with a shorter (or equal) last one, and single small packets
 * (audio, parameter sets). frame_end marks where a frame ends. */
static void make_plan(uint16_t *lens, bool *frame_end, size_t n, uint64_t seed)
{
  size_t i = 0;
  while (i < n) {
    if (tap_rand(&seed) % 4 == 0) {
      lens[i] = (uint16_t)(20 + tap_rand(&seed) % 280);
      frame_end[i++] = true;
      continue;
    }
    size_t k = 1 + tap_rand(&seed) % 80;
    for (size_t m = 0; m < k && i < n; m++) {
      bool last = m == k - 1 || i == n - 1;
      lens[i] = last ? (uint16_t)(100 + tap_rand(&seed) % 1301) : 1400;
      frame_end[i++] = last;
    }
  }
}

/* --- stream test --------------------------------------------------------- */

typedef struct stream {
  urtp_sock_t *rx_sock;
  size_t n, slot, rx_batch;
  const uint16_t *lens;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t received;
  bool done;
  /* receiver results */
  size_t bad, first_bad_seq;
  int rx_err;
  uint64_t truncated;
} stream_t;

static void *stream_rx(void *arg)
{
  stream_t *st = arg;
  urtp_rx_t rx;
  if (urtp_rx_init(&rx, st->rx_batch, st->slot) < 0) {
    st->rx_err = -ENOMEM;
    goto out;
  }
  size_t expect = 0;
  while (expect < st->n) {
    int r = urtp_sock_recv(st->rx_sock, &rx, RECV_STALL_MS);
    if (r <= 0) {
      st->rx_err = r == 0 ? -ETIMEDOUT : r;
      break;
    }
    for (int i = 0; i < r; i++) {
      const urtp_dgram_t *d = &rx.dgrams[i];
      if (expect >= st->n || !pkt_ok(d->data, d->len, (uint32_t)expect, st->lens[expect])) {
        if (!st->bad++)
          st->first_bad_seq = expect;
        if (d->len >= 4)
          expect = rd32(d->data); /* resynchronise to count further damage */
      }
      expect++;
    }
    pthread_mutex_lock(&st->mu);
    st->received += (size_t)r;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
  }
  st->truncated = rx.truncated;
  urtp_rx_destroy(&rx);
out:
  pthread_mutex_lock(&st->mu);
  st->done = true;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
  return NULL;
}

typedef struct stream_opts {
  int family;
  urtp_io_mode_t tx, rx;
  size_t n;
  bool mcast;
  size_t rx_batch;
  uint64_t seed;
} stream_opts_t;

static void open_pair(const stream_opts_t *o, urtp_sock_t *rs, urtp_sock_t *ts, int *err)
{
  const char *lo = o->family == AF_INET6 ? "::1" : "127.0.0.1";
  const char *grp = "239.255.77.1";
  urtp_sock_config_t rc = {
    .bind_addr = o->mcast ? grp : lo,
    .multicast_iface = o->mcast ? "lo" : NULL,
    .dscp = -1,
    .rcvbuf = 8 << 20,
    .rx_mode = o->rx,
    .tx_mode = URTP_IO_MMSG,
  };
  *err = urtp_sock_open(rs, &rc);
  if (*err < 0)
    return;
  urtp_sock_config_t tc = {
    .remote_addr = o->mcast ? grp : lo,
    .remote_port = (uint16_t)urtp_sock_local_port(rs),
    .multicast_iface = o->mcast ? "lo" : NULL,
    .ttl_mc = 1,
    .multicast_loop = true,
    .dscp = 46,
    .sndbuf = 8 << 20,
    .tx_mode = o->tx,
    .rx_mode = URTP_IO_MMSG,
  };
  *err = urtp_sock_open(ts, &tc);
  if (*err < 0)
    urtp_sock_close(rs);
}

static void run_stream(const stream_opts_t *o)
{
  urtp_sock_t rs, ts;
  int err;
  open_pair(o, &rs, &ts, &err);
  REQUIRE(err == 0);
  CHECK_EQ(ts.tx_mode, o->tx);
  CHECK_EQ(rs.rx_mode, o->rx);
  CHECK_EQ(ts.family, o->family);

  uint16_t *lens = calloc(o->n, sizeof(*lens));
  bool *frame_end = calloc(o->n, sizeof(*frame_end));
  REQUIRE(lens && frame_end);
  make_plan(lens, frame_end, o->n, o->seed);

  stream_t st = {
    .rx_sock = &rs, .n = o->n, .lens = lens,
    .slot = o->rx == URTP_IO_GRO ? 65536 : 2048,
    .rx_batch = o->rx_batch ? o->rx_batch : 64,
  };
  pthread_mutex_init(&st.mu, NULL);
  pthread_cond_init(&st.cv, NULL);
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, stream_rx, &st) == 0);

  urtp_batch_t b;
  urtp_batch_init(&b);
  size_t i = 0, send_fail = 0;
  bool stopped = false;
  while (i < o->n && !stopped) {
    /* whole frames, up to BATCH_MAX packets */
    size_t end = i;
    while (end < o->n) {
      size_t f = end;
      while (f < o->n && !frame_end[f])
        f++;
      if (f + 1 - i > BATCH_MAX && end > i)
        break;
      end = f + 1;
      if (end - i >= BATCH_MAX / 2)
        break;
    }
    if (end - i > BATCH_MAX)
      end = i + BATCH_MAX;
    pthread_mutex_lock(&st.mu);
    while (end - st.received > WINDOW && !st.done)
      pthread_cond_wait(&st.cv, &st.mu);
    stopped = st.done;
    pthread_mutex_unlock(&st.mu);
    urtp_batch_clear(&b);
    for (size_t j = i; j < end; j++)
      add_pkt(&b, (uint32_t)j, lens[j]);
    int r = urtp_sock_send(&ts, &b);
    if (r != (int)(end - i) && !send_fail++)
      printf("#   send at %zu returned %d\n", i, r);
    i = end;
  }
  pthread_join(th, NULL);

  CHECK_EQ(send_fail, 0);
  CHECK_EQ(st.rx_err, 0);
  CHECK_EQ(st.received, o->n);
  CHECK_EQ(st.bad, 0);
  if (st.bad)
    printf("#   first bad datagram at seq %zu\n", st.first_bad_seq);
  CHECK_EQ(st.truncated, 0);
  CHECK_EQ(ts.tx_errors, 0);
  CHECK_EQ(ts.tx_mode, o->tx); /* no fallback on loopback */
  printf("# %s %s -> %s: %zu packets, %" PRIu64 " send calls, %" PRIu64 " receive calls\n",
         o->mcast ? "mcast" : o->family == AF_INET6 ? "ipv6" : "ipv4",
         urtp_io_mode_name(o->tx), urtp_io_mode_name(o->rx), o->n, ts.tx_syscalls,
         rs.rx_syscalls);

  urtp_batch_free(&b);
  pthread_mutex_destroy(&st.mu);
  pthread_cond_destroy(&st.cv);
  free(lens);
  free(frame_end);
  urtp_sock_close(&ts);
  urtp_sock_close(&rs);
}

#define STREAM(name, fam, txm, rxm, count, ...)                                   \
  static void name(void)                                                        \
  {                                                                             \
    stream_opts_t o = { .family = fam, .tx = txm, .rx = rxm, .n = count,         \
                        .seed = __LINE__, __VA_ARGS__ };                        \
    run_stream(&o);                                                             \
  }

/* every send mode into MMSG receive, every receive mode from GSO / MMSG */
STREAM(test_stream_gso_mmsg, AF_INET, URTP_IO_GSO, URTP_IO_MMSG, 100000)
STREAM(test_stream_mmsg_mmsg, AF_INET, URTP_IO_MMSG, URTP_IO_MMSG, 100000)
STREAM(test_stream_plain_mmsg, AF_INET, URTP_IO_PLAIN, URTP_IO_MMSG, 100000)
STREAM(test_stream_gso_gro, AF_INET, URTP_IO_GSO, URTP_IO_GRO, 100000)
STREAM(test_stream_mmsg_gro, AF_INET, URTP_IO_MMSG, URTP_IO_GRO, 100000)
STREAM(test_stream_gso_plain, AF_INET, URTP_IO_GSO, URTP_IO_PLAIN, 100000)
/* GRO receive with one slot per call: GSO buffers of up to 64 segments
 * fill rx->dgrams exactly */
STREAM(test_stream_gso_gro_batch1, AF_INET, URTP_IO_GSO, URTP_IO_GRO, 20000, .rx_batch = 1)
STREAM(test_stream_ipv6_gso_gro, AF_INET6, URTP_IO_GSO, URTP_IO_GRO, 30000)
STREAM(test_stream_ipv6_mmsg_mmsg, AF_INET6, URTP_IO_MMSG, URTP_IO_MMSG, 30000)
STREAM(test_stream_mcast_gso_mmsg, AF_INET, URTP_IO_GSO, URTP_IO_MMSG, 20000, .mcast = true)
STREAM(test_stream_mcast_mmsg_gro, AF_INET, URTP_IO_MMSG, URTP_IO_GRO, 20000, .mcast = true)

/* --- helpers for the small tests ---------------------------------------- */

static int open_rx(urtp_sock_t *s, const char *addr, urtp_io_mode_t rx)
{
  urtp_sock_config_t c = { .bind_addr = addr, .dscp = -1, .rcvbuf = 4 << 20, .rx_mode = rx };
  return urtp_sock_open(s, &c);
}

static int open_tx(urtp_sock_t *s, const char *addr, int port, urtp_io_mode_t tx)
{
  urtp_sock_config_t c = {
    .remote_addr = addr, .remote_port = (uint16_t)port, .dscp = -1, .tx_mode = tx,
  };
  return urtp_sock_open(s, &c);
}

/* Receives until `want` datagrams (copied to out) or a quiet timeout. */
static size_t recv_n(urtp_sock_t *s, urtp_rx_t *rx, size_t want, uint8_t (*out)[2048],
                     size_t *out_len)
{
  size_t got = 0;
  while (got < want) {
    int r = urtp_sock_recv(s, rx, 5000);
    if (r <= 0)
      break;
    for (int i = 0; i < r; i++, got++)
      if (got < want) {
        const urtp_dgram_t *d = &rx->dgrams[i];
        out_len[got] = d->len;
        memcpy(out[got], d->data, d->len < 2048 ? d->len : 2048);
      }
  }
  return got;
}

/* --- small tests ---------------------------------------------------------- */

static void test_modes_and_names(void)
{
  urtp_sock_t s;
  urtp_sock_config_t c = { .bind_addr = "127.0.0.1", .dscp = -1 };
  REQUIRE(urtp_sock_open(&s, &c) == 0);
  /* this kernel (>= 5.0) has both */
  CHECK_EQ(s.tx_mode, URTP_IO_GSO);
  CHECK_EQ(s.rx_mode, URTP_IO_GRO);
  CHECK_EQ(s.gso_max_segs, 64);
  CHECK_EQ(s.family, AF_INET);
  CHECK_EQ(s.remote_len, 0);
  CHECK(urtp_sock_local_port(&s) > 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  add_pkt(&b, 0, 100);
  CHECK_EQ(urtp_sock_send(&s, &b), -EDESTADDRREQ);
  urtp_batch_free(&b);
  urtp_sock_close(&s);
  urtp_sock_close(&s); /* idempotent */

  CHECK(strcmp(urtp_io_mode_name(URTP_IO_AUTO), "auto") == 0);
  CHECK(strcmp(urtp_io_mode_name(URTP_IO_GSO), "gso") == 0);
  CHECK(strcmp(urtp_io_mode_name(URTP_IO_GRO), "gro") == 0);
  CHECK(strcmp(urtp_io_mode_name(URTP_IO_MMSG), "mmsg") == 0);
  CHECK(strcmp(urtp_io_mode_name(URTP_IO_PLAIN), "plain") == 0);
}

static void test_open_errors(void)
{
  urtp_sock_t s;
  urtp_sock_config_t c = { .bind_addr = "not an address!", .dscp = -1 };
  CHECK_EQ(urtp_sock_open(&s, &c), -EINVAL);
  CHECK_EQ(s.fd, -1);
  urtp_sock_config_t c2 = { .bind_addr = "127.0.0.1", .remote_addr = "::1", .remote_port = 9,
                            .dscp = -1 };
  CHECK_EQ(urtp_sock_open(&s, &c2), -EINVAL); /* families differ */
  urtp_sock_config_t c3 = { .bind_addr = "127.0.0.1", .dscp = 64 };
  CHECK_EQ(urtp_sock_open(&s, &c3), -EINVAL);
  urtp_sock_config_t c4 = { .bind_addr = "127.0.0.1", .dscp = -1, .tx_mode = URTP_IO_GRO };
  CHECK_EQ(urtp_sock_open(&s, &c4), -EINVAL);
  urtp_sock_config_t c5 = { .remote_addr = "239.255.77.2", .remote_port = 5000, .dscp = -1,
                            .multicast_iface = "no-such-if0" };
  CHECK_EQ(urtp_sock_open(&s, &c5), -ENODEV);

  /* a port in use, then shared with reuse on both */
  urtp_sock_t a, b2;
  REQUIRE(open_rx(&a, "127.0.0.1", URTP_IO_MMSG) == 0);
  urtp_sock_config_t c6 = { .bind_addr = "127.0.0.1",
                            .bind_port = (uint16_t)urtp_sock_local_port(&a), .dscp = -1 };
  CHECK_EQ(urtp_sock_open(&b2, &c6), -EADDRINUSE);
  urtp_sock_close(&a);
  urtp_sock_config_t c7 = { .bind_addr = "127.0.0.1", .dscp = -1, .reuse = true };
  REQUIRE(urtp_sock_open(&a, &c7) == 0);
  c7.bind_port = (uint16_t)urtp_sock_local_port(&a);
  CHECK_EQ(urtp_sock_open(&b2, &c7), 0);
  urtp_sock_close(&b2);
  urtp_sock_close(&a);

  /* names are resolved; NULL bind takes the remote's family */
  urtp_sock_config_t c8 = { .remote_addr = "localhost", .remote_port = 9, .dscp = 10,
                            .ttl = 7 };
  REQUIRE(urtp_sock_open(&s, &c8) == 0);
  CHECK(s.family == AF_INET || s.family == AF_INET6);
  CHECK_EQ(s.remote.ss_family, s.family);
  if (s.family == AF_INET) {
    int tos = 0, ttl = 0;
    socklen_t tl = sizeof(tos);
    getsockopt(s.fd, IPPROTO_IP, IP_TOS, &tos, &tl);
    CHECK_EQ(tos, 10 << 2);
    getsockopt(s.fd, IPPROTO_IP, IP_TTL, &ttl, &tl);
    CHECK_EQ(ttl, 7);
  }
  urtp_sock_close(&s);
  urtp_sock_config_t c9 = { .remote_addr = "::1", .remote_port = 9, .dscp = 10, .ttl = 7 };
  REQUIRE(urtp_sock_open(&s, &c9) == 0);
  CHECK_EQ(s.family, AF_INET6);
  int tclass = 0;
  socklen_t l = sizeof(tclass);
  getsockopt(s.fd, IPPROTO_IPV6, IPV6_TCLASS, &tclass, &l);
  CHECK_EQ(tclass, 10 << 2);
  int hops = 0;
  getsockopt(s.fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &hops, &l);
  CHECK_EQ(hops, 7);
  urtp_sock_close(&s);
}

static long read_sysctl(const char *path)
{
  FILE *f = fopen(path, "r");
  long v = -1;
  if (f) {
    if (fscanf(f, "%ld", &v) != 1)
      v = -1;
    fclose(f);
  }
  return v;
}

static void test_buffer_sizes(void)
{
  urtp_sock_t s;
  urtp_sock_config_t c = { .bind_addr = "127.0.0.1", .dscp = -1 };
  REQUIRE(urtp_sock_open(&s, &c) == 0);
  CHECK(s.sndbuf > 0);
  CHECK(s.rcvbuf > 0);
  urtp_sock_close(&s);

  /* past the sysctl limits: only SO_[RS]NDBUFFORCE gets there */
  long rmax = read_sysctl("/proc/sys/net/core/rmem_max");
  long wmax = read_sysctl("/proc/sys/net/core/wmem_max");
  REQUIRE(rmax > 0 && wmax > 0);
  c.rcvbuf = (int)(3 * rmax);
  c.sndbuf = (int)(3 * wmax);
  REQUIRE(urtp_sock_open(&s, &c) == 0);
  if (geteuid() == 0) {
    CHECK(s.rcvbuf >= c.rcvbuf);
    CHECK(s.sndbuf >= c.sndbuf);
  } else {
    CHECK(s.rcvbuf > 0 && s.rcvbuf <= 2 * rmax);
  }
  printf("# asked %d/%d, kernel reports rcvbuf %d sndbuf %d\n", c.rcvbuf, c.sndbuf, s.rcvbuf,
         s.sndbuf);
  urtp_sock_close(&s);
}

typedef struct waiter {
  urtp_sock_t *s;
  int result;
} waiter_t;

static void *wait_forever(void *arg)
{
  waiter_t *w = arg;
  urtp_rx_t rx;
  if (urtp_rx_init(&rx, 4, 2048) < 0) {
    w->result = -ENOMEM;
    return NULL;
  }
  w->result = urtp_sock_recv(w->s, &rx, -1);
  urtp_rx_destroy(&rx);
  return NULL;
}

static void test_wake_and_timeout(void)
{
  urtp_sock_t s;
  REQUIRE(open_rx(&s, "127.0.0.1", URTP_IO_MMSG) == 0);
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 4, 2048) == 0);

  CHECK_EQ(urtp_sock_recv(&s, &rx, 0), 0);
  CHECK_EQ(urtp_sock_recv(&s, &rx, 30), 0);

  /* a thread blocked without timeout is woken; the wake stays set until
   * unwake (whether or not it came before the thread began to wait) */
  waiter_t w = { &s, 1 };
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, wait_forever, &w) == 0);
  struct timespec ts = { 0, 20 * 1000 * 1000 };
  nanosleep(&ts, NULL); /* most likely blocked by now; correct either way */
  urtp_sock_wake(&s);
  pthread_join(th, NULL);
  CHECK_EQ(w.result, -EINTR);
  CHECK_EQ(urtp_sock_recv(&s, &rx, -1), -EINTR);
  CHECK_EQ(urtp_sock_recv(&s, &rx, 0), -EINTR);
  urtp_sock_unwake(&s);
  CHECK_EQ(urtp_sock_recv(&s, &rx, 0), 0);
  urtp_sock_wake(&s);
  urtp_sock_wake(&s);
  urtp_sock_unwake(&s); /* drains both */
  CHECK_EQ(urtp_sock_recv(&s, &rx, 10), 0);
  urtp_sock_unwake(&s); /* nothing pending: harmless */
  CHECK_EQ(urtp_sock_recv(&s, &rx, 0), 0);

  urtp_rx_destroy(&rx);
  urtp_sock_close(&s);
}

/* A receive that fills the whole batch makes the next one take what is
 * queued without polling first: the datagrams still come out whole and in
 * order, rx.full says so, and once the queue is empty the call waits (a
 * timeout, or a wake-up) as before. */
static void test_full_batch_then_empty(void)
{
  urtp_sock_t r, t;
  REQUIRE(open_rx(&r, "127.0.0.1", URTP_IO_MMSG) == 0);
  REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_MMSG) == 0);
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 4, 2048) == 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  for (uint32_t i = 0; i < 10; i++)
    add_pkt(&b, 100 + i, (uint16_t)(200 + 10 * i));
  CHECK_EQ(urtp_sock_send(&t, &b), 10);

  static const int want[3] = { 4, 4, 2 };
  uint32_t seq = 100;
  for (int k = 0; k < 3; k++) {
    int n = urtp_sock_recv(&r, &rx, 1000);
    CHECK_EQ(n, want[k]);
    CHECK_EQ(rx.full, n == 4);
    for (int i = 0; i < n && n > 0; i++, seq++)
      CHECK(pkt_ok(rx.dgrams[i].data, rx.dgrams[i].len, seq, 200 + 10 * (seq - 100)));
  }
  CHECK_EQ(seq, 110);
  CHECK_EQ(r.rx_syscalls, 3);

  /* full again, then nothing queued: a timeout as before */
  urtp_batch_clear(&b);
  for (uint32_t i = 0; i < 4; i++)
    add_pkt(&b, 200 + i, 300);
  CHECK_EQ(urtp_sock_send(&t, &b), 4);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 1000), 4);
  CHECK(rx.full);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 10), 0);
  CHECK(!rx.full);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 0), 0);

  /* a wake-up pending while a full batch's successor is queued: the data
   * comes first (no wait, so nothing to interrupt), then the call that
   * would wait is woken */
  CHECK_EQ(urtp_sock_send(&t, &b), 4);
  CHECK_EQ(urtp_sock_send(&t, &b), 4);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 1000), 4);
  urtp_sock_wake(&r);
  CHECK_EQ(urtp_sock_recv(&r, &rx, -1), 4);
  CHECK(pkt_ok(rx.dgrams[3].data, rx.dgrams[3].len, 203, 300));
  CHECK_EQ(urtp_sock_recv(&r, &rx, -1), -EINTR);
  urtp_sock_unwake(&r);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 0), 0);

  urtp_batch_free(&b);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&t);
  urtp_sock_close(&r);
}

static int64_t real_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Kernel receive timestamps, in each receive mode: off, every datagram
 * carries 0; on, the real time the kernel took it: after it was sent,
 * before it was read, and in order (the second of two sent 20 ms apart
 * and read together is stamped 20 ms later, though read at once). */
static void timestamps_case(urtp_io_mode_t rxm)
{
  urtp_sock_t r, t;
  REQUIRE(open_rx(&r, "127.0.0.1", rxm) == 0);
  REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_PLAIN) == 0);
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 8, 65536) == 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  add_pkt(&b, 1, 200);
  CHECK_EQ(urtp_sock_send(&t, &b), 1);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 1000), 1);
  CHECK_EQ(rx.dgrams[0].stamp_ns, 0);

  CHECK_EQ(urtp_sock_set_rx_timestamps(&r, true), 0);
  CHECK(r.rx_timestamps);
  /* the kernel turns its receive stamping on a moment later (a deferred
   * switch): until then a datagram is stamped when read */
  struct timespec settle = { 0, 50000000 };
  nanosleep(&settle, NULL);
  int64_t t0 = real_ns();
  CHECK_EQ(urtp_sock_send(&t, &b), 1);
  struct timespec gap = { 0, 20000000 };
  nanosleep(&gap, NULL);
  CHECK_EQ(urtp_sock_send(&t, &b), 1);
  nanosleep(&gap, NULL);
  int64_t t1 = real_ns();
  size_t got = 0;
  int64_t stamps[2] = { 0, 0 };
  while (got < 2) {
    int n = urtp_sock_recv(&r, &rx, 1000);
    REQUIRE(n > 0);
    for (int i = 0; i < n && got < 2; i++)
      stamps[got++] = rx.dgrams[i].stamp_ns;
  }
  CHECK(stamps[0] >= t0 && stamps[0] <= t1);
  CHECK(stamps[1] >= stamps[0] + 15000000 && stamps[1] <= t1);

  CHECK_EQ(urtp_sock_set_rx_timestamps(&r, false), 0);
  CHECK_EQ(urtp_sock_send(&t, &b), 1);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 1000), 1);
  CHECK_EQ(rx.dgrams[0].stamp_ns, 0);
  urtp_batch_free(&b);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&t);
  urtp_sock_close(&r);
}

static void test_rx_timestamps(void)
{
  timestamps_case(URTP_IO_PLAIN);
  timestamps_case(URTP_IO_MMSG);
  timestamps_case(URTP_IO_GRO);
}

static void truncation_case(urtp_io_mode_t rxm)
{
  urtp_sock_t r, t;
  REQUIRE(open_rx(&r, "127.0.0.1", rxm) == 0);
  REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_MMSG) == 0);
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 8, 512) == 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  add_pkt(&b, 1, 1000); /* larger than a slot */
  add_pkt(&b, 2, 100);
  add_pkt(&b, 3, 512); /* exactly a slot */
  add_pkt(&b, 4, 513);
  add_pkt(&b, 5, 40);
  CHECK_EQ(urtp_sock_send(&t, &b), 5);
  static uint8_t got[8][2048];
  size_t len[8];
  CHECK_EQ(recv_n(&r, &rx, 3, got, len), 3);
  CHECK(pkt_ok(got[0], len[0], 2, 100));
  CHECK(pkt_ok(got[1], len[1], 3, 512));
  CHECK(pkt_ok(got[2], len[2], 5, 40));
  CHECK_EQ(rx.truncated, 2);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 0), 0);
  urtp_batch_free(&b);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&t);
  urtp_sock_close(&r);
}

/* A receive buffer too small for a burst: the kernel drops datagrams, and
 * its count (SO_RXQ_OVFL) accounts for every one of them exactly, once a
 * datagram after the drops has been read. */
static void kernel_drops_case(urtp_io_mode_t rxm)
{
  urtp_sock_t r, t;
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .dscp = -1, .rcvbuf = 4096, .rx_mode = rxm };
  REQUIRE(urtp_sock_open(&r, &rc) == 0);
  CHECK(r.drops_reported);
  REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_MMSG) == 0);
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 16, 65536) == 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  for (uint32_t i = 0; i < 500; i++)
    add_pkt(&b, i, 1000);
  CHECK_EQ(urtp_sock_send(&t, &b), 500);
  size_t got = 0;
  int n;
  while ((n = urtp_sock_recv(&r, &rx, 0)) > 0)
    got += (size_t)n;
  /* one more, to carry the count of drops after the last datagram read */
  urtp_batch_clear(&b);
  add_pkt(&b, 500, 100);
  CHECK_EQ(urtp_sock_send(&t, &b), 1);
  while ((n = urtp_sock_recv(&r, &rx, 1000)) > 0) {
    got += (size_t)n;
    if (urtp_sock_recv(&r, &rx, 0) <= 0)
      break;
  }
  printf("# %s: %zu received, %llu dropped by the kernel\n", urtp_io_mode_name(r.rx_mode), got,
         (unsigned long long)rx.kernel_drops);
  CHECK(rx.kernel_drops > 0);
  CHECK_EQ(got + rx.kernel_drops, 501);
  urtp_batch_free(&b);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&t);
  urtp_sock_close(&r);
}

/* Receive memory that follows the stream: a few datagrams leave the
 * starting sizes alone; a burst that queues past half the kernel buffer
 * grows the buffer and the batch at the first full batch; reported drops
 * grow them up to the maxima, where nothing grows further. Every datagram
 * of the burst is read (the batch slots that grew are used). */
static void test_rx_auto(void)
{
  urtp_sock_t r, t;
  REQUIRE(open_rx(&r, "127.0.0.1", URTP_IO_MMSG) == 0);
  REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_MMSG) == 0);
  urtp_rx_t rx;
  urtp_rx_auto_t a;
  REQUIRE(urtp_rx_init(&rx, 64, 65536) == 0);
  urtp_rx_auto_start(&a, &r, &rx);
  CHECK_EQ(rx.batch, URTP_RX_AUTO_BATCH);
  int start = r.rcvbuf;
  printf("# start: %d bytes, batch %zu%s\n", start, rx.batch,
         a.rcvbuf_max ? " (rmem_max: no growth)" : "");
  CHECK(start >= URTP_RX_AUTO_RCVBUF || a.rcvbuf_max);

  urtp_batch_t b;
  urtp_batch_init(&b);
  for (uint32_t i = 0; i < 5; i++)
    add_pkt(&b, i, 1000);
  CHECK_EQ(urtp_sock_send(&t, &b), 5);
  int n = urtp_sock_recv(&r, &rx, 1000);
  CHECK_EQ(n, 5);
  CHECK(!urtp_rx_auto_update(&a, &r, &rx));
  CHECK_EQ(rx.batch, URTP_RX_AUTO_BATCH);
  CHECK_EQ(r.rcvbuf, start);

  /* a burst of about 1.5 times the buffer's half (kernel overhead
   * included: each datagram is charged more than its bytes) */
  urtp_batch_clear(&b);
  uint32_t burst = (uint32_t)(start / 2 / 1200) + 64;
  for (uint32_t i = 0; i < burst; i++)
    add_pkt(&b, i, 1200);
  CHECK_EQ(urtp_sock_send(&t, &b), (int)burst);
  size_t got = 0;
  bool grew_first = false;
  for (int k = 0; (n = urtp_sock_recv(&r, &rx, 0)) > 0; k++) {
    got += (size_t)n;
    bool grew = urtp_rx_auto_update(&a, &r, &rx);
    if (k == 0)
      grew_first = grew;
  }
  printf("# burst of %u: %zu read (%llu dropped), now %d bytes, batch %zu, grew %u times\n",
         burst, got, (unsigned long long)rx.kernel_drops, r.rcvbuf, rx.batch, a.grows);
  CHECK_EQ(got + rx.kernel_drops, burst);
  CHECK(grew_first);
  CHECK(rx.batch > URTP_RX_AUTO_BATCH);
  CHECK(r.rcvbuf > start || a.rcvbuf_max);

  /* drops, as the kernel reports them, until nothing can grow */
  for (int k = 0; k < 16 && !urtp_rx_auto_at_max(&a, &rx); k++) {
    rx.kernel_drops++;
    CHECK(urtp_rx_auto_update(&a, &r, &rx));
  }
  CHECK(urtp_rx_auto_at_max(&a, &rx));
  CHECK_EQ(rx.batch, 64);
  CHECK(r.rcvbuf <= 2 * URTP_RX_AUTO_RCVBUF_MAX);
  if (!a.rcvbuf_max || r.rcvbuf >= 2 * URTP_RX_AUTO_RCVBUF_MAX)
    CHECK_EQ(r.rcvbuf, 2 * URTP_RX_AUTO_RCVBUF_MAX);
  rx.kernel_drops++;
  CHECK(!urtp_rx_auto_update(&a, &r, &rx));
  urtp_batch_free(&b);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&t);
  urtp_sock_close(&r);
}

static void test_kernel_drops_mmsg(void) { kernel_drops_case(URTP_IO_MMSG); }
static void test_kernel_drops_plain(void) { kernel_drops_case(URTP_IO_PLAIN); }
static void test_kernel_drops_gro(void) { kernel_drops_case(URTP_IO_GRO); }

static void test_truncated_mmsg(void) { truncation_case(URTP_IO_MMSG); }
static void test_truncated_plain(void) { truncation_case(URTP_IO_PLAIN); }
static void test_truncated_gro(void) { truncation_case(URTP_IO_GRO); }

/* A GSO buffer larger than a GRO slot: the whole segments in the slot are
 * delivered, the rest counted as truncated. */
static void test_truncated_gro_buffer(void)
{
  urtp_sock_t r, t;
  REQUIRE(open_rx(&r, "127.0.0.1", URTP_IO_GRO) == 0);
  REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_GSO) == 0);
  REQUIRE(r.rx_mode == URTP_IO_GRO && t.tx_mode == URTP_IO_GSO);
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 8, 4096) == 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  for (uint32_t i = 0; i < 10; i++)
    add_pkt(&b, i, i < 9 ? 1000 : 300); /* one GSO send of 9300 bytes */
  add_pkt(&b, 10, 77);                  /* then a datagram of its own */
  CHECK_EQ(urtp_sock_send(&t, &b), 11);
  CHECK_EQ(t.tx_syscalls, 1);
  static uint8_t got[8][2048];
  size_t len[8];
  CHECK_EQ(recv_n(&r, &rx, 5, got, len), 5);
  for (uint32_t i = 0; i < 4; i++)
    CHECK(pkt_ok(got[i], len[i], i, 1000));
  CHECK(pkt_ok(got[4], len[4], 10, 77));
  CHECK_EQ(rx.truncated, 6);
  urtp_batch_free(&b);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&t);
  urtp_sock_close(&r);
}

/* One GRO buffer of 128 segments does not fit rx->dgrams of a one-slot rx
 * (64 entries): the rest comes from the next call, without a system call. */
static void test_gro_carry_over(void)
{
  urtp_sock_t r;
  REQUIRE(open_rx(&r, "127.0.0.1", URTP_IO_GRO) == 0);
  REQUIRE(r.rx_mode == URTP_IO_GRO);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)urtp_sock_local_port(&r)) };
  static uint8_t buf[128 * 100 + 30];
  for (uint32_t i = 0; i < 129; i++) {
    uint8_t *p = buf + i * 100;
    uint16_t l = i < 128 ? 100 : 30;
    wr32(p, i);
    p[4] = 0;
    p[5] = (uint8_t)l;
    p[6] = 0xa5;
    p[7] = (uint8_t)i;
    memcpy(p + HDR, pool + pool_off(i), (size_t)l - HDR);
  }
  /* 128 segments is the limit since Linux 6.10; older kernels stop at 64 */
  int gs = 100;
  setsockopt(fd, SOL_UDP, UDP_SEGMENT, &gs, sizeof(gs));
  ssize_t sent = sendto(fd, buf, 128 * 100, 0, (struct sockaddr *)&to, sizeof(to));
  size_t nseg = 128;
  if (sent < 0 && errno == EINVAL) {
    nseg = 64;
    sent = sendto(fd, buf, 64 * 100, 0, (struct sockaddr *)&to, sizeof(to));
    printf("# kernel allows 64 segments per GSO send\n");
  }
  REQUIRE(sent == (ssize_t)(nseg * 100));
  gs = 0;
  setsockopt(fd, SOL_UDP, UDP_SEGMENT, &gs, sizeof(gs));
  /* a plain datagram behind it */
  REQUIRE(sendto(fd, buf + 128 * 100, 30, 0, (struct sockaddr *)&to, sizeof(to)) == 30);
  memmove(buf + nseg * 100, buf + 128 * 100, 30);
  wr32(buf + nseg * 100, (uint32_t)nseg);
  buf[nseg * 100 + 7] = (uint8_t)nseg;
  memcpy(buf + nseg * 100 + HDR, pool + pool_off((uint32_t)nseg), 30 - HDR);

  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 1, 65536) == 0);
  CHECK_EQ(rx.dgrams_cap, 64);
  size_t seq = 0;
  uint64_t calls_before = 0;
  int rounds = 0;
  while (seq < nseg + 1 && rounds++ < 10) {
    calls_before = r.rx_syscalls;
    int n = urtp_sock_recv(&r, &rx, 5000);
    if (n <= 0)
      break;
    if (seq == 64)
      CHECK_EQ(r.rx_syscalls, calls_before); /* handed out from the slot */
    for (int i = 0; i < n; i++, seq++) {
      size_t want = seq < nseg ? 100 : 30;
      CHECK(pkt_ok(rx.dgrams[i].data, rx.dgrams[i].len, (uint32_t)seq, want));
    }
  }
  CHECK_EQ(seq, nseg + 1);
  CHECK_EQ(rx.truncated, 0);
  CHECK_EQ(urtp_sock_recv(&r, &rx, 0), 0);
  close(fd);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&r);
}

/* A raw UDP socket on loopback with UDP_GRO, so that each GSO send arrives
 * as one buffer, and a urtp GSO socket *t sending to it. Returns the raw
 * socket, or -1. */
static int open_gro_pair(urtp_sock_t *t)
{
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0)
    return -1;
  int one = 1, big = 16 << 20;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  socklen_t al = sizeof(a);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
  if (setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) < 0 ||
      bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
      getsockname(fd, (struct sockaddr *)&a, &al) < 0 ||
      open_tx(t, "127.0.0.1", ntohs(a.sin_port), URTP_IO_GSO) < 0) {
    close(fd);
    return -1;
  }
  if (t->tx_mode != URTP_IO_GSO) {
    urtp_sock_close(t);
    close(fd);
    return -1;
  }
  return fd;
}

/* GSO runs are cut at gso_max_segs and at the 64 KiB payload limit: a raw
 * GRO socket sees each send as one buffer and reports its segment size. */
static void test_gso_split(void)
{
  urtp_sock_t t;
  int fd = open_gro_pair(&t);
  REQUIRE(fd >= 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  uint32_t seq = 0;
  for (int i = 0; i < 200; i++) /* 46 x 1400 = 64400 fits, 47 would not */
    add_pkt(&b, seq++, 1400);
  /* the first of these is shorter than 1400: it ends the run before */
  for (int i = 0; i < 100; i++) /* then cut at 64 segments */
    add_pkt(&b, seq++, 200);
  add_pkt(&b, seq++, 50); /* shorter: ends the third run */
  add_pkt(&b, seq++, 50); /* alone */
  add_pkt(&b, seq++, 300); /* longer than the one before: a new run */
  add_pkt(&b, seq++, 300);
  CHECK_EQ(urtp_sock_send(&t, &b), (int)seq);
  CHECK_EQ(t.tx_syscalls, 1);

  static const struct { size_t len, seg; } want[] = {
    { 64400, 1400 }, { 64400, 1400 }, { 64400, 1400 }, { 64400, 1400 }, { 22600, 1400 },
    { 12800, 200 }, { 35 * 200 + 50, 200 }, { 50, 0 }, { 600, 300 },
  };
  static uint8_t buf[65536];
  uint32_t expect = 0;
  for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    REQUIRE(poll(&p, 1, 5000) == 1);
    struct iovec v = { buf, sizeof(buf) };
    union { char c[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } cb;
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = cb.c,
                        .msg_controllen = sizeof(cb.c) };
    ssize_t l = recvmsg(fd, &m, 0);
    int seg = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
        memcpy(&seg, CMSG_DATA(c), sizeof(seg));
    CHECK_EQ(l, want[k].len);
    CHECK_EQ(seg, want[k].seg);
    /* and the bytes of each segment */
    size_t s = want[k].seg ? want[k].seg : want[k].len;
    for (size_t off = 0; l > 0 && off < (size_t)l; off += s, expect++) {
      size_t sl = (size_t)l - off < s ? (size_t)l - off : s;
      CHECK(pkt_ok(buf + off, sl, expect, b.pkts[expect].len));
    }
  }
  CHECK_EQ(expect, seq);
  urtp_batch_free(&b);
  urtp_sock_close(&t);
  close(fd);
}

/* Receives GSO sends on a raw GRO socket until `want` bytes have come;
 * returns how many buffers (sends) carried them. */
static size_t gro_count(int fd, size_t want, size_t *bytes)
{
  static uint8_t buf[65536];
  size_t n = 0;
  *bytes = 0;
  while (*bytes < want) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    if (poll(&p, 1, 5000) != 1)
      break;
    ssize_t l = recv(fd, buf, sizeof(buf), 0);
    if (l <= 0)
      break;
    *bytes += (size_t)l;
    n++;
  }
  return n;
}

/* pay.h's pad_fragments: 8 slices of 30,000 bytes (22 fragments each at
 * mtu 1400, the last 472 bytes short of the others, within 1/32) go out as
 * 176 packets of 1400 bytes but for the last (the last slice is not
 * padded: nothing follows it), that is in 4 GSO sends (46 + 46 + 46 + 38)
 * rather than one per slice; without padding, 8. */
static void test_gso_padded_slices(void)
{
  urtp_sock_t t;
  int fd = open_gro_pair(&t);
  REQUIRE(fd >= 0);

  static uint8_t slices[8][30000];
  urtp_nal_t nals[8];
  for (size_t i = 0; i < 8; i++) {
    for (size_t k = 0; k < sizeof slices[i]; k++)
      slices[i][k] = (uint8_t)(1 + (i * 131 + k) % 251);
    slices[i][0] = 0x02;   /* H.265 TRAIL_R */
    slices[i][1] = 0x01;
    nals[i] = (urtp_nal_t){ slices[i], sizeof slices[i] };
  }
  for (int pad = 0; pad < 2; pad++) {
    urtp_pay_config_t pc = { .codec = URTP_CODEC_H265, .pt = 96, .ssrc = 1, .mtu = 1400,
                             .pad_fragments = pad };
    urtp_pay_t p;
    REQUIRE(urtp_pay_init(&p, &pc) == 0);
    urtp_batch_t b;
    urtp_batch_init(&b);
    CHECK_EQ(urtp_pay_nals(&p, nals, 8, 0, true, &b), 176);
    size_t total = 0;
    for (size_t i = 0; i < b.npkts; i++)
      total += b.pkts[i].len;
    CHECK_EQ(total, 8 * (22 * 15 + 29998) + (pad ? 7 * 472 : 0));
    CHECK_EQ(p.pad_bytes, pad ? 7 * 472 : 0);
    uint64_t msgs0 = t.tx_msgs;
    CHECK_EQ(urtp_sock_send(&t, &b), 176);
    CHECK_EQ(t.tx_msgs - msgs0, pad ? 4 : 8);
    size_t got;
    CHECK_EQ(gro_count(fd, total, &got), pad ? 4 : 8);
    CHECK_EQ(got, total);
    urtp_batch_free(&b);
    urtp_pay_destroy(&p);
  }
  urtp_sock_close(&t);
  close(fd);
}

/* The same batch needs 1 call with GSO, 3 with MMSG (1024 messages per
 * call), 3000 with PLAIN; the kernel takes 3000 messages, or with GSO 90
 * (each frame of 99 + 1 packets as runs of 46, 46 and 8). */
static void test_syscall_counts(void)
{
  urtp_sock_t r;
  REQUIRE(open_rx(&r, "127.0.0.1", URTP_IO_MMSG) == 0); /* never read: drops are fine */
  urtp_batch_t b;
  urtp_batch_init(&b);
  for (uint32_t f = 0; f < 30; f++)
    for (uint32_t i = 0; i < 100; i++)
      add_pkt(&b, f * 100 + i, i < 99 ? 1400 : 700);
  static const struct { urtp_io_mode_t m; uint64_t calls, msgs; } want[] = {
    { URTP_IO_GSO, 1, 90 }, { URTP_IO_MMSG, 3, 3000 }, { URTP_IO_PLAIN, 3000, 3000 },
  };
  for (size_t k = 0; k < 3; k++) {
    urtp_sock_t t;
    REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), want[k].m) == 0);
    CHECK_EQ(urtp_sock_send(&t, &b), 3000);
    CHECK_EQ(t.tx_syscalls, want[k].calls);
    /* the second time, with the arrays grown already, counts the same */
    CHECK_EQ(urtp_sock_send(&t, &b), 3000);
    CHECK_EQ(t.tx_syscalls, 2 * want[k].calls);
    CHECK_EQ(t.tx_msgs, 2 * want[k].msgs);
    CHECK_EQ(t.tx_errors, 0);
    urtp_sock_close(&t);
  }
  urtp_batch_free(&b);
  urtp_sock_close(&r);
}

/* A kernel refusing GSO (here: SO_NO_CHECK makes UDP_SEGMENT sends fail
 * with EINVAL) turns the socket to MMSG for good and loses nothing. */
static void test_gso_fallback(void)
{
  urtp_sock_t r, t;
  REQUIRE(open_rx(&r, "127.0.0.1", URTP_IO_MMSG) == 0);
  REQUIRE(open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_GSO) == 0);
  REQUIRE(t.tx_mode == URTP_IO_GSO);
  int one = 1;
  REQUIRE(setsockopt(t.fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0);
  urtp_batch_t b;
  urtp_batch_init(&b);
  uint16_t lens[40];
  uint32_t n = 0;
  lens[n++] = 60; /* alone: goes out before the GSO run fails */
  for (int i = 0; i < 30; i++)
    lens[n++] = i < 29 ? 1400 : 500;
  lens[n++] = 90;
  lens[n++] = 90;
  for (uint32_t i = 0; i < n; i++)
    add_pkt(&b, i, lens[i]);
  CHECK_EQ(urtp_sock_send(&t, &b), (int)n);
  CHECK_EQ(t.tx_mode, URTP_IO_MMSG);
  CHECK_EQ(t.tx_errors, 0);

  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 64, 2048) == 0);
  static uint8_t got[40][2048];
  size_t len[40];
  CHECK_EQ(recv_n(&r, &rx, n, got, len), n);
  for (uint32_t i = 0; i < n; i++)
    CHECK(pkt_ok(got[i], len[i], i, lens[i]));
  CHECK_EQ(urtp_sock_recv(&r, &rx, 0), 0);
  urtp_rx_destroy(&rx);
  urtp_batch_free(&b);
  urtp_sock_close(&t);
  urtp_sock_close(&r);
}

/* In a network namespace of its own whose loopback has an MTU of 1000, a
 * GSO run of 1400-byte segments is refused (EMSGSIZE); the socket falls
 * back to MMSG, whose datagrams go out as IP fragments. Returns 0 when all
 * arrived intact, 77 when no namespace can be made. */
static int mtu_child(void)
{
  if (unshare(CLONE_NEWNET) < 0)
    return 77;
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  strcpy(ifr.ifr_name, "lo");
  ifr.ifr_mtu = 1000;
  if (fd < 0 || ioctl(fd, SIOCSIFMTU, &ifr) < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
    return 77;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
    return 77;
  close(fd);

  urtp_sock_t r, t;
  if (open_rx(&r, "127.0.0.1", URTP_IO_MMSG) < 0 ||
      open_tx(&t, "127.0.0.1", urtp_sock_local_port(&r), URTP_IO_GSO) < 0 ||
      t.tx_mode != URTP_IO_GSO)
    return 2;
  urtp_batch_t b;
  urtp_batch_init(&b);
  uint16_t lens[24];
  uint32_t n = 0;
  for (int i = 0; i < 21; i++)
    lens[n++] = i < 20 ? 1400 : 600;
  for (int i = 0; i < 3; i++)
    lens[n++] = 300;
  for (uint32_t i = 0; i < n; i++)
    add_pkt(&b, i, lens[i]);
  int rc = 0;
  int sent = urtp_sock_send(&t, &b);
  if (sent != (int)n || t.tx_mode != URTP_IO_MMSG || t.tx_errors != 0) {
    printf("#   child: sent %d, mode %s\n", sent, urtp_io_mode_name(t.tx_mode));
    rc = 3;
  }
  urtp_rx_t rx;
  static uint8_t got[24][2048];
  size_t len[24];
  if (urtp_rx_init(&rx, 64, 2048) < 0 || recv_n(&r, &rx, n, got, len) != n)
    rc = 4;
  for (uint32_t i = 0; rc == 0 && i < n; i++)
    if (!pkt_ok(got[i], len[i], i, lens[i]))
      rc = 5;
  fflush(stdout);
  return rc;
}

static void test_gso_fallback_mtu(void)
{
  fflush(stdout);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0)
    _exit(mtu_child());
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid);
  REQUIRE(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77) {
    printf("# skipped: cannot make a network namespace (needs CAP_SYS_ADMIN)\n");
    return;
  }
  CHECK_EQ(WEXITSTATUS(st), 0);
}

/* An ICMP port unreachable for an earlier datagram comes back as
 * ECONNREFUSED on a later send: counted, and the batch still goes out. */
static void test_connrefused(void)
{
  urtp_sock_t r;
  REQUIRE(open_rx(&r, "127.0.0.1", URTP_IO_MMSG) == 0);
  int port = urtp_sock_local_port(&r);
  urtp_sock_close(&r); /* nobody listens there now */

  static const urtp_io_mode_t modes[] = { URTP_IO_PLAIN, URTP_IO_MMSG, URTP_IO_GSO };
  for (size_t k = 0; k < 3; k++) {
    urtp_sock_t t;
    REQUIRE(open_tx(&t, "127.0.0.1", port, modes[k]) == 0);
    urtp_batch_t b;
    urtp_batch_init(&b);
    add_pkt(&b, 0, 100);
    CHECK_EQ(urtp_sock_send(&t, &b), 1);
    struct pollfd p = { .fd = t.fd, .events = 0 };
    REQUIRE(poll(&p, 1, 5000) == 1 && (p.revents & POLLERR));
    urtp_batch_clear(&b);
    for (uint32_t i = 0; i < 10; i++)
      add_pkt(&b, i, 1000);
    CHECK_EQ(urtp_sock_send(&t, &b), 10);
    CHECK(t.tx_errors >= 1);
    urtp_batch_free(&b);
    urtp_sock_close(&t);
  }
}


static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A receive wait also watching another socket (RTCP) returns at once when
 * that one has something, with watch_ready; urtp_sock_sendto reaches a
 * given address and the remote. */
static void test_watch_and_sendto(void)
{
  urtp_sock_t media, ctl;
  REQUIRE(open_rx(&media, "127.0.0.1", URTP_IO_MMSG) == 0);
  REQUIRE(open_rx(&ctl, "127.0.0.1", URTP_IO_MMSG) == 0);
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)urtp_sock_local_port(&media) };
  urtp_sock_t tx;
  REQUIRE(urtp_sock_open(&tx, &tc) == 0);
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 8, 2048) == 0);
  media.watch_fd = ctl.fd;

  struct sockaddr_in to = { .sin_family = AF_INET,
                            .sin_port = htons((uint16_t)urtp_sock_local_port(&ctl)),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
  CHECK_EQ(urtp_sock_sendto(&tx, "rtcp", 4, (struct sockaddr *)&to, sizeof to), 4);
  int64_t t0 = now_ms();
  CHECK_EQ(urtp_sock_recv(&media, &rx, 5000), 0);
  CHECK(media.watch_ready);
  CHECK(now_ms() - t0 < 1000);
  urtp_rx_t crx;
  REQUIRE(urtp_rx_init(&crx, 8, 2048) == 0);
  CHECK_EQ(urtp_sock_recv(&ctl, &crx, 0), 1);
  CHECK(crx.dgrams[0].len == 4 && memcmp(crx.dgrams[0].data, "rtcp", 4) == 0);

  /* the remote: the media socket gets it, and the flag is clear again */
  CHECK_EQ(urtp_sock_sendto(&tx, "media", 5, NULL, 0), 5);
  CHECK_EQ(urtp_sock_recv(&media, &rx, 5000), 1);
  CHECK(!media.watch_ready);
  urtp_sock_t norem;
  REQUIRE(open_rx(&norem, "127.0.0.1", URTP_IO_MMSG) == 0);
  CHECK_EQ(urtp_sock_sendto(&norem, "x", 1, NULL, 0), -EDESTADDRREQ);
  urtp_sock_close(&norem);

  urtp_rx_destroy(&crx);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&tx);
  urtp_sock_close(&ctl);
  urtp_sock_close(&media);
}

/* A UDP socket bound by the caller, then adopted (symmetric RTP): sends
 * leave from its port, it is not connected (anyone still reaches it, its
 * remote can change), the caller's descriptor outlives ours; an IPv4
 * remote on a dual-stack IPv6 socket goes out mapped; what is not a UDP
 * socket, or a remote the socket cannot reach, is refused. */
static int bound_udp(int family, const char *addr)
{
  int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_storage a;
  memset(&a, 0, sizeof a);
  a.ss_family = (sa_family_t)family;
  if (family == AF_INET)
    inet_pton(AF_INET, addr, &((struct sockaddr_in *)&a)->sin_addr);
  else
    inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&a)->sin6_addr);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, urtp_addr_len(&a)) < 0)
    return -1;
  return fd;
}

static int fd_port(int fd)
{
  struct sockaddr_storage a;
  socklen_t l = sizeof a;
  return getsockname(fd, (struct sockaddr *)&a, &l) < 0 ? -1 : urtp_addr_port(&a);
}

/* A datagram to grp:port from a socket bound to `from`; whether rs got
 * it within 200 ms. */
static bool mc_arrives(urtp_sock_t *rs, const char *from, const char *grp, uint16_t port)
{
  urtp_sock_t ts;
  urtp_sock_config_t tc = { .bind_addr = from, .remote_addr = grp, .remote_port = port,
                            .multicast_iface = "lo", .ttl_mc = 1, .multicast_loop = true,
                            .dscp = -1, .tx_mode = URTP_IO_PLAIN, .rx_mode = URTP_IO_PLAIN };
  if (urtp_sock_open(&ts, &tc) != 0)
    return false;
  static const uint8_t msg[] = "group";
  CHECK(urtp_sock_sendto(&ts, msg, sizeof msg, (const struct sockaddr *)&ts.remote,
                         ts.remote_len) >= 0);
  urtp_sock_close(&ts);
  urtp_rx_t rx;
  if (urtp_rx_init(&rx, 4, 2048) != 0)
    return false;
  int n = urtp_sock_recv(rs, &rx, 200);
  urtp_rx_destroy(&rx);
  return n > 0;
}

/* Source-specific multicast (IGMPv3 filters on the socket): "+a" takes
 * only a's datagrams, "-a" all but a's; a list of interfaces; bound but
 * not joined; names and addresses that are not refused. */
static void test_multicast_sources(void)
{
  const char *grp = "239.255.77.9";
  static const struct {
    const char *sources;
    bool from1, from2;
  } cases[] = {
    { NULL, true, true },
    { "+127.0.0.1", true, false },
    { "127.0.0.2", false, true },
    { "-127.0.0.2", true, false },
    { "-127.0.0.1,-127.0.0.3", false, true },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    urtp_sock_t rs;
    urtp_sock_config_t rc = { .bind_addr = grp, .multicast_iface = "lo",
                              .multicast_sources = cases[i].sources, .dscp = -1,
                              .rx_mode = URTP_IO_MMSG, .tx_mode = URTP_IO_PLAIN };
    REQUIRE(urtp_sock_open(&rs, &rc) == 0);
    uint16_t port = (uint16_t)urtp_sock_local_port(&rs);
    bool a = mc_arrives(&rs, "127.0.0.1", grp, port);
    bool b = mc_arrives(&rs, "127.0.0.2", grp, port);
    if (a != cases[i].from1 || b != cases[i].from2)
      printf("#   sources %s: from .1 %d, from .2 %d\n", cases[i].sources, a, b);
    CHECK(a == cases[i].from1 && b == cases[i].from2);
    urtp_sock_close(&rs);
  }
  /* bound to the group, not joined: nothing arrives (nobody joined) */
  urtp_sock_t rs;
  urtp_sock_config_t rc = { .bind_addr = grp, .multicast_iface = "lo", .no_join = true,
                            .dscp = -1, .rx_mode = URTP_IO_MMSG, .tx_mode = URTP_IO_PLAIN };
  REQUIRE(urtp_sock_open(&rs, &rc) == 0);
  CHECK(!mc_arrives(&rs, "127.0.0.1", grp, (uint16_t)urtp_sock_local_port(&rs)));
  urtp_sock_close(&rs);
  /* a list of interfaces: joined on each (lo twice is refused by the
   * kernel as a double join, which shows both were tried) */
  rc.no_join = false;
  rc.multicast_iface = "lo,lo";
  CHECK_EQ(urtp_sock_open(&rs, &rc), -EADDRINUSE);
  rc.multicast_iface = "lo,no-such-if0";
  CHECK_EQ(urtp_sock_open(&rs, &rc), -ENODEV);
  rc.multicast_iface = "lo";
  static const char *const bad[] = { "+127.0.0.1,-127.0.0.2", "nonsense", "::1", "+" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    rc.multicast_sources = bad[i];
    CHECK_EQ(urtp_sock_open(&rs, &rc), -EINVAL);
  }
}

static void test_adopt(void)
{
  urtp_sock_t peer, peer2, s, stranger;
  urtp_rx_t rx;
  REQUIRE(urtp_rx_init(&rx, 8, 2048) == 0);
  REQUIRE(open_rx(&peer, "127.0.0.1", URTP_IO_MMSG) == 0);
  REQUIRE(open_rx(&peer2, "127.0.0.1", URTP_IO_MMSG) == 0);
  int fd = bound_udp(AF_INET, "127.0.0.1");
  REQUIRE(fd >= 0);
  const int port = fd_port(fd);

  urtp_sock_config_t c = { .remote_addr = "127.0.0.1",
                           .remote_port = (uint16_t)urtp_sock_local_port(&peer),
                           .dscp = -1, .rx_mode = URTP_IO_MMSG };
  REQUIRE(urtp_sock_adopt(&s, fd, &c) == 0);
  CHECK(s.unconnected && s.fd != fd);
  CHECK_EQ(urtp_sock_local_port(&s), port);
  urtp_batch_t b;
  urtp_batch_init(&b);
  for (uint32_t i = 0; i < 3; i++)
    add_pkt(&b, i, i == 2 ? 300 : 1200);
  CHECK_EQ(urtp_sock_send(&s, &b), 3);
  CHECK_EQ(urtp_sock_recv(&peer, &rx, 5000), 3);
  for (size_t i = 0; i < rx.ndgrams; i++)
    CHECK_EQ(urtp_addr_port(rx.dgrams[i].from), port);

  /* not connected: a datagram from another host arrives */
  urtp_sock_config_t sc = { .bind_addr = "127.0.0.2", .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)port, .dscp = -1 };
  REQUIRE(urtp_sock_open(&stranger, &sc) == 0);
  CHECK_EQ(urtp_sock_sendto(&stranger, "hello", 5, NULL, 0), 5);
  CHECK_EQ(urtp_sock_recv(&s, &rx, 5000), 1);
  CHECK(rx.dgrams[0].len == 5 && urtp_addr_port(rx.dgrams[0].from) ==
        urtp_sock_local_port(&stranger));

  /* a new remote is sent to, still unconnected */
  struct sockaddr_storage to = peer2.remote;
  struct sockaddr_in *t4 = (struct sockaddr_in *)&to;
  memset(&to, 0, sizeof to);
  t4->sin_family = AF_INET;
  t4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  t4->sin_port = htons((uint16_t)urtp_sock_local_port(&peer2));
  CHECK_EQ(urtp_sock_set_remote(&s, &to), 0);
  CHECK_EQ(urtp_sock_send(&s, &b), 3);
  CHECK_EQ(urtp_sock_recv(&peer2, &rx, 5000), 3);
  CHECK_EQ(urtp_sock_sendto(&stranger, "again", 5, NULL, 0), 5);
  CHECK_EQ(urtp_sock_recv(&s, &rx, 5000), 1);

  /* ours closed, the caller's still sends */
  urtp_sock_close(&s);
  CHECK_EQ(send(fd, "x", 1, 0) < 0 ? errno : 0, EDESTADDRREQ);
  struct sockaddr_in p1 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)urtp_sock_local_port(&peer)) };
  CHECK_EQ(sendto(fd, "y", 1, 0, (struct sockaddr *)&p1, sizeof p1), 1);
  CHECK_EQ(urtp_sock_recv(&peer, &rx, 5000), 1);

  /* an IPv6 remote on an IPv4 socket: refused, nothing left open */
  urtp_sock_config_t c6 = { .remote_addr = "::1", .remote_port = 9, .dscp = -1 };
  CHECK_EQ(urtp_sock_adopt(&s, fd, &c6), -EAFNOSUPPORT);
  CHECK_EQ(s.fd, -1);
  close(fd);

  /* an IPv4 remote on a dual-stack IPv6 socket */
  int fd6 = bound_udp(AF_INET6, "::");
  if (fd6 >= 0) {
    REQUIRE(urtp_sock_adopt(&s, fd6, &c) == 0);
    CHECK_EQ(s.remote.ss_family, AF_INET6);
    CHECK_EQ(urtp_sock_send(&s, &b), 3);
    CHECK_EQ(urtp_sock_recv(&peer, &rx, 5000), 3);
    CHECK_EQ(urtp_addr_port(rx.dgrams[0].from), fd_port(fd6));
    urtp_sock_close(&s);
    close(fd6);
  }

  /* not a UDP socket */
  int pfd[2];
  REQUIRE(pipe(pfd) == 0);
  CHECK_EQ(urtp_sock_adopt(&s, pfd[0], &c), -ENOTSOCK);
  close(pfd[0]);
  close(pfd[1]);
  int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK_EQ(urtp_sock_adopt(&s, tcp, &c), -EPROTOTYPE);
  close(tcp);
  CHECK_EQ(urtp_sock_adopt(&s, -1, &c), -EBADF);

  urtp_batch_free(&b);
  urtp_rx_destroy(&rx);
  urtp_sock_close(&stranger);
  urtp_sock_close(&peer2);
  urtp_sock_close(&peer);
}

/* The same through urtp.h: a sender and a receiver on sockets of the
 * caller's (fd), Opus packets byte for byte, the receiver's port the
 * socket's, and each side's socket left open for the caller. */
static void test_adopt_api(void)
{
  int fs = bound_udp(AF_INET, "127.0.0.1"), fr = bound_udp(AF_INET, "127.0.0.1");
  REQUIRE(fs >= 0 && fr >= 0);
  urtp_recv_config_t rc;
  urtp_recv_config_init(&rc, URTP_CODEC_OPUS);
  CHECK_EQ(rc.fd, -1);
  rc.fd = fr;
  rc.rtcp = false;
  rc.latency_ns = 0;
  urtp_receiver_t *r;
  REQUIRE(urtp_receiver_open(&r, &rc) == 0);
  CHECK_EQ(urtp_receiver_port(r), fd_port(fr));
  urtp_send_config_t sc;
  urtp_send_config_init(&sc, URTP_CODEC_OPUS);
  sc.fd = fs;
  sc.host = "127.0.0.1";
  sc.port = (uint16_t)fd_port(fr);
  sc.rtcp = false;
  urtp_sender_t *tx;
  REQUIRE(urtp_sender_open(&tx, &sc) == 0);
  uint8_t pkt[100];
  for (unsigned i = 0; i < 5; i++) {
    memset(pkt, (int)i + 1, sizeof pkt);
    CHECK_EQ(urtp_sender_push(tx, pkt, sizeof pkt, i * 20000000ull), 0);
  }
  for (unsigned i = 0; i < 5; i++) {
    urtp_frame_t f;
    CHECK_EQ(urtp_receiver_pull(r, &f, 5000), 1);
    CHECK(f.len == sizeof pkt && f.data[0] == i + 1 && f.data[99] == i + 1);
  }
  CHECK_EQ(urtp_sender_close(tx), 0);
  urtp_receiver_close(r);
  /* the caller's own: still open */
  CHECK_EQ(fcntl(fs, F_GETFD) >= 0 && fcntl(fr, F_GETFD) >= 0, 1);
  close(fs);
  close(fr);
}

int main(void)
{
  pool_init();
  TAP_RUN(test_modes_and_names);
  TAP_RUN(test_open_errors);
  TAP_RUN(test_buffer_sizes);
  TAP_RUN(test_wake_and_timeout);
  TAP_RUN(test_full_batch_then_empty);
  TAP_RUN(test_rx_timestamps);
  TAP_RUN(test_rx_auto);
  TAP_RUN(test_kernel_drops_mmsg);
  TAP_RUN(test_kernel_drops_plain);
  TAP_RUN(test_kernel_drops_gro);
  TAP_RUN(test_truncated_mmsg);
  TAP_RUN(test_truncated_plain);
  TAP_RUN(test_truncated_gro);
  TAP_RUN(test_truncated_gro_buffer);
  TAP_RUN(test_gro_carry_over);
  TAP_RUN(test_gso_split);
  TAP_RUN(test_gso_padded_slices);
  TAP_RUN(test_syscall_counts);
  TAP_RUN(test_gso_fallback);
  TAP_RUN(test_gso_fallback_mtu);
  TAP_RUN(test_connrefused);
  TAP_RUN(test_multicast_sources);
  TAP_RUN(test_stream_gso_mmsg);
  TAP_RUN(test_stream_mmsg_mmsg);
  TAP_RUN(test_stream_plain_mmsg);
  TAP_RUN(test_stream_gso_gro);
  TAP_RUN(test_stream_mmsg_gro);
  TAP_RUN(test_stream_gso_plain);
  TAP_RUN(test_stream_gso_gro_batch1);
  TAP_RUN(test_stream_ipv6_gso_gro);
  TAP_RUN(test_stream_ipv6_mmsg_mmsg);
  TAP_RUN(test_stream_mcast_gso_mmsg);
  TAP_RUN(test_stream_mcast_mmsg_gro);
  TAP_RUN(test_watch_and_sendto);
  TAP_RUN(test_adopt);
  TAP_RUN(test_adopt_api);
  return tap_done();
}
