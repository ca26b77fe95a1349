#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's rdma_cm programs, unmodified, with server and client on ONE
# device address (docs/sharing.md): rping (RC, ten checked pings), ucmatose
# (RC, two connections) and udaddy (UD through SIDR), each a server and a
# client process on the drop-ins, and rping through 127.0.0.1 (the host's
# own device, as Linux resolves a loopback destination). Then a second
# rping server on the listening one's port in another process is refused
# (EADDRINUSE, as Linux's one port space refuses it) and the first still
# serves.
# usage: tests/verbs/rdmacm_share.sh BUILD_DIR ADDR
set -u
build=$(cd "${1:?usage: rdmacm_share.sh BUILD_DIR ADDR}" && pwd)
server=${2:?usage: rdmacm_share.sh BUILD_DIR ADDR} client=$2
work=$build/rdmacm_share
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"
. "$(dirname "$0")/../lib/rdmacm_pair.sh"

rdmacm_need rdmacm_share rping ucmatose udaddy
rdmacm_run rping "rping -s -a $server -p 18711 -C 10 -V" \
	"rping -c -a $server -p 18711 -C 10 -V" "error\|fail"
rdmacm_run ucmatose "ucmatose -b $server -c 2 -C 10 -S 1000" \
	"ucmatose -s $server -b $client -c 2 -C 10 -S 1000" "return status [1-9]"
rdmacm_run udaddy "udaddy -b $server -c 2 -C 10 -S 500" \
	"udaddy -s $server -b $client -c 2 -C 10 -S 500" "return status [1-9]"
# 127.0.0.1 is the host's own device, whatever its address (as Linux
# resolves a loopback destination): a server bound there and a client
# sent there meet on the device (rdma-core's rdma_cm tests do this).
rdmacm_run rping_lo "rping -s -a 127.0.0.1 -p 18713 -C 5 -V" \
	"rping -c -a 127.0.0.1 -p 18713 -C 5 -V" "error\|fail"

# A second listener on the port, in another process: refused.
ROCEMU_ADDR=$server timeout 60 rping -s -a "$server" -p 18712 -C 3 -V \
	>"$work/first" 2>&1 &
first=$!
wait_udp_4791 "$server"
for i in $(seq 100); do # its listener is up once a second one is refused
	ROCEMU_ADDR=$server timeout 20 rping -s -a "$server" -p 18712 -C 1 \
		>"$work/second" 2>&1
	grep -qi "address already in use" "$work/second" && break
	sleep 0.1
done
if grep -qi "address already in use" "$work/second"; then
	pass=$((pass + 1))
	echo "ok   second listener refused"
else
	fail=$((fail + 1))
	echo "FAIL: a second rping server on the port was not refused:"
	tail -n 5 "$work/second" | sed 's/^/  /'
fi
ROCEMU_ADDR=$client timeout 60 rping -c -a "$server" -p 18712 -C 3 -V \
	>"$work/client3" 2>&1 && wait $first && pass=$((pass + 1)) &&
	echo "ok   the first listener still serves" || {
	fail=$((fail + 1))
	echo "FAIL: the first listener after the refusal:"
	tail -n 5 "$work/first" "$work/client3" | sed 's/^/  /'
}
echo "rdmacm_share: $pass passed, $fail failed"
[ $fail = 0 ]
