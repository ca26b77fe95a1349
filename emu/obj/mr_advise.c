/* SPDX-License-Identifier: MIT */
/* ibv_advise_mr: prefetching the pages of on-demand memory regions. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rocemu/range.h"
#include "obj.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#define MADV_POPULATE_WRITE 23
#endif

/* The MR an SGE of an advice names: an on-demand MR of pd, writable for
 * PREFETCH_WRITE (-ENOENT else, as mlx5 answers), whose range holds the
 * SGE's (-EFAULT else). */
static int advise_target(struct rocemu_pd *pd, int advice,
			 const struct ibv_sge *sg)
{
	struct rocemu_mr *mr = mr_find(pd->dev, sg->lkey);

	if (!mr || mr->pd != pd || !mr->odp ||
	    (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	     !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
		return -ENOENT;
	if (!mr_check(pd, sg->lkey, sg->addr, sg->length, 0))
		return -EFAULT;
	return 0;
}

/*
 * What a prefetch means for rocemu: a NIC with ODP copies the page
 * translations into its own tables; rocemu walks the process's page
 * tables at each access (mem_get/mem_put), so the best it can do ahead
 * of time is to have the pages present, writable ones for
 * PREFETCH_WRITE, as the CPU's first touch would make them: the kernel's
 * MADV_POPULATE_READ/WRITE does exactly that without changing a byte.
 * Where the kernel predates them, a checked read of each page faults it
 * in, and the write check reads the map. 0, or -EFAULT for a range not
 * mapped as asked.
 */
static int populate(uint64_t va, uint64_t len, bool write)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = va & ~(page - 1), hi;
	uint8_t byte;

	if (!len)
		return 0;
	if (!roce_range_end(va, len, &hi))
		return -EFAULT;
	if (!madvise((void *)(uintptr_t)lo, hi - lo,
		     write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ))
		return 0;
	if (errno != EINVAL)
		return -EFAULT; /* ENOMEM: a hole; EFAULT: a page it cannot */
	if (write && mem_range_check((void *)(uintptr_t)va, len, true))
		return -EFAULT;
	for (uint64_t at = va; at < hi; at = (at & ~(page - 1)) + page)
		if (mem_get_checked(&byte, at, 1))
			return -EFAULT;
	return 0;
}

/* Checks every SGE under the lock: nothing is prefetched for a list that
 * names a wrong key. */
static int advise_check(struct rocemu_pd *pd, int advice,
			const struct ibv_sge *sg, uint32_t n)
{
	CORE_GUARD(pd->dev->core);
	for (uint32_t i = 0; i < n; i++) {
		int rc = advise_target(pd, advice, &sg[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int rocemu_mr_advise(struct rocemu_pd *pd, int advice, uint32_t flags,
		     const struct ibv_sge *sg, uint32_t n)
{
	bool sync = flags & IBV_ADVISE_MR_FLAG_FLUSH;
	int rc;

	/* The kernel checks the flags and the list; mlx5 the advice. */
	if ((flags & ~IBV_ADVISE_MR_FLAG_FLUSH) || !n || !sg)
		return -EINVAL;
	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if ((rc = advise_check(pd, advice, sg, n)))
		return rc;
	/* NO_FAULT makes present to the device what is present to the CPU:
	 * for rocemu, which reads the CPU's tables, that is already so. */
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return 0;
	/* The memory is the application's, not the device's: it is
	 * populated outside the world lock, and a deregistration meanwhile
	 * only makes the work useless. */
	for (uint32_t i = 0; i < n; i++) {
		rc = populate(sg[i].addr, sg[i].length,
			      advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE);
		if (rc && sync)
			return rc;
	}
	return 0;
}
