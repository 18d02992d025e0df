/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_zrtp_bzrtp - interoperability of lib/zrtp with Belledonne's bzrtp
 * (Debian's libbzrtp-dev), each on its own UDP loopback socket.
 *
 * bzrtp is GPL: it is linked into this test program only, never into lib/
 * or the plugin. It is driven here through its public API: a context whose
 * sendData callback writes to a socket, processMessage for what arrives,
 * iterate for its timers.
 *
 * Checked: a DH3k exchange completes on both sides, the SAS strings are equal
 * (bzrtp writes B256 as "word:word", we as "word word"), and the SRTP
 * master keys and salts bzrtp hands its client are ours, crosswise: what
 * bzrtp sends with is what we receive with, and the other way round. Both
 * roles are covered: as passive responder, and as initiator.
 */
#include "tap.h"
#include "urtp/zrtp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bzrtp/bzrtp.h>

static uint64_t mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

typedef struct side {
  int fd;
  struct sockaddr_in to;
} side_t;

/* what bzrtp told its client */
typedef struct bz {
  bzrtpContext_t *ctx;
  uint32_t ssrc;
  side_t net;
  bool have_self, have_peer, started;
  uint8_t self_key[32], self_salt[14], peer_key[32], peer_salt[14];
  unsigned self_key_len, self_salt_len, peer_key_len, peer_salt_len;
  uint8_t cipher, auth, ka, sas_algo;
  char sas[64];
} bz_t;

static int bz_send(void *cd, const uint8_t *pkt, uint16_t len)
{
  bz_t *b = cd;
  return sendto(b->net.fd, pkt, len, 0, (const struct sockaddr *)&b->net.to, sizeof b->net.to) ==
                 (ssize_t)len
             ? 0
             : -1;
}

static int bz_secrets(void *cd, const bzrtpSrtpSecrets_t *s, uint8_t part)
{
  bz_t *b = cd;
  if ((part & ZRTP_SRTP_SECRETS_FOR_SENDER) && s->selfSrtpKeyLength <= 32 &&
      s->selfSrtpSaltLength <= 14) {
    memcpy(b->self_key, s->selfSrtpKey, s->selfSrtpKeyLength);
    memcpy(b->self_salt, s->selfSrtpSalt, s->selfSrtpSaltLength);
    b->self_key_len = s->selfSrtpKeyLength;
    b->self_salt_len = s->selfSrtpSaltLength;
    b->have_self = true;
  }
  if ((part & ZRTP_SRTP_SECRETS_FOR_RECEIVER) && s->peerSrtpKeyLength <= 32 &&
      s->peerSrtpSaltLength <= 14) {
    memcpy(b->peer_key, s->peerSrtpKey, s->peerSrtpKeyLength);
    memcpy(b->peer_salt, s->peerSrtpSalt, s->peerSrtpSaltLength);
    b->peer_key_len = s->peerSrtpKeyLength;
    b->peer_salt_len = s->peerSrtpSaltLength;
    b->have_peer = true;
  }
  b->cipher = s->cipherAlgo;
  b->auth = s->authTagAlgo;
  b->ka = s->keyAgreementAlgo;
  return 0;
}

static int bz_start(void *cd, const bzrtpSrtpSecrets_t *s, int32_t verified)
{
  bz_t *b = cd;
  (void)verified;
  if (s->sas)
    snprintf(b->sas, sizeof b->sas, "%s", s->sas);
  b->sas_algo = s->sasAlgo;
  b->started = true;
  return 0;
}

static int bz_status(void *cd, const uint8_t level, const uint8_t id, const char *msg)
{
  (void)cd;
  printf("# bzrtp message level %u id %u %s\n", level, id, msg ? msg : "");
  return 0;
}

static void our_send(void *user, const uint8_t *pkt, size_t len)
{
  side_t *s = user;
  (void)sendto(s->fd, pkt, len, 0, (const struct sockaddr *)&s->to, sizeof s->to);
}

static int udp_socket(uint16_t *port)
{
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
      getsockname(fd, (struct sockaddr *)&a, &al)) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

static struct sockaddr_in loop_addr(uint16_t port)
{
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  return a;
}

static bool bz_has(bzrtpContext_t *ctx, uint8_t type, uint8_t algo)
{
  uint8_t t[7];
  uint8_t n = bzrtp_getSupportedCryptoTypes(ctx, type, t);
  for (uint8_t i = 0; i < n; i++)
    if (t[i] == algo)
      return true;
  return false;
}

static bool g_skip_dh3k;

typedef struct run_opts {
  urtp_zrtp_role_t role;
  uint8_t cipher;        /* ours, first choice */
  uint8_t auth;
  uint8_t sas;
  uint8_t bz_sas;        /* ZRTP_SAS_B32 / B256: bzrtp's only SAS type */
  uint8_t bz_cipher;     /* 0: bzrtp's defaults */
} run_opts_t;

typedef struct run_result {
  bool ours_secure, bz_secure, initiator;
  bool sas_equal, keys_equal, roles_ok;
  char our_sas[40], bz_sas[64];
  char cipher[5], auth[5], ka[5];
} run_result_t;

static void run(const run_opts_t *o, run_result_t *res)
{
  memset(res, 0, sizeof *res);
  uint16_t pa, pb;
  side_t ours;
  bz_t b;
  memset(&b, 0, sizeof b);
  ours.fd = udp_socket(&pa);
  b.net.fd = udp_socket(&pb);
  if (ours.fd < 0 || b.net.fd < 0) {
    printf("# sockets failed\n");
    return;
  }
  ours.to = loop_addr(pb);
  b.net.to = loop_addr(pa);
  b.ssrc = 0xB2B2B2B2u;

  b.ctx = bzrtp_createBzrtpContext();
  bzrtpCallbacks_t cbs;
  memset(&cbs, 0, sizeof cbs);
  cbs.bzrtp_statusMessage = bz_status;
  cbs.bzrtp_messageLevel = BZRTP_MESSAGE_ERROR;
  cbs.bzrtp_sendData = bz_send;
  cbs.bzrtp_srtpSecretsAvailable = bz_secrets;
  cbs.bzrtp_startSrtpSession = bz_start;
  bzrtp_setCallbacks(b.ctx, &cbs);
  if (!bz_has(b.ctx, ZRTP_KEYAGREEMENT_TYPE, ZRTP_KEYAGREEMENT_DH3k)) {
    g_skip_dh3k = true;
    bzrtp_destroyBzrtpContext(b.ctx, 0);
    close(ours.fd);
    close(b.net.fd);
    return;
  }
  /* before the channel exists: its Hello is built from these */
  uint8_t ka[7] = {ZRTP_KEYAGREEMENT_DH3k};
  bzrtp_setSupportedCryptoTypes(b.ctx, ZRTP_KEYAGREEMENT_TYPE, ka, 1);
  uint8_t sas[7] = {o->bz_sas};
  bzrtp_setSupportedCryptoTypes(b.ctx, ZRTP_SAS_TYPE, sas, 1);
  if (o->bz_cipher) {
    uint8_t ci[7] = {o->bz_cipher};
    bzrtp_setSupportedCryptoTypes(b.ctx, ZRTP_CIPHERBLOCK_TYPE, ci, 1);
  }
  if (bzrtp_initBzrtpContext(b.ctx, b.ssrc) != 0 || bzrtp_setClientData(b.ctx, b.ssrc, &b) != 0) {
    printf("# bzrtp init failed\n");
    return;
  }

  urtp_zrtp_config_t cfg = {.role = o->role, .ssrc = 0x0A0A0A0Au, .send = our_send, .user = &ours};
  cfg.key_agreements[0] = URTP_ZRTP_KA_DH3K;
  cfg.ciphers[0] = o->cipher;
  cfg.auth_tags[0] = o->auth;
  cfg.sas_types[0] = o->sas;
  urtp_zrtp_t *z = NULL;
  if (urtp_zrtp_new(&cfg, &z) != 0) {
    printf("# urtp_zrtp_new failed\n");
    return;
  }

  uint64_t t0 = mono_ms();
  bzrtp_startChannelEngine(b.ctx, b.ssrc);
  urtp_zrtp_start(z, t0);
  for (;;) {
    uint64_t now = mono_ms();
    bool ours_done = urtp_zrtp_state(z) == URTP_ZRTP_SECURE || urtp_zrtp_state(z) == URTP_ZRTP_FAILED;
    int bst = bzrtp_getChannelStatus(b.ctx, b.ssrc);
    bool bz_done = bst == BZRTP_CHANNEL_SECURE || bst == BZRTP_CHANNEL_ERROR;
    if ((ours_done && bz_done) || now - t0 > 20000)
      break;
    struct pollfd pfd[2] = {{.fd = ours.fd, .events = POLLIN}, {.fd = b.net.fd, .events = POLLIN}};
    uint64_t next = urtp_zrtp_next_timeout(z);
    int wait = 10;  /* bzrtp wants iterate() called regularly */
    if (next != UINT64_MAX && next <= now)
      wait = 0;
    else if (next != UINT64_MAX && next - now < 10)
      wait = (int)(next - now);
    poll(pfd, 2, wait);
    uint8_t buf[3000];
    ssize_t r;
    while ((r = recv(ours.fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
      if (urtp_zrtp_is_zrtp(buf, (size_t)r))
        urtp_zrtp_recv(z, buf, (size_t)r, mono_ms());
    while ((r = recv(b.net.fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
      bzrtp_processMessage(b.ctx, b.ssrc, buf, (uint16_t)r);
    now = mono_ms();
    urtp_zrtp_tick(z, now);
    bzrtp_iterate(b.ctx, b.ssrc, now);
  }

  urtp_zrtp_info_t info;
  urtp_zrtp_get_info(z, &info);
  res->ours_secure = info.state == URTP_ZRTP_SECURE;
  res->bz_secure = bzrtp_getChannelStatus(b.ctx, b.ssrc) == BZRTP_CHANNEL_SECURE && b.started;
  res->initiator = info.initiator;
  snprintf(res->our_sas, sizeof res->our_sas, "%s", info.sas);
  snprintf(res->bz_sas, sizeof res->bz_sas, "%s", b.sas);
  memcpy(res->cipher, info.cipher, 5);
  memcpy(res->auth, info.auth_tag, 5);
  memcpy(res->ka, info.key_agreement, 5);
  if (!res->ours_secure || !res->bz_secure)
    printf("# ours %s (error %#x), bzrtp status %#x\n", urtp_zrtp_state_name(info.state), info.error,
           bzrtp_getChannelStatus(b.ctx, b.ssrc));
  /* bzrtp renders B256 with a colon between the words */
  char bzs[64];
  snprintf(bzs, sizeof bzs, "%s", b.sas);
  for (char *p = bzs; *p; p++)
    if (*p == ':')
      *p = ' ';
  res->sas_equal = info.sas[0] && strcmp(info.sas, bzs) == 0;

  urtp_zrtp_keys_t k;
  if (urtp_zrtp_get_keys(z, &k) == 0 && b.have_self && b.have_peer) {
    size_t kl = k.key_len - 14;
    res->keys_equal = b.self_key_len == kl && b.peer_key_len == kl && b.self_salt_len == 14 &&
                      b.peer_salt_len == 14 &&
                      memcmp(b.self_key, k.remote, kl) == 0 &&        /* bzrtp sends, we receive */
                      memcmp(b.self_salt, k.remote + kl, 14) == 0 &&
                      memcmp(b.peer_key, k.local, kl) == 0 &&         /* we send, bzrtp receives */
                      memcmp(b.peer_salt, k.local + kl, 14) == 0;
    /* the algorithms both sides report */
    bool aes3 = strcmp(info.cipher, "AES3") == 0, hs80 = strcmp(info.auth_tag, "HS80") == 0;
    res->roles_ok = b.cipher == (aes3 ? ZRTP_CIPHER_AES3 : ZRTP_CIPHER_AES1) &&
                    b.auth == (hs80 ? ZRTP_AUTHTAG_HS80 : ZRTP_AUTHTAG_HS32) &&
                    b.ka == ZRTP_KEYAGREEMENT_DH3k;
  }
  urtp_zrtp_free(z);
  bzrtp_destroyBzrtpContext(b.ctx, b.ssrc);
  close(ours.fd);
  close(b.net.fd);
}

static void check_result(const run_result_t *r)
{
  CHECK(r->ours_secure);
  CHECK(r->bz_secure);
  CHECK(r->sas_equal);
  CHECK(r->keys_equal);
  CHECK(r->roles_ok);
  CHECK(strcmp(r->ka, "DH3k") == 0);
  printf("# %s: SAS ours \"%s\" bzrtp \"%s\", %s %s %s\n", r->initiator ? "we initiated" : "bzrtp initiated",
         r->our_sas, r->bz_sas, r->ka, r->cipher, r->auth);
}

/* bzrtp always commits; a passive session makes it the initiator. */
static void test_bzrtp_initiates(void)
{
  run_opts_t o = {.role = URTP_ZRTP_ROLE_RESPONDER, .cipher = URTP_ZRTP_CIPHER_AES1,
                  .auth = URTP_ZRTP_AUTH_HS80, .sas = URTP_ZRTP_SAS_B32, .bz_sas = ZRTP_SAS_B32};
  run_result_t r;
  run(&o, &r);
  if (g_skip_dh3k)
    return;
  check_result(&r);
  CHECK(!r.initiator);
  CHECK_EQ(strlen(r.our_sas), 4);
}

/* Both commit; commit contention (lower hvi yields) decides. Repeat until
 * we have been the initiator once: each try is a fair coin. */
static void test_we_initiate(void)
{
  bool seen = false;
  for (int i = 0; i < 16 && !seen && !g_skip_dh3k; i++) {
    run_opts_t o = {.role = URTP_ZRTP_ROLE_AUTO, .cipher = URTP_ZRTP_CIPHER_AES3,
                    .auth = URTP_ZRTP_AUTH_HS32, .sas = URTP_ZRTP_SAS_B256, .bz_sas = ZRTP_SAS_B256};
    run_result_t r;
    run(&o, &r);
    check_result(&r);
    CHECK(strchr(r.our_sas, ' ') != NULL);
    if (r.initiator)
      CHECK(strcmp(r.cipher, "AES3") == 0 && strcmp(r.auth, "HS32") == 0);
    seen = r.initiator;
  }
  if (!g_skip_dh3k)
    CHECK(seen);
}

/* bzrtp offering AES1 only: our choice as initiator falls back to it even
 * though we prefer AES3; our HS80 preference is taken. */
static void test_cipher_fallback(void)
{
  bool seen = false;
  for (int i = 0; i < 16 && !seen; i++) {
    run_opts_t o = {.role = URTP_ZRTP_ROLE_AUTO, .cipher = URTP_ZRTP_CIPHER_AES3,
                    .auth = URTP_ZRTP_AUTH_HS80, .sas = URTP_ZRTP_SAS_B32, .bz_sas = ZRTP_SAS_B32,
                    .bz_cipher = ZRTP_CIPHER_AES1};
    run_result_t r;
    run(&o, &r);
    check_result(&r);
    CHECK(strcmp(r.cipher, "AES1") == 0);
    if (r.initiator)
      CHECK(strcmp(r.auth, "HS80") == 0);
    seen = r.initiator;
  }
  CHECK(seen);
}

int main(void)
{
  bzrtpContext_t *probe = bzrtp_createBzrtpContext();
  bool dh3k = probe && bz_has(probe, ZRTP_KEYAGREEMENT_TYPE, ZRTP_KEYAGREEMENT_DH3k);
  bzrtp_destroyBzrtpContext(probe, 0);
  if (!dh3k) {
    printf("1..0 # SKIP this bzrtp offers no DH3k\n");
    return 0;
  }
  TAP_RUN(test_bzrtp_initiates);
  TAP_RUN(test_we_initiate);
  TAP_RUN(test_cipher_fallback);
  return tap_done();
}
