/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sendstream.h - the sending half of an RTP stream: access units in,
 * packets out on a socket.
 *
 * Everything between an encoder and the network for one RTP stream of
 * H.264 (RFC 6184), H.265 (RFC 7798), H.266 (RFC 9328) or Opus (RFC 7587):
 * framing, parameter sets and their re-sending, the codec_data forms,
 * SRTP, the hand-off to the socket or a send thread, and the accounting.
 * uvgrtpsink is a mapping of GStreamer's buffers, caps and properties onto
 * it; examples/urtp-send.c uses it with no GStreamer at all.
 *
 * Promises:
 *  - Input: whole access units or NAL-aligned pieces of them, Annex-B or
 *    NAL units prefixed by their lengths (avcC / hvcC, size from the codec
 *    data), or Opus packets. Payload bytes are never copied: packets point
 *    into the pushed bytes (pay.h, batch.h).
 *  - Holds: the bytes of a push stay untouched by the stream and must stay
 *    valid until the release callback is called with that push's hold:
 *    once per push, exactly once, on the thread calling push, flush, drain
 *    or free (never on the send thread), as soon as no packet waiting or in
 *    flight points into them: right after the send when sending inline,
 *    after the next flush or a drain with the send thread, right after
 *    protection with SRTP (protected packets are copies), at once for
 *    bytes that make no packet. With rtx the sent packets stay in the
 *    history (history.h) instead, and their holds are released as they
 *    leave it (pushes, flushes or free push them out).
 *  - Retransmission (rtx): NACKs (RFC 4585) from receivers' RTCP are
 *    answered with RTX packets (RFC 4588, rtx.h) under an SSRC of their
 *    own, on a handle of the RTP socket that shares the pacer, protected
 *    with SRTP when the media is (static key, or rtcp_key_sync with that
 *    SSRC). Each sequence number goes at most once per half round trip,
 *    and all of them within URTP_SENDSTREAM_RTX_SHARE of the bitrate
 *    (rtx.h's bucket: at most a quarter second of that share at once, no
 *    floor above it). When congestion control runs, the share is of the
 *    controller's target (the rate sent over the last second may be what
 *    the path took before a step down), and none go while its queue
 *    estimate is over URTP_SENDSTREAM_RTX_QUEUE_MAX. What a NACK asks is
 *    counted once as sent, missing, repeat or over budget. Keeping a batch costs a swap of pointers:
 *    nothing per packet.
 *  - Whom RTCP is taken from (plain RTP: anyone may forge it). On the RTCP
 *    thread (urtp_sendstream_rtcp_start), compounds are taken only from
 *    the host our RTCP goes to (any port: rtpbin reports from a socket of
 *    its own) or, when that is a multicast group, from anywhere; the rest
 *    is counted in rtcp_foreign and changes nothing. With SRTCP every
 *    verified compound counts. A report block must echo one of our last
 *    URTP_SENDSTREAM_SR_KEPT sender reports (LSR), or none yet, to count
 *    (rr_rejected): its round trip is then one we can have caused. Key
 *    frame requests count only from receivers that have reported on the
 *    stream (keyframe_requests_unknown), at most one per
 *    keyframe_interval.
 *  - Parameter sets (params.h): those of the codec data and those an
 *    access unit carries in band become the current ones; with
 *    config_interval they are sent again, in order, before an IRAP/IDR
 *    picture that does not carry them itself (after its leading access
 *    unit delimiter), never twice in one access unit.
 *  - One flush, one batch: SRTP protection (srtp.h) into a second batch,
 *    then one urtp_sock_send, inline or on the send thread (sendthread.h); the
 *    system calls per access unit are those of the socket layer alone.
 *  - Keys: a static SRTP key, or keys agreed elsewhere (ZRTP) through
 *    key_sync before each batch. Without keys a batch is held back and
 *    counted, or with allow_clear sent in clear and counted; keys_ready
 *    tells when sending with keys starts.
 *  - RTCP with SRTP is SRTCP (RFC 3711 3.4), both ways, with the same
 *    master key (static, or rtcp_key_sync's): our reports protected, the
 *    receivers' (any SSRC) authenticated before they are read. The RTCP
 *    side has SRTP contexts of its own, never the media path's, so the
 *    streaming thread and the RTCP thread do not share one.
 *  - A send blocked on a full socket buffer ends with -EINTR once
 *    urtp_sendstream_unlock() is called (until urtp_sendstream_unlock_stop),
 *    and nothing is lost: the next flush or drain sends what was left,
 *    first, or urtp_sendstream_drop() gives it up. So a pause can wait and
 *    resume, a flush can drop.
 *  - Pacing (urtp_sendstream_set_pacing): the socket sends through the
 *    stream's pacer (pacer.h); sends keep their GSO runs, spread in time.
 *  - Sending that has failed without a break for fail_timeout_ns turns into
 *    -ETIMEDOUT; single failures are only counted (a receiver that is not
 *    up yet reports ICMP errors, which must not end a sender).
 *  - Threads: one streaming thread calls push, flush, drain, set_format,
 *    set_codec_data and free; get_stats, sdp, set_config_interval, unlock
 *    and unlock_stop may be called from any thread, and take at most a
 *    lock the streaming thread holds for a copy or a few counters.
 *  - No allocation per packet: memory grows to the largest access unit and
 *    is then reused.
 */
#ifndef URTP_SENDSTREAM_H
#define URTP_SENDSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc.h"
#include "codec.h"
#include "hdrext.h"
#include "net.h"
#include "params.h"
#include "rtcp.h"
#include "sdp.h"
#include "srtp.h"

typedef struct urtp_sendstream urtp_sendstream_t;

typedef enum urtp_input_form {
  URTP_INPUT_ANNEXB,            /* NAL units after start codes */
  URTP_INPUT_LENGTH_PREFIXED,   /* NAL units after big-endian lengths */
} urtp_input_form_t;

/* What is sent and how it comes in; may change between pushes. */
typedef struct urtp_sendstream_format {
  urtp_codec_t codec;
  uint8_t pt;                   /* payload type, 0..127 */
  size_t mtu;                   /* largest RTP packet; 0: URTP_PAY_DEFAULT_MTU */
  bool aggregate;               /* STAP-A / AP for small NAL units */
  bool pad_fragments;           /* equal-sized FUs (pay.h); used only where
                                 * the socket sends with UDP GSO */
  urtp_input_form_t input;
  unsigned nal_length_size;     /* LENGTH_PREFIXED: 1..4; 0: from the codec data */
  bool align_nal;               /* pushes are NAL-aligned pieces of access
                                 * units (URTP_SEND_END_AU marks the last);
                                 * else each push is one whole access unit */
  unsigned channels;            /* Opus: 1 or 2 (SDP sprop-stereo); with
                                 * opus_multi its channel count */
  urtp_opus_multi_t opus_multi; /* Opus of more than two channels (codec.h);
                                 * channels 0: Opus of 1 or 2 */
} urtp_sendstream_format_t;

/* Called once per push when the stream no longer needs its bytes. */
typedef void (*urtp_sendstream_release_fn)(void *user, void *hold);
/* Brings ctx (the stream's SRTP context: zeroed at first, then whatever
 * this callback left in it) in line with the current keys; returns whether
 * ctx holds keys to protect with. Called on the streaming thread before
 * each batch is protected. */
typedef bool (*urtp_sendstream_key_sync_fn)(void *user, urtp_srtp_t *ctx);
/* key_sync returned keys after a batch without: a receiver that missed
 * what went before needs a key frame. Called on the streaming thread. */
typedef void (*urtp_sendstream_keys_ready_fn)(void *user);
/* SRTCP with keys agreed elsewhere: brings ctx, one of the stream's two
 * RTCP contexts, in line with the current keys, as key_sync does for the
 * media's: dir OUTBOUND protects our reports (SSRC ssrc), INBOUND
 * unprotects the receivers' (ssrc 0: any). With rtx it also keeps the RTX
 * packets' context: OUTBOUND with ssrc the RTX SSRC (three contexts: tell
 * them apart by dir and ssrc). Returns whether ctx holds keys. Called
 * where reports are built and compounds taken (the RTCP thread), one
 * context at a time. */
typedef bool (*urtp_sendstream_rtcp_key_sync_fn)(void *user, urtp_srtp_t *ctx,
                                                 urtp_srtp_dir_t dir, uint32_t ssrc);

typedef struct urtp_sendstream_config {
  uint32_t ssrc;
  uint16_t seq_start;           /* sequence number of the first packet */
  int config_interval;          /* 0: never; -1: before every IRAP/IDR
                                 * picture lacking the sets; N: at the
                                 * first one N seconds after they last went */
  bool send_thread;             /* send on a thread of its own (sendthread.h) */
  bool send_thread_paced;       /* ... from the first flush that paces on
                                 * (pacing or congestion control): the
                                 * pacer's waits then do not hold the
                                 * caller. Only for a caller whose every
                                 * push comes with a hold (release) */
  const urtp_srtp_config_t *srtp; /* static keys: profile, key, key_len are
                                 * read (copied); direction and SSRC are
                                 * the stream's. NULL: none */
  urtp_sendstream_key_sync_fn key_sync; /* keys agreed elsewhere (not with srtp) */
  bool allow_clear;             /* key_sync: send in clear while no keys */
  urtp_sendstream_keys_ready_fn keys_ready; /* may be NULL */
  urtp_sendstream_rtcp_key_sync_fn rtcp_key_sync; /* SRTCP with key_sync;
                                 * NULL: no reports with key_sync (-ENOTSUP) */
  /* Keys agreed by this ZRTP endpoint (zrtp_ep.h), as key_sync and
   * rtcp_key_sync would bring them: media, RTX and SRTCP in line with
   * them, the media only once the endpoint is SECURE (allow_clear and
   * keys_ready apply). Not with srtp or key_sync; the endpoint outlives
   * the stream. NULL: none. */
  struct urtp_zrtp_ep *zrtp;
  urtp_sendstream_release_fn release;       /* may be NULL */
  void *user;                   /* for the callbacks */
  int64_t fail_timeout_ns;      /* 0: 2 s */
  const urtp_sendstream_format_t *format; /* NULL: set_format before pushing */
  const char *cname;            /* RTCP CNAME (NULL: urtp_rtcp_default_cname(); copied) */
  /* Retransmission (RFC 4588, see the promises): with rtx, RTX packets of
   * payload type rtx_pt (0..127) answer NACKs; without, sent packets are
   * released at once. */
  bool rtx;
  uint8_t rtx_pt;
  uint32_t rtx_ssrc;            /* 0: a random one, not the media's */
  size_t rtx_max_packets;       /* history bounds; 0: history.h's defaults */
  uint64_t rtx_max_age_ns;
  /* A receiver asked for a key frame (PLI, or a new FIR): at most one call
   * per URTP_SENDSTREAM_KEYFRAME_INTERVAL, on the thread taking RTCP; NULL:
   * requests are only counted. fir: the request was a FIR. */
  void (*keyframe)(void *user, bool fir);
  uint64_t keyframe_interval;   /* ns; 0: URTP_SENDSTREAM_KEYFRAME_INTERVAL */
} urtp_sendstream_config_t;

/* The least time between two key frame requests passed on (ns), unless
 * keyframe_interval says otherwise: one picture answers every request
 * made while it is on its way. */
#define URTP_SENDSTREAM_KEYFRAME_INTERVAL 200000000ull
/* Retransmissions may take this share of the stream's bitrate (over the
 * last second): a NACK storm cannot multiply it. */
#define URTP_SENDSTREAM_RTX_SHARE 0.5
/* With congestion control, no retransmission while the path's queue is
 * longer than this (us): one would arrive a queue late (past half of
 * rtpjitterbuffer's default latency), and join the queue the controller is
 * draining. */
#define URTP_SENDSTREAM_RTX_QUEUE_MAX 100000
/* Our sender reports a receiver's block may echo (LSR). */
#define URTP_SENDSTREAM_SR_KEPT 16

/* Flags of a push. */
#define URTP_SEND_END_AU  0x1u  /* NAL-aligned input: these bytes end an AU */
#define URTP_SEND_DISCONT 0x2u  /* a gap before these bytes (Opus: the next
                                 * packet starts a talkspurt, marker set) */
#define URTP_SEND_HEADER  0x4u  /* stream header (OpusHead, OpusTags), not sent */

/* push's own counters (access_units, padding_bytes, config_missing aside)
 * are published by flush and drain. */
/* A receiver of the stream, as its reports tell. */
#define URTP_SENDSTREAM_MAX_RECEIVERS 16
typedef struct urtp_sendstream_receiver {
  uint32_t ssrc;                /* the reporter's */
  urtp_rtcp_block_t rr;         /* its latest block about this stream */
  int64_t rtt_ns;               /* from that block; -1: it carried no LSR */
  uint64_t last_ntp;            /* when it arrived (NTP format, our wall clock) */
  uint64_t reports;             /* blocks about this stream */
  struct sockaddr_storage from; /* where it came from (ss_family 0: not known) */
} urtp_sendstream_receiver_t;

typedef struct urtp_sendstream_stats {
  uint64_t packets;             /* RTP packets the kernel took */
  uint64_t bytes;               /* their bytes, SRTP tags included */
  uint64_t access_units;        /* pushed whole (video) or Opus packets */
  uint64_t send_errors;         /* packets refused, plus ICMP error reports */
  uint64_t syscalls;            /* send system calls */
  uint64_t send_messages;       /* what they handed over: a packet or a GSO run */
  uint64_t padding_bytes;       /* RTP padding packetized (pad_fragments) */
  uint64_t srtp_errors;         /* packets SRTP protection refused */
  uint64_t held_aus;            /* access units not sent: no keys yet */
  uint64_t held_packets;        /* their packets */
  uint64_t sent_clear;          /* packets sent in clear (allow_clear) */
  uint64_t config_missing;      /* IRAP pictures config_interval had no sets for */
  uint64_t interrupts;          /* sends interrupted by unlock */
  uint64_t dropped;             /* packets given up unsent (drop, free) */
  int last_error;               /* errno of the latest failed send; 0: none */
  urtp_io_mode_t tx_mode;       /* the socket's send mode (GSO may fall back) */
  int send_thread_error;        /* send_thread asked for, but no thread could
                                 * be started (-errno): sending inline */
  uint64_t bitrate;             /* bits per second sent over the last second */
  /* pacing (urtp_sendstream_set_pacing) */
  uint64_t pacing_rate;         /* bits per second in effect; 0: not pacing */
  uint64_t pacing_waits;        /* chunks that waited for their turn */
  uint64_t pacing_waited_ns;    /* the time they waited, summed */
  uint64_t pacing_max_wait_ns;  /* the longest wait */
  uint64_t pacing_max_queue;    /* the most bytes held back at once */
  uint64_t pacing_behind;       /* times the stream fell behind its pacing rate
                                 * (urtp_sendstream_pacing_behind) */
  /* RTCP: reports built, compound packets offered (each once in rtcp_in or
   * rtcp_bad), report blocks about this stream among them */
  uint64_t rtcp_sent;
  uint64_t rtcp_in, rtcp_bad;
  uint64_t rr_blocks;
  uint64_t rtcp_foreign;        /* compounds from no receiver's host: dropped
                                 * (in neither rtcp_in nor rtcp_bad) */
  uint64_t rr_rejected;         /* blocks about us that echoed no report of
                                 * ours (not in rr_blocks) */
  /* SRTCP: compounds that arrived, as unprotection judged them (packets
   * verified; auth_fail, replay and other are in rtcp_bad too, as are
   * compounds that came before there were keys); for the life of the
   * stream, across key changes */
  urtp_srtp_stats_t srtcp;
  /* the latest of those blocks (rr_blocks > 0): who sent it, what it says,
   * and the round-trip time it gives (ns; -1: it carried no LSR) */
  uint32_t rr_ssrc;
  urtp_rtcp_block_t rr;
  int64_t rtt_ns;
  /* every receiver that reported on this stream (the latest
   * URTP_SENDSTREAM_MAX_RECEIVERS; one that says BYE leaves), in order of
   * first report */
  unsigned nreceivers;
  urtp_sendstream_receiver_t receivers[URTP_SENDSTREAM_MAX_RECEIVERS];
  /* loss recovery: NACK packets about this stream and the sequence
   * numbers they asked for; each asked-for number once in rtx_packets
   * (retransmitted; rtx_bytes their bytes, not in bitrate), rtx_missing
   * (not in the history), rtx_repeats (sent within half a round trip already),
   * rtx_over_budget, or rtx_errors (SRTP or the socket refused it) */
  uint64_t nacks_received, nack_seqs;
  uint64_t rtx_packets, rtx_bytes;
  uint64_t rtx_missing, rtx_repeats, rtx_over_budget;
  uint64_t rtx_errors;
  uint32_t rtx_ssrc;
  uint64_t history_packets;     /* kept for retransmission now */
  /* key frame requests: PLIs and new FIRs about this stream, and those
   * passed on (the rest came within URTP_SENDSTREAM_KEYFRAME_INTERVAL) */
  uint64_t pli_received, fir_received, keyframe_requests;
  uint64_t keyframe_requests_unknown; /* PLIs and FIRs of receivers that never
                                 * reported on the stream: ignored */
  /* fan-out (urtp_sendstream_add_client): clients now, and the packets
   * and bytes handed to the kernel for all of them together (packets and
   * bytes above count each packet once, as our sender reports do) */
  unsigned nclients;
  uint64_t packets_served, bytes_served;
  uint16_t next_seq;            /* the next packet's sequence number (as of
                                 * the last flush) */
  /* congestion control feedback (urtp_sendstream_set_ccfb) from trusted
   * receivers: transport-wide (FMT 15) and RFC 8888 (FMT 11) messages
   * taken, and refused as malformed; the packets of ours they reported
   * received and lost (each once); their reports of numbers we never sent
   * or no longer remember, and of packets already reported (by the same
   * receiver); messages of receivers past the URTP_SENDSTREAM_CC_RECEIVERS
   * tracked, ignored; and the receivers whose feedback was heard within
   * URTP_SENDSTREAM_CC_IDLE of this call (each drives a controller of its
   * own) */
  uint64_t ccfb_received, rfc8888_received, ccfb_malformed;
  uint64_t ccfb_acked, ccfb_lost;
  uint64_t ccfb_unknown, ccfb_repeated;
  uint64_t ccfb_untracked;
  unsigned ccfb_receivers;
} urtp_sendstream_stats_t;

/* Creates a stream sending on sock (opened with a remote; it must outlive
 * the stream and is used by the stream alone while it sends). Returns 0;
 * -EINVAL for a bad configuration (srtp together with key_sync, a bad
 * format); -ENOTSUP if SRTP is asked for without SRTP support, or the
 * profile is not available; -ENOMEM; -errno from pthread_create. */
int urtp_sendstream_new(urtp_sendstream_t **out, urtp_sock_t *sock,
                        const urtp_sendstream_config_t *cfg);
/* Waits for what is in flight, drops what was pushed but not flushed (and
 * an interrupted send's rest), releases every hold, ends the send thread
 * and frees. NULL is fine. */
void urtp_sendstream_free(urtp_sendstream_t *ss);

/* Sets what is sent. Sequence numbers continue. A new codec forgets the
 * parameter sets; the same codec keeps them (an encoder may send them in
 * band once only). Returns 0; -EINVAL (mtu below URTP_PAY_MIN_MTU or above
 * 65535, pt above 127, Opus with other than 1 or 2 channels, length-
 * prefixed H.266 or Opus, a NAL length size above 4); -EMSGSIZE if mtu
 * leaves no room in a UDP datagram for the static SRTP key's tag; or what
 * flushing and draining return when the sets in use must change. */
int urtp_sendstream_set_format(urtp_sendstream_t *ss, const urtp_sendstream_format_t *fmt);

/* The largest mtu set_format accepts: 65535 less the static SRTP key's tag. */
size_t urtp_sendstream_mtu_max(const urtp_sendstream_t *ss);

/* Takes codec data (avcC for H.264, hvcC for H.265): its parameter sets
 * replace the current ones, and length-prefixed input uses its NAL length
 * size. Returns 0, or as urtp_params_set_record (-EINVAL malformed, -ENOTSUP
 * for H.266 and Opus), with nothing changed; -EINVAL before set_format. */
int urtp_sendstream_set_codec_data(urtp_sendstream_t *ss, const uint8_t *data, size_t len);

/* Any thread; the next IRAP picture sees it. */
void urtp_sendstream_set_config_interval(urtp_sendstream_t *ss, int interval);

/* Packetizes data with RTP timestamp ts into the batch being built; time_ns
 * (any monotonic time; < 0: unknown) paces config_interval. hold goes to
 * the release callback (see Promises). Returns the packets added (0 for
 * bytes that make none), or: -EINVAL before set_format; -EBUSY while an
 * interrupted send waits (flush or drop first); -EBADMSG (NAL unit lengths
 * overrun the bytes) or -EMSGSIZE (Opus packet larger than the mtu
 * allows): nothing of data is sent, the batch keeps what came before;
 * -ENOMEM: the whole batch being built is dropped; -EINTR, -ETIMEDOUT or
 * -ENOMEM from the flush and drain a change of the parameter sets in use
 * needs, with data not sent. hold is released in every case. */
int urtp_sendstream_push(urtp_sendstream_t *ss, const uint8_t *data, size_t len, uint32_t ts,
                         int64_t time_ns, unsigned flags, void *hold);

/* Sends the batch built since the last flush: keys, protection, then the
 * socket (inline) or the send thread (which first finishes the batch
 * before). What an interrupted send left goes first. Returns 0; -EINTR if
 * a send was interrupted by unlock (inline: this batch; with the send
 * thread: the batch before, and this one is not sent yet): call flush
 * again to go on, or drop; -ETIMEDOUT once sending has failed without a
 * break for fail_timeout_ns (stats.last_error says how; everything unsent
 * is dropped); -ENOMEM (batch dropped). */
int urtp_sendstream_flush(urtp_sendstream_t *ss);

/* Waits until nothing is in flight (sending what an interrupted send left)
 * and releases the holds; an unflushed batch stays. Returns 0, -EINTR
 * (interrupted again: call again or drop) or the thread's -ETIMEDOUT. */
int urtp_sendstream_drain(urtp_sendstream_t *ss);

/* Gives up what was pushed and not sent: the batch being built and an
 * interrupted send's rest (counted in stats.dropped), after waiting for
 * the batch in flight; releases their holds. For a flush or a stop. */
void urtp_sendstream_drop(urtp_sendstream_t *ss);

/* Any thread: makes a send waiting on a full socket buffer return, now and
 * until unlock_stop (net.h: urtp_sock_wake). */
void urtp_sendstream_unlock(urtp_sendstream_t *ss);
/* Any thread, with the streaming thread out of push, flush and drain: ends
 * the unlocked period (waits for the send thread to come back first). */
void urtp_sendstream_unlock_stop(urtp_sendstream_t *ss);

/* Any thread: a copy of the counters. */
void urtp_sendstream_get_stats(urtp_sendstream_t *ss, urtp_sendstream_stats_t *out);

/* Paces what the stream sends (pacer.h): at rate_bps bits per second, or
 * at factor times the stream's bitrate, whichever is higher (0 and 0: no
 * pacing), with bursts of at most burst bytes (0:
 * URTP_PACER_DEFAULT_BURST). The bitrate for the factor is what was pushed
 * over the last second of the pushes' own times (time_ns; the wall clock
 * where they have none), so pacing cannot hold it down, and in the first
 * second over the time since the first push (at least 100 ms). A batch
 * is sent as chunks of whole GSO runs spread in time, on the send thread
 * when there is one (so the streaming thread only waits when it gets ahead
 * by a whole batch), else inline; the waits can be interrupted as sends
 * can (urtp_sendstream_unlock). Any thread; takes effect at the next
 * flush. */
void urtp_sendstream_set_pacing(urtp_sendstream_t *ss, uint64_t rate_bps, double factor,
                                size_t burst);

/* True while the pacing rate is below what the stream needs: over the
 * last whole second the sends waited for the pacer more than 95% of the
 * time (the stream's input is then held back by the pacer). Any thread. */
bool urtp_sendstream_pacing_behind(urtp_sendstream_t *ss);

/* Header extensions (RFC 8285, hdrext.h). The elements every packet of the
 * next pushes carries (x NULL or empty: none), copied: set them before
 * each push whose values differ. Returns 0, or -EINVAL / -ENOSPC when they
 * cannot be sealed together with the transport-wide sequence number.
 * Streaming thread, between pushes. */
int urtp_sendstream_set_hdrext(urtp_sendstream_t *ss, const urtp_hdrext_t *x);
/* Numbers every packet sent from the next push on, retransmissions
 * included, with a transport-wide sequence number (one counter for the
 * session) in element id (1-255; 0: none). Returns 0 or -EINVAL. Streaming
 * thread, between pushes. */
int urtp_sendstream_set_twcc(urtp_sendstream_t *ss, unsigned id);
/* Bursts of the pacer under congestion control (bytes), at most: a
 * millisecond's worth of the rate, at least a packet. */
#define URTP_SENDSTREAM_CC_BURST 6000
/* Receivers (feedback senders) told apart under congestion control, each
 * with a controller of its own; one silent this long (ns) gives its place
 * to a new one and no longer counts. */
#define URTP_SENDSTREAM_CC_RECEIVERS 4
#define URTP_SENDSTREAM_CC_IDLE 5000000000ll

/* Congestion control feedback: with on, every packet that leaves from now
 * on is remembered (the last URTP_TWCC_WINDOW, by transport-wide number
 * when it has one, and by sequence number; 460 KiB taken once), and the
 * transport-wide (RTPFB FMT 15) and RFC 8888 (FMT 11) feedback of
 * receivers whose RTCP is taken (the trust rules above) is matched against
 * it: each packet of ours is taken from feedback once; what we never
 * sent, forgot, or had reported already is counted and nothing else
 * (stats). Returns 0 or -ENOMEM. Any thread. */
int urtp_sendstream_set_ccfb(urtp_sendstream_t *ss, bool on);
/* Congestion control (cc.h) on the feedback above: with cfg (min, max and
 * start bitrate; 0: cc.h's defaults) a controller runs on every
 * feedback (transport-wide when the packets carry the numbers, else RFC
 * 8888), one per receiver (the feedback's sender SSRC; up to
 * URTP_SENDSTREAM_CC_RECEIVERS, a fan-out's clients), and the stream goes
 * at the least target of those heard from within URTP_SENDSTREAM_CC_IDLE:
 * the slowest path's. The pacer sends each flush at the rate it says for it (bursts
 * of a millisecond's worth, up to URTP_SENDSTREAM_CC_BURST bytes, so that
 * frames go out as paced trains); the caller asks the encoder for
 * urtp_cc_stats_t.encoder_bps (the target, or more while the encoder
 * ramps up after a raise: cc.h). Called
 * again with cfg while running, only the bounds change; NULL: off (the
 * pacer back to urtp_sendstream_set_pacing's). Turns the feedback on.
 * Returns 0 or -ENOMEM. Any thread. */
int urtp_sendstream_set_congestion(urtp_sendstream_t *ss, const urtp_cc_config_t *cfg);
/* The state of the controller the stream goes by (false while it is off
 * or has had no feedback yet; out may be NULL). Any thread. */
bool urtp_sendstream_congestion(urtp_sendstream_t *ss, urtp_cc_stats_t *out);
/* The contributing sources (RFC 3550 CSRC list: the sources a mixer's
 * output came from) the packets of the next pushes list; n 0: none, at
 * most 15 (-EINVAL beyond). Streaming thread. */
int urtp_sendstream_set_csrcs(urtp_sendstream_t *ss, const uint32_t *csrc, unsigned n);

/* Clients: one stream to several receivers, as multiudpsink does it.
 *
 * Until one of these calls, the stream sends to its socket's remote. From
 * the first one on, the table of clients decides: each packet is made and
 * protected once and handed to the kernel once per client (per addition
 * of that client with send_duplicates, the default), each client in GSO
 * runs of its own. With one unicast client the socket is connected to it
 * (the fast path: what a stream without clients does); with several, or a
 * group, it is not, and any address may send to the RTP port (RTCP
 * multiplexed with RTP is then taken as from anyone: see the trust rules).
 * Changes take effect at the next flush (the batch in flight keeps its
 * clients), so adding or removing one loses nothing for the others.
 *
 * RTCP: with clients, our reports go to each client's rtcp address, and
 * compounds are taken from the hosts of the clients (from anywhere when one
 * is a group); a NACK is answered to the client it came from (the one
 * whose RTCP or RTP address it came from, else the first on its host). A
 * client that cannot be reached is counted (its send_errors); it never
 * ends the stream (-ETIMEDOUT applies to a stream without clients or with
 * one). Pacing with clients paces every copy: the rate set is per client.
 *
 * Addresses are of the socket's family; an IPv4 address on an IPv6 socket
 * is taken as its mapped form. Any thread. */
typedef struct urtp_sendstream_client {
  struct sockaddr_storage addr; /* RTP goes here */
  struct sockaddr_storage rtcp; /* our reports (ss_family 0: none) */
  unsigned adds;                /* times added and not removed; 0: gone
                                 * (kept for its statistics) */
  uint64_t packets, bytes;      /* RTP packets the kernel took for it */
  uint64_t send_errors;         /* packets it refused */
  uint64_t rtx_packets;         /* retransmissions answering its NACKs */
  int64_t added_ns, removed_ns; /* CLOCK_REALTIME; removed_ns 0: present */
} urtp_sendstream_client_t;

/* Adds a client (again: one more addition). Returns the additions it now
 * has, -EAFNOSUPPORT (an address the socket cannot send to), -EINVAL (no
 * port) or -ENOMEM. */
int urtp_sendstream_add_client(urtp_sendstream_t *ss, const struct sockaddr_storage *addr,
                               const struct sockaddr_storage *rtcp);
/* Takes one addition back; at none the client is gone. Returns the
 * additions left, or -ENOENT for an address that is no client. */
int urtp_sendstream_remove_client(urtp_sendstream_t *ss, const struct sockaddr_storage *addr);
/* Adds addr and takes one addition of old (NULL, or no client: none)
 * back in one step: no flush sees neither (udpsink's new host or port).
 * Returns as add_client, nothing changed on failure. */
int urtp_sendstream_replace_client(urtp_sendstream_t *ss, const struct sockaddr_storage *old,
                                   const struct sockaddr_storage *addr,
                                   const struct sockaddr_storage *rtcp);
/* Removes every client (the stream then sends to no one). */
void urtp_sendstream_clear_clients(urtp_sendstream_t *ss);
/* Whether a client added several times gets a copy per addition (the
 * default) or one. */
void urtp_sendstream_set_send_duplicates(urtp_sendstream_t *ss, bool dups);
/* One client's entry (present or gone, the latest URTP_SENDSTREAM_GONE_KEPT
 * gone ones are kept): 0, or -ENOENT. */
int urtp_sendstream_get_client(urtp_sendstream_t *ss, const struct sockaddr_storage *addr,
                               urtp_sendstream_client_t *out);
/* The present clients, in the order added: copies up to max of them into
 * out (may be NULL) and returns how many there are. */
size_t urtp_sendstream_get_clients(urtp_sendstream_t *ss, urtp_sendstream_client_t *out,
                                   size_t max);
#define URTP_SENDSTREAM_GONE_KEPT 64

/* RTCP (rtcp.h). Our sender report into buf: an SR whose NTP time `ntp`
 * corresponds to RTP timestamp `rtp_ts` (the caller maps its clock; for
 * receivers to line up several streams, one mapping for all of them), with
 * the packets and payload octets sent so far, then SDES with our CNAME,
 * and with `bye` a BYE (the stream ends); ntp 0: an empty RR instead of
 * the SR (a BYE when the caller's clock has stopped). With SRTP the
 * compound is protected as SRTCP in buf, which then needs
 * URTP_SRTP_MAX_TRAILER bytes of room after it. Any thread. Returns its
 * length; -ENOSPC when cap is too small; with SRTP -EAGAIN while
 * rtcp_key_sync has no keys (nothing counted), -ENOTSUP for key_sync
 * without rtcp_key_sync, -EPROTO if protection failed. Counted in
 * rtcp_sent. */
int urtp_sendstream_rtcp_report(urtp_sendstream_t *ss, uint64_t ntp, uint32_t rtp_ts, bool bye,
                                uint8_t *buf, size_t cap);

/* An RTCP compound packet that arrived at arrival_ntp (the wall clock as
 * NTP time, for the round-trip time): report blocks about this stream's
 * SSRC are kept in the statistics; NACKs about it are answered with RTX
 * packets from the history (with rtx), PLIs and FIRs call keyframe. With SRTP it is SRTCP, verified and
 * decrypted in place (zeroed when refused); nothing of a compound that
 * fails is used. Any thread. Returns 0, or -EBADMSG (counted in rtcp_bad,
 * and in srtcp when SRTCP refused it). */
int urtp_sendstream_push_rtcp(urtp_sendstream_t *ss, uint8_t *buf, size_t len,
                              uint64_t arrival_ntp);

/* RTCP on a thread of its own over io (rtcpio.h, opened by the caller
 * with we_send): sender reports when due, receivers' reports taken as
 * they arrive. clock gives the NTP time and the RTP timestamp of the
 * present moment (false: no mapping yet, the report waits); on_rr (may be
 * NULL) is told of each compound that carried a block about this stream.
 * Both run on that thread. Returns 0 or -errno (pthread_create). */
typedef bool (*urtp_sendstream_clock_fn)(void *user, uint64_t *ntp, uint32_t *rtp_ts);
typedef void (*urtp_sendstream_rr_fn)(void *user);
struct urtp_rtcpio;
int urtp_sendstream_rtcp_start(urtp_sendstream_t *ss, struct urtp_rtcpio *io,
                               urtp_sendstream_clock_fn clock, urtp_sendstream_rr_fn on_rr,
                               void *user);
/* Stops that thread; with bye, a last report with BYE goes out (with the
 * clock's mapping, if it has one). io stays the caller's. */
void urtp_sendstream_rtcp_stop(urtp_sendstream_t *ss, bool bye);

/* The stream's pacer, for other sockets that should share its budget
 * (retransmissions, RTCP): set it as their urtp_sock_t.pacer. */
struct urtp_pacer *urtp_sendstream_pacer(urtp_sendstream_t *ss);

/* The parameter sets in use (streaming thread; others use sdp). */
const urtp_params_t *urtp_sendstream_params(const urtp_sendstream_t *ss);

/* Any thread: the session description of the stream. base gives the
 * address, port, TTL and session name; the stream fills in the rest (its
 * SSRC as session id, codec, pt, channels, parameter sets). Returns as
 * urtp_sdp_write, or -ENODATA before set_format. */
int urtp_sendstream_sdp(urtp_sendstream_t *ss, const urtp_sdp_desc_t *base, char *out,
                        size_t cap);

#endif
