#!/bin/sh
# SPDX-License-Identifier: MIT
# Live interop, run inside one rxe lab guest (busybox sh, as the guest's
# run.sh; tests/rxe/check.sh ships it): Linux rxe on veth0 (10.0.0.1) in
# the initial network namespace, rocemu's libibverbs.so.1 drop-in in the
# namespace "peer" on veth1 (10.0.0.2). rxe in Linux 6.1 works only in the
# initial namespace, hence rocemu is the one moved.
# Each stock program runs with rocemu as the server and rxe as the client,
# then the other way round, over the IPv4-mapped GID (rxe's index 1) and the
# IPv6 link-local GID (index 0), path MTU 1024 with messages of several
# packets. A run passes when both sides exit 0 (ibv_*_pingpong with -c
# also check every received buffer's bytes) and the client printed its
# result line. One line per run goes to stdout and OUT/interop.txt:
#   PASS|FAIL PROGRAM SERVER->CLIENT gidN [reason]
# and the same as tab-separated fields (result, program, direction, GID
# index, seconds, reason) to OUT/interop.tsv; each side's stdout and
# stderr are in OUT/interop/. Exit 1 when a run failed.
# usage (in the guest): sh interop.sh NAME OUT [FILTER]
#   FILTER, if given, runs only the runs whose "PROGRAM" matches it (grep -E).
set -eu
out=${2:?usage: interop.sh NAME OUT [FILTER]}
filter=${3:-}
ip=/usr/bin/ip
. /in/guest_lib.sh
logs=$out/interop
mkdir -p "$logs"
: >"$out/interop.txt"
: >"$out/interop.tsv"

# rocemu's device takes its MAC from the last 4 bytes of its address and
# makes its GID 0 from that MAC as the kernel makes a link-local address.
# veth1 gets that MAC, so its own link-local address, the one rocemu binds
# for IPv6, is rocemu's GID 0 (and GID 1): both sides run with GID 0.
peer_mac=02:00:fe:00:00:02
peer_ll=fe80::feff:fe00:2

setup() {
	# no duplicate address detection: link-local addresses usable at once
	sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	$ip netns add peer
	$ip netns exec peer sysctl -qw net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0
	peer_veth $peer_mac
	/usr/bin/rdma link add rxe0 type rxe netdev veth0
	local i=0
	until ibv_devinfo -v -d rxe0 | grep -q 'GID\[  1\]:.*::ffff:10.0.0.1'; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "interop: rxe0 has no GID 1"; exit 1; }
		sleep 0.1
	done
	ibv_devinfo -v -d rxe0 >"$logs/rxe-devinfo.txt"
	$ip netns exec peer $ip -6 addr show dev veth1 >"$logs/veth1.txt"
	grep -q "$peer_ll" "$logs/veth1.txt" ||
		{ echo "interop: veth1 has no $peer_ll"; cat "$logs/veth1.txt"; exit 1; }
	ping -c 1 -W 5 10.0.0.2 >/dev/null || { echo "interop: no IPv4 path to 10.0.0.2"; exit 1; }
}

# side rxe|rocemu GID CMD...: runs CMD as that side, each under timeout.
side() {
	local who=$1 gid=$2
	shift 2
	if [ "$who" = rxe ]; then
		timeout 60 "$@"
	else
		local addr=10.0.0.2
		[ "$gid" = 1 ] || addr=$peer_ll
		rocemu_side 60 $addr "$@"
	fi
}

addr_of() { if [ "$1" = rxe ]; then echo 10.0.0.1; else echo 10.0.0.2; fi; }

# listening SIDE PORT PID: waits until someone listens on TCP port PORT in
# SIDE's namespace; fails if PID (the server) ends first or after 30 s.
listening() {
	local i=0 ns=""
	[ "$1" = rxe ] || ns="$ip netns exec peer"
	while ! $ns netstat -ltn 2>/dev/null | grep -q ":$2 "; do
		i=$((i + 1))
		[ $i -lt 300 ] && kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
}

tcp=18600 pass=0 fail=0
# run NAME GID SERVER WANT CMD...: SERVER (rxe or rocemu) runs CMD -p PORT,
# the other side CMD -p PORT plus the server's address (a fresh TCP port
# for each run); WANT is a pattern (grep -E) a line of the client's output
# must match: its result line.
run() {
	local name=$1 gid=$2 srv=$3 want=$4
	shift 4
	local cli=rocemu
	[ "$srv" = rocemu ] && cli=rxe
	if [ -n "$filter" ] && ! echo "$name" | grep -qE "$filter"; then
		return 0
	fi
	tcp=$((tcp + 1))
	local tag="$name $srv->$cli gid$gid"
	local f=$logs/$(echo "$name-$srv-g$gid" | tr ' ' '_')
	local t0=$(cut -d' ' -f1 /proc/uptime)
	side $srv $gid "$@" -p $tcp >"$f.server" 2>"$f.server.err" &
	local spid=$!
	local src=0 crc=0 why=""
	if listening $srv $tcp $spid; then
		side $cli $gid "$@" -p $tcp "$(addr_of $srv)" >"$f.client" \
			2>"$f.client.err" || crc=$?
	else
		crc=-1
		echo "the server did not listen on TCP port $tcp" >"$f.client.err"
	fi
	local killed=""
	ends $spid || killed=" (ended: still running 15 s after the client)"
	wait $spid || src=$?
	local t1=$(cut -d' ' -f1 /proc/uptime)
	local secs=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
	if [ $crc = 0 ] && [ $src = 0 ] && grep -qE -- "$want" "$f.client"; then
		pass=$((pass + 1))
		echo "PASS $tag (${secs} s)" | tee -a "$out/interop.txt"
		printf 'PASS\t%s\t%s\t%s\t%s\t%s\n' "$name" "$srv->$cli" $gid "$secs" "" \
			>>"$out/interop.tsv"
		return 0
	fi
	fail=$((fail + 1))
	if [ $crc != 0 ] || [ $src != 0 ]; then
		why="client exit $crc, server exit $src"
	else
		why="no line of the client's matches '$want'"
	fi
	[ $crc = 0 ] || why="$why; client: $(last_error "$f.client")"
	[ $src = 0 ] || why="$why$killed; server: $(last_error "$f.server")"
	echo "FAIL $tag: $why" | tee -a "$out/interop.txt"
	printf 'FAIL\t%s\t%s\t%s\t%s\t%s\n' "$name" "$srv->$cli" $gid "$secs" "$why" \
		>>"$out/interop.tsv"
}

# both NAME GID WANT CMD...: the run with each side as the server.
both() {
	local name=$1 gid=$2 want=$3
	shift 3
	run "$name" $gid rocemu "$want" "$@"
	run "$name" $gid rxe "$want" "$@"
}

# Few iterations: the guest runs in software emulation. Messages of 5000
# bytes are 5 packets at MTU 1024, 64 KiB are 64 (UD's cannot be more than
# one). perftest's -F: the guest's CPU frequency readings are not to fail
# a run.
setup
for g in 1 0; do
	pp="-g $g -m 1024 -c -n 100"
	res="^100 iters in"
	for prog in ibv_rc_pingpong ibv_uc_pingpong ibv_srq_pingpong; do
		both $prog $g "$res" $prog $pp -s 5000
	done
	both "ibv_rc_pingpong -e" $g "$res" ibv_rc_pingpong $pp -s 5000 -e
	both ibv_ud_pingpong $g "$res" ibv_ud_pingpong -g $g -c -n 100 -s 1024
	pt="-x $g -m 1024 -F"
	for prog in ib_write_bw ib_read_bw ib_send_bw; do
		both $prog $g "^ *65536 +50 " $prog $pt -s 65536 -n 50
	done
	for prog in ib_atomic_bw ib_atomic_lat; do
		both $prog $g "^ *8 +100 " $prog $pt -n 100
	done
	for prog in ib_send_lat ib_write_lat ib_read_lat; do
		both $prog $g "^ *5000 +100 " $prog $pt -s 5000 -n 100
	done
done
echo "interop: $pass passed, $fail failed"
[ $fail = 0 ]
