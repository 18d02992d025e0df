/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsrc's session: what the caps and encoding-name properties say of
 * the stream (codec, payload type, clock rate; the format parameters go to
 * lib/'s rules, urtp/fmtp.h), and the caps the element outputs for it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include "gstuvgrtpsrc.h"
#include "urtp/fmtp.h"

typedef struct
{
  urtp_fmtp_t fmtp;
  gchar *err_msg;
  gint err_code;
} FmtpWalk;

GST_DEBUG_CATEGORY_EXTERN (gst_uvgrtp_src_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_src_debug

void
gst_uvgrtp_src_session_clear (GstUvgRtpSrcSession * s)
{
  if (s->params)
    gst_memory_unref (s->params);
  memset (s, 0, sizeof (*s));
}

static gboolean
codec_from_name (const gchar * name, urtp_codec_t * codec, gboolean * multi)
{
  *multi = g_ascii_strcasecmp (name, "MULTIOPUS") == 0;
  /* rtpopuspay's name for Opus before RFC 7587, and for more than two
   * channels */
  if (g_ascii_strcasecmp (name, "X-GST-OPUS-DRAFT-SPITTKA-00") == 0 || *multi) {
    *codec = URTP_CODEC_OPUS;
    return TRUE;
  }
  return urtp_codec_from_name (name, codec) == 0;
}

/* An SDP fmtp parameter as an integer; caps made from SDP hold strings. */
static gboolean
structure_get_int_param (const GstStructure * s, const gchar * field,
    gint * out)
{
  const GValue *v = gst_structure_get_value (s, field);
  const gchar *str;
  gchar *end;
  gint64 n;

  if (!v)
    return FALSE;
  if (G_VALUE_HOLDS_INT (v)) {
    *out = g_value_get_int (v);
    return TRUE;
  }
  if (G_VALUE_HOLDS_UINT (v)) {
    *out = (gint) MIN (g_value_get_uint (v), (guint) G_MAXINT);
    return TRUE;
  }
  if (!G_VALUE_HOLDS_STRING (v) || !(str = g_value_get_string (v)))
    return FALSE;
  n = g_ascii_strtoll (str, &end, 10);
  if (end == str || n < G_MININT || n > G_MAXINT)
    return FALSE;
  *out = (gint) n;
  return TRUE;
}

/* One caps field to lib/'s fmtp rules (urtp/fmtp.h), as SDP text. */
static gboolean
apply_fmtp (GQuark field, const GValue * value, gpointer user)
{
  FmtpWalk *w = user;
  gchar *text = NULL, why[256];
  int r;

  if (G_VALUE_HOLDS_STRING (value))
    text = g_value_dup_string (value);
  else if (G_VALUE_HOLDS_INT (value))
    text = g_strdup_printf ("%d", g_value_get_int (value));
  else if (G_VALUE_HOLDS_UINT (value))
    text = g_strdup_printf ("%u", g_value_get_uint (value));
  if (!text)
    return TRUE;
  r = urtp_fmtp_set (&w->fmtp, g_quark_to_string (field), text, why,
      sizeof why);
  g_free (text);
  if (r == 0)
    return TRUE;
  w->err_code = r == -ENOTSUP ? GST_UVGRTP_SRC_ERR_STREAM :
      GST_UVGRTP_SRC_ERR_SETTINGS;
  w->err_msg = r == -ENOTSUP ? g_strdup_printf ("The caps give %s", why) :
      g_strdup_printf ("Invalid field in the 'caps' property: %s",
      r == -ENOMEM ? g_strerror (ENOMEM) : why);
  return FALSE;
}

gboolean
gst_uvgrtp_src_session_resolve (GstUvgRtpSrc * self, GstUvgRtpSrcSession * out,
    gchar ** err_msg, gint * err_code)
{
  const GstStructure *s = NULL;
  const gchar *name = NULL;
  FmtpWalk walk = { 0 };
  gboolean multi;
  gsize len;
  gint v;

  memset (out, 0, sizeof (*out));
  out->pt = -1;
  *err_code = GST_UVGRTP_SRC_ERR_SETTINGS;

  if (self->caps && gst_caps_get_size (self->caps) > 0)
    s = gst_caps_get_structure (self->caps, 0);

  if (self->encoding_name && *self->encoding_name)
    name = self->encoding_name;
  else if (s)
    name = gst_structure_get_string (s, "encoding-name");

  if (!name) {
    *err_msg = g_strdup ("No codec given: set the 'encoding-name' property "
        "(H264, H265, H266 or OPUS) or the 'caps' property with an "
        "encoding-name field");
    return FALSE;
  }
  if (!codec_from_name (name, &out->codec, &multi)) {
    *err_msg = g_strdup_printf ("Unsupported encoding-name '%s' (from the "
        "'%s' property): supported are H264, H265, H266 and OPUS", name,
        name == self->encoding_name ? "encoding-name" : "caps");
    return FALSE;
  }

  out->clock_rate = urtp_codec_clock_rate (out->codec);
  if (!s && multi)
    goto no_layout;
  if (!s)
    return TRUE;

  if (structure_get_int_param (s, "payload", &v)) {
    if (v < 0 || v > 127) {
      *err_msg = g_strdup_printf ("Invalid payload type %d in the 'caps' "
          "property (0..127)", v);
      return FALSE;
    }
    out->pt = v;
  }
  if (structure_get_int_param (s, "clock-rate", &v) && v > 0)
    out->clock_rate = (guint) v;
  /* a=rtcp-fb:* ack ccfb (RFC 8888 section 6), as GstSDPMedia puts it */
  gst_structure_get_boolean (s, "rtcp-fb-ack-ccfb", &out->ccfb);

  urtp_fmtp_init (&walk.fmtp, out->codec);
  if (!gst_structure_foreach (s, apply_fmtp, &walk)) {
    urtp_fmtp_clear (&walk.fmtp);
    *err_code = walk.err_code;
    *err_msg = walk.err_msg;
    return FALSE;
  }
  out->donl = walk.fmtp.donl;
  out->channels = (gint) walk.fmtp.channels;
  out->rate = (gint) walk.fmtp.rate;
  if (multi) {
    /* the layout comes with the caps, as rtpopuspay puts it there */
    if (!urtp_opus_multi_valid (&walk.fmtp.multi)) {
      urtp_fmtp_clear (&walk.fmtp);
      goto no_layout;
    }
    out->opus_multi = walk.fmtp.multi;
    out->channels = (gint) walk.fmtp.multi.channels;
  }
  len = urtp_fmtp_params (&walk.fmtp, NULL);
  if (len > 0) {
    guint8 *data = g_malloc (len);

    urtp_fmtp_params (&walk.fmtp, data);
    out->params = gst_memory_new_wrapped (GST_MEMORY_FLAG_READONLY, data,
        len, 0, len, data, g_free);
  }
  urtp_fmtp_clear (&walk.fmtp);
  return TRUE;

no_layout:
  *err_msg = g_strdup ("MULTIOPUS needs its layout in the 'caps' property: "
      "num_streams, coupled_streams and channel_mapping (one entry per "
      "channel), as rtpopuspay's caps give them");
  return FALSE;
}

void
gst_uvgrtp_src_post_config_error (GstUvgRtpSrc * self, gchar * msg, gint code)
{
  if (code == GST_UVGRTP_SRC_ERR_STREAM)
    GST_ELEMENT_ERROR (self, STREAM, CODEC_NOT_FOUND, ("%s", msg), (NULL));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", msg), (NULL));
  g_free (msg);
}

GstCaps *
gst_uvgrtp_src_session_caps (const GstUvgRtpSrcSession * s)
{
  GstCaps *caps;

  switch (s->codec) {
    case URTP_CODEC_OPUS:
      if (s->opus_multi.channels) {
        GValue map = G_VALUE_INIT, v = G_VALUE_INIT;

        gst_value_array_init (&map, s->opus_multi.channels);
        g_value_init (&v, G_TYPE_INT);
        for (guint i = 0; i < s->opus_multi.channels; i++) {
          g_value_set_int (&v, s->opus_multi.mapping[i]);
          gst_value_array_append_value (&map, &v);
        }
        caps = gst_caps_new_simple ("audio/x-opus", "channel-mapping-family",
            G_TYPE_INT, 1, "rate", G_TYPE_INT, s->rate > 0 ? s->rate : 48000,
            "channels", G_TYPE_INT, (gint) s->opus_multi.channels,
            "stream-count", G_TYPE_INT, (gint) s->opus_multi.streams,
            "coupled-count", G_TYPE_INT, (gint) s->opus_multi.coupled, NULL);
        gst_caps_set_value (caps, "channel-mapping", &map);
        g_value_unset (&v);
        g_value_unset (&map);
        return caps;
      }
      caps = gst_caps_new_simple ("audio/x-opus", "channel-mapping-family",
          G_TYPE_INT, 0, "rate", G_TYPE_INT, s->rate > 0 ? s->rate : 48000,
          NULL);
      if (s->channels > 0)
        gst_caps_set_simple (caps, "channels", G_TYPE_INT, s->channels, NULL);
      return caps;
    case URTP_CODEC_H264:
      return gst_caps_from_string ("video/x-h264, "
          "stream-format = (string) { byte-stream, avc, avc3 }, "
          "alignment = (string) { au, nal }");
    case URTP_CODEC_H265:
      return gst_caps_from_string ("video/x-h265, "
          "stream-format = (string) { byte-stream, hvc1, hev1 }, "
          "alignment = (string) { au, nal }");
    case URTP_CODEC_H266:
    default:
      return gst_caps_from_string ("video/x-h266, "
          "stream-format = (string) byte-stream, "
          "alignment = (string) { au, nal }");
  }
}
