/* SPDX-License-Identifier: MIT */
/* The one opcode table that parsing and building both use (IBTA 9.2.1, table 38). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rocemu/ibhdr.h"
#include "rocemu/opcode.h"

#define RDETH ROCE_EXT_RDETH
#define DETH ROCE_EXT_DETH
#define FETH ROCE_EXT_FETH
#define RETH ROCE_EXT_RETH
#define ATMETH ROCE_EXT_ATMETH
#define AETH ROCE_EXT_AETH
#define ATMACK ROCE_EXT_ATMACK
#define IMMDT ROCE_EXT_IMMDT
#define IETH ROCE_EXT_IETH
#define CNPRSV ROCE_EXT_CNPRSV

#define F ROCE_OPF_FIRST
#define M ROCE_OPF_MIDDLE
#define L ROCE_OPF_LAST
#define O ROCE_OPF_ONLY
#define REQ ROCE_OPF_REQ
#define RSP ROCE_OPF_RESP
#define PAY ROCE_OPF_PAYLOAD
#define SND (ROCE_OPF_SEND | REQ | PAY)
#define WR (ROCE_OPF_WRITE | REQ | PAY)
#define RD_RSP (ROCE_OPF_READ | RSP | PAY)
#define ATM (ROCE_OPF_ATOMIC | REQ)

/* Constant expression, so that hdr_len is filled at compile time. */
#define EXTLEN(m)                                                        \
	(ROCE_BTH_LEN + (((m) & RDETH) ? ROCE_RDETH_LEN : 0) +           \
	 (((m) & DETH) ? ROCE_DETH_LEN : 0) +                             \
	 (((m) & FETH) ? ROCE_FETH_LEN : 0) +                             \
	 (((m) & RETH) ? ROCE_RETH_LEN : 0) +                             \
	 (((m) & ATMETH) ? ROCE_ATMETH_LEN : 0) +                         \
	 (((m) & AETH) ? ROCE_AETH_LEN : 0) +                             \
	 (((m) & ATMACK) ? ROCE_ATMACK_LEN : 0) +                         \
	 (((m) & IMMDT) ? ROCE_IMMDT_LEN : 0) +                           \
	 (((m) & IETH) ? ROCE_IETH_LEN : 0) +                             \
	 (((m) & CNPRSV) ? ROCE_CNP_RSVD_LEN : 0))

/* A row, at the index its enum roce_op name gives, under that very name;
 * rc: the RC opcode of the same operation, ROCE_OP_NONE if RC has none. */
#define ROW(nm, tr, ext, fl, rc)                                          \
	[ROCE_OP_##nm] = { .name = #nm, .transport = ROCE_TR_##tr,        \
			   .hdr_len = EXTLEN(ext), .exts = (ext),         \
			   .flags = (fl), .rc_op = (rc) }

/* An operation that RC has too: op is its name without the transport. */
#define OPX(tr, op, ext, fl) ROW(tr##_##op, tr, ext, fl, ROCE_OP_RC_##op)

/* A row of its own transport only. */
#define OP(nm, tr, ext, fl) ROW(nm, tr, ext, fl, ROCE_OP_NONE)

/* SEND and RDMA WRITE, 0x00-0x0B: shared by RC, UC and RD (x: RD's extra). */
#define SEND_WRITE(tr, x)                                                 \
	OPX(tr, SEND_FIRST, x, SND | F),                                  \
	OPX(tr, SEND_MIDDLE, x, SND | M),                                 \
	OPX(tr, SEND_LAST, x, SND | L),                                   \
	OPX(tr, SEND_LAST_IMM, x | IMMDT, SND | L),                       \
	OPX(tr, SEND_ONLY, x, SND | O),                                   \
	OPX(tr, SEND_ONLY_IMM, x | IMMDT, SND | O),                       \
	OPX(tr, RDMA_WRITE_FIRST, x | RETH, WR | F),                      \
	OPX(tr, RDMA_WRITE_MIDDLE, x, WR | M),                            \
	OPX(tr, RDMA_WRITE_LAST, x, WR | L),                              \
	OPX(tr, RDMA_WRITE_LAST_IMM, x | IMMDT, WR | L),                  \
	OPX(tr, RDMA_WRITE_ONLY, x | RETH, WR | O),                       \
	OPX(tr, RDMA_WRITE_ONLY_IMM, x | RETH | IMMDT, WR | O)

/* READ, ACK and atomics, 0x0C-0x14: RC and RD (xq, xr: RD's extras). */
#define READ_ATOMIC(tr, xq, xr)                                           \
	OPX(tr, RDMA_READ_REQUEST, xq | RETH, ROCE_OPF_READ | REQ | O),   \
	OPX(tr, RDMA_READ_RESPONSE_FIRST, xr | AETH, RD_RSP | F),         \
	OPX(tr, RDMA_READ_RESPONSE_MIDDLE, xr, RD_RSP | M),               \
	OPX(tr, RDMA_READ_RESPONSE_LAST, xr | AETH, RD_RSP | L),          \
	OPX(tr, RDMA_READ_RESPONSE_ONLY, xr | AETH, RD_RSP | O),          \
	OPX(tr, ACK, xr | AETH, ROCE_OPF_ACK | RSP | O),                  \
	OPX(tr, ATOMIC_ACK, xr | AETH | ATMACK,                           \
	   ROCE_OPF_ATOMIC | ROCE_OPF_ACK | RSP | O),                     \
	OPX(tr, CMP_SWAP, xq | ATMETH, ATM | O),                          \
	OPX(tr, FETCH_ADD, xq | ATMETH, ATM | O)

static const struct roce_opcode_info opcodes[256] = {
	SEND_WRITE(RC, 0),
	READ_ATOMIC(RC, 0, 0),
	OPX(RC, SEND_LAST_INV, IETH, SND | L),
	OPX(RC, SEND_ONLY_INV, IETH, SND | O),
	/* IBTA 1.5 memory placement extensions, as rxe has them since 6.2. */
	OPX(RC, FLUSH, FETH | RETH, REQ | O),
	OPX(RC, ATOMIC_WRITE, RETH,
	   ROCE_OPF_ATOMIC | REQ | PAY | ROCE_OPF_FIXED8 | O),
	SEND_WRITE(UC, 0),
	SEND_WRITE(RD, RDETH | DETH),
	READ_ATOMIC(RD, RDETH | DETH, RDETH),
	OP(RD_RESYNC, RD, RDETH | DETH, REQ | O),
	OPX(UD, SEND_ONLY, DETH, SND | O),
	OPX(UD, SEND_ONLY_IMM, DETH | IMMDT, SND | O),
	/* RoCEv2 Annex A17.9.3: congestion notification packet. */
	OP(CNP, CNP, CNPRSV, O),
};

const struct roce_opcode_info *roce_opcode(uint8_t opcode)
{
	const struct roce_opcode_info *op = &opcodes[opcode];

	return op->name ? op : NULL;
}

/* Where each transport's range of opcodes begins (IBTA 9.2.1 table 38). */
static const uint8_t range_base[] = {
	[ROCE_TR_RC] = ROCE_OP_RC_SEND_FIRST,
	[ROCE_TR_UC] = ROCE_OP_UC_SEND_FIRST,
	[ROCE_TR_RD] = ROCE_OP_RD_SEND_FIRST,
	[ROCE_TR_UD] = ROCE_OP_UD_SEND_ONLY - ROCE_OP_RC_SEND_ONLY,
};

int roce_opcode_for(enum roce_transport tr, uint8_t rc_op)
{
	const struct roce_opcode_info *rc = roce_opcode(rc_op), *to;

	if ((unsigned)tr > ROCE_TR_UD || !rc || rc->transport != ROCE_TR_RC)
		return -EINVAL;
	/* RC's operations lie in 0x00-0x1f; each range repeats them at the
	 * same offset, those it has. */
	unsigned op = range_base[tr] + rc_op;
	to = roce_opcode((uint8_t)op);
	if (!to || to->transport != tr || to->rc_op != rc_op)
		return -EINVAL;
	return (int)op;
}

static const struct {
	const char *name;
	unsigned len;
} exts[ROCE_EXT_COUNT] = {
	{ "RDETH", ROCE_RDETH_LEN }, { "DETH", ROCE_DETH_LEN },
	{ "FETH", ROCE_FETH_LEN },   { "RETH", ROCE_RETH_LEN },
	{ "AtomicETH", ROCE_ATMETH_LEN }, { "AETH", ROCE_AETH_LEN },
	{ "AtomicAckETH", ROCE_ATMACK_LEN }, { "ImmDt", ROCE_IMMDT_LEN },
	{ "IETH", ROCE_IETH_LEN },   { "CNP-reserved", ROCE_CNP_RSVD_LEN },
};

static int ext_index(unsigned ext)
{
	if (ext == 0 || (ext & (ext - 1)) || ext >= (1u << ROCE_EXT_COUNT))
		return -1;
	return __builtin_ctz(ext);
}

unsigned roce_ext_len(unsigned ext)
{
	int i = ext_index(ext);

	return i < 0 ? 0 : exts[i].len;
}

const char *roce_ext_name(unsigned ext)
{
	int i = ext_index(ext);

	return i < 0 ? "?" : exts[i].name;
}

unsigned roce_ext_offset(unsigned mask, unsigned ext)
{
	unsigned off = ROCE_BTH_LEN;

	for (unsigned b = 1; b < ext; b <<= 1)
		if (mask & b)
			off += roce_ext_len(b);
	return off;
}

const char *roce_transport_name(unsigned transport)
{
	static const char *const names[] = { "RC", "UC", "RD", "UD", "CNP" };

	return transport < 5 ? names[transport] : "?";
}
