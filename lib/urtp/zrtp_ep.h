/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zrtp_ep.h - one media stream's ZRTP endpoint: the policy around the ZRTP
 * state machine of zrtp.h, shared by every user of lib/ (uvgrtpsink,
 * uvgrtpsrc and uvgrtpzrtp are thin adapters over it).
 *
 * An endpoint owns ZRTP sessions (urtp_zrtp_t) one after the other and
 * decides when one starts, when it is given up and replaced, who may talk
 * to it, and how its keys reach the media path's SRTP contexts. It does no
 * I/O of its own unless asked: packets leave through a send callback (a
 * ready-made one sends on a UDP socket), time comes from a clock callback
 * (virtual in tests), and either the caller drives the timers
 * (urtp_zrtp_ep_tick() at urtp_zrtp_ep_next_timeout()) or a thread of the
 * endpoint does (urtp_zrtp_ep_start()).
 *
 * Promises:
 *  - Start. A SENDER (a fixed remote, e.g. uvgrtpsink) starts at once and
 *    sends Hello to its remote. A RECEIVER (e.g. uvgrtpsrc) starts on the
 *    peer's first Hello, or when media reaches it without keys (it
 *    restarted while the peer kept its keys; at most every
 *    URTP_ZRTP_EP_POKE_INTERVAL_MS), answering to where that came from. A
 *    DUPLEX endpoint (uvgrtpzrtp) starts on urtp_zrtp_ep_begin() (its first
 *    outgoing RTP packet gives the SSRC) or start_delay_ms after the peer's
 *    first ZRTP packet, whichever comes first.
 *  - Timeouts. A session that times out (the peer never answered or went
 *    away, error 0xB0 from either side) is not reported: a SENDER or DUPLEX
 *    endpoint starts a fresh one at once, a RECEIVER waits for the next
 *    Hello or media. Every session after the first counts as a restart.
 *  - Failures. Any other end of a session without keys (an Error from the
 *    peer, a MAC or hash chain that does not verify, a bad DH value, ...)
 *    is reported once, by a FAILED event; a new Hello from the peer may
 *    start over afterwards.
 *  - Peer binding. An endpoint is bound to its peer's address and, once
 *    SECURE, to the peer's ZID: a SENDER to its remote from the start, a
 *    RECEIVER to the address of the Hello it answered (or of the media it
 *    reacted to), a DUPLEX endpoint to the source address of the packets
 *    when its caller knows it (urtp_zrtp_ep_recv() with `from`), else to
 *    the ZID alone. The bound peer is alive while it was heard within
 *    peer_timeout_ms: a ZRTP packet the session accepted from the bound
 *    address, or urtp_zrtp_ep_peer_srtp_ok() (media authenticated with the
 *    session's keys). While it is alive and a session is in use (under way
 *    or SECURE), ZRTP from any other address and a Hello carrying another
 *    ZID are ignored and counted as `foreign`: they never reach the
 *    session, so a SECURE session's keys stay in use and media keeps
 *    flowing. A new exchange from the bound address with the bound ZID (a
 *    Hello that differs from the one the session holds) is the peer's own
 *    and is followed. Once the bound peer has been silent for
 *    peer_timeout_ms, or its session ended without keys, any peer may start
 *    a new exchange (the real peer restarted on another port or with a new
 *    ZID). A SENDER's address never changes: it only talks to its remote.
 *    What remains possible: an attacker who can send with the peer's exact
 *    source address (spoofing, or on the path) and the peer's ZID (it is
 *    public, in every Hello) can start a new exchange the endpoint follows;
 *    it then ends in new keys and a new SAS, which the users' comparison of
 *    the SAS (or the retained-secret cache) exposes. An attacker who is
 *    merely able to send UDP to the endpoint can no longer take a stream
 *    over, only after the peer has been silent for peer_timeout_ms.
 *  - Keys. urtp_zrtp_ep_sync_srtp() gives the media path the agreed keys
 *    through a serial number: one atomic read per packet when nothing
 *    changed. Keys are released to a sender only once SECURE.
 *  - Multistream. Endpoints of one process with the same `group` name and
 *    mode form a group: the first to start does the Diffie-Hellman
 *    exchange, the others wait until it is SECURE and then agree their keys
 *    in Multistream mode (no DH, one SAS per call). If the first fails for
 *    real, the waiting ones fail with its error (event flag leader_failed).
 *  - Bounded: at most URTP_ZRTP_EP_MAX_EARLY packets kept from before their
 *    session exists and URTP_ZRTP_EP_MAX_INQ waiting for the thread; more
 *    are dropped and counted as unexpected. Memory is allocated at
 *    urtp_zrtp_ep_new() and when a session starts, not per packet.
 *  - Threads. All functions may be called from any thread at once (one
 *    mutex inside; the media-path functions marked lock-free take none).
 *    Callbacks are never called with that mutex held. With the thread
 *    running (urtp_zrtp_ep_start()), the send and event callbacks are
 *    called from it alone, so the media path never runs them; without it,
 *    from the function that caused them, before it returns.
 */
#ifndef URTP_ZRTP_EP_H
#define URTP_ZRTP_EP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "srtp.h"
#include "zrtp.h"

/* Default of peer_timeout_ms. Longer than the gap between any two packets
 * of a live exchange (1200 ms at most), and than the pause of a
 * keep-alive-less SRTP stream one would still call running. */
#define URTP_ZRTP_EP_PEER_TIMEOUT_MS 2000
/* Media without keys starts an exchange at most this often. */
#define URTP_ZRTP_EP_POKE_INTERVAL_MS 3000
/* A Multistream member looks this often whether its group's first stream
 * is SECURE. */
#define URTP_ZRTP_EP_JOIN_POLL_MS 20
#define URTP_ZRTP_EP_MAX_EARLY 8
#define URTP_ZRTP_EP_MAX_INQ 32

typedef struct urtp_zrtp_ep urtp_zrtp_ep_t;

typedef enum urtp_zrtp_ep_mode {
  URTP_ZRTP_EP_SENDER,      /* fixed remote; starts at once */
  URTP_ZRTP_EP_RECEIVER,    /* starts on a Hello or on media without keys */
  URTP_ZRTP_EP_DUPLEX,      /* starts on urtp_zrtp_ep_begin() or after the
                               peer's first ZRTP packet */
} urtp_zrtp_ep_mode_t;

typedef enum urtp_zrtp_ep_event_type {
  URTP_ZRTP_EP_EV_SECURE,       /* info, srtp_profile */
  URTP_ZRTP_EP_EV_FAILED,       /* info (error set), leader_failed */
  URTP_ZRTP_EP_EV_INFO_CHANGED, /* state, SAS, ...: read them again */
  URTP_ZRTP_EP_EV_RESTARTED,    /* a new session replaced the last: reason */
  URTP_ZRTP_EP_EV_ERROR,        /* no session could be created (error);
                                   the endpoint stops trying */
} urtp_zrtp_ep_event_type_t;

typedef enum urtp_zrtp_ep_restart {
  URTP_ZRTP_EP_RESTART_TIMEOUT, /* the last session timed out */
  URTP_ZRTP_EP_RESTART_PEER,    /* the peer started a new exchange */
  URTP_ZRTP_EP_RESTART_MEDIA,   /* media arrived without keys */
} urtp_zrtp_ep_restart_t;

typedef struct urtp_zrtp_ep_event {
  urtp_zrtp_ep_event_type_t type;
  urtp_zrtp_info_t info;        /* SECURE, FAILED: the session's */
  const char *srtp_profile;     /* SECURE: e.g. "AES_CM_128_HMAC_SHA1_80" */
  bool leader_failed;           /* FAILED: info is the group's first
                                   stream's, which failed for real */
  const char *group;            /* the config's group name, or NULL */
  urtp_zrtp_ep_restart_t reason;  /* RESTARTED */
  int error;                    /* ERROR: -errno of urtp_zrtp_new() */
} urtp_zrtp_ep_event_t;

typedef struct urtp_zrtp_ep_counters {
  uint64_t sent;                /* ZRTP packets handed to send, retransmissions too */
  uint64_t received;            /* ZRTP packets given to the endpoint */
  uint64_t retransmits;
  uint64_t bad;                 /* malformed (CRC, lengths) */
  uint64_t unexpected;          /* valid but not for the state, or no room */
  uint64_t auth_fail;           /* hash chain or MAC did not verify */
  uint64_t restarts;            /* sessions after the first */
  uint64_t foreign;             /* ignored: not from the bound peer */
  uint64_t discarded;           /* datagrams the thread read from a SENDER's
                                   socket (urtp_zrtp_ep_start() with fd >= 0)
                                   that are not ZRTP or are too long: dropped,
                                   not in `received` */
} urtp_zrtp_ep_counters_t;

typedef struct urtp_zrtp_ep_config {
  urtp_zrtp_ep_mode_t mode;
  /* SENDER: where the peer is (required); the others learn it. */
  const struct sockaddr *remote;
  socklen_t remote_len;
  /* SSRC of the ZRTP packets. DUPLEX: 0 takes urtp_zrtp_ep_begin()'s, or a
   * random one if the peer's packets start the exchange. */
  uint32_t ssrc;
  /* As in urtp_zrtp_config_t; copied. A ZID created for the first session
   * is kept for the following ones. */
  const uint8_t *zid;
  const char *client_id;
  const char *cache_path;
  uint8_t key_agreements[URTP_ZRTP_MAX_PREFS];
  uint8_t ciphers[URTP_ZRTP_MAX_PREFS];
  uint8_t auth_tags[URTP_ZRTP_MAX_PREFS];
  uint8_t sas_types[URTP_ZRTP_MAX_PREFS];
  /* Multistream group name (with the mode, the key in a process-wide
   * registry); NULL or "": none. */
  const char *group;
  unsigned peer_timeout_ms;     /* 0: URTP_ZRTP_EP_PEER_TIMEOUT_MS */
  unsigned start_delay_ms;      /* DUPLEX: see Promises; 0: at once */
  /* Sends one packet to `to` (NULL: a DUPLEX endpoint that knows no
   * address; the caller's path decides). Returns 0 or -errno; failures are
   * left to retransmission. Required. */
  int (*send)(void *user, const uint8_t *pkt, size_t len, const struct sockaddr *to,
              socklen_t to_len);
  void *send_user;
  /* Optional. ev and what it points to are valid during the call only. The
   * callback may call any function of this endpoint except
   * urtp_zrtp_ep_stop() and urtp_zrtp_ep_free(). */
  void (*on_event)(void *user, const urtp_zrtp_ep_event_t *ev);
  void *event_user;
  /* Optional millisecond clock; NULL: CLOCK_MONOTONIC. */
  uint64_t (*clock)(void *user);
  void *clock_user;
  /* Optional random generator, as in urtp_zrtp_config_t. */
  int (*rng)(void *rng_user, uint8_t *buf, size_t len);
  void *rng_user;
} urtp_zrtp_ep_config_t;

/* What the endpoint is bound to (see Promises). */
typedef struct urtp_zrtp_ep_peer {
  bool have_addr;
  struct sockaddr_storage addr;
  socklen_t addr_len;
  bool have_zid;
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  bool alive;                   /* heard within peer_timeout_ms */
} urtp_zrtp_ep_peer_t;

/* Creates an endpoint (and joins its Multistream group). Returns 0, or
 * -EINVAL (no send callback, an unknown mode, a SENDER without a remote, a
 * remote larger than sockaddr_storage, a client id longer than 16
 * characters), -ENOMEM. */
int urtp_zrtp_ep_new(const urtp_zrtp_ep_config_t *cfg, urtp_zrtp_ep_t **out);
/* Stops (urtp_zrtp_ep_stop()) and frees. NULL is fine. */
void urtp_zrtp_ep_free(urtp_zrtp_ep_t *ep);

/* Runs the timers on a thread of the endpoint, woken through an eventfd.
 * fd >= 0: a SENDER's socket, which the thread also reads the peer's ZRTP
 * from (everything else read there is dropped and counted as `discarded`);
 * it must stay open until
 * urtp_zrtp_ep_stop() returns. The clock callback should then be the
 * default one. Returns 0, -EALREADY, or -errno (eventfd, pthread_create). */
int urtp_zrtp_ep_start(urtp_zrtp_ep_t *ep, int fd);
/* Ends the endpoint for good: joins the thread if there is one, frees the
 * session (urtp_zrtp_ep_get_info() still tells how it ended), drops what
 * was queued, leaves the Multistream group. Everything after is ignored. */
void urtp_zrtp_ep_stop(urtp_zrtp_ep_t *ep);

/* For callers without the thread: runs what is due (starts, timers). */
void urtp_zrtp_ep_tick(urtp_zrtp_ep_t *ep);
/* When urtp_zrtp_ep_tick() is next due, on the config's clock; UINT64_MAX:
 * nothing scheduled. */
uint64_t urtp_zrtp_ep_next_timeout(urtp_zrtp_ep_t *ep);

/* DUPLEX: start now (if not started), with ssrc unless the config fixed
 * one. Other modes: no effect. */
void urtp_zrtp_ep_begin(urtp_zrtp_ep_t *ep, uint32_t ssrc);

/* --- the media path ------------------------------------------------------ */

/* Lock-free: whether the session is secure. */
bool urtp_zrtp_ep_is_secure(urtp_zrtp_ep_t *ep);

/* Brings ctx (an SRTP context of the media path, zeroed or set up by this
 * function before) in line with the endpoint's keys when *serial is stale:
 * tears it down, then sets it up with the agreed keys if any.
 * need_secure (a sender): keys that exist before SECURE are not used yet
 * and *serial is left as it was. A sender protects with the local key for
 * ssrc (0: any SSRC), a receiver unprotects with the remote one for any
 * SSRC (replay_window as in urtp_srtp_config_t); a DUPLEX endpoint's
 * context protects when need_secure, else unprotects. Returns true when
 * ctx holds keys. One atomic read when nothing changed. */
bool urtp_zrtp_ep_sync_srtp(urtp_zrtp_ep_t *ep, urtp_srtp_t *ctx, int *serial, bool need_secure,
                            uint32_t ssrc, unsigned replay_window);
/* The same with the direction given (a DUPLEX endpoint holds one context
 * of each). */
bool urtp_zrtp_ep_sync_srtp_dir(urtp_zrtp_ep_t *ep, urtp_srtp_t *ctx, int *serial,
                                urtp_srtp_dir_t dir, bool need_secure, uint32_t ssrc,
                                unsigned replay_window);

/* A ZRTP packet (urtp_zrtp_is_zrtp()) the media path found on its socket;
 * copied, handled at once or by the driver thread. from NULL: the source
 * address is not known (no address binding). Packets longer than
 * URTP_ZRTP_MAX_PACKET are dropped. */
void urtp_zrtp_ep_recv(urtp_zrtp_ep_t *ep, const uint8_t *pkt, size_t len,
                       const struct sockaddr *from, socklen_t from_len);

/* Media arrived from `from` while there are no keys (this side restarted
 * while the peer kept its keys). RECEIVER only. */
void urtp_zrtp_ep_media_without_keys(urtp_zrtp_ep_t *ep, const struct sockaddr *from,
                                     socklen_t from_len);

/* SRTP/SRTCP from the peer authenticated (RFC 6189 4.6, and the peer's
 * liveness for the binding rule; from NULL: the address is not known, the
 * keys vouch for the peer). Called at most once per receive batch; cheap. */
void urtp_zrtp_ep_peer_srtp_ok(urtp_zrtp_ep_t *ep, const struct sockaddr *from,
                               socklen_t from_len);

/* Serial that changes whenever the keys may have changed. Lock-free. */
int urtp_zrtp_ep_serial(urtp_zrtp_ep_t *ep);

/* --- state ----------------------------------------------------------------- */

/* The current session's info; after it was freed, the last one's; before
 * any, zeros (IDLE). A group member failed by its leader shows the
 * leader's failure. */
void urtp_zrtp_ep_get_info(urtp_zrtp_ep_t *ep, urtp_zrtp_info_t *out);
void urtp_zrtp_ep_get_counters(urtp_zrtp_ep_t *ep, urtp_zrtp_ep_counters_t *out);
void urtp_zrtp_ep_get_peer(urtp_zrtp_ep_t *ep, urtp_zrtp_ep_peer_t *out);
/* The current session's keys: 0, or -EAGAIN (none yet, or no session). */
int urtp_zrtp_ep_get_keys(urtp_zrtp_ep_t *ep, urtp_zrtp_keys_t *out);
/* urtp_zrtp_set_sas_verified() on the current session: 0, -EAGAIN (no SAS
 * yet), -EIO (cache file not written; the flag is set all the same). */
int urtp_zrtp_ep_set_sas_verified(urtp_zrtp_ep_t *ep, bool verified);

/* A send callback for a UDP socket: user is the descriptor, as
 * URTP_ZRTP_EP_FD(fd). sendto() without blocking; a pending ICMP error
 * from an earlier datagram is consumed and the send tried once more.
 * Returns 0 or -errno. */
int urtp_zrtp_ep_send_udp(void *user, const uint8_t *pkt, size_t len,
                          const struct sockaddr *to, socklen_t to_len);
#define URTP_ZRTP_EP_FD(fd) ((void *)(intptr_t)(fd))

#endif
