#!/bin/sh
# SPDX-License-Identifier: MIT
# rdma_cm against Linux's CM, run inside two rxe lab guests (busybox sh, as
# each guest's run.sh; tests/rxe/cm.sh boots them and reads the results).
# /init has loaded rdma_ucm (rdma_cm, ib_cm): without ib_cm the kernel
# drops every CM MAD.
#   1. reference, rxe <-> rxe: guest a (rxe0 on eth0, 10.0.1.1) runs the
#      rping server, guest b (rxe0 on eth0, 10.0.1.2) the client, once
#      guest a says (TCP port 17000) that its server listens; a records
#      its eth0: OUT/cm/ref-rping.pcap. Guest b ends here.
#   2. mixed, in guest a alone: rxe1 on veth0 (10.0.0.1, initial
#      namespace: rxe in Linux 6.1 works only there), rocemu's drop-ins
#      (libibverbs.so.1, librdmacm.so.1) in the namespace "peer" on veth1
#      (10.0.0.2). Each program with rocemu as the server and rxe as the
#      client, then the other way round: rping -C 10 -V, ucmatose -c 2
#      -C 10, udaddy, ib_send_bw -R. The client starts once the server
#      listens (rxe: rdma res shows its LISTEN id; rocemu: its device holds
#      UDP 4791, then a second). Each side has 40 s: a REQ nobody answers
#      would take the kernel about 70 s to give up on.
# Per run OUT/cm/<run>.{pcap,server,server.err,client,client.err} (tcpdump
# of udp port 4791 on veth0), OUT/cm/<run>.counters (ib_cm's counters of
# rxe1 after the run) and, when it failed, OUT/cm/<run>.dmesg (the
# kernel log's tail). One line per run in OUT/cm.tsv: result, program,
# server->client, seconds, reason. Exit 1 when the setup or a run failed.
# usage (in the guest): sh cm_guest.sh a|b OUT
set -eu
name=${1:?usage: cm_guest.sh a|b OUT}
out=${2:?usage: cm_guest.sh a|b OUT}
ip=/usr/bin/ip tcpdump=/usr/bin/tcpdump
. /in/guest_lib.sh
logs=$out/cm
mkdir -p "$logs"
: >"$out/cm.tsv"
rping_port=7174 sync_port=17000




# counters DEV: ib_cm's counters of DEV's port 1, one group a line
# (cm_rx_msgs: req=1 rep=0 ...), only the non-zero ones.
counters() {
	local d g c line v
	# Linux 6.1 keeps them with the port; older kernels in their class
	d=/sys/class/infiniband/$1/ports/1
	[ -d "$d/cm_rx_msgs" ] || d=/sys/class/infiniband_cm/$1/1
	[ -d "$d/cm_rx_msgs" ] || { echo "no cm_rx_msgs for $1 (ib_cm not loaded?)"; return; }
	for g in cm_tx_msgs cm_tx_retries cm_rx_msgs cm_rx_duplicates; do
		line=""
		for c in "$d/$g"/*; do
			v=$(cat "$c" 2>/dev/null || echo '?')
			[ "$v" = 0 ] || line="$line $(basename "$c")=$v"
		done
		echo "$g:${line:- (all 0)}"
	done
}

# rxe_listens PORT PID: waits until the kernel holds an rdma_cm id
# listening on PORT (rdma res), at most 20 s; fails if PID ends first.
rxe_listens() {
	local i=0
	until /usr/bin/rdma res show cm_id 2>/dev/null | grep 'LISTEN' | grep -q ":$1 "; do
		i=$((i + 1))
		[ $i -lt 200 ] && kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
}

# rocemu_listens ADDR PID: waits until the drop-in's device holds UDP
# 4791 on ADDR in the namespace peer (its rdma_listen follows at once;
# a second more for that), at most 20 s; fails if PID ends first.
rocemu_listens() {
	local i=0
	until $ip netns exec peer netstat -uln 2>/dev/null | grep -q " $1:4791 "; do
		i=$((i + 1))
		[ $i -lt 200 ] && kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	sleep 1
}



# ---- 1. reference: rxe <-> rxe over the guests' eth0 ----
$ip link set lo up
if [ "$name" = a ]; then me=10.0.1.1; else me=10.0.1.2; fi
$ip addr add $me/24 dev eth0
$ip link set eth0 up
rxe_on rxe0 eth0 $me
if [ "$name" = b ]; then
	i=0
	until ping -c 1 -W 1 10.0.1.1 >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 60 ] || { echo "cm: no IPv4 path to 10.0.1.1"; exit 1; }
	done
	# guest a's rping server listens once it answers on the sync port
	i=0
	until nc -w 2 10.0.1.1 $sync_port </dev/null 2>/dev/null | grep -q go; do
		i=$((i + 1))
		[ $i -lt 120 ] || { echo "cm: guest a never said go"; exit 1; }
		sleep 0.5
	done
	crc=0
	timeout 40 rping -c -a 10.0.1.1 -I 10.0.1.2 -p $rping_port -C 10 -V \
		>"$logs/ref-rping.client" 2>&1 || crc=$?
	echo "cm: reference rping client exit $crc"
	counters rxe0 >"$logs/ref-rping.counters.b"
	exit $crc
fi
capture eth0 "$logs/ref-rping.pcap"
src=0
timeout 60 rping -s -a 10.0.1.1 -p $rping_port -C 10 -V >"$logs/ref-rping.server" 2>&1 &
spid=$!
if rxe_listens $rping_port $spid; then
	echo go | timeout 60 nc -l -p $sync_port >/dev/null 2>&1 || :
else
	echo "cm: the reference rping server did not listen"
fi
wait $spid || src=$?
uncapture
counters rxe0 >"$logs/ref-rping.counters"
echo "cm: reference rping server exit $src"
if [ $src = 0 ]; then
	printf 'PASS\trping\trxe->rxe\t-\t\n' >>"$out/cm.tsv"
else
	printf 'FAIL\trping\trxe->rxe\t-\tserver exit %s\n' $src >>"$out/cm.tsv"
	dmesg | tail -n 30 >"$logs/ref-rping.dmesg"
fi

# ---- 2. rocemu <-> rxe inside guest a ----
peer_veth
rxe_on rxe1 veth0 10.0.0.1
ping -c 1 -W 5 10.0.0.2 >/dev/null || { echo "cm: no IPv4 path to 10.0.0.2"; exit 1; }

# side rxe|rocemu CMD...: runs CMD as that side, under a 40 s timeout.
side() {
	local who=$1
	shift
	if [ "$who" = rxe ]; then
		timeout 40 "$@"
	else
		rocemu_side 40 10.0.0.2 "$@"
	fi
}

addr_of() { if [ "$1" = rxe ]; then echo 10.0.0.1; else echo 10.0.0.2; fi; }

port=18700 pass=0 fail=0
# run NAME SERVER WANT PORT SERVER_CMD -- CLIENT_CMD: one run; in both
# commands @S is the server's address, @C the client's, @P the port, @D
# the side's device (rxe1 or rocemu0: perftest takes the first otherwise,
# which on rxe's side is rxe0, on the other wire); WANT
# (grep -E) must match a line of the client's output ("" for none).
run() {
	local name=$1 srv=$2 want=$3 p=$4
	shift 4
	local cli=rocemu
	[ "$srv" = rocemu ] && cli=rxe
	local s c sc="" cc="" w
	s=$(addr_of $srv) c=$(addr_of $cli)
	local into=sc
	for w in "$@"; do
		if [ "$w" = -- ]; then into=cc; continue; fi
		local dev=rocemu0
		[ $into = sc ] && [ $srv = rxe ] && dev=rxe1
		[ $into = cc ] && [ $cli = rxe ] && dev=rxe1
		# printf, not echo: the shell's echo takes "-n" for its own
		w=$(printf "%s\n" "$w" | sed "s/@S/$s/; s/@C/$c/; s/@P/$p/; s/@D/$dev/")
		if [ $into = sc ]; then sc="$sc $w"; else cc="$cc $w"; fi
	done
	local tag="$name $srv->$cli"
	local f=$logs/$name-$srv-$cli
	local t0=$(cut -d' ' -f1 /proc/uptime)
	capture veth0 "$f.pcap"
	# shellcheck disable=SC2086 # the commands are word lists
	side $srv $sc >"$f.server" 2>"$f.server.err" &
	local spid=$! src=0 crc=0 why=""
	local ready=rxe_listens arg=$p
	[ $srv = rocemu ] && ready=rocemu_listens arg=$s
	if $ready $arg $spid; then
		# shellcheck disable=SC2086
		side $cli $cc >"$f.client" 2>"$f.client.err" || crc=$?
	else
		crc=-1
		echo "the server did not listen" >"$f.client.err"
	fi
	local killed=""
	ends $spid || killed=" (ended: still running 15 s after the client)"
	wait $spid || src=$?
	uncapture
	counters rxe1 >"$f.counters"
	local t1=$(cut -d' ' -f1 /proc/uptime)
	local secs=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
	if [ $crc = 0 ] && [ $src = 0 ] && { [ -z "$want" ] || grep -qE -- "$want" "$f.client"; }; then
		pass=$((pass + 1))
		echo "PASS $tag (${secs} s)"
		printf 'PASS\t%s\t%s\t%s\t\n' "$name" "$srv->$cli" "$secs" >>"$out/cm.tsv"
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
	dmesg | tail -n 30 >"$f.dmesg"
	echo "FAIL $tag: $why"
	printf 'FAIL\t%s\t%s\t%s\t%s\n' "$name" "$srv->$cli" "$secs" "$why" >>"$out/cm.tsv"
}

# both NAME WANT SERVER_CMD -- CLIENT_CMD: the run with each side as the
# server, on a fresh port each (rping's on the same port each time: its
# connections are the golden captures, and the port is in the service ID;
# udaddy's is fixed, 7174, as rping's default).
both() {
	local name=$1 want=$2 srv
	shift 2
	for srv in rocemu rxe; do
		port=$((port + 1))
		local p=$port
		case $name in rping|udaddy) p=$rping_port ;; esac
		run "$name" $srv "$want" $p "$@"
	done
}

both rping "" rping -s -a @S -p @P -C 10 -V -- rping -c -a @S -I @C -p @P -C 10 -V
both ucmatose "return status 0" ucmatose -b @S -p @P -c 2 -C 10 -- \
	ucmatose -s @S -b @C -p @P -c 2 -C 10
# udaddy's port is its own (7174; its -p is the port space)
both udaddy "return status 0" udaddy -b @S -- udaddy -s @S -b @C
both "ib_send_bw-R" "^ *65536 +5 " ib_send_bw -R -F -d @D -n 5 -p @P -- \
	ib_send_bw -R -F -d @D -n 5 -p @P @S
echo "cm: $pass passed, $fail failed"
[ $fail = 0 ]
