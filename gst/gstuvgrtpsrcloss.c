/* SPDX-License-Identifier: BSD-2-Clause */
/* uvgrtpsrc and loss: what `udpsrc ! rtpjitterbuffer ! depayloader` tells
 * the elements after it and the bus when packets are missing, so that
 * decoders conceal as they would there.
 *
 * - do-lost: before the first buffer after a gap, a GstRTPPacketLost
 *   event (rtpjitterbuffer's, one per gap: seqnum is the first missing
 *   sequence number, timestamp and duration span the missing media), and
 *   for audio the gap event a depayloader makes of it (flagged missing
 *   data), which opusdec with plc=true fills with concealment, so the
 *   output's duration stays that of the stream. Video gets no gap event:
 *   its presentation times are not in decoding order, and video decoders
 *   go by the buffers' DISCONT flag.
 * - drop-on-latency: an access unit that is ready later than its
 *   presentation time plus the latency would be late downstream anyway;
 *   it is dropped (and its media is part of the next gap).
 * - post-drop-messages: rtpjitterbuffer's "drop-msg" element messages,
 *   reason "too-late" (packets after their gap was given up or their
 *   sequence number was out) or "drop-on-latency", at most one per
 *   drop-messages-interval, counting the drops since the last one.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstuvgrtpsrc.h"

GST_DEBUG_CATEGORY_EXTERN (gst_uvgrtp_src_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_src_debug

void
gst_uvgrtp_src_loss_reset (GstUvgRtpSrc * self)
{
  GstUvgRtpSrcLoss *l = &self->loss;

  l->prev_end = l->gap_start = GST_CLOCK_TIME_NONE;
  l->gap_missing = 0;
  l->late_seen = 0;
  l->num_too_late = l->num_drop_on_latency = 0;
  l->last_drop_msg = 0;
  l->dropped_on_latency = l->lost_events = 0;
}

/* A drop of `reason`: a drop-msg when asked for and the interval since
 * the last one has passed. */
static void
drop_message (GstUvgRtpSrc * self, const gchar * reason, guint seqnum,
    GstClockTime timestamp)
{
  GstUvgRtpSrcLoss *l = &self->loss;
  gint64 now = g_get_monotonic_time ();
  GstStructure *s;

  if (!g_atomic_int_get (&self->post_drop_messages))
    return;
  if (l->last_drop_msg && now - l->last_drop_msg <
      (gint64) (guint) g_atomic_int_get ((gint *) & self->drop_messages_interval) * 1000)
    return;
  s = gst_structure_new ("drop-msg",
      "seqnum", G_TYPE_UINT, seqnum & 0xffff,
      "timestamp", GST_TYPE_CLOCK_TIME, timestamp,
      "reason", G_TYPE_STRING, reason,
      "num-too-late", G_TYPE_UINT, l->num_too_late,
      "num-drop-on-latency", G_TYPE_UINT, l->num_drop_on_latency, NULL);
  l->num_too_late = l->num_drop_on_latency = 0;
  l->last_drop_msg = now;
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
}

/* The running time of a time on the pipeline clock; NONE without one. */
static GstClockTime
to_running (GstUvgRtpSrc * self, guint64 t)
{
  GstClockTime base;

  if (!self->have_clock)
    return GST_CLOCK_TIME_NONE;
  base = gst_element_get_base_time (GST_ELEMENT (self));
  return t > base ? t - base : 0;
}

gboolean
gst_uvgrtp_src_loss_drop_late (GstUvgRtpSrc * self,
    urtp_recvstream_frame_t * f)
{
  GstUvgRtpSrcLoss *l = &self->loss;
  GstClockTime now, latency;
  GstClock *clock;

  if (!g_atomic_int_get (&self->drop_on_latency) || !self->have_clock)
    return FALSE;
  clock = gst_element_get_clock (GST_ELEMENT (self));
  if (!clock)
    return FALSE;
  now = gst_clock_get_time (clock);
  gst_object_unref (clock);
  latency = (GstClockTime) (guint) g_atomic_int_get ((gint *) & self->latency)
      * GST_MSECOND;
  if (now <= f->pts + latency)
    return FALSE;

  GST_DEBUG_OBJECT (self, "dropping AU ts %u: ready %" GST_TIME_FORMAT
      " after its time, latency %" GST_TIME_FORMAT, f->au.rtp_ts,
      GST_TIME_ARGS (now - f->pts), GST_TIME_ARGS (latency));
  /* the gap (what was missing before it, and it) starts where the last
   * buffer ended */
  if (l->gap_missing == 0)
    l->gap_start = GST_CLOCK_TIME_IS_VALID (l->prev_end) ? l->prev_end :
        to_running (self, f->pts);
  l->gap_missing += f->missing + (f->au.last_seq - f->au.first_seq + 1);
  l->num_drop_on_latency++;
  GST_OBJECT_LOCK (self);
  l->dropped_on_latency++;
  GST_OBJECT_UNLOCK (self);
  drop_message (self, "drop-on-latency", (guint) f->au.first_seq,
      to_running (self, f->pts));
  urtp_depay_release (f->au.data);
  /* a picture missing breaks the ones that refer to it */
  if (self->session.codec != URTP_CODEC_OPUS &&
      g_atomic_int_get (&self->request_keyframe))
    urtp_recvstream_request_keyframe (self->stream, FALSE);
  return TRUE;
}

void
gst_uvgrtp_src_loss_before (GstUvgRtpSrc * self,
    const urtp_recvstream_frame_t * f, GstBuffer * buf)
{
  GstUvgRtpSrcLoss *l = &self->loss;
  GstClockTime pts = GST_BUFFER_PTS (buf), start, duration = 0;
  guint64 missing;
  guint seqnum;
  GstEvent *ev;

  if (f->missing && l->gap_missing == 0)
    l->gap_start = l->prev_end;
  missing = l->gap_missing + f->missing;
  l->gap_missing = 0;
  start = l->gap_start;
  /* where the next gap would start: the end of this buffer */
  l->prev_end = pts;
  if (GST_CLOCK_TIME_IS_VALID (pts) && GST_BUFFER_DURATION_IS_VALID (buf))
    l->prev_end = pts + GST_BUFFER_DURATION (buf);
  if (!missing || !g_atomic_int_get (&self->do_lost))
    return;

  if (!GST_CLOCK_TIME_IS_VALID (start))
    start = pts;
  if (GST_CLOCK_TIME_IS_VALID (start) && GST_CLOCK_TIME_IS_VALID (pts) &&
      pts > start)
    duration = pts - start;
  seqnum = (guint) ((f->au.first_seq - missing) & 0xffff);
  GST_DEBUG_OBJECT (self, "%" G_GUINT64_FORMAT " packets lost from seq %u: "
      "%" GST_TIME_FORMAT " for %" GST_TIME_FORMAT, missing, seqnum,
      GST_TIME_ARGS (start), GST_TIME_ARGS (duration));
  ev = gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM,
      gst_structure_new ("GstRTPPacketLost",
          "seqnum", G_TYPE_UINT, seqnum,
          "timestamp", G_TYPE_UINT64, (guint64) start,
          "duration", G_TYPE_UINT64, (guint64) duration,
          "late", G_TYPE_BOOLEAN, FALSE,
          "retry", G_TYPE_UINT, 0, NULL));
  gst_pad_push_event (GST_BASE_SRC_PAD (self), ev);
  if (self->session.codec == URTP_CODEC_OPUS && duration > 0) {
    ev = gst_event_new_gap (start, duration);
    gst_event_set_gap_flags (ev, GST_GAP_FLAG_MISSING_DATA);
    gst_pad_push_event (GST_BASE_SRC_PAD (self), ev);
  }
  GST_OBJECT_LOCK (self);
  l->lost_events++;
  GST_OBJECT_UNLOCK (self);
}

void
gst_uvgrtp_src_loss_check_late (GstUvgRtpSrc * self,
    const urtp_recvstream_stats_t * st)
{
  GstUvgRtpSrcLoss *l = &self->loss;
  guint64 late = st->depay.seq.late;
  GstClockTime base, now;
  GstClock *clock;

  if (late <= l->late_seen) {
    l->late_seen = late;
    return;
  }
  l->num_too_late += (guint) (late - l->late_seen);
  l->late_seen = late;
  now = GST_CLOCK_TIME_NONE;
  clock = gst_element_get_clock (GST_ELEMENT (self));
  if (clock) {
    base = gst_element_get_base_time (GST_ELEMENT (self));
    now = gst_clock_get_time (clock);
    now = now > base ? now - base : 0;
    gst_object_unref (clock);
  }
  drop_message (self, "too-late", st->depay.seq.last_late, now);
}
