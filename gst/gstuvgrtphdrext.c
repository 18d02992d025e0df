/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RTP header extensions for both elements: see gstuvgrtphdrext.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstuvgrtphdrext.h"

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_hdrext_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_hdrext_debug

static gboolean
is_twcc (GstRTPHeaderExtension * ext)
{
  const gchar *uri = gst_rtp_header_extension_get_uri (ext);
  return uri && strcmp (uri, URTP_HDREXT_URI_TWCC) == 0;
}

guint
gst_uvgrtp_hdrext_install (GObjectClass * klass, guint prop_auto,
    guint prop_extensions, GCallback add_handler, GCallback clear_handler)
{
  GType type = G_TYPE_FROM_CLASS (klass);

  if (!gst_uvgrtp_hdrext_debug)
    GST_DEBUG_CATEGORY_INIT (gst_uvgrtp_hdrext_debug, "uvgrtphdrext", 0,
        "uvgrtp RTP header extensions");

  /**
   * GstUvgRtpSink:auto-header-extension:
   *
   * Enable the RTP header extensions that the extmap-N fields of the caps
   * ask for (uvgrtpsink: #GstUvgRtpSink:rtp-caps; uvgrtpsrc:
   * #GstUvgRtpSrc:caps) with the objects GStreamer has for their URIs, when
   * no handler of #GstUvgRtpSink::request-extension gives one. As the stock
   * payloaders' and depayloaders' property.
   */
  g_object_class_install_property (klass, prop_auto,
      g_param_spec_boolean ("auto-header-extension", "Automatic RTP header "
          "extensions", "Enable the RTP header extensions the extmap-N "
          "fields of the caps ask for", TRUE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:extensions:
   *
   * The RTP header extensions in use (#GstRTPHeaderExtension objects).
   */
  g_object_class_install_property (klass, prop_extensions,
      gst_param_spec_array ("extensions", "RTP header extensions",
          "The RTP header extensions in use",
          g_param_spec_object ("extension", "Extension", "An extension",
              GST_TYPE_RTP_HEADER_EXTENSION,
              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSink::add-extension:
   * @object: the element
   * @ext: (transfer full): the #GstRTPHeaderExtension, with its ID set
   *
   * Adds an RTP header extension (one with the same ID is replaced).
   */
  g_signal_new_class_handler ("add-extension", type,
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION, add_handler, NULL, NULL, NULL,
      G_TYPE_NONE, 1, GST_TYPE_RTP_HEADER_EXTENSION);
  /**
   * GstUvgRtpSink::clear-extensions:
   * @object: the element
   *
   * Removes every RTP header extension.
   */
  g_signal_new_class_handler ("clear-extensions", type,
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION, clear_handler, NULL, NULL, NULL,
      G_TYPE_NONE, 0);
  /**
   * GstUvgRtpSink::request-extension:
   * @object: the element
   * @ext_id: the ID of the extension
   * @ext_uri: its URI
   *
   * Asked for each extmap-N of the caps that no extension serves yet; the
   * first handler to return a #GstRTPHeaderExtension provides it (its ID
   * is set to @ext_id).
   *
   * Returns: (transfer full) (nullable): the extension, or %NULL
   */
  return g_signal_new ("request-extension", type, G_SIGNAL_RUN_LAST, 0,
      g_signal_accumulator_first_wins, NULL, NULL,
      GST_TYPE_RTP_HEADER_EXTENSION, 2, G_TYPE_UINT, G_TYPE_STRING);
}

void
gst_uvgrtp_hdrext_init (GstUvgRtpHdrExt * h, GstElement * element,
    guint request_signal)
{
  memset (h, 0, sizeof (*h));
  h->element = element;
  g_mutex_init (&h->lock);
  h->exts = g_ptr_array_new_with_free_func (gst_object_unref);
  h->auto_ext = TRUE;
  h->request_signal = request_signal;
}

void
gst_uvgrtp_hdrext_finalize (GstUvgRtpHdrExt * h)
{
  g_ptr_array_unref (h->exts);
  gst_clear_buffer (&h->scratch);
  gst_clear_caps (&h->sink_caps);
  g_mutex_clear (&h->lock);
}

/* Counts what writes per access unit; bumps the serial. Lock held. */
static void
changed (GstUvgRtpHdrExt * h)
{
  gint n = 0;
  for (guint i = 0; i < h->exts->len; i++)
    if (!is_twcc (g_ptr_array_index (h->exts, i)))
      n++;
  g_atomic_int_set (&h->n_exts, n);
  g_atomic_int_set (&h->n_all, (gint) h->exts->len);
  g_atomic_int_inc (&h->serial);
}

static gint
by_id (gconstpointer a, gconstpointer b)
{
  GstRTPHeaderExtension *x = *(GstRTPHeaderExtension **) a;
  GstRTPHeaderExtension *y = *(GstRTPHeaderExtension **) b;
  return (gint) gst_rtp_header_extension_get_id (x) -
      (gint) gst_rtp_header_extension_get_id (y);
}

/* Takes ext (transfer full) in place of any with its ID. Lock held. */
static void
add_locked (GstUvgRtpHdrExt * h, GstRTPHeaderExtension * ext)
{
  guint id = gst_rtp_header_extension_get_id (ext);
  for (guint i = 0; i < h->exts->len; i++) {
    if (gst_rtp_header_extension_get_id (g_ptr_array_index (h->exts, i)) == id) {
      g_ptr_array_remove_index (h->exts, i);
      break;
    }
  }
  if (h->sink_caps)
    gst_rtp_header_extension_set_non_rtp_sink_caps (ext, h->sink_caps);
  g_ptr_array_add (h->exts, ext);
  g_ptr_array_sort (h->exts, by_id);
  changed (h);
}

void
gst_uvgrtp_hdrext_add (GstUvgRtpHdrExt * h, GstRTPHeaderExtension * ext)
{
  guint id;

  g_return_if_fail (GST_IS_RTP_HEADER_EXTENSION (ext));
  id = gst_rtp_header_extension_get_id (ext);
  if (id < 1 || id > 255) {
    GST_ELEMENT_WARNING (h->element, LIBRARY, SETTINGS, (NULL),
        ("add-extension: the extension %s has no ID (1-255); set one with "
            "gst_rtp_header_extension_set_id()",
            GST_STR_NULL (gst_rtp_header_extension_get_uri (ext))));
    return;
  }
  GST_INFO_OBJECT (h->element, "extension %u: %s", id,
      gst_rtp_header_extension_get_uri (ext));
  g_mutex_lock (&h->lock);
  add_locked (h, gst_object_ref (ext));
  g_mutex_unlock (&h->lock);
}

void
gst_uvgrtp_hdrext_clear (GstUvgRtpHdrExt * h)
{
  g_mutex_lock (&h->lock);
  g_ptr_array_set_size (h->exts, 0);
  changed (h);
  g_mutex_unlock (&h->lock);
}

gboolean
gst_uvgrtp_hdrext_set_property (GstUvgRtpHdrExt * h, guint prop_id,
    guint prop_auto, guint prop_extensions, const GValue * value)
{
  if (prop_id != prop_auto)
    return FALSE;
  g_mutex_lock (&h->lock);
  h->auto_ext = g_value_get_boolean (value);
  g_mutex_unlock (&h->lock);
  return TRUE;
}

gboolean
gst_uvgrtp_hdrext_get_property (GstUvgRtpHdrExt * h, guint prop_id,
    guint prop_auto, guint prop_extensions, GValue * value)
{
  if (prop_id == prop_auto) {
    g_mutex_lock (&h->lock);
    g_value_set_boolean (value, h->auto_ext);
    g_mutex_unlock (&h->lock);
    return TRUE;
  }
  if (prop_id == prop_extensions) {
    g_mutex_lock (&h->lock);
    for (guint i = 0; i < h->exts->len; i++) {
      GValue v = G_VALUE_INIT;
      g_value_init (&v, GST_TYPE_RTP_HEADER_EXTENSION);
      g_value_set_object (&v, g_ptr_array_index (h->exts, i));
      gst_value_array_append_and_take_value (value, &v);
    }
    g_mutex_unlock (&h->lock);
    return TRUE;
  }
  return FALSE;
}

/* The URI of an extmap-N value: a string, or GStreamer's array form
 * <direction, uri, attributes>. */
static const gchar *
extmap_uri (const GValue * v)
{
  if (G_VALUE_HOLDS_STRING (v))
    return g_value_get_string (v);
  if (GST_VALUE_HOLDS_ARRAY (v) && gst_value_array_get_size (v) >= 2) {
    const GValue *u = gst_value_array_get_value (v, 1);
    if (G_VALUE_HOLDS_STRING (u))
      return g_value_get_string (u);
  }
  return NULL;
}

static GstRTPHeaderExtension *
find_locked (GstUvgRtpHdrExt * h, guint id)
{
  for (guint i = 0; i < h->exts->len; i++) {
    GstRTPHeaderExtension *e = g_ptr_array_index (h->exts, i);
    if (gst_rtp_header_extension_get_id (e) == id)
      return e;
  }
  return NULL;
}

void
gst_uvgrtp_hdrext_from_caps (GstUvgRtpHdrExt * h, const GstCaps * caps)
{
  GstStructure *s;
  gint n;

  if (!caps || gst_caps_get_size (caps) == 0)
    return;
  s = gst_caps_get_structure (caps, 0);
  n = gst_structure_n_fields (s);
  for (gint i = 0; i < n; i++) {
    const gchar *field = gst_structure_nth_field_name (s, i);
    const gchar *uri;
    GstRTPHeaderExtension *ext = NULL, *have;
    gchar *end = NULL;
    guint64 id;
    gboolean auto_ext;

    if (!g_str_has_prefix (field, "extmap-"))
      continue;
    id = g_ascii_strtoull (field + 7, &end, 10);
    uri = extmap_uri (gst_structure_get_value (s, field));
    if (!end || *end || id < 1 || id > 255 || !uri) {
      GST_WARNING_OBJECT (h->element, "ignoring caps field %s", field);
      continue;
    }
    g_mutex_lock (&h->lock);
    have = find_locked (h, (guint) id);
    if (have && g_strcmp0 (gst_rtp_header_extension_get_uri (have), uri) == 0) {
      if (!gst_rtp_header_extension_set_attributes_from_caps (have, caps))
        GST_WARNING_OBJECT (h->element, "extension %s: attributes refused",
            uri);
      g_mutex_unlock (&h->lock);
      continue;
    }
    auto_ext = h->auto_ext;
    g_mutex_unlock (&h->lock);

    /* the application first, then what GStreamer has for the URI */
    g_signal_emit (h->element, h->request_signal, 0, (guint) id, uri, &ext);
    if (!ext && auto_ext)
      ext = gst_rtp_header_extension_create_from_uri (uri);
    if (!ext) {
      GST_ELEMENT_WARNING (h->element, STREAM, FORMAT, (NULL),
          ("No RTP header extension for %s (caps field %s): install the "
              "plugin that has it, provide it with request-extension or "
              "add-extension, or remove the field", uri, field));
      continue;
    }
    gst_rtp_header_extension_set_id (ext, (guint) id);
    if (!gst_rtp_header_extension_set_attributes_from_caps (ext, caps)) {
      GST_ELEMENT_WARNING (h->element, STREAM, FORMAT, (NULL),
          ("The RTP header extension %s refused the attributes of caps "
              "field %s", uri, field));
      gst_object_unref (ext);
      continue;
    }
    GST_INFO_OBJECT (h->element, "extension %u from caps: %s", (guint) id,
        uri);
    g_mutex_lock (&h->lock);
    add_locked (h, ext);
    g_mutex_unlock (&h->lock);
  }
}

void
gst_uvgrtp_hdrext_set_sink_caps (GstUvgRtpHdrExt * h, GstCaps * caps)
{
  g_mutex_lock (&h->lock);
  gst_caps_replace (&h->sink_caps, caps);
  for (guint i = 0; caps && i < h->exts->len; i++)
    gst_rtp_header_extension_set_non_rtp_sink_caps (g_ptr_array_index
        (h->exts, i), caps);
  g_mutex_unlock (&h->lock);
}

guint
gst_uvgrtp_hdrext_twcc_id (GstUvgRtpHdrExt * h)
{
  guint id = 0;

  g_mutex_lock (&h->lock);
  for (guint i = 0; i < h->exts->len && !id; i++) {
    GstRTPHeaderExtension *e = g_ptr_array_index (h->exts, i);
    if (is_twcc (e))
      id = gst_rtp_header_extension_get_id (e);
  }
  g_mutex_unlock (&h->lock);
  return id;
}

/* The form every writer can use: one-byte unless an ID, a size or an
 * extension needs two-byte. FALSE when none fits all (then one-byte,
 * and those that cannot are left out). */
static gboolean
pick_form (GstUvgRtpHdrExt * h, GstBuffer * buf, gboolean * two_byte)
{
  gboolean need_two = FALSE, all_two = TRUE, all_one = TRUE;

  for (guint i = 0; i < h->exts->len; i++) {
    GstRTPHeaderExtension *e = g_ptr_array_index (h->exts, i);
    GstRTPHeaderExtensionFlags f;
    if (is_twcc (e))
      continue;
    f = gst_rtp_header_extension_get_supported_flags (e);
    if (!(f & GST_RTP_HEADER_EXTENSION_ONE_BYTE))
      all_one = FALSE;
    if (!(f & GST_RTP_HEADER_EXTENSION_TWO_BYTE))
      all_two = FALSE;
    if (urtp_hdrext_needs_two_byte (gst_rtp_header_extension_get_id (e),
            gst_rtp_header_extension_get_max_size (e, buf)))
      need_two = TRUE;
  }
  *two_byte = (need_two || !all_one) && all_two;
  return *two_byte ? TRUE : all_one && !need_two;
}

/* The elements of the access unit in buf into x. FALSE when none wrote. */
static gboolean
write_elements (GstUvgRtpHdrExt * h, GstBuffer * buf, guint32 ssrc, guint8 pt,
    guint32 ts, urtp_hdrext_t * x)
{
  gboolean two_byte;
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;

  g_mutex_lock (&h->lock);
  /* the packet the extensions are told they write into: the access unit's
   * last (marker set: an extension that writes on a frame's last packet
   * only, such as colour space, writes), without payload; what they write
   * goes on every packet of the access unit */
  if (!h->scratch)
    h->scratch = gst_rtp_buffer_new_allocate (0, 0, 0);
  if (gst_rtp_buffer_map (h->scratch, GST_MAP_WRITE, &rtp)) {
    gst_rtp_buffer_set_ssrc (&rtp, ssrc);
    gst_rtp_buffer_set_payload_type (&rtp, pt);
    gst_rtp_buffer_set_timestamp (&rtp, ts);
    gst_rtp_buffer_set_marker (&rtp, TRUE);
    gst_rtp_buffer_unmap (&rtp);
  }
  if (!pick_form (h, buf, &two_byte))
    GST_WARNING_OBJECT (h->element, "the RTP header extensions have no form "
        "in common: the ones that need the two-byte form are left out");
  urtp_hdrext_reset (x, two_byte);
  for (guint i = 0; i < h->exts->len; i++) {
    GstRTPHeaderExtension *e = g_ptr_array_index (h->exts, i);
    guint id = gst_rtp_header_extension_get_id (e);
    gsize max;
    gssize n;
    guint8 *data;

    if (is_twcc (e))
      continue;
    if (!(gst_rtp_header_extension_get_direction (e) &
            GST_RTP_HEADER_EXTENSION_DIRECTION_SENDONLY))
      continue;
    max = gst_rtp_header_extension_get_max_size (e, buf);
    data = urtp_hdrext_reserve (x, id, max);
    if (!data) {
      GST_LOG_OBJECT (h->element, "extension %u (%" G_GSIZE_FORMAT
          " bytes) does not fit", id, max);
      continue;
    }
    n = gst_rtp_header_extension_write (e, buf, two_byte ?
        GST_RTP_HEADER_EXTENSION_TWO_BYTE : GST_RTP_HEADER_EXTENSION_ONE_BYTE,
        h->scratch, data, max);
    if (n < 0 || (gsize) n > max) {
      GST_WARNING_OBJECT (h->element, "extension %u (%s) failed to write",
          id, gst_rtp_header_extension_get_uri (e));
      n = 0;
    }
    urtp_hdrext_commit (x, id, (size_t) n);
  }
  g_mutex_unlock (&h->lock);
  return x->len > 0;
}

void
gst_uvgrtp_hdrext_stream_started (GstUvgRtpHdrExt * h)
{
  h->stream_serial = g_atomic_int_get (&h->serial) - 1;
}

void
gst_uvgrtp_hdrext_send (GstUvgRtpHdrExt * h, urtp_sendstream_t * ss,
    GstBuffer * buf, guint32 ssrc, guint8 pt, guint32 ts)
{
  gint serial = g_atomic_int_get (&h->serial);
  gboolean any = gst_uvgrtp_hdrext_any (h);

  if (serial != h->stream_serial) {
    h->stream_serial = serial;
    guint tw = gst_uvgrtp_hdrext_twcc_id (h);
    urtp_sendstream_set_twcc (ss, tw);
    /* the numbers are there for feedback: take it */
    if (tw && urtp_sendstream_set_ccfb (ss, TRUE) < 0)
      GST_WARNING_OBJECT (h->element, "no memory for congestion control "
          "feedback");
    if (!any)
      urtp_sendstream_set_hdrext (ss, NULL);
  }
  if (any && urtp_sendstream_set_hdrext (ss, write_elements (h, buf, ssrc, pt,
              ts, &h->elems) ? &h->elems : NULL) < 0)
    GST_WARNING_OBJECT (h->element, "RTP header extensions left out: too "
        "many bytes with the transport-wide sequence number");
}

gboolean
gst_uvgrtp_hdrext_read (GstUvgRtpHdrExt * h, const urtp_au_t * au,
    GstBuffer * outbuf)
{
  urtp_hdrext_iter_t it;
  GstRTPHeaderExtensionFlags flags;
  gboolean update = FALSE;
  unsigned id;
  const uint8_t *data;
  size_t len;

  if (au->ext_len == 0 || urtp_hdrext_iter_init (&it, au->ext_profile, au->ext,
          au->ext_len) < 0)
    return FALSE;
  flags = it.two_byte ? GST_RTP_HEADER_EXTENSION_TWO_BYTE :
      GST_RTP_HEADER_EXTENSION_ONE_BYTE;
  g_mutex_lock (&h->lock);
  while (urtp_hdrext_next (&it, &id, &data, &len) == 1) {
    GstRTPHeaderExtension *e = find_locked (h, id);
    if (!e || !(gst_rtp_header_extension_get_direction (e) &
            GST_RTP_HEADER_EXTENSION_DIRECTION_RECVONLY))
      continue;
    if (!gst_rtp_header_extension_read (e, flags, data, len, outbuf)) {
      GST_DEBUG_OBJECT (h->element, "extension %u (%s) refused %"
          G_GSIZE_FORMAT " bytes", id, gst_rtp_header_extension_get_uri (e),
          len);
      continue;
    }
    update |= gst_rtp_header_extension_wants_update_non_rtp_src_caps (e);
  }
  g_mutex_unlock (&h->lock);
  return update;
}

gboolean
gst_uvgrtp_hdrext_update_caps (GstUvgRtpHdrExt * h, GstCaps * caps)
{
  GstCaps *before = gst_caps_copy (caps);
  gboolean changed_caps;

  g_mutex_lock (&h->lock);
  for (guint i = 0; i < h->exts->len; i++) {
    GstRTPHeaderExtension *e = g_ptr_array_index (h->exts, i);
    if (!gst_rtp_header_extension_wants_update_non_rtp_src_caps (e))
      continue;
    if (!gst_rtp_header_extension_update_non_rtp_src_caps (e, caps))
      GST_WARNING_OBJECT (h->element, "extension %s could not update the "
          "caps", gst_rtp_header_extension_get_uri (e));
    gst_rtp_header_extension_set_wants_update_non_rtp_src_caps (e, FALSE);
  }
  g_mutex_unlock (&h->lock);
  changed_caps = !gst_caps_is_strictly_equal (before, caps);
  gst_caps_unref (before);
  return changed_caps;
}

void
gst_uvgrtp_hdrext_sdp (GstUvgRtpHdrExt * h, urtp_sdp_desc_t * d)
{
  d->n_extmap = 0;
  g_mutex_lock (&h->lock);
  for (guint i = 0; i < h->exts->len && d->n_extmap < URTP_SDP_MAX_EXTMAP; i++) {
    GstRTPHeaderExtension *e = g_ptr_array_index (h->exts, i);
    urtp_sdp_extmap_t *m = &d->extmap[d->n_extmap++];
    m->id = gst_rtp_header_extension_get_id (e);
    m->uri = g_intern_string (gst_rtp_header_extension_get_uri (e));
  }
  g_mutex_unlock (&h->lock);
}
