#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The --then check of verbs_flush.c: rocemu check judges its capture. The
# three zero-length READ RESPONSE ONLY packets answer the ATOMIC WRITE and
# the two FLUSHes at their PSNs (IBTA 1.5), so they break no rule; the one
# finding is the reason for the NAK remote access error of the FLUSH of
# memory without the right.
# usage: tests/verbs/verbs_flush_check.sh BUILD_DIR WORK_DIR
set -u
build=$1 work=$2
out=$("$build/bin/rocemu" check "$work/verbs_flush.pcap" 2>&1)
fails=0
if [ "$(grep -c ' RC_RDMA_READ_RESPONSE_ONLY .* aeth ACK .* payload 0 ' "$work/dump")" != 3 ] ||
	printf '%s\n' "$out" | grep -q 'READ-RESPONSE-FOR-READ'; then
	echo "FAIL: not three zero-length READ responses, or one judged"
	fails=$((fails + 1))
fi
if ! printf '%s\n' "$out" | grep -q ': 0 rule violations,'; then
	echo "FAIL: rocemu check finds rule violations:"
	printf '%s\n' "$out" | grep 'rule ' | head -5
	fails=$((fails + 1))
fi
if ! printf '%s\n' "$out" | grep -q 'reason 9.7.5.2.4: NAK remote access error answers FLUSH/ATOMIC WRITE'; then
	echo "FAIL: no reason for the FLUSH's NAK"
	fails=$((fails + 1))
fi
exit $((fails > 0))
