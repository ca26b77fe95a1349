#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a command in a network namespace of its own, with only a loopback
# interface (up), when it can (root, and unshare allowed); as it is
# otherwise. make check runs each network test this way: the tests bind
# fixed loopback addresses (127.0.0.2:4791 and others), so two runs at once
# (a SAN and a plain build, two worktrees) would take each other's ports.
# A private mount namespace goes with it, so that `ip netns` inside works.
# usage: tests/lib/isolated.sh COMMAND [ARG...]
set -eu
if [ "$(id -u)" = 0 ] &&
   unshare -n -m --propagation private true 2>/dev/null; then
	exec unshare -n -m --propagation private \
		sh -c 'ip link set lo up && exec "$@"' sh "$@"
fi
exec "$@"
