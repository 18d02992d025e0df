/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zrtp.h - ZRTP media path key agreement (RFC 6189) for SRTP, through
 * OpenSSL's libcrypto, without any I/O of its own.
 *
 * A session is one ZRTP endpoint for one media stream. The caller feeds it
 * the ZRTP packets that arrive on the stream's socket (urtp_zrtp_is_zrtp()
 * tells them from RTP), calls urtp_zrtp_tick() when urtp_zrtp_next_timeout()
 * says, and sends what the session hands to its send callback on the same
 * socket. Time is whatever millisecond clock the caller passes, so tests can
 * run a virtual one.
 *
 * Promises:
 *  - Every packet is parsed with every length checked against its message
 *    type; a packet with a bad CRC, a bad length, an unknown type or one that
 *    does not fit the current state is dropped and counted, never trusted.
 *    Retransmissions, duplicates, reordering and simultaneous starts (commit
 *    contention, section 4.2) are part of the normal flow: a repeated message
 *    is answered by repeating the answer, a late one is ignored.
 *  - The hash chain H0..H3 (section 9) is checked whenever a peer reveals the
 *    next preimage, with the MAC of the message the previous image keyed. A
 *    message whose preimage does not hash to the stored image is dropped as
 *    forged or foreign (another session, a replay), and so is a Confirm
 *    whose MAC fails once; the same bad Confirm repeated by the peer means
 *    its keys differ from ours and ends the exchange with an Error message
 *    (0x70), as do a stored message whose MAC fails once its key is
 *    revealed (0x40 for Hello, 0x70 otherwise), a bad DH value (0x61), a
 *    wrong hvi (0x62), equal ZIDs (0x90), an older protocol version (0x30),
 *    unsupported algorithms (0x51..0x55) and a peer that stops answering
 *    (0xB0). An exchange never ends with both sides secure under different
 *    keys: each side's keys are confirmed by the other's Confirm MAC before
 *    they are released.
 *  - Retransmission follows section 6: Hello from 50 ms doubling to 200 ms,
 *    20 retransmissions; Commit, DHPart2, Confirm2 and Error from 150 ms
 *    doubling to 1200 ms, 10 retransmissions. The responder only answers, and
 *    gives up after URTP_ZRTP_IDLE_TIMEOUT_MS without progress.
 *  - Keys: the initiator's and the responder's SRTP master keys differ
 *    (section 4.5.3); urtp_zrtp_get_keys() gives the one this side sends
 *    with and the one it receives with, for two one-direction SRTP contexts
 *    (lib/urtp/srtp.h). They are released only once confirmed: the
 *    initiator after a valid Confirm1, the responder after a valid Confirm2.
 *    Media must not be sent before the state is URTP_ZRTP_SECURE.
 *  - Retained secrets (rs1, rs2) and the SAS verified flag are kept per peer
 *    ZID in a cache file the caller names (format below), rewritten whole
 *    through a temporary file and rename(2), so a crash leaves the old or
 *    the new file. A cache mismatch (a cached rs1 for the peer that matches
 *    none of the peer's secrets) is reported in urtp_zrtp_info_t and by an
 *    event, clears the verified flag, and defers the cache update until the
 *    user verifies the SAS (urtp_zrtp_set_sas_verified()). The file holds
 *    at most URTP_ZRTP_CACHE_MAX_PEERS peers: storing one more forgets the
 *    least recently used. Reading it costs time linear in its size.
 *  - Algorithms: hash S256; ciphers AES1, AES3; SRTP auth tags HS32, HS80;
 *    key agreement DH3k (3072-bit MODP, RFC 3526), EC25 (NIST P-256) and
 *    Mult (Multistream, from a secure session's ZRTPSess, no DH); SAS B32
 *    and B256 (PGP word list). Signatures, Preshared mode, GoClear, SASrelay
 *    and Ping are not offered: such messages are dropped.
 *  - Randomness comes from OpenSSL (RAND_bytes) unless the config gives a
 *    generator, which tests use to be reproducible.
 *  - One session is used by one thread at a time; distinct sessions are
 *    independent (cache file writes are serialised within the process).
 *  - The protocol does no I/O of its own: packets go out through the
 *    send callback, and the cache file is read and written by zrtp_cache.c
 *    only where a cache path is given.
 *
 * Cache file format (text, UTF-8, '\n' line ends, written with mode 0600):
 *   line 1:  "urtp-zrtp-cache 1"
 *   "zid <24 hex digits>"          this endpoint's ZID
 *   "peer <zid> <rs1> <rs2> <v>"   one per peer: ZID in hex, each retained
 *                                  secret as 64 hex digits or "-" when
 *                                  absent, and the SAS verified flag 0 or 1
 * Peer lines go from the least to the most recently used (an exchange or a
 * SAS verdict with the peer moves it last). Unknown or malformed lines are
 * ignored on reading and dropped on writing; of two lines for one ZID the
 * first counts. A longer file (hand-made, or from an older version) is read
 * whole and cut to its last URTP_ZRTP_CACHE_MAX_PEERS peers when written.
 */
#ifndef URTP_ZRTP_H
#define URTP_ZRTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srtp.h"

#define URTP_ZRTP_ZID_LEN 12
/* Responder (and waiting) states give up after this long without progress:
 * a little more than the initiator's whole retransmission budget. */
#define URTP_ZRTP_IDLE_TIMEOUT_MS 12000
/* Received packets longer than this are refused; the longest this library
 * sends (DHPart with DH3k) is 484 bytes. */
#define URTP_ZRTP_MAX_PACKET 1500
/* Peers a cache file keeps (about 170 KB): far more than one endpoint
 * calls, few enough that rewriting the whole file per exchange stays
 * cheap. */
#define URTP_ZRTP_CACHE_MAX_PEERS 1000

/* RFC 6189 section 5.9 error codes. */
enum {
  URTP_ZRTP_ERR_MALFORMED = 0x10,
  URTP_ZRTP_ERR_SOFTWARE = 0x20,
  URTP_ZRTP_ERR_VERSION = 0x30,
  URTP_ZRTP_ERR_HELLO_MISMATCH = 0x40,
  URTP_ZRTP_ERR_HASH = 0x51,
  URTP_ZRTP_ERR_CIPHER = 0x52,
  URTP_ZRTP_ERR_KEY_AGREEMENT = 0x53,
  URTP_ZRTP_ERR_AUTH_TAG = 0x54,
  URTP_ZRTP_ERR_SAS = 0x55,
  URTP_ZRTP_ERR_NO_SHARED_SECRET = 0x56,
  URTP_ZRTP_ERR_BAD_DH = 0x61,
  URTP_ZRTP_ERR_HVI = 0x62,
  URTP_ZRTP_ERR_RELAYED_SAS = 0x63,
  URTP_ZRTP_ERR_CONFIRM_MAC = 0x70,
  URTP_ZRTP_ERR_NONCE_REUSE = 0x80,
  URTP_ZRTP_ERR_EQUAL_ZID = 0x90,
  URTP_ZRTP_ERR_SSRC_COLLISION = 0x91,
  URTP_ZRTP_ERR_UNAVAILABLE = 0xA0,
  URTP_ZRTP_ERR_TIMEOUT = 0xB0,
  URTP_ZRTP_ERR_GOCLEAR = 0xC0,
};

typedef enum urtp_zrtp_state {
  URTP_ZRTP_IDLE,           /* created, not started */
  URTP_ZRTP_DISCOVERY,      /* Hello / HelloACK */
  URTP_ZRTP_KEY_AGREEMENT,  /* Commit .. Confirm */
  URTP_ZRTP_SECURE,         /* keys confirmed by both sides */
  URTP_ZRTP_FAILED,         /* see urtp_zrtp_info_t.error */
} urtp_zrtp_state_t;

typedef enum urtp_zrtp_role {
  URTP_ZRTP_ROLE_AUTO,      /* commit once discovery is done; on commit
                               contention the RFC decides who initiates */
  URTP_ZRTP_ROLE_RESPONDER, /* never commit, wait for the peer's Commit */
} urtp_zrtp_role_t;

/* Algorithm identifiers; 0 ends a preference list. */
typedef enum urtp_zrtp_ka {
  URTP_ZRTP_KA_DH3K = 1,    /* "DH3k", mandatory */
  URTP_ZRTP_KA_EC25,        /* "EC25" */
  URTP_ZRTP_KA_MULT,        /* "Mult", Multistream */
} urtp_zrtp_ka_t;

typedef enum urtp_zrtp_cipher {
  URTP_ZRTP_CIPHER_AES1 = 1,  /* "AES1", mandatory: AES-128 */
  URTP_ZRTP_CIPHER_AES3,      /* "AES3": AES-256 */
} urtp_zrtp_cipher_t;

typedef enum urtp_zrtp_auth {
  URTP_ZRTP_AUTH_HS32 = 1,  /* "HS32", mandatory: HMAC-SHA1 32-bit SRTP tag */
  URTP_ZRTP_AUTH_HS80,      /* "HS80", mandatory: 80-bit tag */
} urtp_zrtp_auth_t;

typedef enum urtp_zrtp_sas {
  URTP_ZRTP_SAS_B32 = 1,    /* "B32", mandatory: 4 base32 characters */
  URTP_ZRTP_SAS_B256,       /* "B256": two PGP words */
} urtp_zrtp_sas_t;

#define URTP_ZRTP_MAX_PREFS 4

typedef enum urtp_zrtp_event {
  URTP_ZRTP_EV_KEYS_READY,      /* urtp_zrtp_get_keys() now succeeds */
  URTP_ZRTP_EV_SECURE,
  URTP_ZRTP_EV_FAILED,
  URTP_ZRTP_EV_CACHE_MISMATCH,  /* before KEYS_READY; the SAS must be checked */
} urtp_zrtp_event_t;

typedef struct urtp_zrtp urtp_zrtp_t;

typedef struct urtp_zrtp_config {
  urtp_zrtp_role_t role;
  uint32_t ssrc;              /* our SSRC, written in every packet header */
  /* Our ZID. NULL: the cache file's, else a random one (then saved in the
   * cache file if there is one). */
  const uint8_t *zid;
  const char *client_id;      /* up to 16 characters; NULL: "gst-uvgrtp" */
  const char *cache_path;     /* NULL: no retained secrets */
  /* Preferences, best first, 0-terminated; all zero: the defaults
   * (EC25, DH3k; AES1, AES3; HS80, HS32; B32, B256). As the RFC requires,
   * the mandatory algorithms are always accepted from a peer and announced
   * last if missing. */
  uint8_t key_agreements[URTP_ZRTP_MAX_PREFS];
  uint8_t ciphers[URTP_ZRTP_MAX_PREFS];
  uint8_t auth_tags[URTP_ZRTP_MAX_PREFS];
  uint8_t sas_types[URTP_ZRTP_MAX_PREFS];
  /* Multistream: a SECURE session with the same peer. Its ZRTPSess, SAS and
   * ZID are copied at urtp_zrtp_new(); the parent may be freed afterwards.
   * When the peer lists Mult this session then commits in Multistream mode. */
  const urtp_zrtp_t *multistream_parent;
  /* Both callbacks run inside urtp_zrtp_start/recv/tick. They may query the
   * session (state, info, keys) but not feed it packets or free it. */
  void (*send)(void *user, const uint8_t *pkt, size_t len);  /* required */
  void (*on_event)(void *user, urtp_zrtp_event_t ev);        /* optional */
  void *user;
  /* Optional random generator (tests): fills buf, returns 0. */
  int (*rng)(void *rng_user, uint8_t *buf, size_t len);
  void *rng_user;
} urtp_zrtp_config_t;

typedef struct urtp_zrtp_stats {
  uint64_t sent;              /* packets handed to send(), retransmissions too */
  uint64_t retransmits;
  uint64_t received;          /* packets given to urtp_zrtp_recv() */
  uint64_t accepted;          /* ... that moved the exchange or were answered */
  uint64_t bad_packet;        /* CRC, header or length wrong */
  uint64_t unexpected;        /* valid message, not for this state, or a
                                 repetition that differs from the first copy */
  uint64_t auth_fail;         /* hash chain or MAC did not verify */
} urtp_zrtp_stats_t;

typedef struct urtp_zrtp_info {
  urtp_zrtp_state_t state;
  bool initiator;
  bool multistream;
  bool keys_ready;            /* urtp_zrtp_get_keys() succeeds */
  char sas[40];               /* "" until keys are ready; B32: 4 characters,
                                 B256: "word1 word2" */
  uint32_t sas_value;         /* leftmost 32 bits of sashash */
  bool sas_verified;          /* our cached flag, continuity kept, no mismatch */
  bool peer_sas_verified;     /* the V flag of the peer's Confirm */
  bool secrets_matched;       /* a retained secret was shared (s1 not null) */
  bool cache_mismatch;
  char hash[5], cipher[5], auth_tag[5], key_agreement[5], sas_type[5];
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  uint8_t peer_zid[URTP_ZRTP_ZID_LEN];  /* zeros until the peer's Hello */
  char peer_client_id[17];
  uint32_t peer_ssrc;
  uint16_t error;             /* RFC error code once FAILED */
  bool error_from_peer;       /* error came in an Error message */
  urtp_zrtp_stats_t stats;
} urtp_zrtp_info_t;

typedef struct urtp_zrtp_keys {
  urtp_srtp_profile_t profile;  /* AES1: AES_CM_128_HMAC_SHA1_{32,80};
                                   AES3: AES_256_CM_HMAC_SHA1_{32,80} */
  size_t key_len;               /* master key + master salt: 30 or 46 */
  uint8_t local[URTP_SRTP_MAX_KEY_LEN];   /* protects what we send */
  uint8_t remote[URTP_SRTP_MAX_KEY_LEN];  /* unprotects what the peer sends */
  unsigned tag_bits;            /* SRTP auth tag: 32 or 80 */
} urtp_zrtp_keys_t;

/* True when pkt looks like ZRTP: first nibble 0001, magic cookie "ZRTP"
 * (0x5A525450) at byte 4, at least a header, a 12-byte message and a CRC. */
bool urtp_zrtp_is_zrtp(const uint8_t *pkt, size_t len);

/* Creates a session. Returns 0; -EINVAL (no send callback, an unknown role
 * or preference value, a client id longer than 16, a parent that is not
 * SECURE), -EIO (the cache file exists but cannot be read, a new ZID cannot
 * be written to it, or the random generator failed), -ENOMEM. A session
 * that failed cannot be restarted: free it and create another. */
int urtp_zrtp_new(const urtp_zrtp_config_t *cfg, urtp_zrtp_t **out);
/* Wipes the keys and frees. NULL is fine. */
void urtp_zrtp_free(urtp_zrtp_t *z);

/* Sends the first Hello and starts the timers. 0, or -EALREADY. */
int urtp_zrtp_start(urtp_zrtp_t *z, uint64_t now_ms);

/* Handles one received packet (the whole UDP payload). Returns 0 when the
 * packet was accepted (even if only answered), or, with the packet dropped
 * and counted: -EBADMSG (not ZRTP, CRC, lengths), -EPROTO (not expected in
 * this state, or a changed repetition), -EPERM (hash chain or MAC failed),
 * -EAGAIN (session not started). A packet that ends the exchange with an
 * Error also returns 0; check the state. */
int urtp_zrtp_recv(urtp_zrtp_t *z, const uint8_t *pkt, size_t len, uint64_t now_ms);

/* Runs due timers (retransmissions, give-up). Call at or after
 * urtp_zrtp_next_timeout(); calling early is harmless. */
void urtp_zrtp_tick(urtp_zrtp_t *z, uint64_t now_ms);

/* Absolute time (ms, the caller's clock) of the next timer, or UINT64_MAX. */
uint64_t urtp_zrtp_next_timeout(const urtp_zrtp_t *z);

/* The initiator becomes SECURE on Conf2ACK; an authenticated SRTP packet
 * from the responder means the same (RFC 6189 section 4.6), so the caller
 * may report one here. No effect in other states. */
void urtp_zrtp_peer_srtp_ok(urtp_zrtp_t *z);

urtp_zrtp_state_t urtp_zrtp_state(const urtp_zrtp_t *z);
void urtp_zrtp_get_info(const urtp_zrtp_t *z, urtp_zrtp_info_t *out);

/* The SRTP keys. 0, or -EAGAIN before they are confirmed (see Promises)
 * and after failure. */
int urtp_zrtp_get_keys(const urtp_zrtp_t *z, urtp_zrtp_keys_t *out);

/* Records that the users compared the SAS (true) or found it wrong / want
 * it compared again (false), in the session and the cache file. Verifying
 * after a cache mismatch also stores the new retained secret. Returns 0,
 * -EAGAIN before keys are ready, -EIO if the cache cannot be written (the
 * session's flag is still set). Without a cache path only the session's
 * flag changes. */
int urtp_zrtp_set_sas_verified(urtp_zrtp_t *z, bool verified);

/* Names: "SECURE", ...; "Malformed packet", ... (NULL for unknown codes). */
const char *urtp_zrtp_state_name(urtp_zrtp_state_t s);
const char *urtp_zrtp_error_name(unsigned code);

/* Building blocks, exposed for known-answer tests. */

/* CRC-32C (Castagnoli, reflected, as RFC 4960 appendix B); "123456789"
 * gives 0xE3069283. The packet carries it least significant byte first,
 * as SCTP does and as deployed ZRTP stacks check it. */
uint32_t urtp_zrtp_crc32c(const uint8_t *buf, size_t len);

/* KDF(KI, Label, Context, L) of section 4.5.1 with HMAC-SHA-256:
 * HMAC(KI, 0x00000001 || Label || 0x00 || Context || L) truncated to L bits,
 * L = out_len * 8 (out_len 1..32). Returns 0 or -EINVAL / -EIO. */
int urtp_zrtp_kdf(const uint8_t *ki, size_t ki_len, const char *label,
                  const uint8_t *context, size_t context_len, uint8_t *out, size_t out_len);

/* Renders a SAS value (section 5.1.6): B32 takes the leftmost 20 bits as 4
 * characters of "ybndrfg8ejkmcpqxot1uwisza345h769"; B256 the leftmost 16
 * bits as an even-list and an odd-list PGP word separated by a space.
 * Returns the string length, or -EINVAL / -ENOSPC. */
int urtp_zrtp_sas_render(urtp_zrtp_sas_t type, uint32_t sas_value, char *buf, size_t buf_len);

#endif
