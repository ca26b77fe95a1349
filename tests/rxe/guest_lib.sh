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
