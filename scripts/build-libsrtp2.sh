#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds libsrtp2 from Debian's source package against OpenSSL libcrypto into
# a private prefix, as a static PIC archive that lib/ links into the plugin.
#
# Why: Debian's libsrtp2 is built on NSS, which sets up a PK11 context per
# packet; the same libsrtp2 on OpenSSL costs about 60 % as much per packet
# with AES-GCM and a quarter with AES-CM + HMAC-SHA1. GStreamer's srtpenc /
# srtpdec keep using the system library; meson hides this copy's symbols
# from the plugin's dynamic symbol table so both live in one process.
#
# Usage: scripts/build-libsrtp2.sh [PREFIX]
#   PREFIX defaults to build/deps/libsrtp2-openssl in the source tree; the
#   work files (apt state, downloads, build) go to PREFIX.work.
# Idempotent: a finished build whose stamp matches this script and the
# installed OpenSSL is kept without any network access.
# The source comes through apt with a private state directory; its entries
# are the system's own apt sources turned into deb-src ones, and the system's
# apt configuration is never modified (no root needed).
# Exit status 0 when PREFIX/lib/libsrtp2.a is ready; 1 with the reason on
# stderr otherwise (callers then build against the system libsrtp2).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/build/deps/libsrtp2-openssl}
work=$prefix.work
pkg=libsrtp2

fail() {
  echo "build-libsrtp2: $*" >&2
  exit 1
}

for tool in apt-get meson ninja pkg-config; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found"
done
pkg-config --exists libcrypto || fail "OpenSSL libcrypto development files not found (libssl-dev)"

# The recipe: this script and the OpenSSL it builds against.
recipe="$(sha256sum "$0" | cut -d' ' -f1) openssl-$(pkg-config --modversion libcrypto)"
ready() {
  [ -f "$prefix/lib/libsrtp2.a" ] && [ -f "$prefix/include/srtp2/srtp.h" ] &&
    [ "$(cat "$prefix/.stamp" 2>/dev/null)" = "$recipe" ]
}
if ready; then
  echo "build-libsrtp2: up to date in $prefix ($(head -c 200 "$prefix/.version" 2>/dev/null))"
  exit 0
fi

mkdir -p "$work"
# Builds started side by side (test and bench scripts) share one: the first one does it.
exec 9>"$work/.lock"
flock 9
if ready; then
  echo "build-libsrtp2: up to date in $prefix"
  exit 0
fi

# ---- private apt state with deb-src entries derived from the system's sources ----
apt_dir=$work/apt
rm -rf "$apt_dir"
mkdir -p "$apt_dir/sources.list.d" "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial"
: >"$apt_dir/sources.list"

# One-line format: `deb [opts] URI SUITE COMPONENT...` becomes `deb-src ...`.
oneline() {
  sed -n -E 's/^[[:space:]]*deb(-src)?([[:space:]].*)$/deb-src\2/p' "$1" >>"$apt_dir/sources.list"
}
# deb822 format: every stanza whose Types include deb becomes Types: deb-src;
# disabled stanzas (Enabled: no) are left out.
deb822() {
  awk '
    function flush() {
      if (n && types ~ /(^|[[:space:]])deb(-src)?([[:space:]]|$)/ && enabled) {
        for (i = 1; i <= n; i++) print lines[i]
        print ""
      }
      n = 0; types = ""; enabled = 1
    }
    BEGIN { n = 0; types = ""; enabled = 1 }
    /^[[:space:]]*$/ { flush(); next }
    /^#/ { next }
    tolower($1) == "types:" { types = $0; sub(/^[^:]*:/, "", types); lines[++n] = "Types: deb-src"; next }
    tolower($1) == "enabled:" { if (tolower($2) == "no") enabled = 0; next }
    /^[[:space:]]/ { lines[++n] = $0; next }
    { lines[++n] = $0 }
    END { flush() }
  ' "$1"
}
[ -f /etc/apt/sources.list ] && oneline /etc/apt/sources.list
for f in /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && oneline "$f"
done
i=0
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  i=$((i + 1))
  deb822 "$f" >"$apt_dir/sources.list.d/$i-$(basename "$f")"
done
if [ ! -s "$apt_dir/sources.list" ] && ! grep -qs '^Types: deb-src' "$apt_dir"/sources.list.d/*.sources; then
  fail "no apt sources found in /etc/apt to derive deb-src entries from"
fi

apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list"
  -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
  -o "Dir::State=$apt_dir/state"
  -o "Dir::State::Lists=$apt_dir/state/lists"
  -o "Dir::Cache=$apt_dir/cache"
  -o "APT::Sandbox::User=root"
  -o "Acquire::Retries=2"
  -o "Acquire::http::Timeout=30"
)
echo "build-libsrtp2: fetching the $pkg source package (private apt state in $apt_dir)"
# Third-party sources without deb-src fail here harmlessly: what counts is
# whether the source package can be fetched afterwards.
apt-get "${apt_opts[@]}" -qq update >"$work/apt-update.log" 2>&1 ||
  echo "build-libsrtp2: apt-get update reported errors (see $work/apt-update.log); trying anyway" >&2

dl=$work/download
rm -rf "$dl"
mkdir -p "$dl"
# The version Debian ships as binary, so both libraries compared are the same code.
want=$(dpkg-query -W -f='${source:Version}' libsrtp2-1 2>/dev/null || true)
got=0
if [ -n "$want" ]; then
  (cd "$dl" && apt-get "${apt_opts[@]}" -qq source --download-only "$pkg=$want") \
    >"$work/apt-source.log" 2>&1 && got=1
fi
if [ "$got" = 0 ]; then
  (cd "$dl" && apt-get "${apt_opts[@]}" -qq source --download-only "$pkg") \
    >>"$work/apt-source.log" 2>&1 ||
    fail "apt-get source $pkg failed: $(grep -m1 '^E:' "$work/apt-source.log" | cut -c1-200 ||
      echo 'no network or no deb-src index') (see $work/apt-source.log)"
fi
dsc=$(ls "$dl"/${pkg}_*.dsc 2>/dev/null | head -n1)
[ -n "$dsc" ] || fail "no .dsc downloaded"
# apt checked every file against the signed index; the lists are large and
# no longer needed.
rm -rf "$apt_dir/state/lists" "$apt_dir/cache"

# ---- unpack: dpkg-source applies Debian's patches (today they touch only
# tests, build files and docs); without dpkg-dev the upstream tarball is used ----
src=$work/src
rm -rf "$src"
if command -v dpkg-source >/dev/null 2>&1; then
  dpkg-source --no-check -x "$dsc" "$src" >"$work/unpack.log" 2>&1 ||
    fail "dpkg-source -x failed (see $work/unpack.log)"
else
  orig=$(ls "$dl"/${pkg}_*.orig.tar.* 2>/dev/null | head -n1)
  [ -n "$orig" ] || fail "no upstream tarball downloaded"
  mkdir -p "$src"
  tar -xf "$orig" -C "$src" --strip-components=1 || fail "cannot unpack $orig"
fi
rm -f "$work"/${pkg}_*.orig.tar.*   # left next to the tree by dpkg-source
[ -f "$src/meson.build" ] || fail "$pkg source has no meson.build (version too old?)"

# ---- build: static, PIC, release, OpenSSL for ciphers and HMAC ----
# The caller's compiler settings (a sanitizer build, say) are not wanted here.
bdir=$work/build
rm -rf "$bdir" "$prefix"
env -u CFLAGS -u LDFLAGS -u CPPFLAGS meson setup "$bdir" "$src" \
  --buildtype=release --prefix="$prefix" --libdir=lib \
  -Dcrypto-library=openssl -Dcrypto-library-kdf=disabled \
  -Ddefault_library=static -Db_staticpic=true \
  -Dtests=disabled -Ddoc=disabled >"$work/build.log" 2>&1 ||
  fail "meson setup failed (see $work/build.log)"
ninja -C "$bdir" >>"$work/build.log" 2>&1 || fail "build failed (see $work/build.log)"
meson install -C "$bdir" --quiet >>"$work/build.log" 2>&1 || fail "install failed (see $work/build.log)"
[ -f "$prefix/lib/libsrtp2.a" ] || fail "install did not produce $prefix/lib/libsrtp2.a"

echo "$(basename "$dsc" .dsc) on OpenSSL $(pkg-config --modversion libcrypto)" >"$prefix/.version"
echo "$recipe" >"$prefix/.stamp"
rm -rf "$bdir" "$src"
echo "build-libsrtp2: built $(cat "$prefix/.version") in $prefix"
