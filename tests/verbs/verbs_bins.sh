#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's unmodified verbs binaries on rocemu: LD_LIBRARY_PATH is the whole
# set-up. Two processes on one host, ROCEMU_ADDR=127.0.0.2 and 127.0.0.3.
# usage: tests/verbs/verbs_bins.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_bins.sh BUILD_DIR}" && pwd)
work=$build/verbs_bins
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0 port=18700

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

. "$(dirname "$0")/../lib/udp_port_free.sh"
udp_4791_free verbs_bins 127.0.0.2 127.0.0.3

. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"

for b in ibv_devices ibv_devinfo ibv_rc_pingpong ibv_uc_pingpong \
	 ibv_ud_pingpong ibv_srq_pingpong; do
	command -v $b >/dev/null || { bad "$b missing (Debian package ibverbs-utils)"; }
done
env -u LD_PRELOAD ldd "$(command -v ibv_rc_pingpong)" | grep -q "$build/lib/libibverbs.so.1" \
	&& ok || bad "ibv_rc_pingpong does not load rocemu's libibverbs.so.1"

ROCEMU_ADDR=127.0.0.2 ibv_devices >"$work/devices" 2>&1 && ok || bad "ibv_devices"
grep -q rocemu0 "$work/devices" && ok || bad "ibv_devices does not list rocemu0"
ROCEMU_ADDR=127.0.0.2 ibv_devinfo -v >"$work/devinfo" 2>&1 && ok || bad "ibv_devinfo -v"
for want in "hca_id:	rocemu0" "PORT_ACTIVE (4)" "link_layer:		Ethernet" \
	    "GID[  0]:		fe80::7fff:fe00:2, RoCE v2" \
	    "GID[  1]:		::ffff:127.0.0.2, RoCE v2"; do
	grep -qF "$want" "$work/devinfo" && ok || bad "ibv_devinfo: no '$want'"
done

# two GIDFLAG WANT NAME BINARY ARGS...: server on .2, client on .3, both
# exit 0 and the client's output holds WANT.
two() {
	local gid=$1 want=$2 name=$3
	shift 3
	port=$((port + 1))
	ROCEMU_ADDR=127.0.0.2 timeout 60 "$@" $gid ${GIDX:-1} -p $port \
		>"$work/$name.server" 2>&1 &
	local spid=$!
	wait_listen $port
	ROCEMU_ADDR=127.0.0.3 timeout 60 "$@" $gid ${GIDX:-1} -p $port 127.0.0.1 \
		>"$work/$name.client" 2>&1
	local crc=$?
	wait $spid
	local src=$?
	if [ $crc = 0 ] && [ $src = 0 ] && grep -q -- "$want" "$work/$name.client"; then
		ok
	else
		bad "$name: client exit $crc, server exit $src"
		tail -n 3 "$work/$name.client" "$work/$name.server"
	fi
}
pp() { two -g "iters in" "$@"; }

for kind in rc uc srq; do
	for m in 1024 4096; do
		for s in 1 4096 65536; do
			pp "$kind-s$s-m$m" ibv_${kind}_pingpong -m $m -s $s -n 200
		done
		pp "$kind-e-m$m" ibv_${kind}_pingpong -m $m -e -n 200
	done
done
# Enough iterations to wrap the rings many times over.
pp rc-wrap ibv_rc_pingpong -n 20000 -s 64
for m in 1024 4096; do
	pp "ud-m$m" env ROCEMU_MTU=$m ibv_ud_pingpong -s $((m / 2)) -n 300
	pp "ud-e-m$m" env ROCEMU_MTU=$m ibv_ud_pingpong -e -s $m -n 300
done

# GID index 0, the link-local address of each device's MAC, which no
# interface here holds: the packets still reach the other process.
GIDX=0 pp rc-gid0 ibv_rc_pingpong -n 200 -s 4096
GIDX=0 pp ud-gid0 ibv_ud_pingpong -n 200 -s 512
GIDX=0 two -x "#bytes" ib_send_bw-gid0 ib_send_bw -n 300 -s 65536

# perftest over its own TCP exchange (not -R), GID index 1 as on rxe.
perf() { two -x "#bytes" "$@"; }

for t in ib_write_bw ib_read_bw ib_send_bw; do
	perf "$t" $t -n 300 -s 65536
done
perf ib_atomic_bw ib_atomic_bw -n 300
for t in ib_write_lat ib_read_lat ib_send_lat; do
	perf "$t" $t -n 500
done

# ROCEMU_STATS=1: the device's counters on stderr at exit, once; unset or
# 0, none. 200 round trips of 4096 bytes at MTU 1024, 4 packets a message.
. "$(dirname "$0")/../lib/counters.sh"
port=$((port + 1))
ROCEMU_STATS=1 ROCEMU_ADDR=127.0.0.2 timeout 60 ibv_rc_pingpong -g 1 -p $port \
	-n 200 -s 4096 -m 1024 >"$work/stats.server" 2>"$work/stats.server.err" &
spid=$!
wait_listen $port
ROCEMU_STATS=0 ROCEMU_ADDR=127.0.0.3 timeout 60 ibv_rc_pingpong -g 1 -p $port \
	-n 200 -s 4096 -m 1024 127.0.0.1 >"$work/stats.client" 2>&1 \
	&& ok || bad "ibv_rc_pingpong client beside ROCEMU_STATS"
wait $spid && ok || bad "ibv_rc_pingpong with ROCEMU_STATS=1"
expect_counter stats.server.err tx_packets -ge 800
expect_counter stats.server.err rx_packets -ge 800
expect_counter stats.server.err acks_sent -ge 1
# Zeros included: nothing here drops, NAKs or overruns, and it says so.
# (Retransmits and timeouts are printed too, but a loaded machine may
# hold a thread back past the retry timer: their value is not checked.)
for n in rx_drop_icrc rx_drop_unknown_qp nak_rcvd_psn_seq cq_overruns; do
	expect_counter stats.server.err $n -eq 0
done
for n in retransmits timeouts; do
	expect_counter stats.server.err $n -ge 0
done
grep -q "counter" "$work/stats.client" "$work/rc-s1-m1024.server" \
	&& bad "counters printed without ROCEMU_STATS=1" || ok
# Two contexts on the one device, and a forked child that exits: the
# counters come once, from the parent.
cat >"$work/two_contexts.c" <<'C'
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *a = list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_context *b = a ? ibv_open_device(list[0]) : NULL;
	int status;

	if (!b)
		return 1;
	pid_t child = fork();
	if (child == 0)
		exit(0); /* runs the library's destructor too */
	if (child < 0 || waitpid(child, &status, 0) != child || status)
		return 1;
	ibv_close_device(b);
	ibv_close_device(a);
	ibv_free_device_list(list);
	return 0;
}
C
if cc -Wall -Wextra -Werror -o "$work/two_contexts" "$work/two_contexts.c" -libverbs; then
	ROCEMU_STATS=1 ROCEMU_ADDR=127.0.0.2 timeout 20 "$work/two_contexts" \
		>"$work/two_contexts.out" 2>&1 \
		&& ok || bad "two contexts and a fork: exit $?"
	[ "$(grep -c "^rocemu: counter tx_packets " "$work/two_contexts.out")" = 1 ] \
		&& ok || bad "two contexts and a fork: counters not printed once"
	[ "$(grep -c "^rocemu: counter wire_dropped 0$" "$work/two_contexts.out")" = 1 ] \
		&& ok || bad "two contexts and a fork: wire counters not printed once"
else
	bad "the two-context program does not compile"
fi

# The calls besides the data path: names and rates as the system's own
# libibverbs gives them (the same program, run on both), and rocemu's GID
# table and unsupported features.
calls=$work/verbs_calls
if cc -Wall -Wextra -Werror -o "$calls" "$(dirname "$0")/verbs_calls.c" -libverbs; then
	env -u LD_LIBRARY_PATH -u LD_PRELOAD "$calls" --tables >"$work/tables.sys"
	"$calls" --tables >"$work/tables.rocemu"
	diff "$work/tables.sys" "$work/tables.rocemu" >"$work/tables.diff" \
		&& ok || { bad "names or rates differ from libibverbs'"; head "$work/tables.diff"; }
	ROCEMU_ADDR=127.0.0.2 "$calls" >"$work/calls.out" 2>&1 \
		&& ok || { bad "verbs_calls"; cat "$work/calls.out"; }
	# The calls that need no device, on both libraries: the same answers.
	for lib in sys rocemu; do
		for sysfs in "" /tmp/sysfs//; do
			if [ $lib = sys ]; then
				set -- env -u LD_LIBRARY_PATH -u LD_PRELOAD
			else
				set -- env
			fi
			"$@" ${sysfs:+SYSFS_PATH=$sysfs} "$calls" --driver \
				>"$work/driver.$lib.out" 2>&1 \
				&& ok || { bad "verbs_calls --driver on $lib's library" \
					"(SYSFS_PATH=$sysfs): exit $?"; cat "$work/driver.$lib.out"; }
		done
	done
else
	bad "tests/verbs/verbs_calls.c does not compile"
fi

echo "verbs_bins: $pass passed, $fail failed"
[ "$fail" = 0 ]
