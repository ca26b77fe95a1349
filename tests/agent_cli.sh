#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu-agent on rocemu's drop-in (ROCEMU_ADDR=127.0.0.2), driven through
# its control protocol by tests/agent_cli.py.
# usage: tests/agent_cli.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: agent_cli.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$build/agent_cli
rm -rf "$work" && mkdir -p "$work"
. "$here/udp_port_free.sh"
udp_4791_free agent_cli 127.0.0.2
. "$here/verbs_env.sh"
. "$here/wait_listen.sh"
port=18650
ROCEMU_ADDR=127.0.0.2 "$build/bin/rocemu-agent" -l 127.0.0.1 -p $port >"$work/agent.log" 2>&1 &
apid=$!
wait_listen $port || { echo "agent_cli: rocemu-agent did not listen"; cat "$work/agent.log"; exit 1; }
env -u LD_PRELOAD python3 "$here/agent_cli.py" $port ::ffff:127.0.0.2
rc=$?
kill $apid 2>/dev/null
wait $apid 2>/dev/null
exit $rc
