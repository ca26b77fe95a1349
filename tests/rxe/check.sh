#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rxe lab's check (make rxe-check): makes the parts (parts.sh), then
# runs the lab's four parts, each with its output in BUILD_DIR/rxe/report:
#   interop  one guest (boot.sh, interop.sh): the live interop between
#            Linux rxe and rocemu's drop-in, every program both ways on
#            both GIDs;
#   errors   the error paths (errors.sh): each case's NAKs, completion
#            statuses and QP states, rocemu against rxe both ways, equal
#            to rxe against rxe;
#   golden   the golden captures' rxe side (golden_lab.sh): two guests,
#            every scenario, the rxe captures retaken and compared with
#            pcaps/rocemu;
#   suite    rdma-core's test suite on rxe in a guest and on rocemu here,
#            compared test by test (suite.sh);
#   conform  the conformance scenarios against rxe (conform.sh): one
#            guest, rocemu-agent on rxe, rocemu conform on a veth;
#   cm       rdma_cm against Linux's CM (cm.sh): rping, ucmatose, udaddy
#            and ib_send_bw -R between rocemu and rxe both ways, and the
#            CM MADs of rping rxe<->rxe and rocemu<->rxe compared;
#   gid      GID 0 (IPv6 link-local), an AH's traffic class and flow label
#            against rxe both ways (gid.sh): the captures and the UD
#            receivers' GRHs, every difference from the AH a listed one;
#   impair   rxe <-> rxe through rocemu impair (impair.sh): two guests
#            whose NICs meet in the relay, ib_write_bw and ib_read_bw
#            through loss, duplication and reordering, the relay's
#            captures judged by rocemu check and each recovery found.
# Ends with one table (report.py). Fails when a run failed, a guest did
# not finish, a comparison found an unlisted difference or the suite could
# not be compared (rocemu's parity in the suite is reported, not required).
# usage: tests/rxe/check.sh [--or-skip] [--pcaps DIR] BUILD_DIR
#   --or-skip  where the lab cannot run (no qemu, no kernel to be had),
#              print one line saying why and succeed (make check's way).
#   --pcaps    where the retaken captures go; by default
#              BUILD_DIR/rxe/pcaps, so that make check and make rxe-check
#              leave the tree as it was (make golden-rxe retakes them into
#              the source tree's pcaps/, golden_lab.sh's way).
# RXE_PARTS="NAME ..." (make rxe-check RXE_PARTS=cm) runs only those parts
# (spaces or commas between them); the report then judges only those.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
or_skip=0 pcaps=
while [ $# -gt 1 ]; do
	case $1 in
	--or-skip) or_skip=1; shift ;;
	--pcaps) pcaps=$2; shift 2 ;;
	*) break ;;
	esac
done
build=${1:?usage: check.sh [--or-skip] BUILD_DIR}
rxe=$build/rxe
t0=$(date +%s)

cannot() {
	if [ $or_skip = 1 ]; then
		echo "rxe lab: skipped: $*"
		exit 0
	fi
	echo "rxe lab: cannot run: $*" >&2
	exit 1
}

command -v qemu-system-x86_64 >/dev/null ||
	cannot "no qemu-system-x86_64 (Debian package qemu-system-x86; make rxe-deps installs the lab's packages)"
qemu-system-x86_64 -version >/dev/null 2>&1 || cannot "qemu-system-x86_64 does not start"

rc=0
"$here/parts.sh" "$build" 2>"$build/rxe-parts.err" || rc=$?
if [ $rc != 0 ]; then
	cat "$build/rxe-parts.err" >&2
	[ $rc = 77 ] && cannot "$(tail -n 1 "$build/rxe-parts.err" | sed 's/^rxe parts: //')"
	exit 1
fi
t1=$(date +%s)

all_parts="interop errors golden suite conform cm gid impair"
parts=$(echo "${RXE_PARTS:-$all_parts}" | tr ',' ' ')
for p in $parts; do
	case " $all_parts " in *" $p "*) ;; *)
		echo "rxe lab: RXE_PARTS names '$p'; the parts are: $all_parts" >&2
		exit 2 ;;
	esac
done
rep=$rxe/report
rm -rf "$rep" && mkdir -p "$rep"
# part NAME CMD...: runs one part of the lab with its output in
# $rep/NAME.txt and its exit status in $rep/NAME.rc; prints the part's
# closing line (each ends with one starting "rxe lab: "), and the whole
# output when it failed.
part() {
	local name=$1 rc=0
	shift
	case " $parts " in *" $name "*) ;; *) return 0 ;; esac
	"$@" >"$rep/$name.txt" 2>&1 || rc=$?
	echo $rc >"$rep/$name.rc"
	grep '^rxe lab: ' "$rep/$name.txt" | tail -n 1 || true
	if [ $rc != 0 ]; then
		echo "rxe lab: $name failed (exit $rc); its output ($rep/$name.txt):" >&2
		sed 's/^/  | /' "$rep/$name.txt" >&2
	fi
	return 0
}

# The live interop in one guest: rxe on a veth, rocemu in a namespace on
# its peer; every program both ways on both GIDs (interop.sh).
interop() {
	local out=$rxe/interop rc=0
	"$here/boot.sh" -t 900 "$rxe" "$out" "$here/interop.sh" || rc=$?
	[ $rc = 77 ] && { echo "rxe lab: interop: qemu-system-x86_64 missing"; return 1; }
	local tsv=$out/a/interop.tsv
	[ -f "$tsv" ] || { echo "rxe lab: interop FAILED: the guest brought no results back"; return 1; }
	cp "$tsv" "$rep/interop.tsv"
	sed -n 's/.*Linux version \([^ ]*\).*/\1/p' "$out/a/dmesg.txt" | head -n 1 \
		>"$rep/kernel.txt"
	awk -F'\t' '$1 == "FAIL" { printf "  FAIL %s %s gid%s: %s\n", $2, $3, $4, $6 }' "$tsv"
	local pass fail
	pass=$(grep -c '^PASS' "$tsv" || true)
	fail=$(grep -c '^FAIL' "$tsv" || true)
	echo "rxe lab: interop $pass passed, $fail failed ($(($(date +%s) - t1)) s; logs in $out)"
	[ "$fail" = 0 ] && [ "$pass" -gt 0 ] && [ $rc = 0 ]
}

if [ "$parts" = "$all_parts" ]; then
	echo "rxe lab: parts made in $((t1 - t0)) s; now the interop, the error paths," \
		"the golden captures, rdma-core's suite, the conformance suite and" \
		"rdma_cm, GID 0, traffic class and flow label, rxe <-> rxe through" \
		"rocemu impair (about 11 min)"
else
	echo "rxe lab: parts made in $((t1 - t0)) s; now only: $parts"
fi
part interop interop
# The error paths: rxe <-> rxe across two guests, then rxe <-> rocemu both
# ways (errors.sh).
part errors "$here/errors.sh" "$build"
# The golden captures' rxe side: two guests, pcaps/rxe regenerated and
# compared with pcaps/rocemu (golden_lab.sh).
part golden "$here/golden_lab.sh" "$build" ${pcaps:+"$pcaps"}
# rdma-core's own suite, rxe in a guest against rocemu here (suite.sh).
part suite "$here/suite.sh" "$build"
# The conformance suite against rxe: every failure a listed rxe deviation.
part conform "$here/conform.sh" "$build"
# rdma_cm against Linux's CM, both ways, and the CM MADs compared (cm.sh).
part cm "$here/cm.sh" "$build"
# GID 0, traffic class and flow label against rxe, both ways (gid.sh).
part gid "$here/gid.sh" "$build"
# rxe <-> rxe through rocemu impair: loss, duplication, reordering (impair.sh).
part impair "$here/impair.sh" "$build"

echo
python3 "$here/report.py" --parts "$(echo $parts | tr ' ' ,)" "$rep" $(($(date +%s) - t0))
