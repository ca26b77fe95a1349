#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's perftest with -R (its QPs connected through rdma_cm) between two
# processes on the drop-ins (libibverbs.so.1 and librdmacm.so.1 in
# BUILD_DIR/lib), each on its own loopback address: ib_send_bw, ib_write_bw
# and ib_read_lat, the client started right after its server. A program
# passes when both exit 0 and the client prints its result line.
#
# perftest -R connects twice on one port (keys, then the test's QPs) and
# its server listens for the second only after the first has traded keys:
# a quick client is rejected (no listener, REJ 8, as on Linux) and then
# perftest 4.5 crashes in its own retry. tests/verbs/perftest_listens.c,
# preloaded into both, makes the client's Nth rdma_resolve_addr wait until
# the server's Nth rdma_listen has returned: no sleep, no retry.
# usage: tests/verbs/rdmacm_perftest.sh BUILD_DIR SERVER_ADDR CLIENT_ADDR
set -u
build=$(cd "${1:?usage: rdmacm_perftest.sh BUILD_DIR SERVER CLIENT}" && pwd)
server=${2:?} client=${3:?}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/rdmacm_perftest
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
. "$top/tests/lib/verbs_env.sh"

for p in ib_send_bw ib_write_bw ib_read_lat; do
	command -v $p >/dev/null || {
		echo "FAIL: no $p (install perftest: make deps)"
		echo "rdmacm_perftest: 0 passed, 1 failed"
		exit 1
	}
done
if ! cc -std=gnu11 -D_GNU_SOURCE -O1 -Wall -Wextra -Werror -fPIC -shared \
	-o "$work/perftest_listens.so" "$top/tests/verbs/perftest_listens.c" \
	-ldl 2>"$work/cc.out"; then
	cat "$work/cc.out"
	echo "FAIL: tests/verbs/perftest_listens.c does not build"
	echo "rdmacm_perftest: 0 passed, 1 failed"
	exit 1
fi
export LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$work/perftest_listens.so

# run PROGRAM: the server in the background, the client at once after it;
# the result line: the message size, then the 200 iterations, then numbers
run() {
	local p=$1 spid crc src
	mkdir -p "$work/$p.marks"
	PERFTEST_LISTENS=$work/$p.marks ROCEMU_ADDR=$server timeout 120 \
		"$p" -R -n 200 >"$work/$p.server" 2>&1 &
	spid=$!
	PERFTEST_LISTENS=$work/$p.marks ROCEMU_ADDR=$client timeout 120 \
		"$p" -R -n 200 "$server" >"$work/$p.client" 2>&1
	crc=$?
	wait $spid
	src=$?
	if [ $crc = 0 ] && [ $src = 0 ] &&
		grep -Eq '^ *[0-9]+ +200 +[0-9.]+ ' "$work/$p.client"; then
		pass=$((pass + 1))
		echo "ok   $p -R"
	else
		fail=$((fail + 1))
		echo "FAIL: $p -R: server exit $src, client exit $crc"
		tail -n 8 "$work/$p.server" | sed 's/^/  server: /'
		tail -n 8 "$work/$p.client" | sed 's/^/  client: /'
	fi
}

run ib_send_bw
run ib_write_bw
run ib_read_lat
echo "rdmacm_perftest: $pass passed, $fail failed"
[ $fail = 0 ]
