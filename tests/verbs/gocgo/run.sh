#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A signal-heavy Go/cgo program on rocemu's libibverbs.so.1 (main.go): it
# is built with the system's go and cgo against <infiniband/verbs.h>
# (-libverbs), with its caches under BUILD_DIR and no network, then run on
# the drop-in with its device on ADDR and nothing else set up. It passes
# when the program checked all N completions under its rain of SA_RESTART
# signals and left by os.Exit(0), and its ROCEMU_PCAP capture, written by
# a process that ran no C destructors, reads back with the N SENDs in it
# (N distinct PSNs to the receiving QP).
# usage: tests/verbs/gocgo/run.sh BUILD_DIR ADDR [N]
set -u
build=$(cd "${1:?usage: run.sh BUILD_DIR ADDR [N]}" && pwd)
addr=${2:?usage: run.sh BUILD_DIR ADDR [N]} n=${3:-2000}
src=$(cd "$(dirname "$0")" && pwd)
work=$build/gocgo
rm -rf "$work" && mkdir -p "$work/home"
. "$src/../../lib/cli_lib.sh"

command -v go >/dev/null || {
	echo "gocgo: skipped: no go (Debian package golang-go)"
	exit 0
}
# Everything go writes stays under the build; stdlib and cgo only, so no
# module is fetched.
export HOME=$work/home GOCACHE=$work/cache GOPATH=$work/gopath \
	GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on CGO_ENABLED=1
(cd "$src" && go build -o "$work/gocgo" .) >"$work/build.err" 2>&1 || {
	cat "$work/build.err"
	echo "FAIL: go build of tests/verbs/gocgo"
	echo "gocgo: 0 passed, 1 failed"
	exit 1
}

# After the build: under SAN=1 the sanitizer's runtime is preloaded, and
# go's own tools need not run with it.
. "$src/../../lib/verbs_env.sh"
case ${LD_PRELOAD:-} in
*libtsan*)
	# ThreadSanitizer sees none of the Go scheduler's synchronisation (Go
	# code is not instrumented): a goroutine that moves from one OS thread
	# to another between two verbs calls shows as a data race in the
	# drop-in (ibv_create_qp on one thread, ibv_post_send on the next).
	echo "gocgo: left out under ThreadSanitizer: it cannot see Go's scheduler order its threads"
	exit 0 ;;
esac
ROCEMU_ADDR=$addr ROCEMU_PCAP=$work/gocgo.pcap timeout 300 \
	"$work/gocgo" "$n" >"$work/out" 2>&1
rc=$?
cat "$work/out"
[ $rc = 0 ] && ok || bad "gocgo exit status $rc"
expect_grep "$work/out" "gocgo: $n sends, $n completions," \
	"every completion checked"
sent=$(sed -n 's/.* \([0-9]*\) signals sent.*/\1/p' "$work/out")
[ "${sent:-0}" -gt 0 ] && ok || bad "no count of signals sent in its summary"

qpn=$(sed -n 's/^gocgo: .* qpn \([0-9]*\)$/\1/p' "$work/out")
if ! "$build/bin/rocemu" dump "$work/gocgo.pcap" >"$work/dump" 2>&1; then
	bad "the capture does not read back after os.Exit: $(tail -n 1 "$work/dump")"
elif [ -z "$qpn" ]; then
	bad "no receiving QP number in the program's output"
else
	# Each SEND once per PSN: a retransmission would be counted once.
	got=$(grep "RC_SEND_ONLY dqpn 0x$(printf %06x "$qpn") " "$work/dump" |
		awk '{ print $10 }' | sort -u | wc -l)
	[ "$got" = "$n" ] && ok ||
		bad "the capture holds $got SENDs to QPN $qpn, want $n"
fi
echo "gocgo: $pass passed, $fail failed"
[ $fail = 0 ]
