/* SPDX-License-Identifier: MIT */
/* QP1 and the CM engine: GSI MADs checked as rxe checks them, then the IBTA's CM state machines on the deterministic wire. */
#include <check.h>
#include <errno.h>
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

/* Each packet to QP1 that is no GSI MAD is dropped and counted as such,
 * not as a packet for an unknown QP, and nothing answers it. */
START_TEST(test_gsi_refuses_non_mads)
{
	struct rocemu_world *w = rocemu_world_new(1);
	struct rocemu_dev *a = dev_at(w, 1), *b = dev_at(w, 2);
	uint8_t mad[ROCE_MAD_LEN + 8];

	req_mad(mad);
	inject_gsi(w, mad, ROCE_MAD_LEN, wrong_qkey);
	inject_gsi(w, mad, ROCE_MAD_LEN, with_imm);
	inject_gsi(w, mad, ROCE_MAD_LEN, rc_send);
	inject_gsi(w, mad, ROCE_MAD_LEN - 4, NULL);	/* truncated MAD */
	inject_gsi(w, mad, ROCE_MAD_LEN + 8, NULL);	/* too long */
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_RX_DROP_GSI), 5);
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_RX_DROP_UNKNOWN_QP), 0);
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_TX_PACKETS), 0);
	ck_assert_uint_eq(rocemu_dev_counter(a, ROCEMU_CNT_RX_PACKETS), 0);
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
	rocemu_world_free(t->p.w); /* frees the ids the test kept */
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
	ck_assert_str_eq(rocemu_cm_id_state(t->idb), "req_rcvd");
	modify(t->idb, t->p.b.qp, IBV_QPS_INIT);
	modify(t->idb, t->p.b.qp, IBV_QPS_RTR);
}

static void send_rep(struct cmt *t)
{
	struct rocemu_cm_rep_param r = {
		.qpn = rocemu_qp_num(t->p.b.qp), .starting_psn = 0x5678,
		.responder_resources = 4, .initiator_depth = 4,
		.rnr_retry_count = 7,
	};

	ck_assert_int_eq(rocemu_cm_send_rep(t->idb, &r), 0);
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
	send_rep(t);
	step(t);
	take_rep(t);
	ck_assert_int_eq(rocemu_cm_send_rtu(t->ida, NULL, 0), 0);
	step(t);
	ck_assert_int_eq(last_ev(&t->lb)->type, ROCEMU_CM_RTU_RCVD);
	modify(t->idb, t->p.b.qp, IBV_QPS_RTS);
	ck_assert_str_eq(rocemu_cm_id_state(t->ida), "established");
	ck_assert_str_eq(rocemu_cm_id_state(t->idb), "established");
}

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
	/* The QPs got each other's numbers and PSNs. */
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	rocemu_qp_query(t.p.b.qp, &qa, &qi);
	ck_assert_uint_eq(qa.dest_qp_num, rocemu_qp_num(t.p.a.qp));
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
Suite *ibcm_suite(void)
{
	Suite *s = suite_create("ibcm");
	TCase *tc = tcase_create("gsi");

	tcase_add_test(tc, test_gsi_refuses_non_mads);
	suite_add_tcase(s, tc);
	tc = tcase_create("connect");
	tcase_add_test(tc, test_connect_data_disconnect);
	suite_add_tcase(s, tc);
	tc = tcase_create("loss");
	tcase_add_test(tc, test_lost_req);
	tcase_add_test(tc, test_lost_rep);
	tcase_add_test(tc, test_lost_rtu);
	tcase_add_test(tc, test_lost_rtu_then_data);
	tcase_add_test(tc, test_lost_dreq_and_drep);
	tcase_add_test(tc, test_silent_peer);
	suite_add_tcase(s, tc);
	return s;
}
