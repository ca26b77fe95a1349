#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GID 0 between IPv6 devices, as on rxe: two hosts (network namespaces
# joined by a veth pair this test makes), each with a drop-in device on a
# global IPv6 address of its veth end. GID 0 is the interface's link-local
# address; ibv_rc_pingpong and ibv_ud_pingpong -g 0 must pass over it, the
# RC one seeing the peer's link-local GID. An RC send to a GID no route
# reaches must end in a retry-exceeded completion, not a success.
# Skipped, with the reason, where namespaces cannot be made.
# usage: tests/net/net_gid0.sh BUILD_DIR
set -u
build=${1:?usage: net_gid0.sh BUILD_DIR}
build=$(cd "$build" && pwd)
work=$build/net_gid0
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
a=rocemu-gid0-a.$$ b=rocemu-gid0-b.$$
pass=0 fail=0

skip() {
	echo "net_gid0: skipped: $*"
	echo "net_gid0: 0 passed, 0 failed, 1 skipped"
	exit 0
}
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; }
trap cleanup EXIT

command -v ip >/dev/null || skip "no 'ip' command (Debian package iproute2)"
command -v ibv_rc_pingpong >/dev/null ||
	skip "no ibv_rc_pingpong (Debian package ibverbs-utils)"
ip netns add "$a" 2>"$work/err" || skip "cannot create a network namespace: $(cat "$work/err")"
ip netns add "$b" || skip "cannot create a second network namespace"
ip link add va netns "$a" type veth peer name vb netns "$b" 2>"$work/err" ||
	skip "cannot create a veth pair: $(cat "$work/err")"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
# fixed MACs, so the kernel's link-local addresses (EUI-64) are known
ip -n "$a" link set va address 02:53:00:00:00:01
ip -n "$b" link set vb address 02:53:00:00:00:02
ip -n "$a" addr add fd00:53::1/64 dev va nodad
ip -n "$b" addr add fd00:53::2/64 dev vb nodad
ip -n "$a" addr add 10.53.0.1/24 dev va
ip -n "$b" addr add 10.53.0.2/24 dev vb
ip -n "$a" link set va up
ip -n "$b" link set vb up
lla=fe80::53:ff:fe00:1 llb=fe80::53:ff:fe00:2
# the link-local addresses are usable once duplicate detection is done
for i in $(seq 100); do
	ip -n "$a" -6 addr show dev va | grep -q tentative ||
		ip -n "$b" -6 addr show dev vb | grep -q tentative || break
	sleep 0.1
done

. "$here/../lib/verbs_env.sh"
. "$here/../lib/wait_listen.sh"

# pingpong NAME PROGRAM PORT ARGS...: a server in a on fd00:53::1, a
# client in b on fd00:53::2; passes when both exit 0.
pingpong() {
	local name=$1 prog=$2 port=$3
	shift 3
	ROCEMU_ADDR=fd00:53::1 timeout 60 ip netns exec "$a" "$prog" \
		-p "$port" "$@" >"$work/$name.server" 2>&1 &
	local spid=$!
	wait_listen "$port" "$a"
	ROCEMU_ADDR=fd00:53::2 timeout 60 ip netns exec "$b" "$prog" \
		-p "$port" "$@" 10.53.0.1 >"$work/$name.client" 2>&1
	local crc=$?
	wait $spid
	local src=$?
	[ $crc = 0 ] && [ $src = 0 ]
}

result() { # result NAME OK
	if [ "$2" = 0 ]; then pass=$((pass + 1)); else
		fail=$((fail + 1))
		echo "FAIL: $1"
		tail -n 4 "$work/$1.client" "$work/$1.server" 2>/dev/null
	fi
}

pingpong rc ibv_rc_pingpong 18795 -g 0 -n 50 -s 4096 &&
	grep -q "remote address: .*GID $lla" "$work/rc.client" &&
	grep -q "local address: .*GID $llb" "$work/rc.client"
result rc $?
pingpong ud ibv_ud_pingpong 18796 -g 0 -n 50 -s 1024
result ud $?
# GID 1 (the global address) still works beside GID 0
pingpong rc1 ibv_rc_pingpong 18797 -g 1 -n 20 &&
	grep -q "remote address: .*GID fd00:53::1" "$work/rc1.client"
result rc1 $?

# An AH's traffic class and flow label reach the peer's GRH over GID 0
# (IPv6): the labels cross the wire in the IPv6 header, and the receiver
# reads them from it. The server records a capture, in which the client's
# datagrams come from a source port of their QP's own, not 4791.
grh() {
	ROCEMU_ADDR=fd00:53::1 ROCEMU_PCAP="$work/grh.pcap" timeout 60 \
		ip netns exec "$a" "$work/ud_grh" server -g 0 -p 18798 \
		-t 0xb8 -f 0x6789a >"$work/grh.server" 2>&1 &
	local spid=$!
	wait_listen 18798 "$a"
	ROCEMU_ADDR=fd00:53::2 timeout 60 ip netns exec "$b" "$work/ud_grh" \
		client -g 0 -p 18798 -t 0x68 -f 0x12345 10.53.0.1 \
		>"$work/grh.client" 2>&1
	local crc=$?
	wait $spid && [ $crc = 0 ] &&
		grep -q "^RECV wc=success grh=1 ip=6 tclass=0x68 flow=0x12345 .*sgid=$llb dgid=$lla" "$work/grh.server" &&
		grep -q "^RECV wc=success grh=1 ip=6 tclass=0xb8 flow=0x6789a .*sgid=$lla dgid=$llb" "$work/grh.client" &&
		"$build/bin/rocemu" dump "$work/grh.pcap" >"$work/grh.dump" 2>&1 &&
		grep -q "\[$llb\]:[0-9]* > \[$lla\]:4791 UD_SEND_ONLY" "$work/grh.dump" &&
		! grep -q "\[$llb\]:4791 > " "$work/grh.dump"
}
if cc -Wall -Wextra -Werror -o "$work/ud_grh" "$here/../rxe/ud_grh.c" \
	-libverbs 2>"$work/grh.client"; then
	grh
	result grh $?
else
	result grh 1
fi

# A send that cannot leave (no route to fd00:99::1: the host refuses it
# with ENETUNREACH) is lost as on a wire, and counted as rxe counts it
# (send_err): on RC the requester retries and the WR completes with retry
# exceeded; a UD WR completes (UD promises no delivery).
unreach() { # unreach rc|ud
	ROCEMU_ADDR=fd00:53::2 ROCEMU_STATS=1 timeout 60 ip netns exec "$b" \
		"$work/gid0_unreach" "$1" fd00:99::1 >"$work/unreach_$1.client" 2>&1
}
if cc -Wall -Wextra -Werror -o "$work/gid0_unreach" "$here/gid0_unreach.c" \
	-libverbs 2>"$work/unreach_rc.client"; then
	unreach rc
	grep -q "^status transport retry counter exceeded" "$work/unreach_rc.client" &&
		grep -q "^rocemu: counter send_err [1-9]" "$work/unreach_rc.client"
	result unreach_rc $?
	unreach ud
	[ "$(grep -c "^status success" "$work/unreach_ud.client")" = 2 ] &&
		grep -q "^rocemu: counter send_err [1-9]" "$work/unreach_ud.client"
	result unreach_ud $?
else
	result unreach_rc 1
fi

echo "net_gid0: $pass passed, $fail failed"
[ "$fail" = 0 ]
