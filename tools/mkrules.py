#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/rules.md, the coverage table, made from three sources of the tree.

- the rule book: `rocemu check --rules --json` (analyze/check_rulebook.c);
- what `rocemu conform` tests: each scenario's `covers` line;
- what proves a check can fail: the tests that build a capture breaking
  the rule and assert that rocemu check names its ID (tests/unit/
  check_rules.c, check_cmrules.c, tests/cli/check_cli.sh, check_resp.sh).

usage: mkrules.py --rocemu BIN (--out FILE | --check FILE)

--check fails (exit 1) when FILE is not what would be written, when a rule
the book marks checked has no test proving it can fail, when a scenario
covers an ID the book lacks, or when an ID is in the book twice.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

UNIT = ["tests/unit/check_rules.c", "tests/unit/check_cmrules.c"]
SHELL = ["tests/cli/check_cli.sh", "tests/cli/check_resp.sh"]
SCENARIOS = "conformance/scenarios"
ID = r"[A-Z][A-Z0-9-]+"


def book(rocemu):
    out = subprocess.run([rocemu, "check", "--rules", "--json"], check=True,
                         capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def unit_proofs(path, ids):
    """{id: [test names]}: the START_TEST bodies that assert an ID, or
    that index a table of the file whose rows name one."""
    src = open(path).read()
    tables = {}
    for m in re.finditer(r"\}\s*(\w+)\[\]\s*=\s*\{(.*?)\n\};", src, re.S):
        tables[m.group(1)] = set(re.findall(r'"(%s)"' % ID, m.group(2)))
    found = {}
    for m in re.finditer(r"START_TEST\((\w+)\)(.*?)END_TEST", src, re.S):
        name, body = m.group(1), m.group(2)
        got = set(re.findall(r'(?:one_error|has)\(&?r, "(%s)"' % ID, body))
        got |= set(re.findall(r'\.id, "(%s)"\)' % ID, body))
        for table, rows in tables.items():
            if re.search(r"\b%s\[_?i\]\.rule" % table, body):
                got |= rows
        for rid in got & ids:
            found.setdefault(rid, []).append(name)
    return found


SHELL_PATTERNS = [
    r"rule (%s) \(" % ID,                       # a finding's line
    r"^\s*one_rule .* (%s) \d+\s*$" % ID,       # check_cli's one_rule
    r"^\s*breaks \S+ \d+ (%s) " % ID,           # check_resp's breaks
    r'\["id"\] == "(%s)"' % ID,                 # a JSON finding's id
    r"^bad-[a-z-]+ (%s) \d+ " % ID,             # the CM captures' table
]


def shell_proofs(path, ids):
    found = {}
    for line in open(path):
        if line.lstrip().startswith("#"):
            continue
        for pat in SHELL_PATTERNS:
            for rid in re.findall(pat, line):
                if rid in ids:
                    found.setdefault(rid, set()).add(os.path.basename(path))
    return found


def scenarios(ids, problems):
    cov = {}
    for path in sorted(glob.glob(os.path.join(SCENARIOS, "*.scn"))):
        name = os.path.basename(path)[:-4]
        lines = open(path).read().splitlines()
        if not any(line.startswith("covers") for line in lines):
            problems.append("%s: no covers line" % path)
        for line in lines:
            if not line.startswith("covers"):
                continue
            for rid in line.split()[1:]:
                if rid not in ids:
                    problems.append("%s: covers %s, no rule of the book"
                                    % (path, rid))
                cov.setdefault(rid, []).append(name)
    return cov


def proofs(ids):
    out = {}
    for path in UNIT:
        for rid, tests in unit_proofs(path, ids).items():
            stem = os.path.basename(path)
            out.setdefault(rid, []).append(
                "%s (%s)" % (stem, ", ".join(sorted(set(tests)))))
    for path in SHELL:
        for rid, files in shell_proofs(path, ids).items():
            out.setdefault(rid, []).extend(sorted(files))
    return out


def cell(text):
    return text.replace("|", "\\|")


def render(rules, cov, proof):
    n = len(rules)
    checked = sum(r["checked"] for r in rules)
    tested = sum(r["id"] in cov for r in rules)
    both = sum(r["checked"] and r["id"] in cov for r in rules)
    neither = sum(not r["checked"] and r["id"] not in cov for r in rules)
    lines = [
        "# The rule book: what rocemu check judges and rocemu conform tests",
        "",
        "<!-- Made by tools/mkrules.py (make rules-doc); do not edit: the "
        "rules_doc test fails when this file is not what it makes. -->",
        "",
        "Each transport rule that can be judged from the wire, by the ID "
        "that `rocemu check` prints with a finding and that a conformance "
        "scenario's `covers` line names. Sections are those of the IBTA "
        "Volume 1 and its RoCEv2 annex (A17); a compliance statement (C9-nn) "
        "only where a public source confirms its number.",
        "",
        "- **rocemu check**: `checked` when the checker judges the rule "
        "from a capture alone, with the tests that build a capture "
        "breaking it and assert the finding (so each check is shown to "
        "fail); otherwise what judging it needs.",
        "- **rocemu conform**: the scenarios that test a device against "
        "it ([conformance.md](conformance.md)).",
        "- A rule with neither is **not yet** judged anywhere. `rocemu "
        "conform --coverage` prints the conform column.",
        "",
        "Made from `rocemu check --rules` (the book, "
        "`analyze/check_rulebook.c`), the scenarios' `covers` lines and the "
        "tests' assertions.",
        "",
        "%d rules: %d checked by rocemu check, %d tested by rocemu conform "
        "(%d by both), %d not yet." % (n, checked, tested, both, neither),
        "",
        "| ID | rule | IBTA | transport | rocemu check | rocemu conform |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        rid = r["id"]
        if r["checked"]:
            chk = "checked; fails in " + "; ".join(proof.get(rid, ["(none)"]))
        else:
            chk = r.get("not_yet", "not yet")
        conf = ", ".join("`%s`" % s for s in cov.get(rid, []))
        if not conf and r.get("no_device"):
            conf = "not applicable: " + r["no_device"]
        elif not conf:
            conf = "**not yet**" if not r["checked"] else "not yet"
        lines.append("| `%s` | %s | %s | %s | %s | %s |" % (
            rid, cell(r["text"]), cell(r["section"]), cell(r["applies"]),
            cell(chk), conf))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rocemu", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out")
    g.add_argument("--check")
    a = ap.parse_args()
    rules = book(a.rocemu)
    problems = []
    ids = [r["id"] for r in rules]
    for rid in set(ids):
        if ids.count(rid) > 1:
            problems.append("rule %s is in the book %d times"
                            % (rid, ids.count(rid)))
    ids = set(ids)
    cov = scenarios(ids, problems)
    proof = proofs(ids)
    for r in rules:
        if r["checked"] and r["id"] not in proof:
            problems.append("rule %s is checked but no test shows the check "
                            "failing (%s)" % (r["id"], ", ".join(UNIT + SHELL)))
    text = render(rules, cov, proof)
    if a.out:
        open(a.out, "w").write(text)
    else:
        old = open(a.check).read() if os.path.exists(a.check) else ""
        if old != text:
            problems.append("%s is not what tools/mkrules.py makes: run make "
                            "rules-doc" % a.check)
    for p in problems:
        print("mkrules: " + p, file=sys.stderr)
    if not problems:
        print("mkrules: %d rules, %d checked with a failing test each, "
              "%d covered by scenarios" % (len(rules),
                                           sum(r["checked"] for r in rules),
                                           len([r for r in rules
                                                if r["id"] in cov])))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
