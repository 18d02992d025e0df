/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsrc's session: what the caps and encoding-name properties say of
 * the stream (codec, payload type, clock rate, parameter sets to put in
 * band, Opus channels), and the caps the element outputs for it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstuvgrtpsrc.h"
#include "urtp/params.h"

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
codec_from_name (const gchar * name, urtp_codec_t * codec)
{
  /* rtpopuspay's name for Opus before RFC 7587 */
  if (g_ascii_strcasecmp (name, "X-GST-OPUS-DRAFT-SPITTKA-00") == 0) {
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

/* Appends the parameter sets of the sprop field (comma-separated base64,
 * as in SDP) to out as Annex-B. */
static gboolean
append_sprop (GByteArray * out, const GstStructure * s, const gchar * field,
    gchar ** err_msg)
{
  const gchar *list = gst_structure_get_string (s, field);
  gint n;
  guint at = out->len;

  if (!list)
    return TRUE;
  n = urtp_sprop_decode (list, strlen (list), NULL, 0);
  if (n < 0) {
    *err_msg = g_strdup_printf ("Invalid %s in the 'caps' property: not a "
        "comma-separated list of base64 parameter sets", field);
    return FALSE;
  }
  g_byte_array_set_size (out, at + (guint) n);
  urtp_sprop_decode (list, strlen (list), out->data + at, (gsize) n);
  return TRUE;
}

gboolean
gst_uvgrtp_src_session_resolve (GstUvgRtpSrc * self, GstUvgRtpSrcSession * out,
    gchar ** err_msg, gint * err_code)
{
  const GstStructure *s = NULL;
  const gchar *name = NULL;
  GByteArray *params;
  gboolean ok = TRUE;
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
  if (!codec_from_name (name, &out->codec)) {
    *err_msg = g_strdup_printf ("Unsupported encoding-name '%s' (from the "
        "'%s' property): supported are H264, H265, H266 and OPUS", name,
        name == self->encoding_name ? "encoding-name" : "caps");
    return FALSE;
  }

  out->clock_rate = urtp_codec_clock_rate (out->codec);
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

  if (structure_get_int_param (s, "sprop-max-don-diff", &v) && v > 0) {
    if (out->codec != URTP_CODEC_H265) {
      *err_code = GST_UVGRTP_SRC_ERR_STREAM;
      *err_msg = g_strdup_printf ("The caps give sprop-max-don-diff=%d for "
          "%s: decoding order numbers are only supported for H.265", v,
          urtp_codec_name (out->codec));
      return FALSE;
    }
    out->donl = TRUE;
  }
  if (out->codec == URTP_CODEC_H264 &&
      structure_get_int_param (s, "packetization-mode", &v) && v == 2) {
    *err_code = GST_UVGRTP_SRC_ERR_STREAM;
    *err_msg = g_strdup ("The caps give packetization-mode=2: H.264 "
        "interleaved mode is not supported");
    return FALSE;
  }

  params = g_byte_array_new ();
  switch (out->codec) {
    case URTP_CODEC_H264:
      ok = append_sprop (params, s, "sprop-parameter-sets", err_msg);
      break;
    case URTP_CODEC_H266:
      ok = append_sprop (params, s, "sprop-dci", err_msg);
      /* fall through */
    case URTP_CODEC_H265:
      ok = ok && append_sprop (params, s, "sprop-vps", err_msg) &&
          append_sprop (params, s, "sprop-sps", err_msg) &&
          append_sprop (params, s, "sprop-pps", err_msg);
      break;
    case URTP_CODEC_OPUS:{
      const gchar *stereo = gst_structure_get_string (s, "sprop-stereo");

      if (stereo)
        out->channels = g_strcmp0 (stereo, "1") == 0 ? 2 : 1;
      if (structure_get_int_param (s, "sprop-maxcapturerate", &v) && v > 0)
        out->rate = v;
      break;
    }
  }
  if (!ok) {
    g_byte_array_free (params, TRUE);
    return FALSE;
  }
  if (params->len > 0) {
    gsize len = params->len;
    guint8 *data = g_byte_array_free (params, FALSE);

    out->params = gst_memory_new_wrapped (GST_MEMORY_FLAG_READONLY, data,
        len, 0, len, data, g_free);
  } else {
    g_byte_array_free (params, TRUE);
  }
  return TRUE;
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
  const gchar *media;
  GstCaps *caps;

  switch (s->codec) {
    case URTP_CODEC_OPUS:
      caps = gst_caps_new_simple ("audio/x-opus", "channel-mapping-family",
          G_TYPE_INT, 0, "rate", G_TYPE_INT, s->rate > 0 ? s->rate : 48000,
          NULL);
      if (s->channels > 0)
        gst_caps_set_simple (caps, "channels", G_TYPE_INT, s->channels, NULL);
      return caps;
    case URTP_CODEC_H264:
      media = "video/x-h264";
      break;
    case URTP_CODEC_H265:
      media = "video/x-h265";
      break;
    case URTP_CODEC_H266:
    default:
      media = "video/x-h266";
      break;
  }
  return gst_caps_new_simple (media, "stream-format", G_TYPE_STRING,
      "byte-stream", "alignment", G_TYPE_STRING, "au", NULL);
}
