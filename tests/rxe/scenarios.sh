#!/bin/sh
# SPDX-License-Identifier: MIT
# The golden-capture scenarios: the same stock programs (and rxe_probe where
# no stock program does the job) with the same options, on either side:
#   rocemu  both ends on rocemu's libibverbs.so.1 drop-in, each its own
#           device on its own address; the server's device records the
#           capture (ROCEMU_PCAP), as the wire at the server sees it;
#   rxe     Linux rxe: run once with --role server on one machine and once
#           with --role client on the other; the server side records with
#           tcpdump (--capture tcpdump:IFACE) or the wire is recorded
#           outside (--capture none).
# Leaves OUT/<scenario>.pcap (server side) and OUT/<scenario>.{server,client}.log.
# Plain POSIX sh (busybox ash is enough); programs are found on PATH.
#
# usage: scenarios.sh [options] SIDE OUT
#   --role both|server|client  which ends to run here (default both)
#   --server ADDR    the server's IPv4 address  (rocemu default 127.0.0.70)
#   --client ADDR    the client's IPv4 address  (rocemu default 127.0.0.71;
#                    only rocemu binds it)
#   --dev NAME       verbs device (default rxe0 or rocemu0)
#   --gid N          GID index (default 1: ::ffff:a.b.c.d, RoCEv2)
#   --port N         first TCP port; scenario i uses N+i (default 18515)
#   --lib DIR        rocemu's build/lib (sets LD_LIBRARY_PATH; side rocemu)
#   --capture MODE   rocemu | tcpdump:IFACE | none
#   --only "A B"     run only these scenarios
#   --drop IFACE     run the loss scenario: the client role loses the first
#                    copy of the request with PSN 0x1001 on IFACE's egress
#                    (tc prio + netem + u32 + gact; needs those modules).
#                    Without it the loss scenario is skipped.
#   --list           print the scenarios and exit
# Exit status: 0 when every program of every scenario run exited 0.
set -eu

die() { echo "scenarios.sh: $*" >&2; exit 2; }

# name | server command | client command. @DEV@ @GID@ @PORT@ @SERVER@ are
# filled in per run. Options match the rxe captures' notes (pcaps/rxe/*.txt).
SCENARIOS='
rc_send_64|ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 4 -s 64|ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 4 -s 64 @SERVER@
rc_send_5000_mtu1024|ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 2 -s 5000 -m 1024|ibv_rc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 2 -s 5000 -m 1024 @SERVER@
send_imm|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ send_imm|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ send_imm
write_bw|ib_write_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -s 3000 -m 1024|ib_write_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -s 3000 -m 1024 @SERVER@
write_imm|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ write_imm|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ write_imm
read_bw|ib_read_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -s 3000 -m 1024|ib_read_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -s 3000 -m 1024 @SERVER@
atomic_cas|ib_atomic_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -A CMP_AND_SWAP|ib_atomic_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -A CMP_AND_SWAP @SERVER@
atomic_fa|ib_atomic_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -A FETCH_AND_ADD|ib_atomic_bw -d @DEV@ -x @GID@ -p @PORT@ -n 5 -A FETCH_AND_ADD @SERVER@
uc_send|ibv_uc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 2 -s 3000 -m 1024|ibv_uc_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 2 -s 3000 -m 1024 @SERVER@
ud_send|ibv_ud_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 4 -s 100|ibv_ud_pingpong -d @DEV@ -g @GID@ -p @PORT@ -n 4 -s 100 @SERVER@
srq|ibv_srq_pingpong -d @DEV@ -g @GID@ -p @PORT@ -q 2 -n 2 -s 64|ibv_srq_pingpong -d @DEV@ -g @GID@ -p @PORT@ -q 2 -n 2 -s 64 @SERVER@
inline_send|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ inline_send|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ inline_send
rnr_retry|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ rnr_retry|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ rnr_retry
rnr_exhausted|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ rnr_exhausted|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ rnr_exhausted
err_write_bad_rkey|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ write_bad_rkey|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ write_bad_rkey
err_read_bad_rkey|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ read_bad_rkey|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ read_bad_rkey
err_write_past_end|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ write_past_end|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ write_past_end
loss|rxe_probe server -d @DEV@ -g @GID@ -p @PORT@ loss|rxe_probe client -d @DEV@ -g @GID@ -p @PORT@ @SERVER@ loss
'

role=both server= client= dev= gid=1 port=18515 lib= capture= only= list= drop=
while [ $# -gt 0 ]; do
	case $1 in
	--role) role=${2:?}; shift 2 ;;
	--server) server=${2:?}; shift 2 ;;
	--client) client=${2:?}; shift 2 ;;
	--dev) dev=${2:?}; shift 2 ;;
	--gid) gid=${2:?}; shift 2 ;;
	--port) port=${2:?}; shift 2 ;;
	--lib) lib=${2:?}; shift 2 ;;
	--capture) capture=${2:?}; shift 2 ;;
	--only) only=${2:?}; shift 2 ;;
	--drop) drop=${2:?}; shift 2 ;;
	--list) list=1; shift ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
if [ -n "$list" ]; then
	echo "$SCENARIOS" | sed -n 's/|.*//p'
	exit 0
fi
[ $# -eq 2 ] || die "usage: scenarios.sh [options] rocemu|rxe OUT"
side=$1 out=$2
case $side in
rocemu)
	: "${server:=127.0.0.70}" "${client:=127.0.0.71}" "${dev:=rocemu0}"
	: "${capture:=rocemu}"
	[ -z "$lib" ] || export LD_LIBRARY_PATH="$lib"
	# One datagram per packet, as rxe sends them: the loss scenario's
	# filter picks one packet on the wire, and GSO batches to these
	# loopback addresses would carry it inside a larger datagram.
	export ROCEMU_OFFLOAD=0
	;;
rxe)
	[ -n "$server" ] || die "side rxe needs --server ADDR"
	: "${dev:=rxe0}" "${capture:=none}"
	;;
*) die "side must be rocemu or rxe, not $side" ;;
esac
case $role in both|server|client) ;; *) die "bad --role $role" ;; esac
mkdir -p "$out" || die "cannot create $out"

fill() {
	echo "$1" | sed -e "s/@DEV@/$dev/g" -e "s/@GID@/$gid/g" \
		-e "s/@PORT@/$2/g" -e "s/@SERVER@/$server/g"
}

nap() { sleep 0.2 2>/dev/null || sleep 1; }

# The loss scenario's drop: on IFACE's egress, the first copy of the
# RoCEv2 packet to the server whose BTH PSN (bytes 37-39 of an IPv4 packet
# without options: 20 IP + 8 UDP + 9) is 0x1001, rxe_probe's second request
# packet, goes to a netem band that loses everything. netem loses a packet
# silently (the sender's send succeeds, as on a wire); a tc drop action
# would tell rxe, which sends the packet again at once. gact's
# deterministic mode sends the 1st, 3rd, ... match to that band and lets
# the 2nd, 4th, ... through: the go-back-N retransmission passes. (netem's
# own loss is random, without a seed, in Linux 6.1.)
tc=
for t in /usr/bin/tc /usr/sbin/tc /sbin/tc; do
	[ -x "$t" ] && { tc=$t; break; }
done
drop_on() {
	[ -n "$tc" ] || die "no tc (iproute2) for --drop"
	$tc qdisc del dev "$drop" root 2>/dev/null || :
	$tc qdisc add dev "$drop" root handle 1: prio bands 4 \
		priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 &&
		$tc qdisc add dev "$drop" parent 1:4 handle 40: netem loss 100% &&
		$tc filter add dev "$drop" parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match ip dst "$server"/32 \
			match u32 0x00001001 0x00ffffff at 36 flowid 1:4 \
			action gact pass random determ continue 2 ||
		die "cannot install the drop on $drop (modules sch_prio, sch_netem, cls_u32, act_gact)"
}
drop_off() {
	{ $tc -s filter show dev "$drop"; $tc -s qdisc show dev "$drop"; } \
		>"$out/$1.drop.txt" 2>&1 || :
	$tc qdisc del dev "$drop" root 2>/dev/null || :
}

# The server: started in the background with its capture; its pid in $srv.
start_server() { # name command
	pcap=$out/$1.pcap
	rm -f "$pcap"
	tcpd=
	case $capture in
	tcpdump:*)
		tcpdump -Z root -i "${capture#tcpdump:}" -w "$pcap" -U --immediate-mode \
			udp port 4791 >"$out/$1.tcpdump.log" 2>&1 &
		tcpd=$!
		# a packet sent before tcpdump listens is not in the capture
		w=0
		until grep -q 'listening on' "$out/$1.tcpdump.log" 2>/dev/null; do
			w=$((w + 1))
			[ $w -lt 100 ] && kill -0 $tcpd 2>/dev/null ||
				die "tcpdump on ${capture#tcpdump:} did not start: $(cat "$out/$1.tcpdump.log")"
			nap
		done
		;;
	esac
	echo "\$ $2" >"$out/$1.server.log"
	if [ "$capture" = rocemu ]; then
		ROCEMU_ADDR=$server ROCEMU_PCAP=$pcap timeout 120 $2 \
			>>"$out/$1.server.log" 2>&1 &
	elif [ "$side" = rocemu ]; then
		ROCEMU_ADDR=$server timeout 120 $2 >>"$out/$1.server.log" 2>&1 &
	else
		timeout 120 $2 >>"$out/$1.server.log" 2>&1 &
	fi
	srv=$!
}

# The client: run again while it only failed to reach the server's TCP
# port (the server may still be starting, or on another machine).
run_client() { # name command
	tries=0
	while :; do
		rc=0
		echo "\$ $2" >"$out/$1.client.log"
		if [ "$side" = rocemu ]; then
			ROCEMU_ADDR=$client timeout 120 $2 \
				>>"$out/$1.client.log" 2>&1 || rc=$?
		else
			timeout 120 $2 >>"$out/$1.client.log" 2>&1 || rc=$?
		fi
		[ $rc -ne 0 ] || return 0
		tail -n +2 "$out/$1.client.log" | grep -qi "connect" || return $rc
		tries=$((tries + 1))
		[ $tries -lt 150 ] || return $rc
		nap
	done
}

failed=0 i=0
echo "$SCENARIOS" | grep '|' >"$out/.scenarios"
while IFS='|' read -r name scmd ccmd; do
	i=$((i + 1))
	if [ -n "$only" ]; then
		case " $only " in *" $name "*) ;; *) continue ;; esac
	fi
	p=$((port + i))
	src=0 crc=0
	if [ "$name" = loss ] && [ -z "$drop" ]; then
		echo "scenario $name: skipped (needs --drop IFACE)"
		continue
	fi
	[ "$name" != loss ] || [ "$role" = server ] || drop_on
	if [ "$role" != client ]; then
		start_server "$name" "$(fill "$scmd" $p)"
	fi
	if [ "$role" != server ]; then
		run_client "$name" "$(fill "$ccmd" $p)" || crc=$?
	fi
	[ "$name" != loss ] || [ "$role" = server ] || drop_off "$name"
	if [ "$role" != client ]; then
		wait "$srv" || src=$?
		if [ -n "$tcpd" ]; then
			nap
			kill "$tcpd" 2>/dev/null || :
			wait "$tcpd" 2>/dev/null || :
		fi
	fi
	status=ok
	[ $src -eq 0 ] && [ $crc -eq 0 ] || { status=FAIL; failed=1; }
	echo "scenario $name: $status (server exit $src, client exit $crc)"
done <"$out/.scenarios"
rm -f "$out/.scenarios"
exit $failed
