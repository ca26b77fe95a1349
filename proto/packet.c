/* SPDX-License-Identifier: MIT */
/* Transport packet parse and build, both driven by the opcode table. */
#include <errno.h>
#include <string.h>

#include "rocemu/packet.h"
#include "byteorder.h"

static int ext_get(unsigned ext, const uint8_t *p, size_t len,
		   struct roce_ib *ib)
{
	switch (ext) {
	case ROCE_EXT_RDETH: return roce_rdeth_get(p, len, &ib->rdeth);
	case ROCE_EXT_DETH: return roce_deth_get(p, len, &ib->deth);
	case ROCE_EXT_FETH: return roce_u32_get(p, len, &ib->feth);
	case ROCE_EXT_RETH: return roce_reth_get(p, len, &ib->reth);
	case ROCE_EXT_ATMETH: return roce_atmeth_get(p, len, &ib->atmeth);
	case ROCE_EXT_AETH: return roce_aeth_get(p, len, &ib->aeth);
	case ROCE_EXT_ATMACK: return roce_u64_get(p, len, &ib->atmack);
	case ROCE_EXT_IMMDT: return roce_u32_get(p, len, &ib->imm);
	case ROCE_EXT_IETH: return roce_u32_get(p, len, &ib->ieth);
	case ROCE_EXT_CNPRSV:
		if (len < ROCE_CNP_RSVD_LEN)
			return -EBADMSG;
		memcpy(ib->cnp_rsvd, p, ROCE_CNP_RSVD_LEN);
		return ROCE_CNP_RSVD_LEN;
	}
	return -EINVAL;
}

static int ext_put(unsigned ext, uint8_t *p, size_t cap,
		   const struct roce_ib *ib)
{
	switch (ext) {
	case ROCE_EXT_RDETH: return roce_rdeth_put(p, cap, &ib->rdeth);
	case ROCE_EXT_DETH: return roce_deth_put(p, cap, &ib->deth);
	case ROCE_EXT_FETH: return roce_u32_put(p, cap, ib->feth);
	case ROCE_EXT_RETH: return roce_reth_put(p, cap, &ib->reth);
	case ROCE_EXT_ATMETH: return roce_atmeth_put(p, cap, &ib->atmeth);
	case ROCE_EXT_AETH: return roce_aeth_put(p, cap, &ib->aeth);
	case ROCE_EXT_ATMACK: return roce_u64_put(p, cap, ib->atmack);
	case ROCE_EXT_IMMDT: return roce_u32_put(p, cap, ib->imm);
	case ROCE_EXT_IETH: return roce_u32_put(p, cap, ib->ieth);
	case ROCE_EXT_CNPRSV:
		if (cap < ROCE_CNP_RSVD_LEN)
			return -ENOSPC;
		memcpy(p, ib->cnp_rsvd, ROCE_CNP_RSVD_LEN);
		return ROCE_CNP_RSVD_LEN;
	}
	return -EINVAL;
}

static int bad(const char **why, const char *reason)
{
	*why = reason;
	return -EBADMSG;
}

/* Payload size rules that hold whatever the path MTU (IBTA 9.2, 9.7.5.1). */
static int check_payload(const struct roce_ib *ib, const char **why)
{
	unsigned fl = ib->op->flags;
	uint32_t n = ib->payload_len;

	if (!(fl & ROCE_OPF_PAYLOAD) && (n || ib->bth.pad))
		return bad(why, "payload on an opcode that carries none");
	if ((fl & ROCE_OPF_FIXED8) && n != 8)
		return bad(why, "ATOMIC_WRITE payload is not 8 bytes");
	/* Whether FIRST and MIDDLE carry exactly the path MTU, and a LAST
	 * 1 byte up to it, is judged by whoever knows it (a responder NAKs
	 * it invalid request, rocemu check flags it): a packet is not
	 * malformed for it. */
	if ((fl & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)) && ib->bth.pad)
		return bad(why, "FIRST/MIDDLE packet with pad bytes");
	return 0;
}

static int parse_exts(const uint8_t *p, size_t avail, struct roce_ib *ib)
{
	size_t off = ROCE_BTH_LEN;

	for (unsigned b = 1; b < (1u << ROCE_EXT_COUNT); b <<= 1) {
		if (!(ib->exts & b))
			continue;
		int n = ext_get(b, p + off, avail - off, ib);
		if (n < 0)
			return n;
		off += (size_t)n;
	}
	return 0;
}

int roce_ib_parse(const uint8_t *p, size_t len, size_t avail,
		  struct roce_ib *ib, const char **why)
{
	if (avail > len)
		avail = len;
	ib->has_bth = false;
	ib->op = NULL;
	ib->exts = 0;
	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return bad(why, "shorter than BTH and ICRC");
	if (avail < ROCE_BTH_LEN) {
		*why = "BTH cut off by the capture";
		return -ENODATA;
	}
	roce_bth_get(p, avail, &ib->bth);
	ib->has_bth = true;
	ib->op = roce_opcode(ib->bth.opcode);
	if (!ib->op)
		return bad(why, "opcode undefined by the IBTA");
	if (ib->bth.tver != 0)
		return bad(why, "BTH TVer is not 0");
	if (len < (size_t)ib->op->hdr_len + ROCE_ICRC_LEN)
		return bad(why, "shorter than the headers its opcode requires");
	if (avail < ib->op->hdr_len) {
		*why = "headers cut off by the capture";
		return -ENODATA;
	}
	ib->exts = ib->op->exts;
	parse_exts(p, avail, ib); /* lengths checked just above */

	size_t body = len - ib->op->hdr_len - ROCE_ICRC_LEN;
	if (ib->bth.pad > body)
		return bad(why, "pad count exceeds the payload");
	ib->payload = p + ib->op->hdr_len;
	ib->payload_len = (uint32_t)(body - ib->bth.pad);
	size_t have = avail - ib->op->hdr_len;
	ib->payload_avail = (uint32_t)(have < ib->payload_len ? have
							    : ib->payload_len);
	int rc = check_payload(ib, why);
	if (rc)
		return rc;
	if (avail < len) {
		*why = "payload cut off by the capture";
		return -ENODATA;
	}
	memset(ib->pad_bytes, 0, sizeof(ib->pad_bytes));
	memcpy(ib->pad_bytes, ib->payload + ib->payload_len, ib->bth.pad);
	ib->icrc = get_be32(p + len - ROCE_ICRC_LEN);
	return 0;
}

int roce_ib_build(const struct roce_ib *ib, uint8_t *p, size_t cap)
{
	const struct roce_opcode_info *op = roce_opcode(ib->bth.opcode);

	if (!op)
		return -EINVAL;
	if ((ib->payload_len || ib->bth.pad) && !(op->flags & ROCE_OPF_PAYLOAD))
		return -EINVAL;
	size_t total = (size_t)op->hdr_len + ib->payload_len + ib->bth.pad +
		       ROCE_ICRC_LEN;
	if (cap < total)
		return -ENOSPC;
	roce_bth_put(p, cap, &ib->bth);
	size_t off = ROCE_BTH_LEN;
	for (unsigned b = 1; b < (1u << ROCE_EXT_COUNT); b <<= 1)
		if (op->exts & b)
			off += (size_t)ext_put(b, p + off, cap - off, ib);
	if (ib->payload_len)
		memcpy(p + off, ib->payload, ib->payload_len);
	off += ib->payload_len;
	memcpy(p + off, ib->pad_bytes, ib->bth.pad);
	off += ib->bth.pad;
	memset(p + off, 0, ROCE_ICRC_LEN);
	return (int)total;
}
