#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench, drop-in part: Debian's unmodified verbs programs on rocemu's
# libibverbs.so.1 next to rocemu's own API doing the same work, in the same
# run, alternating rounds; each figure is the median of the rounds.
# usage: tests/bench/bench_verbs.sh BUILD_DIR [ROUNDS]
set -u
build=$(cd "${1:?usage: bench_verbs.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-5}
rocemu=$build/bin/rocemu
work=$build/bench_verbs
rm -rf "$work" && mkdir -p "$work"
port=18900

for b in ibv_rc_pingpong ib_send_lat ib_write_bw; do
	command -v $b >/dev/null || {
		echo "bench_verbs: $b missing (Debian packages ibverbs-utils, perftest)"
		exit 1
	}
done

# pair NAME SERVER-CMD... -- CLIENT-CMD...: server on .2, client on .3;
# the client's output goes to $work/NAME.
pair() {
	local name=$1 srv=() cli=()
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	port=$((port + 1))
	env ROCEMU_ADDR=127.0.0.2 LD_LIBRARY_PATH=$build/lib timeout 120 \
		"${srv[@]//PORT/$port}" >"$work/$name.server" 2>&1 &
	sleep 0.3
	env ROCEMU_ADDR=127.0.0.3 LD_LIBRARY_PATH=$build/lib timeout 120 \
		"${cli[@]//PORT/$port}" >"$work/$name" 2>&1
	local rc=$?
	wait
	[ $rc = 0 ] || { echo "bench_verbs: $name failed"; cat "$work/$name"; exit 1; }
}

. "$(dirname "$0")/bench_lib.sh"

n=20000
for r in $(seq "$rounds"); do
	pair pp.$r ibv_rc_pingpong -g 1 -s 2 -n $n -p PORT -- \
		ibv_rc_pingpong -g 1 -s 2 -n $n -p PORT 127.0.0.2
	pair ping.$r "$rocemu" ping --poll -s 2 -n $n --addr 127.0.0.2 --port PORT -- \
		"$rocemu" ping --poll -s 2 -n $n --addr 127.0.0.3 --port PORT 127.0.0.2
	pair bw.$r ib_write_bw -x 1 -s 65536 -n 5000 -t 128 -p PORT -- \
		ib_write_bw -x 1 -s 65536 -n 5000 -t 128 -p PORT 127.0.0.2
	pair perf.$r "$rocemu" perf write --poll --addr 127.0.0.2 --port PORT -- \
		"$rocemu" perf write --poll -s 65536 -n 5000 -d 128 \
		--addr 127.0.0.3 --port PORT 127.0.0.2
done

# usec/iter of the ping-pongs; the MB/s averages.
pp=$(for f in "$work"/pp.*; do awk '/usec\/iter/ { print $(NF-1) }' "$f"; done | median)
ping=$(for f in "$work"/ping.*; do awk '/usec\/iter/ { print $(NF-1) }' "$f"; done | median)
bw=$(for f in "$work"/bw.*; do awk '$1 == 65536 { print $4 }' "$f"; done | median)
perf=$(for f in "$work"/perf.*; do awk '$1 == 65536 { print $3 }' "$f"; done | median)

g="drop-in vs rocemu's API, same work"
bench_row "$g" "ibv_rc_pingpong -s 2, round trip" "$pp" us \
	--ref "rocemu ping --poll" "$ping" --target "<=1.1"
bench_row "$g" "ib_write_bw 64 KiB, 128 in flight" "$bw" MB/s \
	--ref "rocemu perf write --poll" "$perf" --target ">=0.9"
