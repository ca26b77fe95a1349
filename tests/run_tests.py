#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the tests tests/TESTLIST lists (make check).

usage: tests/run_tests.py BUILD [--only NAME[,NAME...]]  run them
       tests/run_tests.py --list                       their names, one line each
       tests/run_tests.py --markdown TESTING.md        rewrite its test table
       tests/run_tests.py --self-test                  the checks below, on the
                                                       fixtures in tests/testlist_check/

First the "testlist" step: every tests/*.sh, tests/*.py and tests/rxe/*_test.py
is named by a TESTLIST command or a "# lib:" line, each "# lib:" file
exists, each suite of tests/check_*.c and tests/unit/check_*.c is
registered in tests/check_main.c, and TESTING.md's table is the one
--markdown would write. Each problem is
printed ("not in TESTLIST: FILE", ...) and the step fails. Then each test
(or each one --only names, with the ones its "after:" needs) runs from the
top of the tree, with its output in BUILD/tests-log/NAME.log; a pass prints
the log's last line, a failure its last 30 lines. A failure does not stop
the run. The last line is "tests: N passed, M failed", the failed names on
the line before; exit 1 if any failed, 2 on bad usage or a bad TESTLIST.
"""
import glob
import os
import re
import subprocess
import sys

LIST = "tests/TESTLIST"
TABLE = "TESTING.md"
BEGIN = ("<!-- testlist: begin (made from tests/TESTLIST by "
         "python3 tests/run_tests.py --markdown TESTING.md) -->")
END = "<!-- testlist: end -->"
# The programs {name} stands for, under the build directory.
PROGRAMS = {
    "rocemu": "bin/rocemu",
    "mkcap": "tests/mkcap",
    "check_bin": "tests/check_rocemu",
    "icrc_flood": "tests/icrc_flood",
}
PLACEHOLDER = re.compile(r"\{(build|isolated|%s)\}" % "|".join(PROGRAMS))
NAME = re.compile(r"^[A-Za-z0-9_-]+$")
SEP = " | "
TAIL_FAIL = 30


class ListError(Exception):
    """A TESTLIST line that cannot be read."""


def parse(path, label=LIST):
    """Reads a TESTLIST (label names it in messages): returns (tests,
    libs), tests a list of dicts with name, cmd, needs, owns, proves and
    line; libs a list of (file, line).
    Raises ListError naming the file and line of a malformed entry."""
    tests, libs, seen = [], [], set()
    with open(path) as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            where = "%s:%d" % (label, no)
            m = re.match(r"^#\s*lib:\s*(\S+)", line)
            if m:
                libs.append((m.group(1), where))
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            # The command may hold " | " itself: NEEDS, OWNS and PROVES are
            # the last three fields, NAME the first.
            head = line.split(SEP, 1)
            rest = head[1].rsplit(SEP, 3) if len(head) == 2 else []
            if len(rest) != 4 or not all(x.strip() for x in rest):
                raise ListError("%s: not NAME | COMMAND | NEEDS | OWNS | "
                                "PROVES" % where)
            name = head[0].strip()
            if not NAME.match(name) or name == "testlist":
                raise ListError("%s: bad test name '%s'" % (where, name))
            if name in seen:
                raise ListError("%s: test '%s' listed twice" % (where, name))
            seen.add(name)
            cmd, needs, owns, proves = (x.strip() for x in rest)
            tests.append(dict(name=name, cmd=cmd, needs=needs, owns=owns,
                              proves=proves, line=where))
    return tests, libs


def after(test):
    """The tests test's NEEDS field says must run before it."""
    return [n.strip()[len("after:"):] for n in test["needs"].split(",")
            if n.strip().startswith("after:")]


def markdown(tests):
    """The TESTING.md table of tests, between its markers."""
    def cell(s):
        return s.replace("|", "\\|")
    rows = [BEGIN, "", "| Test | What a pass shows | Needs | Owns |",
            "|---|---|---|---|"]
    for t in tests:
        rows.append("| `%s` | %s | %s | %s |" % (
            t["name"], cell(t["proves"]), cell(t["needs"]), cell(t["owns"])))
    return "\n".join(rows + ["", END])


def splice(text, table):
    """text with the part between BEGIN and END replaced by table; None if
    the markers are not there once each, in order."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        return None
    start, stop = text.index(BEGIN), text.index(END)
    if stop < start:
        return None
    return text[:start] + table + text[stop + len(END):]


def coverage(root):
    """The testlist step's checks on the tree at root: returns a list of
    problems, one line each (empty when all is well)."""
    problems = []
    try:
        tests, libs = parse(os.path.join(root, LIST))
    except (OSError, ListError) as e:
        return [str(e)]
    named = " ".join(t["cmd"] for t in tests)
    lib_files = set()
    for f, where in libs:
        lib_files.add(f)
        if not os.path.exists(os.path.join(root, f)):
            problems.append("%s: lib file missing: %s" % (where, f))
    candidates = []
    for pat in ("tests/*.sh", "tests/*.py", "tests/rxe/*_test.py"):
        candidates += sorted(glob.glob(os.path.join(root, pat)))
    for path in candidates:
        rel = os.path.relpath(path, root)
        if rel in lib_files:
            continue
        if not re.search(r"(^|\s)%s(\s|$)" % re.escape(rel), named):
            problems.append("not in TESTLIST: %s" % rel)
    problems += suites(root, lib_files)
    for t in tests:
        for n in after(t):
            if n not in [u["name"] for u in tests[:tests.index(t)]]:
                problems.append("%s: after:%s is not a test listed before "
                                "it" % (t["line"], n))
    try:
        with open(os.path.join(root, TABLE)) as f:
            text = f.read()
    except OSError as e:
        return problems + ["%s: %s" % (TABLE, e.strerror)]
    new = splice(text, markdown(tests))
    if new is None:
        problems.append("%s: its test table markers are missing" % TABLE)
    elif new != text:
        problems.append("%s: the test table is not current: run python3 "
                        "tests/run_tests.py --markdown %s" % (TABLE, TABLE))
    return problems


def suites(root, lib_files):
    """Every tests/check_*.c and tests/unit/check_*.c that is not a lib
    defines a Check suite that tests/check_main.c adds: the problems, one
    line each."""
    problems = []
    try:
        with open(os.path.join(root, "tests/check_main.c")) as f:
            main = f.read()
    except OSError:
        main = ""
    paths = glob.glob(os.path.join(root, "tests/check_*.c"))
    paths += glob.glob(os.path.join(root, "tests/unit/check_*.c"))
    for path in sorted(paths):
        rel = os.path.relpath(path, root)
        if rel in lib_files:
            continue
        with open(path) as f:
            names = re.findall(r"^Suite \*(\w+)\(void\)$", f.read(), re.M)
        if not names:
            problems.append("not in TESTLIST: %s (no Check suite in it)"
                            % rel)
        for n in names:
            if not re.search(r"\b%s\(\)" % n, main):
                problems.append("not in TESTLIST: %s (%s is not added in "
                                "tests/check_main.c)" % (rel, n))
    return problems


def self_test_one(tree):
    """Runs coverage on one fixture tree: returns the failures, one line
    each. good/ must have no problem; a bad_*/ exactly its expect file's."""
    got = coverage(tree)
    name = os.path.basename(tree)
    if name == "good":
        return ["good: %s" % p for p in got]
    try:
        with open(os.path.join(tree, "expect")) as f:
            want = [l.rstrip("\n") for l in f if l.strip()]
    except OSError:
        return ["%s: no expect file" % name]
    fails = ["%s: not reported: %s" % (name, w) for w in want if w not in got]
    fails += ["%s: reported besides: %s" % (name, g) for g in got
              if g not in want]
    return fails


def self_test(here):
    """Every fixture tree of tests/testlist_check/: returns the problems."""
    fixtures = os.path.join(here, "testlist_check")
    names = sorted(os.listdir(fixtures))
    if "good" not in names or not any(n.startswith("bad_") for n in names):
        return ["%s needs good/ and bad_*/" % fixtures]
    fails = []
    for n in names:
        fails += self_test_one(os.path.join(fixtures, n))
    return fails


def tail(path, n):
    """The last n lines of the log at path, below its command line."""
    with open(path, errors="replace") as f:
        lines = f.read().rstrip("\n").split("\n")[1:]
    return lines[-n:]


def run_one(test, build, logs):
    """Runs one test, its output into logs/NAME.log: returns True if it
    passed, and prints its last line (all of its tail when it failed)."""
    progs = dict((k, os.path.join(build, v)) for k, v in PROGRAMS.items())
    progs.update(build=build, isolated="tests/isolated.sh")
    cmd = PLACEHOLDER.sub(lambda m: progs[m.group(1)], test["cmd"])
    log = os.path.join(logs, test["name"] + ".log")
    print("test %s ..." % test["name"], flush=True)
    with open(log, "w") as out:
        out.write("$ %s\n" % cmd)
        out.flush()
        rc = subprocess.call(["/bin/sh", "-c", cmd], stdout=out,
                             stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
    lines = tail(log, TAIL_FAIL if rc else 1)
    if rc == 0:
        print("  ok   %s%s" % (test["name"], ": " + lines[-1] if lines else ""))
        return True
    for l in lines:
        print("  | %s" % l)
    print("  FAIL %s: exit %d (%s)" % (test["name"], rc, log), flush=True)
    return False


def testlist_step(root):
    """The coverage checks and their self-test, as the first step: returns
    True if all is well, printing each problem."""
    problems = coverage(root) + ["self-test: %s" % f for f in
                                 self_test(os.path.join(root, "tests"))]
    print("test testlist ...")
    for p in problems:
        print("  %s" % p)
    if problems:
        print("  FAIL testlist: %d problems" % len(problems), flush=True)
        return False
    print("  ok   testlist: every test file listed, %s current" % TABLE,
          flush=True)
    return True


def select(tests, only):
    """The tests --only names, with what they need run first, in TESTLIST
    order; raises ListError on an unknown name."""
    names = set(n for n in only.split(",") if n)
    known = set(t["name"] for t in tests) | {"testlist"}
    unknown = sorted(names - known)
    if unknown:
        raise ListError("unknown test: %s (see tests/run_tests.py --list)"
                        % ", ".join(unknown))
    grew = True
    while grew:
        grew = False
        for t in tests:
            if t["name"] in names:
                for n in after(t):
                    if n not in names:
                        names.add(n)
                        grew = True
    return names


def run(build, only):
    """Runs the step and the tests: returns the exit status."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    try:
        tests, _ = parse(LIST)
        names = select(tests, only) if only else None
    except (OSError, ListError) as e:
        print("run_tests: %s" % e, file=sys.stderr)
        return 2
    logs = os.path.join(build, "tests-log")
    os.makedirs(logs, exist_ok=True)
    passed, failed = 0, []
    # The file checks take a second: they run on every call, so that a
    # single test run still sees a file that no list names.
    if testlist_step(root):
        passed += 1
    else:
        failed.append("testlist")
    for t in tests:
        if names is not None and t["name"] not in names:
            continue
        if run_one(t, build, logs):
            passed += 1
        else:
            failed.append(t["name"])
    if failed:
        print("failed: %s" % " ".join(failed))
    print("tests: %d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = argv[1:]
    if args == ["--self-test"]:
        fails = self_test(os.path.join(root, "tests"))
        for f in fails:
            print("testlist self-test: %s" % f)
        print("testlist self-test: %s" % ("%d failures" % len(fails)
                                          if fails else "all as expected"))
        return 1 if fails else 0
    if args == ["--list"]:
        try:
            tests, _ = parse(os.path.join(root, LIST))
        except (OSError, ListError) as e:
            print("run_tests: %s" % e, file=sys.stderr)
            return 2
        for t in tests:
            print("%-18s %s" % (t["name"], t["proves"]))
        return 0
    if len(args) == 2 and args[0] == "--markdown":
        try:
            tests, _ = parse(os.path.join(root, LIST))
            with open(args[1]) as f:
                text = f.read()
        except (OSError, ListError) as e:
            print("run_tests: %s" % e, file=sys.stderr)
            return 2
        new = splice(text, markdown(tests))
        if new is None:
            print("run_tests: %s: no '%s' ... '%s' markers" %
                  (args[1], BEGIN, END), file=sys.stderr)
            return 2
        if new != text:
            with open(args[1], "w") as f:
                f.write(new)
        return 0
    if len(args) == 1 and not args[0].startswith("-"):
        return run(args[0], None)
    if len(args) == 3 and args[1] == "--only" and not args[0].startswith("-"):
        return run(args[0], args[2])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
