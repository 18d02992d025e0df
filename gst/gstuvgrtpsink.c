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
 * equal-sized packets stay equal for UDP GSO). The element sends no RTCP,
 * so SRTCP is not used and it has no srtcp-cipher or srtcp-auth property.
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
#include "gstuvgrtpzrtpctl.h"
#include "urtp/scl.h"

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
#define DEFAULT_SDP_FILE          NULL
#define DEFAULT_SRTP_KEY          NULL
#define DEFAULT_SRTP_CIPHER       GST_UVGRTP_DEFAULT_SRTP_CIPHER
#define DEFAULT_SRTP_AUTH         GST_UVGRTP_DEFAULT_SRTP_AUTH

/* The smallest MTU rtpbasepayload accepts; below URTP_PAY_MIN_MTU the
 * payload formats themselves refuse it, with an error naming the property. */
#define MIN_MTU                   28
/* Every send failing for this long is an error rather than a warning. */
#define FAIL_ERROR_US             (2 * G_USEC_PER_SEC)

/* Parameter-set kinds (index into ps[]), in sending order. */
enum
{
  PS_DCI,
  PS_VPS,
  PS_SPS,
  PS_PPS,
};
#define PS_BIT(k) (1u << (k))
/* Parameter sets held per kind; more are dropped (and logged). */
#define PS_MAX_PER_KIND 16

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
static void hold_release (GstUvgRtpSinkHold * h);
static void tx_drain (GstUvgRtpSink * self);
static void sender_done (void *user, const urtp_batch_t * b, int r,
    uint64_t reported);
static GstFlowReturn gst_uvgrtp_sink_render (GstBaseSink * bsink,
    GstBuffer * buffer);
static GstFlowReturn gst_uvgrtp_sink_render_list (GstBaseSink * bsink,
    GstBufferList * list);
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
   * all #guint64; buffer-size (#gint, the send buffer the kernel granted),
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
          "srtp-errors; buffer-size, send-mode",
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
  self->sdp_file = g_strdup (DEFAULT_SDP_FILE);
  self->srtp_key = g_strdup (DEFAULT_SRTP_KEY);
  self->srtp_cipher = DEFAULT_SRTP_CIPHER;
  self->srtp_auth = DEFAULT_SRTP_AUTH;
  gst_uvgrtp_zrtp_settings_init (&self->zrtp);

  self->sock.fd = -1;
  self->sock.wake_fd = -1;
  self->eff_send_mode = (urtp_io_mode_t) DEFAULT_SEND_MODE;
  self->send_thread = DEFAULT_SEND_THREAD;
  self->pad_fragments = DEFAULT_PAD_FRAGMENTS;
  for (guint i = 0; i < 2; i++) {
    urtp_batch_init (&self->batch_store[i]);
    urtp_batch_init (&self->srtp_store[i]);
  }
  self->cur = 0;
  self->batch = &self->batch_store[0];
  self->srtp_batch = &self->srtp_store[0];
  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++) {
    self->ps[k] = g_ptr_array_new_with_free_func ((GDestroyNotify)
        g_bytes_unref);
    self->pending_ps[k] =
        g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  }

  /* Like udpsink: packets leave at their running time. */
  gst_base_sink_set_sync (GST_BASE_SINK (self), TRUE);
}

static void
gst_uvgrtp_sink_finalize (GObject * object)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (object);

  if (self->sock_open)
    urtp_sock_close (&self->sock);
  if (self->have_pay)
    urtp_pay_destroy (&self->pay);
  gst_uvgrtp_srtp_close (&self->srtp);
  for (guint i = 0; i < 2; i++) {
    urtp_batch_free (&self->batch_store[i]);
    urtp_batch_free (&self->srtp_store[i]);
    g_free (self->hold[i].bufs);
    g_free (self->hold[i].maps);
  }
  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++) {
    g_ptr_array_unref (self->ps[k]);
    g_ptr_array_unref (self->pending_ps[k]);
  }
  g_free (self->nals);
  g_free (self->host);
  g_free (self->bind_address);
  g_free (self->multicast_iface);
  g_free (self->sdp_file);
  g_free (self->remote_ip);
  gst_uvgrtp_free_secret (self->srtp_key);
  gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
  gst_uvgrtp_zrtp_ctl_unref (self->zrtp_ctl);
  gst_uvgrtp_zrtp_settings_clear (&self->zrtp);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ------------------------------------------------------------------------ */
/* Bitstream helpers                                                        */

/* Removes emulation-prevention bytes (00 00 03 -> 00 00) from the first
 * bytes of a NAL unit payload; returns how many bytes were written. */
static gsize
rbsp_unescape (const guint8 * src, gsize len, guint8 * dst, gsize cap)
{
  gsize o = 0;
  guint zeros = 0;

  for (gsize i = 0; i < len && o < cap; i++) {
    if (zeros >= 2 && src[i] == 3) {
      zeros = 0;
      continue;
    }
    dst[o++] = src[i];
    zeros = src[i] == 0 ? zeros + 1 : 0;
  }
  return o;
}

/* Parameter-set kind of a NAL unit type, or -1. */
static gint
ps_kind (urtp_codec_t codec, guint type)
{
  switch (codec) {
    case URTP_CODEC_H264:
      return type == 7 ? PS_SPS : type == 8 ? PS_PPS : -1;
    case URTP_CODEC_H265:
      return type == 32 ? PS_VPS : type == 33 ? PS_SPS : type == 34 ? PS_PPS :
          -1;
    case URTP_CODEC_H266:
      return type == 13 ? PS_DCI : type == 14 ? PS_VPS : type == 15 ? PS_SPS :
          type == 16 ? PS_PPS : -1;
    default:
      return -1;
  }
}

/* Kinds a decoder cannot start without. */
static guint
ps_required (urtp_codec_t codec)
{
  if (codec == URTP_CODEC_H265)
    return PS_BIT (PS_VPS) | PS_BIT (PS_SPS) | PS_BIT (PS_PPS);
  return PS_BIT (PS_SPS) | PS_BIT (PS_PPS);
}

static gboolean
is_aud (urtp_codec_t codec, guint type)
{
  switch (codec) {
    case URTP_CODEC_H264:
      return type == 9;
    case URTP_CODEC_H265:
      return type == 35;
    case URTP_CODEC_H266:
      return type == 20;
    default:
      return FALSE;
  }
}

static const gchar *
codec_display_name (urtp_codec_t codec)
{
  switch (codec) {
    case URTP_CODEC_H264:
      return "H.264";
    case URTP_CODEC_H265:
      return "H.265";
    case URTP_CODEC_H266:
      return "H.266";
    default:
      return "Opus";
  }
}

static gboolean
ps_lists_equal (GPtrArray * a, GPtrArray * b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (!g_bytes_equal (g_ptr_array_index (a, i), g_ptr_array_index (b, i)))
      return FALSE;
  return TRUE;
}

/* Call with the object lock held. */
static guint
ps_known_mask (GstUvgRtpSink * self)
{
  guint mask = 0;

  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++)
    if (self->ps[k]->len > 0)
      mask |= PS_BIT (k);
  return mask;
}

static void
ps_clear_all (GstUvgRtpSink * self)
{
  tx_drain (self);              /* the batch in flight may point into them */
  GST_OBJECT_LOCK (self);
  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++) {
    g_ptr_array_set_size (self->ps[k], 0);
    g_ptr_array_set_size (self->pending_ps[k], 0);
  }
  self->ps_serial++;
  GST_OBJECT_UNLOCK (self);
}

/* ------------------------------------------------------------------------ */
/* Session description                                                      */

static void
append_sprop (GString * s, const gchar * name, GPtrArray * list,
    gboolean * first)
{
  if (list->len == 0)
    return;
  g_string_append_printf (s, "%s%s=", *first ? "" : ";", name);
  *first = FALSE;
  for (guint i = 0; i < list->len; i++) {
    gsize len;
    const guint8 *d = g_bytes_get_data (g_ptr_array_index (list, i), &len);
    gchar *b64 = g_base64_encode (d, len);
    g_string_append_printf (s, "%s%s", i ? "," : "", b64);
    g_free (b64);
  }
}

/* Builds the SDP, or returns NULL while the format is unknown. Call with the
 * object lock held. */
static gchar *
build_sdp (GstUvgRtpSink * self)
{
  const gchar *addr = self->remote_ip ? self->remote_ip : self->host;
  gboolean v6, mc = FALSE;
  GString *s, *fmtp;
  guint pt = self->pt;
  guint8 rbsp[16];
  gsize n;

  if (!self->have_codec || !addr)
    return NULL;

  v6 = strchr (addr, ':') != NULL;
  if (v6) {
    struct in6_addr a6;
    mc = inet_pton (AF_INET6, addr, &a6) == 1 && IN6_IS_ADDR_MULTICAST (&a6);
  } else {
    struct in_addr a4;
    mc = inet_pton (AF_INET, addr, &a4) == 1
        && IN_MULTICAST (ntohl (a4.s_addr));
  }

  s = g_string_new ("v=0\r\n");
  g_string_append_printf (s, "o=- %u 1 IN %s %s\r\n", self->cur_ssrc,
      v6 ? "IP6" : "IP4", v6 ? "::1" : "127.0.0.1");
  g_string_append (s, "s=uvgrtpsink\r\n");
  if (mc && !v6)
    g_string_append_printf (s, "c=IN IP4 %s/%d\r\n", addr, self->ttl_mc);
  else
    g_string_append_printf (s, "c=IN %s %s\r\n", v6 ? "IP6" : "IP4", addr);
  g_string_append (s, "t=0 0\r\n");

  if (self->codec == URTP_CODEC_OPUS) {
    g_string_append_printf (s, "m=audio %d RTP/AVP %u\r\n", self->port, pt);
    g_string_append_printf (s, "a=rtpmap:%u opus/48000/2\r\n", pt);
    g_string_append_printf (s, "a=fmtp:%u sprop-stereo=%d\r\n", pt,
        self->opus_channels == 2);
    return g_string_free (s, FALSE);
  }

  g_string_append_printf (s, "m=video %d RTP/AVP %u\r\n", self->port, pt);
  g_string_append_printf (s, "a=rtpmap:%u %s/90000\r\n", pt,
      urtp_codec_name (self->codec));

  fmtp = g_string_new (NULL);
  if (self->codec == URTP_CODEC_H264) {
    g_string_append (fmtp, "packetization-mode=1");
    if (self->ps[PS_SPS]->len > 0) {
      gsize len;
      const guint8 *sps =
          g_bytes_get_data (g_ptr_array_index (self->ps[PS_SPS], 0), &len);
      /* profile_idc, constraint flags, level_idc follow the NAL header */
      n = rbsp_unescape (sps + 1, len - 1, rbsp, 3);
      if (n == 3)
        g_string_append_printf (fmtp, ";profile-level-id=%02x%02x%02x",
            rbsp[0], rbsp[1], rbsp[2]);
    }
    if (self->ps[PS_SPS]->len > 0 && self->ps[PS_PPS]->len > 0) {
      g_string_append (fmtp, ";sprop-parameter-sets=");
      for (guint k = PS_SPS; k <= PS_PPS; k++) {
        for (guint i = 0; i < self->ps[k]->len; i++) {
          gsize len;
          const guint8 *d =
              g_bytes_get_data (g_ptr_array_index (self->ps[k], i), &len);
          gchar *b64 = g_base64_encode (d, len);
          g_string_append_printf (fmtp, "%s%s",
              (k == PS_SPS && i == 0) ? "" : ",", b64);
          g_free (b64);
        }
      }
    }
  } else {
    gboolean first = TRUE;
    gint profile = -1, tier = -1, level = -1;

    if (self->ps[PS_SPS]->len > 0) {
      gsize len;
      const guint8 *sps =
          g_bytes_get_data (g_ptr_array_index (self->ps[PS_SPS], 0), &len);

      n = len > 2 ? rbsp_unescape (sps + 2, len - 2, rbsp, sizeof (rbsp)) : 0;
      if (self->codec == URTP_CODEC_H265 && n >= 13) {
        /* vps id, max sub-layers, nesting | space, tier, profile_idc |
         * 32 compatibility flags | 48 constraint flags | level_idc */
        if ((rbsp[1] >> 6) == 0) {
          tier = (rbsp[1] >> 5) & 1;
          profile = rbsp[1] & 0x1f;
          level = rbsp[12];
        }
      } else if (self->codec == URTP_CODEC_H266 && n >= 4 && (rbsp[1] & 1)) {
        /* sps id, vps id | max sub-layers, chroma format, CTU size,
         * ptl_dpb_hrd_params_present_flag | profile_idc(7) tier(1) | level */
        profile = rbsp[2] >> 1;
        tier = rbsp[2] & 1;
        level = rbsp[3];
      }
    }
    if (profile >= 0) {
      g_string_append_printf (fmtp, "profile-id=%d;tier-flag=%d;level-id=%d",
          profile, tier, level);
      first = FALSE;
    }
    if (self->codec == URTP_CODEC_H266)
      append_sprop (fmtp, "sprop-dci", self->ps[PS_DCI], &first);
    append_sprop (fmtp, "sprop-vps", self->ps[PS_VPS], &first);
    append_sprop (fmtp, "sprop-sps", self->ps[PS_SPS], &first);
    append_sprop (fmtp, "sprop-pps", self->ps[PS_PPS], &first);
  }
  if (fmtp->len > 0)
    g_string_append_printf (s, "a=fmtp:%u %s\r\n", pt, fmtp->str);
  g_string_free (fmtp, TRUE);
  return g_string_free (s, FALSE);
}

/* Writes sdp-file if it is set and the description is complete and has
 * changed since the last write. Streaming thread. */
static gboolean
maybe_write_sdp (GstUvgRtpSink * self)
{
  gchar *path = NULL, *sdp = NULL;
  GError *err = NULL;
  gboolean ok = TRUE;
  guint serial;

  GST_OBJECT_LOCK (self);
  serial = self->ps_serial + 1;
  if (self->sdp_file && self->have_codec && self->sdp_written_serial != serial
      && (self->codec == URTP_CODEC_OPUS
          || (ps_known_mask (self) & ps_required (self->codec)) ==
          ps_required (self->codec))) {
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

/* ------------------------------------------------------------------------ */
/* Properties                                                               */

static GstStructure *
build_stats (GstUvgRtpSink * self)
{
  GstUvgRtpZrtpCounters zc;
  GstStructure *s;

  memset (&zc, 0, sizeof zc);
  if (self->zrtp_ctl)
    gst_uvgrtp_zrtp_ctl_get_counters (self->zrtp_ctl, &zc);
  s = gst_structure_new ("application/x-uvgrtp-sink-stats",
      "packets", G_TYPE_UINT64, self->packets,
      "bytes", G_TYPE_UINT64, self->bytes,
      "access-units", G_TYPE_UINT64, self->access_units,
      "send-errors", G_TYPE_UINT64, self->send_errors,
      "syscalls", G_TYPE_UINT64, self->syscalls,
      "send-messages", G_TYPE_UINT64, self->send_messages,
      "padding-bytes", G_TYPE_UINT64, self->padding_bytes,
      "srtp-errors", G_TYPE_UINT64, self->srtp_errors,
      "zrtp-sent", G_TYPE_UINT64, zc.sent,
      "zrtp-received", G_TYPE_UINT64, zc.received,
      "zrtp-retransmits", G_TYPE_UINT64, zc.retransmits,
      "zrtp-bad", G_TYPE_UINT64, zc.bad,
      "zrtp-unexpected", G_TYPE_UINT64, zc.unexpected,
      "zrtp-auth-failures", G_TYPE_UINT64, zc.auth_fail,
      "zrtp-restarts", G_TYPE_UINT64, zc.restarts,
      "zrtp-foreign", G_TYPE_UINT64, zc.foreign,
      "zrtp-held", G_TYPE_UINT64, self->zrtp_held,
      "zrtp-held-packets", G_TYPE_UINT64, self->zrtp_held_packets,
      "zrtp-sent-clear", G_TYPE_UINT64, self->zrtp_sent_clear,
      "buffer-size", G_TYPE_INT, self->eff_buffer_size,
      "send-mode", G_TYPE_STRING, urtp_io_mode_name (self->eff_send_mode),
      "ssrc", G_TYPE_UINT, self->cur_ssrc,
      "seqnum-offset", G_TYPE_UINT, (guint) self->cur_seq_offset,
      "timestamp-offset", G_TYPE_UINT, self->cur_ts_offset,
      "clock-rate", G_TYPE_UINT, self->have_codec ?
      urtp_codec_clock_rate (self->codec) : 0, NULL);
#ifdef URTP_HAVE_SRTP
  /* which libsrtp2 does the work: the private OpenSSL build or the system's */
  gst_structure_set (s, "srtp-backend", G_TYPE_STRING, urtp_srtp_backend (),
      NULL);
#endif
  return s;
}

static void
gst_uvgrtp_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (object);

  GST_OBJECT_LOCK (self);
  if (IS_ZRTP_PROP (prop_id)) {
    gst_uvgrtp_zrtp_settings_set_property (GST_OBJECT (self), &self->zrtp,
        prop_id - PROP_ZRTP_FIRST, value);
    GST_OBJECT_UNLOCK (self);
    return;
  }
  switch (prop_id) {
    case PROP_HOST:
      g_free (self->host);
      self->host = g_value_dup_string (value);
      break;
    case PROP_PORT:
      self->port = g_value_get_int (value);
      break;
    case PROP_BIND_ADDRESS:
      g_free (self->bind_address);
      self->bind_address = g_value_dup_string (value);
      break;
    case PROP_BIND_PORT:
      self->bind_port = g_value_get_int (value);
      break;
    case PROP_BUFFER_SIZE:
      self->buffer_size = g_value_get_int (value);
      break;
    case PROP_TTL:
      self->ttl = g_value_get_int (value);
      break;
    case PROP_TTL_MC:
      self->ttl_mc = g_value_get_int (value);
      break;
    case PROP_MULTICAST_IFACE:
      g_free (self->multicast_iface);
      self->multicast_iface = g_value_dup_string (value);
      break;
    case PROP_AUTO_MULTICAST:
      self->auto_multicast = g_value_get_boolean (value);
      break;
    case PROP_LOOP:
      self->loop = g_value_get_boolean (value);
      break;
    case PROP_QOS_DSCP:
      self->qos_dscp = g_value_get_int (value);
      break;
    case PROP_MTU:
      self->mtu = g_value_get_uint (value);
      break;
    case PROP_PT:
      self->pt = g_value_get_uint (value);
      break;
    case PROP_SSRC:
      self->ssrc = g_value_get_uint (value);
      break;
    case PROP_SEQNUM_OFFSET:
      self->seqnum_offset = g_value_get_int (value);
      break;
    case PROP_TIMESTAMP_OFFSET:
      self->timestamp_offset = g_value_get_uint (value);
      break;
    case PROP_CONFIG_INTERVAL:
      self->config_interval = g_value_get_int (value);
      break;
    case PROP_AGGREGATE_MODE:
      self->aggregate_mode = g_value_get_enum (value);
      break;
    case PROP_SEND_MODE:
      self->send_mode = g_value_get_enum (value);
      break;
    case PROP_SEND_THREAD:
      self->send_thread = g_value_get_boolean (value);
      break;
    case PROP_PAD_FRAGMENTS:
      self->pad_fragments = g_value_get_boolean (value);
      break;
    case PROP_SDP_FILE:
      g_free (self->sdp_file);
      self->sdp_file = g_value_dup_string (value);
      self->sdp_written_serial = 0;
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
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_uvgrtp_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (object);

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
    GST_OBJECT_UNLOCK (self);
    return;
  }
  switch (prop_id) {
    case PROP_HOST:
      g_value_set_string (value, self->host);
      break;
    case PROP_PORT:
      g_value_set_int (value, self->port);
      break;
    case PROP_BIND_ADDRESS:
      g_value_set_string (value, self->bind_address);
      break;
    case PROP_BIND_PORT:
      g_value_set_int (value, self->bind_port);
      break;
    case PROP_BUFFER_SIZE:
      g_value_set_int (value, self->buffer_size);
      break;
    case PROP_TTL:
      g_value_set_int (value, self->ttl);
      break;
    case PROP_TTL_MC:
      g_value_set_int (value, self->ttl_mc);
      break;
    case PROP_MULTICAST_IFACE:
      g_value_set_string (value, self->multicast_iface);
      break;
    case PROP_AUTO_MULTICAST:
      g_value_set_boolean (value, self->auto_multicast);
      break;
    case PROP_LOOP:
      g_value_set_boolean (value, self->loop);
      break;
    case PROP_QOS_DSCP:
      g_value_set_int (value, self->qos_dscp);
      break;
    case PROP_MTU:
      g_value_set_uint (value, self->mtu);
      break;
    case PROP_PT:
      g_value_set_uint (value, self->pt);
      break;
    case PROP_SSRC:
      g_value_set_uint (value, self->ssrc);
      break;
    case PROP_SEQNUM_OFFSET:
      g_value_set_int (value, self->seqnum_offset);
      break;
    case PROP_TIMESTAMP_OFFSET:
      g_value_set_uint (value, self->timestamp_offset);
      break;
    case PROP_CONFIG_INTERVAL:
      g_value_set_int (value, self->config_interval);
      break;
    case PROP_AGGREGATE_MODE:
      g_value_set_enum (value, self->aggregate_mode);
      break;
    case PROP_SEND_MODE:
      g_value_set_enum (value, self->send_mode);
      break;
    case PROP_SEND_THREAD:
      g_value_set_boolean (value, self->send_thread);
      break;
    case PROP_PAD_FRAGMENTS:
      g_value_set_boolean (value, self->pad_fragments);
      break;
    case PROP_SDP:
      g_value_take_string (value, build_sdp (self));
      break;
    case PROP_SDP_FILE:
      g_value_set_string (value, self->sdp_file);
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
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
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
/* Start / stop                                                             */

/* Resolves name to a numeric address, preferring family if not AF_UNSPEC.
 * Returns NULL if it does not resolve. */
static gchar *
resolve_numeric (const gchar * name, int family, int *family_out)
{
  struct addrinfo hints, *res = NULL, *ai;
  gchar buf[NI_MAXHOST];
  gchar *out = NULL;

  memset (&hints, 0, sizeof (hints));
  hints.ai_family = family;
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo (name, NULL, &hints, &res) != 0 || !res)
    return NULL;
  for (ai = res; ai; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
      continue;
    if (getnameinfo (ai->ai_addr, ai->ai_addrlen, buf, sizeof (buf), NULL, 0,
            NI_NUMERICHOST) == 0) {
      out = g_strdup (buf);
      if (family_out)
        *family_out = ai->ai_family;
      break;
    }
  }
  freeaddrinfo (res);
  return out;
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

static gboolean
gst_uvgrtp_sink_start (GstBaseSink * bsink)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  urtp_sock_config_t cfg;
  gchar *host, *bind_addr, *iface, *remote = NULL, *bind_num = NULL;
  gchar *srtp_key;
  GstUvgRtpSrtpCipher srtp_cipher;
  GstUvgRtpSrtpAuth srtp_auth;
  GstUvgRtpZrtpSettings zs;
  GstUvgRtpZrtpCtl *old_ctl;
  gboolean srtp_ok, send_thread;
  gint port, bind_port, bind_family = AF_UNSPEC, family = AF_UNSPEC;
  int r;

  GST_OBJECT_LOCK (self);
  host = g_strdup (self->host);
  bind_addr = g_strdup (self->bind_address);
  iface = g_strdup (self->multicast_iface);
  port = self->port;
  bind_port = self->bind_port;
  memset (&cfg, 0, sizeof (cfg));
  cfg.bind_port = (uint16_t) bind_port;
  cfg.remote_port = (uint16_t) port;
  cfg.ttl = self->ttl;
  cfg.ttl_mc = self->ttl_mc;
  cfg.multicast_loop = self->loop;
  cfg.dscp = self->qos_dscp;
  cfg.sndbuf = self->buffer_size;
  cfg.tx_mode = (urtp_io_mode_t) self->send_mode;
  cfg.rx_mode = URTP_IO_AUTO;
  self->cur_ssrc = self->ssrc == G_MAXUINT ? g_random_int () : self->ssrc;
  self->cur_seq_offset = self->seqnum_offset < 0 ?
      (guint16) g_random_int_range (0, 65536) : (guint16) self->seqnum_offset;
  self->cur_ts_offset = self->timestamp_offset == G_MAXUINT ?
      g_random_int () : self->timestamp_offset;
  self->packets = self->bytes = self->access_units = 0;
  self->send_errors = self->syscalls = self->padding_bytes = 0;
  self->send_messages = 0;
  self->srtp_errors = 0;
  self->fail_since = 0;
  self->last_warning = 0;
  srtp_key = g_strdup (self->srtp_key);
  srtp_cipher = self->srtp_cipher;
  srtp_auth = self->srtp_auth;
  gst_uvgrtp_zrtp_settings_copy (&zs, &self->zrtp);
  /* the ZRTP thread reads the socket with plain recvfrom(): no GRO */
  if (zs.enabled)
    cfg.rx_mode = URTP_IO_MMSG;
  self->zrtp_held = self->zrtp_held_packets = self->zrtp_sent_clear = 0;
  old_ctl = self->zrtp_ctl;
  self->zrtp_ctl = NULL;
  GST_OBJECT_UNLOCK (self);
  gst_uvgrtp_zrtp_ctl_unref (old_ctl);

  if (zs.enabled && srtp_key && *srtp_key) {
    gst_uvgrtp_free_secret (srtp_key);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Properties 'zrtp' and 'srtp-key' cannot be used together: ZRTP "
            "agrees the SRTP keys itself"), (NULL));
    goto fail;
  }

  /* SRTP first: a bad key is reported before any network setting */
  srtp_ok = gst_uvgrtp_srtp_open (GST_ELEMENT (self), &self->srtp,
      URTP_SRTP_OUTBOUND, srtp_key, srtp_cipher, srtp_auth, self->cur_ssrc, 0);
  gst_uvgrtp_free_secret (srtp_key);
  if (!srtp_ok)
    goto fail;

  if (!host || !*host)
    goto no_host;
  if (port <= 0)
    goto bad_port;
  if (bind_addr && *bind_addr) {
    bind_num = resolve_numeric (bind_addr, AF_UNSPEC, &bind_family);
    if (!bind_num)
      goto bad_bind_address;
  }
  if (iface && *iface && if_nametoindex (iface) == 0)
    goto bad_iface;

  remote = resolve_numeric (host, bind_family, &family);
  if (!remote && bind_family != AF_UNSPEC) {
    if (resolve_numeric (host, AF_UNSPEC, NULL))
      goto family_mismatch;
  }
  if (!remote)
    goto unresolved;

  cfg.bind_addr = bind_num;
  cfg.remote_addr = remote;
  cfg.multicast_iface = (iface && *iface) ? iface : NULL;
  r = urtp_sock_open (&self->sock, &cfg);
  if (r < 0)
    goto open_failed;
  self->sock_open = TRUE;

  GST_OBJECT_LOCK (self);
  g_free (self->remote_ip);
  self->remote_ip = g_strdup (remote);
  self->eff_buffer_size = self->sock.sndbuf;
  self->eff_send_mode = self->sock.tx_mode;
  GST_OBJECT_UNLOCK (self);

  GST_INFO_OBJECT (self, "sending to %s:%d (%s), send buffer %d bytes, "
      "mode %s", remote, port, host, self->sock.sndbuf,
      urtp_io_mode_name (self->sock.tx_mode));

  self->zrtp_on = FALSE;
  if (zs.enabled) {
    GstUvgRtpZrtpCtl *ctl;

    if (is_multicast (&self->sock.remote))
      goto zrtp_multicast;
    ctl = gst_uvgrtp_zrtp_ctl_start (GST_ELEMENT (self), &zs,
        GST_UVGRTP_ZRTP_SENDER, self->sock.fd,
        (const struct sockaddr *) &self->sock.remote, self->sock.remote_len,
        self->cur_ssrc);
    if (!ctl)
      goto zrtp_failed;
    GST_OBJECT_LOCK (self);
    self->zrtp_ctl = ctl;
    GST_OBJECT_UNLOCK (self);
    self->zrtp_on = TRUE;
    self->zrtp_allow_clear = zs.allow_clear;
    self->zrtp_serial = gst_uvgrtp_zrtp_ctl_serial (ctl) - 1;
    self->zrtp_aus_mark = 0;
  }
  gst_uvgrtp_zrtp_settings_clear (&zs);

  GST_OBJECT_LOCK (self);
  send_thread = self->send_thread;
  self->tx_flow = GST_FLOW_OK;
  GST_OBJECT_UNLOCK (self);
  if (send_thread) {
    r = urtp_sender_start (&self->sender, &self->sock, sender_done, self);
    if (r < 0)
      GST_WARNING_OBJECT (self, "no send thread (%s): sending inline",
          g_strerror (-r));
  }

  self->last_rtptime = self->cur_ts_offset;
  self->last_running_time = GST_CLOCK_TIME_NONE;
  self->last_config = GST_CLOCK_TIME_NONE;
  self->au_ps_mask = 0;
  self->au_vcl_seen = FALSE;
  self->au_pts = GST_CLOCK_TIME_NONE;
  self->warned_no_ps = FALSE;
  self->opus_marker = TRUE;

  g_free (host);
  g_free (bind_addr);
  g_free (iface);
  g_free (remote);
  g_free (bind_num);
  return TRUE;

  /* ERRORS */
zrtp_multicast:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("ZRTP needs a unicast host, not the multicast group %s (properties "
            "'zrtp', 'host')", remote), (NULL));
    goto zrtp_close;
  }
zrtp_failed:
  {
    /* the error is posted */
    goto zrtp_close;
  }
zrtp_close:
  {
    urtp_sock_close (&self->sock);
    self->sock_open = FALSE;
    goto fail;
  }
no_host:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("No host to send to (property 'host')"), (NULL));
    goto fail;
  }
bad_port:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Invalid port %d (property 'port')", port), (NULL));
    goto fail;
  }
bad_bind_address:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Could not resolve bind address '%s' (property 'bind-address')",
            bind_addr), (NULL));
    goto fail;
  }
bad_iface:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No network interface '%s' (property 'multicast-iface')", iface),
        (NULL));
    goto fail;
  }
family_mismatch:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Host '%s' (property 'host') has no address of the family of "
            "bind address '%s' (property 'bind-address')", host, bind_addr),
        (NULL));
    goto fail;
  }
unresolved:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Could not resolve host '%s' (property 'host')", host), (NULL));
    goto fail;
  }
open_failed:
  {
    if (r == -EADDRINUSE || r == -EADDRNOTAVAIL || r == -EACCES) {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
          ("Could not bind to %s port %d (properties 'bind-address', "
              "'bind-port'): %s", bind_num ? bind_num : "any address",
              bind_port, g_strerror (-r)), (NULL));
    } else if (r == -ENODEV) {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
          ("Could not use interface '%s' (property 'multicast-iface'): %s",
              iface ? iface : "(default)", g_strerror (-r)), (NULL));
    } else {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
          ("Could not open a UDP socket to %s port %d (properties 'host', "
              "'port', 'bind-address', 'bind-port', 'multicast-iface', "
              "'send-mode'): %s", remote, port, g_strerror (-r)), (NULL));
    }
    goto fail;
  }
fail:
  {
    gst_uvgrtp_srtp_close (&self->srtp);
    gst_uvgrtp_zrtp_settings_clear (&zs);
    g_free (host);
    g_free (bind_addr);
    g_free (iface);
    g_free (remote);
    g_free (bind_num);
    return FALSE;
  }
}

static gboolean
gst_uvgrtp_sink_stop (GstBaseSink * bsink)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);

  /* before the socket closes; the last state stays readable */
  if (self->zrtp_on) {
    gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
    self->zrtp_on = FALSE;
  }
  /* the access unit in flight goes out first */
  if (self->sender) {
    urtp_sender_stop (self->sender);
    self->sender = NULL;
  }
  for (guint i = 0; i < 2; i++)
    hold_release (&self->hold[i]);
  if (self->sock_open) {
    GST_OBJECT_LOCK (self);
    self->syscalls = self->sock.tx_syscalls;
    self->send_messages = self->sock.tx_msgs;
    GST_OBJECT_UNLOCK (self);
    urtp_sock_close (&self->sock);
    self->sock_open = FALSE;
  }
  if (self->have_pay) {
    urtp_pay_destroy (&self->pay);
    self->have_pay = FALSE;
  }
  gst_uvgrtp_srtp_close (&self->srtp);
  for (guint i = 0; i < 2; i++) {
    urtp_batch_free (&self->batch_store[i]);
    urtp_batch_init (&self->batch_store[i]);
    urtp_batch_free (&self->srtp_store[i]);
    urtp_batch_init (&self->srtp_store[i]);
  }
  self->cur = 0;
  self->batch = &self->batch_store[0];
  self->srtp_batch = &self->srtp_store[0];
  g_free (self->nals);
  self->nals = NULL;
  self->nals_cap = 0;
  ps_clear_all (self);

  GST_OBJECT_LOCK (self);
  self->have_codec = FALSE;
  self->sdp_written_serial = 0;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Caps                                                                     */

static guint16
rd16 (const guint8 * p)
{
  return (guint16) (p[0] << 8 | p[1]);
}

/* Adds one parameter set from codec_data to the known ones. */
static void
ps_add_known (GstUvgRtpSink * self, const guint8 * nal, gsize len)
{
  const urtp_h26x_desc_t *d = urtp_h26x_desc (self->codec);
  gint kind;

  if (len < d->hdr_len)
    return;
  kind = ps_kind (self->codec, urtp_h26x_type (d, nal));
  if (kind < 0 || self->ps[kind]->len >= PS_MAX_PER_KIND)
    return;
  GST_OBJECT_LOCK (self);
  g_ptr_array_add (self->ps[kind], g_bytes_new (nal, len));
  self->ps_serial++;
  GST_OBJECT_UNLOCK (self);
}

/* avcC (ISO/IEC 14496-15, 5.3.3.1): version, profile, compatibility, level,
 * 6 bits reserved | lengthSizeMinusOne, 3 bits reserved | numOfSPS, SPS
 * with 16-bit lengths, numOfPPS, PPS with 16-bit lengths. Returns the NAL
 * length size, or 0 if the record is malformed. */
static guint
parse_avcc (GstUvgRtpSink * self, const guint8 * p, gsize len)
{
  gsize off = 6;
  guint nal_len_size, n;

  if (len < 7 || p[0] != 1)
    return 0;
  nal_len_size = (p[4] & 3) + 1;
  for (guint arr = 0; arr < 2; arr++) {
    if (off >= len)
      return 0;
    n = arr == 0 ? (p[5] & 0x1f) : p[off++];
    if (arr == 0)
      off = 6;
    for (guint i = 0; i < n; i++) {
      guint l;
      if (off + 2 > len)
        return 0;
      l = rd16 (p + off);
      off += 2;
      if (l > len - off)
        return 0;
      ps_add_known (self, p + off, l);
      off += l;
    }
  }
  return nal_len_size;
}

/* hvcC (ISO/IEC 14496-15, 8.3.3.1): 21 bytes of profile information, a byte
 * ending in lengthSizeMinusOne, numOfArrays, then per array: a byte with the
 * NAL unit type in its low 6 bits, numNalus (16 bits), NAL units with
 * 16-bit lengths. Returns the NAL length size, or 0 if malformed. */
static guint
parse_hvcc (GstUvgRtpSink * self, const guint8 * p, gsize len)
{
  gsize off = 23;
  guint nal_len_size, arrays;

  if (len < 23)
    return 0;
  nal_len_size = (p[21] & 3) + 1;
  arrays = p[22];
  for (guint a = 0; a < arrays; a++) {
    guint n;
    if (off + 3 > len)
      return 0;
    n = rd16 (p + off + 1);
    off += 3;
    for (guint i = 0; i < n; i++) {
      guint l;
      if (off + 2 > len)
        return 0;
      l = rd16 (p + off);
      off += 2;
      if (l > len - off)
        return 0;
      ps_add_known (self, p + off, l);
      off += l;
    }
  }
  return nal_len_size;
}

static gboolean
gst_uvgrtp_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  GstStructure *st = gst_caps_get_structure (caps, 0);
  const gchar *name = gst_structure_get_name (st);
  const gchar *format, *alignment;
  const GValue *cd_val;
  urtp_codec_t codec;
  urtp_pay_config_t pcfg;
  guint nal_len_size = 0;
  gboolean align_au = TRUE;
  gint channels = 0, family = 0;
  guint mtu;
  GstUvgRtpAggregateMode agg;
  int r;

  GST_DEBUG_OBJECT (self, "caps %" GST_PTR_FORMAT, caps);

  if (g_str_equal (name, "video/x-h264"))
    codec = URTP_CODEC_H264;
  else if (g_str_equal (name, "video/x-h265"))
    codec = URTP_CODEC_H265;
  else if (g_str_equal (name, "video/x-h266"))
    codec = URTP_CODEC_H266;
  else if (g_str_equal (name, "audio/x-opus"))
    codec = URTP_CODEC_OPUS;
  else
    goto bad_caps;

  /* Another codec, or a new configuration record: forget the parameter
   * sets known so far. Caps updated mid-stream without codec_data keep
   * them (an encoder may send them in band only once, at the start). */
  cd_val = gst_structure_get_value (st, "codec_data");
  if (!self->have_codec || self->codec != codec || cd_val)
    ps_clear_all (self);
  GST_OBJECT_LOCK (self);
  self->codec = codec;
  GST_OBJECT_UNLOCK (self);

  if (codec == URTP_CODEC_OPUS) {
    if (gst_structure_get_int (st, "channel-mapping-family", &family)
        && family != 0)
      goto bad_opus_family;
    if (!gst_structure_get_int (st, "channels", &channels))
      channels = 2;
    if (channels < 1 || channels > 2)
      goto bad_opus_channels;
  } else {
    format = gst_structure_get_string (st, "stream-format");
    alignment = gst_structure_get_string (st, "alignment");
    if (!format || !alignment)
      goto bad_caps;
    align_au = g_str_equal (alignment, "au");
    if (g_str_equal (format, "byte-stream")) {
      if (!align_au && !g_str_equal (alignment, "nal"))
        goto bad_caps;
      /* Some elements put a configuration record in byte-stream caps too:
       * use its parameter sets, ignore its NAL length size. */
      if (cd_val && GST_VALUE_HOLDS_BUFFER (cd_val)) {
        GstMapInfo map;
        GstBuffer *cd = gst_value_get_buffer (cd_val);
        if (gst_buffer_map (cd, &map, GST_MAP_READ)) {
          if (codec == URTP_CODEC_H264)
            parse_avcc (self, map.data, map.size);
          else if (codec == URTP_CODEC_H265)
            parse_hvcc (self, map.data, map.size);
          gst_buffer_unmap (cd, &map);
        }
      }
    } else {
      GstMapInfo map;
      GstBuffer *cd;

      if (!align_au)
        goto bad_caps;
      if ((codec == URTP_CODEC_H264 && !g_str_equal (format, "avc"))
          || (codec == URTP_CODEC_H265 && !g_str_equal (format, "hvc1")
              && !g_str_equal (format, "hev1"))
          || codec == URTP_CODEC_H266)
        goto bad_caps;
      if (!cd_val || !GST_VALUE_HOLDS_BUFFER (cd_val))
        goto no_codec_data;
      cd = gst_value_get_buffer (cd_val);
      if (!gst_buffer_map (cd, &map, GST_MAP_READ))
        goto no_codec_data;
      if (codec == URTP_CODEC_H264)
        nal_len_size = parse_avcc (self, map.data, map.size);
      else
        nal_len_size = parse_hvcc (self, map.data, map.size);
      gst_buffer_unmap (cd, &map);
      if (nal_len_size == 0)
        goto bad_codec_data;
    }
  }

  GST_OBJECT_LOCK (self);
  mtu = self->mtu;
  agg = self->aggregate_mode;
  memset (&pcfg, 0, sizeof (pcfg));
  pcfg.codec = codec;
  pcfg.pt = (uint8_t) self->pt;
  pcfg.ssrc = self->cur_ssrc;
  pcfg.seq_start = self->have_pay ? self->pay.seq : self->cur_seq_offset;
  pcfg.mtu = mtu;
  pcfg.aggregate = agg != GST_UVGRTP_AGGREGATE_NONE;
  /* padding buys nothing where packets go one per message */
  pcfg.pad_fragments = self->pad_fragments && self->sock.tx_mode == URTP_IO_GSO;
  GST_OBJECT_UNLOCK (self);

  if (mtu < URTP_PAY_MIN_MTU)
    goto mtu_too_small;
  if (self->srtp.session && mtu > 65535 - self->srtp.rtp_trailer)
    goto mtu_too_large;
  if (self->have_pay) {
    urtp_pay_destroy (&self->pay);
    self->have_pay = FALSE;
  }
  r = urtp_pay_init (&self->pay, &pcfg);
  if (r < 0)
    goto pay_init_failed;
  self->have_pay = TRUE;
  self->nal_length_size = nal_len_size;
  self->align_au = align_au;
  self->au_ps_mask = 0;
  self->au_vcl_seen = FALSE;

  GST_OBJECT_LOCK (self);
  self->opus_channels = (guint) channels;
  self->have_codec = TRUE;
  GST_OBJECT_UNLOCK (self);

  GST_INFO_OBJECT (self, "%s, %s, NAL length size %u, mtu %u, aggregate %d",
      codec_display_name (codec), align_au ? "au" : "nal", nal_len_size, mtu,
      pcfg.aggregate);

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
            codec_display_name (codec)), (NULL));
    return FALSE;
  }
bad_codec_data:
  {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Malformed %s codec_data", codec_display_name (codec)), (NULL));
    return FALSE;
  }
mtu_too_small:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("MTU %u is too small for the %s payload format (property 'mtu', "
            "at least %u)", mtu, codec_display_name (codec),
            (guint) URTP_PAY_MIN_MTU), (NULL));
    return FALSE;
  }
mtu_too_large:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("MTU %u leaves no room for the %u-byte SRTP tag in a UDP datagram "
            "(property 'mtu', at most %u with this srtp-cipher and srtp-auth)",
            mtu, (guint) self->srtp.rtp_trailer,
            (guint) (65535 - self->srtp.rtp_trailer)), (NULL));
    return FALSE;
  }
pay_init_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Invalid payloader settings (properties 'mtu', 'pt'): %s",
            g_strerror (-r)), (NULL));
    return FALSE;
  }
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                */

static void
nals_reserve (GstUvgRtpSink * self, gsize n)
{
  if (n > self->nals_cap) {
    gsize cap = self->nals_cap ? self->nals_cap : 32;
    while (cap < n)
      cap *= 2;
    self->nals = g_renew (urtp_nal_t, self->nals, cap);
    self->nals_cap = cap;
  }
}

/* Splits a buffer into NAL units in self->nals, leaving room for the
 * parameter sets that may be inserted. Returns the count, or -1 for
 * malformed length-prefixed data. */
static gssize
split_nals (GstUvgRtpSink * self, const guint8 * data, gsize size,
    gsize spare)
{
  gsize n = 0;

  if (self->nal_length_size == 0) {
    if (self->nals_cap < spare + 32)
      nals_reserve (self, spare + 32);
    n = urtp_scl_split (data, size, self->nals, self->nals_cap - spare);
    if (n > self->nals_cap - spare) {
      nals_reserve (self, n + spare);
      n = urtp_scl_split (data, size, self->nals, self->nals_cap - spare);
    }
    return (gssize) n;
  } else {
    const guint ls = self->nal_length_size;
    gsize off = 0;

    while (off < size) {
      gsize len = 0;
      if (size - off < ls)
        return -1;
      for (guint i = 0; i < ls; i++)
        len = len << 8 | data[off + i];
      off += ls;
      if (len > size - off)
        return -1;
      if (len > 0) {
        nals_reserve (self, n + 1 + spare);
        self->nals[n].data = data + off;
        self->nals[n].len = len;
        n++;
      }
      off += len;
    }
    return (gssize) n;
  }
}

/* Makes the parameter sets gathered in band in this access unit the known
 * ones, for the kinds the access unit carried. */
static void
commit_pending_ps (GstUvgRtpSink * self)
{
  gboolean changed = FALSE;

  if (self->au_ps_mask == 0)
    return;
  /* replaced sets are freed below, and the batch in flight may point into
   * them (config-interval): rare, in-band sets come with key frames */
  tx_drain (self);
  GST_OBJECT_LOCK (self);
  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++) {
    GPtrArray *tmp;
    if (!(self->au_ps_mask & PS_BIT (k)) || self->pending_ps[k]->len == 0)
      continue;
    if (!ps_lists_equal (self->ps[k], self->pending_ps[k])) {
      tmp = self->ps[k];
      self->ps[k] = self->pending_ps[k];
      self->pending_ps[k] = tmp;
      changed = TRUE;
    }
    g_ptr_array_set_size (self->pending_ps[k], 0);
  }
  if (changed)
    self->ps_serial++;
  GST_OBJECT_UNLOCK (self);
  if (changed)
    GST_DEBUG_OBJECT (self, "parameter sets updated from the stream");
}

static void
au_reset (GstUvgRtpSink * self)
{
  self->au_ps_mask = 0;
  self->au_vcl_seen = FALSE;
  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++)
    g_ptr_array_set_size (self->pending_ps[k], 0);
}

/* Inserts the known parameter sets at position at of the n NAL units in
 * self->nals (room was reserved), skipping kinds in `have`. Returns the new
 * count. The inserted entries point into the known sets, which stay
 * unchanged until after this buffer has been sent. */
static gsize
insert_ps (GstUvgRtpSink * self, gsize n, gsize at, guint have)
{
  gsize count = 0, i;

  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++)
    if (!(have & PS_BIT (k)))
      count += self->ps[k]->len;
  if (count == 0)
    return n;
  memmove (self->nals + at + count, self->nals + at,
      (n - at) * sizeof (urtp_nal_t));
  i = at;
  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++) {
    if (have & PS_BIT (k))
      continue;
    for (guint j = 0; j < self->ps[k]->len; j++) {
      gsize len;
      self->nals[i].data =
          g_bytes_get_data (g_ptr_array_index (self->ps[k], j), &len);
      self->nals[i].len = len;
      i++;
    }
  }
  return n + count;
}

static gsize
ps_count (GstUvgRtpSink * self)
{
  gsize count = 0;

  for (guint k = 0; k < GST_UVGRTP_SINK_PS_KINDS; k++)
    count += self->ps[k]->len;
  return count;
}

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

/* Whether config-interval asks for parameter sets before the IRAP picture
 * at running time rt. */
static gboolean
want_config (GstUvgRtpSink * self, GstClockTime rt)
{
  gint interval;

  GST_OBJECT_LOCK (self);
  interval = self->config_interval;
  GST_OBJECT_UNLOCK (self);
  if (interval == 0)
    return FALSE;
  if (interval < 0 || !GST_CLOCK_TIME_IS_VALID (self->last_config)
      || !GST_CLOCK_TIME_IS_VALID (rt) || rt < self->last_config)
    return TRUE;
  return rt - self->last_config >= (GstClockTime) interval * GST_SECOND;
}

/* Packetizes one mapped buffer into self->batch-> */
static GstFlowReturn
pay_buffer (GstUvgRtpSink * self, GstBuffer * buf, const GstMapInfo * map)
{
  GstClockTime rt;
  guint32 ts = rtp_time (self, buf, &rt);
  gboolean end_of_au;
  int r;

  if (map->size == 0)
    return GST_FLOW_OK;

  if (self->codec == URTP_CODEC_OPUS) {
    /* Stream headers (OpusHead, OpusTags) are not sent over RTP. */
    if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_HEADER)
        || (map->size >= 8 && (memcmp (map->data, "OpusHead", 8) == 0
                || memcmp (map->data, "OpusTags", 8) == 0)))
      return GST_FLOW_OK;
    if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT)
        || GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_RESYNC))
      self->opus_marker = TRUE;
    r = urtp_pay_frame (&self->pay, map->data, map->size, ts,
        self->opus_marker, self->batch);
    if (r == -EMSGSIZE)
      goto too_big;
    if (r < 0)
      goto pay_failed;
    self->opus_marker = FALSE;
    GST_OBJECT_LOCK (self);
    self->access_units++;
    GST_OBJECT_UNLOCK (self);
    return GST_FLOW_OK;
  } else {
    const urtp_h26x_desc_t *d = urtp_h26x_desc (self->codec);
    gsize spare = ps_count (self);
    gssize sn;
    gsize n, first_vcl = G_MAXSIZE, insert_at = 0;
    gboolean leading_aud = TRUE, key = FALSE;
    guint64 pad0;

    /* NAL-aligned input without markers: a new timestamp starts an AU. */
    if (self->align_au || (GST_BUFFER_PTS_IS_VALID (buf)
            && GST_BUFFER_PTS (buf) != self->au_pts && self->au_vcl_seen))
      au_reset (self);
    if (GST_BUFFER_PTS_IS_VALID (buf))
      self->au_pts = GST_BUFFER_PTS (buf);

    sn = split_nals (self, map->data, map->size, spare);
    if (sn < 0)
      goto malformed;
    n = (gsize) sn;

    for (gsize i = 0; i < n && !self->au_vcl_seen; i++) {
      const urtp_nal_t *nal = &self->nals[i];
      guint type;
      gint kind;

      if (nal->len < d->hdr_len)
        continue;
      type = urtp_h26x_type (d, nal->data);
      if (leading_aud && is_aud (self->codec, type))
        insert_at = i + 1;
      else
        leading_aud = FALSE;
      kind = ps_kind (self->codec, type);
      if (kind >= 0) {
        self->au_ps_mask |= PS_BIT (kind);
        if (self->pending_ps[kind]->len < PS_MAX_PER_KIND)
          g_ptr_array_add (self->pending_ps[kind],
              g_bytes_new (nal->data, nal->len));
      } else if (urtp_h26x_is_vcl (d, type)) {
        self->au_vcl_seen = TRUE;
        first_vcl = i;
        key = urtp_h26x_is_keyframe (d, type);
      }
    }

    if (first_vcl != G_MAXSIZE) {
      /* The parameter sets of this AU (if any) precede its first picture. */
      commit_pending_ps (self);
      if (key && want_config (self, rt)) {
        guint required = ps_required (self->codec);
        guint known;

        GST_OBJECT_LOCK (self);
        known = ps_known_mask (self);
        GST_OBJECT_UNLOCK (self);
        if ((self->au_ps_mask & required) == required) {
          /* carried in band already */
          self->last_config = rt;
        } else if ((known & required) == required) {
          if (!self->align_au)
            insert_at = first_vcl;
          n = insert_ps (self, n, insert_at, self->au_ps_mask);
          self->last_config = rt;
          GST_LOG_OBJECT (self, "inserted parameter sets before IRAP");
        } else if (!self->warned_no_ps) {
          GST_WARNING_OBJECT (self, "config-interval: no parameter sets "
              "known to send");
          self->warned_no_ps = TRUE;
        }
      }
    }

    end_of_au = self->align_au
        || GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_MARKER);
    pad0 = self->pay.pad_bytes;
    r = urtp_pay_nals (&self->pay, self->nals, n, ts, end_of_au, self->batch);
    if (r < 0)
      goto pay_failed;
    if (end_of_au) {
      /* an AU without pictures still carries its parameter sets */
      commit_pending_ps (self);
      au_reset (self);
      self->au_pts = GST_CLOCK_TIME_NONE;
    }
    if (end_of_au || self->pay.pad_bytes != pad0) {
      GST_OBJECT_LOCK (self);
      self->access_units += end_of_au ? 1 : 0;
      self->padding_bytes += self->pay.pad_bytes - pad0;
      GST_OBJECT_UNLOCK (self);
    }
    return GST_FLOW_OK;
  }

  /* ERRORS */
too_big:
  {
    guint mtu = (guint) self->pay.cfg.mtu;
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Opus packet of %" G_GSIZE_FORMAT " bytes does not fit in one RTP "
            "packet of at most %u bytes (property 'mtu')", map->size, mtu),
        (NULL));
    return GST_FLOW_ERROR;
  }
pay_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("Packetizing failed: %s", g_strerror (-r)));
    return GST_FLOW_ERROR;
  }
malformed:
  {
    GST_ELEMENT_WARNING (self, STREAM, DECODE, (NULL),
        ("Dropping a buffer whose NAL unit lengths overrun it (%"
            G_GSIZE_FORMAT " bytes)", map->size));
    return GST_FLOW_OK;
  }
}

/* With SRTP, protects self->batch into self->srtp_batch, which is then the
 * one to send. Packets libsrtp2 refuses are left out and counted. Returns
 * the batch to send, or NULL (error posted) when out of memory. */
static const urtp_batch_t *
protect_batch (GstUvgRtpSink * self)
{
#ifdef URTP_HAVE_SRTP
  const urtp_srtp_stats_t *st = &self->srtp.stats;
  guint64 refused = st->replay + st->other;
  int r;

  if (!self->srtp.session)
    return self->batch;
  r = urtp_srtp_protect_batch (&self->srtp, self->batch, self->srtp_batch);
  if (r < 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("SRTP protection failed: %s", g_strerror (-r)));
    return NULL;
  }
  refused = st->replay + st->other - refused;
  if (refused) {
    GST_WARNING_OBJECT (self, "SRTP refused %" G_GUINT64_FORMAT " of %"
        G_GSIZE_FORMAT " packets", refused, self->batch->npkts);
    GST_OBJECT_LOCK (self);
    self->srtp_errors += refused;
    GST_OBJECT_UNLOCK (self);
  }
  return self->srtp_batch;
#else
  return self->batch;
#endif
}

/* With zrtp: whether self->batch may go out, protected with the agreed keys
 * (in self->srtp once secure) or, with zrtp-allow-clear, in clear. */
static gboolean
zrtp_may_send (GstUvgRtpSink * self)
{
  gboolean had = self->srtp.session != NULL;

  if (gst_uvgrtp_zrtp_ctl_sync_srtp (self->zrtp_ctl, &self->srtp,
          &self->zrtp_serial, TRUE, self->cur_ssrc, 0)) {
    if (!had && self->codec != URTP_CODEC_OPUS) {
      /* what was sent before the keys never reached the receiver: the
       * decoder needs a key frame to start from */
      GST_INFO_OBJECT (self, "secure: asking upstream for a key frame");
      gst_pad_push_event (GST_BASE_SINK_PAD (self),
          gst_video_event_new_upstream_force_key_unit (GST_CLOCK_TIME_NONE,
              TRUE, ++self->zrtp_fku_count));
    }
    return TRUE;
  }
  return self->zrtp_allow_clear;
}

/* Adds a finished send to the statistics. Packets the kernel did not take
 * are counted as send errors, and so are reports of ICMP errors for earlier
 * packets (ECONNREFUSED, `reported`), which the library counts and sends
 * past; only the former count towards the persistent failure that stops
 * the stream, since a receiver that is not up yet must not end a sender.
 * Runs where the send ran: the streaming thread or the send thread. */
static GstFlowReturn
account_send (GstUvgRtpSink * self, const urtp_batch_t * b, int r,
    guint64 reported)
{
  gsize npkts = b->npkts, sent;
  guint64 unsent, bytes = 0;
  gint64 now;

  sent = r < 0 ? 0 : MIN ((gsize) r, npkts);
  unsent = npkts - sent;
  /* sent packets are always the first ones of the batch */
  for (gsize i = 0; i < sent; i++)
    bytes += b->pkts[i].len;

  GST_OBJECT_LOCK (self);
  self->packets += sent;
  self->bytes += bytes;
  self->send_errors += unsent ? MAX (unsent, reported) : reported;
  self->syscalls = self->sock.tx_syscalls;
  self->send_messages = self->sock.tx_msgs;
  self->eff_send_mode = self->sock.tx_mode;
  GST_OBJECT_UNLOCK (self);

  if (unsent == 0 && reported == 0) {
    self->fail_since = 0;
    return GST_FLOW_OK;
  }

  now = g_get_monotonic_time ();
  if (now - self->last_warning >= G_USEC_PER_SEC) {
    if (unsent)
      GST_WARNING_OBJECT (self, "%" G_GUINT64_FORMAT " of %" G_GSIZE_FORMAT
          " packets not sent: %s", unsent, npkts,
          g_strerror (r < 0 ? -r : EIO));
    else
      GST_WARNING_OBJECT (self, "receiver %s port %d reported unreachable "
          "(%" G_GUINT64_FORMAT " times)", self->remote_ip, self->port,
          reported);
    self->last_warning = now;
  }
  if (unsent == 0) {
    self->fail_since = 0;
    return GST_FLOW_OK;
  }
  if (self->fail_since == 0)
    self->fail_since = now;
  if (now - self->fail_since >= FAIL_ERROR_US) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Sending to %s port %d has failed for %d seconds", self->remote_ip,
            self->port, (int) (FAIL_ERROR_US / G_USEC_PER_SEC)),
        ("last error: %s", g_strerror (r < 0 ? -r : EIO)));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* The send thread's report of one batch; the failure, if any, stays until
 * the element stops and is returned by the next render. */
static void
sender_done (void *user, const urtp_batch_t * b, int r, uint64_t reported)
{
  GstUvgRtpSink *self = user;

  if (account_send (self, b, r, reported) != GST_FLOW_OK) {
    GST_OBJECT_LOCK (self);
    self->tx_flow = GST_FLOW_ERROR;
    GST_OBJECT_UNLOCK (self);
  }
}

static void
hold_release (GstUvgRtpSinkHold * h)
{
  for (guint i = 0; i < h->n; i++) {
    gst_buffer_unmap (h->bufs[i], &h->maps[i]);
    gst_buffer_unref (h->bufs[i]);
  }
  h->n = 0;
}

/* Maps buf for reading into the hold being built; FALSE if it cannot. */
static gboolean
hold_map (GstUvgRtpSink * self, GstBuffer * buf, GstMapInfo ** map)
{
  GstUvgRtpSinkHold *h = &self->hold[self->cur];

  if (h->n == h->cap) {
    h->cap = MAX (4, h->cap * 2);
    h->bufs = g_renew (GstBuffer *, h->bufs, h->cap);
    h->maps = g_renew (GstMapInfo, h->maps, h->cap);
  }
  if (!gst_buffer_map (buf, &h->maps[h->n], GST_MAP_READ))
    return FALSE;
  h->bufs[h->n] = gst_buffer_ref (buf);
  *map = &h->maps[h->n++];
  return TRUE;
}

/* Waits until nothing is in flight and lets go of its input, before
 * anything its iovecs may point to (parameter sets) changes. */
static void
tx_drain (GstUvgRtpSink * self)
{
  if (!self->sender)
    return;
  urtp_sender_wait (self->sender);
  hold_release (&self->hold[self->cur ^ 1]);
}

/* Sends self->batch (protected first with SRTP), inline or on the send
 * thread. Sets *in_flight when the batch (and the input it points to) went
 * to the thread and must stay intact; otherwise it is cleared. */
static GstFlowReturn
flush_batch (GstUvgRtpSink * self, gboolean * in_flight)
{
  const urtp_batch_t *b;
  guint64 errors0;
  GstFlowReturn ret;
  int r;

  *in_flight = FALSE;
  if (self->batch->npkts == 0) {
    urtp_batch_clear (self->batch);
    return GST_FLOW_OK;
  }
  if (G_UNLIKELY (self->zrtp_on)) {
    gboolean send = zrtp_may_send (self);

    GST_OBJECT_LOCK (self);
    if (!send) {
      self->zrtp_held += self->access_units - self->zrtp_aus_mark;
      self->zrtp_held_packets += self->batch->npkts;
    } else if (!self->srtp.session) {
      self->zrtp_sent_clear += self->batch->npkts;
    }
    self->zrtp_aus_mark = self->access_units;
    GST_OBJECT_UNLOCK (self);
    if (!send) {
      urtp_batch_clear (self->batch);
      return GST_FLOW_OK;
    }
  }
  b = protect_batch (self);
  if (!b) {
    urtp_batch_clear (self->batch);
    urtp_batch_clear (self->srtp_batch);
    return GST_FLOW_ERROR;
  }
  if (b->npkts == 0) {
    urtp_batch_clear (self->batch);
    urtp_batch_clear (self->srtp_batch);
    return GST_FLOW_OK;
  }

  if (self->sender) {
    /* returns once the previous batch is out: its set is free again */
    urtp_sender_submit (self->sender, b);
    *in_flight = TRUE;
    hold_release (&self->hold[self->cur ^ 1]);
    self->cur ^= 1;
    self->batch = &self->batch_store[self->cur];
    self->srtp_batch = &self->srtp_store[self->cur];
    urtp_batch_clear (self->batch);
    urtp_batch_clear (self->srtp_batch);
    GST_OBJECT_LOCK (self);
    ret = self->tx_flow;
    GST_OBJECT_UNLOCK (self);
    return ret;
  }

  errors0 = self->sock.tx_errors;
  r = urtp_sock_send (&self->sock, b);
  ret = account_send (self, b, r, self->sock.tx_errors - errors0);
  urtp_batch_clear (self->batch);
  urtp_batch_clear (self->srtp_batch);
  return ret;
}

/* After a flush: the input stays mapped while its batch is in flight. */
static void
hold_done (GstUvgRtpSink * self, gboolean in_flight)
{
  if (!in_flight)
    hold_release (&self->hold[self->cur]);
  /* else flush_batch moved on to the other set; this one is released by
   * the submit after next, or tx_drain */
}

static GstFlowReturn
gst_uvgrtp_sink_render (GstBaseSink * bsink, GstBuffer * buffer)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  GstMapInfo *map;
  GstFlowReturn ret;
  gboolean in_flight = FALSE;

  if (!self->have_pay)
    goto not_negotiated;
  if (!hold_map (self, buffer, &map))
    goto map_failed;
  ret = pay_buffer (self, buffer, map);
  if (ret == GST_FLOW_OK)
    ret = flush_batch (self, &in_flight);
  else
    urtp_batch_clear (self->batch);
  hold_done (self, in_flight);
  if (ret == GST_FLOW_OK && !maybe_write_sdp (self))
    ret = GST_FLOW_ERROR;
  return ret;

  /* ERRORS */
not_negotiated:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("Buffer before caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
map_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, READ, (NULL),
        ("Could not map buffer"));
    return GST_FLOW_ERROR;
  }
}

/* All buffers of a list go out in one send. */
static GstFlowReturn
gst_uvgrtp_sink_render_list (GstBaseSink * bsink, GstBufferList * list)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);
  guint len = gst_buffer_list_length (list);
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean in_flight = FALSE;

  if (!self->have_pay) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("Buffer list before caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  for (guint i = 0; i < len && ret == GST_FLOW_OK; i++) {
    GstBuffer *buf = gst_buffer_list_get (list, i);
    GstMapInfo *map;
    if (!hold_map (self, buf, &map)) {
      GST_ELEMENT_ERROR (self, RESOURCE, READ, (NULL),
          ("Could not map buffer"));
      ret = GST_FLOW_ERROR;
      break;
    }
    ret = pay_buffer (self, buf, map);
  }
  if (ret == GST_FLOW_OK)
    ret = flush_batch (self, &in_flight);
  else
    urtp_batch_clear (self->batch);
  hold_done (self, in_flight);
  if (ret == GST_FLOW_OK && !maybe_write_sdp (self))
    ret = GST_FLOW_ERROR;
  return ret;
}

/* EOS means everything before it has left: the access unit in flight too. */
static gboolean
gst_uvgrtp_sink_event (GstBaseSink * bsink, GstEvent * event)
{
  GstUvgRtpSink *self = GST_UVGRTP_SINK (bsink);

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
    tx_drain (self);
  return GST_BASE_SINK_CLASS (parent_class)->event (bsink, event);
}
