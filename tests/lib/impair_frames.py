#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The RoCEv2 frames of a capture, one line each, for rocemu impair's tests.

usage: tests/lib/impair_frames.py ROCEMU CAPTURE
Prints per frame: TIME SRC DST OPCODE PSN ICRC TOS DQPN AETH, where TIME is
the capture's own stamp in seconds (pcap, nanoseconds: what rocemu writes),
ICRC is ok or bad, AETH the AETH's syndrome in decimal (- without one), and
the fields are those `rocemu dump --json` decodes.
"""
import json
import struct
import subprocess
import sys


def stamps(path):
    """The records' times, read from the pcap itself."""
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack('<I', data[:4])[0]
    if magic not in (0xa1b23c4d, 0xa1b2c3d4):
        sys.exit('%s: not a little-endian pcap' % path)
    scale = 1e-9 if magic == 0xa1b23c4d else 1e-6
    out, at = [], 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack('<IIII', data[at:at + 16])
        out.append(sec + frac * scale)
        at += 16 + caplen
    return out


def main():
    rocemu, path = sys.argv[1], sys.argv[2]
    times = stamps(path)
    p = subprocess.run([rocemu, 'dump', '--json', path], capture_output=True,
                       text=True)
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    for row in rows:
        if 'frame' not in row or 'opcode_name' not in row:
            continue
        aeth = row.get('aeth')
        print('%.6f %s %s %s %d %s %d %d %s' % (
            times[row['frame'] - 1], row['src'], row['dst'],
            row['opcode_name'], row['psn'],
            'ok' if row.get('icrc_ok') else 'bad', row['tos'], row['dqpn'],
            aeth['syndrome'] if aeth else '-'))


main()
