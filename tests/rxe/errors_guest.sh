#!/bin/sh
# SPDX-License-Identifier: MIT
# The error paths, run inside two rxe lab guests (busybox sh, as each
# guest's run.sh; tests/rxe/errors.sh boots them and reads the results).
# Each case is one rxe_probe step (tests/rxe/rxe_probe.c says what each
# does): a wrong rkey on WRITE and on READ, a WRITE past the MR's end, a
# misaligned atomic (refused at post time: no stack lets one on the wire),
# RNR then retry, RNR retries exhausted, and retries exhausted
# while the responder's answers are lost (tc, clsact egress: its UDP port
# 4791 packets are dropped; the TCP side channel stays).
#   1. reference, rxe <-> rxe: guest a (rxe0 on eth0, 10.0.1.1) is the
#      server (responder), guest b (rxe0 on eth0, 10.0.1.2) the client;
#      a records its eth0 with tcpdump. Guest b ends here.
#   2. mixed, in guest a alone: rxe1 on veth0 (10.0.0.1, initial
#      namespace), rocemu's drop-in in the namespace "peer" on veth1
#      (10.0.0.2); each case with rocemu as the client (requester) against
#      rxe as the server (responder), then the other way round; tcpdump on
#      veth0.
# Per run OUT/errors/<run>.pcap, <run>.{server,client}.log, and one line in
# OUT/errors.tsv: run, case, server side, client side, server exit, client
# exit, the server's RESULT line, the client's. The host decodes the
# captures and compares (errors.sh). Exit 1 when the setup failed; a case
# that did not go as expected is the host's to judge.
# usage (in the guest): sh errors_guest.sh a|b OUT
set -eu
name=${1:?usage: errors_guest.sh a|b OUT}
out=${2:?usage: errors_guest.sh a|b OUT}
ip=/usr/bin/ip tc=/usr/bin/tc tcpdump=/usr/bin/tcpdump
. /in/guest_lib.sh
logs=$out/errors
mkdir -p "$logs"
: >"$out/errors.tsv"

cases="write_bad_rkey read_bad_rkey write_past_end atomic_misaligned
	rnr_retry rnr_exhausted retry_exhausted"


# The shell command rxe_probe's server runs before it lets the client post:
# on IFACE's egress every IPv4 UDP packet to port 4791 (RoCEv2) is dropped
# (clsact, u32, gact); the rest (the TCP side channel) passes. tcpdump on
# the same interface does not see what was dropped there.
loss_cmd() { # IFACE
	echo "$tc qdisc add dev $1 clsact &&" \
		"$tc filter add dev $1 egress protocol ip prio 1 u32" \
		"match ip protocol 17 0xff match ip dport 4791 0xffff action drop"
}

# Prints the RESULT line of a probe's log, or "-" when it has none.
result_of() { grep -m 1 '^RESULT' "$1" 2>/dev/null | cut -d' ' -f3- || echo -; }



port=19000
for m in sch_ingress cls_u32 act_gact; do modprobe $m || echo "errors: modprobe $m failed"; done
# ---- 1. reference: rxe <-> rxe over the guests' eth0 ----
$ip link set lo up
if [ "$name" = a ]; then me=10.0.1.1; else me=10.0.1.2; fi
$ip addr add $me/24 dev eth0
$ip link set eth0 up
rxe_on rxe0 eth0 $me
for c in $cases; do
	port=$((port + 1))
	f=$logs/ref-$c
	src=0 crc=0
	if [ "$name" = a ]; then
		capture eth0 "$f.pcap"
		# longer than the client's tries to connect (about 40 s): a
		# client whose server never listened gives up first
		RXE_PROBE_LOSS="$(loss_cmd eth0)" timeout 90 rxe_probe server \
			-d rxe0 -g 1 -p $port "$c" >"$f.server.log" 2>&1 || src=$?
		uncapture
		$tc qdisc del dev eth0 clsact 2>/dev/null || :
		printf 'ref\t%s\trxe\trxe\t%s\t-\t%s\t-\n' "$c" $src \
			"$(result_of "$f.server.log")" >>"$out/errors.tsv"
		echo "errors: ref $c server exit $src"
	else
		# the server may not listen yet: again while the TCP connect fails
		i=0
		while :; do
			crc=0
			timeout 60 rxe_probe client -d rxe0 -g 1 -p $port 10.0.1.1 "$c" \
				>"$f.client.log" 2>&1 || crc=$?
			[ $crc != 0 ] && grep -q 'tcp connect' "$f.client.log" &&
				[ $i -lt 100 ] || break
			i=$((i + 1))
			nap
		done
		printf 'ref\t%s\trxe\trxe\t-\t%s\t-\t%s\n' "$c" $crc \
			"$(result_of "$f.client.log")" >>"$out/errors.tsv"
		echo "errors: ref $c client exit $crc"
	fi
done
[ "$name" = a ] || exit 0

# ---- 2. mixed: rxe on veth0, rocemu's drop-in in namespace peer ----
peer_mac=02:00:fe:00:00:02
peer_veth $peer_mac
rxe_on rxe1 veth0 10.0.0.1
ping -c 1 -W 5 10.0.0.2 >/dev/null || { echo "errors: no IPv4 path to 10.0.0.2"; exit 1; }

# side rxe|rocemu CMD...: runs CMD as that side.
side() {
	local who=$1
	shift
	if [ "$who" = rxe ]; then
		timeout 60 "$@"
	else
		rocemu_side 60 10.0.0.2 "$@"
	fi
}
dev_of() { if [ "$1" = rxe ]; then echo rxe1; else echo rocemu0; fi; }
addr_of() { if [ "$1" = rxe ]; then echo 10.0.0.1; else echo 10.0.0.2; fi; }
iface_of() { if [ "$1" = rxe ]; then echo veth0; else echo veth1; fi; }

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

for c in $cases; do
	for srv in rxe rocemu; do
		cli=rocemu
		[ $srv = rocemu ] && cli=rxe
		port=$((port + 1))
		f=$logs/$srv-$c
		src=0 crc=0
		capture veth0 "$f.pcap"
		loss=$(loss_cmd "$(iface_of $srv)")
		side $srv env RXE_PROBE_LOSS="$loss" rxe_probe server \
			-d "$(dev_of $srv)" -g 1 -p $port "$c" >"$f.server.log" 2>&1 &
		spid=$!
		if listening $srv $port $spid; then
			side $cli rxe_probe client -d "$(dev_of $cli)" -g 1 -p $port \
				"$(addr_of $srv)" "$c" >"$f.client.log" 2>&1 || crc=$?
		else
			crc=-1
			echo "the server did not listen on TCP port $port" >"$f.client.log"
		fi
		wait $spid || src=$?
		uncapture
		$tc qdisc del dev veth0 clsact 2>/dev/null || :
		$ip netns exec peer $tc qdisc del dev veth1 clsact 2>/dev/null || :
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$srv" "$c" $srv $cli \
			$src $crc "$(result_of "$f.server.log")" \
			"$(result_of "$f.client.log")" >>"$out/errors.tsv"
		echo "errors: $c $srv->$cli server exit $src client exit $crc"
	done
done
