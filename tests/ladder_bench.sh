#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu ladder's speed: a capture of 200,000 packets in about 100,000
# flows (mkcap --bench: random opcodes and QPs) drawn as text and as SVG.
# Figures only, no pass/fail: the machine is shared.
# usage: tests/ladder_bench.sh BUILD_DIR
set -eu
build=$(cd "${1:?usage: ladder_bench.sh BUILD_DIR}" && pwd)
work=$build/bench
mkdir -p "$work"
packets=200000
"$build/tests/mkcap" --bench "$work/ladder.pcap" $packets

timed() {
	local label=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	python3 -c "import sys; t = float(sys.argv[2]) - float(sys.argv[1]); \
print('%-34s %9.2f s  %8.0f packets/s' % (sys.argv[3], t, int(sys.argv[4]) / t))" \
		"$t0" "$t1" "$label" $packets
}
timed "rocemu ladder, text" "$build/bin/rocemu" ladder "$work/ladder.pcap"
timed "rocemu ladder --svg" "$build/bin/rocemu" ladder \
	"$work/ladder.pcap" --svg "$work/ladder.svg"
