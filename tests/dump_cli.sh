#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu dump as a user meets it: exit codes, messages, reasons, -c, pcapng.
# usage: tests/dump_cli.sh BUILD_DIR
set -u
build=${1:?usage: dump_cli.sh BUILD_DIR}
rocemu=$build/bin/rocemu
mkcap=$build/tests/mkcap
work=$build/dump_cli
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_exit CODE DESCRIPTION -- COMMAND...
expect_exit() {
	local want=$1 what=$2
	shift 3
	"$@" >"$work/out" 2>"$work/err"
	local got=$?
	if [ "$got" = "$want" ]; then ok; else bad "$what: exit $got, wanted $want"; fi
}

expect_grep() {
	local file=$1 pattern=$2 what=$3
	if grep -qF -- "$pattern" "$file"; then ok; else bad "$what: no '$pattern' in $file"; fi
}

for cap in pcaps/rxe/*.pcap; do
	expect_exit 0 "$cap decodes clean" -- "$rocemu" dump "$cap"
	expect_grep "$work/out" "ICRC bad 0, malformed 0, truncated by snaplen 0" "$cap summary"
done

"$mkcap" --malformed "$work/malformed.pcap" || bad "mkcap --malformed"
expect_exit 1 "malformed capture" -- "$rocemu" dump "$work/malformed.pcap"
for reason in "MALFORMED: opcode undefined by the IBTA" \
	"MALFORMED: BTH TVer is not 0" "MALFORMED: pad count exceeds the payload" \
	"icrc BAD wire" "icrc unchecked (truncated)" \
	"ICRC ok 1, ICRC bad 1, malformed 3, truncated by snaplen 1"; do
	expect_grep "$work/out" "$reason" "malformed capture"
done

"$mkcap" --all "$work/all.pcap" || bad "mkcap --all"
expect_exit 0 "every opcode" -- "$rocemu" dump "$work/all.pcap"
expect_grep "$work/out" "2 other frames skipped" "non-RoCE frames counted"
expect_grep "$work/out" "skipped: not UDP port 4791: 1" "skip reason"

expect_exit 0 "-c 3" -- "$rocemu" dump -c 3 pcaps/rxe/rc_send_64.pcap
lines=$(grep -c ' > ' "$work/out")
[ "$lines" = 3 ] && ok || bad "-c 3 printed $lines packets"

expect_exit 0 "-v" -- "$rocemu" dump -v -c 1 pcaps/rxe/read_bw.pcap
expect_grep "$work/out" "BTH: opcode 0x0c (RC_RDMA_READ_REQUEST)" "-v tree"
expect_grep "$work/out" "len 3000" "-v RETH length"

# pcapng gives the same JSON as pcap.
if command -v editcap >/dev/null; then
	editcap -F pcapng pcaps/rxe/write_bw.pcap "$work/w.pcapng"
	"$rocemu" dump --json pcaps/rxe/write_bw.pcap >"$work/a.json"
	"$rocemu" dump --json "$work/w.pcapng" >"$work/b.json"
	cmp -s "$work/a.json" "$work/b.json" && ok || bad "pcapng decodes differently"
else
	bad "editcap missing (Debian package wireshark-common)"
fi

# Usage and file errors: exit 2 and a message naming the problem.
expect_exit 2 "no argument" -- "$rocemu" dump
expect_grep "$work/err" "no capture file given" "no argument"
expect_exit 2 "missing file" -- "$rocemu" dump "$work/nope.pcap"
expect_grep "$work/err" "nope.pcap" "missing file named"
expect_exit 2 "bad -c" -- "$rocemu" dump -c x pcaps/rxe/rc_send_64.pcap
expect_grep "$work/err" "-c wants a count" "bad -c"
expect_exit 2 "unknown option" -- "$rocemu" dump --bogus pcaps/rxe/rc_send_64.pcap
expect_exit 2 "not a capture" -- "$rocemu" dump README.md
expect_exit 2 "two files" -- "$rocemu" dump pcaps/rxe/rc_send_64.pcap pcaps/rxe/ud_send.pcap
expect_exit 2 "unknown command" -- "$rocemu" frobnicate
expect_exit 0 "--help" -- "$rocemu" dump --help
expect_grep "$work/out" "usage: rocemu dump" "--help text"
# A pcap whose link type is BSD loopback (0): refused by name.
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00' >"$work/null.pcap"
expect_exit 2 "unsupported link type" -- "$rocemu" dump "$work/null.pcap"
expect_grep "$work/err" "is not Ethernet, Linux cooked or raw IP" "link type message"

echo "dump_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
