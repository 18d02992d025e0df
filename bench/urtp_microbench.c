/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp_microbench.c - single-core throughput of the core library's hot paths:
 * start-code lookup (each implementation beside a byte loop, memchr and
 * memmem), packetization and depacketization of a 4K-sized H.265 stream.
 *
 *   urtp-microbench [--seconds S] [--only scl|pay|depay] [--mib N]
 *
 * Not a test: it asserts nothing about speed. It checks only that every
 * method finds the same start codes and that depacketized access units equal
 * the input, so that the figures measure correct work.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "urtp/batch.h"
#include "urtp/depay.h"
#include "urtp/pay.h"
#include "urtp/rtp.h"
#include "urtp/scl.h"

static double min_seconds = 0.5;

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
  uint64_t x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static void *xmalloc(size_t n)
{
  void *p = malloc(n);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

/* Appends one H.265 NAL unit of `size` bytes (header included) to dst with
 * a start code in front: random payload with emulation prevention applied,
 * so no 00 00 0x (x <= 3) occurs inside, as in a real bitstream. Returns the
 * bytes written (at most size + size/2 + 8). */
static size_t put_nal(uint8_t *dst, size_t size, unsigned type, bool long_sc)
{
  size_t o = 0, zeros = 0;
  if (long_sc)
    dst[o++] = 0;
  dst[o++] = 0;
  dst[o++] = 0;
  dst[o++] = 1;
  dst[o++] = (uint8_t)(type << 1);
  dst[o++] = 1;                     /* LayerId 0, TID 1 */
  uint64_t r = 0;
  for (size_t i = 2; i < size; i++) {
    if ((i & 7) == 2)
      r = rnd();
    uint8_t b = (uint8_t)r;
    r >>= 8;
    if (zeros >= 2 && b <= 3) {
      dst[o++] = 3;
      zeros = 0;
    }
    dst[o++] = b;
    zeros = b ? 0 : zeros + 1;
  }
  if (dst[o - 1] == 0)
    dst[o++] = 0x80;                /* rbsp stop bit: never ends in 00 */
  return o;
}

/* ---- start-code lookup ------------------------------------------------- */

typedef const uint8_t *(*find_fn)(const uint8_t *p, const uint8_t *end);

static const uint8_t *find_memchr(const uint8_t *p, const uint8_t *end)
{
  if (end - p < 3)
    return end;
  const uint8_t *s = p + 2;
  while (s < end) {
    const uint8_t *q = memchr(s, 1, (size_t)(end - s));
    if (!q)
      return end;
    if (q[-1] == 0 && q[-2] == 0)
      return q - 2;
    s = q + 1;
  }
  return end;
}

static const uint8_t *find_memmem(const uint8_t *p, const uint8_t *end)
{
  const uint8_t *q = memmem(p, (size_t)(end - p), "\0\0\1", 3);
  return q ? q : end;
}

static urtp_scl_impl_t cur_impl;

static const uint8_t *find_lib(const uint8_t *p, const uint8_t *end)
{
  return urtp_scl_find_with(cur_impl, p, end);
}

/* Finds all start codes of buf; returns how many. */
static size_t scan(find_fn f, const uint8_t *buf, size_t len)
{
  const uint8_t *p = buf, *end = buf + len;
  size_t n = 0;
  for (;;) {
    p = f(p, end);
    if (p == end)
      return n;
    n++;
    p += 3;
  }
}

static void print_header(void)
{
  printf("%-34s %10s %8s %10s %10s\n", "measurement", "GB/s", "Gbit/s", "Mpkt/s", "seconds");
  printf("%-34s %10s %8s %10s %10s\n", "----------------------------------", "----------",
         "--------", "----------", "----------");
}

static void print_row(const char *name, double bytes, double pkts, double secs)
{
  double gbs = bytes / secs / 1e9;
  if (pkts > 0)
    printf("%-34s %10.2f %8.2f %10.3f %10.2f\n", name, gbs, gbs * 8, pkts / secs / 1e6, secs);
  else
    printf("%-34s %10.2f %8.2f %10s %10.2f\n", name, gbs, gbs * 8, "-", secs);
  fflush(stdout);
}

static int bench_scl(size_t mib)
{
  size_t cap = mib << 20;
  uint8_t *buf = xmalloc(cap + 300000);
  size_t len = 0, nals = 0;

  /* NAL units of 100 B .. 200 KB, sizes roughly log-uniform so that small
   * and large ones both matter, as in a stream of slices and parameter
   * sets. */
  while (len < cap) {
    size_t base = (size_t)100 << (rnd() % 11);
    size_t size = base + (size_t)(rnd() % base);
    len += put_nal(buf + len, size, (unsigned)(rnd() % 22), nals == 0 || rnd() % 4 == 0);
    nals++;
  }
  printf("start-code lookup: %.1f MiB, %zu NAL units (mean %.0f bytes)\n",
         (double)len / (1 << 20), nals, (double)len / (double)nals);
  print_header();

  static const urtp_scl_impl_t impls[] = {
    URTP_SCL_NAIVE, URTP_SCL_SWAR, URTP_SCL_SSE2, URTP_SCL_AVX2, URTP_SCL_AUTO,
  };
  int rc = 0;
  for (size_t k = 0; k < sizeof impls / sizeof impls[0] + 2; k++) {
    find_fn f;
    char name[64];
    if (k < sizeof impls / sizeof impls[0]) {
      if (!urtp_scl_available(impls[k])) {
        printf("%-34s %10s\n", urtp_scl_impl_name(impls[k]), "n/a");
        continue;
      }
      cur_impl = impls[k];
      f = find_lib;
      snprintf(name, sizeof name, "scl %s%s", urtp_scl_impl_name(impls[k]),
               impls[k] == URTP_SCL_NAIVE ? " (byte loop)" : "");
    } else if (k == sizeof impls / sizeof impls[0]) {
      f = find_memchr;
      snprintf(name, sizeof name, "memchr(01) + 2 zeros (glibc)");
    } else {
      f = find_memmem;
      snprintf(name, sizeof name, "memmem(\"\\0\\0\\1\") (glibc)");
    }
    size_t found = scan(f, buf, len);   /* warm-up and check */
    if (found != nals) {
      printf("%s: found %zu start codes, expected %zu\n", name, found, nals);
      rc = 1;
    }
    double t0 = now(), t;
    size_t passes = 0;
    do {
      found += scan(f, buf, len);
      passes++;
      t = now() - t0;
    } while (t < min_seconds);
    print_row(name, (double)len * (double)passes, 0, t);
  }
  free(buf);
  return rc;
}

/* ---- packetization and depacketization ----------------------------------- */

#define AU_NALS 7
#define NUM_AUS 8
#define MTU 1400

/* A 4K-sized access unit: VPS, SPS, PPS and four slices of an IDR picture,
 * about 700 KB, every NAL unit behind a 4-byte start code (the form the
 * depacketizer emits, so output can be compared with input). */
static size_t make_au(uint8_t *dst, bool idr)
{
  static const size_t sizes[AU_NALS] = { 24, 70, 12, 180000, 175000, 170000, 175000 };
  static const unsigned types[AU_NALS] = { 32, 33, 34, 19, 19, 19, 19 };
  size_t o = 0;
  for (int i = 0; i < AU_NALS; i++)
    o += put_nal(dst + o, sizes[i], idr || i < 3 ? types[i] : 1, true);
  return o;
}

typedef struct stream {
  uint8_t *au[NUM_AUS];
  size_t au_len[NUM_AUS];
  size_t total;
} stream_t;

static void make_stream(stream_t *s)
{
  s->total = 0;
  for (int i = 0; i < NUM_AUS; i++) {
    s->au[i] = xmalloc(1100000);
    s->au_len[i] = make_au(s->au[i], i == 0);
    s->total += s->au_len[i];
  }
}

static void free_stream(stream_t *s)
{
  for (int i = 0; i < NUM_AUS; i++)
    free(s->au[i]);
}

static int init_pay(urtp_pay_t *pay)
{
  urtp_pay_config_t cfg = {
    .codec = URTP_CODEC_H265, .pt = 96, .ssrc = 0x12345678, .seq_start = 1000,
    .mtu = MTU, .aggregate = true,
  };
  int err = urtp_pay_init(pay, &cfg);
  if (err)
    fprintf(stderr, "urtp_pay_init: %s\n", strerror(-err));
  return err;
}

static int bench_pay(const stream_t *s)
{
  urtp_pay_t pay;
  urtp_batch_t batch;
  if (init_pay(&pay))
    return 1;
  urtp_batch_init(&batch);

  double bytes = 0, pkts = 0, t0 = 0, t;
  uint32_t ts = 0;
  long rounds = -1;                 /* round -1 warms up (memory growth) */
  do {
    if (rounds == 0)
      t0 = now();
    for (int i = 0; i < NUM_AUS; i++) {
      int n = urtp_pay_annexb(&pay, s->au[i], s->au_len[i], ts, true, &batch);
      if (n <= 0) {
        fprintf(stderr, "urtp_pay_annexb: %d\n", n);
        return 1;
      }
      ts += 1500;
      pkts += n;
      urtp_batch_clear(&batch);
    }
    if (rounds >= 0)
      bytes += (double)s->total;
    else
      pkts = 0;
    rounds++;
    t = now() - t0;
  } while (rounds <= 0 || t < min_seconds);
  print_row("pay H.265 annexb, MTU 1400", bytes, pkts, t);

  urtp_batch_free(&batch);
  urtp_pay_destroy(&pay);
  return 0;
}

/* Packetizes the stream once into contiguous datagrams, pushes them through
 * the depacketizer, and rewrites sequence numbers and timestamps between
 * rounds (outside the timed part) so every round is fresh, in-order input. */
static int bench_depay(const stream_t *s, size_t window)
{
  urtp_pay_t pay;
  urtp_batch_t batch;
  if (init_pay(&pay))
    return 1;
  urtp_batch_init(&batch);

  uint32_t ts = 0;
  for (int i = 0; i < NUM_AUS; i++, ts += 1500)
    if (urtp_pay_annexb(&pay, s->au[i], s->au_len[i], ts, true, &batch) <= 0)
      return 1;
  size_t npkts = batch.npkts, total = 0;
  uint8_t *dgrams = xmalloc(npkts * MTU);
  size_t *lens = xmalloc(npkts * sizeof *lens);
  for (size_t i = 0; i < npkts; i++) {
    lens[i] = urtp_batch_copy_pkt(&batch, i, dgrams + i * MTU, MTU);
    total += lens[i];
  }
  urtp_batch_free(&batch);
  urtp_pay_destroy(&pay);

  urtp_depay_config_t cfg = {
    .codec = URTP_CODEC_H265, .pt = 96, .ssrc = -1, .reorder_window = window,
  };
  urtp_depay_t *d = urtp_depay_new(&cfg);
  if (!d) {
    fprintf(stderr, "urtp_depay_new failed\n");
    return 1;
  }

  double bytes = 0, pkts = 0, elapsed = 0;
  long rounds = -1;                 /* round -1 warms up and checks output */
  int rc = 0;
  do {
    double t0 = now();
    size_t au = 0;
    urtp_au_t out;
    for (size_t i = 0; i < npkts; i++) {
      urtp_depay_push(d, dgrams + i * MTU, lens[i]);
      while (urtp_depay_pop(d, &out)) {
        if (rounds < 0 && (au >= NUM_AUS || out.len != s->au_len[au] ||
                           memcmp(out.data, s->au[au], out.len) != 0)) {
          fprintf(stderr, "depay: access unit %zu differs from the input\n", au);
          rc = 1;
        }
        au++;
        free(out.data);
      }
    }
    double t = now() - t0;
    if (au != NUM_AUS) {
      fprintf(stderr, "depay: %zu access units out, expected %d\n", au, NUM_AUS);
      rc = 1;
    }
    if (rc)
      break;
    if (rounds >= 0) {
      elapsed += t;
      bytes += (double)total;
      pkts += (double)npkts;
    }
    rounds++;
    for (size_t i = 0; i < npkts; i++) {
      uint8_t *h = dgrams + i * MTU;
      uint16_t seq = (uint16_t)(urtp_rtp_peek_seq(h) + npkts);
      uint32_t nts = urtp_rtp_peek_ts(h) + 1500u * NUM_AUS;
      h[2] = (uint8_t)(seq >> 8);
      h[3] = (uint8_t)seq;
      h[4] = (uint8_t)(nts >> 24);
      h[5] = (uint8_t)(nts >> 16);
      h[6] = (uint8_t)(nts >> 8);
      h[7] = (uint8_t)nts;
    }
  } while (rounds <= 0 || elapsed < min_seconds);

  if (!rc) {
    char name[64];
    snprintf(name, sizeof name, "depay H.265, reorder window %zu", window);
    print_row(name, bytes, pkts, elapsed);
    const urtp_depay_stats_t *st = urtp_depay_stats(d);
    if (st->malformed || st->foreign || st->dropped_aus || st->dropped_nals) {
      fprintf(stderr, "depay: unexpected drops (malformed %llu, dropped AUs %llu)\n",
              (unsigned long long)st->malformed, (unsigned long long)st->dropped_aus);
      rc = 1;
    }
  }
  urtp_depay_free(d);
  free(dgrams);
  free(lens);
  return rc;
}

static void usage(FILE *f)
{
  fprintf(f, "usage: urtp-microbench [--seconds S] [--only scl|pay|depay] [--mib N]\n"
             "  --seconds S  minimum time per measurement (default 0.5)\n"
             "  --only WHAT  run only the start-code, packetizer or depacketizer part\n"
             "  --mib N      size of the start-code lookup buffer (default 64)\n");
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {
    { "seconds", required_argument, NULL, 's' },
    { "only", required_argument, NULL, 'o' },
    { "mib", required_argument, NULL, 'm' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool do_scl = true, do_pay = true, do_depay = true;
  size_t mib = 64;
  int c;

  while ((c = getopt_long(argc, argv, "s:o:m:h", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      min_seconds = strtod(optarg, NULL);
      if (!(min_seconds > 0)) {
        usage(stderr);
        return 2;
      }
      break;
    case 'o':
      do_scl = strcmp(optarg, "scl") == 0;
      do_pay = strcmp(optarg, "pay") == 0;
      do_depay = strcmp(optarg, "depay") == 0;
      if (!do_scl && !do_pay && !do_depay) {
        usage(stderr);
        return 2;
      }
      break;
    case 'm':
      mib = strtoul(optarg, NULL, 10);
      if (mib == 0 || mib > 4096) {
        usage(stderr);
        return 2;
      }
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }

  int rc = 0;
  if (do_scl)
    rc |= bench_scl(mib);
  if (do_pay || do_depay) {
    stream_t s;
    make_stream(&s);
    printf("%s%d H.265 access units of %.0f KB each (%d NAL units), MTU %d, one core\n",
           do_scl ? "\n" : "", NUM_AUS, (double)s.total / NUM_AUS / 1000, AU_NALS, MTU);
    print_header();
    if (do_pay)
      rc |= bench_pay(&s);
    if (do_depay) {
      rc |= bench_depay(&s, 0);
      rc |= bench_depay(&s, 256);
    }
    free_stream(&s);
  }
  return rc;
}
