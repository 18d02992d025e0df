/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * batch.h - a batch of outgoing RTP packets described without copying.
 *
 * The packetizer fills a batch; the socket layer sends it with as few
 * system calls as the kernel allows. Each packet is a run of iovecs: the
 * first points at its headers (RTP header plus payload-format header, kept
 * in the batch's arena), the rest point at payload bytes in the caller's
 * memory, which must stay valid until the batch is sent or cleared.
 *
 * Promises:
 *  - Memory only grows: the packet and iovec arrays geometrically, the
 *    arena by whole chunks that never move (so iovecs into it stay valid
 *    until urtp_batch_clear()). Once a batch has held the largest access unit
 *    of a stream, packetizing allocates nothing more.
 */
#ifndef URTP_BATCH_H
#define URTP_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct urtp_pkt {
  uint32_t iov_first;   /* index of the packet's first iovec in batch->iov */
  uint16_t iov_count;   /* >= 1; iov[iov_first] holds the headers */
  uint16_t len;         /* total bytes of the RTP packet */
} urtp_pkt_t;

typedef struct urtp_batch {
  urtp_pkt_t *pkts;
  size_t npkts, pkts_cap;
  struct iovec *iov;
  size_t niov, iov_cap;
  /* header arena: chunks of URTP_BATCH_CHUNK bytes, kept across clears */
  uint8_t **chunks;
  size_t nchunks;             /* allocated */
  size_t chunk;               /* chunk in use */
  size_t chunk_used;          /* bytes taken from it */
} urtp_batch_t;

#define URTP_BATCH_CHUNK 65536

/* Zero-initialised batches are valid and empty. */
void urtp_batch_init(urtp_batch_t *b);
void urtp_batch_free(urtp_batch_t *b);

/* Forgets all packets; keeps the memory. */
void urtp_batch_clear(urtp_batch_t *b);

/* Makes room for `pkts` more packets and `iovs` more iovecs. Returns 0 or
 * -ENOMEM. */
int urtp_batch_reserve(urtp_batch_t *b, size_t pkts, size_t iovs);

/* Takes n (<= URTP_BATCH_CHUNK) contiguous bytes of arena, valid until the
 * next clear. Returns NULL when out of memory. */
uint8_t *urtp_batch_arena_slow(urtp_batch_t *b, size_t n);
static inline uint8_t *urtp_batch_arena_take(urtp_batch_t *b, size_t n)
{
  if (b->chunk < b->nchunks && URTP_BATCH_CHUNK - b->chunk_used >= n) {
    uint8_t *p = b->chunks[b->chunk] + b->chunk_used;
    b->chunk_used += n;
    return p;
  }
  return urtp_batch_arena_slow(b, n);
}

/* Appends a packet made of iovecs iov[0..n) (already stored at b->iov +
 * b->niov by the caller, room reserved). */
static inline void urtp_batch_commit(urtp_batch_t *b, uint16_t n, uint16_t len)
{
  urtp_pkt_t *p = &b->pkts[b->npkts++];
  p->iov_first = (uint32_t)b->niov;
  p->iov_count = n;
  p->len = len;
  b->niov += n;
}

/* Copies packet i into dst (for tests, SRTP and plain send). Returns its
 * length, or 0 if cap is too small. */
size_t urtp_batch_copy_pkt(const urtp_batch_t *b, size_t i, uint8_t *dst, size_t cap);

#endif
