#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The two-process steps of docs/learn.md, as the doc gives them (the doc's
# 127.0.0.1 and 127.0.0.2 are 127.0.0.190 and .191 here): the client/server
# program by hand and with rdma_cm, each run with a capture and a trace per
# process, then the four "break it" cases, each with the ladder rows its
# mistake must give by the IBTA rules and the program's own settings
# (rnr_retry 3, retry_cnt 7). Then the failures at the edge: the system's
# libibverbs loaded instead of rocemu's, and an address the device cannot
# bind, said once however often the program asks for the device.
# usage: tests/verbs/learn_pair.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: learn_pair.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/learn_pair
rm -rf "$work" && mkdir -p "$work" && cp "$top"/examples/*.[ch] "$work"/
cd "$work" || exit 1
srv=127.0.0.190 cli=127.0.0.191
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
rocemu() { env -u LD_PRELOAD -u LD_LIBRARY_PATH "$build/bin/rocemu" "$@"; }
# has FILE TEXT: FILE holds the fixed string TEXT
has() { grep -qF -- "$2" "$1" && ok || { bad "$1: no '$2'"; sed 's/^/  /' "$1" | tail -n 20; }; }
# rows FILE N TEXT: exactly N lines of FILE hold TEXT
rows() {
	local n
	n=$(grep -cF -- "$3" "$1")
	[ "$n" = "$2" ] && ok || { bad "$1: $n rows of '$3', not $2"; sed 's/^/  /' "$1"; }
}

. "$top/tests/lib/udp_port_free.sh"
. "$top/tests/lib/wait_listen.sh"
udp_4791_free learn_pair $srv $cli

# The programs, built as the doc says: plain cc, the system's headers and
# libraries.
cc -o rc_server_client rc_server_client.c pair.c -libverbs 2>cc.out &&
	cc -o cm_server_client cm_server_client.c pair.c -lrdmacm -libverbs \
		2>>cc.out && ok || { bad "the examples do not build"; cat cc.out; exit 1; }

# A mistake the program does not know is refused, not run as no mistake.
./rc_server_client client $srv --break rkeys >usage.out 2>&1
[ $? = 2 ] && ok || bad "an unknown --break ran"
has usage.out "usage: rc_server_client"

# The system's libibverbs (no LD_LIBRARY_PATH): the message says which
# library was loaded and what to set.
env -u LD_LIBRARY_PATH -u LD_PRELOAD ./rc_server_client client $srv \
	>system.out 2>&1 && bad "a client without rocemu's library passed" || ok
has system.out "the system's"
has system.out "LD_LIBRARY_PATH="

. "$top/tests/lib/verbs_env.sh"

# An address of no interface here: the device names it, the cause and the
# fix, once, though this program asks for the device three times.
cat >twice.c <<'EOF'
#include <infiniband/verbs.h>
#include <stdio.h>
int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	int got = 0;

	if (!l || !l[0])
		return 1;
	ibv_get_device_guid(l[0]);
	for (int i = 0; i < 2; i++) {
		struct ibv_context *c = ibv_open_device(l[0]);
		got += c != NULL;
		if (c)
			ibv_close_device(c);
	}
	printf("opened %d\n", got);
	return 0;
}
EOF
cc -o twice twice.c -libverbs || bad "twice.c does not build"
ROCEMU_ADDR=10.255.255.1 ./twice >twice.out 2>&1
has twice.out "opened 0"
rows twice.out 1 "cannot bind 10.255.255.1"
has twice.out "not an address of this host"
has twice.out "ROCEMU_ADDR"
ROCEMU_ADDR=no.such.address ./twice >twice_bad.out 2>&1
rows twice_bad.out 1 "ROCEMU_ADDR=no.such.address is not an IP address"
# and the example's own line under it: rocemu's library, so not the path
ROCEMU_ADDR=10.255.255.1 ./rc_server_client client $srv >noaddr.out 2>&1
has noaddr.out "rocemu's libibverbs"

# run NAME "SERVER ARGS" "CLIENT ARGS": the doc's two commands in folder
# NAME, the server in the background, each process with its capture and
# trace (and ROCEMU_EXPLAIN=1 when $EXPLAIN is set); NAME/server.out,
# client.out and ladder.out (the client's capture with both traces: one
# picture of both ends); sets sst and cst, their exit statuses.
run() {
	local name=$1 spid
	mkdir -p "$name" && cd "$name" || exit 1
	# shellcheck disable=SC2086
	env ${EXPLAIN:+ROCEMU_EXPLAIN=1} ROCEMU_ADDR=$srv ROCEMU_PCAP=server.pcap \
		ROCEMU_TRACE=server.trace \
		timeout 60 ../rc_server_client server $srv $2 >server.out 2>&1 &
	spid=$!
	wait_listen 18515 || bad "$name: the server does not listen"
	# shellcheck disable=SC2086
	env ${EXPLAIN:+ROCEMU_EXPLAIN=1} ROCEMU_ADDR=$cli ROCEMU_PCAP=client.pcap \
		ROCEMU_TRACE=client.trace \
		timeout 60 ../rc_server_client client $srv $3 >client.out 2>&1
	cst=$?
	wait $spid
	sst=$?
	rocemu ladder client.pcap --trace client.trace --trace server.trace \
		>ladder.out 2>&1
	cd ..
}

# doc NAME PREFIX FILE: docs/learn.md's block (NAME) shows, for its step
# PREFIX, what FILE holds
doc() {
	python3 "$top/tests/verbs/learn_doc.py" "$top/docs/learn.md" "$@" &&
		ok || bad "docs/learn.md ($1) does not show what the run printed"
}
S="LD_LIBRARY_PATH=../build/lib ROCEMU_ADDR=127.0.0.101"
C="LD_LIBRARY_PATH=../build/lib ROCEMU_ADDR=127.0.0.102"

# It works: the programs check the data themselves.
run good "" ""
[ $sst = 0 ] && [ $cst = 0 ] && ok || bad "good: server $sst, client $cst"
has good/server.out 'received "hello from the client, by SEND"'
has good/server.out 'written "and this, by RDMA WRITE"'
doc server "$S" good/server.out
doc good "$C" good/client.out
doc good "rocemu ladder" good/ladder.out
# one SEND and one WRITE, each acknowledged, from the client's first PSN
rows good/ladder.out 1 "RC_SEND_ONLY psn 0x000100 len 31 A"
rows good/ladder.out 1 "RC_ACK psn 0x000100 ACK msn 1"
rows good/ladder.out 1 "RC_RDMA_WRITE_ONLY psn 0x000101 len 24 A"
rows good/ladder.out 1 "RC_ACK psn 0x000101 ACK msn 2"
has good/ladder.out "4 packets (2 and 2)"

# Wrong rkey: the responder answers the WRITE with a NAK, remote access
# error (IBTA 9.7.5.1, 10.6: an R_Key must name a region of the QP's PD; 9.7.5.2.4) and
# the requester completes it with that status; the SEND before it is fine.
EXPLAIN=1
run rkey "" "--break rkey"
[ $cst != 0 ] && ok || bad "rkey: the client passed"
has rkey/client.out "RDMA WRITE wr_id 2 completed with remote access error"
rows rkey/ladder.out 1 "RC_ACK psn 0x000101 NAK REM_ACCESS_ERR"
has rkey/ladder.out "CQE CQ[1] RDMA_WRITE REM_ACCESS_ERR wr_id 2"
# explain mode: the responder names the key the WRITE carried (the
# server's rkey with bit 23 flipped) and why
has rkey/server.out "rocemu: why: NAK remote access (sent to $cli qp 0x11 psn 0x101): RC_RDMA_WRITE_ONLY rkey 0x800"
# the server's only PD, its first: number 1
has rkey/server.out "matches no MR or memory window of PD 1 (qp 0x11's) [IBTA 9.7.5.1, 10.6]"
has rkey/client.out "rocemu: why: REM_ACCESS_ERR: qp 0x11 RDMA_WRITE wr_id 2"
doc rkey "$C" rkey/client.out
doc rkey "rocemu ladder" rkey/ladder.out

# No receive: RNR NAK (9.7.5.2.8), the SEND again after the RNR timer, 1 +
# rnr_retry (3) times in all, then RNR_RETRY_EXC_ERR (9.7.6.1.4).
run recv "--break recv" ""
[ $cst != 0 ] && ok || bad "recv: the client passed"
has recv/client.out "RNR retry counter exceeded"
rows recv/ladder.out 4 "RC_SEND_ONLY psn 0x000100"
rows recv/ladder.out 4 "RNR_NAK"
has recv/ladder.out "CQE CQ[0] SEND RNR_RETRY_EXC_ERR wr_id 1"
has recv/server.out "rocemu: why: RNR NAK (sent to $cli qp 0x11 psn 0x100): qp 0x11 has no receive WQE posted (RQ empty)"
has recv/client.out "after 3 RNR retries (rnr_retry 3)"
doc recv "rocemu ladder" recv/ladder.out

# Wrong PSN told: the responder expects 0x000105; 0x000100 is behind it, a
# duplicate, acknowledged again but not delivered (9.7.5.1.1), so the requester
# never sees its SEND acknowledged: 1 + retry_cnt (7) sends, then
# RETRY_EXC_ERR.
run psn "" "--break psn"
[ $cst != 0 ] && ok || bad "psn: the client passed"
has psn/server.out "first PSN 0x000105"
has psn/client.out "transport retry counter exceeded"
rows psn/ladder.out 8 "RC_SEND_ONLY psn 0x000100"
has psn/ladder.out "CQE CQ[0] SEND RETRY_EXC_ERR wr_id 1"
# the server told 0x105, the client sending 0x100: a repeat to the one,
# an ACK for nothing (0x104, the one before 0x105) to the other
has psn/server.out "rocemu: why: duplicate: RC_SEND_ONLY psn 0x100 is behind the expected psn 0x105"
has psn/client.out "rocemu: why: drop: RC_ACK psn 0x104 answers nothing outstanding"
has psn/client.out "7 retries of psn 0x100 unanswered (retry_cnt 7)"
doc psn "rocemu ladder" psn/ladder.out

# Client left in RTR: it may receive but not send; ibv_post_send fails at
# once (10.3.1: a QP sends only in RTS) and nothing goes out.
run rtr "" "--break rtr"
[ $cst != 0 ] && ok || bad "rtr: the client passed"
has rtr/client.out "left in RTR"
has rtr/client.out "ibv_post_send SEND: Invalid argument"
has rtr/client.out "rocemu: why: post_send: qp 0x11 is in RTR; sending needs RTS [IBTA 10.3.1]"
has rtr/ladder.out "no RoCEv2 packets"
doc rtr "$C" rtr/client.out
doc rtr "rocemu ladder" rtr/ladder.out

# The same with rdma_cm.
mkdir -p cm && cd cm || exit 1
ROCEMU_ADDR=$srv timeout 60 ../cm_server_client server $srv >server.out 2>&1 &
spid=$!
for _ in $(seq 300); do grep -q listening server.out && break; sleep 0.1; done
ROCEMU_ADDR=$cli ROCEMU_PCAP=cm.pcap ROCEMU_TRACE=cm.trace \
	timeout 60 ../cm_server_client client $srv >client.out 2>&1
cst=$?
wait $spid
sst=$?
rocemu ladder cm.pcap --trace cm.trace >ladder.out 2>&1
cd ..
[ $sst = 0 ] && [ $cst = 0 ] && ok || { bad "cm: server $sst, client $cst"; cat cm/server.out cm/client.out; }
has cm/server.out 'received "hello from the client, by SEND"'
has cm/server.out 'written "and this, by RDMA WRITE"'
for want in "CM REQ" "CM REP" "CM RTU" "RC_RDMA_WRITE_ONLY" "RC_SEND_ONLY" \
	    "CM DREQ" "CM DREP"; do
	rows cm/ladder.out 1 "$want"
done
doc cm "$C" cm/client.out
doc "cm ladder" "rocemu ladder" cm/ladder.out

echo "learn_pair: $pass passed, $fail failed"
[ $fail = 0 ]
