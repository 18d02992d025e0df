/* SPDX-License-Identifier: BSD-2-Clause */
/* zrtp_cache.c - the file of retained secrets (zrtp_cache.h). */
#include "zrtp_cache.h"
#include "zrtp_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sessions of one process may share a file: read-modify-write under a lock. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int hexval(int c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Parses exactly 2*n hex digits followed by a space, newline or end. */
static const char *parse_hex(const char *s, uint8_t *out, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    int hi = hexval((unsigned char)s[2 * i]), lo = hi < 0 ? -1 : hexval((unsigned char)s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return NULL;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  s += 2 * n;
  return (*s == ' ' || *s == '\n' || *s == '\0') ? s : NULL;
}

static const char *parse_secret(const char *s, uint8_t out[32], bool *has)
{
  if (s[0] == '-' && (s[1] == ' ' || s[1] == '\n' || s[1] == '\0')) {
    *has = false;
    return s + 1;
  }
  *has = true;
  return parse_hex(s, out, 32);
}

static void zrtp_cache_free(zrtp_cache_file_t *f)
{
  if (f->e)
    zrtp_wipe(f->e, f->cap * sizeof *f->e);
  free(f->e);
  free(f->slot);
  memset(f, 0, sizeof *f);
}

static int cache_init(zrtp_cache_file_t *f)
{
  memset(f, 0, sizeof *f);
  f->slot = calloc(CACHE_SLOTS, sizeof *f->slot);
  return f->slot ? 0 : -ENOMEM;
}

/* FNV-1a; ZIDs are random, and an adversarial set of them can cost at most
 * CACHE_KEEP_MAX probes per lookup. */
static size_t zid_hash(const uint8_t zid[URTP_ZRTP_ZID_LEN])
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < URTP_ZRTP_ZID_LEN; i++)
    h = (h ^ zid[i]) * 16777619u;
  return h & (CACHE_SLOTS - 1);
}

/* The slot holding zid, or the empty one where it would go. */
static uint32_t *cache_slot(zrtp_cache_file_t *f, const uint8_t zid[URTP_ZRTP_ZID_LEN])
{
  size_t i = zid_hash(zid);
  while (f->slot[i] && memcmp(f->e[f->slot[i] - 1].zid, zid, URTP_ZRTP_ZID_LEN) != 0)
    i = (i + 1) & (CACHE_SLOTS - 1);
  return &f->slot[i];
}

static void cache_reindex(zrtp_cache_file_t *f)
{
  memset(f->slot, 0, CACHE_SLOTS * sizeof *f->slot);
  for (size_t i = 0; i < f->n; i++)
    *cache_slot(f, f->e[i].zid) = (uint32_t)i + 1;
}

static zrtp_cache_entry_t *zrtp_cache_find(zrtp_cache_file_t *f, const uint8_t zid[12])
{
  uint32_t s = *cache_slot(f, zid);
  return s ? &f->e[s - 1] : NULL;
}

/* Drops all but the `keep` most recently used entries. */
static void cache_trim(zrtp_cache_file_t *f, size_t keep)
{
  if (f->n <= keep)
    return;
  size_t drop = f->n - keep;
  zrtp_wipe(f->e, drop * sizeof *f->e);
  memmove(f->e, f->e + drop, keep * sizeof *f->e);
  zrtp_wipe(f->e + keep, drop * sizeof *f->e);
  f->n = keep;
  cache_reindex(f);
}

/* Appends e as the most recently used; the caller checked it is new. */
static int cache_add(zrtp_cache_file_t *f, const zrtp_cache_entry_t *e)
{
  if (f->n == CACHE_KEEP_MAX)
    cache_trim(f, URTP_ZRTP_CACHE_MAX_PEERS);
  if (f->n == f->cap) {
    size_t nc = f->cap ? 2 * f->cap : 8;
    if (nc > CACHE_KEEP_MAX)
      nc = CACHE_KEEP_MAX;
    zrtp_cache_entry_t *ne = calloc(nc, sizeof *ne);
    if (!ne)
      return -ENOMEM;
    if (f->n)
      memcpy(ne, f->e, f->n * sizeof *ne);
    if (f->e)
      zrtp_wipe(f->e, f->cap * sizeof *f->e);
    free(f->e);
    f->e = ne;
    f->cap = nc;
  }
  f->e[f->n] = *e;
  *cache_slot(f, e->zid) = (uint32_t)(f->n + 1);
  f->n++;
  return 0;
}

/* Moves an entry to the end: the most recently used. */
static void cache_touch(zrtp_cache_file_t *f, zrtp_cache_entry_t *e)
{
  size_t i = (size_t)(e - f->e);
  if (i + 1 == f->n)
    return;
  zrtp_cache_entry_t t = *e;
  memmove(f->e + i, f->e + i + 1, (f->n - i - 1) * sizeof *f->e);
  f->e[f->n - 1] = t;
  zrtp_wipe(&t, sizeof t);
  cache_reindex(f);
}

static int zrtp_cache_read(const char *path, zrtp_cache_file_t *f)
{
  if (cache_init(f))
    return -ENOMEM;
  FILE *fp = fopen(path, "r");
  if (!fp)
    return errno == ENOENT ? 0 : -EIO;
  char line[512];
  bool first = true;
  while (fgets(line, sizeof line, fp)) {
    if (first) {
      first = false;
      if (strcmp(line, "urtp-zrtp-cache 1\n") != 0)
        break;  /* not ours: read as empty, replaced on the next write */
      continue;
    }
    if (strncmp(line, "zid ", 4) == 0) {
      const char *s = parse_hex(line + 4, f->self, URTP_ZRTP_ZID_LEN);
      f->has_self = s != NULL;
    } else if (strncmp(line, "peer ", 5) == 0) {
      zrtp_cache_entry_t e = {0};
      const char *s = parse_hex(line + 5, e.zid, URTP_ZRTP_ZID_LEN);
      if (s && *s == ' ')
        s = parse_secret(s + 1, e.rs1, &e.has_rs1);
      else
        s = NULL;
      if (s && *s == ' ')
        s = parse_secret(s + 1, e.rs2, &e.has_rs2);
      else
        s = NULL;
      if (!s || s[0] != ' ' || (s[1] != '0' && s[1] != '1') || (s[2] != '\n' && s[2] != '\0'))
        continue;
      e.v = s[1] == '1';
      int rc = zrtp_cache_find(f, e.zid) ? 0 : cache_add(f, &e);
      zrtp_wipe(&e, sizeof e);
      if (rc) {
        fclose(fp);
        zrtp_cache_free(f);
        return rc;
      }
    }
  }
  int err = ferror(fp);
  fclose(fp);
  zrtp_wipe(line, sizeof line);
  if (err) {
    zrtp_cache_free(f);
    return -EIO;
  }
  return 0;
}

static void put_hex(FILE *fp, const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fprintf(fp, "%02x", p[i]);
}

/* Writes the whole file to a temporary sibling, syncs it, renames it over. */
static int zrtp_cache_write(const char *path, const zrtp_cache_file_t *f)
{
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp)
    return -ENOMEM;
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmpXXXXXX", 11);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    free(tmp);
    return -EIO;
  }
  (void)fchmod(fd, 0600);
  FILE *fp = fdopen(fd, "w");
  if (!fp) {
    close(fd);
    unlink(tmp);
    free(tmp);
    return -EIO;
  }
  fputs("urtp-zrtp-cache 1\n", fp);
  if (f->has_self) {
    fputs("zid ", fp);
    put_hex(fp, f->self, URTP_ZRTP_ZID_LEN);
    fputc('\n', fp);
  }
  /* the most recently used, oldest first */
  size_t first = f->n > URTP_ZRTP_CACHE_MAX_PEERS ? f->n - URTP_ZRTP_CACHE_MAX_PEERS : 0;
  for (size_t i = first; i < f->n; i++) {
    const zrtp_cache_entry_t *e = &f->e[i];
    fputs("peer ", fp);
    put_hex(fp, e->zid, URTP_ZRTP_ZID_LEN);
    fputc(' ', fp);
    if (e->has_rs1)
      put_hex(fp, e->rs1, 32);
    else
      fputc('-', fp);
    fputc(' ', fp);
    if (e->has_rs2)
      put_hex(fp, e->rs2, 32);
    else
      fputc('-', fp);
    fprintf(fp, " %d\n", e->v ? 1 : 0);
  }
  int bad = fflush(fp) != 0 || ferror(fp) || fsync(fileno(fp)) != 0;
  bad |= fclose(fp) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    free(tmp);
    return -EIO;
  }
  free(tmp);
  return 0;
}

/* Replaces (or adds) the entry for e->zid, now the most recently used;
 * only_v keeps the stored secrets and changes the verified flag. */
int zrtp_cache_store(const char *path, const zrtp_cache_entry_t *e, bool only_v)
{
  pthread_mutex_lock(&cache_lock);
  zrtp_cache_file_t f;
  int rc = zrtp_cache_read(path, &f);
  if (rc == 0) {
    zrtp_cache_entry_t *old = zrtp_cache_find(&f, e->zid);
    if (old && only_v)
      old->v = e->v;
    else if (old)
      *old = *e;
    else
      rc = cache_add(&f, e);
    if (old)
      cache_touch(&f, old);
    if (rc == 0)
      rc = zrtp_cache_write(path, &f);
  }
  zrtp_cache_free(&f);
  pthread_mutex_unlock(&cache_lock);
  return rc;
}

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

int zrtp_cache_load(const char *path, const uint8_t zid[URTP_ZRTP_ZID_LEN], zrtp_cache_entry_t *out)
{
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&cache_lock);
  zrtp_cache_file_t f;
  int rc = zrtp_cache_read(path, &f);
  if (rc == 0) {
    zrtp_cache_entry_t *e = zrtp_cache_find(&f, zid);
    if (e) {
      *out = *e;
      rc = 1;
    }
  }
  zrtp_cache_free(&f);
  pthread_mutex_unlock(&cache_lock);
  return rc;
}

int zrtp_cache_own_zid(const char *path, uint8_t zid[URTP_ZRTP_ZID_LEN], zrtp_rng_fn rng,
                       void *rng_user)
{
  pthread_mutex_lock(&cache_lock);
  zrtp_cache_file_t f;
  int rc = zrtp_cache_read(path, &f);
  if (rc == 0 && f.has_self) {
    memcpy(zid, f.self, URTP_ZRTP_ZID_LEN);
  } else if (rc == 0) {
    rc = zrtp_rand(rng, rng_user, zid, URTP_ZRTP_ZID_LEN);
    if (rc == 0) {
      f.has_self = true;
      memcpy(f.self, zid, URTP_ZRTP_ZID_LEN);
      rc = zrtp_cache_write(path, &f);
    }
  }
  zrtp_cache_free(&f);
  pthread_mutex_unlock(&cache_lock);
  return rc;
}
