/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * SECTION:element-uvgrtpzrtp
 * @title: uvgrtpzrtp
 * @see_also: rtpbin, udpsrc, udpsink, srtpenc, srtpdec
 *
 * Agrees SRTP keys with the peer by ZRTP (RFC 6189) on the media path and
 * protects the media with them (SRTP and SRTCP, RFC 3711), in any RTP
 * pipeline: between udpsrc/udpsink and rtpbin, or between udpsrc/udpsink
 * and payloaders and depayloaders.
 *
 * The element is full duplex and has four pairs of always pads. Traffic
 * from the network goes through recv_rtp_sink to recv_rtp_src and through
 * recv_rtcp_sink to recv_rtcp_src; traffic to the network goes through
 * send_rtp_sink to send_rtp_src and through send_rtcp_sink to
 * send_rtcp_src. ZRTP messages travel on the RTP port: arriving ones are
 * taken out of what comes in on recv_rtp_sink, and the element's own are
 * sent on send_rtp_src, so one instance must carry both directions of a
 * stream and send_rtp_src must reach the peer's receiving port.
 *
 * The exchange starts when the first RTP packet comes in on send_rtp_sink
 * (its SSRC is used for the ZRTP packets), or, when #GstUvgRtpZrtp:ssrc is
 * set, as the element goes to PLAYING. An element that only receives starts
 * shortly after the peer's first ZRTP packet. Unanswered Hellos (about four
 * seconds of them) are followed by a new exchange, quietly and counted
 * (zrtp-restarts in #GstUvgRtpZrtp:stats); a new exchange started by the
 * peer is followed.
 *
 * The element is bound to its peer: to the source address of the packets
 * when udpsrc reports it (a #GstNetAddressMeta on the buffers, its default),
 * and once secure to the peer's ZID. While the peer is heard from (its
 * ZRTP, or media that authenticates, within the last two seconds), ZRTP
 * from any other address and a Hello with another ZID are ignored and
 * counted as zrtp-foreign: a third party cannot take the stream over. The
 * policy is lib/'s (lib/urtp/zrtp_ep.h), the same as uvgrtpsink's and
 * uvgrtpsrc's; docs/zrtp.md describes it.
 *
 * Until the keys are agreed and confirmed, media to send is dropped and
 * counted, and received media is dropped: nothing is ever sent in clear
 * unless #GstUvgRtpZrtp:allow-clear is set. Once secure, RTP and RTCP to
 * send are protected with this side's key and received SRTP and SRTCP are
 * authenticated and decrypted with the peer's key; the two directions use
 * different keys. A packet that fails authentication, or is replayed, is
 * dropped and counted in #GstUvgRtpZrtp:stats.
 *
 * The element posts an element message named `uvgrtp-zrtp` when the
 * stream becomes secure (`state` "secure") and when the exchange fails
 * (`state` "failed"). Both carry the fields
 *
 * - `state` (string): "secure" or "failed"
 * - `sas` (string): the short authentication string to compare by voice
 *   ("" on failure)
 * - `sas-verified` (boolean): the users confirmed the SAS in an earlier
 *   call with this peer and the retained secrets still match
 * - `peer-sas-verified` (boolean): the peer says the same
 * - `cipher`, `auth-tag`, `key-agreement`, `sas-type`, `hash` (strings):
 *   the negotiated algorithms ("AES1", "HS80", "EC25", "B32", "S256")
 * - `srtp-profile` (string): e.g. "AES_CM_128_HMAC_SHA1_80"
 * - `initiator` (boolean), `cache-mismatch` (boolean),
 *   `secrets-matched` (boolean)
 * - `zid`, `peer-zid` (strings, 24 hex digits), `peer-client-id` (string)
 *
 * and on failure `reason` (string), `error-code` (unsigned, RFC 6189
 * section 5.9) and `error-from-peer` (boolean).
 *
 * The users verify the SAS by reading it to each other; the application
 * then emits #GstUvgRtpZrtp::set-sas-verified. With a
 * #GstUvgRtpZrtp:cache-file the flag and the retained secrets are kept per
 * peer, so later calls report `sas-verified` TRUE without a new comparison
 * for as long as the secrets keep matching.
 *
 * ## Example pipeline
 * |[
 * gst-launch-1.0 -m uvgrtpzrtp name=z cache-file=alice.zrtp \
 *   videotestsrc is-live=true ! x264enc tune=zerolatency ! \
 *     rtph264pay config-interval=-1 ! z.send_rtp_sink \
 *   z.send_rtp_src ! udpsink host=192.0.2.2 port=5004 \
 *   udpsrc port=5004 caps="application/x-rtp,media=video,clock-rate=90000,encoding-name=H264" ! \
 *     z.recv_rtp_sink z.recv_rtp_src ! rtph264depay ! avdec_h264 ! autovideosink
 * ]| Sends and receives H.264 with a peer running the same pipeline.
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include <gst/net/gstnetaddressmeta.h>

#include "gstuvgrtpcommon.h"
#include "gstuvgrtpzrtp.h"

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_zrtp_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_zrtp_debug

#define DEFAULT_ALLOW_CLEAR FALSE
#define DEFAULT_CACHE_FILE NULL
#define DEFAULT_SSRC 0
/* A video frame bursts many packets; libsrtp2's default of 128 can refuse
 * a reordered one within a frame. */
#define DEFAULT_REPLAY_WINDOW 1024

/* After a peer's first ZRTP packet, how long to wait for outgoing RTP (whose
 * SSRC the ZRTP packets should carry) before starting without it. */
#define START_WAIT_MS 200

enum
{
  PROP_0,
  PROP_ALLOW_CLEAR,
  PROP_CACHE_FILE,
  PROP_ZID,
  PROP_SSRC,
  PROP_REPLAY_WINDOW,
  PROP_STATE,
  PROP_SAS,
  PROP_SAS_VERIFIED,
  PROP_PEER_SAS_VERIFIED,
  PROP_CIPHER,
  PROP_AUTH_TAG,
  PROP_KEY_AGREEMENT,
  PROP_SAS_TYPE,
  PROP_PEER_ZID,
  PROP_STATS,
  N_PROPERTIES
};

static GParamSpec *properties[N_PROPERTIES];

enum
{
  SIGNAL_SET_SAS_VERIFIED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

#define NOTIFY_STATE_CHANGE ((1u << PROP_STATE) | (1u << PROP_SAS) | \
    (1u << PROP_SAS_VERIFIED) | (1u << PROP_PEER_SAS_VERIFIED) | \
    (1u << PROP_CIPHER) | (1u << PROP_AUTH_TAG) | (1u << PROP_KEY_AGREEMENT) | \
    (1u << PROP_SAS_TYPE) | (1u << PROP_PEER_ZID))

static GstStaticPadTemplate recv_rtp_sink_template =
    GST_STATIC_PAD_TEMPLATE ("recv_rtp_sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtp; application/x-srtp"));
static GstStaticPadTemplate recv_rtp_src_template =
GST_STATIC_PAD_TEMPLATE ("recv_rtp_src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtp"));
static GstStaticPadTemplate recv_rtcp_sink_template =
    GST_STATIC_PAD_TEMPLATE ("recv_rtcp_sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtcp; application/x-srtcp"));
static GstStaticPadTemplate recv_rtcp_src_template =
GST_STATIC_PAD_TEMPLATE ("recv_rtcp_src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtcp"));
static GstStaticPadTemplate send_rtp_sink_template =
GST_STATIC_PAD_TEMPLATE ("send_rtp_sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtp"));
static GstStaticPadTemplate send_rtp_src_template =
GST_STATIC_PAD_TEMPLATE ("send_rtp_src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-srtp"));
static GstStaticPadTemplate send_rtcp_sink_template =
GST_STATIC_PAD_TEMPLATE ("send_rtcp_sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-rtcp"));
static GstStaticPadTemplate send_rtcp_src_template =
GST_STATIC_PAD_TEMPLATE ("send_rtcp_src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("application/x-srtcp"));

#define gst_uvgrtp_zrtp_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstUvgRtpZrtp, gst_uvgrtp_zrtp, GST_TYPE_ELEMENT,
    GST_DEBUG_CATEGORY_INIT (gst_uvgrtp_zrtp_debug, "uvgrtpzrtp", 0,
        "uvgRTP ZRTP key agreement and SRTP"));
GST_ELEMENT_REGISTER_DEFINE (uvgrtpzrtp, "uvgrtpzrtp", GST_RANK_NONE,
    GST_TYPE_UVGRTP_ZRTP);

static void gst_uvgrtp_zrtp_finalize (GObject * object);
static void gst_uvgrtp_zrtp_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_uvgrtp_zrtp_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static GstStateChangeReturn gst_uvgrtp_zrtp_change_state (GstElement *
    element, GstStateChange transition);
static gboolean gst_uvgrtp_zrtp_set_sas_verified (GstUvgRtpZrtp * self,
    gboolean verified);

static GstFlowReturn gst_uvgrtp_zrtp_send_rtp_chain (GstPad * pad,
    GstObject * parent, GstBuffer * buf);
static GstFlowReturn gst_uvgrtp_zrtp_send_rtp_chain_list (GstPad * pad,
    GstObject * parent, GstBufferList * list);
static GstFlowReturn gst_uvgrtp_zrtp_send_rtcp_chain (GstPad * pad,
    GstObject * parent, GstBuffer * buf);
static GstFlowReturn gst_uvgrtp_zrtp_recv_rtp_chain (GstPad * pad,
    GstObject * parent, GstBuffer * buf);
static GstFlowReturn gst_uvgrtp_zrtp_recv_rtcp_chain (GstPad * pad,
    GstObject * parent, GstBuffer * buf);
static gboolean gst_uvgrtp_zrtp_sink_event (GstPad * pad, GstObject * parent,
    GstEvent * event);
static GstIterator *gst_uvgrtp_zrtp_iterate_internal_links (GstPad * pad,
    GstObject * parent);

/* ------------------------------------------------------------------------ */
/* Class                                                                    */

static void
gst_uvgrtp_zrtp_class_init (GstUvgRtpZrtpClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->finalize = gst_uvgrtp_zrtp_finalize;
  gobject_class->set_property = gst_uvgrtp_zrtp_set_property;
  gobject_class->get_property = gst_uvgrtp_zrtp_get_property;

  /**
   * GstUvgRtpZrtp:allow-clear:
   *
   * Let media through unprotected while the stream is not secure (before
   * the keys are agreed, or after the exchange failed). Off by default:
   * media is then dropped and counted, and never sent in clear. Once the
   * stream is secure, media is always protected whatever this says.
   */
  properties[PROP_ALLOW_CLEAR] = g_param_spec_boolean ("allow-clear",
      "Allow clear", "Pass media unprotected while not secure (default: "
      "drop it)", DEFAULT_ALLOW_CLEAR,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  /**
   * GstUvgRtpZrtp:cache-file:
   *
   * File keeping this endpoint's ZID and, per peer, the retained secrets and
   * the SAS verified flag (lib/urtp/zrtp.h describes the format). Created
   * if missing, written with mode 0600. Without it no secret is retained
   * and the SAS is never reported verified in a later call.
   */
  properties[PROP_CACHE_FILE] = g_param_spec_string ("cache-file",
      "Cache file", "Retained-secret cache (ZID, per-peer secrets and SAS "
      "verified flag); NULL: none", DEFAULT_CACHE_FILE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstUvgRtpZrtp:zid:
   *
   * This endpoint's ZRTP identifier as 24 hex digits. When not set, the
   * cache file's is used, or a random one (stored in the cache file if
   * there is one). Reads back the identifier in use once started.
   */
  properties[PROP_ZID] = g_param_spec_string ("zid", "ZID",
      "ZRTP identifier, 24 hex digits (NULL: from the cache file, or random)",
      NULL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstUvgRtpZrtp:ssrc:
   *
   * SSRC written in the ZRTP packets. 0 takes that of the first RTP packet
   * to send; any other value also starts the exchange as soon as the
   * element goes to PLAYING, without waiting for media.
   */
  properties[PROP_SSRC] = g_param_spec_uint ("ssrc", "SSRC",
      "SSRC of the ZRTP packets (0: the first outgoing RTP packet's)",
      0, G_MAXUINT32, DEFAULT_SSRC,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstUvgRtpZrtp:replay-window:
   *
   * SRTP replay window of the receiving direction, in packets.
   */
  properties[PROP_REPLAY_WINDOW] = g_param_spec_uint ("replay-window",
      "Replay window", "SRTP replay window of received media, in packets",
      URTP_SRTP_MIN_WINDOW, URTP_SRTP_MAX_WINDOW, DEFAULT_REPLAY_WINDOW,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  /**
   * GstUvgRtpZrtp:state:
   *
   * Where the exchange is. Media flows (protected) only in "secure".
   */
  properties[PROP_STATE] = g_param_spec_enum ("state", "State",
      "State of the ZRTP exchange", GST_TYPE_UVGRTP_ZRTP_STATE,
      GST_UVGRTP_ZRTP_STATE_IDLE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:sas:
   *
   * The short authentication string both users should see, once the keys
   * are agreed; NULL before.
   */
  properties[PROP_SAS] = g_param_spec_string ("sas", "SAS",
      "Short authentication string to compare with the peer", NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:sas-verified:
   *
   * The SAS was verified, in this call (#GstUvgRtpZrtp::set-sas-verified)
   * or in an earlier one with the same peer and cache file.
   */
  properties[PROP_SAS_VERIFIED] = g_param_spec_boolean ("sas-verified",
      "SAS verified", "The SAS was verified (now or in an earlier call)",
      FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:peer-sas-verified:
   *
   * The peer reported in its Confirm message that it holds the SAS verified.
   */
  properties[PROP_PEER_SAS_VERIFIED] =
      g_param_spec_boolean ("peer-sas-verified", "Peer SAS verified",
      "The peer holds the SAS verified", FALSE,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:cipher:
   *
   * Negotiated SRTP cipher: "AES1" (AES-128) or "AES3" (AES-256).
   */
  properties[PROP_CIPHER] = g_param_spec_string ("cipher", "Cipher",
      "Negotiated cipher (AES1, AES3)", NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:auth-tag:
   *
   * Negotiated SRTP authentication tag: "HS80" or "HS32".
   */
  properties[PROP_AUTH_TAG] = g_param_spec_string ("auth-tag", "Auth tag",
      "Negotiated SRTP authentication tag (HS80, HS32)", NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:key-agreement:
   *
   * Negotiated key agreement: "EC25", "DH3k" or "Mult".
   */
  properties[PROP_KEY_AGREEMENT] = g_param_spec_string ("key-agreement",
      "Key agreement", "Negotiated key agreement (EC25, DH3k)", NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:sas-type:
   *
   * Negotiated SAS rendering: "B32" (4 characters) or "B256" (two words).
   */
  properties[PROP_SAS_TYPE] = g_param_spec_string ("sas-type", "SAS type",
      "Negotiated SAS rendering (B32, B256)", NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:peer-zid:
   *
   * The peer's ZID as 24 hex digits, once its Hello arrived.
   */
  properties[PROP_PEER_ZID] = g_param_spec_string ("peer-zid", "Peer ZID",
      "The peer's ZRTP identifier", NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * GstUvgRtpZrtp:stats:
   *
   * Counters since the element started, in an
   * application/x-uvgrtp-zrtp-stats structure: zrtp-packets-in,
   * zrtp-packets-out, zrtp-retransmits, zrtp-bad-packets,
   * zrtp-unexpected, zrtp-auth-failures, zrtp-restarts (exchanges started
   * over after a timeout or for a peer that started over), zrtp-foreign
   * (ZRTP ignored: not from the peer the element is bound to),
   * media-dropped (dropped-send +
   * dropped-recv: media dropped while not secure), sent-clear,
   * received-clear, srtp-protected, srtcp-protected, srtp-unprotected,
   * srtcp-unprotected, srtp-auth-failures, srtp-replays, srtp-errors
   * (all guint64).
   */
  properties[PROP_STATS] = g_param_spec_boxed ("stats", "Statistics",
      "Counters of the session (application/x-uvgrtp-zrtp-stats)",
      GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  /**
   * GstUvgRtpZrtp::set-sas-verified:
   * @zrtp: the element
   * @verified: TRUE once the users compared the SAS and found it equal,
   *   FALSE to have it compared again
   *
   * Records the users' verdict on the SAS, in the session and in the
   * cache file. Returns FALSE before the keys are agreed or if the cache
   * file cannot be written (the session's flag is set all the same).
   */
  signals[SIGNAL_SET_SAS_VERIFIED] =
      g_signal_new_class_handler ("set-sas-verified",
      G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
      G_CALLBACK (gst_uvgrtp_zrtp_set_sas_verified), NULL, NULL, NULL,
      G_TYPE_BOOLEAN, 1, G_TYPE_BOOLEAN);

  gst_element_class_add_static_pad_template (element_class,
      &recv_rtp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &recv_rtp_src_template);
  gst_element_class_add_static_pad_template (element_class,
      &recv_rtcp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &recv_rtcp_src_template);
  gst_element_class_add_static_pad_template (element_class,
      &send_rtp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &send_rtp_src_template);
  gst_element_class_add_static_pad_template (element_class,
      &send_rtcp_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &send_rtcp_src_template);

  gst_element_class_set_static_metadata (element_class,
      "uvgRTP ZRTP/SRTP", "Filter/Network/RTP",
      "Agrees SRTP keys with the peer by ZRTP (RFC 6189) and protects RTP "
      "and RTCP with them", "gst-uvgrtp developers");

  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_change_state);

  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_ZRTP_STATE, 0);
}

static GstPad *
make_pad (GstUvgRtpZrtp * self, GstStaticPadTemplate * templ,
    GstPadChainFunction chain)
{
  GstPad *pad = gst_pad_new_from_static_template (templ, templ->name_template);

  gst_pad_set_iterate_internal_links_function (pad,
      GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_iterate_internal_links));
  if (chain) {
    gst_pad_set_chain_function (pad, chain);
    gst_pad_set_event_function (pad,
        GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_sink_event));
  }
  gst_element_add_pad (GST_ELEMENT (self), pad);
  return pad;
}

static void
gst_uvgrtp_zrtp_init (GstUvgRtpZrtp * self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->push_lock);

  self->allow_clear = DEFAULT_ALLOW_CLEAR;
  self->cache_file = g_strdup (DEFAULT_CACHE_FILE);
  self->ssrc = DEFAULT_SSRC;
  self->replay_window = DEFAULT_REPLAY_WINDOW;

  self->recv_rtp_sink = make_pad (self, &recv_rtp_sink_template,
      GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_recv_rtp_chain));
  self->recv_rtp_src = make_pad (self, &recv_rtp_src_template, NULL);
  self->recv_rtcp_sink = make_pad (self, &recv_rtcp_sink_template,
      GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_recv_rtcp_chain));
  self->recv_rtcp_src = make_pad (self, &recv_rtcp_src_template, NULL);
  self->send_rtp_sink = make_pad (self, &send_rtp_sink_template,
      GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_send_rtp_chain));
  gst_pad_set_chain_list_function (self->send_rtp_sink,
      GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_send_rtp_chain_list));
  self->send_rtp_src = make_pad (self, &send_rtp_src_template, NULL);
  self->send_rtcp_sink = make_pad (self, &send_rtcp_sink_template,
      GST_DEBUG_FUNCPTR (gst_uvgrtp_zrtp_send_rtcp_chain));
  self->send_rtcp_src = make_pad (self, &send_rtcp_src_template, NULL);
}

static void
gst_uvgrtp_zrtp_finalize (GObject * object)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (object);

  urtp_zrtp_ep_free (self->ep);
  urtp_srtp_destroy (&self->tx);
  urtp_srtp_destroy (&self->rx);
  g_free (self->cache_file);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->push_lock);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ------------------------------------------------------------------------ */
/* The endpoint's callbacks: from its thread, with no lock held             */

static void
ensure_send_events (GstUvgRtpZrtp * self)
{
  GstEvent *ev;
  GstPad *pad = self->send_rtp_src;

  if (self->send_events_ok)
    return;
  /* ZRTP can go out before any media reached send_rtp_sink: the sink
   * downstream needs stream-start, caps and segment first */
  ev = gst_pad_get_sticky_event (pad, GST_EVENT_STREAM_START, 0);
  if (ev) {
    gst_event_unref (ev);
  } else {
    gchar *id = gst_pad_create_stream_id (pad, GST_ELEMENT (self), "zrtp");
    gst_pad_push_event (pad, gst_event_new_stream_start (id));
    g_free (id);
  }
  ev = gst_pad_get_sticky_event (pad, GST_EVENT_CAPS, 0);
  if (ev) {
    gst_event_unref (ev);
  } else {
    GstCaps *caps = gst_caps_new_empty_simple ("application/x-srtp");
    gst_pad_push_event (pad, gst_event_new_caps (caps));
    gst_caps_unref (caps);
  }
  ev = gst_pad_get_sticky_event (pad, GST_EVENT_SEGMENT, 0);
  if (ev) {
    gst_event_unref (ev);
  } else {
    GstSegment seg;
    gst_segment_init (&seg, GST_FORMAT_TIME);
    gst_pad_push_event (pad, gst_event_new_segment (&seg));
  }
  self->send_events_ok = TRUE;
}

/* A ZRTP packet goes out on send_rtp_src, among the media. */
static int
ep_send (void *user, const uint8_t * pkt, size_t len,
    const struct sockaddr *to, socklen_t to_len)
{
  GstUvgRtpZrtp *self = user;
  GstFlowReturn ret;
  gchar type[9];

  GST_LOG_OBJECT (self, "sending %s (%" G_GSIZE_FORMAT " bytes)",
      gst_uvgrtp_zrtp_type_name (pkt, len, type), len);
  g_mutex_lock (&self->push_lock);
  ensure_send_events (self);
  ret = gst_pad_push (self->send_rtp_src, gst_buffer_new_memdup (pkt, len));
  g_mutex_unlock (&self->push_lock);
  if (ret != GST_FLOW_OK)
    GST_DEBUG_OBJECT (self, "pushing ZRTP: %s", gst_flow_get_name (ret));
  return ret == GST_FLOW_OK ? 0 : -EIO;
}

static void
notify_state (GstUvgRtpZrtp * self)
{
  for (guint i = 1; i < N_PROPERTIES; i++)
    if (NOTIFY_STATE_CHANGE & (1u << i))
      g_object_notify_by_pspec (G_OBJECT (self), properties[i]);
}

static void
ep_event (void *user, const urtp_zrtp_ep_event_t * ev)
{
  GstUvgRtpZrtp *self = user;

  if (gst_uvgrtp_zrtp_handle_event (GST_ELEMENT (self), ev, self->cache_file,
          "cache-file"))
    notify_state (self);
}

/* The source address udpsrc put on the buffer, if any. */
static socklen_t
buffer_source (GstBuffer * buf, struct sockaddr_storage *ss)
{
  GstNetAddressMeta *meta = gst_buffer_get_net_address_meta (buf);
  gssize n;

  if (!meta || !meta->addr)
    return 0;
  n = g_socket_address_get_native_size (meta->addr);
  if (n <= 0 || (gsize) n > sizeof *ss ||
      !g_socket_address_to_native (meta->addr, ss, sizeof *ss, NULL))
    return 0;
  return (socklen_t) n;
}

/* ------------------------------------------------------------------------ */
/* Media                                                                    */

/* Protects one outgoing packet into a new buffer; NULL if refused. */
static GstBuffer *
protect_locked (GstUvgRtpZrtp * self, GstBuffer * in, gboolean rtcp)
{
  gsize len = gst_buffer_get_size (in);
  gsize cap = len + URTP_SRTP_MAX_TRAILER;
  GstBuffer *out = gst_buffer_new_allocate (NULL, cap, NULL);
  GstMapInfo map;
  int n;

  if (!out || !gst_buffer_map (out, &map, GST_MAP_WRITE)) {
    if (out)
      gst_buffer_unref (out);
    self->stats.srtp_other++;
    return NULL;
  }
  gst_buffer_extract (in, 0, map.data, len);
  n = rtcp ? urtp_srtp_protect_rtcp (&self->tx, map.data, len, cap) :
      urtp_srtp_protect (&self->tx, map.data, len, cap);
  gst_buffer_unmap (out, &map);
  if (n < 0) {
    GST_LOG_OBJECT (self, "protect refused a packet: %s", g_strerror (-n));
    self->stats.srtp_other++;
    gst_buffer_unref (out);
    return NULL;
  }
  gst_buffer_set_size (out, n);
  gst_buffer_copy_into (out, in, GST_BUFFER_COPY_METADATA, 0, -1);
  if (rtcp)
    self->stats.srtcp_protected++;
  else
    self->stats.srtp_protected++;
  return out;
}

static guint32
rtp_ssrc (GstBuffer * buf, gboolean * ok)
{
  guint8 h[12];

  *ok = gst_buffer_extract (buf, 0, h, sizeof h) == sizeof h && h[0] >> 6 == 2;
  return *ok ? GST_READ_UINT32_BE (h + 8) : 0;
}

/* What to send for a packet from rtpbin or a payloader: a protected copy,
 * the packet itself (allow-clear), or nothing. Takes buf. */
static GstBuffer *
process_send_locked (GstUvgRtpZrtp * self, GstBuffer * buf, gboolean rtcp)
{
  GstBuffer *out = NULL;

  if (!self->ep) {
    gst_buffer_unref (buf);
    return NULL;
  }
  /* the first RTP packet to send starts the exchange with its SSRC */
  if (!rtcp && !self->begun) {
    gboolean ok;
    guint32 ssrc = rtp_ssrc (buf, &ok);
    if (ok) {
      self->begun = TRUE;
      urtp_zrtp_ep_begin (self->ep, ssrc);
    }
  }
  if (urtp_zrtp_ep_sync_srtp_dir (self->ep, &self->tx, &self->tx_serial,
          URTP_SRTP_OUTBOUND, TRUE, 0, 0)) {
    out = protect_locked (self, buf, rtcp);
  } else if (self->allow_clear) {
    out = gst_buffer_ref (buf);
    self->stats.clear_sent++;
  } else {
    self->stats.dropped_send++;
  }
  gst_buffer_unref (buf);
  return out;
}

static GstFlowReturn
push_send (GstUvgRtpZrtp * self, GstPad * pad, GstBuffer * out)
{
  GstFlowReturn ret;

  if (pad != self->send_rtp_src)
    return gst_pad_push (pad, out);
  g_mutex_lock (&self->push_lock);
  ensure_send_events (self);
  ret = gst_pad_push (pad, out);
  g_mutex_unlock (&self->push_lock);
  return ret;
}

static GstFlowReturn
gst_uvgrtp_zrtp_send_rtp_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buf)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (parent);
  GstBuffer *out;

  g_mutex_lock (&self->lock);
  out = process_send_locked (self, buf, FALSE);
  g_mutex_unlock (&self->lock);
  return out ? push_send (self, self->send_rtp_src, out) : GST_FLOW_OK;
}

static GstFlowReturn
gst_uvgrtp_zrtp_send_rtp_chain_list (GstPad * pad, GstObject * parent,
    GstBufferList * list)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (parent);
  guint n = gst_buffer_list_length (list);
  GstBufferList *out = gst_buffer_list_new_sized (n);
  GstFlowReturn ret = GST_FLOW_OK;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < n; i++) {
    GstBuffer *b = process_send_locked (self,
        gst_buffer_ref (gst_buffer_list_get (list, i)), FALSE);
    if (b)
      gst_buffer_list_add (out, b);
  }
  g_mutex_unlock (&self->lock);
  gst_buffer_list_unref (list);

  if (gst_buffer_list_length (out) == 0) {
    gst_buffer_list_unref (out);
    return GST_FLOW_OK;
  }
  g_mutex_lock (&self->push_lock);
  ensure_send_events (self);
  ret = gst_pad_push_list (self->send_rtp_src, out);
  g_mutex_unlock (&self->push_lock);
  return ret;
}

static GstFlowReturn
gst_uvgrtp_zrtp_send_rtcp_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buf)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (parent);
  GstBuffer *out;

  g_mutex_lock (&self->lock);
  out = process_send_locked (self, buf, TRUE);
  g_mutex_unlock (&self->lock);
  return out ? push_send (self, self->send_rtcp_src, out) : GST_FLOW_OK;
}

/* Authenticates and decrypts one received packet in place; takes buf and
 * returns it, or NULL if it was dropped. */
static GstBuffer *
process_recv_locked (GstUvgRtpZrtp * self, GstBuffer * buf, gboolean rtcp)
{
  struct sockaddr_storage from;
  socklen_t from_len;
  GstMapInfo map;
  gint64 now;
  int n;

  if (!self->ep || !urtp_zrtp_ep_sync_srtp_dir (self->ep, &self->rx,
          &self->rx_serial, URTP_SRTP_INBOUND, FALSE, 0,
          self->replay_window)) {
    if (self->allow_clear) {
      self->stats.clear_received++;
      return buf;
    }
    self->stats.dropped_recv++;
    gst_buffer_unref (buf);
    return NULL;
  }
  buf = gst_buffer_make_writable (buf);
  if (!gst_buffer_map (buf, &map, GST_MAP_READWRITE)) {
    self->stats.srtp_other++;
    gst_buffer_unref (buf);
    return NULL;
  }
  n = rtcp ? urtp_srtp_unprotect_rtcp (&self->rx, map.data, map.size) :
      urtp_srtp_unprotect (&self->rx, map.data, map.size);
  gst_buffer_unmap (buf, &map);
  if (n < 0) {
    if (n == -EBADMSG)
      self->stats.srtp_auth_fail++;
    else if (n == -EALREADY)
      self->stats.srtp_replay++;
    else
      self->stats.srtp_other++;
    GST_LOG_OBJECT (self, "dropped a received %s packet: %s",
        rtcp ? "SRTCP" : "SRTP", g_strerror (-n));
    gst_buffer_unref (buf);
    return NULL;
  }
  gst_buffer_set_size (buf, n);
  if (rtcp)
    self->stats.srtcp_unprotected++;
  else
    self->stats.srtp_unprotected++;
  /* RFC 6189 4.6: the responder's authenticated SRTP stands for the
   * Conf2ACK the initiator may not have seen yet; and the peer is alive
   * (told every 100 ms) */
  now = g_get_monotonic_time ();
  if (!urtp_zrtp_ep_is_secure (self->ep) ||
      now - self->srtp_ok_told_us >= 100 * G_TIME_SPAN_MILLISECOND) {
    self->srtp_ok_told_us = now;
    from_len = buffer_source (buf, &from);
    urtp_zrtp_ep_peer_srtp_ok (self->ep,
        from_len ? (struct sockaddr *) &from : NULL, from_len);
  }
  return buf;
}

static GstFlowReturn
gst_uvgrtp_zrtp_recv_rtp_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buf)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (parent);
  guint8 head[12];
  gsize len = gst_buffer_get_size (buf);
  gboolean zrtp = FALSE;

  /* is_zrtp needs only the header and the length */
  if (len >= sizeof head && len <= URTP_ZRTP_MAX_PACKET) {
    gst_buffer_extract (buf, 0, head, sizeof head);
    if ((head[0] >> 4) == 1) {
      GstMapInfo map;
      if (gst_buffer_map (buf, &map, GST_MAP_READ)) {
        zrtp = urtp_zrtp_is_zrtp (map.data, map.size);
        if (zrtp) {
          struct sockaddr_storage from;
          socklen_t from_len = buffer_source (buf, &from);
          gchar type[9];

          GST_LOG_OBJECT (self, "received %s (%" G_GSIZE_FORMAT " bytes)",
              gst_uvgrtp_zrtp_type_name (map.data, map.size, type),
              map.size);
          g_mutex_lock (&self->lock);
          if (self->ep)
            urtp_zrtp_ep_recv (self->ep, map.data, map.size,
                from_len ? (struct sockaddr *) &from : NULL, from_len);
          g_mutex_unlock (&self->lock);
        }
        gst_buffer_unmap (buf, &map);
      }
    }
  }
  if (zrtp) {
    gst_buffer_unref (buf);
    return GST_FLOW_OK;
  }

  g_mutex_lock (&self->lock);
  buf = process_recv_locked (self, buf, FALSE);
  g_mutex_unlock (&self->lock);
  return buf ? gst_pad_push (self->recv_rtp_src, buf) : GST_FLOW_OK;
}

static GstFlowReturn
gst_uvgrtp_zrtp_recv_rtcp_chain (GstPad * pad, GstObject * parent,
    GstBuffer * buf)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (parent);

  g_mutex_lock (&self->lock);
  buf = process_recv_locked (self, buf, TRUE);
  g_mutex_unlock (&self->lock);
  return buf ? gst_pad_push (self->recv_rtcp_src, buf) : GST_FLOW_OK;
}

/* ------------------------------------------------------------------------ */
/* Events and links                                                         */

static GstPad *
paired_pad (GstUvgRtpZrtp * self, GstPad * pad)
{
  if (pad == self->recv_rtp_sink)
    return self->recv_rtp_src;
  if (pad == self->recv_rtp_src)
    return self->recv_rtp_sink;
  if (pad == self->recv_rtcp_sink)
    return self->recv_rtcp_src;
  if (pad == self->recv_rtcp_src)
    return self->recv_rtcp_sink;
  if (pad == self->send_rtp_sink)
    return self->send_rtp_src;
  if (pad == self->send_rtp_src)
    return self->send_rtp_sink;
  if (pad == self->send_rtcp_sink)
    return self->send_rtcp_src;
  if (pad == self->send_rtcp_src)
    return self->send_rtcp_sink;
  return NULL;
}

static GstIterator *
gst_uvgrtp_zrtp_iterate_internal_links (GstPad * pad, GstObject * parent)
{
  GstPad *other = paired_pad (GST_UVGRTP_ZRTP (parent), pad);
  GValue v = G_VALUE_INIT;
  GstIterator *it;

  if (!other)
    return NULL;
  g_value_init (&v, GST_TYPE_PAD);
  g_value_set_object (&v, other);
  it = gst_iterator_new_single (GST_TYPE_PAD, &v);
  g_value_unset (&v);
  return it;
}

/* Renames caps crossing the element: application/x-rtp <-> x-srtp and
 * x-rtcp <-> x-srtcp, without the SRTP fields (keys are ours to set). */
static GstCaps *
transform_caps (GstCaps * caps, const gchar * name)
{
  GstCaps *out = gst_caps_copy (caps);

  for (guint i = 0; i < gst_caps_get_size (out); i++) {
    GstStructure *s = gst_caps_get_structure (out, i);
    gst_structure_set_name (s, name);
    gst_structure_remove_fields (s, "srtp-key", "srtp-cipher", "srtp-auth",
        "srtcp-cipher", "srtcp-auth", "roc", "mki", NULL);
  }
  return out;
}

static gboolean
gst_uvgrtp_zrtp_sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (parent);
  GstPad *src = paired_pad (self, pad);
  gboolean send_rtp = pad == self->send_rtp_sink;
  gboolean ret;

  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps, *out;
    const gchar *name;

    gst_event_parse_caps (event, &caps);
    if (pad == self->recv_rtp_sink)
      name = "application/x-rtp";
    else if (pad == self->recv_rtcp_sink)
      name = "application/x-rtcp";
    else if (send_rtp)
      name = "application/x-srtp";
    else
      name = "application/x-srtcp";
    out = transform_caps (caps, name);
    gst_event_unref (event);
    event = gst_event_new_caps (out);
    gst_caps_unref (out);
  }

  /* Serialized events on send_rtp_src keep their place among the ZRTP
   * packets the other threads push there. */
  if (send_rtp && GST_EVENT_IS_SERIALIZED (event)) {
    g_mutex_lock (&self->push_lock);
    ret = gst_pad_push_event (src, event);
    g_mutex_unlock (&self->push_lock);
    return ret;
  }
  return gst_pad_push_event (src, event);
}

/* ------------------------------------------------------------------------ */
/* States                                                                   */

/* READY -> PAUSED: a new endpoint, its thread running. */
static gboolean
start (GstUvgRtpZrtp * self)
{
  urtp_zrtp_ep_config_t cfg;
  urtp_zrtp_ep_t *ep = NULL, *old;
  int rc;

  memset (&cfg, 0, sizeof cfg);
  cfg.mode = URTP_ZRTP_EP_DUPLEX;
  cfg.start_delay_ms = START_WAIT_MS;
  cfg.send = ep_send;
  cfg.send_user = self;
  cfg.on_event = ep_event;
  cfg.event_user = self;

  g_mutex_lock (&self->push_lock);
  self->send_events_ok = FALSE;
  g_mutex_unlock (&self->push_lock);

  g_mutex_lock (&self->lock);
  cfg.ssrc = self->ssrc;
  cfg.zid = self->have_zid ? self->zid : NULL;
  cfg.cache_path = self->cache_file;
  rc = urtp_zrtp_ep_new (&cfg, &ep);
  if (rc == 0 && (rc = urtp_zrtp_ep_start (ep, -1)) != 0) {
    urtp_zrtp_ep_free (ep);
    ep = NULL;
  }
  old = self->ep;
  self->ep = ep;
  self->begun = FALSE;
  self->tx_serial = self->rx_serial = -1;
  self->srtp_ok_told_us = 0;
  memset (&self->stats, 0, sizeof self->stats);
  g_mutex_unlock (&self->lock);
  /* the last run's, stopped already */
  urtp_zrtp_ep_free (old);
  if (rc != 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("ZRTP endpoint: %s", g_strerror (-rc)));
    return FALSE;
  }
  return TRUE;
}

/* PAUSED -> READY: the endpoint stops (its last state stays readable). */
static void
stop (GstUvgRtpZrtp * self)
{
  urtp_zrtp_ep_t *ep;

  g_mutex_lock (&self->lock);
  ep = self->ep;
  g_mutex_unlock (&self->lock);
  /* without the lock: its thread may be calling back, which takes it */
  if (ep)
    urtp_zrtp_ep_stop (ep);
  g_mutex_lock (&self->lock);
  urtp_srtp_destroy (&self->tx);
  urtp_srtp_destroy (&self->rx);
  g_mutex_unlock (&self->lock);
}

static GstStateChangeReturn
gst_uvgrtp_zrtp_change_state (GstElement * element, GstStateChange transition)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (element);
  GstStateChangeReturn ret;

  switch (transition) {
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      if (!start (self))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_PAUSED_TO_PLAYING:
      /* a fixed SSRC needs no media to start with; the endpoint's thread
       * sends the first Hello, so no state change waits on the network */
      g_mutex_lock (&self->lock);
      if (self->ssrc && self->ep && !self->begun) {
        self->begun = TRUE;
        urtp_zrtp_ep_begin (self->ep, self->ssrc);
      }
      g_mutex_unlock (&self->lock);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE)
    return ret;

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      stop (self);
      break;
    default:
      break;
  }
  return ret;
}

/* ------------------------------------------------------------------------ */
/* Properties and the action signal                                         */

static gboolean
gst_uvgrtp_zrtp_set_sas_verified (GstUvgRtpZrtp * self, gboolean verified)
{
  int rc = -EAGAIN;

  g_mutex_lock (&self->lock);
  if (self->ep)
    rc = urtp_zrtp_ep_set_sas_verified (self->ep, verified);
  g_mutex_unlock (&self->lock);
  if (rc == -EAGAIN)
    GST_WARNING_OBJECT (self, "no SAS to verify yet");
  else if (rc != 0)
    GST_WARNING_OBJECT (self, "could not write the cache file: %s",
        g_strerror (-rc));
  else
    GST_INFO_OBJECT (self, "SAS marked %s", verified ? "verified" :
        "not verified");
  if (rc != -EAGAIN)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SAS_VERIFIED]);
  return rc == 0;
}

static GstStructure *
make_stats (GstUvgRtpZrtp * self)
{
  GstUvgRtpZrtpStats *st = &self->stats;
  urtp_zrtp_ep_counters_t c;

  memset (&c, 0, sizeof c);
  if (self->ep)
    urtp_zrtp_ep_get_counters (self->ep, &c);
  return gst_structure_new ("application/x-uvgrtp-zrtp-stats",
      "zrtp-packets-in", G_TYPE_UINT64, (guint64) c.received,
      "zrtp-packets-out", G_TYPE_UINT64, (guint64) c.sent,
      "zrtp-retransmits", G_TYPE_UINT64, (guint64) c.retransmits,
      "zrtp-bad-packets", G_TYPE_UINT64, (guint64) c.bad,
      "zrtp-unexpected", G_TYPE_UINT64, (guint64) c.unexpected,
      "zrtp-auth-failures", G_TYPE_UINT64, (guint64) c.auth_fail,
      "zrtp-restarts", G_TYPE_UINT64, (guint64) c.restarts,
      "zrtp-foreign", G_TYPE_UINT64, (guint64) c.foreign,
      "media-dropped", G_TYPE_UINT64, st->dropped_send + st->dropped_recv,
      "dropped-send", G_TYPE_UINT64, st->dropped_send,
      "dropped-recv", G_TYPE_UINT64, st->dropped_recv,
      "sent-clear", G_TYPE_UINT64, st->clear_sent,
      "received-clear", G_TYPE_UINT64, st->clear_received,
      "srtp-protected", G_TYPE_UINT64, st->srtp_protected,
      "srtcp-protected", G_TYPE_UINT64, st->srtcp_protected,
      "srtp-unprotected", G_TYPE_UINT64, st->srtp_unprotected,
      "srtcp-unprotected", G_TYPE_UINT64, st->srtcp_unprotected,
      "srtp-auth-failures", G_TYPE_UINT64, st->srtp_auth_fail,
      "srtp-replays", G_TYPE_UINT64, st->srtp_replay,
      "srtp-errors", G_TYPE_UINT64, st->srtp_other, NULL);
}

static void
gst_uvgrtp_zrtp_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (object);

  g_mutex_lock (&self->lock);
  switch (prop_id) {
    case PROP_ALLOW_CLEAR:
      self->allow_clear = g_value_get_boolean (value);
      break;
    case PROP_CACHE_FILE:
      g_free (self->cache_file);
      self->cache_file = g_value_dup_string (value);
      break;
    case PROP_ZID:{
      const gchar *s = g_value_get_string (value);
      if (!s) {
        self->have_zid = FALSE;
      } else if (gst_uvgrtp_zrtp_parse_zid (s, self->zid)) {
        self->have_zid = TRUE;
      } else {
        GST_WARNING_OBJECT (self, "zid must be %d hex digits, ignoring \"%s\"",
            2 * URTP_ZRTP_ZID_LEN, s);
      }
      break;
    }
    case PROP_SSRC:
      self->ssrc = g_value_get_uint (value);
      break;
    case PROP_REPLAY_WINDOW:
      self->replay_window = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  g_mutex_unlock (&self->lock);
}

static void
gst_uvgrtp_zrtp_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstUvgRtpZrtp *self = GST_UVGRTP_ZRTP (object);
  urtp_zrtp_info_t info;

  g_mutex_lock (&self->lock);
  memset (&info, 0, sizeof info);
  if (self->ep)
    urtp_zrtp_ep_get_info (self->ep, &info);
  switch (prop_id) {
    case PROP_ALLOW_CLEAR:
      g_value_set_boolean (value, self->allow_clear);
      break;
    case PROP_CACHE_FILE:
      g_value_set_string (value, self->cache_file);
      break;
    case PROP_ZID:
      if (!gst_uvgrtp_zrtp_zid_is_zero (info.zid))
        g_value_take_string (value, gst_uvgrtp_zrtp_hex (info.zid,
                URTP_ZRTP_ZID_LEN));
      else if (self->have_zid)
        g_value_take_string (value, gst_uvgrtp_zrtp_hex (self->zid,
                URTP_ZRTP_ZID_LEN));
      else
        g_value_set_string (value, NULL);
      break;
    case PROP_SSRC:
      g_value_set_uint (value, self->ssrc);
      break;
    case PROP_REPLAY_WINDOW:
      g_value_set_uint (value, self->replay_window);
      break;
    case PROP_STATE:
    case PROP_SAS:
    case PROP_SAS_VERIFIED:
    case PROP_PEER_SAS_VERIFIED:
    case PROP_CIPHER:
    case PROP_AUTH_TAG:
    case PROP_KEY_AGREEMENT:
    case PROP_SAS_TYPE:
    case PROP_PEER_ZID:
      gst_uvgrtp_zrtp_info_to_value (&info, GST_UVGRTP_ZRTP_PROP_STATE +
          (prop_id - PROP_STATE), value);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, make_stats (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  g_mutex_unlock (&self->lock);
  gst_uvgrtp_zrtp_wipe (&info, sizeof info);
}
