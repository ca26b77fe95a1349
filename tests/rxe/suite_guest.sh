#!/bin/sh
# SPDX-License-Identifier: MIT
# rdma-core's test suite on Linux rxe, run inside one rxe lab guest (busybox
# sh, as the guest's run.sh; tests/rxe/suite.sh ships it with root/, the
# Python that runs the suite with its modules, pyverbs and the libraries
# they link, at their host paths; tests/, rdma-core's tests; suite.py).
# rxe0 sits on veth0 (10.0.0.1; its peer veth1 up for the carrier), as
# rdma link add makes it on any Ethernet device. Leaves OUT/rxe.tsv (one
# line per test, suite.py run's format) and OUT/rxe.tsv.log (the suite's
# own output). Exit 1 when the suite could not run.
# usage (in the guest): sh run.sh NAME OUT [IDLE BUDGET]
set -eu
out=${2:?usage: run.sh NAME OUT}
idle=${3:-120} budget=${4:-600}
ip=/usr/bin/ip
# root/ at /, each file the guest lacks (not over a library in use)
(cd /in/root && find . ! -type d) | while read -r f; do
	[ -e "/$f" ] || [ -L "/$f" ] && continue
	mkdir -p "$(dirname "/$f")"
	cp -a "/in/root/$f" "/$f"
done
$ip link add veth0 type veth peer name veth1
$ip addr add 10.0.0.1/24 dev veth0
$ip link set veth1 up
$ip link set veth0 up
/usr/bin/rdma link add rxe0 type rxe netdev veth0
i=0
until ibv_devinfo -v -d rxe0 | grep -q 'GID\[  1\]:.*::ffff:10.0.0.1'; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "suite: rxe0 has no GID 1"; exit 1; }
	sleep 0.1
done
/usr/bin/python3 -c 'import pyverbs.device' ||
	{ echo "suite: the guest's Python cannot import pyverbs"; exit 1; }
/usr/bin/python3 /in/suite.py run --tests /in/tests --dev rxe0 \
	--out "$out/rxe.tsv" --idle "$idle" --budget "$budget"
