/* SPDX-License-Identifier: MIT */
/* Fixture: opcodes by name; a PSN mask, a pad count and a Q_Key's high bit
 * in hex, after a function whose name says opcode; bytes of a MAC there. */
#include "engine.h"
#include "rocemu/opcode.h"
struct bth { unsigned opcode, qkey; };
struct aeth { unsigned msn; };
static unsigned seg_opcode(int last)
{
	return last ? ROCE_OP_RC_SEND_ONLY : ROCE_OP_RC_READ_REQUEST;
}
static const unsigned char mac_prefix[] = { 0x02, 0x00 };
void req_fill(struct bth *b, struct aeth *aeth, unsigned qkey)
{
	aeth->msn = qkey & 0xffffff;
	b->opcode = seg_opcode(1);
	b->qkey = (qkey & 0x80000000u) ? 0 : qkey;
	b->qkey += (4 - (qkey & 0x3)) & 0x3;
}
