#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs_qp_ex.c on rocemu's libibverbs.so.1: one process, its
# device on 127.0.0.34 (no other test uses that address).
# usage: tests/verbs_qp_ex.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_qp_ex.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$build/verbs_qp_ex
rm -rf "$work" && mkdir -p "$work"

if ! cc -Wall -Wextra -Werror -o "$work/verbs_qp_ex" \
	"$src/tests/verbs_qp_ex.c" "$src/examples/pair.c" -libverbs; then
	echo "verbs_qp_ex: 0 passed, 1 failed (does not compile)"
	exit 1
fi
. "$src/tests/verbs_env.sh"
ROCEMU_ADDR=127.0.0.34 ROCEMU_PCAP=$work/qp_ex.pcap \
	timeout 120 "$work/verbs_qp_ex" >"$work/out" 2>&1
rc=$?
grep -v "^device\|^QP .* ready" "$work/out"
if [ $rc = 124 ]; then
	echo "verbs_qp_ex: hung (killed after 120 s)"
fi
if ! grep -q "^verbs_qp_ex: " "$work/out"; then
	echo "verbs_qp_ex: exit status $rc before the end"
	echo "verbs_qp_ex: 0 passed, 1 failed"
	exit 1
fi
# The capture (ATOMIC_WRITE among its packets) reads whole.
if ! "$build/bin/rocemu" dump "$work/qp_ex.pcap" >"$work/dump" 2>&1; then
	echo "FAIL: the capture does not read back: $(tail -n 1 "$work/dump")"
	echo "verbs_qp_ex: 0 passed, 1 failed (capture)"
	exit 1
fi
if ! grep -q " RC_ATOMIC_WRITE .* len 8 payload 8 icrc ok" "$work/dump"; then
	echo "FAIL: no ATOMIC_WRITE in the capture's dump"
	exit 1
fi
grep -q "^verbs_qp_ex: .* passed, 0 failed$" "$work/out" && [ $rc = 0 ]
