// SPDX-License-Identifier: MIT
/*
 * Explain mode through the verbs API (ROCEMU_EXPLAIN=1, which this
 * program sets before its first verbs call): three mistakes a student
 * makes, each refused or failed as before, and the reason the drop-in
 * gives for each on stderr and in the trace. The program makes the
 * mistakes and prints what it used ("used NAME VALUE" lines); the --then
 * script (verbs_explain_check.sh) writes the expected reasons from those
 * values and finds them. Built with plain cc -libverbs and
 * examples/pair.c. Prints one line per failed check and a closing
 * "verbs_explain: N passed, M failed".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

/* A fresh RC QP on a's CQ, taken to INIT. */
static struct ibv_qp *qp_in_init(struct pair *p)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = p->a.cq, .recv_cq = p->a.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(p->pd, &ia);

	CHECK(qp, "ibv_create_qp: errno %d", errno);
	if (qp)
		CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						     IBV_QP_PORT |
						     IBV_QP_ACCESS_FLAGS),
		      "to INIT");
	return qp;
}

/* Mistake 1: RTR without a GRH (is_global 0), on RoCE. */
static void rtr_without_grh(struct pair *p, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR,
				 .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = p->b.qp->qp_num,
				 .max_dest_rd_atomic = 1,
				 .ah_attr = { .port_num = 1 } };
	int rc = ibv_modify_qp(qp, &a,
			       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER);

	CHECK(rc == EINVAL, "RTR without GRH: %d, wanted EINVAL", rc);
	printf("used grh_qpn 0x%x\n", qp->qp_num);
}

/* Mistake 2: a SEND posted on a QP still in INIT. */
static void send_in_init(struct pair *p, struct ibv_qp *qp)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->a.buf, .length = 8,
			       .lkey = p->a.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;

	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL,
	      "post_send in INIT: wanted EINVAL");
}

/* Mistake 3: an RDMA WRITE with an rkey that names nothing. */
static void wrong_rkey(struct pair *p)
{
	uint32_t rkey = p->b.mr->rkey ^ 0x100;
	struct ibv_send_wr wr = { .wr_id = 9, .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = { .remote_addr =
						       (uintptr_t)p->b.buf,
					       .rkey = rkey } };
	struct ibv_wc wc;

	CHECK(!pair_post_send(&p->a, &wr, p->a.buf, 16), "post WRITE");
	CHECK(!pair_wait(p->a.cq, &wc), "WRITE completion");
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "WRITE status %d",
	      wc.status);
	printf("used a_qpn 0x%x\nused b_qpn 0x%x\nused bad_rkey 0x%x\n"
	       "used b_pd %u\n",
	       p->a.qp->qp_num, p->b.qp->qp_num, rkey, p->b.qp->pd->handle);
}

int main(void)
{
	struct pair p;

	setenv("ROCEMU_EXPLAIN", "1", 1);
	if (pair_open(&p, 4096, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		return 1;
	struct ibv_qp *qp = qp_in_init(&p);
	if (qp) {
		rtr_without_grh(&p, qp);
		send_in_init(&p, qp);
		CHECK(!ibv_destroy_qp(qp), "destroy");
	}
	wrong_rkey(&p);
	pair_close(&p);
	printf("verbs_explain: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
