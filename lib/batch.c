/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/batch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void urtp_batch_init(urtp_batch_t *b)
{
  memset(b, 0, sizeof(*b));
}

void urtp_batch_free(urtp_batch_t *b)
{
  free(b->pkts);
  free(b->iov);
  for (size_t i = 0; i < b->nchunks; i++)
    free(b->chunks[i]);
  free(b->chunks);
  urtp_batch_init(b);
}

void urtp_batch_clear(urtp_batch_t *b)
{
  b->npkts = 0;
  b->niov = 0;
  b->chunk = 0;
  b->chunk_used = 0;
}

/* Grows *mem to hold at least need elements of size sz, doubling. */
static int grow(void **mem, size_t *cap, size_t need, size_t sz)
{
  if (need <= *cap)
    return 0;
  size_t n = *cap ? *cap : 64;
  while (n < need)
    n *= 2;
  void *p = realloc(*mem, n * sz);
  if (!p)
    return -ENOMEM;
  *mem = p;
  *cap = n;
  return 0;
}

int urtp_batch_reserve(urtp_batch_t *b, size_t pkts, size_t iovs)
{
  if (grow((void **)&b->pkts, &b->pkts_cap, b->npkts + pkts, sizeof(*b->pkts)) ||
      grow((void **)&b->iov, &b->iov_cap, b->niov + iovs, sizeof(*b->iov)))
    return -ENOMEM;
  return 0;
}

uint8_t *urtp_batch_arena_slow(urtp_batch_t *b, size_t n)
{
  if (n > URTP_BATCH_CHUNK)
    return NULL;
  /* The current chunk is full (or there is none): move on to the next one,
   * allocating it the first time. Chunks never move, so iovecs stay valid. */
  size_t next = b->nchunks == 0 ? 0 : b->chunk + 1;
  if (next >= b->nchunks) {
    uint8_t **c = realloc(b->chunks, (b->nchunks + 1) * sizeof(*c));
    if (!c)
      return NULL;
    b->chunks = c;
    if (!(c[b->nchunks] = malloc(URTP_BATCH_CHUNK)))
      return NULL;
    b->nchunks++;
    next = b->nchunks - 1;
  }
  b->chunk = next;
  b->chunk_used = n;
  return b->chunks[next];
}

size_t urtp_batch_copy_pkt(const urtp_batch_t *b, size_t i, uint8_t *dst, size_t cap)
{
  const urtp_pkt_t *p = &b->pkts[i];
  if (p->len > cap)
    return 0;
  size_t off = 0;
  for (unsigned k = 0; k < p->iov_count; k++) {
    const struct iovec *v = &b->iov[p->iov_first + k];
    memcpy(dst + off, v->iov_base, v->iov_len);
    off += v->iov_len;
  }
  return off;
}
