#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu conform over IPv6, against rocemu itself: rocemu-agent on the
# drop-in at fd00:31::1, conform at fd00:31::2 (addresses this test puts on
# the loopback of its own network namespace). Every scenario of
# conformance/scenarios/ must pass over IPv6 as over IPv4: the report, the
# JUnit cases (NAME (ipv6)) and the capture (IPv6 only, each ICRC right but
# the ones spoiled on purpose) say so. Then both IP versions in one run: a
# stand-in agent (below) joins a device at 127.0.0.240 and one at
# fd00:31::1 behind one control port, as one device with a GID of each
# version is (rxe with an IPv4 and a global IPv6 address): every scenario
# runs over each version, to that version's GID, and passes. And the
# options: --ipv4/--ipv6 pick one, a device without a GID of a version
# asked for is refused with the reason, the agent's sgid_index= and its
# hello's gid4=/gid6=.
# Skipped, with the reason, outside a network namespace of its own
# (tests/lib/isolated.sh makes one as root): it adds addresses.
# usage: tests/cli/conform_v6.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: conform_v6.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$build/conform_v6
rm -rf "$work" && mkdir -p "$work"
rocemu=$build/bin/rocemu
agent=$build/bin/rocemu-agent
scn=$here/../../conformance/scenarios
dev6=fd00:31::1 me6=fd00:31::2 dev4=127.0.0.240 me4=127.0.0.241

skip() {
	echo "conform_v6: skipped: $*"
	echo "conform_v6: 0 passed, 0 failed, 1 skipped"
	exit 0
}
[ "$(readlink /proc/self/ns/net)" != "$(readlink /proc/1/ns/net 2>/dev/null)" ] ||
	skip "not in a network namespace of its own (tests/lib/isolated.sh makes one as root)"
command -v ip >/dev/null || skip "no 'ip' command (Debian package iproute2)"
ip -6 addr add $dev6/128 dev lo nodad 2>"$work/err" ||
	skip "cannot add an IPv6 address: $(cat "$work/err")"
ip -6 addr add $me6/128 dev lo nodad

. "$here/../lib/cli_lib.sh"
. "$here/../lib/verbs_env.sh"
. "$here/../lib/wait_listen.sh"
n=$(ls "$scn"/*.scn | wc -l)

# start_agent NAME ADDR PORT: rocemu-agent on a drop-in device at ADDR,
# its port's active MTU 4096 (the large-message scenarios need it).
start_agent() {
	ROCEMU_MTU=4096 ROCEMU_ADDR=$2 "$agent" -l 127.0.0.1 -p "$3" >"$work/agent.$1.log" 2>&1 &
	eval "pid_$1=$!"
	wait_listen "$3" || bad "rocemu-agent ($1) did not listen on port $3"
}
stop_agents() {
	for p in ${pid_a6:-} ${pid_a4:-} ${pid_join:-}; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}
trap stop_agents EXIT

# junit FILE CASES FAMILIES: the JUnit report has CASES cases, none failed,
# each named "SCENARIO (FAMILY)" and each scenario once per family.
junit() {
	env -u LD_PRELOAD python3 - "$@" "$scn" <<'PY'
import os, sys, xml.etree.ElementTree as ET
path, cases, fams, scn = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(','), sys.argv[4]
s = ET.parse(path).getroot()
got = sorted(c.get('name') for c in s.findall('testcase'))
assert int(s.get('tests')) == len(got) == cases, ('count', len(got))
assert s.get('failures') == '0' and not s.findall('.//failure'), 'failures'
names = sorted(f[:-4] for f in os.listdir(scn) if f.endswith('.scn'))
assert got == sorted(f'{n} ({f})' for n in names for f in fams), 'names'
PY
}

# ---- the agent: the GID of each IP version, and which one a QP uses ----
start_agent a6 $dev6 18801
env -u LD_PRELOAD python3 - 18801 >"$work/proto.txt" 2>&1 <<'PY'
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
f = s.makefile('rw')
for req in ['hello proto=1', 'pd', 'cq', 'qp pd=1 type=rc scq=1 rcq=1',
            'qp pd=1 type=ud scq=1 rcq=1', 'modify qp=1 state=init access=rw',
            'modify qp=1 state=rtr dgid=fd00:31::2 dqpn=5 rq_psn=0 sgid_index=1',
            'modify qp=2 state=init qkey=1', 'ah pd=1 dgid=fd00:31::2 sgid_index=1',
            'ah pd=1 dgid=fd00:31::2 sgid_index=300', 'bye']:
    f.write(req + '\n'); f.flush()
    print(req, '->', f.readline().strip())
PY
expect_grep "$work/proto.txt" "gid6=$dev6 gid6_index=1" "hello names the device's IPv6 GID and its index"
if grep -q 'gid4=' "$work/proto.txt"; then bad "hello names an IPv4 GID the device has not"; else ok; fi
expect_grep "$work/proto.txt" "sgid_index=1 -> ok qp=1 state=rtr" "modify to RTR takes sgid_index="
expect_grep "$work/proto.txt" "sgid_index=1 -> ok ah=" "ah takes sgid_index="
expect_grep "$work/proto.txt" "sgid_index=300 -> err EINVAL" "an sgid_index past the table is refused"

# ---- the whole suite over IPv6 ----
"$rocemu" conform --agent 127.0.0.1:18801 --local $me6 --dir "$scn" \
	--junit "$work/v6.xml" --pcap "$work/v6.pcap" >"$work/v6.txt" 2>&1
rc=$?
tail -n 1 "$work/v6.txt"
if [ $rc = 0 ]; then ok; else
	bad "conform over IPv6: exit $rc"
	grep -A 14 '^FAIL\|^KNOWN' "$work/v6.txt" | head -n 80
fi
expect_grep "$work/v6.txt" "conform at $me6" "conform's socket is the IPv6 one"
expect_grep "$work/v6.txt" "conform: $n scenarios on rocemu: $n passed, 0 failed, 0 failed as known rocemu deviations, 0 not applicable (ipv6)" \
	"every scenario passes over IPv6, none not applicable"
[ "$(grep -c '^PASS  .* (ipv6) (' "$work/v6.txt")" = "$n" ] && ok || bad "each result line says ipv6"
junit "$work/v6.xml" "$n" ipv6 && ok || bad "JUnit report over IPv6"
# Every packet of the capture is IPv6, between the two addresses; only the
# ones sent spoiled on purpose (icrc=bad) fail their ICRC.
"$rocemu" dump "$work/v6.pcap" >"$work/dump6.txt" 2>&1
total=$(grep -c ' > ' "$work/dump6.txt")
v6=$(grep -cE "^[0-9]+ [0-9.]+ \[($dev6|$me6)\]:[0-9]+ > \[($dev6|$me6)\]:4791 " "$work/dump6.txt")
[ "$total" -gt 0 ] && [ "$v6" = "$total" ] && ok || bad "capture: $v6 of $total packets IPv6 between the two"
spoiled=$(grep -l 'icrc=bad' "$scn"/*.scn | xargs cat | grep -c '^send .*icrc=bad')
sent_bad=$(grep -c ' icrc BAD ' "$work/dump6.txt")
[ "$sent_bad" = "$spoiled" ] && ok || bad "capture: $sent_bad packets with a bad ICRC, $spoiled sent so"

# ---- picking a version, and a version the device has no GID of ----
expect_exit 2 "--ipv6 without an IPv6 --local" -- "$rocemu" conform --agent 127.0.0.1:18801 \
	--local $me4 --ipv6 rc_send_only
expect_grep "$work/err" "--ipv6 needs an IPv6 --local address" "--ipv6 alone: the reason"
expect_exit 2 "two IPv6 --local" -- "$rocemu" conform --agent 127.0.0.1:18801 \
	--local $me6 --local ::1 rc_send_only
expect_grep "$work/err" "an IPv6 address is given already" "two of a version: the reason"
expect_exit 2 "both versions to a device with IPv6 only" -- "$rocemu" conform \
	--agent 127.0.0.1:18801 --local $me4 --local $me6 --dir "$scn" rc_send_only
expect_grep "$work/err" "the device has no RoCEv2 IPv4 GID" "no IPv4 GID: the reason, not a skip"
expect_exit 0 "--ipv6 of both addresses" -- "$rocemu" conform --agent 127.0.0.1:18801 \
	--local $me4 --local $me6 --ipv6 --dir "$scn" rc_send_only
expect_grep "$work/out" "PASS  rc_send_only (ipv6) (" "--ipv6: the IPv6 run"
expect_grep "$work/out" "conform: 1 scenarios on rocemu: 1 passed, 0 failed, 0 failed as known rocemu deviations, 0 not applicable (ipv6)" \
	"--ipv6: one run, over IPv6"

# A scenario that holds over IPv4 only (needs ipv4) is not applicable
# over IPv6, with the reason: not skipped silently, not failed.
mkdir -p "$work/scn"
{ grep -v '^needs' "$scn/rc_send_only.scn"; echo 'needs ipv4'; } >"$work/scn/only_v4.scn"
expect_exit 0 "a scenario for IPv4 only, over IPv6" -- "$rocemu" conform \
	--agent 127.0.0.1:18801 --local $me6 --junit "$work/na.xml" "$work/scn/only_v4.scn"
expect_grep "$work/out" "N/A   only_v4 (ipv6) (" "needs ipv4: not applicable over IPv6"
expect_grep "$work/out" "not applicable: $work/scn/only_v4.scn:0: it holds over IPv4 only (needs ipv4), this run is over IPv6" \
	"needs ipv4: the reason"
expect_grep "$work/na.xml" '<skipped message="it holds over IPv4 only' "needs ipv4: a skipped JUnit case with the reason"

# ---- both versions in one run ----
# The stand-in: control connections to one port, each passed to the
# device of the version conform is running (conform runs every scenario
# over IPv4, then over IPv6, each on a connection of its own: the first
# 1 + N go to the IPv4 device); hello answers name both devices' GIDs.
start_agent a4 $dev4 18802
env -u LD_PRELOAD python3 - 18803 18802 18801 $((n + 1)) >"$work/join.log" 2>&1 <<'PY' &
import re, socket, sys, threading
port, a4, a6, first = (int(x) for x in sys.argv[1:])
def hello(p):
    s = socket.create_connection(('127.0.0.1', p)); f = s.makefile('rw')
    f.write('hello proto=1\nbye\n'); f.flush(); return f.readline()
extra = ' '.join(re.findall(r'gid[46]=\S+ gid[46]_index=\d+', hello(a4) + hello(a6)))
def serve(c, p):
    up = socket.create_connection(('127.0.0.1', p)); uf = up.makefile('rw'); cf = c.makefile('rw')
    for line in cf:
        uf.write(line); uf.flush(); ans = uf.readline()
        if line.startswith('hello'):
            ans = re.sub(r' gid[46]=\S+ gid[46]_index=\d+', '', ans.rstrip('\n')) + ' ' + extra + '\n'
        cf.write(ans); cf.flush()
        if not ans or line.startswith('bye'):
            break
    c.close(); up.close()
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(('127.0.0.1', port)); ls.listen(4); k = 0
while True:
    c, _ = ls.accept(); k += 1
    threading.Thread(target=serve, args=(c, a4 if k <= first else a6)).start()
PY
pid_join=$!
wait_listen 18803 || bad "the stand-in agent did not listen"
"$rocemu" conform --agent 127.0.0.1:18803 --local $me4 --local $me6 --dir "$scn" \
	--junit "$work/both.xml" >"$work/both.txt" 2>&1
rc=$?
tail -n 3 "$work/both.txt"
if [ $rc = 0 ]; then ok; else
	bad "conform over both versions: exit $rc"
	grep -A 14 '^FAIL\|^KNOWN' "$work/both.txt" | head -n 80
fi
expect_grep "$work/both.txt" "gid ::ffff:$dev4 and $dev6," "both GIDs named"
expect_grep "$work/both.txt" "conform at $me4 and $me6" "both sockets named"
for f in ipv4 ipv6; do
	expect_grep "$work/both.txt" "conform: $f: $n scenarios on rocemu: $n passed, 0 failed," \
		"the $f count"
done
expect_grep "$work/both.txt" "conform: $((2 * n)) scenarios on rocemu: $((2 * n)) passed, 0 failed, 0 failed as known rocemu deviations, 0 not applicable (ipv4 and ipv6)" \
	"the total counts each scenario once per version"
junit "$work/both.xml" $((2 * n)) ipv4,ipv6 && ok || bad "JUnit report over both versions"

echo "conform_v6: $pass passed, $fail failed"
[ $fail = 0 ]
