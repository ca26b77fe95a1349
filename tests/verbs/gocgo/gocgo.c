// SPDX-License-Identifier: MIT
#include "gocgo.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

/* GID index 1: the IPv4-mapped GID of the device's address, as on rxe. */
#define GID_INDEX 1

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *channel;
	union ibv_gid gid;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	struct ibv_mr *mr_a, *mr_b;
	char *buf_a, *buf_b;
} g;

static int failed(const char **what, const char *call)
{
	*what = call;
	return errno ? -errno : -EIO;
}

static struct ibv_context *open_first_device(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = NULL;

	if (list && n > 0)
		ctx = ibv_open_device(list[0]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static struct ibv_qp *create_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = GC_SLOTS, .max_recv_wr = GC_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(g.pd, &init);
}

/* RESET -> INIT -> RTR -> RTS, its peer @peer_qpn at our own GID. */
static int connect_qp(struct ibv_qp *qp, uint32_t peer_qpn)
{
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer_qpn, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = g.gid, .sgid_index = GID_INDEX,
				      .hop_limit = 64 } },
	};
	/* rnr_retry 7: a SEND that finds no receive is retried for ever,
	 * so the receiver's pace never fails the sender */
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .timeout = 14,
				   .retry_cnt = 7, .rnr_retry = 7,
				   .max_rd_atomic = 1 };

	if (ibv_modify_qp(qp, &init,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		return -1;
	if (ibv_modify_qp(qp, &rtr,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		return -1;
	return ibv_modify_qp(qp, &rts,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_MAX_QP_RD_ATOMIC) ?
		       -1 :
		       0;
}

int gc_open(const char **what)
{
	size_t len = (size_t)GC_MSG * GC_SLOTS;

	g.ctx = open_first_device();
	if (!g.ctx)
		return failed(what, "ibv_open_device");
	if (ibv_query_gid(g.ctx, 1, GID_INDEX, &g.gid))
		return failed(what, "ibv_query_gid");
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		return failed(what, "ibv_alloc_pd");
	g.channel = ibv_create_comp_channel(g.ctx);
	if (!g.channel)
		return failed(what, "ibv_create_comp_channel");
	g.cq_a = ibv_create_cq(g.ctx, 2 * GC_SLOTS, NULL, NULL, 0);
	g.cq_b = ibv_create_cq(g.ctx, 2 * GC_SLOTS, NULL, g.channel, 0);
	if (!g.cq_a || !g.cq_b)
		return failed(what, "ibv_create_cq");
	g.buf_a = calloc(1, len);
	g.buf_b = calloc(1, len);
	if (!g.buf_a || !g.buf_b)
		return failed(what, "calloc");
	g.mr_a = ibv_reg_mr(g.pd, g.buf_a, len, IBV_ACCESS_LOCAL_WRITE);
	g.mr_b = ibv_reg_mr(g.pd, g.buf_b, len, IBV_ACCESS_LOCAL_WRITE);
	if (!g.mr_a || !g.mr_b)
		return failed(what, "ibv_reg_mr");
	g.qp_a = create_qp(g.cq_a);
	g.qp_b = create_qp(g.cq_b);
	if (!g.qp_a || !g.qp_b)
		return failed(what, "ibv_create_qp");
	if (connect_qp(g.qp_a, g.qp_b->qp_num) ||
	    connect_qp(g.qp_b, g.qp_a->qp_num))
		return failed(what, "ibv_modify_qp");
	/* armed before the first SEND: its completion raises an event */
	if (ibv_req_notify_cq(g.cq_b, 0))
		return failed(what, "ibv_req_notify_cq");
	return 0;
}

uint32_t gc_b_qpn(void)
{
	return g.qp_b->qp_num;
}

int gc_post_recv(int slot, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(g.buf_b + slot * GC_MSG),
			       .length = GC_MSG, .lkey = g.mr_b->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(g.buf_b + slot * GC_MSG, 0, GC_MSG);
	return -ibv_post_recv(g.qp_b, &wr, &bad);
}

/* Message @seq's byte @i: differs between messages and within one. */
static char msg_byte(uint64_t seq, int i)
{
	return (char)(seq * 131 + (uint64_t)i * 7 + 1);
}

int gc_post_send(int slot, uint64_t seq)
{
	char *p = g.buf_a + slot * GC_MSG;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = GC_MSG,
			       .lkey = g.mr_a->lkey };
	struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	for (int i = 0; i < GC_MSG; i++)
		p[i] = msg_byte(seq, i);
	return -ibv_post_send(g.qp_a, &wr, &bad);
}

static int poll_into(struct ibv_cq *cq, struct gc_wc *out, int max)
{
	struct ibv_wc wc[16];
	int got = 0;

	while (got < max) {
		int want = max - got < 16 ? max - got : 16;
		int n = ibv_poll_cq(cq, want, wc);

		if (n < 0)
			return -EIO;
		for (int i = 0; i < n; i++, got++) {
			out[got].wr_id = wc[i].wr_id;
			out[got].status = wc[i].status;
			out[got].opcode = wc[i].opcode;
			out[got].byte_len = wc[i].byte_len;
		}
		if (n < want)
			break;
	}
	return got;
}

int gc_poll_send(struct gc_wc *wc, int max)
{
	return poll_into(g.cq_a, wc, max);
}

int gc_wait_recv(struct gc_wc *wc, int max)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (ibv_get_cq_event(g.channel, &cq, &cq_ctx))
		return errno ? -errno : -EIO;
	if (cq != g.cq_b)
		return -EPROTO;
	ibv_ack_cq_events(cq, 1);
	/* re-armed before polling: a completion after the poll raises the
	 * next event */
	if (ibv_req_notify_cq(cq, 0))
		return errno ? -errno : -EIO;
	return poll_into(cq, wc, max);
}

int gc_check(int slot, uint64_t seq)
{
	const char *p = g.buf_b + slot * GC_MSG;

	for (int i = 0; i < GC_MSG; i++)
		if (p[i] != msg_byte(seq, i))
			return 0;
	return 1;
}
