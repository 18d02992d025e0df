/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uvgrtpsink's destinations as udpsink and multiudpsink have them: `host`
 * and `port` (one client), `clients` (a list), the actions add, remove,
 * clear and get-stats, the signals client-added and client-removed,
 * `send-duplicates`. A mapping onto the sending stream's clients
 * (lib/urtp/sendstream.h): the element keeps the list as the user gave it
 * (names, ports, additions), the stream the resolved addresses it sends
 * to; a change while the stream runs goes to both at once.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include "gstuvgrtpsink.h"
#include "stream_util.h"

GST_DEBUG_CATEGORY_EXTERN (gst_uvgrtp_sink_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_sink_debug

enum
{
  SIGNAL_CLIENT_ADDED,
  SIGNAL_CLIENT_REMOVED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

struct _GstUvgRtpSinkClient
{
  gchar *host;
  gint port;
  guint adds;
};

static void
client_free (gpointer p)
{
  GstUvgRtpSinkClient *c = p;

  g_free (c->host);
  g_free (c);
}

static void list_add (GstUvgRtpSink * self, const gchar * host, gint port);

/* host:port is the first client, as udpsink's is */
void
gst_uvgrtp_sink_clients_init (GstUvgRtpSink * self)
{
  self->clients = g_ptr_array_new_with_free_func (client_free);
  g_cond_init (&self->clients_cond);
  list_add (self, self->host, self->port);
}

void
gst_uvgrtp_sink_clients_finalize (GstUvgRtpSink * self)
{
  g_ptr_array_unref (self->clients);
  g_cond_clear (&self->clients_cond);
  g_free (self->clients_error);
}

gboolean
gst_uvgrtp_sink_first_client (GstUvgRtpSink * self, gchar ** host,
    gint * port, guint * nclients)
{
  GstUvgRtpSinkClient *c;

  *nclients = 0;
  for (guint i = 0; i < self->clients->len; i++)
    *nclients += ((GstUvgRtpSinkClient *) g_ptr_array_index (self->clients,
            i))->adds;
  if (!self->clients->len)
    return FALSE;
  c = g_ptr_array_index (self->clients, 0);
  *host = g_strdup (c->host);
  *port = c->port;
  return TRUE;
}

/* The entry of host:port, or NULL. Object lock. */
static GstUvgRtpSinkClient *
find (GstUvgRtpSink * self, const gchar * host, gint port, guint * index)
{
  for (guint i = 0; i < self->clients->len; i++) {
    GstUvgRtpSinkClient *c = g_ptr_array_index (self->clients, i);

    if (c->port == port && g_strcmp0 (c->host, host) == 0) {
      if (index)
        *index = i;
      return c;
    }
  }
  return NULL;
}

/* host:port to addresses of the socket's family: RTP's, and RTCP's (its
 * port + 1, `rtcp-port` when set, the RTP port with rtcp-mux; family 0
 * without RTCP). Returns 0 or -errno (-ENOENT: the name does not resolve,
 * -EAFNOSUPPORT: not to an address the socket can reach). No lock held:
 * the name may take a while to resolve. */
static int
resolve (GstUvgRtpSink * self, const gchar * host, gint port,
    struct sockaddr_storage *rtp, struct sockaddr_storage *rtcp)
{
  gint rport = 0;
  int r = urtp_stream_resolve (host, (uint16_t) port, self->sock.family, rtp);

  if (r < 0)
    return r;
  memset (rtcp, 0, sizeof *rtcp);
  GST_OBJECT_LOCK (self);
  if (self->common.rtcp)
    rport = self->common.rtcp_mux ? port :
        gst_uvgrtp_settings_rtcp_port (&self->common, port);
  GST_OBJECT_UNLOCK (self);
  if (rport > 0 && rport <= G_MAXUINT16) {
    *rtcp = *rtp;
    urtp_addr_set_port (rtcp, (uint16_t) rport);
  }
  return 0;
}

/* One addition of host:port to the running stream; a failure is posted
 * (as an error at start, a warning later) naming `prop`. */
static gboolean
stream_add (GstUvgRtpSink * self, urtp_sendstream_t * stream,
    const gchar * host, gint port, const gchar * prop, gboolean at_start)
{
  struct sockaddr_storage rtp, rtcp;
  int r = resolve (self, host, port, &rtp, &rtcp);
  const gchar *why;

  if (r == 0)
    r = urtp_sendstream_add_client (stream, &rtp, &rtcp);
  if (r >= 0)
    return TRUE;
  why = r == -ENOENT ? "the name does not resolve" : r == -EAFNOSUPPORT ?
      "no address of the socket's family (see 'bind-address')" :
      g_strerror (-r);
  if (at_start)
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Cannot send to %s port %d (property '%s'): %s", host, port, prop,
            why), (NULL));
  else
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
        ("Cannot send to %s port %d (%s): %s", host, port, prop, why), (NULL));
  return FALSE;
}

static void
stream_remove (GstUvgRtpSink * self, urtp_sendstream_t * stream,
    const gchar * host, gint port)
{
  struct sockaddr_storage rtp, rtcp;

  if (resolve (self, host, port, &rtp, &rtcp) == 0)
    urtp_sendstream_remove_client (stream, &rtp);
}

/* The running stream, for use outside the object lock: stop() frees it
 * only once no caller holds it (clients_busy back at 0). */
static urtp_sendstream_t *
stream_hold (GstUvgRtpSink * self)
{
  urtp_sendstream_t *s;

  GST_OBJECT_LOCK (self);
  s = self->stream;
  if (s)
    self->clients_busy++;
  GST_OBJECT_UNLOCK (self);
  return s;
}

static void
stream_release (GstUvgRtpSink * self, urtp_sendstream_t * s)
{
  if (!s)
    return;
  GST_OBJECT_LOCK (self);
  if (--self->clients_busy == 0)
    g_cond_broadcast (&self->clients_cond);
  GST_OBJECT_UNLOCK (self);
}

void
gst_uvgrtp_sink_clients_wait_idle (GstUvgRtpSink * self)
{
  GST_OBJECT_LOCK (self);
  while (self->clients_busy)
    g_cond_wait (&self->clients_cond, GST_OBJECT_GET_LOCK (self));
  GST_OBJECT_UNLOCK (self);
}

/* One addition to the list (object lock). */
static void
list_add (GstUvgRtpSink * self, const gchar * host, gint port)
{
  GstUvgRtpSinkClient *c = find (self, host, port, NULL);

  if (!c) {
    c = g_new0 (GstUvgRtpSinkClient, 1);
    c->host = g_strdup (host);
    c->port = port;
    g_ptr_array_add (self->clients, c);
  }
  c->adds++;
}

/* One addition taken back (object lock); FALSE: it was no client. */
static gboolean
list_remove (GstUvgRtpSink * self, const gchar * host, gint port)
{
  guint i;
  GstUvgRtpSinkClient *c = find (self, host, port, &i);

  if (!c)
    return FALSE;
  if (--c->adds == 0)
    g_ptr_array_remove_index (self->clients, i);
  return TRUE;
}

static gboolean
valid_port (GstUvgRtpSink * self, gint port, const gchar * what)
{
  if (port > 0 && port <= G_MAXUINT16)
    return TRUE;
  GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
      ("Invalid port %d (%s)", port, what), (NULL));
  return FALSE;
}

void
gst_uvgrtp_sink_add (GstUvgRtpSink * self, const gchar * host, gint port)
{
  urtp_sendstream_t *s;

  if (!host || !*host || !valid_port (self, port, "the 'add' action"))
    return;
  s = stream_hold (self);
  if (s && !stream_add (self, s, host, port, "the 'add' action", FALSE)) {
    stream_release (self, s);
    return;
  }
  GST_OBJECT_LOCK (self);
  list_add (self, host, port);
  GST_OBJECT_UNLOCK (self);
  stream_release (self, s);
  GST_DEBUG_OBJECT (self, "client %s:%d added", host, port);
  g_signal_emit (self, signals[SIGNAL_CLIENT_ADDED], 0, host, port);
}

void
gst_uvgrtp_sink_remove (GstUvgRtpSink * self, const gchar * host, gint port)
{
  urtp_sendstream_t *s = stream_hold (self);
  gboolean was;

  GST_OBJECT_LOCK (self);
  was = host && list_remove (self, host, port);
  GST_OBJECT_UNLOCK (self);
  if (was && s)
    stream_remove (self, s, host, port);
  stream_release (self, s);
  if (!was) {
    GST_WARNING_OBJECT (self, "remove: %s:%d is no client", host, port);
    return;
  }
  g_signal_emit (self, signals[SIGNAL_CLIENT_REMOVED], 0, host, port);
}

/* Every client goes, with a client-removed signal per addition. */
void
gst_uvgrtp_sink_clear (GstUvgRtpSink * self)
{
  urtp_sendstream_t *s = stream_hold (self);
  GPtrArray *old;

  GST_OBJECT_LOCK (self);
  old = self->clients;
  self->clients = g_ptr_array_new_with_free_func (client_free);
  GST_OBJECT_UNLOCK (self);
  if (s)
    urtp_sendstream_clear_clients (s);
  stream_release (self, s);
  for (guint i = 0; i < old->len; i++) {
    GstUvgRtpSinkClient *c = g_ptr_array_index (old, i);

    for (guint k = 0; k < c->adds; k++)
      g_signal_emit (self, signals[SIGNAL_CLIENT_REMOVED], 0, c->host,
          c->port);
  }
  g_ptr_array_unref (old);
}

/* "host:port", "[v6]:port" or "v6:port" (the last colon). */
static gboolean
parse_client (const gchar * s, gchar ** host, gint * port)
{
  const gchar *colon = strrchr (s, ':');
  gchar *end;
  glong p;

  if (!colon || colon == s)
    return FALSE;
  p = strtol (colon + 1, &end, 10);
  if (*end || end == colon + 1 || p <= 0 || p > G_MAXUINT16)
    return FALSE;
  if (s[0] == '[' && colon[-1] == ']')
    *host = g_strndup (s + 1, (gsize) (colon - s - 2));
  else
    *host = g_strndup (s, (gsize) (colon - s));
  *port = (gint) p;
  return **host != '\0';
}

void
gst_uvgrtp_sink_set_clients (GstUvgRtpSink * self, const gchar * list)
{
  gchar **parts = g_strsplit (list ? list : "", ",", -1);

  GST_OBJECT_LOCK (self);
  g_clear_pointer (&self->clients_error, g_free);
  GST_OBJECT_UNLOCK (self);
  gst_uvgrtp_sink_clear (self);
  for (gchar ** p = parts; *p; p++) {
    gchar *item = g_strstrip (*p), *host = NULL;
    gint port;

    if (!*item)
      continue;
    if (parse_client (item, &host, &port)) {
      gst_uvgrtp_sink_add (self, host, port);
    } else {
      /* before start there is no bus yet: start() reports it */
      GST_OBJECT_LOCK (self);
      g_free (self->clients_error);
      self->clients_error = g_strdup (item);
      GST_OBJECT_UNLOCK (self);
      GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
          ("'%s' in property 'clients' is not host:port", item), (NULL));
    }
    g_free (host);
  }
  g_strfreev (parts);
}

gchar *
gst_uvgrtp_sink_get_clients (GstUvgRtpSink * self)
{
  GString *s = g_string_new (NULL);

  GST_OBJECT_LOCK (self);
  for (guint i = 0; i < self->clients->len; i++) {
    GstUvgRtpSinkClient *c = g_ptr_array_index (self->clients, i);

    for (guint k = 0; k < c->adds; k++)
      g_string_append_printf (s, "%s%s%s%s:%d", s->len ? "," : "",
          strchr (c->host, ':') ? "[" : "", c->host,
          strchr (c->host, ':') ? "]" : "", c->port);
  }
  GST_OBJECT_UNLOCK (self);
  return g_string_free (s, FALSE);
}

void
gst_uvgrtp_sink_set_host_port (GstUvgRtpSink * self, const gchar * host,
    gint port)
{
  struct sockaddr_storage old, rtp, rtcp;
  gboolean had, has = host && *host && port > 0 && port <= G_MAXUINT16;
  urtp_sendstream_t *s;
  gchar *old_host;
  gint old_port;

  GST_OBJECT_LOCK (self);
  old_host = g_strdup (self->host);
  old_port = self->port;
  g_free (self->host);
  self->host = g_strdup (host);
  self->port = port;
  had = old_host && *old_host && old_port > 0 && list_remove (self, old_host,
      old_port);
  if (has)
    list_add (self, host, port);
  GST_OBJECT_UNLOCK (self);

  /* udpsink's way: the old pair goes, the new one comes; in the running
   * stream in one step, so that no access unit goes to neither */
  s = stream_hold (self);
  if (s) {
    gboolean old_ok = had && resolve (self, old_host, old_port, &old,
        &rtcp) == 0;
    int r = has ? resolve (self, host, port, &rtp, &rtcp) : -EINVAL;

    if (r == 0)
      r = urtp_sendstream_replace_client (s, old_ok ? &old : NULL, &rtp,
          &rtcp);
    else if (old_ok)
      urtp_sendstream_remove_client (s, &old);
    if (has && r < 0)
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
          ("Cannot send to %s port %d (properties 'host', 'port'): %s", host,
              port, r == -ENOENT ? "the name does not resolve" :
              g_strerror (-r)), (NULL));
  }
  stream_release (self, s);
  if (had)
    g_signal_emit (self, signals[SIGNAL_CLIENT_REMOVED], 0, old_host,
        old_port);
  if (has)
    g_signal_emit (self, signals[SIGNAL_CLIENT_ADDED], 0, host, port);
  g_free (old_host);
}

gboolean
gst_uvgrtp_sink_clients_start (GstUvgRtpSink * self,
    urtp_sendstream_t * stream)
{
  GPtrArray *copy = g_ptr_array_new_with_free_func (client_free);
  gboolean ok = TRUE;
  gchar *bad;

  GST_OBJECT_LOCK (self);
  bad = g_strdup (self->clients_error);
  for (guint i = 0; i < self->clients->len; i++) {
    GstUvgRtpSinkClient *c = g_ptr_array_index (self->clients, i), *d;

    d = g_new0 (GstUvgRtpSinkClient, 1);
    d->host = g_strdup (c->host);
    d->port = c->port;
    d->adds = c->adds;
    g_ptr_array_add (copy, d);
  }
  GST_OBJECT_UNLOCK (self);
  if (bad) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("'%s' in property 'clients' is not host:port", bad), (NULL));
    ok = FALSE;
  }
  /* from now on the stream's table decides, even when empty */
  urtp_sendstream_clear_clients (stream);
  for (guint i = 0; ok && i < copy->len; i++) {
    GstUvgRtpSinkClient *c = g_ptr_array_index (copy, i);

    for (guint k = 0; ok && k < c->adds; k++)
      ok = stream_add (self, stream, c->host, c->port,
          copy->len == 1 ? "host" : "clients", TRUE);
  }
  g_ptr_array_unref (copy);
  g_free (bad);
  return ok;
}

/* get-stats: multiudpsink's structure for host:port, and ours beside. */
GstStructure *
gst_uvgrtp_sink_get_stats (GstUvgRtpSink * self, const gchar * host,
    gint port)
{
  GstStructure *st = gst_structure_new ("multiudpsink-stats",
      "bytes-sent", G_TYPE_UINT64, (guint64) 0,
      "packets-sent", G_TYPE_UINT64, (guint64) 0,
      "connect-time", G_TYPE_UINT64, (guint64) 0,
      "disconnect-time", G_TYPE_UINT64, (guint64) 0, NULL);
  urtp_sendstream_t *s = stream_hold (self);
  struct sockaddr_storage rtp, rtcp;
  urtp_sendstream_client_t c;

  if (s && host && resolve (self, host, port, &rtp, &rtcp) == 0 &&
      urtp_sendstream_get_client (s, &rtp, &c) == 0) {
    gst_structure_set (st,
        "bytes-sent", G_TYPE_UINT64, c.bytes,
        "packets-sent", G_TYPE_UINT64, c.packets,
        "connect-time", G_TYPE_UINT64, (guint64) c.added_ns,
        "disconnect-time", G_TYPE_UINT64, (guint64) c.removed_ns,
        "send-errors", G_TYPE_UINT64, c.send_errors,
        "rtx-packets", G_TYPE_UINT64, c.rtx_packets, NULL);
  } else {
    GST_DEBUG_OBJECT (self, "get-stats: no statistics for %s:%d", host, port);
  }
  stream_release (self, s);
  return st;
}

void
gst_uvgrtp_sink_install_clients (GObjectClass * klass)
{
  /**
   * GstUvgRtpSink::add:
   * @sink: the sink
   * @host: the name or address of a receiver (or a multicast group)
   * @port: its RTP port
   *
   * Sends the stream to @host:@port too (again, with
   * #GstUvgRtpSink:send-duplicates, if it is a client already), from the
   * next access unit on, while playing as well. Every packet is made (and
   * protected) once for all clients. Our RTCP goes to its port + 1
   * (#GstUvgRtpSink:rtcp-port when set, @port with rtcp-mux).
   */
  g_signal_new_class_handler ("add", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION, G_CALLBACK (gst_uvgrtp_sink_add),
      NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT);
  /**
   * GstUvgRtpSink::remove:
   * @sink: the sink
   * @host: a client's host, as it was added
   * @port: its port
   *
   * Takes one addition of @host:@port back; with none left it gets nothing
   * more (the others lose nothing).
   */
  g_signal_new_class_handler ("remove", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_uvgrtp_sink_remove), NULL, NULL, NULL, G_TYPE_NONE, 2,
      G_TYPE_STRING, G_TYPE_INT);
  /**
   * GstUvgRtpSink::clear:
   * @sink: the sink
   *
   * Removes every client (#GstUvgRtpSink:host's too).
   */
  g_signal_new_class_handler ("clear", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_uvgrtp_sink_clear), NULL, NULL, NULL, G_TYPE_NONE, 0);
  /**
   * GstUvgRtpSink::get-stats:
   * @sink: the sink
   * @host: a client's host
   * @port: its port
   *
   * A "multiudpsink-stats" structure: bytes-sent, packets-sent (RTP,
   * retransmissions included), connect-time, disconnect-time (ns since the
   * Unix epoch; 0 while a client), and send-errors, rtx-packets (those
   * answering its own NACKs), all #guint64; zero for an unknown client or
   * before the element starts. A client removed keeps its statistics
   * until it is added again.
   *
   * Returns: (transfer full): the structure
   */
  g_signal_new_class_handler ("get-stats", G_TYPE_FROM_CLASS (klass),
      G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_uvgrtp_sink_get_stats), NULL, NULL, NULL,
      GST_TYPE_STRUCTURE, 2, G_TYPE_STRING, G_TYPE_INT);
  /**
   * GstUvgRtpSink::client-added:
   * @sink: the sink
   * @host: the host added
   * @port: its port
   *
   * A client was added (by #GstUvgRtpSink::add, #GstUvgRtpSink:clients,
   * #GstUvgRtpSink:host or #GstUvgRtpSink:port).
   */
  signals[SIGNAL_CLIENT_ADDED] = g_signal_new ("client-added",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
      G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT);
  /**
   * GstUvgRtpSink::client-removed:
   * @sink: the sink
   * @host: the host removed
   * @port: its port
   *
   * One addition of a client was taken back.
   */
  signals[SIGNAL_CLIENT_REMOVED] = g_signal_new ("client-removed",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
      G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT);
}
