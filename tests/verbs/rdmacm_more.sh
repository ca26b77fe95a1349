#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# More of Debian's rdma_cm programs, unmodified, between two processes on
# the drop-ins (libibverbs.so.1 and librdmacm.so.1 in BUILD_DIR/lib), each
# on its own loopback address: rping -q (the application's own QP: an id
# without a QP connects with conn_param.qp_num, moves the QP through
# rdma_init_qp_attr and ends with rdma_establish; -V checks the data) and
# rdma_server/rdma_client (rdma_create_ep with QP attributes, a SEND each
# way). A program passes when server and client both exit 0 (and rping's
# -V found no bad data).
# usage: tests/verbs/rdmacm_more.sh BUILD_DIR SERVER_ADDR CLIENT_ADDR
set -u
build=$(cd "${1:?usage: rdmacm_more.sh BUILD_DIR SERVER CLIENT}" && pwd)
server=${2:?} client=${3:?}
work=$build/rdmacm_more
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
. "$(dirname "$0")/../lib/verbs_env.sh"
. "$(dirname "$0")/../lib/wait_listen.sh"
. "$(dirname "$0")/../lib/rdmacm_pair.sh"

rdmacm_need rdmacm_more rping rdma_server rdma_client
rdmacm_run rping_q "rping -s -q -a $server -C 10 -S 100 -V" \
	"rping -c -q -a $server -I $client -C 10 -S 100 -V" "data mismatch\|failed"
rdmacm_run rdma_server "rdma_server -s $server" "rdma_client -s $server" \
	"data mismatch\|failed"
echo "rdmacm_more: $pass passed, $fail failed"
[ $fail = 0 ]
