/* SPDX-License-Identifier: MIT */
/* The flow table and the capture loader: which packets belong to which QP-to-QP conversation. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_suites.h"
#include "rocemu/flow.h"

static const uint8_t ip_a[4] = { 10, 0, 0, 1 }, ip_b[4] = { 10, 0, 0, 2 };

/* A parsed-looking frame: only what the flow table reads. */
static struct roce_frame pkt(const uint8_t *from, const uint8_t *to,
			     uint8_t opcode, uint32_t dqpn, uint32_t psn)
{
	struct roce_frame f;

	memset(&f, 0, sizeof(f));
	roce_gid_from_ipv4(f.src_gid, from);
	roce_gid_from_ipv4(f.dst_gid, to);
	f.ib.has_bth = true;
	f.ib.bth.opcode = opcode;
	f.ib.op = roce_opcode(opcode);
	f.ib.exts = f.ib.op->exts;
	f.ib.bth.dqpn = dqpn;
	f.ib.bth.psn = psn;
	return f;
}

static int classify(struct roce_flows *t, struct roce_frame f, uint64_t no,
		    unsigned *dir)
{
	return roce_flows_classify(t, &f, no, dir);
}

START_TEST(rc_halves_pair_into_one_flow)
{
	struct roce_flows *t = roce_flows_new();
	unsigned dir;

	ck_assert_int_eq(classify(t, pkt(ip_a, ip_b, ROCE_OP_RC_SEND_ONLY,
					 0x12, 100), 1, &dir), 0);
	ck_assert_uint_eq(dir, 0);
	const struct roce_flow *fl = roce_flows_get(t, 0);
	ck_assert(!fl->end[0].qpn_known);
	ck_assert(fl->end[1].qpn_known && fl->end[1].qpn == 0x12);
	ck_assert_int_eq(classify(t, pkt(ip_b, ip_a, ROCE_OP_RC_ACK, 0x11,
					 100), 2, &dir), 0);
	ck_assert_uint_eq(dir, 1);
	ck_assert_int_eq(classify(t, pkt(ip_a, ip_b, ROCE_OP_RC_SEND_ONLY,
					 0x12, 101), 3, &dir), 0);
	ck_assert_uint_eq(dir, 0);
	ck_assert_uint_eq(roce_flows_count(t), 1);
	fl = roce_flows_get(t, 0);
	ck_assert(fl->end[0].qpn_known && fl->end[0].qpn == 0x11);
	ck_assert_uint_eq(fl->packets[0], 2);
	ck_assert_uint_eq(fl->packets[1], 1);
	ck_assert_uint_eq(fl->requests[0], 2);
	ck_assert_uint_eq(fl->first_req_psn[0], 100);
	ck_assert_uint_eq(fl->last_req_psn[0], 101);
	ck_assert_uint_eq(fl->first_no, 1);
	ck_assert_uint_eq(fl->last_no, 3);
	ck_assert_ptr_null(roce_flows_get(t, 1));
	roce_flows_free(t);
}
END_TEST

/* Two connections between the same addresses: the answer that comes
 * first belongs to the younger one, and its PSN says so. */
START_TEST(rc_answers_pair_by_psn)
{
	struct roce_flows *t = roce_flows_new();
	unsigned dir;

	ck_assert_int_eq(classify(t, pkt(ip_a, ip_b, ROCE_OP_RC_SEND_ONLY,
					 0x20, 100), 1, &dir), 0);
	ck_assert_int_eq(classify(t, pkt(ip_a, ip_b,
					 ROCE_OP_RC_RDMA_READ_REQUEST, 0x21,
					 5000), 2, &dir), 1);
	ck_assert_int_eq(classify(t, pkt(ip_b, ip_a,
					 ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
					 0x31, 5000), 3, &dir), 1);
	ck_assert_uint_eq(dir, 1);
	ck_assert_int_eq(classify(t, pkt(ip_b, ip_a, ROCE_OP_RC_ACK, 0x30,
					 100), 4, &dir), 0);
	ck_assert_uint_eq(dir, 1);
	ck_assert_uint_eq(roce_flows_get(t, 0)->end[0].qpn, 0x30);
	ck_assert_uint_eq(roce_flows_get(t, 1)->end[0].qpn, 0x31);
	ck_assert_uint_eq(roce_flows_count(t), 2);
	roce_flows_free(t);
}
END_TEST

/*
 * More connections wait between two addresses than an unmatched answer
 * is fitted against (analyze/flow_wait.h): answers that carry their
 * request's PSN still find their own flow, in any order, and one that
 * matches no PSN joins the best fit among the newest. A table that
 * fitted only a window, or fitted every answer against all of them,
 * would pair these wrongly or take time quadratic in flows.
 */
START_TEST(many_waiting_pair_by_psn)
{
	enum { N = 3000 };
	struct roce_flows *t = roce_flows_new();
	unsigned dir;
	uint64_t no = 1;

	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(classify(t, pkt(ip_a, ip_b,
						 ROCE_OP_RC_SEND_ONLY,
						 0x1000 + i, 7 * i), no++,
					  &dir), (int)i);
	/* answered in a shuffled order (N - 1 is prime), mostly from
	 * outside the newest flows */
	for (unsigned k = 0; k < N - 1; k++) {
		unsigned i = (k * 1237) % (N - 1);
		ck_assert_int_eq(classify(t, pkt(ip_b, ip_a, ROCE_OP_RC_ACK,
						 0x9000 + i, 7 * i), no++,
					  &dir), (int)i);
	}
	/* a PSN no request carried: the nearest of the newest */
	ck_assert_int_eq(classify(t, pkt(ip_b, ip_a, ROCE_OP_RC_ACK, 0x8fff,
					 7 * (N - 1) + 2), no++, &dir), N - 1);
	ck_assert_uint_eq(dir, 1);
	for (unsigned i = 0; i < N - 1; i++) {
		ck_assert_uint_eq(roce_flows_get(t, i)->end[0].qpn, 0x9000 + i);
		ck_assert(roce_flows_get(t, i)->end[0].qpn_known);
	}
	ck_assert_uint_eq(roce_flows_count(t), N);
	/* nothing waits any more: a new answer starts a flow of its own */
	ck_assert_int_eq(classify(t, pkt(ip_b, ip_a, ROCE_OP_RC_ACK, 0x7777,
					 1), no++, &dir), N);
	ck_assert_uint_eq(dir, 0);
	roce_flows_free(t);
}
END_TEST

START_TEST(ud_names_both_ends)
{
	struct roce_flows *t = roce_flows_new();
	unsigned dir;
	struct roce_frame f = pkt(ip_a, ip_b, ROCE_OP_UD_SEND_ONLY, 7, 1);

	f.ib.deth.src_qp = 5;
	ck_assert_int_eq(roce_flows_classify(t, &f, 1, &dir), 0);
	const struct roce_flow *fl = roce_flows_get(t, 0);
	ck_assert(fl->kind == ROCE_FLOW_UD);
	ck_assert(fl->end[0].qpn_known && fl->end[0].qpn == 5);
	struct roce_frame g = pkt(ip_b, ip_a, ROCE_OP_UD_SEND_ONLY, 5, 9);
	g.ib.deth.src_qp = 7;
	ck_assert_int_eq(roce_flows_classify(t, &g, 2, &dir), 0);
	ck_assert_uint_eq(dir, 1);
	/* Another QP of A sending to the same QP of B is another flow */
	f.ib.deth.src_qp = 6;
	ck_assert_int_eq(roce_flows_classify(t, &f, 3, &dir), 1);
	ck_assert_uint_eq(dir, 0);
	roce_flows_free(t);
}
END_TEST

START_TEST(no_bth_is_refused)
{
	struct roce_flows *t = roce_flows_new();
	struct roce_frame f;
	unsigned dir = 7;

	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(roce_flows_classify(t, &f, 1, &dir), -EINVAL);
	ck_assert_uint_eq(dir, 7);
	ck_assert_uint_eq(roce_flows_count(t), 0);
	roce_flows_free(t);
	roce_flows_free(NULL);
}
END_TEST

START_TEST(end_text)
{
	struct roce_flow_end e = { .qpn = 0x11, .qpn_known = true };
	char buf[64];

	roce_gid_from_ipv4(e.gid, ip_b);
	ck_assert_str_eq(roce_flow_end_text(&e, buf, sizeof(buf)),
			 "10.0.0.2 qp 0x11");
	e.qpn_known = false;
	memset(e.gid, 0, 16);
	e.gid[0] = 0xfd;
	e.gid[15] = 1;
	ck_assert_str_eq(roce_flow_end_text(&e, buf, sizeof(buf)),
			 "fd00::1 qp ?");
	ck_assert_str_eq(roce_flow_kind_name(ROCE_FLOW_UC), "UC");
}
END_TEST

/* Every packet of a real capture lands in a flow whose ends are its
 * sender and its destination QP; RC halves all find their partner. */
static void check_capture(const char *name, unsigned want_flows)
{
	char path[512], err[ROCE_PCAP_ERRLEN];
	struct roce_capture c;

	snprintf(path, sizeof(path), "%s/rxe/%s", t_pcap_dir(), name);
	ck_assert_msg(roce_capture_load(path, &c, err) == 0, "%s: %s", path,
		      err);
	ck_assert_uint_gt(c.n, 0);
	ck_assert_uint_ge(c.frames, c.n);
	for (size_t i = 0; i < c.n; i++) {
		const struct roce_cap_pkt *p = &c.pkts[i];
		const struct roce_flow *fl = roce_flows_get(c.flows, p->flow);
		ck_assert_ptr_nonnull(fl);
		ck_assert(!memcmp(fl->end[p->dir].gid, p->f.src_gid, 16));
		ck_assert(!memcmp(fl->end[1 - p->dir].gid, p->f.dst_gid, 16));
		ck_assert(fl->end[1 - p->dir].qpn_known);
		ck_assert_uint_eq(fl->end[1 - p->dir].qpn, p->f.ib.bth.dqpn);
		ck_assert(p->f.ib.payload == NULL ||
			  (p->f.ib.payload >= p->data &&
			   p->f.ib.payload <= p->data + p->caplen));
		if (i)
			ck_assert_uint_gt(p->no, c.pkts[i - 1].no);
	}
	ck_assert_uint_eq(roce_flows_count(c.flows), want_flows);
	for (unsigned id = 0; id < want_flows; id++) {
		const struct roce_flow *fl = roce_flows_get(c.flows, id);
		if (fl->kind == ROCE_FLOW_RC)
			ck_assert(fl->end[0].qpn_known && fl->packets[1]);
	}
	roce_capture_free(&c);
	ck_assert_uint_eq(c.n, 0);
}

START_TEST(rxe_captures)
{
	check_capture("rc_send_64.pcap", 1);
	check_capture("read_bw.pcap", 1);
	check_capture("loss.pcap", 1);
	check_capture("ud_send.pcap", 1);
	/* two RC QPs on one shared receive queue: two connections */
	check_capture("srq.pcap", 2);
}
END_TEST

START_TEST(load_errors)
{
	struct roce_capture c;
	char err[ROCE_PCAP_ERRLEN] = "";

	ck_assert_int_eq(roce_capture_load("/nonexistent/x.pcap", &c, err),
			 -ENOENT);
	ck_assert(err[0]);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_ptr_null(c.flows);
	roce_capture_free(&c);
}
END_TEST

Suite *flow_suite(void)
{
	Suite *s = suite_create("flow");
	TCase *tc = tcase_create("flow");

	tcase_add_test(tc, rc_halves_pair_into_one_flow);
	tcase_add_test(tc, rc_answers_pair_by_psn);
	tcase_add_test(tc, many_waiting_pair_by_psn);
	tcase_add_test(tc, ud_names_both_ends);
	tcase_add_test(tc, no_bth_is_refused);
	tcase_add_test(tc, end_text);
	tcase_add_test(tc, rxe_captures);
	tcase_add_test(tc, load_errors);
	suite_add_tcase(s, tc);
	return s;
}
