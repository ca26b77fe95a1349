#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Captures of two processes on ONE device address (docs/sharing.md): an
# ibv_rc_pingpong server and client, each recording ROCEMU_PCAP. Each
# capture holds both directions, the other process's sends as they
# arrived and its own as they left, each packet once: a datagram from the
# device's own address is not taken for one the process itself sent.
# usage: tests/verbs/share_pcap.sh BUILD_DIR ADDR
set -u
build=$(cd "${1:?usage: share_pcap.sh BUILD_DIR ADDR}" && pwd)
addr=${2:?usage: share_pcap.sh BUILD_DIR ADDR}
work=$build/share_pcap
rm -rf "$work" && mkdir -p "$work"
n=20 port=18721 pass=0 fail=0
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"

command -v ibv_rc_pingpong >/dev/null || {
	echo "share_pcap: skipped: no ibv_rc_pingpong (Debian package ibverbs-utils)"
	exit 0
}
ROCEMU_ADDR=$addr ROCEMU_PCAP=$work/server.pcap timeout 60 \
	ibv_rc_pingpong -g 1 -p $port -n $n -s 512 >"$work/server.out" 2>&1 &
spid=$!
wait_listen $port
ROCEMU_ADDR=$addr ROCEMU_PCAP=$work/client.pcap timeout 60 \
	ibv_rc_pingpong -g 1 -p $port -n $n -s 512 127.0.0.1 >"$work/client.out" 2>&1
crc=$?
wait $spid
src=$?
if [ $crc != 0 ] || [ $src != 0 ]; then
	echo "FAIL: ibv_rc_pingpong on one address: server $src, client $crc"
	tail -n 3 "$work/server.out" "$work/client.out" | sed 's/^/  /'
	echo "share_pcap: 0 passed, 1 failed"
	exit 1
fi
# The QPNs each side printed ("local address: ... QPN 0x0011, ...").
qpn() { sed -n "s/^ *$1 address: .*QPN \(0x[0-9a-f]*\),.*/\1/p" "$work/server.out"; }
sq=$(qpn local) cq=$(qpn remote)
for side in server client; do
	if ! "$build/bin/rocemu" dump "$work/$side.pcap" >"$work/$side.dump" 2>&1; then
		fail=$((fail + 1))
		echo "FAIL: $side's capture does not read back: $(tail -n 1 "$work/$side.dump")"
		continue
	fi
	# A SEND to each side's QP: exactly n of each (the program sends n
	# each way; the capture holds each once).
	for to in "$sq" "$cq"; do
		got=$(grep -c "RC_SEND_ONLY dqpn 0x$(printf %06x $((to)))" "$work/$side.dump")
		if [ "$got" = $n ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: $side's capture holds $got SENDs to QPN $to, want $n"
		fi
	done
done
echo "share_pcap: $pass passed, $fail failed"
[ $fail = 0 ]
