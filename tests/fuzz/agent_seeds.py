#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_agent_cmd: every request line tests/cli/agent_cli.py sends
(the quoted strings that start with a command word), one file each, after
'hello proto=1' and behind the settings byte (0: no token asked for), and
one with the token given first.
usage: agent_seeds.py CORPUS_DIR tests/cli/agent_cli.py"""
import os
import re
import sys

out, src = sys.argv[1], sys.argv[2]
words = ('pd', 'mr', 'cq', 'qp', 'modify', 'query', 'ah', 'mw', 'bind', 'recv',
         'send', 'poll', 'event', 'read', 'write', 'destroy', 'bye', 'hello')
os.makedirs(out, exist_ok=True)
lines = set()
for q in re.findall(r"f?'([^'\n]*)'", open(src).read()):
    if q.split(' ', 1)[0] in words:
        lines.add(re.sub(r'\{[^}]*\}', '1', q))
for i, line in enumerate(sorted(lines)):
    with open(os.path.join(out, f'seed-{i:03d}'), 'wb') as f:
        f.write(b'\x00hello proto=1\n' + line.encode() + b'\n')
with open(os.path.join(out, 'seed-token'), 'wb') as f:
    f.write(b'\x01auth token=fuzz-token\nhello proto=1\npd\n')
print(f'agent seeds: {len(lines) + 1} in {out}')
