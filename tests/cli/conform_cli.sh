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
# with the arguments in agent_args.
agent_args=()
start_agent() {
	port=$((port + 1))
	env "$@" ROCEMU_ADDR=127.0.0.2 "$agent" -l 127.0.0.1 -p $port \
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
for c in "kw.scn:4: unknown keyword 'frobnicate'" "norule.scn:0: a scenario needs a title and a rule" \
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
# ---- verdicts beside PASS: not applicable, and no agent ----
# A path MTU above the port's active MTU (rocemu's is 1024) cannot be set
# up: N/A, which does not fail the run, and a skipped JUnit case.
printf 'title t\nrule r\nqp mtu=4096\nsend RC_SEND_ONLY\n' >"$work/bad/big_mtu.scn"
start_agent
"$rocemu" conform --agent 127.0.0.1:$port --local 127.0.0.3 --junit "$work/na.xml" \
	"$work/bad/big_mtu.scn" >"$work/na.txt" 2>&1
rc=$?
stop_agent
[ $rc = 0 ] && ok || bad "a not applicable scenario: exit $rc, wanted 0"
expect_grep "$work/na.txt" "N/A   big_mtu " "big_mtu is not applicable"
expect_grep "$work/na.txt" "path MTU 4096 is above the port's active MTU 1024" "the N/A's reason"
expect_grep "$work/na.xml" '<skipped message=' "JUnit: skipped"
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
expect_grep "$work/out" "15 known deviations" "the list gives the fifteen rxe deviations (three of the CM, seen on Linux 6.1)"
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
