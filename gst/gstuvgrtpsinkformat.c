/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsink's format: caps (and codec_data) to the sending stream's
 * format, and the session description (SDP) that tells receivers about
 * it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include "gstuvgrtpsink.h"
#include "urtp/sdp.h"

GST_DEBUG_CATEGORY_EXTERN (gst_uvgrtp_sink_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_sink_debug

/* The session description, or NULL while the format is unknown. Call with
 * the object lock held: the stream's own lock is taken for a moment only. */
gchar *
gst_uvgrtp_sink_build_sdp (GstUvgRtpSink * self)
{
  urtp_sdp_desc_t d;
  gchar buf[1024], *out;
  int n;

  if (!self->stream || !self->negotiated)
    return NULL;
  memset (&d, 0, sizeof d);
  d.addr = self->remote_ip ? self->remote_ip : self->host;
  d.port = (guint16) self->port;
  d.ttl = self->ttl_mc;
  d.session_name = "uvgrtpsink";
  d.rtcp_mux = self->rtcp_on && self->rtcp_mux_on;
  if (self->rtcp_on && !d.rtcp_mux)
    d.rtcp_port = (guint16) gst_uvgrtp_settings_rtcp_port (&self->common,
        self->port);
  /* feedback needs RTCP; retransmissions, the history too */
  d.feedback = self->rtcp_on;
  d.rtx = self->rtcp_on && self->rtx_on;
  d.rtx_pt = self->cur_rtx_pt;
  d.rtx_time_ms = self->rtx_max_size_time;
  gst_uvgrtp_hdrext_sdp (&self->hdrext, &d);
  /* congestion control reads transport-wide feedback while the packets
   * carry the numbers, and RFC 8888's whenever it runs */
  {
    gboolean twcc = gst_uvgrtp_hdrext_twcc_id (&self->hdrext) != 0;

    d.transport_cc = d.feedback && self->cc.mode != GST_UVGRTP_CC_NONE && twcc;
    d.ccfb = d.feedback && gst_uvgrtp_sink_cc_wanted (self, twcc);
  }
  n = urtp_sendstream_sdp (self->stream, &d, buf, sizeof buf);
  if (n < 0)
    return NULL;
  if ((gsize) n < sizeof buf)
    return g_strdup (buf);
  out = g_malloc ((gsize) n + 1);
  if (urtp_sendstream_sdp (self->stream, &d, out, (gsize) n + 1) != n) {
    g_free (out);
    return NULL;                /* the sets changed meanwhile: next time */
  }
  return out;
}

static const gchar *
codec_display_name (urtp_codec_t codec)
{
  static const gchar *const names[] = { "H.264", "H.265", "H.266", "Opus" };

  return names[codec];
}

/* Writes sdp-file if it is set and the description is complete and has
 * changed since the last write. Streaming thread. */
gboolean
gst_uvgrtp_sink_write_sdp (GstUvgRtpSink * self)
{
  const urtp_params_t *ps = urtp_sendstream_params (self->stream);
  gchar *path = NULL, *sdp = NULL;
  GError *err = NULL;
  gboolean ok = TRUE;
  guint serial = ps->serial + 1;

  GST_OBJECT_LOCK (self);
  if (self->sdp_file && self->negotiated && self->sdp_written_serial != serial
      && (self->codec == URTP_CODEC_OPUS || urtp_params_complete (ps))) {
    path = g_strdup (self->sdp_file);
    sdp = gst_uvgrtp_sink_build_sdp (self);
    self->sdp_written_serial = serial;
  }
  GST_OBJECT_UNLOCK (self);

  if (path && sdp) {
    if (g_file_set_contents (path, sdp, -1, &err)) {
      GST_INFO_OBJECT (self, "wrote SDP to %s", path);
    } else {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
          ("Could not write the SDP to '%s' (property 'sdp-file'): %s",
              path, err->message), (NULL));
      g_clear_error (&err);
      ok = FALSE;
    }
  }
  g_free (path);
  g_free (sdp);
  return ok;
}

/* The multistream layout of Opus caps of channel-mapping-family 1. */
static gboolean
opus_layout (const GstStructure * st, gint channels, urtp_opus_multi_t * m)
{
  const GValue *map = gst_structure_get_value (st, "channel-mapping");
  gint streams, coupled;

  if (!gst_structure_get_int (st, "stream-count", &streams) ||
      !gst_structure_get_int (st, "coupled-count", &coupled) || !map ||
      !GST_VALUE_HOLDS_ARRAY (map) || channels < 1 || channels > 255 ||
      streams < 1 || coupled < 0 ||
      gst_value_array_get_size (map) != (guint) channels)
    return FALSE;
  m->channels = (guint) channels;
  m->streams = (guint) streams;
  m->coupled = (guint) coupled;
  for (gint i = 0; i < channels; i++) {
    const GValue *v = gst_value_array_get_value (map, (guint) i);

    if (!G_VALUE_HOLDS_INT (v) || g_value_get_int (v) < 0 ||
        g_value_get_int (v) > 255)
      return FALSE;
    m->mapping[i] = (guint8) g_value_get_int (v);
  }
  return urtp_opus_multi_valid (m);
}

gboolean
gst_uvgrtp_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  GstStructure *st = gst_caps_get_structure (caps, 0);
  const gchar *name = gst_structure_get_name (st);
  const gchar *format = NULL, *alignment = NULL;
  const GValue *cd_val = gst_structure_get_value (st, "codec_data");
  urtp_sendstream_format_t fmt;
  gboolean prefixed = FALSE;
  gint channels = 0, family = 0;
  int r;

  GST_DEBUG_OBJECT (self, "caps %" GST_PTR_FORMAT, caps);

  memset (&fmt, 0, sizeof fmt);
  if (g_str_equal (name, "video/x-h264"))
    fmt.codec = URTP_CODEC_H264;
  else if (g_str_equal (name, "video/x-h265"))
    fmt.codec = URTP_CODEC_H265;
  else if (g_str_equal (name, "video/x-h266"))
    fmt.codec = URTP_CODEC_H266;
  else if (g_str_equal (name, "audio/x-opus"))
    fmt.codec = URTP_CODEC_OPUS;
  else
    goto bad_caps;

  if (fmt.codec == URTP_CODEC_OPUS) {
    if (gst_structure_get_int (st, "channel-mapping-family", &family)
        && family != 0 && family != 1)
      goto bad_opus_family;
    if (!gst_structure_get_int (st, "channels", &channels))
      channels = 2;
    if (family == 1) {
      /* more than two channels: MULTIOPUS, as rtpopuspay sends it */
      if (!opus_layout (st, channels, &fmt.opus_multi))
        goto bad_opus_layout;
    } else if (channels < 1 || channels > 2) {
      goto bad_opus_channels;
    }
    fmt.channels = (guint) channels;
  } else {
    format = gst_structure_get_string (st, "stream-format");
    alignment = gst_structure_get_string (st, "alignment");
    if (!format || !alignment)
      goto bad_caps;
    fmt.align_nal = g_str_equal (alignment, "nal");
    if (!fmt.align_nal && !g_str_equal (alignment, "au"))
      goto bad_caps;
    if (!g_str_equal (format, "byte-stream")) {
      /* avc, hvc1, hev1: NAL units after lengths of codec_data's size */
      if (fmt.align_nal
          || (fmt.codec == URTP_CODEC_H264 && !g_str_equal (format, "avc"))
          || (fmt.codec == URTP_CODEC_H265 && !g_str_equal (format, "hvc1")
              && !g_str_equal (format, "hev1"))
          || fmt.codec == URTP_CODEC_H266)
        goto bad_caps;
      if (!cd_val || !GST_VALUE_HOLDS_BUFFER (cd_val))
        goto no_codec_data;
      prefixed = TRUE;
      fmt.input = URTP_INPUT_LENGTH_PREFIXED;
    }
  }

  GST_OBJECT_LOCK (self);
  fmt.pt = (uint8_t) self->pt;
  fmt.mtu = self->mtu;
  fmt.aggregate = self->aggregate_mode != GST_UVGRTP_AGGREGATE_NONE;
  fmt.pad_fragments = self->pad_fragments;
  GST_OBJECT_UNLOCK (self);
  if (fmt.mtu < URTP_PAY_MIN_MTU)
    goto mtu_too_small;

  /* A new codec forgets the parameter sets known so far; caps updated
   * mid-stream without codec_data keep them (an encoder may send them in
   * band only once, at the start); new codec_data replaces them. */
  /* an extension may write what the media caps say (colour space) */
  gst_uvgrtp_hdrext_set_sink_caps (&self->hdrext, caps);
  r = urtp_sendstream_set_format (self->stream, &fmt);
  if (r == -EINTR) {
    /* a flush is under way: what waited to be sent goes */
    urtp_sendstream_drop (self->stream);
    r = urtp_sendstream_set_format (self->stream, &fmt);
  }
  if (r == -EMSGSIZE)
    goto mtu_too_large;
  if (r < 0)
    goto format_failed;

  if (cd_val && GST_VALUE_HOLDS_BUFFER (cd_val)) {
    GstBuffer *cd = gst_value_get_buffer (cd_val);
    GstMapInfo map;

    if (!gst_buffer_map (cd, &map, GST_MAP_READ))
      goto bad_codec_data;
    r = urtp_sendstream_set_codec_data (self->stream, map.data, map.size);
    if (r == -EINTR) {
      urtp_sendstream_drop (self->stream);
      r = urtp_sendstream_set_codec_data (self->stream, map.data, map.size);
    }
    gst_buffer_unmap (cd, &map);
    /* Some elements put a configuration record in byte-stream caps too:
     * its parameter sets are used when it parses, and it is no error when
     * it does not. */
    if (r < 0 && prefixed)
      goto bad_codec_data;
    if (r < 0)
      GST_DEBUG_OBJECT (self, "ignoring codec_data: %s", g_strerror (-r));
  }

  self->cur_mtu = (guint) fmt.mtu;
  GST_OBJECT_LOCK (self);
  self->codec = fmt.codec;
  self->negotiated = TRUE;
  GST_OBJECT_UNLOCK (self);
  GST_INFO_OBJECT (self, "%s, %s, mtu %u, aggregate %d",
      codec_display_name (fmt.codec), fmt.codec == URTP_CODEC_OPUS ? "-" :
      prefixed ? "length-prefixed" : fmt.align_nal ? "nal" : "au",
      (guint) fmt.mtu, fmt.aggregate);
  return gst_uvgrtp_sink_write_sdp (self);

  /* ERRORS */
bad_caps:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, (NULL),
        ("Unsupported caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
bad_opus_family:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Opus with channel-mapping-family %d cannot be sent as RTP "
            "(families 0 and 1 only, as MULTIOPUS)", family), (NULL));
    return FALSE;
  }
bad_opus_layout:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Opus with channel-mapping-family 1 needs channels, stream-count, "
            "coupled-count and a channel-mapping of one entry per channel "
            "that fit together (RFC 7845 5.1.1)"), ("caps %" GST_PTR_FORMAT,
            caps));
    return FALSE;
  }
bad_opus_channels:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Opus with %d channels cannot be sent as RTP (1 or 2 only)",
            channels), (NULL));
    return FALSE;
  }
no_codec_data:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Length-prefixed %s input needs codec_data in its caps",
            codec_display_name (fmt.codec)), (NULL));
    return FALSE;
  }
bad_codec_data:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Malformed %s codec_data", codec_display_name (fmt.codec)), (NULL));
    return FALSE;
  }
mtu_too_small:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("MTU %u is too small for the %s payload format (property 'mtu', "
            "at least %u)", (guint) fmt.mtu, codec_display_name (fmt.codec),
            (guint) URTP_PAY_MIN_MTU), (NULL));
    return FALSE;
  }
mtu_too_large:
  {
    guint max = (guint) urtp_sendstream_mtu_max (self->stream);

    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("MTU %u leaves no room for the %u-byte SRTP tag in a UDP datagram "
            "(property 'mtu', at most %u with this srtp-cipher and srtp-auth)",
            (guint) fmt.mtu, 65535 - max, max), (NULL));
    return FALSE;
  }
format_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Invalid payloader settings (properties 'mtu', 'pt'): %s",
            g_strerror (-r)), (NULL));
    return FALSE;
  }
}
