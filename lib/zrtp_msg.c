/* SPDX-License-Identifier: BSD-2-Clause */
#include "zrtp_priv.h"
#include "urtp/bytes.h"

#include <errno.h>
#include <string.h>

/*
 * Packet (section 5):
 *  |0 0 0 1|not used (0)           |        sequence number        |
 *  |                 magic cookie 'ZRTP' 0x5a525450                |
 *  |                        source identifier                      |
 *  |0x505a (preamble)              |     length (32-bit words)     |
 *  |                 message type block (2 words)                  |
 *  |                          ... message ...                      |
 *  |                          CRC (1 word)                         |
 * The message length counts preamble to the end of the message (not the
 * packet header, not the CRC).
 */

static const char *const type_blocks[] = {
  [ZT_HELLO] = "Hello   ",    [ZT_HELLOACK] = "HelloACK", [ZT_COMMIT] = "Commit  ",
  [ZT_DHPART1] = "DHPart1 ",  [ZT_DHPART2] = "DHPart2 ",  [ZT_CONFIRM1] = "Confirm1",
  [ZT_CONFIRM2] = "Confirm2", [ZT_CONF2ACK] = "Conf2ACK", [ZT_ERROR] = "Error   ",
  [ZT_ERRORACK] = "ErrorACK", [ZT_GOCLEAR] = "GoClear ",  [ZT_CLEARACK] = "ClearACK",
  [ZT_SASRELAY] = "SASrelay", [ZT_RELAYACK] = "RelayACK", [ZT_PING] = "Ping    ",
  [ZT_PINGACK] = "PingACK ",
};
#define NTYPES (sizeof type_blocks / sizeof type_blocks[0])

bool urtp_zrtp_is_zrtp(const uint8_t *pkt, size_t len)
{
  return pkt && len >= ZRTP_PKT_HDR + ZRTP_ACK_LEN + ZRTP_CRC_LEN && (pkt[0] & 0xF0) == 0x10 &&
         urtp_rd32(pkt + 4) == ZRTP_COOKIE;
}

int zrtp_packet_check(const uint8_t *pkt, size_t len, const uint8_t **msg, size_t *msg_len,
                      zrtp_type_t *type, uint32_t *ssrc)
{
  if (!urtp_zrtp_is_zrtp(pkt, len) || len > URTP_ZRTP_MAX_PACKET || len % 4 != 0)
    return -EBADMSG;
  /* The CRC goes out least significant byte first (SCTP's convention, which
   * deployed ZRTP stacks follow). */
  const uint8_t *c = pkt + len - 4;
  uint32_t crc = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
  if (crc != urtp_zrtp_crc32c(pkt, len - 4))
    return -EBADMSG;
  const uint8_t *m = pkt + ZRTP_PKT_HDR;
  size_t mlen = len - ZRTP_PKT_HDR - ZRTP_CRC_LEN;
  if (m[0] != 0x50 || m[1] != 0x5a || (size_t)urtp_rd16(m + 2) * 4 != mlen)
    return -EBADMSG;
  *type = ZT_UNKNOWN;
  for (size_t t = 1; t < NTYPES; t++)
    if (memcmp(m + 4, type_blocks[t], 8) == 0)
      *type = (zrtp_type_t)t;
  *msg = m;
  *msg_len = mlen;
  *ssrc = urtp_rd32(pkt + 8);
  return 0;
}

size_t zrtp_packet_build(uint8_t *out, uint16_t seq, uint32_t ssrc, const uint8_t *msg,
                         size_t msg_len)
{
  out[0] = 0x10;
  out[1] = 0;
  urtp_wr16(out + 2, seq);
  urtp_wr32(out + 4, ZRTP_COOKIE);
  urtp_wr32(out + 8, ssrc);
  memcpy(out + ZRTP_PKT_HDR, msg, msg_len);
  size_t n = ZRTP_PKT_HDR + msg_len;
  uint32_t crc = urtp_zrtp_crc32c(out, n);
  out[n] = (uint8_t)crc;
  out[n + 1] = (uint8_t)(crc >> 8);
  out[n + 2] = (uint8_t)(crc >> 16);
  out[n + 3] = (uint8_t)(crc >> 24);
  return n + 4;
}

void zrtp_msg_header(uint8_t *msg, size_t len, zrtp_type_t type)
{
  msg[0] = 0x50;
  msg[1] = 0x5a;
  urtp_wr16(msg + 2, (uint16_t)(len / 4));
  memcpy(msg + 4, type_blocks[type], 8);
}

/* The MAC of Hello, Commit and DHPart: HMAC-SHA-256 keyed by the hash image,
 * over the message up to the MAC, truncated to 64 bits (section 9). */
static void put_mac(uint8_t *msg, size_t len, const uint8_t key[32])
{
  uint8_t mac[32];
  zrtp_hmac(key, 32, msg, len - ZRTP_MAC_LEN, mac);
  memcpy(msg + len - ZRTP_MAC_LEN, mac, ZRTP_MAC_LEN);
}

/* ---- Hello ---- */

static const uint8_t mandatory[ZA_NCLASS][3] = {
  [ZA_HASH] = {ZRTP_HASH_S256},
  [ZA_CIPHER] = {URTP_ZRTP_CIPHER_AES1},
  [ZA_AUTH] = {URTP_ZRTP_AUTH_HS32, URTP_ZRTP_AUTH_HS80},
  [ZA_KA] = {URTP_ZRTP_KA_DH3K},
  [ZA_SAS] = {URTP_ZRTP_SAS_B32},
};

int zrtp_parse_hello(const uint8_t *m, size_t len, zrtp_hello_t *h)
{
  if (len < ZRTP_HELLO_MIN)
    return -EBADMSG;
  memset(h, 0, sizeof *h);
  memcpy(h->version, m + 12, 4);
  memcpy(h->client_id, m + 16, 16);
  memcpy(h->h3, m + 32, 32);
  memcpy(h->zid, m + 64, 12);
  h->sig = (m[76] & 0x40) != 0;
  h->mitm = (m[76] & 0x20) != 0;
  h->passive = (m[76] & 0x10) != 0;
  unsigned cnt[ZA_NCLASS] = {m[77] & 15u, m[78] >> 4, m[78] & 15u, m[79] >> 4, m[79] & 15u};
  size_t total = 0;
  for (int c = 0; c < ZA_NCLASS; c++) {
    if (cnt[c] > ZRTP_MAX_ALGS)
      return -EBADMSG;
    total += cnt[c];
  }
  if (len != ZRTP_HELLO_MIN + 4 * total)
    return -EBADMSG;
  const uint8_t *p = m + 80;
  for (int c = 0; c < ZA_NCLASS; c++) {
    for (unsigned i = 0; i < cnt[c]; i++, p += 4) {
      unsigned id = zrtp_alg_from_block((zrtp_alg_class_t)c, p);
      bool dup = false;
      for (unsigned k = 0; k < h->n[c]; k++)
        dup |= h->alg[c][k] == id;
      if (id && !dup)
        h->alg[c][h->n[c]++] = (uint8_t)id;
    }
    /* mandatory algorithms are implied even when not listed (section 5.1) */
    for (int k = 0; k < 3 && mandatory[c][k]; k++) {
      bool have = false;
      for (unsigned j = 0; j < h->n[c]; j++)
        have |= h->alg[c][j] == mandatory[c][k];
      if (!have)
        h->alg[c][h->n[c]++] = mandatory[c][k];
    }
  }
  return 0;
}

size_t zrtp_build_hello(uint8_t *out, const zrtp_hello_desc_t *d)
{
  size_t total = 0;
  for (int c = 0; c < ZA_NCLASS; c++)
    total += d->n[c];
  size_t len = ZRTP_HELLO_MIN + 4 * total;
  memset(out, 0, len);
  zrtp_msg_header(out, len, ZT_HELLO);
  memcpy(out + 12, "1.10", 4);
  memcpy(out + 16, d->client_id, 16);
  memcpy(out + 32, d->h3, 32);
  memcpy(out + 64, d->zid, 12);
  out[76] = 0;  /* S, M, P clear: no signatures, not a PBX, not passive */
  out[77] = d->n[ZA_HASH];
  out[78] = (uint8_t)(d->n[ZA_CIPHER] << 4 | d->n[ZA_AUTH]);
  out[79] = (uint8_t)(d->n[ZA_KA] << 4 | d->n[ZA_SAS]);
  uint8_t *p = out + 80;
  for (int c = 0; c < ZA_NCLASS; c++)
    for (unsigned i = 0; i < d->n[c]; i++, p += 4)
      memcpy(p, zrtp_alg_name((zrtp_alg_class_t)c, d->alg[c][i]), 4);
  put_mac(out, len, d->h2);
  return len;
}

/* ---- Commit ---- */

int zrtp_parse_commit(const uint8_t *m, size_t len, zrtp_commit_t *c)
{
  if (len < ZRTP_COMMIT_MULT_LEN)
    return -EBADMSG;
  memset(c, 0, sizeof *c);
  memcpy(c->h2, m + 12, 32);
  memcpy(c->zid, m + 44, 12);
  c->hash = zrtp_alg_from_block(ZA_HASH, m + 56);
  c->cipher = zrtp_alg_from_block(ZA_CIPHER, m + 60);
  c->auth = zrtp_alg_from_block(ZA_AUTH, m + 64);
  c->ka = zrtp_alg_from_block(ZA_KA, m + 68);
  c->sas = zrtp_alg_from_block(ZA_SAS, m + 72);
  if (memcmp(m + 68, "Mult", 4) == 0) {
    if (len != ZRTP_COMMIT_MULT_LEN)
      return -EBADMSG;
    memcpy(c->nonce, m + 76, 16);
  } else if (memcmp(m + 68, "Prsh", 4) == 0) {
    if (len != ZRTP_COMMIT_MULT_LEN + 8)
      return -EBADMSG;
  } else {
    /* a DH commit, known type or not; KEM commits carry more and are
     * refused here */
    if (len != ZRTP_COMMIT_DH_LEN)
      return -EBADMSG;
    memcpy(c->hvi, m + 76, 32);
  }
  return 0;
}

size_t zrtp_build_commit(uint8_t *out, const uint8_t h2[32], const uint8_t h1[32],
                         const uint8_t zid[12], const unsigned alg[ZA_NCLASS],
                         const uint8_t *hvi_or_nonce)
{
  bool mult = alg[ZA_KA] == URTP_ZRTP_KA_MULT;
  size_t len = mult ? ZRTP_COMMIT_MULT_LEN : ZRTP_COMMIT_DH_LEN;
  memset(out, 0, len);
  zrtp_msg_header(out, len, ZT_COMMIT);
  memcpy(out + 12, h2, 32);
  memcpy(out + 44, zid, 12);
  for (int c = 0; c < ZA_NCLASS; c++)
    memcpy(out + 56 + 4 * c, zrtp_alg_name((zrtp_alg_class_t)c, alg[c]), 4);
  memcpy(out + 76, hvi_or_nonce, mult ? 16 : 32);
  put_mac(out, len, h1);
  return len;
}

/* ---- DHPart1 / DHPart2 ---- */

int zrtp_parse_dhpart(const uint8_t *m, size_t len, size_t pv_len, zrtp_dhpart_t *d)
{
  if (pv_len == 0 || len != ZRTP_DHPART_FIXED + pv_len)
    return -EBADMSG;
  memcpy(d->h1, m + 12, 32);
  memcpy(d->rs1id, m + 44, 8);
  memcpy(d->rs2id, m + 52, 8);
  memcpy(d->auxid, m + 60, 8);
  memcpy(d->pbxid, m + 68, 8);
  d->pv = m + 76;
  d->pv_len = pv_len;
  return 0;
}

size_t zrtp_build_dhpart(uint8_t *out, zrtp_type_t type, const uint8_t h1[32],
                         const uint8_t h0[32], const uint8_t ids[4][8], const uint8_t *pv,
                         size_t pv_len)
{
  size_t len = ZRTP_DHPART_FIXED + pv_len;
  zrtp_msg_header(out, len, type);
  memcpy(out + 12, h1, 32);
  for (int i = 0; i < 4; i++)
    memcpy(out + 44 + 8 * i, ids[i], 8);
  memcpy(out + 76, pv, pv_len);
  put_mac(out, len, h0);
  return len;
}

/* ---- Confirm1 / Confirm2 ---- */

int zrtp_parse_confirm(const uint8_t *m, size_t len, zrtp_confirm_t *c)
{
  if (len < ZRTP_CONFIRM_MIN || len > ZRTP_MAX_MSG)
    return -EBADMSG;
  c->mac = m + 12;
  c->iv = m + 20;
  c->enc = m + 36;
  c->enc_len = len - 36;
  return 0;
}

/* Plaintext: H0 (8 words), 15 unused bits, signature length (9 bits), 4
 * unused bits, flags E V A D, cache expiration interval, signature. */
int zrtp_parse_confirm_plain(const uint8_t *p, size_t len, zrtp_confirm_plain_t *c)
{
  if (len < ZRTP_CONFIRM_PLAIN)
    return -EBADMSG;
  memcpy(c->h0, p, 32);
  c->sig_len = (unsigned)(p[33] & 1) << 8 | p[34];
  c->e = (p[35] & 8) != 0;
  c->v = (p[35] & 4) != 0;
  c->a = (p[35] & 2) != 0;
  c->d = (p[35] & 1) != 0;
  c->cache_expiry = urtp_rd32(p + 36);
  if (len != ZRTP_CONFIRM_PLAIN + 4 * (size_t)c->sig_len)
    return -EBADMSG;
  return 0;
}

int zrtp_build_confirm(uint8_t *out, size_t *out_len, zrtp_type_t type, const uint8_t h0[32],
                       bool v, uint32_t cache_expiry, const uint8_t *zrtpkey, size_t key_len,
                       const uint8_t mackey[32], const uint8_t iv[16])
{
  size_t len = ZRTP_CONFIRM_MIN;
  uint8_t plain[ZRTP_CONFIRM_PLAIN] = {0};
  memcpy(plain, h0, 32);
  plain[35] = v ? 4 : 0;  /* E, A, D clear: no PBX enrolment, no clear mode, no disclosure */
  urtp_wr32(plain + 36, cache_expiry);
  zrtp_msg_header(out, len, type);
  memcpy(out + 20, iv, 16);
  int rc = zrtp_aes_cfb(true, zrtpkey, key_len, iv, plain, out + 36, sizeof plain);
  zrtp_wipe(plain, sizeof plain);
  if (rc)
    return rc;
  uint8_t mac[32];
  zrtp_hmac(mackey, 32, out + 36, sizeof plain, mac);
  memcpy(out + 12, mac, 8);
  *out_len = len;
  return 0;
}

/* ---- the rest ---- */

size_t zrtp_build_simple(uint8_t *out, zrtp_type_t type)
{
  zrtp_msg_header(out, ZRTP_ACK_LEN, type);
  return ZRTP_ACK_LEN;
}

int zrtp_parse_error(const uint8_t *m, size_t len, uint32_t *code)
{
  if (len != ZRTP_ERROR_LEN)
    return -EBADMSG;
  *code = urtp_rd32(m + 12);
  return 0;
}

size_t zrtp_build_error(uint8_t *out, uint32_t code)
{
  zrtp_msg_header(out, ZRTP_ERROR_LEN, ZT_ERROR);
  urtp_wr32(out + 12, code);
  return ZRTP_ERROR_LEN;
}
