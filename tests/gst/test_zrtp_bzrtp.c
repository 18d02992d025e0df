/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The elements' ZRTP against an independent implementation: Belledonne's
 * bzrtp (Debian's libbzrtp-dev), bridged to a real UDP socket on loopback.
 *
 * bzrtp is GPL: it is linked into this test program only, never into lib/
 * or the plugin. It is driven through its public API from one thread of
 * this program (the "bridge"): datagrams read from its socket go to
 * bzrtp_processMessage, its sendData callback writes to the socket,
 * bzrtp_iterate runs its timers on a real millisecond clock. It offers DH3k
 * only, so the exchange is DH3k whatever the elements prefer.
 *
 * Once bzrtp is secure the bridge uses the SRTP keys bzrtp derived with
 * lib/urtp/srtp.h: media from the element is unprotected with bzrtp's
 * receiving key and depacketised with lib/urtp/depay.h; media to the
 * element is packetised with lib/urtp/pay.h and protected with bzrtp's
 * sending key. The two directions use different keys (RFC 6189 section
 * 4.5.3: the initiator's and the responder's), so a packet that also
 * authenticated with the other direction's key would mean a key mix-up:
 * the first packets are tried with it and must fail.
 *
 * Cases:
 *  - uvgrtpzrtp between rtph265pay / udpsink and udpsrc / rtph265depay,
 *    both directions at once;
 *  - uvgrtpsink zrtp=true sending a live x265 stream to the bridge;
 *  - the bridge sending known x265 access units to uvgrtpsrc zrtp=true.
 * Each checks: both sides secure with DH3k, every ZRTP packet of the
 * element accepted by bzrtp (late repetitions aside), the SAS bzrtp renders
 * equal to the element's (property and bus message), the roles opposite,
 * the peer ZID the one in bzrtp's Hello, the access units byte for byte
 * (NAL units equal, start codes aside), no unprotect failure and no media
 * in clear. Where the element sends, bzrtp stays silent until a few access
 * units went in, which the element must drop; it is secure for all the
 * others (they wait for it), and each of those must arrive.
 * The sink and src cases skip (pass, with a note) when the elements have no
 * `zrtp` property.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>

#include <openssl/crypto.h>

#include <bzrtp/bzrtp.h>

#include "urtp/depay.h"
#include "urtp/pay.h"
#include "urtp/srtp.h"

#include "testutil.h"

/* Live frames sent by the element under test (30 fps). */
#define LIVE_FRAMES 60
/* Known access units the bridge sends. */
#define KNOWN_FRAMES 30
#define PT 96
/* Access units the element under test gets before bzrtp answers at all:
 * they must be dropped, not sent in clear. */
#define BEFORE_ZRTP 3
#define BRIDGE_SSRC 0xB2B2B2B2u
/* bzrtp_processMessage's answers that only mean "late or repeated"
 * (bzrtp's parser codes, from its packetParser.h, which is not installed):
 * anything else (CRC, lengths, MAC, hash chain, hvi) is an interop fault */
#define BZ_OUT_OF_ORDER 0xa004
#define BZ_UNEXPECTED 0xa200
/* Bounds on waiting; they only end a broken run, nothing is timed. */
#define EXCHANGE_TIMEOUT_MS 30000
#define DRAIN_TIMEOUT_MS 10000

#define ENC_CAPS "video/x-raw,width=160,height=96,framerate=30/1,format=I420"
#define H265_AU "video/x-h265,stream-format=byte-stream,alignment=au"
#define X265 "x265enc speed-preset=ultrafast tune=zerolatency key-int-max=30 " \
    "! h265parse ! " H265_AU

static guint64
mono_ms (void)
{
  return (guint64) (g_get_monotonic_time () / 1000);
}

static gboolean
is_zrtp (const guint8 * p, gsize len)
{
  return len >= 28 && (p[0] & 0xf0) == 0x10 && memcmp (p + 4, "ZRTP", 4) == 0;
}

static gboolean
is_zrtp_type (const guint8 * p, gsize len, const gchar * type)
{
  /* packet header 12, preamble 2, length 2, then the 8-character type */
  return is_zrtp (p, len) && memcmp (p + 16, type, 8) == 0;
}

static gchar *
hex (const guint8 * p, gsize n)
{
  gchar *s = g_malloc (2 * n + 1);
  for (gsize i = 0; i < n; i++)
    g_snprintf (s + 2 * i, 3, "%02x", p[i]);
  return s;
}

/* ------------------------------------------------------------------------ */
/* Access units compared NAL unit by NAL unit                               */

typedef struct
{
  const guint8 *data;
  gsize len;
} Nal;

/* Annex-B split: start code 00 00 01 (a leading 00 makes the 4-byte one);
 * zero bytes before a start code belong to no NAL unit. */
static GArray *
split_annexb (const guint8 * p, gsize n)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (Nal));
  gsize i = 0, start = G_MAXSIZE;

  while (i + 3 <= n) {
    if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1) {
      if (start != G_MAXSIZE) {
        gsize end = i;
        while (end > start && p[end - 1] == 0)
          end--;
        if (end > start) {
          Nal nal = { p + start, end - start };
          g_array_append_val (out, nal);
        }
      }
      i += 3;
      start = i;
    } else {
      i++;
    }
  }
  if (start != G_MAXSIZE && start < n) {
    Nal nal = { p + start, n - start };
    g_array_append_val (out, nal);
  }
  return out;
}

/* The NAL units of got equal those of want from index `from` on (0: all of
 * them). Returns a description of the first difference, or NULL. */
static gchar *
au_diff (GBytes * got, GBytes * want, guint from)
{
  gsize gl, wl;
  const guint8 *gp = g_bytes_get_data (got, &gl);
  const guint8 *wp = g_bytes_get_data (want, &wl);
  GArray *g = split_annexb (gp, gl), *w = split_annexb (wp, wl);
  gchar *why = NULL;

  if (g->len == 0)
    why = g_strdup ("no NAL unit");
  else if (w->len < from || g->len != w->len - from)
    why = g_strdup_printf ("%u NAL units, expected %u", g->len,
        w->len - MIN (from, w->len));
  for (guint i = 0; !why && i < g->len; i++) {
    Nal *a = &g_array_index (g, Nal, i), *b = &g_array_index (w, Nal, i + from);
    if (a->len != b->len || memcmp (a->data, b->data, a->len) != 0)
      why = g_strdup_printf ("NAL unit %u (type %u): %" G_GSIZE_FORMAT
          " bytes, expected %" G_GSIZE_FORMAT " (type %u)%s", i,
          (a->data[0] >> 1) & 0x3f, a->len, b->len, (b->data[0] >> 1) & 0x3f,
          a->len == b->len ? ", contents differ" : "");
  }
  g_array_unref (g);
  g_array_unref (w);
  return why;
}

/* got is a proper tail of want: its NAL units are want's last ones. */
static gboolean
au_is_tail (GBytes * got, GBytes * want)
{
  gsize gl, wl;
  const guint8 *gp = g_bytes_get_data (got, &gl);
  const guint8 *wp = g_bytes_get_data (want, &wl);
  GArray *g = split_annexb (gp, gl), *w = split_annexb (wp, wl);
  gboolean ok = g->len > 0 && g->len < w->len;
  gchar *why;

  g_array_unref (w);
  if (ok) {
    w = split_annexb (wp, wl);
    why = au_diff (got, want, w->len - g->len);
    ok = why == NULL;
    g_free (why);
    g_array_unref (w);
  }
  g_array_unref (g);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* The bzrtp peer on a UDP socket                                           */

typedef struct
{
  GMutex lock;
  GThread *thread;
  gint stop;
  /* while set, datagrams are dropped unseen and bzrtp does not start */
  gint hold;
  guint held;

  int fd;
  guint16 port;
  struct sockaddr_in peer;
  gboolean have_peer;
  /* case of the sink: the peer's address is that of its first datagram,
   * and bzrtp starts when it arrives */
  gboolean start_on_first;

  bzrtpContext_t *ctx;
  gboolean engine_started;
  guint8 sas_type;              /* the SAS rendering bzrtp prefers */

  /* what bzrtp told its client (under lock) */
  gboolean have_tx, have_rx, secure, error;
  guint8 tx_key[URTP_SRTP_MAX_KEY_LEN], rx_key[URTP_SRTP_MAX_KEY_LEN];
  gsize tx_len, rx_len;
  guint8 cipher, auth, ka, sas_algo;
  gchar sas[64];
  guint8 zid[12];               /* from bzrtp's own Hello */
  gboolean have_zid;
  guint confirm1_sent, confirm2_sent;
  guint zrtp_in, zrtp_out;
  guint bz_late;                /* refused as late or repeated */
  guint bz_refused;             /* refused otherwise */
  gchar bz_refused_what[64];

  /* media from the element */
  urtp_srtp_profile_t profile;
  urtp_srtp_t rx, rx_other;     /* bzrtp's receiving key; its sending key */
  gboolean rx_ready;
  GPtrArray *early;             /* GBytes: media before the receiving key */
  urtp_depay_t *depay;
  GPtrArray *aus;               /* GBytes: access units depacketised */
  guint64 media_in, early_media, unprotected, auth_fail, replay, other_fail;
  guint other_tried, other_ok;  /* tries with the sending key */

  /* media to the element */
  GPtrArray *to_send;           /* GBytes, borrowed */
  guint sent_aus;
  guint64 sent_pkts;
  gboolean tx_ready;
  urtp_srtp_t tx;
  urtp_pay_t pay;
  urtp_batch_t batch;
} Bridge;

static int
bz_send (void *cd, const uint8_t * pkt, uint16_t len)
{
  Bridge *b = cd;

  g_mutex_lock (&b->lock);
  b->zrtp_out++;
  if (is_zrtp_type (pkt, len, "Confirm1"))
    b->confirm1_sent++;
  if (is_zrtp_type (pkt, len, "Confirm2"))
    b->confirm2_sent++;
  /* Hello: version 4, client id 16, H3 32 after the type, then the ZID */
  if (is_zrtp_type (pkt, len, "Hello   ") && len >= 12 + 64 + 12) {
    memcpy (b->zid, pkt + 76, 12);
    b->have_zid = TRUE;
  }
  g_mutex_unlock (&b->lock);
  if (!b->have_peer)
    return 0;                   /* lost, as on a network: bzrtp resends */
  return sendto (b->fd, pkt, len, 0, (const struct sockaddr *) &b->peer,
      sizeof b->peer) == (ssize_t) len ? 0 : -1;
}

static int
bz_secrets (void *cd, const bzrtpSrtpSecrets_t * s, uint8_t part)
{
  Bridge *b = cd;

  g_mutex_lock (&b->lock);
  if ((part & ZRTP_SRTP_SECRETS_FOR_SENDER) && s->selfSrtpKeyLength <= 32
      && s->selfSrtpSaltLength == 14) {
    memcpy (b->tx_key, s->selfSrtpKey, s->selfSrtpKeyLength);
    memcpy (b->tx_key + s->selfSrtpKeyLength, s->selfSrtpSalt, 14);
    b->tx_len = s->selfSrtpKeyLength + 14;
    b->have_tx = TRUE;
  }
  if ((part & ZRTP_SRTP_SECRETS_FOR_RECEIVER) && s->peerSrtpKeyLength <= 32
      && s->peerSrtpSaltLength == 14) {
    memcpy (b->rx_key, s->peerSrtpKey, s->peerSrtpKeyLength);
    memcpy (b->rx_key + s->peerSrtpKeyLength, s->peerSrtpSalt, 14);
    b->rx_len = s->peerSrtpKeyLength + 14;
    b->have_rx = TRUE;
  }
  b->cipher = s->cipherAlgo;
  b->auth = s->authTagAlgo;
  b->ka = s->keyAgreementAlgo;
  g_mutex_unlock (&b->lock);
  return 0;
}

static int
bz_start (void *cd, const bzrtpSrtpSecrets_t * s, int32_t verified)
{
  Bridge *b = cd;

  (void) verified;
  g_mutex_lock (&b->lock);
  if (s->sas)
    g_strlcpy (b->sas, s->sas, sizeof b->sas);
  b->sas_algo = s->sasAlgo;
  b->secure = TRUE;
  g_mutex_unlock (&b->lock);
  return 0;
}

static int
bz_status (void *cd, const uint8_t level, const uint8_t id, const char *msg)
{
  (void) cd;
  g_print ("bzrtp message level %u id %u %s\n", level, id, msg ? msg : "");
  return 0;
}

static gboolean
bz_offers (bzrtpContext_t * ctx, uint8_t type, uint8_t algo)
{
  uint8_t t[7];
  uint8_t n = bzrtp_getSupportedCryptoTypes (ctx, type, t);

  for (uint8_t i = 0; i < n; i++)
    if (t[i] == algo)
      return TRUE;
  return FALSE;
}

/* The SRTP profile bzrtp agreed to, and what the elements call it. */
static gboolean
bz_profile (guint8 cipher, guint8 auth, urtp_srtp_profile_t * p)
{
  gboolean aes3 = cipher == ZRTP_CIPHER_AES3, hs32 = auth == ZRTP_AUTHTAG_HS32;

  if ((cipher != ZRTP_CIPHER_AES1 && !aes3) ||
      (auth != ZRTP_AUTHTAG_HS80 && !hs32))
    return FALSE;
  *p = aes3 ? (hs32 ? URTP_SRTP_AES_256_CM_HMAC_SHA1_32 :
      URTP_SRTP_AES_256_CM_HMAC_SHA1_80) :
      (hs32 ? URTP_SRTP_AES_CM_128_HMAC_SHA1_32 :
      URTP_SRTP_AES_CM_128_HMAC_SHA1_80);
  return TRUE;
}

/* One datagram of media from the element (bridge thread, lock held). */
static void
bridge_media_locked (Bridge * b, GBytes * pkt)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (pkt, &len);
  guint8 buf[2048];
  int n;
  urtp_au_t au;

  if (len > sizeof buf) {
    b->other_fail++;
    return;
  }
  /* the other direction's key must not authenticate it */
  if (b->other_tried < 4) {
    memcpy (buf, data, len);
    b->other_tried++;
    if (urtp_srtp_unprotect (&b->rx_other, buf, len) >= 0)
      b->other_ok++;
  }
  memcpy (buf, data, len);
  n = urtp_srtp_unprotect (&b->rx, buf, len);
  if (n < 0) {
    if (n == -EBADMSG)
      b->auth_fail++;
    else if (n == -EALREADY)
      b->replay++;
    else
      b->other_fail++;
    return;
  }
  b->unprotected++;
  urtp_depay_push (b->depay, buf, (size_t) n);
  while (urtp_depay_pop (b->depay, &au)) {
    g_ptr_array_add (b->aus, g_bytes_new_take (au.data, au.len));
  }
}

/* Sets up SRTP once bzrtp handed the keys (bridge thread). */
static void
bridge_keys (Bridge * b)
{
  urtp_srtp_config_t cfg = { 0 };

  g_mutex_lock (&b->lock);
  if (!b->rx_ready && b->have_rx && b->have_tx) {
    fail_unless (bz_profile (b->cipher, b->auth, &b->profile),
        "bzrtp chose cipher 0x%02x auth 0x%02x", b->cipher, b->auth);
    cfg.profile = b->profile;
    cfg.dir = URTP_SRTP_INBOUND;
    cfg.any_ssrc = true;
    cfg.replay_window = 1024;
    cfg.key = b->rx_key;
    cfg.key_len = b->rx_len;
    fail_unless_equals_int (urtp_srtp_init (&b->rx, &cfg), 0);
    cfg.key = b->tx_key;
    cfg.key_len = b->tx_len;
    fail_unless_equals_int (urtp_srtp_init (&b->rx_other, &cfg), 0);
    b->rx_ready = TRUE;
    for (guint i = 0; i < b->early->len; i++)
      bridge_media_locked (b, g_ptr_array_index (b->early, i));
    g_ptr_array_set_size (b->early, 0);
  }
  if (!b->tx_ready && b->secure && b->to_send) {
    cfg.profile = b->profile;
    cfg.dir = URTP_SRTP_OUTBOUND;
    cfg.any_ssrc = true;
    cfg.replay_window = 0;
    cfg.key = b->tx_key;
    cfg.key_len = b->tx_len;
    fail_unless_equals_int (urtp_srtp_init (&b->tx, &cfg), 0);
    b->tx_ready = TRUE;
  }
  g_mutex_unlock (&b->lock);
}

/* Packetises, protects and sends the next known access unit. */
static void
bridge_send_au (Bridge * b)
{
  gsize len;
  const guint8 *au = g_bytes_get_data (g_ptr_array_index (b->to_send,
          b->sent_aus), &len);
  guint8 buf[2048];

  urtp_batch_clear (&b->batch);
  fail_unless (urtp_pay_annexb (&b->pay, au, len, b->sent_aus * 3000u, true,
          &b->batch) > 0);
  for (size_t i = 0; i < b->batch.npkts; i++) {
    size_t n = urtp_batch_copy_pkt (&b->batch, i, buf, sizeof buf);
    int p;

    fail_unless (n > 0 && n + URTP_SRTP_MAX_TRAILER <= sizeof buf);
    p = urtp_srtp_protect (&b->tx, buf, n, sizeof buf);
    fail_unless (p > 0, "protect: %d", p);
    fail_unless (sendto (b->fd, buf, p, 0, (struct sockaddr *) &b->peer,
            sizeof b->peer) == p);
    b->sent_pkts++;
  }
  g_mutex_lock (&b->lock);
  b->sent_aus++;
  g_mutex_unlock (&b->lock);
}

static gpointer
bridge_run (gpointer data)
{
  Bridge *b = data;
  guint8 buf[65536];

  while (!g_atomic_int_get (&b->stop)) {
    struct pollfd pfd = {.fd = b->fd,.events = POLLIN };
    ssize_t len;
    struct sockaddr_in from;
    socklen_t flen = sizeof from;
    int rc;

    /* bzrtp wants iterate() called often; a known AU goes every 5 ms */
    (void) poll (&pfd, 1, 5);
    while ((len = recvfrom (b->fd, buf, sizeof buf, MSG_DONTWAIT,
                (struct sockaddr *) &from, &flen)) > 0) {
      if (g_atomic_int_get (&b->hold)) {
        b->held++;
        flen = sizeof from;
        continue;
      }
      if (!b->have_peer) {
        b->peer = from;
        b->have_peer = TRUE;
      }
      if (is_zrtp (buf, len)) {
        g_mutex_lock (&b->lock);
        b->zrtp_in++;
        g_mutex_unlock (&b->lock);
        if (!b->engine_started) {
          bzrtp_startChannelEngine (b->ctx, BRIDGE_SSRC);
          b->engine_started = TRUE;
        }
        rc = bzrtp_processMessage (b->ctx, BRIDGE_SSRC, buf, (uint16_t) len);
        g_mutex_lock (&b->lock);
        if (rc == BZ_OUT_OF_ORDER || rc == BZ_UNEXPECTED) {
          b->bz_late++;
        } else if (rc != 0 && !b->bz_refused++) {
          g_snprintf (b->bz_refused_what, sizeof b->bz_refused_what,
              "%.8s: 0x%x", buf + 16, rc);
        }
        g_mutex_unlock (&b->lock);
      } else {
        GBytes *pkt = g_bytes_new (buf, len);
        g_mutex_lock (&b->lock);
        b->media_in++;
        if (!b->have_rx)
          b->early_media++;
        if (b->rx_ready)
          bridge_media_locked (b, pkt);
        else
          g_ptr_array_add (b->early, g_bytes_ref (pkt));
        g_mutex_unlock (&b->lock);
        g_bytes_unref (pkt);
      }
      flen = sizeof from;
    }
    if (!b->engine_started && !b->start_on_first &&
        !g_atomic_int_get (&b->hold)) {
      bzrtp_startChannelEngine (b->ctx, BRIDGE_SSRC);
      b->engine_started = TRUE;
    }
    if (b->engine_started) {
      int st;
      bzrtp_iterate (b->ctx, BRIDGE_SSRC, mono_ms ());
      st = bzrtp_getChannelStatus (b->ctx, BRIDGE_SSRC);
      if (st == BZRTP_CHANNEL_ERROR) {
        g_mutex_lock (&b->lock);
        b->error = TRUE;
        g_mutex_unlock (&b->lock);
      }
    }
    bridge_keys (b);
    if (b->tx_ready && b->sent_aus < b->to_send->len)
      bridge_send_au (b);
  }
  return NULL;
}

/* A bzrtp peer offering DH3k only and the SAS rendering sas_type (it
 * adds B32). With peer_port 0 it waits for the first datagram and answers
 * its source. With hold, it does nothing until b->hold is cleared. */
static void
bridge_start (Bridge * b, guint16 peer_port, guint8 sas_type,
    GPtrArray * to_send, gboolean hold)
{
  struct sockaddr_in a = { 0 };
  socklen_t alen = sizeof a;
  int rcvbuf = 4 << 20;
  bzrtpCallbacks_t cbs;
  uint8_t ka[7] = { ZRTP_KEYAGREEMENT_DH3k }, sas[7] = { sas_type };
  urtp_pay_config_t pc = { 0 };
  urtp_depay_config_t dc = { 0 };

  memset (b, 0, sizeof *b);
  g_mutex_init (&b->lock);
  b->fd = socket (AF_INET, SOCK_DGRAM, 0);
  fail_unless (b->fd >= 0);
  (void) setsockopt (b->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (b->fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (getsockname (b->fd, (struct sockaddr *) &a, &alen) == 0);
  b->port = ntohs (a.sin_port);
  if (peer_port) {
    b->peer.sin_family = AF_INET;
    b->peer.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    b->peer.sin_port = htons (peer_port);
    b->have_peer = TRUE;
  } else {
    b->start_on_first = TRUE;
  }
  b->sas_type = sas_type;
  b->hold = hold;
  b->early = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  b->aus = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  b->to_send = to_send;

  dc.codec = URTP_CODEC_H265;
  dc.pt = PT;
  dc.ssrc = -1;
  dc.reorder_window = 64;
  dc.loss_policy = URTP_LOSS_DROP_AU;
  b->depay = urtp_depay_new (&dc);
  fail_unless (b->depay != NULL);
  pc.codec = URTP_CODEC_H265;
  pc.pt = PT;
  pc.ssrc = BRIDGE_SSRC;
  pc.seq_start = 4000;
  pc.mtu = 1200;
  pc.aggregate = true;
  fail_unless_equals_int (urtp_pay_init (&b->pay, &pc), 0);

  b->ctx = bzrtp_createBzrtpContext ();
  fail_unless (b->ctx != NULL);
  memset (&cbs, 0, sizeof cbs);
  cbs.bzrtp_statusMessage = bz_status;
  cbs.bzrtp_messageLevel = BZRTP_MESSAGE_ERROR;
  cbs.bzrtp_sendData = bz_send;
  cbs.bzrtp_srtpSecretsAvailable = bz_secrets;
  cbs.bzrtp_startSrtpSession = bz_start;
  fail_unless_equals_int (bzrtp_setCallbacks (b->ctx, &cbs), 0);
  /* before the channel exists: its Hello is built from these */
  bzrtp_setSupportedCryptoTypes (b->ctx, ZRTP_KEYAGREEMENT_TYPE, ka, 1);
  bzrtp_setSupportedCryptoTypes (b->ctx, ZRTP_SAS_TYPE, sas, 1);
  fail_unless_equals_int (bzrtp_initBzrtpContext (b->ctx, BRIDGE_SSRC), 0);
  fail_unless_equals_int (bzrtp_setClientData (b->ctx, BRIDGE_SSRC, b), 0);
  b->thread = g_thread_new ("bzrtp", bridge_run, b);
}

static void
bridge_stop (Bridge * b)
{
  if (!b->thread)
    return;
  g_atomic_int_set (&b->stop, 1);
  g_thread_join (b->thread);
  b->thread = NULL;
}

static void
bridge_free (Bridge * b)
{
  bridge_stop (b);
  bzrtp_destroyBzrtpContext (b->ctx, BRIDGE_SSRC);
  if (b->rx_ready) {
    urtp_srtp_destroy (&b->rx);
    urtp_srtp_destroy (&b->rx_other);
  }
  if (b->tx_ready)
    urtp_srtp_destroy (&b->tx);
  urtp_pay_destroy (&b->pay);
  urtp_batch_free (&b->batch);
  urtp_depay_free (b->depay);
  g_ptr_array_unref (b->early);
  g_ptr_array_unref (b->aus);
  close (b->fd);
  g_mutex_clear (&b->lock);
}

static guint
bridge_aus (Bridge * b)
{
  guint n;
  g_mutex_lock (&b->lock);
  n = b->aus->len;
  g_mutex_unlock (&b->lock);
  return n;
}

/* bzrtp renders B256 as "word:word", the elements as "word word". */
static gchar *
bridge_sas (Bridge * b)
{
  gchar *s;
  g_mutex_lock (&b->lock);
  s = g_strdup (b->sas);
  g_mutex_unlock (&b->lock);
  g_strdelimit (s, ":", ' ');
  return s;
}

/* What bzrtp concluded, checked the same in every case; returns whether
 * bzrtp was the initiator (it sent Confirm2). */
static gboolean
check_bridge_secure (Bridge * b)
{
  gboolean initiator;

  g_mutex_lock (&b->lock);
  fail_unless (b->secure && !b->error, "bzrtp not secure (error %d, "
      "%u ZRTP packets in, %u out)", b->error, b->zrtp_in, b->zrtp_out);
  fail_unless (b->bz_refused == 0, "bzrtp refused %u ZRTP packets, first %s",
      b->bz_refused, b->bz_refused_what);
  g_print ("bzrtp: %u ZRTP packets in (%u late or repeated), %u out\n",
      b->zrtp_in, b->bz_late, b->zrtp_out);
  fail_unless (b->have_tx && b->have_rx && b->have_zid);
  fail_unless_equals_int (b->ka, ZRTP_KEYAGREEMENT_DH3k);
  /* bzrtp adds the mandatory B32 to its Hello, and an initiator that
   * prefers it may take it */
  fail_unless (b->sas_algo == ZRTP_SAS_B32 || b->sas_algo == b->sas_type);
  /* one role each: the initiator sends Confirm2, the responder Confirm1 */
  fail_unless ((b->confirm1_sent > 0) != (b->confirm2_sent > 0),
      "bzrtp sent Confirm1 %u times and Confirm2 %u times",
      b->confirm1_sent, b->confirm2_sent);
  initiator = b->confirm2_sent > 0;
  /* the two directions' keys differ (RFC 6189 section 4.5.3) */
  fail_unless (b->tx_len == b->rx_len);
  fail_unless (memcmp (b->tx_key, b->rx_key, b->tx_len) != 0);
  g_mutex_unlock (&b->lock);
  return initiator;
}

/* Media from the element: all of it authenticated with bzrtp's receiving
 * key, none with its sending key, nothing in clear. */
static void
check_bridge_media (Bridge * b)
{
  g_mutex_lock (&b->lock);
  fail_unless (b->media_in > 0);
  fail_unless (b->rx_ready);
  fail_unless_equals_int (b->early->len, 0);
  fail_unless_equals_uint64 (b->auth_fail, 0);
  fail_unless_equals_uint64 (b->replay, 0);
  fail_unless_equals_uint64 (b->other_fail, 0);
  fail_unless_equals_uint64 (b->unprotected, b->media_in);
  fail_unless (b->other_tried > 0);
  fail_unless_equals_int (b->other_ok, 0);
  g_print ("bridge: %" G_GUINT64_FORMAT " SRTP packets unprotected, none "
      "failed; %u datagrams ignored before bzrtp started\n", b->unprotected,
      b->held);
  /* no SRTP before bzrtp had derived the keys for it: the element sent
   * media only once its keys were confirmed (RFC 6189 section 4.6) */
  fail_unless_equals_uint64 (b->early_media, 0);
  g_mutex_unlock (&b->lock);
}

/* ------------------------------------------------------------------------ */
/* Pipelines                                                                */

typedef struct
{
  GstElement *pipe;
  GstBus *bus;
  GPtrArray *zmsgs;             /* GstStructure: uvgrtp-zrtp messages */
  gboolean eos;
} Run;

static void
run_start (Run * r, const gchar * desc)
{
  GError *err = NULL;

  memset (r, 0, sizeof *r);
  r->pipe = gst_parse_launch (desc, &err);
  fail_unless (r->pipe != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  r->bus = gst_element_get_bus (r->pipe);
  r->zmsgs = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);
}

static void
run_play (Run * r)
{
  fail_unless (gst_element_set_state (r->pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
}

/* Handles the bus for up to ms milliseconds; fails on an error. */
static void
run_pump (Run * r, guint ms)
{
  GstMessage *m;
  GstClockTime until = gst_util_get_timestamp () + ms * GST_MSECOND;

  for (;;) {
    GstClockTime now = gst_util_get_timestamp ();
    if (now >= until)
      break;
    m = gst_bus_timed_pop (r->bus, until - now);
    if (!m)
      break;
    switch (GST_MESSAGE_TYPE (m)) {
      case GST_MESSAGE_ERROR:{
        GError *err = NULL;
        gchar *dbg = NULL;
        gst_message_parse_error (m, &err, &dbg);
        fail ("error from %s: %s (%s)", GST_OBJECT_NAME (m->src),
            err->message, dbg ? dbg : "");
        break;
      }
      case GST_MESSAGE_EOS:
        r->eos = TRUE;
        break;
      case GST_MESSAGE_ELEMENT:
        if (gst_message_has_name (m, "uvgrtp-zrtp"))
          g_ptr_array_add (r->zmsgs,
              gst_structure_copy (gst_message_get_structure (m)));
        break;
      default:
        break;
    }
    gst_message_unref (m);
  }
}

typedef gboolean (*Cond) (gpointer data);

/* Pumps the bus until cond holds; FALSE if it did not within ms. */
static gboolean
run_until (Run * r, Cond cond, gpointer data, guint ms)
{
  guint64 end = mono_ms () + ms;

  while (!cond (data)) {
    if (mono_ms () >= end)
      return FALSE;
    run_pump (r, 10);
  }
  return TRUE;
}

static void
run_free (Run * r)
{
  gst_element_set_state (r->pipe, GST_STATE_NULL);
  gst_object_unref (r->bus);
  gst_object_unref (r->pipe);
  g_ptr_array_unref (r->zmsgs);
}

static GstElement *
by_name (Run * r, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (r->pipe), name);
  fail_unless (e != NULL, "no element %s", name);
  return e;
}

/* The one uvgrtp-zrtp message; it says secure. */
static const GstStructure *
secure_message (Run * r)
{
  GstStructure *s;

  fail_unless_equals_int (r->zmsgs->len, 1);
  s = g_ptr_array_index (r->zmsgs, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "state"), "secure");
  return s;
}

static gchar *
get_string (GstElement * e, const gchar * prop)
{
  gchar *s = NULL;
  g_object_get (e, prop, &s, NULL);
  return s;
}

/* The nick of an enum property's value. */
static const gchar *
enum_nick (GstElement * e, const gchar * prop)
{
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e), prop);
  GValue v = G_VALUE_INIT;
  GEnumValue *ev;

  fail_unless (ps != NULL && G_IS_PARAM_SPEC_ENUM (ps), "no enum %s", prop);
  g_value_init (&v, ps->value_type);
  g_object_get_property (G_OBJECT (e), prop, &v);
  ev = g_enum_get_value (G_PARAM_SPEC_ENUM (ps)->enum_class,
      g_value_get_enum (&v));
  g_value_unset (&v);
  return ev ? ev->value_nick : "?";
}

static gboolean
has_property (const gchar * factory, const gchar * prop)
{
  GstElement *e = gst_element_factory_make (factory, NULL);
  gboolean has;

  fail_unless (e != NULL, "no %s", factory);
  has = g_object_class_find_property (G_OBJECT_GET_CLASS (e), prop) != NULL;
  gst_object_unref (e);
  return has;
}

/* Our side offers DH3k only too, where the element lets us say so. */
static const gchar *
dh3k_only (const gchar * factory)
{
  return has_property (factory, "zrtp-key-agreements") ?
      " zrtp-key-agreements=DH3k" : "";
}

/* The element's view against bzrtp's: SAS, key agreement, cipher, peer
 * ZID, role (when the message tells it). prefix: "" for uvgrtpzrtp,
 * "zrtp-" for uvgrtpsink and uvgrtpsrc. */
static void
check_element (GstElement * e, const gchar * prefix, const GstStructure * msg,
    Bridge * b, gboolean bz_initiator)
{
  gchar *p_state = g_strconcat (prefix, "state", NULL);
  gchar *p_sas = g_strconcat (prefix, "sas", NULL);
  gchar *p_ka = g_strconcat (prefix, "key-agreement", NULL);
  gchar *p_cipher = g_strconcat (prefix, "cipher", NULL);
  gchar *p_peer_zid = g_strconcat (prefix, "peer-zid", NULL);
  gchar *p_verified = g_strconcat (prefix, "sas-verified", NULL);
  gchar *bz_sas = bridge_sas (b);
  gchar *sas = get_string (e, p_sas);
  gchar *ka = get_string (e, p_ka);
  gchar *cipher = get_string (e, p_cipher);
  gchar *peer_zid = get_string (e, p_peer_zid);
  gchar *bz_zid = hex (b->zid, sizeof b->zid);
  const gchar *want_cipher = b->cipher == ZRTP_CIPHER_AES3 ? "AES3" : "AES1";
  gboolean verified = TRUE, initiator;

  g_print ("SAS: bzrtp \"%s\", element \"%s\"; %s %s; bzrtp was the %s\n",
      b->sas, sas, ka, cipher, bz_initiator ? "initiator" : "responder");
  fail_unless_equals_string (enum_nick (e, p_state), "secure");
  fail_unless (bz_sas[0] != '\0');
  if (b->sas_algo == ZRTP_SAS_B32) {
    fail_unless_equals_int (strlen (bz_sas), 4);
  } else {
    fail_unless (strchr (bz_sas, ' ') != NULL);
  }
  fail_unless_equals_string (sas, bz_sas);
  fail_unless_equals_string (ka, "DH3k");
  fail_unless_equals_string (cipher, want_cipher);
  fail_unless (peer_zid != NULL);
  fail_unless_equals_string (peer_zid, bz_zid);
  g_object_get (e, p_verified, &verified, NULL);
  fail_unless (!verified);

  fail_unless_equals_string (gst_structure_get_string (msg, "sas"), bz_sas);
  fail_unless_equals_string (gst_structure_get_string (msg, "key-agreement"),
      "DH3k");
  fail_unless_equals_string (gst_structure_get_string (msg, "cipher"),
      want_cipher);
  fail_unless (gst_structure_get_boolean (msg, "sas-verified", &verified));
  fail_unless (!verified);
  if (gst_structure_has_field (msg, "peer-zid"))
    fail_unless_equals_string (gst_structure_get_string (msg, "peer-zid"),
        bz_zid);
  if (gst_structure_get_boolean (msg, "initiator", &initiator))
    fail_unless (initiator != bz_initiator, "both sides %s",
        initiator ? "initiated" : "responded");
  if (gst_structure_has_field (msg, "sas-type"))
    fail_unless_equals_string (gst_structure_get_string (msg, "sas-type"),
        b->sas_algo == ZRTP_SAS_B32 ? "B32" : "B256");
  if (gst_structure_has_field (msg, "auth-tag"))
    fail_unless_equals_string (gst_structure_get_string (msg, "auth-tag"),
        b->auth == ZRTP_AUTHTAG_HS32 ? "HS32" : "HS80");
  if (gst_structure_has_field (msg, "srtp-profile"))
    fail_unless_equals_string (gst_structure_get_string (msg, "srtp-profile"),
        urtp_srtp_profile_name (b->profile));

  g_free (p_state);
  g_free (p_sas);
  g_free (p_ka);
  g_free (p_cipher);
  g_free (p_peer_zid);
  g_free (p_verified);
  g_free (bz_sas);
  g_free (sas);
  g_free (ka);
  g_free (cipher);
  g_free (peer_zid);
  g_free (bz_zid);
}

/* ------------------------------------------------------------------------ */
/* Known access units, and the tap on what enters the element under test    */

typedef struct
{
  GMutex lock;
  GPtrArray *aus;               /* GBytes */
} Collect;

static void
collect_init (Collect * c)
{
  g_mutex_init (&c->lock);
  c->aus = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
}

static void
collect_clear (Collect * c)
{
  g_ptr_array_unref (c->aus);
  g_mutex_clear (&c->lock);
}

static guint
collect_len (Collect * c)
{
  guint n;
  g_mutex_lock (&c->lock);
  n = c->aus->len;
  g_mutex_unlock (&c->lock);
  return n;
}

static GstFlowReturn
collect_sample (GstAppSink * sink, gpointer user_data)
{
  Collect *out = user_data;
  GstSample *s = gst_app_sink_pull_sample (sink);
  GstBuffer *buf;
  GstMapInfo m;

  if (!s)
    return GST_FLOW_EOS;
  buf = gst_sample_get_buffer (s);
  fail_unless (gst_buffer_map (buf, &m, GST_MAP_READ));
  g_mutex_lock (&out->lock);
  g_ptr_array_add (out->aus, g_bytes_new (m.data, m.size));
  g_mutex_unlock (&out->lock);
  gst_buffer_unmap (buf, &m);
  gst_sample_unref (s);
  return GST_FLOW_OK;
}

static void
attach_collect (Run * r, const gchar * name, Collect * out)
{
  GstElement *sink = by_name (r, name);
  GstAppSinkCallbacks cb;

  memset (&cb, 0, sizeof cb);
  cb.new_sample = collect_sample;
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, out, NULL);
  gst_object_unref (sink);
}

static gboolean
run_eos (gpointer data)
{
  return ((Run *) data)->eos;
}

/* KNOWN_FRAMES access units from x265, the first an IRAP with VPS, SPS and
 * PPS in band. */
static GPtrArray *
encode_known (void)
{
  Run r;
  Collect c;
  GPtrArray *aus;

  collect_init (&c);
  run_start (&r, "videotestsrc num-buffers=" G_STRINGIFY (KNOWN_FRAMES)
      " pattern=ball ! " ENC_CAPS " ! " X265 " ! appsink name=out sync=false");
  attach_collect (&r, "out", &c);
  run_play (&r);
  fail_unless (run_until (&r, run_eos, &r, 60000));
  run_free (&r);
  aus = g_ptr_array_ref (c.aus);
  collect_clear (&c);
  fail_unless_equals_int (aus->len, KNOWN_FRAMES);
  return aus;
}

/* Decodes byte-stream H.265 access units; returns the frames out. */
static guint
decode_count (GPtrArray * aus)
{
  Run r;
  GstElement *src;
  GstCaps *caps = gst_caps_from_string (H265_AU);
  Collect frames;
  guint n;

  run_start (&r, "appsrc name=src format=time ! h265parse ! avdec_h265 ! "
      "appsink name=out sync=false");
  collect_init (&frames);
  attach_collect (&r, "out", &frames);
  src = by_name (&r, "src");
  g_object_set (src, "caps", caps, NULL);
  gst_caps_unref (caps);
  run_play (&r);
  for (guint i = 0; i < aus->len; i++) {
    GstBuffer *b = gst_buffer_new_wrapped_bytes (g_ptr_array_index (aus, i));
    GST_BUFFER_PTS (b) = GST_BUFFER_DTS (b) = i * (GST_SECOND / 30);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), b),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_object_unref (src);
  fail_unless (run_until (&r, run_eos, &r, 60000));
  run_free (&r);
  n = frames.aus->len;
  collect_clear (&frames);
  return n;
}

/* Records every access unit that enters the element under test, and
 * whether the element was secure then. The bzrtp peer stays silent until
 * BEFORE_ZRTP access units entered (the element must drop them); the next
 * ones are held until the element is secure, so that all the rest of the
 * stream goes protected. A run that never becomes secure is let go after
 * a while (and fails). */
typedef struct
{
  GstElement *elem;
  const gchar *prop;            /* its state property */
} StateOf;

static gboolean
elem_secure (StateOf * s)
{
  return strcmp (enum_nick (s->elem, s->prop), "secure") == 0;
}

typedef struct
{
  GMutex lock;
  GPtrArray *aus;               /* GBytes */
  GArray *secure;               /* gboolean per access unit */
  StateOf state;
  Bridge *bridge;               /* let go once BEFORE_ZRTP AUs entered */
  gboolean eos;
  gint stop;
} Tap;

static GstPadProbeReturn
tap_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  Tap *t = user;
  GstMapInfo m;
  GstBuffer *buf;
  gboolean sec;
  guint n;

  (void) pad;
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_EOS) {
      g_mutex_lock (&t->lock);
      t->eos = TRUE;
      g_mutex_unlock (&t->lock);
    }
    return GST_PAD_PROBE_OK;
  }
  buf = GST_PAD_PROBE_INFO_BUFFER (info);
  g_mutex_lock (&t->lock);
  n = t->aus->len;
  g_mutex_unlock (&t->lock);
  if (n >= BEFORE_ZRTP) {
    guint64 end = mono_ms () + EXCHANGE_TIMEOUT_MS;
    while (!elem_secure (&t->state) && mono_ms () < end &&
        !g_atomic_int_get (&t->stop))
      g_usleep (2000);
  }
  sec = elem_secure (&t->state);
  fail_unless (gst_buffer_map (buf, &m, GST_MAP_READ));
  g_mutex_lock (&t->lock);
  g_ptr_array_add (t->aus, g_bytes_new (m.data, m.size));
  g_array_append_val (t->secure, sec);
  g_mutex_unlock (&t->lock);
  gst_buffer_unmap (buf, &m);
  if (n + 1 == BEFORE_ZRTP)
    g_atomic_int_set (&t->bridge->hold, 0);
  return GST_PAD_PROBE_OK;
}

static void
tap_attach (Tap * t, Run * r, const gchar * pad_of, GstElement * elem,
    const gchar * state_prop, Bridge * bridge)
{
  GstElement *e = by_name (r, pad_of);
  GstPad *pad = gst_element_get_static_pad (e, "sink");

  memset (t, 0, sizeof *t);
  g_mutex_init (&t->lock);
  t->aus = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  t->secure = g_array_new (FALSE, FALSE, sizeof (gboolean));
  t->state.elem = elem;
  t->state.prop = state_prop;
  t->bridge = bridge;
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, tap_probe, t, NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
}

static void
tap_clear (Tap * t)
{
  g_ptr_array_unref (t->aus);
  g_array_unref (t->secure);
  g_mutex_clear (&t->lock);
}

static gboolean
tap_eos (gpointer data)
{
  Tap *t = data;
  gboolean eos;
  g_mutex_lock (&t->lock);
  eos = t->eos;
  g_mutex_unlock (&t->lock);
  return eos;
}

typedef struct
{
  Bridge *b;
  guint n;
} Count;

static gboolean
bridge_has (gpointer data)
{
  Count *c = data;
  return bridge_aus (c->b) >= c->n;
}

/* The access units the bridge depacketised are those that entered the
 * element once it was secure, all of them, in order, byte for byte. An
 * access unit that was being sent as the element became secure may arrive
 * in part before them, as its last NAL units. */
static void
check_stream_to_bridge (Tap * t, Bridge * b)
{
  guint start = t->aus->len, want, skip = 0;

  for (guint i = 0; i < t->aus->len; i++)
    if (g_array_index (t->secure, gboolean, i)) {
      start = i;
      break;
    }
  /* bzrtp was silent for the first ones, the gate held the others */
  fail_unless_equals_int (start, BEFORE_ZRTP);
  for (guint i = start; i < t->aus->len; i++)
    fail_unless (g_array_index (t->secure, gboolean, i));
  fail_unless_equals_int (t->aus->len, LIVE_FRAMES);
  want = t->aus->len - start;

  g_mutex_lock (&b->lock);
  if (b->aus->len == want + 1 && start > 0 &&
      au_is_tail (g_ptr_array_index (b->aus, 0),
          g_ptr_array_index (t->aus, start - 1))) {
    g_print ("the tail of AU %u went out as the element became secure\n",
        start - 1);
    skip = 1;
  }
  fail_unless_equals_int (b->aus->len, want + skip);
  for (guint i = 0; i < want; i++) {
    gchar *why = au_diff (g_ptr_array_index (b->aus, skip + i),
        g_ptr_array_index (t->aus, start + i), 0);
    fail_unless (why == NULL, "AU %u: %s", start + i, why);
  }
  g_mutex_unlock (&b->lock);
  g_print ("%u access units entered, %u went out protected and arrived "
      "intact (first AU after SECURE: %u)\n", t->aus->len, want, start);
}

static void
check_known (GPtrArray * got, GPtrArray * known)
{
  fail_unless_equals_int (got->len, known->len);
  for (guint i = 0; i < known->len; i++) {
    gchar *why = au_diff (g_ptr_array_index (got, i),
        g_ptr_array_index (known, i), 0);
    fail_unless (why == NULL, "AU %u: %s", i, why);
  }
}

static gboolean
elem_secure_cond (gpointer data)
{
  return elem_secure (data);
}

/* Access units that entered once the element was secure. */
static guint
tap_secure_aus (Tap * t)
{
  guint n = 0;
  g_mutex_lock (&t->lock);
  for (guint i = 0; i < t->secure->len; i++)
    n += g_array_index (t->secure, gboolean, i) ? 1 : 0;
  g_mutex_unlock (&t->lock);
  return n;
}

static gboolean
bridge_secure_cond (gpointer data)
{
  Bridge *b = data;
  gboolean s;
  g_mutex_lock (&b->lock);
  s = b->secure || b->error;
  g_mutex_unlock (&b->lock);
  return s;
}

typedef struct
{
  Bridge *b;
  Collect *got;
  guint n;
} Both;

static gboolean
sent_and_got (gpointer data)
{
  Both *x = data;
  gboolean sent;
  g_mutex_lock (&x->b->lock);
  sent = x->b->sent_aus >= x->n;
  g_mutex_unlock (&x->b->lock);
  return sent && collect_len (x->got) >= x->n;
}

/* ------------------------------------------------------------------------ */
/* uvgrtpzrtp: the bridge proven against the existing element               */

GST_START_TEST (test_uvgrtpzrtp_both_ways)
{
  guint16 rtp_port = free_udp_port ();
  GPtrArray *known = encode_known ();
  Collect got;
  Bridge b;
  Run r;
  Tap t;
  GstElement *zrtp;
  gchar *desc;
  gboolean bz_init;
  Count c;
  Both x;

  /* bzrtp sends its Hello to the udpsrc port, and known AUs once secure */
  bridge_start (&b, rtp_port, ZRTP_SAS_B256, known, TRUE);
  desc = g_strdup_printf ("uvgrtpzrtp name=zrtp "
      "videotestsrc is-live=true num-buffers=%d ! " ENC_CAPS " ! " X265 " ! "
      "rtph265pay name=pay pt=%d mtu=1200 ! zrtp.send_rtp_sink "
      "zrtp.send_rtp_src ! udpsink host=127.0.0.1 port=%u sync=false "
      "async=false "
      "udpsrc port=%u caps=\"application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H265,payload=%d\" ! zrtp.recv_rtp_sink "
      "zrtp.recv_rtp_src ! rtph265depay ! " H265_AU " ! "
      "appsink name=out sync=false", LIVE_FRAMES, PT, b.port, rtp_port, PT);
  run_start (&r, desc);
  g_free (desc);
  zrtp = by_name (&r, "zrtp");
  tap_attach (&t, &r, "pay", zrtp, "state", &b);
  collect_init (&got);
  attach_collect (&r, "out", &got);
  run_play (&r);

  fail_unless (run_until (&r, bridge_secure_cond, &b, EXCHANGE_TIMEOUT_MS),
      "bzrtp never became secure");
  fail_unless (run_until (&r, elem_secure_cond, &t.state,
          EXCHANGE_TIMEOUT_MS));
  bz_init = check_bridge_secure (&b);
  fail_unless (run_until (&r, tap_eos, &t, 60000));
  c.b = &b;
  c.n = tap_secure_aus (&t);
  x.b = &b;
  x.got = &got;
  x.n = known->len;
  (void) run_until (&r, bridge_has, &c, DRAIN_TIMEOUT_MS);
  (void) run_until (&r, sent_and_got, &x, DRAIN_TIMEOUT_MS);
  run_pump (&r, 50);
  gst_element_set_state (r.pipe, GST_STATE_NULL);
  g_atomic_int_set (&t.stop, 1);
  bridge_stop (&b);

  check_element (zrtp, "", secure_message (&r), &b, bz_init);
  /* element -> bzrtp */
  check_bridge_media (&b);
  check_stream_to_bridge (&t, &b);
  /* bzrtp -> element */
  check_known (got.aus, known);
  {
    GstStructure *st = NULL;
    guint64 v;
    g_object_get (zrtp, "stats", &st, NULL);
    fail_unless (st != NULL);
    fail_unless (gst_structure_get_uint64 (st, "srtp-auth-failures", &v));
    fail_unless_equals_uint64 (v, 0);
    fail_unless (gst_structure_get_uint64 (st, "srtp-unprotected", &v));
    fail_unless_equals_uint64 (v, b.sent_pkts);
    fail_unless (gst_structure_get_uint64 (st, "sent-clear", &v));
    fail_unless_equals_uint64 (v, 0);
    gst_structure_free (st);
  }

  gst_object_unref (zrtp);
  run_free (&r);
  tap_clear (&t);
  bridge_free (&b);
  collect_clear (&got);
  g_ptr_array_unref (known);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* uvgrtpsink zrtp=true -> bzrtp                                            */

GST_START_TEST (test_uvgrtpsink_to_bzrtp)
{
  Bridge b;
  Run r;
  Tap t;
  GstElement *sink;
  gchar *desc;
  gboolean bz_init;
  Count c;

  if (!has_property ("uvgrtpsink", "zrtp")) {
    g_print ("SKIP: uvgrtpsink has no zrtp property yet\n");
    return;
  }
  /* bzrtp answers the sink's Hello from wherever it comes */
  bridge_start (&b, 0, ZRTP_SAS_B256, NULL, TRUE);
  desc = g_strdup_printf ("videotestsrc is-live=true num-buffers=%d ! "
      ENC_CAPS " ! " X265 " ! uvgrtpsink name=sink host=127.0.0.1 port=%u "
      "pt=%d mtu=1200 sync=false zrtp=true%s", LIVE_FRAMES, b.port, PT,
      dh3k_only ("uvgrtpsink"));
  run_start (&r, desc);
  g_free (desc);
  sink = by_name (&r, "sink");
  tap_attach (&t, &r, "sink", sink, "zrtp-state", &b);
  run_play (&r);

  fail_unless (run_until (&r, bridge_secure_cond, &b, EXCHANGE_TIMEOUT_MS),
      "bzrtp never became secure");
  fail_unless (run_until (&r, elem_secure_cond, &t.state,
          EXCHANGE_TIMEOUT_MS));
  bz_init = check_bridge_secure (&b);
  fail_unless (run_until (&r, run_eos, &r, 60000));
  c.b = &b;
  c.n = tap_secure_aus (&t);
  (void) run_until (&r, bridge_has, &c, DRAIN_TIMEOUT_MS);
  run_pump (&r, 50);
  g_atomic_int_set (&t.stop, 1);
  bridge_stop (&b);

  check_element (sink, "zrtp-", secure_message (&r), &b, bz_init);
  check_bridge_media (&b);
  check_stream_to_bridge (&t, &b);

  gst_object_unref (sink);
  run_free (&r);
  tap_clear (&t);
  bridge_free (&b);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* bzrtp -> uvgrtpsrc zrtp=true                                             */

GST_START_TEST (test_bzrtp_to_uvgrtpsrc)
{
  guint16 port;
  GPtrArray *known;
  Collect got;
  Bridge b;
  Run r;
  GstElement *src;
  gchar *desc;
  gboolean bz_init;
  Both x;
  StateOf st;

  if (!has_property ("uvgrtpsrc", "zrtp")) {
    g_print ("SKIP: uvgrtpsrc has no zrtp property yet\n");
    return;
  }
  known = encode_known ();
  collect_init (&got);
  port = free_udp_port ();
  desc = g_strdup_printf ("uvgrtpsrc name=src port=%u encoding-name=H265 "
      "zrtp=true%s ! " H265_AU " ! appsink name=out sync=false", port,
      dh3k_only ("uvgrtpsrc"));
  run_start (&r, desc);
  g_free (desc);
  src = by_name (&r, "src");
  attach_collect (&r, "out", &got);
  run_play (&r);
  /* bzrtp starts it: Hello to the src's port */
  bridge_start (&b, port, ZRTP_SAS_B32, known, FALSE);

  fail_unless (run_until (&r, bridge_secure_cond, &b, EXCHANGE_TIMEOUT_MS),
      "bzrtp never became secure");
  st.elem = src;
  st.prop = "zrtp-state";
  fail_unless (run_until (&r, elem_secure_cond, &st, EXCHANGE_TIMEOUT_MS));
  bz_init = check_bridge_secure (&b);
  x.b = &b;
  x.got = &got;
  x.n = known->len;
  (void) run_until (&r, sent_and_got, &x, DRAIN_TIMEOUT_MS);
  run_pump (&r, 50);
  gst_element_set_state (r.pipe, GST_STATE_NULL);
  bridge_stop (&b);

  check_element (src, "zrtp-", secure_message (&r), &b, bz_init);
  g_mutex_lock (&b.lock);
  fail_unless_equals_int (b.sent_aus, known->len);
  /* nothing but ZRTP came back */
  fail_unless_equals_uint64 (b.media_in, 0);
  g_mutex_unlock (&b.lock);
  check_known (got.aus, known);
  fail_unless_equals_int (decode_count (got.aus), known->len);
  g_print ("bridge: %u AUs sent in %" G_GUINT64_FORMAT " SRTP packets, all "
      "out of uvgrtpsrc intact and decoded\n", known->len, b.sent_pkts);

  gst_object_unref (src);
  run_free (&r);
  bridge_free (&b);
  collect_clear (&got);
  g_ptr_array_unref (known);
}

GST_END_TEST;

static Suite *
zrtp_bzrtp_suite (void)
{
  Suite *s = suite_create ("zrtp_bzrtp");
  TCase *tc = tcase_create ("loopback");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_uvgrtpzrtp_both_ways);
  tcase_add_test (tc, test_uvgrtpsink_to_bzrtp);
  tcase_add_test (tc, test_bzrtp_to_uvgrtpsrc);
  return s;
}

int
main (int argc, char **argv)
{
  bzrtpContext_t *probe;
  GstElementFactory *f;
  gboolean dh3k;

  /* As in test_uvgrtpzrtp: OpenSSL's exit handler and GStreamer's pool
   * threads would free OpenSSL's thread state twice. */
  OPENSSL_init_crypto (OPENSSL_INIT_NO_ATEXIT, NULL);
  gst_check_init (&argc, &argv);
  probe = bzrtp_createBzrtpContext ();
  dh3k = probe && bz_offers (probe, ZRTP_KEYAGREEMENT_TYPE,
      ZRTP_KEYAGREEMENT_DH3k);
  bzrtp_destroyBzrtpContext (probe, 0);
  if (!dh3k) {
    g_print ("this bzrtp offers no DH3k: skipped\n");
    return 77;
  }
  f = gst_element_factory_find ("uvgrtpzrtp");
  if (!f) {
    g_print ("uvgrtpzrtp not built (lib/ without ZRTP or SRTP): skipped\n");
    return 77;
  }
  gst_object_unref (f);
  return gst_check_run_suite (zrtp_bzrtp_suite (), "zrtp_bzrtp", __FILE__);
}
