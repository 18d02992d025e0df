/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The uvgrtp plugin: RTP payloading and UDP transport in one element each
 * way, built on the urtp core library in lib/.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstuvgrtpcommon.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  ret |= GST_ELEMENT_REGISTER (uvgrtpsink, plugin);
  ret |= GST_ELEMENT_REGISTER (uvgrtpsrc, plugin);
#if defined (URTP_HAVE_ZRTP) && defined (URTP_HAVE_SRTP)
  ret |= GST_ELEMENT_REGISTER (uvgrtpzrtp, plugin);
#endif
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, uvgrtp,
    "High-speed RTP payloading and UDP transport (uvgRTP techniques)",
    plugin_init, PACKAGE_VERSION, "BSD", PACKAGE_NAME, PACKAGE_ORIGIN)
