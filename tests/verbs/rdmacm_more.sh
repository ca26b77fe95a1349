#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# More of Debian's rdma_cm programs, unmodified, between two processes on
# the drop-ins (libibverbs.so.1 and librdmacm.so.1 in BUILD_DIR/lib), each
# on its own loopback address: rping -q (the application's own QP: an id
# without a QP connects with conn_param.qp_num, moves the QP through
# rdma_init_qp_attr and ends with rdma_establish; -V checks the data) and
# rdma_server/rdma_client (rdma_create_ep with QP attributes, a SEND each
# way). A program passes when server and client both exit 0 (and rping's
# -V found no bad data).
# usage: tests/verbs/rdmacm_more.sh BUILD_DIR SERVER_ADDR CLIENT_ADDR
set -u
build=$(cd "${1:?usage: rdmacm_more.sh BUILD_DIR SERVER CLIENT}" && pwd)
server=${2:?} client=${3:?}
work=$build/rdmacm_more
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"

# run NAME "SERVER ARGS" "CLIENT ARGS": the server in the background
# (ROCEMU_ADDR=$server), the client after it (ROCEMU_ADDR=$client); a
# client rejected because it came before the listener tries again.
run() {
	local name=$1 sargs=$2 cargs=$3 spid try crc src
	# shellcheck disable=SC2086
	ROCEMU_ADDR=$server timeout 60 $sargs >"$work/$name.server" 2>&1 &
	spid=$!
	wait_udp_4791 "$server"
	for try in 1 2 3 4 5; do
		# shellcheck disable=SC2086
		ROCEMU_ADDR=$client timeout 60 $cargs >"$work/$name.client.$try" 2>&1
		crc=$?
		cp "$work/$name.client.$try" "$work/$name.client"
		# rejected: no listener yet
		grep -q "REJECTED" "$work/$name.client" || break
		sleep 0.5
	done
	wait $spid
	src=$?
	if [ $crc = 0 ] && [ $src = 0 ] &&
		! grep -qi "data mismatch\|failed" "$work/$name.server" "$work/$name.client"; then
		pass=$((pass + 1))
		echo "ok   $name"
	else
		fail=$((fail + 1))
		echo "FAIL: $name: server exit $src, client exit $crc"
		tail -n 8 "$work/$name.server" | sed 's/^/  server: /'
		for f in "$work/$name.client".*; do
			tail -n 8 "$f" | sed "s/^/  client (try ${f##*.}, exit $crc if last): /"
		done
	fi
}

for p in rping rdma_server rdma_client; do
	command -v $p >/dev/null || {
		echo "FAIL: no $p (install rdmacm-utils: make deps)"
		echo "rdmacm_more: 0 passed, 1 failed"
		exit 1
	}
done
run rping_q "rping -s -q -a $server -C 10 -S 100 -V" \
	"rping -c -q -a $server -I $client -C 10 -S 100 -V"
run rdma_server "rdma_server -s $server" "rdma_client -s $server"
echo "rdmacm_more: $pass passed, $fail failed"
[ $fail = 0 ]
