#!/bin/sh
# SPDX-License-Identifier: MIT
#
# No open-coded address+length sum in the C sources: every range end goes
# through include/rocemu/range.h, whose sums are checked.
#
# usage: tests/lint/lint_ranges.sh [ROOT [ALLOW]]  check a tree (default: this
#                                             repository, its allowlist
#                                             tests/lint/lint_ranges.allow)
#        tests/lint/lint_ranges.sh --self-test     check every fixture tree in
#                                             tests/lint/lint_ranges/
#
# The .c and .h files under proto/, analyze/, emu/, conformance/ and
# include/rocemu/ (range.h itself excepted) are read with comments and
# string and character literals blanked (as tests/lint/layers.py does) and
# casts to integer and pointer types taken out. A sum "x + y" of two
# operands (identifiers, possibly a->b.c[i] chains, whatever whitespace
# or newlines lie between) is flagged when the last identifier of one
# names an address and the other a length, or one of them an offset:
#   address  va addr iova vaddr base start at ptr raddr laddr
#   offset   off offset
#   length   len length size sz n nbytes bytes
# an identifier naming one when one of its '_'-separated parts, lower
# cased, is in the list (mr->iova, remote_addr, payload_len, rx_off).
# All-capital names are constants (header sizes) and never count. An
# operand that is half of a product or quotient (x * len + va, off + n / 2)
# or a call (va + f(x)) is not one, nor is a cursor moved along a range
# checked whole (va += len): neither is a range end.
#
# Output: "file:line: x + y" for each sum, then a summary; exit 1 if any,
# 0 if none, 2 on bad usage. An allowlist entry "file:x + y" (spaces do not
# matter; '#' starts a comment) lets that sum pass in that file, on any
# line; an entry that lets nothing pass is stale and reported as
# "ALLOW:line: stale: file:x + y", so the list can only shrink.
#
# Self-test: each folder in tests/lint/lint_ranges/ is a tree, with an allowlist
# "allow" if it has one. good/ must pass; each bad_*/ holds an "expect"
# file listing every line it must report, and the report must be exactly
# those lines.
here=$(cd "$(dirname "$0")" && pwd)
exec python3 - "$here" "$@" <<'EOF'
import os
import re
import subprocess
import sys

HERE = sys.argv[1]
sys.path.insert(0, HERE)
from layers import blank_comments_and_literals, run_fixtures  # noqa: E402
from layers import sources as layer_sources  # noqa: E402

SCANNED = ["proto", "analyze", "emu", "conformance", "include/rocemu"]
EXEMPT = {"include/rocemu/range.h"}
ADDRESS = {"va", "addr", "iova", "vaddr", "base", "start", "at", "ptr",
           "raddr", "laddr"}
OFFSET = {"off", "offset"}
LENGTH = {"len", "length", "size", "sz", "n", "nbytes", "bytes"}
# (one operand's role, the other's), either order
FLAGGED = {("a", "l"), ("a", "o"), ("o", "l")}

CHAIN_RE = re.compile(r"(?<![\w.])(?<!->)[A-Za-z_]\w*(?:\s*\[[^\]\n]*\])*"
                      r"(?:\s*(?:->|\.)\s*[A-Za-z_]\w*(?:\s*\[[^\]\n]*\])*)*")
CAST_RE = re.compile(r"\(\s*(?:const\s+)?(?:(?:struct|union)\s+\w+|u?int"
                     r"(?:8|16|32|64|ptr|max)_t|size_t|ssize_t|off_t|char"
                     r"|void|int|long(?:\s+long)?|unsigned(?:\s+(?:long|int"
                     r"|char))*)\s*(?:const\s*)?\**\s*\)")
PLUS_RE = re.compile(r"\s*\+\s*$")


def roles(chain):
    """The roles ("a", "o", "l") the chain's last identifier names."""
    name = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[[^\]]*\]", "", chain))[-1]
    if name.isupper():
        return set()
    parts = {p.lower() for p in name.split("_") if p}
    return {r for r, words in (("a", ADDRESS), ("o", OFFSET),
                               ("l", LENGTH)) if parts & words}


def flagged(x, y):
    """True if x + y is an address (or offset) plus a length."""
    rx, ry = roles(x), roles(y)
    return any((p in rx and q in ry) or (q in rx and p in ry)
               for p, q in FLAGGED)


def prev_char(code, i):
    """The last character before i that is not whitespace, or ""."""
    while i > 0 and code[i - 1].isspace():
        i -= 1
    return code[i - 1] if i > 0 else ""


def next_char(code, i):
    """The first character from i on that is not whitespace, or ""."""
    while i < len(code) and code[i].isspace():
        i += 1
    return code[i:i + 1]


def sums(code):
    """(offset, "x + y") for each flagged sum in code (blanked)."""
    code = CAST_RE.sub(lambda m: " " * len(m.group(0)), code)
    chains = list(CHAIN_RE.finditer(code))
    found = []
    for a, b in zip(chains, chains[1:]):
        between = code[a.end():b.start()]
        if not PLUS_RE.match(between) or between.count("+") != 1:
            continue
        # x * len + va is (x * len) + va; x - va + len is (x - va) + len
        if prev_char(code, a.start()) in ("*", "/", "%", "-"):
            continue
        if next_char(code, b.end()) in ("*", "/", "%", "("):
            continue
        x = re.sub(r"\s", "", a.group(0))
        y = re.sub(r"\s", "", b.group(0))
        if flagged(x, y):
            found.append((a.start(), "%s + %s" % (x, y)))
    return found


def sources(root):
    """The .c and .h files under the scanned folders, sorted."""
    return sorted(set(layer_sources(root, SCANNED)) - EXEMPT)


def key(src, expr):
    return (src, re.sub(r"\s", "", expr))


def read_allow(path):
    """[(line number, file, expr)] of the allowlist at path (none: [])."""
    entries = []
    if not path or not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.split("#")[0].strip()
            if not line:
                continue
            if ":" not in line:
                print("%s:%d: not file:expression: %s" % (path, no, line))
                sys.exit(2)
            src, expr = line.split(":", 1)
            entries.append((no, src.strip(), expr.strip()))
    return entries


def check_tree(root, allow, allow_name):
    """Checks a tree against an allowlist; prints; returns the status."""
    if not os.path.isdir(root):
        print("lint_ranges: %s is not a folder" % root, file=sys.stderr)
        return 2
    entries = read_allow(allow)
    allowed = {key(src, expr) for _, src, expr in entries}
    used, out, files = set(), [], sources(root)
    for src in files:
        with open(os.path.join(root, src), encoding="utf-8",
                  errors="replace") as f:
            code = blank_comments_and_literals(f.read())
        for at, expr in sums(code):
            if key(src, expr) in allowed:
                used.add(key(src, expr))
                continue
            out.append("%s:%d: %s" % (src, code.count("\n", 0, at) + 1,
                                      expr))
    for no, src, expr in entries:
        if key(src, expr) not in used:
            out.append("%s:%d: stale: %s:%s" % (allow_name, no, src, expr))
    for line in out:
        print(line)
    if out:
        print("lint_ranges: %d open-coded sums or stale entries in %d "
              "files; use include/rocemu/range.h" % (len(out), len(files)))
        return 1
    print("lint_ranges: %d files, %d allowlisted sums" % (len(files),
                                                          len(used)))
    return 0


def self_test_one(fixture):
    """Runs the lint on one fixture tree; returns a list of failures."""
    name = os.path.basename(fixture)
    want = set()
    expect = os.path.join(fixture, "expect")
    if os.path.exists(expect):
        with open(expect, encoding="utf-8") as f:
            want = {x.rstrip("\n") for x in f if x.strip()}
    if name.startswith("bad_") and not want:
        return ["%s: a bad fixture with nothing in its expect file" % name]
    run = subprocess.run([os.path.join(HERE, "lint_ranges.sh"), fixture,
                          os.path.join(fixture, "allow")],
                         capture_output=True, text=True)
    got = set(run.stdout.splitlines()[:-1])
    fails = ["%s: missing %s" % (name, x) for x in sorted(want - got)]
    fails += ["%s: unexpected %s" % (name, x) for x in sorted(got - want)]
    status = 1 if want else 0
    if run.returncode != status:
        fails.append("%s: exit %d, not %d (%s)" % (
            name, run.returncode, status, run.stderr.strip()))
    return fails


def self_test(fixtures):
    return run_fixtures(fixtures, "lint_ranges", self_test_one)


def main(argv):
    if argv == ["--self-test"]:
        return self_test(os.path.join(HERE, "lint_ranges"))
    if len(argv) > 2 or (argv and argv[0].startswith("-")):
        print("usage: tests/lint/lint_ranges.sh [ROOT [ALLOW]] | --self-test",
              file=sys.stderr)
        return 2
    root = argv[0] if argv else os.path.dirname(os.path.dirname(HERE))
    if len(argv) == 2:
        allow, name = argv[1], "allow"
    else:
        allow = os.path.join(root, "tests", "lint", "lint_ranges.allow")
        name = "tests/lint/lint_ranges.allow"
    return check_tree(root, allow, name)


sys.exit(main(sys.argv[2:]))
EOF
