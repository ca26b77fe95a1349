#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The error paths against rxe (make rxe-check runs it after the interop):
# boots two guests that run tests/rxe/errors_guest.sh (rxe <-> rxe across
# them, then rxe <-> rocemu's drop-in inside guest a, each as requester and
# as responder), decodes every capture with `rocemu dump` and prints one
# line per case and direction:
#   PASS|FAIL|SKIP CASE SERVER->CLIENT  wire: C:OPCODE S:OPCODE/SYNDROME ...
#        server: RESULT  client: RESULT   [rxe<->rxe: what differs]
# (C: the client, the requester; S: the server, the responder; RESULT is
# rxe_probe's: the post's outcome, the completion statuses, the QP state.)
# A run passes when its wire (opcodes, AETH syndromes, in order) and both
# sides' RESULTs equal the rxe <-> rxe run of the same case, and both
# sides' rxe_probe exited 0 (each saw what the step expects).
# usage: tests/rxe/errors.sh [--again] BUILD_DIR   (parts.sh must have run)
#   --again  no guests: read the results the last run left (for work on
#            this script)
# Exit 0 when every run passed, 1 when one failed, 2 when the guests
# brought no results back.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
again=0
[ "${1:-}" = --again ] && { again=1; shift; }
build=${1:?usage: errors.sh [--again] BUILD_DIR}
rxe=$build/rxe
rocemu=$build/bin/rocemu
out=$rxe/errors
t0=$(date +%s)

rc=0
[ $again = 1 ] || "$here/boot.sh" -t 600 "$rxe" "$out" "$here/errors_guest.sh" "$here/errors_guest.sh" \
	>"$out.boot.txt" 2>&1 || rc=$?
[ $rc = 77 ] && { echo "rxe lab: errors: qemu-system-x86_64 missing" >&2; exit 2; }
if [ ! -f "$out/a/errors.tsv" ] || [ ! -f "$out/b/errors.tsv" ]; then
	echo "rxe lab: errors: FAILED: the guests brought no results back" >&2
	cat "$out.boot.txt" >&2
	exit 2
fi

# wire PCAP CLIENT_IP: the capture's RoCEv2 packets as C:OPCODE or
# S:OPCODE/SYNDROME (AETH), in order; "none" when there are none.
wire() {
	[ -f "$1" ] || { echo "no-capture"; return; }
	"$rocemu" dump "$1" 2>/dev/null | awk -v cli="$2" '
		/^[0-9]+ / {
			split($3, s, ":"); who = (s[1] == cli) ? "C" : "S"
			op = $6; sub(/^RC_/, "", op)
			syn = ""
			for (i = 7; i < NF; i++) if ($i == "syndrome") syn = "/" $(i + 1)
			w = w (w == "" ? "" : " ") who ":" op syn
		}
		END { print (w == "" ? "none" : w) }'
}

declare -A ref_wire ref_srv ref_cli
while IFS=$'\t' read -r run c s cl se ce sr cr; do
	[ "$run" = ref ] || continue
	ref_wire[$c]=$(wire "$out/a/errors/ref-$c.pcap" 10.0.1.2)
	ref_srv[$c]=$sr
done <"$out/a/errors.tsv"
while IFS=$'\t' read -r run c s cl se ce sr cr; do
	ref_cli[$c]=$cr
done <"$out/b/errors.tsv"

pass=0 fail=0
echo "rxe lab: error paths, rxe_probe (server = responder, client = requester); reference rxe<->rxe across two guests"
printf '  %-4s %-22s %-13s %s\n' "" case "server->client" "wire; server's and client's RESULT"
for c in $(cut -f2 "$out/a/errors.tsv" | awk '!seen[$0]++'); do
	printf '  %-4s %-22s %-13s %s\n' ref "$c" "rxe->rxe" \
		"${ref_wire[$c]}; server ${ref_srv[$c]}; client ${ref_cli[$c]}"
	while IFS=$'\t' read -r run cc s cl se ce sr cr; do
		[ "$cc" = "$c" ] && [ "$run" != ref ] || continue
		cli_ip=10.0.0.2
		[ "$s" = rocemu ] && cli_ip=10.0.0.1
		w=$(wire "$out/a/errors/$s-$c.pcap" $cli_ip)
		got="$w; server $sr; client $cr"
		why=""
		[ "$w" = "${ref_wire[$c]}" ] || why="$why wire"
		[ "$sr" = "${ref_srv[$c]}" ] || why="$why server"
		[ "$cr" = "${ref_cli[$c]}" ] || why="$why client"
		[ "$se" = 0 ] && [ "$ce" = 0 ] || why="$why exit-status"
		if [ -z "$why" ]; then
			pass=$((pass + 1))
			printf '  %-4s %-22s %-13s %s\n' PASS "$c" "$s->$cl" "$got"
		else
			fail=$((fail + 1))
			printf '  %-4s %-22s %-13s %s (exits %s/%s; differs from rxe<->rxe or wrong in:%s)\n' \
				FAIL "$c" "$s->$cl" "$got" "$se" "$ce" "$why"
		fi
	done <"$out/a/errors.tsv"
done
echo "rxe lab: errors $pass passed, $fail failed ($(( $(date +%s) - t0 )) s; logs in $out/a/errors)"
[ $fail = 0 ] && [ $pass -gt 0 ]
