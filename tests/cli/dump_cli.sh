#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocemu dump as a user meets it: exit codes, messages, reasons, -c, pcapng.
# usage: tests/cli/dump_cli.sh BUILD_DIR
set -u
build=${1:?usage: dump_cli.sh BUILD_DIR}
rocemu=$build/bin/rocemu
mkcap=$build/tests/mkcap
work=$build/dump_cli
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/../lib/cli_lib.sh"

for cap in pcaps/rxe/*.pcap; do
	expect_exit 0 "$cap decodes clean" -- "$rocemu" dump "$cap"
	expect_grep "$work/out" "ICRC bad 0, malformed 0, truncated by snaplen 0" "$cap summary"
done

"$mkcap" --malformed "$work/malformed.pcap" || bad "mkcap --malformed"
expect_exit 1 "malformed capture" -- "$rocemu" dump "$work/malformed.pcap"
for reason in "MALFORMED: opcode undefined by the IBTA" \
	"MALFORMED: BTH TVer is not 0" "MALFORMED: pad count exceeds the payload" \
	"icrc BAD wire" "icrc unchecked (truncated)" \
	"ICRC ok 1, ICRC bad 1, malformed 3, truncated by snaplen 1"; do
	expect_grep "$work/out" "$reason" "malformed capture"
done

"$mkcap" --all "$work/all.pcap" || bad "mkcap --all"
expect_exit 0 "every opcode" -- "$rocemu" dump "$work/all.pcap"
expect_grep "$work/out" "2 other frames skipped" "non-RoCE frames counted"
expect_grep "$work/out" "skipped: not UDP port 4791: 1" "skip reason"

expect_exit 0 "-c 3" -- "$rocemu" dump -c 3 pcaps/rxe/rc_send_64.pcap
lines=$(grep -c ' > ' "$work/out")
[ "$lines" = 3 ] && ok || bad "-c 3 printed $lines packets"

expect_exit 0 "-v" -- "$rocemu" dump -v -c 1 pcaps/rxe/read_bw.pcap
expect_grep "$work/out" "BTH: opcode 0x0c (RC_RDMA_READ_REQUEST)" "-v tree"
expect_grep "$work/out" "len 3000" "-v RETH length"
# one blank line between frames, and one before the summary
for c in 1 2; do
	"$rocemu" dump -v -c $c pcaps/rxe/read_bw.pcap >"$work/out" 2>&1
	awk 'prev == "" && $0 == "" && NR > 1 { n++ } { prev = $0 } END { exit n > 0 }' \
		"$work/out" && ok || bad "-v -c $c: two blank lines in a row"
done

# pcapng gives the same JSON as pcap.
if command -v editcap >/dev/null; then
	editcap -F pcapng pcaps/rxe/write_bw.pcap "$work/w.pcapng"
	"$rocemu" dump --json pcaps/rxe/write_bw.pcap >"$work/a.json"
	"$rocemu" dump --json "$work/w.pcapng" >"$work/b.json"
	cmp -s "$work/a.json" "$work/b.json" && ok || bad "pcapng decodes differently"
else
	bad "editcap missing (Debian package wireshark-common)"
fi

# Usage and file errors: exit 2 and a message naming the problem.
expect_exit 2 "no argument" -- "$rocemu" dump
expect_grep "$work/err" "no capture file given" "no argument"
expect_exit 2 "missing file" -- "$rocemu" dump "$work/nope.pcap"
expect_grep "$work/err" "nope.pcap" "missing file named"
expect_exit 2 "bad -c" -- "$rocemu" dump -c x pcaps/rxe/rc_send_64.pcap
expect_grep "$work/err" "-c wants a count" "bad -c"
expect_exit 2 "unknown option" -- "$rocemu" dump --bogus pcaps/rxe/rc_send_64.pcap
expect_exit 2 "not a capture" -- "$rocemu" dump README.md
expect_exit 2 "two files" -- "$rocemu" dump pcaps/rxe/rc_send_64.pcap pcaps/rxe/ud_send.pcap
expect_exit 2 "unknown command" -- "$rocemu" frobnicate
expect_exit 0 "--help" -- "$rocemu" dump --help
expect_grep "$work/out" "usage: rocemu dump" "--help text"
# A pcap whose link type is BSD loopback (0): refused by name.
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00' >"$work/null.pcap"
expect_exit 2 "unsupported link type" -- "$rocemu" dump "$work/null.pcap"
expect_grep "$work/err" "is not Ethernet, Linux cooked or raw IP" "link type message"

# Captures built here from the frames of a bundled one: pcapgen.py KIND OUT
# writes one, then prints the offsets and lengths its errors will name.
cat >"$work/pcapgen.py" <<'EOF'
import struct, sys

def frames(path):
    raw = open(path, 'rb').read()
    assert struct.unpack('<I', raw[:4])[0] == 0xa1b2c3d4
    out, off = [], 24
    while off < len(raw):
        incl = struct.unpack('<I', raw[off + 8:off + 12])[0]
        out.append(raw[off + 16:off + 16 + incl])
        off += 16 + incl
    return out

def header(snaplen=262144, minor=4, linktype=1):
    return struct.pack('<IHHiIII', 0xa1b2c3d4, 2, minor, 0, 0, snaplen,
                       linktype)

def record(sec, usec, data, orig=None):
    orig = len(data) if orig is None else orig
    return struct.pack('<IIII', sec, usec, len(data), orig) + data

kind, out = sys.argv[1], sys.argv[2]
info = ''
rc = frames('pcaps/rxe/rc_send_64.pcap')
ipv4_not_udp = b'\x02' * 6 + b'\x04' * 6 + b'\x08\x00' + b'\x45'
big = 262144  # libpcap's largest snapshot length
cap = header()
if kind == 'big':
    # 31 frames of 256 KiB and one of 100000 bytes leave the next 256 KiB
    # frame no room in an 8 MiB batch; that last frame is RoCE, padded.
    for i in range(31):
        cap += record(1, i, ipv4_not_udp.ljust(big, b'\0'))
    cap += record(1, 31, ipv4_not_udp.ljust(100000, b'\0'))
    cap += record(1, 32, rc[0].ljust(big, b'\0'))
elif kind == 'big_malformed':
    # RoCE whose IPv4 total length claims 65535 bytes, in 256 KiB
    ip = bytearray(rc[0][14:].ljust(65535, b'\0'))
    ip[2:4] = struct.pack('>H', 65535)
    cap += record(1, 0, (rc[0][:14] + bytes(ip)).ljust(big, b'\0'))
elif kind == 'backwards':
    # 100.5 s, then 100.4, 99.0 and 101.0
    for (sec, usec), f in zip([(100, 500000), (100, 400000), (99, 0),
                               (101, 0)], rc):
        cap += record(sec, usec, f)
elif kind == 'orig_below_incl':
    cap += record(1, 0, rc[0]) + record(1, 1, rc[1], len(rc[1]) - 1)
    info = f'{24 + 16 + len(rc[0])} {len(rc[1]) - 1} {len(rc[1])}'
elif kind == 'truncated':
    cap = (cap + record(1, 0, rc[0]) + record(1, 1, rc[1]))[:-10]
    info = f'{24 + 16 + len(rc[0])} {len(rc[1])} {len(rc[1]) - 10}'
elif kind == 'over_snaplen':
    cap = header(snaplen=100) + record(1, 0, rc[0])
    info = f'{len(rc[0])}'
elif kind == 'version_2_3':
    cap = header(minor=3) + record(1, 0, rc[0])
with open(out, 'wb') as f:
    f.write(cap)
# the file is complete before the shell reads this line and runs on it
if info:
    print(info)
EOF
gen() { python3 "$work/pcapgen.py" "$@" || bad "pcapgen $*"; }

# The UDP source ports of rc_send_64's first two frames (client, server):
# make rxe-check takes that capture again, and rxe picks the ports per QP.
read -r sp_c sp_s < <(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
o, ports = 24, []
while o < len(d) and len(ports) < 2:
    n = struct.unpack("<I", d[o + 8:o + 12])[0]
    ports.append(struct.unpack(">H", d[o + 16 + 34:o + 16 + 36])[0])
    o += 16 + n
print(*ports)' pcaps/rxe/rc_send_64.pcap)

# Frames up to libpcap's largest snapshot length (256 KiB) decode: the
# other frames are counted as such, a huge RoCE frame is decoded.
gen big "$work/big.pcap"
expect_exit 0 "256 KiB frames" -- "$rocemu" dump "$work/big.pcap"
expect_grep "$work/out" "summary: 33 frames, 1 RoCEv2 packets, 32 other frames skipped" "256 KiB frames counted"
expect_grep "$work/out" "ICRC ok 1, ICRC bad 0" "256 KiB RoCE frame decoded"
expect_grep "$work/out" "33 0.000032 10.0.0.2:$sp_c > 10.0.0.1:4791 RC_SEND_ONLY" "256 KiB RoCE frame shown"
expect_exit 0 "256 KiB frames, -c 1" -- "$rocemu" dump -c 1 "$work/big.pcap"
expect_grep "$work/out" "33 0.000032 10.0.0.2:$sp_c" "256 KiB RoCE frame shown with -c"
gen big_malformed "$work/big_malformed.pcap"
expect_exit 1 "256 KiB malformed RoCE frame" -- "$rocemu" dump "$work/big_malformed.pcap"
expect_grep "$work/out" "1 0.000000 10.0.0.2:$sp_c > 10.0.0.1:4791 MALFORMED: " "huge frame's reason shown"
expect_grep "$work/out" "malformed 1" "huge frame counted malformed"

# A clock that steps back: negative times since the first frame, as
# tshark's relative time and tcpdump -ttttt give them.
gen backwards "$work/backwards.pcap"
expect_exit 0 "time going backwards" -- "$rocemu" dump "$work/backwards.pcap"
expect_grep "$work/out" "2 -0.100000 10.0.0.1:$sp_s > 10.0.0.2" "0.1 s back"
expect_grep "$work/out" "3 -1.500000 10.0.0.1:$sp_s > 10.0.0.2" "1.5 s back"
expect_grep "$work/out" "4 0.500000 10.0.0.2:$sp_c > 10.0.0.1" "0.5 s on"
expect_exit 0 "time going backwards, -c" -- "$rocemu" dump -c 3 "$work/backwards.pcap"
expect_grep "$work/out" "3 -1.500000 10.0.0.1:$sp_s > 10.0.0.2" "1.5 s back with -c"
expect_exit 0 "time going backwards, JSON" -- "$rocemu" dump --json "$work/backwards.pcap"
expect_grep "$work/out" '{"frame":2,"time":-0.100000,' "0.1 s back in JSON"
python3 -c 'import json, sys
[json.loads(l) for l in open(sys.argv[1])]' "$work/out" && ok || bad "negative times are not JSON"
expect_exit 0 "time going backwards, -v" -- "$rocemu" dump -v "$work/backwards.pcap"
expect_grep "$work/out" "captured, time -1.500000" "1.5 s back in the tree"

# Malformed records: exit 2, the file, the record and its offset named;
# what came before is still shown and counted.
read -r at orig incl < <(gen orig_below_incl "$work/orig.pcap")
expect_exit 2 "orig_len below incl_len" -- "$rocemu" dump "$work/orig.pcap"
expect_grep "$work/err" "rocemu dump: $work/orig.pcap: record 2 at byte $at: orig_len $orig is below incl_len $incl" "orig_len below incl_len"
expect_grep "$work/out" "summary: 1 frames, 1 RoCEv2 packets" "record before the bad one counted"
expect_exit 2 "orig_len below incl_len, -c" -- "$rocemu" dump -c 5 "$work/orig.pcap"
expect_grep "$work/err" "$work/orig.pcap: record 2 at byte $at: orig_len" "orig_len below incl_len with -c"
read -r at incl got < <(gen truncated "$work/trunc.pcap")
expect_exit 2 "truncated record" -- "$rocemu" dump "$work/trunc.pcap"
expect_grep "$work/err" "rocemu dump: $work/trunc.pcap: record 2 at byte $at: truncated record: incl_len $incl, but the file ends $got bytes into its data" "truncated record"
read -r incl < <(gen over_snaplen "$work/snap.pcap")
expect_exit 2 "record over the snaplen" -- "$rocemu" dump "$work/snap.pcap"
expect_grep "$work/err" "rocemu dump: $work/snap.pcap: record 1 at byte 24: incl_len $incl exceeds the snapshot length 100" "record over the snaplen"

# Every file error names the file.
gen version_2_3 "$work/v23.pcap"
expect_exit 2 "pcap 2.3" -- "$rocemu" dump "$work/v23.pcap"
expect_grep "$work/err" "rocemu dump: $work/v23.pcap: pcap version 2.3 is not supported" "pcap 2.3"
: >"$work/empty.pcap"
expect_exit 2 "empty file" -- "$rocemu" dump "$work/empty.pcap"
expect_grep "$work/err" "rocemu dump: $work/empty.pcap: not a pcap or pcapng capture" "empty file"
expect_exit 2 "not a capture, named" -- "$rocemu" dump README.md
expect_grep "$work/err" "rocemu dump: README.md: not a pcap or pcapng capture" "not a capture named"
expect_exit 2 "a directory" -- "$rocemu" dump "$work"
expect_grep "$work/err" "rocemu dump: $work: Is a directory" "directory named"
expect_exit 2 "unsupported link type, named" -- "$rocemu" dump "$work/null.pcap"
expect_grep "$work/err" "rocemu dump: $work/null.pcap: link type 0 (NULL)" "link type names the file"
expect_exit 2 "missing file, named" -- "$rocemu" dump "$work/nope.pcap"
expect_grep "$work/err" "rocemu dump: $work/nope.pcap: No such file or directory" "missing file message"

# "-" reads standard input, pcap or pcapng, from a pipe too.
"$rocemu" dump pcaps/rxe/write_bw.pcap >"$work/file.txt"
"$rocemu" dump - <pcaps/rxe/write_bw.pcap >"$work/stdin.txt" && ok || bad "pcap on stdin"
cmp -s "$work/file.txt" "$work/stdin.txt" && ok || bad "pcap on stdin decodes differently"
if [ -e "$work/w.pcapng" ]; then
	cat "$work/w.pcapng" | "$rocemu" dump - >"$work/pipe.txt" && ok || bad "pcapng from a pipe"
	cmp -s "$work/file.txt" "$work/pipe.txt" && ok || bad "pcapng from a pipe decodes differently"
fi

# CM MADs on QP1 are decoded: the one-line summary, the tree's headers,
# the JSON objects; a MAD that does not decode says why, one of another
# class shows its header; each still counts as a RoCEv2 packet.
# expect_re FILE REGEX DESCRIPTION: a line of FILE matches REGEX (grep).
expect_re() {
	if grep -q -- "$2" "$1"; then ok; else bad "$3: no /$2/ in $1"; fi
}
mkcap=$build/tests/mkcap
edit=$build/tests/pcap_edit
"$mkcap" --cm "$work/cm.pcap" connect || bad "mkcap --cm connect"
"$mkcap" --cm "$work/rej.pcap" reject || bad "mkcap --cm reject"
"$mkcap" --cm "$work/sidr.pcap" sidr || bad "mkcap --cm sidr"
"$rocemu" dump "$work/cm.pcap" >"$work/out" 2>"$work/err" && ok || bad "dump of a CM connection"
expect_re "$work/out" "^1 .* UD_SEND_ONLY dqpn 0x000001 .* CM REQ comm 0x1000a001 sid 0x0000000001061c06 qpn 0x000011 psn 0x0a0a00 tid 0x0000000a1000a001 icrc ok" "CM REQ line"
expect_re "$work/out" "^2 .* CM REP comm 0x2000b002 remote 0x1000a001 qpn 0x000012 psn 0x0b0b00 tid 0x0000000a1000a001 icrc ok" "CM REP line"
expect_re "$work/out" "^3 .* CM RTU comm 0x1000a001 remote 0x2000b002 " "CM RTU line"
expect_re "$work/out" "^10 .* CM DREQ comm 0x1000a001 remote 0x2000b002 qpn 0x000012 " "CM DREQ line"
expect_re "$work/out" "^11 .* CM DREP comm 0x2000b002 remote 0x1000a001 " "CM DREP line"
"$rocemu" dump "$work/rej.pcap" >"$work/out" 2>"$work/err"
expect_re "$work/out" "^2 .* CM REJ reason 8 (INVALID_SERVICE_ID) comm 0x00000000 remote 0x1000c001 " "CM REJ line"
"$rocemu" dump "$work/sidr.pcap" >"$work/out" 2>"$work/err"
expect_re "$work/out" "^2 .* CM SIDR_REP req 0x0000d001 status 0 (SUCCESS) qpn 0x000041 qkey 0x01234567 " "CM SIDR_REP line"
"$rocemu" dump -v -c 1 "$work/cm.pcap" >"$work/out" 2>"$work/err"
expect_re "$work/out" "^  MAD: CM REQ$" "MAD header in the tree"
expect_re "$work/out" "^     tid 0x0000000a1000a001  attr_id 0x0010  " "MAD TID in the tree"
expect_re "$work/out" "^     starting_psn 0x0a0a00 " "REQ starting PSN in the tree"
expect_re "$work/out" "^  CM_PATH: local 10.0.0.1 remote 10.0.0.2$" "REQ path GIDs in the tree"
expect_re "$work/out" "^  IP_CM: 10.0.0.1 > 10.0.0.2$" "Annex A11 header in the tree"
"$rocemu" dump --json "$work/rej.pcap" >"$work/out" 2>"$work/err"
python3 - "$work/out" <<'PY' && ok || bad "CM JSON"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
req, rej = objs[0], objs[1]
assert req["mad"]["attr_name"] == "REQ" and req["mad"]["tid"] == "0x0000000a1000c001"
assert req["cm"]["service_id"] == "0x0000000001061c07" and req["cm"]["local_qpn"] == 0x31
assert req["ip_cm"] == {"version": 0, "ip_version": 4, "src_port": 0x9000,
                        "src": "10.0.0.1", "dst": "10.0.0.2"}, req["ip_cm"]
assert rej["cm"]["reason"] == 8 and rej["cm"]["reason_name"] == "INVALID_SERVICE_ID"
assert rej["cm"]["remote_comm_id"] == 0x1000c001
assert objs[2]["summary"]["roce"] == 2
PY
# class version 1, another class, a REJ whose ARI length (127) lies
"$edit" "$work/cm.pcap" "$work/v1.pcap" 1 payload2 1 || bad "pcap_edit class version"
"$edit" "$work/cm.pcap" "$work/c1.pcap" 1 payload1 1 || bad "pcap_edit class"
"$edit" "$work/rej.pcap" "$work/ari.pcap" 2 payload33 0xfe || bad "pcap_edit ARI length"
expect_exit 0 "undecodable CM MAD" -- "$rocemu" dump -c 1 "$work/v1.pcap"
expect_re "$work/out" " CM REQ undecodable: class version not 2 icrc ok" "undecodable CM MAD says why"
expect_exit 0 "MAD of another class" -- "$rocemu" dump -c 1 "$work/c1.pcap"
expect_re "$work/out" " MAD class 0x01 method 0x03 attr 0x0010 tid 0x0000000a1000a001 icrc ok" "other MAD class: header only"
expect_exit 0 "REJ with a lying ARI length" -- "$rocemu" dump "$work/ari.pcap"
expect_re "$work/out" "^2 .* CM REJ undecodable: an information length above 72 icrc ok" "lying ARI length"
expect_re "$work/out" "^summary: 2 frames, 2 RoCEv2 packets" "undecodable MADs still count as RoCEv2"
"$rocemu" dump --json -c 1 "$work/v1.pcap" >"$work/out"
expect_re "$work/out" '"mad":{"base_version":1,"mgmt_class":7,"class_version":1,.*"attr_name":"REQ","error":"class version not 2"}' "undecodable CM MAD in JSON"

echo "dump_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
