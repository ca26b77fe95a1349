#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The rxe lab's closing report (make rxe-check ends with it).

Reads what each part of tests/rxe/check.sh left in its report directory
and prints one table: per program and direction, the live interop result
on each GID; per error case and direction, pass or fail against rxe<->rxe;
per golden scenario, the packets compared and the differences listed and
unlisted; then rdma-core's suite comparison line; rxe <-> rxe through
rocemu impair; then one verdict line.

usage: report.py [--parts NAME,...] REPORT_DIR SECONDS
  REPORT_DIR holds interop.tsv (interop.sh's rows: status, program,
  direction, GID index, seconds, reason), errors.txt, golden.txt,
  suite.txt, conform.txt, cm.txt, gid.txt and impair.txt (those scripts'
  output) and NAME.rc
  (each part's exit status). A part whose files are missing is reported
  as not run. --parts: only those parts were asked for (check.sh's
  RXE_PARTS); the others are left out of the verdict.
Exit 0 when every part passed (its exit status 0 and its rows all pass);
1 otherwise. It never reruns or re-judges a part: a part's own exit status
stands, the table only gathers what the parts found.
"""
import os
import re
import sys

PARTS = ('interop', 'errors', 'golden', 'suite', 'conform', 'cm', 'gid',
         'impair')
ROW = '  {:<8} {:<26} {:<14} {}'


def read(path):
    """The lines of PATH, or None when it is not there."""
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read().splitlines()
    except OSError:
        return None


def status(rdir, part):
    """A part's exit status, or None when it did not run."""
    lines = read(os.path.join(rdir, part + '.rc'))
    try:
        return int(lines[0]) if lines else None
    except ValueError:
        return None


def interop_rows(rdir):
    """(rows, passed, failed) from interop.tsv: one row per program and
    direction, the GIDs side by side."""
    lines = read(os.path.join(rdir, 'interop.tsv'))
    if lines is None:
        return [], 0, 0
    cells, order, npass, nfail = {}, [], 0, 0
    for ln in lines:
        f = ln.split('\t')
        if len(f) < 5:
            continue
        key = (f[1], f[2])
        if key not in cells:
            cells[key] = {}
            order.append(key)
        cells[key][f[3]] = f[0]
        npass += f[0] == 'PASS'
        nfail += f[0] != 'PASS'
    rows = []
    for key in order:
        c = cells[key]
        gids = ', '.join(f'GID {g} {c[g]}' for g in sorted(c, reverse=True))
        rows.append(('interop', key[0], key[1], gids))
    return rows, npass, nfail


def pass_fail_rows(part, lines):
    """(rows, passed, failed) from a part's lines '  PASS|FAIL NAME DIR ...'
    (errors.sh's and cm.sh's)."""
    rows, npass, nfail = [], 0, 0
    for ln in lines:
        m = re.match(r'  (PASS|FAIL) +(\S+) +(\S+)', ln)
        if m:
            rows.append((part, m.group(2), m.group(3), m.group(1)))
            npass += m.group(1) == 'PASS'
            nfail += m.group(1) == 'FAIL'
    return rows, npass, nfail


def errors_rows(rdir):
    """(rows, passed, failed) from errors.sh's lines '  PASS case dir ...'."""
    return pass_fail_rows('errors', read(os.path.join(rdir, 'errors.txt')) or [])


def gid_rows(rdir):
    """(rows, passed, failed) from gid.sh's lines '  PASS prog dir: ...'."""
    return pass_fail_rows('gid', read(os.path.join(rdir, 'gid.txt')) or [])


def golden_rows(rdir):
    """(rows, scenarios, unlisted, failed) from golden_lab.sh's lines
    '  NAME N packets compared, L listed, U unlisted' and '  FAIL ...'."""
    rows, unlisted, failed = [], 0, 0
    pat = re.compile(r'  (\S+) +(\d+) packets compared, +(\d+) listed, '
                     r'(\d+) unlisted(.*)')
    for ln in read(os.path.join(rdir, 'golden.txt')) or []:
        m = pat.match(ln)
        if m:
            u = int(m.group(4))
            unlisted += u
            rows.append(('golden', m.group(1), 'rxe, rocemu',
                         f'{m.group(2)} packets compared, {m.group(3)} '
                         f'listed, {u} unlisted{m.group(5)}'))
        elif ln.startswith('  FAIL '):
            failed += 1
            name = ln[len('  FAIL '):].split(':')[0]
            rows.append(('golden', name, 'rxe, rxe', 'FAIL (programs on rxe)'))
    return rows, len([r for r in rows if 'compared' in r[3]]), unlisted, failed


def cm_rows(rdir):
    """(rows, passed, failed, golden) from cm.sh's lines '  PASS|FAIL
    program dir ...' and its closing line's golden CM verdict (None when
    it has none, True when nothing was unlisted)."""
    lines = read(os.path.join(rdir, 'cm.txt')) or []
    rows, npass, nfail = pass_fail_rows('cm', lines)
    golden = None
    for ln in lines:
        m = re.match(r'rxe lab: cm .*golden CM (\d+) compared with (no '
                     r'unlisted)?', ln)
        if m:
            golden = int(m.group(1)) > 0 and m.group(2) is not None
            rows.append(('cm', 'golden CM MADs (rping)', 'rxe, rocemu',
                         f'{m.group(1)} compared, ' +
                         ('no unlisted difference' if golden
                          else 'UNLISTED differences')))
    return rows, npass, nfail, golden


def suite_line(rdir):
    """The suite comparison in one line, or None when there is none."""
    lines = read(os.path.join(rdir, 'suite.txt')) or []
    total = next((ln.split()[1:] for ln in lines
                  if ln.startswith('  total ')), None)
    parity = next((ln for ln in lines if ln.startswith('rocemu passes ')),
                  None)
    if not total or not parity or len(total) < 2:
        return None
    ref = next((ln for ln in lines if ' the reference ' in ln), '')
    rxe_src = 'rxe recorded, not measured' if 'RECORDED' in ''.join(lines) \
        else 'rxe measured'
    agree = '; rxe differs from its reference' if ' differs from ' in ref \
        else ''
    return (f'rxe {total[0]}, rocemu {total[1]} (pass/skip/fail); {parity}'
            f' ({rxe_src}{agree})')


def impair_checks(rdir):
    """(passed, failed names) from impair.sh's lines '  ok   WHAT' and
    '  FAIL WHAT', or None when it has none."""
    lines = read(os.path.join(rdir, 'impair.txt')) or []
    ok = [ln for ln in lines if ln.startswith('  ok   ')]
    bad = [ln[len('  FAIL '):] for ln in lines if ln.startswith('  FAIL ')]
    return (len(ok), bad) if ok or bad else None


CONFORM_RE = re.compile(r'^conform: (\d+) scenarios on (\S+): (\d+) passed, '
                        r'(\d+) failed, (\d+) failed as known \S+ deviations, '
                        r'(\d+) not applicable')


def conform_counts(rdir):
    """(scenarios, impl, passed, unlisted failures, known deviations, n/a)
    from rocemu conform's summary line, or None when there is none."""
    for ln in read(os.path.join(rdir, 'conform.txt')) or []:
        m = CONFORM_RE.match(ln)
        if m:
            n, impl, p, f, k, na = m.groups()
            return int(n), impl, int(p), int(f), int(k), int(na)
    return None


def main():
    args = sys.argv[1:]
    asked = PARTS
    if len(args) == 4 and args[0] == '--parts':
        asked = tuple(p for p in PARTS if p in args[1].split(','))
        args = args[2:]
    if len(args) != 2:
        print(__doc__.split('\n\n')[2], file=sys.stderr)
        return 2
    rdir, secs = args[0], int(args[1])
    kernel = (read(os.path.join(rdir, 'kernel.txt')) or ['?'])[0]
    irows, ipass, ifail = interop_rows(rdir)
    erows, epass, efail = errors_rows(rdir)
    grows, gscen, gunl, gfail = golden_rows(rdir)
    sline = suite_line(rdir)
    crows, cpass, cfail, cgold = cm_rows(rdir)
    drows, dpass, dfail = gid_rows(rdir)

    print(f'rxe lab report: Linux {kernel} rxe against rocemu')
    print(ROW.format('part', 'program, case or scenario', 'server->client',
                     'result'))
    for r in irows + erows + grows:
        print(ROW.format(*r))
    print(ROW.format('suite', "rdma-core's tests", 'rxe, rocemu',
                     sline or 'no comparison'))
    cc = conform_counts(rdir)
    if cc:
        print(ROW.format('conform', f'{cc[0]} scenarios', 'rocemu->' + cc[1],
                         f'{cc[2]} pass, {cc[4]} known {cc[1]} deviations, '
                         f'{cc[3]} unlisted failures, {cc[5]} n/a'))
    for r in drows:
        print(ROW.format(*r))
    ic = impair_checks(rdir)
    if ic:
        res = (f'{ic[0]} of {ic[0] + len(ic[1])} checks pass: loss, '
               'duplication, reordering recovered, captures clean'
               if not ic[1] else
               f'{ic[0]} of {ic[0] + len(ic[1])} checks pass; FAIL '
               + '; '.join(ic[1]))
        print(ROW.format('impair', 'ib_write_bw, ib_read_bw', 'rxe, rxe',
                         res))

    rcs = {p: status(rdir, p) for p in PARTS}
    verdict = {
        'interop': (f'interop {ipass} of {ipass + ifail} runs pass',
                    rcs['interop'] == 0 and ifail == 0 and ipass > 0),
        'errors': (f'errors {epass} of {epass + efail} pass',
                   rcs['errors'] == 0 and efail == 0 and epass > 0),
        'golden': (f'golden {gscen} scenarios compared, {gunl} unlisted'
                   + (f', {gfail} not taken' if gfail else ''),
                   rcs['golden'] == 0 and gunl == 0 and gfail == 0
                   and gscen > 0),
        'suite': ('suite compared' if sline else 'suite not compared',
                  rcs['suite'] == 0 and sline is not None),
        'conform': (f'conform {cc[2]} of {cc[0]} pass, {cc[4]} known '
                    f'deviations, {cc[3]} unlisted' if cc
                    else 'conform reached no summary',
                    rcs['conform'] == 0 and cc is not None and cc[3] == 0
                    and cc[2] > 0),
        'cm': (f'cm {cpass} of {cpass + cfail} runs pass, golden CM ' +
               ('clean' if cgold else 'not clean'),
               rcs['cm'] == 0 and cfail == 0 and cpass > 0 and bool(cgold)),
        'gid': (f'gid {dpass} of {dpass + dfail} runs pass',
                rcs['gid'] == 0 and dfail == 0 and dpass > 0),
        'impair': (f'impair {ic[0]} of {ic[0] + len(ic[1])} checks pass'
                   if ic else 'impair reached no checks',
                   rcs['impair'] == 0 and ic is not None and not ic[1]
                   and ic[0] > 0),
    }
    for p in PARTS:
        if rcs[p] is None:
            verdict[p] = (f'{p} not run', False)
    bad = [p for p in asked if not verdict[p][1]]
    what = '; '.join(verdict[p][0] for p in asked)
    word = 'PASS' if not bad else 'FAILED (' + ', '.join(bad) + ')'
    print(f'rxe lab: {word}: {what}; {secs // 60} min {secs % 60} s')
    return 0 if not bad else 1


if __name__ == '__main__':
    sys.exit(main())
