// SPDX-License-Identifier: MIT
/*
 * Sends to a GID that no route reaches, from GID 1 of the only device:
 * "rc", one SEND on an RC QP connected there with a short timeout and
 * one retry; "ud", two SENDs on a UD QP through an AH to it, one after
 * the other's completion. Prints each completion's status as
 * "status <ibv_wc_status_str>". Exit 0 once all came, 1 if one did not
 * within a generous bound or a call failed.
 * usage: gid0_unreach rc|ud DEST_IPV6
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int fail(const char *what)
{
	fprintf(stderr, "gid0_unreach: %s failed\n", what);
	return 1;
}

static const struct ibv_ah_attr *ah_to(const union ibv_gid *dgid)
{
	static struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
					 .grh = { .sgid_index = 1,
						  .hop_limit = 64 } };

	ah.grh.dgid = *dgid;
	return &ah;
}

/* A UD QP ready to send. */
static int ready_ud(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int connect_qp(struct ibv_qp *qp, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = 0 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x11;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr = *ah_to(dgid);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 10; /* about 4 ms */
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
					     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN |
					     IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Posts one signalled SEND of buf and prints its completion's status;
 * 0 once it came. */
static int send_one(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_ah *ah,
		    struct ibv_mr *mr)
{
	struct ibv_sge sge = { (uintptr_t)mr->addr, (uint32_t)mr->length,
			       mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	time_t end = time(NULL) + 30; /* a bound, not a measurement */
	int n;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x11;
	wr.wr.ud.remote_qkey = 0x11111111;
	if (ibv_post_send(qp, &wr, &bad))
		return fail("ibv_post_send");
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && time(NULL) < end)
		;
	if (n != 1)
		return fail("waiting for the completion");
	printf("status %s\n", ibv_wc_status_str(wc.status));
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[64];
	union ibv_gid dgid;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	bool ud = argc == 3 && !strcmp(argv[1], "ud");

	if (argc != 3 || inet_pton(AF_INET6, argv[2], dgid.raw) != 1)
		return fail("usage: gid0_unreach rc|ud DEST_IPV6; parsing");
	if (!ctx)
		return fail("opening the device");
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), 0) : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq,
		.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = mr ? ibv_create_qp(pd, &ia) : NULL;
	if (!qp || (ud ? ready_ud(qp) : connect_qp(qp, &dgid)))
		return fail("making the QP");
	if (!ud)
		return send_one(qp, cq, NULL, mr);
	struct ibv_ah *ah = ibv_create_ah(pd, (struct ibv_ah_attr *)ah_to(&dgid));
	if (!ah)
		return fail("ibv_create_ah");
	return send_one(qp, cq, ah, mr) || send_one(qp, cq, ah, mr);
}
