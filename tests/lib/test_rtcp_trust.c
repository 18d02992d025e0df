/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rtcp_trust - RTCP that strangers cannot steer, with lib/ alone on
 * real sockets. The sender is on 127.0.0.1; an attacker on 127.0.0.2
 * knows the SSRC (every packet shows it) and forges sender reports, names,
 * BYEs, receiver reports, NACKs and PLIs. Every datagram is accounted for:
 * what each socket received is counted, and the attacker's must stay
 * empty. Also: sender reports that lie about their clock, a source that
 * moves (the destination moves with it, and only then), and the NACKs of a
 * receiver whose sender never answers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "urtp/pay.h"
#include "urtp/recvstream.h"
#include "urtp/rtcp.h"
#include "urtp/rtcpio.h"
#include "urtp/rtx.h"
#include "urtp/sendstream.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define PT 96
#define SSRC 0x5e4d0001u

static uint64_t mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* A plain socket on addr (port 0: any), optionally sending to host:port. */
static void sock_on(urtp_sock_t *s, const char *addr, const char *to, int port)
{
  urtp_sock_config_t c = { .bind_addr = addr, .dscp = -1, .tx_mode = URTP_IO_PLAIN,
                           .rx_mode = URTP_IO_MMSG, .remote_addr = to,
                           .remote_port = (uint16_t)port };
  REQUIRE(urtp_sock_open(s, &c) == 0);
}

static int send_to(urtp_sock_t *s, const void *buf, size_t len, const char *host, int port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  inet_pton(AF_INET, host, &a.sin_addr);
  return urtp_sock_sendto(s, buf, len, (struct sockaddr *)&a, sizeof a);
}

/* Datagrams waiting on s within ms (each counted, then dropped). */
static int drain_sock(urtp_sock_t *s, urtp_rx_t *rx, int ms)
{
  int total = 0, n;
  while ((n = urtp_sock_recv(s, rx, ms)) > 0) {
    total += n;
    ms = 20;
  }
  return total;
}

/* ---- what the sender and the attacker write --------------------------- */

static size_t sr_sdes(uint8_t *buf, uint32_t ssrc, uint64_t ntp, uint32_t ts, const char *cname)
{
  urtp_rtcp_writer_t w;
  urtp_rtcp_sr_t sr = { .ssrc = ssrc, .ntp = ntp, .rtp_ts = ts, .packets = 7, .octets = 700 };
  urtp_rtcp_writer_init(&w, buf, 512);
  urtp_rtcp_write_sr(&w, &sr, NULL, 0);
  urtp_rtcp_write_sdes_cname(&w, ssrc, cname);
  return w.err ? 0 : w.len;
}

static size_t bye(uint8_t *buf, uint32_t ssrc)
{
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, buf, 512);
  urtp_rtcp_write_rr(&w, ssrc, NULL, 0);
  urtp_rtcp_write_bye(&w, &ssrc, 1, NULL);
  return w.err ? 0 : w.len;
}

/* An RTP packet of ssrc: a small H.265 IDR slice, one per access unit. */
static size_t rtp(uint8_t *buf, uint32_t ssrc, uint16_t seq, uint32_t ts)
{
  uint8_t h[12] = { 0x80, 0x80 | PT, (uint8_t)(seq >> 8), (uint8_t)seq,
                    (uint8_t)(ts >> 24), (uint8_t)(ts >> 16), (uint8_t)(ts >> 8), (uint8_t)ts,
                    (uint8_t)(ssrc >> 24), (uint8_t)(ssrc >> 16), (uint8_t)(ssrc >> 8),
                    (uint8_t)ssrc };
  memcpy(buf, h, 12);
  buf[12] = 19 << 1;          /* IDR_W_RADL */
  buf[13] = 1;
  for (int i = 14; i < 100; i++)
    buf[i] = (uint8_t)(seq + i) | 1;
  buf[14] |= 0x80;
  return 100;
}

/* ---- the receiving side ------------------------------------------------- */

typedef struct rx_side {
  urtp_sock_t media;            /* where RTP arrives */
  urtp_rx_t rx;
  urtp_rtcpio_t io;             /* our RTCP: destination learnt */
  urtp_recvstream_t *r;
} rx_side_t;

static void rx_open(rx_side_t *x, uint64_t source_timeout, bool request_keyframe)
{
  sock_on(&x->media, "127.0.0.1", NULL, 0);
  REQUIRE(urtp_rx_init(&x->rx, 64, 1500) == 0);
  urtp_rtcpio_config_t ic = { .bind_addr = "127.0.0.1" };
  REQUIRE(urtp_rtcpio_open(&x->io, &ic, 0) == 0);
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 200 * MS, .source_timeout = source_timeout,
                                 .nack = true, .rtx = true, .rtx_pt = PT + 1,
                                 .request_keyframe = request_keyframe,
                                 .cname = "receiver@test" };
  REQUIRE(urtp_recvstream_new(&c, &x->r) == 0);
}

static void rx_close(rx_side_t *x)
{
  urtp_recvstream_free(x->r);
  urtp_rtcpio_close(&x->io);
  urtp_rx_destroy(&x->rx);
  urtp_sock_close(&x->media);
}

/* Takes the n datagrams sent to the media socket (at now), and serves RTCP
 * (its clock: now too). */
static void rx_take(rx_side_t *x, int n, uint64_t now)
{
  int got = 0;
  for (int tries = 0; got < n && tries < 50; tries++) {
    int k = urtp_sock_recv(&x->media, &x->rx, 100);
    if (k > 0) {
      urtp_recvstream_push_rx(x->r, &x->media, &x->rx, (size_t)k, now);
      got += k;
    }
  }
  CHECK_EQ(got, n);
  urtp_recvstream_frame_t f;
  while (urtp_recvstream_pop(x->r, &f))
    urtp_depay_release(f.au.data);
}

/* Serves RTCP at now after what was sent to it has arrived. */
static void rx_service(rx_side_t *x, uint64_t now)
{
  usleep(20000);
  urtp_recvstream_rtcp_service(x->r, &x->io, now, now);
}

static uint16_t dest_port(const urtp_rtcpio_t *io)
{
  return io->dest_len ? ntohs(((const struct sockaddr_in *)&io->dest)->sin_port) : 0;
}

static uint32_t dest_v4(const urtp_rtcpio_t *io)
{
  return io->dest_len ? ntohl(((const struct sockaddr_in *)&io->dest)->sin_addr.s_addr) : 0;
}

/* The receiver: forged reports, names and BYEs from another host change
 * nothing and get nothing back; its feedback goes to the sender alone. */
static void test_receiver_attacked(void)
{
  static rx_side_t x;
  rx_open(&x, 500 * MS, false);
  int io_port = urtp_sock_local_port(&x.io.sock);
  static urtp_sock_t media, ctl, evil;
  static urtp_rx_t srx;
  REQUIRE(urtp_rx_init(&srx, 64, 1500) == 0);
  sock_on(&media, "127.0.0.1", "127.0.0.1", urtp_sock_local_port(&x.media));
  sock_on(&ctl, "127.0.0.1", NULL, 0);   /* the sender's RTCP, apart (as rtpbin's) */
  sock_on(&evil, "127.0.0.2", NULL, 0);

  uint8_t pkt[512];
  uint16_t seq = 100;
  uint32_t ts = 9000;
  uint64_t t = SEC, ntp0 = urtp_ntp_from_ns(3900000000ull * SEC);
  for (int i = 0; i < 3; i++, ts += 3000)
    CHECK(urtp_sock_sendto(&media, pkt, rtp(pkt, SSRC, seq++, ts), NULL, 0) > 0);
  rx_take(&x, 3, t);
  uint32_t ts_sr = ts;
  size_t n = sr_sdes(pkt, SSRC, ntp0, ts, "sender@test");
  CHECK(send_to(&ctl, pkt, n, "127.0.0.1", io_port) == (int)n);
  rx_service(&x, t);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(x.r, &st);
  CHECK_EQ(st.rtcp_sr, 1);
  CHECK_EQ(st.rtcp_foreign, 0);
  CHECK(!strcmp(st.cname, "sender@test"));
  CHECK_EQ(dest_port(&x.io), urtp_sock_local_port(&ctl));

  /* the attacker: a report 2.5 s off with another name, then a BYE */
  n = sr_sdes(pkt, SSRC, ntp0 + (5ull << 31), ts + 3000, "attacker");
  CHECK(send_to(&evil, pkt, n, "127.0.0.1", io_port) == (int)n);
  n = bye(pkt, SSRC);
  CHECK(send_to(&evil, pkt, n, "127.0.0.1", io_port) == (int)n);
  rx_service(&x, t + 10 * MS);
  urtp_recvstream_stats(x.r, &st);
  CHECK_EQ(st.rtcp, 3);
  CHECK_EQ(st.rtcp_foreign, 2);
  CHECK_EQ(st.rtcp_sr, 1);
  CHECK(st.sr_ntp == ntp0);
  CHECK_EQ(st.rtcp_bye, 0);
  CHECK_EQ(st.source.byes, 0);
  CHECK(!strcmp(st.cname, "sender@test"));
  CHECK_EQ(dest_port(&x.io), urtp_sock_local_port(&ctl));
  CHECK_EQ(dest_v4(&x.io), 0x7f000001u);

  /* a stranger's stream after the forged BYE: it waits (the sender never
   * went quiet), and the sender's stream goes on */
  for (int i = 0; i < 3; i++)
    CHECK(send_to(&evil, pkt, rtp(pkt, 0xbadu, (uint16_t)(7 + i), 555u * (unsigned)i),
                  "127.0.0.1", urtp_sock_local_port(&x.media)) > 0);
  rx_take(&x, 3, t + 20 * MS);
  /* one packet missing: a NACK, to the sender's RTCP port alone */
  seq++;
  ts += 3000;
  CHECK(urtp_sock_sendto(&media, pkt, rtp(pkt, SSRC, seq++, ts), NULL, 0) > 0);
  rx_take(&x, 1, t + 30 * MS);
  rx_service(&x, t + 60 * MS);
  urtp_recvstream_stats(x.r, &st);
  CHECK_EQ(st.ssrc, SSRC);
  CHECK_EQ(st.source.changes, 0);
  CHECK_EQ(st.nacks_sent, 1);
  CHECK_EQ(drain_sock(&ctl, &srx, 200), 1);
  /* a report from the sender's host on the RTP port itself still counts
   * (RTCP may come from any port of the sender's host) */
  n = sr_sdes(pkt, SSRC, ntp0 + (1ull << 32), ts_sr + 90000, "sender@test");
  CHECK(urtp_sock_sendto(&media, pkt, n, NULL, 0) == (int)n);
  CHECK(send_to(&media, pkt, n, "127.0.0.1", io_port) == (int)n);
  rx_service(&x, t + 70 * MS);
  urtp_recvstream_stats(x.r, &st);
  CHECK_EQ(st.rtcp_sr, 2);
  /* the attacker got nothing at all, ever */
  CHECK_EQ(drain_sock(&evil, &srx, 200), 0);
  /* (the RTP socket got the SR sent to it as media: not RTP, counted) */
  rx_take(&x, 1, t + 80 * MS);
  urtp_recvstream_stats(x.r, &st);
  CHECK_EQ(st.malformed_rtp + st.wrong_pt, 1);

  urtp_sock_close(&evil);
  urtp_sock_close(&ctl);
  urtp_sock_close(&media);
  urtp_rx_destroy(&srx);
  rx_close(&x);
}

/* Sender reports of the followed source that lie about its clock are not
 * taken for sync; a clock really stepped is taken on its second report. */
static void test_sr_sanity(void)
{
  urtp_recvstream_config_t c = { .codec = URTP_CODEC_H265, .pt = PT, .ssrc = -1,
                                 .latency = 50 * MS };
  urtp_recvstream_t *r;
  REQUIRE(urtp_recvstream_new(&c, &r) == 0);
  uint8_t pkt[512];
  for (uint16_t i = 0; i < 3; i++) {
    size_t n = rtp(pkt, SSRC, i, 3000u * i);
    urtp_recvstream_push_one(r, pkt, n, NULL, SEC + i * 33 * MS);
  }
  uint64_t ntp0 = urtp_ntp_from_ns(3900000000ull * SEC);
  uint32_t ts0 = 6000;
  struct { int64_t ntp_ms; int64_t rtp_ms; bool taken; uint64_t rejected, remapped; } steps[] = {
    { 0, 0, true, 0, 0 },          /* the first */
    { 1000, 1000, true, 0, 0 },    /* a second on both clocks */
    { 4500, 2000, false, 1, 0 },   /* 2.5 s off: a lie */
    { 3000, 3000, true, 1, 0 },    /* the truth again */
    { 4010, 4000, true, 1, 0 },    /* 10 ms of drift: fine */
    { 6000, 5000, false, 2, 0 },   /* the clock stepped by a second... */
    { 7000, 6000, true, 2, 1 },    /* ... and stays stepped: a new mapping */
    { 8000, 7000, true, 2, 1 },
  };
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    uint64_t ntp = ntp0 + (uint64_t)(steps[i].ntp_ms * (int64_t)(1ull << 32) / 1000);
    uint32_t ts = ts0 + (uint32_t)(steps[i].rtp_ms * 90);
    size_t n = sr_sdes(pkt, SSRC, ntp, ts, "s@t");
    CHECK_EQ(urtp_recvstream_push_rtcp(r, pkt, n, 2 * SEC + i * SEC), 0);
    urtp_recvstream_stats_t st;
    urtp_recvstream_stats(r, &st);
    if (steps[i].taken != (st.sr_rtp_ts == ts) || st.sr_rejected != steps[i].rejected ||
        st.sr_remapped != steps[i].remapped)
      printf("# step %zu: taken %d rejected %" PRIu64 " remapped %" PRIu64 "\n", i,
             st.sr_rtp_ts == ts, st.sr_rejected, st.sr_remapped);
    CHECK_EQ(st.sr_rtp_ts == ts, steps[i].taken);
    CHECK_EQ(st.sr_rejected, steps[i].rejected);
    CHECK_EQ(st.sr_remapped, steps[i].remapped);
  }
  urtp_recvstream_free(r);
}

/* A source that moves: a new sender on another host takes over after the
 * old one went quiet; the destination learnt from the old one is
 * forgotten, and the new one's own report places it. */
static void test_destination_moves(void)
{
  static rx_side_t x;
  rx_open(&x, 200 * MS, false);
  int io_port = urtp_sock_local_port(&x.io.sock);
  static urtp_sock_t a, b;
  static urtp_rx_t srx;
  REQUIRE(urtp_rx_init(&srx, 64, 1500) == 0);
  sock_on(&a, "127.0.0.1", "127.0.0.1", urtp_sock_local_port(&x.media));
  sock_on(&b, "127.0.0.3", "127.0.0.1", urtp_sock_local_port(&x.media));
  uint8_t pkt[512];
  uint64_t ntp0 = urtp_ntp_from_ns(3900000000ull * SEC);
  for (uint16_t i = 0; i < 3; i++)
    CHECK(urtp_sock_sendto(&a, pkt, rtp(pkt, SSRC, i, 3000u * i), NULL, 0) > 0);
  rx_take(&x, 3, SEC);
  size_t n = sr_sdes(pkt, SSRC, ntp0, 6000, "a@t");
  CHECK(send_to(&a, pkt, n, "127.0.0.1", io_port) == (int)n);
  rx_service(&x, SEC);
  CHECK_EQ(dest_v4(&x.io), 0x7f000001u);

  /* b, 300 ms later: takes over (a is quiet); its report, sent before its
   * first packets, comes from its own host */
  n = sr_sdes(pkt, 0xb0b, ntp0, 0, "b@t");
  CHECK(send_to(&b, pkt, n, "127.0.0.1", io_port) == (int)n);
  rx_service(&x, SEC + 290 * MS);
  CHECK_EQ(dest_v4(&x.io), 0x7f000001u);  /* b is nobody yet */
  for (uint16_t i = 0; i < 3; i++)
    CHECK(urtp_sock_sendto(&b, pkt, rtp(pkt, 0xb0b, 50 + i, 3000u * i), NULL, 0) > 0);
  rx_take(&x, 3, SEC + 300 * MS);
  rx_service(&x, SEC + 300 * MS);
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(x.r, &st);
  CHECK_EQ(st.ssrc, 0xb0b);
  CHECK_EQ(st.source.changes, 1);
  CHECK_EQ(st.rtcp_sr, 1);
  CHECK(!strcmp(st.cname, "b@t"));
  CHECK_EQ(dest_v4(&x.io), 0x7f000003u);
  CHECK_EQ(dest_port(&x.io), urtp_sock_local_port(&b));
  /* a's report from now on is a stranger's */
  n = sr_sdes(pkt, 0xb0b, ntp0, 0, "a@t");
  CHECK(send_to(&a, pkt, n, "127.0.0.1", io_port) == (int)n);
  rx_service(&x, SEC + 310 * MS);
  urtp_recvstream_stats(x.r, &st);
  CHECK_EQ(st.rtcp_foreign, 1);
  CHECK_EQ(dest_v4(&x.io), 0x7f000003u);
  CHECK(!strcmp(st.cname, "b@t"));

  urtp_sock_close(&a);
  urtp_sock_close(&b);
  urtp_rx_destroy(&srx);
  rx_close(&x);
}

/* NACKs to a sender that never answers stop URTP_RECVSTREAM_NACK_GIVE_UP
 * after the first; the key frame requests go on. */
static void test_nack_unanswered(void)
{
  static rx_side_t x;
  rx_open(&x, 500 * MS, true);
  static urtp_sock_t media, ctl;
  static urtp_rx_t srx;
  REQUIRE(urtp_rx_init(&srx, 64, 1500) == 0);
  sock_on(&media, "127.0.0.1", "127.0.0.1", urtp_sock_local_port(&x.media));
  sock_on(&ctl, "127.0.0.1", NULL, 0);
  uint8_t pkt[512];
  size_t n = sr_sdes(pkt, SSRC, urtp_ntp_from_ns(3900000000ull * SEC), 0, "s@t");
  uint16_t seq = 0;
  uint64_t t = SEC;
  CHECK(urtp_sock_sendto(&media, pkt, rtp(pkt, SSRC, seq++, 0), NULL, 0) > 0);
  CHECK(urtp_sock_sendto(&media, pkt, rtp(pkt, SSRC, seq++, 3000), NULL, 0) > 0);
  rx_take(&x, 2, t);
  n = sr_sdes(pkt, SSRC, urtp_ntp_from_ns(3900000000ull * SEC), 0, "s@t");
  CHECK(send_to(&ctl, pkt, n, "127.0.0.1", urtp_sock_local_port(&x.io.sock)) == (int)n);
  rx_service(&x, t);
  /* every 100 ms a packet lost, for 5 s; nothing ever retransmitted */
  uint64_t nacks_at_give_up = 0;
  for (int i = 0; i < 50; i++) {
    t += 100 * MS;
    seq++;
    CHECK(urtp_sock_sendto(&media, pkt, rtp(pkt, SSRC, seq, 3000u * seq), NULL, 0) > 0);
    seq++;
    rx_take(&x, 1, t);
    for (int k = 0; k < 10; k++) {
      urtp_recvstream_expire(x.r, t + k * 10 * MS);
      urtp_recvstream_rtcp_service(x.r, &x.io, t + k * 10 * MS, t + k * 10 * MS);
    }
    urtp_recvstream_stats_t st;
    urtp_recvstream_stats(x.r, &st);
    if (st.nack_unanswered && !nacks_at_give_up)
      nacks_at_give_up = st.nacks_sent;
  }
  urtp_recvstream_stats_t st;
  urtp_recvstream_stats(x.r, &st);
  printf("# NACKs sent %" PRIu64 " (%" PRIu64 " when it gave up), asked %" PRIu64
         ", PLIs %" PRIu64 "\n", st.nacks_sent, nacks_at_give_up, st.nack.requests, st.pli_sent);
  CHECK_EQ(st.nack_unanswered, 1);
  CHECK_EQ(st.nacks_sent, nacks_at_give_up);
  /* about 3 s of them: a packet lost per 100 ms, a request or a few each */
  CHECK(st.nacks_sent >= 25 && st.nacks_sent <= 200);
  CHECK(st.pli_sent > 0);
  drain_sock(&ctl, &srx, 50);
  urtp_sock_close(&media);
  urtp_sock_close(&ctl);
  urtp_rx_destroy(&srx);
  rx_close(&x);
}

/* ---- the sending side ---------------------------------------------------- */

static atomic_int keyframes;

static void on_keyframe(void *user, bool fir)
{
  (void)user;
  (void)fir;
  atomic_fetch_add(&keyframes, 1);
}

static bool clock_fn(void *user, uint64_t *ntp, uint32_t *rtp_ts)
{
  (void)user;
  *ntp = urtp_ntp_now();
  *rtp_ts = (uint32_t)(mono() / 11111);
  return true;
}

/* Waits up to 2 s for the sender's counter at off to reach want. */
static uint64_t wait_stat(urtp_sendstream_t *ss, size_t off, uint64_t want)
{
  urtp_sendstream_stats_t st;
  for (int i = 0; i < 200; i++) {
    urtp_sendstream_get_stats(ss, &st);
    uint64_t v;
    memcpy(&v, (const uint8_t *)&st + off, sizeof v);
    if (v >= want)
      return v;
    usleep(10000);
  }
  uint64_t v;
  memcpy(&v, (const uint8_t *)&st + off, sizeof v);
  return v;
}
#define WAIT(ss, field, want) wait_stat(ss, offsetof(urtp_sendstream_stats_t, field), want)

static size_t rr_nack_pli(uint8_t *buf, uint32_t me, uint32_t lsr, uint8_t fraction, int32_t lost,
                          const uint16_t *seqs, unsigned nseqs, bool pli)
{
  urtp_rtcp_writer_t w;
  urtp_rtcp_block_t b = { .ssrc = SSRC, .fraction = fraction, .lost = lost, .lsr = lsr,
                          .ext_max_seq = 100 };
  urtp_rtcp_writer_init(&w, buf, 512);
  urtp_rtcp_write_rr(&w, me, &b, 1);
  urtp_rtcp_write_sdes_cname(&w, me, "r@t");
  if (nseqs)
    urtp_rtcp_write_nack(&w, me, SSRC, seqs, nseqs);
  if (pli)
    urtp_rtcp_write_pli(&w, me, SSRC);
  return w.err ? 0 : w.len;
}

/* The sender: forged receiver reports, NACKs and PLIs from another host are
 * dropped whole; from the receiver's host, a block must echo one of our
 * sender reports, and a key frame request needs a receiver that reports. */
static void test_sender_attacked(void)
{
  static urtp_sock_t media_rx, rtcp_rx, tx, other_port, evil;
  static urtp_rx_t srx;
  REQUIRE(urtp_rx_init(&srx, 64, 1500) == 0);
  sock_on(&media_rx, "127.0.0.1", NULL, 0);
  sock_on(&rtcp_rx, "127.0.0.1", NULL, 0);
  sock_on(&other_port, "127.0.0.1", NULL, 0);
  sock_on(&evil, "127.0.0.2", NULL, 0);
  sock_on(&tx, "127.0.0.1", "127.0.0.1", urtp_sock_local_port(&media_rx));
  urtp_sendstream_format_t fmt = { .codec = URTP_CODEC_H265, .pt = PT, .mtu = 1200 };
  urtp_sendstream_config_t cfg = { .ssrc = SSRC, .seq_start = 0, .format = &fmt, .rtx = true,
                                   .rtx_pt = PT + 1, .keyframe = on_keyframe };
  urtp_sendstream_t *ss;
  REQUIRE(urtp_sendstream_new(&ss, &tx, &cfg) == 0);
  static urtp_rtcpio_t sio;
  urtp_rtcpio_config_t sic = { .bind_addr = "127.0.0.1", .remote_addr = "127.0.0.1",
                               .remote_port = (uint16_t)urtp_sock_local_port(&rtcp_rx),
                               .min_interval = 100 * MS, .we_send = true, .early_first = true };
  REQUIRE(urtp_rtcpio_open(&sio, &sic, mono()) == 0);
  int sio_port = urtp_sock_local_port(&sio.sock);
  REQUIRE(urtp_sendstream_rtcp_start(ss, &sio, clock_fn, NULL, NULL) == 0);

  /* 10 access units of 5 packets */
  static uint8_t au[6000];
  memcpy(au, "\0\0\0\1", 4);
  au[4] = 19 << 1;
  au[5] = 1;
  for (size_t k = 6; k < sizeof au; k++)
    au[k] = (uint8_t)(k | 1);
  for (int i = 0; i < 10; i++) {
    CHECK(urtp_sendstream_push(ss, au, sizeof au, (uint32_t)i * 3000, -1, 0, NULL) > 0);
    CHECK_EQ(urtp_sendstream_flush(ss), 0);
  }
  urtp_sendstream_stats_t st;
  urtp_sendstream_get_stats(ss, &st);
  int media = drain_sock(&media_rx, &srx, 200);
  CHECK_EQ((uint64_t)media, st.packets);

  /* our first report, and the LSR it gives a receiver */
  int k = urtp_sock_recv(&rtcp_rx, &srx, 1000);
  REQUIRE(k >= 1);
  urtp_rtcp_info_t info;
  REQUIRE(urtp_rtcp_parse(srx.dgrams[0].data, srx.dgrams[0].len, 0, &info) == 0);
  REQUIRE(info.nreports >= 1 && info.reports[0].is_sr);
  uint32_t lsr = urtp_ntp_mid32(info.reports[0].sr.ntp);

  /* the attacker, 127.0.0.2: a report, NACKs for everything, PLIs */
  uint16_t seqs[17];
  for (int i = 0; i < 17; i++)
    seqs[i] = (uint16_t)(20 + i);
  uint8_t pkt[512];
  size_t n = rr_nack_pli(pkt, 0xe7e7, lsr, 255, 123456, NULL, 0, false);
  CHECK(send_to(&evil, pkt, n, "127.0.0.1", sio_port) == (int)n);
  for (int i = 0; i < 10; i++) {
    n = rr_nack_pli(pkt, SSRC ^ 1, lsr, 0, 0, seqs, 17, true);
    CHECK(send_to(&evil, pkt, n, "127.0.0.1", sio_port) == (int)n);
  }
  CHECK_EQ(WAIT(ss, rtcp_foreign, 11), 11);

  /* the receiver's host, another port: a block echoing our report counts,
   * one echoing nothing of ours does not */
  n = rr_nack_pli(pkt, 0x7777, lsr, 3, 2, NULL, 0, false);
  CHECK(send_to(&other_port, pkt, n, "127.0.0.1", sio_port) == (int)n);
  CHECK_EQ(WAIT(ss, rr_blocks, 1), 1);
  n = rr_nack_pli(pkt, 0x7777, lsr ^ 0x5a5a, 255, 123456, NULL, 0, false);
  CHECK(send_to(&other_port, pkt, n, "127.0.0.1", sio_port) == (int)n);
  CHECK_EQ(WAIT(ss, rr_rejected, 1), 1);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.rr_blocks, 1);
  CHECK_EQ(st.rr.fraction, 3);
  CHECK_EQ(st.rr.lost, 2);
  CHECK(st.rtt_ns >= 0 && st.rtt_ns < 1000 * (int64_t)MS);

  /* a PLI from an SSRC that never reported: ignored; from the one that
   * did: a key frame; a NACK from it: answered, to the media's way */
  uint8_t pli_only[64];
  urtp_rtcp_writer_t w;
  urtp_rtcp_writer_init(&w, pli_only, sizeof pli_only);
  urtp_rtcp_write_rr(&w, 0x8888, NULL, 0);
  urtp_rtcp_write_pli(&w, 0x8888, SSRC);
  CHECK(send_to(&other_port, pli_only, w.len, "127.0.0.1", sio_port) == (int)w.len);
  CHECK_EQ(WAIT(ss, keyframe_requests_unknown, 1), 1);
  n = rr_nack_pli(pkt, 0x7777, lsr, 0, 0, seqs, 3, true);
  CHECK(send_to(&other_port, pkt, n, "127.0.0.1", sio_port) == (int)n);
  CHECK_EQ(WAIT(ss, rtx_packets, 3), 3);
  urtp_sendstream_get_stats(ss, &st);
  CHECK_EQ(st.pli_received, 1);
  CHECK_EQ(st.keyframe_requests, 1);
  CHECK_EQ(atomic_load(&keyframes), 1);
  CHECK_EQ(st.nacks_received, 1);
  CHECK_EQ(st.rtcp_foreign, 11);
  CHECK_EQ(drain_sock(&media_rx, &srx, 200), 3);
  /* nothing ever went to the attacker */
  CHECK_EQ(drain_sock(&evil, &srx, 200), 0);

  urtp_sendstream_rtcp_stop(ss, false);
  urtp_sendstream_free(ss);
  urtp_rtcpio_close(&sio);
  urtp_sock_close(&tx);
  urtp_sock_close(&evil);
  urtp_sock_close(&other_port);
  urtp_sock_close(&rtcp_rx);
  urtp_sock_close(&media_rx);
  urtp_rx_destroy(&srx);
}

int main(void)
{
  TAP_RUN(test_receiver_attacked);
  TAP_RUN(test_sr_sanity);
  TAP_RUN(test_destination_moves);
  TAP_RUN(test_nack_unanswered);
  TAP_RUN(test_sender_attacked);
  return tap_done();
}
