# SPDX-License-Identifier: MIT
# Sourced by the tests that bind UDP port 4791 on fixed loopback addresses.
# udp_4791_free NAME ADDR...: when one of the addresses cannot have the port
# (already bound, or not an address of this host), says which and why, by
# whom and what to do if it is taken, and ends the test with exit 1 at once,
# instead of each run failing (or waiting for its peer) on its own.
udp_4791_free() {
	local name=$1 a err rc
	shift
	for a in "$@"; do
		# The same bind the device makes (no SO_REUSEADDR), so the
		# verdict is the kernel's own; exit 2 means already in use.
		err=$(env -u LD_PRELOAD python3 -c '
import errno, socket, sys
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).bind((sys.argv[1], 4791))
except OSError as e:
    print(e.strerror)
    sys.exit(2 if e.errno == errno.EADDRINUSE else 1)' "$a" 2>&1)
		rc=$?
		[ $rc = 0 ] && continue
		echo "$name: cannot bind $a UDP port 4791: $err"
		[ $rc = 2 ] || exit 1
		ss -Hulnp "sport = :4791" 2>/dev/null |
			grep -F -e " $a:4791 " -e " 0.0.0.0:4791 " -e " *:4791 " \
				-e " [::]:4791 " -e " [::ffff:$a]:4791 " |
			sed "s/^/$name:   bound: /"
		echo "$name: another rocemu, a program on rocemu's libibverbs," \
			"a test running at the same time or an rxe device binds" \
			"it: stop it or let it finish, then run again"
		exit 1
	done
}
