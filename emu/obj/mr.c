/* SPDX-License-Identifier: MIT */
/* Protection domains, memory regions, key checks and scatter/gather copies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "obj.h"
#include "rocemu/range.h"

#include "dma.h"

struct rocemu_pd *rocemu_pd_alloc(struct rocemu_dev *d)
{
	CORE_GUARD(d->core);
	struct rocemu_pd *pd = calloc(1, sizeof(*pd));

	if (pd) {
		pd->dev = d;
		pd->handle = ++d->pds_made;
	}
	return pd;
}

uint32_t rocemu_pd_handle(const struct rocemu_pd *pd)
{
	return pd->handle;
}

int rocemu_pd_free(struct rocemu_pd *pd)
{
	CORE_GUARD(pd->dev->core);
	if (pd->users)
		return -EBUSY;
	free(pd);
	return 0;
}

enum {
	/* IBV_ACCESS_HUGETLB only says the pages are huge: nothing to do
	 * for a device that walks the process's own page tables. */
	ACCESS_KNOWN = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		       IBV_ACCESS_MW_BIND | IBV_ACCESS_ON_DEMAND |
		       IBV_ACCESS_HUGETLB | ROCEMU_ACCESS_FLUSH_GLOBAL,
	NEEDS_LOCAL_WRITE = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
};

static struct rocemu_mr *mr_by_index(struct rocemu_dev *d, uint32_t index)
{
	struct rocemu_mr *mr;

	/* Indices come from an idgen counter: the number is its own hash. */
	HASH_FIND_BYHASHVALUE(hh, d->mrs, &index, sizeof(index), index, mr);
	return mr;
}

bool key_index_in_use(void *dev, uint32_t index)
{
	return mr_by_index(dev, index) || mw_find(dev, index);
}

/*
 * The range and access a registration asks for, checked as ibv_reg_mr(3)
 * does: 0 with *base and *span set, or -EINVAL for bad flags, -EFAULT for
 * memory not mapped as asked. An on-demand MR's memory is not looked at
 * now (its pages are checked at each access); addr NULL with length
 * SIZE_MAX asks for implicit ODP, the whole address space, as rdma-core
 * defines it (IBV_ACCESS_ON_DEMAND with SIZE_MAX in ibv_reg_mr(3)).
 */
static int mr_shape(void *addr, size_t len, int access, uint8_t **base,
		    uint64_t *span)
{
	bool odp = access & IBV_ACCESS_ON_DEMAND;

	/* ibv_reg_mr(3): remote write or atomic needs local write. The
	 * FLUSH persistence right is refused (not in ACCESS_KNOWN) as rxe
	 * refuses it for memory that is not persistent: none of rocemu's
	 * is. */
	if ((access & ~ACCESS_KNOWN) ||
	    ((access & NEEDS_LOCAL_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	*base = addr;
	*span = len;
	if (odp && !addr && len == SIZE_MAX) {
		*span = UINT64_MAX;
		return 0;
	}
	if (len > MAX_MR_SIZE || (!addr && len))
		return -EINVAL;
	uint64_t end;
	if (odp)
		return roce_range_end((uint64_t)(uintptr_t)addr, len, &end) ? 0
									 : -EINVAL;
	/* Remote atomics write as well (and need local write, above). */
	return mem_range_check(addr, len,
			       access & (IBV_ACCESS_LOCAL_WRITE |
					 NEEDS_LOCAL_WRITE));
}

/* Counts an on-demand MR in or out of its device's (mem_put, mem_get). */
static void odp_count(struct rocemu_mr *mr, bool in)
{
	if (!mr->odp)
		return;
	if (in)
		mr->pd->dev->odp_mrs++;
	else
		mr->pd->dev->odp_mrs--;
}

/* Explain mode: why a registration of [addr, addr+len) with access
 * failed with rc (mr_shape's). */
static void why_reg(struct rocemu_dev *d, int rc, void *addr, size_t len,
		    int access)
{
	const char *why =
		rc == -EFAULT ? "part of the range is not mapped, or not "
				"writable while a write right is asked for"
		: (access & ROCEMU_ACCESS_FLUSH_PERSISTENT)
			? "IBV_ACCESS_FLUSH_PERSISTENT: no memory of rocemu's "
			  "is persistent (rxe refuses it so too)"
		: (access & ~ACCESS_KNOWN) ? "an access flag rocemu does not know"
		: ((access & NEEDS_LOCAL_WRITE) &&
		   !(access & IBV_ACCESS_LOCAL_WRITE))
			? "IBV_ACCESS_REMOTE_WRITE or _REMOTE_ATOMIC needs "
			  "IBV_ACCESS_LOCAL_WRITE too"
			: "the length is above 2^31, or the address NULL";

	dev_why(d, ROCEMU_WHY_VERB, 0, NULL, 0,
		"ibv_reg_mr(3)",
		"reg_mr addr %p len %zu access 0x%x: %s", addr, len, access,
		why);
}

struct rocemu_mr *rocemu_mr_reg(struct rocemu_pd *pd, void *addr, size_t len,
				int access)
{
	uint8_t *base;
	uint64_t span;
	/* The process's map is read before the world lock is taken: the
	 * engines need not wait for it. */
	int rc = mr_shape(addr, len, access, &base, &span);
	if (rc) {
		CORE_GUARD(pd->dev->core);
		why_reg(pd->dev, rc, addr, len, access);
		errno = -rc;
		return NULL;
	}
	CORE_GUARD(pd->dev->core);
	struct rocemu_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	struct rocemu_dev *d = pd->dev;
	if (idgen_take(&d->mr_indices, key_index_in_use, d, &mr->index)) {
		free(mr);
		errno = ENOMEM;
		return NULL;
	}
	mr->pd = pd;
	mr->addr = base;
	mr->len = span;
	mr->iova = (uint64_t)(uintptr_t)base;
	mr->access = access;
	mr->odp = access & IBV_ACCESS_ON_DEMAND;
	/* index in the top 24 bits, a varying key byte below, as rxe does */
	mr->key = mr->index << 8 | (uint32_t)(core_rand(d->core) & 0xff);
	mr->serial = ++d->mr_serial;
	HASH_ADD_BYHASHVALUE(hh, d->mrs, index, sizeof(mr->index), mr->index,
			     mr);
	pd->users++;
	odp_count(mr, true);
	return mr;
}

int rocemu_mr_dereg(struct rocemu_mr *mr)
{
	CORE_GUARD(mr->pd->dev->core);
	/* as rxe: not while memory windows are bound to it */
	if (mr->windows)
		return -EBUSY;
	HASH_DELETE(hh, mr->pd->dev->mrs, mr);
	odp_count(mr, false);
	mr->pd->users--;
	free(mr);
	return 0;
}

enum {
	REREG_KNOWN = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
		      IBV_REREG_MR_CHANGE_ACCESS,
};

/*
 * ibv_rereg_mr(3) is "deregister, then register" with resources reused:
 * the MR keeps its lkey/rkey, as rxe and mlx5 keep theirs, and becomes a
 * new registration (a new serial), so an engine in the middle of a
 * message under the old one ends it with an error at its next packet
 * (rkey_resolve compares the serial), as if the MR had been
 * deregistered, and never mixes the two.
 */
int rocemu_mr_rereg(struct rocemu_mr *mr, int flags, struct rocemu_pd *pd,
		    void *addr, size_t len, int access)
{
	bool trans = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	int acc = flags & IBV_REREG_MR_CHANGE_ACCESS ? access : mr->access;
	uint8_t *base;
	uint64_t span;

	if (!flags || (flags & ~REREG_KNOWN))
		return -EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_PD) &&
	    (!pd || pd->dev != mr->pd->dev))
		return -EINVAL;
	/* The range it will have, checked with the access it will have. */
	int rc = trans ? mr_shape(addr, len, acc, &base, &span)
		       : mr_shape(mr->addr, (size_t)mr->len, acc, &base, &span);
	if (rc)
		return rc;
	CORE_GUARD(mr->pd->dev->core);
	/* A window bound to it covers its old range: not while bound, as
	 * for a deregistration. */
	if (mr->windows)
		return -EBUSY;
	odp_count(mr, false);
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		mr->pd->users--;
		mr->pd = pd;
		pd->users++;
	}
	if (trans) /* a new range is addressed as ibv_reg_mr addresses */
		mr->iova = (uint64_t)(uintptr_t)base;
	mr->addr = base;
	mr->len = span;
	mr->access = acc;
	mr->odp = acc & IBV_ACCESS_ON_DEMAND;
	mr->serial = ++mr->pd->dev->mr_serial;
	odp_count(mr, true);
	return 0;
}

struct rocemu_mr *mr_find(struct rocemu_dev *d, uint32_t key)
{
	struct rocemu_mr *mr = mr_by_index(d, key >> 8);

	return mr && mr->key == key ? mr : NULL;
}

uint32_t rocemu_mr_lkey(const struct rocemu_mr *mr)
{
	return mr->key;
}

uint32_t rocemu_mr_rkey(const struct rocemu_mr *mr)
{
	return mr->key;
}

struct rocemu_mr *mr_check(struct rocemu_pd *pd, uint32_t key, uint64_t va,
			   uint64_t len, int access)
{
	struct rocemu_mr *mr;
	uint64_t base;

	mr = mr_by_index(pd->dev, key >> 8);
	if (!mr || mr->key != key || mr->pd != pd ||
	    (mr->access & access) != access)
		return NULL;
	base = mr->iova;
	/* written so that no sum can wrap */
	if (va < base || va - base > mr->len || len > mr->len - (va - base))
		return NULL;
	return mr;
}

struct rocemu_mr *rocemu_mr_reg_zero_based(struct rocemu_pd *pd, void *addr,
					   size_t len, int access)
{
	struct rocemu_mr *mr = rocemu_mr_reg(pd, addr, len, access);

	if (mr) {
		CORE_GUARD(pd->dev->core);
		mr->iova = 0;
	}
	return mr;
}

/* Walks the SGE list from offset, calling fn on each piece. */
static int sge_walk(struct rocemu_pd *pd, const struct ibv_sge *sg,
		    unsigned n, uint64_t offset, uint64_t len, int access,
		    int (*fn)(const struct rocemu_mr *mr, uint8_t *mem,
			      uint8_t *buf, uint64_t k),
		    uint8_t *buf)
{
	for (unsigned i = 0; i < n && len; i++) {
		if (offset >= sg[i].length) {
			offset -= sg[i].length;
			continue;
		}
		uint64_t k = sg[i].length - offset;
		if (k > len)
			k = len;
		uint64_t at;
		const struct rocemu_mr *mr =
			roce_range_end(sg[i].addr, offset, &at)
				? mr_check(pd, sg[i].lkey, at, k, access)
				: NULL;
		if (!mr || fn(mr, mr_ptr(mr, at), buf, k))
			return -EFAULT;
		buf += k;
		len -= k;
		offset = 0;
	}
	return len ? -EFAULT : 0;
}

/* An on-demand MR's pages are checked as they are touched. */
static int into_mem(const struct rocemu_mr *mr, uint8_t *mem, uint8_t *buf,
		    uint64_t k)
{
	int rc = 0;

	DMA_BEGIN();
	if (mr->odp)
		rc = mem_put_checked((uint64_t)(uintptr_t)mem, buf, k);
	else
		memcpy(mem, buf, k);
	DMA_END();
	return rc;
}

static int from_mem(const struct rocemu_mr *mr, uint8_t *mem, uint8_t *buf,
		    uint64_t k)
{
	int rc = 0;

	DMA_BEGIN();
	if (mr->odp)
		rc = mem_get_checked(buf, (uint64_t)(uintptr_t)mem, k);
	else
		memcpy(buf, mem, k);
	DMA_END();
	return rc;
}

int sge_copy_to(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
		uint64_t offset, const void *src, uint64_t len, int access)
{
	return sge_walk(pd, sg, n, offset, len, access, into_mem,
			(uint8_t *)(uintptr_t)src);
}

int sge_copy_from(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
		  uint64_t offset, void *dst, uint64_t len)
{
	return sge_walk(pd, sg, n, offset, len, 0, from_mem, dst);
}

int sge_map(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
	    uint64_t offset, uint64_t len, const uint8_t **p)
{
	for (unsigned i = 0; i < n; i++) {
		if (offset >= sg[i].length && !(len == 0 && offset == 0)) {
			offset -= sg[i].length;
			continue;
		}
		if (len > sg[i].length - offset)
			return -EAGAIN;
		uint64_t at;
		const struct rocemu_mr *mr =
			roce_range_end(sg[i].addr, offset, &at)
				? mr_check(pd, sg[i].lkey, at, len, 0)
				: NULL;
		if (!mr)
			return -EFAULT;
		if (mr->odp)
			return -EAGAIN; /* copied, checked, by sge_copy_from */
		*p = mr_ptr(mr, at);
		return 0;
	}
	return len ? -EFAULT : -EAGAIN;
}
