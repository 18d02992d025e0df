/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/depay.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/rtp.h"
#include "urtp/bytes.h"

/*
 * Packets go through urtp_reorder; what comes out in order is taken apart
 * here, straight into the access unit's buffer:
 *
 *   single NAL unit:  | NAL hdr | [DONL] | NAL payload |
 *   aggregation:      | AP hdr | [DONL] size | NAL | [DOND] size | NAL | ...
 *   fragmentation:    | FU indicator (NAL hdr, type FU) | S|E|..|type | [DONL] | data |
 *
 * ([...] only in H.265 sessions with sprop-max-don-diff > 0, and DONL only
 * in the first FU.)
 */

/* What to make of FU fragments that arrive with no FU open. */
enum {
  SKIP_NONE,      /* none expected: such a fragment is malformed */
  SKIP_UNCOUNTED, /* packets were lost: the first orphan is a dropped NAL */
  SKIP_COUNTED,   /* the rest of an FU already counted in dropped_nals */
};

#define MIN_HINT 2048u
#define START_HINT 16384u

/* ---- recycled access unit buffers ----
 *
 * With cfg.recycle every access unit buffer carries a header in front of it
 * that names its pool and capacity, so that urtp_depay_release() needs only
 * the data pointer (and can be a GDestroyNotify). The pool is shared by the
 * depayloader and the buffers it handed out, and lives until the last of
 * them is gone: buffers may come back from any thread, and after
 * urtp_depay_free(). */

/* Buffers kept for reuse: the access unit being assembled, those finished
 * but not yet popped or still downstream; beyond a few, keeping more only
 * holds memory. */
#define POOL_KEEP 8

/* max_align_t keeps the data after it as aligned as malloc's. */
typedef union au_hdr {
  struct {
    struct au_pool *pool;
    size_t cap;             /* bytes after the header */
  } h;
  max_align_t align;
} au_hdr_t;

typedef struct au_pool {
  pthread_mutex_t lock;
  size_t refs;              /* the depayloader, and every buffer not in keep[] */
  bool closed;              /* the depayloader is gone: free what comes back */
  size_t nkeep;
  au_hdr_t *keep[POOL_KEEP]; /* a stack: the last released is the warmest */
} au_pool_t;

static au_pool_t *pool_new(void)
{
  au_pool_t *p = calloc(1, sizeof(*p));
  if (!p)
    return NULL;
  if (pthread_mutex_init(&p->lock, NULL) != 0) {
    free(p);
    return NULL;
  }
  p->refs = 1;
  return p;
}

static void pool_destroy(au_pool_t *p)
{
  pthread_mutex_destroy(&p->lock);
  free(p);
}

/* Takes a kept buffer: its data, or NULL (*cap 0) if none is kept. */
static uint8_t *pool_take(au_pool_t *p, size_t *cap)
{
  au_hdr_t *h = NULL;
  pthread_mutex_lock(&p->lock);
  if (p->nkeep > 0) {
    h = p->keep[--p->nkeep];
    p->refs++;
  }
  pthread_mutex_unlock(&p->lock);
  *cap = h ? h->h.cap : 0;
  return h ? (uint8_t *)(h + 1) : NULL;
}

/* The depayloader lets go: kept buffers are freed now, the others when they
 * come back. */
static void pool_close(au_pool_t *p)
{
  pthread_mutex_lock(&p->lock);
  p->closed = true;
  size_t n = p->nkeep;
  au_hdr_t *kept[POOL_KEEP];
  memcpy(kept, p->keep, n * sizeof(*kept));
  p->nkeep = 0;
  bool last = --p->refs == 0;
  pthread_mutex_unlock(&p->lock);
  for (size_t i = 0; i < n; i++)
    free(kept[i]);
  if (last)
    pool_destroy(p);
}

void urtp_depay_release(void *data)
{
  if (!data)
    return;
  au_hdr_t *h = (au_hdr_t *)data - 1;
  au_pool_t *p = h->h.pool;
  au_hdr_t *drop = h;
  pthread_mutex_lock(&p->lock);
  if (!p->closed) {
    /* Full: the least recently released goes, as the coldest. */
    if (p->nkeep == POOL_KEEP) {
      drop = p->keep[0];
      memmove(p->keep, p->keep + 1, (POOL_KEEP - 1) * sizeof(*p->keep));
      p->nkeep--;
    } else {
      drop = NULL;
    }
    p->keep[p->nkeep++] = h;
  }
  bool last = --p->refs == 0;
  pthread_mutex_unlock(&p->lock);
  free(drop);
  if (last)
    pool_destroy(p);
}

struct urtp_depay {
  urtp_depay_config_t cfg;
  const urtp_h26x_desc_t *desc;   /* NULL for Opus */
  au_pool_t *pool;                /* with cfg.recycle */
  urtp_reorder_t ro;
  uint32_t ssrc;
  bool ssrc_locked;
  uint64_t resyncs_seen;
  uint64_t now;             /* arrival time of the datagram being pushed */
  /* the packet being pushed, already parsed (in-order delivery hands back
   * the caller's buffer, so it need not be parsed twice) */
  const uint8_t *cur_raw;
  const urtp_rtp_pkt_t *cur_parsed;
  urtp_rtp_pkt_t cur;

  /* access unit in progress */
  bool in_au;
  uint64_t au_arrival;
  uint16_t au_ext_profile, au_ext_len;  /* urtp_au_t's ext */
  uint8_t au_ext[URTP_HDREXT_MAX];
  uint32_t au_ssrc;
  uint8_t *buf;
  size_t len, cap, hint;
  uint32_t ts;
  uint64_t first_seq, last_seq;
  uint32_t nal_count;
  bool has_key;
  bool damaged;     /* lost packets or NAL units */
  bool oversize;
  bool discard;     /* doomed (oversize, or damaged under DROP_AU): write nothing */
  bool discont;     /* for the AU in progress or the next one */
  bool restarted;   /* the next AU is the first after urtp_depay_restart() */
  bool need_key;

  /* fragmentation unit in progress */
  bool fu_open;
  unsigned fu_type;
  size_t fu_start;  /* offset of its start code in buf */
  int skip;
  unsigned skip_type;

  urtp_au_t q[URTP_DEPAY_QUEUE];
  size_t q_head, q_len;
  urtp_depay_stats_t stats;
};

/* Types that stand for one NAL unit (not aggregation, FU, PACI, reserved). */
static bool is_nal_type(const urtp_h26x_desc_t *desc, unsigned type)
{
  if (desc->codec == URTP_CODEC_H264 && type == 0)
    return false;
  return type < desc->ap_type;
}

/* ---- the access unit buffer ---- */

static void make_oversize(urtp_depay_t *d)
{
  d->oversize = true;
  d->discard = true;
  d->len = 0;
}

/* Resizes an access unit buffer (data NULL: a new one) to cap bytes.
 * Returns the new data, or NULL with data left as it was. */
static uint8_t *buf_resize(urtp_depay_t *d, uint8_t *data, size_t cap)
{
  if (!d->pool)
    return realloc(data, cap);
  if (cap > SIZE_MAX - sizeof(au_hdr_t))
    return NULL;
  au_hdr_t *h = realloc(data ? (au_hdr_t *)data - 1 : NULL, sizeof(*h) + cap);
  if (!h)
    return NULL;
  if (!data) {
    pthread_mutex_lock(&d->pool->lock);
    d->pool->refs++;
    pthread_mutex_unlock(&d->pool->lock);
  }
  h->h.pool = d->pool;
  h->h.cap = cap;
  return (uint8_t *)(h + 1);
}

static void buf_free(urtp_depay_t *d, uint8_t *data)
{
  if (d->pool)
    urtp_depay_release(data);
  else
    free(data);
}

/* reserve() when the buffer is too small (or there is none yet). */
static __attribute__((noinline)) uint8_t *reserve_slow(urtp_depay_t *d, size_t n)
{
  size_t max = d->cfg.max_au_size;
  if (n > max - d->len) {
    make_oversize(d);
    return NULL;
  }
  size_t need = d->len + n;
  if (!d->buf && d->pool)
    d->buf = pool_take(d->pool, &d->cap);
  if (need > d->cap) {
    size_t cap = d->cap ? d->cap * 2 : d->hint;
    if (cap < need)
      cap = need;
    if (cap > max)
      cap = max;
    uint8_t *b = buf_resize(d, d->buf, cap);
    if (!b) {
      /* Out of memory is treated like the bound it is. */
      make_oversize(d);
      return NULL;
    }
    d->buf = b;
    d->cap = cap;
  }
  return d->buf + d->len;
}

/* Room for n more bytes at buf + len, or NULL when the AU is being
 * discarded or would exceed max_au_size. Inline for the common case of a
 * packet that fits (len <= cap <= max_au_size always holds). */
static inline uint8_t *reserve(urtp_depay_t *d, size_t n)
{
  if (d->discard)
    return NULL;
  if (n <= d->cap - d->len)
    return d->buf + d->len;
  return reserve_slow(d, n);
}

static void nal_done(urtp_depay_t *d, unsigned type)
{
  d->nal_count++;
  if (urtp_h26x_is_keyframe(d->desc, type))
    d->has_key = true;
}

static void put_start_code(uint8_t *w)
{
  w[0] = 0;
  w[1] = 0;
  w[2] = 0;
  w[3] = 1;
}

/* Writes start code, header and body of one NAL unit. */
static void emit_nal(urtp_depay_t *d, const uint8_t *hdr, const uint8_t *body, size_t blen)
{
  size_t hl = d->desc->hdr_len;
  uint8_t *w = reserve(d, 4 + hl + blen);
  if (w) {
    put_start_code(w);
    memcpy(w + 4, hdr, hl);
    memcpy(w + 4 + hl, body, blen);
    d->len += 4 + hl + blen;
  }
  nal_done(d, urtp_h26x_type(d->desc, hdr));
}

/* ---- damage ---- */

static void mark_damaged(urtp_depay_t *d)
{
  d->damaged = true;
  if (d->cfg.loss_policy == URTP_LOSS_DROP_AU && !d->discard) {
    /* The AU will be dropped whole: stop copying into it. */
    d->discard = true;
    d->len = 0;
  }
}

/* Drops the open FU's partial NAL unit; its remaining fragments will be
 * skipped quietly. */
static void drop_fu(urtp_depay_t *d)
{
  if (!d->discard)
    d->len = d->fu_start;
  d->fu_open = false;
  d->stats.dropped_nals++;
  d->skip = SKIP_COUNTED;
  d->skip_type = d->fu_type;
  mark_damaged(d);
}

/* Packets are missing just before the current one (lost, malformed or not
 * understood). */
static void lose(urtp_depay_t *d)
{
  if (d->fu_open)
    drop_fu(d);
  else if (d->skip == SKIP_NONE)
    d->skip = SKIP_UNCOUNTED;
  if (d->in_au)
    mark_damaged(d);
}

static void malformed(urtp_depay_t *d)
{
  d->stats.malformed++;
  lose(d);
}

static void unsupported(urtp_depay_t *d)
{
  d->stats.unsupported++;
  d->stats.unsupported_run++;
  lose(d);
}

/* ---- output queue ---- */

static void enqueue(urtp_depay_t *d, const urtp_au_t *au)
{
  if (d->q_len == URTP_DEPAY_QUEUE) {
    buf_free(d, d->q[d->q_head].data);
    d->q_head = (d->q_head + 1) % URTP_DEPAY_QUEUE;
    d->q_len--;
    d->stats.dropped_aus++;
    /* The consumer sees a hole before what is now the oldest. */
    d->q[d->q_head].flags |= URTP_AU_DISCONT;
  }
  urtp_au_t *q = &d->q[(d->q_head + d->q_len) % URTP_DEPAY_QUEUE];
  *q = *au;
  d->q_len++;
  if (d->cfg.on_au)
    d->cfg.on_au(d->cfg.user, q);
}

/* ---- access unit boundaries ---- */

/* Gathers p's header extension elements for the access unit: the union
 * over its packets, a later packet's value winning (a sender may put an
 * element on one packet only: GStreamer's colour space on the marker
 * packet). An extension that would make it larger than URTP_HDREXT_MAX is
 * left out. */
static void keep_ext(uint16_t *profile, uint16_t *len, uint8_t *ext, const urtp_rtp_pkt_t *p)
{
  size_t n = p->hdr.ext_len;
  if (n == 0 || n > URTP_HDREXT_MAX)
    return;
  if (*len == 0) {
    *profile = p->hdr.ext_profile;
    *len = (uint16_t)n;
    memcpy(ext, p->hdr.ext_data, n);
    return;
  }
  if (*len == n && *profile == p->hdr.ext_profile && memcmp(ext, p->hdr.ext_data, n) == 0)
    return;
  urtp_hdrext_merge(profile, ext, len, URTP_HDREXT_MAX, p->hdr.ext_profile, p->hdr.ext_data, n);
}

static void start_au(urtp_depay_t *d, uint32_t ts, uint32_t ssrc, uint64_t seq)
{
  d->in_au = true;
  d->au_ssrc = ssrc;
  d->au_arrival = d->ro.delivered_at;
  d->au_ext_len = 0;
  d->ts = ts;
  d->first_seq = seq;
  d->len = 0;
  d->nal_count = 0;
  d->has_key = false;
  d->damaged = false;
  d->oversize = false;
  d->discard = false;
}

static void drop_au(urtp_depay_t *d)
{
  d->len = 0;   /* the buffer is kept for the next AU */
  d->discont = true;
  if (d->cfg.wait_for_keyframe)
    d->need_key = true;
}

static void finish_au(urtp_depay_t *d, bool no_marker)
{
  if (!d->in_au)
    return;
  if (d->fu_open)
    drop_fu(d);   /* its end never came */
  d->in_au = false;

  if (d->oversize) {
    d->stats.oversize++;
    drop_au(d);
    return;
  }
  bool key_ok = d->has_key && !d->damaged;
  if ((d->damaged && d->cfg.loss_policy == URTP_LOSS_DROP_AU) || d->nal_count == 0 ||
      ((d->need_key || (d->damaged && d->cfg.wait_for_keyframe)) && !key_ok)) {
    d->stats.dropped_aus++;
    drop_au(d);
    return;
  }
  if (key_ok)
    d->need_key = false;

  urtp_au_t au = {
    .data = d->buf,
    .len = d->len,
    .rtp_ts = d->ts,
    .first_seq = d->first_seq,
    .last_seq = d->last_seq,
    .nal_count = d->nal_count,
    .flags = (d->has_key ? URTP_AU_KEYFRAME : 0u) | (d->discont ? URTP_AU_DISCONT : 0u) |
             (d->damaged ? URTP_AU_DAMAGED : 0u) | (no_marker ? URTP_AU_NO_MARKER : 0u),
    .ssrc = d->au_ssrc,
    .arrival = d->au_arrival,
    .ext_profile = d->au_ext_profile,
    .ext_len = d->au_ext_len,
  };
  memcpy(au.ext, d->au_ext, d->au_ext_len);
  enqueue(d, &au);
  d->buf = NULL;
  d->cap = 0;
  d->len = 0;
  d->discont = false;

  /* Next AU's first allocation: about the size of recent ones, shrinking
   * slowly after a large one. */
  if (au.len > d->hint)
    d->hint = au.len + au.len / 4;
  else
    d->hint -= (d->hint - au.len) / 8;
  if (d->hint < MIN_HINT)
    d->hint = MIN_HINT;
  if (d->hint > d->cfg.max_au_size)
    d->hint = d->cfg.max_au_size;
}

/* ---- payload formats ---- */

/* Outcome of one packet's payload. */
enum {
  PKT_OK,
  PKT_BAD,        /* malformed: counted, and its NAL unit lost */
  PKT_BAD_QUIET,  /* malformed, already counted and dealt with */
  PKT_SKIPPED,    /* part of a NAL unit already given up */
};

/* Returns false if malformed. */
static bool single_nal(urtp_depay_t *d, const uint8_t *pl, size_t n)
{
  size_t off = d->desc->hdr_len;
  if (d->cfg.donl) {
    if (n - off < 2)
      return false;
    off += 2;
  }
  if (d->fu_open)
    drop_fu(d);   /* interrupted by another packet: it cannot be whole */
  d->skip = SKIP_NONE;
  emit_nal(d, pl, pl + off, n - off);
  return true;
}

static bool aggregation(urtp_depay_t *d, const uint8_t *pl, size_t n)
{
  const urtp_h26x_desc_t *desc = d->desc;
  size_t hl = desc->hdr_len;
  /* First check every unit, so that a bad packet contributes nothing. */
  size_t off = hl, units = 0;
  while (off < n) {
    if (d->cfg.donl) {
      size_t dn = units == 0 ? 2 : 1;   /* DONL, then DOND */
      if (n - off < dn)
        return false;
      off += dn;
    }
    if (n - off < 2)
      return false;
    size_t sz = urtp_rd16(pl + off);
    off += 2;
    if (sz < hl || sz > n - off || !is_nal_type(desc, urtp_h26x_type(desc, pl + off)))
      return false;
    off += sz;
    units++;
  }
  if (units == 0)
    return false;

  if (d->fu_open)
    drop_fu(d);
  d->skip = SKIP_NONE;
  off = hl;
  for (size_t i = 0; i < units; i++) {
    if (d->cfg.donl)
      off += i == 0 ? 2 : 1;
    size_t sz = urtp_rd16(pl + off);
    off += 2;
    emit_nal(d, pl + off, pl + off + hl, sz - hl);
    off += sz;
  }
  return true;
}

static int fragment(urtp_depay_t *d, const uint8_t *pl, size_t n)
{
  const urtp_h26x_desc_t *desc = d->desc;
  size_t hl = desc->hdr_len;
  if (n < hl + 1u)
    return PKT_BAD;
  uint8_t fh = pl[hl];
  bool s = fh & 0x80, e = fh & 0x40;
  unsigned type = fh & desc->fu_type_mask;
  size_t off = hl + 1u;
  if ((s && e) || !is_nal_type(desc, type))
    return PKT_BAD;

  if (s) {
    if (d->cfg.donl) {
      if (n - off < 2)
        return PKT_BAD;
      off += 2;
    }
    if (d->fu_open)
      drop_fu(d);   /* a new start while one is open: the old one lost its end */
    d->skip = SKIP_NONE;
    d->fu_open = true;
    d->fu_type = type;
    d->fu_start = d->len;
    uint8_t *w = reserve(d, 4 + hl + (n - off));
    if (w) {
      put_start_code(w);
      urtp_h26x_write_hdr(desc, w + 4, pl, type);
      memcpy(w + 4 + hl, pl + off, n - off);
      d->len += 4 + hl + (n - off);
    }
    return PKT_OK;
  }

  if (!d->fu_open) {
    /* A fragment of nothing, with no loss to explain it: malformed (the
     * packet counts there, once), and so is the NAL unit it belongs to;
     * its other fragments go quietly. */
    bool bad = d->skip == SKIP_NONE;
    if (bad) {
      mark_damaged(d);
    } else if (d->skip == SKIP_UNCOUNTED || d->skip_type != type) {
      /* the rest of a NAL unit whose start was lost */
      d->stats.dropped_nals++;
      mark_damaged(d);
    }
    d->skip = e ? SKIP_NONE : SKIP_COUNTED;
    d->skip_type = type;
    return bad ? PKT_BAD_QUIET : PKT_SKIPPED;
  }
  if (type != d->fu_type) {
    drop_fu(d);
    return PKT_BAD;
  }
  uint8_t *w = reserve(d, n - off);
  if (w) {
    memcpy(w, pl + off, n - off);
    d->len += n - off;
  }
  if (e) {
    d->fu_open = false;
    nal_done(d, type);
  }
  return PKT_OK;
}

static void h26x_packet(urtp_depay_t *d, const urtp_rtp_pkt_t *p)
{
  const urtp_h26x_desc_t *desc = d->desc;
  const uint8_t *pl = p->payload;
  size_t n = p->payload_len;
  if (n < desc->hdr_len) {
    malformed(d);
    return;
  }
  unsigned type = urtp_h26x_type(desc, pl);
  int r;
  if (type == desc->ap_type) {
    r = aggregation(d, pl, n) ? PKT_OK : PKT_BAD;
  } else if (type == desc->fu_type) {
    r = fragment(d, pl, n);
  } else if (is_nal_type(desc, type)) {
    r = single_nal(d, pl, n) ? PKT_OK : PKT_BAD;
  } else {
    unsupported(d);   /* PACI, reserved and interleaved-mode types */
    return;
  }
  if (r == PKT_BAD)
    malformed(d);
  if (r == PKT_BAD_QUIET)
    d->stats.malformed++;
  if (r == PKT_SKIPPED)
    d->stats.skipped++;
  if (r != PKT_OK)
    return;
  d->stats.packets++;
  d->stats.unsupported_run = 0;
  d->stats.bytes += n;
}

static void opus_packet(urtp_depay_t *d, const urtp_rtp_pkt_t *p, uint64_t seq)
{
  size_t n = p->payload_len;
  if (n == 0) {
    d->stats.malformed++;
    d->discont = true;
    return;
  }
  /* The packet itself is fine: count it, even if its frame cannot be kept. */
  d->stats.packets++;
  d->stats.bytes += n;
  if (n > d->cfg.max_au_size) {
    d->stats.oversize++;
    d->discont = true;
    return;
  }
  uint8_t *b;
  if (d->pool) {
    size_t cap;
    b = pool_take(d->pool, &cap);
    if (cap < n) {
      /* room for the larger frames to come too */
      uint8_t *nb = buf_resize(d, b, n < MIN_HINT ? MIN_HINT : n);
      if (!nb)
        buf_free(d, b);
      b = nb;
    }
  } else {
    b = malloc(n);
  }
  if (!b) {
    d->stats.oversize++;
    d->discont = true;
    return;
  }
  memcpy(b, p->payload, n);
  urtp_au_t au = {
    .data = b,
    .len = n,
    .rtp_ts = p->hdr.ts,
    .first_seq = seq,
    .last_seq = seq,
    .nal_count = 1,
    .flags = URTP_AU_KEYFRAME | (d->discont ? URTP_AU_DISCONT : 0u),
    .ssrc = p->hdr.ssrc,
    .arrival = d->ro.delivered_at,
  };
  keep_ext(&au.ext_profile, &au.ext_len, au.ext, p);
  d->discont = false;
  enqueue(d, &au);
}

/* Whether the packet's first NAL unit may begin an access unit (codec.h):
 * a parameter set, an AUD, or a picture's first slice; an FU only with its
 * start. */
static bool packet_starts_au(const urtp_depay_t *d, const urtp_rtp_pkt_t *p)
{
  const urtp_h26x_desc_t *desc = d->desc;
  const uint8_t *pl = p->payload;
  size_t n = p->payload_len, hl = desc->hdr_len, off = hl, donl = d->cfg.donl ? 2 : 0;
  if (n < hl)
    return false;
  unsigned type = urtp_h26x_type(desc, pl);
  if (type == desc->ap_type) {
    off += donl + 2;
    if (n < off + hl)
      return false;
    type = urtp_h26x_type(desc, pl + off);
    off += hl;
  } else if (type == desc->fu_type) {
    if (n < hl + 1 || !(pl[hl] & 0x80))
      return false;
    type = pl[hl] & desc->fu_type_mask;
    off = hl + 1 + donl;
  } else {
    off += donl;
  }
  return off <= n && urtp_h26x_starts_au(desc, type, pl + off, n - off);
}

/* urtp_reorder's callback: one packet, in order. */
static void on_packet(void *user, const uint8_t *pkt, size_t len, uint64_t seq,
                      uint64_t lost_before)
{
  urtp_depay_t *d = user;
  urtp_rtp_pkt_t parsed;
  const urtp_rtp_pkt_t *p = d->cur_parsed;
  if (pkt != d->cur_raw) {
    /* A stashed copy; it parsed before, so it parses again. */
    if (urtp_rtp_parse(pkt, len, &parsed) != 0)
      return;
    p = &parsed;
  }
  bool gap = lost_before > 0, resync = false;
  if (d->ro.stats.resyncs != d->resyncs_seen) {
    d->resyncs_seen = d->ro.stats.resyncs;
    gap = resync = true;
  }

  if (!d->desc) {
    if (gap)
      d->discont = true;
    opus_packet(d, p, seq);
    return;
  }

  if (gap) {
    lose(d);    /* an AU in progress lost packets (if only its tail) */
    d->discont = true;
  }
  /* A new numbering (sender restart) never continues the old AU, even
   * with an equal timestamp. */
  if (d->in_au && (p->hdr.ts != d->ts || resync))
    finish_au(d, true);
  if (!d->in_au) {
    start_au(d, p->hdr.ts, p->hdr.ssrc, seq);
    /* Fragments without a start are expected only after a loss. */
    d->skip = gap ? SKIP_UNCOUNTED : SKIP_NONE;
    if (d->restarted) {
      /* The first access unit after a restart is whole only if it starts
       * here: the stream may have been joined in the middle of one. */
      d->restarted = false;
      d->skip = SKIP_UNCOUNTED;
      if (!packet_starts_au(d, p))
        mark_damaged(d);
    }
    if (gap) {
      d->discont = true;
      /* Sequence numbers cannot tell a whole lost AU from the lost head of
       * this one, so this AU cannot be trusted to be complete. */
      mark_damaged(d);
    }
  }
  d->last_seq = seq;
  if (p->hdr.has_ext)
    keep_ext(&d->au_ext_profile, &d->au_ext_len, d->au_ext, p);
  h26x_packet(d, p);
  if (p->hdr.marker)
    finish_au(d, false);
}

/* ---- public ---- */

urtp_depay_t *urtp_depay_new(const urtp_depay_config_t *cfg)
{
  if (!cfg || (unsigned)cfg->codec > URTP_CODEC_OPUS || cfg->pt < -1 || cfg->pt > 127 ||
      cfg->ssrc < -1 || cfg->ssrc > (int64_t)UINT32_MAX || cfg->reorder_window > 32768 ||
      (cfg->loss_policy != URTP_LOSS_DROP_AU && cfg->loss_policy != URTP_LOSS_DROP_NAL))
    return NULL;
  urtp_depay_t *d = calloc(1, sizeof(*d));
  if (!d)
    return NULL;
  d->cfg = *cfg;
  if (d->cfg.max_packet == 0)
    d->cfg.max_packet = 1500;
  if (d->cfg.max_au_size == 0)
    d->cfg.max_au_size = URTP_DEPAY_DEFAULT_MAX_AU;
  if (cfg->codec != URTP_CODEC_H265)
    d->cfg.donl = false;
  d->desc = urtp_h26x_desc(cfg->codec);
  if (urtp_reorder_init(&d->ro, d->cfg.reorder_window, d->cfg.max_packet) != 0) {
    free(d);
    return NULL;
  }
  if (cfg->ssrc >= 0) {
    d->ssrc = (uint32_t)cfg->ssrc;
    d->ssrc_locked = true;
  }
  if (cfg->recycle && !(d->pool = pool_new())) {
    urtp_reorder_destroy(&d->ro);
    free(d);
    return NULL;
  }
  d->hint = START_HINT < d->cfg.max_au_size ? START_HINT : d->cfg.max_au_size;
  d->need_key = cfg->wait_for_keyframe && d->desc != NULL;
  return d;
}

void urtp_depay_free(urtp_depay_t *d)
{
  if (!d)
    return;
  while (d->q_len > 0) {
    buf_free(d, d->q[d->q_head].data);
    d->q_head = (d->q_head + 1) % URTP_DEPAY_QUEUE;
    d->q_len--;
  }
  buf_free(d, d->buf);
  if (d->pool)
    pool_close(d->pool);
  urtp_reorder_destroy(&d->ro);
  free(d);
}

void urtp_depay_push(urtp_depay_t *d, const uint8_t *pkt, size_t len)
{
  if (urtp_rtp_parse(pkt, len, &d->cur) != 0) {
    d->stats.malformed++;
    return;
  }
  const urtp_rtp_hdr_t *h = &d->cur.hdr;
  if (d->cfg.pt >= 0 && h->pt != d->cfg.pt) {
    d->stats.foreign++;
    return;
  }
  if (!d->ssrc_locked) {
    d->ssrc = h->ssrc;
    d->ssrc_locked = true;
  } else if (h->ssrc != d->ssrc) {
    d->stats.foreign++;
    return;
  }
  d->cur_raw = pkt;
  d->cur_parsed = &d->cur;
  urtp_reorder_push_at(&d->ro, pkt, len, h->seq, d->now, on_packet, d);
  d->cur_raw = NULL;
  d->stats.seq = d->ro.stats;
}

void urtp_depay_push_parsed(urtp_depay_t *d, const uint8_t *pkt, size_t len,
                            const urtp_rtp_pkt_t *p, uint64_t now)
{
  d->cur_raw = pkt;
  d->cur_parsed = p;
  urtp_reorder_push_at(&d->ro, pkt, len, p->hdr.seq, now, on_packet, d);
  d->cur_raw = NULL;
  d->stats.seq = d->ro.stats;
}

void urtp_depay_restart(urtp_depay_t *d)
{
  urtp_reorder_restart(&d->ro, on_packet, d);
  /* an access unit cut off by the restart is not whole */
  if (d->in_au && d->desc)
    lose(d);
  finish_au(d, true);
  d->resyncs_seen = d->ro.stats.resyncs;
  if (d->cfg.ssrc < 0)
    d->ssrc_locked = false;
  d->discont = true;
  /* whatever FU was open belongs to the old numbering */
  d->fu_open = false;
  d->restarted = d->desc != NULL;
  d->stats.seq = d->ro.stats;
}

bool urtp_depay_pop(urtp_depay_t *d, urtp_au_t *au)
{
  if (d->q_len == 0)
    return false;
  *au = d->q[d->q_head];
  d->q_head = (d->q_head + 1) % URTP_DEPAY_QUEUE;
  d->q_len--;
  d->stats.aus++;
  d->stats.nals += au->nal_count;
  return true;
}

void urtp_depay_push_at(urtp_depay_t *d, const uint8_t *pkt, size_t len, uint64_t now)
{
  d->now = now;
  urtp_depay_push(d, pkt, len);
}

void urtp_depay_expire(urtp_depay_t *d, uint64_t now, uint64_t max_wait)
{
  urtp_reorder_expire(&d->ro, now, max_wait, on_packet, d);
  d->stats.seq = d->ro.stats;
}

uint64_t urtp_depay_deadline(const urtp_depay_t *d, uint64_t max_wait)
{
  return urtp_reorder_deadline(&d->ro, max_wait);
}

void urtp_depay_flush(urtp_depay_t *d, bool end_au)
{
  urtp_reorder_flush(&d->ro, on_packet, d);
  if (end_au)
    finish_au(d, true);
  d->stats.seq = d->ro.stats;
}

size_t urtp_depay_pending(const urtp_depay_t *d)
{
  return urtp_reorder_pending(&d->ro);
}

size_t urtp_depay_queued(const urtp_depay_t *d)
{
  return d->q_len;
}

const urtp_depay_stats_t *urtp_depay_stats(const urtp_depay_t *d)
{
  return &d->stats;
}
