#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma-core's own test suite (Debian's python3-pyverbs, the tests in
# /usr/share/doc/rdma-core/tests) on rocemu's libibverbs.so.1, twice: with
# its defaults (GID index 0) and with --gid 1. Each run must finish with no
# test failing, erroring or hanging, and every test the recorded Linux rxe
# run passes (tests/rxe/pyverbs-rxe-6.1.tsv) must pass: tests/rxe/suite.py
# parity prints the per-module table and the verdict.
# usage: tests/verbs/pyverbs.sh BUILD_DIR   (ROCEMU_ADDR: 127.0.0.90)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: pyverbs.sh BUILD_DIR}" && pwd)
py=/usr/bin/python3     # pyverbs is built for Debian's Python
src=/usr/share/doc/rdma-core/tests
work=$build/pyverbs
die() { echo "pyverbs: $*" >&2; exit 1; }

$py -c 'import pyverbs.device' 2>/dev/null ||
	die "$py cannot import pyverbs (Debian package python3-pyverbs)"
[ -f $src/run_tests.py ] || die "no $src/run_tests.py (Debian package python3-pyverbs)"
rm -rf "$work" && mkdir -p "$work"
cp -r $src "$work/tests"
gunzip -f "$work"/tests/*.gz
$py -m compileall -q "$work/tests" >/dev/null

. "$here/../lib/verbs_env.sh"
# Under TSAN=1 one test is left out: test_multi_process_alloc_dm forks
# the threaded python process and its children start threads, which
# ThreadSanitizer cannot follow (they die, or with die_after_fork=0 stop
# at "dup thread"). rxe skips it (no device memory); the plain and SAN=1
# runs run it.
skip=()
[ -n "${TSAN_OPTIONS:-}" ] &&
	skip=(--skip-test tests.test_device.DMTest.test_multi_process_alloc_dm
	      --skip-reason "ThreadSanitizer cannot run a forked threaded process that starts threads")
export ROCEMU_ADDR=${ROCEMU_ADDR:-127.0.0.90}
rc=0
for run in default gid1; do
	gid=() && [ $run = gid1 ] && gid=(--gid 1)
	echo "pyverbs: rdma-core's suite on rocemu0, ${gid[*]:-its defaults}"
	# a test silent for 60 s is a hang: killed, recorded, the rest runs on
	$py "$here/../rxe/suite.py" run --tests "$work/tests" --dev rocemu0 \
		"${gid[@]}" "${skip[@]}" --out "$work/$run.tsv" --idle 60 --budget 900 ||
		die "the run could not be made (its output: $work/$run.tsv.log)"
	$py "$here/../rxe/suite.py" parity --reference "$here/../rxe/pyverbs-rxe-6.1.tsv" \
		--label "rxe 6.1" "$work/$run.tsv" | tee "$work/$run.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
exit $rc
