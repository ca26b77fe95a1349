// SPDX-License-Identifier: MIT
/*
 * Atomics: FETCH_AND_ADD and COMPARE_AND_SWAP on an aligned 64-bit word in
 * the peer's memory. The old value comes back into the local buffer; the
 * peer's word changes as one indivisible step.
 *   cc -o atomics atomics.c pair.c -libverbs
 */
#include "pair.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int atomic(struct pair *p, struct ibv_send_wr *wr, uint64_t *old)
{
	struct ibv_wc wc;

	wr->wr.atomic.remote_addr = (uintptr_t)p->b.buf;
	wr->wr.atomic.rkey = p->b.mr->rkey;
	if (pair_post_send(&p->a, wr, p->a.buf, 8) || pair_wait(p->a.cq, &wc) ||
	    wc.status != IBV_WC_SUCCESS)
		return -1;
	memcpy(old, p->a.buf, 8);
	return 0;
}

int main(void)
{
	struct pair p;
	uint64_t word = 40, now, old1, old2, old3;
	int ok = 0;

	if (pair_open(&p, 64, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	/* Atomics operate in the host's byte order on the target word. */
	memcpy(p.b.buf, &word, 8);
	struct ibv_send_wr add = { .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				   .wr.atomic.compare_add = 2 };
	struct ibv_send_wr swap_hit = { .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
					.wr.atomic = { .compare_add = 42,
						       .swap = 1000 } };
	struct ibv_send_wr swap_miss = { .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
					 .wr.atomic = { .compare_add = 42,
							.swap = 7 } };
	if (atomic(&p, &add, &old1) || atomic(&p, &swap_hit, &old2) ||
	    atomic(&p, &swap_miss, &old3))
		goto out;
	memcpy(&now, p.b.buf, 8);
	printf("fetch-add 2: old %" PRIu64 "\n", old1);
	printf("compare 42 swap 1000: old %" PRIu64 " (swapped)\n", old2);
	printf("compare 42 swap 7: old %" PRIu64 " (not swapped)\n", old3);
	printf("b's word is now %" PRIu64 "\n", now);
	ok = old1 == 40 && old2 == 42 && old3 == 1000 && now == 1000;
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
