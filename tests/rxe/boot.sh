#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boots one or two rxe lab guests (qemu-system-x86_64, software emulation)
# on the parts tests/rxe/parts.sh made, each running its own scenario, and
# brings each guest's results back.
#
# usage: tests/rxe/boot.sh [-t SECONDS] [-w WIRE.pcap] [-f FILE]... [-r RELAY]
#                          RXE_DIR OUT_DIR SCENARIO_A [SCENARIO_B]
#   RXE_DIR     parts.sh's output (vmlinuz, initrd.gz)
#   SCENARIO    a script (shipped as run.sh) or a directory holding run.sh;
#               it goes into the guest as /in, with every -f FILE and
#               tests/rxe/guest_lib.sh (the guest scripts' helpers) beside it.
#               The guest's /init runs "sh /in/run.sh NAME /out" (cwd /in).
#   one scenario:  guest "a", no NIC (scenarios use veth and namespaces).
#   two scenarios: guests "a" and "b", each with a virtio NIC eth0 (MAC
#               52:54:00:12:34:0a and :0b), joined by qemu's -netdev socket
#               over UDP on 127.0.0.1 (each frame one datagram). -w
#               records that wire with qemu's filter-dump (both
#               directions, on a's side).
#   -t SECONDS  limit per guest (default 600); qemu is killed after it.
#   -r RELAY    two scenarios only: the guests' frames go through a relay
#               instead of from one to the other. RELAY is a command line
#               (split on blanks: no blanks in its words), run on the host
#               with "--a 127.0.0.1:X,127.0.0.1:AX --b 127.0.0.1:Y,127.0.0.1:BY"
#               appended: its side a at X talks to guest a's port AX, its
#               side b at Y to guest b's BY (rocemu impair --eth takes
#               exactly these). It starts before the guests and gets
#               SIGTERM once both ended; its output goes to
#               OUT_DIR/relay.txt, its exit status to OUT_DIR/relay.rc.
# Results: OUT_DIR/NAME/ holds what run.sh left in /out, plus rc (its exit
# status), log.txt (its output) and dmesg.txt; OUT_DIR/NAME.console is the
# guest's serial console.
# Exit: 0 when every run.sh exited 0, 1 when one did not, 2 when a guest
# brought no results back (boot failure, timeout), 77 when qemu is missing.
# The results travel on a raw file attached as the guest's virtio disk: the
# host writes the scenario's tar on it, the guest untars it and writes the
# tar of /out over it before it powers off.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
limit=600 wire="" extra=() relay=""
while getopts t:w:f:r: o; do
	case $o in
	t) limit=$OPTARG ;;
	w) wire=$OPTARG ;;
	f) extra+=("$OPTARG") ;;
	r) relay=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] && [ $# -le 4 ] || {
	sed -n '/^# usage/,/^#   -t/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
rxe=$(cd "$1" && pwd)
out=$2
shift 2
command -v qemu-system-x86_64 >/dev/null || {
	echo "rxe boot: qemu-system-x86_64 missing (Debian package qemu-system-x86)" >&2
	exit 77
}
[ -f "$rxe/vmlinuz" ] && [ -f "$rxe/initrd.gz" ] ||
	{ echo "rxe boot: no vmlinuz or initrd.gz in $rxe (run tests/rxe/parts.sh)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
names=(a b)
n=$#

# The scenario's tar on a sparse raw disk, with a marker that the guest's
# results (written over it) do not hold.
make_disk() {
	local name=$1 scen=$2
	local stage=$out/$name.in
	rm -rf "$stage" "$out/$name" && mkdir -p "$stage" "$out/$name"
	if [ -d "$scen" ]; then
		cp -r "$scen"/. "$stage"/
	else
		cp "$scen" "$stage/run.sh"
	fi
	[ -f "$stage/run.sh" ] || { echo "rxe boot: $scen has no run.sh" >&2; exit 2; }
	for f in ${extra[@]+"${extra[@]}"}; do cp "$f" "$stage/"; done
	# the helpers every guest script may source
	cp "$here/guest_lib.sh" "$stage/"
	touch "$stage/.rxelab-in"
	rm -f "$out/$name.disk"
	tar cf "$out/$name.disk" -C "$stage" .
	truncate -s 256M "$out/$name.disk"
	rm -rf "$stage"
}

# free_ports N: N UDP ports free on 127.0.0.1 now
free_ports() {
	python3 -c 'import socket, sys
s = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}

pids=()
start_guest() {
	local name=$1 i=$2 net=()
	if [ $n = 1 ]; then
		net=(-nic none)
	else
		# Each guest's frames go as UDP datagrams to the other's port: a
		# TCP stream (socket's listen/connect) would hold small frames
		# back (Nagle against delayed ACKs: tens of ms per exchange).
		local me=${ports[$i]} peer=${ports[$((1 - i))]}
		# through the relay: each guest sends to its side of it
		[ -z "$relay" ] || peer=${ports[$((i + 2))]}
		net=(-netdev "socket,id=n0,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$me"
		     -device "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:0$name")
		if [ "$name" = a ] && [ -n "$wire" ]; then
			rm -f "$wire"
			net+=(-object "filter-dump,id=d0,netdev=n0,file=$wire")
		fi
	fi
	timeout -k 5 "$limit" qemu-system-x86_64 -accel "${RXE_LAB_ACCEL:-tcg}" \
		-m 768 -smp 1 -nographic -no-reboot \
		-kernel "$rxe/vmlinuz" -initrd "$rxe/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet rxelab.guest=$name" \
		-drive "file=$out/$name.disk,format=raw,if=virtio" \
		"${net[@]}" </dev/null >"$out/$name.console" 2>&1 &
	pids[$i]=$!
}

ports=()
if [ -n "$relay" ]; then
	[ $n = 2 ] || { echo "rxe boot: -r needs two scenarios" >&2; exit 2; }
	# guest a, guest b, the relay's side a, its side b
	read -r -a ports <<<"$(free_ports 4)"
elif [ $n = 2 ]; then
	read -r -a ports <<<"$(free_ports 2)"
fi
t0=$(date +%s)
for ((i = 0; i < n; i++)); do
	make_disk "${names[$i]}" "$1"
	shift
done
relay_pid=
if [ -n "$relay" ]; then
	rm -f "$out/relay.rc"
	# word splitting is the point: RELAY is a command line
	# shellcheck disable=SC2086
	$relay --a "127.0.0.1:${ports[2]},127.0.0.1:${ports[0]}" \
		--b "127.0.0.1:${ports[3]},127.0.0.1:${ports[1]}" \
		>"$out/relay.txt" 2>&1 &
	relay_pid=$!
	# bound before the guests' first frames (a lost one is only an ARP
	# or neighbour solicitation sent again, but the report counts them)
	sleep 1
	kill -0 $relay_pid 2>/dev/null || {
		echo "rxe boot: the relay ended at once:" >&2
		sed 's/^/  | /' "$out/relay.txt" >&2
		exit 2
	}
fi
for ((i = 0; i < n; i++)); do
	start_guest "${names[$i]}" $i
done

status=0
for ((i = 0; i < n; i++)); do
	name=${names[$i]}
	qrc=0
	wait "${pids[$i]}" || qrc=$?
	tar xf "$out/$name.disk" -C "$out/$name" 2>/dev/null || true
	rm -f "$out/$name.disk"
	if [ -f "$out/$name/.rxelab-in" ] || [ ! -f "$out/$name/rc" ]; then
		why="qemu exit $qrc"
		[ $qrc = 124 ] && why="still running after $limit s, killed"
		echo "rxe boot: guest $name brought no results back ($why); its console:" >&2
		tail -n 15 "$out/$name.console" | sed 's/^/  | /' >&2
		status=2
		continue
	fi
	rc=$(cat "$out/$name/rc")
	echo "rxe boot: guest $name: run.sh exit $rc after $(( $(date +%s) - t0 )) s"
	[ "$rc" = 0 ] || [ $status = 2 ] || status=1
done
if [ -n "$relay_pid" ]; then
	rrc=0
	kill -TERM $relay_pid 2>/dev/null || :
	wait $relay_pid || rrc=$?
	echo $rrc >"$out/relay.rc"
	echo "rxe boot: relay exit $rrc"
fi
exit $status
