#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What tests/verbs/verbs_fork.c's run leaves, checked after it passed
# (tests/verbs/run.sh --then): a parent recording a capture and a trace,
# 8 forked children, each on a device of its own on the parent's address
# (docs/sharing.md: each process its slot there, its QPNs 0xSS0000 and up,
# SS the slot; the parent's are slot 0's, below 0x10000).
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
# RC SENDs between two QPs of one address, to a QPN of slot 0 or above it
slot0='^[0-9]* [0-9.]* \([0-9.]*\):[0-9]* > \1:4791 RC_SEND_ONLY dqpn 0x00'
above='^[0-9]* [0-9.]* \([0-9.]*\):[0-9]* > \1:4791 RC_SEND_ONLY dqpn 0x0[1-9a-f]'

if [ $children_own = 1 ]; then
	# Nobody is refused the shared address.
	grep -q "cannot bind" "$work/err" && bad "a child refused the address" || ok
	# ROCEMU_PCAP inherited: the parent's file is not the children's.
	n=$(grep -c "ROCEMU_PCAP=.*verbs_fork.pcap is the parent's capture" "$work/err")
	[ "$n" = 7 ] && ok || bad "the inherited ROCEMU_PCAP message: $n of 7"
	# ROCEMU_TRACE likewise.
	n=$(grep -c "ROCEMU_TRACE=.*verbs_fork.trace is the parent's trace" "$work/err")
	[ "$n" = 8 ] && ok || bad "the inherited ROCEMU_TRACE message: $n of 8"
fi

# The parent's capture (run.sh has read it back) holds its traffic and
# none of its children's; child 0's, which set ROCEMU_PCAP, holds its own.
[ "$(grep -c "$slot0" "$work/dump")" -ge 29 ] \
	&& ok || bad "the parent's capture lacks its sends"
grep -q "$above" "$work/dump" \
	&& bad "a child's traffic in the parent's capture" || ok
if [ $children_own = 0 ]; then
	:
elif "$build/bin/rocemu" dump "$work/child0.pcap" >"$work/child0.dump" 2>&1; then
	[ "$(grep -c "$above" "$work/child0.dump")" -ge 20 ] \
		&& ok || bad "child 0's capture lacks its sends"
else
	bad "child 0's capture does not read back: $(tail -n 1 "$work/child0.dump")"
fi

echo "fork_check: $pass passed, $fail failed"
[ "$fail" = 0 ]
