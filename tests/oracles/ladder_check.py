#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks rocemu ladder against the captures themselves.

usage: ladder_check.py --rocemu BIN --work DIR [--self-test]
                       [--compare COMMITTED.svg NEW.svg]
                       CAPTURE[+CAPTURE...][:TRACE[+TRACE...]] ...

For each capture, or captures of several processes merged into one
ladder, it runs `rocemu ladder --no-collapse` (with --trace for each
trace given, and --svg) and `rocemu dump --json` of each capture, and
checks, from the JSON:

  merge: a packet two captures hold (same addresses, ports, opcode, QP,
        PSN, payload length and ICRC; the k-th of equal ones in one
        capture is the k-th in the other) is one arrow, so the arrows
        are as many as the distinct packets; the arrows of each capture
        come in that capture's order;

  text: one arrow per RoCEv2 packet, each once; the arrow leaves the
        column whose address is the packet's source, reaches the column
        whose address is its destination and whose QP is its destination
        QP; its label names the opcode, the PSN, AckReq, the payload
        length and the AETH (type, NAK code, MSN) the packet carries, or
        for a MAD on QP1 the CM message (with a REQ's or REP's QPN and
        starting PSN, a REJ's reason) or the MAD's class; a
        chart's title counts its arrows; with a trace, each event of the
        trace sits on the lifeline of its address and QP, in file order,
        after the packets the capture held when it happened and before
        the next (for a trace that carries seen/last: the arrow right
        above it is the packet with that ICRC, when the chart has it); a
        send WQE is followed by a request from its QP (unless flushed)
        and a successful CQE follows a packet to its QP.
  SVG:  well-formed XML (python's parser); one <line class="packet"> per
        packet with the arrowhead marker, left to right exactly when the
        packet's source is the left column; a title, two head boxes and
        two lifelines per chart; rsvg-convert renders it to a PNG that is
        not blank, in which the blobs of the arrowhead colour (counted by
        the small PNG reader below) are as many as the packets.

--self-test checks the PNG reader and blob counter on a picture this
script draws itself (a known number of arrowheads).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

HEAD = (0xcc, 0x00, 0x77)  # ROCE_LADDER_SVG_HEAD in include/rocemu/ladder.h
SVG_NS = "{http://www.w3.org/2000/svg}"
AETH_TYPES = {0: "ACK", 1: "RNR_NAK", 2: "RESERVED", 3: "NAK"}
NAK_CODES = {0: "PSN_SEQ_ERR", 1: "INV_REQ", 2: "REM_ACCESS_ERR",
             3: "REM_OP_ERR", 4: "INV_RD_REQ"}

failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what)


# ---- PNG ------------------------------------------------------------------

def png_read(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB(A) PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(path + ": not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = body
        elif kind == b"IDAT":
            idat += body
    w, h = int.from_bytes(hdr[0:4], "big"), int.from_bytes(hdr[4:8], "big")
    depth, ctype, interlace = hdr[8], hdr[9], hdr[12]
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("%s: PNG depth %d type %d interlace %d unsupported"
                         % (path, depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        unfilter(f, line, prev, bpp)
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(f, line, prev, bpp):
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            line[i] = (line[i] + paeth(a, b, c)) & 255


def is_head(px):
    return all(abs(px[i] - HEAD[i]) <= 40 for i in range(3))


def count_blobs(w, h, rows):
    """Connected (4-neighbour) regions of the arrowhead colour."""
    seen = [[False] * w for _ in range(h)]
    blobs = 0
    for y in range(h):
        for x in range(w):
            if seen[y][x] or not is_head(rows[y][x]):
                continue
            blobs += 1
            stack = [(x, y)]
            seen[y][x] = True
            while stack:
                cx, cy = stack.pop()
                for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1),
                               (cx, cy - 1)):
                    if 0 <= nx < w and 0 <= ny < h and not seen[ny][nx] \
                            and is_head(rows[ny][nx]):
                        seen[ny][nx] = True
                        stack.append((nx, ny))
    return blobs


def non_white(rows):
    return sum(1 for r in rows for px in r if px != (255, 255, 255))


# ---- the capture's own view ----------------------------------------------

def dump_json(rocemu, cap):
    out = subprocess.run([rocemu, "dump", "--json", cap],
                         capture_output=True, text=True).stdout
    pkts = {}
    for line in out.splitlines():
        o = json.loads(line)
        if "frame" in o and "opcode_name" in o:
            pkts[o["frame"]] = o
    return pkts


def same_packet(p):
    return (p["src"], p["dst"], p["sport"], p["dport"], p["opcode"],
            p["dqpn"], p["psn"], p["payload_len"], p["icrc"])


def merged(rocemu, caps):
    """The captures' packets, keyed by (letter, frame) as the ladder
    names them ('' alone), each with its "id": the same for a packet two
    captures hold."""
    pkts, order = {}, []
    for c, cap in enumerate(caps):
        letter = chr(ord("a") + c) if len(caps) > 1 else ""
        seen = {}
        mine = []
        for no, p in sorted(dump_json(rocemu, cap).items()):
            k = same_packet(p)
            seen[k] = seen.get(k, 0) + 1
            p = dict(p, id=(k, seen[k]))
            pkts[(letter, no)] = p
            mine.append(p["id"])
        order.append(mine)
    return pkts, order


def read_trace(path):
    evs = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        # a why or state line ends in " text=" and words, spaces and all
        head, sep, text = line.rstrip("\n").partition(" text=")
        words = head.split()
        ev = dict(w.split("=", 1) for w in words[1:])
        ev["kind"] = words[0]
        if sep:
            ev["text"] = text
        if "rule" in ev:
            ev["rule"] = ev["rule"].replace("_", " ")
        evs.append(ev)
    return evs


# ---- the text ladder ------------------------------------------------------

TITLE = re.compile(r"^flow (\d+): (\S+), (\d+) packets")
HEADS = re.compile(r"^(\S+ qp (?:0x[0-9a-f]+|\?))\s+(\S+ qp (?:0x[0-9a-f]+|\?))$")
ARROW = re.compile(r"^  \|(.*)\|  #([a-p]?)(\d+) (-?\d+\.\d+)$")
NOTE = re.compile(r"^  \|(.*)\|  (-?\d+\.\d+)$")
CONT = re.compile(r"^  \|(.*)\|$")


def parse_text(text):
    charts = []
    for line in text.splitlines():
        m = TITLE.match(line)
        if m:
            charts.append({"flow": int(m.group(1)), "count": int(m.group(3)),
                           "ends": None, "rows": []})
            continue
        if not charts:
            continue
        ch = charts[-1]
        m = HEADS.match(line)
        if m and ch["ends"] is None:
            ch["ends"] = [m.group(1).split(" qp "), m.group(2).split(" qp ")]
            continue
        m = ARROW.match(line)
        if m:
            lane = m.group(1)
            a = re.match(r"^-+ (.*?) -+>$", lane)
            b = re.match(r"^<-+ (.*?) -+$", lane)
            if not (a or b):
                fail("not an arrow: %r" % line)
                continue
            ch["rows"].append({"kind": "arrow", "dir": 0 if a else 1,
                               "frame": (m.group(2), int(m.group(3))),
                               "label": (a or b).group(1)})
            continue
        m = NOTE.match(line)
        if m and m.group(1).strip():
            lane = m.group(1)
            if lane.strip().startswith("^ "):
                ch["rows"].append({"kind": "repeat",
                                   "label": lane.strip()[2:]})
                continue
            col = 0 if lane[0] in "*!=" else 1
            ch["rows"].append({"kind": "note", "col": col,
                               "label": lane.strip(" *!=")})
            continue
        # a why or state note's text goes on under it, with no time
        m = CONT.match(line)
        if m and m.group(1).strip() and ch["rows"] and \
                ch["rows"][-1]["kind"] == "note":
            ch["rows"][-1]["label"] += " " + m.group(1).strip()
    return charts


def qp_of(end):
    return None if end[1] == "?" else int(end[1], 16)


def check_mad_label(where, label, p):
    """A MAD on QP1: "CM <message>" and for a REQ or REP the QPN and
    starting PSN it announces, for a REJ its reason; another class's
    MAD "MAD class 0x..."."""
    mad = p["mad"]
    if "attr_name" not in mad:
        want = "MAD class 0x%02x" % mad["mgmt_class"]
    else:
        want = "CM " + mad["attr_name"]
        cm = p.get("cm", {})
        if "starting_psn" in cm:
            want += " qpn 0x%x psn 0x%x" % (cm["local_qpn"], cm["starting_psn"])
        elif "reason" in cm:
            want += " %d" % cm["reason"]
    if label != want and not label.startswith(want + " "):
        fail("%s: label %r, the MAD says %r" % (where, label, want))


def check_label(where, label, p):
    if "mad" in p:
        check_mad_label(where, label, p)
        return
    words = label.split()
    if words[0] != p["opcode_name"]:
        fail("%s: label %r does not start with %s" % (where, label,
                                                      p["opcode_name"]))
    if "psn 0x%06x" % p["psn"] not in label:
        fail("%s: label %r lacks psn 0x%06x" % (where, label, p["psn"]))
    if ("A" in words) != bool(p["ackreq"]):
        fail("%s: label %r, AckReq %d" % (where, label, p["ackreq"]))
    m = re.search(r" len (\d+)", label)
    if m and int(m.group(1)) != p["payload_len"]:
        fail("%s: label %r, payload %d" % (where, label, p["payload_len"]))
    if "aeth" in p:
        a = p["aeth"]
        syn = a["syndrome"]
        want = AETH_TYPES[(syn >> 5) & 3]
        if want == "NAK":
            want += " " + NAK_CODES.get(syn & 31, "")
        want += "" if want != "RNR_NAK" else ""
        if want not in label or "msn %d" % a["msn"] not in label:
            fail("%s: label %r lacks %s msn %d" % (where, label, want,
                                                  a["msn"]))


def check_arrows(name, charts, pkts, order):
    seen = {}
    for ch in charts:
        if ch["ends"] is None:
            fail("%s flow %d: no column heads" % (name, ch["flow"]))
            continue
        arrows = [r for r in ch["rows"] if r["kind"] == "arrow"]
        if len(arrows) != ch["count"]:
            fail("%s flow %d: title says %d packets, %d arrows" %
                 (name, ch["flow"], ch["count"], len(arrows)))
        for r in arrows:
            where = "%s frame #%s%d" % (name, *r["frame"])
            p = pkts.get(r["frame"])
            if p is not None:
                seen[p["id"]] = seen.get(p["id"], 0) + 1
                r["id"] = p["id"]
            if p is None:
                fail(where + ": an arrow for no RoCEv2 packet")
                continue
            src, dst = ch["ends"][r["dir"]], ch["ends"][1 - r["dir"]]
            if src[0] != p["src"] or dst[0] != p["dst"]:
                fail("%s: arrow %s > %s, packet %s > %s" %
                     (where, src[0], dst[0], p["src"], p["dst"]))
            if qp_of(dst) not in (None, p["dqpn"]):
                fail("%s: arrow reaches qp %s, packet's dqpn 0x%x" %
                     (where, dst[1], p["dqpn"]))
            check_label(where, r["label"], p)
    for no, p in pkts.items():
        if seen.get(p["id"]) != 1:
            fail("%s frame #%s%d: %d arrows, not 1" %
                 (name, no[0], no[1], seen.get(p["id"], 0)))
    for c, mine in enumerate(order):
        for ch in charts:
            drawn = [r["id"] for r in ch["rows"] if "id" in r]
            held = set(mine)
            got = [i for i in drawn if i in held]
            want = [i for i in mine if i in set(got)]
            if got != want:
                fail("%s flow %d: arrows out of capture %d's order" %
                     (name, ch["flow"], c))
    return sum(seen.values())


def check_notes(name, charts, evs):
    """Each event on its own lifeline, in order, between the right packets."""
    placed = 0
    for ch in charts:
        if ch["ends"] is None:
            continue
        mine = [(e, c) for e in evs for c in (0, 1)
                if ch["ends"][c][0] == e["gid"] and
                qp_of(ch["ends"][c]) == int(e["qp"], 16)]
        notes = [(i, r) for i, r in enumerate(ch["rows"])
                 if r["kind"] == "note"]
        if len(notes) != len(mine):
            fail("%s flow %d: %d notes for %d events" %
                 (name, ch["flow"], len(notes), len(mine)))
            continue
        # each column's notes in its events' order (two processes'
        # events interleave by the packets they follow)
        pairs = []
        for col in (0, 1):
            pairs += zip([n for n in notes if n[1]["col"] == col],
                         [m for m in mine if m[1] == col])
        if len(pairs) != len(notes):
            fail("%s flow %d: notes in the wrong columns" % (name, ch["flow"]))
        for (i, r), (e, col) in sorted(pairs, key=lambda x: x[0][0]):
            if e["kind"] in ("why", "state"):
                check_text_note(name, r, e, col)
                continue
            ring = {"wqe": "SQ", "rwqe": "RQ", "cqe": "CQ"}[e["kind"]]
            want = "%s %s[%s] %s" % ("CQE" if ring == "CQ" else "WQE", ring,
                                     e["slot"], e["op"])
            if not r["label"].startswith(want) or r["col"] != col:
                fail("%s: note %r in column %d, event wants %r in %d" %
                     (name, r["label"], r["col"], want, col))
            if e.get("seen", "0") != "0" or e.get("last", "0x0") != "0x00000000":
                after_icrc(name, ch, i, e, want)
                causal(name, ch["rows"], i, e, col)
                placed += 1
                continue
            before = [x["frame"][1] for x in ch["rows"][:i] if x["kind"] == "arrow"]
            after = [x["frame"][1] for x in ch["rows"][i:] if x["kind"] == "arrow"]
            frames = int(e["frames"])
            if (before and before[-1] > frames) or (after and after[0] <= frames):
                fail("%s: %r (after %d frames) placed between frames %s and %s"
                     % (name, want, frames, before[-1:] or "-",
                        after[:1] or "-"))
            causal(name, ch["rows"], i, e, col)
            placed += 1
    return placed


def check_text_note(name, r, e, col):
    """A why or state note says its event's whole text (and a why its
    rule), however many lines it takes, in its event's column."""
    full = "%s: %s" % (e["kind"], e["text"])
    if e["kind"] == "why" and e.get("rule", "-") != "-":
        full += " [%s]" % e["rule"]
    words = lambda t: "".join(t.split())  # wrapped anywhere
    if words(r["label"]) != words(full) or r["col"] != col:
        fail("%s: note %r in column %d, event wants %r in %d" %
             (name, r["label"], r["col"], full, col))


def after_icrc(name, ch, i, e, want):
    """An event that names the last frame its device saw (by ICRC) sits
    right after that packet, when the chart holds it: the arrow nearest
    above it has that ICRC."""
    icrc = int(e["last"], 16)
    arrows = [r for r in ch["rows"] if r["kind"] == "arrow" and "id" in r]
    if not any(int(r["id"][0][8], 16) == icrc and e["gid"] in r["id"][0][:2]
               for r in arrows):
        return
    above = [r for r in ch["rows"][:i] if r["kind"] == "arrow"]
    if not above or "id" not in above[-1] or \
            int(above[-1]["id"][0][8], 16) != icrc:
        fail("%s: %r (after the packet with ICRC 0x%08x) follows %s" %
             (name, want, icrc, above[-1]["label"] if above else "nothing"))


def causal(name, rows, i, e, col):
    """What the verbs say must surround an event: a posted send WQE is
    followed by a request from its QP (unless its QP is in error, and it
    is flushed); a successful CQE comes after a packet that reached its
    QP (an ACK or response for a send, the message for a receive)."""
    arrows_before = [r for r in rows[:i] if r["kind"] == "arrow"]
    arrows_after = [r for r in rows[i:] if r["kind"] == "arrow"]
    flushed = any(r["kind"] == "note" and "WR_FLUSH_ERR" in r["label"]
                  and ("wr_id %s " % e["wr_id"]) in r["label"] + " "
                  for r in rows[i:])
    if e["kind"] == "wqe" and not flushed and \
            not any(r["dir"] == col for r in arrows_after):
        fail("%s: WQE SQ[%s] is followed by no packet from its QP" %
             (name, e["slot"]))
    if e["kind"] == "cqe" and e["status"] == "SUCCESS" and \
            not any(r["dir"] != col for r in arrows_before):
        fail("%s: CQE CQ[%s] %s comes before any packet reached its QP" %
             (name, e["slot"], e["op"]))


# ---- the SVG ladder -------------------------------------------------------

def check_svg(name, svg, png, charts, pkts):
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        fail("%s: not well-formed XML: %s" % (svg, e))
        return
    if root.tag != SVG_NS + "svg":
        fail("%s: root is %s" % (svg, root.tag))
    heads = [m for m in root.iter(SVG_NS + "marker") if m.get("id") == "head"]
    fills = [p.get("fill") for m in heads for p in m.iter(SVG_NS + "path")]
    if fills != ["#%02x%02x%02x" % HEAD]:
        fail("%s: arrowhead marker fills %s" % (svg, fills))
    groups = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "chart"]
    if len(groups) != len(charts):
        fail("%s: %d charts, the text has %d" % (svg, len(groups), len(charts)))
    arrows = 0
    for g, ch in zip(groups, charts):
        kids = list(g)
        lifelines = [k for k in kids if k.get("class") == "lifeline"]
        boxes = [k for k in kids if k.get("class") == "end"]
        titles = [k for k in kids if k.get("class") == "title"]
        if len(lifelines) != 2 or len(boxes) != 2 or len(titles) != 1:
            fail("%s %s: %d lifelines, %d heads, %d titles" %
                 (svg, g.get("id"), len(lifelines), len(boxes), len(titles)))
            continue
        left_x = float(lifelines[0].get("x1"))
        texts = [k.text for k in kids if k.tag == SVG_NS + "text"]
        ends = [t.split(" qp ")[0] for t in texts[1:3]]
        for i, k in enumerate(kids):
            if k.get("class") != "packet":
                continue
            arrows += 1
            if k.get("marker-end") != "url(#head)":
                fail("%s: a packet line without the arrowhead" % svg)
            m = re.match(r"#([a-p]?)(\d+) ", kids[i + 2].text or "")
            p = pkts.get((m.group(1), int(m.group(2)))) if m else None
            if p is None:
                fail("%s: a packet line for no packet" % svg)
                continue
            rightward = float(k.get("x1")) < float(k.get("x2"))
            sender = ends[0] if rightward else ends[1]
            if float(k.get("x1")) not in (left_x, float(lifelines[1].get("x1"))) \
                    or sender != p["src"]:
                fail("%s frame %d: drawn from %s, sent by %s" %
                     (svg, p["frame"], sender, p["src"]))
            check_label("%s frame %d" % (svg, p["frame"]), kids[i + 1].text, p)
    distinct = len(set(p["id"] for p in pkts.values()))
    if arrows != distinct:
        fail("%s: %d packet lines for %d packets" % (svg, arrows, distinct))
    r = subprocess.run(["rsvg-convert", "-o", png, svg], capture_output=True,
                       text=True)
    if r.returncode:
        fail("%s: rsvg-convert: %s" % (svg, r.stderr.strip()))
        return
    w, h, rows = png_read(png)
    ink = non_white(rows)
    if ink < w * h // 100:
        fail("%s: only %d of %d pixels are not white" % (png, ink, w * h))
    blobs = count_blobs(w, h, rows)
    if blobs != distinct:
        fail("%s: %d arrowheads in the picture, %d packets in the capture" %
             (png, blobs, distinct))
    return blobs


def check_one(rocemu, work, spec):
    cap, _, trace = spec.partition(":")
    caps = cap.split("+")
    traces = trace.split("+") if trace else []
    name = "+".join(os.path.basename(c) for c in caps)
    base = os.path.join(work, os.path.splitext(os.path.basename(caps[0]))[0])
    if len(caps) > 1:
        base += "_merged"
    cmd = [rocemu, "ladder", "--no-collapse"] + caps + ["--svg", base + ".svg"]
    for t in traces:
        cmd += ["--trace", t]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        fail("%s: rocemu ladder exit %d: %s" % (name, r.returncode, r.stderr))
        return
    for line in r.stdout.splitlines():
        if len(line) > 100:
            fail("%s: a line of %d columns: %r" % (name, len(line), line))
    pkts, order = merged(rocemu, caps)
    charts = parse_text(r.stdout)
    n = check_arrows(name, charts, pkts, order)
    evs = [e for t in traces for e in read_trace(t)]
    notes = check_notes(name, charts, evs) if traces else 0
    blobs = check_svg(name, base + ".svg", base + ".png", charts, pkts)
    print("%-28s %3d packets: %3d arrows, %2d notes; SVG %s arrowheads" %
          (name, len(set(p["id"] for p in pkts.values())), n, notes, blobs))


def self_test(work):
    """The counter on a picture of k arrowheads drawn here, not by rocemu."""
    k = 7
    svg = os.path.join(work, "self.svg")
    with open(svg, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="200" '
                'height="%d"><rect width="100%%" height="100%%" fill="white"/>'
                % (30 * k))
        for i in range(k):
            f.write('<line x1="10" y1="%d" x2="180" y2="%d" stroke="black"/>'
                    '<path d="M180,%d l-12,-5 l0,10 z" fill="#%02x%02x%02x"/>'
                    % (15 + 30 * i, 15 + 30 * i, 15 + 30 * i, *HEAD))
        f.write("</svg>\n")
    png = os.path.join(work, "self.png")
    subprocess.run(["rsvg-convert", "-o", png, svg], check=True)
    w, h, rows = png_read(png)
    got = count_blobs(w, h, rows)
    if got != k:
        fail("self-test: counted %d arrowheads of %d" % (got, k))
    print("self-test: %d arrowheads drawn, %d counted" % (k, got))


def svg_rows(path):
    """What a committed ladder and a new one must share: per chart its
    title and heads, per row the arrow's direction and label or the
    note's label; not the times, which differ from run to run."""
    rows = []
    for g in ET.parse(path).getroot().iter(SVG_NS + "g"):
        for k in g:
            if k.get("class") == "packet":
                right = float(k.get("x1")) < float(k.get("x2"))
                rows.append("arrow " + ("->" if right else "<-"))
            elif k.tag == SVG_NS + "text" and not re.match(r"#\d+ ", label_of(k)):
                label = label_of(k)
                if label.startswith("why: "):
                    # a reason names keys a run chooses afresh
                    label = re.sub(r"0x[0-9a-f]+", "0x?", label)
                rows.append(label)
    return rows


def label_of(text):
    """A <text>'s own words, without the <title> a why or state note
    carries its whole text in."""
    return (text.text or "") + "".join((c.tail or "") for c in text)


def compare(old, new):
    a, b = svg_rows(old), svg_rows(new)
    if a != b:
        for i, (x, y) in enumerate(zip(a + ["(end)"] * len(b),
                                       b + ["(end)"] * len(a))):
            if x != y:
                fail("%s and %s differ at row %d: %r, now %r" %
                     (old, new, i, x, y))
                break
    else:
        print("%s: %d arrows and labels as committed" %
              (old, sum(r.startswith("arrow") for r in a)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rocemu", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--compare", nargs=2, metavar=("COMMITTED", "NEW"),
                    action="append", default=[],
                    help="two SVG ladders with the same arrows and labels")
    ap.add_argument("captures", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if a.self_test:
        self_test(a.work)
    for spec in a.captures:
        check_one(a.rocemu, a.work, spec)
    for old, new in a.compare:  # after the captures, which write new
        compare(old, new)
    print("ladder: %s" % ("%d failures" % len(failures) if failures
                          else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
