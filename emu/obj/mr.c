/* SPDX-License-Identifier: MIT */
/* Protection domains, memory regions, key checks and scatter/gather copies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "obj.h"

struct rocemu_pd *rocemu_pd_alloc(struct rocemu_dev *d)
{
	CORE_GUARD(d->core);
	struct rocemu_pd *pd = calloc(1, sizeof(*pd));

	if (pd)
		pd->dev = d;
	return pd;
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
	ACCESS_KNOWN = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	NEEDS_LOCAL_WRITE = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
};

static struct rocemu_mr *mr_by_index(struct rocemu_dev *d, uint32_t index)
{
	struct rocemu_mr *mr;

	/* Indices come from an idgen counter: the number is its own hash. */
	HASH_FIND_BYHASHVALUE(hh, d->mrs, &index, sizeof(index), index, mr);
	return mr;
}

static bool index_in_use(void *dev, uint32_t index)
{
	return mr_by_index(dev, index) != NULL;
}

struct rocemu_mr *rocemu_mr_reg(struct rocemu_pd *pd, void *addr, size_t len,
				int access)
{
	/* ibv_reg_mr(3): remote write or atomic needs local write. */
	if ((access & ~ACCESS_KNOWN) || len > MAX_MR_SIZE ||
	    (!addr && len) ||
	    ((access & NEEDS_LOCAL_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))) {
		errno = EINVAL;
		return NULL;
	}
	/* Remote atomics write as well (and need local write, above). The
	 * process's map is read before the world lock is taken: the engines
	 * need not wait for it. */
	int rc = mem_range_check(addr, len, access & (IBV_ACCESS_LOCAL_WRITE |
						      NEEDS_LOCAL_WRITE));
	if (rc) {
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
	if (idgen_take(&d->mr_indices, index_in_use, d, &mr->index)) {
		free(mr);
		errno = ENOMEM;
		return NULL;
	}
	mr->pd = pd;
	mr->addr = addr;
	mr->len = len;
	mr->iova = (uint64_t)(uintptr_t)addr;
	mr->access = access;
	/* index in the top 24 bits, a varying key byte below, as rxe does */
	mr->key = mr->index << 8 | (uint32_t)(core_rand(d->core) & 0xff);
	mr->serial = ++d->mr_serial;
	HASH_ADD_BYHASHVALUE(hh, d->mrs, index, sizeof(mr->index), mr->index,
			     mr);
	pd->users++;
	return mr;
}

int rocemu_mr_dereg(struct rocemu_mr *mr)
{
	CORE_GUARD(mr->pd->dev->core);
	HASH_DELETE(hh, mr->pd->dev->mrs, mr);
	mr->pd->users--;
	free(mr);
	return 0;
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

bool mr_still(struct rocemu_pd *pd, uint32_t key, uint64_t va, uint64_t len,
	      int access, uint64_t serial)
{
	struct rocemu_mr *mr = mr_check(pd, key, va, len, access);

	return mr && mr->serial == serial;
}

uint8_t *mr_still_at(struct rocemu_pd *pd, uint32_t key, uint64_t va,
		     uint64_t len, int access, uint64_t serial)
{
	struct rocemu_mr *mr = mr_check(pd, key, va, len, access);

	return mr && mr->serial == serial ? mr_ptr(mr, va) : NULL;
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
		    void (*fn)(uint8_t *mem, uint8_t *buf, uint64_t k),
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
		struct rocemu_mr *mr = mr_check(pd, sg[i].lkey,
						sg[i].addr + offset, k, access);
		if (!mr)
			return -EFAULT;
		fn(mr_ptr(mr, sg[i].addr + offset), buf, k);
		buf += k;
		len -= k;
		offset = 0;
	}
	return len ? -EFAULT : 0;
}

static void into_mem(uint8_t *mem, uint8_t *buf, uint64_t k)
{
	memcpy(mem, buf, k);
}

static void from_mem(uint8_t *mem, uint8_t *buf, uint64_t k)
{
	memcpy(buf, mem, k);
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
		struct rocemu_mr *mr = mr_check(pd, sg[i].lkey,
						sg[i].addr + offset, len, 0);
		if (!mr)
			return -EFAULT;
		*p = mr_ptr(mr, sg[i].addr + offset);
		return 0;
	}
	return len ? -EFAULT : -EAGAIN;
}
