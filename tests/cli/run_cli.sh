#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu run as a user meets it: its usage errors; bwrap missing or a
# namespace refused gives the fixing command and exit status 2, the
# program not started; the program's exit status (and 128+signal) is
# rocemu run's; signals sent to rocemu run, and Ctrl-C at a terminal, reach
# the program; the program's environment (the drop-ins first, ROCEMU_ADDR,
# UCX's UD filter off unless the user chose); the installed layout.
# usage: tests/cli/run_cli.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: run_cli.sh BUILD_DIR}" && pwd)
work=$build/run_cli
rm -rf "$work" && mkdir -p "$work/tmp" "$work/nobin" "$work/fakebin"
. "$(dirname "$0")/../lib/cli_lib.sh"
rocemu=$build/bin/rocemu
export TMPDIR=$work/tmp
addr=127.0.0.133

# Usage errors.
expect_exit 2 "no program" -- "$rocemu" run --addr $addr
expect_grep "$work/err" "no program given" "no program: the reason"
expect_exit 2 "a bad address" -- "$rocemu" run --addr 127.0.0.300 -- true
expect_grep "$work/err" "no IPv4 or IPv6 address" "a bad address: the reason"
expect_exit 2 "an unknown option" -- "$rocemu" run --bogus -- true
expect_exit 2 "--addr without an address" -- "$rocemu" run --addr
expect_grep "$work/err" "--addr needs an address" "--addr without an address: the reason"
# A program that is not there: 127 and its name, as a shell says, before
# any namespace is made.
expect_exit 127 "no such program" -- "$rocemu" run --addr $addr -- rocemu-no-such-program
expect_grep "$work/err" "rocemu-no-such-program: no such program" "no such program: its name"
expect_exit 0 "--help" -- "$rocemu" run --help
expect_grep "$work/out" "usage: rocemu run" "--help: the usage"

# No bwrap on PATH: the package to install, status 2, nothing run.
PATH=$work/nobin expect_exit 2 "no bwrap" -- "$rocemu" run --addr $addr -- \
	/bin/sh -c "echo ran >$work/ran_nobwrap"
expect_grep "$work/err" "apt-get install bubblewrap" "no bwrap: the fix"
[ ! -e "$work/ran_nobwrap" ] && ok || bad "no bwrap: the program ran anyway"

# A bwrap that cannot make the namespace (as where unprivileged user
# namespaces are off): the sysctl that fixes it, status 2, nothing run.
cat >"$work/fakebin/bwrap" <<'FAKE'
#!/bin/sh
echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2
exit 1
FAKE
chmod +x "$work/fakebin/bwrap"
PATH=$work/fakebin:/usr/bin:/bin expect_exit 2 "namespace refused" -- \
	"$rocemu" run --addr $addr -- /bin/sh -c "echo ran >$work/ran_refused"
expect_grep "$work/err" "sysctl -w" "namespace refused: the sysctl that fixes it"
expect_grep "$work/err" "could not make the user and mount namespace" "namespace refused: which"
[ ! -e "$work/ran_refused" ] && ok || bad "namespace refused: the program ran anyway"
[ -z "$(ls -A "$work/tmp")" ] && ok || bad "namespace refused: the tree was left in TMPDIR"

# The program's status is rocemu run's.
expect_exit 0 "true" -- "$rocemu" run --addr $addr -- true
expect_exit 7 "exit 7" -- "$rocemu" run --addr $addr -- sh -c 'exit 7'
expect_exit 137 "killed by SIGKILL" -- "$rocemu" run --addr $addr -- sh -c 'kill -KILL $$'

# The program's environment.
"$rocemu" run --addr $addr -- sh -c 'echo "$ROCEMU_ADDR|${LD_LIBRARY_PATH%%:*}|$UCX_UD_VERBS_ETH_DGID_CHECK"' \
	>"$work/env" 2>&1 && ok || bad "rocemu run -- sh -c echo"
expect_grep "$work/env" "$addr|$build/lib|n" "the program's ROCEMU_ADDR, drop-ins and UCX setting"
UCX_UD_VERBS_ETH_DGID_CHECK=y "$rocemu" run --addr $addr -- sh -c 'echo "ucx=$UCX_UD_VERBS_ETH_DGID_CHECK"' \
	>"$work/env2" 2>&1
expect_grep "$work/env2" "ucx=y" "the user's own UCX_UD_VERBS_ETH_DGID_CHECK is kept"

# Installed (<prefix>/bin/rocemu beside <prefix>/lib/rocemu, the layout of
# make install, docs/install-layout.md), the drop-ins come from there; with
# none beside it, status 2 and where it looked.
inst=$work/prefix
mkdir -p "$inst/bin" "$inst/lib/rocemu" "$work/bare/bin"
cp "$rocemu" "$inst/bin/" && cp "$build/lib/libibverbs.so.1" "$build/lib/librdmacm.so.1" "$inst/lib/rocemu/"
"$inst/bin/rocemu" run --addr $addr -- sh -c 'echo "lib=${LD_LIBRARY_PATH%%:*}"' >"$work/env3" 2>&1 && ok ||
	bad "the installed rocemu run failed: $(cat "$work/env3")"
expect_grep "$work/env3" "lib=$inst/lib/rocemu" "installed: the drop-ins of <prefix>/lib/rocemu"
cp "$rocemu" "$work/bare/bin/"
expect_exit 2 "no drop-ins beside rocemu" -- "$work/bare/bin/rocemu" run --addr $addr -- true
expect_grep "$work/err" "no libibverbs.so.1 drop-in" "no drop-ins: the reason"

# (Not SIGINT: a background job of a script starts with SIGINT ignored,
# and rocemu run leaves the program the dispositions it was given, as
# any exec does; the terminal's Ctrl-C is checked below.)
# A signal sent to rocemu run reaches the program, whose handler's exit
# status comes back. No timing: the test waits for the program to say it
# is ready (up to 60 s), then for it to end.
for sig in TERM HUP USR1; do
	rm -f "$work/ready" "$work/got"
	"$rocemu" run --addr $addr -- sh -c "trap 'echo $sig >$work/got; exit 5' $sig; echo >$work/ready; while :; do sleep 0.1; done" &
	pid=$!
	for _ in $(seq 600); do [ -e "$work/ready" ] && break; sleep 0.1; done
	[ -e "$work/ready" ] || bad "SIG$sig: the program never started"
	kill -$sig $pid
	wait $pid
	st=$?
	[ "$st" = 5 ] && ok || bad "SIG$sig: rocemu run exited $st, wanted the program's 5"
	expect_grep "$work/got" "$sig" "SIG$sig: the program's handler ran"
done

# Ctrl-C at a terminal: the terminal signals its whole foreground process
# group (rocemu run, bwrap, the program); bwrap's own process dies of it,
# and rocemu run still waits for the program and returns its status (the
# handler takes a moment, so the program outlives bwrap).
cat >"$work/ctrlc.py" <<'PY'
import os, pty, sys, time
rocemu, addr, work = sys.argv[1:4]
prog = ("trap 'echo INT >%s/got_tty; sleep 1; exit 5' INT; echo >%s/ready_tty; "
        "while :; do sleep 0.1; done") % (work, work)
pid, fd = pty.fork()
if pid == 0:
    os.execv(rocemu, [rocemu, "run", "--addr", addr, "--", "sh", "-c", prog])
for _ in range(600):
    if os.path.exists(work + "/ready_tty"):
        break
    time.sleep(0.1)
os.write(fd, b"\x03")
while True:
    try:
        if not os.read(fd, 1024):
            break
    except OSError:
        break
print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
PY
python3 "$work/ctrlc.py" "$rocemu" $addr "$work" >"$work/ctrlc" 2>&1
expect_grep "$work/ctrlc" "status 5" "Ctrl-C at a terminal: rocemu run's status is the program's 5"
expect_grep "$work/got_tty" "INT" "Ctrl-C at a terminal: the program's handler ran"

[ -z "$(ls -A "$work/tmp")" ] && ok || bad "rocemu run left $(ls "$work/tmp") in TMPDIR"

echo "run_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
