/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/srtp.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <dlfcn.h>
#include <srtp2/cipher.h>
#include <srtp2/srtp.h>

_Static_assert(URTP_SRTP_MAX_TRAILER >= SRTP_MAX_TRAILER_LEN + 4,
               "room for srtp_protect_rtcp's trailer and SRTCP index");
_Static_assert(URTP_SRTP_MAX_KEY_LEN >= SRTP_AES_ICM_256_KEY_LEN_WSALT, "key room");

typedef struct profile_desc {
  const char *name;
  size_t key_len;
  void (*set_rtp)(srtp_crypto_policy_t *p);
  void (*set_rtcp)(srtp_crypto_policy_t *p);
} profile_desc_t;

/* libsrtp2 spells the 128-bit default as a macro; give it an address. */
static void set_aes_cm_128_sha1_80(srtp_crypto_policy_t *p)
{
  srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(p);
}

/* The _32 profiles shorten only the SRTP tag; SRTCP keeps 80 bits
 * (RFC 4568 section 6.2). */
static const profile_desc_t profiles[URTP_SRTP_PROFILE_COUNT] = {
  [URTP_SRTP_AES_CM_128_HMAC_SHA1_80] = {"AES_CM_128_HMAC_SHA1_80", SRTP_AES_ICM_128_KEY_LEN_WSALT,
                                         set_aes_cm_128_sha1_80, set_aes_cm_128_sha1_80},
  [URTP_SRTP_AES_CM_128_HMAC_SHA1_32] = {"AES_CM_128_HMAC_SHA1_32", SRTP_AES_ICM_128_KEY_LEN_WSALT,
                                         srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32,
                                         set_aes_cm_128_sha1_80},
  [URTP_SRTP_AES_256_CM_HMAC_SHA1_80] = {"AES_256_CM_HMAC_SHA1_80", SRTP_AES_ICM_256_KEY_LEN_WSALT,
                                         srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80,
                                         srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80},
  [URTP_SRTP_AES_256_CM_HMAC_SHA1_32] = {"AES_256_CM_HMAC_SHA1_32", SRTP_AES_ICM_256_KEY_LEN_WSALT,
                                         srtp_crypto_policy_set_aes_cm_256_hmac_sha1_32,
                                         srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80},
  [URTP_SRTP_AEAD_AES_128_GCM] = {"AEAD_AES_128_GCM", SRTP_AES_GCM_128_KEY_LEN_WSALT,
                                  srtp_crypto_policy_set_aes_gcm_128_16_auth,
                                  srtp_crypto_policy_set_aes_gcm_128_16_auth},
  [URTP_SRTP_AEAD_AES_256_GCM] = {"AEAD_AES_256_GCM", SRTP_AES_GCM_256_KEY_LEN_WSALT,
                                  srtp_crypto_policy_set_aes_gcm_256_16_auth,
                                  srtp_crypto_policy_set_aes_gcm_256_16_auth},
};

static bool valid_profile(urtp_srtp_profile_t p)
{
  return (unsigned)p < URTP_SRTP_PROFILE_COUNT;
}

const char *urtp_srtp_profile_name(urtp_srtp_profile_t p)
{
  return valid_profile(p) ? profiles[p].name : NULL;
}

size_t urtp_srtp_key_len(urtp_srtp_profile_t p)
{
  return valid_profile(p) ? profiles[p].key_len : 0;
}

/* ---- which libsrtp2 ---- */

/* libsrtp2's AES-ICM cipher type: defined by every build, described as
 * "... using openssl" / "... using NSS" / "... using mbedtls" or without a
 * suffix for its own AES. Not in its public headers, hence weak: a build
 * lacking it only loses the description. */
extern const srtp_cipher_type_t srtp_aes_icm_128 __attribute__((weak));

static pthread_once_t backend_once = PTHREAD_ONCE_INIT;
static char backend[160];

static void backend_init(void)
{
  const char *crypto = "own AES";
  const char *d = &srtp_aes_icm_128 ? srtp_aes_icm_128.description : NULL;
  const char *using = d ? strstr(d, " using ") : NULL;
  if (!d)
    crypto = "crypto unknown";
  else if (using && !strcasecmp(using + 7, "openssl"))
    crypto = "OpenSSL";
  else if (using && !strcasecmp(using + 7, "nss"))
    crypto = "NSS";
  else if (using && !strcasecmp(using + 7, "mbedtls"))
    crypto = "Mbed TLS";
  else if (using)
    crypto = using + 7;

  /* The object holding srtp_protect: a shared libsrtp2, or this binary. */
  const char *where = "built in";
  Dl_info info;
  if (dladdr((void *)&srtp_protect, &info) && info.dli_fname && strstr(info.dli_fname, "libsrtp2.so")) {
    const char *slash = strrchr(info.dli_fname, '/');
    where = slash ? slash + 1 : info.dli_fname;
  }
  snprintf(backend, sizeof(backend), "%s (%s, %s)", srtp_get_version_string(), crypto, where);
}

const char *urtp_srtp_backend(void)
{
  pthread_once(&backend_once, backend_init);
  return backend;
}

/* ---- process-wide initialisation ----
 *
 * libsrtp2 keeps one crypto kernel per copy of the library, and srtp_init()
 * takes no lock: it registers its debug modules, cipher and auth types one
 * after the other (each after a self-test) and only then marks the kernel
 * ready. Any other user of the same libsrtp2 (GStreamer's srtp plugin, a
 * second copy of this library linked into the application beside the one
 * in the plugin) may be in the middle of it at the same moment. The one
 * that comes second finds something registered already and gets bad_param
 * back while the kernel is not ready yet; srtp_create() then fails with
 * init_fail until the first one is done. A later srtp_init() also returns
 * bad_param (its debug module is there), so bad_param alone tells nothing.
 *
 * So readiness is judged by what counts: a trial srtp_create() with the
 * one profile every build has. While it says init_fail, srtp_init() is
 * called and the trial repeated, for up to INIT_WAIT_MS. Within this copy
 * of the library everything happens under one mutex. A profile is recorded
 * as available or not only from a definite answer of srtp_create(); a
 * failure to get the kernel ready or to allocate is reported to the caller
 * and tried again on the next call, never cached. */

#define INIT_WAIT_MS 5000

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static bool kernel_ready;                            /* under lib_lock */
/* under lib_lock: 0 not known yet, 1 available, -ENOTSUP */
static int profile_state[URTP_SRTP_PROFILE_COUNT];

static void fill_policy(srtp_policy_t *pol, urtp_srtp_profile_t p, unsigned char *key)
{
  memset(pol, 0, sizeof(*pol));
  profiles[p].set_rtp(&pol->rtp);
  profiles[p].set_rtcp(&pol->rtcp);
  pol->key = key;
}

/* Whether libsrtp2 can build a session for p right now. */
static srtp_err_status_t trial_create(urtp_srtp_profile_t p)
{
  unsigned char key[URTP_SRTP_MAX_KEY_LEN] = {0};
  srtp_policy_t pol;
  fill_policy(&pol, p, key);
  pol.ssrc.type = ssrc_any_outbound;
  srtp_t session = NULL;
  srtp_err_status_t st = srtp_create(&session, &pol);
  if (st == srtp_err_status_ok)
    srtp_dealloc(session);
  return st;
}

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Gets the crypto kernel ready (see above). 0, -ENOMEM, or -EIO when it is
 * still not ready after INIT_WAIT_MS or srtp_init() failed for another
 * reason (a self-test). Called with lib_lock held. */
static int ensure_kernel_locked(void)
{
  if (kernel_ready)
    return 0;
  uint64_t start = now_ms();
  unsigned pause_us = 50;
  for (;;) {
    srtp_err_status_t st = trial_create(URTP_SRTP_AES_CM_128_HMAC_SHA1_80);
    if (st == srtp_err_status_ok) {
      kernel_ready = true;
      return 0;
    }
    if (st == srtp_err_status_alloc_fail)
      return -ENOMEM;
    if (st != srtp_err_status_init_fail)
      return -EIO;
    /* Not initialised, or someone else is half way through it. */
    st = srtp_init();
    if (st == srtp_err_status_ok)
      continue;
    if (st != srtp_err_status_bad_param)
      return -EIO;
    /* Someone registered first: they are done (the trial will tell) or
     * still at it. Give them time. */
    if (now_ms() - start >= INIT_WAIT_MS)
      return -EIO;
    struct timespec ts = {0, (long)pause_us * 1000};
    nanosleep(&ts, NULL);
    if (pause_us < 5000)
      pause_us *= 2;
  }
}

/* 0 if p is available, -ENOTSUP if libsrtp2 lacks it, -EIO or -ENOMEM
 * (not cached) if that cannot be told now. Called with lib_lock held. */
static int profile_check_locked(urtp_srtp_profile_t p)
{
  for (int attempt = 0; attempt < 2; attempt++) {
    int err = ensure_kernel_locked();
    if (err)
      return err;
    if (profile_state[p])
      return profile_state[p] > 0 ? 0 : profile_state[p];
    srtp_err_status_t st = trial_create(p);
    switch (st) {
    case srtp_err_status_ok:
      profile_state[p] = 1;
      return 0;
    case srtp_err_status_alloc_fail:
      return -ENOMEM;
    case srtp_err_status_init_fail:
      /* someone shut libsrtp2 down (srtp_shutdown()): set it up again */
      kernel_ready = false;
      continue;
    default:
      /* its cipher or auth function is not in this libsrtp2 (GCM needs
       * libsrtp2 built on a crypto library) */
      profile_state[p] = -ENOTSUP;
      return -ENOTSUP;
    }
  }
  return -EIO;
}

int urtp_srtp_profile_available(urtp_srtp_profile_t p)
{
  if (!valid_profile(p))
    return -EINVAL;
  pthread_mutex_lock(&lib_lock);
  int err = profile_check_locked(p);
  pthread_mutex_unlock(&lib_lock);
  return err;
}

/* ---- configuration helpers ---- */

#define WHY(...) (why ? (void)snprintf(why, why_len, __VA_ARGS__) : (void)0)

int urtp_srtp_profile_from_nicks(const char *cipher, const char *auth,
                                 urtp_srtp_profile_t *profile, size_t *key_len,
                                 char *why, size_t why_len)
{
  static const char *const ciphers[] = {"null", "aes-128-icm", "aes-256-icm",
                                        "aes-128-gcm", "aes-256-gcm"};
  static const char *const auths[] = {"null", "hmac-sha1-32", "hmac-sha1-80"};
  int c = -1, a = -1;
  for (int i = 0; cipher && i < 5; i++)
    if (!strcmp(cipher, ciphers[i]))
      c = i;
  for (int i = 0; auth && i < 3; i++)
    if (!strcmp(auth, auths[i]))
      a = i;
  if (c < 0) {
    WHY("unknown rtp-cipher '%s' (aes-128-icm, aes-256-icm, aes-128-gcm, aes-256-gcm, null)",
        cipher ? cipher : "(null)");
    return -EINVAL;
  }
  if (a < 0) {
    WHY("unknown rtp-auth '%s' (hmac-sha1-80, hmac-sha1-32, null)", auth ? auth : "(null)");
    return -EINVAL;
  }

  urtp_srtp_profile_t p;
  if (c >= 3) {
    if (a != 0) {
      WHY("rtp-cipher %s authenticates by itself: rtp-auth must be null, not %s",
          ciphers[c], auths[a]);
      return -EINVAL;
    }
    p = c == 3 ? URTP_SRTP_AEAD_AES_128_GCM : URTP_SRTP_AEAD_AES_256_GCM;
  } else if (c == 0 || a == 0) {
    WHY("rtp-cipher %s with rtp-auth %s leaves packets %s; not supported", ciphers[c],
        auths[a], c == 0 && a == 0 ? "unprotected" : c == 0 ? "unencrypted" : "unauthenticated");
    return -ENOTSUP;
  } else {
    static const urtp_srtp_profile_t icm[2][2] = {
      {URTP_SRTP_AES_CM_128_HMAC_SHA1_32, URTP_SRTP_AES_CM_128_HMAC_SHA1_80},
      {URTP_SRTP_AES_256_CM_HMAC_SHA1_32, URTP_SRTP_AES_256_CM_HMAC_SHA1_80},
    };
    p = icm[c - 1][a - 1];
  }
  if (profile)
    *profile = p;
  if (key_len)
    *key_len = profiles[p].key_len;
  return 0;
}

static int hexval(char ch)
{
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

int urtp_srtp_key_from_hex(const char *hex, urtp_srtp_profile_t p,
                           uint8_t key[URTP_SRTP_MAX_KEY_LEN], char *why, size_t why_len)
{
  if (!valid_profile(p)) {
    WHY("invalid SRTP profile %d", (int)p);
    return -EINVAL;
  }
  size_t want = profiles[p].key_len;
  size_t salt = p >= URTP_SRTP_AEAD_AES_128_GCM ? SRTP_AEAD_SALT_LEN : SRTP_SALT_LEN;
  if (!hex || !*hex) {
    WHY("SRTP key is empty; %s needs %zu bytes (%zu hex digits)", profiles[p].name, want,
        2 * want);
    return -EINVAL;
  }
  size_t n = strlen(hex);
  for (size_t i = 0; i < n; i++) {
    if (hexval(hex[i]) < 0) {
      unsigned char ch = (unsigned char)hex[i];
      if (ch >= 0x21 && ch < 0x7f)
        WHY("SRTP key: '%c' at position %zu is not a hex digit", ch, i);
      else
        WHY("SRTP key: byte 0x%02x at position %zu is not a hex digit", ch, i);
      return -EINVAL;
    }
  }
  if (n % 2) {
    WHY("SRTP key has an odd number of hex digits (%zu)", n);
    return -EINVAL;
  }
  if (n / 2 != want) {
    WHY("SRTP key is %zu bytes; %s needs %zu (%zu-byte master key + %zu-byte master salt)",
        n / 2, profiles[p].name, want, want - salt, salt);
    return -EINVAL;
  }
  for (size_t i = 0; i < want; i++)
    key[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
  return 0;
}

/* ---- contexts ---- */

int urtp_srtp_init(urtp_srtp_t *s, const urtp_srtp_config_t *cfg)
{
  memset(s, 0, sizeof(*s));
  if (!valid_profile(cfg->profile) || !cfg->key || cfg->key_len != profiles[cfg->profile].key_len ||
      (cfg->dir != URTP_SRTP_OUTBOUND && cfg->dir != URTP_SRTP_INBOUND))
    return -EINVAL;
  if (cfg->replay_window != 0 &&
      (cfg->replay_window < URTP_SRTP_MIN_WINDOW || cfg->replay_window > URTP_SRTP_MAX_WINDOW))
    return -EINVAL;
  int err = urtp_srtp_profile_available(cfg->profile);
  if (err)
    return err;

  /* libsrtp2 derives the session keys inside srtp_create and keeps only
   * those; the master key is copied here just to drop the const. */
  unsigned char key[URTP_SRTP_MAX_KEY_LEN];
  memcpy(key, cfg->key, cfg->key_len);
  srtp_policy_t pol;
  fill_policy(&pol, cfg->profile, key);
  if (cfg->any_ssrc)
    pol.ssrc.type = cfg->dir == URTP_SRTP_OUTBOUND ? ssrc_any_outbound : ssrc_any_inbound;
  else
    pol.ssrc.type = ssrc_specific;
  pol.ssrc.value = cfg->ssrc;
  pol.window_size = cfg->replay_window;
  pol.allow_repeat_tx = 0;

  srtp_t session = NULL;
  srtp_err_status_t st = srtp_create(&session, &pol);
  if (st == srtp_err_status_init_fail) {
    /* shut down behind our back since the check: set up again, once */
    pthread_mutex_lock(&lib_lock);
    kernel_ready = false;
    err = profile_check_locked(cfg->profile);
    pthread_mutex_unlock(&lib_lock);
    if (!err)
      st = srtp_create(&session, &pol);
  }
  explicit_bzero(key, sizeof(key));
  if (err)
    return err;
  if (st != srtp_err_status_ok)
    return st == srtp_err_status_alloc_fail ? -ENOMEM : -EIO;

  s->session = session;
  s->profile = cfg->profile;
  s->dir = cfg->dir;
  s->rtp_trailer = (size_t)pol.rtp.auth_tag_len;
  s->rtcp_trailer = (size_t)pol.rtcp.auth_tag_len + 4;   /* E flag + SRTCP index */
  return 0;
}

void urtp_srtp_destroy(urtp_srtp_t *s)
{
  if (s->session)
    srtp_dealloc((srtp_t)s->session);   /* zeroes the stream keys */
  memset(s, 0, sizeof(*s));
}

/* Turns a libsrtp2 verdict into an errno and counts it. */
static int verdict(urtp_srtp_stats_t *st, srtp_err_status_t e)
{
  switch (e) {
  case srtp_err_status_ok:
    st->packets++;
    return 0;
  case srtp_err_status_auth_fail:
    st->auth_fail++;
    return -EBADMSG;
  case srtp_err_status_replay_fail:
  case srtp_err_status_replay_old:
    st->replay++;
    return -EALREADY;
  default:
    st->other++;
    return -EPROTO;
  }
}

void urtp_srtp_count(urtp_srtp_stats_t *st, int result)
{
  if (result >= 0)
    st->packets++;
  else if (result == -EBADMSG)
    st->auth_fail++;
  else if (result == -EALREADY)
    st->replay++;
  else
    st->other++;
}

/* A packet plus its trailer must still fit the 16-bit length of a batch
 * packet (and libsrtp2's int). */
static bool fits(size_t len, size_t trailer)
{
  return len <= 65535 - trailer;
}

int urtp_srtp_protect(urtp_srtp_t *s, uint8_t *buf, size_t len, size_t cap)
{
  if (s->dir != URTP_SRTP_OUTBOUND)
    return -EINVAL;
  if (cap < len || cap - len < URTP_SRTP_MAX_TRAILER)
    return -ENOSPC;
  if (!fits(len, s->rtp_trailer)) {
    s->stats.other++;
    return -EPROTO;
  }
  int n = (int)len;
  int err = verdict(&s->stats, srtp_protect((srtp_t)s->session, buf, &n));
  return err ? err : n;
}

int urtp_srtp_protect_rtcp(urtp_srtp_t *s, uint8_t *buf, size_t len, size_t cap)
{
  if (s->dir != URTP_SRTP_OUTBOUND)
    return -EINVAL;
  if (cap < len || cap - len < URTP_SRTP_MAX_TRAILER)
    return -ENOSPC;
  if (!fits(len, s->rtcp_trailer)) {
    s->rtcp_stats.other++;
    return -EPROTO;
  }
  int n = (int)len;
  int err = verdict(&s->rtcp_stats, srtp_protect_rtcp((srtp_t)s->session, buf, &n));
  return err ? err : n;
}

int urtp_srtp_protect_batch(urtp_srtp_t *s, const urtp_batch_t *in, urtp_batch_t *out)
{
  if (s->dir != URTP_SRTP_OUTBOUND || in == out)
    return -EINVAL;
  if (urtp_batch_reserve(out, in->npkts, in->npkts))
    return -ENOMEM;
  srtp_t session = (srtp_t)s->session;
  int done = 0;
  for (size_t i = 0; i < in->npkts; i++) {
    size_t len = in->pkts[i].len;
    if (!fits(len, s->rtp_trailer)) {
      s->stats.other++;
      continue;
    }
    /* Slab: the packet, then libsrtp2's documented worst-case trailer,
     * rounded to 16 so every packet starts aligned for the cipher. Only a
     * packet within 148 bytes of 64 KiB gets less (clamped to one chunk);
     * it still has room for its own tag, all libsrtp2 writes without MKI. */
    size_t room = (len + URTP_SRTP_MAX_TRAILER + 15) & ~(size_t)15;
    if (room > URTP_BATCH_CHUNK)
      room = URTP_BATCH_CHUNK;
    uint8_t *slab = urtp_batch_arena_take(out, room);
    if (!slab)
      return -ENOMEM;
    urtp_batch_copy_pkt(in, i, slab, len);
    int n = (int)len;
    if (verdict(&s->stats, srtp_protect(session, slab, &n)))
      continue;   /* the slab is simply not used; arena memory is reused */
    out->iov[out->niov] = (struct iovec){.iov_base = slab, .iov_len = (size_t)n};
    urtp_batch_commit(out, 1, (uint16_t)n);
    done++;
  }
  return done;
}

/* Zeroes a rejected packet so that nothing of it, decrypted or not, can be
 * mistaken for payload by a caller that ignores the error. */
static int reject(uint8_t *buf, size_t len, int err)
{
  memset(buf, 0, len);
  return err;
}

int urtp_srtp_unprotect(urtp_srtp_t *s, uint8_t *buf, size_t len)
{
  if (s->dir != URTP_SRTP_INBOUND)
    return -EINVAL;
  if (len > INT_MAX) {
    s->stats.other++;
    return reject(buf, len, -EPROTO);
  }
  int n = (int)len;
  int err = verdict(&s->stats, srtp_unprotect((srtp_t)s->session, buf, &n));
  return err ? reject(buf, len, err) : n;
}

int urtp_srtp_unprotect_rtcp(urtp_srtp_t *s, uint8_t *buf, size_t len)
{
  if (s->dir != URTP_SRTP_INBOUND)
    return -EINVAL;
  if (len > INT_MAX) {
    s->rtcp_stats.other++;
    return reject(buf, len, -EPROTO);
  }
  int n = (int)len;
  int err = verdict(&s->rtcp_stats, srtp_unprotect_rtcp((srtp_t)s->session, buf, &n));
  return err ? reject(buf, len, err) : n;
}
