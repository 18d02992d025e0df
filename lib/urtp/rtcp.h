/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rtcp.h - RTCP (RFC 3550 section 6 and appendix A): compound packets built
 * and parsed, a receiver's statistics of a source, round-trip time, the
 * transmission interval, NTP timestamps.
 *
 * The module keeps no session of its own: whoever sends or receives (a
 * stream, an application) holds the structs below and calls in. Nothing
 * here allocates, does I/O or reads a clock, except urtp_ntp_now(),
 * urtp_rtcp_default_cname() (once per process) and the built-in random
 * generator's seed in urtp_rtcp_sched_init().
 *
 * Promises:
 *  - Parsing reads only the bytes given, and writes only the caller's
 *    structs. Every length from the wire (a packet's length, counts of
 *    report blocks, SSRCs and chunks, SDES item lengths, a BYE reason,
 *    padding) is checked against the bytes held before it is used.
 *  - urtp_rtcp_check() is appendix A.2's validity test of a compound
 *    packet: every packet version 2, lengths adding up exactly to the
 *    datagram, padding (whose count must fit its packet) only on the last
 *    packet, the first an SR or RR. Two reliefs, for what real peers send:
 *    a compound of one packet may be padded, and with
 *    URTP_RTCP_REDUCED_SIZE (RFC 5506) the first packet may be of any type.
 *  - urtp_rtcp_parse() fills one urtp_rtcp_info_t from a compound packet
 *    that passes the check: SR and RR (sender info, report blocks), SDES
 *    CNAMEs (other items are stepped over and counted), BYE (SSRCs, the
 *    reason), APP (pointing into the packet). The arrays have fixed sizes:
 *    what does not fit is dropped and counted in `truncated`; a packet
 *    within whose contents do not parse is skipped and counted in
 *    `malformed`. Other packet types (feedback, XR, ...) are counted.
 *  - The iterator and accessors below it give the same packets one by one,
 *    with nothing dropped.
 *  - Building writes into the caller's buffer and never past its end: a
 *    packet that does not fit is not written at all, and the first error
 *    sticks to the writer, so that a compound packet is built with a few
 *    calls and checked once.
 *  - Reception statistics follow A.1 (sequence numbers, with a resync on a
 *    confirmed jump), A.3 (expected, cumulative lost clamped to 24 bits
 *    signed, fraction lost per interval) and A.8 (interarrival jitter, in
 *    A.8's integer form) with integer arithmetic only; an update per RTP
 *    packet allocates nothing.
 *  - The interval follows 6.2, 6.3 and A.7: 5 % of the session bandwidth,
 *    a quarter of it shared by the senders while they are at most a
 *    quarter of the members (the rest by the receivers), a minimum of 5 s
 *    (or the caller's, or the reduced minimum 360 / session kbit/s),
 *    halved before the first report, randomised over 0.5 .. 1.5 and
 *    divided by e - 3/2; timer reconsideration (6.3.6) and reverse
 *    reconsideration (6.3.4). The random source can be injected, so that a
 *    virtual clock gives exact results.
 */
#ifndef URTP_RTCP_H
#define URTP_RTCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Packet types. */
enum {
  URTP_RTCP_SR = 200,
  URTP_RTCP_RR = 201,
  URTP_RTCP_SDES = 202,
  URTP_RTCP_BYE = 203,
  URTP_RTCP_APP = 204,
  URTP_RTCP_RTPFB = 205,        /* RFC 4585: transport-layer feedback */
  URTP_RTCP_PSFB = 206,         /* RFC 4585: payload-specific feedback */
};

#define URTP_RTCP_SDES_END 0
#define URTP_RTCP_SDES_CNAME 1

#define URTP_RTCP_MAX_BLOCKS 31       /* report blocks (or BYE SSRCs) in one packet */
#define URTP_RTCP_MAX_TEXT 255        /* an SDES item, a BYE reason */
/* Bytes of IP and UDP header counted with each RTCP packet (IPv4; 6.2). */
#define URTP_RTCP_UDP_IP_OVERHEAD 28
/* RFC 5761 section 4: on a shared port, a datagram whose second byte is in
 * this range is RTCP (packet types 192..223), not RTP. */
#define URTP_RTCP_MUX_MIN 192
#define URTP_RTCP_MUX_MAX 223

static inline bool urtp_rtcp_is_muxed(const uint8_t *pkt, size_t len)
{
  return len >= 2 && pkt[1] >= URTP_RTCP_MUX_MIN && pkt[1] <= URTP_RTCP_MUX_MAX;
}

/* --- NTP timestamps (RFC 5905: seconds since 1900 in the high 32 bits,
 *     the fraction in the low 32; era 0, so times after 2036 wrap as on
 *     the wire) ----------------------------------------------------------- */

#define URTP_NTP_UNIX_OFFSET 2208988800ull  /* seconds from 1900 to 1970 */

/* NTP time of a Unix time in nanoseconds (fraction rounded to nearest). */
uint64_t urtp_ntp_from_unix_ns(uint64_t unix_ns);
/* Nanoseconds since 1900 of an NTP time, and the inverse. */
uint64_t urtp_ntp_to_ns(uint64_t ntp);
uint64_t urtp_ntp_from_ns(uint64_t ns);
/* The wall clock (CLOCK_REALTIME) as NTP time. */
uint64_t urtp_ntp_now(void);
/* The middle 32 bits (1/65536 s units): LSR, and an RR's arrival for RTT. */
static inline uint32_t urtp_ntp_mid32(uint64_t ntp) { return (uint32_t)(ntp >> 16); }
/* A duration in 1/65536 s (DLSR) from nanoseconds, rounded, saturating at
 * 2^32 - 1; and back. */
uint32_t urtp_ntp_short_from_ns(uint64_t ns);
uint64_t urtp_ntp_short_to_ns(uint32_t v);

/* --- packet contents ----------------------------------------------------- */

typedef struct urtp_rtcp_block {
  uint32_t ssrc;                /* the source reported on */
  uint8_t fraction;             /* lost since the last report, in 1/256 */
  int32_t lost;                 /* cumulative (24 bits signed on the wire) */
  uint32_t ext_max_seq;         /* extended highest sequence number */
  uint32_t jitter;              /* interarrival jitter, timestamp units */
  uint32_t lsr;                 /* middle 32 bits of the last SR's NTP time; 0: none */
  uint32_t dlsr;                /* 1/65536 s since that SR arrived */
} urtp_rtcp_block_t;

typedef struct urtp_rtcp_sr {
  uint32_t ssrc;
  uint64_t ntp;                 /* when the report was made */
  uint32_t rtp_ts;              /* the RTP timestamp of that instant */
  uint32_t packets, octets;     /* RTP packets and payload octets sent */
} urtp_rtcp_sr_t;

typedef struct urtp_rtcp_app {
  uint8_t subtype;              /* 0..31 */
  uint32_t ssrc;
  char name[4];                 /* four ASCII characters, not terminated */
  const uint8_t *data;          /* parse: points into the packet */
  size_t len;                   /* build: a multiple of 4 */
} urtp_rtcp_app_t;

/* RFC 4585 6.1: the common part of a feedback message. */
typedef struct urtp_rtcp_fb {
  uint8_t fmt;                  /* feedback message type (the count field) */
  uint32_t sender_ssrc;         /* of the packet sender */
  uint32_t media_ssrc;          /* of the media source it is about */
  const uint8_t *fci;           /* feedback control information */
  size_t fci_len;
} urtp_rtcp_fb_t;

/* --- building ------------------------------------------------------------ */

typedef struct urtp_rtcp_writer {
  uint8_t *buf;
  size_t cap, len;
  int err;                      /* the first error of any write; 0: none */
} urtp_rtcp_writer_t;

void urtp_rtcp_writer_init(urtp_rtcp_writer_t *w, uint8_t *buf, size_t cap);

/* Each appends one packet to the compound packet in w and returns 0, or
 * -ENOSPC (it does not fit: nothing written) or -EINVAL (more than 31
 * blocks or SSRCs, a text longer than 255 bytes, an APP subtype above 31
 * or data not a multiple of 4 bytes); the first error also stays in
 * w->err and later writes do nothing. A block's lost is clamped to the
 * 24-bit signed range on the wire. */
int urtp_rtcp_write_sr(urtp_rtcp_writer_t *w, const urtp_rtcp_sr_t *sr,
                       const urtp_rtcp_block_t *blocks, unsigned n);
int urtp_rtcp_write_rr(urtp_rtcp_writer_t *w, uint32_t ssrc, const urtp_rtcp_block_t *blocks,
                       unsigned n);
/* One chunk with a CNAME item (cname: up to 255 bytes). */
int urtp_rtcp_write_sdes_cname(urtp_rtcp_writer_t *w, uint32_t ssrc, const char *cname);
/* reason: NULL for none. */
int urtp_rtcp_write_bye(urtp_rtcp_writer_t *w, const uint32_t *ssrcs, unsigned n,
                        const char *reason);
int urtp_rtcp_write_app(urtp_rtcp_writer_t *w, const urtp_rtcp_app_t *app);

/* --- feedback messages (RFC 4585 6.2.1 and 6.3.1, RFC 5104 4.3.1) --------- */

#define URTP_RTCP_FMT_NACK 1          /* RTPFB: generic NACK */
#define URTP_RTCP_FMT_PLI 1           /* PSFB: picture loss indication */
#define URTP_RTCP_FMT_FIR 4           /* PSFB: full intra request */
/* Sequence numbers one generic NACK carries at most (PID/BLP pairs). */
#define URTP_RTCP_MAX_NACK_PAIRS 64

/* Generic NACK from sender_ssrc about media_ssrc: seqs[0..n) lost, in
 * ascending order (RFC 1982, so across a wrap), packed into PID/BLP pairs
 * (a pair names a PID and any of the 16 after it). -EINVAL for n == 0,
 * seqs out of order, or more than URTP_RTCP_MAX_NACK_PAIRS pairs. */
int urtp_rtcp_write_nack(urtp_rtcp_writer_t *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                         const uint16_t *seqs, unsigned n);
int urtp_rtcp_write_pli(urtp_rtcp_writer_t *w, uint32_t sender_ssrc, uint32_t media_ssrc);
/* FIR for media_ssrc with command sequence number seq (RFC 5104: one more
 * for each new request, the same for a repetition). */
int urtp_rtcp_write_fir(urtp_rtcp_writer_t *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                        uint8_t seq);

/* A generic NACK's lost sequence numbers (fb from urtp_rtcp_parse_fb with
 * fmt URTP_RTCP_FMT_NACK), in the order the pairs give them, at most cap
 * into seqs; *more (may be NULL) counts those that did not fit. Returns how
 * many were written, or -EBADMSG (no pair, or FCI not whole pairs). */
int urtp_rtcp_nack_seqs(const urtp_rtcp_fb_t *fb, uint16_t *seqs, unsigned cap,
                        unsigned *more);
/* A FIR's entries: how many (0 or more), -EBADMSG if the FCI is not whole
 * entries; entry i (< count): its SSRC and command sequence number. */
int urtp_rtcp_fir_count(const urtp_rtcp_fb_t *fb);
void urtp_rtcp_fir_entry(const urtp_rtcp_fb_t *fb, unsigned i, uint32_t *ssrc, uint8_t *seq);

/* --- parsing a compound packet at once ----------------------------------- */

#define URTP_RTCP_REDUCED_SIZE 1u     /* flag: RFC 5506 compounds are valid */

/* Appendix A.2 on a whole datagram (see the promises): 0, or -EBADMSG. */
int urtp_rtcp_check(const uint8_t *buf, size_t len, unsigned flags);

/* Fixed maximums of urtp_rtcp_info_t. */
#define URTP_RTCP_INFO_REPORTS 4      /* SR and RR packets */
#define URTP_RTCP_INFO_BLOCKS 32      /* report blocks, all reports together */
#define URTP_RTCP_INFO_CNAMES 8
#define URTP_RTCP_INFO_BYES 31        /* SSRCs said BYE, all BYE packets together */
#define URTP_RTCP_INFO_APPS 4

typedef struct urtp_rtcp_report {
  bool is_sr;
  urtp_rtcp_sr_t sr;            /* the reporter's SSRC; an SR's sender info */
  unsigned first_block;         /* its blocks: info.blocks[first_block ...] */
  unsigned nblocks;             /* those kept */
} urtp_rtcp_report_t;

typedef struct urtp_rtcp_cname {
  uint32_t ssrc;
  uint8_t len;
  const uint8_t *value;         /* into the packet, not terminated */
} urtp_rtcp_cname_t;

typedef struct urtp_rtcp_info {
  unsigned packets;             /* in the compound */
  unsigned nreports;
  urtp_rtcp_report_t reports[URTP_RTCP_INFO_REPORTS];
  unsigned nblocks;
  urtp_rtcp_block_t blocks[URTP_RTCP_INFO_BLOCKS];
  unsigned ncnames;
  urtp_rtcp_cname_t cnames[URTP_RTCP_INFO_CNAMES];
  unsigned sdes_other;          /* SDES items other than CNAME, stepped over */
  bool bye;                     /* a BYE packet was present */
  unsigned nbyes;
  uint32_t byes[URTP_RTCP_INFO_BYES];
  const uint8_t *bye_reason;    /* the first BYE's, into the packet; NULL: none */
  uint8_t bye_reason_len;
  unsigned napps;
  urtp_rtcp_app_t apps[URTP_RTCP_INFO_APPS];
  unsigned feedback;            /* RTPFB and PSFB packets (not parsed here) */
  unsigned other;               /* packets of other types, stepped over */
  unsigned malformed;           /* packets whose contents did not parse: skipped */
  unsigned truncated;           /* reports, blocks, CNAMEs, SSRCs or APPs dropped
                                 * for want of room above */
} urtp_rtcp_info_t;

/* The compound packet into *out (pointers into buf). 0, or -EBADMSG when
 * urtp_rtcp_check() fails (out is then zeroed). */
int urtp_rtcp_parse(const uint8_t *buf, size_t len, unsigned flags, urtp_rtcp_info_t *out);

/* --- parsing packet by packet -------------------------------------------- */

/* One packet of a compound packet. */
typedef struct urtp_rtcp_pkt {
  uint8_t type;
  uint8_t count;                /* the 5-bit field: RC, SC, subtype or FMT */
  const uint8_t *data;          /* the packet, header included */
  size_t len;                   /* its bytes, padding excluded */
} urtp_rtcp_pkt_t;

typedef struct urtp_rtcp_iter {
  const uint8_t *p;
  size_t left;
} urtp_rtcp_iter_t;

void urtp_rtcp_iter_init(urtp_rtcp_iter_t *it, const uint8_t *buf, size_t len);
/* The next packet: 1, 0 at the end, -EBADMSG for a header that is not
 * version 2, a length past the end, or a padding count of 0 or larger than
 * the packet's body (the iteration then stops). */
int urtp_rtcp_next(urtp_rtcp_iter_t *it, urtp_rtcp_pkt_t *pkt);

/* SR: the sender information. 0 or -EBADMSG (not an SR, too short for its
 * report count). */
int urtp_rtcp_parse_sr(const urtp_rtcp_pkt_t *p, urtp_rtcp_sr_t *sr);
/* SR or RR: the reporter's SSRC and the number of report blocks. 0 or
 * -EBADMSG. Bytes after the blocks (profile extensions) are allowed. */
int urtp_rtcp_parse_report(const urtp_rtcp_pkt_t *p, uint32_t *ssrc, unsigned *nblocks);
/* SR or RR: report block i (< nblocks). 0 or -EBADMSG. */
int urtp_rtcp_block(const urtp_rtcp_pkt_t *p, unsigned i, urtp_rtcp_block_t *b);

/* SDES items, chunk by chunk. */
typedef struct urtp_rtcp_sdes_iter {
  const urtp_rtcp_pkt_t *p;
  size_t off;                   /* next byte to read */
  unsigned chunks;              /* chunks begun */
  bool in_chunk;
  uint32_t ssrc;                /* of the chunk being read */
} urtp_rtcp_sdes_iter_t;

typedef struct urtp_rtcp_sdes_item {
  uint32_t ssrc;
  uint8_t type;
  uint8_t len;
  const uint8_t *value;         /* not terminated */
} urtp_rtcp_sdes_item_t;

void urtp_rtcp_sdes_iter_init(urtp_rtcp_sdes_iter_t *it, const urtp_rtcp_pkt_t *p);
/* The next item: 1, 0 after the last chunk, -EBADMSG (not an SDES packet,
 * an item or chunk past the end, a chunk without its END item). */
int urtp_rtcp_sdes_next(urtp_rtcp_sdes_iter_t *it, urtp_rtcp_sdes_item_t *item);

/* BYE: SSRC i (< count); the reason (NULL if none). 0 or -EBADMSG. */
int urtp_rtcp_bye_ssrc(const urtp_rtcp_pkt_t *p, unsigned i, uint32_t *ssrc);
int urtp_rtcp_bye_reason(const urtp_rtcp_pkt_t *p, const uint8_t **reason, size_t *len);

/* APP, and the common part of RTPFB / PSFB. 0 or -EBADMSG. */
int urtp_rtcp_parse_app(const urtp_rtcp_pkt_t *p, urtp_rtcp_app_t *app);
int urtp_rtcp_parse_fb(const urtp_rtcp_pkt_t *p, urtp_rtcp_fb_t *fb);

/* --- reception statistics of one source (A.1, A.3, A.8) ------------------- */

typedef struct urtp_rtcp_rx {
  uint32_t ssrc;
  uint32_t clock_rate;
  uint16_t max_seq;             /* highest sequence number seen */
  uint32_t cycles;              /* wrap-arounds, times 65536 */
  uint32_t base_seq;
  uint32_t bad_seq;             /* A.1: the number that confirms a jump */
  uint64_t received;            /* packets, duplicates included (A.3) */
  uint64_t expected_prior, received_prior;
  uint64_t octets;              /* payload */
  /* A.8 */
  uint32_t transit;
  uint64_t jitter16;            /* jitter * 16 (A.8's integer form) */
  bool have_transit;
  uint64_t last_arrival;
} urtp_rtcp_rx_t;

/* Starts the statistics of a source at its first packet (which update()
 * then counts). clock_rate: of its RTP timestamps (0: 90000). */
void urtp_rtcp_rx_init(urtp_rtcp_rx_t *rx, uint32_t ssrc, uint16_t seq, uint32_t clock_rate);
/* One RTP packet of the source, arriving at arrival ns (any clock that
 * does not go back). Returns whether it was counted: false for the first
 * packet after a jump of 3000 or more (A.1: the next in sequence confirms
 * the jump, and the statistics start over from it). */
bool urtp_rtcp_rx_update(urtp_rtcp_rx_t *rx, uint16_t seq, uint32_t rtp_ts, uint64_t arrival,
                         size_t payload_len);
/* The report block on the source (LSR and DLSR left 0), ending the
 * interval of the fraction lost (A.3). */
void urtp_rtcp_rx_block(urtp_rtcp_rx_t *rx, urtp_rtcp_block_t *b);
/* The same without ending the interval (for statistics). */
void urtp_rtcp_rx_peek(const urtp_rtcp_rx_t *rx, urtp_rtcp_block_t *b);

/* A block's LSR and DLSR from the last SR of its source (its NTP time, and
 * when it arrived, in ns on the caller's clock) at now. */
void urtp_rtcp_block_set_lsr(urtp_rtcp_block_t *b, uint64_t sr_ntp, uint64_t sr_arrival,
                             uint64_t now);

/* Round-trip time (6.4.1) from a report block that arrived at arrival_ntp:
 * ns, or -1 when the block carries no LSR. A negative result (clocks, or a
 * forged block) is 0. */
int64_t urtp_rtcp_rtt(uint64_t arrival_ntp, uint32_t lsr, uint32_t dlsr);

/* --- the interval (6.2, 6.3, A.7) ---------------------------------------- */

#define URTP_RTCP_MIN_INTERVAL 5000000000ull   /* ns */

/* A uniform 32-bit random number. */
typedef uint32_t (*urtp_rtcp_rand_fn)(void *user);

typedef struct urtp_rtcp_interval_config {
  uint64_t session_bw;          /* bits/s; 0: the members' session_bw */
  uint64_t min_interval;        /* ns; 0: URTP_RTCP_MIN_INTERVAL */
  bool reduced_min;             /* 6.2: 360 / session kbit/s instead, once
                                 * the bandwidth is known */
  urtp_rtcp_rand_fn rand;       /* NULL: a generator of the scheduler's own */
  void *rand_user;
} urtp_rtcp_interval_config_t;

/* What A.7's rtcp_interval() takes besides the configuration. */
typedef struct urtp_rtcp_members {
  unsigned members;             /* this participant included (>= 1) */
  unsigned senders;             /* this participant included if we_sent */
  bool we_sent;
  uint64_t session_bw;          /* bits/s measured (used when the config's is 0) */
} urtp_rtcp_members_t;

/* The deterministic interval Td (ns): A.7 before randomisation, with the
 * minimum halved when initial. avg_size in octets, UDP/IP included. Without
 * a bandwidth, the minimum. */
uint64_t urtp_rtcp_interval_td(const urtp_rtcp_interval_config_t *cfg,
                               const urtp_rtcp_members_t *m, double avg_size, bool initial);
/* A.7's interval: Td * (u + 0.5) / (e - 3/2), u = r / 2^32 in [0, 1). */
uint64_t urtp_rtcp_interval(const urtp_rtcp_interval_config_t *cfg, const urtp_rtcp_members_t *m,
                            double avg_size, bool initial, uint32_t r);

/* When to send (6.3). Times in ns on the caller's clock. */
typedef struct urtp_rtcp_sched {
  urtp_rtcp_interval_config_t cfg;
  uint64_t tp;                  /* the last report went out */
  uint64_t tn;                  /* the next one is due */
  double avg_size;              /* octets, UDP/IP included */
  bool initial;                 /* no report sent yet */
  unsigned pmembers;
  uint64_t rng;                 /* the built-in generator's state */
} urtp_rtcp_sched_t;

/* Starts at now; the first report is due one initial interval later.
 * size: the expected size of a report (octets of RTCP). */
void urtp_rtcp_sched_init(urtp_rtcp_sched_t *s, const urtp_rtcp_interval_config_t *cfg,
                          uint64_t now, const urtp_rtcp_members_t *m, size_t size);
/* Timer reconsideration at now >= tn (6.3.6): true when a report is to go
 * out now (send it, then urtp_rtcp_sched_sent()); false when tn moved
 * later. */
bool urtp_rtcp_sched_expire(urtp_rtcp_sched_t *s, uint64_t now, const urtp_rtcp_members_t *m);
/* A report of size octets (RTCP bytes, without UDP/IP) went out at now:
 * the average size, tp and the next tn (with a fresh draw). */
void urtp_rtcp_sched_sent(urtp_rtcp_sched_t *s, uint64_t now, const urtp_rtcp_members_t *m,
                          size_t size);
/* A compound packet of size octets arrived: the average includes it. */
void urtp_rtcp_sched_received(urtp_rtcp_sched_t *s, size_t size);
/* Reverse reconsideration (6.3.4): members fell to m->members at now
 * (a BYE or a timeout); tn and tp are drawn nearer in proportion. */
void urtp_rtcp_sched_members_left(urtp_rtcp_sched_t *s, uint64_t now,
                                  const urtp_rtcp_members_t *m);

/* --- CNAME ---------------------------------------------------------------- */

/* "user<number>@host-<hex>", random once per process (the form rtpbin's
 * default takes): one for every stream of the process, so that the
 * streams of one sender can be synchronised by its receivers (6.5.1;
 * random, as RFC 7022 recommends). */
const char *urtp_rtcp_default_cname(void);

#endif
