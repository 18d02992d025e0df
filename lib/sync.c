/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/sync.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/rtcp.h"

typedef struct group group_t;

struct urtp_sync_member {
  group_t *group;               /* NULL: none (registry lock) */
  urtp_sync_member_t *next;     /* in the group */
  int64_t offset;               /* registry lock */
  _Atomic int64_t delay;
  _Atomic int64_t given;        /* the offset last given, for readers */
  atomic_bool have;
};

struct group {
  group_t *next;
  uint64_t domain;
  urtp_sync_member_t *members;
  char cname[URTP_RTCP_MAX_TEXT + 1];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static group_t *groups;

/* The latest offset no further than URTP_SYNC_MAX_DELAY after the
 * earliest one: every member up to it can be delayed to meet it. */
static void recompute(group_t *g)
{
  int64_t lo = INT64_MAX, target = INT64_MIN;
  for (urtp_sync_member_t *m = g->members; m; m = m->next)
    if (m->offset < lo)
      lo = m->offset;
  for (urtp_sync_member_t *m = g->members; m; m = m->next)
    if (m->offset > target && m->offset - lo <= URTP_SYNC_MAX_DELAY)
      target = m->offset;
  for (urtp_sync_member_t *m = g->members; m; m = m->next) {
    int64_t want = m->offset < target ? target - m->offset : 0;
    int64_t cur = atomic_load(&m->delay);
    if (want == 0 || llabs(want - cur) > URTP_SYNC_DEAD_BAND)
      atomic_store(&m->delay, want);
  }
}

static void unlink_member(urtp_sync_member_t *m)
{
  group_t *g = m->group;
  if (!g)
    return;
  for (urtp_sync_member_t **p = &g->members; *p; p = &(*p)->next)
    if (*p == m) {
      *p = m->next;
      break;
    }
  m->group = NULL;
  m->next = NULL;
  atomic_store(&m->delay, 0);
  if (g->members) {
    recompute(g);
    return;
  }
  for (group_t **p = &groups; *p; p = &(*p)->next)
    if (*p == g) {
      *p = g->next;
      break;
    }
  free(g);
}

urtp_sync_member_t *urtp_sync_member_new(void)
{
  return calloc(1, sizeof(urtp_sync_member_t));
}

void urtp_sync_member_free(urtp_sync_member_t *m)
{
  if (!m)
    return;
  pthread_mutex_lock(&lock);
  unlink_member(m);
  pthread_mutex_unlock(&lock);
  free(m);
}

void urtp_sync_update(urtp_sync_member_t *m, const char *cname, uint64_t domain, int64_t offset)
{
  pthread_mutex_lock(&lock);
  group_t *g = m->group;
  if (!g || g->domain != domain || strncmp(g->cname, cname, URTP_RTCP_MAX_TEXT) != 0) {
    unlink_member(m);
    for (g = groups; g; g = g->next)
      if (g->domain == domain && strncmp(g->cname, cname, URTP_RTCP_MAX_TEXT) == 0)
        break;
    if (!g) {
      g = calloc(1, sizeof(*g));
      if (!g) {
        pthread_mutex_unlock(&lock);
        return;  /* not synchronised rather than wrong */
      }
      g->domain = domain;
      strncpy(g->cname, cname, URTP_RTCP_MAX_TEXT);
      g->next = groups;
      groups = g;
    }
    m->group = g;
    m->next = g->members;
    g->members = m;
  }
  m->offset = offset;
  atomic_store(&m->given, offset);
  atomic_store(&m->have, true);
  recompute(g);
  pthread_mutex_unlock(&lock);
}

void urtp_sync_withdraw(urtp_sync_member_t *m)
{
  pthread_mutex_lock(&lock);
  unlink_member(m);
  atomic_store(&m->have, false);
  pthread_mutex_unlock(&lock);
}

int64_t urtp_sync_delay(const urtp_sync_member_t *m)
{
  return atomic_load(&((urtp_sync_member_t *)m)->delay);
}

int urtp_sync_offset(const urtp_sync_member_t *m, int64_t *offset)
{
  urtp_sync_member_t *mm = (urtp_sync_member_t *)m;
  if (!atomic_load(&mm->have))
    return 0;
  *offset = atomic_load(&mm->given);
  return 1;
}
