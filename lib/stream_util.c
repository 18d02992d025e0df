/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "stream_util.h"

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
