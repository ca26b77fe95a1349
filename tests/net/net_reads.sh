#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Large RDMA READs between two processes over UDP on 127.0.0.50 and
# 127.0.0.51, the requester sleeping on its completion channel: 128 MiB
# READs with rocemu perf, and with Debian's ib_read_bw -e on the
# libibverbs.so.1 drop-in. Every READ must complete, however many of its
# responses the requester's socket had no room for.
# usage: tests/net/net_reads.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: net_reads.sh BUILD_DIR}" && pwd)
. "$(dirname "$0")/../lib/wait_listen.sh"
rocemu=$build/bin/rocemu
work=$build/net_reads
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0 port=18950
size=134217728

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# Datagrams the kernel dropped for want of receive buffer (all sockets).
rcvbuf_errors() { awk '/^Udp:/ { v = $6 } END { print v }' /proc/net/snmp; }

# perf_read NAME: one server and one client, 2 READs of 128 MiB each.
perf_read() {
	local name=$1
	port=$((port + 1))
	timeout 60 "$rocemu" perf read -s $size -n 2 -d 1 --addr 127.0.0.50 \
		--port $port >"$work/$name.server" 2>&1 &
	local spid=$!
	timeout 60 "$rocemu" perf read -s $size -n 2 -d 1 --addr 127.0.0.51 \
		--port $port --wait 20 127.0.0.50 >"$work/$name.client" 2>&1
	local crc=$?
	[ $crc = 0 ] || kill $spid 2>/dev/null # no client to wait for
	wait $spid
	local src=$?
	if [ $crc = 0 ] && [ $src = 0 ] &&
		grep -q "BW average" "$work/$name.client"; then
		ok
	else
		bad "$name: client exit $crc, server exit $src"
		tail -n 3 "$work/$name.client" "$work/$name.server"
	fi
}

# The same through perftest: the drop-in is the whole set-up.
perftest_read() {
	local name=$1
	port=$((port + 1))
	command -v ib_read_bw >/dev/null || {
		bad "ib_read_bw missing (Debian package perftest)"
		return
	}
	(
		. "$(dirname "$0")/../lib/verbs_env.sh"
		# 5 iterations is ib_read_bw's least
		ROCEMU_ADDR=127.0.0.50 timeout 60 ib_read_bw -x 1 -s $size \
			-n 5 -e -p $port >"$work/$name.server" 2>&1 &
		spid=$!
		wait_listen $port
		ROCEMU_ADDR=127.0.0.51 timeout 60 ib_read_bw -x 1 -s $size \
			-n 5 -e -p $port 127.0.0.1 >"$work/$name.client" 2>&1
		crc=$?
		[ $crc = 0 ] || kill $spid 2>/dev/null
		wait $spid
		exit $((crc | $?))
	)
	local rc=$?
	if [ $rc = 0 ] && grep -q "^ $size" "$work/$name.client"; then
		ok
	else
		bad "$name: exit $rc"
		tail -n 3 "$work/$name.client" "$work/$name.server"
	fi
}

# A sanitizer build runs some 4 times slower: one pair of processes less.
pairs=2
nm -D "$build/lib/libibverbs.so.1" | grep -q "__[at]san_init" && pairs=1
before=$(rcvbuf_errors)
for i in $(seq 1 $pairs); do
	perf_read "perf-read-$i"
done
perftest_read ib_read_bw
echo "net_reads: datagrams dropped for want of receive buffer meanwhile:" \
	"$(($(rcvbuf_errors) - before))"
echo "net_reads: $pass passed, $fail failed"
[ "$fail" = 0 ]
