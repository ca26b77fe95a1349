#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A simulated device as conform's device under test (docs/simulated-
# device.md): examples/sim_bench.py, the bridge, between rocemu conform
# (agent protocol on TCP, RoCEv2 on UDP 4791 at 127.0.0.245) and a bench on
# a Unix socket. First the bridge alone, with a stand-in bench written from
# the documented record format: a datagram becomes an 'F' record holding
# the Ethernet/IPv4/UDP frame the doc describes, a frame from the bench
# leaves from its UDP source port, agent requests become 'C' records and
# 'A' answers come back, the hello answer gets the GIDs, a line that is not
# printable ASCII is refused by the bridge, the bench hears "bye" when the
# client goes, a malformed frame is dropped and counted. Then
# examples/sim_model.py behind it: real scenarios pass (SEND, WRITE, READ
# over three packets, a PSN ahead, a duplicate, an access NAK, a bad ICRC);
# and the model with one rule broken on purpose (--break nak-once) fails
# the scenario of that rule and only that one.
# usage: tests/cli/sim_bench.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: sim_bench.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$build/sim_bench
rm -rf "$work" && mkdir -p "$work"
rocemu=$build/bin/rocemu
ex=$here/../../examples
scn=$here/../../conformance/scenarios
dev=127.0.0.245 me=127.0.0.246 peer=127.0.0.247

. "$here/../lib/cli_lib.sh"
. "$here/../lib/wait_listen.sh"
py="env -u LD_PRELOAD python3"   # not a function: $! must be python itself

# bridge PORT: the bridge on agent port PORT, its bench socket $work/b.PORT.
bridge() {
	$py "$ex/sim_bench.py" --addr $dev --bench "$work/b.$1" --agent 127.0.0.1:$1 \
		>"$work/bridge.$1.log" 2>&1 &
	bpid=$!
	for _ in $(seq 100); do [ -S "$work/b.$1" ] && break; sleep 0.1; done
}
stop() {
	for p in ${mpid:-} ${bpid:-}; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	mpid= bpid=
}
trap stop EXIT

# ---- the bridge alone, against a stand-in bench ----
bridge 18845
$py - "$work/b.18845" $dev $peer 18845 >"$work/standin.txt" 2>&1 <<'PY'
import socket, struct, sys, threading
path, dev, peer, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
b = socket.socket(socket.AF_UNIX); b.connect(path); bf = b.makefile('rb')
def rec():
    n = struct.unpack('!I', bf.read(4))[0]; d = bf.read(n); return d[:1], d[1:]
def put(kind, body):
    b.sendall(struct.pack('!I', 1 + len(body)) + kind + body)
# a datagram to the device: one F record, the frame as the doc says
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((peer, 0))
data = bytes(range(40)); u.sendto(data, (dev, 4791))
kind, f = rec()
ip, udp = f[14:34], f[34:42]
s = sum(struct.unpack('!10H', ip)); s = (s & 0xffff) + (s >> 16)
print('F record', kind == b'F', 'ethertype', f[12:14].hex(), 'ver/ihl', hex(ip[0]),
      'total', struct.unpack('!H', ip[2:4])[0] == 20 + 8 + 40,
      'id/df', ip[4:8].hex(), 'proto', ip[9], 'csum-ok', s == 0xffff,
      'src', socket.inet_ntoa(ip[12:16]), 'dst', socket.inet_ntoa(ip[16:20]),
      'sport-ok', struct.unpack('!H', udp[:2])[0] == u.getsockname()[1],
      'dport', struct.unpack('!H', udp[2:4])[0],
      'ulen-ok', struct.unpack('!H', udp[4:6])[0] == 48, 'payload-ok', f[42:] == data)
# a frame from the bench: sent from its UDP source port, to 4791 at its dst
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind((peer, 4791))
body = b'frame from the bench'
udp = struct.pack('!HHHH', 49999, 4791, 8 + len(body), 0)
iph = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 28 + len(body), 0, 0x4000, 64, 17, 0,
                  socket.inet_aton(dev), socket.inet_aton(peer))
put(b'F', b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00' + iph + udp + body)
put(b'F', b'\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x86\xdd' + bytes(60))   # not IPv4: dropped
r.settimeout(10); got, src = r.recvfrom(2048)
print('datagram from the bench', got == body, 'from', src[0], src[1])
# the agent protocol: requests to the bench, answers back
c = socket.create_connection(('127.0.0.1', port)); cf = c.makefile('rw')
def ask(line):
    cf.write(line + '\n'); cf.flush()
def bench_answers(answer):
    kind, line = rec(); print('bench got', kind.decode(), line.decode()); put(b'A', answer)
ask('hello proto=1'); bench_answers(b'ok proto=1 device=standin0')
print('client got', cf.readline().strip())
ask('pd\x01'); print('client got', cf.readline().strip())
ask('pd'); bench_answers(b'ok pd=1'); print('client got', cf.readline().strip())
cf.close(); c.close()
bench_answers(b'ok')
PY
echo "stand-in bench: exit $?" >>"$work/standin.txt"
kill $bpid 2>/dev/null; wait $bpid 2>/dev/null; bpid=
cat "$work/standin.txt"
expect_grep "$work/standin.txt" "F record True ethertype 0800 ver/ihl 0x45 total True id/df 00004000 proto 17 csum-ok True src $peer dst $dev sport-ok True dport 4791 ulen-ok True payload-ok True" \
	"a datagram becomes the documented Ethernet/IPv4/UDP frame"
expect_grep "$work/standin.txt" "datagram from the bench True from $dev 49999" \
	"a frame from the bench leaves from the device's address and its UDP source port"
expect_grep "$work/bridge.18845.log" "frame from the bench dropped: not an IPv4 Ethernet II frame" \
	"a frame that is not IPv4 is dropped with the reason"
expect_grep "$work/standin.txt" "bench got C hello proto=1" "a request reaches the bench as a C record"
expect_grep "$work/standin.txt" "client got ok proto=1 device=standin0 gid=::ffff:$dev gid_index=1 gid4=::ffff:$dev gid4_index=1" \
	"the hello answer gets the device's GID"
expect_grep "$work/standin.txt" "client got err EINVAL" "a line with a control byte is refused by the bridge"
if grep -q 'bench got C pd.$' "$work/standin.txt"; then bad "the refused line reached the bench"; else ok; fi
expect_grep "$work/standin.txt" "client got ok pd=1" "the next request goes through"
expect_grep "$work/standin.txt" "bench got C bye" "the bench hears bye when the client goes"
expect_grep "$work/standin.txt" "stand-in bench: exit 0" "the stand-in bench ran to its end"

# ---- the model behind the bridge: real scenarios ----
# model PORT [ARGS]: a bridge on PORT and the model behind it.
model() {
	local port=$1
	shift
	bridge "$port"
	$py "$ex/sim_model.py" --bench "$work/b.$port" "$@" >"$work/model.$port.log" 2>&1 &
	mpid=$!
	wait_listen "$port" || bad "the bridge did not listen on port $port"
}
set -- rc_send_only rc_write_only psn_ahead_one_nak read_multi_packet psn_duplicate_send \
	access_mr_no_remote_write icrc_bad_dropped
model 18846
"$rocemu" conform --agent 127.0.0.1:18846 --local $me --dir "$scn" --junit "$work/good.xml" \
	"$@" >"$work/good.txt" 2>&1
rc=$?
if [ $rc = 0 ]; then ok; else
	bad "conform against the model: exit $rc"
	grep -A 14 '^FAIL' "$work/good.txt" | head -n 60
fi
for s in "$@"; do
	expect_grep "$work/good.txt" "PASS  $s (ipv4)" "$s passes through the bridge"
done
expect_grep "$work/good.txt" "device sim_model0 (sim_model) gid ::ffff:$dev" "conform reached the model"
expect_grep "$work/good.txt" "conform: 7 scenarios on sim_model: 7 passed, 0 failed" "the count"
kill $mpid; wait $mpid 2>/dev/null; mpid=
wait $bpid; bpid=
expect_grep "$work/bridge.18846.log" "0 dropped" "the bridge dropped no frame of the model"
grep 'frames to it' "$work/bridge.18846.log"

# ---- a model that breaks one rule: the scenario of that rule fails ----
model 18847 --break nak-once
"$rocemu" conform --agent 127.0.0.1:18847 --local $me --dir "$scn" \
	psn_ahead_one_nak rc_send_only >"$work/broken.txt" 2>&1
rc=$?
[ $rc = 1 ] && ok || bad "conform against the broken model: exit $rc, wanted 1"
expect_grep "$work/broken.txt" "FAIL  psn_ahead_one_nak (ipv4)" "a second NAK sequence error is caught"
expect_grep "$work/broken.txt" "PASS  rc_send_only (ipv4)" "the rule it keeps still passes"
grep -A 3 '^FAIL' "$work/broken.txt" | head -n 4

echo "sim_bench: $pass passed, $fail failed"
[ $fail = 0 ]
