#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sim_model.py: a small RC responder model behind examples/sim_bench.py,
in the place where an HDL test bench (cocotb, Verilator) would sit. It
connects to the bridge's Unix socket and speaks its records (docs/
simulated-device.md): it answers the agent requests rocemu conform makes
for responder scenarios (hello pd mr cq qp modify query recv poll read
write event destroy bye; `send` is refused: it is no requester) and
answers RoCEv2 frames as an RC responder: SEND and RDMA WRITE (only,
first, middle, last), RDMA READ (responses segmented at the path MTU),
ACK on AckReq, the PSN rules (a duplicate is acknowledged again and not
executed again, a READ duplicate is executed again; a packet ahead of the
expected PSN is NAKed once, then dropped until the expected one comes),
rkey, bounds and access checks (NAK remote access error), RNR NAK without
a receive, ICRC check (a bad one is dropped).

--break nak-once makes it NAK every packet ahead of the expected PSN, not
only the first: a model that breaks that rule, for a test to catch.

usage: sim_model.py --bench PATH [--break nak-once]
"""
import argparse
import select
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
MODEL_MAC = bytes.fromhex('020000000001')    # the bridge writes these two
BRIDGE_MAC = bytes.fromhex('020000000002')
SEND = {0x00: 'first', 0x01: 'middle', 0x02: 'last', 0x04: 'only'}
WRITE = {0x06: 'first', 0x07: 'middle', 0x08: 'last', 0x0a: 'only'}
READ_REQ, ACK = 0x0c, 0x11
RESP_FIRST, RESP_MIDDLE, RESP_LAST, RESP_ONLY = 0x0d, 0x0e, 0x0f, 0x10
NAK_SEQ, NAK_INV, NAK_ACCESS = 0x60, 0x61, 0x62
PSN_MASK = 0xffffff


def icrc(ipudp_bth_payload, ihl):
    """The RoCEv2 ICRC (IBTA A17.3.3) over an IPv4 packet without its ICRC:
    8 bytes of ones for the LRH, TOS, TTL, IP checksum, UDP checksum and
    the BTH's reserved byte masked to ones. Little-endian on the wire."""
    m = bytearray(b'\xff' * 8) + ipudp_bth_payload
    m[9] = 0xff                       # TOS
    m[16] = 0xff                      # TTL
    m[18:20] = b'\xff\xff'            # header checksum
    m[8 + ihl + 6:8 + ihl + 8] = b'\xff\xff'    # UDP checksum
    m[8 + ihl + 8 + 4] = 0xff         # BTH resv8a
    return struct.pack('<I', zlib.crc32(bytes(m)))


def psn_diff(a, b):
    """a - b in the 24-bit PSN space, as a signed number."""
    d = (a - b) & PSN_MASK
    return d - (1 << 24) if d & 0x800000 else d


class QP:
    def __init__(self, n, qpn, kind):
        self.n, self.qpn, self.kind = n, qpn, kind
        self.state, self.access = 'reset', set()
        self.epsn = self.msn = self.dqpn = 0
        self.dip, self.mtu, self.rnr = None, 1024, 0
        self.nak_sent = False
        self.rq = []             # posted receives: (mr, off, len, id)
        self.cur = None          # the message being received: [kind, mr, off, len, id, done]


class Model:
    def __init__(self, a):
        self.brk = a.brk
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(a.bench)
        self.inbuf = b''
        self.pd = 0
        self.mrs, self.cqs, self.qps = {}, {}, {}
        self.poll_wait = None    # (cq, deadline) of a poll still waiting
        self.ip = None           # the device's address, from the first frame

    # ---- the records ----
    def record(self, kind, body):
        self.s.sendall(struct.pack('!I', 1 + len(body)) + kind + body)

    def answer(self, line):
        self.record(b'A', line.encode('ascii'))

    def run(self):
        while True:
            timeout = None
            if self.poll_wait:
                timeout = max(0.0, self.poll_wait[1] - time.monotonic())
            r, _, _ = select.select([self.s], [], [], timeout)
            if r:
                data = self.s.recv(65536)
                if not data:
                    return
                self.inbuf += data
                while len(self.inbuf) >= 4:
                    n = struct.unpack('!I', self.inbuf[:4])[0]
                    if len(self.inbuf) < 4 + n:
                        break
                    kind, body = self.inbuf[4:5], self.inbuf[5:4 + n]
                    self.inbuf = self.inbuf[4 + n:]
                    if kind == b'C':
                        self.command(body.decode('ascii'))
                    elif kind == b'F':
                        self.frame(body)
            self.check_poll()

    # ---- the agent protocol ----
    def command(self, line):
        w = line.split()
        kv = dict(x.split('=', 1) for x in w[1:] if '=' in x)
        f = getattr(self, 'cmd_' + w[0], None)
        if f is None:
            self.answer('err EOPNOTSUPP the model does not do %s' % w[0])
            return
        try:
            r = f(kv)
        except (KeyError, ValueError) as e:
            r = 'err EINVAL bad or missing argument %s' % e
        if r is not None:
            self.answer(r)

    def cmd_hello(self, kv):
        return ('ok proto=1 device=sim_model0 port=1 active_mtu=1024 vendor_id=0x0 '
                'vendor_part_id=0 max_qp_rd_atom=16 max_qp_init_rd_atom=16 '
                'atomic_cap=none caps=none')

    def cmd_pd(self, kv):
        self.pd += 1
        return 'ok pd=%d' % self.pd

    def cmd_mr(self, kv):
        n = len(self.mrs) + 1
        size = int(kv['size'], 0)
        fill = kv.get('fill', '0')
        buf = bytearray(i & 255 for i in range(size)) if fill == 'inc' \
            else bytearray([int(fill, 0)]) * size
        key = 0x100 * n + 0x42
        self.mrs[n] = {'buf': buf, 'addr': n << 32, 'key': key,
                       'access': set(kv['access'].split(','))}
        return 'ok mr=%d addr=%#x rkey=%#x lkey=%#x size=%d' % (n, n << 32, key, key, size)

    def cmd_cq(self, kv):
        n = len(self.cqs) + 1
        self.cqs[n] = []
        return 'ok cq=%d' % n

    def cmd_qp(self, kv):
        if kv['type'] != 'rc':
            return 'err EOPNOTSUPP the model does RC only'
        n = len(self.qps) + 1
        q = QP(n, 0x10 + n, kv['type'])
        q.rcq = int(kv['rcq'], 0)
        self.qps[n] = q
        return 'ok qp=%d qpn=%#x' % (n, q.qpn)

    def cmd_modify(self, kv):
        q = self.qps[int(kv['qp'], 0)]
        st = kv['state']
        if st == 'init':
            q.access = set(kv.get('access', '0').split(','))
        elif st == 'rtr':
            q.dip = kv['dgid'].rsplit(':', 1)[1]   # ::ffff:a.b.c.d
            q.dqpn = int(kv['dqpn'], 0)
            q.epsn = int(kv['rq_psn'], 0)
            q.mtu = int(kv.get('mtu', '1024'), 0)
            q.rnr = int(kv.get('min_rnr_timer', '0'), 0)
        q.state = st
        return 'ok qp=%d state=%s' % (q.n, st)

    def cmd_query(self, kv):
        q = self.qps[int(kv['qp'], 0)]
        return 'ok qp=%d state=%s' % (q.n, q.state)

    def cmd_recv(self, kv):
        q = self.qps[int(kv['qp'], 0)]
        q.rq.append((int(kv['mr'], 0), int(kv['off'], 0), int(kv['len'], 0),
                     int(kv.get('id', '0'), 0)))
        return 'ok'

    def cmd_send(self, kv):
        return 'err EOPNOTSUPP the model is a responder only'

    def cmd_poll(self, kv):
        cq = int(kv['cq'], 0)
        self.poll_wait = (cq, time.monotonic() + int(kv.get('wait_ms', '0'), 0) / 1000)
        self.check_poll()

    def check_poll(self):
        """Answers a waiting poll once its CQ has an entry or its wait is
        over: the model keeps taking frames in the meantime."""
        if not self.poll_wait:
            return
        cq, deadline = self.poll_wait
        if self.cqs[cq]:
            self.poll_wait = None
            self.answer('ok ' + self.cqs[cq].pop(0))
        elif time.monotonic() >= deadline:
            self.poll_wait = None
            self.answer('ok none')

    def cmd_event(self, kv):
        return 'ok none'

    def cmd_read(self, kv):
        m = self.mrs[int(kv['mr'], 0)]
        off, ln = int(kv['off'], 0), int(kv['len'], 0)
        if off + ln > len(m['buf']):
            return 'err EINVAL outside the MR'
        return 'ok data=' + m['buf'][off:off + ln].hex()

    def cmd_write(self, kv):
        m = self.mrs[int(kv['mr'], 0)]
        off, data = int(kv['off'], 0), bytes.fromhex(kv['data'])
        if off + len(data) > len(m['buf']):
            return 'err EINVAL outside the MR'
        m['buf'][off:off + len(data)] = data
        return 'ok'

    def cmd_destroy(self, kv):
        return 'ok'

    def cmd_bye(self, kv):
        self.pd = 0
        self.mrs, self.cqs, self.qps, self.poll_wait = {}, {}, {}, None
        return 'ok'

    # ---- the wire ----
    def frame(self, fr):
        if len(fr) < 14 + 20 + 8 + 12 + 4 or fr[12:14] != b'\x08\x00':
            return
        ip = fr[14:]
        ihl = (ip[0] & 15) * 4
        total = struct.unpack('!H', ip[2:4])[0]
        if total > len(ip) or total < ihl + 8 + 12 + 4:
            return
        pkt = ip[:total]
        if icrc(pkt[:-4], ihl) != pkt[-4:]:
            return                                 # A17.3.3: dropped
        self.ip = socket.inet_ntoa(pkt[16:20])
        bth = pkt[ihl + 8:ihl + 20]
        op, pad = bth[0], (bth[1] >> 4) & 3
        dqpn = int.from_bytes(bth[5:8], 'big')
        ackreq, psn = bth[8] >> 7, int.from_bytes(bth[9:12], 'big')
        body = pkt[ihl + 20:-4]
        q = next((x for x in self.qps.values() if x.qpn == dqpn), None)
        if q is None or q.state not in ('rtr', 'rts') or op >> 5 != 0:
            return                                 # not an RC QP of ours
        d = psn_diff(psn, q.epsn)
        if d > 0:                                  # 9.7.5.1.1: ahead
            if not q.nak_sent or self.brk == 'nak-once':
                q.nak_sent = True
                self.ack(q, q.epsn, NAK_SEQ)
            return
        if d < 0:                                  # a duplicate
            if op == READ_REQ:
                self.read(q, psn, body, dup=True)
            else:
                self.ack(q, psn, 0x1f)
            return
        q.nak_sent = False
        if op in SEND:
            self.send(q, op, ackreq, psn, body[:len(body) - pad])
        elif op in WRITE:
            self.write(q, op, ackreq, psn, body, pad)
        elif op == READ_REQ:
            self.read(q, psn, body, dup=False)
        else:
            self.ack(q, psn, NAK_INV)

    def ack(self, q, psn, syndrome):
        self.emit(q, ACK, psn, struct.pack('!B', syndrome) + q.msn.to_bytes(3, 'big'))

    def emit(self, q, op, psn, rest, pad=0):
        """One packet to the requester: Ethernet, IPv4 (ID 0, DF), UDP, BTH,
        rest (AETH and payload), pad bytes, ICRC."""
        bth = struct.pack('!BBHB', op, pad << 4, 0xffff, 0) + q.dqpn.to_bytes(3, 'big') \
            + b'\x00' + (psn & PSN_MASK).to_bytes(3, 'big')
        payload = bth + rest + b'\x00' * pad
        udp = struct.pack('!HHHH', 0xc000 | (q.qpn & 0x3fff), ROCE_PORT,
                          8 + len(payload) + 4, 0)
        ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp) + len(payload) + 4,
                                   0, 0x4000, 64, 17, 0, socket.inet_aton(self.ip),
                                   socket.inet_aton(q.dip)))
        s = sum(struct.unpack('!10H', bytes(ip)))
        s = (s & 0xffff) + (s >> 16)
        ip[10:12] = struct.pack('!H', ~((s & 0xffff) + (s >> 16)) & 0xffff)
        pkt = bytes(ip) + udp + payload
        self.record(b'F', BRIDGE_MAC + MODEL_MAC + b'\x08\x00'
                    + pkt + icrc(pkt, 20))

    def region(self, q, va, rkey, ln, right):
        """(mr, offset) that va..va+ln lies in under rkey with the right,
        or None (IBTA 10.6: remote access error)."""
        for n, m in self.mrs.items():
            if m['key'] == rkey:
                off = va - m['addr']
                if right in m['access'] and right in q.access and \
                        0 <= off and off + ln <= len(m['buf']):
                    return n, off
        return None

    def send(self, q, op, ackreq, psn, data):
        kind = SEND[op]
        if kind in ('first', 'only'):
            if not q.rq:
                self.ack(q, psn, 0x20 | (q.rnr & 0x1f))   # RNR NAK
                return
            mr, off, ln, wid = q.rq.pop(0)
            q.cur = ['send', mr, off, ln, wid, 0]
        elif q.cur is None or q.cur[0] != 'send':
            self.ack(q, psn, NAK_INV)
            return
        _, mr, off, ln, wid, done = q.cur
        if done + len(data) > ln:
            self.ack(q, psn, NAK_INV)
            return
        self.mrs[mr]['buf'][off + done:off + done + len(data)] = data
        q.cur[5] = done + len(data)
        q.epsn = (psn + 1) & PSN_MASK
        if kind in ('last', 'only'):
            q.msn = (q.msn + 1) & PSN_MASK
            self.cqs[q.rcq].append('id=%d status=success opcode=recv byte_len=%d '
                                   'src_qp=%#x qpn=%#x' % (wid, q.cur[5], q.dqpn, q.qpn))
            q.cur = None
        if ackreq:
            self.ack(q, psn, 0x1f)

    def write(self, q, op, ackreq, psn, body, pad):
        kind = WRITE[op]
        if kind in ('first', 'only'):
            va, rkey, ln = struct.unpack('!QII', body[:16])
            body = body[16:]
            where = self.region(q, va, rkey, ln, 'rw')
            if where is None:
                self.ack(q, psn, NAK_ACCESS)
                return
            q.cur = ['write', where[0], where[1], ln, 0, 0]
        elif q.cur is None or q.cur[0] != 'write':
            self.ack(q, psn, NAK_INV)
            return
        data = body[:len(body) - pad]
        _, mr, off, ln, _, done = q.cur
        if done + len(data) > ln:
            self.ack(q, psn, NAK_INV)
            return
        self.mrs[mr]['buf'][off + done:off + done + len(data)] = data
        q.cur[5] = done + len(data)
        q.epsn = (psn + 1) & PSN_MASK
        if kind in ('last', 'only'):
            q.msn = (q.msn + 1) & PSN_MASK
            q.cur = None
        if ackreq:
            self.ack(q, psn, 0x1f)

    def read(self, q, psn, body, dup):
        va, rkey, ln = struct.unpack('!QII', body[:16])
        where = self.region(q, va, rkey, ln, 'rr') if ln else (1, 0)
        if where is None:
            self.ack(q, psn, NAK_ACCESS)
            return
        n = max(1, -(-ln // q.mtu))
        if not dup:
            q.msn = (q.msn + 1) & PSN_MASK
            q.epsn = (psn + n) & PSN_MASK
        data = self.mrs[where[0]]['buf'][where[1]:where[1] + ln] if ln else b''
        aeth = struct.pack('!B', 0x1f) + q.msn.to_bytes(3, 'big')
        for i in range(n):
            part = bytes(data[i * q.mtu:(i + 1) * q.mtu])
            op = RESP_ONLY if n == 1 else RESP_FIRST if i == 0 else \
                RESP_LAST if i == n - 1 else RESP_MIDDLE
            head = aeth if op != RESP_MIDDLE else b''
            self.emit(q, op, psn + i, head + part, (-len(part)) & 3)


def main():
    p = argparse.ArgumentParser(description='an RC responder model behind sim_bench.py')
    p.add_argument('--bench', required=True, help="the bridge's Unix socket")
    p.add_argument('--break', dest='brk', choices=['nak-once'],
                   help='break one rule on purpose (nak-once: NAK every packet ahead)')
    Model(p.parse_args()).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
