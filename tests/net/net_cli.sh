#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu ping and perf as two processes on one host, over UDP on 127.0.0.2
# and 127.0.0.3: every transport, SRQ, MTUs, captures, and the errors a
# user can act on.
# usage: tests/net/net_cli.sh BUILD_DIR
set -u
build=${1:?usage: net_cli.sh BUILD_DIR}
rocemu=$build/bin/rocemu
work=$build/net_cli
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0 port=18600

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

. "$(dirname "$0")/../lib/udp_port_free.sh"
udp_4791_free net_cli 127.0.0.2 127.0.0.3

# pair NAME SERVER_ARGS -- CLIENT_ARGS: both must exit 0.
pair() {
	local name=$1
	shift
	local sargs=() cargs=()
	while [ "$1" != "--" ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	port=$((port + 1))
	timeout 60 "$rocemu" "${sargs[@]}" --addr 127.0.0.2 --port $port \
		>"$work/$name.server" 2>&1 &
	local spid=$!
	timeout 60 "$rocemu" "${cargs[@]}" --addr 127.0.0.3 --port $port \
		--wait 20 127.0.0.2 >"$work/$name.client" 2>&1
	local crc=$?
	wait $spid
	local src=$?
	if [ $crc = 0 ] && [ $src = 0 ]; then ok; else
		bad "$name: client exit $crc, server exit $src"
		tail -n 3 "$work/$name.client" "$work/$name.server"
	fi
}

expect_in() {
	if grep -q -- "$2" "$work/$1"; then ok; else bad "$1: no '$2'"; fi
}

for t in rc uc ud; do
	for s in 1 1000; do
		pair "ping-$t-$s" ping -t $t -n 200 -s $s -- ping -t $t -n 200 -s $s
		expect_in "ping-$t-$s.client" "200 iters in"
	done
done
pair ping-rc-64k-m4096 ping -m 4096 -s 65536 -n 50 -- ping -m 4096 -s 65536 -n 50
pair ping-ud-mtu ping -t ud -m 4096 -s 4096 -n 50 -- ping -t ud -m 4096 -s 4096 -n 50
pair ping-srq ping --srq -n 200 -s 3000 -- ping --srq -n 200 -s 3000
pair ping-uc-srq ping -t uc --srq -n 200 -- ping -t uc --srq -n 200
# Busy polling on one side, sleeping on the other; then both spinning.
pair ping-poll ping --poll -n 2000 -s 64 -- ping -n 2000 -s 64
expect_in ping-poll.client "2000 iters in"
pair perf-poll perf write --poll -n 2000 -s 4096 -- perf write --poll -n 2000 -s 4096
expect_in perf-poll.client "BW average"
pair ping-pcap ping -n 20 -s 3000 -- ping -n 20 -s 3000 --pcap "$work/ping.pcap"
"$rocemu" dump "$work/ping.pcap" >"$work/dump.out" && ok || bad "dump of ping.pcap"
expect_in dump.out "ICRC bad 0, malformed 0"
for test in write read send atomic; do
	pair "perf-$test" perf $test -n 500 -s 4096 -- perf $test -n 500 -s 4096
	expect_in "perf-$test.client" "BW average"
done
pair perf-lat perf write --lat -n 200 -s 64 -- perf write --lat -n 200 -s 64
expect_in perf-lat.client "t_typical"

# --stats: every counter of the device after the result. Datagrams thrown
# at the server's port before the client connects (from 127.0.0.9) wait in
# its socket and are counted when the run starts, each by its reason: 50
# too short for a BTH, 20 with a BTH and an ICRC that cannot be right. The
# client's device saw none of them.
. "$(dirname "$0")/../lib/counters.sh"
throw_junk() { # ADDR SHORT BAD_ICRC
	python3 - "$@" <<'PY'
import socket, sys
to = (sys.argv[1], 4791)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
# A fixed source port: the ICRC covers it, so whether some hidden IPv4 ID
# could make ICRC 0 right is settled once, not drawn anew each run.
s.bind(("127.0.0.9", 50002))
# RC SEND_ONLY, P_Key 0xffff, QP 0x11, PSN 0; 16 payload bytes; ICRC 0
bth = bytes([0x04, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 0])
for _ in range(int(sys.argv[2])):
    s.sendto(bytes(8), to)
for _ in range(int(sys.argv[3])):
    s.sendto(bth + bytes(16) + bytes(4), to)
PY
}
port=$((port + 1))
timeout 60 "$rocemu" ping --stats -n 200 -s 1000 --addr 127.0.0.2 --port $port \
	>"$work/stats.server" 2>"$work/stats.server.err" &
spid=$!
for i in $(seq 100); do
	grep -q "waiting on" "$work/stats.server.err" && break
	sleep 0.1
done
throw_junk 127.0.0.2 50 20
timeout 60 "$rocemu" ping --stats -n 200 -s 1000 --addr 127.0.0.3 --port $port \
	--wait 20 127.0.0.2 >"$work/stats.client" 2>&1 && ok || bad "ping --stats client"
wait $spid && ok || { bad "ping --stats server"; cat "$work/stats.server.err"; }
expect_counter stats.server rx_drop_malformed -eq 50
expect_counter stats.server rx_drop_icrc -eq 20
# 200 SENDs of one packet each way, each with its own ACK (ping waits for
# it before the next turn): at least 400 packets each way.
for f in stats.server stats.client; do
	expect_counter $f rx_packets -ge 400
	expect_counter $f tx_packets -ge 400
	expect_counter $f rx_drop_unknown_qp -eq 0
	expect_counter $f rx_drop_pkey -eq 0
	expect_counter $f rx_drop_qkey -eq 0
	expect_counter $f rx_drop_no_receive_wqe -eq 0
	expect_counter $f nak_rcvd_error -eq 0
done
expect_counter stats.client rx_drop_malformed -eq 0
expect_counter stats.client rx_drop_icrc -eq 0
# After the result, and once.
awk '/iters in/ { r = NR } /^counter / && !c { c = NR }
     END { exit !(r && c > r) }' "$work/stats.client" && ok \
	|| bad "stats.client: the counters do not follow the result"
[ "$(grep -c '^counter rx_drop_icrc ' "$work/stats.client")" = 1 ] && ok \
	|| bad "stats.client: rx_drop_icrc not printed exactly once"
# perf: 200 WRITEs of 4 packets at MTU 1024, then the final SEND.
pair perf-stats perf write --stats -n 200 -s 4096 -- perf write --stats -n 200 -s 4096
expect_counter perf-stats.client tx_packets -ge 801
expect_counter perf-stats.server rx_packets -ge 801
expect_counter perf-stats.server acks_sent -ge 1
expect_counter perf-stats.client rx_drop_icrc -eq 0
# The wire's own counters come last, after the device's.
expect_counter perf-stats.client wire_dropped -eq 0
expect_counter perf-stats.server wire_gro_batches -ge 0
# Without --stats, no counters.
grep -q "^counter " "$work/ping-rc-1.client" "$work/perf-write.server" \
	&& bad "counters printed without --stats" || ok
for cmd in ping "perf write"; do
	"$rocemu" $cmd --help | grep -q -- "--stats" && ok || bad "$cmd --help: no --stats"
done

# Errors: a one-line message saying what and what to do, non-zero exit.
"$rocemu" ping --addr 10.255.255.1 -n 1 >"$work/e1" 2>&1 && bad "unbindable address accepted" || ok
expect_in e1 "cannot bind 10.255.255.1 UDP port 4791"
"$rocemu" ping --addr 127.0.0.3 --port 18599 --wait 1 -n 1 127.0.0.9 >"$work/e2" 2>&1 \
	&& bad "absent server accepted" || ok
expect_in e2 "no server at 127.0.0.9"
# Processes of one user share an address (docs/sharing.md); a socket
# that does not share it (another user's, rxe's) keeps rocemu out.
python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.2", 4791)); print("bound", flush=True); time.sleep(30)' \
	>"$work/holder2" 2>&1 &
first=$!
for i in $(seq 100); do grep -q bound "$work/holder2" && break; sleep 0.1; done
"$rocemu" ping --addr 127.0.0.2 --port 18597 -n 1 >"$work/e3" 2>&1 && bad "address taken twice" || ok
expect_in e3 "Address already in use"
expect_in e3 "a program that binds it without SO_REUSEPORT"
kill $first 2>/dev/null
wait $first 2>/dev/null
# The check the tests make first: a port already taken is named, with the
# process holding it and what to do (127.0.0.21 is this check's own).
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.21", 4791)); print("bound", flush=True); time.sleep(30)' \
	>"$work/holder" 2>&1 &
holder=$!
for i in $(seq 100); do grep -q bound "$work/holder" && break; sleep 0.1; done
(udp_4791_free demo 127.0.0.21) >"$work/e7" 2>&1 && bad "a taken port passed" || ok
expect_in e7 "demo: cannot bind 127.0.0.21 UDP port 4791: Address already in use"
expect_in e7 "bound: .*127.0.0.21:4791 .*pid=$holder"
expect_in e7 "stop it or let it finish"
kill $holder 2>/dev/null
wait $holder 2>/dev/null
(udp_4791_free demo 127.0.0.21) >"$work/e8" 2>&1 && ok || bad "a free port refused: $(cat "$work/e8")"
"$rocemu" ping -t xx >"$work/e4" 2>&1; [ $? = 2 ] && ok || bad "bad -t exit code"
expect_in e4 "-t wants rc, uc or ud"
"$rocemu" ping -t ud -s 5000 >"$work/e5" 2>&1; [ $? = 2 ] && ok || bad "UD larger than MTU"
expect_in e5 "more than the MTU"
"$rocemu" perf bogus >"$work/e6" 2>&1; [ $? = 2 ] && ok || bad "bad perf test"

echo "net_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
