/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: device memory (ibv_alloc_dm, copies, imports) and MRs over it. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/range.h"
#include "verbs_local.h"

/* Alignments a program may ask for, up to a page (log2). */
#define RV_DM_MAX_LOG_ALIGN 12

/* Bytes of device memory allocated, against the device's max_dm_size. */
static _Atomic size_t dm_in_use;

/* The DMs allocated, for ibv_import_dm to find by handle; an original's
 * imports and its free take turns under the lock. */
static pthread_mutex_t dm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rv_dm *dm_list;
static uint32_t dm_handles;

void rv_dm_fork_child(void)
{
	pthread_mutex_init(&dm_lock, NULL);
	dm_list = NULL;
	atomic_store(&dm_in_use, 0);
}

static struct rv_dm *to_rv(struct ibv_dm *dm)
{
	return (struct rv_dm *)(void *)dm;
}

/*
 * Device memory lives in the process itself and touches nothing of the
 * device's world, so unlike every other object it stays usable in a
 * forked child on a context inherited from the parent, as on rdma-core
 * (rdma-core's suite allocates it from several children at once,
 * docs/fork.md); a DM allocated before the fork is the parent's (the
 * child's list starts empty) and answers EIO there.
 */
static bool dm_stale(const struct rv_dm *dm)
{
	if (dm->gen == rv_fork_gen())
		return false;
	errno = EIO;
	return true;
}

static size_t dm_max(const struct ibv_context *context)
{
	return rv_context_attr(context)->max_dm_size;
}

/* Takes len bytes of the device's budget: 0, or ENOMEM. */
static int budget_take(const struct ibv_context *context, size_t len)
{
	size_t max = dm_max(context), used = atomic_load(&dm_in_use);

	do {
		if (len > max - used)
			return ENOMEM;
	} while (!atomic_compare_exchange_weak(&dm_in_use, &used, used + len));
	return 0;
}

/*
 * Device memory is reached in 4-byte units, as on the NICs that have it
 * (mlx5's MEMIC): an offset or length that is not a multiple of 4 is
 * EINVAL, a range outside the DM EFAULT; nothing is copied then.
 */
static int dm_range(const struct rv_dm *dm, uint64_t off, size_t len)
{
	if ((off | len) & 3)
		return EINVAL;
	if (!roce_range_inside(off, len, 0, dm->len))
		return EFAULT;
	return 0;
}

static int dm_to(struct ibv_dm *ibdm, uint64_t off, const void *src, size_t len)
{
	struct rv_dm *dm = to_rv(ibdm);
	int rc = dm_stale(dm) ? EIO : dm_range(dm, off, len);

	if (!rc && len)
		memcpy(dm->mem + off, src, len);
	return rc;
}

static int dm_from(void *dst, struct ibv_dm *ibdm, uint64_t off, size_t len)
{
	struct rv_dm *dm = to_rv(ibdm);
	int rc = dm_stale(dm) ? EIO : dm_range(dm, off, len);

	if (!rc && len)
		memcpy(dst, dm->mem + off, len);
	return rc;
}

static struct ibv_dm *op_alloc_dm(struct ibv_context *context,
				  struct ibv_alloc_dm_attr *attr)
{
	struct rv_dm *dm;
	size_t align = (size_t)1
		       << (attr->log_align_req > 3 ? attr->log_align_req : 3);
	int rc;

	if (attr->comp_mask || !attr->length ||
	    attr->log_align_req > RV_DM_MAX_LOG_ALIGN) {
		errno = EINVAL;
		return NULL;
	}
	if ((rc = budget_take(context, attr->length))) {
		errno = rc;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm || posix_memalign((void **)&dm->mem, align, attr->length)) {
		free(dm);
		atomic_fetch_sub(&dm_in_use, attr->length);
		errno = ENOMEM;
		return NULL;
	}
	memset(dm->mem, 0, attr->length);
	dm->len = attr->length;
	dm->gen = rv_fork_gen();
	dm->dm.context = context;
	dm->dm.memcpy_to_dm = dm_to;
	dm->dm.memcpy_from_dm = dm_from;
	dm->dm.comp_mask = IBV_DM_MASK_HANDLE;
	pthread_mutex_lock(&dm_lock);
	dm->dm.handle = ++dm_handles;
	dm->next = dm_list;
	dm_list = dm;
	pthread_mutex_unlock(&dm_lock);
	return &dm->dm;
}

/* Takes an original off the list: 0, or EBUSY while MRs or imports use
 * it (they need its memory). Under dm_lock. */
static int dm_unlink(struct rv_dm *dm)
{
	struct rv_dm **p;

	if (atomic_load(&dm->mrs) || dm->imports)
		return EBUSY;
	for (p = &dm_list; *p != dm; p = &(*p)->next)
		;
	*p = dm->next;
	return 0;
}

/* EBUSY while an MR or an import uses it (they need its memory). An
 * import is let go as ibv_unimport_dm does: the memory is its
 * original's. */
static int op_free_dm(struct ibv_dm *ibdm)
{
	struct rv_dm *dm = to_rv(ibdm);
	int rc;

	if (dm_stale(dm))
		return EIO;
	if (dm->orig) {
		ibv_unimport_dm(ibdm);
		return 0;
	}
	pthread_mutex_lock(&dm_lock);
	rc = dm_unlink(dm);
	pthread_mutex_unlock(&dm_lock);
	if (rc)
		return rc;
	atomic_fetch_sub(&dm_in_use, dm->len);
	free(dm->mem);
	free(dm);
	return 0;
}

void rv_dm_mr_gone(struct rv_dm *dm)
{
	atomic_fetch_sub(&dm->mrs, 1);
}

/*
 * An MR over [off, off+len) of the DM. Its addresses start at 0
 * (IBV_ACCESS_ZERO_BASED), which libibverbs requires of DM MRs since the
 * memory has no address in the program: SGEs and RDMA requests name
 * offsets into the MR. EINVAL without ZERO_BASED or beyond the DM.
 */
static struct ibv_mr *op_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
				   uint64_t off, size_t len,
				   unsigned int access)
{
	struct rv_dm *dm = to_rv(ibdm);
	/* An MR over an import holds the original, whose memory it is. */
	struct rv_dm *owner = dm->orig ? dm->orig : dm;
	struct rv_mr *mr;
	int e;

	if (rv_stale(pd->context))
		return NULL;
	if (!(access & IBV_ACCESS_ZERO_BASED) ||
	    !roce_range_inside(off, len, 0, dm->len)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(mr = calloc(1, sizeof(*mr)))) {
		errno = ENOMEM;
		return NULL;
	}
	mr->m = rocemu_mr_reg_zero_based(
	    ((struct rv_pd *)(void *)pd)->p, dm->mem + off, len,
	    (int)(access & ~IBV_ACCESS_ZERO_BASED));
	if (!mr->m) {
		e = errno;
		free(mr);
		errno = e;
		return NULL;
	}
	atomic_fetch_add(&owner->mrs, 1);
	mr->dm = owner;
	mr->mr = (struct ibv_mr){.context = pd->context,
				 .pd = pd,
				 .addr = NULL,
				 .length = len,
				 .lkey = rocemu_mr_lkey(mr->m),
				 .rkey = rocemu_mr_rkey(mr->m)};
	return &mr->mr;
}

/* Another object for the DM of this handle, on the same memory (within
 * the process only: there is no kernel to share it through); NULL and
 * EINVAL if there is none. */
struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t handle)
{
	struct rv_dm *dm, *imp;

	if (rv_stale(context))
		return NULL;
	if (!(imp = calloc(1, sizeof(*imp)))) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&dm_lock);
	for (dm = dm_list; dm && dm->dm.handle != handle; dm = dm->next)
		;
	if (dm) {
		dm->imports++;
		*imp = (struct rv_dm){
		    .dm = dm->dm, .mem = dm->mem, .len = dm->len, .orig = dm,
		    .gen = dm->gen};
		imp->dm.context = context;
	}
	pthread_mutex_unlock(&dm_lock);
	if (!dm) {
		free(imp);
		errno = EINVAL;
		return NULL;
	}
	return &imp->dm;
}

void ibv_unimport_dm(struct ibv_dm *ibdm)
{
	struct rv_dm *imp = to_rv(ibdm);

	if (!imp->orig || dm_stale(imp))
		return; /* not an import, or the parent's: nothing to let go */
	pthread_mutex_lock(&dm_lock);
	imp->orig->imports--;
	pthread_mutex_unlock(&dm_lock);
	free(imp);
}

void rv_fill_dm_ops(struct rv_context *ctx)
{
	ctx->vctx.alloc_dm = op_alloc_dm;
	ctx->vctx.free_dm = op_free_dm;
	ctx->vctx.reg_dm_mr = op_reg_dm_mr;
}
