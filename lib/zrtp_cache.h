/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zrtp_cache.h - the file of retained secrets ZRTP keeps per peer ZID
 * (its format: urtp/zrtp.h). The one part of ZRTP that does I/O: the
 * protocol (zrtp.c) calls it where the caller named a cache path.
 *
 * Promises: the file is rewritten whole through a temporary sibling and
 * rename(2), so a crash leaves the old or the new file; sessions of one
 * process that share a file are serialised (zrtp_cache_store holds a
 * process-wide lock for its read-modify-write); secrets read are wiped
 * when freed. Internal.
 */
#ifndef URTP_ZRTP_CACHE_H
#define URTP_ZRTP_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zrtp_priv.h"

typedef struct zrtp_cache_entry {
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  bool has_rs1, has_rs2, v;
  uint8_t rs1[32], rs2[32];
} zrtp_cache_entry_t;

/* The file lists peers from the least to the most recently used. In
 * memory: the entries in that order and an index from ZID to position
 * (open addressing), so that reading is linear in the file's size. While
 * reading, at most 2 * URTP_ZRTP_CACHE_MAX_PEERS entries are kept (the
 * oldest are dropped in bulk); writing keeps the last
 * URTP_ZRTP_CACHE_MAX_PEERS. */
#define CACHE_KEEP_MAX (2 * URTP_ZRTP_CACHE_MAX_PEERS)
#define CACHE_SLOTS 4096  /* a power of two, at least twice CACHE_KEEP_MAX */

typedef struct zrtp_cache_file {
  bool has_self;
  uint8_t self[URTP_ZRTP_ZID_LEN];
  zrtp_cache_entry_t *e;
  size_t n, cap;
  uint32_t *slot;  /* CACHE_SLOTS; position + 1, 0: empty */
} zrtp_cache_file_t;

/* Replaces (or adds) the entry for e->zid, now the most recently used;
 * only_v keeps the stored secrets and changes the verified flag. */
int zrtp_cache_store(const char *path, const zrtp_cache_entry_t *e, bool only_v);

/* The entry for zid into out (zeroed when there is none). Returns 1
 * (found), 0 (not found, or no file yet), -ENOMEM or -EIO. */
int zrtp_cache_load(const char *path, const uint8_t zid[URTP_ZRTP_ZID_LEN], zrtp_cache_entry_t *out);

/* Our own ZID: the file's, else a new one from rng (zrtp_rand), saved in
 * the file. Returns 0, -ENOMEM or -EIO. */
int zrtp_cache_own_zid(const char *path, uint8_t zid[URTP_ZRTP_ZID_LEN], zrtp_rng_fn rng,
                       void *rng_user);

#endif
