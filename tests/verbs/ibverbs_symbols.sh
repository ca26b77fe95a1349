#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The libibverbs.so.1 drop-in against rdma-core's newest version script:
# every symbol of tests/verbs/ibverbs_abi/libibverbs.map.symbols (its
# header names the rdma-core commit) is defined by the drop-in with the
# same version node, default or compat, because a program linked against
# a newer rdma-core (BIND_NOW, or on its first call) stops when one is
# missing.
# usage: tests/verbs/ibverbs_symbols.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: ibverbs_symbols.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
want=$top/tests/verbs/ibverbs_abi/libibverbs.map.symbols
ours=$build/lib/libibverbs.so.1
work=$build/ibverbs_symbols
rm -rf "$work" && mkdir -p "$work"

[ -f "$ours" ] || { echo "FAIL: $ours is not built"; echo "ibverbs_symbols: 0 passed, 1 failed"; exit 1; }
grep -v '^#' "$want" | sort -u >"$work/want"
# "VERSION NAME" of every symbol the drop-in defines in an IBVERBS_1 node;
# objdump puts a compat (non-default) version in parentheses.
objdump -T "$ours" | awk 'NF >= 2 && $0 !~ /\*UND\*/ {
	v = $(NF-1); gsub(/[()]/, "", v)
	if (v ~ /^IBVERBS_1\./ && $NF !~ /^IBVERBS_/) print v, $NF }' |
	sort -u >"$work/ours"
missing=$(comm -23 "$work/want" "$work/ours")
if [ -n "$missing" ]; then
	echo "FAIL: the drop-in lacks $(echo "$missing" | wc -l) of rdma-core's symbols (version name):"
	echo "$missing" | sed 's/^/  /'
	echo "ibverbs_symbols: 0 passed, 1 failed"
	exit 1
fi
echo "ibverbs_symbols: $(wc -l <"$work/want") symbols and version nodes, all defined"
echo "ibverbs_symbols: 1 passed, 0 failed"
