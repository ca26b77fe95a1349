#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu ping and perf between two hosts: network namespaces joined by a
# veth pair that this test creates, over IPv6 and IPv4. Skipped, with the
# reason, where namespaces cannot be made (no root, no iproute2).
# usage: tests/net/net_hosts.sh BUILD_DIR
set -u
build=${1:?usage: net_hosts.sh BUILD_DIR}
rocemu=$(cd "$(dirname "$build/bin/rocemu")" && pwd)/rocemu
work=$build/net_hosts
rm -rf "$work" && mkdir -p "$work"
a=rocemu-test-a.$$ b=rocemu-test-b.$$
pass=0 fail=0

skip() {
	echo "net_hosts: skipped: $*"
	echo "net_hosts: 0 passed, 0 failed, 1 skipped"
	exit 0
}
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; }
trap cleanup EXIT

command -v ip >/dev/null || skip "no 'ip' command (Debian package iproute2)"
ip netns add "$a" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
ip netns add "$b" || skip "cannot create a second network namespace"
ip link add va netns "$a" type veth peer name vb netns "$b" 2>"$work/err" ||
	skip "cannot create a veth pair: $(cat "$work/err")"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" addr add fd00:52::1/64 dev va nodad
ip -n "$b" addr add fd00:52::2/64 dev vb nodad
# link-local addresses, which a socket binds only with the interface's index
ip -n "$a" addr add fe80::52:1/64 dev va nodad
ip -n "$b" addr add fe80::52:2/64 dev vb nodad
ip -n "$a" addr add 10.52.0.1/24 dev va
ip -n "$b" addr add 10.52.0.2/24 dev vb
ip -n "$a" link set va up
ip -n "$b" link set vb up

# run NAME SERVER_ADDR CLIENT_ADDR ARGS...: server in a, client in b;
# $client_extra goes to the client only.
client_extra=()
run() {
	local name=$1 sa=$2 ca=$3
	shift 3
	timeout 60 ip netns exec "$a" "$rocemu" "$@" --addr "$sa" \
		>"$work/$name.server" 2>&1 &
	local spid=$!
	timeout 60 ip netns exec "$b" "$rocemu" "$@" "${client_extra[@]}" \
		--addr "$ca" --wait 20 "$sa" \
		>"$work/$name.client" 2>&1
	local crc=$?
	wait $spid
	local src=$?
	if [ $crc = 0 ] && [ $src = 0 ]; then pass=$((pass + 1)); else
		fail=$((fail + 1))
		echo "FAIL: $name: client exit $crc, server exit $src"
		tail -n 3 "$work/$name.client" "$work/$name.server"
	fi
}

for t in rc uc ud; do
	run "ipv6-$t" fd00:52::1 fd00:52::2 ping -t $t -n 100 -s 1000
	run "ipv4-$t" 10.52.0.1 10.52.0.2 ping -t $t -n 100 -s 1000
done
client_extra=(--pcap "$work/v6.pcap")
run ipv6-pcap fd00:52::1 fd00:52::2 ping -n 10 -s 2000
client_extra=()
"$rocemu" dump "$work/v6.pcap" >"$work/v6.dump"
# 10 round trips of 2 packets each way, an ACK for each message: 60
if grep -q "ICRC ok 60, ICRC bad 0, malformed 0" "$work/v6.dump"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL: the IPv6 capture does not verify"
fi
run ipv6-read fd00:52::1 fd00:52::2 perf read -n 200 -s 8192
run ipv6-atomic fd00:52::1 fd00:52::2 perf atomic -n 200

# The drop-in on IPv6 link-local addresses: ibv_rc_pingpong's GID 1 is
# ROCEMU_ADDR itself; its own TCP exchange goes over IPv4.
build=$(cd "$build" && pwd)
if command -v ibv_rc_pingpong >/dev/null; then
	(. "$(dirname "$0")/../lib/verbs_env.sh"
	 ROCEMU_ADDR=fe80::52:1 timeout 60 ip netns exec "$a" ibv_rc_pingpong \
		-g 1 -c -s 5000 -n 50 -p 18790 >"$work/ll.server" 2>&1 &
	 . "$(dirname "$0")/../lib/wait_listen.sh"
	 wait_listen 18790 "$a"
	 ROCEMU_ADDR=fe80::52:2 timeout 60 ip netns exec "$b" ibv_rc_pingpong \
		-g 1 -c -s 5000 -n 50 -p 18790 10.52.0.1 >"$work/ll.client" 2>&1
	 crc=$?
	 wait $!
	 src=$?
	 [ $crc = 0 ] && [ $src = 0 ] && grep -q "GID fe80::52:1" "$work/ll.client"
	) && pass=$((pass + 1)) || {
		fail=$((fail + 1))
		echo "FAIL: ibv_rc_pingpong on IPv6 link-local addresses"
		tail -n 3 "$work/ll.client" "$work/ll.server"
	}
else
	echo "net_hosts: ibv_rc_pingpong missing: the link-local run is skipped"
fi

echo "net_hosts: $pass passed, $fail failed"
[ "$fail" = 0 ]
