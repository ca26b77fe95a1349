#!/bin/sh
# SPDX-License-Identifier: MIT
# The conformance suite against Linux rxe, inside one rxe lab guest (busybox
# sh, as the guest's run.sh; tests/rxe/conform.sh ships it with the
# conformance home beside it, conformance/scenarios/ and the list of
# differences): rxe0 on veth0 (10.0.0.1, fd00::1) in the initial network
# namespace with rocemu-agent on it; `rocemu conform` in the namespace
# "peer" on veth1 (10.0.0.2, fd00::2), its UDP sockets the other end of
# rxe's wire. Every scenario runs over IPv4, then over IPv6: the global
# IPv6 address gives rxe0 a RoCEv2 IPv6 GID (rxe sends UDP checksum 0 over
# IPv6, which conform's socket takes). Leaves in OUT: conform.txt (the
# report), conform.rc (its exit status), conform.xml (JUnit), conform.pcap
# (the session), agent.log, gids.txt (rxe0's GID table), and v6.txt when
# IPv6 could not be set up (the reason; conform then runs over IPv4 only
# and the host fails the run).
# Exit 1 when the set-up failed; the report is the host's to judge.
# usage (in the guest): sh conform_guest.sh NAME OUT
set -eu
out=${2:?usage: conform_guest.sh NAME OUT}
ip=/usr/bin/ip
. /in/guest_lib.sh
mkdir -p "$out"

$ip link set lo up
peer_veth
# a jumbo veth gives rxe0 active MTU 4096, for the scenarios that need
# path MTU 2048 or 4096 (the others set their own path MTU, 1024 mostly)
$ip link set veth0 mtu 9000
$ip netns exec peer $ip link set veth1 mtu 9000
/usr/bin/rdma link add rxe0 type rxe netdev veth0
i=0
until ibv_devinfo -v -d rxe0 | grep -q 'GID\[  1\]:.*::ffff:10.0.0.1'; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "conform: rxe0 has no GID 1"; exit 1; }
	sleep 0.1
done
ping -c 1 -W 5 10.0.0.2 >/dev/null || { echo "conform: no IPv4 path to 10.0.0.2"; exit 1; }
# IPv6 after GID 1 is the IPv4 one: fd00::1 takes a later index (the agent
# finds it by its type and form, whatever its index)
v6=1
$ip addr add fd00::1/64 dev veth0 nodad
$ip netns exec peer $ip addr add fd00::2/64 dev veth1 nodad
i=0
until ibv_devinfo -v -d rxe0 | grep -q 'GID\[ *[0-9]*\]:.*fd00::1'; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "conform: rxe0 has no GID fd00::1" >"$out/v6.txt"; v6=0; break; }
	sleep 0.1
done
ibv_devinfo -v -d rxe0 | grep 'GID\[' >"$out/gids.txt" 2>&1 || :
# for the logs only: busybox's ping may not take IPv6; conform tells
{ ping -c 1 -W 5 fd00::2 || ping6 -c 1 -W 5 fd00::2; } >"$out/ping6.txt" 2>&1 || :
local6="--local fd00::2"
[ $v6 = 1 ] || local6=

agent=$(command -v rocemu-agent || echo /rocemu/bin/rocemu-agent)
"$agent" -d rxe0 -g 1 -l 10.0.0.1 -p 18515 >"$out/agent.log" 2>&1 &
apid=$!
rc=0
$ip netns exec peer /rocemu/bin/rocemu conform --agent 10.0.0.1:18515 \
	--local 10.0.0.2 $local6 --dir /in/conformance/scenarios \
	--known /in/conformance/differences.md --junit "$out/conform.xml" \
	--pcap "$out/conform.pcap" >"$out/conform.txt" 2>&1 || rc=$?
# conform refuses to start (2) when the agent names no IPv6 GID: say why,
# and still run IPv4 (the host fails the run for the missing version)
if [ $rc = 2 ] && [ $v6 = 1 ]; then
	{ echo "conform refused both versions:"; tail -n 3 "$out/conform.txt"; } >"$out/v6.txt"
	rc=0
	$ip netns exec peer /rocemu/bin/rocemu conform --agent 10.0.0.1:18515 \
		--local 10.0.0.2 --dir /in/conformance/scenarios \
		--known /in/conformance/differences.md --junit "$out/conform.xml" \
		--pcap "$out/conform.pcap" >"$out/conform.txt" 2>&1 || rc=$?
fi
echo $rc >"$out/conform.rc"
kill $apid 2>/dev/null || :
wait $apid 2>/dev/null || :
tail -n 3 "$out/conform.txt"
[ ! -f "$out/v6.txt" ] || cat "$out/v6.txt"
