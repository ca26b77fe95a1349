/* SPDX-License-Identifier: MIT */
/* rocemu as the captured responder: set up as the capture implies, fed the captured requests, its answers kept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "rocemu/psn.h"
#include "rocemu/range.h"

enum {
	/* virtual time rocemu may take over one request */
	RP_SETTLE_NS = 1000000000ull,
};

struct run {
	const struct rp_plan *p;
	struct rp_result *res;
	struct rp_collect col;
	size_t fed;			/* requests fed so far */
	struct rp_dev d;
	struct rocemu_mr *rmr;		/* receive buffer */
	uint8_t *rbuf;
	bool posted_any;
	uint32_t last_posted;		/* first PSN of the last SEND given one */
};

/*
 * A type 2 window over g's MR, bound through rocemu's QP (the one the
 * captured SEND with Invalidate reaches: IBTA 10.6.7.2 lets a peer
 * invalidate only a window bound through the QP it sends to), with the
 * rights the MR has. 0 or -errno.
 */
static int bind_window(struct run *r, struct rp_region *g, size_t len,
		       int rights)
{
	g->mw = rocemu_mw_alloc(r->d.pd, IBV_MW_TYPE_2);
	if (!g->mw)
		return -errno;
	struct ibv_send_wr wr = {
		.wr_id = UINT64_MAX, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = (struct ibv_mw *)g->mw,
			     .rkey = (rocemu_mw_rkey(g->mw) + 1) & 0xff,
			     .bind_info = {
				     .mr = (struct ibv_mr *)g->mr,
				     .addr = (uintptr_t)g->buf,
				     .length = len,
				     .mw_access_flags = (unsigned)rights } },
	};
	struct ibv_send_wr *bad;
	int rc = rocemu_post_send(r->d.qp, &wr, &bad);
	if (rc)
		return rc < 0 ? rc : -rc;
	rocemu_world_settle(r->d.w, RP_SETTLE_NS);
	struct ibv_wc wc;
	if (rocemu_cq_poll(r->d.cq, 1, &wc) != 1 ||
	    wc.status != IBV_WC_SUCCESS)
		return -EINVAL;
	g->key = rocemu_mw_rkey(g->mw);
	return 0;
}

static int setup_memory(struct run *r)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	for (size_t i = 0; i < r->p->nregions; i++) {
		struct rp_region *g = &r->p->regions[i];
		size_t len = g->hi > g->lo ? g->hi - g->lo : 1;
		/* 8 more bytes: an atomic's 8-byte alignment inside */
		g->buf = calloc(1, len + 8);
		if (!g->buf)
			return -ENOMEM;
		g->mr = rocemu_mr_reg(r->d.pd, g->buf, len,
				      rw | (g->window ? IBV_ACCESS_MW_BIND : 0));
		if (!g->mr)
			return -errno;
		g->key = rocemu_mr_rkey(g->mr);
		if (g->window) {
			int rc = bind_window(r, g, len, rw & ~IBV_ACCESS_LOCAL_WRITE);
			if (rc)
				return rc;
		}
	}
	r->rbuf = calloc(1, rp_rbuf_len(r->p));
	if (!r->rbuf)
		return -ENOMEM;
	r->rmr = rocemu_mr_reg(r->d.pd, r->rbuf, rp_rbuf_len(r->p),
			       IBV_ACCESS_LOCAL_WRITE);
	return r->rmr ? 0 : -errno;
}

static int setup(struct run *r)
{
	struct rocemu_rc_params cp = {
		.rq_psn = r->p->first_psn,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = r->p->rnr_code,
	};

	int rc = rp_dev_open(&r->d, r->p, 1 - r->p->req, &cp, 16);
	if (!rc)
		rc = setup_memory(r);
	if (!rc)
		rp_collect_start(&r->col, &r->d, r->res);
	return rc;
}

static void teardown(struct run *r)
{
	for (size_t i = 0; i < r->p->nregions; i++) {
		struct rp_region *g = &r->p->regions[i];
		if (g->mw)	/* first: an MR with a window bound stays */
			rocemu_mw_dealloc(g->mw);
		if (g->mr)
			rocemu_mr_dereg(g->mr);
		g->mw = NULL;
		g->mr = NULL;
	}
	if (r->rmr)
		rocemu_mr_dereg(r->rmr);
	free(r->rbuf);
	rp_dev_close(&r->d);
}

/* True for the packet where a message needs a receive: a SEND's first,
 * a WRITE with immediate's last (where the immediate is). */
static bool takes_receive(const struct roce_ib *ib)
{
	unsigned fl = ib->op->flags;

	if (fl & ROCE_OPF_SEND)
		return fl & (ROCE_OPF_FIRST | ROCE_OPF_ONLY);
	return (fl & ROCE_OPF_WRITE) && (ib->exts & ROCE_EXT_IMMDT);
}

/* A receive for a message the captured responder took, once each. */
static int maybe_post_recv(struct run *r, size_t k)
{
	const struct roce_cap_pkt *c = rp_pkt(r->p, k);
	uint32_t psn = c->f.ib.bth.psn;

	if (!takes_receive(&c->f.ib))
		return 0;
	if (r->posted_any && roce_psn_cmp(psn, r->last_posted) <= 0)
		return 0;
	/* Refused with an RNR NAK: no receive. With a NAK invalid request
	 * or remote operational error: one too short for the message (a
	 * SEND's first packet carries a byte at least; else it fits). */
	bool short_one = rp_failed(r->p, k) && c->f.ib.payload_len;
	if (!rp_accepted(r->p, k) && !short_one)
		return 0;
	struct ibv_sge sge = { .addr = (uintptr_t)r->rbuf,
			       .length = short_one ? c->f.ib.payload_len - 1
						   : rp_rbuf_len(r->p),
			       .lkey = rocemu_mr_lkey(r->rmr) };
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	r->posted_any = true;
	r->last_posted = psn;
	r->res->receives++;
	return rocemu_post_recv(r->d.qp, &wr, &bad);
}

/* What the captured responder's memory held before a READ or atomic. */
static void prefill(struct run *r, size_t k)
{
	const struct roce_ib *ib = &rp_pkt(r->p, k)->f.ib;
	struct rp_region *g;
	uint64_t off, v;

	if (!rp_accepted(r->p, k))
		return;
	/* only a range inside the region: one that wraps was never planned */
	if (ib->op->flags & ROCE_OPF_READ) {
		g = rp_region_of(r->p, ib->reth.rkey);
		if (g && roce_range_offset(ib->reth.va, ib->reth.len, g->lo,
					   g->hi - g->lo, &off))
			rp_read_data(r->p, k, g->buf + off, ib->reth.len);
	} else if (ib->exts & ROCE_EXT_ATMETH) {
		g = rp_region_of(r->p, ib->atmeth.rkey);
		if (g && roce_range_offset(ib->atmeth.va, 8, g->lo,
					   g->hi - g->lo, &off) &&
		    !rp_atomic_orig(r->p, k, &v))
			memcpy(g->buf + off, &v, 8);
	}
}

static void drain_cq(struct run *r)
{
	struct ibv_wc wc[64];
	int n;

	while ((n = rocemu_cq_poll(r->d.cq, 64, wc)) > 0)
		for (int i = 0; i < n; i++)
			if ((wc[i].opcode & IBV_WC_RECV) &&
			    wc[i].status == IBV_WC_SUCCESS)
				r->res->received++;
}

/* One request at a time, each handled before the next: timing decides
 * how a responder coalesces ACKs, and rp_compare allows for that. */
static void feed_all(struct run *r)
{
	const struct rp_plan *p = r->p;
	uint64_t before[ROCEMU_CNT_COUNTER_MAX];

	for (size_t k = 0; k < p->n && !r->col.err; k++) {
		if (!rp_is_request(p, k))
			continue;
		maybe_post_recv(r, k);
		prefill(r, k);
		for (int c = 0; c < ROCEMU_CNT_COUNTER_MAX; c++)
			before[c] = rocemu_dev_counter(r->d.dev, c);
		r->res->fed_at[r->fed] = k;
		r->col.after = r->fed++;
		r->col.ts_ns = rp_pkt(p, k)->ts_ns;
		if (rp_inject(p, k, r->d.w))
			r->res->cut++;
		rocemu_world_settle(r->d.w, RP_SETTLE_NS);
		uint64_t *d = &r->res->deltas[(r->fed - 1) *
					      ROCEMU_CNT_COUNTER_MAX];
		for (int c = 0; c < ROCEMU_CNT_COUNTER_MAX; c++)
			d[c] = rocemu_dev_counter(r->d.dev, c) - before[c];
		drain_cq(r);
	}
	r->res->fed = r->fed;
}

int rp_run_responder(const struct rp_plan *p, struct rp_result *res)
{
	struct run r = { .p = p, .res = res };
	const char *what;
	uint64_t need;

	memset(res, 0, sizeof(*res));
	if (rp_responder_fits(p, &need, &what)) {
		res->need = need;
		return -E2BIG;
	}
	res->deltas = calloc(p->nreq * ROCEMU_CNT_COUNTER_MAX,
			     sizeof(*res->deltas));
	res->fed_at = calloc(p->nreq, sizeof(*res->fed_at));
	int rc = res->deltas && res->fed_at ? setup(&r) : -ENOMEM;
	if (!rc) {
		feed_all(&r);
		rc = r.col.err;
		rocemu_qp_describe(r.d.qp, res->qp_state, sizeof(res->qp_state));
	}
	teardown(&r);
	if (rc)
		rp_result_free(res);
	return rc;
}

void rp_result_free(struct rp_result *res)
{
	for (size_t i = 0; i < res->nsent; i++)
		free(res->sent[i].data);
	free(res->sent);
	free(res->deltas);
	free(res->fed_at);
	memset(res, 0, sizeof(*res));
}
