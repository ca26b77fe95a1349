/* SPDX-License-Identifier: MIT */
/* The opcode table: per BTH opcode its name, extension headers and payload rules. */
#ifndef ROCEMU_OPCODE_H
#define ROCEMU_OPCODE_H

#include <stdint.h>

enum roce_transport {
	ROCE_TR_RC,
	ROCE_TR_UC,
	ROCE_TR_RD,
	ROCE_TR_UD,
	ROCE_TR_CNP,
};

/*
 * Extension headers, one bit each. The bit order is the order in which
 * they follow the BTH on the wire (IBTA 9.2, rxe_opcode.c for FETH).
 */
enum roce_ext {
	ROCE_EXT_RDETH = 1 << 0,
	ROCE_EXT_DETH = 1 << 1,
	ROCE_EXT_FETH = 1 << 2,
	ROCE_EXT_RETH = 1 << 3,
	ROCE_EXT_ATMETH = 1 << 4,
	ROCE_EXT_AETH = 1 << 5,
	ROCE_EXT_ATMACK = 1 << 6,
	ROCE_EXT_IMMDT = 1 << 7,
	ROCE_EXT_IETH = 1 << 8,
	ROCE_EXT_CNPRSV = 1 << 9,	/* the 16 reserved bytes of a CNP */
	ROCE_EXT_COUNT = 10,
};

enum roce_opflag {
	ROCE_OPF_FIRST = 1 << 0,
	ROCE_OPF_MIDDLE = 1 << 1,
	ROCE_OPF_LAST = 1 << 2,
	ROCE_OPF_ONLY = 1 << 3,
	ROCE_OPF_REQ = 1 << 4,		/* sent by a requester */
	ROCE_OPF_RESP = 1 << 5,		/* sent by a responder */
	ROCE_OPF_PAYLOAD = 1 << 6,	/* may carry payload */
	ROCE_OPF_SEND = 1 << 7,
	ROCE_OPF_WRITE = 1 << 8,
	ROCE_OPF_READ = 1 << 9,
	ROCE_OPF_ATOMIC = 1 << 10,
	ROCE_OPF_ACK = 1 << 11,
	ROCE_OPF_FIXED8 = 1 << 12,	/* payload is exactly 8 bytes */
};

/*
 * Every BTH opcode the table defines, by the table's own name (IBTA 9.2.1
 * table 38; FLUSH and ATOMIC_WRITE from IBTA 1.5; CNP from RoCEv2 A17.9.3).
 * UC's SEND and WRITE are RC's plus 0x20, RD's operations RC's plus 0x40
 * and UD's SENDs RC's plus 0x60: roce_opcode_for() goes between them.
 */
enum roce_op {
	ROCE_OP_RC_SEND_FIRST = 0x00,
	ROCE_OP_RC_SEND_MIDDLE = 0x01,
	ROCE_OP_RC_SEND_LAST = 0x02,
	ROCE_OP_RC_SEND_LAST_IMM = 0x03,
	ROCE_OP_RC_SEND_ONLY = 0x04,
	ROCE_OP_RC_SEND_ONLY_IMM = 0x05,
	ROCE_OP_RC_RDMA_WRITE_FIRST = 0x06,
	ROCE_OP_RC_RDMA_WRITE_MIDDLE = 0x07,
	ROCE_OP_RC_RDMA_WRITE_LAST = 0x08,
	ROCE_OP_RC_RDMA_WRITE_LAST_IMM = 0x09,
	ROCE_OP_RC_RDMA_WRITE_ONLY = 0x0a,
	ROCE_OP_RC_RDMA_WRITE_ONLY_IMM = 0x0b,
	ROCE_OP_RC_RDMA_READ_REQUEST = 0x0c,
	ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST = 0x0d,
	ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE = 0x0e,
	ROCE_OP_RC_RDMA_READ_RESPONSE_LAST = 0x0f,
	ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY = 0x10,
	ROCE_OP_RC_ACK = 0x11,
	ROCE_OP_RC_ATOMIC_ACK = 0x12,
	ROCE_OP_RC_CMP_SWAP = 0x13,
	ROCE_OP_RC_FETCH_ADD = 0x14,
	ROCE_OP_RC_SEND_LAST_INV = 0x16,
	ROCE_OP_RC_SEND_ONLY_INV = 0x17,
	ROCE_OP_RC_FLUSH = 0x1c,
	ROCE_OP_RC_ATOMIC_WRITE = 0x1d,

	ROCE_OP_UC_SEND_FIRST = 0x20,
	ROCE_OP_UC_SEND_MIDDLE = 0x21,
	ROCE_OP_UC_SEND_LAST = 0x22,
	ROCE_OP_UC_SEND_LAST_IMM = 0x23,
	ROCE_OP_UC_SEND_ONLY = 0x24,
	ROCE_OP_UC_SEND_ONLY_IMM = 0x25,
	ROCE_OP_UC_RDMA_WRITE_FIRST = 0x26,
	ROCE_OP_UC_RDMA_WRITE_MIDDLE = 0x27,
	ROCE_OP_UC_RDMA_WRITE_LAST = 0x28,
	ROCE_OP_UC_RDMA_WRITE_LAST_IMM = 0x29,
	ROCE_OP_UC_RDMA_WRITE_ONLY = 0x2a,
	ROCE_OP_UC_RDMA_WRITE_ONLY_IMM = 0x2b,

	ROCE_OP_RD_SEND_FIRST = 0x40,
	ROCE_OP_RD_SEND_MIDDLE = 0x41,
	ROCE_OP_RD_SEND_LAST = 0x42,
	ROCE_OP_RD_SEND_LAST_IMM = 0x43,
	ROCE_OP_RD_SEND_ONLY = 0x44,
	ROCE_OP_RD_SEND_ONLY_IMM = 0x45,
	ROCE_OP_RD_RDMA_WRITE_FIRST = 0x46,
	ROCE_OP_RD_RDMA_WRITE_MIDDLE = 0x47,
	ROCE_OP_RD_RDMA_WRITE_LAST = 0x48,
	ROCE_OP_RD_RDMA_WRITE_LAST_IMM = 0x49,
	ROCE_OP_RD_RDMA_WRITE_ONLY = 0x4a,
	ROCE_OP_RD_RDMA_WRITE_ONLY_IMM = 0x4b,
	ROCE_OP_RD_RDMA_READ_REQUEST = 0x4c,
	ROCE_OP_RD_RDMA_READ_RESPONSE_FIRST = 0x4d,
	ROCE_OP_RD_RDMA_READ_RESPONSE_MIDDLE = 0x4e,
	ROCE_OP_RD_RDMA_READ_RESPONSE_LAST = 0x4f,
	ROCE_OP_RD_RDMA_READ_RESPONSE_ONLY = 0x50,
	ROCE_OP_RD_ACK = 0x51,
	ROCE_OP_RD_ATOMIC_ACK = 0x52,
	ROCE_OP_RD_CMP_SWAP = 0x53,
	ROCE_OP_RD_FETCH_ADD = 0x54,
	ROCE_OP_RD_RESYNC = 0x55,

	ROCE_OP_UD_SEND_ONLY = 0x64,
	ROCE_OP_UD_SEND_ONLY_IMM = 0x65,

	ROCE_OP_CNP = 0x81,

	/* Not an opcode on the wire (the table defines nothing at 0xff):
	 * "RC has no such operation" in roce_opcode_info.rc_op. */
	ROCE_OP_NONE = 0xff,
};

struct roce_opcode_info {
	const char *name;	/* "RC_SEND_ONLY"; NULL: undefined opcode */
	uint8_t transport;	/* enum roce_transport */
	uint8_t hdr_len;	/* BTH plus every extension header */
	uint16_t exts;		/* enum roce_ext bits */
	uint16_t flags;		/* enum roce_opflag bits */
	uint8_t rc_op;		/* RC's opcode of this operation, or ROCE_OP_NONE */
};

/* Returns the table row of an opcode, or NULL if the IBTA defines none. */
const struct roce_opcode_info *roce_opcode(uint8_t opcode);

/*
 * The opcode of RC opcode rc_op's operation in transport tr: rc_op itself
 * for RC, the same operation in UC's, RD's or UD's range otherwise.
 * Returns -EINVAL if rc_op is not an RC opcode or tr has no such
 * operation (UC has no READ, UD only SEND_ONLY and SEND_ONLY_IMM, a CNP
 * is no operation).
 */
int roce_opcode_for(enum roce_transport tr, uint8_t rc_op);

/* Size of one extension header (a single enum roce_ext bit), 0 if unknown. */
unsigned roce_ext_len(unsigned ext);

/* Offset of ext from the start of the BTH in a packet carrying exts. */
unsigned roce_ext_offset(unsigned exts, unsigned ext);

/* Short names: "RC", "UC", "RD", "UD", "CNP"; "RETH", "AETH", ... */
const char *roce_transport_name(unsigned transport);
const char *roce_ext_name(unsigned ext);

#endif
