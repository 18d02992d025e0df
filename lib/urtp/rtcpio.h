/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtcpio.h - the RTCP side of one stream: its socket, when its reports are
 * due (RFC 3550 6.2/6.3 through rtcp.h's scheduler), and where they go.
 *
 * The stream (sendstream.h or recvstream.h) builds and reads the reports;
 * this only moves them. A sender knows where its RTCP goes (the receiver's
 * RTP port + 1 unless set); a receiver that is not told replies to where
 * the sender's RTCP comes from (symmetric RTCP, RFC 4961), once a report
 * of the followed source has arrived from its host (urtp_rtcpio_learn).
 *
 * The socket is not connected to the destination: reports are read from
 * wherever the other side sends them (rtpbin sends from another socket
 * than the one it reads on). Without SRTCP anyone who can reach the port
 * can send reports too; the streams take only what names their source.
 *
 * RTCP multiplexed with RTP (RFC 5761, `mux`): the RTP socket itself,
 * through a handle of its own (urtp_sock_share), so reports leave from the
 * RTP port. A sender's stream reads the RTP socket here: what is not RTCP
 * (RFC 5761 4: a second byte of 192-223) goes to `other` (ZRTP, which
 * shares the port) or is dropped and counted. A receiving stream reads
 * RTCP among its RTP datagrams itself and must not receive here.
 *
 * Promises:
 *  - Sends never wait: a report the kernel cannot take now is dropped and
 *    counted (RTCP can afford it; the next one follows).
 *  - No allocation after urtp_rtcpio_open.
 *  - One thread at a time.
 */
#ifndef URTP_RTCPIO_H
#define URTP_RTCPIO_H

#include <stdbool.h>
#include <stdint.h>

#include "net.h"
#include "rtcp.h"

typedef struct urtp_rtcpio_config {
  const char *bind_addr;        /* NULL: any of the remote's family, or IPv4 */
  uint16_t bind_port;           /* 0: ephemeral */
  const char *remote_addr;      /* where reports go; NULL: learnt */
  uint16_t remote_port;         /* with remote_addr */
  /* share the port with other sockets (SO_REUSEADDR/SO_REUSEPORT): only
   * for a multicast bind_addr, where every socket gets every datagram. A
   * unicast RTCP port is never shared: the kernel would hand some of the
   * flows to the port's other socket, often another stream's RTP (two
   * streams on consecutive ports), and both would lose them silently. */
  bool reuse;
  uint64_t min_interval;        /* ns; 0: RFC 3550's 5 s */
  bool we_send;                 /* a sender's reports (the 25 % share) */
  const urtp_sock_t *mux;       /* the RTP socket to share (bind_* unused);
                                 * NULL: a socket of its own */
  /* the first report goes at once, not after half an interval (RFC 4585
   * AVPF: receivers learn from it where their feedback goes); one that
   * cannot be built yet (urtp_rtcpio_skip) is tried again 20 ms later */
  bool early_first;
  /* with mux: a datagram read that is not RTCP goes to this ZRTP endpoint
   * (zrtp_ep.h) when it is ZRTP, else to `other`; NULL: dropped */
  struct urtp_zrtp_ep *zrtp;
  void (*other)(void *user, const urtp_dgram_t *d);
  void *other_user;
  /* a group bind_addr is joined as the RTP socket's (net.h) */
  const char *multicast_iface;
  const char *multicast_sources;
  bool no_join;
} urtp_rtcpio_config_t;

typedef struct urtp_rtcpio {
  urtp_sock_t sock;
  urtp_rx_t rx;
  urtp_rtcp_sched_t sched;
  bool we_send;
  struct sockaddr_storage dest;
  socklen_t dest_len;           /* 0: nowhere yet */
  bool dest_fixed;              /* configured: not learnt */
  bool mux;                     /* sock is the RTP socket's (cfg.mux) */
  bool early_first;
  struct urtp_zrtp_ep *zrtp;
  void (*other)(void *user, const urtp_dgram_t *d);
  void *other_user;
  uint64_t not_rtcp;            /* with mux: datagrams read that were not RTCP */
  uint64_t sent, send_errors, unsent;  /* reports sent, refused, with nowhere to go */
  uint64_t feedback_sent;       /* compounds sent off the schedule */
} urtp_rtcpio_t;

/* Opens the socket and starts the schedule at now (ns, any monotonic
 * clock). Returns 0 or -errno (the socket's). */
int urtp_rtcpio_open(urtp_rtcpio_t *io, const urtp_rtcpio_config_t *cfg, uint64_t now);
void urtp_rtcpio_close(urtp_rtcpio_t *io);

/* When the next report is due (ns). */
static inline uint64_t urtp_rtcpio_deadline(const urtp_rtcpio_t *io)
{
  return io->sched.tn;
}

/* At or after the deadline: whether to report now (timer reconsideration;
 * false moves the deadline). Two members: us and the other side. */
bool urtp_rtcpio_due(urtp_rtcpio_t *io, uint64_t now);

/* Sends a report built for now and moves the schedule on. Returns the
 * bytes sent, 0 when there is nowhere to send yet, or -errno (counted). */
int urtp_rtcpio_send(urtp_rtcpio_t *io, const uint8_t *buf, size_t len, uint64_t now);

/* A report built for now was sent elsewhere (urtp_rtcpio_send_to): the
 * schedule moves on as after urtp_rtcpio_send. */
void urtp_rtcpio_sent(urtp_rtcpio_t *io, size_t len, uint64_t now);
/* Sends to `to` instead of the destination, off the schedule (one report
 * to several receivers). Returns as urtp_rtcpio_send; counted in sent. */
int urtp_rtcpio_send_to(urtp_rtcpio_t *io, const uint8_t *buf, size_t len,
                        const struct sockaddr_storage *to);

/* Sends feedback (RFC 4585 immediate mode: a NACK, a PLI) at once, off
 * the schedule of the regular reports. Returns as urtp_rtcpio_send;
 * counted in feedback_sent. */
int urtp_rtcpio_send_feedback(urtp_rtcpio_t *io, const uint8_t *buf, size_t len);

/* A report that was due and could not be built: the schedule moves on. */
void urtp_rtcpio_skip(urtp_rtcpio_t *io, uint64_t now);

/* Takes what has arrived, waiting up to timeout_ms (0: not at all): returns
 * how many datagrams are in io->rx.dgrams, 0 for none (a receive error
 * included: RTCP can afford to lose one), or -EINTR when woken
 * (urtp_sock_wake on io->sock). Each one's size goes into the average the
 * schedule uses. With mux, only RTCP is returned (the rest went to
 * `other`), and 0 may mean that nothing of it was RTCP. */
int urtp_rtcpio_recv(urtp_rtcpio_t *io, int timeout_ms);

/* Reports go to `from` from now on, unless the destination was configured.
 * The caller decides whom to learn from (recvstream.h: the followed
 * source's host only). */
void urtp_rtcpio_learn(urtp_rtcpio_t *io, const struct sockaddr_storage *from);
/* A learnt destination is forgotten (reports wait for the next learn);
 * a configured one stays. */
void urtp_rtcpio_forget(urtp_rtcpio_t *io);

#endif
