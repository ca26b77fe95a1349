#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of report.py, the rxe lab's closing table: a lab whose parts all
passed is reported PASS; each way a part can fail (a failed row under an
exit status 0, an unlisted difference, a nonzero exit status, a part that
did not run) makes the verdict FAILED and names the part.
usage: report_test.py WORK_DIR   (make check runs it)
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Each part's output as its script prints it (the lines report.py reads).
GOOD = {
    'kernel.txt': '6.1.0-56-amd64\n',
    'interop.tsv': 'PASS\tib_read_bw\trocemu->rxe\t1\t4\t\n'
                   'PASS\tib_read_bw\trocemu->rxe\t0\t5\t\n'
                   'PASS\tib_read_bw\trxe->rocemu\t1\t4\t\n',
    'interop.rc': '0\n',
    'errors.txt': '  ref  write_bad_rkey         rxe->rxe      C:RDMA_WRITE_ONLY\n'
                  '  PASS write_bad_rkey         rxe->rocemu   C:RDMA_WRITE_ONLY\n'
                  '  PASS write_bad_rkey         rocemu->rxe   C:RDMA_WRITE_ONLY\n',
    'errors.rc': '0\n',
    'golden.txt': '  rc_send_64              16 packets compared,   4 listed, 0 unlisted\n'
                  '  uc_send                 12 packets compared,   0 listed, 0 unlisted\n',
    'golden.rc': '0\n',
    'suite.txt': '  total                       86/186/1     44/212/17\n'
                 'rocemu passes 44 of the 86 tests rxe passes\n',
    'suite.rc': '0\n',
    'conform.txt': 'PASS  rc_send_only (1 ms): x\n'
                   'conform: 77 scenarios on rxe: 67 passed, 0 failed, 10 failed '
                   'as known rxe deviations, 0 not applicable\n',
    'conform.rc': '0\n',
    'cm.txt': '  PASS rping rxe->rxe (- s)\n'
              '  PASS rping rocemu->rxe (2.4 s)\n'
              '  PASS udaddy rxe->rocemu (1.3 s)\n'
              'rxe lab: cm 3 passed, 0 failed; golden CM 2 compared with no '
              'unlisted difference (120 s; logs in x)\n',
    'cm.rc': '0\n',
    'gid.txt': '  PASS rc_pingpong rxe->rxe: 16 packets, GID 0\n'
               '  PASS ud_grh rocemu->rxe: 2 packets, GID 0, listed: '
               'FLOW-LABEL-RXE HOP-LIMIT-ROUTE\n'
               '      server (rocemu) flow label 0x6789a (AH 0x6789a)\n'
               'rxe lab: gid 2 passed, 0 failed (60 s; logs in x)\n',
    'gid.rc': '0\n',
    'impair.txt': '  ok   ib_write_bw on a exit 0\n'
                  '  | rule 1 matched 541 acted 2: drop opcode=RC_ACK\n'
                  '  ok   rocemu check out.pcap exit 0\n'
                  'rxe lab: impair 2 checks pass: loss, duplication and '
                  'reordering recovered by rxe <-> rxe, captures clean\n',
    'impair.rc': '0\n',
}


def run(work, name, changes, opts=()):
    """report.py on GOOD with CHANGES (a file's new text, or None to remove
    it); returns (exit status, output)."""
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    files = dict(GOOD, **changes)
    for f, text in files.items():
        if text is not None:
            with open(os.path.join(d, f), 'w') as fh:
                fh.write(text)
    p = subprocess.run([sys.executable, os.path.join(HERE, 'report.py'),
                        *opts, d, '75'], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    work = sys.argv[1]
    failures = []

    def expect(name, changes, rc, last, rows=(), opts=()):
        got_rc, out = run(work, name, changes, opts)
        lines = out.splitlines()
        ok = got_rc == rc and lines and lines[-1].startswith(last)
        for r in rows:
            ok = ok and any(r in ln for ln in lines)
        if not ok:
            failures.append(f'{name}: exit {got_rc} (wanted {rc}), output:\n{out}')

    expect('all_pass', {}, 0, 'rxe lab: PASS: interop 3 of 3 runs pass; '
           'errors 2 of 2 pass; golden 2 scenarios compared, 0 unlisted',
           ['GID 1 PASS, GID 0 PASS', 'rocemu passes 44 of the 86',
            '67 pass, 10 known rxe deviations, 0 unlisted failures',
            'conform 67 of 77 pass', '1 min 15 s'])
    expect('interop_row_failed',
           {'interop.tsv': GOOD['interop.tsv'].replace(
               'PASS\tib_read_bw\trocemu->rxe\t0', 'FAIL\tib_read_bw\trocemu->rxe\t0')},
           1, 'rxe lab: FAILED (interop): interop 2 of 3', ['GID 0 FAIL'])
    expect('golden_unlisted',
           {'golden.txt': GOOD['golden.txt'].replace('0 listed, 0 unlisted',
                                                     '0 listed, 2 unlisted')},
           1, 'rxe lab: FAILED (golden)', ['2 unlisted'])
    expect('golden_not_taken',
           {'golden.txt': GOOD['golden.txt'] + '  FAIL srq: ok / exit 1 (programs on rxe)\n'},
           1, 'rxe lab: FAILED (golden)', ['1 not taken'])
    expect('errors_exit', {'errors.rc': '1\n'}, 1, 'rxe lab: FAILED (errors)')
    expect('errors_row_failed',
           {'errors.txt': GOOD['errors.txt'].replace('  PASS write_bad_rkey         rxe',
                                                     '  FAIL write_bad_rkey         rxe')},
           1, 'rxe lab: FAILED (errors): interop 3 of 3 runs pass; errors 1 of 2')
    expect('suite_not_run', {'suite.txt': None, 'suite.rc': None}, 1,
           'rxe lab: FAILED (suite)', ['suite not run'])
    expect('suite_no_comparison', {'suite.txt': 'suite: cannot compare: x\n'},
           1, 'rxe lab: FAILED (suite)', ['no comparison'])
    expect('conform_unlisted',
           {'conform.txt': GOOD['conform.txt'].replace('0 failed, 10', '2 failed, 8')},
           1, 'rxe lab: FAILED (conform)', ['2 unlisted failures'])
    expect('conform_no_summary', {'conform.txt': 'PASS  x\n'}, 1,
           'rxe lab: FAILED (conform)', ['conform reached no summary'])
    expect('nothing_ran', {f: None for f in GOOD}, 1,
           'rxe lab: FAILED (interop, errors, golden, suite, conform, cm, gid, '
           'impair)')
    expect('cm_row_failed',
           {'cm.txt': GOOD['cm.txt'].replace('  PASS rping rocemu',
                                             '  FAIL rping rocemu')},
           1, 'rxe lab: FAILED (cm)', ['cm 2 of 3 runs pass'])
    expect('cm_golden_unlisted',
           {'cm.txt': GOOD['cm.txt'].replace(
               'with no unlisted difference', 'with UNLISTED differences')},
           1, 'rxe lab: FAILED (cm)', ['golden CM not clean'])
    expect('cm_part_only', {f: None for f in GOOD if not f.startswith('cm.')},
           0, 'rxe lab: PASS: cm 3 of 3 runs pass, golden CM clean',
           opts=('--parts', 'cm'))
    expect('cm_part_only_failed', {f: None for f in GOOD}, 1,
           'rxe lab: FAILED (cm): cm not run', opts=('--parts', 'cm'))

    expect('gid_row_failed',
           {'gid.txt': GOOD['gid.txt'].replace('  PASS ud_grh', '  FAIL ud_grh')},
           1, 'rxe lab: FAILED (gid)', ['gid 1 of 2 runs pass'])
    expect('gid_exit', {'gid.rc': '1\n'}, 1, 'rxe lab: FAILED (gid)')
    expect('gid_part_only', {f: None for f in GOOD if not f.startswith('gid.')},
           0, 'rxe lab: PASS: gid 2 of 2 runs pass', ['ud_grh'],
           opts=('--parts', 'gid'))

    expect('impair_check_failed',
           {'impair.txt': GOOD['impair.txt'].replace(
               '  ok   rocemu check', '  FAIL rocemu check'),
            'impair.rc': '1\n'},
           1, 'rxe lab: FAILED (impair)',
           ['1 of 2 checks pass; FAIL rocemu check out.pcap exit 0'])
    expect('impair_exit', {'impair.rc': '2\n'}, 1, 'rxe lab: FAILED (impair)')
    expect('impair_part_only',
           {f: None for f in GOOD if not f.startswith('impair.')},
           0, 'rxe lab: PASS: impair 2 of 2 checks pass',
           ['ib_write_bw, ib_read_bw', '2 of 2 checks pass: loss'],
           opts=('--parts', 'impair'))
    expect('impair_no_checks', {'impair.txt': 'rxe lab: impair FAILED: x\n'},
           1, 'rxe lab: FAILED (impair): interop', ['impair reached no checks'])

    for f in failures:
        print('report_test: FAIL', f)
    print(f'report_test: {22 - len(failures)} of 22 cases pass')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
