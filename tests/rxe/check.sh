#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rxe lab's check (make rxe-check): makes the parts (parts.sh), boots
# one guest (boot.sh) that runs the live interop between Linux rxe and
# rocemu's drop-in (interop.sh), and prints the table: one row per program
# and direction, one column per GID, then each failure with its reason.
# Then the error paths (errors.sh): each case's NAKs and completion
# statuses, rocemu against rxe both ways, equal to rxe against rxe.
# Then the golden captures' rxe side (golden_lab.sh): two guests, every
# scenario, the rxe captures retaken and compared with pcaps/rocemu.
# Fails when a run failed, a guest did not finish or a comparison found an
# unlisted difference.
# usage: tests/rxe/check.sh [--or-skip] [--pcaps DIR] BUILD_DIR
#   --or-skip  where the lab cannot run (no qemu, no kernel to be had),
#              print one line saying why and succeed (make check's way).
#   --pcaps    where the retaken captures go: the source tree's pcaps/
#              for make rxe-check; BUILD_DIR/rxe/pcaps otherwise, so that
#              make check leaves the tree as it was.
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
ok=1
[ "$fail" = 0 ] && [ "$pass" -gt 0 ] && [ $rc = 0 ] || ok=0

# The error paths: rxe <-> rxe across two guests, then rxe <-> rocemu both
# ways; errors.sh prints one line per case and direction.
"$here/errors.sh" "$build" || ok=0

# The golden captures' rxe side: two guests, pcaps/rxe regenerated and
# compared with pcaps/rocemu (golden_lab.sh prints its own table).
"$here/golden_lab.sh" "$build" ${pcaps:+"$pcaps"} || ok=0
[ $ok = 1 ]
