/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_srtp.c - SRTP/SRTCP through libsrtp2: known answers, batch round
 * trips, rejections, replay window, key parsing, and a loopback send.
 *
 * Known answers: libsrtp2's published reference packets (AES-CM-128 with
 * HMAC-SHA1-80/32, AES-256-CM, AES-128-GCM, SRTP and SRTCP), and, when
 * OpenSSL's libcrypto is at hand, packets computed here independently from
 * RFC 3711 / 6188 / 7714 (key derivation, AES-CTR, HMAC-SHA1, AES-GCM) on
 * full-size packets across a sequence number wrap (ROC 0 -> 1).
 *
 * Backend: the libsrtp2 in use is the one the build configured (the private
 * static OpenSSL build, or the system's), and the system's shared libsrtp2
 * loaded into the same process, as GStreamer's srtpenc/srtpdec load it,
 * works beside it and agrees with it byte for byte.
 *
 * Initialisation: another user of the same libsrtp2 calling srtp_init() at
 * the same moment as this library (GStreamer's srtp plugin, or a second
 * copy of lib/ in the application) must not leave this library without
 * SRTP (test_init_race, in fresh processes: it runs first).
 */
#include "urtp/srtp.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Types for the system's shared libsrtp2 (reached through dlsym), and the
 * functions of the libsrtp2 this library uses, called directly by the
 * initialisation race test as any other user of it would. */
#include <srtp2/srtp.h>

#include "tap.h"
#include "urtp/net.h"
#include "urtp/rtp.h"

#ifdef TEST_HAVE_LIBCRYPTO
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

#ifndef URTP_SRTP_LINKED
#define URTP_SRTP_LINKED "unknown"   /* set by lib/meson.build */
#endif

#define PAY_MAX 1388            /* payload of a full packet: 1400 with header */
#define BUF 65536

#define POOL (1u << 20)
static uint8_t payload_pool[POOL];

static void pool_init(void)
{
  uint64_t seed = 0x5127a11;
  for (size_t i = 0; i < sizeof(payload_pool); i += 8) {
    uint64_t v = tap_rand(&seed);
    memcpy(payload_pool + i, &v, 8);
  }
}

static size_t unhex(const char *h, uint8_t *out)
{
  size_t n = 0;
  for (; h[0] && h[1]; h += 2) {
    unsigned v;
    sscanf(h, "%2x", &v);
    out[n++] = (uint8_t)v;
  }
  return n;
}

static void fill_key(uint8_t *k, size_t n, uint64_t seed)
{
  for (size_t i = 0; i < n; i++)
    k[i] = (uint8_t)tap_rand(&seed);
}

static int make_ctx(urtp_srtp_t *s, urtp_srtp_profile_t p, urtp_srtp_dir_t dir, const uint8_t *key,
                    bool any, uint32_t ssrc, unsigned window)
{
  urtp_srtp_config_t c = {
    .profile = p, .dir = dir, .key = key, .key_len = urtp_srtp_key_len(p),
    .any_ssrc = any, .ssrc = ssrc, .replay_window = window,
  };
  return urtp_srtp_init(s, &c);
}

/* Appends an RTP packet: 12-byte header (plus `extra` bytes of a payload
 * format header) in the arena, payload from src split into nsplit iovecs. */
static void add_pkt(urtp_batch_t *b, uint32_t ssrc, uint16_t seq, uint32_t ts, bool marker,
                    const uint8_t *src, size_t pay_len, unsigned nsplit)
{
  REQUIRE(urtp_batch_reserve(b, 1, 1 + nsplit) == 0);
  uint8_t *h = urtp_batch_arena_take(b, 14);
  REQUIRE(h);
  urtp_rtp_write_fixed(h, 96, marker, seq, ts, ssrc);
  h[12] = 0x62;     /* an H.265 FU-like header, just bytes here */
  h[13] = (uint8_t)seq;
  struct iovec *v = b->iov + b->niov;
  v[0] = (struct iovec){h, 14};
  size_t off = 0;
  for (unsigned k = 0; k < nsplit; k++) {
    size_t n = k + 1 == nsplit ? pay_len - off : pay_len / nsplit;
    v[1 + k] = (struct iovec){(void *)(src + off), n};
    off += n;
  }
  urtp_batch_commit(b, (uint16_t)(1 + nsplit), (uint16_t)(14 + pay_len));
}

/* A video-like access unit: three small packets (parameter sets, SEI),
 * `full` fragments of 1400 bytes, and a shorter last fragment. */
static void add_frame(urtp_batch_t *b, uint32_t ssrc, uint16_t *seq, uint32_t ts, size_t full,
                      size_t last_pay)
{
  static const size_t small[3] = {9, 33, 2};
  size_t off = ((size_t)*seq * 977) % 4096;
  for (int i = 0; i < 3; i++)
    add_pkt(b, ssrc, (*seq)++, ts, false, payload_pool + off + 100 * i, small[i], 1);
  for (size_t i = 0; i < full; i++)
    add_pkt(b, ssrc, (*seq)++, ts, false, payload_pool + (off + 1000 + i * 1399) % (POOL - 2000),
            PAY_MAX - 2, i % 3 == 0 ? 2 : 1);
  add_pkt(b, ssrc, (*seq)++, ts, true, payload_pool + off + 64000 - last_pay, last_pay, 1);
}

static bool all_zero(const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return false;
  return true;
}

/* ---- tables and parsing ---- */

static void test_profiles(void)
{
  static const size_t keylen[URTP_SRTP_PROFILE_COUNT] = {30, 30, 46, 46, 28, 44};
  static const char *const names[URTP_SRTP_PROFILE_COUNT] = {
    "AES_CM_128_HMAC_SHA1_80", "AES_CM_128_HMAC_SHA1_32", "AES_256_CM_HMAC_SHA1_80",
    "AES_256_CM_HMAC_SHA1_32", "AEAD_AES_128_GCM", "AEAD_AES_256_GCM"};
  static const size_t rtp_tr[URTP_SRTP_PROFILE_COUNT] = {10, 4, 10, 4, 16, 16};
  static const size_t rtcp_tr[URTP_SRTP_PROFILE_COUNT] = {14, 14, 14, 14, 20, 20};
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
    CHECK_EQ(urtp_srtp_key_len(p), keylen[p]);
    CHECK(!strcmp(urtp_srtp_profile_name(p), names[p]));
    int av = urtp_srtp_profile_available(p);
    printf("# %s: %s\n", names[p], av == 0 ? "available" : "not available");
    if (p <= URTP_SRTP_AES_256_CM_HMAC_SHA1_32)
      CHECK_EQ(av, 0);   /* AES-ICM is built into every libsrtp2 */
    else
      CHECK(av == 0 || av == -ENOTSUP);
    if (av)
      continue;
    uint8_t key[URTP_SRTP_MAX_KEY_LEN];
    fill_key(key, sizeof(key), 7);
    urtp_srtp_t s;
    CHECK_EQ(make_ctx(&s, p, URTP_SRTP_OUTBOUND, key, true, 0, 0), 0);
    CHECK_EQ(s.rtp_trailer, rtp_tr[p]);
    CHECK_EQ(s.rtcp_trailer, rtcp_tr[p]);
    urtp_srtp_destroy(&s);
  }
  CHECK(urtp_srtp_profile_name(URTP_SRTP_PROFILE_COUNT) == NULL);
  CHECK_EQ(urtp_srtp_key_len(URTP_SRTP_PROFILE_COUNT), 0);
  CHECK_EQ(urtp_srtp_profile_available(URTP_SRTP_PROFILE_COUNT), -EINVAL);
  CHECK_EQ(urtp_srtp_profile_available((urtp_srtp_profile_t)-1), -EINVAL);
}

static void test_nicks(void)
{
  static const struct {
    const char *c, *a;
    int ret;
    urtp_srtp_profile_t p;
    size_t klen;
  } t[] = {
    {"aes-128-icm", "hmac-sha1-80", 0, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, 30},
    {"aes-128-icm", "hmac-sha1-32", 0, URTP_SRTP_AES_CM_128_HMAC_SHA1_32, 30},
    {"aes-256-icm", "hmac-sha1-80", 0, URTP_SRTP_AES_256_CM_HMAC_SHA1_80, 46},
    {"aes-256-icm", "hmac-sha1-32", 0, URTP_SRTP_AES_256_CM_HMAC_SHA1_32, 46},
    {"aes-128-gcm", "null", 0, URTP_SRTP_AEAD_AES_128_GCM, 28},
    {"aes-256-gcm", "null", 0, URTP_SRTP_AEAD_AES_256_GCM, 44},
    {"aes-128-gcm", "hmac-sha1-80", -EINVAL, 0, 0},
    {"aes-256-gcm", "hmac-sha1-32", -EINVAL, 0, 0},
    {"aes-128-icm", "null", -ENOTSUP, 0, 0},
    {"null", "hmac-sha1-80", -ENOTSUP, 0, 0},
    {"null", "null", -ENOTSUP, 0, 0},
    {"aes-192-icm", "hmac-sha1-80", -EINVAL, 0, 0},
    {"AES-128-ICM", "hmac-sha1-80", -EINVAL, 0, 0},
    {"aes-128-icm", "hmac-sha256", -EINVAL, 0, 0},
    {NULL, "null", -EINVAL, 0, 0},
    {"aes-128-icm", NULL, -EINVAL, 0, 0},
  };
  for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    urtp_srtp_profile_t p = URTP_SRTP_PROFILE_COUNT;
    size_t klen = 999;
    char why[200] = "";
    int r = urtp_srtp_profile_from_nicks(t[i].c, t[i].a, &p, &klen, why, sizeof(why));
    CHECK_EQ(r, t[i].ret);
    if (r == 0) {
      CHECK_EQ(p, t[i].p);
      CHECK_EQ(klen, t[i].klen);
      CHECK_EQ(why[0], 0);
    } else {
      CHECK_EQ(p, URTP_SRTP_PROFILE_COUNT);   /* untouched */
      CHECK(why[0] != 0);
      printf("#   %s/%s: %s\n", t[i].c ? t[i].c : "NULL", t[i].a ? t[i].a : "NULL", why);
    }
  }
  /* NULL outputs are allowed */
  CHECK_EQ(urtp_srtp_profile_from_nicks("aes-128-icm", "hmac-sha1-80", NULL, NULL, NULL, 0), 0);
  CHECK_EQ(urtp_srtp_profile_from_nicks("x", "y", NULL, NULL, NULL, 0), -EINVAL);
}

static void test_key_hex(void)
{
  const char *good = "E1F97A0D3E018BE0D64FA32C06DE41390ec675ad498afeebb6960b3aabe6";
  uint8_t want[30], key[URTP_SRTP_MAX_KEY_LEN];
  unhex("e1f97a0d3e018be0d64fa32c06de41390ec675ad498afeebb6960b3aabe6", want);
  char why[200];
  memset(key, 0xee, sizeof(key));
  CHECK_EQ(urtp_srtp_key_from_hex(good, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, why, sizeof(why)), 0);
  CHECK_MEM(key, want, 30);
  CHECK_EQ(key[30], 0xee);   /* nothing written past the key */

  /* the same 30 bytes are the wrong size for the others */
  CHECK_EQ(urtp_srtp_key_from_hex(good, URTP_SRTP_AES_256_CM_HMAC_SHA1_80, key, why, sizeof(why)),
           -EINVAL);
  printf("#   %s\n", why);
  CHECK(strstr(why, "30 bytes") && strstr(why, "needs 46") && strstr(why, "32-byte master key") &&
        strstr(why, "14-byte master salt"));
  CHECK_EQ(urtp_srtp_key_from_hex(good, URTP_SRTP_AEAD_AES_128_GCM, key, why, sizeof(why)), -EINVAL);
  CHECK(strstr(why, "needs 28") && strstr(why, "16-byte master key") &&
        strstr(why, "12-byte master salt"));
  CHECK_EQ(urtp_srtp_key_from_hex(good, URTP_SRTP_AEAD_AES_256_GCM, key, why, sizeof(why)), -EINVAL);
  CHECK(strstr(why, "needs 44"));

  /* one digit short: odd */
  char odd[80];
  snprintf(odd, sizeof(odd), "%.59s", good);
  CHECK_EQ(urtp_srtp_key_from_hex(odd, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, why, sizeof(why)),
           -EINVAL);
  printf("#   %s\n", why);
  CHECK(strstr(why, "odd") && strstr(why, "59"));

  /* a bad digit anywhere, reported with its position */
  for (size_t pos = 0; pos < 60; pos += 7) {
    char bad[80];
    snprintf(bad, sizeof(bad), "%s", good);
    bad[pos] = pos % 2 ? 'g' : ' ';
    CHECK_EQ(urtp_srtp_key_from_hex(bad, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, why, sizeof(why)),
             -EINVAL);
    char at[40];
    snprintf(at, sizeof(at), "position %zu", pos);
    CHECK(strstr(why, at) != NULL);
  }
  CHECK_EQ(urtp_srtp_key_from_hex("0x1234", URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, why,
                                  sizeof(why)), -EINVAL);
  CHECK(strstr(why, "'x' at position 1"));
  CHECK_EQ(urtp_srtp_key_from_hex("", URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, why, sizeof(why)),
           -EINVAL);
  CHECK(strstr(why, "empty"));
  CHECK_EQ(urtp_srtp_key_from_hex(NULL, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, why, sizeof(why)),
           -EINVAL);
  CHECK_EQ(urtp_srtp_key_from_hex(good, URTP_SRTP_PROFILE_COUNT, key, why, sizeof(why)), -EINVAL);
  /* why may be NULL or tiny */
  CHECK_EQ(urtp_srtp_key_from_hex(odd, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, NULL, 0), -EINVAL);
  char tiny[4];
  CHECK_EQ(urtp_srtp_key_from_hex(odd, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, key, tiny, sizeof(tiny)),
           -EINVAL);
  CHECK_EQ(strlen(tiny), 3);

  /* 46 bytes for AES-256 */
  char k46[93];
  for (int i = 0; i < 46; i++)
    snprintf(k46 + 2 * i, 3, "%02x", i * 5);
  CHECK_EQ(urtp_srtp_key_from_hex(k46, URTP_SRTP_AES_256_CM_HMAC_SHA1_32, key, why, sizeof(why)), 0);
  CHECK_EQ(key[45], 225);
}

static void test_init_errors(void)
{
  uint8_t key[URTP_SRTP_MAX_KEY_LEN] = {1, 2, 3};
  urtp_srtp_t s;
  urtp_srtp_config_t c = {.profile = URTP_SRTP_AES_CM_128_HMAC_SHA1_80, .dir = URTP_SRTP_INBOUND,
                          .key = key, .key_len = 30, .any_ssrc = true};
  c.key_len = 29;
  CHECK_EQ(urtp_srtp_init(&s, &c), -EINVAL);
  CHECK(s.session == NULL);
  c.key_len = 46;
  CHECK_EQ(urtp_srtp_init(&s, &c), -EINVAL);
  c.key_len = 30;
  c.key = NULL;
  CHECK_EQ(urtp_srtp_init(&s, &c), -EINVAL);
  c.key = key;
  c.profile = URTP_SRTP_PROFILE_COUNT;
  CHECK_EQ(urtp_srtp_init(&s, &c), -EINVAL);
  c.profile = URTP_SRTP_AES_CM_128_HMAC_SHA1_80;
  static const unsigned bad_win[] = {1, 63, 32768, 100000};
  for (size_t i = 0; i < 4; i++) {
    c.replay_window = bad_win[i];
    CHECK_EQ(urtp_srtp_init(&s, &c), -EINVAL);
  }
  static const unsigned good_win[] = {0, 64, 128, 1000, 32767};
  for (size_t i = 0; i < 5; i++) {
    c.replay_window = good_win[i];
    CHECK_EQ(urtp_srtp_init(&s, &c), 0);
    urtp_srtp_destroy(&s);
    CHECK(s.session == NULL);
  }
  urtp_srtp_destroy(&s);   /* twice is fine */

  /* each direction does only its own job */
  uint8_t buf[256] = {0x80, 96};
  urtp_srtp_t in, out;
  REQUIRE(make_ctx(&in, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, URTP_SRTP_INBOUND, key, true, 0, 0) == 0);
  REQUIRE(make_ctx(&out, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, URTP_SRTP_OUTBOUND, key, true, 0, 0) == 0);
  urtp_batch_t b1 = {0}, b2 = {0};
  CHECK_EQ(urtp_srtp_protect(&in, buf, 20, sizeof(buf)), -EINVAL);
  CHECK_EQ(urtp_srtp_protect_rtcp(&in, buf, 20, sizeof(buf)), -EINVAL);
  CHECK_EQ(urtp_srtp_protect_batch(&in, &b1, &b2), -EINVAL);
  CHECK_EQ(urtp_srtp_protect_batch(&out, &b1, &b1), -EINVAL);
  CHECK_EQ(urtp_srtp_unprotect(&out, buf, 30), -EINVAL);
  CHECK_EQ(urtp_srtp_unprotect_rtcp(&out, buf, 30), -EINVAL);
  CHECK_EQ(buf[0], 0x80);   /* untouched */
  /* not enough room behind the packet */
  CHECK_EQ(urtp_srtp_protect(&out, buf, 20, 20 + URTP_SRTP_MAX_TRAILER - 1), -ENOSPC);
  CHECK_EQ(urtp_srtp_protect_rtcp(&out, buf, 20, 19), -ENOSPC);
  CHECK_EQ(in.stats.packets + in.stats.other + out.stats.packets + out.stats.other, 0);
  /* an empty batch protects to an empty batch */
  CHECK_EQ(urtp_srtp_protect_batch(&out, &b1, &b2), 0);
  CHECK_EQ(b2.npkts, 0);
  urtp_srtp_destroy(&in);
  urtp_srtp_destroy(&out);
  urtp_batch_free(&b1);
  urtp_batch_free(&b2);
}

/* ---- known answers ---- */

static const char *const kat_rtp_plain = "800f1234decafbadcafebabeabababababababababababababababab";
static const char *const kat_rtcp_plain = "81c8000bcafebabeabababababababababababababababab";

typedef struct kat {
  urtp_srtp_profile_t p;
  const char *key, *srtp, *srtcp;
} kat_t;

/* libsrtp2's reference packets (test/srtp_driver.c), SSRC 0xcafebabe. */
static const kat_t kats[] = {
  {URTP_SRTP_AES_CM_128_HMAC_SHA1_80, "e1f97a0d3e018be0d64fa32c06de41390ec675ad498afeebb6960b3aabe6",
   "800f1234decafbadcafebabe4e55dc4ce79978d88ca4d215949d2402b78d6acc99ea179b8dbb",
   "81c8000bcafebabe7128035be487b9bdbef89041f977a5a880000001993e08cd54d6c1230798"},
  {URTP_SRTP_AES_CM_128_HMAC_SHA1_32, "e1f97a0d3e018be0d64fa32c06de41390ec675ad498afeebb6960b3aabe6",
   "800f1234decafbadcafebabe4e55dc4ce79978d88ca4d215949d2402b78d6acc",
   "81c8000bcafebabe7128035be487b9bdbef89041f977a5a880000001993e08cd54d6c1230798"},
  {URTP_SRTP_AES_256_CM_HMAC_SHA1_80,
   "f0f04914b513f2763a1b1fa130f10e2998f6f6e43e4309d1e622a0e332b9f1b63b04803de51ee7c96423ab5b78d2",
   "800f1234decafbadcafebabef1d9de17ff251ff1aa007774b0b4b40da08d9d9a5b3a55d8873b", NULL},
  {URTP_SRTP_AEAD_AES_128_GCM, "000102030405060708090a0b0c0d0e0fa0a1a2a3a4a5a6a7a8a9aaab",
   "800f1234decafbadcafebabec5002ede04cfdd2eb91159e0880aa06ed2976826f796b201df3131a127e8a392",
   "81c8000bcafebabec98b8b5df0392a55852b6c21ac8e7025c52c6fbea2b3b446ea31123ba88ce61e80000001"},
};

static void test_known_answers(void)
{
  for (size_t k = 0; k < sizeof(kats) / sizeof(kats[0]); k++) {
    const kat_t *t = &kats[k];
    if (urtp_srtp_profile_available(t->p)) {
      printf("# skip %s: not in this libsrtp2\n", urtp_srtp_profile_name(t->p));
      continue;
    }
    uint8_t key[URTP_SRTP_MAX_KEY_LEN], plain[64], want[64], buf[256];
    unhex(t->key, key);
    size_t plen = unhex(kat_rtp_plain, plain);
    size_t wlen = unhex(t->srtp, want);

    /* single packet, specific SSRC */
    urtp_srtp_t out, in;
    REQUIRE(make_ctx(&out, t->p, URTP_SRTP_OUTBOUND, key, false, 0xcafebabe, 0) == 0);
    REQUIRE(make_ctx(&in, t->p, URTP_SRTP_INBOUND, key, false, 0xcafebabe, 128) == 0);
    memcpy(buf, plain, plen);
    CHECK_EQ(urtp_srtp_protect(&out, buf, plen, sizeof(buf)), wlen);
    CHECK_MEM(buf, want, wlen);
    CHECK_EQ(urtp_srtp_unprotect(&in, buf, wlen), plen);
    CHECK_MEM(buf, plain, plen);
    CHECK_EQ(out.stats.packets, 1);
    CHECK_EQ(in.stats.packets, 1);

    if (t->srtcp) {
      size_t rlen = unhex(kat_rtcp_plain, plain);
      size_t swlen = unhex(t->srtcp, want);
      memcpy(buf, plain, rlen);
      CHECK_EQ(urtp_srtp_protect_rtcp(&out, buf, rlen, sizeof(buf)), swlen);
      CHECK_MEM(buf, want, swlen);
      CHECK_EQ(urtp_srtp_unprotect_rtcp(&in, buf, swlen), rlen);
      CHECK_MEM(buf, plain, rlen);
      CHECK_EQ(out.rtcp_stats.packets, 1);
      CHECK_EQ(in.rtcp_stats.packets, 1);
    }
    urtp_srtp_destroy(&out);
    urtp_srtp_destroy(&in);

    /* the batch path, any SSRC, payload split over three iovecs */
    plen = unhex(kat_rtp_plain, plain);
    unhex(t->srtp, want);
    REQUIRE(make_ctx(&out, t->p, URTP_SRTP_OUTBOUND, key, true, 0, 0) == 0);
    urtp_batch_t bin = {0}, bout = {0};
    urtp_batch_reserve(&bin, 1, 3);
    bin.iov[0] = (struct iovec){plain, 12};
    bin.iov[1] = (struct iovec){plain + 12, 5};
    bin.iov[2] = (struct iovec){plain + 17, plen - 17};
    urtp_batch_commit(&bin, 3, (uint16_t)plen);
    CHECK_EQ(urtp_srtp_protect_batch(&out, &bin, &bout), 1);
    REQUIRE(bout.npkts == 1);
    CHECK_EQ(bout.pkts[0].iov_count, 1);
    CHECK_EQ(bout.pkts[0].len, wlen);
    CHECK_EQ(bout.iov[bout.pkts[0].iov_first].iov_len, wlen);
    CHECK_MEM(bout.iov[bout.pkts[0].iov_first].iov_base, want, wlen);
    unhex(kat_rtp_plain, buf);
    CHECK_MEM(plain, buf, plen);   /* input untouched */
    urtp_srtp_destroy(&out);
    urtp_batch_free(&bin);
    urtp_batch_free(&bout);
  }
}

#ifdef TEST_HAVE_LIBCRYPTO
/* ---- an independent SRTP sender on OpenSSL, straight from the RFCs ---- */

static void aes_ctr(const uint8_t *key, size_t klen, const uint8_t iv[16], const uint8_t *in,
                    uint8_t *out, size_t n)
{
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
  int l = 0;
  EVP_EncryptInit_ex(c, klen == 16 ? EVP_aes_128_ctr() : EVP_aes_256_ctr(), NULL, key, iv);
  EVP_EncryptUpdate(c, out, &l, in, (int)n);
  EVP_EncryptFinal_ex(c, out + l, &l);
  EVP_CIPHER_CTX_free(c);
}

/* RFC 3711 4.3: key derivation rate 0, so x = label at octet 7 of the
 * 112-bit salt; the PRF is AES-CM keyed with the master key from x * 2^16.
 * GCM's 96-bit master salt is used zero-padded (RFC 7714 section 11). */
static void kdf(const uint8_t *mk, size_t klen, const uint8_t *msalt, size_t slen, uint8_t label,
                uint8_t *out, size_t n)
{
  uint8_t iv[16] = {0}, zero[64] = {0};
  memcpy(iv, msalt, slen);
  iv[7] ^= label;
  aes_ctr(mk, klen, iv, zero, out, n);
}

/* Protects a plain 12-byte-header RTP packet with packet index roc||seq. */
static size_t ref_protect(urtp_srtp_profile_t p, const uint8_t *master, const uint8_t *pkt,
                          size_t len, uint32_t roc, uint8_t *out)
{
  bool gcm = p >= URTP_SRTP_AEAD_AES_128_GCM;
  size_t klen = p == URTP_SRTP_AES_CM_128_HMAC_SHA1_80 || p == URTP_SRTP_AES_CM_128_HMAC_SHA1_32 ||
                        p == URTP_SRTP_AEAD_AES_128_GCM
                    ? 16 : 32;
  size_t slen = gcm ? 12 : 14;
  uint8_t ek[32], ak[20], salt[14];
  kdf(master, klen, master + klen, slen, 0x00, ek, klen);
  kdf(master, klen, master + klen, slen, 0x01, ak, 20);
  kdf(master, klen, master + klen, slen, 0x02, salt, slen);
  uint16_t seq = urtp_rtp_peek_seq(pkt);
  uint32_t ssrc = urtp_rtp_peek_ssrc(pkt);
  memcpy(out, pkt, 12);

  if (gcm) {
    /* RFC 7714 8.1: IV = (00 00 || SSRC || ROC || SEQ) XOR salt */
    uint8_t iv[12] = {0, 0, (uint8_t)(ssrc >> 24), (uint8_t)(ssrc >> 16), (uint8_t)(ssrc >> 8),
                      (uint8_t)ssrc, (uint8_t)(roc >> 24), (uint8_t)(roc >> 16),
                      (uint8_t)(roc >> 8), (uint8_t)roc, (uint8_t)(seq >> 8), (uint8_t)seq};
    for (int i = 0; i < 12; i++)
      iv[i] ^= salt[i];
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l = 0;
    EVP_EncryptInit_ex(c, klen == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm(), NULL, NULL, NULL);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL);
    EVP_EncryptInit_ex(c, NULL, NULL, ek, iv);
    EVP_EncryptUpdate(c, NULL, &l, pkt, 12);   /* AAD: the header */
    EVP_EncryptUpdate(c, out + 12, &l, pkt + 12, (int)(len - 12));
    EVP_EncryptFinal_ex(c, out + 12 + l, &l);
    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out + len);
    EVP_CIPHER_CTX_free(c);
    return len + 16;
  }

  /* RFC 3711 4.1.1: IV = (k_s * 2^16) XOR (SSRC * 2^64) XOR (i * 2^16) */
  uint8_t iv[16] = {0};
  memcpy(iv, salt, 14);
  uint64_t idx = (uint64_t)roc << 16 | seq;
  for (int i = 0; i < 4; i++)
    iv[4 + i] ^= (uint8_t)(ssrc >> (24 - 8 * i));
  for (int i = 0; i < 6; i++)
    iv[8 + i] ^= (uint8_t)(idx >> (40 - 8 * i));
  aes_ctr(ek, klen, iv, pkt + 12, out + 12, len - 12);
  /* RFC 3711 4.2: HMAC-SHA1 over the packet and the ROC, truncated */
  uint8_t m[BUF], md[20];
  unsigned mdlen = 0;
  memcpy(m, out, len);
  for (int i = 0; i < 4; i++)
    m[len + i] = (uint8_t)(roc >> (24 - 8 * i));
  HMAC(EVP_sha1(), ak, 20, m, len + 4, md, &mdlen);
  size_t tag = p == URTP_SRTP_AES_CM_128_HMAC_SHA1_80 || p == URTP_SRTP_AES_256_CM_HMAC_SHA1_80 ? 10 : 4;
  memcpy(out + len, md, tag);
  return len + tag;
}

static void test_openssl_reference(void)
{
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
    if (urtp_srtp_profile_available(p))
      continue;
    uint8_t key[URTP_SRTP_MAX_KEY_LEN];
    fill_key(key, sizeof(key), 1000 + (uint64_t)p);
    urtp_srtp_t out;
    REQUIRE(make_ctx(&out, p, URTP_SRTP_OUTBOUND, key, false, 0x11223344, 0) == 0);
    urtp_batch_t bin = {0}, bout = {0};
    /* 40 packets across the wrap: seq 0xffec .. 0x0013 */
    uint16_t seq = 0xffec;
    for (int f = 0; f < 2; f++)
      add_frame(&bin, 0x11223344, &seq, 90000u * (unsigned)f, 16, 700);
    REQUIRE(bin.npkts == 40);
    CHECK_EQ(urtp_srtp_protect_batch(&out, &bin, &bout), 40);
    REQUIRE(bout.npkts == 40);
    int mismatches = 0;
    for (size_t i = 0; i < bin.npkts; i++) {
      uint8_t plain[BUF], want[BUF];
      size_t len = urtp_batch_copy_pkt(&bin, i, plain, sizeof(plain));
      uint16_t s = urtp_rtp_peek_seq(plain);
      size_t wlen = ref_protect(p, key, plain, len, s < 0x8000 ? 1 : 0, want);
      const struct iovec *v = &bout.iov[bout.pkts[i].iov_first];
      if (v->iov_len != wlen || memcmp(v->iov_base, want, wlen))
        mismatches++;
    }
    if (mismatches)
      printf("#   %s: %d of 40 packets differ from the OpenSSL reference\n",
             urtp_srtp_profile_name(p), mismatches);
    CHECK_EQ(mismatches, 0);
    urtp_srtp_destroy(&out);
    urtp_batch_free(&bin);
    urtp_batch_free(&bout);
  }
}
#endif

/* ---- round trips ---- */

static void test_batch_roundtrip(void)
{
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
    if (urtp_srtp_profile_available(p))
      continue;
    uint8_t key[URTP_SRTP_MAX_KEY_LEN];
    fill_key(key, sizeof(key), 42 + (uint64_t)p);
    urtp_srtp_t out, in;
    REQUIRE(make_ctx(&out, p, URTP_SRTP_OUTBOUND, key, true, 0, 0) == 0);
    REQUIRE(make_ctx(&in, p, URTP_SRTP_INBOUND, key, true, 0, 4096) == 0);
    size_t tr = out.rtp_trailer;
    urtp_batch_t bin = {0}, bout = {0};
    uint16_t seq = (uint16_t)(65000 + 37 * p);   /* wraps within the test */
    uint64_t total = 0;
    size_t chunks_after_big = 0, pkts_cap_after_big = 0;
    /* frame sizes: a big one first, then smaller and equal ones */
    static const size_t frames[][2] = {{300, 1200}, {20, 5}, {45, 1387}, {300, 100}, {0, 1}, {2, 77}};
    for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
      urtp_batch_clear(&bin);
      urtp_batch_clear(&bout);
      uint32_t ssrc = f % 2 ? 0xabcdef01 : 0x0badf00d;   /* two streams, one context */
      add_frame(&bin, ssrc, &seq, 3000u * (unsigned)f, frames[f][0], frames[f][1]);
      int n = urtp_srtp_protect_batch(&out, &bin, &bout);
      CHECK_EQ(n, bin.npkts);
      REQUIRE(bout.npkts == bin.npkts);
      CHECK_EQ(bout.niov, bout.npkts);
      total += bin.npkts;
      for (size_t i = 0; i < bin.npkts; i++) {
        const urtp_pkt_t *po = &bout.pkts[i];
        CHECK_EQ(po->iov_count, 1);
        CHECK_EQ(po->len, bin.pkts[i].len + tr);
        CHECK_EQ(bout.iov[po->iov_first].iov_len, po->len);
        /* equal in, equal out: GSO runs survive */
        if (i > 0 && bin.pkts[i].len == bin.pkts[i - 1].len)
          CHECK_EQ(po->len, bout.pkts[i - 1].len);
        uint8_t plain[BUF], buf[BUF];
        size_t len = urtp_batch_copy_pkt(&bin, i, plain, sizeof(plain));
        memcpy(buf, bout.iov[po->iov_first].iov_base, po->len);
        CHECK_MEM(buf, plain, 12);                      /* header in clear */
        if (len > 20)
          CHECK(memcmp(buf + 12, plain + 12, len - 12) != 0);   /* payload not */
        CHECK_EQ(urtp_srtp_unprotect(&in, buf, po->len), len);
        CHECK_MEM(buf, plain, len);
      }
      if (f == 0) {
        chunks_after_big = bout.nchunks;
        pkts_cap_after_big = bout.pkts_cap;
      } else {
        /* memory grows only for a batch larger than any before */
        CHECK_EQ(bout.nchunks, chunks_after_big);
        CHECK_EQ(bout.pkts_cap, pkts_cap_after_big);
      }
    }
    CHECK_EQ(out.stats.packets, total);
    CHECK_EQ(in.stats.packets, total);
    CHECK_EQ(in.stats.auth_fail + in.stats.replay + in.stats.other, 0);
    CHECK_EQ(out.stats.auth_fail + out.stats.replay + out.stats.other, 0);

    /* appending: two protected batches make one output batch */
    urtp_batch_clear(&bin);
    urtp_batch_clear(&bout);
    add_frame(&bin, 0x0badf00d, &seq, 1, 3, 10);
    CHECK_EQ(urtp_srtp_protect_batch(&out, &bin, &bout), 7);
    urtp_batch_clear(&bin);
    add_frame(&bin, 0x0badf00d, &seq, 2, 3, 10);
    CHECK_EQ(urtp_srtp_protect_batch(&out, &bin, &bout), 7);
    CHECK_EQ(bout.npkts, 14);
    CHECK_EQ(urtp_rtp_peek_seq(bout.iov[bout.pkts[13].iov_first].iov_base), (uint16_t)(seq - 1));

    urtp_srtp_destroy(&out);
    urtp_srtp_destroy(&in);
    urtp_batch_free(&bin);
    urtp_batch_free(&bout);
  }
}

/* Packets libsrtp2 refuses to protect are left out of the batch, counted. */
static void test_protect_refusals(void)
{
  uint8_t key[30];
  fill_key(key, 30, 9);
  urtp_srtp_t out;
  REQUIRE(make_ctx(&out, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, URTP_SRTP_OUTBOUND, key, false, 77, 0) == 0);
  urtp_batch_t bin = {0}, bout = {0};
  add_pkt(&bin, 77, 10, 0, false, payload_pool, 100, 1);
  add_pkt(&bin, 78, 11, 0, false, payload_pool, 100, 1);    /* SSRC not served */
  add_pkt(&bin, 77, 11, 0, false, payload_pool, 101, 2);
  add_pkt(&bin, 77, 10, 0, false, payload_pool, 100, 1);    /* repeated index */
  add_pkt(&bin, 77, 12, 0, true, payload_pool, 102, 1);
  REQUIRE(urtp_batch_reserve(&bin, 1, 1) == 0);             /* shorter than a header */
  bin.iov[bin.niov] = (struct iovec){payload_pool, 8};
  urtp_batch_commit(&bin, 1, 8);
  CHECK_EQ(urtp_srtp_protect_batch(&out, &bin, &bout), 3);
  REQUIRE(bout.npkts == 3);
  CHECK_EQ(bout.pkts[0].len, 114 + 10);
  CHECK_EQ(bout.pkts[1].len, 115 + 10);
  CHECK_EQ(bout.pkts[2].len, 116 + 10);
  CHECK_EQ(urtp_rtp_peek_seq(bout.iov[bout.pkts[2].iov_first].iov_base), 12);
  CHECK_EQ(out.stats.packets, 3);
  CHECK_EQ(out.stats.replay, 1);
  CHECK_EQ(out.stats.other, 2);
  CHECK_EQ(out.stats.auth_fail, 0);

  /* single-packet protect reports the same causes */
  uint8_t buf[512] = {0};
  urtp_rtp_write_fixed(buf, 96, false, 12, 0, 77);
  CHECK_EQ(urtp_srtp_protect(&out, buf, 40, sizeof(buf)), -EALREADY);
  urtp_rtp_write_fixed(buf, 96, false, 13, 0, 79);
  CHECK_EQ(urtp_srtp_protect(&out, buf, 40, sizeof(buf)), -EPROTO);
  CHECK_EQ(out.stats.replay, 2);
  CHECK_EQ(out.stats.other, 3);
  urtp_srtp_destroy(&out);
  urtp_batch_free(&bin);
  urtp_batch_free(&bout);
}

/* libsrtp2 asks for SRTP_MAX_TRAILER_LEN of room but writes only the tag
 * (no MKI here): the batch path relies on that for packets within 148
 * bytes of 64 KiB. Checked with a canary for every profile, and the
 * largest packet each profile can carry is protected and recovered. */
static void test_trailer_and_limits(void)
{
  static uint8_t buf[65536 + URTP_SRTP_MAX_TRAILER], plain[65536];
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
    if (urtp_srtp_profile_available(p))
      continue;
    uint8_t key[URTP_SRTP_MAX_KEY_LEN];
    fill_key(key, sizeof(key), 900 + (uint64_t)p);
    urtp_srtp_t out, in;
    REQUIRE(make_ctx(&out, p, URTP_SRTP_OUTBOUND, key, true, 0, 0) == 0);
    REQUIRE(make_ctx(&in, p, URTP_SRTP_INBOUND, key, true, 0, 0) == 0);
    size_t tr = out.rtp_trailer;

    static const size_t lens[] = {12, 13, 100, 1400};
    for (size_t i = 0; i < 4; i++) {
      memset(buf, 0xa5, sizeof(buf));
      urtp_rtp_write_fixed(buf, 96, false, (uint16_t)i, 0, 1);
      memcpy(buf + 12, payload_pool, lens[i] - 12);
      CHECK_EQ(urtp_srtp_protect(&out, buf, lens[i], lens[i] + URTP_SRTP_MAX_TRAILER), lens[i] + tr);
      size_t untouched = 0;
      for (size_t j = lens[i] + tr; j < lens[i] + URTP_SRTP_MAX_TRAILER; j++)
        untouched += buf[j] == 0xa5;
      CHECK_EQ(untouched, URTP_SRTP_MAX_TRAILER - tr);
    }
    /* RTCP: tag and 4-byte index */
    memset(buf, 0xa5, sizeof(buf));
    memcpy(buf, "\x80\xc8\x00\x06\x00\x00\x00\x01", 8);
    CHECK_EQ(urtp_srtp_protect_rtcp(&out, buf, 28, 28 + URTP_SRTP_MAX_TRAILER), 28 + out.rtcp_trailer);
    size_t untouched = 0;
    for (size_t j = 28 + out.rtcp_trailer; j < 28 + URTP_SRTP_MAX_TRAILER; j++)
      untouched += buf[j] == 0xa5;
    CHECK_EQ(untouched, URTP_SRTP_MAX_TRAILER - out.rtcp_trailer);

    urtp_batch_t bin = {0}, bout = {0};
    add_pkt(&bin, 9, 100, 0, false, payload_pool, 65535 - tr - 14, 3);
    add_pkt(&bin, 9, 101, 0, false, payload_pool, 65535 - tr - 14 + 1, 1);
    add_pkt(&bin, 9, 102, 0, true, payload_pool, 1386, 1);
    CHECK_EQ(urtp_srtp_protect_batch(&out, &bin, &bout), 2);
    REQUIRE(bout.npkts == 2);
    CHECK_EQ(bout.pkts[0].len, 65535);
    CHECK_EQ(bout.pkts[1].len, 1400 + tr);
    CHECK_EQ(out.stats.other, 1);
    for (size_t i = 0; i < 2; i++) {
      size_t k = i ? 2 : 0;
      size_t plen = urtp_batch_copy_pkt(&bin, k, plain, sizeof(plain));
      memcpy(buf, bout.iov[bout.pkts[i].iov_first].iov_base, bout.pkts[i].len);
      CHECK_EQ(urtp_srtp_unprotect(&in, buf, bout.pkts[i].len), plen);
      CHECK_MEM(buf, plain, plen);
    }
    urtp_srtp_destroy(&out);
    urtp_srtp_destroy(&in);
    urtp_batch_free(&bin);
    urtp_batch_free(&bout);
  }
}

/* ---- rejections on receive ---- */

static void test_rejections(void)
{
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
    if (urtp_srtp_profile_available(p))
      continue;
    uint8_t key[URTP_SRTP_MAX_KEY_LEN], key2[URTP_SRTP_MAX_KEY_LEN];
    fill_key(key, sizeof(key), 300 + (uint64_t)p);
    memcpy(key2, key, sizeof(key2));
    key2[urtp_srtp_key_len(p) - 1] ^= 1;   /* wrong key: last salt bit */
    const uint32_t ssrc = 0x5eed5eed;
    urtp_srtp_t out, in, wrong;
    REQUIRE(make_ctx(&out, p, URTP_SRTP_OUTBOUND, key, false, ssrc, 0) == 0);
    REQUIRE(make_ctx(&in, p, URTP_SRTP_INBOUND, key, false, ssrc, 0) == 0);
    REQUIRE(make_ctx(&wrong, p, URTP_SRTP_INBOUND, key2, true, 0, 0) == 0);
    size_t tr = out.rtp_trailer;

    uint8_t plain[256], prot[256 + URTP_SRTP_MAX_TRAILER], buf[512];
    const size_t len = 12 + 150;
    urtp_rtp_write_fixed(plain, 96, true, 0x1234, 0xdeadbeef, ssrc);
    memcpy(plain + 12, payload_pool + 999, 150);
    memcpy(prot, plain, len);
    REQUIRE(urtp_srtp_protect(&out, prot, len, sizeof(prot)) == (int)(len + tr));
    const size_t plen = len + tr;

    /* every byte flipped, one at a time: header, payload, tag */
    for (size_t j = 0; j < plen; j++) {
      memcpy(buf, prot, plen);
      buf[j] ^= 0x01;
      int r = urtp_srtp_unprotect(&in, buf, plen);
      /* SSRC bytes: another stream, which this context does not serve */
      CHECK_EQ(r, j >= 8 && j < 12 ? -EPROTO : -EBADMSG);
      CHECK(all_zero(buf, plen));
    }
    CHECK_EQ(in.stats.auth_fail, plen - 4);
    CHECK_EQ(in.stats.other, 4);

    /* every truncation: too short for header + tag is malformed, the rest
     * fails authentication */
    for (size_t l = 0; l < plen; l++) {
      memcpy(buf, prot, plen);
      int r = urtp_srtp_unprotect(&in, buf, l);
      CHECK_EQ(r, l < 12 + tr ? -EPROTO : -EBADMSG);
      CHECK(all_zero(buf, l));
      CHECK(memcmp(buf + l, prot + l, plen - l) == 0);   /* nothing past len touched */
    }
    CHECK_EQ(in.stats.auth_fail, (plen - 4) + (plen - 12 - tr));
    CHECK_EQ(in.stats.other, 4 + 12 + tr);
    CHECK_EQ(in.stats.replay, 0);
    CHECK_EQ(in.stats.packets, 0);

    /* the wrong key rejects; nothing of the plaintext shows */
    memcpy(buf, prot, plen);
    CHECK_EQ(urtp_srtp_unprotect(&wrong, buf, plen), -EBADMSG);
    CHECK(all_zero(buf, plen));
    CHECK_EQ(wrong.stats.auth_fail, 1);
    CHECK_EQ(wrong.stats.packets + wrong.stats.other + wrong.stats.replay, 0);

    /* none of that poisoned the stream: the genuine packet passes once */
    memcpy(buf, prot, plen);
    CHECK_EQ(urtp_srtp_unprotect(&in, buf, plen), len);
    CHECK_MEM(buf, plain, len);
    memcpy(buf, prot, plen);
    CHECK_EQ(urtp_srtp_unprotect(&in, buf, plen), -EALREADY);
    CHECK(all_zero(buf, plen));
    CHECK_EQ(in.stats.packets, 1);
    CHECK_EQ(in.stats.replay, 1);

    /* SRTCP: round trip of a compound packet, then tamper, replay, truncate */
    uint8_t rtcp[200], rbuf[512];
    size_t rlen = 28 + 20;
    memcpy(rtcp, payload_pool + 5000, rlen);
    rtcp[0] = 0x80;
    rtcp[1] = 200;  /* SR */
    rtcp[2] = 0;
    rtcp[3] = 6;
    rtcp[4] = 0x5e;
    rtcp[5] = 0xed;
    rtcp[6] = 0x5e;
    rtcp[7] = 0xed;
    rtcp[28] = 0x81;
    rtcp[29] = 202; /* SDES */
    rtcp[30] = 0;
    rtcp[31] = 4;
    uint8_t rprot[512];
    memcpy(rprot, rtcp, rlen);
    int rp = urtp_srtp_protect_rtcp(&out, rprot, rlen, sizeof(rprot));
    CHECK_EQ(rp, rlen + out.rtcp_trailer);
    REQUIRE(rp > 0);
    CHECK(memcmp(rprot + 8, rtcp + 8, rlen - 8) != 0);
    memcpy(rbuf, rprot, (size_t)rp);
    rbuf[20] ^= 0x80;
    CHECK_EQ(urtp_srtp_unprotect_rtcp(&in, rbuf, (size_t)rp), -EBADMSG);
    CHECK(all_zero(rbuf, (size_t)rp));
    memcpy(rbuf, rprot, (size_t)rp);
    CHECK_EQ(urtp_srtp_unprotect_rtcp(&in, rbuf, 7), -EPROTO);
    memcpy(rbuf, rprot, (size_t)rp);
    CHECK_EQ(urtp_srtp_unprotect_rtcp(&in, rbuf, (size_t)rp), rlen);
    CHECK_MEM(rbuf, rtcp, rlen);
    memcpy(rbuf, rprot, (size_t)rp);
    CHECK_EQ(urtp_srtp_unprotect_rtcp(&in, rbuf, (size_t)rp), -EALREADY);
    CHECK_EQ(in.rtcp_stats.packets, 1);
    CHECK_EQ(in.rtcp_stats.auth_fail, 1);
    CHECK_EQ(in.rtcp_stats.replay, 1);
    CHECK_EQ(in.rtcp_stats.other, 1);
    CHECK_EQ(out.rtcp_stats.packets, 1);
    /* RTP counters untouched by RTCP */
    CHECK_EQ(in.stats.packets, 1);

    urtp_srtp_destroy(&out);
    urtp_srtp_destroy(&in);
    urtp_srtp_destroy(&wrong);
  }
}

/* Protects n packets seq0.. of 60 bytes into prot[i]. */
static void protect_run(urtp_srtp_t *out, uint32_t ssrc, uint16_t seq0, size_t n,
                        uint8_t (*prot)[256], int *plen)
{
  for (size_t i = 0; i < n; i++) {
    urtp_rtp_write_fixed(prot[i], 96, false, (uint16_t)(seq0 + i), (uint32_t)i, ssrc);
    memcpy(prot[i] + 12, payload_pool + i, 48);
    plen[i] = urtp_srtp_protect(out, prot[i], 60, 256);
  }
}

static void test_replay_window(void)
{
  enum { N = 1200 };
  static uint8_t prot[N][256];
  static int plen[N];
  uint8_t key[30], buf[256];
  fill_key(key, 30, 77);
  const uint32_t ssrc = 4242;
  urtp_srtp_t out;
  REQUIRE(make_ctx(&out, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, URTP_SRTP_OUTBOUND, key, true, 0, 0) == 0);
  protect_run(&out, ssrc, 1000, N, prot, plen);
  for (size_t i = 0; i < N; i++)
    REQUIRE(plen[i] == 70);

  static const unsigned windows[] = {0, 256, 1024};
  for (size_t w = 0; w < 3; w++) {
    unsigned win = windows[w] ? windows[w] : 128;
    urtp_srtp_t in;
    REQUIRE(make_ctx(&in, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, URTP_SRTP_INBOUND, key, true, 0,
                     windows[w]) == 0);
    /* deliver all but three held back, in order: highest is N-1 */
    const size_t edge_in = N - win, edge_out = N - 1 - win, far = 3;
    size_t ok = 0;
    for (size_t i = 0; i < N; i++) {
      if (i == edge_in || i == edge_out || i == far)
        continue;
      memcpy(buf, prot[i], 70);
      if (urtp_srtp_unprotect(&in, buf, 70) == 60)
        ok++;
    }
    CHECK_EQ(ok, N - 3);
    /* N-1-(win-1) is the oldest index the window still holds */
    memcpy(buf, prot[edge_in], 70);
    CHECK_EQ(urtp_srtp_unprotect(&in, buf, 70), 60);
    memcpy(buf, prot[edge_out], 70);
    CHECK_EQ(urtp_srtp_unprotect(&in, buf, 70), -EALREADY);
    CHECK(all_zero(buf, 70));
    memcpy(buf, prot[far], 70);
    CHECK_EQ(urtp_srtp_unprotect(&in, buf, 70), -EALREADY);
    memcpy(buf, prot[N - 1], 70);
    CHECK_EQ(urtp_srtp_unprotect(&in, buf, 70), -EALREADY);
    CHECK_EQ(in.stats.packets, N - 2);
    CHECK_EQ(in.stats.replay, 3);
    CHECK_EQ(in.stats.auth_fail + in.stats.other, 0);
    urtp_srtp_destroy(&in);
  }

  /* a burst reordered by up to 599 packets (blocks of 300 swapped in
   * pairs): the default window of 128 loses every late block, 1024 none */
  for (unsigned win = 0; win <= 1024; win += 1024) {
    urtp_srtp_t in;
    REQUIRE(make_ctx(&in, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, URTP_SRTP_INBOUND, key, true, 0, win) == 0);
    for (size_t i = 0; i < N; i++) {
      size_t k = (i / 300) % 2 ? i - 300 : i + 300;
      memcpy(buf, prot[k], 70);
      urtp_srtp_unprotect(&in, buf, 70);
    }
    CHECK_EQ(in.stats.packets, win ? N : 600);
    CHECK_EQ(in.stats.replay, win ? 0 : 600);
    urtp_srtp_destroy(&in);
  }
  urtp_srtp_destroy(&out);
}

/* ---- over a real socket: protected batches go out like plaintext ---- */

static int recv_all(urtp_sock_t *s, urtp_rx_t *rx, size_t want, urtp_srtp_t *in, uint8_t **expect,
                    size_t *elen, uint16_t seq0, size_t *bad)
{
  size_t got = 0;
  while (got < want) {
    int n = urtp_sock_recv(s, rx, 3000);
    if (n <= 0)
      break;
    for (int i = 0; i < n; i++) {
      urtp_dgram_t *d = &rx->dgrams[i];
      int l = in ? urtp_srtp_unprotect(in, d->data, d->len) : (int)d->len;
      uint16_t k = (uint16_t)(urtp_rtp_peek_seq(d->data) - seq0);
      if (l < 0 || k >= want || (size_t)l != elen[k] || memcmp(d->data, expect[k], elen[k]))
        (*bad)++;
      got++;
    }
  }
  return (int)got;
}

static void test_loopback(void)
{
  urtp_srtp_profile_t p = URTP_SRTP_AEAD_AES_128_GCM;
  if (urtp_srtp_profile_available(p))
    p = URTP_SRTP_AES_CM_128_HMAC_SHA1_80;
  uint8_t key[URTP_SRTP_MAX_KEY_LEN];
  fill_key(key, sizeof(key), 5);
  urtp_srtp_t out, in;
  REQUIRE(make_ctx(&out, p, URTP_SRTP_OUTBOUND, key, true, 0, 0) == 0);
  REQUIRE(make_ctx(&in, p, URTP_SRTP_INBOUND, key, true, 0, 1024) == 0);

  urtp_sock_t rx_s, rx_p, tx_s, tx_p;
  urtp_sock_config_t rc = {.bind_addr = "127.0.0.1", .rcvbuf = 4 << 20,
                           .rx_mode = URTP_IO_AUTO, .tx_mode = URTP_IO_AUTO};
  REQUIRE(urtp_sock_open(&rx_s, &rc) == 0);
  REQUIRE(urtp_sock_open(&rx_p, &rc) == 0);
  urtp_sock_config_t tc = {.remote_addr = "127.0.0.1", .sndbuf = 4 << 20,
                           .rx_mode = URTP_IO_AUTO, .tx_mode = URTP_IO_AUTO};
  tc.remote_port = (uint16_t)urtp_sock_local_port(&rx_s);
  REQUIRE(urtp_sock_open(&tx_s, &tc) == 0);
  tc.remote_port = (uint16_t)urtp_sock_local_port(&rx_p);
  REQUIRE(urtp_sock_open(&tx_p, &tc) == 0);
  urtp_rx_t rxb;
  REQUIRE(urtp_rx_init(&rxb, 64, 65536) == 0);

  enum { FRAMES = 3, PER = 3 + 30 + 1, TOTAL = FRAMES * PER };
  static uint8_t store[TOTAL][1500];
  uint8_t *expect[TOTAL];
  size_t elen[TOTAL];
  urtp_batch_t bin = {0}, bout = {0};
  uint16_t seq0 = 60000, seq = seq0;
  size_t bad_s = 0, bad_p = 0;
  int got_s = 0, got_p = 0;
  for (int f = 0; f < FRAMES; f++) {
    urtp_batch_clear(&bin);
    urtp_batch_clear(&bout);
    add_frame(&bin, 0x77, &seq, 3000u * (unsigned)f, 30, 333);
    for (size_t i = 0; i < bin.npkts; i++) {
      size_t k = (size_t)f * PER + i;
      elen[k] = urtp_batch_copy_pkt(&bin, i, store[k], sizeof(store[k]));
      expect[k] = store[k];
    }
    CHECK_EQ(urtp_srtp_protect_batch(&out, &bin, &bout), PER);
    uint64_t sp0 = tx_p.tx_syscalls, ss0 = tx_s.tx_syscalls;
    CHECK_EQ(urtp_sock_send(&tx_p, &bin), PER);
    CHECK_EQ(urtp_sock_send(&tx_s, &bout), PER);
    /* same shape, same system calls */
    CHECK_EQ(tx_s.tx_syscalls - ss0, tx_p.tx_syscalls - sp0);
    if (f == 0)
      printf("# %s, tx %s: %d packets in %llu system call(s), plaintext %llu\n",
             urtp_srtp_profile_name(p), urtp_io_mode_name(tx_s.tx_mode), PER,
             (unsigned long long)(tx_s.tx_syscalls - ss0),
             (unsigned long long)(tx_p.tx_syscalls - sp0));
    got_p += recv_all(&rx_p, &rxb, PER, NULL, expect + f * PER, elen + f * PER,
                      (uint16_t)(seq0 + f * PER), &bad_p);
    got_s += recv_all(&rx_s, &rxb, PER, &in, expect + f * PER, elen + f * PER,
                      (uint16_t)(seq0 + f * PER), &bad_s);
  }
  CHECK_EQ(got_p, TOTAL);
  CHECK_EQ(got_s, TOTAL);
  CHECK_EQ(bad_p, 0);
  CHECK_EQ(bad_s, 0);
  CHECK_EQ(in.stats.packets, TOTAL);
  urtp_rx_destroy(&rxb);
  urtp_sock_close(&tx_s);
  urtp_sock_close(&tx_p);
  urtp_sock_close(&rx_s);
  urtp_sock_close(&rx_p);
  urtp_srtp_destroy(&out);
  urtp_srtp_destroy(&in);
  urtp_batch_free(&bin);
  urtp_batch_free(&bout);
}

/* ---- which libsrtp2 ---- */

static void test_backend(void)
{
  const char *b = urtp_srtp_backend();
  printf("# %s (configured: %s)\n", b, URTP_SRTP_LINKED);
  CHECK(!strncmp(b, "libsrtp2 2.", 11));
  CHECK(urtp_srtp_backend() == b);
  if (!strcmp(URTP_SRTP_LINKED, "private")) {
    CHECK(strstr(b, " (OpenSSL, built in)") != NULL);
    /* the OpenSSL build always has GCM */
    CHECK_EQ(urtp_srtp_profile_available(URTP_SRTP_AEAD_AES_128_GCM), 0);
    CHECK_EQ(urtp_srtp_profile_available(URTP_SRTP_AEAD_AES_256_GCM), 0);
  } else {
    CHECK(!strcmp(URTP_SRTP_LINKED, "system"));
    CHECK(strstr(b, ", libsrtp2.so") != NULL);
  }
}

/* The system's libsrtp2.so.1, reached only through dlsym. */
typedef struct shared_srtp {
  srtp_err_status_t (*init)(void);
  srtp_err_status_t (*create)(srtp_t *, const srtp_policy_t *);
  srtp_err_status_t (*dealloc)(srtp_t);
  srtp_err_status_t (*protect)(srtp_t, void *, int *);
  srtp_err_status_t (*unprotect)(srtp_t, void *, int *);
  void (*set_cm_80)(srtp_crypto_policy_t *);
  void (*set_gcm_128)(srtp_crypto_policy_t *);
} shared_srtp_t;

static srtp_t shared_session(const shared_srtp_t *l, urtp_srtp_profile_t p, const uint8_t *key,
                             bool outbound)
{
  srtp_policy_t pol;
  memset(&pol, 0, sizeof(pol));
  void (*set)(srtp_crypto_policy_t *) =
      p == URTP_SRTP_AEAD_AES_128_GCM ? l->set_gcm_128 : l->set_cm_80;
  set(&pol.rtp);
  set(&pol.rtcp);
  uint8_t k[URTP_SRTP_MAX_KEY_LEN];
  memcpy(k, key, urtp_srtp_key_len(p));
  pol.key = k;
  pol.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound;
  srtp_t s = NULL;
  return l->create(&s, &pol) == srtp_err_status_ok ? s : NULL;
}

static void test_alongside_shared(void)
{
  void *h = dlopen("libsrtp2.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    printf("# skip: no shared libsrtp2 (%s)\n", dlerror());
    return;
  }
  shared_srtp_t l;
  *(void **)&l.init = dlsym(h, "srtp_init");
  *(void **)&l.create = dlsym(h, "srtp_create");
  *(void **)&l.dealloc = dlsym(h, "srtp_dealloc");
  *(void **)&l.protect = dlsym(h, "srtp_protect");
  *(void **)&l.unprotect = dlsym(h, "srtp_unprotect");
  /* the 80-bit default is a macro for this one */
  *(void **)&l.set_cm_80 = dlsym(h, "srtp_crypto_policy_set_rtp_default");
  *(void **)&l.set_gcm_128 = dlsym(h, "srtp_crypto_policy_set_aes_gcm_128_16_auth");
  REQUIRE(l.init && l.create && l.dealloc && l.protect && l.unprotect && l.set_cm_80 &&
          l.set_gcm_128);
  /* This binary's copy (if private) stays out of the global scope: the
   * shared library's names resolve to the shared library. */
  CHECK(dlsym(RTLD_DEFAULT, "srtp_protect") == *(void **)&l.protect);
  if (!strcmp(URTP_SRTP_LINKED, "private")) {
    Dl_info info;
    REQUIRE(dladdr(*(void **)&l.protect, &info) && info.dli_fname);
    CHECK(strstr(info.dli_fname, "libsrtp2.so") != NULL);
    /* its own crypto kernel: a first initialisation there */
    CHECK_EQ(l.init(), srtp_err_status_ok);
  } else {
    srtp_err_status_t st = l.init();   /* the same library: already set up */
    CHECK(st == srtp_err_status_ok || st == srtp_err_status_bad_param);
  }

  static const urtp_srtp_profile_t profs[] = {URTP_SRTP_AES_CM_128_HMAC_SHA1_80,
                                              URTP_SRTP_AEAD_AES_128_GCM};
  for (size_t k = 0; k < 2; k++) {
    urtp_srtp_profile_t p = profs[k];
    if (urtp_srtp_profile_available(p))
      continue;
    uint8_t key[URTP_SRTP_MAX_KEY_LEN];
    fill_key(key, sizeof(key), 7 + k);
    urtp_srtp_t out, in;
    REQUIRE(make_ctx(&out, p, URTP_SRTP_OUTBOUND, key, true, 0, 0) == 0);
    REQUIRE(make_ctx(&in, p, URTP_SRTP_INBOUND, key, true, 0, 0) == 0);
    srtp_t sout = shared_session(&l, p, key, true);
    srtp_t sin = shared_session(&l, p, key, false);
    if (!sout || !sin) {
      /* Debian's build has GCM; another system build might not */
      printf("# skip %s: the shared libsrtp2 refuses it\n", urtp_srtp_profile_name(p));
      if (sout)
        l.dealloc(sout);
      if (sin)
        l.dealloc(sin);
      urtp_srtp_destroy(&out);
      urtp_srtp_destroy(&in);
      continue;
    }
    for (uint16_t seq = 65530; seq != 6; seq++) {   /* across a rollover */
      uint8_t plain[1400], a[1400 + URTP_SRTP_MAX_TRAILER], b[1400 + URTP_SRTP_MAX_TRAILER];
      urtp_rtp_write_fixed(plain, 96, seq == 5, seq, 90000u * seq, 0x51a7e);
      memcpy(plain + 12, payload_pool + 3 * (size_t)seq, sizeof(plain) - 12);
      memcpy(a, plain, sizeof(plain));
      memcpy(b, plain, sizeof(plain));
      int na = urtp_srtp_protect(&out, a, sizeof(plain), sizeof(a));
      int nb = (int)sizeof(plain);
      CHECK_EQ(l.protect(sout, b, &nb), srtp_err_status_ok);
      CHECK_EQ(na, nb);
      CHECK_EQ(na, (int)(sizeof(plain) + out.rtp_trailer));
      CHECK_MEM(a, b, (size_t)nb);
      /* each side opens what the other sealed */
      int n = nb;
      CHECK_EQ(l.unprotect(sin, a, &n), srtp_err_status_ok);
      CHECK_EQ(n, (int)sizeof(plain));
      CHECK_MEM(a, plain, sizeof(plain));
      CHECK_EQ(urtp_srtp_unprotect(&in, b, (size_t)nb), (int)sizeof(plain));
      CHECK_MEM(b, plain, sizeof(plain));
    }
    CHECK_EQ(out.stats.packets, 12);
    CHECK_EQ(in.stats.packets, 12);
    l.dealloc(sout);
    l.dealloc(sin);
    urtp_srtp_destroy(&out);
    urtp_srtp_destroy(&in);
  }
  /* still this binary's libsrtp2, as configured */
  if (!strcmp(URTP_SRTP_LINKED, "private"))
    CHECK(strstr(urtp_srtp_backend(), "built in") != NULL);
  /* libsrtp2 is never shut down (see srtp.h), so the library stays loaded */
}

/* ---- initialisation against other users of the same libsrtp2 ---- */

/* Each round runs in a fresh child process, where libsrtp2 is not set up
 * yet: RACE_FOREIGN threads call srtp_init() directly on the libsrtp2 this
 * library uses (as GStreamer's srtp plugin, or another copy of lib/, does)
 * while RACE_OURS threads ask this library for every profile and a
 * context. The start of our threads relative to the others sweeps across
 * the time one srtp_init() takes, so some rounds land in the middle of it.
 * Every round must end with our threads seeing exactly the profiles that
 * libsrtp2, once initialised, can run. */
#define RACE_ROUNDS 48
#define RACE_FOREIGN 2
#define RACE_OURS 3

typedef struct race_thread {
  pthread_barrier_t *go;
  const struct timespec *t0;
  long delay_ns;
  bool foreign;
  srtp_err_status_t foreign_st;
  int avail[URTP_SRTP_PROFILE_COUNT];
  int ctx_rc;
} race_thread_t;

static void race_wait_until(const struct timespec *t0, long delay_ns)
{
  struct timespec now;
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - t0->tv_sec) * 1000000000L + (now.tv_nsec - t0->tv_nsec) < delay_ns);
}

static void *race_main(void *arg)
{
  race_thread_t *t = arg;
  pthread_barrier_wait(t->go);
  race_wait_until(t->t0, t->delay_ns);
  if (t->foreign) {
    t->foreign_st = srtp_init();
    return NULL;
  }
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++)
    t->avail[p] = urtp_srtp_profile_available((urtp_srtp_profile_t)p);
  uint8_t key[URTP_SRTP_MAX_KEY_LEN];
  fill_key(key, sizeof(key), 99);
  urtp_srtp_t ctx;
  t->ctx_rc = make_ctx(&ctx, URTP_SRTP_AES_CM_128_HMAC_SHA1_80, URTP_SRTP_OUTBOUND, key, true, 0, 0);
  urtp_srtp_destroy(&ctx);
  return NULL;
}

/* What libsrtp2 itself says of p, once set up: 0 or -ENOTSUP. */
static int race_truth(urtp_srtp_profile_t p)
{
  static void (*const set[URTP_SRTP_PROFILE_COUNT])(srtp_crypto_policy_t *) = {
    [URTP_SRTP_AES_CM_128_HMAC_SHA1_80] = srtp_crypto_policy_set_rtp_default,
    [URTP_SRTP_AES_CM_128_HMAC_SHA1_32] = srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32,
    [URTP_SRTP_AES_256_CM_HMAC_SHA1_80] = srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80,
    [URTP_SRTP_AES_256_CM_HMAC_SHA1_32] = srtp_crypto_policy_set_aes_cm_256_hmac_sha1_32,
    [URTP_SRTP_AEAD_AES_128_GCM] = srtp_crypto_policy_set_aes_gcm_128_16_auth,
    [URTP_SRTP_AEAD_AES_256_GCM] = srtp_crypto_policy_set_aes_gcm_256_16_auth,
  };
  srtp_policy_t pol;
  memset(&pol, 0, sizeof(pol));
  set[p](&pol.rtp);
  set[p](&pol.rtcp);
  unsigned char key[URTP_SRTP_MAX_KEY_LEN] = {0};
  pol.key = key;
  pol.ssrc.type = ssrc_any_outbound;
  srtp_t s = NULL;
  if (srtp_create(&s, &pol) != srtp_err_status_ok)
    return -ENOTSUP;
  srtp_dealloc(s);
  return 0;
}

/* One round in this (child) process; returns the number of mismatches and
 * prints them. */
static int race_round(int round, long foreign_delay_ns, long our_delay_ns)
{
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, RACE_FOREIGN + RACE_OURS + 1);
  struct timespec t0;
  race_thread_t t[RACE_FOREIGN + RACE_OURS];
  pthread_t th[RACE_FOREIGN + RACE_OURS];
  memset(t, 0, sizeof(t));
  for (int i = 0; i < RACE_FOREIGN + RACE_OURS; i++) {
    t[i].go = &go;
    t[i].t0 = &t0;
    t[i].foreign = i < RACE_FOREIGN;
    t[i].delay_ns = t[i].foreign ? foreign_delay_ns : our_delay_ns;
    if (pthread_create(&th[i], NULL, race_main, &t[i]) != 0) {
      printf("#   round %d: pthread_create failed\n", round);
      _exit(100);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_barrier_wait(&go);
  for (int i = 0; i < RACE_FOREIGN + RACE_OURS; i++)
    pthread_join(th[i], NULL);
  pthread_barrier_destroy(&go);

  /* whoever won, libsrtp2 is set up now; the truth comes from it */
  srtp_init();
  int bad = 0;
  for (int i = RACE_FOREIGN; i < RACE_FOREIGN + RACE_OURS; i++) {
    for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
      int want = race_truth((urtp_srtp_profile_t)p);
      if (t[i].avail[p] != want) {
        printf("#   round %d (ours at %+ld us): thread %d: %s %d, libsrtp2 says %d\n", round,
               (our_delay_ns - foreign_delay_ns) / 1000, i,
               urtp_srtp_profile_name((urtp_srtp_profile_t)p), t[i].avail[p], want);
        bad++;
      }
      /* and afterwards too: nothing wrong was remembered */
      int later = i == RACE_FOREIGN ? urtp_srtp_profile_available((urtp_srtp_profile_t)p) : want;
      if (later != want) {
        printf("#   round %d: %s still %d afterwards\n", round,
               urtp_srtp_profile_name((urtp_srtp_profile_t)p), later);
        bad++;
      }
    }
    if (t[i].ctx_rc != 0) {
      printf("#   round %d: thread %d: context: %d\n", round, i, t[i].ctx_rc);
      bad++;
    }
  }
  return bad;
}

/* Runs fn(arg) in a fresh child process; its exit status, or -1. */
static int race_fork(int (*fn)(int, long, long), int round, long a, long b)
{
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int bad = fn(round, a, b);
    fflush(stdout);
    _exit(bad > 99 ? 99 : bad);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
    return -1;
  return WEXITSTATUS(st);
}

/* How long one srtp_init() takes here, measured in a fresh process (for
 * the sweep) and handed back through shared memory. */
static long *race_init_ns;

static int race_time_init(int round, long a, long b)
{
  (void)round;
  (void)a;
  (void)b;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  srtp_init();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  *race_init_ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
  return 0;
}

static void test_init_race(void)
{
  race_init_ns = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(race_init_ns != MAP_FAILED);
  *race_init_ns = 0;
  REQUIRE(race_fork(race_time_init, 0, 0, 0) == 0);
  long span_ns = *race_init_ns > 1000 ? *race_init_ns : 1000;
  munmap(race_init_ns, sizeof(long));
  printf("# one srtp_init() takes about %ld us here (%s)\n", span_ns / 1000, URTP_SRTP_LINKED);
  int failed = 0;
  for (int r = 0; r < RACE_ROUNDS; r++) {
    /* ours from a quarter of an srtp_init() before the others to a whole
     * one after them */
    long off = -span_ns / 4 + (long)r * (span_ns + span_ns / 4) / (RACE_ROUNDS - 1);
    int rc = race_fork(race_round, r, off < 0 ? -off : 0, off > 0 ? off : 0);
    if (rc != 0) {
      printf("#   round %d: %d mismatch(es)%s\n", r, rc, rc < 0 ? " (child died)" : "");
      failed++;
    }
  }
  printf("# %d of %d rounds left this library with the wrong profiles\n", failed, RACE_ROUNDS);
  CHECK_EQ(failed, 0);
}

int main(void)
{
  pool_init();
  /* first: it needs a process where libsrtp2 is not set up yet */
  TAP_RUN(test_init_race);
  TAP_RUN(test_backend);
  TAP_RUN(test_alongside_shared);
  TAP_RUN(test_profiles);
  TAP_RUN(test_nicks);
  TAP_RUN(test_key_hex);
  TAP_RUN(test_init_errors);
  TAP_RUN(test_known_answers);
#ifdef TEST_HAVE_LIBCRYPTO
  TAP_RUN(test_openssl_reference);
#endif
  TAP_RUN(test_batch_roundtrip);
  TAP_RUN(test_protect_refusals);
  TAP_RUN(test_trailer_and_limits);
  TAP_RUN(test_rejections);
  TAP_RUN(test_replay_window);
  TAP_RUN(test_loopback);
  return tap_done();
}
