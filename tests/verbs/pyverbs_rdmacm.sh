#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma-core's own rdma_cm tests (Debian's python3-pyverbs,
# tests/test_rdmacm.py) under rocemu run: they find the device's IP
# through /sys/class/infiniband/rocemu0/device/net/ (skipping every test
# without it, as they do on rxe), then fork a passive and an active
# process that connect through rdma_cm on the one device address and move
# checked data. Each test named below must pass; the multicast ones skip
# (rocemu has no multicast, and says so).
# usage: tests/verbs/pyverbs_rdmacm.sh BUILD_DIR ADDR
set -u
build=$(cd "${1:?usage: pyverbs_rdmacm.sh BUILD_DIR ADDR}" && pwd)
addr=${2:?usage: pyverbs_rdmacm.sh BUILD_DIR ADDR}
py=/usr/bin/python3
src=/usr/share/doc/rdma-core/tests
work=$build/pyverbs_rdmacm
. "$(dirname "$0")/../lib/cli_lib.sh"
$py -c 'import pyverbs.device' 2>/dev/null && [ -f $src/test_rdmacm.py ] || {
	echo "pyverbs_rdmacm: skipped: no rdma-core tests (Debian package python3-pyverbs)"
	exit 0
}
rm -rf "$work" && mkdir -p "$work"
cp -r $src "$work/tests"
gunzip -f "$work"/tests/*.gz
. "$(dirname "$0")/../lib/verbs_env.sh"
case ${LD_PRELOAD:-} in
*libtsan*) # the tests fork the threaded python process, whose children
	# start threads: ThreadSanitizer cannot follow them (pyverbs.sh)
	echo "pyverbs_rdmacm: left out under ThreadSanitizer: forked threaded children"
	exit 0 ;;
esac
(cd "$work" && timeout 600 "$build/bin/rocemu" run --addr "$addr" -- \
	$py tests/run_tests.py --dev rocemu0 -v tests.test_rdmacm) >"$work/out" 2>&1
for t in sync_traffic async_traffic async_reject_traffic async_udp_traffic \
	async_read async_write async_traffic_external_qp; do
	grep -q "^test_rdmacm_$t .*\.\.\. ok$" "$work/out" && ok ||
		bad "test_rdmacm_$t did not pass"
done
for t in async_multicast_traffic async_ex_multicast_traffic \
	async_ex_leave_multicast_traffic; do
	grep -q "^test_rdmacm_$t .*skipped 'Multicast is not supported" "$work/out" &&
		ok || bad "test_rdmacm_$t did not skip for want of multicast"
done
[ "$fail" = 0 ] || tail -n 30 "$work/out"
echo "pyverbs_rdmacm: $pass passed, $fail failed"
[ "$fail" = 0 ]
