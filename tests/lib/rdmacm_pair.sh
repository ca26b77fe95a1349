# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154 # work, server, client: set by the test that sources this
# Runs Debian's rdma_cm programs as a server and a client on the drop-ins,
# for tests/verbs/rdmacm_programs.sh and rdmacm_more.sh. Source it after
# setting: work (the test's folder), server and client (the two loopback
# addresses), pass=0 fail=0, and after sourcing verbs_env.sh and
# wait_listen.sh.

# rdmacm_need NAME PROGRAM...: fails the test NAME at once, saying which
# package to install, when a program is missing.
rdmacm_need() {
	local name=$1 p
	shift
	for p in "$@"; do
		command -v "$p" >/dev/null || {
			echo "FAIL: no $p (install rdmacm-utils: make deps)"
			echo "$name: 0 passed, 1 failed"
			exit 1
		}
	done
}

# rdmacm_run NAME "SERVER ARGS" "CLIENT ARGS" BAD: the server in the
# background (ROCEMU_ADDR=$server), the client after it
# (ROCEMU_ADDR=$client); a client rejected because it came before the
# listener tries again. Passes when both exit 0 and no line of either's
# output matches BAD (grep -i, basic regular expression).
rdmacm_run() {
	local name=$1 sargs=$2 cargs=$3 bad=$4 spid try crc src f
	# shellcheck disable=SC2086
	ROCEMU_ADDR=$server timeout 60 $sargs >"$work/$name.server" 2>&1 &
	spid=$!
	# it listens from its device's start on (rdma_listen follows its
	# bind at once)
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
		! grep -qi -- "$bad" "$work/$name.server" "$work/$name.client"; then
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
