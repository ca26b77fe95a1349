#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma-core's own test suite (Debian's python3-pyverbs) on Linux rxe and on
# rocemu's libibverbs.so.1 drop-in, compared test by test (make
# suite-compare; make rxe-check ends with it).
#   rocemu: on this host, device rocemu0 on ROCEMU_ADDR (default 127.0.0.90).
#   rxe:    in an rxe lab guest (boot.sh on parts.sh's parts), rxe0 on a
#           veth; the guest gets Debian's /usr/bin/python3 with the modules
#           the suite imports, pyverbs and the libraries they link on its
#           disk (suite_guest.sh). Its result must agree with the recorded
#           reference tests/rxe/pyverbs-rxe-6.1.tsv.
#           Where the lab cannot run (no qemu, no parts), or with --recorded,
#           the reference stands in for it and the output says so.
# Each side: a test silent for IDLE seconds is a hang, killed and recorded
# ("timeout"); the rest runs on; a side stops after its BUDGET.
# Prints the per-module table, "rocemu passes N of the M tests rxe passes"
# and each test rxe passes and rocemu does not, with rocemu's error line.
# usage: tests/rxe/suite.sh [--recorded] BUILD_DIR
#   SUITE_IDLE (30), SUITE_BUDGET (420): rocemu's hang limit and each
#   side's budget in seconds; ROCEMU_ADDR (127.0.0.90).
# Exit 0 when the comparison ran (rocemu's parity is reported, not
# required); 1 when it could not (no pyverbs, no tests, a side brought no
# results) or when the guest's rxe disagrees with the reference.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
recorded=0
[ "${1:-}" = --recorded ] && { recorded=1; shift; }
build=$(cd "${1:?usage: suite.sh [--recorded] BUILD_DIR}" && pwd)
py=/usr/bin/python3     # pyverbs is built for Debian's Python
src=/usr/share/doc/rdma-core/tests
ref=$here/pyverbs-rxe-6.1.tsv
work=$build/suite
# rocemu's side: a test here takes at most ~12 s (pyverbs' own poll
# timeout); the guest's emulated CPU is slower, its limit larger.
idle=${SUITE_IDLE:-30} budget=${SUITE_BUDGET:-420}
t0=$(date +%s)

die() { echo "suite: cannot compare: $*" >&2; exit 1; }
[ -x $py ] && $py -c 'import pyverbs.device' 2>/dev/null ||
	die "$py cannot import pyverbs (Debian package python3-pyverbs)"
[ -f $src/run_tests.py ] || die "no $src/run_tests.py (Debian package python3-pyverbs)"
[ -f "$build/lib/libibverbs.so.1" ] || die "no rocemu build in $build (run make first)"

# rdma-core's tests, gunzipped and compiled once (the guest then needs not)
rm -rf "$work" && mkdir -p "$work"
cp -r $src "$work/tests"
gunzip -f "$work"/tests/*.gz
$py -m compileall -q "$work/tests" >/dev/null

# ---- rocemu, here, in a network namespace of its own where it can ----
LD_LIBRARY_PATH=$build/lib ROCEMU_ADDR=${ROCEMU_ADDR:-127.0.0.90} \
	"$here/../lib/isolated.sh" $py "$here/suite.py" run --tests "$work/tests" --dev rocemu0 \
	--out "$work/rocemu.tsv" --idle "$idle" --budget "$budget" ||
	die "the rocemu run failed (its output: $work/rocemu.tsv.log)"
t1=$(date +%s)

# ---- rxe, in a guest ----
rxe_tsv="" label=""
why=""
if [ $recorded = 1 ]; then
	why="--recorded"
elif ! command -v qemu-system-x86_64 >/dev/null; then
	why="no qemu-system-x86_64"
elif ! "$here/parts.sh" "$build" >"$work/parts.log" 2>&1; then
	why="the lab's parts could not be made ($(tail -n 1 "$work/parts.log"))"
fi
if [ -z "$why" ]; then
	g=$work/guest.in
	mkdir -p "$g/root"
	cp "$here/suite_guest.sh" "$g/run.sh"
	cp "$here/suite.py" "$g/suite.py"
	cp -a "$work/tests" "$g/tests"
	files=$($py "$here/suite.py" files --tests "$work/tests") ||
		die "suite.py files failed"
	libs=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd $(echo "$files" |
		grep '\.so$') "$(readlink -f $py)" 2>/dev/null |
		awk '/=> \// {print $3}' | sort -u)
	for f in $files $libs; do
		d=$f
		case $d in /lib/*|/lib64/*) d=/usr$d ;; esac
		mkdir -p "$g/root$(dirname "$d")"
		cp -L "$f" "$g/root$d"
	done
	ln -sf python3.11 "$g/root/usr/bin/python3"
	echo "suite: the guest's Python, pyverbs and tests: $(du -sk "$g" | cut -f1) KiB"
	rc=0
	"$here/boot.sh" -t $((budget + 240)) "$build/rxe" "$work/guest" "$g" \
		>"$work/boot.log" 2>&1 || rc=$?
	rm -rf "$g"
	if [ -f "$work/guest/a/rxe.tsv" ]; then
		rxe_tsv=$work/guest/a/rxe.tsv
		cp "$rxe_tsv" "$work/rxe.tsv"
		label="rxe (measured: Linux $(sed -n 's/.*Linux version \([^ ]*\).*/\1/p' \
			"$work/guest/a/dmesg.txt" | head -n 1), guest)"
		tail -n 1 "$work/guest/a/log.txt"
	else
		cat "$work/boot.log" >&2
		tail -n 5 "$work/guest/a/log.txt" 2>/dev/null >&2 || true
		die "the guest brought no rxe results back (boot.sh exit $rc; $work/guest)"
	fi
fi
t2=$(date +%s)
if [ -z "$rxe_tsv" ]; then
	rxe_tsv=$ref
	label="rxe (RECORDED, not measured: $why; $(basename "$ref"))"
	set --
else
	set -- --reference "$ref"
fi
rc=0
$py "$here/suite.py" compare --rxe-label "$label" "$@" "$rxe_tsv" \
	"$work/rocemu.tsv" >"$work/compare.txt" || rc=$?
cat "$work/compare.txt"
parity=$(grep -h '^rocemu passes ' "$work/compare.txt" || true)
echo "rxe lab: suite ${parity:-not compared} (rocemu side $((t1 - t0)) s," \
	"rxe side $((t2 - t1)) s; results in $work)"
exit $rc
