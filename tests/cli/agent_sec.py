#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rocemu-agent's guards, as a client sees them (conformance/PROTOCOL.md,
"Access"). One check per run:
  probe HOST PORT   connect and say hello: prints 'ok' or 'refused'
                    (exit 0 either way; 1 for anything else)
  idle PORT         the agent runs with a short idle timeout: a client that
                    says nothing is told so and dropped, and a second
                    client, waiting behind it, is served
  token PORT TOKEN  the agent wants TOKEN: a missing or wrong token is
                    refused and the connection closed; the right one works
Every socket has a generous timeout: a guard that does not work shows as a
failure, never as a hang.
"""
import socket
import sys

GUARD_S = 30  # no answer in this long: the agent is stuck
fails = []
count = 0


def check(what, cond, got=''):
    global count
    count += 1
    if not cond:
        fails.append(f'{what}: {got!r}')


class Conn:
    def __init__(self, host, port):
        self.s = socket.create_connection((host, port), timeout=GUARD_S)
        self.f = self.s.makefile('rwb')

    def send(self, raw):
        self.f.write(raw)
        self.f.flush()

    def line(self):
        try:
            return self.f.readline().decode(errors='replace')
        except (socket.timeout, ConnectionResetError) as e:
            return f'<{type(e).__name__}>'

    def do(self, text):
        self.send(text.encode() + b'\n')
        return self.line().rstrip('\n')

    def closed(self):
        """True when the agent has closed its end (EOF, or a reset)."""
        return self.line() in ('', '<ConnectionResetError>')

    def close(self):
        self.s.close()


def probe(host, port):
    try:
        c = Conn(host, port)
    except ConnectionRefusedError:
        print('refused')
        return 0
    ans = c.do('hello proto=1')
    c.close()
    print('ok' if ans.startswith('ok ') else f'unexpected answer {ans!r}')
    return 0 if ans.startswith('ok ') else 1


def idle(port):
    first = Conn('127.0.0.1', port)
    check('the first client is served', first.do('hello proto=1').startswith('ok '))
    # It now says nothing; the second one queues behind it.
    second = Conn('127.0.0.1', port)
    ans = second.do('hello proto=1')
    check('the second client is served once the first idles out',
          ans.startswith('ok '), ans)
    check('the second client can work', second.do('pd') == 'ok pd=1')
    second.close()
    ans = first.line()
    check('the idle client is told why', ans.startswith('err ETIMEDOUT '), ans)
    check('and its connection closed', first.closed())
    first.close()


def token(port, tok):
    c = Conn('127.0.0.1', port)
    ans = c.do('hello proto=1')
    check('no token: refused', ans.startswith('err EACCES '), ans)
    check('no token: closed', c.closed())
    c.close()
    c = Conn('127.0.0.1', port)
    ans = c.do('auth token=' + tok + 'x')
    check('a wrong token: refused', ans.startswith('err EACCES '), ans)
    check('the refusal does not repeat the token', tok not in ans, ans)
    check('a wrong token: closed', c.closed())
    c.close()
    c = Conn('127.0.0.1', port)
    ans = c.do('auth token=' + tok[:-1])
    check('a prefix of the token: refused', ans.startswith('err EACCES '), ans)
    c.close()
    c = Conn('127.0.0.1', port)
    ans = c.do('auth')
    check('auth without a token: refused', ans.startswith('err EACCES '), ans)
    c.close()
    c = Conn('127.0.0.1', port)
    check('the token: ok', c.do('auth token=' + tok) == 'ok')
    ans = c.do('hello proto=1')
    check('then hello', ans.startswith('ok proto=1 '), ans)
    check('then work', c.do('pd') == 'ok pd=1')
    check('bye', c.do('bye') == 'ok')
    c.close()


def main():
    what = sys.argv[1]
    if what == 'probe':
        return probe(sys.argv[2], int(sys.argv[3]))
    if what == 'idle':
        idle(int(sys.argv[2]))
    elif what == 'token':
        token(int(sys.argv[2]), sys.argv[3])
    else:
        print(f'agent_sec: unknown check {what}')
        return 2
    for f in fails:
        print('FAIL:', f)
    print(f'agent_sec {what}: {count - len(fails)} passed, {len(fails)} failed')
    return 1 if fails else 0


sys.exit(main())
