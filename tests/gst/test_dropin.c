/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_dropin - uvgrtpsink where a pipeline or an application had a stock
 * payloader and udpsink / multiudpsink, with the stock receivers
 * (udpsrc ! rtph264depay) at the other end, on real loopback sockets:
 *
 *  1. `clients` as multiudpsink's: two receivers get every access unit,
 *     byte for byte, and decode them all; the stream is packetized once
 *     (packets-served is twice packets).
 *  2. add / remove while playing, with client-added / client-removed and
 *     get-stats: the receiver that stays gets everything, the one removed
 *     a whole beginning, the one added a whole end.
 *  3. `port` changed while playing (udpsink's retarget): the old port gets
 *     a beginning, the new one the rest, no packet lost or doubled between
 *     them (sequence numbers).
 *  4. RTPBasePayload's read-only `seqnum` and `timestamp` and its stats
 *     fields against the last packet on the wire.
 *  5. Bad input: a client that is not host:port fails the start with an
 *     error naming `clients`.
 *  6. Sockets as udpsink's and udpsrc's: symmetric RTP with one socket the
 *     application bound, shared by uvgrtpsink and uvgrtpsrc, against
 *     udpsink and udpsrc sharing theirs; used-socket, used-socket-v6,
 *     socket-v6 and close-socket.
 *  7. Opus of six channels as MULTIOPUS, to rtpopusdepay and from
 *     rtpopuspay, every packet decoded.
 *  8. RTPBasePayload's scale-rtptime, onvif-no-rate-control,
 *     perfect-rtptime and source-info: the same RTP timestamps and CSRCs
 *     as rtph264pay's for the same buffers; rtpopuspay's dtx.
 *  9. Every writable property of the three elements reads back what was
 *     written (the offset tables that store most of them).
 */
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/check/gstcheck.h>
#include <gst/net/gstnetaddressmeta.h>
#include <gst/rtp/rtp.h>

#include "rtcputil.h"
#include "streamutil.h"

#define FPS 60
#define FRAMES 120

#define RTP_CAPS "application/x-rtp,media=video,clock-rate=90000," \
  "encoding-name=H264,payload=96"
#define DECODE "h264parse ! avdec_h264"

static Stream h264;

static Stream *
stream_h264 (void)
{
  stream_encode (&h264, FRAMES, FPS, "x264enc key-int-max=30 "
      "tune=zerolatency speed-preset=ultrafast bitrate=2000 ! h264parse ! "
      "video/x-h264,stream-format=byte-stream,alignment=au ! appsink "
      "name=sink sync=false");
  return &h264;
}

/* A stock receiver on `port`: access units out of rtph264depay. */
static GstElement *
receiver (gint port)
{
  GstElement *p = launchf ("udpsrc address=127.0.0.1 port=%d caps=\"%s\" "
      "buffer-size=8000000 ! rtph264depay ! h264parse ! "
      "video/x-h264,stream-format=byte-stream,alignment=au ! "
      "appsink name=out sync=false", port, RTP_CAPS);
  play (p);
  return p;
}

/* got is the stream's access units from `first` on, byte for byte. */
static void
check_run (Stream * st, GPtrArray * got, guint first, const gchar * who)
{
  fail_unless (first + got->len <= st->aus->len, "%s: %u from %u", who,
      got->len, first);
  for (guint i = 0; i < got->len; i++)
    fail_unless (bytes_equal (g_ptr_array_index (got, i),
            g_ptr_array_index (st->aus, first + i)), "%s: AU %u differs",
        who, first + i);
}

/* Where got's first access unit is in the stream (G_MAXUINT: nowhere). */
static guint
find_first (Stream * st, GPtrArray * got)
{
  for (guint i = 0; got->len && i < st->aus->len; i++)
    if (bytes_equal (g_ptr_array_index (got, 0), g_ptr_array_index (st->aus,
                i)))
      return i;
  return G_MAXUINT;
}

static GstElement *
sender (const gchar * props)
{
  return launchf ("appsrc name=in format=time ! uvgrtpsink name=s %s", props);
}

static guint64
stat_u64 (GstElement * sink, const gchar * field)
{
  GstStructure *st;
  guint64 v = 0;

  g_object_get (sink, "stats", &st, NULL);
  fail_unless (gst_structure_get_uint64 (st, field, &v), "%s", field);
  gst_structure_free (st);
  return v;
}

GST_START_TEST (test_clients_stock_receivers)
{
  Stream *st = stream_h264 ();
  gint base = free_ports (8);
  GstElement *a = receiver (base), *b = receiver (base + 4), *tx, *s;
  GPtrArray *ga, *gb;
  gchar *clients;

  g_usleep (100000);
  tx = sender ("");
  s = gst_bin_get_by_name (GST_BIN (tx), "s");
  /* multiudpsink's list form, replacing host:port */
  clients = g_strdup_printf ("127.0.0.1:%d, 127.0.0.1:%d", base, base + 4);
  g_object_set (s, "clients", clients, NULL);
  g_free (clients);
  g_object_get (s, "clients", &clients, NULL);
  {
    gchar *want = g_strdup_printf ("127.0.0.1:%d,127.0.0.1:%d", base,
        base + 4);
    fail_unless_equals_string (clients, want);
    g_free (want);
  }
  g_free (clients);
  stream_push (tx, st, FPS);
  wait_eos (tx);
  ga = appsink_pull_all (a, "out", NULL);
  gb = appsink_pull_all (b, "out", NULL);
  stream_check_all (st, DECODE, ga);
  stream_check_all (st, DECODE, gb);
  /* packetized once, sent twice */
  fail_unless (stat_u64 (s, "packets") > 0);
  fail_unless_equals_uint64 (stat_u64 (s, "packets-served"),
      2 * stat_u64 (s, "packets"));
  {
    guint64 served, to_serve, input = 0;
    g_object_get (s, "bytes-served", &served, "bytes-to-serve", &to_serve,
        NULL);
    fail_unless_equals_uint64 (served, 2 * stat_u64 (s, "bytes"));
    for (guint i = 0; i < st->aus->len; i++)
      input += gst_buffer_get_size (g_ptr_array_index (st->aus, i));
    fail_unless_equals_uint64 (to_serve, input);
  }
  g_ptr_array_unref (ga);
  g_ptr_array_unref (gb);
  gst_object_unref (s);
  stop (tx);
  stop (a);
  stop (b);
}

GST_END_TEST;

typedef struct
{
  gint added, removed;
} Signals;

static void
on_added (GstElement * e, const gchar * host, gint port, Signals * n)
{
  n->added++;
}

static void
on_removed (GstElement * e, const gchar * host, gint port, Signals * n)
{
  n->removed++;
}

GST_START_TEST (test_add_remove_while_playing)
{
  Stream *st = stream_h264 ();
  gint base = free_ports (12);
  GstElement *a = receiver (base), *b = receiver (base + 4),
      *c = receiver (base + 8), *tx, *s;
  GPtrArray *ga, *gb, *gc;
  GstStructure *sa, *sb;
  Signals n = { 0, 0 };
  guint64 pa = 0, pb = 0, t = 0;
  guint from;
  gchar *clients;

  g_usleep (100000);
  clients = g_strdup_printf ("clients=127.0.0.1:%d,127.0.0.1:%d", base,
      base + 4);
  tx = sender (clients);
  g_free (clients);
  s = gst_bin_get_by_name (GST_BIN (tx), "s");
  g_signal_connect (s, "client-added", G_CALLBACK (on_added), &n);
  g_signal_connect (s, "client-removed", G_CALLBACK (on_removed), &n);
  stream_push (tx, st, FPS);
  /* half way through the two seconds: C comes, A goes */
  g_usleep (900000);
  g_signal_emit_by_name (s, "add", "127.0.0.1", base + 8);
  g_signal_emit_by_name (s, "remove", "127.0.0.1", base);
  fail_unless_equals_int (n.added, 1);
  fail_unless_equals_int (n.removed, 1);
  wait_eos (tx);
  ga = appsink_pull_all (a, "out", NULL);
  gb = appsink_pull_all (b, "out", NULL);
  gc = appsink_pull_all (c, "out", NULL);
  GST_INFO ("A %u, B %u, C %u access units", ga->len, gb->len, gc->len);
  /* B lost nothing; A has a whole beginning, C a whole end */
  stream_check_all (st, DECODE, gb);
  fail_unless (ga->len > 10 && ga->len < FRAMES - 10, "A got %u", ga->len);
  check_run (st, ga, 0, "A");
  from = find_first (st, gc);
  fail_unless (from != G_MAXUINT && from >= ga->len - 1, "C from %u", from);
  check_run (st, gc, from, "C");
  fail_unless_equals_int (from + gc->len, FRAMES);

  /* multiudpsink's get-stats: A's ends, B's counts every packet */
  g_signal_emit_by_name (s, "get-stats", "127.0.0.1", base, &sa);
  g_signal_emit_by_name (s, "get-stats", "127.0.0.1", base + 4, &sb);
  fail_unless (gst_structure_has_name (sa, "multiudpsink-stats"));
  fail_unless (gst_structure_get_uint64 (sa, "packets-sent", &pa));
  fail_unless (gst_structure_get_uint64 (sb, "packets-sent", &pb));
  fail_unless (pa > 0 && pa < pb);
  fail_unless_equals_uint64 (pb, stat_u64 (s, "packets"));
  fail_unless (gst_structure_get_uint64 (sa, "disconnect-time", &t) && t > 0);
  fail_unless (gst_structure_get_uint64 (sb, "disconnect-time", &t) && t == 0);
  gst_structure_free (sa);
  gst_structure_free (sb);
  g_object_get (s, "clients", &clients, NULL);
  {
    gchar *want = g_strdup_printf ("127.0.0.1:%d,127.0.0.1:%d", base + 4,
        base + 8);
    fail_unless_equals_string (clients, want);
    g_free (want);
  }
  g_free (clients);
  g_ptr_array_unref (ga);
  g_ptr_array_unref (gb);
  g_ptr_array_unref (gc);
  gst_object_unref (s);
  stop (tx);
  stop (a);
  stop (b);
  stop (c);
}

GST_END_TEST;

/* A receiver of raw RTP on `port`. */
static GstElement *
rtp_receiver (gint port)
{
  GstElement *p = launchf ("udpsrc address=127.0.0.1 port=%d "
      "buffer-size=8000000 ! appsink name=out sync=false", port);
  play (p);
  return p;
}

/* The sequence numbers a raw receiver got, in order of arrival. */
static GArray *
received_seqs (GstElement * rx)
{
  GPtrArray *got = appsink_pull_all (rx, "out", NULL);
  GArray *seqs = g_array_new (FALSE, FALSE, sizeof (guint16));

  for (guint i = 0; i < got->len; i++) {
    GstMapInfo m;
    guint16 seq;

    fail_unless (gst_buffer_map (g_ptr_array_index (got, i), &m,
            GST_MAP_READ));
    fail_unless (m.size >= 12);
    seq = GST_READ_UINT16_BE (m.data + 2);
    g_array_append_val (seqs, seq);
    gst_buffer_unmap (g_ptr_array_index (got, i), &m);
  }
  g_ptr_array_unref (got);
  return seqs;
}

GST_START_TEST (test_port_retarget)
{
  Stream *st = stream_h264 ();
  gint base = free_ports (8);
  GstElement *a = rtp_receiver (base), *b = rtp_receiver (base + 4), *tx, *s;
  GArray *sa, *sb;
  gchar *props;
  guint64 packets;

  g_usleep (100000);
  props = g_strdup_printf ("host=127.0.0.1 port=%d seqnum-offset=100", base);
  tx = sender (props);
  g_free (props);
  s = gst_bin_get_by_name (GST_BIN (tx), "s");
  stream_push (tx, st, FPS);
  g_usleep (900000);
  g_object_set (s, "port", base + 4, NULL);
  wait_eos (tx);
  sa = received_seqs (a);
  sb = received_seqs (b);
  packets = stat_u64 (s, "packets");
  GST_INFO ("A %u, B %u of %" G_GUINT64_FORMAT " packets", sa->len, sb->len,
      packets);
  /* A a beginning, B the rest: nothing lost or sent twice at the switch */
  fail_unless (sa->len > 100 && sb->len > 100, "A %u, B %u", sa->len,
      sb->len);
  for (guint i = 0; i < sa->len; i++)
    fail_unless_equals_int (g_array_index (sa, guint16, i), 100 + i);
  for (guint i = 0; i < sb->len; i++)
    fail_unless_equals_int (g_array_index (sb, guint16, i), 100 + sa->len + i);
  fail_unless_equals_uint64 (sa->len + sb->len, packets);
  g_array_unref (sa);
  g_array_unref (sb);
  gst_object_unref (s);
  stop (tx);
  stop (a);
  stop (b);
}

GST_END_TEST;

GST_START_TEST (test_payloader_props)
{
  Stream *st = stream_h264 ();
  gint base = free_ports (4);
  GstElement *rx = launchf ("udpsrc address=127.0.0.1 port=%d "
      "buffer-size=8000000 ! appsink name=out sync=false", base), *tx, *s,
      *out;
  GstSample *smp, *last = NULL;
  GstStructure *stats;
  guint seqnum, timestamp, pt = 0, sseq = 0, sts = 0;
  guint64 running = 0;
  GstMapInfo m;
  gchar *props;

  play (rx);
  g_usleep (100000);
  props = g_strdup_printf ("host=127.0.0.1 port=%d rtcp=false pt=100 "
      "seqnum-offset=65000 timestamp-offset=1000", base);
  tx = sender (props);
  g_free (props);
  s = gst_bin_get_by_name (GST_BIN (tx), "s");
  stream_push (tx, st, FPS);
  wait_eos (tx);
  out = gst_bin_get_by_name (GST_BIN (rx), "out");
  while ((smp = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              500 * GST_MSECOND))) {
    if (last)
      gst_sample_unref (last);
    last = smp;
  }
  fail_unless (last != NULL);
  fail_unless (gst_buffer_map (gst_sample_get_buffer (last), &m,
          GST_MAP_READ));
  g_object_get (s, "seqnum", &seqnum, "timestamp", &timestamp, NULL);
  /* the last packet on the wire is the one they name */
  fail_unless_equals_int (seqnum, (m.data[2] << 8) | m.data[3]);
  fail_unless_equals_int (timestamp, GST_READ_UINT32_BE (m.data + 4));
  fail_unless_equals_int (m.data[1] & 0x7f, 100);
  gst_buffer_unmap (gst_sample_get_buffer (last), &m);
  /* the last access unit's time: (FRAMES - 1) / FPS at 90 kHz */
  fail_unless_equals_int (timestamp - 1000, (FRAMES - 1) * 90000 / FPS);
  g_object_get (s, "stats", &stats, NULL);
  fail_unless (gst_structure_get_uint (stats, "pt", &pt) && pt == 100);
  fail_unless (gst_structure_get_uint (stats, "seqnum", &sseq));
  fail_unless_equals_int (sseq, seqnum);
  fail_unless (gst_structure_get_uint (stats, "timestamp", &sts));
  fail_unless_equals_int (sts, timestamp);
  fail_unless (gst_structure_get_uint64 (stats, "running-time", &running));
  fail_unless_equals_uint64 (running, (FRAMES - 1) * GST_SECOND / FPS);
  gst_structure_free (stats);
  gst_sample_unref (last);
  gst_object_unref (out);
  gst_object_unref (s);
  stop (tx);
  stop (rx);
}

GST_END_TEST;

/* A value for pspec other than its default, within its range; FALSE for
 * the types this test leaves alone (objects, boxed: sockets, caps). */
static gboolean
other_value (GParamSpec * ps, GValue * v)
{
  const GValue *d = g_param_spec_get_default_value (ps);

  g_value_init (v, ps->value_type);
  switch (G_TYPE_FUNDAMENTAL (ps->value_type)) {
    case G_TYPE_BOOLEAN:
      g_value_set_boolean (v, !g_value_get_boolean (d));
      return TRUE;
    case G_TYPE_INT:{
      GParamSpecInt *p = G_PARAM_SPEC_INT (ps);
      g_value_set_int (v, p->default_value < p->maximum ?
          p->default_value + 1 : p->default_value - 1);
      return TRUE;
    }
    case G_TYPE_UINT:{
      GParamSpecUInt *p = G_PARAM_SPEC_UINT (ps);
      g_value_set_uint (v, p->default_value < p->maximum ?
          p->default_value + 1 : p->default_value - 1);
      return TRUE;
    }
    case G_TYPE_INT64:{
      GParamSpecInt64 *p = G_PARAM_SPEC_INT64 (ps);
      g_value_set_int64 (v, p->default_value < p->maximum ?
          p->default_value + 1 : p->default_value - 1);
      return TRUE;
    }
    case G_TYPE_UINT64:{
      GParamSpecUInt64 *p = G_PARAM_SPEC_UINT64 (ps);
      g_value_set_uint64 (v, p->default_value < p->maximum ?
          p->default_value + 1 : p->default_value - 1);
      return TRUE;
    }
    case G_TYPE_DOUBLE:{
      GParamSpecDouble *p = G_PARAM_SPEC_DOUBLE (ps);
      g_value_set_double (v, p->default_value < p->maximum ?
          p->default_value + MIN (1.0, (p->maximum - p->default_value) / 2) :
          p->default_value - MIN (1.0, (p->default_value - p->minimum) / 2));
      return TRUE;
    }
    case G_TYPE_ENUM:{
      GEnumClass *e = G_PARAM_SPEC_ENUM (ps)->enum_class;
      gint dv = g_value_get_enum (d);

      g_value_set_enum (v, e->values[e->values[0].value == dv &&
              e->n_values > 1 ? 1 : 0].value);
      return TRUE;
    }
    default:
      g_value_unset (v);
      return FALSE;
  }
}

GST_START_TEST (test_props_round_trip)
{
  static const gchar *const elements[] = { "uvgrtpsink", "uvgrtpsrc",
    "uvgrtpzrtp"
  };
  /* udpsink's force-ipv4: deprecated there, accepted and ignored here */
  static const gchar *const ignored[] = { "force-ipv4", NULL };

  for (guint i = 0; i < G_N_ELEMENTS (elements); i++) {
    GstElement *e = gst_element_factory_make (elements[i], NULL);
    guint n, checked = 0;
    GParamSpec **ps;

    fail_unless (e != NULL);
    GValue *want;

    ps = g_object_class_list_properties (G_OBJECT_GET_CLASS (e), &n);
    want = g_new0 (GValue, n);
    /* all written first, then all read: two properties stored in one
     * field would show */
    for (guint k = 0; k < n; k++)
      if ((ps[k]->flags & (G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY)) ==
          G_PARAM_READWRITE && !g_strv_contains (ignored, ps[k]->name) &&
          other_value (ps[k], &want[k]))
        g_object_set_property (G_OBJECT (e), ps[k]->name, &want[k]);
    for (guint k = 0; k < n; k++) {
      GValue got = G_VALUE_INIT;

      if (!G_IS_VALUE (&want[k]))
        continue;
      g_value_init (&got, ps[k]->value_type);
      g_object_get_property (G_OBJECT (e), ps[k]->name, &got);
      fail_unless (g_param_values_cmp (ps[k], &want[k], &got) == 0,
          "%s: %s reads %s after %s was written", elements[i], ps[k]->name,
          g_strdup_value_contents (&got), g_strdup_value_contents (&want[k]));
      g_value_unset (&want[k]);
      g_value_unset (&got);
      checked++;
    }
    g_free (want);
    GST_INFO ("%s: %u properties written and read back", elements[i],
        checked);
    fail_unless (checked > 0);
    g_free (ps);
    gst_object_unref (e);
  }
}

GST_END_TEST;

GST_START_TEST (test_bad_client)
{
  GstElement *tx = launchf ("videotestsrc num-buffers=1 ! x264enc ! "
      "uvgrtpsink name=s clients=127.0.0.1:5004,nonsense");
  GstMessage *m;
  GError *e = NULL;

  gst_element_set_state (tx, GST_STATE_PLAYING);
  m = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (tx), 10 * GST_SECOND,
      GST_MESSAGE_ERROR);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &e, NULL);
  fail_unless (strstr (e->message, "'clients'") != NULL, "%s", e->message);
  fail_unless (strstr (e->message, "nonsense") != NULL, "%s", e->message);
  g_error_free (e);
  gst_message_unref (m);
  stop (tx);
}

GST_END_TEST;

/* A UDP socket bound to host:0, as an application makes one. */
static GSocket *
bound_socket (const gchar * host, gint * port)
{
  GInetAddress *ia = g_inet_address_new_from_string (host);
  GSocketAddress *sa = g_inet_socket_address_new (ia, 0);
  GSocket *sock = g_socket_new (g_inet_address_get_family (ia),
      G_SOCKET_TYPE_DATAGRAM, G_SOCKET_PROTOCOL_UDP, NULL);
  GSocketAddress *local;

  fail_unless (sock && g_socket_bind (sock, sa, FALSE, NULL));
  local = g_socket_get_local_address (sock, NULL);
  *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (local));
  g_object_unref (local);
  g_object_unref (sa);
  g_object_unref (ia);
  return sock;
}

/* Records the source port of every datagram udpsrc reads. */
static GstPadProbeReturn
on_datagram (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  GstNetAddressMeta *m =
      gst_buffer_get_net_address_meta (GST_PAD_PROBE_INFO_BUFFER (info));
  gint port = m ? g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS
      (m->addr)) : -1;

  g_array_append_val ((GArray *) user, port);
  return GST_PAD_PROBE_OK;
}

static void
set_socket (GstElement * p, const gchar * name, const gchar * prop,
    GSocket * sock)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), name);

  g_object_set (e, prop, sock, "close-socket", FALSE, NULL);
  gst_object_unref (e);
}

static GSocket *
get_socket (GstElement * p, const gchar * name, const gchar * prop)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p), name);
  GSocket *sock;

  g_object_get (e, prop, &sock, NULL);
  gst_object_unref (e);
  return sock;
}

/* Symmetric RTP (RFC 4961) with the application's sockets, against the
 * stock elements doing the same: one socket per side, a sender and a
 * receiver on it. Each side gets every access unit of the other, byte for
 * byte, and what reaches the stock side came from our socket's port. */
GST_START_TEST (test_socket_symmetric)
{
  Stream *st = stream_h264 ();
  gint pa, pb;
  GSocket *sa = bound_socket ("127.0.0.1", &pa);
  GSocket *sb = bound_socket ("127.0.0.1", &pb);
  GArray *from = g_array_new (FALSE, FALSE, sizeof (gint));
  GstElement *our_rx, *our_tx, *stock_rx, *stock_tx, *e;
  GSocket *used;
  GPtrArray *got;
  GstPad *pad;

  our_rx = launchf ("uvgrtpsrc name=net caps=\"%s\" ! appsink name=out "
      "sync=false", RTP_CAPS);
  set_socket (our_rx, "net", "socket", sa);
  our_tx = launchf ("appsrc name=in format=time ! uvgrtpsink name=net "
      "host=127.0.0.1 port=%d", pb);
  set_socket (our_tx, "net", "socket", sa);
  stock_rx = launchf ("udpsrc name=net caps=\"%s\" ! rtph264depay ! "
      "h264parse ! video/x-h264,stream-format=byte-stream,alignment=au ! "
      "appsink name=out sync=false", RTP_CAPS);
  set_socket (stock_rx, "net", "socket", sb);
  e = gst_bin_get_by_name (GST_BIN (stock_rx), "net");
  pad = gst_element_get_static_pad (e, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_datagram, from, NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
  stock_tx = launchf ("appsrc name=in format=time ! rtph264pay pt=96 "
      "config-interval=-1 ! udpsink name=net host=127.0.0.1 port=%d", pa);
  set_socket (stock_tx, "net", "socket", sb);
  play (our_rx);
  play (stock_rx);

  /* ours to the stock receiver, from our socket's port (at four times the
   * frame rate: the test is about where packets go, not pacing) */
  stream_push (our_tx, st, 4 * FPS);
  wait_eos (our_tx);
  used = get_socket (our_tx, "net", "used-socket");
  fail_unless (used == sa);
  g_object_unref (used);
  got = appsink_pull_all (stock_rx, "out", NULL);
  stream_check_all (st, DECODE, got);
  g_ptr_array_unref (got);
  fail_unless (from->len > FRAMES);
  for (guint i = 0; i < from->len; i++)
    fail_unless_equals_int (g_array_index (from, gint, i), pa);

  /* the stock sender to ours, on the same socket: every picture decodes
   * (not byte for byte: rtph264pay leaves out the access unit delimiters) */
  stream_push (stock_tx, st, 4 * FPS);
  wait_eos (stock_tx);
  got = appsink_pull_all (our_rx, "out", NULL);
  fail_unless_equals_int (got->len, FRAMES);
  fail_unless_equals_int (stream_decoded (st, DECODE, got), FRAMES);
  g_ptr_array_unref (got);
  used = get_socket (our_rx, "net", "used-socket");
  fail_unless (used == sa);
  g_object_unref (used);
  e = gst_bin_get_by_name (GST_BIN (our_rx), "net");
  {
    gint port;

    g_object_get (e, "port", &port, NULL);
    fail_unless_equals_int (port, pa);
  }

  /* close-socket=false leaves the socket open; true closes it */
  stop (our_tx);
  fail_if (g_socket_is_closed (sa));
  g_object_set (e, "close-socket", TRUE, NULL);
  gst_object_unref (e);
  stop (our_rx);
  fail_unless (g_socket_is_closed (sa));
  stop (stock_tx);
  stop (stock_rx);
  g_array_unref (from);
  g_object_unref (sa);
  g_object_unref (sb);
}

GST_END_TEST;

/* Our own socket as used-socket (a GSocket the application can send
 * through from the element's port) while playing, none after; an IPv6
 * host through socket-v6, shown in used-socket-v6. */
GST_START_TEST (test_used_socket)
{
  gint base = free_ports (4), p6, port;
  GstElement *rx = rtp_receiver (base), *tx, *s;
  GSocket *used, *used6, *s6;
  GPtrArray *got;
  gchar *props;

  g_usleep (100000);
  props = g_strdup_printf ("host=127.0.0.1 port=%d bind-port=%d", base,
      base + 2);
  tx = launchf ("videotestsrc num-buffers=5 is-live=true ! x264enc "
      "tune=zerolatency ! uvgrtpsink name=s %s", props);
  g_free (props);
  s = gst_bin_get_by_name (GST_BIN (tx), "s");
  play (tx);
  g_object_get (s, "used-socket", &used, "used-socket-v6", &used6, NULL);
  fail_unless (used != NULL && used6 == NULL);
  {
    GSocketAddress *local = g_socket_get_local_address (used, NULL);

    port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (local));
    g_object_unref (local);
  }
  fail_unless_equals_int (port, base + 2);
  wait_eos (tx);
  stop (tx);
  g_object_get (s, "used-socket", &used6, NULL);
  fail_unless (used6 == NULL);
  /* ours was a duplicate: still the application's to use */
  fail_if (g_socket_is_closed (used));
  g_object_unref (used);
  gst_object_unref (s);
  got = appsink_pull_all (rx, "out", NULL);
  fail_unless (got->len > 5);
  g_ptr_array_unref (got);
  stop (rx);

  /* IPv6 */
  s6 = bound_socket ("::1", &p6);
  rx = launchf ("udpsrc address=::1 port=%d ! appsink name=out sync=false",
      base + 1);
  play (rx);
  g_usleep (100000);
  tx = launchf ("videotestsrc num-buffers=5 is-live=true ! x264enc "
      "tune=zerolatency ! uvgrtpsink name=s host=::1 port=%d", base + 1);
  set_socket (tx, "s", "socket-v6", s6);
  s = gst_bin_get_by_name (GST_BIN (tx), "s");
  play (tx);
  g_object_get (s, "used-socket", &used, "used-socket-v6", &used6, NULL);
  fail_unless (used == NULL && used6 == s6);
  g_object_unref (used6);
  wait_eos (tx);
  gst_object_unref (s);
  stop (tx);
  got = appsink_pull_all (rx, "out", NULL);
  fail_unless (got->len > 5);
  g_ptr_array_unref (got);
  stop (rx);
  fail_if (g_socket_is_closed (s6));
  g_object_unref (s6);
}

GST_END_TEST;

#define MULTIOPUS_CAPS "application/x-rtp,media=audio,clock-rate=48000," \
  "encoding-name=MULTIOPUS,num_streams=(string)4,coupled_streams=(string)2," \
  "channel_mapping=(string)\"0,4,1,2,3,5\",encoding-params=(string)6,payload=96"
/* 50 pictures of 20 ms of 5.1 sound, as opusenc makes 20 ms packets */
#define SOUND_51 "audiotestsrc num-buffers=50 samplesperbuffer=960 ! " \
  "audio/x-raw,channels=6,rate=48000 ! opusenc"

/* The samples of 6-channel sound that reached appsink "out" of p. */
static guint64
samples_51 (GstElement * p)
{
  GstCaps *caps = NULL;
  GPtrArray *got = appsink_pull_all (p, "out", &caps);
  GstStructure *st;
  guint64 bytes = 0;
  gint ch = 0;

  fail_unless (got->len > 0 && caps != NULL);
  st = gst_caps_get_structure (caps, 0);
  fail_unless (gst_structure_get_int (st, "channels", &ch));
  fail_unless_equals_int (ch, 6);
  for (guint i = 0; i < got->len; i++)
    bytes += gst_buffer_get_size (g_ptr_array_index (got, i));
  gst_caps_unref (caps);
  g_ptr_array_unref (got);
  return bytes / (6 * 2);
}

/* Opus of six channels (channel-mapping-family 1) both ways with the
 * stock elements, as MULTIOPUS: every packet decodes to 5.1 sound, each
 * way the whole second. */
GST_START_TEST (test_multiopus)
{
  gint base = free_ports (4);
  GstElement *rx, *tx, *s;
  guint64 packets;

  /* ours to rtpopusdepay */
  rx = launchf ("udpsrc address=127.0.0.1 port=%d caps=\"%s\" ! "
      "rtpopusdepay ! opusdec ! audio/x-raw,format=S16LE ! appsink "
      "name=out sync=false", base, MULTIOPUS_CAPS);
  play (rx);
  g_usleep (100000);
  tx = launchf (SOUND_51 " ! uvgrtpsink name=s host=127.0.0.1 port=%d "
      "rtcp=false sync=false", base);
  s = gst_bin_get_by_name (GST_BIN (tx), "s");
  play (tx);
  wait_eos (tx);
  packets = stat_u64 (s, "packets");
  fail_unless (packets >= 50, "%" G_GUINT64_FORMAT, packets);
  fail_unless_equals_uint64 (samples_51 (rx), packets * 960);
  gst_object_unref (s);
  stop (tx);
  stop (rx);

  /* rtpopuspay to ours */
  rx = launchf ("uvgrtpsrc port=%d caps=\"%s\" ! opusdec ! "
      "audio/x-raw,format=S16LE ! appsink name=out sync=false", base + 2,
      MULTIOPUS_CAPS);
  play (rx);
  g_usleep (100000);
  tx = launchf (SOUND_51 " ! rtpopuspay pt=96 ! udpsink host=127.0.0.1 "
      "port=%d sync=false", base + 2);
  play (tx);
  wait_eos (tx);
  fail_unless_equals_uint64 (samples_51 (rx), packets * 960);
  stop (tx);
  stop (rx);
}

GST_END_TEST;

/* Pushes the first n access units of st into appsrc "in" of tx, 20 ms of
 * buffer time apart, under `seg` (appsrc hands the segment on), each with
 * a GstRTPSourceMeta of SSRC 0xAAAA and CSRCs 0x11, 0x22 when meta. */
static void
push_segment (GstElement * tx, Stream * st, guint n, const GstSegment * seg,
    gboolean meta)
{
  GstElement *in = gst_bin_get_by_name (GST_BIN (tx), "in");

  g_object_set (in, "caps", st->caps, "handle-segment-change", TRUE, NULL);
  play (tx);
  for (guint i = 0; i < n; i++) {
    GstBuffer *b = gst_buffer_copy (g_ptr_array_index (st->aus, i));
    GstSample *smp;

    GST_BUFFER_PTS (b) = i * 20 * GST_MSECOND;
    GST_BUFFER_DTS (b) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION (b) = 20 * GST_MSECOND;
    if (meta) {
      const guint32 ssrc = 0xAAAA, csrc[2] = { 0x11, 0x22 };

      gst_buffer_add_rtp_source_meta (b, &ssrc, csrc, 2);
    }
    smp = gst_sample_new (b, st->caps, seg, NULL);
    fail_unless_equals_int (gst_app_src_push_sample (GST_APP_SRC (in), smp),
        GST_FLOW_OK);
    gst_sample_unref (smp);
    gst_buffer_unref (b);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (in));
  gst_object_unref (in);
}

/* The RTP timestamps of the packets that reached appsink "out" of p, each
 * once, in order; every packet's CSRC list must be csrc (n of them;
 * G_MAXUINT: not checked). */
static GArray *
rtp_times (GstElement * p, const guint32 * csrc, guint n)
{
  GPtrArray *got = appsink_pull_all (p, "out", NULL);
  GArray *ts = g_array_new (FALSE, FALSE, sizeof (guint32));

  for (guint i = 0; i < got->len; i++) {
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    guint32 t;

    fail_unless (gst_rtp_buffer_map (g_ptr_array_index (got, i),
            GST_MAP_READ, &rtp));
    t = gst_rtp_buffer_get_timestamp (&rtp);
    if (n != G_MAXUINT)
      fail_unless_equals_int (gst_rtp_buffer_get_csrc_count (&rtp), n);
    for (guint k = 0; n != G_MAXUINT && k < n; k++)
      fail_unless_equals_int (gst_rtp_buffer_get_csrc (&rtp, k), csrc[k]);
    gst_rtp_buffer_unmap (&rtp);
    if (!ts->len || g_array_index (ts, guint32, ts->len - 1) != t)
      g_array_append_val (ts, t);
  }
  g_ptr_array_unref (got);
  return ts;
}

/* RTPBasePayload's time properties and source-info, side by side with
 * rtph264pay fed the same buffers under a segment of rate 2 whose stream
 * time starts at 10 s: the same RTP timestamps, exactly (running time by
 * default, stream time with scale-rtptime=false or onvif-no-rate-control),
 * and the same CSRC lists. */
GST_START_TEST (test_rtptime_and_source_info)
{
  static const gchar *const props[] = { "", "scale-rtptime=false",
    "onvif-no-rate-control=true", "perfect-rtptime=false source-info=true"
  };
  const guint32 csrc[3] = { 0x11, 0x22, 0xAAAA };
  Stream *st = stream_h264 ();
  gint base = free_ports (4);
  GstSegment seg;

  gst_segment_init (&seg, GST_FORMAT_TIME);
  seg.rate = 2.0;
  seg.time = 10 * GST_SECOND;
  for (guint c = 0; c < G_N_ELEMENTS (props); c++) {
    gboolean info = strstr (props[c], "source-info") != NULL;
    GstElement *rx = rtp_receiver (base), *tx, *stock;
    GArray *ours, *theirs;
    gchar *desc;

    g_usleep (100000);
    desc = g_strdup_printf ("host=127.0.0.1 port=%d rtcp=false "
        "timestamp-offset=0 %s", base, props[c]);
    tx = sender (desc);
    g_free (desc);
    push_segment (tx, st, 20, &seg, TRUE);
    wait_eos (tx);
    ours = rtp_times (rx, csrc, info ? 3 : 0);
    stop (tx);
    stop (rx);

    stock = launchf ("appsrc name=in format=time ! rtph264pay pt=96 "
        "timestamp-offset=0 %s ! appsink name=out sync=false", props[c]);
    push_segment (stock, st, 20, &seg, TRUE);
    /* without source-info, rtph264pay still lists the first buffer's
     * sources (it keeps the meta until it has negotiated): not compared */
    theirs = rtp_times (stock, csrc, info ? 3 : G_MAXUINT);
    stop (stock);

    fail_unless_equals_int (ours->len, 20);
    fail_unless_equals_int (theirs->len, 20);
    for (guint i = 0; i < 20; i++)
      fail_unless_equals_int (g_array_index (ours, guint32, i),
          g_array_index (theirs, guint32, i));
    /* 20 ms apart at rate 2: 10 ms of running time, 20 ms of stream time */
    fail_unless_equals_int (g_array_index (ours, guint32, 1) -
        g_array_index (ours, guint32, 0), c == 1 || c == 2 ? 1800 : 900);
    g_array_unref (ours);
    g_array_unref (theirs);
  }
}

GST_END_TEST;

/* dtx as rtpopuspay's: of an Opus encoder's silence with DTX, the packets
 * of two bytes or less are not sent; all are without dtx. */
GST_START_TEST (test_dtx)
{
  static Stream quiet;
  gint base = free_ports (4);
  guint big = 0;

  stream_make (&quiet, "audiotestsrc num-buffers=100 samplesperbuffer=960 "
      "wave=silence ! audio/x-raw,rate=48000,channels=1 ! opusenc dtx=true "
      "! appsink name=sink sync=false");
  for (guint i = 0; i < quiet.aus->len; i++)
    big += gst_buffer_get_size (g_ptr_array_index (quiet.aus, i)) > 2;
  fail_unless (big > 0 && big < quiet.aus->len / 2, "%u of %u", big,
      quiet.aus->len);
  for (gint dtx = 0; dtx < 2; dtx++) {
    GstElement *tx, *s;
    gchar *props = g_strdup_printf ("host=127.0.0.1 port=%d rtcp=false "
        "dtx=%s", base, dtx ? "true" : "false");

    tx = sender (props);
    g_free (props);
    s = gst_bin_get_by_name (GST_BIN (tx), "s");
    stream_push (tx, &quiet, 200);
    wait_eos (tx);
    fail_unless_equals_uint64 (stat_u64 (s, "packets"),
        dtx ? big : quiet.aus->len);
    gst_object_unref (s);
    stop (tx);
  }
}

GST_END_TEST;

static Suite *
dropin_suite (void)
{
  Suite *s = suite_create ("dropin");
  TCase *tc = tcase_create ("sending");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_clients_stock_receivers);
  tcase_add_test (tc, test_add_remove_while_playing);
  tcase_add_test (tc, test_port_retarget);
  tcase_add_test (tc, test_payloader_props);
  tcase_add_test (tc, test_bad_client);
  tcase_add_test (tc, test_socket_symmetric);
  tcase_add_test (tc, test_used_socket);
  tcase_add_test (tc, test_multiopus);
  tcase_add_test (tc, test_rtptime_and_source_info);
  tcase_add_test (tc, test_dtx);
  tcase_add_test (tc, test_props_round_trip);
  return s;
}

GST_CHECK_MAIN (dropin);
