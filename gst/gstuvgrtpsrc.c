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
 * The kernel receive buffer is made large by default
 * (#GstUvgRtpSrc:buffer-size), so that the bursts of high-rate video fit;
 * datagrams the kernel still drops for a full buffer are counted in
 * #GstUvgRtpSrc:stats (kernel-drops) and reported by a warning on the bus
 * that names the property and the sysctl to raise.
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

#include "gstuvgrtpcommon.h"
#include "gstuvgrtpsrc.h"
#include "gstuvgrtpzrtpctl.h"
#include <gst/video/video.h>

#include "urtp/params.h"
#include "urtp/recvstream.h"
#include "urtp/rtx.h"
#include "urtp/zrtp_ep.h"

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_src_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_src_debug

#define DEFAULT_ADDRESS "0.0.0.0"
#define DEFAULT_PORT 5004
#define DEFAULT_MULTICAST_IFACE NULL
/* A 4K picture arrives as a burst of 1-3 MB, several times the usual
 * system default (208 KB): 32 MiB hold the bursts of a few hundred Mbit/s. */
#define DEFAULT_BUFFER_SIZE (32 << 20)
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
#define DEFAULT_SRTP_KEY NULL
#define DEFAULT_SRTP_CIPHER GST_UVGRTP_DEFAULT_SRTP_CIPHER
#define DEFAULT_SRTP_AUTH GST_UVGRTP_DEFAULT_SRTP_AUTH
/* A video frame can burst past libsrtp2's default of 128 packets, and
 * packets reordered by more than the window would be lost as replays. */
#define DEFAULT_REPLAY_WINDOW_SIZE 1024
#define DEFAULT_RTCP TRUE
#define DEFAULT_RTCP_PORT 0
#define DEFAULT_RTCP_REMOTE_HOST NULL
#define DEFAULT_RTCP_REMOTE_PORT 0
#define DEFAULT_RTCP_MUX FALSE
#define DEFAULT_CNAME NULL
#define DEFAULT_RTCP_MIN_INTERVAL (5 * GST_SECOND)
#define DEFAULT_LIP_SYNC TRUE
#define DEFAULT_DO_RETRANSMISSION TRUE
#define DEFAULT_RTX_PT -1
#define DEFAULT_REQUEST_KEYFRAME TRUE

/* Datagrams per receive call and bytes per datagram slot: a slot holds the
 * largest UDP datagram, so nothing legitimate is ever truncated, and GRO can
 * coalesce into it. */
#define RX_BATCH 64
#define RX_SLOT 65536
/* Reorder window in packets. The time a gap is waited for is `latency`;
 * the window only needs to be larger than what arrives meanwhile. */
#define REORDER_WINDOW 1024
/* Consecutive unsupported packets (and nothing usable) before the stream
 * is declared unsupported. */
#define UNSUPPORTED_LIMIT 64
/* Kernel drops are warned about at most this often. */
#define DROP_WARNING_INTERVAL_US (10 * G_USEC_PER_SEC)

enum
{
  PROP_0,
  PROP_ADDRESS,
  PROP_PORT,
  PROP_URI,
  PROP_MULTICAST_IFACE,
  PROP_BUFFER_SIZE,
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
  PROP_SRTP_KEY,
  PROP_SRTP_CIPHER,
  PROP_SRTP_AUTH,
  PROP_REPLAY_WINDOW_SIZE,
  PROP_RTCP,
  PROP_RTCP_PORT,
  PROP_RTCP_REMOTE_HOST,
  PROP_RTCP_REMOTE_PORT,
  PROP_RTCP_MUX,
  PROP_CNAME,
  PROP_RTCP_MIN_INTERVAL,
  PROP_LIP_SYNC,
  PROP_DO_RETRANSMISSION,
  PROP_RTX_PT,
  PROP_REQUEST_KEYFRAME,
  PROP_STATS,
  /* GST_UVGRTP_ZRTP_N_PROPS ids from here on (gstuvgrtpzrtpctl.h) */
  PROP_ZRTP_FIRST,
};

#define IS_ZRTP_PROP(id) ((id) >= PROP_ZRTP_FIRST && \
    (id) < PROP_ZRTP_FIRST + GST_UVGRTP_ZRTP_N_PROPS)

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-h264, stream-format = (string) byte-stream, "
        "alignment = (string) au; "
        "video/x-h265, stream-format = (string) byte-stream, "
        "alignment = (string) au; "
        "video/x-h266, stream-format = (string) byte-stream, "
        "alignment = (string) au; "
        "audio/x-opus, channel-mapping-family = (int) 0"));

#define gst_uvgrtp_src_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstUvgRtpSrc, gst_uvgrtp_src, GST_TYPE_PUSH_SRC,
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
   * property reports once the element has started.
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
   * GstUvgRtpSrc:multicast-iface:
   *
   * Network interface on which to join the multicast group, or NULL for
   * the system's choice.
   */
  g_object_class_install_property (gobject_class, PROP_MULTICAST_IFACE,
      g_param_spec_string ("multicast-iface", "Multicast interface",
          "Network interface on which to join the multicast group",
          DEFAULT_MULTICAST_IFACE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:buffer-size:
   *
   * Size of the kernel receive buffer in bytes, 0 for the system default.
   * The default, 32 MiB, holds the bursts of high-rate video (a 4K intra
   * picture is 1-3 MB at once). Set past net.core.rmem_max where the
   * process may (as root or with CAP_NET_ADMIN). If the kernel grants less
   * than asked, a warning is posted; the size in effect is in
   * #GstUvgRtpSrc:stats, and so are the datagrams the kernel dropped for a
   * full buffer (kernel-drops), which are also warned about.
   */
  g_object_class_install_property (gobject_class, PROP_BUFFER_SIZE,
      g_param_spec_int ("buffer-size", "Buffer size",
          "Size of the kernel receive buffer in bytes (0 = system default)",
          0, G_MAXINT, DEFAULT_BUFFER_SIZE,
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
   * Post a "GstUvgRtpSrcTimeout" element message, with a guint64 field
   * "timeout" holding this value, each time no packet has arrived for this
   * many nanoseconds. 0 disables.
   */
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint64 ("timeout", "Timeout",
          "Post a GstUvgRtpSrcTimeout message after this many nanoseconds "
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
   * network's jitter).
   */
  g_object_class_install_property (gobject_class, PROP_LATENCY,
      g_param_spec_uint ("latency", "Latency",
          "How long to wait for a missing packet before declaring it lost (ms)",
          0, G_MAXUINT / 1000, DEFAULT_LATENCY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

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
   * GstUvgRtpSrc:srtp-key:
   *
   * Receive SRTP protected with this master key followed by its master
   * salt, given as hex digits: the bytes srtpenc's key property and
   * srtpdec's srtp-key caps field take. The length follows
   * #GstUvgRtpSrc:srtp-cipher: 30 bytes (60 digits) for aes-128-icm, 46
   * for aes-256-icm, 28 for aes-128-gcm and 44 for aes-256-gcm. %NULL or
   * empty (the default) receives plain RTP. Read when the element starts;
   * a key of the wrong length or with characters that are not hex digits
   * is an error then.
   */
  g_object_class_install_property (gobject_class, PROP_SRTP_KEY,
      g_param_spec_string ("srtp-key", "SRTP key",
          "SRTP master key followed by master salt, as hex digits, as srtpenc's "
          "key (NULL or empty = plain RTP)", DEFAULT_SRTP_KEY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:srtp-cipher:
   *
   * SRTP cipher of the sender, named as srtpenc's rtp-cipher: aes-128-icm
   * (the default), aes-256-icm, aes-128-gcm or aes-256-gcm. null is
   * refused. Used only with #GstUvgRtpSrc:srtp-key.
   */
  g_object_class_install_property (gobject_class, PROP_SRTP_CIPHER,
      g_param_spec_enum ("srtp-cipher", "SRTP cipher",
          "SRTP cipher (as srtpenc's rtp-cipher; null is refused)",
          GST_TYPE_UVGRTP_SRTP_CIPHER, DEFAULT_SRTP_CIPHER,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /**
   * GstUvgRtpSrc:srtp-auth:
   *
   * SRTP authentication of the sender, named as srtpenc's rtp-auth:
   * hmac-sha1-80 (the default) or hmac-sha1-32 with the ICM ciphers; null
   * with the GCM ciphers, which authenticate by themselves. Any other
   * pairing is an error when the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_SRTP_AUTH,
      g_param_spec_enum ("srtp-auth", "SRTP authentication",
          "SRTP authentication (as srtpenc's rtp-auth; null with GCM only)",
          GST_TYPE_UVGRTP_SRTP_AUTH, DEFAULT_SRTP_AUTH,
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
   * GstUvgRtpSrc:rtcp:
   *
   * RTCP (RFC 3550): read the sender's reports (its clock, its counts, its
   * CNAME; a BYE hands over to the next source at once) and send receiver
   * reports (loss, jitter, the round trip for the sender) on
   * #GstUvgRtpSrc:rtcp-port. With #GstUvgRtpSrc:srtp-key or
   * #GstUvgRtpSrc:zrtp, RTCP is SRTCP (RFC 3711) both ways, keyed as the
   * media (with ZRTP, each side's key of the agreement, RFC 6189 4.5.3; no
   * reports go out before it is confirmed). Read when the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP,
      g_param_spec_boolean ("rtcp", "RTCP",
          "Read sender reports and send receiver reports on rtcp-port",
          DEFAULT_RTCP, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:rtcp-port:
   *
   * The local port RTCP is received on and sent from: 0 for
   * #GstUvgRtpSrc:port + 1, as RFC 3550 pairs them (rtpbin users: the port
   * the sender's RTCP udpsink sends to).
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_PORT,
      g_param_spec_int ("rtcp-port", "RTCP port",
          "Local RTCP port (0 = port + 1)", 0, G_MAXUINT16, DEFAULT_RTCP_PORT,
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
   * GstUvgRtpSrc:rtcp-mux:
   *
   * RTCP on the RTP port, both ways (RFC 5761, as WebRTC has it): the
   * sender's reports are read among the RTP packets (told apart by their
   * packet type), and ours go out from #GstUvgRtpSrc:port, back to where
   * the sender's reports come from (its RTP port) unless
   * #GstUvgRtpSrc:rtcp-remote-host is set. #GstUvgRtpSrc:rtcp-port is then
   * unused. The sender needs it too (uvgrtpsink's rtcp-mux). Read when the
   * element starts.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_MUX,
      g_param_spec_boolean ("rtcp-mux", "RTCP mux",
          "RTCP on the RTP port (RFC 5761) instead of rtcp-port",
          DEFAULT_RTCP_MUX, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:cname:
   *
   * The CNAME in our receiver reports. NULL: one made once per process,
   * "user<number>@host-<hex>", as rtpbin's default looks.
   */
  g_object_class_install_property (gobject_class, PROP_CNAME,
      g_param_spec_string ("cname", "CNAME",
          "CNAME in receiver reports (NULL = one per process)", DEFAULT_CNAME,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:rtcp-min-interval:
   *
   * The least time between our reports in nanoseconds, as rtpsession's
   * property: RFC 3550's 5 s by default (the first report after half of
   * it); reports are spread randomly around the interval RFC 3550 6.2
   * computes.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_MIN_INTERVAL,
      g_param_spec_uint64 ("rtcp-min-interval", "RTCP minimum interval",
          "Minimum time between receiver reports in ns", GST_MSECOND,
          G_MAXUINT64, DEFAULT_RTCP_MIN_INTERVAL,
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
   * GstUvgRtpSrc:do-retransmission:
   *
   * Ask the sender for lost packets, as rtpjitterbuffer's property does:
   * a packet missing for longer than reordering explains (5 ms) is asked
   * for with a generic NACK (RFC 4585), and again each round trip while
   * its answer can still arrive within #GstUvgRtpSrc:latency;
   * retransmissions (RFC 4588 RTX of #GstUvgRtpSrc:rtx-pt, as uvgrtpsink
   * and rtprtxsend send them) fill the gaps before the access units are
   * put together. NACKs go where our receiver reports go, once the
   * sender's first report said where that is: a sender without RTCP is
   * never asked. Needs #GstUvgRtpSrc:rtcp and a latency above 0. With it
   * the reordering window holds 4096 packets, so that a gap at the start
   * of a large picture waits for its retransmission.
   */
  g_object_class_install_property (gobject_class, PROP_DO_RETRANSMISSION,
      g_param_spec_boolean ("do-retransmission", "Do retransmission",
          "Send NACKs for lost packets and take their retransmissions "
          "(RFC 4585, 4588)", DEFAULT_DO_RETRANSMISSION,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSrc:rtx-pt:
   *
   * The payload type of retransmissions: -1 (the default) for the one
   * after the stream's payload type (97 for 96, and 97 when the payload
   * type is not known), as uvgrtpsink sends them; for rtprtxsend, the
   * value its payload-type-map maps the media's to.
   */
  g_object_class_install_property (gobject_class, PROP_RTX_PT,
      g_param_spec_int ("rtx-pt", "RTX payload type",
          "Payload type of retransmissions (-1 = the media's + 1)", -1, 127,
          DEFAULT_RTX_PT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
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
   * GstUvgRtpSrc:stats:
   *
   * Counters of the session, a GstStructure named
   * "application/x-uvgrtp-src-stats", readable at any time without
   * waiting for the streaming thread, and after the element stopped.
   *
   * Packets and access units (guint64): packets (RTP packets whose payload
   * was used), bytes (their payload), access-units (delivered), lost
   * (sequence numbers given up on), dropped (access units lost to damage,
   * keyframe wait or queue overflow), dropped-nal-units, skipped (fragments
   * of a NAL unit already given up), duplicates, late, reordered (arrived
   * after a packet with a higher sequence number), oversize (access units
   * above max-au-size).
   *
   * What was refused (guint64; each datagram is counted once, in one of
   * these or among the packets): malformed (not RTP, or a payload that
   * breaks its format), foreign (wrong payload type, or an SSRC that is
   * not followed), unsupported (such as H.265 PACI), stray (a sequence
   * number jump the next packet did not confirm), held (packets of a new
   * source kept while it waits to take over), held-dropped (beyond what is
   * kept), srtp-auth-failures (SRTP tag did not verify: tampered,
   * truncated, or another key), srtp-replays (already received, or older
   * than #GstUvgRtpSrc:replay-window-size), srtp-errors (other SRTP
   * rejections), zrtp-dropped (datagrams in clear dropped before the ZRTP
   * keys were agreed), and, not offered to the stream at all, truncated
   * (datagrams larger than a receive slot), kernel-drops (datagrams the
   * kernel dropped because the receive buffer was full), flushed
   * (datagrams that arrived while paused).
   *
   * RTCP (#GstUvgRtpSrc:rtcp): rtcp-received, rtcp-bad (compound packets
   * that failed RFC 3550's checks, or SRTCP's), rtcp-foreign (plain
   * compounds, in rtcp-received, from another host than the one the
   * followed source's media comes from: nothing of them is taken, and our
   * reports never go there), sr-rejected (sender reports of the followed
   * source whose NTP/RTP mapping disagreed with the one in use by more
   * than 20 ms: ignored), sr-remapped (taken after all: the next one
   * agreed with it, the sender's clock was stepped), srtcp-auth-failures,
   * srtcp-replays and srtcp-errors (SRTCP that did not verify, came again,
   * or was refused otherwise; each also in rtcp-bad), rtcp-sent (our
   * receiver reports),
   * sr-received and bye-received (of the followed source), sender-cname
   * (gchararray, "" until known), its last sender report: sr-ntp-time
   * (guint64, NTP format), sr-rtp-time, sr-packets, sr-octets (guint),
   * last-sr-time (guint64, when it arrived, on the pipeline clock); what
   * our next report says of it: fraction-lost (guint, 1/256), packets-lost
   * (gint, cumulative), jitter (guint, timestamp units), ext-max-seq. Each
   * sender report of the followed source is also posted as an element
   * message "uvgrtp-rtcp" with type "sr", ssrc, cname, ntp-time, rtp-time,
   * packets and octets. Lip sync (#GstUvgRtpSrc:lip-sync): synced
   * (gboolean: a sender report and the CNAME are in), sync-offset (gint64,
   * ns: presentation time on the pipeline clock minus the sender's NTP
   * time of the same moment, before the delay; the two clocks have
   * different origins, so only its differences between streams mean
   * something), sync-delay (gint64, ns: added to be in step with the
   * sender's other streams).
   *
   * Loss recovery (#GstUvgRtpSrc:do-retransmission, guint64): missing
   * (packets found missing; each counted once in recovered (by a
   * retransmission), recovered-late (after it was given up),
   * reordered-missing (arrived late by itself before being asked for),
   * lost-unrecovered, or
   * still pending), nack-requests (packets asked for, repeats included),
   * nacks-sent (NACK packets), rtx-received (retransmissions taken, also
   * counted among the packets), rtx-dropped (retransmissions of packets
   * not missing, or malformed), rtx-ssrc (guint), round-trip-time
   * (guint64, ns: from NACK to retransmission, smoothed), fast-retries
   * (packets asked for again at once: a gap in the retransmissions'
   * own sequence numbers showed their answer lost); pli-sent,
   * fir-sent, keyframe-requests (force-key-unit events taken),
   * nack-unanswered (sources NACKs stopped for: not one retransmission
   * came 3 s after the first request).
   *
   * Sources: ssrc (guint, the source followed), have-source (gboolean),
   * source-changes (another SSRC took over), source-restarts (the source
   * restarted its numbering), timing-resets (the timestamp mapping
   * re-anchored on a jump), skew (gint64, ns: the clock drift estimate).
   *
   * ZRTP (0 without #GstUvgRtpSrc:zrtp): zrtp-sent, zrtp-received (ZRTP
   * packets, retransmissions included), zrtp-retransmits, zrtp-bad
   * (malformed), zrtp-unexpected (valid but not for the state),
   * zrtp-auth-failures (hash chain or MAC wrong), zrtp-restarts (exchanges
   * started over), zrtp-foreign (ZRTP ignored: not from the peer the
   * element is bound to, see docs/zrtp.md), zrtp-received-clear (datagrams passed in clear
   * with #GstUvgRtpSrc:zrtp-allow-clear).
   *
   * Socket: syscalls (receive system calls), buffer-size (gint, receive
   * buffer in effect, bytes), recv-mode (string: gro, mmsg or plain), and,
   * in builds with SRTP, srtp-backend (the libsrtp2 in use and its crypto
   * library).
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters of the session (application/x-uvgrtp-src-stats)",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /* zrtp, zrtp-allow-clear, ..., and the zrtp-set-sas-verified signal */
  gst_uvgrtp_zrtp_install (gobject_class, PROP_ZRTP_FIRST,
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
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_ZRTP_STATE, 0);
}

static void
gst_uvgrtp_src_init (GstUvgRtpSrc * self)
{
  self->address = g_strdup (DEFAULT_ADDRESS);
  self->port = DEFAULT_PORT;
  self->multicast_iface = g_strdup (DEFAULT_MULTICAST_IFACE);
  self->buffer_size = DEFAULT_BUFFER_SIZE;
  self->reuse = DEFAULT_REUSE;
  self->caps = NULL;
  self->timeout = DEFAULT_TIMEOUT;
  self->encoding_name = g_strdup (DEFAULT_ENCODING_NAME);
  self->recv_mode = DEFAULT_RECV_MODE;
  self->latency = DEFAULT_LATENCY;
  self->ssrc = DEFAULT_SSRC;
  self->source_timeout = DEFAULT_SOURCE_TIMEOUT;
  self->wait_for_keyframe = DEFAULT_WAIT_FOR_KEYFRAME;
  self->loss_policy = DEFAULT_LOSS_POLICY;
  self->max_au_size = DEFAULT_MAX_AU_SIZE;
  self->srtp_key = g_strdup (DEFAULT_SRTP_KEY);
  self->srtp_cipher = DEFAULT_SRTP_CIPHER;
  self->srtp_auth = DEFAULT_SRTP_AUTH;
  self->replay_window_size = DEFAULT_REPLAY_WINDOW_SIZE;
  self->rtcp = DEFAULT_RTCP;
  self->rtcp_port = DEFAULT_RTCP_PORT;
  self->rtcp_remote_host = g_strdup (DEFAULT_RTCP_REMOTE_HOST);
  self->rtcp_remote_port = DEFAULT_RTCP_REMOTE_PORT;
  self->rtcp_mux = DEFAULT_RTCP_MUX;
  self->cname = g_strdup (DEFAULT_CNAME);
  self->rtcp_min_interval = DEFAULT_RTCP_MIN_INTERVAL;
  self->lip_sync = DEFAULT_LIP_SYNC;
  self->do_retransmission = DEFAULT_DO_RETRANSMISSION;
  self->rtx_pt = DEFAULT_RTX_PT;
  self->request_keyframe = DEFAULT_REQUEST_KEYFRAME;
  gst_uvgrtp_zrtp_settings_init (&self->zrtp);
  self->sock.fd = -1;
  self->sock.wake_fd = -1;

  gst_base_src_set_live (GST_BASE_SRC (self), TRUE);
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_TIME);
  gst_base_src_set_do_timestamp (GST_BASE_SRC (self), FALSE);
}

static void
session_clear (GstUvgRtpSrcSession * s)
{
  if (s->params)
    gst_memory_unref (s->params);
  memset (s, 0, sizeof (*s));
}

static void
gst_uvgrtp_src_finalize (GObject * object)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (object);

  g_free (self->address);
  g_free (self->multicast_iface);
  g_free (self->encoding_name);
  gst_uvgrtp_free_secret (self->srtp_key);
  g_free (self->rtcp_remote_host);
  g_free (self->cname);
  gst_caps_replace (&self->caps, NULL);
  session_clear (&self->session);
  if (self->last_stats)
    gst_structure_free (self->last_stats);
  gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
  gst_uvgrtp_zrtp_ctl_unref (self->zrtp_ctl);
  gst_uvgrtp_zrtp_settings_clear (&self->zrtp);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* --- configuration ------------------------------------------------------ */

static gboolean
codec_from_name (const gchar * name, urtp_codec_t * codec)
{
  /* rtpopuspay's name for Opus before RFC 7587 */
  if (g_ascii_strcasecmp (name, "X-GST-OPUS-DRAFT-SPITTKA-00") == 0) {
    *codec = URTP_CODEC_OPUS;
    return TRUE;
  }
  return urtp_codec_from_name (name, codec) == 0;
}

/* Kinds of configuration error, for the bus message. */
enum
{
  ERR_SETTINGS,
  ERR_STREAM,
};

/* An SDP fmtp parameter as an integer; caps made from SDP hold strings. */
static gboolean
structure_get_int_param (const GstStructure * s, const gchar * field,
    gint * out)
{
  const GValue *v = gst_structure_get_value (s, field);
  const gchar *str;
  gchar *end;
  gint64 n;

  if (!v)
    return FALSE;
  if (G_VALUE_HOLDS_INT (v)) {
    *out = g_value_get_int (v);
    return TRUE;
  }
  if (G_VALUE_HOLDS_UINT (v)) {
    *out = (gint) MIN (g_value_get_uint (v), (guint) G_MAXINT);
    return TRUE;
  }
  if (!G_VALUE_HOLDS_STRING (v) || !(str = g_value_get_string (v)))
    return FALSE;
  n = g_ascii_strtoll (str, &end, 10);
  if (end == str || n < G_MININT || n > G_MAXINT)
    return FALSE;
  *out = (gint) n;
  return TRUE;
}

/* Appends the parameter sets of the sprop field (comma-separated base64,
 * as in SDP) to out as Annex-B. */
static gboolean
append_sprop (GByteArray * out, const GstStructure * s, const gchar * field,
    gchar ** err_msg)
{
  const gchar *list = gst_structure_get_string (s, field);
  gint n;
  guint at = out->len;

  if (!list)
    return TRUE;
  n = urtp_sprop_decode (list, strlen (list), NULL, 0);
  if (n < 0) {
    *err_msg = g_strdup_printf ("Invalid %s in the 'caps' property: not a "
        "comma-separated list of base64 parameter sets", field);
    return FALSE;
  }
  g_byte_array_set_size (out, at + (guint) n);
  urtp_sprop_decode (list, strlen (list), out->data + at, (gsize) n);
  return TRUE;
}

/* Resolves the codec, payload type and parameter sets from the properties.
 * Called with the object lock. On failure returns FALSE with a message for
 * the bus in *err_msg (and the kind of error in *err_code). */
static gboolean
resolve_session (GstUvgRtpSrc * self, GstUvgRtpSrcSession * out,
    gchar ** err_msg, gint * err_code)
{
  const GstStructure *s = NULL;
  const gchar *name = NULL;
  GByteArray *params;
  gboolean ok = TRUE;
  gint v;

  memset (out, 0, sizeof (*out));
  out->pt = -1;
  *err_code = ERR_SETTINGS;

  if (self->caps && gst_caps_get_size (self->caps) > 0)
    s = gst_caps_get_structure (self->caps, 0);

  if (self->encoding_name && *self->encoding_name)
    name = self->encoding_name;
  else if (s)
    name = gst_structure_get_string (s, "encoding-name");

  if (!name) {
    *err_msg = g_strdup ("No codec given: set the 'encoding-name' property "
        "(H264, H265, H266 or OPUS) or the 'caps' property with an "
        "encoding-name field");
    return FALSE;
  }
  if (!codec_from_name (name, &out->codec)) {
    *err_msg = g_strdup_printf ("Unsupported encoding-name '%s' (from the "
        "'%s' property): supported are H264, H265, H266 and OPUS", name,
        name == self->encoding_name ? "encoding-name" : "caps");
    return FALSE;
  }

  out->clock_rate = urtp_codec_clock_rate (out->codec);
  if (!s)
    return TRUE;

  if (structure_get_int_param (s, "payload", &v)) {
    if (v < 0 || v > 127) {
      *err_msg = g_strdup_printf ("Invalid payload type %d in the 'caps' "
          "property (0..127)", v);
      return FALSE;
    }
    out->pt = v;
  }
  if (structure_get_int_param (s, "clock-rate", &v) && v > 0)
    out->clock_rate = (guint) v;

  if (structure_get_int_param (s, "sprop-max-don-diff", &v) && v > 0) {
    if (out->codec != URTP_CODEC_H265) {
      *err_code = ERR_STREAM;
      *err_msg = g_strdup_printf ("The caps give sprop-max-don-diff=%d for "
          "%s: decoding order numbers are only supported for H.265", v,
          urtp_codec_name (out->codec));
      return FALSE;
    }
    out->donl = TRUE;
  }
  if (out->codec == URTP_CODEC_H264 &&
      structure_get_int_param (s, "packetization-mode", &v) && v == 2) {
    *err_code = ERR_STREAM;
    *err_msg = g_strdup ("The caps give packetization-mode=2: H.264 "
        "interleaved mode is not supported");
    return FALSE;
  }

  params = g_byte_array_new ();
  switch (out->codec) {
    case URTP_CODEC_H264:
      ok = append_sprop (params, s, "sprop-parameter-sets", err_msg);
      break;
    case URTP_CODEC_H266:
      ok = append_sprop (params, s, "sprop-dci", err_msg);
      /* fall through */
    case URTP_CODEC_H265:
      ok = ok && append_sprop (params, s, "sprop-vps", err_msg) &&
          append_sprop (params, s, "sprop-sps", err_msg) &&
          append_sprop (params, s, "sprop-pps", err_msg);
      break;
    case URTP_CODEC_OPUS:{
      const gchar *stereo = gst_structure_get_string (s, "sprop-stereo");

      if (stereo)
        out->channels = g_strcmp0 (stereo, "1") == 0 ? 2 : 1;
      if (structure_get_int_param (s, "sprop-maxcapturerate", &v) && v > 0)
        out->rate = v;
      break;
    }
  }
  if (!ok) {
    g_byte_array_free (params, TRUE);
    return FALSE;
  }
  if (params->len > 0) {
    gsize len = params->len;
    guint8 *data = g_byte_array_free (params, FALSE);

    out->params = gst_memory_new_wrapped (GST_MEMORY_FLAG_READONLY, data,
        len, 0, len, data, g_free);
  } else {
    g_byte_array_free (params, TRUE);
  }
  return TRUE;
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

static void
post_config_error (GstUvgRtpSrc * self, gchar * msg, gint code)
{
  if (code == ERR_STREAM)
    GST_ELEMENT_ERROR (self, STREAM, CODEC_NOT_FOUND, ("%s", msg), (NULL));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", msg), (NULL));
  g_free (msg);
}

static GstCaps *
session_caps (const GstUvgRtpSrcSession * s)
{
  const gchar *media;
  GstCaps *caps;

  switch (s->codec) {
    case URTP_CODEC_OPUS:
      caps = gst_caps_new_simple ("audio/x-opus", "channel-mapping-family",
          G_TYPE_INT, 0, "rate", G_TYPE_INT, s->rate > 0 ? s->rate : 48000,
          NULL);
      if (s->channels > 0)
        gst_caps_set_simple (caps, "channels", G_TYPE_INT, s->channels, NULL);
      return caps;
    case URTP_CODEC_H264:
      media = "video/x-h264";
      break;
    case URTP_CODEC_H265:
      media = "video/x-h265";
      break;
    case URTP_CODEC_H266:
    default:
      media = "video/x-h266";
      break;
  }
  return gst_caps_new_simple (media, "stream-format", G_TYPE_STRING,
      "byte-stream", "alignment", G_TYPE_STRING, "au", NULL);
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

static void
gst_uvgrtp_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (object);

  GST_OBJECT_LOCK (self);
  if (IS_ZRTP_PROP (prop_id)) {
    gst_uvgrtp_zrtp_settings_set_property (GST_OBJECT (self), &self->zrtp,
        prop_id - PROP_ZRTP_FIRST, value);
    GST_OBJECT_UNLOCK (self);
    return;
  }
  switch (prop_id) {
    case PROP_ADDRESS:
      g_free (self->address);
      self->address = g_value_dup_string (value);
      if (!self->address)
        self->address = g_strdup (DEFAULT_ADDRESS);
      break;
    case PROP_PORT:
      self->port = g_value_get_int (value);
      break;
    case PROP_URI:
      if (!set_uri (self, g_value_get_string (value)))
        GST_WARNING_OBJECT (self, "Invalid URI '%s': expected udp://host:port",
            GST_STR_NULL (g_value_get_string (value)));
      break;
    case PROP_MULTICAST_IFACE:
      g_free (self->multicast_iface);
      self->multicast_iface = g_value_dup_string (value);
      break;
    case PROP_BUFFER_SIZE:
      self->buffer_size = g_value_get_int (value);
      break;
    case PROP_REUSE:
      self->reuse = g_value_get_boolean (value);
      break;
    case PROP_CAPS:{
      const GstCaps *caps = gst_value_get_caps (value);
      GstCaps *copy = caps ? gst_caps_copy (caps) : NULL;

      gst_caps_replace (&self->caps, copy);
      if (copy)
        gst_caps_unref (copy);
      if (self->opened)
        g_atomic_int_set (&self->caps_changed, TRUE);
      break;
    }
    case PROP_TIMEOUT:
      self->timeout = g_value_get_uint64 (value);
      break;
    case PROP_ENCODING_NAME:
      g_free (self->encoding_name);
      self->encoding_name = g_value_dup_string (value);
      if (self->opened)
        g_atomic_int_set (&self->caps_changed, TRUE);
      break;
    case PROP_RECV_MODE:
      self->recv_mode = g_value_get_enum (value);
      break;
    case PROP_LATENCY:
      self->latency = g_value_get_uint (value);
      break;
    case PROP_SSRC:
      self->ssrc = g_value_get_int64 (value);
      break;
    case PROP_SOURCE_TIMEOUT:
      self->source_timeout = g_value_get_uint (value);
      break;
    case PROP_WAIT_FOR_KEYFRAME:
      self->wait_for_keyframe = g_value_get_boolean (value);
      break;
    case PROP_LOSS_POLICY:
      self->loss_policy = g_value_get_enum (value);
      break;
    case PROP_MAX_AU_SIZE:
      self->max_au_size = g_value_get_uint (value);
      break;
    case PROP_SRTP_KEY:
      gst_uvgrtp_free_secret (self->srtp_key);
      self->srtp_key = g_value_dup_string (value);
      break;
    case PROP_SRTP_CIPHER:
      self->srtp_cipher = g_value_get_enum (value);
      break;
    case PROP_SRTP_AUTH:
      self->srtp_auth = g_value_get_enum (value);
      break;
    case PROP_REPLAY_WINDOW_SIZE:
      self->replay_window_size = g_value_get_uint (value);
      break;
    case PROP_RTCP:
      self->rtcp = g_value_get_boolean (value);
      break;
    case PROP_RTCP_PORT:
      self->rtcp_port = g_value_get_int (value);
      break;
    case PROP_RTCP_REMOTE_HOST:
      g_free (self->rtcp_remote_host);
      self->rtcp_remote_host = g_value_dup_string (value);
      break;
    case PROP_RTCP_REMOTE_PORT:
      self->rtcp_remote_port = g_value_get_int (value);
      break;
    case PROP_RTCP_MUX:
      self->rtcp_mux = g_value_get_boolean (value);
      break;
    case PROP_CNAME:
      g_free (self->cname);
      self->cname = g_value_dup_string (value);
      break;
    case PROP_RTCP_MIN_INTERVAL:
      self->rtcp_min_interval = g_value_get_uint64 (value);
      break;
    case PROP_LIP_SYNC:
      self->lip_sync = g_value_get_boolean (value);
      break;
    case PROP_DO_RETRANSMISSION:
      self->do_retransmission = g_value_get_boolean (value);
      break;
    case PROP_RTX_PT:
      self->rtx_pt = g_value_get_int (value);
      break;
    case PROP_REQUEST_KEYFRAME:
      self->request_keyframe = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_uvgrtp_src_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (object);

  GST_OBJECT_LOCK (self);
  if (IS_ZRTP_PROP (prop_id)) {
    gst_uvgrtp_zrtp_settings_get_property (&self->zrtp, self->zrtp_ctl,
        prop_id - PROP_ZRTP_FIRST, value);
    GST_OBJECT_UNLOCK (self);
    return;
  }
  switch (prop_id) {
    case PROP_ADDRESS:
      g_value_set_string (value, self->address);
      break;
    case PROP_PORT:
      g_value_set_int (value, self->port);
      break;
    case PROP_URI:
      g_value_take_string (value, get_uri (self));
      break;
    case PROP_MULTICAST_IFACE:
      g_value_set_string (value, self->multicast_iface);
      break;
    case PROP_BUFFER_SIZE:
      g_value_set_int (value, self->buffer_size);
      break;
    case PROP_REUSE:
      g_value_set_boolean (value, self->reuse);
      break;
    case PROP_CAPS:
      gst_value_set_caps (value, self->caps);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint64 (value, self->timeout);
      break;
    case PROP_ENCODING_NAME:
      g_value_set_string (value, self->encoding_name);
      break;
    case PROP_RECV_MODE:
      g_value_set_enum (value, self->recv_mode);
      break;
    case PROP_LATENCY:
      g_value_set_uint (value, self->latency);
      break;
    case PROP_SSRC:
      g_value_set_int64 (value, self->ssrc);
      break;
    case PROP_SOURCE_TIMEOUT:
      g_value_set_uint (value, self->source_timeout);
      break;
    case PROP_WAIT_FOR_KEYFRAME:
      g_value_set_boolean (value, self->wait_for_keyframe);
      break;
    case PROP_LOSS_POLICY:
      g_value_set_enum (value, self->loss_policy);
      break;
    case PROP_MAX_AU_SIZE:
      g_value_set_uint (value, self->max_au_size);
      break;
    case PROP_SRTP_KEY:
      g_value_set_string (value, self->srtp_key);
      break;
    case PROP_SRTP_CIPHER:
      g_value_set_enum (value, self->srtp_cipher);
      break;
    case PROP_SRTP_AUTH:
      g_value_set_enum (value, self->srtp_auth);
      break;
    case PROP_REPLAY_WINDOW_SIZE:
      g_value_set_uint (value, self->replay_window_size);
      break;
    case PROP_RTCP:
      g_value_set_boolean (value, self->rtcp);
      break;
    case PROP_RTCP_PORT:
      g_value_set_int (value, self->rtcp_port);
      break;
    case PROP_RTCP_REMOTE_HOST:
      g_value_set_string (value, self->rtcp_remote_host);
      break;
    case PROP_RTCP_REMOTE_PORT:
      g_value_set_int (value, self->rtcp_remote_port);
      break;
    case PROP_RTCP_MUX:
      g_value_set_boolean (value, self->rtcp_mux);
      break;
    case PROP_CNAME:
      g_value_set_string (value, self->cname);
      break;
    case PROP_RTCP_MIN_INTERVAL:
      g_value_set_uint64 (value, self->rtcp_min_interval);
      break;
    case PROP_LIP_SYNC:
      g_value_set_boolean (value, self->lip_sync);
      break;
    case PROP_DO_RETRANSMISSION:
      g_value_set_boolean (value, self->do_retransmission);
      break;
    case PROP_RTX_PT:
      g_value_set_int (value, self->rtx_pt);
      break;
    case PROP_REQUEST_KEYFRAME:
      g_value_set_boolean (value, self->request_keyframe);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, build_stats (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* --- statistics --------------------------------------------------------- */

/* Called with the object lock; waits for nothing the streaming thread
 * holds for long (the stream's snapshot is a copy under a lock of its own). */
static GstStructure *
build_stats (GstUvgRtpSrc * self)
{
  urtp_recvstream_stats_t st;
  gint rcvbuf = 0;
  const gchar *mode = "none";
  GstUvgRtpZrtpCounters zc;
  GstStructure *s;

  memset (&zc, 0, sizeof (zc));
  if (!self->opened) {
    if (self->last_stats)
      return gst_structure_copy (self->last_stats);
    memset (&st, 0, sizeof (st));
  } else {
    urtp_recvstream_stats (self->stream, &st);
    rcvbuf = self->sock.rcvbuf;
    mode = urtp_io_mode_name (self->sock.rx_mode);
    if (self->zrtp_ctl)
      gst_uvgrtp_zrtp_ctl_get_counters (self->zrtp_ctl, &zc);
  }

  s = gst_structure_new ("application/x-uvgrtp-src-stats",
      "packets", G_TYPE_UINT64, (guint64) st.depay.packets,
      "bytes", G_TYPE_UINT64, (guint64) st.depay.bytes,
      "access-units", G_TYPE_UINT64, (guint64) st.frames,
      "lost", G_TYPE_UINT64, (guint64) st.depay.seq.lost,
      "dropped", G_TYPE_UINT64, (guint64) st.depay.dropped_aus,
      "dropped-nal-units", G_TYPE_UINT64, (guint64) st.depay.dropped_nals,
      "skipped", G_TYPE_UINT64, (guint64) st.depay.skipped,
      "malformed", G_TYPE_UINT64, (guint64) (st.malformed_rtp +
          st.depay.malformed),
      "foreign", G_TYPE_UINT64, (guint64) (st.wrong_pt + st.source.foreign),
      "unsupported", G_TYPE_UINT64, (guint64) st.depay.unsupported,
      "duplicates", G_TYPE_UINT64, (guint64) st.depay.seq.duplicates,
      "late", G_TYPE_UINT64, (guint64) st.depay.seq.late,
      "reordered", G_TYPE_UINT64, (guint64) st.depay.seq.reordered,
      "oversize", G_TYPE_UINT64, (guint64) st.depay.oversize,
      "truncated", G_TYPE_UINT64, (guint64) st.truncated,
      "kernel-drops", G_TYPE_UINT64, (guint64) st.kernel_drops,
      "flushed", G_TYPE_UINT64, (guint64) st.flushed,
      "syscalls", G_TYPE_UINT64, (guint64) st.syscalls,
      "ssrc", G_TYPE_UINT, (guint) st.ssrc,
      "have-source", G_TYPE_BOOLEAN, (gboolean) st.have_source,
      "source-changes", G_TYPE_UINT64, (guint64) st.source.changes,
      "source-restarts", G_TYPE_UINT64, (guint64) st.source.restarts,
      "stray", G_TYPE_UINT64, (guint64) st.source.stray,
      "held", G_TYPE_UINT64, (guint64) st.source.pending,
      "held-dropped", G_TYPE_UINT64, (guint64) st.source.held_dropped,
      "timing-resets", G_TYPE_UINT64, (guint64) st.timing_resets,
      "skew", G_TYPE_INT64, (gint64) st.skew,
      "srtp-auth-failures", G_TYPE_UINT64, (guint64) st.srtp.auth_fail,
      "srtp-replays", G_TYPE_UINT64, (guint64) st.srtp.replay,
      "srtp-errors", G_TYPE_UINT64, (guint64) st.srtp.other,
      "zrtp-sent", G_TYPE_UINT64, zc.sent,
      "zrtp-received", G_TYPE_UINT64, zc.received,
      "zrtp-retransmits", G_TYPE_UINT64, zc.retransmits,
      "zrtp-bad", G_TYPE_UINT64, zc.bad,
      "zrtp-unexpected", G_TYPE_UINT64, zc.unexpected,
      "zrtp-auth-failures", G_TYPE_UINT64, zc.auth_fail,
      "zrtp-restarts", G_TYPE_UINT64, zc.restarts,
      "zrtp-foreign", G_TYPE_UINT64, zc.foreign,
      "zrtp-dropped", G_TYPE_UINT64, (guint64) st.zrtp_dropped,
      "zrtp-received-clear", G_TYPE_UINT64, (guint64) st.zrtp_clear,
      "buffer-size", G_TYPE_INT, rcvbuf, "recv-mode", G_TYPE_STRING, mode, NULL);
  /* RTCP: what came in, what our reports say, the sender's last report */
  gst_structure_set (s,
      "rtcp-received", G_TYPE_UINT64, (guint64) st.rtcp,
      "rtcp-bad", G_TYPE_UINT64, (guint64) st.rtcp_bad,
      "rtcp-foreign", G_TYPE_UINT64, (guint64) st.rtcp_foreign,
      "sr-rejected", G_TYPE_UINT64, (guint64) st.sr_rejected,
      "sr-remapped", G_TYPE_UINT64, (guint64) st.sr_remapped,
      "srtcp-auth-failures", G_TYPE_UINT64, (guint64) st.srtcp.auth_fail,
      "srtcp-replays", G_TYPE_UINT64, (guint64) st.srtcp.replay,
      "srtcp-errors", G_TYPE_UINT64, (guint64) st.srtcp.other,
      "rtcp-sent", G_TYPE_UINT64, (guint64) st.rtcp_sent,
      "sr-received", G_TYPE_UINT64, (guint64) st.rtcp_sr,
      "bye-received", G_TYPE_UINT64, (guint64) st.rtcp_bye,
      "sender-cname", G_TYPE_STRING, st.cname,
      "sr-ntp-time", G_TYPE_UINT64, (guint64) st.sr_ntp,
      "sr-rtp-time", G_TYPE_UINT, (guint) st.sr_rtp_ts,
      "sr-packets", G_TYPE_UINT, (guint) st.sr_packets,
      "sr-octets", G_TYPE_UINT, (guint) st.sr_octets,
      "last-sr-time", G_TYPE_UINT64, (guint64) st.sr_arrival,
      "fraction-lost", G_TYPE_UINT, (guint) st.reception.fraction,
      "packets-lost", G_TYPE_INT, (gint) st.reception.lost,
      "jitter", G_TYPE_UINT, (guint) st.reception.jitter,
      "ext-max-seq", G_TYPE_UINT, (guint) st.reception.ext_max_seq,
      "synced", G_TYPE_BOOLEAN, (gboolean) st.synced,
      "sync-offset", G_TYPE_INT64, (gint64) st.sync_offset,
      "sync-delay", G_TYPE_INT64, (gint64) st.sync_delay, NULL);
  /* loss recovery */
  gst_structure_set (s,
      "missing", G_TYPE_UINT64, (guint64) st.nack.missing,
      "recovered", G_TYPE_UINT64, (guint64) st.nack.recovered,
      "recovered-late", G_TYPE_UINT64, (guint64) st.nack.late,
      "reordered-missing", G_TYPE_UINT64, (guint64) st.nack.reordered,
      "lost-unrecovered", G_TYPE_UINT64, (guint64) st.nack.lost,
      "nack-requests", G_TYPE_UINT64, (guint64) st.nack.requests,
      "nacks-sent", G_TYPE_UINT64, (guint64) st.nacks_sent,
      "rtx-received", G_TYPE_UINT64, (guint64) st.rtx,
      "rtx-dropped", G_TYPE_UINT64, (guint64) st.rtx_dropped,
      "rtx-ssrc", G_TYPE_UINT, (guint) st.rtx_ssrc,
      "round-trip-time", G_TYPE_UINT64, (guint64) st.nack.rtt,
      "fast-retries", G_TYPE_UINT64, (guint64) st.nack.fast_retries,
      "pli-sent", G_TYPE_UINT64, (guint64) st.pli_sent,
      "fir-sent", G_TYPE_UINT64, (guint64) st.fir_sent,
      "keyframe-requests", G_TYPE_UINT64, (guint64) st.keyframe_requests,
      "nack-unanswered", G_TYPE_UINT64, (guint64) st.nack_unanswered,
      NULL);
#ifdef URTP_HAVE_SRTP
  gst_structure_set (s, "srtp-backend", G_TYPE_STRING, urtp_srtp_backend (),
      NULL);
#endif
  return s;
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
  cfg.cname = self->cname;
  cfg.lip_sync = self->lip_sync && self->rtcp;
  cfg.rtcp_mux = self->rtcp && self->rtcp_mux;
  /* feedback goes over RTCP */
  cfg.nack = cfg.rtx = self->do_retransmission && self->rtcp;
  cfg.rtx_pt = self->rtx_pt >= 0 ? (uint8_t) self->rtx_pt :
      urtp_rtx_default_pt (self->session.pt >= 0 ? (uint8_t) self->session.pt
      : 96);
  cfg.request_keyframe = self->request_keyframe && self->rtcp;
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
open_rtcp (GstUvgRtpSrc * self, const gchar * address)
{
  urtp_rtcpio_config_t rc;
  gchar *remote;
  gint r, port;
  gboolean mux;

  self->rtcp_on = FALSE;
  GST_OBJECT_LOCK (self);
  if (!self->rtcp) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  memset (&rc, 0, sizeof rc);
  mux = self->rtcp_mux;
  port = mux ? urtp_sock_local_port (&self->sock) : self->rtcp_port ?
      self->rtcp_port : self->port ? self->port + 1 : 0;
  remote = g_strdup (self->rtcp_remote_host);
  rc.bind_addr = address;
  rc.bind_port = (guint16) MIN (port, G_MAXUINT16);
  rc.remote_addr = remote && *remote ? remote : NULL;
  rc.remote_port = (guint16) (self->rtcp_remote_port ?
      self->rtcp_remote_port : port);
  rc.reuse = self->reuse;
  rc.min_interval = self->rtcp_min_interval;
  rc.mux = mux ? &self->sock : NULL;
  GST_OBJECT_UNLOCK (self);

  r = urtp_rtcpio_open (&self->rtcpio, &rc, mono_ns ());
  if (r < 0) {
    GST_ELEMENT_WARNING (self, RESOURCE, OPEN_READ,
        ("No RTCP: could not bind to %s:%d: %s (set 'rtcp-port', or "
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

/* RTCP's turn in the streaming loop: what arrived, and our report when
 * due; a sender report of the followed source is posted. */
static void
service_rtcp (GstUvgRtpSrc * self, GstClockTime now)
{
  guint64 mono = mono_ns ();
  urtp_recvstream_stats_t st;

  if (!self->sock.watch_ready && mono < urtp_rtcpio_deadline (&self->rtcpio)
      && !urtp_recvstream_rtcp_pending (self->stream)
      && urtp_recvstream_feedback_deadline (self->stream) > now)
    return;
  if (urtp_recvstream_rtcp_service (self->stream, &self->rtcpio, now,
          mono) <= 0)
    return;
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

static gboolean
gst_uvgrtp_src_start (GstBaseSrc * bsrc)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (bsrc);
  urtp_sock_config_t cfg;
  GstUvgRtpSrcSession session;
  urtp_srtp_config_t srtp_cfg;
  guint8 srtp_key_bytes[URTP_SRTP_MAX_KEY_LEN];
  gboolean have_srtp = FALSE;
  gchar *err_msg = NULL, *address, *iface, *srtp_key;
  GstUvgRtpSrtpCipher srtp_cipher;
  GstUvgRtpSrtpAuth srtp_auth;
  GstUvgRtpZrtpSettings zs;
  GstUvgRtpZrtpCtl *zctl = NULL, *old_ctl;
  urtp_recvstream_t *stream = NULL;
  guint replay_window;
  gint err_code, port, buffer_size, ret;

  GST_OBJECT_LOCK (self);
  if (!resolve_session (self, &session, &err_msg, &err_code)) {
    GST_OBJECT_UNLOCK (self);
    post_config_error (self, err_msg, err_code);
    return FALSE;
  }
  srtp_key = g_strdup (self->srtp_key);
  srtp_cipher = self->srtp_cipher;
  srtp_auth = self->srtp_auth;
  replay_window = self->replay_window_size;
  gst_uvgrtp_zrtp_settings_copy (&zs, &self->zrtp);
  old_ctl = self->zrtp_ctl;
  self->zrtp_ctl = NULL;
  GST_OBJECT_UNLOCK (self);
  gst_uvgrtp_zrtp_ctl_unref (old_ctl);

  if (zs.enabled && srtp_key && *srtp_key) {
    gst_uvgrtp_free_secret (srtp_key);
    gst_uvgrtp_zrtp_settings_clear (&zs);
    session_clear (&session);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Properties 'zrtp' and 'srtp-key' cannot be used together: ZRTP "
            "agrees the SRTP keys itself"), (NULL));
    return FALSE;
  }

  /* a bad key is reported before any network setting */
  if (!gst_uvgrtp_srtp_parse (GST_ELEMENT (self), srtp_key, srtp_cipher,
          srtp_auth, &srtp_cfg, srtp_key_bytes)) {
    gst_uvgrtp_free_secret (srtp_key);
    gst_uvgrtp_zrtp_settings_clear (&zs);
    session_clear (&session);
    return FALSE;
  }
  gst_uvgrtp_free_secret (srtp_key);
  have_srtp = srtp_cfg.key_len > 0;
  srtp_cfg.dir = URTP_SRTP_INBOUND;
  srtp_cfg.any_ssrc = TRUE;
  srtp_cfg.replay_window = replay_window;

  GST_OBJECT_LOCK (self);
  address = g_strdup (self->address);
  iface = g_strdup (self->multicast_iface);
  port = self->port;
  buffer_size = self->buffer_size;

  memset (&cfg, 0, sizeof (cfg));
  cfg.bind_addr = address;
  cfg.bind_port = (uint16_t) port;
  cfg.multicast_iface = iface && *iface ? iface : NULL;
  cfg.dscp = -1;
  cfg.rcvbuf = buffer_size;
  cfg.reuse = self->reuse;
  cfg.tx_mode = URTP_IO_AUTO;
  cfg.rx_mode = (urtp_io_mode_t) self->recv_mode;
  GST_OBJECT_UNLOCK (self);

  ret = urtp_sock_open (&self->sock, &cfg);
  if (ret < 0)
    goto open_failed;
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

  GST_OBJECT_LOCK (self);
  session_clear (&self->session);
  self->session = session;
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
  self->caps_changed = FALSE;
  self->unsupported_run = 0;
  self->last_unsupported = self->last_packets = 0;
  self->last_packet_us = 0;
  self->warned_drops = 0;
  self->last_drop_warning = 0;
  self->draining = FALSE;
  self->resume = FALSE;
  self->was_playing = FALSE;
  g_atomic_int_set (&self->eos, 0);
  if (port == 0) {
    self->port = urtp_sock_local_port (&self->sock);
    port = -1;
  }
  GST_OBJECT_UNLOCK (self);

  if (port == -1) {
    g_object_notify (G_OBJECT (self), "port");
    g_object_notify (G_OBJECT (self), "uri");
  }
  open_rtcp (self, address);
  gst_uvgrtp_zrtp_settings_clear (&zs);
  g_free (address);
  g_free (iface);
  return TRUE;

  /* ERRORS */
open_failed:
  {
    if (ret == -EINVAL)
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("Invalid address '%s' (properties 'address' / 'uri' / "
              "'multicast-iface')", address), ("urtp_sock_open: %s",
              g_strerror (-ret)));
    else
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
          ("Could not bind to %s:%d (properties 'address' and 'port'): %s",
              address, port, g_strerror (-ret)), (NULL));
    self->sock.fd = -1;
    self->sock.wake_fd = -1;
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
      gst_uvgrtp_srtp_post_init_error (GST_ELEMENT (self), ret, srtp_cipher,
          srtp_cfg.profile, replay_window);
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
    urtp_sock_close (&self->sock);
    self->sock.fd = -1;
    self->sock.wake_fd = -1;
    goto fail;
  }
fail:
  {
    gst_uvgrtp_zrtp_wipe (srtp_key_bytes, sizeof srtp_key_bytes);
    gst_uvgrtp_zrtp_settings_clear (&zs);
    session_clear (&session);
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
  urtp_sock_close (&self->sock);
  self->sock.fd = -1;
  self->sock.wake_fd = -1;
  GST_OBJECT_LOCK (self);
  session_clear (&self->session);
  GST_OBJECT_UNLOCK (self);
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
    caps = session_caps (&self->session);
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
    caps = session_caps (&self->session);
  GST_OBJECT_UNLOCK (self);
  if (!caps)
    return FALSE;

  if (!gst_pad_peer_query_accept_caps (GST_BASE_SRC_PAD (bsrc), caps)) {
    GST_WARNING_OBJECT (self, "downstream does not accept %" GST_PTR_FORMAT,
        caps);
    gst_caps_unref (caps);
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "output caps %" GST_PTR_FORMAT, caps);
  ok = gst_base_src_set_caps (bsrc, caps);
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
  if (!resolve_session (self, &session, &err_msg, &err_code)) {
    GST_OBJECT_UNLOCK (self);
    post_config_error (self, err_msg, err_code);
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
    session_clear (&session);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, (NULL),
        ("Could not apply the new caps: %s", g_strerror (-r)));
    return FALSE;
  }
  session_clear (&self->session);
  self->session = session;
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

/* Wraps the access unit into a buffer, without copying it. */
static GstBuffer *
make_buffer (GstUvgRtpSrc * self, const urtp_recvstream_frame_t * f)
{
  gboolean opus = self->session.codec == URTP_CODEC_OPUS;
  GstClockTime base;
  GstBuffer *buf;

  buf = gst_buffer_new_wrapped_full (0, f->au.data, f->au.len, 0, f->au.len,
      f->au.data, urtp_depay_release);
  if ((f->flags & URTP_FRAME_PARAMS) && self->session.params)
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
  if (st.kernel_drops > self->warned_drops) {
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

  /* A stream of nothing but unsupported packets (PACI, interleaved mode,
   * reserved types) is an error, not an empty stream. */
  if (st.depay.unsupported != self->last_unsupported) {
    if (st.depay.packets == self->last_packets)
      self->unsupported_run += st.depay.unsupported - self->last_unsupported;
    else
      self->unsupported_run = 0;
  } else if (st.depay.packets != self->last_packets) {
    self->unsupported_run = 0;
  }
  self->last_unsupported = st.depay.unsupported;
  self->last_packets = st.depay.packets;
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

static GstFlowReturn
gst_uvgrtp_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstUvgRtpSrc *self = GST_UVGRTP_SRC (psrc);
  GstClockTime now, base;
  guint64 timeout_ns, deadline;
  gint64 wait_ns;
  urtp_recvstream_frame_t f;
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
    if ((n = g_atomic_int_and (&self->keyframe_asked, 0)) != 0)
      urtp_recvstream_request_keyframe (self->stream, n == 2);
    if (urtp_recvstream_pop (self->stream, &f)) {
      *outbuf = make_buffer (self, &f);
      return GST_FLOW_OK;
    }
    post_events (self);
    if (self->unsupported_run >= UNSUPPORTED_LIMIT)
      goto unsupported;
    if (self->draining)
      return GST_FLOW_EOS;

    if (g_atomic_int_get (&self->eos)) {
      /* Take what the kernel already holds, a batch at a time so that the
       * stream's queue is emptied in between, then finish. */
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

    /* Wait no longer than the stream's next deadline or the timeout. */
    GST_OBJECT_LOCK (self);
    timeout_ns = self->timeout;
    GST_OBJECT_UNLOCK (self);
    now = clock_now (self, &base);
    deadline = urtp_recvstream_deadline (self->stream);
    wait_ns = -1;
    if (deadline != UINT64_MAX)
      wait_ns = deadline > now ? (gint64) (deadline - now) : 0;
    if (self->rtcp_on) {
      guint64 r = urtp_rtcpio_deadline (&self->rtcpio), m = mono_ns ();
      gint64 t = r > m ? (gint64) (r - m) : 0;

      wait_ns = wait_ns < 0 ? t : MIN (wait_ns, t);
    }
    if (timeout_ns) {
      gint64 t = MAX (0, self->last_packet_us * 1000 + (gint64) timeout_ns -
          g_get_monotonic_time () * 1000);

      wait_ns = wait_ns < 0 ? t : MIN (wait_ns, t);
    }

    n = urtp_sock_recv (&self->sock, &self->rx, wait_ns < 0 ? -1 :
        (gint) MIN ((wait_ns + GST_MSECOND - 1) / GST_MSECOND, G_MAXINT));
    if (n == -EINTR) {
      /* woken by unlock or EOS, which the loop checks; else stale */
      if (!g_atomic_int_get (&self->flushing)
          && !g_atomic_int_get (&self->eos))
        urtp_sock_unwake (&self->sock);
      continue;
    }
    if (n < 0)
      goto receive_failed;

    now = clock_now (self, &base);
    if (n > 0) {
      urtp_recvstream_push_rx (self->stream, &self->sock, &self->rx,
          (size_t) n, now);
      self->last_packet_us = g_get_monotonic_time ();
    }
    urtp_recvstream_expire (self->stream, now);
    if (self->rtcp_on)
      service_rtcp (self, now);

    if (n == 0 && timeout_ns && g_get_monotonic_time () - self->last_packet_us
        >= (gint64) (timeout_ns / 1000)) {
      GST_DEBUG_OBJECT (self, "no packet for %" GST_TIME_FORMAT,
          GST_TIME_ARGS (timeout_ns));
      gst_element_post_message (GST_ELEMENT (self),
          gst_message_new_element (GST_OBJECT (self),
              gst_structure_new ("GstUvgRtpSrcTimeout", "timeout",
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
            self->unsupported_run), (NULL));
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
