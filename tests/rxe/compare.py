#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare two captures of one scenario (rxe <-> rxe and rocemu <-> rocemu).

Each capture is decoded by `rocemu dump --json` (the project's own codec,
which also verifies every ICRC). What may legitimately differ between two
runs of the same programs is normalized away: QPNs, start PSNs, keys and
virtual addresses (compared by consistency), addresses, MACs, UDP source
ports, IPv4 ID and checksums, times, the interleaving of the two
directions. What remains is compared packet by packet per direction.

Every accepted difference carries the ID of its entry in
conformance/differences.md (one marked `compare: yes`); a difference
without an ID is unlisted and makes the exit status 1.

With --cm only the CM MADs (QP1, management class 7) of the two captures
are compared, message by message per direction (the client is the side
that sent the first REQ): every MAD header, CM body and path field and the
packet's own header fields must be equal, except what each run picks
afresh (comm IDs, transaction IDs, QPNs, starting PSNs, the CA GUID, the
active side's source port, the addresses), which is compared by
consistency instead: a remote comm ID must be the peer's local comm ID, a
DREQ's remote QPN the peer's local QPN, a GID or CMA address the sender's
or the receiver's own address.

usage: compare.py [--rocemu BIN] [--differences FILE] [--cm] A.pcap B.pcap [NAME]
       compare.py [--rocemu BIN] --dirs RXE_DIR ROCEMU_DIR
Exit status: 0 when every difference is listed, 1 when one is not, 2 for a
usage or decoding error.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PSN_MOD = 1 << 24

# RC opcodes (low five bits, transport RC) sent by a responder.
RESPONSE_OPS = {0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12}
READ_REQ = 0x0C

DIFFERENCES = os.path.join(os.path.dirname(os.path.dirname(HERE)),
                           "conformance", "differences.md")
# The IDs of the rules this program implements; what each accepts is
# written once, in the differences list, whose `compare: yes` entries must
# be exactly these.
RULES = {"DUP-REQ", "DUP-RESP", "FA-COMPARE", "ATOMIC-ORIG", "UC-ACKREQ",
         "ACK-COALESCE", "NAK-AHEAD", "CM-RESEND", "SRQ-ROUNDS"}
# The rules of the lab's part gid, which gid_check.py applies to the
# IPv6 flow label on the wire and in a UD receiver's GRH, to the hop limit
# and to the UDP source port of GID 0's packets.
GID_RULES = {"FLOW-LABEL-RXE", "HOP-LIMIT-ROUTE"}
# Scenarios whose program sends a number of messages per QP that depends on
# the order its completions come in (SRQ-ROUNDS).
ROUNDS_VARY = {"srq"}
# A CM rule: (rule ID, message or None for any, field, a's (rxe's) value
# or None for any, b's (rocemu's) value or None for any): that field of
# that message may differ so, and only so. Each is described by its entry
# in the differences list.
CM_FIELD_RULES = [
    ("CM-UD-ACKREQ", None, "ackreq", True, False),
    ("CM-UDP-CSUM", None, "udp_csum_zero", True, False),
    ("CM-FLOW-LABEL", "REQ", "cm_path.flow_label!=0", True, False),
    ("CM-ACK-DELAY", "REP", "cm.target_ack_delay", None, 0),
    ("CM-ACK-TIMEOUT", "REQ", "cm_path.local_ack_timeout", None, None),
]


class Packet:
    """One RoCEv2 packet, normalized."""

    def __init__(self, raw, index):
        self.raw = raw
        self.index = index  # 1-based frame number in its capture
        self.op = raw["opcode"]
        self.name = raw.get("opcode_name", "?")
        self.is_response = (self.op >> 5) == 0 and \
            (self.op & 0x1F) in RESPONSE_OPS
        self.dir = None      # "C>S" or "S>C"
        self.space = None    # role whose send queue numbers this PSN
        self.rel_psn = None
        self.fields = {}
        self.note = ""


def decode(rocemu, path):
    """The packets of a capture as dicts, from `rocemu dump --json`."""
    try:
        out = subprocess.run([rocemu, "dump", "--json", path],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        sys.exit("compare: cannot run %s: %s" % (rocemu, e))
    if out.returncode not in (0, 1):
        sys.exit("compare: rocemu dump %s failed: %s" %
                 (path, out.stderr.strip()))
    pkts = []
    for line in out.stdout.splitlines():
        d = json.loads(line)
        if "frame" in d and "opcode" in d:
            pkts.append(Packet(d, d["frame"]))
    return pkts


# ---- CM MADs (--cm) ----

CM_CLASS = 0x07
# Fields each run picks afresh, compared by consistency (cm_normalize).
CM_FRESH = {"mad.tid", "cm.local_comm_id", "cm.remote_comm_id",
            "cm.local_qpn", "cm.starting_psn", "cm.local_ca_guid",
            "cm.remote_qpn", "ip_cm.src_port", "psn", "deth.src_qp",
            "dqpn", "sport", "ip_id", "ip_csum", "icrc", "icrc_calc",
            "time", "frame", "eth_src", "eth_dst", "src", "dst"}
# Header fields of the packet that carries the MAD, compared as they are.
CM_PACKET = ("opcode_name", "se", "migreq", "pad", "tver", "pkey", "fecn",
             "becn", "resv6", "ackreq", "resv7", "payload_len", "udp_len",
             "ip_version", "tos", "ttl", "dport", "icrc_ok", "status")


def cm_mads(pkts):
    """The packets of a decoded capture that carry a CM MAD."""
    return [p for p in pkts if p.raw.get("mad", {}).get("mgmt_class") ==
            CM_CLASS]


def cm_normalize(mads):
    """Fill each CM MAD's direction and its compared fields (p.fields).

    The client is the sender of the first REQ (else of the first MAD).
    Values a run picks afresh become facts about them: whether a remote
    comm ID is the peer's local one, a DREQ's remote QPN the peer's QPN,
    a GID or address the sender's (self) or the receiver's (peer)."""
    if not mads:
        return
    first = next((p for p in mads if p.raw["mad"].get("attr_name") ==
                  "REQ"), mads[0])
    client = first.raw["src"]
    comm, qpn = {}, {}      # role -> its local comm ID, its QPN
    for p in mads:
        cm = p.raw.get("cm", {})
        role = "C" if p.raw["src"] == client else "S"
        if "local_comm_id" in cm:
            comm.setdefault(role, cm["local_comm_id"])
        if "local_qpn" in cm:
            qpn.setdefault(role, cm["local_qpn"])
    for p in mads:
        r = p.raw
        src = "C" if r["src"] == client else "S"
        dst = "S" if src == "C" else "C"
        p.dir = src + ">" + dst
        p.name = "CM_" + r["mad"].get("attr_name", "?")
        p.rel_psn = 0
        own = {r["src"]: "self", r["dst"]: "peer"}
        f = p.fields
        for k in CM_PACKET:
            f[k] = r.get(k)
        f["udp_csum_zero"] = r.get("udp_csum") == 0
        if r.get("ip_version") == 4:
            f["ip_df"] = bool(r.get("ip_flags_frag", 0) & 0x4000)
        f["deth.qkey"] = "0x%08x" % r.get("deth", {}).get("qkey", 0)
        f["dqpn"] = r.get("dqpn")
        f["deth.src_qp"] = r.get("deth", {}).get("src_qp")
        for part in ("mad", "cm", "cm_path", "ip_cm"):
            for k, v in r.get(part, {}).items():
                key = part + "." + k
                if key in CM_FRESH:
                    continue
                if k in ("local_gid", "remote_gid", "src", "dst") and \
                        part in ("cm_path", "ip_cm"):
                    v = own.get(v, "other")
                if key == "cm_path.flow_label":
                    # a hash of the ports where it is set: whether it is
                    key, v = key + "!=0", v != 0
                f[key] = v
        cm = r.get("cm", {})
        if "local_comm_id" in cm:
            f["cm.local_comm_id!=0"] = cm["local_comm_id"] != 0
        if "remote_comm_id" in cm:
            f["cm.remote_comm_id=peer's"] = cm["remote_comm_id"] == \
                comm.get(dst)
        if "remote_qpn" in cm:
            f["cm.remote_qpn=peer's"] = cm["remote_qpn"] == qpn.get(dst)


def cm_field_rule(field, p, q):
    """The rule ID that allows field of the CM MAD p (in a) to differ from
    q's (in b), or None."""
    for rule, msg, fld, va, vb in CM_FIELD_RULES:
        if msg in (None, p.name[3:]) and fld == field and \
                va in (None, p.fields.get(field)) and \
                vb in (None, q.fields.get(field)):
            return rule
    return None


def cm_drop_resent(mads):
    """Split off MADs sent again by the CM's own timer: one equal to an
    earlier MAD of the same direction in every compared field and in its
    transaction ID. Returns (kept, listed)."""
    kept, listed, seen = [], [], {}
    for p in mads:
        key = (p.dir, p.raw["mad"].get("tid"),
               tuple(sorted(p.fields.items())))
        if key in seen:
            listed.append(("CM-RESEND", p, "equals frame %d" %
                           seen[key].index))
            continue
        seen[key] = p
        kept.append(p)
    return kept, listed


def cm_compare(name, a_pkts, b_pkts, labels=("rxe", "rocemu")):
    """Compare the CM MADs of two decoded captures; returns a Report."""
    rep = Report(name, *labels)
    sides = []
    for label, pkts in zip(labels, (a_pkts, b_pkts)):
        mads = cm_mads(pkts)
        cm_normalize(mads)
        kept, listed = cm_drop_resent(mads)
        for rule, p, text in listed:
            rep.listed.append((rule, "%s %s: %s" % (label, describe(p),
                                                    text)))
        sides.append(kept)
    if not sides[0] or not sides[1]:
        for label, side in zip(labels, sides):
            if not side:
                rep.unlisted.append("%s has no CM MAD" % label)
    for d in ("C>S", "S>C"):
        xs = [p for p in sides[0] if p.dir == d]
        ys = [p for p in sides[1] if p.dir == d]
        sm = difflib.SequenceMatcher(a=[p.name for p in xs],
                                     b=[q.name for q in ys], autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            pairs = list(zip(xs[i1:i2], ys[j1:j2]))
            for p, q in pairs:
                rep.compared += 1
                if tag == "equal":
                    compare_fields(rep, p, q, cm_field_rule)
                else:
                    rep.unlisted.append("%s: %s has %s, %s has %s (#%d)" %
                                        (d, labels[0], describe(p),
                                         labels[1], q.name, q.index))
            for p in xs[i1 + len(pairs):i2]:
                rep.unlisted.append("%s: only %s has %s" %
                                    (d, labels[0], describe(p)))
            for q in ys[j1 + len(pairs):j2]:
                rep.unlisted.append("%s: only %s has %s" %
                                    (d, labels[1], describe(q)))
    return rep


class Namer:
    """Gives each value an ordinal per kind in order of first appearance."""

    def __init__(self):
        self.maps = {}

    def __call__(self, kind, value):
        m = self.maps.setdefault(kind, {})
        return m.setdefault(value, len(m))


def qpn_ranks(pkts, role_of):
    """Each role's QPNs ranked by value: QPs are numbered in the order
    they are made, on rxe as on rocemu, so rank i on one side of a run
    talks to rank i on the other (both programs make their QPs in the
    same order); the rank is what two runs have in common."""
    seen = {"C": set(), "S": set()}
    for p in pkts:
        src, dst = role_of(p)
        seen[dst].add(p.raw["dqpn"])
        if "deth" in p.raw:
            seen[src].add(p.raw["deth"]["src_qp"])
    return {r: {q: i for i, q in enumerate(sorted(v))}
            for r, v in seen.items()}


def normalize(pkts):
    """Fill each packet's direction, PSN space, relative PSN and fields.

    A PSN space is one requester QP's send queue: its requests and the
    responses to them. Spaces are named by role (C, the first sender, or
    S) and QP rank: "C0" is the client's first QP."""
    if not pkts:
        return
    client = pkts[0].raw["src"]

    def role_of(p):
        src = "C" if p.raw["src"] == client else "S"
        return src, "S" if src == "C" else "C"

    rank = qpn_ranks(pkts, role_of)
    base = {}
    name = Namer()
    va_base = {}
    for p in pkts:
        r = p.raw
        src, dst = role_of(p)
        p.dir = src + ">" + dst
        dq = rank[dst][r["dqpn"]]
        if r["transport"] == "UD":
            p.space = "%s%d-ud" % (src, rank[src][r["deth"]["src_qp"]]
                                   if "deth" in r else 0)
        elif p.is_response:
            p.space = "%s%d" % (dst, dq)
        else:
            p.space = "%s%d" % (src, dq)
        b = base.setdefault(p.space, r["psn"])
        p.rel_psn = (r["psn"] - b) % PSN_MOD
        f = p.fields
        f["opcode"] = p.name
        for k in ("se", "migreq", "pad", "tver", "pkey", "fecn", "becn",
                  "resv6", "ackreq", "resv7", "payload_len", "udp_len",
                  "ip_version", "tos", "ttl"):
            f[k] = r.get(k)
        f["icrc_ok"] = r.get("icrc_ok")
        f["udp_csum_zero"] = r.get("udp_csum") == 0
        if r.get("ip_version") == 4:
            f["ip_df"] = bool(r.get("ip_flags_frag", 0) & 0x4000)
        f["dqpn#"] = dq
        if "aeth" in r:
            f["aeth.syndrome"] = "0x%02x" % r["aeth"]["syndrome"]
            f["aeth.msn"] = r["aeth"]["msn"]
        if "deth" in r:
            f["deth.qkey"] = "0x%08x" % r["deth"]["qkey"]
            f["deth.src_qp#"] = rank[src][r["deth"]["src_qp"]]
        if "immdt" in r:
            f["immdt"] = "0x%08x" % r["immdt"]["imm"]
        if "ieth" in r:
            f["ieth.rkey#"] = name("key-" + dst, r["ieth"]["rkey"])
        for ext in ("reth", "atomiceth"):
            if ext in r:
                e = r[ext]
                key = name("key-" + dst, e["rkey"])
                f[ext + ".rkey#"] = key
                va = int(e["va"], 16)
                vb = va_base.setdefault((dst, key), va)
                f[ext + ".va+"] = va - vb
                if ext == "reth":
                    f["reth.len"] = e["len"]
                else:
                    f["atomiceth.swap_add"] = e["swap_add"]
                    f["atomiceth.compare"] = e["compare"]
        if "atomicacketh" in r:
            f["atomicacketh.orig"] = r["atomicacketh"]["orig"]


def syndrome_kind(p):
    s = p.raw.get("aeth", {}).get("syndrome")
    if s is None:
        return None
    return {0: "ack", 1: "rnr", 2: "rsvd", 3: "nak"}[(s >> 5) & 3]


def is_seq_nak(p):
    """A NAK with code PSN sequence error (AETH syndrome 0x60)."""
    return p.is_response and p.raw.get("aeth", {}).get("syndrome") == 0x60


def drop_ahead(pkts):
    """Split off the requests a responder discarded after a lost packet.

    When request n of a space is lost, the responder NAKs the first later
    request with a sequence error for n and silently discards every
    request after n until n comes again (IBTA 9.7.5.1.1); how many the
    requester sent before the NAK reached it is timing. Such a request
    (PSN past n, seen before n's first retransmission, in a space that
    holds a sequence NAK for n) is listed and left out of the comparison.
    Returns (kept, listed) where listed holds (rule, packet, text)."""
    ahead = set()
    for k, nak in enumerate(pkts):
        if not is_seq_nak(nak):
            continue
        n = nak.rel_psn
        resent = next((j for j in range(k + 1, len(pkts))
                       if pkts[j].space == nak.space and
                       not pkts[j].is_response and
                       pkts[j].rel_psn == n), len(pkts))
        for j in range(resent):
            q = pkts[j]
            if q.space == nak.space and not q.is_response and \
                    q.rel_psn > n and \
                    not any(r.space == q.space and not r.is_response and
                            r.rel_psn == n for r in pkts[:j]):
                ahead.add(j)
    kept, listed = [], []
    for j, p in enumerate(pkts):
        if j in ahead:
            listed.append(("NAK-AHEAD", p, "past the lost PSN, discarded "
                           "by the responder before the retransmission"))
        else:
            kept.append(p)
    return kept, listed


def drop_duplicates(pkts):
    """Split off retransmissions that only timing explains.

    A request whose PSN its requester already sent is a duplicate unless a
    NAK (sequence error) or RNR NAK for that PSN or an earlier one came
    back since: then the retry is the protocol's and is compared. A
    response equal to an earlier one in the same PSN space is a duplicate
    once a duplicate request was seen in that space (a responder answers a
    duplicate request again: IBTA 9.7.5.1.1).
    Returns (kept, listed) where listed holds (rule, packet, text).
    """
    kept, listed = [], []
    sent = {}        # (space, rel_psn) -> (order, first packet)
    nak_at = {}      # space -> (order, rel_psn) of the latest NAK/RNR
    dup_reqs = {}    # space -> count
    responses = {}   # (space, key) -> first packet
    for order, p in enumerate(pkts):
        if p.raw["transport"] == "UD":
            kept.append(p)
            continue
        if not p.is_response:
            k = (p.space, p.rel_psn)
            if k in sent:
                when, first = sent[k]
                nak = nak_at.get(p.space)
                if nak and nak[0] > when and nak[1] <= p.rel_psn:
                    sent[k] = (order, first)
                    p.note = "retry after NAK"
                    kept.append(p)
                    continue
                same = first.op == p.op or (p.op & 0x1F) == READ_REQ
                if same:
                    dup_reqs[p.space] = dup_reqs.get(p.space, 0) + 1
                    listed.append(("DUP-REQ", p, "repeats PSN +%d "
                                   "(first as frame %d)" %
                                   (p.rel_psn, first.index)))
                    sent[k] = (order, first)
                    continue
                p.note = "PSN +%d sent again with opcode %s (first %s)" % (
                    p.rel_psn, p.name, first.name)
            sent[k] = (order, p)
            kept.append(p)
            continue
        kind = syndrome_kind(p)
        if kind in ("nak", "rnr"):
            nak_at[p.space] = (order, p.rel_psn)
        key = (p.space, tuple(sorted(p.fields.items())), p.rel_psn)
        if key in responses and dup_reqs.get(p.space):
            listed.append(("DUP-RESP", p, "equals frame %d" %
                           responses[key].index))
            continue
        responses.setdefault(key, p)
        kept.append(p)
    return kept, listed


def field_rule(field, p, q):
    """The rule id that allows field to differ between p and q, or None."""
    if field == "atomiceth.compare" and p.name.endswith("FETCH_ADD"):
        return "FA-COMPARE"
    if field == "atomicacketh.orig":
        return "ATOMIC-ORIG"
    if field == "ackreq" and p.raw["transport"] == "UC":
        return "UC-ACKREQ"
    return None


def describe(p):
    if p.name.startswith("CM_"):
        return "%s #%d %s" % (p.dir, p.index, p.name)
    return "%s #%d %s psn+%d" % (p.dir, p.index, p.name, p.rel_psn)


def is_plain_ack(p):
    return (p.op & 0x1F) == 0x11 and syndrome_kind(p) == "ack"


class Report:
    def __init__(self, name, a_label, b_label):
        self.name = name
        self.labels = (a_label, b_label)
        self.compared = 0
        self.listed = []    # (rule, text)
        self.unlisted = []  # text

    def print(self, out):
        print("scenario %s: %d packets compared, %d listed, %d unlisted" %
              (self.name, self.compared, len(self.listed),
               len(self.unlisted)), file=out)
        for rule, text in self.listed:
            print("  listed   %-12s %s" % (rule, text), file=out)
        for text in self.unlisted:
            print("  UNLISTED %s" % text, file=out)


def compare_fields(rep, p, q, rule_of=None):
    a, b = rep.labels
    for k in sorted(set(p.fields) | set(q.fields)):
        va, vb = p.fields.get(k), q.fields.get(k)
        if va == vb:
            continue
        text = "%s %s: %s %s, %s %s" % (describe(p), k, a, va, b, vb)
        rule = (rule_of or field_rule)(k, p, q)
        if rule:
            rep.listed.append((rule, text))
        else:
            rep.unlisted.append(text)


def drop_coalesced(rep, label, xs, ys):
    """xs without the plain ACKs that ys coalesced into a later response.

    A responder may answer several requests with one ACK: an ACK covers
    every request up to its PSN (IBTA 9.7.5.1.2). An ACK of xs at PSN n
    that ys has no ACK for is allowed when ys holds a response with a
    later PSN: that one acknowledged n too."""
    have = {q.rel_psn for q in ys if is_plain_ack(q)}
    kept = []
    for p in xs:
        later = [q for q in ys if q.rel_psn > p.rel_psn]
        if is_plain_ack(p) and p.rel_psn not in have and later:
            rep.listed.append(("ACK-COALESCE", "%s %s: the other's %s "
                               "covers it" % (label, describe(p),
                                              describe(later[0]))))
            continue
        kept.append(p)
    return kept


def compare_seq(rep, what, xs, ys):
    """Compare two packet sequences of one kind in one PSN space."""
    a, b = rep.labels
    xs2 = drop_coalesced(rep, a, xs, ys)
    ys2 = drop_coalesced(rep, b, ys, xs)
    xs, ys = xs2, ys2

    def keys(ps):
        return [(p.name, p.rel_psn) for p in ps]

    sm = difflib.SequenceMatcher(a=keys(xs), b=keys(ys), autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        pairs = list(zip(xs[i1:i2], ys[j1:j2]))
        for p, q in pairs:
            rep.compared += 1
            if tag == "equal":
                compare_fields(rep, p, q)
            else:
                rep.unlisted.append("%s: %s has %s, %s has %s psn+%d (#%d)"
                                    % (what, a, describe(p), b, q.name,
                                       q.rel_psn, q.index))
        for label, extra, end, other in ((a, xs[i1 + len(pairs):i2], i2 == len(xs), j1),
                                         (b, ys[j1 + len(pairs):j2], j2 == len(ys), i1)):
            # the other side's messages on this QP all matched, these are
            # its last: rounds more, as the program's completion order had it
            rounds = rep.name in ROUNDS_VARY and end and other > 0 and \
                tag == ("delete" if label == a else "insert")
            for p in extra:
                if rounds:
                    rep.listed.append(("SRQ-ROUNDS", "%s: %s has %s more "
                                       "than the other sent" %
                                       (what, label, describe(p))))
                else:
                    rep.unlisted.append("%s: only %s has %s" %
                                        (what, label, describe(p)))


def compare(name, a_pkts, b_pkts, labels=("rxe", "rocemu")):
    """Compare two decoded captures; returns a Report."""
    rep = Report(name, *labels)
    sides = []
    for label, pkts in zip(labels, (a_pkts, b_pkts)):
        normalize(pkts)
        pkts, listed = drop_ahead(pkts)
        kept, more = drop_duplicates(pkts)
        listed += more
        for rule, p, text in listed:
            rep.listed.append((rule, "%s %s: %s" % (label, describe(p),
                                                    text)))
        for p in kept:
            if p.note and p.note != "retry after NAK":
                rep.unlisted.append("%s %s: %s" % (label, describe(p),
                                                   p.note))
        sides.append(kept)
    spaces = sorted({p.space for side in sides for p in side})
    for sp in spaces:
        for resp, kind in ((False, "requests"), (True, "responses")):
            xs = [p for p in sides[0] if p.space == sp and
                  p.is_response == resp]
            ys = [p for p in sides[1] if p.space == sp and
                  p.is_response == resp]
            if xs or ys:
                compare_seq(rep, "%s %s" % (sp, kind), xs, ys)
    return rep


ENTRY_RE = re.compile(r"## ([A-Z0-9-]+): ")
FIELD_RE = re.compile(r"- ([a-z]+): (.*)")


def documented_rules(path):
    """The IDs of the entries of the differences list (headings `## ID:
    title`) marked `- compare: yes` in the fields after the heading."""
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except OSError as e:
        sys.exit("compare: cannot read %s: %s" % (path, e))
    found, entry, fields = set(), None, False
    for no, line in enumerate(lines, 1):
        m = ENTRY_RE.match(line)
        if line.startswith("## "):
            entry, fields = (m.group(1) if m else None), bool(m)
            continue
        f = FIELD_RE.match(line)
        if not fields or not line.strip():
            continue
        if not f:
            fields = False      # the prose begins
        elif f.group(1) == "compare":
            if f.group(2).strip() != "yes":
                sys.exit("compare: %s:%d: compare: takes yes" % (path, no))
            found.add(entry)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--rocemu", default="build/bin/rocemu")
    ap.add_argument("--differences",
                    default=DIFFERENCES)
    ap.add_argument("--dirs", action="store_true",
                    help="A and B are directories: compare every "
                    "scenario present in both")
    ap.add_argument("--labels", default="rxe,rocemu")
    ap.add_argument("--cm", action="store_true",
                    help="compare only the CM MADs of the two captures")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("name", nargs="?")
    args = ap.parse_args()
    labels = tuple(args.labels.split(","))
    documented = documented_rules(args.differences)
    rules = RULES | {r[0] for r in CM_FIELD_RULES} | GID_RULES
    missing = rules - documented
    if missing:
        sys.exit("compare: rules not described in %s: %s" %
                 (args.differences, " ".join(sorted(missing))))
    stale = documented - rules
    if stale:
        sys.exit("compare: %s marks compare: yes on rules this program "
                 "does not implement: %s" % (args.differences,
                                             " ".join(sorted(stale))))
    if args.dirs:
        names = sorted(n[:-5] for n in os.listdir(args.a)
                       if n.endswith(".pcap") and
                       os.path.exists(os.path.join(args.b, n)))
        if not names:
            sys.exit("compare: no scenario is in both %s and %s" %
                     (args.a, args.b))
        pairs = [(n, os.path.join(args.a, n + ".pcap"),
                  os.path.join(args.b, n + ".pcap")) for n in names]
    else:
        name = args.name or os.path.basename(args.a).rsplit(".", 1)[0]
        pairs = [(name, args.a, args.b)]
    total = [0, 0, 0]
    for name, pa, pb in pairs:
        how = cm_compare if args.cm else compare
        rep = how(name, decode(args.rocemu, pa), decode(args.rocemu, pb),
                  labels)
        rep.print(sys.stdout)
        total[0] += rep.compared
        total[1] += len(rep.listed)
        total[2] += len(rep.unlisted)
    if len(pairs) > 1:
        print("all %d scenarios: %d packets compared, %d listed, "
              "%d unlisted" % (len(pairs), *total))
    return 1 if total[2] else 0


if __name__ == "__main__":
    sys.exit(main())
