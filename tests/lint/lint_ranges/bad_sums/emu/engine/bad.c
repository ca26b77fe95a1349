/* SPDX-License-Identifier: MIT */
/* Open-coded address+length sums, each of which the lint must report. */
int bad(const struct mr *mr, const struct rng *r, const struct cf_mr *m,
	const struct swqe *wqe, uint64_t va, uint64_t len, uint64_t off,
	uint64_t n, uint64_t size, uint64_t start)
{
	uint64_t end;

	if (va + len > mr->iova + mr->length)
		return -1;
	if (off + n > size)
		return -1;
	end = start + size;
	end = r->va + r->len;
	end = m->addr + m->size;
	end = wqe->sge.addr + off;
	end = (uint64_t)(uintptr_t)mr->addr + len;
	end = len + va;
	end = wqe->sg_list[i].addr +
	      wqe->sg_list[i].length;
	end = ib->reth.len + (uint64_t)rx_off;
	return (int)end;
}
