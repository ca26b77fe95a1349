#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds each program in examples/ as a user would, with plain cc against the
# system's <infiniband/verbs.h> and -libverbs, and runs it on rocemu. Each
# example checks its own results and exits non-zero when they are wrong.
# usage: tests/verbs/examples.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: examples.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../../examples" && pwd)
work=$build/examples
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

. "$(dirname "$0")/../lib/udp_port_free.sh"
udp_4791_free examples 127.0.0.4

# Linked against the system library, as any verbs program is, and before
# rocemu's library is in the path: the binaries are the user's own.
for c in "$src"/*.c; do
	name=$(basename "$c" .c)
	[ "$name" = pair ] && continue
	# two processes each: tests/verbs/learn_pair.sh runs them
	case $name in *_server_client) continue ;; esac
	if cc -Wall -Wextra -Werror -o "$work/$name" "$c" "$src/pair.c" \
		-libverbs 2>"$work/$name.cc"; then
		ok
	else
		bad "$name does not compile"; cat "$work/$name.cc"
	fi
done

# Without rocemu's library there is no device (no rxe here): the examples
# must say so and fail, not pass by accident.
if [ -x "$work/send_recv" ]; then
	env -u LD_LIBRARY_PATH "$work/send_recv" >"$work/none.out" 2>&1 \
		&& bad "send_recv passed without a device" || ok
fi

. "$(dirname "$0")/../lib/verbs_env.sh"
export ROCEMU_ADDR=127.0.0.4
for x in "$work"/*; do
	[ -f "$x" ] && [ -x "$x" ] || continue
	name=$(basename "$x")
	if timeout 60 "$x" >"$work/$name.out" 2>&1; then
		ok
	else
		bad "$name exit $?"; tail -n 5 "$work/$name.out"
	fi
done

# The student's view: the trace shows each WQE, packet and CQE, and the
# capture decodes.
ROCEMU_TRACE=1 ROCEMU_PCAP="$work/send_recv.pcap" timeout 60 \
	"$work/send_recv" >"$work/trace.out" 2>&1 || bad "send_recv with trace"
for want in "WQE [0] SEND wr_id 1" "RC_SEND_ONLY" "RC_ACK" \
	    "CQE [0] wr_id 7 RECV SUCCESS" "CQE [0] wr_id 1 SEND SUCCESS"; do
	grep -qF "$want" "$work/trace.out" && ok || bad "trace: no '$want'"
done
env -u LD_PRELOAD "$build/bin/rocemu" dump "$work/send_recv.pcap" \
	>"$work/dump.out" 2>&1 && grep -q "RC_SEND_ONLY" "$work/dump.out" \
	&& ok || bad "rocemu dump of the example's capture"

# IBTA 1.5's ATOMIC WRITE as wr_api sends it: the dump names the opcode
# and shows its RETH (8 bytes) and the 8-byte payload.
ROCEMU_PCAP="$work/wr_api.pcap" timeout 60 "$work/wr_api" \
	>"$work/wr_api.pcap.out" 2>&1 || bad "wr_api with a capture"
env -u LD_PRELOAD "$build/bin/rocemu" dump "$work/wr_api.pcap" \
	>"$work/wr_api.dump" 2>&1 &&
	grep -Eq "RC_ATOMIC_WRITE dqpn .* reth va 0x[0-9a-f]+ rkey 0x[0-9a-f]+ len 8 payload 8 icrc ok" \
		"$work/wr_api.dump" && ok || bad "rocemu dump of ATOMIC_WRITE"

echo "examples: $pass passed, $fail failed"
[ $fail = 0 ]
