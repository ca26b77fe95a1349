// SPDX-License-Identifier: MIT
/*
 * A shared receive queue: receives are posted once, to the SRQ, and any QP
 * attached to it consumes them. When fewer than the armed limit remain, the
 * device raises IBV_EVENT_SRQ_LIMIT_REACHED so the program can refill.
 *   cc -o srq srq.c pair.c -libverbs
 */
#include "pair.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	struct pair p;
	struct ibv_wc wc;
	struct ibv_async_event ev;
	int ok = 0, got = 0;

	if (pair_open(&p, 4096, 0))
		goto out;
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 16,
						    .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(p.pd, &init);
	if (!srq || pair_add_qps(&p, IBV_QPT_RC, srq))
		goto out;
	for (int i = 0; i < 4; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)p.b.buf + i * 256,
				       .length = 256, .lkey = p.b.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;
		if (ibv_post_srq_recv(srq, &wr, &bad))
			goto out;
	}
	/* Arm the limit: an event once fewer than 2 receives are left. */
	struct ibv_srq_attr limit = { .srq_limit = 2 };
	if (ibv_modify_srq(srq, &limit, IBV_SRQ_LIMIT))
		goto out;
	for (int i = 0; i < 3; i++) {
		struct ibv_send_wr wr = { .wr_id = i, .opcode = IBV_WR_SEND };
		snprintf(p.a.buf + i * 64, 64, "message %d", i);
		if (pair_post_send(&p.a, &wr, p.a.buf + i * 64, 10) ||
		    pair_wait(p.a.cq, &wc) || pair_wait(p.b.cq, &wc))
			goto out;
		/* The completion names the QP that consumed the receive. */
		printf("b: wr_id %lu on QP %u: \"%s\"\n",
		       (unsigned long)wc.wr_id, wc.qp_num,
		       p.b.buf + (wc.wr_id - 100) * 256);
		got += wc.status == IBV_WC_SUCCESS && wc.wr_id == 100u + i &&
		       wc.qp_num == p.b.qp->qp_num;
	}
	/* Async events come from the context's own file descriptor. */
	if (ibv_get_async_event(p.ctx, &ev))
		goto out;
	printf("async event: %s\n", ibv_event_type_str(ev.event_type));
	ok = got == 3 && ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
	     ev.element.srq == srq;
	ibv_ack_async_event(&ev);
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
