/* SPDX-License-Identifier: BSD-2-Clause */
/* ZRTP shared by uvgrtpsink, uvgrtpsrc and uvgrtpzrtp: see the header. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "gstuvgrtpzrtpctl.h"

/* lib/ has the endpoint when it has both ZRTP and SRTP */
#ifdef URTP_HAVE_ZRTP_EP
#define HAVE_ENGINE 1
#endif

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_zrtp_ctl_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_zrtp_ctl_debug

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
      /* A timeout is no failure: no message was posted, and the endpoint
       * starts over by itself (a sender at once, a receiver on the peer's
       * next Hello or media). Until then there is no exchange: idle. */
      if (info->state == URTP_ZRTP_FAILED
          && info->error == URTP_ZRTP_ERR_TIMEOUT)
        g_value_set_enum (value, GST_UVGRTP_ZRTP_STATE_IDLE);
      else
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
   * GstUvgRtp:zrtp:
   *
   * Agree SRTP keys with the peer by ZRTP (RFC 6189) on the element's own
   * UDP socket and protect the stream with them. uvgrtpsink starts the
   * exchange as it starts, sending Hello to #GstUvgRtpSink:host and
   * listening for the answers on its socket; uvgrtpsrc
   * answers the first Hello it receives, to the address it came from, and
   * unprotects the stream with the sender's key. Until the stream is
   * secure, the sink sends no media and the source drops what arrives in
   * clear, unless #GstUvgRtp:zrtp-allow-clear is set. Cannot be
   * combined with srtp-key. Read when the element starts.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_ZRTP_PROP_ENABLE,
      g_param_spec_boolean ("zrtp", "ZRTP",
          "Agree SRTP keys by ZRTP on the element's socket", FALSE, rw));
  /**
   * GstUvgRtp:zrtp-allow-clear:
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
   * GstUvgRtp:zrtp-cache-file:
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
   * GstUvgRtp:zrtp-zid:
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
   * GstUvgRtp:zrtp-session:
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
   * GstUvgRtp:zrtp-key-agreements:
   *
   * Key agreements to offer, best first, separated by commas: EC25 (ECDH
   * P-256) and DH3k (3072-bit finite field). %NULL: "EC25,DH3k". DH3k is
   * mandatory in ZRTP and always offered last if missing; Mult is offered
   * by the streams that join a #GstUvgRtp:zrtp-session.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENTS,
      g_param_spec_string ("zrtp-key-agreements", "ZRTP key agreements",
          "Key agreements to offer, best first: EC25, DH3k (NULL: EC25,DH3k)",
          NULL, rw));
  /**
   * GstUvgRtp:zrtp-state:
   *
   * Where the ZRTP exchange is: idle, discovery, key-agreement, secure or
   * failed. failed only after a real failure, when a `uvgrtp-zrtp` failed
   * message was posted; an exchange that timed out (the peer never
   * answered, or went away) is followed by a new one without a message,
   * and reads idle until that starts (a receiver waits for the peer's
   * next Hello or media).
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_ZRTP_PROP_STATE,
      g_param_spec_enum ("zrtp-state", "ZRTP state", "State of the exchange",
          GST_TYPE_UVGRTP_ZRTP_STATE, GST_UVGRTP_ZRTP_STATE_IDLE, ro));
  /**
   * GstUvgRtp:zrtp-sas:
   *
   * The short authentication string the users compare by voice, once the
   * keys are agreed (%NULL before).
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_ZRTP_PROP_SAS,
      g_param_spec_string ("zrtp-sas", "ZRTP SAS",
          "Short authentication string to compare", NULL, ro));
  /**
   * GstUvgRtp:zrtp-sas-verified:
   *
   * This side holds the SAS verified: the users confirmed it in an earlier
   * call with this peer (or emitted #GstUvgRtp::zrtp-set-sas-verified)
   * and the retained secrets still match.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_SAS_VERIFIED,
      g_param_spec_boolean ("zrtp-sas-verified", "ZRTP SAS verified",
          "The SAS was verified with this peer", FALSE, ro));
  /**
   * GstUvgRtp:zrtp-peer-sas-verified:
   *
   * The peer says it holds the SAS verified.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_PEER_SAS_VERIFIED,
      g_param_spec_boolean ("zrtp-peer-sas-verified",
          "ZRTP peer SAS verified", "The peer holds the SAS verified", FALSE,
          ro));
  /**
   * GstUvgRtp:zrtp-cipher:
   *
   * Negotiated SRTP cipher: AES1 (AES-128) or AES3 (AES-256).
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_CIPHER,
      g_param_spec_string ("zrtp-cipher", "ZRTP cipher",
          "Negotiated cipher (AES1, AES3)", NULL, ro));
  /**
   * GstUvgRtp:zrtp-auth-tag:
   *
   * Negotiated SRTP authentication tag: HS80 or HS32.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_AUTH_TAG,
      g_param_spec_string ("zrtp-auth-tag", "ZRTP auth tag",
          "Negotiated SRTP authentication tag (HS80, HS32)", NULL, ro));
  /**
   * GstUvgRtp:zrtp-key-agreement:
   *
   * Negotiated key agreement: EC25, DH3k, or Mult for a stream that joined
   * its #GstUvgRtp:zrtp-session in Multistream mode.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENT,
      g_param_spec_string ("zrtp-key-agreement", "ZRTP key agreement",
          "Negotiated key agreement (EC25, DH3k, Mult)", NULL, ro));
  /**
   * GstUvgRtp:zrtp-sas-type:
   *
   * Negotiated SAS rendering: B32 (4 characters) or B256 (two PGP words).
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_SAS_TYPE,
      g_param_spec_string ("zrtp-sas-type", "ZRTP SAS type",
          "Negotiated SAS rendering (B32, B256)", NULL, ro));
  /**
   * GstUvgRtp:zrtp-peer-zid:
   *
   * The peer's ZRTP identifier (24 hex digits) once its Hello arrived.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_ZRTP_PROP_PEER_ZID,
      g_param_spec_string ("zrtp-peer-zid", "ZRTP peer ZID",
          "The peer's ZRTP identifier", NULL, ro));

  /**
   * GstUvgRtp::zrtp-set-sas-verified:
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
/* The endpoint: an adapter over urtp_zrtp_ep (lib/urtp/zrtp_ep.h), which   */
/* holds the policy; here its events become messages and notifications.    */

struct _GstUvgRtpZrtpCtl
{
  gint ref;                     /* atomic */
  GstElement *element;          /* not owned; used until stop() */
  GstUvgRtpZrtpRole role;
  int fd;                       /* the element's socket */
  gchar *cache_file;            /* for the error message */
  urtp_zrtp_ep_t *ep;
};

GstUvgRtpZrtpCtl *
gst_uvgrtp_zrtp_ctl_ref (GstUvgRtpZrtpCtl * ctl)
{
  g_atomic_int_inc (&ctl->ref);
  return ctl;
}

void
gst_uvgrtp_zrtp_ctl_unref (GstUvgRtpZrtpCtl * ctl)
{
  if (!ctl || !g_atomic_int_dec_and_test (&ctl->ref))
    return;
#ifdef HAVE_ENGINE
  urtp_zrtp_ep_free (ctl->ep);
#endif
  g_free (ctl->cache_file);
  g_free (ctl);
}

urtp_zrtp_ep_t *
gst_uvgrtp_zrtp_ctl_endpoint (GstUvgRtpZrtpCtl * ctl)
{
  return ctl->ep;
}

#ifdef HAVE_ENGINE

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

/* Every read-only property: what a state change may touch. */
static void
notify_info (GstUvgRtpZrtpCtl * ctl)
{
  for (guint i = GST_UVGRTP_ZRTP_PROP_STATE; i < GST_UVGRTP_ZRTP_N_PROPS; i++)
    g_object_notify (G_OBJECT (ctl->element), prop_names[i]);
}

static void
post_start_error (GstElement * element, int rc, const gchar * cache_file,
    const gchar * cache_prop)
{
  GError *err;
  gchar *dbg;

  if (rc == -EIO && cache_file)
    err = g_error_new (GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ_WRITE,
        "Could not use the ZRTP cache file \"%s\" (property '%s')",
        cache_file, cache_prop);
  else
    err = g_error_new (GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_INIT,
        "Could not create the ZRTP session");
  dbg = g_strdup_printf ("urtp_zrtp_new: %s", g_strerror (-rc));
  GST_ERROR_OBJECT (element, "%s", dbg);
  gst_element_post_message (element,
      gst_message_new_error (GST_OBJECT (element), err, dbg));
  g_error_free (err);
  g_free (dbg);
}

/* A Multistream member whose session's first stream failed for real: the
 * message says so, with the first stream's reason. */
static GstMessage *
leader_failed_message (GstElement * element, const urtp_zrtp_ep_event_t * ev)
{
  GstMessage *m = gst_uvgrtp_zrtp_make_message (GST_OBJECT (element),
      &ev->info, NULL);
  const gchar *why = gst_structure_get_string (gst_message_get_structure (m),
      "reason");
  gchar *reason = g_strdup_printf ("the first stream of ZRTP session \"%s\" "
      "failed: %s", GST_STR_NULL (ev->group), GST_STR_NULL (why));

  GST_WARNING_OBJECT (element, "%s", reason);
  gst_structure_set (gst_message_writable_structure (m), "reason",
      G_TYPE_STRING, reason, NULL);
  g_free (reason);
  return m;
}

gboolean
gst_uvgrtp_zrtp_handle_event (GstElement * element,
    const urtp_zrtp_ep_event_t * ev, const gchar * cache_file,
    const gchar * cache_prop)
{
  const urtp_zrtp_info_t *info = &ev->info;
  static const gchar *const why[] = {
    "no answer from the peer", "the peer started a new exchange",
    "media without keys",
  };

  ensure_debug ();
  switch (ev->type) {
    case URTP_ZRTP_EP_EV_SECURE:
      GST_INFO_OBJECT (element, "secure, SAS \"%s\" (%s, %s, %s)%s",
          info->sas, info->cipher, info->auth_tag, info->key_agreement,
          info->sas_verified ? ", verified" : "");
      if (info->cache_mismatch)
        GST_WARNING_OBJECT (element, "retained secrets do not match the "
            "peer's: the SAS must be compared");
      gst_element_post_message (element,
          gst_uvgrtp_zrtp_make_message (GST_OBJECT (element), info,
              ev->srtp_profile));
      break;
    case URTP_ZRTP_EP_EV_FAILED:
      if (ev->leader_failed) {
        gst_element_post_message (element,
            leader_failed_message (element, ev));
        break;
      }
      GST_WARNING_OBJECT (element, "ZRTP failed: 0x%02x %s%s", info->error,
          GST_STR_NULL (urtp_zrtp_error_name (info->error)),
          info->error_from_peer ? " (from the peer)" : "");
      gst_element_post_message (element,
          gst_uvgrtp_zrtp_make_message (GST_OBJECT (element), info, NULL));
      break;
    case URTP_ZRTP_EP_EV_RESTARTED:
      GST_INFO_OBJECT (element, "starting ZRTP over: %s",
          why[ev->reason]);
      break;
    case URTP_ZRTP_EP_EV_ERROR:
      post_start_error (element, ev->error, cache_file, cache_prop);
      break;
    case URTP_ZRTP_EP_EV_INFO_CHANGED:
      return TRUE;
  }
  return FALSE;
}

/* From the endpoint's thread, with no lock held. */
static void
ctl_event (void *user, const urtp_zrtp_ep_event_t * ev)
{
  GstUvgRtpZrtpCtl *ctl = user;

  if (gst_uvgrtp_zrtp_handle_event (ctl->element, ev, ctl->cache_file,
          "zrtp-cache-file"))
    notify_info (ctl);
}

/* Sends on the element's socket, with a line in the log. */
static int
ctl_send (void *user, const uint8_t * pkt, size_t len,
    const struct sockaddr *to, socklen_t to_len)
{
  GstUvgRtpZrtpCtl *ctl = user;
  gchar type[9];
  int r;

  GST_LOG_OBJECT (ctl->element, "sending %s (%" G_GSIZE_FORMAT " bytes)",
      gst_uvgrtp_zrtp_type_name (pkt, len, type), len);
  r = urtp_zrtp_ep_send_udp (URTP_ZRTP_EP_FD (ctl->fd), pkt, len, to, to_len);
  if (r < 0)
    GST_DEBUG_OBJECT (ctl->element, "sending ZRTP: %s", g_strerror (-r));
  return r;
}

GstUvgRtpZrtpCtl *
gst_uvgrtp_zrtp_ctl_start (GstElement * element,
    const GstUvgRtpZrtpSettings * s, GstUvgRtpZrtpRole role, int fd,
    gboolean sender_reads, const struct sockaddr *remote,
    socklen_t remote_len, guint32 ssrc)
{
  GstUvgRtpZrtpCtl *ctl;
  urtp_zrtp_ep_config_t cfg;
  gchar *why = NULL;
  int rc;

  ensure_debug ();
  memset (&cfg, 0, sizeof cfg);
  if (!parse_key_agreements (s->key_agreements, cfg.key_agreements, &why)) {
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
  ctl->cache_file = g_strdup (s->cache_file && *s->cache_file ?
      s->cache_file : NULL);
  ctl->fd = fd;

  cfg.mode = role == GST_UVGRTP_ZRTP_SENDER ? URTP_ZRTP_EP_SENDER :
      URTP_ZRTP_EP_RECEIVER;
  if (role == GST_UVGRTP_ZRTP_SENDER) {
    cfg.remote = remote;
    cfg.remote_len = remote_len;
  }
  cfg.ssrc = ssrc;
  cfg.zid = s->have_zid ? s->zid : NULL;
  cfg.cache_path = ctl->cache_file;
  cfg.group = s->session;
  cfg.send = ctl_send;
  cfg.send_user = ctl;
  cfg.on_event = ctl_event;
  cfg.event_user = ctl;
  rc = urtp_zrtp_ep_new (&cfg, &ctl->ep);
  if (rc == 0) {
    rc = urtp_zrtp_ep_start (ctl->ep,
        role == GST_UVGRTP_ZRTP_SENDER && sender_reads ? fd : -1);
  }
  if (rc != 0) {
    GST_ELEMENT_ERROR (element, RESOURCE, FAILED, (NULL),
        ("ZRTP endpoint: %s", g_strerror (-rc)));
    gst_uvgrtp_zrtp_ctl_unref (ctl);
    return NULL;
  }
  GST_INFO_OBJECT (element, "ZRTP %s, SSRC 0x%08x%s%s",
      role == GST_UVGRTP_ZRTP_SENDER ? "starting" : "waiting for a Hello",
      ssrc, s->session && *s->session ? ", session " : "",
      s->session && *s->session ? s->session : "");
  return ctl;
}

void
gst_uvgrtp_zrtp_ctl_stop (GstUvgRtpZrtpCtl * ctl)
{
  if (ctl && ctl->ep)
    urtp_zrtp_ep_stop (ctl->ep);
}

void
gst_uvgrtp_zrtp_ctl_get_info (GstUvgRtpZrtpCtl * ctl, urtp_zrtp_info_t * info)
{
  urtp_zrtp_ep_get_info (ctl->ep, info);
}

void
gst_uvgrtp_zrtp_ctl_get_counters (GstUvgRtpZrtpCtl * ctl,
    GstUvgRtpZrtpCounters * out)
{
  urtp_zrtp_ep_counters_t c;

  urtp_zrtp_ep_get_counters (ctl->ep, &c);
  out->sent = c.sent;
  out->received = c.received;
  out->retransmits = c.retransmits;
  out->bad = c.bad;
  out->unexpected = c.unexpected;
  out->auth_fail = c.auth_fail;
  out->restarts = c.restarts;
  out->foreign = c.foreign;
  out->discarded = c.discarded;
}

gboolean
gst_uvgrtp_zrtp_ctl_set_sas_verified (GstUvgRtpZrtpCtl * ctl,
    gboolean verified)
{
  int rc = urtp_zrtp_ep_set_sas_verified (ctl->ep, verified);

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
    gboolean sender_reads, const struct sockaddr *remote,
    socklen_t remote_len, guint32 ssrc)
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
gst_uvgrtp_zrtp_ctl_get_info (GstUvgRtpZrtpCtl * ctl, urtp_zrtp_info_t * info)
{
  memset (info, 0, sizeof *info);
}

void
gst_uvgrtp_zrtp_ctl_get_counters (GstUvgRtpZrtpCtl * ctl,
    GstUvgRtpZrtpCounters * out)
{
  memset (out, 0, sizeof *out);
}

gboolean
gst_uvgrtp_zrtp_ctl_set_sas_verified (GstUvgRtpZrtpCtl * ctl,
    gboolean verified)
{
  return FALSE;
}

#endif /* HAVE_ENGINE */
