#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make rxe-bench: the same perftest binaries in the same two guests, once
# on Linux rxe and once on rocemu's drop-in (tests/rxe/bench_guest.sh), and
# a table of the figures with rocemu/rxe ratios. Not a pass/fail test: the
# guests run in software emulation on a shared machine, so the figures say
# how the two stacks compare there, not what either does on hardware.
# usage: tests/rxe/bench.sh BUILD_DIR   (makes the lab's parts first)
# Exit 1 when the guests or a run failed (no figure to show).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: bench.sh BUILD_DIR}
rxe=$build/rxe
out=$rxe/bench
t0=$(date +%s)

"$here/parts.sh" "$build" >/dev/null
rc=0
"$here/boot.sh" -t 900 "$rxe" "$out" "$here/bench_guest.sh" "$here/bench_guest.sh" \
	>"$out.boot.txt" 2>&1 || rc=$?
[ -d "$out/b/bench" ] || { echo "rxe bench: the guests brought no results back" >&2
	cat "$out.boot.txt" >&2; exit 1; }

# fig STACK PROGRAM COLUMN: a column of the client's result line.
fig() {
	awk -v col="$3" '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { v = $col } END { print v }' \
		"$out/b/bench/$1-$2.client" 2>/dev/null
}
row() { # LABEL UNIT PROGRAM COLUMN
	local a b r
	a=$(fig rxe "$3" "$4") b=$(fig rocemu "$3" "$4")
	r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", b / a; else print "-" }')
	printf '  %-34s %-10s %12s %12s %10s\n' "$1" "$2" "${a:--}" "${b:--}" "$r"
}
echo "rxe bench: perftest between two guests (qemu TCG, -smp 1 each), path MTU 1024, the client's figures; rocemu/rxe above 1 is rocemu slower for latency, faster for the rest"
printf '  %-34s %-10s %12s %12s %10s\n' measure unit rxe rocemu rocemu/rxe
row "ib_send_lat 64 B, typical latency" usec ib_send_lat 5
row "ib_send_lat 64 B, average latency" usec ib_send_lat 6
row "ib_send_bw 64 B, message rate" Mpps ib_send_bw 5
row "ib_send_bw 64 B, average bandwidth" MB/s ib_send_bw 4
row "ib_write_bw 64 KiB, average bandwidth" MB/s ib_write_bw 4
# The targets as rows of make bench (BENCH_JSONL): rocemu against rxe.
. "$here/../bench/bench_lib.sh"
target() { # LABEL UNIT PROGRAM COLUMN TARGET
	local a b
	a=$(fig rxe "$3" "$4") b=$(fig rocemu "$3" "$4")
	[ -n "$a" ] && [ -n "$b" ] || return 0
	bench_row "rxe lab, same two guests" "$1" "$b" "$2" \
		--ref "rxe, same guests and programs" "$a" --target "$5" >/dev/null
}
if [ -n "${BENCH_JSONL:-}" ]; then
	target "ib_send_lat 64 B, typical latency" us ib_send_lat 5 "<=1.0"
	target "ib_send_bw 64 B, message rate" Mpps ib_send_bw 5 ">=1.0"
	target "ib_write_bw 64 KiB, average bandwidth" MB/s ib_write_bw 4 ">=1.0"
fi
echo "rxe bench: $(( $(date +%s) - t0 )) s; each side's output in $out/{a,b}/bench"
[ $rc = 0 ]
