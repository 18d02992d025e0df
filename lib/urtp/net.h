/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * net.h - batched UDP I/O for RTP: sendmmsg / UDP GSO out, recvmmsg / UDP GRO in.
 *
 * Promises:
 *  - IPv4 and IPv6, unicast and multicast: a bind address that is a group
 *    is joined; a remote that is a group gets the multicast TTL, loop and
 *    interface settings. Unicast sockets are connected to the remote,
 *    except one the caller made and handed over (urtp_sock_adopt).
 *  - Socket buffer sizes are set, forced past net.core.[rw]mem_max where the
 *    process may (SO_[RS]NDBUFFORCE), and the size the kernel granted is
 *    reported back. Datagrams the kernel drops for a full receive buffer
 *    are counted (urtp_rx_t.kernel_drops).
 *  - Sending: URTP_IO_GSO groups each run of equal-sized packets (the last
 *    of a run may be shorter) into one UDP_SEGMENT send, and sends all
 *    groups of a batch with one sendmmsg when it can; URTP_IO_MMSG sends
 *    one datagram per message with sendmmsg; URTP_IO_PLAIN one sendmsg per
 *    packet. If the kernel refuses GSO (not supported, or EIO from a device
 *    that cannot checksum, or EMSGSIZE), the socket falls back to MMSG for
 *    good, resends what was not sent, and says so in urtp_sock_t.tx_mode.
 *  - Receiving: URTP_IO_GRO enables UDP_GRO and splits each coalesced
 *    buffer by the segment size the kernel reports; URTP_IO_MMSG receives
 *    a batch with one recvmmsg; URTP_IO_PLAIN one recvmsg per datagram.
 *  - Waits can be interrupted from another thread (urtp_sock_wake), as
 *    GStreamer's unlock needs: a receive waiting for datagrams, and a send
 *    waiting for room in a full socket buffer.
 *  - No allocation after urtp_sock_open() and urtp_rx_init(); the send path
 *    keeps its message arrays in the socket and grows them only when a
 *    batch is larger than any before.
 */
#ifndef URTP_NET_H
#define URTP_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "batch.h"

typedef enum urtp_io_mode {
  URTP_IO_AUTO,   /* GSO/GRO where the kernel has it, else MMSG */
  URTP_IO_GSO,    /* send side: UDP GSO */
  URTP_IO_GRO,    /* receive side: UDP GRO */
  URTP_IO_MMSG,
  URTP_IO_PLAIN,
} urtp_io_mode_t;

typedef struct urtp_sock_config {
  const char *bind_addr;      /* NULL: any address of the remote's family */
  uint16_t bind_port;         /* 0: ephemeral */
  const char *remote_addr;    /* NULL: none (receive only); names are resolved */
  uint16_t remote_port;
  const char *multicast_iface;/* interface name for multicast, or NULL */
  int ttl;                    /* unicast TTL / hop limit; 0: system default */
  int ttl_mc;                 /* multicast TTL; 0: system default */
  bool multicast_loop;
  int dscp;                   /* 0..63; -1: leave alone */
  int sndbuf, rcvbuf;         /* bytes; 0: leave the system default */
  bool reuse;                 /* SO_REUSEADDR (and SO_REUSEPORT) */
  urtp_io_mode_t tx_mode, rx_mode;
  /* Receiving on a group (bind_addr a multicast address): multicast_iface
   * may be a comma-separated list, the group is joined on each (sends
   * use the first); multicast_sources, a comma-separated list of source
   * addresses, makes the joins source-specific (RFC 4607, IGMPv3/MLDv2):
   * "+a" or "a" takes only what a sends, "-a" everything but what a
   * sends; one form per list. no_join: bound to the group, not joined
   * (someone else joins). */
  const char *multicast_sources;
  bool no_join;
} urtp_sock_config_t;

typedef struct urtp_sock {
  int fd;
  int wake_fd;                /* eventfd that interrupts waits */
  /* Another descriptor a receive wait also watches (an RTCP socket); -1:
   * none. When it becomes readable, urtp_sock_recv returns 0 with
   * watch_ready set (cleared at the start of every call). */
  int watch_fd;
  bool watch_ready;
  int family;                 /* AF_INET or AF_INET6 */
  /* adopted (urtp_sock_adopt): never connected, as others may share the
   * socket; every send names its remote */
  bool unconnected;
  struct sockaddr_storage remote;
  socklen_t remote_len;       /* 0: no remote */
  int sndbuf, rcvbuf;         /* effective sizes the kernel reports */
  bool drops_reported;        /* the kernel reports receive drops (urtp_rx_t) */
  bool rx_timestamps;         /* urtp_sock_set_rx_timestamps is on */
  urtp_io_mode_t tx_mode;     /* resolved: GSO, MMSG or PLAIN */
  urtp_io_mode_t rx_mode;     /* resolved: GRO, MMSG or PLAIN */
  unsigned gso_max_segs;      /* segments per GSO send */
  uint64_t tx_syscalls, rx_syscalls; /* send/receive calls (not polls) */
  uint64_t tx_msgs;           /* messages the kernel took: a packet, or a
                               * run of them sent with GSO */
  uint64_t tx_errors;         /* packets the kernel refused */
  size_t tx_sent;             /* packets of the last urtp_sock_send's batch
                               * the kernel took (also after an error) */
  /* Paces what urtp_sock_send sends (pacer.h); NULL: no pacing. Set by the
   * owner, may be shared by several sockets (one budget). */
  struct urtp_pacer *pacer;
  /* Told of each send call's packets as they leave (urtp_sock_send's
   * packets [first, end) of b, at CLOCK_MONOTONIC ns), just before the
   * call; packets the call did not take are told again when retried.
   * NULL: not told. Set by the owner: congestion control times packets
   * by it. */
  void (*on_sent)(void *user, const struct urtp_batch *b, size_t first, size_t end,
                  uint64_t mono);
  void *on_sent_user;
  /* send scratch, grown to the largest batch */
  struct mmsghdr *msgs;
  size_t msgs_cap;
  uint8_t *cmsgs;             /* one cmsg buffer per message */
} urtp_sock_t;

/* Opens, configures and binds the socket. Returns 0 or -errno (-EINVAL for
 * bad addresses, -EADDRINUSE, ...). On failure *s is closed. */
int urtp_sock_open(urtp_sock_t *s, const urtp_sock_config_t *cfg);
void urtp_sock_close(urtp_sock_t *s);

/* Takes a UDP socket the caller made and bound (an application's own, or
 * one it shares between a sender and a receiver: symmetric RTP, RFC 4961)
 * as urtp_sock_open would have opened it: the remote, buffers, DSCP, TTL,
 * multicast settings and I/O modes of cfg are applied; a bind_addr that is
 * a group is joined; bind_port and reuse are not used. The descriptor is
 * duplicated: urtp_sock_close closes the duplicate, fd stays the caller's
 * (the options set are the socket's, seen through both). The socket is
 * never connected, so that it still receives from anyone: every send names
 * the remote. An IPv4 remote on an IPv6 socket is sent to in its mapped
 * form. Returns 0 or -errno: -ENOTSOCK, -EBADF, -EPROTOTYPE (not UDP),
 * -EAFNOSUPPORT (no remote address the socket can reach), or as
 * urtp_sock_open; on failure *s is closed. */
int urtp_sock_adopt(urtp_sock_t *s, int fd, const urtp_sock_config_t *cfg);

/* A second handle on the socket of `of`, for RTCP on the RTP port (RFC
 * 5761's rtcp-mux): the same socket (a duplicated descriptor: one receive
 * queue, one local port, the same remote), with its own wake-up and no
 * pacer; it sends PLAIN and receives in of's mode. Close it with
 * urtp_sock_close; `of` may close first. Returns 0 or -errno. */
int urtp_sock_share(urtp_sock_t *s, const urtp_sock_t *of);

/* The local port actually bound. */
int urtp_sock_local_port(const urtp_sock_t *s);

/* Sends every packet of b to the remote. Waits while the socket buffer is
 * full. Returns the number of packets sent (b->npkts unless an error stopped
 * it) or -errno if none could be sent; ECONNREFUSED from an earlier ICMP
 * error is counted in tx_errors and the rest of the batch still sent.
 *
 * Interruption: a wake-up (urtp_sock_wake, pending or arriving) seen while
 * the send waits for room ends it with -EINTR, whether or not packets went
 * out before; s->tx_sent then says how many did (the first tx_sent packets
 * of b, in order; the others were not sent and are not counted as errors).
 * A send that never has to wait is never interrupted. The wake-up stays
 * pending, so every later wait returns at once too, until urtp_sock_unwake.
 * Send system calls that find the buffer full (EAGAIN) are not counted in
 * tx_syscalls: they stand for the wait inside a blocking call. */
int urtp_sock_send(urtp_sock_t *s, const urtp_batch_t *b);

/* As urtp_sock_send, to `to` (of the socket's family; a group gets the
 * multicast settings the socket was opened with): one stream sent to
 * several receivers. The socket should not be connected (a connected
 * socket receives from its remote only). Returns as urtp_sock_send, or
 * -EAFNOSUPPORT for an address of another family. */
int urtp_sock_send_to(urtp_sock_t *s, const urtp_batch_t *b, const struct sockaddr_storage *to);

/* Changes the remote: a unicast one is connected to (datagrams from it
 * alone are received from then on), a group is only remembered; NULL
 * dissolves the connection (datagrams from anyone, no remote). Not while
 * a send is in flight. Returns 0, -EAFNOSUPPORT (another family) or
 * -errno of connect. */
int urtp_sock_set_remote(urtp_sock_t *s, const struct sockaddr_storage *to);

/* One received datagram: valid until the next urtp_sock_recv on this rx. */
typedef struct urtp_dgram {
  uint8_t *data;
  size_t len;
  struct sockaddr_storage *from;
  /* when the kernel took it (CLOCK_REALTIME ns) with
   * urtp_sock_set_rx_timestamps on; 0 otherwise */
  int64_t stamp_ns;
} urtp_dgram_t;

/* Has the kernel stamp every datagram as it arrives (SO_TIMESTAMPNS), for
 * arrival times that do not depend on when the receiver got round to
 * reading (congestion control feedback: a receive loop busy downstream
 * would otherwise time a whole batch at once). Off by default: it costs a
 * clock read in the kernel and a control message per datagram. The kernel
 * switches its stamping on a moment later: datagrams of the first
 * milliseconds may carry the time they were read. 0 or -errno. */
int urtp_sock_set_rx_timestamps(urtp_sock_t *s, bool on);

typedef struct urtp_rx_pending urtp_rx_pending_t;

typedef struct urtp_rx {
  size_t batch;               /* messages per recvmmsg (at most cap) */
  size_t cap;                 /* messages there is room for */
  size_t slot_size;           /* bytes per message buffer */
  uint8_t *mem;
  struct mmsghdr *msgs;
  struct iovec *iov;
  struct sockaddr_storage *from;
  uint8_t *cmsgs;
  urtp_dgram_t *dgrams;       /* results of the last receive */
  size_t ndgrams, dgrams_cap;
  /* GRO segments that did not fit in dgrams, handed out by the next call
   * before it receives more */
  struct urtp_rx_pending {
    size_t nmsgs;             /* messages the last receive filled */
    size_t msg;               /* first message not fully handed out */
    size_t off;               /* bytes of it already handed out */
    bool active;
  } pend;
  uint64_t truncated;         /* datagrams larger than a slot, dropped */
  /* Datagrams the kernel dropped because the socket's receive buffer was
   * full (SO_RXQ_OVFL), as far as reported: the count arrives with the
   * datagrams received after a drop, so drops are known once reading
   * catches up with them. */
  uint64_t kernel_drops;
  uint32_t drops_seen;        /* the kernel's running count */
  bool full;                  /* the last receive filled every message */
} urtp_rx_t;

/* batch: messages per system call (e.g. 64, at most 1024). slot_size:
 * 65536 for GRO, else the largest datagram expected. Returns 0, -EINVAL for
 * a zero size, or -ENOMEM. */
int urtp_rx_init(urtp_rx_t *rx, size_t batch, size_t slot_size);
void urtp_rx_destroy(urtp_rx_t *rx);

/* Messages taken per receive from now on: n, within 1 .. the batch given
 * to urtp_rx_init(). Slots beyond it are never written, so their pages
 * take no memory until a larger batch uses them. */
void urtp_rx_set_batch(urtp_rx_t *rx, size_t n);

/* --- receive memory that follows the stream ------------------------------
 * For a receiver that was not told its buffer size: both the kernel's
 * receive buffer and the datagrams taken per receive start small and grow
 * when the stream needs more, so that a thousand quiet streams cost little
 * and a 4K stream still loses nothing.
 *  - The kernel buffer starts at URTP_RX_AUTO_RCVBUF bytes asked (the
 *    kernel charges and reports twice what is asked, for its overhead),
 *    past net.core.rmem_max where the process may (CAP_NET_ADMIN), and
 *    doubles up to URTP_RX_AUTO_RCVBUF_MAX.
 *  - The batch starts at URTP_RX_AUTO_BATCH messages and doubles up to
 *    the rx's room.
 *  - Both grow after a receive that filled its whole batch finds the
 *    kernel's queue over half its buffer (SO_MEMINFO: the stream outruns
 *    what is read at once), and after the kernel reported drops. Nothing
 *    shrinks: a stream that needed it once may again. */
#define URTP_RX_AUTO_RCVBUF (2 << 20)
#define URTP_RX_AUTO_RCVBUF_MAX (32 << 20)
#define URTP_RX_AUTO_BATCH 8

typedef struct urtp_rx_auto {
  int asked;                  /* bytes asked of the kernel last */
  uint64_t drops_seen;        /* rx->kernel_drops at the last look */
  unsigned grows;             /* how often it grew */
  bool rcvbuf_max;            /* the kernel buffer can grow no further */
} urtp_rx_auto_t;

/* Sets the starting sizes on s and rx (before the first receive). */
void urtp_rx_auto_start(urtp_rx_auto_t *a, urtp_sock_t *s, urtp_rx_t *rx);
/* After a receive: grows what the stream needs. One system call, and only
 * after a full batch or new drops. Returns whether anything grew
 * (s->rcvbuf and rx->batch say to what). */
bool urtp_rx_auto_update(urtp_rx_auto_t *a, urtp_sock_t *s, urtp_rx_t *rx);
/* Whether nothing can grow any more: drops now are the system's limit
 * (rmem_max without CAP_NET_ADMIN, the maximum, or the CPU). */
bool urtp_rx_auto_at_max(const urtp_rx_auto_t *a, const urtp_rx_t *rx);

/* Waits up to timeout_ms (-1: forever, 0: don't wait) for datagrams, then
 * takes as many as are queued, up to the batch. Returns how many datagrams
 * are in rx->dgrams, 0 on timeout, -EINTR when woken by urtp_sock_wake(),
 * or -errno. When the previous call filled the whole batch, what is queued
 * is taken without polling first; a pending wake-up is then seen by the
 * first call that has to wait. */
int urtp_sock_recv(urtp_sock_t *s, urtp_rx_t *rx, int timeout_ms);

/* Sends one datagram without waiting for buffer room, to `to` (NULL: the
 * remote); with a pacer, after its turn (interruptible: -EINTR). Returns
 * the bytes sent or -errno (-EAGAIN when the buffer is full: dropped, as
 * RTCP can afford). */
int urtp_sock_sendto(urtp_sock_t *s, const void *buf, size_t len, const struct sockaddr *to,
                     socklen_t tolen);

/* Interrupts a wait in urtp_sock_recv or urtp_sock_send (now or the next
 * one, until urtp_sock_unwake); thread-safe. */
void urtp_sock_wake(urtp_sock_t *s);
/* Clears a pending wake-up. */
void urtp_sock_unwake(urtp_sock_t *s);

const char *urtp_io_mode_name(urtp_io_mode_t m);

/* Addresses as they come with datagrams. */
/* Whether a and b name the same host (the IP address, ports aside; an
 * IPv4-mapped IPv6 address is its IPv4 address). NULL matches nothing. */
bool urtp_addr_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* Whether a and b are the same transport address: the same host (as
 * above) and port. */
bool urtp_addr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
/* The port of a (0 for another family); setting it (IPv4 or IPv6). */
uint16_t urtp_addr_port(const struct sockaddr_storage *a);
void urtp_addr_set_port(struct sockaddr_storage *a, uint16_t port);
/* a as an address of family (AF_INET or AF_INET6) into *out: the same, or
 * IPv4 to and from its IPv4-mapped IPv6 form. Returns 0 or -EAFNOSUPPORT. */
int urtp_addr_to_family(const struct sockaddr_storage *a, int family,
                        struct sockaddr_storage *out);
/* Whether a is a multicast group. */
bool urtp_addr_is_multicast(const struct sockaddr_storage *a);
/* The length of a's family's sockaddr (0 for another family). */
socklen_t urtp_addr_len(const struct sockaddr_storage *a);

#endif
