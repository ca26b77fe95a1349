/* SPDX-License-Identifier: MIT */
/* The IPv4 ID a UDP socket hides: corrupted datagrams of an established flow refused, and the per-flow predictor's window, resync and table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "tools/icrc_flood.h"

/* 10^5 corrupted datagrams at a flow whose IDs were 100, 101, 102: none
 * gets through (tests/tools/icrc_flood runs 10^7 from make check). */
START_TEST(test_corrupted_flood_refused)
{
	struct roce_ipid_table ids;
	struct flood f;

	flood_run(&ids, 100000, 7 + (uint64_t)_i, &f);
	ck_assert_uint_eq(f.valid_ok, 3);
	ck_assert_uint_eq(f.sent, 100000);
	ck_assert_uint_gt(f.malformed, 0);
	ck_assert_msg(f.accepted == 0, "%llu of %llu corrupted accepted",
		      (unsigned long long)f.accepted,
		      (unsigned long long)f.sent);
}
END_TEST

Suite *ipid_suite(void)
{
	Suite *s = suite_create("ipid");
	TCase *tc = tcase_create("predict");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_corrupted_flood_refused, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
