/* SPDX-License-Identifier: MIT */
/* QP state machine as a table of transitions and masks; rings; CQ overrun; completion channels. */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

struct one {
	struct rocemu_world *w;
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
};

static void one_up(struct one *o, enum ibv_mtu port_mtu, int cqe)
{
	struct rocemu_dev_cfg cfg = { .name = "dev", .mtu = port_mtu,
				      .gid = { [10] = 0xff, [11] = 0xff, [12] = 10,
					       [15] = 1 } };
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
					 .cap = { 4, 4, 1, 1, 0 } };

	o->w = rocemu_world_new(1);
	o->dev = rocemu_dev_new(o->w, &cfg);
	o->pd = rocemu_pd_alloc(o->dev);
	o->cq = rocemu_cq_new(o->dev, cqe, NULL);
	init.send_cq = init.recv_cq = (struct ibv_cq *)(void *)o->cq;
	o->qp = rocemu_qp_new(o->pd, &init);
	ck_assert_ptr_nonnull(o->qp);
}

static void one_down(struct one *o)
{
	rocemu_qp_free(o->qp);
	rocemu_cq_free(o->cq);
	rocemu_pd_free(o->pd);
	rocemu_dev_free(o->dev);
	rocemu_world_free(o->w);
}

static enum ibv_qp_state state(struct one *o)
{
	struct ibv_qp_attr a;

	rocemu_qp_query(o->qp, &a, NULL);
	return a.qp_state;
}

/* Valid attribute values for every mask bit a transition may name. */
static void full_attr(struct ibv_qp_attr *a, enum ibv_qp_state to)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	a->port_num = 1;
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = 0x22;
	a->rq_psn = 1;
	a->sq_psn = 2;
	a->max_dest_rd_atomic = 4;
	a->max_rd_atomic = 4;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.dgid.raw[10] = a->ah_attr.grh.dgid.raw[11] = 0xff;
	a->ah_attr.grh.dgid.raw[15] = 2;
}

enum {
	INIT_REQ = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	RTR_REQ = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	RTS_REQ = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
};

/* The transitions of ibv_modify_qp(3) for RC, with required masks. */
static const struct {
	enum ibv_qp_state from, to;
	int req;
	int bad_extra;	/* a bit this transition must refuse */
} rows[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT, INIT_REQ, IBV_QP_SQ_PSN },
	{ IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_DEST_QPN },
	{ IBV_QPS_INIT, IBV_QPS_RTR, RTR_REQ, IBV_QP_SQ_PSN },
	{ IBV_QPS_RTR, IBV_QPS_RTS, RTS_REQ, IBV_QP_DEST_QPN },
	{ IBV_QPS_RTS, IBV_QPS_RTS, 0, IBV_QP_PATH_MTU },
	{ IBV_QPS_RTS, IBV_QPS_SQD, 0, IBV_QP_SQ_PSN },
	{ IBV_QPS_SQD, IBV_QPS_RTS, 0, IBV_QP_RQ_PSN },
	{ IBV_QPS_RTS, IBV_QPS_ERR, 0, IBV_QP_SQ_PSN },
	{ IBV_QPS_ERR, IBV_QPS_RESET, 0, IBV_QP_PATH_MTU },
};

/* Drives a fresh QP to the given state along the legal path. */
static void reach(struct one *o, enum ibv_qp_state s)
{
	static const enum ibv_qp_state path[] = { IBV_QPS_INIT, IBV_QPS_RTR,
						  IBV_QPS_RTS };
	static const int masks[] = { INIT_REQ, RTR_REQ, RTS_REQ };
	struct ibv_qp_attr a;

	if (s == IBV_QPS_ERR || s == IBV_QPS_SQD) {
		reach(o, IBV_QPS_RTS);
		full_attr(&a, s);
		ck_assert_int_eq(rocemu_qp_modify(o->qp, &a, IBV_QP_STATE), 0);
		return;
	}
	for (int i = 0; i < 3 && state(o) != s; i++) {
		full_attr(&a, path[i]);
		ck_assert_int_eq(rocemu_qp_modify(o->qp, &a,
						  IBV_QP_STATE | masks[i]), 0);
	}
	ck_assert_int_eq(state(o), s);
}

START_TEST(test_transition_table)
{
	struct one o;
	struct ibv_qp_attr a;
	int req = rows[_i].req;

	one_up(&o, IBV_MTU_4096, 16);
	reach(&o, rows[_i].from);
	full_attr(&a, rows[_i].to);
	/* each required bit missing: refused, nothing changed */
	for (int bit = 1; bit && bit <= req; bit <<= 1) {
		if (!(req & bit))
			continue;
		ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, (IBV_QP_STATE | req) & ~bit),
				 -EINVAL);
		ck_assert_int_eq(state(&o), rows[_i].from);
	}
	/* a bit the transition does not take: refused */
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE | req |
							   rows[_i].bad_extra),
			 -EINVAL);
	ck_assert_int_eq(state(&o), rows[_i].from);
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE | req), 0);
	ck_assert_int_eq(state(&o), rows[_i].to);
	one_down(&o);
}
END_TEST

START_TEST(test_transitions_that_do_not_exist)
{
	struct one o;
	struct ibv_qp_attr a;

	one_up(&o, IBV_MTU_4096, 16);
	full_attr(&a, IBV_QPS_RTR);
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE | RTR_REQ), -EINVAL);
	full_attr(&a, IBV_QPS_RTS);
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE | RTS_REQ), -EINVAL);
	reach(&o, IBV_QPS_INIT);
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE | RTS_REQ), -EINVAL);
	full_attr(&a, IBV_QPS_SQD);
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE), -EINVAL);
	ck_assert_int_eq(state(&o), IBV_QPS_INIT);
	one_down(&o);
}
END_TEST

/* A value out of range is EINVAL and changes nothing; _i picks it. */
START_TEST(test_bad_values)
{
	struct one o;
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE | RTR_REQ;

	one_up(&o, IBV_MTU_1024, 16);
	reach(&o, IBV_QPS_INIT);
	full_attr(&a, IBV_QPS_RTR);
	switch (_i) {
	case 0: a.path_mtu = (enum ibv_mtu)6; break; /* no such MTU */
	case 1: a.dest_qp_num = 1u << 24; break;
	case 2: a.rq_psn = 1u << 24; break;
	case 3: a.max_dest_rd_atomic = 129; break; /* rxe's 128 + 1 */
	case 4: a.min_rnr_timer = 32; break;
	case 5: a.ah_attr.is_global = 0; break; /* RoCE needs the GRH */
	case 6: a.ah_attr.port_num = 2; break;
	case 7: a.qp_access_flags = 1 << 10; mask |= IBV_QP_ACCESS_FLAGS; break;
	}
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, mask), -EINVAL);
	ck_assert_int_eq(state(&o), IBV_QPS_INIT);
	full_attr(&a, IBV_QPS_RTR);
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE | RTR_REQ), 0);
	full_attr(&a, IBV_QPS_RTS);
	a.retry_cnt = 8;
	ck_assert_int_eq(rocemu_qp_modify(o.qp, &a, IBV_QP_STATE | RTS_REQ), -EINVAL);
	ck_assert_int_eq(state(&o), IBV_QPS_RTR);
	one_down(&o);
}
END_TEST

START_TEST(test_query_reports_attributes)
{
	struct one o;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	one_up(&o, IBV_MTU_4096, 16);
	reach(&o, IBV_QPS_RTS);
	ck_assert_int_eq(rocemu_qp_query(o.qp, &a, &init), 0);
	ck_assert_int_eq(a.qp_state, IBV_QPS_RTS);
	ck_assert_int_eq(a.path_mtu, IBV_MTU_1024);
	ck_assert_uint_eq(a.dest_qp_num, 0x22);
	ck_assert_uint_eq(a.timeout, 14);
	ck_assert_uint_eq(a.max_rd_atomic, 4);
	ck_assert_uint_eq(a.cap.max_send_wr, 4);
	ck_assert_int_eq(init.qp_type, IBV_QPT_RC);
	one_down(&o);
}
END_TEST

START_TEST(test_post_needs_a_ready_qp)
{
	struct one o;
	uint8_t buf[8];
	struct ibv_sge sge = { (uint64_t)(uintptr_t)buf, 8, 0 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;

	one_up(&o, IBV_MTU_4096, 16);
	ck_assert_int_eq(rocemu_post_send(o.qp, &wr, &bad), -EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(rocemu_post_recv(o.qp, &rwr, &rbad), -EINVAL);
	reach(&o, IBV_QPS_RTR);
	ck_assert_int_eq(rocemu_post_send(o.qp, &wr, &bad), -EINVAL);
	ck_assert_int_eq(rocemu_post_recv(o.qp, &rwr, &rbad), 0);
	one_down(&o);
}
END_TEST

START_TEST(test_bad_work_requests)
{
	struct one o;
	uint8_t buf[600];
	struct ibv_sge sge[2] = { { (uint64_t)(uintptr_t)buf, 8, 0 },
				  { (uint64_t)(uintptr_t)buf, 8, 0 } };
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 2,
				  .opcode = IBV_WR_SEND }, *bad;

	one_up(&o, IBV_MTU_4096, 16);
	reach(&o, IBV_QPS_RTS);
	ck_assert_int_eq(rocemu_post_send(o.qp, &wr, &bad), -EINVAL); /* max_send_sge 1 */
	wr.num_sge = 1;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = 4; /* not 8-byte aligned */
	ck_assert_int_eq(rocemu_post_send(o.qp, &wr, &bad), -EINVAL);
	wr.wr.atomic.remote_addr = 8;
	sge[0].length = 4; /* an atomic moves exactly 8 bytes */
	ck_assert_int_eq(rocemu_post_send(o.qp, &wr, &bad), -EINVAL);
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE;
	sge[0].length = 600; /* above max_inline_data */
	ck_assert_int_eq(rocemu_post_send(o.qp, &wr, &bad), -EINVAL);
	wr.opcode = (enum ibv_wr_opcode)99;
	ck_assert_int_eq(rocemu_post_send(o.qp, &wr, &bad), -EINVAL);
	one_down(&o);
}
END_TEST

START_TEST(test_ring_full)
{
	struct pair p;
	struct pair_opts o = { .max_wr = 4 };
	struct ibv_sge sge;
	struct ibv_send_wr wr[5], *bad = NULL;

	pair_up(&p, &o);
	sge = (struct ibv_sge){ addr_of(&p.a, 0), 8, rocemu_mr_lkey(p.a.mr) };
	for (int i = 0; i < 5; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = (uint64_t)i,
					      .next = i < 4 ? &wr[i + 1] : NULL,
					      .sg_list = &sge, .num_sge = 1,
					      .opcode = IBV_WR_RDMA_WRITE,
					      .send_flags = IBV_SEND_SIGNALED };
	for (int i = 0; i < 5; i++)
		wr[i].wr.rdma = (typeof(wr[i].wr.rdma)){ addr_of(&p.b, 0),
							 rocemu_mr_rkey(p.b.mr) };
	ck_assert_int_eq(rocemu_post_send(p.a.qp, wr, &bad), -ENOMEM);
	ck_assert_ptr_eq(bad, &wr[4]); /* four went in, the fifth did not */
	ck_assert_int_eq(cq_count(&p, &p.a), 4);
	/* once completed, the slots are free again */
	wr[3].next = NULL;
	ck_assert_int_eq(rocemu_post_send(p.a.qp, wr, &bad), 0);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(post_recv1(&p.b, 1, 0, 8), i < 4 ? 0 : -ENOMEM);
	pair_down(&p);
}
END_TEST

START_TEST(test_cq_overrun_is_an_async_error)
{
	struct pair p;
	struct pair_opts o = { .cq_size = 4 };
	struct ibv_async_event ev;

	pair_up(&p, &o);
	for (int i = 0; i < 6; i++)
		post_send1(&p.a, IBV_WR_RDMA_WRITE, (uint64_t)i, 0, 8,
			   addr_of(&p.b, 0), rocemu_mr_rkey(p.b.mr), 0);
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(rocemu_dev_get_async_event(p.a.dev, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_CQ_ERR);
	ck_assert_ptr_eq(ev.element.cq, (struct ibv_cq *)(void *)p.a.cq);
	ck_assert_uint_eq(rocemu_dev_counter(p.a.dev, ROCEMU_CNT_CQ_OVERRUNS), 2);
	struct pollfd pfd = { rocemu_dev_async_fd(p.a.dev), POLLIN, 0 };
	ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* the one event was taken */
	ck_assert_int_eq(rocemu_dev_get_async_event(p.a.dev, &ev), -EAGAIN);
	pair_down(&p);
}
END_TEST

START_TEST(test_completion_channel)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct rocemu_cq *got;

	pair_up(&p, &o);
	struct rocemu_channel *ch = rocemu_channel_new(p.b.dev);
	struct rocemu_cq *cq = rocemu_cq_new(p.b.dev, 16, ch);
	struct pollfd pfd = { rocemu_channel_fd(ch), POLLIN, 0 };

	/* b's receive completions go to a CQ on the channel */
	rocemu_qp_free(p.b.qp);
	struct ibv_qp_init_attr init = { .send_cq = (struct ibv_cq *)(void *)p.b.cq,
					 .recv_cq = (struct ibv_cq *)(void *)cq,
					 .qp_type = IBV_QPT_RC,
					 .cap = { 16, 16, 1, 1, 0 } };
	p.b.qp = rocemu_qp_new(p.b.pd, &init);
	uint8_t ga[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };
	uint8_t gb[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 2 };
	rocemu_qp_free(p.a.qp);
	init.recv_cq = init.send_cq = (struct ibv_cq *)(void *)p.a.cq;
	p.a.qp = rocemu_qp_new(p.a.pd, &init);
	ck_assert_int_eq(qp_connect(p.a.qp, rocemu_qp_num(p.b.qp), gb, 0, 0, &o), 0);
	ck_assert_int_eq(qp_connect(p.b.qp, rocemu_qp_num(p.a.qp), ga, 0, 0, &o), 0);

	/* not armed: no event */
	post_recv1(&p.b, 1, 0, 64);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 8, 0, 0, 0);
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	/* armed for solicited only: an unsolicited SEND does not wake it */
	ck_assert_int_eq(rocemu_cq_req_notify(cq, true), 0);
	post_recv1(&p.b, 2, 0, 64);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	/* a solicited one does */
	post_recv1(&p.b, 3, 0, 64);
	post_send1(&p.a, IBV_WR_SEND, 3, 0, 8, 0, 0,
		   IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(rocemu_channel_get_event(ch, &got), 0);
	ck_assert_ptr_eq(got, cq);
	/* an event disarms: the next needs a new request */
	post_recv1(&p.b, 4, 0, 64);
	post_send1(&p.a, IBV_WR_SEND, 4, 0, 8, 0, 0,
		   IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(rocemu_cq_req_notify(cq, false), 0);
	post_recv1(&p.b, 5, 0, 64);
	post_send1(&p.a, IBV_WR_SEND, 5, 0, 8, 0, 0, 0);
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	struct ibv_wc wc[8];
	ck_assert_int_eq(rocemu_cq_poll(cq, 8, wc), 5);
	ck_assert_int_eq(rocemu_channel_get_event(ch, &got), 0);
	/* resources in use cannot go away */
	ck_assert_int_eq(rocemu_channel_free(ch), -EBUSY);
	ck_assert_int_eq(rocemu_cq_free(cq), -EBUSY);
	rocemu_qp_free(p.b.qp);
	init.recv_cq = init.send_cq = (struct ibv_cq *)(void *)p.b.cq;
	p.b.qp = rocemu_qp_new(p.b.pd, &init); /* for pair_down */
	ck_assert_int_eq(rocemu_cq_free(cq), 0);
	ck_assert_int_eq(rocemu_channel_free(ch), 0);
	pair_down(&p);
}
END_TEST

/* Posts two receives on qp and moves it to ERROR: both are flushed. */
static void flush_two(struct side *s, struct rocemu_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { addr_of(s, 0), 64, rocemu_mr_lkey(s->mr) };
	struct ibv_recv_wr wr[2] = {
		{ .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .next = &wr[1] },
		{ .wr_id = wr_id + 1, .sg_list = &sge, .num_sge = 1 },
	};
	struct ibv_recv_wr *bad;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	ck_assert_int_eq(rocemu_post_recv(qp, wr, &bad), 0);
	ck_assert_int_eq(rocemu_qp_modify(qp, &err, IBV_QP_STATE), 0);
}

/* A QP moved to RESET leaves none of its completions in its CQ (the
 * flushed receives of its ERROR would otherwise greet its next life);
 * another QP's completions on that CQ stay, in order, whether they came
 * before (_i 0) or after (_i 1) the removed ones. */
START_TEST(test_reset_drops_the_qps_completions)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)NULL,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };

	pair_up(&p, &o);
	init.send_cq = init.recv_cq = (struct ibv_cq *)(void *)p.b.cq;
	struct rocemu_qp *other = rocemu_qp_new(p.b.pd, &init);
	ck_assert_ptr_nonnull(other);
	ck_assert_int_eq(qp_connect(other, rocemu_qp_num(p.a.qp), gid, 0, 0,
				    &o), 0);
	if (_i == 0)
		flush_two(&p.b, other, 20);
	flush_two(&p.b, p.b.qp, 10);
	if (_i == 1)
		flush_two(&p.b, other, 20);
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	ck_assert_int_eq(rocemu_qp_modify(p.b.qp, &reset, IBV_QP_STATE), 0);
	struct ibv_wc wc[8];
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(rocemu_cq_poll(p.b.cq, 8, wc), 2);
	ck_assert_uint_eq(wc[0].wr_id, 20);
	ck_assert_uint_eq(wc[1].wr_id, 21);
	ck_assert_uint_eq(wc[0].qp_num, rocemu_qp_num(other));
	ck_assert_int_eq(rocemu_qp_free(other), 0);
	pair_down(&p);
}
END_TEST

Suite *qp_suite(void)
{
	Suite *s = suite_create("qp");
	TCase *tc = tcase_create("objects");

	tcase_add_loop_test(tc, test_transition_table, 0,
			    sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(tc, test_transitions_that_do_not_exist);
	tcase_add_loop_test(tc, test_bad_values, 0, 8);
	tcase_add_test(tc, test_query_reports_attributes);
	tcase_add_test(tc, test_post_needs_a_ready_qp);
	tcase_add_test(tc, test_bad_work_requests);
	tcase_add_test(tc, test_ring_full);
	tcase_add_test(tc, test_cq_overrun_is_an_async_error);
	tcase_add_test(tc, test_completion_channel);
	tcase_add_loop_test(tc, test_reset_drops_the_qps_completions, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
