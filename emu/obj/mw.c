/* SPDX-License-Identifier: MIT */
/* Memory windows (IBTA 10.6.7): alloc, bind, invalidation, and the remote key check through them. */
#include <errno.h>
#include <stdlib.h>

#include "obj.h"
#include "rocemu/range.h"

enum {
	MW_RIGHTS = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC,
	/* rights that write into the MR: it must allow local write (C10-74) */
	MW_WRITES = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	/* what a bind may ask for: local write means nothing to a window
	 * and is let pass, as rxe does */
	MW_BIND_KNOWN = MW_RIGHTS | IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_ZERO_BASED,
};

struct rocemu_mw *mw_find(struct rocemu_dev *d, uint32_t index)
{
	struct rocemu_mw *mw;

	/* indices come from the MRs' idgen counter, their own hash */
	HASH_FIND_BYHASHVALUE(hh, d->mws, &index, sizeof(index), index, mw);
	return mw;
}

struct rocemu_mw *rocemu_mw_alloc(struct rocemu_pd *pd, enum ibv_mw_type type)
{
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	CORE_GUARD(pd->dev->core);
	struct rocemu_dev *d = pd->dev;
	struct rocemu_mw *mw = calloc(1, sizeof(*mw));
	if (!mw || idgen_take(&d->mr_indices, key_index_in_use, d,
			      &mw->index)) {
		free(mw);
		errno = ENOMEM;
		return NULL;
	}
	mw->pd = pd;
	mw->type = type;
	mw->rkey = mw->index << 8 | (uint32_t)(core_rand(d->core) & 0xff);
	HASH_ADD_BYHASHVALUE(hh, d->mws, index, sizeof(mw->index), mw->index,
			     mw);
	pd->users++;
	return mw;
}

/* Makes mw grant nothing; its MR may be deregistered again. */
static void unbind(struct rocemu_mw *mw)
{
	struct rocemu_qp *qp;

	if (mw->mr && mw->type == IBV_MW_TYPE_2 &&
	    (qp = qp_find(mw->pd->dev, mw->qpn)))
		qp->windows--;
	if (mw->mr)
		mw->mr->windows--;
	mw->mr = NULL;
	mw->qpn = 0;
	mw->addr = mw->len = 0;
	mw->access = 0;
	mw->serial = 0;
}

int rocemu_mw_dealloc(struct rocemu_mw *mw)
{
	CORE_GUARD(mw->pd->dev->core);
	/* Engines look windows up per packet: once it is out of the table,
	 * no later packet reaches it. */
	unbind(mw);
	HASH_DELETE(hh, mw->pd->dev->mws, mw);
	mw->pd->users--;
	free(mw);
	return 0;
}

uint32_t rocemu_mw_rkey(const struct rocemu_mw *mw)
{
	CORE_GUARD(mw->pd->dev->core);
	return mw->rkey;
}

/* The IBTA's bind rules (10.6.7.2, o10-36.2.x, o10-37.2.x, C10-72..75);
 * mr is NULL for a type 1 bind of length 0, which unbinds. */
static int bind_allowed(const struct rocemu_qp *qp, const struct rocemu_mw *mw,
			const struct rocemu_mr *mr, const struct swqe *wqe)
{
	int access = wqe->bind.access;

	if (mw->pd != qp->pd || (access & ~MW_BIND_KNOWN))
		return -EINVAL;
	/* type 2: bound once, through one QP, over some bytes (o10-37.2.30,
	 * o10-37.2.40); type 1 is never zero based (o10-36.2.2) */
	if (mw->type == IBV_MW_TYPE_2 && (mw->mr || !mr))
		return -EINVAL;
	if (mw->type == IBV_MW_TYPE_1 && (access & IBV_ACCESS_ZERO_BASED))
		return -EINVAL;
	if (!mr)
		return 0;
	if (mr->pd != qp->pd || !(mr->access & IBV_ACCESS_MW_BIND) ||
	    ((access & MW_WRITES) && !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	/* C10-75: inside the MR (in its own addresses, from 0 for a zero
	 * based one) */
	if (!roce_range_in_region(wqe->bind.addr, wqe->bind.len, mr->iova,
				  mr->len))
		return -EINVAL;
	return 0;
}

int mw_bind(struct rocemu_qp *qp, const struct swqe *wqe)
{
	struct rocemu_dev *d = qp->dev;
	struct rocemu_mw *mw = mw_find(d, wqe->bind.mw_index);
	struct rocemu_mr *mr = NULL;
	int rc;

	if (!mw)
		return -EINVAL;
	if (wqe->bind.len) {
		mr = mr_check(qp->pd, wqe->bind.mr_key, wqe->bind.addr,
			      wqe->bind.len, 0);
		if (!mr)
			return -EINVAL;
	}
	if ((rc = bind_allowed(qp, mw, mr, wqe)))
		return rc;
	unbind(mw);
	/* the consumer's key byte, the window's index (IBTA 10.6.7.2.1) */
	mw->rkey = (mw->rkey & ~0xffu) | (wqe->bind.new_rkey & 0xff);
	if (!mr)
		return 0; /* type 1 of length 0: bound to nothing */
	mw->mr = mr;
	mr->windows++;
	mw->qpn = mw->type == IBV_MW_TYPE_2 ? qp->qpn : 0;
	if (mw->type == IBV_MW_TYPE_2)
		qp->windows++;
	mw->addr = wqe->bind.addr;
	mw->len = wqe->bind.len;
	mw->access = wqe->bind.access;
	mw->serial = ++d->mr_serial;
	return 0;
}

int mw_invalidate(struct rocemu_qp *qp, uint32_t rkey, bool remote,
		  bool check_only)
{
	struct rocemu_mw *mw = mw_find(qp->dev, rkey >> 8);

	/* Only a bound type 2 window is invalidated (o10-37.2.26); a type
	 * 2B one remotely only through the QP it was bound through. */
	if (!mw || mw->rkey != rkey || mw->type != IBV_MW_TYPE_2 ||
	    !mw->mr || mw->pd != qp->pd || (remote && mw->qpn != qp->qpn))
		return -EINVAL;
	if (!check_only)
		unbind(mw);
	return 0;
}

void mw_forget_qp(struct rocemu_qp *qp)
{
	struct rocemu_mw *mw, *tmp;

	/* Only a QP that has windows bound pays for the walk. rxe keeps a
	 * destroyed QP's object until its windows go; rocemu frees it at
	 * once, so its windows end with it: no QP that reuses the number
	 * inherits them. */
	if (!qp->windows)
		return;
	HASH_ITER(hh, qp->dev->mws, mw, tmp)
		if (mw->type == IBV_MW_TYPE_2 && mw->mr && mw->qpn == qp->qpn)
			unbind(mw);
}

/* The window's part of rkey_resolve: true with *at set to where va is
 * in the MR's addresses if [va, va+len) lies in the window; false, *at
 * untouched, otherwise. */
static bool window_range(const struct rocemu_qp *qp, const struct rocemu_mw *mw,
			 uint32_t rkey, uint64_t va, uint64_t len, int access,
			 uint64_t *at)
{
	/* zero based: the address is an offset into the window */
	uint64_t base = (mw->access & IBV_ACCESS_ZERO_BASED) ? 0 : mw->addr;
	uint64_t off;

	if (mw->rkey != rkey || !mw->mr || mw->pd != qp->pd ||
	    (mw->type == IBV_MW_TYPE_2 && mw->qpn != qp->qpn) ||
	    (mw->access & access) != access)
		return false;
	return roce_range_offset(va, len, base, mw->len, &off) &&
	       roce_range_end(mw->addr, off, at);
}

uint64_t rkey_resolve(const struct rocemu_qp *qp, uint32_t rkey, uint64_t va,
		      uint64_t len, int access, uint8_t **mem)
{
	struct rocemu_mr *mr = mr_check(qp->pd, rkey, va, len, access);
	struct rocemu_mw *mw;
	uint64_t at;

	if (mr) {
		*mem = mr_ptr(mr, va);
		return mr->serial;
	}
	mw = mw_find(qp->dev, rkey >> 8);
	if (!mw || !window_range(qp, mw, rkey, va, len, access, &at))
		return 0;
	*mem = mr_ptr(mw->mr, at);
	return mw->serial;
}

bool rkey_extent(const struct rocemu_qp *qp, uint32_t rkey, int access,
		 uint64_t *va, uint64_t *len)
{
	struct rocemu_mr *mr = mr_find(qp->dev, rkey);
	struct rocemu_mw *mw;

	if (mr && mr->pd == qp->pd && (mr->access & access) == access) {
		*va = mr->iova;
		*len = mr->len;
		return true;
	}
	mw = mw_find(qp->dev, rkey >> 8);
	if (!mw || mw->rkey != rkey || !mw->mr || mw->pd != qp->pd ||
	    (mw->type == IBV_MW_TYPE_2 && mw->qpn != qp->qpn) ||
	    (mw->access & access) != access)
		return false;
	*va = (mw->access & IBV_ACCESS_ZERO_BASED) ? 0 : mw->addr;
	*len = mw->len;
	return true;
}
