/* SPDX-License-Identifier: BSD-2-Clause */
#include "zrtp_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/obj_mac.h>
#include <openssl/rand.h>

/* ---- algorithm names (section 5.1.2 .. 5.1.6) ---- */

static const char *const alg_blocks[ZA_NCLASS][4] = {
  [ZA_HASH] = {NULL, "S256"},
  [ZA_CIPHER] = {NULL, "AES1", "AES3"},
  [ZA_AUTH] = {NULL, "HS32", "HS80"},
  [ZA_KA] = {NULL, "DH3k", "EC25", "Mult"},
  [ZA_SAS] = {NULL, "B32 ", "B256"},
};

const char *zrtp_alg_name(zrtp_alg_class_t c, unsigned id)
{
  if ((unsigned)c >= ZA_NCLASS || id == 0 || id >= 4)
    return NULL;
  return alg_blocks[c][id];
}

unsigned zrtp_alg_from_block(zrtp_alg_class_t c, const uint8_t blk[4])
{
  for (unsigned id = 1; id < 4; id++) {
    const char *n = alg_blocks[c][id];
    if (n && memcmp(n, blk, 4) == 0)
      return id;
  }
  return 0;
}

/* ---- CRC-32C ---- */

uint32_t urtp_zrtp_crc32c(const uint8_t *buf, size_t len)
{
  /* Bitwise: ZRTP packets are a few hundred bytes, a handful per call. */
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < len; i++) {
    crc ^= buf[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/* ---- hashes, MACs, KDF ---- */

void zrtp_sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
  unsigned int olen = 32;
  if (!EVP_Digest(p, n, out, &olen, EVP_sha256(), NULL))
    memset(out, 0, 32);  /* cannot happen with the default provider */
}

int zrtp_sha256_cat(uint8_t out[32], const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                    const uint8_t *c, size_t cn, const uint8_t *d, size_t dn)
{
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  unsigned int olen = 32;
  int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
           (!a || EVP_DigestUpdate(ctx, a, an)) && (!b || EVP_DigestUpdate(ctx, b, bn)) &&
           (!c || EVP_DigestUpdate(ctx, c, cn)) && (!d || EVP_DigestUpdate(ctx, d, dn)) &&
           EVP_DigestFinal_ex(ctx, out, &olen);
  EVP_MD_CTX_free(ctx);
  return ok ? 0 : -EIO;
}

void zrtp_hmac(const uint8_t *key, size_t klen, const uint8_t *p, size_t n, uint8_t out[32])
{
  unsigned int olen = 32;
  if (!HMAC(EVP_sha256(), key, (int)klen, p, n, out, &olen))
    memset(out, 0, 32);
}

bool zrtp_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
  return CRYPTO_memcmp(a, b, n) == 0;
}

void zrtp_wipe(void *p, size_t n)
{
  OPENSSL_cleanse(p, n);
}

int urtp_zrtp_kdf(const uint8_t *ki, size_t ki_len, const char *label,
                  const uint8_t *context, size_t context_len, uint8_t *out, size_t out_len)
{
  if (!ki || !label || (!context && context_len) || !out || out_len == 0 || out_len > 32)
    return -EINVAL;
  size_t llen = strlen(label);
  if (llen > 64 || context_len > 256)
    return -EINVAL;
  /* i || Label || 0x00 || Context || L, all lengths 32-bit big-endian */
  uint8_t buf[4 + 64 + 1 + 256 + 4];
  size_t o = 0;
  buf[o++] = 0, buf[o++] = 0, buf[o++] = 0, buf[o++] = 1;
  memcpy(buf + o, label, llen);
  o += llen;
  buf[o++] = 0;
  if (context_len)
    memcpy(buf + o, context, context_len);
  o += context_len;
  uint32_t bits = (uint32_t)out_len * 8;
  buf[o++] = (uint8_t)(bits >> 24);
  buf[o++] = (uint8_t)(bits >> 16);
  buf[o++] = (uint8_t)(bits >> 8);
  buf[o++] = (uint8_t)bits;
  uint8_t mac[32];
  unsigned int mlen = 32;
  if (!HMAC(EVP_sha256(), ki, (int)ki_len, buf, o, mac, &mlen))
    return -EIO;
  memcpy(out, mac, out_len);
  zrtp_wipe(mac, sizeof mac);
  zrtp_wipe(buf, sizeof buf);
  return 0;
}

/* ---- AES-CFB (Confirm messages, section 5.7) ---- */

int zrtp_aes_cfb(bool encrypt, const uint8_t *key, size_t key_len, const uint8_t iv[16],
                 const uint8_t *in, uint8_t *out, size_t len)
{
  const EVP_CIPHER *c = key_len == 16 ? EVP_aes_128_cfb128() : key_len == 32 ? EVP_aes_256_cfb128()
                                                                             : NULL;
  if (!c || len > 1024)
    return -EINVAL;
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  int outl = 0, fl = 0;
  int ok = ctx && EVP_CipherInit_ex(ctx, c, NULL, key, iv, encrypt ? 1 : 0) &&
           EVP_CipherUpdate(ctx, out, &outl, in, (int)len) &&
           EVP_CipherFinal_ex(ctx, out + outl, &fl) && (size_t)(outl + fl) == len;
  EVP_CIPHER_CTX_free(ctx);
  return ok ? 0 : -EIO;
}

int zrtp_rand(zrtp_rng_fn rng, void *user, uint8_t *buf, size_t len)
{
  if (rng)
    return rng(user, buf, len) == 0 ? 0 : -EIO;
  return RAND_bytes(buf, (int)len) == 1 ? 0 : -EIO;
}

/* ---- DH3k and EC25 (section 5.1.5) ---- */

size_t zrtp_ka_pv_len(unsigned ka)
{
  return ka == URTP_ZRTP_KA_DH3K ? ZRTP_DH3K_PV : ka == URTP_ZRTP_KA_EC25 ? ZRTP_EC25_PV : 0;
}

void zrtp_kp_clear(zrtp_kp_t *kp)
{
  BN_clear_free(kp->priv);
  kp->priv = NULL;
  kp->ka = 0;
  kp->pv_len = 0;
}

/* A secret of 2x the longest AES key (AES3): 512 bits for DH3k, as 5.1.5
 * asks; for P-256 a scalar in [1, n-1] from 320 random bits (bias < 2^-64). */
static BIGNUM *random_bn(size_t bytes, zrtp_rng_fn rng, void *user)
{
  uint8_t r[64];
  if (bytes > sizeof r || zrtp_rand(rng, user, r, bytes) != 0)
    return NULL;
  BIGNUM *x = BN_secure_new();
  if (x && !BN_bin2bn(r, (int)bytes, x)) {
    BN_clear_free(x);
    x = NULL;
  }
  zrtp_wipe(r, sizeof r);
  return x;
}

static int dh3k_generate(zrtp_kp_t *kp, zrtp_rng_fn rng, void *user)
{
  int rc = -EIO;
  BN_CTX *ctx = BN_CTX_new();
  BIGNUM *p = BN_get_rfc3526_prime_3072(NULL), *g = BN_new(), *y = BN_new();
  BIGNUM *x = random_bn(64, rng, user);
  if (!ctx || !p || !g || !y || !x || !BN_set_word(g, 2))
    goto out;
  BN_set_flags(x, BN_FLG_CONSTTIME);
  if (!BN_mod_exp_mont_consttime(y, g, x, p, ctx, NULL))
    goto out;
  if (BN_bn2binpad(y, kp->pv, ZRTP_DH3K_PV) != ZRTP_DH3K_PV)
    goto out;
  kp->priv = x;
  x = NULL;
  kp->pv_len = ZRTP_DH3K_PV;
  rc = 0;
out:
  BN_clear_free(x);
  BN_free(y);
  BN_free(g);
  BN_free(p);
  BN_CTX_free(ctx);
  return rc;
}

static int dh3k_agree(const zrtp_kp_t *kp, const uint8_t *peer, uint8_t *out)
{
  int rc = -EIO;
  BN_CTX *ctx = BN_CTX_new();
  BIGNUM *p = BN_get_rfc3526_prime_3072(NULL), *y = BN_new(), *pm1 = BN_new(), *z = BN_new();
  if (!ctx || !p || !y || !pm1 || !z || !BN_bin2bn(peer, ZRTP_DH3K_PV, y) || !BN_copy(pm1, p) ||
      !BN_sub_word(pm1, 1))
    goto out;
  /* section 4.4.1.1: refuse 0, 1, p-1 (and anything not reduced mod p) */
  if (BN_cmp(y, BN_value_one()) <= 0 || BN_cmp(y, pm1) >= 0) {
    rc = -EINVAL;
    goto out;
  }
  if (!BN_mod_exp_mont_consttime(z, y, kp->priv, p, ctx, NULL) ||
      BN_bn2binpad(z, out, ZRTP_DH3K_PV) != ZRTP_DH3K_PV)
    goto out;
  rc = 0;
out:
  BN_clear_free(z);
  BN_free(pm1);
  BN_free(y);
  BN_free(p);
  BN_CTX_free(ctx);
  return rc;
}

static int ec25_generate(zrtp_kp_t *kp, zrtp_rng_fn rng, void *user)
{
  int rc = -EIO;
  BN_CTX *ctx = BN_CTX_new();
  EC_GROUP *grp = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
  EC_POINT *pub = grp ? EC_POINT_new(grp) : NULL;
  BIGNUM *nm1 = BN_new(), *x = BN_new(), *y = BN_new();
  BIGNUM *d = random_bn(40, rng, user);
  if (!ctx || !grp || !pub || !nm1 || !x || !y || !d || !BN_copy(nm1, EC_GROUP_get0_order(grp)) ||
      !BN_sub_word(nm1, 1) || !BN_nnmod(d, d, nm1, ctx) || !BN_add_word(d, 1))
    goto out;
  BN_set_flags(d, BN_FLG_CONSTTIME);
  if (!EC_POINT_mul(grp, pub, d, NULL, NULL, ctx) ||
      !EC_POINT_get_affine_coordinates(grp, pub, x, y, ctx) || BN_bn2binpad(x, kp->pv, 32) != 32 ||
      BN_bn2binpad(y, kp->pv + 32, 32) != 32)
    goto out;
  kp->priv = d;
  d = NULL;
  kp->pv_len = ZRTP_EC25_PV;
  rc = 0;
out:
  BN_clear_free(d);
  BN_free(y);
  BN_free(x);
  BN_free(nm1);
  EC_POINT_free(pub);
  EC_GROUP_free(grp);
  BN_CTX_free(ctx);
  return rc;
}

static int ec25_agree(const zrtp_kp_t *kp, const uint8_t *peer, uint8_t *out)
{
  int rc = -EIO;
  BN_CTX *ctx = BN_CTX_new();
  EC_GROUP *grp = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
  EC_POINT *q = grp ? EC_POINT_new(grp) : NULL, *s = grp ? EC_POINT_new(grp) : NULL;
  BIGNUM *fp = BN_new(), *x = BN_new(), *y = BN_new(), *sx = BN_new();
  if (!ctx || !grp || !q || !s || !fp || !x || !y || !sx ||
      !EC_GROUP_get_curve(grp, fp, NULL, NULL, ctx) || !BN_bin2bn(peer, 32, x) ||
      !BN_bin2bn(peer + 32, 32, y))
    goto out;
  /* the peer's point must be a point of the curve: coordinates reduced,
   * on the curve, not infinity (NIST SP 800-56A 5.6.2.3) */
  if (BN_cmp(x, fp) >= 0 || BN_cmp(y, fp) >= 0 ||
      !EC_POINT_set_affine_coordinates(grp, q, x, y, ctx) ||
      EC_POINT_is_on_curve(grp, q, ctx) != 1 || EC_POINT_is_at_infinity(grp, q)) {
    ERR_clear_error();  /* set_affine_coordinates queues one for off-curve points */
    rc = -EINVAL;
    goto out;
  }
  if (!EC_POINT_mul(grp, s, NULL, q, kp->priv, ctx) || EC_POINT_is_at_infinity(grp, s) ||
      !EC_POINT_get_affine_coordinates(grp, s, sx, NULL, ctx) || BN_bn2binpad(sx, out, 32) != 32)
    goto out;
  rc = 0;
out:
  BN_clear_free(sx);
  BN_free(y);
  BN_free(x);
  BN_free(fp);
  EC_POINT_clear_free(s);
  EC_POINT_free(q);
  EC_GROUP_free(grp);
  BN_CTX_free(ctx);
  return rc;
}

int zrtp_kp_generate(zrtp_kp_t *kp, unsigned ka, zrtp_rng_fn rng, void *user)
{
  zrtp_kp_clear(kp);
  int rc = ka == URTP_ZRTP_KA_DH3K ? dh3k_generate(kp, rng, user)
         : ka == URTP_ZRTP_KA_EC25 ? ec25_generate(kp, rng, user)
                                   : -EINVAL;
  if (rc == 0)
    kp->ka = ka;
  return rc;
}

int zrtp_kp_agree(const zrtp_kp_t *kp, const uint8_t *peer_pv, size_t pv_len, uint8_t *out,
                  size_t *out_len)
{
  if (!kp->priv || pv_len != kp->pv_len)
    return -EINVAL;
  if (kp->ka == URTP_ZRTP_KA_DH3K) {
    *out_len = ZRTP_DH3K_PV;
    return dh3k_agree(kp, peer_pv, out);
  }
  *out_len = 32;
  return ec25_agree(kp, peer_pv, out);
}

/* ---- SAS rendering (section 5.1.6) ---- */

/* The PGP word list (Juola, Zimmermann): two-syllable words for even
 * offsets, three-syllable words for odd offsets. */
static const char *const pgp_even[256] = {
  "aardvark", "absurd", "accrue", "acme", "adrift", "adult", "afflict", "ahead",
  "aimless", "Algol", "allow", "alone", "ammo", "ancient", "apple", "artist",
  "assume", "Athens", "atlas", "Aztec", "baboon", "backfield", "backward", "banjo",
  "beaming", "bedlamp", "beehive", "beeswax", "befriend", "Belfast", "berserk", "billiard",
  "bison", "blackjack", "blockade", "blowtorch", "bluebird", "bombast", "bookshelf", "brackish",
  "breadline", "breakup", "brickyard", "briefcase", "Burbank", "button", "buzzard", "cement",
  "chairlift", "chatter", "checkup", "chisel", "choking", "chopper", "Christmas", "clamshell",
  "classic", "classroom", "cleanup", "clockwork", "cobra", "commence", "concert", "cowbell",
  "crackdown", "cranky", "crowfoot", "crucial", "crumpled", "crusade", "cubic", "dashboard",
  "deadbolt", "deckhand", "dogsled", "dragnet", "drainage", "dreadful", "drifter", "dropper",
  "drumbeat", "drunken", "Dupont", "dwelling", "eating", "edict", "egghead", "eightball",
  "endorse", "endow", "enlist", "erase", "escape", "exceed", "eyeglass", "eyetooth",
  "facial", "fallout", "flagpole", "flatfoot", "flytrap", "fracture", "framework", "freedom",
  "frighten", "gazelle", "Geiger", "glitter", "glucose", "goggles", "goldfish", "gremlin",
  "guidance", "hamlet", "highchair", "hockey", "indoors", "indulge", "inverse", "involve",
  "island", "jawbone", "keyboard", "kickoff", "kiwi", "klaxon", "locale", "lockup",
  "merit", "minnow", "miser", "Mohawk", "mural", "music", "necklace", "Neptune",
  "newborn", "nightbird", "Oakland", "obtuse", "offload", "optic", "orca", "payday",
  "peachy", "pheasant", "physique", "playhouse", "Pluto", "preclude", "prefer", "preshrunk",
  "printer", "prowler", "pupil", "puppy", "python", "quadrant", "quiver", "quota",
  "ragtime", "ratchet", "rebirth", "reform", "regain", "reindeer", "rematch", "repay",
  "retouch", "revenge", "reward", "rhythm", "ribcage", "ringbolt", "robust", "rocker",
  "ruffled", "sailboat", "sawdust", "scallion", "scenic", "scorecard", "Scotland", "seabird",
  "select", "sentence", "shadow", "shamrock", "showgirl", "skullcap", "skydive", "slingshot",
  "slowdown", "snapline", "snapshot", "snowcap", "snowslide", "solo", "southward", "soybean",
  "spaniel", "spearhead", "spellbind", "spheroid", "spigot", "spindle", "spyglass", "stagehand",
  "stagnate", "stairway", "standard", "stapler", "steamship", "sterling", "stockman", "stopwatch",
  "stormy", "sugar", "surmount", "suspense", "sweatband", "swelter", "tactics", "talon",
  "tapeworm", "tempest", "tiger", "tissue", "tonic", "topmost", "tracker", "transit",
  "trauma", "treadmill", "Trojan", "trouble", "tumor", "tunnel", "tycoon", "uncut",
  "unearth", "unwind", "uproot", "upset", "upshot", "vapor", "village", "virus",
  "Vulcan", "waffle", "wallet", "watchword", "wayside", "willow", "woodlark", "Zulu",
};

static const char *const pgp_odd[256] = {
  "adroitness", "adviser", "aftermath", "aggregate", "alkali", "almighty", "amulet", "amusement",
  "antenna", "applicant", "Apollo", "armistice", "article", "asteroid", "Atlantic", "atmosphere",
  "autopsy", "Babylon", "backwater", "barbecue", "belowground", "bifocals", "bodyguard", "bookseller",
  "borderline", "bottomless", "Bradbury", "bravado", "Brazilian", "breakaway", "Burlington", "businessman",
  "butterfat", "Camelot", "candidate", "cannonball", "Capricorn", "caravan", "caretaker", "celebrate",
  "cellulose", "certify", "chambermaid", "Cherokee", "Chicago", "clergyman", "coherence", "combustion",
  "commando", "company", "component", "concurrent", "confidence", "conformist", "congregate", "consensus",
  "consulting", "corporate", "corrosion", "councilman", "crossover", "crucifix", "cumbersome", "customer",
  "Dakota", "decadence", "December", "decimal", "designing", "detector", "detergent", "determine",
  "dictator", "dinosaur", "direction", "disable", "disbelief", "disruptive", "distortion", "document",
  "embezzle", "enchanting", "enrollment", "enterprise", "equation", "equipment", "escapade", "Eskimo",
  "everyday", "examine", "existence", "exodus", "fascinate", "filament", "finicky", "forever",
  "fortitude", "frequency", "gadgetry", "Galveston", "getaway", "glossary", "gossamer", "graduate",
  "gravity", "guitarist", "hamburger", "Hamilton", "handiwork", "hazardous", "headwaters", "hemisphere",
  "hesitate", "hideaway", "holiness", "hurricane", "hydraulic", "impartial", "impetus", "inception",
  "indigo", "inertia", "infancy", "inferno", "informant", "insincere", "insurgent", "integrate",
  "intention", "inventive", "Istanbul", "Jamaica", "Jupiter", "leprosy", "letterhead", "liberty",
  "maritime", "matchmaker", "maverick", "Medusa", "megaton", "microscope", "microwave", "midsummer",
  "millionaire", "miracle", "misnomer", "molasses", "molecule", "Montana", "monument", "mosquito",
  "narrative", "nebula", "newsletter", "Norwegian", "October", "Ohio", "onlooker", "opulent",
  "Orlando", "outfielder", "Pacific", "pandemic", "Pandora", "paperweight", "paragon", "paragraph",
  "paramount", "passenger", "pedigree", "Pegasus", "penetrate", "perceptive", "performance", "pharmacy",
  "phonetic", "photograph", "pioneer", "pocketful", "politeness", "positive", "potato", "processor",
  "provincial", "proximate", "puberty", "publisher", "pyramid", "quantity", "racketeer", "rebellion",
  "recipe", "recover", "repellent", "replica", "reproduce", "resistor", "responsive", "retraction",
  "retrieval", "retrospect", "revenue", "revival", "revolver", "sandalwood", "sardonic", "Saturday",
  "savagery", "scavenger", "sensation", "sociable", "souvenir", "specialist", "speculate", "stethoscope",
  "stupendous", "supportive", "surrender", "suspicious", "sympathy", "tambourine", "telephone", "therapist",
  "tobacco", "tolerance", "tomorrow", "torpedo", "tradition", "travesty", "trombonist", "truncated",
  "typewriter", "ultimate", "undaunted", "underfoot", "unicorn", "unify", "universe", "unravel",
  "upcoming", "vacancy", "vagabond", "vertigo", "Virginia", "visitor", "vocalist", "voyager",
  "warranty", "Waterloo", "whimsical", "Wichita", "Wilmington", "Wyoming", "yesteryear", "Yucatan",
};

int urtp_zrtp_sas_render(urtp_zrtp_sas_t type, uint32_t v, char *buf, size_t buf_len)
{
  if (!buf)
    return -EINVAL;
  if (type == URTP_ZRTP_SAS_B32) {
    static const char alphabet[] = "ybndrfg8ejkmcpqxot1uwisza345h769";
    if (buf_len < 5)
      return -ENOSPC;
    for (int i = 0; i < 4; i++)
      buf[i] = alphabet[(v >> (27 - 5 * i)) & 31];
    buf[4] = '\0';
    return 4;
  }
  if (type == URTP_ZRTP_SAS_B256) {
    int n = snprintf(buf, buf_len, "%s %s", pgp_even[v >> 24], pgp_odd[(v >> 16) & 0xff]);
    if (n < 0 || (size_t)n >= buf_len)
      return -ENOSPC;
    return n;
  }
  return -EINVAL;
}
