/* SPDX-License-Identifier: MIT */
/* Completion timestamps on the deterministic wire, and an address's flow label and traffic class on the wire. */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"
#include "rocemu/datagram.h"

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

/* ---- flow label and traffic class ---------------------------------- */

enum { FL = 0x12345, TC = 0x68 };

/* fd00::N, or ::ffff:10.0.0.N */
static void gid_of(uint8_t g[16], bool v6, uint8_t n)
{
	memset(g, 0, 16);
	if (v6) {
		g[0] = 0xfd;
	} else {
		g[10] = g[11] = 0xff;
		g[12] = 10;
	}
	g[15] = n;
}

/* The frames the wire carries, as built. */
struct seen {
	uint8_t frame[8][256];
	size_t len[8];
	int n;
};

static void watch(void *arg, const uint8_t *frame, size_t len)
{
	struct seen *s = arg;

	if (s->n == 8)
		return;
	memcpy(s->frame[s->n], frame, len < 256 ? len : 256);
	s->len[s->n++] = len;
}

static void ep_up(struct rocemu_world *w, struct rocemu_endpoint *ep,
		  enum ibv_qp_type t, bool v6, uint8_t n)
{
	struct rocemu_dev_cfg cfg = { .name = n == 1 ? "devA" : "devB",
				      .mtu = IBV_MTU_1024 };

	gid_of(cfg.gid, v6, n);
	ck_assert_int_eq(rocemu_endpoint_new(w, &cfg, t, 4096, 16, ep), 0);
}

static void ud_up(struct rocemu_endpoint *ep)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };

	ck_assert_int_eq(rocemu_qp_modify(ep->qp, &a, IBV_QP_STATE |
					  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(rocemu_qp_modify(ep->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(rocemu_qp_modify(ep->qp, &a, IBV_QP_STATE |
					  IBV_QP_SQ_PSN), 0);
}

static int post_recv_ep(struct rocemu_endpoint *ep, uint32_t len)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)ep->buf, len,
			       rocemu_mr_lkey(ep->mr) };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return rocemu_post_recv(ep->qp, &wr, &bad);
}

static struct ibv_wc take_one(struct rocemu_world *w,
			      struct rocemu_endpoint *ep)
{
	struct ibv_wc wc;

	rocemu_world_settle(w, 1000000000ull);
	ck_assert_int_eq(rocemu_cq_take(ep->cq, &wc), 0);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	return wc;
}

/* A UD SEND from a to b through an AH with FL and TC: the frame's IP
 * header and b's GRH area carry them. */
static void ud_send_fl_tc(bool v6, struct seen *seen, uint8_t grh[40])
{
	struct rocemu_world *w = rocemu_world_new(1);
	struct rocemu_endpoint a, b;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .flow_label = FL,
					   .traffic_class = TC,
					   .sgid_index = 1,
					   .hop_limit = 64 } };

	ep_up(w, &a, IBV_QPT_UD, v6, 1);
	ep_up(w, &b, IBV_QPT_UD, v6, 2);
	ud_up(&a);
	ud_up(&b);
	gid_of(aa.grh.dgid.raw, v6, 2);
	struct rocemu_ah *ah = rocemu_ah_new(a.pd, &aa);
	ck_assert_ptr_nonnull(ah);
	ck_assert_int_eq(post_recv_ep(&b, 40 + 16), 0);
	rocemu_world_watch(w, watch, seen);
	struct ibv_sge sge = { (uint64_t)(uintptr_t)a.buf, 16,
			       rocemu_mr_lkey(a.mr) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.ud.ah = (struct ibv_ah *)(void *)ah;
	wr.wr.ud.remote_qpn = rocemu_qp_num(b.qp);
	wr.wr.ud.remote_qkey = 0x11111111;
	ck_assert_int_eq(rocemu_post_send(a.qp, &wr, &bad), 0);
	struct ibv_wc wc = take_one(w, &b);
	ck_assert(wc.wc_flags & IBV_WC_GRH);
	memcpy(grh, b.buf, 40);
	take_one(w, &a);
	ck_assert_int_eq(seen->n, 1);
	rocemu_world_watch(w, NULL, NULL);
	rocemu_ah_free(ah);
	rocemu_endpoint_free(&a);
	rocemu_endpoint_free(&b);
	rocemu_world_free(w);
}

/* IPv6: the first word of the IP header, version 6, TC 0x68, FL 0x12345,
 * is 0x66812345; it begins the receiver's GRH as it begins the frame's
 * IP header (after the 14-byte Ethernet header). */
START_TEST(test_ud_ah_flow_label_tclass_ipv6)
{
	static const uint8_t word[4] = { 0x66, 0x81, 0x23, 0x45 };
	struct seen seen = { .n = 0 };
	uint8_t grh[40];

	ud_send_fl_tc(true, &seen, grh);
	ck_assert_mem_eq(seen.frame[0] + 14, word, 4);
	ck_assert_mem_eq(grh, word, 4);
}
END_TEST

/* IPv4 has no flow label: the TOS byte carries the traffic class, in the
 * frame and in the IPv4 header that ends the receiver's GRH area. */
START_TEST(test_ud_ah_tclass_ipv4)
{
	struct seen seen = { .n = 0 };
	uint8_t grh[40];

	ud_send_fl_tc(false, &seen, grh);
	ck_assert_uint_eq(seen.frame[0][14], 0x45);
	ck_assert_uint_eq(seen.frame[0][15], TC);
	ck_assert_uint_eq(grh[20], 0x45);
	ck_assert_uint_eq(grh[21], TC);
}
END_TEST

/* RC takes them from the QP's ah_attr.grh: every packet of the QP carries
 * them, the UDP source port is rxe's for that flow label
 * (rdma_get_udp_sport: (fl & 0x3fff) ^ (fl >> 14), with 0xc000 set;
 * 0x2345 ^ 0x4 for 0x12345), and ibv_query_qp gives them back. */
START_TEST(test_rc_ah_attr_flow_label_tclass)
{
	struct rocemu_world *w = rocemu_world_new(1);
	struct rocemu_endpoint ep[2];
	struct seen seen = { .n = 0 };

	ep_up(w, &ep[0], IBV_QPT_RC, true, 1);
	ep_up(w, &ep[1], IBV_QPT_RC, true, 2);
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
		};
		ck_assert_int_eq(rocemu_qp_modify(ep[i].qp, &a,
			IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS), 0);
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = rocemu_qp_num(ep[1 - i].qp);
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		a.ah_attr = (struct ibv_ah_attr){
			.is_global = 1, .port_num = 1,
			.grh = { .flow_label = FL, .traffic_class = TC,
				 .sgid_index = 1, .hop_limit = 64 } };
		gid_of(a.ah_attr.grh.dgid.raw, true, (uint8_t)(2 - i));
		ck_assert_int_eq(rocemu_qp_modify(ep[i].qp, &a,
			IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER), 0);
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 1;
		ck_assert_int_eq(rocemu_qp_modify(ep[i].qp, &a,
			IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC), 0);
	}
	ck_assert_int_eq(post_recv_ep(&ep[1], 64), 0);
	rocemu_world_watch(w, watch, &seen);
	struct ibv_sge sge = { (uint64_t)(uintptr_t)ep[0].buf, 64,
			       rocemu_mr_lkey(ep[0].mr) };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	ck_assert_int_eq(rocemu_post_send(ep[0].qp, &wr, &bad), 0);
	take_one(w, &ep[1]);
	take_one(w, &ep[0]);
	rocemu_world_watch(w, NULL, NULL);
	ck_assert_int_eq(seen.n, 2); /* the SEND and its ACK */
	for (int i = 0; i < 2; i++) {
		const uint8_t *ip = seen.frame[i] + 14;
		ck_assert_uint_eq(ip[0], 0x66);
		ck_assert_uint_eq(ip[1], 0x81);
		ck_assert_uint_eq(ip[2], 0x23);
		ck_assert_uint_eq(ip[3], 0x45);
		/* UDP after the 40-byte IPv6 header: the source port */
		ck_assert_uint_eq(ip[40], 0xe3);
		ck_assert_uint_eq(ip[41], 0x41);
	}
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;
	ck_assert_int_eq(rocemu_qp_query(ep[0].qp, &q, &qi), 0);
	ck_assert_uint_eq(q.ah_attr.grh.flow_label, FL);
	ck_assert_uint_eq(q.ah_attr.grh.traffic_class, TC);
	rocemu_endpoint_free(&ep[0]);
	rocemu_endpoint_free(&ep[1]);
	rocemu_world_free(w);
}
END_TEST

/* What a UDP socket reports of a datagram's TOS (or traffic class) comes
 * back in the frame parsed from it, as a frame's own header has it. */
START_TEST(test_datagram_carries_tos)
{
	static uint8_t b[ROCE_FRAME_MAX];
	static const uint8_t payload[16] = { 1, 2, 3 };
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	uint64_t rng = 28;
	struct roce_frame f, got;
	struct roce_frame_udp u;
	const char *why = "";

	for (unsigned v = 4; v <= 6; v += 2) {
		t_make_frame(&f, v, 0x04 /* RC SEND Only */, payload, 16, &rng);
		f.tos = TC;
		int n = roce_frame_build(&f, b, sizeof(b));
		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(roce_frame_find_udp(b, (size_t)n, &u), 0);
		ck_assert_uint_eq(u.tos, TC);
		struct roce_datagram_addr a = { .sport = u.sport, .tos = u.tos };
		memcpy(a.src_gid, u.src_gid, 16);
		memcpy(a.dst_gid, u.dst_gid, 16);
		roce_datagram_parse(&a, NULL, b + roce_frame_udp_payload_off(&u),
				    u.payload_len, hdr, &got, &why);
		ck_assert_uint_eq(got.tos, TC);
		/* the header written: IPv4's second byte, or IPv6's 4 bits in */
		if (v == 4)
			ck_assert_uint_eq(hdr[1], TC);
		else
			ck_assert_uint_eq((hdr[0] & 0xf) << 4 | hdr[1] >> 4, TC);
	}
}
END_TEST

Suite *stamp_suite(void)
{
	Suite *s = suite_create("stamp");
	TCase *tc = tcase_create("stamp");

	tcase_add_test(tc, test_completion_ts_is_virtual_clock);
	tcase_add_test(tc, test_ud_ah_flow_label_tclass_ipv6);
	tcase_add_test(tc, test_ud_ah_tclass_ipv4);
	tcase_add_test(tc, test_rc_ah_attr_flow_label_tclass);
	tcase_add_test(tc, test_datagram_carries_tos);
	suite_add_tcase(s, tc);
	return s;
}
