/* SPDX-License-Identifier: MIT */
/* Shared receive queues: several QPs drawing from one ring, max_wr, the limit event. */
#include <errno.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

static const uint8_t gid_a[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };
static const uint8_t gid_b[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 2 };

struct shared {
	struct pair p;
	struct rocemu_srq *srq;
	struct rocemu_qp *a2, *b2;	/* a second connection */
};

static struct rocemu_qp *qp_on(struct side *s, struct rocemu_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)s->cq,
		.recv_cq = (struct ibv_cq *)(void *)s->cq,
		.srq = (struct ibv_srq *)(void *)srq, .qp_type = IBV_QPT_RC,
		.cap = { 64, 64, 1, 1, 0 },
	};
	struct rocemu_qp *qp = rocemu_qp_new(s->pd, &init);

	ck_assert_ptr_nonnull(qp);
	return qp;
}

static void shared_up(struct shared *sh, uint32_t max_wr, uint32_t limit)
{
	struct pair_opts o = { 0 };
	struct ibv_srq_init_attr sa = { .attr = { max_wr, 1, limit } };

	pair_up(&sh->p, &o);
	sh->srq = rocemu_srq_new(sh->p.b.pd, &sa);
	ck_assert_ptr_nonnull(sh->srq);
	ck_assert_uint_eq(sa.attr.max_wr, max_wr); /* a power of two here */
	/* b's first QP is rebuilt on the SRQ; a second pair joins it */
	rocemu_qp_free(sh->p.b.qp);
	rocemu_qp_free(sh->p.a.qp);
	sh->p.b.qp = qp_on(&sh->p.b, sh->srq);
	sh->p.a.qp = qp_on(&sh->p.a, NULL);
	sh->b2 = qp_on(&sh->p.b, sh->srq);
	sh->a2 = qp_on(&sh->p.a, NULL);
	ck_assert_int_eq(qp_connect(sh->p.b.qp, rocemu_qp_num(sh->p.a.qp), gid_a,
				    0, 0, &o), 0);
	ck_assert_int_eq(qp_connect(sh->p.a.qp, rocemu_qp_num(sh->p.b.qp), gid_b,
				    0, 0, &o), 0);
	ck_assert_int_eq(qp_connect(sh->b2, rocemu_qp_num(sh->a2), gid_a, 0, 0, &o), 0);
	ck_assert_int_eq(qp_connect(sh->a2, rocemu_qp_num(sh->b2), gid_b, 0, 0, &o), 0);
}

static void shared_down(struct shared *sh)
{
	ck_assert_int_eq(rocemu_srq_free(sh->srq), -EBUSY);
	rocemu_qp_free(sh->b2);
	rocemu_qp_free(sh->a2);
	rocemu_qp_free(sh->p.b.qp);
	ck_assert_int_eq(rocemu_srq_free(sh->srq), 0);
	sh->p.b.qp = qp_on(&sh->p.b, NULL); /* for pair_down */
	pair_down(&sh->p);
}

static int srq_post(struct shared *sh, uint64_t wr_id, size_t off)
{
	struct ibv_sge sge = { addr_of(&sh->p.b, off), 256,
			       rocemu_mr_lkey(sh->p.b.mr) };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return rocemu_post_srq_recv(sh->srq, &wr, &bad);
}

static void send_on(struct shared *sh, struct rocemu_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { addr_of(&sh->p.a, 0), 16, rocemu_mr_lkey(sh->p.a.mr) };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;

	ck_assert_int_eq(rocemu_post_send(qp, &wr, &bad), 0);
}

START_TEST(test_two_qps_share_receives)
{
	struct shared sh;

	shared_up(&sh, 8, 0);
	for (uint64_t k = 0; k < 8; k++)
		ck_assert_int_eq(srq_post(&sh, 100 + k, k * 256), 0);
	ck_assert_int_eq(srq_post(&sh, 999, 0), -ENOMEM); /* max_wr */
	for (uint64_t k = 0; k < 3; k++) {
		send_on(&sh, sh.p.a.qp, k);
		send_on(&sh, sh.a2, 10 + k);
	}
	rocemu_world_settle(sh.p.w, 1000000000ull);
	struct ibv_wc wc[8];
	ck_assert_int_eq(rocemu_cq_poll(sh.p.b.cq, 8, wc), 6);
	unsigned on1 = 0, on2 = 0;
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc[i].wr_id, 100 + (uint64_t)i); /* ring order */
		on1 += wc[i].qp_num == rocemu_qp_num(sh.p.b.qp);
		on2 += wc[i].qp_num == rocemu_qp_num(sh.b2);
	}
	ck_assert_uint_eq(on1, 3);
	ck_assert_uint_eq(on2, 3);
	struct ibv_recv_wr rwr = { 0 }, *bad;
	ck_assert_int_eq(rocemu_post_recv(sh.b2, &rwr, &bad), -EINVAL);
	shared_down(&sh);
}
END_TEST

START_TEST(test_limit_event)
{
	struct shared sh;
	struct ibv_async_event ev;
	struct ibv_srq_attr a = { .max_wr = 32 };

	shared_up(&sh, 16, 0);
	ck_assert_int_eq(rocemu_srq_modify(sh.srq, &a, IBV_SRQ_MAX_WR), -EOPNOTSUPP);
	a.srq_limit = 5;
	ck_assert_int_eq(rocemu_srq_modify(sh.srq, &a, IBV_SRQ_LIMIT), 0);
	for (uint64_t k = 0; k < 8; k++)
		srq_post(&sh, k, k * 256);
	for (uint64_t k = 0; k < 3; k++)
		send_on(&sh, sh.p.a.qp, k);
	rocemu_world_settle(sh.p.w, 1000000000ull);
	ck_assert_int_eq(rocemu_dev_get_async_event(sh.p.b.dev, &ev), -EAGAIN);
	send_on(&sh, sh.a2, 9); /* 8 - 4 = 4 left, below 5 */
	send_on(&sh, sh.a2, 10);
	rocemu_world_settle(sh.p.w, 1000000000ull);
	ck_assert_int_eq(rocemu_dev_get_async_event(sh.p.b.dev, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	ck_assert_ptr_eq(ev.element.srq, (struct ibv_srq *)(void *)sh.srq);
	ck_assert_int_eq(rocemu_dev_get_async_event(sh.p.b.dev, &ev), -EAGAIN);
	ck_assert_int_eq(rocemu_srq_query(sh.srq, &a), 0);
	ck_assert_uint_eq(a.srq_limit, 0); /* it disarmed */
	shared_down(&sh);
}
END_TEST

/* A QP in error leaves the shared receives to the others. */
START_TEST(test_error_keeps_shared_receives)
{
	struct shared sh;
	struct ibv_async_event ev;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	shared_up(&sh, 8, 0);
	for (uint64_t k = 0; k < 4; k++)
		srq_post(&sh, k, k * 256);
	ck_assert_int_eq(rocemu_qp_modify(sh.b2, &err, IBV_QP_STATE), 0);
	ck_assert_int_eq(rocemu_dev_get_async_event(sh.p.b.dev, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	send_on(&sh, sh.p.a.qp, 1);
	rocemu_world_settle(sh.p.w, 1000000000ull);
	struct ibv_wc wc;
	ck_assert_int_eq(rocemu_cq_poll(sh.p.b.cq, 1, &wc), 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 0);
	shared_down(&sh);
}
END_TEST

Suite *srq_suite(void)
{
	Suite *s = suite_create("srq");
	TCase *tc = tcase_create("shared");

	tcase_add_test(tc, test_two_qps_share_receives);
	tcase_add_test(tc, test_limit_event);
	tcase_add_test(tc, test_error_keeps_shared_receives);
	suite_add_tcase(s, tc);
	return s;
}
