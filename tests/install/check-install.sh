#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `meson install` into a staging directory (--destdir), then use what was
# installed as a user would:
#  - liburtp: urtp.h and config.h in include/urtp/ (no internal header),
#    urtp.pc, liburtp.so exporting exactly the functions urtp.h declares;
#    a small program and the two minimal examples built against the staged
#    urtp.pc with pkg-config alone, each example within 40 lines of code,
#    and run (tests/install/minimal-interop.sh: against each other and
#    GStreamer's stock payloader and depayloader, every picture decoded);
#  - the plugin: installed into GStreamer's own plugin directory (pkg-config
#    pluginsdir) for a system-wide prefix, and found there by gst-inspect-1.0
#    with GST_PLUGIN_SYSTEM_PATH pointed at the staged copy of it.
# Usage: check-install.sh MESON SOURCE_ROOT BUILD_ROOT yes|no(plugin built)
set -euo pipefail

meson=$1 src=$2 build=$3 plugin=$4
fail() { echo "check-install: $*" >&2; exit 1; }

stage=$(mktemp -d /tmp/urtp-install.XXXXXX)
trap 'rm -rf "$stage"' EXIT
dest=$stage/root
"$meson" install -C "$build" --no-rebuild --quiet --destdir "$dest" ||
  fail "meson install --destdir failed"

# Where each built file went, from meson itself.
installed=$stage/installed.json
"$meson" introspect --installed "$build" >"$installed"
where() {   # where the built file (or link) named $1 was installed
  python3 - "$installed" "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
hits = [v for k, v in m.items() if k == sys.argv[2] or k.endswith("/" + sys.argv[2])]
print(hits[0] if hits else "")
PY
}

pc=$(where urtp.pc)
[ -n "$pc" ] || fail "urtp.pc is not installed"
[ -f "$dest$pc" ] || fail "urtp.pc missing from $dest$pc"
lib=$(where liburtp.so)
[ -n "$lib" ] && [ -e "$dest$lib" ] || fail "liburtp.so is not installed"
echo "# installed: $pc, $lib"

export PKG_CONFIG_PATH=$dest$(dirname "$pc")
export PKG_CONFIG_SYSROOT_DIR=$dest
cflags=$(pkg-config --cflags urtp) || fail "pkg-config --cflags urtp failed"
libs=$(pkg-config --libs urtp) || fail "pkg-config --libs urtp failed"
echo "# pkg-config urtp: $cflags $libs"
incdir=$dest$(pkg-config --variable=includedir urtp | sed "s|^$dest||")/urtp
installed_headers=$(cd "$incdir" && ls | sort | tr '\n' ' ')
[ "$installed_headers" = "config.h urtp.h " ] ||
  fail "include/urtp/ holds $installed_headers, not just config.h and urtp.h"

# liburtp.so exports exactly what urtp.h declares (URTP_API), nothing of the
# internal modules and no libsrtp2, even when linked in.
so=$(ls "$dest$(dirname "$lib")"/liburtp.so.0* | head -n1)
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {sub(/@.*/, "", $3); print $3}' |
  sort -u)
declared=$(grep -ho 'URTP_API [^(]*(' "$incdir/urtp.h" | grep -o 'urtp_[a-z0-9_]*' | sort -u)
[ "$exported" = "$declared" ] || fail "liburtp.so exports other functions than urtp.h declares:
$(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | head -20)"
echo "# liburtp.so exports the $(echo "$declared" | wc -l) functions urtp.h declares"

cc=${CC:-cc}
libdir=$dest$(dirname "$lib")
# A small program: which optional modules, and (with SRTP) which libsrtp2.
cat >"$stage/hello.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <urtp/urtp.h>
int main(void)
{
  /* two access units of H.265: AUD + slice each */
  static const uint8_t two[] = { 0, 0, 0, 1, 0x46, 0x01, 0x10, 0, 0, 1, 0x26, 0x01, 0xaf,
                                 0, 0, 0, 1, 0x46, 0x01, 0x10, 0, 0, 1, 0x02, 0x01, 0xd0 };
  urtp_codec_t c;
  if (urtp_codec_from_name("h265", &c) != 0 || c != URTP_CODEC_H265 ||
      urtp_au_length(c, two, sizeof two) != 13)
    return 1;
  urtp_send_config_t cfg;
  urtp_send_config_init(&cfg, c);
  urtp_sender_t *s;
  /* no host: refused, nothing opened */
  if (urtp_sender_open(&s, &cfg) != -EINVAL)
    return 1;
#ifdef URTP_HAVE_SRTP
  cfg.host = "127.0.0.1";
  cfg.port = 9;
  cfg.srtp_key = "00112233445566778899aabbccddeeff00112233445566778899aabbccdd";
  if (urtp_sender_open(&s, &cfg) != 0)
    return 1;
  urtp_sender_close(s);
  printf("srtp: a sender with AES_CM_128_HMAC_SHA1_80 opened\n");
#else
  printf("srtp: not in this build\n");
#endif
  return 0;
}
C
# shellcheck disable=SC2086
"$cc" -std=c11 $cflags "$stage/hello.c" -o "$stage/hello" $libs || fail "hello.c did not build against urtp.pc"
LD_LIBRARY_PATH=$libdir "$stage/hello" | sed 's/^/# /' || fail "hello did not run"

# the minimal examples, as a user would build them from the installed
# header: at most 40 lines of code each (comments and blank lines aside)
for ex in urtp-minimal-send urtp-minimal-recv; do
  loc=$(grep -v '^[[:space:]]*$' "$src/examples/$ex.c" | grep -cv '^[[:space:]]*\(/\*\|\*\|//\)')
  [ "$loc" -le 40 ] || fail "examples/$ex.c has $loc lines of code, more than 40"
  # shellcheck disable=SC2086
  "$cc" -std=c11 -Wall -Werror $cflags "$src/examples/$ex.c" -o "$stage/$ex" $libs ||
    fail "examples/$ex.c did not build against urtp.pc"
  echo "# examples/$ex.c ($loc lines of code) built against the installed urtp.pc"
done
# the full-featured tools, on the same header
for ex in urtp-send urtp-recv; do
  # shellcheck disable=SC2086
  "$cc" -std=c11 -D_GNU_SOURCE -Wall -Werror $cflags "$src/examples/$ex.c" -o "$stage/$ex" $libs ||
    fail "examples/$ex.c did not build against urtp.pc"
  LD_LIBRARY_PATH=$libdir "$stage/$ex" --help >/dev/null || fail "$ex --help failed"
  echo "# examples/$ex.c built against the installed urtp.pc and ran"
done
LD_LIBRARY_PATH=$libdir bash "$src/tests/install/minimal-interop.sh" "$stage" ||
  fail "the minimal examples did not interoperate"

if [ "$plugin" = yes ]; then
  so=$(where libgstuvgrtp.so)
  [ -n "$so" ] && [ -f "$dest$so" ] || fail "the plugin was not installed"
  dir=$(dirname "$so")
  prefix=$("$meson" introspect --buildoptions "$build" |
    python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
  gst_dir=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --variable=pluginsdir gstreamer-1.0)
  gst_prefix=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --variable=prefix gstreamer-1.0)
  echo "# plugin installed to $dir (prefix $prefix; GStreamer's plugin directory $gst_dir)"
  if [ "$prefix" = /usr/local ] || [ "$prefix" = "$gst_prefix" ]; then
    [ "$dir" = "$gst_dir" ] || fail "plugin went to $dir, not to GStreamer's $gst_dir"
  fi
  out=$(env -u GST_PLUGIN_PATH -u GST_PLUGIN_PATH_1_0 GST_PLUGIN_SYSTEM_PATH="$dest$dir" \
    GST_PLUGIN_SYSTEM_PATH_1_0="$dest$dir" GST_REGISTRY="$stage/registry.bin" \
    gst-inspect-1.0 uvgrtp 2>&1) || fail "gst-inspect-1.0 does not find the staged plugin: $out"
  for e in uvgrtpsink uvgrtpsrc; do
    grep -q "$e" <<<"$out" || fail "the staged plugin has no $e"
  done
  echo "# gst-inspect-1.0 finds the staged plugin: $(grep -c -E '^ *uvgrtp[a-z]*:' <<<"$out") elements"
fi
echo "ok 1 - install"
echo "1..1"
