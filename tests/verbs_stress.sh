#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Many threads on shared QPs, CQs and an SRQ through rocemu's libibverbs.so.1
# (tests/verbs_stress.c), built as a user builds a verbs program, with plain
# cc against the system's <infiniband/verbs.h> and -libverbs. One process,
# one device at 127.0.0.40 (UDP port 4791), which no other test uses.
# usage: tests/verbs_stress.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: verbs_stress.sh BUILD_DIR}" && pwd)
work=$build/verbs_stress
rm -rf "$work" && mkdir -p "$work"

# The program prints its own closing line; these are for when it cannot.
give_up() {
	echo "FAIL: $*"
	echo "verbs_stress: 0 passed, 1 failed"
	exit 1
}

if ! cc -Wall -Wextra -Werror -O2 -pthread -o "$work/verbs_stress" \
	"$(dirname "$0")/verbs_stress.c" -libverbs 2>"$work/cc.out"; then
	cat "$work/cc.out"
	give_up "tests/verbs_stress.c does not compile"
fi

. "$(dirname "$0")/verbs_env.sh"
# Under a sanitizer every call costs several times more: fewer operations
# per thread, the same threads and checks.
ops=3000
[ -n "${LD_PRELOAD:-}" ] && ops=1000
ROCEMU_ADDR=127.0.0.40 timeout 200 "$work/verbs_stress" -n $ops -t 30 \
	>"$work/out" 2>&1
rc=$?
grep -v '^ok ' "$work/out"
case $rc in
0 | 1) grep -q '^verbs_stress: [0-9]* passed' "$work/out" ||
	give_up "verbs_stress ended without its closing line" ;;
124) give_up "verbs_stress did not finish in 200 s" ;;
*) give_up "verbs_stress exit $rc (a crash, or a sanitizer's report above)" ;;
esac
exit $rc
