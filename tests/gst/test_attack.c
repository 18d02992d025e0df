/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_attack - an attacker on the path cannot steer RTCP (plain RTP).
 *
 * uvgrtpsink -> uvgrtpsrc on loopback with a live x264 stream, RTCP both
 * ways, default properties but for the report interval (shorter, so that
 * reports come every few hundred ms) and the sender's CNAME (known, so
 * that it can be compared). The attacker sends from 127.0.0.2 (a UDP
 * socket bound to 127.0.0.2, port 0; loopback needs no set-up) and knows
 * only the sender's SSRC, as anyone who reads the wire does. It forges
 * valid RFC 3550 / RFC 4585 compounds, built here by hand (not with lib/,
 * the code under test):
 *
 *  - test_forged_sr: sender reports with the sender's SSRC, an NTP time
 *    2.5 s off and the CNAME "attacker", to the receiver's RTCP port. The
 *    receiver must neither send anything to the attacker (where its
 *    reports go is not learnt from a stranger) nor take the report: its
 *    statistics and uvgrtp-rtcp messages keep the real CNAME and clock,
 *    and every forged compound is counted as foreign (RTCP_FOREIGN_SRC).
 *  - test_forged_bye: a BYE of the sender's SSRC, then RTP packets of a
 *    new SSRC from the attacker. The receiver must stay with the real
 *    sender: no change of source, frames decode all along.
 *  - test_forged_feedback: receiver reports about the sender's stream
 *    (everything lost, a round trip of seconds), generic NACKs and PLIs
 *    to the sender's RTCP port. The sender must take none of it: its
 *    statistics keep the real receiver's report, nothing is retransmitted,
 *    no key frame is requested, and every forged compound is counted as
 *    foreign (RTCP_FOREIGN_SINK).
 *
 * In every case the real path goes on (reports both ways), neither bus has
 * an error, and the attacker's socket receives nothing at all.
 *
 * Each case collects all its failed expectations and fails once at the
 * end with the whole list (each with the values seen), so that one run
 * shows everything an implementation still lets through.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gst/check/gstcheck.h>

#include "rtcputil.h"

/* The statistics this test assumes beyond the existing ones (uint64):
 * uvgrtpsrc: RTCP compounds from an address other than the followed
 * source's, ignored; uvgrtpsink: compounds from addresses other than the
 * receiver's, dropped whole. */
#define RTCP_FOREIGN_SRC "rtcp-foreign"
#define RTCP_FOREIGN_SINK "rtcp-foreign"

#define ATTACKER_IP "127.0.0.2"
#define URI_TWCC "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
#define ATTACKER_CNAME "attacker"
#define SENDER_CNAME "sender@attack.test"
#define MIN_INTERVAL "500000000"        /* ns: reports every few hundred ms */
#define PT 96                   /* uvgrtpsink's default payload type */
#define FPS 30
#define NTP_UNIX_OFFSET G_GUINT64_CONSTANT (2208988800)

static const gchar *const SENDER =
    "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,"
    "height=240,framerate=30/1 ! x264enc tune=zerolatency "
    "speed-preset=ultrafast key-int-max=300 ! h264parse ! uvgrtpsink "
    "name=sink host=127.0.0.1 port=%d rtcp-bind-port=%d cname="
    SENDER_CNAME " rtcp-min-interval=" MIN_INTERVAL " rtp-caps="
    "\"application/x-rtp,extmap-5=(string)" URI_TWCC "\"";
/* transport-wide feedback both ways: congestion control runs */
static const gchar *const RECEIVER =
    "uvgrtpsrc name=src port=%d rtcp-min-interval=" MIN_INTERVAL " caps="
    "\"application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,"
    "payload=96,extmap-5=(string)" URI_TWCC "\" ! h264parse ! avdec_h264 ! "
    "fakesink name=out";

/* ------------------------------------------------------------------------ */
/* A session: both pipelines, the attacker's socket, what the buses said */

typedef struct
{
  GstElement *send, *recv;
  gint port;                    /* the receiver's RTP port; its RTCP: + 1 */
  gint sink_rtcp;               /* the sender's RTCP port (rtcp-bind-port) */
  int atk;                      /* the attacker's socket, on ATTACKER_IP */
  guint32 ssrc;                 /* the sender's, as read off the wire */
  guint32 atk_ssrc;             /* what the attacker calls itself */
  gint decoded;                 /* frames out of the decoder (atomic) */
  gint64 t0;                    /* g_get_monotonic_time () at PLAYING */
  guint32 ts_offset;            /* the sender's first RTP timestamp */

  /* from the buses */
  guint errors;
  GString *error_text;
  guint source_msgs;            /* uvgrtp-source other than "first" */
  GString *source_text;
  guint sr_real, sr_forged;     /* receiver's uvgrtp-rtcp "sr" */
  GString *sr_text;
  guint rr_msgs, rr_forged;     /* sender's uvgrtp-rtcp "rr" */
  GString *rr_text;

  GString *problems;            /* failed expectations */
  guint checks;
} Session;

/* Records a failed expectation (the message says what was seen); the case
 * fails at session_end with all of them. */
#define expect(s, cond, ...) G_STMT_START {                             \
    gchar *m_ = g_strdup_printf (__VA_ARGS__);                          \
    (s)->checks++;                                                      \
    if (cond) {                                                         \
      GST_INFO ("ok: %s", m_);                                          \
    } else {                                                            \
      GST_WARNING ("FAILED: %s", m_);                                   \
      g_string_append_printf ((s)->problems, "\n  line %d: %s", __LINE__, \
          m_);                                                          \
    }                                                                   \
    g_free (m_);                                                        \
  } G_STMT_END

static gint64
now_unix_us (void)
{
  return g_get_real_time ();
}

static guint64
ntp_of_unix_us (gint64 us)
{
  guint64 sec = (guint64) (us / G_USEC_PER_SEC) + NTP_UNIX_OFFSET;
  guint64 frac = ((guint64) (us % G_USEC_PER_SEC) << 32) / G_USEC_PER_SEC;

  return sec << 32 | frac;
}

static gint64
unix_us_of_ntp (guint64 ntp)
{
  return (gint64) ((ntp >> 32) - NTP_UNIX_OFFSET) * G_USEC_PER_SEC +
      (gint64) (((ntp & 0xffffffffu) * G_USEC_PER_SEC) >> 32);
}

static GstPadProbeReturn
count_frame (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  g_atomic_int_inc ((gint *) user);
  return GST_PAD_PROBE_OK;
}

/* Everything both buses said since the last call. */
static void
pump (Session * s)
{
  GstElement *pipes[2] = { s->send, s->recv };

  for (guint i = 0; i < 2; i++) {
    GstBus *bus = gst_element_get_bus (pipes[i]);
    GstMessage *m;

    while ((m = gst_bus_pop (bus))) {
      const GstStructure *st = gst_message_get_structure (m);

      if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
        GError *e = NULL;
        gst_message_parse_error (m, &e, NULL);
        s->errors++;
        g_string_append_printf (s->error_text, " [%s: %s]",
            GST_OBJECT_NAME (GST_MESSAGE_SRC (m)), e->message);
        g_error_free (e);
      } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT && st
          && gst_structure_has_name (st, "uvgrtp-source")) {
        const gchar *kind = gst_structure_get_string (st, "kind");
        guint o = 0, n = 0;

        gst_structure_get_uint (st, "old-ssrc", &o);
        gst_structure_get_uint (st, "new-ssrc", &n);
        if (g_strcmp0 (kind, "first") != 0) {
          s->source_msgs++;
          g_string_append_printf (s->source_text, " [%s/%s %08x -> %08x]",
              kind, gst_structure_get_string (st, "reason"), o, n);
        }
      } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT && st
          && gst_structure_has_name (st, "uvgrtp-rtcp")) {
        const gchar *type = gst_structure_get_string (st, "type");

        if (g_strcmp0 (type, "sr") == 0) {
          const gchar *cname = gst_structure_get_string (st, "cname");
          guint64 ntp = 0;
          gint64 off;

          gst_structure_get_uint64 (st, "ntp-time", &ntp);
          off = unix_us_of_ntp (ntp) - now_unix_us ();
          if (g_strcmp0 (cname, SENDER_CNAME) == 0
              && ABS (off) < G_USEC_PER_SEC) {
            s->sr_real++;
          } else {
            s->sr_forged++;
            g_string_append_printf (s->sr_text, " [cname %s, ntp %+"
                G_GINT64_FORMAT " ms off]", GST_STR_NULL (cname), off / 1000);
          }
        } else if (g_strcmp0 (type, "rr") == 0) {
          guint ssrc = 0, fraction = 0;
          gint lost = 0;
          guint64 rtt = GST_CLOCK_TIME_NONE;

          gst_structure_get_uint (st, "ssrc", &ssrc);
          gst_structure_get_uint (st, "fraction-lost", &fraction);
          gst_structure_get_int (st, "packets-lost", &lost);
          gst_structure_get_uint64 (st, "round-trip-time", &rtt);
          s->rr_msgs++;
          if (ssrc == s->atk_ssrc || fraction == 255 || lost == 123456
              || (GST_CLOCK_TIME_IS_VALID (rtt) && rtt >= 500 * GST_MSECOND)) {
            s->rr_forged++;
            g_string_append_printf (s->rr_text, " [ssrc %08x fraction %u "
                "lost %d rtt %" G_GUINT64_FORMAT " ms]", ssrc, fraction, lost,
                rtt / GST_MSECOND);
          }
        }
      }
      gst_message_unref (m);
    }
    gst_object_unref (bus);
  }
}

/* Waits ms, reading the buses every 10 ms. */
static void
sleep_pump (Session * s, guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  do {
    pump (s);
    g_usleep (MIN (10000, MAX (0, end - g_get_monotonic_time ())));
  } while (g_get_monotonic_time () < end);
  pump (s);
}

static guint64
stat_u64 (Session * s, GstElement * pipe, const gchar * elem, const gchar * f)
{
  GstStructure *st = stats_of (pipe, elem);
  guint64 v = u64 (st, f);

  gst_structure_free (st);
  return v;
}

/* Waits up to ms for elem's stat f to reach at least v. */
static gboolean
wait_stat (Session * s, GstElement * pipe, const gchar * elem,
    const gchar * f, guint64 v, guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < end) {
    if (stat_u64 (s, pipe, elem, f) >= v)
      return TRUE;
    sleep_pump (s, 20);
  }
  return stat_u64 (s, pipe, elem, f) >= v;
}

/* Both pipelines playing, the stream flowing and followed; the sender's
 * SSRC read. */
static void
session_start (Session * s)
{
  struct sockaddr_in a;
  GstElement *out;
  GstPad *pad;
  GstStructure *st;
  gint64 end;
  gboolean have = FALSE;
  guint followed = 0;

  memset (s, 0, sizeof *s);
  s->problems = g_string_new (NULL);
  s->error_text = g_string_new (NULL);
  s->source_text = g_string_new (NULL);
  s->sr_text = g_string_new (NULL);
  s->rr_text = g_string_new (NULL);
  s->port = free_ports (4);
  s->sink_rtcp = s->port + 3;
  s->send = launchf (SENDER, s->port, s->sink_rtcp);
  s->recv = launchf (RECEIVER, s->port);
  s->atk_ssrc = g_random_int () | 1;

  out = gst_bin_get_by_name (GST_BIN (s->recv), "out");
  pad = gst_element_get_static_pad (out, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_frame,
      &s->decoded, NULL);
  gst_object_unref (pad);
  gst_object_unref (out);

  s->atk = socket (AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  fail_unless (s->atk >= 0);
  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = inet_addr (ATTACKER_IP);
  fail_unless (bind (s->atk, (struct sockaddr *) &a, sizeof a) == 0,
      "bind to " ATTACKER_IP ": %s", g_strerror (errno));

  play (s->recv);
  play (s->send);
  s->t0 = g_get_monotonic_time ();

  /* the sender's packets reach the receiver, which follows them */
  end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!have && g_get_monotonic_time () < end) {
    sleep_pump (s, 20);
    st = stats_of (s->recv, "src");
    gst_structure_get_boolean (st, "have-source", &have);
    gst_structure_get_uint (st, "ssrc", &followed);
    gst_structure_free (st);
  }
  fail_unless (have, "the receiver never had a source");
  st = stats_of (s->send, "sink");
  fail_unless (gst_structure_get_uint (st, "ssrc", &s->ssrc));
  fail_unless (gst_structure_get_uint (st, "timestamp-offset", &s->ts_offset));
  gst_structure_free (st);
  fail_unless_equals_uint64 (followed, s->ssrc);
  fail_unless (s->errors == 0, "bus errors at start:%s", s->error_text->str);
  GST_INFO ("sender SSRC %08x, ports %d (RTP), %d (RTCP), sink RTCP %d",
      s->ssrc, s->port, s->port + 1, s->sink_rtcp);
}

/* Reports have gone both ways at least once. */
static void
wait_real_rtcp (Session * s)
{
  fail_unless (wait_stat (s, s->recv, "src", "sr-received", 1, 10000),
      "no sender report reached the receiver");
  fail_unless (wait_stat (s, s->send, "sink", "rr-received", 1, 10000),
      "no receiver report reached the sender");
}

static void
send_to (Session * s, gint port, const guint8 * p, gsize n)
{
  struct sockaddr_in a;

  memset (&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  a.sin_port = htons ((guint16) port);
  fail_unless (sendto (s->atk, p, n, 0, (struct sockaddr *) &a, sizeof a) ==
      (ssize_t) n, "sendto: %s", g_strerror (errno));
}

/* Every datagram the attacker's socket got, waiting ms for late ones. */
static guint
attacker_received (Session * s, gint ms, GString * from)
{
  struct pollfd pfd = { s->atk, POLLIN, 0 };
  guint n = 0;

  while (poll (&pfd, 1, ms) > 0) {
    guint8 b[2048];
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    ssize_t len;

    while ((len = recvfrom (s->atk, b, sizeof b, 0, (struct sockaddr *) &a,
                &alen)) >= 0) {
      n++;
      if (n <= 8)
        g_string_append_printf (from, " [%zd bytes from port %u, type %u]",
            len, ntohs (a.sin_port), len > 1 ? b[1] : 0);
      alen = sizeof a;
    }
    ms = 0;
  }
  return n;
}

/* The expectations every case has at its end. */
static void
common_checks (Session * s, guint64 foreign_src, guint64 foreign_sink,
    guint64 sr0, guint64 rr0)
{
  GstStructure *rs, *ss;
  GString *from = g_string_new (NULL);
  guint got;
  guint ssrc = 0;
  guint64 v;

  /* whatever is still on the way */
  sleep_pump (s, 200);
  got = attacker_received (s, 300, from);
  expect (s, got == 0, "the attacker's socket received %u datagrams:%s",
      got, from->str);
  g_string_free (from, TRUE);

  rs = stats_of (s->recv, "src");
  ss = stats_of (s->send, "sink");
  GST_INFO ("src: %" GST_PTR_FORMAT, rs);
  GST_INFO ("sink: %" GST_PTR_FORMAT, ss);

  if (gst_structure_get_uint64 (rs, RTCP_FOREIGN_SRC, &v))
    expect (s, v == foreign_src, "src " RTCP_FOREIGN_SRC " %" G_GUINT64_FORMAT
        ", expected %" G_GUINT64_FORMAT, v, foreign_src);
  else
    expect (s, FALSE, "src stats have no " RTCP_FOREIGN_SRC " (expected %"
        G_GUINT64_FORMAT ")", foreign_src);
  if (gst_structure_get_uint64 (ss, RTCP_FOREIGN_SINK, &v))
    expect (s, v == foreign_sink, "sink " RTCP_FOREIGN_SINK " %"
        G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT, v, foreign_sink);
  else
    expect (s, FALSE, "sink stats have no " RTCP_FOREIGN_SINK " (expected %"
        G_GUINT64_FORMAT ")", foreign_sink);

  /* the receiver stays with the real sender, under its name */
  gst_structure_get_uint (rs, "ssrc", &ssrc);
  expect (s, ssrc == s->ssrc, "src follows %08x, the sender is %08x", ssrc,
      s->ssrc);
  expect (s, u64 (rs, "source-changes") == 0 && u64 (rs, "source-restarts")
      == 0, "src source-changes %" G_GUINT64_FORMAT ", source-restarts %"
      G_GUINT64_FORMAT, u64 (rs, "source-changes"), u64 (rs,
          "source-restarts"));
  expect (s, s->source_msgs == 0, "%u uvgrtp-source messages:%s",
      s->source_msgs, s->source_text->str);
  expect (s, g_strcmp0 (gst_structure_get_string (rs, "sender-cname"),
          SENDER_CNAME) == 0, "src sender-cname \"%s\", the sender's is \""
      SENDER_CNAME "\"", gst_structure_get_string (rs, "sender-cname"));

  /* the real path goes on: reports both ways during the attack */
  expect (s, u64 (rs, "sr-received") > sr0, "src sr-received %"
      G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " when the attack began",
      u64 (rs, "sr-received"), sr0);
  expect (s, u64 (ss, "rr-received") > rr0, "sink rr-received %"
      G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " when the attack began",
      u64 (ss, "rr-received"), rr0);
  expect (s, s->sr_real >= 2, "%u sender reports of the real sender at the "
      "receiver (uvgrtp-rtcp)", s->sr_real);
  expect (s, s->rr_msgs - s->rr_forged >= 2, "%u receiver reports of the "
      "real receiver at the sender (uvgrtp-rtcp)", s->rr_msgs - s->rr_forged);
  expect (s, s->errors == 0, "%u bus errors:%s", s->errors,
      s->error_text->str);

  gst_structure_free (rs);
  gst_structure_free (ss);
}

static void
session_end (Session * s)
{
  pump (s);
  stop (s->send);
  stop (s->recv);
  close (s->atk);
  GST_INFO ("%u expectations, failed:%s", s->checks,
      s->problems->len ? s->problems->str : " none");
  fail_unless (s->problems->len == 0, "%u expectations, failed:%s",
      s->checks, s->problems->str);
  g_string_free (s->problems, TRUE);
  g_string_free (s->error_text, TRUE);
  g_string_free (s->source_text, TRUE);
  g_string_free (s->sr_text, TRUE);
  g_string_free (s->rr_text, TRUE);
}

/* ------------------------------------------------------------------------ */
/* Forged packets, by hand (RFC 3550 6.4-6.6, RFC 4585 6.2.1 / 6.3.1) */

typedef struct
{
  guint8 b[1500];
  gsize len;
} Pkt;

static void
put8 (Pkt * p, guint v)
{
  fail_unless (p->len < sizeof p->b);
  p->b[p->len++] = (guint8) v;
}

static void
put16 (Pkt * p, guint v)
{
  put8 (p, v >> 8);
  put8 (p, v);
}

static void
put32 (Pkt * p, guint32 v)
{
  put16 (p, v >> 16);
  put16 (p, v & 0xffff);
}

/* A packet's header: version 2, count (or FMT), type; its length in
 * 32-bit words minus one is filled in by rtcp_end. */
static gsize
rtcp_begin (Pkt * p, guint count, guint type)
{
  gsize at = p->len;

  put8 (p, 0x80 | count);
  put8 (p, type);
  put16 (p, 0);
  return at;
}

static void
rtcp_end (Pkt * p, gsize at)
{
  gsize words = (p->len - at) / 4 - 1;

  fail_unless ((p->len - at) % 4 == 0);
  p->b[at + 2] = (guint8) (words >> 8);
  p->b[at + 3] = (guint8) words;
}

/* SR without report blocks. */
static void
add_sr (Pkt * p, guint32 ssrc, guint64 ntp, guint32 rtp_ts, guint32 packets,
    guint32 octets)
{
  gsize at = rtcp_begin (p, 0, 200);

  put32 (p, ssrc);
  put32 (p, (guint32) (ntp >> 32));
  put32 (p, (guint32) ntp);
  put32 (p, rtp_ts);
  put32 (p, packets);
  put32 (p, octets);
  rtcp_end (p, at);
}

typedef struct
{
  guint32 ssrc;
  guint8 fraction;
  gint32 lost;
  guint32 ext_max_seq, jitter, lsr, dlsr;
} Block;

/* RR with one report block, or none (b NULL). */
static void
add_rr (Pkt * p, guint32 ssrc, const Block * b)
{
  gsize at = rtcp_begin (p, b ? 1 : 0, 201);

  put32 (p, ssrc);
  if (b) {
    put32 (p, b->ssrc);
    put8 (p, b->fraction);
    put8 (p, ((guint32) b->lost >> 16) & 0xff);
    put16 (p, (guint32) b->lost & 0xffff);
    put32 (p, b->ext_max_seq);
    put32 (p, b->jitter);
    put32 (p, b->lsr);
    put32 (p, b->dlsr);
  }
  rtcp_end (p, at);
}

/* SDES with one chunk: a CNAME item, then the end (a zero octet or more, up
 * to the next 32-bit boundary). */
static void
add_sdes_cname (Pkt * p, guint32 ssrc, const gchar * cname)
{
  gsize at = rtcp_begin (p, 1, 202), n = strlen (cname);

  put32 (p, ssrc);
  put8 (p, 1);
  put8 (p, (guint) n);
  for (gsize i = 0; i < n; i++)
    put8 (p, (guint8) cname[i]);
  do
    put8 (p, 0);
  while ((p->len - at) % 4);
  rtcp_end (p, at);
}

static void
add_bye (Pkt * p, guint32 ssrc)
{
  gsize at = rtcp_begin (p, 1, 203);

  put32 (p, ssrc);
  rtcp_end (p, at);
}

/* Generic NACK (RTPFB, FMT 1): one PID/BLP pair. */
static void
add_nack (Pkt * p, guint32 sender, guint32 media, guint16 pid, guint16 blp)
{
  gsize at = rtcp_begin (p, 1, 205);

  put32 (p, sender);
  put32 (p, media);
  put16 (p, pid);
  put16 (p, blp);
  rtcp_end (p, at);
}

/* PLI (PSFB, FMT 1): no FCI. */
static void
add_pli (Pkt * p, guint32 sender, guint32 media)
{
  gsize at = rtcp_begin (p, 1, 206);

  put32 (p, sender);
  put32 (p, media);
  rtcp_end (p, at);
}

/* Transport-wide feedback (RTPFB FMT 15): count numbers from base, all
 * lost (one run-length chunk). */
static void
add_twcc_lost (Pkt * p, guint32 sender, guint32 media, guint16 base,
    guint16 count)
{
  gsize at = rtcp_begin (p, 15, 205);

  put32 (p, sender);
  put32 (p, media);
  put16 (p, base);
  put16 (p, count);
  put32 (p, 1);                 /* reference time 0, feedback count 1 */
  put16 (p, count & 0x1fff);    /* run length of "not received" */
  put16 (p, 0);
  rtcp_end (p, at);
}

/* An RTP packet: 12-byte header, marker set (one packet per picture). */
static void
make_rtp (Pkt * p, guint32 ssrc, guint16 seq, guint32 ts, const guint8 * pl,
    gsize n)
{
  p->len = 0;
  put8 (p, 0x80);
  put8 (p, 0x80 | PT);
  put16 (p, seq);
  put32 (p, ts);
  put32 (p, ssrc);
  for (gsize i = 0; i < n; i++)
    put8 (p, pl[i]);
}

/* ------------------------------------------------------------------------ */
/* The cases */

#define FORGED_SRS 8

/* Forged sender reports (SR + SDES "attacker", NTP 2.5 s ahead) to the
 * receiver's RTCP port, from the moment the stream flows. */
GST_START_TEST (test_forged_sr)
{
  Session s;
  guint taken = 0, samples = 0;
  guint64 sr0, rr0;
  GString *seen = g_string_new (NULL);

  session_start (&s);
  sr0 = stat_u64 (&s, s.recv, "src", "sr-received");
  rr0 = stat_u64 (&s, s.send, "sink", "rr-received");
  for (guint i = 0; i < FORGED_SRS; i++) {
    GstStructure *sk = stats_of (s.send, "sink");
    gint64 ahead = now_unix_us () + 2500 * 1000;
    guint64 ntp = ntp_of_unix_us (ahead);
    /* the RTP time of now, as the stream has it: only the NTP time lies */
    guint32 rtp = s.ts_offset + (guint32) ((g_get_monotonic_time () - s.t0)
        * 90 / 1000);
    GstStructure *rs;
    Pkt p = { {0}, 0 };
    guint64 got_ntp = 0;
    const gchar *cname;

    add_sr (&p, s.ssrc, ntp, rtp, (guint32) u64 (sk, "packets"),
        (guint32) u64 (sk, "bytes"));
    add_sdes_cname (&p, s.ssrc, ATTACKER_CNAME);
    gst_structure_free (sk);
    send_to (&s, s.port + 1, p.b, p.len);

    /* what the receiver makes of it, a moment later */
    sleep_pump (&s, 50);
    rs = stats_of (s.recv, "src");
    cname = gst_structure_get_string (rs, "sender-cname");
    gst_structure_get_uint64 (rs, "sr-ntp-time", &got_ntp);
    samples++;
    if (g_strcmp0 (cname, ATTACKER_CNAME) == 0 || got_ntp == ntp) {
      taken++;
      g_string_append_printf (seen, " [#%u: cname \"%s\", sr-ntp-time %s]",
          i, GST_STR_NULL (cname), got_ntp == ntp ? "the forged one" :
          "real");
    }
    gst_structure_free (rs);
    sleep_pump (&s, 250);
  }
  /* the real reports go on a while */
  sleep_pump (&s, 1200);

  expect (&s, taken == 0, "a forged sender report was in the src's stats "
      "%u times of %u:%s", taken, samples, seen->str);
  expect (&s, s.sr_forged == 0, "%u uvgrtp-rtcp sender reports with another "
      "CNAME or a clock over 1 s off:%s", s.sr_forged, s.sr_text->str);
  expect (&s, s.rr_forged == 0, "%u forged-looking receiver reports at the "
      "sender:%s", s.rr_forged, s.rr_text->str);
  common_checks (&s, FORGED_SRS, 0, sr0, rr0);
  {
    GstStructure *ss = stats_of (s.send, "sink");
    guint64 rtt = GST_CLOCK_TIME_NONE;

    gst_structure_get_uint64 (ss, "round-trip-time", &rtt);
    expect (&s, GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND, "sink round-trip-time %"
        G_GUINT64_FORMAT " ns", rtt);
    gst_structure_free (ss);
  }
  g_string_free (seen, TRUE);
  session_end (&s);
}

GST_END_TEST;

#define BYE_SECONDS 3
#define FORGED_RTP_RATE 5       /* packets a second */

/* A forged BYE of the sender, then RTP of a new SSRC from the attacker:
 * the receiver stays with the real sender and frames go on decoding. */
GST_START_TEST (test_forged_bye)
{
  Session s;
  guint64 sr0, rr0;
  guint changed = 0, samples = 0, d0, d1, frames, want;
  guint32 new_ssrc, ts;
  guint16 seq;
  static const guint8 payload[] = { 0x41, 0x9a, 0x21, 0x6c, 0x12, 0x34 };
  GString *seen = g_string_new (NULL);
  gint64 t;
  Pkt p = { {0}, 0 };

  session_start (&s);
  wait_real_rtcp (&s);
  sleep_pump (&s, 300);
  sr0 = stat_u64 (&s, s.recv, "src", "sr-received");
  rr0 = stat_u64 (&s, s.send, "sink", "rr-received");
  new_ssrc = s.ssrc ^ 0x5a5a5a5a;
  seq = (guint16) g_random_int ();
  ts = g_random_int ();

  d0 = g_atomic_int_get (&s.decoded);
  t = g_get_monotonic_time ();
  add_rr (&p, s.ssrc, NULL);
  add_sdes_cname (&p, s.ssrc, ATTACKER_CNAME);
  add_bye (&p, s.ssrc);
  send_to (&s, s.port + 1, p.b, p.len);
  for (guint k = 0; k < BYE_SECONDS * FORGED_RTP_RATE; k++) {
    GstStructure *rs;
    guint now_ssrc = 0;
    gint64 next = t + (gint64) (k + 1) * G_USEC_PER_SEC / FORGED_RTP_RATE;

    make_rtp (&p, new_ssrc, seq++, ts, payload, sizeof payload);
    ts += 90000 / FORGED_RTP_RATE;
    send_to (&s, s.port, p.b, p.len);
    sleep_pump (&s, (guint) MAX (0, next - g_get_monotonic_time ()) / 1000);
    rs = stats_of (s.recv, "src");
    gst_structure_get_uint (rs, "ssrc", &now_ssrc);
    samples++;
    if (now_ssrc != s.ssrc) {
      changed++;
      if (changed <= 3)
        g_string_append_printf (seen, " [%.1f s: %08x]",
            (g_get_monotonic_time () - t) / 1e6, now_ssrc);
    }
    gst_structure_free (rs);
  }
  d1 = g_atomic_int_get (&s.decoded);
  frames = d1 - d0;
  want = BYE_SECONDS * FPS * 8 / 10;
  sleep_pump (&s, 800);

  expect (&s, changed == 0, "the src followed another SSRC than the "
      "sender's %08x in %u of %u samples:%s", s.ssrc, changed, samples,
      seen->str);
  expect (&s, frames >= want, "%u frames decoded in the %d s of the attack "
      "(at least %u expected)", frames, BYE_SECONDS, want);
  expect (&s, stat_u64 (&s, s.recv, "src", "bye-received") == 0,
      "src bye-received %" G_GUINT64_FORMAT ": the real sender said none",
      stat_u64 (&s, s.recv, "src", "bye-received"));
  expect (&s, s.sr_forged == 0, "%u uvgrtp-rtcp sender reports with another "
      "CNAME or clock:%s", s.sr_forged, s.sr_text->str);
  GST_INFO ("src foreign RTP %" G_GUINT64_FORMAT ", held %" G_GUINT64_FORMAT,
      stat_u64 (&s, s.recv, "src", "foreign"),
      stat_u64 (&s, s.recv, "src", "held"));
  common_checks (&s, 1, 0, sr0, rr0);
  g_string_free (seen, TRUE);
  session_end (&s);
}

GST_END_TEST;

#define FEEDBACK_TICKS 200      /* of 10 ms: 2 s */

/* Forged receiver reports, NACKs and PLIs to the sender's RTCP port. */
GST_START_TEST (test_forged_feedback)
{
  Session s;
  guint n_rr = 0, n_nack = 0, n_pli = 0, n_twcc = 0, taken = 0, samples = 0;
  guint64 sr0, rr0;
  GString *seen = g_string_new (NULL);
  gint64 t;

  session_start (&s);
  wait_real_rtcp (&s);
  sleep_pump (&s, 300);
  sr0 = stat_u64 (&s, s.recv, "src", "sr-received");
  rr0 = stat_u64 (&s, s.send, "sink", "rr-received");

  t = g_get_monotonic_time ();
  for (guint tick = 0; tick < FEEDBACK_TICKS; tick++) {
    GstStructure *ss = stats_of (s.send, "sink");
    /* a packet sent a moment ago: still kept for retransmission */
    guint16 recent = (guint16) (u64 (ss, "packets") - 3);
    guint seq_offset = 0;
    gint64 next = t + (gint64) (tick + 1) * 10000;

    gst_structure_get_uint (ss, "seqnum-offset", &seq_offset);
    recent += (guint16) seq_offset;
    gst_structure_free (ss);

    if (tick % 20 == 0) {       /* RR: all lost, a round trip of seconds */
      Pkt p = { {0}, 0 };
      Block b = {
        .ssrc = s.ssrc,.fraction = 255,.lost = 123456,
        .ext_max_seq = recent,.jitter = 0,.dlsr = 0,
      };
      guint64 then = ntp_of_unix_us (now_unix_us () -
          g_random_int_range (2000, 4000) * (gint64) 1000);

      b.lsr = (guint32) (then >> 16);
      add_rr (&p, s.atk_ssrc, &b);
      add_sdes_cname (&p, s.atk_ssrc, ATTACKER_CNAME);
      send_to (&s, s.sink_rtcp, p.b, p.len);
      n_rr++;
    }
    if (tick % 2 == 0) {        /* NACK: 50 a second, 17 packets each */
      Pkt p = { {0}, 0 };

      add_rr (&p, s.atk_ssrc, NULL);
      add_sdes_cname (&p, s.atk_ssrc, ATTACKER_CNAME);
      add_nack (&p, s.atk_ssrc, s.ssrc, recent - 17, 0xffff);
      send_to (&s, s.sink_rtcp, p.b, p.len);
      n_nack++;
    }
    if (tick % 2 == 1) {        /* TWCC: the last 40 numbers all lost */
      Pkt p = { {0}, 0 };
      GstStructure *rs = stats_of (s.recv, "src");
      guint16 tw = (guint16) u64 (rs, "twcc-packets");

      gst_structure_free (rs);
      add_rr (&p, s.atk_ssrc, NULL);
      add_sdes_cname (&p, s.atk_ssrc, ATTACKER_CNAME);
      add_twcc_lost (&p, s.atk_ssrc, s.ssrc, (guint16) (tw - 40), 40);
      send_to (&s, s.sink_rtcp, p.b, p.len);
      n_twcc++;
    }
    if (tick % 5 == 0) {        /* PLI: 20 a second */
      Pkt p = { {0}, 0 };

      add_rr (&p, s.atk_ssrc, NULL);
      add_sdes_cname (&p, s.atk_ssrc, ATTACKER_CNAME);
      add_pli (&p, s.atk_ssrc, s.ssrc);
      send_to (&s, s.sink_rtcp, p.b, p.len);
      n_pli++;
    }
    sleep_pump (&s, (guint) MAX (0, next - g_get_monotonic_time ()) / 1000);

    if (tick % 20 == 5) {       /* what the sender made of the last RR */
      GstStructure *st = stats_of (s.send, "sink");
      guint fraction = 0;
      gint lost = 0;
      guint64 rtt = GST_CLOCK_TIME_NONE;

      gst_structure_get_uint (st, "fraction-lost", &fraction);
      gst_structure_get_int (st, "packets-lost", &lost);
      gst_structure_get_uint64 (st, "round-trip-time", &rtt);
      samples++;
      if (fraction == 255 || lost == 123456 || !GST_CLOCK_TIME_IS_VALID (rtt)
          || rtt >= 50 * GST_MSECOND) {
        taken++;
        if (taken <= 3)
          g_string_append_printf (seen, " [fraction-lost %u packets-lost %d "
              "round-trip-time %" G_GUINT64_FORMAT " ms]", fraction, lost,
              rtt / GST_MSECOND);
      }
      gst_structure_free (st);
    }
  }
  GST_INFO ("forged: %u RR, %u NACK, %u PLI, %u TWCC compounds in %.2f s",
      n_rr, n_nack, n_pli, n_twcc, (g_get_monotonic_time () - t) / 1e6);
  sleep_pump (&s, 1000);

  expect (&s, taken == 0, "a forged receiver report was in the sink's stats "
      "%u times of %u:%s", taken, samples, seen->str);
  expect (&s, s.rr_forged == 0, "%u uvgrtp-rtcp receiver reports at the "
      "sender with the attacker's SSRC or values:%s", s.rr_forged,
      s.rr_text->str);
  {
    GstStructure *ss = stats_of (s.send, "sink");
    GstStructure *rs = stats_of (s.recv, "src");
    const GValue *arr = gst_structure_get_value (ss, "receivers");
    guint fraction = 0, n;
    gint lost = 0;
    guint64 rtt = GST_CLOCK_TIME_NONE;
    GString *rcv = g_string_new (NULL);
    gboolean bad = FALSE;
    guint64 pli_sent = u64 (rs, "pli-sent"), fir_sent = u64 (rs, "fir-sent");
    guint64 nacks_sent = u64 (rs, "nacks-sent");

    gst_structure_get_uint (ss, "fraction-lost", &fraction);
    gst_structure_get_int (ss, "packets-lost", &lost);
    gst_structure_get_uint64 (ss, "round-trip-time", &rtt);
    expect (&s, fraction != 255 && lost != 123456, "sink fraction-lost %u, "
        "packets-lost %d", fraction, lost);
    expect (&s, GST_CLOCK_TIME_IS_VALID (rtt) && rtt < 50 * GST_MSECOND, "sink round-trip-time %"
        G_GUINT64_FORMAT " ns", rtt);
    fail_unless (arr != NULL && GST_VALUE_HOLDS_ARRAY (arr));
    n = gst_value_array_get_size (arr);
    for (guint i = 0; i < n; i++) {
      const GstStructure *r =
          gst_value_get_structure (gst_value_array_get_value (arr, i));
      guint rssrc = 0, rf = 0;
      gint rl = 0;

      gst_structure_get_uint (r, "ssrc", &rssrc);
      gst_structure_get_uint (r, "fraction-lost", &rf);
      gst_structure_get_int (r, "packets-lost", &rl);
      g_string_append_printf (rcv, " [%08x fraction %u lost %d]", rssrc, rf,
          rl);
      bad |= rssrc == s.atk_ssrc || rf == 255 || rl == 123456;
    }
    expect (&s, n == 1 && !bad, "sink receivers (the attacker is %08x):%s",
        s.atk_ssrc, rcv->str);
    g_string_free (rcv, TRUE);

    /* loss recovery and key frames: only what the real receiver asked */
    expect (&s, u64 (ss, "nacks-received") == nacks_sent,
        "sink nacks-received %" G_GUINT64_FORMAT " (nack-seqs %"
        G_GUINT64_FORMAT "), the receiver sent %" G_GUINT64_FORMAT,
        u64 (ss, "nacks-received"), u64 (ss, "nack-seqs"), nacks_sent);
    expect (&s, u64 (ss, "rtx-packets") == 0 || nacks_sent > 0,
        "sink rtx-packets %" G_GUINT64_FORMAT " (rtx-repeats %"
        G_GUINT64_FORMAT ", rtx-over-budget %" G_GUINT64_FORMAT
        "), the receiver sent %" G_GUINT64_FORMAT " NACKs",
        u64 (ss, "rtx-packets"), u64 (ss, "rtx-repeats"),
        u64 (ss, "rtx-over-budget"), nacks_sent);
    expect (&s, u64 (ss, "pli-received") == pli_sent && u64 (ss,
            "fir-received") == fir_sent, "sink pli-received %"
        G_GUINT64_FORMAT ", fir-received %" G_GUINT64_FORMAT
        "; the receiver sent %" G_GUINT64_FORMAT " PLI, %" G_GUINT64_FORMAT
        " FIR", u64 (ss, "pli-received"), u64 (ss, "fir-received"),
        pli_sent, fir_sent);
    expect (&s, u64 (ss, "keyframe-requests") <= pli_sent + fir_sent,
        "sink keyframe-requests %" G_GUINT64_FORMAT ", the receiver asked %"
        G_GUINT64_FORMAT, u64 (ss, "keyframe-requests"), pli_sent + fir_sent);
    /* congestion control: the real receiver's feedback only (nothing is
     * lost on loopback), and no estimate driven down by forged loss */
    expect (&s, u64 (ss, "ccfb-received") > 0 && u64 (ss, "ccfb-lost") == 0,
        "sink ccfb-received %" G_GUINT64_FORMAT ", ccfb-lost %"
        G_GUINT64_FORMAT " (the attacker reported %u x 40 lost)",
        u64 (ss, "ccfb-received"), u64 (ss, "ccfb-lost"), n_twcc);
    expect (&s, u64 (ss, "cc-loss-cuts") == 0, "sink cc-loss-cuts %"
        G_GUINT64_FORMAT, u64 (ss, "cc-loss-cuts"));
    gst_structure_free (rs);
    gst_structure_free (ss);
  }
  common_checks (&s, 0, n_rr + n_nack + n_pli + n_twcc, sr0, rr0);
  g_string_free (seen, TRUE);
  session_end (&s);
}

GST_END_TEST;

static Suite *
attack_suite (void)
{
  Suite *s = suite_create ("attack");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_forged_sr);
  tcase_add_test (tc, test_forged_bye);
  tcase_add_test (tc, test_forged_feedback);
  return s;
}

GST_CHECK_MAIN (attack);
