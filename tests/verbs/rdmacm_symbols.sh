#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The librdmacm.so.1 drop-in against Debian's librdmacm.so.1: every symbol
# the system library defines, with its version node (RDMACM_1.0 ... 1.3),
# is defined by the drop-in with the same version, because rping, perftest
# and libfabric are linked BIND_NOW and one missing symbol stops them
# loading. Then Debian's rping runs unmodified on the drop-ins as far as
# the connection manager: a server binds, listens and waits; a client
# resolves, makes its QP and reaches rdma_connect. Once the library is
# built with the CM (RDMACM_CM=1), a server and a client also make a whole
# run of three pings.
# usage: tests/verbs/rdmacm_symbols.sh BUILD_DIR SERVER_ADDR CLIENT_ADDR
set -u
build=$(cd "${1:?usage: rdmacm_symbols.sh BUILD_DIR SERVER CLIENT}" && pwd)
server=${2:?} client=${3:?}
sys=$(ldconfig -p | awk '/librdmacm\.so\.1 .*x86-64|librdmacm\.so\.1 \(libc6,x86-64\)/ {print $NF; exit}')
[ -n "$sys" ] || sys=/usr/lib/x86_64-linux-gnu/librdmacm.so.1
ours=$build/lib/librdmacm.so.1
work=$build/rdmacm_symbols
rm -rf "$work" && mkdir -p "$work"
fail=0

if [ ! -f "$sys" ]; then
	echo "rdmacm_symbols: no system librdmacm.so.1 to compare with" \
		"(install librdmacm1: make deps)"
	echo "rdmacm_symbols: 0 passed, 1 failed"
	exit 1
fi
[ -f "$ours" ] || { echo "FAIL: $ours is not built"; echo "rdmacm_symbols: 0 passed, 1 failed"; exit 1; }

# "VERSION NAME" of every symbol a library defines in an RDMACM node
defined() {
	objdump -T "$1" | awk 'NF >= 2 && $0 !~ /\*UND\*/ && $(NF-1) ~ /^RDMACM_/ {print $(NF-1), $NF}' | sort -u
}
defined "$sys" >"$work/system"
defined "$ours" >"$work/ours"
if [ ! -s "$work/system" ]; then
	echo "FAIL: objdump -T found no RDMACM_ symbol in $sys"
	fail=1
fi
missing=$(comm -23 "$work/system" "$work/ours")
if [ -n "$missing" ]; then
	echo "FAIL: the drop-in lacks $(echo "$missing" | wc -l) of the system's symbols (version name):"
	echo "$missing" | sed 's/^/  /'
	fail=1
fi
echo "rdmacm_symbols: $(wc -l <"$work/system") symbols and version nodes of $sys compared"

# Debian's rping, unmodified (BIND_NOW: it does not start if one is missing).
rping_whole_run() {
	# The server's -a address makes its device (no ROCEMU_ADDR:
	# docs/dropin.md); it listens once that device holds UDP 4791. A
	# client that still comes too early is rejected (no listener yet)
	# and tries again, so a slow start does not fail the test.
	timeout 60 rping -s -a "$server" -C 3 -v -V >"$work/server.out" 2>&1 &
	local spid=$! try crc src
	wait_udp_4791 "$server"
	for try in 1 2 3 4 5; do
		ROCEMU_ADDR=$client timeout 60 rping -c -a "$server" -I "$client" \
			-C 3 -v -V >"$work/client.out" 2>&1
		crc=$?
		grep -q "REJECTED" "$work/client.out" || break
		sleep 0.5
	done
	wait $spid
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ] ||
		[ "$(grep -c "ping data" "$work/client.out")" != 3 ]; then
		echo "FAIL: rping server (exit $src) and client (exit $crc), -C 3 -V:"
		sed 's/^/  server: /' "$work/server.out"
		sed 's/^/  client: /' "$work/client.out"
		fail=1
	fi
}

rping_without_cm() {
	# Built without the CM (RDMACM_CM=0): a server binds, listens and
	# waits; a client gets as far as rdma_connect, which says so.
	timeout 3 rping -s -a "$server" -C 1 >"$work/server.out" 2>&1
	local rc=$?
	if [ $rc != 124 ]; then
		echo "FAIL: rping -s -a $server exited $rc before a client came:"
		sed 's/^/  /' "$work/server.out"
		fail=1
	fi
	ROCEMU_ADDR=$client timeout 20 rping -c -a "$server" -I "$client" -C 1 \
		>"$work/client.out" 2>&1
	if ! grep -q "rdma_connect: Function not implemented" "$work/client.out"; then
		echo "FAIL: rping -c without the CM should fail in rdma_connect with ENOSYS:"
		sed 's/^/  /' "$work/client.out"
		fail=1
	fi
}

if ! command -v rping >/dev/null; then
	echo "FAIL: no rping (install rdmacm-utils: make deps)"
	fail=1
else
	. "$(dirname "$0")/../lib/verbs_env.sh"
	. "$(dirname "$0")/../lib/wait_listen.sh"
	if nm -D "$build/lib/libibverbs.so.1" | grep -q " rocemu_cm_listen"; then
		rping_whole_run
	else
		rping_without_cm
	fi
fi
echo "rdmacm_symbols: $((1 - fail)) passed, $fail failed"
exit $fail
