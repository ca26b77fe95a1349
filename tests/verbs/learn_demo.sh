#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make demo, on a fresh clone, builds the drop-ins the learning path's
# programs run on (docs/learn.md's first steps need build/lib) and ends by
# naming the learning path. A dry run (make -n) into an empty build
# directory lists what it would make, without making it.
# usage: tests/verbs/learn_demo.sh BUILD_DIR
set -u
build=${1:?usage: learn_demo.sh BUILD_DIR}
fresh=$build/learn_demo/build
rm -rf "$build/learn_demo" && mkdir -p "$build/learn_demo"
pass=0 fail=0
out=$build/learn_demo/make_n.out
make --no-print-directory -n demo BUILD="$fresh" >"$out" 2>&1 ||
	{ echo "FAIL: make -n demo"; tail -n 5 "$out"; exit 1; }
for want in "-o $fresh/lib/libibverbs.so.1" "-o $fresh/lib/librdmacm.so.1" \
	    "-o $fresh/bin/rocemu" "docs/learn.md"; do
	if grep -qF -- "$want" "$out"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: make demo does not make or say '$want'"
	fi
done
# the dry run made nothing
[ ! -e "$fresh/lib" ] && pass=$((pass + 1)) ||
	{ fail=$((fail + 1)); echo "FAIL: make -n demo wrote $fresh/lib"; }
echo "learn_demo: $pass passed, $fail failed"
[ $fail = 0 ]
