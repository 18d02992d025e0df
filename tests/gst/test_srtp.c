/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SRTP in uvgrtpsink and uvgrtpsrc on loopback:
 *  - interop with GStreamer's srtpdec (uvgrtpsink -> udpsrc ! srtpdec !
 *    rtph26Xdepay) and srtpenc (rtph26Xpay ! srtpenc ! udpsink ->
 *    uvgrtpsrc) for every profile both sides run, with streams from real
 *    encoders: every access unit arrives with its slices byte for byte and
 *    decodes;
 *  - uvgrtpsink -> uvgrtpsrc, whole access units byte for byte;
 *  - hostile datagrams at uvgrtpsrc from a plain socket, amid a valid
 *    stream captured from uvgrtpsink: tampered, truncated, wrong-key,
 *    replayed (recent and older than the window) and runt datagrams are all
 *    rejected, counted exactly, and nothing of them reaches the output;
 *  - configuration errors name the property;
 *  - the plugin runs on the libsrtp2 the build configured (its private
 *    static OpenSSL build, kept out of the plugin's dynamic symbol table,
 *    or the system's) while srtpenc's system libsrtp2 is loaded beside it.
 */
#include <gst/check/gstcheck.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef URTP_SRTP_LINKED
#define URTP_SRTP_LINKED "unknown"      /* set by lib/meson.build */
#endif

#define PT 96
#define SSRC 0x5eed1234u
#define FRAMES 20
#define BIG_BUFFER "buffer-size=8388608"
/* appsinks keep everything and let EOS through before being pulled */
#define SINK(name) "appsink name=" name " sync=false wait-on-eos=false"
/* small pictures, several slices a picture, an IDR every 10 */
#define X264ENC "x264enc speed-preset=ultrafast key-int-max=10 bframes=0 " \
    "option-string=slices=4"
#define X265ENC "x265enc speed-preset=ultrafast key-int-max=10 " \
    "log-level=none option-string=slices=3"
#define RAW "video/x-raw,format=I420,width=320,height=240,framerate=60/1"
/* large pictures (noise) at the default MTU: pad-fragments pads most NAL
 * units, and the padding is inside the protected payload */
#define BIG_PICTURES "pattern=snow"

typedef struct
{
  const gchar *cipher, *auth;
  guint key_len;
} Profile;

/* Every pairing both srtpenc and the elements run. */
static const Profile profiles[] = {
  {"aes-128-icm", "hmac-sha1-80", 30},
  {"aes-128-icm", "hmac-sha1-32", 30},
  {"aes-256-icm", "hmac-sha1-80", 46},
  {"aes-256-icm", "hmac-sha1-32", 46},
  {"aes-128-gcm", "null", 28},
  {"aes-256-gcm", "null", 44},
};

#define P_ICM128_80 0
#define P_ICM256_32 3
#define P_GCM128 4

/* Deterministic key material as hex; another seed, another key. */
static gchar *
key_hex (const Profile * p, guint seed)
{
  GString *s = g_string_new (NULL);
  guint i;

  for (i = 0; i < p->key_len; i++)
    g_string_append_printf (s, "%02x", (i * 29 + seed * 101 + 7) & 0xff);
  return g_string_free (s, FALSE);
}

/* ------------------------------------------------------------------------ */
/* pipelines */

static GstElement *
launch (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);

  fail_unless (p != NULL && err == NULL, "cannot build '%s': %s", desc,
      err ? err->message : "?");
  return p;
}

/* Waits for one of types; fails on an error unless ERROR is asked for. */
static GstMessage *
wait_message (GstElement * pipe, GstMessageType types, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      types | GST_MESSAGE_ERROR);

  gst_object_unref (bus);
  fail_unless (msg != NULL, "no message of the expected kind");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR
      && !(types & GST_MESSAGE_ERROR)) {
    GError *err = NULL;
    gchar *dbg = NULL;

    gst_message_parse_error (msg, &err, &dbg);
    fail ("error from %s: %s (%s)", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)),
        err->message, GST_STR_NULL (dbg));
  }
  return msg;
}

static void
run_to_eos (GstElement * pipe)
{
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  gst_message_unref (wait_message (pipe, GST_MESSAGE_EOS, 60 * GST_SECOND));
}

static void
stop_pipeline (GstElement * pipe)
{
  fail_unless (gst_element_set_state (pipe, GST_STATE_NULL) ==
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipe);
}

static GstElement *
get_named (GstElement * pipe, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipe), name);

  fail_unless (e != NULL, "no element %s", name);
  return e;
}

/* Every buffer an appsink holds (after EOS). */
static GPtrArray *
pull_all (GstElement * pipe, const gchar * name)
{
  GstElement *sink = get_named (pipe, name);
  GPtrArray *bufs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) gst_buffer_unref);
  GstSample *s;

  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 0))) {
    g_ptr_array_add (bufs, gst_buffer_ref (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  gst_object_unref (sink);
  return bufs;
}

/* Buffers that reached a pad so far, counted by a probe. */
static GstPadProbeReturn
count_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  g_atomic_int_inc ((gint *) user_data);
  return GST_PAD_PROBE_OK;
}

static void
count_buffers (GstElement * pipe, const gchar * name, gint * counter)
{
  GstElement *e = get_named (pipe, name);
  GstPad *pad = gst_element_get_static_pad (e, "sink");

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_probe, counter,
      NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
}

/* Waits, bounded, until *counter reaches n; the caller checks exactly. */
static void
wait_count (gint * counter, gint n)
{
  for (gint i = 0; i < 2000 && g_atomic_int_get (counter) < n; i++)
    g_usleep (10000);
}

static guint64
stat_u64 (GstElement * pipe, const gchar * name, const gchar * field)
{
  GstElement *e = get_named (pipe, name);
  GstStructure *st = NULL;
  guint64 v = G_MAXUINT64;

  g_object_get (e, "stats", &st, NULL);
  fail_unless (st != NULL);
  fail_unless (gst_structure_get_uint64 (st, field, &v), "%s: no field %s",
      name, field);
  gst_structure_free (st);
  gst_object_unref (e);
  return v;
}

/* uvgrtpsrc named "src" binding port 0: the port it got. */
static GstElement *
start_receiver (const gchar * desc, gint * port)
{
  GstElement *pipe = launch (desc);
  GstElement *src = get_named (pipe, "src");

  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  g_object_get (src, "port", port, NULL);
  fail_unless (*port > 0);
  gst_object_unref (src);
  return pipe;
}

/* EOS into uvgrtpsrc drains what the kernel and the depayloader hold. */
static void
finish_receiver (GstElement * pipe)
{
  GstElement *src = get_named (pipe, "src");

  fail_unless (gst_element_send_event (src, gst_event_new_eos ()));
  gst_object_unref (src);
  gst_message_unref (wait_message (pipe, GST_MESSAGE_EOS, 30 * GST_SECOND));
}

/* ------------------------------------------------------------------------ */
/* bytes */

/* The NAL units of an Annex-B buffer, without start codes or trailing zero
 * bytes; only slices if vcl_only. */
static GPtrArray *
nal_units (GstBuffer * buf, gboolean h265, gboolean vcl_only)
{
  GPtrArray *nals = g_ptr_array_new_with_free_func (
      (GDestroyNotify) g_bytes_unref);
  GstMapInfo m;
  gsize i, start = 0;
  gboolean in_nal = FALSE;

  fail_unless (gst_buffer_map (buf, &m, GST_MAP_READ));
  for (i = 0; i <= m.size; i++) {
    gboolean sc = i + 3 <= m.size && m.data[i] == 0 && m.data[i + 1] == 0
        && m.data[i + 2] == 1;

    if (!sc && i < m.size)
      continue;
    if (in_nal) {
      gsize end = i;

      while (end > start && m.data[end - 1] == 0)
        end--;
      if (end > start) {
        const guint8 *n = m.data + start;
        guint type = h265 ? (n[0] >> 1) & 0x3f : n[0] & 0x1f;
        gboolean vcl = h265 ? type < 32 : (type >= 1 && type <= 5);

        if (!vcl_only || vcl)
          g_ptr_array_add (nals, g_bytes_new (n, end - start));
      }
    }
    if (i >= m.size)
      break;
    in_nal = TRUE;
    start = i + 3;
    i += 2;
  }
  gst_buffer_unmap (buf, &m);
  return nals;
}

/* Every received access unit is the one sent at its place: its slices (or
 * with vcl_only FALSE all its NAL units) equal byte for byte. */
static void
check_same_aus (GPtrArray * enc, GPtrArray * out, gboolean h265,
    gboolean vcl_only)
{
  guint i, j;

  fail_unless_equals_int (out->len, enc->len);
  for (i = 0; i < enc->len; i++) {
    GPtrArray *a = nal_units (g_ptr_array_index (enc, i), h265, vcl_only);
    GPtrArray *b = nal_units (g_ptr_array_index (out, i), h265, vcl_only);

    fail_unless (a->len > 0);
    fail_unless_equals_int (b->len, a->len);
    for (j = 0; j < a->len; j++)
      fail_unless (g_bytes_equal (g_ptr_array_index (a, j),
              g_ptr_array_index (b, j)), "AU %u NAL %u differs", i, j);
    g_ptr_array_unref (a);
    g_ptr_array_unref (b);
  }
}

/* ------------------------------------------------------------------------ */
/* plain UDP */

static int
udp_socket (void)
{
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  fail_unless (fd >= 0);
  return fd;
}

static gint
bind_loopback (int fd)
{
  struct sockaddr_in sa;
  socklen_t len = sizeof (sa);

  memset (&sa, 0, sizeof (sa));
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (fd, (struct sockaddr *) &sa, sizeof (sa)) == 0);
  fail_unless (getsockname (fd, (struct sockaddr *) &sa, &len) == 0);
  return ntohs (sa.sin_port);
}

static gint
free_udp_port (void)
{
  int fd = udp_socket ();
  gint port = bind_loopback (fd);

  close (fd);
  return port;
}

static void
send_dgram (int fd, gint port, const guint8 * data, gsize len)
{
  struct sockaddr_in a;

  memset (&a, 0, sizeof (a));
  a.sin_family = AF_INET;
  a.sin_port = htons ((guint16) port);
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (sendto (fd, data, len, 0, (struct sockaddr *) &a,
          sizeof (a)) == (ssize_t) len, "sendto: %s", g_strerror (errno));
  /* modest pace: loopback must not drop */
  g_usleep (50);
}

static void
send_bytes (int fd, gint port, GBytes * b)
{
  gsize len;
  const guint8 *d = g_bytes_get_data (b, &len);

  send_dgram (fd, port, d, len);
}

/* ------------------------------------------------------------------------ */
/* which profiles the stock elements take */

/* Whether srtpenc protects a packet with the profile (Debian's build may
 * lack GCM). */
static gboolean
stock_supports (const Profile * p)
{
  static const guint8 rtp[] = { 0x80, 0xe0, 0x12, 0x34, 0, 0, 0, 1,
    0x5e, 0xed, 0x12, 0x34, 0x40, 0x01, 0xaa, 0xbb
  };
  gchar *key = key_hex (p, 1), *desc;
  GstElement *pipe, *src;
  GstMessage *msg;
  gboolean ok;

  desc = g_strdup_printf ("appsrc name=a format=time caps=\"application/"
      "x-rtp,media=video,clock-rate=90000,encoding-name=H265,payload=96\" ! "
      "srtpenc key=%s rtp-cipher=%s rtp-auth=%s rtcp-cipher=%s rtcp-auth=%s "
      "! fakesink", key, p->cipher, p->auth, p->cipher, p->auth);
  pipe = launch (desc);
  g_free (desc);
  g_free (key);
  src = get_named (pipe, "a");
  if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    ok = FALSE;
  } else {
    gst_app_src_push_buffer (GST_APP_SRC (src),
        gst_buffer_new_memdup (rtp, sizeof (rtp)));
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    msg = wait_message (pipe, GST_MESSAGE_EOS | GST_MESSAGE_ERROR,
        30 * GST_SECOND);
    ok = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
    gst_message_unref (msg);
  }
  gst_object_unref (src);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  if (!ok)
    g_print ("SKIP: srtpenc refuses %s with %s\n", p->cipher, p->auth);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* (1) uvgrtpsink (SRTP) -> udpsrc ! srtpdec ! rtph26Xdepay */

static void
to_srtpdec_full (const Profile * p, gboolean h265, gboolean big)
{
  const gchar *c = h265 ? "265" : "264";
  gchar *key, *desc;
  GstElement *recv, *send;
  GPtrArray *enc, *out, *dec;
  GstStructure *st = NULL;
  GstElement *srtpdec;
  guint recv_count = 0, drop_count = 1;
  gint port = free_udp_port (), outputs = 0;

  if (!stock_supports (p))
    return;
  key = key_hex (p, 1);
  desc = g_strdup_printf ("udpsrc address=127.0.0.1 port=%d " BIG_BUFFER
      " caps=\"application/x-srtp,media=(string)video,clock-rate=(int)90000,"
      "encoding-name=(string)H%s,payload=(int)%d,ssrc=(uint)%u,"
      "srtp-key=(buffer)%s,srtp-cipher=(string)%s,srtp-auth=(string)%s,"
      "srtcp-cipher=(string)%s,srtcp-auth=(string)%s,roc=(uint)0\" ! "
      "srtpdec name=srtpdec ! rtph%sdepay ! "
      "video/x-h%s,stream-format=byte-stream,alignment=au ! tee name=t ! "
      "queue ! " SINK ("out") " t. ! queue ! h%sparse ! avdec_h%s ! "
      SINK ("dec"), port, c, PT, SSRC, key, p->cipher, p->auth, p->cipher,
      p->auth, c, c, c, c);
  recv = launch (desc);
  g_free (desc);
  count_buffers (recv, "out", &outputs);
  fail_if (gst_element_set_state (recv, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);

  desc = g_strdup_printf ("videotestsrc num-buffers=%d %s ! " RAW " ! %s ! "
      "video/x-h%s,stream-format=byte-stream,alignment=au ! tee name=t ! "
      "queue ! " SINK ("enc") " t. ! queue ! uvgrtpsink name=sink "
      "host=127.0.0.1 port=%d pt=%d ssrc=%u mtu=%d srtp-key=%s "
      "srtp-cipher=%s srtp-auth=%s sync=true", FRAMES, big ? BIG_PICTURES : "",
      h265 ? X265ENC : big ? X264ENC " bitrate=20000" : X264ENC, c, port, PT,
      SSRC, big ? 1400 : 600, key, p->cipher, p->auth);
  send = launch (desc);
  g_free (desc);
  run_to_eos (send);
  enc = pull_all (send, "enc");

  /* the depayloader outputs each AU at its marker: wait for the last */
  wait_count (&outputs, FRAMES);
  fail_unless (gst_element_send_event (recv, gst_event_new_eos ()));
  gst_message_unref (wait_message (recv, GST_MESSAGE_EOS, 30 * GST_SECOND));
  out = pull_all (recv, "out");
  dec = pull_all (recv, "dec");

  fail_unless_equals_int (enc->len, FRAMES);
  check_same_aus (enc, out, h265, TRUE);
  fail_unless_equals_int (dec->len, FRAMES);

  /* srtpdec took every packet the sink sent, and dropped none */
  srtpdec = get_named (recv, "srtpdec");
  g_object_get (srtpdec, "stats", &st, NULL);
  fail_unless (st != NULL);
  fail_unless (gst_structure_get_uint (st, "recv-count", &recv_count));
  fail_unless (gst_structure_get_uint (st, "recv-drop-count", &drop_count));
  gst_structure_free (st);
  gst_object_unref (srtpdec);
  fail_unless_equals_uint64 (recv_count, stat_u64 (send, "sink", "packets"));
  fail_unless_equals_int (drop_count, 0);
  fail_unless_equals_uint64 (stat_u64 (send, "sink", "srtp-errors"), 0);
  fail_unless_equals_uint64 (stat_u64 (send, "sink", "send-errors"), 0);
  /* fragments under 1024 bytes are never padded; large ones mostly are */
  GST_INFO ("%s/%s: %" G_GUINT64_FORMAT " packets, %" G_GUINT64_FORMAT
      " bytes of padding", p->cipher, p->auth, stat_u64 (send, "sink",
          "packets"), stat_u64 (send, "sink", "padding-bytes"));
  if (big)
    fail_unless (stat_u64 (send, "sink", "padding-bytes") > 0);
  else
    fail_unless_equals_uint64 (stat_u64 (send, "sink", "padding-bytes"), 0);

  g_ptr_array_unref (enc);
  g_ptr_array_unref (out);
  g_ptr_array_unref (dec);
  stop_pipeline (send);
  stop_pipeline (recv);
  g_free (key);
}

static void
to_srtpdec (const Profile * p, gboolean h265)
{
  to_srtpdec_full (p, h265, FALSE);
}

/* ------------------------------------------------------------------------ */
/* (2) rtph26Xpay ! srtpenc ! udpsink -> uvgrtpsrc (SRTP) */

static void
from_srtpenc (const Profile * p, gboolean h265)
{
  const gchar *c = h265 ? "265" : "264";
  gchar *key, *desc;
  GstElement *recv, *send;
  GPtrArray *enc, *out, *dec;
  gint port;

  if (!stock_supports (p))
    return;
  key = key_hex (p, 2);
  desc = g_strdup_printf ("uvgrtpsrc name=src address=127.0.0.1 port=0 "
      BIG_BUFFER " encoding-name=H%s srtp-key=%s srtp-cipher=%s srtp-auth=%s "
      "! tee name=t ! queue ! " SINK ("out") " t. ! queue ! h%sparse ! "
      "avdec_h%s ! " SINK ("dec"), c, key, p->cipher, p->auth, c, c);
  recv = start_receiver (desc, &port);
  g_free (desc);

  desc = g_strdup_printf ("videotestsrc num-buffers=%d ! " RAW " ! %s ! "
      "video/x-h%s,stream-format=byte-stream,alignment=au ! tee name=t ! "
      "queue ! " SINK ("enc") " t. ! queue ! rtph%spay pt=%d ssrc=%u "
      "mtu=600 config-interval=-1 ! srtpenc key=%s rtp-cipher=%s "
      "rtp-auth=%s rtcp-cipher=%s rtcp-auth=%s ! udpsink host=127.0.0.1 "
      "port=%d sync=true", FRAMES, h265 ? X265ENC : X264ENC, c, c, PT, SSRC,
      key, p->cipher, p->auth, p->cipher, p->auth, port);
  send = launch (desc);
  g_free (desc);
  run_to_eos (send);
  enc = pull_all (send, "enc");
  stop_pipeline (send);

  finish_receiver (recv);
  out = pull_all (recv, "out");
  dec = pull_all (recv, "dec");

  fail_unless_equals_int (enc->len, FRAMES);
  check_same_aus (enc, out, h265, TRUE);
  fail_unless_equals_int (dec->len, FRAMES);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "access-units"), FRAMES);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "lost"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "malformed"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-auth-failures"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-replays"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-errors"), 0);

  g_ptr_array_unref (enc);
  g_ptr_array_unref (out);
  g_ptr_array_unref (dec);
  stop_pipeline (recv);
  g_free (key);
}

GST_START_TEST (test_to_srtpdec)
{
  to_srtpdec (&profiles[__i__], TRUE);
}

GST_END_TEST;

GST_START_TEST (test_from_srtpenc)
{
  from_srtpenc (&profiles[__i__], TRUE);
}

GST_END_TEST;

GST_START_TEST (test_h264_to_srtpdec)
{
  to_srtpdec (&profiles[P_ICM128_80], FALSE);
}

GST_END_TEST;

/* RTP padding (pad-fragments) inside SRTP, both profiles the bar names */
GST_START_TEST (test_padded_to_srtpdec)
{
  to_srtpdec_full (&profiles[P_GCM128], TRUE, TRUE);
  to_srtpdec_full (&profiles[P_ICM128_80], FALSE, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_h264_from_srtpenc)
{
  from_srtpenc (&profiles[P_GCM128], FALSE);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* (3) uvgrtpsink -> uvgrtpsrc, both SRTP */

static void
roundtrip (const Profile * p, const gchar * send_mode, const gchar * recv_mode)
{
  gchar *key, *desc;
  GstElement *recv, *send;
  GPtrArray *enc, *out, *dec;
  gint port;

  if (!stock_supports (p))
    return;
  key = key_hex (p, 3);
  desc = g_strdup_printf ("uvgrtpsrc name=src address=127.0.0.1 port=0 "
      BIG_BUFFER " recv-mode=%s encoding-name=H265 srtp-key=%s "
      "srtp-cipher=%s srtp-auth=%s ! tee name=t ! queue ! " SINK ("out")
      " t. ! queue ! h265parse ! avdec_h265 ! " SINK ("dec"), recv_mode, key,
      p->cipher, p->auth);
  recv = start_receiver (desc, &port);
  g_free (desc);

  /* the sequence numbers wrap during the stream (roll-over counter 1) */
  desc = g_strdup_printf ("videotestsrc num-buffers=%d ! " RAW " ! "
      X265ENC " ! video/x-h265,stream-format=byte-stream,alignment=au ! "
      "tee name=t ! queue ! " SINK ("enc") " t. ! queue ! uvgrtpsink "
      "name=sink host=127.0.0.1 port=%d mtu=500 seqnum-offset=65500 "
      "send-mode=%s srtp-key=%s srtp-cipher=%s srtp-auth=%s sync=true",
      FRAMES, port, send_mode, key, p->cipher, p->auth);
  send = launch (desc);
  g_free (desc);
  run_to_eos (send);
  enc = pull_all (send, "enc");

  finish_receiver (recv);
  out = pull_all (recv, "out");
  dec = pull_all (recv, "dec");

  fail_unless_equals_int (enc->len, FRAMES);
  check_same_aus (enc, out, TRUE, FALSE);
  fail_unless_equals_int (dec->len, FRAMES);
  fail_unless (stat_u64 (send, "sink", "packets") > 36);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "packets"),
      stat_u64 (send, "sink", "packets"));
  fail_unless_equals_uint64 (stat_u64 (send, "sink", "srtp-errors"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-auth-failures"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-replays"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-errors"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "lost"), 0);

  g_ptr_array_unref (enc);
  g_ptr_array_unref (out);
  g_ptr_array_unref (dec);
  stop_pipeline (send);
  stop_pipeline (recv);
  g_free (key);
}

/* with the send thread: protected batches alternate between two slabs
 * while one is in flight */
GST_START_TEST (test_roundtrip_gso)
{
  roundtrip (&profiles[P_ICM256_32], "gso send-thread=true", "auto");
}

GST_END_TEST;

GST_START_TEST (test_roundtrip_mmsg)
{
  roundtrip (&profiles[P_GCM128], "mmsg", "mmsg");
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* (4) hostile datagrams amid a valid stream */

static GPtrArray *
encode_h265 (void)
{
  GstElement *pipe = launch ("videotestsrc num-buffers=20 ! " RAW " ! "
      X265ENC " ! video/x-h265,stream-format=byte-stream,alignment=au ! "
      SINK ("enc"));
  GPtrArray *enc;

  run_to_eos (pipe);
  enc = pull_all (pipe, "enc");
  stop_pipeline (pipe);
  fail_unless_equals_int (enc->len, 20);
  return enc;
}

/* Sends the access units through uvgrtpsink with SRTP into a plain socket
 * and returns the datagrams, in order, as GBytes. */
static GPtrArray *
capture (GPtrArray * enc, const Profile * p, guint key_seed)
{
  GPtrArray *pkts = g_ptr_array_new_with_free_func (
      (GDestroyNotify) g_bytes_unref);
  GstElement *pipe, *src;
  GstCaps *caps;
  guint8 *buf = g_malloc (65536);
  gchar *key = key_hex (p, key_seed), *desc;
  int fd = udp_socket (), size = 16 << 20;
  guint64 sent;
  gint port;
  guint i;

  setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof (size));
  port = bind_loopback (fd);
  desc = g_strdup_printf ("appsrc name=a format=time ! uvgrtpsink name=sink "
      "host=127.0.0.1 port=%d pt=%d ssrc=%u seqnum-offset=65400 "
      "timestamp-offset=0 mtu=300 srtp-key=%s srtp-cipher=%s srtp-auth=%s "
      "sync=false", port, PT, SSRC, key, p->cipher, p->auth);
  pipe = launch (desc);
  g_free (desc);
  g_free (key);
  src = get_named (pipe, "a");
  caps = gst_caps_from_string ("video/x-h265,stream-format=byte-stream,"
      "alignment=au");
  g_object_set (src, "caps", caps, NULL);
  gst_caps_unref (caps);
  fail_if (gst_element_set_state (pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  for (i = 0; i < enc->len; i++)
    fail_unless (gst_app_src_push_buffer (GST_APP_SRC (src),
            gst_buffer_ref (g_ptr_array_index (enc, i))) == GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_message_unref (wait_message (pipe, GST_MESSAGE_EOS, 30 * GST_SECOND));
  sent = stat_u64 (pipe, "sink", "packets");
  gst_object_unref (src);
  stop_pipeline (pipe);

  while (pkts->len < sent) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    ssize_t n;

    fail_unless (poll (&pfd, 1, 5000) == 1, "only %u of %" G_GUINT64_FORMAT
        " datagrams captured", pkts->len, sent);
    n = recv (fd, buf, 65536, 0);
    fail_unless (n > 0);
    g_ptr_array_add (pkts, g_bytes_new (buf, (gsize) n));
  }
  close (fd);
  g_free (buf);
  return pkts;
}

/* A copy of b with changes: len bytes kept, byte at flip XORed with 0x55
 * (flip < 0: none). */
static GBytes *
altered (GBytes * b, gsize len, gssize flip)
{
  gsize n;
  const guint8 *d = g_bytes_get_data (b, &n);
  guint8 *c = g_memdup2 (d, n);

  fail_unless (len <= n);
  if (flip >= 0)
    c[flip] ^= 0x55;
  return g_bytes_new_take (c, len);
}

static void
hostile (const Profile * p)
{
  GPtrArray *enc, *good, *other, *out;
  GstElement *recv;
  gchar *key, *desc;
  guint64 valid = 0, auth = 0, replays = 0, errors = 0;
  int fd = udp_socket ();
  gint port;
  guint i, n;

  if (!stock_supports (p))
    return;
  enc = encode_h265 ();
  good = capture (enc, p, 4);
  other = capture (enc, p, 5);  /* the same packets under another key */
  n = good->len;
  fail_unless_equals_int (other->len, n);
  fail_unless (n > 200, "only %u packets", n);

  key = key_hex (p, 4);
  desc = g_strdup_printf ("uvgrtpsrc name=src address=127.0.0.1 port=0 "
      BIG_BUFFER " encoding-name=H265 srtp-key=%s srtp-cipher=%s "
      "srtp-auth=%s replay-window-size=64 ! " SINK ("out"), key, p->cipher,
      p->auth);
  recv = start_receiver (desc, &port);
  g_free (desc);
  g_free (key);

  for (i = 0; i < n; i++) {
    GBytes *cur = g_ptr_array_index (good, i), *bad = NULL;
    GBytes *next = i + 1 < n ? g_ptr_array_index (good, i + 1) : NULL;
    gsize next_len = next ? g_bytes_get_size (next) : 0;

    /* before packet i, a forgery of packet i + 1 (not received yet, so
     * only its tag can give it away) */
    if (next) {
      switch (i % 8) {
        case 0:                /* a payload byte flipped */
          bad = altered (next, next_len, next_len / 2);
          break;
        case 1:                /* the RTP timestamp changed */
          bad = altered (next, next_len, 5);
          break;
        case 2:                /* truncated into its tag */
          bad = altered (next, next_len - 3, -1);
          break;
        case 3:                /* protected with another key */
          bad = g_bytes_ref (g_ptr_array_index (other, i + 1));
          break;
        default:
          break;
      }
    }
    if (bad) {
      send_bytes (fd, port, bad);
      g_bytes_unref (bad);
      auth++;
    }

    send_bytes (fd, port, cur);
    valid++;

    switch (i % 8) {
      case 4:                  /* replayed at once */
        send_bytes (fd, port, cur);
        replays++;
        break;
      case 5:                  /* replayed from beyond the window */
        if (i >= 100) {
          send_bytes (fd, port, g_ptr_array_index (good, i - 100));
          replays++;
        }
        break;
      case 6:                  /* too short to be SRTP */
        bad = altered (cur, 8, -1);
        send_bytes (fd, port, bad);
        g_bytes_unref (bad);
        errors++;
        break;
      default:
        break;
    }
  }
  finish_receiver (recv);
  out = pull_all (recv, "out");

  /* every delivered AU is a sent one, whole; nothing else came out */
  check_same_aus (enc, out, TRUE, FALSE);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "packets"), valid);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-auth-failures"),
      auth);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-replays"), replays);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "srtp-errors"), errors);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "access-units"), 20);
  /* rejected datagrams never reached the depayloader */
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "malformed"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "foreign"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "duplicates"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "lost"), 0);
  fail_unless_equals_uint64 (stat_u64 (recv, "src", "dropped"), 0);
  fail_unless (auth > 100 && replays > 50 && errors > 25);

  g_ptr_array_unref (out);
  stop_pipeline (recv);
  g_ptr_array_unref (good);
  g_ptr_array_unref (other);
  g_ptr_array_unref (enc);
  close (fd);
}

GST_START_TEST (test_hostile_icm)
{
  hostile (&profiles[P_ICM128_80]);
}

GST_END_TEST;

GST_START_TEST (test_hostile_gcm)
{
  hostile (&profiles[P_GCM128]);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* (5) configuration errors name the property */

/* Starts desc, expects it to fail with a RESOURCE/SETTINGS error; returns
 * the message. */
static gchar *
start_error (const gchar * desc)
{
  GstElement *pipe = launch (desc);
  GstMessage *msg;
  GError *err = NULL;
  gchar *text;

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  msg = wait_message (pipe, GST_MESSAGE_ERROR, 10 * GST_SECOND);
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (g_error_matches (err, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_SETTINGS), "%s: %s", desc, err->message);
  text = g_strdup (err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  return text;
}

static void
expect_error (const gchar * element, const gchar * props, const gchar * want)
{
  gchar *desc, *msg;

  if (g_str_equal (element, "uvgrtpsink"))
    desc = g_strdup_printf ("fakesrc ! uvgrtpsink "
        "host=127.0.0.1 port=9 %s", props);
  else
    desc = g_strdup_printf ("uvgrtpsrc address=127.0.0.1 port=0 "
        "encoding-name=H265 %s ! fakesink", props);
  msg = start_error (desc);
  fail_unless (strstr (msg, want) != NULL, "%s: '%s' lacks '%s'", desc, msg,
      want);
  g_free (msg);
  g_free (desc);
}

GST_START_TEST (test_config_errors)
{
  static const gchar *const elements[] = { "uvgrtpsink", "uvgrtpsrc" };
  gchar *k28 = key_hex (&profiles[P_GCM128], 6);
  gchar *k30 = key_hex (&profiles[P_ICM128_80], 6), *props;
  guint e;

  for (e = 0; e < G_N_ELEMENTS (elements); e++) {
    const gchar *el = elements[e];

    /* the defaults (aes-128-icm, hmac-sha1-80) with a GCM-sized key */
    props = g_strdup_printf ("srtp-key=%s", k28);
    expect_error (el, props, "srtp-key has 28 bytes; aes-128-icm with "
        "hmac-sha1-80 needs 30 (16-byte key + 14-byte salt)");
    g_free (props);
    props = g_strdup_printf ("srtp-key=%s srtp-cipher=aes-128-gcm "
        "srtp-auth=null", k30);
    expect_error (el, props, "srtp-key has 30 bytes; aes-128-gcm needs 28 "
        "(16-byte key + 12-byte salt)");
    g_free (props);
    props = g_strdup_printf ("srtp-key=%s srtp-cipher=aes-256-icm", k30);
    expect_error (el, props, "srtp-key has 30 bytes; aes-256-icm with "
        "hmac-sha1-80 needs 46 (32-byte key + 14-byte salt)");
    g_free (props);
    /* not hex: a 'g' at digit 7; an odd number of digits */
    props = g_strdup_printf ("srtp-key=%.7sg%s", k30, k30 + 8);
    expect_error (el, props, "srtp-key");
    expect_error (el, props, "'g' at position 7");
    g_free (props);
    props = g_strdup_printf ("srtp-key=%s0", k30);
    expect_error (el, props, "srtp-key");
    g_free (props);
    /* GCM authenticates by itself */
    props = g_strdup_printf ("srtp-key=%s srtp-cipher=aes-128-gcm "
        "srtp-auth=hmac-sha1-80", k28);
    expect_error (el, props, "srtp-auth must be null");
    g_free (props);
    /* no encryption, no authentication: refused */
    props = g_strdup_printf ("srtp-key=%s srtp-auth=null", k30);
    expect_error (el, props, "'srtp-auth'");
    g_free (props);
    props = g_strdup_printf ("srtp-key=%s srtp-cipher=null", k30);
    expect_error (el, props, "'srtp-cipher'");
    g_free (props);
  }
  g_free (k28);
  g_free (k30);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* (6) properties */

static void
check_same_enum (GstElement * ours, const gchar * prop, GstElement * stock,
    const gchar * stock_prop)
{
  GParamSpec *a = g_object_class_find_property (G_OBJECT_GET_CLASS (ours),
      prop);
  GParamSpec *b = g_object_class_find_property (G_OBJECT_GET_CLASS (stock),
      stock_prop);
  GEnumClass *ea, *eb;
  guint i;

  fail_unless (a && b && G_IS_PARAM_SPEC_ENUM (a) && G_IS_PARAM_SPEC_ENUM (b));
  ea = G_PARAM_SPEC_ENUM (a)->enum_class;
  eb = G_PARAM_SPEC_ENUM (b)->enum_class;
  fail_unless_equals_int (ea->n_values, eb->n_values);
  for (i = 0; i < ea->n_values; i++) {
    fail_unless_equals_int (ea->values[i].value, eb->values[i].value);
    fail_unless_equals_string (ea->values[i].value_name,
        eb->values[i].value_name);
    fail_unless_equals_string (ea->values[i].value_nick,
        eb->values[i].value_nick);
  }
  fail_unless_equals_int (G_PARAM_SPEC_ENUM (a)->default_value,
      G_PARAM_SPEC_ENUM (b)->default_value);
}

GST_START_TEST (test_properties)
{
  static const gchar *const names[] = { "uvgrtpsink", "uvgrtpsrc" };
  GstElement *srtpenc = gst_element_factory_make ("srtpenc", NULL);
  guint i;

  fail_unless (srtpenc != NULL);
  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    GstElement *e = gst_element_factory_make (names[i], NULL);
    GstStructure *st = NULL;
    gchar *key = (gchar *) "x";
    guint64 v = 1;

    fail_unless (e != NULL);
    check_same_enum (e, "srtp-cipher", srtpenc, "rtp-cipher");
    check_same_enum (e, "srtp-auth", srtpenc, "rtp-auth");
    g_object_get (e, "srtp-key", &key, NULL);
    fail_unless (key == NULL);
    /* by nick, as on a gst-launch line */
    gst_util_set_object_arg (G_OBJECT (e), "srtp-cipher", "aes-256-gcm");
    gst_util_set_object_arg (G_OBJECT (e), "srtp-auth", "null");
    g_object_set (e, "srtp-key", "00ff", NULL);
    g_object_get (e, "srtp-key", &key, NULL);
    fail_unless_equals_string (key, "00ff");
    g_free (key);

    /* the SRTP counters are there, at 0, without SRTP */
    g_object_get (e, "stats", &st, NULL);
    fail_unless (st != NULL);
    fail_unless (gst_structure_get_uint64 (st, "srtp-errors", &v));
    fail_unless_equals_uint64 (v, 0);
    if (i == 1) {
      v = 1;
      fail_unless (gst_structure_get_uint64 (st, "srtp-auth-failures", &v));
      fail_unless_equals_uint64 (v, 0);
      v = 1;
      fail_unless (gst_structure_get_uint64 (st, "srtp-replays", &v));
      fail_unless_equals_uint64 (v, 0);
    }
    gst_structure_free (st);
    gst_object_unref (e);
  }
  {
    GstElement *src = gst_element_factory_make ("uvgrtpsrc", NULL);
    GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (src),
        "replay-window-size");
    GParamSpecUInt *u;

    fail_unless (ps && G_IS_PARAM_SPEC_UINT (ps));
    u = G_PARAM_SPEC_UINT (ps);
    fail_unless_equals_int (u->default_value, 1024);
    fail_unless_equals_int (u->minimum, 64);
    fail_unless_equals_int (u->maximum, 32767);
    gst_object_unref (src);
  }
  gst_object_unref (srtpenc);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* (7) which libsrtp2 */

GST_START_TEST (test_backend)
{
  /* both plugins in this process: ours, and gst-plugins-bad's srtp with the
   * system's libsrtp2.so.1 */
  GstElement *sink = gst_element_factory_make ("uvgrtpsink", NULL);
  GstElement *srtpenc = gst_element_factory_make ("srtpenc", NULL);
  GstPlugin *plugin;
  const gchar *file;
  GstStructure *stats = NULL;
  const gchar *b;
  void *h, *sys;

  fail_unless (sink != NULL && srtpenc != NULL);
  plugin = gst_registry_find_plugin (gst_registry_get (), "uvgrtp");
  fail_unless (plugin != NULL);
  file = gst_plugin_get_filename (plugin);
  fail_unless (file != NULL);
  h = dlopen (file, RTLD_NOW | RTLD_NOLOAD);
  fail_unless (h != NULL, "%s is not loaded: %s", file, dlerror ());
  sys = dlopen ("libsrtp2.so.1", RTLD_NOW | RTLD_NOLOAD);
  fail_unless (sys != NULL, "srtpenc did not load libsrtp2.so.1");

  /* the plugin exports its entry point and nothing of lib/ */
  fail_unless (dlsym (h, "gst_plugin_uvgrtp_get_desc") != NULL);
  fail_unless (dlsym (h, "urtp_srtp_backend") == NULL);
  fail_unless (dlsym (h, "gst_uvgrtp_srtp_open") == NULL);
  g_object_get (sink, "stats", &stats, NULL);
  fail_unless (stats != NULL);
  b = gst_structure_get_string (stats, "srtp-backend");
  fail_unless (b != NULL, "no srtp-backend in the stats");
  GST_INFO ("plugin: %s (configured: %s)", b, URTP_SRTP_LINKED);
  fail_unless (g_str_has_prefix (b, "libsrtp2 2."), "%s", b);
  if (g_str_equal (URTP_SRTP_LINKED, "private")) {
    fail_unless (strstr (b, " (OpenSSL, built in)") != NULL, "%s", b);
    /* the private copy is not in the plugin's dynamic symbol table, so
     * neither library can bind to the other's functions */
    fail_unless (dlsym (h, "srtp_protect") == NULL);
    fail_unless (dlsym (h, "srtp_init") == NULL);
    fail_unless (dlsym (sys, "srtp_protect") != NULL);
  } else {
    fail_unless_equals_string (URTP_SRTP_LINKED, "system");
    fail_unless (strstr (b, ", libsrtp2.so") != NULL, "%s", b);
    fail_unless (dlsym (h, "srtp_protect") == dlsym (sys, "srtp_protect"));
  }

  gst_structure_free (stats);
  dlclose (sys);
  dlclose (h);
  gst_object_unref (plugin);
  gst_object_unref (srtpenc);
  gst_object_unref (sink);
}

GST_END_TEST;

static Suite *
srtp_suite (void)
{
  Suite *s = suite_create ("srtp");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_backend);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_config_errors);
  tcase_add_loop_test (tc, test_to_srtpdec, 0, G_N_ELEMENTS (profiles));
  tcase_add_loop_test (tc, test_from_srtpenc, 0, G_N_ELEMENTS (profiles));
  tcase_add_test (tc, test_h264_to_srtpdec);
  tcase_add_test (tc, test_h264_from_srtpenc);
  tcase_add_test (tc, test_padded_to_srtpdec);
  tcase_add_test (tc, test_roundtrip_gso);
  tcase_add_test (tc, test_roundtrip_mmsg);
  tcase_add_test (tc, test_hostile_icm);
  tcase_add_test (tc, test_hostile_gcm);
  return s;
}

GST_CHECK_MAIN (srtp);
