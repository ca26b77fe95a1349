/* SPDX-License-Identifier: MIT */
/* RC responder: IBTA 1.5 FLUSH, and the zero-length READ response that answers FLUSH and ATOMIC WRITE. */
#include <string.h>

#include "engine.h"
#include "rocemu/device.h"

bool resp_owe_placement(struct rocemu_qp *qp, uint32_t psn)
{
	struct rd_res *r = resp_new_res(qp);

	if (!r)
		return false;
	/* len 0: the response (resp_read.c) is one READ RESPONSE ONLY
	 * without payload, in PSN order after the responses owed before */
	r->placement = true;
	r->first_psn = r->last_psn = r->next_psn = psn;
	r->msn = ++qp->resp.msn;
	qp->resp.psn = roce_psn_add(psn, 1);
	return true;
}

/* The rights a placement type (the FETH's bits 0-3) needs, on the QP and
 * on the memory, as rxe maps them. */
static int flush_access(uint32_t feth)
{
	return ((feth & ROCEMU_FLUSH_GLOBAL) ? ROCEMU_ACCESS_FLUSH_GLOBAL : 0) |
	       ((feth & ROCEMU_FLUSH_PERSISTENT) ? ROCEMU_ACCESS_FLUSH_PERSISTENT
						 : 0);
}

uint8_t resp_flush(struct rocemu_qp *qp, const struct roce_ib *ib,
		   const char **why)
{
	int access = flush_access(ib->feth);
	uint64_t va = ib->reth.va, len = ib->reth.len;
	uint8_t *mem;

	*why = NULL;
	/* rxe: a QP without the placement type's right, like any opcode the
	 * QP does not allow, is an invalid request (class C) */
	if ((qp->attr.qp_access_flags & (unsigned)access) != (unsigned)access) {
		*why = "the QP's qp_access_flags lack the IBV_ACCESS_FLUSH_* "
		       "right of the FLUSH's placement type";
		return ROCE_AETH_NAK_INV_REQ;
	}
	if (len > MAX_MR_SIZE) {
		*why = "RETH length is above 2^31";
		return ROCE_AETH_NAK_INV_REQ;
	}
	/* Level MR: the RETH's address and length are ignored (IBTA 1.5),
	 * the whole region the key opens is flushed. Any other level is a
	 * range, checked as a WRITE's is, a zero length included. */
	if (((ib->feth >> 4) & 3) == ROCEMU_FLUSH_MR &&
	    !rkey_extent(qp, ib->reth.rkey, access, &va, &len)) {
		why_rkey_nak(qp, ib, ib->reth.rkey, ib->reth.va, 0, access);
		return ROCE_AETH_NAK_REM_ACCESS;
	}
	if (!rkey_resolve(qp, ib->reth.rkey, va, len, access, &mem)) {
		why_rkey_nak(qp, ib, ib->reth.rkey, va, len, access);
		return ROCE_AETH_NAK_REM_ACCESS;
	}
	/* Everything this QP placed before the FLUSH was stored by the
	 * engine before it took the FLUSH (requests execute in PSN order,
	 * under the device's lock, whose release orders those stores before
	 * whatever another thread does after taking it: no fence of its
	 * own, which ThreadSanitizer could not follow). rocemu's memory is
	 * never persistent: a persistent FLUSH needs the right, which no MR
	 * has (mr.c). */
	if (!resp_owe_placement(qp, ib->bth.psn)) {
		*why = "no responder resource free for the FLUSH's answer";
		return ROCE_AETH_NAK_INV_REQ;
	}
	return 0;
}
