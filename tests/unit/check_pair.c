/* SPDX-License-Identifier: MIT */
/* The two-device fixture the device suites share. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_pair.h"

static void side_up(struct pair *p, struct side *s, uint8_t last_octet,
		    const struct pair_opts *o)
{
	struct rocemu_dev_cfg cfg = { .name = last_octet == 1 ? "devA" : "devB",
				      .mtu = IBV_MTU_4096,
				      .misbehave = last_octet == 2 ? o->b_misbehave
								   : ROCEMU_MISBEHAVE_NONE };

	memset(cfg.gid, 0, 16);
	cfg.gid[10] = cfg.gid[11] = 0xff;
	cfg.gid[12] = 10;
	cfg.gid[15] = last_octet;
	s->dev = rocemu_dev_new(p->w, &cfg);
	ck_assert_ptr_nonnull(s->dev);
	s->pd = rocemu_pd_alloc(s->dev);
	s->cq = rocemu_cq_new(s->dev, o->cq_size ? o->cq_size : 4096, NULL);
	ck_assert_ptr_nonnull(s->cq);
	s->len = o->len ? o->len : 65536;
	uint8_t *raw = malloc(s->len + 2 * GUARD);
	memset(raw, CANARY, s->len + 2 * GUARD);
	s->buf = raw + GUARD;
	memset(s->buf, 0, s->len);
	int access = o->mr_access ? o->mr_access
				  : IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ |
					    IBV_ACCESS_REMOTE_ATOMIC;
	s->mr = rocemu_mr_reg(s->pd, s->buf, s->len, access);
	ck_assert_ptr_nonnull(s->mr);
	int wr = o->max_wr ? o->max_wr : 1024;
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)s->cq,
		.recv_cq = (struct ibv_cq *)(void *)s->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = (uint32_t)wr, .max_recv_wr = (uint32_t)wr,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 128 },
	};
	s->qp = rocemu_qp_new(s->pd, &init);
	ck_assert_ptr_nonnull(s->qp);
}

int qp_connect(struct rocemu_qp *qp, uint32_t peer_qpn, const uint8_t *peer_gid,
	       uint32_t sq_psn, uint32_t rq_psn, const struct pair_opts *o)
{
	struct rocemu_rc_params p = {
		.peer_qpn = peer_qpn, .sq_psn = sq_psn, .rq_psn = rq_psn,
		.mtu = o->mtu ? o->mtu : IBV_MTU_1024,
		.access = o->qp_access ? o->qp_access
				       : IBV_ACCESS_REMOTE_WRITE |
						 IBV_ACCESS_REMOTE_READ |
						 IBV_ACCESS_REMOTE_ATOMIC,
		.timeout = o->exact || o->timeout ? o->timeout : 14,
		.retry_cnt = o->exact || o->retry_cnt ? o->retry_cnt : 7,
		.rnr_retry = o->exact || o->rnr_retry ? o->rnr_retry : 7,
		.min_rnr_timer = o->exact || o->min_rnr_timer ? o->min_rnr_timer
							      : 1,
		.max_rd_atomic = o->rd_atomic ? o->rd_atomic : 16,
	};

	memcpy(p.peer_gid, peer_gid, 16);
	return rocemu_qp_connect(qp, &p);
}

static const uint8_t *gid_of(uint8_t last, uint8_t *g)
{
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	g[12] = 10;
	g[15] = last;
	return g;
}

static void trace_stderr(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "%s\n", line);
}

void pair_up(struct pair *p, const struct pair_opts *o)
{
	uint8_t g[16];

	memset(p, 0, sizeof(*p));
	p->w = rocemu_world_new(o->seed);
	/* ROCEMU_TEST_TRACE=1 shows every WQE, packet and CQE of a test. */
	if (getenv("ROCEMU_TEST_TRACE"))
		rocemu_world_trace(p->w, trace_stderr, NULL);
	side_up(p, &p->a, 1, o);
	side_up(p, &p->b, 2, o);
	ck_assert_int_eq(qp_connect(p->a.qp, rocemu_qp_num(p->b.qp),
				    gid_of(2, g), o->psn_a, o->psn_b, o), 0);
	ck_assert_int_eq(qp_connect(p->b.qp, rocemu_qp_num(p->a.qp),
				    gid_of(1, g), o->psn_b, o->psn_a, o), 0);
}

void pair_reconnect(struct pair *p, const struct pair_opts *o)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	uint8_t g[16];

	ck_assert_int_eq(rocemu_qp_modify(p->a.qp, &reset, IBV_QP_STATE), 0);
	ck_assert_int_eq(rocemu_qp_modify(p->b.qp, &reset, IBV_QP_STATE), 0);
	ck_assert_int_eq(qp_connect(p->a.qp, rocemu_qp_num(p->b.qp),
				    gid_of(2, g), o->psn_a, o->psn_b, o), 0);
	ck_assert_int_eq(qp_connect(p->b.qp, rocemu_qp_num(p->a.qp),
				    gid_of(1, g), o->psn_b, o->psn_a, o), 0);
}

static void side_down(struct side *s)
{
	ck_assert_int_eq(rocemu_qp_free(s->qp), 0);
	ck_assert_int_eq(rocemu_mr_dereg(s->mr), 0);
	ck_assert_int_eq(rocemu_cq_free(s->cq), 0);
	ck_assert_int_eq(rocemu_pd_free(s->pd), 0);
	rocemu_dev_free(s->dev);
	free(s->buf - GUARD);
}

void pair_down(struct pair *p)
{
	side_down(&p->a);
	side_down(&p->b);
	rocemu_world_free(p->w);
}

int post_send1(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id,
	       size_t off, uint32_t len, uint64_t raddr, uint32_t rkey,
	       unsigned flags)
{
	struct ibv_sge sge = { addr_of(s, off), len, rocemu_mr_lkey(s->mr) };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = flags ? flags : IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return rocemu_post_send(s->qp, &wr, &bad);
}

int post_recv1(struct side *s, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { addr_of(s, off), len, rocemu_mr_lkey(s->mr) };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return rocemu_post_recv(s->qp, &wr, &bad);
}

struct ibv_wc poll1(struct pair *p, struct side *s)
{
	struct ibv_wc wc;

	rocemu_world_settle(p->w, 60ull * 1000000000ull);
	ck_assert_int_eq(rocemu_cq_poll(s->cq, 1, &wc), 1);
	return wc;
}

int cq_count(struct pair *p, struct side *s)
{
	struct ibv_wc wc[64];
	int n = 0, k;

	rocemu_world_settle(p->w, 60ull * 1000000000ull);
	while ((k = rocemu_cq_poll(s->cq, 64, wc)) > 0)
		n += k;
	return n;
}

int guards_intact(const struct side *s)
{
	for (size_t i = 0; i < GUARD; i++)
		if (s->buf[-1 - (long)i] != CANARY || s->buf[s->len + i] != CANARY)
			return 0;
	return 1;
}
