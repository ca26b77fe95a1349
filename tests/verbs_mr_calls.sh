#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs_mr_calls.c on rocemu's libibverbs.so.1: ODP, ibv_advise_mr,
# ibv_rereg_mr and the fork calls; its device on 127.0.0.31 (no other
# test uses that address).
# usage: tests/verbs_mr_calls.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_mr_calls.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$build/verbs_mr_calls
rm -rf "$work" && mkdir -p "$work"

if ! cc -Wall -Wextra -Werror -o "$work/verbs_mr_calls" \
	"$src/tests/verbs_mr_calls.c" -libverbs; then
	echo "verbs_mr_calls: 1 failed (does not compile)"
	exit 1
fi
. "$src/tests/verbs_env.sh"
ROCEMU_ADDR=127.0.0.31 timeout 60 "$work/verbs_mr_calls"
