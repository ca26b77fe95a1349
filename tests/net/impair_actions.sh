#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu impair between two rocemu ping processes (mode ip): A and B are
# each told the relay's address as their peer (--via), the relay forwards
# between them and applies one rule a run. For each action the captures
# show it happening (what the relay received against what it sent, and
# each endpoint's own capture), the transfer still ends with every byte
# checked (ping --check, both sides), and rocemu check judges both
# endpoints' captures clean. Expectations come from the rules given, not
# from the relay's own report alone.
# Group ipv6 runs a loss and a CE mark over IPv6 (the relay remakes the
# ICRC over the IPv6 header), in a network namespace of the test's own
# where it adds fd00:31::1-3 to the loopback; without one it skips.
# usage: tests/net/impair_actions.sh BUILD_DIR loss|order|corrupt|ipv6
set -u
build=${1:?usage: impair_actions.sh BUILD_DIR loss|order|corrupt|ipv6}
group=${2:?which group: loss, order, corrupt or ipv6}
rocemu=$build/bin/rocemu
top=$(cd "$(dirname "$0")/../.." && pwd)
frames=$top/tests/lib/impair_frames.py
work=$build/impair_$group
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
case $group in
loss) net=220 port=18720 ;;
order) net=223 port=18740 ;;
corrupt) net=226 port=18760 ;;
ipv6) port=18780 ;;
*) echo "unknown group $group"; exit 2 ;;
esac
if [ "$group" = ipv6 ]; then
	# only in a namespace of its own (tests/lib/isolated.sh, as root),
	# where the loopback is the one interface: never the host's
	if [ "$(ip -o link show | awk -F": " '{ print $2 }')" != lo ] ||
		! ip -6 addr add fd00:31::1/128 dev lo nodad 2>/dev/null; then
		echo "impair_ipv6: skipped (needs a network namespace of its own)"
		exit 0
	fi
	ip -6 addr add fd00:31::2/128 dev lo nodad
	ip -6 addr add fd00:31::3/128 dev lo nodad
	R=fd00:31::1 A=fd00:31::2 B=fd00:31::3
else
	R=127.0.0.$net A=127.0.0.$((net + 1)) B=127.0.0.$((net + 2))
fi

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
. "$top/tests/lib/counters.sh"
. "$top/tests/lib/udp_port_free.sh"
[ "$group" = ipv6 ] || udp_4791_free "impair_$group" "$R" "$A" "$B"

# run NAME PINGARGS -- RULE...: the relay with the rules, B the server and
# A the client of ping --check with PINGARGS; in $work/NAME.* the relay's
# captures (in, out) and report (rep, json), each side's capture, stdout
# and stderr, and the exit codes in NAME.rc ("relay client server").
run() {
	local name=$1 args=() rules=() a
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	for a in "$@"; do rules+=(--rule "$a"); done
	port=$((port + 1))
	local w=$work/$name
	"$rocemu" impair --addr "$R" --a "$A" --b "$B" "${rules[@]}" \
		--pcap-in "$w.in.pcap" --pcap-out "$w.out.pcap" \
		--json "$w.json" >"$w.rep" 2>"$w.relay.err" &
	local rpid=$!
	# the relay says so once its socket is bound
	for _ in $(seq 100); do
		grep -q relaying "$w.relay.err" 2>/dev/null && break
		sleep 0.1
	done
	timeout 60 "$rocemu" ping --check --stats "${args[@]}" --addr "$B" \
		--via "$R" --port $port --pcap "$w.b.pcap" >"$w.b.out" \
		2>"$w.b.err" &
	local spid=$!
	timeout 60 "$rocemu" ping --check --stats "${args[@]}" --addr "$A" \
		--via "$R" --port $port --wait 20 --pcap "$w.a.pcap" "$B" \
		>"$w.a.out" 2>"$w.a.err"
	local crc=$?
	wait $spid
	local src=$?
	kill -TERM $rpid
	wait $rpid
	echo "$? $crc $src" >"$w.rc"
	"$frames" "$rocemu" "$w.in.pcap" >"$w.in.txt"
	"$frames" "$rocemu" "$w.out.pcap" >"$w.out.txt"
	"$frames" "$rocemu" "$w.a.pcap" >"$w.a.txt"
	"$frames" "$rocemu" "$w.b.pcap" >"$w.b.txt"
}

# fine NAME [SIDE...]: relay, client and server all exit 0, every byte
# checked on both sides, and rocemu check finds the endpoints' captures
# (a and b, or those named) clean.
fine() {
	local w=$work/$1 f sides=${2:-a b}
	if [ "$(cat "$w.rc")" = "0 0 0" ]; then ok; else
		bad "$1: exits (relay client server) $(cat "$w.rc")"
		tail -3 "$w.a.err" "$w.b.err" "$w.relay.err"
	fi
	for f in a b; do
		if grep -q '^[0-9]* messages checked, every byte as sent$' \
			"$w.$f.out"; then ok; else bad "$1: $f checked no data"; fi
	done
	for f in $sides; do
		if "$rocemu" check "$w.$f.pcap" >"$w.$f.check" 2>&1; then ok; else
			bad "$1: rocemu check of $f's capture:"
			tail -5 "$w.$f.check"
		fi
	done
}

# lines NAME FILE AWK: how many lines of NAME.FILE the awk condition takes
lines() { awk "$3" "$work/$1.$2" | wc -l; }

# same N M WHAT: N equals M
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: $1, wanted $2"; fi; }

# the report's line for rule 1: "matched M acted N"
acted() { sed -n 's/^rule 1 matched [0-9]* acted \([0-9]*\):.*/\1/p' "$work/$1.rep"; }

# retransmitted PSNs of A's requests: a PSN A sent more than once
resent() {
	awk -v a="$A" '$2 == a && $4 ~ /^RC_SEND/ { n[$5]++ }
		END { for (p in n) if (n[p] > 1) print p }' "$work/$1.a.txt" | wc -l
}

loss() {
	# drop: A's first SEND never reaches B; A sends it again (same PSN)
	run drop -n 20 -s 100 -- "drop opcode=RC_SEND_ONLY dir=ab count=1"
	fine drop
	local inn outn
	inn=$(lines drop in.txt "\$2 == \"$A\" && \$4 == \"RC_SEND_ONLY\"")
	outn=$(lines drop out.txt "\$3 == \"$B\" && \$4 == \"RC_SEND_ONLY\"")
	same "$outn" "$((inn - 1))" "drop: SENDs sent on against received - 1"
	same "$inn" 21 "drop: SENDs A sent (20 and one again)"
	same "$(resent drop)" 1 "drop: PSNs A sent again"
	same "$(acted drop)" 1 "drop: the report's count"
	expect_counter drop.a.out retransmits -ge 1

	# dup: B gets one SEND twice, treats the second as a duplicate
	# (IBTA 9.7.5.1.1: answered with an ACK, not executed again)
	run dup -n 20 -s 100 -- "dup opcode=RC_SEND_ONLY dir=ab count=1"
	fine dup
	inn=$(lines dup in.txt "\$2 == \"$A\" && \$4 == \"RC_SEND_ONLY\"")
	outn=$(lines dup out.txt "\$3 == \"$B\" && \$4 == \"RC_SEND_ONLY\"")
	same "$inn" 20 "dup: SENDs received"
	same "$outn" 21 "dup: SENDs sent on"
	expect_counter dup.b.out duplicate_requests = 1
	# B's capture: one PSN arrived twice and was ACKed twice
	local twice
	twice=$(awk -v b="$B" '$3 == b && $4 == "RC_SEND_ONLY" { n[$5]++ }
		END { for (p in n) if (n[p] == 2) print p }' "$work/dup.b.txt")
	same "$(echo "$twice" | grep -c .)" 1 "dup: PSNs B took twice"
	# and answered: an ACK of that PSN, or two (the copies come back to
	# back, so one ACK may answer both), and no NAK
	local acks
	acks=$(awk -v b="$B" -v p="$twice" '$2 == b && $4 == "RC_ACK" &&
		$5 == p' "$work/dup.b.txt" | wc -l)
	case $acks in
	1|2) ok ;;
	*) bad "dup: $acks ACKs of that PSN, wanted 1 or 2" ;;
	esac
	expect_counter dup.b.out nak_sent_psn_seq = 0
}

order() {
	# delay: two of B's ACKs wait 40 ms; each left the relay 40 ms or
	# more after it came (a lower bound: a busy machine only adds)
	run delay -n 10 -s 100 -- "delay ms=40 opcode=RC_ACK dir=ba count=2"
	fine delay
	local late
	late=$(awk 'NR == FNR { if ($4 == "RC_ACK" && !($5 in t)) t[$5] = $1
			next }
		$4 == "RC_ACK" && !($5 in seen) { seen[$5] = 1
			if ($1 - t[$5] >= 0.040) print $5 }' \
		"$work/delay.in.txt" "$work/delay.out.txt" | wc -l)
	same "$late" 2 "delay: ACKs sent on 40 ms or more after they came"
	same "$(acted delay)" 2 "delay: the report's count"

	# reorder: the FIRST packet of a 4-packet SEND goes after the rest of
	# its message; B sees a PSN gap, NAKs it (sequence error, IBTA
	# 9.7.5.1.1) and A sends again from the NAK's PSN. The relay sends
	# the held FIRST before it reads B's NAK (one loop), so B gets the
	# four in this order every time.
	run reorder -n 5 -s 4096 -m 1024 -- \
		"reorder opcode=RC_SEND_FIRST dir=ab count=1 after=3"
	fine reorder
	# the first four packets the relay sent to B: MIDDLE, MIDDLE, LAST
	# and then their FIRST, PSNs p+1, p+2, p+3, p
	local four
	four=$(awk -v b="$B" '$3 == b { print $4, $5 }' \
		"$work/reorder.out.txt" | head -4 | tr '\n' ' ')
	set -- $four
	if [ "$1 $3 $5 $7" = "RC_SEND_MIDDLE RC_SEND_MIDDLE RC_SEND_LAST RC_SEND_FIRST" ] &&
		[ "$2 $4 $6" = "$(($8 + 1)) $(($8 + 2)) $(($8 + 3))" ]; then
		ok
	else
		bad "reorder: first four sent to B: $four"
	fi
	expect_counter reorder.b.out nak_sent_psn_seq -ge 1
	# go-back-N from the NAK's PSN, the FIRST's: the message's 4096 /
	# 1024 = 4 packets all go again
	same "$(resent reorder)" 4 "reorder: PSNs A sent again"
}

corrupt() {
	# corrupt, ICRC kept: B drops the packet (a bad ICRC), A sends again
	run keep -n 20 -s 100 -- "corrupt opcode=RC_SEND_ONLY dir=ab count=1"
	fine keep a
	# B's capture holds the corrupted frame as it came: rocemu check
	# finds exactly that, the ICRC rule, and nothing else
	if "$rocemu" check "$work/keep.b.pcap" >"$work/keep.b.check" 2>&1; then
		bad "corrupt: rocemu check of B's capture found nothing"
	else
		ok
	fi
	same "$(grep -c ': rule ICRC ' "$work/keep.b.check")" 1 \
		"corrupt: ICRC findings in B's capture"
	if grep -q ' 1 rule violations,' "$work/keep.b.check"; then ok; else
		bad "corrupt: B's capture has other findings"
		cat "$work/keep.b.check"
	fi
	same "$(awk '$6 == "bad"' "$work/keep.out.txt" | wc -l)" 1 \
		"corrupt: frames sent with a bad ICRC"
	same "$(awk '$6 == "bad"' "$work/keep.in.txt" | wc -l)" 0 \
		"corrupt: frames received with a bad ICRC"
	expect_counter keep.b.out rx_drop_icrc = 1
	same "$(resent keep)" 1 "corrupt: PSNs A sent again"

	# corrupt, ICRC fixed: the last payload byte of B's first answer is
	# flipped and nothing below the application can tell; A's check
	# finds it (the ICRC is the only end-to-end guard)
	run fix -n 1 -s 100 -- \
		"corrupt opcode=RC_SEND_ONLY dir=ba count=1 icrc=fix"
	same "$(cat "$work/fix.rc")" "0 1 0" "corrupt icrc=fix: exits"
	if grep -q "^rocemu ping: round trip 1: byte 99 is 0x.., sent 0x..$" \
		"$work/fix.a.err"; then ok; else
		bad "corrupt icrc=fix: A did not find byte 99"
		cat "$work/fix.a.err"
	fi
	same "$(awk '$6 == "bad"' "$work/fix.out.txt" | wc -l)" 0 \
		"corrupt icrc=fix: frames sent with a bad ICRC"
	expect_counter fix.a.out rx_drop_icrc = 0

	# ecn: every SEND to B marked Congestion Experienced (ECN 11, the
	# low two bits of the TOS); the ICRC masks them, so B takes them all
	run ecn -n 10 -s 100 -- "ecn opcode=RC_SEND_ONLY dir=ab"
	fine ecn
	# (each endpoint sees the relay as its peer)
	same "$(awk -v r="$R" '$2 == r && $4 == "RC_SEND_ONLY" && $7 % 4 == 3' \
		"$work/ecn.b.txt" | wc -l)" 10 "ecn: SENDs B took marked CE"
	same "$(awk -v r="$R" '$2 == r && $7 % 4 == 3' "$work/ecn.a.txt" |
		wc -l)" 0 "ecn: answers marked (none wanted)"
	expect_counter ecn.b.out rx_drop_icrc = 0
}

ipv6() {
	# one SEND lost, every answer to A marked CE (the IPv6 traffic
	# class's low two bits)
	run v6 -n 10 -s 100 -- "drop opcode=RC_SEND_ONLY dir=ab count=1" \
		"ecn dir=ba"
	fine v6
	same "$(resent v6)" 1 "ipv6: PSNs A sent again"
	same "$(awk -v r="$R" '$2 == r && $7 % 4 == 3' "$work/v6.a.txt" |
		wc -l)" "$(awk -v r="$R" '$2 == r' "$work/v6.a.txt" | wc -l)" \
		"ipv6: answers to A marked CE, of all"
	same "$(awk -v r="$R" '$2 == r' "$work/v6.a.txt" | wc -l)" 20 \
		"ipv6: answers to A (10 SENDs, 10 ACKs)"
	expect_counter v6.a.out rx_drop_icrc = 0
	expect_counter v6.b.out rx_drop_icrc = 0
}

$group
echo "impair_$group: $pass passed, $fail failed"
[ $fail = 0 ]
