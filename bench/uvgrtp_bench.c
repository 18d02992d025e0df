/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtp_bench.c - one side of a GStreamer RTP benchmark run: uvgrtpsink /
 * uvgrtpsrc against the stock rtph26Xpay ! udpsink / udpsrc ! rtph26Xdepay.
 *
 *   uvgrtp-bench recv --path uvgrtp|stock --port P [--bind ADDR] [common]
 *                     [--echo-host H --echo-port P2]
 *   uvgrtp-bench send --path uvgrtp|stock --host H --port P [common]
 *                     [--fps F (0: as fast as possible)] [--seconds S | --frames N]
 *                     [--file PATH] [--echo-port P2 [--echo-bind ADDR]]
 *                     [--times FILE] [--linger MS]
 *   uvgrtp-bench gen  --frames N --out PATH [common]
 * common: [--codec h264|h265|h266] [--x265 FILE] [--mtu 1400]
 *         [--buffer-size BYTES] [--srtp none|gcm|cm] [--send-mode M] [--recv-mode M]
 *
 * The sender feeds access units from memory through appsrc, as a live
 * encoder would (byte-stream, alignment=au, no parser), each buffer wrapping
 * the generator's memory without a copy; with --file it reads a file written
 * by `gen` through filesrc ! h26Xparse instead. With --fps it paces pushes
 * to that rate; without, it pushes as fast as the pipeline takes them. Sinks
 * never synchronise to the clock.
 *
 * The receiver counts, in a pad probe after the depayloader, access units,
 * bytes, and intact access units: the stamp at the end of each (augen.h)
 * names it, so its size is known and a unit missing any byte is not counted.
 * Loss is access units sent minus intact access units received.
 *
 * With --echo-host the receiver sends every access unit back through the
 * same kind of path (depayloader output straight into a payloader); the
 * sender, given --echo-port, receives them and reports send-to-echo times.
 *
 * With --times FILE, the sender writes a line "index time intra size" per access
 * unit (the time it was due, t0 + index / fps, as a live encoder delivers
 * it, or the time it was pushed without --fps) and the receiver "index
 * time" per intact access unit as it leaves the depayloader, both in
 * seconds of CLOCK_MONOTONIC, which processes in different network
 * namespaces of one host share: one-way latency by joining the two.
 *
 * Both sides print "RESULT key=value ..." (and "STATS <structure>" for the
 * element's own counters); the receiver first prints "READY" and stops after
 * a line "stop" on standard input and 250 ms without an access unit. CPU
 * seconds are getrusage() differences over the measured part only (plugin
 * loading and stream generation excluded). Exit status 3: the requested run
 * is not possible yet (e.g. uvgrtp SRTP before the elements have the
 * properties), with a "PENDING reason" line; 4: unsupported (stock H.266).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include "gstbench.h"

#include "augen.h"

#define SSRC 0x4b1d5eedu
#define PT 96
#define LAT_RING 65536

typedef struct opts {
  const char *path;       /* uvgrtp | stock */
  const char *codec_name;
  augen_codec_t codec;
  const char *host, *bind, *echo_host, *echo_bind;
  int port, echo_port;
  double fps, seconds;
  long frames;
  const char *file, *x265, *out;
  int mtu, buffer_size;
  const char *srtp;       /* none | gcm | cm */
  const char *send_mode, *recv_mode;
  const char *sink_props;      /* extra uvgrtpsink properties (gst-launch syntax) */
  const char *src_props;       /* extra uvgrtpsrc properties */
  int latency;                 /* receiver latency (ms; uvgrtpsrc, rtpbin); < 0: default */
  int rtcp_send_port;          /* where this side's RTCP goes (on --host); 0: default */
  int rtcp_recv_port;          /* where this side reads RTCP; 0: default */
  int linger_ms;               /* the sender stays up this long after EOS */
  const char *times;           /* per-AU times file (see above) */
} opts_t;

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_seconds(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static gboolean is_uvgrtp(const opts_t *o)
{
  return strcmp(o->path, "uvgrtp") == 0;
}

/* The stock path with rtpbin: RTCP, NACKs from rtpjitterbuffer,
 * retransmissions by rtprtxsend / rtprtxreceive (RFC 4588). */
static gboolean is_stock_rtx(const opts_t *o)
{
  return strcmp(o->path, "stock-rtx") == 0;
}

static const char *caps_name(augen_codec_t c)
{
  return c == AUGEN_H264 ? "video/x-h264" : c == AUGEN_H265 ? "video/x-h265" : "video/x-h266";
}

static const char *stock_suffix(augen_codec_t c)
{
  return c == AUGEN_H264 ? "h264" : "h265";
}

/* ---- SRTP ------------------------------------------------------------- */

typedef struct srtp_profile {
  const char *name, *cipher, *auth;
  int key_len;
} srtp_profile_t;

static const srtp_profile_t srtp_profiles[] = {
  { "gcm", "aes-128-gcm", "null", 28 },        /* AEAD_AES_128_GCM */
  { "cm", "aes-128-icm", "hmac-sha1-80", 30 }, /* AES_CM_128_HMAC_SHA1_80 */
};

static const srtp_profile_t *srtp_profile(const opts_t *o)
{
  for (size_t i = 0; i < G_N_ELEMENTS(srtp_profiles); i++)
    if (strcmp(o->srtp, srtp_profiles[i].name) == 0)
      return &srtp_profiles[i];
  return NULL;
}

/* Deterministic key material (master key || salt) as hex. */
static gchar *srtp_key_hex(const srtp_profile_t *p)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; i < p->key_len; i++)
    g_string_append_printf(s, "%02x", (unsigned)((i * 37 + 11) & 0xff));
  return g_string_free(s, FALSE);
}

/* The hook for the uvgrtp elements' SRTP: used as soon as they have
 * srtp-key, srtp-cipher and srtp-auth properties (nicks as srtpenc's). */
static gboolean uvgrtp_srtp_configure(GstElement *e, const srtp_profile_t *p)
{
  GObjectClass *k = G_OBJECT_GET_CLASS(e);
  if (!g_object_class_find_property(k, "srtp-key"))
    return FALSE;
  gchar *key = srtp_key_hex(p);
  gst_util_set_object_arg(G_OBJECT(e), "srtp-key", key);
  g_free(key);
  if (g_object_class_find_property(k, "srtp-cipher"))
    gst_util_set_object_arg(G_OBJECT(e), "srtp-cipher", p->cipher);
  if (g_object_class_find_property(k, "srtp-auth"))
    gst_util_set_object_arg(G_OBJECT(e), "srtp-auth", p->auth);
  return TRUE;
}

/* ---- access units ------------------------------------------------------ */

/* Loads an H.26X byte-stream file (e.g. from x265) as access units through
 * the parser, then lets augen append its stamps. */
static int load_stream_file(augen_t *g, augen_codec_t codec, const char *path)
{
  gchar *desc = g_strdup_printf("filesrc location=\"%s\" ! %sparse ! "
      "%s,stream-format=byte-stream,alignment=au ! appsink name=as sync=false",
      path, stock_suffix(codec), caps_name(codec));
  GError *err = NULL;
  GstElement *p = gst_parse_launch(desc, &err);
  g_free(desc);
  if (!p) {
    fprintf(stderr, "uvgrtp-bench: %s\n", err ? err->message : "parse failed");
    return -1;
  }
  GstElement *as = gst_bin_get_by_name(GST_BIN(p), "as");
  gst_element_set_state(p, GST_STATE_PLAYING);
  GArray *aus = g_array_new(FALSE, FALSE, sizeof(augen_au_t));
  GstSample *s;
  while ((s = gst_app_sink_pull_sample(GST_APP_SINK(as)))) {
    GstBuffer *b = gst_sample_get_buffer(s);
    augen_au_t au;
    au.size = gst_buffer_get_size(b);
    au.data = g_malloc(au.size);
    gst_buffer_extract(b, 0, au.data, au.size);
    au.intra = !GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT);
    g_array_append_val(aus, au);
    gst_sample_unref(s);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(as);
  gst_object_unref(p);
  int r = aus->len ? augen_init_from(g, codec, (augen_au_t *)(void *)aus->data, aus->len) : -EINVAL;
  for (guint i = 0; i < aus->len; i++)
    g_free(g_array_index(aus, augen_au_t, i).data);
  g_array_free(aus, TRUE);
  if (r < 0)
    fprintf(stderr, "uvgrtp-bench: no access units in %s\n", path);
  return r;
}

static int make_stream(augen_t *g, const opts_t *o)
{
  if (o->x265)
    return load_stream_file(g, o->codec, o->x265);
  augen_config_t c;
  augen_config_default(&c, o->codec);
  int r = augen_init(g, &c);
  if (r < 0)
    fprintf(stderr, "uvgrtp-bench: generator: %s\n", strerror(-r));
  return r;
}

/* ---- receive side: counting probe ---------------------------------------- */

typedef struct counter {
  const augen_t *g;
  gint64 aus, bytes, ok, ok_bytes, first_ok_bytes, bad;
  double t_first, t_last;
  /* echo latency (sender side) */
  const double *t_send;
  double *lat;
  size_t nlat, lat_cap;
  /* --times on the receiver: index and arrival of intact access units */
  uint64_t *t_idx;
  double *t_at;
  size_t nt, t_cap;
} counter_t;

static void count_buffer(counter_t *c, GstBuffer *b)
{
  double t = now();
  gsize size = gst_buffer_get_size(b);
  guint8 tail[AUGEN_STAMP_LEN];
  uint64_t idx = 0;
  gboolean ok = size >= AUGEN_STAMP_LEN &&
      gst_buffer_extract(b, size - AUGEN_STAMP_LEN, tail, AUGEN_STAMP_LEN) == AUGEN_STAMP_LEN &&
      augen_read_stamp(tail, &idx) == 0 && augen_size_of(c->g, idx) == size;
  if (c->aus == 0)
    c->t_first = t;
  c->t_last = t;
  /* read by the main thread while streaming */
  __atomic_store_n(&c->aus, c->aus + 1, __ATOMIC_RELAXED);
  c->bytes += (gint64)size;
  if (ok) {
    if (c->ok == 0)
      c->first_ok_bytes = (gint64)size;
    c->ok++;
    c->ok_bytes += (gint64)size;
    if (c->t_send && c->nlat < c->lat_cap)
      c->lat[c->nlat++] = t - c->t_send[idx % LAT_RING];
    if (c->nt < c->t_cap) {
      c->t_idx[c->nt] = idx;
      c->t_at[c->nt++] = t;
    }
  } else {
    c->bad++;
  }
}

static gboolean count_list_item(GstBuffer **b, guint i, gpointer user)
{
  count_buffer(user, *b);
  return TRUE;
}

static GstPadProbeReturn count_probe(GstPad *pad, GstPadProbeInfo *info, gpointer user)
{
  counter_t *c = user;
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER)
    count_buffer(c, GST_PAD_PROBE_INFO_BUFFER(info));
  else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST)
    gst_buffer_list_foreach(GST_PAD_PROBE_INFO_BUFFER_LIST(info), count_list_item, c);
  return GST_PAD_PROBE_OK;
}

static gint64 atomic_aus(counter_t *c)
{
  return __atomic_load_n(&c->aus, __ATOMIC_RELAXED);
}

/* Receive pipeline: source ! depayloader (named "tap") ! tail. */
static gchar *recv_desc(const opts_t *o, const char *bind, int port, const char *tail)
{
  const char *cn = augen_codec_name(o->codec);
  if (is_uvgrtp(o)) {
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "uvgrtpsrc name=tap address=%s port=%d encoding-name=%s "
        "buffer-size=%d", bind, port, cn, o->buffer_size);
    if (o->recv_mode)
      g_string_append_printf(s, " recv-mode=%s", o->recv_mode);
    if (o->latency >= 0)
      g_string_append_printf(s, " latency=%d", o->latency);
    if (o->rtcp_recv_port)
      g_string_append_printf(s, " rtcp-port=%d", o->rtcp_recv_port);
    if (o->src_props)
      g_string_append_printf(s, " %s", o->src_props);
    g_string_append_printf(s, " ! %s", tail);
    return g_string_free(s, FALSE);
  }
  if (is_stock_rtx(o))
    /* linked by rtpbin_hook once rtpbin's signals are connected */
    return g_strdup_printf("rtpbin name=rb latency=%d do-retransmission=true rtp-profile=avpf "
        "udpsrc name=rtp_in address=%s port=%d buffer-size=%d caps=\"application/x-rtp,"
        "media=(string)video,clock-rate=(int)90000,encoding-name=(string)%s,payload=(int)%d,"
        "rtcp-fb-nack=(boolean)true,rtcp-fb-nack-pli=(boolean)true\" "
        "udpsrc name=rtcp_in address=%s port=%d "
        "udpsink name=rtcp_out host=%s port=%d sync=false async=false "
        "rtp%sdepay name=tap ! %s,stream-format=byte-stream,alignment=au ! %s",
        o->latency >= 0 ? o->latency : 200, bind, port, o->buffer_size, cn, PT, bind,
        o->rtcp_recv_port ? o->rtcp_recv_port : port + 1, o->host,
        o->rtcp_send_port ? o->rtcp_send_port : port + 5, stock_suffix(o->codec),
        caps_name(o->codec), tail);
  const srtp_profile_t *sp = srtp_profile(o);
  gchar *caps, *dec = g_strdup("");
  if (sp) {
    gchar *key = srtp_key_hex(sp);
    caps = g_strdup_printf("application/x-srtp,media=(string)video,clock-rate=(int)90000,"
        "encoding-name=(string)%s,payload=(int)%d,ssrc=(uint)%u,srtp-key=(buffer)%s,"
        "srtp-cipher=(string)%s,srtp-auth=(string)%s,srtcp-cipher=(string)%s,"
        "srtcp-auth=(string)%s,roc=(uint)0", cn, PT, SSRC, key, sp->cipher, sp->auth,
        sp->cipher, sp->auth);
    g_free(key);
    g_free(dec);
    dec = g_strdup("srtpdec replay-window-size=32767 ! ");
  } else {
    caps = g_strdup_printf("application/x-rtp,media=(string)video,clock-rate=(int)90000,"
        "encoding-name=(string)%s,payload=(int)%d", cn, PT);
  }
  gchar *d = g_strdup_printf("udpsrc address=%s port=%d buffer-size=%d caps=\"%s\" ! %s"
      "rtp%sdepay name=tap ! %s,stream-format=byte-stream,alignment=au ! %s",
      bind, port, o->buffer_size, caps, dec, stock_suffix(o->codec), caps_name(o->codec), tail);
  g_free(caps);
  g_free(dec);
  return d;
}

/* Send tail: payloader (if stock) and UDP sink, as text for gst_parse_launch. */
static gchar *send_tail(const opts_t *o, const char *host, int port)
{
  if (is_uvgrtp(o)) {
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "uvgrtpsink name=sink host=%s port=%d mtu=%d pt=%d ssrc=%u "
        "buffer-size=%d sync=false async=false", host, port, o->mtu, PT, SSRC, o->buffer_size);
    if (o->send_mode)
      g_string_append_printf(s, " send-mode=%s", o->send_mode);
    if (o->rtcp_send_port)
      g_string_append_printf(s, " rtcp-port=%d", o->rtcp_send_port);
    if (o->rtcp_recv_port)
      g_string_append_printf(s, " rtcp-bind-port=%d", o->rtcp_recv_port);
    if (o->sink_props)
      g_string_append_printf(s, " %s", o->sink_props);
    return g_string_free(s, FALSE);
  }
  if (is_stock_rtx(o))
    /* the payloader first (appsrc links to it), the rest linked by
     * rtpbin_hook */
    return g_strdup_printf("rtp%spay name=pay mtu=%d pt=%d ssrc=%u config-interval=0 "
        "rtpbin name=rb rtp-profile=avpf "
        "udpsink name=sink host=%s port=%d buffer-size=%d sync=false async=false "
        "udpsink name=rtcp_out host=%s port=%d sync=false async=false "
        "udpsrc name=rtcp_in port=%d", stock_suffix(o->codec), o->mtu, PT, SSRC, host, port,
        o->buffer_size, host, o->rtcp_send_port ? o->rtcp_send_port : port + 1,
        o->rtcp_recv_port ? o->rtcp_recv_port : port + 5);
  const srtp_profile_t *sp = srtp_profile(o);
  gchar *enc = g_strdup("");
  if (sp) {
    gchar *key = srtp_key_hex(sp);
    g_free(enc);
    enc = g_strdup_printf("srtpenc key=%s rtp-cipher=%s rtp-auth=%s rtcp-cipher=%s "
        "rtcp-auth=%s ! ", key, sp->cipher, sp->auth, sp->cipher, sp->auth);
    g_free(key);
  }
  gchar *d = g_strdup_printf("rtp%spay mtu=%d pt=%d ssrc=%u config-interval=0 ! %s"
      "udpsink name=sink host=%s port=%d buffer-size=%d sync=false async=false",
      stock_suffix(o->codec), o->mtu, PT, SSRC, enc, host, port, o->buffer_size);
  g_free(enc);
  return d;
}

static GstElement *launch(const gchar *desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch(desc, &err);
  if (!p || err) {
    fprintf(stderr, "uvgrtp-bench: pipeline \"%s\": %s\n", desc, err ? err->message : "?");
    if (err)
      g_error_free(err);
    if (p)
      gst_object_unref(p);
    return NULL;
  }
  return p;
}

static void attach_counter(GstElement *pipe, counter_t *c)
{
  GstElement *tap = gst_bin_get_by_name(GST_BIN(pipe), "tap");
  GstPad *pad = gst_element_get_static_pad(tap, "src");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
      count_probe, c, NULL);
  gst_object_unref(pad);
  gst_object_unref(tap);
}

/* Prints an element's "stats" structure, if it has one. */
static void print_stats(GstElement *pipe, const char *name, const char *label)
{
  GstElement *e = gst_bin_get_by_name(GST_BIN(pipe), name);
  if (!e)
    return;
  if (g_object_class_find_property(G_OBJECT_GET_CLASS(e), "stats")) {
    GstStructure *st = NULL;
    g_object_get(e, "stats", &st, NULL);
    if (st) {
      gchar *s = gst_structure_to_string(st);
      printf("STATS %s %s\n", label, s);
      g_free(s);
      gst_structure_free(st);
    }
  }
  gst_object_unref(e);
}

/* Kernel receive buffer of a udpsrc, to show both paths got the same. */
static int udpsrc_rcvbuf(GstElement *pipe)
{
  int v = -1;
  GstIterator *it = gst_bin_iterate_sources(GST_BIN(pipe));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    GstElement *e = g_value_get_object(&item);
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(e), "used-socket")) {
      GSocket *sock = NULL;
      g_object_get(e, "used-socket", &sock, NULL);
      if (sock) {
        socklen_t l = sizeof v;
        getsockopt(g_socket_get_fd(sock), SOL_SOCKET, SO_RCVBUF, &v, &l);
        g_object_unref(sock);
      }
    }
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  return v;
}

static gboolean bus_error(GstElement *pipe, GstClockTime timeout, gboolean want_eos)
{
  GstBus *bus = gst_element_get_bus(pipe);
  GstMessageType types = GST_MESSAGE_ERROR | (want_eos ? GST_MESSAGE_EOS : 0);
  GstMessage *m = gst_bus_timed_pop_filtered(bus, timeout, types);
  gst_object_unref(bus);
  if (!m)
    return want_eos;   /* timeout: no EOS is an error when waiting for one */
  gboolean bad = GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR;
  if (bad) {
    GError *e = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error(m, &e, &dbg);
    fprintf(stderr, "uvgrtp-bench: error from %s: %s (%s)\n", GST_OBJECT_NAME(m->src),
        e->message, dbg ? dbg : "");
    g_error_free(e);
    g_free(dbg);
  }
  gst_message_unref(m);
  return bad;
}

static int check_supported(const opts_t *o)
{
  if (!is_uvgrtp(o) && o->codec == AUGEN_H266) {
    printf("UNSUPPORTED %s has no RTP payloader for H.266\n", gst_version_string());
    return 4;
  }
  if (is_uvgrtp(o) && srtp_profile(o)) {
    GstElementFactory *f = gst_element_factory_find("uvgrtpsink");
    gboolean has = FALSE;
    if (f) {
      GstElement *e = gst_element_factory_create(f, NULL);
      if (e) {
        has = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "srtp-key") != NULL;
        gst_object_unref(e);
      }
      gst_object_unref(f);
    }
    if (!has) {
      printf("PENDING uvgrtpsink has no srtp-key property yet\n");
      return 3;
    }
  }
  if (is_uvgrtp(o) && !gst_element_factory_find("uvgrtpsink")) {
    printf("PENDING uvgrtp elements not found (GST_PLUGIN_PATH?)\n");
    return 3;
  }
  return 0;
}

static void configure_srtp_elements(GstElement *pipe, const opts_t *o)
{
  const srtp_profile_t *sp = srtp_profile(o);
  if (!sp || !is_uvgrtp(o))
    return;
  const char *names[] = { "sink", "tap" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    GstElement *e = gst_bin_get_by_name(GST_BIN(pipe), names[i]);
    if (e) {
      if (g_str_has_prefix(GST_OBJECT_NAME(gst_element_get_factory(e)), "uvgrtp"))
        uvgrtp_srtp_configure(e, sp);
      gst_object_unref(e);
    }
  }
}

/* ---- stock-rtx: rtpbin with rtprtxsend / rtprtxreceive ------------------- */

/* rtpbin's aux elements (RFC 4588, SSRC-multiplexed): a bin with the
 * element and ghost pads sink_N / src_N, payload type 96 -> 97. */
static GstElement *make_aux(guint session, const char *factory)
{
  GstElement *bin = gst_bin_new(NULL), *rtx = gst_element_factory_make(factory, "rtx");
  if (!rtx)
    return NULL;
  GstStructure *map = gst_structure_new("application/x-rtp-pt-map", "96", G_TYPE_UINT, 97, NULL);
  g_object_set(rtx, "payload-type-map", map, NULL);
  gst_structure_free(map);
  if (strcmp(factory, "rtprtxsend") == 0)
    g_object_set(rtx, "max-size-time", 1000, "max-size-packets", 0, NULL);
  gst_bin_add(GST_BIN(bin), rtx);
  const char *pads[] = { "src", "sink" };
  for (int i = 0; i < 2; i++) {
    GstPad *pad = gst_element_get_static_pad(rtx, pads[i]);
    gchar *name = g_strdup_printf("%s_%u", pads[i], session);
    gst_element_add_pad(bin, gst_ghost_pad_new(name, pad));
    g_free(name);
    gst_object_unref(pad);
  }
  return bin;
}

static GstElement *on_aux_receiver(GstElement *rb, guint session, gpointer user)
{
  return make_aux(session, "rtprtxreceive");
}

static GstElement *on_aux_sender(GstElement *rb, guint session, gpointer user)
{
  return make_aux(session, "rtprtxsend");
}

static void on_pad_added(GstElement *rb, GstPad *pad, gpointer user)
{
  GstElement *tap = user;
  gchar *name = gst_pad_get_name(pad);
  if (g_str_has_prefix(name, "recv_rtp_src_")) {
    GstPad *sink = gst_element_get_static_pad(tap, "sink");
    if (!gst_pad_is_linked(sink))
      gst_pad_link(pad, sink);
    gst_object_unref(sink);
  }
  g_free(name);
}

/* Connects rtpbin's aux signals, then requests its pads by linking them
 * (the signals fire as the pads are made). */
static gboolean rtpbin_hook(GstElement *pipe, gboolean sender)
{
  GstElement *rb = gst_bin_get_by_name(GST_BIN(pipe), "rb");
  gboolean ok;
  if (sender) {
    g_signal_connect(rb, "request-aux-sender", G_CALLBACK(on_aux_sender), NULL);
    ok = link_named(pipe, "pay", "src", "rb", "send_rtp_sink_0") &&
         link_named(pipe, "rb", "send_rtp_src_0", "sink", "sink") &&
         link_named(pipe, "rb", "send_rtcp_src_0", "rtcp_out", "sink") &&
         link_named(pipe, "rtcp_in", "src", "rb", "recv_rtcp_sink_0");
  } else {
    GstElement *tap = gst_bin_get_by_name(GST_BIN(pipe), "tap");
    g_signal_connect(rb, "request-aux-receiver", G_CALLBACK(on_aux_receiver), NULL);
    g_signal_connect_data(rb, "pad-added", G_CALLBACK(on_pad_added), tap,
        (GClosureNotify)(void (*)(void))gst_object_unref, 0);
    ok = link_named(pipe, "rtp_in", "src", "rb", "recv_rtp_sink_0") &&
         link_named(pipe, "rtcp_in", "src", "rb", "recv_rtcp_sink_0") &&
         link_named(pipe, "rb", "send_rtcp_src_0", "rtcp_out", "sink");
  }
  rtpbin_session_bandwidth(rb, 200e6);
  gst_object_unref(rb);
  return ok;
}

/* rtprtxsend's counts: "RTX packets=N requests=M mean_packet=MTU" (its
 * packets are nearly all full-size fragments of the pictures). */
static void print_rtx(GstElement *pipe, const opts_t *o)
{
  GstElement *rtx = gst_bin_get_by_name(GST_BIN(pipe), "rtx");
  if (!rtx)
    return;
  guint packets = 0, requests = 0;
  g_object_get(rtx, "num-rtx-packets", &packets, "num-rtx-requests", &requests, NULL);
  printf("RTX packets=%u requests=%u mean_packet=%d\n", packets, requests, o->mtu);
  gst_object_unref(rtx);
}

/* ---- recv ---------------------------------------------------------------- */

static int cmd_recv(const opts_t *o)
{
  int r = check_supported(o);
  if (r)
    return r;
  augen_t g;
  if (make_stream(&g, o) < 0)
    return 1;
  gchar *tail;
  if (o->echo_host) {
    opts_t eo = *o;
    tail = send_tail(&eo, o->echo_host, o->echo_port);
  } else {
    tail = g_strdup("fakesink name=sink sync=false async=false enable-last-sample=false");
  }
  gchar *desc = recv_desc(o, o->bind, o->port, tail);
  g_free(tail);
  GstElement *pipe = launch(desc);
  g_free(desc);
  if (!pipe)
    return 1;
  if (is_stock_rtx(o) && !rtpbin_hook(pipe, FALSE))
    return 1;
  configure_srtp_elements(pipe, o);
  counter_t c;
  memset(&c, 0, sizeof c);
  c.g = &g;
  if (o->times) {
    c.t_cap = 1 << 20;
    c.t_idx = g_new(uint64_t, c.t_cap);
    c.t_at = g_new(double, c.t_cap);
  }
  attach_counter(pipe, &c);
  if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    bus_error(pipe, 0, FALSE);
    fprintf(stderr, "uvgrtp-bench: receiver failed to start\n");
    return 1;
  }
  gst_element_get_state(pipe, NULL, NULL, 2 * GST_SECOND);
  printf("READY %d\n", o->port);
  fflush(stdout);
  double cpu0 = cpu_seconds();
  gboolean stopping = FALSE, failed = FALSE;
  gint64 last = -1;
  double last_change = now();
  for (;;) {
    struct pollfd pfd = { 0, POLLIN, 0 };
    int pr = stopping ? 0 : poll(&pfd, 1, 50);
    if (stopping)
      g_usleep(50000);
    if (!stopping && pr > 0) {
      char line[64];
      if (!fgets(line, sizeof line, stdin) || strncmp(line, "stop", 4) == 0)
        stopping = TRUE;
    }
    if (bus_error(pipe, 0, FALSE)) {
      failed = TRUE;
      break;
    }
    gint64 n = atomic_aus(&c);
    if (n != last) {
      last = n;
      last_change = now();
    }
    if (stopping && now() - last_change > 0.25)
      break;
  }
  double cpu = cpu_seconds() - cpu0;
  int rcvbuf = udpsrc_rcvbuf(pipe);
  print_stats(pipe, "tap", "recv");
  print_stats(pipe, "sink", "echo");
  gst_element_set_state(pipe, GST_STATE_NULL);
  printf("RESULT role=recv path=%s codec=%s aus=%" G_GINT64_FORMAT " bytes=%" G_GINT64_FORMAT
      " ok=%" G_GINT64_FORMAT " ok_bytes=%" G_GINT64_FORMAT " first_ok_bytes=%" G_GINT64_FORMAT
      " bad=%" G_GINT64_FORMAT " seconds=%.6f cpu=%.4f rcvbuf=%d failed=%d\n",
      o->path, augen_codec_name(o->codec), c.aus, c.bytes, c.ok, c.ok_bytes, c.first_ok_bytes,
      c.bad, c.aus > 1 ? c.t_last - c.t_first : 0.0, cpu, rcvbuf, failed);
  fflush(stdout);
  gst_object_unref(pipe);
  augen_free(&g);
  if (o->times) {
    FILE *f = fopen(o->times, "w");
    for (size_t i = 0; f && i < c.nt; i++)
      fprintf(f, "%" G_GUINT64_FORMAT " %.9f\n", c.t_idx[i], c.t_at[i]);
    if (!f || fclose(f) != 0)
      failed = TRUE;
    g_free(c.t_idx);
    g_free(c.t_at);
  }
  return failed ? 1 : 0;
}

/* ---- send ---------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
  if (!n)
    return 0;
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return v[i < n ? i : n - 1];
}

static void sleep_until(double t)
{
  double d = t - now();
  if (d <= 0)
    return;
  struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
  nanosleep(&ts, NULL);
}

static int cmd_send(const opts_t *o)
{
  int r = check_supported(o);
  if (r)
    return r;
  augen_t g;
  if (make_stream(&g, o) < 0)
    return 1;

  gchar *tail = send_tail(o, o->host, o->port);
  gchar *desc;
  if (o->file)
    desc = g_strdup_printf("filesrc location=\"%s\" ! %sparse ! %s,stream-format=byte-stream,"
        "alignment=au ! %s", o->file, stock_suffix(o->codec), caps_name(o->codec), tail);
  else
    desc = g_strdup_printf("appsrc name=src ! %s", tail);
  g_free(tail);
  GstElement *pipe = launch(desc);
  g_free(desc);
  if (!pipe)
    return 1;
  if (is_stock_rtx(o) && !rtpbin_hook(pipe, TRUE))
    return 1;
  configure_srtp_elements(pipe, o);

  /* echo receiver, for latency */
  GstElement *echo = NULL;
  counter_t ec;
  memset(&ec, 0, sizeof ec);
  double *t_send = NULL;
  if (o->echo_port) {
    gchar *ed = recv_desc(o, o->echo_bind, o->echo_port,
        "fakesink sync=false async=false enable-last-sample=false");
    echo = launch(ed);
    g_free(ed);
    if (!echo)
      return 1;
    configure_srtp_elements(echo, o);
    t_send = g_new0(double, LAT_RING);
    ec.g = &g;
    ec.t_send = t_send;
    ec.lat_cap = 1 << 20;
    ec.lat = g_new(double, ec.lat_cap);
    attach_counter(echo, &ec);
    if (gst_element_set_state(echo, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      bus_error(echo, 0, FALSE);
      return 1;
    }
    gst_element_get_state(echo, NULL, NULL, 2 * GST_SECOND);
  }

  GstElement *src = gst_bin_get_by_name(GST_BIN(pipe), "src");
  if (src) {
    GstCaps *caps = gst_caps_new_simple(caps_name(o->codec), "stream-format", G_TYPE_STRING,
        "byte-stream", "alignment", G_TYPE_STRING, "au", "width", G_TYPE_INT, 3840, "height",
        G_TYPE_INT, 2160, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
    g_object_set(src, "caps", caps, "format", GST_FORMAT_TIME, "is-live", FALSE, "block", TRUE,
        "max-bytes", (guint64)(2 * g.max_size), NULL);
    gst_caps_unref(caps);
  }
  if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    bus_error(pipe, 0, FALSE);
    fprintf(stderr, "uvgrtp-bench: sender failed to start\n");
    return 1;
  }

  double cpu0 = cpu_seconds();
  double t0 = now();
  uint64_t k = 0, bytes = 0;
  gboolean failed = FALSE;
  FILE *times = o->times ? fopen(o->times, "w") : NULL;
  if (o->times && !times) {
    fprintf(stderr, "uvgrtp-bench: cannot write %s\n", o->times);
    return 1;
  }
  if (src) {
    double nominal = o->fps > 0 ? o->fps : 30.0;
    for (;; k++) {
      if (o->frames > 0 ? k >= (uint64_t)o->frames : now() - t0 >= o->seconds)
        break;
      if (o->fps > 0)
        sleep_until(t0 + (double)k / o->fps);
      augen_au_t *au = &g.aus[k % g.n];
      augen_stamp(au->data, au->size, k);
      GstBuffer *b = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, au->data, au->size,
          0, au->size, NULL, NULL);
      GST_BUFFER_PTS(b) = (GstClockTime)((double)k * GST_SECOND / nominal);
      GST_BUFFER_DURATION(b) = (GstClockTime)(GST_SECOND / nominal);
      if (k % g.n != 0)
        GST_BUFFER_FLAG_SET(b, GST_BUFFER_FLAG_DELTA_UNIT);
      bytes += au->size;
      if (t_send)
        t_send[k % LAT_RING] = now();
      if (times)
        fprintf(times, "%" G_GUINT64_FORMAT " %.9f %d %zu\n", k,
            o->fps > 0 ? t0 + (double)k / o->fps : now(), au->intra ? 1 : 0, au->size);
      if (gst_app_src_push_buffer(GST_APP_SRC(src), b) != GST_FLOW_OK) {
        failed = TRUE;
        break;
      }
      if ((k & 63) == 0 && bus_error(pipe, 0, FALSE)) {
        failed = TRUE;
        break;
      }
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
  }
  /* rtpbin's EOS waits for its RTCP (a BYE, its timing): seen once not to
   * come at all; the media has left by then, so only errors count */
  if (!failed && (is_stock_rtx(o) ? bus_error(pipe, 5 * GST_SECOND, FALSE)
                                  : bus_error(pipe, 120 * GST_SECOND, TRUE)))
    failed = TRUE;
  double secs = now() - t0;
  double cpu = cpu_seconds() - cpu0;
  if (!src) {
    /* file: the parser's output was counted by nobody; the frames are known */
    k = (uint64_t)o->frames;
    for (uint64_t i = 0; i < k; i++)
      bytes += augen_size_of(&g, i);
  }
  /* as a live sender would, it still answers NACKs for the last pictures */
  if (o->linger_ms > 0)
    g_usleep((gulong)o->linger_ms * 1000);
  print_stats(pipe, "sink", "send");
  print_rtx(pipe, o);
  if (times && fclose(times) != 0)
    failed = TRUE;

  if (echo) {
    /* wait for the last echoes */
    gint64 last = -1;
    double last_change = now();
    while (now() - last_change < 0.3 && now() - t0 < secs + 10) {
      gint64 n = atomic_aus(&ec);
      if (n != last) {
        last = n;
        last_change = now();
      }
      g_usleep(20000);
    }
    gst_element_set_state(echo, GST_STATE_NULL);
    qsort(ec.lat, ec.nlat, sizeof(double), cmp_double);
    double sum = 0;
    for (size_t i = 0; i < ec.nlat; i++)
      sum += ec.lat[i];
    printf("RESULT role=echo echoed=%zu echo_bad=%" G_GINT64_FORMAT " lat_mean_ms=%.4f "
        "lat_p50_ms=%.4f lat_p90_ms=%.4f lat_p99_ms=%.4f lat_min_ms=%.4f lat_max_ms=%.4f\n",
        ec.nlat, ec.bad, ec.nlat ? 1e3 * sum / (double)ec.nlat : 0.0,
        1e3 * pct(ec.lat, ec.nlat, 0.5), 1e3 * pct(ec.lat, ec.nlat, 0.9),
        1e3 * pct(ec.lat, ec.nlat, 0.99), 1e3 * pct(ec.lat, ec.nlat, 0.0),
        1e3 * pct(ec.lat, ec.nlat, 1.0));
    gst_object_unref(echo);
    g_free(ec.lat);
    g_free(t_send);
  }
  gst_element_set_state(pipe, GST_STATE_NULL);
  printf("RESULT role=send path=%s codec=%s aus=%" G_GUINT64_FORMAT " bytes=%" G_GUINT64_FORMAT
      " seconds=%.6f cpu=%.4f failed=%d\n", o->path, augen_codec_name(o->codec), k, bytes, secs,
      cpu, failed);
  fflush(stdout);
  if (src)
    gst_object_unref(src);
  gst_object_unref(pipe);
  augen_free(&g);
  return failed ? 1 : 0;
}

/* ---- gen ----------------------------------------------------------------- */

static int cmd_gen(const opts_t *o)
{
  if (!o->out || o->frames <= 0) {
    fprintf(stderr, "uvgrtp-bench gen: needs --out and --frames\n");
    return 2;
  }
  augen_t g;
  if (make_stream(&g, o) < 0)
    return 1;
  FILE *f = fopen(o->out, "wb");
  if (!f) {
    perror(o->out);
    return 1;
  }
  for (long k = 0; k < o->frames; k++) {
    augen_au_t *au = &g.aus[(size_t)k % g.n];
    augen_stamp(au->data, au->size, (uint64_t)k);
    if (fwrite(au->data, 1, au->size, f) != au->size) {
      perror(o->out);
      fclose(f);
      return 1;
    }
  }
  if (fclose(f) != 0) {
    perror(o->out);
    return 1;
  }
  printf("RESULT role=gen frames=%ld distinct=%zu mean_au=%.0f max_au=%zu\n", o->frames, g.n,
      (double)g.total / (double)g.n, g.max_size);
  augen_free(&g);
  return 0;
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: uvgrtp-bench recv|send|gen [options]\n");
    return 2;
  }
  gst_init(NULL, NULL);
  opts_t o = {
    .path = "uvgrtp", .codec_name = "h265", .host = "127.0.0.1", .bind = "0.0.0.0",
    .echo_bind = "0.0.0.0", .seconds = 2.0, .mtu = 1400, .buffer_size = 128 << 20,
    .srtp = "none", .latency = -1,
  };
  static const struct option lo[] = {
    { "path", required_argument, 0, 'P' }, { "codec", required_argument, 0, 'c' },
    { "host", required_argument, 0, 'h' }, { "port", required_argument, 0, 'p' },
    { "bind", required_argument, 0, 'b' }, { "echo-host", required_argument, 0, 'E' },
    { "echo-port", required_argument, 0, 'e' }, { "echo-bind", required_argument, 0, 'B' },
    { "fps", required_argument, 0, 'f' }, { "seconds", required_argument, 0, 's' },
    { "frames", required_argument, 0, 'n' }, { "file", required_argument, 0, 'F' },
    { "x265", required_argument, 0, 'x' }, { "out", required_argument, 0, 'o' },
    { "mtu", required_argument, 0, 'm' }, { "buffer-size", required_argument, 0, 'z' },
    { "srtp", required_argument, 0, 'S' }, { "send-mode", required_argument, 0, 'M' },
    { "recv-mode", required_argument, 0, 'R' }, { "sink-props", required_argument, 0, 'K' },
    { "times", required_argument, 0, 'T' }, { "src-props", required_argument, 0, 'Q' },
    { "latency", required_argument, 0, 'L' }, { "rtcp-send-port", required_argument, 0, 'O' },
    { "rtcp-recv-port", required_argument, 0, 'I' }, { "linger", required_argument, 0, 'G' },
    { 0, 0, 0, 0 },
  };
  int c;
  optind = 2;
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (c) {
    case 'P': o.path = optarg; break;
    case 'c': o.codec_name = optarg; break;
    case 'h': o.host = optarg; break;
    case 'p': o.port = atoi(optarg); break;
    case 'b': o.bind = optarg; break;
    case 'E': o.echo_host = optarg; break;
    case 'e': o.echo_port = atoi(optarg); break;
    case 'B': o.echo_bind = optarg; break;
    case 'f': o.fps = atof(optarg); break;
    case 's': o.seconds = atof(optarg); break;
    case 'n': o.frames = atol(optarg); break;
    case 'F': o.file = optarg; break;
    case 'x': o.x265 = optarg; break;
    case 'o': o.out = optarg; break;
    case 'm': o.mtu = atoi(optarg); break;
    case 'z': o.buffer_size = atoi(optarg); break;
    case 'S': o.srtp = optarg; break;
    case 'M': o.send_mode = optarg; break;
    case 'R': o.recv_mode = optarg; break;
    case 'K': o.sink_props = optarg; break;
    case 'T': o.times = optarg; break;
    case 'Q': o.src_props = optarg; break;
    case 'L': o.latency = atoi(optarg); break;
    case 'O': o.rtcp_send_port = atoi(optarg); break;
    case 'I': o.rtcp_recv_port = atoi(optarg); break;
    case 'G': o.linger_ms = atoi(optarg); break;
    default: return 2;
    }
  }
  if (augen_codec_parse(o.codec_name, &o.codec) < 0 ||
      (strcmp(o.path, "uvgrtp") != 0 && strcmp(o.path, "stock") != 0 &&
       strcmp(o.path, "stock-rtx") != 0) ||
      (strcmp(o.srtp, "none") != 0 && !srtp_profile(&o))) {
    fprintf(stderr, "uvgrtp-bench: bad --codec, --path or --srtp\n");
    return 2;
  }
  if (strcmp(argv[1], "recv") == 0)
    return cmd_recv(&o);
  if (strcmp(argv[1], "send") == 0) {
    if (o.file && o.frames <= 0) {
      fprintf(stderr, "uvgrtp-bench send: --file needs --frames (frames in the file)\n");
      return 2;
    }
    return cmd_send(&o);
  }
  if (strcmp(argv[1], "gen") == 0)
    return cmd_gen(&o);
  fprintf(stderr, "usage: uvgrtp-bench recv|send|gen [options]\n");
  return 2;
}
