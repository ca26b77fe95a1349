/* SPDX-License-Identifier: MIT */
/* Explain mode: each NAK, drop, error completion and refused verb says why, with its rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"

/* Every why event heard, as "text [rule]" lines, and the trace's. */
struct heard {
	char *text;
	size_t len;
	FILE *f;
	unsigned trace_whys;	/* why events the event function saw */
	unsigned trace_qpn_set;	/* of them, those naming a QP */
};

static void on_why(void *arg, const struct rocemu_event *ev)
{
	struct heard *h = arg;

	fprintf(h->f, "%s [%s]\n", ev->text, ev->rule);
	fflush(h->f);
}

static void on_event(void *arg, const struct rocemu_event *ev)
{
	struct heard *h = arg;

	if (ev->kind != ROCEMU_EV_WHY)
		return;
	h->trace_whys++;
	h->trace_qpn_set += ev->qpn != 0;
}

static void listen_whys(struct pair *p, struct heard *h)
{
	memset(h, 0, sizeof(*h));
	h->f = open_memstream(&h->text, &h->len);
	ck_assert_ptr_nonnull(h->f);
	rocemu_world_explain(p->w, on_why, h);
}

static void heard_end(struct pair *p, struct heard *h)
{
	rocemu_world_explain(p->w, NULL, NULL);
	rocemu_world_events(p->w, NULL, NULL);
	fclose(h->f);
	free(h->text);
}

/* Asserts that a line heard is exactly want (text and rule). */
static void assert_heard(struct heard *h, const char *want)
{
	fflush(h->f);
	const char *at = h->text ? strstr(h->text, want) : NULL;
	ck_assert_msg(at && (at == h->text || at[-1] == '\n') &&
			      at[strlen(want)] == '\n',
		      "wanted the line\n  %s\nheard:\n%s", want,
		      h->text ? h->text : "(nothing)");
}

static uint32_t qpn(struct side *s)
{
	return rocemu_qp_num(s->qp);
}

START_TEST(test_wrong_rkey)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 0x10 };
	struct heard h;
	char want[512];

	pair_up(&p, &o);
	listen_whys(&p, &h);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr) ^ 0x100;
	/* b's device made one PD: the first is number 1 */
	ck_assert_uint_eq(rocemu_pd_handle(p.b.pd), 1);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, addr_of(&p.b, 0), rkey, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_REM_ACCESS_ERR);
	snprintf(want, sizeof(want),
		 "NAK remote access (sent to 10.0.0.1 qp 0x%x psn 0x10): "
		 "RC_RDMA_WRITE_ONLY rkey 0x%x matches no MR or memory window "
		 "of PD %u (qp 0x%x's) [IBTA 9.7.5.1, 10.6]", qpn(&p.a), rkey,
		 rocemu_pd_handle(p.b.pd), qpn(&p.b));
	assert_heard(&h, want);
	snprintf(want, sizeof(want),
		 "REM_ACCESS_ERR: qp 0x%x RDMA_WRITE wr_id 1: the responder "
		 "NAKed psn 0x10 with remote access error [IBTA 9.7.5.1, "
		 "11.6.3.1]", qpn(&p.a));
	assert_heard(&h, want);
	ck_assert_uint_eq(rocemu_dev_why_count(p.b.dev,
					       ROCEMU_WHY_NAK_REM_ACCESS), 1);
	ck_assert_uint_eq(rocemu_dev_why_count(p.a.dev, ROCEMU_WHY_CQE_ERROR),
			  1);
	heard_end(&p, &h);
	pair_down(&p);
}
END_TEST

/* An MR over [base, base + 2048) of b's buffer, with access acc. */
static struct rocemu_mr *window_mr(struct pair *p, int acc, uint64_t *base)
{
	struct rocemu_mr *mr = rocemu_mr_reg(p->b.pd, p->b.buf + 4096, 2048,
					     acc);
	ck_assert_ptr_nonnull(mr);
	*base = addr_of(&p->b, 4096);
	return mr;
}

START_TEST(test_range_past_mr)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct heard h;
	char want[512];
	uint64_t base;

	pair_up(&p, &o);
	struct rocemu_mr *mr = window_mr(&p, IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE,
					 &base);
	listen_whys(&p, &h);
	uint64_t va = base + 2048 - 32;
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, va, rocemu_mr_rkey(mr),
		   0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_REM_ACCESS_ERR);
	snprintf(want, sizeof(want),
		 "RC_RDMA_WRITE_ONLY va 0x%llx len 64 ends past MR 0x%x "
		 "[0x%llx, 0x%llx) [IBTA 9.7.5.1, 10.6]",
		 (unsigned long long)va, rocemu_mr_rkey(mr),
		 (unsigned long long)base, (unsigned long long)(base + 2048));
	ck_assert_msg(h.text && strstr(h.text, want), "wanted %s in\n%s", want,
		      h.text);
	heard_end(&p, &h);
	rocemu_mr_dereg(mr);
	pair_down(&p);
}
END_TEST

START_TEST(test_missing_right)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct heard h;
	char want[512];
	uint64_t base;

	pair_up(&p, &o);
	struct rocemu_mr *mr = window_mr(&p, IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_READ,
					 &base);
	listen_whys(&p, &h);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, base,
		   rocemu_mr_rkey(mr), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_REM_ACCESS_ERR);
	snprintf(want, sizeof(want),
		 "RC_RDMA_WRITE_ONLY MR 0x%x lacks IBV_ACCESS_REMOTE_WRITE "
		 "[IBTA 9.7.5.1, 10.6]", rocemu_mr_rkey(mr));
	ck_assert_msg(h.text && strstr(h.text, want), "wanted %s in\n%s", want,
		      h.text);
	heard_end(&p, &h);
	rocemu_mr_dereg(mr);
	pair_down(&p);
}
END_TEST

/* No receive posted: RNR NAKs, then the requester gives up; the printer
 * prints the repeated reason once and counts the rest. */
START_TEST(test_missing_receive)
{
	struct pair p;
	struct pair_opts o = { .exact = true, .timeout = 14, .retry_cnt = 7,
			       .rnr_retry = 2, .min_rnr_timer = 1,
			       .psn_a = 0x20 };
	struct heard h;
	char want[512], *out = NULL;
	size_t outlen = 0;
	struct rocemu_why_printer pr = { .f = open_memstream(&out, &outlen) };

	pair_up(&p, &o);
	listen_whys(&p, &h);
	rocemu_world_events(p.w, rocemu_why_print, &pr);
	post_send1(&p.a, IBV_WR_SEND, 7, 0, 10, 0, 0, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_RNR_RETRY_EXC_ERR);
	snprintf(want, sizeof(want),
		 "RNR NAK (sent to 10.0.0.1 qp 0x%x psn 0x20): qp 0x%x has no "
		 "receive WQE posted (RQ empty) [IBTA 9.7.5.2.8]", qpn(&p.a),
		 qpn(&p.b));
	assert_heard(&h, want);
	snprintf(want, sizeof(want),
		 "RNR_RETRY_EXC_ERR: qp 0x%x SEND wr_id 7: RNR NAK for psn "
		 "0x20 after 2 RNR retries (rnr_retry 2): the peer posted no "
		 "receive in time [IBTA 9.7.6.1.4]", qpn(&p.a));
	assert_heard(&h, want);
	/* the first try and two retries: three RNR NAKs, one line */
	rocemu_world_events(p.w, NULL, NULL);
	rocemu_why_printer_end(&pr);
	fclose(pr.f);
	snprintf(want, sizeof(want),
		 "rocemu: why: RNR NAK (sent to 10.0.0.1 qp 0x%x psn 0x20): "
		 "qp 0x%x has no receive WQE posted (RQ empty) [IBTA "
		 "9.7.5.2.8]\nrocemu: why: (the same 2 more times)\n",
		 qpn(&p.a), qpn(&p.b));
	ck_assert_msg(strstr(out, want), "wanted\n%s\nin\n%s", want, out);
	free(out);
	heard_end(&p, &h);
	pair_down(&p);
}
END_TEST

static void to_reset(struct side *s)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE), 0);
}

START_TEST(test_bad_psn)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct heard h;
	char want[512];
	uint8_t ga[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	uint8_t gb[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };

	pair_up(&p, &o);
	to_reset(&p.a);
	to_reset(&p.b);
	/* a sends from 0x9 while b expects 0x5 */
	ck_assert_int_eq(qp_connect(p.a.qp, qpn(&p.b), gb, 0x9, 0, &o), 0);
	ck_assert_int_eq(qp_connect(p.b.qp, qpn(&p.a), ga, 0, 0x5, &o), 0);
	listen_whys(&p, &h);
	post_recv1(&p.b, 1, 0, 64);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 8, 0, 0, 0);
	rocemu_world_advance(p.w, 100000);
	snprintf(want, sizeof(want),
		 "NAK PSN sequence error (sent to 10.0.0.1 qp 0x%x psn 0x5): "
		 "expected psn 0x5, got 0x9 (a packet before it was lost or "
		 "never sent) [IBTA 9.7.5.1.1]", qpn(&p.a));
	assert_heard(&h, want);
	heard_end(&p, &h);
	pair_down(&p);
}
END_TEST

START_TEST(test_packet_to_qp_in_init)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 0x30 };
	struct heard h;
	char want[512];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	pair_up(&p, &o);
	to_reset(&p.b);
	ck_assert_int_eq(rocemu_qp_modify(p.b.qp, &a,
					  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT |
						  IBV_QP_ACCESS_FLAGS),
			 0);
	listen_whys(&p, &h);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 8, 0, 0, 0);
	rocemu_world_advance(p.w, 100000);
	snprintf(want, sizeof(want),
		 "drop: qp 0x%x is in INIT; packets are taken only from RTR "
		 "on (RC_SEND_ONLY psn 0x30 from 10.0.0.1) [IBTA 10.3.1, "
		 "C9-54]", qpn(&p.b));
	assert_heard(&h, want);
	heard_end(&p, &h);
	pair_down(&p);
}
END_TEST

START_TEST(test_unknown_qp)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 0x40 };
	struct heard h;
	char want[512];
	uint8_t gb[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 };

	pair_up(&p, &o);
	to_reset(&p.a);
	/* a now sends to QP 0x77, which b does not have */
	ck_assert_int_eq(qp_connect(p.a.qp, 0x77, gb, 0x40, 0, &o), 0);
	listen_whys(&p, &h);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 8, 0, 0, 0);
	rocemu_world_advance(p.w, 100000);
	snprintf(want, sizeof(want),
		 "drop: unknown QP 0x77 (no QP of that number on this device) "
		 "(RC_SEND_ONLY psn 0x40 from 10.0.0.1) [IBTA ch. 9 (header "
		 "validation)]");
	assert_heard(&h, want);
	heard_end(&p, &h);
	pair_down(&p);
}
END_TEST

START_TEST(test_retry_exceeded)
{
	struct pair p;
	struct pair_opts o = { .exact = true, .timeout = 10, .retry_cnt = 3,
			       .rnr_retry = 7, .min_rnr_timer = 1,
			       .psn_a = 0x50 };
	struct rocemu_faults all_lost = { .drop = 1.0 };
	struct heard h;
	char want[512];

	pair_up(&p, &o);
	listen_whys(&p, &h);
	rocemu_world_set_faults(p.w, &all_lost);
	post_send1(&p.a, IBV_WR_SEND, 4, 0, 10, 0, 0, 0);
	post_send1(&p.a, IBV_WR_SEND, 5, 0, 8, 0, 0, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_RETRY_EXC_ERR);
	snprintf(want, sizeof(want),
		 "RETRY_EXC_ERR: qp 0x%x SEND wr_id 4: 3 retries of psn 0x50 "
		 "unanswered (retry_cnt 3): no ACK for it came before the timer, "
		 "timeout 10 [IBTA 9.7.6.1.3]", qpn(&p.a));
	assert_heard(&h, want);
	snprintf(want, sizeof(want),
		 "WR_FLUSH_ERR: qp 0x%x entered ERR (after a send WQE "
		 "completed in error, the reason before): 1 send and 0 "
		 "receive WQEs flushed [IBTA 10.3.1, 11.4.2.1]", qpn(&p.a));
	assert_heard(&h, want);
	heard_end(&p, &h);
	pair_down(&p);
}
END_TEST

/* A SEND numbered behind what the responder expects (told 0x105, sent
 * from 0x100): to the responder a repeat, acknowledged again and not
 * delivered; that ACK answers nothing the requester has outstanding and
 * is dropped there; each side says so, and the SEND ends in retries. */
START_TEST(test_duplicate_and_stray_ack)
{
	static const uint8_t gid_a[16] = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 1};
	struct pair p;
	struct pair_opts o = { .exact = true, .timeout = 10, .retry_cnt = 1,
			       .rnr_retry = 7, .min_rnr_timer = 1,
			       .psn_a = 0x100, .psn_b = 0x200 };
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct heard h;
	char want[512];

	pair_up(&p, &o);
	ck_assert_int_eq(rocemu_qp_modify(p.b.qp, &reset, IBV_QP_STATE), 0);
	ck_assert_int_eq(qp_connect(p.b.qp, qpn(&p.a), gid_a, 0x200, 0x105, &o),
			 0);
	listen_whys(&p, &h);
	ck_assert_int_eq(post_recv1(&p.b, 9, 0, 64), 0);
	post_send1(&p.a, IBV_WR_SEND, 4, 0, 10, 0, 0, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_RETRY_EXC_ERR);
	assert_heard(&h, "duplicate: RC_SEND_ONLY psn 0x100 is behind the "
			 "expected psn 0x105, a repeat of a packet taken "
			 "before: acknowledged again (psn 0x104), its payload "
			 "not delivered [IBTA 9.7.5.1.1]");
	snprintf(want, sizeof(want),
		 "drop: RC_ACK psn 0x104 answers nothing outstanding (qp 0x%x "
		 "waits for psn 0x100 to 0x100): ignored [IBTA 9.7.6.1.1]",
		 qpn(&p.a));
	assert_heard(&h, want);
	ck_assert_int_eq(cq_count(&p, &p.b), 0); /* nothing delivered */
	heard_end(&p, &h);
	pair_down(&p);
}
END_TEST

/* A side's RC QP replaced by a UD one in RTS with Q_Key qkey. */
static void ud_up(struct side *s, uint32_t qkey)
{
	struct ibv_qp_init_attr init = {
		.send_cq = (void *)s->cq, .recv_cq = (void *)s->cq,
		.qp_type = IBV_QPT_UD, .cap = { 8, 8, 1, 1, 0 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	ck_assert_int_eq(rocemu_qp_free(s->qp), 0);
	ck_assert_ptr_nonnull(s->qp = rocemu_qp_new(s->pd, &init));
	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE |
					  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE |
					  IBV_QP_SQ_PSN), 0);
}

/* UD: a datagram with another Q_Key, and one with no receive posted. */
START_TEST(test_ud_drops)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct heard h;
	char want[512];
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh.dgid.raw = { [10] = 0xff, [11] = 0xff,
						    10, 0, 0, 2 } };

	pair_up(&p, &o);
	ud_up(&p.a, 0x1111);
	ud_up(&p.b, 0x2222);
	struct rocemu_ah *ah = rocemu_ah_new(p.a.pd, &aa);
	ck_assert_ptr_nonnull(ah);
	listen_whys(&p, &h);
	struct ibv_sge sge = { addr_of(&p.a, 0), 8, rocemu_mr_lkey(p.a.mr) };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	wr.wr.ud.ah = (void *)ah;
	wr.wr.ud.remote_qpn = qpn(&p.b);
	wr.wr.ud.remote_qkey = 0x3333;
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	rocemu_world_advance(p.w, 100000);
	snprintf(want, sizeof(want),
		 "drop: UD qp 0x%x has Q_Key 0x2222; the datagram from qp 0x%x "
		 "carries 0x3333 [IBTA C9-40]", qpn(&p.b), qpn(&p.a));
	assert_heard(&h, want);
	wr.wr.ud.remote_qkey = 0x2222;
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	rocemu_world_advance(p.w, 100000);
	snprintf(want, sizeof(want),
		 "drop: UD qp 0x%x has no receive WQE posted (RQ empty): the "
		 "datagram from qp 0x%x is lost [IBTA 10.2.4, 9.8]", qpn(&p.b),
		 qpn(&p.a));
	assert_heard(&h, want);
	heard_end(&p, &h);
	rocemu_ah_free(ah);
	pair_down(&p);
}
END_TEST

/* A fresh QP of b's PD in INIT, towards a. */
static struct rocemu_qp *qp_in_init(struct pair *p)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = (void *)p->b.cq, .recv_cq = (void *)p->b.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rocemu_qp *qp = rocemu_qp_new(p->b.pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(rocemu_qp_modify(qp, &a,
					  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT |
						  IBV_QP_ACCESS_FLAGS),
			 0);
	return qp;
}

static const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

/* Refused verbs: RTR without a GRH, RTR without the destination QP,
 * INIT to RTS, post_send in RTR, post_recv in RESET, reg_mr with remote
 * write alone, create_qp past the device's max_qp_wr. */
START_TEST(test_refused_verbs)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct heard h;
	char want[512];

	pair_up(&p, &o);
	listen_whys(&p, &h);
	struct rocemu_qp *qp = qp_in_init(&p);
	uint32_t n = rocemu_qp_num(qp);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR,
				 .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = qpn(&p.a),
				 .max_dest_rd_atomic = 1,
				 .ah_attr = { .port_num = 1 } };
	ck_assert_int_eq(rocemu_qp_modify(qp, &a, rtr_mask), -EINVAL);
	snprintf(want, sizeof(want),
		 "modify_qp qp 0x%x INIT->RTR: RoCE needs ah_attr.is_global=1 "
		 "and a GID index (every RoCE packet carries a GRH or IP "
		 "header) [IBTA A16, A17 (RoCE)]", n);
	assert_heard(&h, want);
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 1;
	ck_assert_int_eq(rocemu_qp_modify(qp, &a, rtr_mask & ~IBV_QP_DEST_QPN),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "modify_qp qp 0x%x INIT->RTR: missing IBV_QP_DEST_QPN "
		 "(required for RTR) [IBTA 10.3.1, 11.2.4.2]", n);
	assert_heard(&h, want);
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };
	ck_assert_int_eq(rocemu_qp_modify(qp, &rts, IBV_QP_STATE), -EINVAL);
	snprintf(want, sizeof(want),
		 "modify_qp qp 0x%x: INIT->RTS is not a transition (a "
		 "connected QP goes RESET->INIT->RTR->RTS) [IBTA 10.3.1]", n);
	assert_heard(&h, want);
	ck_assert_int_eq(rocemu_qp_modify(qp, &a, rtr_mask), 0);
	struct ibv_sge sge = { .addr = addr_of(&p.b, 0), .length = 8,
			       .lkey = rocemu_mr_lkey(p.b.mr) };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	ck_assert_int_eq(rocemu_post_send(qp, &wr, &bad), -EINVAL);
	snprintf(want, sizeof(want),
		 "post_send: qp 0x%x is in RTR; sending needs RTS "
		 "[IBTA 10.3.1]", n);
	assert_heard(&h, want);
	struct ibv_qp_attr rst = { .qp_state = IBV_QPS_RESET };
	ck_assert_int_eq(rocemu_qp_modify(qp, &rst, IBV_QP_STATE), 0);
	struct ibv_recv_wr rwr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1 },
			   *rbad;
	ck_assert_int_eq(rocemu_post_recv(qp, &rwr, &rbad), -EINVAL);
	snprintf(want, sizeof(want),
		 "post_recv: qp 0x%x is in RESET; receives are taken from INIT "
		 "on [IBTA 10.3.1]", n);
	assert_heard(&h, want);
	void *mem = p.b.buf + 100;
	ck_assert_ptr_null(rocemu_mr_reg(p.b.pd, mem, 64,
					 IBV_ACCESS_REMOTE_WRITE));
	snprintf(want, sizeof(want),
		 "reg_mr addr %p len 64 access 0x%x: IBV_ACCESS_REMOTE_WRITE "
		 "or _REMOTE_ATOMIC needs IBV_ACCESS_LOCAL_WRITE too "
		 "[ibv_reg_mr(3)]", mem, IBV_ACCESS_REMOTE_WRITE);
	assert_heard(&h, want);
	/* a send queue past what ibv_query_device says the device takes */
	struct ibv_device_attr da;
	rocemu_dev_attr(p.b.dev, &da);
	struct ibv_qp_init_attr big = {
		.send_cq = (void *)p.b.cq, .recv_cq = (void *)p.b.cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = (uint32_t)da.max_qp_wr + 1,
			 .max_recv_wr = 1 },
	};
	ck_assert_ptr_null(rocemu_qp_new(p.b.pd, &big));
	snprintf(want, sizeof(want),
		 "create_qp: cap.max_send_wr %d is more than the device's "
		 "max_qp_wr %d (ibv_query_device) [IBTA 11.2.5.1]",
		 da.max_qp_wr + 1, da.max_qp_wr);
	assert_heard(&h, want);
	ck_assert_uint_eq(rocemu_dev_why_count(p.b.dev, ROCEMU_WHY_VERB), 7);
	heard_end(&p, &h);
	rocemu_qp_free(qp);
	pair_down(&p);
}
END_TEST

/* Explain off: a reason is counted, and no text is made for it; with
 * a trace on, the why events go there all the same. */
START_TEST(test_off_still_traces)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct heard h = { 0 };
	char *out = NULL;
	size_t len = 0;

	pair_up(&p, &o);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, addr_of(&p.b, 0),
		   rocemu_mr_rkey(p.b.mr) ^ 0x100, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_REM_ACCESS_ERR);
	FILE *f = open_memstream(&out, &len);
	rocemu_dev_print_why(p.b.dev, f, "");
	fclose(f);
	ck_assert_msg(strstr(out, "why nak_rem_access 1\n"), "%s", out);
	ck_assert_msg(strstr(out, "why drop 0\n"), "%s", out);
	free(out);
	pair_reconnect(&p, &o);
	rocemu_world_events(p.w, on_event, &h);
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, addr_of(&p.b, 0),
		   rocemu_mr_rkey(p.b.mr) ^ 0x100, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_REM_ACCESS_ERR);
	/* b's NAK and a's error completion at least, each naming its QP */
	ck_assert_uint_ge(h.trace_whys, 2);
	ck_assert_uint_eq(h.trace_whys, h.trace_qpn_set);
	rocemu_world_events(p.w, NULL, NULL);
	pair_down(&p);
}
END_TEST

/* Kept for the counters: the last text of each kind. */
START_TEST(test_keep_for_stats)
{
	struct pair p;
	struct pair_opts o = { .psn_a = 0x60 };
	char *out = NULL, want[512];
	size_t len = 0;

	pair_up(&p, &o);
	rocemu_world_explain_keep(p.w, true);
	uint32_t rkey = rocemu_mr_rkey(p.b.mr) ^ 0x100;
	post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 64, addr_of(&p.b, 0), rkey, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_REM_ACCESS_ERR);
	FILE *f = open_memstream(&out, &len);
	rocemu_dev_print_why(p.b.dev, f, "> ");
	fclose(f);
	snprintf(want, sizeof(want),
		 "> why nak_rem_access 1 last: NAK remote access (sent to "
		 "10.0.0.1 qp 0x%x psn 0x60): RC_RDMA_WRITE_ONLY rkey 0x%x "
		 "matches no MR or memory window of PD %u (qp 0x%x's) [IBTA "
		 "9.7.5.1, 10.6]\n", qpn(&p.a), rkey, rocemu_pd_handle(p.b.pd),
		 qpn(&p.b));
	ck_assert_msg(strstr(out, want), "wanted\n%s\nin\n%s", want, out);
	free(out);
	pair_down(&p);
}
END_TEST

Suite *explain_suite(void)
{
	Suite *s = suite_create("explain");
	TCase *tc = tcase_create("explain");

	tcase_add_test(tc, test_wrong_rkey);
	tcase_add_test(tc, test_range_past_mr);
	tcase_add_test(tc, test_missing_right);
	tcase_add_test(tc, test_missing_receive);
	tcase_add_test(tc, test_bad_psn);
	tcase_add_test(tc, test_packet_to_qp_in_init);
	tcase_add_test(tc, test_unknown_qp);
	tcase_add_test(tc, test_retry_exceeded);
	tcase_add_test(tc, test_duplicate_and_stray_ack);
	tcase_add_test(tc, test_ud_drops);
	tcase_add_test(tc, test_refused_verbs);
	tcase_add_test(tc, test_off_still_traces);
	tcase_add_test(tc, test_keep_for_stats);
	suite_add_tcase(s, tc);
	return s;
}
