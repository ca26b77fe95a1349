# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# Helpers the rxe lab's guest scripts share (interop.sh, errors_guest.sh,
# cm_guest.sh). boot.sh ships this file into every guest beside the
# scenario's run.sh, as /in/guest_lib.sh; a script sources it after setting
# ip and tcpdump (the programs' paths in the guest).

# rxe_on DEV NETDEV ADDR: a rxe device on NETDEV, waited for until its
# GID 1 is ADDR's (IPv4); exits the script when it never comes.
rxe_on() {
	/usr/bin/rdma link add "$1" type rxe netdev "$2"
	local i=0
	until ibv_devinfo -v -d "$1" | grep -q "GID\[  1\]:.*::ffff:$3"; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "rxe lab: $1 has no GID 1 ::ffff:$3"; exit 1; }
		sleep 0.1
	done
}

# peer_veth [MAC]: the wire between rxe and rocemu inside one guest:
# veth0 (10.0.0.1) here, its peer veth1 (10.0.0.2, MAC if given) in the
# network namespace "peer" (made unless the caller made it), where
# rocemu's side runs (rocemu_side).
peer_veth() {
	[ -e /var/run/netns/peer ] || [ -e /run/netns/peer ] || $ip netns add peer
	$ip link add veth0 type veth peer name veth1
	if [ -n "${1:-}" ]; then
		$ip link set veth1 address "$1" netns peer
	else
		$ip link set veth1 netns peer
	fi
	$ip addr add 10.0.0.1/24 dev veth0
	$ip link set veth0 up
	$ip netns exec peer $ip link set lo up
	$ip netns exec peer $ip addr add 10.0.0.2/24 dev veth1
	$ip netns exec peer $ip link set veth1 up
}

# rocemu_side SECONDS ADDR CMD...: CMD in namespace peer on the project's
# drop-ins (/rocemu/lib), its device at ADDR, under a SECONDS timeout.
rocemu_side() {
	local secs=$1 addr=$2
	shift 2
	$ip netns exec peer env LD_LIBRARY_PATH=/rocemu/lib \
		ROCEMU_ADDR="$addr" timeout "$secs" "$@"
}

# nap: a moment for a capture or a server to start (busybox sleep may not
# take fractions).
nap() { sleep 0.3 2>/dev/null || sleep 1; }

# capture IFACE PCAP: starts tcpdump on IFACE's RoCEv2 traffic, each
# packet written as it comes; its pid in $tcpd. uncapture ends it.
capture() {
	$tcpdump -Z root --immediate-mode -i "$1" -w "$2" -U udp port 4791 \
		>"$2.tcpdump.log" 2>&1 &
	tcpd=$!
	nap
}
uncapture() { nap; kill "$tcpd" 2>/dev/null || :; wait "$tcpd" 2>/dev/null || :; }

# ends PID: waits up to 15 s for PID to end, then ends it (SIGTERM) and
# fails.
ends() {
	local i=0
	while kill -0 "$1" 2>/dev/null; do
		if [ $i = 150 ]; then
			kill "$1" 2>/dev/null
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# last_error FILE: the first line of FILE.err or FILE saying something
# failed (perftest says more after it), else FILE.err's last line, else
# FILE's.
last_error() {
	cat "$1.err" "$1" 2>/dev/null |
		grep -m 1 -iE 'fail|error|unable|couldn|invalid|timed out|cannot|reject|unreach' ||
		grep -v '^ *$' "$1.err" | tail -n 1 | grep . ||
		grep -v '^ *$' "$1" | tail -n 1
}
