/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * SECTION:element-uvgrtpsrc
 * @title: uvgrtpsrc
 * @see_also: uvgrtpsink, udpsrc, rtph264depay, rtph265depay, rtpopusdepay
 *
 * Receives RTP over UDP and depayloads it in one element: H.264 (RFC 6184),
 * H.265 (RFC 7798), H.266 (RFC 9328) and Opus (RFC 7587). It takes the place
 * of `udpsrc ! rtpjitterbuffer ! rtph265depay` (and the H.264, H.266 and
 * Opus equivalents) and outputs whole access units in Annex-B byte-stream
 * format, one buffer per access unit.
 *
 * Datagrams are read in batches (recvmmsg, or UDP GRO where the kernel has
 * it), put back in sequence order within a small reorder window, and copied
 * once, straight into the access unit. Packets that do not belong to the
 * stream (malformed, foreign payload type or SSRC, truncated) are dropped
 * and counted in #GstUvgRtpSrc:stats; the stream goes on.
 *
 * The codec comes from #GstUvgRtpSrc:encoding-name or from the encoding-name
 * field of #GstUvgRtpSrc:caps; parameter sets given in the caps (sprop-*
 * fields, as in SDP) are put in band before the first access unit.
 *
 * One RTP source (SSRC) is followed at a time, as RFC 3550 describes: a new
 * SSRC must send packets in sequence before it is believed (probation), a
 * sender that restarts with a new SSRC takes over once the old one has been
 * silent for #GstUvgRtpSrc:source-timeout (its first packets are kept
 * meanwhile, so the stream resumes at its first key frame), a sequence
 * number jump counts only when the next packet confirms it, and strangers
 * never take a live stream over. #GstUvgRtpSrc:ssrc pins one SSRC. Every
 * change of source resets reordering, reassembly and timing, marks the
 * next buffer DISCONT, puts the parameter sets of #GstUvgRtpSrc:caps in
 * band again, and posts an element message `uvgrtp-source` with the fields
 * kind ("first", "change" or "restart"), reason ("first", "timeout", "bye",
 * "sequence-jump"), old-ssrc, new-ssrc, old-seq and new-seq.
 *
 * Buffer timestamps are the RTP timestamps mapped onto the pipeline clock,
 * as rtpjitterbuffer does: anchored on the arrival of the access unit that
 * is output first, corrected for the drift between the sender's clock and
 * the pipeline's (estimated from the smallest transit delays seen), and
 * re-anchored when the timestamps jump (a sender that restarted or
 * paused). Each buffer leaves the element no later than its timestamp plus
 * the latency it reports (#GstUvgRtpSrc:latency), as a live source must.
 * Datagrams that arrive while the element is paused are dropped when it
 * plays again (counted as flushed): a live source outputs nothing for the
 * time it was paused.
 *
 * The kernel receive buffer and the datagrams read per call grow with the
 * stream by default (#GstUvgRtpSrc:buffer-size 0): a quiet stream holds
 * little memory, and the bursts of high-rate video still fit. Datagrams the
 * kernel drops for a full buffer are counted in #GstUvgRtpSrc:stats
 * (kernel-drops) and, once the buffer can grow no further, reported by a
 * warning on the bus that names the property and the sysctl to raise.
 *
 * With #GstUvgRtpSrc:srtp-key set, the element receives SRTP (RFC 3711,
 * AES-GCM as in RFC 7714) such as srtpenc or uvgrtpsink send: each datagram is
 * authenticated and decrypted in place in the receive buffer before it is
 * depayloaded. Datagrams that fail authentication, replays and datagrams
 * that are not SRTP at all are dropped and counted in #GstUvgRtpSrc:stats;
 * nothing of them reaches the output. The first packet of each SSRC is
 * taken to have roll-over counter 0, so the receiver must start before the
 * sender's sequence numbers first wrap. RTCP (#GstUvgRtpSrc:rtcp) is then
 * SRTCP with the same key and cipher (with hmac-sha1-32 the SRTCP tag
 * stays 80 bits, as RFC 4568's suites have it): srtpenc's and srtpdec's
 * srtcp cipher equal to the SRTP one and srtcp auth hmac-sha1-80 (null
 * with GCM). The sender's reports count only once they verify, and our
 * receiver reports go out protected. So there is no srtcp-cipher or
 * srtcp-auth property.
 *
 * With #GstUvgRtpSrc:zrtp set, the keys are agreed by ZRTP (RFC 6189) with
 * the sender, such as a uvgrtpsink with zrtp: ZRTP packets are told from
 * RTP as they arrive and answered from the element's socket to the
 * address they came from; the exchange starts with the first Hello (or,
 * when media arrives without keys because this element restarted, towards
 * that media's sender). Until the keys are agreed, datagrams in clear are
 * dropped and counted (zrtp-dropped in #GstUvgRtpSrc:stats), unless
 * #GstUvgRtpSrc:zrtp-allow-clear is set; then the stream is authenticated
 * and decrypted with the sender's key. Progress is posted as element
 * messages named `uvgrtp-zrtp`, as uvgrtpsink does, and is readable in
 * the zrtp-* properties. Several elements with the same
 * #GstUvgRtpSrc:zrtp-session share one exchange (Multistream).
 *
 * ## Example pipelines
 * |[
 * gst-launch-1.0 uvgrtpsrc port=5004 encoding-name=H265 ! h265parse ! avdec_h265 ! autovideosink
 * ]| Receives H.265 on UDP port 5004 and shows it.
 * |[
 * gst-launch-1.0 uvgrtpsrc port=5004 \
 *     caps="application/x-rtp,media=audio,encoding-name=OPUS,payload=96" ! \
 *     opusdec ! autoaudiosink
 * ]| Receives Opus with payload type 96 and plays it.
 * |[
 * gst-launch-1.0 uvgrtpsrc port=5004 encoding-name=H265 srtp-cipher=aes-128-gcm srtp-auth=null \
 *     srtp-key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b ! \
 *     h265parse ! avdec_h265 ! autovideosink
 * ]| Receives H.265 sent as SRTP with AES-128-GCM, for example by
 * `rtph265pay ! srtpenc rtp-cipher=aes-128-gcm rtp-auth=null key=000102... ! udpsink`.
 * |[
 * gst-launch-1.0 -m uvgrtpsrc port=5004 encoding-name=H265 zrtp=true zrtp-cache-file=bob.zrtp ! \
 *     h265parse ! avdec_h265 ! autovideosink
 * ]| Receives H.265 from a uvgrtpsink with zrtp=true, keys agreed by ZRTP.
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <gst/net/gstnetaddressmeta.h>

#include "gstuvgrtpcommon.h"
#include "gstuvgrtpprops.h"
#include "gstuvgrtpsrc.h"
#include "gstuvgrtpstats.h"
#include "gstuvgrtpzrtpctl.h"
#include <gst/video/video.h>

#include "urtp/params.h"
#include "urtp/recvstream.h"
#include "urtp/rtx.h"
#include "urtp/zrtp_ep.h"

GST_DEBUG_CATEGORY (gst_uvgrtp_src_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_src_debug

#define DEFAULT_ADDRESS "0.0.0.0"
#define DEFAULT_PORT 5004
#define DEFAULT_REUSE TRUE
#define DEFAULT_TIMEOUT 0
#define DEFAULT_ENCODING_NAME NULL
#define DEFAULT_RECV_MODE GST_UVGRTP_RECV_MODE_AUTO
#define DEFAULT_LATENCY 50
#define DEFAULT_SSRC -1
#define DEFAULT_SOURCE_TIMEOUT 500
#define DEFAULT_WAIT_FOR_KEYFRAME FALSE
#define DEFAULT_LOSS_POLICY GST_UVGRTP_LOSS_DROP_AU
#define DEFAULT_MAX_AU_SIZE URTP_DEPAY_DEFAULT_MAX_AU
/* A video frame can burst past libsrtp2's default of 128 packets, and
 * packets reordered by more than the window would be lost as replays. */
#define DEFAULT_REPLAY_WINDOW_SIZE 1024
#define DEFAULT_RTCP_REMOTE_HOST NULL
#define DEFAULT_RTCP_REMOTE_PORT 0
#define DEFAULT_LIP_SYNC TRUE
#define DEFAULT_REQUEST_KEYFRAME TRUE
#define DEFAULT_DO_LOST TRUE
#define DEFAULT_DROP_ON_LATENCY FALSE
#define DEFAULT_POST_DROP_MESSAGES FALSE
#define DEFAULT_DROP_MESSAGES_INTERVAL 200
#define DEFAULT_MAX_REORDER -1
#define DEFAULT_TWCC_FEEDBACK_INTERVAL 0
#define DEFAULT_RFC8888_FEEDBACK FALSE
#define DEFAULT_MULTICAST_SOURCE NULL
#define DEFAULT_AUTO_MULTICAST TRUE
#define DEFAULT_LOOP TRUE
#define DEFAULT_RETRIEVE_SENDER_ADDRESS TRUE
#define DEFAULT_SKIP_FIRST_BYTES 0
#define DEFAULT_MTU 1492

/* Datagrams per receive call and bytes per datagram slot: a slot holds the
 * largest UDP datagram, so nothing legitimate is ever truncated, and GRO can
 * coalesce into it. */
#define RX_BATCH 64
#define RX_SLOT 65536
/* Reorder window in packets. The time a gap is waited for is `latency`;
 * the window only needs to be larger than what arrives meanwhile. */
#define REORDER_WINDOW 1024
/* Kernel drops are warned about at most this often. */
#define DROP_WARNING_INTERVAL_US (10 * G_USEC_PER_SEC)

static guint request_extension_signal;

static void gst_uvgrtp_src_add_extension (GstUvgRtpSrc * self,
    GstRTPHeaderExtension * ext);
static void gst_uvgrtp_src_clear_extensions (GstUvgRtpSrc * self);

enum
{
  PROP_0,
  PROP_ADDRESS,
  PROP_PORT,
  PROP_URI,
  PROP_REUSE,
  PROP_CAPS,
  PROP_TIMEOUT,
  PROP_ENCODING_NAME,
  PROP_RECV_MODE,
  PROP_LATENCY,
  PROP_SSRC,
  PROP_SOURCE_TIMEOUT,
  PROP_WAIT_FOR_KEYFRAME,
  PROP_LOSS_POLICY,
  PROP_MAX_AU_SIZE,
  PROP_REPLAY_WINDOW_SIZE,
  PROP_RTCP_REMOTE_HOST,
  PROP_RTCP_REMOTE_PORT,
  PROP_LIP_SYNC,
  PROP_REQUEST_KEYFRAME,
  PROP_DO_LOST,
  PROP_DROP_ON_LATENCY,
  PROP_POST_DROP_MESSAGES,
  PROP_DROP_MESSAGES_INTERVAL,
  PROP_MAX_REORDER,
  PROP_MULTICAST_SOURCE,
  PROP_AUTO_MULTICAST,
  PROP_LOOP,
  PROP_RETRIEVE_SENDER_ADDRESS,
  PROP_SKIP_FIRST_BYTES,
  PROP_MTU,
  PROP_TWCC_FEEDBACK_INTERVAL,
  PROP_RFC8888_FEEDBACK,
  PROP_STATS,
  PROP_AUTO_HEADER_EXTENSION,
  PROP_EXTENSIONS,
  /* GST_UVGRTP_N_PROPS shared ids from here on (gstuvgrtpprops.h) */
  PROP_SHARED_FIRST,
};

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-h264, "
        "stream-format = (string) { byte-stream, avc, avc3 }, "
        "alignment = (string) { au, nal }; "
        "video/x-h265, stream-format = (string) { byte-stream, hvc1, hev1 }, "
        "alignment = (string) { au, nal }; "
        "video/x-h266, stream-format = (string) byte-stream, "
        "alignment = (string) { au, nal }; "
        "audio/x-opus, channel-mapping-family = (int) [ 0, 1 ]"));

static void gst_uvgrtp_src_uri_handler_init (gpointer iface, gpointer data);

#define gst_uvgrtp_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstUvgRtpSrc, gst_uvgrtp_src, GST_TYPE_PUSH_SRC,
    G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gst_uvgrtp_src_uri_handler_init);
    GST_DEBUG_CATEGORY_INIT (gst_uvgrtp_src_debug, "uvgrtpsrc", 0,
        "uvgRTP receiver and depayloader"));
GST_ELEMENT_REGISTER_DEFINE (uvgrtpsrc, "uvgrtpsrc", GST_RANK_NONE,
    GST_TYPE_UVGRTP_SRC);

static void gst_uvgrtp_src_finalize (GObject * object);
static void gst_uvgrtp_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_uvgrtp_src_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static gboolean gst_uvgrtp_src_send_event (GstElement * element,
    GstEvent * event);
static gboolean gst_uvgrtp_src_start (GstBaseSrc * bsrc);
static gboolean gst_uvgrtp_src_stop (GstBaseSrc * bsrc);
static gboolean gst_uvgrtp_src_unlock (GstBaseSrc * bsrc);
static gboolean gst_uvgrtp_src_unlock_stop (GstBaseSrc * bsrc);
static GstCaps *gst_uvgrtp_src_get_caps (GstBaseSrc * bsrc, GstCaps * filter);
static gboolean gst_uvgrtp_src_negotiate (GstBaseSrc * bsrc);
static gboolean gst_uvgrtp_src_query (GstBaseSrc * bsrc, GstQuery * query);
static gboolean gst_uvgrtp_src_event (GstBaseSrc * bsrc, GstEvent * event);
static GstFlowReturn gst_uvgrtp_src_create (GstPushSrc * psrc,
    GstBuffer ** buf);
static GstStateChangeReturn gst_uvgrtp_src_change_state (GstElement *
    element, GstStateChange transition);
static gboolean gst_uvgrtp_src_zrtp_set_sas_verified (GstUvgRtpSrc * self,
    gboolean verified);

static void
gst_uvgrtp_src_class_init (GstUvgRtpSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);

  gobject_class->finalize = gst_uvgrtp_src_finalize;
  gobject_class->set_property = gst_uvgrtp_src_set_property;
  gobject_class->get_property = gst_uvgrtp_src_get_property;

  /**
   * GstUvgRtpSrc:address:
   *
   * Address to receive packets on. A multicast group is joined (on
   * #GstUvgRtpSrc:multicast-iface if set). Use "::" to receive IPv6.
   */
  g_object_class_install_property (gobject_class, PROP_ADDRESS,
      g_param_spec_string ("address", "Address",
          "Address to receive packets on (a multicast group is joined)",
          DEFAULT_ADDRESS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:port:
   *
   * UDP port to receive packets on. 0 binds an ephemeral port, which the
   * property reports once the element has started; with #GstUvgRtp:socket
   * it reports the socket's.
   */
  g_object_class_install_property (gobject_class, PROP_PORT,
      g_param_spec_int ("port", "Port",
          "UDP port to receive packets on (0 = any free port, reported after "
          "start)", 0, G_MAXUINT16, DEFAULT_PORT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:uri:
   *
   * Address and port as one URI, udp://host:port; kept consistent with
   * #GstUvgRtpSrc:address and #GstUvgRtpSrc:port.
   */
  g_object_class_install_property (gobject_class, PROP_URI,
      g_param_spec_string ("uri", "URI",
          "URI in the form udp://host:port (same as address and port)",
          "udp://" DEFAULT_ADDRESS ":5004",
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:reuse:
   *
   * Allow other sockets to bind the same address and port (SO_REUSEADDR
   * and SO_REUSEPORT).
   */
  g_object_class_install_property (gobject_class, PROP_REUSE,
      g_param_spec_boolean ("reuse", "Reuse",
          "Allow other sockets to bind the same address and port",
          DEFAULT_REUSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:caps:
   *
   * The RTP stream's caps, as an SDP would give them:
   * application/x-rtp with encoding-name, clock-rate, payload (only
   * packets of that payload type are accepted; absent = any) and the
   * sprop-* parameters: sprop-parameter-sets for H.264; sprop-vps,
   * sprop-sps, sprop-pps for H.265 and H.266 (and sprop-dci for H.266);
   * sprop-max-don-diff > 0 for H.265 when the sender puts DONL fields in
   * its packets. For Opus, sprop-stereo and sprop-maxcapturerate set the
   * output channels and rate. Parameter sets are put in band before the
   * first access unit, and again after the caps change.
   */
  g_object_class_install_property (gobject_class, PROP_CAPS,
      g_param_spec_boxed ("caps", "Caps",
          "The caps of the RTP stream (application/x-rtp with encoding-name, "
          "payload, sprop-* fields)", GST_TYPE_CAPS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:timeout:
   *
   * Post a "GstUDPSrcTimeout" element message (udpsrc's), with a guint64 field
   * "timeout" holding this value, each time no packet has arrived for this
   * many nanoseconds. 0 disables.
   */
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint64 ("timeout", "Timeout",
          "Post a GstUDPSrcTimeout message after this many nanoseconds "
          "without packets (0 = disabled)", 0, G_MAXUINT64, DEFAULT_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:encoding-name:
   *
   * Shortcut for the codec: H264, H265, H266 or OPUS. Overrides the
   * encoding-name field of #GstUvgRtpSrc:caps. One of the two must name
   * the codec.
   */
  g_object_class_install_property (gobject_class, PROP_ENCODING_NAME,
      g_param_spec_string ("encoding-name", "Encoding name",
          "Codec of the stream: H264, H265, H266 or OPUS (overrides the "
          "caps' encoding-name)", DEFAULT_ENCODING_NAME,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:recv-mode:
   *
   * How datagrams are read from the kernel. auto uses UDP GRO where the
   * kernel has it, else recvmmsg. The mode in effect is in
   * #GstUvgRtpSrc:stats.
   */
  g_object_class_install_property (gobject_class, PROP_RECV_MODE,
      g_param_spec_enum ("recv-mode", "Receive mode",
          "How datagrams are read from the kernel",
          GST_TYPE_UVGRTP_RECV_MODE, DEFAULT_RECV_MODE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:latency:
   *
   * How long, in milliseconds, to wait for a missing packet before it is
   * declared lost. Packets that arrive out of order within this time are
   * put back in order. Also reported as the element's latency: a buffer
   * leaves the element no later than its timestamp plus this (and the
   * network's jitter). May be changed while playing: gaps open from then on
   * wait the new time, and a latency message asks the pipeline to
   * redistribute its latency, as rtpjitterbuffer does. The default is lower
   * than rtpjitterbuffer's 200 ms because nothing waits here unless a packet
   * is missing: in-order packets go out at once.
   */
  g_object_class_install_property (gobject_class, PROP_LATENCY,
      g_param_spec_uint ("latency", "Latency",
          "How long to wait for a missing packet before declaring it lost (ms)",
          0, G_MAXUINT / 1000, DEFAULT_LATENCY,
          G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:do-lost:
   *
   * Tell downstream what is given up, as rtpjitterbuffer's do-lost and a
   * depayloader do: a GstRTPPacketLost event before the first buffer after
   * a gap (seqnum, timestamp, duration, late, retry), and for audio a gap
   * event flagged missing data, which opusdec with plc=true conceals, so
   * the decoded duration stays the stream's. On by default (rtpjitterbuffer
   * has it off): this element is the depayloader too, and a depayloader
   * always turns lost packets into gap events.
   */
  g_object_class_install_property (gobject_class, PROP_DO_LOST,
      g_param_spec_boolean ("do-lost", "Do lost",
          "Send GstRTPPacketLost (and for audio, gap) events for what is lost",
          DEFAULT_DO_LOST, G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
          G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:drop-on-latency:
   *
   * Never let the delay grow past the latency: an access unit that is
   * ready later than its presentation time plus #GstUvgRtpSrc:latency (the
   * element was not asked for data in time, so datagrams waited in the
   * socket) is dropped instead of going out late; with request-keyframe a
   * video stream asks for a key frame. Counted in the stats
   * (dropped-on-latency).
   */
  g_object_class_install_property (gobject_class, PROP_DROP_ON_LATENCY,
      g_param_spec_boolean ("drop-on-latency", "Drop on latency",
          "Drop access units that are older than the latency when ready",
          DEFAULT_DROP_ON_LATENCY, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:post-drop-messages:
   *
   * Post rtpjitterbuffer's "drop-msg" element messages: fields seqnum,
   * timestamp (running time), reason ("too-late": a packet after its gap
   * was given up; "drop-on-latency"), num-too-late and num-drop-on-latency
   * (drops since the last message). At most one per
   * #GstUvgRtpSrc:drop-messages-interval.
   */
  g_object_class_install_property (gobject_class, PROP_POST_DROP_MESSAGES,
      g_param_spec_boolean ("post-drop-messages", "Post drop messages",
          "Post a message for packets dropped as too late or on latency",
          DEFAULT_POST_DROP_MESSAGES, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:drop-messages-interval:
   *
   * The least time between two drop messages, in milliseconds (0: one per
   * drop).
   */
  g_object_class_install_property (gobject_class,
      PROP_DROP_MESSAGES_INTERVAL,
      g_param_spec_uint ("drop-messages-interval", "Drop messages interval",
          "Minimal time between drop messages (ms)", 0, G_MAXUINT / 1000,
          DEFAULT_DROP_MESSAGES_INTERVAL, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:max-reorder:
   *
   * How many sequence numbers behind the newest a packet may be and still
   * be reordering; further behind, a run of them is a sender that
   * restarted its numbering. -1 (the default): the reorder window, at
   * least 1000: at video packet rates rtpjitterbuffer's 100 packets are a
   * millisecond of reordering. Set when the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_REORDER,
      g_param_spec_int ("max-reorder", "Max reorder",
          "Packets behind the newest still taken as reordering (-1: the "
          "reorder window)", -1, 32768, DEFAULT_MAX_REORDER,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:multicast-source:
   *
   * Source-specific multicast (RFC 4607; IGMPv3, MLDv2), as udpsrc's:
   * comma-separated source addresses, each prefixed "+" (or nothing) to
   * receive only from it, or "-" to receive from every source but it;
   * one form per list. Applies when #GstUvgRtpSrc:address is a group.
   */
  g_object_class_install_property (gobject_class, PROP_MULTICAST_SOURCE,
      g_param_spec_string ("multicast-source", "Multicast source",
          "Sources to receive the group from ('+a,+b') or not ('-a'), "
          "separated by ','", DEFAULT_MULTICAST_SOURCE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:auto-multicast:
   *
   * Join the group #GstUvgRtpSrc:address names (and leave it at stop).
   * FALSE: bind to it only, someone else joins.
   */
  g_object_class_install_property (gobject_class, PROP_AUTO_MULTICAST,
      g_param_spec_boolean ("auto-multicast", "Auto multicast",
          "Automatically join/leave the multicast group", DEFAULT_AUTO_MULTICAST,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:loop:
   *
   * The sockets' multicast loop option (IP_MULTICAST_LOOP), as udpsrc sets
   * it: whether what they send to a group (receiver reports to a group)
   * comes back to this host.
   */
  g_object_class_install_property (gobject_class, PROP_LOOP,
      g_param_spec_boolean ("loop", "Multicast loop",
          "Multicast loop: what the sockets send to a group also reaches "
          "this host", DEFAULT_LOOP, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:retrieve-sender-address:
   *
   * Put a GstNetAddressMeta on every buffer, as udpsrc does: the address
   * the followed source's media comes from.
   */
  g_object_class_install_property (gobject_class,
      PROP_RETRIEVE_SENDER_ADDRESS,
      g_param_spec_boolean ("retrieve-sender-address",
          "Retrieve sender address", "Add the sender's address to buffers "
          "as GstNetAddressMeta", DEFAULT_RETRIEVE_SENDER_ADDRESS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:skip-first-bytes:
   *
   * Bytes to cut off the start of every datagram before the RTP header (a
   * transport that prefixes its own header). A shorter datagram is counted
   * as malformed.
   */
  g_object_class_install_property (gobject_class, PROP_SKIP_FIRST_BYTES,
      g_param_spec_int ("skip-first-bytes", "Skip first bytes",
          "Number of bytes to skip at the start of each datagram", 0,
          G_MAXUINT16, DEFAULT_SKIP_FIRST_BYTES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:mtu:
   *
   * udpsrc's largest expected datagram. Accepted for its pipelines; no
   * effect here: every datagram, up to UDP's 65507 bytes, is read whole
   * (the receive slots hold the largest one, or several coalesced by UDP
   * GRO), and one larger than expected is never truncated.
   */
  g_object_class_install_property (gobject_class, PROP_MTU,
      g_param_spec_uint ("mtu", "MTU", "Maximum expected packet size "
          "(accepted for udpsrc's pipelines: every datagram is read whole)",
          0, G_MAXINT, DEFAULT_MTU, G_PARAM_READWRITE |
          G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:ssrc:
   *
   * Follow only the RTP source with this SSRC (0 to 0xffffffff), from its
   * first packet; packets of any other SSRC are dropped and counted as
   * foreign. -1 (the default): follow whichever source validates first, and
   * let a new one take over after #GstUvgRtpSrc:source-timeout.
   */
  g_object_class_install_property (gobject_class, PROP_SSRC,
      g_param_spec_int64 ("ssrc", "SSRC",
          "Follow only this SSRC (-1 = any, the first to validate)",
          -1, G_MAXUINT32, DEFAULT_SSRC,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstUvgRtpSrc:source-timeout:
   *
   * Milliseconds of silence after which the current RTP source gives way
   * to another one that sends packets in sequence (a sender that restarted
   * with a new SSRC). A stranger cannot take a stream over while its
   * source keeps sending; a lower value resumes faster after a restart.
   */
  g_object_class_install_property (gobject_class, PROP_SOURCE_TIMEOUT,
      g_param_spec_uint ("source-timeout", "Source timeout",
          "Silence (ms) after which another RTP source may take over",
          1, G_MAXUINT / 1000, DEFAULT_SOURCE_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));

  /**
   * GstUvgRtpSrc:wait-for-keyframe:
   *
   * Drop access units until a keyframe arrives, at start and after damage.
   */
  g_object_class_install_property (gobject_class, PROP_WAIT_FOR_KEYFRAME,
      g_param_spec_boolean ("wait-for-keyframe", "Wait for keyframe",
          "Drop access units until a keyframe, at start and after damage",
          DEFAULT_WAIT_FOR_KEYFRAME,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:loss-policy:
   *
   * What to do with an access unit that lost packets: drop it whole
   * (drop-au), or deliver it without the damaged NAL units, flagged
   * GST_BUFFER_FLAG_CORRUPTED (drop-nal). A NAL unit with missing
   * fragments is never delivered.
   */
  g_object_class_install_property (gobject_class, PROP_LOSS_POLICY,
      g_param_spec_enum ("loss-policy", "Loss policy",
          "What to do with an access unit that lost packets",
          GST_TYPE_UVGRTP_LOSS_POLICY, DEFAULT_LOSS_POLICY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:max-au-size:
   *
   * Largest access unit in bytes; larger ones are dropped (counted as
   * oversize). Bounds the memory a hostile sender can make the element use.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_AU_SIZE,
      g_param_spec_uint ("max-au-size", "Maximum access unit size",
          "Largest access unit in bytes; larger ones are dropped",
          1024, G_MAXUINT, DEFAULT_MAX_AU_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:replay-window-size:
   *
   * SRTP replay protection window in packets, as srtpdec's property of the
   * same name: a packet already received, or older than the newest one by
   * this many, is dropped as a replay. The default, 1024, is above
   * libsrtp2's 128 because a video frame arrives as a burst of packets,
   * and a packet reordered further back than the window is lost. Read when
   * the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_REPLAY_WINDOW_SIZE,
      g_param_spec_uint ("replay-window-size", "Replay window size",
          "SRTP replay protection window in packets",
          URTP_SRTP_MIN_WINDOW, URTP_SRTP_MAX_WINDOW,
          DEFAULT_REPLAY_WINDOW_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:rtcp-remote-host:
   *
   * Where receiver reports go. NULL (the default): back to where the
   * followed source's sender reports come from (symmetric RTCP, RFC 4961;
   * uvgrtpsink and FFmpeg do that); nothing is sent before the first one.
   * A sender whose RTCP goes out on one port and is read on another (an
   * rtpbin sender with a udpsink and a udpsrc for RTCP) needs its reading
   * port here with #GstUvgRtpSrc:rtcp-remote-port.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_REMOTE_HOST,
      g_param_spec_string ("rtcp-remote-host", "RTCP remote host",
          "Where receiver reports go (NULL = where the sender's reports "
          "come from)", DEFAULT_RTCP_REMOTE_HOST,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:rtcp-remote-port:
   *
   * The port of #GstUvgRtpSrc:rtcp-remote-host: 0 for the local RTCP
   * port's number.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_REMOTE_PORT,
      g_param_spec_int ("rtcp-remote-port", "RTCP remote port",
          "Port of rtcp-remote-host (0 = the local RTCP port's number)",
          0, G_MAXUINT16, DEFAULT_RTCP_REMOTE_PORT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:lip-sync:
   *
   * Play in step with the sender's other streams, as rtpbin does: once
   * sender reports have said how the source's RTP timestamps map to its
   * wall clock, every uvgrtpsrc of the process whose source has the same
   * CNAME (and whose pipeline has the same clock) delays its buffers by
   * what it is ahead of the latest of them (an audio stream waits for a
   * video stream that takes 80 ms longer to arrive), at most 3 s. The
   * delay is in the stats (sync-delay) and does not change the latency
   * reported: buffers only come earlier than their time. Needs
   * #GstUvgRtpSrc:rtcp.
   */
  g_object_class_install_property (gobject_class, PROP_LIP_SYNC,
      g_param_spec_boolean ("lip-sync", "Lip sync",
          "Delay buffers to play in step with the sender's other streams "
          "(same CNAME), from its sender reports", DEFAULT_LIP_SYNC,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:request-keyframe:
   *
   * Ask the sender for a key frame (RTCP PLI, RFC 4585) when packets are
   * given up for lost, so that a damaged picture is repaired at once
   * rather than at the next key frame; at most one request per 300 ms, and
   * a key frame that arrives answers the requests before it. Needs
   * #GstUvgRtpSrc:rtcp. An upstream force-key-unit event (from a decoder,
   * or the application) asks too, whatever this property: a FIR (RFC 5104)
   * when it asks for all headers, else a PLI.
   */
  g_object_class_install_property (gobject_class, PROP_REQUEST_KEYFRAME,
      g_param_spec_boolean ("request-keyframe", "Request keyframe",
          "Ask the sender for a key frame (PLI) when packets are lost",
          DEFAULT_REQUEST_KEYFRAME, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:twcc-feedback-interval:
   *
   * How often transport-wide congestion control feedback (RTCP RTPFB FMT
   * 15) answers the transport-wide sequence numbers of the sender's
   * packets, in ns; 0 (the default): after each frame (a packet with the
   * marker bit), and at least every 25 ms while packets arrive, as
   * rtpsession's property of the name. The feedback is on when
   * #GstUvgRtpSrc:caps carry the extension's extmap-N
   * (http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01)
   * or the extension was added; it needs #GstUvgRtpSrc:rtcp, and goes
   * where the receiver reports go. May be changed while playing.
   */
  g_object_class_install_property (gobject_class, PROP_TWCC_FEEDBACK_INTERVAL,
      g_param_spec_uint64 ("twcc-feedback-interval", "TWCC feedback interval",
          "How often transport-wide congestion control feedback is sent "
          "(ns; 0: after each frame)", 0, G_MAXUINT64,
          DEFAULT_TWCC_FEEDBACK_INTERVAL, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:rfc8888-feedback:
   *
   * Answer the media's own sequence numbers with RFC 8888 congestion
   * control feedback (RTCP RTPFB FMT 11: per packet whether and when it
   * arrived), at the times #GstUvgRtpSrc:twcc-feedback-interval says.
   * Also on when #GstUvgRtpSrc:caps carry rtcp-fb-ack-ccfb=true (the SDP's
   * a=rtcp-fb:* ack ccfb). Needs #GstUvgRtpSrc:rtcp. May be changed while
   * playing.
   */
  g_object_class_install_property (gobject_class, PROP_RFC8888_FEEDBACK,
      g_param_spec_boolean ("rfc8888-feedback", "RFC 8888 feedback",
          "Answer packets with RFC 8888 congestion control feedback",
          DEFAULT_RFC8888_FEEDBACK, G_PARAM_READWRITE |
          GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));
  /* documented in gstuvgrtpstats.c */
  g_object_class_install_property (gobject_class, PROP_STATS,
      gst_uvgrtp_src_stats_param_spec ());
  /* RTP header extensions: RTPBaseDepayload's API, extmap-N fields in
   * 'caps' (gstuvgrtphdrext.c) */
  request_extension_signal = gst_uvgrtp_hdrext_install (gobject_class,
      PROP_AUTO_HEADER_EXTENSION, PROP_EXTENSIONS,
      G_CALLBACK (gst_uvgrtp_src_add_extension),
      G_CALLBACK (gst_uvgrtp_src_clear_extensions));
  /* socket, RTCP, SRTP, retransmission and ZRTP, as uvgrtpsink's */
  gst_uvgrtp_props_install (gobject_class, PROP_SHARED_FIRST,
      GST_UVGRTP_ROLE_RECEIVER,
      G_CALLBACK (gst_uvgrtp_src_zrtp_set_sas_verified));

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "uvgRTP receiver", "Source/Network/Depayloader",
      "Receives RTP over UDP and depayloads H.264, H.265, H.266 and Opus "
      "(batched reception, zero-copy output)", "gst-uvgrtp developers");

  element_class->send_event = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_send_event);
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_uvgrtp_src_change_state);

  basesrc_class->start = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_start);
  basesrc_class->stop = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_stop);
  basesrc_class->unlock = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_unlock);
  basesrc_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_unlock_stop);
  basesrc_class->get_caps = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_get_caps);
  basesrc_class->negotiate = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_negotiate);
  basesrc_class->query = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_query);
  basesrc_class->event = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_event);

  pushsrc_class->create = GST_DEBUG_FUNCPTR (gst_uvgrtp_src_create);

  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_RECV_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_LOSS_POLICY, 0);
}

static void
gst_uvgrtp_src_init (GstUvgRtpSrc * self)
{
  self->address = g_strdup (DEFAULT_ADDRESS);
  self->port = DEFAULT_PORT;
  self->reuse = DEFAULT_REUSE;
  self->caps = NULL;
  self->timeout = DEFAULT_TIMEOUT;
  self->encoding_name = g_strdup (DEFAULT_ENCODING_NAME);
  self->recv_mode = DEFAULT_RECV_MODE;
  self->latency = DEFAULT_LATENCY;
  self->do_lost = DEFAULT_DO_LOST;
  self->drop_on_latency = DEFAULT_DROP_ON_LATENCY;
  self->post_drop_messages = DEFAULT_POST_DROP_MESSAGES;
  self->drop_messages_interval = DEFAULT_DROP_MESSAGES_INTERVAL;
  self->max_reorder = DEFAULT_MAX_REORDER;
  self->twcc_feedback_interval = DEFAULT_TWCC_FEEDBACK_INTERVAL;
  self->rfc8888_feedback = DEFAULT_RFC8888_FEEDBACK;
  self->multicast_source = g_strdup (DEFAULT_MULTICAST_SOURCE);
  self->auto_multicast = DEFAULT_AUTO_MULTICAST;
  self->loop = DEFAULT_LOOP;
  self->retrieve_sender_address = DEFAULT_RETRIEVE_SENDER_ADDRESS;
  self->skip_first_bytes = DEFAULT_SKIP_FIRST_BYTES;
  self->mtu = DEFAULT_MTU;
  self->ssrc = DEFAULT_SSRC;
  self->source_timeout = DEFAULT_SOURCE_TIMEOUT;
  self->wait_for_keyframe = DEFAULT_WAIT_FOR_KEYFRAME;
  self->loss_policy = DEFAULT_LOSS_POLICY;
  self->max_au_size = DEFAULT_MAX_AU_SIZE;
  self->replay_window_size = DEFAULT_REPLAY_WINDOW_SIZE;
  self->rtcp_remote_host = g_strdup (DEFAULT_RTCP_REMOTE_HOST);
  self->rtcp_remote_port = DEFAULT_RTCP_REMOTE_PORT;
  self->lip_sync = DEFAULT_LIP_SYNC;
  self->request_keyframe = DEFAULT_REQUEST_KEYFRAME;
  gst_uvgrtp_settings_init (&self->common, GST_UVGRTP_ROLE_RECEIVER);
  gst_uvgrtp_hdrext_init (&self->hdrext, GST_ELEMENT (self),
      request_extension_signal);
  self->sock.fd = -1;
  self->sock.wake_fd = -1;

  gst_base_src_set_live (GST_BASE_SRC (self), TRUE);
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_TIME);
  gst_base_src_set_do_timestamp (GST_BASE_SRC (self), FALSE);
}

static void
gst_uvgrtp_src_finalize (GObject * object)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (object);

  g_free (self->address);
  g_free (self->encoding_name);
  g_free (self->rtcp_remote_host);
  g_free (self->multicast_source);
  g_clear_object (&self->sender_addr);
  gst_caps_replace (&self->caps, NULL);
  gst_uvgrtp_src_session_clear (&self->session);
  if (self->last_stats)
    gst_structure_free (self->last_stats);
  gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
  gst_uvgrtp_zrtp_ctl_unref (self->zrtp_ctl);
  gst_uvgrtp_settings_clear (&self->common);
  gst_uvgrtp_hdrext_finalize (&self->hdrext);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static gboolean
is_multicast_address (const gchar * address)
{
  struct in_addr a4;
  struct in6_addr a6;

  return (inet_pton (AF_INET, address, &a4) == 1 &&
      IN_MULTICAST (ntohl (a4.s_addr))) ||
      (inet_pton (AF_INET6, address, &a6) == 1 && IN6_IS_ADDR_MULTICAST (&a6));
}

static void
post_small_buffer_warning (GstUvgRtpSrc * self, gint asked)
{
  GST_WARNING_OBJECT (self, "asked for a %d byte receive buffer, the kernel "
      "granted %d", asked, self->sock.rcvbuf);
  GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
      ("Could not set the receive buffer to %d bytes (property "
          "'buffer-size'): the kernel granted %d. Raise net.core.rmem_max "
          "or give the process CAP_NET_ADMIN.", asked, self->sock.rcvbuf),
      (NULL));
}

/* --- properties --------------------------------------------------------- */

/* Parses udp://host:port into the address and port properties. Called with
 * the object lock. */
static gboolean
set_uri (GstUvgRtpSrc * self, const gchar * uri)
{
  GstUri *u;
  const gchar *host;
  guint port;

  if (!uri)
    return FALSE;
  u = gst_uri_from_string (uri);
  if (!u)
    return FALSE;
  if (g_strcmp0 (gst_uri_get_scheme (u), "udp") != 0) {
    gst_uri_unref (u);
    return FALSE;
  }
  host = gst_uri_get_host (u);
  port = gst_uri_get_port (u);
  if (port != GST_URI_NO_PORT && port > G_MAXUINT16) {
    gst_uri_unref (u);
    return FALSE;
  }
  if (host && *host) {
    g_free (self->address);
    self->address = g_strdup (host);
  }
  if (port != GST_URI_NO_PORT)
    self->port = (gint) port;
  gst_uri_unref (u);
  return TRUE;
}

static gchar *
get_uri (GstUvgRtpSrc * self)
{
  /* IPv6 literals go in brackets */
  if (self->address && strchr (self->address, ':'))
    return g_strdup_printf ("udp://[%s]:%d", self->address, self->port);
  return g_strdup_printf ("udp://%s:%d", self->address, self->port);
}

static GstStructure *build_stats (GstUvgRtpSrc * self);

/* GstURIHandler: udp://host:port, as udpsrc. Both have rank none, so
 * gst_element_make_from_uri() and urisourcebin pick udpsrc for udp://
 * (the name decides between equal ranks): an application that wants this
 * element makes it and sets the URI, through the interface or `uri`. */
static GstURIType
gst_uvgrtp_src_uri_get_type (GType type)
{
  return GST_URI_SRC;
}

static const gchar *const *
gst_uvgrtp_src_uri_get_protocols (GType type)
{
  static const gchar *const protocols[] = { "udp", NULL };

  return protocols;
}

static gchar *
gst_uvgrtp_src_uri_get_uri (GstURIHandler * handler)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (handler);
  gchar *uri;

  GST_OBJECT_LOCK (self);
  uri = get_uri (self);
  GST_OBJECT_UNLOCK (self);
  return uri;
}

static gboolean
gst_uvgrtp_src_uri_set_uri (GstURIHandler * handler, const gchar * uri,
    GError ** error)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (handler);
  gboolean ok;

  GST_OBJECT_LOCK (self);
  ok = set_uri (self, uri);
  GST_OBJECT_UNLOCK (self);
  if (!ok)
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI,
        "Invalid URI '%s': expected udp://host:port", GST_STR_NULL (uri));
  else {
    g_object_notify (G_OBJECT (self), "address");
    g_object_notify (G_OBJECT (self), "port");
  }
  return ok;
}

static void
gst_uvgrtp_src_uri_handler_init (gpointer g_iface, gpointer data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = gst_uvgrtp_src_uri_get_type;
  iface->get_protocols = gst_uvgrtp_src_uri_get_protocols;
  iface->get_uri = gst_uvgrtp_src_uri_get_uri;
  iface->set_uri = gst_uvgrtp_src_uri_set_uri;
}

/* Where each property of the element's own, other than uri, caps and
 * stats, lives in the instance; its value type says how to set and read
 * it. */
#define FIELD(f) G_STRUCT_OFFSET (GstUvgRtpSrc, f)
static const gsize prop_field[PROP_SHARED_FIRST] = {
  [PROP_ADDRESS] = FIELD (address),[PROP_PORT] = FIELD (port),
  [PROP_REUSE] = FIELD (reuse),[PROP_TIMEOUT] = FIELD (timeout),
  [PROP_ENCODING_NAME] = FIELD (encoding_name),
  [PROP_RECV_MODE] = FIELD (recv_mode),[PROP_LATENCY] = FIELD (latency),
  [PROP_SSRC] = FIELD (ssrc),[PROP_SOURCE_TIMEOUT] = FIELD (source_timeout),
  [PROP_WAIT_FOR_KEYFRAME] = FIELD (wait_for_keyframe),
  [PROP_LOSS_POLICY] = FIELD (loss_policy),
  [PROP_MAX_AU_SIZE] = FIELD (max_au_size),
  [PROP_REPLAY_WINDOW_SIZE] = FIELD (replay_window_size),
  [PROP_RTCP_REMOTE_HOST] = FIELD (rtcp_remote_host),
  [PROP_RTCP_REMOTE_PORT] = FIELD (rtcp_remote_port),
  [PROP_LIP_SYNC] = FIELD (lip_sync),
  [PROP_REQUEST_KEYFRAME] = FIELD (request_keyframe),
  [PROP_DO_LOST] = FIELD (do_lost),
  [PROP_DROP_ON_LATENCY] = FIELD (drop_on_latency),
  [PROP_POST_DROP_MESSAGES] = FIELD (post_drop_messages),
  [PROP_DROP_MESSAGES_INTERVAL] = FIELD (drop_messages_interval),
  [PROP_MAX_REORDER] = FIELD (max_reorder),
  [PROP_MULTICAST_SOURCE] = FIELD (multicast_source),
  [PROP_AUTO_MULTICAST] = FIELD (auto_multicast),
  [PROP_LOOP] = FIELD (loop),
  [PROP_RETRIEVE_SENDER_ADDRESS] = FIELD (retrieve_sender_address),
  [PROP_SKIP_FIRST_BYTES] = FIELD (skip_first_bytes),
  [PROP_MTU] = FIELD (mtu),
  [PROP_TWCC_FEEDBACK_INTERVAL] = FIELD (twcc_feedback_interval),
  [PROP_RFC8888_FEEDBACK] = FIELD (rfc8888_feedback),
};
#undef FIELD

static void
gst_uvgrtp_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (object);
  gboolean latency_changed;

  if (gst_uvgrtp_hdrext_set_property (&self->hdrext, prop_id,
          PROP_AUTO_HEADER_EXTENSION, PROP_EXTENSIONS, value))
    return;
  if (prop_id == PROP_CAPS) {
    /* extmap-N fields: emits request-extension, not under the object lock */
    gst_uvgrtp_hdrext_from_caps (&self->hdrext, gst_value_get_caps (value));
  }
  GST_OBJECT_LOCK (self);
  if (prop_id == PROP_URI) {
    if (!set_uri (self, g_value_get_string (value)))
      GST_WARNING_OBJECT (self, "Invalid URI '%s': expected udp://host:port",
          GST_STR_NULL (g_value_get_string (value)));
  } else if (prop_id == PROP_CAPS) {
    const GstCaps *caps = gst_value_get_caps (value);
    GstCaps *copy = caps ? gst_caps_copy (caps) : NULL;

    gst_caps_replace (&self->caps, copy);
    if (copy)
      gst_caps_unref (copy);
    if (self->opened)
      g_atomic_int_set (&self->caps_changed, TRUE);
  } else if (!gst_uvgrtp_props_set (object, &self->common, PROP_SHARED_FIRST,
          prop_field, prop_id, value)) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
  if (prop_id == PROP_ADDRESS && !self->address)
    self->address = g_strdup (DEFAULT_ADDRESS);
  if (prop_id == PROP_ENCODING_NAME && self->opened)
    g_atomic_int_set (&self->caps_changed, TRUE);
  if ((prop_id == PROP_TWCC_FEEDBACK_INTERVAL
          || prop_id == PROP_RFC8888_FEEDBACK) && self->opened)
    g_atomic_int_set (&self->ccfb_changed, TRUE);
  latency_changed = prop_id == PROP_LATENCY && self->opened;
  if (latency_changed)
    g_atomic_int_set (&self->latency_changed, TRUE);
  GST_OBJECT_UNLOCK (self);
  /* the pipeline asks everyone again and sets the new total */
  if (latency_changed)
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_latency (GST_OBJECT (self)));
}

static void
gst_uvgrtp_src_add_extension (GstUvgRtpSrc * self, GstRTPHeaderExtension * ext)
{
  gst_uvgrtp_hdrext_add (&self->hdrext, ext);
}

static void
gst_uvgrtp_src_clear_extensions (GstUvgRtpSrc * self)
{
  gst_uvgrtp_hdrext_clear (&self->hdrext);
}

static void
gst_uvgrtp_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (object);

  if (gst_uvgrtp_hdrext_get_property (&self->hdrext, prop_id,
          PROP_AUTO_HEADER_EXTENSION, PROP_EXTENSIONS, value))
    return;
  GST_OBJECT_LOCK (self);
  if (prop_id == PROP_URI)
    g_value_take_string (value, get_uri (self));
  else if (prop_id == PROP_CAPS)
    gst_value_set_caps (value, self->caps);
  else if (prop_id == PROP_STATS)
    g_value_take_boxed (value, build_stats (self));
  else if (!gst_uvgrtp_props_get (object, &self->common, self->zrtp_ctl,
          PROP_SHARED_FIRST, prop_field, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
}

/* --- statistics --------------------------------------------------------- */

/* Called with the object lock; waits for nothing the streaming thread
 * holds for long (the stream's snapshot is a copy under a lock of its own). */
static GstStructure *
build_stats (GstUvgRtpSrc * self)
{
  GstUvgRtpSrcStats v;

  memset (&v, 0, sizeof (v));
  v.recv_mode = "none";
  if (!self->opened) {
    if (self->last_stats)
      return gst_structure_copy (self->last_stats);
  } else {
    urtp_recvstream_stats (self->stream, &v.st);
    v.dropped_on_latency = self->loss.dropped_on_latency;
    v.lost_events = self->loss.lost_events;
    v.c.buffer_size = self->sock.rcvbuf;
    v.recv_mode = urtp_io_mode_name (self->sock.rx_mode);
    if (self->zrtp_ctl)
      gst_uvgrtp_zrtp_ctl_get_counters (self->zrtp_ctl, &v.c.zrtp);
  }
  v.c.ssrc = v.st.ssrc;
  v.c.rtx_ssrc = v.st.rtx_ssrc;
  v.c.rtcp_sent = v.st.rtcp_sent;
  v.c.rtcp_received = v.st.rtcp;
  v.c.rtcp_bad = v.st.rtcp_bad;
  v.c.rtcp_foreign = v.st.rtcp_foreign;
  v.c.srtcp = v.st.srtcp;
  v.c.block = v.st.reception;
  v.c.round_trip_time = v.st.nack.rtt;
  return gst_uvgrtp_src_stats_to_structure (&v);
}

static gboolean
gst_uvgrtp_src_zrtp_set_sas_verified (GstUvgRtpSrc * self, gboolean verified)
{
  return gst_uvgrtp_zrtp_element_set_sas_verified (GST_ELEMENT (self),
      &self->zrtp_ctl, verified);
}

/* --- start / stop ------------------------------------------------------- */

/* The receiving stream for the resolved session. Called with the object
 * lock. */
static gint
make_stream (GstUvgRtpSrc * self, const urtp_srtp_config_t * srtp,
    urtp_zrtp_ep_t * zrtp, gboolean allow_clear, urtp_recvstream_t ** out)
{
  urtp_recvstream_config_t cfg;
  GstMapInfo map = GST_MAP_INFO_INIT;
  gint r;

  memset (&cfg, 0, sizeof (cfg));
  cfg.codec = self->session.codec;
  cfg.pt = self->session.pt;
  cfg.clock_rate = self->session.clock_rate;
  cfg.ssrc = self->ssrc;
  cfg.source_timeout = (guint64) self->source_timeout * GST_MSECOND;
  cfg.latency = (guint64) self->latency * GST_MSECOND;
  cfg.reorder_window = REORDER_WINDOW;
  cfg.max_au_size = self->max_au_size;
  cfg.loss_policy = self->loss_policy == GST_UVGRTP_LOSS_DROP_NAL ?
      URTP_LOSS_DROP_NAL : URTP_LOSS_DROP_AU;
  cfg.wait_for_keyframe = self->wait_for_keyframe;
  cfg.donl = self->session.donl;
  cfg.srtp = srtp;
  cfg.zrtp = zrtp;
  cfg.zrtp_allow_clear = allow_clear;
  cfg.replay_window = self->replay_window_size;
  cfg.cname = self->common.cname;
  cfg.lip_sync = self->lip_sync && self->common.rtcp;
  cfg.rtcp_mux = self->common.rtcp && self->common.rtcp_mux;
  /* feedback goes over RTCP */
  cfg.nack = cfg.rtx = self->common.do_retransmission && self->common.rtcp;
  cfg.rtx_pt = self->common.rtx_pt >= 0 ? (uint8_t) self->common.rtx_pt :
      urtp_rtx_default_pt (self->session.pt >= 0 ? (uint8_t) self->session.pt
      : 96);
  cfg.request_keyframe = self->request_keyframe && self->common.rtcp;
  cfg.skip_bytes = (size_t) self->skip_first_bytes;
  if (self->max_reorder >= 0)
    cfg.max_misorder = (unsigned) MAX (self->max_reorder, 1);
  if (self->session.params && gst_memory_map (self->session.params, &map,
          GST_MAP_READ)) {
    cfg.params = map.data;
    cfg.params_len = map.size;
  }
  r = urtp_recvstream_new (&cfg, out);
  if (map.memory)
    gst_memory_unmap (self->session.params, &map);
  return r;
}

static GstClockTime clock_now (GstUvgRtpSrc * self, GstClockTime * base_time);

static guint64
mono_ns (void)
{
  return (guint64) g_get_monotonic_time () * 1000;
}

/* RTCP's socket, next to the RTP socket (port + 1 unless set), or with
 * rtcp-mux the RTP socket itself, which the streaming thread reads (the
 * stream takes RTCP from among the datagrams). Without it the element
 * still receives: a warning names the property to change. */
static void
open_rtcp (GstUvgRtpSrc * self, const urtp_sock_config_t * media)
{
  const gchar *address = media->bind_addr;
  urtp_rtcpio_config_t rc;
  gchar *remote;
  gint r, port;
  gboolean mux;

  self->rtcp_on = FALSE;
  /* start() has set port to the one bound */
  GST_OBJECT_LOCK (self);
  if (!gst_uvgrtp_settings_rtcp (&self->common, self->port, &rc, &mux,
          &port)) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  remote = g_strdup (self->rtcp_remote_host);
  rc.bind_addr = address;
  rc.bind_port = (guint16) MIN (port, G_MAXUINT16);
  rc.remote_addr = remote && *remote ? remote : NULL;
  rc.remote_port = (guint16) (self->rtcp_remote_port ?
      self->rtcp_remote_port : port);
  rc.reuse = self->reuse;
  rc.mux = mux ? &self->sock : NULL;
  /* a group: RTCP's socket joins it as the media's does */
  rc.multicast_iface = media->multicast_iface;
  rc.multicast_sources = media->multicast_sources;
  rc.no_join = media->no_join;
  GST_OBJECT_UNLOCK (self);

  r = urtp_rtcpio_open (&self->rtcpio, &rc, mono_ns ());
  if (r < 0) {
    /* the media goes on without reports, feedback or lip sync */
    GST_ELEMENT_WARNING (self, RESOURCE, OPEN_READ,
        ("No RTCP: could not bind to %s:%d: %s (set 'rtcp-port' to a free "
            "port, 'rtcp-mux=true' if the sender multiplexes, or "
            "'rtcp=false')", address, port, g_strerror (-r)), (NULL));
  } else {
    GstClockTime base;

    self->rtcp_on = TRUE;
    if (!mux)
      self->sock.watch_fd = self->rtcpio.sock.fd;
    /* a configured destination is known to the feedback from now on, not
     * only from the first RTCP round */
    urtp_recvstream_rtcp_service (self->stream, &self->rtcpio,
        clock_now (self, &base), mono_ns ());
    GST_INFO_OBJECT (self, "RTCP on port %d%s", urtp_sock_local_port
        (&self->rtcpio.sock), mux ? " (rtcp-mux)" : "");
  }
  g_free (remote);
}

/* A sender report of the followed source arrived: posted as a message. */
static void
post_sender_report (GstUvgRtpSrc * self)
{
  urtp_recvstream_stats_t st;

  urtp_recvstream_stats (self->stream, &st);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
          gst_structure_new ("uvgrtp-rtcp", "type", G_TYPE_STRING, "sr",
              "ssrc", G_TYPE_UINT, (guint) st.ssrc,
              "cname", G_TYPE_STRING, st.cname,
              "ntp-time", G_TYPE_UINT64, (guint64) st.sr_ntp,
              "rtp-time", G_TYPE_UINT, (guint) st.sr_rtp_ts,
              "packets", G_TYPE_UINT, (guint) st.sr_packets,
              "octets", G_TYPE_UINT, (guint) st.sr_octets, NULL)));
}

/* The stream's clock for lib/'s loop (the pipeline clock's). */
static guint64
stream_now (void *user)
{
  GstClockTime base;

  return clock_now (user, &base);
}

static void
close_rtcp (GstUvgRtpSrc * self, urtp_recvstream_t * stream)
{
  GstClockTime base;
  guint8 buf[512];
  gint len;

  if (!self->rtcp_on)
    return;
  /* we leave: a last report with BYE, its DLSR on the stream's clock */
  len = urtp_recvstream_rtcp_report (stream, clock_now (self, &base), TRUE,
      buf, sizeof buf);
  if (len > 0)
    urtp_rtcpio_send (&self->rtcpio, buf, (gsize) len, mono_ns ());
  self->sock.watch_fd = -1;
  urtp_rtcpio_close (&self->rtcpio);
  self->rtcp_on = FALSE;
}

/* Closes the socket; the application's is closed as close-socket says. */
static void
close_socket (GstUvgRtpSrc * self)
{
  urtp_sock_close (&self->sock);
  GST_OBJECT_LOCK (self);
  gst_uvgrtp_settings_socket_closed (&self->common, NULL, self->given_socket);
  self->given_socket = NULL;
  GST_OBJECT_UNLOCK (self);
}

static gboolean
gst_uvgrtp_src_start (GstBaseSrc * bsrc)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);
  urtp_sock_config_t cfg;
  GstUvgRtpSrcSession session;
  urtp_srtp_config_t srtp_cfg;
  guint8 srtp_key_bytes[URTP_SRTP_MAX_KEY_LEN];
  gboolean have_srtp = FALSE;
  gchar *err_msg = NULL, *address, *iface, *sources;
  GstUvgRtpZrtpSettings zs;
  GstUvgRtpZrtpCtl *zctl = NULL;
  urtp_recvstream_t *stream = NULL;
  GSocket *given;
  guint replay_window;
  gint err_code, port, buffer_size, ret;

  GST_OBJECT_LOCK (self);
  if (!gst_uvgrtp_src_session_resolve (self, &session, &err_msg, &err_code)) {
    GST_OBJECT_UNLOCK (self);
    gst_uvgrtp_src_post_config_error (self, err_msg, err_code);
    return FALSE;
  }
  replay_window = self->replay_window_size;
  GST_OBJECT_UNLOCK (self);

  /* a bad key is reported before any network setting */
  if (!gst_uvgrtp_settings_take_keys (GST_ELEMENT (self), &self->common,
          &self->zrtp_ctl, &srtp_cfg, srtp_key_bytes, &zs)) {
    gst_uvgrtp_src_session_clear (&session);
    return FALSE;
  }
  have_srtp = srtp_cfg.key_len > 0;
  srtp_cfg.dir = URTP_SRTP_INBOUND;
  srtp_cfg.any_ssrc = TRUE;
  srtp_cfg.replay_window = replay_window;

  GST_OBJECT_LOCK (self);
  address = g_strdup (self->address);
  iface = g_strdup (self->common.multicast_iface);
  sources = g_strdup (self->multicast_source);
  port = self->port;
  buffer_size = self->common.buffer_size;

  memset (&cfg, 0, sizeof (cfg));
  cfg.bind_addr = address;
  cfg.bind_port = (uint16_t) port;
  cfg.multicast_iface = iface && *iface ? iface : NULL;
  cfg.multicast_sources = sources && *sources ? sources : NULL;
  cfg.no_join = !self->auto_multicast;
  cfg.multicast_loop = self->loop;
  cfg.dscp = -1;
  cfg.rcvbuf = buffer_size;
  cfg.reuse = self->reuse;
  cfg.tx_mode = URTP_IO_AUTO;
  cfg.rx_mode = (urtp_io_mode_t) self->recv_mode;
  given = gst_uvgrtp_settings_take_socket (&self->common);
  GST_OBJECT_UNLOCK (self);

  if (given) {
    /* the application bound it: address is read only for a group to join */
    ret = urtp_sock_adopt (&self->sock, g_socket_get_fd (given), &cfg);
    if (ret < 0)
      goto adopt_failed;
  } else {
    ret = urtp_sock_open (&self->sock, &cfg);
    if (ret < 0)
      goto open_failed;
  }
  GST_OBJECT_LOCK (self);
  gst_uvgrtp_settings_socket_opened (&self->common, NULL, given,
      self->sock.fd);
  self->given_socket = given;
  given = NULL;
  GST_OBJECT_UNLOCK (self);
  if (zs.enabled) {
    if (is_multicast_address (address))
      goto zrtp_multicast;
    zctl = gst_uvgrtp_zrtp_ctl_start (GST_ELEMENT (self), &zs,
        GST_UVGRTP_ZRTP_RECEIVER, self->sock.fd, FALSE, NULL, 0,
        g_random_int ());
    if (!zctl)
      goto fail_socket;         /* posted */
  }
  GST_INFO_OBJECT (self, "bound to %s:%d, receive mode %s, buffer %d bytes",
      address, urtp_sock_local_port (&self->sock),
      urtp_io_mode_name (self->sock.rx_mode), self->sock.rcvbuf);
  if (buffer_size > 0 && self->sock.rcvbuf < buffer_size)
    post_small_buffer_warning (self, buffer_size);

  ret = urtp_rx_init (&self->rx, RX_BATCH, RX_SLOT);
  if (ret < 0)
    goto no_memory;
  /* buffer-size 0: receive memory that grows with the stream's needs
   * (net.h); a socket the application made keeps what it set */
  self->rx_auto_on = buffer_size == 0 && !self->given_socket;
  if (self->rx_auto_on) {
    GST_OBJECT_LOCK (self);
    urtp_rx_auto_start (&self->rx_auto, &self->sock, &self->rx);
    GST_OBJECT_UNLOCK (self);
    GST_INFO_OBJECT (self, "receive buffer %d bytes to start with, growing "
        "with the stream", self->sock.rcvbuf);
  }

  GST_OBJECT_LOCK (self);
  gst_uvgrtp_src_session_clear (&self->session);
  self->session = session;
  g_atomic_int_set (&self->ccfb_changed, TRUE);   /* rtcp-fb-ack-ccfb */
  ret = make_stream (self, have_srtp ? &srtp_cfg : NULL,
      zctl ? gst_uvgrtp_zrtp_ctl_endpoint (zctl) : NULL, zs.allow_clear,
      &stream);
  gst_uvgrtp_zrtp_wipe (srtp_key_bytes, sizeof srtp_key_bytes);
  if (ret < 0) {
    GST_OBJECT_UNLOCK (self);
    goto no_stream;
  }
  self->stream = stream;
  self->zrtp_ctl = zctl;
  self->opened = TRUE;
  /* the first round of the streaming thread tells the stream */
  self->ccfb_serial = g_atomic_int_get (&self->hdrext.serial) - 1;
  self->caps_changed = FALSE;
  self->last_packet_us = 0;
  gst_uvgrtp_src_loss_reset (self);
  gst_uvgrtp_src_out_reset (self);
  self->warned_drops = 0;
  self->last_drop_warning = 0;
  self->draining = FALSE;
  self->resume = FALSE;
  self->was_playing = FALSE;
  g_atomic_int_set (&self->eos, 0);
  if (port == 0 || (self->given_socket &&
          port != urtp_sock_local_port (&self->sock))) {
    /* the port bound: RTCP's is the one after it */
    self->port = urtp_sock_local_port (&self->sock);
    port = -1;
  }
  GST_OBJECT_UNLOCK (self);

  if (port == -1) {
    g_object_notify (G_OBJECT (self), "port");
    g_object_notify (G_OBJECT (self), "uri");
  }
  open_rtcp (self, &cfg);
  gst_uvgrtp_zrtp_settings_clear (&zs);
  g_free (address);
  g_free (iface);
  g_free (sources);
  return TRUE;

  /* ERRORS */
open_failed:
  {
    if (ret == -ENODEV || ret == -E2BIG)
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("No such network interface in '%s' (property 'multicast-iface': "
              "interface names separated by ',', at most 8)", iface),
          (NULL));
    else if (ret == -EINVAL && sources && *sources
        && is_multicast_address (address))
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("Invalid multicast sources '%s' (property 'multicast-source': "
              "addresses of the group's family separated by ',', all "
              "prefixed '+' or none, or all '-')", sources), (NULL));
    else if (ret == -EINVAL)
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("Invalid address '%s' (properties 'address' / 'uri' / "
              "'multicast-iface')", address), ("urtp_sock_open: %s",
              g_strerror (-ret)));
    else if (ret == -EADDRINUSE && port > 1)
      /* our own RTCP sockets never share: a stream on the port below
       * may hold this one for its RTCP */
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
          ("Could not bind to %s:%d (properties 'address' and 'port'): %s",
              address, port, g_strerror (-ret)),
          ("another socket has the port without sharing it; a receiver "
              "on port %d takes this one for RTCP unless its 'rtcp-port', "
              "'rtcp-mux' or 'rtcp' says otherwise", port - 1));
    else
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
          ("Could not bind to %s:%d (properties 'address' and 'port'): %s",
              address, port, g_strerror (-ret)), (NULL));
    self->sock.fd = -1;
    self->sock.wake_fd = -1;
    goto fail;
  }
adopt_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
        ("Could not receive through the socket of property 'socket': %s",
            g_strerror (-ret)), (NULL));
    g_clear_object (&given);
    goto fail;
  }
zrtp_multicast:
  {
    /* one sender and one receiver: a group has many receivers */
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("ZRTP needs a unicast address, not the multicast group %s "
            "(properties 'zrtp', 'address')", address), (NULL));
    goto fail_socket;
  }
no_memory:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, (NULL),
        ("Could not allocate receive buffers"));
    goto fail_socket;
  }
no_stream:
  {
    if (have_srtp)
      gst_uvgrtp_srtp_post_init_error (GST_ELEMENT (self), ret,
          self->common.srtp_cipher, srtp_cfg.profile, replay_window);
    else
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, (NULL),
          ("Could not set up the receiving stream: %s", g_strerror (-ret)));
    urtp_rx_destroy (&self->rx);
    goto fail_socket;
  }
fail_socket:
  {
    gst_uvgrtp_zrtp_ctl_stop (zctl);
    gst_uvgrtp_zrtp_ctl_unref (zctl);
    close_socket (self);
    goto fail;
  }
fail:
  {
    gst_uvgrtp_zrtp_wipe (srtp_key_bytes, sizeof srtp_key_bytes);
    gst_uvgrtp_zrtp_settings_clear (&zs);
    gst_uvgrtp_src_session_clear (&session);
    g_free (address);
    g_free (iface);
    return FALSE;
  }
}

static gboolean
gst_uvgrtp_src_stop (GstBaseSrc * bsrc)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);
  urtp_recvstream_t *stream;
  GstUvgRtpZrtpCtl *zctl = NULL;

  GST_OBJECT_LOCK (self);
  if (!self->opened) {
    GST_OBJECT_UNLOCK (self);
    return TRUE;
  }
  if (self->last_stats)
    gst_structure_free (self->last_stats);
  self->last_stats = build_stats (self);
  stream = self->stream;
  self->stream = NULL;
  self->opened = FALSE;
  if (self->zrtp_ctl)
    zctl = gst_uvgrtp_zrtp_ctl_ref (self->zrtp_ctl);
  GST_OBJECT_UNLOCK (self);

  /* before the socket closes (its thread may post: not under the lock);
   * the last state stays readable */
  if (zctl) {
    gst_uvgrtp_zrtp_ctl_stop (zctl);
    gst_uvgrtp_zrtp_ctl_unref (zctl);
  }
  close_rtcp (self, stream);
  urtp_recvstream_free (stream);
  urtp_rx_destroy (&self->rx);
  close_socket (self);
  GST_OBJECT_LOCK (self);
  gst_uvgrtp_src_session_clear (&self->session);
  GST_OBJECT_UNLOCK (self);
  gst_uvgrtp_src_out_reset (self);
  return TRUE;
}

/* The wake-ups run under the object lock: stop() clears `opened` under it
 * before closing the socket, so they never write to a closed descriptor. */
static gboolean
gst_uvgrtp_src_unlock (GstBaseSrc * bsrc)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);

  g_atomic_int_set (&self->flushing, 1);
  GST_OBJECT_LOCK (self);
  if (self->opened)
    urtp_sock_wake (&self->sock);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_uvgrtp_src_unlock_stop (GstBaseSrc * bsrc)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);

  g_atomic_int_set (&self->flushing, 0);
  GST_OBJECT_LOCK (self);
  if (self->opened)
    urtp_sock_unwake (&self->sock);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

/* An EOS sent to the element drains it: what the depayloader still holds is
 * pushed out before the EOS, instead of being dropped as GstBaseSrc would. */
static gboolean
gst_uvgrtp_src_send_event (GstElement * element, GstEvent * event)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (element);

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS) {
    gboolean opened;

    GST_OBJECT_LOCK (self);
    opened = self->opened;
    if (opened) {
      g_atomic_int_set (&self->eos, 1);
      urtp_sock_wake (&self->sock);
    }
    GST_OBJECT_UNLOCK (self);
    if (opened) {
      GST_DEBUG_OBJECT (self, "EOS requested: draining");
      gst_event_unref (event);
      return TRUE;
    }
  }
  return GST_ELEMENT_CLASS (parent_class)->send_event (element, event);
}

/* --- caps and queries --------------------------------------------------- */

static GstCaps *
gst_uvgrtp_src_get_caps (GstBaseSrc * bsrc, GstCaps * filter)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);
  GstCaps *caps = NULL;

  GST_OBJECT_LOCK (self);
  if (self->opened)
    caps = gst_uvgrtp_src_session_caps (&self->session);
  GST_OBJECT_UNLOCK (self);
  if (!caps)
    caps = gst_pad_get_pad_template_caps (GST_BASE_SRC_PAD (bsrc));

  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, caps,
        GST_CAPS_INTERSECT_FIRST);

    gst_caps_unref (caps);
    caps = tmp;
  }
  return caps;
}

static gboolean
gst_uvgrtp_src_negotiate (GstBaseSrc * bsrc)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);
  GstCaps *caps = NULL;
  gboolean ok;

  GST_OBJECT_LOCK (self);
  if (self->opened)
    caps = gst_uvgrtp_src_session_caps (&self->session);
  GST_OBJECT_UNLOCK (self);
  if (!caps)
    return FALSE;
  ok = gst_uvgrtp_src_out_negotiate (self, caps);
  gst_caps_unref (caps);
  return ok;
}

/* A decoder (or the application) asks for a key frame: the streaming
 * thread sends the request with its next feedback (woken for it). */
static gboolean
gst_uvgrtp_src_event (GstBaseSrc * bsrc, GstEvent * event)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);
  gboolean all_headers = FALSE;

  if (gst_video_event_is_force_key_unit (event) &&
      gst_video_event_parse_upstream_force_key_unit (event, NULL,
          &all_headers, NULL)) {
    GST_DEBUG_OBJECT (self, "key frame asked for (%s)", all_headers ? "FIR" :
        "PLI");
    /* a FIR, once asked, is not lowered to a PLI */
    if (all_headers)
      g_atomic_int_set (&self->keyframe_asked, 2);
    else
      g_atomic_int_compare_and_exchange (&self->keyframe_asked, 0, 1);
    GST_OBJECT_LOCK (self);
    if (self->opened)
      urtp_sock_wake (&self->sock);
    GST_OBJECT_UNLOCK (self);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS (parent_class)->event (bsrc, event);
}

static gboolean
gst_uvgrtp_src_query (GstBaseSrc * bsrc, GstQuery * query)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    GstClockTime min;

    GST_OBJECT_LOCK (self);
    min = self->latency * GST_MSECOND;
    GST_OBJECT_UNLOCK (self);
    gst_query_set_latency (query, TRUE, min, GST_CLOCK_TIME_NONE);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS (parent_class)->query (bsrc, query);
}

/* --- streaming ---------------------------------------------------------- */

/* Applies a caps or encoding-name change made while running: the stream
 * takes the new format, its counters carry on. */
static gboolean
apply_caps_change (GstUvgRtpSrc * self)
{
  GstUvgRtpSrcSession session;
  GstMapInfo map = GST_MAP_INFO_INIT;
  gchar *err_msg = NULL;
  gint err_code, r;

  GST_OBJECT_LOCK (self);
  self->caps_changed = FALSE;
  if (!gst_uvgrtp_src_session_resolve (self, &session, &err_msg, &err_code)) {
    GST_OBJECT_UNLOCK (self);
    gst_uvgrtp_src_post_config_error (self, err_msg, err_code);
    return FALSE;
  }
  if (session.params)
    gst_memory_map (session.params, &map, GST_MAP_READ);
  r = urtp_recvstream_set_format (self->stream, session.codec, session.pt,
      session.clock_rate, session.donl, map.data, map.size);
  if (map.memory)
    gst_memory_unmap (session.params, &map);
  if (r < 0) {
    GST_OBJECT_UNLOCK (self);
    gst_uvgrtp_src_session_clear (&session);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, (NULL),
        ("Could not apply the new caps: %s", g_strerror (-r)));
    return FALSE;
  }
  gst_uvgrtp_src_session_clear (&self->session);
  self->session = session;
  g_atomic_int_set (&self->ccfb_changed, TRUE);   /* rtcp-fb-ack-ccfb */
  GST_OBJECT_UNLOCK (self);
  GST_INFO_OBJECT (self, "caps changed: %s, payload type %d",
      urtp_codec_name (session.codec), session.pt);

  if (!gst_base_src_negotiate (GST_BASE_SRC (self))) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("Downstream refused the caps after a caps change"));
    return FALSE;
  }
  return TRUE;
}

/* The time datagrams arrive at, on the pipeline clock (the timeline of the
 * stream's presentation times and deadlines); the monotonic clock when
 * there is none. */
static GstClockTime
clock_now (GstUvgRtpSrc * self, GstClockTime * base_time)
{
  GstClock *clock;
  GstClockTime now;

  GST_OBJECT_LOCK (self);
  clock = GST_ELEMENT_CLOCK (self) ? gst_object_ref (GST_ELEMENT_CLOCK (self))
      : NULL;
  *base_time = GST_ELEMENT_CAST (self)->base_time;
  GST_OBJECT_UNLOCK (self);
  self->have_clock = clock != NULL;
  /* lip sync compares only streams on one clock */
  self->clock_domain = (guint64) (guintptr) clock;
  if (!clock) {
    *base_time = GST_CLOCK_TIME_NONE;
    return (GstClockTime) g_get_monotonic_time () * 1000;
  }
  now = gst_clock_get_time (clock);
  gst_object_unref (clock);
  return now;
}

/* An extension read something that changes the output caps (colour
 * space): the caps it makes of the current ones are set before the buffer
 * goes. */
static void
update_caps_from_extensions (GstUvgRtpSrc * self)
{
  GstPad *pad = GST_BASE_SRC_PAD (self);
  GstCaps *cur = gst_pad_get_current_caps (pad), *caps;

  if (!cur)
    return;
  caps = gst_caps_make_writable (cur);
  if (gst_uvgrtp_hdrext_update_caps (&self->hdrext, caps)) {
    GST_INFO_OBJECT (self, "caps from the header extensions: %"
        GST_PTR_FORMAT, caps);
    gst_base_src_set_caps (GST_BASE_SRC (self), caps);
  }
  gst_caps_unref (caps);
}

/* udpsrc's GstNetAddressMeta: where the followed source sends from (a
 * GSocketAddress made again only when that changes). */
static void
add_sender_address (GstUvgRtpSrc * self, GstBuffer * buf)
{
  struct sockaddr_storage a;

  if (!g_atomic_int_get (&self->retrieve_sender_address) ||
      !urtp_recvstream_source_addr (self->stream, &a))
    return;
  if (!self->sender_addr || memcmp (&a, &self->sender_native, sizeof a)) {
    g_clear_object (&self->sender_addr);
    self->sender_addr = g_socket_address_new_from_native (&a,
        a.ss_family == AF_INET6 ? sizeof (struct sockaddr_in6) :
        sizeof (struct sockaddr_in));
    self->sender_native = a;
  }
  if (self->sender_addr)
    gst_buffer_add_net_address_meta (buf, self->sender_addr);
}

/* Wraps the access unit into a buffer, without copying it. */
static GstBuffer *
make_buffer (GstUvgRtpSrc * self, const urtp_recvstream_frame_t * f)
{
  gboolean opus = self->session.codec == URTP_CODEC_OPUS;
  GstClockTime base;
  GstBuffer *buf;

  buf = gst_buffer_new_wrapped_full (0, f->au.data, f->au.len, 0, f->au.len,
      f->au.data, urtp_depay_release);
  /* the length-prefixed forms carry the sets in codec_data */
  if ((f->flags & URTP_FRAME_PARAMS) && self->session.params
      && self->out.kind == URTP_NALFORM_BYTE_STREAM)
    gst_buffer_prepend_memory (buf, gst_memory_ref (self->session.params));
  if (!opus && !(f->flags & URTP_AU_KEYFRAME))
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  if (f->flags & URTP_AU_DAMAGED)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_CORRUPTED);
  if (f->flags & URTP_FRAME_DISCONT)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);

  /* presentation times are on the pipeline clock: to running time */
  base = self->have_clock ? gst_element_get_base_time (GST_ELEMENT (self)) :
      GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID (base)) {
    GST_BUFFER_PTS (buf) = f->pts > base ? f->pts - base : 0;
    if (opus)
      GST_BUFFER_DTS (buf) = GST_BUFFER_PTS (buf);
  }
  if (opus) {
    guint samples = urtp_opus_packet_samples (f->au.data, f->au.len);

    if (samples)
      GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (samples,
          GST_SECOND, 48000);
  }
  add_sender_address (self, buf);
  /* what the header extensions say, onto the buffer (and the caps) */
  if (f->au.ext_len && gst_uvgrtp_hdrext_has_any (&self->hdrext)
      && gst_uvgrtp_hdrext_read (&self->hdrext, &f->au, buf))
    update_caps_from_extensions (self);
  GST_LOG_OBJECT (self, "AU ts %u seq %" G_GUINT64_FORMAT "..%"
      G_GUINT64_FORMAT " %" G_GSIZE_FORMAT " bytes, %u NAL units, flags 0x%x,"
      " pts %" GST_TIME_FORMAT, f->au.rtp_ts, (guint64) f->au.first_seq,
      (guint64) f->au.last_seq, f->au.len, f->au.nal_count, f->flags,
      GST_TIME_ARGS (GST_BUFFER_PTS (buf)));
  return buf;
}

static const gchar *const source_kinds[] = { "first", "change", "restart" };

/* Posts what the stream reports: a change of source as an element message
 * `uvgrtp-source`, kernel drops as a warning. Not under any lock. */
static void
post_events (GstUvgRtpSrc * self)
{
  urtp_recvstream_event_t ev;
  urtp_recvstream_stats_t st;

  while (urtp_recvstream_next_event (self->stream, &ev)) {
    const urtp_source_event_t *s = &ev.source;

    if (ev.kind == URTP_RECVSTREAM_EV_REKEYED) {
      GST_INFO_OBJECT (self, "new ZRTP keys: the sender started over");
      continue;
    }
    GST_INFO_OBJECT (self, "source %s (%s): SSRC 0x%08x -> 0x%08x",
        source_kinds[s->kind], urtp_source_reason_name (s->reason),
        s->old_ssrc, s->new_ssrc);
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self),
            gst_structure_new ("uvgrtp-source",
                "kind", G_TYPE_STRING, source_kinds[s->kind],
                "reason", G_TYPE_STRING, urtp_source_reason_name (s->reason),
                "old-ssrc", G_TYPE_UINT, (guint) s->old_ssrc,
                "new-ssrc", G_TYPE_UINT, (guint) s->new_ssrc,
                "old-seq", G_TYPE_UINT, (guint) s->old_seq,
                "new-seq", G_TYPE_UINT, (guint) s->new_seq, NULL)));
  }

  urtp_recvstream_stats (self->stream, &st);
  gst_uvgrtp_src_loss_check_late (self, &st);
  /* while the receive memory is still growing, its drops are its cue */
  if (st.kernel_drops > self->warned_drops && (!self->rx_auto_on ||
          urtp_rx_auto_at_max (&self->rx_auto, &self->rx))) {
    gint64 now = g_get_monotonic_time ();

    if (self->last_drop_warning == 0 ||
        now - self->last_drop_warning >= DROP_WARNING_INTERVAL_US) {
      GST_ELEMENT_WARNING (self, RESOURCE, READ,
          ("The kernel dropped %" G_GUINT64_FORMAT " datagrams of the stream "
              "because the receive buffer was full: raise property "
              "'buffer-size' (now %d bytes in effect), and net.core.rmem_max "
              "or give the process CAP_NET_ADMIN so the kernel grants it",
              (guint64) (st.kernel_drops - self->warned_drops),
              self->sock.rcvbuf), (NULL));
      self->warned_drops = st.kernel_drops;
      self->last_drop_warning = now;
    }
  }
}

/* The stream needs more than it has: the kernel buffer (read by the
 * stats under the object lock) and the batch grow. */
static void
grow_receive_memory (GstUvgRtpSrc * self)
{
  gboolean grew;

  GST_OBJECT_LOCK (self);
  grew = urtp_rx_auto_update (&self->rx_auto, &self->sock, &self->rx);
  GST_OBJECT_UNLOCK (self);
  if (grew)
    GST_INFO_OBJECT (self, "receive memory grown: buffer %d bytes, %u "
        "datagrams a call", self->sock.rcvbuf, (guint) self->rx.batch);
}

/* After a pause: what queued in the socket meanwhile is stale for a live
 * source (it would come out with presentation times in the past); drop it
 * and resynchronise. */
static void
flush_after_pause (GstUvgRtpSrc * self)
{
  guint64 dropped = 0;
  gint n;

  urtp_sock_unwake (&self->sock);
  while ((n = urtp_sock_recv (&self->sock, &self->rx, 0)) > 0)
    dropped += (guint64) n;
  GST_DEBUG_OBJECT (self, "resumed: dropped %" G_GUINT64_FORMAT " datagrams "
      "received while paused", dropped);
  urtp_recvstream_resync (self->stream, dropped);
}

/* Tells the stream what congestion control feedback to send when the
 * extensions or the properties changed (streaming thread). */
static void
update_ccfb (GstUvgRtpSrc * self)
{
  gint serial = g_atomic_int_get (&self->hdrext.serial);
  guint twcc_id;
  gboolean rfc8888;
  guint64 interval;

  if (!g_atomic_int_compare_and_exchange (&self->ccfb_changed, TRUE, FALSE)
      && serial == self->ccfb_serial)
    return;
  self->ccfb_serial = serial;
  /* feedback goes over RTCP */
  twcc_id = self->rtcp_on ? gst_uvgrtp_hdrext_twcc_id (&self->hdrext) : 0;
  GST_OBJECT_LOCK (self);
  rfc8888 = self->rtcp_on && (self->rfc8888_feedback || self->session.ccfb);
  interval = self->twcc_feedback_interval;
  GST_OBJECT_UNLOCK (self);
  GST_INFO_OBJECT (self, "congestion control feedback: transport-wide %s, "
      "RFC 8888 %s", twcc_id ? "on" : "off", rfc8888 ? "on" : "off");
  if (urtp_recvstream_set_ccfb (self->stream, twcc_id, rfc8888, interval) < 0)
    GST_WARNING_OBJECT (self, "no memory for congestion control feedback");
}

static GstFlowReturn
gst_uvgrtp_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (psrc);
  GstClockTime base;
  guint64 timeout_ns;
  gint64 wait_ns;
  urtp_recvstream_frame_t f;
  urtp_recvstream_io_t io = { &self->sock, &self->rx, NULL, stream_now, self };
  guint64 latency;
  bool sr;
  gint n;

  if (self->last_packet_us == 0)
    self->last_packet_us = g_get_monotonic_time ();

  for (;;) {
    if (g_atomic_int_get (&self->flushing))
      return GST_FLOW_FLUSHING;
    if (g_atomic_int_get (&self->caps_changed) && !apply_caps_change (self))
      return GST_FLOW_ERROR;
    if (g_atomic_int_compare_and_exchange (&self->resume, TRUE, FALSE))
      flush_after_pause (self);

    urtp_recvstream_set_sync_domain (self->stream, self->clock_domain);
    update_ccfb (self);
    if ((n = g_atomic_int_and (&self->keyframe_asked, 0)) != 0)
      urtp_recvstream_request_keyframe (self->stream, n == 2);
    if (g_atomic_int_compare_and_exchange (&self->latency_changed, TRUE,
            FALSE)) {
      GST_OBJECT_LOCK (self);
      latency = self->latency;
      GST_OBJECT_UNLOCK (self);
      urtp_recvstream_set_latency (self->stream, latency * GST_MSECOND);
    }
    if (urtp_recvstream_pop (self->stream, &f)) {
      if (gst_uvgrtp_src_loss_drop_late (self, &f))
        continue;
      if (!gst_uvgrtp_src_out_convert (self, &f))
        continue;
      *outbuf = make_buffer (self, &f);
      gst_uvgrtp_src_loss_before (self, &f, *outbuf);
      *outbuf = gst_uvgrtp_src_out_finish (self, *outbuf);
      return GST_FLOW_OK;
    }
    post_events (self);
    if (urtp_recvstream_unsupported (self->stream))
      goto unsupported;
    if (self->draining)
      return GST_FLOW_EOS;

    if (g_atomic_int_get (&self->eos)) {
      /* Take what the kernel already holds, a batch at a time so that the
       * stream's queue is emptied in between, then finish. */
      if (urtp_recvstream_held (self->stream)) {
        urtp_recvstream_resume (self->stream);
        continue;
      }
      urtp_sock_unwake (&self->sock);
      n = urtp_sock_recv (&self->sock, &self->rx, 0);
      if (n > 0) {
        urtp_recvstream_push_rx (self->stream, &self->sock, &self->rx,
            (size_t) n, clock_now (self, &base));
        continue;
      }
      if (n == -EINTR)
        continue;
      GST_DEBUG_OBJECT (self, "EOS: flushing the stream");
      urtp_recvstream_flush (self->stream);
      self->draining = TRUE;
      continue;
    }

    /* One round of lib/'s loop: a wait bounded by the stream's deadline,
     * RTCP's and the timeout, then datagrams, expiries and RTCP. */
    GST_OBJECT_LOCK (self);
    timeout_ns = self->timeout;
    GST_OBJECT_UNLOCK (self);
    wait_ns = timeout_ns ? MAX (0, self->last_packet_us * 1000 +
        (gint64) timeout_ns - g_get_monotonic_time () * 1000) : -1;
    io.rtcp = self->rtcp_on ? &self->rtcpio : NULL;
    n = urtp_recvstream_run (self->stream, &io, wait_ns, &sr);
    if (n == -EINTR) {
      /* woken by unlock or EOS, which the loop checks; else stale */
      if (!g_atomic_int_get (&self->flushing)
          && !g_atomic_int_get (&self->eos))
        urtp_sock_unwake (&self->sock);
      continue;
    }
    if (n < 0)
      goto receive_failed;
    if (n > 0)
      self->last_packet_us = g_get_monotonic_time ();
    if (self->rx_auto_on && (self->rx.full ||
            self->rx.kernel_drops != self->rx_auto.drops_seen))
      grow_receive_memory (self);
    if (sr)
      post_sender_report (self);

    if (n == 0 && timeout_ns && g_get_monotonic_time () - self->last_packet_us
        >= (gint64) (timeout_ns / 1000)) {
      GST_DEBUG_OBJECT (self, "no packet for %" GST_TIME_FORMAT,
          GST_TIME_ARGS (timeout_ns));
      gst_element_post_message (GST_ELEMENT (self),
          gst_message_new_element (GST_OBJECT (self),
              gst_structure_new ("GstUDPSrcTimeout", "timeout",
                  G_TYPE_UINT64, timeout_ns, NULL)));
      self->last_packet_us = g_get_monotonic_time ();
    }
  }

  /* ERRORS */
receive_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, READ, (NULL),
        ("Receive failed: %s", g_strerror (-n)));
    return GST_FLOW_ERROR;
  }
unsupported:
  {
    GST_ELEMENT_ERROR (self, STREAM, CODEC_NOT_FOUND,
        ("The stream uses a packet structure this element does not support "
            "(%u consecutive unsupported packets, such as H.265 PACI, H.264 "
            "interleaved mode or reserved NAL unit types)",
            URTP_DEPAY_UNSUPPORTED_STREAM), (NULL));
    return GST_FLOW_ERROR;
  }
}

/* A live source drops what arrives while it is paused: remember that it
 * was playing, and flush when it plays again. */
static GstStateChangeReturn
gst_uvgrtp_src_change_state (GstElement * element, GstStateChange transition)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (element);

  switch (transition) {
    case GST_STATE_CHANGE_PAUSED_TO_PLAYING:
      if (self->was_playing)
        g_atomic_int_set (&self->resume, TRUE);
      break;
    case GST_STATE_CHANGE_PLAYING_TO_PAUSED:
      self->was_playing = TRUE;
      break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      self->was_playing = FALSE;
      g_atomic_int_set (&self->resume, FALSE);
      break;
    default:
      break;
  }
  return GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
}
