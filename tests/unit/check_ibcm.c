/* SPDX-License-Identifier: MIT */
/* QP1 and the CM engine: GSI MADs checked as rxe checks them, then the IBTA's CM state machines on the deterministic wire. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "check_pair.h"
#include "check_suites.h"
#include "rocemu/device.h"
#include "rocemu/ibcm.h"

/* ---- frames to QP1, injected from 10.0.0.1 ----------------------------- */

static struct rocemu_dev *dev_at(struct rocemu_world *w, uint8_t last)
{
	struct rocemu_dev_cfg cfg = { .name = last == 1 ? "devA" : "devB",
				      .mtu = IBV_MTU_4096 };

	cfg.gid[10] = cfg.gid[11] = 0xff;
	cfg.gid[12] = 10;
	cfg.gid[15] = last;
	struct rocemu_dev *d = rocemu_dev_new(w, &cfg);
	ck_assert_ptr_nonnull(d);
	return d;
}

/* A REQ for service 0x1234 as its MAD. */
static void req_mad(uint8_t mad[ROCE_MAD_LEN])
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REQ, .tid = 7 };

	m.req.local_comm_id = 0x1111;
	m.req.service_id = 0x1234;
	m.req.local_qpn = 0x22;
	m.req.pkey = 0xffff;
	m.req.path_mtu = 3;
	m.req.primary.local_gid[10] = m.req.primary.local_gid[11] = 0xff;
	m.req.primary.local_gid[12] = 10;
	m.req.primary.local_gid[15] = 1;
	ck_assert_int_eq(roce_cm_encode(&m, mad), ROCE_MAD_LEN);
}

/* Puts a packet to QP 1 of 10.0.0.2 on the wire: UD SEND Only with the
 * GSI Q_Key unless the caller changes f before building (edit). */
static void inject_gsi(struct rocemu_world *w, const uint8_t *payload,
		       uint32_t len, void (*edit)(struct roce_frame *))
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	uint8_t buf[ROCE_FRAME_MAX];
	struct roce_frame f;

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.eth_src[0] = f.eth_dst[0] = 0x02;
	f.ttl = 64;
	f.sport = 0xc001;
	f.ib.bth.opcode = ROCE_OP_UD_SEND_ONLY;
	f.ib.bth.pkey = 0xffff;
	f.ib.bth.dqpn = ROCE_CM_QPN;
	f.ib.deth.qkey = ROCE_CM_QP1_QKEY;
	f.ib.deth.src_qp = ROCE_CM_QPN;
	f.ib.payload = payload;
	f.ib.payload_len = len;
	f.ib.bth.pad = (uint8_t)roce_pad_len(len);
	if (edit)
		edit(&f);
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(w, buf, (size_t)n);
	rocemu_world_settle(w, 1000000000ull);
}

static void wrong_qkey(struct roce_frame *f)
{
	f->ib.deth.qkey = 0x80010001u;
}

static void with_imm(struct roce_frame *f)
{
	f->ib.bth.opcode = ROCE_OP_UD_SEND_ONLY_IMM;
}

static void rc_send(struct roce_frame *f)
{
	f->ib.bth.opcode = ROCE_OP_RC_SEND_ONLY;
}

/* Explain mode's reasons, one "text [rule]" line each. */
static void gsi_why(void *arg, const struct rocemu_event *ev)
{
	fprintf(arg, "%s [%s]\n", ev->text, ev->rule);
}

/* Each packet to QP1 that is no GSI MAD is dropped and counted as such,
 * not as a packet for an unknown QP, and nothing answers it; explain mode
 * says which rule of QP1's it broke. */
START_TEST(test_gsi_refuses_non_mads)
{
	struct rocemu_world *w = rocemu_world_new(1);
	struct rocemu_dev *a = dev_at(w, 1), *b = dev_at(w, 2);
	uint8_t mad[ROCE_MAD_LEN + 8];
	char *said = NULL;
	size_t said_len = 0;
	FILE *f = open_memstream(&said, &said_len);

	ck_assert_ptr_nonnull(f);
	rocemu_world_explain(w, gsi_why, f);
	req_mad(mad);
	inject_gsi(w, mad, ROCE_MAD_LEN, wrong_qkey);
	inject_gsi(w, mad, ROCE_MAD_LEN, with_imm);
	inject_gsi(w, mad, ROCE_MAD_LEN, rc_send);
	inject_gsi(w, mad, ROCE_MAD_LEN - 4, NULL);	/* truncated MAD */
	inject_gsi(w, mad, ROCE_MAD_LEN + 8, NULL);	/* too long */
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_RX_DROP_GSI), 5);
	rocemu_world_explain(w, NULL, NULL);
	fclose(f);
	static const char *const whys[] = {
	    "drop: UD_SEND_ONLY psn 0x0 to QP1 (the GSI QP) from qp 0x1: "
	    "QP1's Q_Key is 0x80010000 [IBTA ch. 13 (GSI)]\n",
	    "drop: UD_SEND_ONLY_IMM psn 0x0 to QP1 (the GSI QP) from qp 0x1: "
	    "QP1 takes UD SEND Only [IBTA ch. 13 (GSI)]\n",
	    "drop: RC_SEND_ONLY psn 0x0 to QP1 (the GSI QP) from qp 0x0: "
	    "QP1 takes UD SEND Only [IBTA ch. 13 (GSI)]\n",
	    "drop: UD_SEND_ONLY psn 0x0 to QP1 (the GSI QP) from qp 0x1: a "
	    "MAD is 256 bytes [IBTA ch. 13 (GSI)]\n",
	};
	for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
		ck_assert_msg(strstr(said, whys[i]), "wanted %s in\n%s", whys[i],
			      said);
	free(said);
	ck_assert_uint_eq(rocemu_dev_why_count(b, ROCEMU_WHY_DROP), 5);
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_RX_DROP_UNKNOWN_QP), 0);
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_TX_PACKETS), 0);
	ck_assert_uint_eq(rocemu_dev_counter(a, ROCEMU_CNT_RX_PACKETS), 0);
	rocemu_dev_free(a);
	rocemu_dev_free(b);
	rocemu_world_free(w);
}
END_TEST

/* ---- the CM on the deterministic wire ------------------------------------ */

enum { MAXEV = 64, MAXMSG = 128 };
static const uint64_t SID = 0x0000000001060000ull | 7471; /* TCP, port 7471 */
static const uint64_t MS = 1000000ull;

struct evlog {
	struct rocemu_cm_event ev[MAXEV];
	int n;
};

/* What went on the wire: every CM MAD, decoded, and where it went. */
struct wirelog {
	struct roce_cm_msg msg[MAXMSG];
	uint8_t dst_last[MAXMSG];	/* last octet of the destination */
	int n;
};

struct cmt {
	struct pair p;
	struct evlog la, lb;	/* a's ids, b's ids (the listener's too) */
	struct wirelog wl;
	struct rocemu_cm_id *ida, *listener, *idb;
	uint32_t req_timeout_ns;
};

static void record(void *user, const struct rocemu_cm_event *ev)
{
	struct evlog *l = user;

	if (l->n < MAXEV)
		l->ev[l->n++] = *ev;
}

static void watch(void *arg, const uint8_t *frame, size_t len)
{
	struct wirelog *wl = arg;
	struct roce_frame f;
	const char *why;

	if (roce_frame_parse(ROCE_LINK_ETH, frame, len, len, &f, &why) ||
	    f.ib.bth.dqpn != ROCE_CM_QPN || f.ib.payload_len != ROCE_MAD_LEN ||
	    wl->n >= MAXMSG)
		return;
	if (roce_cm_decode(f.ib.payload, ROCE_MAD_LEN, &wl->msg[wl->n]) == 0)
		wl->dst_last[wl->n++] = f.dst_gid[15];
}

/* How many messages of attr went on the wire. */
static int sent(const struct cmt *t, uint16_t attr)
{
	int k = 0;

	for (int i = 0; i < t->wl.n; i++)
		k += t->wl.msg[i].attr_id == attr;
	return k;
}

/* The last message of attr on the wire; fails the test if none. */
static const struct roce_cm_msg *last_sent(const struct cmt *t, uint16_t attr)
{
	for (int i = t->wl.n - 1; i >= 0; i--)
		if (t->wl.msg[i].attr_id == attr)
			return &t->wl.msg[i];
	ck_abort_msg("no %s on the wire", roce_cm_attr_name(attr));
	return NULL;
}

static int count_ev(const struct evlog *l, enum rocemu_cm_event_type type)
{
	int k = 0;

	for (int i = 0; i < l->n; i++)
		k += l->ev[i].type == type;
	return k;
}

static const struct rocemu_cm_event *last_ev(const struct evlog *l)
{
	ck_assert_int_gt(l->n, 0);
	return &l->ev[l->n - 1];
}

static void side_up(struct cmt *t, struct side *s, uint8_t last)
{
	s->dev = dev_at(t->p.w, last);
	s->pd = rocemu_pd_alloc(s->dev);
	s->cq = rocemu_cq_new(s->dev, 256, NULL);
	ck_assert_ptr_nonnull(s->cq);
	s->len = 8192;
	uint8_t *raw = malloc(s->len + 2 * GUARD);
	memset(raw, CANARY, s->len + 2 * GUARD);
	s->buf = raw + GUARD;
	memset(s->buf, 0, s->len);
	s->mr = rocemu_mr_reg(s->pd, s->buf, s->len,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(s->mr);
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)s->cq,
		.recv_cq = (struct ibv_cq *)(void *)s->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	s->qp = rocemu_qp_new(s->pd, &init);
	ck_assert_ptr_nonnull(s->qp);
}

static void side_down(struct side *s)
{
	rocemu_qp_free(s->qp);
	rocemu_mr_dereg(s->mr);
	rocemu_cq_free(s->cq);
	rocemu_pd_free(s->pd);
	rocemu_dev_free(s->dev); /* and its CM, with the ids still in it */
	free(s->buf - GUARD);
}

/* Two devices with an RC QP each in RESET, b listening on SID. */
static void cm_up(struct cmt *t)
{
	memset(t, 0, sizeof(*t));
	t->p.w = rocemu_world_new(42);
	side_up(t, &t->p.a, 1);
	side_up(t, &t->p.b, 2);
	rocemu_world_watch(t->p.w, watch, &t->wl);
	t->ida = rocemu_cm_id_new(t->p.a.dev, record, &t->la);
	t->listener = rocemu_cm_id_new(t->p.b.dev, record, &t->lb);
	ck_assert_ptr_nonnull(t->ida);
	ck_assert_ptr_nonnull(t->listener);
	ck_assert_int_eq(rocemu_cm_listen(t->listener, SID, ~0ull), 0);
}

static void cm_down(struct cmt *t)
{
	rocemu_world_watch(t->p.w, NULL, NULL);
	side_down(&t->p.a);
	side_down(&t->p.b);
	rocemu_world_free(t->p.w);
}

/* Delivers what is on the wire; timers that are not due stay armed. */
static void step(struct cmt *t)
{
	rocemu_world_settle(t->p.w, MS);
}

/* Drops (or duplicates) every frame sent while the caller's call runs. */
static void faults(struct cmt *t, double drop, double dup)
{
	struct rocemu_faults f = { .drop = drop, .duplicate = dup };

	rocemu_world_set_faults(t->p.w, &f);
}

/* Short timers: response timeout 10 and life time 10 (4 ms each), 3
 * retries: a REQ is sent again every 12 ms. */
static struct rocemu_cm_req_param req_param(const struct cmt *t)
{
	struct rocemu_cm_req_param p = {
		.service_id = SID, .qp_type = IBV_QPT_RC,
		.qpn = rocemu_qp_num(t->p.a.qp), .starting_psn = 0x1234,
		.responder_resources = 4, .initiator_depth = 4,
		.retry_count = 7, .rnr_retry_count = 7,
		.packet_life_time = 10, .cm_response_timeout = 10,
		.max_cm_retries = 3,
	};

	memcpy(p.dgid, rocemu_dev_gid(t->p.b.dev), 16);
	return p;
}

static const uint64_t RETRY_NS = 3 * (4096ull << 10);

static void modify(struct rocemu_cm_id *id, struct rocemu_qp *qp,
		   enum ibv_qp_state s)
{
	struct ibv_qp_attr attr = { .qp_state = s };
	int mask;

	ck_assert_int_eq(rocemu_cm_init_qp_attr(id, &attr, &mask), 0);
	ck_assert_int_eq(rocemu_qp_modify(qp, &attr, mask), 0);
}

static void send_req(struct cmt *t)
{
	struct rocemu_cm_req_param p = req_param(t);

	ck_assert_int_eq(rocemu_cm_send_req(t->ida, &p), 0);
	modify(t->ida, t->p.a.qp, IBV_QPS_INIT);
}

/* b's side after REQ_RCVD: its id, QP to RTR, the REP. */
static void take_req(struct cmt *t)
{
	const struct rocemu_cm_event *ev = last_ev(&t->lb);

	ck_assert_int_eq(ev->type, ROCEMU_CM_REQ_RCVD);
	ck_assert_ptr_eq(ev->listen_id, t->listener);
	t->idb = ev->id;
	modify(t->idb, t->p.b.qp, IBV_QPS_INIT);
}

static void send_rep(struct cmt *t)
{
	struct rocemu_cm_rep_param r = {
		.qpn = rocemu_qp_num(t->p.b.qp), .starting_psn = 0x5678,
		.responder_resources = 4, .initiator_depth = 4,
		.rnr_retry_count = 7,
	};

	ck_assert_int_eq(rocemu_cm_send_rep(t->idb, &r), 0);
	/* RTR once the REP names the PSN it receives with */
	modify(t->idb, t->p.b.qp, IBV_QPS_RTR);
}

/* a's side after REP_RCVD: QP to RTS. */
static void take_rep(struct cmt *t)
{
	ck_assert_int_eq(last_ev(&t->la)->type, ROCEMU_CM_REP_RCVD);
	modify(t->ida, t->p.a.qp, IBV_QPS_RTR);
	modify(t->ida, t->p.a.qp, IBV_QPS_RTS);
}

/* The whole handshake, nothing lost, and b's QP in RTS. */
static void cm_connect(struct cmt *t)
{
	send_req(t);
	step(t);
	take_req(t);
	ck_assert_str_eq(rocemu_cm_id_state(t->idb), "req_rcvd");
	ck_assert_str_eq(rocemu_cm_id_state(t->ida), "req_sent");
	send_rep(t);
	step(t);
	ck_assert_str_eq(rocemu_cm_id_state(t->idb), "rep_sent");
	take_rep(t);
	ck_assert_str_eq(rocemu_cm_id_state(t->ida), "rep_rcvd");
	ck_assert_int_eq(rocemu_cm_send_rtu(t->ida, NULL, 0), 0);
	step(t);
	ck_assert_int_eq(last_ev(&t->lb)->type, ROCEMU_CM_RTU_RCVD);
	modify(t->idb, t->p.b.qp, IBV_QPS_RTS);
	ck_assert_str_eq(rocemu_cm_id_state(t->ida), "established");
	ck_assert_str_eq(rocemu_cm_id_state(t->idb), "established");
}

/* The passive side's QP, moved before its REP as rdma_accept does, takes
 * the REQ's counts turned round (Linux's cm_req_handler): it answers the
 * READs the peer will send (REMOTE_READ at INIT, max_dest_rd_atomic =
 * the REQ's initiator depth at RTR), or the first READ is NAKed. */
START_TEST(test_req_rcvd_qp_attr_reads)
{
	struct cmt t;
	struct rocemu_cm_req_param p;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT };
	int mask;

	cm_up(&t);
	p = req_param(&t);
	p.responder_resources = 3;
	p.initiator_depth = 5;
	ck_assert_int_eq(rocemu_cm_send_req(t.ida, &p), 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_REQ_RCVD);
	t.idb = last_ev(&t.lb)->id;
	ck_assert_int_eq(rocemu_cm_init_qp_attr(t.idb, &attr, &mask), 0);
	ck_assert(mask & IBV_QP_ACCESS_FLAGS);
	ck_assert(attr.qp_access_flags & IBV_ACCESS_REMOTE_READ);
	attr.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(rocemu_cm_init_qp_attr(t.idb, &attr, &mask), 0);
	ck_assert(mask & IBV_QP_MAX_DEST_RD_ATOMIC);
	ck_assert_uint_eq(attr.max_dest_rd_atomic, 5);
	cm_down(&t);
}
END_TEST

/* A REQ asking more READs than the device holds (255 in its 8-bit
 * field): the passive QP still reaches RTR, with the device's most. */
START_TEST(test_req_rcvd_reads_capped)
{
	struct cmt t;
	struct rocemu_cm_req_param p;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR };
	int mask;

	cm_up(&t);
	p = req_param(&t);
	p.initiator_depth = 255;
	ck_assert_int_eq(rocemu_cm_send_req(t.ida, &p), 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_REQ_RCVD);
	t.idb = last_ev(&t.lb)->id;
	modify(t.idb, t.p.b.qp, IBV_QPS_INIT);
	ck_assert_int_eq(rocemu_cm_init_qp_attr(t.idb, &attr, &mask), 0);
	ck_assert_int_eq(rocemu_qp_modify(t.p.b.qp, &attr, mask), 0);
	ck_assert_uint_gt(attr.max_dest_rd_atomic, 0);
	cm_down(&t);
}
END_TEST

/* a WRITEs 64 bytes into b and SENDs 32; both arrive. */
static void move_data(struct cmt *t)
{
	struct side *a = &t->p.a, *b = &t->p.b;

	for (int i = 0; i < 96; i++)
		a->buf[i] = (uint8_t)(i + 1);
	ck_assert_int_eq(post_recv1(b, 9, 1024, 64), 0);
	ck_assert_int_eq(post_send1(a, IBV_WR_RDMA_WRITE, 1, 0, 64,
				    addr_of(b, 0), rocemu_mr_rkey(b->mr), 0), 0);
	ck_assert_int_eq(post_send1(a, IBV_WR_SEND, 2, 64, 32, 0, 0, 0), 0);
	struct ibv_wc wc = poll1(&t->p, b);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.byte_len, 32);
	ck_assert_int_eq(cq_count(&t->p, a), 2);
	ck_assert_mem_eq(b->buf, a->buf, 64);
	ck_assert_mem_eq(b->buf + 1024, a->buf + 64, 32);
}

/* REQ, REP, RTU; QPs moved with the CM's attributes; data moves; then
 * DREQ, DREP and both ends leave timewait. */
START_TEST(test_connect_data_disconnect)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	/* The wire carried one of each, the answers echoing the TIDs. */
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REQ), 1);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REP), 1);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_RTU), 1);
	const struct roce_cm_msg *req = last_sent(&t, ROCE_CM_ATTR_REQ);
	const struct roce_cm_msg *rep = last_sent(&t, ROCE_CM_ATTR_REP);
	ck_assert_uint_eq(rep->tid, req->tid);
	ck_assert_uint_eq(rep->rep.remote_comm_id, req->req.local_comm_id);
	ck_assert_uint_ne(last_sent(&t, ROCE_CM_ATTR_RTU)->tid, req->tid);
	ck_assert_uint_eq(req->req.path_mtu, IBV_MTU_4096);
	ck_assert_mem_eq(req->req.primary.remote_gid,
			 rocemu_dev_gid(t.p.b.dev), 16);
	/* The QPs got each other's numbers and PSNs. A REQ's or REP's
	 * starting PSN is the one its sender receives with and its peer
	 * sends with, as Linux's ib_cm reads it (ib_send_cm_req and
	 * ib_send_cm_rep set rq_psn from their own message): the REQ said
	 * 0x1234, the REP 0x5678. */
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	rocemu_qp_query(t.p.b.qp, &qa, &qi);
	ck_assert_uint_eq(qa.dest_qp_num, rocemu_qp_num(t.p.a.qp));
	ck_assert_uint_eq(qa.rq_psn, 0x5678);
	ck_assert_uint_eq(qa.sq_psn, 0x1234);
	rocemu_qp_query(t.p.a.qp, &qa, &qi);
	ck_assert_uint_eq(qa.rq_psn, 0x1234);
	ck_assert_uint_eq(qa.sq_psn, 0x5678);
	move_data(&t);

	ck_assert_int_eq(rocemu_cm_send_dreq(t.ida, "bye", 3), 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_DREQ_RCVD);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_DREQ)->dreq.remote_qpn,
			  rocemu_qp_num(t.p.b.qp));
	ck_assert_int_eq(rocemu_cm_send_drep(t.idb, NULL, 0), 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_DREP_RCVD);
	ck_assert_str_eq(rocemu_cm_id_state(t.ida), "timewait");
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "timewait");
	rocemu_world_settle(t.p.w, 10000 * MS);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_TIMEWAIT_EXIT);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_TIMEWAIT_EXIT);
	ck_assert_str_eq(rocemu_cm_id_state(t.ida), "idle");
	ck_assert_uint_eq(rocemu_dev_counter(t.p.a.dev, ROCEMU_CNT_CM_TX_RETRIES), 0);
	cm_down(&t);
}
END_TEST

/* A lost REQ is sent again after the timeout, with the same TID. */
START_TEST(test_lost_req)
{
	struct cmt t;

	cm_up(&t);
	faults(&t, 1, 0);
	send_req(&t);
	faults(&t, 0, 0);
	step(&t);
	ck_assert_int_eq(t.lb.n, 0);
	rocemu_world_advance(t.p.w, RETRY_NS);
	step(&t);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REQ), 2);
	ck_assert_uint_eq(t.wl.msg[0].tid, t.wl.msg[1].tid);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_REQ_RCVD), 1);
	ck_assert_uint_eq(rocemu_dev_counter(t.p.a.dev, ROCEMU_CNT_CM_TX_RETRIES), 1);
	cm_down(&t);
}
END_TEST

/* A lost REP: the REQ's retry is a duplicate, answered with the REP
 * again (not a second REQ_RCVD); the connection completes. */
START_TEST(test_lost_rep)
{
	struct cmt t;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	faults(&t, 1, 0);
	send_rep(&t);
	faults(&t, 0, 0);
	rocemu_world_advance(t.p.w, RETRY_NS);
	step(&t);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_REQ_RCVD), 1);
	ck_assert_int_ge(sent(&t, ROCE_CM_ATTR_REP), 2);
	take_rep(&t);
	ck_assert_int_eq(rocemu_cm_send_rtu(t.ida, NULL, 0), 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_RTU_RCVD);
	ck_assert_uint_ge(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_CM_RX_DUPLICATES), 1);
	cm_down(&t);
}
END_TEST

/* A lost RTU: the REP's retry reaches an established active side, which
 * sends its RTU again. */
START_TEST(test_lost_rtu)
{
	struct cmt t;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	send_rep(&t);
	step(&t);
	take_rep(&t);
	faults(&t, 1, 0);
	ck_assert_int_eq(rocemu_cm_send_rtu(t.ida, NULL, 0), 0);
	faults(&t, 0, 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_REQ_RCVD);
	rocemu_world_advance(t.p.w, RETRY_NS);
	step(&t);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_RTU), 2);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_RTU_RCVD);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "established");
	cm_down(&t);
}
END_TEST

/* A lost RTU and then data: the data reaches b's QP in RTR, which raises
 * IBV_EVENT_COMM_EST and establishes b's id (USER_ESTABLISHED); the REP
 * is not sent again. */
START_TEST(test_lost_rtu_then_data)
{
	struct cmt t;
	struct ibv_async_event ae;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	send_rep(&t);
	step(&t);
	take_rep(&t);
	faults(&t, 1, 0);
	ck_assert_int_eq(rocemu_cm_send_rtu(t.ida, NULL, 0), 0);
	faults(&t, 0, 0);
	ck_assert_int_eq(post_recv1(&t.p.b, 9, 0, 64), 0);
	ck_assert_int_eq(post_send1(&t.p.a, IBV_WR_SEND, 1, 0, 16, 0, 0, 0), 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_USER_ESTABLISHED);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "established");
	ck_assert_int_eq(rocemu_dev_get_async_event(t.p.b.dev, &ae), 0);
	ck_assert_int_eq(ae.event_type, IBV_EVENT_COMM_EST);
	ck_assert_ptr_eq(ae.element.qp, (struct ibv_qp *)(void *)t.p.b.qp);
	ck_assert_int_eq(rocemu_dev_get_async_event(t.p.b.dev, &ae), -EAGAIN);
	rocemu_world_advance(t.p.w, 10 * RETRY_NS);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REP), 1);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_USER_ESTABLISHED), 1);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_RTU_RCVD), 0);
	cm_down(&t);
}
END_TEST

/* A lost DREQ is sent again; a lost DREP is answered again when the
 * DREQ's retry comes. */
START_TEST(test_lost_dreq_and_drep)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	faults(&t, 1, 0);
	ck_assert_int_eq(rocemu_cm_send_dreq(t.ida, NULL, 0), 0);
	faults(&t, 0, 0);
	step(&t);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_DREQ_RCVD), 0);
	rocemu_world_advance(t.p.w, RETRY_NS);
	step(&t);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREQ), 2);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_DREQ_RCVD);
	faults(&t, 1, 0);
	ck_assert_int_eq(rocemu_cm_send_drep(t.idb, NULL, 0), 0);
	faults(&t, 0, 0);
	step(&t);
	ck_assert_int_eq(count_ev(&t.la, ROCEMU_CM_DREP_RCVD), 0);
	rocemu_world_advance(t.p.w, RETRY_NS);
	step(&t);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREP), 2);
	ck_assert_int_eq(count_ev(&t.la, ROCEMU_CM_DREP_RCVD), 1);
	ck_assert_int_eq(count_ev(&t.la, ROCEMU_CM_DREQ_ERROR), 0);
	rocemu_world_settle(t.p.w, 10000 * MS);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_TIMEWAIT_EXIT);
	cm_down(&t);
}
END_TEST

/* Nobody at the address: REQ_ERROR once the REQ and its 3 retries have
 * each waited their timeout, not before. */
START_TEST(test_silent_peer)
{
	struct cmt t;
	struct rocemu_cm_req_param p;

	cm_up(&t);
	p = req_param(&t);
	p.dgid[15] = 3;
	ck_assert_int_eq(rocemu_cm_send_req(t.ida, &p), 0);
	rocemu_world_advance(t.p.w, 4 * RETRY_NS - MS);
	ck_assert_int_eq(t.la.n, 0);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REQ), 4);
	rocemu_world_advance(t.p.w, 2 * MS);
	ck_assert_int_eq(t.la.n, 1);
	ck_assert_int_eq(t.la.ev[0].type, ROCEMU_CM_REQ_ERROR);
	ck_assert_ptr_eq(t.la.ev[0].id, t.ida);
	ck_assert_str_eq(rocemu_cm_id_state(t.ida), "idle");
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REQ), 4);
	cm_down(&t);
}
END_TEST
/* A REQ for a service nobody listens on: REJ 8, echoing the REQ's TID
 * and naming its comm ID; REJ_RCVD with status 8. */
START_TEST(test_no_listener_rej8)
{
	struct cmt t;
	struct rocemu_cm_req_param p;

	cm_up(&t);
	p = req_param(&t);
	p.service_id = SID + 1;
	ck_assert_int_eq(rocemu_cm_send_req(t.ida, &p), 0);
	step(&t);
	const struct roce_cm_msg *req = last_sent(&t, ROCE_CM_ATTR_REQ);
	const struct roce_cm_msg *rej = last_sent(&t, ROCE_CM_ATTR_REJ);
	ck_assert_uint_eq(rej->rej.reason, ROCE_CM_REJ_INVALID_SERVICE_ID);
	ck_assert_uint_eq(rej->rej.msg_rejected, ROCE_CM_MSG_REQ);
	ck_assert_uint_eq(rej->tid, req->tid);
	ck_assert_uint_eq(rej->rej.remote_comm_id, req->req.local_comm_id);
	ck_assert_int_eq(t.la.n, 1);
	ck_assert_int_eq(t.la.ev[0].type, ROCEMU_CM_REJ_RCVD);
	ck_assert_int_eq(t.la.ev[0].status, ROCE_CM_REJ_INVALID_SERVICE_ID);
	ck_assert_int_eq(t.lb.n, 0);
	ck_assert_str_eq(rocemu_cm_id_state(t.ida), "idle");
	/* and nothing more: no retry after a REJ */
	rocemu_world_advance(t.p.w, 10 * RETRY_NS);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REQ), 1);
	cm_down(&t);
}
END_TEST

/* The passive user refuses: REJ 28 with its private data and ARI. */
START_TEST(test_consumer_rej28)
{
	struct cmt t;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	ck_assert_int_eq(rocemu_cm_send_rej(t.idb, ROCE_CM_REJ_CONSUMER_DEFINED,
					    "ari", 3, "full", 4), 0);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "idle");
	step(&t);
	const struct rocemu_cm_event *ev = last_ev(&t.la);
	ck_assert_int_eq(ev->type, ROCEMU_CM_REJ_RCVD);
	ck_assert_int_eq(ev->status, ROCE_CM_REJ_CONSUMER_DEFINED);
	ck_assert_uint_eq(ev->msg.attr_id, ROCE_CM_ATTR_REJ);
	ck_assert_mem_eq(ev->msg.priv, "full", 4);
	ck_assert_uint_eq(ev->msg.priv_len, ROCE_CM_REJ_PRIV_LEN);
	ck_assert_uint_eq(ev->msg.rej.ari_len, 3);
	ck_assert_mem_eq(ev->msg.rej.ari, "ari", 3);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->tid,
			  last_sent(&t, ROCE_CM_ATTR_REQ)->tid);
	/* too much private data for a REJ is refused, nothing sent */
	static const uint8_t big[ROCE_CM_REJ_PRIV_LEN + 1];
	ck_assert_int_eq(rocemu_cm_send_rej(t.idb, 28, NULL, 0, big, sizeof(big)),
			 -EINVAL);
	cm_down(&t);
}
END_TEST

/* A REQ that arrives twice makes one REQ_RCVD; the duplicate is answered
 * with an MRA while the user has not accepted, which the active side
 * honours: it waits the MRA's service timeout before sending again. */
START_TEST(test_duplicate_req_mra)
{
	struct cmt t;

	cm_up(&t);
	faults(&t, 0, 1);
	send_req(&t);
	faults(&t, 0, 0);
	step(&t);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_REQ_RCVD), 1);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_MRA), 1);
	const struct roce_cm_msg *mra = last_sent(&t, ROCE_CM_ATTR_MRA);
	ck_assert_uint_eq(mra->mra.msg_mraed, ROCE_CM_MSG_REQ);
	ck_assert_uint_eq(mra->tid, last_sent(&t, ROCE_CM_ATTR_REQ)->tid);
	ck_assert_str_eq(rocemu_cm_id_state(t.ida), "mra_req_rcvd");
	ck_assert_uint_eq(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_CM_RX_DUPLICATES), 1);
	/* REQ retries wait for the service timeout (69 s), not 12 ms */
	rocemu_world_advance(t.p.w, 100 * RETRY_NS);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REQ), 1);
	take_req(&t);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "mra_req_sent");
	send_rep(&t);
	step(&t);
	take_rep(&t);
	cm_down(&t);
}
END_TEST

/* SIDR: the listener answers with its QPN and Q_Key; a SIDR_REQ for no
 * listener gets status 1. */
START_TEST(test_sidr)
{
	struct cmt t;
	struct rocemu_cm_sidr_req_param q = { .service_id = SID,
					      .cm_response_timeout = 10,
					      .max_cm_retries = 2,
					      .private_data = "hi",
					      .private_data_len = 2 };

	cm_up(&t);
	memcpy(q.dgid, rocemu_dev_gid(t.p.b.dev), 16);
	ck_assert_int_eq(rocemu_cm_send_sidr_req(t.ida, &q), 0);
	step(&t);
	const struct rocemu_cm_event *ev = last_ev(&t.lb);
	ck_assert_int_eq(ev->type, ROCEMU_CM_SIDR_REQ_RCVD);
	ck_assert_ptr_eq(ev->listen_id, t.listener);
	ck_assert_mem_eq(ev->msg.priv, "hi", 2);
	ck_assert_int_eq(rocemu_cm_send_sidr_rep(ev->id, ROCE_CM_SIDR_SUCCESS,
						 0x99, 0x11223344, NULL, 0), 0);
	step(&t);
	ev = last_ev(&t.la);
	ck_assert_int_eq(ev->type, ROCEMU_CM_SIDR_REP_RCVD);
	ck_assert_int_eq(ev->status, ROCE_CM_SIDR_SUCCESS);
	ck_assert_uint_eq(ev->msg.sidr_rep.qpn, 0x99);
	ck_assert_uint_eq(ev->msg.sidr_rep.qkey, 0x11223344);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_SIDR_REP)->tid,
			  last_sent(&t, ROCE_CM_ATTR_SIDR_REQ)->tid);
	ck_assert_str_eq(rocemu_cm_id_state(t.ida), "idle");

	q.service_id = SID + 1;
	ck_assert_int_eq(rocemu_cm_send_sidr_req(t.ida, &q), 0);
	step(&t);
	ev = last_ev(&t.la);
	ck_assert_int_eq(ev->type, ROCEMU_CM_SIDR_REP_RCVD);
	ck_assert_int_eq(ev->status, ROCE_CM_SIDR_UNSUPPORTED);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_SIDR_REQ_RCVD), 1);
	cm_down(&t);
}
END_TEST

/* A new REQ from a QP whose last connection is still in timewait here:
 * REJ 10 (stale connection). */
START_TEST(test_stale_rej10)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	ck_assert_int_eq(rocemu_cm_send_dreq(t.ida, NULL, 0), 0);
	step(&t);
	ck_assert_int_eq(rocemu_cm_send_drep(t.idb, NULL, 0), 0);
	step(&t);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "timewait");
	struct rocemu_cm_id *again = rocemu_cm_id_new(t.p.a.dev, record, &t.la);
	struct rocemu_cm_req_param p = req_param(&t);
	ck_assert_int_eq(rocemu_cm_send_req(again, &p), 0);
	step(&t);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->rej.reason,
			  ROCE_CM_REJ_STALE_CONN);
	ck_assert_int_eq(last_ev(&t.la)->status, ROCE_CM_REJ_STALE_CONN);
	ck_assert_ptr_eq(last_ev(&t.la)->id, again);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_REQ_RCVD), 1);
	cm_down(&t);
}
END_TEST

/* A DREQ naming another QP is dropped (Linux's cm_dreq_handler). */
/* A REQ from a QP this side holds a connection with (a peer that came
 * back at the same address with the same QP number, its old connection
 * never ended): REJ 10, and a DREQ ends the old connection, as Linux's
 * cm_match_req. Not a second connection under the first. */
START_TEST(test_stale_established_rej10)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	struct rocemu_cm_id *again = rocemu_cm_id_new(t.p.a.dev, record, &t.la);
	struct rocemu_cm_req_param p = req_param(&t);
	ck_assert_int_eq(rocemu_cm_send_req(again, &p), 0);
	step(&t);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_REQ_RCVD), 1);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->rej.reason,
			  ROCE_CM_REJ_STALE_CONN);
	ck_assert_int_eq(count_ev(&t.la, ROCEMU_CM_REJ_RCVD), 1);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREQ), 1);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_DREQ)->dreq.local_comm_id,
			  last_sent(&t, ROCE_CM_ATTR_REP)->rep.local_comm_id);
	ck_assert_int_eq(count_ev(&t.la, ROCEMU_CM_DREQ_RCVD), 1);
	ck_assert_str_ne(rocemu_cm_id_state(t.idb), "established");
	cm_down(&t);
}
END_TEST

static void dreq_wrong_qpn(struct cmt *t)
{
	uint8_t mad[ROCE_MAD_LEN];
	const struct roce_cm_msg *rtu = last_sent(t, ROCE_CM_ATTR_RTU);
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_DREQ, .tid = 99 };

	m.dreq.local_comm_id = rtu->rtu.local_comm_id;
	m.dreq.remote_comm_id = rtu->rtu.remote_comm_id;
	m.dreq.remote_qpn = rocemu_qp_num(t->p.b.qp) + 1;
	ck_assert_int_eq(roce_cm_encode(&m, mad), ROCE_MAD_LEN);
	inject_gsi(t->p.w, mad, ROCE_MAD_LEN, NULL);
}

START_TEST(test_dreq_wrong_qpn_dropped)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	int drep = sent(&t, ROCE_CM_ATTR_DREP);
	dreq_wrong_qpn(&t);
	ck_assert_int_eq(count_ev(&t.lb, ROCEMU_CM_DREQ_RCVD), 0);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "established");
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREP), drep);
	ck_assert_uint_eq(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_CM_RX_UNMATCHED), 1);
	cm_down(&t);
}
END_TEST

/* MADs to b's QP1 that are no CM message it takes: each a counted drop,
 * no event, nothing sent. _i picks the fault. */
static void break_mad(uint8_t *mad, int i)
{
	switch (i) {
	case 0: mad[1] = 0x04; break;			/* class: PerfMgt */
	case 1: mad[2] = 1; break;			/* class version 1 */
	case 2: mad[0] = 2; break;			/* base version 2 */
	case 3: mad[3] = 0x83; break;			/* method GetResp */
	case 4: mad[16] = 0; mad[17] = 0x55; break;	/* attribute 0x55 */
	case 5: { /* a REJ whose ARI length says 100 of 72 */
		struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REJ };

		ck_assert_int_eq(roce_cm_encode(&m, mad), ROCE_MAD_LEN);
		mad[ROCE_MAD_HDR_LEN + 9] = 100 << 1;
		break;
	}
	case 6: { /* a SIDR_REP whose info length says 200 */
		struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_SIDR_REP };

		ck_assert_int_eq(roce_cm_encode(&m, mad), ROCE_MAD_LEN);
		mad[ROCE_MAD_HDR_LEN + 5] = 200;
		break;
	}
	}
}

START_TEST(test_malformed_mads_dropped)
{
	struct cmt t;
	uint8_t mad[ROCE_MAD_LEN];

	cm_up(&t);
	req_mad(mad);
	break_mad(mad, _i);
	inject_gsi(t.p.w, mad, ROCE_MAD_LEN, NULL);
	ck_assert_uint_eq(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_RX_DROP_MAD), 1);
	ck_assert_uint_eq(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_CM_RX_MSGS), 0);
	ck_assert_uint_eq(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_TX_PACKETS), 0);
	ck_assert_int_eq(t.lb.n, 0);
	cm_down(&t);
}
END_TEST

/* The same REQ unbroken is taken (the test above can fail): b answers
 * it, REJ 8 since 0x1234 is no service of its listener. */
START_TEST(test_wellformed_mad_taken)
{
	struct cmt t;
	uint8_t mad[ROCE_MAD_LEN];

	cm_up(&t);
	req_mad(mad);
	inject_gsi(t.p.w, mad, ROCE_MAD_LEN, NULL);
	ck_assert_uint_eq(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_RX_DROP_MAD), 0);
	ck_assert_uint_eq(rocemu_dev_counter(t.p.b.dev, ROCEMU_CNT_CM_RX_MSGS), 1);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->rej.reason,
			  ROCE_CM_REJ_INVALID_SERVICE_ID);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->tid, 7);
	cm_down(&t);
}
END_TEST

/* A REQ for a listened service whose primary path does not end at this
 * device (remote GID ::): REJ 12, invalid GID, and no REQ_RCVD. */
START_TEST(test_wrong_gid_rej12)
{
	struct cmt t;
	uint8_t mad[ROCE_MAD_LEN];
	struct roce_cm_msg m;

	cm_up(&t);
	req_mad(mad);
	ck_assert_int_eq(roce_cm_decode(mad, ROCE_MAD_LEN, &m), 0);
	m.req.service_id = SID;
	ck_assert_int_eq(roce_cm_encode(&m, mad), ROCE_MAD_LEN);
	inject_gsi(t.p.w, mad, ROCE_MAD_LEN, NULL);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->rej.reason,
			  ROCE_CM_REJ_INVALID_GID);
	ck_assert_int_eq(t.lb.n, 0);
	cm_down(&t);
}
END_TEST

/* rocemu_cm_id_free in each state sends what the IBTA says, and no event
 * names the freed id afterwards. */
static void check_quiet(struct cmt *t, const struct evlog *l, int before,
			const struct rocemu_cm_id *freed)
{
	rocemu_world_settle(t->p.w, 200000 * MS);
	for (int i = before; i < l->n; i++)
		ck_assert_ptr_ne(l->ev[i].id, freed);
}

START_TEST(test_free_req_sent)
{
	struct cmt t;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	int n = t.la.n;
	rocemu_cm_id_free(t.ida);
	step(&t);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->rej.reason,
			  ROCE_CM_REJ_TIMEOUT);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_REJ_RCVD);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "idle");
	check_quiet(&t, &t.la, n, t.ida);
	ck_assert_int_eq(t.la.n, n);
	cm_down(&t);
}
END_TEST

START_TEST(test_free_req_rcvd)
{
	struct cmt t;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	int n = t.lb.n;
	rocemu_cm_id_free(t.idb);
	step(&t);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->rej.reason,
			  ROCE_CM_REJ_CONSUMER_DEFINED);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_REJ_RCVD);
	check_quiet(&t, &t.lb, n, t.idb);
	ck_assert_int_eq(t.lb.n, n);
	cm_down(&t);
}
END_TEST

START_TEST(test_free_rep_sent)
{
	struct cmt t;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	send_rep(&t);
	step(&t);
	int n = t.lb.n;
	rocemu_cm_id_free(t.idb);
	step(&t);
	ck_assert_uint_eq(last_sent(&t, ROCE_CM_ATTR_REJ)->rej.reason,
			  ROCE_CM_REJ_CONSUMER_DEFINED);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_REJ_RCVD);
	ck_assert_int_eq(rocemu_cm_send_rtu(t.ida, NULL, 0), -EINVAL);
	check_quiet(&t, &t.lb, n, t.idb);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_REP), 1);
	cm_down(&t);
}
END_TEST

START_TEST(test_free_established)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	int n = t.la.n;
	rocemu_cm_id_free(t.ida);
	step(&t);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREQ), 1);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_DREQ_RCVD);
	ck_assert_int_eq(rocemu_cm_send_drep(t.idb, NULL, 0), 0);
	check_quiet(&t, &t.la, n, t.ida);
	ck_assert_int_eq(t.la.n, n);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_TIMEWAIT_EXIT);
	cm_down(&t);
}
END_TEST

START_TEST(test_free_dreq_rcvd)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	ck_assert_int_eq(rocemu_cm_send_dreq(t.ida, NULL, 0), 0);
	step(&t);
	int n = t.lb.n;
	rocemu_cm_id_free(t.idb);
	step(&t);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREP), 1);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_DREP_RCVD);
	check_quiet(&t, &t.lb, n, t.idb);
	ck_assert_int_eq(t.lb.n, n);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_TIMEWAIT_EXIT);
	cm_down(&t);
}
END_TEST

START_TEST(test_free_rep_rcvd)
{
	struct cmt t;

	cm_up(&t);
	send_req(&t);
	step(&t);
	take_req(&t);
	send_rep(&t);
	step(&t);
	int n = t.la.n;
	rocemu_cm_id_free(t.ida);
	step(&t);
	const struct roce_cm_msg *rej = last_sent(&t, ROCE_CM_ATTR_REJ);
	ck_assert_uint_eq(rej->rej.reason, ROCE_CM_REJ_CONSUMER_DEFINED);
	ck_assert_uint_eq(rej->rej.msg_rejected, ROCE_CM_MSG_REP);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_REJ_RCVD);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "idle");
	check_quiet(&t, &t.la, n, t.ida);
	ck_assert_int_eq(t.la.n, n);
	cm_down(&t);
}
END_TEST

/* Freed in timewait (and in dreq_sent before it): kept until timewait
 * ends, answering a late DREQ, but no TIMEWAIT_EXIT names it. */
START_TEST(test_free_dreq_sent_and_timewait)
{
	struct cmt t;

	cm_up(&t);
	cm_connect(&t);
	ck_assert_int_eq(rocemu_cm_send_dreq(t.ida, NULL, 0), 0);
	int na = t.la.n;
	rocemu_cm_id_free(t.ida);		/* in dreq_sent */
	step(&t);
	ck_assert_int_eq(rocemu_cm_send_drep(t.idb, NULL, 0), 0);
	step(&t);
	ck_assert_str_eq(rocemu_cm_id_state(t.idb), "timewait");
	int nb = t.lb.n;
	rocemu_cm_id_free(t.idb);		/* in timewait */
	check_quiet(&t, &t.la, na, t.ida);
	check_quiet(&t, &t.lb, nb, t.idb);
	ck_assert_int_eq(t.la.n, na);
	ck_assert_int_eq(t.lb.n, nb);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREQ), 1);
	ck_assert_int_eq(sent(&t, ROCE_CM_ATTR_DREP), 1);
	cm_down(&t);
}
END_TEST

/* A SIDR_REQ the user does not answer: freeing its id answers status 2. */
START_TEST(test_free_sidr_req_rcvd)
{
	struct cmt t;
	struct rocemu_cm_sidr_req_param q = { .service_id = SID };

	cm_up(&t);
	memcpy(q.dgid, rocemu_dev_gid(t.p.b.dev), 16);
	ck_assert_int_eq(rocemu_cm_send_sidr_req(t.ida, &q), 0);
	step(&t);
	ck_assert_int_eq(last_ev(&t.lb)->type, ROCEMU_CM_SIDR_REQ_RCVD);
	rocemu_cm_id_free(last_ev(&t.lb)->id);
	step(&t);
	ck_assert_int_eq(last_ev(&t.la)->type, ROCEMU_CM_SIDR_REP_RCVD);
	ck_assert_int_eq(last_ev(&t.la)->status, ROCE_CM_SIDR_REJECT);
	cm_down(&t);
}
END_TEST

/* Comm IDs start at a number of the world's seed: another seed, another
 * start; the same seed, the same start (tests repeat). */
static uint32_t first_comm_id(uint64_t seed)
{
	struct rocemu_world *w = rocemu_world_new(seed);
	struct rocemu_dev *a = dev_at(w, 1);
	struct wirelog *wl = calloc(1, sizeof(*wl));
	struct evlog l = { 0 };
	struct rocemu_cm_id *id = rocemu_cm_id_new(a, record, &l);
	struct rocemu_cm_req_param p = { .service_id = SID,
					 .qp_type = IBV_QPT_RC, .qpn = 0x11 };

	p.dgid[10] = p.dgid[11] = 0xff;
	p.dgid[12] = 10;
	p.dgid[15] = 9;
	rocemu_world_watch(w, watch, wl);
	ck_assert_int_eq(rocemu_cm_send_req(id, &p), 0);
	ck_assert_int_eq(wl->n, 1);
	uint32_t cid = wl->msg[0].req.local_comm_id;
	rocemu_world_watch(w, NULL, NULL);
	rocemu_dev_free(a);
	rocemu_world_free(w);
	free(wl);
	return cid;
}

START_TEST(test_comm_id_start_random)
{
	ck_assert_uint_eq(first_comm_id(1), first_comm_id(1));
	ck_assert_uint_ne(first_comm_id(1), first_comm_id(2));
	ck_assert_uint_ne(first_comm_id(2), first_comm_id(3));
}
END_TEST

START_TEST(test_free_listener_and_idle)
{
	struct cmt t;

	cm_up(&t);
	ck_assert_int_eq(rocemu_cm_id_free(t.listener), 0);
	send_req(&t);
	step(&t);
	ck_assert_int_eq(last_ev(&t.la)->status, ROCE_CM_REJ_INVALID_SERVICE_ID);
	ck_assert_int_eq(t.lb.n, 0);
	ck_assert_int_eq(rocemu_cm_id_free(NULL), -EINVAL);
	cm_down(&t);
}
END_TEST

/* ---- the UDP wire ------------------------------------------------------- */

struct uhost {
	struct rocemu_world *w;
	struct rocemu_endpoint ep;
	struct evlog log;
	struct rocemu_cm_id *id;
};

static void uhost_up(struct uhost *h, uint8_t octet)
{
	struct rocemu_dev_cfg cfg = { .name = "cm", .mtu = IBV_MTU_1024,
				      .gid = { [10] = 0xff, [11] = 0xff,
					       [12] = 127, [15] = octet } };

	memset(h, 0, sizeof(*h));
	h->w = rocemu_world_new_udp();
	int rc = rocemu_endpoint_new(h->w, &cfg, IBV_QPT_RC, 4096, 16, &h->ep);
	if (rc)
		ck_abort_msg("cannot bind 127.0.0.%u UDP port 4791: %s", octet,
			     strerror(-rc));
	h->id = rocemu_cm_id_new(h->ep.dev, record, &h->log);
	ck_assert_ptr_nonnull(h->id);
}

static void uhost_down(struct uhost *h)
{
	rocemu_endpoint_free(&h->ep);
	rocemu_world_free(h->w);
}

/* Runs both worlds until cond holds; a bounded number of rounds (each
 * waits at most 1 ms per world), so a lost answer fails, not hangs. */
#define PUMP_UNTIL(a, b, cond)                                            \
	do {                                                              \
		for (int r_ = 0; r_ < 20000 && !(cond); r_++) {           \
			rocemu_world_wait((a)->w, MS);                    \
			rocemu_world_wait((b)->w, MS);                    \
		}                                                         \
		ck_assert_msg(cond, "never: %s", #cond);                  \
	} while (0)

static void udp_modify(struct rocemu_cm_id *id, struct rocemu_qp *qp,
		       enum ibv_qp_state st)
{
	struct ibv_qp_attr attr = { .qp_state = st };
	int mask;

	ck_assert_int_eq(rocemu_cm_init_qp_attr(id, &attr, &mask), 0);
	ck_assert_int_eq(rocemu_qp_modify(qp, &attr, mask), 0);
}

/* Two devices on loopback addresses, each in its own world: connect
 * through their CMs, SEND, disconnect. */
START_TEST(test_udp_connect_data_disconnect)
{
	struct uhost a, b;
	struct rocemu_cm_id *pb;

	uhost_up(&a, 5);
	uhost_up(&b, 6);
	ck_assert_int_eq(rocemu_cm_listen(b.id, SID, ~0ull), 0);
	struct rocemu_cm_req_param p = {
		.service_id = SID, .qp_type = IBV_QPT_RC,
		.qpn = rocemu_qp_num(a.ep.qp), .starting_psn = 0x77,
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
		.packet_life_time = 10, .mtu = IBV_MTU_4096,
	};
	memcpy(p.dgid, rocemu_dev_gid(b.ep.dev), 16);
	ck_assert_int_eq(rocemu_cm_send_req(a.id, &p), 0);
	udp_modify(a.id, a.ep.qp, IBV_QPS_INIT);
	PUMP_UNTIL(&a, &b, b.log.n == 1);
	ck_assert_int_eq(b.log.ev[0].type, ROCEMU_CM_REQ_RCVD);
	/* 4096 asked for, clamped to the devices' 1024 */
	ck_assert_uint_eq(b.log.ev[0].msg.req.path_mtu, IBV_MTU_1024);
	pb = b.log.ev[0].id;
	udp_modify(pb, b.ep.qp, IBV_QPS_INIT);
	struct rocemu_cm_rep_param r = { .qpn = rocemu_qp_num(b.ep.qp),
					 .starting_psn = 0x99,
					 .responder_resources = 1,
					 .initiator_depth = 1,
					 .rnr_retry_count = 7 };
	ck_assert_int_eq(rocemu_cm_send_rep(pb, &r), 0);
	udp_modify(pb, b.ep.qp, IBV_QPS_RTR);
	PUMP_UNTIL(&a, &b, a.log.n == 1);
	ck_assert_int_eq(a.log.ev[0].type, ROCEMU_CM_REP_RCVD);
	udp_modify(a.id, a.ep.qp, IBV_QPS_RTR);
	udp_modify(a.id, a.ep.qp, IBV_QPS_RTS);
	ck_assert_int_eq(rocemu_cm_send_rtu(a.id, NULL, 0), 0);
	PUMP_UNTIL(&a, &b, b.log.n == 2);
	ck_assert_int_eq(b.log.ev[1].type, ROCEMU_CM_RTU_RCVD);
	udp_modify(pb, b.ep.qp, IBV_QPS_RTS);

	struct ibv_sge rs = { (uintptr_t)b.ep.buf, 64, rocemu_mr_lkey(b.ep.mr) };
	struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
	ck_assert_int_eq(rocemu_post_recv(b.ep.qp, &rw, &rbad), 0);
	memcpy(a.ep.buf, "over the CM's connection", 25);
	struct ibv_sge ss = { (uintptr_t)a.ep.buf, 25, rocemu_mr_lkey(a.ep.mr) };
	struct ibv_send_wr sw = { .wr_id = 2, .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	ck_assert_int_eq(rocemu_post_send(a.ep.qp, &sw, &sbad), 0);
	struct ibv_wc wc;
	int got = 0;
	PUMP_UNTIL(&a, &b, got || (got = rocemu_cq_poll(b.ep.cq, 1, &wc)) == 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_mem_eq(b.ep.buf, "over the CM's connection", 25);

	ck_assert_int_eq(rocemu_cm_send_dreq(a.id, NULL, 0), 0);
	PUMP_UNTIL(&a, &b, b.log.n == 3);
	ck_assert_int_eq(b.log.ev[2].type, ROCEMU_CM_DREQ_RCVD);
	ck_assert_int_eq(rocemu_cm_send_drep(pb, NULL, 0), 0);
	PUMP_UNTIL(&a, &b, a.log.n == 3);
	ck_assert_int_eq(a.log.ev[1].type, ROCEMU_CM_DREP_RCVD);
	ck_assert_int_eq(a.log.ev[2].type, ROCEMU_CM_TIMEWAIT_EXIT);
	PUMP_UNTIL(&a, &b, b.log.n == 4);
	ck_assert_int_eq(b.log.ev[3].type, ROCEMU_CM_TIMEWAIT_EXIT);
	uhost_down(&a);
	uhost_down(&b);
}
END_TEST

/* The same with a progress thread in each world: handlers run on those
 * threads while the test calls the CM from its own (a TSAN=1 build checks
 * the locking). The log is the handler's and the test's: a mutex each. */
struct tlog {
	pthread_mutex_t mu;
	struct evlog l;
};

static void record_locked(void *user, const struct rocemu_cm_event *ev)
{
	struct tlog *t = user;

	pthread_mutex_lock(&t->mu);
	record(&t->l, ev);
	pthread_mutex_unlock(&t->mu);
}

/* Waits (bounded) until log holds n events; the n-th event's type and
 * id, or -1 if it never came. */
static int wait_ev(struct tlog *t, int n, struct rocemu_cm_id **id)
{
	for (int r = 0; r < 20000; r++) {
		pthread_mutex_lock(&t->mu);
		int have = t->l.n;
		int type = have >= n ? (int)t->l.ev[n - 1].type : -1;
		if (have >= n && id)
			*id = t->l.ev[n - 1].id;
		pthread_mutex_unlock(&t->mu);
		if (have >= n)
			return type;
		usleep(1000);
	}
	return -1;
}

START_TEST(test_udp_threads)
{
	struct uhost a, b;
	struct tlog ta = { PTHREAD_MUTEX_INITIALIZER }, tb = { PTHREAD_MUTEX_INITIALIZER };
	struct rocemu_cm_id *pb = NULL;

	uhost_up(&a, 5);
	uhost_up(&b, 6);
	rocemu_cm_id_set_handler(a.id, record_locked, &ta);
	rocemu_cm_id_set_handler(b.id, record_locked, &tb);
	ck_assert_int_eq(rocemu_cm_listen(b.id, SID, ~0ull), 0);
	ck_assert_int_eq(rocemu_world_start(a.w), 0);
	ck_assert_int_eq(rocemu_world_start(b.w), 0);
	struct rocemu_cm_req_param p = {
		.service_id = SID, .qp_type = IBV_QPT_RC,
		.qpn = rocemu_qp_num(a.ep.qp), .starting_psn = 1,
		.retry_count = 7, .rnr_retry_count = 7, .packet_life_time = 10,
	};
	memcpy(p.dgid, rocemu_dev_gid(b.ep.dev), 16);
	ck_assert_int_eq(rocemu_cm_send_req(a.id, &p), 0);
	ck_assert_int_eq(wait_ev(&tb, 1, &pb), ROCEMU_CM_REQ_RCVD);
	struct rocemu_cm_rep_param r = { .qpn = rocemu_qp_num(b.ep.qp),
					 .starting_psn = 2, .rnr_retry_count = 7 };
	ck_assert_int_eq(rocemu_cm_send_rep(pb, &r), 0);
	ck_assert_int_eq(wait_ev(&ta, 1, NULL), ROCEMU_CM_REP_RCVD);
	ck_assert_int_eq(rocemu_cm_send_rtu(a.id, NULL, 0), 0);
	ck_assert_int_eq(wait_ev(&tb, 2, NULL), ROCEMU_CM_RTU_RCVD);
	ck_assert_int_eq(rocemu_cm_send_dreq(pb, NULL, 0), 0);
	ck_assert_int_eq(wait_ev(&ta, 2, NULL), ROCEMU_CM_DREQ_RCVD);
	ck_assert_int_eq(rocemu_cm_send_drep(a.id, NULL, 0), 0);
	ck_assert_int_eq(wait_ev(&tb, 3, NULL), ROCEMU_CM_DREP_RCVD);
	ck_assert_int_eq(wait_ev(&tb, 4, NULL), ROCEMU_CM_TIMEWAIT_EXIT);
	ck_assert_int_eq(wait_ev(&ta, 3, NULL), ROCEMU_CM_TIMEWAIT_EXIT);
	rocemu_world_stop(a.w);
	rocemu_world_stop(b.w);
	uhost_down(&a);
	uhost_down(&b);
}
END_TEST

Suite *ibcm_suite(void)
{
	Suite *s = suite_create("ibcm");
	TCase *tc = tcase_create("gsi");

	tcase_add_test(tc, test_gsi_refuses_non_mads);
	suite_add_tcase(s, tc);
	tc = tcase_create("connect");
	tcase_add_test(tc, test_connect_data_disconnect);
	tcase_add_test(tc, test_req_rcvd_qp_attr_reads);
	tcase_add_test(tc, test_req_rcvd_reads_capped);
	suite_add_tcase(s, tc);
	tc = tcase_create("loss");
	tcase_add_test(tc, test_lost_req);
	tcase_add_test(tc, test_lost_rep);
	tcase_add_test(tc, test_lost_rtu);
	tcase_add_test(tc, test_lost_rtu_then_data);
	tcase_add_test(tc, test_lost_dreq_and_drep);
	tcase_add_test(tc, test_silent_peer);
	suite_add_tcase(s, tc);
	tc = tcase_create("answers");
	tcase_add_test(tc, test_no_listener_rej8);
	tcase_add_test(tc, test_consumer_rej28);
	tcase_add_test(tc, test_duplicate_req_mra);
	tcase_add_test(tc, test_sidr);
	tcase_add_test(tc, test_stale_rej10);
	tcase_add_test(tc, test_stale_established_rej10);
	tcase_add_test(tc, test_dreq_wrong_qpn_dropped);
	suite_add_tcase(s, tc);
	tc = tcase_create("hostile");
	tcase_add_loop_test(tc, test_malformed_mads_dropped, 0, 7);
	tcase_add_test(tc, test_wellformed_mad_taken);
	tcase_add_test(tc, test_wrong_gid_rej12);
	suite_add_tcase(s, tc);
	tc = tcase_create("free");
	tcase_add_test(tc, test_free_req_sent);
	tcase_add_test(tc, test_free_req_rcvd);
	tcase_add_test(tc, test_free_rep_sent);
	tcase_add_test(tc, test_free_established);
	tcase_add_test(tc, test_free_dreq_rcvd);
	tcase_add_test(tc, test_free_listener_and_idle);
	tcase_add_test(tc, test_free_rep_rcvd);
	tcase_add_test(tc, test_free_dreq_sent_and_timewait);
	tcase_add_test(tc, test_free_sidr_req_rcvd);
	tcase_add_test(tc, test_comm_id_start_random);
	suite_add_tcase(s, tc);
	tc = tcase_create("udp");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_udp_connect_data_disconnect);
	tcase_add_test(tc, test_udp_threads);
	suite_add_tcase(s, tc);
	return s;
}
