#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu-agent on rocemu's drop-in (ROCEMU_ADDR=127.0.0.2), driven through
# its control protocol by tests/cli/agent_cli.py; then its guards
# (tests/cli/agent_sec.py): an idle client dropped after --idle-timeout, a
# token asked for and checked, and, in a network namespace this test makes
# itself (root only), the default listener out of reach from an address
# that is not loopback, --listen 0.0.0.0 reachable and warned about.
# usage: tests/cli/agent_cli.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: agent_cli.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
agent=$build/bin/rocemu-agent
. "$here/../lib/verbs_env.sh"
. "$here/../lib/wait_listen.sh"

# start_agent PORT [ARG...]: rocemu-agent on the drop-in; its log in
# $work/agent.PORT.log.
start_agent() {
	local p=$1
	shift
	ROCEMU_ADDR=127.0.0.2 "$agent" -p "$p" "$@" >"$work/agent.$p.log" 2>&1 &
	apid=$!
	wait_listen "$p" || { bad "rocemu-agent did not listen on $p"; cat "$work/agent.$p.log"; }
}
stop_agent() { kill $apid 2>/dev/null; wait $apid 2>/dev/null; }
sec() { env -u LD_PRELOAD python3 "$here/agent_sec.py" "$@"; }

# The part run inside a network namespace of this test's own: lo up, and
# 10.99.0.1 on it, an address of the "machine" that is not loopback.
if [ "${2:-}" = --in-netns ]; then
	work=$build/agent_cli/netns
	mkdir -p "$work"
	. "$here/../lib/cli_lib.sh"
	ip link set lo up && ip addr add 10.99.0.1/32 dev lo || { bad "netns set-up"; exit 1; }
	start_agent 18661
	[ "$(sec probe 10.99.0.1 18661)" = refused ] && ok ||
		bad "the default listener answers on 10.99.0.1"
	[ "$(sec probe 127.0.0.1 18661)" = ok ] && ok || bad "the default listener: not on 127.0.0.1"
	expect_grep "$work/agent.18661.log" "listening on 127.0.0.1:18661" "the default address said"
	stop_agent
	start_agent 18662 --listen 0.0.0.0
	[ "$(sec probe 10.99.0.1 18662)" = ok ] && ok || bad "--listen 0.0.0.0: not on 10.99.0.1"
	expect_grep "$work/agent.18662.log" "warning: anyone who can reach" \
		"--listen 0.0.0.0 without a token is warned about"
	stop_agent
	echo "$pass $fail" >"$work/counts"
	exit 0
fi

work=$build/agent_cli
rm -rf "$work" && mkdir -p "$work"
. "$here/../lib/cli_lib.sh"
. "$here/../lib/udp_port_free.sh"
udp_4791_free agent_cli 127.0.0.2

# ---- the protocol ----
start_agent 18650 -l 127.0.0.1
env -u LD_PRELOAD python3 "$here/agent_cli.py" 18650 ::ffff:127.0.0.2 && ok || bad "agent_cli.py"
stop_agent

# ---- an idle client is dropped; the one behind it is served ----
start_agent 18651 --idle-timeout 1
sec idle 18651 && ok || bad "idle timeout"
expect_grep "$work/agent.18651.log" "idle timeout 1 s" "the timeout said at start"
stop_agent

# ---- a token: from a file, then from the environment ----
printf 's3cr3t-t0ken\n' >"$work/token"
start_agent 18652 --token-file "$work/token"
sec token 18652 s3cr3t-t0ken && ok || bad "token from a file"
stop_agent
ROCEMU_AGENT_TOKEN=env-token start_agent 18653
sec token 18653 env-token && ok || bad "token from ROCEMU_AGENT_TOKEN"
stop_agent
# A token file the agent cannot use is refused at start.
printf 'two words\n' >"$work/bad_token"
expect_exit 2 "a token with a space" -- "$agent" --token-file "$work/bad_token"
expect_grep "$work/err" "token" "a bad token: the message names it"
expect_exit 2 "no token file" -- "$agent" --token-file "$work/none"
expect_exit 2 "a bad idle timeout" -- "$agent" --idle-timeout soon

# ---- the default listener, in a network namespace of this test's own ----
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	# not under the sanitizer preload of verbs_env.sh: this script's own
	# bash would run with ThreadSanitizer's runtime (it crashes there);
	# the script sets the preload again for the agent it starts
	env -u LD_PRELOAD unshare -n "$0" "$build" --in-netns
	read -r p f <"$work/netns/counts" 2>/dev/null || { p=0 f=1; echo "FAIL: netns part"; }
	pass=$((pass + p)) fail=$((fail + f))
else
	echo "agent_cli: the listener's reach: skipped (needs root to make a network namespace)"
fi
echo "agent_cli: $pass passed, $fail failed"
[ $fail = 0 ]
