#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs_fork.c on rocemu's libibverbs.so.1: a parent on 127.0.0.60
# recording a capture, 8 forked children, each on its own device at
# 127.0.0.61-68 (no other test uses these addresses).
# usage: tests/verbs_fork.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_fork.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$build/verbs_fork
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

if ! cc -Wall -Wextra -Werror -o "$work/verbs_fork" "$src/tests/verbs_fork.c" \
	"$src/examples/pair.c" -libverbs; then
	echo "verbs_fork: 0 passed, 1 failed (does not compile)"
	exit 1
fi
. "$src/tests/verbs_env.sh"
# ThreadSanitizer does not follow threads started in the child of a
# multi-threaded process (it takes the child's progress thread for the
# parent's, whose stack it reuses): under TSAN=1 the children check only
# what they inherited, and open no device of their own.
children_own=1
if nm -D "$build/lib/libibverbs.so.1" | grep -q __tsan_init; then
	export VERBS_FORK_INHERITED_ONLY=1 children_own=0
	echo "verbs_fork: under ThreadSanitizer the children open no device"
fi

ROCEMU_ADDR=127.0.0.60 ROCEMU_PCAP=$work/parent.pcap \
	ROCEMU_TRACE=$work/parent.trace timeout 120 \
	"$work/verbs_fork" 8 127.0.0 61 "$work" >"$work/out" 2>"$work/err"
rc=$?
grep "^FAIL" "$work/out"
[ $rc = 124 ] && echo "verbs_fork: hung (killed after 120 s)"
grep -q "^verbs_fork: .* passed, 0 failed$" "$work/out" && [ $rc = 0 ] \
	&& ok || bad "verbs_fork: exit status $rc: $(tail -n 1 "$work/out")"

if [ $children_own = 1 ]; then
	# A child that opens the device on its parent's address is told why it
	# cannot, and what to do.
	n=$(grep -c "forked from the process whose device binds it.*ROCEMU_ADDR" "$work/err")
	[ "$n" = 8 ] && ok || { bad "the forked-child bind message: $n of 8"; cat "$work/err"; }
	# ROCEMU_PCAP inherited: the parent's file is not the children's.
	n=$(grep -c "ROCEMU_PCAP=.*parent.pcap is the parent's capture" "$work/err")
	[ "$n" = 7 ] && ok || { bad "the inherited ROCEMU_PCAP message: $n of 7"; cat "$work/err"; }
	# ROCEMU_TRACE likewise.
	n=$(grep -c "ROCEMU_TRACE=.*parent.trace is the parent's trace" "$work/err")
	[ "$n" = 8 ] && ok || { bad "the inherited ROCEMU_TRACE message: $n of 8"; cat "$work/err"; }
	grep -q "gid=127.0.0.6[1-8]" "$work/parent.trace" \
		&& bad "a child's events in the parent's trace" || ok
fi

# The parent's capture reads whole, holds its traffic and none of its
# children's; child 0's, which set ROCEMU_PCAP, holds its own.
if "$build/bin/rocemu" dump "$work/parent.pcap" >"$work/parent.dump" 2>&1; then
	ok
	[ "$(grep -c "127.0.0.60:[0-9]* > 127.0.0.60:4791 RC_SEND_ONLY" "$work/parent.dump")" -ge 29 ] \
		&& ok || bad "the parent's capture lacks its sends"
	grep -q "127.0.0.6[1-8]" "$work/parent.dump" \
		&& bad "a child's traffic in the parent's capture" || ok
else
	bad "the parent's capture does not read back: $(tail -n 1 "$work/parent.dump")"
fi
if [ $children_own = 0 ]; then
	:
elif "$build/bin/rocemu" dump "$work/child0.pcap" >"$work/child0.dump" 2>&1; then
	[ "$(grep -c "127.0.0.61:[0-9]* > 127.0.0.61:4791 RC_SEND_ONLY" "$work/child0.dump")" -ge 20 ] \
		&& ok || bad "child 0's capture lacks its sends"
else
	bad "child 0's capture does not read back: $(tail -n 1 "$work/child0.dump")"
fi

echo "verbs_fork: $pass passed, $fail failed"
[ "$fail" = 0 ]
