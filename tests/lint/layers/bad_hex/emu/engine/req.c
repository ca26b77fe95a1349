/* SPDX-License-Identifier: MIT */
/* Fixture: opcodes and syndromes spelled in hex (opcode 0x0c in a comment
 * is fine). */
enum {
	OP_READ_FIRST = 0x0d,
	SYN_ACK = 0x1f,
};
#define OPCODE_UC_BASE 0x20
struct bth { unsigned opcode, psn; };
void send_aeth(unsigned syn);

static unsigned seg_opcode(int imm, int last)
{
	if (last)
		return imm ? 0x0b : 0x0a;
	return 0x06;
}

void req_read(struct bth *b, unsigned ack_syn)
{
	b->opcode = 0x0C;
	b->psn = 0xffffff;
	if (b->opcode == 0x12 || ack_syn != 0x60u)
		send_aeth(0x1f);
	b->opcode = seg_opcode(0, 1);
}
