#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu dump -i and check -i: a live capture on the loopback interface of the test's
# own network namespace sees what two rocemu devices exchange (the same
# packets one of them records itself), ends cleanly on SIGINT with its
# summary, stops after -c N, and without the capture privilege says so and
# what to run. Needs root (tests/lib/isolated.sh gives a namespace of its own);
# skipped, saying why, otherwise.
# usage: tests/cli/live_cli.sh BUILD_DIR
set -u
build=${1:?usage: live_cli.sh BUILD_DIR}
rocemu=$build/bin/rocemu
work=$build/live_cli
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/../lib/cli_lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "live_cli: skipped: capturing on an interface needs root"
	exit 0
fi
. "$(dirname "$0")/../lib/udp_port_free.sh"
udp_4791_free live_cli 127.0.0.2 127.0.0.3

# Waits for the dump to say it is capturing (its first line on stderr).
wait_capturing() {
	for _ in $(seq 100); do
		grep -q "capturing RoCEv2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Histogram of opcodes in a dump's per-packet lines: "OPCODE COUNT".
opcodes() {
	awk '$2 ~ /^[0-9.]+$/ && $6 ~ /^[A-Z]+_/ { n[$6]++ }
	     END { for (o in n) print o, n[o] }' "$1" | sort
}

# 1. A live dump of a ping run, ended by SIGINT
"$rocemu" dump -i lo >"$work/live.txt" 2>"$work/live.err" &
dpid=$!
if ! wait_capturing "$work/live.err"; then
	bad "dump -i lo did not start capturing"; cat "$work/live.err"
fi
timeout 60 "$rocemu" ping --no-offload -n 20 -s 3000 --addr 127.0.0.2 --port 18701 \
	>"$work/server.txt" 2>&1 &
spid=$!
timeout 60 "$rocemu" ping --no-offload -n 20 -s 3000 --addr 127.0.0.3 --port 18701 \
	--wait 20 --pcap "$work/client.pcap" 127.0.0.2 >"$work/client.txt" 2>&1
crc=$?
wait $spid
[ $crc = 0 ] && [ $? = 0 ] && ok || bad "ping pair failed ($crc)"
sleep 0.5	# the last packets reach the capture's buffer timeout
kill -INT $dpid
wait $dpid
drc=$?
[ $drc = 0 ] && ok || { bad "dump -i ended with $drc"; cat "$work/live.err"; }
grep -q '^summary: ' "$work/live.txt" && ok || bad "no summary after SIGINT"
"$rocemu" dump "$work/client.pcap" >"$work/recorded.txt"
opcodes "$work/recorded.txt" >"$work/recorded.ops"
opcodes "$work/live.txt" >"$work/live.ops"
if [ -s "$work/recorded.ops" ] && cmp -s "$work/recorded.ops" "$work/live.ops"; then
	ok
else
	bad "live opcodes differ from what the device recorded"
	diff "$work/recorded.ops" "$work/live.ops" | head
fi
grep -q 'ICRC ok [1-9][0-9]*, ICRC bad 0' "$work/live.txt" && ok ||
	bad "live ICRC counts: $(grep ICRC "$work/live.txt")"

# 2. -c N ends a live dump by itself after N packets
"$rocemu" dump -i lo -c 3 >"$work/count.txt" 2>"$work/count.err" &
dpid=$!
wait_capturing "$work/count.err" || bad "dump -i lo -c 3 did not start"
timeout 60 "$rocemu" ping --no-offload -n 5 -s 64 --addr 127.0.0.2 --port 18702 \
	>/dev/null 2>&1 &
spid=$!
timeout 60 "$rocemu" ping --no-offload -n 5 -s 64 --addr 127.0.0.3 --port 18702 \
	--wait 20 127.0.0.2 >/dev/null 2>&1
wait $spid
for _ in $(seq 50); do kill -0 $dpid 2>/dev/null || break; sleep 0.1; done
if kill -0 $dpid 2>/dev/null; then
	bad "dump -i -c 3 still runs"; kill $dpid
fi
wait $dpid
n=$(awk '$2 ~ /^[0-9.]+$/ && $6 ~ /^[A-Z]+_/' "$work/count.txt" | wc -l)
[ "$n" = 3 ] && ok || bad "dump -i -c 3 printed $n packets"

# 3. rocemu check -i: a clean ping run, then a packet whose ICRC cannot
# match (rxe's SEND sent between other addresses, which the ICRC covers,
# and its last byte changed) sent by the test itself, judged as they come;
# SIGINT ends it with the summary and the exit status of what it saw
"$rocemu" check -i lo >"$work/check.txt" 2>"$work/check.err" &
cpid=$!
wait_capturing "$work/check.err" || bad "check -i lo did not start"
timeout 60 "$rocemu" ping --no-offload -n 10 -s 2000 --addr 127.0.0.2 --port 18703 \
	>/dev/null 2>&1 &
spid=$!
timeout 60 "$rocemu" ping --no-offload -n 10 -s 2000 --addr 127.0.0.3 --port 18703 \
	--wait 20 127.0.0.2 >/dev/null 2>&1
wait $spid
python3 - pcaps/rxe/rc_send_64.pcap <<'PY'
import socket, struct, sys
data = open(sys.argv[1], "rb").read()
incl = struct.unpack("<I", data[24 + 8:24 + 12])[0]
frame = bytearray(data[24 + 16:24 + 16 + incl])
payload = frame[14 + 20 + 8:]
payload[-1] ^= 0xff
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(bytes(payload), ("127.0.0.9", 4791))
PY
sleep 0.5
kill -INT $cpid
wait $cpid
crc=$?
[ $crc = 1 ] && ok || bad "check -i with a bad ICRC seen ended with $crc"
grep -q 'ICRC' "$work/check.txt" && ok || bad "check -i: no ICRC finding"
grep -q ' 1 rule violations' "$work/check.txt" && ok ||
	bad "check -i summary: $(tail -n 1 "$work/check.txt")"
grep -q '^flow 0 RC 127.0.0.[23] qp 0x11 <> 127.0.0.[23] qp 0x11: [1-9][0-9]* packets' \
	"$work/check.txt" && ok || bad "check -i: no line for the ping's flow"

# 4. Errors a user can act on
"$rocemu" dump -i nosuch0 >/dev/null 2>"$work/nodev.err"
[ $? = 2 ] && grep -q 'nosuch0: no such interface' "$work/nodev.err" && ok ||
	bad "unknown interface: $(cat "$work/nodev.err")"
"$rocemu" dump -i lo "$work/client.pcap" >/dev/null 2>&1
[ $? = 2 ] && ok || bad "-i with a file too was accepted"
"$rocemu" check -i nosuch0 >/dev/null 2>"$work/nodev2.err"
[ $? = 2 ] && grep -q 'nosuch0: no such interface' "$work/nodev2.err" && ok ||
	bad "check -i unknown interface: $(cat "$work/nodev2.err")"
if unshare -r true 2>/dev/null; then
	# a user namespace's root holds no privilege over this network
	unshare -r "$rocemu" dump -i lo >/dev/null 2>"$work/perm.err"
	[ $? = 2 ] && grep -q 'capture privilege' "$work/perm.err" &&
		grep -q 'setcap cap_net_raw' "$work/perm.err" && ok ||
		bad "no privilege: $(cat "$work/perm.err")"
else
	echo "live_cli: the no-privilege case skipped: unshare -r not allowed"
fi

echo "live_cli: $pass passed, $fail failed"
[ $fail = 0 ]
