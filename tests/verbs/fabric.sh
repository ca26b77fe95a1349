#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's fi_pingpong (libfabric-bin), unmodified, between two processes
# on the drop-ins (libibverbs.so.1 and librdmacm.so.1 in BUILD_DIR/lib),
# each on its own loopback address, with its data check on (-c): libfabric's
# verbs provider with FI_EP_MSG (RC through rdma_cm), FI_EP_DGRAM (UD, with
# an rdma_cm event channel in its event queue) and FI_EP_RDM over
# "verbs;ofi_rxm" (RDM on MSG connections). fi_pingpong's server names no
# address: the provider binds "localhost", which the drop-in takes as its
# loopback device. A run passes when server and client both exit 0 and the
# client printed its result line.
# usage: tests/verbs/fabric.sh BUILD_DIR SERVER_ADDR CLIENT_ADDR [CTRL_PORT]
set -u
build=$(cd "${1:?usage: fabric.sh BUILD_DIR SERVER CLIENT [CTRL_PORT]}" && pwd)
server=${2:?} client=${3:?}
# fi_pingpong's own TCP control connection (server: any address)
ctrl=${4:-$((47000 + ${server##*.}))}
work=$build/fabric
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"
# Under TSAN=1: libfabric's own name-server thread (FI_EP_DGRAM's AV),
# not instrumented, takes a lock in a thread-exit destructor after the
# ThreadSanitizer runtime has let go of that thread, and the process
# dies (SIGSEGV in the runtime) once the test is over. The name server
# only serves address lookups fi_pingpong does not make.
case ${LD_PRELOAD:-} in
*libtsan*) export FI_VERBS_DGRAM_USE_NAME_SERVER=0 ;;
esac

command -v fi_pingpong >/dev/null || {
	echo "FAIL: no fi_pingpong (install libfabric-bin: make deps)"
	echo "fabric: 0 passed, 1 failed"
	exit 1
}

# run NAME PROVIDER EP_TYPE
run() {
	local name=$1 prov=$2 ep=$3 spid crc src
	# fi_pingpong polls its CQ without end when the peer is gone, and
	# does not stop on SIGTERM there: hence timeout's -k
	local args=(-p "$prov" -e "$ep" -I 10 -S 1024 -c)
	ROCEMU_ADDR=$server timeout -k 5 60 fi_pingpong "${args[@]}" -B "$ctrl" \
		>"$work/$name.server" 2>&1 &
	spid=$!
	wait_listen "$ctrl"
	ROCEMU_ADDR=$client timeout -k 5 60 fi_pingpong "${args[@]}" -P "$ctrl" \
		"$server" >"$work/$name.client" 2>&1
	crc=$?
	wait $spid
	src=$?
	if [ $crc = 0 ] && [ $src = 0 ] &&
		grep -q "^1k *10 *=10 " "$work/$name.client"; then
		pass=$((pass + 1))
		echo "ok   $name"
	else
		fail=$((fail + 1))
		echo "FAIL: $name: server exit $src, client exit $crc"
		tail -n 8 "$work/$name.server" | sed 's/^/  server: /'
		tail -n 8 "$work/$name.client" | sed 's/^/  client: /'
	fi
}

run msg verbs msg
run dgram verbs dgram
run rdm "verbs;ofi_rxm" rdm
echo "fabric: $pass passed, $fail failed"
[ $fail = 0 ]
