#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rdma-core's own test suite (Debian's python3-pyverbs) on one verbs device,
per test, and two such runs compared test by test.

  suite.py run --tests DIR --dev DEV --out TSV [--gid N] [--idle S]
               [--budget S] [--skip-test ID --skip-reason WHY]
      Runs DIR/run_tests.py --dev DEV [--gid N] -v (DIR: rdma-core's tests/, as
      /usr/share/doc/rdma-core/tests holds it, gunzipped) with the Python
      that runs this script (pyverbs is built for Debian's /usr/bin/python3).
      A test that prints nothing for --idle seconds (default 60) is a hang:
      the run is killed, that test is recorded as "timeout", and the tests
      not yet reported run again in a new process. After --budget seconds
      (default 600) what has not run is recorded as "notrun". Writes one
      line per test: id, result (pass skip error fail timeout notrun),
      detail (unittest's word, the skip reason, or the error's last line).
      Exit 0 when the run could be made and parsed (whatever the results),
      1 when not (no tests listed, run_tests.py missing). Each
      --skip-test is recorded as skipped with WHY and not run.

  suite.py compare [--rxe-label L] [--reference REF_TSV] RXE_TSV ROCEMU_TSV
      Prints one row per test module (rxe pass/skip/fail, rocemu
      pass/skip/fail; "fail" counts error, fail, timeout and notrun), the
      line "rocemu passes N of the M tests rxe passes", and each test rxe
      passes and rocemu does not with rocemu's result and first error line.
      With --reference, the rxe run is also checked against a recorded one
      and every test whose result differs is listed.
      Exit 0 when both files could be read and name the same tests; parity
      is reported, not enforced. Exit 1 otherwise (a missing or empty file,
      a test on one side only, or (with --reference) a difference).

  suite.py parity --reference REF_TSV [--label L] ROCEMU_TSV
      The comparison above with the recorded rxe run REF_TSV as rxe's
      side, then the verdict make check requires: exit 0 only when no test
      on rocemu failed, errored, hung or did not run, and every test that
      passes in REF_TSV passes on rocemu; 1 otherwise, each reason listed.

  suite.py files --tests DIR
      Prints the files the Python running this script needs to run the
      suite (the interpreter, each module the suite and this script import,
      with its compiled .pyc where one exists), one path per line: what the
      rxe lab's guest gets (tests/rxe/suite.sh). Libraries the interpreter
      and extension modules link are left to ldd.

Only the standard library: this runs in the rxe lab's guest too.
"""
import argparse
import os
import re
import select
import signal
import subprocess
import sys
import time

# unittest -v: "name (id) ... RESULT"; a docstring's first line may sit
# between the name and " ... ", and a test's own output before RESULT.
START = re.compile(r'^(\w+) \((tests\.[\w.]+)\)')
RESULT = re.compile(r"(?:^|\.\.\. )(ok|ERROR|FAIL|skipped .*|expected failure"
                    r"|unexpected success)$")
KIND = {'ok': 'pass', 'ERROR': 'error', 'FAIL': 'fail',
        'expected failure': 'pass', 'unexpected success': 'fail'}
FAILING = ('error', 'fail', 'timeout', 'notrun')


def list_tests(py, tests_dir, dev):
    """The test ids run_tests.py --list-tests names, in its order."""
    p = subprocess.run([py, os.path.join(tests_dir, 'run_tests.py'),
                        '--dev', dev, '--list-tests'], cwd=os.path.dirname(
                            os.path.abspath(tests_dir)),
                       capture_output=True, text=True, timeout=300)
    return [t for t in p.stdout.split() if t.startswith('tests.')]


# run_tests.py's own steps (its args_parser, its package loader, then
# unittest.main), with a result class that prints each error's exception
# line as it happens: a run killed at a hang has not printed unittest's
# report yet, yet the errors before the hang keep their cause.
DRIVER = r"""
import os, sys, traceback, unittest
from importlib.machinery import SourceFileLoader
sys.path.insert(0, DIR)
from args_parser import parser
tests = SourceFileLoader('tests', os.path.join(DIR, '__init__.py')).load_module()
parser.parse_args()
def cause(err):
    lines = traceback.format_exception_only(err[0], err[1])
    return (lines[-1] if lines else '?').strip().split('\n')[0]
class Result(unittest.TextTestResult):
    def addError(self, test, err):
        super().addError(test, err)
        self.stream.write('\n#suite-detail %s\t%s\n' % (test.id(), cause(err)))
    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.stream.write('\n#suite-detail %s\t%s\n' % (test.id(), cause(err)))
class Runner(unittest.TextTestRunner):
    resultclass = Result
unittest.main(module=tests, testRunner=Runner)
"""
DETAIL = re.compile(r'^#suite-detail (.*)\t(.*)$')
CLASS_FIXTURE = re.compile(r'^(setUpClass|setUpModule) \((tests\.[\w.]+)\)$')


def parse(lines, results, details, ids):
    """Reads the driver's output (unittest -v plus #suite-detail lines) into
    results (id -> kind) and details (id -> unittest's word, the skip reason
    or the exception line); ids are the tests the run was given. A class or
    module that could not be set up gives each of its tests that error.
    Returns the test that started and did not finish, or None."""
    current = None
    for line in lines:
        line = line.rstrip('\n')
        m = DETAIL.match(line)
        if m:
            t, why = m.group(1), m.group(2)
            f = CLASS_FIXTURE.match(t)
            if f:
                for i in ids:
                    if i.startswith(f.group(2) + '.') and i not in results:
                        results[i] = 'error'
                        details[i] = f'{f.group(1)}: {why}'
            else:
                details[t] = why
            continue
        m = START.match(line)
        if m:
            current = m.group(2)
        r = RESULT.search(line)
        if r and current:
            word = r.group(1)
            results[current] = 'skip' if word.startswith('skipped') else KIND[word]
            if current not in details or word.startswith('skipped') or word == 'ok':
                details[current] = word
            current = None
    return current


def run_once(py, tests_dir, dev, ids, idle, deadline, log, extra=()):
    """One run_tests.py process over ids, its output copied to log; killed
    after idle seconds without output or at deadline. extra: more
    arguments for run_tests.py. Returns (its output lines, whether it was
    killed)."""
    cmd = [py, '-u', '-c', f'DIR = {tests_dir!r}\n' + DRIVER, '--dev', dev,
           *extra, '-v'] + ids
    p = subprocess.Popen(cmd, cwd=os.path.dirname(os.path.abspath(tests_dir)),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    buf = b''
    last = time.monotonic()
    killed = False
    while True:
        now = time.monotonic()
        wait = min(idle - (now - last), deadline - now)
        if wait <= 0:
            killed = True
            os.killpg(p.pid, signal.SIGKILL)
            break
        r, _, _ = select.select([p.stdout], [], [], wait)
        if not r:
            continue
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        last = time.monotonic()
        log.write(chunk)
        log.flush()
        buf += chunk
    p.wait()
    text = buf.decode('utf-8', 'replace')
    out = text.split('\n')
    return out, killed


def cmd_run(a):
    py = sys.executable
    a.tests = os.path.abspath(a.tests)
    if not os.path.isfile(os.path.join(a.tests, 'run_tests.py')):
        print(f'suite: no run_tests.py in {a.tests}', file=sys.stderr)
        return 1
    t0 = time.monotonic()
    deadline = t0 + a.budget
    ids = list_tests(py, a.tests, a.dev)
    if not ids:
        print(f'suite: run_tests.py --list-tests named no tests ({a.tests})',
              file=sys.stderr)
        return 1
    results, details = {}, {}
    for t in a.skip_test:
        if t in ids:
            results[t], details[t] = 'skip', f'not run here: {a.skip_reason}'
    hangs = 0
    with open(a.out + '.log', 'wb') as log:
        todo = [t for t in ids if t not in results]
        while todo and time.monotonic() < deadline:
            extra = ['--gid', str(a.gid)] if a.gid is not None else []
            lines, killed = run_once(py, a.tests, a.dev, todo, a.idle,
                                     deadline, log, extra)
            current = parse(lines, results, details, todo)
            if killed and current and current not in results:
                hangs += 1
                results[current] = 'timeout'
                details[current] = f'no output for {a.idle} s: killed'
                log.write(f'\n[suite: {current} killed]\n'.encode())
            before = len(todo)
            todo = [t for t in todo if t not in results]
            if len(todo) == before:
                break  # no progress: what is left did not run
    for t in ids:
        if t not in results:
            results[t] = 'notrun'
            details[t] = 'not run (budget spent or the run stopped)'
    with open(a.out, 'w') as f:
        for t in ids:
            f.write(f'{t}\t{results[t]}\t{details.get(t, "")}\n')
    n = {k: sum(1 for v in results.values() if v == k)
         for k in ('pass', 'skip', 'error', 'fail', 'timeout', 'notrun')}
    print(f'suite: {len(ids)} tests on {a.dev}: ' +
          ', '.join(f'{v} {k}' for k, v in n.items()) +
          f' ({time.monotonic() - t0:.0f} s)')
    return 0


def read_tsv(path):
    rows = {}
    order = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip('\n').split('\t')
            if len(parts) < 2 or not parts[0].startswith('tests.'):
                continue
            rows[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else '')
            order.append(parts[0])
    return order, rows


def cell(rows, ids):
    p = sum(1 for t in ids if rows[t][0] == 'pass')
    s = sum(1 for t in ids if rows[t][0] == 'skip')
    return p, s, len(ids) - p - s


def cmd_compare(a):
    try:
        order, rxe = read_tsv(a.rxe)
        _, roc = read_tsv(a.rocemu)
    except OSError as e:
        print(f'suite: cannot compare: {e}', file=sys.stderr)
        return 1
    if not rxe or not roc:
        print('suite: cannot compare: an empty result file', file=sys.stderr)
        return 1
    only = sorted(set(rxe) ^ set(roc))
    if only:
        print(f'suite: cannot compare: {len(only)} tests on one side only, '
              f'e.g. {only[0]}', file=sys.stderr)
        return 1
    modules = []
    for t in order:
        m = t.split('.')[1]
        if m not in modules:
            modules.append(m)
    print(f"rdma-core's suite: {a.rxe_label} against rocemu's drop-in "
          '(pass/skip/fail; fail = error, fail or hang)')
    print(f'  {"module":<24} {"rxe":>11}   {"rocemu":>11}')
    tot = [0] * 6
    for m in modules:
        ids = [t for t in order if t.split('.')[1] == m]
        x, y = cell(rxe, ids), cell(roc, ids)
        for i, v in enumerate(x + y):
            tot[i] += v
        mark = '' if x == y else '  *'
        print(f'  {m:<24} {"%d/%d/%d" % x:>11}   {"%d/%d/%d" % y:>11}{mark}')
    print(f'  {"total":<24} {"%d/%d/%d" % tuple(tot[:3]):>11}   '
          f'{"%d/%d/%d" % tuple(tot[3:]):>11}')
    passed = [t for t in order if rxe[t][0] == 'pass']
    missing = [t for t in passed if roc[t][0] != 'pass']
    print(f'rocemu passes {len(passed) - len(missing)} of the {len(passed)} '
          f'tests rxe passes')
    for t in missing:
        print(f'  {roc[t][0]:<8} {t[len("tests."):]}: {roc[t][1]}')
    extra = [t for t in order if roc[t][0] == 'pass' and rxe[t][0] != 'pass']
    for t in extra:
        print(f'  rocemu passes, rxe {rxe[t][0]}: {t[len("tests."):]}')
    rc = 0
    if a.reference:
        _, ref = read_tsv(a.reference)
        diff = [t for t in order if t in ref and ref[t][0] != rxe[t][0]] + \
            sorted(set(ref) ^ set(rxe))
        if diff:
            rc = 1
            print(f'{a.rxe_label} differs from the reference {a.reference} '
                  f'in {len(diff)} tests:')
            for t in diff:
                print(f'  {t}: now {rxe.get(t, ("absent",))[0]}, reference '
                      f'{ref.get(t, ("absent",))[0]}')
        else:
            print(f'{a.rxe_label} agrees with the reference {a.reference} '
                  f'({len(ref)} tests)')
    return rc


def cmd_parity(a):
    a.rxe, a.rxe_label = a.reference, a.label
    a.reference = None
    if cmd_compare(a):
        return 1
    _, ref = read_tsv(a.rxe)
    _, roc = read_tsv(a.rocemu)
    bad = [t for t in roc if roc[t][0] in FAILING]
    missing = [t for t in ref if ref[t][0] == 'pass' and roc[t][0] != 'pass']
    for t in bad:
        print(f'  not clean: {roc[t][0]} {t[len("tests."):]}: {roc[t][1]}')
    if bad or missing:
        print(f'suite parity: FAIL ({len(bad)} failed, errored, hung or not '
              f'run; {len(missing)} that rxe passes do not pass)')
        return 1
    print(f'suite parity: ok ({sum(1 for v in roc.values() if v[0] == "pass")}'
          f' pass, none fails; every test rxe passes passes)')
    return 0


def cmd_files(a):
    import importlib.machinery
    import importlib.util
    import traceback  # noqa: F401 (the driver's)
    import unittest  # noqa: F401
    tests_dir = os.path.abspath(a.tests)
    sys.path.insert(0, tests_dir)
    sys.argv = [sys.argv[0]]
    # what run_tests.py imports: every test module, hence pyverbs and its
    # providers' extension modules
    importlib.machinery.SourceFileLoader(
        'tests', os.path.join(tests_dir, '__init__.py')).load_module()
    files = {os.path.realpath(sys.executable)}
    for name, m in list(sys.modules.items()):
        f = getattr(m, '__file__', None)
        if name == '__main__' or not f or f.startswith(tests_dir + os.sep):
            continue
        files.add(f)
        if f.endswith('.py'):
            c = importlib.util.cache_from_source(f)
            if os.path.exists(c):
                files.add(c)
    for f in sorted(files):
        print(f)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run')
    r.add_argument('--tests', required=True)
    r.add_argument('--dev', required=True)
    r.add_argument('--out', required=True)
    r.add_argument('--idle', type=float, default=60)
    r.add_argument('--budget', type=float, default=600)
    r.add_argument('--gid', type=int)
    r.add_argument('--skip-test', action='append', default=[])
    r.add_argument('--skip-reason', default='')
    c = sub.add_parser('compare')
    c.add_argument('--rxe-label', default='rxe')
    c.add_argument('--reference')
    c.add_argument('rxe')
    c.add_argument('rocemu')
    q = sub.add_parser('parity')
    q.add_argument('--reference', required=True)
    q.add_argument('--label', default='rxe (recorded)')
    q.add_argument('rocemu')
    f = sub.add_parser('files')
    f.add_argument('--tests', required=True)
    a = ap.parse_args()
    return {'run': cmd_run, 'compare': cmd_compare, 'parity': cmd_parity,
            'files': cmd_files}[a.cmd](a)


if __name__ == '__main__':
    sys.exit(main())
