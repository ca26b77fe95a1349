/* SPDX-License-Identifier: MIT */
/* Explain mode: why an R_Key check (rkey_resolve) refused a remote access, in words. */
#include <stdio.h>

#include "obj.h"
#include "rocemu/range.h"

/* The one right of access a check asked for, by its verbs name. */
static const char *right_name(int access)
{
	switch (access) {
	case IBV_ACCESS_REMOTE_WRITE: return "IBV_ACCESS_REMOTE_WRITE";
	case IBV_ACCESS_REMOTE_READ: return "IBV_ACCESS_REMOTE_READ";
	case IBV_ACCESS_REMOTE_ATOMIC: return "IBV_ACCESS_REMOTE_ATOMIC";
	default: return "the right asked for";
	}
}

/* [va, va+len) against [base, base+span): which end is out. */
static void range_why(char *buf, size_t n, const char *what, uint32_t key,
		      uint64_t va, uint64_t len, uint64_t base, uint64_t span)
{
	uint64_t end;

	if (!roce_range_end(base, span, &end))
		end = UINT64_MAX; /* the whole address space (implicit ODP) */
	snprintf(buf, n, "va 0x%llx len %llu %s %s 0x%x [0x%llx, 0x%llx)",
		 (unsigned long long)va, (unsigned long long)len,
		 va < base ? "starts before" : "ends past", what, key,
		 (unsigned long long)base, (unsigned long long)end);
}

static void window_why(const struct rocemu_qp *qp, const struct rocemu_mw *mw,
		       uint64_t va, uint64_t len, int access, char *buf,
		       size_t n)
{
	uint64_t base = (mw->access & IBV_ACCESS_ZERO_BASED) ? 0 : mw->addr;

	if (!mw->mr)
		snprintf(buf, n, "memory window 0x%x is not bound", mw->rkey);
	else if (mw->pd != qp->pd)
		snprintf(buf, n, "memory window 0x%x is of another PD than "
				 "qp 0x%x's", mw->rkey, qp->qpn);
	else if (mw->type == IBV_MW_TYPE_2 && mw->qpn != qp->qpn)
		snprintf(buf, n, "memory window 0x%x (type 2) was bound "
				 "through qp 0x%x, not qp 0x%x", mw->rkey,
			 mw->qpn, qp->qpn);
	else if ((mw->access & access) != access)
		snprintf(buf, n, "memory window 0x%x lacks %s", mw->rkey,
			 right_name(access));
	else
		range_why(buf, n, "memory window", mw->rkey, va, len, base,
			  mw->len);
}

void rkey_why(const struct rocemu_qp *qp, uint32_t rkey, uint64_t va,
	      uint64_t len, int access, char *buf, size_t n)
{
	struct rocemu_mr *mr = mr_find(qp->dev, rkey);
	struct rocemu_mw *mw = mw_find(qp->dev, rkey >> 8);

	if (mr && mr->pd != qp->pd)
		snprintf(buf, n, "rkey 0x%x is an MR of PD %u, not of qp "
				 "0x%x's PD %u", rkey, mr->pd->handle, qp->qpn,
			 qp->pd->handle);
	else if (mr && (mr->access & access) != access)
		snprintf(buf, n, "MR 0x%x lacks %s", rkey, right_name(access));
	else if (mr && !roce_range_in_region(va, len, mr->iova, mr->len))
		range_why(buf, n, "MR", rkey, va, len, mr->iova, mr->len);
	else if (mr)
		snprintf(buf, n, "MR 0x%x was deregistered or registered anew "
				 "during the message, or its page is gone",
			 rkey);
	else if (mw && mw->rkey == rkey)
		window_why(qp, mw, va, len, access, buf, n);
	else
		snprintf(buf, n, "rkey 0x%x matches no MR or memory window of "
				 "PD %u (qp 0x%x's)", rkey, qp->pd->handle,
			 qp->qpn);
}
