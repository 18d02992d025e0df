/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsrc and its output forms: what rtph264depay and rtph265depay
 * negotiate with the elements after them.
 *
 * - stream-format: byte-stream (as lib/ assembles access units), or the
 *   length-prefixed forms of ISO/IEC 14496-15 with codec_data: H.264 avc
 *   (parameter sets in codec_data only) and avc3 (in band too), H.265 hvc1
 *   and hev1 likewise. H.266 is byte-stream only, as GStreamer's h266parse
 *   takes it. lib/nalform.h converts in place and keeps the parameter
 *   sets; new caps with a new codec_data go out before the first buffer
 *   whose sets changed it. Until the sets a decoder needs are known (from
 *   sprop-* in the caps, or in band), access units are dropped: nothing
 *   downstream could use them, and codec_data must come first.
 * - alignment: au (one buffer per access unit) or nal (a buffer list, one
 *   buffer per NAL unit sharing the access unit's memory, the last one
 *   flagged MARKER, as the depayloaders flag the end of an access unit).
 *
 * byte-stream and au whenever downstream takes them: the form lib/
 * assembles, nothing to convert, and the parameter sets stay in band for a
 * decoder that starts late. Otherwise downstream's first choice (the
 * depayloaders follow downstream's first choice always: a decoder listing
 * avc first gets avc from them, byte-stream from here; both decode).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstuvgrtpsrc.h"

#include <gst/video/video.h>

GST_DEBUG_CATEGORY_EXTERN (gst_uvgrtp_src_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_src_debug

void
gst_uvgrtp_src_out_reset (GstUvgRtpSrc * self)
{
  GstUvgRtpSrcOut *o = &self->out;

  if (o->form_init)
    urtp_nalform_free (&o->form);
  o->form_init = FALSE;
  o->kind = URTP_NALFORM_BYTE_STREAM;
  o->nal_aligned = FALSE;
  o->caps_due = FALSE;
  o->waiting = FALSE;
  gst_clear_caps (&o->caps);
}

static urtp_nalform_kind_t
kind_of (const gchar * format)
{
  if (!format || g_str_equal (format, "byte-stream"))
    return URTP_NALFORM_BYTE_STREAM;
  if (g_str_equal (format, "avc3") || g_str_equal (format, "hev1"))
    return URTP_NALFORM_LENGTH;
  return URTP_NALFORM_LENGTH_OOB;
}

/* The caps with codec_data of the current sets, made of what is on the
 * pad now (the header extensions may have added to it) or the negotiated
 * caps. NULL if the record cannot be written. */
static GstCaps *
caps_with_record (GstUvgRtpSrc * self)
{
  GstUvgRtpSrcOut *o = &self->out;
  GstCaps *cur = gst_pad_get_current_caps (GST_BASE_SRC_PAD (self)), *caps;
  /* measured first (a room of 0 writes nothing), then written */
  gint n = urtp_nalform_record (&o->form, NULL, 0);
  guint8 *rec = n > 0 ? g_malloc ((gsize) n) : NULL;
  GstBuffer *cd;

  if (n > 0)
    n = urtp_nalform_record (&o->form, rec, (size_t) n);
  if (n <= 0) {
    GST_WARNING_OBJECT (self, "no codec_data of these parameter sets: %s",
        g_strerror (-n));
    g_free (rec);
    gst_clear_caps (&cur);
    return NULL;
  }
  cd = gst_buffer_new_wrapped (rec, (gsize) n);
  caps = gst_caps_copy (cur ? cur : o->caps);
  gst_caps_set_simple (caps, "codec_data", GST_TYPE_BUFFER, cd, NULL);
  gst_buffer_unref (cd);
  gst_clear_caps (&cur);
  return caps;
}

gboolean
gst_uvgrtp_src_out_negotiate (GstUvgRtpSrc * self, GstCaps * ours)
{
  GstUvgRtpSrcOut *o = &self->out;
  GstPad *pad = GST_BASE_SRC_PAD (self);
  GstCaps *peer = gst_pad_peer_query_caps (pad, ours), *caps;
  GstStructure *s;
  urtp_nalform_kind_t kind;
  gboolean ok;

  if (!peer || gst_caps_is_empty (peer)) {
    GST_WARNING_OBJECT (self, "downstream accepts none of %" GST_PTR_FORMAT,
        ours);
    gst_clear_caps (&peer);
    return FALSE;
  }
  /* The form downstream takes (byte-stream and au if among them, else
   * its first), onto our own caps: only the form is taken, so that fields
   * downstream wants and only a parser knows (a muxer's width and height)
   * are not made up here. */
  caps = gst_caps_copy (ours);
  s = gst_caps_get_structure (caps, 0);
  if (!gst_caps_is_any (peer) && gst_structure_has_field (s, "alignment")) {
    GstStructure *first = gst_structure_copy (gst_caps_get_structure (peer,
            0));

    gst_structure_fixate_field_string (first, "stream-format", "byte-stream");
    gst_structure_fixate_field_string (first, "alignment", "au");
    if (gst_structure_get_string (first, "stream-format"))
      gst_structure_set (s, "stream-format", G_TYPE_STRING,
          gst_structure_get_string (first, "stream-format"), NULL);
    if (gst_structure_get_string (first, "alignment"))
      gst_structure_set (s, "alignment", G_TYPE_STRING,
          gst_structure_get_string (first, "alignment"), NULL);
    gst_structure_free (first);
  }
  gst_caps_unref (peer);
  caps = gst_caps_fixate (caps);
  s = gst_caps_get_structure (caps, 0);
  kind = kind_of (gst_structure_get_string (s, "stream-format"));
  o->nal_aligned = g_strcmp0 (gst_structure_get_string (s, "alignment"),
      "nal") == 0;
  gst_caps_replace (&o->caps, caps);

  if (self->session.codec == URTP_CODEC_OPUS) {
    o->kind = URTP_NALFORM_BYTE_STREAM;
  } else if (!o->form_init || o->form.codec != self->session.codec) {
    /* a new codec: its sets so far are those of the caps (sprop-*) */
    if (o->form_init)
      urtp_nalform_free (&o->form);
    o->form_init = urtp_nalform_init (&o->form, self->session.codec,
        kind) == 0;
    if (o->form_init && self->session.params) {
      GstMapInfo map;

      if (gst_memory_map (self->session.params, &map, GST_MAP_READ)) {
        urtp_nalform_seed (&o->form, map.data, map.size);
        gst_memory_unmap (self->session.params, &map);
      }
    }
  } else {
    /* the same stream in another form: the sets seen are kept */
    o->form.kind = kind;
  }
  o->kind = o->form_init ? kind : URTP_NALFORM_BYTE_STREAM;

  GST_DEBUG_OBJECT (self, "output caps %" GST_PTR_FORMAT, caps);
  if (o->kind == URTP_NALFORM_BYTE_STREAM) {
    ok = gst_base_src_set_caps (GST_BASE_SRC (self), caps);
  } else if (urtp_nalform_ready (&o->form)) {
    GstCaps *full = caps_with_record (self);

    ok = full && gst_base_src_set_caps (GST_BASE_SRC (self), full);
    gst_clear_caps (&full);
    o->caps_due = FALSE;
  } else {
    /* caps go with the first access unit whose sets complete them */
    GST_INFO_OBJECT (self, "%s output waits for the parameter sets (in band, "
        "or sprop-* in the 'caps' property)",
        gst_structure_get_string (s, "stream-format"));
    o->caps_due = TRUE;
    ok = TRUE;
  }
  gst_caps_unref (caps);
  return ok;
}

gboolean
gst_uvgrtp_src_out_convert (GstUvgRtpSrc * self, urtp_recvstream_frame_t * f)
{
  GstUvgRtpSrcOut *o = &self->out;
  size_t len = f->au.len;
  gint r;

  if (o->kind == URTP_NALFORM_BYTE_STREAM)
    return TRUE;
  r = urtp_nalform_convert (&o->form, f->au.data, &len);
  f->au.len = len;
  if (r < 0) {
    GST_WARNING_OBJECT (self, "access unit not converted: %s", g_strerror (-r));
    goto drop;
  }
  if (!urtp_nalform_ready (&o->form)) {
    if (!o->waiting)
      GST_INFO_OBJECT (self, "dropping access units until the parameter sets "
          "are known");
    o->waiting = TRUE;
    goto drop;
  }
  if (r == 1 || o->caps_due) {
    GstCaps *caps = caps_with_record (self);

    if (!caps)
      goto drop;
    GST_INFO_OBJECT (self, "codec_data from the parameter sets: %"
        GST_PTR_FORMAT, caps);
    gst_base_src_set_caps (GST_BASE_SRC (self), caps);
    gst_caps_unref (caps);
    o->caps_due = FALSE;
    o->waiting = FALSE;
  }
  if (f->au.len == 0)
    goto drop;                  /* parameter sets only: all in codec_data */
  return TRUE;

drop:
  urtp_depay_release (f->au.data);
  f->au.data = NULL;
  return FALSE;
}

/* The NAL units of one mapped piece of buf from offset base on, as
 * buffers sharing its memory, appended to list. */
static void
split_piece (GstUvgRtpSrc * self, GstBuffer * buf, const guint8 * data,
    gsize size, gsize base, GstBufferList * list)
{
  size_t off = 0, unit;

  while (urtp_nalform_next (&self->out.form, data, size, &off, &unit)) {
    GstBuffer *nal = gst_buffer_copy_region (buf, GST_BUFFER_COPY_ALL,
        base + off - unit, unit);

    if (gst_buffer_list_length (list) > 0)
      GST_BUFFER_FLAG_UNSET (nal, GST_BUFFER_FLAG_DISCONT);
    gst_buffer_list_add (list, nal);
  }
}

GstBuffer *
gst_uvgrtp_src_out_finish (GstUvgRtpSrc * self, GstBuffer * buf)
{
  GstBufferList *list;
  gsize base = 0;
  guint i, n;

  if (!self->out.nal_aligned || !self->out.form_init)
    return buf;
  /* each memory (the in-band sets put before the first access unit, then
   * the access unit) holds whole NAL units: walked one at a time, so that
   * nothing is merged or copied */
  list = gst_buffer_list_new ();
  n = gst_buffer_n_memory (buf);
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buf, i);
    GstMapInfo map;

    if (!gst_memory_map (mem, &map, GST_MAP_READ))
      continue;
    split_piece (self, buf, map.data, map.size, base, list);
    base += map.size;
    gst_memory_unmap (mem, &map);
  }
  n = gst_buffer_list_length (list);
  if (n == 0) {
    gst_buffer_list_unref (list);
    return buf;
  }
  GST_BUFFER_FLAG_SET (gst_buffer_list_get_writable (list, n - 1),
      GST_VIDEO_BUFFER_FLAG_MARKER);
  gst_buffer_unref (buf);
  gst_base_src_submit_buffer_list (GST_BASE_SRC (self), list);
  return NULL;
}
