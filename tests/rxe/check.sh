#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rxe lab's check (make rxe-check): makes the parts (parts.sh), boots
# one guest (boot.sh) that runs the live interop between Linux rxe and
# rocemu's drop-in (interop.sh), and prints the table: one row per program
# and direction, one column per GID, then each failure with its reason;
# then rdma-core's test suite on rxe and on rocemu, compared (suite.sh).
# Fails when a run failed or the guest did not finish.
# usage: tests/rxe/check.sh [--or-skip] BUILD_DIR
#   --or-skip  where the lab cannot run (no qemu, no kernel to be had),
#              print one line saying why and succeed (make check's way).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
or_skip=0
[ "${1:-}" = --or-skip ] && { or_skip=1; shift; }
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

out=$rxe/interop
rc=0
"$here/boot.sh" -t 900 "$rxe" "$out" "$here/interop.sh" || rc=$?
[ $rc = 77 ] && cannot "qemu-system-x86_64 missing"
tsv=$out/a/interop.tsv
[ -f "$tsv" ] || { echo "rxe lab: FAILED: the guest brought no interop results back" >&2; exit 1; }

echo "rxe lab: live interop, Linux $(sed -n 's/.*Linux version \([^ ]*\).*/\1/p' \
	"$out/a/dmesg.txt" | head -n 1) rxe against rocemu's libibverbs.so.1 (server->client)"
awk -F'\t' '
	{ key = $2 "\t" $3; if (!(key in seen)) { seen[key] = 1; order[n++] = key }
	  cell[key, $4] = $1 " " $5 " s" }
	END {
		printf "  %-20s %-13s %-15s %s\n", "program", "direction", "GID 1 (IPv4)", "GID 0 (IPv6 link-local)"
		for (i = 0; i < n; i++) {
			split(order[i], k, "\t")
			a = (order[i], 1) in cell ? cell[order[i], 1] : "-"
			b = (order[i], 0) in cell ? cell[order[i], 0] : "-"
			printf "  %-20s %-13s %-15s %s\n", k[1], k[2], a, b
		}
	}' "$tsv"
awk -F'\t' '$1 == "FAIL" { printf "  FAIL %s %s gid%s: %s\n", $2, $3, $4, $6 }' "$tsv"
pass=$(grep -c '^PASS' "$tsv" || true)
fail=$(grep -c '^FAIL' "$tsv" || true)
t2=$(date +%s)
echo "rxe lab: interop $pass passed, $fail failed (parts $((t1 - t0)) s, guest $((t2 - t1)) s; logs in $out)"

# rdma-core's own suite, rxe in a guest against rocemu here (suite.sh)
suite_rc=0
"$here/suite.sh" "$build" || suite_rc=$?
[ $suite_rc = 0 ] || echo "rxe lab: FAILED: the suite comparison (above)" >&2
[ "$fail" = 0 ] && [ "$pass" -gt 0 ] && [ $rc = 0 ] && [ $suite_rc = 0 ]
