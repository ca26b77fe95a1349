/* SPDX-License-Identifier: MIT */
/* A QP's retry and RNR timers run from the moment they are armed, not from the start of the pass that armed them. */
#include "check_suites.h"
#include "core/core.h"
#include "obj/obj.h"

enum { MS = 1000000 };

/* On real time, the pass began 50 ms before the packet that arms the
 * timer was read (a preempted thread): a 20.48 ms RNR timer must still
 * end no earlier than 20.48 ms after it was armed (IBTA 9.7.5.2.8). */
START_TEST(test_timer_runs_from_arming)
{
	static struct core c;
	static struct rocemu_dev dev;
	static struct rocemu_qp qp;

	ck_assert_int_eq(core_init(&c, 1, true), 0);
	dev.core = &c;
	qp.dev = &dev;
	c.now = clock_ns() - 50ull * MS;	/* the pass's start */
	uint64_t armed = clock_ns();
	timer_arm(&qp, _i ? TIMER_RETRY : TIMER_RNR, 20480000ull);
	ck_assert(qp.timer[_i ? TIMER_RETRY : TIMER_RNR].armed);
	ck_assert_uint_ge(qp.timer[_i ? TIMER_RETRY : TIMER_RNR].due,
			  armed + 20480000ull);
	timer_cancel(&qp, _i ? TIMER_RETRY : TIMER_RNR);
	sched_timer_forget(&c.sched, &qp.timer[TIMER_RETRY]);
	sched_timer_forget(&c.sched, &qp.timer[TIMER_RNR]);
	core_fini(&c);
}
END_TEST

/* The deterministic wire's virtual time is the only clock there. */
START_TEST(test_virtual_time_unchanged)
{
	static struct core c;
	static struct rocemu_dev dev;
	static struct rocemu_qp qp;

	ck_assert_int_eq(core_init(&c, 1, false), 0);
	dev.core = &c;
	qp.dev = &dev;
	c.now = 7 * MS;
	timer_arm(&qp, TIMER_RNR, 20 * MS);
	ck_assert_uint_eq(qp.timer[TIMER_RNR].due, 27 * MS);
	sched_timer_forget(&c.sched, &qp.timer[TIMER_RNR]);
	core_fini(&c);
}
END_TEST

Suite *timer_start_suite(void)
{
	Suite *s = suite_create("timer_start");
	TCase *tc = tcase_create("timer_start");

	tcase_add_loop_test(tc, test_timer_runs_from_arming, 0, 2);
	tcase_add_test(tc, test_virtual_time_unchanged);
	suite_add_tcase(s, tc);
	return s;
}
