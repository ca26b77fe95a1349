#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs_lifetimes.c on rocemu's libibverbs.so.1: one process, its
# device on 127.0.0.30 (no other test uses that address).
# usage: tests/verbs_lifetimes.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_lifetimes.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$build/verbs_lifetimes
rm -rf "$work" && mkdir -p "$work"

if ! cc -Wall -Wextra -Werror -pthread -o "$work/verbs_lifetimes" \
	"$src/tests/verbs_lifetimes.c" "$src/examples/pair.c" -libverbs; then
	echo "verbs_lifetimes: 0 passed, 1 failed (does not compile)"
	exit 1
fi
. "$src/tests/verbs_env.sh"
ROCEMU_ADDR=127.0.0.30 ROCEMU_PCAP=$work/lifetimes.pcap \
	timeout 120 "$work/verbs_lifetimes" >"$work/out" 2>&1
rc=$?
grep -v "^device\|^QP .* ready" "$work/out"
if [ $rc = 124 ]; then
	echo "verbs_lifetimes: hung (killed after 120 s)"
fi
if ! grep -q "^verbs_lifetimes: " "$work/out"; then
	echo "verbs_lifetimes: exit status $rc before the end"
	echo "verbs_lifetimes: 0 passed, 1 failed"
	exit 1
fi
# The capture, written while a child was forked and exited, reads whole.
if ! "$build/bin/rocemu" dump "$work/lifetimes.pcap" >"$work/dump" 2>&1; then
	echo "FAIL: the capture does not read back: $(tail -n 1 "$work/dump")"
	echo "verbs_lifetimes: 0 passed, 1 failed (capture)"
	exit 1
fi
grep -q "^verbs_lifetimes: .* passed, 0 failed$" "$work/out" && [ $rc = 0 ]
