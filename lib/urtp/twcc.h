/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * twcc.h - transport-wide sequence numbers at both ends of a session
 * (and a stream's RTP sequence numbers, for RFC 8888's feedback):
 * the receiver's record of arrivals, written as feedback (ccfb.h) when it
 * is due, and the sender's record of what it sent, matched against
 * feedback into what a congestion controller needs: per packet, when it
 * left, how large it was, whether and when it arrived.
 *
 * Promises:
 *  - Sequence numbers are extended past their 16-bit wrap by distance
 *    from the newest. A jump further than URTP_TWCC_WINDOW starts over (a
 *    sender that restarted) once a second packet confirms it, at most
 *    URTP_TWCC_JUMP_CONFIRM numbers after the first; a lone one is counted
 *    as a stray and changes nothing. A receiver's first packet starts.
 *  - The receiver reports every number from where its last feedback ended
 *    to the newest arrival; what has not arrived by then is reported
 *    missing, once. Duplicates and packets behind the reported range are
 *    counted, never reported twice. (A run of losses longer than one
 *    message, URTP_TWCC_MAX_PACKETS, is passed over and counted.)
 *  - The sender matches only numbers it sent and still remembers (the
 *    last URTP_TWCC_WINDOW): feedback about anything else (forged, stale,
 *    duplicated) is counted and yields nothing, so that a stranger who
 *    guesses sequence numbers cannot invent packets; each sent packet is
 *    taken from feedback once.
 *  - Memory is fixed at init (a window of slots each side); nothing is
 *    allocated per packet.
 */
#ifndef URTP_TWCC_H
#define URTP_TWCC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ccfb.h"

#define URTP_TWCC_WINDOW 8192 /* packets remembered each side (a power of 2) */
#define URTP_TWCC_JUMP_CONFIRM 64 /* numbers between a jump's two packets, at most */

/* --- receiver ----------------------------------------------------------- */

typedef struct urtp_twcc_recorder {
  int64_t arrival[URTP_TWCC_WINDOW]; /* us, or INT64_MIN: not arrived */
  int64_t highest;                   /* extended number of the newest; -1: none */
  int64_t next;                      /* the first not yet reported */
  uint8_t fb_count;
  bool jump_valid;                   /* a jump waiting for its second packet */
  uint16_t jump_seq;
  int64_t jump_arrival;
  uint64_t packets, duplicates, late, restarts, strays;
  uint64_t unreported;               /* lost in runs longer than a message */
  urtp_ccfb_pkt_t scratch[URTP_TWCC_MAX_PACKETS];
} urtp_twcc_recorder_t;

void urtp_twcc_recorder_init(urtp_twcc_recorder_t *r);

/* A packet with transport-wide number seq arrived at arrival_us. */
void urtp_twcc_recorder_add(urtp_twcc_recorder_t *r, uint16_t seq, int64_t arrival_us);

/* Whether anything arrived that feedback has not covered. */
bool urtp_twcc_recorder_pending(const urtp_twcc_recorder_t *r);

/* Writes feedback messages (RTPFB FMT 15, one after the other, each a
 * whole RTCP packet) for what arrived since the last, into out up to cap
 * bytes; what does not fit waits for the next call. Returns the bytes
 * written (0: nothing new, or cap too small for one message). */
size_t urtp_twcc_recorder_feedback(urtp_twcc_recorder_t *r, uint8_t *out, size_t cap,
                                   uint32_t sender_ssrc, uint32_t media_ssrc);

/* The same as RFC 8888 feedback (RTPFB FMT 11), for a recorder fed with
 * the RTP sequence numbers of one stream (media_ssrc's), reported at
 * report_us on the clock of the arrivals. */
size_t urtp_twcc_recorder_rfc8888(urtp_twcc_recorder_t *r, uint8_t *out, size_t cap,
                                  uint32_t sender_ssrc, uint32_t media_ssrc, uint64_t report_us);

/* --- sender ------------------------------------------------------------- */

enum {
  URTP_TWCC_SENT_RTX = 1 << 0,    /* a retransmission */
  URTP_TWCC_SENT_PROBE = 1 << 1,  /* sent to probe for capacity */
};

typedef struct urtp_twcc_sent_slot {
  int64_t ext;                /* extended number, -1: empty */
  int64_t send_us;
  uint32_t size;              /* bytes on the wire (UDP payload) */
  uint16_t flags;
  uint8_t reported;           /* a bit per receiver that reported it */
} urtp_twcc_sent_slot_t;

/* Receivers whose reports a history tells apart (urtp_twcc_history_match_for). */
#define URTP_TWCC_RECEIVERS 8

typedef struct urtp_twcc_history {
  urtp_twcc_sent_slot_t slot[URTP_TWCC_WINDOW];
  int64_t highest;            /* -1: nothing sent */
  uint64_t unknown;           /* reports of numbers not sent or forgotten */
  uint64_t repeated;          /* reports of numbers already taken */
} urtp_twcc_history_t;

/* What feedback said of one packet we sent. */
typedef struct urtp_twcc_result {
  int64_t ext;                /* extended transport-wide number */
  int64_t send_us;            /* our clock */
  int64_t arrival_us;         /* the receiver's clock; INT64_MIN: not known */
  uint32_t size;
  uint16_t flags;
  bool received;
} urtp_twcc_result_t;

void urtp_twcc_history_init(urtp_twcc_history_t *h);

/* A packet with transport-wide number seq left at send_us, size bytes. */
void urtp_twcc_history_add(urtp_twcc_history_t *h, uint16_t seq, int64_t send_us, uint32_t size,
                           unsigned flags);

/* Matches parsed feedback (ccfb.h's urtp_twcc_parse / urtp_rfc8888_parse
 * output; RFC 8888's numbers must be the ones this history was fed) with
 * what was sent: a result per packet we sent, still remember and had no
 * report of yet, into out[0 .. return value), in the feedback's order. */
size_t urtp_twcc_history_match(urtp_twcc_history_t *h, const urtp_ccfb_pkt_t *fb, size_t n,
                               urtp_twcc_result_t *out, size_t max);
/* The same for receiver number rcv (0 .. URTP_TWCC_RECEIVERS - 1): each
 * packet is taken once from each receiver's feedback (several receivers
 * of the same packets, a fan-out's, each report them). */
size_t urtp_twcc_history_match_for(urtp_twcc_history_t *h, unsigned rcv,
                                   const urtp_ccfb_pkt_t *fb, size_t n, urtp_twcc_result_t *out,
                                   size_t max);

#endif
