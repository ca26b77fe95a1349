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

struct roce_opcode_info {
	const char *name;	/* "RC_SEND_ONLY"; NULL: undefined opcode */
	uint8_t transport;	/* enum roce_transport */
	uint8_t hdr_len;	/* BTH plus every extension header */
	uint16_t exts;		/* enum roce_ext bits */
	uint16_t flags;		/* enum roce_opflag bits */
};

/* Returns the table row of an opcode, or NULL if the IBTA defines none. */
const struct roce_opcode_info *roce_opcode(uint8_t opcode);

/* Size of one extension header (a single enum roce_ext bit), 0 if unknown. */
unsigned roce_ext_len(unsigned ext);

/* Offset of ext from the start of the BTH in a packet carrying exts. */
unsigned roce_ext_offset(unsigned exts, unsigned ext);

/* Short names: "RC", "UC", "RD", "UD", "CNP"; "RETH", "AETH", ... */
const char *roce_transport_name(unsigned transport);
const char *roce_ext_name(unsigned ext);

#endif
