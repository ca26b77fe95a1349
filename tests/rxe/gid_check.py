#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Judges the rxe lab's part gid (tests/rxe/gid_guest.sh's runs).

For each run (a RUN.meta file: "gid N", then one line per side "side
server|client rxe|rocemu MAC TCLASS FLOW", the AH traffic class and flow
label that side was given) it reads the run's capture (RUN.pcap, Ethernet)
and, for ud_grh's runs, the GRHs each side printed (RUN.server,
RUN.client), and checks:
  - both sides sent RoCEv2 packets (UDP port 4791);
  - GID 0: every packet is IPv6 between link-local addresses (fe80::/10);
    GID 1: every packet is IPv4;
  - every packet's traffic class (IPv4 TOS) is its sender's AH's, and its
    hop limit (IPv4 TTL) the AH's where the run gave one, or the route's
    64 as the listed difference HOP-LIMIT-ROUTE says;
  - each side (one QP) sends from one UDP source port, not 4791 (which
    gives the network no entropy);
  - every IPv6 packet's flow label is its sender's AH's, or differs as a
    listed difference (conformance/differences.md, `compare: yes`) says:
    FLOW-LABEL-RXE (rxe's is 0);
  - each ud_grh receive completed with IBV_WC_GRH and the peer's data,
    its GRH of the right IP version, with the sender's AH traffic class,
    the sender's GID as source and its own as destination, the hop limit
    and the flow label the sender's packet carried on the wire.
Prints one line per run, "  PASS|FAIL PROG SERVER->CLIENT: ...", saying
on failure what it compared, then one line per listed difference seen.

usage: gid_check.py [--differences FILE] DIR [STATUS_TSV...]
  DIR holds the runs' files; each STATUS_TSV has lines "PASS|FAIL PROG
  DIR SECONDS REASON" (tab-separated; the programs' exit statuses, as
  gid_guest.sh writes them), or "PROG STATUS REASON" (a reference
  client's), which fail a run whose program failed.
Exit 0 when every run passed, 1 otherwise, 2 on a usage error.
"""
import ipaddress
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402  (the differences list's reader)

ROCE_PORT = 4791
UD_SEND = 0x64
# The hop limit of the guests' routes (Linux's default), which rxe and
# rocemu's UDP wire send whatever the AH says (HOP-LIMIT-ROUTE).
ROUTE_HOPS = 64


class Pkt:
    """One RoCEv2 packet of a capture, the fields this check reads."""

    def __init__(self, no, mac, ipv, tclass, flow, src, dst, sport, op,
                 hop):
        self.no, self.mac, self.ipv, self.tclass = no, mac, ipv, tclass
        self.hop = hop
        self.flow, self.src, self.dst, self.sport, self.op = \
            flow, src, dst, sport, op


def read_pcap(path):
    """The RoCEv2 packets of an Ethernet pcap, or raises ValueError."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError('%s: no pcap header' % path)
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        end = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        end = '>'
    else:
        raise ValueError('%s: not a pcap file' % path)
    if struct.unpack(end + 'I', data[20:24])[0] != 1:
        raise ValueError('%s: not an Ethernet capture' % path)
    pkts, off, no = [], 24, 0
    while off + 16 <= len(data):
        incl = struct.unpack(end + 'I', data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        no += 1
        p = parse_frame(no, frame)
        if p:
            pkts.append(p)
    return pkts


def parse_frame(no, b):
    """A Pkt for a RoCEv2 frame, None for any other."""
    if len(b) < 14:
        return None
    mac = ':'.join('%02x' % x for x in b[6:12])
    etype, ip = struct.unpack('>H', b[12:14])[0], b[14:]
    if etype == 0x0800 and len(ip) >= 20 and ip[9] == 17:
        ipv, tclass, flow, hop = 4, ip[1], None, ip[8]
        src = str(ipaddress.IPv4Address(ip[12:16]))
        dst = str(ipaddress.IPv4Address(ip[16:20]))
        udp = ip[(ip[0] & 15) * 4:]
    elif etype == 0x86dd and len(ip) >= 40 and ip[6] == 17:
        w = struct.unpack('>I', ip[:4])[0]
        ipv, tclass, flow, hop = 6, (w >> 20) & 0xff, w & 0xfffff, ip[7]
        src = str(ipaddress.IPv6Address(ip[8:24]))
        dst = str(ipaddress.IPv6Address(ip[24:40]))
        udp = ip[40:]
    else:
        return None
    if len(udp) < 9:
        return None
    sport, dport = struct.unpack('>HH', udp[:4])
    if dport != ROCE_PORT:
        return None
    return Pkt(no, mac, ipv, tclass, flow, src, dst, sport, udp[8], hop)


def read_meta(path):
    """(gid, {role: (impl, mac, tclass, flow)}) of a RUN.meta file."""
    gid, sides = None, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 2 and w[0] == 'gid':
                gid = int(w[1])
            elif len(w) in (6, 7) and w[0] == 'side':
                hop = int(w[6]) if len(w) == 7 and w[6] != '-' else None
                sides[w[1]] = (w[2], w[3].lower(), int(w[4], 0),
                               int(w[5], 0), hop)
    if gid is None or set(sides) != {'server', 'client'}:
        raise ValueError('%s: want "gid N" and two side lines' % path)
    return gid, sides


def grh_lines(path):
    """({'SENT': {...}, 'RECV': {...}}) from a ud_grh side's output."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if w and w[0] in ('SENT', 'RECV'):
                    out[w[0]] = dict(x.split('=', 1) for x in w[1:]
                                     if '=' in x)
    except OSError:
        pass
    return out


def link_local(a):
    return ipaddress.ip_address(a).is_link_local


class Run:
    """One run's verdict: what failed, what listed differences it saw and
    what it found, for the report."""

    def __init__(self, name):
        self.name, self.bad, self.listed, self.found = name, [], [], []

    def fail(self, msg):
        self.bad.append(msg)


def check_packets(r, gid, sides, pkts, rules):
    """The wire checks; returns {role: its first UD SEND packet}."""
    by_mac = {s[1]: role for role, s in sides.items()}
    first_send, flows, sports = {}, {}, {}
    seen = {'server': 0, 'client': 0}
    for p in pkts:
        role = by_mac.get(p.mac)
        if role is None:
            r.fail('packet %d from %s, neither side\'s MAC (%s)' %
                   (p.no, p.mac, ', '.join(sorted(by_mac))))
            continue
        seen[role] += 1
        impl, _, tclass, flow, hop = sides[role]
        who = '%s (%s)' % (role, impl)
        if gid == 0 and not (p.ipv == 6 and link_local(p.src) and
                             link_local(p.dst)):
            r.fail('packet %d from %s: IPv%d %s -> %s, want IPv6 between '
                   'link-local addresses (GID 0)' %
                   (p.no, who, p.ipv, p.src, p.dst))
        if gid != 0 and p.ipv != 4:
            r.fail('packet %d from %s: IPv%d, want IPv4 (GID %d)' %
                   (p.no, who, p.ipv, gid))
        if p.tclass != tclass:
            r.fail('packet %d from %s: traffic class 0x%02x on the wire, '
                   'its AH 0x%02x' % (p.no, who, p.tclass, tclass))
        if hop is not None and p.hop != hop:
            if p.hop == ROUTE_HOPS and 'HOP-LIMIT-ROUTE' in rules:
                r.listed.append('HOP-LIMIT-ROUTE')
            else:
                r.fail('packet %d from %s: hop limit %d on the wire, its AH '
                       '%d, and no listed difference allows it' %
                       (p.no, who, p.hop, hop))
        sports.setdefault(role, set()).add(p.sport)
        if p.op == UD_SEND and role not in first_send:
            first_send[role] = p
        if p.ipv == 6:
            flows.setdefault((role, p.src, p.dst, p.sport), []).append(p)
    for role, n in seen.items():
        if not n:
            r.fail('no packet from the %s (%s, MAC %s)' %
                   (role, sides[role][0], sides[role][1]))
    for role, ports in sorted(sports.items()):
        impl = sides[role][0]
        r.found.append('%s (%s) UDP source port %s' %
                       (role, impl, '/'.join(str(x) for x in sorted(ports))))
        if len(ports) != 1:
            r.fail('%s (%s), one QP, sent from %d UDP source ports (%s)' %
                   (role, impl, len(ports), ' '.join(map(str, ports))))
        elif ports == {ROCE_PORT}:
            r.fail('%s (%s) sent from UDP source port %d (the RoCEv2 '
                   'port), and no listed difference allows it' %
                   (role, impl, ROCE_PORT))
    for (role, src, dst, sport), ps in sorted(flows.items()):
        impl, _, _, want, hop = sides[role]
        got = sorted({p.flow for p in ps})
        r.found.append('%s (%s) flow label %s (AH 0x%05x), traffic class '
                       '0x%02x, hop limit %s (AH %s)' %
                       (role, impl, '/'.join('0x%05x' % g for g in got),
                        want, ps[0].tclass,
                        '/'.join(str(h) for h in sorted({p.hop for p in ps})),
                        '-' if hop is None else hop))
        if got == [want]:
            continue
        if impl == 'rxe' and got == [0] and 'FLOW-LABEL-RXE' in rules:
            r.listed.append('FLOW-LABEL-RXE')
        else:
            r.fail('%s (%s) packets %s -> %s port %d: flow label %s, its '
                   'AH 0x%05x, and no listed difference allows it' %
                   (role, impl, src, dst, sport,
                    ', '.join('0x%05x' % g for g in got), want))
    return first_send


def check_grh(r, d, run, gid, sides, first_send, rules):
    """The ud_grh receivers' GRHs."""
    out = {role: grh_lines(os.path.join(d, '%s.%s' % (run, role)))
           for role in sides}
    for me, peer in (('server', 'client'), ('client', 'server')):
        impl = sides[me][0]
        got, sent, mine = out[me].get('RECV'), out[peer].get('SENT'), \
            out[me].get('SENT')
        who = '%s (%s)' % (me, impl)
        if not got or not sent or not mine:
            r.fail('%s: no RECV line, or a side printed no SENT line' % who)
            continue
        want = {
            'wc': 'success', 'grh': '1', 'data': 'ok',
            'ip': '6' if gid == 0 else '4',
            'tclass': '0x%02x' % sides[peer][2],
            'hop': str(first_send[peer].hop) if peer in first_send
            else '(the hop limit of the packet)',
            'sgid': sent['gid'].split('->')[0],
            'dgid': mine['gid'].split('->')[0],
        }
        for k, v in want.items():
            if got.get(k) != v:
                r.fail('%s received GRH %s=%s, want %s' %
                       (who, k, got.get(k), v))
        r.found.append('%s (%s) GRH traffic class %s flow label %s' %
                       (me, impl, got.get('tclass'), got.get('flow')))
        wire = first_send.get(peer)
        if gid != 0 or wire is None:
            if gid == 0:
                r.fail('%s: no UD SEND from the %s in the capture' %
                       (who, peer))
            continue
        if int(got.get('flow', '-1'), 0) != wire.flow:
            r.fail('%s received GRH flow=%s, the packet (%d) carried '
                   '0x%05x' % (who, got.get('flow'), wire.no, wire.flow))


def statuses(paths):
    """{(prog, dir): reason} of the runs whose programs failed."""
    failed = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                w = line.rstrip('\n').split('\t')
                if len(w) >= 5 and w[0] == 'FAIL':
                    failed[(w[1], w[2])] = w[4]
                elif len(w) >= 2 and w[0] not in ('PASS', 'FAIL') and \
                        w[1] != '0':
                    failed[(w[0], 'rxe->rxe')] = 'reference client exit ' + \
                        w[1] + (': ' + w[2] if len(w) > 2 else '')
    return failed


def main():
    args = sys.argv[1:]
    diffs = compare.DIFFERENCES
    if len(args) >= 2 and args[0] == '--differences':
        diffs, args = args[1], args[2:]
    if not args:
        print(__doc__.split('\n\n')[-2], file=sys.stderr)
        return 2
    d, tsvs = args[0], args[1:]
    rules = compare.documented_rules(diffs) & compare.GID_RULES
    failed = statuses(tsvs)
    metas = sorted(n[:-5] for n in os.listdir(d) if n.endswith('.meta'))
    if not metas:
        print('gid_check: no runs (RUN.meta) in %s' % d, file=sys.stderr)
        return 2
    nbad, listed = 0, {}
    for run in metas:
        gid, sides = read_meta(os.path.join(d, run + '.meta'))
        prog = run[4:] if run.startswith('ref-') else \
            run.rsplit('-', 2)[0]
        dirn = '%s->%s' % (sides['server'][0], sides['client'][0])
        r = Run(run)
        if (prog, dirn) in failed:
            r.fail('the programs failed: ' + failed[(prog, dirn)])
        try:
            pkts = read_pcap(os.path.join(d, run + '.pcap'))
        except (OSError, ValueError) as e:
            r.fail('no capture: %s' % e)
            pkts = None
        if pkts is not None:
            first = check_packets(r, gid, sides, pkts, rules)
            if prog.startswith('ud_grh'):
                check_grh(r, d, run, gid, sides, first, rules)
        head = '  %s %s %s' % ('FAIL' if r.bad else 'PASS', prog, dirn)
        what = '%d packets, GID %d' % (len(pkts or []), gid)
        if r.listed:
            what += ', listed: ' + ' '.join(sorted(set(r.listed)))
        print('%s (%s)' % (head, what))
        for f in r.found:
            print('      ' + f)
        for b in r.bad:
            print('    ' + b)
        nbad += bool(r.bad)
        for x in r.listed:
            listed[x] = listed.get(x, 0) + 1
    for x in sorted(listed):
        print('  listed %s in %d checks' % (x, listed[x]))
    print('gid_check: %d runs, %d passed, %d failed' %
          (len(metas), len(metas) - nbad, nbad))
    return 1 if nbad else 0


if __name__ == '__main__':
    sys.exit(main())
