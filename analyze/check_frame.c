/* SPDX-License-Identifier: MIT */
/* Rules on a packet alone: its ICRC, and the header and length rules the codec checks. */
#include <errno.h>

#include "check_local.h"

void chk_frame(struct roce_check *c, uint64_t no, const struct roce_frame *f,
	       int rc, const char *why, unsigned flow, unsigned dir)
{
	if (rc == -EBADMSG && f->ib.has_bth && !f->ib.op &&
	    (f->ib.bth.opcode & 0xe0) == (ROCE_OP_UD_SEND_ONLY & 0xe0)) {
		chk_report(c, no, flow, dir, ROCE_CHECK_ERROR, "UD-OPCODES",
			   "opcode 0x%02x in UD's range: UD has only SEND_ONLY "
			   "and SEND_ONLY_IMM (9.8.4); a receiver drops it",
			   f->ib.bth.opcode);
		return;
	}
	if (rc == -EBADMSG) {
		/* The codec names what broke: pad, lengths, an undefined
		 * opcode, a header cut off (IBTA ch. 9, transport headers). */
		chk_report(c, no, flow, dir, ROCE_CHECK_ERROR, "HEADERS",
			   "malformed: %s; a receiver drops it (9.2, transport "
			   "headers)", why ? why : "header rule broken");
		return;
	}
	if (rc || f->truncated)
		return;	/* a frame the capture cut short is not judged */
	if (!roce_frame_icrc_ok(f))
		chk_report(c, no, flow, dir, ROCE_CHECK_ERROR, "ICRC",
			   "ICRC 0x%08x should be 0x%08x: the packet was "
			   "corrupted or its sender computes the invariant CRC "
			   "wrongly, and a receiver drops it silently (A17.3.3, "
			   "7.8.1)", f->ib.icrc, f->icrc_calc);
}
