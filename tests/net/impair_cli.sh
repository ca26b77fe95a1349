#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu impair as a user meets it: bad input (a malformed rule, an unknown
# opcode name, a bad rules file, an address in use, missing sides, a
# capture it cannot create) exits 2
# with the reason on stderr; and mode eth, as between two qemu guests: the
# frames of an rxe capture sent as datagrams, one frame each, to side a
# come out of side b unchanged but for what the rules do (every ACK
# dropped, every SEND marked CE), a frame that is not RoCEv2 (ARP)
# untouched. The expected frames are made here from the capture, the CE
# mark and its IPv4 checksum computed by this script (RFC 3168, RFC 1071).
# usage: tests/net/impair_cli.sh BUILD_DIR
set -u
build=${1:?usage: impair_cli.sh BUILD_DIR}
rocemu=$build/bin/rocemu
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/impair_cli
rm -rf "$work" && mkdir -p "$work"
pass=0 fail=0
R=127.0.0.229

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
. "$top/tests/lib/udp_port_free.sh"
udp_4791_free impair_cli "$R"

# refused NAME WANT ARGS...: exit 2, WANT on stderr, stdout empty
refused() {
	local name=$1 want=$2
	shift 2
	timeout 10 "$rocemu" impair "$@" >"$work/$name.out" 2>"$work/$name.err"
	local rc=$?
	if [ $rc = 2 ]; then ok; else bad "$name: exit $rc, wanted 2"; fi
	if grep -qF -- "$want" "$work/$name.err"; then ok; else
		bad "$name: stderr lacks '$want':"
		cat "$work/$name.err"
	fi
	if [ -s "$work/$name.out" ]; then bad "$name: stdout not empty"; else ok; fi
}

ip=(--addr $R --a 127.0.0.1 --b 127.0.0.2)
refused malformed "rule 'drop psn=10-5': psn= wants N or LO-HI" \
	"${ip[@]}" --rule 'drop psn=10-5'
refused opcode "unknown opcode 'RC_SEND_ONCE'" \
	"${ip[@]}" --rule 'dup opcode=RC_SEND_ONCE'
refused action "unknown action 'lose'" "${ip[@]}" --rule 'lose'
printf 'drop count=1\n# a comment\n\ndelay\n' >"$work/rules.txt"
refused file "$work/rules.txt:4: delay wants ms=" \
	"${ip[@]}" --rules "$work/rules.txt"
refused nofile "$work/none.txt: No such file" \
	"${ip[@]}" --rules "$work/none.txt"
refused sides "--a and --b are both needed" --addr $R --a 127.0.0.1
refused versions "must be of one IP version" --addr $R --a ::1 --b 127.0.0.2
refused ethside "--a wants LOCAL,PEER" --eth --a 127.0.0.1:1 --b 1,2
refused unknown "unknown option" "${ip[@]}" --colour
refused capture "cannot create a capture: $work/no-such-dir/in.pcap" \
	"${ip[@]}" --pcap-in "$work/no-such-dir/in.pcap"

# the port in use: a socket holds R:4791 while impair tries it
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 4791))
open(sys.argv[2], "w").close()
time.sleep(20)' $R "$work/held" &
holder=$!
for _ in $(seq 100); do [ -e "$work/held" ] && break; sleep 0.1; done
refused inuse "cannot bind $R UDP port 4791: Address already in use" \
	"${ip[@]}"
kill $holder
wait $holder 2>/dev/null

# mode eth: side a at 127.0.0.1:P, its guest at P+1; side b at P+2, its
# guest at P+3
P=$((20000 + $$ % 20000))
"$rocemu" impair --eth --a 127.0.0.1:$P,127.0.0.1:$((P + 1)) \
	--b 127.0.0.1:$((P + 2)),127.0.0.1:$((P + 3)) \
	--rule 'drop opcode=RC_ACK' --rule 'ecn opcode=RC_SEND_ONLY' \
	--pcap-in "$work/eth.in.pcap" --pcap-out "$work/eth.out.pcap" \
	--json "$work/eth.json" >"$work/eth.rep" 2>"$work/eth.err" &
relay=$!
for _ in $(seq 100); do
	grep -q relaying "$work/eth.err" 2>/dev/null && break
	sleep 0.1
done
python3 - "$top/pcaps/rxe/rc_send_64.pcap" $P "$work/eth.verdict" <<'PY'
import socket, struct, sys, time

path, port, verdict = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, 'rb').read()
little = struct.unpack('<I', data[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d)
e = '<' if little else '>'
frames, at = [], 24
while at + 16 <= len(data):
    caplen = struct.unpack(e + 'I', data[at + 8:at + 12])[0]
    frames.append(data[at + 16:at + 16 + caplen])
    at += 16 + caplen
# an ARP request: not IP, so not RoCEv2, forwarded as it is
arp = bytes.fromhex('ffffffffffff525400123401' '0806' '0001080006040001'
                    '525400123401' '0a000002' '000000000000' '0a000001')
frames.insert(3, arp)

def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

expect = []
for f in frames:
    if f[12:14] != b'\x08\x00':
        expect.append(f)
        continue
    op = f[14 + 20 + 8]
    if op == 0x11:        # RC ACK: dropped
        continue
    if op == 0x04:        # RC SEND Only: ECN 11 in the TOS, new checksum
        h = bytearray(f[14:34])
        h[1] |= 3
        h[10:12] = b'\0\0'
        h[10:12] = struct.pack('!H', csum(bytes(h)))
        f = f[:14] + bytes(h) + f[34:]
    expect.append(f)

a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a.bind(('127.0.0.1', port + 1))
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
b.bind(('127.0.0.1', port + 3))
b.settimeout(5)
for f in frames:
    a.sendto(f, ('127.0.0.1', port))
got = []
try:
    while len(got) < len(expect) + 1:
        d, src = b.recvfrom(65536)
        got.append(d)
        if src != ('127.0.0.1', port + 2):
            got.append(b'from ' + repr(src).encode())
except socket.timeout:
    pass
with open(verdict, 'w') as out:
    if got == expect:
        out.write('same %d\n' % len(got))
    else:
        out.write('differ: got %d frames, expected %d\n' % (len(got), len(expect)))
        for i, (g, x) in enumerate(zip(got, expect)):
            if g != x:
                out.write('first difference at %d\n' % i)
                break
PY
kill -INT $relay
wait $relay
rc=$?
if [ $rc = 0 ]; then ok; else bad "eth: relay exit $rc"; fi
# 8 SENDs and 8 ACKs in the capture, and the ARP frame: 8 ACKs dropped
if [ "$(cat "$work/eth.verdict")" = "same 9" ]; then ok; else
	bad "eth: $(cat "$work/eth.verdict")"
fi
for line in "received ab 17 ba 0" "sent ab 9 ba 0" \
	"not_roce 1 malformed 0 strangers 0 bad_icrc 0 send_errors 0" \
	"action drop 8" "action ecn 8" \
	"rule 1 matched 8 acted 8: drop opcode=RC_ACK" \
	"rule 2 matched 8 acted 8: ecn opcode=RC_SEND_ONLY"; do
	if grep -qxF "$line" "$work/eth.rep"; then ok; else
		bad "eth: report lacks '$line'"
		cat "$work/eth.rep"
	fi
done
if python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
assert d["received"]["ab"] == 17 and d["actions"]["drop"] == 8
assert [r["acted"] for r in d["rules"]] == [8, 8]' "$work/eth.json"; then
	ok; else bad "eth: the JSON report"; fi
# what was sent on: every ICRC still right (the mark needs no fix)
if "$rocemu" dump "$work/eth.out.pcap" | grep -q 'icrc bad'; then
	bad "eth: a bad ICRC in what was sent"
else
	ok
fi
echo "impair_cli: $pass passed, $fail failed"
[ $fail = 0 ]
