/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What uvgrtpsink and uvgrtpsrc have in common, declared once.
 *
 * - The properties both elements have (socket, RTCP, SRTP, retransmission,
 *   ZRTP), each with one name, type, unit, blurb and documentation, kept in
 *   a GstUvgRtpCommonSettings embedded in each element and set and read
 *   through the helpers here, so that each element's set_property and
 *   get_property handle only their own properties.
 * - Properties kept as plain fields of an instance, set and read by their
 *   GParamSpec's value type from a table of offsets.
 */
#ifndef __GST_UVGRTP_PROPS_H__
#define __GST_UVGRTP_PROPS_H__

#include <gio/gio.h>
#include <gst/gst.h>

#include "urtp/rtcpio.h"

#include "gstuvgrtpsrtp.h"
#include "gstuvgrtpzrtpctl.h"

G_BEGIN_DECLS

/* Which element installs the properties: the defaults differ where the
 * two directions need different ones (a receive buffer for video bursts). */
typedef enum
{
  GST_UVGRTP_ROLE_SENDER,       /* uvgrtpsink */
  GST_UVGRTP_ROLE_RECEIVER,     /* uvgrtpsrc */
} GstUvgRtpRole;

/* The shared properties in the order they are installed: property id = the
 * element's first shared id + this. */
typedef enum
{
  GST_UVGRTP_PROP_BUFFER_SIZE,
  GST_UVGRTP_PROP_MULTICAST_IFACE,
  GST_UVGRTP_PROP_SOCKET,
  GST_UVGRTP_PROP_USED_SOCKET,
  GST_UVGRTP_PROP_CLOSE_SOCKET,
  GST_UVGRTP_PROP_RTCP,
  GST_UVGRTP_PROP_RTCP_PORT,
  GST_UVGRTP_PROP_RTCP_MUX,
  GST_UVGRTP_PROP_CNAME,
  GST_UVGRTP_PROP_RTCP_MIN_INTERVAL,
  GST_UVGRTP_PROP_SRTP_KEY,
  GST_UVGRTP_PROP_SRTP_CIPHER,
  GST_UVGRTP_PROP_SRTP_AUTH,
  GST_UVGRTP_PROP_DO_RETRANSMISSION,
  GST_UVGRTP_PROP_RTX_PT,
  /* GST_UVGRTP_ZRTP_N_PROPS ids from here on (gstuvgrtpzrtpctl.h) */
  GST_UVGRTP_PROP_ZRTP_FIRST,
  GST_UVGRTP_N_PROPS = GST_UVGRTP_PROP_ZRTP_FIRST + GST_UVGRTP_ZRTP_N_PROPS
} GstUvgRtpProp;

/* The values of the shared properties, under the element's object lock. */
typedef struct
{
  /* socket */
  gint buffer_size;             /* bytes; 0: the system's default */
  gchar *multicast_iface;       /* NULL: the system's choice */
  GSocket *socket;              /* the application's; NULL: our own */
  GSocket *used_socket;         /* while open: `socket` or a wrapper of ours */
  gboolean close_socket;        /* close `socket` when the element stops */
  /* RTCP */
  gboolean rtcp;
  gint rtcp_port;               /* the RTCP port beside `port`; 0: port + 1 */
  gboolean rtcp_mux;            /* RTCP on the RTP port (RFC 5761) */
  gchar *cname;                 /* NULL: the process's default */
  guint64 rtcp_min_interval;    /* ns */
  /* SRTP */
  gchar *srtp_key;              /* hex master key || salt; NULL: no SRTP */
  GstUvgRtpSrtpCipher srtp_cipher;
  GstUvgRtpSrtpAuth srtp_auth;
  /* retransmission (needs rtcp) */
  gboolean do_retransmission;
  gint rtx_pt;                  /* -1: the media's + 1 */
  /* ZRTP */
  GstUvgRtpZrtpSettings zrtp;
} GstUvgRtpCommonSettings;

/* Installs the GST_UVGRTP_N_PROPS shared properties from first_prop_id on
 * and the zrtp-set-sas-verified action signal (see gstuvgrtpzrtpctl.h). */
void gst_uvgrtp_props_install (GObjectClass * klass, guint first_prop_id,
    GstUvgRtpRole role, GCallback sas_verified_handler);
void gst_uvgrtp_settings_init (GstUvgRtpCommonSettings * s, GstUvgRtpRole role);
void gst_uvgrtp_settings_clear (GstUvgRtpCommonSettings * s);
/* set_property and get_property for the shared properties (from
 * first_prop_id on) and the element's own kept in a field of the instance
 * object (at offset prop_field[prop_id], 0: not kept so; prop_field has
 * first_prop_id entries); called with the object lock held. FALSE for any
 * other prop_id: the element handles it. ctl (may be NULL) gives the
 * read-only ZRTP values. */
gboolean gst_uvgrtp_props_set (GObject * object, GstUvgRtpCommonSettings * s,
    guint first_prop_id, const gsize * prop_field, guint prop_id,
    const GValue * value);
gboolean gst_uvgrtp_props_get (GObject * object, GstUvgRtpCommonSettings * s,
    GstUvgRtpZrtpCtl * ctl, guint first_prop_id, const gsize * prop_field,
    guint prop_id, GValue * value);

/* The keys for a start, before any network setting: takes the object
 * lock. The element's last ZRTP endpoint (*ctlp) is dropped; zs gets a
 * copy of the ZRTP settings (to clear), cfg and key the static SRTP key
 * (cfg->key_len 0: none; key to wipe). zrtp with srtp-key, or a bad key, is
 * an error: posted, FALSE (zs left clear). */
gboolean gst_uvgrtp_settings_take_keys (GstElement * element,
    GstUvgRtpCommonSettings * s, GstUvgRtpZrtpCtl ** ctlp,
    urtp_srtp_config_t * cfg, guint8 key[URTP_SRTP_MAX_KEY_LEN],
    GstUvgRtpZrtpSettings * zs);

/* The application's socket handed over in `socket` (or the sink's
 * `socket-v6`): a new reference, or NULL (object lock held). */
GSocket *gst_uvgrtp_settings_take_socket (GstUvgRtpCommonSettings * s);
/* What `used-socket` then gives (object lock held): `given` (the socket
 * taken above), or a GSocket on a duplicate of fd, the socket the element
 * opened itself; *used (NULL: s->used_socket) keeps it. */
void gst_uvgrtp_settings_socket_opened (GstUvgRtpCommonSettings * s,
    GSocket ** used, GSocket * given, int fd);
/* When the element has closed its descriptor (object lock held): `used`
 * is dropped; given (if any) is closed when close-socket says so, and its
 * reference dropped. */
void gst_uvgrtp_settings_socket_closed (GstUvgRtpCommonSettings * s,
    GSocket ** used, GSocket * given);

/* The RTCP port that goes with port: rtcp_port, or port + 1 as RFC 3550
 * pairs them (0 when port is 0: any). */
gint gst_uvgrtp_settings_rtcp_port (const GstUvgRtpCommonSettings * s,
    gint port);
/* RTCP's configuration when the element starts (object lock held): FALSE
 * without rtcp; else rc zeroed but for its min_interval, *mux (rtcp-mux)
 * and *rtcp_port, the RTCP port beside port (port itself with rtcp-mux). */
gboolean gst_uvgrtp_settings_rtcp (const GstUvgRtpCommonSettings * s,
    gint port, urtp_rtcpio_config_t * rc, gboolean * mux, gint * rtcp_port);

/* Properties kept in a field of their own: *field is set from value (and
 * read into value) as the value's type (the property's) says: gchar * (the
 * old string freed), gint, guint, gint64, guint64, gdouble, gboolean, an
 * enum kept in an int-sized field, or a GObject (a reference held, the old
 * one dropped). */
void gst_uvgrtp_field_set (gpointer field, const GValue * value);
void gst_uvgrtp_field_get (gconstpointer field, GValue * value);

G_END_DECLS

#endif
