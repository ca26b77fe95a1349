#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rxe lab's part impair (make rxe-check runs it): rxe <-> rxe with
# rocemu impair --eth between the two guests' NICs (boot.sh -r), the
# guests running ib_write_bw and ib_read_bw (tests/rxe/impair_guest.sh:
# RC, 200 messages of 4096 bytes, 4 packets each) while the relay loses,
# duplicates and reorders chosen packets of both. The relay's captures
# (--pcap-in: the wire as the guests sent it, --pcap-out: as they received
# it) come back to the host, and it passes when:
#   - both programs exit 0 on both sides (every transfer completed);
#   - the relay's report has every rule matched and acted on;
#   - rocemu check judges both captures clean (exit 0), and counts
#     retransmitted packets in every flow of --pcap-out;
#   - the captures show each recovery: a WRITE packet lost on the way
#     (received, never sent on) that rxe sent again and that then reached
#     the responder; a duplicated WRITE LAST acknowledged twice, and a
#     duplicated READ request answered twice (its first response packet
#     sent twice); a PSN sequence NAK from the responder after a reordered
#     WRITE (IBTA 9.7.5.1.1: a sequence error is NAKed once, go-back-N).
# usage: tests/rxe/impair.sh BUILD_DIR   (parts.sh must have run)
# Exit 0 pass, 1 a check failed, 2 when the guests brought no results.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: impair.sh BUILD_DIR}" && pwd)
rxe=$build/rxe
out=$rxe/impair
rocemu=$build/bin/rocemu
frames=$here/../lib/impair_frames.py
t0=$(date +%s)
rm -rf "$out" && mkdir -p "$out"

# The client (guest b, 10.0.1.2) is the requester of both programs: its
# WRITEs and READ requests go from the relay's side b to side a (dir=ba),
# the server's ACKs, NAKs and READ responses the other way. Each rule
# picks a few packets (every=, count=) out of 200 messages of 4 packets,
# so that each action happens and the transfers still end well inside
# rxe's retry count.
A=10.0.1.1 B=10.0.1.2
cat >"$out/rules" <<'EOF'
# loss: a WRITE's middle packet, a READ response's middle packet
drop opcode=RC_RDMA_WRITE_MIDDLE dir=ba every=97 count=2
drop opcode=RC_RDMA_READ_RESPONSE_MIDDLE dir=ab every=97 count=2
# duplication: the first WRITE's last packet (it asks for an ACK) and the
# first READ request, each before any loss or reorder (a copy that comes
# during a go-back-N is out of sequence, and rxe drops it unanswered)
dup opcode=RC_RDMA_WRITE_LAST dir=ba count=1
dup opcode=RC_RDMA_READ_REQUEST dir=ba count=1
# reordering: a WRITE's first packet, a READ response's first packet,
# each behind the packet after it
reorder opcode=RC_RDMA_WRITE_FIRST dir=ba after=1 every=71 count=2
reorder opcode=RC_RDMA_READ_RESPONSE_FIRST dir=ab after=1 every=71 count=2
EOF
nrules=$(grep -c '^[a-z]' "$out/rules")

rc=0
"$here/boot.sh" -t 600 \
	-r "$rocemu impair --eth --rules $out/rules --pcap-in $out/in.pcap --pcap-out $out/out.pcap --json $out/impair.json" \
	"$rxe" "$out/boot" "$here/impair_guest.sh" "$here/impair_guest.sh" \
	>"$out/boot.txt" 2>&1 || rc=$?
cat "$out/boot.txt"
[ $rc = 77 ] && { echo "rxe lab: impair: qemu-system-x86_64 missing"; exit 2; }
if [ ! -f "$out/boot/b/perftest.txt" ] || [ ! -f "$out/in.pcap" ]; then
	echo "rxe lab: impair FAILED: the guests brought no results back" \
		"(logs in $out)"
	exit 2
fi

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { fail=$((fail + 1)); echo "  FAIL $*"; }
# is WHAT COND: ok or bad by COND's exit status
is() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

echo "perftest, server (a) and client (b):"
for g in a b; do
	for prog in ib_write_bw ib_read_bw; do
		r=$(sed -n "s/^$prog exit //p" "$out/boot/$g/perftest.txt" 2>/dev/null)
		is "$prog on $g exit ${r:-none}" [ "${r:-x}" = 0 ]
	done
done

echo "the relay ($(cat "$out/boot/relay.rc" 2>/dev/null || echo '?') on SIGTERM):"
sed 's/^/  | /' "$out/boot/relay.txt"
# each rule of the file matched and acted at least once
n=$(awk '/^rule [0-9]+ matched [1-9][0-9]* acted [1-9][0-9]*:/' \
	"$out/boot/relay.txt" | wc -l)
is "rules that acted: $n of $nrules" [ "$n" = "$nrules" ]
is "the relay's exit 0" [ "$(cat "$out/boot/relay.rc" 2>/dev/null)" = 0 ]

echo "rocemu check of the captures:"
for c in in out; do
	r=0
	"$rocemu" check "$out/$c.pcap" >"$out/check-$c.txt" 2>&1 || r=$?
	sed 's/^/  | /' "$out/check-$c.txt" | tail -n 12
	is "rocemu check $c.pcap exit $r" [ $r = 0 ]
	python3 "$frames" "$rocemu" "$out/$c.pcap" >"$out/$c.txt"
done
nflows=$(grep -c '^flow [0-9]* .*retransmitted$' "$out/check-out.txt" || :)
nresent=$(grep -c '^flow [0-9]* .*, [1-9][0-9]* retransmitted$' "$out/check-out.txt" || :)
all_resent() { [ "$nflows" -ge 2 ] && [ "$nresent" = "$nflows" ]; }
is "flows with packets retransmitted: $nresent of $nflows (two programs)" all_resent

# In the frame lines (impair_frames.py): $2 source, $3 destination, $4
# opcode, $5 PSN, $9 the AETH syndrome (0-31 ACK, 96 PSN sequence NAK).
# Loss: PSNs of B's WRITE MIDDLEs received more often than sent on (the
# relay dropped one) that B sent again and that reached A after all.
lost=$(awk -v b=$B 'FNR == 1 { f++ } $2 == b && $4 == "RC_RDMA_WRITE_MIDDLE" {
		if (f == 1) i[$5]++; else o[$5]++ }
	END { for (p in i) if (i[p] > o[p] + 0 && i[p] >= 2 && o[p] >= 1) print p }' \
	"$out/in.txt" "$out/out.txt" | wc -l)
is "WRITE packets lost, sent again and delivered: $lost" [ "$lost" -ge 1 ]
# Duplication: a WRITE LAST that reached A more often than B sent it, its
# PSN then ACKed at least twice by A (rxe ACKs a duplicate with its
# latest PSN, here the duplicate's: the copy comes right after it).
dupw=$(awk -v a=$A -v b=$B 'FNR == 1 { f++ }
	f == 1 && $2 == b && $4 == "RC_RDMA_WRITE_LAST" { i[$5]++ }
	f == 1 && $2 == a && $4 == "RC_ACK" && $9 < 32 { ack[$5]++ }
	f == 2 && $2 == b && $4 == "RC_RDMA_WRITE_LAST" { o[$5]++ }
	END { for (p in o) if (o[p] > i[p] && ack[p] >= 2) print p }' \
	"$out/in.txt" "$out/out.txt" | wc -l)
is "WRITE LASTs duplicated and ACKed twice: $dupw" [ "$dupw" -ge 1 ]
# a READ request that reached A more often than B sent it, answered again:
# its first response packet (same PSN) sent by A at least twice
dupr=$(awk -v a=$A -v b=$B 'FNR == 1 { f++ }
	f == 1 && $2 == b && $4 == "RC_RDMA_READ_REQUEST" { i[$5]++ }
	f == 1 && $2 == a && $4 ~ /^RC_RDMA_READ_RESPONSE_(FIRST|ONLY)$/ { r[$5]++ }
	f == 2 && $2 == b && $4 == "RC_RDMA_READ_REQUEST" { o[$5]++ }
	END { for (p in o) if (o[p] > i[p] && r[p] >= 2) print p }' \
	"$out/in.txt" "$out/out.txt" | wc -l)
is "READ requests duplicated and answered twice: $dupr" [ "$dupr" -ge 1 ]
# Reordering: PSN sequence NAKs from A (syndrome 96)
naks=$(awk -v a=$A '$2 == a && $4 == "RC_ACK" && $9 == 96' "$out/in.txt" | wc -l)
is "PSN sequence NAKs from the responder: $naks" [ "$naks" -ge 1 ]

secs=$(($(date +%s) - t0))
if [ $fail = 0 ] && [ $rc = 0 ]; then
	echo "rxe lab: impair $pass checks pass: loss, duplication and reordering" \
		"recovered by rxe <-> rxe, captures clean ($secs s; logs in $out)"
	exit 0
fi
echo "rxe lab: impair FAILED: $fail of $((pass + fail)) checks failed" \
	"(boot.sh exit $rc; $secs s; logs in $out)"
exit 1
