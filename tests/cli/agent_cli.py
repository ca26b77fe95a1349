#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rocemu-agent's control protocol (conformance/PROTOCOL.md), driven as a client:
hello first; malformed requests refused with err EINVAL and the connection
still usable; unknown objects ENOENT; then a whole RC exchange between two
QPs of the agent connected to each other (WRITE, SEND with immediate, READ,
FETCH_ADD, CMP_SWAP, a wrong R_Key), a UD exchange, and a reconnect that
finds nothing left of the first connection. Every expected value is the
protocol's or computed here.
usage: agent_cli.py PORT EXPECTED_GID
"""
import socket
import sys

PORT, GID = int(sys.argv[1]), sys.argv[2]
fails = []
count = 0


class Agent:
    def __init__(self):
        self.s = socket.create_connection(('127.0.0.1', PORT), timeout=20)
        self.f = self.s.makefile('rwb')

    def do(self, line):
        return self.do_raw(line.encode())

    def do_raw(self, raw):
        self.f.write(raw + b'\n')
        self.f.flush()
        return self.f.readline().decode('latin-1').rstrip('\n')

    def close(self):
        self.s.close()


def kv(answer):
    return dict(w.split('=', 1) for w in answer.split()[1:] if '=' in w)


def check(what, cond, got=''):
    global count
    count += 1
    if not cond:
        fails.append(f'{what}: {got}')


def ok(a, line):
    ans = a.do(line)
    check(f'"{line}" answered ok', ans.startswith('ok'), ans)
    return kv(ans)


def err(a, line, code):
    ans = a.do(line)
    check(f'"{line[:60]}" refused with {code}', ans.startswith(f'err {code} '), ans)


a = Agent()
err(a, 'pd', 'EPROTO')
err(a, 'hello proto=2', 'EPROTO')
h = ok(a, 'hello proto=1')
check('hello names the device', h.get('device') == 'rocemu0', h)
check('hello names the GID', h.get('gid') == GID, h)
check('the first pd is 1', ok(a, 'pd').get('pd') == '1')
for bad in ['frobnicate', 'pd colour=red', 'cq depth=1 depth=2', 'mr pd=1',
            'cq depth=many', 'qp', 'pd =3', 'mr pd=1 size=64 access=lw,xx',
            'x' * 5000]:
    err(a, bad, 'EINVAL')
# Garbage: bytes that are not printable ASCII anywhere in a line (a NUL
# would otherwise cut the line short and hide the rest), numbers past
# 64 bits, a line that is long in one piece; each refused, and the
# connection still usable.
for raw in [b'pd\x00 colour=red', b'pd \x00', b'\xff\xfe\xfd', b'hello\x01proto=1',
            b'cq depth=64\x00', b'\x1b[2J', b'cq depth=99999999999999999999999',
            b'cq depth=0x1ffffffffffffffff', b'a' * 20000, b'=' * 3000,
            b'cq ' + b'k=v ' * 40, b'\r', b' ', b'']:
    ans = a.do_raw(raw)
    check(f'{raw[:30]!r} refused with EINVAL', ans.startswith('err EINVAL '), ans)
    check(f'{raw[:30]!r}: the answer is printable ASCII',
          all(32 <= ord(ch) < 127 for ch in ans), ans)
check('the connection survives', ok(a, 'pd').get('pd') == '2')
err(a, 'cq depth=0', 'EINVAL')
err(a, 'mr pd=9 size=64 access=lw', 'ENOENT')
err(a, 'query qp=3', 'ENOENT')
# The CM commands: refusals first, then a listener that hears nothing.
err(a, 'cm_event', 'ENOENT')
for bad in ['cm_listen', 'cm_listen port=0', 'cm_listen port=70000', 'cm_accept',
            'cm_listen port=7600 colour=red']:
    err(a, bad, 'EINVAL')
for gone in ['cm_accept conn=1', 'cm_poll conn=1', 'cm_disconnect conn=0']:
    err(a, gone, 'ENOENT')
check('cm_listen', ok(a, 'cm_listen port=7600').get('listen') == '1')
check('cm_event: none yet', a.do('cm_event wait_ms=20') == 'ok none')

# Two RC QPs of the agent, connected to each other.
ok(a, 'cq depth=64')
src = ok(a, 'mr pd=1 size=4096 access=lw fill=inc')
dst = ok(a, 'mr pd=1 size=4096 access=lw,rw,rr,ra fill=0')
q1 = ok(a, 'qp pd=1 type=rc scq=1 rcq=1')
q2 = ok(a, 'qp pd=1 type=rc scq=1 rcq=1')
for me, peer, psn in (('1', q2, 0x100), ('2', q1, 0x200)):
    ok(a, f'modify qp={me} state=init access=rw,rr,ra')
    ok(a, f'modify qp={me} state=rtr dgid={GID} dqpn={peer["qpn"]} '
          f'rq_psn={0x300 - psn:#x} mtu=1024 max_dest_rd_atomic=4 min_rnr_timer=1')
    ok(a, f'modify qp={me} state=rts sq_psn={psn:#x} timeout=14 retry_cnt=7 '
          f'rnr_retry=7 max_rd_atomic=4')
check('state rts', ok(a, 'query qp=1').get('state') == 'rts')


def completion(want_status='success'):
    c = ok(a, 'poll cq=1 wait_ms=3000')
    check(f'a completion with status {want_status}', c.get('status') == want_status, c)
    return c


raddr, rkey = int(dst['addr'], 16), dst['rkey']
ok(a, f'send qp=1 op=write mr=1 off=0 len=3000 raddr={raddr:#x} rkey={rkey} id=5')
c = completion()
check('write completion', c.get('opcode') == 'write' and c.get('id') == '5', c)
data = bytes.fromhex(ok(a, 'read mr=2 off=0 len=1024')['data']) + \
    bytes.fromhex(ok(a, 'read mr=2 off=1024 len=1024')['data']) + \
    bytes.fromhex(ok(a, 'read mr=2 off=2048 len=952')['data'])
check('the WRITE placed bytes i mod 256', data == bytes(i % 256 for i in range(3000)))
check('nothing past it', ok(a, 'read mr=2 off=3000 len=8')['data'] == '00' * 8)

ok(a, 'recv qp=2 mr=2 off=3072 len=512 id=9')
ok(a, 'send qp=1 op=send_imm mr=1 off=16 len=100 imm=0x12345678 id=6')
seen = set()
for _ in range(2):
    c = completion()
    seen.add(c['opcode'])
    if c['opcode'] == 'recv':
        check('recv: immediate and length', c.get('imm') == '0x12345678' and
              c.get('byte_len') == '100', c)
check('send and recv completions', seen == {'send', 'recv'}, seen)

ok(a, 'write mr=2 off=0 data=0102030405060708')
ok(a, f'send qp=1 op=read mr=1 off=2048 len=8 raddr={raddr:#x} rkey={rkey} id=7')
completion()
check('READ fetched the bytes', ok(a, 'read mr=1 off=2048 len=8')['data'] == '0102030405060708')
ok(a, f'send qp=1 op=faa mr=1 off=2056 len=8 raddr={raddr:#x} rkey={rkey} add=1 id=8')
completion()
orig = int.from_bytes(bytes.fromhex('0102030405060708'), 'little')
check('FETCH_ADD returned the original',
      ok(a, 'read mr=1 off=2056 len=8')['data'] == orig.to_bytes(8, 'little').hex())
check('FETCH_ADD added 1',
      ok(a, 'read mr=2 off=0 len=8')['data'] == (orig + 1).to_bytes(8, 'little').hex())
ok(a, f'send qp=1 op=cas mr=1 off=2064 len=8 raddr={raddr:#x} rkey={rkey} '
      f'compare={orig + 1:#x} swap=0x99 id=9')
completion()
check('CMP_SWAP swapped', ok(a, 'read mr=2 off=0 len=8')['data'] == (0x99).to_bytes(8, 'little').hex())
ok(a, f'send qp=1 op=write mr=1 off=0 len=8 raddr={raddr:#x} rkey={int(rkey, 16) + 0x1000:#x} id=10')
completion('remote_access_error')
check('the QP in error', ok(a, 'query qp=1').get('state') == 'err')
ev = a.do('event wait_ms=500')
check('event answers ok', ev.startswith('ok '), ev)

# UD between two QPs of the agent.
ok(a, 'cq depth=16')
u1 = ok(a, 'qp pd=1 type=ud scq=2 rcq=2')
u2 = ok(a, 'qp pd=1 type=ud scq=2 rcq=2')
for q in (u1['qp'], u2['qp']):
    ok(a, f'modify qp={q} state=init qkey=0x42')
    ok(a, f'modify qp={q} state=rtr')
    ok(a, f'modify qp={q} state=rts sq_psn=0')
ah = ok(a, f'ah pd=1 dgid={GID}')['ah']
ok(a, f'recv qp={u2["qp"]} mr=2 off=0 len=1024 id=1')
ok(a, f'send qp={u1["qp"]} op=send mr=1 off=0 len=64 ah={ah} dqpn={u2["qpn"]} qkey=0x42 id=2')
got = {}
for _ in range(2):
    c = ok(a, 'poll cq=2 wait_ms=3000')
    got[c.get('opcode')] = c
check('UD recv names the source QP', got.get('recv', {}).get('src_qp') == u1['qpn'], got)
check('UD recv counts the GRH', got.get('recv', {}).get('byte_len') == '104', got)

# An SRQ armed at 2 under a UD QP: a receive posted to it is taken by
# that QP; with 1 of 2 left the limit event names the SRQ.
err(a, 'srq pd=9', 'ENOENT')
err(a, 'qp pd=1 type=ud scq=2 rcq=2 srq=7', 'ENOENT')
srq = ok(a, 'srq pd=1 max_wr=8 limit=2')['srq']
u3 = ok(a, f'qp pd=1 type=ud scq=2 rcq=2 srq={srq}')
ok(a, f'modify qp={u3["qp"]} state=init qkey=0x42')
ok(a, f'modify qp={u3["qp"]} state=rtr')
ok(a, f'modify qp={u3["qp"]} state=rts sq_psn=0')
err(a, f'recv qp={u3["qp"]} srq={srq} mr=2 off=0 len=64', 'EINVAL')
ok(a, f'recv srq={srq} mr=2 off=1024 len=1024 id=21')
ok(a, f'recv srq={srq} mr=2 off=2048 len=1024 id=22')
ok(a, f'send qp={u1["qp"]} op=send mr=1 off=0 len=32 ah={ah} dqpn={u3["qpn"]} qkey=0x42 id=23')
got = {}
for _ in range(2):
    c = ok(a, 'poll cq=2 wait_ms=3000')
    got[c.get('opcode')] = c
check('the SRQ\'s first receive, taken by its QP', got.get('recv', {}).get('id') == '21' and
      got.get('recv', {}).get('qpn') == u3['qpn'], got)
evs = [kv(a.do('event wait_ms=2000')) for _ in range(3)]
check('the SRQ limit event names the SRQ',
      {'event': 'SRQ_limit_reached', 'srq': srq} in evs, evs)
check('bye', a.do('bye') == 'ok')
a.close()

b = Agent()
ok(b, 'hello proto=1')
check('a new connection starts at pd 1', ok(b, 'pd').get('pd') == '1')
err(b, 'query qp=1', 'ENOENT')
# The first connection's listener went with it: its port is free again.
check('a new connection listens on the port again',
      ok(b, 'cm_listen port=7600').get('listen') == '1')
b.close()

for f in fails:
    print('FAIL:', f)
print(f'agent_cli: {count - len(fails)} passed, {len(fails)} failed')
sys.exit(1 if fails else 0)
