/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_zrtp.c - libFuzzer target for the ZRTP state machine and parser.
 *
 * A random ZRTP packet almost never gets past the CRC, and one that does
 * almost never gets past the hash chain, so feeding raw bytes alone would
 * only ever test the first checks. Instead every input runs a real exchange
 * between two sessions A and B (EC25, a fixed random generator, a virtual
 * clock) and the input says how to damage it:
 *
 *   byte 0      bit 0     B is a pure responder (else both "auto", so the
 *                         RFC's commit contention is exercised)
 *               bit 1     prefer DH3k (slow: only if bit 2 is also clear)
 *               bit 2     force EC25 even if bit 1 is set
 *               bits 3-4  SAS B32 / B256, cipher AES1 / AES3
 *               bit 5     B: auth tag HS32 first
 *   then records of 5 bytes, each applied to the n-th packet either side
 *   sends (n counts from 0 over both directions):
 *     u8  n
 *     u8  op      0 flip a byte, 1 truncate, 2 drop, 3 duplicate,
 *                 4 replace by the record's trailing bytes (the rest of the
 *                   input; ends the record list), 5 deliver it to the
 *                   sender itself (a reflection), 6 delay past the next one,
 *                 bit 7: leave the CRC wrong (else it is recomputed so the
 *                        damage reaches the message parser)
 *     u16 offset (big-endian, modulo the packet length)
 *     u8  value   xor mask for op 0 (0 means 0xff)
 *
 * Checked after every input: neither side crashes; if both are SECURE their
 * keys are crosswise equal and the SAS agrees (a damaged exchange may fail,
 * never end secure under different keys); the statistics add up.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urtp/zrtp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(c)   \
  do {              \
    if (!(c))       \
      abort();      \
  } while (0)

#define MAX_QUEUE 64
#define MAX_REC 64
#define MAX_STEPS 400
#define TIME_LIMIT_MS 120000

typedef struct rec {
  uint8_t n, op;
  uint16_t off;
  uint8_t val;
} rec_t;

typedef struct qpkt {
  uint8_t to;  /* 0: A, 1: B */
  uint16_t len;
  uint8_t buf[URTP_ZRTP_MAX_PACKET];
} qpkt_t;

typedef struct world {
  urtp_zrtp_t *z[2];
  qpkt_t q[MAX_QUEUE];
  size_t nq;
  unsigned sent;  /* packets sent by either side */
  rec_t rec[MAX_REC];
  size_t nrec;
  const uint8_t *repl;  /* op 4's bytes */
  size_t repl_len;
  uint64_t rng[2];
} world_t;

static world_t *g_w;

static int rng_fill(void *user, uint8_t *buf, size_t len)
{
  uint64_t *s = user;
  for (size_t i = 0; i < len; i++) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    buf[i] = (uint8_t)(*s >> 24);
  }
  return 0;
}

/* The CRC is the last 4 bytes, least significant byte first. */
static void fix_crc(uint8_t *p, size_t len)
{
  if (len < 4)
    return;
  uint32_t c = urtp_zrtp_crc32c(p, len - 4);
  for (int i = 0; i < 4; i++)
    p[len - 4 + (size_t)i] = (uint8_t)(c >> (8 * i));
}

static void enqueue(world_t *w, int to, const uint8_t *p, size_t len)
{
  if (w->nq == MAX_QUEUE || len > URTP_ZRTP_MAX_PACKET)
    return; /* a full wire drops */
  qpkt_t *q = &w->q[w->nq++];
  q->to = (uint8_t)to;
  q->len = (uint16_t)len;
  memcpy(q->buf, p, len);
}

static void send_from(world_t *w, int from, const uint8_t *pkt, size_t len)
{
  unsigned n = w->sent++;
  uint8_t buf[URTP_ZRTP_MAX_PACKET];
  ASSERT(len <= sizeof(buf));
  memcpy(buf, pkt, len);
  int to = !from;
  bool dup = false, delay = false;
  for (size_t i = 0; i < w->nrec; i++) {
    const rec_t *r = &w->rec[i];
    if (r->n != (n & 0xff))
      continue;
    switch (r->op & 0x7f) {
    case 0:
      if (len)
        buf[r->off % len] ^= r->val ? r->val : 0xff;
      break;
    case 1:
      len = len ? r->off % len : 0;
      break;
    case 2:
      return;
    case 3:
      dup = true;
      break;
    case 4:
      len = w->repl_len < sizeof(buf) ? w->repl_len : sizeof(buf);
      memcpy(buf, w->repl, len);
      break;
    case 5:
      to = from;
      break;
    default:
      delay = true;
      break;
    }
    if (!(r->op & 0x80))
      fix_crc(buf, len);
  }
  enqueue(w, to, buf, len);
  if (dup)
    enqueue(w, to, buf, len);
  if (delay && w->nq >= 2) {
    /* swap with the packet before it: reordering on the wire */
    qpkt_t t = w->q[w->nq - 1];
    w->q[w->nq - 1] = w->q[w->nq - 2];
    w->q[w->nq - 2] = t;
  }
}

static void send_a(void *user, const uint8_t *pkt, size_t len)
{
  (void)user;
  send_from(g_w, 0, pkt, len);
}

static void send_b(void *user, const uint8_t *pkt, size_t len)
{
  (void)user;
  send_from(g_w, 1, pkt, len);
}

static bool settled(const world_t *w)
{
  urtp_zrtp_state_t a = urtp_zrtp_state(w->z[0]), b = urtp_zrtp_state(w->z[1]);
  return (a == URTP_ZRTP_SECURE || a == URTP_ZRTP_FAILED) &&
         (b == URTP_ZRTP_SECURE || b == URTP_ZRTP_FAILED) && w->nq == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  world_t *w = calloc(1, sizeof(*w));
  ASSERT(w);
  g_w = w;
  const uint8_t flags = data[0];
  size_t pos = 1;
  while (pos + 5 <= size && w->nrec < MAX_REC) {
    rec_t *r = &w->rec[w->nrec++];
    r->n = data[pos];
    r->op = data[pos + 1];
    r->off = (uint16_t)(data[pos + 2] << 8 | data[pos + 3]);
    r->val = data[pos + 4];
    pos += 5;
    if ((r->op & 0x7f) == 4) {
      w->repl = data + pos;
      w->repl_len = size - pos;
      break;
    }
  }

  static const uint8_t zid[2][URTP_ZRTP_ZID_LEN] = {
    { 'f', 'u', 'z', 'z', '-', 'a', 0, 1, 2, 3, 4, 5 },
    { 'f', 'u', 'z', 'z', '-', 'b', 6, 7, 8, 9, 10, 11 },
  };
  const bool dh3k = (flags & 2) && !(flags & 4);
  for (int i = 0; i < 2; i++) {
    w->rng[i] = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
    urtp_zrtp_config_t c = {
      .role = (i == 1 && (flags & 1)) ? URTP_ZRTP_ROLE_RESPONDER : URTP_ZRTP_ROLE_AUTO,
      .ssrc = 0x1000u + (uint32_t)i,
      .zid = zid[i],
      .send = i ? send_b : send_a,
      .rng = rng_fill,
      .rng_user = &w->rng[i],
    };
    c.key_agreements[0] = dh3k ? URTP_ZRTP_KA_DH3K : URTP_ZRTP_KA_EC25;
    c.sas_types[0] = (flags & 8) ? URTP_ZRTP_SAS_B256 : URTP_ZRTP_SAS_B32;
    c.ciphers[0] = (flags & 16) ? URTP_ZRTP_CIPHER_AES3 : URTP_ZRTP_CIPHER_AES1;
    if (i == 1 && (flags & 32))
      c.auth_tags[0] = URTP_ZRTP_AUTH_HS32;
    ASSERT(urtp_zrtp_new(&c, &w->z[i]) == 0);
  }

  uint64_t now = 1000;
  ASSERT(urtp_zrtp_start(w->z[0], now) == 0);
  ASSERT(urtp_zrtp_start(w->z[1], now) == 0);
  uint64_t delivered[2] = { 0, 0 };
  for (int step = 0; step < MAX_STEPS && !settled(w) && now < 1000 + TIME_LIMIT_MS; step++) {
    if (w->nq) {
      /* Deliver the oldest packet; the receiver may queue answers. */
      qpkt_t p = w->q[0];
      memmove(&w->q[0], &w->q[1], (w->nq - 1) * sizeof(qpkt_t));
      w->nq--;
      urtp_zrtp_recv(w->z[p.to], p.buf, p.len, now);
      delivered[p.to]++;
      now += 1;
      continue;
    }
    uint64_t ta = urtp_zrtp_next_timeout(w->z[0]), tb = urtp_zrtp_next_timeout(w->z[1]);
    uint64_t t = ta < tb ? ta : tb;
    if (t == UINT64_MAX)
      break;
    if (t > now)
      now = t;
    urtp_zrtp_tick(w->z[0], now);
    urtp_zrtp_tick(w->z[1], now);
  }

  urtp_zrtp_info_t info[2];
  for (int i = 0; i < 2; i++) {
    urtp_zrtp_get_info(w->z[i], &info[i]);
    /* Every delivered packet was counted as received and sorted into
     * exactly one bucket (or answered). */
    const urtp_zrtp_stats_t *s = &info[i].stats;
    ASSERT(s->received == delivered[i]);
    ASSERT(s->accepted + s->bad_packet + s->unexpected + s->auth_fail == s->received);
    ASSERT(s->retransmits <= s->sent);
  }
  /* Undamaged, the exchange must succeed: the target tests something. */
  if (w->nrec == 0)
    ASSERT(info[0].state == URTP_ZRTP_SECURE && info[1].state == URTP_ZRTP_SECURE);
  if (info[0].state == URTP_ZRTP_SECURE && info[1].state == URTP_ZRTP_SECURE) {
    urtp_zrtp_keys_t ka, kb;
    ASSERT(urtp_zrtp_get_keys(w->z[0], &ka) == 0);
    ASSERT(urtp_zrtp_get_keys(w->z[1], &kb) == 0);
    ASSERT(ka.key_len == kb.key_len && ka.profile == kb.profile);
    ASSERT(memcmp(ka.local, kb.remote, ka.key_len) == 0);
    ASSERT(memcmp(ka.remote, kb.local, ka.key_len) == 0);
    ASSERT(memcmp(ka.local, ka.remote, ka.key_len) != 0);
    ASSERT(strcmp(info[0].sas, info[1].sas) == 0 && info[0].sas[0]);
    ASSERT(info[0].initiator != info[1].initiator);
  }
  for (int i = 0; i < 2; i++) {
    urtp_zrtp_keys_t k;
    if (info[i].state == URTP_ZRTP_FAILED)
      ASSERT(urtp_zrtp_get_keys(w->z[i], &k) == -EAGAIN && info[i].error != 0);
  }
  urtp_zrtp_free(w->z[0]);
  urtp_zrtp_free(w->z[1]);
  free(w);
  return 0;
}
