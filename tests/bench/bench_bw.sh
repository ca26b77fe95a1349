#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench, two processes on loopback through the drop-in: perftest's
# bandwidth and latency programs next to plain UDP between the same two
# addresses, measured in the same run; then a 1 GiB WRITE and a 1 GiB READ.
# Each figure is the median of ROUNDS rounds (the machine is shared).
# Rows go through bench_report.py (and into $BENCH_JSONL when it is set).
# usage: tests/bench/bench_bw.sh BUILD_DIR [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: bench_bw.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-3}
udp=$build/tests/bench_udp
work=$build/bench_bw
rm -rf "$work" && mkdir -p "$work"
port=19100

for b in ib_write_bw ib_read_bw ib_send_bw ib_send_lat; do
	command -v $b >/dev/null || {
		echo "bench_bw: $b missing (Debian package perftest)"
		exit 1
	}
done

. "$here/bench_lib.sh"

# perf NAME OFFLOAD MTU PROGRAM ARGS...: the program as server on .2 and
# client on .3, path MTU and port MTU set, offload 0 or 1; the client's
# output in $work/NAME.
perf() {
	local name=$1 off=$2 mtu=$3 prog=$4
	shift 4
	port=$((port + 1))
	env ROCEMU_ADDR=127.0.0.2 ROCEMU_MTU=$mtu ROCEMU_OFFLOAD=$off \
		LD_LIBRARY_PATH=$build/lib timeout 120 \
		$prog -x 1 -m $mtu -p $port "$@" >"$work/$name.server" 2>&1 &
	sleep 0.3
	env ROCEMU_ADDR=127.0.0.3 ROCEMU_MTU=$mtu ROCEMU_OFFLOAD=$off \
		LD_LIBRARY_PATH=$build/lib timeout 120 \
		$prog -x 1 -m $mtu -p $port "$@" 127.0.0.2 >"$work/$name" 2>&1
	local rc=$?
	wait
	[ $rc = 0 ] || { echo "bench_bw: $name failed"; cat "$work/$name"; exit 1; }
}

# The average MB/s of a perftest bandwidth run; the median of its rounds.
bw_of() { awk '$1 ~ /^[0-9]+$/ && NF >= 5 { print $4 }' "$1"; }
bw() { for r in $(seq "$rounds"); do bw_of "$work/$1.$r"; done | median; }
udp_bulk() {
	for r in $(seq "$rounds"); do "$udp" bulk "$@" || exit 1; done | median
}

# 1. Bandwidth, 64 KiB messages, 128 in flight: one datagram per packet
# (ROCEMU_OFFLOAD=0) against plain UDP of the same datagram size, then
# with GSO/GRO, READ and SEND against WRITE.
declare -A raw
for r in $(seq "$rounds"); do
	for mtu in 1024 4096; do
		for off in 0 1; do
			for p in write read send; do
				perf $p.$mtu.$off.$r $off $mtu ib_${p}_bw \
					-s 65536 -n 10000 -t 128
			done
		done
	done
done
raw[1024]=$(udp_bulk 1040)
raw[4096]=$(udp_bulk 4112)
gso=$(udp_bulk 4112 gso)
g="two processes, loopback"
for mtu in 1024 4096; do
	dg=$((mtu + 16))
	for p in write read send; do
		bench_row "$g" "ib_${p}_bw 64 KiB, MTU $mtu, no offload" \
			"$(bw $p.$mtu.0)" MB/s \
			--ref "plain UDP, $dg-byte datagrams" "${raw[$mtu]}" \
			--target ">=0.5"
	done
done
bench_row "$g" "ib_write_bw 64 KiB, MTU 4096, GSO/GRO" "$(bw write.4096.1)" MB/s \
	--target ">=2000"
bench_row "$g" "ib_write_bw 64 KiB, MTU 4096, GSO/GRO vs UDP" \
	"$(bw write.4096.1)" MB/s \
	--ref "plain UDP with GSO/GRO, 4112-byte segments" "$gso"
for mtu in 1024 4096; do
	for p in read send; do
		bench_row "$g" "ib_${p}_bw vs ib_write_bw, MTU $mtu, GSO/GRO" \
			"$(bw $p.$mtu.1)" MB/s \
			--ref "ib_write_bw, same run" "$(bw write.$mtu.1)" \
			--target ">=0.8"
	done
done

# 2. Latency: perftest's typical and 99.9th percentile half round trip
# against a plain UDP ping-pong of the same 80-byte datagrams, both
# spinning.
for r in $(seq "$rounds"); do
	perf lat.$r 1 1024 ib_send_lat -s 64 -n 20000
	"$udp" pingpong 80 20000 >"$work/pp.$r" || exit 1
done
lat() { for r in $(seq "$rounds"); do
	awk -v c=$1 '$1 == 64 && NF >= 9 { print $c }' "$work/lat.$r"
done | median; }
pp() { for r in $(seq "$rounds"); do awk -v c=$1 '{ print $c }' "$work/pp.$r"; done | median; }
bench_row "$g" "ib_send_lat -s 64, typical (half round trip)" "$(lat 5)" us \
	--ref "plain UDP ping-pong, 80 B, typical" "$(pp 1)"
bench_row "$g" "ib_send_lat -s 64, 99.9th percentile" "$(lat 9)" us \
	--ref "plain UDP ping-pong, 80 B, 99.9th percentile" "$(pp 2)"

# 3. Large messages: 1 GiB each (perftest's least count, 5); the time of
# one, from the average bandwidth. perftest fills 2 GiB with rand() first,
# which takes most of the 20 s each run lasts.
for p in write read; do
	perf big.$p 1 4096 ib_${p}_bw -s 1073741824 -n 5 -t 1
	mbs=$(bw_of "$work/big.$p")
	bench_row "$g" "ib_${p}_bw 1 GiB messages, time of one" \
		"$(awk -v m="$mbs" 'BEGIN { print 1073741824 / (m * 1e6) }')" s
done
