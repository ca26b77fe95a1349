#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu ping --explain as two processes on 127.0.0.161 and 127.0.0.162:
# a mistake of the user's (the two sides set different path MTUs, so the
# client's 1000-byte SENDs are one packet above the server's 256) makes
# the server NAK an invalid request and the client's SEND fail; each side
# says why on its stderr, with the rule (IBTA 9.7.5.1: FIRST and MIDDLE
# packets exactly the path MTU, LAST and ONLY at most it). Without
# --explain the same run says no "why" at all; with --stats each side's
# counters end in the reasons' lines.
# usage: tests/net/net_explain.sh BUILD_DIR
set -u
build=${1:?usage: net_explain.sh BUILD_DIR}
rocemu=$build/bin/rocemu
work=$build/net_explain
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0 port=18690

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

. "$(dirname "$0")/../lib/udp_port_free.sh"
udp_4791_free net_explain 127.0.0.161 127.0.0.162

# run NAME [OPTION]...: the server at MTU 256, the client at 1024, both
# with the options; both must fail (exit 1), as the mistake makes them.
run() {
	local name=$1
	shift
	port=$((port + 1))
	timeout 60 "$rocemu" ping -m 256 -s 1000 -n 5 "$@" --addr 127.0.0.161 \
		--port $port >"$work/$name.server.out" \
		2>"$work/$name.server.err" &
	local spid=$!
	timeout 60 "$rocemu" ping -m 1024 -s 1000 -n 5 "$@" \
		--addr 127.0.0.162 --port $port --wait 20 127.0.0.161 \
		>"$work/$name.client.out" 2>"$work/$name.client.err"
	local crc=$?
	wait $spid
	local src=$?
	if [ $crc = 1 ]; then ok; else bad "$name: client exit $crc, wanted 1"; fi
	# the server waits for a SEND that never comes whole: it fails too,
	# or times out waiting
	if [ $src != 0 ]; then ok; else bad "$name: server exit 0"; fi
}

# has FILE LINE: FILE holds the whole line LINE, exactly once
has() {
	if [ "$(grep -cxF -- "$2" "$work/$1")" = 1 ]; then ok; else
		bad "$1: not once: $2"
		cat "$work/$1"
	fi
}

run explain --explain --stats
# The client's QP and the server's: from the counters the server's NAK
# reason names them by; the PSN of the first SEND is the client's first.
reason=$(grep "^rocemu: why: NAK invalid request" "$work/explain.server.err")
case $reason in
"rocemu: why: NAK invalid request (sent to 127.0.0.162 qp 0x"*" psn 0x"*"): payload length breaks the path MTU rule (FIRST/MIDDLE exactly it, LAST/ONLY at most it) [IBTA 9.7.5.1]")
	ok ;;
*) bad "server's reason: '$reason'"; cat "$work/explain.server.err" ;;
esac
psn=$(echo "$reason" | sed -n 's/.* psn \(0x[0-9a-f]*\)).*/\1/p')
if grep -qx "rocemu: why: REM_INV_REQ_ERR: qp 0x[0-9a-f]* SEND wr_id [0-9]*: the responder NAKed psn $psn with invalid request \[IBTA 9.7.5.1\]" \
	"$work/explain.client.err"; then ok; else
	bad "client: no REM_INV_REQ_ERR reason for psn $psn"
	cat "$work/explain.client.err"
fi
has explain.server.out "why nak_inv_req 1 last: ${reason#rocemu: why: }"
has explain.client.out "why cqe_error 1 last: $(sed -n 's/^rocemu: why: \(REM_INV_REQ_ERR.*\)/\1/p' "$work/explain.client.err")"

run quiet
if grep -q "why" "$work/quiet.server.err" "$work/quiet.client.err"; then
	bad "a why without --explain"
else ok; fi

echo "net_explain: $pass passed, $fail failed"
[ $fail = 0 ]
