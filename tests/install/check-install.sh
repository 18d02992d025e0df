#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `meson install` into a staging directory (--destdir), then use what was
# installed as a user would:
#  - liburtp: headers in include/urtp/, urtp.pc, liburtp.so exporting the
#    urtp_ API only; examples/urtp-recv.c and a small program built against
#    the staged urtp.pc with pkg-config alone, and run;
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
for h in rtp.h net.h recvstream.h config.h; do
  [ -f "$dest$(pkg-config --variable=includedir urtp | sed "s|^$dest||")/urtp/$h" ] ||
    fail "include/urtp/$h not installed"
done

# Only the urtp_ API is exported (no libsrtp2, even when linked in).
so=$(ls "$dest$(dirname "$lib")"/liburtp.so.0* | head -n1)
others=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /^urtp_/ {print $3}')
[ -z "$others" ] || fail "liburtp.so exports more than urtp_*: $(echo $others | head -c 300)"

cc=${CC:-cc}
libdir=$dest$(dirname "$lib")
# A small program: which optional modules, and (with SRTP) which libsrtp2.
cat >"$stage/hello.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <urtp/config.h>
#include <urtp/rtp.h>
#ifdef URTP_HAVE_SRTP
#include <urtp/srtp.h>
#endif
int main(void)
{
  uint8_t h[12];
  urtp_rtp_write_fixed(h, 96, true, 7, 90000, 0x1234);
  urtp_rtp_pkt_t pkt;
  if (urtp_rtp_parse(h, sizeof h, &pkt) != 0 || pkt.hdr.seq != 7 || !pkt.hdr.marker)
    return 1;
#ifdef URTP_HAVE_SRTP
  printf("srtp: %s, AES_CM_128_HMAC_SHA1_80 %s\n", urtp_srtp_backend(),
         urtp_srtp_profile_available(URTP_SRTP_AES_CM_128_HMAC_SHA1_80) == 0 ? "ok" : "missing");
  if (urtp_srtp_profile_available(URTP_SRTP_AES_CM_128_HMAC_SHA1_80) != 0)
    return 1;
#else
  printf("srtp: not in this build\n");
#endif
  return 0;
}
C
# shellcheck disable=SC2086
"$cc" -std=c11 $cflags "$stage/hello.c" -o "$stage/hello" $libs || fail "hello.c did not build against urtp.pc"
LD_LIBRARY_PATH=$libdir "$stage/hello" | sed 's/^/# /' || fail "hello did not run"

# the lib-only examples, as a user would build them from the installed headers
for ex in urtp-send urtp-recv; do
  # shellcheck disable=SC2086
  "$cc" -std=c11 -D_GNU_SOURCE $cflags "$src/examples/$ex.c" -o "$stage/$ex" $libs ||
    fail "examples/$ex.c did not build against urtp.pc"
  LD_LIBRARY_PATH=$libdir "$stage/$ex" --help >/dev/null || fail "$ex --help failed"
  echo "# examples/$ex.c built against the installed urtp.pc and ran"
done

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
