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

#include "gstuvgrtpprops.h"
#include "gstuvgrtpsink.h"
#include "gstuvgrtpstats.h"
#include "gstuvgrtpsrtp.h"
#include "urtp/history.h"
#include "urtp/rtx.h"
#include "gstuvgrtpzrtpctl.h"

GST_DEBUG_CATEGORY (gst_uvgrtp_sink_debug);
#define GST_CAT_DEFAULT gst_uvgrtp_sink_debug

#define DEFAULT_HOST              "localhost"
#define DEFAULT_PORT              5004
#define DEFAULT_BIND_ADDRESS      NULL
#define DEFAULT_BIND_PORT         0
#define DEFAULT_TTL               64
#define DEFAULT_TTL_MC            1
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
#define DEFAULT_RTCP_BIND_PORT    0
#define DEFAULT_RTX_MAX_SIZE_TIME 1000
#define DEFAULT_RTX_MAX_SIZE_PACKETS URTP_HISTORY_PACKETS
#define DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL URTP_SENDSTREAM_KEYFRAME_INTERVAL
#define DEFAULT_SDP_FILE          NULL
#define DEFAULT_SEND_DUPLICATES   TRUE

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
  PROP_TTL,
  PROP_TTL_MC,
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
  PROP_RTCP_BIND_PORT,
  PROP_RTX_MAX_SIZE_TIME,
  PROP_RTX_MAX_SIZE_PACKETS,
  PROP_MIN_FORCE_KEY_UNIT_INTERVAL,
  PROP_STATS,
  PROP_SDP,
  PROP_SDP_FILE,
  PROP_CLIENTS,
  PROP_SEND_DUPLICATES,
  PROP_BYTES_SERVED,
  PROP_SEQNUM,
  PROP_TIMESTAMP,
  PROP_FORCE_IPV4,
  PROP_AUTO_HEADER_EXTENSION,
  PROP_EXTENSIONS,
  PROP_RTP_CAPS,
  PROP_SOCKET_V6,
  PROP_USED_SOCKET_V6,
  PROP_PERFECT_RTPTIME,
  PROP_SCALE_RTPTIME,
  PROP_ONVIF_NO_RATE_CONTROL,
  PROP_SOURCE_INFO,
  PROP_DTX,
  PROP_BYTES_TO_SERVE,
  PROP_CC_FIRST,                /* GST_UVGRTP_SINK_CC_N_PROPS ids */
  PROP_CC_LAST = PROP_CC_FIRST + GST_UVGRTP_SINK_CC_N_PROPS - 1,
  /* GST_UVGRTP_N_PROPS shared ids from here on (gstuvgrtpprops.h) */
  PROP_SHARED_FIRST,
};

static guint request_extension_signal;

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
static gboolean gst_uvgrtp_sink_event (GstBaseSink * bsink, GstEvent * event);
static GstFlowReturn gst_uvgrtp_sink_render (GstBaseSink * bsink,
    GstBuffer * buffer);
static GstFlowReturn gst_uvgrtp_sink_render_list (GstBaseSink * bsink,
    GstBufferList * list);
static gboolean gst_uvgrtp_sink_unlock (GstBaseSink * bsink);
static gboolean gst_uvgrtp_sink_unlock_stop (GstBaseSink * bsink);
static void gst_uvgrtp_sink_add_extension (GstUvgRtpSink * self,
    GstRTPHeaderExtension * ext);
static void gst_uvgrtp_sink_clear_extensions (GstUvgRtpSink * self);
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
   * error naming this property. Like udpsink's, host and port are one of
   * the #GstUvgRtpSink:clients: a change, also while playing, takes the
   * old pair out and puts the new one in, from the next access unit on.
   */
  g_object_class_install_property (gobject_class, PROP_HOST,
      g_param_spec_string ("host", "Host",
          "Receiver address or name: unicast or multicast, IPv4 or IPv6",
          DEFAULT_HOST, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:port:
   *
   * UDP port of the receiver, 1 to 65535 (see #GstUvgRtpSink:host).
   */
  g_object_class_install_property (gobject_class, PROP_PORT,
      g_param_spec_int ("port", "Port", "UDP port of the receiver",
          0, 65535, DEFAULT_PORT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:bind-address:
   *
   * Local address to send from, or %NULL for any address of the host's
   * address family. Not used with #GstUvgRtp:socket (bound already).
   */
  g_object_class_install_property (gobject_class, PROP_BIND_ADDRESS,
      g_param_spec_string ("bind-address", "Bind Address",
          "Local address to send from (NULL = any address of the host's family)",
          DEFAULT_BIND_ADDRESS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:bind-port:
   *
   * Local port to send from; 0 picks an ephemeral port. Not used with
   * #GstUvgRtp:socket (bound already).
   */
  g_object_class_install_property (gobject_class, PROP_BIND_PORT,
      g_param_spec_int ("bind-port", "Bind Port",
          "Local UDP port to send from (0 = ephemeral)", 0, 65535,
          DEFAULT_BIND_PORT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
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
   * Paced sends (#GstUvgRtpSink:pacing-rate, #GstUvgRtpSink:pacing-factor,
   * congestion control) use that thread whatever this says, from the first
   * paced access unit on: waiting for the pacer on the streaming thread
   * would hold a live encoder back (x264enc at 720p30, paced at 1.25 x its
   * bitrate, then made 26-28 pictures a second).
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
   * #GstUvgRtpSink:pacing-burst bytes, spread in time, the waits on the
   * send thread (#GstUvgRtpSink:send-thread), one access unit at a time. A
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
   * GstUvgRtpSink:clients:
   *
   * Where the stream goes, as multiudpsink's: a comma-separated list of
   * host:port pairs ([v6]:port for IPv6 addresses), unicast and multicast
   * mixed; "host:port" several times gets that many copies with
   * #GstUvgRtpSink:send-duplicates. Setting it replaces every client,
   * #GstUvgRtpSink:host's too; reading it gives the clients now, host's
   * included. Each packet is made and protected once for all of them; our
   * RTCP goes to each one's port + 1 (#GstUvgRtpSink:rtcp-port when set,
   * the port itself with rtcp-mux). An entry that is not host:port is an
   * error at start naming this property. See also #GstUvgRtpSink::add.
   */
  g_object_class_install_property (gobject_class, PROP_CLIENTS,
      g_param_spec_string ("clients", "Clients",
          "A comma separated list of host:port pairs to send to", "",
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:send-duplicates:
   *
   * A client added more than once gets a copy of each packet per addition
   * (as multiudpsink does), or with %FALSE one.
   */
  g_object_class_install_property (gobject_class, PROP_SEND_DUPLICATES,
      g_param_spec_boolean ("send-duplicates", "Send duplicates",
          "A client added several times gets a copy per addition",
          DEFAULT_SEND_DUPLICATES, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:bytes-served:
   *
   * Bytes of RTP handed to the kernel for all clients together (SRTP tags
   * included), as multiudpsink's.
   */
  g_object_class_install_property (gobject_class, PROP_BYTES_SERVED,
      g_param_spec_uint64 ("bytes-served", "Bytes served",
          "Total bytes sent to all clients", 0, G_MAXUINT64, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:bytes-to-serve:
   *
   * Bytes of media the element was given to send (its input buffers), as
   * multiudpsink's: counted once whatever the number of clients.
   */
  g_object_class_install_property (gobject_class, PROP_BYTES_TO_SERVE,
      g_param_spec_uint64 ("bytes-to-serve", "Bytes to serve",
          "Bytes of media received to send to the clients", 0, G_MAXUINT64,
          0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:seqnum:
   *
   * The sequence number of the last packet made, as RTPBasePayload's.
   */
  g_object_class_install_property (gobject_class, PROP_SEQNUM,
      g_param_spec_uint ("seqnum", "Sequence number",
          "The RTP sequence number of the last packet made", 0, G_MAXUINT16,
          0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:timestamp:
   *
   * The RTP timestamp of the last access unit (or Opus packet), as
   * RTPBasePayload's.
   */
  g_object_class_install_property (gobject_class, PROP_TIMESTAMP,
      g_param_spec_uint ("timestamp", "Timestamp",
          "The RTP timestamp of the last access unit", 0, G_MAXUINT32, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:force-ipv4:
   *
   * Accepted for udpsink's pipelines and ignored, as udpsink itself
   * ignores it: the address family follows the host (or the first
   * client) and #GstUvgRtpSink:bind-address.
   */
  g_object_class_install_property (gobject_class, PROP_FORCE_IPV4,
      g_param_spec_boolean ("force-ipv4", "Force IPv4",
          "Ignored, as udpsink's (deprecated there)", FALSE,
          G_PARAM_READWRITE | G_PARAM_DEPRECATED | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:socket-v6:
   *
   * As #GstUvgRtp:socket, an IPv6 UDP socket, as udpsink's: used when the
   * host (or the first client) is an IPv6 address, or when
   * #GstUvgRtp:socket is not set. One socket sends to every client, so
   * clients of the other family than the socket's are refused (an IPv4
   * client can be reached through a dual-stack IPv6 socket).
   */
  g_object_class_install_property (gobject_class, PROP_SOCKET_V6,
      g_param_spec_object ("socket-v6", "Socket (IPv6)",
          "An IPv6 UDP socket the application bound, used instead of one of "
          "the element's own for IPv6 hosts (NULL = the element opens one)",
          G_TYPE_SOCKET, G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
          G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:used-socket-v6:
   *
   * The socket in use while the element runs, when it is an IPv6 one
   * (#GstUvgRtp:used-socket is then %NULL): #GstUvgRtpSink:socket-v6, or
   * #GstUvgRtp:socket when that is IPv6, or one of the element's own.
   */
  g_object_class_install_property (gobject_class, PROP_USED_SOCKET_V6,
      g_param_spec_object ("used-socket-v6", "Used socket (IPv6)",
          "The IPv6 socket in use (NULL when the socket in use is IPv4)",
          G_TYPE_SOCKET, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:perfect-rtptime:
   *
   * RTPBasePayload's: RTP time from buffer offsets in clock-rate units
   * where the buffers have them. The buffers this element takes (H.26x
   * access units, Opus packets) carry none in clock-rate units, as the
   * stock payloaders' output buffers carry none, so the RTP time always
   * follows the timestamps (see #GstUvgRtpSink:scale-rtptime); accepted
   * for their pipelines.
   */
  g_object_class_install_property (gobject_class, PROP_PERFECT_RTPTIME,
      g_param_spec_boolean ("perfect-rtptime", "Perfect RTP Time",
          "RTP time from buffer offsets where they are in clock-rate units "
          "(encoded video and Opus have none: RTP time follows the "
          "timestamps)", TRUE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:scale-rtptime:
   *
   * As RTPBasePayload's: whether the RTP time follows the running time,
   * which a segment's rate scales (%TRUE, the default: media played at
   * twice the speed gets RTP time at twice the pace of its timestamps),
   * or the stream time, the position in the media (%FALSE). Sender
   * reports follow the same time line.
   */
  g_object_class_install_property (gobject_class, PROP_SCALE_RTPTIME,
      g_param_spec_boolean ("scale-rtptime", "Scale RTP time",
          "RTP time from the running time, scaled by the segment's rate "
          "(FALSE: from the stream time)", TRUE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:onvif-no-rate-control:
   *
   * As RTPBasePayload's: ONVIF replay without rate control (ONVIF
   * Streaming Specification 6.4: the server sends as fast as the client
   * reads, RTP time is the recording's): RTP time from the stream time,
   * whatever #GstUvgRtpSink:scale-rtptime says.
   */
  g_object_class_install_property (gobject_class, PROP_ONVIF_NO_RATE_CONTROL,
      g_param_spec_boolean ("onvif-no-rate-control", "ONVIF no rate control",
          "RTP time from the stream time (ONVIF Rate-Control=no replay)",
          FALSE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:source-info:
   *
   * As RTPBasePayload's: the contributing sources of an input buffer's
   * #GstRTPSourceMeta (its CSRCs, then its SSRC, at most 15) are listed in
   * the CSRC field of every packet made of it, so that a mixer's output
   * names the sources it mixed (RFC 3550 7.1).
   */
  g_object_class_install_property (gobject_class, PROP_SOURCE_INFO,
      g_param_spec_boolean ("source-info", "RTP source information",
          "Write CSRCs from the buffers' GstRTPSourceMeta", FALSE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstUvgRtpSink:dtx:
   *
   * As rtpopuspay's: Opus packets of two bytes or less (what an encoder
   * with discontinuous transmission makes of silence) are not sent; the
   * RTP time of the next packet shows the gap, which the receiver's
   * decoder fills (RFC 7587 3.1.3).
   */
  g_object_class_install_property (gobject_class, PROP_DTX,
      g_param_spec_boolean ("dtx", "Discontinuous transmission",
          "Do not send empty Opus packets (2 bytes or less)", FALSE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  gst_uvgrtp_sink_install_clients (gobject_class);
  gst_uvgrtp_sink_cc_install (gobject_class, PROP_CC_FIRST);
  /* RTP header extensions: RTPBasePayload's API (gstuvgrtphdrext.c) */
  request_extension_signal = gst_uvgrtp_hdrext_install (gobject_class,
      PROP_AUTO_HEADER_EXTENSION, PROP_EXTENSIONS,
      G_CALLBACK (gst_uvgrtp_sink_add_extension),
      G_CALLBACK (gst_uvgrtp_sink_clear_extensions));
  /**
   * GstUvgRtpSink:rtp-caps:
   *
   * The application/x-rtp caps a capsfilter after the stock payloader
   * would hold: their extmap-N fields enable RTP header extensions (with
   * #GstUvgRtpSink:auto-header-extension or a handler of
   * #GstUvgRtpSink::request-extension), as downstream caps do for
   * RTPBasePayload. The other fields are not read: payload type, SSRC and
   * the rest have properties of their own. Extensions enabled stay until
   * #GstUvgRtpSink::clear-extensions.
   */
  g_object_class_install_property (gobject_class, PROP_RTP_CAPS,
      g_param_spec_boxed ("rtp-caps", "RTP caps",
          "application/x-rtp caps whose extmap-N fields enable RTP header "
          "extensions", GST_TYPE_CAPS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /* documented in gstuvgrtpstats.c */
  g_object_class_install_property (gobject_class, PROP_STATS,
      gst_uvgrtp_sink_stats_param_spec ());
  /* socket, RTCP, SRTP, retransmission and ZRTP, as uvgrtpsrc's */
  gst_uvgrtp_props_install (gobject_class, PROP_SHARED_FIRST,
      GST_UVGRTP_ROLE_SENDER,
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
}

static void
gst_uvgrtp_sink_init (GstUvgRtpSink * self)
{
  self->host = g_strdup (DEFAULT_HOST);
  self->port = DEFAULT_PORT;
  self->bind_address = g_strdup (DEFAULT_BIND_ADDRESS);
  self->bind_port = DEFAULT_BIND_PORT;
  self->ttl = DEFAULT_TTL;
  self->ttl_mc = DEFAULT_TTL_MC;
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
  self->rtcp_bind_port = DEFAULT_RTCP_BIND_PORT;
  self->rtx_max_size_time = DEFAULT_RTX_MAX_SIZE_TIME;
  self->rtx_max_size_packets = DEFAULT_RTX_MAX_SIZE_PACKETS;
  self->min_force_key_unit_interval = DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL;
  self->sdp_file = g_strdup (DEFAULT_SDP_FILE);
  self->send_duplicates = DEFAULT_SEND_DUPLICATES;
  self->perfect_rtptime = TRUE;
  self->scale_rtptime = TRUE;
  gst_uvgrtp_sink_clients_init (self);
  gst_uvgrtp_sink_cc_init (&self->cc);
  gst_uvgrtp_settings_init (&self->common, GST_UVGRTP_ROLE_SENDER);
  gst_uvgrtp_hdrext_init (&self->hdrext, GST_ELEMENT (self),
      request_extension_signal);

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
  g_free (self->sdp_file);
  g_free (self->remote_ip);
  gst_uvgrtp_sink_clients_finalize (self);
  gst_uvgrtp_sink_cc_clear (&self->cc);
  gst_uvgrtp_hdrext_finalize (&self->hdrext);
  gst_clear_caps (&self->rtp_caps);
  g_clear_object (&self->socket_v6);
  gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
  gst_uvgrtp_zrtp_ctl_unref (self->zrtp_ctl);
  gst_uvgrtp_settings_clear (&self->common);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ------------------------------------------------------------------------ */
/* Properties                                                               */

/* The last packet's sequence number; 0 before any, as RTPBasePayload's. */
static guint
last_seqnum (const urtp_sendstream_stats_t * st)
{
  return st->access_units ? (guint16) (st->next_seq - 1) : 0;
}

/* Call with the object lock held. */

static GstStructure *
build_stats (GstUvgRtpSink * self)
{
  GstUvgRtpSinkStats v;
  urtp_sendstream_client_t *clients = NULL;
  GstStructure *st;

  memset (&v, 0, sizeof v);
  if (self->stream) {
    urtp_sendstream_get_stats (self->stream, &v.st);
    urtp_sendstream_congestion (self->stream, &v.cc);
  } else {
    v.st = self->last_stats;
  }
  if (self->zrtp_ctl)
    gst_uvgrtp_zrtp_ctl_get_counters (self->zrtp_ctl, &v.c.zrtp);
  v.c.ssrc = self->cur_ssrc;
  v.c.rtx_ssrc = v.st.rtx_ssrc;
  v.c.buffer_size = self->eff_buffer_size;
  v.c.rtcp_sent = v.st.rtcp_sent;
  v.c.rtcp_received = v.st.rtcp_in;
  v.c.rtcp_bad = v.st.rtcp_bad;
  v.c.rtcp_foreign = v.st.rtcp_foreign;
  v.c.srtcp = v.st.srtcp;
  v.c.block = v.st.rr;
  /* -1 (no report with our sender report's time yet) becomes NONE */
  v.c.round_trip_time = (guint64) v.st.rtt_ns;
  v.rtx_pt = self->rtx_on ? self->cur_rtx_pt : 0;
  v.seqnum_offset = self->cur_seq_offset;
  v.timestamp_offset = self->cur_ts_offset;
  v.clock_rate = self->negotiated ? urtp_codec_clock_rate (self->codec) : 0;
  v.pt = self->pt;
  v.seqnum = last_seqnum (&v.st);
  v.timestamp = self->last_rtptime;
  v.running_time = self->last_running_time;
  v.send_mode = urtp_io_mode_name (v.st.tx_mode);
  /* the receivers' report times, NTP on our wall clock, go onto the
   * pipeline clock (the element's clock field: the lock is held) */
  v.now_ntp = urtp_ntp_from_unix_ns ((guint64) g_get_real_time () * 1000);
  v.now_clock = GST_ELEMENT_CLOCK (self) ?
      gst_clock_get_time (GST_ELEMENT_CLOCK (self)) : GST_CLOCK_TIME_NONE;
  if (self->stream) {
    guint n = (guint) urtp_sendstream_get_clients (self->stream, NULL, 0);

    clients = g_new0 (urtp_sendstream_client_t, MAX (n, 1));
    v.nclients = (guint) MIN (n, urtp_sendstream_get_clients (self->stream,
            clients, n));
    v.clients = clients;
  }
  st = gst_uvgrtp_sink_stats_to_structure (&v);
  g_free (clients);
  return st;
}

/* Where each property other than stats and sdp lives in the instance; its
 * GParamSpec's value type says how to read and write it. */
#define FIELD(f) G_STRUCT_OFFSET (GstUvgRtpSink, f)
static const gsize prop_field[PROP_SHARED_FIRST] = {
  [PROP_HOST] = FIELD (host),[PROP_PORT] = FIELD (port),
  [PROP_BIND_ADDRESS] = FIELD (bind_address),
  [PROP_BIND_PORT] = FIELD (bind_port),[PROP_TTL] = FIELD (ttl),
  [PROP_TTL_MC] = FIELD (ttl_mc),
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
  [PROP_RTCP_BIND_PORT] = FIELD (rtcp_bind_port),
  [PROP_RTX_MAX_SIZE_TIME] = FIELD (rtx_max_size_time),
  [PROP_RTX_MAX_SIZE_PACKETS] = FIELD (rtx_max_size_packets),
  [PROP_MIN_FORCE_KEY_UNIT_INTERVAL] = FIELD (min_force_key_unit_interval),
  [PROP_SDP_FILE] = FIELD (sdp_file),
  [PROP_SOCKET_V6] = FIELD (socket_v6),
  [PROP_PERFECT_RTPTIME] = FIELD (perfect_rtptime),
  [PROP_SCALE_RTPTIME] = FIELD (scale_rtptime),
  [PROP_ONVIF_NO_RATE_CONTROL] = FIELD (onvif_no_rate_control),
  [PROP_SOURCE_INFO] = FIELD (source_info),
  [PROP_DTX] = FIELD (dtx),
  [PROP_BYTES_TO_SERVE] = FIELD (bytes_to_serve),
  [PROP_USED_SOCKET_V6] = FIELD (used_socket_v6),
#define CC(p) PROP_CC_FIRST + GST_UVGRTP_SINK_CC_PROP_##p
  [CC (MODE)] = FIELD (cc.mode),[CC (MIN)] = FIELD (cc.min_bitrate),
  [CC (START)] = FIELD (cc.start_bitrate),
  [CC (ADAPT_ENCODER)] = FIELD (cc.adapt_encoder),
  [CC (MESSAGE_THRESHOLD)] = FIELD (cc.message_threshold),
#undef CC
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
  gchar *host;
  gint port;

  if (gst_uvgrtp_hdrext_set_property (&self->hdrext, prop_id,
          PROP_AUTO_HEADER_EXTENSION, PROP_EXTENSIONS, value))
    return;
  /* the destinations change under locks of their own */
  switch (prop_id) {
    case PROP_HOST:
    case PROP_PORT:
      GST_OBJECT_LOCK (self);
      host = prop_id == PROP_HOST ? g_value_dup_string (value) :
          g_strdup (self->host);
      port = prop_id == PROP_PORT ? g_value_get_int (value) : self->port;
      GST_OBJECT_UNLOCK (self);
      gst_uvgrtp_sink_set_host_port (self, host, port);
      g_free (host);
      return;
    case PROP_CLIENTS:
      gst_uvgrtp_sink_set_clients (self, g_value_get_string (value));
      return;
    case PROP_FORCE_IPV4:
      return;
    case PROP_RTP_CAPS:{
      GstCaps *caps = g_value_dup_boxed (value);

      GST_OBJECT_LOCK (self);
      gst_caps_replace (&self->rtp_caps, caps);
      GST_OBJECT_UNLOCK (self);
      /* emits request-extension: not under the object lock */
      gst_uvgrtp_hdrext_from_caps (&self->hdrext, caps);
      gst_clear_caps (&caps);
      return;
    }
    case PROP_SEND_DUPLICATES:
      GST_OBJECT_LOCK (self);
      self->send_duplicates = g_value_get_boolean (value);
      if (self->stream)
        urtp_sendstream_set_send_duplicates (self->stream,
            self->send_duplicates);
      GST_OBJECT_UNLOCK (self);
      return;
    default:
      break;
  }
  GST_OBJECT_LOCK (self);
  if (!gst_uvgrtp_props_set (object, &self->common, PROP_SHARED_FIRST,
          prop_field, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  if (prop_id == PROP_SDP_FILE)
    self->sdp_written_serial = 0;       /* write it (again) */
  if (prop_id == PROP_CC_FIRST + GST_UVGRTP_SINK_CC_PROP_MIN)
    g_atomic_int_set (&self->cc.bounds_changed, TRUE);
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

  if (prop_id == PROP_CC_FIRST + GST_UVGRTP_SINK_CC_PROP_ESTIMATED) {
    /* set by the streaming thread, without the lock */
    g_value_set_uint (value, (guint) g_atomic_int_get (&self->cc.estimated));
    return;
  }
  if (prop_id == PROP_CLIENTS) {
    g_value_take_string (value, gst_uvgrtp_sink_get_clients (self));
    return;
  }
  if (gst_uvgrtp_hdrext_get_property (&self->hdrext, prop_id,
          PROP_AUTO_HEADER_EXTENSION, PROP_EXTENSIONS, value))
    return;
  GST_OBJECT_LOCK (self);
  if (prop_id == PROP_SDP)
    g_value_take_string (value, gst_uvgrtp_sink_build_sdp (self));
  else if (prop_id == PROP_SEND_DUPLICATES)
    g_value_set_boolean (value, self->send_duplicates);
  else if (prop_id == PROP_FORCE_IPV4)
    g_value_set_boolean (value, FALSE);
  else if (prop_id == PROP_RTP_CAPS)
    g_value_set_boxed (value, self->rtp_caps);
  else if (prop_id == PROP_BYTES_SERVED || prop_id == PROP_SEQNUM) {
    urtp_sendstream_stats_t st;

    if (self->stream)
      urtp_sendstream_get_stats (self->stream, &st);
    else
      st = self->last_stats;
    if (prop_id == PROP_SEQNUM)
      g_value_set_uint (value, last_seqnum (&st));
    else
      g_value_set_uint64 (value, st.bytes_served);
  } else if (prop_id == PROP_TIMESTAMP)
    g_value_set_uint (value, self->last_rtptime);
  else if (!gst_uvgrtp_props_get (object, &self->common, self->zrtp_ctl,
          PROP_SHARED_FIRST, prop_field, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_uvgrtp_sink_add_extension (GstUvgRtpSink * self,
    GstRTPHeaderExtension * ext)
{
  gst_uvgrtp_hdrext_add (&self->hdrext, ext);
}

static void
gst_uvgrtp_sink_clear_extensions (GstUvgRtpSink * self)
{
  gst_uvgrtp_hdrext_clear (&self->hdrext);
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

/* The application's socket for host (object lock): socket-v6 for an IPv6
 * address or when socket is not set, else socket; a new reference or
 * NULL. */
static GSocket *
take_socket (GstUvgRtpSink * self, const gchar * host, const gchar ** prop)
{
  gboolean v6 = host && strchr (host, ':');

  *prop = "socket";
  if (self->socket_v6 && (v6 || !self->common.socket)) {
    *prop = "socket-v6";
    return g_object_ref (self->socket_v6);
  }
  return gst_uvgrtp_settings_take_socket (&self->common);
}

/* Closes the socket; the application's is closed as close-socket says. */
static void
close_socket (GstUvgRtpSink * self)
{
  urtp_sock_close (&self->sock);
  self->sock_open = FALSE;
  GST_OBJECT_LOCK (self);
  g_clear_object (&self->used_socket_v6);
  gst_uvgrtp_settings_socket_closed (&self->common, NULL, self->given_socket);
  self->given_socket = NULL;
  GST_OBJECT_UNLOCK (self);
}

/* Opens the socket from the network properties; starts ZRTP on it. */
static gboolean
open_network (GstUvgRtpSink * self, const GstUvgRtpZrtpSettings * zs)
{
  urtp_sock_config_t c;
  gchar *host = NULL, *bind, *iface, remote[NI_MAXHOST] = "";
  GSocket *given;
  const gchar *given_prop;
  gint port = 0;
  guint nclients;
  gboolean mux, any;
  int r;

  memset (&c, 0, sizeof c);
  GST_OBJECT_LOCK (self);
  mux = self->common.rtcp && self->common.rtcp_mux;
  /* the first client gives the socket its family and first remote; the
   * stream's table of clients takes over from there */
  any = gst_uvgrtp_sink_first_client (self, &host, &port, &nclients);
  bind = g_strdup (self->bind_address);
  iface = g_strdup (self->common.multicast_iface);
  c.bind_port = (uint16_t) self->bind_port;
  c.ttl = self->ttl;
  c.ttl_mc = self->ttl_mc;
  c.multicast_loop = self->loop;
  c.dscp = self->qos_dscp;
  c.sndbuf = self->common.buffer_size;
  c.tx_mode = (urtp_io_mode_t) self->send_mode;
  given = take_socket (self, any ? host : NULL, &given_prop);
  GST_OBJECT_UNLOCK (self);
  c.bind_addr = bind && *bind ? bind : NULL;
  c.remote_addr = any ? host : NULL;
  c.remote_port = (uint16_t) port;
  c.multicast_iface = iface && *iface ? iface : NULL;
  /* ZRTP and RTCP read the socket datagram by datagram: no GRO; nor on
   * the application's socket, which another reader may share */
  c.rx_mode = zs->enabled || mux || given ? URTP_IO_MMSG : URTP_IO_AUTO;

  if (zs->enabled && nclients != 1)
    goto zrtp_clients;
  if (any && (!host || !*host))
    goto no_host;
  if (any && port <= 0)
    goto bad_port;
  if (given) {
    /* bound already: bind-address names no group to join here */
    c.bind_addr = NULL;
    r = urtp_sock_adopt (&self->sock, g_socket_get_fd (given), &c);
    if (r < 0)
      goto adopt_failed;
  } else {
    r = urtp_sock_open (&self->sock, &c);
    if (r < 0)
      goto open_failed;
  }
  self->sock_open = TRUE;
  GST_OBJECT_LOCK (self);
  self->given_socket = given;
  given = NULL;
  gst_uvgrtp_settings_socket_opened (&self->common,
      self->sock.family == AF_INET6 ? &self->used_socket_v6 : NULL,
      self->given_socket, self->sock.fd);
  GST_OBJECT_UNLOCK (self);
  if (!any || getnameinfo ((struct sockaddr *) &self->sock.remote,
          self->sock.remote_len, remote, sizeof remote, NULL, 0,
          NI_NUMERICHOST) != 0)
    g_strlcpy (remote, any ? host : "", sizeof remote);
  GST_INFO_OBJECT (self, "sending to %s:%d (%s) and %u more, send buffer "
      "%d bytes, mode %s", remote, port, host, nclients ? nclients - 1 : 0,
      self->sock.sndbuf, urtp_io_mode_name (self->sock.tx_mode));
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
adopt_failed:
  GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
      ("Could not send to %s port %d through the socket of property '%s': "
          "%s", c.remote_addr, c.remote_port, given_prop, r == -EAFNOSUPPORT ?
          "the host is not of the socket's address family" : g_strerror (-r)),
      (NULL));
  goto fail;
zrtp_clients:
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
      ("ZRTP agrees keys with one receiver: %u clients (properties 'zrtp', "
          "'host', 'clients')", nclients), (NULL));
  goto fail;
zrtp_multicast:
  GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
      ("ZRTP needs a unicast host, not the multicast group %s (properties "
          "'zrtp', 'host')", remote), (NULL));
  goto fail;
fail:
  if (self->sock_open)
    close_socket (self);
 
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
  /* plus how far the stream time is from the running time */
  *rtp_ts = self->cur_ts_offset + (guint32)
      gst_util_uint64_scale_int_round (now - base, (gint) rate, GST_SECOND) +
      (guint32) g_atomic_int_get (&self->rtp_shift);
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
              "round-trip-time", G_TYPE_UINT64, (guint64) st.rtt_ns, NULL)));
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
  if (!gst_uvgrtp_settings_rtcp (&self->common, self->port, &rc, &mux,
          &port)) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
  bind = g_strdup (self->bind_address);
  rc.bind_addr = bind;
  rc.bind_port = (guint16) self->rtcp_bind_port;
  /* with no client yet, reports go to the clients as they come */
  rc.remote_addr = self->remote_ip && *self->remote_ip ? self->remote_ip :
      NULL;
  rc.remote_port = (guint16) MIN (port, G_MAXUINT16);
  rc.we_send = true;
  /* receivers learn from it where NACKs and key frame requests go */
  rc.early_first = true;
  GST_OBJECT_UNLOCK (self);
  if (mux) {
    rc.mux = &self->sock;
    /* ZRTP's answers arrive on that socket: the endpoint's thread does
     * not read it then */
    if (self->zrtp_on)
      rc.zrtp = gst_uvgrtp_zrtp_ctl_endpoint (self->zrtp_ctl);
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
        ("No RTCP: %s (set 'rtcp-bind-port' to a free port or 0, "
            "'rtcp-mux=true' if the receiver multiplexes, or 'rtcp=false')",
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
  gchar *cname;
  GstUvgRtpZrtpSettings zs;
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
  self->rtx_on = self->common.do_retransmission && self->common.rtcp;
  self->cur_rtx_pt = self->common.rtx_pt >= 0 ? (guint8) self->common.rtx_pt :
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
  /* every push comes with a hold of its buffer (release_hold) */
  sc.send_thread_paced = TRUE;
  cname = g_strdup (self->common.cname);
  GST_OBJECT_UNLOCK (self);

  /* SRTP first: a bad key is reported before any network setting */
  if (!gst_uvgrtp_settings_take_keys (GST_ELEMENT (self), &self->common,
          &self->zrtp_ctl, &srtp, key, &zs)) {
    g_free (cname);
    goto fail;
  }
  sc.allow_clear = zs.allow_clear;
  ok = open_network (self, &zs);
  gst_uvgrtp_zrtp_settings_clear (&zs);
  if (!ok) {
    g_free (cname);
    goto fail;
  }

  sc.srtp = srtp.key_len ? &srtp : NULL;
  if (self->zrtp_on) {
    sc.zrtp = gst_uvgrtp_zrtp_ctl_endpoint (self->zrtp_ctl);
    sc.keys_ready = zrtp_keys_ready;
  }
  sc.release = release_hold;
  sc.user = self;
  sc.cname = cname;
  sc.fail_timeout_ns = (int64_t) FAIL_ERROR_S * GST_SECOND;
  r = urtp_sendstream_new (&stream, &self->sock, &sc);
  g_free (cname);
  if (r < 0)
    goto stream_failed;
  {
    urtp_sendstream_stats_t st;

    urtp_sendstream_get_stats (stream, &st);
    if (st.send_thread_error)
      GST_WARNING_OBJECT (self, "no send thread (%s): sending inline",
          g_strerror (-st.send_thread_error));
  }
  explicit_bzero (key, sizeof key);
  GST_OBJECT_LOCK (self);
  urtp_sendstream_set_send_duplicates (stream, self->send_duplicates);
  GST_OBJECT_UNLOCK (self);
  if (!gst_uvgrtp_sink_clients_start (self, stream)) {
    urtp_sendstream_free (stream);
    if (self->zrtp_on) {
      gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
      self->zrtp_on = FALSE;
    }
    close_socket (self);
    return FALSE;
  }
  start_rtcp (self, stream);

  GST_OBJECT_LOCK (self);
  self->stream = stream;
  self->bytes_to_serve = 0;
  set_pacing (self);
  self->negotiated = FALSE;
  self->sdp_written_serial = 0;
  GST_OBJECT_UNLOCK (self);
  self->last_rtptime = self->cur_ts_offset;
  self->last_running_time = GST_CLOCK_TIME_NONE;
  g_atomic_int_set (&self->rtp_shift, 0);
  self->ncsrc = 0;
  gst_uvgrtp_hdrext_stream_started (&self->hdrext);
  /* congestion control: set up now, so that feedback knows every packet
   * (parameter sets may leave before the first buffer), and again when the
   * extensions change (the serial differs at the first buffer) */
  self->cc.serial = G_MININT;
  gst_uvgrtp_sink_cc_setup (self, TRUE);
  self->errors_logged = self->srtp_errors_logged = 0;
  self->last_warning = 0;
  self->warned_no_ps = FALSE;
  g_atomic_int_set (&self->unlocked, 0);
  return TRUE;

  /* ERRORS */
stream_failed:
  if (sc.srtp)
    gst_uvgrtp_srtp_post_init_error (GST_ELEMENT (self), r,
        self->common.srtp_cipher, srtp.profile, 0);
  else
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("Could not set up the sending stream: %s", g_strerror (-r)));
  if (self->zrtp_on) {
    gst_uvgrtp_zrtp_ctl_stop (self->zrtp_ctl);
    self->zrtp_on = FALSE;
  }
  close_socket (self);
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
    /* an action on another thread may still be using it */
    gst_uvgrtp_sink_clients_wait_idle (self);
    gst_uvgrtp_sink_cc_stop (self);
    urtp_sendstream_free (stream);
  }
  if (self->sock_open)
    close_socket (self);
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                */

/* RTP timestamp of buf: from its running time, or with scale-rtptime off
 * or onvif-no-rate-control from its stream time (as RTPBasePayload). The
 * difference between the two goes to the sender reports' mapping. */
static guint32
rtp_time (GstUvgRtpSink * self, GstBuffer * buf, gboolean stream_time,
    GstClockTime * running)
{
  GstBaseSink *bsink = GST_BASE_SINK (self);
  GstClockTime ts = GST_BUFFER_PTS (buf), rt = GST_CLOCK_TIME_NONE;
  GstClockTime t = GST_CLOCK_TIME_NONE;
  gint rate = (gint) urtp_codec_clock_rate (self->codec);

  if (!GST_CLOCK_TIME_IS_VALID (ts))
    ts = GST_BUFFER_DTS (buf);
  if (GST_CLOCK_TIME_IS_VALID (ts)) {
    if (bsink->segment.format == GST_FORMAT_TIME) {
      rt = gst_segment_to_running_time (&bsink->segment, GST_FORMAT_TIME, ts);
      t = stream_time ? gst_segment_to_stream_time (&bsink->segment,
          GST_FORMAT_TIME, ts) : rt;
    } else {
      rt = t = ts;
    }
  }
  if (GST_CLOCK_TIME_IS_VALID (rt) && GST_CLOCK_TIME_IS_VALID (t)) {
    guint32 from_rt = (guint32) gst_util_uint64_scale_int_round (rt, rate,
        GST_SECOND);

    self->last_running_time = rt;
    self->last_rtptime = self->cur_ts_offset + (guint32)
        gst_util_uint64_scale_int_round (t, rate, GST_SECOND);
    g_atomic_int_set (&self->rtp_shift,
        (gint) (self->last_rtptime - self->cur_ts_offset - from_rt));
  }
  *running = self->last_running_time;
  return self->last_rtptime;
}

/* With source-info, the CSRCs of buf's GstRTPSourceMeta (then its SSRC),
 * as RTPBasePayload lists them; the stream is told only when they change. */
static void
set_csrcs (GstUvgRtpSink * self, GstBuffer * buf)
{
  GstRTPSourceMeta *m = buf ? gst_buffer_get_rtp_source_meta (buf) : NULL;
  guint32 cs[15];
  guint n = 0;

  if (m) {
    for (guint i = 0; i < m->csrc_count && n < 15; i++)
      cs[n++] = m->csrc[i];
    if (m->ssrc_valid && n < 15)
      cs[n++] = m->ssrc;
  }
  if (n == self->ncsrc && (n == 0 || memcmp (cs, self->csrc, n * 4) == 0))
    return;
  memcpy (self->csrc, cs, n * 4);
  self->ncsrc = n;
  urtp_sendstream_set_csrcs (self->stream, cs, n);
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
  gboolean source_info, dtx, stream_time;
  guint32 ts;
  guint flags = 0;
  gsize size;
  int r;

  GST_OBJECT_LOCK (self);
  source_info = self->source_info;
  dtx = self->dtx && self->codec == URTP_CODEC_OPUS;
  stream_time = self->onvif_no_rate_control || !self->scale_rtptime;
  self->bytes_to_serve += gst_buffer_get_size (buf);
  GST_OBJECT_UNLOCK (self);
  /* discontinuous transmission: silence is not sent */
  if (dtx && gst_buffer_get_size (buf) <= 2)
    return GST_FLOW_OK;
  ts = rtp_time (self, buf, stream_time, &rt);
  if (source_info || self->ncsrc)
    set_csrcs (self, source_info ? buf : NULL);
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

  gst_uvgrtp_hdrext_send (&self->hdrext, self->stream, buf, self->cur_ssrc,
      (guint8) self->pt, ts);
  /* congestion control follows the extensions: is the transport-wide
   * number among them (the serial changes with them) */
  if (self->cc.serial != self->hdrext.stream_serial) {
    self->cc.serial = self->hdrext.stream_serial;
    gst_uvgrtp_sink_cc_setup (self, FALSE);
  }
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
  gst_uvgrtp_sink_cc_update (self);
  if (r == -ETIMEDOUT) {
    post_send_failed (self);
    return GST_FLOW_ERROR;
  }
  if (r < 0) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (NULL),
        ("Sending failed: %s", g_strerror (-r)));
    return GST_FLOW_ERROR;
  }
  return gst_uvgrtp_sink_write_sdp (self) ? GST_FLOW_OK : GST_FLOW_ERROR;
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
