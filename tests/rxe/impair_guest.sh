#!/bin/sh
# SPDX-License-Identifier: MIT
# The part impair's guests (busybox sh, as each guest's run.sh;
# tests/rxe/impair.sh boots them with rocemu impair between their NICs):
# rxe on each guest's eth0 (a 10.0.1.1 the server, b 10.0.1.2 the
# client), then ib_write_bw and ib_read_bw, RC, 200 messages of 4096
# bytes at path MTU 1024 (4 packets each), through the relay's faults.
# OUT/perftest.txt gets one line per program, "PROGRAM exit RC", on each
# side; OUT/<program>.{server,client} each side's output.
# usage (in the guest): sh impair_guest.sh a|b OUT
set -eu
name=${1:?usage: impair_guest.sh a|b OUT}
out=${2:?usage: impair_guest.sh a|b OUT}
ip=/usr/bin/ip
tcpdump=/usr/bin/tcpdump
. /in/guest_lib.sh

if [ "$name" = a ]; then me=10.0.1.1; else me=10.0.1.2; fi
$ip addr add $me/24 dev eth0
$ip link set eth0 up
rxe_on rxe0 eth0 $me

port=18900
status=0
for prog in ib_write_bw ib_read_bw; do
	port=$((port + 1))
	f=$out/$prog
	rc=0
	if [ "$name" = a ]; then
		timeout 300 $prog -d rxe0 -x 1 -m 1024 -c RC -F -s 4096 -n 200 \
			-p $port >"$f.server" 2>&1 || rc=$?
	else
		# again while the server does not listen yet
		i=0
		while :; do
			rc=0
			timeout 300 $prog -d rxe0 -x 1 -m 1024 -c RC -F -s 4096 \
				-n 200 -p $port 10.0.1.1 >"$f.client" 2>&1 || rc=$?
			[ $rc != 0 ] && grep -qi 'connect' "$f.client" &&
				[ $i -lt 150 ] || break
			i=$((i + 1))
			sleep 0.3
		done
		grep -E '^ *[0-9]+ +[0-9]+ ' "$f.client" || :
	fi
	echo "$prog exit $rc" | tee -a "$out/perftest.txt"
	[ $rc = 0 ] || status=1
done
exit $status
