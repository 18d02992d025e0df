/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sendstream_priv.h - the sending stream's state, shared by its two halves:
 * sendstream.c (access units to packets to the socket) and sendrtcp.c (its
 * RTCP: reports, the receiver table, NACKs to retransmissions, key frame
 * requests, the RTCP thread). Internal.
 */
#ifndef URTP_SENDSTREAM_PRIV_H
#define URTP_SENDSTREAM_PRIV_H

#include "urtp/sendstream.h"

#include <errno.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "urtp/au.h"
#include "urtp/batch.h"
#include "urtp/history.h"
#include "urtp/pacer.h"
#include "urtp/rtcpio.h"
#include "urtp/rtp.h"
#include "urtp/rtx.h"
#include "urtp/pay.h"
#include "urtp/scl.h"
#include "urtp/sendthread.h"
#include "urtp/cc.h"
#include "urtp/twcc.h"
#include "urtp/bytes.h"
#ifdef URTP_HAVE_ZRTP_EP
#include "urtp/zrtp_ep.h"
#endif

#define DEFAULT_FAIL_TIMEOUT_NS (2 * 1000000000LL)
#define NS_PER_S 1000000000LL
/* Bitrates are measured over the last second, in slots of 100 ms. */
#define METER_SLOTS 10
#define METER_SLOT_NS (NS_PER_S / METER_SLOTS)

typedef struct meter {
  uint64_t bytes[METER_SLOTS];
  int64_t slot;                   /* the slot of bytes[slot % N] */
  int64_t first;                  /* time of the first bytes; -1: none yet */
} meter_t;

/* RTX packets: the largest RTP packet, the OSN, an SRTP tag. */
#define RTX_BUF (65535 + 2 + URTP_SRTP_MAX_TRAILER)

struct rtx_bufs {
  uint8_t orig[65536];
  uint8_t out[RTX_BUF];
};

struct urtp_sendstream {
  urtp_sock_t *sock;
  urtp_sendstream_config_t cfg;   /* srtp, format and cname pointers cleared */
  char cname[URTP_RTCP_MAX_TEXT + 1];
  bool secure;                    /* SRTP, static or agreed: RTCP must be SRTCP */
  bool agreed;                    /* keys from key_sync or zrtp, not static */
  /* with cfg.zrtp: the endpoint's key serial each context was last
   * brought in line with (media; our reports, theirs; RTX) */
  int zrtp_serial, zrtp_rtcp_serial[2], zrtp_rtx_serial;
  /* SRTCP: contexts apart from the media path's (which only the streaming
   * thread touches), ours and the receivers'; reports may be built and
   * compounds taken on any thread, hence the lock */
  pthread_mutex_t srtcp_lock;
  urtp_srtp_t srtcp_out, srtcp_in;
  /* retransmission (cfg.rtx): the sent batches, and the RTX side that
   * answers NACKs (rtx_lock: whoever takes RTCP) */
  bool have_hist;
  urtp_history_t hist;
  pthread_mutex_t rtx_lock;
  urtp_sock_t rtx_sock;           /* a handle of the RTP socket */
  bool have_rtx_sock;
  urtp_srtp_t srtp_rtx;
  struct rtx_bufs *rtx_bufs;
  urtp_rtx_limiter_t rtx_limit;
  uint16_t rtx_seq;
  uint64_t last_keyframe;         /* when a request was last passed on */
  bool keyframe_asked;
  /* the middle 32 bits of the NTP times of our last sender reports: a
   * receiver's block must echo one of them (LSR) to be taken (stats_lock) */
  uint32_t sr_mid[URTP_SENDSTREAM_SR_KEPT];
  unsigned sr_next;
  uint32_t fir_ssrc;              /* the last FIR's sender and number */
  uint8_t fir_seq;
  bool fir_seen;
  /* the RTCP thread (urtp_sendstream_rtcp_start) */
  struct {
    pthread_t thread;
    bool running;
    atomic_bool stop;
    urtp_rtcpio_t *io;
    urtp_sendstream_clock_fn clock;
    urtp_sendstream_rr_fn on_rr;
    void *user;
  } rtcp;
  atomic_int config_interval;

  /* format: written by the streaming thread under ps_lock, which sdp()
   * takes to read it from elsewhere */
  bool have_format;
  urtp_sendstream_format_t fmt;
  unsigned nal_length_size;       /* of length-prefixed input; 0: unknown */
  urtp_pay_t pay;
  bool have_pay;
  /* header extensions (hdrext.h): the elements set for the next pushes and
   * the block pay copies into every packet, written by the streaming
   * thread between pushes; the transport-wide sequence numbers are taken
   * by pay and by retransmissions (the RTCP thread) */
  urtp_hdrext_t ext_elems;
  urtp_hdrext_block_t ext_block;
  uint32_t csrc[15];            /* urtp_sendstream_set_csrcs() */
  unsigned ncsrc;
  atomic_uint tw_id;
  urtp_tw_counter_t tw_next;
  /* congestion control feedback (sendcc.c): what left, matched against
   * what receivers report; NULL while off. cc_lock: any thread that sends
   * or takes RTCP */
  pthread_mutex_t cc_lock;
  struct sendstream_cc *_Atomic cc; /* read without the lock to skip */
  size_t cc_copy;                 /* the fan-out copy being sent */

  /* parameter sets: the current ones change under ps_lock */
  pthread_mutex_t ps_lock;
  urtp_params_t ps;
  bool refs_ps[2];                /* a set's batch points into ps */

  /* access unit being pushed (NAL-aligned input) */
  bool au_vcl_seen;
  bool au_ts_valid;
  uint32_t au_ts;
  int64_t last_config;            /* time_ns the sets last went out; < 0 none */
  bool opus_marker;               /* the next Opus packet starts a talkspurt */
  urtp_nal_t *nals;
  size_t nals_cap;

  /* Two sets alternate with the send thread: [cur] is being built,
   * [cur ^ 1] may be in flight until the next flush or drain. */
  urtp_sendthread_t *sender;
  unsigned cur;
  urtp_batch_t batch[2], sbatch[2];
  urtp_holds_t holds[2];
  atomic_bool interrupted;        /* the thread's last send was interrupted */
  const urtp_batch_t *int_batch;  /* ... this batch, after int_off packets */
  size_t int_off;
  atomic_int thread_err;          /* sticky -ETIMEDOUT from the thread */

  /* An interrupted send keeps what it did not send: packets tail_off on of
   * tail_batch (of set tail_set), to copy tail_copy of the fan-out and the
   * copies after it, go out first at the next flush or drain, or are given
   * up by drop. */
  bool tail;
  unsigned tail_set;
  const urtp_batch_t *tail_batch;
  size_t tail_off, tail_copy;
  size_t int_copy;                /* the thread's interrupted copy */

  /* clients (sendfanout.c): the table under clients_lock, changed from
   * any thread (gen counts the changes); present clients first, in the
   * order added, then the gone ones kept for their statistics */
  pthread_mutex_t clients_lock;
  bool clients_on;                /* the table decides where media goes */
  bool send_dups;
  urtp_sendstream_client_t *clients;
  size_t nclients, ngone, clients_cap;
  atomic_uint clients_gen;
  /* the fan-out in effect: one address per copy of each packet, taken
   * from the table by the streaming thread at a flush with nothing in
   * flight (the send thread reads it while a batch is) */
  bool fan_on;                    /* clients_on, applied */
  bool fan_connected;             /* one unicast copy: the socket's remote */
  unsigned fan_gen;
  struct sockaddr_storage *fan;
  size_t nfan, fan_cap;
  /* the batch being built, through keys and protection, ready to send */
  const urtp_batch_t *out;

  /* keys */
  urtp_srtp_t srtp;
  uint64_t aus, aus_mark;         /* access units pushed; at the last flush */
  uint64_t pad0;                  /* pay.pad_bytes already published */

  /* counters, copied out by get_stats */
  pthread_mutex_t stats_lock;
  urtp_sendstream_stats_t st;
  int64_t fail_since;             /* CLOCK_MONOTONIC ns; 0: not failing */
  /* bytes sent over the last second (wall time; stats_lock) */
  meter_t sent_meter;
  /* bytes pushed over the last second of media time (streaming thread):
   * the stream's own bitrate, which pacing cannot hold down */
  meter_t media_meter;
  int64_t media_now;              /* time of the latest push */

  /* pacing (pacer.h): the socket's pacer; rate = max(pacing_rate,
   * pacing_factor x bitrate), set at each flush */
  urtp_pacer_t pacer;
  pthread_mutex_t pacing_lock;
  uint64_t pacing_rate;           /* bits per second; 0: none */
  double pacing_factor;           /* 0: none */
  size_t pacing_burst;
  uint64_t pacing_effective;      /* what the pacer was last set to */
  size_t pacing_effective_burst;
  int64_t behind_t0;              /* the current second of the watch; 0: none */
  uint64_t behind_waited0;        /* the pacer's waited_ns at its start */
  atomic_bool behind;             /* the last whole second was nearly all waiting */
};

static inline int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* sendfanout.c: sends b (from packet *off of copy *copy on) to every
 * copy of the fan-out, or to the socket's remote without clients; counts
 * it. Returns 0, -EINTR (*copy and *off say where to resume), or
 * -ETIMEDOUT. */
int sendstream_send_out(urtp_sendstream_t *ss, const urtp_batch_t *b, size_t *copy, size_t *off);
/* Applies the table's changes to the fan-out (streaming thread, nothing in
 * flight). Returns the copies per packet. */
size_t sendstream_fan_apply(urtp_sendstream_t *ss);
void sendstream_clients_init(urtp_sendstream_t *ss);
void sendstream_clients_free(urtp_sendstream_t *ss);
/* RTCP with clients (clients_lock inside): whether from is on a client's
 * host (or a client is a group); sends a report to every client's RTCP
 * address (returns how many took it, -1 without clients); the RTP
 * address to answer a NACK from `from` at (1, in *to; 0: no client to
 * answer; -1: no clients, the socket's remote) and counts rtx packets for
 * it. */
bool sendstream_clients_trust(urtp_sendstream_t *ss, const struct sockaddr_storage *from,
                              bool *trusted);
int sendstream_clients_report(urtp_sendstream_t *ss, urtp_rtcpio_t *io, const uint8_t *buf,
                              size_t len);
int sendstream_clients_nack_dest(urtp_sendstream_t *ss, const struct sockaddr_storage *from,
                                 struct sockaddr_storage *to);
void sendstream_clients_count_rtx(urtp_sendstream_t *ss, const struct sockaddr_storage *to,
                                  uint64_t packets, uint64_t bytes);

/* Bits per second over the last second as of t (sendstream.c). */
uint64_t sendstream_meter_rate(meter_t *m, int64_t t);
/* Adds bytes sent at t (sendstream.c; stats_lock). */
void sendstream_meter_add(meter_t *m, uint64_t bytes, int64_t t);

/* sendcc.c: packets [first, end) of b left at mono (ns; the socket's
 * on_sent, user the stream); a retransmission (pkt, len) left at t; an
 * RTPFB packet of a trusted compound; at free. */
typedef struct sendstream_cc sendstream_cc_t;
void sendstream_cc_sent(void *user, const urtp_batch_t *b, size_t first, size_t end,
                        uint64_t mono);
void sendstream_cc_rtx_sent(urtp_sendstream_t *ss, const uint8_t *pkt, size_t len, int64_t t);
void sendstream_cc_feedback(urtp_sendstream_t *ss, const urtp_rtcp_pkt_t *p);
void sendstream_cc_free(urtp_sendstream_t *ss);
/* The pacing rate for a flush of `bytes` at t (ns), when the controller
 * runs (true); backlog: the pacer still holds earlier packets. */
bool sendstream_cc_pacing(urtp_sendstream_t *ss, size_t bytes, bool backlog, int64_t t,
                          uint64_t *rate);
/* The controller's target (bits/s), when it runs (before any feedback:
 * the start bitrate, which the encoder is asked for too), and the queue
 * it sees on the path (us). */
bool sendstream_cc_target(urtp_sendstream_t *ss, uint64_t *bps, int64_t *queue_us);
/* Receivers whose feedback drove a controller within URTP_SENDSTREAM_CC_IDLE
 * of now (us). */
unsigned sendstream_cc_receivers(urtp_sendstream_t *ss, int64_t now);
/* With agreed keys (key_sync or zrtp): brings ctx, an SRTCP context (dir)
 * or the RTX one (OUTBOUND, ssrc the RTX SSRC), in line with them; false
 * while there are none (sendstream.c). */
bool sendstream_agreed_rtcp_keys(urtp_sendstream_t *ss, urtp_srtp_t *ctx, urtp_srtp_dir_t dir,
                                 uint32_t ssrc);

#endif
