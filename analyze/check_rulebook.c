/* SPDX-License-Identifier: MIT */
/* The rule book: every rule rocemu check judges or conformance scenarios test, with its IBTA section. */
#include <string.h>

#include "rocemu/rules.h"

/* Sections are those of the IBTA Volume 1 (release 1.4) and its RoCEv2
 * annex A17; a compliance statement (C9-nn) only where docs/check.md or
 * a scenario already cites one from a public source. */
#define CHECKED(i, s, a, t) { .id = i, .section = s, .applies = a, \
			      .text = t, .checked = true }
#define NOT_YET(i, s, a, t, why) { .id = i, .section = s, .applies = a, \
				   .text = t, .not_yet = why }

static const struct roce_rule book[] = {
	/* Every packet. */
	CHECKED("ICRC", "A17.3.3, 7.8.1", "all",
		"every packet's ICRC is the CRC of its invariant fields; a receiver drops a packet whose ICRC fails"),
	CHECKED("HEADERS", "9.2", "all",
		"headers, pad and lengths as the opcode defines them: the extension headers it carries, a payload only where it has one, PadCnt within the payload"),
	NOT_YET("RECV-VALIDATION", "9.6.1", "all",
		"a packet with a TVer other than 0, a P_Key not of the port's partition, a DestQP of no QP, or an opcode of another transport than the QP's is dropped silently",
		"a drop is a silence: judged by an active tester (rocemu conform), not from a capture"),

	/* Packets of a message. */
	CHECKED("MSG-OPCODES", "9.4", "RC, UC",
		"a message is FIRST, MIDDLE..., LAST or one ONLY: no new message inside one, no MIDDLE or LAST without a FIRST, MIDDLE and LAST of the FIRST's operation"),
	CHECKED("PAYLOAD-MTU", "9.7.5.1", "RC, UC",
		"FIRST and MIDDLE packets carry exactly the path MTU, LAST 1 byte up to it, ONLY at most it"),
	CHECKED("WRITE-LENGTH", "9.4.2", "RC, UC",
		"the packets of an RDMA WRITE carry exactly the RETH's DMA length"),
	CHECKED("ACKREQ-LAST", "9.2", "RC",
		"the last SEND or WRITE of a flow asks for an acknowledgement (AckReq) unless a later request or an answer covers it"),
	CHECKED("ATOMIC-ALIGN", "9.4", "RC",
		"an atomic operation's virtual address is 8-byte aligned"),

	/* PSNs. */
	CHECKED("PSN-ORDER", "9.7.1", "RC",
		"request PSNs advance by one per packet (a READ by its response packets), modulo 2^24; going back is a retransmission; a gap nothing explains is the requester's skip"),
	{ .id = "PSN-JUMP", .section = "9.7.1", .applies = "RC, UC",
	  .text = "capture loss is claimed only where a 400 Gb/s link could have carried the missing packets in the capture time between the requests around the gap; a larger jump is the requester's skip",
	  .checked = true,
	  .no_device = "a rule of reading captures: a device that skips PSNs breaks PSN-ORDER, which scenarios test" },
	CHECKED("UC-PSN-FORWARD", "9.8.3", "UC",
		"a UC requester never retransmits: its PSNs only go forward"),
	NOT_YET("UC-GAP-DROP", "9.8.3", "UC",
		"on a PSN gap a UC responder discards the partial message and waits for a FIRST or ONLY",
		"a discard is a silence: judged by an active tester"),
	NOT_YET("UC-NO-ACK", "9.8", "UC",
		"nothing acknowledges a UC request, and UC requests ask for no acknowledgement",
		"not yet: the checker does not pair UC flows with answers"),

	/* Acknowledgements. */
	CHECKED("ANSWER-SENT-PSN", "9.7.5.2", "RC",
		"an ACK, NAK, READ response or atomic ACK covers only PSNs the requester has sent"),
	CHECKED("ACK-IMPLIES-RESPONSES", "9.5, 9.7.5.1.2", "RC",
		"an ACK acknowledges every request up to its PSN: it comes after the responses of the READs and atomics it covers, never before"),
	CHECKED("MSN-COUNTS", "9.7.5.2, C9-148", "RC",
		"the AETH's MSN counts the messages the responder completed: at least those the answer covers, at most those sent"),
	CHECKED("MSN-FORWARD", "9.7.5.2, C9-148", "RC",
		"the MSN of ACKNOWLEDGE packets never goes back"),
	CHECKED("AETH-RESERVED", "9.7.5.2", "RC",
		"no reserved AETH syndrome or NAK code"),
	CHECKED("NAK-IN-ACKNOWLEDGE", "9.7.5.2", "RC",
		"a NAK syndrome travels only in an ACKNOWLEDGE packet"),
	CHECKED("RNR-NAK-FITS", "9.7.5.2.8", "RC",
		"an RNR NAK answers only a request that consumes a receive WQE: a SEND or an RDMA WRITE with immediate"),
	CHECKED("ACCESS-NAK-FITS", "9.7.5.2", "RC",
		"a remote access error NAK answers an RDMA READ, WRITE or atomic (or a SEND with Invalidate), never a plain SEND"),
	NOT_YET("ACK-COALESCED", "9.7.5.1.2", "RC",
		"one ACK acknowledges every PSN up to its own; a responder need not ACK each request, but acknowledges one that asks (AckReq)",
		"partly: ACK-IMPLIES-RESPONSES; whether each AckReq got an answer is not yet judged"),
	NOT_YET("DUPLICATE-ACKED", "9.7.5.1.1, C9-110", "RC",
		"a duplicate SEND or WRITE is acknowledged again and not executed again",
		"the second execution is invisible on the wire: judged by an active tester"),

	/* NAKs and what they oblige. */
	CHECKED("SEQNAK-SENT", "9.7.5.1.1", "RC",
		"a PSN sequence error NAK names a PSN the requester has sent"),
	CHECKED("SEQNAK-GAP", "9.7.5.2.1", "RC",
		"a PSN sequence error NAK follows a request for a later PSN than the one it names: the gap shows only when a later PSN arrives"),
	CHECKED("SEQNAK-COVERED", "9.7.5.2.1", "RC",
		"a PSN sequence error NAK names a PSN no earlier answer acknowledged"),
	CHECKED("SEQNAK-ONCE", "9.7.5.2.1", "RC",
		"one PSN sequence error NAK per gap: no second for the same PSN before the requester sent anything again"),
	CHECKED("SEQNAK-GO-BACK", "9.7.5.2.1", "RC",
		"after a PSN sequence error NAK the requester resends from the PSN named"),
	CHECKED("FATAL-NAK-STOPS", "9.7.5.2.3, 9.7.5.2.4, 9.7.5.2", "RC",
		"a fatal NAK (invalid request, remote access, remote operational error) ends the requester's work on the QP: no new request after it"),
	CHECKED("FATAL-NAK-SILENT", "9.7.5.2.3, 9.7.5.2.4, 9.7.5.2", "RC",
		"a responder that sent a fatal NAK is in the error state and answers nothing more"),
	CHECKED("RNR-TIMER", "9.7.5.2.8", "RC",
		"a request sent again after an RNR NAK comes no earlier than the NAK's timer field asks"),
	CHECKED("RNR-RETRIES", "9.7.5.2.8, 12.7", "RC",
		"RNR retries of one PSN stay within the RNR Retry Count the CM announced (7: for ever)"),
	NOT_YET("RNR-WHEN-NO-RECV", "9.7.5.2.8", "RC",
		"a SEND or WRITE with immediate that finds no receive WQE gets an RNR NAK",
		"the receive queue is not on the wire: judged by an active tester"),
	NOT_YET("NAK-REMOTE-ACCESS", "9.7.5.1, 10.6", "RC",
		"a request whose R_Key names no region or window of the QP's PD, whose range leaves it, or whose operation it does not allow gets a remote access error NAK",
		"the regions are not on the wire: judged by an active tester; rocemu check explains each such NAK"),
	NOT_YET("NAK-INVALID-REQUEST", "9.7.5.1, 11.2.4.2", "RC",
		"an operation the QP does not allow, a message longer than its receive WQE, a misaligned atomic or a READ or atomic beyond the responder resources gets an invalid request NAK",
		"the QP's attributes are not on the wire: judged by an active tester"),

	/* READs and atomics. */
	CHECKED("READ-RESPONSE", "9.4.3", "RC",
		"READ responses: FIRST, MIDDLE..., LAST or one ONLY, on exactly the PSNs the READ consumes, with the bytes it asked for; a duplicate READ is executed again"),
	CHECKED("READ-RESPONSE-FOR-READ", "9.7.5.2", "RC",
		"a READ response answers an RDMA READ the requester sent"),
	CHECKED("ATOMIC-ACK-FOR-ATOMIC", "9.7.5.2", "RC",
		"an atomic ACK answers a CMP_SWAP or FETCH_ADD"),
	CHECKED("ATOMIC-DUPLICATE", "9.7.5.1.1, C9-110", "RC",
		"a duplicate atomic is answered from the saved result: the same original value, not executed again"),
	NOT_YET("ATOMIC-EXECUTED", "9.4.5", "RC",
		"CMP_SWAP writes the swap value when the compare value matches; both return the original value",
		"memory is not on the wire: judged by an active tester"),
	CHECKED("RESPONSE-ORDER", "9.5", "RC",
		"READ responses and atomic ACKs answer their requests in the order sent"),
	CHECKED("RD-ATOMIC-DEPTH", "9.7.5.2, 12.7", "RC",
		"READs and atomics outstanding at once stay within the Initiator Depth the CM announced"),

	/* The requester's reading of answers. */
	NOT_YET("REQ-RESPONSE-VALIDATION", "9.7.6.1.1", "RC",
		"the requester drops a response that answers nothing outstanding, a duplicate response, or one whose opcode does not fit the request",
		"a drop is a silence: judged by an active tester"),
	NOT_YET("REQ-IMPLIED-NAK", "9.7.6.1.2", "RC",
		"a response for a later PSN while a READ is outstanding, or a READ response out of sequence, means a response was lost: the requester re-issues from the missing PSN",
		"not yet"),
	NOT_YET("RETRY-COUNT", "9.7.6.1.3, 12.7", "RC",
		"retries after the transport timer expires stay within the Retry Count the CM announced, and come no earlier than the Local ACK Timeout",
		"not yet: the CM's Retry Count and Local ACK Timeout are on the wire"),

	/* UD. */
	CHECKED("UD-OPCODES", "9.8.4", "UD",
		"UD carries only SEND_ONLY and SEND_ONLY with immediate"),
	NOT_YET("UD-QKEY", "10.2.4, C9-40", "UD",
		"a UD datagram whose Q_Key does not match the QP's is dropped",
		"the QP's Q_Key is not on the wire: judged by an active tester"),
	NOT_YET("UD-DELIVERY", "9.8.5, C9-92", "UD",
		"a UD receive begins with the GRH and names the source QP; a message that does not fit completes the receive in error and sends no NAK",
		"completions are not on the wire: judged by an active tester"),

	/* Congestion notification (RoCEv2 annex). */
	NOT_YET("CNP-FORMAT", "A17.9", "RC, UC, UD",
		"a Congestion Notification Packet is BTH opcode 0x81 addressed to the requester's QP, with BECN set and its reserved bytes, and answers a CE-marked packet",
		"not yet: rocemu decodes CNPs but neither checks nor sends them"),

	/* Beyond chapter 9: QP states, memory windows, the CM. */
	NOT_YET("QP-STATE", "10.3.1, 11.4.2.1, C9-54", "RC, UC, UD",
		"a QP before Ready To Receive or in the Error state answers nothing; in the Error state outstanding WRs complete with flush errors",
		"states are not on the wire: judged by an active tester"),
	NOT_YET("IMM-DELIVERED", "9.4.1, 9.4.2", "RC, UC",
		"SEND and RDMA WRITE with immediate deliver the ImmDt with the message and consume a receive WQE",
		"completions are not on the wire: judged by an active tester"),
	NOT_YET("SEND-INVALIDATE", "10.6.7.2, 9.4.1", "RC",
		"SEND with Invalidate invalidates the named type 2 window (or fast-registered region) bound through this QP before the completion",
		"the window's binding is not on the wire: judged by an active tester; rocemu replay rebuilds such windows"),
	CHECKED("CM-TID", "13.4, 12.6", "CM",
		"a REP, REJ or MRA carries its REQ's transaction ID, a DREP its DREQ's, a SIDR_REP its SIDR_REQ's"),
	CHECKED("CM-COMM-ID", "12.6", "CM",
		"answers name the comm IDs the REQ and REP gave"),
	CHECKED("CM-ORDER", "12.9", "CM",
		"REQ, (MRA), REP, RTU in that order; a DREP only after a DREQ; nothing after a REJ"),
	CHECKED("CM-QPN", "12.6", "RC, CM",
		"an RC request between the two addresses of a connection goes to the QPN its REQ or REP announced"),
	CHECKED("CM-PSN", "12.6", "RC, CM",
		"the first RC request to a QPN carries the starting PSN its receiver announced"),
	NOT_YET("CM-RESPONDER", "12.9, 12.9.6, 12.9.8", "CM",
		"a duplicate REQ is answered as before (REP again, or MRA), a DREQ always gets a DREP, a REQ from a QP in TimeWait is rejected as stale",
		"not yet: the checker follows CM order, not each side's state"),

	/* added for the scenarios of UC, UD, QP states and memory windows */
	NOT_YET("UC-ERROR-DROP", "9.8.3", "UC",
		"a UC request that fails the responder's checks (R_Key, range, rights, length) is not executed and is dropped silently: UC has no NAK",
		"a drop is a silence: judged by an active tester"),
	NOT_YET("MW-BIND", "10.6.7", "RC, UC",
		"a memory window binds only to a region of its PD registered with the bind right, inside that region's range, and with remote write or atomic rights only where the region allows local write; a refused bind completes in error",
		"binds are not on the wire: judged by an active tester"),
	NOT_YET("ZERO-LENGTH", "9.4.2, 9.4.3", "RC, UC",
		"an RDMA WRITE or READ of DMA length 0 carries no payload, reaches no memory and is acknowledged (a READ by one response without payload); its R_Key and VA, which name no byte, are not checked",
		"not yet: the checker does not judge zero-length operations"),

	/* added for FLUSH and ATOMIC WRITE (IBTA 1.5, annex A19, memory
	 * placement extensions; statements as rxe's sources cite them) */
	NOT_YET("FLUSH-PACKET", "A19, oA19-2, oA19-5", "RC",
		"a FLUSH is one packet, opcode 0x1C, with a FETH (placement type bits 0-3, selectivity level bits 4-5) and a RETH and no payload",
		"not yet: HEADERS refuses a payload on it; the FETH's fields are judged by the conformance suite"),
	NOT_YET("FLUSH-ANSWER", "A19", "RC",
		"a FLUSH takes effect after the requests before it and is answered by a zero-length RDMA READ Response Only at its PSN, the MSN counting it",
		"not yet: rocemu check takes that answer as the FLUSH's (no READ-RESPONSE-FOR-READ finding) but does not require it"),
	NOT_YET("FLUSH-RIGHTS", "A19", "RC",
		"a FLUSH needs its placement type's flush right on the QP (else NAK invalid request) and on the region over its range, or on the region alone at level MR, whose range is ignored (else NAK remote access error)",
		"the rights are not on the wire: judged by an active tester"),
	NOT_YET("FLUSH-DUPLICATE", "A19, oA19-14, oA19-15", "RC",
		"a duplicate FLUSH is answered again, its answer repeated, not executed anew",
		"not yet: the checker does not follow FLUSH answers"),
	NOT_YET("ATOMIC-WRITE-ANSWER", "A19", "RC",
		"an ATOMIC WRITE's 8 bytes are placed at once at its address and it is answered by a zero-length RDMA READ Response Only at its PSN; a duplicate is answered again and not placed again",
		"memory is not on the wire; rocemu check takes that answer as the ATOMIC WRITE's but does not require it"),
	NOT_YET("ATOMIC-WRITE-ALIGN", "A19, oA19-28", "RC",
		"an ATOMIC WRITE names an 8-byte aligned address and length 8; otherwise NAK invalid request, memory untouched",
		"not yet: the checker does not judge ATOMIC WRITE's address"),
	NOT_YET("ATOMIC-WRITE-RIGHTS", "A19", "RC",
		"an ATOMIC WRITE needs remote write on the QP (else NAK invalid request) and on the region over its 8 bytes (else NAK remote access error)",
		"the rights are not on the wire: judged by an active tester"),

	/* added for scope: several QPs, SRQ, fences */
	NOT_YET("QP-ISOLATION", "9.6.1.2, 9.7.1, 10.3.1", "RC, UC, UD",
		"each QP has its own PSNs, receive queue and state: a packet is taken by the QP its BTH names only, and an error of one QP leaves the others as they were",
		"not yet: the checker follows each QP on its own but does not compare them"),
	NOT_YET("SRQ-SHARED", "10.2.9", "RC, UC, UD",
		"a shared receive queue serves every QP attached to it, its receives taken in the order posted; an armed SRQ that falls below its limit raises the SRQ limit reached event once",
		"receive queues are not on the wire: judged by an active tester"),
	NOT_YET("FENCE", "10.8.3.3", "RC",
		"a work request with the fence indicator is not begun until every READ and atomic before it on the send queue has its response",
		"not yet: the checker does not know which requests were fenced"),
};

const struct roce_rule *roce_rules(size_t *n)
{
	*n = sizeof(book) / sizeof(book[0]);
	return book;
}

const struct roce_rule *roce_rule_find(const char *id)
{
	for (size_t i = 0; id && i < sizeof(book) / sizeof(book[0]); i++)
		if (!strcmp(book[i].id, id))
			return &book[i];
	return NULL;
}
