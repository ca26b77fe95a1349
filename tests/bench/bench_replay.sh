#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench: rocemu replay and rocemu ladder are linear in packets, as
# rocemu check is. Each runs once on captures of 10^5 and 10^6 flows (a
# SEND and its ACK each, mkcap --flows); the figure is the time per packet
# at 10^6 against that at 10^5, which stays near 1 when the work grows
# with the packets (replay was quadratic in flows once: each flow's setup
# walked the whole capture; ladder reserved 4 KB of rows a chart, 5.7 GB
# for 10^6 flows, and spent its time clearing pages). Replay sets a device
# up per flow: 10^6 flows take 30 to 80 s on a shared 2-core machine, and
# 1.4 GB (the capture, in memory); ladder takes 4 to 8 s and 1.9 GB, its
# text (about 300 MB) discarded. The captures (20 and 216 MB) go under
# BUILD_DIR and are removed.
# usage: tests/bench/bench_replay.sh BUILD_DIR
set -eu
build=${1:?usage: bench_replay.sh BUILD_DIR}
rocemu=$build/bin/rocemu
work=$build/bench
mkdir -p "$work"
. "$(dirname "$0")/bench_lib.sh"

# wall-clock nanoseconds of a command, its output discarded; its exit
# status must be 0
ns_of() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

declare -A per_pkt kb
for flows in 100000 1000000; do
	cap=$work/replay_flows_$flows.pcap
	"$build/tests/mkcap" --flows "$cap" "$flows"
	pkts=$((2 * flows))
	for tool in replay check ladder; do
		case $tool in
		replay) ns=$(ns_of "$rocemu" replay "$cap") ;;
		check) ns=$(ns_of "$rocemu" check -q "$cap")
		       kb[$flows]=$(peak_kb "$rocemu" check -q "$cap") ;;
		ladder) ns=$(ns_of "$rocemu" ladder "$cap") ;;
		esac
		per_pkt[$tool.$flows]=$(awk -v t="$ns" -v n="$pkts" \
			'BEGIN { printf "%.1f", t / n }')
	done
	rm -f "$cap"
done
# rocemu check's memory per flow: the same at 10^6 flows as at 10^5
# (a flow's state is its cost; packets add nothing).
per_flow() { awk -v k="$1" -v f="$2" 'BEGIN { printf "%.2f", k / f }'; }
bench_row scale "rocemu check memory, 10^6 flows, per flow" \
	"$(per_flow "${kb[1000000]}" 1000000)" KiB \
	--ref "10^5 flows" "$(per_flow "${kb[100000]}" 100000)" --target "<=1.5"
for tool in replay check ladder; do
	bench_row scale "rocemu $tool, 10^6 flows, per packet" \
		"${per_pkt[$tool.1000000]}" ns/pkt \
		--ref "10^5 flows" "${per_pkt[$tool.100000]}" --target "<=1.5"
done
