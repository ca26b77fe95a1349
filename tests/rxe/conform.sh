#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The conformance suite against Linux rxe (make rxe-check runs it): boots
# one guest that runs tests/rxe/conform_guest.sh (rocemu-agent on rxe,
# `rocemu conform` on the other end of a veth) with every scenario of
# conformance/scenarios/ over IPv4 and over IPv6, and prints the report.
# Passes when every scenario that fails on rxe is one
# conformance/differences.md lists for rxe (reported KNOWN), none fails
# unlisted, the run reached its summary, and it ran over both versions.
# usage: tests/rxe/conform.sh BUILD_DIR   (parts.sh must have run)
# Exit 0 pass, 1 an unlisted failure, 2 when the guest brought no report.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: conform.sh BUILD_DIR}
rxe=$build/rxe
out=$rxe/conform
t0=$(date +%s)

stage=$rxe/conform-in
# The guest sees the stage as /in: conformance/ laid out as in the source
# tree (scenarios/ and the list of differences).
home=$here/../../conformance
rm -rf "$stage" && mkdir -p "$stage/conformance/scenarios"
cp "$here/conform_guest.sh" "$stage/run.sh"
cp "$home/scenarios/"*.scn "$stage/conformance/scenarios/"
cp "$home/differences.md" "$stage/conformance/"
rc=0
"$here/boot.sh" -t 900 "$rxe" "$out" "$stage" >"$out.boot.txt" 2>&1 || rc=$?
[ $rc = 77 ] && { echo "rxe lab: conform: qemu-system-x86_64 missing" >&2; exit 2; }
rep=$out/a/conform.txt
if [ ! -f "$rep" ] || ! grep -q '^conform: [0-9]* scenarios on ' "$rep"; then
	echo "rxe lab: conform FAILED: the guest brought no report back" >&2
	cat "$out.boot.txt" >&2
	[ -f "$rep" ] && cat "$rep" >&2
	exit 2
fi
cat "$rep"
sum=$(grep '^conform: [0-9]* scenarios on ' "$rep")
unlisted=$(echo "$sum" | sed -n 's/.*: [0-9]* passed, \([0-9]*\) failed,.*/\1/p')
echo "rxe lab: $sum ($(($(date +%s) - t0)) s; logs in $out/a)"
both=1
case $sum in *"(ipv4 and ipv6)"*) ;; *)
	both=0
	echo "rxe lab: conform FAILED: it did not run over IPv6:" \
		"$(cat "$out/a/v6.txt" 2>/dev/null || echo 'no reason given')" >&2
	cat "$out/a/gids.txt" >&2 2>/dev/null || : ;;
esac
[ "$unlisted" = 0 ] && [ $both = 1 ]
