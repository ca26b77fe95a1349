#!/bin/sh
# SPDX-License-Identifier: MIT
# The rxe side of the golden captures, run inside each of two rxe lab guests
# (busybox sh, as the guest's run.sh; tests/rxe/golden_lab.sh ships it with
# scenarios.sh beside it). Guest "a" is the server, 10.0.0.1; guest "b" the
# client, 10.0.0.2; each has rxe0 on its eth0 (MTU 1500, so path MTU 1024
# is what the programs ask for and get) and uses GID 1, ::ffff:10.0.0.x.
# The server records each scenario with tcpdump on eth0: the wire as the
# server sees it, one capture per scenario (scenarios.sh). Guest a then
# takes rocemu's side of the loss scenario (both ends in a namespace).
# usage (in the guest): sh golden_guest.sh a|b OUT
# Leaves OUT/golden/<scenario>.{pcap,server.log,client.log} (and on a,
# OUT/golden-rocemu/loss.*); exit 1 when a
# scenario's programs failed or the guests could not reach each other.
set -eu
name=${1:?usage: golden_guest.sh a|b OUT}
out=${2:?usage: golden_guest.sh a|b OUT}
ip=/usr/bin/ip
case $name in
a) me=10.0.0.1 peer=10.0.0.2 role=server capture=tcpdump:eth0 ;;
b) me=10.0.0.2 peer=10.0.0.1 role=client capture=none ;;
*) echo "golden: guest name must be a or b, not $name"; exit 1 ;;
esac

$ip addr add $me/24 dev eth0
$ip link set eth0 up
/usr/bin/rdma link add rxe0 type rxe netdev eth0
i=0
until ibv_devinfo -v -d rxe0 | grep -q "GID\[  1\]:.*::ffff:$me"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "golden: rxe0 has no GID 1 for $me"; exit 1; }
	sleep 0.1
done
# the other guest may still be booting
i=0
until ping -c 1 -W 1 $peer >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 60 ] || { echo "golden: no IPv4 path to $peer"; exit 1; }
done
echo "golden: guest $name ($role, $me) sees $peer; $(uname -r)"

# The loss scenario drops on the client's eth0 (scenarios.sh --drop).
rc=0
sh ./scenarios.sh --role $role --server 10.0.0.1 --capture $capture \
	--drop eth0 rxe "$out/golden" || rc=$?

# rocemu's side of the loss scenario needs the same drop, which tc gives
# here and not on every host: guest a runs both of rocemu's ends in a
# network namespace of its own, dropping on its loopback.
if [ $name = a ]; then
	$ip netns add golden
	$ip netns exec golden $ip link set lo up
	$ip netns exec golden sh ./scenarios.sh --lib /rocemu/lib --only loss \
		--drop lo rocemu "$out/golden-rocemu" || rc=1
fi
exit $rc
