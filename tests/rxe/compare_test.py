#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of compare.py on captures edited from the checked-in ones.

Each case writes a pcap derived from pcaps/ (a NAK syndrome changed with
its ICRC made right again, two packets swapped, a request and its ACK sent
twice, a request past a lost packet left out, a sequence NAK left out, an
ICRC broken), runs compare.py on the pair and checks its exit
status and the line it must print. The ICRC is computed here from the
IBTA rule (annex A17.3.3: masked IP/UDP/BTH fields, CRC-32 over the rest),
not with the project's code.

usage: compare_test.py ROCEMU_BIN WORK_DIR
"""
import os
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COMPARE = os.path.join(HERE, "compare.py")


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), "little-endian pcap expected"
    recs, off = [], 24
    while off < len(data):
        ts1, ts2, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        recs.append([ts1, ts2, bytearray(data[off + 16:off + 16 + incl])])
        off += 16 + incl
    return data[:24], recs


def write_pcap(path, head, recs):
    with open(path, "wb") as f:
        f.write(head)
        for ts1, ts2, frame in recs:
            f.write(struct.pack("<IIII", ts1, ts2, len(frame), len(frame)))
            f.write(frame)


def fix_icrc(frame):
    """Recompute the ICRC of an Ethernet/IPv4/UDP RoCEv2 frame."""
    ip = bytearray(frame[14:34])
    ip[1] = 0xFF              # TOS
    ip[8] = 0xFF              # TTL
    ip[10:12] = b"\xff\xff"   # header checksum
    udp = bytearray(frame[34:42])
    udp[6:8] = b"\xff\xff"    # UDP checksum
    rest = bytearray(frame[42:-4])
    rest[4] = 0xFF            # BTH: FECN, BECN, resv6
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(rest))
    frame[-4:] = struct.pack("<I", crc)


def run(a, b, rocemu, extra=(), name="case"):
    out = subprocess.run([sys.executable, COMPARE, "--rocemu", rocemu,
                          *extra, a, b, name], capture_output=True,
                         text=True,
                         timeout=120)
    return out.returncode, out.stdout + out.stderr


failures = 0


def case(name, a, b, rocemu, want_rc, want_text, extra=(), scenario="case"):
    global failures
    rc, text = run(a, b, rocemu, extra, scenario)
    ok = rc == want_rc and all(w in text for w in want_text)
    print("%s: %s" % ("ok  " if ok else "FAIL", name))
    if not ok:
        failures += 1
        print("  want exit %d and %r; got exit %d:\n%s" %
              (want_rc, want_text, rc, text))


def main():
    rocemu, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rxe = os.path.join(ROOT, "pcaps", "rxe")
    emu = os.path.join(ROOT, "pcaps", "rocemu")

    # The checked-in pair as it is: every difference listed.
    case("rxe and rocemu write_bw: listed only",
         os.path.join(rxe, "write_bw.pcap"),
         os.path.join(emu, "write_bw.pcap"), rocemu, 0,
         ["0 unlisted"])

    # A NAK syndrome changed (remote access 0x62 -> invalid request 0x61),
    # the ICRC made right again: one unlisted difference, on that field.
    head, recs = read_pcap(os.path.join(emu, "err_write_bad_rkey.pcap"))
    nak = recs[1][2]
    assert nak[42] == 0x11 and nak[54] == 0x62, "NAK expected second"
    nak[54] = 0x61
    fix_icrc(nak)
    bad = os.path.join(work, "bad_syndrome.pcap")
    write_pcap(bad, head, recs)
    case("wrong AETH syndrome is unlisted",
         os.path.join(rxe, "err_write_bad_rkey.pcap"), bad, rocemu, 1,
         ["UNLISTED", "aeth.syndrome: rxe 0x62, rocemu 0x61",
          "1 unlisted"])

    # WRITE MIDDLE and LAST of the first message swapped: the opcode order
    # differs, whatever the PSNs say.
    head, recs = read_pcap(os.path.join(emu, "write_bw.pcap"))
    recs[1], recs[2] = recs[2], recs[1]
    swapped = os.path.join(work, "swapped.pcap")
    write_pcap(swapped, head, recs)
    case("opcode order is compared",
         os.path.join(rxe, "write_bw.pcap"), swapped, rocemu, 1,
         ["UNLISTED", "RC_RDMA_WRITE_LAST psn+2"])

    # The second SEND of rc_send_64 and the ACK to it sent once more, as
    # rxe's retry timer does on a slow guest: listed, not unlisted.
    head, recs = read_pcap(os.path.join(emu, "rc_send_64.pcap"))
    send2 = [r for r in recs if r[2][42] == 0x04][1]
    i = recs.index(send2)
    ack = next(r for r in recs[i:] if r[2][42] == 0x11 and
               r[2][26:30] == send2[2][30:34])
    j = recs.index(ack)
    dup = recs[:j + 1] + [[send2[0], send2[1], bytearray(send2[2])],
                          [ack[0], ack[1], bytearray(ack[2])]] + recs[j + 1:]
    dupped = os.path.join(work, "duplicate.pcap")
    write_pcap(dupped, head, dup)
    case("retransmitted SEND and repeated ACK are listed",
         os.path.join(emu, "rc_send_64.pcap"), dupped, rocemu, 0,
         ["listed   DUP-REQ", "listed   DUP-RESP", "0 unlisted"])

    # A missing ACK that no later response covers is not coalescing.
    head, recs = read_pcap(os.path.join(emu, "err_write_bad_rkey.pcap"))
    lone = os.path.join(work, "no_nak.pcap")
    write_pcap(lone, head, recs[:1])
    case("a missing NAK is unlisted",
         os.path.join(rxe, "err_write_bad_rkey.pcap"), lone, rocemu, 1,
         ["only rxe has S>C #2 RC_ACK"])

    # The loss scenario: one request fewer sent past the lost packet
    # before the sequence NAK came back is timing, and listed.
    head, recs = read_pcap(os.path.join(emu, "loss.pcap"))
    ops = [(r[2][42], struct.unpack(">I", r[2][50:54])[0] & 0xFFFFFF)
           for r in recs]
    nak = next(i for i, r in enumerate(recs) if r[2][42] == 0x11 and
               r[2][54] == 0x60)
    lost = ops[nak][1]
    ahead = [i for i in range(nak + 1, len(recs)) if ops[i][0] != 0x11 and
             ops[i][1] > lost and lost not in [o[1] for o in ops[nak + 1:i]]]
    assert ahead, "a request past the lost PSN after the NAK expected"
    fewer = os.path.join(work, "loss_fewer_ahead.pcap")
    write_pcap(fewer, head, [r for i, r in enumerate(recs) if i != ahead[0]])
    case("a request past the lost PSN is listed",
         os.path.join(emu, "loss.pcap"), fewer, rocemu, 0,
         ["listed   NAK-AHEAD", "0 unlisted"])

    # Without its sequence NAK the same capture differs, unlisted.
    nonak = os.path.join(work, "loss_no_nak.pcap")
    write_pcap(nonak, head, recs[:nak] + recs[nak + 1:])
    case("a missing sequence NAK is unlisted",
         os.path.join(emu, "loss.pcap"), nonak, rocemu, 1,
         ["only rxe has S>C #%d RC_ACK" % (nak + 1)])

    # ibv_srq_pingpong's rounds per QP vary with its completion order: one
    # more SEND and its ACK on the first QP, at the end of its PSN space,
    # is listed in the srq scenario, and only there.
    head, recs = read_pcap(os.path.join(emu, "srq.pcap"))
    send = next(r for r in recs if r[2][42] == 0x04)
    ack = next(r for r in recs if r[2][42] == 0x11 and
               r[2][51:54] == send[2][51:54])
    more = []
    for r in (send, ack):
        f = bytearray(r[2])
        psn = (struct.unpack(">I", f[50:54])[0] + 1) & 0xFFFFFF
        f[51:54] = psn.to_bytes(3, "big")
        if f[42] == 0x11:
            msn = int.from_bytes(f[55:58], "big") + 1
            f[55:58] = msn.to_bytes(3, "big")
        fix_icrc(f)
        more.append([r[0], r[1], f])
    rounds = os.path.join(work, "srq_one_more_round.pcap")
    write_pcap(rounds, head, recs + more)
    srq = os.path.join(emu, "srq.pcap")
    case("one more srq round is listed", srq, rounds, rocemu, 0,
         ["listed   SRQ-ROUNDS", "0 unlisted"], scenario="srq")
    case("one more round is unlisted outside srq", srq, rounds, rocemu, 1,
         ["only rocemu has", "2 unlisted"])
    # A QP's only message missing is no extra round.
    fewer = os.path.join(work, "srq_one_less.pcap")
    write_pcap(fewer, head, [r for r in recs if r is not send and
                             r is not ack])
    case("a QP's only message missing is unlisted in srq", srq, fewer,
         rocemu, 1, ["only rxe has", "2 unlisted"], scenario="srq")

    # A broken ICRC is a difference of its own.
    head, recs = read_pcap(os.path.join(emu, "ud_send.pcap"))
    recs[0][2][-1] ^= 0xFF
    broken = os.path.join(work, "bad_icrc.pcap")
    write_pcap(broken, head, recs)
    case("a bad ICRC is unlisted",
         os.path.join(rxe, "ud_send.pcap"), broken, rocemu, 1,
         ["icrc_ok: rxe True, rocemu False"])

    # The rule IDs come from the differences list's `compare: yes`
    # entries: one the program implements but the list does not mark is
    # refused, and so is one the list marks but the program lacks.
    with open(os.path.join(ROOT, "conformance", "differences.md")) as f:
        real = f.read()
    same = os.path.join(rxe, "rc_send_64.pcap")
    unmarked = os.path.join(work, "differences_unmarked.md")
    at = real.index("## ACK-COALESCE: ")
    with open(unmarked, "w") as f:
        f.write(real[:at] + real[at:].replace("- compare: yes\n", "", 1))
    case("a rule the list does not mark compare: yes is refused", same,
         same, rocemu, 1, ["rules not described in", "ACK-COALESCE"],
         ("--differences", unmarked))
    extra = os.path.join(work, "differences_extra.md")
    at = real.index("## RESET-CQ: ")
    with open(extra, "w") as f:
        f.write(real[:at] + real[at:].replace("- impl: rocemu\n",
                                              "- impl: rocemu\n"
                                              "- compare: yes\n", 1))
    case("a compare: yes entry the program lacks is refused", same, same,
         rocemu, 1, ["does not implement", "RESET-CQ"],
         ("--differences", extra))

    # CM MADs (--cm): rping's connection rxe<->rxe against rxe client,
    # rocemu server, as the lab took them (tests/rxe/cm-pcaps); as they
    # are, every difference is listed ...
    cmcaps = os.path.join(HERE, "cm-pcaps")
    ref = os.path.join(cmcaps, "rping_rxe_rxe.pcap")
    mix = os.path.join(cmcaps, "rping_rxe_rocemu.pcap")
    case("CM MADs of rping rxe<->rxe and rocemu<->rxe: listed only", ref,
         mix, rocemu, 0, ["0 unlisted", "CM-FLOW-LABEL"], ("--cm",))
    # ... and the REQ's P_Key (REQ offset 48 after the 24-byte MAD header,
    # behind Ethernet, IPv4, UDP, BTH and DETH) edited to 0x7fff is caught.
    head, recs = read_pcap(mix)
    frame = recs[0][2]
    at = 14 + 20 + 8 + 12 + 8 + 24 + 48
    assert frame[14 + 20 + 8 + 12 + 8 + 16:][:2] == b"\x00\x10", "REQ first"
    assert frame[at:at + 2] == b"\xff\xff"
    frame[at] = 0x7F
    fix_icrc(frame)
    edited = os.path.join(work, "cm_req_pkey.pcap")
    write_pcap(edited, head, recs)
    case("a CM REQ's P_Key edited: unlisted", ref, edited, rocemu, 1,
         ["UNLISTED C>S #1 CM_REQ cm.pkey: rxe 65535, rocemu 32767"],
         ("--cm",))
    # A CM MAD left out is caught too (the RTU).
    head, recs = read_pcap(mix)
    rtu = [r for r in recs if r[2][14 + 20 + 8 + 12 + 8 + 16:][:2] ==
           b"\x00\x14"]
    assert len(rtu) == 1
    fewer = os.path.join(work, "cm_no_rtu.pcap")
    write_pcap(fewer, head, [r for r in recs if r is not rtu[0]])
    case("a CM RTU left out: unlisted", ref, fewer, rocemu, 1,
         ["only rxe has C>S", "CM_RTU"], ("--cm",))

    print("compare_test: %d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
