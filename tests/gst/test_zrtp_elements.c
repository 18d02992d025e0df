/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtpsink and uvgrtpsrc with zrtp=true, over UDP loopback with real
 * encoders and decoders: the exchange on the elements' own sockets, media
 * that never crosses in clear, Multistream with an H.265 and an Opus
 * stream, late receivers, restarts, loss, tampering, and the pipelines of
 * docs/zrtp.md. Where the wire is observed, a two-way relay in this
 * program sits between sender and receiver (the sender's socket talks to
 * the relay, the receiver answers the relay): it records every datagram,
 * and drops (seeded) or tampers with ZRTP messages when asked.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/check/gstcheck.h>

#include "docpipe.h"
#include "testutil.h"

#ifndef ZRTP_DOC
#error "ZRTP_DOC must name docs/zrtp.md"
#endif

#define STATE_SECURE 3          /* GstUvgRtpZrtpState */
#define STATE_FAILED 4

/* 60 hex digits: an AES-128 key and salt, for the srtp-key conflict */
#define SOME_KEY "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d"

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static gboolean
is_zrtp (const guint8 * p, gsize len)
{
  return len >= 28 && (p[0] >> 4) == 1 && memcmp (p + 4, "ZRTP", 4) == 0;
}

static gboolean
is_zrtp_type (const guint8 * p, gsize len, const gchar * type)
{
  return is_zrtp (p, len) && memcmp (p + 16, type, 8) == 0;
}

/* ------------------------------------------------------------------------ */
/* Pipelines and their bus messages                                         */

typedef struct
{
  gchar *src;                   /* name of the element that posted it */
  GstStructure *s;
} Msg;

typedef struct
{
  const gchar *label;
  GstElement *pipe;
  GPtrArray *msgs;              /* Msg: uvgrtp-zrtp messages */
  GPtrArray *errors;            /* gchar: error messages, if allowed */
  gboolean allow_errors;
  gboolean eos;
} Pipe;

/* The pipelines the tests pump messages from. */
static Pipe *active[4];

static void
msg_free (Msg * m)
{
  g_free (m->src);
  gst_structure_free (m->s);
  g_free (m);
}

static Pipe *
pipe_new (const gchar * label, const gchar * desc)
{
  Pipe *p = g_new0 (Pipe, 1);
  GError *err = NULL;

  GST_INFO ("%s: %s", label, desc);
  p->label = label;
  p->pipe = gst_parse_launch (desc, &err);
  fail_unless (p->pipe != NULL && err == NULL, "%s: %s", label,
      err ? err->message : "?");
  p->msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) msg_free);
  p->errors = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < G_N_ELEMENTS (active); i++)
    if (!active[i]) {
      active[i] = p;
      return p;
    }
  fail ("too many pipelines");
  return NULL;
}

static void
pipe_free (Pipe * p)
{
  gst_element_set_state (p->pipe, GST_STATE_NULL);
  for (guint i = 0; i < G_N_ELEMENTS (active); i++)
    if (active[i] == p)
      active[i] = NULL;
  gst_object_unref (p->pipe);
  g_ptr_array_unref (p->msgs);
  g_ptr_array_unref (p->errors);
  g_free (p);
}

static GstElement *
el (Pipe * p, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (p->pipe), name);

  fail_unless (e != NULL, "%s: no element %s", p->label, name);
  /* the pipeline keeps it alive */
  gst_object_unref (e);
  return e;
}

static void
pipe_play (Pipe * p)
{
  fail_if (gst_element_set_state (p->pipe, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE, "%s: could not play", p->label);
}

/* Stops the pipeline and forgets its messages. */
static void
pipe_stop (Pipe * p)
{
  GstBus *bus = gst_element_get_bus (p->pipe);

  gst_element_set_state (p->pipe, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_bus_set_flushing (bus, FALSE);
  gst_object_unref (bus);
  g_ptr_array_set_size (p->msgs, 0);
  p->eos = FALSE;
}

/* Takes the bus messages of the active pipelines: keeps the uvgrtp-zrtp
 * ones, fails on an error (unless the pipeline expects errors). */
static void
pump (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (active); i++) {
    Pipe *p = active[i];
    GstBus *bus;
    GstMessage *m;

    if (!p)
      continue;
    bus = gst_element_get_bus (p->pipe);
    while ((m = gst_bus_pop (bus))) {
      const GstStructure *st = gst_message_get_structure (m);

      if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
        GError *err;
        gchar *dbg;

        gst_message_parse_error (m, &err, &dbg);
        if (!p->allow_errors)
          fail ("%s: error from %s: %s (%s)", p->label,
              GST_OBJECT_NAME (GST_MESSAGE_SRC (m)), err->message,
              GST_STR_NULL (dbg));
        g_ptr_array_add (p->errors, g_strdup (err->message));
        g_error_free (err);
        g_free (dbg);
      } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS) {
        p->eos = TRUE;
      } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT && st &&
          gst_structure_has_name (st, "uvgrtp-zrtp")) {
        Msg *msg = g_new0 (Msg, 1);

        msg->src = g_strdup (GST_OBJECT_NAME (GST_MESSAGE_SRC (m)));
        msg->s = gst_structure_copy (st);
        GST_INFO ("%s: %s: %" GST_PTR_FORMAT, p->label, msg->src, st);
        g_ptr_array_add (p->msgs, msg);
      }
      gst_message_unref (m);
    }
    gst_object_unref (bus);
  }
}

typedef gboolean (*Cond) (gpointer data);

/* Pumps until cond holds or timeout_ms passes; returns whether it held. */
static gboolean
wait_for (Cond cond, gpointer data, guint timeout_ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;) {
    pump ();
    if (cond (data))
      return TRUE;
    if (g_get_monotonic_time () > end)
      return FALSE;
    g_usleep (10000);
  }
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

/* Pumps for ms milliseconds. */
static void
run_for (guint ms)
{
  wait_for (never, NULL, ms);
}

/* The n-th (from 0) uvgrtp-zrtp message of element `src` with this state. */
static const GstStructure *
find_msg_n (Pipe * p, const gchar * src, const gchar * state, guint n)
{
  for (guint i = 0; i < p->msgs->len; i++) {
    Msg *m = g_ptr_array_index (p->msgs, i);
    if (g_str_equal (m->src, src) &&
        g_strcmp0 (gst_structure_get_string (m->s, "state"), state) == 0 &&
        n-- == 0)
      return m->s;
  }
  return NULL;
}

static const GstStructure *
find_msg (Pipe * p, const gchar * src, const gchar * state)
{
  return find_msg_n (p, src, state, 0);
}

static guint
count_msgs (Pipe * p, const gchar * src, const gchar * state)
{
  guint n = 0;

  while (find_msg_n (p, src, state, n))
    n++;
  return n;
}

/* What wait_for() waits for: element names and states in two pipelines. */
typedef struct
{
  Pipe *a, *b;
  const gchar *a_el, *b_el;
  const gchar *state;
  guint n;                      /* this many such messages from each */
} Both;

static gboolean
both_have (gpointer data)
{
  Both *w = data;

  return count_msgs (w->a, w->a_el, w->state) >= MAX (w->n, 1) &&
      count_msgs (w->b, w->b_el, w->state) >= MAX (w->n, 1);
}

static gboolean
pipe_eos (gpointer data)
{
  return ((Pipe *) data)->eos;
}

static guint64
stat_of (Pipe * p, const gchar * name, const gchar * field)
{
  GstStructure *st = NULL;
  guint64 v = G_MAXUINT64;

  g_object_get (el (p, name), "stats", &st, NULL);
  fail_unless (st != NULL);
  fail_unless (gst_structure_get_uint64 (st, field, &v), "%s: no stat %s",
      name, field);
  gst_structure_free (st);
  return v;
}

typedef struct
{
  Pipe *p;
  const gchar *name, *field;
  guint64 at_least;
} StatWait;

static gboolean
stat_reaches (gpointer data)
{
  StatWait *w = data;

  return stat_of (w->p, w->name, w->field) >= w->at_least;
}

static gchar *
str_prop (Pipe * p, const gchar * name, const gchar * prop)
{
  gchar *v = NULL;

  g_object_get (el (p, name), prop, &v, NULL);
  return v;
}

static void
check_str_prop (Pipe * p, const gchar * name, const gchar * prop,
    const gchar * want)
{
  gchar *v = str_prop (p, name, prop);

  fail_unless (g_strcmp0 (v, want) == 0, "%s.%s is \"%s\", not \"%s\"", name,
      prop, GST_STR_NULL (v), GST_STR_NULL (want));
  g_free (v);
}

static gint
int_prop (Pipe * p, const gchar * name, const gchar * prop)
{
  gint v = -1;

  g_object_get (el (p, name), prop, &v, NULL);
  return v;
}

/* The secure messages of a sender and its receiver agree with each other
 * and with the elements' properties. */
static void
check_secure_pair (Pipe * tx, const gchar * sink, Pipe * rx,
    const gchar * src, const gchar * key_agreement)
{
  const GstStructure *ms = find_msg (tx, sink, "secure");
  const GstStructure *mr = find_msg (rx, src, "secure");
  const gchar *fields[] = { "sas", "cipher", "auth-tag", "key-agreement",
    "sas-type", "hash", "srtp-profile"
  };
  gboolean is_ = FALSE, ir = FALSE;

  fail_unless (ms != NULL && mr != NULL, "%s / %s not secure", sink, src);
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++) {
    const gchar *x = gst_structure_get_string (ms, fields[i]);
    const gchar *y = gst_structure_get_string (mr, fields[i]);
    fail_unless (x && y && *x, "field %s", fields[i]);
    fail_unless_equals_string (x, y);
  }
  fail_unless_equals_string (gst_structure_get_string (ms, "zid"),
      gst_structure_get_string (mr, "peer-zid"));
  fail_unless_equals_string (gst_structure_get_string (mr, "zid"),
      gst_structure_get_string (ms, "peer-zid"));
  fail_unless_equals_string (gst_structure_get_string (ms, "key-agreement"),
      key_agreement);
  fail_unless_equals_int (strlen (gst_structure_get_string (ms, "sas")), 4);
  fail_unless_equals_string (gst_structure_get_string (ms, "cipher"), "AES1");
  fail_unless_equals_string (gst_structure_get_string (ms, "auth-tag"),
      "HS80");
  fail_unless_equals_string (gst_structure_get_string (ms, "srtp-profile"),
      "AES_CM_128_HMAC_SHA1_80");
  fail_unless (gst_structure_get_boolean (ms, "initiator", &is_));
  fail_unless (gst_structure_get_boolean (mr, "initiator", &ir));
  fail_unless (is_ != ir, "exactly one initiator");
  fail_if (gst_structure_has_field (ms, "reason"));

  /* the properties say the same */
  for (int k = 0; k < 2; k++) {
    Pipe *p = k ? rx : tx;
    const gchar *name = k ? src : sink;
    const GstStructure *m = k ? mr : ms;
    gboolean v;

    fail_unless_equals_int (int_prop (p, name, "zrtp-state"), STATE_SECURE);
    check_str_prop (p, name, "zrtp-sas", gst_structure_get_string (m, "sas"));
    check_str_prop (p, name, "zrtp-cipher", "AES1");
    check_str_prop (p, name, "zrtp-auth-tag", "HS80");
    check_str_prop (p, name, "zrtp-sas-type", "B32");
    check_str_prop (p, name, "zrtp-key-agreement", key_agreement);
    check_str_prop (p, name, "zrtp-zid", gst_structure_get_string (m, "zid"));
    check_str_prop (p, name, "zrtp-peer-zid",
        gst_structure_get_string (m, "peer-zid"));
    g_object_get (el (p, name), "zrtp-sas-verified", &v, NULL);
    fail_unless (gst_structure_get_boolean (m, "sas-verified", &is_));
    fail_unless (v == is_);
  }
}

/* ------------------------------------------------------------------------ */
/* Access units in and out                                                  */

typedef struct
{
  GMutex lock;
  GPtrArray *bufs;              /* GBytes */
  GArray *key;                  /* gboolean: not a delta unit */
  guint count;                  /* buffers seen (e.g. decoded frames) */
} Rec;

static void
rec_init (Rec * r)
{
  g_mutex_init (&r->lock);
  r->bufs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  r->key = g_array_new (FALSE, FALSE, sizeof (gboolean));
  r->count = 0;
}

static void
rec_clear (Rec * r)
{
  g_ptr_array_unref (r->bufs);
  g_array_unref (r->key);
  g_mutex_clear (&r->lock);
}

static void
rec_add (Rec * r, GstBuffer * b)
{
  gsize len = gst_buffer_get_size (b);
  guint8 *d = g_malloc (len);
  gboolean key = !GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DELTA_UNIT);

  gst_buffer_extract (b, 0, d, len);
  /* Opus stream headers are not media: they are never sent */
  if (len >= 8 && (memcmp (d, "OpusHead", 8) == 0 ||
          memcmp (d, "OpusTags", 8) == 0)) {
    g_free (d);
    return;
  }
  g_mutex_lock (&r->lock);
  g_ptr_array_add (r->bufs, g_bytes_new_take (d, len));
  g_array_append_val (r->key, key);
  g_mutex_unlock (&r->lock);
}

static GstPadProbeReturn
rec_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  Rec *r = user;

  if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    rec_add (r, GST_PAD_PROBE_INFO_BUFFER (info));
  } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    GstBufferList *l = GST_PAD_PROBE_INFO_BUFFER_LIST (info);
    for (guint i = 0; i < gst_buffer_list_length (l); i++)
      rec_add (r, gst_buffer_list_get (l, i));
  }
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
count_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  Rec *r = user;

  g_mutex_lock (&r->lock);
  r->count++;
  g_mutex_unlock (&r->lock);
  return GST_PAD_PROBE_OK;
}

/* Records what passes the element's pad. */
static void
rec_attach (Rec * r, Pipe * p, const gchar * name, const gchar * pad_name)
{
  GstPad *pad = gst_element_get_static_pad (el (p, name), pad_name);

  fail_unless (pad != NULL);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, rec_probe, r, NULL);
  gst_object_unref (pad);
}

/* Counts the buffers reaching the element's sink pad. */
static void
count_attach (Rec * r, Pipe * p, const gchar * name)
{
  GstPad *pad = gst_element_get_static_pad (el (p, name), "sink");

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_probe, r, NULL);
  gst_object_unref (pad);
}

static guint
rec_count (Rec * r)
{
  guint n;

  g_mutex_lock (&r->lock);
  n = r->count;
  g_mutex_unlock (&r->lock);
  return n;
}

/* What the appsink holds, after EOS. */
static void
rec_pull (Rec * r, Pipe * p, const gchar * appsink)
{
  GstSample *s;

  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (el (p, appsink)),
              0))) {
    rec_add (r, gst_sample_get_buffer (s));
    gst_sample_unref (s);
  }
}

/* The receiver delivered exactly what the sender sent once secure: the
 * sender held back the first `held` access units and sent the rest, and
 * each of those arrived, in order, equal to what entered the sender.
 * Returns the index (in out) of the first key frame. */
static guint
check_delivered (Rec * in, Rec * out, guint64 held)
{
  guint first_key = G_MAXUINT;

  fail_unless (held <= in->bufs->len);
  fail_unless_equals_int (out->bufs->len, in->bufs->len - (guint) held);
  for (guint i = 0; i < out->bufs->len; i++) {
    /* byte for byte: the encoder writes 4-byte start codes, as the
     * receiver does */
    fail_unless (g_bytes_equal (g_ptr_array_index (in->bufs, held + i),
            g_ptr_array_index (out->bufs, i)),
        "access unit %u (of %u sent) differs", i, out->bufs->len);
    if (first_key == G_MAXUINT && g_array_index (out->key, gboolean, i))
      first_key = i;
  }
  return first_key;
}

/* ------------------------------------------------------------------------ */
/* The relay: sender <-> relay <-> receiver, both ways                      */

typedef struct
{
  int a_fd;                     /* faces the sender: 127.0.0.1:a_port */
  int b_fd;                     /* faces the receiver: connected to dst */
  guint16 a_port, dst;
  struct sockaddr_in sender;
  gboolean have_sender;
  double loss;                  /* both ways, by a seeded pattern */
  guint64 rng;
  gboolean tamper;              /* flip a MAC byte of every Commit */
  GMutex lock;
  GPtrArray *fwd, *back;        /* GBytes: what each side sent */
  guint dropped, dropped_zrtp, tampered;
  GThread *thread;
  gint stop;
} Relay;

static gboolean
relay_drop (Relay * r)
{
  /* xorshift64*: the same pattern for a seed, in order of arrival */
  guint64 x = r->rng;

  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->rng = x;
  return (double) ((x * 0x2545F4914F6CDD1DULL) >> 11) / (double) (1ULL << 53)
      < r->loss;
}

/* Records, impairs and passes on one datagram. */
static void
relay_one (Relay * r, guint8 * buf, gsize len, gboolean fwd)
{
  gboolean drop;

  g_mutex_lock (&r->lock);
  g_ptr_array_add (fwd ? r->fwd : r->back, g_bytes_new (buf, len));
  drop = r->loss > 0 && relay_drop (r);
  if (drop) {
    r->dropped++;
    r->dropped_zrtp += is_zrtp (buf, len);
  }
  if (r->tamper && is_zrtp_type (buf, len, "Commit  ")) {
    /* the last byte of the message's MAC, before the CRC */
    buf[len - 5] ^= 0x01;
    zrtp_fix_crc (buf, len);
    r->tampered++;
  }
  g_mutex_unlock (&r->lock);
  if (drop)
    return;
  if (fwd)
    (void) send (r->b_fd, buf, len, 0);
  else if (r->have_sender)
    (void) sendto (r->a_fd, buf, len, 0, (struct sockaddr *) &r->sender,
        sizeof r->sender);
}

static gpointer
relay_run (gpointer data)
{
  Relay *r = data;
  struct pollfd pfd[2] = { {r->a_fd, POLLIN, 0}, {r->b_fd, POLLIN, 0} };
  static guint8 buf[65536];

  while (!g_atomic_int_get (&r->stop)) {
    if (poll (pfd, 2, 20) <= 0)
      continue;
    if (pfd[0].revents & POLLIN) {
      struct sockaddr_in from;
      socklen_t flen = sizeof from;
      ssize_t n = recvfrom (r->a_fd, buf, sizeof buf, MSG_DONTWAIT,
          (struct sockaddr *) &from, &flen);
      if (n > 0) {
        r->sender = from;
        r->have_sender = TRUE;
        relay_one (r, buf, n, TRUE);
      }
    }
    if (pfd[1].revents & (POLLIN | POLLERR)) {
      ssize_t n = recv (r->b_fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0)
        relay_one (r, buf, n, FALSE);
    }
  }
  return NULL;
}

static void
relay_start (Relay * r, guint16 dst, double loss, guint64 seed,
    gboolean tamper)
{
  struct sockaddr_in a = { 0 };
  socklen_t alen = sizeof a;
  int rcvbuf = 4 << 20;

  memset (r, 0, sizeof *r);
  g_mutex_init (&r->lock);
  r->dst = dst;
  r->loss = loss;
  r->rng = seed ? seed : 1;
  r->tamper = tamper;
  r->fwd = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  r->back = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  r->a_fd = socket (AF_INET, SOCK_DGRAM, 0);
  r->b_fd = socket (AF_INET, SOCK_DGRAM, 0);
  fail_unless (r->a_fd >= 0 && r->b_fd >= 0);
  (void) setsockopt (r->a_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (r->a_fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (getsockname (r->a_fd, (struct sockaddr *) &a, &alen) == 0);
  r->a_port = ntohs (a.sin_port);
  a.sin_port = htons (dst);
  fail_unless (connect (r->b_fd, (struct sockaddr *) &a, sizeof a) == 0);
  r->thread = g_thread_new ("relay", relay_run, r);
}

static void
relay_stop (Relay * r)
{
  if (!r->thread)
    return;
  g_atomic_int_set (&r->stop, 1);
  g_thread_join (r->thread);
  r->thread = NULL;
}

static void
relay_free (Relay * r)
{
  relay_stop (r);
  close (r->a_fd);
  close (r->b_fd);
  g_ptr_array_unref (r->fwd);
  g_ptr_array_unref (r->back);
  g_mutex_clear (&r->lock);
}

static guint
count_zrtp (GPtrArray * pkts, gboolean zrtp)
{
  guint n = 0;

  for (guint i = 0; i < pkts->len; i++) {
    gsize len;
    const guint8 *d = g_bytes_get_data (g_ptr_array_index (pkts, i), &len);
    n += is_zrtp (d, len) == zrtp;
  }
  return n;
}

/* How many of the media datagrams carry a piece of the plaintext stream:
 * 20 bytes of RTP payload past any payload header (H.265 single NAL unit
 * or fragmentation unit) found anywhere in what entered the sender. SRTP
 * ciphertext matches by chance with probability ~2^-160. Datagrams too
 * short to look at are counted in *skipped. */
static guint
count_plaintext (GPtrArray * pkts, Rec * in, guint * checked, guint * skipped)
{
  GByteArray *all = g_byte_array_new ();
  guint n = 0;

  *checked = *skipped = 0;
  for (guint i = 0; i < in->bufs->len; i++) {
    gsize len;
    const guint8 *d = g_bytes_get_data (g_ptr_array_index (in->bufs, i), &len);
    g_byte_array_append (all, d, len);
  }
  for (guint i = 0; i < pkts->len; i++) {
    gsize len;
    const guint8 *d = g_bytes_get_data (g_ptr_array_index (pkts, i), &len);

    if (is_zrtp (d, len))
      continue;
    if (len < 16 + 20 + 10) {
      (*skipped)++;
      continue;
    }
    (*checked)++;
    if (memmem (all->data, all->len, d + 16, 20))
      n++;
  }
  g_byte_array_unref (all);
  return n;
}

/* ------------------------------------------------------------------------ */
/* Descriptions                                                             */

static gchar *
h265_sender (guint frames, guint key_int, guint16 port, const gchar * opts)
{
  gchar *n = frames ? g_strdup_printf ("num-buffers=%u", frames) :
      g_strdup ("");
  gchar *d = g_strdup_printf ("videotestsrc is-live=true %s ! "
      "video/x-raw,width=320,height=240,framerate=30/1 ! "
      "x265enc tune=zerolatency speed-preset=ultrafast key-int-max=%u ! "
      "h265parse config-interval=-1 ! "
      "video/x-h265,stream-format=byte-stream,alignment=au ! "
      "uvgrtpsink name=sink host=127.0.0.1 port=%u %s", n, key_int, port,
      opts);
  g_free (n);
  return d;
}

static gchar *
opus_sender (guint nbuf, guint16 port, const gchar * opts)
{
  gchar *n = nbuf ? g_strdup_printf ("num-buffers=%u", nbuf) :
      g_strdup ("");
  gchar *d = g_strdup_printf ("audiotestsrc is-live=true %s ! opusenc ! "
      "uvgrtpsink name=sink host=127.0.0.1 port=%u %s", n, port, opts);
  g_free (n);
  return d;
}

/* H.265: access units to an appsink and through the decoder. */
static gchar *
h265_receiver (guint16 port, const gchar * opts)
{
  return g_strdup_printf ("uvgrtpsrc name=src port=%u encoding-name=H265 %s "
      "! tee name=t t. ! queue ! appsink name=aus sync=false wait-on-eos=false "
      "t. ! queue ! h265parse ! avdec_h265 ! fakesink name=dec sync=false",
      port, opts);
}

static gchar *
opus_receiver (guint16 port, const gchar * opts)
{
  return g_strdup_printf ("uvgrtpsrc name=src port=%u encoding-name=OPUS %s "
      "! fakesink name=out sync=false", port, opts);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */

/* H.265 end to end through a relay that watches the wire: both sides
 * secure with one SAS, every access unit sent arrives equal and decodes,
 * and nothing but ZRTP and SRTP crossed. */
GST_START_TEST (test_h265_secure_exact)
{
  guint16 port = free_udp_port ();
  Relay r;
  Rec in, out, dec;
  Pipe *rx, *tx;
  gchar *d;
  Both sec = { 0 };
  StatWait all = { 0 };
  guint64 sent_aus, held, packets;
  guint first_key, clear, checked, skipped;

  relay_start (&r, port, 0, 0, FALSE);
  d = h265_receiver (port, "zrtp=true");
  rx = pipe_new ("receiver", d);
  g_free (d);
  d = h265_sender (90, 30, r.a_port, "zrtp=true");
  tx = pipe_new ("sender", d);
  g_free (d);
  rec_init (&in);
  rec_init (&out);
  rec_init (&dec);
  rec_attach (&in, tx, "sink", "sink");
  count_attach (&dec, rx, "dec");

  pipe_play (rx);
  pipe_play (tx);
  sec = (Both) {
  tx, rx, "sink", "src", "secure", 1};
  fail_unless (wait_for (both_have, &sec, 20000), "not secure");
  check_secure_pair (tx, "sink", rx, "src", "EC25");

  fail_unless (wait_for (pipe_eos, tx, 60000), "sender did not finish");
  sent_aus = stat_of (tx, "sink", "access-units");
  held = stat_of (tx, "sink", "zrtp-held");
  all = (StatWait) {
  rx, "src", "access-units", sent_aus - held};
  fail_unless (wait_for (stat_reaches, &all, 10000),
      "received %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " access units",
      stat_of (rx, "src", "access-units"), sent_aus - held);
  fail_unless (gst_element_send_event (el (rx, "src"), gst_event_new_eos ()));
  fail_unless (wait_for (pipe_eos, rx, 20000), "receiver did not drain");
  relay_stop (&r);

  /* every access unit sent arrived, equal, in order; the first key frame
   * on decodes */
  rec_pull (&out, rx, "aus");
  fail_unless_equals_int (in.bufs->len, sent_aus);
  first_key = check_delivered (&in, &out, held);
  fail_unless (first_key < out.bufs->len, "no key frame arrived");
  fail_unless_equals_int (rec_count (&dec), out.bufs->len - first_key);
  GST_INFO ("%u access units, %" G_GUINT64_FORMAT " held, first key frame "
      "%u, %u decoded", in.bufs->len, held, first_key, rec_count (&dec));

  /* exact accounting on the wire */
  packets = stat_of (tx, "sink", "packets");
  fail_unless (packets > 0);
  fail_unless_equals_uint64 (count_zrtp (r.fwd, FALSE), packets);
  fail_unless_equals_uint64 (count_zrtp (r.fwd, TRUE),
      stat_of (tx, "sink", "zrtp-sent"));
  fail_unless_equals_uint64 (count_zrtp (r.fwd, TRUE),
      stat_of (rx, "src", "zrtp-received"));
  fail_unless_equals_uint64 (count_zrtp (r.back, TRUE),
      stat_of (rx, "src", "zrtp-sent"));
  fail_unless_equals_uint64 (count_zrtp (r.back, TRUE),
      stat_of (tx, "sink", "zrtp-received"));
  fail_unless_equals_int (count_zrtp (r.back, FALSE), 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "packets"), packets);
  fail_unless_equals_uint64 (stat_of (rx, "src", "srtp-auth-failures"), 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-dropped"), 0);
  fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-sent-clear"), 0);
  fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-bad"), 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-bad"), 0);

  /* and nothing of the stream in clear */
  clear = count_plaintext (r.fwd, &in, &checked, &skipped);
  fail_unless_equals_int (clear, 0);
  fail_unless_equals_uint64 (checked + skipped, packets);
  fail_unless (checked > packets * 9 / 10, "only %u of %" G_GUINT64_FORMAT
      " datagrams were long enough to check", checked, packets);

  pipe_free (tx);
  pipe_free (rx);
  rec_clear (&in);
  rec_clear (&out);
  rec_clear (&dec);
  relay_free (&r);
}

GST_END_TEST;

/* The receiver starts after the sender's Hellos ran out: the sender starts
 * over quietly and the two get secure. What the sender held back meanwhile
 * never leaves; what it sends once secure arrives byte for byte, and the
 * key frame it asks its encoder for once secure comes within a few frames
 * (the encoder's own would come after 600). */
GST_START_TEST (test_late_receiver)
{
  guint16 port = free_udp_port ();
  Pipe *rx, *tx;
  Rec in, out, dec;
  gchar *d;
  Both sec;
  StatWait all;
  guint64 held;
  guint first_key;

  /* 4.5 s of waiting and 2 s of video */
  d = h265_sender (195, 600, port, "zrtp=true");
  tx = pipe_new ("sender", d);
  g_free (d);
  d = h265_receiver (port, "zrtp=true");
  rx = pipe_new ("receiver", d);
  g_free (d);
  rec_init (&in);
  rec_init (&out);
  rec_init (&dec);
  rec_attach (&in, tx, "sink", "sink");
  count_attach (&dec, rx, "dec");

  pipe_play (tx);
  /* the Hello budget is about 3.8 s */
  run_for (4500);
  fail_unless_equals_int (tx->msgs->len, 0);
  fail_unless_equals_int (int_prop (tx, "sink", "zrtp-state"), 1);
  fail_unless (stat_of (tx, "sink", "zrtp-restarts") >= 1);
  fail_unless_equals_uint64 (stat_of (tx, "sink", "packets"), 0);
  fail_unless (stat_of (tx, "sink", "zrtp-held") > 0);

  pipe_play (rx);
  sec = (Both) {
  tx, rx, "sink", "src", "secure", 1};
  fail_unless (wait_for (both_have, &sec, 10000), "not secure");
  check_secure_pair (tx, "sink", rx, "src", "EC25");

  fail_unless (wait_for (pipe_eos, tx, 30000), "sender did not finish");
  held = stat_of (tx, "sink", "zrtp-held");
  all = (StatWait) {
  rx, "src", "access-units", stat_of (tx, "sink", "access-units") - held};
  fail_unless (wait_for (stat_reaches, &all, 10000));
  fail_unless (gst_element_send_event (el (rx, "src"), gst_event_new_eos ()));
  fail_unless (wait_for (pipe_eos, rx, 20000), "receiver did not drain");
  fail_unless_equals_int (count_msgs (tx, "sink", "failed"), 0);

  rec_pull (&out, rx, "aus");
  fail_unless_equals_uint64 (in.bufs->len, stat_of (tx, "sink",
          "access-units"));
  first_key = check_delivered (&in, &out, held);
  GST_INFO ("%" G_GUINT64_FORMAT " of %u access units held, first key frame "
      "%u after", held, in.bufs->len, first_key);
  fail_unless (held > 100);
  fail_unless (first_key < 15, "no key frame soon after secure (%u)",
      first_key);
  fail_unless_equals_int (rec_count (&dec), out.bufs->len - first_key);
  fail_unless_equals_uint64 (stat_of (rx, "src", "srtp-auth-failures"), 0);

  pipe_free (tx);
  pipe_free (rx);
  rec_clear (&in);
  rec_clear (&out);
  rec_clear (&dec);
}

GST_END_TEST;

static gboolean
stat_positive (gpointer data)
{
  StatWait *w = data;

  return stat_of (w->p, w->name, w->field) > 0;
}

/* One exchange between running pipelines: secure, same SAS, media
 * decrypted. */
static void
one_exchange (Pipe * tx, Pipe * rx, const gchar * ka, guint run)
{
  Both sec = { tx, rx, "sink", "src", "secure", 1 };
  StatWait media = { rx, "src", "packets", 0 };

  fail_unless (wait_for (both_have, &sec, 15000), "run %u: not secure", run);
  check_secure_pair (tx, "sink", rx, "src", ka);
  fail_unless (wait_for (stat_positive, &media, 5000), "run %u: no media",
      run);
  fail_unless_equals_uint64 (stat_of (rx, "src", "srtp-auth-failures"), 0);
  fail_unless_equals_int (count_msgs (tx, "sink", "failed"), 0);
  fail_unless_equals_int (count_msgs (rx, "src", "failed"), 0);
}

/* 50 exchanges in a row through element start/stop, the same elements each
 * time, either side first: none fails. EC25 with cache files (the SAS
 * verified in the first run is reported verified in the next ones), then
 * DH3k. */
GST_START_TEST (test_many_exchanges)
{
  guint16 port = free_udp_port ();
  gchar *dir = g_dir_make_tmp ("zrtp-elements-XXXXXX", NULL);
  gchar *opts[2], *d;
  Pipe *tx[2], *rx[2];

  opts[0] = g_strdup_printf ("zrtp=true zrtp-cache-file=%s/a.zrtp", dir);
  opts[1] = g_strdup ("zrtp=true zrtp-key-agreements=DH3k");
  for (int k = 0; k < 2; k++) {
    d = opus_sender (0, port, opts[k]);
    tx[k] = pipe_new ("sender", d);
    g_free (d);
    g_free (opts[k]);
  }
  opts[0] = g_strdup_printf ("zrtp=true zrtp-cache-file=%s/b.zrtp", dir);
  opts[1] = g_strdup ("zrtp=true zrtp-key-agreements=DH3k");
  for (int k = 0; k < 2; k++) {
    d = opus_receiver (port, opts[k]);
    rx[k] = pipe_new ("receiver", d);
    g_free (d);
    g_free (opts[k]);
  }

  for (guint run = 0; run < 50; run++) {
    int k = run < 40 ? 0 : 1;
    gboolean v;

    if (run & 1) {
      pipe_play (tx[k]);
      pipe_play (rx[k]);
    } else {
      pipe_play (rx[k]);
      pipe_play (tx[k]);
    }
    one_exchange (tx[k], rx[k], k ? "DH3k" : "EC25", run);
    if (run == 0) {
      /* the users compared the SAS */
      g_signal_emit_by_name (el (tx[k], "sink"), "zrtp-set-sas-verified",
          TRUE, &v);
      fail_unless (v);
      g_signal_emit_by_name (el (rx[k], "src"), "zrtp-set-sas-verified",
          TRUE, &v);
      fail_unless (v);
      g_object_get (el (tx[k], "sink"), "zrtp-sas-verified", &v, NULL);
      fail_unless (v);
    } else if (k == 0) {
      const GstStructure *m = find_msg (tx[k], "sink", "secure");
      fail_unless (gst_structure_get_boolean (m, "sas-verified", &v) && v,
          "run %u: SAS not verified from the cache", run);
      fail_unless (gst_structure_get_boolean (m, "secrets-matched", &v) && v);
      fail_unless (gst_structure_get_boolean (m, "peer-sas-verified", &v)
          && v);
    }
    if (run & 1) {
      pipe_stop (rx[k]);
      pipe_stop (tx[k]);
    } else {
      pipe_stop (tx[k]);
      pipe_stop (rx[k]);
    }
  }

  for (int k = 0; k < 2; k++) {
    pipe_free (tx[k]);
    pipe_free (rx[k]);
  }
  d = g_build_filename (dir, "a.zrtp", NULL);
  g_unlink (d);
  g_free (d);
  d = g_build_filename (dir, "b.zrtp", NULL);
  g_unlink (d);
  g_free (d);
  g_rmdir (dir);
  g_free (dir);
}

GST_END_TEST;

/* 10% loss both ways (seeded): retransmissions carry the exchange. */
GST_START_TEST (test_lossy)
{
  static const guint64 seeds[] = { 0x5eed0001, 0x5eed0002, 0x5eed0003,
    0x5eed0004, 0x5eed0005
  };
  guint zrtp_lost = 0;

  for (guint i = 0; i < G_N_ELEMENTS (seeds); i++) {
    guint16 port = free_udp_port ();
    Relay r;
    Pipe *rx, *tx;
    gchar *d;

    relay_start (&r, port, 0.10, seeds[i], FALSE);
    d = opus_receiver (port, "zrtp=true");
    rx = pipe_new ("receiver", d);
    g_free (d);
    d = opus_sender (0, r.a_port, "zrtp=true");
    tx = pipe_new ("sender", d);
    g_free (d);
    pipe_play (rx);
    pipe_play (tx);
    one_exchange (tx, rx, "EC25", i);
    /* a second or so of media under loss: still no forgery */
    run_for (1000);
    fail_unless_equals_uint64 (stat_of (rx, "src", "srtp-auth-failures"), 0);
    pipe_free (tx);
    pipe_free (rx);
    relay_stop (&r);
    GST_INFO ("seed %" G_GINT64_MODIFIER "x: %u of %u datagrams dropped, "
        "%u of them ZRTP", seeds[i], r.dropped, r.fwd->len + r.back->len,
        r.dropped_zrtp);
    fail_unless (r.dropped > 0);
    zrtp_lost += r.dropped_zrtp;
    relay_free (&r);
  }
  /* the exchanges did meet loss */
  fail_unless (zrtp_lost > 0);
}

GST_END_TEST;

typedef struct
{
  Pipe *tx, *rx;
  const gchar *sink, *src;
} Pair;

static gboolean
pair_all_received (gpointer data)
{
  Pair *p = data;

  return stat_of (p->rx, p->src, "access-units") ==
      stat_of (p->tx, p->sink, "access-units") - stat_of (p->tx, p->sink,
      "zrtp-held");
}

static gboolean
four_secure (gpointer data)
{
  Pipe **p = data;

  return find_msg (p[0], "vsink", "secure") &&
      find_msg (p[0], "asink", "secure") &&
      find_msg (p[1], "vsrc", "secure") && find_msg (p[1], "asrc", "secure");
}

/* An H.265 and an Opus stream of one call: one does the Diffie-Hellman
 * exchange, the other joins it in Multistream mode; one SAS; both streams
 * arrive decrypted, equal, and the video decodes. */
GST_START_TEST (test_multistream)
{
  guint16 vport = free_udp_port (), aport = free_udp_port ();
  Pipe *tx, *rx, *both[2];
  Rec vin, vout, ain, aout, dec;
  Pair vp, ap;
  gchar *d;
  const gchar *sas;
  guint mult = 0, first_key;

  d = g_strdup_printf ("uvgrtpsrc name=vsrc port=%u encoding-name=H265 "
      "zrtp=true zrtp-session=call1 ! tee name=t "
      "t. ! queue ! appsink name=vaus sync=false wait-on-eos=false "
      "t. ! queue ! h265parse ! avdec_h265 ! fakesink name=dec sync=false "
      "uvgrtpsrc name=asrc port=%u encoding-name=OPUS zrtp=true "
      "zrtp-session=call1 ! appsink name=aaus sync=false wait-on-eos=false", vport, aport);
  rx = pipe_new ("receiver", d);
  g_free (d);
  d = g_strdup_printf ("videotestsrc is-live=true num-buffers=90 ! "
      "video/x-raw,width=320,height=240,framerate=30/1 ! "
      "x265enc tune=zerolatency speed-preset=ultrafast key-int-max=30 ! "
      "h265parse config-interval=-1 ! "
      "video/x-h265,stream-format=byte-stream,alignment=au ! "
      "uvgrtpsink name=vsink host=127.0.0.1 port=%u zrtp=true "
      "zrtp-session=call1 "
      "audiotestsrc is-live=true num-buffers=130 ! opusenc ! "
      "uvgrtpsink name=asink host=127.0.0.1 port=%u zrtp=true "
      "zrtp-session=call1", vport, aport);
  tx = pipe_new ("sender", d);
  g_free (d);
  rec_init (&vin);
  rec_init (&vout);
  rec_init (&ain);
  rec_init (&aout);
  rec_init (&dec);
  rec_attach (&vin, tx, "vsink", "sink");
  rec_attach (&ain, tx, "asink", "sink");
  count_attach (&dec, rx, "dec");

  pipe_play (rx);
  pipe_play (tx);
  both[0] = tx;
  both[1] = rx;
  fail_unless (wait_for (four_secure, both, 20000), "not all secure");

  /* one stream did Diffie-Hellman, the other Multistream, on both sides */
  for (int k = 0; k < 2; k++) {
    const gchar *sink = k ? "asink" : "vsink", *src = k ? "asrc" : "vsrc";
    const gchar *ka = gst_structure_get_string (find_msg (tx, sink, "secure"),
        "key-agreement");

    fail_unless (g_str_equal (ka, "EC25") || g_str_equal (ka, "Mult"));
    mult += g_str_equal (ka, "Mult");
    check_secure_pair (tx, sink, rx, src, ka);
  }
  fail_unless_equals_int (mult, 1);
  /* one SAS and one ZID per side for the call */
  sas = gst_structure_get_string (find_msg (tx, "vsink", "secure"), "sas");
  fail_unless_equals_string (gst_structure_get_string (find_msg (tx, "asink",
              "secure"), "sas"), sas);
  fail_unless_equals_string (gst_structure_get_string (find_msg (tx, "vsink",
              "secure"), "zid"), gst_structure_get_string (find_msg (tx,
              "asink", "secure"), "zid"));
  fail_unless_equals_string (gst_structure_get_string (find_msg (rx, "vsrc",
              "secure"), "zid"), gst_structure_get_string (find_msg (rx,
              "asrc", "secure"), "zid"));

  fail_unless (wait_for (pipe_eos, tx, 60000), "sender did not finish");
  vp = (Pair) {
  tx, rx, "vsink", "vsrc"};
  ap = (Pair) {
  tx, rx, "asink", "asrc"};
  fail_unless (wait_for (pair_all_received, &vp, 10000), "video incomplete");
  fail_unless (wait_for (pair_all_received, &ap, 10000), "audio incomplete");
  fail_unless (gst_element_send_event (el (rx, "vsrc"), gst_event_new_eos ()));
  fail_unless (gst_element_send_event (el (rx, "asrc"), gst_event_new_eos ()));
  fail_unless (wait_for (pipe_eos, rx, 20000), "receiver did not drain");

  rec_pull (&vout, rx, "vaus");
  rec_pull (&aout, rx, "aaus");
  first_key = check_delivered (&vin, &vout, stat_of (tx, "vsink", "zrtp-held"));
  fail_unless (first_key < vout.bufs->len);
  fail_unless_equals_int (rec_count (&dec), vout.bufs->len - first_key);
  check_delivered (&ain, &aout, stat_of (tx, "asink", "zrtp-held"));
  fail_unless (aout.bufs->len > 20);
  GST_INFO ("video %u of %u access units, audio %u of %u packets, %u "
      "decoded", vout.bufs->len, vin.bufs->len, aout.bufs->len, ain.bufs->len,
      rec_count (&dec));
  for (int k = 0; k < 2; k++)
    fail_unless_equals_uint64 (stat_of (rx, k ? "asrc" : "vsrc",
            "srtp-auth-failures"), 0);

  pipe_free (tx);
  pipe_free (rx);
  rec_clear (&vin);
  rec_clear (&vout);
  rec_clear (&ain);
  rec_clear (&aout);
  rec_clear (&dec);
}

GST_END_TEST;

/* Collects what a stock udpsrc receives. */
static gchar *
udpsrc_receiver (guint16 port)
{
  return g_strdup_printf ("udpsrc port=%u ! appsink name=raw sync=false",
      port);
}

/* Without zrtp-allow-clear, a sender whose peer never answers (a stock
 * udpsrc) sends ZRTP only; with it, clear RTP, which the plaintext check
 * used on the other tests' wires recognises. */
GST_START_TEST (test_no_clear_to_plain_peer)
{
  for (int allow = 0; allow < 2; allow++) {
    guint16 port = free_udp_port ();
    Pipe *rx, *tx;
    Rec in, got;
    gchar *d;
    guint64 packets;
    guint checked, skipped, clear;

    d = udpsrc_receiver (port);
    rx = pipe_new ("udpsrc", d);
    g_free (d);
    d = h265_sender (45, 30, port, allow ? "zrtp=true zrtp-allow-clear=true" :
        "zrtp=true");
    tx = pipe_new ("sender", d);
    g_free (d);
    rec_init (&in);
    rec_init (&got);
    rec_attach (&in, tx, "sink", "sink");
    pipe_play (rx);
    pipe_play (tx);
    fail_unless (wait_for (pipe_eos, tx, 30000));
    /* the sender's ZRTP goes on until it stops; its counters stay */
    pipe_stop (tx);
    run_for (300);
    rec_pull (&got, rx, "raw");

    packets = stat_of (tx, "sink", "packets");
    fail_unless_equals_int (tx->msgs->len, 0);
    fail_unless (count_zrtp (got.bufs, TRUE) > 0);
    fail_unless_equals_uint64 (count_zrtp (got.bufs, TRUE),
        stat_of (tx, "sink", "zrtp-sent"));
    fail_unless_equals_uint64 (count_zrtp (got.bufs, FALSE), packets);
    clear = count_plaintext (got.bufs, &in, &checked, &skipped);
    if (!allow) {
      fail_unless_equals_uint64 (packets, 0);
      fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-held"),
          in.bufs->len);
      fail_unless (stat_of (tx, "sink", "zrtp-held-packets") > in.bufs->len);
    } else {
      fail_unless (packets > 0);
      fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-sent-clear"),
          packets);
      fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-held"), 0);
      fail_unless (checked > packets * 9 / 10);
      fail_unless_equals_int (clear, checked);
    }
    pipe_free (tx);
    pipe_free (rx);
    rec_clear (&in);
    rec_clear (&got);
  }
}

GST_END_TEST;

/* A receiver with zrtp drops clear RTP from a plain sender, every datagram
 * of it, and counts it. */
GST_START_TEST (test_receiver_drops_clear)
{
  guint16 port = free_udp_port ();
  Pipe *rx, *tx;
  gchar *d;
  StatWait w;
  guint64 packets;

  d = opus_receiver (port, "zrtp=true");
  rx = pipe_new ("receiver", d);
  g_free (d);
  d = opus_sender (60, port, "");
  tx = pipe_new ("sender", d);
  g_free (d);
  pipe_play (rx);
  pipe_play (tx);
  fail_unless (wait_for (pipe_eos, tx, 20000));
  packets = stat_of (tx, "sink", "packets");
  fail_unless (packets > 50);
  w = (StatWait) {
  rx, "src", "zrtp-dropped", packets};
  fail_unless (wait_for (stat_reaches, &w, 5000));
  run_for (200);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-dropped"), packets);
  fail_unless_equals_uint64 (stat_of (rx, "src", "packets"), 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "access-units"), 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-received-clear"), 0);
  fail_if (int_prop (rx, "src", "zrtp-state") == STATE_SECURE);
  pipe_free (tx);
  pipe_free (rx);
}

GST_END_TEST;

/* zrtp with srtp-key: an error at start naming both properties. */
GST_START_TEST (test_zrtp_and_srtp_key)
{
  const gchar *descs[2] = {
    "audiotestsrc ! opusenc ! uvgrtpsink name=e host=127.0.0.1 port=9 "
        "zrtp=true srtp-key=" SOME_KEY,
    "uvgrtpsrc name=e port=0 encoding-name=OPUS zrtp=true srtp-key="
        SOME_KEY " ! fakesink",
  };

  for (int i = 0; i < 2; i++) {
    Pipe *p = pipe_new ("conflict", descs[i]);
    const gchar *m;

    p->allow_errors = TRUE;
    fail_unless (gst_element_set_state (p->pipe, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE);
    pump ();
    fail_unless (p->errors->len >= 1);
    m = g_ptr_array_index (p->errors, 0);
    fail_unless (strstr (m, "'zrtp'") && strstr (m, "'srtp-key'"), "%s", m);
    pipe_free (p);
  }
}

GST_END_TEST;

/* A Commit altered on the way (its MAC, with a CRC that matches): the
 * exchange fails on both sides with a reason, and no media flows. */
GST_START_TEST (test_tampered_commit)
{
  guint16 port = free_udp_port ();
  Relay r;
  Pipe *rx, *tx;
  gchar *d;
  Both failed;
  gboolean local_seen = FALSE;

  relay_start (&r, port, 0, 0, TRUE);
  d = opus_receiver (port, "zrtp=true");
  rx = pipe_new ("receiver", d);
  g_free (d);
  d = opus_sender (0, r.a_port, "zrtp=true");
  tx = pipe_new ("sender", d);
  g_free (d);
  pipe_play (rx);
  pipe_play (tx);
  failed = (Both) {
  tx, rx, "sink", "src", "failed", 1};
  fail_unless (wait_for (both_have, &failed, 15000), "no failure");
  /* nothing starts over after a real failure */
  run_for (1500);

  for (int k = 0; k < 2; k++) {
    Pipe *p = k ? rx : tx;
    const gchar *name = k ? "src" : "sink";
    const GstStructure *m = find_msg (p, name, "failed");
    const gchar *reason = gst_structure_get_string (m, "reason");
    guint code = 0;
    gboolean from_peer = TRUE;

    fail_unless (reason && *reason);
    fail_unless (gst_structure_get_uint (m, "error-code", &code));
    fail_unless (code != 0 && code != 0xb0, "error 0x%x", code);
    fail_unless (gst_structure_get_boolean (m, "error-from-peer", &from_peer));
    local_seen |= !from_peer;
    fail_unless_equals_string (gst_structure_get_string (m, "sas"), "");
    fail_unless_equals_int (count_msgs (p, name, "secure"), 0);
    fail_unless_equals_int (count_msgs (p, name, "failed"), 1);
    fail_unless_equals_int (int_prop (p, name, "zrtp-state"), STATE_FAILED);
    GST_INFO ("%s: %s (0x%x)", name, reason, code);
  }
  fail_unless (local_seen, "one side found the forgery itself");
  fail_unless (r.tampered > 0);
  fail_unless_equals_uint64 (stat_of (tx, "sink", "packets"), 0);
  fail_unless (stat_of (tx, "sink", "zrtp-held") > 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "packets"), 0);
  fail_unless_equals_int (count_zrtp (r.fwd, FALSE), 0);
  pipe_free (tx);
  pipe_free (rx);
  relay_free (&r);
}

GST_END_TEST;

/* A zrtp-session whose first stream fails for real (its Commit forged on
 * the way) takes the streams waiting to join it down with it, saying why,
 * instead of leaving them waiting. */
GST_START_TEST (test_multistream_leader_fails)
{
  guint16 port_a = free_udp_port (), port_b = free_udp_port ();
  Relay r;
  Pipe *rx_a, *rx_b, *tx_a, *tx_b;
  gchar *d;
  Both failed;
  const GstStructure *m;
  const gchar *reason;
  guint code = 0;

  relay_start (&r, port_a, 0, 0, TRUE);
  d = opus_receiver (port_a, "zrtp=true zrtp-session=call2");
  rx_a = pipe_new ("receiver A", d);
  g_free (d);
  d = opus_receiver (port_b, "zrtp=true zrtp-session=call2");
  rx_b = pipe_new ("receiver B", d);
  g_free (d);
  d = opus_sender (0, r.a_port, "zrtp=true zrtp-session=call2");
  tx_a = pipe_new ("sender A", d);
  g_free (d);
  d = opus_sender (0, port_b, "zrtp=true zrtp-session=call2");
  tx_b = pipe_new ("sender B", d);
  g_free (d);
  pipe_play (rx_a);
  pipe_play (rx_b);
  /* A first, so that it leads the session on both sides */
  pipe_play (tx_a);
  run_for (300);
  pipe_play (tx_b);

  failed = (Both) {
  tx_a, rx_a, "sink", "src", "failed", 1};
  fail_unless (wait_for (both_have, &failed, 15000), "A did not fail");
  failed = (Both) {
  tx_b, tx_b, "sink", "sink", "failed", 1};
  fail_unless (wait_for (both_have, &failed, 5000), "B kept waiting");
  m = find_msg (tx_b, "sink", "failed");
  reason = gst_structure_get_string (m, "reason");
  fail_unless (reason && g_str_has_prefix (reason,
          "the first stream of ZRTP session \"call2\" failed: "), "%s",
      GST_STR_NULL (reason));
  fail_unless (gst_structure_get_uint (m, "error-code", &code));
  fail_unless (code != 0 && code != 0xb0, "error 0x%x", code);
  fail_unless_equals_int (int_prop (tx_b, "sink", "zrtp-state"), STATE_FAILED);
  /* and nothing starts over, nothing is sent: B never got as far as a
   * Hello, so its receiver has nothing to report */
  run_for (1000);
  fail_unless_equals_int (count_msgs (tx_b, "sink", "failed"), 1);
  fail_unless_equals_int (count_msgs (tx_b, "sink", "secure"), 0);
  fail_unless_equals_uint64 (stat_of (tx_b, "sink", "zrtp-sent"), 0);
  fail_unless_equals_uint64 (stat_of (tx_b, "sink", "packets"), 0);
  fail_unless_equals_int (count_msgs (rx_b, "src", "secure"), 0);
  fail_unless_equals_uint64 (stat_of (rx_b, "src", "packets"), 0);
  pipe_free (tx_b);
  pipe_free (tx_a);
  pipe_free (rx_b);
  pipe_free (rx_a);
  relay_free (&r);
}

GST_END_TEST;

typedef struct
{
  Pipe *p;
  const gchar *name;
  guint n;
} NSecure;

static gboolean
n_secure (gpointer data)
{
  NSecure *w = data;

  return count_msgs (w->p, w->name, "secure") >= w->n;
}

/* After a restart of one side, both sides are secure again with one SAS
 * and media decrypts: tx has posted n_tx secure messages so far, rx
 * n_rx. */
static void
check_secure_again (Pipe * tx, guint n_tx, Pipe * rx, guint n_rx)
{
  NSecure a = { tx, "sink", n_tx }, b = { rx, "src", n_rx };
  StatWait media = { rx, "src", "packets", 0 };
  guint64 before = stat_of (rx, "src", "packets");

  fail_unless (wait_for (n_secure, &a, 10000), "sender not secure again");
  fail_unless (wait_for (n_secure, &b, 10000), "receiver not secure again");
  fail_unless_equals_string (gst_structure_get_string (find_msg_n (tx, "sink",
              "secure", n_tx - 1), "sas"),
      gst_structure_get_string (find_msg_n (rx, "src", "secure", n_rx - 1),
          "sas"));
  media.at_least = before + 10;
  fail_unless (wait_for (stat_reaches, &media, 5000), "no media after");
  fail_unless_equals_uint64 (stat_of (rx, "src", "srtp-auth-failures"), 0);
  fail_unless_equals_int (count_msgs (tx, "sink", "failed"), 0);
  fail_unless_equals_int (count_msgs (rx, "src", "failed"), 0);
}

/* One side restarts while the other keeps its keys. The receiver: the
 * media that reaches the new receiver without keys starts a new exchange,
 * and the sender takes the new Hello for a peer that started over. The
 * sender: its new Hello makes the receiver start over. Both get secure
 * again each time, quickly. */
GST_START_TEST (test_restarts)
{
  guint16 port = free_udp_port ();
  Pipe *rx, *tx;
  gchar *d;

  d = opus_receiver (port, "zrtp=true");
  rx = pipe_new ("receiver", d);
  g_free (d);
  d = opus_sender (0, port, "zrtp=true");
  tx = pipe_new ("sender", d);
  g_free (d);
  pipe_play (rx);
  pipe_play (tx);
  one_exchange (tx, rx, "EC25", 0);

  /* the receiver restarts (its messages are forgotten) */
  pipe_stop (rx);
  run_for (300);
  pipe_play (rx);
  check_secure_again (tx, 2, rx, 1);
  fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-restarts"), 1);

  /* the sender restarts */
  pipe_stop (tx);
  run_for (300);
  pipe_play (tx);
  check_secure_again (tx, 1, rx, 2);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-restarts"), 1);
  fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-restarts"), 0);

  pipe_free (tx);
  pipe_free (rx);
}

GST_END_TEST;

static gboolean
state_is (gpointer data)
{
  StatWait *w = data;           /* field: the property; at_least: the state */

  return int_prop (w->p, w->name, w->field) == (gint) w->at_least;
}

/* A sender that vanishes in the middle of an exchange: the receiver's
 * exchange times out quietly, as docs/zrtp.md says. No failed message,
 * zrtp-state back to idle (not failed), and the next sender's exchange is
 * followed as usual. The vanishing sender is a Hello recorded from a
 * uvgrtpsink and replayed once from a socket that never answers. */
GST_START_TEST (test_receiver_peer_vanishes)
{
  guint16 port = free_udp_port ();
  struct sockaddr_in a = { 0 }, to = { 0 };
  socklen_t alen = sizeof a;
  guint8 hello[1500];
  gssize n = -1;
  struct pollfd pfd;
  Pipe *rx, *tx;
  StatWait w;
  gchar *d;
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  fail_unless (fd >= 0);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
  fail_unless (getsockname (fd, (struct sockaddr *) &a, &alen) == 0);

  /* a Hello, from a sender that is then gone */
  d = opus_sender (0, ntohs (a.sin_port), "zrtp=true");
  tx = pipe_new ("recorded", d);
  g_free (d);
  pipe_play (tx);
  pfd.fd = fd;
  pfd.events = POLLIN;
  while (poll (&pfd, 1, 5000) == 1) {
    n = recv (fd, hello, sizeof hello, 0);
    if (n > 0 && is_zrtp_type (hello, (gsize) n, "Hello   "))
      break;
    n = -1;
  }
  pipe_free (tx);
  fail_unless (n > 0, "no Hello from uvgrtpsink");

  d = opus_receiver (port, "zrtp=true");
  rx = pipe_new ("receiver", d);
  g_free (d);
  pipe_play (rx);
  run_for (200);
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  to.sin_port = htons (port);
  fail_unless (sendto (fd, hello, (gsize) n, 0, (struct sockaddr *) &to,
          sizeof to) == n);
  /* it answers (its Hellos come to fd, unread) ... */
  w = (StatWait) {
  rx, "src", "zrtp-sent", 1};
  fail_unless (wait_for (stat_reaches, &w, 5000), "no answer to the Hello");
  fail_unless (int_prop (rx, "src", "zrtp-state") != 0);
  /* ... until its Hellos run out (about 4 s): idle, quietly */
  w = (StatWait) {
  rx, "src", "zrtp-state", 0};
  fail_unless (wait_for (state_is, &w, 10000), "zrtp-state is %d, not idle",
      int_prop (rx, "src", "zrtp-state"));
  run_for (300);
  fail_unless_equals_int (count_msgs (rx, "src", "failed"), 0);
  fail_unless_equals_int (int_prop (rx, "src", "zrtp-state"), 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-restarts"), 0);

  /* a real sender turns up: secure as usual */
  d = opus_sender (0, port, "zrtp=true");
  tx = pipe_new ("sender", d);
  g_free (d);
  pipe_play (tx);
  one_exchange (tx, rx, "EC25", 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-restarts"), 1);

  pipe_free (tx);
  pipe_free (rx);
  close (fd);
}

GST_END_TEST;

/* A third party that can send UDP to both elements runs ordinary ZRTP
 * exchanges against them while they are secure, for longer than the peer
 * timeout, claiming the real peer's ZID where that can help it (each
 * intruder is a uvgrtpsink with zrtp=true: it sends Hellos,
 * starts over when unanswered, and would complete an exchange with whoever
 * answered). The receiver ignores and counts every one of its packets and
 * never answers it; the sender's socket, connected to its peer, never even
 * hands them over. Both stay with their peer: one secure message each, no
 * restart, no authentication failure, and every access unit sent once
 * secure arrives byte for byte and decodes. */
GST_START_TEST (test_third_party)
{
  guint16 port = free_udp_port ();
  Relay r;
  Rec in, out, dec;
  Pipe *rx, *tx, *intr_rx, *intr_tx;
  gchar *d;
  Both sec = { 0 };
  StatWait all = { 0 };
  guint64 sent_aus, held, sink_received, sent_rx, sent_tx, media;
  guint first_key;
  gchar *zid, *opts;

  relay_start (&r, port, 0, 0, FALSE);
  d = h265_receiver (port, "zrtp=true");
  rx = pipe_new ("receiver", d);
  g_free (d);
  /* 8 s of video */
  d = h265_sender (240, 30, r.a_port, "zrtp=true");
  tx = pipe_new ("sender", d);
  g_free (d);
  rec_init (&in);
  rec_init (&out);
  rec_init (&dec);
  rec_attach (&in, tx, "sink", "sink");
  count_attach (&dec, rx, "dec");
  pipe_play (rx);
  pipe_play (tx);
  sec = (Both) {
  tx, rx, "sink", "src", "secure", 1};
  fail_unless (wait_for (both_have, &sec, 20000), "not secure");
  check_secure_pair (tx, "sink", rx, "src", "EC25");
  run_for (200);
  fail_unless (r.have_sender);
  sink_received = stat_of (tx, "sink", "zrtp-received");
  media = stat_of (rx, "src", "access-units");

  /* one intruder at the receiver's port, claiming the sender's ZID (it is
   * in every Hello), one at the sender's */
  zid = str_prop (tx, "sink", "zrtp-zid");
  opts = g_strdup_printf ("zrtp=true zrtp-zid=%s", zid);
  d = opus_sender (0, port, opts);
  intr_rx = pipe_new ("intruder of the receiver", d);
  g_free (d);
  g_free (opts);
  d = opus_sender (0, ntohs (r.sender.sin_port), "zrtp=true");
  intr_tx = pipe_new ("intruder of the sender", d);
  g_free (d);
  pipe_play (intr_rx);
  pipe_play (intr_tx);
  run_for (4500);
  fail_if (stat_of (intr_rx, "sink", "zrtp-restarts") == 0,
      "the intruder did not try twice");
  pipe_stop (intr_rx);
  pipe_stop (intr_tx);
  run_for (300);
  sent_rx = stat_of (intr_rx, "sink", "zrtp-sent");
  sent_tx = stat_of (intr_tx, "sink", "zrtp-sent");
  GST_INFO ("intruders sent %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT
      " ZRTP packets", sent_rx, sent_tx);
  fail_unless (sent_rx >= 21 && sent_tx >= 21);
  fail_unless_equals_int (int_prop (intr_rx, "sink", "zrtp-state") ==
      STATE_SECURE, FALSE);
  fail_unless_equals_int (int_prop (intr_tx, "sink", "zrtp-state") ==
      STATE_SECURE, FALSE);
  /* counted exactly, never answered */
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-foreign"), sent_rx);
  fail_unless_equals_uint64 (count_zrtp (r.back, TRUE),
      stat_of (rx, "src", "zrtp-sent"));
  fail_unless_equals_uint64 (stat_of (intr_rx, "sink", "zrtp-received"), 0);
  /* the sender's connected socket kept them out */
  fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-received"),
      sink_received);
  fail_unless_equals_uint64 (stat_of (tx, "sink", "zrtp-foreign"), 0);
  /* both stayed with their peer, media flowing all along */
  fail_unless (stat_of (rx, "src", "access-units") > media + 60);
  for (int k = 0; k < 2; k++) {
    Pipe *p = k ? rx : tx;
    const gchar *name = k ? "src" : "sink";
    fail_unless_equals_int (count_msgs (p, name, "secure"), 1);
    fail_unless_equals_int (count_msgs (p, name, "failed"), 0);
    fail_unless_equals_uint64 (stat_of (p, name, "zrtp-restarts"), 0);
    fail_unless_equals_int (int_prop (p, name, "zrtp-state"), STATE_SECURE);
  }
  check_str_prop (rx, "src", "zrtp-sas", gst_structure_get_string (find_msg (tx,
              "sink", "secure"), "sas"));

  fail_unless (wait_for (pipe_eos, tx, 60000), "sender did not finish");
  sent_aus = stat_of (tx, "sink", "access-units");
  held = stat_of (tx, "sink", "zrtp-held");
  all = (StatWait) {
  rx, "src", "access-units", sent_aus - held};
  fail_unless (wait_for (stat_reaches, &all, 10000),
      "received %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " access units",
      stat_of (rx, "src", "access-units"), sent_aus - held);
  fail_unless (gst_element_send_event (el (rx, "src"), gst_event_new_eos ()));
  fail_unless (wait_for (pipe_eos, rx, 20000), "receiver did not drain");
  relay_stop (&r);
  rec_pull (&out, rx, "aus");
  first_key = check_delivered (&in, &out, held);
  fail_unless (first_key < out.bufs->len, "no key frame arrived");
  fail_unless_equals_int (rec_count (&dec), out.bufs->len - first_key);
  fail_unless_equals_uint64 (stat_of (rx, "src", "srtp-auth-failures"), 0);
  fail_unless_equals_uint64 (stat_of (rx, "src", "zrtp-dropped"), 0);

  g_free (zid);
  pipe_free (intr_tx);
  pipe_free (intr_rx);
  pipe_free (tx);
  pipe_free (rx);
  rec_clear (&in);
  rec_clear (&out);
  rec_clear (&dec);
  relay_free (&r);
}

GST_END_TEST;

/* ------------------------------------------------------------------------ */
/* The pipelines of docs/zrtp.md                                            */

/* Replaces whole tokens: subst[2k] by subst[2k + 1]; each must occur. */
static gchar *
rewrite (const gchar * desc, gchar ** subst)
{
  gchar **tokens = g_strsplit (desc, " ", -1);
  GString *out = g_string_new (NULL);
  guint n = g_strv_length (subst);
  gboolean *used = g_new0 (gboolean, n);

  for (gchar ** t = tokens; *t; t++) {
    const gchar *v = *t;
    for (guint k = 0; subst[k]; k += 2)
      if (g_str_equal (*t, subst[k])) {
        v = subst[k + 1];
        used[k] = TRUE;
        break;
      }
    if (out->len)
      g_string_append_c (out, ' ');
    g_string_append (out, v);
  }
  for (guint k = 0; k < n; k += 2)
    fail_unless (used[k], "\"%s\" not in the doc pipeline", subst[k]);
  g_free (used);
  g_strfreev (tokens);
  return g_string_free (out, FALSE);
}

/* The pipelines name no elements: the tests find them by factory. */
static GstElement *
by_factory (Pipe * p, const gchar * factory, guint n)
{
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (p->pipe));
  GValue v = G_VALUE_INIT;
  GPtrArray *found = g_ptr_array_new ();
  GstElement *e = NULL;

  while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    GstElement *x = g_value_get_object (&v);
    if (g_str_equal (GST_OBJECT_NAME (gst_element_get_factory (x)), factory))
      g_ptr_array_add (found, x);
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  /* iteration order is not creation order: sort by port */
  for (guint i = 0; i < found->len; i++)
    for (guint j = i + 1; j < found->len; j++) {
      gint pi, pj;
      g_object_get (g_ptr_array_index (found, i), "port", &pi, NULL);
      g_object_get (g_ptr_array_index (found, j), "port", &pj, NULL);
      if (pj < pi) {
        gpointer t = found->pdata[i];
        found->pdata[i] = found->pdata[j];
        found->pdata[j] = t;
      }
    }
  fail_unless (n < found->len, "no %s number %u", factory, n);
  e = g_ptr_array_index (found, n);
  g_ptr_array_free (found, TRUE);
  return e;
}

typedef struct
{
  Pipe *tx, *rx;
  guint n;                      /* streams */
} DocRun;

static gboolean
doc_secure (gpointer data)
{
  DocRun *w = data;
  guint s = 0, r = 0;

  for (guint i = 0; i < w->tx->msgs->len; i++)
    s += g_strcmp0 (gst_structure_get_string (((Msg *) g_ptr_array_index (w->
                    tx->msgs, i))->s, "state"), "secure") == 0;
  for (guint i = 0; i < w->rx->msgs->len; i++)
    r += g_strcmp0 (gst_structure_get_string (((Msg *) g_ptr_array_index (w->
                    rx->msgs, i))->s, "state"), "secure") == 0;
  return s >= w->n && r >= w->n;
}

static gboolean
doc_media (gpointer data)
{
  DocRun *w = data;

  for (guint i = 0; i < w->n; i++) {
    guint64 aus;
    GstStructure *st;
    g_object_get (by_factory (w->rx, "uvgrtpsrc", i), "stats", &st, NULL);
    fail_unless (gst_structure_get_uint64 (st, "access-units", &aus));
    gst_structure_free (st);
    if (aus < 5)
      return FALSE;
  }
  return TRUE;
}

static void
run_doc_pair (const gchar * rx_name, const gchar * tx_name, guint streams)
{
  gchar *dir = g_dir_make_tmp ("zrtp-doc-XXXXXX", NULL);
  gchar *rxd = doc_pipeline (ZRTP_DOC, rx_name);
  gchar *txd = doc_pipeline (ZRTP_DOC, tx_name);
  gchar *p0 = g_strdup_printf ("port=%u", free_udp_port ());
  gchar *p1 = g_strdup_printf ("port=%u", free_udp_port ());
  gchar *ca = g_strdup_printf ("zrtp-cache-file=%s/alice.zrtp", dir);
  gchar *cb = g_strdup_printf ("zrtp-cache-file=%s/bob.zrtp", dir);
  gchar *rs1[] = { (gchar *) "port=5004", p0, (gchar *) "port=5006", p1,
    (gchar *) "zrtp-cache-file=bob.zrtp", cb,
    (gchar *) "autovideosink", (gchar *) "fakesink",
    (gchar *) "autoaudiosink", (gchar *) "fakesink", NULL
  };
  gchar *ts1[] = { (gchar *) "port=5004", p0, (gchar *) "port=5006", p1,
    (gchar *) "zrtp-cache-file=alice.zrtp", ca, NULL
  };
  gchar *rs[] = { (gchar *) "port=5004", p0,
    (gchar *) "zrtp-cache-file=bob.zrtp", cb,
    (gchar *) "autovideosink", (gchar *) "fakesink", NULL
  };
  gchar *ts[] = { (gchar *) "port=5004", p0,
    (gchar *) "zrtp-cache-file=alice.zrtp", ca, NULL
  };
  gchar *r = rewrite (rxd, streams > 1 ? rs1 : rs);
  gchar *t = rewrite (txd, streams > 1 ? ts1 : ts);
  DocRun w;
  Pipe *rx = pipe_new ("doc receiver", r);
  Pipe *tx = pipe_new ("doc sender", t);
  guint mult = 0;

  pipe_play (rx);
  pipe_play (tx);
  w.tx = tx;
  w.rx = rx;
  w.n = streams;
  fail_unless (wait_for (doc_secure, &w, 20000), "%s / %s not secure",
      tx_name, rx_name);
  fail_unless (wait_for (doc_media, &w, 10000), "%s: no media", rx_name);
  for (guint i = 0; i < tx->msgs->len; i++) {
    const GstStructure *m = ((Msg *) g_ptr_array_index (tx->msgs, i))->s;
    mult += g_str_equal (gst_structure_get_string (m, "key-agreement"),
        "Mult");
    fail_unless_equals_string (gst_structure_get_string (m, "sas"),
        gst_structure_get_string (((Msg *) g_ptr_array_index (rx->msgs,
                    0))->s, "sas"));
  }
  fail_unless_equals_int (mult, streams - 1);
  for (guint i = 0; i < streams; i++) {
    gint st = -1;
    g_object_get (by_factory (tx, "uvgrtpsink", i), "zrtp-state", &st, NULL);
    fail_unless_equals_int (st, STATE_SECURE);
    g_object_get (by_factory (rx, "uvgrtpsrc", i), "zrtp-state", &st, NULL);
    fail_unless_equals_int (st, STATE_SECURE);
  }
  pipe_free (tx);
  pipe_free (rx);
  for (const gchar * const *f = (const gchar *[]) {
  "alice.zrtp", "bob.zrtp", NULL}; *f; f++) {
    gchar *path = g_build_filename (dir, *f, NULL);
    g_unlink (path);
    g_free (path);
  }
  g_rmdir (dir);
  g_free (dir);
  g_free (rxd);
  g_free (txd);
  g_free (p0);
  g_free (p1);
  g_free (ca);
  g_free (cb);
  g_free (r);
  g_free (t);
}

GST_START_TEST (test_doc_pipelines)
{
  run_doc_pair ("sinksrc-receiver", "sinksrc-sender", 1);
  run_doc_pair ("multistream-receiver", "multistream-sender", 2);
}

GST_END_TEST;

static Suite *
zrtp_elements_suite (void)
{
  Suite *s = suite_create ("zrtp_elements");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_h265_secure_exact);
  tcase_add_test (tc, test_late_receiver);
  tcase_add_test (tc, test_many_exchanges);
  tcase_add_test (tc, test_lossy);
  tcase_add_test (tc, test_multistream);
  tcase_add_test (tc, test_no_clear_to_plain_peer);
  tcase_add_test (tc, test_receiver_drops_clear);
  tcase_add_test (tc, test_zrtp_and_srtp_key);
  tcase_add_test (tc, test_tampered_commit);
  tcase_add_test (tc, test_multistream_leader_fails);
  tcase_add_test (tc, test_restarts);
  tcase_add_test (tc, test_receiver_peer_vanishes);
  tcase_add_test (tc, test_third_party);
  tcase_add_test (tc, test_doc_pipelines);
  return s;
}

GST_CHECK_MAIN (zrtp_elements);
