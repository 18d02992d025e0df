/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>

#include "stream_util.h"
#include "urtp/net.h"

int urtp_stream_srtp_config(const char *key_hex, const char *profile, urtp_srtp_config_t *cfg,
                            uint8_t key[URTP_SRTP_MAX_KEY_LEN])
{
#ifdef URTP_HAVE_SRTP
  memset(cfg, 0, sizeof *cfg);
  cfg->profile = URTP_SRTP_PROFILE_COUNT;
  const char *want = profile ? profile : "AES_CM_128_HMAC_SHA1_80";
  for (int p = 0; p < URTP_SRTP_PROFILE_COUNT; p++) {
    const char *n = urtp_srtp_profile_name((urtp_srtp_profile_t)p);
    if (n && strcmp(n, want) == 0)
      cfg->profile = (urtp_srtp_profile_t)p;
  }
  if (cfg->profile == URTP_SRTP_PROFILE_COUNT)
    return -EINVAL;
  if (urtp_srtp_profile_available(cfg->profile) != 0)
    return -ENOTSUP;
  if (urtp_srtp_key_from_hex(key_hex, cfg->profile, key, NULL, 0) < 0)
    return -EINVAL;
  cfg->key = key;
  cfg->key_len = urtp_srtp_key_len(cfg->profile);
  return 0;
#else
  (void)key_hex;
  (void)profile;
  (void)cfg;
  (void)key;
  return -ENOTSUP;
#endif
}

#ifdef URTP_HAVE_ZRTP_EP
#include "urtp/zrtp_ep.h"

int urtp_stream_zrtp_open(int fd, bool thread_reads, const struct sockaddr *remote,
                          socklen_t remote_len, uint32_t ssrc, const char *cache,
                          urtp_zrtp_ep_t **out)
{
  urtp_zrtp_ep_config_t c;
  memset(&c, 0, sizeof c);  /* no preferences: ZRTP's defaults */
  c.mode = remote ? URTP_ZRTP_EP_SENDER : URTP_ZRTP_EP_RECEIVER;
  c.remote = remote;
  c.remote_len = remote_len;
  c.ssrc = ssrc;
  c.cache_path = cache;
  c.send = urtp_zrtp_ep_send_udp;
  c.send_user = URTP_ZRTP_EP_FD(fd);
  int r = urtp_zrtp_ep_new(&c, out);
  if (r < 0)
    return r;
  /* a receiver's endpoint is fed by the stream, which reads the socket */
  if ((r = urtp_zrtp_ep_start(*out, remote && thread_reads ? fd : -1)) < 0) {
    urtp_zrtp_ep_free(*out);
    *out = NULL;
  }
  return r;
}

void urtp_stream_zrtp_close(urtp_zrtp_ep_t *ep)
{
  urtp_zrtp_ep_free(ep);
}

urtp_security_t urtp_stream_security(urtp_zrtp_ep_t *ep, bool static_key, char sas[40])
{
  sas[0] = '\0';
  if (!ep)
    return static_key ? URTP_SECURITY_STATIC_KEY : URTP_SECURITY_NONE;
  urtp_zrtp_info_t info;
  urtp_zrtp_ep_get_info(ep, &info);
  if (info.state == URTP_ZRTP_FAILED)
    return URTP_SECURITY_ZRTP_FAILED;
  if (info.state != URTP_ZRTP_SECURE)
    return URTP_SECURITY_ZRTP_PENDING;
  memcpy(sas, info.sas, sizeof info.sas);
  sas[39] = '\0';
  return URTP_SECURITY_ZRTP_SECURE;
}
#else
int urtp_stream_zrtp_open(int fd, bool thread_reads, const struct sockaddr *remote,
                          socklen_t remote_len, uint32_t ssrc, const char *cache,
                          struct urtp_zrtp_ep **out)
{
  (void)fd, (void)thread_reads, (void)remote, (void)remote_len, (void)ssrc, (void)cache;
  *out = NULL;
  return -ENOTSUP;
}

void urtp_stream_zrtp_close(struct urtp_zrtp_ep *ep)
{
  (void)ep;
}

urtp_security_t urtp_stream_security(struct urtp_zrtp_ep *ep, bool static_key, char sas[40])
{
  (void)ep;
  sas[0] = '\0';
  return static_key ? URTP_SECURITY_STATIC_KEY : URTP_SECURITY_NONE;
}
#endif

int urtp_stream_resolve(const char *host, uint16_t port, int family,
                        struct sockaddr_storage *out)
{
  struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res = NULL;
  if (!host || getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
    return -ENOENT;
  int r = -EAFNOSUPPORT;
  /* an address of the socket's family first, else one it can map */
  for (int pass = 0; pass < 2 && r < 0; pass++)
    for (const struct addrinfo *a = res; a && r < 0; a = a->ai_next) {
      struct sockaddr_storage in;
      if ((pass == 0) != (a->ai_family == family) || a->ai_addrlen > sizeof in)
        continue;
      memset(&in, 0, sizeof in);
      memcpy(&in, a->ai_addr, a->ai_addrlen);
      r = urtp_addr_to_family(&in, family, out);
    }
  freeaddrinfo(res);
  if (r == 0)
    urtp_addr_set_port(out, port);
  return r;
}
