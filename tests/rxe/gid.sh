#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GID 0, traffic class and flow label against Linux rxe (make rxe-check's
# part "gid"): boots two guests running tests/rxe/gid_guest.sh (each
# program rxe <-> rxe across them over the eth0's, then rocemu <-> rxe
# both ways inside guest a over a veth) and judges every run's capture and
# GRHs with gid_check.py: GID 0 over IPv6 link-local addresses, the AH's
# traffic class on the wire and in the receiver's GRH both ways, the flow
# label on the wire and in the GRH, where it differs from the AH's only as
# a listed difference (conformance/differences.md) allows. Prints one line
# per run, "  PASS|FAIL PROGRAM SERVER->CLIENT: ...", with what it found
# and, on failure, what it compared.
# usage: tests/rxe/gid.sh [--again] BUILD_DIR   (parts.sh must have run)
#   --again  no guests: judge what the last run left (for work on the check)
# Exit 0 when every run passed, 1 otherwise, 2 when the guests brought no
# results back.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
again=0
[ "${1:-}" = --again ] && { again=1; shift; }
build=$(cd "${1:?usage: gid.sh [--again] BUILD_DIR}" && pwd)
rxe=$build/rxe
out=$rxe/gid
t0=$(date +%s)

rc=0
[ $again = 1 ] || "$here/boot.sh" -t 600 "$rxe" "$out" "$here/gid_guest.sh" "$here/gid_guest.sh" \
	>"$out.boot.txt" 2>&1 || rc=$?
[ $rc = 77 ] && { echo "rxe lab: gid: qemu-system-x86_64 missing" >&2; exit 2; }
tsv=$out/a/gid.tsv
if [ ! -f "$tsv" ] || ! ls "$out"/a/gid/*.meta >/dev/null 2>&1; then
	echo "rxe lab: gid: FAILED: the guests brought no results back" >&2
	cat "$out.boot.txt" >&2
	for g in a b; do
		[ -f "$out/$g/log.txt" ] && tail -n 10 "$out/$g/log.txt" | sed "s/^/  $g| /" >&2
	done
	exit 2
fi
logs=$out/a/gid
# guest b ran the reference clients: their output beside the servers'
cp "$out"/b/gid/ref-*.client* "$logs"/ 2>/dev/null || :
clients=$out/b/gid-clients.tsv
[ -f "$clients" ] || echo "  guest b (the reference clients) left no gid-clients.tsv:" \
	"$(tail -n 1 "$out/b/log.txt" 2>/dev/null)"

echo "rxe lab: GID 0, traffic class and flow label: rxe<->rxe across two guests, then rocemu<->rxe in guest a"
crc=0
python3 "$here/gid_check.py" "$logs" "$tsv" ${clients:+$([ -f "$clients" ] && echo "$clients")} \
	>"$out/check.txt" 2>&1 || crc=$?
cat "$out/check.txt"
[ -f "$clients" ] || crc=1
secs=$(($(date +%s) - t0))
echo "rxe lab: gid $(grep -c '^  PASS' "$out/check.txt" || true) passed," \
	"$(grep -c '^  FAIL' "$out/check.txt" || true) failed ($secs s; logs in $logs)"
[ $crc = 0 ] && [ $rc = 0 ]
