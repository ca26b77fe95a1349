#!/bin/sh
# SPDX-License-Identifier: MIT
# The conformance suite against Linux rxe, inside one rxe lab guest (busybox
# sh, as the guest's run.sh; tests/rxe/conform.sh ships it with the
# conformance home beside it, conformance/scenarios/ and the list of
# differences): rxe0 on veth0 (10.0.0.1) in the initial network namespace
# with rocemu-agent on it; `rocemu conform` in the namespace "peer" on
# veth1 (10.0.0.2), its UDP socket the other end of rxe's wire. Leaves in
# OUT: conform.txt (the report), conform.rc (its exit status), conform.xml
# (JUnit), conform.pcap (the session), agent.log.
# Exit 1 when the set-up failed; the report is the host's to judge.
# usage (in the guest): sh conform_guest.sh NAME OUT
set -eu
out=${2:?usage: conform_guest.sh NAME OUT}
ip=/usr/bin/ip
. /in/guest_lib.sh
mkdir -p "$out"

$ip link set lo up
peer_veth
/usr/bin/rdma link add rxe0 type rxe netdev veth0
i=0
until ibv_devinfo -v -d rxe0 | grep -q 'GID\[  1\]:.*::ffff:10.0.0.1'; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "conform: rxe0 has no GID 1"; exit 1; }
	sleep 0.1
done
ping -c 1 -W 5 10.0.0.2 >/dev/null || { echo "conform: no IPv4 path to 10.0.0.2"; exit 1; }

agent=$(command -v rocemu-agent || echo /rocemu/bin/rocemu-agent)
"$agent" -d rxe0 -g 1 -l 10.0.0.1 -p 18515 >"$out/agent.log" 2>&1 &
apid=$!
rc=0
$ip netns exec peer /rocemu/bin/rocemu conform --agent 10.0.0.1:18515 \
	--local 10.0.0.2 --dir /in/conformance/scenarios \
	--known /in/conformance/differences.md --junit "$out/conform.xml" \
	--pcap "$out/conform.pcap" >"$out/conform.txt" 2>&1 || rc=$?
echo $rc >"$out/conform.rc"
kill $apid 2>/dev/null || :
wait $apid 2>/dev/null || :
tail -n 1 "$out/conform.txt"
