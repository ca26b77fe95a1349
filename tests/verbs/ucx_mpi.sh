#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Open MPI over UCX (--mca pml ucx, UCX on rc_verbs and ud_verbs only) on
# rocemu's device under rocemu run: tests/verbs/ucx_mpi_pingpong.c, built
# with mpicc, exchanges messages of 1 B to 64 KiB and checks every byte.
# With one address, one rank (which opens rocemu0: its counters file is
# written); with two, two ranks, each on its own address (an MPMD command
# line: every process still needs an address of its own), whose traffic
# crosses rocemu's wire.
# usage: tests/verbs/ucx_mpi.sh BUILD_DIR ADDR [ADDR2]
set -u
build=$(cd "${1:?usage: ucx_mpi.sh BUILD_DIR ADDR [ADDR2]}" && pwd)
a1=${2:?ADDR} a2=${3:-}
work=$build/ucx_mpi
rm -rf "$work" && mkdir -p "$work/tmp"
. "$(dirname "$0")/../lib/cli_lib.sh"
. "$(dirname "$0")/../lib/verbs_env.sh"
# UCX 1.13 does not start with ThreadSanitizer's runtime preloaded (Debian's
# ucx_info -d dies of SIGSEGV so, rocemu or not): under TSAN=1 nothing here
# can run; the SAN=1 and plain builds run it.
case ${LD_PRELOAD:-} in
*libtsan*)
	echo "$(basename "$0"): left out under ThreadSanitizer: UCX does not start with its runtime"
	exit 0 ;;
esac
export TMPDIR=$work/tmp
pp=$work/ucx_mpi_pingpong
mpicc -O1 -Wall -Werror -o "$pp" "$(dirname "$0")/ucx_mpi_pingpong.c" 2>"$work/cc.err" && ok ||
	{ bad "mpicc ucx_mpi_pingpong.c"; cat "$work/cc.err"; }
mpi=(mpirun --allow-run-as-root --oversubscribe --mca pml ucx --mca btl ^openib
     -x UCX_NET_DEVICES=rocemu0:1 -x UCX_TLS=self,rc_verbs,ud_verbs)
if [ -z "$a2" ]; then
	timeout 300 "$build/bin/rocemu" run --addr "$a1" -- "${mpi[@]}" -np 1 \
		env ROCEMU_STATS="$work/stats" "$pp" 5 >"$work/out" 2>&1 && ok ||
		{ bad "mpirun -np 1 under rocemu run"; tail -n 20 "$work/out"; }
	expect_grep "$work/out" "1 ranks, 45 round trips" "one rank: every exchange checked"
	grep -q '^counter tx_packets ' "$work/stats" 2>/dev/null && ok ||
		bad "the rank did not open rocemu0 (no counters in $work/stats)"
else
	timeout 300 "$build/bin/rocemu" run --addr "$a1" -- "${mpi[@]}" \
		-np 1 env ROCEMU_ADDR="$a1" ROCEMU_STATS="$work/stats" "$pp" 5 : \
		-np 1 env ROCEMU_ADDR="$a2" "$pp" 5 >"$work/out" 2>&1 && ok ||
		{ bad "mpirun, two ranks, under rocemu run"; tail -n 20 "$work/out"; }
	expect_grep "$work/out" "2 ranks, 45 round trips" "two ranks: every exchange checked"
	tx=$(awk '$2 == "tx_packets" { print $3 }' "$work/stats" 2>/dev/null)
	[ "${tx:-0}" -gt 45 ] && ok || bad "rank 0 sent ${tx:-no} packets on rocemu0"
fi
echo "ucx_mpi: $pass passed, $fail failed"
[ "$fail" = 0 ]
