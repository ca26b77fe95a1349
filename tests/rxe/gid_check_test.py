#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of gid_check.py, the judge of the rxe lab's part gid: a run as
rxe and rocemu made it in the lab passes (its differences listed); each
edit of a capture, a GRH or the differences list that departs from what
the AHs asked and no listed difference allows makes it fail, saying what
it compared.
usage: gid_check_test.py WORK_DIR   (make check runs it)
"""
import ipaddress
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DIFFS = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'conformance',
                     'differences.md')
RXE_MAC, ROCEMU_MAC = '52:54:00:12:34:0a', '02:28:00:00:00:02'
RXE_LL, ROCEMU_LL = 'fe80::5054:ff:fe12:340a', 'fe80::28:ff:fe00:2'


def frame(src_mac, src, dst, tclass, flow, sport, hop=64):
    """An Ethernet frame with an IPv6 UD SEND (opcode 0x64) of 64 bytes."""
    mac = bytes.fromhex(src_mac.replace(':', ''))
    bth = bytes([0x64, 0, 0xff, 0xff, 0, 0, 0, 2, 0, 0, 0, 0])
    udp_body = bth + bytes(8) + bytes(64) + bytes(4)
    udp = struct.pack('>HHHH', sport, 4791, 8 + len(udp_body), 0) + udp_body
    ip6 = struct.pack('>IHBB', 6 << 28 | tclass << 20 | flow, len(udp), 17,
                      hop) + ipaddress.IPv6Address(src).packed + \
        ipaddress.IPv6Address(dst).packed
    return bytes(6) + mac + b'\x86\xdd' + ip6 + udp


def pcap(frames):
    out = struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    for f in frames:
        out += struct.pack('<IIII', 0, 0, len(f), len(f)) + f
    return out


# The run ud_grh rocemu->rxe as the lab sees it: rxe's packets flow label 0
# (FLOW-LABEL-RXE), rocemu's its AH's 0x6789a from its QP's own port, every
# traffic class the AH's.
GOOD = {
    'meta': 'gid 0\nside server rocemu %s 0xb8 0x6789a 42\n'
            'side client rxe %s 0x68 0x12345 17\n' % (ROCEMU_MAC, RXE_MAC),
    'frames': [(RXE_MAC, RXE_LL, ROCEMU_LL, 0x68, 0, 49441),
               (ROCEMU_MAC, ROCEMU_LL, RXE_LL, 0xb8, 0x6789a, 57236)],
    'server': 'RECV wc=success grh=1 ip=6 tclass=0x68 flow=0x00000 hop=64 '
              'sgid=%s dgid=%s len=104 data=ok\n'
              'SENT gid=%s->%s tclass=0xb8 flow=0x6789a hop=64 wc=success\n'
              % (RXE_LL, ROCEMU_LL, ROCEMU_LL, RXE_LL),
    'client': 'SENT gid=%s->%s tclass=0x68 flow=0x12345 hop=64 wc=success\n'
              'RECV wc=success grh=1 ip=6 tclass=0xb8 flow=0x6789a hop=64 '
              'sgid=%s dgid=%s len=104 data=ok\n'
              % (RXE_LL, ROCEMU_LL, ROCEMU_LL, RXE_LL),
    'tsv': 'PASS\tud_grh\trocemu->rxe\t1.0\t\n',
}


def run(work, name, edit, diffs=DIFFS):
    """gid_check.py on GOOD edited by EDIT (a function of a copy);
    returns (exit status, output)."""
    case = {k: (list(v) if k == 'frames' else v) for k, v in GOOD.items()}
    edit(case)
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    base = os.path.join(d, 'ud_grh-rocemu-rxe')
    for ext in ('meta', 'server', 'client'):
        with open(base + '.' + ext, 'w') as f:
            f.write(case[ext])
    with open(base + '.pcap', 'wb') as f:
        f.write(pcap([frame(*x) for x in case['frames']]))
    with open(os.path.join(d, 'status.tsv'), 'w') as f:
        f.write(case['tsv'])
    p = subprocess.run([sys.executable, os.path.join(HERE, 'gid_check.py'),
                        '--differences', diffs, d,
                        os.path.join(d, 'status.tsv')],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def frames_edit(i, **kw):
    """An edit of frame I's fields (mac, src, dst, tclass, flow, sport)."""
    names = ('mac', 'src', 'dst', 'tclass', 'flow', 'sport', 'hop')

    def edit(case):
        f = dict(zip(names, case["frames"][i] + (64,)[len(case["frames"][i]) - 6:]))
        f.update(kw)
        case['frames'][i] = tuple(f[n] for n in names)
    return edit


def sub(key, old, new):
    def edit(case):
        assert old in case[key], (key, old)
        case[key] = case[key].replace(old, new)
    return edit


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    # the differences list without one entry's compare: yes
    unlisted = os.path.join(work, 'differences-no-rxe-flow.md')
    with open(DIFFS) as f:
        text = f.read()
    text = re.sub(r'(## FLOW-LABEL-RXE:[^\n]*\n(?:- [a-z]+: [^\n]*\n|\n)*?)'
                  r'- compare: yes\n', r'\1', text)
    with open(unlisted, 'w') as f:
        f.write(text)
    cases = [
        # name, edit, differences, want exit, a pattern the output must have
        ('good', lambda c: None, DIFFS, 0,
         r'PASS ud_grh rocemu->rxe .*listed: FLOW-LABEL-RXE HOP-LIMIT-ROUTE\)'),
        ('hop_ah', lambda c: (frames_edit(1, hop=42)(c),
                              sub('client', 'hop=64 sgid', 'hop=42 sgid')(c)),
         DIFFS, 0, r'PASS ud_grh'),
        ('hop_other', frames_edit(0, hop=63), DIFFS, 1,
         r'packet 1 from client \(rxe\): hop limit 63 on the wire, its AH 17'),
        ('grh_hop', sub('server', 'hop=64', 'hop=17'), DIFFS, 1,
         r'server \(rocemu\) received GRH hop=17, want 64'),
        ('wire_tclass', frames_edit(1, tclass=0x00), DIFFS, 1,
         r'packet 2 from server \(rocemu\): traffic class 0x00 on the wire, '
         r'its AH 0xb8'),
        ('rxe_flow_other', frames_edit(0, flow=0x11111), DIFFS, 1,
         r'client \(rxe\) packets .* flow label 0x11111, its AH 0x12345'),
        ('rocemu_flow_varies',
         lambda c: c['frames'].append((ROCEMU_MAC, ROCEMU_LL, RXE_LL, 0xb8,
                                       0x00007, 57236)), DIFFS, 1,
         r'flow label 0x00007, 0x6789a, its AH 0x6789a'),
        ('rocemu_flow_kernel', frames_edit(1, flow=0xd15cf), DIFFS, 1,
         r'server \(rocemu\) packets .* flow label 0xd15cf, its AH 0x6789a, '
         r'and no listed difference'),
        ('rocemu_sport_4791', frames_edit(1, sport=4791), DIFFS, 1,
         r'server \(rocemu\) sent from UDP source port 4791'),
        ('flow_rxe_unlisted', lambda c: None, unlisted, 1,
         r'client \(rxe\) packets .* flow label 0x00000, its AH 0x12345, '
         r'and no listed difference'),
        ('not_link_local', frames_edit(0, src='fd00:28::1'), DIFFS, 1,
         r'packet 1 from client \(rxe\): IPv6 fd00:28::1 -> .*want IPv6 '
         r'between link-local'),
        ('rxe_sport_4791', frames_edit(0, sport=4791), DIFFS, 1,
         r'client \(rxe\) sent from UDP source port 4791'),
        ('no_packets_from_rxe', lambda c: c['frames'].pop(0), DIFFS, 1,
         r'no packet from the client \(rxe'),
        ('grh_tclass', sub('server', 'tclass=0x68 flow', 'tclass=0x00 flow'),
         DIFFS, 1, r'server \(rocemu\) received GRH tclass=0x00, want 0x68'),
        ('grh_flow_rxe', sub('client', 'flow=0x6789a', 'flow=0x00000'),
         DIFFS, 1, r'client \(rxe\) received GRH flow=0x00000, the packet '
         r'\(2\) carried 0x6789a'),
        ('grh_flow_rocemu', frames_edit(0, flow=0x12345), DIFFS, 1,
         r'server \(rocemu\) received GRH flow=0x00000, the packet '
         r'\(1\) carried 0x12345'),
        ('grh_sgid', sub('client', 'sgid=' + ROCEMU_LL, 'sgid=fe80::1'),
         DIFFS, 1, r'received GRH sgid=fe80::1, want ' + ROCEMU_LL),
        ('grh_no_grh_flag', sub('server', 'grh=1', 'grh=0'), DIFFS, 1,
         r'received GRH grh=0, want 1'),
        ('program_failed', sub('tsv', 'PASS\tud_grh\trocemu->rxe\t1.0\t',
                               'FAIL\tud_grh\trocemu->rxe\t1.0\tclient exit 1'),
         DIFFS, 1, r'the programs failed: client exit 1'),
    ]
    failures = []
    for name, edit, diffs, want, pat in cases:
        rc, out = run(work, name, edit, diffs)
        if rc != want or not re.search(pat, out):
            failures.append('%s: exit %d (wanted %d), no line matching %r '
                            'in:\n%s' % (name, rc, want, pat, out))
    for f in failures:
        print('gid_check_test: FAIL', f)
    print('gid_check_test: %d of %d cases pass' %
          (len(cases) - len(failures), len(cases)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
