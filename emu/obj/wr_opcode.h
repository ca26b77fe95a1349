/* SPDX-License-Identifier: MIT */
/* The work-request opcode table: per ibv_wr_opcode what it is, who may post it, how it completes. */
#ifndef ROCEMU_OBJ_WR_OPCODE_H
#define ROCEMU_OBJ_WR_OPCODE_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

/* What an operation does, one bit each. */
enum wr_kind {
	WR_SEND = 1 << 0,	/* takes a receive WQE at the responder */
	WR_WRITE = 1 << 1,	/* places its payload at a remote address */
	WR_READ = 1 << 2,	/* RDMA READ */
	WR_ATOMIC = 1 << 3,	/* compare-and-swap, fetch-and-add */
	WR_IMM = 1 << 4,	/* carries immediate data */
	WR_INV = 1 << 5,	/* carries an R_Key to invalidate */
	WR_LOCAL = 1 << 6,	/* done by the requester, nothing sent */
	/* IBTA 1.5 ATOMIC WRITE: 8 bytes placed at once, a WRITE's RETH,
	 * acknowledged like a WRITE; not WR_ATOMIC (no AtomicETH, no
	 * AtomicAckETH, no rd_atomic credit). */
	WR_ATOMIC_WRITE = 1 << 7,
	/* IBTA 1.5 FLUSH: no payload, a FETH and a RETH; answered, like
	 * ATOMIC WRITE, by a zero-length READ response (or covered by an
	 * ACK after it); no rd_atomic credit, as rxe. */
	WR_FLUSH = 1 << 8,
	/* A READ or an atomic takes one of max_rd_atomic's credits, and
	 * sends no payload: its data comes back in the response. */
	WR_RD_ATOMIC = WR_READ | WR_ATOMIC,
};

/* The bit of a QP type in wr_opcode_info.qp_types. */
#define WR_QPT(t) (1u << (t))

/*
 * One row per operation rocemu takes. The RC request opcodes carry it at
 * each place in a message (IBTA 9.4): first, middle, last and only; a
 * READ or atomic is always one packet, its own first and last. The
 * other transports' opcodes follow with roce_opcode_for().
 */
struct wr_opcode_info {
	const char *name;	/* "RDMA_WRITE_WITH_IMM", as verbs spells it */
	unsigned qp_types;	/* WR_QPT bits: the QP types that may post it */
	unsigned kind;		/* enum wr_kind bits */
	enum ibv_wc_opcode wc_opcode;	/* the opcode of its send CQE */
	uint8_t first, middle, last, only;	/* enum roce_op, RC's */
};

/* The table, by opcode (wr_opcode.c); read it through the functions
 * below, which are inline because posting and every packet sent ask. */
extern const struct wr_opcode_info wr_opcodes[];
extern const unsigned wr_opcodes_len;

/* The row of op; NULL for an opcode rocemu does not take (TSO, DRIVER1,
 * any other number). */
static inline const struct wr_opcode_info *wr_opcode(enum ibv_wr_opcode op)
{
	if ((unsigned)op >= wr_opcodes_len || !wr_opcodes[op].name)
		return NULL;
	return &wr_opcodes[op];
}

/* Whether a QP of type t may post op (IBTA 9.8.3, 9.8.4); false for an
 * opcode without a row and for any other QP type. */
static inline bool wr_opcode_allowed(enum ibv_wr_opcode op,
				     enum ibv_qp_type t)
{
	const struct wr_opcode_info *w = wr_opcode(op);

	return w && (unsigned)t < 32 && (w->qp_types & WR_QPT(t));
}

/* Whether op is one of the operations in kind (enum wr_kind bits); false
 * for an opcode without a row. */
static inline bool wr_is(enum ibv_wr_opcode op, unsigned kind)
{
	const struct wr_opcode_info *w = wr_opcode(op);

	return w && (w->kind & kind);
}

/* The opcode of op's send CQE; IBV_WC_SEND for an opcode without a row
 * (the same CQE opcode such a WQE got before the table). */
enum ibv_wc_opcode wr_wc_opcode(enum ibv_wr_opcode op);

/* op's verbs name for traces, "?" for an opcode without a row. */
const char *wr_opcode_name(enum ibv_wr_opcode op);

#endif
