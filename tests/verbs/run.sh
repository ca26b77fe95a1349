#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds one verbs test program as a user builds one (plain cc against the
# system's <infiniband/verbs.h>, -libverbs), runs it on rocemu's
# libibverbs.so.1 with its device on the address the test owns, and judges
# it: it passes when the program exits 0 and its closing line
# "NAME: [N passed, ]0 failed" is there (NAME: the source's name without .c),
# and every check asked for below holds. What each test needs besides is an
# option (tests/TESTLIST gives them).
# usage: tests/verbs/run.sh BUILD_DIR SOURCE.c --addr ADDR [OPTION]... [-- ARG...]
#   --addr ADDR       ROCEMU_ADDR: the device's address (the one the test owns)
#   --pair            link examples/pair.c (the connected pair of the examples)
#   --cflags FLAGS    more cc flags (-pthread, -O2)
#   --libs LIBS       more libraries, after the sources (-lrdmacm)
#   --timeout S       the program is killed after S seconds (default 120)
#   --pcap            record the run (ROCEMU_PCAP=WORK/NAME.pcap); it must read back
#   --trace           record its trace (ROCEMU_TRACE=WORK/NAME.trace)
#   --stats           its counters file (ROCEMU_STATS=WORK/NAME.stats)
#   --dump-has RE     the capture's dump holds a line matching RE (implies --pcap)
#   --san-args ARGS   the program's arguments under a sanitizer, instead of
#                     those after -- (every call costs several times more)
#   --tsan-env VAR=V  exported when the drop-in carries ThreadSanitizer
#   --then SCRIPT     a further check: SCRIPT BUILD_DIR WORK_DIR, run after
#                     the program; it fails the test when it exits non-zero
# WORK_DIR is BUILD_DIR/NAME; the program's output is WORK_DIR/out and err.
# Prints the program's failures and one closing line, "NAME: ..."; exits 1
# on a failure, 2 on bad usage.
set -u
usage() {
	echo "usage: tests/verbs/run.sh BUILD_DIR SOURCE.c --addr ADDR [--pair]" \
		"[--cflags FLAGS] [--libs LIBS] [--timeout S] [--pcap] [--trace] [--stats] [--dump-has RE]" \
		"[--san-args ARGS] [--tsan-env VAR=V] [--then SCRIPT] [-- ARG...]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
build=$(cd "$1" && pwd) || usage
source=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
addr="" pair="" cflags="" libs="" limit=120 pcap=0 trace=0 stats=0 dump_re="" san_args=""
tsan_env="" then=""
set_args=0
while [ $# -gt 0 ]; do
	case $1 in
	--addr) addr=${2:?}; shift ;;
	--pair) pair=$top/examples/pair.c ;;
	--cflags) cflags=${2?}; shift ;;
	--libs) libs=${2?}; shift ;;
	--timeout) limit=${2:?}; shift ;;
	--pcap) pcap=1 ;;
	--trace) trace=1 ;;
	--stats) stats=1 ;;
	--dump-has) dump_re=${2:?}; pcap=1; shift ;;
	--san-args) san_args=${2?}; set_args=1; shift ;;
	--tsan-env) tsan_env=${2:?}; shift ;;
	--then) then=${2:?}; shift ;;
	--) shift; break ;;
	*) echo "run.sh: unknown option $1" >&2; usage ;;
	esac
	shift
done
[ -n "$addr" ] || usage
name=$(basename "$source" .c)

# The closing lines for when the program cannot give its own.
give_up() {
	echo "FAIL: $*"
	echo "$name: 0 passed, 1 failed"
	exit 1
}

[ -f "$source" ] || give_up "$source: no such program"
work=$build/$name
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2086 # the flags and libraries are words
if ! cc -Wall -Wextra -Werror $cflags -o "$work/$name" "$source" $pair \
	$libs -libverbs 2>"$work/cc.out"; then
	cat "$work/cc.out"
	give_up "$source does not compile"
fi

. "$top/tests/lib/verbs_env.sh"
sanitizer=""
if nm -D "$build/lib/libibverbs.so.1" | grep -q __asan_init; then
	sanitizer=asan
elif nm -D "$build/lib/libibverbs.so.1" | grep -q __tsan_init; then
	sanitizer=tsan
	[ -n "$tsan_env" ] && export "${tsan_env?}" &&
		echo "$name: under ThreadSanitizer, $tsan_env"
fi
export VERBS_SANITIZER=$sanitizer
if [ -n "$sanitizer" ] && [ $set_args = 1 ]; then
	# shellcheck disable=SC2086 # the arguments are words
	set -- $san_args
	echo "$name: under a sanitizer, arguments: $san_args"
fi

# The program's own environment: what runs after it (rocemu dump, the
# --then script) records nothing.
env=(ROCEMU_ADDR="$addr")
[ $pcap = 1 ] && env+=(ROCEMU_PCAP="$work/$name.pcap")
[ $trace = 1 ] && env+=(ROCEMU_TRACE="$work/$name.trace")
[ $stats = 1 ] && env+=(ROCEMU_STATS="$work/$name.stats")
env "${env[@]}" timeout "$limit" "$work/$name" "$@" >"$work/out" 2>"$work/err"
rc=$?
grep -v "^device\|^QP .* ready\|^ok " "$work/out"
cat "$work/err"
closing="^$name: \([0-9]* passed, \)\?[0-9]* failed"
case $rc in
0) ;;
124) give_up "$name hung (killed after $limit s)" ;;
*) grep -q "$closing" "$work/out" ||
	give_up "$name exit status $rc before its closing line (a crash, or a sanitizer's report above)" ;;
esac
grep -q "$closing" "$work/out" || give_up "$name exited 0 without its closing line"
last=$(grep "$closing" "$work/out" | tail -n 1)
if [ $rc != 0 ] || ! echo "$last" | grep -q " 0 failed$"; then
	echo "FAIL: $name: exit status $rc: $last"
	exit 1
fi
if [ $pcap = 1 ]; then
	if ! "$build/bin/rocemu" dump "$work/$name.pcap" >"$work/dump" 2>&1; then
		echo "FAIL: the capture does not read back: $(tail -n 1 "$work/dump")"
		give_up "$name's capture"
	fi
	if [ -n "$dump_re" ] && ! grep -q -- "$dump_re" "$work/dump"; then
		give_up "no line matching '$dump_re' in the capture's dump"
	fi
fi
# The script runs without the sanitizer's runtime preloaded: a shell
# under ThreadSanitizer's crashes (the build's own programs carry theirs).
if [ -n "$then" ] && ! env -u LD_PRELOAD "$then" "$build" "$work"; then
	give_up "$then found a failure (above)"
fi
echo "$name: passed (its program: ${last#"$name: "})"
