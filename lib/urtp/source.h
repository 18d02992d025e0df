/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source.h - which RTP source a receiver of one stream follows (RFC 3550
 * section 8.2 and appendix A.1).
 *
 * A receiver of one media stream follows one synchronisation source at a
 * time, the current source. Every packet's SSRC and sequence number pass
 * through here before reordering and reassembly. Packets that belong to
 * the stream come back through the deliver callback, possibly later and
 * from a copy; when the stream changes (another SSRC takes over, or the
 * current one restarts its numbering) the event callback runs first, so
 * that the caller resets what depends on the old numbering and timeline.
 *
 * Promises:
 *  - Probation (A.1): an SSRC that is not the current source is a
 *    candidate until `probation` packets of it arrive in sequence. A
 *    candidate's first packets are kept (copied) and delivered once it is
 *    accepted, so a stream whose first packets carry a key frame keeps it.
 *    Stray packets of random SSRCs never validate and never take over.
 *  - Takeover: a validated candidate becomes the current source at once
 *    when there is none, or when the current source has been silent for
 *    `timeout` or said BYE (urtp_source_bye). A source that goes on
 *    sending new packets `bye_grace` after its BYE has not left (the BYE
 *    was forged, or it changed its mind): the BYE no longer counts. Until
 *    then a candidate waits, its
 *    packets kept in a hold of `hold_packets` packets (the first ones; the
 *    rest are dropped and counted), and they are delivered in arrival
 *    order when it takes over: a sender that restarts with a new SSRC
 *    resumes at its first packet.
 *  - Sequence jumps (A.1 bad_seq): a packet of the current source more than
 *    max_dropout ahead of the highest sequence number, or more than
 *    max_misorder behind it, is kept aside and taken only when the next
 *    packet continues it; then the numbering restarts (an event) and both
 *    are delivered. A lone stray packet is dropped and counted, and
 *    nothing else changes.
 *  - With a pinned SSRC only that SSRC is followed, from its first packet.
 *  - Every packet is accounted for exactly once, in urtp_source_stats_t:
 *    delivered, or dropped as foreign, stray or held_dropped; packets kept
 *    for later are `pending` until then.
 *  - Memory: the candidate table and its probation copies are allocated at
 *    init; the hold once, the first time a candidate has to wait. Nothing
 *    allocates per packet.
 * Times are in the caller's unit (any monotonic clock).
 */
#ifndef URTP_SOURCE_H
#define URTP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URTP_SOURCE_PROBATION 2       /* RFC 3550 MIN_SEQUENTIAL */
#define URTP_SOURCE_MAX_PROBATION 8
#define URTP_SOURCE_MAX_DROPOUT 3000  /* RFC 3550 A.1 */
/* A.1 suggests 100; at video packet rates (thousands per second) that is
 * a millisecond of reordering, so the default follows the reorder window. */
#define URTP_SOURCE_MAX_MISORDER 1000
#define URTP_SOURCE_HOLD 2048         /* packets a waiting source may keep */
#define URTP_SOURCE_CANDIDATES 8

typedef struct urtp_source_config {
  int64_t ssrc;             /* -1: any; else only this SSRC */
  uint64_t timeout;         /* silence after which another SSRC may take over */
  unsigned probation;       /* 0: URTP_SOURCE_PROBATION; at most URTP_SOURCE_MAX_PROBATION */
  unsigned max_dropout;     /* 0: URTP_SOURCE_MAX_DROPOUT */
  unsigned max_misorder;    /* 0: URTP_SOURCE_MAX_MISORDER */
  size_t hold_packets;      /* 0: URTP_SOURCE_HOLD */
  size_t max_packet;        /* largest packet kept; 0: 1500 */
  uint64_t bye_grace;       /* how long after a BYE the source's new packets
                             * are stragglers; 0: timeout / 4 */
} urtp_source_config_t;

typedef enum urtp_source_event_kind {
  URTP_SOURCE_FIRST,        /* the first source of the stream */
  URTP_SOURCE_CHANGE,       /* another SSRC took over */
  URTP_SOURCE_RESTART,      /* the current SSRC restarted its numbering */
} urtp_source_event_kind_t;

typedef enum urtp_source_reason {
  URTP_SOURCE_REASON_NONE,      /* FIRST */
  URTP_SOURCE_REASON_TIMEOUT,   /* the old source was silent for `timeout` */
  URTP_SOURCE_REASON_BYE,       /* the old source said BYE */
  URTP_SOURCE_REASON_SEQ_JUMP,  /* a confirmed jump of the sequence numbers */
} urtp_source_reason_t;

typedef struct urtp_source_event {
  urtp_source_event_kind_t kind;
  urtp_source_reason_t reason;
  uint32_t old_ssrc;        /* meaningless for FIRST */
  uint32_t new_ssrc;
  uint16_t old_seq, new_seq; /* highest before, first after (RESTART) */
} urtp_source_event_t;

typedef struct urtp_source_stats {
  uint64_t delivered;       /* packets handed to the deliver callback */
  uint64_t foreign;         /* packets of SSRCs not followed, dropped */
  uint64_t stray;           /* sequence jumps that the next packet did not confirm */
  uint64_t held_dropped;    /* packets of a waiting source beyond the hold */
  uint64_t pending;         /* kept, not yet delivered or dropped */
  uint64_t changes;         /* another SSRC took over */
  uint64_t restarts;        /* the current SSRC restarted its numbering */
  uint64_t byes;            /* BYEs of the current source */
  uint64_t byes_revoked;    /* ... that it sent on after (bye_grace) */
} urtp_source_stats_t;

/* Packets of the stream, in the order they are to be processed, with the
 * time each arrived (kept ones arrived earlier than now). */
typedef void (*urtp_source_deliver_fn)(void *user, const uint8_t *pkt, size_t len,
                                       uint64_t arrival);
/* The stream changes: runs before the first packet of the new stream. */
typedef void (*urtp_source_event_fn)(void *user, const urtp_source_event_t *ev);

typedef struct urtp_source_cand urtp_source_cand_t;

typedef struct urtp_source {
  urtp_source_config_t cfg;
  /* the current source */
  bool had;                 /* one was accepted (ssrc, max_seq are its) */
  bool active;              /* ... and is followed */
  bool left;                /* ... and said BYE (at bye_at): its stragglers
                             * are taken, anything else may take over at once */
  uint64_t bye_at;
  uint32_t ssrc;
  uint16_t max_seq;
  uint64_t last_heard;
  bool jump_held;           /* a packet kept until the next confirms its jump */
  uint16_t jump_seq;
  uint32_t jump_len;
  uint64_t jump_at;
  uint8_t *jump_pkt;
  /* candidates: other SSRCs on probation or waiting */
  urtp_source_cand_t *cand;
  uint8_t *cand_mem;        /* probation copies: (probation - 1) per candidate */
  /* the hold of the one waiting candidate (a ring of slots) */
  int hold_owner;           /* candidate index, -1: none */
  uint8_t *hold_mem;
  uint32_t *hold_len;
  uint64_t *hold_at;        /* arrival of each kept packet */
  size_t hold_head, hold_count;
  urtp_source_stats_t stats;
} urtp_source_t;

/* Returns 0, -EINVAL (bad ssrc or probation) or -ENOMEM. */
int urtp_source_init(urtp_source_t *s, const urtp_source_config_t *cfg);
void urtp_source_destroy(urtp_source_t *s);

/* Offers a packet (RTP header already parsed by the caller) that arrived at
 * now. Delivers it, and any kept packets it releases, or keeps or drops it. */
void urtp_source_push(urtp_source_t *s, const uint8_t *pkt, size_t len, uint32_t ssrc,
                      uint16_t seq, uint64_t now, urtp_source_deliver_fn deliver,
                      urtp_source_event_fn event, void *user);

/* A BYE for ssrc (RTCP; the caller checks where it came from): if it is
 * the current source, a waiting candidate (validated: probation passed)
 * takes over at once (its kept packets are delivered), or the next one to
 * validate does, or the source itself back with a jump in its numbering
 * (a restart: at once). Until then its own packets that continue its
 * numbering are still delivered: RTCP may overtake the last media and
 * their retransmissions; one that advances its numbering later than
 * bye_grace after the BYE withdraws the BYE. */
void urtp_source_bye(urtp_source_t *s, uint32_t ssrc, uint64_t now,
                     urtp_source_deliver_fn deliver, urtp_source_event_fn event, void *user);

/* Lets a waiting candidate take over once the current source has been
 * silent for `timeout`, without waiting for its next packet; drops what
 * candidates silent for `timeout` left (counted as foreign). */
void urtp_source_expire(urtp_source_t *s, uint64_t now, urtp_source_deliver_fn deliver,
                        urtp_source_event_fn event, void *user);

/* When urtp_source_expire() next has work; UINT64_MAX if none. */
uint64_t urtp_source_deadline(const urtp_source_t *s);

/* Forgets the current source and every candidate (the stream is being
 * reconfigured); kept packets are dropped and counted as foreign. */
void urtp_source_reset(urtp_source_t *s);

/* The current source, if any (false before the first one is accepted). */
static inline bool urtp_source_current(const urtp_source_t *s, uint32_t *ssrc)
{
  if (ssrc)
    *ssrc = s->ssrc;
  return s->active;
}

const char *urtp_source_reason_name(urtp_source_reason_t r);

#endif
