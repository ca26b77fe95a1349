#!/bin/sh
# SPDX-License-Identifier: MIT
# GID 0, traffic class and flow label against Linux rxe, run inside two rxe
# lab guests (busybox sh, as each guest's run.sh; tests/rxe/gid.sh boots
# them and judges what they leave with gid_check.py).
#   1. reference, rxe <-> rxe: guest a (rxe0 on eth0, 10.0.1.1) runs each
#      program's server, guest b (rxe0 on eth0, 10.0.1.2) its client, once
#      guest a says (TCP port 17000) that the server listens; a records
#      its eth0 per run. The RoCE traffic of GID 0 goes between the two
#      eth0's IPv6 link-local addresses (fe80::5054:ff:fe12:340a and :340b).
#   2. mixed, in guest a alone: rxe1 on veth0 (initial namespace), rocemu's
#      drop-in in the namespace "peer" on veth1 (MAC 02:28:00:00:00:02,
#      link-local fe80::28:ff:fe00:2), its device at veth1's global
#      address fd00:28::2 for GID 0 (so GID 0 is the interface's link-local
#      address, found by rocemu) and at 10.0.0.2 for GID 1. Each program
#      with rocemu as the server and rxe as the client, then the other way.
# The programs (the same in both parts):
#   rc_pingpong  ibv_rc_pingpong -g 0 -n 5
#   ud_pingpong  ibv_ud_pingpong -g 0 -n 5 -s 512
#   ud_grh       the lab's ud_grh -g 0: one UD datagram each way, the
#                server's AH traffic class 0xb8 and flow label 0x6789a, the
#                client's 0x68 and 0x12345; each prints the GRH it received
#   ud_grh_v4    the same over GID 1 (IPv4: the traffic class is the TOS)
#   send_bw      ib_send_bw -x 0 --tclass=0x68 (RC: both sides' AH 0x68)
# Per run OUT/gid/<run>.{pcap,server,server.err,client,client.err,meta}
# (<run> is ref-PROG or PROG-SERVER-CLIENT; meta: "gid N" and one line
# per side "side server|client rxe|rocemu MAC TCLASS FLOW HOPS", the AH
# values that side was given, HOPS "-" where the program sets its own). One line per run in OUT/gid.tsv: PASS or FAIL
# (the programs' exit status only; gid_check.py judges the packets),
# program, server->client, seconds, reason; guest b writes its reference
# clients' exit statuses to OUT/gid-clients.tsv (program, status, last
# error) and their output to OUT/gid/ref-PROG.client{,.err}. Exit 1 when
# the setup failed.
# usage (in the guest): sh gid_guest.sh a|b OUT
set -eu
name=${1:?usage: gid_guest.sh a|b OUT}
out=${2:?usage: gid_guest.sh a|b OUT}
ip=/usr/bin/ip tcpdump=/usr/bin/tcpdump
. /in/guest_lib.sh
logs=$out/gid
mkdir -p "$logs"
: >"$out/gid.tsv"
sync_port=17000 port=18800
progs="rc_pingpong ud_pingpong ud_grh ud_grh_v4 send_bw"
peer_mac=02:28:00:00:00:02

# gid_of PROG, tc_of PROG server|client, fl_of PROG server|client: the GID
# index a program runs on and the AH traffic class and flow label each of
# its sides is given.
gid_of() { if [ "$1" = ud_grh_v4 ]; then echo 1; else echo 0; fi; }
tc_of() {
	case $1:$2 in
	ud_grh*:server) echo 0xb8 ;;
	ud_grh*:client | send_bw:*) echo 0x68 ;;
	*) echo 0x00 ;;
	esac
}
fl_of() {
	case $1:$2 in
	ud_grh:server) echo 0x6789a ;;
	ud_grh:client) echo 0x12345 ;;
	*) echo 0x00000 ;;
	esac
}

# hop_of PROG server|client: the AH hop limit ud_grh's sides are given (the
# other programs set their own: 1 for ibv_*_pingpong, 64 for perftest).
hop_of() {
	case $1:$2 in
	ud_grh*:server) echo 42 ;;
	ud_grh*:client) echo 17 ;;
	*) echo - ;;
	esac
}

# cmd PROG server|client DEV SERVER_ADDR PORT: the command line of one side.
cmd() {
	local prog=$1 role=$2 dev=$3 srv=$4 p=$5 g a=""
	g=$(gid_of "$prog")
	[ "$role" = client ] && a=$srv
	case $prog in
	rc_pingpong) echo ibv_rc_pingpong -d "$dev" -g "$g" -n 5 -p "$p" $a ;;
	ud_pingpong) echo ibv_ud_pingpong -d "$dev" -g "$g" -n 5 -s 512 -p "$p" $a ;;
	ud_grh*) echo ud_grh "$role" -d "$dev" -g "$g" -p "$p" \
		-t "$(tc_of "$prog" "$role")" -f "$(fl_of "$prog" "$role")" \
		-l "$(hop_of "$prog" "$role")" $a ;;
	send_bw) echo ib_send_bw -F -d "$dev" -x "$g" -c RC --tclass=0x68 -n 5 \
		-s 4096 -p "$p" $a ;;
	esac
}

# meta PROG SERVER_IMPL SERVER_MAC CLIENT_IMPL CLIENT_MAC
meta() {
	echo "gid $(gid_of "$1")"
	echo "side server $2 $3 $(tc_of "$1" server) $(fl_of "$1" server) $(hop_of "$1" server)"
	echo "side client $4 $5 $(tc_of "$1" client) $(fl_of "$1" client) $(hop_of "$1" client)"
}

# listening NS PORT PID: waits until someone listens on TCP PORT (in the
# namespace peer when NS is "peer"); fails if PID ends first or after 30 s.
listening() {
	local i=0 ns=""
	[ "$1" = peer ] && ns="$ip netns exec peer"
	while ! $ns netstat -ltn 2>/dev/null | grep -q ":$2 "; do
		i=$((i + 1))
		[ $i -lt 300 ] && kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
}

# ll_ready DEV IFACE [NS]: waits until DEV's GID 0 is a link-local one and
# IFACE's link-local address (in NS) is no longer tentative; at most 10 s.
ll_ready() {
	local i=0 ns=""
	[ -n "${3:-}" ] && ns="$ip netns exec $3"
	until { [ -z "$1" ] || ibv_devinfo -v -d "$1" | grep -q 'GID\[  0\]:.*fe80'; } &&
		$ns $ip -6 addr show dev "$2" | grep -q 'inet6 fe80' &&
		! $ns $ip -6 addr show dev "$2" | grep -q tentative; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "gid: $1 $2 has no usable link-local GID 0"; return 1; }
		sleep 0.1
	done
}

result() { # result OK PROG DIR SECS WHY
	if [ "$1" = 0 ]; then
		printf 'PASS\t%s\t%s\t%s\t\n' "$2" "$3" "$4" >>"$out/gid.tsv"
		echo "PASS $2 $3 ($4 s)"
	else
		printf 'FAIL\t%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "$5" >>"$out/gid.tsv"
		echo "FAIL $2 $3: $5"
	fi
}

now() { cut -d' ' -f1 /proc/uptime; }
secs_since() { awk "BEGIN { printf \"%.1f\", $(now) - $1 }"; }

# ---- 1. reference: rxe <-> rxe over the guests' eth0 ----
$ip link set lo up
if [ "$name" = a ]; then me=10.0.1.1; else me=10.0.1.2; fi
$ip addr add $me/24 dev eth0
$ip link set eth0 up
rxe_on rxe0 eth0 $me
ll_ready rxe0 eth0 || exit 1
ibv_devinfo -v -d rxe0 | grep 'GID\[' >"$logs/rxe0-gids.$name"
if [ "$name" = b ]; then
	i=0
	until ping -c 1 -W 1 10.0.1.1 >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 60 ] || { echo "gid: no IPv4 path to 10.0.1.1"; exit 1; }
	done
	for prog in $progs; do
		port=$((port + 1))
		i=0
		until nc -w 2 10.0.1.1 $sync_port </dev/null 2>/dev/null | grep -q "go $prog"; do
			i=$((i + 1))
			[ $i -lt 120 ] || { echo "gid: guest a never said go $prog"; exit 1; }
			sleep 0.5
		done
		f=$logs/ref-$prog
		crc=0
		# shellcheck disable=SC2046 # a word list
		timeout 40 $(cmd $prog client rxe0 10.0.1.1 $port) >"$f.client" 2>"$f.client.err" || crc=$?
		echo "gid: reference $prog client exit $crc"
		printf '%s\t%s\t%s\n' $prog $crc "$(last_error "$f.client")" >>"$out/gid-clients.tsv"
	done
	exit 0
fi
for prog in $progs; do
	port=$((port + 1))
	f=$logs/ref-$prog
	meta $prog rxe 52:54:00:12:34:0a rxe 52:54:00:12:34:0b >"$f.meta"
	t0=$(now)
	capture eth0 "$f.pcap"
	src=0
	# shellcheck disable=SC2046
	timeout 60 $(cmd $prog server rxe0 10.0.1.1 $port) >"$f.server" 2>"$f.server.err" &
	spid=$!
	if listening "" $port $spid; then
		echo "go $prog" | timeout 60 nc -l -p $sync_port >/dev/null 2>&1 || :
	else
		echo "gid: the reference $prog server did not listen"
	fi
	wait $spid || src=$?
	uncapture
	result $src $prog "rxe->rxe" "$(secs_since $t0)" "server exit $src: $(last_error "$f.server")"
done

# ---- 2. rocemu <-> rxe inside guest a ----
sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
$ip netns add peer
$ip netns exec peer sysctl -qw net.ipv6.conf.all.accept_dad=0 \
	net.ipv6.conf.default.accept_dad=0
peer_veth $peer_mac
$ip netns exec peer $ip addr add fd00:28::2/64 dev veth1 nodad
rxe_on rxe1 veth0 10.0.0.1
ll_ready rxe1 veth0 || exit 1
ll_ready "" veth1 peer || exit 1
ping -c 1 -W 5 10.0.0.2 >/dev/null || { echo "gid: no IPv4 path to 10.0.0.2"; exit 1; }
ibv_devinfo -v -d rxe1 | grep 'GID\[' >"$logs/rxe1-gids"
rxe_mac=$(cat /sys/class/net/veth0/address)
$ip netns exec peer $ip -6 addr show dev veth1 >"$logs/veth1-addrs"

# side rxe|rocemu GID CMD...: CMD as that side under a 40 s timeout; rocemu
# at veth1's global IPv6 address for GID 0, at 10.0.0.2 for GID 1.
side() {
	local who=$1 g=$2 a=fd00:28::2
	shift 2
	[ "$g" = 1 ] && a=10.0.0.2
	if [ "$who" = rxe ]; then
		timeout 40 "$@"
	else
		rocemu_side 40 $a "$@"
	fi
}

for prog in $progs; do
	for srv in rocemu rxe; do
		cli=rocemu sdev=rxe1 cdev=rocemu0 sip=10.0.0.1 smac=$rxe_mac cmac=$peer_mac
		if [ $srv = rocemu ]; then
			cli=rxe sdev=rocemu0 cdev=rxe1 sip=10.0.0.2 smac=$peer_mac cmac=$rxe_mac
		fi
		port=$((port + 1))
		g=$(gid_of $prog)
		f=$logs/$prog-$srv-$cli
		meta $prog $srv $smac $cli $cmac >"$f.meta"
		t0=$(now)
		capture veth0 "$f.pcap"
		src=0 crc=0 ns=""
		[ $srv = rocemu ] && ns=peer
		# shellcheck disable=SC2046
		side $srv $g $(cmd $prog server $sdev $sip $port) >"$f.server" 2>"$f.server.err" &
		spid=$!
		if listening "$ns" $port $spid; then
			# shellcheck disable=SC2046
			side $cli $g $(cmd $prog client $cdev $sip $port) >"$f.client" \
				2>"$f.client.err" || crc=$?
		else
			crc=-1
			echo "the server did not listen" >"$f.client.err"
		fi
		ends $spid || :
		wait $spid || src=$?
		uncapture
		why="client exit $crc, server exit $src"
		[ $crc = 0 ] || why="$why; client: $(last_error "$f.client")"
		[ $src = 0 ] || why="$why; server: $(last_error "$f.server")"
		rc=1
		[ $crc = 0 ] && [ $src = 0 ] && rc=0
		[ $rc = 0 ] || dmesg | tail -n 20 >"$f.dmesg"
		result $rc $prog "$srv->$cli" "$(secs_since $t0)" "$why"
	done
done
echo "gid: done"
