#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma_cm against Linux's CM (make rxe-check's part "cm"): boots two guests
# running tests/rxe/cm_guest.sh (rping rxe <-> rxe across them, then
# rping, ucmatose, udaddy and ib_send_bw -R between rxe and rocemu's
# drop-ins inside guest a, both ways) and prints one line per run:
#   PASS|FAIL PROGRAM SERVER->CLIENT (SECONDS s)[: reason]
# A failed run is followed by its evidence: ib_cm's counters on rxe's
# side, the kernel log's tail and the CM MADs of its capture (rocemu
# dump). Then the golden CM comparison: the CM MADs of the rping
# connection rxe <-> rxe against those of rocemu -> rxe and rxe -> rocemu
# (compare.py --cm), field by field, every difference listed in
# conformance/differences.md or unlisted.
# usage: tests/rxe/cm.sh [--again] BUILD_DIR   (parts.sh must have run)
#   --again  no guests: read the results the last run left (for work on
#            this script)
# Exit 0 when every run passed and the comparison found no unlisted
# difference, 1 otherwise, 2 when the guests brought no results back.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
again=0
[ "${1:-}" = --again ] && { again=1; shift; }
build=$(cd "${1:?usage: cm.sh [--again] BUILD_DIR}" && pwd)
rxe=$build/rxe
rocemu=$build/bin/rocemu
out=$rxe/cm
t0=$(date +%s)

rc=0
[ $again = 1 ] || "$here/boot.sh" -t 600 "$rxe" "$out" "$here/cm_guest.sh" "$here/cm_guest.sh" \
	>"$out.boot.txt" 2>&1 || rc=$?
[ $rc = 77 ] && { echo "rxe lab: cm: qemu-system-x86_64 missing" >&2; exit 2; }
tsv=$out/a/cm.tsv
if [ ! -f "$tsv" ]; then
	echo "rxe lab: cm: FAILED: the guests brought no results back" >&2
	cat "$out.boot.txt" >&2
	for g in a b; do
		[ -f "$out/$g/log.txt" ] && tail -n 10 "$out/$g/log.txt" | sed "s/^/  $g| /" >&2
	done
	exit 2
fi
logs=$out/a/cm

# evidence RUN: what a failed run left: ib_cm's counters, the kernel log's
# tail, the capture's CM MADs (and how many packets it holds).
evidence() {
	local f=$logs/$1
	echo "    ib_cm counters (rxe's side, after the run):"
	sed 's/^/      /' "$f.counters" 2>/dev/null || echo "      none"
	echo "    dmesg (tail):"
	tail -n 10 "$f.dmesg" 2>/dev/null | sed 's/^/      /' || echo "      none"
	if [ -s "$f.pcap" ]; then
		local all cm
		all=$("$rocemu" dump "$f.pcap" 2>/dev/null | grep -c '^[0-9]' || true)
		echo "    capture ($f.pcap, $all packets), its CM MADs:"
		"$rocemu" dump "$f.pcap" 2>/dev/null | grep ' CM ' | head -n 20 |
			cut -c1-200 | sed 's/^/      /'
	else
		echo "    no capture"
	fi
	for s in server client; do
		[ -s "$f.$s.err" ] || [ -s "$f.$s" ] || continue
		echo "    $s's output (tail):"
		cat "$f.$s" "$f.$s.err" | tail -n 5 | sed 's/^/      /'
	done
}

pass=0 fail=0
echo "rxe lab: rdma_cm against Linux's CM (rdma_ucm), rping rxe<->rxe across two guests, then rocemu<->rxe in guest a"
while IFS=$'\t' read -r res prog dir secs why; do
	line="  $res $prog $dir${secs:+ ($secs s)}"
	if [ "$res" = PASS ]; then
		pass=$((pass + 1))
		echo "$line"
		continue
	fi
	fail=$((fail + 1))
	echo "$line: $why"
	if [ "$dir" = "rxe->rxe" ]; then
		evidence ref-rping
	else
		evidence "$prog-${dir/->/-}"
	fi
done <"$tsv"
[ -f "$out/b/rc" ] && [ "$(cat "$out/b/rc")" != 0 ] &&
	echo "  guest b (the reference client): $(tail -n 1 "$out/b/log.txt" 2>/dev/null)"

# The golden CM comparison: rping's connection, rxe <-> rxe against each
# rocemu <-> rxe direction.
cmp=$out/compare.txt
: >"$cmp"
crc=0 compared=0
ref=$logs/ref-rping.pcap
for dir in rocemu-rxe rxe-rocemu; do
	pc=$logs/rping-$dir.pcap
	if [ ! -s "$ref" ] || [ ! -s "$pc" ]; then
		echo "scenario cm_rping_$dir: no capture (${ref##*/} or ${pc##*/})" >>"$cmp"
		crc=1
		continue
	fi
	python3 "$here/compare.py" --rocemu "$rocemu" --cm "$ref" "$pc" \
		"cm_rping_${dir/-/_}" >>"$cmp" 2>&1 || crc=1
	compared=$((compared + 1))
done
echo "  golden CM MADs, rping rxe<->rxe against rocemu<->rxe (compare.py --cm):"
awk '/^scenario / { sub(/^scenario /, ""); print "    " $0 }
	/^  (UNLISTED|listed) / { print "    " $0 }' "$cmp"
[ $crc = 0 ] || echo "    comparison FAILED (details in $cmp)"
secs=$(($(date +%s) - t0))
echo "rxe lab: cm $pass passed, $fail failed; golden CM $compared compared" \
	"$([ $crc = 0 ] && echo "with no unlisted difference" || echo "with UNLISTED differences or errors")" \
	"($secs s; logs in $logs)"
[ $fail = 0 ] && [ $pass -gt 0 ] && [ $crc = 0 ] && [ $rc = 0 ]
