/* SPDX-License-Identifier: MIT */
/* An InfiniBand transport packet as RoCEv2 carries it: BTH, extension headers, payload, pad, ICRC. */
#ifndef ROCEMU_PACKET_H
#define ROCEMU_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rocemu/ibhdr.h"
#include "rocemu/opcode.h"

struct roce_ib {
	bool has_bth;				/* set by parse */
	struct roce_bth bth;
	const struct roce_opcode_info *op;	/* set by parse */
	uint16_t exts;				/* set by parse: op->exts */
	struct roce_rdeth rdeth;
	struct roce_deth deth;
	uint32_t feth;
	struct roce_reth reth;
	struct roce_atmeth atmeth;
	struct roce_aeth aeth;
	uint64_t atmack;	/* AtomicAckETH: original remote data */
	uint32_t imm;		/* ImmDt, read as a big-endian number */
	uint32_t ieth;		/* IETH: the rkey to invalidate */
	uint8_t cnp_rsvd[ROCE_CNP_RSVD_LEN];
	const uint8_t *payload;
	uint32_t payload_len;	/* without the pad */
	uint32_t payload_avail;	/* bytes of it present (less if truncated) */
	uint8_t pad_bytes[3];
	/*
	 * The ICRC as its four wire bytes read big-endian, which is how
	 * Wireshark shows it. rxe stores ~crc32 little-endian, so this is the
	 * byte-swapped CRC value.
	 */
	uint32_t icrc;
};

/* Whether bytes is a path MTU the IBTA defines: 256, 512, 1024, 2048, 4096. */
static inline bool roce_is_path_mtu(uint32_t bytes)
{
	return bytes >= 256 && bytes <= 4096 && !(bytes & (bytes - 1));
}

/* Pad bytes needed after len payload bytes to reach a 4-byte boundary. */
static inline unsigned roce_pad_len(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/*
 * Parses a transport packet of len bytes (the UDP payload, ICRC included)
 * of which the first avail are present. The opcode table says which
 * extension headers follow; every length rule that does not need the path
 * MTU is checked. Returns 0; -EBADMSG with *why set to a reason; or
 * -ENODATA with *why set if avail < len: then whatever is present is
 * decoded (ib->op is NULL without a whole BTH, ib->exts is 0 without all
 * the extension headers) and the ICRC is not read. Pointers in ib point
 * into p.
 */
int roce_ib_parse(const uint8_t *p, size_t len, size_t avail,
		  struct roce_ib *ib, const char **why);

/*
 * Writes BTH, the extension headers that ib->bth.opcode calls for, the
 * payload and bth.pad pad bytes, then 4 zero bytes for the ICRC, which the
 * frame builder fills. Returns the length written; -EINVAL for an opcode
 * the IBTA does not define or a payload the opcode cannot carry; -ENOSPC
 * if cap is too small. Nothing beyond the returned length is touched.
 */
int roce_ib_build(const struct roce_ib *ib, uint8_t *p, size_t cap);

#endif
