#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu ping and perf as two processes on one host, over UDP on 127.0.0.2
# and 127.0.0.3: every transport, SRQ, MTUs, captures, and the errors a
# user can act on.
# usage: tests/net_cli.sh BUILD_DIR
set -u
build=${1:?usage: net_cli.sh BUILD_DIR}
rocemu=$build/bin/rocemu
work=$build/net_cli
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0 port=18600

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

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

# Errors: a one-line message saying what and what to do, non-zero exit.
"$rocemu" ping --addr 10.255.255.1 -n 1 >"$work/e1" 2>&1 && bad "unbindable address accepted" || ok
expect_in e1 "cannot bind 10.255.255.1 UDP port 4791"
"$rocemu" ping --addr 127.0.0.3 --port 18599 --wait 1 -n 1 127.0.0.9 >"$work/e2" 2>&1 \
	&& bad "absent server accepted" || ok
expect_in e2 "no server at 127.0.0.9"
timeout 20 "$rocemu" ping --addr 127.0.0.2 --port 18598 -n 1 >/dev/null 2>&1 &
first=$!
sleep 0.5
"$rocemu" ping --addr 127.0.0.2 --port 18597 -n 1 >"$work/e3" 2>&1 && bad "address taken twice" || ok
expect_in e3 "Address already in use"
kill $first 2>/dev/null
wait $first 2>/dev/null
"$rocemu" ping -t xx >"$work/e4" 2>&1; [ $? = 2 ] && ok || bad "bad -t exit code"
expect_in e4 "-t wants rc, uc or ud"
"$rocemu" ping -t ud -s 5000 >"$work/e5" 2>&1; [ $? = 2 ] && ok || bad "UD larger than MTU"
expect_in e5 "more than the MTU"
"$rocemu" perf bogus >"$work/e6" 2>&1; [ $? = 2 ] && ok || bad "bad perf test"

echo "net_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
