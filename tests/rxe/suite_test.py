#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of suite.py parity, the verdict make pyverbs (and make check) gives
rdma-core's suite on rocemu: a run where every test the reference passes
passes and nothing fails is ok; each way to fall short (an error, a
failure, a hang, a test not run, a reference pass that is only a skip on
rocemu, a test missing from one side) exits 1 and names the test.
usage: suite_test.py WORK_DIR   (make check runs it)
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

REF = [('tests.test_a.T.test_1', 'pass', 'ok'),
       ('tests.test_a.T.test_2', 'skip', "skipped 'no'"),
       ('tests.test_b.T.test_3', 'error', 'Errno 95'),
       ('tests.test_b.T.test_4', 'pass', 'ok')]


def write(path, rows):
    with open(path, 'w') as f:
        for r in rows:
            f.write('\t'.join(r) + '\n')


def parity(work, name, rows):
    ref, roc = os.path.join(work, 'ref.tsv'), os.path.join(work, name + '.tsv')
    write(ref, REF)
    write(roc, rows)
    p = subprocess.run([sys.executable, os.path.join(HERE, 'suite.py'),
                        'parity', '--reference', ref, roc],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def with_result(test, result, detail='x'):
    return [(t, result, detail) if t == test else (t, 'pass', 'ok')
            for t, _, _ in REF]


CASES = [
    # name, rocemu's rows, exit status wanted, text the output must hold
    ('all pass', [(t, 'pass', 'ok') for t, _, _ in REF], 0,
     'suite parity: ok (4 pass'),
    ('rxe skip stays skip', with_result('tests.test_a.T.test_2', 'skip'), 0,
     'suite parity: ok (3 pass'),
    ('an error', with_result('tests.test_a.T.test_2', 'error', 'boom'), 1,
     'not clean: error test_a.T.test_2: boom'),
    ('a failure', with_result('tests.test_b.T.test_3', 'fail'), 1,
     'not clean: fail test_b.T.test_3'),
    ('a hang', with_result('tests.test_a.T.test_2', 'timeout'), 1,
     'not clean: timeout'),
    ('not run', with_result('tests.test_a.T.test_2', 'notrun'), 1,
     'not clean: notrun'),
    ('rxe pass, rocemu skip', with_result('tests.test_b.T.test_4', 'skip'), 1,
     '1 that rxe passes do not pass'),
    ('a test missing', [(t, 'pass', 'ok') for t, _, _ in REF[:3]], 1,
     'tests on one side only'),
]


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    bad = 0
    for name, rows, want, text in CASES:
        rc, out = parity(work, name.replace(' ', '_'), rows)
        if rc != want or text not in out:
            bad += 1
            print(f'FAIL: {name}: exit {rc} (want {want}), output:\n{out}')
    print(f'suite_test: {len(CASES) - bad} passed, {bad} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
