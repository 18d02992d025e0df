/* SPDX-License-Identifier: BSD-2-Clause */
#include "zrtp_priv.h"
#include "zrtp_cache.h"
#include "urtp/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

/*
 * DH mode (section 4):            Multistream mode (4.4.3):
 *   Hello / HelloACK both ways      Hello / HelloACK both ways
 *   I: Commit (hvi)                 I: Commit (nonce)
 *   R: DHPart1 (pvr)                R: Confirm1
 *   I: DHPart2 (pvi)                I: Confirm2
 *   R: Confirm1                     R: Conf2ACK
 *   I: Confirm2
 *   R: Conf2ACK
 * The initiator retransmits Commit, DHPart2 and Confirm2; the responder only
 * answers a repeated message with its stored answer.
 */

enum st {
  ST_IDLE,
  ST_DISCOVERY,
  ST_COMMIT_SENT,    /* initiator, until DHPart1 (or Confirm1 in Mult) */
  ST_DHPART1_SENT,   /* responder */
  ST_DHPART2_SENT,   /* initiator */
  ST_CONFIRM1_SENT,  /* responder */
  ST_CONFIRM2_SENT,  /* initiator */
  ST_SECURE,
  ST_FAILED,
};

/* Section 6 timers. */
#define T1_BASE 50
#define T1_CAP 200
#define T1_MAX 20
#define T2_BASE 150
#define T2_CAP 1200
#define T2_MAX 10

#define CACHE_NEVER_EXPIRES 0xFFFFFFFFu

typedef struct zrtp_timer {
  bool on;
  bool resend;             /* false: a give-up deadline only */
  uint64_t due;
  unsigned interval, cap, left;
  const uint8_t *msg;
  size_t len;
} zrtp_timer_t;

struct urtp_zrtp {
  /* configuration */
  void (*send)(void *user, const uint8_t *pkt, size_t len);
  void (*on_event)(void *user, urtp_zrtp_event_t ev);
  void *user;
  zrtp_rng_fn rng;
  void *rng_user;
  urtp_zrtp_role_t role;
  uint32_t ssrc;
  char client_id[16];
  char *cache_path;
  uint8_t pref[ZA_NCLASS][ZRTP_MAX_ALGS + 2];  /* ours, mandatory appended */
  uint8_t npref[ZA_NCLASS];

  /* Multistream parent, copied */
  bool mult;                 /* we may do Multistream with this peer */
  uint8_t parent_sess[ZRTP_HASH_LEN];
  uint8_t parent_peer_zid[URTP_ZRTP_ZID_LEN];
  char parent_sas[40];
  uint32_t parent_sas_value;
  unsigned parent_sas_type;
  bool parent_verified, parent_peer_verified;

  uint8_t zid[URTP_ZRTP_ZID_LEN];
  uint8_t h[4][ZRTP_HASH_LEN];  /* H0 .. H3 */
  uint16_t seq;
  enum st st;
  bool hello_acked, have_peer_hello, initiator, keys_ready;
  uint64_t now;

  /* our messages (message bytes, no packet header) */
  uint8_t hello[ZRTP_MAX_MSG];
  size_t hello_len;
  uint8_t commit[ZRTP_COMMIT_DH_LEN];
  size_t commit_len;
  uint8_t dhpart[ZRTP_MAX_MSG];     /* DHPart2 (initiator) or DHPart1 */
  size_t dhpart_len;
  uint8_t confirm[ZRTP_MAX_MSG];
  size_t confirm_len;
  uint8_t errmsg[ZRTP_ERROR_LEN];

  /* the peer's */
  uint8_t peer_hello[ZRTP_MAX_MSG];
  size_t peer_hello_len;
  zrtp_hello_t ph;
  uint8_t peer_commit[ZRTP_COMMIT_DH_LEN];
  size_t peer_commit_len;
  zrtp_commit_t pc;
  uint8_t peer_dhpart[ZRTP_MAX_MSG];
  size_t peer_dhpart_len;
  zrtp_dhpart_t pd;
  uint8_t peer_confirm[ZRTP_MAX_MSG];
  size_t peer_confirm_len;
  uint32_t peer_ssrc;

  /* negotiated */
  unsigned alg[ZA_NCLASS];
  uint8_t nonce[16];
  zrtp_kp_t kp;
  uint8_t ids[4][8];         /* rs1ID, rs2ID, auxsecretID, pbxsecretID we send */

  /* derived (section 4.5) */
  uint8_t s0[ZRTP_HASH_LEN];
  uint8_t kdf_ctx[2 * URTP_ZRTP_ZID_LEN + ZRTP_HASH_LEN];
  uint8_t mackeyi[32], mackeyr[32], zrtpkeyi[32], zrtpkeyr[32];
  uint8_t srtpkeyi[32], srtpkeyr[32], srtpsalti[ZRTP_SALT_LEN], srtpsaltr[ZRTP_SALT_LEN];
  uint8_t sess[ZRTP_HASH_LEN];
  uint32_t sas_value;
  char sas[40];

  /* retained secrets (section 4.3) */
  bool have_rs1, have_rs2, cached_v;
  uint8_t rs1[32], rs2[32], new_rs1[32];
  bool rs_matched, cache_mismatch, cache_pending, peer_v, sas_verified;
  uint32_t peer_cache_expiry;
  uint8_t bad_confirm[32];   /* hash of the last Confirm whose MAC failed */
  bool have_bad_confirm;

  zrtp_timer_t t;
  uint16_t error;
  bool error_from_peer;
  urtp_zrtp_stats_t stats;
};

/* The cache file of retained secrets: zrtp_cache.h. */

static void emit(urtp_zrtp_t *z, urtp_zrtp_event_t ev)
{
  if (z->on_event)
    z->on_event(z->user, ev);
}

static void send_msg(urtp_zrtp_t *z, const uint8_t *msg, size_t len)
{
  uint8_t pkt[ZRTP_PKT_HDR + ZRTP_MAX_MSG + ZRTP_CRC_LEN];
  size_t n = zrtp_packet_build(pkt, z->seq, z->ssrc, msg, len);
  /* strictly increasing: some stacks drop a sequence number they have seen */
  z->seq++;
  z->stats.sent++;
  z->send(z->user, pkt, n);
}

static void send_simple(urtp_zrtp_t *z, zrtp_type_t type)
{
  uint8_t m[ZRTP_ACK_LEN];
  zrtp_build_simple(m, type);
  send_msg(z, m, sizeof m);
}

static void timer_resend(urtp_zrtp_t *z, const uint8_t *msg, size_t len, unsigned base,
                         unsigned cap, unsigned max)
{
  z->t = (zrtp_timer_t){.on = true, .resend = true, .due = z->now + base, .interval = base,
                        .cap = cap, .left = max, .msg = msg, .len = len};
}

static void timer_deadline(urtp_zrtp_t *z, unsigned ms)
{
  z->t = (zrtp_timer_t){.on = true, .resend = false, .due = z->now + ms};
}

static void timer_stop(urtp_zrtp_t *z)
{
  z->t.on = false;
}

static void wipe_keys(urtp_zrtp_t *z)
{
  zrtp_kp_clear(&z->kp);
  zrtp_wipe(z->s0, sizeof z->s0);
  zrtp_wipe(z->mackeyi, sizeof z->mackeyi);
  zrtp_wipe(z->mackeyr, sizeof z->mackeyr);
  zrtp_wipe(z->zrtpkeyi, sizeof z->zrtpkeyi);
  zrtp_wipe(z->zrtpkeyr, sizeof z->zrtpkeyr);
  zrtp_wipe(z->srtpkeyi, sizeof z->srtpkeyi);
  zrtp_wipe(z->srtpkeyr, sizeof z->srtpkeyr);
  zrtp_wipe(z->srtpsalti, sizeof z->srtpsalti);
  zrtp_wipe(z->srtpsaltr, sizeof z->srtpsaltr);
  zrtp_wipe(z->new_rs1, sizeof z->new_rs1);
  z->keys_ready = false;
}

/* Ends the exchange; with send_error, tells the peer with an Error message
 * retransmitted until ErrorACK (section 5.9). */
static void fail_with(urtp_zrtp_t *z, unsigned code, bool send_error, bool from_peer)
{
  if (z->st == ST_FAILED)
    return;
  z->st = ST_FAILED;
  z->error = (uint16_t)code;
  /* set before the FAILED event fires, so its handler reads it right */
  z->error_from_peer = from_peer;
  wipe_keys(z);
  zrtp_wipe(z->sess, sizeof z->sess);
  if (send_error) {
    zrtp_build_error(z->errmsg, code);
    send_msg(z, z->errmsg, ZRTP_ERROR_LEN);
    timer_resend(z, z->errmsg, ZRTP_ERROR_LEN, T2_BASE, T2_CAP, T2_MAX);
  } else {
    timer_stop(z);
  }
  emit(z, URTP_ZRTP_EV_FAILED);
}

static void fail(urtp_zrtp_t *z, unsigned code, bool send_error)
{
  fail_with(z, code, send_error, false);
}

static bool in_list(const uint8_t *l, unsigned n, unsigned id)
{
  for (unsigned i = 0; i < n; i++)
    if (l[i] == id)
      return true;
  return false;
}

static bool we_support(const urtp_zrtp_t *z, zrtp_alg_class_t c, unsigned id)
{
  return id != 0 && in_list(z->pref[c], z->npref[c], id);
}

static size_t cipher_key_len(const urtp_zrtp_t *z)
{
  return z->alg[ZA_CIPHER] == URTP_ZRTP_CIPHER_AES3 ? 32 : 16;
}

static bool mac_ok(const uint8_t *msg, size_t len, const uint8_t key[32])
{
  uint8_t mac[32];
  zrtp_hmac(key, 32, msg, len - ZRTP_MAC_LEN, mac);
  return zrtp_equal(mac, msg + len - ZRTP_MAC_LEN, ZRTP_MAC_LEN);
}

static bool same_msg(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
  return alen == blen && memcmp(a, b, alen) == 0;
}

/* rsNID = MAC(rsN, "Initiator" / "Responder"), 64 bits (section 4.3.1); a
 * random value stands in for a secret we do not have. We keep no auxsecret
 * and no pbxsecret, so their IDs are random too. */
static void secret_id(const uint8_t secret[32], const char *who, uint8_t out[8])
{
  uint8_t mac[32];
  zrtp_hmac(secret, 32, (const uint8_t *)who, strlen(who), mac);
  memcpy(out, mac, 8);
}

static int make_ids(urtp_zrtp_t *z, const char *who)
{
  if (zrtp_rand(z->rng, z->rng_user, z->ids[0], sizeof z->ids))
    return -EIO;
  if (z->have_rs1)
    secret_id(z->rs1, who, z->ids[0]);
  if (z->have_rs2)
    secret_id(z->rs2, who, z->ids[1]);
  return 0;
}

/* Section 4.3.1: find s1 from the peer's rs1ID/rs2ID. Both sides try the
 * pairs (initiator's secret, responder's secret) in the same order:
 * (rs1, rs1), (rs1, rs2), (rs2, rs1), (rs2, rs2). */
static const uint8_t *match_secrets(urtp_zrtp_t *z, const uint8_t peer1[8], const uint8_t peer2[8])
{
  const char *who = z->initiator ? "Responder" : "Initiator";
  uint8_t id1[8] = {0}, id2[8] = {0};
  if (z->have_rs1)
    secret_id(z->rs1, who, id1);
  if (z->have_rs2)
    secret_id(z->rs2, who, id2);
  bool a1 = z->have_rs1, a2 = z->have_rs2;
  const uint8_t *s1 = NULL;
  if (z->initiator) {
    if (a1 && zrtp_equal(id1, peer1, 8))
      s1 = z->rs1;
    else if (a1 && zrtp_equal(id1, peer2, 8))
      s1 = z->rs1;
    else if (a2 && zrtp_equal(id2, peer1, 8))
      s1 = z->rs2;
    else if (a2 && zrtp_equal(id2, peer2, 8))
      s1 = z->rs2;
  } else {
    if (a1 && zrtp_equal(id1, peer1, 8))
      s1 = z->rs1;
    else if (a2 && zrtp_equal(id2, peer1, 8))
      s1 = z->rs2;
    else if (a1 && zrtp_equal(id1, peer2, 8))
      s1 = z->rs1;
    else if (a2 && zrtp_equal(id2, peer2, 8))
      s1 = z->rs2;
  }
  z->rs_matched = s1 != NULL;
  /* 4.3.2: we had a secret for this peer and it shares none */
  z->cache_mismatch = z->have_rs1 && !s1;
  return s1;
}

static int kdf(urtp_zrtp_t *z, const uint8_t *ki, const char *label, uint8_t *out, size_t n)
{
  return urtp_zrtp_kdf(ki, ZRTP_HASH_LEN, label, z->kdf_ctx, sizeof z->kdf_ctx, out, n);
}

/* KDF_Context = ZIDi || ZIDr || total_hash */
static void set_kdf_ctx(urtp_zrtp_t *z, const uint8_t total_hash[32])
{
  const uint8_t *zi = z->initiator ? z->zid : z->ph.zid;
  const uint8_t *zr = z->initiator ? z->ph.zid : z->zid;
  memcpy(z->kdf_ctx, zi, 12);
  memcpy(z->kdf_ctx + 12, zr, 12);
  memcpy(z->kdf_ctx + 24, total_hash, 32);
}

/* Section 4.5.3 and, after a DH exchange, 4.5.2 (ZRTPSess, SAS) and 4.6.1
 * (the next rs1). */
static int derive_rest(urtp_zrtp_t *z, bool dh)
{
  size_t kl = cipher_key_len(z);
  int rc = kdf(z, z->s0, "Initiator HMAC key", z->mackeyi, 32) |
           kdf(z, z->s0, "Responder HMAC key", z->mackeyr, 32) |
           kdf(z, z->s0, "Initiator ZRTP key", z->zrtpkeyi, kl) |
           kdf(z, z->s0, "Responder ZRTP key", z->zrtpkeyr, kl) |
           kdf(z, z->s0, "Initiator SRTP master key", z->srtpkeyi, kl) |
           kdf(z, z->s0, "Initiator SRTP master salt", z->srtpsalti, ZRTP_SALT_LEN) |
           kdf(z, z->s0, "Responder SRTP master key", z->srtpkeyr, kl) |
           kdf(z, z->s0, "Responder SRTP master salt", z->srtpsaltr, ZRTP_SALT_LEN);
  if (dh) {
    uint8_t sashash[32];
    rc |= kdf(z, z->s0, "ZRTP Session Key", z->sess, 32) | kdf(z, z->s0, "SAS", sashash, 32) |
          kdf(z, z->s0, "retained secret", z->new_rs1, 32);
    z->sas_value = urtp_rd32(sashash);
    if (urtp_zrtp_sas_render((urtp_zrtp_sas_t)z->alg[ZA_SAS], z->sas_value, z->sas,
                             sizeof z->sas) < 0)
      rc = -EIO;
  } else {
    /* Multistream shares the first stream's ZRTPSess and SAS (4.4.3) */
    memcpy(z->sess, z->parent_sess, 32);
    z->sas_value = z->parent_sas_value;
    memcpy(z->sas, z->parent_sas, sizeof z->sas);
  }
  return rc ? -EIO : 0;
}

/* s0 in DH mode (section 4.4.1.4). */
static int derive_dh(urtp_zrtp_t *z, const uint8_t *dhres, size_t dhlen, const uint8_t *s1)
{
  const uint8_t *hello_r = z->initiator ? z->peer_hello : z->hello;
  size_t hello_r_len = z->initiator ? z->peer_hello_len : z->hello_len;
  const uint8_t *commit = z->initiator ? z->commit : z->peer_commit;
  size_t commit_len = z->initiator ? z->commit_len : z->peer_commit_len;
  const uint8_t *dh1 = z->initiator ? z->peer_dhpart : z->dhpart;
  size_t dh1_len = z->initiator ? z->peer_dhpart_len : z->dhpart_len;
  const uint8_t *dh2 = z->initiator ? z->dhpart : z->peer_dhpart;
  size_t dh2_len = z->initiator ? z->dhpart_len : z->peer_dhpart_len;
  uint8_t total[32];
  if (zrtp_sha256_cat(total, hello_r, hello_r_len, commit, commit_len, dh1, dh1_len, dh2,
                      dh2_len))
    return -EIO;
  set_kdf_ctx(z, total);

  /* s0 = hash(counter || DHResult || "ZRTP-HMAC-KDF" || ZIDi || ZIDr ||
   *           total_hash || len(s1) || s1 || len(s2) || s2 || len(s3) || s3)
   * with s2 (auxsecret) and s3 (pbxsecret) null. */
  uint8_t buf[4 + ZRTP_MAX_PV + 13 + sizeof z->kdf_ctx + 4 + 32 + 4 + 4];
  size_t o = 0;
  buf[o++] = 0, buf[o++] = 0, buf[o++] = 0, buf[o++] = 1;
  memcpy(buf + o, dhres, dhlen);
  o += dhlen;
  memcpy(buf + o, "ZRTP-HMAC-KDF", 13);
  o += 13;
  memcpy(buf + o, z->kdf_ctx, sizeof z->kdf_ctx);
  o += sizeof z->kdf_ctx;
  buf[o++] = 0, buf[o++] = 0, buf[o++] = 0, buf[o++] = s1 ? 32 : 0;
  if (s1) {
    memcpy(buf + o, s1, 32);
    o += 32;
  }
  memset(buf + o, 0, 8);
  o += 8;
  zrtp_sha256(buf, o, z->s0);
  zrtp_wipe(buf, sizeof buf);
  return derive_rest(z, true);
}

/* s0 in Multistream mode (section 4.4.3.2). */
static int derive_mult(urtp_zrtp_t *z)
{
  const uint8_t *hello_r = z->initiator ? z->peer_hello : z->hello;
  size_t hello_r_len = z->initiator ? z->peer_hello_len : z->hello_len;
  const uint8_t *commit = z->initiator ? z->commit : z->peer_commit;
  size_t commit_len = z->initiator ? z->commit_len : z->peer_commit_len;
  uint8_t total[32];
  if (zrtp_sha256_cat(total, hello_r, hello_r_len, commit, commit_len, NULL, 0, NULL, 0))
    return -EIO;
  set_kdf_ctx(z, total);
  if (kdf(z, z->parent_sess, "ZRTP MSK", z->s0, 32))
    return -EIO;
  return derive_rest(z, false);
}

/* Section 4.6.1: after a confirmed DH exchange, rs2 = rs1, rs1 = new. After
 * a cache mismatch only the verified flag is cleared; the secrets wait for
 * the user's SAS verification. */
static void update_cache(urtp_zrtp_t *z)
{
  z->sas_verified = z->cached_v && z->rs_matched;
  if (z->alg[ZA_KA] == URTP_ZRTP_KA_MULT || !z->cache_path)
    return;
  zrtp_cache_entry_t e = {0};
  memcpy(e.zid, z->ph.zid, URTP_ZRTP_ZID_LEN);
  if (z->cache_mismatch) {
    z->cache_pending = z->peer_cache_expiry != 0;
    e.v = false;
    (void)zrtp_cache_store(z->cache_path, &e, true);
    return;
  }
  if (z->peer_cache_expiry == 0)  /* the peer keeps nothing: neither do we */
    return;
  e.has_rs1 = true;
  memcpy(e.rs1, z->new_rs1, 32);
  e.has_rs2 = z->have_rs1;
  memcpy(e.rs2, z->rs1, 32);
  e.v = z->cached_v;
  (void)zrtp_cache_store(z->cache_path, &e, false);
  zrtp_wipe(&e, sizeof e);
}

static void load_peer_cache(urtp_zrtp_t *z)
{
  z->have_rs1 = z->have_rs2 = z->cached_v = false;
  if (!z->cache_path)
    return;
  zrtp_cache_entry_t e;
  if (zrtp_cache_load(z->cache_path, z->ph.zid, &e) > 0) {
    z->have_rs1 = e.has_rs1;
    z->have_rs2 = e.has_rs2 && e.has_rs1;
    memcpy(z->rs1, e.rs1, 32);
    memcpy(z->rs2, e.rs2, 32);
    z->cached_v = e.v && e.has_rs1;
  }
  zrtp_wipe(&e, sizeof e);
}

/* ------------------------------------------------------------------ */
/* the exchange                                                        */
/* ------------------------------------------------------------------ */

/* Algorithms the initiator puts in its Commit (section 4.1.2): for the key
 * agreement each side's first common choice, the faster of the two; for the
 * rest our first choice the peer also offers. */
static int choose_algorithms(urtp_zrtp_t *z)
{
  static const zrtp_alg_class_t cls[] = {ZA_HASH, ZA_CIPHER, ZA_AUTH, ZA_SAS};
  static const unsigned err[ZA_NCLASS] = {URTP_ZRTP_ERR_HASH, URTP_ZRTP_ERR_CIPHER,
                                          URTP_ZRTP_ERR_AUTH_TAG, URTP_ZRTP_ERR_KEY_AGREEMENT,
                                          URTP_ZRTP_ERR_SAS};
  for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
    zrtp_alg_class_t c = cls[i];
    z->alg[c] = 0;
    for (unsigned k = 0; k < z->npref[c] && !z->alg[c]; k++)
      if (in_list(z->ph.alg[c], z->ph.n[c], z->pref[c][k]))
        z->alg[c] = z->pref[c][k];
    if (!z->alg[c])
      return (int)err[c];
  }
  if (z->mult && in_list(z->ph.alg[ZA_KA], z->ph.n[ZA_KA], URTP_ZRTP_KA_MULT)) {
    z->alg[ZA_KA] = URTP_ZRTP_KA_MULT;
    return 0;
  }
  unsigned mine = 0, theirs = 0;
  for (unsigned k = 0; k < z->npref[ZA_KA] && !mine; k++) {
    unsigned a = z->pref[ZA_KA][k];
    if (a != URTP_ZRTP_KA_MULT && in_list(z->ph.alg[ZA_KA], z->ph.n[ZA_KA], a))
      mine = a;
  }
  for (unsigned k = 0; k < z->ph.n[ZA_KA] && !theirs; k++) {
    unsigned a = z->ph.alg[ZA_KA][k];
    if (a != URTP_ZRTP_KA_MULT && we_support(z, ZA_KA, a))
      theirs = a;
  }
  if (!mine || !theirs)
    return URTP_ZRTP_ERR_KEY_AGREEMENT;
  /* ranking, fastest first: DH2k, EC25, DH3k, EC38, EC52 */
  z->alg[ZA_KA] = (mine == URTP_ZRTP_KA_EC25 || theirs == URTP_ZRTP_KA_EC25) ? URTP_ZRTP_KA_EC25
                                                                             : URTP_ZRTP_KA_DH3K;
  return 0;
}

static void maybe_commit(urtp_zrtp_t *z)
{
  if (z->st != ST_DISCOVERY || !z->hello_acked || !z->have_peer_hello)
    return;
  if (z->role == URTP_ZRTP_ROLE_RESPONDER) {
    timer_deadline(z, URTP_ZRTP_IDLE_TIMEOUT_MS);
    return;
  }
  int err = choose_algorithms(z);
  if (err) {
    fail(z, (unsigned)err, true);
    return;
  }
  z->initiator = true;
  if (z->alg[ZA_KA] == URTP_ZRTP_KA_MULT) {
    if (zrtp_rand(z->rng, z->rng_user, z->nonce, sizeof z->nonce)) {
      fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
      return;
    }
    z->commit_len = zrtp_build_commit(z->commit, z->h[2], z->h[1], z->zid, z->alg, z->nonce);
  } else {
    /* hvi = hash(initiator's DHPart2 || responder's Hello): DHPart2 is
     * built now, sent after DHPart1 */
    uint8_t hvi[32];
    if ((z->kp.ka != z->alg[ZA_KA] && zrtp_kp_generate(&z->kp, z->alg[ZA_KA], z->rng, z->rng_user)) ||
        make_ids(z, "Initiator")) {
      fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
      return;
    }
    z->dhpart_len = zrtp_build_dhpart(z->dhpart, ZT_DHPART2, z->h[1], z->h[0],
                                      (const uint8_t(*)[8])z->ids, z->kp.pv, z->kp.pv_len);
    zrtp_sha256_cat(hvi, z->dhpart, z->dhpart_len, z->peer_hello, z->peer_hello_len, NULL, 0,
                    NULL, 0);
    z->commit_len = zrtp_build_commit(z->commit, z->h[2], z->h[1], z->zid, z->alg, hvi);
  }
  z->st = ST_COMMIT_SENT;
  send_msg(z, z->commit, z->commit_len);
  timer_resend(z, z->commit, z->commit_len, T2_BASE, T2_CAP, T2_MAX);
}

static int on_hello(urtp_zrtp_t *z, const uint8_t *m, size_t len, uint32_t ssrc)
{
  if (z->have_peer_hello) {
    /* a repetition: our HelloACK was lost */
    if (!same_msg(m, len, z->peer_hello, z->peer_hello_len))
      return -EPROTO;
    if (z->st != ST_FAILED)
      send_simple(z, ZT_HELLOACK);
    return 0;
  }
  if (z->st != ST_DISCOVERY)
    return -EPROTO;
  zrtp_hello_t h;
  if (zrtp_parse_hello(m, len, &h))
    return -EBADMSG;
  if (memcmp(h.version, "1.1", 3) != 0) {
    /* a newer peer falls back to our version; an older one we cannot serve */
    if (memcmp(h.version, "1.1", 3) < 0)
      fail(z, URTP_ZRTP_ERR_VERSION, true);
    return memcmp(h.version, "1.1", 3) < 0 ? 0 : -EPROTO;
  }
  if (memcmp(h.zid, z->zid, URTP_ZRTP_ZID_LEN) == 0) {
    fail(z, URTP_ZRTP_ERR_EQUAL_ZID, true);
    return 0;
  }
  z->ph = h;
  memcpy(z->peer_hello, m, len);
  z->peer_hello_len = len;
  z->have_peer_hello = true;
  z->peer_ssrc = ssrc;
  if (z->mult && memcmp(h.zid, z->parent_peer_zid, URTP_ZRTP_ZID_LEN) != 0)
    z->mult = false;  /* not the parent's peer: a DH exchange it is */
  load_peer_cache(z);
  send_simple(z, ZT_HELLOACK);
  if (!z->hello_acked) {
    /* the peer is up now: repeat our Hello at once rather than at the
     * (possibly long) next retransmission, and grant it a full budget;
     * not when it has only just gone out (the peer's Hello started us),
     * where the copy would reach the peer after its Commit as noise */
    const bool just_sent = z->t.on && z->t.resend && z->t.msg == z->hello &&
                           z->now < z->t.due - z->t.interval + 50;
    if (!just_sent)
      send_msg(z, z->hello, z->hello_len);
    timer_resend(z, z->hello, z->hello_len, T1_BASE, T1_CAP, T1_MAX);
  } else {
    maybe_commit(z);
  }
  return 0;
}

static int on_helloack(urtp_zrtp_t *z, size_t len)
{
  if (len != ZRTP_ACK_LEN)
    return -EBADMSG;
  if (z->st != ST_DISCOVERY)
    return z->st == ST_FAILED ? -EPROTO : 0;  /* late duplicate */
  if (z->hello_acked)
    return 0;
  z->hello_acked = true;
  timer_stop(z);
  if (z->have_peer_hello)
    maybe_commit(z);
  else
    timer_deadline(z, URTP_ZRTP_IDLE_TIMEOUT_MS);
  return 0;
}

/* The Commit makes us responder: answer with DHPart1, or in Multistream
 * mode with Confirm1 at once. */
static int respond_to_commit(urtp_zrtp_t *z, const uint8_t *m, size_t len)
{
  const zrtp_commit_t *c = &z->pc;
  unsigned err = 0;
  if (c->hash != ZRTP_HASH_S256)
    err = URTP_ZRTP_ERR_HASH;
  else if (!we_support(z, ZA_CIPHER, c->cipher))
    err = URTP_ZRTP_ERR_CIPHER;
  else if (!we_support(z, ZA_AUTH, c->auth))
    err = URTP_ZRTP_ERR_AUTH_TAG;
  else if (!we_support(z, ZA_SAS, c->sas))
    err = URTP_ZRTP_ERR_SAS;
  else if (!we_support(z, ZA_KA, c->ka) || (c->ka == URTP_ZRTP_KA_MULT && !z->mult))
    err = URTP_ZRTP_ERR_KEY_AGREEMENT;
  if (err) {
    fail(z, err, true);
    return 0;
  }
  memcpy(z->peer_commit, m, len);
  z->peer_commit_len = len;
  z->initiator = false;
  z->hello_acked = true;  /* a Commit acknowledges our Hello */
  z->alg[ZA_HASH] = c->hash;
  z->alg[ZA_CIPHER] = c->cipher;
  z->alg[ZA_AUTH] = c->auth;
  z->alg[ZA_KA] = c->ka;
  z->alg[ZA_SAS] = c->sas;
  if (c->ka == URTP_ZRTP_KA_MULT) {
    uint8_t iv[16];
    if (derive_mult(z) || zrtp_rand(z->rng, z->rng_user, iv, sizeof iv) ||
        zrtp_build_confirm(z->confirm, &z->confirm_len, ZT_CONFIRM1, z->h[0], z->parent_verified,
                           CACHE_NEVER_EXPIRES, z->zrtpkeyr, cipher_key_len(z), z->mackeyr, iv)) {
      fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
      return 0;
    }
    z->st = ST_CONFIRM1_SENT;
    send_msg(z, z->confirm, z->confirm_len);
  } else {
    /* the key pair made for our own Commit serves if the type matches */
    if ((z->kp.ka != c->ka && zrtp_kp_generate(&z->kp, c->ka, z->rng, z->rng_user)) ||
        make_ids(z, "Responder")) {
      fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
      return 0;
    }
    z->dhpart_len = zrtp_build_dhpart(z->dhpart, ZT_DHPART1, z->h[1], z->h[0],
                                      (const uint8_t(*)[8])z->ids, z->kp.pv, z->kp.pv_len);
    z->st = ST_DHPART1_SENT;
    send_msg(z, z->dhpart, z->dhpart_len);
  }
  timer_deadline(z, URTP_ZRTP_IDLE_TIMEOUT_MS);
  return 0;
}

static int on_commit(urtp_zrtp_t *z, const uint8_t *m, size_t len)
{
  if (z->peer_commit_len) {
    /* the initiator repeats its Commit: our answer was lost */
    if (!same_msg(m, len, z->peer_commit, z->peer_commit_len))
      return -EPROTO;
    if (z->st == ST_DHPART1_SENT) {
      send_msg(z, z->dhpart, z->dhpart_len);
      timer_deadline(z, URTP_ZRTP_IDLE_TIMEOUT_MS);
    } else if (z->st == ST_CONFIRM1_SENT && z->alg[ZA_KA] == URTP_ZRTP_KA_MULT) {
      send_msg(z, z->confirm, z->confirm_len);
      timer_deadline(z, URTP_ZRTP_IDLE_TIMEOUT_MS);
    }
    return 0;
  }
  if ((z->st != ST_DISCOVERY && z->st != ST_COMMIT_SENT) || !z->have_peer_hello)
    return -EPROTO;  /* without the peer's Hello we cannot check it: it will come again */
  zrtp_commit_t c;
  if (zrtp_parse_commit(m, len, &c))
    return -EBADMSG;
  /* H2 must hash to the Hello's H3; then the Hello's MAC can be checked */
  uint8_t h3[32];
  zrtp_sha256(c.h2, 32, h3);
  if (!zrtp_equal(h3, z->ph.h3, 32) || memcmp(c.zid, z->ph.zid, URTP_ZRTP_ZID_LEN) != 0)
    return -EPERM;
  if (!mac_ok(z->peer_hello, z->peer_hello_len, c.h2)) {
    fail(z, URTP_ZRTP_ERR_HELLO_MISMATCH, true);
    return 0;
  }
  if (z->st == ST_COMMIT_SENT) {
    /* commit contention (section 4.2): a DH Commit beats a Multistream one;
     * else the lower hvi (nonce) gives way and becomes responder */
    bool ours_dh = z->alg[ZA_KA] != URTP_ZRTP_KA_MULT, theirs_dh = c.ka != URTP_ZRTP_KA_MULT;
    bool yield;
    if (ours_dh != theirs_dh)
      yield = theirs_dh;
    else if (ours_dh)
      yield = memcmp(z->commit + 76, c.hvi, 32) < 0;
    else
      yield = memcmp(z->nonce, c.nonce, 16) < 0;
    if (!yield)
      return 0;  /* the peer yields when it sees our Commit */
    z->commit_len = 0;
  }
  z->pc = c;
  return respond_to_commit(z, m, len);
}

/* Keeps the peer's DHPart (checked by the caller), agrees on the DH result
 * and derives s0 and the keys from it. Returns 0, or -1 after failing the
 * exchange with the RFC's error code. */
static int accept_dhpart(urtp_zrtp_t *z, const uint8_t *m, size_t len, const zrtp_dhpart_t *dp)
{
  const zrtp_dhpart_t d = *dp;
  memcpy(z->peer_dhpart, m, len);
  z->peer_dhpart_len = len;
  z->pd = d;
  z->pd.pv = z->peer_dhpart + (d.pv - m);
  uint8_t dhres[ZRTP_MAX_PV];
  size_t dhlen = 0;
  int rc = zrtp_kp_agree(&z->kp, z->pd.pv, z->pd.pv_len, dhres, &dhlen);
  if (rc) {
    fail(z, rc == -EINVAL ? URTP_ZRTP_ERR_BAD_DH : URTP_ZRTP_ERR_SOFTWARE, true);
    return -1;
  }
  const uint8_t *s1 = match_secrets(z, d.rs1id, d.rs2id);
  rc = derive_dh(z, dhres, dhlen, s1);
  zrtp_wipe(dhres, sizeof dhres);
  zrtp_kp_clear(&z->kp);
  if (rc) {
    fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
    return -1;
  }
  return 0;
}

static int on_dhpart1(urtp_zrtp_t *z, const uint8_t *m, size_t len)
{
  if (z->st == ST_DHPART2_SENT || z->st == ST_CONFIRM2_SENT || (z->st == ST_SECURE && z->initiator))
    return same_msg(m, len, z->peer_dhpart, z->peer_dhpart_len) ? 0 : -EPROTO;
  if (z->st != ST_COMMIT_SENT || z->alg[ZA_KA] == URTP_ZRTP_KA_MULT)
    return -EPROTO;
  zrtp_dhpart_t d;
  if (zrtp_parse_dhpart(m, len, zrtp_ka_pv_len(z->alg[ZA_KA]), &d))
    return -EBADMSG;
  uint8_t h2[32], h3[32];
  zrtp_sha256(d.h1, 32, h2);
  zrtp_sha256(h2, 32, h3);
  if (!zrtp_equal(h3, z->ph.h3, 32))
    return -EPERM;
  if (!mac_ok(z->peer_hello, z->peer_hello_len, h2)) {
    fail(z, URTP_ZRTP_ERR_HELLO_MISMATCH, true);
    return 0;
  }
  if (accept_dhpart(z, m, len, &d))
    return 0;
  if (z->cache_mismatch)
    emit(z, URTP_ZRTP_EV_CACHE_MISMATCH);
  z->st = ST_DHPART2_SENT;
  send_msg(z, z->dhpart, z->dhpart_len);
  timer_resend(z, z->dhpart, z->dhpart_len, T2_BASE, T2_CAP, T2_MAX);
  return 0;
}

static int send_confirm1(urtp_zrtp_t *z)
{
  uint8_t iv[16];
  if (zrtp_rand(z->rng, z->rng_user, iv, sizeof iv))
    return -EIO;
  return zrtp_build_confirm(z->confirm, &z->confirm_len, ZT_CONFIRM1, z->h[0],
                            z->cached_v && z->rs_matched, CACHE_NEVER_EXPIRES, z->zrtpkeyr,
                            cipher_key_len(z), z->mackeyr, iv);
}

static int on_dhpart2(urtp_zrtp_t *z, const uint8_t *m, size_t len)
{
  if (z->st == ST_CONFIRM1_SENT && z->alg[ZA_KA] != URTP_ZRTP_KA_MULT) {
    /* the initiator repeats DHPart2: our Confirm1 was lost */
    if (!same_msg(m, len, z->peer_dhpart, z->peer_dhpart_len))
      return -EPROTO;
    send_msg(z, z->confirm, z->confirm_len);
    timer_deadline(z, URTP_ZRTP_IDLE_TIMEOUT_MS);
    return 0;
  }
  if (z->st == ST_SECURE && !z->initiator)
    return same_msg(m, len, z->peer_dhpart, z->peer_dhpart_len) ? 0 : -EPROTO;
  if (z->st != ST_DHPART1_SENT)
    return -EPROTO;
  zrtp_dhpart_t d;
  if (zrtp_parse_dhpart(m, len, zrtp_ka_pv_len(z->alg[ZA_KA]), &d))
    return -EBADMSG;
  uint8_t h2[32];
  zrtp_sha256(d.h1, 32, h2);
  if (!zrtp_equal(h2, z->pc.h2, 32))
    return -EPERM;
  if (!mac_ok(z->peer_commit, z->peer_commit_len, d.h1)) {
    fail(z, URTP_ZRTP_ERR_CONFIRM_MAC, true);
    return 0;
  }
  uint8_t hvi[32];
  zrtp_sha256_cat(hvi, m, len, z->hello, z->hello_len, NULL, 0, NULL, 0);
  if (!zrtp_equal(hvi, z->pc.hvi, 32)) {
    fail(z, URTP_ZRTP_ERR_HVI, true);
    return 0;
  }
  if (accept_dhpart(z, m, len, &d))
    return 0;
  if (send_confirm1(z)) {
    fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
    return 0;
  }
  if (z->cache_mismatch)
    emit(z, URTP_ZRTP_EV_CACHE_MISMATCH);
  z->st = ST_CONFIRM1_SENT;
  send_msg(z, z->confirm, z->confirm_len);
  timer_deadline(z, URTP_ZRTP_IDLE_TIMEOUT_MS);
  return 0;
}

/* Checks a Confirm's MAC and decrypts it. 1: good; 0: dropped (MAC or
 * chain); -1: the exchange failed; -2: malformed. */
static int open_confirm(urtp_zrtp_t *z, const uint8_t *m, size_t len, const uint8_t *mackey,
                        const uint8_t *zrtpkey, zrtp_confirm_plain_t *pl)
{
  zrtp_confirm_t c;
  if (zrtp_parse_confirm(m, len, &c))
    return -2;
  uint8_t mac[32];
  zrtp_hmac(mackey, 32, c.enc, c.enc_len, mac);
  if (!zrtp_equal(mac, c.mac, ZRTP_MAC_LEN)) {
    /* A forgery or another session's Confirm is dropped; the same bad
     * Confirm again means the peer sent it, with keys that are not ours:
     * that ends the exchange (0x70). */
    uint8_t h[32];
    zrtp_sha256(m, len, h);
    if (z->have_bad_confirm && zrtp_equal(h, z->bad_confirm, 32)) {
      fail(z, URTP_ZRTP_ERR_CONFIRM_MAC, true);
      return -1;
    }
    memcpy(z->bad_confirm, h, 32);
    z->have_bad_confirm = true;
    return 0;
  }
  uint8_t plain[ZRTP_MAX_MSG];
  if (zrtp_aes_cfb(false, zrtpkey, cipher_key_len(z), c.iv, c.enc, plain, c.enc_len)) {
    fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
    return -1;
  }
  int rc = zrtp_parse_confirm_plain(plain, c.enc_len, pl);
  zrtp_wipe(plain, sizeof plain);
  /* a tampered IV garbles the plaintext (the MAC covers the ciphertext
   * only): drop it, the peer repeats the message */
  return rc ? 0 : 1;
}

static void keys_confirmed(urtp_zrtp_t *z, const zrtp_confirm_plain_t *pl, const uint8_t *m,
                           size_t len)
{
  memcpy(z->peer_confirm, m, len);
  z->peer_confirm_len = len;
  z->peer_v = pl->v;
  z->peer_cache_expiry = pl->cache_expiry;
  z->keys_ready = true;
  if (z->alg[ZA_KA] == URTP_ZRTP_KA_MULT)
    z->sas_verified = z->parent_verified;
  else
    update_cache(z);
  emit(z, URTP_ZRTP_EV_KEYS_READY);
}

static int on_confirm1(urtp_zrtp_t *z, const uint8_t *m, size_t len)
{
  if (z->st == ST_CONFIRM2_SENT || (z->st == ST_SECURE && z->initiator))
    return same_msg(m, len, z->peer_confirm, z->peer_confirm_len) ? 0 : -EPROTO;
  bool mult = z->alg[ZA_KA] == URTP_ZRTP_KA_MULT;
  if (!(z->st == ST_DHPART2_SENT || (z->st == ST_COMMIT_SENT && mult)))
    return -EPROTO;
  if (len < ZRTP_CONFIRM_MIN || len > ZRTP_MAX_MSG)
    return -EBADMSG;
  if (mult && derive_mult(z)) {
    fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
    return 0;
  }
  zrtp_confirm_plain_t pl;
  int r = open_confirm(z, m, len, z->mackeyr, z->zrtpkeyr, &pl);
  if (r < -1)
    return -EBADMSG;
  if (r < 0)
    return 0;
  if (r == 0)
    return -EPERM;
  /* H0 closes the responder's chain: DHPart1's H1 and MAC, or in
   * Multistream mode H3 and the Hello's MAC */
  uint8_t h1[32], h2[32], h3[32];
  zrtp_sha256(pl.h0, 32, h1);
  if (mult) {
    zrtp_sha256(h1, 32, h2);
    zrtp_sha256(h2, 32, h3);
    if (!zrtp_equal(h3, z->ph.h3, 32))
      return -EPERM;
    if (!mac_ok(z->peer_hello, z->peer_hello_len, h2)) {
      fail(z, URTP_ZRTP_ERR_HELLO_MISMATCH, true);
      return 0;
    }
  } else {
    if (!zrtp_equal(h1, z->pd.h1, 32))
      return -EPERM;
    if (!mac_ok(z->peer_dhpart, z->peer_dhpart_len, pl.h0)) {
      fail(z, URTP_ZRTP_ERR_CONFIRM_MAC, true);
      return 0;
    }
  }
  keys_confirmed(z, &pl, m, len);
  uint8_t iv[16];
  bool v = mult ? z->parent_verified : z->cached_v && z->rs_matched;
  if (zrtp_rand(z->rng, z->rng_user, iv, sizeof iv) ||
      zrtp_build_confirm(z->confirm, &z->confirm_len, ZT_CONFIRM2, z->h[0], v, CACHE_NEVER_EXPIRES,
                         z->zrtpkeyi, cipher_key_len(z), z->mackeyi, iv)) {
    fail(z, URTP_ZRTP_ERR_SOFTWARE, true);
    return 0;
  }
  z->st = ST_CONFIRM2_SENT;
  send_msg(z, z->confirm, z->confirm_len);
  timer_resend(z, z->confirm, z->confirm_len, T2_BASE, T2_CAP, T2_MAX);
  return 0;
}

static int on_confirm2(urtp_zrtp_t *z, const uint8_t *m, size_t len)
{
  if (z->st == ST_SECURE && !z->initiator) {
    /* the initiator repeats Confirm2: our Conf2ACK was lost */
    if (!same_msg(m, len, z->peer_confirm, z->peer_confirm_len))
      return -EPROTO;
    send_simple(z, ZT_CONF2ACK);
    return 0;
  }
  if (z->st != ST_CONFIRM1_SENT)
    return -EPROTO;
  if (len < ZRTP_CONFIRM_MIN || len > ZRTP_MAX_MSG)
    return -EBADMSG;
  zrtp_confirm_plain_t pl;
  int r = open_confirm(z, m, len, z->mackeyi, z->zrtpkeyi, &pl);
  if (r < -1)
    return -EBADMSG;
  if (r < 0)
    return 0;
  if (r == 0)
    return -EPERM;
  uint8_t h1[32], h2[32];
  zrtp_sha256(pl.h0, 32, h1);
  if (z->alg[ZA_KA] == URTP_ZRTP_KA_MULT) {
    /* H1 closes the initiator's chain at the Commit's H2 and MAC */
    zrtp_sha256(h1, 32, h2);
    if (!zrtp_equal(h2, z->pc.h2, 32))
      return -EPERM;
    if (!mac_ok(z->peer_commit, z->peer_commit_len, h1)) {
      fail(z, URTP_ZRTP_ERR_CONFIRM_MAC, true);
      return 0;
    }
  } else {
    if (!zrtp_equal(h1, z->pd.h1, 32))
      return -EPERM;
    if (!mac_ok(z->peer_dhpart, z->peer_dhpart_len, pl.h0)) {
      fail(z, URTP_ZRTP_ERR_CONFIRM_MAC, true);
      return 0;
    }
  }
  keys_confirmed(z, &pl, m, len);
  z->st = ST_SECURE;
  timer_stop(z);
  send_simple(z, ZT_CONF2ACK);
  emit(z, URTP_ZRTP_EV_SECURE);
  return 0;
}

static int on_conf2ack(urtp_zrtp_t *z, size_t len)
{
  if (len != ZRTP_ACK_LEN)
    return -EBADMSG;
  if (z->st == ST_SECURE && z->initiator)
    return 0;
  if (z->st != ST_CONFIRM2_SENT)
    return -EPROTO;
  z->st = ST_SECURE;
  timer_stop(z);
  emit(z, URTP_ZRTP_EV_SECURE);
  return 0;
}

static int on_error(urtp_zrtp_t *z, const uint8_t *m, size_t len)
{
  uint32_t code;
  if (zrtp_parse_error(m, len, &code))
    return -EBADMSG;
  /* an Error is not authenticated: it cannot end a secure session */
  if (z->st == ST_SECURE)
    return -EPROTO;
  send_simple(z, ZT_ERRORACK);
  if (z->st != ST_FAILED)
    fail_with(z, code & 0xffff, false, true);
  return 0;
}

static int on_errorack(urtp_zrtp_t *z, size_t len)
{
  if (len != ZRTP_ACK_LEN)
    return -EBADMSG;
  if (z->st != ST_FAILED)
    return -EPROTO;
  timer_stop(z);
  return 0;
}

/* ------------------------------------------------------------------ */
/* public                                                              */
/* ------------------------------------------------------------------ */

static int set_prefs(urtp_zrtp_t *z, zrtp_alg_class_t c, const uint8_t *user, unsigned max_id,
                     const uint8_t *defaults, const uint8_t *mandatory)
{
  const uint8_t *src = (user && user[0]) ? user : defaults;
  z->npref[c] = 0;
  for (unsigned i = 0; i < URTP_ZRTP_MAX_PREFS && src[i]; i++) {
    if (src[i] > max_id)
      return -EINVAL;
    if (c == ZA_KA && src[i] == URTP_ZRTP_KA_MULT)
      continue;  /* announced by Multistream sessions only */
    if (!in_list(z->pref[c], z->npref[c], src[i]))
      z->pref[c][z->npref[c]++] = src[i];
  }
  for (unsigned i = 0; mandatory[i]; i++)
    if (!in_list(z->pref[c], z->npref[c], mandatory[i]))
      z->pref[c][z->npref[c]++] = mandatory[i];
  return 0;
}

int urtp_zrtp_new(const urtp_zrtp_config_t *cfg, urtp_zrtp_t **out)
{
  static const uint8_t def_ka[] = {URTP_ZRTP_KA_EC25, URTP_ZRTP_KA_DH3K, 0};
  static const uint8_t def_cipher[] = {URTP_ZRTP_CIPHER_AES1, URTP_ZRTP_CIPHER_AES3, 0};
  static const uint8_t def_auth[] = {URTP_ZRTP_AUTH_HS80, URTP_ZRTP_AUTH_HS32, 0};
  static const uint8_t def_sas[] = {URTP_ZRTP_SAS_B32, URTP_ZRTP_SAS_B256, 0};
  static const uint8_t man_hash[] = {ZRTP_HASH_S256, 0};
  static const uint8_t man_ka[] = {URTP_ZRTP_KA_DH3K, 0};
  static const uint8_t man_cipher[] = {URTP_ZRTP_CIPHER_AES1, 0};
  static const uint8_t man_auth[] = {URTP_ZRTP_AUTH_HS32, URTP_ZRTP_AUTH_HS80, 0};
  static const uint8_t man_sas[] = {URTP_ZRTP_SAS_B32, 0};

  if (!out)
    return -EINVAL;
  *out = NULL;
  if (!cfg || !cfg->send || (cfg->role != URTP_ZRTP_ROLE_AUTO && cfg->role != URTP_ZRTP_ROLE_RESPONDER))
    return -EINVAL;
  if (cfg->client_id && strlen(cfg->client_id) > 16)
    return -EINVAL;
  const urtp_zrtp_t *parent = cfg->multistream_parent;
  if (parent && (parent->st != ST_SECURE || !parent->keys_ready))
    return -EINVAL;

  /* OpenSSL's exit handler frees per-thread state that threads of the host
   * application (GStreamer's pools) free again later: leave cleanup to exit. */
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);

  urtp_zrtp_t *z = calloc(1, sizeof *z);
  if (!z)
    return -ENOMEM;
  z->send = cfg->send;
  z->on_event = cfg->on_event;
  z->user = cfg->user;
  z->rng = cfg->rng;
  z->rng_user = cfg->rng_user;
  z->role = cfg->role;
  z->ssrc = cfg->ssrc;
  const char *cid = cfg->client_id ? cfg->client_id : "gst-uvgrtp";
  memset(z->client_id, ' ', sizeof z->client_id);
  memcpy(z->client_id, cid, strlen(cid));

  int rc = set_prefs(z, ZA_HASH, NULL, ZRTP_HASH_S256, man_hash, man_hash);
  rc |= set_prefs(z, ZA_KA, cfg->key_agreements, URTP_ZRTP_KA_MULT, def_ka, man_ka);
  rc |= set_prefs(z, ZA_CIPHER, cfg->ciphers, URTP_ZRTP_CIPHER_AES3, def_cipher, man_cipher);
  rc |= set_prefs(z, ZA_AUTH, cfg->auth_tags, URTP_ZRTP_AUTH_HS80, def_auth, man_auth);
  rc |= set_prefs(z, ZA_SAS, cfg->sas_types, URTP_ZRTP_SAS_B256, def_sas, man_sas);
  if (rc) {
    free(z);
    return -EINVAL;
  }

  if (parent) {
    z->mult = true;
    z->pref[ZA_KA][z->npref[ZA_KA]++] = URTP_ZRTP_KA_MULT;
    memcpy(z->parent_sess, parent->sess, sizeof z->parent_sess);
    memcpy(z->parent_peer_zid, parent->ph.zid, URTP_ZRTP_ZID_LEN);
    memcpy(z->parent_sas, parent->sas, sizeof z->parent_sas);
    z->parent_sas_value = parent->sas_value;
    z->parent_sas_type = parent->alg[ZA_SAS];
    z->parent_verified = parent->sas_verified;
  }

  const char *cache = cfg->cache_path ? cfg->cache_path
                                      : (parent && parent->cache_path ? parent->cache_path : NULL);
  if (cache && !(z->cache_path = strdup(cache))) {
    free(z);
    return -ENOMEM;
  }

  rc = 0;
  if (cfg->zid) {
    memcpy(z->zid, cfg->zid, URTP_ZRTP_ZID_LEN);
  } else if (parent) {
    memcpy(z->zid, parent->zid, URTP_ZRTP_ZID_LEN);
  } else if (z->cache_path) {
    rc = zrtp_cache_own_zid(z->cache_path, z->zid, z->rng, z->rng_user);
  } else {
    rc = zrtp_rand(z->rng, z->rng_user, z->zid, URTP_ZRTP_ZID_LEN);
  }

  uint8_t seq[2];
  if (rc == 0)
    rc = zrtp_rand(z->rng, z->rng_user, z->h[0], 32) | zrtp_rand(z->rng, z->rng_user, seq, 2);
  if (rc) {
    free(z->cache_path);
    free(z);
    return rc == -ENOMEM ? -ENOMEM : -EIO;
  }
  /* start low so the 16-bit count never wraps within an exchange */
  z->seq = (uint16_t)(((seq[0] << 8 | seq[1]) & 0x3fff) | 1);
  for (int i = 1; i < 4; i++)
    zrtp_sha256(z->h[i - 1], 32, z->h[i]);

  zrtp_hello_desc_t hd = {.client_id = z->client_id, .h3 = z->h[3], .h2 = z->h[2], .zid = z->zid,
                          .alg = (const uint8_t(*)[ZRTP_MAX_ALGS + 2])z->pref};
  memcpy(hd.n, z->npref, sizeof hd.n);
  z->hello_len = zrtp_build_hello(z->hello, &hd);
  z->st = ST_IDLE;
  *out = z;
  return 0;
}

void urtp_zrtp_free(urtp_zrtp_t *z)
{
  if (!z)
    return;
  wipe_keys(z);
  free(z->cache_path);
  zrtp_wipe(z, sizeof *z);
  free(z);
}

int urtp_zrtp_start(urtp_zrtp_t *z, uint64_t now_ms)
{
  if (z->st != ST_IDLE)
    return -EALREADY;
  z->now = now_ms;
  z->st = ST_DISCOVERY;
  send_msg(z, z->hello, z->hello_len);
  timer_resend(z, z->hello, z->hello_len, T1_BASE, T1_CAP, T1_MAX);
  return 0;
}

int urtp_zrtp_recv(urtp_zrtp_t *z, const uint8_t *pkt, size_t len, uint64_t now_ms)
{
  z->stats.received++;
  if (z->st == ST_IDLE)
    return -EAGAIN;
  z->now = now_ms;
  const uint8_t *m;
  size_t mlen;
  zrtp_type_t type;
  uint32_t ssrc;
  int rc = zrtp_packet_check(pkt, len, &m, &mlen, &type, &ssrc);
  if (rc == 0 && mlen > ZRTP_MAX_MSG)
    rc = -EBADMSG;
  if (rc == 0) {
    switch (type) {
    case ZT_HELLO: rc = on_hello(z, m, mlen, ssrc); break;
    case ZT_HELLOACK: rc = on_helloack(z, mlen); break;
    case ZT_COMMIT: rc = on_commit(z, m, mlen); break;
    case ZT_DHPART1: rc = on_dhpart1(z, m, mlen); break;
    case ZT_DHPART2: rc = on_dhpart2(z, m, mlen); break;
    case ZT_CONFIRM1: rc = on_confirm1(z, m, mlen); break;
    case ZT_CONFIRM2: rc = on_confirm2(z, m, mlen); break;
    case ZT_CONF2ACK: rc = on_conf2ack(z, mlen); break;
    case ZT_ERROR: rc = on_error(z, m, mlen); break;
    case ZT_ERRORACK: rc = on_errorack(z, mlen); break;
    default:
      /* GoClear (we never allow clear), SASrelay (no trusted MiTM), Ping,
       * and unknown types */
      rc = -EPROTO;
      break;
    }
  }
  switch (rc) {
  case 0: z->stats.accepted++; break;
  case -EBADMSG: z->stats.bad_packet++; break;
  case -EPERM: z->stats.auth_fail++; break;
  default: z->stats.unexpected++; break;
  }
  return rc;
}

void urtp_zrtp_tick(urtp_zrtp_t *z, uint64_t now_ms)
{
  z->now = now_ms;
  zrtp_timer_t *t = &z->t;
  if (!t->on || now_ms < t->due)
    return;
  if (!t->resend || t->left == 0) {
    t->on = false;
    if (z->st == ST_FAILED)
      return;  /* Error retransmissions are over */
    /* no Error to a peer that never showed up */
    fail(z, URTP_ZRTP_ERR_TIMEOUT, z->have_peer_hello);
    return;
  }
  send_msg(z, t->msg, t->len);
  z->stats.retransmits++;
  t->left--;
  t->interval = t->interval * 2 > t->cap ? t->cap : t->interval * 2;
  t->due = now_ms + t->interval;
}

uint64_t urtp_zrtp_next_timeout(const urtp_zrtp_t *z)
{
  return z->t.on ? z->t.due : UINT64_MAX;
}

void urtp_zrtp_peer_srtp_ok(urtp_zrtp_t *z)
{
  if (z->st == ST_CONFIRM2_SENT) {
    z->st = ST_SECURE;
    timer_stop(z);
    emit(z, URTP_ZRTP_EV_SECURE);
  }
}

urtp_zrtp_state_t urtp_zrtp_state(const urtp_zrtp_t *z)
{
  switch (z->st) {
  case ST_IDLE: return URTP_ZRTP_IDLE;
  case ST_DISCOVERY: return URTP_ZRTP_DISCOVERY;
  case ST_SECURE: return URTP_ZRTP_SECURE;
  case ST_FAILED: return URTP_ZRTP_FAILED;
  default: return URTP_ZRTP_KEY_AGREEMENT;
  }
}

static void copy_name(char out[5], zrtp_alg_class_t c, unsigned id)
{
  const char *n = zrtp_alg_name(c, id);
  memset(out, 0, 5);
  if (n)
    for (int i = 0; i < 4 && n[i] != ' '; i++)
      out[i] = n[i];
}

void urtp_zrtp_get_info(const urtp_zrtp_t *z, urtp_zrtp_info_t *out)
{
  memset(out, 0, sizeof *out);
  out->state = urtp_zrtp_state(z);
  out->initiator = z->initiator;
  out->multistream = z->alg[ZA_KA] == URTP_ZRTP_KA_MULT;
  out->keys_ready = z->keys_ready && z->st != ST_FAILED;
  if (out->keys_ready) {
    memcpy(out->sas, z->sas, sizeof out->sas);
    out->sas_value = z->sas_value;
  }
  out->sas_verified = out->keys_ready && z->sas_verified;
  out->peer_sas_verified = out->keys_ready && z->peer_v;
  out->secrets_matched = z->rs_matched;
  out->cache_mismatch = z->cache_mismatch;
  copy_name(out->hash, ZA_HASH, z->alg[ZA_HASH]);
  copy_name(out->cipher, ZA_CIPHER, z->alg[ZA_CIPHER]);
  copy_name(out->auth_tag, ZA_AUTH, z->alg[ZA_AUTH]);
  copy_name(out->key_agreement, ZA_KA, z->alg[ZA_KA]);
  copy_name(out->sas_type, ZA_SAS, out->multistream ? z->parent_sas_type : z->alg[ZA_SAS]);
  memcpy(out->zid, z->zid, URTP_ZRTP_ZID_LEN);
  if (z->have_peer_hello) {
    memcpy(out->peer_zid, z->ph.zid, URTP_ZRTP_ZID_LEN);
    memcpy(out->peer_client_id, z->ph.client_id, 16);
  }
  out->peer_ssrc = z->peer_ssrc;
  out->error = z->error;
  out->error_from_peer = z->error_from_peer;
  out->stats = z->stats;
}

int urtp_zrtp_get_keys(const urtp_zrtp_t *z, urtp_zrtp_keys_t *out)
{
  if (!z->keys_ready || z->st == ST_FAILED)
    return -EAGAIN;
  bool aes3 = z->alg[ZA_CIPHER] == URTP_ZRTP_CIPHER_AES3;
  bool hs80 = z->alg[ZA_AUTH] == URTP_ZRTP_AUTH_HS80;
  size_t kl = aes3 ? 32 : 16;
  memset(out, 0, sizeof *out);
  out->profile = aes3 ? (hs80 ? URTP_SRTP_AES_256_CM_HMAC_SHA1_80 : URTP_SRTP_AES_256_CM_HMAC_SHA1_32)
                      : (hs80 ? URTP_SRTP_AES_CM_128_HMAC_SHA1_80 : URTP_SRTP_AES_CM_128_HMAC_SHA1_32);
  out->key_len = kl + ZRTP_SALT_LEN;
  out->tag_bits = hs80 ? 80 : 32;
  const uint8_t *lk = z->initiator ? z->srtpkeyi : z->srtpkeyr;
  const uint8_t *ls = z->initiator ? z->srtpsalti : z->srtpsaltr;
  const uint8_t *rk = z->initiator ? z->srtpkeyr : z->srtpkeyi;
  const uint8_t *rs = z->initiator ? z->srtpsaltr : z->srtpsalti;
  memcpy(out->local, lk, kl);
  memcpy(out->local + kl, ls, ZRTP_SALT_LEN);
  memcpy(out->remote, rk, kl);
  memcpy(out->remote + kl, rs, ZRTP_SALT_LEN);
  return 0;
}

int urtp_zrtp_set_sas_verified(urtp_zrtp_t *z, bool verified)
{
  if (!z->keys_ready || z->st == ST_FAILED)
    return -EAGAIN;
  z->sas_verified = verified;
  z->cached_v = verified;
  if (!z->cache_path || !z->have_peer_hello)
    return 0;
  zrtp_cache_entry_t e = {0};
  memcpy(e.zid, z->ph.zid, URTP_ZRTP_ZID_LEN);
  e.v = verified;
  int rc;
  if (verified && z->cache_pending) {
    /* the user vouches for this exchange: it becomes the new continuity */
    e.has_rs1 = true;
    memcpy(e.rs1, z->new_rs1, 32);
    e.has_rs2 = z->have_rs1;
    memcpy(e.rs2, z->rs1, 32);
    rc = zrtp_cache_store(z->cache_path, &e, false);
    if (rc == 0)
      z->cache_pending = false;
  } else {
    rc = zrtp_cache_store(z->cache_path, &e, true);
  }
  zrtp_wipe(&e, sizeof e);
  return rc ? -EIO : 0;
}

const char *urtp_zrtp_state_name(urtp_zrtp_state_t s)
{
  static const char *const names[] = {"IDLE", "DISCOVERY", "KEY_AGREEMENT", "SECURE", "FAILED"};
  return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : NULL;
}

const char *urtp_zrtp_error_name(unsigned code)
{
  switch (code) {
  case 0x10: return "Malformed packet";
  case 0x20: return "Critical software error";
  case 0x30: return "Unsupported ZRTP version";
  case 0x40: return "Hello components mismatch";
  case 0x51: return "Hash type not supported";
  case 0x52: return "Cipher type not supported";
  case 0x53: return "Public key exchange not supported";
  case 0x54: return "SRTP auth tag not supported";
  case 0x55: return "SAS rendering scheme not supported";
  case 0x56: return "No shared secret available, DH mode required";
  case 0x61: return "DH error: bad pvi or pvr";
  case 0x62: return "DH error: hvi != hashed data";
  case 0x63: return "Received relayed SAS from untrusted MiTM";
  case 0x70: return "Auth error: bad Confirm MAC";
  case 0x80: return "Nonce reuse";
  case 0x90: return "Equal ZIDs in Hello";
  case 0x91: return "SSRC collision";
  case 0xA0: return "Service unavailable";
  case 0xB0: return "Protocol timeout";
  case 0xC0: return "GoClear received but not allowed";
  default: return NULL;
  }
}
