/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RTP header extensions (RFC 8285) for uvgrtpsink and uvgrtpsrc, through
 * GStreamer's own GstRTPHeaderExtension objects, declared once for both.
 *
 * - The API RTPBasePayload and RTPBaseDepayload offer: the `add-extension`
 *   and `clear-extensions` actions, the `request-extension` signal, the
 *   `auto-header-extension` property (extensions enabled from the extmap-N
 *   fields of caps: the sink's `rtp-caps`, the src's `caps`) and the
 *   read-only `extensions`.
 * - Sending: once per access unit, each extension writes its element
 *   (gst_rtp_header_extension_write) into a urtp_hdrext_t that lib/ copies
 *   into every packet of the access unit; the transport-wide sequence number
 *   (rtphdrexttwcc's URI) is not asked of its object but written by lib/
 *   per packet (urtp_sendstream_set_twcc).
 * - Receiving: the elements lib/ kept for an access unit (urtp_au_t.ext)
 *   are read onto its output buffer (gst_rtp_header_extension_read), and an
 *   extension that changes the output caps (colour space) updates them.
 * - The a=extmap lines of the SDP.
 *
 * Thread safety: the set of extensions changes under the helper's lock
 * (actions, caps, properties: any thread); the streaming thread takes it
 * once per access unit, and not at all while there is no extension.
 */
#ifndef __GST_UVGRTP_HDREXT_H__
#define __GST_UVGRTP_HDREXT_H__

#include <gst/gst.h>
#include <gst/rtp/rtp.h>

#include "urtp/depay.h"
#include "urtp/hdrext.h"
#include "urtp/sdp.h"
#include "urtp/sendstream.h"

G_BEGIN_DECLS

typedef struct
{
  GstElement *element;          /* for signals and messages, not a reference */
  GMutex lock;
  GPtrArray *exts;              /* GstRTPHeaderExtension, owned, by ID */
  gboolean auto_ext;            /* auto-header-extension */
  volatile gint n_exts;         /* the ones written per access unit (all
                                 * but the transport-wide sequence number),
                                 * read without the lock */
  volatile gint n_all;          /* exts->len, likewise */
  volatile gint serial;         /* bumped at each change of exts */
  guint request_signal;         /* the element's request-extension */
  /* sending: the scratch RTP packet handed to write() as its output */
  GstBuffer *scratch;
  GstCaps *sink_caps;           /* the media caps, for set_non_rtp_sink_caps */
  /* the streaming thread's: the serial the stream was last told, the
   * access unit's elements */
  gint stream_serial;
  urtp_hdrext_t elems;
} GstUvgRtpHdrExt;

/* Installs auto-header-extension and extensions (property ids prop_auto and
 * prop_extensions), and the add-extension, clear-extensions and
 * request-extension signals with the element's class handlers for the
 * actions (void (*)(GstElement *, GstRTPHeaderExtension *) and
 * void (*)(GstElement *)); returns request-extension's id. */
guint gst_uvgrtp_hdrext_install (GObjectClass * klass, guint prop_auto,
    guint prop_extensions, GCallback add_handler, GCallback clear_handler);

void gst_uvgrtp_hdrext_init (GstUvgRtpHdrExt * h, GstElement * element,
    guint request_signal);
void gst_uvgrtp_hdrext_finalize (GstUvgRtpHdrExt * h);

/* The actions. add: the extension must have an ID (1-255); one with the
 * same ID is replaced. */
void gst_uvgrtp_hdrext_add (GstUvgRtpHdrExt * h, GstRTPHeaderExtension * ext);
void gst_uvgrtp_hdrext_clear (GstUvgRtpHdrExt * h);

/* The properties: TRUE when prop_id was one of them. */
gboolean gst_uvgrtp_hdrext_set_property (GstUvgRtpHdrExt * h, guint prop_id,
    guint prop_auto, guint prop_extensions, const GValue * value);
gboolean gst_uvgrtp_hdrext_get_property (GstUvgRtpHdrExt * h, guint prop_id,
    guint prop_auto, guint prop_extensions, GValue * value);

/* Enables what the extmap-N fields of caps ask for (request-extension,
 * then with auto-header-extension the objects GStreamer has for the URI),
 * keeps the ones already there with the same ID and URI, and gives each its
 * attributes from caps. Extensions added by the action stay. An extmap-N
 * that none can serve is a warning naming the URI. */
void gst_uvgrtp_hdrext_from_caps (GstUvgRtpHdrExt * h, const GstCaps * caps);

/* Sending. The media caps (colour space reads them). */
void gst_uvgrtp_hdrext_set_sink_caps (GstUvgRtpHdrExt * h, GstCaps * caps);
/* The transport-wide sequence number's ID (0: none). */
guint gst_uvgrtp_hdrext_twcc_id (GstUvgRtpHdrExt * h);
/* Whether any extension other than the transport-wide sequence number
 * writes per access unit (cheap: no lock while there is none). */
static inline gboolean
gst_uvgrtp_hdrext_any (GstUvgRtpHdrExt * h)
{
  return g_atomic_int_get (&h->n_exts) > 0;
}
/* Receiving: whether any extension is there to read (no lock). */
static inline gboolean
gst_uvgrtp_hdrext_has_any (GstUvgRtpHdrExt * h)
{
  return g_atomic_int_get (&h->n_all) > 0;
}
/* A new stream: it is told the extensions at its first access unit. */
void gst_uvgrtp_hdrext_stream_started (GstUvgRtpHdrExt * h);
/* Before the access unit in buf is pushed to ss (streaming thread): the
 * transport-wide sequence number's ID when the set changed, and the
 * elements the extensions write for it (ssrc, pt and ts make the scratch
 * packet they see). Nothing while there is no extension. */
void gst_uvgrtp_hdrext_send (GstUvgRtpHdrExt * h, urtp_sendstream_t * ss,
    GstBuffer * buf, guint32 ssrc, guint8 pt, guint32 ts);

/* Receiving: reads the access unit's elements onto outbuf. Returns TRUE
 * when an extension wants the output caps updated (then call
 * gst_uvgrtp_hdrext_update_caps). */
gboolean gst_uvgrtp_hdrext_read (GstUvgRtpHdrExt * h, const urtp_au_t * au,
    GstBuffer * outbuf);
/* Lets the extensions that asked for it update caps (writable). Returns
 * TRUE when caps changed. */
gboolean gst_uvgrtp_hdrext_update_caps (GstUvgRtpHdrExt * h, GstCaps * caps);

/* The extensions' a=extmap entries into d (up to URTP_SDP_MAX_EXTMAP); the
 * URIs are interned strings. */
void gst_uvgrtp_hdrext_sdp (GstUvgRtpHdrExt * h, urtp_sdp_desc_t * d);

G_END_DECLS

#endif
