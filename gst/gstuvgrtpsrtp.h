/* SPDX-License-Identifier: BSD-2-Clause */
/* SRTP settings shared by uvgrtpsink and uvgrtpsrc. */
#ifndef __GST_UVGRTP_SRTP_H__
#define __GST_UVGRTP_SRTP_H__

#include <gst/gst.h>

#include "urtp/srtp.h"

G_BEGIN_DECLS

/* SRTP settings of both elements, with the values, names and nicks of
 * srtpenc's rtp-cipher and rtp-auth so that the same words configure both. */
typedef enum {
  GST_UVGRTP_SRTP_CIPHER_NULL,
  GST_UVGRTP_SRTP_CIPHER_AES_128_ICM,
  GST_UVGRTP_SRTP_CIPHER_AES_256_ICM,
  GST_UVGRTP_SRTP_CIPHER_AES_128_GCM,
  GST_UVGRTP_SRTP_CIPHER_AES_256_GCM,
} GstUvgRtpSrtpCipher;

typedef enum {
  GST_UVGRTP_SRTP_AUTH_NULL,
  GST_UVGRTP_SRTP_AUTH_HMAC_SHA1_32,
  GST_UVGRTP_SRTP_AUTH_HMAC_SHA1_80,
} GstUvgRtpSrtpAuth;

#define GST_TYPE_UVGRTP_SRTP_CIPHER (gst_uvgrtp_srtp_cipher_get_type ())
#define GST_TYPE_UVGRTP_SRTP_AUTH (gst_uvgrtp_srtp_auth_get_type ())
GType gst_uvgrtp_srtp_cipher_get_type (void);
GType gst_uvgrtp_srtp_auth_get_type (void);

/* Defaults of srtpenc. */
#define GST_UVGRTP_DEFAULT_SRTP_CIPHER GST_UVGRTP_SRTP_CIPHER_AES_128_ICM
#define GST_UVGRTP_DEFAULT_SRTP_AUTH GST_UVGRTP_SRTP_AUTH_HMAC_SHA1_80

/* Sets up ctx from the srtp-key, srtp-cipher and srtp-auth properties of
 * element (uvgrtpsink or uvgrtpsrc). An empty or NULL key means no SRTP:
 * ctx is zeroed (session NULL) and TRUE returned. On a bad setting posts an
 * error naming the property and returns FALSE. ssrc is the one SSRC an
 * outbound context serves; inbound contexts serve any. */
gboolean gst_uvgrtp_srtp_open (GstElement * element, urtp_srtp_t * ctx,
    urtp_srtp_dir_t dir, const gchar * key_hex, GstUvgRtpSrtpCipher cipher,
    GstUvgRtpSrtpAuth auth, guint32 ssrc, guint replay_window);
/* The checks of gst_uvgrtp_srtp_open without the context: fills cfg's
 * profile and key (the bytes in key, which the caller wipes after use)
 * from the properties. An empty or NULL key means no SRTP: cfg->key_len
 * is 0 and TRUE returned. On a bad setting posts an error naming the
 * property and returns FALSE. Direction, SSRC and window are left 0. */
gboolean gst_uvgrtp_srtp_parse (GstElement * element, const gchar * key_hex,
    GstUvgRtpSrtpCipher cipher, GstUvgRtpSrtpAuth auth,
    urtp_srtp_config_t * cfg, guint8 key[URTP_SRTP_MAX_KEY_LEN]);
/* Posts the error for urtp_srtp_init's failure r (-ENOTSUP, -EINVAL, ...)
 * with these settings, naming the property to fix. */
void gst_uvgrtp_srtp_post_init_error (GstElement * element, int r,
    GstUvgRtpSrtpCipher cipher, urtp_srtp_profile_t profile,
    guint replay_window);
/* Frees ctx; safe on a zeroed one. */
void gst_uvgrtp_srtp_close (urtp_srtp_t * ctx);
/* Overwrites a string holding key material, then frees it. */
void gst_uvgrtp_free_secret (gchar * s);

G_END_DECLS

#endif
