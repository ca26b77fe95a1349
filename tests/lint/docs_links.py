#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every relative link of README.md, INSTALL.md, TESTING.md, CONTRIBUTING.md,
tests/README.md, examples/README.md, docs/*.md and
conformance/*.md names a file that exists, and a '#anchor' a heading of
that file (GitHub's rule: lower case, punctuation dropped, spaces to
hyphens). Prints each broken link as
FILE:LINE: TARGET and exits 1 if there is one.
usage: tests/lint/docs_links.py  (from the top of the tree)"""
import glob
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path):
    out, fence = set(), False
    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"#{1,6} (.*)", line)
            if m:
                a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
                out.add(a.replace(" ", "-"))
    return out


def main():
    bad = 0
    pages = ["README.md", "INSTALL.md", "TESTING.md", "CONTRIBUTING.md",
             "tests/README.md", "examples/README.md"] + sorted(glob.glob("docs/*.md")) + \
        sorted(glob.glob("conformance/*.md"))
    for page in pages:
        with open(page) as f:
            lines = f.read().split("\n")
        fence = False
        for n, line in enumerate(lines, 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, frag = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(page),
                                                     path)) if path else page
                if not os.path.exists(full):
                    why = "no such file"
                elif frag and full.endswith(".md") and \
                        frag not in anchors(full):
                    why = "no such heading"
                else:
                    continue
                print("%s:%d: %s: %s" % (page, n, target, why))
                bad += 1
    print("docs_links: %d pages, %d broken links" % (len(pages), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
