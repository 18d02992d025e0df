/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_sendthread.c - the sending thread (lib/urtp/sendthread.h) on real loopback
 * sockets: batches built alternately in two buffers while the previous one
 * is in flight arrive complete, in order and byte-exact; the done callback
 * runs once per batch with the send's result; a batch's memory is free to
 * reuse once the next submit returns.
 */
#include "urtp/sendthread.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "tap.h"

#define HDR 8
#define NBATCH 400
#define PER_BATCH 40       /* packets per batch: one GSO run and a short one */
#define PLEN 1200

static uint32_t rd32(const uint8_t *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wr32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* Payload byte k of packet seq: what the receiver expects. */
static uint8_t pay_byte(uint32_t seq, size_t k)
{
  return (uint8_t)(seq * 131u + k * 7u + (k >> 8));
}

/* Per-batch payload memory, rewritten for every batch built into it: if a
 * batch were still being sent when its memory is reused, the receiver
 * would see the next batch's bytes. */
typedef struct slot {
  urtp_batch_t b;
  uint8_t mem[PER_BATCH][PLEN];
} slot_t;

static void build(slot_t *s, uint32_t seq0, size_t n)
{
  urtp_batch_clear(&s->b);
  for (size_t i = 0; i < n; i++) {
    uint32_t seq = seq0 + (uint32_t)i;
    size_t plen = i + 1 == n ? 300 + seq % 700 : PLEN - HDR;
    for (size_t k = 0; k < plen; k++)
      s->mem[i][k] = pay_byte(seq, k);
    urtp_batch_reserve(&s->b, 1, 2);
    uint8_t *h = urtp_batch_arena_take(&s->b, HDR);
    wr32(h, seq);
    wr32(h + 4, (uint32_t)plen);
    struct iovec *v = s->b.iov + s->b.niov;
    v[0] = (struct iovec){ h, HDR };
    v[1] = (struct iovec){ s->mem[i], plen };
    urtp_batch_commit(&s->b, 2, (uint16_t)(HDR + plen));
  }
}

typedef struct done_log {
  pthread_mutex_t mu;
  size_t calls, pkts;
  const urtp_batch_t *last;
  int bad_result;
} done_log_t;

static void on_done(void *user, const urtp_batch_t *b, int result, uint64_t tx_errors)
{
  done_log_t *d = user;
  pthread_mutex_lock(&d->mu);
  d->calls++;
  d->pkts += b->npkts;
  if (result != (int)b->npkts || tx_errors != 0)
    d->bad_result++;
  d->last = b;
  pthread_mutex_unlock(&d->mu);
}

typedef struct rx {
  urtp_sock_t *s;
  size_t want, got, bad, out_of_order;
} rx_t;

static void *rx_main(void *arg)
{
  rx_t *r = arg;
  urtp_rx_t q;
  if (urtp_rx_init(&q, 64, 65536) < 0)
    return NULL;
  uint32_t next = 0;
  while (r->got < r->want) {
    int n = urtp_sock_recv(r->s, &q, 2000);
    if (n <= 0)
      break; /* a timeout: what is missing shows in the counts */
    for (int i = 0; i < n; i++) {
      const urtp_dgram_t *d = &q.dgrams[i];
      r->got++;
      if (d->len < HDR) {
        r->bad++;
        continue;
      }
      uint32_t seq = rd32(d->data), plen = rd32(d->data + 4);
      if (seq != next)
        r->out_of_order++;
      next = seq + 1;
      bool ok = plen + HDR == d->len;
      for (size_t k = 0; ok && k < plen; k++)
        ok = d->data[HDR + k] == pay_byte(seq, k);
      if (!ok)
        r->bad++;
    }
  }
  urtp_rx_destroy(&q);
  return NULL;
}

static void run(urtp_io_mode_t mode)
{
  urtp_sock_t rs, ts;
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .rcvbuf = 32 << 20,
                            .rx_mode = URTP_IO_GRO, .tx_mode = URTP_IO_AUTO };
  REQUIRE(urtp_sock_open(&rs, &rc) == 0);
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)urtp_sock_local_port(&rs),
                            .sndbuf = 4 << 20, .tx_mode = mode, .rx_mode = URTP_IO_AUTO };
  REQUIRE(urtp_sock_open(&ts, &tc) == 0);

  rx_t r = { .s = &rs, .want = (size_t)NBATCH * PER_BATCH };
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, rx_main, &r) == 0);

  done_log_t d = { .mu = PTHREAD_MUTEX_INITIALIZER };
  urtp_sendthread_t *snd;
  REQUIRE(urtp_sendthread_start(&snd, &ts, on_done, &d) == 0);
  static slot_t slots[2];
  size_t before_wait = 0;
  for (size_t i = 0; i < NBATCH; i++) {
    slot_t *s = &slots[i % 2];
    /* the other slot may be in flight; this one was released by the last submit */
    build(s, (uint32_t)(i * PER_BATCH), PER_BATCH);
    urtp_sendthread_submit(snd, &s->b);
    if (i == NBATCH / 2) {
      urtp_sendthread_wait(snd);
      pthread_mutex_lock(&d.mu);
      before_wait = d.calls;
      CHECK(d.last == &s->b);
      pthread_mutex_unlock(&d.mu);
    }
    /* pace a little so a slow receiver under a sanitizer keeps up: the
     * test is about order and memory, not speed */
    if (i % 16 == 15) {
      urtp_sendthread_wait(snd);
      struct timespec ts2 = { 0, 2000000 };
      nanosleep(&ts2, NULL);
    }
  }
  urtp_sendthread_stop(snd);
  CHECK_EQ(before_wait, (size_t)NBATCH / 2 + 1);
  CHECK_EQ(d.calls, (size_t)NBATCH);
  CHECK_EQ(d.pkts, (size_t)NBATCH * PER_BATCH);
  CHECK_EQ(d.bad_result, 0);
  CHECK(d.last == &slots[(NBATCH - 1) % 2].b);
  pthread_join(th, NULL);
  CHECK_EQ(r.got, (size_t)NBATCH * PER_BATCH);
  CHECK_EQ(r.bad, (size_t)0);
  CHECK_EQ(r.out_of_order, (size_t)0);
  urtp_batch_free(&slots[0].b);
  urtp_batch_free(&slots[1].b);
  memset(slots, 0, sizeof(slots));
  urtp_sock_close(&ts);
  urtp_sock_close(&rs);
}

static void test_gso(void)
{
  run(URTP_IO_GSO);
}

static void test_mmsg(void)
{
  run(URTP_IO_MMSG);
}

/* Stopping right after a submit sends the batch first; stopping an idle or
 * absent sender is harmless; a send error reaches the callback. */
static void test_stop_and_errors(void)
{
  urtp_sock_t rs, ts;
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .rx_mode = URTP_IO_MMSG };
  REQUIRE(urtp_sock_open(&rs, &rc) == 0);
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)urtp_sock_local_port(&rs),
                            .tx_mode = URTP_IO_MMSG };
  REQUIRE(urtp_sock_open(&ts, &tc) == 0);
  done_log_t d = { .mu = PTHREAD_MUTEX_INITIALIZER };
  static slot_t s;
  urtp_sendthread_t *snd;
  REQUIRE(urtp_sendthread_start(&snd, &ts, on_done, &d) == 0);
  build(&s, 0, 5);
  urtp_sendthread_submit(snd, &s.b);
  urtp_sendthread_stop(snd);
  CHECK_EQ(d.calls, (size_t)1);
  CHECK_EQ(d.pkts, (size_t)5);
  CHECK_EQ(d.bad_result, 0);
  urtp_rx_t q;
  REQUIRE(urtp_rx_init(&q, 16, 2048) == 0);
  size_t got = 0;
  while (got < 5) {
    int n = urtp_sock_recv(&rs, &q, 1000);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  CHECK_EQ(got, (size_t)5);
  urtp_rx_destroy(&q);

  REQUIRE(urtp_sendthread_start(&snd, &ts, NULL, NULL) == 0);
  urtp_sendthread_wait(snd);
  urtp_sendthread_stop(snd);
  urtp_sendthread_stop(NULL);

  /* a receive-only socket cannot send: the result says so */
  memset(&d, 0, sizeof(d));
  pthread_mutex_init(&d.mu, NULL);
  REQUIRE(urtp_sendthread_start(&snd, &rs, on_done, &d) == 0);
  urtp_sendthread_submit(snd, &s.b);
  urtp_sendthread_wait(snd);
  CHECK_EQ(d.calls, (size_t)1);
  CHECK_EQ(d.bad_result, 1);
  urtp_sendthread_stop(snd);
  urtp_batch_free(&s.b);
  urtp_sock_close(&ts);
  urtp_sock_close(&rs);
}

int main(void)
{
  TAP_RUN(test_gso);
  TAP_RUN(test_mmsg);
  TAP_RUN(test_stop_and_errors);
  return tap_done();
}
