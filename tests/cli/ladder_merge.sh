#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu ladder with the captures and traces of two processes: Debian's
# ibv_rc_pingpong server and client on the drop-in, each with its own
# ROCEMU_PCAP and ROCEMU_TRACE on its own address. The merged ladder of
# both captures and both traces has every packet once and in each
# capture's order, and each event right after the packet its device saw
# last; with only the client's capture, the server's events still land
# after the right packets (tests/oracles/ladder_check.py checks both).
# Then a receiver not ready, retried for ever (tests/cli/ladder_rnr.c):
# the run of SEND / RNR NAK pairs is one row counting them, as many as
# the capture's RNR NAKs; and a capture cut mid-record draws the frames
# before the cut, with a warning and exit 1.
# usage: tests/cli/ladder_merge.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: ladder_merge.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
rocemu=$build/bin/rocemu
work=$build/ladder_merge
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0 port=18917 server=127.0.0.170 client=127.0.0.171 rnr=127.0.0.172
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

command -v ibv_rc_pingpong >/dev/null || {
	echo "FAIL: no ibv_rc_pingpong (Debian package ibverbs-utils)"
	exit 1
}
. "$top/tests/lib/udp_port_free.sh"
udp_4791_free ladder_merge $server $client $rnr
. "$top/tests/lib/wait_listen.sh"

# The two processes, each recording its own trace, and its own capture
# unless told "nopcap" (then its trace's frames counts are all 0 and only
# seen/last place its events). run_pair NAME nopcap|pcap
run_pair() {
	local d=$work/$1 spcap=$work/$1/server.pcap
	mkdir -p "$d"
	[ "$2" = nopcap ] && spcap=
	(. "$top/tests/lib/verbs_env.sh"
	 ROCEMU_ADDR=$server ROCEMU_PCAP=$spcap ROCEMU_TRACE=$d/server.trace \
		timeout 60 ibv_rc_pingpong -g 1 -p $port -n 5 -s 64 -r 4 \
		>"$d/server.out" 2>&1) &
	local spid=$!
	wait_listen $port || bad "the server does not listen"
	(. "$top/tests/lib/verbs_env.sh"
	 ROCEMU_ADDR=$client ROCEMU_PCAP=$d/client.pcap \
	 ROCEMU_TRACE=$d/client.trace timeout 60 ibv_rc_pingpong -g 1 \
		-p $port -n 5 -s 64 -r 4 127.0.0.1 >"$d/client.out" 2>&1) &&
		ok || { bad "$1: ibv_rc_pingpong client"; tail -n 3 "$d/client.out"; }
	wait $spid && ok || { bad "$1: ibv_rc_pingpong server"; tail -n 3 "$d/server.out"; }
}
run_pair both pcap
run_pair one nopcap

# Both captures and both traces; the client's capture alone with both
# traces, the server's placed in a capture it did not write.
s=$work/both/server c=$work/both/client o=$work/one
python3 "$top/tests/oracles/ladder_check.py" --rocemu "$rocemu" \
	--work "$work/check" "$s.pcap+$c.pcap:$s.trace+$c.trace" \
	"$o/client.pcap:$o/server.trace+$o/client.trace" >"$work/check.txt" 2>&1 &&
	ok || { bad "ladder_check.py"; grep FAIL "$work/check.txt"; }
grep -E '^(server|client)' "$work/check.txt"
for run in "$s.pcap $c.pcap --trace $s.trace --trace $c.trace" \
	"$o/client.pcap --trace $o/server.trace --trace $o/client.trace"; do
	# shellcheck disable=SC2086 # file names and options
	"$rocemu" ladder $run \
		>"$work/merged.txt" 2>"$work/merged.err" &&
		ok || bad "ladder $run: exit $?"
	# every event was found after its packet: none drawn by time
	[ ! -s "$work/merged.err" ] && ok ||
		{ bad "ladder $run warned:"; cat "$work/merged.err"; }
done
# A trace whose device no capture holds: its events drawn by time, said.
"$rocemu" ladder "$top/pcaps/rxe/send_imm.pcap" --trace "$s.trace" \
	>/dev/null 2>"$work/time.err"
grep -q "server.trace: [0-9]* of [0-9]* events follow packets no capture given holds; drawn by time" \
	"$work/time.err" && ok || { bad "no warning for events drawn by time"; cat "$work/time.err"; }
# An older trace (no seen/last) with two captures: refused, saying why.
sed -E 's/ seen=[0-9]+ last=0x[0-9a-f]+//' "$s.trace" >"$work/old.trace"
"$rocemu" ladder "$s.pcap" "$c.pcap" --trace "$work/old.trace" \
	>/dev/null 2>"$work/old.err"
[ $? = 2 ] && grep -q "only in the capture of its own process" "$work/old.err" &&
	ok || { bad "an older trace with two captures"; cat "$work/old.err"; }

# A SEND retried for ever against a receiver not ready.
if cc -Wall -Wextra -Werror -o "$work/ladder_rnr" "$top/tests/cli/ladder_rnr.c" \
	"$top/examples/pair.c" -I"$top/examples" -libverbs; then
	(. "$top/tests/lib/verbs_env.sh"
	 ROCEMU_ADDR=$rnr ROCEMU_PCAP=$work/rnr.pcap timeout 60 \
		"$work/ladder_rnr" >"$work/rnr.out" 2>&1) &&
		ok || { bad "ladder_rnr"; cat "$work/rnr.out"; }
else
	bad "ladder_rnr.c does not compile"
fi
"$rocemu" ladder "$work/rnr.pcap" --svg "$work/rnr.svg" >"$work/rnr.txt" &&
	ok || bad "ladder of the RNR run"
"$rocemu" ladder --no-collapse "$work/rnr.pcap" >"$work/rnr_all.txt" &&
	ok || bad "ladder --no-collapse of the RNR run"
python3 - "$rocemu" "$work" <<'PY' && ok || bad "the RNR run's collapsed ladder"
import json, re, subprocess, sys
rocemu, work = sys.argv[1:3]
pkts = [json.loads(l) for l in subprocess.run(
    [rocemu, "dump", "--json", work + "/rnr.pcap"], capture_output=True,
    text=True, check=True).stdout.splitlines()]
pkts = [p for p in pkts if "opcode_name" in p]
rnr = [p for p in pkts if p.get("aeth", {}).get("type") == "RNR_NAK"]
assert len(rnr) >= 3, "only %d RNR NAKs: no run to fold" % len(rnr)
sends = [p for p in pkts if p["opcode_name"] == "RC_SEND_ONLY"]
assert len(sends) == len(rnr) + 1, (len(sends), len(rnr))
text = open(work + "/rnr.txt").read()
want = "^ the 2 rows above %d times in all, #%d to #%d" % (
    len(rnr), sends[0]["frame"], rnr[-1]["frame"])
assert want in text, "no %r in\n%s" % (want, text)
arrows = [l for l in text.splitlines() if re.search(r"\|  #\d+ ", l)]
assert len(arrows) == 4, "%d arrows drawn, want 4:\n%s" % (len(arrows), text)
full = open(work + "/rnr_all.txt").read()
n = len([l for l in full.splitlines() if re.search(r"\|  #\d+ ", l)])
assert n == len(pkts) and "^ " not in full, (n, len(pkts))
svg = open(work + "/rnr.svg").read()
assert svg.count('class="packet"') == 4, "SVG arrows not folded"
assert ('class="repeat"' in svg and
        "the 2 rows above %d times in all" % len(rnr) in svg)
print("rnr: %d RNR NAKs folded into one row" % len(rnr))
PY

# A capture cut mid-record: the frames before the cut, a warning, exit 1.
python3 - "$work/rnr.pcap" "$work/cut.pcap" "$work/mid.pcap" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
at, n = 24, 0  # classic pcap: a 24-byte header, then 16 + incl_len a record
while n < 5:
    at += 16 + struct.unpack_from("<I", b, at + 8)[0]
    n += 1
open(sys.argv[2], "wb").write(b[:at + 30])  # 5 records and part of a 6th
first = 24 + 16 + struct.unpack_from("<I", b, 24 + 8)[0]
open(sys.argv[3], "wb").write(b[:24] + b[first:])  # from the first RNR NAK
PY
"$rocemu" ladder "$work/cut.pcap" >"$work/cut.txt" 2>"$work/cut.err"
rc=$?
[ $rc = 1 ] && ok || bad "ladder of a cut capture: exit $rc, want 1"
grep -q "cut.pcap is cut short (.*); drawing its 5 frames before the cut" \
	"$work/cut.err" && ok || { bad "no warning for the cut"; cat "$work/cut.err"; }
[ "$(grep -cE '\|  #[0-9]+ ' "$work/cut.txt")" = 5 ] && ok ||
	{ bad "the cut capture's 5 frames not drawn"; cat "$work/cut.txt"; }

# A capture that starts mid-connection (its first packet an RNR NAK):
# drawn from there, with a warning, exit 0.
"$rocemu" ladder --no-collapse "$work/mid.pcap" >"$work/mid.txt" 2>"$work/mid.err" &&
	ok || bad "ladder of a capture started mid-connection: exit $?"
grep -q "mid.pcap starts mid-connection: 1 flows begin with a response" \
	"$work/mid.err" && ok || { bad "no mid-connection warning"; cat "$work/mid.err"; }
want=$(( $(grep -cE '\|  #[0-9]+ ' "$work/rnr_all.txt") - 1 ))
[ "$(grep -cE '\|  #[0-9]+ ' "$work/mid.txt")" = $want ] && ok ||
	bad "the mid-connection capture's $want frames not drawn"

echo "ladder_merge: $pass passed, $fail failed"
[ $fail = 0 ]
