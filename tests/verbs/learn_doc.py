#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares what a docs/learn.md block shows with what a run printed, for
the two-process blocks tests/verbs/learn_pair.sh runs (docs_examples.py
cannot: they need two processes).

usage: learn_doc.py DOC NAME 'COMMAND PREFIX' OUTPUT_FILE
The block is the one whose doc-test mark ends with "(NAME)"; its console
step whose command starts with COMMAND PREFIX is compared with OUTPUT_FILE
by docs_examples.py's rules ("…" for any text). The run's addresses
127.0.0.190 and .191 are the doc's 127.0.0.101 and .102 (as long, so that
a ladder's columns stay in place).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lint"))
import docs_examples as de  # noqa: E402


def main(argv):
    doc, name, prefix, out = argv[1:5]
    want = [b for b in de.blocks(doc)
            if any(arg.rstrip().endswith("(%s)" % name) for _, arg in b.marks)]
    if len(want) != 1:
        print("%s: %d blocks marked (%s), not 1" % (doc, len(want), name))
        return 1
    steps = de.console(want[0].body)
    steps = [s for s in steps if s[0].startswith(prefix)] if not isinstance(steps, str) else []
    if len(steps) != 1:
        print("%s: the (%s) block has no step '%s'" % (doc, name, prefix))
        return 1
    text = open(out, encoding="utf-8").read()
    text = text.replace("127.0.0.190", "127.0.0.101").replace("127.0.0.191", "127.0.0.102")
    actual = de.clean(text)
    if de.matches(steps[0][1], actual):
        return 0
    print(de.diff(want[0].where(), steps[0][1], actual))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
