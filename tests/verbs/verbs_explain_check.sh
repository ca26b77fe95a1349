#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The --then check of verbs_explain.c: each mistake the program made (the
# values it used are its "used NAME VALUE" lines) has its reason, written
# here from those values, once on stderr as "rocemu: why: TEXT [RULE]",
# and as a why event in the trace (the one about the failed WRITE with
# the WQE's opcode and wr_id), and in the counters file.
# usage: tests/verbs/verbs_explain_check.sh BUILD_DIR WORK_DIR
set -u
work=$2
used() { sed -n "s/^used $1 //p" "$work/out"; }
grh=$(used grh_qpn) a=$(used a_qpn) b=$(used b_qpn) rkey=$(used bad_rkey)
pd=$(used b_pd)
addr=127.0.0.160
fails=0
want() { # want TEXT RULE: once on stderr, and in the trace
	if [ "$(grep -cxF "rocemu: why: $1 [$2]" "$work/err")" != 1 ]; then
		echo "FAIL: not once on stderr: rocemu: why: $1 [$2]"
		fails=$((fails + 1))
	fi
	# the trace writes a rule's spaces as _ (one word in its line)
	if ! grep -F " rule=$(echo "$2" | tr ' ' _) text=$1" \
		"$work/verbs_explain.trace" |
		grep -q "^why "; then
		echo "FAIL: no why event in the trace: $1"
		fails=$((fails + 1))
	fi
}
want "modify_qp qp $grh INIT->RTR: RoCE needs ah_attr.is_global=1 and a GID index (every RoCE packet carries a GRH or IP header)" \
	"IBTA A16, A17 (RoCE)"
want "post_send: qp $grh is in INIT; sending needs RTS" "IBTA 10.3.1"
want "NAK remote access (sent to $addr qp $a psn 0x0): RC_RDMA_WRITE_ONLY rkey $rkey matches no MR or memory window of PD $pd (qp $b's)" \
	"IBTA 9.7.5.1, 10.6"
want "REM_ACCESS_ERR: qp $a RDMA_WRITE wr_id 9: the responder NAKed psn 0x0 with remote access error" \
	"IBTA 9.7.5.1, 11.6.3.1"
grep -q "^why .* qp=0x0*${a#0x} .* op=RDMA_WRITE wr_id=9 .* text=REM_ACCESS_ERR" \
	"$work/verbs_explain.trace" ||
	{ echo "FAIL: the WRITE's why event lacks its op or wr_id"; fails=$((fails + 1)); }
# ROCEMU_STATS=FILE: the count of each kind and its last reason
grep -qxF "why nak_rem_access 1 last: NAK remote access (sent to $addr qp $a psn 0x0): RC_RDMA_WRITE_ONLY rkey $rkey matches no MR or memory window of PD $pd (qp $b's) [IBTA 9.7.5.1, 10.6]" \
	"$work/verbs_explain.stats" ||
	{ echo "FAIL: no why line of the NAK in the counters file"; fails=$((fails + 1)); }
grep -qx "why verb 2 last: .*" "$work/verbs_explain.stats" ||
	{ echo "FAIL: the counters file does not count 2 refused verbs"; fails=$((fails + 1)); }
[ $fails = 0 ]
