/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sendthread.h - a sending thread: one batch goes out while the caller builds
 * the next.
 *
 * Most of a sender's time is the kernel copying packets out of the caller's
 * memory (urtp_sock_send); most of the rest is finding start codes in the
 * next access unit and packetizing it. Both read the same cold memory, so
 * done one after the other on one core they add up; on two threads the
 * start-code search of access unit n+1 overlaps the send of n.
 *
 * Promises:
 *  - At most one batch is in flight: urtp_sendthread_submit() first waits
 *    until the previous one has been sent. When it returns, every batch
 *    submitted before this one is sent and its done callback has returned,
 *    so the caller may reuse or free it and the memory its iovecs point to.
 *  - Batches go out in the order submitted, each with urtp_sock_send().
 *  - The done callback runs on the sending thread, once per batch, after
 *    its send, with urtp_sock_send()'s result and the socket's tx_errors
 *    increase during that send.
 *  - No allocation after urtp_sendthread_start().
 *  - The socket is used by the sending thread between a submit and its
 *    done callback only; the caller must not send on it meanwhile.
 */
#ifndef URTP_SENDTHREAD_H
#define URTP_SENDTHREAD_H

#include <stdint.h>

#include "batch.h"
#include "net.h"

typedef struct urtp_sendthread urtp_sendthread_t;

typedef void (*urtp_sendthread_done_fn)(void *user, const urtp_batch_t *b, int result,
                                    uint64_t tx_errors);

/* Starts the sending thread for s. Returns 0, -ENOMEM or -errno from
 * pthread_create. */
int urtp_sendthread_start(urtp_sendthread_t **out, urtp_sock_t *s, urtp_sendthread_done_fn done,
                      void *user);

/* The same with a sending function of the caller's, which the thread
 * calls once per batch instead of urtp_sock_send and done (one batch to
 * several receivers, say); the caller keeps its own socket rules. */
typedef void (*urtp_sendthread_send_fn)(void *user, const urtp_batch_t *b);
int urtp_sendthread_start_fn(urtp_sendthread_t **out, urtp_sendthread_send_fn send, void *user);

/* Waits until the previous batch is sent, then hands b to the thread.
 * b must stay unchanged until the next submit or wait returns. */
void urtp_sendthread_submit(urtp_sendthread_t *t, const urtp_batch_t *b);

/* Waits until nothing is in flight. */
void urtp_sendthread_wait(urtp_sendthread_t *t);

/* Waits, ends the thread and frees. NULL is fine. */
void urtp_sendthread_stop(urtp_sendthread_t *t);

#endif
