/* SPDX-License-Identifier: MIT */
/* Readers and writers for BTH and each extension header, field by field. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rocemu/ibhdr.h"
#include "byteorder.h"

/*
 * Wire layouts as byte arrays. They are used for offsetof() and sizeof()
 * only, never overlaid on a buffer.
 */
struct bth_wire {
	uint8_t opcode, flags, pkey[2], qpn[4], apsn[4];
};
struct reth_wire {
	uint8_t va[8], rkey[4], len[4];
};
struct aeth_wire {
	uint8_t syn, msn[3];
};
struct atmeth_wire {
	uint8_t va[8], rkey[4], swap_add[8], compare[8];
};
struct deth_wire {
	uint8_t qkey[4], resv, src_qp[3];
};
struct rdeth_wire {
	uint8_t resv, een[3];
};

_Static_assert(sizeof(struct bth_wire) == ROCE_BTH_LEN, "BTH size");
_Static_assert(sizeof(struct reth_wire) == ROCE_RETH_LEN, "RETH size");
_Static_assert(sizeof(struct aeth_wire) == ROCE_AETH_LEN, "AETH size");
_Static_assert(sizeof(struct atmeth_wire) == ROCE_ATMETH_LEN, "AtomicETH");
_Static_assert(sizeof(struct deth_wire) == ROCE_DETH_LEN, "DETH size");
_Static_assert(sizeof(struct rdeth_wire) == ROCE_RDETH_LEN, "RDETH size");

#define AT(p, s, f) ((p) + offsetof(struct s, f))

/* BTH byte 1: SE(7) M(6) PadCnt(5:4) TVer(3:0); byte 4: F(7) B(6) resv6;
 * byte 8: A(7) resv7. */
int roce_bth_get(const uint8_t *p, size_t len, struct roce_bth *h)
{
	if (len < ROCE_BTH_LEN)
		return -EBADMSG;
	uint8_t fl = p[offsetof(struct bth_wire, flags)];
	const uint8_t *qpn = AT(p, bth_wire, qpn);
	const uint8_t *apsn = AT(p, bth_wire, apsn);

	h->opcode = p[offsetof(struct bth_wire, opcode)];
	h->se = fl >> 7;
	h->migreq = (fl >> 6) & 1;
	h->pad = (fl >> 4) & 3;
	h->tver = fl & 0xf;
	h->pkey = get_be16(AT(p, bth_wire, pkey));
	h->fecn = qpn[0] >> 7;
	h->becn = (qpn[0] >> 6) & 1;
	h->resv6 = qpn[0] & 0x3f;
	h->dqpn = get_be24(qpn + 1);
	h->ackreq = apsn[0] >> 7;
	h->resv7 = apsn[0] & 0x7f;
	h->psn = get_be24(apsn + 1);
	return ROCE_BTH_LEN;
}

int roce_bth_put(uint8_t *p, size_t cap, const struct roce_bth *h)
{
	if (cap < ROCE_BTH_LEN)
		return -ENOSPC;
	uint8_t *qpn = AT(p, bth_wire, qpn);
	uint8_t *apsn = AT(p, bth_wire, apsn);

	p[offsetof(struct bth_wire, opcode)] = h->opcode;
	p[offsetof(struct bth_wire, flags)] =
		(uint8_t)(h->se << 7 | h->migreq << 6 | (h->pad & 3) << 4 |
			  (h->tver & 0xf));
	put_be16(AT(p, bth_wire, pkey), h->pkey);
	qpn[0] = (uint8_t)(h->fecn << 7 | h->becn << 6 | (h->resv6 & 0x3f));
	put_be24(qpn + 1, h->dqpn);
	apsn[0] = (uint8_t)(h->ackreq << 7 | (h->resv7 & 0x7f));
	put_be24(apsn + 1, h->psn);
	return ROCE_BTH_LEN;
}

int roce_reth_get(const uint8_t *p, size_t len, struct roce_reth *h)
{
	if (len < ROCE_RETH_LEN)
		return -EBADMSG;
	h->va = get_be64(AT(p, reth_wire, va));
	h->rkey = get_be32(AT(p, reth_wire, rkey));
	h->len = get_be32(AT(p, reth_wire, len));
	return ROCE_RETH_LEN;
}

int roce_reth_put(uint8_t *p, size_t cap, const struct roce_reth *h)
{
	if (cap < ROCE_RETH_LEN)
		return -ENOSPC;
	put_be64(AT(p, reth_wire, va), h->va);
	put_be32(AT(p, reth_wire, rkey), h->rkey);
	put_be32(AT(p, reth_wire, len), h->len);
	return ROCE_RETH_LEN;
}

int roce_aeth_get(const uint8_t *p, size_t len, struct roce_aeth *h)
{
	if (len < ROCE_AETH_LEN)
		return -EBADMSG;
	h->syndrome = p[offsetof(struct aeth_wire, syn)];
	h->msn = get_be24(AT(p, aeth_wire, msn));
	return ROCE_AETH_LEN;
}

int roce_aeth_put(uint8_t *p, size_t cap, const struct roce_aeth *h)
{
	if (cap < ROCE_AETH_LEN)
		return -ENOSPC;
	p[offsetof(struct aeth_wire, syn)] = h->syndrome;
	put_be24(AT(p, aeth_wire, msn), h->msn);
	return ROCE_AETH_LEN;
}

int roce_atmeth_get(const uint8_t *p, size_t len, struct roce_atmeth *h)
{
	if (len < ROCE_ATMETH_LEN)
		return -EBADMSG;
	h->va = get_be64(AT(p, atmeth_wire, va));
	h->rkey = get_be32(AT(p, atmeth_wire, rkey));
	h->swap_add = get_be64(AT(p, atmeth_wire, swap_add));
	h->compare = get_be64(AT(p, atmeth_wire, compare));
	return ROCE_ATMETH_LEN;
}

int roce_atmeth_put(uint8_t *p, size_t cap, const struct roce_atmeth *h)
{
	if (cap < ROCE_ATMETH_LEN)
		return -ENOSPC;
	put_be64(AT(p, atmeth_wire, va), h->va);
	put_be32(AT(p, atmeth_wire, rkey), h->rkey);
	put_be64(AT(p, atmeth_wire, swap_add), h->swap_add);
	put_be64(AT(p, atmeth_wire, compare), h->compare);
	return ROCE_ATMETH_LEN;
}

int roce_deth_get(const uint8_t *p, size_t len, struct roce_deth *h)
{
	if (len < ROCE_DETH_LEN)
		return -EBADMSG;
	h->qkey = get_be32(AT(p, deth_wire, qkey));
	h->resv = p[offsetof(struct deth_wire, resv)];
	h->src_qp = get_be24(AT(p, deth_wire, src_qp));
	return ROCE_DETH_LEN;
}

int roce_deth_put(uint8_t *p, size_t cap, const struct roce_deth *h)
{
	if (cap < ROCE_DETH_LEN)
		return -ENOSPC;
	put_be32(AT(p, deth_wire, qkey), h->qkey);
	p[offsetof(struct deth_wire, resv)] = h->resv;
	put_be24(AT(p, deth_wire, src_qp), h->src_qp);
	return ROCE_DETH_LEN;
}

int roce_rdeth_get(const uint8_t *p, size_t len, struct roce_rdeth *h)
{
	if (len < ROCE_RDETH_LEN)
		return -EBADMSG;
	h->resv = p[offsetof(struct rdeth_wire, resv)];
	h->een = get_be24(AT(p, rdeth_wire, een));
	return ROCE_RDETH_LEN;
}

int roce_rdeth_put(uint8_t *p, size_t cap, const struct roce_rdeth *h)
{
	if (cap < ROCE_RDETH_LEN)
		return -ENOSPC;
	p[offsetof(struct rdeth_wire, resv)] = h->resv;
	put_be24(AT(p, rdeth_wire, een), h->een);
	return ROCE_RDETH_LEN;
}

int roce_u64_get(const uint8_t *p, size_t len, uint64_t *v)
{
	if (len < 8)
		return -EBADMSG;
	*v = get_be64(p);
	return 8;
}

int roce_u64_put(uint8_t *p, size_t cap, uint64_t v)
{
	if (cap < 8)
		return -ENOSPC;
	put_be64(p, v);
	return 8;
}

int roce_u32_get(const uint8_t *p, size_t len, uint32_t *v)
{
	if (len < 4)
		return -EBADMSG;
	*v = get_be32(p);
	return 4;
}

int roce_u32_put(uint8_t *p, size_t cap, uint32_t v)
{
	if (cap < 4)
		return -ENOSPC;
	put_be32(p, v);
	return 4;
}
