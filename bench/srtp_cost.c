/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srtp_cost.c - what SRTP costs per packet in libsrtp2 alone, with nothing
 * else around it: protect and unprotect, in microseconds of CPU per packet,
 * for AEAD_AES_128_GCM and AES_CM_128_HMAC_SHA1_80 (all six profiles with
 * --all) at 1400-byte RTP packets.
 *
 *   srtp-cost [--size BYTES] [--seconds S] [--runs N] [--all | --profile NAME]
 *
 * Built twice by bench/meson.build: `srtp-cost` on the libsrtp2 that lib/
 * links (the private OpenSSL build when scripts/build-libsrtp2.sh made one),
 * which also measures lib/'s own calls (urtp_srtp_protect_batch with its one
 * copy, urtp_srtp_unprotect) on the same packets; and `srtp-cost-system` on
 * the system's shared libsrtp2, the one GStreamer's srtpenc/srtpdec use.
 *
 * Method: one RTP packet in a cache-resident buffer is protected in place
 * again and again with a rising sequence number (the header stays in clear;
 * encrypting ciphertext costs the same as plaintext). Unprotect is timed as
 * protect-then-unprotect pairs, which leave the packet as it was, minus the
 * protect-only time (the best pair run minus the best protect run). Times
 * are CPU time of this thread, the best of --runs runs, so that other load on the machine inflates them as little as
 * possible. Each unprotect is checked to succeed and to give back the
 * original bytes, so the figures measure correct work.
 *
 * Output, one line each, for bench/run.py:
 *   BACKEND <lib> <text>
 *   COST lib=<lib> what=<libsrtp2|urtp> profile=<name> size=<bytes>
 *        protect_us=<us> unprotect_us=<us> runs=<n>
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <dlfcn.h>
#include <srtp2/cipher.h>
#include <srtp2/srtp.h>

#ifdef SRTP_COST_URTP
#include "urtp/batch.h"
#include "urtp/srtp.h"
#define LIB_NAME "linked"
#else
#define LIB_NAME "system"
#endif

#define MAX_PKT 65536
#define TRAILER 160

static double seconds = 0.2;
static int runs = 5;
static size_t pkt_size = 1400;

static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int code)
{
  fprintf(stderr, "srtp-cost: %s failed (%d)\n", what, code);
  exit(1);
}

/* ---- which libsrtp2 (the same reading as lib/srtp.c's urtp_srtp_backend) ---- */

extern const srtp_cipher_type_t srtp_aes_icm_128 __attribute__((weak));

static void print_backend(void)
{
  const char *d = &srtp_aes_icm_128 ? srtp_aes_icm_128.description : NULL;
  const char *using = d ? strstr(d, " using ") : NULL;
  const char *crypto = !d ? "crypto unknown" : !using ? "own AES" : using + 7;
  if (!strcasecmp(crypto, "openssl"))
    crypto = "OpenSSL";
  else if (!strcasecmp(crypto, "nss"))
    crypto = "NSS";
  const char *where = "built in";
  Dl_info info;
  if (dladdr((void *)&srtp_protect, &info) && info.dli_fname && strstr(info.dli_fname, "libsrtp2.so")) {
    const char *slash = strrchr(info.dli_fname, '/');
    where = slash ? slash + 1 : info.dli_fname;
  }
  printf("BACKEND %s %s (%s, %s)\n", LIB_NAME, srtp_get_version_string(), crypto, where);
}

/* ---- profiles ---- */

typedef struct prof {
  const char *name;
  void (*set)(srtp_crypto_policy_t *);
  size_t key_len;
#ifdef SRTP_COST_URTP
  urtp_srtp_profile_t urtp;
#endif
} prof_t;

#ifdef SRTP_COST_URTP
#define URTP_P(x) , x
#else
#define URTP_P(x)
#endif

static const prof_t profs[] = {
  {"AEAD_AES_128_GCM", srtp_crypto_policy_set_aes_gcm_128_16_auth, 28 URTP_P(URTP_SRTP_AEAD_AES_128_GCM)},
  {"AES_CM_128_HMAC_SHA1_80", srtp_crypto_policy_set_rtp_default, 30
   URTP_P(URTP_SRTP_AES_CM_128_HMAC_SHA1_80)},
  {"AES_CM_128_HMAC_SHA1_32", srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32, 30
   URTP_P(URTP_SRTP_AES_CM_128_HMAC_SHA1_32)},
  {"AES_256_CM_HMAC_SHA1_80", srtp_crypto_policy_set_aes_cm_256_hmac_sha1_80, 46
   URTP_P(URTP_SRTP_AES_256_CM_HMAC_SHA1_80)},
  {"AEAD_AES_256_GCM", srtp_crypto_policy_set_aes_gcm_256_16_auth, 44 URTP_P(URTP_SRTP_AEAD_AES_256_GCM)},
};

static uint8_t key[64];
static uint8_t plain[MAX_PKT];
static uint8_t work[MAX_PKT + TRAILER] __attribute__((aligned(64)));

static void write_header(uint8_t *p, uint16_t seq)
{
  p[0] = 0x80;
  p[1] = 96;
  p[2] = (uint8_t)(seq >> 8);
  p[3] = (uint8_t)seq;
  uint32_t ts = 3000u * (seq / 64u), ssrc = 0x5eed1234u;
  for (int i = 0; i < 4; i++) {
    p[4 + i] = (uint8_t)(ts >> (24 - 8 * i));
    p[8 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
  }
}

static srtp_t session(const prof_t *pr, bool outbound)
{
  srtp_policy_t pol;
  memset(&pol, 0, sizeof(pol));
  pr->set(&pol.rtp);
  pr->set(&pol.rtcp);
  pol.key = key;
  pol.ssrc.type = outbound ? ssrc_any_outbound : ssrc_any_inbound;
  pol.window_size = 1024;
  srtp_t s = NULL;
  srtp_err_status_t st = srtp_create(&s, &pol);
  if (st != srtp_err_status_ok)
    return NULL;
  return s;
}

/* Runs fn(arg, n) for batches of n packets until `seconds` of CPU time have
 * passed; returns CPU microseconds per packet. */
typedef void (*loop_fn)(void *arg, unsigned n);

static double time_loop(loop_fn fn, void *arg)
{
  const unsigned n = 256;
  double t0 = cpu_now(), t;
  uint64_t pkts = 0;
  do {
    fn(arg, n);
    pkts += n;
    t = cpu_now() - t0;
  } while (t < seconds);
  return t * 1e6 / (double)pkts;
}

/* ---- libsrtp2 alone ---- */

/* Protect-only steps go through their own sender: the receiver must see a
 * sequence without jumps (a jump of 2^15 or more would be taken for a
 * rollover and fail authentication). */
typedef struct lib_arg {
  srtp_t tx, tx2, rx;
  uint16_t seq, seq2;
} lib_arg_t;

static void lib_protect(void *a, unsigned n)
{
  lib_arg_t *x = a;
  for (unsigned i = 0; i < n; i++) {
    write_header(work, x->seq++);
    int len = (int)pkt_size;
    srtp_err_status_t st = srtp_protect(x->tx, work, &len);
    if (st)
      die("srtp_protect", st);
  }
}

static void lib_pair(void *a, unsigned n)
{
  lib_arg_t *x = a;
  for (unsigned i = 0; i < n; i++) {
    write_header(work, x->seq2++);
    int len = (int)pkt_size;
    srtp_err_status_t st = srtp_protect(x->tx2, work, &len);
    if (st)
      die("srtp_protect", st);
    st = srtp_unprotect(x->rx, work, &len);
    if (st || len != (int)pkt_size)
      die("srtp_unprotect", st);
  }
}

static void measure_lib(const prof_t *pr, double *prot, double *unprot)
{
  lib_arg_t x = {session(pr, true), session(pr, true), session(pr, false), 1, 1};
  if (!x.tx || !x.tx2 || !x.rx) {
    *prot = *unprot = -1;
    if (x.tx)
      srtp_dealloc(x.tx);
    if (x.tx2)
      srtp_dealloc(x.tx2);
    if (x.rx)
      srtp_dealloc(x.rx);
    return;
  }
  memcpy(work, plain, pkt_size);
  /* correctness once: protect then unprotect gives the packet back */
  lib_pair(&x, 1);
  write_header(plain, (uint16_t)(x.seq2 - 1));
  if (memcmp(work, plain, pkt_size))
    die("round trip", 0);
  write_header(plain, 0);
  double bp = 1e9, bpu = 1e9;
  for (int r = 0; r < runs; r++) {
    double p = time_loop(lib_protect, &x);
    /* lib_protect leaves ciphertext in work: back to plaintext, then pairs */
    memcpy(work, plain, pkt_size);
    double pu = time_loop(lib_pair, &x);
    bp = p < bp ? p : bp;
    bpu = pu < bpu ? pu : bpu;
  }
  *prot = bp;
  *unprot = bpu - bp;
  srtp_dealloc(x.tx);
  srtp_dealloc(x.tx2);
  srtp_dealloc(x.rx);
}

#ifdef SRTP_COST_URTP
/* ---- lib/'s calls: the batch protect path (one copy of each packet from
 * its iovecs into the output batch) and in-place unprotect ---- */

#define BATCH 64

typedef struct urtp_arg {
  urtp_srtp_t tx, tx2, rx;     /* as in lib_arg_t */
  urtp_batch_t in, out;
  uint8_t hdr[BATCH][12];
  uint16_t seq, seq2;
} urtp_arg_t;

/* A batch as the sink builds it: header in the arena, payload by reference. */
static void fill_batch(urtp_arg_t *x, uint16_t *seq)
{
  urtp_batch_clear(&x->in);
  if (urtp_batch_reserve(&x->in, BATCH, 2 * BATCH))
    die("urtp_batch_reserve", -ENOMEM);
  for (unsigned i = 0; i < BATCH; i++) {
    write_header(x->hdr[i], (*seq)++);
    struct iovec *v = x->in.iov + x->in.niov;
    v[0] = (struct iovec){x->hdr[i], 12};
    v[1] = (struct iovec){plain + 12, pkt_size - 12};
    urtp_batch_commit(&x->in, 2, (uint16_t)pkt_size);
  }
}

static void urtp_protect_loop(void *a, unsigned n)
{
  urtp_arg_t *x = a;
  for (unsigned i = 0; i < n; i += BATCH) {
    fill_batch(x, &x->seq);
    urtp_batch_clear(&x->out);
    int r = urtp_srtp_protect_batch(&x->tx, &x->in, &x->out);
    if (r != BATCH)
      die("urtp_srtp_protect_batch", r);
  }
}

static void urtp_pair_loop(void *a, unsigned n)
{
  urtp_arg_t *x = a;
  for (unsigned i = 0; i < n; i += BATCH) {
    fill_batch(x, &x->seq2);
    urtp_batch_clear(&x->out);
    int r = urtp_srtp_protect_batch(&x->tx2, &x->in, &x->out);
    if (r != BATCH)
      die("urtp_srtp_protect_batch", r);
    for (unsigned k = 0; k < BATCH; k++) {
      struct iovec *v = &x->out.iov[x->out.pkts[k].iov_first];
      r = urtp_srtp_unprotect(&x->rx, v->iov_base, v->iov_len);
      if (r != (int)pkt_size)
        die("urtp_srtp_unprotect", r);
    }
  }
}

static void measure_urtp(const prof_t *pr, double *prot, double *unprot)
{
  urtp_arg_t *x = calloc(1, sizeof(*x));
  if (!x)
    die("calloc", -ENOMEM);
  urtp_srtp_config_t c = {.profile = pr->urtp, .dir = URTP_SRTP_OUTBOUND, .key = key,
                          .key_len = pr->key_len, .any_ssrc = true};
  *prot = *unprot = -1;
  if (urtp_srtp_init(&x->tx, &c) == 0 && urtp_srtp_init(&x->tx2, &c) == 0) {
    c.dir = URTP_SRTP_INBOUND;
    c.replay_window = 1024;
    if (urtp_srtp_init(&x->rx, &c) == 0) {
      x->seq = x->seq2 = 1;
      double bp = 1e9, bpu = 1e9;
      for (int r = 0; r < runs; r++) {
        double p = time_loop(urtp_protect_loop, x);
        double pu = time_loop(urtp_pair_loop, x);
        bp = p < bp ? p : bp;
        bpu = pu < bpu ? pu : bpu;
      }
      *prot = bp;
      *unprot = bpu - bp;
    }
  }
  urtp_srtp_destroy(&x->tx);
  urtp_srtp_destroy(&x->tx2);
  urtp_srtp_destroy(&x->rx);
  urtp_batch_free(&x->in);
  urtp_batch_free(&x->out);
  free(x);
}
#endif

static void report(const char *what, const prof_t *pr, double p, double u)
{
  if (p < 0) {
    printf("COST lib=%s what=%s profile=%s size=%zu unavailable=1\n", LIB_NAME, what, pr->name,
           pkt_size);
    return;
  }
  printf("COST lib=%s what=%s profile=%s size=%zu protect_us=%.4f unprotect_us=%.4f runs=%d\n",
         LIB_NAME, what, pr->name, pkt_size, p, u, runs);
  fflush(stdout);
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {
    {"size", required_argument, NULL, 'b'}, {"seconds", required_argument, NULL, 's'},
    {"runs", required_argument, NULL, 'r'},  {"all", no_argument, NULL, 'a'},
    {"profile", required_argument, NULL, 'p'}, {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  size_t first = 0, nprofs = 2;
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'b':
      pkt_size = (size_t)strtoul(optarg, NULL, 0);
      break;
    case 's':
      seconds = strtod(optarg, NULL);
      break;
    case 'r':
      runs = atoi(optarg);
      break;
    case 'a':
      nprofs = sizeof(profs) / sizeof(profs[0]);
      break;
    case 'p':
      for (first = 0; first < sizeof(profs) / sizeof(profs[0]); first++)
        if (!strcmp(optarg, profs[first].name))
          break;
      if (first == sizeof(profs) / sizeof(profs[0])) {
        fprintf(stderr, "srtp-cost: unknown profile %s\n", optarg);
        return 2;
      }
      nprofs = first + 1;
      break;
    default:
      fprintf(stderr, "usage: %s [--size BYTES] [--seconds S] [--runs N] [--all | --profile NAME]\n",
              argv[0]);
      return c == 'h' ? 0 : 2;
    }
  }
  if (pkt_size < 16 || pkt_size > MAX_PKT - 4096 || seconds <= 0 || runs < 1) {
    fprintf(stderr, "srtp-cost: bad --size, --seconds or --runs\n");
    return 2;
  }

  srtp_err_status_t st = srtp_init();
  if (st)
    die("srtp_init", st);
  print_backend();
  uint64_t s = 0x5eedc057;
  for (size_t i = 0; i < sizeof(key); i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    key[i] = (uint8_t)(s >> 56);
  }
  for (size_t i = 12; i < pkt_size; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    plain[i] = (uint8_t)(s >> 56);
  }
  write_header(plain, 0);

  for (size_t k = first; k < nprofs; k++) {
    double p, u;
    measure_lib(&profs[k], &p, &u);
    report("libsrtp2", &profs[k], p, u);
#ifdef SRTP_COST_URTP
    measure_urtp(&profs[k], &p, &u);
    report("urtp", &profs[k], p, u);
#endif
  }
  return 0;
}
