/* SPDX-License-Identifier: MIT */
/* Completion timestamps on the deterministic wire, and an address's flow label and traffic class on the wire. */
#include <check.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

/*
 * Moves the clock 1 ns at a time until s's CQ holds a completion, which
 * must then have been made at the clock's present time: the step before,
 * the CQ was empty. Returns the completion's timestamp.
 */
static uint64_t step_to_completion(struct pair *p, struct side *s,
				   struct ibv_wc *wc)
{
	uint64_t ts = 0;

	for (int i = 0; i < 100000; i++) {
		if (rocemu_cq_take_ts(s->cq, wc, &ts) == 0) {
			ck_assert_uint_eq(ts, rocemu_world_now(p->w));
			return ts;
		}
		rocemu_world_advance(p->w, 1);
	}
	ck_abort_msg("no completion within 100 us");
	return 0;
}

/* Each completion carries the virtual clock's time at which it was made,
 * to the nanosecond: the receive's and then the send's (its ACK). */
START_TEST(test_completion_ts_is_virtual_clock)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_wc wc;
	uint64_t t_recv, t_send;

	pair_up(&p, &o);
	/* A start far from 0, so that a zero stamp cannot pass. */
	rocemu_world_advance(p.w, 123456789);
	ck_assert_int_eq(post_recv1(&p.b, 7, 0, 64), 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 8, 0, 64, 0, 0,
				    IBV_SEND_SIGNALED), 0);
	t_recv = step_to_completion(&p, &p.b, &wc);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	t_send = step_to_completion(&p, &p.a, &wc);
	ck_assert_uint_eq(wc.wr_id, 8);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	/* One wire latency (1 us by default) at least between each. */
	ck_assert_uint_ge(t_recv, 123456789 + 1000);
	ck_assert_uint_ge(t_send, t_recv + 1000);
	/* The virtual clock is its own wall clock. */
	ck_assert_uint_eq(rocemu_world_wallclock(p.w, t_send), t_send);
	ck_assert_uint_eq(rocemu_world_clock(p.w), rocemu_world_now(p.w));
	pair_down(&p);
}
END_TEST

Suite *stamp_suite(void)
{
	Suite *s = suite_create("stamp");
	TCase *tc = tcase_create("stamp");

	tcase_add_test(tc, test_completion_ts_is_virtual_clock);
	suite_add_tcase(s, tc);
	return s;
}
