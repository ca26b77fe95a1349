#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu check's responder-side rules (RNR NAK timer and retries, READ and
# atomic resources, duplicates answered from the saved result), each on a
# real rxe capture doctored to break that rule alone (pcap_edit builds the
# edited frame again, ICRC included), against the clean original.
# usage: tests/cli/check_resp.sh BUILD_DIR
set -u
build=${1:?usage: check_resp.sh BUILD_DIR}
rocemu=$build/bin/rocemu
edit=$build/tests/pcap_edit
work=$build/check_resp
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/../lib/cli_lib.sh"

# clean: CAPTURE passes with no rule violation.
clean() {
	expect_exit 0 "$1 is clean" -- "$rocemu" check "$1"
	expect_grep "$work/out" ": 0 rule violations" "$1 total"
}

# breaks CAPTURE FRAME RULE WORDS: exit 1, one violation, at FRAME by RULE.
breaks() {
	expect_exit 1 "$1 breaks $3" -- "$rocemu" check "$1"
	expect_grep "$work/out" "frame $2 flow 0 " "$1 names frame $2"
	expect_grep "$work/out" "rule $3 (" "$1 names rule $3"
	expect_grep "$work/out" "$4" "$1 says why"
	expect_grep "$work/out" ": 1 rule violations" "$1 breaks one rule"
	"$rocemu" check --json "$1" >"$work/json"
	expect_grep "$work/json" "\"frame\":$2,\"class\":\"error\"" "$1 JSON frame"
}

# RNR NAK timer (IBTA 9.7.5.2.8, the RNR timer table): rnr_retry.pcap's
# NAK (frame 2, t=0.000276) asks for 491.52 ms (code 31), the retry
# (frame 3) comes at t=0.522325: on time. Code 0 asks for 655.36 ms, which
# no tolerance of capture clocks (an eighth plus 1 ms) brings below 522 ms.
cap=pcaps/rxe/rnr_retry.pcap
clean "$cap"
"$edit" "$cap" "$work/rnr_early.pcap" 2 syndrome 0x20 || bad "pcap_edit rnr"
breaks "$work/rnr_early.pcap" 3 RNR-TIMER "after the RNR NAK at frame 2, whose timer field asks for at least 655360 us"
# code 30 (327.68 ms) is met: the timer alone decides
"$edit" "$cap" "$work/rnr_ok.pcap" 2 syndrome 0x3e || bad "pcap_edit rnr 30"
clean "$work/rnr_ok.pcap"

# A duplicate atomic is answered from the saved result (9.7.5.1.1):
# atomic_cas.pcap with its second CMP_SWAP (frame 3) sent again at the
# first's PSN, and its answer (frame 4) carrying that PSN and MSN 1; the
# second CMP_SWAP's own PSN is then missing (capture loss, a later ACK
# covers it). Frame 4 still carries the value the second CMP_SWAP read,
# not the one frame 2 returned: it was executed again.
cap=pcaps/rxe/atomic_cas.pcap
clean "$cap"
"$edit" "$cap" "$work/d1.pcap" 3 psn 0xc73566 &&
	"$edit" "$work/d1.pcap" "$work/d2.pcap" 4 psn 0xc73566 &&
	"$edit" "$work/d2.pcap" "$work/dup_exec.pcap" 4 msn 1 ||
	bad "pcap_edit dup"
breaks "$work/dup_exec.pcap" 4 ATOMIC-DUPLICATE "frame 2 answered that atomic with 0x6a0f57ad6c18380c"
# the same duplicate answered with frame 2's original value: no violation
"$edit" "$work/dup_exec.pcap" "$work/dup_saved.pcap" 4 atmack 0x6a0f57ad6c18380c ||
	bad "pcap_edit saved"
clean "$work/dup_saved.pcap"

# READ responses in order (9.5): read_bw.pcap with the responses to the
# READs of frames 9 (PSN 0xd0f123, frames 12-14) and 10 (0xd0f126,
# frames 15-17) swapped, each record keeping its slot's time: the answer
# to frame 9's READ now follows one to a later READ. The packets are
# unchanged (their ICRCs stay right); only their order is.
swap() {
	python3 - "$@" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
raw = open(src, 'rb').read()
hdr, off, recs = raw[:24], 24, []
while off < len(raw):
    incl = struct.unpack_from('<I', raw, off + 8)[0]
    recs.append(raw[off:off + 16 + incl])
    off += 16 + incl
moved = recs[14:17] + recs[11:14]
for i, r in enumerate(moved):	# the slot's time, the record's bytes
    recs[11 + i] = recs[11 + i][:8] + r[8:]
open(dst, 'wb').write(hdr + b''.join(recs))
PY
}
cap=pcaps/rxe/read_bw.pcap
clean "$cap"
swap "$cap" "$work/read_swapped.pcap" || bad "swap"
breaks "$work/read_swapped.pcap" 15 RESPONSE-ORDER "answers the RDMA READ at frame 9 (PSN 0xd0f123) after frame 12 answered a later READ"

# The most READs/atomics in flight is said (a reason, no violation):
# atomic_cas.pcap sends frames 5, 6, 7 before frame 8 answers frame 5.
expect_exit 0 "in flight" -- "$rocemu" check pcaps/rxe/atomic_cas.pcap
expect_grep "$work/out" "frame 7 flow 0 RC 10.0.0.2 qp 0x1e > 10.0.0.1 qp 0x17: reason 9.7.5.2: up to 3 READs and atomics" "in-flight reason"

# Bounds a CM REQ/REP in the capture announced (mkcap --resp: REQ, REP,
# RTU are frames 1-3, flow 1 the RC data). The REP asks for 2 RNR
# retries: a third retry (frame 10) breaks 9.7.5.2.8; two are clean. The
# REQ announces Initiator Depth 2: a third READ before any answer (frame
# 6) breaks 9.7.5.2; two are clean.
for n in rnr-ok rnr-over depth-ok depth-over; do
	"$build/tests/mkcap" --resp "$work/$n.pcap" "$n" || bad "mkcap $n"
done
clean "$work/rnr-ok.pcap"
clean "$work/depth-ok.pcap"
expect_exit 1 "rnr-over" -- "$rocemu" check "$work/rnr-over.pcap"
expect_grep "$work/out" "frame 10 flow 1 RC 10.0.0.1 qp 0x11 > 10.0.0.2 qp 0x12: rule RNR-RETRIES (9.7.5.2.8, 12.7): RC_SEND_ONLY at PSN 0x0b0b00 is retry 3 after RNR NAKs, but the CM connection's RNR Retry Count is 2" "rnr retries over the CM's count"
expect_grep "$work/out" ": 1 rule violations" "rnr-over breaks one rule"
expect_exit 1 "depth-over" -- "$rocemu" check "$work/depth-over.pcap"
expect_grep "$work/out" "frame 6 flow 1 RC 10.0.0.1 qp 0x11 > 10.0.0.2 qp 0x12: rule RD-ATOMIC-DEPTH (9.7.5.2, 12.7): RC_RDMA_READ_REQUEST at PSN 0x0b0b02 makes 3 READs and atomics outstanding, but the CM connection announced Initiator Depth 2" "READs over the CM's depth"
expect_grep "$work/out" ": 1 rule violations" "depth-over breaks one rule"

# rocemu ladder --check draws the finding after the frame it names (the
# retry, frame 3), as an error note in text and in SVG; the clean
# original and a ladder without --check get no rule-broken note.
expect_exit 0 "ladder --check" -- "$rocemu" ladder --check "$work/rnr_early.pcap" --svg "$work/early.svg"
grep -A1 -F -- "#3 " "$work/out" >"$work/after3"
expect_grep "$work/after3" "|! check: rule broken RNR-TIMER: RC_SEND_ONLY at PSN 0x001000" "mark after frame 3"
expect_grep "$work/out" "(9.7.5.2.8) [9.7.5.2.8]" "mark names its rule"
expect_grep "$work/early.svg" 'fill="#c00000"><title>rule broken RNR-TIMER: RC_SEND_ONLY at PSN 0x001000' "SVG error mark"
expect_exit 0 "ladder --check clean" -- "$rocemu" ladder --check pcaps/rxe/rnr_retry.pcap
if grep -q "rule broken" "$work/out"; then bad "clean ladder marked"; else ok; fi
expect_grep "$work/out" "check: reason: RNR NAK" "clean ladder shows the reason"
expect_exit 0 "ladder without --check" -- "$rocemu" ladder "$work/rnr_early.pcap"
if grep -q "check:" "$work/out"; then bad "marks without --check"; else ok; fi

echo "check_resp: $pass passed, $fail failed"
[ "$fail" = 0 ]
