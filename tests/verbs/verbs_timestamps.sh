#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Completion timestamps through Debian's unmodified ibv_rc_pingpong -t: two
# processes, ROCEMU_ADDR=127.0.0.127 (server) and 127.0.0.128 (client). The
# tool reads a timestamp from each receive completion and prints the
# smallest, largest and mean gap between successive ones in clock cycles.
# usage: tests/verbs/verbs_timestamps.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_timestamps.sh BUILD_DIR}" && pwd)
work=$build/verbs_timestamps
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0 port=18790

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"
. "$(dirname "$0")/../lib/udp_port_free.sh"
command -v ibv_rc_pingpong >/dev/null ||
	{ echo "FAIL: ibv_rc_pingpong missing (Debian package ibverbs-utils)"; exit 1; }
udp_4791_free verbs_timestamps 127.0.0.127 127.0.0.128

# The value after "NAME = " in file F, integer part only.
cycles() { sed -n "s/^$2 = \([0-9]*\).*/\1/p" "$work/$1"; }

# ts NAME ARGS...: ibv_rc_pingpong -t ARGS on both sides; both exit 0 and
# each prints gaps that are positive (no two receives at one time: each
# waits for a round trip) and below the 60 s the run may take: a clock
# going backwards would show as a gap near the top of the 64-bit mask.
ts() {
	local name=$1
	shift
	port=$((port + 1))
	ROCEMU_ADDR=127.0.0.127 timeout 60 ibv_rc_pingpong -t -g 1 -p $port "$@" \
		>"$work/$name.server" 2>&1 &
	local spid=$!
	wait_listen $port
	ROCEMU_ADDR=127.0.0.128 timeout 60 ibv_rc_pingpong -t -g 1 -p $port "$@" \
		127.0.0.1 >"$work/$name.client" 2>&1
	local crc=$? src
	wait $spid
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ]; then
		bad "$name: client exit $crc, server exit $src"
		tail -n 3 "$work/$name.client" "$work/$name.server"
		return
	fi
	local side min max
	for side in client server; do
		min=$(cycles $name.$side "Min receive completion clock cycles")
		max=$(cycles $name.$side "Max receive completion clock cycles")
		if [ -n "$min" ] && [ -n "$max" ] && [ "$min" -gt 0 ] &&
		   [ "$max" -ge "$min" ] && [ "$max" -lt 60000000000 ]; then
			ok
		else
			bad "$name $side: min '$min' max '$max' cycles"
			tail -n 5 "$work/$name.$side"
		fi
	done
}

# Not with -e: there the tool fails when a completion event finds the CQ
# already emptied by its previous poll ("poll CQ failed 2"), a race of
# its own that coalesced events allow on any device.
ts rc-ts -n 200 -s 64
ts rc-ts-4k -n 100 -s 4096 -m 1024

echo "verbs_timestamps: $pass passed, $fail failed"
[ $fail = 0 ]
