/* SPDX-License-Identifier: MIT */
/* The input format of the sequence fuzzer: step numbers and packet flags, shared by the target and the seed writer. */
#ifndef ROCEMU_TESTS_FUZZ_SEQUENCE_FORMAT_H
#define ROCEMU_TESTS_FUZZ_SEQUENCE_FORMAT_H

/*
 * The input is a list of steps, each an opcode byte (taken modulo
 * STEP_COUNT) and its operands; a missing operand byte reads as 0.
 * tests/tools/mkcap.c --sequence-seeds writes inputs in this format. New
 * steps go at the end: the seeds and tests/fuzz/regress_sequence/ write
 * each opcode as its number, which then keeps its meaning.
 */
enum step {
	STEP_PACKET,		/* flags, length (2, BE), transport packet */
	STEP_PACKET_QUEUED,	/* the same, left on the wire */
	STEP_RUN,		/* rocemu_world_run */
	STEP_ADVANCE,		/* exponent: 2^e ns of virtual time */
	STEP_MR_REG,		/* slot/pd/window/access, offset, length */
	STEP_MR_DEREG,		/* slot */
	STEP_POST_RECV,		/* qp/count, then per WR: nsge, SGEs */
	STEP_POST_SEND,		/* see post_send() */
	STEP_QP_STATE,		/* target/qp, then 3 bytes of attributes */
	STEP_QP_CREATE,		/* slot/type/srq/cqs */
	STEP_QP_DESTROY,	/* slot */
	STEP_CQ_POLL,		/* slot/count */
	STEP_CQ_DESTROY,	/* slot */
	STEP_CQ_CREATE,		/* slot, depth/channel */
	STEP_SRQ_CREATE,	/* max_wr, limit */
	STEP_SRQ_DESTROY,
	STEP_SRQ_POST,		/* count, then per WR: nsge, SGEs */
	STEP_AH_CREATE,		/* slot/destination */
	STEP_AH_DESTROY,	/* slot */
	STEP_ASYNC,		/* drains the async event queue */
	STEP_CHANNEL,		/* slot/arm or take an event */
	STEP_COUNT,
};

/* Flags of a packet step. */
enum {
	PK_AIM = 1 << 0,	/* BTH destination QP := the chosen QP's */
	PK_ADDR = 1 << 1,	/* RETH/AtomicETH/IETH into the chosen MR */
	PK_PSN = 1 << 2,	/* the PSN the chosen QP expects next */
	PK_FIT = 1 << 3,	/* RETH range kept inside the MR */
	PK_MR_SHIFT = 4,	/* two bits: the MR slot */
	PK_QP1 = 1 << 6,	/* QP slot 1 rather than 0 */
	PK_QKEY = 1 << 7,	/* DETH Q_Key := the QP's */
};

#endif
