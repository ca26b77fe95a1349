#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs_cqex.c on rocemu's libibverbs.so.1: one process, its
# device on 127.0.0.37 (no other test uses that address).
# usage: tests/verbs_cqex.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_cqex.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$build/verbs_cqex
rm -rf "$work" && mkdir -p "$work"

if ! cc -Wall -Wextra -Werror -pthread -o "$work/verbs_cqex" \
	"$src/tests/verbs_cqex.c" "$src/examples/pair.c" -libverbs; then
	echo "verbs_cqex: 0 passed, 1 failed (does not compile)"
	exit 1
fi
. "$src/tests/verbs_env.sh"
ROCEMU_ADDR=127.0.0.37 ROCEMU_PCAP=$work/cqex.pcap \
	timeout 120 "$work/verbs_cqex" >"$work/out" 2>&1
rc=$?
grep -v "^device\|^QP .* ready" "$work/out"
if [ $rc = 124 ]; then
	echo "verbs_cqex: hung (killed after 120 s)"
fi
if ! grep -q "^verbs_cqex: " "$work/out"; then
	echo "verbs_cqex: exit status $rc before the end"
	echo "verbs_cqex: 0 passed, 1 failed"
	exit 1
fi
# The capture of the run reads whole.
if ! "$build/bin/rocemu" dump "$work/cqex.pcap" >"$work/dump" 2>&1; then
	echo "FAIL: the capture does not read back: $(tail -n 1 "$work/dump")"
	echo "verbs_cqex: 0 passed, 1 failed (capture)"
	exit 1
fi
grep -q "^verbs_cqex: .* passed, 0 failed$" "$work/out" && [ $rc = 0 ]
