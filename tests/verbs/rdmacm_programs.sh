#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's rdma_cm programs, unmodified, between two processes on the
# drop-ins (libibverbs.so.1 and librdmacm.so.1 in BUILD_DIR/lib), each on
# its own loopback address: ucmatose (RC, two connections, ten messages
# each way) and udaddy (UD through SIDR); perftest's -R has its own test,
# tests/verbs/rdmacm_perftest.sh. A program passes when server and client
# both exit 0 (and report "return status 0" where they print one).
# usage: tests/verbs/rdmacm_programs.sh BUILD_DIR SERVER_ADDR CLIENT_ADDR
set -u
build=$(cd "${1:?usage: rdmacm_programs.sh BUILD_DIR SERVER CLIENT}" && pwd)
server=${2:?} client=${3:?}
work=$build/rdmacm_programs
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"
. "$(dirname "$0")/../lib/rdmacm_pair.sh"

rdmacm_need rdmacm_programs ucmatose udaddy
rdmacm_run ucmatose "ucmatose -b $server -c 2 -C 10 -S 1000" \
	"ucmatose -s $server -b $client -c 2 -C 10 -S 1000" "return status [1-9]"
rdmacm_run udaddy "udaddy -b $server -c 2 -C 10 -S 500" \
	"udaddy -s $server -b $client -c 2 -C 10 -S 500" "return status [1-9]"
echo "rdmacm_programs: $pass passed, $fail failed"
[ $fail = 0 ]
