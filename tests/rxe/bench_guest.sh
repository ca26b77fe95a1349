#!/bin/sh
# SPDX-License-Identifier: MIT
# make rxe-bench's guests (busybox sh, as each guest's run.sh;
# tests/rxe/bench.sh boots them): the same perftest binaries across the two
# guests' eth0 (a 10.0.1.1 the server, b 10.0.1.2 the client), first on
# Linux rxe (rxe0 on eth0), then on rocemu's drop-in (rdma_rxe unloaded
# first: its UDP port 4791 socket would take rocemu's). Runs, each with
# path MTU 1024:
#   ib_send_lat 64 B, ib_send_bw 64 B, ib_write_bw 64 KiB
# Each side's output goes to OUT/bench/<stack>-<program>.{server,client};
# the client's lines hold the figures. When the initramfs holds perf
# (RXE_LAB_PERF=1 in parts.sh), each guest also profiles itself, the whole
# guest with the kernel, during each run: OUT/bench/<stack>-<program>.<role>.perf
# is perf report's text, by command and object, then by symbol too.
# usage (in the guest): sh bench_guest.sh a|b OUT
set -eu
name=${1:?usage: bench_guest.sh a|b OUT}
out=${2:?usage: bench_guest.sh a|b OUT}
ip=/usr/bin/ip
logs=$out/bench
mkdir -p "$logs"

if [ "$name" = a ]; then me=10.0.1.1; else me=10.0.1.2; fi
$ip link set lo up
$ip addr add $me/24 dev eth0
$ip link set eth0 up
/usr/bin/rdma link add rxe0 type rxe netdev eth0
i=0
until ibv_devinfo -v -d rxe0 | grep -q "GID\[  1\]:.*::ffff:$me"; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "bench: rxe0 has no GID 1"; exit 1; }
	sleep 0.1
done

# Iterations: the guests run in software emulation.
runs="ib_send_lat:-s 64 -n 1000
ib_send_bw:-s 64 -n 5000
ib_write_bw:-s 65536 -n 300"

# prof FILE CMD...: runs CMD, under a whole-guest perf record when perf is
# here; the profile's report goes to FILE.perf.
prof() {
	local f=$1
	shift
	if ! command -v perf >/dev/null; then
		"$@"
		return
	fi
	local rc=0
	perf record -q -a -e cpu-clock -o "$f.data" -- "$@" || rc=$?
	{
		perf report -q -i "$f.data" --stdio --sort comm,dso
		echo
		perf report -q -i "$f.data" --stdio --sort comm,dso,symbol \
			--percent-limit 0.3
	} >"$f.perf" 2>&1 || :
	rm -f "$f.data"
	return $rc
}

# bench STACK DEV PORT: every run, a as the server, b as the client (again while
# the server does not listen yet).
bench() {
	local stack=$1 dev=$2 port=$3
	echo "$runs" | while IFS=: read -r prog opts; do
		port=$((port + 1))
		f=$logs/$stack-$prog
		rc=0
		if [ "$name" = a ]; then
			prof "$f.server" timeout 300 $prog -d $dev -x 1 -m 1024 -F $opts \
				-p $port >"$f.server" 2>&1 || rc=$?
			echo "bench: $stack $prog server exit $rc"
		else
			i=0
			while :; do
				rc=0
				prof "$f.client" timeout 300 $prog -d $dev -x 1 -m 1024 -F $opts \
					-p $port 10.0.1.1 >"$f.client" 2>&1 || rc=$?
				[ $rc != 0 ] && grep -qi 'connect' "$f.client" &&
					[ $i -lt 150 ] || break
				i=$((i + 1))
				sleep 0.3
			done
			echo "bench: $stack $prog client exit $rc"
			grep -E '^ *[0-9]+ +[0-9]+ ' "$f.client" || :
		fi
	done
}

bench rxe rxe0 18700
/usr/bin/rdma link delete rxe0
rmmod rdma_rxe || { echo "bench: cannot unload rdma_rxe"; exit 1; }
export LD_LIBRARY_PATH=/rocemu/lib ROCEMU_ADDR=$me
bench rocemu rocemu0 18800
