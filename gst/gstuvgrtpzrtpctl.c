/* SPDX-License-Identifier: BSD-2-Clause */
/* ZRTP shared by uvgrtpsink, uvgrtpsrc and uvgrtpzrtp: see the header. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gstuvgrtpsrtp.h"
#include "gstuvgrtpzrtpctl.h"

#if defined (URTP_HAVE_ZRTP) && defined (URTP_HAVE_SRTP)
#define HAVE_ENGINE 1
#endif

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_zrtp_ctl_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_zrtp_ctl_debug

/* ZRTP packets kept from before their session exists. */
#define MAX_EARLY 8
/* Received packets waiting for the thread. */
#define MAX_INQ 64
/* How often a Multistream member looks whether the session's first stream
 * became secure. */
#define JOIN_POLL_MS 20
/* Media without keys starts an exchange at most this often. */
#define POKE_INTERVAL_MS 3000

#define ZRTP_TYPE_OFFSET 16     /* packet header 12, preamble 2, length 2 */

static void
ensure_debug (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gst_uvgrtp_zrtp_ctl_debug, "uvgrtpzrtpctl", 0,
        "uvgRTP ZRTP on the elements' own sockets");
    g_once_init_leave (&once, 1);
  }
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

GType
gst_uvgrtp_zrtp_state_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_ZRTP_STATE_IDLE, "Not started", "idle"},
    {GST_UVGRTP_ZRTP_STATE_DISCOVERY, "Discovery (Hello)", "discovery"},
    {GST_UVGRTP_ZRTP_STATE_KEY_AGREEMENT, "Key agreement", "key-agreement"},
    {GST_UVGRTP_ZRTP_STATE_SECURE, "Secure", "secure"},
    {GST_UVGRTP_ZRTP_STATE_FAILED, "Failed", "failed"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpZrtpState", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

gboolean
gst_uvgrtp_zrtp_parse_zid (const gchar * s, guint8 out[URTP_ZRTP_ZID_LEN])
{
  guint8 tmp[URTP_ZRTP_ZID_LEN];

  if (!s || strlen (s) != 2 * URTP_ZRTP_ZID_LEN)
    return FALSE;
  for (gsize i = 0; i < URTP_ZRTP_ZID_LEN; i++) {
    gint hi = g_ascii_xdigit_value (s[2 * i]);
    gint lo = g_ascii_xdigit_value (s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return FALSE;
    tmp[i] = (guint8) (hi << 4 | lo);
  }
  memcpy (out, tmp, sizeof tmp);
  return TRUE;
}

gchar *
gst_uvgrtp_zrtp_hex (const guint8 * p, gsize n)
{
  static const gchar digits[] = "0123456789abcdef";
  gchar *s = g_malloc (2 * n + 1);

  for (gsize i = 0; i < n; i++) {
    s[2 * i] = digits[p[i] >> 4];
    s[2 * i + 1] = digits[p[i] & 15];
  }
  s[2 * n] = '\0';
  return s;
}

gboolean
gst_uvgrtp_zrtp_zid_is_zero (const guint8 * zid)
{
  for (gsize i = 0; i < URTP_ZRTP_ZID_LEN; i++)
    if (zid[i])
      return FALSE;
  return TRUE;
}

void
gst_uvgrtp_zrtp_wipe (void *p, gsize n)
{
  /* volatile: a plain memset of memory about to be freed may be elided */
  volatile guint8 *v = p;
  while (n--)
    *v++ = 0;
}

static const gchar *
nonempty (const char *s)
{
  return s && *s ? s : NULL;
}

#ifdef URTP_HAVE_ZRTP
GstMessage *
gst_uvgrtp_zrtp_make_message (GstObject * src, const urtp_zrtp_info_t * info,
    const gchar * srtp_profile)
{
  gboolean failed = info->state == URTP_ZRTP_FAILED;
  gchar *zid = gst_uvgrtp_zrtp_hex (info->zid, URTP_ZRTP_ZID_LEN);
  gchar *peer_zid = gst_uvgrtp_zrtp_hex (info->peer_zid, URTP_ZRTP_ZID_LEN);
  /* the Hello carries it space-padded to 16 characters */
  gchar *client_id = g_strchomp (g_strndup (info->peer_client_id,
          sizeof info->peer_client_id));
  GstStructure *s;

  s = gst_structure_new ("uvgrtp-zrtp",
      "state", G_TYPE_STRING, failed ? "failed" : "secure",
      "sas", G_TYPE_STRING, failed ? "" : info->sas,
      "sas-verified", G_TYPE_BOOLEAN, (gboolean) info->sas_verified,
      "peer-sas-verified", G_TYPE_BOOLEAN, (gboolean) info->peer_sas_verified,
      "cipher", G_TYPE_STRING, info->cipher,
      "auth-tag", G_TYPE_STRING, info->auth_tag,
      "key-agreement", G_TYPE_STRING, info->key_agreement,
      "sas-type", G_TYPE_STRING, info->sas_type,
      "hash", G_TYPE_STRING, info->hash,
      "srtp-profile", G_TYPE_STRING, srtp_profile ? srtp_profile : "",
      "initiator", G_TYPE_BOOLEAN, (gboolean) info->initiator,
      "cache-mismatch", G_TYPE_BOOLEAN, (gboolean) info->cache_mismatch,
      "secrets-matched", G_TYPE_BOOLEAN, (gboolean) info->secrets_matched,
      "zid", G_TYPE_STRING, zid,
      "peer-zid", G_TYPE_STRING, peer_zid,
      "peer-client-id", G_TYPE_STRING, client_id, NULL);
  if (failed) {
    const char *name = urtp_zrtp_error_name (info->error);
    gchar *reason = name ? g_strdup (name) :
        g_strdup_printf ("ZRTP error 0x%02x", info->error);
    gst_structure_set (s, "reason", G_TYPE_STRING, reason,
        "error-code", G_TYPE_UINT, (guint) info->error,
        "error-from-peer", G_TYPE_BOOLEAN, (gboolean) info->error_from_peer,
        NULL);
    g_free (reason);
  }
  g_free (zid);
  g_free (peer_zid);
  g_free (client_id);
  return gst_message_new_element (src, s);
}
#endif

void
gst_uvgrtp_zrtp_info_to_value (const urtp_zrtp_info_t * info,
    GstUvgRtpZrtpProp prop, GValue * value)
{
  switch (prop) {
    case GST_UVGRTP_ZRTP_PROP_STATE:
      g_value_set_enum (value, (gint) info->state);
      break;
    case GST_UVGRTP_ZRTP_PROP_SAS:
      g_value_set_string (value, info->keys_ready ? nonempty (info->sas) :
          NULL);
      break;
    case GST_UVGRTP_ZRTP_PROP_SAS_VERIFIED:
      g_value_set_boolean (value, info->sas_verified);
      break;
    case GST_UVGRTP_ZRTP_PROP_PEER_SAS_VERIFIED:
      g_value_set_boolean (value, info->peer_sas_verified);
      break;
    case GST_UVGRTP_ZRTP_PROP_CIPHER:
      g_value_set_string (value, nonempty (info->cipher));
      break;
    case GST_UVGRTP_ZRTP_PROP_AUTH_TAG:
      g_value_set_string (value, nonempty (info->auth_tag));
      break;
    case GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENT:
      g_value_set_string (value, nonempty (info->key_agreement));
      break;
    case GST_UVGRTP_ZRTP_PROP_SAS_TYPE:
      g_value_set_string (value, nonempty (info->sas_type));
      break;
    case GST_UVGRTP_ZRTP_PROP_PEER_ZID:
      if (gst_uvgrtp_zrtp_zid_is_zero (info->peer_zid))
        g_value_set_string (value, NULL);
      else
        g_value_take_string (value, gst_uvgrtp_zrtp_hex (info->peer_zid,
                URTP_ZRTP_ZID_LEN));
      break;
    default:
      g_assert_not_reached ();
  }
}

/* ------------------------------------------------------------------------ */
/* Properties of uvgrtpsink and uvgrtpsrc                                   */

/* The message type of a ZRTP packet, for the log. */
const gchar *
gst_uvgrtp_zrtp_type_name (const guint8 * pkt, gsize len, gchar out[9])
{
  if (len < ZRTP_TYPE_OFFSET + 8)
    return "?";
  memcpy (out, pkt + ZRTP_TYPE_OFFSET, 8);
  out[8] = '\0';
  for (int i = 0; i < 8; i++)
    if (!g_ascii_isprint (out[i]))
      out[i] = '?';
  return g_strchomp (out);
}

gboolean
gst_uvgrtp_zrtp_element_set_sas_verified (GstElement * element,
    GstUvgRtpZrtpCtl ** ctlp, gboolean verified)
{
  GstUvgRtpZrtpCtl *ctl = NULL;
  gboolean ok = FALSE;

  GST_OBJECT_LOCK (element);
  if (*ctlp)
    ctl = gst_uvgrtp_zrtp_ctl_ref (*ctlp);
  GST_OBJECT_UNLOCK (element);
  if (ctl) {
    ok = gst_uvgrtp_zrtp_ctl_set_sas_verified (ctl, verified);
    gst_uvgrtp_zrtp_ctl_unref (ctl);
  } else {
    GST_WARNING_OBJECT (element, "zrtp-set-sas-verified: no ZRTP session");
  }
  return ok;
}

#ifdef HAVE_ENGINE
/* for notifications from the endpoint's thread */
static const gchar *const prop_names[GST_UVGRTP_ZRTP_N_PROPS] = {
  "zrtp", "zrtp-allow-clear", "zrtp-cache-file", "zrtp-zid", "zrtp-session",
  "zrtp-key-agreements", "zrtp-state", "zrtp-sas", "zrtp-sas-verified",
  "zrtp-peer-sas-verified", "zrtp-cipher", "zrtp-auth-tag",
  "zrtp-key-agreement", "zrtp-sas-type", "zrtp-peer-zid",
};
#endif

/* Every read-only property: what a state change may touch. */
#define NOTIFY_INFO (((1u << GST_UVGRTP_ZRTP_N_PROPS) - 1) & \
    ~((1u << GST_UVGRTP_ZRTP_PROP_STATE) - 1))

void
gst_uvgrtp_zrtp_settings_init (GstUvgRtpZrtpSettings * s)
{
  memset (s, 0, sizeof *s);
}

void
gst_uvgrtp_zrtp_settings_clear (GstUvgRtpZrtpSettings * s)
{
  g_free (s->cache_file);
  g_free (s->session);
  g_free (s->key_agreements);
  memset (s, 0, sizeof *s);
}

void
gst_uvgrtp_zrtp_settings_copy (GstUvgRtpZrtpSettings * dst,
    const GstUvgRtpZrtpSettings * src)
{
  *dst = *src;
  dst->cache_file = g_strdup (src->cache_file);
  dst->session = g_strdup (src->session);
  dst->key_agreements = g_strdup (src->key_agreements);
}

guint
gst_uvgrtp_zrtp_install (GObjectClass * klass, guint first, GCallback handler)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  ensure_debug ();

  /**
   * GstUvgRtpSink:zrtp:
   *
   * Agree SRTP keys with the peer by ZRTP (RFC 6189) on the element's own
   * UDP socket and protect the stream with them. uvgrtpsink starts the
   * exchange as it starts, sending Hello to #GstUvgRtpSink:host and
   * listening for the answers on its socket; uvgrtpsrc (#GstUvgRtpSrc:zrtp)
   * answers the first Hello it receives, to the address it came from, and
   * unprotects the stream with the sender's key. Until the stream is
   * secure, the sink sends no media and the source drops what arrives in
   * clear, unless #GstUvgRtpSink:zrtp-allow-clear is set. Cannot be
   * combined with srtp-key. Read when the element starts.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_ZRTP_PROP_ENABLE,
      g_param_spec_boolean ("zrtp", "ZRTP",
          "Agree SRTP keys by ZRTP on the element's socket", FALSE, rw));
  /**
   * GstUvgRtpSink:zrtp-allow-clear:
   *
   * While the keys are not agreed (or after the exchange failed), the sink
   * sends media in clear and the source accepts clear RTP. Off by default:
   * the sink then drops the access units (counted as zrtp-held in the
   * stats) and the source drops clear datagrams (zrtp-dropped). Once
   * secure, media is always protected.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_ALLOW_CLEAR,
      g_param_spec_boolean ("zrtp-allow-clear", "ZRTP allow clear",
          "Send / accept media in clear while the ZRTP keys are pending",
          FALSE, rw));
  /**
   * GstUvgRtpSink:zrtp-cache-file:
   *
   * File keeping this endpoint's ZID and, per peer, the retained secrets
   * and the SAS verified flag (lib/urtp/zrtp.h gives the format). Created
   * if missing, mode 0600. Without it nothing is retained and the SAS is
   * never reported verified in a later call.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_CACHE_FILE,
      g_param_spec_string ("zrtp-cache-file", "ZRTP cache file",
          "Retained-secret cache (ZID, per-peer secrets, SAS verified flag); "
          "NULL: none", NULL, rw));
  /**
   * GstUvgRtpSink:zrtp-zid:
   *
   * This endpoint's ZRTP identifier, 24 hex digits. When not set, the cache
   * file's is used, or a random one (kept for as long as the element runs).
   * Reads back the identifier in use once an exchange started.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_ZRTP_PROP_ZID,
      g_param_spec_string ("zrtp-zid", "ZRTP ZID",
          "ZRTP identifier, 24 hex digits (NULL: from the cache file, or "
          "random)", NULL, rw));
  /**
   * GstUvgRtpSink:zrtp-session:
   *
   * Elements of this process of the same kind (senders with senders,
   * receivers with receivers) that have the same session name talk to one
   * peer: the first to start an exchange does the Diffie-Hellman key
   * agreement, the others wait for it to be secure and then agree their
   * keys in Multistream mode (key agreement "Mult", no Diffie-Hellman, the
   * same ZID and SAS). %NULL: the element is on its own.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_SESSION,
      g_param_spec_string ("zrtp-session", "ZRTP session",
          "Name shared by the streams of one call with one peer (Multistream)",
          NULL, rw));
  /**
   * GstUvgRtpSink:zrtp-key-agreements:
   *
   * Key agreements to offer, best first, separated by commas: EC25 (ECDH
   * P-256) and DH3k (3072-bit finite field). %NULL: "EC25,DH3k". DH3k is
   * mandatory in ZRTP and always offered last if missing; Mult is offered
   * by the streams that join a #GstUvgRtpSink:zrtp-session.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENTS,
      g_param_spec_string ("zrtp-key-agreements", "ZRTP key agreements",
          "Key agreements to offer, best first: EC25, DH3k (NULL: EC25,DH3k)",
          NULL, rw));
  /**
   * GstUvgRtpSink:zrtp-state:
   *
   * Where the ZRTP exchange is: idle, discovery, key-agreement, secure or
   * failed.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_ZRTP_PROP_STATE,
      g_param_spec_enum ("zrtp-state", "ZRTP state", "State of the exchange",
          GST_TYPE_UVGRTP_ZRTP_STATE, GST_UVGRTP_ZRTP_STATE_IDLE, ro));
  /**
   * GstUvgRtpSink:zrtp-sas:
   *
   * The short authentication string the users compare by voice, once the
   * keys are agreed (%NULL before).
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_ZRTP_PROP_SAS,
      g_param_spec_string ("zrtp-sas", "ZRTP SAS",
          "Short authentication string to compare", NULL, ro));
  /**
   * GstUvgRtpSink:zrtp-sas-verified:
   *
   * This side holds the SAS verified: the users confirmed it in an earlier
   * call with this peer (or emitted #GstUvgRtpSink::zrtp-set-sas-verified)
   * and the retained secrets still match.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_SAS_VERIFIED,
      g_param_spec_boolean ("zrtp-sas-verified", "ZRTP SAS verified",
          "The SAS was verified with this peer", FALSE, ro));
  /**
   * GstUvgRtpSink:zrtp-peer-sas-verified:
   *
   * The peer says it holds the SAS verified.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_PEER_SAS_VERIFIED,
      g_param_spec_boolean ("zrtp-peer-sas-verified",
          "ZRTP peer SAS verified", "The peer holds the SAS verified", FALSE,
          ro));
  /**
   * GstUvgRtpSink:zrtp-cipher:
   *
   * Negotiated SRTP cipher: AES1 (AES-128) or AES3 (AES-256).
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_CIPHER,
      g_param_spec_string ("zrtp-cipher", "ZRTP cipher",
          "Negotiated cipher (AES1, AES3)", NULL, ro));
  /**
   * GstUvgRtpSink:zrtp-auth-tag:
   *
   * Negotiated SRTP authentication tag: HS80 or HS32.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_AUTH_TAG,
      g_param_spec_string ("zrtp-auth-tag", "ZRTP auth tag",
          "Negotiated SRTP authentication tag (HS80, HS32)", NULL, ro));
  /**
   * GstUvgRtpSink:zrtp-key-agreement:
   *
   * Negotiated key agreement: EC25, DH3k, or Mult for a stream that joined
   * its #GstUvgRtpSink:zrtp-session in Multistream mode.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENT,
      g_param_spec_string ("zrtp-key-agreement", "ZRTP key agreement",
          "Negotiated key agreement (EC25, DH3k, Mult)", NULL, ro));
  /**
   * GstUvgRtpSink:zrtp-sas-type:
   *
   * Negotiated SAS rendering: B32 (4 characters) or B256 (two PGP words).
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_SAS_TYPE,
      g_param_spec_string ("zrtp-sas-type", "ZRTP SAS type",
          "Negotiated SAS rendering (B32, B256)", NULL, ro));
  /**
   * GstUvgRtpSink:zrtp-peer-zid:
   *
   * The peer's ZRTP identifier (24 hex digits) once its Hello arrived.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_PEER_ZID,
      g_param_spec_string ("zrtp-peer-zid", "ZRTP peer ZID",
          "The peer's ZRTP identifier", NULL, ro));

  /**
   * GstUvgRtpSink::zrtp-set-sas-verified:
   * @element: the element
   * @verified: TRUE once the users compared the SAS and found it equal,
   *   FALSE to have it compared again
   *
   * Records the users' verdict on the SAS, in the session and in the
   * cache file. Returns FALSE before the keys are agreed or if the cache
   * file cannot be written (the session's flag is set all the same).
   */
  return g_signal_new_class_handler ("zrtp-set-sas-verified",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      handler, NULL, NULL, NULL, G_TYPE_BOOLEAN, 1, G_TYPE_BOOLEAN);
}

void
gst_uvgrtp_zrtp_settings_set_property (GstObject * element, GstUvgRtpZrtpSettings * s,
    GstUvgRtpZrtpProp prop, const GValue * value)
{
  switch (prop) {
    case GST_UVGRTP_ZRTP_PROP_ENABLE:
      s->enabled = g_value_get_boolean (value);
      break;
    case GST_UVGRTP_ZRTP_PROP_ALLOW_CLEAR:
      s->allow_clear = g_value_get_boolean (value);
      break;
    case GST_UVGRTP_ZRTP_PROP_CACHE_FILE:
      g_free (s->cache_file);
      s->cache_file = g_value_dup_string (value);
      break;
    case GST_UVGRTP_ZRTP_PROP_ZID:{
      const gchar *z = g_value_get_string (value);
      if (!z || !*z)
        s->have_zid = FALSE;
      else if (gst_uvgrtp_zrtp_parse_zid (z, s->zid))
        s->have_zid = TRUE;
      else
        GST_WARNING_OBJECT (element, "zrtp-zid must be %d hex digits, "
            "ignoring \"%s\"", 2 * URTP_ZRTP_ZID_LEN, z);
      break;
    }
    case GST_UVGRTP_ZRTP_PROP_SESSION:
      g_free (s->session);
      s->session = g_value_dup_string (value);
      break;
    case GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENTS:
      g_free (s->key_agreements);
      s->key_agreements = g_value_dup_string (value);
      break;
    default:
      g_assert_not_reached ();
  }
}

void
gst_uvgrtp_zrtp_settings_get_property (GstUvgRtpZrtpSettings * s,
    GstUvgRtpZrtpCtl * ctl, GstUvgRtpZrtpProp prop, GValue * value)
{
  urtp_zrtp_info_t info;

  switch (prop) {
    case GST_UVGRTP_ZRTP_PROP_ENABLE:
      g_value_set_boolean (value, s->enabled);
      return;
    case GST_UVGRTP_ZRTP_PROP_ALLOW_CLEAR:
      g_value_set_boolean (value, s->allow_clear);
      return;
    case GST_UVGRTP_ZRTP_PROP_CACHE_FILE:
      g_value_set_string (value, s->cache_file);
      return;
    case GST_UVGRTP_ZRTP_PROP_SESSION:
      g_value_set_string (value, s->session);
      return;
    case GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENTS:
      g_value_set_string (value, s->key_agreements);
      return;
    default:
      break;
  }

  memset (&info, 0, sizeof info);
  if (ctl)
    gst_uvgrtp_zrtp_ctl_get_info (ctl, &info);
  if (prop == GST_UVGRTP_ZRTP_PROP_ZID) {
    if (!gst_uvgrtp_zrtp_zid_is_zero (info.zid))
      g_value_take_string (value, gst_uvgrtp_zrtp_hex (info.zid,
              URTP_ZRTP_ZID_LEN));
    else if (s->have_zid)
      g_value_take_string (value, gst_uvgrtp_zrtp_hex (s->zid,
              URTP_ZRTP_ZID_LEN));
    else
      g_value_set_string (value, NULL);
  } else {
    gst_uvgrtp_zrtp_info_to_value (&info, prop, value);
  }
  gst_uvgrtp_zrtp_wipe (&info, sizeof info);
}

/* ------------------------------------------------------------------------ */
/* The endpoint                                                             */

typedef struct
{
  struct sockaddr_storage from;
  socklen_t from_len;
  gsize len;
  guint8 data[];
} Pkt;

typedef struct _Group Group;

struct _GstUvgRtpZrtpCtl
{
  gint ref;                     /* atomic */
  GstElement *element;          /* not owned; used until stop() */
  GstUvgRtpZrtpRole role;
  int fd;
  int efd;                      /* eventfd waking the thread */
  guint32 ssrc;
  gchar *cache_file;
  guint8 ka[URTP_ZRTP_MAX_PREFS];
  Group *group;                 /* NULL: not in a zrtp-session */
  GThread *thread;

  /* atomics, for the media path */
  gint secure;
  gint serial;

  GMutex lock;
  /* under lock */
  gboolean stop;
  gboolean have_zid;            /* set, from the cache, or pinned */
  guint8 zid[URTP_ZRTP_ZID_LEN];
  struct sockaddr_storage remote;       /* where the session sends */
  socklen_t remote_len;
  urtp_zrtp_t *zrtp;
  GBytes *peer_hello;           /* message part of the first Hello fed */
  gboolean start_pending;       /* create a session at start_at */
  gint64 start_at;
  gboolean failed_pending;      /* look at the failure after the call */
  gboolean secure_posted;
  gboolean join_logged;
  gboolean fatal;               /* a session could not be created */
  gint64 last_poke;
  urtp_zrtp_info_t last_info;   /* of the last session freed */
  gboolean have_last_info;
  guint64 old_retransmits;      /* of the sessions freed */
  GstUvgRtpZrtpCounters counters;
  GQueue inq;                   /* Pkt: received, for the thread */
  GQueue early;                 /* Pkt: before the session */
  GQueue messages;              /* GstMessage to post */
  guint notify;                 /* bit per GstUvgRtpZrtpProp */
};

struct _Group
{
  gchar *key;
  GstUvgRtpZrtpCtl *leader;     /* reference; NULL: none yet */
  guint members;
};

void
gst_uvgrtp_zrtp_ctl_unref (GstUvgRtpZrtpCtl * ctl)
{
  if (!ctl || !g_atomic_int_dec_and_test (&ctl->ref))
    return;
  g_free (ctl->cache_file);
  if (ctl->peer_hello)
    g_bytes_unref (ctl->peer_hello);
  gst_uvgrtp_zrtp_wipe (&ctl->last_info, sizeof ctl->last_info);
  g_queue_clear_full (&ctl->inq, g_free);
  g_queue_clear_full (&ctl->early, g_free);
  g_queue_clear_full (&ctl->messages, (GDestroyNotify) gst_message_unref);
  g_mutex_clear (&ctl->lock);
  g_free (ctl);
}

gboolean
gst_uvgrtp_zrtp_ctl_is_secure (GstUvgRtpZrtpCtl * ctl)
{
  return g_atomic_int_get (&ctl->secure) != 0;
}

gint
gst_uvgrtp_zrtp_ctl_serial (GstUvgRtpZrtpCtl * ctl)
{
  return g_atomic_int_get (&ctl->serial);
}

void
gst_uvgrtp_zrtp_ctl_get_counters (GstUvgRtpZrtpCtl * ctl,
    GstUvgRtpZrtpCounters * out)
{
  g_mutex_lock (&ctl->lock);
  *out = ctl->counters;
  out->retransmits = ctl->old_retransmits;
#ifdef HAVE_ENGINE
  if (ctl->zrtp) {
    urtp_zrtp_info_t info;
    urtp_zrtp_get_info (ctl->zrtp, &info);
    out->retransmits += info.stats.retransmits;
    gst_uvgrtp_zrtp_wipe (&info, sizeof info);
  }
#endif
  g_mutex_unlock (&ctl->lock);
}

static void
get_info_locked (GstUvgRtpZrtpCtl * ctl, urtp_zrtp_info_t * info)
{
#ifdef HAVE_ENGINE
  if (ctl->zrtp) {
    urtp_zrtp_get_info (ctl->zrtp, info);
    return;
  }
#endif
  if (ctl->have_last_info)
    *info = ctl->last_info;
  else
    memset (info, 0, sizeof *info);
}

void
gst_uvgrtp_zrtp_ctl_get_info (GstUvgRtpZrtpCtl * ctl, urtp_zrtp_info_t * info)
{
  g_mutex_lock (&ctl->lock);
  get_info_locked (ctl, info);
  g_mutex_unlock (&ctl->lock);
}

GstUvgRtpZrtpCtl *
gst_uvgrtp_zrtp_ctl_ref (GstUvgRtpZrtpCtl * ctl)
{
  g_atomic_int_inc (&ctl->ref);
  return ctl;
}

#ifdef HAVE_ENGINE

static gint64
now_ms (void)
{
  return g_get_monotonic_time () / 1000;
}

static void
wake (GstUvgRtpZrtpCtl * ctl)
{
  guint64 one = 1;

  if (ctl->efd >= 0 && write (ctl->efd, &one, sizeof one) < 0)
    GST_LOG ("eventfd write: %s", g_strerror (errno));
}

/* Parses zrtp-key-agreements. */
static gboolean
parse_key_agreements (const gchar * s, guint8 out[URTP_ZRTP_MAX_PREFS],
    gchar ** why)
{
  gchar **names;
  guint n = 0;
  gboolean ok = TRUE;

  memset (out, 0, URTP_ZRTP_MAX_PREFS);
  if (!s || !*s)
    return TRUE;
  names = g_strsplit_set (s, ", ", -1);
  for (gchar ** p = names; *p && ok; p++) {
    guint8 id;
    if (!**p)
      continue;
    if (g_ascii_strcasecmp (*p, "EC25") == 0) {
      id = URTP_ZRTP_KA_EC25;
    } else if (g_ascii_strcasecmp (*p, "DH3k") == 0) {
      id = URTP_ZRTP_KA_DH3K;
    } else {
      *why = g_strdup_printf ("unknown key agreement \"%s\" (EC25, DH3k)",
          *p);
      ok = FALSE;
      break;
    }
    if (memchr (out, id, n))
      continue;
    if (n == URTP_ZRTP_MAX_PREFS - 1) {
      *why = g_strdup ("too many key agreements");
      ok = FALSE;
      break;
    }
    out[n++] = id;
  }
  g_strfreev (names);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* The registry of zrtp-session groups                                      */

static GMutex registry_lock;
static GHashTable *registry;    /* key -> Group */

static Group *
group_join (const gchar * key)
{
  Group *g;

  g_mutex_lock (&registry_lock);
  if (!registry)
    registry = g_hash_table_new (g_str_hash, g_str_equal);
  g = g_hash_table_lookup (registry, key);
  if (!g) {
    g = g_new0 (Group, 1);
    g->key = g_strdup (key);
    g_hash_table_insert (registry, g->key, g);
  }
  g->members++;
  g_mutex_unlock (&registry_lock);
  return g;
}

static void
group_leave (Group * g, GstUvgRtpZrtpCtl * ctl)
{
  GstUvgRtpZrtpCtl *old = NULL;

  g_mutex_lock (&registry_lock);
  if (g->leader == ctl) {
    old = g->leader;
    g->leader = NULL;
  }
  if (--g->members == 0) {
    g_hash_table_remove (registry, g->key);
    g_free (g->key);
    g_free (g);
  }
  g_mutex_unlock (&registry_lock);
  /* outside the registry lock: the last reference frees */
  gst_uvgrtp_zrtp_ctl_unref (old);
}

/* ------------------------------------------------------------------------ */
/* The session (under lock)                                                 */

static void
bump_serial (GstUvgRtpZrtpCtl * ctl)
{
  g_atomic_int_inc (&ctl->serial);
}

static gboolean
is_type (const guint8 * pkt, gsize len, const gchar * type)
{
  return len >= ZRTP_TYPE_OFFSET + 8 &&
      memcmp (pkt + ZRTP_TYPE_OFFSET, type, 8) == 0;
}

/* Whether a Hello packet differs from the one the session was fed (the
 * message itself: the packet header's sequence number and the CRC change
 * with every retransmission). */
static gboolean
hello_differs (GstUvgRtpZrtpCtl * ctl, const guint8 * pkt, gsize len)
{
  gsize mlen;
  const guint8 *m;

  if (!ctl->peer_hello)
    return TRUE;
  m = g_bytes_get_data (ctl->peer_hello, &mlen);
  return len < 16 || len - 16 != mlen || memcmp (pkt + 12, m, mlen) != 0;
}

static void
zrtp_send_cb (void *user, const uint8_t * pkt, size_t len)
{
  GstUvgRtpZrtpCtl *ctl = user;
  gchar type[9];
  ssize_t r;

  GST_LOG_OBJECT (ctl->element, "sending %s (%" G_GSIZE_FORMAT " bytes)",
      gst_uvgrtp_zrtp_type_name (pkt, len, type), len);
  ctl->counters.sent++;
  r = sendto (ctl->fd, pkt, len, MSG_DONTWAIT,
      (const struct sockaddr *) &ctl->remote, ctl->remote_len);
  /* an ICMP error for an earlier datagram is reported by this call, which
   * then sends nothing */
  if (r < 0 && errno == ECONNREFUSED)
    r = sendto (ctl->fd, pkt, len, MSG_DONTWAIT,
        (const struct sockaddr *) &ctl->remote, ctl->remote_len);
  if (r < 0)
    GST_DEBUG_OBJECT (ctl->element, "sending ZRTP: %s", g_strerror (errno));
}

static const gchar *
keys_profile (GstUvgRtpZrtpCtl * ctl)
{
  urtp_zrtp_keys_t keys;
  const gchar *name = NULL;

  if (ctl->zrtp && urtp_zrtp_get_keys (ctl->zrtp, &keys) == 0) {
    name = urtp_srtp_profile_name (keys.profile);
    gst_uvgrtp_zrtp_wipe (&keys, sizeof keys);
  }
  return name;
}

static void
zrtp_event_cb (void *user, urtp_zrtp_event_t ev)
{
  GstUvgRtpZrtpCtl *ctl = user;
  urtp_zrtp_info_t info;

  switch (ev) {
    case URTP_ZRTP_EV_KEYS_READY:
      bump_serial (ctl);
      ctl->notify |= NOTIFY_INFO;
      break;
    case URTP_ZRTP_EV_SECURE:
      if (ctl->secure_posted)
        break;
      ctl->secure_posted = TRUE;
      g_atomic_int_set (&ctl->secure, 1);
      urtp_zrtp_get_info (ctl->zrtp, &info);
      GST_INFO_OBJECT (ctl->element, "secure, SAS \"%s\" (%s, %s, %s)%s",
          info.sas, info.cipher, info.auth_tag, info.key_agreement,
          info.sas_verified ? ", verified" : "");
      g_queue_push_tail (&ctl->messages,
          gst_uvgrtp_zrtp_make_message (GST_OBJECT (ctl->element), &info,
              keys_profile (ctl)));
      gst_uvgrtp_zrtp_wipe (&info, sizeof info);
      ctl->notify |= NOTIFY_INFO;
      break;
    case URTP_ZRTP_EV_FAILED:
      /* judged once the call returns (a timeout restarts quietly) */
      g_atomic_int_set (&ctl->secure, 0);
      bump_serial (ctl);
      ctl->failed_pending = TRUE;
      ctl->notify |= NOTIFY_INFO;
      break;
    case URTP_ZRTP_EV_CACHE_MISMATCH:
      GST_WARNING_OBJECT (ctl->element, "retained secrets do not match the "
          "peer's: the SAS must be compared");
      break;
  }
}

static void
count_rc (GstUvgRtpZrtpCtl * ctl, int rc)
{
  switch (rc) {
    case 0:
      break;
    case -EBADMSG:
      ctl->counters.bad++;
      break;
    case -EPERM:
      ctl->counters.auth_fail++;
      break;
    default:
      ctl->counters.unexpected++;
      break;
  }
}

/* Frees the session, keeping what it reported. */
static void
drop_session_locked (GstUvgRtpZrtpCtl * ctl)
{
  if (!ctl->zrtp)
    return;
  urtp_zrtp_get_info (ctl->zrtp, &ctl->last_info);
  ctl->have_last_info = TRUE;
  ctl->old_retransmits += ctl->last_info.stats.retransmits;
  g_clear_pointer (&ctl->zrtp, urtp_zrtp_free);
  g_clear_pointer (&ctl->peer_hello, g_bytes_unref);
  g_atomic_int_set (&ctl->secure, 0);
  bump_serial (ctl);
  ctl->secure_posted = FALSE;
  ctl->failed_pending = FALSE;
  ctl->notify |= NOTIFY_INFO;
}

/* After every call into the session: a failure is posted, except a
 * timeout (the peer never answered, or went away), after which a sender
 * starts over and a receiver waits for the next Hello. */
static void
after_call_locked (GstUvgRtpZrtpCtl * ctl, gint64 now)
{
  urtp_zrtp_info_t info;

  if (!ctl->failed_pending || !ctl->zrtp)
    return;
  ctl->failed_pending = FALSE;
  urtp_zrtp_get_info (ctl->zrtp, &info);
  if (info.error == URTP_ZRTP_ERR_TIMEOUT) {
    if (ctl->role == GST_UVGRTP_ZRTP_SENDER) {
      GST_INFO_OBJECT (ctl->element, "no answer from the peer%s: starting "
          "over", info.error_from_peer ? " (it gave up)" : "");
      ctl->start_pending = TRUE;
      ctl->start_at = now;
      ctl->counters.restarts++;
    } else {
      GST_INFO_OBJECT (ctl->element, "the peer stopped answering%s: "
          "waiting for a new Hello", info.error_from_peer ?
          " (it gave up)" : "");
    }
  } else {
    GST_WARNING_OBJECT (ctl->element, "ZRTP failed: 0x%02x %s%s", info.error,
        GST_STR_NULL (urtp_zrtp_error_name (info.error)),
        info.error_from_peer ? " (from the peer)" : "");
    g_queue_push_tail (&ctl->messages,
        gst_uvgrtp_zrtp_make_message (GST_OBJECT (ctl->element), &info,
            NULL));
  }
  gst_uvgrtp_zrtp_wipe (&info, sizeof info);
}

static int
new_session (GstUvgRtpZrtpCtl * ctl, const urtp_zrtp_t * parent,
    urtp_zrtp_t ** out)
{
  urtp_zrtp_config_t cfg;

  memset (&cfg, 0, sizeof cfg);
  cfg.role = URTP_ZRTP_ROLE_AUTO;
  cfg.ssrc = ctl->ssrc;
  /* a Multistream stream has its parent's ZID */
  cfg.zid = (!parent && ctl->have_zid) ? ctl->zid : NULL;
  cfg.cache_path = ctl->cache_file;
  memcpy (cfg.key_agreements, ctl->ka, sizeof cfg.key_agreements);
  cfg.multistream_parent = parent;
  cfg.send = zrtp_send_cb;
  cfg.on_event = zrtp_event_cb;
  cfg.user = ctl;
  return urtp_zrtp_new (&cfg, out);
}

static void
queue_error (GstUvgRtpZrtpCtl * ctl, int rc)
{
  GError *err;
  gchar *dbg;

  if (rc == -EIO && ctl->cache_file)
    err = g_error_new (GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ_WRITE,
        "Could not use the ZRTP cache file \"%s\" (property "
        "'zrtp-cache-file')", ctl->cache_file);
  else
    err = g_error_new (GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_INIT,
        "Could not create the ZRTP session");
  dbg = g_strdup_printf ("urtp_zrtp_new: %s", g_strerror (-rc));
  g_queue_push_tail (&ctl->messages,
      gst_message_new_error (GST_OBJECT (ctl->element), err, dbg));
  g_error_free (err);
  g_free (dbg);
}

/* Feeds one packet to the session; a Hello is remembered the first time. */
static void
feed_locked (GstUvgRtpZrtpCtl * ctl, const guint8 * data, gsize len,
    gint64 now)
{
  gboolean hello = is_type (data, len, "Hello   ");
  gchar type[9];
  int rc;

  rc = urtp_zrtp_recv (ctl->zrtp, data, len, (uint64_t) now);
  GST_LOG_OBJECT (ctl->element, "received %s (%" G_GSIZE_FORMAT " bytes): "
      "%d, state %s", gst_uvgrtp_zrtp_type_name (data, len, type), len, rc,
      urtp_zrtp_state_name (urtp_zrtp_state (ctl->zrtp)));
  count_rc (ctl, rc);
  if (hello && !ctl->peer_hello && rc != -EBADMSG && len >= 16)
    ctl->peer_hello = g_bytes_new (data + 12, len - 16);
}

/* The stream this one was to join in Multistream mode failed for good
 * (an error, not a timeout): so does this one, with the leader's error. */
static void
post_leader_failed_locked (GstUvgRtpZrtpCtl * ctl, urtp_zrtp_info_t * li)
{
  GstMessage *m = gst_uvgrtp_zrtp_make_message (GST_OBJECT (ctl->element),
      li, NULL);
  const gchar *why = gst_structure_get_string (gst_message_get_structure (m),
      "reason");
  /* the key is "send/NAME" or "recv/NAME" */
  const gchar *name = strchr (ctl->group->key, '/') + 1;
  gchar *reason = g_strdup_printf ("the first stream of ZRTP session \"%s\" "
      "failed: %s", name, GST_STR_NULL (why));

  GST_WARNING_OBJECT (ctl->element, "%s", reason);
  gst_structure_set (gst_message_writable_structure (m), "reason",
      G_TYPE_STRING, reason, NULL);
  g_queue_push_tail (&ctl->messages, m);
  g_free (reason);
  /* the properties show the failure too */
  ctl->last_info = *li;
  ctl->have_last_info = TRUE;
  gst_uvgrtp_zrtp_wipe (li, sizeof *li);
  ctl->start_pending = FALSE;
  ctl->fatal = TRUE;
  g_queue_clear_full (&ctl->early, g_free);
}

/* Creates and starts a session: on its own, or in Multistream mode with
 * the group's first stream once that is secure (else tried again in
 * JOIN_POLL_MS). May release the lock for a while. */
static void
try_start_locked (GstUvgRtpZrtpCtl * ctl, gint64 now)
{
  urtp_zrtp_t *z = NULL;
  gboolean joined = FALSE;
  Pkt *p;
  int rc = 0;

  drop_session_locked (ctl);
  /* a new exchange: the state shown is idle until it starts */
  ctl->have_last_info = FALSE;
  if (ctl->group) {
    GstUvgRtpZrtpCtl *leader = NULL;

    g_mutex_lock (&registry_lock);
    if (!ctl->group->leader)
      ctl->group->leader = gst_uvgrtp_zrtp_ctl_ref (ctl);
    if (ctl->group->leader != ctl)
      leader = gst_uvgrtp_zrtp_ctl_ref (ctl->group->leader);
    g_mutex_unlock (&registry_lock);

    if (leader) {
      urtp_zrtp_info_t li;
      gboolean leader_failed = FALSE;

      /* never two endpoint locks at once: the leader's alone */
      g_mutex_unlock (&ctl->lock);
      g_mutex_lock (&leader->lock);
      if (leader->zrtp && urtp_zrtp_state (leader->zrtp) == URTP_ZRTP_SECURE) {
        rc = new_session (ctl, leader->zrtp, &z);
        joined = TRUE;
      } else if (leader->zrtp &&
          urtp_zrtp_state (leader->zrtp) == URTP_ZRTP_FAILED) {
        /* a timeout is followed by a fresh attempt; anything else is final */
        urtp_zrtp_get_info (leader->zrtp, &li);
        leader_failed = li.error != URTP_ZRTP_ERR_TIMEOUT;
      }
      g_mutex_unlock (&leader->lock);
      gst_uvgrtp_zrtp_ctl_unref (leader);
      g_mutex_lock (&ctl->lock);
      if (ctl->stop) {
        urtp_zrtp_free (z);
        return;
      }
      if (leader_failed) {
        post_leader_failed_locked (ctl, &li);
        return;
      }
      if (!z && rc == 0) {
        if (!ctl->join_logged)
          GST_INFO_OBJECT (ctl->element, "waiting for the first stream of "
              "ZRTP session \"%s\" to be secure", ctl->group->key);
        ctl->join_logged = TRUE;
        ctl->start_at = now + JOIN_POLL_MS;
        return;
      }
    } else {
      rc = new_session (ctl, NULL, &z);
    }
  } else {
    rc = new_session (ctl, NULL, &z);
  }
  ctl->start_pending = FALSE;
  if (rc != 0) {
    GST_ERROR_OBJECT (ctl->element, "urtp_zrtp_new: %s", g_strerror (-rc));
    queue_error (ctl, rc);
    ctl->fatal = TRUE;
    g_queue_clear_full (&ctl->early, g_free);
    return;
  }
  ctl->zrtp = z;
  ctl->join_logged = FALSE;
  g_atomic_int_set (&ctl->secure, 0);
  /* the same ZID for every session of this run (a Multistream one has
   * its parent's) */
  if (!ctl->have_zid && !joined) {
    urtp_zrtp_info_t info;
    urtp_zrtp_get_info (z, &info);
    memcpy (ctl->zid, info.zid, URTP_ZRTP_ZID_LEN);
    ctl->have_zid = TRUE;
    gst_uvgrtp_zrtp_wipe (&info, sizeof info);
  }
  GST_INFO_OBJECT (ctl->element, "starting ZRTP%s, SSRC 0x%08x",
      joined ? " (Multistream)" : "", ctl->ssrc);
  ctl->notify |= NOTIFY_INFO;
  urtp_zrtp_start (z, (uint64_t) now);
  while (ctl->zrtp == z && (p = g_queue_pop_head (&ctl->early))) {
    feed_locked (ctl, p->data, p->len, now);
    g_free (p);
  }
  after_call_locked (ctl, now);
}

/* The peer started a new exchange (its Hello is not the one our session
 * holds): ours is dead. A receiver answers the new exchange, fed with this
 * Hello. A sender starts afresh without it: the receiver, seeing our new
 * Hello, starts over in turn, and its Hello held here would be stale; so
 * the two converge instead of restarting each other for ever. */
static void
restart_with_locked (GstUvgRtpZrtpCtl * ctl, const Pkt * p, gint64 now)
{
  GST_INFO_OBJECT (ctl->element, "the peer started a new exchange: "
      "starting over");
  drop_session_locked (ctl);
  ctl->counters.restarts++;
  g_queue_clear_full (&ctl->early, g_free);
  if (ctl->role == GST_UVGRTP_ZRTP_RECEIVER) {
    g_queue_push_tail (&ctl->early, g_memdup2 (p, sizeof *p + p->len));
    ctl->remote = p->from;
    ctl->remote_len = p->from_len;
  }
  ctl->start_pending = TRUE;
  ctl->start_at = now;
}

static void
handle_packet_locked (GstUvgRtpZrtpCtl * ctl, const Pkt * p, gint64 now)
{
  gboolean hello = is_type (p->data, p->len, "Hello   ");

  ctl->counters.received++;
  if (ctl->fatal)
    return;
  if (!ctl->zrtp) {
    /* a sender between sessions: the receiver repeats its Hello */
    if (ctl->role == GST_UVGRTP_ZRTP_SENDER) {
      ctl->counters.unexpected++;
      return;
    }
    /* a Hello begins an exchange: what came before it is stale */
    if (hello) {
      g_queue_clear_full (&ctl->early, g_free);
    } else if (g_queue_is_empty (&ctl->early)) {
      ctl->counters.unexpected++;
      return;
    }
    if (g_queue_get_length (&ctl->early) < MAX_EARLY)
      g_queue_push_tail (&ctl->early, g_memdup2 (p, sizeof *p + p->len));
    if (hello) {
      ctl->remote = p->from;
      ctl->remote_len = p->from_len;
      if (!ctl->start_pending)
        ctl->start_at = now;
      ctl->start_pending = TRUE;
    }
    return;
  }

  if (hello && hello_differs (ctl, p->data, p->len) && (ctl->peer_hello ||
          urtp_zrtp_state (ctl->zrtp) == URTP_ZRTP_FAILED)) {
    restart_with_locked (ctl, p, now);
    return;
  }
  if (urtp_zrtp_state (ctl->zrtp) == URTP_ZRTP_FAILED) {
    ctl->counters.unexpected++;
    return;
  }
  feed_locked (ctl, p->data, p->len, now);
  after_call_locked (ctl, now);
}

/* The sender's socket: the peer's answers. */
static void
recv_socket (GstUvgRtpZrtpCtl * ctl)
{
  union
  {
    Pkt p;
    guint8 raw[sizeof (Pkt) + URTP_ZRTP_MAX_PACKET + 1];
  } u;

  for (int i = 0; i < 64; i++) {
    ssize_t n;

    u.p.from_len = sizeof u.p.from;
    n = recvfrom (ctl->fd, u.p.data, URTP_ZRTP_MAX_PACKET + 1,
        MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &u.p.from,
        &u.p.from_len);
    if (n < 0) {
      /* ECONNREFUSED: an ICMP error for an earlier send, consumed now */
      if (errno == EINTR || errno == ECONNREFUSED)
        continue;
      return;
    }
    if ((gsize) n > URTP_ZRTP_MAX_PACKET || !urtp_zrtp_is_zrtp (u.p.data, n))
      continue;
    u.p.len = (gsize) n;
    g_mutex_lock (&ctl->lock);
    handle_packet_locked (ctl, &u.p, now_ms ());
    g_mutex_unlock (&ctl->lock);
  }
}

static gpointer
ctl_thread (gpointer data)
{
  GstUvgRtpZrtpCtl *ctl = data;
  struct pollfd pfd[2];
  nfds_t nfds = 1;

  pfd[0].fd = ctl->efd;
  pfd[0].events = POLLIN;
  if (ctl->role == GST_UVGRTP_ZRTP_SENDER) {
    pfd[1].fd = ctl->fd;
    pfd[1].events = POLLIN;
    nfds = 2;
  }

  g_mutex_lock (&ctl->lock);
  while (!ctl->stop) {
    gint64 now = now_ms (), due = G_MAXINT64;
    GQueue msgs;
    GstMessage *msg;
    Pkt *p;
    guint notify;
    int timeout;

    while ((p = g_queue_pop_head (&ctl->inq))) {
      handle_packet_locked (ctl, p, now);
      g_free (p);
    }
    if (ctl->start_pending && !ctl->fatal && now >= ctl->start_at)
      try_start_locked (ctl, now);
    if (ctl->stop)
      break;
    if (ctl->zrtp && urtp_zrtp_next_timeout (ctl->zrtp) <= (uint64_t) now) {
      urtp_zrtp_tick (ctl->zrtp, (uint64_t) now);
      after_call_locked (ctl, now);
    }
    if (ctl->zrtp && urtp_zrtp_next_timeout (ctl->zrtp) != UINT64_MAX)
      due = (gint64) urtp_zrtp_next_timeout (ctl->zrtp);
    if (ctl->start_pending && !ctl->fatal)
      due = MIN (due, ctl->start_at);

    msgs = ctl->messages;
    g_queue_init (&ctl->messages);
    notify = ctl->notify;
    ctl->notify = 0;
    g_mutex_unlock (&ctl->lock);

    while ((msg = g_queue_pop_head (&msgs)))
      gst_element_post_message (ctl->element, msg);
    for (guint i = 0; i < GST_UVGRTP_ZRTP_N_PROPS; i++)
      if (notify & (1u << i))
        g_object_notify (G_OBJECT (ctl->element), prop_names[i]);

    if (due == G_MAXINT64)
      timeout = -1;
    else
      timeout = (int) CLAMP (due - now_ms (), 0, G_MAXINT);
    if (poll (pfd, nfds, timeout) > 0) {
      if (pfd[0].revents & POLLIN) {
        guint64 v;
        if (read (ctl->efd, &v, sizeof v) < 0)
          GST_LOG ("eventfd read: %s", g_strerror (errno));
      }
      if (nfds == 2 && (pfd[1].revents & (POLLIN | POLLERR)))
        recv_socket (ctl);
    }
    g_mutex_lock (&ctl->lock);
  }
  g_mutex_unlock (&ctl->lock);
  return NULL;
}

GstUvgRtpZrtpCtl *
gst_uvgrtp_zrtp_ctl_start (GstElement * element,
    const GstUvgRtpZrtpSettings * s, GstUvgRtpZrtpRole role, int fd,
    const struct sockaddr *remote, socklen_t remote_len, guint32 ssrc)
{
  GstUvgRtpZrtpCtl *ctl;
  guint8 ka[URTP_ZRTP_MAX_PREFS];
  gchar *why = NULL;

  ensure_debug ();
  if (!parse_key_agreements (s->key_agreements, ka, &why)) {
    GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS,
        ("Invalid zrtp-key-agreements \"%s\": %s (property "
            "'zrtp-key-agreements')", s->key_agreements, why), (NULL));
    g_free (why);
    return NULL;
  }

  ctl = g_new0 (GstUvgRtpZrtpCtl, 1);
  ctl->ref = 1;
  ctl->element = element;
  ctl->role = role;
  ctl->fd = fd;
  ctl->ssrc = ssrc;
  ctl->cache_file = g_strdup (s->cache_file && *s->cache_file ?
      s->cache_file : NULL);
  memcpy (ctl->ka, ka, sizeof ka);
  ctl->have_zid = s->have_zid;
  memcpy (ctl->zid, s->zid, sizeof ctl->zid);
  if (remote && remote_len <= sizeof ctl->remote) {
    memcpy (&ctl->remote, remote, remote_len);
    ctl->remote_len = remote_len;
  }
  g_mutex_init (&ctl->lock);
  g_queue_init (&ctl->inq);
  g_queue_init (&ctl->early);
  g_queue_init (&ctl->messages);
  ctl->efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (ctl->efd < 0) {
    GST_ELEMENT_ERROR (element, RESOURCE, FAILED, (NULL),
        ("eventfd: %s", g_strerror (errno)));
    gst_uvgrtp_zrtp_ctl_unref (ctl);
    return NULL;
  }
  if (s->session && *s->session) {
    gchar *key = g_strdup_printf ("%s/%s",
        role == GST_UVGRTP_ZRTP_SENDER ? "send" : "recv", s->session);
    ctl->group = group_join (key);
    g_free (key);
  }
  /* a sender starts at once; a receiver on the first Hello */
  ctl->start_pending = role == GST_UVGRTP_ZRTP_SENDER;
  ctl->start_at = now_ms ();
  ctl->thread = g_thread_new ("uvgrtp-zrtp", ctl_thread, ctl);
  return ctl;
}

void
gst_uvgrtp_zrtp_ctl_stop (GstUvgRtpZrtpCtl * ctl)
{
  if (!ctl || !ctl->thread)
    return;
  g_mutex_lock (&ctl->lock);
  ctl->stop = TRUE;
  g_mutex_unlock (&ctl->lock);
  wake (ctl);
  g_thread_join (ctl->thread);
  ctl->thread = NULL;

  g_mutex_lock (&ctl->lock);
  drop_session_locked (ctl);
  g_queue_clear_full (&ctl->inq, g_free);
  g_queue_clear_full (&ctl->early, g_free);
  g_queue_clear_full (&ctl->messages, (GDestroyNotify) gst_message_unref);
  ctl->notify = 0;
  ctl->start_pending = FALSE;
  close (ctl->efd);
  ctl->efd = -1;
  ctl->fd = -1;
  g_mutex_unlock (&ctl->lock);
  if (ctl->group) {
    group_leave (ctl->group, ctl);
    ctl->group = NULL;
  }
}

void
gst_uvgrtp_zrtp_ctl_recv (GstUvgRtpZrtpCtl * ctl, const guint8 * pkt,
    gsize len, const struct sockaddr_storage *from)
{
  Pkt *p;

  if (len > URTP_ZRTP_MAX_PACKET)
    return;
  p = g_malloc (sizeof *p + len);
  p->from = *from;
  p->from_len = from->ss_family == AF_INET6 ?
      sizeof (struct sockaddr_in6) : sizeof (struct sockaddr_in);
  p->len = len;
  memcpy (p->data, pkt, len);
  g_mutex_lock (&ctl->lock);
  if (ctl->stop || g_queue_get_length (&ctl->inq) >= MAX_INQ) {
    ctl->counters.received++;
    ctl->counters.unexpected++;
    g_free (p);
  } else {
    g_queue_push_tail (&ctl->inq, p);
  }
  g_mutex_unlock (&ctl->lock);
  wake (ctl);
}

void
gst_uvgrtp_zrtp_ctl_media_without_keys (GstUvgRtpZrtpCtl * ctl,
    const struct sockaddr_storage *from)
{
  gint64 now = now_ms ();
  gboolean poke = FALSE;

  g_mutex_lock (&ctl->lock);
  if (!ctl->stop && !ctl->fatal && !ctl->start_pending &&
      g_queue_is_empty (&ctl->inq) &&
      now - ctl->last_poke >= POKE_INTERVAL_MS) {
    if (!ctl->zrtp) {
      poke = TRUE;
    } else if (urtp_zrtp_state (ctl->zrtp) == URTP_ZRTP_FAILED) {
      urtp_zrtp_info_t info;
      urtp_zrtp_get_info (ctl->zrtp, &info);
      /* not after a real failure: that needs a new Hello from the peer */
      poke = info.error == URTP_ZRTP_ERR_TIMEOUT;
      gst_uvgrtp_zrtp_wipe (&info, sizeof info);
    }
  }
  if (poke) {
    GST_INFO_OBJECT (ctl->element, "media without keys: starting ZRTP "
        "towards its sender");
    ctl->last_poke = now;
    ctl->remote = *from;
    ctl->remote_len = from->ss_family == AF_INET6 ?
        sizeof (struct sockaddr_in6) : sizeof (struct sockaddr_in);
    g_queue_clear_full (&ctl->early, g_free);
    ctl->start_pending = TRUE;
    ctl->start_at = now;
  }
  g_mutex_unlock (&ctl->lock);
  if (poke)
    wake (ctl);
}

void
gst_uvgrtp_zrtp_ctl_peer_srtp_ok (GstUvgRtpZrtpCtl * ctl)
{
  g_mutex_lock (&ctl->lock);
  if (ctl->zrtp && urtp_zrtp_state (ctl->zrtp) == URTP_ZRTP_KEY_AGREEMENT)
    urtp_zrtp_peer_srtp_ok (ctl->zrtp);
  g_mutex_unlock (&ctl->lock);
  /* the thread posts what it caused */
  wake (ctl);
}

gboolean
gst_uvgrtp_zrtp_ctl_sync_srtp (GstUvgRtpZrtpCtl * ctl, urtp_srtp_t * ctx,
    gint * serial, gboolean need_secure, guint32 ssrc, guint replay_window)
{
  urtp_zrtp_keys_t keys;
  gboolean have = FALSE, secure = FALSE;
  gint cur;

  if (g_atomic_int_get (&ctl->serial) == *serial)
    return ctx->session != NULL;

  g_mutex_lock (&ctl->lock);
  /* bumped under this lock: the keys read here go with this number */
  cur = g_atomic_int_get (&ctl->serial);
  if (ctl->zrtp) {
    have = urtp_zrtp_get_keys (ctl->zrtp, &keys) == 0;
    secure = urtp_zrtp_state (ctl->zrtp) == URTP_ZRTP_SECURE;
  }
  g_mutex_unlock (&ctl->lock);

  /* the keys changed: the old ones are gone */
  gst_uvgrtp_srtp_close (ctx);
  if (have && need_secure && !secure) {
    /* not yet: *serial stays, so the next call looks again */
    gst_uvgrtp_zrtp_wipe (&keys, sizeof keys);
    return FALSE;
  }
  *serial = cur;
  if (have) {
    urtp_srtp_config_t cfg;
    int r;

    memset (&cfg, 0, sizeof cfg);
    cfg.profile = keys.profile;
    cfg.key_len = keys.key_len;
    if (ctl->role == GST_UVGRTP_ZRTP_SENDER) {
      cfg.dir = URTP_SRTP_OUTBOUND;
      cfg.key = keys.local;
      cfg.ssrc = ssrc;
    } else {
      cfg.dir = URTP_SRTP_INBOUND;
      cfg.key = keys.remote;
      cfg.any_ssrc = TRUE;
      cfg.replay_window = replay_window;
    }
    r = urtp_srtp_init (ctx, &cfg);
    gst_uvgrtp_zrtp_wipe (&keys, sizeof keys);
    if (r < 0) {
      /* only out of memory is possible here; no error message: the
       * caller may hold the element's lock, which posting takes */
      GST_ERROR_OBJECT (ctl->element, "could not set up SRTP with the "
          "agreed keys: %s", g_strerror (-r));
      memset (ctx, 0, sizeof *ctx);
      return FALSE;
    }
    GST_INFO_OBJECT (ctl->element, "SRTP keys in place (%s, %s)",
        urtp_srtp_profile_name (ctx->profile),
        ctl->role == GST_UVGRTP_ZRTP_SENDER ? "protecting" : "unprotecting");
  }
  return ctx->session != NULL;
}

gboolean
gst_uvgrtp_zrtp_ctl_set_sas_verified (GstUvgRtpZrtpCtl * ctl,
    gboolean verified)
{
  int rc = -EAGAIN;

  g_mutex_lock (&ctl->lock);
  if (ctl->zrtp)
    rc = urtp_zrtp_set_sas_verified (ctl->zrtp, verified);
  g_mutex_unlock (&ctl->lock);
  if (rc == -EAGAIN) {
    GST_WARNING_OBJECT (ctl->element, "no SAS to verify yet");
    return FALSE;
  }
  if (rc != 0)
    GST_WARNING_OBJECT (ctl->element, "could not write the cache file: %s",
        g_strerror (-rc));
  else
    GST_INFO_OBJECT (ctl->element, "SAS marked %s", verified ? "verified" :
        "not verified");
  g_object_notify (G_OBJECT (ctl->element), "zrtp-sas-verified");
  return rc == 0;
}

#else /* !HAVE_ENGINE */

GstUvgRtpZrtpCtl *
gst_uvgrtp_zrtp_ctl_start (GstElement * element,
    const GstUvgRtpZrtpSettings * s, GstUvgRtpZrtpRole role, int fd,
    const struct sockaddr *remote, socklen_t remote_len, guint32 ssrc)
{
  GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS,
      ("zrtp is set, but this build of gst-uvgrtp has no ZRTP (it needs "
          "OpenSSL libcrypto and libsrtp2) (property 'zrtp')"), (NULL));
  return NULL;
}

void
gst_uvgrtp_zrtp_ctl_stop (GstUvgRtpZrtpCtl * ctl)
{
}

void
gst_uvgrtp_zrtp_ctl_recv (GstUvgRtpZrtpCtl * ctl, const guint8 * pkt,
    gsize len, const struct sockaddr_storage *from)
{
}

void
gst_uvgrtp_zrtp_ctl_media_without_keys (GstUvgRtpZrtpCtl * ctl,
    const struct sockaddr_storage *from)
{
}

void
gst_uvgrtp_zrtp_ctl_peer_srtp_ok (GstUvgRtpZrtpCtl * ctl)
{
}

gboolean
gst_uvgrtp_zrtp_ctl_sync_srtp (GstUvgRtpZrtpCtl * ctl, urtp_srtp_t * ctx,
    gint * serial, gboolean need_secure, guint32 ssrc, guint replay_window)
{
  return FALSE;
}

gboolean
gst_uvgrtp_zrtp_ctl_set_sas_verified (GstUvgRtpZrtpCtl * ctl,
    gboolean verified)
{
  return FALSE;
}

#endif /* HAVE_ENGINE */
