/* SPDX-License-Identifier: MIT */
/* Queue state on demand: the dump's values on the deterministic wire, against what each test did. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

/* The lines of a dump, joined with newlines. */
struct lines {
	char text[16384];
	size_t len;
	unsigned n;
};

static void take(void *arg, const char *line)
{
	struct lines *l = arg;
	int n = snprintf(l->text + l->len, sizeof(l->text) - l->len, "%s\n",
			 line);

	ck_assert_int_gt(n, 0);
	ck_assert_uint_lt(l->len + (size_t)n, sizeof(l->text));
	l->len += (size_t)n;
	l->n++;
}

static void has(const struct lines *l, const char *want)
{
	ck_assert_msg(strstr(l->text, want), "no '%s' in the dump:\n%s", want,
		      l->text);
}

/* a SENDs 32 bytes (PSN 0x100) into the first of b's three receives;
 * nothing is polled; then a posts a WRITE the wire has not run yet. */
START_TEST(test_dump_values)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 0x100, .psn_b = 0x200, .cq_size = 16,
			       .max_wr = 8, .retry_cnt = 5, .rnr_retry = 3 };
	struct lines la = { .len = 0 }, lb = { .len = 0 };
	char want[200];

	pair_up(&p, &o);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(post_recv1(&p.b, 0x71 + i, 256 * i, 128), 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 0x51, 0, 32, 0, 0,
				    IBV_SEND_SIGNALED), 0);
	rocemu_world_settle(p.w, 60ull * 1000000000ull);	/* polls none */
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 0x52, 64, 16,
				    addr_of(&p.b, 1024), rocemu_mr_rkey(p.b.mr),
				    IBV_SEND_SIGNALED), 0);
	rocemu_dev_dump_state(p.a.dev, take, &la);
	rocemu_dev_dump_state(p.b.dev, take, &lb);
	uint32_t qa = rocemu_qp_num(p.a.qp), qb = rocemu_qp_num(p.b.qp);

	has(&la, "device devA 10.0.0.1: 1 QPs, ");
	/* a sent PSN 0x100, acknowledged; b sent nothing, from 0x200 */
	snprintf(want, sizeof(want), "qp 0x%06x RC RTS: dest qp 0x%06x, send "
		 "psn 0x000101, unacked psn 0x000101, expected psn 0x000200, "
		 "retries left 5, rnr retries left 3, send cq #1, recv cq #1\n",
		 qa, qb);
	has(&la, want);
	snprintf(want, sizeof(want), "qp 0x%06x sq: 1 outstanding of 8\n", qa);
	has(&la, want);
	has(&la, ": RDMA_WRITE wr_id 0x52 len 16 ");
	has(&la, ": posted, not sent yet\n");
	snprintf(want, sizeof(want), "qp 0x%06x rq: 0 posted of 8\n", qa);
	has(&la, want);
	has(&la, "cq #1: 1 completions waiting of 16 slots\n");

	has(&lb, "device devB 10.0.0.2: 1 QPs, ");
	snprintf(want, sizeof(want), "qp 0x%06x RC RTS: dest qp 0x%06x, send "
		 "psn 0x000200, unacked psn 0x000200, expected psn 0x000101, ",
		 qb, qa);
	has(&lb, want);
	snprintf(want, sizeof(want), "qp 0x%06x sq: 0 outstanding of 8\n", qb);
	has(&lb, want);
	/* the first receive was taken: the other two, in order */
	snprintf(want, sizeof(want), "qp 0x%06x rq: 2 posted of 8\n", qb);
	has(&lb, want);
	snprintf(want, sizeof(want), "qp 0x%06x rq slot 1: wr_id 0x72 len 128\n"
		 "qp 0x%06x rq slot 2: wr_id 0x73 len 128\n", qb, qb);
	has(&lb, want);
	has(&lb, "cq #1: 1 completions waiting of 16 slots\n");
	/* the dump changed nothing: the completions are still there
	 * (cq_count polls them), the WRITE's too once the wire ran */
	ck_assert_int_eq(cq_count(&p, &p.a), 2);
	ck_assert_int_eq(cq_count(&p, &p.b), 1);
	pair_down(&p);
}
END_TEST

/* An SRQ with a limit, and the QP on it: posted receives counted there. */
START_TEST(test_dump_srq)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_srq_init_attr sa = { .attr = { 8, 1, 2 } };
	struct lines l = { .len = 0 };

	pair_up(&p, &o);
	struct rocemu_srq *srq = rocemu_srq_new(p.b.pd, &sa);
	ck_assert_ptr_nonnull(srq);
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)p.b.cq,
		.recv_cq = (struct ibv_cq *)(void *)p.b.cq,
		.srq = (struct ibv_srq *)(void *)srq, .qp_type = IBV_QPT_RC,
		.cap = { 4, 4, 1, 1, 0 },
	};
	struct rocemu_qp *qp = rocemu_qp_new(p.b.pd, &init);
	ck_assert_ptr_nonnull(qp);
	for (int i = 0; i < 3; i++) {
		struct ibv_sge sge = { addr_of(&p.b, 0), 64,
				       rocemu_mr_lkey(p.b.mr) };
		struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge,
					  .num_sge = 1 }, *bad;
		ck_assert_int_eq(rocemu_post_srq_recv(srq, &wr, &bad), 0);
	}
	rocemu_dev_dump_state(p.b.dev, take, &l);
	char want[120];
	snprintf(want, sizeof(want), "qp 0x%06x RC RESET: ", rocemu_qp_num(qp));
	has(&l, want);
	has(&l, ", send cq #1, recv cq #1, srq #1\n");
	has(&l, "srq #1: 3 receives posted of 8 slots, limit 2 (armed)\n");
	rocemu_qp_free(qp);
	ck_assert_int_eq(rocemu_srq_free(srq), 0);
	pair_down(&p);
}
END_TEST

struct evs {
	unsigned n;
	char first[ROCEMU_EV_TEXT];
	char dev[ROCEMU_EV_NAME];
};

static void take_event(void *arg, const struct rocemu_event *ev)
{
	struct evs *e = arg;

	ck_assert_int_eq(ev->kind, ROCEMU_EV_STATE);
	if (!e->n++) {
		memcpy(e->first, ev->text, sizeof(e->first));
		memcpy(e->dev, ev->dev, sizeof(e->dev));
	}
}

/* The trace gets the same lines as state events, one per line. */
START_TEST(test_trace_state)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct lines l = { .len = 0 };
	struct evs e = { 0 };

	pair_up(&p, &o);
	rocemu_world_trace_state(p.w);	/* no sink: nothing, no crash */
	rocemu_world_dump_state(p.w, take, &l);
	rocemu_world_events(p.w, take_event, &e);
	rocemu_world_trace_state(p.w);
	rocemu_world_events(p.w, NULL, NULL);
	ck_assert_uint_eq(e.n, l.n);
	ck_assert_uint_gt(e.n, 8);	/* two devices, a QP each */
	ck_assert_msg(!strncmp(l.text, e.first, strlen(e.first)),
		      "first event '%s' is not the first line", e.first);
	ck_assert(!strncmp(e.first, "device ", 7));
	ck_assert_str_eq(e.dev, strstr(e.first, "devA") ? "devA" : "devB");
	pair_down(&p);
}
END_TEST

Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("dump");

	tcase_add_test(tc, test_dump_values);
	tcase_add_test(tc, test_dump_srq);
	tcase_add_test(tc, test_trace_state);
	suite_add_tcase(s, tc);
	return s;
}
