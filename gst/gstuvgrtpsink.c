/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * SECTION:element-uvgrtpsink
 * @title: uvgrtpsink
 *
 * uvgrtpsink packetizes H.264 (RFC 6184), H.265 (RFC 7798), H.266
 * (RFC 9328) or Opus (RFC 7587) into RTP and sends the packets over UDP: it
 * takes the place of `rtph265pay ! udpsink` (and the H.264, H.266 and Opus
 * equivalents) in one element.
 *
 * Payload bytes are never copied: each packet is a list of iovecs pointing
 * into the mapped input buffer, and a whole access unit (or a whole buffer
 * list) goes to the kernel in as few system calls as it allows: UDP generic
 * segmentation offload where available, else sendmmsg.
 *
 * Input is byte-stream (Annex B, access-unit or NAL-unit aligned) or
 * length-prefixed (avc, hvc1, hev1, access-unit aligned) video, or Opus
 * packets. Parameter sets from codec_data or seen in band are re-sent
 * according to #GstUvgRtpSink:config-interval and written into the session
 * description (#GstUvgRtpSink:sdp, #GstUvgRtpSink:sdp-file) that receivers
 * such as ffplay or VLC can open.
 *
 * Send errors are counted in #GstUvgRtpSink:stats and logged, not fatal:
 * ICMP port unreachable reported back as ECONNREFUSED (the packets still go
 * out, so a sender may start before its receiver), or packets the kernel
 * refused. Only when sending has failed without a break for two seconds
 * does the element post an error.
 *
 * With #GstUvgRtpSink:srtp-key set, the stream is sent as SRTP (RFC 3711,
 * AES-GCM as in RFC 7714) that srtpdec, or uvgrtpsrc, reads with the same
 * key, #GstUvgRtpSink:srtp-cipher and #GstUvgRtpSink:srtp-auth: right after
 * packetizing, each packet is copied once into memory the element keeps
 * and encrypted there, and the batch still goes out in as few system calls
 * (protection adds the same number of bytes to every packet, so runs of
 * equal-sized packets stay equal for UDP GSO). RTCP (#GstUvgRtpSink:rtcp)
 * is then SRTCP with the same key and cipher (with hmac-sha1-32 the SRTCP
 * tag stays 80 bits, as RFC 4568's suites have it): srtpenc's rtcp-cipher
 * equal to its rtp-cipher and rtcp-auth hmac-sha1-80 (null with GCM). Our
 * sender reports go out protected, and receivers' reports count only once
 * they verify. So there is no srtcp-cipher or srtcp-auth property.
 *
 * With #GstUvgRtpSink:zrtp set, the element agrees the SRTP keys itself,
 * by ZRTP (RFC 6189) with a uvgrtpsrc (or any ZRTP endpoint) at the
 * receiving address: the exchange starts when the element starts, on its
 * own socket, which then also listens for the peer's answers. No media is
 * sent until the keys are agreed and confirmed (the access units are
 * dropped and counted as zrtp-held in #GstUvgRtpSink:stats), unless
 * #GstUvgRtpSink:zrtp-allow-clear is set; once secure, an upstream
 * force-key-unit event asks the encoder for a key frame so that the
 * receiver can start decoding at once. Progress is posted as element
 * messages named `uvgrtp-zrtp` (fields state "secure" or "failed", sas,
 * sas-verified, peer-sas-verified, cipher, auth-tag, key-agreement,
 * sas-type, hash, srtp-profile, initiator, cache-mismatch,
 * secrets-matched, zid, peer-zid, peer-client-id, and on failure reason,
 * error-code, error-from-peer) and is readable in the zrtp-* properties.
 * A receiver that does not answer (yet) is waited for: the exchange
 * starts over quietly after each Hello timeout. Several elements with the
 * same #GstUvgRtpSink:zrtp-session share one exchange (Multistream).
 *
 * All of the work is lib/'s sending stream (lib/urtp/sendstream.h), which
 * C programs can use without GStreamer; the element maps buffers, caps,
 * properties, running time and bus messages onto it. A send waiting for
 * room in a full socket buffer gives way to state changes and flushes:
 * pausing resumes it where it stopped, flushing and stopping drop it.
 *
 * The network and SRTP properties take effect when the element starts
 * (READY to PAUSED); pt, mtu and aggregate-mode when caps are set;
 * config-interval at once. Like udpsink, the element synchronises on the
 * clock by default (#GstBaseSink:sync is %TRUE), sending each buffer at its
 * running time.
 *
 * ## Example pipelines
 * |[
 * gst-launch-1.0 videotestsrc ! x265enc ! h265parse ! uvgrtpsink host=127.0.0.1 port=5004
 * ]| Encodes test video to H.265 and sends it as RTP to 127.0.0.1:5004.
 * |[
 * gst-launch-1.0 videotestsrc ! x264enc tune=zerolatency ! h264parse ! \
 *     uvgrtpsink host=127.0.0.1 port=5004 config-interval=-1 sdp-file=stream.sdp
 * ]| Sends H.264 with SPS and PPS before every IDR picture and writes a
 * session description that `ffplay -protocol_whitelist file,udp,rtp stream.sdp`
 * can play.
 * |[
 * gst-launch-1.0 audiotestsrc ! opusenc ! uvgrtpsink host=127.0.0.1 port=5006
 * ]| Sends Opus audio.
 * |[
 * gst-launch-1.0 videotestsrc ! x265enc ! h265parse ! uvgrtpsink host=127.0.0.1 port=5004 \
 *     srtp-key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d
 * ]| Sends H.265 as SRTP with AES-128-ICM and HMAC-SHA1-80, for
 * `udpsrc port=5004 caps="application/x-srtp, ..., srtp-key=(buffer)000102..." ! srtpdec ! rtph265depay`.
 * |[
 * gst-launch-1.0 -m videotestsrc is-live=true ! x265enc tune=zerolatency ! h265parse ! \
 *     uvgrtpsink host=192.0.2.2 port=5004 zrtp=true zrtp-cache-file=alice.zrtp
 * ]| Sends H.265 as SRTP with keys agreed by ZRTP with
 * `uvgrtpsrc port=5004 encoding-name=H265 zrtp=true` at 192.0.2.2.
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include <gst/video/video.h>

#include "gstuvgrtpsink.h"
#include "gstuvgrtpsrtp.h"
#include "urtp/history.h"
#include "urtp/rtx.h"
#include "gstuvgrtpzrtpctl.h"

GST_DEBUG_CATEGORY_STATIC (gst_uvgrtp_sink_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_sink_debug

#define DEFAULT_HOST              "localhost"
#define DEFAULT_PORT              5004
#define DEFAULT_BIND_ADDRESS      NULL
#define DEFAULT_BIND_PORT         0
#define DEFAULT_BUFFER_SIZE       0
#define DEFAULT_TTL               64
#define DEFAULT_TTL_MC            1
#define DEFAULT_MULTICAST_IFACE   NULL
#define DEFAULT_AUTO_MULTICAST    TRUE
#define DEFAULT_LOOP              TRUE
#define DEFAULT_QOS_DSCP          -1
#define DEFAULT_MTU               URTP_PAY_DEFAULT_MTU
#define DEFAULT_PT                96
#define DEFAULT_SSRC              G_MAXUINT
#define DEFAULT_SEQNUM_OFFSET     -1
#define DEFAULT_TIMESTAMP_OFFSET  G_MAXUINT
#define DEFAULT_CONFIG_INTERVAL   0
#define DEFAULT_AGGREGATE_MODE    GST_UVGRTP_AGGREGATE_NONE
#define DEFAULT_SEND_MODE         GST_UVGRTP_SEND_MODE_AUTO
#define DEFAULT_SEND_THREAD       FALSE
#define DEFAULT_PAD_FRAGMENTS     TRUE
#define DEFAULT_PACING_RATE       0
#define DEFAULT_PACING_FACTOR     0.0
#define DEFAULT_PACING_BURST      0
#define DEFAULT_RTCP              TRUE
#define DEFAULT_RTCP_PORT         0
#define DEFAULT_RTCP_BIND_PORT    0
#define DEFAULT_RTCP_MUX          FALSE
#define DEFAULT_CNAME             NULL
#define DEFAULT_RTCP_MIN_INTERVAL (5 * GST_SECOND)
#define DEFAULT_DO_RETRANSMISSION TRUE
#define DEFAULT_RTX_PT            -1
#define DEFAULT_RTX_MAX_SIZE_TIME 1000
#define DEFAULT_RTX_MAX_SIZE_PACKETS URTP_HISTORY_PACKETS
#define DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL URTP_SENDSTREAM_KEYFRAME_INTERVAL
#define DEFAULT_SDP_FILE          NULL
#define DEFAULT_SRTP_KEY          NULL
#define DEFAULT_SRTP_CIPHER       GST_UVGRTP_DEFAULT_SRTP_CIPHER
#define DEFAULT_SRTP_AUTH         GST_UVGRTP_DEFAULT_SRTP_AUTH

/* The smallest MTU rtpbasepayload accepts; below URTP_PAY_MIN_MTU the
 * payload formats themselves refuse it, with an error naming the property. */
#define MIN_MTU                   28
/* Every send failing for this long is an error rather than a warning. */
#define FAIL_ERROR_S              2

enum
{
  PROP_0,
  PROP_HOST,
  PROP_PORT,
  PROP_BIND_ADDRESS,
  PROP_BIND_PORT,
  PROP_BUFFER_SIZE,
  PROP_TTL,
  PROP_TTL_MC,
  PROP_MULTICAST_IFACE,
  PROP_AUTO_MULTICAST,
  PROP_LOOP,
  PROP_QOS_DSCP,
  PROP_MTU,
  PROP_PT,
  PROP_SSRC,
  PROP_SEQNUM_OFFSET,
  PROP_TIMESTAMP_OFFSET,
  PROP_CONFIG_INTERVAL,
  PROP_AGGREGATE_MODE,
  PROP_SEND_MODE,
  PROP_SEND_THREAD,
  PROP_PAD_FRAGMENTS,
  PROP_PACING_RATE,
  PROP_PACING_FACTOR,
  PROP_PACING_BURST,
  PROP_RTCP,
  PROP_RTCP_PORT,
  PROP_RTCP_BIND_PORT,
  PROP_RTCP_MUX,
  PROP_CNAME,
  PROP_RTCP_MIN_INTERVAL,
  PROP_DO_RETRANSMISSION,
  PROP_RTX_PT,
  PROP_RTX_MAX_SIZE_TIME,
  PROP_RTX_MAX_SIZE_PACKETS,
  PROP_MIN_FORCE_KEY_UNIT_INTERVAL,
  PROP_STATS,
  PROP_SDP,
  PROP_SDP_FILE,
  PROP_SRTP_KEY,
  PROP_SRTP_CIPHER,
  PROP_SRTP_AUTH,
  /* GST_UVGRTP_ZRTP_N_PROPS ids from here on (gstuvgrtpzrtpctl.h) */
  PROP_ZRTP_FIRST,
};

#define IS_ZRTP_PROP(id) ((id) >= PROP_ZRTP_FIRST && \
    (id) < PROP_ZRTP_FIRST + GST_UVGRTP_ZRTP_N_PROPS)

/* One mapped input buffer: the hold of a push (lib/urtp/sendstream.h),
 * given back by release_hold() once no packet points into it. */
struct _GstUvgRtpSinkHold
{
  GstBuffer *buf;
  GstMapInfo map;
  GstUvgRtpSinkHold *next;      /* free list */
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-h264, stream-format = (string) byte-stream, "
        "alignment = (string) { au, nal }; "
        "video/x-h264, stream-format = (string) avc, alignment = (string) au; "
        "video/x-h265, stream-format = (string) byte-stream, "
        "alignment = (string) { au, nal }; "
        "video/x-h265, stream-format = (string) { hvc1, hev1 }, "
        "alignment = (string) au; "
        "video/x-h266, stream-format = (string) byte-stream, "
        "alignment = (string) { au, nal }; " "audio/x-opus"));

#define gst_uvgrtp_sink_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstUvgRtpSink, gst_uvgrtp_sink, GST_TYPE_BASE_SINK,
    GST_DEBUG_CATEGORY_INIT (gst_uvgrtp_sink_debug, "uvgrtpsink", 0,
        "uvgRTP payloader and UDP sink"));
GST_ELEMENT_REGISTER_DEFINE (uvgrtpsink, "uvgrtpsink", GST_RANK_NONE,
    GST_TYPE_UVGRTP_SINK);

static void gst_uvgrtp_sink_finalize (GObject * object);
static void gst_uvgrtp_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_uvgrtp_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static gboolean gst_uvgrtp_sink_start (GstBaseSink * bsink);
static gboolean gst_uvgrtp_sink_stop (GstBaseSink * bsink);
static gboolean gst_uvgrtp_sink_set_caps (GstBaseSink * bsink, GstCaps * caps);
static gboolean gst_uvgrtp_sink_event (GstBaseSink * bsink, GstEvent * event);
static GstFlowReturn gst_uvgrtp_sink_render (GstBaseSink * bsink,
    GstBuffer * buffer);
static GstFlowReturn gst_uvgrtp_sink_render_list (GstBaseSink * bsink,
    GstBufferList * list);
static gboolean gst_uvgrtp_sink_unlock (GstBaseSink * bsink);
static gboolean gst_uvgrtp_sink_unlock_stop (GstBaseSink * bsink);
static gboolean gst_uvgrtp_sink_zrtp_set_sas_verified (GstUvgRtpSink * self,
    gboolean verified);

static void
gst_uvgrtp_sink_class_init (GstUvgRtpSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *basesink_class = GST_BASE_SINK_CLASS (klass);

  gobject_class->set_property = gst_uvgrtp_sink_set_property;
  gobject_class->get_property = gst_uvgrtp_sink_get_property;
  gobject_class->finalize = gst_uvgrtp_sink_finalize;

  /**
   * GstUvgRtpSink:host:
   *
   * Address or name of the receiver (unicast or multicast, IPv4 or IPv6).
   * Resolved when the element starts; a name that does not resolve is an
   * error naming this property.
   */
  g_object_class_install_property (gobject_class, PROP_HOST,
      g_param_spec_string ("host", "Host",
          "Receiver address or name: unicast or multicast, IPv4 or IPv6",
          DEFAULT_HOST, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:port:
   *
   * UDP port of the receiver, 1 to 65535.
   */
  g_object_class_install_property (gobject_class, PROP_PORT,
      g_param_spec_int ("port", "Port", "UDP port of the receiver",
          0, 65535, DEFAULT_PORT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:bind-address:
   *
   * Local address to send from, or %NULL for any address of the host's
   * address family.
   */
  g_object_class_install_property (gobject_class, PROP_BIND_ADDRESS,
      g_param_spec_string ("bind-address", "Bind Address",
          "Local address to send from (NULL = any address of the host's family)",
          DEFAULT_BIND_ADDRESS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:bind-port:
   *
   * Local port to send from; 0 picks an ephemeral port.
   */
  g_object_class_install_property (gobject_class, PROP_BIND_PORT,
      g_param_spec_int ("bind-port", "Bind Port",
          "Local UDP port to send from (0 = ephemeral)", 0, 65535,
          DEFAULT_BIND_PORT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:buffer-size:
   *
   * Kernel send buffer size in bytes; 0 keeps the system default. As root
   * the size may exceed net.core.wmem_max. The size granted is reported in
   * #GstUvgRtpSink:stats.
   */
  g_object_class_install_property (gobject_class, PROP_BUFFER_SIZE,
      g_param_spec_int ("buffer-size", "Buffer Size",
          "Kernel send buffer in bytes (0 = system default); stats report the size granted", 0,
          G_MAXINT, DEFAULT_BUFFER_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:ttl:
   *
   * Time to live (hop limit) of unicast packets, 0 to 255.
   */
  g_object_class_install_property (gobject_class, PROP_TTL,
      g_param_spec_int ("ttl", "Unicast TTL",
          "Hop limit of unicast packets", 0, 255, DEFAULT_TTL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:ttl-mc:
   *
   * Time to live (hop limit) of multicast packets, 0 to 255.
   */
  g_object_class_install_property (gobject_class, PROP_TTL_MC,
      g_param_spec_int ("ttl-mc", "Multicast TTL",
          "Hop limit of multicast packets", 0, 255,
          DEFAULT_TTL_MC, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:multicast-iface:
   *
   * Name of the network interface multicast packets leave through (for
   * example "eth0"), or %NULL for the routing table's choice.
   */
  g_object_class_install_property (gobject_class, PROP_MULTICAST_IFACE,
      g_param_spec_string ("multicast-iface", "Multicast Interface",
          "Interface multicast packets leave through (NULL = routing table's choice)",
          DEFAULT_MULTICAST_IFACE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:auto-multicast:
   *
   * Accepted for compatibility with udpsink. A sender needs no group
   * membership to send to a multicast group, so nothing is joined; whether
   * local receivers see the packets is set by #GstUvgRtpSink:loop.
   */
  g_object_class_install_property (gobject_class, PROP_AUTO_MULTICAST,
      g_param_spec_boolean ("auto-multicast", "Auto multicast",
          "Kept for udpsink compatibility; sending needs no group membership, so none is joined",
          DEFAULT_AUTO_MULTICAST, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:loop:
   *
   * Deliver multicast packets to receivers on this host as well
   * (IP_MULTICAST_LOOP / IPV6_MULTICAST_LOOP).
   */
  g_object_class_install_property (gobject_class, PROP_LOOP,
      g_param_spec_boolean ("loop", "Multicast Loopback",
          "Deliver multicast packets to receivers on this host too", DEFAULT_LOOP,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:qos-dscp:
   *
   * Differentiated Services Code Point written into outgoing packets, 0 to
   * 63; -1 leaves the field alone.
   */
  g_object_class_install_property (gobject_class, PROP_QOS_DSCP,
      g_param_spec_int ("qos-dscp", "QoS DSCP",
          "DSCP value for outgoing packets (-1 = leave unchanged)",
          -1, 63, DEFAULT_QOS_DSCP, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:mtu:
   *
   * Largest RTP packet in bytes (RTP header included; IP and UDP headers
   * not). NAL units larger than this are fragmented. The payload formats
   * need at least 64 bytes; an Opus packet that does not fit is an error.
   */
  g_object_class_install_property (gobject_class, PROP_MTU,
      g_param_spec_uint ("mtu", "MTU",
          "Largest RTP packet in bytes, RTP header included (payload formats need at least 64)", MIN_MTU, 65535,
          DEFAULT_MTU, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:pt:
   *
   * RTP payload type, 0 to 127 (dynamic types are 96 to 127).
   */
  g_object_class_install_property (gobject_class, PROP_PT,
      g_param_spec_uint ("pt", "payload type", "RTP payload type",
          0, 127, DEFAULT_PT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:ssrc:
   *
   * RTP synchronisation source; 4294967295 (-1, the default) picks a
   * random one each time the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_SSRC,
      g_param_spec_uint ("ssrc", "SSRC",
          "RTP SSRC (4294967295 = random at each start)", 0, G_MAXUINT,
          DEFAULT_SSRC, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:seqnum-offset:
   *
   * Sequence number of the first packet, 0 to 65535; -1 (the default)
   * picks a random one.
   */
  g_object_class_install_property (gobject_class, PROP_SEQNUM_OFFSET,
      g_param_spec_int ("seqnum-offset", "Sequence number offset",
          "Sequence number of the first packet (-1 = random)", -1, 65535,
          DEFAULT_SEQNUM_OFFSET, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:timestamp-offset:
   *
   * Added to every RTP timestamp; 4294967295 (-1, the default) picks a
   * random offset. RTP timestamps are the buffer's running time at the
   * codec's clock rate (90000 Hz for video, 48000 Hz for Opus) plus this.
   */
  g_object_class_install_property (gobject_class, PROP_TIMESTAMP_OFFSET,
      g_param_spec_uint ("timestamp-offset", "Timestamp Offset",
          "Added to every RTP timestamp (4294967295 = random at each start)", 0,
          G_MAXUINT, DEFAULT_TIMESTAMP_OFFSET,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:config-interval:
   *
   * When to re-send the parameter sets (VPS, SPS, PPS) known from
   * codec_data or seen in band: 0 never, -1 before every IRAP/IDR picture
   * that does not carry them itself, N before the first IRAP/IDR picture at
   * least N seconds after they last went out.
   */
  g_object_class_install_property (gobject_class, PROP_CONFIG_INTERVAL,
      g_param_spec_int ("config-interval",
          "Parameter set interval",
          "Re-send known parameter sets in band: 0 = never, -1 = before every "
          "IRAP/IDR picture lacking them, N = at an IRAP/IDR picture once N "
          "seconds have passed",
          -1, 3600, DEFAULT_CONFIG_INTERVAL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:aggregate-mode:
   *
   * Whether small NAL units of an access unit share an aggregation packet
   * (STAP-A for H.264, AP for H.265 and H.266). zero-latency and max both
   * aggregate within each input buffer, which for access-unit aligned input
   * is the whole access unit.
   */
  g_object_class_install_property (gobject_class, PROP_AGGREGATE_MODE,
      g_param_spec_enum ("aggregate-mode", "Aggregate mode",
          "Put small NAL units together into aggregation packets (STAP-A / AP)",
          GST_TYPE_UVGRTP_AGGREGATE_MODE, DEFAULT_AGGREGATE_MODE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:send-mode:
   *
   * How packets reach the kernel: auto (UDP GSO where the kernel has it,
   * else sendmmsg), gso, mmsg or plain (one sendmsg per packet). The mode in
   * use is reported in #GstUvgRtpSink:stats.
   */
  g_object_class_install_property (gobject_class, PROP_SEND_MODE,
      g_param_spec_enum ("send-mode", "Send mode",
          "How packets reach the kernel (the mode in use is in stats)", GST_TYPE_UVGRTP_SEND_MODE,
          DEFAULT_SEND_MODE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:send-thread:
   *
   * Send from a thread of the element's own, so that finding the NAL units
   * of the next access unit (and packetizing and protecting it) overlaps
   * the kernel's copy of this one: both read the frame from memory, and
   * one after the other on one core their times add up. At most one access
   * unit is in flight; the next waits for it. This pays where a core is
   * free for it; on a two-core machine that also runs the receiver (the
   * benchmark's loopback runs) it measured no faster, hence off by default.
   * Takes effect at the next start.
   */
  g_object_class_install_property (gobject_class, PROP_SEND_THREAD,
      g_param_spec_boolean ("send-thread", "Send thread",
          "Send from a thread of its own while the next access unit is "
          "packetized", DEFAULT_SEND_THREAD,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:pad-fragments:
   *
   * With UDP GSO in use, make every fragment of a large NAL unit exactly
   * #GstUvgRtpSink:mtu bytes long, the last few carrying RTP padding
   * (RFC 3550, which every receiver must strip) instead of a short tail.
   * The fragments of consecutive NAL units then have one size, and one GSO
   * send can carry packets of several NAL units: for a 4K picture of 8
   * slices that is about 11 sends instead of 15, and each send costs the
   * kernel far more than a packet. Only NAL units whose padding stays
   * within 1/32 of their size are padded (for 4K slices under 1 %), and
   * never the last of a buffer, which nothing follows (so a picture of one
   * slice is sent as without padding); the
   * padding sent is counted in #GstUvgRtpSink:stats (padding-bytes).
   * Takes effect with the next caps.
   */
  g_object_class_install_property (gobject_class, PROP_PAD_FRAGMENTS,
      g_param_spec_boolean ("pad-fragments", "Pad fragments",
          "Pad the fragments of large NAL units to the MTU (RTP padding) so "
          "that one GSO send carries several NAL units", DEFAULT_PAD_FRAGMENTS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:pacing-rate:
   *
   * Spread the packets of each access unit in time at this many bits per
   * second (0: off, the default: everything leaves as fast as the host can
   * send, which is fastest on loopback and loses large pictures at the
   * first link slower than the host's). Set it somewhat below the slowest
   * link on the path. Sends stay UDP GSO runs of at most
   * #GstUvgRtpSink:pacing-burst bytes, spread in time; with
   * #GstUvgRtpSink:send-thread the waits happen on the send thread. A
   * picture that fits the burst budget is not delayed. With
   * #GstUvgRtpSink:pacing-factor the higher of the two rates applies. When
   * the rate is below what the stream needs, a warning is posted and
   * upstream is held back (see pacing-behind in #GstUvgRtpSink:stats).
   * Takes effect at the next access unit.
   */
  g_object_class_install_property (gobject_class, PROP_PACING_RATE,
      g_param_spec_uint64 ("pacing-rate", "Pacing rate",
          "Send at most this many bits per second, spread in time "
          "(0 = no pacing)", 0, G_MAXUINT64, DEFAULT_PACING_RATE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:pacing-factor:
   *
   * Pace at this multiple of the stream's bitrate (0: off), as browsers
   * pace at a multiple of their target bitrate, for a sender that does
   * not know its link: the higher the factor, the sooner a large intra
   * picture is out, and the larger the burst the link must absorb. The
   * bitrate is what came in over the last second of the buffers' running
   * time (so pacing itself cannot hold it down); in the first second, over
   * the time since the first buffer. #GstUvgRtpSink:pacing-rate, if set,
   * is a floor.
   */
  g_object_class_install_property (gobject_class, PROP_PACING_FACTOR,
      g_param_spec_double ("pacing-factor", "Pacing factor",
          "Pace at this multiple of the measured bitrate (0 = off; the "
          "higher of this and pacing-rate applies)", 0.0, 1000.0,
          DEFAULT_PACING_FACTOR, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:pacing-burst:
   *
   * While pacing, the most bytes that may leave back to back (0: 65536,
   * one UDP GSO send). A link's queue must hold this much on top of what
   * the rate difference builds up; smaller bursts make smaller GSO sends
   * and cost more system calls.
   */
  g_object_class_install_property (gobject_class, PROP_PACING_BURST,
      g_param_spec_uint ("pacing-burst", "Pacing burst",
          "While pacing, the most bytes sent back to back (0 = 65536)",
          0, 64 << 20, DEFAULT_PACING_BURST,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtcp:
   *
   * RTCP (RFC 3550): send sender reports (our RTP clock against wall-clock
   * NTP time, so that receivers can line up several streams; packet and
   * octet counts; our CNAME) to #GstUvgRtpSink:rtcp-port, and read
   * receivers' reports (loss, jitter, round-trip time: in
   * #GstUvgRtpSink:stats and a "uvgrtp-rtcp" element message each). With
   * #GstUvgRtpSink:srtp-key or #GstUvgRtpSink:zrtp, RTCP is SRTCP (RFC 3711)
   * both ways, keyed as the media (with ZRTP, each side's key of the
   * agreement, RFC 6189 4.5.3; no reports go out before it is confirmed).
   * Read when the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP,
      g_param_spec_boolean ("rtcp", "RTCP",
          "Send sender reports to rtcp-port and read receiver reports",
          DEFAULT_RTCP, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtcp-port:
   *
   * The receiver's RTCP port: 0 for #GstUvgRtpSink:port + 1, as RFC 3550
   * pairs them.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_PORT,
      g_param_spec_int ("rtcp-port", "RTCP port",
          "Where RTCP goes (0 = port + 1)", 0, G_MAXUINT16, DEFAULT_RTCP_PORT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtcp-bind-port:
   *
   * The local port RTCP goes out from and receivers' reports are read on
   * (0: any free one). Receivers that reply to where our reports come from
   * (uvgrtpsrc, FFmpeg) need nothing set; an rtpbin receiver needs this
   * port as its RTCP udpsink's port.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_BIND_PORT,
      g_param_spec_int ("rtcp-bind-port", "RTCP bind port",
          "Local RTCP port, where receiver reports are read (0 = any)",
          0, G_MAXUINT16, DEFAULT_RTCP_BIND_PORT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtcp-mux:
   *
   * RTCP on the RTP port, both ways (RFC 5761, as WebRTC has it): our
   * reports go to #GstUvgRtpSink:port from our RTP port, and receivers'
   * reports are read there, told apart from ZRTP by their packet type.
   * #GstUvgRtpSink:rtcp-port and #GstUvgRtpSink:rtcp-bind-port are then
   * unused, and the SDP says a=rtcp-mux. The receiver needs it too
   * (uvgrtpsrc's rtcp-mux). Read when the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_MUX,
      g_param_spec_boolean ("rtcp-mux", "RTCP mux",
          "RTCP on the RTP port (RFC 5761) instead of rtcp-port",
          DEFAULT_RTCP_MUX, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:cname:
   *
   * The CNAME in our reports. NULL: one made once per process, so that
   * every sink of the process shares it and receivers can synchronise
   * their streams (RFC 3550 6.5.1).
   */
  g_object_class_install_property (gobject_class, PROP_CNAME,
      g_param_spec_string ("cname", "CNAME",
          "CNAME in sender reports (NULL = one per process)", DEFAULT_CNAME,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtcp-min-interval:
   *
   * The least time between our reports in nanoseconds, as rtpsession's
   * property: RFC 3550's 5 s by default (the first after half of it).
   */
  g_object_class_install_property (gobject_class, PROP_RTCP_MIN_INTERVAL,
      g_param_spec_uint64 ("rtcp-min-interval", "RTCP minimum interval",
          "Minimum time between sender reports in ns", GST_MSECOND,
          G_MAXUINT64, DEFAULT_RTCP_MIN_INTERVAL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:do-retransmission:
   *
   * Answer receivers' NACKs (RFC 4585) with retransmissions (RFC 4588:
   * RTX packets of #GstUvgRtpSink:rtx-pt under an SSRC of their own, on the
   * RTP port, as rtprtxsend sends them; SRTP-protected with the media).
   * Sent packets are kept for this, without a copy: the input buffers stay
   * referenced up to #GstUvgRtpSink:rtx-max-size-time (buffers from a
   * buffer pool are copied first, so that upstream's pool does not run
   * dry). Each packet goes again at most once per half round trip, and all
   * retransmissions within half the stream's bitrate. Needs
   * #GstUvgRtpSink:rtcp; without NACKs from the receiver nothing is sent
   * again. The SDP then offers RTP/AVPF with nack, nack pli and ccm fir,
   * and the rtx payload type. Read when the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_DO_RETRANSMISSION,
      g_param_spec_boolean ("do-retransmission", "Do retransmission",
          "Answer NACKs with RTX retransmissions (RFC 4588) from the packets "
          "sent over rtx-max-size-time", DEFAULT_DO_RETRANSMISSION,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtx-pt:
   *
   * The payload type of retransmissions (the SDP's rtx format, apt= the
   * media's #GstUvgRtpSink:pt): -1 (the default) for the one after pt (97
   * for 96), which uvgrtpsrc assumes too. For rtpbin receivers, the
   * payload-type-map of rtprtxreceive maps it to pt.
   */
  g_object_class_install_property (gobject_class, PROP_RTX_PT,
      g_param_spec_int ("rtx-pt", "RTX payload type",
          "Payload type of retransmissions (-1 = pt + 1)", -1, 127,
          DEFAULT_RTX_PT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtx-max-size-time:
   *
   * How long sent packets are kept for retransmission, in milliseconds (as
   * rtprtxsend's max-size-time); the SDP's rtx-time. A receiver's latency
   * beyond it gains nothing.
   */
  g_object_class_install_property (gobject_class, PROP_RTX_MAX_SIZE_TIME,
      g_param_spec_uint ("rtx-max-size-time", "RTX max size time",
          "How long sent packets are kept for retransmission (ms)", 1, 60000,
          DEFAULT_RTX_MAX_SIZE_TIME, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:rtx-max-size-packets:
   *
   * The most packets kept for retransmission (as rtprtxsend's
   * max-size-packets); the latest ones stay.
   */
  g_object_class_install_property (gobject_class, PROP_RTX_MAX_SIZE_PACKETS,
      g_param_spec_uint ("rtx-max-size-packets", "RTX max size packets",
          "The most packets kept for retransmission", 1,
          URTP_HISTORY_MAX_PACKETS, DEFAULT_RTX_MAX_SIZE_PACKETS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:min-force-key-unit-interval:
   *
   * The least time between two key frame requests (RTCP PLI and FIR) passed
   * upstream as force-key-unit events, in nanoseconds (the name and unit of
   * #GstVideoEncoder's property): one picture answers every request made
   * while it is on its way, and a receiver asking faster cannot make the
   * encoder send only key frames. 0: every request. Only receivers that
   * report on the stream (from the host the media goes to, without SRTP)
   * are heard. Read when the element starts.
   */
  g_object_class_install_property (gobject_class,
      PROP_MIN_FORCE_KEY_UNIT_INTERVAL,
      g_param_spec_uint64 ("min-force-key-unit-interval",
          "Minimum force key unit interval",
          "Least time between key frame requests passed upstream (ns, 0 = all)",
          0, G_MAXUINT64, DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:stats:
   *
   * A #GstStructure named "application/x-uvgrtp-sink-stats" with the fields
   * packets, bytes (RTP packets and their bytes sent, SRTP tags
   * included), access-units,
   * send-errors (packets the kernel refused, plus ICMP error reports for
   * earlier packets), syscalls (send system calls), send-messages (what
   * those calls handed the kernel: a packet each, or with UDP GSO a run of
   * equal-sized packets each, so packets / send-messages is the packets per
   * GSO send), padding-bytes (RTP
   * padding added by #GstUvgRtpSink:pad-fragments, counted in bytes once
   * sent),
   * srtp-errors (packets SRTP protection refused: a repeated sequence
   * number, or a packet too large to take its tag; 0 without SRTP),
   * with #GstUvgRtpSink:zrtp: zrtp-sent, zrtp-received (ZRTP packets,
   * retransmissions included), zrtp-retransmits, zrtp-bad (malformed),
   * zrtp-unexpected (valid but not for the state), zrtp-auth-failures
   * (hash chain or MAC wrong), zrtp-restarts (exchanges started over after
   * a timeout or a peer that started over), zrtp-foreign (ZRTP ignored:
   * not from the peer the element is bound to, see docs/zrtp.md), zrtp-held (access units not
   * sent while the keys were pending), zrtp-held-packets (their RTP
   * packets), zrtp-sent-clear (packets sent in clear with
   * #GstUvgRtpSink:zrtp-allow-clear), all 0 without ZRTP;
   * bitrate (bits per second sent over the last second), pacing-rate (the
   * rate the pacer uses now, 0 when not pacing), pacing-waits (sends that
   * waited for their turn), pacing-waited and pacing-max-wait (their time,
   * summed and the longest, in nanoseconds), pacing-max-queue (the most
   * bytes held back by the pacer at once), pacing-behind (times the stream
   * fell behind its pacing rate);
   * RTCP (#GstUvgRtpSink:rtcp): rtcp-sent (our sender reports),
   * rtcp-received, rtcp-bad (compound packets that failed RFC 3550's
   * checks, or SRTCP's), rtcp-foreign (plain RTCP from another host than
   * the one our media goes to: dropped whole, in neither of those),
   * rr-received (report blocks about this stream), rr-rejected (blocks
   * about it that echo none of our last 16 sender reports: ignored), with
   * SRTP srtcp-auth-failures, srtcp-replays and srtcp-errors (SRTCP
   * that did not verify, came again, or was refused otherwise; each also
   * in rtcp-bad);
   * all #guint64; from the latest of those blocks: rr-ssrc (guint, who
   * sent it), fraction-lost (guint, 1/256), packets-lost (gint,
   * cumulative), jitter (guint, timestamp units), round-trip-time (gint64,
   * ns; -1 before a block with a sender report time), each also posted as
   * an element message "uvgrtp-rtcp" with type "rr"; loss recovery
   * (#GstUvgRtpSink:do-retransmission): nacks-received (NACK packets about
   * this stream), nack-seqs (the packets they asked for, each counted once
   * in rtx-packets (sent again; rtx-bytes their bytes, not in bitrate),
   * rtx-missing (no longer kept), rtx-repeats (sent again within half a round
   * trip already), rtx-over-budget (beyond half the bitrate) or
   * rtx-errors), history-packets (kept now), pli-received, fir-received
   * (key frame requests of receivers that report on the stream),
   * keyframe-requests-unknown (those of receivers that never did:
   * ignored) and keyframe-requests (those passed upstream as
   * force-key-unit events, at most one per
   * #GstUvgRtpSink:min-force-key-unit-interval), all #guint64, and
   * rtx-ssrc, rtx-pt (#guint); receivers (a
   * #GstValueArray of "application/x-uvgrtp-receiver" structures, one per
   * receiver that reports, the latest 16, one that says BYE leaves: ssrc,
   * reports, fraction-lost, packets-lost, jitter, ext-max-seq,
   * round-trip-time as above, last-rr-time: when its last block arrived,
   * #guint64 NTP format); buffer-size (#gint, the send buffer the kernel granted),
   * send-mode (#gchararray, the mode in use: gso, mmsg or plain), ssrc,
   * seqnum-offset, timestamp-offset and clock-rate (#guint),
   * srtp-backend (#gchararray, the libsrtp2 in use and its crypto library;
   * only in builds with SRTP); then #GstBaseSink's own fields (rendered,
   * dropped, average-rate).
   *
   * This replaces #GstBaseSink:stats, whose fields it includes.
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters: packets, bytes, access-units, send-errors, syscalls, "
          "srtp-errors, bitrate, pacing; buffer-size, send-mode",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:sdp:
   *
   * A session description (RFC 8866) for the stream, with the parameter
   * sets known so far in its fmtp line, or %NULL while the format is not
   * known yet.
   */
  g_object_class_install_property (gobject_class, PROP_SDP,
      g_param_spec_string ("sdp", "SDP",
          "Session description of the stream (NULL until caps are known)",
          NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:sdp-file:
   *
   * If set, #GstUvgRtpSink:sdp is written to this file as soon as the
   * parameter sets are known (right away for Opus), and again whenever
   * they change. A file that cannot be written is an error.
   */
  g_object_class_install_property (gobject_class, PROP_SDP_FILE,
      g_param_spec_string ("sdp-file", "SDP file",
          "Path to write the session description to (NULL = none)",
          DEFAULT_SDP_FILE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:srtp-key:
   *
   * Send SRTP with this master key followed by its master salt, given as
   * hex digits: the bytes srtpenc's key property takes. The length follows
   * #GstUvgRtpSink:srtp-cipher: 30 bytes (60 digits) for aes-128-icm, 46
   * for aes-256-icm, 28 for aes-128-gcm and 44 for aes-256-gcm. %NULL or
   * empty (the default) sends plain RTP.
   *
   * Read when the element starts; a key of the wrong length or with
   * characters that are not hex digits is an error then. Every start is a
   * new SRTP session from roll-over counter 0: do not restart with the same
   * key and a fixed #GstUvgRtpSink:ssrc, which would encrypt new packets
   * with key stream already used.
   */
  g_object_class_install_property (gobject_class, PROP_SRTP_KEY,
      g_param_spec_string ("srtp-key", "SRTP key",
          "SRTP master key followed by master salt, as hex digits, as srtpenc's "
          "key (NULL or empty = plain RTP)", DEFAULT_SRTP_KEY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:srtp-cipher:
   *
   * SRTP cipher, named as srtpenc's rtp-cipher: aes-128-icm (the default),
   * aes-256-icm, aes-128-gcm or aes-256-gcm. null, which would send the
   * payload unencrypted, is refused. Used only with
   * #GstUvgRtpSink:srtp-key.
   */
  g_object_class_install_property (gobject_class, PROP_SRTP_CIPHER,
      g_param_spec_enum ("srtp-cipher", "SRTP cipher",
          "SRTP cipher (as srtpenc's rtp-cipher; null is refused)",
          GST_TYPE_UVGRTP_SRTP_CIPHER, DEFAULT_SRTP_CIPHER,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:srtp-auth:
   *
   * SRTP authentication, named as srtpenc's rtp-auth: hmac-sha1-80 (the
   * default, a 10-byte tag) or hmac-sha1-32 (4 bytes) with the ICM
   * ciphers; null with the GCM ciphers, which authenticate by themselves
   * (a 16-byte tag). Any other pairing is an error when the element starts.
   */
  g_object_class_install_property (gobject_class, PROP_SRTP_AUTH,
      g_param_spec_enum ("srtp-auth", "SRTP authentication",
          "SRTP authentication (as srtpenc's rtp-auth; null with GCM only)",
          GST_TYPE_UVGRTP_SRTP_AUTH, DEFAULT_SRTP_AUTH,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));

  /* zrtp, zrtp-allow-clear, ..., and the zrtp-set-sas-verified signal */
  gst_uvgrtp_zrtp_install (gobject_class, PROP_ZRTP_FIRST,
      G_CALLBACK (gst_uvgrtp_sink_zrtp_set_sas_verified));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "uvgRTP sink", "Sink/Network/Payloader",
      "Packetizes H.264, H.265, H.266 or Opus into RTP and sends it over UDP",
      "gst-uvgrtp developers");

  basesink_class->start = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_start);
  basesink_class->stop = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_stop);
  basesink_class->set_caps = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_set_caps);
  basesink_class->render = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_render);
  basesink_class->render_list = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_render_list);
  basesink_class->event = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_event);
  basesink_class->unlock = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_unlock);
  basesink_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_uvgrtp_sink_unlock_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_AGGREGATE_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_SEND_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_SRTP_CIPHER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_SRTP_AUTH, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_UVGRTP_ZRTP_STATE, 0);
}

static void
gst_uvgrtp_sink_init (GstUvgRtpSink * self)
{
  self->host = g_strdup (DEFAULT_HOST);
  self->port = DEFAULT_PORT;
  self->bind_address = g_strdup (DEFAULT_BIND_ADDRESS);
  self->bind_port = DEFAULT_BIND_PORT;
  self->buffer_size = DEFAULT_BUFFER_SIZE;
  self->ttl = DEFAULT_TTL;
  self->ttl_mc = DEFAULT_TTL_MC;
  self->multicast_iface = g_strdup (DEFAULT_MULTICAST_IFACE);
  self->auto_multicast = DEFAULT_AUTO_MULTICAST;
  self->loop = DEFAULT_LOOP;
  self->qos_dscp = DEFAULT_QOS_DSCP;
  self->mtu = DEFAULT_MTU;
  self->pt = DEFAULT_PT;
  self->ssrc = DEFAULT_SSRC;
  self->seqnum_offset = DEFAULT_SEQNUM_OFFSET;
  self->timestamp_offset = DEFAULT_TIMESTAMP_OFFSET;
  self->config_interval = DEFAULT_CONFIG_INTERVAL;
  self->aggregate_mode = DEFAULT_AGGREGATE_MODE;
  self->send_mode = DEFAULT_SEND_MODE;
  self->send_thread = DEFAULT_SEND_THREAD;
  self->pad_fragments = DEFAULT_PAD_FRAGMENTS;
  self->pacing_rate = DEFAULT_PACING_RATE;
  self->pacing_factor = DEFAULT_PACING_FACTOR;
  self->pacing_burst = DEFAULT_PACING_BURST;
  self->rtcp = DEFAULT_RTCP;
  self->rtcp_port = DEFAULT_RTCP_PORT;
  self->rtcp_bind_port = DEFAULT_RTCP_BIND_PORT;
  self->rtcp_mux = DEFAULT_RTCP_MUX;
  self->cname = g_strdup (DEFAULT_CNAME);
  self->rtcp_min_interval = DEFAULT_RTCP_MIN_INTERVAL;
  self->do_retransmission = DEFAULT_DO_RETRANSMISSION;
  self->rtx_pt = DEFAULT_RTX_PT;
  self->rtx_max_size_time = DEFAULT_RTX_MAX_SIZE_TIME;
  self->rtx_max_size_packets = DEFAULT_RTX_MAX_SIZE_PACKETS;
  self->min_force_key_unit_interval = DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL;
  self->sdp_file = g_strdup (DEFAULT_SDP_FILE);
  self->srtp_key = g_strdup (DEFAULT_SRTP_KEY);
  self->srtp_cipher = DEFAULT_SRTP_CIPHER;
  self->srtp_auth = DEFAULT_SRTP_AUTH;
  gst_uvgrtp_zrtp_settings_init (&self->zrtp);

  self->sock.fd = -1;
  self->sock.wake_fd = -1;
  self->last_stats.tx_mode = (urtp_io_mode_t) DEFAULT_SEND_MODE;

  /* Like udpsink: packets leave at their running time. */
  gst_base_sink_set_sync (GST_BASE_SINK (self), TRUE);
}

static void
gst_uvgrtp_sink_finalize (GObject * object)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (object);

  /* stop() has run if start() did: no stream, no socket, no holds out */
  while (self->free_holds) {
    GstUvgRtpSinkHold *h = self->free_holds;
    self->free_holds = h->next;
    g_free (h);
  }
  g_free (self->host);
  g_free (self->bind_address);
  g_free (self->multicast_iface);
  g_free (self->sdp_file);
  g_free (self->cname);
  g_free (self->remote_ip);
  gst_uvgrtp_free_secret (self->srtp_key);
  gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
  gst_uvgrtp_zrtp_ctl_unref (self->zrtp_ctl);
  gst_uvgrtp_zrtp_settings_clear (&self->zrtp);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ------------------------------------------------------------------------ */
/* Properties                                                               */

/* Call with the object lock held. */

/* One structure per receiver that reports on the stream, as a GstValueArray
 * in the stats' "receivers" field. */
static void
receivers_to_stats (GstStructure * s, const urtp_sendstream_stats_t * st)
{
  GValue arr = G_VALUE_INIT;

  gst_value_array_init (&arr, st->nreceivers);
  for (unsigned i = 0; i < st->nreceivers; i++) {
    const urtp_sendstream_receiver_t *e = &st->receivers[i];
    GValue v = G_VALUE_INIT;

    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, gst_structure_new ("application/x-uvgrtp-receiver",
            "ssrc", G_TYPE_UINT, (guint) e->ssrc,
            "reports", G_TYPE_UINT64, (guint64) e->reports,
            "fraction-lost", G_TYPE_UINT, (guint) e->rr.fraction,
            "packets-lost", G_TYPE_INT, (gint) e->rr.lost,
            "jitter", G_TYPE_UINT, (guint) e->rr.jitter,
            "ext-max-seq", G_TYPE_UINT, (guint) e->rr.ext_max_seq,
            "round-trip-time", G_TYPE_INT64, (gint64) e->rtt_ns,
            "last-rr-time", G_TYPE_UINT64, (guint64) e->last_ntp, NULL));
    gst_value_array_append_and_take_value (&arr, &v);
  }
  gst_structure_take_value (s, "receivers", &arr);
}
static GstStructure *
build_stats (GstUvgRtpSink * self)
{
  GstUvgRtpZrtpCounters zc;
  urtp_sendstream_stats_t st;
  GstStructure *s;

  if (self->stream)
    urtp_sendstream_get_stats (self->stream, &st);
  else
    st = self->last_stats;
  memset (&zc, 0, sizeof zc);
  if (self->zrtp_ctl)
    gst_uvgrtp_zrtp_ctl_get_counters (self->zrtp_ctl, &zc);
  s = gst_structure_new ("application/x-uvgrtp-sink-stats",
      "packets", G_TYPE_UINT64, st.packets,
      "bytes", G_TYPE_UINT64, st.bytes,
      "access-units", G_TYPE_UINT64, st.access_units,
      "send-errors", G_TYPE_UINT64, st.send_errors,
      "syscalls", G_TYPE_UINT64, st.syscalls,
      "send-messages", G_TYPE_UINT64, st.send_messages,
      "padding-bytes", G_TYPE_UINT64, st.padding_bytes,
      "srtp-errors", G_TYPE_UINT64, st.srtp_errors,
      "zrtp-sent", G_TYPE_UINT64, zc.sent,
      "zrtp-received", G_TYPE_UINT64, zc.received,
      "zrtp-retransmits", G_TYPE_UINT64, zc.retransmits,
      "zrtp-bad", G_TYPE_UINT64, zc.bad,
      "zrtp-unexpected", G_TYPE_UINT64, zc.unexpected,
      "zrtp-auth-failures", G_TYPE_UINT64, zc.auth_fail,
      "zrtp-restarts", G_TYPE_UINT64, zc.restarts,
      "zrtp-foreign", G_TYPE_UINT64, zc.foreign,
      "zrtp-held", G_TYPE_UINT64, st.held_aus,
      "zrtp-held-packets", G_TYPE_UINT64, st.held_packets,
      "zrtp-sent-clear", G_TYPE_UINT64, st.sent_clear,
      "bitrate", G_TYPE_UINT64, st.bitrate,
      "pacing-rate", G_TYPE_UINT64, st.pacing_rate,
      "pacing-waits", G_TYPE_UINT64, st.pacing_waits,
      "pacing-waited", G_TYPE_UINT64, st.pacing_waited_ns,
      "pacing-max-wait", G_TYPE_UINT64, st.pacing_max_wait_ns,
      "pacing-max-queue", G_TYPE_UINT64, st.pacing_max_queue,
      "pacing-behind", G_TYPE_UINT64, st.pacing_behind,
      "rtcp-sent", G_TYPE_UINT64, st.rtcp_sent,
      "rtcp-received", G_TYPE_UINT64, st.rtcp_in,
      "rtcp-bad", G_TYPE_UINT64, st.rtcp_bad,
      "rtcp-foreign", G_TYPE_UINT64, st.rtcp_foreign,
      "rr-rejected", G_TYPE_UINT64, st.rr_rejected,
      "srtcp-auth-failures", G_TYPE_UINT64, st.srtcp.auth_fail,
      "srtcp-replays", G_TYPE_UINT64, st.srtcp.replay,
      "srtcp-errors", G_TYPE_UINT64, st.srtcp.other,
      "rr-received", G_TYPE_UINT64, st.rr_blocks,
      "rr-ssrc", G_TYPE_UINT, (guint) st.rr_ssrc,
      "fraction-lost", G_TYPE_UINT, (guint) st.rr.fraction,
      "packets-lost", G_TYPE_INT, (gint) st.rr.lost,
      "jitter", G_TYPE_UINT, (guint) st.rr.jitter,
      "round-trip-time", G_TYPE_INT64, (gint64) st.rtt_ns,
      "nacks-received", G_TYPE_UINT64, st.nacks_received,
      "nack-seqs", G_TYPE_UINT64, st.nack_seqs,
      "rtx-packets", G_TYPE_UINT64, st.rtx_packets,
      "rtx-bytes", G_TYPE_UINT64, st.rtx_bytes,
      "rtx-missing", G_TYPE_UINT64, st.rtx_missing,
      "rtx-repeats", G_TYPE_UINT64, st.rtx_repeats,
      "rtx-over-budget", G_TYPE_UINT64, st.rtx_over_budget,
      "rtx-errors", G_TYPE_UINT64, st.rtx_errors,
      "history-packets", G_TYPE_UINT64, st.history_packets,
      "pli-received", G_TYPE_UINT64, st.pli_received,
      "fir-received", G_TYPE_UINT64, st.fir_received,
      "keyframe-requests", G_TYPE_UINT64, st.keyframe_requests,
      "keyframe-requests-unknown", G_TYPE_UINT64, st.keyframe_requests_unknown,
      "rtx-ssrc", G_TYPE_UINT, (guint) st.rtx_ssrc,
      "rtx-pt", G_TYPE_UINT, (guint) (self->rtx_on ? self->cur_rtx_pt : 0),
      "buffer-size", G_TYPE_INT, self->eff_buffer_size,
      "send-mode", G_TYPE_STRING, urtp_io_mode_name (st.tx_mode),
      "ssrc", G_TYPE_UINT, self->cur_ssrc,
      "seqnum-offset", G_TYPE_UINT, (guint) self->cur_seq_offset,
      "timestamp-offset", G_TYPE_UINT, self->cur_ts_offset,
      "clock-rate", G_TYPE_UINT, self->negotiated ?
      urtp_codec_clock_rate (self->codec) : 0, NULL);
  receivers_to_stats (s, &st);
#ifdef URTP_HAVE_SRTP
  /* which libsrtp2 does the work: the private OpenSSL build or the system's */
  gst_structure_set (s, "srtp-backend", G_TYPE_STRING, urtp_srtp_backend (),
      NULL);
#endif
  return s;
}

/* The session description, or NULL while the format is unknown. Call with
 * the object lock held: the stream's own lock is taken for a moment only. */
static gchar *
build_sdp (GstUvgRtpSink * self)
{
  urtp_sdp_desc_t d;
  gchar buf[1024], *out;
  int n;

  if (!self->stream || !self->negotiated)
    return NULL;
  memset (&d, 0, sizeof d);
  d.addr = self->remote_ip ? self->remote_ip : self->host;
  d.port = (guint16) self->port;
  d.ttl = self->ttl_mc;
  d.session_name = "uvgrtpsink";
  d.rtcp_mux = self->rtcp_on && self->rtcp_mux_on;
  if (self->rtcp_on && !d.rtcp_mux)
    d.rtcp_port = (guint16) (self->rtcp_port ? self->rtcp_port : self->port + 1);
  /* feedback needs RTCP; retransmissions, the history too */
  d.feedback = self->rtcp_on;
  d.rtx = self->rtcp_on && self->rtx_on;
  d.rtx_pt = self->cur_rtx_pt;
  d.rtx_time_ms = self->rtx_max_size_time;
  n = urtp_sendstream_sdp (self->stream, &d, buf, sizeof buf);
  if (n < 0)
    return NULL;
  if ((gsize) n < sizeof buf)
    return g_strdup (buf);
  out = g_malloc ((gsize) n + 1);
  if (urtp_sendstream_sdp (self->stream, &d, out, (gsize) n + 1) != n) {
    g_free (out);
    return NULL;                /* the sets changed meanwhile: next time */
  }
  return out;
}

/* Where each property other than stats and sdp lives in the instance; its
 * GParamSpec's value type says how to read and write it. */
#define FIELD(f) G_STRUCT_OFFSET (GstUvgRtpSink, f)
static const gsize prop_field[PROP_ZRTP_FIRST] = {
  [PROP_HOST] = FIELD (host),[PROP_PORT] = FIELD (port),
  [PROP_BIND_ADDRESS] = FIELD (bind_address),
  [PROP_BIND_PORT] = FIELD (bind_port),
  [PROP_BUFFER_SIZE] = FIELD (buffer_size),[PROP_TTL] = FIELD (ttl),
  [PROP_TTL_MC] = FIELD (ttl_mc),
  [PROP_MULTICAST_IFACE] = FIELD (multicast_iface),
  [PROP_AUTO_MULTICAST] = FIELD (auto_multicast),[PROP_LOOP] = FIELD (loop),
  [PROP_QOS_DSCP] = FIELD (qos_dscp),[PROP_MTU] = FIELD (mtu),
  [PROP_PT] = FIELD (pt),[PROP_SSRC] = FIELD (ssrc),
  [PROP_SEQNUM_OFFSET] = FIELD (seqnum_offset),
  [PROP_TIMESTAMP_OFFSET] = FIELD (timestamp_offset),
  [PROP_CONFIG_INTERVAL] = FIELD (config_interval),
  [PROP_AGGREGATE_MODE] = FIELD (aggregate_mode),
  [PROP_SEND_MODE] = FIELD (send_mode),
  [PROP_SEND_THREAD] = FIELD (send_thread),
  [PROP_PAD_FRAGMENTS] = FIELD (pad_fragments),
  [PROP_PACING_RATE] = FIELD (pacing_rate),
  [PROP_PACING_FACTOR] = FIELD (pacing_factor),
  [PROP_PACING_BURST] = FIELD (pacing_burst),
  [PROP_RTCP] = FIELD (rtcp),
  [PROP_RTCP_PORT] = FIELD (rtcp_port),
  [PROP_RTCP_BIND_PORT] = FIELD (rtcp_bind_port),
  [PROP_RTCP_MUX] = FIELD (rtcp_mux),
  [PROP_CNAME] = FIELD (cname),
  [PROP_RTCP_MIN_INTERVAL] = FIELD (rtcp_min_interval),
  [PROP_DO_RETRANSMISSION] = FIELD (do_retransmission),
  [PROP_RTX_PT] = FIELD (rtx_pt),
  [PROP_RTX_MAX_SIZE_TIME] = FIELD (rtx_max_size_time),
  [PROP_RTX_MAX_SIZE_PACKETS] = FIELD (rtx_max_size_packets),
  [PROP_MIN_FORCE_KEY_UNIT_INTERVAL] = FIELD (min_force_key_unit_interval),
  [PROP_SDP_FILE] = FIELD (sdp_file),[PROP_SRTP_KEY] = FIELD (srtp_key),
  [PROP_SRTP_CIPHER] = FIELD (srtp_cipher),
  [PROP_SRTP_AUTH] = FIELD (srtp_auth),
};
#undef FIELD

/* Call with the object lock held. */
static void
set_pacing (GstUvgRtpSink * self)
{
  urtp_sendstream_set_pacing (self->stream, self->pacing_rate,
      self->pacing_factor, self->pacing_burst);
  self->warned_behind = FALSE;
}

static void
gst_uvgrtp_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (object);
  gpointer field;

  GST_OBJECT_LOCK (self);
  if (IS_ZRTP_PROP (prop_id)) {
    gst_uvgrtp_zrtp_settings_set_property (GST_OBJECT (self), &self->zrtp,
        prop_id - PROP_ZRTP_FIRST, value);
    GST_OBJECT_UNLOCK (self);
    return;
  }
  if (prop_id >= PROP_ZRTP_FIRST || !prop_field[prop_id]) {
    GST_OBJECT_UNLOCK (self);
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    return;
  }
  field = G_STRUCT_MEMBER_P (self, prop_field[prop_id]);
  switch (G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec))) {
    case G_TYPE_STRING:
      if (prop_id == PROP_SRTP_KEY)
        gst_uvgrtp_free_secret (*(gchar **) field);
      else
        g_free (*(gchar **) field);
      *(gchar **) field = g_value_dup_string (value);
      break;
    case G_TYPE_INT:
      *(gint *) field = g_value_get_int (value);
      break;
    case G_TYPE_UINT:
      *(guint *) field = g_value_get_uint (value);
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
  }
  if (prop_id == PROP_SDP_FILE)
    self->sdp_written_serial = 0;       /* write it (again) */
  if (prop_id == PROP_CONFIG_INTERVAL && self->stream)
    urtp_sendstream_set_config_interval (self->stream, self->config_interval);
  if ((prop_id == PROP_PACING_RATE || prop_id == PROP_PACING_FACTOR ||
          prop_id == PROP_PACING_BURST) && self->stream)
    set_pacing (self);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_uvgrtp_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (object);
  gpointer field;

  if (prop_id == PROP_STATS) {
    /* GstBaseSink's own counters (rendered, dropped, average-rate) too;
     * it takes the object lock itself */
    GstStructure *base = gst_base_sink_get_stats (GST_BASE_SINK (self));
    GstStructure *st;

    GST_OBJECT_LOCK (self);
    st = build_stats (self);
    GST_OBJECT_UNLOCK (self);
    for (gint i = 0; base && i < gst_structure_n_fields (base); i++) {
      const gchar *f = gst_structure_nth_field_name (base, i);
      if (!gst_structure_has_field (st, f))
        gst_structure_set_value (st, f, gst_structure_get_value (base, f));
    }
    if (base)
      gst_structure_free (base);
    g_value_take_boxed (value, st);
    return;
  }

  GST_OBJECT_LOCK (self);
  if (IS_ZRTP_PROP (prop_id)) {
    gst_uvgrtp_zrtp_settings_get_property (&self->zrtp, self->zrtp_ctl,
        prop_id - PROP_ZRTP_FIRST, value);
  } else if (prop_id == PROP_SDP) {
    g_value_take_string (value, build_sdp (self));
  } else if (prop_id < PROP_ZRTP_FIRST && prop_field[prop_id]) {
    field = G_STRUCT_MEMBER_P (self, prop_field[prop_id]);
    switch (G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec))) {
      case G_TYPE_STRING:
        g_value_set_string (value, *(gchar **) field);
        break;
      case G_TYPE_INT:
        g_value_set_int (value, *(gint *) field);
        break;
      case G_TYPE_UINT:
        g_value_set_uint (value, *(guint *) field);
        break;
      case G_TYPE_UINT64:
        g_value_set_uint64 (value, *(guint64 *) field);
        break;
      case G_TYPE_DOUBLE:
        g_value_set_double (value, *(gdouble *) field);
        break;
      case G_TYPE_BOOLEAN:
        g_value_set_boolean (value, *(gboolean *) field);
        break;
      case G_TYPE_ENUM:
        g_value_set_enum (value, *(gint *) field);
        break;
    }
  } else {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
  GST_OBJECT_UNLOCK (self);
}

static gboolean
gst_uvgrtp_sink_zrtp_set_sas_verified (GstUvgRtpSink * self, gboolean verified)
{
  return gst_uvgrtp_zrtp_element_set_sas_verified (GST_ELEMENT (self),
      &self->zrtp_ctl, verified);
}

/* ------------------------------------------------------------------------ */
/* The sending stream's callbacks (streaming thread)                        */

static void
release_hold (void *user, void *hold)
{
  GstUvgRtpSink *self = user;
  GstUvgRtpSinkHold *h = hold;

  gst_buffer_unmap (h->buf, &h->map);
  gst_buffer_unref (h->buf);
  h->buf = NULL;
  h->next = self->free_holds;
  self->free_holds = h;
}

/* ZRTP's keys, once the receiver confirmed them (lib/urtp/zrtp_ep.h). */
static bool
zrtp_key_sync (void *user, urtp_srtp_t * ctx)
{
#ifdef URTP_HAVE_ZRTP_EP
  GstUvgRtpSink *self = user;

  return urtp_zrtp_ep_sync_srtp (gst_uvgrtp_zrtp_ctl_endpoint
      (self->zrtp_ctl), ctx, &self->zrtp_serial, TRUE, self->cur_ssrc, 0);
#else
  return false;                 /* no ZRTP in this build: never started */
#endif
}

/* SRTCP with ZRTP's keys (RTCP thread): our reports with our key once the
 * receiver confirmed it, as the media; its reports with its key. */
static bool
zrtp_rtcp_key_sync (void *user, urtp_srtp_t * ctx, urtp_srtp_dir_t dir,
    uint32_t ssrc)
{
#ifdef URTP_HAVE_ZRTP_EP
  GstUvgRtpSink *self = user;

  /* three contexts: our reports (our SSRC), theirs, our retransmissions
   * (their own SSRC) */
  gint *serial = dir == URTP_SRTP_OUTBOUND && ssrc != self->cur_ssrc ?
      &self->zrtp_rtx_serial : &self->zrtp_rtcp_serial[dir];

  return urtp_zrtp_ep_sync_srtp_dir (gst_uvgrtp_zrtp_ctl_endpoint
      (self->zrtp_ctl), ctx, serial, dir, dir == URTP_SRTP_OUTBOUND, ssrc, 0);
#else
  return false;
#endif
}

/* What was sent before the keys never reached the receiver: its decoder
 * needs a key frame to start from. */
static void
zrtp_keys_ready (void *user)
{
  GstUvgRtpSink *self = user;

  if (self->codec == URTP_CODEC_OPUS)
    return;
  GST_INFO_OBJECT (self, "secure: asking upstream for a key frame");
  gst_pad_push_event (GST_BASE_SINK_PAD (self),
      gst_video_event_new_upstream_force_key_unit (GST_CLOCK_TIME_NONE,
          TRUE, ++self->zrtp_fku_count));
}

/* A receiver asked for a key frame (PLI or FIR; RTCP thread, already
 * rate-limited by the stream): upstream, the encoder gets a force-key-unit
 * event, as rtpbin's session sends one. */
static void
keyframe_request (void *user, bool fir)
{
  GstUvgRtpSink *self = user;
  guint count = (guint) g_atomic_int_add (&self->fku_count, 1) + 1;

  GST_INFO_OBJECT (self, "a receiver asked for a key frame (%s): asking "
      "upstream", fir ? "FIR" : "PLI");
  gst_pad_push_event (GST_BASE_SINK_PAD (self),
      gst_video_event_new_upstream_force_key_unit (GST_CLOCK_TIME_NONE,
          fir, count));
}

/* ------------------------------------------------------------------------ */
/* Start / stop                                                             */

static gboolean
resolves (const gchar * name)
{
  struct addrinfo hints, *res = NULL;

  memset (&hints, 0, sizeof (hints));
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo (name, NULL, &hints, &res) != 0)
    return FALSE;
  freeaddrinfo (res);
  return TRUE;
}

/* urtp_sock_open() resolves and binds itself; when it fails, find out which
 * setting was wrong and name its property. */
static void
post_open_error (GstUvgRtpSink * self, int r, const urtp_sock_config_t * c)
{
  const gchar *bind = c->bind_addr;

  if (r == -ENODEV) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No network interface '%s' (property 'multicast-iface')",
            c->multicast_iface), (NULL));
  } else if (r == -EADDRINUSE || r == -EADDRNOTAVAIL || r == -EACCES) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
        ("Could not bind to %s port %d (properties 'bind-address', "
            "'bind-port'): %s", bind ? bind : "any address", c->bind_port,
            g_strerror (-r)), (NULL));
  } else if (bind && !resolves (bind)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Could not resolve bind address '%s' (property 'bind-address')",
            bind), (NULL));
  } else if (!resolves (c->remote_addr)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Could not resolve host '%s' (property 'host')", c->remote_addr),
        (NULL));
  } else if (bind && r == -EINVAL) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Host '%s' (property 'host') has no address of the family of "
            "bind address '%s' (property 'bind-address')", c->remote_addr,
            bind), (NULL));
  } else {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
        ("Could not open a UDP socket to %s port %d (properties 'host', "
            "'port', 'bind-address', 'bind-port', 'multicast-iface', "
            "'send-mode'): %s", c->remote_addr, c->remote_port,
            g_strerror (-r)), (NULL));
  }
}

static gboolean
is_multicast (const struct sockaddr_storage *a)
{
  if (a->ss_family == AF_INET)
    return IN_MULTICAST (ntohl (((const struct sockaddr_in *) a)->
            sin_addr.s_addr));
  if (a->ss_family == AF_INET6)
    return IN6_IS_ADDR_MULTICAST (&((const struct sockaddr_in6 *) a)->
        sin6_addr);
  return FALSE;
}

/* Opens the socket from the network properties; starts ZRTP on it. */
static gboolean
open_network (GstUvgRtpSink * self, const GstUvgRtpZrtpSettings * zs)
{
  urtp_sock_config_t c;
  gchar *host, *bind, *iface, remote[NI_MAXHOST];
  gint port;
  gboolean mux;
  int r;

  memset (&c, 0, sizeof c);
  GST_OBJECT_LOCK (self);
  mux = self->rtcp && self->rtcp_mux;
  host = g_strdup (self->host);
  bind = g_strdup (self->bind_address);
  iface = g_strdup (self->multicast_iface);
  port = self->port;
  c.bind_port = (uint16_t) self->bind_port;
  c.ttl = self->ttl;
  c.ttl_mc = self->ttl_mc;
  c.multicast_loop = self->loop;
  c.dscp = self->qos_dscp;
  c.sndbuf = self->buffer_size;
  c.tx_mode = (urtp_io_mode_t) self->send_mode;
  GST_OBJECT_UNLOCK (self);
  c.bind_addr = bind && *bind ? bind : NULL;
  c.remote_addr = host;
  c.remote_port = (uint16_t) port;
  c.multicast_iface = iface && *iface ? iface : NULL;
  /* ZRTP and RTCP read the socket datagram by datagram: no GRO */
  c.rx_mode = zs->enabled || mux ? URTP_IO_MMSG : URTP_IO_AUTO;

  if (!host || !*host)
    goto no_host;
  if (port <= 0)
    goto bad_port;
  r = urtp_sock_open (&self->sock, &c);
  if (r < 0)
    goto open_failed;
  self->sock_open = TRUE;
  if (getnameinfo ((struct sockaddr *) &self->sock.remote,
          self->sock.remote_len, remote, sizeof remote, NULL, 0,
          NI_NUMERICHOST) != 0)
    g_strlcpy (remote, host, sizeof remote);
  GST_INFO_OBJECT (self, "sending to %s:%d (%s), send buffer %d bytes, "
      "mode %s", remote, port, host, self->sock.sndbuf,
      urtp_io_mode_name (self->sock.tx_mode));
  GST_OBJECT_LOCK (self);
  g_free (self->remote_ip);
  self->remote_ip = g_strdup (remote);
  self->eff_buffer_size = self->sock.sndbuf;
  GST_OBJECT_UNLOCK (self);

  self->zrtp_on = FALSE;
  if (zs->enabled) {
    GstUvgRtpZrtpCtl *ctl;

    if (is_multicast (&self->sock.remote))
      goto zrtp_multicast;
    ctl = gst_uvgrtp_zrtp_ctl_start (GST_ELEMENT (self), zs,
        GST_UVGRTP_ZRTP_SENDER, self->sock.fd, !mux,
        (const struct sockaddr *) &self->sock.remote, self->sock.remote_len,
        self->cur_ssrc);
    if (!ctl)
      goto fail;                /* the error is posted */
    GST_OBJECT_LOCK (self);
    self->zrtp_ctl = ctl;
    GST_OBJECT_UNLOCK (self);
    self->zrtp_on = TRUE;
#ifdef URTP_HAVE_ZRTP_EP
    self->zrtp_serial =
        urtp_zrtp_ep_serial (gst_uvgrtp_zrtp_ctl_endpoint (ctl)) - 1;
    self->zrtp_rtcp_serial[0] = self->zrtp_rtcp_serial[1] =
        self->zrtp_rtx_serial = self->zrtp_serial;
#endif
  }
  g_free (host);
  g_free (bind);
  g_free (iface);
  return TRUE;

  /* ERRORS */
no_host:
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
      ("No host to send to (property 'host')"), (NULL));
  goto fail;
bad_port:
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
      ("Invalid port %d (property 'port')", port), (NULL));
  goto fail;
open_failed:
  post_open_error (self, r, &c);
  goto fail;
zrtp_multicast:
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
      ("ZRTP needs a unicast host, not the multicast group %s (properties "
          "'zrtp', 'host')", remote), (NULL));
  goto fail;
fail:
  if (self->sock_open) {
    urtp_sock_close (&self->sock);
    self->sock_open = FALSE;
  }
  g_free (host);
  g_free (bind);
  g_free (iface);
  return FALSE;
}

/* The RTCP thread's clock: wall-clock NTP time now, and the RTP timestamp
 * of the same moment by the mapping buffers get (running time), so that
 * every sink of a pipeline reports one timeline. */
static bool
rtcp_clock (void *user, uint64_t * ntp, uint32_t * rtp_ts)
{
  GstUvgRtpSink *self = user;
  GstClock *clock = gst_element_get_clock (GST_ELEMENT (self));
  GstClockTime base = gst_element_get_base_time (GST_ELEMENT (self)), now;
  guint rate = 0;
  gint64 real;

  if (!clock)
    return false;
  now = gst_clock_get_time (clock);
  real = g_get_real_time ();
  gst_object_unref (clock);
  GST_OBJECT_LOCK (self);
  if (self->negotiated)
    rate = urtp_codec_clock_rate (self->codec);
  GST_OBJECT_UNLOCK (self);
  if (!rate || GST_STATE (self) != GST_STATE_PLAYING || now < base)
    return false;
  *ntp = urtp_ntp_from_unix_ns ((guint64) real * 1000);
  *rtp_ts = self->cur_ts_offset + (guint32)
      gst_util_uint64_scale_int_round (now - base, (gint) rate, GST_SECOND);
  return true;
}

/* A receiver's report about us arrived (RTCP thread). */
static void
rtcp_rr (void *user)
{
  GstUvgRtpSink *self = user;
  urtp_sendstream_stats_t st;
  urtp_sendstream_t *stream;

  GST_OBJECT_LOCK (self);
  stream = self->stream;
  if (stream)
    urtp_sendstream_get_stats (stream, &st);
  GST_OBJECT_UNLOCK (self);
  if (!stream)
    return;
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
          gst_structure_new ("uvgrtp-rtcp", "type", G_TYPE_STRING, "rr",
              "ssrc", G_TYPE_UINT, (guint) st.rr_ssrc,
              "fraction-lost", G_TYPE_UINT, (guint) st.rr.fraction,
              "packets-lost", G_TYPE_INT, (gint) st.rr.lost,
              "jitter", G_TYPE_UINT, (guint) st.rr.jitter,
              "ext-max-seq", G_TYPE_UINT, (guint) st.rr.ext_max_seq,
              "round-trip-time", G_TYPE_INT64, (gint64) st.rtt_ns, NULL)));
}

/* With rtcp-mux (RTCP thread): a datagram on the RTP socket that is not
 * RTCP. ZRTP's answers go to its endpoint, whose thread does not read the
 * socket then; anything else is dropped (counted by rtcpio). */
static void
rtcp_mux_other (void *user, const urtp_dgram_t * d)
{
#ifdef URTP_HAVE_ZRTP_EP
  GstUvgRtpSink *self = user;

  if (self->mux_zrtp && urtp_zrtp_is_zrtp (d->data, d->len))
    urtp_zrtp_ep_recv (self->mux_zrtp, d->data, d->len,
        (const struct sockaddr *) d->from, d->from->ss_family == AF_INET6 ?
        sizeof (struct sockaddr_in6) : sizeof (struct sockaddr_in));
#else
  (void) user;
  (void) d;
#endif
}

/* RTCP next to the RTP socket (or on it, with rtcp-mux), on the stream's
 * RTCP thread. Without it the element still sends: a warning names the
 * property to change. */
static void
start_rtcp (GstUvgRtpSink * self, urtp_sendstream_t * stream)
{
  urtp_rtcpio_config_t rc;
  gchar *bind;
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
  bind = g_strdup (self->bind_address);
  port = mux ? self->port : self->rtcp_port ? self->rtcp_port : self->port + 1;
  rc.bind_addr = bind;
  rc.bind_port = (guint16) self->rtcp_bind_port;
  rc.remote_addr = self->remote_ip;
  rc.remote_port = (guint16) MIN (port, G_MAXUINT16);
  rc.min_interval = self->rtcp_min_interval;
  rc.we_send = true;
  /* receivers learn from it where NACKs and key frame requests go */
  rc.early_first = true;
  GST_OBJECT_UNLOCK (self);
  if (mux) {
    rc.mux = &self->sock;
    rc.other = rtcp_mux_other;
    rc.other_user = self;
#ifdef URTP_HAVE_ZRTP_EP
    self->mux_zrtp = self->zrtp_on ?
        gst_uvgrtp_zrtp_ctl_endpoint (self->zrtp_ctl) : NULL;
#endif
  }

  r = urtp_rtcpio_open (&self->rtcpio, &rc, (guint64) g_get_monotonic_time ()
      * 1000);
  /* RTCP draws on the media's pacing budget, not beside it */
  if (r == 0)
    self->rtcpio.sock.pacer = urtp_sendstream_pacer (stream);
  if (r == 0 && (r = urtp_sendstream_rtcp_start (stream, &self->rtcpio,
              rtcp_clock, rtcp_rr, self)) < 0)
    urtp_rtcpio_close (&self->rtcpio);
  if (r < 0) {
    GST_ELEMENT_WARNING (self, RESOURCE, OPEN_WRITE,
        ("No RTCP: %s (set 'rtcp-bind-port', or 'rtcp=false')",
            g_strerror (-r)), (NULL));
  } else {
    self->rtcp_on = TRUE;
    GST_INFO_OBJECT (self, "RTCP to %s:%d from port %d%s", self->remote_ip,
        port, urtp_sock_local_port (&self->rtcpio.sock),
        mux ? " (rtcp-mux)" : "");
  }
  GST_OBJECT_LOCK (self);
  self->rtcp_mux_on = self->rtcp_on && mux;
  GST_OBJECT_UNLOCK (self);
  g_free (bind);
}

static gboolean
gst_uvgrtp_sink_start (GstBaseSink * bsink)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  urtp_sendstream_config_t sc;
  urtp_srtp_config_t srtp;
  urtp_sendstream_t *stream = NULL;
  guint8 key[URTP_SRTP_MAX_KEY_LEN];
  gchar *srtp_key, *cname;
  GstUvgRtpSrtpCipher srtp_cipher;
  GstUvgRtpSrtpAuth srtp_auth;
  GstUvgRtpZrtpSettings zs;
  GstUvgRtpZrtpCtl *old_ctl;
  gboolean ok;
  int r;

  memset (&sc, 0, sizeof sc);
  memset (&srtp, 0, sizeof srtp);
  GST_OBJECT_LOCK (self);
  self->cur_ssrc = self->ssrc == G_MAXUINT ? g_random_int () : self->ssrc;
  self->cur_seq_offset = self->seqnum_offset < 0 ?
      (guint16) g_random_int_range (0, 65536) : (guint16) self->seqnum_offset;
  self->cur_ts_offset = self->timestamp_offset == G_MAXUINT ?
      g_random_int () : self->timestamp_offset;
  memset (&self->last_stats, 0, sizeof self->last_stats);
  self->last_stats.tx_mode = (urtp_io_mode_t) self->send_mode;
  sc.ssrc = self->cur_ssrc;
  sc.seq_start = self->cur_seq_offset;
  /* retransmissions answer NACKs, which come over RTCP */
  self->rtx_on = self->do_retransmission && self->rtcp;
  self->cur_rtx_pt = self->rtx_pt >= 0 ? (guint8) self->rtx_pt :
      urtp_rtx_default_pt ((guint8) self->pt);
  sc.rtx = self->rtx_on;
  sc.rtx_pt = self->cur_rtx_pt;
  sc.rtx_max_packets = self->rtx_max_size_packets;
  sc.rtx_max_age_ns = (guint64) self->rtx_max_size_time * GST_MSECOND;
  sc.keyframe = keyframe_request;
  /* the library's 0 is its default: 1 ns lets every request through */
  sc.keyframe_interval = MAX (self->min_force_key_unit_interval, 1);
  if (self->rtx_on && self->cur_rtx_pt == self->pt) {
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Retransmissions need a payload type of their own: 'rtx-pt' is "
            "'pt' (%u); set another, or 'do-retransmission=false'", self->pt),
        (NULL));
    return FALSE;
  }
  sc.config_interval = self->config_interval;
  sc.send_thread = self->send_thread;
  srtp_key = g_strdup (self->srtp_key);
  cname = g_strdup (self->cname);
  srtp_cipher = self->srtp_cipher;
  srtp_auth = self->srtp_auth;
  gst_uvgrtp_zrtp_settings_copy (&zs, &self->zrtp);
  sc.allow_clear = zs.allow_clear;
  old_ctl = self->zrtp_ctl;
  self->zrtp_ctl = NULL;
  GST_OBJECT_UNLOCK (self);
  gst_uvgrtp_zrtp_ctl_unref (old_ctl);

  if (zs.enabled && srtp_key && *srtp_key) {
    gst_uvgrtp_free_secret (srtp_key);
    gst_uvgrtp_zrtp_settings_clear (&zs);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Properties 'zrtp' and 'srtp-key' cannot be used together: ZRTP "
            "agrees the SRTP keys itself"), (NULL));
    return FALSE;
  }
  /* SRTP first: a bad key is reported before any network setting */
  ok = gst_uvgrtp_srtp_parse (GST_ELEMENT (self), srtp_key, srtp_cipher,
      srtp_auth, &srtp, key) && open_network (self, &zs);
  gst_uvgrtp_free_secret (srtp_key);
  gst_uvgrtp_zrtp_settings_clear (&zs);
  if (!ok) {
    g_free (cname);
    goto fail;
  }

  sc.srtp = srtp.key_len ? &srtp : NULL;
  if (self->zrtp_on) {
    sc.key_sync = zrtp_key_sync;
    sc.rtcp_key_sync = zrtp_rtcp_key_sync;
    sc.keys_ready = zrtp_keys_ready;
  }
  sc.release = release_hold;
  sc.user = self;
  sc.cname = cname;
  sc.fail_timeout_ns = (int64_t) FAIL_ERROR_S * GST_SECOND;
  r = urtp_sendstream_new (&stream, &self->sock, &sc);
  if (r < 0 && sc.send_thread && r != -ENOTSUP && r != -EINVAL) {
    GST_WARNING_OBJECT (self, "no send thread (%s): sending inline",
        g_strerror (-r));
    sc.send_thread = FALSE;
    r = urtp_sendstream_new (&stream, &self->sock, &sc);
  }
  g_free (cname);
  if (r < 0)
    goto stream_failed;
  explicit_bzero (key, sizeof key);
  start_rtcp (self, stream);

  GST_OBJECT_LOCK (self);
  self->stream = stream;
  set_pacing (self);
  self->negotiated = FALSE;
  self->sdp_written_serial = 0;
  GST_OBJECT_UNLOCK (self);
  self->last_rtptime = self->cur_ts_offset;
  self->last_running_time = GST_CLOCK_TIME_NONE;
  self->errors_logged = self->srtp_errors_logged = 0;
  self->last_warning = 0;
  self->warned_no_ps = FALSE;
  g_atomic_int_set (&self->unlocked, 0);
  return TRUE;

  /* ERRORS */
stream_failed:
  if (sc.srtp)
    gst_uvgrtp_srtp_post_init_error (GST_ELEMENT (self), r, srtp_cipher,
        srtp.profile, 0);
  else
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("Could not set up the sending stream: %s", g_strerror (-r)));
  if (self->zrtp_on) {
    gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
    self->zrtp_on = FALSE;
  }
  urtp_sock_close (&self->sock);
  self->sock_open = FALSE;
  goto fail;
fail:
  explicit_bzero (key, sizeof key);
  return FALSE;
}

static gboolean
gst_uvgrtp_sink_stop (GstBaseSink * bsink)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  urtp_sendstream_t *stream = self->stream;

  /* before the socket closes; the last state stays readable */
  if (self->zrtp_on) {
    gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
    self->zrtp_on = FALSE;
  }
  if (stream) {
    /* a last report with BYE: the stream ends */
    if (self->rtcp_on) {
      urtp_sendstream_rtcp_stop (stream, TRUE);
      urtp_rtcpio_close (&self->rtcpio);
      self->rtcp_on = FALSE;
    }
    /* what the socket takes at once still goes out; a send waiting for
     * room must not hold up the state change */
    urtp_sendstream_unlock (stream);
    urtp_sendstream_drop (stream);
    GST_OBJECT_LOCK (self);
    urtp_sendstream_get_stats (stream, &self->last_stats);
    self->stream = NULL;
    self->negotiated = FALSE;
    self->sdp_written_serial = 0;
    GST_OBJECT_UNLOCK (self);
    urtp_sendstream_free (stream);
  }
  if (self->sock_open) {
    urtp_sock_close (&self->sock);
    self->sock_open = FALSE;
  }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Caps                                                                     */

static const gchar *
codec_display_name (urtp_codec_t codec)
{
  static const gchar *const names[] = { "H.264", "H.265", "H.266", "Opus" };

  return names[codec];
}

/* Writes sdp-file if it is set and the description is complete and has
 * changed since the last write. Streaming thread. */
static gboolean
maybe_write_sdp (GstUvgRtpSink * self)
{
  const urtp_params_t *ps = urtp_sendstream_params (self->stream);
  gchar *path = NULL, *sdp = NULL;
  GError *err = NULL;
  gboolean ok = TRUE;
  guint serial = ps->serial + 1;

  GST_OBJECT_LOCK (self);
  if (self->sdp_file && self->negotiated && self->sdp_written_serial != serial
      && (self->codec == URTP_CODEC_OPUS || urtp_params_complete (ps))) {
    path = g_strdup (self->sdp_file);
    sdp = build_sdp (self);
    self->sdp_written_serial = serial;
  }
  GST_OBJECT_UNLOCK (self);

  if (path && sdp) {
    if (g_file_set_contents (path, sdp, -1, &err)) {
      GST_INFO_OBJECT (self, "wrote SDP to %s", path);
    } else {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
          ("Could not write the SDP to '%s' (property 'sdp-file'): %s",
              path, err->message), (NULL));
      g_clear_error (&err);
      ok = FALSE;
    }
  }
  g_free (path);
  g_free (sdp);
  return ok;
}

static gboolean
gst_uvgrtp_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  GstStructure *st = gst_caps_get_structure (caps, 0);
  const gchar *name = gst_structure_get_name (st);
  const gchar *format = NULL, *alignment = NULL;
  const GValue *cd_val = gst_structure_get_value (st, "codec_data");
  urtp_sendstream_format_t fmt;
  gboolean prefixed = FALSE;
  gint channels = 0, family = 0;
  int r;

  GST_DEBUG_OBJECT (self, "caps %" GST_PTR_FORMAT, caps);

  memset (&fmt, 0, sizeof fmt);
  if (g_str_equal (name, "video/x-h264"))
    fmt.codec = URTP_CODEC_H264;
  else if (g_str_equal (name, "video/x-h265"))
    fmt.codec = URTP_CODEC_H265;
  else if (g_str_equal (name, "video/x-h266"))
    fmt.codec = URTP_CODEC_H266;
  else if (g_str_equal (name, "audio/x-opus"))
    fmt.codec = URTP_CODEC_OPUS;
  else
    goto bad_caps;

  if (fmt.codec == URTP_CODEC_OPUS) {
    if (gst_structure_get_int (st, "channel-mapping-family", &family)
        && family != 0)
      goto bad_opus_family;
    if (!gst_structure_get_int (st, "channels", &channels))
      channels = 2;
    if (channels < 1 || channels > 2)
      goto bad_opus_channels;
    fmt.channels = (guint) channels;
  } else {
    format = gst_structure_get_string (st, "stream-format");
    alignment = gst_structure_get_string (st, "alignment");
    if (!format || !alignment)
      goto bad_caps;
    fmt.align_nal = g_str_equal (alignment, "nal");
    if (!fmt.align_nal && !g_str_equal (alignment, "au"))
      goto bad_caps;
    if (!g_str_equal (format, "byte-stream")) {
      /* avc, hvc1, hev1: NAL units after lengths of codec_data's size */
      if (fmt.align_nal
          || (fmt.codec == URTP_CODEC_H264 && !g_str_equal (format, "avc"))
          || (fmt.codec == URTP_CODEC_H265 && !g_str_equal (format, "hvc1")
              && !g_str_equal (format, "hev1"))
          || fmt.codec == URTP_CODEC_H266)
        goto bad_caps;
      if (!cd_val || !GST_VALUE_HOLDS_BUFFER (cd_val))
        goto no_codec_data;
      prefixed = TRUE;
      fmt.input = URTP_INPUT_LENGTH_PREFIXED;
    }
  }

  GST_OBJECT_LOCK (self);
  fmt.pt = (uint8_t) self->pt;
  fmt.mtu = self->mtu;
  fmt.aggregate = self->aggregate_mode != GST_UVGRTP_AGGREGATE_NONE;
  fmt.pad_fragments = self->pad_fragments;
  GST_OBJECT_UNLOCK (self);
  if (fmt.mtu < URTP_PAY_MIN_MTU)
    goto mtu_too_small;

  /* A new codec forgets the parameter sets known so far; caps updated
   * mid-stream without codec_data keep them (an encoder may send them in
   * band only once, at the start); new codec_data replaces them. */
  r = urtp_sendstream_set_format (self->stream, &fmt);
  if (r == -EINTR) {
    /* a flush is under way: what waited to be sent goes */
    urtp_sendstream_drop (self->stream);
    r = urtp_sendstream_set_format (self->stream, &fmt);
  }
  if (r == -EMSGSIZE)
    goto mtu_too_large;
  if (r < 0)
    goto format_failed;

  if (cd_val && GST_VALUE_HOLDS_BUFFER (cd_val)) {
    GstBuffer *cd = gst_value_get_buffer (cd_val);
    GstMapInfo map;

    if (!gst_buffer_map (cd, &map, GST_MAP_READ))
      goto bad_codec_data;
    r = urtp_sendstream_set_codec_data (self->stream, map.data, map.size);
    if (r == -EINTR) {
      urtp_sendstream_drop (self->stream);
      r = urtp_sendstream_set_codec_data (self->stream, map.data, map.size);
    }
    gst_buffer_unmap (cd, &map);
    /* Some elements put a configuration record in byte-stream caps too:
     * its parameter sets are used when it parses, and it is no error when
     * it does not. */
    if (r < 0 && prefixed)
      goto bad_codec_data;
    if (r < 0)
      GST_DEBUG_OBJECT (self, "ignoring codec_data: %s", g_strerror (-r));
  }

  self->cur_mtu = (guint) fmt.mtu;
  GST_OBJECT_LOCK (self);
  self->codec = fmt.codec;
  self->negotiated = TRUE;
  GST_OBJECT_UNLOCK (self);
  GST_INFO_OBJECT (self, "%s, %s, mtu %u, aggregate %d",
      codec_display_name (fmt.codec), fmt.codec == URTP_CODEC_OPUS ? "-" :
      prefixed ? "length-prefixed" : fmt.align_nal ? "nal" : "au",
      (guint) fmt.mtu, fmt.aggregate);
  return maybe_write_sdp (self);

  /* ERRORS */
bad_caps:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, (NULL),
        ("Unsupported caps %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
bad_opus_family:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Opus with channel-mapping-family %d cannot be sent as RTP "
            "(RFC 7587 carries family 0 only)", family), (NULL));
    return FALSE;
  }
bad_opus_channels:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Opus with %d channels cannot be sent as RTP (1 or 2 only)",
            channels), (NULL));
    return FALSE;
  }
no_codec_data:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Length-prefixed %s input needs codec_data in its caps",
            codec_display_name (fmt.codec)), (NULL));
    return FALSE;
  }
bad_codec_data:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Malformed %s codec_data", codec_display_name (fmt.codec)), (NULL));
    return FALSE;
  }
mtu_too_small:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("MTU %u is too small for the %s payload format (property 'mtu', "
            "at least %u)", (guint) fmt.mtu, codec_display_name (fmt.codec),
            (guint) URTP_PAY_MIN_MTU), (NULL));
    return FALSE;
  }
mtu_too_large:
  {
    guint max = (guint) urtp_sendstream_mtu_max (self->stream);

    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("MTU %u leaves no room for the %u-byte SRTP tag in a UDP datagram "
            "(property 'mtu', at most %u with this srtp-cipher and srtp-auth)",
            (guint) fmt.mtu, 65535 - max, max), (NULL));
    return FALSE;
  }
format_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Invalid payloader settings (properties 'mtu', 'pt'): %s",
            g_strerror (-r)), (NULL));
    return FALSE;
  }
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                */

/* RTP timestamp of buf from its running time. */
static guint32
rtp_time (GstUvgRtpSink * self, GstBuffer * buf, GstClockTime * running)
{
  GstBaseSink *bsink = GST_BASE_SINK (self);
  GstClockTime ts = GST_BUFFER_PTS (buf), rt = GST_CLOCK_TIME_NONE;

  if (!GST_CLOCK_TIME_IS_VALID (ts))
    ts = GST_BUFFER_DTS (buf);
  if (GST_CLOCK_TIME_IS_VALID (ts)) {
    if (bsink->segment.format == GST_FORMAT_TIME)
      rt = gst_segment_to_running_time (&bsink->segment, GST_FORMAT_TIME, ts);
    else
      rt = ts;
  }
  if (GST_CLOCK_TIME_IS_VALID (rt)) {
    self->last_running_time = rt;
    self->last_rtptime = self->cur_ts_offset + (guint32)
        gst_util_uint64_scale_int_round (rt,
        (gint) urtp_codec_clock_rate (self->codec), GST_SECOND);
  }
  *running = self->last_running_time;
  return self->last_rtptime;
}

static void
post_send_failed (GstUvgRtpSink * self)
{
  urtp_sendstream_stats_t st;

  urtp_sendstream_get_stats (self->stream, &st);
  GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
      ("Sending to %s port %d has failed for %d seconds", self->remote_ip,
          self->port, FAIL_ERROR_S), ("last error: %s",
          g_strerror (st.last_error)));
}

/* Maps buf and hands it to the stream, which packetizes it into the batch
 * of this render; the mapping is released once no packet needs it. */
static GstFlowReturn
push_buffer (GstUvgRtpSink * self, GstBuffer * buf)
{
  GstUvgRtpSinkHold *h = self->free_holds;
  GstClockTime rt;
  guint32 ts = rtp_time (self, buf, &rt);
  guint flags = 0;
  gsize size;
  int r;

  if (h)
    self->free_holds = h->next;
  else
    h = g_new0 (GstUvgRtpSinkHold, 1);
  /* kept for retransmission, a pool's buffer would not go back to its pool
   * for up to rtx-max-size-time: a copy is kept instead */
  h->buf = self->rtx_on && buf->pool ? gst_buffer_copy_deep (buf) :
      gst_buffer_ref (buf);
  if (!gst_buffer_map (h->buf, &h->map, GST_MAP_READ)) {
    gst_buffer_unref (h->buf);
    h->buf = NULL;
    h->next = self->free_holds;
    self->free_holds = h;
    GST_ELEMENT_ERROR (self, RESOURCE, READ, (NULL),
        ("Could not map buffer"));
    return GST_FLOW_ERROR;
  }
  size = h->map.size;
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_MARKER))
    flags |= URTP_SEND_END_AU;
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT)
      || GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_RESYNC))
    flags |= URTP_SEND_DISCONT;
  if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_HEADER))
    flags |= URTP_SEND_HEADER;

  /* h goes back to the free list through release_hold(), in every case */
  r = urtp_sendstream_push (self->stream, h->map.data, size, ts,
      GST_CLOCK_TIME_IS_VALID (rt) ? (gint64) rt : -1, flags, h);
  if (r >= 0)
    return GST_FLOW_OK;

  switch (r) {
    case -EBADMSG:
      GST_ELEMENT_WARNING (self, STREAM, DECODE, (NULL),
          ("Dropping a buffer whose NAL unit lengths overrun it (%"
              G_GSIZE_FORMAT " bytes)", size));
      return GST_FLOW_OK;
    case -EMSGSIZE:
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
          ("Opus packet of %" G_GSIZE_FORMAT " bytes does not fit in one RTP "
              "packet of at most %u bytes (property 'mtu')", size,
              self->cur_mtu), (NULL));
      return GST_FLOW_ERROR;
    case -EINTR:
      /* the flush of a parameter-set change was interrupted: this buffer is
       * lost, what is left of the batch before waits for send_batch */
      return GST_FLOW_OK;
    case -ETIMEDOUT:
      post_send_failed (self);
      return GST_FLOW_ERROR;
    default:
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
          ("Packetizing failed: %s", g_strerror (-r)));
      return GST_FLOW_ERROR;
  }
}

/* Logs what the last sends counted, at most once a second. */
static void
log_send_trouble (GstUvgRtpSink * self)
{
  urtp_sendstream_stats_t st;
  gint64 now;

  urtp_sendstream_get_stats (self->stream, &st);
  if (st.config_missing && !self->warned_no_ps) {
    GST_WARNING_OBJECT (self, "config-interval: no parameter sets known to "
        "send");
    self->warned_no_ps = TRUE;
  }
  if (st.send_errors == self->errors_logged
      && st.srtp_errors == self->srtp_errors_logged)
    return;
  now = g_get_monotonic_time ();
  if (now - self->last_warning < G_USEC_PER_SEC)
    return;
  GST_WARNING_OBJECT (self, "%" G_GUINT64_FORMAT " send errors to %s port "
      "%d (packets refused, or ICMP unreachable reports; last: %s), %"
      G_GUINT64_FORMAT " packets SRTP refused", st.send_errors,
      self->remote_ip, self->port, g_strerror (st.last_error),
      st.srtp_errors);
  self->errors_logged = st.send_errors;
  self->srtp_errors_logged = st.srtp_errors;
  self->last_warning = now;
}

/* What the stream's -EINTR means here: an unlock for a flush or a state
 * change is current (unlock_stop, which needs the PREROLL lock this render
 * holds, has not run), so wait in preroll: PLAYING again resumes the send,
 * flushing drops it. An interruption left from an unlock already over is
 * simply resumed. */
static GstFlowReturn
wait_after_unlock (GstUvgRtpSink * self)
{
  GstFlowReturn ret = GST_FLOW_OK;

  if (g_atomic_int_get (&self->unlocked)) {
    GST_DEBUG_OBJECT (self, "send interrupted: waiting for PLAYING or flush");
    ret = gst_base_sink_wait_preroll (GST_BASE_SINK (self));
  }
  if (ret != GST_FLOW_OK)
    urtp_sendstream_drop (self->stream);
  return ret;
}

/* Warns once each time the stream falls behind its pacing rate: upstream
 * is then held back by the pacer, and a live source will drop. */
static void
check_pacing (GstUvgRtpSink * self)
{
  gboolean behind = urtp_sendstream_pacing_behind (self->stream);
  urtp_sendstream_stats_t st;

  if (behind && !self->warned_behind) {
    urtp_sendstream_get_stats (self->stream, &st);
    GST_ELEMENT_WARNING (self, RESOURCE, WRITE,
        ("Pacing at %" G_GUINT64_FORMAT " bit/s is below the stream's bitrate: "
            "raise 'pacing-rate' or 'pacing-factor'", st.pacing_rate),
        ("the sends waited for the pacer more than 95%% of the last second; "
            "sent %" G_GUINT64_FORMAT " bit/s", st.bitrate));
  }
  self->warned_behind = behind;
}

/* Sends the batch the buffers of this render made. */
static GstFlowReturn
send_batch (GstUvgRtpSink * self)
{
  GstFlowReturn ret;
  int r;

  while ((r = urtp_sendstream_flush (self->stream)) == -EINTR) {
    if ((ret = wait_after_unlock (self)) != GST_FLOW_OK)
      return ret;
  }
  log_send_trouble (self);
  check_pacing (self);
  if (r == -ETIMEDOUT) {
    post_send_failed (self);
    return GST_FLOW_ERROR;
  }
  if (r < 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("Sending failed: %s", g_strerror (-r)));
    return GST_FLOW_ERROR;
  }
  return maybe_write_sdp (self) ? GST_FLOW_OK : GST_FLOW_ERROR;
}

static GstFlowReturn
gst_uvgrtp_sink_render (GstBaseSink * bsink, GstBuffer * buffer)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  GstFlowReturn ret;

  if (!self->negotiated) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("Buffer before caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  ret = push_buffer (self, buffer);
  if (ret != GST_FLOW_OK) {
    urtp_sendstream_drop (self->stream);
    return ret;
  }
  return send_batch (self);
}

/* All buffers of a list go out in one send. */
static GstFlowReturn
gst_uvgrtp_sink_render_list (GstBaseSink * bsink, GstBufferList * list)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  guint len = gst_buffer_list_length (list);
  GstFlowReturn ret = GST_FLOW_OK;

  if (!self->negotiated) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("Buffer list before caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  for (guint i = 0; i < len && ret == GST_FLOW_OK; i++)
    ret = push_buffer (self, gst_buffer_list_get (list, i));
  if (ret != GST_FLOW_OK) {
    urtp_sendstream_drop (self->stream);
    return ret;
  }
  return send_batch (self);
}

/* EOS means everything before it has left: the access unit in flight too.
 * This runs outside the PREROLL lock, so an unlock here cannot wait in
 * preroll: the rest is dropped. */
static gboolean
gst_uvgrtp_sink_event (GstBaseSink * bsink, GstEvent * event)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS && self->stream
      && urtp_sendstream_drain (self->stream) == -EINTR)
    urtp_sendstream_drop (self->stream);
  return GST_BASE_SINK_CLASS (parent_class)->event (bsink, event);
}

/* A send waiting for room in a full socket buffer returns: no state change
 * or flush waits for the network. */
static gboolean
gst_uvgrtp_sink_unlock (GstBaseSink * bsink)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);

  GST_OBJECT_LOCK (self);
  g_atomic_int_set (&self->unlocked, 1);
  if (self->stream)
    urtp_sendstream_unlock (self->stream);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_uvgrtp_sink_unlock_stop (GstBaseSink * bsink)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);

  GST_OBJECT_LOCK (self);
  g_atomic_int_set (&self->unlocked, 0);
  if (self->stream)
    urtp_sendstream_unlock_stop (self->stream);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}
