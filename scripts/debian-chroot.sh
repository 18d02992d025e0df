#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs a command on a copy of this source tree inside a minimal Debian
# chroot, as a new user of that release would: nothing is installed in the
# chroot beyond debootstrap's minbase; the command (e.g. scripts/test.sh)
# installs what it needs itself with scripts/install-deps.sh.
#
# Usage: scripts/debian-chroot.sh [--suite SUITE] [--dir DIR] [--fresh] [--keep-src] [--] COMMAND [ARG...]
#   --suite     Debian suite to bootstrap (default: trixie, Debian 13)
#   --dir       where the chroot lives (default: build/chroot/SUITE in this tree)
#   --fresh     make a new chroot even if one is there
#   --keep-src  run in the /src the last run left (with its build/), for
#               looking into a failure; no fresh copy
#   COMMAND runs as root in /src of the chroot, a copy of this tree's files
#   (tracked and untracked-but-not-ignored; no build/), made afresh each run.
# Example: scripts/debian-chroot.sh -- bash scripts/test.sh --quick
#
# The chroot is made once with debootstrap --variant=minbase and reused
# while it is complete. The mirror is the Debian archive this machine's apt
# already uses (from /etc/apt), so it works wherever apt does. /proc, /sys,
# /dev (with /dev/pts and /dev/shm) are mounted for the run (network
# namespaces and GStreamer need them) and everything mounted under the
# chroot is unmounted when the script ends, also on failure or interrupt.
# pip in the chroot is given this machine's CA bundle (SSL_CERT_FILE,
# PIP_CERT), which a TLS-inspecting network may require.
# Needs root. Exit status: the command's, or 1 with a reason.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
suite=trixie
dir=
fresh=0
keep_src=0
while [ $# -gt 0 ]; do
  case $1 in
    --suite) suite=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --keep-src) keep_src=1; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "debian-chroot: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "debian-chroot: no command given (--help)" >&2; exit 2; }
dir=${dir:-$root/build/chroot/$suite}
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac

say() { echo "debian-chroot: $*" >&2; }
fail() { say "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mounts)"
[ "$(uname -s)" = Linux ] || fail "Linux only"

# ---- unmounting: everything mounted at or below a path, deepest first ----
mounts_under() {
  # /proc/self/mountinfo field 5 is the mount point (spaces as \040)
  awk -v d="$1" '{ mp = $5; gsub(/\\040/, " ", mp); if (mp == d || index(mp, d "/") == 1) print mp }' \
    /proc/self/mountinfo | sort -r -u
}
unmount_under() {
  local mp left
  for _ in 1 2 3; do
    left=0
    while IFS= read -r mp; do
      [ -n "$mp" ] || continue
      umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || left=1
    done < <(mounts_under "$1")
    [ "$left" = 0 ] && [ -z "$(mounts_under "$1")" ] && return 0
    sleep 1
  done
  [ -z "$(mounts_under "$1")" ] || { say "could not unmount: $(mounts_under "$1" | tr '\n' ' ')"; return 1; }
}
remove_tree() {
  [ -e "$1" ] || return 0
  unmount_under "$1" || fail "refusing to delete $1 while something is mounted in it"
  rm -rf --one-file-system "$1"
}

mkdir -p "$(dirname "$dir")"
# One user of a chroot at a time.
exec 8>"$dir.lock"
flock -n 8 || { say "waiting for another run using $dir"; flock 8; }

cleanup() {
  local rc=$?
  unmount_under "$dir" || rc=1
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the mirror: the Debian archive this machine's apt uses ----
debian_mirror() {
  local f
  {
    [ -f /etc/apt/sources.list ] &&
      sed -n -E 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+([^[:space:]]+).*/\2 \3/p' \
        /etc/apt/sources.list
    for f in /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] && sed -n -E 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+([^[:space:]]+).*/\2 \3/p' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      # URIs and Suites of each enabled stanza whose Types include deb
      awk '
        function flush() {
          if (types ~ /(^|[[:space:]])deb([[:space:]]|$)/ && enabled)
            for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
          nu = ns = 0; types = ""; enabled = 1
        }
        BEGIN { enabled = 1 }
        /^[[:space:]]*$/ { flush(); next }
        /^#/ { next }
        tolower($1) == "types:" { types = $0; sub(/^[^:]*:/, "", types); next }
        tolower($1) == "enabled:" { if (tolower($2) == "no") enabled = 0; next }
        tolower($1) == "uris:" { for (k = 2; k <= NF; k++) u[++nu] = $k; next }
        tolower($1) == "suites:" { for (k = 2; k <= NF; k++) s[++ns] = $k; next }
        END { flush() }
      ' "$f"
    done
  } | awk '
    # the main archive: a suite without -security/-updates/-backports, on a
    # URI that is not the security archive
    $2 !~ /-(security|updates|backports|proposed-updates)$/ && $1 !~ /security/ && $1 ~ /^https?:/ { print $1; exit }
  '
}

# ---- make the chroot (once) ----
stamp=$dir/.debian-chroot-complete
if [ "$fresh" = 1 ] || [ ! -f "$stamp" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap on this machine"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || say "apt-get update reported errors; trying anyway"
    apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
      fail "debootstrap could not be installed"
  fi
  [ -e "/usr/share/debootstrap/scripts/$suite" ] ||
    fail "this debootstrap ($(dpkg-query -W -f='${Version}' debootstrap 2>/dev/null)) does not know suite $suite"
  mirror=$(debian_mirror)
  [ -n "$mirror" ] || fail "no Debian archive found in /etc/apt to bootstrap from"
  say "debootstrap --variant=minbase $suite $dir from $mirror"
  remove_tree "$dir"
  t0=$SECONDS
  if ! debootstrap --variant=minbase "$suite" "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1; then
    tail -n 20 "$dir.debootstrap.log" >&2
    unmount_under "$dir" || true
    fail "debootstrap failed (log: $dir.debootstrap.log)"
  fi
  touch "$stamp"
  say "chroot ready in $((SECONDS - t0)) s"
else
  say "reusing $dir ($(cat "$dir/etc/debian_version" 2>/dev/null))"
fi

# ---- set up for the run ----
unmount_under "$dir"   # left over from an interrupted run
cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
cp /etc/hosts "$dir/etc/hosts" 2>/dev/null || true
mount -t proc proc "$dir/proc"
mount --rbind /sys "$dir/sys"
mount --make-rslave "$dir/sys"
mount --rbind /dev "$dir/dev"
mount --make-rslave "$dir/dev"
mkdir -p "$dir/run" "$dir/tmp"
mount -t tmpfs -o mode=0755 tmpfs "$dir/run"
chmod 1777 "$dir/tmp"

# This machine's CA bundle, for pip (fetch-ffmpeg.sh) behind TLS inspection.
ca_env=()
for ca in "${SSL_CERT_FILE:-}" "${PIP_CERT:-}" /etc/ssl/certs/ca-certificates.crt; do
  if [ -n "$ca" ] && [ -f "$ca" ]; then
    mkdir -p "$dir/usr/local/share/host-ca"
    cp "$ca" "$dir/usr/local/share/host-ca/ca.pem"
    ca_env=(SSL_CERT_FILE=/usr/local/share/host-ca/ca.pem PIP_CERT=/usr/local/share/host-ca/ca.pem)
    break
  fi
done

# A fresh copy of the tree: what a clone would hold, plus uncommitted work.
src=$dir/src
if [ "$keep_src" = 1 ] && [ -d "$src" ]; then
  say "keeping the /src of the last run"
elif git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  remove_tree "$src"
  mkdir -p "$src"
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xf - -C "$src"
else
  remove_tree "$src"
  mkdir -p "$src"
  tar -C "$root" --exclude=./build -cf - . | tar -xf - -C "$src"
fi

say "running in $suite: $*"
set +e
chroot "$dir" /usr/bin/env -i \
  HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive \
  ${FUZZ_SECONDS:+FUZZ_SECONDS=$FUZZ_SECONDS} "${ca_env[@]}" \
  /bin/bash -c 'cd /src && exec "$@"' bash "$@"
rc=$?
set -e
say "command exited with status $rc"
exit $rc
