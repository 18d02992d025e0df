/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/sendthread.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct urtp_sendthread {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;        /* job handed over, job done, or quit */
  urtp_sock_t *sock;
  urtp_sendthread_done_fn done;
  urtp_sendthread_send_fn send;   /* instead of urtp_sock_send and done */
  void *user;
  const urtp_batch_t *job;    /* in flight; NULL when idle */
  bool quit;
};

static void *sender_main(void *arg)
{
  urtp_sendthread_t *t = arg;
  pthread_mutex_lock(&t->lock);
  for (;;) {
    while (!t->job && !t->quit)
      pthread_cond_wait(&t->cond, &t->lock);
    if (!t->job)
      break; /* quit, and nothing left to send */
    const urtp_batch_t *b = t->job;
    pthread_mutex_unlock(&t->lock);

    if (t->send) {
      t->send(t->user, b);
    } else {
      uint64_t e0 = t->sock->tx_errors;
      int r = urtp_sock_send(t->sock, b);
      if (t->done)
        t->done(t->user, b, r, t->sock->tx_errors - e0);
    }

    pthread_mutex_lock(&t->lock);
    t->job = NULL;
    pthread_cond_broadcast(&t->cond);
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

static int start(urtp_sendthread_t **out, urtp_sock_t *s, urtp_sendthread_done_fn done,
                 urtp_sendthread_send_fn send, void *user)
{
  *out = NULL;
  urtp_sendthread_t *t = calloc(1, sizeof(*t));
  if (!t)
    return -ENOMEM;
  t->sock = s;
  t->done = done;
  t->send = send;
  t->user = user;
  pthread_mutex_init(&t->lock, NULL);
  pthread_cond_init(&t->cond, NULL);
  int r = pthread_create(&t->thread, NULL, sender_main, t);
  if (r != 0) {
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    free(t);
    return -r;
  }
  *out = t;
  return 0;
}

int urtp_sendthread_start(urtp_sendthread_t **out, urtp_sock_t *s, urtp_sendthread_done_fn done,
                          void *user)
{
  return start(out, s, done, NULL, user);
}

int urtp_sendthread_start_fn(urtp_sendthread_t **out, urtp_sendthread_send_fn send, void *user)
{
  return start(out, NULL, NULL, send, user);
}

static void wait_idle_locked(urtp_sendthread_t *t)
{
  while (t->job)
    pthread_cond_wait(&t->cond, &t->lock);
}

void urtp_sendthread_submit(urtp_sendthread_t *t, const urtp_batch_t *b)
{
  pthread_mutex_lock(&t->lock);
  wait_idle_locked(t);
  t->job = b;
  /* one condition for both directions: only the thread can be waiting now */
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
}

void urtp_sendthread_wait(urtp_sendthread_t *t)
{
  pthread_mutex_lock(&t->lock);
  wait_idle_locked(t);
  pthread_mutex_unlock(&t->lock);
}

void urtp_sendthread_stop(urtp_sendthread_t *t)
{
  if (!t)
    return;
  pthread_mutex_lock(&t->lock);
  wait_idle_locked(t);
  t->quit = true;
  pthread_cond_broadcast(&t->cond);
  pthread_mutex_unlock(&t->lock);
  pthread_join(t->thread, NULL);
  pthread_cond_destroy(&t->cond);
  pthread_mutex_destroy(&t->lock);
  free(t);
}
