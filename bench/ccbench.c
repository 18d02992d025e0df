/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ccbench.c - one side of one flow of the congestion-control benchmark
 * (bench/congestion.py, scripts/bench.sh --congestion): a live x264enc
 * (or x265enc) 720p30 stream whose bitrate the sender's controller sets,
 * and a receiver that decodes it and logs what arrived when.
 *
 *   uvgrtp-ccbench send --path uvgrtp|gccbwe|fixed --host H --port P
 *                       --seconds S --bitrate KBIT [--max-bitrate BIT]
 *                       [--codec h264|h265] [--log FILE]
 *   uvgrtp-ccbench recv --path uvgrtp|rtpbin --port P --feedback ADDR:PORT
 *                       --seconds S [--codec h264|h265] [--log FILE]
 *
 * Paths: uvgrtp: uvgrtpsink congestion-control=gcc adapting x264enc by
 * itself, and uvgrtpsrc answering with transport-wide feedback; gccbwe:
 * rtph264pay + rtphdrexttwcc ! rtpbin with rtpbin's aux sender rtpgccbwe
 * (gst-plugins-rs), its estimated-bitrate wired to x264enc's bitrate by
 * this program, as webrtcsink does; rtpbin at the receiver answering with
 * its TWCC feedback; fixed: uvgrtpsink at --bitrate without congestion
 * control (receiver uvgrtp).
 *
 * RTP goes to H:P and RTCP to H:P+1, sent and received on port P+1 of the
 * sender. The receiver listens on P and P+1 and sends its RTCP (reports,
 * feedback) to --feedback from port P+1.
 *
 * Each access unit leaving the parser gets an SEI (user data unregistered)
 * carrying its number and CLOCK_MONOTONIC time in hexadecimal (no zero
 * bytes: no emulation prevention needed); decoders ignore it. The sides
 * run on one machine (network namespaces share the clock), so the
 * receiver's log gives each picture's delay from the encoder's output.
 *
 * Log lines (times in CLOCK_MONOTONIC microseconds):
 *   send: F <id> <time> <bytes>            an access unit left h264parse
 *         R <time> <encoder kbit/s> <estimate bit/s>    every 200 ms
 *         C <time> <capacity> <pacing> <delivered> <queue us> <raises>
 *           <probes> <overuse cuts> <queue cuts> <competes> <step downs>
 *                                          uvgrtpsink's view, as often
 *   recv: A <id> <time> <sent time> <bytes>  an access unit out of the
 *                                            depayloader
 *         D <time>                         a picture out of the decoder
 * and the sink's or the source's stats as a last line "S <structure>".
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gio/gio.h>
#include <gst/gst.h>

#include "gstbench.h"
#include <gst/rtp/rtp.h>

#define URI_TWCC "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
#define TWCC_ID 5
#define RTP_CAPS "application/x-rtp,media=video,clock-rate=90000,encoding-name=%s," \
  "payload=96,extmap-5=(string)" URI_TWCC

static gboolean h265;           /* --codec h265 */

/* the SEI's UUID: 16 bytes, none zero */
static const guint8 sei_uuid[16] = { 'u', 'v', 'g', 'r', 't', 'p', '-', 'c',
                                     'c', 'b', 'e', 'n', 'c', 'h', '-', '1' };
#define SEI_HEX 32              /* two 64-bit numbers in hexadecimal */

typedef struct {
  const char *cmd, *path, *host, *feedback, *log;
  int port, seconds;
  guint bitrate_kbit;
  guint max_bitrate;
} opts_t;

typedef struct {
  GMutex lock;
  GString *lines;
  guint64 next_id;
} logbuf_t;

static logbuf_t logbuf;

static gint64 now_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void logf_(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void logf_(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_mutex_lock(&logbuf.lock);
  g_string_append_vprintf(logbuf.lines, fmt, ap);
  g_mutex_unlock(&logbuf.lock);
  va_end(ap);
}

static int write_log(const opts_t *o)
{
  FILE *f = o->log ? fopen(o->log, "w") : stdout;
  if (!f) {
    perror(o->log);
    return 1;
  }
  g_mutex_lock(&logbuf.lock);
  fwrite(logbuf.lines->str, 1, logbuf.lines->len, f);
  g_mutex_unlock(&logbuf.lock);
  if (f != stdout)
    fclose(f);
  return 0;
}

/* ---- the stamp ------------------------------------------------------------ */

static GstPadProbeReturn stamp_probe(GstPad *pad, GstPadProbeInfo *info, gpointer user)
{
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
  guint8 sei[6 + 2 + 16 + SEI_HEX + 1];
  guint64 id = logbuf.next_id++;
  gint64 t = now_us();
  char hex[SEI_HEX + 1];

  /* start code, NAL header (H.264's type 6, or H.265's prefix SEI, 39),
   * payload type 5, size, UUID, text, trailing bits */
  gsize h = h265 ? 6 : 5, n = h + 2 + 16 + SEI_HEX + 1;
  memcpy(sei, h265 ? "\0\0\0\1\x4e\x01" : "\0\0\0\1\6", h);
  sei[h] = 5;
  sei[h + 1] = 16 + SEI_HEX;
  memcpy(sei + h + 2, sei_uuid, 16);
  g_snprintf(hex, sizeof hex, "%016" G_GINT64_MODIFIER "x%016" G_GINT64_MODIFIER "x", id,
             (guint64)t);
  memcpy(sei + h + 2 + 16, hex, SEI_HEX);
  sei[n - 1] = 0x80;
  /* 0 in hexadecimal is '0' (0x30): no zero byte anywhere in the payload.
   * An SEI belongs before the picture's first slice (a parser would take
   * one after it for the start of the next access unit): first, or after
   * an access unit delimiter. */
  GstMapInfo m;
  gsize at = 0;
  if (!gst_buffer_map(b, &m, GST_MAP_READ))
    return GST_PAD_PROBE_OK;
  if (m.size > 5 && memcmp(m.data, "\0\0\0\1", 4) == 0 &&
      (h265 ? (m.data[4] >> 1 & 0x3f) == 35 : (m.data[4] & 0x1f) == 9)) {
    for (at = 5; at + 3 < m.size && memcmp(m.data + at, "\0\0\1", 3) != 0; at++)
      ;
    if (at > 5 && m.data[at - 1] == 0)
      at--;                     /* the 4-byte start code's leading zero */
  }
  GstBuffer *out = gst_buffer_new_allocate(NULL, m.size + n, NULL);
  gst_buffer_fill(out, 0, m.data, at);
  gst_buffer_fill(out, at, sei, n);
  gst_buffer_fill(out, at + n, m.data + at, m.size - at);
  gst_buffer_unmap(b, &m);
  gst_buffer_copy_into(out, b, GST_BUFFER_COPY_METADATA, 0, -1);
  gst_buffer_unref(b);
  b = out;
  GST_PAD_PROBE_INFO_DATA(info) = b;
  logf_("F %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GSIZE_FORMAT "\n", id, t,
        gst_buffer_get_size(b));
  return GST_PAD_PROBE_OK;
}

/* The SEI's number and time in an access unit; FALSE without one. */
static gboolean find_stamp(GstBuffer *b, guint64 *id, guint64 *t)
{
  GstMapInfo m;
  gboolean found = FALSE;
  if (!gst_buffer_map(b, &m, GST_MAP_READ))
    return FALSE;
  /* from the payload type on: the same in both codecs */
  for (gsize i = 0; i + 2 + 16 + SEI_HEX <= m.size && !found; i++) {
    if (m.data[i] != 5 || m.data[i + 1] != 16 + SEI_HEX ||
        memcmp(m.data + i + 2, sei_uuid, 16) != 0)
      continue;
    char a[17], c[17];
    memcpy(a, m.data + i + 18, 16);
    memcpy(c, m.data + i + 34, 16);
    a[16] = c[16] = 0;
    *id = g_ascii_strtoull(a, NULL, 16);
    *t = g_ascii_strtoull(c, NULL, 16);
    found = TRUE;
  }
  gst_buffer_unmap(b, &m);
  return found;
}

static GstPadProbeReturn au_probe(GstPad *pad, GstPadProbeInfo *info, gpointer user)
{
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
  guint64 id = 0, t = 0;
  gint64 now = now_us();
  if (find_stamp(b, &id, &t))
    logf_("A %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GSIZE_FORMAT
          "\n", id, now, t, gst_buffer_get_size(b));
  else
    logf_("A -1 %" G_GINT64_FORMAT " 0 %" G_GSIZE_FORMAT "\n", now, gst_buffer_get_size(b));
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn decoded_probe(GstPad *pad, GstPadProbeInfo *info, gpointer user)
{
  logf_("D %" G_GINT64_FORMAT "\n", now_us());
  return GST_PAD_PROBE_OK;
}

static void probe(GstElement *pipe, const char *name, const char *pad, GstPadProbeCallback cb)
{
  GstElement *e = gst_bin_get_by_name(GST_BIN(pipe), name);
  GstPad *p = gst_element_get_static_pad(e, pad);
  gst_pad_add_probe(p, GST_PAD_PROBE_TYPE_BUFFER, cb, NULL, NULL);
  gst_object_unref(p);
  gst_object_unref(e);
}

/* ---- plumbing ------------------------------------------------------------- */

static GstElement *launch(const gchar *desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch(desc, &err);
  if (!p) {
    fprintf(stderr, "ccbench: %s: %s\n", desc, err ? err->message : "?");
    g_clear_error(&err);
  }
  return p;
}

/* One UDP socket on port, given to a udpsrc and a udpsink of the pipeline:
 * RTCP then leaves from the port it arrives on, as the peers and the relay
 * expect. */
static gboolean share_socket(GstElement *pipe, int port, const char *src, const char *sink)
{
  GError *err = NULL;
  GSocket *s = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_DATAGRAM,
                            G_SOCKET_PROTOCOL_UDP, &err);
  GInetAddress *any = g_inet_address_new_any(G_SOCKET_FAMILY_IPV4);
  GSocketAddress *a = g_inet_socket_address_new(any, (guint16)port);
  gboolean ok = s && g_socket_bind(s, a, TRUE, &err);
  if (ok) {
    GstElement *in = gst_bin_get_by_name(GST_BIN(pipe), src);
    GstElement *out = gst_bin_get_by_name(GST_BIN(pipe), sink);
    g_object_set(in, "socket", s, "close-socket", FALSE, NULL);
    g_object_set(out, "socket", s, "close-socket", FALSE, NULL);
    gst_object_unref(in);
    gst_object_unref(out);
  } else {
    fprintf(stderr, "ccbench: port %d: %s\n", port, err ? err->message : "?");
  }
  g_clear_error(&err);
  g_object_unref(a);
  g_object_unref(any);
  if (s)
    g_object_unref(s);         /* the elements hold it */
  return ok;
}

static void set_session(GstElement *pipe)
{
  GstElement *rb = gst_bin_get_by_name(GST_BIN(pipe), "rb");
  rtpbin_session_bandwidth(rb, 30e6);
  gst_object_unref(rb);
}

static gboolean run(GstElement *pipe, int seconds, void (*tick)(GstElement *, gpointer),
                    gpointer user)
{
  GstBus *bus = gst_element_get_bus(pipe);
  gint64 end = now_us() + (gint64)seconds * 1000000, next = now_us();
  gboolean ok = gst_element_set_state(pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
  while (ok && now_us() < end) {
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 20 * GST_MSECOND,
                                               GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (m) {
      if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        GError *e = NULL;
        gst_message_parse_error(m, &e, NULL);
        fprintf(stderr, "ccbench: %s: %s\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e->message);
        g_clear_error(&e);
      }
      ok = FALSE;
      gst_message_unref(m);
    }
    if (tick && now_us() >= next) {
      tick(pipe, user);
      next += 200000;
    }
  }
  gst_object_unref(bus);
  return ok;
}

static void log_stats(GstElement *pipe, const char *name)
{
  GstElement *e = gst_bin_get_by_name(GST_BIN(pipe), name);
  GstStructure *st = NULL;
  if (!e)
    return;
  if (strcmp(name, "rb") == 0) {
    GObject *session = NULL;
    g_signal_emit_by_name(e, "get-internal-session", 0, &session);
    if (session) {
      g_object_get(session, "stats", &st, NULL);
      g_object_unref(session);
    }
  } else {
    g_object_get(e, "stats", &st, NULL);
  }
  if (st) {
    gchar *s = gst_structure_to_string(st);
    logf_("S %s\n", s);
    g_free(s);
    gst_structure_free(st);
  }
  gst_object_unref(e);
}

/* ---- send ----------------------------------------------------------------- */

typedef struct {
  GstElement *enc, *bwe;
  const opts_t *o;
} sender_t;

static void on_estimate(GObject *bwe, GParamSpec *ps, gpointer user)
{
  sender_t *s = user;
  guint est = 0;
  g_object_get(bwe, "estimated-bitrate", &est, NULL);
  /* x264enc's unit: kbit/s */
  g_object_set(s->enc, "bitrate", MAX(est / 1000, 1u), NULL);
}

static GstElement *on_aux_sender(GstElement *rb, guint session, gpointer user)
{
  sender_t *s = user;
  GstElement *bin = gst_bin_new(NULL);
  s->bwe = gst_element_factory_make("rtpgccbwe", "bwe");
  if (!s->bwe)
    return NULL;
  g_object_set(s->bwe, "estimated-bitrate", s->o->bitrate_kbit * 1000, "min-bitrate", 100000,
               "max-bitrate", s->o->max_bitrate, NULL);
  g_signal_connect(s->bwe, "notify::estimated-bitrate", G_CALLBACK(on_estimate), s);
  gst_bin_add(GST_BIN(bin), s->bwe);
  const char *pads[] = { "src", "sink" };
  for (int i = 0; i < 2; i++) {
    GstPad *pad = gst_element_get_static_pad(s->bwe, pads[i]);
    gchar *name = g_strdup_printf("%s_%u", pads[i], session);
    gst_element_add_pad(bin, gst_ghost_pad_new(name, pad));
    g_free(name);
    gst_object_unref(pad);
  }
  return bin;
}

static void send_tick(GstElement *pipe, gpointer user)
{
  sender_t *s = user;
  guint kbit = 0, est = 0;
  g_object_get(s->enc, "bitrate", &kbit, NULL);
  if (s->bwe)
    g_object_get(s->bwe, "estimated-bitrate", &est, NULL);
  else {
    /* and what the controller saw: "C <time> capacity pacing delivered
     * queue-us raises probes overuses queue-cuts competes step-downs" */
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipe), "s");
    GstStructure *st = NULL;
    guint64 cap = 0, pace = 0, deliv = 0, raises = 0, probes = 0, over = 0, qcuts = 0,
            competes = 0, steps = 0;
    gint64 queue = 0;
    g_object_get(sink, "estimated-bitrate", &est, "stats", &st, NULL);
    if (st) {
      gst_structure_get(st, "capacity", G_TYPE_UINT64, &cap, "cc-pacing-rate", G_TYPE_UINT64,
                        &pace, "delivered-bitrate", G_TYPE_UINT64, &deliv, "queue-delay-us",
                        G_TYPE_INT64, &queue, "cc-raises", G_TYPE_UINT64, &raises, "cc-probes",
                        G_TYPE_UINT64, &probes, "cc-overuses", G_TYPE_UINT64, &over,
                        "cc-queue-cuts", G_TYPE_UINT64, &qcuts, "cc-competes", G_TYPE_UINT64,
                        &competes, "cc-step-downs", G_TYPE_UINT64, &steps, NULL);
      gst_structure_free(st);
      logf_("C %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
            " %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
            " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n", now_us(), cap,
            pace, deliv, queue, raises, probes, over, qcuts, competes, steps);
    }
    gst_object_unref(sink);
  }
  logf_("R %" G_GINT64_FORMAT " %u %u\n", now_us(), kbit, est);
}

static int cmd_send(const opts_t *o)
{
  gboolean gcc = strcmp(o->path, "gccbwe") == 0;
  gboolean fixed = strcmp(o->path, "fixed") == 0;
  gchar *tail, *desc;
  sender_t s = { .o = o };

  if (gcc)
    /* rtpbin's pads are linked below, once its aux sender is hooked */
    tail = g_strdup_printf(
        "rtph26%cpay name=pay pt=96 config-interval=-1 rtpbin name=rb rtp-profile=avpf "
        "udpsink name=rtp_out host=%s port=%d sync=false async=false "
        "udpsink name=rtcp_out host=%s port=%d sync=false async=false "
        "udpsrc name=rtcp_in caps=application/x-rtcp",
        h265 ? '5' : '4', o->host, o->port, o->host, o->port + 1);
  else
    tail = g_strdup_printf(
        "uvgrtpsink name=s host=%s port=%d rtcp-bind-port=%d congestion-control=%s %s",
        o->host, o->port, o->port + 1, fixed ? "none" : "gcc",
        fixed ? "" : "rtp-caps=\"application/x-rtp,extmap-5=(string)" URI_TWCC "\"");
  /* a moving test card: x264enc reaches any bitrate asked of it here (a
   * still or simple picture leaves it far below), and its intra pictures
   * are several times the others. x265enc has no VBV property; its own
   * rate control, as webrtcsink leaves it. */
  desc = g_strdup_printf(
      "videotestsrc is-live=true pattern=smpte horizontal-speed=16 ! "
      "video/x-raw,width=1280,height=720,framerate=30/1 ! "
      "%s name=enc tune=zerolatency speed-preset=ultrafast key-int-max=60 %s bitrate=%u ! "
      "h26%cparse config-interval=-1 ! "
      "video/x-h26%c,stream-format=byte-stream,alignment=au ! identity name=stamp %s %s",
      h265 ? "x265enc" : "x264enc", h265 ? "" : "vbv-buf-capacity=120", o->bitrate_kbit,
      h265 ? '5' : '4', h265 ? '5' : '4', gcc ? "" : "!", tail);
  g_free(tail);
  GstElement *pipe = launch(desc);
  g_free(desc);
  if (!pipe)
    return 1;
  s.enc = gst_bin_get_by_name(GST_BIN(pipe), "enc");
  probe(pipe, "stamp", "src", stamp_probe);
  if (gcc) {
    GstElement *pay = gst_bin_get_by_name(GST_BIN(pipe), "pay");
    GstElement *rb = gst_bin_get_by_name(GST_BIN(pipe), "rb");
    GstRTPHeaderExtension *ext = gst_rtp_header_extension_create_from_uri(URI_TWCC);
    if (!ext) {
      fprintf(stderr, "ccbench: no rtphdrexttwcc\n");
      return 1;
    }
    gst_rtp_header_extension_set_id(ext, TWCC_ID);
    g_signal_emit_by_name(pay, "add-extension", ext);
    gst_object_unref(ext);
    g_signal_connect(rb, "request-aux-sender", G_CALLBACK(on_aux_sender), &s);
    gst_object_unref(pay);
    gst_object_unref(rb);
    if (!link_named(pipe, "stamp", "src", "pay", "sink") ||
        !link_named(pipe, "pay", "src", "rb", "send_rtp_sink_0") ||
        !link_named(pipe, "rb", "send_rtp_src_0", "rtp_out", "sink") ||
        !link_named(pipe, "rb", "send_rtcp_src_0", "rtcp_out", "sink") ||
        !link_named(pipe, "rtcp_in", "src", "rb", "recv_rtcp_sink_0") ||
        !share_socket(pipe, o->port + 1, "rtcp_in", "rtcp_out"))
      return 1;
    set_session(pipe);
  } else {
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipe), "s");
    if (o->max_bitrate)
      g_object_set(sink, "max-bitrate", (guint64)o->max_bitrate, NULL);
    /* GstBaseSink's max-bitrate throttles rendering as well: the bound is
     * above anything the path gives */
    gst_object_unref(sink);
  }
  if (gcc && !s.bwe) {
    fprintf(stderr, "ccbench: rtpgccbwe not found (scripts/build-rtp-rs.sh, GST_PLUGIN_PATH)\n");
    return 1;
  }
  gboolean ok = run(pipe, o->seconds, send_tick, &s);
  /* the end: what was encoded goes out (the pacer may hold the last
   * picture; torn down at once, it counted as lost) */
  if (ok) {
    GstBus *bus = gst_element_get_bus(pipe);
    gst_element_send_event(pipe, gst_event_new_eos());
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 3 * GST_SECOND,
                                               GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (m)
      gst_message_unref(m);
    gst_object_unref(bus);
  }
  log_stats(pipe, gcc ? "rb" : "s");
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(s.enc);
  gst_object_unref(pipe);
  return write_log(o) || !ok;
}

/* ---- recv ----------------------------------------------------------------- */

static int cmd_recv(const opts_t *o)
{
  gboolean rtpbin = strcmp(o->path, "rtpbin") == 0;
  char fb_host[64];
  int fb_port = 0;
  const char *colon = o->feedback ? strrchr(o->feedback, ':') : NULL;
  gchar *desc;

  if (!colon || (size_t)(colon - o->feedback) >= sizeof fb_host) {
    fprintf(stderr, "ccbench: --feedback ADDR:PORT\n");
    return 2;
  }
  memcpy(fb_host, o->feedback, (size_t)(colon - o->feedback));
  fb_host[colon - o->feedback] = 0;
  fb_port = atoi(colon + 1);
  /* both hold a picture for a missing packet up to 200 ms (rtpbin's
   * default latency) */
  const char *enc_name = h265 ? "H265" : "H264";
  char c = h265 ? '5' : '4';
  if (rtpbin)
    desc = g_strdup_printf(
        "rtpbin name=rb rtp-profile=avpf latency=200 udpsrc port=%d caps=\"" RTP_CAPS "\" ! "
        "rb.recv_rtp_sink_0 udpsrc name=rtcp_in caps=application/x-rtcp ! rb.recv_rtcp_sink_0 "
        "rb.send_rtcp_src_0 ! udpsink name=rtcp_out host=%s port=%d sync=false async=false "
        "rb. ! rtph26%cdepay ! identity name=au ! h26%cparse ! avdec_h26%c ! "
        "fakesink name=out sync=false",
        o->port, enc_name, fb_host, fb_port, c, c, c);
  else
    desc = g_strdup_printf(
        "uvgrtpsrc name=src port=%d latency=200 rtcp-remote-host=%s rtcp-remote-port=%d "
        "caps=\"" RTP_CAPS "\" ! identity name=au ! h26%cparse ! avdec_h26%c ! "
        "fakesink name=out sync=false",
        o->port, fb_host, fb_port, enc_name, c, c);
  GstElement *pipe = launch(desc);
  g_free(desc);
  if (!pipe)
    return 1;
  if (rtpbin) {
    if (!share_socket(pipe, o->port + 1, "rtcp_in", "rtcp_out"))
      return 1;
  }
  probe(pipe, "au", "src", au_probe);
  probe(pipe, "out", "sink", decoded_probe);
  if (rtpbin) {
    /* the session exists once the pads are asked for: after PAUSED */
    gst_element_set_state(pipe, GST_STATE_PAUSED);
    set_session(pipe);
  }
  gboolean ok = run(pipe, o->seconds, NULL, NULL);
  log_stats(pipe, rtpbin ? "rb" : "src");
  gst_element_set_state(pipe, GST_STATE_NULL);
  gst_object_unref(pipe);
  return write_log(o) || !ok;
}

int main(int argc, char **argv)
{
  opts_t o = { .seconds = 10, .bitrate_kbit = 2048, .max_bitrate = 50000000 };
  static const struct option lo[] = {
    { "path", required_argument, 0, 'p' }, { "host", required_argument, 0, 'h' },
    { "port", required_argument, 0, 'P' }, { "seconds", required_argument, 0, 's' },
    { "bitrate", required_argument, 0, 'b' }, { "max-bitrate", required_argument, 0, 'm' },
    { "feedback", required_argument, 0, 'f' }, { "log", required_argument, 0, 'l' },
    { "codec", required_argument, 0, 'c' }, { 0, 0, 0, 0 },
  };
  int c;

  gst_init(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: uvgrtp-ccbench send|recv [options] (see bench/ccbench.c)\n");
    return 2;
  }
  o.cmd = argv[1];
  optind = 2;
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (c) {
    case 'p': o.path = optarg; break;
    case 'h': o.host = optarg; break;
    case 'P': o.port = atoi(optarg); break;
    case 's': o.seconds = atoi(optarg); break;
    case 'b': o.bitrate_kbit = (guint)atoi(optarg); break;
    case 'm': o.max_bitrate = (guint)strtoul(optarg, NULL, 10); break;
    case 'f': o.feedback = optarg; break;
    case 'l': o.log = optarg; break;
    case 'c':
      if (strcmp(optarg, "h265") != 0 && strcmp(optarg, "h264") != 0)
        return 2;
      h265 = strcmp(optarg, "h265") == 0;
      break;
    default: return 2;
    }
  }
  g_mutex_init(&logbuf.lock);
  logbuf.lines = g_string_sized_new(1 << 20);
  if (!o.path || !o.port)
    return 2;
  if (strcmp(o.cmd, "send") == 0 && o.host)
    return cmd_send(&o);
  if (strcmp(o.cmd, "recv") == 0)
    return cmd_recv(&o);
  fprintf(stderr, "ccbench: send needs --host; recv --feedback\n");
  return 2;
}
