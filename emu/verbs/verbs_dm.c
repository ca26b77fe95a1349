/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: device memory (ibv_alloc_dm, the copy ops) and MRs over it. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_local.h"

/* Alignments a program may ask for, up to a page (log2). */
#define RV_DM_MAX_LOG_ALIGN 12

/* Bytes of device memory allocated, against the device's max_dm_size. */
static _Atomic size_t dm_in_use;

static struct rv_dm *to_rv(struct ibv_dm *dm)
{
	return (struct rv_dm *)(void *)dm;
}

static size_t dm_max(void)
{
	struct ibv_device_attr_ex a;

	rocemu_dev_attr_ex(rv_dev(), &a);
	return a.max_dm_size;
}

/* Takes len bytes of the device's budget: 0, or ENOMEM. */
static int budget_take(size_t len)
{
	size_t max = dm_max(), used = atomic_load(&dm_in_use);

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
	if (off > dm->len || len > dm->len - off)
		return EFAULT;
	return 0;
}

static int dm_to(struct ibv_dm *ibdm, uint64_t off, const void *src,
		 size_t len)
{
	struct rv_dm *dm = to_rv(ibdm);
	int rc = dm_range(dm, off, len);

	if (!rc && len)
		memcpy(dm->mem + off, src, len);
	return rc;
}

static int dm_from(void *dst, struct ibv_dm *ibdm, uint64_t off, size_t len)
{
	struct rv_dm *dm = to_rv(ibdm);
	int rc = dm_range(dm, off, len);

	if (!rc && len)
		memcpy(dst, dm->mem + off, len);
	return rc;
}

static struct ibv_dm *op_alloc_dm(struct ibv_context *context,
				  struct ibv_alloc_dm_attr *attr)
{
	struct rv_dm *dm;
	size_t align = (size_t)1 << (attr->log_align_req > 3 ?
				     attr->log_align_req : 3);
	int rc;

	if (attr->comp_mask || !attr->length ||
	    attr->log_align_req > RV_DM_MAX_LOG_ALIGN) {
		errno = EINVAL;
		return NULL;
	}
	if ((rc = budget_take(attr->length))) {
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
	dm->dm.context = context;
	dm->dm.memcpy_to_dm = dm_to;
	dm->dm.memcpy_from_dm = dm_from;
	return &dm->dm;
}

/* EBUSY while an MR covers it (the MR's lifetime needs the memory). */
static int op_free_dm(struct ibv_dm *ibdm)
{
	struct rv_dm *dm = to_rv(ibdm);

	if (atomic_load(&dm->mrs))
		return EBUSY;
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
	struct rv_mr *mr;
	int e;

	if (!(access & IBV_ACCESS_ZERO_BASED) || off > dm->len ||
	    len > dm->len - off) {
		errno = EINVAL;
		return NULL;
	}
	if (!(mr = calloc(1, sizeof(*mr)))) {
		errno = ENOMEM;
		return NULL;
	}
	mr->m = rocemu_mr_reg_zero_based(((struct rv_pd *)(void *)pd)->p,
					 dm->mem + off, len,
					 (int)(access & ~IBV_ACCESS_ZERO_BASED));
	if (!mr->m) {
		e = errno;
		free(mr);
		errno = e;
		return NULL;
	}
	atomic_fetch_add(&dm->mrs, 1);
	mr->dm = dm;
	mr->mr = (struct ibv_mr){ .context = pd->context, .pd = pd,
				  .addr = NULL, .length = len,
				  .lkey = rocemu_mr_lkey(mr->m),
				  .rkey = rocemu_mr_rkey(mr->m) };
	return &mr->mr;
}

void rv_fill_dm_ops(struct rv_context *ctx)
{
	ctx->vctx.alloc_dm = op_alloc_dm;
	ctx->vctx.free_dm = op_free_dm;
	ctx->vctx.reg_dm_mr = op_reg_dm_mr;
}
