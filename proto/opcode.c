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

/* A row, at the index its enum roce_op name gives, under that very name. */
#define OP(nm, tr, ext, fl)                                               \
	[ROCE_OP_##nm] = { .name = #nm, .transport = ROCE_TR_##tr,        \
			   .hdr_len = EXTLEN(ext), .exts = (ext),         \
			   .flags = (fl) }

/* SEND and RDMA WRITE, 0x00-0x0B: shared by RC, UC and RD (x: RD's extra). */
#define SEND_WRITE(tr, x)                                                 \
	OP(tr##_SEND_FIRST, tr, x, SND | F),                              \
	OP(tr##_SEND_MIDDLE, tr, x, SND | M),                             \
	OP(tr##_SEND_LAST, tr, x, SND | L),                               \
	OP(tr##_SEND_LAST_IMM, tr, x | IMMDT, SND | L),                   \
	OP(tr##_SEND_ONLY, tr, x, SND | O),                               \
	OP(tr##_SEND_ONLY_IMM, tr, x | IMMDT, SND | O),                   \
	OP(tr##_RDMA_WRITE_FIRST, tr, x | RETH, WR | F),                  \
	OP(tr##_RDMA_WRITE_MIDDLE, tr, x, WR | M),                        \
	OP(tr##_RDMA_WRITE_LAST, tr, x, WR | L),                          \
	OP(tr##_RDMA_WRITE_LAST_IMM, tr, x | IMMDT, WR | L),              \
	OP(tr##_RDMA_WRITE_ONLY, tr, x | RETH, WR | O),                   \
	OP(tr##_RDMA_WRITE_ONLY_IMM, tr, x | RETH | IMMDT, WR | O)

/* READ, ACK and atomics, 0x0C-0x14: RC and RD (xq, xr: RD's extras). */
#define READ_ATOMIC(tr, xq, xr)                                           \
	OP(tr##_RDMA_READ_REQUEST, tr, xq | RETH, ROCE_OPF_READ | REQ | O), \
	OP(tr##_RDMA_READ_RESPONSE_FIRST, tr, xr | AETH, RD_RSP | F),     \
	OP(tr##_RDMA_READ_RESPONSE_MIDDLE, tr, xr, RD_RSP | M),           \
	OP(tr##_RDMA_READ_RESPONSE_LAST, tr, xr | AETH, RD_RSP | L),      \
	OP(tr##_RDMA_READ_RESPONSE_ONLY, tr, xr | AETH, RD_RSP | O),      \
	OP(tr##_ACK, tr, xr | AETH, ROCE_OPF_ACK | RSP | O),              \
	OP(tr##_ATOMIC_ACK, tr, xr | AETH | ATMACK,                       \
	   ROCE_OPF_ATOMIC | ROCE_OPF_ACK | RSP | O),                     \
	OP(tr##_CMP_SWAP, tr, xq | ATMETH, ATM | O),                      \
	OP(tr##_FETCH_ADD, tr, xq | ATMETH, ATM | O)

static const struct roce_opcode_info opcodes[256] = {
	SEND_WRITE(RC, 0),
	READ_ATOMIC(RC, 0, 0),
	OP(RC_SEND_LAST_INV, RC, IETH, SND | L),
	OP(RC_SEND_ONLY_INV, RC, IETH, SND | O),
	/* IBTA 1.5 memory placement extensions, as rxe has them since 6.2. */
	OP(RC_FLUSH, RC, FETH | RETH, REQ | O),
	OP(RC_ATOMIC_WRITE, RC, RETH,
	   ROCE_OPF_ATOMIC | REQ | PAY | ROCE_OPF_FIXED8 | O),
	SEND_WRITE(UC, 0),
	SEND_WRITE(RD, RDETH | DETH),
	READ_ATOMIC(RD, RDETH | DETH, RDETH),
	OP(RD_RESYNC, RD, RDETH | DETH, REQ | O),
	OP(UD_SEND_ONLY, UD, DETH, SND | O),
	OP(UD_SEND_ONLY_IMM, UD, DETH | IMMDT, SND | O),
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

/* The operation's name without its transport: "SEND_ONLY" of "UD_SEND_ONLY". */
static const char *operation(const struct roce_opcode_info *op)
{
	const char *u = strchr(op->name, '_');

	return u ? u + 1 : op->name;
}

int roce_opcode_for(enum roce_transport tr, uint8_t rc_op)
{
	const struct roce_opcode_info *rc = roce_opcode(rc_op), *to;

	if ((unsigned)tr > ROCE_TR_UD || !rc || rc->transport != ROCE_TR_RC)
		return -EINVAL;
	/* RC's operations lie in 0x00-0x1f; each range repeats them at the
	 * same offset, those it has. */
	unsigned op = range_base[tr] + rc_op;
	to = roce_opcode((uint8_t)op);
	if (!to || to->transport != tr || strcmp(operation(to), operation(rc)))
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
