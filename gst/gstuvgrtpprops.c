/* SPDX-License-Identifier: BSD-2-Clause */
/* What uvgrtpsink and uvgrtpsrc have in common, declared once: see the
 * header.
 *
 * The documentation of each shared property is written once, for both
 * elements, under the neutral tag GstUvgRtp:<name> (the elements install
 * the same GParamSpec text; only buffer-size's default differs). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstuvgrtpprops.h"

#include <fcntl.h>
#include <unistd.h>

#define DEFAULT_RTCP_MIN_INTERVAL (5 * GST_SECOND)

void
gst_uvgrtp_props_install (GObjectClass * klass, guint first,
    GstUvgRtpRole role, GCallback sas_verified_handler)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  /**
   * GstUvgRtp:buffer-size:
   *
   * Kernel socket buffer in bytes: the send buffer of uvgrtpsink (0: the
   * system's default; as root it may exceed net.core.wmem_max), the receive
   * buffer of uvgrtpsrc. uvgrtpsrc's 0 (the default) sizes it by the
   * stream: 2 MiB asked to start with, doubled up to 32 MiB whenever the
   * kernel's queue passes half of it or the kernel drops datagrams, past
   * net.core.rmem_max where the process may (root, CAP_NET_ADMIN), so that
   * a quiet stream holds little and the bursts of 4K video (an intra
   * picture is 1-3 MB at once) still fit. Any other value is asked for as
   * is. The size the kernel granted is in the stats (buffer-size; the
   * kernel reports twice what is asked); uvgrtpsrc warns when it got less
   * than asked, and when the kernel dropped datagrams for a full buffer
   * (kernel-drops) that can grow no further.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_BUFFER_SIZE,
      g_param_spec_int ("buffer-size", "Buffer size",
          "Kernel socket buffer in bytes (uvgrtpsink: send buffer, 0 = system "
          "default; uvgrtpsrc: receive buffer, 0 = sized by the stream, 2 to "
          "32 MiB); stats report the size granted", 0, G_MAXINT, 0, rw));
  /**
   * GstUvgRtp:multicast-iface:
   *
   * Name of the network interface used for multicast (for example "eth0"):
   * the one uvgrtpsink's packets to a group leave through, the one
   * uvgrtpsrc joins its group on. %NULL: the system's choice (the routing
   * table's).
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_PROP_MULTICAST_IFACE,
      g_param_spec_string ("multicast-iface", "Multicast interface",
          "Network interface for multicast: where uvgrtpsink's packets leave, "
          "where uvgrtpsrc joins the group (NULL = the system's choice)",
          NULL, rw));
  /**
   * GstUvgRtp:socket:
   *
   * A UDP socket the application made and bound itself, used instead of
   * one of the element's own (as udpsink's and udpsrc's `socket`): the
   * element does not bind (uvgrtpsink's #GstUvgRtpSink:bind-address and
   * #GstUvgRtpSink:bind-port, uvgrtpsrc's #GstUvgRtpSrc:port are those of
   * the socket), never connects it, and reads or sends through a
   * descriptor of its own, so that one socket may serve a uvgrtpsink and a
   * uvgrtpsrc at once (symmetric RTP, RFC 4961: what is sent leaves from
   * the port the peer sends to). The buffer size, DSCP, TTL and multicast
   * settings are applied to it. See #GstUvgRtp:close-socket.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_SOCKET,
      g_param_spec_object ("socket", "Socket",
          "A UDP socket the application bound, used instead of one of the "
          "element's own (NULL = the element opens one)", G_TYPE_SOCKET,
          rw | GST_PARAM_MUTABLE_READY));
  /**
   * GstUvgRtp:used-socket:
   *
   * The socket in use while the element runs: #GstUvgRtp:socket, or one
   * the element opened (a GSocket on a duplicate of its descriptor, which
   * the application may use to send or receive from the same port).
   * uvgrtpsink gives an IPv6 one in #GstUvgRtpSink:used-socket-v6 instead.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_USED_SOCKET,
      g_param_spec_object ("used-socket", "Used socket",
          "The socket in use (the one set in 'socket', or the element's own)",
          G_TYPE_SOCKET, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtp:close-socket:
   *
   * Whether #GstUvgRtp:socket is closed when the element stops (default
   * %TRUE, as udpsink's and udpsrc's). Set it to %FALSE when the socket
   * serves another element too, or the application goes on using it. The
   * element's own sockets are always closed.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_PROP_CLOSE_SOCKET,
      g_param_spec_boolean ("close-socket", "Close socket",
          "Close the socket set in 'socket' when the element stops", TRUE,
          rw));
  /**
   * GstUvgRtp:rtcp:
   *
   * RTCP (RFC 3550) on #GstUvgRtp:rtcp-port. uvgrtpsink sends sender
   * reports (its RTP clock against wall-clock NTP time, so that receivers
   * can line up several streams; packet and octet counts; its CNAME) and
   * reads receivers' reports (loss, jitter, round-trip time: in the stats
   * and a "uvgrtp-rtcp" element message each). uvgrtpsrc reads the
   * sender's reports (its clock, its counts, its CNAME; a BYE hands over to
   * the next source at once) and sends receiver reports (loss, jitter, the
   * round trip for the sender). With #GstUvgRtp:srtp-key or #GstUvgRtp:zrtp,
   * RTCP is SRTCP (RFC 3711) both ways, keyed as the media (with ZRTP, each
   * side's key of the agreement, RFC 6189 4.5.3; no reports go out before
   * it is confirmed). Read when the element starts.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_RTCP,
      g_param_spec_boolean ("rtcp", "RTCP",
          "RTCP (RFC 3550) on rtcp-port: send our reports (sender reports "
          "from uvgrtpsink, receiver reports from uvgrtpsrc) and read the "
          "peer's", TRUE, rw));
  /**
   * GstUvgRtp:rtcp-port:
   *
   * The RTCP port that goes with the element's `port`: 0 for port + 1, as
   * RFC 3550 pairs them. Like `port`, on uvgrtpsink it is the receiver's
   * port (where our reports go), on uvgrtpsrc the local one (where RTCP is
   * received and sent from; rtpbin users: the port the sender's RTCP
   * udpsink sends to).
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_RTCP_PORT,
      g_param_spec_int ("rtcp-port", "RTCP port",
          "The RTCP port beside 'port' (0 = port + 1): the receiver's on "
          "uvgrtpsink, the local one on uvgrtpsrc", 0, G_MAXUINT16, 0, rw));
  /**
   * GstUvgRtp:rtcp-mux:
   *
   * RTCP on the RTP port, both ways (RFC 5761, as WebRTC has it), told
   * apart from RTP and ZRTP by its packet type; #GstUvgRtp:rtcp-port is
   * then unused. uvgrtpsink sends its reports to its `port` from its RTP
   * port (and its SDP says a=rtcp-mux); uvgrtpsrc sends its reports from
   * its `port` back to where the sender's reports come from, unless its
   * rtcp-remote-host is set. Both ends need it. Read when the element
   * starts.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_RTCP_MUX,
      g_param_spec_boolean ("rtcp-mux", "RTCP mux",
          "RTCP on the RTP port (RFC 5761) instead of rtcp-port", FALSE, rw));
  /**
   * GstUvgRtp:cname:
   *
   * The CNAME in our RTCP reports. %NULL: one made once per process,
   * "user<number>@host-<hex>" as rtpbin's default looks, so that every
   * element of the process shares it and receivers can synchronise the
   * streams of one sender (RFC 3550 6.5.1).
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_CNAME,
      g_param_spec_string ("cname", "CNAME",
          "CNAME in our RTCP reports (NULL = one per process)", NULL, rw));
  /**
   * GstUvgRtp:rtcp-min-interval:
   *
   * The least time between our reports in nanoseconds, as rtpsession's
   * property: RFC 3550's 5 s by default (the first report after half of
   * it); reports are spread randomly around the interval RFC 3550 6.2
   * computes.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_PROP_RTCP_MIN_INTERVAL,
      g_param_spec_uint64 ("rtcp-min-interval", "RTCP minimum interval",
          "Minimum time between our RTCP reports in ns", GST_MSECOND,
          G_MAXUINT64, DEFAULT_RTCP_MIN_INTERVAL, rw));
  /**
   * GstUvgRtp:srtp-key:
   *
   * SRTP (RFC 3711, AES-GCM as in RFC 7714) with this master key followed
   * by its master salt, as hex digits: the bytes srtpenc's key property
   * (and srtpdec's srtp-key caps field) take. The length follows
   * #GstUvgRtp:srtp-cipher: 30 bytes (60 digits) for aes-128-icm, 46 for
   * aes-256-icm, 28 for aes-128-gcm and 44 for aes-256-gcm. %NULL or empty
   * (the default): plain RTP. Read when the element starts; a key of the
   * wrong length or with characters that are not hex digits is an error
   * then. Every start of uvgrtpsink is a new SRTP session from roll-over
   * counter 0: do not restart it with the same key and a fixed ssrc, which
   * would encrypt new packets with key stream already used. uvgrtpsrc
   * takes the first packet of each SSRC to have roll-over counter 0. RTCP
   * is then SRTCP with the same key and cipher (with hmac-sha1-32 the SRTCP
   * tag stays 80 bits, as RFC 4568's suites have it), so there is no
   * srtcp-cipher or srtcp-auth property. Cannot be combined with
   * #GstUvgRtp:zrtp.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_SRTP_KEY,
      g_param_spec_string ("srtp-key", "SRTP key",
          "SRTP master key followed by master salt, as hex digits, as srtpenc's "
          "key (NULL or empty = plain RTP)", NULL, rw));
  /**
   * GstUvgRtp:srtp-cipher:
   *
   * SRTP cipher, named as srtpenc's rtp-cipher: aes-128-icm (the default),
   * aes-256-icm, aes-128-gcm or aes-256-gcm. null, which would leave the
   * payload unencrypted, is refused. Used only with #GstUvgRtp:srtp-key.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_SRTP_CIPHER,
      g_param_spec_enum ("srtp-cipher", "SRTP cipher",
          "SRTP cipher (as srtpenc's rtp-cipher; null is refused)",
          GST_TYPE_UVGRTP_SRTP_CIPHER, GST_UVGRTP_DEFAULT_SRTP_CIPHER, rw));
  /**
   * GstUvgRtp:srtp-auth:
   *
   * SRTP authentication, named as srtpenc's rtp-auth: hmac-sha1-80 (the
   * default, a 10-byte tag) or hmac-sha1-32 (4 bytes) with the ICM
   * ciphers; null with the GCM ciphers, which authenticate by themselves
   * (a 16-byte tag). Any other pairing is an error when the element starts.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_SRTP_AUTH,
      g_param_spec_enum ("srtp-auth", "SRTP authentication",
          "SRTP authentication (as srtpenc's rtp-auth; null with GCM only)",
          GST_TYPE_UVGRTP_SRTP_AUTH, GST_UVGRTP_DEFAULT_SRTP_AUTH, rw));
  /**
   * GstUvgRtp:do-retransmission:
   *
   * Retransmission of lost packets: generic NACKs (RFC 4585) and RTX
   * (RFC 4588, payload type #GstUvgRtp:rtx-pt, an SSRC of its own, on the
   * RTP port, SRTP-protected as the media). Needs #GstUvgRtp:rtcp.
   *
   * uvgrtpsink answers receivers' NACKs, as rtprtxsend does, from the
   * packets it sent over its rtx-max-size-time (kept without a copy; buffers
   * from a pool are copied first, so that upstream's pool does not run
   * dry): each packet at most once per half round trip, all of them within
   * half the stream's bitrate. With #GstUvgRtpSink:congestion-control, that
   * is half of the estimate, and none go while the path's queue is over
   * 100 ms (a repair would arrive a queue late and keep the queue full);
   * they are counted in rtx-over-budget. Its SDP then offers RTP/AVPF with
   * nack, nack pli and ccm fir, and the rtx payload type.
   *
   * uvgrtpsrc asks for lost packets, as rtpjitterbuffer's property does: a
   * packet missing for longer than reordering explains (5 ms) is asked for,
   * and again each round trip while its answer can still arrive within the
   * latency; retransmissions fill the gaps before the access units are put
   * together. NACKs go where its receiver reports go, once the sender's
   * first report said where that is (a sender without RTCP is never asked),
   * and need a latency above 0; the reordering window then holds 4096
   * packets. Read when the element starts.
   */
  g_object_class_install_property (klass,
      first + GST_UVGRTP_PROP_DO_RETRANSMISSION,
      g_param_spec_boolean ("do-retransmission", "Do retransmission",
          "Retransmit lost packets (RFC 4585 NACK, RFC 4588 RTX; needs rtcp): "
          "uvgrtpsink answers NACKs, uvgrtpsrc sends them and takes the "
          "retransmissions", TRUE, rw));
  /**
   * GstUvgRtp:rtx-pt:
   *
   * The payload type of retransmissions: -1 (the default) for the one
   * after the media's (97 for 96; uvgrtpsrc assumes 97 while the media's
   * is not known), which both elements assume alike. uvgrtpsink's SDP
   * names it (apt= the media's pt); it must differ from pt. With rtpbin,
   * the payload-type-map of rtprtxsend or rtprtxreceive maps it to the
   * media's.
   */
  g_object_class_install_property (klass, first + GST_UVGRTP_PROP_RTX_PT,
      g_param_spec_int ("rtx-pt", "RTX payload type",
          "Payload type of retransmissions (-1 = the media's + 1)", -1, 127,
          -1, rw));

  /* zrtp, zrtp-allow-clear, ..., and the zrtp-set-sas-verified signal */
  gst_uvgrtp_zrtp_install (klass, first + GST_UVGRTP_PROP_ZRTP_FIRST,
      sas_verified_handler);

  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_SRTP_CIPHER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_SRTP_AUTH, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_ZRTP_STATE, 0);
}

void
gst_uvgrtp_settings_init (GstUvgRtpCommonSettings * s, GstUvgRtpRole role)
{
  memset (s, 0, sizeof *s);
  s->buffer_size = 0;
  s->close_socket = TRUE;
  s->rtcp = TRUE;
  s->rtcp_min_interval = DEFAULT_RTCP_MIN_INTERVAL;
  s->srtp_cipher = GST_UVGRTP_DEFAULT_SRTP_CIPHER;
  s->srtp_auth = GST_UVGRTP_DEFAULT_SRTP_AUTH;
  s->do_retransmission = TRUE;
  s->rtx_pt = -1;
  gst_uvgrtp_zrtp_settings_init (&s->zrtp);
}

void
gst_uvgrtp_settings_clear (GstUvgRtpCommonSettings * s)
{
  g_free (s->multicast_iface);
  g_clear_object (&s->socket);
  g_clear_object (&s->used_socket);
  g_free (s->cname);
  gst_uvgrtp_free_secret (s->srtp_key);
  gst_uvgrtp_zrtp_settings_clear (&s->zrtp);
  memset (s, 0, sizeof *s);
}

GSocket *
gst_uvgrtp_settings_take_socket (GstUvgRtpCommonSettings * s)
{
  return s->socket ? g_object_ref (s->socket) : NULL;
}

void
gst_uvgrtp_settings_socket_opened (GstUvgRtpCommonSettings * s,
    GSocket ** used, GSocket * given, int fd)
{
  int dup_fd;

  if (!used)
    used = &s->used_socket;
  g_clear_object (used);
  if (given) {
    *used = g_object_ref (given);
    return;
  }
  /* the wrapper owns a descriptor of its own: ours closes apart */
  dup_fd = fcntl (fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd >= 0 && !(*used = g_socket_new_from_fd (dup_fd, NULL)))
    close (dup_fd);
}

void
gst_uvgrtp_settings_socket_closed (GstUvgRtpCommonSettings * s,
    GSocket ** used, GSocket * given)
{
  g_clear_object (used ? used : &s->used_socket);
  if (given && s->close_socket)
    g_socket_close (given, NULL);
  if (given)
    g_object_unref (given);
}

gint
gst_uvgrtp_settings_rtcp_port (const GstUvgRtpCommonSettings * s, gint port)
{
  if (s->rtcp_port)
    return s->rtcp_port;
  return port ? MIN (port + 1, G_MAXUINT16) : 0;
}

gboolean
gst_uvgrtp_settings_rtcp (const GstUvgRtpCommonSettings * s, gint port,
    urtp_rtcpio_config_t * rc, gboolean * mux, gint * rtcp_port)
{
  if (!s->rtcp)
    return FALSE;
  memset (rc, 0, sizeof *rc);
  rc->min_interval = s->rtcp_min_interval;
  *mux = s->rtcp_mux;
  *rtcp_port = *mux ? port : gst_uvgrtp_settings_rtcp_port (s, port);
  return TRUE;
}

gboolean
gst_uvgrtp_settings_take_keys (GstElement * element,
    GstUvgRtpCommonSettings * s, GstUvgRtpZrtpCtl ** ctlp,
    urtp_srtp_config_t * cfg, guint8 key[URTP_SRTP_MAX_KEY_LEN],
    GstUvgRtpZrtpSettings * zs)
{
  GstUvgRtpSrtpCipher cipher;
  GstUvgRtpSrtpAuth auth;
  GstUvgRtpZrtpCtl *old;
  gchar *hex;
  gboolean ok;

  GST_OBJECT_LOCK (element);
  hex = g_strdup (s->srtp_key);
  cipher = s->srtp_cipher;
  auth = s->srtp_auth;
  gst_uvgrtp_zrtp_settings_copy (zs, &s->zrtp);
  old = *ctlp;
  *ctlp = NULL;
  GST_OBJECT_UNLOCK (element);
  gst_uvgrtp_zrtp_ctl_unref (old);

  if (zs->enabled && hex && *hex) {
    GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS,
        ("Properties 'zrtp' and 'srtp-key' cannot be used together: ZRTP "
            "agrees the SRTP keys itself"), (NULL));
    ok = FALSE;
  } else {
    ok = gst_uvgrtp_srtp_parse (element, hex, cipher, auth, cfg, key);
  }
  gst_uvgrtp_free_secret (hex);
  if (!ok)
    gst_uvgrtp_zrtp_settings_clear (zs);
  return ok;
}

#define FIELD(f) G_STRUCT_OFFSET (GstUvgRtpCommonSettings, f)
static const gsize settings_field[GST_UVGRTP_PROP_ZRTP_FIRST] = {
  [GST_UVGRTP_PROP_BUFFER_SIZE] = FIELD (buffer_size),
  [GST_UVGRTP_PROP_MULTICAST_IFACE] = FIELD (multicast_iface),
  [GST_UVGRTP_PROP_SOCKET] = FIELD (socket),
  [GST_UVGRTP_PROP_USED_SOCKET] = FIELD (used_socket),
  [GST_UVGRTP_PROP_CLOSE_SOCKET] = FIELD (close_socket),
  [GST_UVGRTP_PROP_RTCP] = FIELD (rtcp),
  [GST_UVGRTP_PROP_RTCP_PORT] = FIELD (rtcp_port),
  [GST_UVGRTP_PROP_RTCP_MUX] = FIELD (rtcp_mux),
  [GST_UVGRTP_PROP_CNAME] = FIELD (cname),
  [GST_UVGRTP_PROP_RTCP_MIN_INTERVAL] = FIELD (rtcp_min_interval),
  [GST_UVGRTP_PROP_SRTP_KEY] = FIELD (srtp_key),
  [GST_UVGRTP_PROP_SRTP_CIPHER] = FIELD (srtp_cipher),
  [GST_UVGRTP_PROP_SRTP_AUTH] = FIELD (srtp_auth),
  [GST_UVGRTP_PROP_DO_RETRANSMISSION] = FIELD (do_retransmission),
  [GST_UVGRTP_PROP_RTX_PT] = FIELD (rtx_pt),
};
#undef FIELD

gboolean
gst_uvgrtp_props_set (GObject * object, GstUvgRtpCommonSettings * s,
    guint first, const gsize * prop_field, guint prop_id,
    const GValue * value)
{
  guint p = prop_id - first;

  if (prop_id < first) {
    if (!prop_field[prop_id])
      return FALSE;
    gst_uvgrtp_field_set (G_STRUCT_MEMBER_P (object, prop_field[prop_id]),
        value);
    return TRUE;
  }
  if (p >= GST_UVGRTP_N_PROPS)
    return FALSE;
  if (p >= GST_UVGRTP_PROP_ZRTP_FIRST) {
    gst_uvgrtp_zrtp_settings_set_property (GST_OBJECT (object), &s->zrtp,
        p - GST_UVGRTP_PROP_ZRTP_FIRST, value);
    return TRUE;
  }
  if (p == GST_UVGRTP_PROP_SRTP_KEY) {
    /* key material: overwritten before it is freed */
    gst_uvgrtp_free_secret (s->srtp_key);
    s->srtp_key = g_value_dup_string (value);
    return TRUE;
  }
  gst_uvgrtp_field_set (G_STRUCT_MEMBER_P (s, settings_field[p]), value);
  return TRUE;
}

gboolean
gst_uvgrtp_props_get (GObject * object, GstUvgRtpCommonSettings * s,
    GstUvgRtpZrtpCtl * ctl, guint first, const gsize * prop_field,
    guint prop_id, GValue * value)
{
  guint p = prop_id - first;

  if (prop_id < first) {
    if (!prop_field[prop_id])
      return FALSE;
    gst_uvgrtp_field_get (G_STRUCT_MEMBER_P (object, prop_field[prop_id]),
        value);
    return TRUE;
  }
  if (p >= GST_UVGRTP_N_PROPS)
    return FALSE;
  if (p >= GST_UVGRTP_PROP_ZRTP_FIRST) {
    gst_uvgrtp_zrtp_settings_get_property (&s->zrtp, ctl,
        p - GST_UVGRTP_PROP_ZRTP_FIRST, value);
    return TRUE;
  }
  gst_uvgrtp_field_get (G_STRUCT_MEMBER_P (s, settings_field[p]), value);
  return TRUE;
}

void
gst_uvgrtp_field_set (gpointer field, const GValue * value)
{
  /* GObject hands set_property a value of the property's type */
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value))) {
    case G_TYPE_STRING:
      g_free (*(gchar **) field);
      *(gchar **) field = g_value_dup_string (value);
      break;
    case G_TYPE_INT:
      *(gint *) field = g_value_get_int (value);
      break;
    case G_TYPE_UINT:
      *(guint *) field = g_value_get_uint (value);
      break;
    case G_TYPE_INT64:
      *(gint64 *) field = g_value_get_int64 (value);
      break;
    case G_TYPE_UINT64:
      *(guint64 *) field = g_value_get_uint64 (value);
      break;
    case G_TYPE_DOUBLE:
      *(gdouble *) field = g_value_get_double (value);
      break;
    case G_TYPE_BOOLEAN:
      *(gboolean *) field = g_value_get_boolean (value);
      break;
    case G_TYPE_ENUM:
      *(gint *) field = g_value_get_enum (value);
      break;
    case G_TYPE_OBJECT:
      g_clear_object ((GObject **) field);
      *(GObject **) field = g_value_dup_object (value);
      break;
    default:
      g_assert_not_reached ();
  }
}

void
gst_uvgrtp_field_get (gconstpointer field, GValue * value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value))) {
    case G_TYPE_STRING:
      g_value_set_string (value, *(gchar * const *) field);
      break;
    case G_TYPE_INT:
      g_value_set_int (value, *(const gint *) field);
      break;
    case G_TYPE_UINT:
      g_value_set_uint (value, *(const guint *) field);
      break;
    case G_TYPE_INT64:
      g_value_set_int64 (value, *(const gint64 *) field);
      break;
    case G_TYPE_UINT64:
      g_value_set_uint64 (value, *(const guint64 *) field);
      break;
    case G_TYPE_DOUBLE:
      g_value_set_double (value, *(const gdouble *) field);
      break;
    case G_TYPE_BOOLEAN:
      g_value_set_boolean (value, *(const gboolean *) field);
      break;
    case G_TYPE_ENUM:
      g_value_set_enum (value, *(const gint *) field);
      break;
    case G_TYPE_OBJECT:
      g_value_set_object (value, *(GObject * const *) field);
      break;
    default:
      g_assert_not_reached ();
  }
}
