/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srtp.h - SRTP and SRTCP (RFC 3711, RFC 6188, RFC 7714) through libsrtp2.
 *
 * A context holds one libsrtp2 session for one direction: outbound contexts
 * only protect, inbound contexts only unprotect. It serves one SSRC, or any
 * SSRC of its direction (libsrtp2 then makes a stream per SSRC on first
 * sight, the only allocation after init).
 *
 * Promises:
 *  - Batches are protected in one pass: each packet's iovecs are copied once
 *    into memory of the output batch, where libsrtp2 encrypts and appends the
 *    tag in place. Every output packet is one contiguous iovec, and packets
 *    of equal input length stay equal after protection (the trailer is a
 *    constant per profile), so UDP GSO runs survive. No allocation per
 *    packet: the output batch grows only when a batch is larger than any
 *    before.
 *  - Receiving works in place on a writable datagram (a urtp_rx_t slot).
 *    Authentication failures, replays and other rejections are told apart
 *    by the return value and counted in the context's stats; a rejected
 *    packet's buffer is zeroed, so no unauthenticated plaintext escapes.
 *  - Replay protection is always on; its window is configurable because a
 *    video frame can burst thousands of packets and reorder beyond the
 *    default 128.
 *  - Key material is master key followed by master salt: the same bytes as
 *    GStreamer srtpenc's `key` property (30 bytes for AES-128-ICM, 46 for
 *    AES-256-ICM, 28 for AES-128-GCM, 44 for AES-256-GCM).
 *  - libsrtp2 is initialised on first use and never shut down, safely
 *    against any other user of the same libsrtp2 in the process
 *    (GStreamer's srtp plugin, another copy of this library) initialising
 *    it at the same moment: readiness is judged by a trial session, and an
 *    initialisation under way elsewhere is waited for (up to 5 s). Only
 *    definite answers are remembered (a profile libsrtp2 lacks); a failure
 *    to initialise is returned and tried again on the next call. Distinct
 *    contexts may be used from distinct threads; one context from one
 *    thread at a time.
 */
#ifndef URTP_SRTP_H
#define URTP_SRTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batch.h"

typedef enum urtp_srtp_profile {
  URTP_SRTP_AES_CM_128_HMAC_SHA1_80,  /* RFC 3711 default, 10-byte tag */
  URTP_SRTP_AES_CM_128_HMAC_SHA1_32,  /* 4-byte tag on SRTP, 10 on SRTCP */
  URTP_SRTP_AES_256_CM_HMAC_SHA1_80,  /* RFC 6188 */
  URTP_SRTP_AES_256_CM_HMAC_SHA1_32,
  URTP_SRTP_AEAD_AES_128_GCM,         /* RFC 7714, 16-byte tag */
  URTP_SRTP_AEAD_AES_256_GCM,
  URTP_SRTP_PROFILE_COUNT
} urtp_srtp_profile_t;

/* Longest key material of any profile (AES-256-ICM: 32 + 14). */
#define URTP_SRTP_MAX_KEY_LEN 46
/* Room a caller leaves after a packet for in-place protection: libsrtp2's
 * documented worst case (tag + MKI), plus the SRTCP index. */
#define URTP_SRTP_MAX_TRAILER 148
/* Replay window bounds libsrtp2 accepts; 0 in the config means its 128. */
#define URTP_SRTP_MIN_WINDOW 64
#define URTP_SRTP_MAX_WINDOW 32767

typedef enum urtp_srtp_dir {
  URTP_SRTP_OUTBOUND,   /* protect */
  URTP_SRTP_INBOUND,    /* unprotect */
} urtp_srtp_dir_t;

typedef struct urtp_srtp_config {
  urtp_srtp_profile_t profile;
  urtp_srtp_dir_t dir;
  const uint8_t *key;         /* master key || master salt; copied */
  size_t key_len;             /* must be urtp_srtp_key_len(profile) */
  bool any_ssrc;              /* serve every SSRC of this direction */
  uint32_t ssrc;              /* else only this one */
  unsigned replay_window;     /* packets; 0: libsrtp2's default (128) */
} urtp_srtp_config_t;

/* Per context, per packet kind. For an outbound context, `replay` counts
 * packets refused because their index was already protected (a repeated
 * sequence number). */
typedef struct urtp_srtp_stats {
  uint64_t packets;           /* protected or unprotected successfully */
  uint64_t auth_fail;         /* tag did not verify */
  uint64_t replay;            /* already seen, or older than the window */
  uint64_t other;             /* malformed, unknown SSRC, too large, ... */
} urtp_srtp_stats_t;

typedef struct urtp_srtp {
  void *session;              /* srtp_t, opaque here */
  urtp_srtp_profile_t profile;
  urtp_srtp_dir_t dir;
  size_t rtp_trailer;         /* bytes protection adds to an RTP packet */
  size_t rtcp_trailer;        /* ... to an RTCP packet (tag + SRTCP index) */
  urtp_srtp_stats_t stats;    /* SRTP */
  urtp_srtp_stats_t rtcp_stats;
} urtp_srtp_t;

/* Which libsrtp2 this library runs on, for logs and benchmarks: its version,
 * the crypto library under its ciphers (as its AES-ICM cipher names it) and
 * where its code lives, e.g. "libsrtp2 2.5.0 (OpenSSL, built in)" for the
 * private static build of scripts/build-libsrtp2.sh, or "libsrtp2 2.5.0
 * (NSS, libsrtp2.so.1)" for Debian's shared one. A static string. */
const char *urtp_srtp_backend(void);

/* "AES_CM_128_HMAC_SHA1_80", ... (RFC 4568 / RFC 7714 names), or NULL. */
const char *urtp_srtp_profile_name(urtp_srtp_profile_t p);

/* Bytes of master key + master salt the profile takes; 0 if p is invalid. */
size_t urtp_srtp_key_len(urtp_srtp_profile_t p);

/* 0 if the installed libsrtp2 can run the profile, -ENOTSUP if not (GCM
 * needs libsrtp2 built with a crypto library), -EINVAL for an invalid p,
 * -EIO if libsrtp2 could not be initialised (within 5 s), -ENOMEM; the
 * last two are not remembered: the next call tries again. */
int urtp_srtp_profile_available(urtp_srtp_profile_t p);

/* Maps srtpenc's rtp-cipher / rtp-auth nicks (cipher: aes-128-icm,
 * aes-256-icm, aes-128-gcm, aes-256-gcm, null; auth: hmac-sha1-32,
 * hmac-sha1-80, null) to a profile and the key length it needs. GCM
 * authenticates by itself and so goes with auth "null", as in srtpenc.
 * Returns 0; -EINVAL for an unknown nick or GCM with an HMAC; -ENOTSUP for
 * the pairs that drop encryption or authentication (null cipher or null
 * auth with ICM), which this library does not offer. On failure a reason is
 * written to why (if not NULL). key_len may be NULL. */
int urtp_srtp_profile_from_nicks(const char *cipher, const char *auth,
                                 urtp_srtp_profile_t *profile, size_t *key_len,
                                 char *why, size_t why_len);

/* Parses a key given as hex digits (either case, no separators, as
 * `srtp-key=...` on a gst-launch line) and checks its length against the
 * profile. Returns 0 with the bytes in key[0 .. urtp_srtp_key_len(p)), or
 * -EINVAL with a reason in why: empty, a character that is not a hex digit
 * (and where), an odd number of digits, or the wrong length for p. */
int urtp_srtp_key_from_hex(const char *hex, urtp_srtp_profile_t p,
                           uint8_t key[URTP_SRTP_MAX_KEY_LEN],
                           char *why, size_t why_len);

/* Creates the context. Returns 0; -EINVAL for an invalid profile, a key of
 * the wrong length or a replay window outside [64, 32767] (0 allowed);
 * -ENOTSUP if libsrtp2 lacks the profile; -ENOMEM; -EIO for other libsrtp2
 * failures. On failure *s is left with session NULL. */
int urtp_srtp_init(urtp_srtp_t *s, const urtp_srtp_config_t *cfg);

/* Frees the session and wipes its keys. Safe on a failed or zeroed context. */
void urtp_srtp_destroy(urtp_srtp_t *s);

/* Protects every packet of in and appends the results to out, each as one
 * iovec into out's arena, in order. A packet libsrtp2 refuses (repeated
 * sequence number, malformed header, SSRC not served, or too large to carry
 * its tag within 65535 bytes) is left out and counted in stats. in and out
 * must be different batches; in is only read.
 * Returns the number of packets appended, -EINVAL on an inbound context,
 * or -ENOMEM (out then holds the packets appended before). */
int urtp_srtp_protect_batch(urtp_srtp_t *s, const urtp_batch_t *in, urtp_batch_t *out);

/* Protects one RTP packet in place: buf holds len bytes and has room for
 * cap >= len + URTP_SRTP_MAX_TRAILER. Returns the protected length
 * (len + rtp_trailer), or -EINVAL (inbound context), -ENOSPC (cap too small),
 * -EALREADY (repeated index), -EPROTO (refused otherwise). */
int urtp_srtp_protect(urtp_srtp_t *s, uint8_t *buf, size_t len, size_t cap);

/* Verifies and decrypts one SRTP packet in place. Returns the RTP length,
 * or, with buf[0 .. len) zeroed and the cause counted in stats:
 * -EBADMSG (authentication failed), -EALREADY (replayed or older than the
 * replay window), -EPROTO (anything else: too short, SSRC not served, ...).
 * -EINVAL on an outbound context (nothing counted, buf untouched). */
int urtp_srtp_unprotect(urtp_srtp_t *s, uint8_t *buf, size_t len);

/* The same for RTCP (compound packets protected whole, RFC 3711 3.4), with
 * cap >= len + URTP_SRTP_MAX_TRAILER, counted in rtcp_stats. */
int urtp_srtp_protect_rtcp(urtp_srtp_t *s, uint8_t *buf, size_t len, size_t cap);
int urtp_srtp_unprotect_rtcp(urtp_srtp_t *s, uint8_t *buf, size_t len);

/* Counts a result of the calls above (a length or -errno) in st as the
 * contexts count their own: for counters that must outlive a context
 * (keys that change). */
void urtp_srtp_count(urtp_srtp_stats_t *st, int result);

#endif
