/* SPDX-License-Identifier: MIT */
/* The CM rules: mkcap --cm's exchanges (tests/tools/cm_caps.h) judged in memory, each bad one breaking exactly its rule. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_suites.h"
#include "rocemu/check.h"
#include "rocemu/flow.h"
#include "../tools/cm_caps.h"

enum { CM_MAX_FRAMES = 96, CM_MAX_FOUND = 16 };

/* The frames a sink was given, built. */
struct cm_cap {
	unsigned n;
	size_t len[CM_MAX_FRAMES];
	uint8_t buf[CM_MAX_FRAMES][ROCE_FRAME_MAX];
};

static void put(void *arg, const struct roce_frame *f)
{
	struct cm_cap *cap = arg;

	ck_assert_uint_lt(cap->n, CM_MAX_FRAMES);
	int n = roce_frame_build(f, cap->buf[cap->n], ROCE_FRAME_MAX);
	ck_assert_int_gt(n, 0);
	cap->len[cap->n++] = (size_t)n;
}

struct cm_found {
	unsigned n;
	struct roce_violation v[CM_MAX_FOUND];
};

static void collect(const struct roce_violation *v, void *arg)
{
	struct cm_found *r = arg;

	ck_assert_int_eq(v->cls, ROCE_CHECK_ERROR);
	if (r->n < CM_MAX_FOUND)
		r->v[r->n] = *v;
	r->n++;
}

/* Builds capture name and judges it as rocemu check does. */
static void judge(const char *name, struct cm_found *r)
{
	static struct cm_cap cap;
	struct cm_sink sink = { .put = put, .arg = &cap };

	memset(r, 0, sizeof(*r));
	cap.n = 0;
	ck_assert_int_eq(cm_caps_gen(&sink, name), 0);
	struct roce_flows *t = roce_flows_new();
	struct roce_check *c = roce_check_new(0, collect, r);
	ck_assert(t && c);
	for (unsigned i = 0; i < cap.n; i++) {
		struct roce_frame f;
		const char *why = NULL;
		unsigned dir = 0;
		ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, cap.buf[i],
						  cap.len[i], cap.len[i], &f,
						  &why), 0);
		int id = roce_flows_classify(t, &f, i + 1, &dir);
		ck_assert_int_ge(id, 0);
		ck_assert_int_eq(roce_check_packet(c, i + 1, &f, 0, NULL,
						   (unsigned)id, dir,
						   roce_flows_get(t, (unsigned)id)
							   ->kind),
				 0);
	}
	roce_check_finish(c);
	ck_assert_uint_eq(roce_check_errors(c), r->n);
	roce_check_free(c);
	roce_flows_free(t);
}

/* The good exchanges: a connection, one with every message sent twice
 * and an MRA (retries are legal), a REJ 8, a SIDR exchange. */
START_TEST(test_good_exchanges_pass)
{
	static const char *const good[] = { "connect", "retry", "reject",
					    "sidr" };
	struct cm_found r;

	judge(good[_i], &r);
	ck_assert_msg(r.n == 0, "%s: %u findings, the first rule %s: %s",
		      good[_i], r.n, r.n ? r.v[0].rule : "",
		      r.n ? r.v[0].text : "");
}
END_TEST

/* Each bad capture: exactly one finding, its rule, at its frame. */
static const struct {
	const char *name, *rule;
	uint64_t frame;
} bad[] = {
	{ "bad-tid", "CM-TID", 2 },	/* the REP */
	{ "bad-comm", "CM-COMM-ID", 3 }, /* the RTU */
	{ "bad-order", "CM-ORDER", 2 },	/* the RTU before the REP */
	{ "bad-drep", "CM-ORDER", 10 },	/* the DREP */
	{ "bad-qpn", "CM-QPN", 4 },	/* the first SEND */
	{ "bad-psn", "CM-PSN", 4 },	/* the first SEND */
	{ "bad-drep-tid", "CM-TID", 11 }, /* the DREP */
};

START_TEST(test_each_rule_caught)
{
	struct cm_found r;

	judge(bad[_i].name, &r);
	ck_assert_msg(r.n == 1, "%s: %u findings, wanted 1 (%s)", bad[_i].name,
		      r.n, r.n ? r.v[0].text : "none");
	ck_assert_str_eq(r.v[0].id, bad[_i].rule);
	ck_assert_uint_eq(r.v[0].no, bad[_i].frame);
}
END_TEST

/* All seven in one capture: seven findings, one per fault. */
START_TEST(test_all_faults_together)
{
	struct cm_found r;

	judge("bad", &r);
	ck_assert_uint_eq(r.n, 7);
	for (unsigned i = 0; i < 7; i++)
		ck_assert_str_eq(r.v[i].id, bad[i].rule);
}
END_TEST

Suite *cmrules_suite(void)
{
	Suite *s = suite_create("cmrules");
	TCase *tc = tcase_create("cmrules");

	tcase_add_loop_test(tc, test_good_exchanges_pass, 0, 4);
	tcase_add_loop_test(tc, test_each_rule_caught, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_all_faults_together);
	suite_add_tcase(s, tc);
	return s;
}
