/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recvstream.h - a receiving stream: datagrams in, access units out.
 *
 * Everything a receiver of one RTP stream does between the socket and the
 * decoder, for H.264, H.265, H.266 and Opus:
 *
 *   datagram --> ZRTP? ---------------------> the key agreement (zrtp_ep.h)
 *            --> SRTP unprotect in place (keys given, or agreed by ZRTP)
 *            --> RTP header parsed once, payload type checked
 *            --> source layer (source.h): which SSRC is followed
 *            --> reordering and reassembly (depay.h)
 *            --> timing (timing.h): presentation time on the caller's clock
 *            --> access unit, with the session's parameter sets in band
 *                before the first one and after every change of source
 *
 * RTCP (rtcp.h): the reception statistics of the followed source are kept
 * as its packets come (A.1, A.3, A.8); RTCP compound packets given to
 * urtp_recvstream_push_rtcp() (or arriving among the datagrams, with
 * rtcp_mux) yield the source's sender reports and CNAME, and its BYE hands
 * over to the next source at once; urtp_recvstream_rtcp_report() builds
 * our receiver report. When to send it (urtp_rtcp_sched) is the caller's.
 *
 * Whom RTCP is taken from (plain RTP: anyone can read the SSRC off the
 * wire and forge the rest). The followed source is its SSRC at the address
 * its media comes from (RFC 3550 8.2), placed when it became the followed
 * source (the packet that made it so, or its next one). Its sender
 * reports, CNAME and BYE are taken only from that host (RTCP may come
 * from another port), and where our reports and feedback go is learnt
 * only from its sender reports: compounds from any other host are counted
 * (rtcp_foreign) and change nothing, so a stranger can neither redirect
 * our feedback nor end, rename or re-time the stream. The destination
 * moves only with the followed source (a change of source, or a restart
 * the source layer accepted). With SRTP (SRTCP verified) every address is
 * trusted; RTCP handed over without an address (push_rtcp) is trusted,
 * the caller vouching for it. A sender report whose NTP/RTP mapping
 * disagrees with the one in use by more than URTP_RECVSTREAM_SR_TOLERANCE
 * (plus URTP_RECVSTREAM_SR_DRIFT_PPM of the time between them) is ignored
 * (sr_rejected), unless the next one agrees with it (a clock stepped at
 * the sender: sr_remapped).
 * With SRTP, RTCP is SRTCP both ways (RFC 3711 3.4): the sender's
 * compounds are verified with the stream's key before anything of them is
 * read, and our reports are protected under our own SSRC with the same
 * master key (static), or with our side's key of the ZRTP agreement
 * (RFC 6189 4.5.3: SRTCP takes the same key and salt per direction).
 *
 * Loss recovery (RFC 4585, 4588, 5104), with RTCP: the followed source's
 * packets go through a loss tracker (nack.h); a missing packet that
 * reordering can no longer explain is asked for with a generic NACK, and
 * again after each round trip while an answer can still beat `latency`
 * (at once when a gap in the RTX stream's sequence numbers shows that its
 * retransmission was lost: urtp_nack_rtx_gap).
 * Retransmissions (RTX, rtx.h: their own payload type and SSRC) of packets
 * asked for are unwrapped in place and go on as the originals, before
 * reordering; RTX nobody asked for is dropped. With request_keyframe, a
 * packet given up for lost (nothing recovered it), or the caller's
 * request, sends a PLI (or FIR), at most one per
 * URTP_RECVSTREAM_PLI_INTERVAL unless a key frame came since. Feedback
 * goes at once (RFC 4585's immediate mode) in a compound of its own (RR,
 * SDES, then NACK, PLI or FIR) to where our reports go, and only once
 * that is known: a receiver whose sender never sent RTCP asks for
 * nothing.
 *
 * The caller owns the socket (net.h): it receives batches and passes them
 * here with the time they arrived, then pops access units. The stream
 * itself does no I/O (ZRTP answers go out through the endpoint), so it
 * runs the same on a real socket and under a virtual clock in tests.
 *
 * Promises:
 *  - Nothing from the wire is trusted: every datagram is counted exactly
 *    once in urtp_recvstream_stats_t (see there), and what does not belong
 *    to the stream never reaches the output.
 *  - A change of source (another SSRC took over, or the current one
 *    restarted its numbering) resets reordering, reassembly and timing
 *    together; the next access unit is flagged URTP_FRAME_DISCONT and
 *    carries the parameter sets, and an event names both SSRCs.
 *  - Presentation times are on the caller's clock (the one `now` is read
 *    from), anchored on the access unit that is output, skew-corrected.
 *  - Packets in order are copied once, into the access unit; nothing
 *    allocates per packet. Memory is bounded by the configuration.
 *  - urtp_recvstream_stats() may be called from any thread at any time; it
 *    returns the counters as of the end of the last call that changed
 *    them, and waits at most for a copy of them, never for a batch.
 *  - Everything else: one thread at a time.
 */
#ifndef URTP_RECVSTREAM_H
#define URTP_RECVSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "codec.h"
#include "depay.h"
#include "nack.h"
#include "net.h"
#include "rtcp.h"
#include "source.h"
#include "srtp.h"

/* Sender reports that disagree with the mapping in use by more than
 * this (ns), plus the drift allowed between two clocks over the time
 * between the reports, are ignored (see RTCP above). */
#define URTP_RECVSTREAM_SR_TOLERANCE 20000000ll
#define URTP_RECVSTREAM_SR_DRIFT_PPM 1000
/* Lip sync moves a stream's presentation times by at most this much per
 * access unit (ns), once it is in step: less than the shortest access
 * unit it meets (Opus' 10 ms ones, or 20 ms ones), so presentation times
 * never run backwards, and within what a viewer notices at once. */
#define URTP_RECVSTREAM_SYNC_STEP 5000000ll
/* NACKs stop for a source that has not answered a single one this long
 * after the first (ns), with at least this many sequence numbers asked. */
#define URTP_RECVSTREAM_NACK_GIVE_UP 3000000000ull
#define URTP_RECVSTREAM_NACK_UNANSWERED 16

/* Defaults. */
#define URTP_RECVSTREAM_LATENCY 50000000ull         /* ns a gap is waited for */
#define URTP_RECVSTREAM_SOURCE_TIMEOUT 500000000ull /* ns of silence before another SSRC may take over */
#define URTP_RECVSTREAM_WINDOW 1024                 /* packets of reordering */

typedef struct urtp_zrtp_ep urtp_zrtp_ep_t;

typedef struct urtp_recvstream_config {
  urtp_codec_t codec;
  int pt;                   /* expected payload type; -1: any */
  uint32_t clock_rate;      /* 0: the codec's */
  int64_t ssrc;             /* follow only this SSRC; -1: any (source.h) */
  uint64_t source_timeout;  /* ns; 0: URTP_RECVSTREAM_SOURCE_TIMEOUT */
  uint64_t latency;         /* ns a missing packet is waited for; 0: none */
  size_t reorder_window;    /* packets; 0: URTP_RECVSTREAM_WINDOW */
  size_t max_packet;        /* largest RTP packet kept aside; 0: 1500 */
  size_t max_au_size;       /* bytes; 0: URTP_DEPAY_DEFAULT_MAX_AU */
  urtp_loss_policy_t loss_policy;
  bool wait_for_keyframe;
  bool donl;                /* H.265 with sprop-max-don-diff > 0 */
  /* Parameter sets to put in band (Annex-B, e.g. from sprop-* with
   * urtp_params); copied. */
  const uint8_t *params;
  size_t params_len;
  /* SRTP with a static key (NULL: none), or keys agreed by ZRTP on the
   * stream's socket (NULL: none); not both. */
  const urtp_srtp_config_t *srtp;
  urtp_zrtp_ep_t *zrtp;
  bool zrtp_allow_clear;    /* accept media in clear while ZRTP has no keys */
  unsigned replay_window;   /* SRTP replay window with ZRTP; 0: libsrtp2's */
  /* RTCP: our SSRC in receiver reports (0: a random one), our CNAME
   * (NULL: urtp_rtcp_default_cname(); copied), and whether RTCP may
   * arrive among the RTP datagrams (RFC 5761; told apart by the second
   * byte, 192..223) */
  uint32_t rtcp_ssrc;
  const char *cname;
  bool rtcp_mux;
  /* Lip sync (sync.h): presentation times are delayed so that this stream
   * plays in step with the other streams of its sender (same CNAME) timed
   * on the same clock (sync_domain: any number naming the clock `now` is
   * read from; 0 is as good as any when there is one clock). */
  bool lip_sync;
  uint64_t sync_domain;
  /* Loss recovery (see above; needs RTCP through rtcp_service): NACKs
   * for missing packets; RTX packets of payload type rtx_pt taken; PLI on
   * packets given up. */
  bool nack;
  bool rtx;
  uint8_t rtx_pt;
  bool request_keyframe;
  /* packets behind the newest that are still reordering, not a sender
   * that restarted its numbering (source.h's max_misorder); 0: the
   * reorder window, at least URTP_SOURCE_MAX_MISORDER */
  unsigned max_misorder;
  /* bytes before the RTP header in every datagram (udpsrc's
   * skip-first-bytes): cut off first; a shorter datagram is malformed */
  size_t skip_bytes;
  /* Congestion control feedback (twcc.h, ccfb.h; needs RTCP through
   * rtcp_service): the followed source's arrivals answered with
   * transport-wide feedback (RTPFB FMT 15) on the transport-wide sequence
   * number in header extension element twcc_id (1-255; 0: none), and with
   * rfc8888, RFC 8888 feedback (FMT 11) on their RTP sequence numbers;
   * sent every ccfb_interval ns, or with 0 after each packet with the
   * marker bit (a frame's end), and at least every
   * URTP_RECVSTREAM_CCFB_MAX_INTERVAL while packets arrive. */
  unsigned twcc_id;
  bool rfc8888;
  uint64_t ccfb_interval;
} urtp_recvstream_config_t;

/* The longest congestion control feedback waits for a marker bit (ns): at
 * a step down a frame takes hundreds of ms to arrive, and the sender
 * should know within a frame's time. */
#define URTP_RECVSTREAM_CCFB_MAX_INTERVAL 25000000ull

/* The least time between two key frame requests, unless a key frame
 * arrived in between (ns). */
#define URTP_RECVSTREAM_PLI_INTERVAL 300000000ull
/* Wider gaps in an RTX stream's sequence numbers are a jump, not
 * retransmissions lost (packets). */
#define URTP_RECVSTREAM_RTX_MAX_GAP 1024
/* The reordering window with nack, at least (packets): a gap must wait
 * for its retransmission while a large picture arrives behind it. */
#define URTP_RECVSTREAM_NACK_WINDOW 4096

/* Frame flags (beyond urtp_au_t's). */
enum {
  URTP_FRAME_DISCONT = 1 << 8,   /* something is missing before it (loss,
                                  * dropped access units, a new source) */
  URTP_FRAME_PARAMS = 1 << 9,    /* put urtp_recvstream_params() before it */
};

typedef struct urtp_recvstream_frame {
  urtp_au_t au;             /* data: release with urtp_depay_release() */
  uint64_t pts;             /* on the caller's clock */
  uint32_t ssrc;
  uint32_t flags;           /* URTP_AU_* and URTP_FRAME_* */
  /* sequence numbers between the previous frame and this one whose media
   * is not in the output (lost, or in access units dropped), when both
   * are of one numbering: 0 after a change of source, a restart or a
   * resync (what a decoder's concealment covers; rtpjitterbuffer's lost
   * packets) */
  uint64_t missing;
} urtp_recvstream_frame_t;

typedef enum urtp_recvstream_event_kind {
  URTP_RECVSTREAM_EV_SOURCE,  /* source.h event: first source, change, restart */
  URTP_RECVSTREAM_EV_REKEYED, /* ZRTP agreed new keys: the peer started over */
} urtp_recvstream_event_kind_t;

typedef struct urtp_recvstream_event {
  urtp_recvstream_event_kind_t kind;
  urtp_source_event_t source;
} urtp_recvstream_event_t;

typedef struct urtp_recvstream_stats {
  /* Every datagram offered is counted once in exactly one of:
   * zrtp (handed to the key agreement), zrtp_dropped (clear media while
   * ZRTP has no keys), srtp.auth_fail / srtp.replay / srtp.other,
   * malformed_rtp (not RTP, or RTCP without rtcp_mux), wrong_pt, source.foreign / source.stray /
   * source.held_dropped / source.pending, rtx_dropped, or the reorder
   * window's
   * delivered / duplicates / late / waiting; except that a packet too
   * large for a reorder slot that had to wait is counted only as the
   * sequence number it leaves lost. */
  uint64_t datagrams;
  uint64_t zrtp;
  uint64_t zrtp_dropped;
  uint64_t zrtp_clear;      /* passed in clear (zrtp_allow_clear) */
  uint64_t malformed_rtp;
  uint64_t wrong_pt;
  urtp_srtp_stats_t srtp;
  urtp_source_stats_t source;
  urtp_depay_stats_t depay; /* packets, access units, loss, reordering */
  uint64_t waiting;         /* packets waiting in the reorder window */
  uint64_t frames;          /* popped */
  uint64_t timing_resets;   /* the mapping re-anchored on a timestamp jump */
  int64_t skew;             /* ns: the current transit delay estimate */
  uint64_t rekeys;
  uint32_t ssrc;            /* the current source */
  bool have_source;
  /* datagrams the caller dropped before offering them (resync) */
  uint64_t flushed;
  /* the socket's, as of the last urtp_recvstream_push_rx() */
  uint64_t syscalls;        /* receive system calls */
  uint64_t truncated;       /* datagrams larger than a receive slot */
  uint64_t kernel_drops;    /* dropped by the kernel: receive buffer full */

  /* RTCP compound packets offered (urtp_recvstream_push_rtcp, or among the
   * datagrams with rtcp_mux, then counted there in none of the above):
   * each once in rtcp or rtcp_bad (fails RFC 3550 A.2's check, or SRTCP's) */
  uint64_t rtcp;
  uint64_t rtcp_bad;
  uint64_t rtcp_sr;         /* sender reports of the current source */
  uint64_t rtcp_foreign;    /* compounds (in rtcp) from another host than the
                             * followed source's that name it (its report,
                             * CNAME or BYE): nothing of them taken */
  uint64_t sr_rejected;     /* its sender reports ignored: their mapping
                             * disagreed with the one in use */
  uint64_t sr_remapped;     /* ... and taken after all: the next agreed */
  uint64_t rtcp_bye;        /* BYEs of the current source */
  uint64_t rtcp_sent;       /* receiver reports built */
  /* SRTCP in: unprotection's verdicts (auth_fail, replay and other are in
   * rtcp_bad too, as are compounds that came before ZRTP had keys); for
   * the life of the stream, across key changes */
  urtp_srtp_stats_t srtcp;
  /* the current source's last sender report (when rtcp_sr > 0): its NTP
   * and RTP times, its counts, and when it arrived (caller's clock) */
  uint64_t sr_ntp;
  uint32_t sr_rtp_ts;
  uint32_t sr_packets, sr_octets;
  uint64_t sr_arrival;
  /* what our next report will say of the current source (have_reception) */
  bool have_reception;
  urtp_rtcp_block_t reception;
  char cname[URTP_RTCP_MAX_TEXT + 1];  /* the current source's; "" until known */
  /* lip sync (when synced: a sender report and the CNAME are in): how much
   * later than the sender's NTP time access units are presented (before
   * the delay), and the delay added to be in step with the sender's
   * other streams */
  bool synced;
  int64_t sync_offset;
  int64_t sync_delay;
  /* loss recovery: the tracker's counts (each missing packet once as
   * reordered, recovered, late, lost or pending), NACK compounds sent, RTX
   * datagrams taken in (and passed on as their originals, counted there
   * too) or dropped (not asked for, malformed, another RTX stream), key
   * frame requests sent, and those the caller made */
  urtp_nack_stats_t nack;
  uint64_t nacks_sent;
  uint64_t rtx, rtx_dropped;
  uint32_t rtx_ssrc;            /* the RTX stream's, once one was taken */
  uint64_t pli_sent, fir_sent;
  uint64_t keyframe_requests;
  uint64_t nack_unanswered; /* sources NACKs stopped for: no RTX ever came
                             * (URTP_RECVSTREAM_NACK_GIVE_UP) */
  /* congestion control feedback: compounds that carried it; packets
   * recorded by transport-wide number (RTX included) and by RTP sequence
   * number (RFC 8888); a recorder's refusals: repeated, behind what was
   * reported, a lone jump (twcc.h) */
  uint64_t ccfb_sent;
  uint64_t twcc_recorded, rfc8888_recorded;
  uint64_t ccfb_duplicates, ccfb_late, ccfb_strays;
} urtp_recvstream_stats_t;

typedef struct urtp_recvstream urtp_recvstream_t;

/* Returns 0, -EINVAL for a bad configuration, -ENOMEM, or an SRTP error. */
int urtp_recvstream_new(const urtp_recvstream_config_t *cfg, urtp_recvstream_t **out);
void urtp_recvstream_free(urtp_recvstream_t *r);

/* Offers n received datagrams (net.h) that arrived at now. */
void urtp_recvstream_push(urtp_recvstream_t *r, const urtp_dgram_t *dgrams, size_t n,
                          uint64_t now);

/* The same for what urtp_sock_recv() just put in rx (n datagrams), and the
 * socket's counters into the statistics. */
void urtp_recvstream_push_rx(urtp_recvstream_t *r, const urtp_sock_t *sock, const urtp_rx_t *rx,
                             size_t n, uint64_t now);

/* The same for one datagram; from may be NULL. */
void urtp_recvstream_push_one(urtp_recvstream_t *r, uint8_t *pkt, size_t len,
                              const struct sockaddr_storage *from, uint64_t now);

/* Datagrams of the last batch pushed that wait for room in the output
 * queue: a batch stops while the queue is nearly full (a burst of small
 * packets, each its own access unit, would overflow it), and the rest is
 * taken by urtp_recvstream_resume() (urtp_recvstream_run() calls it
 * before it receives again), after the caller popped. The datagrams stay
 * in the caller's receive buffer: it must not receive into it while this
 * is not 0. */
size_t urtp_recvstream_held(const urtp_recvstream_t *r);
/* Takes what is held, as far as the queue has room; returns how many
 * datagrams it took. */
size_t urtp_recvstream_resume(urtp_recvstream_t *r);

/* Gives up on what has waited long enough: gaps (latency) and a source
 * waiting to take over. */
void urtp_recvstream_expire(urtp_recvstream_t *r, uint64_t now);

/* When urtp_recvstream_expire() next has work; UINT64_MAX if none. */
uint64_t urtp_recvstream_deadline(const urtp_recvstream_t *r);

/* Takes the next access unit. */
bool urtp_recvstream_pop(urtp_recvstream_t *r, urtp_recvstream_frame_t *f);

/* Takes the next event (at most 16 are kept; older ones are dropped). */
bool urtp_recvstream_next_event(urtp_recvstream_t *r, urtp_recvstream_event_t *ev);

/* The parameter sets of URTP_FRAME_PARAMS (Annex-B), or NULL. */
const uint8_t *urtp_recvstream_params(const urtp_recvstream_t *r, size_t *len);

/* End of stream: gives up every gap and finishes the access unit in
 * progress. */
void urtp_recvstream_flush(urtp_recvstream_t *r);

/* Forgets the stream position without counting anything lost (after a
 * pause: the caller dropped the `dropped` datagrams that queued meanwhile,
 * counted as flushed, as are those held): reordering and reassembly restart, the source and
 * the timing are kept, the next access unit is flagged DISCONT. */
void urtp_recvstream_resync(urtp_recvstream_t *r, uint64_t dropped);

/* Changes how long a gap is waited for (ns; the configuration's
 * latency) while running: gaps open now wait the new time, and NACKs are
 * sent while an answer can beat it. Loss recovery stays as it was set up
 * (off when the stream started with latency 0). */
void urtp_recvstream_set_latency(urtp_recvstream_t *r, uint64_t latency);

/* Changes what congestion control feedback is sent (the configuration's
 * twcc_id, rfc8888 and ccfb_interval) while running: a feedback that is
 * turned on starts with the next packet. Returns 0, -EINVAL (twcc_id above
 * 255) or -ENOMEM. Streaming thread. */
int urtp_recvstream_set_ccfb(urtp_recvstream_t *r, unsigned twcc_id, bool rfc8888,
                             uint64_t interval);

/* Changes the format (codec, payload type, DONL, parameter sets) while
 * running; the counters carry on. Returns 0, -EINVAL or -ENOMEM. */
int urtp_recvstream_set_format(urtp_recvstream_t *r, urtp_codec_t codec, int pt,
                               uint32_t clock_rate, bool donl, const uint8_t *params,
                               size_t params_len);

/* An RTCP compound packet for the stream, arrived at now (caller's clock);
 * with SRTP, SRTCP verified and decrypted in place (zeroed when refused,
 * and nothing of it used). Returns 0, or -EBADMSG (counted in rtcp_bad). */
int urtp_recvstream_push_rtcp(urtp_recvstream_t *r, uint8_t *pkt, size_t len, uint64_t now);

/* Our receiver report at now into buf: an RR with a block on the current
 * source (none before there is one; LSR and DLSR from its last sender
 * report), SDES with our CNAME, and with `bye` a BYE (we leave). It ends
 * the interval of the fraction lost (A.3). With SRTP it is protected as
 * SRTCP, and cap must hold the report plus URTP_SRTP_MAX_TRAILER. Returns
 * its length; -ENOSPC when cap is too small; with ZRTP -EAGAIN until the
 * agreement is SECURE (nothing built); -EPROTO if protection failed.
 * Counted in rtcp_sent. */
int urtp_recvstream_rtcp_report(urtp_recvstream_t *r, uint64_t now, bool bye, uint8_t *buf,
                                size_t cap);

/* RTCP over io (rtcpio.h): takes what has arrived on its socket (learning
 * where to reply from the current source's sender reports), then sends
 * our report if it is due. now: the stream's clock (as for push); mono:
 * io's schedule clock. Returns how many sender reports of the current
 * source were taken. With rtcp_mux, io shares the RTP socket (its `mux`)
 * and is not read: what arrived among the datagrams since the last call
 * counts instead, and our reports go to where the last sender report came
 * from (the sender's RTP port), unless io's destination was set. Call it
 * once as soon as io is open: feedback learns here that a destination was
 * configured (urtp_recvstream_feedback_deadline() is UINT64_MAX until). */
struct urtp_rtcpio;
int urtp_recvstream_rtcp_service(urtp_recvstream_t *r, struct urtp_rtcpio *io, uint64_t now,
                                 uint64_t mono);

/* RTCP arrived among the datagrams (rtcp_mux), or a sender report that
 * came before its source was followed was taken, since the last
 * urtp_recvstream_rtcp_service (call it soon: a sender report waits). */
bool urtp_recvstream_rtcp_pending(const urtp_recvstream_t *r);
/* The stream is made of packets this library cannot read (depay.h's
 * URTP_DEPAY_UNSUPPORTED_STREAM in a row, none usable): fail, rather than
 * wait for pictures that cannot come. Cheap. */
bool urtp_recvstream_unsupported(const urtp_recvstream_t *r);

/* Where the followed source's media comes from (the packet that made it
 * the followed source, or its next one); false while not known. */
bool urtp_recvstream_source_addr(const urtp_recvstream_t *r, struct sockaddr_storage *addr);

/* --- the receive loop, for a caller that owns the sockets ------------------ */

typedef struct urtp_recvstream_io {
  urtp_sock_t *sock;            /* the RTP socket */
  urtp_rx_t *rx;                /* its receive slots */
  struct urtp_rtcpio *rtcp;     /* RTCP's socket and schedule; NULL: none */
  /* the stream's clock (push_rx's and expire's now); RTCP's is
   * CLOCK_MONOTONIC */
  uint64_t (*now)(void *user);
  void *user;
} urtp_recvstream_io_t;

/* One round of the loop every receiver runs: one wait on the socket (and
 * RTCP's, through its watch descriptor), no longer than max_wait_ns (-1:
 * no bound of the caller's), the stream's deadline (a gap given up,
 * feedback due) and RTCP's next report; then what came to the stream, its
 * expiries, and RTCP when something of it is there or due (a batch of
 * media costs no system call for RTCP's socket). Returns the datagrams
 * read (0: the wait ended without any), -EINTR (urtp_sock_wake()) or a
 * -errno of the socket; *sr (may be NULL) is set when RTCP brought a
 * sender report of the followed source. Pop frames before and after. */
int urtp_recvstream_run(urtp_recvstream_t *r, const urtp_recvstream_io_t *io, int64_t max_wait_ns,
                        bool *sr);

/* When feedback (a NACK, a key frame request) is next due, on the
 * stream's clock; UINT64_MAX: none, or nowhere to send it yet. Included
 * in urtp_recvstream_deadline(); urtp_recvstream_rtcp_service() sends it. */
uint64_t urtp_recvstream_feedback_deadline(const urtp_recvstream_t *r);

/* Asks the sender for a key frame (a decoder needs one): a FIR with fir,
 * else a PLI, with the next feedback (rate-limited as the requests the
 * stream makes itself). Counted in keyframe_requests. */
void urtp_recvstream_request_keyframe(urtp_recvstream_t *r, bool fir);

/* The clock `now` is read from changed (lip sync compares only streams on
 * one clock): see urtp_recvstream_config_t.sync_domain. */
void urtp_recvstream_set_sync_domain(urtp_recvstream_t *r, uint64_t domain);

/* Our SSRC in receiver reports. */
uint32_t urtp_recvstream_rtcp_ssrc(const urtp_recvstream_t *r);

/* Thread-safe snapshot of the counters. */
void urtp_recvstream_stats(urtp_recvstream_t *r, urtp_recvstream_stats_t *out);

#endif
