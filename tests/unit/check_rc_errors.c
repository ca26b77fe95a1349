/* SPDX-License-Identifier: MIT */
/* RC errors: each NAK code and the status each side sees, memory protection, RNR, retries. */
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

/* The async event queued on a device, or -1. */
static int async_event(struct side *s)
{
	struct ibv_async_event ev;

	return rocemu_dev_get_async_event(s->dev, &ev) ? -1 : (int)ev.event_type;
}

static enum ibv_qp_state state_of(struct side *s)
{
	struct ibv_qp_attr a;

	rocemu_qp_query(s->qp, &a, NULL);
	return a.qp_state;
}

/* A second WQE behind a failed one is flushed, in order. */
static void expect_fail_then_flush(struct pair *p, enum ibv_wc_status st)
{
	struct ibv_wc wc = poll1(p, &p->a);
	ck_assert_msg(wc.status == st, "status %d, wanted %d", wc.status, st);
	ck_assert_uint_eq(wc.wr_id, 1);
	wc = poll1(p, &p->a);
	ck_assert_int_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(wc.wr_id, 2);
	ck_assert_int_eq(state_of(&p->a), IBV_QPS_ERR);
}

START_TEST(test_write_bad_rkey_is_remote_access)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, addr_of(&p.b, 0),
		   rocemu_mr_rkey(p.b.mr) ^ 0x100, 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	expect_fail_then_flush(&p, IBV_WC_REM_ACCESS_ERR);
	/* the responder moved to ERROR with an access error event */
	ck_assert_int_eq(state_of(&p.b), IBV_QPS_ERR);
	ck_assert_int_eq(async_event(&p.b), IBV_EVENT_QP_ACCESS_ERR);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_NAK_SENT_REM_ACCESS), 1);
	pair_down(&p);
}
END_TEST

/* Each way a remote access can miss the registered window: _i picks. */
START_TEST(test_memory_protection)
{
	struct pair p;
	struct pair_opts o = { 0 };
	enum { WIN = 4096, WIN_LEN = 2048 };
	static const char *const what[] = {
		"write one byte past the end", "write one byte before the start",
		"read one byte past the end", "read one byte before the start",
		"atomic past the end", "write without remote-write access",
		"read with an MR of another PD", "write after deregistration",
		"atomic with a wrong rkey",
	};

	pair_up(&p, &o);
	memset(p.b.buf, 0xab, p.b.len);
	memset(p.a.buf, 0x11, p.a.len);
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (_i == 5)
		acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	struct rocemu_pd *other = rocemu_pd_alloc(p.b.dev);
	struct rocemu_mr *win = rocemu_mr_reg(_i == 6 ? other : p.b.pd,
					      p.b.buf + WIN, WIN_LEN, acc);
	ck_assert_ptr_nonnull(win);
	uint32_t rkey = rocemu_mr_rkey(win);
	uint64_t base = addr_of(&p.b, WIN);
	if (_i == 7)
		rocemu_mr_dereg(win);
	switch (_i) {
	case 0: post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 100, base + WIN_LEN - 99, rkey, 0); break;
	case 1: post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 100, base - 1, rkey, 0); break;
	case 2: post_send1(&p.a, IBV_WR_RDMA_READ, 1, 0, 100, base + WIN_LEN - 99, rkey, 0); break;
	case 3: post_send1(&p.a, IBV_WR_RDMA_READ, 1, 0, 100, base - 1, rkey, 0); break;
	case 4: post_send1(&p.a, IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0, 8, base + WIN_LEN, rkey, 0); break;
	case 5: post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 100, base, rkey, 0); break;
	case 6: post_send1(&p.a, IBV_WR_RDMA_READ, 1, 0, 100, base, rkey, 0); break;
	case 7: post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 100, base, rkey, 0); break;
	case 8: post_send1(&p.a, IBV_WR_ATOMIC_CMP_AND_SWP, 1, 0, 8, base, rkey + 1, 0); break;
	}
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	struct ibv_wc wc = poll1(&p, &p.a);
	ck_assert_msg(wc.status == IBV_WC_REM_ACCESS_ERR, "%s: status %d",
		      what[_i], wc.status);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_WR_FLUSH_ERR);
	/* not one byte changed on the responder, none read into the requester */
	for (size_t i = 0; i < p.b.len; i++)
		ck_assert_msg(p.b.buf[i] == 0xab, "%s: byte %zu changed", what[_i], i);
	for (size_t i = 0; i < p.a.len; i++)
		ck_assert_msg(p.a.buf[i] == 0x11, "%s: local byte %zu", what[_i], i);
	ck_assert(guards_intact(&p.a) && guards_intact(&p.b));
	if (_i != 7)
		rocemu_mr_dereg(win);
	rocemu_pd_free(other);
	pair_down(&p);
}
END_TEST

/* A QP that does not allow the operation: Invalid Request, as rxe. */
START_TEST(test_qp_access_flags_are_invalid_request)
{
	struct pair p;
	struct pair_opts o = { .qp_access = IBV_ACCESS_REMOTE_WRITE };

	pair_up(&p, &o);
	post_send1(&p.a, IBV_WR_RDMA_READ, 1, 0, 64, addr_of(&p.b, 0),
		   rocemu_mr_rkey(p.b.mr), 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	expect_fail_then_flush(&p, IBV_WC_REM_INV_REQ_ERR);
	ck_assert_int_eq(async_event(&p.b), IBV_EVENT_QP_REQ_ERR);
	pair_down(&p);
}
END_TEST

START_TEST(test_receive_too_small)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	post_recv1(&p.b, 5, 0, 100);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 101, 0, 0, 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	expect_fail_then_flush(&p, IBV_WC_REM_INV_REQ_ERR);
	struct ibv_wc r = poll1(&p, &p.b);
	ck_assert_int_eq(r.status, IBV_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(r.wr_id, 5);
	ck_assert_int_eq(state_of(&p.b), IBV_QPS_ERR);
	pair_down(&p);
}
END_TEST

/* A receive buffer with a bad key: Remote Operational Error. */
START_TEST(test_receive_bad_lkey_is_remote_op)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 6, .sg_list = &sge, .num_sge = 1 }, *bad;

	pair_up(&p, &o);
	sge = (struct ibv_sge){ addr_of(&p.b, 0), 100, rocemu_mr_lkey(p.b.mr) + 1 };
	rocemu_post_recv(p.b.qp, &wr, &bad);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 50, 0, 0, 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	expect_fail_then_flush(&p, IBV_WC_REM_OP_ERR);
	ck_assert_int_eq(poll1(&p, &p.b).status, IBV_WC_LOC_PROT_ERR);
	pair_down(&p);
}
END_TEST

START_TEST(test_local_protection_error)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	pair_up(&p, &o);
	post_recv1(&p.b, 1, 0, 1000);
	sge = (struct ibv_sge){ addr_of(&p.a, p.a.len - 10), 100,
				rocemu_mr_lkey(p.a.mr) }; /* runs past the MR */
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	expect_fail_then_flush(&p, IBV_WC_LOC_PROT_ERR);
	ck_assert_uint_eq(rocemu_dev_counter(p.a.dev, ROCEMU_CNT_TX_PACKETS), 0);
	pair_down(&p);
}
END_TEST

START_TEST(test_rnr_retry_exhausted)
{
	struct pair p;
	struct pair_opts o = { .exact = true, .timeout = 14, .retry_cnt = 7,
			       .rnr_retry = 2, .min_rnr_timer = 1 };

	pair_up(&p, &o);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 10, 0, 0, 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	expect_fail_then_flush(&p, IBV_WC_RNR_RETRY_EXC_ERR);
	/* the first try and rnr_retry retries, each refused */
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_NAK_SENT_RNR), 3);
	pair_down(&p);
}
END_TEST

/* rnr_retry 7 retries for ever; a receive posted late is then used. */
START_TEST(test_rnr_then_receive_posted)
{
	struct pair p;
	struct pair_opts o = { .min_rnr_timer = 14 }; /* 1.28 ms */

	pair_up(&p, &o);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 3000, 0, 0, 0);
	rocemu_world_advance(p.w, 20ull * 1000000);
	ck_assert_uint_ge(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_NAK_SENT_RNR), 10);
	ck_assert_int_eq(cq_count(&p, &p.a) + 0, 0);
	post_recv1(&p.b, 9, 0, 4096);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(poll1(&p, &p.b).byte_len, 3000);
	pair_down(&p);
}
END_TEST

START_TEST(test_retry_exhausted_on_a_dead_wire)
{
	struct pair p;
	struct pair_opts o = { .exact = true, .timeout = 10, .retry_cnt = 3,
			       .rnr_retry = 7, .min_rnr_timer = 1 };
	struct rocemu_faults all_lost = { .drop = 1.0 };

	pair_up(&p, &o);
	rocemu_world_set_faults(p.w, &all_lost);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 10, 0, 0, 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0);
	uint64_t t0 = rocemu_world_now(p.w);
	expect_fail_then_flush(&p, IBV_WC_RETRY_EXC_ERR);
	/* the first try and three retries, 4.096 us * 2^10 apart */
	ck_assert_uint_eq(rocemu_dev_counter(p.a.dev, ROCEMU_CNT_TIMEOUTS), 4);
	ck_assert_uint_eq(rocemu_world_now(p.w) - t0, 4 * (4096ull << 10));
	pair_down(&p);
}
END_TEST

/* Lost packets are recovered: NAK-sequence and go-back-N, and a READ
 * whose responses were lost is asked for again. */
START_TEST(test_loss_recovered)
{
	struct pair p;
	struct pair_opts o = { .seed = 5 + (uint64_t)_i, .mtu = IBV_MTU_256 };
	struct rocemu_faults lossy = { .drop = 0.2 };

	pair_up(&p, &o);
	rocemu_world_set_faults(p.w, &lossy);
	for (int k = 0; k < 8; k++)
		p.a.buf[k * 4096 + 5] = (uint8_t)(k + 1);
	for (int k = 0; k < 4; k++) {
		post_recv1(&p.b, (uint64_t)k, (size_t)k * 4096, 4096);
		post_send1(&p.a, IBV_WR_SEND, (uint64_t)k, (size_t)k * 4096, 4000, 0, 0, 0);
		post_send1(&p.a, IBV_WR_RDMA_READ, 10 + (uint64_t)k,
			   (size_t)(k + 4) * 4096, 3000, addr_of(&p.b, (size_t)k * 4096),
			   rocemu_mr_rkey(p.b.mr), 0);
	}
	for (int k = 0; k < 8; k++) {
		struct ibv_wc wc = poll1(&p, &p.a);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, k % 2 ? 10 + (uint64_t)k / 2 : (uint64_t)k / 2);
	}
	for (int k = 0; k < 4; k++) {
		ck_assert(!memcmp(p.b.buf + k * 4096, p.a.buf + k * 4096, 4000));
		ck_assert(!memcmp(p.a.buf + (k + 4) * 4096, p.b.buf + k * 4096, 3000));
	}
	ck_assert_uint_gt(rocemu_dev_counter(p.a.dev, ROCEMU_CNT_RETRANSMITS), 0);
	pair_down(&p);
}
END_TEST

/* Duplicated atomics are answered from the saved result, never redone. */
START_TEST(test_duplicate_atomics_apply_once)
{
	struct pair p;
	struct pair_opts o = { .seed = 11 };
	struct rocemu_faults dups = { .duplicate = 0.5, .reorder = 0.3 };
	uint64_t v = 0;

	pair_up(&p, &o);
	rocemu_world_set_faults(p.w, &dups);
	for (int k = 0; k < 200; k++) {
		struct ibv_sge sge = { addr_of(&p.a, (size_t)k * 8), 8,
				       rocemu_mr_lkey(p.a.mr) };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		wr.wr.atomic.remote_addr = addr_of(&p.b, 0);
		wr.wr.atomic.rkey = rocemu_mr_rkey(p.b.mr);
		wr.wr.atomic.compare_add = 3;
		ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	}
	for (int k = 0; k < 200; k++) {
		struct ibv_wc wc = poll1(&p, &p.a);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		uint64_t orig;
		memcpy(&orig, p.a.buf + wc.wr_id * 8, 8);
		ck_assert_uint_eq(orig, 3 * wc.wr_id); /* each saw the one before */
	}
	memcpy(&v, p.b.buf, 8);
	ck_assert_uint_eq(v, 600);
	ck_assert_uint_gt(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_DUP_REQUESTS), 0);
	pair_down(&p);
}
END_TEST

Suite *rc_errors_suite(void)
{
	Suite *s = suite_create("rc_errors");
	TCase *tc = tcase_create("errors");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_write_bad_rkey_is_remote_access);
	tcase_add_loop_test(tc, test_memory_protection, 0, 9);
	tcase_add_test(tc, test_qp_access_flags_are_invalid_request);
	tcase_add_test(tc, test_receive_too_small);
	tcase_add_test(tc, test_receive_bad_lkey_is_remote_op);
	tcase_add_test(tc, test_local_protection_error);
	tcase_add_test(tc, test_rnr_retry_exhausted);
	tcase_add_test(tc, test_rnr_then_receive_posted);
	tcase_add_test(tc, test_retry_exhausted_on_a_dead_wire);
	tcase_add_loop_test(tc, test_loss_recovered, 0, 20);
	tcase_add_test(tc, test_duplicate_atomics_apply_once);
	suite_add_tcase(s, tc);
	return s;
}
