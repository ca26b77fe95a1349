#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layer rules of emu/, and no opcode or syndrome spelled in hex there.

usage: tests/lint/layers.py [ROOT]        check a tree (default: this repository)
       tests/lint/layers.py --self-test   check every fixture tree in tests/lint/layers/

Rule 1, includes. Every .c and .h file under proto/, analyze/, emu/,
conformance/ and include/rocemu/ is read; each #include is resolved as the compiler does
with the Makefile's flags: "x" first relative to the including file's
folder, then in INCLUDE_DIRS in order; <x> in INCLUDE_DIRS only (not found
there, it is a system header and is not judged). A file may include its own
folder, include/rocemu/ (the public API), and folders of lower rank in
LAYERS. obj and wire share a rank and so may not include each other, nor
may analyze (capture analysis on the codec) and emu/core. verbs,
rdmacm and cli use the public API only; installed public headers include only each
other. No .c or .h file lies directly in emu/, and a folder under emu/ that
is not in LAYERS is an error until it is added there. A quoted include
that resolves to nothing is a stale path. Rules: flat-file, unknown-folder,
include-upward, include-sibling, include-public-only (verbs, rdmacm,
cli and include/rocemu reaching past the public API), include-outside (a header in
no layer), stale-include, computed-include (#include MACRO), unreadable.

Conformance depends on the codec only. conformance/engine (rocemu
conform's engine) may include its own folder and the codec's public
headers (CODEC: those rocemu/proto.h gathers, and range.h), nothing else
of the tree; emu/cli reaches the engine through conformance/engine/conform.h
alone (ENGINE_API). conformance/agent (rocemu-agent) is a plain verbs
program: its own folder and system headers (<infiniband/verbs.h>), nothing
of the tree. Any other folder under conformance/ holding C is an
unknown-folder. Rules: include-codec-only (the engine past the codec),
include-agent-own (the agent past its folder).

Rule 2, opcodes and syndromes are named from proto's tables, so no hex
literal stands for one in emu/ (proto/ and include/rocemu/ hold the tables;
tests/ are not read: they spell the numbers of the specification on purpose,
to check those tables). The heuristic, on code with comments and string
and character literals blanked: a hex literal of at most 0xff (opcodes and
AETH syndromes are bytes, so P_Key and PSN masks, QPN ranges and hashing
constants never qualify) is flagged when its line names an identifier one
of whose '_'-separated parts is in KEY_PARTS (ib.bth.opcode, OP_READ_FIRST,
SYN_ACK, ack_syn, send_aeth), or when it lies in a function whose name has
such a part (seg_opcode; a function runs from a "{" alone at the start of
a line, kernel style, to the next "}" there). Rule: hex-opcode. Bytes
with unrelated names (MAC bytes, IP version nibbles) pass. Decimal
literals are not caught.

Rule 3, every function a header of emu/ declares has a contract comment
above it (what it does, what it returns on failure, what it leaves
unchanged): a prototype (a line starting a declaration that names a
function, not static, not a definition) must follow a comment directly,
each its own. Rule: no-contract.

Output: one line per violation, "file:line: rule: what", then a summary;
exit 1 on any violation, 0 otherwise, 2 on bad usage.

Self-test: each folder in tests/lint/layers/ is a tree. good/ must pass; each
bad_*/ holds an "expect" file listing "file:line: rule" for every
violation it must report, and the report must be exactly that set.
"""
import os
import re
import subprocess
import sys

PUBLIC = "include/rocemu"
LAYERS = {
    "proto": 0,
    "analyze": 1,
    "emu/core": 1,
    "emu/obj": 2,
    "emu/wire": 2,
    "emu/engine": 3,
    "emu/cm": 4,
    "emu/world": 5,
    "emu/verbs": 6,
    "emu/cli": 6,
    "emu/rdmacm": 6,
}
API_ONLY = {"emu/verbs", "emu/cli", "emu/rdmacm"}
ENGINE = "conformance/engine"
AGENT = "conformance/agent"
# The codec's public headers: what rocemu/proto.h gathers, and range.h.
CODEC = {PUBLIC + "/" + h for h in (
    "proto.h", "aeth.h", "cm.h", "datagram.h", "dissect.h", "frame.h", "ibhdr.h",
    "icrc.h", "ipid.h", "opcode.h", "packet.h", "pcapio.h", "psn.h",
    "range.h")}
# The one engine header emu/cli (cmd_conform.c, replay) may include.
ENGINE_API = ENGINE + "/conform.h"
INCLUDE_DIRS = ["include", "proto", "emu", ENGINE]  # the Makefile's -I
SCANNED = ["proto", "analyze", "emu", "conformance", PUBLIC]
KEY_PARTS = {"opcode", "op", "syndrome", "syn", "aeth"}

INCLUDE_RE = re.compile(r'\s*#\s*include\s*(?:"([^"]*)"|<([^>]*)>|(.*))')
HEX_RE = re.compile(r"\b0[xX]([0-9a-fA-F]+)[uUlL]*\b(?![.pP])")
IDENT_RE = re.compile(r"[A-Za-z_]\w*")
SIGNATURE_RE = re.compile(r"[A-Za-z_][^;]*?\b(\w+)\s*\(")


def layer_of(path):
    """Returns (kind, name) for a path relative to the root: kind is
    "layer" (name a key of LAYERS or PUBLIC), "flat" (directly in emu/),
    "unknown" (name the emu/ folder not in LAYERS) or "outside"."""
    parts = path.split("/")
    if path.startswith(PUBLIC + "/"):
        return ("layer", PUBLIC)
    if parts[0] == "proto" and len(parts) > 1:
        return ("layer", "proto")
    if parts[0] == "emu" and len(parts) == 2:
        return ("flat", None)
    if parts[0] == "emu" and len(parts) > 2:
        folder = "emu/" + parts[1]
        return ("layer" if folder in LAYERS else "unknown", folder)
    if parts[0] == "conformance" and len(parts) > 1:
        folder = "/".join(parts[:2]) if len(parts) > 2 else "conformance"
        return ("layer" if folder in (ENGINE, AGENT) else "unknown", folder)
    return ("outside", None)


def judge(src, dst):
    """The rule a file in layer src breaks by including a header in layer
    dst (None: no layer), or None if the include is allowed."""
    if dst == src or dst == PUBLIC:
        return None
    if dst is None:
        return "include-outside"
    if src == PUBLIC:
        return "include-public-only"
    if src in API_ONLY:
        return "include-sibling" if dst in API_ONLY else \
            "include-public-only"
    if LAYERS[dst] > LAYERS[src]:
        return "include-upward"
    if LAYERS[dst] == LAYERS[src]:
        return "include-sibling"
    return None


def allowed(src):
    """The layers a file in src may include, its own first."""
    others = [x for x in [PUBLIC] + list(LAYERS) if x != src]
    return ", ".join([src] + [x for x in others if judge(src, x) is None])


def blank_comments_and_literals(text):
    """text with comments and the insides of string and character literals
    replaced by spaces; newlines stay, so line numbers do too. A literal
    left open ends at its line's end."""
    out, i, n, state = [], 0, len(text), None
    while i < n:
        c, two = text[i], text[i:i + 2]
        if state is None:
            if two in ("/*", "//"):
                state, c = two, "  "
                i += 1
            elif c in "\"'":
                state = c
        elif state == "/*":
            if two == "*/":
                state, c = None, "  "
                i += 1
            elif c != "\n":
                c = " "
        elif c == "\n":
            state = None
        elif state == "//":
            c = " "
        elif c == "\\":
            c = "  " if text[i + 1:i + 2] != "\n" else " \n"
            i += 1
        elif c == state:
            state = None
        else:
            c = " "
        out.append(c)
        i += 1
    return "".join(out)


def resolve(root, src, name, quoted):
    """The path (relative to root) the compiler would open for an include
    of name from src, or None."""
    dirs = ([os.path.dirname(src)] if quoted else []) + INCLUDE_DIRS
    for d in dirs:
        path = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, path)):
            return path.replace(os.sep, "/")
    return None


def check_include(root, src, line):
    """Appends to out the violation of one #include line of src, if any."""
    m = INCLUDE_RE.match(line)
    quoted, angled, other = m.groups()
    if quoted is None and angled is None:
        return ("computed-include",
                "#include %s cannot be resolved here; write the path "
                "in quotes" % other.strip())
    name = quoted if quoted is not None else angled
    path = resolve(root, src, name, quoted is not None)
    if path is None:
        if quoted is None:
            return None    # a system header
        return ("stale-include",
                '"%s" resolves to no file (searched: %s)' %
                (name, ", ".join([os.path.dirname(src)] + INCLUDE_DIRS)))
    kind, src_layer = layer_of(src)
    if kind != "layer":
        return None    # the file itself is reported; its rank is unknown
    dkind, dst_layer = layer_of(path)
    conform = check_conformance(src_layer, path, dst_layer)
    if conform is not False:
        return conform
    rule = judge(src_layer, dst_layer if dkind == "layer" else None)
    if rule is None:
        return None
    where = dst_layer if dkind == "layer" else "no layer"
    return (rule, "%s includes %s (%s) (may include: %s)" %
            (src_layer, path, where, allowed(src_layer)))


def check_conformance(src_layer, path, dst_layer):
    """The violation of an include of path (in dst_layer) from src_layer
    under the conformance rules; None if allowed, False if those rules do
    not speak (neither side is conformance/)."""
    if src_layer == ENGINE:
        if dst_layer == ENGINE or path in CODEC:
            return None
        return ("include-codec-only", "%s includes %s; conformance "
                "depends on the codec only (may include: %s, %s)" % (
                    ENGINE, path, ENGINE,
                    ", ".join(sorted(os.path.basename(h) for h in CODEC))))
    if src_layer == AGENT:
        if dst_layer == AGENT:
            return None
        return ("include-agent-own", "%s includes %s; rocemu-agent is a "
                "plain verbs program (may include: %s, system headers)" %
                (AGENT, path, AGENT))
    if dst_layer in (ENGINE, AGENT):
        if src_layer == "emu/cli" and path == ENGINE_API:
            return None
        return ("include-public-only" if src_layer in API_ONLY else
                "include-outside", "%s includes %s (only emu/cli may "
                "include conformance/, and only %s)" % (
                    src_layer, path, ENGINE_API))
    return False


def check_place(src):
    """The violation of where src lies, if any."""
    kind, folder = layer_of(src)
    if kind == "flat":
        return ("flat-file", "%s lies directly in emu/; move it into a "
                "layer folder (%s)" % (src, ", ".join(
                    x for x in LAYERS if x.startswith("emu/"))))
    if kind == "unknown":
        return ("unknown-folder", "%s is not in the layer table; add it "
                "to LAYERS in tests/lint/layers.py with its rank, or move %s "
                "into a layer folder" % (folder, src))
    return None


def names_key(code):
    """True if code holds an identifier one of whose parts is a key."""
    return any(part.lower() in KEY_PARTS
               for ident in IDENT_RE.findall(code)
               for part in ident.split("_"))


def check_hex(lines, out):
    """Appends (line, rule, what) for each opcode or syndrome written in
    hex in lines (code with comments and literals blanked)."""
    signature, func = None, None
    for no, code in enumerate(lines, 1):
        m = SIGNATURE_RE.match(code)
        if m:
            signature = m.group(1)
        if code.rstrip() == "{":
            func = signature
        elif code.startswith("}"):
            func = None
        if names_key(code):
            why = "on a line naming an opcode or syndrome"
        elif func is not None and names_key(func):
            why = "in %s(), whose name says opcode or syndrome" % func
        else:
            continue
        for h in HEX_RE.finditer(code):
            if int(h.group(1), 16) <= 0xff:
                out.append((no, "hex-opcode", "%s %s; name it from "
                            "proto's tables" % (h.group(0), why)))


PROTO_RE = re.compile(r"[A-Za-z_][\w \t*]*?\b\w+\s*\(")
NOT_PROTO = ("static", "typedef", "#", "struct {", "enum {", "union {",
             "return", "if", "for", "while", "switch")


def check_contracts(raw, out):
    """Appends (line, rule, what) for each prototype in a header's raw
    lines that no comment speaks for."""
    before = None           # what the last non-blank line was
    in_comment = in_proto = False
    for no, line in enumerate(raw, 1):
        text = line.strip()
        if in_comment:
            if "*/" in text:
                in_comment, before = False, "comment"
            continue
        if in_proto:
            if ";" in text or "{" in text:
                in_proto = False
            continue
        if not text:
            before = None
        elif text.startswith("/*") or text.startswith("//"):
            in_comment = text.startswith("/*") and "*/" not in text
            before = "comment"
        elif (PROTO_RE.match(line) and not text.startswith(NOT_PROTO)
              and not line[0].isspace()):
            if before != "comment":
                name = re.match(r".*?\b(\w+)\s*\(", line).group(1)
                out.append((no, "no-contract", "%s() has no contract "
                            "comment above it" % name))
            before = "proto"
            in_proto = ";" not in text and "{" not in text
            if "{" in text:
                before = "other"
        else:
            before = "other"


def check_file(root, src, out):
    """Appends to out the violations of one file; returns the number of
    #include lines it read."""
    try:
        with open(os.path.join(root, src), encoding="utf-8",
                  errors="replace") as f:
            raw = f.read().split("\n")
    except OSError as e:
        out.append((src, 0, "unreadable", e.strerror or str(e)))
        return 0
    code = blank_comments_and_literals("\n".join(raw)).split("\n")
    found = []
    place = check_place(src)
    if place:
        found.append((1,) + place)
    includes = 0
    for no, (line, blank) in enumerate(zip(raw, code), 1):
        if INCLUDE_RE.match(blank):
            includes += 1
            v = check_include(root, src, line)
            if v:
                found.append((no,) + v)
    if src.startswith(("emu/", ENGINE + "/")):
        check_hex(code, found)
        if src.endswith(".h"):
            check_contracts(raw, found)
    out.extend((src, no, rule, what) for no, rule, what in found)
    return includes


def sources(root, scanned=SCANNED):
    """The .c and .h files under the scanned folders, sorted (also
    tests/lint/lint_ranges.sh's, with its own folders)."""
    found = []
    for top in scanned:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            rel = os.path.relpath(d, root).replace(os.sep, "/")
            found += [rel + "/" + x for x in sorted(files)
                      if x.endswith((".c", ".h"))]
    return sorted(set(found))


def check_tree(root):
    """Checks a tree and prints the result; returns the exit status."""
    if not os.path.isdir(root):
        print("layers: %s is not a folder" % root, file=sys.stderr)
        return 2
    out, files = [], sources(root)
    includes = sum(check_file(root, src, out) for src in files)
    out.sort(key=lambda v: (v[0], v[1], v[2]))
    for src, no, rule, what in out:
        print("%s:%d: %s: %s" % (src, no, rule, what))
    if not out:
        print("layers: %d files, %d includes checked" % (len(files),
                                                          includes))
        return 0
    rules = {}
    for v in out:
        rules[v[2]] = rules.get(v[2], 0) + 1
    print("layers: %d violations in %d of %d files (%s)" % (
        len(out), len({v[0] for v in out}), len(files),
        ", ".join("%s %d" % kv for kv in sorted(rules.items()))))
    return 1


def read_expect(path):
    """The set of (file, line, rule) a fixture's expect file lists."""
    want = set()
    if not os.path.exists(path):
        return want
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                where, rule = line.rsplit(":", 1)
                src, no = where.rsplit(":", 1)
                want.add((src, int(no), rule.strip()))
    return want


def self_test_one(fixture):
    """Runs this script on one fixture tree; returns a list of failures."""
    want = read_expect(os.path.join(fixture, "expect"))
    name = os.path.basename(fixture)
    if name.startswith("bad_") and not want:
        return ["%s: a bad fixture with nothing in its expect file" % name]
    run = subprocess.run([sys.executable, os.path.abspath(__file__),
                          fixture], capture_output=True, text=True)
    lines = run.stdout.splitlines()
    got = set()
    for line in lines[:-1]:
        m = re.match(r"([^:]+):(\d+): ([a-z-]+): ", line)
        if not m:
            return ["%s: a line not in the format: %s" % (name, line)]
        got.add((m.group(1), int(m.group(2)), m.group(3)))
    fails = ["%s: missing %s:%d: %s" % ((name,) + v)
             for v in sorted(want - got)]
    fails += ["%s: unexpected %s:%d: %s" % ((name,) + v)
              for v in sorted(got - want)]
    status = 1 if want else 0
    if run.returncode != status:
        fails.append("%s: exit %d, not %d (%s)" % (
            name, run.returncode, status, run.stderr.strip()))
    summary = lines[-1] if lines else ""
    if not want and not summary.startswith("layers: "):
        fails.append("%s: no summary line: %r" % (name, summary))
    return fails


def run_fixtures(fixtures, label, check_one):
    """Runs check_one (a folder -> a list of failures) on every fixture
    tree in fixtures, which must hold good/ and at least one bad_*/;
    prints the failures and a summary led by label; returns the exit
    status. tests/lint/lint_ranges.sh's self-test uses it too."""
    names = sorted(os.listdir(fixtures))
    if "good" not in names or not any(n.startswith("bad_") for n in names):
        print("%s self-test: %s needs good/ and bad_*/" % (label, fixtures))
        return 1
    fails = []
    for name in names:
        fails += check_one(os.path.join(fixtures, name))
    for f in fails:
        print("%s self-test: %s" % (label, f))
    verdict = "%d failures" % len(fails) if fails else "all as expected"
    print("%s self-test: %d fixtures, %s" % (label, len(names), verdict))
    return 1 if fails else 0


def self_test(fixtures):
    """Checks that good passes and each bad_* fails with the violations its
    expect file lists; returns the exit status."""
    return run_fixtures(fixtures, "layers", self_test_one)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if argv[1:] == ["--self-test"]:
        return self_test(os.path.join(here, "layers"))
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return check_tree(argv[1] if len(argv) == 2 else
                      os.path.dirname(os.path.dirname(here)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
