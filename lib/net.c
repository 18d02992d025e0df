/* SPDX-License-Identifier: BSD-2-Clause */
#include "urtp/net.h"
#include "urtp/pacer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef UIO_MAXIOV
#define UIO_MAXIOV 1024
#endif

/* Segments per GSO send. Kernels before 6.10 allow 64 (UDP_MAX_SEGMENTS),
 * newer ones 128. We stay at 64 without probing: with RTP's ~1400-byte
 * packets the 64 KiB limit below already stops a run at 46 segments, so
 * 128 would only help runs of packets under 512 bytes. */
#define GSO_MAX_SEGS 64
/* Largest UDP payload of one GSO send: 65535 minus the IPv4 and UDP
 * headers; IPv6's payload length field does not count its own header. */
#define GSO_MAX_BYTES_V4 65507
#define GSO_MAX_BYTES_V6 65527
/* sendmmsg takes at most this many messages per call (the kernel caps
 * vlen at UIO_MAXIOV silently); chunking ourselves keeps the count exact. */
#define TX_CHUNK 1024

/* One UDP_SEGMENT cmsg per send message. */
#define TX_CMSG_SLOT CMSG_SPACE(sizeof(uint16_t))
/* One UDP_GRO cmsg per receive message. */
/* UDP_GRO's segment size, SO_RXQ_OVFL's drop count and SO_TIMESTAMPNS's
 * time */
#define RX_CMSG_SLOT                                                                  \
  (CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint32_t)) +                           \
   CMSG_SPACE(sizeof(struct timespec)))
/* A GRO buffer from a NIC holds at most 64 segments (UDP_GRO_CNT_MAX); one
 * GSO send looped back intact may hold up to 128 and is carried over to the
 * next call when it does not fit. */
#define RX_SEGS_PER_SLOT 64

/* --- helpers ------------------------------------------------------------ */

static int set_int(int fd, int level, int opt, int v)
{
  return setsockopt(fd, level, opt, &v, sizeof(v)) < 0 ? -errno : 0;
}

static int get_int(int fd, int level, int opt)
{
  int v = 0;
  socklen_t l = sizeof(v);
  return getsockopt(fd, level, opt, &v, &l) < 0 ? -errno : v;
}

static bool addr_is_mcast(const struct sockaddr_storage *a)
{
  if (a->ss_family == AF_INET)
    return IN_MULTICAST(ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr));
  if (a->ss_family == AF_INET6) {
    const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
    if (IN6_IS_ADDR_MULTICAST(x))
      return true;
    if (IN6_IS_ADDR_V4MAPPED(x)) {
      uint32_t v4;
      memcpy(&v4, &x->s6_addr[12], 4);
      return IN_MULTICAST(ntohl(v4));
    }
  }
  return false;
}

static bool addr_is_v4(const struct sockaddr_storage *a)
{
  return a->ss_family == AF_INET ||
         (a->ss_family == AF_INET6 &&
          IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)a)->sin6_addr));
}

void urtp_addr_set_port(struct sockaddr_storage *a, uint16_t port)
{
  if (a->ss_family == AF_INET)
    ((struct sockaddr_in *)a)->sin_port = htons(port);
  else
    ((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

static int gai_err(int e)
{
  switch (e) {
  case EAI_MEMORY: return -ENOMEM;
  case EAI_SYSTEM: return errno ? -errno : -EINVAL;
  case EAI_AGAIN: return -EAGAIN;
  default: return -EINVAL;
  }
}

static int resolve(const char *host, struct addrinfo **res)
{
  struct addrinfo hints;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_protocol = IPPROTO_UDP;
  int e = getaddrinfo(host, NULL, &hints, res);
  return e ? gai_err(e) : 0;
}

static void copy_ai(struct sockaddr_storage *dst, socklen_t *len, const struct addrinfo *ai)
{
  memset(dst, 0, sizeof(*dst));
  memcpy(dst, ai->ai_addr, ai->ai_addrlen);
  *len = ai->ai_addrlen;
}

/* Tries the FORCE variant (root may exceed net.core.[rw]mem_max), then the
 * plain option, and returns what the kernel reports (twice the request, as
 * it books overhead). */
static int set_buf(int fd, int force_opt, int opt, int bytes)
{
  if (bytes > 0 && set_int(fd, SOL_SOCKET, force_opt, bytes) < 0)
    set_int(fd, SOL_SOCKET, opt, bytes);
  return get_int(fd, SOL_SOCKET, opt);
}

static int join_group(urtp_sock_t *s, const struct sockaddr_storage *grp, int ifindex)
{
  if (grp->ss_family == AF_INET) {
    struct ip_mreqn m;
    memset(&m, 0, sizeof(m));
    m.imr_multiaddr = ((const struct sockaddr_in *)grp)->sin_addr;
    m.imr_ifindex = ifindex;
    if (setsockopt(s->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)) < 0)
      return -errno;
    /* Only the joined group, not every group some other socket joined. */
    set_int(s->fd, IPPROTO_IP, IP_MULTICAST_ALL, 0);
    return 0;
  }
  const struct in6_addr *a6 = &((const struct sockaddr_in6 *)grp)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(a6)) {
    struct ip_mreqn m;
    memset(&m, 0, sizeof(m));
    memcpy(&m.imr_multiaddr, &a6->s6_addr[12], 4);
    m.imr_ifindex = ifindex;
    return setsockopt(s->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)) < 0 ? -errno : 0;
  }
  struct ipv6_mreq m6;
  memset(&m6, 0, sizeof(m6));
  m6.ipv6mr_multiaddr = *a6;
  m6.ipv6mr_interface = (unsigned)ifindex;
  return setsockopt(s->fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m6, sizeof(m6)) < 0 ? -errno : 0;
}

#define MAX_IFACES 8
#define MAX_SOURCES 16

/* The interfaces of a comma-separated list, into idx; *n 0: none named.
 * -ENODEV when a name is not an interface, -E2BIG past MAX_IFACES. */
static int iface_list(const char *list, int *idx, size_t *n)
{
  *n = 0;
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char name[IF_NAMESIZE];
    if (len) {
      if (len >= sizeof name)
        return -ENODEV;
      if (*n == MAX_IFACES)
        return -E2BIG;
      memcpy(name, p, len);
      name[len] = '\0';
      if (!(idx[(*n)++] = (int)if_nametoindex(name)))
        return -ENODEV;
    }
    p = end ? end + 1 : p + len;
  }
  return 0;
}

/* The sources of a comma-separated list of the group's family; *exclude
 * says which form they take. -EINVAL for anything else. */
static int source_list(const char *list, int family, struct sockaddr_storage *src, size_t *n,
                       bool *exclude)
{
  *n = 0;
  *exclude = false;
  int form = 0; /* 1 include, 2 exclude */
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char text[INET6_ADDRSTRLEN + 2];
    if (len) {
      int f = *p == '-' ? 2 : 1;
      if (*p == '+' || *p == '-') {
        p++;
        len--;
      }
      if (!len || len >= sizeof text || *n == MAX_SOURCES || (form && form != f))
        return -EINVAL;
      form = f;
      memcpy(text, p, len);
      text[len] = '\0';
      struct addrinfo hints = { .ai_family = family, .ai_flags = AI_NUMERICHOST }, *ai = NULL;
      if (getaddrinfo(text, NULL, &hints, &ai) != 0 || !ai)
        return -EINVAL;
      memset(&src[*n], 0, sizeof src[*n]);
      memcpy(&src[(*n)++], ai->ai_addr, ai->ai_addrlen);
      freeaddrinfo(ai);
    }
    p = end ? end + 1 : p + len;
  }
  *exclude = form == 2;
  return 0;
}

/* Joins grp on each interface cfg names (or the default one), source-
 * specific when cfg names sources. */
static int join_all(urtp_sock_t *s, const struct sockaddr_storage *grp,
                    const urtp_sock_config_t *cfg)
{
  int idx[MAX_IFACES], r;
  size_t nif, nsrc;
  struct sockaddr_storage src[MAX_SOURCES];
  bool exclude;
  if ((r = iface_list(cfg->multicast_iface, idx, &nif)) < 0)
    return r;
  if ((r = source_list(cfg->multicast_sources, grp->ss_family, src, &nsrc, &exclude)) < 0)
    return r;
  if (cfg->no_join)
    return 0;
  if (!nif)
    idx[nif++] = 0;
  int level = grp->ss_family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
  for (size_t i = 0; i < nif; i++) {
    if (!nsrc || exclude) {
      if (!nsrc) {
        if ((r = join_group(s, grp, idx[i])) < 0)
          return r;
      } else {
        struct group_req g = { .gr_interface = (uint32_t)idx[i] };
        memcpy(&g.gr_group, grp, sizeof *grp);
        if (setsockopt(s->fd, level, MCAST_JOIN_GROUP, &g, sizeof g) < 0)
          return -errno;
      }
    }
    for (size_t k = 0; k < nsrc; k++) {
      struct group_source_req g = { .gsr_interface = (uint32_t)idx[i] };
      memcpy(&g.gsr_group, grp, sizeof *grp);
      memcpy(&g.gsr_source, &src[k], sizeof src[k]);
      if (setsockopt(s->fd, level, exclude ? MCAST_BLOCK_SOURCE : MCAST_JOIN_SOURCE_GROUP, &g,
                     sizeof g) < 0)
        return -errno;
    }
  }
  if (grp->ss_family == AF_INET)
    set_int(s->fd, IPPROTO_IP, IP_MULTICAST_ALL, 0);
  return 0;
}

/* The first interface of cfg's list: where multicast is sent from. */
static int first_iface(const urtp_sock_config_t *cfg, int *ifindex)
{
  int idx[MAX_IFACES], r;
  size_t n;
  *ifindex = 0;
  if ((r = iface_list(cfg->multicast_iface, idx, &n)) < 0)
    return r;
  if (n)
    *ifindex = idx[0];
  return 0;
}

static int setup_mcast_tx(urtp_sock_t *s, const urtp_sock_config_t *cfg, int ifindex)
{
  int r;
  if (s->family == AF_INET || addr_is_v4(&s->remote)) {
    if (cfg->ttl_mc > 0 && (r = set_int(s->fd, IPPROTO_IP, IP_MULTICAST_TTL, cfg->ttl_mc)) < 0)
      return r;
    if ((r = set_int(s->fd, IPPROTO_IP, IP_MULTICAST_LOOP, cfg->multicast_loop)) < 0)
      return r;
    if (ifindex) {
      struct ip_mreqn m;
      memset(&m, 0, sizeof(m));
      m.imr_ifindex = ifindex;
      if (setsockopt(s->fd, IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof(m)) < 0)
        return -errno;
    }
    return 0;
  }
  if (cfg->ttl_mc > 0 &&
      (r = set_int(s->fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, cfg->ttl_mc)) < 0)
    return r;
  if ((r = set_int(s->fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, cfg->multicast_loop)) < 0)
    return r;
  if (ifindex && (r = set_int(s->fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, ifindex)) < 0)
    return r;
  return 0;
}

/* --- open / close ------------------------------------------------------- */

/* s takes fd (-1: the call that made it failed, errno says why) and a
 * wake-up eventfd of its own. Returns 0 or -errno. */
static int sock_take_fd(urtp_sock_t *s, int fd)
{
  s->fd = fd;
  if (fd < 0)
    return -errno;
  s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return s->wake_fd < 0 ? -errno : 0;
}

/* Buffers, drop reports, DSCP and TTL. */
static int sock_options(urtp_sock_t *s, const urtp_sock_config_t *cfg)
{
  int r;
  s->sndbuf = set_buf(s->fd, SO_SNDBUFFORCE, SO_SNDBUF, cfg->sndbuf);
  s->rcvbuf = set_buf(s->fd, SO_RCVBUFFORCE, SO_RCVBUF, cfg->rcvbuf);
  /* the kernel's count of datagrams dropped for a full receive buffer,
   * with every datagram received after the first drop */
  s->drops_reported = set_int(s->fd, SOL_SOCKET, SO_RXQ_OVFL, 1) == 0;

  /* DSCP and TTL: an IPv6 socket may also carry IPv4 (mapped) traffic, so
   * it gets the IPv4 options too, where the kernel takes them. */
  bool v6 = s->family == AF_INET6;
  if (cfg->dscp >= 0) {
    if (v6 && (r = set_int(s->fd, IPPROTO_IPV6, IPV6_TCLASS, cfg->dscp << 2)) < 0)
      return r;
    if ((r = set_int(s->fd, IPPROTO_IP, IP_TOS, cfg->dscp << 2)) < 0 && !v6)
      return r;
  }
  if (cfg->ttl > 0) {
    if (v6 && (r = set_int(s->fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, cfg->ttl)) < 0)
      return r;
    if ((r = set_int(s->fd, IPPROTO_IP, IP_TTL, cfg->ttl)) < 0 && !v6)
      return r;
  }
  return 0;
}

/* The remote (multicast settings; connected unless a group or the socket
 * is adopted) and the I/O modes. */
static int sock_finish(urtp_sock_t *s, const urtp_sock_config_t *cfg, int ifindex)
{
  int r;
  if (s->remote_len) {
    if (addr_is_mcast(&s->remote)) {
      /* Not connected: a socket connected to a group would drop all input
       * (no packet comes from the group address). Sends name the group. */
      if ((r = setup_mcast_tx(s, cfg, ifindex)) < 0)
        return r;
    } else {
      /* a sender may be given groups later (urtp_sock_send_to): their
       * TTL, loop and interface are set now, where the kernel takes them */
      (void)setup_mcast_tx(s, cfg, ifindex);
      if (!s->unconnected &&
          connect(s->fd, (struct sockaddr *)&s->remote, s->remote_len) < 0)
        return -errno;
    }
  }

  /* I/O modes: probe the socket options; GSO is probed with gso_size 0,
   * which changes nothing (each GSO send passes its size in a cmsg). */
  s->gso_max_segs = GSO_MAX_SEGS;
  s->tx_mode = cfg->tx_mode;
  if (s->tx_mode == URTP_IO_AUTO || s->tx_mode == URTP_IO_GSO)
    s->tx_mode = set_int(s->fd, SOL_UDP, UDP_SEGMENT, 0) == 0 ? URTP_IO_GSO : URTP_IO_MMSG;
  s->rx_mode = cfg->rx_mode;
  if (s->rx_mode == URTP_IO_AUTO || s->rx_mode == URTP_IO_GRO)
    s->rx_mode = set_int(s->fd, SOL_UDP, UDP_GRO, 1) == 0 ? URTP_IO_GRO : URTP_IO_MMSG;
  return 0;
}

static bool modes_valid(const urtp_sock_config_t *cfg)
{
  return cfg->dscp <= 63 && cfg->dscp >= -1 && cfg->tx_mode != URTP_IO_GRO &&
         cfg->rx_mode != URTP_IO_GSO && cfg->tx_mode <= URTP_IO_PLAIN &&
         cfg->rx_mode <= URTP_IO_PLAIN;
}

static int sock_open(urtp_sock_t *s, const urtp_sock_config_t *cfg)
{
  if (!modes_valid(cfg))
    return -EINVAL;

  /* Addresses: pick a remote and a bind address of the same family. */
  struct addrinfo *rres = NULL, *bres = NULL;
  const struct addrinfo *rai = NULL, *bai = NULL;
  int r = 0;
  if (cfg->remote_addr && (r = resolve(cfg->remote_addr, &rres)) < 0)
    return r;
  if (cfg->bind_addr && (r = resolve(cfg->bind_addr, &bres)) < 0)
    goto out;
  if (rres && bres) {
    for (const struct addrinfo *b = bres; b && !rai; b = b->ai_next)
      for (const struct addrinfo *a = rres; a; a = a->ai_next)
        if (a->ai_family == b->ai_family) {
          rai = a;
          bai = b;
          break;
        }
    if (!rai) {
      r = -EINVAL; /* e.g. an IPv4 bind address with an IPv6 remote */
      goto out;
    }
  } else {
    rai = rres;
    bai = bres;
  }

  struct sockaddr_storage local;
  socklen_t local_len;
  if (bai) {
    s->family = bai->ai_family;
    copy_ai(&local, &local_len, bai);
  } else {
    s->family = rai ? rai->ai_family : AF_INET;
    memset(&local, 0, sizeof(local));
    local.ss_family = (sa_family_t)s->family;
    local_len = s->family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
  }
  urtp_addr_set_port(&local, cfg->bind_port);
  if (rai) {
    copy_ai(&s->remote, &s->remote_len, rai);
    urtp_addr_set_port(&s->remote, cfg->remote_port);
  }
  if (s->family != AF_INET && s->family != AF_INET6) {
    r = -EAFNOSUPPORT;
    goto out;
  }

  int ifindex;
  if ((r = first_iface(cfg, &ifindex)) < 0)
    goto out;

  if ((r = sock_take_fd(s, socket(s->family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP))) < 0)
    goto out;

  if (cfg->reuse) {
    if ((r = set_int(s->fd, SOL_SOCKET, SO_REUSEADDR, 1)) < 0 ||
        (r = set_int(s->fd, SOL_SOCKET, SO_REUSEPORT, 1)) < 0)
      goto out;
  }
  if ((r = sock_options(s, cfg)) < 0)
    goto out;

  /* Bind; a multicast bind address is joined, and bound to itself so the
   * socket sees only that group (or to the wildcard where that fails). */
  bool bind_mc = addr_is_mcast(&local);
  if (bind(s->fd, (struct sockaddr *)&local, local_len) < 0) {
    r = -errno;
    if (!bind_mc)
      goto out;
    struct sockaddr_storage any;
    memset(&any, 0, sizeof(any));
    any.ss_family = (sa_family_t)s->family;
    urtp_addr_set_port(&any, cfg->bind_port);
    if (bind(s->fd, (struct sockaddr *)&any, local_len) < 0) {
      r = -errno;
      goto out;
    }
    r = 0;
  }
  if (bind_mc && (r = join_all(s, &local, cfg)) < 0)
    goto out;

  r = sock_finish(s, cfg, ifindex);

out:
  if (rres)
    freeaddrinfo(rres);
  if (bres)
    freeaddrinfo(bres);
  return r;
}

int urtp_sock_open(urtp_sock_t *s, const urtp_sock_config_t *cfg)
{
  memset(s, 0, sizeof(*s));
  s->fd = -1;
  s->wake_fd = -1;
  s->watch_fd = -1;
  int r = sock_open(s, cfg);
  if (r < 0)
    urtp_sock_close(s);
  return r;
}

int urtp_sock_adopt(urtp_sock_t *s, int fd, const urtp_sock_config_t *cfg)
{
  memset(s, 0, sizeof(*s));
  s->fd = s->wake_fd = s->watch_fd = -1;
  if (!modes_valid(cfg))
    return -EINVAL;
  int domain = get_int(fd, SOL_SOCKET, SO_DOMAIN);
  if (domain < 0)
    return domain; /* -EBADF, -ENOTSOCK */
  if (get_int(fd, SOL_SOCKET, SO_TYPE) != SOCK_DGRAM ||
      get_int(fd, SOL_SOCKET, SO_PROTOCOL) != IPPROTO_UDP)
    return -EPROTOTYPE;
  if (domain != AF_INET && domain != AF_INET6)
    return -EAFNOSUPPORT;

  struct addrinfo *rres = NULL, *bres = NULL;
  int r = 0;
  int ifindex;
  if ((r = first_iface(cfg, &ifindex)) < 0)
    return r;
  s->family = domain;
  s->unconnected = true;
  /* a descriptor of our own: closing it leaves the caller's open */
  if ((r = sock_take_fd(s, fcntl(fd, F_DUPFD_CLOEXEC, 0))) < 0)
    goto out;
  /* the remote: an address of the socket's family, or an IPv4 one mapped
   * onto an IPv6 socket */
  if (cfg->remote_addr) {
    if ((r = resolve(cfg->remote_addr, &rres)) < 0)
      goto out;
    r = -EAFNOSUPPORT;
    for (int pass = 0; pass < 2 && r < 0; pass++)
      for (const struct addrinfo *a = rres; a && r < 0; a = a->ai_next) {
        struct sockaddr_storage ra;
        socklen_t rl;
        if (pass == 0 && a->ai_family != domain)
          continue;
        copy_ai(&ra, &rl, a);
        if (urtp_addr_to_family(&ra, domain, &s->remote) == 0) {
          s->remote_len = urtp_addr_len(&s->remote);
          urtp_addr_set_port(&s->remote, cfg->remote_port);
          r = 0;
        }
      }
    if (r < 0)
      goto out;
  }
  /* a group to listen to is joined; the socket is bound already */
  if (cfg->bind_addr) {
    if ((r = resolve(cfg->bind_addr, &bres)) < 0)
      goto out;
    struct sockaddr_storage ba, grp;
    socklen_t bl;
    copy_ai(&ba, &bl, bres);
    if (addr_is_mcast(&ba) && (r = urtp_addr_to_family(&ba, domain, &grp)) == 0 &&
        (r = join_all(s, &grp, cfg)) < 0)
      goto out;
    r = 0;
  }

  if ((r = sock_options(s, cfg)) < 0)
    goto out;
  r = sock_finish(s, cfg, ifindex);

out:
  if (rres)
    freeaddrinfo(rres);
  if (bres)
    freeaddrinfo(bres);
  if (r < 0)
    urtp_sock_close(s);
  return r;
}

int urtp_sock_share(urtp_sock_t *s, const urtp_sock_t *of)
{
  memset(s, 0, sizeof(*s));
  s->wake_fd = s->watch_fd = -1;
  int r = sock_take_fd(s, fcntl(of->fd, F_DUPFD_CLOEXEC, 0));
  if (r < 0) {
    urtp_sock_close(s);
    return r;
  }
  s->family = of->family;
  s->unconnected = of->unconnected;
  s->remote = of->remote;
  s->remote_len = of->remote_len;
  s->sndbuf = of->sndbuf;
  s->rcvbuf = of->rcvbuf;
  s->drops_reported = of->drops_reported;
  s->rx_timestamps = of->rx_timestamps;
  s->tx_mode = URTP_IO_PLAIN;
  /* UDP_GRO is the socket's, so it holds for this handle too */
  s->rx_mode = of->rx_mode;
  s->gso_max_segs = 1;
  return 0;
}

void urtp_sock_close(urtp_sock_t *s)
{
  if (s->fd >= 0)
    close(s->fd);
  if (s->wake_fd >= 0)
    close(s->wake_fd);
  free(s->msgs);
  free(s->cmsgs);
  s->fd = -1;
  s->wake_fd = -1;
  s->msgs = NULL;
  s->cmsgs = NULL;
  s->msgs_cap = 0;
}

int urtp_sock_local_port(const urtp_sock_t *s)
{
  struct sockaddr_storage a;
  socklen_t l = sizeof(a);
  if (getsockname(s->fd, (struct sockaddr *)&a, &l) < 0)
    return -errno;
  if (a.ss_family == AF_INET)
    return ntohs(((struct sockaddr_in *)&a)->sin_port);
  return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
}

/* --- send --------------------------------------------------------------- */

/* s->cmsgs holds msgs_cap cmsg slots, then msgs_cap uint32 packet indices
 * (the first packet of each message, to know how far a partial send got),
 * then msgs_cap uint32 byte counts (what each message carries, for the
 * pacer). */
static uint32_t *tx_first(const urtp_sock_t *s)
{
  return (uint32_t *)(void *)(s->cmsgs + s->msgs_cap * TX_CMSG_SLOT);
}

static uint32_t *tx_bytes(const urtp_sock_t *s)
{
  return tx_first(s) + s->msgs_cap;
}

static int tx_reserve(urtp_sock_t *s, size_t n)
{
  if (n <= s->msgs_cap)
    return 0;
  struct mmsghdr *m = malloc(n * sizeof(*m));
  /* zeroed: each control message's padding after its 2 bytes of GSO
   * size is never written, and goes to the kernel as it is */
  uint8_t *c = calloc(n, TX_CMSG_SLOT + 2 * sizeof(uint32_t));
  if (!m || !c) {
    free(m);
    free(c);
    return -ENOMEM;
  }
  free(s->msgs);
  free(s->cmsgs);
  s->msgs = m;
  s->cmsgs = c;
  s->msgs_cap = n;
  return 0;
}

/* Fills up to s->msgs_cap messages from packet *next on; returns how many.
 * In GSO mode a message covers a run of packets of equal length (the last
 * may be shorter and ends the run) whose iovecs lie back to back in the
 * batch, so the message points straight into b->iov without copying; a run
 * stays within `limit` bytes (the pacer's chunk). */
static size_t tx_build(urtp_sock_t *s, const urtp_batch_t *b, size_t *next, size_t limit,
                       const struct sockaddr_storage *to, socklen_t tolen)
{
  const bool gso = s->tx_mode == URTP_IO_GSO;
  size_t max_bytes = addr_is_v4(to) ? GSO_MAX_BYTES_V4 : GSO_MAX_BYTES_V6;
  if (limit < max_bytes)
    max_bytes = limit;
  uint32_t *first = tx_first(s), *mbytes = tx_bytes(s);
  size_t i = *next, nm = 0;

  while (i < b->npkts && nm < s->msgs_cap) {
    const urtp_pkt_t *p = &b->pkts[i];
    struct msghdr *h = &s->msgs[nm].msg_hdr;
    h->msg_name = tolen ? (void *)to : NULL;
    h->msg_namelen = tolen;
    h->msg_iov = (struct iovec *)&b->iov[p->iov_first];
    h->msg_iovlen = p->iov_count;
    h->msg_control = NULL;
    h->msg_controllen = 0;
    h->msg_flags = 0;
    first[nm] = (uint32_t)i;
    mbytes[nm] = p->len;

    size_t n = 1;
    if (gso && p->len > 0) {
      const size_t seg = p->len;
      size_t bytes = seg, niov = p->iov_count;
      const urtp_pkt_t *prev = p;
      while (i + n < b->npkts && n < s->gso_max_segs) {
        const urtp_pkt_t *q = &b->pkts[i + n];
        if (q->len == 0 || q->len > seg || bytes + q->len > max_bytes ||
            q->iov_first != prev->iov_first + prev->iov_count ||
            niov + q->iov_count > UIO_MAXIOV)
          break;
        bytes += q->len;
        niov += q->iov_count;
        prev = q;
        n++;
        if (q->len < seg)
          break;
      }
      mbytes[nm] = (uint32_t)bytes;
      if (n > 1) {
        h->msg_iovlen = niov;
        h->msg_control = s->cmsgs + nm * TX_CMSG_SLOT;
        h->msg_controllen = TX_CMSG_SLOT;
        struct cmsghdr *c = CMSG_FIRSTHDR(h);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t gs = (uint16_t)seg;
        memcpy(CMSG_DATA(c), &gs, sizeof(gs));
      }
    }
    i += n;
    nm++;
  }
  *next = i;
  return nm;
}

/* Waits until the socket takes data again, or until urtp_sock_wake().
 * Returns 0, or -EINTR when woken. */
static int tx_wait(urtp_sock_t *s, int err)
{
  struct pollfd pfd[2] = {
    { .fd = s->wake_fd, .events = POLLIN },
    { .fd = s->fd, .events = POLLOUT },
  };
  /* ENOBUFS: the device queue is full and POLLOUT would not tell when it
   * drains, so only the wake-up is polled, for a millisecond. The 100 ms
   * bound otherwise is a safety net, not a timer anyone relies on. */
  int pr = err == ENOBUFS ? poll(pfd, 1, 1) : poll(pfd, 2, 100);
  if (pr > 0 && (pfd[0].revents & POLLIN))
    return -EINTR;
  return 0;
}

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps until `at` (CLOCK_MONOTONIC ns), or until urtp_sock_wake().
 * Returns 0, or -EINTR when woken. */
static int tx_sleep(urtp_sock_t *s, uint64_t at)
{
  for (;;) {
    uint64_t now = mono_ns();
    if (now >= at)
      return 0;
    struct timespec ts = { .tv_sec = (time_t)((at - now) / 1000000000u),
                           .tv_nsec = (long)((at - now) % 1000000000u) };
    struct pollfd pfd = { .fd = s->wake_fd, .events = POLLIN };
    int pr = ppoll(&pfd, 1, &ts, NULL);
    if (pr > 0 && (pfd.revents & POLLIN))
      return -EINTR;
  }
}

/* Gives back to the pacer what messages [k, booked) had booked. */
static void tx_unbook(urtp_sock_t *s, size_t k, size_t booked)
{
  size_t unsent = 0;
  for (size_t m = k; m < booked; m++)
    unsent += tx_bytes(s)[m];
  if (unsent)
    urtp_pacer_give_back(s->pacer, unsent);
}

/* With a pacer: books the messages from k on that fit in one chunk, and
 * waits until they may go. Returns the index past them, or -EINTR (with
 * nothing booked) when woken. */
static long tx_pace(urtp_sock_t *s, size_t k, size_t nm, size_t chunk, size_t queued)
{
  const uint32_t *mbytes = tx_bytes(s);
  size_t bytes = 0, upto = k;
  while (upto < nm && (upto == k || bytes + mbytes[upto] <= chunk))
    bytes += mbytes[upto++];
  uint64_t now = mono_ns();
  uint64_t at = urtp_pacer_take(s->pacer, bytes, queued - bytes, now);
  if (at > now) {
    int r = tx_sleep(s, at);
    urtp_pacer_waited(s->pacer, mono_ns() - now);
    if (r < 0) {
      urtp_pacer_give_back(s->pacer, bytes);
      return r;
    }
  }
  return (long)upto;
}

/* Sends b to `to` (tolen 0: the connected remote). */
static int sock_send(urtp_sock_t *s, const urtp_batch_t *b, const struct sockaddr_storage *to,
                     socklen_t tolen)
{
  s->tx_sent = 0;
  if (b->npkts == 0)
    return 0;
  int r = tx_reserve(s, b->npkts < TX_CHUNK ? b->npkts : TX_CHUNK);
  if (r < 0)
    return r;

  /* Paced: each chunk (whole messages, GSO runs within the chunk) waits
   * for its turn; `booked` marks how far the pacer has let us go. */
  const bool paced = urtp_pacer_active(s->pacer);
  const size_t chunk = paced ? urtp_pacer_chunk(s->pacer) : SIZE_MAX;
  size_t queued = 0;
  if (paced)
    for (size_t i = 0; i < b->npkts; i++)
      queued += b->pkts[i].len;

  size_t next = 0;
  while (next < b->npkts) {
    size_t nm = tx_build(s, b, &next, chunk, to, tolen);
    size_t k = 0, booked = paced ? 0 : nm;
    while (k < nm) {
      if (k == booked) {
        long upto = tx_pace(s, k, nm, chunk, queued);
        if (upto < 0) {
          s->tx_sent = tx_first(s)[k];
          return -EINTR;
        }
        for (size_t m = k; m < (size_t)upto; m++)
          queued -= tx_bytes(s)[m];
        booked = (size_t)upto;
      }
      /* told before the call: on loopback the receiver's feedback on a
       * packet can come back before the call returns; what does not go
       * is told again, later, when it is tried again */
      if (s->on_sent) {
        size_t upto = s->tx_mode == URTP_IO_PLAIN ? k + 1 : booked;
        s->on_sent(s->on_sent_user, b, tx_first(s)[k],
                   upto < nm ? tx_first(s)[upto] : next, mono_ns());
      }
      /* MSG_DONTWAIT: a full socket buffer returns EAGAIN instead of
       * blocking in the kernel, so that tx_wait can also be woken. */
      int n;
      if (s->tx_mode == URTP_IO_PLAIN)
        n = sendmsg(s->fd, &s->msgs[k].msg_hdr, MSG_DONTWAIT) < 0 ? -1 : 1;
      else
        n = sendmmsg(s->fd, s->msgs + k, (unsigned)(booked - k), MSG_DONTWAIT);
      if (n > 0) {
        s->tx_syscalls++;
        k += (size_t)n;
        s->tx_msgs += (uint64_t)n;
        continue;
      }
      int e = errno;
      if (e == EINTR)
        continue;
      if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) {
        /* not counted in tx_syscalls: it stands for the wait a blocking
         * call would have made, and the retry is the call that counts */
        if (tx_wait(s, e) < 0) {
          if (paced)
            tx_unbook(s, k, booked);
          s->tx_sent = tx_first(s)[k];
          return -EINTR;
        }
        continue;
      }
      s->tx_syscalls++;
      if (e == ECONNREFUSED) {
        /* The report of an ICMP error for an earlier datagram; it took the
         * place of this send, which is tried again. */
        s->tx_errors++;
        continue;
      }
      uint32_t p0 = tx_first(s)[k];
      if (s->tx_mode == URTP_IO_GSO && s->msgs[k].msg_hdr.msg_controllen &&
          (e == EIO || e == EINVAL || e == ENOPROTOOPT || e == EOPNOTSUPP || e == EMSGSIZE)) {
        /* No GSO on this path (EIO: the device cannot checksum; EMSGSIZE:
         * segments above the MTU, which MMSG sends as IP fragments): MMSG
         * for good, from the first packet not sent. */
        s->tx_mode = URTP_IO_MMSG;
        next = p0;
        if (paced)
          tx_unbook(s, k, booked);
        break;
      }
      s->tx_errors += (k < nm - 1 ? tx_first(s)[k + 1] : next) - p0;
      if (paced)
        tx_unbook(s, k, booked);
      s->tx_sent = p0;
      return p0 > 0 ? (int)p0 : -e;
    }
  }
  s->tx_sent = b->npkts;
  return (int)b->npkts;
}

int urtp_sock_send(urtp_sock_t *s, const urtp_batch_t *b)
{
  if (!s->remote_len) {
    s->tx_sent = 0;
    return -EDESTADDRREQ;
  }
  /* a group is named in every send: the socket is not connected to it */
  bool named = s->unconnected || addr_is_mcast(&s->remote);
  return sock_send(s, b, &s->remote, named ? s->remote_len : 0);
}

int urtp_sock_send_to(urtp_sock_t *s, const urtp_batch_t *b, const struct sockaddr_storage *to)
{
  socklen_t len = urtp_addr_len(to);
  if (!len || to->ss_family != s->family) {
    s->tx_sent = 0;
    return -EAFNOSUPPORT;
  }
  return sock_send(s, b, to, len);
}

int urtp_sock_set_remote(urtp_sock_t *s, const struct sockaddr_storage *to)
{
  if (!to) {
    /* AF_UNSPEC dissolves the association: datagrams from anyone again */
    struct sockaddr_storage none = { .ss_family = AF_UNSPEC };
    if (s->remote_len && !s->unconnected && !addr_is_mcast(&s->remote) &&
        connect(s->fd, (struct sockaddr *)&none, sizeof(sa_family_t)) < 0)
      return -errno;
    s->remote_len = 0;
    return 0;
  }
  socklen_t len = urtp_addr_len(to);
  if (!len || to->ss_family != s->family)
    return -EAFNOSUPPORT;
  if (addr_is_mcast(to)) {
    int r = urtp_sock_set_remote(s, NULL);
    if (r < 0)
      return r;
  } else if (!s->unconnected && connect(s->fd, (const struct sockaddr *)to, len) < 0) {
    return -errno;
  }
  memcpy(&s->remote, to, len);
  s->remote_len = len;
  return 0;
}

/* --- receive ------------------------------------------------------------ */

int urtp_sock_set_rx_timestamps(urtp_sock_t *s, bool on)
{
  if (set_int(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, on) < 0)
    return -errno;
  s->rx_timestamps = on;
  return 0;
}

int urtp_rx_init(urtp_rx_t *rx, size_t batch, size_t slot_size)
{
  memset(rx, 0, sizeof(*rx));
  if (batch == 0 || slot_size == 0)
    return -EINVAL;
  if (batch > TX_CHUNK)
    batch = TX_CHUNK; /* recvmmsg caps vlen at UIO_MAXIOV too */
  rx->batch = rx->cap = batch;
  rx->slot_size = slot_size;
  rx->dgrams_cap = batch * RX_SEGS_PER_SLOT;
  rx->mem = malloc(batch * slot_size);
  rx->msgs = calloc(batch, sizeof(*rx->msgs));
  rx->iov = calloc(batch, sizeof(*rx->iov));
  rx->from = calloc(batch, sizeof(*rx->from));
  rx->cmsgs = calloc(batch, RX_CMSG_SLOT);
  rx->dgrams = calloc(rx->dgrams_cap, sizeof(*rx->dgrams));
  if (!rx->mem || !rx->msgs || !rx->iov || !rx->from || !rx->cmsgs || !rx->dgrams) {
    urtp_rx_destroy(rx);
    return -ENOMEM;
  }
  for (size_t i = 0; i < batch; i++) {
    rx->iov[i].iov_base = rx->mem + i * slot_size;
    rx->iov[i].iov_len = slot_size;
    struct msghdr *h = &rx->msgs[i].msg_hdr;
    h->msg_iov = &rx->iov[i];
    h->msg_iovlen = 1;
  }
  return 0;
}

void urtp_rx_destroy(urtp_rx_t *rx)
{
  free(rx->mem);
  free(rx->msgs);
  free(rx->iov);
  free(rx->from);
  free(rx->cmsgs);
  free(rx->dgrams);
  memset(rx, 0, sizeof(*rx));
}

void urtp_rx_set_batch(urtp_rx_t *rx, size_t n)
{
  rx->batch = n < 1 ? 1 : n > rx->cap ? rx->cap : n;
}

void urtp_rx_auto_start(urtp_rx_auto_t *a, urtp_sock_t *s, urtp_rx_t *rx)
{
  memset(a, 0, sizeof(*a));
  a->asked = URTP_RX_AUTO_RCVBUF;
  s->rcvbuf = set_buf(s->fd, SO_RCVBUFFORCE, SO_RCVBUF, a->asked);
  a->rcvbuf_max = s->rcvbuf < a->asked; /* not even that: rmem_max */
  urtp_rx_set_batch(rx, URTP_RX_AUTO_BATCH);
  a->drops_seen = rx->kernel_drops;
}

/* Bytes the kernel holds for the socket now, or -1. */
static int rx_queued(const urtp_sock_t *s)
{
  uint32_t mi[SK_MEMINFO_VARS];
  socklen_t l = sizeof(mi);
  if (getsockopt(s->fd, SOL_SOCKET, SO_MEMINFO, mi, &l) < 0 ||
      l <= SK_MEMINFO_RMEM_ALLOC * sizeof(uint32_t))
    return -1;
  return (int)mi[SK_MEMINFO_RMEM_ALLOC];
}

bool urtp_rx_auto_update(urtp_rx_auto_t *a, urtp_sock_t *s, urtp_rx_t *rx)
{
  bool drops = rx->kernel_drops != a->drops_seen;
  a->drops_seen = rx->kernel_drops;
  if (!drops && !rx->full)
    return false;
  if (!drops) {
    int q = rx_queued(s);
    if (q < 0 || q <= s->rcvbuf / 2)
      return false;
  }
  bool grew = false;
  if (rx->batch < rx->cap) {
    urtp_rx_set_batch(rx, rx->batch * 2);
    grew = true;
  }
  if (!a->rcvbuf_max) {
    int before = s->rcvbuf;
    a->asked = a->asked >= URTP_RX_AUTO_RCVBUF_MAX / 2 ? URTP_RX_AUTO_RCVBUF_MAX : a->asked * 2;
    s->rcvbuf = set_buf(s->fd, SO_RCVBUFFORCE, SO_RCVBUF, a->asked);
    a->rcvbuf_max = a->asked >= URTP_RX_AUTO_RCVBUF_MAX || s->rcvbuf <= before;
    grew |= s->rcvbuf > before;
  }
  a->grows += grew;
  return grew;
}

bool urtp_rx_auto_at_max(const urtp_rx_auto_t *a, const urtp_rx_t *rx)
{
  return a->rcvbuf_max && rx->batch >= rx->cap;
}

static void rx_arm(urtp_rx_t *rx, size_t i)
{
  struct msghdr *h = &rx->msgs[i].msg_hdr;
  h->msg_name = &rx->from[i];
  h->msg_namelen = sizeof(rx->from[i]);
  h->msg_control = rx->cmsgs + i * RX_CMSG_SLOT;
  h->msg_controllen = RX_CMSG_SLOT;
  h->msg_flags = 0;
  rx->iov[i].iov_len = rx->slot_size;
}

/* The GRO segment size (0: none), the socket's drop count if the kernel
 * reported it, and the message's timestamp into *stamp (0: none). */
static size_t rx_cmsgs(urtp_rx_t *rx, struct msghdr *h, int64_t *stamp)
{
  size_t seg = 0;
  *stamp = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      struct timespec ts;
      memcpy(&ts, CMSG_DATA(c), sizeof(ts));
      *stamp = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
      continue;
    }
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int g;
      memcpy(&g, CMSG_DATA(c), sizeof(g));
      seg = g > 0 ? (size_t)g : 0;
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
      uint32_t d;
      memcpy(&d, CMSG_DATA(c), sizeof(d));
      /* a running count that may wrap: what it grew by since the last one */
      rx->kernel_drops += (uint32_t)(d - rx->drops_seen);
      rx->drops_seen = d;
    }
  }
  return seg;
}

/* Turns filled messages into datagrams, from the pending position on,
 * until the messages or rx->dgrams run out. */
static void rx_split(urtp_rx_t *rx)
{
  urtp_rx_pending_t *pd = &rx->pend;
  rx->ndgrams = 0;
  while (pd->msg < pd->nmsgs) {
    struct mmsghdr *m = &rx->msgs[pd->msg];
    uint8_t *base = rx->iov[pd->msg].iov_base;
    /* msg_len is the datagram's full length (we pass MSG_TRUNC). */
    size_t len = m->msg_len;
    int64_t stamp;
    size_t seg = rx_cmsgs(rx, &m->msg_hdr, &stamp);
    if (seg == 0 || seg >= len) {
      if (len > rx->slot_size) {
        rx->truncated++;
      } else {
        if (rx->ndgrams == rx->dgrams_cap)
          break;
        rx->dgrams[rx->ndgrams++] = (urtp_dgram_t){ base, len, &rx->from[pd->msg], stamp };
      }
    } else {
      /* Back-to-back segments of seg bytes, the last may be shorter; those
       * cut off by a short slot are lost. */
      size_t avail = len <= rx->slot_size ? len : rx->slot_size / seg * seg;
      while (pd->off < avail && rx->ndgrams < rx->dgrams_cap) {
        size_t l = avail - pd->off < seg ? avail - pd->off : seg;
        rx->dgrams[rx->ndgrams++] =
            (urtp_dgram_t){ base + pd->off, l, &rx->from[pd->msg], stamp };
        pd->off += l;
      }
      if (pd->off < avail)
        break;
      if (len > avail)
        rx->truncated += (len - avail + seg - 1) / seg;
    }
    pd->msg++;
    pd->off = 0;
  }
  pd->active = pd->msg < pd->nmsgs;
}

/* One receive system call per mode; returns messages filled or -errno. */
static int rx_fill(urtp_sock_t *s, urtp_rx_t *rx)
{
  if (s->rx_mode == URTP_IO_PLAIN) {
    size_t n = 0;
    while (n < rx->batch) {
      rx_arm(rx, n);
      ssize_t l = recvmsg(s->fd, &rx->msgs[n].msg_hdr, MSG_DONTWAIT | MSG_TRUNC);
      s->rx_syscalls++;
      if (l < 0) {
        if (n > 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
          break;
        if (n > 0 && errno == EINTR)
          continue;
        return n > 0 ? (int)n : -errno;
      }
      rx->msgs[n].msg_len = (unsigned)l;
      n++;
    }
    return (int)n;
  }
  for (size_t i = 0; i < rx->batch; i++)
    rx_arm(rx, i);
  int n = recvmmsg(s->fd, rx->msgs, (unsigned)rx->batch, MSG_DONTWAIT | MSG_TRUNC, NULL);
  s->rx_syscalls++;
  return n < 0 ? -errno : n;
}

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int urtp_sock_recv(urtp_sock_t *s, urtp_rx_t *rx, int timeout_ms)
{
  urtp_rx_pending_t *pd = &rx->pend;
  s->watch_ready = false;
  if (pd->active) {
    rx_split(rx);
    if (rx->ndgrams)
      return (int)rx->ndgrams;
  }
  rx->ndgrams = 0;

  /* The last receive filled every message: the queue is most likely not
   * empty, so take from it at once and save the poll (a receiver that falls
   * behind then spends one system call per batch, not two). */
  if (rx->full) {
    int n = rx_fill(s, rx);
    rx->full = n == (int)rx->batch;
    if (n > 0) {
      pd->nmsgs = (size_t)n;
      pd->msg = 0;
      pd->off = 0;
      rx_split(rx);
      if (rx->ndgrams)
        return (int)rx->ndgrams;
    }
  }

  const int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
  for (;;) {
    int wait = timeout_ms;
    if (timeout_ms > 0) {
      int64_t left = deadline - now_ms();
      wait = left > 0 ? (int)left : 0;
    }
    /* poll, then receive without blocking: recvmmsg's own timeout is only
     * checked between datagrams, and the eventfd must be able to wake us. */
    struct pollfd pfd[3] = {
      { .fd = s->fd, .events = POLLIN },
      { .fd = s->wake_fd, .events = POLLIN },
      { .fd = s->watch_fd, .events = POLLIN },
    };
    int pr = poll(pfd, s->watch_fd >= 0 ? 3 : 2, wait);
    if (pr < 0) {
      if (errno == EINTR)
        continue; /* a signal, not a wake-up: the eventfd says which */
      return -errno;
    }
    if (pfd[1].revents & POLLIN)
      return -EINTR;
    if (pr == 0)
      return 0;
    if (s->watch_fd >= 0 && (pfd[2].revents & POLLIN)) {
      s->watch_ready = true;
      if (!(pfd[0].revents & POLLIN))
        return 0;
    }

    int n = rx_fill(s, rx);
    if (n < 0) {
      /* EAGAIN: poll was wrong (a bad checksum); ECONNREFUSED: an ICMP
       * error for our own earlier send, consumed now. */
      if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EINTR || n == -ECONNREFUSED) {
        if (timeout_ms == 0)
          return 0;
        continue;
      }
      return n;
    }
    rx->full = n == (int)rx->batch;
    pd->nmsgs = (size_t)n;
    pd->msg = 0;
    pd->off = 0;
    rx_split(rx);
    if (rx->ndgrams)
      return (int)rx->ndgrams;
    /* Everything was truncated: wait for more. */
    if (timeout_ms == 0)
      return 0;
  }
}

int urtp_sock_sendto(urtp_sock_t *s, const void *buf, size_t len, const struct sockaddr *to,
                     socklen_t tolen)
{
  if (!to) {
    if (!s->remote_len)
      return -EDESTADDRREQ;
    to = (const struct sockaddr *)&s->remote;
    tolen = s->remote_len;
  }
  if (urtp_pacer_active(s->pacer)) {
    /* in the budget it shares (RTCP with its media): wait for its turn */
    uint64_t now = mono_ns(), at = urtp_pacer_take(s->pacer, len, 0, now);
    if (at > now) {
      int r = tx_sleep(s, at);
      urtp_pacer_waited(s->pacer, mono_ns() - now);
      if (r < 0) {
        urtp_pacer_give_back(s->pacer, len);
        return r;
      }
    }
  }
  ssize_t n = sendto(s->fd, buf, len, MSG_DONTWAIT, to, tolen);
  return n < 0 ? -errno : (int)n;
}

void urtp_sock_wake(urtp_sock_t *s)
{
  uint64_t one = 1;
  ssize_t r = write(s->wake_fd, &one, sizeof(one));
  (void)r; /* EAGAIN only when the counter is saturated: still awake */
}

void urtp_sock_unwake(urtp_sock_t *s)
{
  uint64_t v;
  ssize_t r = read(s->wake_fd, &v, sizeof(v));
  (void)r; /* EAGAIN: nothing pending */
}

const char *urtp_io_mode_name(urtp_io_mode_t m)
{
  switch (m) {
  case URTP_IO_AUTO: return "auto";
  case URTP_IO_GSO: return "gso";
  case URTP_IO_GRO: return "gro";
  case URTP_IO_MMSG: return "mmsg";
  case URTP_IO_PLAIN: return "plain";
  }
  return "unknown";
}

/* The IPv4 address of a (IPv4, or IPv4-mapped IPv6) into *v4. */
static bool addr_v4(const struct sockaddr_storage *a, uint32_t *v4)
{
  if (a->ss_family == AF_INET) {
    *v4 = ((const struct sockaddr_in *)a)->sin_addr.s_addr;
    return true;
  }
  if (a->ss_family == AF_INET6 &&
      IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)a)->sin6_addr)) {
    memcpy(v4, &((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr[12], 4);
    return true;
  }
  return false;
}

bool urtp_addr_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
  if (!a || !b)
    return false;
  uint32_t va = 0, vb = 0;
  bool a4 = addr_v4(a, &va), b4 = addr_v4(b, &vb);
  if (a4 || b4)
    return a4 && b4 && va == vb;
  if (a->ss_family != AF_INET6 || b->ss_family != AF_INET6)
    return false;
  const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a, *y = (const struct sockaddr_in6 *)b;
  /* link-local addresses are one host per interface */
  return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0 &&
         (!IN6_IS_ADDR_LINKLOCAL(&x->sin6_addr) || x->sin6_scope_id == y->sin6_scope_id);
}

bool urtp_addr_is_multicast(const struct sockaddr_storage *a)
{
  return a && addr_is_mcast(a);
}

socklen_t urtp_addr_len(const struct sockaddr_storage *a)
{
  return a->ss_family == AF_INET ? sizeof(struct sockaddr_in)
         : a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;
}

uint16_t urtp_addr_port(const struct sockaddr_storage *a)
{
  if (a->ss_family == AF_INET)
    return ntohs(((const struct sockaddr_in *)a)->sin_port);
  if (a->ss_family == AF_INET6)
    return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
  return 0;
}

bool urtp_addr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
  return urtp_addr_same_host(a, b) && urtp_addr_port(a) == urtp_addr_port(b);
}

int urtp_addr_to_family(const struct sockaddr_storage *a, int family,
                        struct sockaddr_storage *out)
{
  uint32_t v4;
  if (a->ss_family == family) {
    *out = *a;
    return 0;
  }
  if (family == AF_INET6 && a->ss_family == AF_INET) {
    struct sockaddr_in6 m = { .sin6_family = AF_INET6,
                              .sin6_port = ((const struct sockaddr_in *)a)->sin_port };
    m.sin6_addr.s6_addr[10] = m.sin6_addr.s6_addr[11] = 0xff;
    memcpy(&m.sin6_addr.s6_addr[12], &((const struct sockaddr_in *)a)->sin_addr, 4);
    memset(out, 0, sizeof *out);
    memcpy(out, &m, sizeof m);
    return 0;
  }
  if (family == AF_INET && addr_v4(a, &v4)) {
    struct sockaddr_in m = { .sin_family = AF_INET,
                             .sin_port = ((const struct sockaddr_in6 *)a)->sin6_port };
    m.sin_addr.s_addr = v4;
    memset(out, 0, sizeof *out);
    memcpy(out, &m, sizeof m);
    return 0;
  }
  return -EAFNOSUPPORT;
}
