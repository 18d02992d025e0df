/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ZRTP shared by the uvgrtp elements.
 *
 * - Helpers all three ZRTP elements use: the GstUvgRtpZrtpState enum, ZID
 *   parsing and printing, the `uvgrtp-zrtp` bus message, the read-only
 *   properties derived from urtp_zrtp_info_t.
 * - The `zrtp*` properties and the `zrtp-set-sas-verified` action signal of
 *   uvgrtpsink and uvgrtpsrc, installed and handled here.
 * - GstUvgRtpZrtpCtl: one ZRTP endpoint on an element's own UDP socket, a
 *   GStreamer adapter over urtp_zrtp_ep (lib/urtp/zrtp_ep.h), which holds
 *   the policy (when to start and restart, the peer binding, Multistream
 *   groups, keys to SRTP). Its thread runs the timers and (for a sender)
 *   receives the peer's ZRTP packets on the socket; a receiver hands it the
 *   ZRTP packets its streaming thread finds among the media. Its events
 *   become the `uvgrtp-zrtp` messages and property notifications.
 */
#ifndef __GST_UVGRTP_ZRTP_CTL_H__
#define __GST_UVGRTP_ZRTP_CTL_H__

#include <gst/gst.h>
#include <sys/socket.h>

#include "urtp/srtp.h"
#include "urtp/zrtp.h"
#include "urtp/zrtp_ep.h"

G_BEGIN_DECLS

/* Values match urtp_zrtp_state_t in lib/urtp/zrtp.h. */
typedef enum
{
  GST_UVGRTP_ZRTP_STATE_IDLE,
  GST_UVGRTP_ZRTP_STATE_DISCOVERY,
  GST_UVGRTP_ZRTP_STATE_KEY_AGREEMENT,
  GST_UVGRTP_ZRTP_STATE_SECURE,
  GST_UVGRTP_ZRTP_STATE_FAILED,
} GstUvgRtpZrtpState;

#define GST_TYPE_UVGRTP_ZRTP_STATE (gst_uvgrtp_zrtp_state_get_type ())
GType gst_uvgrtp_zrtp_state_get_type (void);

/* --- helpers ------------------------------------------------------------- */

/* 24 hex digits (either case) to a ZID; FALSE if s is not that. */
gboolean gst_uvgrtp_zrtp_parse_zid (const gchar * s,
    guint8 out[URTP_ZRTP_ZID_LEN]);
/* Lower-case hex of n bytes; g_free() it. */
gchar *gst_uvgrtp_zrtp_hex (const guint8 * p, gsize n);
gboolean gst_uvgrtp_zrtp_zid_is_zero (const guint8 * zid);
/* Overwrites memory that held secrets (not elided by the compiler). */
void gst_uvgrtp_zrtp_wipe (void *p, gsize n);
/* The `uvgrtp-zrtp` element message for a secure or failed session:
 * state, sas, sas-verified, peer-sas-verified, cipher, auth-tag,
 * key-agreement, sas-type, hash, srtp-profile (srtp_profile, "" if NULL),
 * initiator, cache-mismatch, secrets-matched, zid, peer-zid,
 * peer-client-id; on failure also reason, error-code, error-from-peer. */
GstMessage *gst_uvgrtp_zrtp_make_message (GstObject * src,
    const urtp_zrtp_info_t * info, const gchar * srtp_profile);

/* Read-only values taken from urtp_zrtp_info_t, and the settings of
 * uvgrtpsink and uvgrtpsrc, in the order they are installed (property id =
 * the element's first zrtp id + this). */
typedef enum
{
  GST_UVGRTP_ZRTP_PROP_ENABLE,          /* "zrtp" */
  GST_UVGRTP_ZRTP_PROP_ALLOW_CLEAR,     /* "zrtp-allow-clear" */
  GST_UVGRTP_ZRTP_PROP_CACHE_FILE,      /* "zrtp-cache-file" */
  GST_UVGRTP_ZRTP_PROP_ZID,             /* "zrtp-zid" */
  GST_UVGRTP_ZRTP_PROP_SESSION,         /* "zrtp-session" */
  GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENTS,  /* "zrtp-key-agreements" */
  GST_UVGRTP_ZRTP_PROP_STATE,           /* read-only from here on */
  GST_UVGRTP_ZRTP_PROP_SAS,
  GST_UVGRTP_ZRTP_PROP_SAS_VERIFIED,
  GST_UVGRTP_ZRTP_PROP_PEER_SAS_VERIFIED,
  GST_UVGRTP_ZRTP_PROP_CIPHER,
  GST_UVGRTP_ZRTP_PROP_AUTH_TAG,
  GST_UVGRTP_ZRTP_PROP_KEY_AGREEMENT,
  GST_UVGRTP_ZRTP_PROP_SAS_TYPE,
  GST_UVGRTP_ZRTP_PROP_PEER_ZID,
  GST_UVGRTP_ZRTP_N_PROPS
} GstUvgRtpZrtpProp;

/* Sets value (of the property's type) from info, for the read-only
 * properties STATE .. PEER_ZID. */
void gst_uvgrtp_zrtp_info_to_value (const urtp_zrtp_info_t * info,
    GstUvgRtpZrtpProp prop, GValue * value);

/* --- the properties of uvgrtpsink and uvgrtpsrc --------------------------- */

/* Written under the element's object lock, read at start. */
typedef struct
{
  gboolean enabled;
  gboolean allow_clear;
  gchar *cache_file;
  gboolean have_zid;
  guint8 zid[URTP_ZRTP_ZID_LEN];
  gchar *session;
  gchar *key_agreements;        /* "EC25,DH3k" ...; NULL: the defaults */
} GstUvgRtpZrtpSettings;

void gst_uvgrtp_zrtp_settings_init (GstUvgRtpZrtpSettings * s);
void gst_uvgrtp_zrtp_settings_clear (GstUvgRtpZrtpSettings * s);
/* dst gets its own copy of src (call under the object lock, clear after). */
void gst_uvgrtp_zrtp_settings_copy (GstUvgRtpZrtpSettings * dst,
    const GstUvgRtpZrtpSettings * src);

/* Installs the GST_UVGRTP_ZRTP_N_PROPS properties from first_prop_id on,
 * and the action signal `zrtp-set-sas-verified` (gboolean verified,
 * returns gboolean) running handler (gboolean (*) (GstElement *, gboolean)).
 * Returns the signal id. */
guint gst_uvgrtp_zrtp_install (GObjectClass * klass, guint first_prop_id,
    GCallback handler);

typedef struct _GstUvgRtpZrtpCtl GstUvgRtpZrtpCtl;

/* Set and get for the properties; called with the object lock held. ctl
 * (may be NULL) provides the read-only values. */
void gst_uvgrtp_zrtp_settings_set_property (GstObject * element,
    GstUvgRtpZrtpSettings * s, GstUvgRtpZrtpProp prop, const GValue * value);
void gst_uvgrtp_zrtp_settings_get_property (GstUvgRtpZrtpSettings * s,
    GstUvgRtpZrtpCtl * ctl, GstUvgRtpZrtpProp prop, GValue * value);

/* --- the endpoint ---------------------------------------------------------- */

typedef enum
{
  /* uvgrtpsink: starts at once, sends Hello to the socket's remote, receives
   * the answers on the socket itself */
  GST_UVGRTP_ZRTP_SENDER,
  /* uvgrtpsrc: starts on the first Hello (or media) and answers to where it
   * came from; its streaming thread feeds it with ..._ctl_recv() */
  GST_UVGRTP_ZRTP_RECEIVER,
} GstUvgRtpZrtpRole;

/* ZRTP counters of one element; reset when it starts. */
typedef struct
{
  guint64 sent;                 /* ZRTP packets sent, retransmissions too */
  guint64 received;             /* ZRTP packets received */
  guint64 retransmits;
  guint64 bad;                  /* malformed (CRC, lengths) */
  guint64 unexpected;           /* valid but not for the state */
  guint64 auth_fail;            /* hash chain or MAC failed */
  guint64 restarts;             /* fresh sessions after a timeout or a
                                   peer that started over */
  guint64 foreign;              /* ignored: not from the bound peer */
  guint64 discarded;            /* read from a sender's socket but not ZRTP
                                   (or too long): dropped unread */
} GstUvgRtpZrtpCounters;

/* Validates the settings, creates the endpoint and starts its thread. fd
 * is the element's socket (kept open until ..._ctl_stop() returns);
 * remote is where a sender sends (the socket's remote). A sender's thread
 * reads the answers from fd unless another reader of that socket (the RTCP
 * thread with rtcp-mux) passes them on with urtp_zrtp_ep_recv():
 * sender_reads FALSE. On bad settings posts an error naming the property
 * and returns NULL. */
GstUvgRtpZrtpCtl *gst_uvgrtp_zrtp_ctl_start (GstElement * element,
    const GstUvgRtpZrtpSettings * settings, GstUvgRtpZrtpRole role, int fd,
    gboolean sender_reads, const struct sockaddr *remote,
    socklen_t remote_len, guint32 ssrc);
/* Stops the thread and frees the session; the last state stays readable.
 * Call before closing the socket. */
void gst_uvgrtp_zrtp_ctl_stop (GstUvgRtpZrtpCtl * ctl);
GstUvgRtpZrtpCtl *gst_uvgrtp_zrtp_ctl_ref (GstUvgRtpZrtpCtl * ctl);
void gst_uvgrtp_zrtp_ctl_unref (GstUvgRtpZrtpCtl * ctl);

/* The lib/ endpoint under ctl: the media path (lib's sending and
 * receiving streams) works with it directly (lib/urtp/zrtp_ep.h). */
urtp_zrtp_ep_t *gst_uvgrtp_zrtp_ctl_endpoint (GstUvgRtpZrtpCtl * ctl);

void gst_uvgrtp_zrtp_ctl_get_info (GstUvgRtpZrtpCtl * ctl,
    urtp_zrtp_info_t * info);
void gst_uvgrtp_zrtp_ctl_get_counters (GstUvgRtpZrtpCtl * ctl,
    GstUvgRtpZrtpCounters * out);
/* The action signal's work; logs and returns FALSE before the keys exist. */
gboolean gst_uvgrtp_zrtp_ctl_set_sas_verified (GstUvgRtpZrtpCtl * ctl,
    gboolean verified);
/* The zrtp-set-sas-verified action of uvgrtpsink and uvgrtpsrc: *ctlp is
 * the element's endpoint, read under its object lock. */
gboolean gst_uvgrtp_zrtp_element_set_sas_verified (GstElement * element,
    GstUvgRtpZrtpCtl ** ctlp, gboolean verified);
/* What an endpoint (lib/urtp/zrtp_ep.h) tells, from its thread with no
 * lock held, as both ZRTP adapters (this one and uvgrtpzrtp's) report it:
 * secure and failed as `uvgrtp-zrtp` messages, a cache file that cannot be
 * used (cache_file, property cache_prop) or a session that cannot be
 * created as an error, restarts in the log. Returns TRUE for
 * URTP_ZRTP_EP_EV_INFO_CHANGED: the caller notifies its read-only
 * properties. */
gboolean gst_uvgrtp_zrtp_handle_event (GstElement * element,
    const urtp_zrtp_ep_event_t * ev, const gchar * cache_file,
    const gchar * cache_prop);
/* The message type of a ZRTP packet ("Hello", "Commit", ...; "?" when too
 * short), for logs; out holds it. */
const gchar *gst_uvgrtp_zrtp_type_name (const guint8 * pkt, gsize len,
    gchar out[9]);

G_END_DECLS

#endif
