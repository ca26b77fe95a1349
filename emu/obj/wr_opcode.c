/* SPDX-License-Identifier: MIT */
/* The work-request opcode table, as rxe's rxe_wr_opcode_info, and its lookups. */
#include "wr_opcode.h"
#include "rocemu/device.h"
#include "rocemu/opcode.h"

#define RC WR_QPT(IBV_QPT_RC)
#define UC WR_QPT(IBV_QPT_UC)
#define UD WR_QPT(IBV_QPT_UD)

/* A SEND or WRITE's packet opcodes, by place in the message. */
#define MESSAGE(f, m, l, o)                                               \
	.first = ROCE_OP_RC_##f, .middle = ROCE_OP_RC_##m,                \
	.last = ROCE_OP_RC_##l, .only = ROCE_OP_RC_##o
/* A READ or atomic's one request packet. */
#define ONE_PACKET(o)                                                     \
	.first = ROCE_OP_RC_##o, .middle = ROCE_OP_RC_##o,                \
	.last = ROCE_OP_RC_##o, .only = ROCE_OP_RC_##o

/* Which QP types have which operations: IBTA 9.8.3 (UC), 9.8.4 (UD). */
const struct wr_opcode_info wr_opcodes[] = {
	[IBV_WR_SEND] = {
		"SEND", RC | UC | UD, WR_SEND, IBV_WC_SEND,
		MESSAGE(SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY) },
	[IBV_WR_SEND_WITH_IMM] = {
		"SEND_WITH_IMM", RC | UC | UD, WR_SEND | WR_IMM, IBV_WC_SEND,
		MESSAGE(SEND_FIRST, SEND_MIDDLE, SEND_LAST_IMM,
			SEND_ONLY_IMM) },
	[IBV_WR_SEND_WITH_INV] = {
		"SEND_WITH_INV", RC, WR_SEND | WR_INV, IBV_WC_SEND,
		MESSAGE(SEND_FIRST, SEND_MIDDLE, SEND_LAST_INV,
			SEND_ONLY_INV) },
	[IBV_WR_RDMA_WRITE] = {
		"RDMA_WRITE", RC | UC, WR_WRITE, IBV_WC_RDMA_WRITE,
		MESSAGE(RDMA_WRITE_FIRST, RDMA_WRITE_MIDDLE, RDMA_WRITE_LAST,
			RDMA_WRITE_ONLY) },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = {
		"RDMA_WRITE_WITH_IMM", RC | UC, WR_WRITE | WR_IMM,
		IBV_WC_RDMA_WRITE,
		MESSAGE(RDMA_WRITE_FIRST, RDMA_WRITE_MIDDLE,
			RDMA_WRITE_LAST_IMM, RDMA_WRITE_ONLY_IMM) },
	[IBV_WR_RDMA_READ] = {
		"RDMA_READ", RC, WR_READ, IBV_WC_RDMA_READ,
		ONE_PACKET(RDMA_READ_REQUEST) },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = {
		"ATOMIC_CMP_AND_SWP", RC, WR_ATOMIC, IBV_WC_COMP_SWAP,
		ONE_PACKET(CMP_SWAP) },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = {
		"ATOMIC_FETCH_AND_ADD", RC, WR_ATOMIC, IBV_WC_FETCH_ADD,
		ONE_PACKET(FETCH_ADD) },
	/* Memory window operations (IBTA 10.6.7), done where the requester
	 * reaches them in the send queue, as rxe's local operations. */
	[IBV_WR_LOCAL_INV] = {
		"LOCAL_INV", RC | UC, WR_LOCAL, IBV_WC_LOCAL_INV },
	[IBV_WR_BIND_MW] = {
		"BIND_MW", RC | UC, WR_LOCAL, IBV_WC_BIND_MW },
	/* IBTA 1.5 (rxe since Linux 6.2): RC only, one packet. */
	[IBV_WR_ATOMIC_WRITE] = {
		"ATOMIC_WRITE", RC, WR_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE,
		ONE_PACKET(ATOMIC_WRITE) },
	[ROCEMU_WR_FLUSH] = {
		"FLUSH", RC, WR_FLUSH, ROCEMU_WC_FLUSH, ONE_PACKET(FLUSH) },
};

const unsigned wr_opcodes_len = sizeof(wr_opcodes) / sizeof(wr_opcodes[0]);

enum ibv_wc_opcode wr_wc_opcode(enum ibv_wr_opcode op)
{
	const struct wr_opcode_info *w = wr_opcode(op);

	return w ? w->wc_opcode : IBV_WC_SEND;
}

const char *wr_opcode_name(enum ibv_wr_opcode op)
{
	const struct wr_opcode_info *w = wr_opcode(op);

	return w ? w->name : "?";
}
