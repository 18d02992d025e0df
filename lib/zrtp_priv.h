/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * zrtp_priv.h - internals shared by zrtp.c (state machine, cache),
 * zrtp_msg.c (message build/parse) and zrtp_crypto.c (hashes, KDF, DH/ECDH,
 * AES-CFB, SAS, CRC-32C). Not installed, not a contract.
 */
#ifndef URTP_ZRTP_PRIV_H
#define URTP_ZRTP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "urtp/zrtp.h"

#define ZRTP_PKT_HDR 12      /* 0x10 0x00 seq, cookie, SSRC */
#define ZRTP_CRC_LEN 4
#define ZRTP_MSG_HDR 12      /* 0x505a, length in words, type block */
#define ZRTP_COOKIE 0x5A525450u
#define ZRTP_HASH_LEN 32     /* S256 everywhere */
#define ZRTP_MAC_LEN 8       /* truncated HMACs in messages */
#define ZRTP_SALT_LEN 14     /* SRTP master salt, 112 bits */
#define ZRTP_DH3K_PV 384
#define ZRTP_EC25_PV 64
#define ZRTP_MAX_PV ZRTP_DH3K_PV
#define ZRTP_MAX_ALGS 7      /* per type in a Hello */

/* Fixed message lengths in bytes (section 5). */
#define ZRTP_HELLO_MIN 88
#define ZRTP_ACK_LEN 12      /* HelloACK, Conf2ACK, ErrorACK, ClearACK, RelayACK */
#define ZRTP_COMMIT_DH_LEN 116
#define ZRTP_COMMIT_MULT_LEN 100
#define ZRTP_DHPART_FIXED 84 /* plus pv */
#define ZRTP_CONFIRM_MIN 76  /* plus signature */
#define ZRTP_ERROR_LEN 16
#define ZRTP_CONFIRM_PLAIN 40 /* H0, flags word, cache expiration, no signature */

#define ZRTP_MAX_MSG 512     /* longest message we store: DHPart DH3k is 468 */

typedef enum zrtp_type {
  ZT_UNKNOWN,
  ZT_HELLO, ZT_HELLOACK, ZT_COMMIT, ZT_DHPART1, ZT_DHPART2, ZT_CONFIRM1,
  ZT_CONFIRM2, ZT_CONF2ACK, ZT_ERROR, ZT_ERRORACK, ZT_GOCLEAR, ZT_CLEARACK,
  ZT_SASRELAY, ZT_RELAYACK, ZT_PING, ZT_PINGACK,
} zrtp_type_t;

/* Algorithm type blocks, by class. Index 0 is unused (unknown). */
typedef enum zrtp_alg_class { ZA_HASH, ZA_CIPHER, ZA_AUTH, ZA_KA, ZA_SAS, ZA_NCLASS } zrtp_alg_class_t;
#define ZRTP_HASH_S256 1

const char *zrtp_alg_name(zrtp_alg_class_t c, unsigned id);   /* "AES1" or NULL */
unsigned zrtp_alg_from_block(zrtp_alg_class_t c, const uint8_t blk[4]); /* 0: unknown */

/* ---- messages (zrtp_msg.c) ---- */

typedef struct zrtp_hello {
  char version[4];
  char client_id[16];
  uint8_t h3[ZRTP_HASH_LEN];
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  bool sig, mitm, passive;
  /* known algorithms in the peer's order (unknown ones skipped), then the
   * mandatory ones appended when missing */
  uint8_t n[ZA_NCLASS];
  uint8_t alg[ZA_NCLASS][ZRTP_MAX_ALGS + 2];
} zrtp_hello_t;

typedef struct zrtp_commit {
  uint8_t h2[ZRTP_HASH_LEN];
  uint8_t zid[URTP_ZRTP_ZID_LEN];
  unsigned hash, cipher, auth, ka, sas;  /* 0 when unknown */
  uint8_t hvi[ZRTP_HASH_LEN];             /* DH modes */
  uint8_t nonce[16];                      /* Mult */
} zrtp_commit_t;

typedef struct zrtp_dhpart {
  uint8_t h1[ZRTP_HASH_LEN];
  uint8_t rs1id[8], rs2id[8], auxid[8], pbxid[8];
  const uint8_t *pv;                      /* into the message */
  size_t pv_len;
} zrtp_dhpart_t;

typedef struct zrtp_confirm {
  const uint8_t *mac;                     /* 8 bytes, into the message */
  const uint8_t *iv;                      /* 16 bytes */
  const uint8_t *enc;                     /* encrypted part */
  size_t enc_len;
} zrtp_confirm_t;

typedef struct zrtp_confirm_plain {
  uint8_t h0[ZRTP_HASH_LEN];
  unsigned sig_len;                       /* words */
  bool e, v, a, d;
  uint32_t cache_expiry;
} zrtp_confirm_plain_t;

/* Checks a packet's header, CRC and message framing. On success *msg points
 * at the message (preamble onwards), *msg_len its length, *type its type
 * (ZT_UNKNOWN for a type block we do not know), *ssrc the source. */
int zrtp_packet_check(const uint8_t *pkt, size_t len, const uint8_t **msg, size_t *msg_len,
                      zrtp_type_t *type, uint32_t *ssrc);
/* Wraps a message in a packet (header + CRC); out needs msg_len + 16. */
size_t zrtp_packet_build(uint8_t *out, uint16_t seq, uint32_t ssrc, const uint8_t *msg,
                         size_t msg_len);
/* Writes the preamble, length and type block; len is the whole message. */
void zrtp_msg_header(uint8_t *msg, size_t len, zrtp_type_t type);

int zrtp_parse_hello(const uint8_t *m, size_t len, zrtp_hello_t *h);
int zrtp_parse_commit(const uint8_t *m, size_t len, zrtp_commit_t *c);
int zrtp_parse_dhpart(const uint8_t *m, size_t len, size_t pv_len, zrtp_dhpart_t *d);
int zrtp_parse_confirm(const uint8_t *m, size_t len, zrtp_confirm_t *c);
int zrtp_parse_confirm_plain(const uint8_t *p, size_t len, zrtp_confirm_plain_t *c);
int zrtp_parse_error(const uint8_t *m, size_t len, uint32_t *code);

/* The builders write the whole message into out (room ZRTP_MAX_MSG) and
 * return its length; MACs keyed by a hash image are computed here. */
typedef struct zrtp_hello_desc {
  const char *client_id;                  /* 16 bytes, space padded */
  const uint8_t *h3, *h2, *zid;
  uint8_t n[ZA_NCLASS];
  const uint8_t (*alg)[ZRTP_MAX_ALGS + 2];
} zrtp_hello_desc_t;
size_t zrtp_build_hello(uint8_t *out, const zrtp_hello_desc_t *d);
size_t zrtp_build_commit(uint8_t *out, const uint8_t h2[32], const uint8_t h1[32],
                         const uint8_t zid[12], const unsigned alg[ZA_NCLASS],
                         const uint8_t *hvi_or_nonce);
size_t zrtp_build_dhpart(uint8_t *out, zrtp_type_t type, const uint8_t h1[32],
                         const uint8_t h0[32], const uint8_t ids[4][8], const uint8_t *pv,
                         size_t pv_len);
/* Confirm: plaintext encrypted with zrtpkey (cipher key length key_len) in
 * CFB mode under iv, then MACed with mackey. */
int zrtp_build_confirm(uint8_t *out, size_t *out_len, zrtp_type_t type, const uint8_t h0[32],
                       bool v, uint32_t cache_expiry, const uint8_t *zrtpkey, size_t key_len,
                       const uint8_t mackey[32], const uint8_t iv[16]);
size_t zrtp_build_simple(uint8_t *out, zrtp_type_t type);           /* ACKs */
size_t zrtp_build_error(uint8_t *out, uint32_t code);

/* ---- crypto (zrtp_crypto.c) ---- */

typedef int (*zrtp_rng_fn)(void *user, uint8_t *buf, size_t len);

void zrtp_sha256(const uint8_t *p, size_t n, uint8_t out[32]);
/* hash of the concatenation of up to 4 buffers (NULL ends) */
int zrtp_sha256_cat(uint8_t out[32], const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                    const uint8_t *c, size_t cn, const uint8_t *d, size_t dn);
void zrtp_hmac(const uint8_t *key, size_t klen, const uint8_t *p, size_t n, uint8_t out[32]);
/* constant-time compare */
bool zrtp_equal(const uint8_t *a, const uint8_t *b, size_t n);
/* AES in CFB-128 mode; key_len 16 or 32 */
int zrtp_aes_cfb(bool encrypt, const uint8_t *key, size_t key_len, const uint8_t iv[16],
                 const uint8_t *in, uint8_t *out, size_t len);
int zrtp_rand(zrtp_rng_fn rng, void *user, uint8_t *buf, size_t len);
void zrtp_wipe(void *p, size_t n);

/* DH3k / EC25 key pair */
typedef struct zrtp_kp {
  unsigned ka;                 /* URTP_ZRTP_KA_DH3K / _EC25, 0 when empty */
  void *priv;                  /* BIGNUM */
  uint8_t pv[ZRTP_MAX_PV];
  size_t pv_len;
} zrtp_kp_t;
size_t zrtp_ka_pv_len(unsigned ka);     /* 384, 64, 0 */
int zrtp_kp_generate(zrtp_kp_t *kp, unsigned ka, zrtp_rng_fn rng, void *user);
/* DHResult into out (384 or 32 bytes), *out_len set. -EINVAL for a peer
 * value that is out of range (0, 1, p-1, >= p) or not on the curve. */
int zrtp_kp_agree(const zrtp_kp_t *kp, const uint8_t *peer_pv, size_t pv_len, uint8_t *out,
                  size_t *out_len);
void zrtp_kp_clear(zrtp_kp_t *kp);

#endif
