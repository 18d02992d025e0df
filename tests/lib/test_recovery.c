/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_recovery - loss recovery with lib/ alone, on real sockets: a
 * sendstream with retransmission sends H.265 access units through the
 * tests' relay (random loss, 10 ms each way); its sender reports reach the
 * receiver through a second relay that carries the receiver's NACKs back
 * (so a NACK and its answer take 20 ms). Every access unit must arrive
 * whole and byte for byte, and the counters of both ends and of the relay
 * must add up exactly. Then a NACK storm against a sender: what it
 * retransmits stays within its budget. Then congestion control with two
 * receivers (a fan-out's clients), one behind loss: the stream follows
 * the one whose path is worse.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "relay.h"
#include "tap.h"
#include "urtp/recvstream.h"
#include "urtp/rtcp.h"
#include "urtp/rtcpio.h"
#include "urtp/rtx.h"
#include "urtp/sendstream.h"

#define MS 1000000ull
#define NAU 150
#define PT 96
#define RTX_PT 97
#define SSRC 0x5e4d0001u

static uint64_t mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the access units ---------------------------------------------------- */

typedef struct au {
  uint8_t *data;
  size_t len;
  int released;
} au_t;

static au_t aus[NAU];

/* An IDR picture, then trailing pictures: one NAL unit each, 4-byte start
 * codes, 20-60 KB of bytes that hold no start code. */
static void make_aus(uint64_t seed)
{
  for (int i = 0; i < NAU; i++) {
    size_t n = 20000 + tap_rand(&seed) % 40000;
    au_t *a = &aus[i];
    a->data = malloc(n);
    a->len = n;
    a->released = 0;
    memcpy(a->data, "\0\0\0\1", 4);
    a->data[4] = (uint8_t)((i == 0 ? 19 : 1) << 1);
    a->data[5] = 1;
    for (size_t k = 6; k < n; k++)
      a->data[k] = (uint8_t)(tap_rand(&seed) | 1);
    a->data[6] |= 0x80;       /* first_slice_segment_in_pic_flag */
  }
}

static void free_aus(void)
{
  for (int i = 0; i < NAU; i++)
    free(aus[i].data);
}

static void on_release(void *user, void *hold)
{
  (void)user;
  ((au_t *)hold)->released++;
}

static bool clock_fn(void *user, uint64_t *ntp, uint32_t *rtp_ts)
{
  (void)user;
  *ntp = urtp_ntp_now();
  *rtp_ts = (uint32_t)(mono() / 11111); /* 90 kHz */
  return true;
}

/* ---- the receiver, on a thread of its own --------------------------------- */

typedef struct receiver {
  urtp_sock_t sock;
  urtp_rx_t rx;
  urtp_rtcpio_t io;
  urtp_recvstream_t *rs;
  pthread_t thread;
  atomic_bool stop;
  int frames, intact;
  bool seen[NAU];
  bool in_order;
  bool quiet;                   /* frames not checked (a lossy path's) */
  uint32_t last_ts;
} receiver_t;

static void take_frames(receiver_t *rc)
{
  urtp_recvstream_frame_t f;
  while (urtp_recvstream_pop(rc->rs, &f)) {
    int i = (int)(f.au.rtp_ts / 3000);
    if (i >= 0 && i < NAU && f.au.len == aus[i].len &&
        memcmp(f.au.data, aus[i].data, f.au.len) == 0 && !(f.flags & URTP_AU_DAMAGED))
      rc->intact++;
    else if (!rc->quiet)
      printf("# frame ts %u (%d): %zu bytes, flags 0x%x, not the access unit sent\n",
             f.au.rtp_ts, i, f.au.len, f.flags);
    if (i >= 0 && i < NAU)
      rc->seen[i] = true;
    if (rc->frames && f.au.rtp_ts <= rc->last_ts)
      rc->in_order = false;
    rc->last_ts = f.au.rtp_ts;
    rc->frames++;
    urtp_depay_release(f.au.data);
  }
}

static void *receiver_main(void *arg)
{
  receiver_t *rc = arg;
  while (!atomic_load(&rc->stop)) {
    uint64_t now = mono();
    uint64_t d = urtp_recvstream_deadline(rc->rs), io_d = urtp_rtcpio_deadline(&rc->io);
    if (io_d < d)
      d = io_d;
    int wait = d <= now ? 0 : d - now > 10 * MS ? 10 : (int)((d - now + MS - 1) / MS);
    int n = urtp_sock_recv(&rc->sock, &rc->rx, wait);
    now = mono();
    if (n > 0)
      urtp_recvstream_push_rx(rc->rs, &rc->sock, &rc->rx, (size_t)n, now);
    urtp_recvstream_expire(rc->rs, now);
    urtp_recvstream_rtcp_service(rc->rs, &rc->io, now, now);
    take_frames(rc);
  }
  return NULL;
}

/* twcc_id: congestion control feedback on that element (0: none). */
static int receiver_start(receiver_t *rc, const urtp_srtp_config_t *srtp, unsigned twcc_id)
{
  memset(rc, 0, sizeof *rc);
  rc->in_order = true;
  urtp_sock_config_t sc = { .bind_addr = "127.0.0.1", .rcvbuf = 16 << 20,
                            .rx_mode = URTP_IO_MMSG };
  int r;
  if ((r = urtp_sock_open(&rc->sock, &sc)) < 0 || (r = urtp_rx_init(&rc->rx, 64, 2048)) < 0)
    return r;
  urtp_rtcpio_config_t ic = { .bind_addr = "127.0.0.1", .min_interval = 200 * MS };
  if ((r = urtp_rtcpio_open(&rc->io, &ic, mono())) < 0)
    return r;
  rc->sock.watch_fd = rc->io.sock.fd;
  urtp_recvstream_config_t cfg = {
    .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1, .latency = 200 * MS,
    .srtp = srtp, .nack = true, .rtx = true, .rtx_pt = RTX_PT,
  };
  if ((r = urtp_recvstream_new(&cfg, &rc->rs)) < 0)
    return r;
  if (twcc_id && (r = urtp_recvstream_set_ccfb(rc->rs, twcc_id, false, 0)) < 0)
    return r;
  return pthread_create(&rc->thread, NULL, receiver_main, rc) ? -EAGAIN : 0;
}

static void receiver_stop(receiver_t *rc)
{
  atomic_store(&rc->stop, true);
  pthread_join(rc->thread, NULL);
  urtp_recvstream_flush(rc->rs);
  take_frames(rc);
}

static void receiver_free(receiver_t *rc)
{
  urtp_recvstream_free(rc->rs);
  urtp_rtcpio_close(&rc->io);
  urtp_rx_destroy(&rc->rx);
  urtp_sock_close(&rc->sock);
}

/* ---- sender -> relay (media) -> receiver; sender <-> relay (RTCP) <-> receiver */

static const uint8_t key[28] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                                 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28 };

static void run(double loss, uint64_t seed, bool srtp)
{
  make_aus(seed);
  urtp_srtp_config_t in = { .profile = URTP_SRTP_AEAD_AES_128_GCM, .dir = URTP_SRTP_INBOUND,
                            .key = key, .key_len = sizeof key, .any_ssrc = true };
  urtp_srtp_config_t out = in;
  out.dir = URTP_SRTP_OUTBOUND;
  static receiver_t rc;
  REQUIRE(receiver_start(&rc, srtp ? &in : NULL, 0) == 0);

  static relay_t media, rtcp;
  relay_config_t mc = { .seed = seed, .drop = loss, .delay_ms = 10, .skip_first = 100,
                        .to_port = (uint16_t)urtp_sock_local_port(&rc.sock) };
  relay_config_t ic = { .seed = seed + 1, .delay_ms = 10, .reverse = true,
                        .to_port = (uint16_t)urtp_sock_local_port(&rc.io.sock) };
  REQUIRE(relay_start(&media, &mc) == 0);
  REQUIRE(relay_start(&rtcp, &ic) == 0);

  urtp_sock_t tx;
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1", .remote_port = media.port,
                            .tx_mode = URTP_IO_AUTO };
  REQUIRE(urtp_sock_open(&tx, &tc) == 0);
  urtp_sendstream_format_t fmt = { .codec = URTP_CODEC_H265, .pt = PT, .mtu = 1200 };
  urtp_sendstream_config_t cfg = { .ssrc = SSRC, .seq_start = 65000, .format = &fmt,
                                   .release = on_release, .srtp = srtp ? &out : NULL,
                                   .rtx = true, .rtx_pt = RTX_PT };
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &tx, &cfg) == 0);
  urtp_rtcpio_t sio;
  urtp_rtcpio_config_t sic = { .bind_addr = "127.0.0.1", .remote_addr = "127.0.0.1",
                               .remote_port = rtcp.port, .min_interval = 100 * MS,
                               .we_send = true };
  REQUIRE(urtp_rtcpio_open(&sio, &sic, mono()) == 0);
  REQUIRE(urtp_sendstream_rtcp_start(ss, &sio, clock_fn, NULL, NULL) == 0);

  for (int i = 0; i < NAU; i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].data, aus[i].len, (uint32_t)i * 3000, -1, 0,
                               &aus[i]) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    usleep(10000);
  }
  /* the last losses have their 200 ms */
  usleep(400000);
  receiver_stop(&rc);
  urtp_sendstream_rtcp_stop(ss, false);
  relay_stop(&media);
  relay_stop(&rtcp);

  urtp_sendstream_stats_t s;
  urtp_recvstream_stats_t r;
  urtp_sendstream_get_stats(ss, &s);
  urtp_recvstream_stats(rc.rs, &r);
  printf("# loss %.2f%s: relay dropped %" PRIu64 " of %" PRIu64 "; receiver missed %" PRIu64
         ", asked %" PRIu64 " in %" PRIu64 " NACKs, recovered %" PRIu64 ", rtx in %" PRIu64
         ", rtt %" PRIu64 " us, %" PRIu64 " asked again at once; sender rtx %" PRIu64 " (%" PRIu64
         " repeats); frames %d intact %d\n",
         loss, srtp ? " srtp" : "", media.stats.dropped, media.stats.received, r.nack.missing,
         r.nack.requests, r.nacks_sent, r.nack.recovered, r.rtx, r.nack.rtt / 1000,
         r.nack.fast_retries, s.rtx_packets, s.rtx_repeats, rc.frames, rc.intact);

  printf("# depay: packets %" PRIu64 " aus %" PRIu64 " dropped_aus %" PRIu64 " skipped %" PRIu64
         " malformed %" PRIu64 " dup %" PRIu64 " late %" PRIu64 "; source delivered %" PRIu64
         " held_dropped %" PRIu64 " foreign %" PRIu64 "; datagrams %" PRIu64 "\n",
         r.depay.packets, r.depay.aus, r.depay.dropped_aus, r.depay.skipped, r.depay.malformed,
         r.depay.seq.duplicates, r.depay.seq.late, r.source.delivered, r.source.held_dropped,
         r.source.foreign, r.datagrams);
  for (int i = 0; i < NAU; i++)
    if (!rc.seen[i])
      printf("# access unit %d (ts %d) did not come out\n", i, i * 3000);
  /* every access unit whole, in order */
  CHECK_EQ(rc.frames, NAU);
  CHECK_EQ(rc.intact, NAU);
  CHECK(rc.in_order);
  CHECK_EQ(r.depay.seq.lost, 0);
  /* the relay saw the media and the retransmissions, and dropped some of
   * both: the receiver missed the media it dropped, and lacks the RTX (a
   * retransmission slower than the receiver's patience, on a loaded
   * machine, is asked for again: the second answer is dropped, a repeat) */
  CHECK_EQ(media.stats.received, s.packets + s.rtx_packets);
  CHECK_EQ(r.nack.missing + (s.rtx_packets - r.rtx - r.rtx_dropped), media.stats.dropped);
  CHECK(r.nack.missing > 0);
  CHECK_EQ(r.nack.recovered, r.nack.missing);
  CHECK_EQ(r.nack.lost + r.nack.late, 0);
  CHECK(r.rtx_dropped <= r.nack.requests - r.nack.missing);
  CHECK_EQ(r.rtx_ssrc, s.rtx_ssrc);
  /* what was asked was answered, NACK for NACK (the way back loses none) */
  CHECK_EQ(s.nacks_received, r.nacks_sent);
  CHECK_EQ(s.nack_seqs, r.nack.requests);
  CHECK_EQ(s.nack_seqs, s.rtx_packets + s.rtx_missing + s.rtx_repeats + s.rtx_over_budget +
                            s.rtx_errors);
  CHECK_EQ(s.rtx_missing + s.rtx_over_budget + s.rtx_errors, 0);
  CHECK(r.nack.rtt >= 20 * MS && r.nack.rtt < 60 * MS);
  /* a retransmission lost shows as a gap in the RTX stream once a later one
   * arrives: at most one request at once for each, and some at 5 % */
  CHECK(r.nack.fast_retries <= s.rtx_packets - r.rtx);
  if (loss >= 0.05)
    CHECK(r.nack.fast_retries > 0);
  /* every datagram was unprotected: the media that came, the RTX taken,
   * and the RTX dropped as a repeat of one taken (CI, loaded: 4968
   * against 4966 without them) */
  if (srtp)
    CHECK_EQ(r.srtp.packets, s.packets - r.nack.missing + r.rtx + r.rtx_dropped);

  urtp_sendstream_free(ss);
  /* every hold released once, the history's included */
  int once = 0;
  for (int i = 0; i < NAU; i++)
    once += aus[i].released == 1;
  CHECK_EQ(once, NAU);
  urtp_rtcpio_close(&sio);
  urtp_sock_close(&tx);
  receiver_free(&rc);
  relay_free(&media);
  relay_free(&rtcp);
  free_aus();
}

static void test_loss_1(void) { run(0.01, 11, false); }
static void test_loss_5(void) { run(0.05, 12, false); }
static void test_loss_5_srtp(void) { run(0.05, 13, true); }

/* ---- a NACK storm ------------------------------------------------------------ */

/* A "receiver" NACKs every packet the sender has sent, a thousand times a
 * second, while it streams 100 access units: what goes out again stays
 * within the budget (half the bitrate, a second's worth at once), each
 * number at most once per hold time; every number asked is accounted for.
 * With congestion control (cc_bps: its target), the budget is half the
 * target, even when the stream sent more over the last second (a step
 * down: retransmissions at the old rate kept the new queue full). */
static void nack_storm(uint64_t cc_bps)
{
  make_aus(99);
  urtp_sock_t rx, tx;
  urtp_sock_config_t rc = { .bind_addr = "127.0.0.1", .rcvbuf = 1 << 20 };
  REQUIRE(urtp_sock_open(&rx, &rc) == 0);
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)urtp_sock_local_port(&rx) };
  REQUIRE(urtp_sock_open(&tx, &tc) == 0);
  urtp_sendstream_format_t fmt = { .codec = URTP_CODEC_H265, .pt = PT, .mtu = 1200 };
  urtp_sendstream_config_t cfg = { .ssrc = SSRC, .format = &fmt, .release = on_release,
                                   .rtx = true, .rtx_pt = RTX_PT };
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &tx, &cfg) == 0);
  urtp_cc_config_t ccc = { .min_bps = cc_bps, .max_bps = cc_bps, .start_bps = cc_bps };
  if (cc_bps)
    REQUIRE(urtp_sendstream_set_congestion(ss, &ccc) == 0);

  uint64_t t0 = mono(), sent = 0;
  unsigned compounds = 0;
  int au = 0;
  uint8_t buf[1500];
  uint16_t seqs[URTP_RTCP_MAX_NACK_PAIRS * 16];
  while (au < 100) {
    if (mono() - t0 >= (uint64_t)au * 10 * MS) {
      CHECK(urtp_sendstream_push(ss, aus[au].data, aus[au].len, (uint32_t)au * 3000, -1, 0,
                                 &aus[au]) > 0);
      CHECK_EQ(urtp_sendstream_flush(ss), 0);
      au++;
    }
    /* ask for the last 1024 packets sent, all of them */
    urtp_sendstream_stats_t s;
    urtp_sendstream_get_stats(ss, &s);
    unsigned n = 0;
    for (uint64_t k = s.packets > 1024 ? s.packets - 1024 : 0; k < s.packets; k++)
      seqs[n++] = (uint16_t)k;
    if (n) {
      urtp_rtcp_writer_t w;
      urtp_rtcp_writer_init(&w, buf, sizeof buf);
      urtp_rtcp_write_rr(&w, 0xbad, NULL, 0);
      urtp_rtcp_write_nack(&w, 0xbad, SSRC, seqs, n);
      REQUIRE(w.err == 0);
      CHECK_EQ(urtp_sendstream_push_rtcp(ss, buf, w.len, urtp_ntp_now()), 0);
      compounds++;
    }
    usleep(1000);
    sent = s.bytes;
  }
  double secs = (double)(mono() - t0) / 1e9;
  urtp_sendstream_stats_t s;
  urtp_sendstream_get_stats(ss, &s);
  printf("# storm: %u NACKs asking %" PRIu64 " in %.2f s; sent %" PRIu64 " bytes, retransmitted %"
         PRIu64 " bytes in %" PRIu64 " packets; %" PRIu64 " repeats, %" PRIu64 " over budget, %"
         PRIu64 " missing\n", compounds, s.nack_seqs, secs, sent, s.rtx_bytes, s.rtx_packets,
         s.rtx_repeats, s.rtx_over_budget, s.rtx_missing);
  CHECK_EQ(s.nacks_received, compounds);
  CHECK_EQ(s.nack_seqs, s.rtx_packets + s.rtx_missing + s.rtx_repeats + s.rtx_over_budget +
                            s.rtx_errors);
  /* the budget: half the bitrate (of the last second: at most a second
   * behind), and the bucket of a quarter second of it, no more */
  CHECK(s.rtx_bytes <= (uint64_t)(URTP_SENDSTREAM_RTX_SHARE * (double)sent *
                                  (1 + (1.0 + URTP_RTX_BUCKET_NS / 1e9) / secs)) +
                           URTP_RTX_BUCKET_MIN);
  if (cc_bps) {
    /* the sender sent well over the target (the pacer's factor): the
     * meter's budget would have been larger */
    CHECK(8.0 * (double)sent / secs > 1.5 * (double)cc_bps);
    CHECK(s.rtx_bytes <= (uint64_t)(URTP_SENDSTREAM_RTX_SHARE * (double)cc_bps / 8 *
                                    (secs + URTP_RTX_BUCKET_NS / 1e9)) +
                             URTP_RTX_BUCKET_MIN);
  }
  /* (paced, the loop asks less often than the storm above) */
  if (!cc_bps)
    CHECK(s.rtx_repeats > s.rtx_packets);
  CHECK(s.rtx_over_budget > 0);
  urtp_sendstream_free(ss);
  urtp_sock_close(&tx);
  urtp_sock_close(&rx);
  free_aus();
}

static void test_nack_storm(void) { nack_storm(0); }
static void test_nack_storm_cc(void) { nack_storm(10000000); }

/* ---- congestion control, two receivers ------------------------------------ */

static struct sockaddr_storage loopback(uint16_t port)
{
  struct sockaddr_storage a = { 0 };
  struct sockaddr_in *in = (struct sockaddr_in *)&a;
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

/* One stream to two clients with transport-wide feedback: A direct, B
 * through the relay dropping 20 %. Each receiver's feedback drives a
 * controller of its own (B's losses are its own, not repeats of what A
 * reported received first), and the stream goes at the lower target:
 * B's, cut on its loss, while A's path is clean. */
static void test_cc_two_receivers(void)
{
  enum { TWCC_ID = 3 };
  const uint64_t start = 4000000;
  make_aus(21);
  static receiver_t a, b;
  REQUIRE(receiver_start(&a, NULL, TWCC_ID) == 0);
  REQUIRE(receiver_start(&b, NULL, TWCC_ID) == 0);
  b.quiet = true;               /* its pictures lose packets */
  static relay_t lossy;
  relay_config_t lc = { .seed = 21, .drop = 0.2, .delay_ms = 10, .skip_first = 20,
                        .to_port = (uint16_t)urtp_sock_local_port(&b.sock) };
  REQUIRE(relay_start(&lossy, &lc) == 0);

  urtp_sock_t tx;
  urtp_sock_config_t tc = { .remote_addr = "127.0.0.1",
                            .remote_port = (uint16_t)urtp_sock_local_port(&a.sock) };
  REQUIRE(urtp_sock_open(&tx, &tc) == 0);
  urtp_sendstream_format_t fmt = { .codec = URTP_CODEC_H265, .pt = PT, .mtu = 1200 };
  urtp_sendstream_config_t cfg = { .ssrc = SSRC, .format = &fmt, .release = on_release };
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &tx, &cfg) == 0);
  struct sockaddr_storage a_rtp = loopback((uint16_t)urtp_sock_local_port(&a.sock)),
                          a_rtcp = loopback((uint16_t)urtp_sock_local_port(&a.io.sock)),
                          b_rtp = loopback(lossy.port),
                          b_rtcp = loopback((uint16_t)urtp_sock_local_port(&b.io.sock));
  REQUIRE(urtp_sendstream_add_client(ss, &a_rtp, &a_rtcp) == 1);
  REQUIRE(urtp_sendstream_add_client(ss, &b_rtp, &b_rtcp) == 1);
  REQUIRE(urtp_sendstream_set_twcc(ss, TWCC_ID) == 0);
  urtp_cc_config_t ccc = { .min_bps = 100000, .max_bps = 20000000, .start_bps = start };
  REQUIRE(urtp_sendstream_set_congestion(ss, &ccc) == 0);
  urtp_rtcpio_t sio;
  urtp_rtcpio_config_t sic = { .bind_addr = "127.0.0.1", .min_interval = 100 * MS,
                               .we_send = true };
  REQUIRE(urtp_rtcpio_open(&sio, &sic, mono()) == 0);
  REQUIRE(urtp_sendstream_rtcp_start(ss, &sio, clock_fn, NULL, NULL) == 0);

  /* 30 pictures a second (the pacer holds each to the target), for 3 s
   * or, on a loaded machine (fewer feedbacks, fewer cuts), until the
   * target halved, for at most the 5 s of pictures there are */
  uint64_t t0 = mono();
  urtp_cc_stats_t cs;
  for (int i = 0; i < NAU && (mono() - t0 < 3000 * MS ||
                              (urtp_sendstream_congestion(ss, &cs) && cs.target_bps >= start / 2));
       i++) {
    CHECK(urtp_sendstream_push(ss, aus[i].data, aus[i].len, (uint32_t)i * 3000, -1, 0,
                               &aus[i]) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
    uint64_t next = t0 + (uint64_t)(i + 1) * 33 * MS, now = mono();
    if (next > now)
      usleep((useconds_t)((next - now) / 1000));
  }
  bool on = urtp_sendstream_congestion(ss, &cs);
  urtp_sendstream_stats_t s;
  urtp_sendstream_get_stats(ss, &s);
  urtp_sendstream_rtcp_stop(ss, false);
  receiver_stop(&a);
  receiver_stop(&b);
  relay_stop(&lossy);
  printf("# two receivers: relay dropped %" PRIu64 " of %" PRIu64 "; feedback %" PRIu64
         " messages from %u receivers, acked %" PRIu64 " lost %" PRIu64 " repeated %" PRIu64
         " unknown %" PRIu64 " untracked %" PRIu64 "; target %" PRIu64 " bit/s (loss cuts %"
         PRIu64 ")\n", lossy.stats.dropped, lossy.stats.received, s.ccfb_received,
         s.ccfb_receivers, s.ccfb_acked, s.ccfb_lost, s.ccfb_repeated, s.ccfb_unknown,
         s.ccfb_untracked, cs.target_bps, cs.loss_cuts);
  CHECK(on);
  CHECK_EQ(s.ccfb_receivers, 2);
  CHECK_EQ(s.ccfb_untracked, 0);
  /* each receiver's reports are its own: B's losses count, none is a
   * repeat of A's */
  CHECK_EQ(s.ccfb_repeated, 0);
  CHECK(s.ccfb_lost > 0);
  CHECK(s.ccfb_lost <= lossy.stats.dropped);
  /* the stream goes at B's target: cut on its 20 % loss */
  CHECK(cs.loss_cuts > 0);
  CHECK(cs.target_bps < start / 2);
  urtp_sendstream_free(ss);
  urtp_rtcpio_close(&sio);
  urtp_sock_close(&tx);
  receiver_free(&a);
  receiver_free(&b);
  relay_free(&lossy);
  free_aus();
}

int main(void)
{
  TAP_RUN(test_loss_1);
  TAP_RUN(test_loss_5);
  TAP_RUN(test_loss_5_srtp);
  TAP_RUN(test_nack_storm);
  TAP_RUN(test_nack_storm_cc);
  TAP_RUN(test_cc_two_receivers);
  return tap_done();
}
