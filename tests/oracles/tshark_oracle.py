#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tshark as an independent decoder of the same captures rocemu dump reads.

For every capture given (and one that mkcap writes with every opcode over
IPv4, IPv6 and VLAN tags), each RoCEv2 packet must show the same opcode,
QPN, PSN, BTH flags and extension-header fields in `tshark -T fields` as in
`rocemu dump --json`, and the same ICRC. The ICRC is also recomputed here
with Python's zlib, from the frame bytes, as a second implementation.

Exceptions, each a documented tshark 4.0 limitation, compare BTH fields
only: RD opcodes (tshark 4.0 reads the RDETH 8 bytes late; IBTA 9.2 and
Linux rxe put it right after the BTH), and FLUSH, ATOMIC_WRITE and CNP,
which tshark 4.0 does not know.

CM MADs on QP1 (mkcap --cm's captures, and any in the captures given):
the MAD header, and every field of a REQ (with its primary path and
Annex A11 header), REP, RTU, REJ, DREQ and DREP, field by field. tshark
4.0 does not decode MRA, SIDR_REQ or SIDR_REP ("Dissector Not
Implemented"): their MAD header alone is compared (TSHARK-CM in
conformance/differences.md).
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import zlib

FIELDS = [
    "frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp",
    "infiniband.bth.psn", "infiniband.bth.a", "infiniband.bth.se",
    "infiniband.bth.m", "infiniband.bth.padcnt", "infiniband.bth.tver",
    "infiniband.bth.p_key", "infiniband.reth.va", "infiniband.reth.r_key",
    "infiniband.reth.dmalen", "infiniband.aeth.syndrome",
    "infiniband.aeth.msn", "infiniband.deth.q_key", "infiniband.deth.srcqp",
    "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt", "infiniband.immdt",
    "infiniband.ieth", "infiniband.invariant.crc", "udp.srcport",
]
BTH_ONLY = {0x1C, 0x1D, 0x81} | set(range(0x40, 0x60))

# tshark's field for each member of rocemu's "mad" object.
MAD_FIELDS = {
    "base_version": "baseversion", "mgmt_class": "mgmtclass",
    "class_version": "classversion", "method": "method", "status": "status",
    "class_specific": "classspecific", "tid": "transactionid",
    "attr_id": "attributeid", "attr_mod": "attributemodifier",
}
# tshark's fields for rocemu's "cm" (and "cm_path", "ip_cm") members, by
# message. tshark 4.0 registers the REQ's and REP's local comm ID under
# the message's own name, and the DREQ's remote QPN under a REQ name.
CM_FIELDS = {
    "REQ": {
        "cm": {"local_comm_id": "req", "service_id": "req.serviceid",
               "local_ca_guid": "req.localcaguid",
               "local_qkey": "req.localqkey", "local_qpn": "req.localqpn",
               "responder_resources": "req.responderres",
               "local_eecn": "req.localeecn",
               "initiator_depth": "req.initdepth",
               "remote_eecn": "req.remoteeecn",
               "remote_cm_response_timeout": "req.remoteresptout",
               "transport_type": "req.transpsvctype",
               "end_to_end_flow_control": "req.e2eflowctrl",
               "starting_psn": "req.startpsn",
               "local_cm_response_timeout": "req.localresptout",
               "retry_count": "req.retrcount", "pkey": "req.pkey",
               "path_mtu": "req.pppmtu", "rdc_exists": "req.rdcexist",
               "rnr_retry_count": "req.rnrretrcount",
               "max_cm_retries": "req.maxcmretr", "srq": "req.srq",
               "extended_transport_type": "req.ext_transport"},
        "cm_path": {"local_lid": "req.prim_locallid",
                    "remote_lid": "req.prim_remotelid",
                    "flow_label": "req.prim_flowlabel",
                    "rate": "req.prim_pktrate",
                    "traffic_class": "req.prim_tfcclass",
                    "hop_limit": "req.prim_hoplim", "sl": "req.prim_sl",
                    "subnet_local": "req.prim_subnetlocal",
                    "local_ack_timeout": "req.prim_localacktout",
                    "local_gid": "req.prim_localgid",
                    "remote_gid": "req.prim_remotegid"},
        "ip_cm": {"ip_version": "req.ip_cm.ipv", "src_port": "req.ip_cm.sport",
                  "src": "req.ip_cm.sip4", "dst": "req.ip_cm.dip4"},
    },
    "REP": {"cm": {"local_comm_id": "rep", "remote_comm_id": "rep.remotecommid",
                   "local_qkey": "rep.localqkey", "local_qpn": "rep.localqpn",
                   "local_eecn": "rep.localeecn", "starting_psn": "rep.startpsn",
                   "responder_resources": "rep.respres",
                   "initiator_depth": "rep.initdepth",
                   "target_ack_delay": "rep.tgtackdelay",
                   "failover_accepted": "rep.failoveracc",
                   "end_to_end_flow_control": "rep.e2eflowctrl",
                   "rnr_retry_count": "rep.rnrretrcount", "srq": "rep.srq",
                   "local_ca_guid": "rep.localcaguid"}},
    "RTU": {"cm": {"local_comm_id": "rtu.localcommid",
                   "remote_comm_id": "rtu.remotecommid"}},
    "REJ": {"cm": {"local_comm_id": "rej.localcommid",
                   "remote_comm_id": "rej.remotecommid",
                   "msg_rejected": "rej.msgrej", "ari_len": "rej.rejinfolen",
                   "reason": "rej.reason"}},
    "DREQ": {"cm": {"local_comm_id": "dreq.localcommid",
                    "remote_comm_id": "dreq.remotecommid",
                    "remote_qpn": "req.remoteqpneecn"}},
    "DREP": {"cm": {"local_comm_id": "drsp.localcommid",
                    "remote_comm_id": "drsp.remotecommid"}},
}
FIELDS += ["infiniband.mad." + f for f in MAD_FIELDS.values()]
FIELDS += sorted({"infiniband.cm." + f for m in CM_FIELDS.values()
                  for o in m.values() for f in o.values()} |
                 {"infiniband.cm.req.prim_localgid_ipv4",
                  "infiniband.cm.req.prim_remotegid_ipv4"})


def num(text):
    text = text.strip()
    if text.count(".") == 3 or ":" in text:
        return text  # an address: compared as text
    if text in ("True", "False"):
        return int(text == "True")
    return int(text, 16) if text.startswith("0x") else int(text)


def tshark_rows(cap):
    out = subprocess.run(
        ["tshark", "-r", cap, "-T", "fields", "-E", "separator=\t",
         "-E", "occurrence=f"] + sum([["-e", f] for f in FIELDS], []),
        check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        cols = dict(zip(FIELDS, line.split("\t")))
        if cols.get("infiniband.bth.opcode"):
            rows[int(cols["frame.number"])] = cols
    return rows


def rocemu_rows(rocemu, cap):
    proc = subprocess.run([rocemu, "dump", "--json", cap],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"rocemu dump {cap}: {proc.stderr.strip()}")
    rows, summary = {}, None
    for line in proc.stdout.splitlines():
        obj = json.loads(line)  # every line must be valid JSON
        if "summary" in obj:
            summary = obj["summary"]
        else:
            rows[obj["frame"]] = obj
    return rows, summary


def pcap_frames(cap):
    """(frame bytes) by frame number, for classic little-endian pcaps."""
    with open(cap, "rb") as fp:
        data = fp.read()
    magic = struct.unpack_from("<I", data)[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        return {}
    frames, off, n = {}, 24, 0
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, off)
        n += 1
        frames[n] = data[off + 16:off + 16 + incl]
        off += 16 + incl
    return frames


def icrc_python(frame):
    """ICRC from IBTA A17.3.3, written here independently of proto/icrc.c."""
    off, etype = 12, struct.unpack_from(">H", frame, 12)[0]
    while etype in (0x8100, 0x88A8):
        off += 4
        etype = struct.unpack_from(">H", frame, off)[0]
    ip = bytearray(frame[off + 2:])
    if ip[0] >> 4 == 4:
        ihl = (ip[0] & 15) * 4
        total = struct.unpack_from(">H", ip, 2)[0]
        ip = ip[:total]
        ip[1], ip[8], ip[10], ip[11] = 0xFF, 0xFF, 0xFF, 0xFF
    else:
        ihl = 40
        ip = ip[:40 + struct.unpack_from(">H", ip, 4)[0]]
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF
    ip[ihl + 6:ihl + 8] = b"\xff\xff"       # UDP checksum
    ip[ihl + 8 + 4] = 0xFF                  # BTH FECN/BECN/resv6
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip[:-4]))
    return struct.unpack(">I", struct.pack("<I", crc))[0]


def expected(r):
    """What tshark's columns should hold, from rocemu's JSON object."""
    e = {
        "infiniband.bth.opcode": r["opcode"],
        "infiniband.bth.destqp": r["dqpn"], "infiniband.bth.psn": r["psn"],
        "infiniband.bth.a": int(r["ackreq"]), "infiniband.bth.se": int(r["se"]),
        "infiniband.bth.m": int(r["migreq"]), "infiniband.bth.padcnt": r["pad"],
        "infiniband.bth.tver": r["tver"], "infiniband.bth.p_key": r["pkey"],
        "udp.srcport": r["sport"],
    }
    if r["opcode"] in BTH_ONLY:
        return {k: v for k, v in e.items()
                if k in ("infiniband.bth.opcode", "infiniband.bth.destqp",
                         "infiniband.bth.psn")}
    e["infiniband.invariant.crc"] = int(r["icrc"], 16)
    if "reth" in r:
        e["infiniband.reth.va"] = int(r["reth"]["va"], 16)
        e["infiniband.reth.r_key"] = r["reth"]["rkey"]
        e["infiniband.reth.dmalen"] = r["reth"]["len"]
    if "atomiceth" in r:  # tshark 4.0 shows AtomicETH VA and R_Key as RETH's
        e["infiniband.reth.va"] = int(r["atomiceth"]["va"], 16)
        e["infiniband.reth.r_key"] = r["atomiceth"]["rkey"]
        e["infiniband.atomiceth.swapdt"] = int(r["atomiceth"]["swap_add"], 16)
        e["infiniband.atomiceth.cmpdt"] = int(r["atomiceth"]["compare"], 16)
    if "aeth" in r:
        e["infiniband.aeth.syndrome"] = r["aeth"]["syndrome"]
        e["infiniband.aeth.msn"] = r["aeth"]["msn"]
    if "deth" in r:
        e["infiniband.deth.q_key"] = r["deth"]["qkey"]
        e["infiniband.deth.srcqp"] = r["deth"]["src_qp"]
    if "atomicacketh" in r:
        e["infiniband.atomicacketh.origremdt"] = int(r["atomicacketh"]["orig"], 16)
    if "immdt" in r:
        e["infiniband.immdt"] = r["immdt"]["imm"]
    if "ieth" in r:
        e["infiniband.ieth"] = r["ieth"]["rkey"]
    if "mad" in r:
        e.update(expected_mad(r))
    return e


def json_num(v):
    """rocemu's JSON value as tshark shows it: numbers, "0x" strings,
    booleans as 0/1, addresses as text."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str):
        return int(v, 16) if v.startswith("0x") else v
    return v


def expected_mad(r):
    """The MAD header, and the CM message's fields where tshark 4.0 has
    them. A GID tshark shows as an IPv4 address for an IPv4-mapped one."""
    e = {"infiniband.mad." + t: json_num(r["mad"][k])
         for k, t in MAD_FIELDS.items()}
    if "cm" not in r:
        return e
    for obj, fields in CM_FIELDS.get(r["mad"].get("attr_name"), {}).items():
        for k, t in fields.items():
            if obj in r and k in r[obj]:
                v = json_num(r[obj][k])
                if t.endswith("gid") and "." in str(v):
                    t += "_ipv4"  # an IPv4-mapped GID: a field of its own
                e["infiniband.cm." + t] = v
    return e


def tshark_value(field, text):
    if field in ("infiniband.immdt", "infiniband.ieth"):
        return int(text.replace(":", ""), 16)  # shown as bytes
    return num(text)


def compare(cap, rocemu, errors):
    ours, summary = rocemu_rows(rocemu, cap)
    theirs = tshark_rows(cap)
    frames = pcap_frames(cap)
    checked = 0
    if set(ours) != set(theirs):
        errors.append(f"{cap}: RoCE frames differ: rocemu {sorted(set(ours) - set(theirs))[:5]}"
                      f" tshark {sorted(set(theirs) - set(ours))[:5]}")
    for no, r in sorted(ours.items()):
        if r["status"] != "ok":
            errors.append(f"{cap} frame {no}: rocemu says {r['status']}")
            continue
        t = theirs.get(no, {})
        for field, want in expected(r).items():
            got = t.get(field, "")
            if got == "" or tshark_value(field, got) != want:
                errors.append(f"{cap} frame {no}: {field} tshark '{got}' rocemu {want}")
        if no in frames and icrc_python(frames[no]) != int(r["icrc_calc"], 16):
            errors.append(f"{cap} frame {no}: Python zlib ICRC differs")
        checked += 1
    if summary is None or summary["roce"] != len(ours):
        errors.append(f"{cap}: summary missing or wrong")
    return checked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rocemu", required=True)
    ap.add_argument("--mkcap", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("captures", nargs="*")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    generated = os.path.join(a.work, "every_opcode.pcap")
    subprocess.run([a.mkcap, "--all", generated], check=True)
    cms = []
    for name in ("connect", "reject", "sidr", "retry", "bad"):
        cms.append(os.path.join(a.work, "cm_%s.pcap" % name))
        subprocess.run([a.mkcap, "--cm", cms[-1], name], check=True)
    errors, passed, failed = [], 0, 0
    for cap in a.captures + [generated] + cms:
        before = len(errors)
        n = compare(cap, a.rocemu, errors)
        if len(errors) == before and n > 0:
            passed += 1
        else:
            failed += 1
            if n == 0:
                errors.append(f"{cap}: no packet compared")
        print(f"  {cap}: {n} packets compared, "
              f"{len(errors) - before} disagreements")
    for e in errors[:40]:
        print("FAIL:", e)
    print(f"tshark_oracle: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
