#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# UCX (Debian's 1.13, unmodified) on rocemu's device under rocemu run, each
# process on its own address:
#   info             ucx_info -d lists rocemu0:1 with rc_verbs and ud_verbs
#   perftest TL A B  ucx_perftest am_lat and put_lat over TL (rc_verbs,
#                    ud_verbs) between a server on A and a client on B:
#                    both exit 0 with their results
#   sockaddr A B     Debian's ucp_client_server example connects by socket
#                    address through UCX's rdmacm connection manager (server
#                    on A, client on B) and moves its tagged messages
# usage: tests/verbs/ucx_run.sh BUILD_DIR info ADDR
#        tests/verbs/ucx_run.sh BUILD_DIR perftest TL SERVER_ADDR CLIENT_ADDR
#        tests/verbs/ucx_run.sh BUILD_DIR sockaddr SERVER_ADDR CLIENT_ADDR
set -u
build=$(cd "${1:?usage: ucx_run.sh BUILD_DIR MODE ...}" && pwd)
mode=${2:?mode: info, perftest or sockaddr}
shift 2
work=$build/ucx_run_$mode${1:+_$1}
rm -rf "$work" && mkdir -p "$work/tmp"
. "$(dirname "$0")/../lib/cli_lib.sh"
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/ucx_tsan.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"
rocemu=$build/bin/rocemu
export TMPDIR=$work/tmp
# UCX picks its transports and device itself otherwise; these keep it on
# rocemu0 (and off shared memory, which two namespaces do not share).
export UCX_NET_DEVICES=rocemu0:1

# A rocemu run in the background whose pid is in $!, output in $work/NAME.
bg_run() {
	local name=$1 addr=$2
	shift 2
	timeout 300 "$rocemu" run --addr "$addr" -- "$@" >"$work/$name" 2>&1 &
}

case $mode in
info)
	"$rocemu" run --addr "${1:?ADDR}" -- ucx_info -d >"$work/info" 2>&1 && ok ||
		{ bad "ucx_info -d"; tail -n 20 "$work/info"; }
	for tl in rc_verbs ud_verbs; do
		awk -v tl="$tl" '/Transport:/ { t = $NF } /Device:/ && t == tl { print $NF }' \
			"$work/info" | grep -qx 'rocemu0:1' && ok ||
			bad "ucx_info -d: no $tl on rocemu0:1"
	done
	expect_grep "$work/info" "Memory domain: rocemu0" "ucx_info -d: rocemu0's memory domain"
	;;
perftest)
	tl=${1:?TL} srv=${2:?SERVER_ADDR} cli=${3:?CLIENT_ADDR} port=13460
	[ "$tl" = ud_verbs ] && port=13461
	# Short active messages (inline), then copied data of 512 bytes: a
	# put over rc_verbs, active messages over ud_verbs (which has no put).
	second=put_lat
	[ "$tl" = ud_verbs ] && second=am_bw
	for t in am_lat $second; do
		args="-t $t -x $tl -d rocemu0:1 -n 500 -s 32"
		[ $t = am_lat ] || args="-t $t -x $tl -d rocemu0:1 -n 500 -D bcopy -s 512"
		bg_run "srv_$t" "$srv" ucx_perftest -p $port $args
		spid=$!
		wait_listen $port || bad "$t over $tl: the server never listened"
		timeout 300 "$rocemu" run --addr "$cli" -- ucx_perftest 127.0.0.1 -p $port \
			$args >"$work/cli_$t" 2>&1 && ok ||
			{ bad "$t over $tl: the client failed"; tail -n 20 "$work/cli_$t"; }
		wait $spid && ok || { bad "$t over $tl: the server failed"; tail -n 20 "$work/srv_$t"; }
		grep -Eq '^Final: +500 ' "$work/cli_$t" && ok ||
			bad "$t over $tl: no 'Final: 500' line in the client's results"
	done
	;;
sockaddr)
	srv=${1:?SERVER_ADDR} cli=${2:?CLIENT_ADDR} port=13462
	ex=/usr/share/doc/libucx-dev/examples
	cc -O1 -o "$work/ucp_client_server" -I$ex $ex/ucp_client_server.c -lucp -lucs \
		2>"$work/cc.err" && ok || { bad "cc ucp_client_server.c"; cat "$work/cc.err"; }
	# rdmacm first; rc_verbs and ud_verbs the transports on rocemu0.
	export UCX_SOCKADDR_TLS_PRIORITY=rdmacm UCX_TLS=rc_verbs,ud_verbs
	# The server serves clients until it is stopped; its lines unbuffered so
	# that the test sees it listen.
	bg_run srv "$srv" stdbuf -oL "$work/ucp_client_server" -l "$srv" -p $port -c tag -i 3
	spid=$!
	for _ in $(seq 600); do
		grep -q "Waiting for connection" "$work/srv" 2>/dev/null && break
		sleep 0.1
	done
	expect_grep "$work/srv" "Waiting for connection" "the server listens"
	timeout 300 "$rocemu" run --addr "$cli" -- "$work/ucp_client_server" -a "$srv" \
		-p $port -c tag -i 3 >"$work/cli" 2>&1 && ok ||
		{ bad "the client failed"; tail -n 20 "$work/cli"; }
	# The server prints a message it received once per second iteration.
	for _ in $(seq 600); do
		[ "$(grep -c "UCX data message was received" "$work/srv")" -ge 2 ] && break
		sleep 0.1
	done
	kill -TERM $spid
	wait $spid
	expect_grep "$work/srv" "Server received a connection request from client at address $cli" \
		"the server's connection request came from the client's address"
	[ "$(grep -c "UCX data message was received" "$work/srv")" -ge 2 ] && ok ||
		{ bad "the server did not receive both of its messages"; cat "$work/srv"; }
	expect_grep "$work/cli" "ABCDEFGHIJKLMNO" "the client received the server's message"
	;;
*)
	bad "unknown mode $mode"
	;;
esac

echo "ucx_run $mode: $pass passed, $fail failed"
[ "$fail" = 0 ]
