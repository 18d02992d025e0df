/* SPDX-License-Identifier: BSD-2-Clause */
/* What the GStreamer measurement programs (uvgrtp_bench.c, ccbench.c)
 * share. */
#ifndef URTP_GSTBENCH_H
#define URTP_GSTBENCH_H

#include <stdio.h>

#include <gst/gst.h>

/* Links pad apad of the pipeline's element a to pad bpad of b (pads asked
 * for by name, as gst_element_link_pads does); says which on failure. */
static inline gboolean link_named(GstElement *p, const char *a, const char *apad, const char *b,
                                  const char *bpad)
{
  GstElement *ea = gst_bin_get_by_name(GST_BIN(p), a), *eb = gst_bin_get_by_name(GST_BIN(p), b);
  gboolean ok = ea && eb && gst_element_link_pads(ea, apad, eb, bpad);
  if (!ok)
    fprintf(stderr, "%s: cannot link %s.%s to %s.%s\n", g_get_prgname(), a, apad, b, bpad);
  if (ea)
    gst_object_unref(ea);
  if (eb)
    gst_object_unref(eb);
  return ok;
}

/* Sets the bandwidth of rtpbin rb's session 0: rtpbin plans its RTCP
 * (NACKs and congestion feedback in it) from it, and left at 0 plans for
 * 64 kbit/s, letting most feedback expire unsent (docs/recovery.md). */
static inline void rtpbin_session_bandwidth(GstElement *rb, double bps)
{
  GObject *session = NULL;
  g_signal_emit_by_name(rb, "get-internal-session", 0, &session);
  if (session) {
    g_object_set(session, "bandwidth", bps, NULL);
    g_object_unref(session);
  }
}

#endif
