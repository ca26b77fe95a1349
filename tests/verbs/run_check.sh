#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/verbs/run.sh judges: it fails, with a line that says why, for each
# way a verbs test program can fall short (the programs in
# tests/verbs/run_check/, which open no device), and passes the one that
# does not. A runner that passed everything would fail here.
# usage: tests/verbs/run_check.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: run_check.sh BUILD_DIR}" && pwd)
here=tests/verbs
fix=$here/run_check
work=$build/run_check
rm -rf "$work" && mkdir -p "$work"
# The fixtures' build directory: the drop-in of the build (run.sh reads
# which sanitizer it carries), the fixtures' work folders its own.
ln -s "$build/lib" "$work/lib"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect STATUS MESSAGE PROGRAM [OPTION]...: run.sh on PROGRAM exits
# STATUS and prints MESSAGE (a fixed string).
expect() {
	want=$1 msg=$2 prog=$3
	shift 3
	"$here/run.sh" "$work" "$prog" "$@" >"$work/out" 2>&1
	rc=$?
	if [ $rc = "$want" ] && grep -qF -- "$msg" "$work/out"; then
		ok
	else
		bad "run.sh $prog $*: exit $rc, wanted $want and '$msg'; it said:"
		sed 's/^/    /' "$work/out"
	fi
}
a=(--addr 127.0.0.1)
expect 0 "good: passed (its program: 1 passed, 0 failed)" $fix/good.c "${a[@]}"
expect 1 "FAIL: $fix/missing.c: no such program" $fix/missing.c "${a[@]}"
expect 1 "FAIL: $fix/no_compile.c does not compile" $fix/no_compile.c "${a[@]}"
expect 1 "FAIL: exits_1: exit status 1: exits_1: 1 passed, 0 failed" $fix/exits_1.c "${a[@]}"
expect 1 "FAIL: one_failed: exit status 0: one_failed: 1 passed, 1 failed" $fix/one_failed.c "${a[@]}"
expect 1 "FAIL: no_closing exited 0 without its closing line" $fix/no_closing.c "${a[@]}"
expect 1 "FAIL: crash exit status 134 before its closing line" $fix/crash.c "${a[@]}"
expect 1 "FAIL: hang hung (killed after 1 s)" $fix/hang.c "${a[@]}" --timeout 1
expect 1 "FAIL: /bin/false found a failure" $fix/good.c "${a[@]}" --then /bin/false
expect 2 "usage: tests/verbs/run.sh" $fix/good.c
expect 2 "run.sh: unknown option --bogus" $fix/good.c "${a[@]}" --bogus

echo "run_check: $pass passed, $fail failed"
[ $fail = 0 ]
