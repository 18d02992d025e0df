/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtpsink against GStreamer's stock receivers, over real UDP sockets on
 * loopback: streams made by real encoders go through uvgrtpsink into
 * udpsrc ! rtph26xdepay / rtpopusdepay; every access unit must arrive with
 * its NAL units byte for byte, and a decoder must decode every frame.
 * Every datagram's RTP header is recorded on the udpsrc side, so that the
 * element's statistics, headers and MTU can be checked exactly.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>

#include "testutil.h"

#define FRAMES 30
#define RX_BUFFER_SIZE (4 * 1024 * 1024)

typedef enum
{
  H264,
  H265,
  H266,
} VCodec;

/* Byte-wise big-endian reads (GStreamer's macros load unaligned words). */
static guint
rd16 (const guint8 * p)
{
  return (guint) p[0] << 8 | p[1];
}

static guint32
rd32 (const guint8 * p)
{
  return (guint32) p[0] << 24 | (guint32) p[1] << 16 | (guint32) p[2] << 8 |
      p[3];
}

/* ------------------------------------------------------------------------ */
/* Helpers: collecting buffers                                              */

typedef struct
{
  GMutex lock;
  GPtrArray *bufs;              /* GstBuffer */
  GstCaps *caps;
} Collect;

static void
collect_init (Collect * c)
{
  g_mutex_init (&c->lock);
  c->bufs = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_buffer_unref);
  c->caps = NULL;
}

static void
collect_clear (Collect * c)
{
  g_ptr_array_unref (c->bufs);
  gst_caps_replace (&c->caps, NULL);
  g_mutex_clear (&c->lock);
}

static guint
collect_len (Collect * c)
{
  guint n;

  g_mutex_lock (&c->lock);
  n = c->bufs->len;
  g_mutex_unlock (&c->lock);
  return n;
}

static GstFlowReturn
on_new_sample (GstAppSink * sink, gpointer user_data)
{
  Collect *c = user_data;
  GstSample *s = gst_app_sink_pull_sample (sink);
  const GstSegment *seg;
  GstBuffer *buf;

  if (!s)
    return GST_FLOW_EOS;
  /* Timestamps become running times: encoders start their segments at
   * 1000 hours, and the buffers go on into pipelines of their own. */
  buf = gst_buffer_copy (gst_sample_get_buffer (s));
  seg = gst_sample_get_segment (s);
  if (seg && seg->format == GST_FORMAT_TIME) {
    GST_BUFFER_PTS (buf) = gst_segment_to_running_time (seg, GST_FORMAT_TIME,
        GST_BUFFER_PTS (buf));
    GST_BUFFER_DTS (buf) = gst_segment_to_running_time (seg, GST_FORMAT_TIME,
        GST_BUFFER_DTS (buf));
  }
  g_mutex_lock (&c->lock);
  if (!c->caps && gst_sample_get_caps (s))
    c->caps = gst_caps_ref (gst_sample_get_caps (s));
  g_ptr_array_add (c->bufs, buf);
  g_mutex_unlock (&c->lock);
  gst_sample_unref (s);
  return GST_FLOW_OK;
}

static void
attach_collect (GstElement * pipeline, const gchar * name, Collect * c)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), name);
  GstAppSinkCallbacks cb;

  memset (&cb, 0, sizeof (cb));
  cb.new_sample = on_new_sample;
  fail_unless (sink != NULL);
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, c, NULL);
  gst_object_unref (sink);
}

/* Runs a pipeline to EOS; fails on an error message. */
static void
run_to_eos (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "pipeline timed out");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    fail ("error from %s: %s (%s)", GST_OBJECT_NAME (msg->src),
        err->message, dbg ? dbg : "");
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
}

/* Runs `desc` (ending in "appsink name=out") and collects its output. */
static void
encode (const gchar * desc, Collect * out)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);

  fail_unless (pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  collect_init (out);
  attach_collect (pipeline, "out", out);
  run_to_eos (pipeline);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  fail_unless (out->caps != NULL);
  fail_unless (out->bufs->len > 0);
}

/* ------------------------------------------------------------------------ */
/* Receiver: udpsrc, recording each datagram, then a depayloader            */

typedef struct
{
  guint len;
  guint8 pt;
  gboolean marker;
  guint16 seq;
  guint32 ts;
  guint32 ssrc;
  guint8 payload[3];            /* first payload bytes (payload headers) */
  guint pad;                    /* RTP padding bytes (P bit, last octet) */
} Dgram;

typedef struct
{
  GstElement *pipeline;
  gint port;
  GMutex lock;
  GArray *dgrams;               /* Dgram */
  guint64 bytes;
  Collect out;                  /* depayloader output */
} Rx;

static void
record_dgram (Rx * rx, GstBuffer * buf)
{
  GstMapInfo map;
  Dgram d = { 0 };

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  d.len = (guint) map.size;
  if (map.size >= 13) {
    d.marker = (map.data[1] & 0x80) != 0;
    d.pt = map.data[1] & 0x7f;
    d.seq = rd16 (map.data + 2);
    d.ts = rd32 (map.data + 4);
    d.ssrc = rd32 (map.data + 8);
    memcpy (d.payload, map.data + 12, MIN (3, map.size - 12));
    if (map.data[0] & 0x20)
      d.pad = map.data[map.size - 1];
  }
  gst_buffer_unmap (buf, &map);
  g_mutex_lock (&rx->lock);
  g_array_append_val (rx->dgrams, d);
  rx->bytes += d.len;
  g_mutex_unlock (&rx->lock);
}

static GstPadProbeReturn
udpsrc_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Rx *rx = user_data;

  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER) {
    record_dgram (rx, GST_PAD_PROBE_INFO_BUFFER (info));
  } else if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    GstBufferList *l = GST_PAD_PROBE_INFO_BUFFER_LIST (info);
    for (guint i = 0; i < gst_buffer_list_length (l); i++)
      record_dgram (rx, gst_buffer_list_get (l, i));
  }
  return GST_PAD_PROBE_OK;
}

/* rtp_caps: caps for udpsrc; depay: the rest of the chain (may be NULL for
 * datagrams only), ending before the appsink. */
static void
rx_start (Rx * rx, const gchar * rtp_caps, const gchar * depay)
{
  GError *err = NULL;
  GstElement *src;
  GstPad *pad;
  gchar *desc;

  rx->port = free_udp_port ();
  desc = g_strdup_printf ("udpsrc name=src address=127.0.0.1 port=%d "
      "buffer-size=%d caps=\"%s\" ! %s%s appsink name=out sync=false",
      rx->port, RX_BUFFER_SIZE, rtp_caps, depay ? depay : "",
      depay ? " !" : "");
  rx->pipeline = gst_parse_launch (desc, &err);
  fail_unless (rx->pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  g_mutex_init (&rx->lock);
  rx->dgrams = g_array_new (FALSE, TRUE, sizeof (Dgram));
  rx->bytes = 0;
  collect_init (&rx->out);
  attach_collect (rx->pipeline, "out", &rx->out);

  src = gst_bin_get_by_name (GST_BIN (rx->pipeline), "src");
  pad = gst_element_get_static_pad (src, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, udpsrc_probe, rx, NULL);
  gst_object_unref (pad);
  gst_object_unref (src);

  /* udpsrc binds in READY->PAUSED, which set_state completes before it
   * returns (the sink's preroll is what stays asynchronous) */
  fail_unless (gst_element_set_state (rx->pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
}

static guint
rx_ndgrams (Rx * rx)
{
  guint n;

  g_mutex_lock (&rx->lock);
  n = rx->dgrams->len;
  g_mutex_unlock (&rx->lock);
  return n;
}

/* Waits (bounded) until dgrams datagrams and outputs outputs arrived. The
 * counts are then checked exactly by the caller. */
static void
rx_wait (Rx * rx, guint dgrams, guint outputs)
{
  for (gint i = 0; i < 500; i++) {
    if (rx_ndgrams (rx) >= dgrams && collect_len (&rx->out) >= outputs)
      break;
    g_usleep (10000);
  }
  /* anything extra would arrive right behind */
  g_usleep (50000);
  gst_element_set_state (rx->pipeline, GST_STATE_NULL);
}

static void
rx_clear (Rx * rx)
{
  gst_element_set_state (rx->pipeline, GST_STATE_NULL);
  gst_object_unref (rx->pipeline);
  g_array_unref (rx->dgrams);
  collect_clear (&rx->out);
  g_mutex_clear (&rx->lock);
}

/* ------------------------------------------------------------------------ */
/* Sender: appsrc ! uvgrtpsink                                              */

/* Feeds the collected stream into uvgrtpsink (sync=TRUE, real time) and
 * waits for EOS. Returns the pipeline, still PLAYING, so that the caller
 * can read stats and sdp; the sink is in *sink. list_size > 0 pushes
 * buffer lists of that many buffers. */
static GstElement *
send_stream_full (Collect * in, gint port, const gchar * props,
    guint list_size, guint recaps_at, GstElement ** sink)
{
  GError *err = NULL;
  GstElement *pipeline, *src;
  gchar *desc;

  desc = g_strdup_printf ("appsrc name=src format=time ! "
      "uvgrtpsink name=sink host=127.0.0.1 port=%d %s", port, props);
  pipeline = gst_parse_launch (desc, &err);
  fail_unless (pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_object_set (src, "caps", in->caps, NULL);

  for (guint i = 0; i < in->bufs->len;) {
    if (recaps_at && i == recaps_at) {
      /* new caps mid-stream (as a parser updating them would send) */
      GstCaps *c = gst_caps_copy (in->caps);
      gst_caps_set_simple (c, "pixel-aspect-ratio", GST_TYPE_FRACTION, 2, 1,
          NULL);
      g_object_set (src, "caps", c, NULL);
      gst_caps_unref (c);
    }
    if (list_size > 0) {
      GstBufferList *l = gst_buffer_list_new ();
      for (guint j = 0; j < list_size && i < in->bufs->len; j++, i++)
        gst_buffer_list_add (l, gst_buffer_ref (g_ptr_array_index (in->bufs,
                    i)));
      fail_unless_equals_int (gst_app_src_push_buffer_list (GST_APP_SRC
              (src), l), GST_FLOW_OK);
    } else {
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
              gst_buffer_ref (g_ptr_array_index (in->bufs, i))), GST_FLOW_OK);
      i++;
    }
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_object_unref (src);
  run_to_eos (pipeline);
  return pipeline;
}

static GstElement *
send_stream (Collect * in, gint port, const gchar * props, guint list_size,
    GstElement ** sink)
{
  return send_stream_full (in, port, props, list_size, 0, sink);
}

static void
get_stats (GstElement * sink, guint64 * packets, guint64 * bytes,
    guint64 * aus, guint64 * errors, guint64 * syscalls, gchar ** mode)
{
  GstStructure *st = NULL;

  g_object_get (sink, "stats", &st, NULL);
  fail_unless (st != NULL);
  fail_unless (gst_structure_has_name (st, "application/x-uvgrtp-sink-stats"));
  fail_unless (gst_structure_get_uint64 (st, "packets", packets));
  fail_unless (gst_structure_get_uint64 (st, "bytes", bytes));
  fail_unless (gst_structure_get_uint64 (st, "access-units", aus));
  fail_unless (gst_structure_get_uint64 (st, "send-errors", errors));
  fail_unless (gst_structure_get_uint64 (st, "syscalls", syscalls));
  *mode = g_strdup (gst_structure_get_string (st, "send-mode"));
  fail_unless (*mode != NULL);
  gst_structure_free (st);
}

/* ------------------------------------------------------------------------ */
/* NAL units                                                                */

typedef struct
{
  const guint8 *data;
  gsize len;
} Nal;

/* Naive Annex-B split: the reference the element's output is checked
 * against (start code 00 00 01; trailing zero bytes belong to no NAL). */
static GArray *
split_annexb (const guint8 * p, gsize n)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (Nal));
  gsize i = 0, start = G_MAXSIZE;

  while (i + 3 <= n) {
    if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1) {
      if (start != G_MAXSIZE) {
        gsize end = i;
        while (end > start && p[end - 1] == 0)
          end--;
        if (end > start) {
          Nal nal = { p + start, end - start };
          g_array_append_val (out, nal);
        }
      }
      i += 3;
      start = i;
    } else {
      i++;
    }
  }
  if (start != G_MAXSIZE) {
    gsize end = n;
    while (end > start && p[end - 1] == 0)
      end--;
    if (end > start) {
      Nal nal = { p + start, end - start };
      g_array_append_val (out, nal);
    }
  }
  return out;
}

static GArray *
split_prefixed (const guint8 * p, gsize n, guint size_len)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (Nal));
  gsize off = 0;

  while (off + size_len <= n) {
    gsize len = 0;
    for (guint i = 0; i < size_len; i++)
      len = len << 8 | p[off + i];
    off += size_len;
    fail_unless (len <= n - off);
    if (len) {
      Nal nal = { p + off, len };
      g_array_append_val (out, nal);
    }
    off += len;
  }
  fail_unless_equals_uint64 (off, n);
  return out;
}

static guint
nal_type (VCodec c, const Nal * nal)
{
  switch (c) {
    case H264:
      return nal->data[0] & 0x1f;
    case H265:
      return (nal->data[0] >> 1) & 0x3f;
    default:
      return nal->data[1] >> 3;
  }
}

static gboolean
is_ps (VCodec c, guint t)
{
  switch (c) {
    case H264:
      return t == 7 || t == 8;
    case H265:
      return t >= 32 && t <= 34;
    default:
      return t >= 13 && t <= 16;
  }
}

static gboolean
is_vcl (VCodec c, guint t)
{
  switch (c) {
    case H264:
      return t >= 1 && t <= 5;
    case H265:
      return t <= 31;
    default:
      return t <= 11;
  }
}

static gboolean
is_key (VCodec c, guint t)
{
  switch (c) {
    case H264:
      return t == 5;
    case H265:
      return t >= 16 && t <= 23;
    default:
      return t >= 7 && t <= 10;
  }
}

/* Parameter-set types a decoder needs, as a bit mask over NAL types. */
static guint64
required_ps (VCodec c)
{
  switch (c) {
    case H264:
      return (1ull << 7) | (1ull << 8);
    case H265:
      return (1ull << 32) | (1ull << 33) | (1ull << 34);
    default:
      return (1ull << 15) | (1ull << 16);
  }
}

/* The stream as sent: NAL units of each AU, and every parameter set known
 * (in band or from codec_data). */
typedef struct
{
  VCodec codec;
  GPtrArray *aus;               /* GArray of Nal, one per input buffer */
  GPtrArray *maps;              /* GstMapInfo*, kept mapped */
  GPtrArray *ps;                /* GBytes */
  guint key_aus;
} Sent;

static void
sent_add_ps (Sent * s, const guint8 * d, gsize len)
{
  for (guint i = 0; i < s->ps->len; i++) {
    gsize l;
    const guint8 *x = g_bytes_get_data (g_ptr_array_index (s->ps, i), &l);
    if (l == len && memcmp (x, d, len) == 0)
      return;
  }
  g_ptr_array_add (s->ps, g_bytes_new (d, len));
}

/* Parses avcC/hvcC parameter sets into s->ps; returns the NAL length size. */
static guint
sent_parse_codec_data (Sent * s, GstBuffer * cd)
{
  GstMapInfo m;
  guint size_len;
  gsize off;

  fail_unless (gst_buffer_map (cd, &m, GST_MAP_READ));
  if (s->codec == H264) {
    guint nsps, npps;
    fail_unless (m.size >= 7);
    size_len = (m.data[4] & 3) + 1;
    nsps = m.data[5] & 0x1f;
    off = 6;
    for (guint i = 0; i < nsps; i++) {
      guint l = rd16 (m.data + off);
      sent_add_ps (s, m.data + off + 2, l);
      off += 2 + l;
    }
    npps = m.data[off++];
    for (guint i = 0; i < npps; i++) {
      guint l = rd16 (m.data + off);
      sent_add_ps (s, m.data + off + 2, l);
      off += 2 + l;
    }
  } else {
    guint arrays;
    fail_unless (m.size >= 23);
    size_len = (m.data[21] & 3) + 1;
    arrays = m.data[22];
    off = 23;
    for (guint a = 0; a < arrays; a++) {
      guint n = rd16 (m.data + off + 1);
      off += 3;
      for (guint i = 0; i < n; i++) {
        guint l = rd16 (m.data + off);
        sent_add_ps (s, m.data + off + 2, l);
        off += 2 + l;
      }
    }
  }
  fail_unless (off <= m.size);
  gst_buffer_unmap (cd, &m);
  return size_len;
}

static void
sent_init (Sent * s, VCodec codec, Collect * enc)
{
  GstStructure *st = gst_caps_get_structure (enc->caps, 0);
  const gchar *format = gst_structure_get_string (st, "stream-format");
  guint size_len = 0;

  s->codec = codec;
  s->aus = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  s->maps = g_ptr_array_new ();
  s->ps = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  s->key_aus = 0;
  if (format && !g_str_equal (format, "byte-stream")) {
    const GValue *v = gst_structure_get_value (st, "codec_data");
    fail_unless (v != NULL);
    size_len = sent_parse_codec_data (s, gst_value_get_buffer (v));
  }
  for (guint i = 0; i < enc->bufs->len; i++) {
    GstBuffer *b = g_ptr_array_index (enc->bufs, i);
    GstMapInfo *m = g_new0 (GstMapInfo, 1);
    GArray *nals;
    gboolean key = FALSE;

    fail_unless (gst_buffer_map (b, m, GST_MAP_READ));
    g_ptr_array_add (s->maps, m);
    nals = size_len ? split_prefixed (m->data, m->size, size_len) :
        split_annexb (m->data, m->size);
    for (guint j = 0; j < nals->len; j++) {
      Nal *n = &g_array_index (nals, Nal, j);
      guint t = nal_type (codec, n);
      if (is_ps (codec, t))
        sent_add_ps (s, n->data, n->len);
      if (is_vcl (codec, t) && is_key (codec, t))
        key = TRUE;
    }
    s->key_aus += key;
    g_ptr_array_add (s->aus, nals);
  }
}

static void
sent_clear (Sent * s, Collect * enc)
{
  for (guint i = 0; i < s->maps->len; i++) {
    gst_buffer_unmap (g_ptr_array_index (enc->bufs, i),
        g_ptr_array_index (s->maps, i));
    g_free (g_ptr_array_index (s->maps, i));
  }
  g_ptr_array_unref (s->maps);
  g_ptr_array_unref (s->aus);
  g_ptr_array_unref (s->ps);
}

static gboolean
sent_knows_ps (Sent * s, const Nal * n)
{
  for (guint i = 0; i < s->ps->len; i++) {
    gsize l;
    const guint8 *x = g_bytes_get_data (g_ptr_array_index (s->ps, i), &l);
    if (l == n->len && memcmp (x, n->data, l) == 0)
      return TRUE;
  }
  return FALSE;
}

/* Compares what the depayloader produced (byte-stream AUs) with what was
 * sent: the same number of AUs; in each, every NAL unit other than a
 * parameter set byte for byte and in order; every parameter set received
 * one that was sent; and, if want_ps, all parameter sets a decoder needs
 * ahead of the first picture of every IRAP/IDR access unit. Returns the
 * number of parameter sets received. */
static guint
check_video (Sent * s, Collect * rx, gboolean want_ps)
{
  guint ps_received = 0;

  fail_unless_equals_int (rx->bufs->len, s->aus->len);
  for (guint i = 0; i < rx->bufs->len; i++) {
    GstBuffer *b = g_ptr_array_index (rx->bufs, i);
    GArray *sent = g_ptr_array_index (s->aus, i), *got;
    GstMapInfo m;
    guint si = 0;
    guint64 ps_seen = 0;
    gboolean key = FALSE, vcl_seen = FALSE;

    fail_unless (gst_buffer_map (b, &m, GST_MAP_READ));
    got = split_annexb (m.data, m.size);
    for (guint j = 0; j < got->len; j++) {
      Nal *g = &g_array_index (got, Nal, j);
      guint t = nal_type (s->codec, g);
      if (is_ps (s->codec, t)) {
        fail_unless (sent_knows_ps (s, g), "AU %u: unknown parameter set", i);
        if (!vcl_seen)
          ps_seen |= 1ull << t;
        ps_received++;
        continue;
      }
      if (is_vcl (s->codec, t)) {
        if (!vcl_seen)
          key = is_key (s->codec, t);
        vcl_seen = TRUE;
      }
      /* next non-parameter-set NAL unit that was sent */
      while (si < sent->len
          && is_ps (s->codec, nal_type (s->codec, &g_array_index (sent, Nal,
                      si))))
        si++;
      fail_unless (si < sent->len, "AU %u: extra NAL unit of type %u", i, t);
      {
        Nal *e = &g_array_index (sent, Nal, si);
        fail_unless_equals_uint64 (g->len, e->len);
        fail_unless (memcmp (g->data, e->data, e->len) == 0,
            "AU %u NAL %u (type %u) differs", i, j, t);
      }
      si++;
    }
    while (si < sent->len
        && is_ps (s->codec, nal_type (s->codec, &g_array_index (sent, Nal,
                    si))))
      si++;
    fail_unless_equals_int (si, sent->len);
    if (want_ps && key)
      fail_unless ((ps_seen & required_ps (s->codec)) ==
          required_ps (s->codec),
          "AU %u: IRAP without parameter sets in front (have %"
          G_GINT64_MODIFIER "x)", i, ps_seen);
    g_array_unref (got);
    gst_buffer_unmap (b, &m);
  }
  return ps_received;
}

/* Removes the in-band parameter sets from a length-prefixed stream, so that
 * they are known only from codec_data (as from an MP4 demuxer). */
static void
strip_ps (Collect * enc, VCodec c)
{
  GstStructure *st = gst_caps_get_structure (enc->caps, 0);
  const GValue *v = gst_structure_get_value (st, "codec_data");
  GstMapInfo m;
  guint size_len;

  fail_unless (v != NULL);
  fail_unless (gst_buffer_map (gst_value_get_buffer (v), &m, GST_MAP_READ));
  size_len = (m.data[c == H264 ? 4 : 21] & 3) + 1;
  gst_buffer_unmap (gst_value_get_buffer (v), &m);

  for (guint i = 0; i < enc->bufs->len; i++) {
    GstBuffer *b = g_ptr_array_index (enc->bufs, i), *nb;
    GByteArray *out = g_byte_array_new ();
    GArray *nals;

    fail_unless (gst_buffer_map (b, &m, GST_MAP_READ));
    nals = split_prefixed (m.data, m.size, size_len);
    for (guint j = 0; j < nals->len; j++) {
      Nal *n = &g_array_index (nals, Nal, j);
      guint8 len[4];
      if (is_ps (c, nal_type (c, n)))
        continue;
      for (guint k = 0; k < size_len; k++)
        len[k] = (guint8) (n->len >> (8 * (size_len - 1 - k)));
      g_byte_array_append (out, len, size_len);
      g_byte_array_append (out, n->data, n->len);
    }
    g_array_unref (nals);
    gst_buffer_unmap (b, &m);
    {
      gsize len = out->len;
      nb = gst_buffer_new_wrapped (g_byte_array_free (out, FALSE), len);
    }
    gst_buffer_copy_into (nb, b, GST_BUFFER_COPY_METADATA, 0, -1);
    g_ptr_array_index (enc->bufs, i) = nb;
    gst_buffer_unref (b);
  }
}

/* Decodes byte-stream AUs; returns the number of frames out. */
static guint
decode_count (GstCaps * caps, GPtrArray * bufs, const gchar * chain)
{
  GError *err = NULL;
  GstElement *pipeline, *src;
  Collect out;
  gchar *desc = g_strdup_printf ("appsrc name=src format=time ! %s ! "
      "appsink name=out sync=false", chain);
  guint n;

  pipeline = gst_parse_launch (desc, &err);
  fail_unless (pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  collect_init (&out);
  attach_collect (pipeline, "out", &out);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  g_object_set (src, "caps", caps, NULL);
  for (guint i = 0; i < bufs->len; i++) {
    GstBuffer *b = gst_buffer_copy (g_ptr_array_index (bufs, i));
    /* decode order is all that matters here */
    GST_BUFFER_PTS (b) = GST_BUFFER_DTS (b) = i * (GST_SECOND / 30);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), b),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_object_unref (src);
  run_to_eos (pipeline);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  n = out.bufs->len;
  collect_clear (&out);
  return n;
}

/* ------------------------------------------------------------------------ */
/* Video round trip                                                         */

typedef struct
{
  VCodec codec;
  const gchar *encoder;         /* source ! encoder ! parser ! caps */
  const gchar *props;           /* uvgrtpsink properties */
  gboolean want_ps;             /* parameter sets must precede IRAPs */
  guint list_size;
  gboolean strip;               /* parameter sets only in codec_data */
  guint recaps_at;              /* new caps before this buffer (0: none) */
} VideoCase;

static const gchar *const enc_h264 =
    "videotestsrc num-buffers=" G_STRINGIFY (FRAMES) " ! "
    "video/x-raw,width=320,height=240,framerate=30/1,format=I420 ! "
    "x264enc speed-preset=ultrafast key-int-max=10 ! h264parse";
static const gchar *const enc_h265 =
    "videotestsrc num-buffers=" G_STRINGIFY (FRAMES) " ! "
    "video/x-raw,width=320,height=240,framerate=30/1,format=I420 ! "
    "x265enc speed-preset=ultrafast key-int-max=10 ! h265parse";

static const gchar *
depay_chain (VCodec c)
{
  return c == H264 ?
      "rtph264depay ! video/x-h264,stream-format=byte-stream,alignment=au" :
      "rtph265depay ! video/x-h265,stream-format=byte-stream,alignment=au";
}

static const gchar *
rtp_caps (VCodec c, guint pt)
{
  static gchar buf[2][160];
  g_snprintf (buf[c], sizeof (buf[c]), "application/x-rtp,media=video,"
      "clock-rate=90000,encoding-name=%s,payload=%u",
      c == H264 ? "H264" : "H265", pt);
  return buf[c];
}

static const gchar *
decoder_chain (VCodec c)
{
  return c == H264 ? "h264parse ! avdec_h264" : "h265parse ! avdec_h265";
}

/* Result of one run, for case-specific checks. */
typedef struct
{
  Sent sent;
  Collect enc;
  Rx rx;
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode;
  gchar *sdp;
  guint ps_received;
  guint ap_packets, fu_packets;
  guint64 padding;              /* stats padding-bytes */
  guint64 messages;             /* stats send-messages */
  guint64 pacing_waits;         /* stats pacing-waits */
  guint padded_packets;         /* datagrams with the P bit */
  guint64 padded_bytes;         /* their padding */
} Run;

static void
run_video (const VideoCase * vc, const gchar * enc_caps, Run * r)
{
  GstElement *pipeline, *sink;
  gchar *desc;
  guint64 packets;

  memset (r, 0, sizeof (*r));
  desc = g_strdup_printf ("%s ! %s ! appsink name=out sync=false",
      vc->encoder, enc_caps);
  encode (desc, &r->enc);
  g_free (desc);
  if (vc->strip)
    strip_ps (&r->enc, vc->codec);
  sent_init (&r->sent, vc->codec, &r->enc);
  fail_unless_equals_int (r->sent.aus->len, FRAMES);

  rx_start (&r->rx, rtp_caps (vc->codec, 96), depay_chain (vc->codec));
  pipeline = send_stream_full (&r->enc, r->rx.port, vc->props,
      vc->list_size, vc->recaps_at, &sink);
  get_stats (sink, &r->packets, &r->bytes, &r->aus, &r->errors,
      &r->syscalls, &r->mode);
  g_object_get (sink, "sdp", &r->sdp, NULL);
  {
    GstStructure *st = NULL;
    g_object_get (sink, "stats", &st, NULL);
    fail_unless (gst_structure_get_uint64 (st, "padding-bytes", &r->padding));
    fail_unless (gst_structure_get_uint64 (st, "send-messages", &r->messages));
    fail_unless (gst_structure_get_uint64 (st, "pacing-waits",
            &r->pacing_waits));
    gst_structure_free (st);
  }
  rx_wait (&r->rx, (guint) r->packets, FRAMES);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);

  /* statistics are exact on a loss-free loopback run */
  packets = r->rx.dgrams->len;
  fail_unless_equals_uint64 (r->packets, packets);
  fail_unless_equals_uint64 (r->bytes, r->rx.bytes);
  fail_unless_equals_uint64 (r->aus, FRAMES);
  fail_unless_equals_uint64 (r->errors, 0);
  fail_unless (r->syscalls > 0);

  /* headers: one SSRC and payload type, consecutive sequence numbers, a
   * marker on the last packet of each AU only */
  {
    guint markers = 0;
    Dgram *d0 = &g_array_index (r->rx.dgrams, Dgram, 0);
    for (guint i = 0; i < r->rx.dgrams->len; i++) {
      Dgram *d = &g_array_index (r->rx.dgrams, Dgram, i);
      guint t = vc->codec == H264 ? d->payload[0] & 0x1f :
          (d->payload[0] >> 1) & 0x3f;
      fail_unless_equals_int (d->ssrc, d0->ssrc);
      fail_unless_equals_int (d->pt, 96);
      fail_unless_equals_int (d->seq, (guint16) (d0->seq + i));
      markers += d->marker;
      if (d->pad) {
        /* pad-fragments pads full-size FUs only */
        fail_unless_equals_int (t, vc->codec == H264 ? 28 : 49);
        fail_unless_equals_int (d->len, 1400);
        r->padded_packets++;
        r->padded_bytes += d->pad;
      }
      if (t == (vc->codec == H264 ? 24u : 48u))
        r->ap_packets++;
      if (t == (vc->codec == H264 ? 28u : 49u))
        r->fu_packets++;
    }
    fail_unless_equals_int (markers, FRAMES);
    fail_unless (g_array_index (r->rx.dgrams, Dgram, r->rx.dgrams->len -
            1).marker);
  }

  r->ps_received = check_video (&r->sent, &r->rx.out, vc->want_ps);
  fail_unless_equals_int (decode_count (r->rx.out.caps, r->rx.out.bufs,
          decoder_chain (vc->codec)), FRAMES);
}

static void
run_clear (Run * r)
{
  sent_clear (&r->sent, &r->enc);
  collect_clear (&r->enc);
  rx_clear (&r->rx);
  g_free (r->mode);
  g_free (r->sdp);
}

#define BYTESTREAM_AU(c) \
  ((c) == H264 ? "video/x-h264,stream-format=byte-stream,alignment=au" : \
   "video/x-h265,stream-format=byte-stream,alignment=au")

/* The *_none cases send from the element's send thread, all others from
 * the streaming thread (the default). */
GST_START_TEST (test_h264_none)
{
  VideoCase vc = { H264, enc_h264,
    "aggregate-mode=none config-interval=-1 send-thread=true", TRUE, 0
  };
  Run r;

  run_video (&vc, BYTESTREAM_AU (H264), &r);
  /* without aggregation there are no STAP-A packets */
  fail_unless_equals_int (r.ap_packets, 0);
  fail_unless (r.ps_received >= 2 * r.sent.key_aus);
  run_clear (&r);
}

GST_END_TEST;

GST_START_TEST (test_h264_max)
{
  VideoCase vc = { H264, enc_h264, "aggregate-mode=max config-interval=-1",
    TRUE, 0
  };
  Run r;

  run_video (&vc, BYTESTREAM_AU (H264), &r);
  /* AUD, SPS, PPS and SEI of the IDR AUs go in STAP-A packets */
  fail_unless (r.ap_packets >= r.sent.key_aus);
  run_clear (&r);
}

GST_END_TEST;

GST_START_TEST (test_h265_none)
{
  VideoCase vc = { H265, enc_h265,
    "aggregate-mode=none config-interval=-1 send-thread=true", TRUE, 0
  };
  Run r;

  run_video (&vc, BYTESTREAM_AU (H265), &r);
  fail_unless_equals_int (r.ap_packets, 0);
  fail_unless (r.ps_received >= 3 * r.sent.key_aus);
  run_clear (&r);
}

GST_END_TEST;

GST_START_TEST (test_h265_max)
{
  VideoCase vc = { H265, enc_h265, "aggregate-mode=max config-interval=-1",
    TRUE, 0
  };
  Run r;

  run_video (&vc, BYTESTREAM_AU (H265), &r);
  fail_unless (r.ap_packets >= r.sent.key_aus);
  run_clear (&r);
}

GST_END_TEST;

/* Large pictures of 4 slices (noise; NAL units of 10-60 KB): with
 * pad-fragments (the default) most slices but the last of each picture are
 * sent as FUs of exactly the MTU, the last few carrying RTP padding; GStreamer's depayloaders strip
 * it, the AUs arrive byte-exact and decode. The padding counted in stats
 * is what went over the wire. */
static const gchar *const enc_h264_big =
    "videotestsrc num-buffers=" G_STRINGIFY (FRAMES) " pattern=snow ! "
    "video/x-raw,width=1280,height=720,framerate=30/1,format=I420 ! "
    "x264enc speed-preset=ultrafast key-int-max=10 bitrate=20000 "
    "option-string=slices=4 ! h264parse";
static const gchar *const enc_h265_big =
    "videotestsrc num-buffers=" G_STRINGIFY (FRAMES) " pattern=snow ! "
    "video/x-raw,width=640,height=360,framerate=30/1,format=I420 ! "
    "x265enc speed-preset=ultrafast key-int-max=10 bitrate=20000 "
    "option-string=slices=4 ! h265parse";

/* Returns the GSO sends the sink made. */
static guint64
padded_case (VCodec codec, const gchar * enc, gboolean pad)
{
  VideoCase vc = { codec, enc, pad ? "config-interval=-1" :
        "config-interval=-1 pad-fragments=false", TRUE, 0
  };
  Run r;

  run_video (&vc, BYTESTREAM_AU (codec), &r);
  GST_INFO ("%s pad=%d: %u packets in %u GSO sends, %u FUs, %u padded, %"
      G_GUINT64_FORMAT " bytes of padding", codec == H264 ? "H.264" : "H.265",
      pad, (guint) r.packets, (guint) r.messages, r.fu_packets,
      r.padded_packets, r.padding);
  /* GSO on loopback: far fewer sends than packets */
  fail_unless_equals_string (r.mode, "gso");
  fail_unless (r.messages > 0 && r.messages * 10 < r.packets);
  fail_unless_equals_uint64 (r.padding, r.padded_bytes);
  if (pad) {
    /* a padded slice per picture at least (3 of the 4 may be) */
    fail_unless (r.padded_packets >= FRAMES);
    /* within 1/32 of the stream */
    fail_unless (r.padding * 32 <= r.bytes);
  } else {
    fail_unless_equals_int (r.padded_packets, 0);
  }
  run_clear (&r);
  return r.messages;
}

GST_START_TEST (test_h264_padded)
{
  padded_case (H264, enc_h264_big, TRUE);
  padded_case (H264, enc_h264_big, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_h265_padded)
{
  /* x265 encodes the same noise to the same stream both times: the padded
   * slices share their GSO sends with the next slice (here 114 against 142) */
  guint64 with = padded_case (H265, enc_h265_big, TRUE);
  guint64 without = padded_case (H265, enc_h265_big, FALSE);
  fail_unless (with < without, "%" G_GUINT64_FORMAT " GSO sends with padding, %"
      G_GUINT64_FORMAT " without", with, without);
}

GST_END_TEST;

/* NAL-aligned input: one buffer per NAL unit, the AU's end marked by
 * GST_BUFFER_FLAG_MARKER; the depayloader must still see whole AUs. */
GST_START_TEST (test_h264_nal_alignment)
{
  VideoCase vc = { H264, enc_h264, "config-interval=-1", TRUE, 0 };
  GstElement *pipeline, *sink;
  Collect enc;
  Sent sent;
  Rx rx;
  guint nal_bufs, markers = 0;
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode, *desc;

  desc = g_strdup_printf ("%s ! video/x-h264,stream-format=byte-stream,"
      "alignment=nal ! appsink name=out sync=false", vc.encoder);
  encode (desc, &enc);
  g_free (desc);
  nal_bufs = enc.bufs->len;
  fail_unless (nal_bufs > FRAMES);
  for (guint i = 0; i < nal_bufs; i++)
    markers += GST_BUFFER_FLAG_IS_SET (g_ptr_array_index (enc.bufs, i),
        GST_BUFFER_FLAG_MARKER);
  fail_unless_equals_int (markers, FRAMES);

  rx_start (&rx, rtp_caps (H264, 96), depay_chain (H264));
  pipeline = send_stream (&enc, rx.port, vc.props, 0, &sink);
  get_stats (sink, &packets, &bytes, &aus, &errors, &syscalls, &mode);
  rx_wait (&rx, (guint) packets, FRAMES);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);

  fail_unless_equals_uint64 (packets, rx.dgrams->len);
  fail_unless_equals_uint64 (bytes, rx.bytes);
  fail_unless_equals_uint64 (aus, FRAMES);

  /* the reference: the same NAL units grouped into AUs at the markers */
  {
    Collect au;
    GstBuffer *cur = NULL;

    collect_init (&au);
    au.caps = gst_caps_ref (enc.caps);
    for (guint i = 0; i < nal_bufs; i++) {
      GstBuffer *b = g_ptr_array_index (enc.bufs, i);
      cur = cur ? gst_buffer_append (cur, gst_buffer_ref (b)) :
          gst_buffer_ref (b);
      if (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_MARKER)) {
        g_ptr_array_add (au.bufs, cur);
        cur = NULL;
      }
    }
    fail_unless (cur == NULL);
    sent_init (&sent, H264, &au);
    fail_unless_equals_int (sent.aus->len, FRAMES);
    check_video (&sent, &rx.out, TRUE);
    fail_unless_equals_int (decode_count (rx.out.caps, rx.out.bufs,
            decoder_chain (H264)), FRAMES);
    sent_clear (&sent, &au);
    collect_clear (&au);
  }
  g_free (mode);
  rx_clear (&rx);
  collect_clear (&enc);
}

GST_END_TEST;

/* avc input: the parameter sets are only in codec_data; config-interval=-1
 * must put them in front of every IDR picture, and the SDP must carry
 * them. */
GST_START_TEST (test_h264_avc_input)
{
  VideoCase vc = { H264, enc_h264, "config-interval=-1", TRUE, 0, TRUE };
  Run r;
  gchar *expect;
  GString *sprop = g_string_new (NULL);
  const guint8 *sps = NULL;
  gsize sps_len = 0;

  run_video (&vc, "video/x-h264,stream-format=avc,alignment=au", &r);
  fail_unless (r.ps_received >= 2 * r.sent.key_aus);

  /* sprop-parameter-sets: SPS then PPS, base64, as in codec_data */
  for (guint t = 7; t <= 8; t++) {
    for (guint i = 0; i < r.sent.ps->len; i++) {
      gsize l;
      const guint8 *d = g_bytes_get_data (g_ptr_array_index (r.sent.ps, i),
          &l);
      if ((d[0] & 0x1f) == t) {
        gchar *b = g_base64_encode (d, l);
        g_string_append_printf (sprop, "%s%s", sprop->len ? "," : "", b);
        g_free (b);
        if (t == 7 && !sps) {
          sps = d;
          sps_len = l;
        }
      }
    }
  }
  fail_unless (sps != NULL && sps_len > 4);
  fail_unless (r.sdp != NULL);
  fail_unless (strstr (r.sdp, "m=video ") != NULL);
  fail_unless (strstr (r.sdp, "a=rtpmap:96 H264/90000\r\n") != NULL, "%s",
      r.sdp);
  expect = g_strdup_printf ("a=fmtp:96 packetization-mode=1;"
      "profile-level-id=%02x%02x%02x;sprop-parameter-sets=%s\r\n",
      sps[1], sps[2], sps[3], sprop->str);
  fail_unless (strstr (r.sdp, expect) != NULL, "expected %s in %s", expect,
      r.sdp);
  g_free (expect);
  g_string_free (sprop, TRUE);
  run_clear (&r);
}

GST_END_TEST;

/* The same with config-interval=0: nothing puts the parameter sets in
 * band, so none may arrive (this is what makes the test above meaningful). */
GST_START_TEST (test_h264_avc_no_config)
{
  GstElement *pipeline, *sink;
  Collect enc;
  Rx rx;
  Sent sent;
  gchar *desc;
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode;

  desc = g_strdup_printf ("%s ! video/x-h264,stream-format=avc,alignment=au "
      "! appsink name=out sync=false", enc_h264);
  encode (desc, &enc);
  g_free (desc);
  strip_ps (&enc, H264);
  sent_init (&sent, H264, &enc);
  for (guint i = 0; i < sent.aus->len; i++) {
    GArray *a = g_ptr_array_index (sent.aus, i);
    for (guint j = 0; j < a->len; j++)
      fail_if (is_ps (H264, nal_type (H264, &g_array_index (a, Nal, j))));
  }
  rx_start (&rx, rtp_caps (H264, 96), NULL);
  pipeline = send_stream (&enc, rx.port, "config-interval=0", 0, &sink);
  get_stats (sink, &packets, &bytes, &aus, &errors, &syscalls, &mode);
  rx_wait (&rx, (guint) packets, (guint) packets);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  fail_unless_equals_uint64 (packets, rx.dgrams->len);
  for (guint i = 0; i < rx.dgrams->len; i++) {
    Dgram *d = &g_array_index (rx.dgrams, Dgram, i);
    guint t = d->payload[0] & 0x1f;
    fail_if (t == 7 || t == 8 || t == 24, "packet %u has type %u", i, t);
  }
  g_free (mode);
  rx_clear (&rx);
  sent_clear (&sent, &enc);
  collect_clear (&enc);
}

GST_END_TEST;

GST_START_TEST (test_h265_hvc1_input)
{
  VideoCase vc = { H265, enc_h265, "config-interval=-1 aggregate-mode=max",
    TRUE, 0, TRUE
  };
  Run r;

  run_video (&vc, "video/x-h265,stream-format=hvc1,alignment=au", &r);
  fail_unless (r.ps_received >= 3 * r.sent.key_aus);
  fail_unless (strstr (r.sdp, "a=rtpmap:96 H265/90000\r\n") != NULL);
  fail_unless (strstr (r.sdp, "sprop-vps=") != NULL);
  fail_unless (strstr (r.sdp, "sprop-sps=") != NULL);
  fail_unless (strstr (r.sdp, "sprop-pps=") != NULL);
  run_clear (&r);
}

GST_END_TEST;

/* x265 sends its parameter sets in band once, before the first picture;
 * caps that change later (without codec_data) must not make the element
 * forget them, or the IRAP pictures after the change go out without. */
GST_START_TEST (test_caps_update_keeps_ps)
{
  VideoCase vc = { H265, enc_h265, "config-interval=-1", TRUE, 0, FALSE, 5 };
  Run r;
  guint inband = 0;

  run_video (&vc, BYTESTREAM_AU (H265), &r);
  for (guint i = 0; i < r.sent.aus->len; i++) {
    GArray *a = g_ptr_array_index (r.sent.aus, i);
    for (guint j = 0; j < a->len; j++)
      inband += is_ps (H265, nal_type (H265, &g_array_index (a, Nal, j)));
  }
  /* the encoder's stream has them once; what arrived has them at every
   * IRAP (check_video), which is more than once */
  fail_unless_equals_int (inband, 3);
  fail_unless (r.sent.key_aus > 1);
  fail_unless (r.ps_received >= 3 * r.sent.key_aus);
  run_clear (&r);
}

GST_END_TEST;

/* config-interval=N: parameter sets before the first IDR picture at least
 * N seconds after they last went out. 60 frames at 30 fps with an IDR
 * picture every 10 frames: they go out before frames 0 and 30 only. */
GST_START_TEST (test_config_interval_seconds)
{
  GstElement *pipeline, *sink;
  Collect enc;
  Rx rx;
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode;
  guint au = 0, sps_at[4], nsps = 0, npps = 0;

  encode ("videotestsrc num-buffers=60 ! "
      "video/x-raw,width=160,height=120,framerate=30/1,format=I420 ! "
      "x264enc speed-preset=ultrafast key-int-max=10 ! h264parse ! "
      "video/x-h264,stream-format=avc,alignment=au ! "
      "appsink name=out sync=false", &enc);
  strip_ps (&enc, H264);
  fail_unless_equals_int (enc.bufs->len, 60);
  rx_start (&rx, rtp_caps (H264, 96), NULL);
  pipeline = send_stream (&enc, rx.port, "config-interval=1", 0, &sink);
  get_stats (sink, &packets, &bytes, &aus, &errors, &syscalls, &mode);
  rx_wait (&rx, (guint) packets, (guint) packets);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);

  fail_unless_equals_uint64 (packets, rx.dgrams->len);
  for (guint i = 0; i < rx.dgrams->len; i++) {
    Dgram *d = &g_array_index (rx.dgrams, Dgram, i);
    guint t = d->payload[0] & 0x1f;
    if (t == 7) {
      fail_unless (nsps < G_N_ELEMENTS (sps_at));
      sps_at[nsps++] = au;
    }
    npps += t == 8;
    au += d->marker;
  }
  fail_unless_equals_int (au, 60);
  fail_unless_equals_int (nsps, 2);
  fail_unless_equals_int (npps, 2);
  fail_unless_equals_int (sps_at[0], 0);
  fail_unless_equals_int (sps_at[1], 30);
  g_free (mode);
  rx_clear (&rx);
  collect_clear (&enc);
}

GST_END_TEST;

/* RTP header fields from the properties: payload type, SSRC, first
 * sequence number, and timestamps = offset + running time at 90 kHz. */
GST_START_TEST (test_rtp_header_fields)
{
  GstElement *pipeline, *sink;
  Collect enc;
  Rx rx;
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode, *desc;
  guint au = 0;

  desc = g_strdup_printf ("%s ! %s ! appsink name=out sync=false", enc_h265,
      BYTESTREAM_AU (H265));
  encode (desc, &enc);
  g_free (desc);
  rx_start (&rx, rtp_caps (H265, 101), depay_chain (H265));
  pipeline = send_stream (&enc, rx.port, "pt=101 ssrc=0x12345678 "
      "seqnum-offset=65530 timestamp-offset=4294967000", 0, &sink);
  get_stats (sink, &packets, &bytes, &aus, &errors, &syscalls, &mode);
  rx_wait (&rx, (guint) packets, FRAMES);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);

  fail_unless_equals_uint64 (packets, rx.dgrams->len);
  fail_unless_equals_int (collect_len (&rx.out), FRAMES);
  for (guint i = 0; i < rx.dgrams->len; i++) {
    Dgram *d = &g_array_index (rx.dgrams, Dgram, i);
    GstBuffer *b;
    guint32 expect_ts;

    fail_unless_equals_int (d->pt, 101);
    fail_unless_equals_int (d->ssrc, 0x12345678);
    fail_unless_equals_int (d->seq, (guint16) (65530 + i));
    /* the packets of AU `au` carry its PTS (B-frames reorder them) */
    fail_unless (au < enc.bufs->len);
    b = g_ptr_array_index (enc.bufs, au);
    expect_ts = (guint32) (4294967000u + (guint32)
        gst_util_uint64_scale_int_round (GST_BUFFER_PTS (b), 90000,
            GST_SECOND));
    fail_unless_equals_int (d->ts, expect_ts);
    if (d->marker)
      au++;
  }
  fail_unless_equals_int (au, FRAMES);
  g_free (mode);
  rx_clear (&rx);
  collect_clear (&enc);
}

GST_END_TEST;

/* No datagram larger than the mtu property; fragments carry the rest. */
GST_START_TEST (test_mtu)
{
  VideoCase vc = { H265, enc_h265, "mtu=300 config-interval=-1", TRUE, 0 };
  Run r;
  guint max_len = 0;

  run_video (&vc, BYTESTREAM_AU (H265), &r);
  for (guint i = 0; i < r.rx.dgrams->len; i++)
    max_len = MAX (max_len, g_array_index (r.rx.dgrams, Dgram, i).len);
  fail_unless (max_len <= 300, "datagram of %u bytes", max_len);
  /* fragments are cut to the MTU exactly */
  fail_unless_equals_int (max_len, 300);
  fail_unless (r.fu_packets > 0);
  run_clear (&r);
}

GST_END_TEST;

/* Each send mode: the stream arrives intact and the mode is reported. */
GST_START_TEST (test_send_modes)
{
  static const gchar *const modes[] = { "plain", "mmsg", "gso" };

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++) {
    gchar *props = g_strdup_printf ("send-mode=%s mtu=500", modes[m]);
    VideoCase vc = { H264, enc_h264, props, FALSE, 0 };
    Run r;

    run_video (&vc, BYTESTREAM_AU (H264), &r);
    if (m == 0) {
      fail_unless_equals_string (r.mode, "plain");
      /* one system call per packet */
      fail_unless_equals_uint64 (r.syscalls, r.packets);
    } else if (m == 1) {
      fail_unless_equals_string (r.mode, "mmsg");
      /* one sendmmsg per access unit */
      fail_unless_equals_uint64 (r.syscalls, FRAMES);
    } else {
      /* GSO, unless the kernel refused it (then mmsg) */
      fail_unless (g_str_equal (r.mode, "gso") || g_str_equal (r.mode,
              "mmsg"), "mode %s", r.mode);
      fail_unless (r.syscalls <= FRAMES + 1);
    }
    run_clear (&r);
    g_free (props);
  }
}

GST_END_TEST;

/* Buffer lists: all access units of a list go out in one send. */
GST_START_TEST (test_buffer_lists)
{
  VideoCase vc = { H265, enc_h265, "send-mode=mmsg config-interval=-1", TRUE,
    5
  };
  Run r;

  run_video (&vc, BYTESTREAM_AU (H265), &r);
  fail_unless_equals_uint64 (r.syscalls, FRAMES / 5);
  run_clear (&r);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Opus                                                                     */

GST_START_TEST (test_opus)
{
  GstElement *pipeline, *sink;
  Collect enc;
  Rx rx;
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode, *sdp = NULL, *path, *file_sdp = NULL;
  guint n;

  encode ("audiotestsrc num-buffers=50 samplesperbuffer=960 ! "
      "audio/x-raw,rate=48000,channels=2 ! opusenc ! "
      "appsink name=out sync=false", &enc);
  n = enc.bufs->len;

  path = g_build_filename (g_get_tmp_dir (), "uvgrtpsink-test-opus.sdp",
      NULL);
  g_unlink (path);
  rx_start (&rx, "application/x-rtp,media=audio,clock-rate=48000,"
      "encoding-name=OPUS,payload=96", "rtpopusdepay");
  {
    gchar *props = g_strdup_printf ("timestamp-offset=0 sdp-file=%s", path);
    pipeline = send_stream (&enc, rx.port, props, 0, &sink);
    g_free (props);
  }
  get_stats (sink, &packets, &bytes, &aus, &errors, &syscalls, &mode);
  g_object_get (sink, "sdp", &sdp, NULL);
  rx_wait (&rx, n, n);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);

  fail_unless_equals_uint64 (packets, n);
  fail_unless_equals_uint64 (aus, n);
  fail_unless_equals_uint64 (errors, 0);
  fail_unless_equals_int (rx.dgrams->len, n);
  fail_unless_equals_uint64 (bytes, rx.bytes);
  fail_unless_equals_int (rx.out.bufs->len, n);
  for (guint i = 0; i < n; i++) {
    GstBuffer *a = g_ptr_array_index (enc.bufs, i);
    GstBuffer *b = g_ptr_array_index (rx.out.bufs, i);
    Dgram *d = &g_array_index (rx.dgrams, Dgram, i);
    GstMapInfo ma, mb;

    fail_unless (gst_buffer_map (a, &ma, GST_MAP_READ));
    fail_unless (gst_buffer_map (b, &mb, GST_MAP_READ));
    fail_unless_equals_uint64 (ma.size, mb.size);
    fail_unless (memcmp (ma.data, mb.data, ma.size) == 0, "packet %u", i);
    gst_buffer_unmap (a, &ma);
    gst_buffer_unmap (b, &mb);
    /* 48 kHz clock from running time */
    fail_unless_equals_int (d->ts, (guint32)
        gst_util_uint64_scale_int_round (GST_BUFFER_PTS (a), 48000,
            GST_SECOND));
    /* marker on the first packet of the talkspurt only */
    fail_unless_equals_int (d->marker, i == 0);
  }
  fail_unless_equals_int (decode_count (rx.out.caps, rx.out.bufs, "opusdec"),
      n);

  fail_unless (sdp != NULL);
  fail_unless (strstr (sdp, "m=audio ") != NULL);
  fail_unless (strstr (sdp, "a=rtpmap:96 opus/48000/2\r\n") != NULL, "%s",
      sdp);
  fail_unless (strstr (sdp, "a=fmtp:96 sprop-stereo=1\r\n") != NULL, "%s",
      sdp);
  fail_unless (g_file_get_contents (path, &file_sdp, NULL, NULL));
  fail_unless_equals_string (file_sdp, sdp);
  g_unlink (path);

  g_free (file_sdp);
  g_free (path);
  g_free (sdp);
  g_free (mode);
  rx_clear (&rx);
  collect_clear (&enc);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* SDP                                                                      */

GST_START_TEST (test_sdp_h265)
{
  VideoCase vc = { H265, enc_h265, NULL, TRUE, 0 };
  Run r;
  gchar *props, *path, *file_sdp = NULL, *line;
  GString *expect = g_string_new (NULL);

  path = g_build_filename (g_get_tmp_dir (), "uvgrtpsink-test-h265.sdp",
      NULL);
  g_unlink (path);
  props = g_strdup_printf ("config-interval=-1 sdp-file=%s", path);
  vc.props = props;
  run_video (&vc, BYTESTREAM_AU (H265), &r);

  fail_unless (r.sdp != NULL);
  fail_unless (g_str_has_prefix (r.sdp, "v=0\r\n"), "%s", r.sdp);
  fail_unless (strstr (r.sdp, "\r\ns=") != NULL);
  fail_unless (strstr (r.sdp, "\r\nc=IN IP4 127.0.0.1\r\n") != NULL);
  fail_unless (strstr (r.sdp, "\r\nt=0 0\r\n") != NULL);
  /* with RTCP (on by default), feedback: AVPF, and retransmissions in
   * payload type 97 */
  line = g_strdup_printf ("\r\nm=video %d RTP/AVPF 96 97\r\n", r.rx.port);
  fail_unless (strstr (r.sdp, line) != NULL, "%s", r.sdp);
  g_free (line);
  fail_unless (strstr (r.sdp, "a=rtpmap:96 H265/90000\r\n") != NULL);
  /* RTCP is on by default, to the RTP port + 1 (said explicitly) */
  line = g_strdup_printf ("\r\na=rtcp:%d\r\n", r.rx.port + 1);
  fail_unless (strstr (r.sdp, line) != NULL, "%s", r.sdp);
  g_free (line);
  fail_unless (strstr (r.sdp, "\r\na=rtcp-fb:96 nack\r\na=rtcp-fb:96 nack pli"
          "\r\na=rtcp-fb:96 ccm fir\r\na=rtpmap:97 rtx/90000\r\n"
          "a=fmtp:97 apt=96;rtx-time=1000\r\n") != NULL, "%s", r.sdp);

  /* sprop-vps/sps/pps: exactly the encoder's parameter sets, base64 */
  for (guint t = 32; t <= 34; t++) {
    static const gchar *const names[] = { "sprop-vps", "sprop-sps",
      "sprop-pps"
    };
    for (guint i = 0; i < r.sent.ps->len; i++) {
      gsize l;
      const guint8 *d = g_bytes_get_data (g_ptr_array_index (r.sent.ps, i),
          &l);
      if (((d[0] >> 1) & 0x3f) == t) {
        gchar *b = g_base64_encode (d, l);
        g_string_append_printf (expect, ";%s=%s", names[t - 32], b);
        g_free (b);
      }
    }
  }
  fail_unless (strstr (r.sdp, expect->str) != NULL, "expected %s in %s",
      expect->str, r.sdp);
  /* profile/tier/level from the SPS (x265 at 320x240: level 2.1 = 63) */
  fail_unless (strstr (r.sdp, "a=fmtp:96 profile-id=1;tier-flag=0;"
          "level-id=63;sprop-vps=") != NULL, "%s", r.sdp);

  fail_unless (g_file_get_contents (path, &file_sdp, NULL, NULL));
  fail_unless_equals_string (file_sdp, r.sdp);
  g_unlink (path);
  g_free (file_sdp);
  g_free (path);
  g_free (props);
  g_string_free (expect, TRUE);
  run_clear (&r);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* H.266: no stock payloader or depayloader exists in GStreamer 1.22, so the */
/* datagrams are checked against RFC 9328 directly.                         */

static void
append_nal (GByteArray * au, guint type, gsize len, GRand * rand,
    const guint8 * body, gsize body_len)
{
  static const guint8 sc[4] = { 0, 0, 0, 1 };
  guint8 hdr[2] = { 0x00, (guint8) (type << 3 | 1) };

  g_byte_array_append (au, sc, 4);
  g_byte_array_append (au, hdr, 2);
  if (body) {
    g_byte_array_append (au, body, body_len);
    return;
  }
  for (gsize i = 2; i < len; i++) {
    /* no zero bytes: nothing that looks like a start code */
    guint8 b = (guint8) g_rand_int_range (rand, 1, 256);
    g_byte_array_append (au, &b, 1);
  }
}

GST_START_TEST (test_h266_synthetic)
{
  /* SPS rbsp: sps id 0, vps id 0 | max sub-layers 0, 4:2:0, CTU 128,
   * ptl present | profile_idc 1 (Main 10), tier 0 | level_idc 51 */
  static const guint8 sps_body[] = { 0x00, 0x0d, 0x02, 0x33, 0x80, 0x44 };
  static const guint8 pps_body[] = { 0x00, 0x90, 0x11 };
  GRand *rand = g_rand_new_with_seed (9328);
  GstElement *pipeline, *sink;
  Collect in;
  Rx rx;
  GPtrArray *sent_nals = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode, *sdp = NULL;
  GByteArray *cur = NULL;
  guint ndg, si = 0;
  const guint n_au = 6;

  collect_init (&in);
  in.caps = gst_caps_from_string ("video/x-h266,stream-format=byte-stream,"
      "alignment=au,width=320,height=240,framerate=30/1");
  for (guint i = 0; i < n_au; i++) {
    GByteArray *au = g_byte_array_new ();
    GstBuffer *b;
    if (i % 3 == 0) {
      append_nal (au, 15, 0, rand, sps_body, sizeof (sps_body));
      append_nal (au, 16, 0, rand, pps_body, sizeof (pps_body));
      append_nal (au, 8, 5000, rand, NULL, 0);  /* IDR_N_LP, two slices */
      append_nal (au, 8, 3000, rand, NULL, 0);
    } else {
      append_nal (au, 23, 40, rand, NULL, 0);   /* prefix SEI */
      append_nal (au, 0, 900 + 300 * i, rand, NULL, 0); /* TRAIL */
    }
    /* remember the NAL units as sent */
    {
      GArray *nals = split_annexb (au->data, au->len);
      for (guint j = 0; j < nals->len; j++) {
        Nal *n = &g_array_index (nals, Nal, j);
        g_ptr_array_add (sent_nals, g_bytes_new (n->data, n->len));
      }
      g_array_unref (nals);
    }
    {
      gsize len = au->len;
      b = gst_buffer_new_wrapped (g_byte_array_free (au, FALSE), len);
    }
    GST_BUFFER_PTS (b) = GST_BUFFER_DTS (b) = i * (GST_SECOND / 30);
    GST_BUFFER_DURATION (b) = GST_SECOND / 30;
    g_ptr_array_add (in.bufs, b);
  }

  rx_start (&rx, "application/x-rtp,media=video,clock-rate=90000,"
      "encoding-name=H266,payload=96", NULL);
  pipeline = send_stream (&in, rx.port, "mtu=1000 aggregate-mode=max", 0,
      &sink);
  get_stats (sink, &packets, &bytes, &aus, &errors, &syscalls, &mode);
  g_object_get (sink, "sdp", &sdp, NULL);
  rx_wait (&rx, (guint) packets, (guint) packets);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);

  ndg = rx.dgrams->len;
  fail_unless_equals_uint64 (packets, ndg);
  fail_unless (ndg > n_au);
  fail_unless_equals_uint64 (aus, n_au);
  fail_unless_equals_int (rx.out.bufs->len, ndg);

  /* Reassemble from the datagrams: single NAL unit packets, APs (28) and
   * FUs (29) with S/E/P bits as RFC 9328 has them. */
  for (guint i = 0; i < ndg; i++) {
    GstBuffer *b = g_ptr_array_index (rx.out.bufs, i);
    GstMapInfo m;
    const guint8 *p;
    gsize len;
    guint type;

    fail_unless (gst_buffer_map (b, &m, GST_MAP_READ));
    fail_unless (m.size > 14 && m.size <= 1000);
    p = m.data + 12;
    len = m.size - 12;
    type = p[1] >> 3;
    if (type == 28) {
      gsize off = 2;
      fail_unless (cur == NULL);
      while (off < len) {
        guint l = rd16 (p + off);
        GBytes *e = g_ptr_array_index (sent_nals, si);
        fail_unless (off + 2 + l <= len);
        fail_unless (g_bytes_get_size (e) == l && memcmp (g_bytes_get_data (e,
                    NULL), p + off + 2, l) == 0, "AP unit %u", si);
        si++;
        off += 2 + l;
      }
    } else if (type == 29) {
      guint8 fu = p[2];
      gboolean s = fu & 0x80, e = fu & 0x40, pbit = fu & 0x20;
      fail_if (s && e);
      if (s) {
        guint8 h[2] = { p[0], (guint8) ((p[1] & 0x07) | (fu & 0x1f) << 3) };
        fail_unless (cur == NULL);
        cur = g_byte_array_new ();
        g_byte_array_append (cur, h, 2);
      }
      fail_unless (cur != NULL);
      g_byte_array_append (cur, p + 3, len - 3);
      /* P: last FU of the last VCL NAL unit of the picture; here that is
       * the FU ending the AU (marker set) */
      fail_unless_equals_int (! !pbit, e && (m.data[1] & 0x80));
      if (e) {
        GBytes *x = g_ptr_array_index (sent_nals, si);
        fail_unless_equals_uint64 (g_bytes_get_size (x), cur->len);
        fail_unless (memcmp (g_bytes_get_data (x, NULL), cur->data,
                cur->len) == 0, "FU NAL %u", si);
        si++;
        g_byte_array_unref (cur);
        cur = NULL;
      }
    } else {
      GBytes *x = g_ptr_array_index (sent_nals, si);
      fail_unless (type != 30 && type != 31);
      fail_unless_equals_uint64 (g_bytes_get_size (x), len);
      fail_unless (memcmp (g_bytes_get_data (x, NULL), p, len) == 0,
          "NAL %u", si);
      si++;
    }
    gst_buffer_unmap (b, &m);
  }
  fail_unless (cur == NULL);
  fail_unless_equals_int (si, sent_nals->len);

  fail_unless (sdp != NULL);
  fail_unless (strstr (sdp, "a=rtpmap:96 H266/90000\r\n") != NULL, "%s",
      sdp);
  {
    guint8 sps[2 + sizeof (sps_body)] = { 0x00, 15 << 3 | 1 };
    guint8 pps[2 + sizeof (pps_body)] = { 0x00, 16 << 3 | 1 };
    gchar *b_sps, *b_pps, *expect;
    memcpy (sps + 2, sps_body, sizeof (sps_body));
    memcpy (pps + 2, pps_body, sizeof (pps_body));
    b_sps = g_base64_encode (sps, sizeof (sps));
    b_pps = g_base64_encode (pps, sizeof (pps));
    expect = g_strdup_printf ("a=fmtp:96 profile-id=1;tier-flag=0;"
        "level-id=51;sprop-sps=%s;sprop-pps=%s\r\n", b_sps, b_pps);
    fail_unless (strstr (sdp, expect) != NULL, "expected %s in %s", expect,
        sdp);
    g_free (expect);
    g_free (b_sps);
    g_free (b_pps);
  }

  g_free (sdp);
  g_free (mode);
  rx_clear (&rx);
  collect_clear (&in);
  g_ptr_array_unref (sent_nals);
  g_rand_free (rand);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

/* Starts `appsrc ! uvgrtpsink props` with caps and one buffer and returns
 * the first error message's text (or NULL). */
static gchar *
first_error (const gchar * caps, const gchar * props, GstBuffer * buf)
{
  GError *err = NULL;
  GstElement *pipeline, *src;
  GstBus *bus;
  GstMessage *msg;
  gchar *desc, *text = NULL;

  desc = g_strdup_printf ("appsrc name=src format=time caps=\"%s\" ! "
      "uvgrtpsink %s", caps, props);
  pipeline = gst_parse_launch (desc, &err);
  fail_unless (pipeline != NULL && err == NULL, "%s: %s", desc,
      err ? err->message : "");
  g_free (desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  if (buf)
    gst_app_src_push_buffer (GST_APP_SRC (src), buf);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_object_unref (src);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (msg != NULL);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, NULL);
    text = g_strdup (err->message);
    g_clear_error (&err);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  return text;
}

GST_START_TEST (test_bad_host)
{
  gchar *text = first_error ("video/x-h265,stream-format=byte-stream,"
      "alignment=au", "host=no-such-host.invalid", NULL);

  fail_unless (text != NULL);
  fail_unless (strstr (text, "'host'") != NULL, "%s", text);
  fail_unless (strstr (text, "no-such-host.invalid") != NULL, "%s", text);
  g_free (text);
}

GST_END_TEST;

GST_START_TEST (test_mtu_too_small)
{
  gchar *props = g_strdup_printf ("host=127.0.0.1 port=%d mtu=40",
      free_udp_port ());
  gchar *text = first_error ("video/x-h265,stream-format=byte-stream,"
      "alignment=au", props, gst_buffer_new_allocate (NULL, 10, NULL));

  fail_unless (text != NULL);
  fail_unless (strstr (text, "'mtu'") != NULL, "%s", text);
  g_free (text);
  g_free (props);
}

GST_END_TEST;

/* An Opus packet larger than the MTU cannot be fragmented (RFC 7587). */
GST_START_TEST (test_opus_packet_too_big)
{
  gchar *props = g_strdup_printf ("host=127.0.0.1 port=%d mtu=100",
      free_udp_port ());
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 200, NULL);
  gchar *text;

  gst_buffer_memset (buf, 0, 0x5a, 200);
  GST_BUFFER_PTS (buf) = 0;
  text = first_error ("audio/x-opus,channel-mapping-family=0,channels=2,"
      "rate=48000", props, buf);
  fail_unless (text != NULL);
  fail_unless (strstr (text, "'mtu'") != NULL, "%s", text);
  g_free (text);
  g_free (props);
}

GST_END_TEST;

/* Length-prefixed input without codec_data is refused by name. */
GST_START_TEST (test_avc_without_codec_data)
{
  gchar *props = g_strdup_printf ("host=127.0.0.1 port=%d", free_udp_port ());
  gchar *text = first_error ("video/x-h264,stream-format=avc,alignment=au",
      props, gst_buffer_new_allocate (NULL, 10, NULL));

  fail_unless (text != NULL);
  fail_unless (strstr (text, "codec_data") != NULL, "%s", text);
  g_free (text);
  g_free (props);
}

GST_END_TEST;

/* Sending to a port nobody listens on is not an error: the ICMP reports
 * are counted in stats, every packet still goes out. */
GST_START_TEST (test_unreachable_not_fatal)
{
  GstElement *pipeline, *sink;
  Collect enc;
  guint64 packets, bytes, aus, errors, syscalls;
  gchar *mode, *desc;

  desc = g_strdup_printf ("%s ! %s ! appsink name=out sync=false", enc_h264,
      BYTESTREAM_AU (H264));
  encode (desc, &enc);
  g_free (desc);
  pipeline = send_stream (&enc, free_udp_port (), "", 0, &sink);
  get_stats (sink, &packets, &bytes, &aus, &errors, &syscalls, &mode);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  fail_unless_equals_uint64 (aus, FRAMES);
  fail_unless (packets >= FRAMES);
  /* a connected UDP socket hears of the ICMP port unreachable errors */
  fail_unless (errors > 0);
  g_free (mode);
  collect_clear (&enc);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* A send blocked on a full socket buffer (issue 16)                        */

/* An H.265 access unit of about len bytes: AUD, then one IDR slice. */
static GstBuffer *
big_au (gsize len, guint salt)
{
  GstBuffer *b = gst_buffer_new_allocate (NULL, len, NULL);
  GstMapInfo m;

  gst_buffer_map (b, &m, GST_MAP_WRITE);
  memcpy (m.data, "\0\0\0\1\x46\x01\x50\0\0\0\1\x26\x01", 13);
  for (gsize i = 13; i < len; i++)
    m.data[i] = (guint8) (1 + (i * 7 + salt) % 251);
  gst_buffer_unmap (b, &m);
  return b;
}

/* Datagrams queued at fd: count, and sequence numbers without a gap. */
static guint
drain_rtp (int fd, guint16 * next_seq, gboolean * at_start, guint * gaps)
{
  guint8 d[2048];
  guint n = 0;
  ssize_t l;

  while ((l = recv (fd, d, sizeof d, MSG_DONTWAIT)) >= 12) {
    guint16 seq = (guint16) rd16 (d + 2);
    if (!*at_start && seq != *next_seq)
      (*gaps)++;
    *at_start = FALSE;
    *next_seq = seq + 1;
    n++;
  }
  return n;
}

/* Opens a receiving socket on 127.0.0.1 with a deep buffer; returns its
 * port in *port. */
static int
deep_receiver (guint16 * port)
{
  struct sockaddr_in a;
  socklen_t alen = sizeof a;
  int fd = socket (AF_INET, SOCK_DGRAM, 0), big = 64 << 20;

  fail_unless (fd >= 0);
  setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (getsockname (fd, (struct sockaddr *) &a, &alen) == 0);
  *port = ntohs (a.sin_port);
  return fd;
}

/* 1.2 MB access units whose send waits for room (see below): one inline,
 * two with the send thread (the render of the second waits for the
 * thread), which paced sends use whatever send-thread says. PAUSED must come at once, and after PLAYING the send resumes:
 * at EOS every byte has been sent (with the thread: drained at EOS), and
 * nothing is lost or out of order. */
static void
blocked_pause_resume (int fd, guint16 port, gboolean thread,
    const gchar * props)
{
  GstElement *pipeline, *src, *sink;
  GstBus *bus;
  GstMessage *msg;
  GstStructure *st;
  gint64 t0, took;
  guint64 packets, bytes;
  guint got, gaps = 0;
  guint16 next_seq = 0;
  gboolean at_start = TRUE;
  gchar *desc;
  gboolean threaded = thread || strstr (props, "pacing-rate") != NULL;

  desc = g_strdup_printf ("appsrc name=src format=time caps=\"video/x-h265, "
      "stream-format=byte-stream, alignment=au\" ! uvgrtpsink name=sink "
      "host=127.0.0.1 port=%d %s sync=false send-thread=%d", port, props,
      thread);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (pipeline != NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);

  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (guint i = 0; i < (threaded ? 2u : 1u); i++)
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
            big_au (1200000, 1 + i)), GST_FLOW_OK);
  g_usleep (400000);            /* the send is waiting for room now */

  t0 = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PAUSED);
  fail_unless (gst_element_get_state (pipeline, NULL, NULL, 5 * GST_SECOND)
      != GST_STATE_CHANGE_FAILURE);
  took = g_get_monotonic_time () - t0;
  GST_INFO ("send-thread=%d: PLAYING -> PAUSED took %" G_GINT64_FORMAT " us",
      thread, took);
  fail_unless (took < G_USEC_PER_SEC, "PAUSED took %" G_GINT64_FORMAT
      " us behind a blocked send", took);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  g_object_get (sink, "stats", &st, NULL);
  fail_unless (gst_structure_get_uint64 (st, "packets", &packets));
  fail_unless (gst_structure_get_uint64 (st, "bytes", &bytes));
  gst_structure_free (st);
  /* all of it was out by EOS: payload plus RTP and FU headers */
  fail_unless (bytes > (threaded ? 2400000u : 1200000u), "%" G_GUINT64_FORMAT
      " bytes sent", bytes);
  g_usleep (200000);
  got = drain_rtp (fd, &next_seq, &at_start, &gaps);
  fail_unless_equals_uint64 (got, packets);
  fail_unless_equals_int (gaps, 0);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

#define BLOCKED_PROPS "buffer-size=4096 send-mode=mmsg"

/* In a network namespace of this test's own (check runs each test in a
 * child process): loopback through tbf at 4 Mbit/s with a deep queue, and
 * a 4 KB send buffer, so that a 1.2 MB access unit keeps the send waiting
 * for room for seconds. */
GST_START_TEST (test_blocked_send_state_changes)
{
  GstElement *pipeline, *src;
  gint64 t0, took;
  guint16 port;
  gchar *desc;
  int fd;

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0) {
    GST_INFO ("needs check's fork mode for its network namespace: skipped");
    return;
  }
  if (unshare (CLONE_NEWNET) < 0
      || system ("ip link set lo up && tc qdisc add dev lo root tbf rate "
          "4mbit burst 16kb limit 64mb >/dev/null 2>&1") != 0) {
    GST_INFO ("no network namespace with tbf here: skipped");
    return;
  }
  fd = deep_receiver (&port);
  blocked_pause_resume (fd, port, FALSE, BLOCKED_PROPS);
  blocked_pause_resume (fd, port, TRUE, BLOCKED_PROPS);

  /* blocked again, then stopped: NULL must not wait for the network */
  desc = g_strdup_printf ("appsrc name=src format=time caps=\"video/x-h265, "
      "stream-format=byte-stream, alignment=au\" ! uvgrtpsink name=sink "
      "host=127.0.0.1 port=%d buffer-size=4096 send-mode=mmsg sync=false "
      "send-thread=true", port);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (guint i = 0; i < 2; i++)
    gst_app_src_push_buffer (GST_APP_SRC (src), big_au (1200000, 2 + i));
  g_usleep (400000);
  t0 = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_NULL);
  took = g_get_monotonic_time () - t0;
  GST_INFO ("PLAYING -> NULL took %" G_GINT64_FORMAT " us", took);
  fail_unless (took < G_USEC_PER_SEC, "NULL took %" G_GINT64_FORMAT
      " us behind a blocked send", took);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  close (fd);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* Pacing                                                                   */

static GstElement *launchf (const gchar * fmt, ...) G_GNUC_PRINTF (1, 2);

static GstElement *
launchf (const gchar * fmt, ...)
{
  GstElement *p;
  gchar *desc;
  va_list ap;

  va_start (ap, fmt);
  desc = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  p = gst_parse_launch (desc, NULL);
  fail_unless (p != NULL, "%s", desc);
  g_free (desc);
  return p;
}

/* Paced round trips (inline and on the send thread, GSO and mmsg): order,
 * bytes, headers and timestamps exact, every picture decodes, and the
 * pacer did hold sends back. */
GST_START_TEST (test_paced_round_trip)
{
  static const gchar *const props[] = {
    "pacing-rate=40000000 pacing-burst=16384",
    "pacing-rate=40000000 pacing-burst=16384 send-thread=true",
    "pacing-rate=40000000 send-mode=mmsg",
  };

  for (guint i = 0; i < G_N_ELEMENTS (props); i++) {
    VideoCase vc = { H265, enc_h265_big, props[i], FALSE, 0 };
    Run r;

    run_video (&vc, BYTESTREAM_AU (H265), &r);
    GST_INFO ("%s: %" G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT
        " paced waits", props[i], r.bytes, r.pacing_waits);
    fail_unless (r.pacing_waits > 0, "%s: the pacer never held back",
        props[i]);
    run_clear (&r);
  }
}

GST_END_TEST;

/* 1.2 MB access units paced at 4 Mbit/s keep the send waiting for
 * seconds: PAUSED and NULL come at once, and after PLAYING the paced send
 * resumes and EOS comes only once the tail is out (nothing lost). */
GST_START_TEST (test_paced_state_changes)
{
  GstElement *pipeline, *src;
  gint64 t0, took;
  guint16 port;
  int fd = deep_receiver (&port);

  blocked_pause_resume (fd, port, FALSE, "pacing-rate=4000000");
  blocked_pause_resume (fd, port, TRUE, "pacing-rate=4000000");

  pipeline = launchf ("appsrc name=src format=time "
      "caps=\"video/x-h265, stream-format=byte-stream, alignment=au\" ! "
      "uvgrtpsink host=127.0.0.1 port=%d pacing-rate=4000000 sync=false", port);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  gst_app_src_push_buffer (GST_APP_SRC (src), big_au (1200000, 9));
  g_usleep (400000);
  t0 = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_NULL);
  took = g_get_monotonic_time () - t0;
  fail_unless (took < G_USEC_PER_SEC, "NULL took %" G_GINT64_FORMAT
      " us behind a paced send", took);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  close (fd);
}

GST_END_TEST;

/* Sends `n` access units of `len` bytes through uvgrtpsink with `props`
 * to port; returns the RTP packets it sent, and in *waits its pacing
 * waits. */
static guint64
send_aus (guint16 port, const gchar * props, guint n, gsize len,
    guint64 * waits)
{
  GstElement *pipeline, *src, *sink;
  GstMessage *msg;
  GstStructure *st;
  guint64 packets = 0;
  GstBus *bus;

  pipeline = launchf ("appsrc name=src format=time "
      "caps=\"video/x-h265, stream-format=byte-stream, alignment=au\" ! "
      "uvgrtpsink name=sink host=127.0.0.1 port=%d sync=false %s", port,
      props);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (guint i = 0; i < n; i++)
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
            big_au (len, 20 + i)), GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  g_object_get (sink, "stats", &st, NULL);
  fail_unless (gst_structure_get_uint64 (st, "packets", &packets));
  fail_unless (gst_structure_get_uint64 (st, "pacing-waits", waits));
  gst_structure_free (st);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return packets;
}

/* A real bottleneck, in a network namespace of this test's own: loopback
 * through tbf at 20 Mbit/s with a 100 KB queue. Four 300 KB pictures
 * sent at once lose most of their packets there; paced at 18 Mbit/s, none,
 * in order. */
GST_START_TEST (test_pacing_through_bottleneck)
{
  guint16 port, next_seq = 0;
  guint64 sent, waits;
  guint got, gaps = 0;
  gboolean at_start = TRUE;
  int fd;

  if (g_strcmp0 (g_getenv ("CK_FORK"), "no") == 0) {
    GST_INFO ("needs check's fork mode for its network namespace: skipped");
    return;
  }
  if (unshare (CLONE_NEWNET) < 0
      || system ("ip link set lo up && tc qdisc add dev lo root tbf rate "
          "20mbit burst 32kb limit 100kb >/dev/null 2>&1") != 0) {
    GST_INFO ("no network namespace with tbf here: skipped");
    return;
  }
  fd = deep_receiver (&port);

  sent = send_aus (port, "", 4, 300000, &waits);
  g_usleep (300000);
  got = drain_rtp (fd, &next_seq, &at_start, &gaps);
  GST_INFO ("unpaced: %u of %" G_GUINT64_FORMAT " packets arrived", got, sent);
  fail_unless (got < sent / 2, "the bottleneck lost nothing unpaced (%u of %"
      G_GUINT64_FORMAT "): the test proves nothing", got, sent);
  fail_unless_equals_uint64 (waits, 0);

  at_start = TRUE;
  gaps = 0;
  sent = send_aus (port, "pacing-rate=18000000", 4, 300000, &waits);
  g_usleep (300000);
  got = drain_rtp (fd, &next_seq, &at_start, &gaps);
  GST_INFO ("paced: %u of %" G_GUINT64_FORMAT " packets arrived, %"
      G_GUINT64_FORMAT " waits", got, sent, waits);
  fail_unless_equals_uint64 (got, sent);
  fail_unless_equals_int (gaps, 0);
  fail_unless (waits > 0);
  close (fd);
}

GST_END_TEST;

static Suite *
uvgrtpsink_suite (void)
{
  Suite *s = suite_create ("uvgrtpsink");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_h264_none);
  tcase_add_test (tc, test_h264_max);
  tcase_add_test (tc, test_h265_none);
  tcase_add_test (tc, test_h265_max);
  tcase_add_test (tc, test_h264_padded);
  tcase_add_test (tc, test_h265_padded);
  tcase_add_test (tc, test_h264_nal_alignment);
  tcase_add_test (tc, test_h264_avc_input);
  tcase_add_test (tc, test_h264_avc_no_config);
  tcase_add_test (tc, test_h265_hvc1_input);
  tcase_add_test (tc, test_caps_update_keeps_ps);
  tcase_add_test (tc, test_config_interval_seconds);
  tcase_add_test (tc, test_rtp_header_fields);
  tcase_add_test (tc, test_mtu);
  tcase_add_test (tc, test_send_modes);
  tcase_add_test (tc, test_buffer_lists);
  tcase_add_test (tc, test_opus);
  tcase_add_test (tc, test_sdp_h265);
  tcase_add_test (tc, test_h266_synthetic);
  tcase_add_test (tc, test_bad_host);
  tcase_add_test (tc, test_mtu_too_small);
  tcase_add_test (tc, test_opus_packet_too_big);
  tcase_add_test (tc, test_avc_without_codec_data);
  tcase_add_test (tc, test_unreachable_not_fatal);
  tcase_add_test (tc, test_blocked_send_state_changes);
  tcase_add_test (tc, test_paced_round_trip);
  tcase_add_test (tc, test_paced_state_changes);
  tcase_add_test (tc, test_pacing_through_bottleneck);
  return s;
}

GST_CHECK_MAIN (uvgrtpsink);
