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

#endif
