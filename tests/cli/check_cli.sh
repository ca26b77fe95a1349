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
expect_grep "$work/out" "frame 3 $path: rule ICRC (A17.3.3, 7.8.1): ICRC 0x" "bad ICRC line"
expect_grep "$work/out" ": 1 rule violations, 0 packets lost" "bad ICRC total"

# the second packet gone and nothing after the gap answered: the sender
# skipped a PSN; its PSN is the first's plus one, read from the capture
edit "$good" "$work/skip.pcap" drop 2 keep 4
expect_exit 1 "a skipped PSN" -- "$rocemu" check "$work/skip.pcap"
first=$("$rocemu" dump "$good" | awk 'NR == 1 { print $10 }')
missing=$(printf '0x%06x' $((first + 1)))
# (no answer in it, so the sender's QP is unknown: "qp ?")
expect_grep "$work/out" "frame 2 flow 0 RC 10.0.0.2 qp ? > 10.0.0.1 qp $qp1: rule PSN-ORDER (9.7.1): PSN" "skipped PSN line"
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
expect_grep "$work/out" "frame 1 $path: rule PAYLOAD-MTU (9.7.5.1): RC_SEND_FIRST carries 1024 bytes" "MTU line"
expect_exit 0 "--mtu 1024 on it" -- "$rocemu" check --mtu 1024 "$good"

# --json: every line an object, findings then flows then the summary
expect_exit 1 "--json" -- "$rocemu" check --json "$work/icrc.pcap"
if python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
f = [o for o in objs if "rule" in o]
assert len(f) == 1 and f[0]["frame"] == 3 and f[0]["rule"] == "A17.3.3, 7.8.1"
assert f[0]["id"] == "ICRC"
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
	expect_grep "$work/out" "frame $frame flow $what: rule $rule (" "CM $name: $rule at frame $frame"
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
	expect_grep "$work/out" ": rule $rule (" "CM bad: $rule"
done

# Reasons: what the errors a capture shows mean, though no rule is
# broken (exit 0). The values are read from the capture's own requests.
# dump_field CAP FRAME FIELD: the word after FIELD in frame FRAME's dump
dump_field() {
	"$rocemu" dump "$1" | awk -v n="$2" -v f="$3" \
		'$1 == n { for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }'
}
hexn() { printf '0x%x' "$(($1))"; }
hex6() { printf '0x%06x' "$(($1))"; }
for op in write read; do
	cap=pcaps/rocemu/err_${op}_bad_rkey.pcap
	rkey=$(hexn "$(dump_field "$cap" 1 rkey)") va=$(hexn "$(dump_field "$cap" 1 va)")
	len=$(dump_field "$cap" 1 len) psn=$(hex6 "$(dump_field "$cap" 1 psn)")
	name=$([ $op = write ] && echo "RDMA WRITE" || echo "RDMA READ")
	expect_exit 0 "bad rkey $op: a NAK breaks no rule" -- "$rocemu" check "$cap"
	expect_grep "$work/out" "frame 2 flow 0 RC 127.0.0.70 qp 0x11 > 127.0.0.71 qp 0x11: reason 9.7.5.2.4: NAK remote access error answers $name psn $psn (frame 1; rkey $rkey, va $va, len $len)" "bad rkey $op: the request the NAK answers"
	expect_grep "$work/out" "no MR or memory window for that rkey in its QP's PD" "bad rkey $op: what it means"
	expect_grep "$work/out" "lacks the remote $op right" "bad rkey $op: the right named"
	expect_grep "$work/out" ": 0 rule violations, 0 packets lost by the capture, 1 reason given" "bad rkey $op total"
done
# the same R_Key accepted for 32 bytes at 0x1000, then refused for 64:
# the capture proves the range is what is wrong (mkcap --why range)
"$build/tests/mkcap" --why "$work/range.pcap" range || bad "mkcap --why range"
expect_exit 0 "range NAK" -- "$rocemu" check "$work/range.pcap"
expect_grep "$work/out" "frame 4 flow 0 RC 10.0.0.2 qp 0x200 > 10.0.0.1 qp 0x100: reason 9.7.5.2.4: NAK remote access error answers RDMA WRITE psn 0x000002 (frame 3; rkey 0x77, va 0x1000, len 64) sent from qp 0x100: the same rkey 0x77 was accepted at frame 1 for va 0x1000, len 32" "range NAK: the earlier grant"
expect_grep "$work/out" "this range reaches outside the region the key names" "range NAK: range named"
"$build/tests/mkcap" --why "$work/invreq.pcap" invreq || bad "mkcap --why invreq"
expect_exit 0 "invalid request NAK" -- "$rocemu" check "$work/invreq.pcap"
expect_grep "$work/out" "frame 2 flow 0 RC 10.0.0.2 qp 0x200 > 10.0.0.1 qp 0x100: reason 9.7.5.2.3: NAK invalid request answers RDMA READ psn 0x000001 (frame 1; rkey 0x77, va 0x2000, len 16)" "invalid request NAK"
# PSN 5 sent three times, never answered (mkcap --why silent)
"$build/tests/mkcap" --why "$work/silent.pcap" silent || bad "mkcap --why silent"
expect_exit 0 "never answered" -- "$rocemu" check "$work/silent.pcap"
expect_grep "$work/out" "frame 1 flow 0 RC 10.0.0.1 qp ? > 10.0.0.2 qp 0x200: reason 9.7.6: SEND psn 0x000005 (frame 1) sent 3 times and never answered" "never answered: psn and count"
expect_grep "$work/out" "qp 0x200 not in RTR or RTS" "never answered: the likely drop"
# RNR: frames 2 and 4 refuse the SEND of frame 1 (rnr_exhausted) and
# nothing accepts it; rnr_retry: frame 2 refuses, frame 4 ACKs
cap=pcaps/rocemu/rnr_exhausted.pcap
psn=$(hex6 "$(dump_field "$cap" 1 psn)") qp=$(hexn "$(dump_field "$cap" 1 dqpn)")
expect_exit 0 "RNR exhausted" -- "$rocemu" check "$cap"
expect_grep "$work/out" "frame 2 flow 0 RC 127.0.0.70 qp 0x11 > 127.0.0.71 qp 0x11: reason 9.7.5.2.8: RNR NAK: no receive WQE was posted at qp $qp (or its SRQ) when SEND psn $psn (frame 1) arrived; refused 2 time(s) and never accepted" "RNR exhausted line"
if [ "$(grep -c ': reason ' "$work/out")" = 1 ]; then ok; else bad "RNR exhausted: one reason for the run"; fi
expect_exit 0 "RNR retry" -- "$rocemu" check pcaps/rocemu/rnr_retry.pcap
expect_grep "$work/out" "when SEND psn $psn (frame 1) arrived; refused 1 time(s), then answered at frame 4" "RNR then accepted"
# a PSN sequence error NAK (rocemu's loss capture: frame 2 skips the
# MIDDLE at frame 1's PSN + 1, frame 3 NAKs)
cap=pcaps/rocemu/loss.pcap
p1=$(dump_field "$cap" 1 psn) p2=$(dump_field "$cap" 2 psn)
expect_exit 0 "PSN sequence NAK" -- "$rocemu" check "$cap"
expect_grep "$work/out" "frame 3 flow 0 RC 127.0.0.70 qp 0x11 > 127.0.0.71 qp 0x11: reason 9.7.5.2.1: NAK PSN sequence error: the responder expected psn $(hex6 $((p1 + 1))) (the request after psn $(hex6 "$p1")) and got psn $(hex6 "$p2") (frame 2)" "PSN sequence NAK line"
# --json carries them as class "reason"; --no-explain leaves them out
expect_exit 0 "--json reasons" -- "$rocemu" check --json "$work/range.pcap"
if python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
r = [o for o in objs if o.get("class") == "reason"]
assert len(r) == 1 and r[0]["frame"] == 4 and r[0]["rule"] == "9.7.5.2.4"
assert "rkey 0x77" in r[0]["text"]
assert objs[-1]["summary"]["reasons"] == 1 and objs[-1]["summary"]["errors"] == 0
' "$work/out"; then ok; else bad "--json reason objects"; fi
expect_exit 0 "--no-explain" -- "$rocemu" check --no-explain "$work/range.pcap"
if grep -q ': reason ' "$work/out"; then bad "--no-explain still gives reasons"; else ok; fi

# ---- what a packet obliges the two ends to do next (issue 30) ----------
# Real rxe captures, each edited so that one rule breaks (pcap_edit
# rebuilds the frame, ICRC recomputed); the PSNs and frames named are
# read from the capture. redit IN OUT [dup N] [delay N NS] [keep N]: dup
# puts a copy of record N right after it, delay moves records N.. NS
# nanoseconds later, keep keeps the first N.
pedit=$build/tests/pcap_edit
redit() {
	python3 - "$@" <<'PY'
import struct, sys
src, dst, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
raw = open(src, 'rb').read()
ns = struct.unpack_from('<I', raw, 0)[0] == 0xa1b23c4d
hdr, off, recs = raw[:24], 24, []
while off < len(raw):
    incl = struct.unpack_from('<I', raw, off + 8)[0]
    recs.append(bytearray(raw[off:off + 16 + incl]))
    off += 16 + incl
while ops:
    op, n = ops[0], int(ops[1])
    if op == 'dup':
        recs.insert(n, bytearray(recs[n - 1]))
        ops = ops[2:]
    elif op == 'keep':
        recs = recs[:n]
        ops = ops[2:]
    elif op == 'delay':
        unit = 1 if ns else 1000
        for r in recs[n - 1:]:
            sec, frac = struct.unpack_from('<II', r, 0)
            t = sec * 10**9 + frac * unit + int(ops[2])
            struct.pack_into('<II', r, 0, t // 10**9, (t % 10**9) // unit)
        ops = ops[3:]
open(dst, 'wb').write(hdr + b''.join(recs))
PY
}
# one_rule CAP NAME RULE FRAME: exit 1, one violation, RULE at FRAME
one_rule() {
	expect_exit 1 "$2" -- "$rocemu" check "$1"
	expect_grep "$work/out" ": 1 rule violations, 0 packets lost by the capture" "$2: one violation"
	if grep -qE "^frame $4 flow 0 RC [^:]*: rule $3 \(" "$work/out"; then ok
	else bad "$2: no rule $3 at frame $4"; fi
}
# Fatal NAK, the requester goes on: rxe's 5000-byte SENDs; the ACK of
# frame 6 (10.0.0.1 answering 10.0.0.2) made an invalid request NAK, and
# 10.0.0.2's next SEND (frame 13) moved 20 ms later, past the 10 ms a NAK
# may take to reach the requester. Kept: frames up to 17 (before 10.0.0.1
# would answer that SEND). The same timing without the NAK is clean.
redit "$good" "$work/late.pcap" keep 17 delay 13 20000000
expect_exit 0 "SEND 20 ms later, no NAK: clean" -- "$rocemu" check "$work/late.pcap"
"$pedit" "$work/late.pcap" "$work/fatal_req.pcap" 6 syndrome 0x61 || bad "pcap_edit syndrome"
one_rule "$work/fatal_req.pcap" "requests after a fatal NAK" FATAL-NAK-STOPS 13
expect_grep "$work/out" "new request RC_SEND_FIRST psn $(hex6 "$(dump_field "$good" 13 psn)") 25080 us after the responder's NAK invalid request for psn $(hex6 "$(dump_field "$good" 6 psn)") (frame 6)" "requests after a fatal NAK: both frames named"
# within the 10 ms (rxe's 5 ms as captured) it may have crossed the NAK
redit "$good" "$work/near.pcap" keep 17
"$pedit" "$work/near.pcap" "$work/fatal_near.pcap" 6 syndrome 0x61 || bad "pcap_edit syndrome"
expect_exit 0 "a request 5 ms after a fatal NAK may have crossed it" -- "$rocemu" check "$work/fatal_near.pcap"
# Fatal NAK, the responder answers again: rxe's wrong-rkey WRITE, its
# remote access NAK repeated as frame 3 and made an ACK.
cap=pcaps/rxe/err_write_bad_rkey.pcap
redit "$cap" "$work/nak2.pcap" dup 2
expect_exit 0 "the same fatal NAK twice is no violation" -- "$rocemu" check "$work/nak2.pcap"
"$pedit" "$work/nak2.pcap" "$work/fatal_resp.pcap" 3 syndrome 0x1f || bad "pcap_edit syndrome"
one_rule "$work/fatal_resp.pcap" "an answer after a fatal NAK" FATAL-NAK-SILENT 3
expect_grep "$work/out" "RC_ACK psn $(hex6 "$(dump_field "$cap" 2 psn)") after this responder's NAK remote access error for psn $(hex6 "$(dump_field "$cap" 2 psn)") (frame 2)" "answer after a fatal NAK: both frames named"
# PSN sequence NAKs, from rxe's WRITEs (write_bw): frame 15 ACKs up to
# its PSN; frame 16's ACK made a sequence NAK naming frame 15's PSN:
# the responder had it, nothing was missing.
wb=pcaps/rxe/write_bw.pcap
p15=$(dump_field "$wb" 15 psn) p16=$(dump_field "$wb" 16 psn)
"$pedit" "$wb" "$work/s1.pcap" 16 syndrome 0x60 || bad "pcap_edit syndrome"
"$pedit" "$work/s1.pcap" "$work/seq_none.pcap" 16 psn "$p15" || bad "pcap_edit psn"
one_rule "$work/seq_none.pcap" "a sequence NAK for a PSN already acknowledged" SEQNAK-COVERED 16
expect_grep "$work/out" "names psn $(hex6 "$p15"), but frame 15 already acknowledged up to $(hex6 "$p15")" "sequence NAK, nothing missing: the ACK named"
# frame 16 made a sequence NAK for its own PSN: the requester never goes
# back, and frame 17 acknowledges past it.
one_rule "$work/s1.pcap" "a sequence NAK the requester never follows" SEQNAK-GO-BACK 16
expect_grep "$work/out" "NAK for psn $(hex6 "$p16"), and the requester never went back to it (frame 20 acknowledges up to $(hex6 "$(dump_field "$wb" 20 psn)"), beyond $(hex6 "$(dump_field "$wb" 14 psn)"), the newest request before the NAK)" "sequence NAK not followed: frames named"
# rxe's loss capture with its sequence NAK (frame 3) sent twice before
# the requester goes back: one NAK per gap.
redit pcaps/rxe/loss.pcap "$work/seq_twice.pcap" dup 3
one_rule "$work/seq_twice.pcap" "two sequence NAKs for one gap" SEQNAK-ONCE 4
expect_grep "$work/out" "second PSN sequence error NAK for psn $(hex6 "$(dump_field pcaps/rxe/loss.pcap 3 psn)") (the first: frame 3)" "two sequence NAKs: both frames"
# MSN never goes back: write_bw's ACK of frame 15 (MSN 2) repeated after
# frame 16's (MSN 3).
redit "$wb" "$work/msn_back.pcap" dup 15
redit "$work/msn_back.pcap" "$work/msn_back2.pcap"
python3 - "$work/msn_back.pcap" "$work/msn_back2.pcap" <<'PY'
import struct, sys
raw = open(sys.argv[1], 'rb').read()
hdr, off, recs = raw[:24], 24, []
while off < len(raw):
    incl = struct.unpack_from('<I', raw, off + 8)[0]
    recs.append(raw[off:off + 16 + incl])
    off += 16 + incl
recs[15], recs[16] = recs[16], recs[15]	# the copy after frame 16's ACK
open(sys.argv[2], 'wb').write(hdr + b''.join(recs))
PY
one_rule "$work/msn_back2.pcap" "an MSN that goes back" MSN-FORWARD 17
expect_grep "$work/out" "MSN $(hex6 "$(dump_field "$wb" 15 msn)") goes back from $(hex6 "$(dump_field "$wb" 16 msn)") (frame 16)" "MSN back: both frames"
# Capture loss only where a link could carry it: frames 14-18 of rxe's
# 5000-byte SENDs (10.0.0.2's requests and 10.0.0.1's ACK of them) moved
# 2,000,000 PSNs on: the ACK covers the jump, but 2 million packets do
# not fit in the 27 us between frames 13 and 14, even at 400 Gb/s.
cp "$good" "$work/jump.pcap"
for n in 14 15 16 17 18; do
	"$pedit" "$work/jump.pcap" "$work/jump2.pcap" $n psn $(($(dump_field "$good" $n psn) + 2000000)) || bad "pcap_edit psn $n"
	mv "$work/jump2.pcap" "$work/jump.pcap"
done
one_rule "$work/jump.pcap" "a PSN jump no link could carry" PSN-JUMP 14
expect_grep "$work/out" "follows a gap of 2000000 PSNs ($(hex6 $(($(dump_field "$good" 14 psn)))).." "PSN jump: the gap"
# an ACK covering a PSN not yet sent: write_bw's frame 6 made to ACK
# frame 8's PSN (already a rule before; here on a real capture)
"$pedit" "$wb" "$work/ack_ahead.pcap" 6 psn "$(dump_field "$wb" 8 psn)" || bad "pcap_edit psn"
one_rule "$work/ack_ahead.pcap" "an ACK ahead of the requests" ANSWER-SENT-PSN 6
expect_grep "$work/out" "answers PSN $(hex6 "$(dump_field "$wb" 8 psn)") before the requester sent it (frame 8)" "ACK ahead: the request named"
# a sequence NAK where nothing was missing: the ACK of frame 6 (for the
# newest PSN the requester had sent, frame 5's) made a sequence error NAK;
# no later PSN had come that could show a gap, and the reason for a NAK
# that has one is not given
"$pedit" "$good" "$work/seq_nogap.pcap" 6 syndrome 0x60 || bad "pcap_edit syndrome"
one_rule "$work/seq_nogap.pcap" "a sequence NAK for the newest PSN sent" SEQNAK-GAP 6
expect_grep "$work/out" "names psn $(hex6 "$(dump_field "$good" 5 psn)"), the newest request sent" "no gap: the PSN named"
if grep -q "reason 9.7.5.2.1" "$work/out"; then bad "no gap: a reason told a gap"; else ok; fi
# --json names the other frame of each as "also"
while read -r cap frame also; do
	"$rocemu" check --json "$work/$cap.pcap" >"$work/out"
	if python3 -c '
import json, sys
f = [o for o in map(json.loads, open(sys.argv[1])) if o.get("class") == "error"]
assert len(f) == 1 and f[0]["frame"] == int(sys.argv[2]), f
assert f[0]["also"] == int(sys.argv[3]), f
' "$work/out" "$frame" "$also"; then ok; else bad "--json also: $cap"; fi
done <<'EOF3'
fatal_req 13 6
fatal_resp 3 2
seq_none 16 15
s1 16 20
seq_twice 4 3
msn_back2 17 16
jump 14 13
EOF3

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
