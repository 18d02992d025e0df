#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A real bottleneck between two network namespaces, for the pacing benchmark
# and tests (this kernel has tbf but no netem):
#
#   NAME-snd (10.77.1.1) --veth-- NAME-rtr --veth, tbf-- NAME-rcv (10.77.2.2)
#
# The router forwards between its two veths; its egress towards the
# receiver is a tbf qdisc of RATE bit/s holding at most QUEUE_MS of data at
# that rate (what it cannot queue, it drops, as a switch would). The other
# directions are not limited.
#
# Usage:
#   scripts/bottleneck.sh up NAME RATE_BPS QUEUE_MS   (replaces one of that name)
#   scripts/bottleneck.sh down NAME
#   scripts/bottleneck.sh stats NAME                   (the tbf's counters)
# Run a program on either side with: ip netns exec NAME-snd|NAME-rcv CMD...
# Needs root (CAP_NET_ADMIN), ip and tc (iproute2).
set -euo pipefail

die() { echo "bottleneck: $*" >&2; exit 1; }

down() {
  local n=$1
  for s in snd rtr rcv; do
    ip netns del "$n-$s" 2>/dev/null || true
  done
}

up() {
  local n=$1 rate=$2 queue_ms=$3
  [[ $rate =~ ^[0-9]+$ && $queue_ms =~ ^[0-9]+$ ]] || die "RATE_BPS and QUEUE_MS are integers"
  down "$n"
  trap 'down "$n"' ERR
  for s in snd rtr rcv; do
    ip netns add "$n-$s"
    ip -n "$n-$s" link set lo up
  done
  # veth names are limited to 15 characters: short fixed names inside
  # each namespace
  ip link add bn-s type veth peer name bn-rs
  ip link set bn-s netns "$n-snd"
  ip link set bn-rs netns "$n-rtr"
  ip link add bn-r type veth peer name bn-rr
  ip link set bn-r netns "$n-rcv"
  ip link set bn-rr netns "$n-rtr"

  ip -n "$n-snd" addr add 10.77.1.1/24 dev bn-s
  ip -n "$n-rtr" addr add 10.77.1.254/24 dev bn-rs
  ip -n "$n-rtr" addr add 10.77.2.254/24 dev bn-rr
  ip -n "$n-rcv" addr add 10.77.2.2/24 dev bn-r
  for l in "snd bn-s" "rtr bn-rs" "rtr bn-rr" "rcv bn-r"; do
    set -- $l
    ip -n "$n-$1" link set "$2" up
  done
  ip -n "$n-snd" route add default via 10.77.1.254
  ip -n "$n-rcv" route add default via 10.77.2.254
  ip netns exec "$n-rtr" sysctl -qw net.ipv4.ip_forward=1

  # tbf: the queue holds queue_ms at the rate; the bucket at least 32 KB
  # and 2 ms at the rate (a smaller one cannot keep up at high rates with
  # the kernel's timer granularity)
  local limit=$((rate / 8 * queue_ms / 1000))
  local burst=$((rate / 8 / 500))
  [ "$burst" -ge 32768 ] || burst=32768
  [ "$limit" -ge "$burst" ] || limit=$burst
  ip netns exec "$n-rtr" tc qdisc add dev bn-rr root tbf rate "${rate}bit" burst "$burst" \
    limit "$limit"
  trap - ERR
  echo "bottleneck $n: 10.77.1.1 ($n-snd) -> 10.77.2.2 ($n-rcv) at $rate bit/s, queue $limit bytes ($queue_ms ms), bucket $burst bytes"
}

stats() {
  ip netns exec "$1-rtr" tc -s qdisc show dev bn-rr
}

[ $# -ge 2 ] || die "usage: $0 up NAME RATE_BPS QUEUE_MS | down NAME | stats NAME"
case $1 in
  up) [ $# -eq 4 ] || die "usage: $0 up NAME RATE_BPS QUEUE_MS"; up "$2" "$3" "$4" ;;
  down) down "$2" ;;
  stats) stats "$2" ;;
  *) die "unknown command $1" ;;
esac
