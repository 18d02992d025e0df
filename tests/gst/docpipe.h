/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * docpipe.h - reads the gst-launch-1.0 pipelines that the documentation
 * marks with `<!-- pipeline: NAME -->`, so that tests run exactly what the
 * docs show. Header-only; include after <gst/check/gstcheck.h>.
 */
#ifndef UVGRTP_TEST_DOCPIPE_H
#define UVGRTP_TEST_DOCPIPE_H

#include <string.h>

#include <gst/check/gstcheck.h>

/* The gst-launch-1.0 description after `<!-- pipeline: name -->` in the
 * markdown file doc, without the program name and its options, line
 * continuations joined. */
static inline gchar *
doc_pipeline (const gchar * doc, const gchar * name)
{
  gchar *text = NULL, *marker, *p, *end, *block;
  gchar **tokens;
  GString *out = g_string_new (NULL);
  gboolean head = TRUE;

  fail_unless (g_file_get_contents (doc, &text, NULL, NULL),
      "cannot read %s", doc);
  marker = g_strdup_printf ("<!-- pipeline: %s -->", name);
  p = strstr (text, marker);
  fail_unless (p != NULL, "no pipeline %s in %s", name, doc);
  p = strstr (p, "```");
  fail_unless (p != NULL);
  p = strchr (p, '\n');
  fail_unless (p != NULL);
  end = strstr (++p, "```");
  fail_unless (end != NULL);
  block = g_strndup (p, end - p);
  g_strdelimit (block, "\\\n\t", ' ');
  tokens = g_strsplit (block, " ", -1);
  for (gchar ** t = tokens; *t; t++) {
    if (!**t)
      continue;
    if (head && (g_str_equal (*t, "gst-launch-1.0") || **t == '-'))
      continue;
    head = FALSE;
    if (out->len)
      g_string_append_c (out, ' ');
    g_string_append (out, *t);
  }
  g_strfreev (tokens);
  g_free (block);
  g_free (marker);
  g_free (text);
  return g_string_free (out, FALSE);
}

#endif
