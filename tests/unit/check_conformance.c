/* SPDX-License-Identifier: MIT */
/* Responder behaviour checked with crafted frames: NAK-sequence, duplicates; SQ drain; address handles. */
#include <errno.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

/* Injects a SEND_ONLY of 8 bytes from a's address to b's QP at psn. */
static void inject_send(struct pair *p, uint32_t psn, bool ackreq)
{
	static const uint8_t payload[8] = "rocemu!";
	struct roce_frame f;
	uint8_t buf[256];
	uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.sport = 0xc000;
	f.ib.bth.opcode = 0x04;
	f.ib.bth.dqpn = rocemu_qp_num(p->b.qp);
	f.ib.bth.psn = psn;
	f.ib.bth.ackreq = ackreq;
	f.ib.payload = payload;
	f.ib.payload_len = sizeof(payload);
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p->w, buf, (size_t)n);
	rocemu_world_settle(p->w, 1000000);
}

static uint64_t cnt(struct side *s, enum rocemu_counter c)
{
	return rocemu_dev_counter(s->dev, c);
}

/* 9.7.5.1.1: one NAK-sequence per gap, silence until the expected PSN comes. */
START_TEST(test_one_nak_per_gap)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 100 };

	pair_up(&p, &o);
	for (int i = 0; i < 4; i++)
		post_recv1(&p.b, (uint64_t)i, (size_t)i * 64, 64);
	inject_send(&p, 105, true);
	inject_send(&p, 106, true);
	inject_send(&p, 107, true);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_SEQ), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_RX_DROP_SEQ), 3);
	inject_send(&p, 100, true); /* the expected one closes the gap */
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_ACKS_SENT), 1);
	inject_send(&p, 103, false); /* a new gap: a new NAK */
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_NAK_SENT_SEQ), 2);
	ck_assert_int_eq(cq_count(&p, &p.b), 1); /* only PSN 100 was taken */
	pair_down(&p);
}
END_TEST

/* A duplicate SEND is acknowledged again, even without AckReq, and never
 * delivered twice (IBTA 9.7.5.1.1). */
START_TEST(test_duplicate_send_acked_not_redone)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 7 };

	pair_up(&p, &o);
	post_recv1(&p.b, 1, 0, 64);
	post_recv1(&p.b, 2, 64, 64);
	inject_send(&p, 7, true);
	inject_send(&p, 7, false);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_DUP_REQUESTS), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_ACKS_SENT), 2);
	ck_assert_int_eq(cq_count(&p, &p.b), 1);
	pair_down(&p);
}
END_TEST

/* Frames that do not belong are dropped and counted by reason. */
START_TEST(test_foreign_frames_counted)
{
	struct pair p;
	struct pair_opts o = { 0 };
	uint8_t junk[100] = { 0 };

	pair_up(&p, &o);
	post_recv1(&p.b, 1, 0, 64);
	memcpy(junk + 30, (uint8_t[]){ 10, 0, 0, 2 }, 4); /* routed to b */
	junk[12] = 0x08; /* IPv4 to b, but not UDP */
	junk[14] = 0x45;
	rocemu_world_inject(p.w, junk, sizeof(junk));
	rocemu_world_settle(p.w, 1000000);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_RX_DROP_NOT_ROCE), 1);
	/* right address, wrong QPN */
	struct roce_frame f;
	uint8_t buf[128], a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.ib.bth.opcode = 0x11;
	f.ib.bth.dqpn = 0x777;
	int n = roce_frame_build(&f, buf, sizeof(buf));
	rocemu_world_inject(p.w, buf, (size_t)n);
	/* a bad ICRC */
	f.ib.bth.dqpn = rocemu_qp_num(p.b.qp);
	n = roce_frame_build(&f, buf, sizeof(buf));
	buf[n - 1] ^= 1;
	rocemu_world_inject(p.w, buf, (size_t)n);
	/* a P_Key that is not ours */
	f.ib.bth.pkey = 0x8001;
	n = roce_frame_build(&f, buf, sizeof(buf));
	rocemu_world_inject(p.w, buf, (size_t)n);
	rocemu_world_settle(p.w, 1000000);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_RX_DROP_UNKNOWN_QP), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_RX_DROP_ICRC), 1);
	ck_assert_uint_eq(cnt(&p.b, ROCEMU_CNT_RX_DROP_PKEY), 1);
	/* the QP is unharmed */
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 8, 0, 0, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	pair_down(&p);
}
END_TEST

START_TEST(test_sq_drain_event)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD,
				 .en_sqd_async_notify = 1 };
	struct ibv_async_event ev;

	pair_up(&p, &o);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 5000, addr_of(&p.b, 0),
		   rocemu_mr_rkey(p.b.mr), 0);
	rocemu_world_run(p.w); /* sent, not yet acknowledged */
	ck_assert_int_eq(rocemu_qp_modify(p.a.qp, &a, IBV_QP_STATE |
							   IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	post_send1(&p.a, IBV_WR_SEND, 2, 0, 8, 0, 0, 0); /* waits in SQD */
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_int_eq(rocemu_dev_get_async_event(p.a.dev, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_SQ_DRAINED);
	ck_assert_int_eq(cq_count(&p, &p.a), 1); /* the WRITE, not the SEND */
	a.qp_state = IBV_QPS_RTS;
	post_recv1(&p.b, 1, 0, 64);
	ck_assert_int_eq(rocemu_qp_modify(p.a.qp, &a, IBV_QP_STATE), 0);
	ck_assert_uint_eq(poll1(&p, &p.a).wr_id, 2);
	pair_down(&p);
}
END_TEST

START_TEST(test_address_handles)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1 }, back;

	pair_up(&p, &o);
	attr.grh.dgid.raw[15] = 9;
	struct rocemu_ah *ah = rocemu_ah_new(p.a.pd, &attr);
	ck_assert_ptr_nonnull(ah);
	rocemu_ah_query(ah, &back);
	ck_assert_uint_eq(back.grh.dgid.raw[15], 9);
	ck_assert_int_eq(rocemu_pd_free(p.a.pd), -EBUSY); /* in use */
	ck_assert_int_eq(rocemu_ah_free(ah), 0);
	attr.is_global = 0; /* RoCEv2 needs the GRH */
	ck_assert_ptr_null(rocemu_ah_new(p.a.pd, &attr));
	attr.is_global = 1;
	attr.port_num = 2;
	ck_assert_ptr_null(rocemu_ah_new(p.a.pd, &attr));
	pair_down(&p);
}
END_TEST

Suite *conformance_suite(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create("crafted");

	tcase_add_test(tc, test_one_nak_per_gap);
	tcase_add_test(tc, test_duplicate_send_acked_not_redone);
	tcase_add_test(tc, test_foreign_frames_counted);
	tcase_add_test(tc, test_sq_drain_event);
	tcase_add_test(tc, test_address_handles);
	suite_add_tcase(s, tc);
	return s;
}
