# SPDX-License-Identifier: MIT
# What the tools' shell tests share: counting checks, and checking a
# command's exit status and output. Sourced after $work is set; each test
# ends with: echo "NAME: $pass passed, $fail failed"; [ $fail = 0 ]
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_exit CODE DESCRIPTION -- COMMAND...: the command's output goes to
# $work/out and $work/err.
expect_exit() {
	local want=$1 what=$2
	shift 3
	"$@" >"$work/out" 2>"$work/err"
	local got=$?
	if [ "$got" = "$want" ]; then ok; else bad "$what: exit $got, wanted $want"; fi
}

# expect_grep FILE STRING DESCRIPTION: FILE holds STRING.
expect_grep() {
	local file=$1 pattern=$2 what=$3
	if grep -qF -- "$pattern" "$file"; then ok; else bad "$what: no '$pattern' in $file"; fi
}
