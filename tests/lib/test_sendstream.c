/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_sendstream.c - the sending stream (lib/urtp/sendstream.h) on real
 * loopback sockets, received with lib's own depacketizer (and SRTP).
 *
 * Every pushed buffer is scribbled over (0xEE) the moment its hold is
 * released, so a release before the last packet pointing into it left
 * shows up as corrupted bytes at the receiver; at the end every hold must
 * have been released exactly once, on the pushing thread. The blocked-send
 * test builds a real bottleneck: a network namespace of its own whose
 * loopback has a tbf qdisc, and a tiny send buffer.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>

#include "tap.h"
#include "urtp/bytes.h"
#include "urtp/depay.h"
#include "urtp/net.h"
#include "urtp/params.h"
#include "urtp/recvstream.h"
#include "urtp/rtcpio.h"
#include "urtp/rtp.h"
#include "urtp/sdp.h"
#include "urtp/sendstream.h"
#include "urtp/srtp.h"

#define PT 96
#define SSRC 0x5e11d00du
#define SEQ0 65500 /* wraps within the first tests */
#define MAXAU 64
#define MAXDG 20000

/* H.265 NAL unit types */
enum { TRAIL_R = 1, IDR = 19, VPS = 32, SPS = 33, PPS = 34, AUD = 35, SEI = 39 };

static int64_t mono_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- holds ---------------------------------------------------------------- */

typedef struct held {
  uint8_t *data;
  size_t len;
  int released;
} held_t;

static pthread_t pusher;
static int wrong_thread;

static void on_release(void *user, void *hold)
{
  (void)user;
  held_t *h = hold;
  h->released++;
  if (!pthread_equal(pthread_self(), pusher))
    wrong_thread++;
  if (h->data)
    memset(h->data, 0xEE, h->len);
}

/* ---- input ---------------------------------------------------------------- */

typedef struct nal_spec {
  unsigned type;
  size_t len;
  uint8_t tag;        /* varies the body: a changed parameter set */
} nal_spec_t;

/* NAL unit bytes: H.265 header (TID 1), then a body without zero bytes;
 * a parameter set's body depends on its tag only, so that the same set
 * built anywhere has the same bytes. */
static void nal_fill(uint8_t *p, const nal_spec_t *s, size_t salt)
{
  if (s->type >= VPS && s->type <= PPS)
    salt = 0;
  p[0] = (uint8_t)(s->type << 1);
  p[1] = 1;
  for (size_t k = 2; k < s->len; k++)
    p[k] = (uint8_t)(1 + (salt * 131 + k * 7 + s->tag * 17 + s->type) % 251);
}

typedef struct au {
  held_t hold;            /* the pushed bytes */
  uint8_t *want;          /* expected depayloader output: Annex-B, 4-byte codes */
  size_t want_len;
} au_t;

/* Builds an Annex-B access unit from specs (3- and 4-byte start codes
 * alternating) and its expected output; extra (may be NULL) are NAL units
 * the stream is expected to insert before position at. */
static void au_build(au_t *a, const nal_spec_t *specs, size_t n, size_t salt,
                     const nal_spec_t *extra, size_t nextra, size_t at)
{
  size_t in = 0, out = 0;
  for (size_t i = 0; i < n; i++)
    in += 4 + specs[i].len, out += 4 + specs[i].len;
  for (size_t i = 0; i < nextra; i++)
    out += 4 + extra[i].len;
  a->hold.data = malloc(in);
  a->hold.len = in;
  a->hold.released = 0;
  a->want = malloc(out);
  a->want_len = out;
  size_t o = 0, w = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == at)
      for (size_t j = 0; j < nextra; j++) {
        memcpy(a->want + w, "\0\0\0\1", 4);
        nal_fill(a->want + w + 4, &extra[j], 0);
        w += 4 + extra[j].len;
      }
    if (i == n)
      break;
    size_t sc = i % 2 ? 3 : 4;
    memcpy(a->hold.data + o, &"\0\0\0\1"[4 - sc], sc);
    nal_fill(a->hold.data + o + sc, &specs[i], salt + i);
    memcpy(a->want + w, "\0\0\0\1", 4);
    nal_fill(a->want + w + 4, &specs[i], salt + i);
    o += sc + specs[i].len;
    w += 4 + specs[i].len;
  }
  a->hold.len = o;
}

static void au_free(au_t *a)
{
  free(a->hold.data);
  free(a->want);
}

/* ---- sockets and receiving ------------------------------------------------ */

typedef struct link {
  urtp_sock_t rx, tx;
  urtp_rx_t q;
} link_t;

static int link_open(link_t *l, urtp_io_mode_t tx_mode, int sndbuf)
{
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .rcvbuf = 32 << 20,
                            .tx_mode = URTP_IO_AUTO, .rx_mode = URTP_IO_GRO };
  int r = urtp_sock_open(&l->rx, &rc);
  if (r < 0)
    return r;
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)urtp_sock_local_port(&l->rx),
                            .sndbuf = sndbuf, .tx_mode = tx_mode, .rx_mode = URTP_IO_MMSG };
  if ((r = urtp_sock_open(&l->tx, &tc)) < 0)
    return r;
  return urtp_rx_init(&l->q, 64, 65536);
}

static void link_close(link_t *l)
{
  urtp_rx_destroy(&l->q);
  urtp_sock_close(&l->rx);
  urtp_sock_close(&l->tx);
}

typedef struct dgram {
  uint8_t *p;
  size_t len;
} dgram_t;

typedef struct rxlog {
  dgram_t d[MAXDG];
  size_t n;
} rxlog_t;

static rxlog_t rxl;

/* Takes datagrams until `want` arrived or none came for quiet_ms. */
static void rx_collect(link_t *l, size_t want, int quiet_ms)
{
  while (rxl.n < want || want == 0) {
    int n = urtp_sock_recv(&l->rx, &l->q, quiet_ms);
    if (n <= 0)
      break;
    for (int i = 0; i < n && rxl.n < MAXDG; i++) {
      rxl.d[rxl.n].p = malloc(l->q.dgrams[i].len);
      memcpy(rxl.d[rxl.n].p, l->q.dgrams[i].data, l->q.dgrams[i].len);
      rxl.d[rxl.n].len = l->q.dgrams[i].len;
      rxl.n++;
    }
  }
}

static void rx_reset(void)
{
  for (size_t i = 0; i < rxl.n; i++)
    free(rxl.d[i].p);
  rxl.n = 0;
}

/* RTP fields of every datagram: sequence continuous from seq0, pt, SSRC.
 * Returns the number of markers. */
static size_t check_headers(uint16_t seq0)
{
  size_t markers = 0;
  for (size_t i = 0; i < rxl.n; i++) {
    urtp_rtp_pkt_t p;
    if (urtp_rtp_parse(rxl.d[i].p, rxl.d[i].len, &p) < 0) {
      CHECK(!"RTP parses");
      continue;
    }
    if (p.hdr.seq != (uint16_t)(seq0 + i))
      printf("#   datagram %zu: seq %u, want %u\n", i, p.hdr.seq, (uint16_t)(seq0 + i));
    CHECK_EQ(p.hdr.seq, (uint16_t)(seq0 + i));
    CHECK_EQ(p.hdr.pt, PT);
    CHECK_EQ(p.hdr.ssrc, SSRC);
    markers += p.hdr.marker;
  }
  return markers;
}

/* Depacketizes what arrived; each access unit must equal aus[i].want. */
static void check_aus(urtp_codec_t codec, au_t *aus, size_t n, urtp_srtp_t *in)
{
  urtp_depay_config_t dc = { .codec = codec, .pt = PT, .ssrc = SSRC };
  urtp_depay_t *d = urtp_depay_new(&dc);
  REQUIRE(d);
  for (size_t i = 0; i < rxl.n; i++) {
    size_t len = rxl.d[i].len;
#ifdef URTP_HAVE_SRTP
    if (in) {
      int r = urtp_srtp_unprotect(in, rxl.d[i].p, len);
      CHECK(r > 0);
      if (r <= 0)
        continue;
      len = (size_t)r;
    }
#else
    (void)in;
#endif
    urtp_depay_push(d, rxl.d[i].p, len);
  }
  urtp_depay_flush(d, true);
  urtp_au_t au;
  size_t k = 0;
  while (urtp_depay_pop(d, &au)) {
    if (k < n) {
      if (au.len != aus[k].want_len || memcmp(au.data, aus[k].want, au.len) != 0)
        printf("#   access unit %zu differs (%zu bytes, want %zu)\n", k, au.len, aus[k].want_len);
      CHECK(au.len == aus[k].want_len && memcmp(au.data, aus[k].want, au.len) == 0);
    }
    free(au.data);
    k++;
  }
  CHECK_EQ(k, n);
  urtp_depay_free(d);
}

static void check_released_once(au_t *aus, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (aus[i].hold.released != 1)
      printf("#   hold %zu released %d times\n", i, aus[i].hold.released);
    CHECK_EQ(aus[i].hold.released, 1);
  }
  CHECK_EQ(wrong_thread, 0);
}

static urtp_sendstream_config_t base_cfg(const urtp_sendstream_format_t *fmt)
{
  urtp_sendstream_config_t c = { .ssrc = SSRC, .seq_start = SEQ0, .release = on_release,
                                 .format = fmt };
  return c;
}

static const urtp_sendstream_format_t h265_au = { .codec = URTP_CODEC_H265, .pt = PT,
                                                  .mtu = 1400 };

/* A stream of access units: IDR with its sets, then pictures of many sizes
 * (single packets, aggregates, many fragments). */
static size_t gop(au_t *aus, size_t n, size_t salt)
{
  for (size_t i = 0; i < n; i++) {
    if (i % 8 == 0) {
      nal_spec_t s[] = { { AUD, 3, 0 }, { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 },
                         { IDR, 20000 + i * 333, 0 } };
      au_build(&aus[i], s, 5, salt + i * 10, NULL, 0, 0);
    } else {
      nal_spec_t s[] = { { SEI, 30, 0 }, { TRAIL_R, 100 + (i * 4099) % 9000, 0 },
                         { TRAIL_R, 2 + i % 5, 0 } };
      au_build(&aus[i], s, 3, salt + i * 10, NULL, 0, 0);
    }
  }
  return n;
}

/* ---- access units in, inline and on the send thread ---------------------- */

static void run_aus_paced(urtp_io_mode_t mode, bool thread, bool aggregate, uint64_t pace_bps)
{
  link_t l;
  REQUIRE(link_open(&l, mode, 4 << 20) == 0);
  urtp_sendstream_format_t fmt = h265_au;
  fmt.aggregate = aggregate;
  fmt.pad_fragments = true;
  urtp_sendstream_config_t cfg = base_cfg(&fmt);
  cfg.send_thread = thread;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  if (pace_bps)
    urtp_sendstream_set_pacing(ss, pace_bps, 0, 16384);

  au_t aus[24];
  size_t n = gop(aus, 24, mode * 7 + thread);
  int64_t t0 = mono_ms();
  for (size_t i = 0; i < n; i++) {
    int r = urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)(i * 3000),
                                 (int64_t)i * 33333333, 0, &aus[i].hold);
    CHECK(r > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    if (!thread)
      CHECK_EQ(aus[i].hold.released, 1); /* inline: right after its send */
  }
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  int64_t took_ms = mono_ms() - t0;
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  rx_collect(&l, st.packets, 500);
  CHECK_EQ(rxl.n, st.packets);
  CHECK_EQ(check_headers(SEQ0), n); /* one marker per access unit */
  if (pace_bps) {
    /* everything beyond the first burst went at the rate, no faster */
    int64_t want_ms = (int64_t)((st.bytes - 16384) * 8 * 1000 / pace_bps);
    printf("# paced at %llu bit/s: %llu bytes in %lld ms (at least %lld), %llu waits\n",
           (unsigned long long)pace_bps, (unsigned long long)st.bytes, (long long)took_ms,
           (long long)want_ms, (unsigned long long)st.pacing_waits);
    CHECK(took_ms >= want_ms - 2);
    CHECK(took_ms <= want_ms * 3 + 1000); /* generous: a loaded machine only slows */
    CHECK(st.pacing_waits > 0);
    CHECK_EQ(st.pacing_rate, pace_bps);
  } else {
    CHECK_EQ(st.pacing_waits, 0);
  }
  check_aus(URTP_CODEC_H265, aus, n, NULL);
  uint64_t bytes = 0;
  for (size_t i = 0; i < rxl.n; i++)
    bytes += rxl.d[i].len;
  CHECK_EQ(st.bytes, bytes);
  CHECK_EQ(st.access_units, n);
  CHECK_EQ(st.send_errors, 0);
  CHECK(st.syscalls > 0 && st.syscalls <= st.packets);
  CHECK_EQ(st.tx_mode, l.tx.tx_mode);
  if (l.tx.tx_mode == URTP_IO_GSO)
    CHECK(st.padding_bytes > 0); /* pad_fragments only with GSO */
  else
    CHECK_EQ(st.padding_bytes, 0);
  urtp_sendstream_free(ss);
  check_released_once(aus, n);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

/* A pacing rate below the stream's bitrate: after a whole second of
 * sends that nearly only wait, the stream says it is behind (once, in
 * stats, and while it lasts); off again once pacing is turned off. A
 * stream paced well above its bitrate never is. */
static void test_pacing_behind(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_GSO, 4 << 20) == 0);
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  urtp_sendstream_set_pacing(ss, 2000000, 0, 16384);
  au_t a;
  /* 240 kbit: 120 ms each at the rate */
  nal_spec_t spec[] = { { AUD, 3, 0 }, { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 },
                        { IDR, 30000, 0 } };
  au_build(&a, spec, 5, 5, NULL, 0, 0);
  held_t h = { 0 }; /* no data: on_release leaves the bytes for the next push */
  int64_t t0 = mono_ms();
  bool seen = false;
  for (uint32_t i = 0; mono_ms() - t0 < 4000 && !seen; i++) {
    CHECK(urtp_sendstream_push(ss, a.hold.data, a.hold.len, i * 3000, (int64_t)i * 33333333, 0,
                               &h) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    seen = urtp_sendstream_pacing_behind(ss);
    rx_collect(&l, 0, 1);
    rx_reset();
  }
  printf("# behind after %lld ms\n", (long long)(mono_ms() - t0));
  CHECK(seen);
  CHECK(mono_ms() - t0 >= 1000); /* a whole second of evidence */
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.pacing_behind, 1);
  CHECK_EQ(st.pacing_rate, 2000000);

  /* off: the next flush clears it */
  urtp_sendstream_set_pacing(ss, 0, 0, 0);
  CHECK(urtp_sendstream_push(ss, a.hold.data, a.hold.len, 0, 0, 0, &h) > 0);
  CHECK_EQ(urtp_sendstream_flush(ss), 0);
  CHECK(!urtp_sendstream_pacing_behind(ss));
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.pacing_rate, 0);

  /* ten times the bitrate: 2.5 s of pictures every 40 ms, never behind */
  urtp_sendstream_set_pacing(ss, 60000000, 0, 16384);
  t0 = mono_ms();
  for (uint32_t i = 0; mono_ms() - t0 < 2500; i++) {
    CHECK(urtp_sendstream_push(ss, a.hold.data, a.hold.len, i * 3000, 0, 0, &h) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    CHECK(!urtp_sendstream_pacing_behind(ss));
    rx_collect(&l, 0, 1);
    rx_reset();
    usleep(40000);
  }
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.pacing_behind, 1);
  urtp_sendstream_free(ss);
  au_free(&a);
  link_close(&l);
}


/* RTCP: our SR counts exactly what went out (packets; payload octets
 * without headers and padding) at the NTP/RTP times given, with our CNAME
 * and on request a BYE; a receiver's block about us is kept and gives the
 * round-trip time; blocks about others and broken compounds are not. */
static void test_rtcp(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_GSO, 4 << 20) == 0);
  urtp_sendstream_format_t fmt = h265_au;
  fmt.pad_fragments = true;
  urtp_sendstream_config_t cfg = base_cfg(&fmt);
  cfg.cname = "sender@test";
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  au_t aus[16];
  size_t n = gop(aus, 16, 3);
  for (size_t i = 0; i < n; i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)(i * 3000),
                               (int64_t)i * 33333333, 0, &aus[i].hold) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
  }
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  rx_collect(&l, st.packets, 500);
  REQUIRE(rxl.n == st.packets);
  uint64_t octets = 0;
  for (size_t i = 0; i < rxl.n; i++) {
    const uint8_t *d = rxl.d[i].p;
    octets += rxl.d[i].len - 12 - ((d[0] & 0x20) ? d[rxl.d[i].len - 1] : 0);
  }

  const uint64_t ntp = 0xe1000000ull << 32 | 0x40000000u; /* ... .25 s */
  uint8_t buf[256];
  int len = urtp_sendstream_rtcp_report(ss, ntp, 123456, true, buf, sizeof buf);
  REQUIRE(len > 0);
  urtp_rtcp_info_t info;
  REQUIRE(urtp_rtcp_parse(buf, (size_t)len, 0, &info) == 0);
  REQUIRE(info.nreports == 1 && info.reports[0].is_sr);
  const urtp_rtcp_sr_t *sr = &info.reports[0].sr;
  CHECK_EQ(sr->ssrc, SSRC);
  CHECK(sr->ntp == ntp);
  CHECK_EQ(sr->rtp_ts, 123456);
  CHECK_EQ(sr->packets, rxl.n);
  CHECK_EQ(sr->octets, octets);
  CHECK_EQ(info.nblocks, 0);
  REQUIRE(info.ncnames == 1);
  CHECK(info.cnames[0].ssrc == SSRC && info.cnames[0].len == 11 &&
        memcmp(info.cnames[0].value, "sender@test", 11) == 0);
  CHECK(info.bye && info.nbyes == 1 && info.byes[0] == SSRC);
  CHECK_EQ(urtp_sendstream_rtcp_report(ss, ntp, 0, false, buf, 30), -ENOSPC);

  /* a receiver's RR: a block about another source, then one about us,
   * 0.5 s after our SR, arriving 0.75 s after it: 250 ms round trip */
  urtp_rtcp_block_t b[2] = {
    { .ssrc = 0x77, .lost = 50 },
    { .ssrc = SSRC, .fraction = 12, .lost = 3, .ext_max_seq = 70000, .jitter = 90,
      .lsr = urtp_ntp_mid32(ntp), .dlsr = 32768 },
  };
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  urtp_rtcp_write_rr(&w, 0xfeed, b, 2);
  urtp_rtcp_write_sdes_cname(&w, 0xfeed, "receiver@test");
  REQUIRE(w.err == 0);
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, buf, w.len, ntp + (3ull << 30)), 0);
  uint8_t broken[] = { 0x80, 0xc9, 0x00, 0x07, 0, 0, 0, 1 };
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, broken, sizeof broken, ntp), -EBADMSG);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rtcp_sent, 1);
  CHECK_EQ(st.rtcp_in, 1);
  CHECK_EQ(st.rtcp_bad, 1);
  CHECK_EQ(st.rr_blocks, 1);
  CHECK_EQ(st.rr_ssrc, 0xfeed);
  CHECK_EQ(st.rr.fraction, 12);
  CHECK_EQ(st.rr.lost, 3);
  CHECK_EQ(st.rr.ext_max_seq, 70000);
  CHECK_EQ(st.rr.jitter, 90);
  CHECK(st.rtt_ns >= 250000000 - 20000 && st.rtt_ns <= 250000000 + 20000);

  urtp_sendstream_free(ss);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);

}

static void run_aus(urtp_io_mode_t mode, bool thread, bool aggregate)
{
  run_aus_paced(mode, thread, aggregate, 0);
}

static void test_au_inline_gso(void) { run_aus(URTP_IO_GSO, false, false); }
/* the same streams paced: order, bytes, headers exact, and the rate kept */
static void test_au_paced_inline(void) { run_aus_paced(URTP_IO_GSO, false, false, 20000000); }
static void test_au_paced_thread(void) { run_aus_paced(URTP_IO_GSO, true, false, 20000000); }
static void test_au_paced_mmsg(void) { run_aus_paced(URTP_IO_MMSG, true, true, 20000000); }
static void test_au_inline_mmsg_aggregate(void) { run_aus(URTP_IO_MMSG, false, true); }
static void test_au_send_thread(void) { run_aus(URTP_IO_GSO, true, false); }
static void test_au_send_thread_plain(void) { run_aus(URTP_IO_PLAIN, true, true); }

/* send_thread_paced: inline until pacing is on, then the pacer's waits are
 * the send thread's. A 200 KB picture paced at 2 Mbit/s takes 0.8 s: the
 * flush returns at once with it in flight (its hold not yet released),
 * the drain waits for it, and every byte arrives in order. */
static void test_paced_thread_on_pacing(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_GSO, 4 << 20) == 0);
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.send_thread_paced = true;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  au_t aus[2];
  nal_spec_t small[] = { { AUD, 3, 0 }, { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 },
                         { IDR, 3000, 0 } };
  nal_spec_t big[] = { { TRAIL_R, 200000, 0 } };
  au_build(&aus[0], small, 5, 11, NULL, 0, 0);
  au_build(&aus[1], big, 1, 12, NULL, 0, 0);
  /* not paced: inline, released by the flush */
  CHECK(urtp_sendstream_push(ss, aus[0].hold.data, aus[0].hold.len, 0, 0, 0, &aus[0].hold) > 0);
  CHECK_EQ(urtp_sendstream_flush(ss), 0);
  CHECK_EQ(aus[0].hold.released, 1);
  urtp_sendstream_set_pacing(ss, 2000000, 0, 16384);
  CHECK(urtp_sendstream_push(ss, aus[1].hold.data, aus[1].hold.len, 3000, 33333333, 0,
                             &aus[1].hold) > 0);
  int64_t t0 = mono_ms();
  CHECK_EQ(urtp_sendstream_flush(ss), 0);
  int64_t flush_ms = mono_ms() - t0;
  CHECK_EQ(aus[1].hold.released, 0);
  CHECK(flush_ms < 300);
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  int64_t drain_ms = mono_ms() - t0;
  printf("# flush %lld ms, drained after %lld ms\n", (long long)flush_ms, (long long)drain_ms);
  CHECK(drain_ms >= 500);
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.send_thread_error, 0);
  CHECK(st.pacing_waits > 0);
  rx_collect(&l, st.packets, 2000);
  CHECK_EQ(rxl.n, st.packets);
  CHECK_EQ(check_headers(SEQ0), 2);
  check_aus(URTP_CODEC_H265, aus, 2, NULL);
  urtp_sendstream_free(ss);
  check_released_once(aus, 2);
  for (size_t i = 0; i < 2; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

/* Several pushes per flush (a buffer list): one send, holds after it. */
static void test_several_pushes_per_flush(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  au_t aus[10];
  size_t n = gop(aus, 10, 99);
  uint64_t calls0 = l.tx.tx_syscalls;
  for (size_t i = 0; i < n; i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 3000, -1, 0,
                               &aus[i].hold) > 0);
    CHECK_EQ(aus[i].hold.released, 0); /* nothing sent yet */
  }
  CHECK_EQ(l.tx.tx_syscalls, calls0);
  CHECK_EQ(urtp_sendstream_flush(ss), 0);
  CHECK(l.tx.tx_syscalls - calls0 <= 2); /* one sendmmsg (two if chunked) */
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  rx_collect(&l, st.packets, 500);
  CHECK_EQ(check_headers(SEQ0), n);
  check_aus(URTP_CODEC_H265, aus, n, NULL);
  urtp_sendstream_free(ss);
  check_released_once(aus, n);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

/* ---- NAL-aligned input ----------------------------------------------------- */

static void run_nal_aligned(bool markers)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_sendstream_format_t fmt = h265_au;
  fmt.align_nal = true;
  urtp_sendstream_config_t cfg = base_cfg(&fmt);
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  au_t aus[6];
  size_t n = gop(aus, 6, 5);
  /* one push per NAL unit: split each AU's bytes at its start codes */
  held_t pieces[64];
  size_t np = 0;
  for (size_t i = 0; i < n; i++) {
    const uint8_t *b = aus[i].hold.data, *e = b + aus[i].hold.len;
    const uint8_t *starts[16];
    size_t ns = 0;
    for (const uint8_t *p = b; p + 3 <= e; p++)
      if (p[0] == 0 && p[1] == 0 && p[2] == 1)
        starts[ns++] = (p > b && p[-1] == 0) ? p - 1 : p;
    for (size_t k = 0; k < ns; k++) {
      const uint8_t *pe = k + 1 < ns ? starts[k + 1] : e;
      held_t *h = &pieces[np++];
      h->len = (size_t)(pe - starts[k]);
      h->data = malloc(h->len);
      memcpy(h->data, starts[k], h->len);
      h->released = 0;
      unsigned fl = markers && k + 1 == ns ? URTP_SEND_END_AU : 0;
      CHECK(urtp_sendstream_push(ss, h->data, h->len, (uint32_t)i * 3000, -1, fl, h) > 0);
      CHECK_EQ(urtp_sendstream_flush(ss), 0);
    }
    aus[i].hold.released = 1; /* never pushed whole */
  }
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  rx_collect(&l, st.packets, 500);
  /* markers: one per access unit when flagged; none otherwise (the
   * receiver finds the ends by the timestamps) */
  CHECK_EQ(check_headers(SEQ0), markers ? n : 0);
  CHECK_EQ(st.access_units, markers ? n : 0);
  check_aus(URTP_CODEC_H265, aus, n, NULL);
  urtp_sendstream_free(ss);
  for (size_t i = 0; i < np; i++) {
    CHECK_EQ(pieces[i].released, 1);
    free(pieces[i].data);
  }
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

static void test_nal_aligned_markers(void) { run_nal_aligned(true); }
static void test_nal_aligned_timestamps(void) { run_nal_aligned(false); }

/* ---- length-prefixed input -------------------------------------------------- */

/* x264's avcC (test_params.c): 4-byte lengths, its SPS and PPS. */
static const uint8_t avcc[] = {
  0x01, 0x64, 0x00, 0x14, 0xff, 0xe1, 0x00, 0x1d, 0x67, 0x64, 0x00, 0x14, 0xac, 0xd9, 0x41, 0x41,
  0xfb, 0x01, 0x6a, 0x0c, 0x0c, 0x0d, 0x4a, 0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00,
  0x79, 0x1e, 0x28, 0x53, 0x2c, 0x01, 0x00, 0x05, 0x68, 0xeb, 0xec, 0xb2, 0x2c,
};

static void test_length_prefixed(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_sendstream_format_t fmt = { .codec = URTP_CODEC_H264, .pt = PT, .mtu = 1200,
                                   .input = URTP_INPUT_LENGTH_PREFIXED };
  urtp_sendstream_config_t cfg = base_cfg(&fmt);
  cfg.config_interval = -1;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  /* before codec data the length size is unknown */
  uint8_t junk[8] = { 0, 0, 0, 2, 0x65, 0x88, 0, 0 };
  held_t hj = { NULL, 0, 0 };
  CHECK_EQ(urtp_sendstream_push(ss, junk, 6, 0, -1, 0, &hj), -EBADMSG);
  CHECK_EQ(hj.released, 1);
  CHECK_EQ(urtp_sendstream_set_codec_data(ss, avcc, 10), -EINVAL); /* cut: nothing changes */
  CHECK_EQ(urtp_params_total(urtp_sendstream_params(ss)), 0);
  REQUIRE(urtp_sendstream_set_codec_data(ss, avcc, sizeof(avcc)) == 0);
  CHECK(urtp_params_complete(urtp_sendstream_params(ss)));

  /* an IDR (type 5) of 5000 bytes and a P slice, 4-byte lengths; the IDR
   * gets SPS and PPS from the codec data in front (config-interval -1) */
  au_t aus[3];
  size_t lens[3] = { 5000, 700, 5000 };
  for (int i = 0; i < 3; i++) {
    size_t L = lens[i];
    au_t *a = &aus[i];
    a->hold.data = malloc(4 + L);
    a->hold.len = 4 + L;
    a->hold.released = 0;
    a->hold.data[0] = 0;
    a->hold.data[1] = 0;
    a->hold.data[2] = (uint8_t)(L >> 8);
    a->hold.data[3] = (uint8_t)L;
    a->hold.data[4] = i == 1 ? 0x41 : 0x65;
    for (size_t k = 1; k < L; k++)
      a->hold.data[4 + k] = (uint8_t)(1 + (k * 13 + (size_t)i) % 250);
    size_t extra = i == 1 ? 0 : 4 + 29 + 4 + 5;
    a->want_len = extra + 4 + L;
    a->want = malloc(a->want_len);
    size_t w = 0;
    if (extra) {
      memcpy(a->want, "\0\0\0\1", 4);
      memcpy(a->want + 4, avcc + 8, 29);
      memcpy(a->want + 33, "\0\0\0\1", 4);
      memcpy(a->want + 37, avcc + 40, 5);
      w = extra;
    }
    memcpy(a->want + w, "\0\0\0\1", 4);
    memcpy(a->want + w + 4, a->hold.data + 4, L);
  }
  CHECK(urtp_sendstream_push(ss, aus[0].hold.data, aus[0].hold.len, 0, 0, 0, &aus[0].hold) > 0);
  /* lengths that overrun: refused, the batch keeps the first AU */
  uint8_t bad[6] = { 0, 0, 0x10, 0, 0x41, 0x9a };
  held_t hb = { bad, sizeof(bad), 0 };
  CHECK_EQ(urtp_sendstream_push(ss, bad, sizeof(bad), 3000, 1, 0, &hb), -EBADMSG);
  CHECK_EQ(hb.released, 1);
  CHECK_EQ(aus[0].hold.released, 0);
  CHECK(urtp_sendstream_push(ss, aus[1].hold.data, aus[1].hold.len, 3000, 1, 0, &aus[1].hold) > 0);
  CHECK(urtp_sendstream_push(ss, aus[2].hold.data, aus[2].hold.len, 6000, 2, 0, &aus[2].hold) > 0);
  CHECK_EQ(urtp_sendstream_flush(ss), 0);
  rx_collect(&l, 0, 300);
  CHECK_EQ(check_headers(SEQ0), 3);
  check_aus(URTP_CODEC_H264, aus, 3, NULL);
  urtp_sendstream_free(ss);
  check_released_once(aus, 3);
  for (int i = 0; i < 3; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

/* ---- config-interval -------------------------------------------------------- */

/* IDR after a leading AUD without sets: VPS SPS PPS go after the AUD; a
 * picture that is no IRAP gets none; an IDR that carries its sets gets no
 * second copy; config_interval N waits N seconds between insertions. */
static void run_config_interval(bool thread)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.config_interval = -1;
  cfg.send_thread = thread;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);

  const nal_spec_t sets[] = { { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 } };
  const nal_spec_t first[] = { { AUD, 3, 0 }, { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 },
                               { IDR, 3000, 0 } };
  const nal_spec_t idr_bare[] = { { AUD, 3, 0 }, { IDR, 3000, 0 } };
  const nal_spec_t idr_noaud[] = { { SEI, 20, 0 }, { IDR, 3000, 0 } };
  const nal_spec_t trail[] = { { AUD, 3, 0 }, { TRAIL_R, 2000, 0 } };
  au_t aus[8];
  size_t n = 0;
  au_build(&aus[n++], first, 5, 1, NULL, 0, 0);          /* in band: as is */
  au_build(&aus[n++], trail, 2, 2, NULL, 0, 0);          /* no IRAP */
  au_build(&aus[n++], idr_bare, 2, 3, sets, 3, 1);       /* after the AUD */
  au_build(&aus[n++], first, 5, 4, NULL, 0, 0);          /* carries them: no copy */
  au_build(&aus[n++], idr_noaud, 2, 5, sets, 3, 0);      /* no AUD: at the start */
  /* config_interval 2 s: at t=5.0 s (more than 2 s since 4.0? no: 1 s) not
   * inserted; at t=6.5 s (2.5 s since the last at 4.0) inserted */
  au_build(&aus[n++], idr_bare, 2, 6, NULL, 0, 0);
  au_build(&aus[n++], idr_bare, 2, 7, sets, 3, 1);
  int64_t t[] = { 0, 1000000000, 2000000000, 3000000000, 4000000000, 5000000000, 6500000000 };
  for (size_t i = 0; i < n; i++) {
    if (i == 5)
      urtp_sendstream_set_config_interval(ss, 2);
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 3000, t[i], 0,
                               &aus[i].hold) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
  }
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  rx_collect(&l, 0, 300);
  CHECK_EQ(check_headers(SEQ0), n);
  check_aus(URTP_CODEC_H265, aus, n, NULL);
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.config_missing, 0);
  urtp_sendstream_free(ss);
  check_released_once(aus, n);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

static void test_config_interval_inline(void) { run_config_interval(false); }
static void test_config_interval_thread(void) { run_config_interval(true); }

/* NAL-aligned: the sets go right before the first picture of the IRAP
 * access unit; no sets known at all: counted, nothing inserted. */
static void test_config_interval_nal_aligned(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_sendstream_format_t fmt = h265_au;
  fmt.align_nal = true;
  urtp_sendstream_config_t cfg = base_cfg(&fmt);
  cfg.config_interval = -1;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  const nal_spec_t sets[] = { { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 } };
  const nal_spec_t bare[] = { { AUD, 3, 0 }, { SEI, 9, 0 }, { IDR, 2000, 0 } };
  au_t aus[2];
  au_build(&aus[0], bare, 3, 1, NULL, 0, 0); /* nothing known: as is */
  au_build(&aus[1], bare, 3, 2, sets, 3, 2);
  for (int a = 0; a < 2; a++) {
    if (a == 1)
      for (int k = 0; k < 3; k++) {
        uint8_t b[64];
        nal_fill(b, &sets[k], 0);
        REQUIRE(urtp_params_add((urtp_params_t *)urtp_sendstream_params(ss), b, sets[k].len) == 1);
      }
    /* the three NAL units pushed one by one (4-byte codes at 0, 3-byte at 1) */
    const uint8_t *p = aus[a].hold.data;
    size_t cut[4] = { 0, 4 + 3, 4 + 3 + 3 + 9, aus[a].hold.len };
    held_t h[3];
    for (int k = 0; k < 3; k++) {
      h[k] = (held_t){ NULL, 0, 0 };
      CHECK(urtp_sendstream_push(ss, p + cut[k], cut[k + 1] - cut[k], (uint32_t)a * 3000, a,
                                 k == 2 ? URTP_SEND_END_AU : 0, &h[k]) > 0);
      CHECK_EQ(urtp_sendstream_flush(ss), 0);
      CHECK_EQ(h[k].released, 1);
    }
    aus[a].hold.released = 1;
  }
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.config_missing, 1);
  rx_collect(&l, 0, 300);
  check_aus(URTP_CODEC_H265, aus, 2, NULL);
  urtp_sendstream_free(ss);
  for (int i = 0; i < 2; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

/* ---- parameter-set changes -------------------------------------------------- */

/* New sets in band replace the old ones (serial, SDP); sets inserted from
 * the old generation must still go out intact when the change comes while
 * they wait in the batch being built (several pushes per flush) or in
 * flight on the send thread. They are put at the end of a 4 MB batch, so
 * that the send thread is still on its way to them when the new sets
 * arrive. */
static void run_ps_change(bool thread)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 32 << 20) == 0);
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.config_interval = -1;
  cfg.send_thread = thread;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);

  const nal_spec_t g0[] = { { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 } };
  const nal_spec_t g2[] = { { VPS, 24, 2 }, { SPS, 48, 2 }, { PPS, 10, 2 } };
  const nal_spec_t in0[] = { { AUD, 3, 0 }, { VPS, 24, 0 }, { SPS, 40, 0 }, { PPS, 8, 0 },
                             { IDR, 3000, 0 } };
  const nal_spec_t big[] = { { AUD, 3, 0 }, { TRAIL_R, 4000000, 0 } };
  const nal_spec_t in1[] = { { AUD, 3, 0 }, { VPS, 24, 1 }, { SPS, 44, 1 }, { PPS, 9, 1 },
                             { IDR, 3000, 0 } };
  const nal_spec_t in2[] = { { AUD, 3, 0 }, { VPS, 24, 2 }, { SPS, 48, 2 }, { PPS, 10, 2 },
                             { IDR, 3000, 0 } };
  const nal_spec_t bare[] = { { AUD, 3, 0 }, { IDR, 3000, 0 } };
  au_t aus[6];
  au_build(&aus[0], in0, 5, 1, NULL, 0, 0);
  au_build(&aus[1], big, 2, 2, NULL, 0, 0);
  au_build(&aus[2], bare, 2, 3, g0, 3, 1); /* inserted from generation 0 */
  au_build(&aus[3], in1, 5, 4, NULL, 0, 0);
  au_build(&aus[4], in2, 5, 5, NULL, 0, 0);
  au_build(&aus[5], bare, 2, 6, g2, 3, 1);

  const urtp_params_t *ps = urtp_sendstream_params(ss);
  unsigned serial[6];
  for (size_t i = 0; i < 6; i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 3000,
                               (int64_t)i, 0, &aus[i].hold) > 0);
    serial[i] = ps->serial;
    /* with the thread, 1 and 2 go in flight together; without, 1 to 5
     * stay in one batch while generations 1 and 2 arrive */
    if (i == 0 || (thread && i == 2))
      CHECK_EQ(urtp_sendstream_flush(ss), 0);
  }
  CHECK_EQ(urtp_sendstream_flush(ss), 0);
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  CHECK(urtp_params_complete(ps));
  CHECK(serial[2] == serial[0] && serial[3] != serial[2] && serial[4] != serial[3] &&
        serial[5] == serial[4]);

  /* the SDP has generation 2 */
  char sdp[1024], want[256];
  urtp_sdp_desc_t base = { .addr = "127.0.0.1", .port = 5004 };
  REQUIRE(urtp_sendstream_sdp(ss, &base, sdp, sizeof(sdp)) > 0);
  urtp_params_t g2ps;
  urtp_params_init(&g2ps, URTP_CODEC_H265);
  for (int k = 0; k < 3; k++) {
    uint8_t b[64];
    nal_fill(b, &g2[k], 0);
    urtp_params_add(&g2ps, b, g2[k].len);
  }
  size_t wl = urtp_params_sprop(&g2ps, URTP_PS_BIT(URTP_PS_SPS), want, sizeof(want));
  CHECK(wl > 0 && strstr(sdp, want) != NULL);
  urtp_params_free(&g2ps);

  rx_collect(&l, 0, 500);
  CHECK_EQ(check_headers(SEQ0), 6);
  check_aus(URTP_CODEC_H265, aus, 6, NULL);
  urtp_sendstream_free(ss);
  check_released_once(aus, 6);
  for (int i = 0; i < 6; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

static void test_ps_change_in_batch(void) { run_ps_change(false); }
static void test_ps_change_in_flight(void) { run_ps_change(true); }

/* ---- Opus -------------------------------------------------------------------- */

static void test_opus(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_sendstream_format_t fmt = { .codec = URTP_CODEC_OPUS, .pt = PT, .mtu = 300, .channels = 2 };
  urtp_sendstream_config_t cfg = base_cfg(&fmt);
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  uint8_t head[19] = "OpusHead", tags[16] = "OpusTags", hdr[4] = { 1, 2, 3, 4 };
  held_t hh = { NULL, 0, 0 }, ht = hh, hx = hh, hbig = hh;
  CHECK_EQ(urtp_sendstream_push(ss, head, sizeof(head), 0, 0, 0, &hh), 0);
  CHECK_EQ(urtp_sendstream_push(ss, tags, sizeof(tags), 0, 0, 0, &ht), 0);
  CHECK_EQ(urtp_sendstream_push(ss, hdr, sizeof(hdr), 0, 0, URTP_SEND_HEADER, &hx), 0);
  CHECK(hh.released == 1 && ht.released == 1 && hx.released == 1);
  au_t aus[6];
  for (int i = 0; i < 6; i++) {
    size_t L = 40 + (size_t)i * 30;
    aus[i].hold.data = malloc(L);
    aus[i].hold.len = L;
    aus[i].hold.released = 0;
    for (size_t k = 0; k < L; k++)
      aus[i].hold.data[k] = (uint8_t)(k * 3 + (size_t)i);
    aus[i].want = malloc(L);
    memcpy(aus[i].want, aus[i].hold.data, L);
    aus[i].want_len = L;
  }
  uint8_t big[400] = { 0 };
  for (int i = 0; i < 6; i++) {
    /* a talkspurt starts at 0 and after the gap before packet 3 */
    unsigned fl = i == 3 ? URTP_SEND_DISCONT : 0;
    CHECK_EQ(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 960, -1, fl,
                                  &aus[i].hold), 1);
    if (i == 4) {
      /* larger than the mtu: refused alone */
      CHECK_EQ(urtp_sendstream_push(ss, big, sizeof(big), 0, -1, 0, &hbig), -EMSGSIZE);
      CHECK_EQ(hbig.released, 1);
    }
    if (i % 2)
      CHECK_EQ(urtp_sendstream_flush(ss), 0);
  }
  rx_collect(&l, 6, 300);
  REQUIRE(rxl.n == 6);
  CHECK_EQ(check_headers(SEQ0), 2);
  for (size_t i = 0; i < 6; i++) {
    CHECK_EQ(urtp_rtp_peek_marker(rxl.d[i].p), i == 0 || i == 3);
    CHECK_EQ(urtp_rtp_peek_ts(rxl.d[i].p), i * 960);
  }
  check_aus(URTP_CODEC_OPUS, aus, 6, NULL);
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.access_units, 6);
  urtp_sendstream_free(ss);
  check_released_once(aus, 6);
  for (int i = 0; i < 6; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

/* ---- SRTP and keys ------------------------------------------------------------ */

#ifdef URTP_HAVE_SRTP
static const uint8_t key46[46] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa,
                                   0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01, 0x02, 0x03, 0x04, 0x05,
                                   0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };

static void run_srtp(urtp_srtp_profile_t prof, bool thread)
{
  if (urtp_srtp_profile_available(prof) < 0) {
    printf("# %s not available: skipped\n", urtp_srtp_profile_name(prof));
    return;
  }
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_srtp_config_t sc = { .profile = prof, .key = key46, .key_len = urtp_srtp_key_len(prof) };
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.srtp = &sc;
  cfg.send_thread = thread;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  urtp_sendstream_format_t huge = h265_au;
  huge.mtu = 65535; /* no room left for the tag */
  CHECK_EQ(urtp_sendstream_set_format(ss, &huge), -EMSGSIZE);
  au_t aus[12];
  size_t n = gop(aus, 12, 31);
  for (size_t i = 0; i < n; i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 3000, -1, 0,
                               &aus[i].hold) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    /* protected packets are copies: the input is free once protected */
    CHECK_EQ(aus[i].hold.released, 1);
  }
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  rx_collect(&l, st.packets, 500);
  CHECK_EQ(rxl.n, st.packets);
  /* every packet carries the tag: bytes sent = what arrived */
  uint64_t bytes = 0;
  for (size_t i = 0; i < rxl.n; i++)
    bytes += rxl.d[i].len;
  CHECK_EQ(st.bytes, bytes);
  CHECK_EQ(st.srtp_errors, 0);
  urtp_srtp_t in;
  urtp_srtp_config_t ic = sc;
  ic.dir = URTP_SRTP_INBOUND;
  ic.any_ssrc = true;
  REQUIRE(urtp_srtp_init(&in, &ic) == 0);
  check_aus(URTP_CODEC_H265, aus, n, &in);
  CHECK_EQ(in.stats.packets, rxl.n);
  urtp_srtp_destroy(&in);
  urtp_sendstream_free(ss);
  check_released_once(aus, n);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

static void test_srtp_gcm(void) { run_srtp(URTP_SRTP_AEAD_AES_128_GCM, false); }
static void test_srtp_cm_sha1_thread(void) { run_srtp(URTP_SRTP_AES_CM_128_HMAC_SHA1_80, true); }

/* Keys agreed elsewhere: none for the first flushes (held back and
 * counted, or with allow_clear sent in clear), then keys: keys_ready once,
 * and from there on SRTP. */
typedef struct keyer {
  int calls, ready_calls, keys_from; /* keys from this call on */
  urtp_srtp_config_t sc;
  struct keyer *rtcp;                /* rtcp_key_sync's, with the same user */
} keyer_t;

static bool key_sync(void *user, urtp_srtp_t *ctx)
{
  keyer_t *k = user;
  k->calls++;
  if (k->calls < k->keys_from || ctx->session)
    return ctx->session != NULL;
  urtp_srtp_config_t c = k->sc;
  c.dir = URTP_SRTP_OUTBOUND;
  c.ssrc = SSRC;
  return urtp_srtp_init(ctx, &c) == 0;
}

static void keys_ready(void *user)
{
  ((keyer_t *)user)->ready_calls++;
}

static void run_key_sync(bool allow_clear)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  keyer_t k = { .keys_from = 4,
                .sc = { .profile = URTP_SRTP_AES_CM_128_HMAC_SHA1_80, .key = key46,
                        .key_len = 30 } };
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.key_sync = key_sync;
  cfg.keys_ready = keys_ready;
  cfg.allow_clear = allow_clear;
  cfg.user = &k;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  au_t aus[8];
  size_t n = gop(aus, 8, 77);
  uint64_t early_pkts = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t p0 = 0;
    urtp_sendstream_stats_t st;
    urtp_sendstream_get_stats(ss, &st);
    p0 = st.held_packets + st.sent_clear;
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 3000, -1, 0,
                               &aus[i].hold) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    CHECK_EQ(aus[i].hold.released, 1);
    urtp_sendstream_get_stats(ss, &st);
    if (i < 3)
      early_pkts += st.held_packets + st.sent_clear - p0;
  }
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(k.calls, (int)n);
  CHECK_EQ(k.ready_calls, 1);
  CHECK(early_pkts > 0);
  if (allow_clear) {
    CHECK_EQ(st.held_aus, 0);
    CHECK_EQ(st.held_packets, 0);
    CHECK_EQ(st.sent_clear, early_pkts);
  } else {
    CHECK_EQ(st.held_aus, 3);
    CHECK_EQ(st.held_packets, early_pkts);
    CHECK_EQ(st.sent_clear, 0);
  }
  rx_collect(&l, st.packets, 500);
  CHECK_EQ(rxl.n, st.packets); /* held packets never left */
  /* what was sent with keys unprotects and depacketizes: AUs 3.. */
  urtp_srtp_t in;
  urtp_srtp_config_t ic = k.sc;
  ic.dir = URTP_SRTP_INBOUND;
  ic.any_ssrc = true;
  REQUIRE(urtp_srtp_init(&in, &ic) == 0);
  size_t skip = allow_clear ? early_pkts : 0;
  for (size_t i = 0; i < skip; i++)
    free(rxl.d[i].p);
  memmove(rxl.d, rxl.d + skip, (rxl.n - skip) * sizeof(dgram_t));
  rxl.n -= skip;
  check_aus(URTP_CODEC_H265, aus + 3, n - 3, &in);
  urtp_srtp_destroy(&in);
  /* no rtcp_key_sync: no reports, and none read */
  uint8_t rb[512] = { 0x80, 0xc9, 0x00, 0x01, 0, 0, 0, 1 };
  CHECK_EQ(urtp_sendstream_rtcp_report(ss, 1, 0, false, rb, sizeof rb), -ENOTSUP);
  memcpy(rb, (const uint8_t[]){ 0x80, 0xc9, 0x00, 0x01, 0, 0, 0, 1 }, 8);
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, rb, 8, 0), -EBADMSG);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rtcp_bad, 1);
  CHECK_EQ(st.rtcp_in, 0);
  urtp_sendstream_free(ss);
  check_released_once(aus, n);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

static void test_key_sync_holds_back(void) { run_key_sync(false); }
static void test_key_sync_allow_clear(void) { run_key_sync(true); }

/* Keys for the RTCP contexts, as ZRTP's would come: none before call
 * keys_from, then the static key of sc for either direction. */
static bool rtcp_key_sync(void *user, urtp_srtp_t *ctx, urtp_srtp_dir_t dir, uint32_t ssrc)
{
  keyer_t *k = ((keyer_t *)user)->rtcp;
  k->calls++;
  if (k->calls < k->keys_from || ctx->session)
    return ctx->session != NULL;
  urtp_srtp_config_t c = k->sc;
  c.dir = dir;
  c.ssrc = ssrc;
  c.any_ssrc = ssrc == 0;
  return urtp_srtp_init(ctx, &c) == 0;
}

/* Waits until the RTCP socket has something (or 1 s passed). */
static void wait_readable(urtp_rtcpio_t *io)
{
  struct pollfd pfd = { .fd = io->sock.fd, .events = POLLIN };
  CHECK(poll(&pfd, 1, 1000) == 1);
}

/* SRTCP between a sending stream and a receiving stream keyed alike, over
 * real RTCP sockets: the receiver reads the sender report (count, CNAME,
 * times), the sender the receiver report (its block, the round trip); a
 * compound with one byte changed, a replayed one and one in clear are
 * counted bad and nothing of them is used. With `synced` the sender's
 * keys come through key_sync and rtcp_key_sync, as ZRTP's do: a report is
 * refused (-EAGAIN, nothing counted) until rtcp_key_sync has keys. */
static void run_srtcp(bool synced)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_srtp_config_t sc = { .profile = URTP_SRTP_AES_CM_128_HMAC_SHA1_80, .key = key46,
                            .key_len = 30 };
  keyer_t rk = { .keys_from = 2, .sc = sc };
  keyer_t k = { .keys_from = 1, .sc = sc, .rtcp = &rk };
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.cname = "sender@test";
  if (synced) {
    cfg.key_sync = key_sync;
    cfg.rtcp_key_sync = rtcp_key_sync;
    cfg.user = &k;
  } else {
    cfg.srtp = &sc;
  }
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  const uint64_t ntp = 0xe1000000ull << 32 | 0x40000000u; /* ... .25 s */
  uint8_t sr[512], rr[512], t[512];
  if (synced)
    CHECK_EQ(urtp_sendstream_rtcp_report(ss, ntp, 1, false, sr, sizeof sr), -EAGAIN);

  urtp_rtcpio_t rio, sio;
  urtp_rtcpio_config_t rcr = { .bind_addr = "127.0.0.1" };
  REQUIRE(urtp_rtcpio_open(&rio, &rcr, 0) == 0);
  urtp_rtcpio_config_t rcs = { .bind_addr = "127.0.0.1", .remote_addr = "127.0.0.1",
                               .remote_port = (uint16_t)urtp_sock_local_port(&rio.sock),
                               .we_send = true };
  REQUIRE(urtp_rtcpio_open(&sio, &rcs, 0) == 0);

  au_t aus[4];
  size_t n = gop(aus, 4, 5);
  for (size_t i = 0; i < n; i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 3000, -1, 0,
                               &aus[i].hold) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
  }
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  rx_collect(&l, st.packets, 500);
  REQUIRE(rxl.n == st.packets);

  urtp_srtp_config_t ic = sc;
  ic.dir = URTP_SRTP_INBOUND;
  ic.any_ssrc = true;
  urtp_recvstream_config_t rc = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                  .srtp = &ic, .rtcp_ssrc = 0xfeed, .cname = "receiver@test" };
  urtp_recvstream_t *r;
  REQUIRE(urtp_recvstream_new(&rc, &r) == 0);
  const uint64_t t0 = 1000000000ull, ms = 1000000ull;
  for (size_t i = 0; i < rxl.n; i++)
    urtp_recvstream_push_one(r, rxl.d[i].p, rxl.d[i].len, NULL, t0);
  urtp_recvstream_stats_t rs;
  urtp_recvstream_stats(r, &rs);
  CHECK_EQ(rs.srtp.packets, rxl.n);
  REQUIRE(rs.have_source && rs.ssrc == SSRC);

  /* our SR: SRTCP (header and SSRC in clear, the rest not, E flag and
   * index, 10-byte tag) */
  int len = urtp_sendstream_rtcp_report(ss, ntp, 123456, false, sr, sizeof sr);
  REQUIRE(len > 0);
  CHECK_EQ(sr[1], 200);
  CHECK_EQ((uint32_t)sr[4] << 24 | (uint32_t)sr[5] << 16 | sr[6] << 8 | sr[7], SSRC);
  CHECK_EQ((len - 14) % 4, 0);
  CHECK(sr[len - 14] & 0x80);
  static const uint8_t ntp_be[8] = { 0xe1, 0, 0, 0, 0x40, 0, 0, 0 };
  CHECK(memcmp(sr + 8, ntp_be, 8) != 0);
  CHECK(memmem(sr, (size_t)len, "sender@test", 11) == NULL);
  CHECK_EQ(urtp_rtcpio_send(&sio, sr, (size_t)len, 0), len);
  wait_readable(&rio);
  CHECK_EQ(urtp_recvstream_rtcp_service(r, &rio, t0 + 10 * ms, 0), 1);
  urtp_recvstream_stats(r, &rs);
  CHECK_EQ(rs.rtcp, 1);
  CHECK_EQ(rs.rtcp_bad, 0);
  CHECK_EQ(rs.rtcp_sr, 1);
  CHECK(rs.sr_ntp == ntp);
  CHECK_EQ(rs.sr_rtp_ts, 123456);
  CHECK_EQ(rs.sr_packets, st.packets);
  CHECK_EQ(strcmp(rs.cname, "sender@test"), 0);
  CHECK_EQ(rs.srtcp.packets, 1);

  /* the next SR (a second on: its mapping agrees) with one byte changed,
   * and the first one again: refused,
   * nothing of them used; the next SR itself still passes */
  int len2 = urtp_sendstream_rtcp_report(ss, ntp + (1ull << 32),
                                         123456 + 90000, false, t, sizeof t);
  REQUIRE(len2 == len);
  uint8_t sr2[512];
  memcpy(sr2, t, (size_t)len2);
  t[20] ^= 0x01;
  CHECK_EQ(urtp_rtcpio_send(&sio, t, (size_t)len, 0), len);
  wait_readable(&rio);
  CHECK_EQ(urtp_recvstream_rtcp_service(r, &rio, t0 + 20 * ms, 0), 0);
  CHECK_EQ(urtp_rtcpio_send(&sio, sr, (size_t)len, 0), len);
  wait_readable(&rio);
  CHECK_EQ(urtp_recvstream_rtcp_service(r, &rio, t0 + 30 * ms, 0), 0);
  urtp_recvstream_stats(r, &rs);
  CHECK_EQ(rs.rtcp, 1);
  CHECK_EQ(rs.rtcp_bad, 2);
  CHECK_EQ(rs.srtcp.auth_fail, 1);
  CHECK_EQ(rs.srtcp.replay, 1);
  CHECK_EQ(rs.rtcp_sr, 1);
  CHECK(rs.sr_ntp == ntp);
  CHECK(rs.sr_arrival == t0 + 10 * ms);
  CHECK_EQ(urtp_rtcpio_send(&sio, sr2, (size_t)len, 0), len);
  wait_readable(&rio);
  CHECK_EQ(urtp_recvstream_rtcp_service(r, &rio, t0 + 40 * ms, 0), 1);
  urtp_recvstream_stats(r, &rs);
  CHECK_EQ(rs.rtcp, 2);
  CHECK_EQ(rs.rtcp_sr, 2);
  CHECK(rs.sr_ntp == ntp + (1ull << 32));
  CHECK_EQ(rs.sr_rtp_ts, 123456 + 90000);
  CHECK_EQ(rs.srtcp.packets, 2);

  /* the receiver's report, 250 ms after the last SR arrived, back to
   * where it came from: SRTCP under the receiver's own SSRC */
  int rl = urtp_recvstream_rtcp_report(r, t0 + 290 * ms, false, rr, sizeof rr);
  REQUIRE(rl > 0);
  CHECK_EQ(rr[1], 201);
  CHECK_EQ((uint32_t)rr[4] << 24 | (uint32_t)rr[5] << 16 | rr[6] << 8 | rr[7], 0xfeed);
  CHECK(rr[rl - 14] & 0x80);
  CHECK(memmem(rr, (size_t)rl, "receiver@test", 13) == NULL);
  CHECK_EQ(urtp_rtcpio_send(&rio, rr, (size_t)rl, 0), rl);
  REQUIRE(urtp_rtcpio_recv(&sio, 1000) == 1);
  /* arriving 0.3 s after our last SR: a 50 ms round trip */
  uint64_t arrival = ntp + (1ull << 32) + (3ull << 32) / 10;
  memcpy(t, sio.rx.dgrams[0].data, (size_t)rl);
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, sio.rx.dgrams[0].data, sio.rx.dgrams[0].len, arrival), 0);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rtcp_in, 1);
  CHECK_EQ(st.rtcp_bad, 0);
  CHECK_EQ(st.rr_blocks, 1);
  CHECK_EQ(st.rr_ssrc, 0xfeed);
  CHECK_EQ(st.rr.lost, 0);
  CHECK_EQ(st.rr.ext_max_seq, SEQ0 + st.packets - 1);
  CHECK(st.rtt_ns >= 50000000 - 100000 && st.rtt_ns <= 50000000 + 100000);
  CHECK_EQ(st.srtcp.packets, 1);

  /* the next report with a byte changed, the first again (a replay), one
   * in clear; then the next one itself */
  uint8_t rr2[512];
  int rl2 = urtp_recvstream_rtcp_report(r, t0 + 390 * ms, false, rr2, sizeof rr2);
  REQUIRE(rl2 == rl);
  memcpy(rr, rr2, (size_t)rl);
  rr[12] ^= 0x80;
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, rr, (size_t)rl, arrival), -EBADMSG);
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, t, (size_t)rl, arrival), -EBADMSG);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.srtcp.auth_fail, 1);
  CHECK_EQ(st.srtcp.replay, 1);
  urtp_rtcp_block_t b = { .ssrc = SSRC, .lost = 77 };
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, t, sizeof t);
  urtp_rtcp_write_rr(&w, 0xfeed, &b, 1);
  urtp_rtcp_write_sdes_cname(&w, 0xfeed, "receiver@test");
  REQUIRE(w.err == 0);
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, t, w.len, arrival), -EBADMSG);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rtcp_in, 1);
  CHECK_EQ(st.rtcp_bad, 3);
  /* the clear one is read as SRTCP: refused as one of the three */
  CHECK_EQ(st.srtcp.auth_fail + st.srtcp.replay + st.srtcp.other, 3);
  CHECK_EQ(st.rr_blocks, 1);
  CHECK_EQ(st.rr.lost, 0);
  CHECK_EQ(urtp_sendstream_push_rtcp(ss, rr2, (size_t)rl, arrival), 0);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rtcp_in, 2);
  CHECK_EQ(st.rr_blocks, 2);
  CHECK_EQ(st.srtcp.packets, 2);
  CHECK_EQ(st.rtcp_sent, 2);

  urtp_recvstream_free(r);
  urtp_rtcpio_close(&rio);
  urtp_rtcpio_close(&sio);
  urtp_sendstream_free(ss);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

static void test_srtcp_static(void) { run_srtcp(false); }
static void test_srtcp_synced(void) { run_srtcp(true); }
#endif

/* ---- configuration errors and the SDP ---------------------------------------- */

static void test_config_errors(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 0) == 0);
  urtp_sendstream_t *ss;
  urtp_sendstream_config_t cfg = base_cfg(NULL);
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  held_t h = { NULL, 0, 0 };
  CHECK_EQ(urtp_sendstream_push(ss, (const uint8_t *)"x", 1, 0, -1, 0, &h), -EINVAL);
  CHECK_EQ(h.released, 1);
  char sdp[512];
  urtp_sdp_desc_t base = { .addr = "127.0.0.1", .port = 5004 };
  CHECK_EQ(urtp_sendstream_sdp(ss, &base, sdp, sizeof(sdp)), -ENODATA);
  CHECK_EQ(urtp_sendstream_set_codec_data(ss, avcc, sizeof(avcc)), -EINVAL);
  urtp_sendstream_format_t f = h265_au;
  f.mtu = 63;
  CHECK_EQ(urtp_sendstream_set_format(ss, &f), -EINVAL);
  f = h265_au;
  f.pt = 128;
  CHECK_EQ(urtp_sendstream_set_format(ss, &f), -EINVAL);
  f = h265_au;
  f.codec = URTP_CODEC_H266;
  f.input = URTP_INPUT_LENGTH_PREFIXED;
  CHECK_EQ(urtp_sendstream_set_format(ss, &f), -EINVAL);
  f = (urtp_sendstream_format_t){ .codec = URTP_CODEC_OPUS, .pt = 111, .channels = 3 };
  CHECK_EQ(urtp_sendstream_set_format(ss, &f), -EINVAL);
  f.channels = 1;
  REQUIRE(urtp_sendstream_set_format(ss, &f) == 0);
  CHECK_EQ(urtp_sendstream_set_codec_data(ss, avcc, sizeof(avcc)), -ENOTSUP);
  int n = urtp_sendstream_sdp(ss, &base, sdp, sizeof(sdp));
  char want[512];
  urtp_sdp_desc_t d = base;
  d.session_id = SSRC;
  d.codec = URTP_CODEC_OPUS;
  d.pt = 111;
  d.channels = 1;
  CHECK_EQ(n, urtp_sdp_write(&d, want, sizeof(want)));
  CHECK(strcmp(sdp, want) == 0);
  /* H.264 after Opus: its sets from avcC land in the SDP */
  f = (urtp_sendstream_format_t){ .codec = URTP_CODEC_H264, .pt = PT };
  REQUIRE(urtp_sendstream_set_format(ss, &f) == 0);
  REQUIRE(urtp_sendstream_set_codec_data(ss, avcc, sizeof(avcc)) == 0);
  REQUIRE(urtp_sendstream_sdp(ss, &base, sdp, sizeof(sdp)) > 0);
  CHECK(strstr(sdp, "profile-level-id=640014;sprop-parameter-sets=Z2QAFK") != NULL);
  /* same codec again: the sets stay */
  REQUIRE(urtp_sendstream_set_format(ss, &f) == 0);
  CHECK(urtp_params_complete(urtp_sendstream_params(ss)));
  urtp_sendstream_free(ss);
  urtp_sendstream_free(NULL);
#ifdef URTP_HAVE_SRTP
  urtp_srtp_config_t sc = { .profile = URTP_SRTP_AEAD_AES_128_GCM, .key = key46, .key_len = 28 };
  cfg.srtp = &sc;
  cfg.key_sync = key_sync;
  CHECK_EQ(urtp_sendstream_new(&ss, &l.tx, &cfg), -EINVAL);
  cfg.key_sync = NULL;
  sc.key_len = 27;
  CHECK_EQ(urtp_sendstream_new(&ss, &l.tx, &cfg), -EINVAL);
#endif
  link_close(&l);
}

/* Statistics read from another thread while the stream runs on the send
 * thread: no lock held for longer than a copy, counters never go back. */
typedef struct reader {
  urtp_sendstream_t *ss;
  volatile bool stop;
  long reads, backwards;
} reader_t;

static void *reader_main(void *arg)
{
  reader_t *r = arg;
  uint64_t last = 0;
  while (!r->stop) {
    urtp_sendstream_stats_t st;
    urtp_sendstream_get_stats(r->ss, &st);
    if (st.packets < last)
      r->backwards++;
    last = st.packets;
    r->reads++;
  }
  return NULL;
}

static void test_stats_from_another_thread(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_AUTO, 4 << 20) == 0);
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.send_thread = true;
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  reader_t rd = { .ss = ss };
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, reader_main, &rd) == 0);
  au_t aus[16];
  size_t n = gop(aus, 16, 3);
  for (size_t i = 0; i < n; i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)i * 3000, -1, 0,
                               &aus[i].hold) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    rx_collect(&l, 0, 5); /* keep the receive buffer drained */
  }
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  rd.stop = true;
  pthread_join(th, NULL);
  CHECK(rd.reads > 0);
  CHECK_EQ(rd.backwards, 0);
  urtp_sendstream_free(ss);
  check_released_once(aus, n);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
}

/* ---- a send blocked on a full socket ------------------------------------------ */

typedef struct waker {
  urtp_sendstream_t *ss;
  int delay_ms;
  int64_t at;
} waker_t;

static void *waker_main(void *arg)
{
  waker_t *w = arg;
  usleep((useconds_t)w->delay_ms * 1000);
  w->at = mono_ms();
  urtp_sendstream_unlock(w->ss);
  return NULL;
}

/* In a network namespace of its own (this child process only): loopback
 * through tbf at 4 Mbit/s with a deep queue, and a send buffer of a few
 * KB, so that a 400 KB access unit takes most of a second to leave and the
 * send waits for room all along. Returns the number of failed checks, or
 * 77 to skip. */
static int blocked_child(bool thread)
{
  if (unshare(CLONE_NEWNET) < 0) {
    printf("# unshare(CLONE_NEWNET): %s: skipped\n", strerror(errno));
    return 77;
  }
  if (system("ip link set lo up && tc qdisc add dev lo root tbf rate 4mbit burst 16kb "
             "limit 64mb >/dev/null 2>&1") != 0) {
    printf("# tc tbf on the namespace's loopback failed: skipped\n");
    return 77;
  }
  link_t l;
  if (link_open(&l, URTP_IO_MMSG, 4096) < 0)
    return 1;
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.send_thread = thread;
  urtp_sendstream_t *ss;
  if (urtp_sendstream_new(&ss, &l.tx, &cfg) < 0)
    return 1;
  pusher = pthread_self();
  au_t aus[3];
  const nal_spec_t big[] = { { AUD, 3, 0 }, { IDR, 400000, 0 } };
  const nal_spec_t small[] = { { AUD, 3, 0 }, { TRAIL_R, 20000, 0 } };
  au_build(&aus[0], big, 2, 1, NULL, 0, 0);
  au_build(&aus[1], small, 2, 2, NULL, 0, 0);
  au_build(&aus[2], small, 2, 3, NULL, 0, 0);

  /* 1: the send blocks; unlock ends it at once, with nothing lost */
  CHECK(urtp_sendstream_push(ss, aus[0].hold.data, aus[0].hold.len, 0, -1, 0, &aus[0].hold) > 0);
  waker_t w = { ss, 250, 0 };
  pthread_t th;
  pthread_create(&th, NULL, waker_main, &w);
  int64_t t0 = mono_ms();
  int r = urtp_sendstream_flush(ss);
  if (thread && r == 0) {
    /* the thread holds it: the next flush waits for it, and is the one
     * interrupted */
    CHECK(urtp_sendstream_push(ss, aus[1].hold.data, aus[1].hold.len, 3000, -1, 0,
                               &aus[1].hold) > 0);
    r = urtp_sendstream_flush(ss);
  }
  int64_t t1 = mono_ms();
  pthread_join(th, NULL);
  CHECK_EQ(r, -EINTR);
  printf("# interrupted after %lld ms (unlock at %lld ms)\n", (long long)(t1 - t0),
         (long long)(w.at - t0));
  CHECK(t1 >= w.at);           /* not before the unlock */
  CHECK(t1 - w.at < 100);      /* and promptly after it */
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.interrupts, 1);
  CHECK(st.packets > 0 && st.packets < 300); /* part went out */
  CHECK_EQ(aus[0].hold.released, 0);         /* the rest still points into it */
  held_t hx = { NULL, 0, 0 };
  CHECK_EQ(urtp_sendstream_push(ss, aus[2].hold.data, aus[2].hold.len, 6000, -1, 0, &hx), -EBUSY);
  CHECK_EQ(hx.released, 1);
  /* while unlocked, another try returns at once */
  t0 = mono_ms();
  CHECK_EQ(urtp_sendstream_flush(ss), -EINTR);
  CHECK(mono_ms() - t0 < 100);

  /* 2: unlock_stop, then flush resumes where it stopped */
  urtp_sendstream_unlock_stop(ss);
  do
    r = urtp_sendstream_flush(ss);
  while (thread && r == -EINTR);
  CHECK_EQ(r, 0);
  CHECK_EQ(urtp_sendstream_drain(ss), 0);
  CHECK_EQ(aus[0].hold.released, 1);
  size_t sent_aus = thread ? 2 : 1;

  /* 3: interrupted again, then given up: drop counts and releases */
  CHECK(urtp_sendstream_push(ss, aus[2].hold.data, aus[2].hold.len, 6000, -1, 0, &aus[2].hold) >
        0);
  urtp_sendstream_unlock(ss);
  r = urtp_sendstream_flush(ss);
  if (thread && r == 0)
    r = urtp_sendstream_drain(ss);
  /* the socket may have had room for all of it by now: then nothing waits */
  urtp_sendstream_drop(ss);
  urtp_sendstream_unlock_stop(ss);
  CHECK_EQ(aus[2].hold.released, 1);
  urtp_sendstream_get_stats(ss, &st);
  printf("# third access unit: %s, %llu packets dropped\n", r == -EINTR ? "interrupted" : "sent",
         (unsigned long long)st.dropped);
  if (r == -EINTR)
    CHECK(st.dropped > 0);

  /* what arrived: the first access unit(s) whole and in order */
  rx_collect(&l, 0, 1500);
  size_t keep = 0;
  for (size_t i = 0; i < rxl.n; i++)
    if (urtp_rtp_peek_ts(rxl.d[i].p) < 6000)
      keep = i + 1;
  for (size_t i = keep; i < rxl.n; i++)
    free(rxl.d[i].p);
  rxl.n = keep;
  check_headers(SEQ0);
  check_aus(URTP_CODEC_H265, aus, sent_aus, NULL);
  if (!thread)
    aus[1].hold.released = 1; /* never pushed */
  urtp_sendstream_free(ss);
  check_released_once(aus, 3);
  for (int i = 0; i < 3; i++)
    au_free(&aus[i]);
  rx_reset();
  link_close(&l);
  return tap_cur_failed;
}

static void run_blocked(bool thread)
{
  fflush(stdout);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int r = blocked_child(thread);
    fflush(stdout);
    _exit(r);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77)
    return;
  CHECK_EQ(WEXITSTATUS(status), 0);
}

static void test_unlock_blocked_send_inline(void) { run_blocked(false); }
static void test_unlock_blocked_send_thread(void) { run_blocked(true); }

/* The receivers' table: one entry per reporter with its latest block about
 * us, a BYE removes it, the one heard from longest ago gives way when
 * full; a leaving report without a clock mapping is RR + SDES + BYE. */
static void test_rtcp_receivers(void)
{
  link_t l;
  REQUIRE(link_open(&l, URTP_IO_GSO, 4 << 20) == 0);
  urtp_sendstream_format_t fmt = h265_au;
  urtp_sendstream_config_t cfg = base_cfg(&fmt);
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &l.tx, &cfg) == 0);
  const uint64_t ntp = 0xe1000000ull << 32;
  uint8_t buf[256];
  urtp_rtcp_writer_t w;

  /* reporters 1..20, each one block about us (lost = its number), a
   * second from reporter 3; reporter 2 leaves */
  for (uint32_t who = 1; who <= 20; who++) {
    urtp_rtcp_block_t b = { .ssrc = SSRC, .lost = (int32_t)who };
    urtp_rtcp_writer_init(&w, buf, sizeof buf);
    urtp_rtcp_write_rr(&w, who, &b, 1);
    urtp_rtcp_write_sdes_cname(&w, who, "r@test");
    if (who == 2)
      urtp_rtcp_write_bye(&w, &who, 1, NULL);
    REQUIRE(w.err == 0);
    CHECK_EQ(urtp_sendstream_push_rtcp(ss, buf, w.len, ntp + who), 0);
    if (who == 3) {
      b.lost = 33;
      urtp_rtcp_writer_init(&w, buf, sizeof buf);
      urtp_rtcp_write_rr(&w, who, &b, 1);
      CHECK_EQ(urtp_sendstream_push_rtcp(ss, buf, w.len, ntp + 100), 0);
    }
  }
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rr_blocks, 21);
  CHECK_EQ(st.nreceivers, URTP_SENDSTREAM_MAX_RECEIVERS);
  bool seen[21] = { false };
  for (unsigned i = 0; i < st.nreceivers; i++) {
    const urtp_sendstream_receiver_t *e = &st.receivers[i];
    REQUIRE(e->ssrc >= 1 && e->ssrc <= 20);
    seen[e->ssrc] = true;
    CHECK_EQ(e->rr.lost, e->ssrc == 3 ? 33 : (int32_t)e->ssrc);
    CHECK_EQ(e->reports, e->ssrc == 3 ? 2 : 1);
    CHECK(e->last_ntp == ntp + (e->ssrc == 3 ? 100 : e->ssrc));
    CHECK_EQ(e->rtt_ns, -1);
  }
  /* 19 stayed; 2 left; 1, 4 and 5, heard from longest ago, gave way
   * (3 was heard again) */
  for (uint32_t who = 1; who <= 20; who++)
    CHECK_EQ(seen[who], who != 1 && who != 2 && who != 4 && who != 5);

  int len = urtp_sendstream_rtcp_report(ss, 0, 0, true, buf, sizeof buf);
  REQUIRE(len > 0);
  urtp_rtcp_info_t info;
  REQUIRE(urtp_rtcp_parse(buf, (size_t)len, 0, &info) == 0);
  REQUIRE(info.nreports == 1);
  CHECK(!info.reports[0].is_sr);
  CHECK_EQ(info.reports[0].sr.ssrc, SSRC);
  CHECK(info.ncnames == 1 && info.nbyes == 1 && info.byes[0] == SSRC);
  urtp_sendstream_free(ss);
  link_close(&l);
}

/* ---- clients (fan-out) ------------------------------------------------------ */

static struct sockaddr_storage addr_of(const urtp_sock_t *s)
{
  struct sockaddr_storage a;
  socklen_t l = sizeof a;
  getsockname(s->fd, (struct sockaddr *)&a, &l);
  return a;
}

/* Every datagram of a client's socket into rxl (after rx_reset). */
static size_t take_all(link_t *l)
{
  rx_reset();
  rx_collect(l, 0, 200);
  return rxl.n;
}

static bool rtcp_clock(void *user, uint64_t *ntp, uint32_t *ts)
{
  (void)user;
  *ntp = urtp_ntp_now();
  *ts = 0;
  return true;
}

/* One stream to clients A, B and C (real sockets): each gets every packet
 * of its time as a client, byte for byte, packetized once (the stream's
 * packets count each once, packets_served each copy); removing A and adding
 * C loses nothing for B; B added twice gets two copies, one again without
 * send_duplicates. A NACK from B's RTCP socket is answered to B alone, and
 * our reports go to every client's RTCP address. `thread`: on the send
 * thread. */
static void run_fanout(bool thread)
{
  link_t a, b, c;
  REQUIRE(link_open(&a, URTP_IO_GSO, 4 << 20) == 0);
  REQUIRE(link_open(&b, URTP_IO_GSO, 4 << 20) == 0);
  REQUIRE(link_open(&c, URTP_IO_GSO, 4 << 20) == 0);
  urtp_rtcpio_t brtcp;             /* B's RTCP socket */
  urtp_rtcpio_config_t bc = { .bind_addr = "127.0.0.1" };
  REQUIRE(urtp_rtcpio_open(&brtcp, &bc, 0) == 0);
  struct sockaddr_storage aa = addr_of(&a.rx), ba = addr_of(&b.rx), ca = addr_of(&c.rx),
                          br = addr_of(&brtcp.sock);
  urtp_sendstream_config_t cfg = base_cfg(&h265_au);
  cfg.send_thread = thread;
  cfg.rtx = true;
  cfg.rtx_pt = 97;
  urtp_sendstream_t *ss;
  /* the sending socket is a.tx, connected to A at first */
  REQUIRE(urtp_sendstream_new(&ss, &a.tx, &cfg) == 0);
  CHECK_EQ(urtp_sendstream_add_client(ss, &aa, NULL), 1);
  CHECK_EQ(urtp_sendstream_add_client(ss, &ba, &br), 1);
  struct sockaddr_storage bad = aa;
  ((struct sockaddr_in *)&bad)->sin_port = 0;
  CHECK_EQ(urtp_sendstream_add_client(ss, &bad, NULL), -EINVAL);
  CHECK_EQ(urtp_sendstream_remove_client(ss, &ca), -ENOENT);

  au_t aus[24];
  size_t n = gop(aus, 24, 11);
  size_t per[3] = { 0 };            /* packets of each part */
  uint64_t p0 = 0;
  for (size_t part = 0; part < 3; part++) {
    for (size_t i = part * 8; i < part * 8 + 8; i++) {
      CHECK(urtp_sendstream_push(ss, aus[i].hold.data, aus[i].hold.len, (uint32_t)(i * 3000),
                                 (int64_t)i * 33333333, 0, &aus[i].hold) > 0);
      CHECK_EQ(urtp_sendstream_flush(ss), 0);
    }
    CHECK_EQ(urtp_sendstream_drain(ss), 0);
    urtp_sendstream_stats_t st;
    urtp_sendstream_get_stats(ss, &st);
    per[part] = st.packets - p0;
    p0 = st.packets;
    if (part == 0) {
      /* A and B: every access unit, whole */
      CHECK_EQ(take_all(&a), per[0]);
      CHECK_EQ(check_headers(SEQ0), 8);
      check_aus(URTP_CODEC_H265, aus, 8, NULL);
      CHECK_EQ(take_all(&b), per[0]);
      check_aus(URTP_CODEC_H265, aus, 8, NULL);
      CHECK_EQ(take_all(&c), 0);
      CHECK(st.packets_served == 2 * st.packets);
      CHECK_EQ(st.nclients, 2);
      /* C comes, A goes, B twice */
      CHECK_EQ(urtp_sendstream_add_client(ss, &ca, NULL), 1);
      CHECK_EQ(urtp_sendstream_remove_client(ss, &aa), 0);
      CHECK_EQ(urtp_sendstream_add_client(ss, &ba, NULL), 2);
    } else if (part == 1) {
      CHECK_EQ(take_all(&a), 0);
      CHECK_EQ(take_all(&c), per[1]);
      CHECK_EQ(check_headers((uint16_t)(SEQ0 + per[0])), 8);
      check_aus(URTP_CODEC_H265, aus + 8, 8, NULL);
      CHECK_EQ(take_all(&b), 2 * per[1]);   /* two copies of each */
      urtp_sendstream_set_send_duplicates(ss, false);
    } else {
      CHECK_EQ(take_all(&b), per[2]);
      check_aus(URTP_CODEC_H265, aus + 16, 8, NULL);
      CHECK_EQ(take_all(&c), per[2]);
    }
  }
  urtp_sendstream_client_t cl[4];
  CHECK_EQ(urtp_sendstream_get_clients(ss, cl, 4), 2);
  CHECK(urtp_addr_equal(&cl[0].addr, &ba) && cl[0].adds == 2);
  CHECK(cl[0].packets == per[0] + 2 * per[1] + per[2]);
  CHECK(urtp_addr_equal(&cl[1].addr, &ca) && cl[1].packets == per[1] + per[2]);
  urtp_sendstream_client_t ga;
  REQUIRE(urtp_sendstream_get_client(ss, &aa, &ga) == 0);
  CHECK(ga.adds == 0 && ga.packets == per[0] && ga.removed_ns >= ga.added_ns && ga.added_ns > 0);

  /* RTCP: the stream's socket for it, our reports to B's RTCP address */
  urtp_rtcpio_t sio;
  urtp_rtcpio_config_t sc = { .bind_addr = "127.0.0.1", .we_send = true, .early_first = true };
  REQUIRE(urtp_rtcpio_open(&sio, &sc, 0) == 0);
  REQUIRE(urtp_sendstream_rtcp_start(ss, &sio, rtcp_clock, NULL, NULL) == 0);
  REQUIRE(urtp_rtcpio_recv(&brtcp, 2000) >= 1);
  CHECK_EQ(brtcp.rx.dgrams[0].data[1], URTP_RTCP_SR);
  struct sockaddr_storage from = *brtcp.rx.dgrams[0].from;
  /* B asks for the last access unit's first packet, from its RTCP socket */
  uint16_t last = (uint16_t)(SEQ0 + p0 - 3);
  uint8_t buf[128];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, sizeof buf);
  urtp_rtcp_block_t blk = { .ssrc = SSRC };
  urtp_rtcp_write_rr(&w, 0xb0b, &blk, 1);
  urtp_rtcp_write_nack(&w, 0xb0b, SSRC, &last, 1);
  REQUIRE(w.err == 0);
  CHECK_EQ(urtp_sock_sendto(&brtcp.sock, buf, w.len, (struct sockaddr *)&from,
                            urtp_addr_len(&from)), (int)w.len);
  rx_reset();
  rx_collect(&b, 1, 2000);
  REQUIRE(rxl.n == 1);
  urtp_rtp_pkt_t rp;
  REQUIRE(urtp_rtp_parse(rxl.d[0].p, rxl.d[0].len, &rp) == 0);
  CHECK_EQ(rp.hdr.pt, 97);
  CHECK_EQ(urtp_rd16(rp.payload), last);
  CHECK_EQ(take_all(&c), 0);        /* only B asked */
  CHECK_EQ(take_all(&a), 0);
  urtp_sendstream_rtcp_stop(ss, false);
  REQUIRE(urtp_sendstream_get_client(ss, &ba, &cl[0]) == 0);
  CHECK_EQ(cl[0].rtx_packets, 1);
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rtx_packets, 1);
  REQUIRE(st.nreceivers == 1);
  CHECK(urtp_addr_equal(&st.receivers[0].from, &br));

  urtp_sendstream_clear_clients(ss);
  CHECK_EQ(urtp_sendstream_get_clients(ss, NULL, 0), 0);
  urtp_sendstream_free(ss);
  for (size_t i = 0; i < n; i++)
    au_free(&aus[i]);
  rx_reset();
  urtp_rtcpio_close(&sio);
  urtp_rtcpio_close(&brtcp);
  link_close(&a);
  link_close(&b);
  link_close(&c);
}

static void test_fanout_inline(void) { run_fanout(false); }
static void test_fanout_thread(void) { run_fanout(true); }

int main(void)
{
  pusher = pthread_self();
  TAP_RUN(test_au_inline_gso);
  TAP_RUN(test_fanout_inline);
  TAP_RUN(test_fanout_thread);
  TAP_RUN(test_au_paced_inline);
  TAP_RUN(test_au_paced_thread);
  TAP_RUN(test_paced_thread_on_pacing);
  TAP_RUN(test_au_paced_mmsg);
  TAP_RUN(test_pacing_behind);
  TAP_RUN(test_rtcp);
  TAP_RUN(test_au_inline_mmsg_aggregate);
  TAP_RUN(test_au_send_thread);
  TAP_RUN(test_au_send_thread_plain);
  TAP_RUN(test_several_pushes_per_flush);
  TAP_RUN(test_nal_aligned_markers);
  TAP_RUN(test_nal_aligned_timestamps);
  TAP_RUN(test_length_prefixed);
  TAP_RUN(test_config_interval_inline);
  TAP_RUN(test_config_interval_thread);
  TAP_RUN(test_config_interval_nal_aligned);
  TAP_RUN(test_ps_change_in_batch);
  TAP_RUN(test_ps_change_in_flight);
  TAP_RUN(test_opus);
#ifdef URTP_HAVE_SRTP
  TAP_RUN(test_srtp_gcm);
  TAP_RUN(test_srtp_cm_sha1_thread);
  TAP_RUN(test_key_sync_holds_back);
  TAP_RUN(test_key_sync_allow_clear);
  TAP_RUN(test_srtcp_static);
  TAP_RUN(test_srtcp_synced);
#endif
  TAP_RUN(test_config_errors);
  TAP_RUN(test_stats_from_another_thread);
  TAP_RUN(test_unlock_blocked_send_inline);
  TAP_RUN(test_unlock_blocked_send_thread);
  TAP_RUN(test_rtcp_receivers);
  return tap_done();
}
