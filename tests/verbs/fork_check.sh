#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What tests/verbs/verbs_fork.c's run leaves, checked after it passed
# (tests/verbs/run.sh --then): a parent on 127.0.0.60 recording a capture
# and a trace, 8 forked children, each on its own device at 127.0.0.61-68.
# Under ThreadSanitizer the children open no device (run.sh's --tsan-env
# tells the program so): only the parent's capture is checked then.
# usage: tests/verbs/fork_check.sh BUILD_DIR WORK_DIR
set -u
build=${1:?usage: fork_check.sh BUILD_DIR WORK_DIR}
work=${2:?usage: fork_check.sh BUILD_DIR WORK_DIR}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
children_own=1
[ "${VERBS_SANITIZER:-}" = tsan ] && children_own=0

if [ $children_own = 1 ]; then
	# A child that opens the device on its parent's address is told why it
	# cannot, and what to do.
	n=$(grep -c "forked from the process whose device binds it.*ROCEMU_ADDR" "$work/err")
	[ "$n" = 8 ] && ok || bad "the forked-child bind message: $n of 8"
	# ROCEMU_PCAP inherited: the parent's file is not the children's.
	n=$(grep -c "ROCEMU_PCAP=.*verbs_fork.pcap is the parent's capture" "$work/err")
	[ "$n" = 7 ] && ok || bad "the inherited ROCEMU_PCAP message: $n of 7"
	# ROCEMU_TRACE likewise.
	n=$(grep -c "ROCEMU_TRACE=.*verbs_fork.trace is the parent's trace" "$work/err")
	[ "$n" = 8 ] && ok || bad "the inherited ROCEMU_TRACE message: $n of 8"
	grep -q "gid=127.0.0.6[1-8]" "$work/verbs_fork.trace" \
		&& bad "a child's events in the parent's trace" || ok
fi

# The parent's capture (run.sh has read it back) holds its traffic and
# none of its children's; child 0's, which set ROCEMU_PCAP, holds its own.
[ "$(grep -c "127.0.0.60:[0-9]* > 127.0.0.60:4791 RC_SEND_ONLY" "$work/dump")" -ge 29 ] \
	&& ok || bad "the parent's capture lacks its sends"
grep -q "127.0.0.6[1-8]" "$work/dump" \
	&& bad "a child's traffic in the parent's capture" || ok
if [ $children_own = 0 ]; then
	:
elif "$build/bin/rocemu" dump "$work/child0.pcap" >"$work/child0.dump" 2>&1; then
	[ "$(grep -c "127.0.0.61:[0-9]* > 127.0.0.61:4791 RC_SEND_ONLY" "$work/child0.dump")" -ge 20 ] \
		&& ok || bad "child 0's capture lacks its sends"
else
	bad "child 0's capture does not read back: $(tail -n 1 "$work/child0.dump")"
fi

echo "fork_check: $pass passed, $fail failed"
[ "$fail" = 0 ]
