// SPDX-License-Identifier: MIT
/*
 * What goes wrong and how a verbs program hears of it:
 *  1. a bad argument: the call fails at once and sets errno;
 *  2. a feature the device does not have: EOPNOTSUPP;
 *  3. a wrong rkey: the peer answers with a NAK, the WR completes with
 *     IBV_WC_REM_ACCESS_ERR, the QP moves to the error state and every WR
 *     behind it completes with IBV_WC_WR_FLUSH_ERR.
 *   cc -o errors errors.c pair.c -libverbs
 */
#include "pair.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int bad_argument(struct pair *p)
{
	struct ibv_qp_init_attr init = {
		.send_cq = p->a.cq, .recv_cq = p->a.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1u << 30, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(p->pd, &init);

	printf("1. a send queue of 2^30 WRs: %s\n",
	       qp ? "created?!" : strerror(errno));
	return !qp && (errno == EINVAL || errno == ENOMEM);
}

static int not_supported(struct pair *p)
{
	/* a multicast group: RC QPs have none, and rocemu has no multicast
	 * on its UDP wire at all */
	union ibv_gid group = { .raw = { 0xff, 0x0e, [15] = 1 } };
	int rc = ibv_attach_mcast(p->a.qp, &group, 0);

	printf("2. ibv_attach_mcast: %s\n", rc ? strerror(rc) : "attached?!");
	return rc == EOPNOTSUPP;
}

static int wrong_rkey(struct pair *p)
{
	struct ibv_wc wc1, wc2;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)p->b.buf,
			     .rkey = p->b.mr->rkey ^ 0x5a5a },
	};
	struct ibv_send_wr next = { .wr_id = 2, .opcode = IBV_WR_SEND };

	/* Both in one call, so both are queued before the first packet
	 * leaves (two calls race the NAK: the SEND may find the QP in error
	 * and be flushed without a packet). */
	wr.next = &next;
	next.sg_list = &(struct ibv_sge){ .addr = (uintptr_t)p->a.buf,
					  .length = 16, .lkey = p->a.mr->lkey };
	next.num_sge = 1;
	next.send_flags = IBV_SEND_SIGNALED;
	if (pair_post_send(&p->a, &wr, p->a.buf, 16) ||
	    pair_wait(p->a.cq, &wc1) || pair_wait(p->a.cq, &wc2) ||
	    ibv_query_qp(p->a.qp, &attr, IBV_QP_STATE, &init))
		return 0;
	printf("3. WRITE with a wrong rkey: wr_id %lu %s; wr_id %lu %s; "
	       "QP state %s\n", (unsigned long)wc1.wr_id,
	       ibv_wc_status_str(wc1.status), (unsigned long)wc2.wr_id,
	       ibv_wc_status_str(wc2.status),
	       attr.qp_state == IBV_QPS_ERR ? "ERR" : "not ERR");
	return wc1.wr_id == 1 && wc1.status == IBV_WC_REM_ACCESS_ERR &&
	       wc2.wr_id == 2 && wc2.status == IBV_WC_WR_FLUSH_ERR &&
	       attr.qp_state == IBV_QPS_ERR;
}

int main(void)
{
	struct pair p;
	int ok = 0;

	if (pair_open(&p, 4096, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	ok = bad_argument(&p);
	ok = not_supported(&p) && ok;
	ok = wrong_rkey(&p) && ok;
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
