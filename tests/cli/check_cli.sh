#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu check as a user meets it: clean captures pass, faulty ones made here
# from a good capture name the frame and the rule, exit codes, --json, -q.
# usage: tests/cli/check_cli.sh BUILD_DIR
set -u
build=${1:?usage: check_cli.sh BUILD_DIR}
rocemu=$build/bin/rocemu
work=$build/check_cli
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/../lib/cli_lib.sh"

# edit IN OUT [drop N] [flip N] [keep N]: a copy of a pcap with record N
# (from 1) left out, or the last byte of record N (its ICRC) changed, or
# only the first N records kept; applied in that order.
edit() {
	python3 - "$@" <<'PY'
import struct, sys
src, dst, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
raw = open(src, 'rb').read()
hdr, off, recs = raw[:24], 24, []
while off < len(raw):
    incl = struct.unpack_from('<I', raw, off + 8)[0]
    recs.append(bytearray(raw[off:off + 16 + incl]))
    off += 16 + incl
for op, n in zip(ops[::2], map(int, ops[1::2])):
    if op == 'drop':
        del recs[n - 1]
    elif op == 'flip':
        recs[n - 1][-1] ^= 0x01
    elif op == 'keep':
        recs = recs[:n]
open(dst, 'wb').write(hdr + b''.join(recs))
PY
}

for cap in pcaps/rxe/*.pcap pcaps/rocemu/*.pcap; do
	expect_exit 0 "$cap is clean" -- "$rocemu" check "$cap"
	expect_grep "$work/out" ": 0 rule violations, 0 packets lost by the capture" "$cap total"
done
expect_exit 0 "demo" -- "$rocemu" demo "$work/demo.pcap"
expect_exit 0 "what demo writes is clean" -- "$rocemu" check "$work/demo.pcap"
expect_grep "$work/out" ": 0 rule violations, 0 packets lost by the capture" "demo total"

# rxe's 5000-byte SENDs at MTU 1024: 10.0.0.2 sends FIRST, MIDDLE x3,
# LAST in frames 1-5 to 10.0.0.1, which ACKs in 6. The QP numbers are
# read from the capture: make rxe-check takes it again, with new ones.
good=pcaps/rxe/rc_send_5000_mtu1024.pcap
# qpn_to ADDR: the QP the capture's packets to ADDR name, as "0x12"
qpn_to() {
	"$rocemu" dump "$good" |
		awk -v to="$1:4791" '$5 == to { print $8; exit }' |
		{ read -r q; printf '0x%x' "$((q))"; }
}
qp1=$(qpn_to 10.0.0.1) qp2=$(qpn_to 10.0.0.2)
path="flow 0 RC 10.0.0.2 qp $qp2 > 10.0.0.1 qp $qp1"

edit "$good" "$work/icrc.pcap" flip 3
expect_exit 1 "a bad ICRC" -- "$rocemu" check "$work/icrc.pcap"
expect_grep "$work/out" "frame 3 $path: rule A17.3.3: ICRC 0x" "bad ICRC line"
expect_grep "$work/out" ": 1 rule violations, 0 packets lost" "bad ICRC total"

# the second packet gone and nothing after the gap answered: the sender
# skipped a PSN; its PSN is the first's plus one, read from the capture
edit "$good" "$work/skip.pcap" drop 2 keep 4
expect_exit 1 "a skipped PSN" -- "$rocemu" check "$work/skip.pcap"
first=$("$rocemu" dump "$good" | awk 'NR == 1 { print $10 }')
missing=$(printf '0x%06x' $((first + 1)))
# (no answer in it, so the sender's QP is unknown: "qp ?")
expect_grep "$work/out" "frame 2 flow 0 RC 10.0.0.2 qp ? > 10.0.0.1 qp $qp1: rule 9.7.1: PSN" "skipped PSN line"
expect_grep "$work/out" "skips $missing..$missing" "skipped PSN named"

# the same packet gone, but frame 6's ACK covers it: capture loss, exit 0
edit "$good" "$work/loss.pcap" drop 2
expect_exit 0 "capture loss is no violation" -- "$rocemu" check "$work/loss.pcap"
expect_grep "$work/out" "frame 2 $path: capture loss, 9.7.1: PSNs $missing..$missing" "loss line"
expect_grep "$work/out" ": 0 rule violations, 1 packets lost by the capture" "loss total"

# Correct RC traffic over 64 connections with 3% of its frames taken out
# at random (seeded; the last 500, the connections' final answers, kept):
# every hole is capture loss, never a rule violation.
"$build/tests/mkcap" --rc-bench "$work/rc.pcap" 7000 || bad "mkcap --rc-bench"
expect_exit 0 "mkcap's RC traffic is clean" -- "$rocemu" check -q "$work/rc.pcap"
for seed in 1 2 3; do
	python3 - "$work/rc.pcap" "$work/holes.pcap" "$seed" <<'PY'
import random, struct, sys
raw = open(sys.argv[1], 'rb').read()
random.seed(int(sys.argv[3]))
hdr, off, recs = raw[:24], 24, []
while off < len(raw):
    incl = struct.unpack_from('<I', raw, off + 8)[0]
    recs.append(raw[off:off + 16 + incl])
    off += 16 + incl
keep = [r for i, r in enumerate(recs)
        if i >= len(recs) - 500 or random.random() >= 0.03]
open(sys.argv[2], 'wb').write(hdr + b''.join(keep))
PY
	expect_exit 0 "3% of the frames gone (seed $seed)" -- "$rocemu" check -q "$work/holes.pcap"
	expect_grep "$work/out" ": 0 rule violations, " "holes total (seed $seed)"
	if grep -q " 0 packets lost by the capture" "$work/out"; then
		bad "holes (seed $seed): no capture loss found"
	else ok; fi
done

# a path MTU the capture does not use
expect_exit 1 "--mtu 2048 on an MTU 1024 capture" -- "$rocemu" check --mtu 2048 "$good"
expect_grep "$work/out" "frame 1 $path: rule 9.7.5.1: RC_SEND_FIRST carries 1024 bytes" "MTU line"
expect_exit 0 "--mtu 1024 on it" -- "$rocemu" check --mtu 1024 "$good"

# --json: every line an object, findings then flows then the summary
expect_exit 1 "--json" -- "$rocemu" check --json "$work/icrc.pcap"
if python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
f = [o for o in objs if "rule" in o]
assert len(f) == 1 and f[0]["frame"] == 3 and f[0]["rule"] == "A17.3.3"
assert f[0]["class"] == "error" and f[0]["flow"] == 0
assert objs[-1]["summary"]["errors"] == 1 and objs[-1]["summary"]["frames"] == 24
' "$work/out"; then ok; else bad "--json objects"; fi

# CM rules: the good CM captures pass (retry: every message sent twice,
# an MRA); each bad-* capture breaks exactly
# one rule, named, at the frame that breaks it; "bad" breaks them all.
for cap in connect reject sidr retry; do
	"$build/tests/mkcap" --cm "$work/cm_$cap.pcap" $cap || bad "mkcap --cm $cap"
	expect_exit 0 "CM $cap is clean" -- "$rocemu" check "$work/cm_$cap.pcap"
	expect_grep "$work/out" ": 0 rule violations, 0 packets lost by the capture" "CM $cap total"
done
# Real connections, as Linux's CM on rxe and rocemu's CM make them
# (rping; tests/rxe/cm-pcaps): each side sends from the PSN its peer
# announced, and the rules agree.
for cap in tests/rxe/cm-pcaps/rping_rxe_rxe.pcap tests/rxe/cm-pcaps/rping_rxe_rocemu.pcap pcaps/rocemu/rping.pcap; do
	expect_exit 0 "CM $cap is clean" -- "$rocemu" check "$cap"
	expect_grep "$work/out" "RoCEv2 packets in 2 flows: 0 rule violations, 0 packets lost by the capture" "CM $cap total"
done
# name, rule, frame: the line of the one finding
while read -r name rule frame what; do
	"$build/tests/mkcap" --cm "$work/cm_$name.pcap" "$name" || bad "mkcap --cm $name"
	expect_exit 1 "CM $name" -- "$rocemu" check "$work/cm_$name.pcap"
	expect_grep "$work/out" ": 1 rule violations, 0 packets lost by the capture" "CM $name: one finding"
	expect_grep "$work/out" "frame $frame flow $what: rule $rule: " "CM $name: $rule at frame $frame"
done <<'EOF2'
bad-tid CM-TID 2 0 UD 10.0.0.2 qp 0x1 > 10.0.0.1 qp 0x1
bad-comm CM-COMM-ID 3 0 UD 10.0.0.1 qp 0x1 > 10.0.0.2 qp 0x1
bad-order CM-ORDER 2 0 UD 10.0.0.1 qp 0x1 > 10.0.0.2 qp 0x1
bad-drep CM-ORDER 10 0 UD 10.0.0.2 qp 0x1 > 10.0.0.1 qp 0x1
bad-qpn CM-QPN 4 1 RC 10.0.0.1 qp 0x11 > 10.0.0.2 qp 0x52
bad-psn CM-PSN 4 1 RC 10.0.0.1 qp 0x11 > 10.0.0.2 qp 0x12
bad-drep-tid CM-TID 11 0 UD 10.0.0.2 qp 0x1 > 10.0.0.1 qp 0x1
EOF2
"$build/tests/mkcap" --cm "$work/cm_bad.pcap" bad || bad "mkcap --cm bad"
expect_exit 1 "CM bad" -- "$rocemu" check "$work/cm_bad.pcap"
expect_grep "$work/out" ": 7 rule violations, 0 packets lost by the capture" "CM bad: seven findings"
for rule in CM-TID CM-COMM-ID CM-ORDER CM-QPN CM-PSN; do
	expect_grep "$work/out" ": rule $rule: " "CM bad: $rule"
done

# -q: the total alone
expect_exit 1 "-q" -- "$rocemu" check -q "$work/icrc.pcap"
if [ "$(wc -l <"$work/out")" = 1 ]; then ok; else bad "-q prints more than the total"; fi

# usage and file errors: 2, with a reason
expect_exit 2 "no file" -- "$rocemu" check
expect_grep "$work/err" "no capture file given" "no file message"
expect_exit 2 "two files" -- "$rocemu" check "$good" "$good"
expect_exit 2 "bad --mtu" -- "$rocemu" check --mtu 1000 "$good"
expect_grep "$work/err" "--mtu wants 256, 512, 1024, 2048 or 4096" "bad --mtu message"
expect_exit 2 "missing file" -- "$rocemu" check "$work/nope.pcap"
expect_grep "$work/err" "nope.pcap" "missing file named"
printf 'not a capture at all, just text\n' >"$work/text.pcap"
expect_exit 2 "not a capture" -- "$rocemu" check "$work/text.pcap"
expect_exit 0 "--help" -- "$rocemu" check --help
expect_grep "$work/out" "usage: rocemu check CAPTURE" "help text"

echo "check_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
