#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs_mw.c on rocemu's libibverbs.so.1: one process, its device on
# 127.0.0.32 (no other test uses that address).
# usage: tests/verbs_mw.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_mw.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$build/verbs_mw
rm -rf "$work" && mkdir -p "$work"

if ! cc -Wall -Wextra -Werror -o "$work/verbs_mw" "$src/tests/verbs_mw.c" \
	"$src/examples/pair.c" -libverbs; then
	echo "verbs_mw: 0 passed, 1 failed (does not compile)"
	exit 1
fi
. "$src/tests/verbs_env.sh"
ROCEMU_ADDR=127.0.0.32 timeout 60 "$work/verbs_mw" >"$work/out" 2>&1
rc=$?
grep -v "^device\|^QP .* ready" "$work/out"
[ $rc = 124 ] && echo "verbs_mw: hung (killed after 60 s)"
grep -q "^verbs_mw: .* passed, 0 failed$" "$work/out" && [ $rc = 0 ]
