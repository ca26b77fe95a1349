#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Open MPI over UCX (--mca pml ucx, UCX on rc_verbs and ud_verbs only) on
# rocemu's device under rocemu run, NP ranks on ONE device address as on
# one NIC (docs/sharing.md): tests/verbs/ucx_mpi_pingpong.c, built with
# mpicc, exchanges messages of 1 B to 64 KiB between every pair of ranks
# and checks every byte; each rank's counters show it sent on rocemu0.
# usage: tests/verbs/ucx_mpi.sh BUILD_DIR ADDR [NP]
set -u
build=$(cd "${1:?usage: ucx_mpi.sh BUILD_DIR ADDR [NP]}" && pwd)
addr=${2:?ADDR} np=${3:-1}
work=$build/ucx_mpi
rm -rf "$work" && mkdir -p "$work/tmp"
. "$(dirname "$0")/../lib/cli_lib.sh"
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/ucx_tsan.sh"
export TMPDIR=$work/tmp
pp=$work/ucx_mpi_pingpong
mpicc -O1 -Wall -Werror -o "$pp" "$(dirname "$0")/ucx_mpi_pingpong.c" 2>"$work/cc.err" && ok ||
	{ bad "mpicc ucx_mpi_pingpong.c"; cat "$work/cc.err"; }
# Each rank's counters to a file of its own (OMPI_COMM_WORLD_RANK).
cat >"$work/rank.sh" <<'RANK'
#!/bin/sh
ROCEMU_STATS=$STATS_DIR/stats.$OMPI_COMM_WORLD_RANK exec "$@"
RANK
chmod +x "$work/rank.sh"
timeout 300 "$build/bin/rocemu" run --addr "$addr" -- \
	mpirun --allow-run-as-root --oversubscribe --mca pml ucx \
	--mca btl ^openib -x UCX_NET_DEVICES=rocemu0:1 \
	-x UCX_TLS=self,rc_verbs,ud_verbs -x STATS_DIR="$work" \
	-np "$np" "$work/rank.sh" "$pp" 5 >"$work/out" 2>&1 && ok ||
	{ bad "mpirun -np $np on $addr under rocemu run"; tail -n 20 "$work/out"; }
expect_grep "$work/out" "$np ranks, 45 exchanges" "$np ranks: every exchange checked"
for r in $(seq 0 $((np - 1))); do
	tx=$(awk '$2 == "tx_packets" { print $3 }' "$work/stats.$r" 2>/dev/null)
	[ "${tx:-0}" -gt 45 ] && ok ||
		bad "rank $r sent ${tx:-no} packets on rocemu0 ($work/stats.$r)"
done
echo "ucx_mpi: $pass passed, $fail failed"
[ "$fail" = 0 ]
