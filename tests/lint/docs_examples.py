#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs every command and sample output the docs show, and fails when a
sample no longer matches what the program prints.

usage: tests/lint/docs_examples.py BUILD [FILE.md...]
       tests/lint/docs_examples.py BUILD --self-test
BUILD is the build directory (build, build/san, ...); its bin/ comes first
on PATH. Without FILEs it reads README.md, INSTALL.md, TESTING.md,
CONTRIBUTING.md, tests/README.md, examples/README.md,
docs/*.md and the conformance docs (conformance/*.md).
--self-test runs it on tests/lint/docs_examples/: good*.md must pass, each
bad_*.md must fail with the message its first line names
("<!-- expect: TEXT -->").

Every fenced block (``` or ~~~) is one of:
  ```console   a terminal: a line "$ CMD" is a command, the lines after
               it, up to the next "$ ", are its output (stdout and stderr).
               A command line ending in a backslash goes on with the next.
  ```sh        commands only: each must exit 0, their output is not shown.
  anything else, or a console/sh block that cannot run here, needs an HTML
  comment on the line right above the fence (several may be stacked):
  <!-- doc-test: skip WHY -->        not run here; WHY names the test that
                                     runs it (e.g. "the rxe lab, make
                                     rxe-check") or why nothing can.
  <!-- doc-test: text WHY -->        no command and no sample: a diagram,
                                     a code fragment, a synopsis.
  <!-- doc-test: output-of CMD -->   the block is CMD's whole output.
  <!-- doc-test: excerpt-of CMD -->  the block's lines appear in CMD's
                                     output, in order (as if "..." began
                                     and ended the block): --help excerpts.
  <!-- doc-test: file PATH -->       the block is PATH's text (a scenario
                                     shown in full), under the same rules.
  <!-- doc-test: in DIR -->          runs the block's commands in DIR (a
                                     folder of the tree, e.g. examples),
                                     copied into the scratch folder so that
                                     what they write stays there.
  <!-- doc-test: server CMD -->      runs CMD in the background while the
                                     block runs (the server a client in
                                     the block talks to): the block starts
                                     once a TCP socket listens on one of
                                     the test's addresses; the server's
                                     output is not compared; it must exit
                                     0 by itself or still run at the end
                                     (then it is stopped).
A block with none of these, and a "# " (root) prompt in a console block
that is not skipped, are errors: a new block cannot be forgotten.

Comparing a sample with the output: line by line, trailing blanks ignored,
exactly, except that
  - a line that is only "..." or "…" stands for any number of lines
    (none too);
  - "…" inside a line stands for any text within that line (timings,
    addresses the kernel picks).
Everything else must match: a sample that no longer holds fails with a
diff naming the doc's file and line.

Each block runs in a scratch folder of its own, BUILD/docs_examples/NAME,
that links every top-level entry of the tree, so a command runs as from the
top of the tree (pcaps/..., build/bin/...) while what it writes stays under
the build directory. Commands run under /bin/sh, one shell per block (so
"echo $?" shows the previous command's status), with a 60 s limit a
block. Network commands use addresses this test owns: the docs show the
addresses a reader would use (127.0.0.1, .2, .3, and .4 in the examples)
and the runner runs them on 127.0.0.46, .44, .45 and .7 instead, mapping
them back in the output (.7 keeps the ladders' columns of .4 in place).
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = "tests/lint/docs_examples"
# The reader's address -> the one this test owns (tests/TESTLIST: OWNS).
ADDRS = {"127.0.0.1": "127.0.0.46", "127.0.0.2": "127.0.0.44", "127.0.0.4": "127.0.0.7",
         "127.0.0.3": "127.0.0.45"}
MARK = re.compile(r"^\s*<!--\s*doc-test:\s*(\S+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
TIMEOUT = 60
SEP = "@@doc-test-command-%d@@"


class Block:
    def __init__(self, path, line, info, body, marks):
        self.path, self.line, self.info = path, line, info
        self.body, self.marks = body, marks

    def where(self):
        return "%s:%d" % (self.path, self.line)


def doc_files():
    files = ["README.md", "INSTALL.md", "TESTING.md", "CONTRIBUTING.md",
             "tests/README.md", "examples/README.md"]
    files += sorted(glob.glob("docs/*.md"))
    files += sorted(glob.glob("conformance/*.md"))
    return [f for f in files if os.path.exists(f)]


def blocks(path):
    """The fenced blocks of PATH, each with the doc-test marks right above."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3)
        marks, k = [], i - 1
        while k >= 0 and MARK.match(lines[k]):
            mm = MARK.match(lines[k])
            marks.insert(0, (mm.group(1), mm.group(2)))
            k -= 1
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip()
                for ln in lines[i + 1:j]]
        out.append(Block(path, i + 1, info, body, marks))
        i = j + 1
    return out


def line_re(s):
    return re.compile(".*".join(re.escape(p) for p in s.split("…")) + r"\Z")


def matches(expect, actual):
    """True when ACTUAL (lines) matches EXPECT (lines, with the ... rules)."""
    exp = [None if e.strip() in ("...", "…") else line_re(e) for e in expect]
    memo = {}

    def go(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(exp):
            r = j == len(actual)
        elif exp[i] is None:
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and bool(exp[i].match(actual[j])) and go(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return go(0, 0)


def clean(text):
    lines = [ln.rstrip() for ln in text.split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def joined(lines):
    """Shell lines with a trailing backslash joined to the next, as sh reads them."""
    out, cur = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
        else:
            out.append(cur + line)
            cur = ""
    if cur:
        out.append(cur)
    return out


def to_owned(cmd):
    for a, b in ADDRS.items():
        cmd = re.sub(re.escape(a) + r"(?!\d)", b, cmd)
    return cmd


def to_reader(text):
    for a, b in ADDRS.items():
        text = re.sub(re.escape(b) + r"(?!\d)", a, text)
    return text


def scratch(build, blk):
    name = re.sub(r"[^A-Za-z0-9]+", "_", "%s_%d" % (blk.path, blk.line)).strip("_")
    d = os.path.join(TOP, build, "docs_examples", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for e in os.listdir(TOP):
        if e != ".git":
            os.symlink(os.path.join(TOP, e), os.path.join(d, e))
    return d


def env_for(build):
    env = dict(os.environ)
    env["PATH"] = os.path.join(TOP, build, "bin") + os.pathsep + env.get("PATH", "")
    env["LC_ALL"] = "C"
    env["COLUMNS"] = "80"
    return env


def listening(timeout=20.0):
    """Waits until a TCP socket listens on one of ADDRS' owned addresses."""
    import socket
    import struct
    import time
    want = {struct.unpack("<I", socket.inet_aton(a))[0] for a in ADDRS.values()}
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for path in ("/proc/net/tcp",):
            try:
                rows = open(path).read().split("\n")[1:]
            except OSError:
                return
            for r in rows:
                f = r.split()
                if len(f) > 3 and f[3] == "0A" and int(f[1].split(":")[0], 16) in want:
                    return
        time.sleep(0.05)


def run_script(script, cwd, env):
    """Runs SCRIPT under /bin/sh in CWD; returns (exit status, output)."""
    p = subprocess.Popen(["/bin/sh", "-c", script], cwd=cwd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out.decode("utf-8", "replace")
    return p.returncode, out.decode("utf-8", "replace")


def console(body):
    """A console block's (command, expected output lines) pairs, or an
    error string."""
    steps, cont = [], False
    for ln in body:
        if cont:
            steps[-1][0] += "\n" + ln
        elif ln.startswith("$ "):
            steps.append([ln[2:], []])
        elif ln.startswith("# "):
            return "a root prompt ('# '): mark it doc-test: skip WHY"
        elif not steps:
            return "output before the first '$ ' command"
        else:
            steps[-1][1].append(ln)
        cont = ln.endswith("\\") and (cont or ln.startswith("$ "))
    if not steps:
        return "a console block with no '$ ' command"
    return steps


def diff(where, expect, actual):
    import difflib
    d = difflib.unified_diff(expect, actual, "%s (the doc)" % where,
                             "what it prints", lineterm="", n=2)
    return "\n".join(d)


def check_block(build, blk):
    """Runs one block; returns a list of problems (empty when it holds)."""
    kinds = [k for k, _ in blk.marks]
    for k, arg in blk.marks:
        if k not in ("skip", "text", "output-of", "excerpt-of", "file", "server", "in"):
            return ["%s: unknown doc-test mark '%s'" % (blk.where(), k)]
        if not arg:
            return ["%s: doc-test: %s needs %s" % (
                blk.where(), k, "a reason" if k in ("skip", "text") else "an argument")]
    if "skip" in kinds or "text" in kinds:
        return []
    marks = dict(blk.marks)
    env = env_for(build)
    if "file" in marks:
        path = os.path.join(TOP, marks["file"])
        if not os.path.exists(path):
            return ["%s: doc-test: file %s: no such file" % (blk.where(), marks["file"])]
        actual = clean(open(path, encoding="utf-8").read())
        if matches(blk.body, actual):
            return []
        return ["%s: the block is not %s\n%s" % (
            blk.where(), marks["file"], diff(blk.where(), blk.body, actual))]
    if "output-of" in marks or "excerpt-of" in marks:
        cmd = marks.get("output-of") or marks["excerpt-of"]
        steps = [[cmd, list(blk.body)]]
        if "excerpt-of" in marks:
            steps[0][1] = ["..."] + steps[0][1] + ["..."]
    elif blk.info == "console":
        steps = console(blk.body)
        if isinstance(steps, str):
            return ["%s: %s" % (blk.where(), steps)]
    elif blk.info == "sh":
        steps = [[c, None] for c in joined(blk.body) if c.strip() and not c.lstrip().startswith("#")]
    else:
        return ["%s: a ```%s block with no doc-test mark: make it ```console or "
                "```sh, or mark it (doc-test: skip/text/output-of/excerpt-of/file)"
                % (blk.where(), blk.info)]
    d = scratch(build, blk)
    if "in" in marks:
        sub = os.path.normpath(marks["in"])
        if sub.startswith("..") or os.path.isabs(sub) or not os.path.isdir(os.path.join(TOP, sub)):
            return ["%s: doc-test: in %s: not a folder of the tree" % (blk.where(), marks["in"])]
        top = sub.split(os.sep)[0]
        os.unlink(os.path.join(d, top))
        shutil.copytree(os.path.join(TOP, top), os.path.join(d, top), symlinks=True)
        d = os.path.join(d, sub)
    server = None
    if "server" in marks:
        server = subprocess.Popen(["/bin/sh", "-c", to_owned(marks["server"])],
                                  cwd=d, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
        listening()
    script = ["exec 2>&1", "__rc=0"]
    for n, (cmd, _) in enumerate(steps):
        script.append("(exit $__rc); echo '%s'; (exit $__rc)" % (SEP % n))
        script.append(to_owned(cmd))
        script.append("__rc=$?")
        if blk.info == "sh" and "output-of" not in marks and "excerpt-of" not in marks:
            script.append("[ $__rc = 0 ] || { echo '@@doc-test-failed-%d@@'; exit 1; }" % n)
    rc, out = run_script("\n".join(script), d, env)
    problems = []
    if server is not None:
        try:
            sout, _ = server.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGTERM)
            sout, _ = server.communicate()
            server.returncode = 0
        if server.returncode != 0:
            problems.append("%s: the server '%s' exited %s:\n%s" % (
                blk.where(), marks["server"], server.returncode,
                sout.decode("utf-8", "replace")[-2000:]))
    if rc is None:
        return problems + ["%s: timed out after %d s:\n%s" % (blk.where(), TIMEOUT, out[-2000:])]
    parts = re.split(r"^@@doc-test-command-(\d+)@@\n", to_reader(out), flags=re.M)
    got = {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
    for n, (cmd, expect) in enumerate(steps):
        actual = clean(got.get(n, ""))
        if expect is None:
            if "@@doc-test-failed-%d@@" % n in got.get(n, ""):
                problems.append("%s: '%s' failed:\n%s" % (
                    blk.where(), cmd, "\n".join(actual[:-1][-20:])))
                break
            continue
        if not matches(expect, actual):
            problems.append("%s: the output of '%s' differs:\n%s" % (
                blk.where(), cmd, diff(blk.where(), expect, actual)))
    return problems


def run(build, files):
    problems, n = [], 0
    for f in files:
        for blk in blocks(f):
            n += 1
            problems += check_block(build, blk)
    return n, problems


def self_test(build):
    bad = 0
    for f in sorted(glob.glob(os.path.join(FIXTURES, "*.md"))):
        _, problems = run(build, [f])
        base = os.path.basename(f)
        first = open(f, encoding="utf-8").readline()
        m = re.match(r"<!--\s*expect:\s*(.*?)\s*-->", first)
        if base.startswith("good"):
            if problems:
                bad += 1
                print("self-test: %s should pass:\n%s" % (f, "\n".join(problems)))
        elif not m:
            bad += 1
            print("self-test: %s has no '<!-- expect: TEXT -->' first line" % f)
        elif not any(m.group(1) in p for p in problems):
            bad += 1
            print("self-test: %s should fail with '%s', got:\n%s" % (
                f, m.group(1), "\n".join(problems) or "(no problem)"))
    print("docs_examples self-test: %s" % ("ok" if not bad else "%d failed" % bad))
    return 1 if bad else 0


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    os.chdir(TOP)
    build = argv[1]
    if argv[2:] == ["--self-test"]:
        return self_test(build)
    files = argv[2:] or doc_files()
    n, problems = run(build, files)
    for p in problems:
        print(p)
    print("docs_examples: %d blocks in %d files, %d problems" % (n, len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
