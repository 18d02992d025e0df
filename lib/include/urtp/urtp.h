/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urtp.h - RTP streams of H.264, H.265, H.266 and Opus, in a few calls.
 *
 * Sending (every access unit of an encoder, one call each):
 *
 *     urtp_send_config_t cfg;
 *     urtp_send_config_init(&cfg, URTP_CODEC_H265);
 *     cfg.host = "192.0.2.7";
 *     cfg.port = 5004;
 *     urtp_sender_t *s;
 *     if (urtp_sender_open(&s, &cfg) < 0) ...
 *     urtp_sender_push(s, au, au_len, pts_ns);    // Annex-B or an Opus packet
 *     ...
 *     urtp_sender_close(s);                       // RTCP BYE, then frees
 *
 * Receiving (the next access unit, or a timeout):
 *
 *     urtp_recv_config_t cfg;
 *     urtp_recv_config_init(&cfg, URTP_CODEC_H265);
 *     cfg.port = 5004;
 *     urtp_receiver_t *r;
 *     if (urtp_receiver_open(&r, &cfg) < 0) ...
 *     urtp_frame_t f;
 *     while (urtp_receiver_pull(r, &f, 1000) > 0)
 *       decode(f.params, f.params_len, f.data, f.len);
 *     urtp_receiver_close(r);
 *
 * Each stream owns its sockets: RTP on the port, RTCP on the port + 1 (or
 * on the RTP port with rtcp_mux, RFC 5761), sender and receiver reports,
 * retransmission (RFC 4588), SRTP/SRTCP (RFC 3711) with a static key or
 * keys agreed by ZRTP (RFC 6189) all run inside it;
 * a receiver services RTCP and its deadlines while it waits in pull. SSRC,
 * first sequence number and first timestamp are random unless set. RTCP
 * is taken only from the host the stream's other end is on (RFC 3550 8.2;
 * with SRTP, from anyone whose packets verify).
 *
 * Configuration: a config struct is filled with its defaults by its
 * _init function; set what differs, then open. Every field's default is
 * written next to it. Functions return 0 (or a count) on success and a
 * negative errno on failure (strerror(-r) says why).
 *
 * Threads: one thread calls a stream's functions, except _stats, which
 * any thread may call at any time.
 *
 * Everything below this header (lib/urtp/ in the source tree: the I/O-free
 * packetizer, depacketizer, RTCP, SRTP and ZRTP cores) is internal to the
 * library and to the GStreamer plugin; only what is declared here is
 * exported.
 */
#ifndef URTP_URTP_H
#define URTP_URTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "urtp/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define URTP_API __attribute__((visibility("default")))
#else
#define URTP_API
#endif

/* ---- Codecs ---------------------------------------------------------- */

typedef enum urtp_codec {
  URTP_CODEC_H264,              /* RFC 6184 */
  URTP_CODEC_H265,              /* RFC 7798 */
  URTP_CODEC_H266,              /* RFC 9328 */
  URTP_CODEC_OPUS,              /* RFC 7587 */
} urtp_codec_t;

/* The SDP encoding name: "H264", "H265", "H266" or "OPUS". */
URTP_API const char *urtp_codec_name(urtp_codec_t codec);
/* Parses an encoding name ("h265", "H265", ...). Returns 0 or -EINVAL. */
URTP_API int urtp_codec_from_name(const char *name, urtp_codec_t *out);

/* The length of the access unit at the start of an Annex-B byte stream
 * (H.264, H.265, H.266): up to the start code of the first NAL unit of the
 * next access unit, or len. For splitting a file or an encoder's output
 * into access units. */
URTP_API size_t urtp_au_length(urtp_codec_t codec, const uint8_t *data, size_t len);

/* How a stream's packets are protected (its stats tell). */
typedef enum urtp_security {
  URTP_SECURITY_NONE,           /* plain RTP */
  URTP_SECURITY_STATIC_KEY,     /* SRTP with srtp_key */
  URTP_SECURITY_ZRTP_PENDING,   /* ZRTP: keys not agreed yet */
  URTP_SECURITY_ZRTP_SECURE,    /* ZRTP: keys agreed; the SAS is set */
  URTP_SECURITY_ZRTP_FAILED,    /* ZRTP: the exchange failed; nothing flows */
} urtp_security_t;

/* ---- Sending --------------------------------------------------------- */

typedef struct urtp_sender urtp_sender_t;

typedef struct urtp_send_config {
  urtp_codec_t codec;
  const char *host;             /* where to send: an address or a name; required */
  uint16_t port;                /* its RTP port; required */
  const char *bind_addr;        /* our address; NULL (default): any */
  uint16_t bind_port;           /* our RTP port; 0 (default): any */
  int pt;                       /* payload type 0..127; default 96 */
  size_t mtu;                   /* largest RTP packet, bytes; default 1400 */
  unsigned channels;            /* Opus: 1 or 2; default 2 */
  int64_t ssrc;                 /* 0..2^32-1; default -1: random */
  int32_t seq_start;            /* first sequence number; default -1: random */
  int64_t ts_start;             /* RTP timestamp of pts 0; default -1: random */
  /* RTCP (RFC 3550): sender reports out, receiver reports in. Default on,
   * on port + 1 (rtcp_port 0), or with rtcp_mux on the RTP port. */
  bool rtcp;
  uint16_t rtcp_port;
  bool rtcp_mux;
  const char *cname;            /* RTCP CNAME; NULL (default): user@host */
  /* SRTP and SRTCP with a static master key (RFC 3711): the key and salt
   * as hex digits (60 for the default profile, as srtpenc's key), and the
   * profile's name (NULL, default: "AES_CM_128_HMAC_SHA1_80"; also
   * "AES_CM_128_HMAC_SHA1_32", "AES_256_CM_HMAC_SHA1_80",
   * "AES_256_CM_HMAC_SHA1_32", "AEAD_AES_128_GCM", "AEAD_AES_256_GCM").
   * NULL key (default): plain RTP. */
  const char *srtp_key;
  const char *srtp_profile;
  /* ZRTP (RFC 6189): SRTP keys agreed with the other end, which runs ZRTP
   * too (another urtp stream, uvgrtpsrc or uvgrtpsink with zrtp=true,
   * uvgRTP), instead of srtp_key. Media waits for
   * the keys: access units pushed before are held back (counted). Default
   * off. zrtp_cache: a file that
   * keeps our ZID and the secrets of earlier calls, so that a changed
   * peer shows (NULL, default: none). Read the SAS from the stats once
   * security is URTP_SECURITY_ZRTP_SECURE and compare it with the other
   * end's by voice: that rules out a man in the middle. */
  bool zrtp;
  const char *zrtp_cache;
  /* Retransmission (RFC 4588): NACKs answered with RTX packets of payload
   * type rtx_pt. Default off; rtx_pt default 97. */
  bool rtx;
  int rtx_pt;
  /* Parameter sets sent again before key frames that lack them: -1
   * (default) before every one, 0 never, N: at most every N seconds. */
  int config_interval;
  bool aggregate;               /* STAP-A/AP packets of small NAL units; default off */
  uint64_t pacing_bps;          /* spread packets at this rate; default 0: no pacing */
  bool send_thread;             /* send on a thread of its own; default off */
  /* A receiver asked for a key frame (PLI or FIR), at most every 200 ms;
   * called on the stream's RTCP thread. Default NULL. */
  void (*keyframe)(void *user);
  void *user;
  /* A UDP socket the caller made and bound, to send from instead of one
   * of ours (bind_addr and bind_port unused): symmetric RTP (RFC 4961),
   * the same socket given to a receiver too. It is duplicated, never
   * connected; the caller keeps and closes it. Default -1: our own. */
  int fd;
} urtp_send_config_t;

URTP_API void urtp_send_config_init(urtp_send_config_t *cfg, urtp_codec_t codec);

/* Opens the sockets and starts RTCP. Returns 0, or -EINVAL (a field out
 * of range, no host), -ENOTSUP (SRTP asked for, not in this build or this
 * profile), -EADDRINUSE, -ENOMEM or another -errno of the sockets. */
URTP_API int urtp_sender_open(urtp_sender_t **out, const urtp_send_config_t *cfg);

/* Sends one access unit (H.26x: Annex-B, start codes included, parameter
 * sets in band or not) or one Opus packet. pts_ns: its presentation time
 * in nanoseconds on any clock that runs at real speed (0 for the first is
 * fine); the RTP timestamp is ts_start + pts_ns at the codec's clock rate.
 * The bytes are read during the call only. Returns 0; -EMSGSIZE (an Opus
 * packet larger than the mtu), -EBADMSG, -ETIMEDOUT (sending has failed
 * for 2 s without a break), -ENOMEM. */
URTP_API int urtp_sender_push(urtp_sender_t *s, const uint8_t *data, size_t len, uint64_t pts_ns);

/* Writes the stream's session description (RFC 8866) into out: address,
 * port, codec, payload type, parameter sets (once an access unit carried
 * them). Returns its length, or -ENOSPC (cap too small), -ENODATA. */
URTP_API int urtp_sender_sdp(urtp_sender_t *s, char *out, size_t cap);

/* One stream to several receivers (fan-out): the stream goes to host:port
 * as well, from the next access unit on; each packet is made (and
 * protected) once for all of them. cfg.host:port is the first such
 * client. RTCP goes to each one's port + 1 (cfg.rtcp_port when set, its
 * own port with rtcp_mux); a receiver's NACK is answered to it alone.
 * Added twice, a client gets two copies. Any thread. Returns 0, -ENOENT
 * (host does not resolve; remove: no such client), -EAFNOSUPPORT (not of
 * the socket's address family), -EINVAL (port 0), -ENOMEM. */
URTP_API int urtp_sender_add_client(urtp_sender_t *s, const char *host, uint16_t port);
URTP_API int urtp_sender_remove_client(urtp_sender_t *s, const char *host, uint16_t port);

typedef struct urtp_sender_stats {
  uint32_t ssrc;
  uint64_t access_units;        /* pushed */
  uint64_t packets;             /* RTP packets sent */
  uint64_t bytes;               /* their bytes, headers included */
  uint64_t send_errors;         /* packets the network refused */
  uint64_t bitrate;             /* bits per second over the last second */
  uint64_t rtcp_sent;           /* our sender reports */
  unsigned receivers;           /* receivers that reported */
  /* the latest receiver report: its round trip (ns; -1: none yet), the
   * packets it counts lost, its interarrival jitter (in RTP timestamp
   * units) and fraction lost (0..255, RFC 3550) */
  int64_t rtt_ns;
  int64_t lost;
  uint32_t jitter;
  uint8_t fraction_lost;
  uint64_t nacks;               /* NACK packets received */
  uint64_t retransmitted;       /* packets sent again (rtx) */
  uint64_t keyframe_requests;   /* PLIs and FIRs passed to the keyframe callback */
  uint64_t held;                /* access units not sent: no keys yet (zrtp) */
  unsigned clients;             /* receivers sent to (urtp_sender_add_client) */
  urtp_security_t security;
  char sas[40];                 /* ZRTP's short authentication string, to
                                 * compare by voice; "" until SECURE */
} urtp_sender_stats_t;

URTP_API void urtp_sender_stats(urtp_sender_t *s, urtp_sender_stats_t *out);

/* Sends what is pending, a last sender report with BYE, closes the
 * sockets and frees. Returns 0, or the -errno of a final send that
 * failed. NULL is fine. */
URTP_API int urtp_sender_close(urtp_sender_t *s);

/* ---- Receiving ------------------------------------------------------- */

typedef struct urtp_receiver urtp_receiver_t;

typedef struct urtp_recv_config {
  urtp_codec_t codec;
  uint16_t port;                /* our RTP port; 0: any (urtp_receiver_port) */
  const char *bind_addr;        /* NULL (default): any IPv4 address; a
                                 * multicast group to join one */
  const char *multicast_iface;  /* the interface for the group; NULL: any */
  int pt;                       /* payload type expected; default 96; -1: any */
  int64_t ssrc;                 /* follow only this SSRC; default -1: any */
  uint64_t latency_ns;          /* how long a missing packet is waited
                                 * for; default 50 ms */
  /* RTCP, as for the sender: default on, on port + 1 or rtcp_mux. Our
   * receiver reports go where the sender's reports come from. */
  bool rtcp;
  uint16_t rtcp_port;
  bool rtcp_mux;
  const char *cname;
  const char *srtp_key;         /* as for the sender */
  const char *srtp_profile;
  /* ZRTP (RFC 6189): SRTP keys agreed with the other end, which runs ZRTP
   * too (another urtp stream, uvgrtpsrc or uvgrtpsink with zrtp=true,
   * uvgRTP), instead of srtp_key. Media that
   * arrives before the keys is dropped (counted). Default off. zrtp_cache: a file that
   * keeps our ZID and the secrets of earlier calls, so that a changed
   * peer shows (NULL, default: none). Read the SAS from the stats once
   * security is URTP_SECURITY_ZRTP_SECURE and compare it with the other
   * end's by voice: that rules out a man in the middle. */
  bool zrtp;
  const char *zrtp_cache;
  /* Loss recovery: NACKs for missing packets, RTX packets of payload type
   * rtx_pt taken, a PLI when a packet is given up. Default off; rtx_pt
   * default 97. Needs RTCP. */
  bool rtx;
  int rtx_pt;
  /* Parameter sets (Annex-B) known out of band (from the SDP), handed
   * out with the first access unit; NULL (default): only those in band. */
  const uint8_t *params;
  size_t params_len;
  int rcvbuf;                   /* socket receive buffer, bytes (the
                                 * system's limit applies); 0 (default):
                                 * sized by the stream, 2 to 32 MiB asked,
                                 * as uvgrtpsrc's buffer-size 0 */
  /* A UDP socket the caller made and bound, to receive on instead of one
   * of ours (port unused: urtp_receiver_port says the socket's; a group
   * in bind_addr is joined): as the sender's fd. Default -1. */
  int fd;
} urtp_recv_config_t;

URTP_API void urtp_recv_config_init(urtp_recv_config_t *cfg, urtp_codec_t codec);

/* Binds the sockets. Returns 0, or -EINVAL, -ENOTSUP (SRTP), -EADDRINUSE,
 * -ENOMEM or another -errno of the sockets. */
URTP_API int urtp_receiver_open(urtp_receiver_t **out, const urtp_recv_config_t *cfg);

/* The RTP port bound (the one asked for, or the one the system chose). */
URTP_API uint16_t urtp_receiver_port(const urtp_receiver_t *r);

enum {
  URTP_FRAME_KEY = 1 << 0,      /* a key frame (IDR/IRAP picture) */
  URTP_FRAME_GAP = 1 << 1,      /* something is missing before it: loss, a
                                 * dropped access unit, a new sender */
};

/* An access unit as it arrived: H.26x in Annex-B form, or one Opus packet.
 * Valid until the next pull or close. */
typedef struct urtp_frame {
  const uint8_t *data;
  size_t len;
  /* Parameter sets to put before it (Annex-B): with the first access unit
   * and whenever they changed or the sender did; else NULL. */
  const uint8_t *params;
  size_t params_len;
  uint64_t pts_ns;              /* presentation time, CLOCK_MONOTONIC */
  uint32_t rtp_ts;
  uint32_t ssrc;
  unsigned flags;               /* URTP_FRAME_* */
} urtp_frame_t;

/* Waits up to timeout_ms (-1: forever; 0: only what has arrived) for the
 * next access unit, servicing RTCP and loss recovery meanwhile. Returns 1
 * with *f filled, 0 on the timeout, or a -errno of the socket. */
URTP_API int urtp_receiver_pull(urtp_receiver_t *r, urtp_frame_t *f, int timeout_ms);

/* Asks the sender for a key frame (a PLI, with RTCP). */
URTP_API void urtp_receiver_request_keyframe(urtp_receiver_t *r);

typedef struct urtp_receiver_stats {
  uint32_t ssrc;                /* the sender followed (when have_sender) */
  bool have_sender;
  char cname[256];              /* its CNAME, once its RTCP told it */
  uint64_t frames;              /* access units pulled */
  uint64_t packets;             /* RTP packets used */
  uint64_t bytes;               /* their payload bytes */
  uint64_t lost;                /* packets never received */
  uint64_t recovered;           /* missing packets retransmission brought */
  uint64_t frames_dropped;      /* access units given up (damage, loss) */
  uint64_t dropped;             /* datagrams refused: not RTP, another
                                 * payload type or sender, SRTP failures */
  uint64_t kernel_drops;        /* dropped by the kernel: buffer full */
  uint64_t sender_changes;      /* another SSRC took over, or a restart */
  uint64_t sender_reports;      /* RTCP sender reports of the sender */
  uint64_t rtcp_sent;           /* our receiver reports */
  uint64_t nacks_sent;
  uint64_t keyframe_requests;   /* PLIs and FIRs sent */
  int64_t jitter_ns;            /* interarrival jitter (RFC 3550 A.8) */
  urtp_security_t security;
  char sas[40];                 /* as the sender's */
} urtp_receiver_stats_t;

URTP_API void urtp_receiver_stats(urtp_receiver_t *r, urtp_receiver_stats_t *out);

/* Sends a last receiver report with BYE, closes the sockets and frees.
 * NULL is fine. */
URTP_API void urtp_receiver_close(urtp_receiver_t *r);

#ifdef __cplusplus
}
#endif

#endif
