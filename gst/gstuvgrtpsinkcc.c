/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtpsink's congestion control: the properties, and the mapping of the
 * controller in lib/ (cc.h, through urtp_sendstream_set_congestion) onto
 * the element: estimated-bitrate and its notify, a bus message when the
 * estimate moves, and the upstream encoder's bitrate property set to it
 * (a table of encoders, as webrtcsink keeps one).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstuvgrtpsink.h"

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_sink_cc_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_sink_cc_debug

#define DEFAULT_MODE GST_UVGRTP_CC_AUTO
#define DEFAULT_MIN_BITRATE 100000
#define DEFAULT_START_BITRATE 0
#define DEFAULT_ADAPT_ENCODER TRUE
#define DEFAULT_MESSAGE_THRESHOLD 0.1
/* the encoder is told again when the target moved this much, at most this
 * often upwards (a cut goes at once) */
#define ENCODER_STEP 0.02
#define ENCODER_INTERVAL_US 250000

GType
gst_uvgrtp_congestion_control_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_UVGRTP_CC_NONE, "No congestion control", "none"},
    {GST_UVGRTP_CC_AUTO, "Delay- and capacity-based control (as gcc) while "
          "the packets carry transport-wide sequence numbers or the rtp-caps "
          "ask for RFC 8888 feedback", "auto"},
    {GST_UVGRTP_CC_GCC, "Delay gradient (GCC), standing queue and capacity "
          "from paced frames, on transport-wide or RFC 8888 feedback",
        "gcc"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstUvgRtpCongestionControl", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* An encoder whose bitrate we know how to set: its factory, the property,
 * and how many bits per second one unit of it is. */
typedef struct
{
  const gchar *factory;
  const gchar *property;
  guint unit;
} Encoder;

static const Encoder encoders[] = {
  {"x264enc", "bitrate", 1000},
  {"x265enc", "bitrate", 1000},
  {"openh264enc", "bitrate", 1},
  {"vaapih264enc", "bitrate", 1000},
  {"vaapih265enc", "bitrate", 1000},
  {"vah264enc", "bitrate", 1000},
  {"vah265enc", "bitrate", 1000},
  {"vah264lpenc", "bitrate", 1000},
  {"vah265lpenc", "bitrate", 1000},
  {"nvh264enc", "bitrate", 1000},
  {"nvh265enc", "bitrate", 1000},
  {"nvcudah264enc", "bitrate", 1000},
  {"nvcudah265enc", "bitrate", 1000},
  {"nvautogpuh264enc", "bitrate", 1000},
  {"nvautogpuh265enc", "bitrate", 1000},
  {"nvv4l2h264enc", "bitrate", 1},
  {"nvv4l2h265enc", "bitrate", 1},
  {"qsvh264enc", "bitrate", 1000},
  {"qsvh265enc", "bitrate", 1000},
  {"amfh264enc", "bitrate", 1000},
  {"amfh265enc", "bitrate", 1000},
  {"svthevcenc", "bitrate", 1000},
  {"mpph264enc", "bps", 1},
  {"mpph265enc", "bps", 1},
  {"vtenc_h264", "bitrate", 1000},
  {"vtenc_h265", "bitrate", 1000},
  {"opusenc", "bitrate", 1},
  /* v4l2 stateful encoders: the control in extra-controls */
  {"v4l2h264enc", "extra-controls", 1},
  {"v4l2h265enc", "extra-controls", 1},
};

void
gst_uvgrtp_sink_cc_install (GObjectClass * klass, guint first)
{
  if (!gst_uvgrtp_sink_cc_debug)
    GST_DEBUG_CATEGORY_INIT (gst_uvgrtp_sink_cc_debug, "uvgrtpsinkcc", 0,
        "uvgrtpsink congestion control");

  /**
   * GstUvgRtpSink:congestion-control:
   *
   * Adapt the bitrate to the path from the receivers' congestion control
   * feedback: transport-wide (RTCP RTPFB FMT 15, on the transport-wide
   * sequence numbers of the header extension
   * http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01,
   * as rtpbin and uvgrtpsrc send it) or RFC 8888 (FMT 11). The estimate
   * drives the pacer, #GstUvgRtpSink:estimated-bitrate and, with
   * #GstUvgRtpSink:adapt-encoder, the upstream encoder's bitrate. auto (the
   * default) runs the controller when the packets carry transport-wide
   * sequence numbers (the extension added, or an extmap-N of it in
   * #GstUvgRtpSink:rtp-caps) or the rtp-caps carry
   * rtcp-fb-ack-ccfb=true; gcc always. none costs the sending path
   * nothing. docs/congestion.md describes the controller. Set before the
   * element starts.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_SINK_CC_PROP_MODE,
      g_param_spec_enum ("congestion-control", "Congestion control",
          "Adapt the bitrate to the path from the receivers' feedback",
          GST_TYPE_UVGRTP_CONGESTION_CONTROL, DEFAULT_MODE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:min-bitrate:
   *
   * The least bitrate congestion control goes down to (bits/s), as
   * rtpgccbwe's property. The most is GstBaseSink's #GstBaseSink:max-bitrate
   * (bits/s; 0, its default: 100 Mbit/s here), which also keeps its
   * meaning of a ceiling on what is sent. May be changed while playing.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_SINK_CC_PROP_MIN,
      g_param_spec_uint ("min-bitrate", "Minimal bitrate",
          "The least bitrate congestion control goes down to (bits/s)",
          1000, G_MAXUINT, DEFAULT_MIN_BITRATE, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:start-bitrate:
   *
   * The bitrate congestion control starts from (bits/s); 0 (the default):
   * the upstream encoder's bitrate when it is one of those
   * #GstUvgRtpSink:adapt-encoder knows, else 2 Mbit/s. As webrtcsink's
   * property.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_SINK_CC_PROP_START,
      g_param_spec_uint ("start-bitrate", "Start bitrate",
          "The bitrate congestion control starts from (bits/s; 0: the "
          "encoder's)", 0, G_MAXUINT, DEFAULT_START_BITRATE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:estimated-bitrate:
   *
   * What congestion control estimates the path carries now: the bitrate
   * the encoder should produce (bits/s; 0 before the first feedback). Its
   * notify is emitted when it changes by 1 % or more, from the streaming
   * thread, as rtpgccbwe's property of the name.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_SINK_CC_PROP_ESTIMATED,
      g_param_spec_uint ("estimated-bitrate", "Estimated bitrate",
          "The bitrate congestion control estimates the path carries "
          "(bits/s)", 0, G_MAXUINT, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:adapt-encoder:
   *
   * Set the upstream encoder's bitrate to the estimate (the first encoder
   * upstream, through parsers, queues and capsfilters, that is one of
   * x264enc, x265enc, openh264enc, vaapi/va, nv, qsv, amf, svthevcenc,
   * mpp, vtenc, v4l2 and opusenc), as webrtcsink does. FALSE: leave it to
   * the application, which reads #GstUvgRtpSink:estimated-bitrate.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_SINK_CC_PROP_ADAPT_ENCODER,
      g_param_spec_boolean ("adapt-encoder", "Adapt encoder",
          "Set the upstream encoder's bitrate to the estimate",
          DEFAULT_ADAPT_ENCODER, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:bitrate-message-threshold:
   *
   * Post an element message "uvgrtp-congestion" (estimated-bitrate,
   * delivered-bitrate, capacity, queue-delay, round-trip-time, loss:
   * see the stats) when the estimate has moved by more than this fraction
   * since the last one; 0: at every change.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_SINK_CC_PROP_MESSAGE_THRESHOLD,
      g_param_spec_double ("bitrate-message-threshold",
          "Bitrate message threshold", "Post a message when the estimate "
          "moves by more than this fraction", 0, 10,
          DEFAULT_MESSAGE_THRESHOLD, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));
}

void
gst_uvgrtp_sink_cc_init (GstUvgRtpSinkCc * cc)
{
  memset (cc, 0, sizeof (*cc));
  cc->mode = DEFAULT_MODE;
  cc->min_bitrate = DEFAULT_MIN_BITRATE;
  cc->start_bitrate = DEFAULT_START_BITRATE;
  cc->adapt_encoder = DEFAULT_ADAPT_ENCODER;
  cc->message_threshold = DEFAULT_MESSAGE_THRESHOLD;
}

void
gst_uvgrtp_sink_cc_clear (GstUvgRtpSinkCc * cc)
{
  gst_clear_object (&cc->encoder);
}

/* --- the encoder -------------------------------------------------------- */

static const Encoder *
encoder_entry (GstElement * e)
{
  GstElementFactory *f = gst_element_get_factory (e);
  const gchar *name = f ? GST_OBJECT_NAME (f) : NULL;

  for (guint i = 0; name && i < G_N_ELEMENTS (encoders); i++)
    if (strcmp (name, encoders[i].factory) == 0)
      return &encoders[i];
  return NULL;
}

/* The first known encoder upstream of the sink pad, through elements of
 * one sink pad (parsers, queues, capsfilters, tees' branches); a new
 * reference, or NULL. */
static GstElement *
find_encoder (GstUvgRtpSink * self, const Encoder ** entry)
{
  GstPad *pad = gst_object_ref (GST_BASE_SINK_PAD (self));

  for (gint depth = 0; depth < 16; depth++) {
    GstPad *peer = gst_pad_get_peer (pad);
    GstElement *up;
    GstIterator *it;
    GValue v = G_VALUE_INIT;
    GstPad *next = NULL;
    gint sinks = 0;

    gst_object_unref (pad);
    if (!peer)
      return NULL;
    /* a ghost pad's target: the element inside the bin */
    while (GST_IS_GHOST_PAD (peer)) {
      GstPad *t = gst_ghost_pad_get_target (GST_GHOST_PAD (peer));
      gst_object_unref (peer);
      if (!(peer = t))
        return NULL;
    }
    up = gst_pad_get_parent_element (peer);
    gst_object_unref (peer);
    if (!up)
      return NULL;
    if ((*entry = encoder_entry (up)))
      return up;
    it = gst_element_iterate_sink_pads (up);
    while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
      sinks++;
      if (!next)
        next = g_value_dup_object (&v);
      g_value_reset (&v);
    }
    g_value_unset (&v);
    gst_iterator_free (it);
    gst_object_unref (up);
    if (sinks != 1) {
      gst_clear_object (&next);
      return NULL;
    }
    pad = next;
  }
  gst_object_unref (pad);
  return NULL;
}

/* The encoder's bitrate (bits/s), or 0. */
static guint64
encoder_get (GstElement * enc, const Encoder * e)
{
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (enc),
      e->property);
  GValue v = G_VALUE_INIT, u = G_VALUE_INIT;
  guint64 r = 0;

  if (!ps || ps->value_type == GST_TYPE_STRUCTURE)
    return 0;
  g_value_init (&v, ps->value_type);
  g_object_get_property (G_OBJECT (enc), e->property, &v);
  g_value_init (&u, G_TYPE_UINT64);
  if (g_value_transform (&v, &u))
    r = g_value_get_uint64 (&u) * e->unit;
  g_value_unset (&v);
  g_value_unset (&u);
  return r;
}

static void
encoder_set (GstUvgRtpSink * self, GstElement * enc, const Encoder * e,
    guint64 bps)
{
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (enc),
      e->property);
  GValue u = G_VALUE_INIT, v = G_VALUE_INIT;

  if (!ps)
    return;
  if (ps->value_type == GST_TYPE_STRUCTURE) {
    /* v4l2: extra-controls, video_bitrate in bits/s */
    GstStructure *s = NULL;
    g_object_get (enc, e->property, &s, NULL);
    if (!s)
      s = gst_structure_new_empty ("controls");
    gst_structure_set (s, "video_bitrate", G_TYPE_INT,
        (gint) MIN (bps, (guint64) G_MAXINT), NULL);
    g_object_set (enc, e->property, s, NULL);
    gst_structure_free (s);
    return;
  }
  g_value_init (&u, G_TYPE_UINT64);
  g_value_set_uint64 (&u, bps / e->unit);
  g_value_init (&v, ps->value_type);
  if (g_value_transform (&u, &v)) {
    g_param_value_validate (ps, &v);    /* clamped to the property's range */
    g_object_set_property (G_OBJECT (enc), e->property, &v);
    GST_DEBUG_OBJECT (self, "%s %s = %" G_GUINT64_FORMAT " bit/s",
        GST_OBJECT_NAME (enc), e->property, bps);
  }
  g_value_unset (&u);
  g_value_unset (&v);
}

/* --- the streaming thread ------------------------------------------------- */

gboolean
gst_uvgrtp_sink_cc_wanted (GstUvgRtpSink * self, gboolean twcc)
{
  gboolean asked = FALSE;

  if (self->rtp_caps && gst_caps_get_size (self->rtp_caps) > 0)
    gst_structure_get_boolean (gst_caps_get_structure (self->rtp_caps, 0),
        "rtcp-fb-ack-ccfb", &asked);
  return self->cc.mode == GST_UVGRTP_CC_GCC
      || (self->cc.mode == GST_UVGRTP_CC_AUTO && (twcc || asked));
}

void
gst_uvgrtp_sink_cc_setup (GstUvgRtpSink * self, gboolean start)
{
  GstUvgRtpSinkCc *cc = &self->cc;
  urtp_cc_config_t cfg = { 0 };
  gboolean twcc = gst_uvgrtp_hdrext_twcc_id (&self->hdrext) != 0, wanted;

  cfg.max_bps = cc->max_bitrate =
      gst_base_sink_get_max_bitrate (GST_BASE_SINK (self));
  GST_OBJECT_LOCK (self);
  wanted = gst_uvgrtp_sink_cc_wanted (self, twcc);
  cfg.min_bps = cc->min_bitrate;
  cfg.start_bps = cc->start_bitrate;
  GST_OBJECT_UNLOCK (self);
  g_atomic_int_set (&cc->bounds_changed, FALSE);
  if (!wanted) {
    if (cc->on)
      urtp_sendstream_set_congestion (self->stream, NULL);
    cc->on = FALSE;
    return;
  }
  /* the encoder: looked for at the start (its bitrate is where the
   * estimate starts) and, when not linked yet then, at the first buffer */
  if (!cc->looked) {
    const Encoder *entry = NULL;
    cc->encoder = find_encoder (self, &entry);
    cc->entry = entry;
    cc->looked = cc->encoder != NULL || !start;
    if (cc->encoder)
      GST_INFO_OBJECT (self, "encoder %s (%s): its %s follows the estimate",
          GST_OBJECT_NAME (cc->encoder), entry->factory, entry->property);
  }
  if (cc->on)
    return;
  if (!cfg.start_bps && cc->encoder)
    cfg.start_bps = encoder_get (cc->encoder, (const Encoder *) cc->entry);
  if (urtp_sendstream_set_congestion (self->stream, &cfg) < 0) {
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS, (NULL),
        ("No memory for congestion control: set 'congestion-control' to "
            "none"));
    return;
  }
  cc->on = TRUE;
  cc->applied = cfg.start_bps ? cfg.start_bps : URTP_CC_DEFAULT_START;
  GST_INFO_OBJECT (self, "congestion control on, from %" G_GUINT64_FORMAT
      " bit/s", cfg.start_bps);
}

void
gst_uvgrtp_sink_cc_update (GstUvgRtpSink * self)
{
  GstUvgRtpSinkCc *cc = &self->cc;
  urtp_cc_stats_t st;
  guint64 est, ask, prev, max;
  gboolean adapt;
  gdouble threshold;
  gint64 now;

  if (!cc->on)
    return;
  max = gst_base_sink_get_max_bitrate (GST_BASE_SINK (self));
  if (g_atomic_int_compare_and_exchange (&cc->bounds_changed, TRUE, FALSE)
      || max != cc->max_bitrate) {
    urtp_cc_config_t cfg = { 0 };
    cc->max_bitrate = max;
    GST_OBJECT_LOCK (self);
    cfg.min_bps = cc->min_bitrate;
    GST_OBJECT_UNLOCK (self);
    /* 0: the controller's own ceiling */
    cfg.max_bps = max ? max : URTP_CC_DEFAULT_MAX;
    urtp_sendstream_set_congestion (self->stream, &cfg);
  }
  if (!urtp_sendstream_congestion (self->stream, &st))
    return;
  est = MIN (st.target_bps, (guint64) G_MAXUINT);
  prev = (guint) g_atomic_int_get (&cc->estimated);
  GST_OBJECT_LOCK (self);
  adapt = cc->adapt_encoder;
  threshold = cc->message_threshold;
  GST_OBJECT_UNLOCK (self);

  if (!prev || est > prev + prev / 100 || est + prev / 100 < prev) {
    g_atomic_int_set (&cc->estimated, (guint) est);
    g_object_notify (G_OBJECT (self), "estimated-bitrate");
  }
  if (!cc->messaged || (gdouble) est > (1 + threshold) * (gdouble) cc->messaged
      || (gdouble) est < (1 - threshold) * (gdouble) cc->messaged) {
    cc->messaged = est;
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self),
            gst_structure_new ("uvgrtp-congestion",
                "estimated-bitrate", G_TYPE_UINT64, est,
                "delivered-bitrate", G_TYPE_UINT64, st.delivered_bps,
                "capacity", G_TYPE_UINT64, st.capacity_bps,
                "queue-delay", G_TYPE_UINT64,
                (guint64) MAX (st.queue_us, 0) * 1000,
                "round-trip-time", G_TYPE_UINT64, (guint64) st.rtt_us * 1000,
                "loss", G_TYPE_DOUBLE, st.loss, NULL)));
  }
  /* the encoder, asked for what the controller says makes the estimate
   * (more while it ramps up after a raise): a cut at once, a raise at
   * most every 250 ms, each only when it moved by 2 % */
  if (!adapt || !cc->encoder)
    return;
  ask = MIN (st.encoder_bps, (guint64) G_MAXUINT);
  now = g_get_monotonic_time ();
  if ((ask < cc->applied && ask + cc->applied * ENCODER_STEP < cc->applied)
      || (ask > cc->applied * (1 + ENCODER_STEP)
          && now - cc->applied_at >= ENCODER_INTERVAL_US)) {
    encoder_set (self, cc->encoder, (const Encoder *) cc->entry, ask);
    cc->applied = ask;
    cc->applied_at = now;
  }
}

void
gst_uvgrtp_sink_cc_stop (GstUvgRtpSink * self)
{
  GstUvgRtpSinkCc *cc = &self->cc;

  cc->on = FALSE;
  cc->looked = FALSE;
  cc->messaged = 0;
  g_atomic_int_set (&cc->estimated, 0);
  gst_clear_object (&cc->encoder);
}
