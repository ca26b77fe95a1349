#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh's further check for verbs_state (usage: BUILD_DIR WORK_DIR): the
# dump it asked for with SIGUSR2, and the one at exit, show what the
# program says it left: its QP a in RTS with the SEND and the WRITE it
# posted still outstanding (wr_ids), b's receive queue empty, and the
# completions it left unpolled in each CQ; the trace holds the same lines
# as state events.
set -u
work=${2:?usage: verbs_state_check.sh BUILD_DIR WORK_DIR}
python3 - "$work/out" "$work/err" "$work/verbs_state.trace" <<'PY'
import re, sys
out, err, trace = (open(f).read() for f in sys.argv[1:4])
said = dict(re.findall(r'^(qpn a|qpn b|send wr_id|write wr_id|left in a\'s cq|left in b\'s cq) (\S+)$', out, re.M))
fails = []
def need(cond, what):
    if not cond:
        fails.append(what)
need(len(said) == 6, "the program's own lines: %r" % said)
# the dumps: the lines after each header, "rocemu: state: " taken off
blocks = re.split(r'^rocemu: state: dump (.*) \(pid \d+\)$', err, flags=re.M)
dumps = {}
for when, body in zip(blocks[1::2], blocks[2::2]):
    dumps.setdefault(when, [l[len('rocemu: state: '):] for l in body.splitlines()
                            if l.startswith('rocemu: state: ')])
need('on signal SIGUSR2' in dumps, "a dump on SIGUSR2: %r" % list(dumps))
need('at exit' in dumps, "a dump at exit: %r" % list(dumps))
qa, qb = int(said.get('qpn a', '0'), 16), int(said.get('qpn b', '0'), 16)
for when, lines in dumps.items():
    text = '\n'.join(lines)
    head = {}
    for q, name in ((qa, 'a'), (qb, 'b')):
        m = re.search(r'^qp 0x%06x RC (\S+): dest qp 0x%06x, .* send cq #(\d+), recv cq #(\d+)'
                      % (q, qb if name == 'a' else qa), text, re.M)
        need(m, "%s: qp %s (0x%06x) line, connected to its peer" % (when, name, q))
        if m:
            head[name] = m.groups()
    if 'a' not in head or 'b' not in head:
        continue
    need(head['a'][0] == 'RTS', "%s: qp a in RTS, not %s" % (when, head['a'][0]))
    need(head['b'][0] == 'RTS', "%s: qp b in RTS, not %s" % (when, head['b'][0]))
    need(re.search(r'^qp 0x%06x sq: 2 outstanding of ' % qa, text, re.M),
         "%s: 2 send WQEs outstanding at a" % when)
    need(re.search(r'^qp 0x%06x sq slot \d+: SEND wr_id %s len 64 ' % (qa, said['send wr_id']), text, re.M),
         "%s: a's SEND wr_id %s listed" % (when, said['send wr_id']))
    need(re.search(r'^qp 0x%06x sq slot \d+: RDMA_WRITE wr_id %s len 64 ' % (qa, said['write wr_id']), text, re.M),
         "%s: a's WRITE wr_id %s listed" % (when, said['write wr_id']))
    need(re.search(r'^qp 0x%06x rq: 0 posted of ' % qb, text, re.M),
         "%s: no receive posted at b" % when)
    for name in 'ab':
        n = said["left in %s's cq" % name]
        need(re.search(r'^cq #%s: %s completions waiting of ' % (head[name][1], n), text, re.M),
             "%s: %s's CQ (#%s) holds %s completions" % (when, name, head[name][1], n))
states = [l for l in trace.splitlines() if l.startswith('state ')]
need(any(('text=qp 0x%06x RC RTS' % qa) in l for l in states),
     "the trace's state events name qp a in RTS (%d state events)" % len(states))
for f in fails:
    print("FAIL: verbs_state: " + f)
sys.exit(1 if fails else 0)
PY
