/* SPDX-License-Identifier: BSD-2-Clause */
/* SRTP settings shared by uvgrtpsink and uvgrtpsrc: srtpenc's names for
 * ciphers and authentication, key parsing and context setup. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include "gstuvgrtpsrtp.h"

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_srtp_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_srtp_debug

GType
gst_uvgrtp_srtp_cipher_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_SRTP_CIPHER_NULL, "GST_SRTP_CIPHER_NULL", "null"},
    {GST_UVGRTP_SRTP_CIPHER_AES_128_ICM, "GST_SRTP_CIPHER_AES_128_ICM",
        "aes-128-icm"},
    {GST_UVGRTP_SRTP_CIPHER_AES_256_ICM, "GST_SRTP_CIPHER_AES_256_ICM",
        "aes-256-icm"},
    {GST_UVGRTP_SRTP_CIPHER_AES_128_GCM, "GST_SRTP_CIPHER_AES_128_GCM",
        "aes-128-gcm"},
    {GST_UVGRTP_SRTP_CIPHER_AES_256_GCM, "GST_SRTP_CIPHER_AES_256_GCM",
        "aes-256-gcm"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpSrtpCipher", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_uvgrtp_srtp_auth_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_SRTP_AUTH_NULL, "GST_SRTP_AUTH_NULL", "null"},
    {GST_UVGRTP_SRTP_AUTH_HMAC_SHA1_32, "GST_SRTP_AUTH_HMAC_SHA1_32",
        "hmac-sha1-32"},
    {GST_UVGRTP_SRTP_AUTH_HMAC_SHA1_80, "GST_SRTP_AUTH_HMAC_SHA1_80",
        "hmac-sha1-80"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpSrtpAuth", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* The nick of an enum value; the strings are static. */
static const gchar *
enum_nick (GType type, gint value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *v = g_enum_get_value (klass, value);
  const gchar *nick = v ? v->value_nick : "(invalid)";

  g_type_class_unref (klass);
  return nick;
}

void
gst_uvgrtp_free_secret (gchar * s)
{
  if (s) {
    explicit_bzero (s, strlen (s));
    g_free (s);
  }
}

static void
post_srtp_error (GstElement * element, gchar * msg)
{
  GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS, ("%s", msg), (NULL));
  g_free (msg);
}

gboolean
gst_uvgrtp_srtp_parse (GstElement * element, const gchar * key_hex,
    GstUvgRtpSrtpCipher cipher, GstUvgRtpSrtpAuth auth,
    urtp_srtp_config_t * cfg, guint8 key[URTP_SRTP_MAX_KEY_LEN])
{
  static gsize debug_once = 0;
  const gchar *cn, *an;

  if (g_once_init_enter (&debug_once)) {
    GST_DEBUG_CATEGORY_INIT (gst_uvgrtp_srtp_debug, "uvgrtpsrtp", 0,
        "uvgRTP SRTP settings");
    g_once_init_leave (&debug_once, 1);
  }
  cn = enum_nick (GST_TYPE_UVGRTP_SRTP_CIPHER, cipher);
  an = enum_nick (GST_TYPE_UVGRTP_SRTP_AUTH, auth);

  memset (cfg, 0, sizeof (*cfg));
  if (!key_hex || !*key_hex)
    return TRUE;

#ifdef URTP_HAVE_SRTP
  {
    urtp_srtp_profile_t profile;
    gchar why[160];
    gsize want = 0, digits, salt;
    gboolean gcm;
    int r;

    r = urtp_srtp_profile_from_nicks (cn, an, &profile, &want, NULL, 0);
    gcm = cipher == GST_UVGRTP_SRTP_CIPHER_AES_128_GCM
        || cipher == GST_UVGRTP_SRTP_CIPHER_AES_256_GCM;
    if (r < 0 && gcm) {
      post_srtp_error (element, g_strdup_printf ("srtp-cipher %s "
              "authenticates by itself: srtp-auth must be null, not %s "
              "(properties 'srtp-cipher', 'srtp-auth')", cn, an));
      return FALSE;
    }
    if (r < 0) {
      post_srtp_error (element, g_strdup_printf ("srtp-cipher %s with "
              "srtp-auth %s would leave packets %s; not supported "
              "(properties 'srtp-cipher', 'srtp-auth')", cn, an,
              cipher == GST_UVGRTP_SRTP_CIPHER_NULL ? "unencrypted" :
              "unauthenticated"));
      return FALSE;
    }

    /* A well-formed key of the wrong length gets the sizes spelled out. */
    salt = gcm ? 12 : 14;
    digits = strspn (key_hex, "0123456789abcdefABCDEF");
    if (key_hex[digits] == '\0' && digits % 2 == 0 && digits / 2 != want) {
      gchar *with = gcm ? g_strdup ("") : g_strdup_printf (" with %s", an);

      post_srtp_error (element, g_strdup_printf ("srtp-key has %"
              G_GSIZE_FORMAT " bytes; %s%s needs %" G_GSIZE_FORMAT " (%"
              G_GSIZE_FORMAT "-byte key + %" G_GSIZE_FORMAT "-byte salt)",
              digits / 2, cn, with, want, want - salt, salt));
      g_free (with);
      return FALSE;
    }
    if (urtp_srtp_key_from_hex (key_hex, profile, key, why, sizeof (why)) < 0) {
      post_srtp_error (element, g_strdup_printf ("Invalid srtp-key: %s "
              "(property 'srtp-key', hex digits)", why));
      return FALSE;
    }
    cfg->profile = profile;
    cfg->key = key;
    cfg->key_len = want;
    return TRUE;
  }
#else
  post_srtp_error (element, g_strdup_printf ("srtp-key is set, but this "
          "build of gst-uvgrtp has no SRTP (built without libsrtp2; "
          "srtp-cipher %s, srtp-auth %s)", cn, an));
  return FALSE;
#endif
}

void
gst_uvgrtp_srtp_post_init_error (GstElement * element, int r,
    GstUvgRtpSrtpCipher cipher, urtp_srtp_profile_t profile,
    guint replay_window)
{
  if (r == -ENOTSUP) {
    post_srtp_error (element, g_strdup_printf ("srtp-cipher %s is not "
            "available: the installed libsrtp2 lacks it (property "
            "'srtp-cipher')", enum_nick (GST_TYPE_UVGRTP_SRTP_CIPHER,
                cipher)));
  } else if (r == -EINVAL) {
    post_srtp_error (element, g_strdup_printf ("Invalid replay-window-size"
            " %u (%u to %u)", replay_window, (guint) URTP_SRTP_MIN_WINDOW,
            (guint) URTP_SRTP_MAX_WINDOW));
  } else {
#ifdef URTP_HAVE_SRTP
    post_srtp_error (element, g_strdup_printf ("Could not set up SRTP "
            "(%s): %s", urtp_srtp_profile_name (profile), g_strerror (-r)));
#else
    post_srtp_error (element, g_strdup_printf ("Could not set up SRTP: %s",
            g_strerror (-r)));
#endif
  }
}

gboolean
gst_uvgrtp_srtp_open (GstElement * element, urtp_srtp_t * ctx,
    urtp_srtp_dir_t dir, const gchar * key_hex, GstUvgRtpSrtpCipher cipher,
    GstUvgRtpSrtpAuth auth, guint32 ssrc, guint replay_window)
{
  urtp_srtp_config_t cfg;
  guint8 key[URTP_SRTP_MAX_KEY_LEN];

  memset (ctx, 0, sizeof (*ctx));
  if (!gst_uvgrtp_srtp_parse (element, key_hex, cipher, auth, &cfg, key))
    return FALSE;
  if (cfg.key_len == 0)
    return TRUE;
#ifdef URTP_HAVE_SRTP
  {
    int r;

    cfg.dir = dir;
    cfg.any_ssrc = dir == URTP_SRTP_INBOUND;
    cfg.ssrc = ssrc;
    cfg.replay_window = replay_window;
    r = urtp_srtp_init (ctx, &cfg);
    explicit_bzero (key, sizeof (key));
    if (r < 0) {
      gst_uvgrtp_srtp_post_init_error (element, r, cipher, cfg.profile,
          replay_window);
      return FALSE;
    }
    GST_INFO_OBJECT (element, "SRTP %s, %s, through %s",
        urtp_srtp_profile_name (cfg.profile),
        dir == URTP_SRTP_OUTBOUND ? "protecting" : "unprotecting",
        urtp_srtp_backend ());
  }
#endif
  return TRUE;
}

void
gst_uvgrtp_srtp_close (urtp_srtp_t * ctx)
{
#ifdef URTP_HAVE_SRTP
  urtp_srtp_destroy (ctx);
#else
  memset (ctx, 0, sizeof (*ctx));
#endif
}

