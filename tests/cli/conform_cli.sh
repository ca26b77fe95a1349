#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu conform against rocemu itself: rocemu-agent on the drop-in
# (ROCEMU_ADDR=127.0.0.2), conform at 127.0.0.3. Every scenario of
# conformance/scenarios/ must pass; the JUnit report and the session's capture
# must say the same. Then the responder's test-only misbehaviour switch
# (ROCEMU_TEST_MISBEHAVE), one misbehaviour at a time: the scenario that
# checks the broken rule must fail, naming that rule, and the rest of the
# scenarios of that group must still pass. And the scenario reader's
# refusals: each malformed scenario is refused with its file and line.
# usage: tests/cli/conform_cli.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: conform_cli.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$build/conform_cli
rm -rf "$work" && mkdir -p "$work"
rocemu=$build/bin/rocemu
agent=$build/bin/rocemu-agent
scn=$here/../../conformance/scenarios
. "$here/../lib/cli_lib.sh"
. "$here/../lib/udp_port_free.sh"
udp_4791_free conform_cli 127.0.0.2 127.0.0.3
. "$here/../lib/verbs_env.sh"
. "$here/../lib/wait_listen.sh"
port=18600

# start_agent [ENV=VALUE...]: rocemu-agent on the drop-in, on a new port,
# with the arguments in agent_args; its port's active MTU 4096 (the
# large-message scenarios need it) unless ENV says ROCEMU_MTU otherwise.
agent_args=()
start_agent() {
	port=$((port + 1))
	env ROCEMU_MTU=4096 "$@" ROCEMU_ADDR=127.0.0.2 "$agent" -l 127.0.0.1 -p $port \
		${agent_args[@]+"${agent_args[@]}"} >"$work/agent.$port.log" 2>&1 &
	apid=$!
	wait_listen $port || bad "rocemu-agent did not listen on port $port"
}
stop_agent() { kill $apid 2>/dev/null; wait $apid 2>/dev/null; }

# ---- the reader: every scenario reads; malformed ones are refused ----
expect_exit 0 "lint of conformance/scenarios" -- "$rocemu" conform --lint --dir "$scn"
n=$(ls "$scn"/*.scn | wc -l)
[ "$n" -ge 40 ] && ok || bad "only $n scenarios (at least 40 wanted)"
mkdir -p "$work/bad"
printf 'title t\nrule r\nsend RC_SEND_ONLY\nfrobnicate 3\n' >"$work/bad/kw.scn"
printf 'title t\nsend RC_SEND_ONLY\n' >"$work/bad/norule.scn"
printf 'title t\nrule r\nsend RC_SEND_ONLY psn=1 psn=2\n' >"$work/bad/twice.scn"
printf 'title t\nrule r\nsilence soon\n' >"$work/bad/ms.scn"
printf 'title t\nrule r\nrole boss\nwait 1\n' >"$work/bad/role.scn"
printf 'title t\nrule r\nsend RC_SEND_WHOLE psn=1\n' >"$work/bad/op.scn"
printf 'title t\nrule r\nexpect RC_ACK colour=red\n' >"$work/bad/key.scn"
printf 'title t\nrule r\nrole cm\nsend-cm HELLO\n' >"$work/bad/cmmsg.scn"
printf 'title t\nrule r\nrole cm\nsend-cm MRA\n' >"$work/bad/cmmra.scn"
printf 'title t\nrule r\nrole cm\nexpect-cm REP colour=red\n' >"$work/bad/cmkey.scn"
printf 'title t\nrule r\nrole cm\nsend-cm RTU port=1\n' >"$work/bad/cmport.scn"
printf 'title t\nrule r\ncovers PSN-ORDER NO-SUCH-RULE\nwait 1\n' >"$work/bad/covers.scn"
printf 'title t\nrule r\ncovers 9.7.1\nwait 1\n' >"$work/bad/coverform.scn"
# What the reader does not understand is refused, never played: a key
# the step does not take, a key of a header the opcode lacks (IBTA
# 9.2-9.4), a misspelt completion status, a value one side cannot use.
mra='mr a size=64 access=lw'
printf 'title t\nrule r\n%s\nrecv mr=a off=0 len=4 colour=red\n' "$mra" >"$work/bad/recvkey.scn"
printf 'title t\nrule r\n%s\npost op=send mr=a len=4 lenght=8\n' "$mra" >"$work/bad/postkey.scn"
printf 'title t\nrule r\nstate rts colour=1\n' >"$work/bad/statekey.scn"
printf 'title t\nrule r\nsend RC_SEND_ONLY va=0x10\n' >"$work/bad/rethsend.scn"
printf 'title t\nrule r\nsend RC_RDMA_WRITE_ONLY aeth=ack\n' >"$work/bad/aethreq.scn"
printf 'title t\nrule r\nexpect RC_ACK imm=1\n' >"$work/bad/immack.scn"
printf 'title t\nrule r\nsend RC_ACK fill=0x12\n' >"$work/bad/fillack.scn"
printf 'title t\nrule r\ncompletion status=sucess\n' >"$work/bad/status.scn"
printf 'title t\nrule r\ncompletion opcode=!rcv\n' >"$work/bad/wcop.scn"
printf 'title t\nrule r\nexpect RC_ACK aeth=0x60\n' >"$work/bad/aethnum.scn"
printf 'title t\nrule r\nsend RC_SEND_ONLY psn=any\n' >"$work/bad/sendany.scn"
printf 'title t\nrule r\nexpect RC_ACK psn=b+1\n' >"$work/bad/expr.scn"
printf 'title t\nrule r\n%s\nmemory b off=0 len=4 fill=0\n' "$mra" >"$work/bad/memmr.scn"
printf 'title t\nrule r\nexpect RC_ACK within=soon\n' >"$work/bad/within.scn"
printf 'title t\nrule r\nwait 1\nexpect RC_ACK rule=NO-SUCH-RULE\n' >"$work/bad/steprule.scn"
printf 'title t\nrule r\nexpect RC_ACK rule=9.7.1\n' >"$work/bad/ruleform.scn"
printf 'title t\nrule r\nexpect RC_ACK timer=rnr:32\n' >"$work/bad/timer.scn"
printf 'title t\nrule r\nqp timeout=0\nexpect RC_ACK timer=ack\n' >"$work/bad/timer0.scn"
# several QPs: every QP after the first has a name of its own, steps name
# a declared one; one SRQ
printf 'title t\nrule r\nqp a psn=1\nqp psn=2\nwait 1\n' >"$work/bad/qpname.scn"
printf 'title t\nrule r\nqp a\nqp a\nwait 1\n' >"$work/bad/qptwice.scn"
printf 'title t\nrule r\nqp a\nmr a size=64\nwait 1\n' >"$work/bad/qpmr.scn"
printf 'title t\nrule r\nqp a\nqp b\nexpect RC_ACK qp=c\n' >"$work/bad/qpstep.scn"
printf 'title t\nrule r\nqp a\nqp b\nexpect RC_ACK psn=c.psn\n' >"$work/bad/qpexpr.scn"
printf 'title t\nrule r\nsrq\nsrq max_wr=4\nwait 1\n' >"$work/bad/srqtwice.scn"
printf 'title t\nrule r\nqp srq=1\nwait 1\n' >"$work/bad/srqnone.scn"
printf 'title t\nrule r\nsrq\n%s\nrecv srq=2 mr=a off=0 len=4\n' "$mra" >"$work/bad/srqtwo.scn"
for c in "recvkey.scn:4: recv takes no key 'colour'" "postkey.scn:4: post takes no key 'lenght'" \
	 "statekey.scn:3: state takes no key 'colour'" \
	 "rethsend.scn:3: send RC_SEND_ONLY has no RETH: va= does not apply" \
	 "aethreq.scn:3: send RC_RDMA_WRITE_ONLY has no AETH: aeth= does not apply" \
	 "immack.scn:3: expect RC_ACK has no ImmDt: imm= does not apply" \
	 "fillack.scn:3: send RC_ACK carries no payload" \
	 "status.scn:3: completion status=sucess: no such word" \
	 "wcop.scn:3: completion opcode=!rcv: no such word" \
	 "aethnum.scn:3: expect aeth=0x60: expect compares ack, rnr, nak" \
	 "sendany.scn:3: send psn=any: a send step sends a value" \
	 "expr.scn:3: expect psn='b+1': no such name" \
	 "memmr.scn:4: memory names no MR of this scenario: 'b'" \
	 "within.scn:3: expect within=soon: milliseconds" \
	 "steprule.scn:4: rule=NO-SUCH-RULE, which is no rule of the book" \
	 "ruleform.scn:3: rule=9.7.1: a rule book ID" \
	 "timer.scn:3: expect timer=rnr:32: ack (the QP's local ACK timeout, not 0) or rnr:CODE" \
	 "timer0.scn:4: expect timer=ack: ack (the QP's local ACK timeout, not 0)" \
	 "qpname.scn:4: a second qp needs a name" "qptwice.scn:4: qp a is declared twice" \
	 "qpmr.scn:4: mr a has a QP's name" \
	 "qpstep.scn:5: qp=c: the scenario declares no QP of that name" \
	 "qpexpr.scn:5: expect psn='c.psn': no such name" \
	 "srqtwice.scn:4: one srq line per scenario" \
	 "srqnone.scn:0: qp srq=1: srq=1 names the scenario's srq line, which it lacks" \
	 "srqtwo.scn:5: recv srq=2: srq=1 names the scenario's srq line" \
	 "kw.scn:4: unknown keyword 'frobnicate'" "norule.scn:0: a scenario needs a title and a rule" \
	 "twice.scn:3: key 'psn' given twice" "ms.scn:3: silence takes milliseconds" \
	 "role.scn:3: role is responder, requester or cm" \
	 "op.scn:3: 'RC_SEND_WHOLE' is not an opcode the table knows" \
	 "key.scn:3: expect takes no key 'colour'" \
	 "cmmsg.scn:4: 'HELLO' is not a CM message" \
	 "cmmra.scn:4: send-cm sends REQ REJ RTU DREQ DREP, not MRA" \
	 "cmkey.scn:4: expect-cm REP takes no key 'colour'" \
	 "cmport.scn:4: send-cm RTU takes no key 'port'" \
	 "covers.scn: covers NO-SUCH-RULE, which is no rule of the book" \
	 "coverform.scn:3: covers wants rule IDs"; do
	f=${c%%:*}
	expect_exit 2 "lint $f" -- "$rocemu" conform --lint "$work/bad/$f"
	expect_grep "$work/err" "$c" "lint $f"
done

# ---- the coverage matrix: each rule of the book and its scenarios ----
expect_exit 0 "coverage" -- "$rocemu" conform --coverage --dir "$scn"
# the ICRC rule's scenarios, as their covers lines name them
want=$(grep -l '^covers .*\bICRC\b' "$scn"/*.scn | xargs -n1 basename | sed 's/\.scn$//' | tr '\n' ' ')
if grep -qE "^ICRC +A17.3.3, 7.8.1 +${want% }\$" "$work/out"; then ok; else bad "coverage: ICRC row is not '$want'"; fi
one=$(grep -lE '^needs .*\bipv[46]\b' "$scn"/*.scn | wc -l)
if grep -qE "^[0-9]+ rules: [0-9]+ covered by $(ls "$scn"/*.scn | wc -l) scenarios \(each over IPv4 and IPv6, but $one over one only\)" "$work/out"; then ok; else bad "coverage: total"; fi
# a scenario that names no rule fails the matrix
mkdir -p "$work/bare"
printf 'title t\nrule r\nwait 1\n' >"$work/bare/bare.scn"
expect_exit 1 "coverage of a scenario with no covers" -- "$rocemu" conform --coverage --dir "$work/bare"
expect_grep "$work/err" "bare.scn: no covers line" "coverage: the bare scenario named"

# ---- the whole suite against rocemu ----
start_agent
"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --dir "$scn" \
	--junit "$work/conform.xml" --pcap "$work/conform.pcap" >"$work/conform.txt" 2>&1
rc=$?
stop_agent
tail -n 1 "$work/conform.txt"
if [ $rc = 0 ]; then ok; else
	bad "conform against rocemu: exit $rc"
	grep -A 14 '^FAIL\|^KNOWN' "$work/conform.txt" | head -n 80
fi
expect_grep "$work/conform.txt" "scenarios on rocemu: $n passed, 0 failed" "every scenario passes"
env -u LD_PRELOAD python3 - "$work/conform.xml" "$n" <<'PY' && ok || bad "JUnit report"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
cases = s.findall('testcase')
assert s.tag == 'testsuite' and int(s.get('tests')) == len(cases) == int(sys.argv[2]), 'count'
assert s.get('failures') == '0' and not s.findall('.//failure'), 'failures'
PY
# The capture holds every packet both ways; only the ones sent spoiled on
# purpose (icrc=bad) fail their ICRC.
spoiled=$(grep -l 'icrc=bad' "$scn"/*.scn | xargs cat | grep -c '^send .*icrc=bad')
"$rocemu" dump "$work/conform.pcap" >"$work/dump.txt" 2>&1
sent_bad=$(grep -c ' icrc BAD ' "$work/dump.txt")
[ "$sent_bad" = "$spoiled" ] && ok || bad "capture: $sent_bad packets with a bad ICRC, $spoiled sent so"
# The capture holds the IP headers as they were on the wire: with this
# namespace's default TTL at 9 (the kernel's, for both ends' sockets),
# every packet, sent or received, shows TTL 9 and a right IPv4 header
# checksum (the capture rebuilt them with TTL 64 before). Only where the
# test has a namespace of its own (root: {isolated}), never the host's.
if [ "$(id -u)" = 0 ] && [ "$(ip -o link show | wc -l)" = 1 ] &&
   sysctl -qw net.ipv4.ip_default_ttl=9 2>/dev/null; then
	start_agent
	"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --dir "$scn" \
		--pcap "$work/ttl.pcap" rc_send_only >"$work/ttl.txt" 2>&1
	rc=$?
	stop_agent
	sysctl -qw net.ipv4.ip_default_ttl=64
	[ $rc = 0 ] && ok || bad "rc_send_only with TTL 9: exit $rc"
	env -u LD_PRELOAD python3 - "$work/ttl.pcap" <<'PY' && ok || bad "the capture's IP headers are the ones on the wire"
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, n, ttls = 24, 0, set()
while off < len(d):
    incl = struct.unpack_from('<I', d, off + 8)[0]
    ip = d[off + 16 + 14: off + 16 + 34]
    off += 16 + incl
    s = sum(struct.unpack('!10H', ip))
    s = (s & 0xffff) + (s >> 16)
    assert s == 0xffff, 'IPv4 header checksum wrong'
    ttls.add(ip[8]); n += 1
assert n >= 2 and ttls == {9}, (n, ttls)
PY
	"$rocemu" dump "$work/ttl.pcap" >"$work/ttl_dump.txt" 2>&1
	if grep -q ' icrc BAD ' "$work/ttl_dump.txt"; then bad "TTL 9: an ICRC is bad"; else ok; fi
fi
# ---- verdicts beside PASS: not applicable, and no agent ----
# A path MTU above the port's active MTU (the drop-in's default is 1024)
# cannot be set up: N/A, which does not fail the run, and a skipped JUnit
# case. So is every scenario that says needs mtu2048 or mtu4096 there.
printf 'title t\nrule r\nqp mtu=4096\nsend RC_SEND_ONLY\n' >"$work/bad/big_mtu.scn"
start_agent ROCEMU_MTU=1024
"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --junit "$work/na.xml" \
	"$work/bad/big_mtu.scn" $(ls "$scn"/*mtu[24]0[49][68]*.scn) >"$work/na.txt" 2>&1
rc=$?
stop_agent
[ $rc = 0 ] && ok || bad "a not applicable scenario: exit $rc, wanted 0"
expect_grep "$work/na.txt" "N/A   big_mtu " "big_mtu is not applicable"
expect_grep "$work/na.txt" "path MTU 4096 is above the port's active MTU 1024" "the N/A's reason"
expect_grep "$work/na.xml" '<skipped message=' "JUnit: skipped"
nbig=$(grep -l '^needs .*mtu[24]0[49][68]' "$scn"/*.scn | wc -l)
[ "$nbig" -ge 8 ] && ok || bad "only $nbig scenarios need MTU 2048 or 4096"
expect_grep "$work/na.txt" "0 passed, 0 failed, 0 failed as known rocemu deviations, $((nbig + 1)) not applicable" \
	"every scenario that needs a large MTU is N/A at active MTU 1024"
expect_grep "$work/na.txt" "it needs an active MTU of 4096 (needs mtu4096), the port's is 1024" \
	"the N/A's reason for needs mtu4096"
expect_grep "$work/na.txt" "it needs an active MTU of 2048 (needs mtu2048), the port's is 1024" \
	"the N/A's reason for needs mtu2048"
# A device without FLUSH and ATOMIC WRITE (rxe before Linux 6.2): a relay
# in front of the agent answers hello with caps=none; every scenario that
# needs them is N/A with its reason, none fails.
relay=$((port + 100))
start_agent
env -u LD_PRELOAD python3 - "$relay" "$port" <<'PY' &
import socket, sys, threading
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(('127.0.0.1', int(sys.argv[1])))
ls.listen(4)
def pipe(src, dst, hello):
    try:
        for line in src.makefile('rb'):
            if hello and line.startswith(b'ok proto='):
                line = b' '.join(b'caps=none' if w.startswith(b'caps=') else w
                                 for w in line.split()) + b'\n'
            dst.sendall(line)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = ls.accept()
    a = socket.create_connection(('127.0.0.1', int(sys.argv[2])))
    threading.Thread(target=pipe, args=(a, c, True), daemon=True).start()
    threading.Thread(target=pipe, args=(c, a, False), daemon=True).start()
PY
rpid=$!
wait_listen $relay || bad "the caps relay did not listen on port $relay"
"$rocemu" conform --agent 127.0.0.1:$relay --local 127.0.0.3 \
	$(ls "$scn"/flush_*.scn "$scn"/atomic_write_*.scn "$scn"/req_flush.scn \
		"$scn"/req_atomic_write.scn) >"$work/nocaps.txt" 2>&1
rc=$?
kill $rpid 2>/dev/null
wait $rpid 2>/dev/null
stop_agent
[ $rc = 0 ] && ok || bad "FLUSH and ATOMIC WRITE scenarios on a device without them: exit $rc"
expect_grep "$work/nocaps.txt" "12 scenarios on rocemu: 0 passed, 0 failed, 0 failed as known rocemu deviations, 12 not applicable" \
	"FLUSH and ATOMIC WRITE scenarios are N/A without the capabilities"
expect_grep "$work/nocaps.txt" "the device does no FLUSH (no FLUSH_GLOBAL capability; caps none)" \
	"the N/A's reason for FLUSH"
expect_grep "$work/nocaps.txt" "the device does no ATOMIC WRITE (no ATOMIC_WRITE capability; caps none)" \
	"the N/A's reason for ATOMIC WRITE"
expect_exit 2 "no agent listening" -- "$rocemu" conform --agent 127.0.0.1:1 --local 127.0.0.3 rc_send_only
expect_grep "$work/err" "is rocemu-agent running there?" "no agent: the message says what to check"
# A memory step whose off + len passes 2^64 is refused by conform itself,
# not wrapped to a small end that passes and sent on to the agent.
printf 'title t\nrule r\nrole responder\ntransport rc\nmr a size=4096 access=lw,rw\n%s\n' \
	'memory a off=0xffffffffffffffff len=2 fill=0x19' >"$work/bad/wrap.scn"
start_agent
"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 "$work/bad/wrap.scn" \
	>"$work/wrap.txt" 2>&1
rc=$?
stop_agent
[ $rc = 1 ] && ok || bad "a memory range that wraps: exit $rc, wanted 1"
expect_grep "$work/wrap.txt" "wrap.scn: memory needs an MR of the scenario, off=, len= within it" \
	"a memory range that wraps is refused by conform"
# Several QPs: a step's qp= is judged. The ACK of QP a's WRITE goes to
# conform's QP for a, not b's (crossed.scn fails at the expect); a's
# receive completion is a's, not b's (wrongwc.scn fails at the completion).
qps='qp a psn=0x10\nqp b psn=0x10\nmr m size=4096 access=lw,rw'
printf 'title t\nrule r\n%b\n%s\n%s\n' "$qps" \
	'send RC_RDMA_WRITE_ONLY qp=a va=m rkey=m.rkey len=4' 'expect RC_ACK qp=b psn=0x10' \
	>"$work/bad/crossed.scn"
printf 'title t\nrule r\n%b\n%s\n%s\n%s\n%s\n' "$qps" 'recv qp=a mr=m off=0 len=64' \
	'send RC_SEND_ONLY qp=a len=4' 'expect RC_ACK qp=a psn=0x10' 'completion qp=b opcode=recv' \
	>"$work/bad/wrongwc.scn"
start_agent
"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 "$work/bad/crossed.scn" \
	"$work/bad/wrongwc.scn" >"$work/qps.txt" 2>&1
rc=$?
stop_agent
[ $rc = 1 ] && ok || bad "a step on the wrong QP: exit $rc, wanted 1"
expect_grep "$work/qps.txt" "crossed.scn:7: expected RC_ACK: destination QP 0x" \
	"an ACK to QP a's peer does not match an expect of QP b"
expect_grep "$work/qps.txt" "wrongwc.scn:9: the completion is not QP b's" \
	"QP a's completion does not match a completion step of QP b"
expect_grep "$work/qps.txt" "2 scenarios on rocemu: 0 passed, 2 failed" "both fail"

# ---- the format's alternatives, optional packets and timing ----
# maybe: a packet it does not match is left for the next step (held.scn
# passes); expect A | B: a packet neither alternative matches fails,
# naming both (alt.scn); after= counts from the end of the step before,
# here a post 2.5 s after the last packet (after.scn fails: the WRITE
# comes right after the post); a failure's evidence keeps the scenario's
# first packets, not only the last ten.
mkdir -p "$work/format"
hdr='title t\nrule r\nqp psn=0x10\nmr a size=4096 access=lw,rw\n'
wr='send RC_RDMA_WRITE_ONLY va=a rkey=a.rkey len=8'
printf "$hdr%s psn=0x10\nmaybe RC_ACK psn=0x999 within=300\nexpect RC_ACK psn=0x10 aeth=ack\n" \
	"$wr" >"$work/format/held.scn"
printf "$hdr%s psn=0x10\nexpect RC_ACK psn=0x11 | RC_ACK aeth=nak_seq\n" "$wr" >"$work/format/alt.scn"
printf "$hdr%s psn=0x10\nexpect RC_ACK psn=0x10\nwait 2500\n%s\n%s\n" "$wr" \
	'post op=write mr=a off=0 len=8 raddr=a rkey=a.rkey id=1' \
	'expect RC_RDMA_WRITE_ONLY psn=0x10 after=2000' >"$work/format/after.scn"
# long.scn: three WRITEs and their ACKs (6 lines of evidence), a memory
# step that reads 60 KiB in 60 agent requests of 1 KiB (60 lines), two
# more WRITEs and ACKs (4 lines): of 70 lines the first and last 32 are
# kept, 6 left out.
{ printf 'title t\nrule r\nqp psn=0x40\nmr a size=65536 access=lw,rw\n'
  for p in 0x40 0x41 0x42 M 0x43 0x44; do
	if [ $p = M ]; then echo 'memory a off=64 len=61440 fill=0'; continue; fi
	printf '%s psn=%s\nexpect RC_ACK psn=%s\n' "$wr" $p $p; done
  printf 'expect RC_ACK within=50 rule=PSN-ORDER\n'; } >"$work/format/long.scn"
# timer=: the requester's resend after an RNR NAK judged against the
# table's timer (IBTA 9.7.5.2.8), with the stated tolerance: a NAK of
# code 0 (655.36 ms) judged as code 22 (20.48 ms, accepted to 240.96 ms)
# comes too late (the old after=20 within=2000 took it); a NAK of code 22
# judged as code 26 (81.92 ms, accepted from 76.92 ms) comes too soon.
rnr=$scn/req_rnr_timer_honoured.scn
sed 's/rnr_timer=22/rnr_timer=0/' "$rnr" >"$work/format/late.scn"
sed 's/timer=rnr:22/timer=rnr:26/' "$rnr" >"$work/format/early.scn"
start_agent
"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --junit "$work/format.xml" \
	"$work/format/held.scn" "$work/format/alt.scn" "$work/format/after.scn" \
	"$work/format/long.scn" "$work/format/late.scn" "$work/format/early.scn" \
	>"$work/format.txt" 2>&1
rc=$?
stop_agent
[ $rc = 1 ] && ok || bad "the format's cases: exit $rc, wanted 1"
expect_grep "$work/format.txt" "PASS  held " "maybe leaves a packet it does not match to the next step"
expect_grep "$work/format.txt" "alt.scn:6: expected one of 2 alternatives, none matched: RC_ACK: psn is 0x10, not 0x11" \
	"expect A | B: both alternatives' differences"
expect_grep "$work/format.txt" "RC_ACK: AETH is ack, not nak_seq" "expect A | B: the second alternative's"
expect_grep "$work/format.txt" "after.scn:9: expected RC_RDMA_WRITE_ONLY: RC_RDMA_WRITE_ONLY came" \
	"after= counts from the end of the step before"
expect_grep "$work/format.txt" "sooner than 2000 ms" "after=: the bound named"
expect_grep "$work/format.txt" "-> RC_RDMA_WRITE_ONLY psn=0x40 " "the evidence keeps the first packet sent"
expect_grep "$work/format.txt" "<- RC_ACK psn=0x44 " "and the last one before the failure"
expect_grep "$work/format.txt" "... 6 lines left out ..." "and says how many between are left out"
expect_grep "$work/format.txt" "step rule: PSN-ORDER (IBTA " "a step's rule= is reported"
expect_grep "$work/format.txt" "late.scn:13: expected RC_SEND_ONLY: nothing came within 241 ms, later than the RNR NAK timer of code 22 (IBTA 9.7.5.2.8) = 20.480 ms, accepted from 15.480 to 240.960 ms" \
	"timer=rnr:22: a resend after 655 ms is too late"
expect_grep "$work/format.txt" "sooner than the RNR NAK timer of code 26 (IBTA 9.7.5.2.8) = 81.920 ms" \
	"timer=rnr:26: a resend after 20 ms is too soon"
env -u LD_PRELOAD python3 - "$work/format.xml" <<'PY' && ok || bad "JUnit: a failure's message names its step's file, line and rule"
import sys, xml.etree.ElementTree as ET
cases = {c.get('name'): c for c in ET.parse(sys.argv[1]).getroot().findall('testcase')}
m = cases['long (ipv4)'].find('failure').get('message')
assert '/format/long.scn:16: expected RC_ACK within 50 ms' in m and '(rule: PSN-ORDER; r)' in m, m
PY

# ---- known differences: conformance/differences.md, read for --impl ----
# A scenario that fails on purpose (it wants MSN 2 for the first message)
# under the name of one the list gives for rxe is KNOWN, with the entry's
# text; the same file under a name the list does not give is FAIL.
diffs=$here/../../conformance/differences.md
mkdir -p "$work/known"
sed 's/msn=1$/msn=2/' "$scn/rc_send_only.scn" >"$work/known/send_inv_mr_key.scn"
cp "$work/known/send_inv_mr_key.scn" "$work/known/not_listed.scn"
start_agent
"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --impl rxe --known "$diffs" \
	"$work/known/send_inv_mr_key.scn" "$work/known/not_listed.scn" >"$work/known.txt" 2>&1
rc=$?
stop_agent
[ $rc = 1 ] && ok || bad "a known and an unlisted failure: exit $rc, wanted 1"
expect_grep "$work/known.txt" "KNOWN send_inv_mr_key " "a scenario the list gives for rxe is KNOWN"
expect_grep "$work/known.txt" 'known rxe behaviour: Linux rxe refuses to invalidate an ordinary MR' \
	"KNOWN carries the entry's known: text"
expect_grep "$work/known.txt" "FAIL  not_listed " "a failure the list does not give is FAIL"
expect_grep "$work/known.txt" "1 failed, 1 failed as known rxe deviations" "the summary counts them apart"
# The real list, as --lint reads it: every scenario a conform: line names
# is one of the suite's.
expect_exit 0 "lint of the list" -- "$rocemu" conform --lint --dir "$scn" --known "$diffs"
expect_grep "$work/out" "25 known deviations" "the list gives the twenty-five rxe deviations (three of the CM, seen on Linux 6.1)"
for s in $(sed -n 's/^- conform: //p' "$diffs"); do
	[ -f "$scn/$s.scn" ] && ok || bad "the list names $s, no such scenario"
done
# A malformed list is refused before any agent is asked, naming file:line.
printf '# t\n\n## RXE-X: a difference\n\n- impl: rxe\n- colour: red\n' >"$work/bad/fields.md"
printf '## RXE-X: a difference\n- impl: rxe\n- conform: rc_send_only\n' >"$work/bad/noknown.md"
printf '## RXE-X: one\n- impl: rxe\n\n## RXE-X: two\n- impl: rxe\n' >"$work/bad/twice.md"
printf '## RXE-X: one\n- impl: rxe\n- replay: request=RC_SEND_ONLY captured=maybe\n' >"$work/bad/replay.md"
{ printf '## RXE-X: one\n- impl: rxe\n- known: '; head -c 3000 /dev/zero | tr '\0' x; echo; } \
	>"$work/bad/long.md"
{ printf '## '; head -c 60 /dev/zero | tr '\0' X; printf ': t\n'; } >"$work/bad/longid.md"
for c in "fields.md:6: unknown field 'colour'" "noknown.md:3: conform: needs a known: line" \
	 "twice.md:4: RXE-X is listed twice (first at line 1)" \
	 "replay.md:3: replay: 'captured=maybe'" "long.md:3: a line longer than 1024 bytes" \
	 "longid.md:1: an ID longer than 47 bytes"; do
	f=${c%%:*}
	expect_exit 2 "a malformed list: $f" -- "$rocemu" conform --agent 127.0.0.1:1 \
		--local 127.0.0.3 --dir "$scn" --known "$work/bad/$f" rc_send_only
	expect_grep "$work/err" "$c" "a malformed list: $f"
done

# ---- an agent that wants a token: conform sends it, from a file or the environment ----
printf 'conform-t0ken\n' >"$work/token"
agent_args=(--token-file "$work/token")
start_agent
expect_exit 0 "conform with --agent-token-file" -- "$rocemu" conform --agent 127.0.0.1:$port \
	--local 127.0.0.3 --agent-token-file "$work/token" --dir "$scn" rc_send_only
expect_grep "$work/out" "PASS  rc_send_only " "the token file's token is taken"
expect_exit 0 "conform with ROCEMU_AGENT_TOKEN" -- env ROCEMU_AGENT_TOKEN=conform-t0ken \
	"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --dir "$scn" rc_send_only
expect_grep "$work/out" "PASS  rc_send_only " "the environment's token is taken"
expect_exit 2 "conform without the token" -- "$rocemu" conform --agent 127.0.0.1:$port \
	--local 127.0.0.3 --dir "$scn" rc_send_only
expect_grep "$work/err" "err EACCES" "without the token: the agent's refusal shown"
expect_exit 2 "conform with a wrong token" -- env ROCEMU_AGENT_TOKEN=conform-t0kem \
	"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --dir "$scn" rc_send_only
expect_grep "$work/err" "err EACCES" "a wrong token: the agent's refusal shown"
if grep -q 'conform-t0ke' "$work/err" "$work/agent.$port.log"; then
	bad "a token shows in a message"; else ok; fi
stop_agent
agent_args=()

# ---- the test-only misbehaviour switch: each break caught by its scenario ----
# NAME:SCENARIO: with ROCEMU_TEST_MISBEHAVE=NAME the scenario fails and the
# report names its rule; uc_send_no_ack (which no break touches: UC has
# no responder answers) still passes after it.
for c in seq_nak_every:psn_ahead_one_nak dup_read_ignored:dup_read_reexecuted \
	 dup_atomic_reexec:dup_atomic_saved_result rnr_timer_zero:rnr_nak_timer \
	 msn_frozen:msn_counts_messages rkey_nak_invalid:rkey_write_bad; do
	name=${c%%:*} s=${c#*:}
	start_agent ROCEMU_TEST_MISBEHAVE=$name
	"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --dir "$scn" \
		"$s" uc_send_no_ack >"$work/mis-$name.txt" 2>&1
	rc=$?
	stop_agent
	[ $rc = 1 ] && ok || bad "$name: conform exit $rc, wanted 1"
	expect_grep "$work/mis-$name.txt" "FAIL  $s " "$name breaks $s"
	expect_grep "$work/mis-$name.txt" "rule: $(sed -n 's/^rule *//p' "$scn/$s.scn")" \
		"$name: the report names $s's rule"
	expect_grep "$work/mis-$name.txt" "PASS  uc_send_no_ack " "$name leaves uc_send_no_ack alone"
	expect_grep "$work/agent.$port.log" "ROCEMU_TEST_MISBEHAVE=$name: this device breaks a rule" \
		"$name: the device says it misbehaves"
done
# An unknown name refuses the device, naming the ones there are.
ROCEMU_TEST_MISBEHAVE=sloppy ROCEMU_ADDR=127.0.0.2 "$agent" -l 127.0.0.1 -p 1 \
	>"$work/unknown.txt" 2>&1 && bad "an unknown misbehaviour: the agent ran" || ok
expect_grep "$work/unknown.txt" "ROCEMU_TEST_MISBEHAVE=sloppy is unknown; it is one of: seq_nak_every" \
	"an unknown misbehaviour is refused"
echo "conform_cli: $pass passed, $fail failed"
[ $fail = 0 ]
