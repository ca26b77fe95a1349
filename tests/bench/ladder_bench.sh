#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu ladder's speed: a capture of 200,000 packets in about 100,000
# flows (mkcap --bench: random opcodes and QPs) drawn as text and as SVG.
# Figures only, no pass/fail: the machine is shared.
# usage: tests/bench/ladder_bench.sh BUILD_DIR
set -eu
build=$(cd "${1:?usage: ladder_bench.sh BUILD_DIR}" && pwd)
work=$build/bench
mkdir -p "$work"
packets=200000
"$build/tests/mkcap" --bench "$work/ladder.pcap" $packets

. "$(dirname "$0")/bench_lib.sh"

timed() {
	local label=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >/dev/null || exit 1
	t1=$(date +%s.%N)
	bench_row ladder "$label" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" s
}
timed "rocemu ladder, 200 000 packets, text" "$build/bin/rocemu" ladder "$work/ladder.pcap"
timed "rocemu ladder, 200 000 packets, --svg" "$build/bin/rocemu" ladder \
	"$work/ladder.pcap" --svg "$work/ladder.svg"
