#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sim_bench.py: a simulated device (an RTL simulation's test bench) as
rocemu conform's device under test, without a verbs driver or a UDP stack.

The bridge faces conform on its two channels and the bench on one Unix
stream socket:

  rocemu conform --agent  --TCP, agent protocol-->  bridge  --records-->  bench
  rocemu conform wire     <--UDP 4791, ADDR---->   bridge  <--records--  (HDL)

A record is a 4-byte big-endian length N, then N bytes: one kind byte and
its body (docs/simulated-device.md):
  'F'  a whole Ethernet II frame, no preamble, no FCS: IPv4, UDP to port
       4791, the RoCEv2 packet with its ICRC. Both ways.
  'C'  bridge to bench: one agent-protocol request line (conformance/
       PROTOCOL.md), without its newline.
  'A'  bench to bridge: the answer line to the oldest unanswered 'C'.

The bridge keeps one agent connection at a time and has at most one 'C'
outstanding; frames flow both ways at any time, also while a 'C' waits.
When a connection ends the bench gets a 'C' "bye" (unless the client sent
one): it destroys everything it made for that connection. The bench's
hello answer may leave out gid=, gid_index=, gid4= and gid4_index=: the
bridge adds them from --addr.

usage: sim_bench.py --addr IPV4 --bench PATH [--agent HOST:PORT]
"""
import argparse
import os
import selectors
import socket
import struct
import sys

ROCE_PORT = 4791
BENCH_MAC = bytes.fromhex('020000000001')   # the device's side
WIRE_MAC = bytes.fromhex('020000000002')    # the bridge's side
IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2     # Linux <netinet/in.h>
MAX_LINE = 4096


def ip_checksum(hdr):
    s = sum(struct.unpack('!%dH' % (len(hdr) // 2), hdr))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def wrap(payload, src, sport, dst):
    """An Ethernet/IPv4/UDP frame around a RoCEv2 datagram from src:sport
    to dst:4791. IPv4 ID 0 with DF, as a Linux socket sends it (conform's
    and rocemu's too): the header its ICRC was computed over. UDP
    checksum 0 (none, legal over IPv4)."""
    udp = struct.pack('!HHHH', sport, ROCE_PORT, 8 + len(payload), 0)
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp) + len(payload),
                               0, 0x4000, 64, 17, 0, socket.inet_aton(src),
                               socket.inet_aton(dst)))
    ip[10:12] = struct.pack('!H', ip_checksum(bytes(ip)))
    return BENCH_MAC + WIRE_MAC + b'\x08\x00' + bytes(ip) + udp + payload


def unwrap(frame):
    """((destination IPv4, UDP source port), UDP payload) of a frame from the bench, or
    (None, why) for one the bridge does not forward."""
    if len(frame) < 14 + 20 + 8 or frame[12:14] != b'\x08\x00':
        return None, 'not an IPv4 Ethernet II frame'
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    if ip[0] >> 4 != 4 or ihl < 20 or ip[9] != 17:
        return None, 'not IPv4/UDP'
    total = struct.unpack('!H', ip[2:4])[0]
    if total > len(ip) or total < ihl + 8:
        return None, 'IPv4 total length %d, frame holds %d' % (total, len(ip))
    sport, dport, ulen = struct.unpack('!HHH', ip[ihl:ihl + 6])
    if dport != ROCE_PORT or ulen != total - ihl:
        return None, 'UDP port %d or length %d wrong' % (dport, ulen)
    return (socket.inet_ntoa(ip[16:20]), sport), bytes(ip[ihl + 8:total])


class Bridge:
    def __init__(self, a):
        self.addr = a.addr
        self.sel = selectors.DefaultSelector()
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        self.udp.bind((a.addr, ROCE_PORT))
        self.senders = {ROCE_PORT: self.udp}   # by UDP source port
        host, port = a.agent.rsplit(':', 1)
        self.lis = socket.socket()
        self.lis.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lis.bind((host, int(port)))
        self.lis.listen(4)
        self.bench_lis = socket.socket(socket.AF_UNIX)
        if os.path.exists(a.bench):
            os.unlink(a.bench)
        self.bench_lis.bind(a.bench)
        self.bench_lis.listen(1)
        print('sim_bench: waiting for the bench on %s' % a.bench, flush=True)
        self.bench, _ = self.bench_lis.accept()
        self.bench_in = b''
        self.client = None
        self.cin = b''
        self.queue = []          # request lines not yet given to the bench
        self.waiting = None      # the line the bench is answering, or None
        self.closing = False     # the client is gone: only bye is left
        self.frames_in = self.frames_out = self.dropped = 0
        self.sel.register(self.udp, selectors.EVENT_READ, self.on_udp)
        self.sel.register(self.bench, selectors.EVENT_READ, self.on_bench)
        self.sel.register(self.lis, selectors.EVENT_READ, self.on_accept)
        print('sim_bench: agent protocol on %s, device at %s port %d'
              % (a.agent, a.addr, ROCE_PORT), flush=True)

    def record(self, kind, body):
        self.bench.sendall(struct.pack('!I', 1 + len(body)) + kind + body)

    def on_udp(self):
        data, (src, sport) = self.udp.recvfrom(65536)
        self.frames_in += 1
        self.record(b'F', wrap(data, src, sport, self.addr))

    def on_bench(self):
        data = self.bench.recv(65536)
        if not data:
            print('sim_bench: the bench closed its socket: %d frames to it, %d from it, '
                  '%d dropped' % (self.frames_in, self.frames_out, self.dropped), flush=True)
            sys.exit(0)
        self.bench_in += data
        while len(self.bench_in) >= 4:
            n = struct.unpack('!I', self.bench_in[:4])[0]
            if len(self.bench_in) < 4 + n:
                break
            kind, body = self.bench_in[4:5], self.bench_in[5:4 + n]
            self.bench_in = self.bench_in[4 + n:]
            if kind == b'F':
                self.on_frame(body)
            elif kind == b'A':
                self.on_answer(body.decode('ascii', 'replace'))
            else:
                print('sim_bench: record of unknown kind %r dropped' % kind, flush=True)

    def on_frame(self, frame):
        dst, payload = unwrap(frame)
        if dst is None:
            self.dropped += 1
            print('sim_bench: frame from the bench dropped: %s' % payload, flush=True)
            return
        (ip, sport) = dst
        if sport not in self.senders:
            # the ICRC covers the UDP source port: send from the bench's
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
            try:
                s.bind((self.addr, sport))
            except OSError as e:
                s.close()
                self.dropped += 1
                print('sim_bench: frame from the bench dropped: UDP source port %d: %s'
                      % (sport, e.strerror), flush=True)
                return
            self.senders[sport] = s
        try:
            self.senders[sport].sendto(payload, (ip, ROCE_PORT))
        except OSError as e:    # too big for the path, no route: not sent
            self.dropped += 1
            print('sim_bench: frame from the bench dropped: %s' % e.strerror, flush=True)
            return
        self.frames_out += 1

    def on_answer(self, line):
        req, self.waiting = self.waiting, None
        if req is None:
            print('sim_bench: an answer nobody asked for dropped: %s' % line, flush=True)
            return
        if req.split()[0] == 'hello' and line.startswith('ok') and ' gid=' not in line:
            g = '::ffff:' + self.addr
            line += ' gid=%s gid_index=1 gid4=%s gid4_index=1' % (g, g)
        if self.closing:   # the client is gone: nobody reads answers
            if req == 'bye':
                self.drop_client()
            else:
                self.next_request()
            return
        self.client.sendall(line.encode('ascii') + b'\n')
        if req.split()[0] == 'bye':
            self.drop_client()
            return
        self.next_request()

    def on_accept(self):
        self.client, _ = self.lis.accept()
        self.sel.unregister(self.lis)   # one connection at a time
        self.sel.register(self.client, selectors.EVENT_READ, self.on_client)

    def on_client(self):
        data = self.client.recv(65536)
        if not data:
            self.closing = True
            self.sel.unregister(self.client)
            self.queue = ['bye']
            if self.waiting is None:
                self.next_request()
            return
        self.cin += data
        while b'\n' in self.cin:
            line, self.cin = self.cin.split(b'\n', 1)
            self.queue.append(line)
        if len(self.cin) > MAX_LINE:
            self.cin = b''
            self.queue.append(b'\x00too long')
        if self.waiting is None:
            self.next_request()

    def next_request(self):
        while self.queue and self.waiting is None:
            raw = self.queue.pop(0)
            line = raw if isinstance(raw, str) else raw.decode('latin-1')
            line = line.replace('\t', ' ').replace('\r', ' ').strip(' ')
            if len(raw) > MAX_LINE or any(c < ' ' or c > '~' for c in line):
                self.client.sendall(b'err EINVAL a request is one line of printable '
                                    b'ASCII of at most 4096 bytes\n')
                continue
            if not line:
                continue
            self.waiting = line
            self.record(b'C', line.encode('ascii'))

    def drop_client(self):
        if not self.closing:
            self.sel.unregister(self.client)
        self.client.close()
        self.client, self.cin, self.queue, self.closing = None, b'', [], False
        self.sel.register(self.lis, selectors.EVENT_READ, self.on_accept)

    def run(self):
        while True:
            for key, _ in self.sel.select():
                key.data()


def main():
    p = argparse.ArgumentParser(description='rocemu conform to a simulated device: '
                                'the agent protocol and RoCEv2 frames over one Unix socket')
    p.add_argument('--addr', required=True, help="the device's IPv4 address (UDP 4791 there)")
    p.add_argument('--bench', required=True, help='the Unix socket path the bench connects to')
    p.add_argument('--agent', default='127.0.0.1:18515',
                   help='where conform reaches the agent protocol (default 127.0.0.1:18515)')
    try:
        Bridge(p.parse_args()).run()
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
