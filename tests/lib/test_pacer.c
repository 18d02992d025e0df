/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_pacer - the pacer's arithmetic on a virtual clock (exact times, the
 * burst bound over every interval, refill, oversized chunks, give-back,
 * rate changes), then paced sends on a real loopback socket: bytes and
 * order exact, GSO runs kept, never faster than the rate, and a wait that
 * urtp_sock_wake interrupts with exact accounting.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "urtp/batch.h"
#include "urtp/net.h"
#include "urtp/pacer.h"

#define MS 1000000ull
#define T0 (1000 * 1000 * MS) /* the virtual clock starts far from 0 */

static void test_off(void)
{
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 0, 0) == 0);
  CHECK(!urtp_pacer_active(&p));
  CHECK_EQ(urtp_pacer_chunk(&p), SIZE_MAX);
  for (int i = 0; i < 100; i++)
    CHECK_EQ(urtp_pacer_take(&p, 1 << 20, 0, T0), T0);
  urtp_pacer_stats_t st;
  urtp_pacer_get_stats(&p, &st);
  CHECK_EQ(st.bytes, 100ull << 20);
  CHECK_EQ(st.max_queue, 0);
  urtp_pacer_destroy(&p);
}

/* 8 Mbit/s = 1 byte per microsecond: a full bucket of 10,000 bytes goes at
 * once, then each 1,000 bytes 1 ms after the one before. */
static void test_burst_then_rate(void)
{
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 8000000, 10000) == 0);
  CHECK(urtp_pacer_active(&p));
  CHECK_EQ(urtp_pacer_chunk(&p), 10000);
  CHECK_EQ(urtp_pacer_take(&p, 10000, 5000, T0), T0);
  for (uint64_t k = 1; k <= 5; k++)
    CHECK_EQ(urtp_pacer_take(&p, 1000, 5000 - k * 1000, T0), T0 + k * MS);
  urtp_pacer_stats_t st;
  urtp_pacer_get_stats(&p, &st);
  CHECK_EQ(st.bytes, 15000);
  CHECK_EQ(st.max_queue, 5000); /* the first chunk that had to wait, and all behind it */
  urtp_pacer_destroy(&p);
}

/* A sender that sends each chunk as soon as it may, for 10 MB: the time
 * taken is exactly what the rate allows beyond the first burst, and over
 * every interval between two chunks no more went than burst + rate x the
 * interval (the promise). */
static void test_long_run_bound(void)
{
  enum { N = 7500, CHUNK = 1400 };
  static uint64_t at[N];
  const uint64_t rate_Bps = 12500000; /* 100 Mbit/s */
  const uint64_t burst = 32768;
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, rate_Bps * 8, burst) == 0);
  uint64_t now = T0;
  for (int i = 0; i < N; i++) {
    at[i] = urtp_pacer_take(&p, CHUNK, 0, now);
    CHECK(at[i] >= now);
    now = at[i];
  }
  uint64_t total = (uint64_t)N * CHUNK;
  uint64_t want = (total - burst) * 1000000000ull / rate_Bps;
  uint64_t took = at[N - 1] - at[0];
  /* exact to a chunk's time, whatever the rounding */
  CHECK(took + CHUNK * 1000000000ull / rate_Bps >= want);
  CHECK(took <= want + CHUNK * 1000000000ull / rate_Bps);
  /* the bound over every interval starting at a sample of chunks (all
   * pairs would be 28M; every 50th start is as telling) */
  int worst_excess = 0;
  for (int i = 0; i < N; i += 50) {
    uint64_t sent = 0;
    for (int j = i; j < N; j++) {
      sent += CHUNK;
      uint64_t allowed = burst + (at[j] - at[i]) * rate_Bps / 1000000000ull + 1;
      if (sent > allowed && (int)(sent - allowed) > worst_excess)
        worst_excess = (int)(sent - allowed);
    }
  }
  CHECK_EQ(worst_excess, 0);
  urtp_pacer_destroy(&p);
}

/* A quiet time refills the bucket, by rate x the time, up to the burst. */
static void test_refill(void)
{
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 8000000, 10000) == 0);
  CHECK_EQ(urtp_pacer_take(&p, 10000, 0, T0), T0); /* empties it */
  /* 4 ms later, 4,000 bytes are back: 4,000 go at once, the next 1,000
   * a millisecond later */
  CHECK_EQ(urtp_pacer_take(&p, 4000, 0, T0 + 4 * MS), T0 + 4 * MS);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, T0 + 4 * MS), T0 + 5 * MS);
  /* a second of quiet refills it to the burst, not beyond */
  uint64_t t = T0 + 1005 * MS;
  CHECK_EQ(urtp_pacer_take(&p, 10000, 0, t), t);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, t), t + MS);
  urtp_pacer_destroy(&p);
}

/* A chunk larger than the bucket waits for a full bucket and leaves it in
 * debt: the next byte waits for the rest of its cost. */
static void test_oversized_chunk(void)
{
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 8000000, 10000) == 0);
  CHECK_EQ(urtp_pacer_take(&p, 30000, 0, T0), T0);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, T0), T0 + 21 * MS);
  urtp_pacer_destroy(&p);
}

/* What was booked and not sent is given back: the next chunk goes when it
 * would have without the booking; the byte count stays exact. */
static void test_give_back(void)
{
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 8000000, 10000) == 0);
  CHECK_EQ(urtp_pacer_take(&p, 10000, 0, T0), T0);
  CHECK_EQ(urtp_pacer_take(&p, 5000, 0, T0), T0 + 5 * MS);
  urtp_pacer_give_back(&p, 5000);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, T0), T0 + 1 * MS);
  urtp_pacer_stats_t st;
  urtp_pacer_get_stats(&p, &st);
  CHECK_EQ(st.bytes, 11000);
  urtp_pacer_destroy(&p);
}

/* The rate and burst may change between chunks; off lets everything go. */
static void test_set(void)
{
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 8000000, 1000) == 0);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, T0), T0);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, T0), T0 + MS);
  /* twice as fast from here; what was booked at the old rate stands */
  urtp_pacer_set(&p, 16000000, 1000);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, T0 + MS), T0 + 2 * MS);
  CHECK_EQ(urtp_pacer_take(&p, 1000, 0, T0 + MS), T0 + 2 * MS + MS / 2);
  urtp_pacer_set(&p, 0, 0);
  CHECK(!urtp_pacer_active(&p));
  CHECK_EQ(urtp_pacer_take(&p, 1 << 20, 0, T0), T0);
  urtp_pacer_set(&p, 8000000, 0);
  CHECK_EQ(urtp_pacer_chunk(&p), URTP_PACER_DEFAULT_BURST);
  urtp_pacer_destroy(&p);
}

static void test_waited(void)
{
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 8000000, 1000) == 0);
  urtp_pacer_waited(&p, 3 * MS);
  urtp_pacer_waited(&p, 1 * MS);
  urtp_pacer_stats_t st;
  urtp_pacer_get_stats(&p, &st);
  CHECK_EQ(st.waits, 2);
  CHECK_EQ(st.waited_ns, 4 * MS);
  CHECK_EQ(st.max_wait_ns, 3 * MS);
  urtp_pacer_destroy(&p);
}

/* ---- on a socket ----------------------------------------------------------- */

#define PKT 1200
#define NPKT 400 /* 480,000 bytes */

static uint8_t payload[NPKT][PKT];

static int64_t mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct link {
  urtp_sock_t tx, rx;
  urtp_rx_t q;
} link_t;

static int link_open(link_t *l, urtp_io_mode_t mode)
{
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .rcvbuf = 8 << 20,
                            .rx_mode = URTP_IO_MMSG };
  int r = urtp_sock_open(&l->rx, &rc);
  if (r < 0)
    return r;
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)urtp_sock_local_port(&l->rx),
                            .sndbuf = 4 << 20, .tx_mode = mode, .rx_mode = URTP_IO_MMSG };
  if ((r = urtp_sock_open(&l->tx, &tc)) < 0)
    return r;
  return urtp_rx_init(&l->q, 64, 2048);
}

static void link_close(link_t *l)
{
  urtp_rx_destroy(&l->q);
  urtp_sock_close(&l->rx);
  urtp_sock_close(&l->tx);
}

/* NPKT packets of PKT bytes, each numbered in its first four bytes. */
static void fill(urtp_batch_t *b)
{
  urtp_batch_reserve(b, NPKT, NPKT);
  for (uint32_t i = 0; i < NPKT; i++) {
    payload[i][0] = (uint8_t)(i >> 24);
    payload[i][1] = (uint8_t)(i >> 16);
    payload[i][2] = (uint8_t)(i >> 8);
    payload[i][3] = (uint8_t)i;
    for (int k = 4; k < PKT; k++)
      payload[i][k] = (uint8_t)(i * 7 + k);
    b->iov[b->niov] = (struct iovec){ payload[i], PKT };
    urtp_batch_commit(b, 1, PKT);
  }
}

/* Receives until `want` datagrams or a quiet half second; checks each is
 * the next one, byte for byte. Returns how many arrived in order. */
static size_t drain_in_order(link_t *l, size_t want)
{
  size_t got = 0;
  while (got < want) {
    int n = urtp_sock_recv(&l->rx, &l->q, 500);
    if (n <= 0)
      break;
    for (int i = 0; i < n; i++) {
      const urtp_dgram_t *d = &l->q.dgrams[i];
      if (d->len != PKT || got >= NPKT || memcmp(d->data, payload[got], PKT) != 0)
        return got;
      got++;
    }
  }
  return got;
}

/* 480,000 bytes at 40 Mbit/s with 64 KiB bursts: all arrive, in order and
 * exact; never faster than the rate allows (a loaded machine can only be
 * slower); GSO runs are kept (fewer messages than packets). */
static void run_socket_rate(urtp_io_mode_t mode)
{
  link_t l;
  REQUIRE(link_open(&l, mode) == 0);
  urtp_pacer_t p;
  const uint64_t rate = 40000000, burst = 65536;
  REQUIRE(urtp_pacer_init(&p, rate, burst) == 0);
  l.tx.pacer = &p;
  urtp_batch_t b;
  urtp_batch_init(&b);
  fill(&b);

  int64_t t0 = mono_ms();
  CHECK_EQ(urtp_sock_send(&l.tx, &b), NPKT);
  int64_t took = mono_ms() - t0;
  int64_t want = (int64_t)(((uint64_t)NPKT * PKT - burst) * 8 * 1000 / rate);
  printf("# %s: %d bytes in %lld ms (the rate allows no less than %lld), %llu messages\n",
         mode == URTP_IO_GSO ? "gso" : "mmsg", NPKT * PKT, (long long)took, (long long)want,
         (unsigned long long)l.tx.tx_msgs);
  CHECK(took >= want - 1);
  CHECK(took <= 4 * want + 1000); /* generous: only a stuck pacer fails this */
  CHECK_EQ(drain_in_order(&l, NPKT), NPKT);
  if (l.tx.tx_mode == URTP_IO_GSO)
    CHECK(l.tx.tx_msgs < NPKT / 10);
  urtp_pacer_stats_t st;
  urtp_pacer_get_stats(&p, &st);
  CHECK_EQ(st.bytes, (uint64_t)NPKT * PKT);
  CHECK(st.waits > 0);
  CHECK(st.max_queue > 0 && st.max_queue <= (uint64_t)NPKT * PKT);

  urtp_batch_free(&b);
  urtp_pacer_destroy(&p);
  link_close(&l);
}

static void test_socket_rate_gso(void) { run_socket_rate(URTP_IO_GSO); }
static void test_socket_rate_mmsg(void) { run_socket_rate(URTP_IO_MMSG); }

typedef struct waker {
  urtp_sock_t *s;
  int after_ms;
} waker_t;

static void *wake_later(void *arg)
{
  waker_t *w = arg;
  usleep((useconds_t)w->after_ms * 1000);
  urtp_sock_wake(w->s);
  return NULL;
}

/* A paced send at 1 Mbit/s would take about 4 s; a wake-up after 100 ms
 * ends it with -EINTR at once. tx_sent says exactly what went (and arrived,
 * in order); what was booked and not sent is given back to the pacer. */
static void test_socket_interrupt(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_GSO) == 0);
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 1000000, 16384) == 0);
  l.tx.pacer = &p;
  urtp_batch_t b;
  urtp_batch_init(&b);
  fill(&b);

  waker_t w = { &l.tx, 100 };
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, wake_later, &w) == 0);
  int64_t t0 = mono_ms();
  int r = urtp_sock_send(&l.tx, &b);
  int64_t took = mono_ms() - t0;
  pthread_join(th, NULL);
  printf("# interrupted after %lld ms with %zu of %d packets sent\n", (long long)took,
         l.tx.tx_sent, NPKT);
  CHECK_EQ(r, -EINTR);
  CHECK(took < 1500);
  CHECK(l.tx.tx_sent > 0 && l.tx.tx_sent < NPKT / 2);
  CHECK_EQ(drain_in_order(&l, NPKT), l.tx.tx_sent);
  urtp_pacer_stats_t st;
  urtp_pacer_get_stats(&p, &st);
  CHECK_EQ(st.bytes, (uint64_t)l.tx.tx_sent * PKT);

  /* the wake-up stays pending: the next send goes as far as the bucket,
   * refilled meanwhile, lets it without a wait (one chunk at most), then
   * returns at once */
  t0 = mono_ms();
  CHECK_EQ(urtp_sock_send(&l.tx, &b), -EINTR);
  CHECK(mono_ms() - t0 < 500);
  CHECK(l.tx.tx_sent <= 16384 / PKT);
  urtp_sock_unwake(&l.tx);

  urtp_batch_free(&b);
  urtp_pacer_destroy(&p);
  link_close(&l);
}

/* A single datagram (RTCP) through a socket sharing the pacer waits for
 * its turn in the same budget, and a wake-up ends the wait. */
static void test_sendto_shares_budget(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_MMSG) == 0);
  urtp_pacer_t p;
  REQUIRE(urtp_pacer_init(&p, 800000, 1000) == 0); /* 100 bytes per ms */
  l.tx.pacer = &p;
  uint8_t d[500] = { 1 };
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  CHECK_EQ(urtp_pacer_take(&p, 2000, 0, now), now); /* the media emptied it, and more */
  int64_t t0 = mono_ms();
  CHECK_EQ(urtp_sock_sendto(&l.tx, d, sizeof d, NULL, 0), (int)sizeof d);
  int64_t took = mono_ms() - t0;
  printf("# a 500-byte datagram behind 2000 bytes at 100 bytes/ms: %lld ms\n", (long long)took);
  CHECK(took >= 14); /* 1000 in debt + 500 of its own, less the bucket: 15 ms */
  urtp_sock_wake(&l.tx);
  CHECK_EQ(urtp_sock_sendto(&l.tx, d, sizeof d, NULL, 0), -EINTR);
  urtp_sock_unwake(&l.tx);
  urtp_pacer_stats_t st;
  urtp_pacer_get_stats(&p, &st);
  CHECK_EQ(st.bytes, 2500); /* the interrupted one given back */
  urtp_pacer_destroy(&p);
  link_close(&l);
}

int main(void)
{
  TAP_RUN(test_off);
  TAP_RUN(test_burst_then_rate);
  TAP_RUN(test_long_run_bound);
  TAP_RUN(test_refill);
  TAP_RUN(test_oversized_chunk);
  TAP_RUN(test_give_back);
  TAP_RUN(test_set);
  TAP_RUN(test_waited);
  TAP_RUN(test_socket_rate_gso);
  TAP_RUN(test_socket_rate_mmsg);
  TAP_RUN(test_socket_interrupt);
  TAP_RUN(test_sendto_shares_budget);
  return tap_done();
}
