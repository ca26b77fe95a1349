#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench: rocemu check on a million packets of correct RC traffic, with
# rocemu dump on the same file, in the same run, as the reference.
# usage: tests/bench/bench_check.sh BUILD_DIR
set -eu
build=${1:?usage: bench_check.sh BUILD_DIR}
rocemu=$build/bin/rocemu
work=$build/bench
count=1000000
mkdir -p "$work"
cap=$work/check_bench.pcap
"$build/tests/mkcap" --rc-bench "$cap" "$count"

# best of three wall-clock seconds of a command, its output discarded
best() {
	local best_ns=0 t0 t1 i
	for i in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null
		t1=$(date +%s%N)
		if [ "$best_ns" = 0 ] || [ $((t1 - t0)) -lt "$best_ns" ]; then
			best_ns=$((t1 - t0))
		fi
	done
	echo "$best_ns"
}

check_ns=$(best "$rocemu" check -q "$cap")
dump_ns=$(best "$rocemu" dump "$cap")
. "$(dirname "$0")/bench_lib.sh"
cp=$(awk -v n="$count" -v c="$check_ns" 'BEGIN { print n / (c / 1e9) / 1e6 }')
dp=$(awk -v n="$count" -v d="$dump_ns" 'BEGIN { print n / (d / 1e9) / 1e6 }')
bench_row codec "rocemu check -q, 1M RC packets" "$cp" Mpkt/s --target ">=1"
bench_row codec "rocemu check -q vs rocemu dump" "$cp" Mpkt/s \
	--ref "rocemu dump, same file" "$dp"
# Memory grows with flows, not packets: the same traffic, a tenth as
# long, must need the same memory (the checker keeps bounded rings per
# flow and direction, no history per packet).
small=$work/check_bench_small.pcap
"$build/tests/mkcap" --rc-bench "$small" $((count / 10))
kb_big=$(peak_kb "$rocemu" check -q "$cap")
kb_small=$(peak_kb "$rocemu" check -q "$small")
bench_row codec "rocemu check peak memory, 1M RC packets" "$kb_big" KiB \
	--ref "100k packets of the same flows" "$kb_small" --target "<=1.1"
rm -f "$cap" "$small"
