/* SPDX-License-Identifier: MIT */
/* rocemu as the captured requester: the WQEs the capture implies posted, the captured answers fed, its requests compared. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "rocemu/aeth.h"
#include "rocemu/psn.h"

enum {
	RQ_TIMEOUT = 14,		/* 4.096 us * 2^14: 67 ms, perftest's */
	RQ_MAX_WR = 4096,
	/* virtual time rocemu may take to send what the capture shows next */
	RQ_WAIT_NS = 60000000000ull,
	/* Longest step of the clock while waiting: well under the timeout,
	 * so that rocemu's timer never fires twice within one step */
	RQ_STEP_MAX_NS = 4000000ull,
};

/* One work request the capture implies. */
struct msg {
	struct ibv_send_wr wr;
	struct ibv_sge sge;
};

struct req_run {
	const struct rp_plan *p;
	struct rp_result *res;
	struct rp_dev d;
	struct rp_collect col;
	struct rocemu_mr *mr;
	struct rocemu_ah *ah;		/* UD: the captured receiver */
	uint8_t *buf;
	size_t buf_len;
	struct msg *msgs;
	size_t nmsgs, posted;
};

static const struct roce_ib *ib_of(const struct rp_plan *p, size_t k)
{
	return &rp_pkt(p, k)->f.ib;
}

/* The WR opcode of the message from its first and last packets (the
 * immediate and the IETH come with the last). */
static enum ibv_wr_opcode wr_opcode(const struct roce_ib *ib,
				    const struct roce_ib *last)
{
	unsigned fl = ib->op->flags;
	bool imm = last->exts & ROCE_EXT_IMMDT;

	if (fl & ROCE_OPF_READ)
		return IBV_WR_RDMA_READ;
	if (fl & ROCE_OPF_ATOMIC)
		return ib->op->rc_op == ROCE_OP_RC_CMP_SWAP
			       ? IBV_WR_ATOMIC_CMP_AND_SWP
			       : IBV_WR_ATOMIC_FETCH_AND_ADD;
	if (fl & ROCE_OPF_WRITE)
		return imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	if (last->exts & ROCE_EXT_IETH)
		return IBV_WR_SEND_WITH_INV;
	return imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
}

/* Walks the packets of the message whose first packet is k, in PSN
 * order, each as first sent. */
struct walk {
	size_t at;		/* the packet now, or p->n past the end */
	uint32_t psn;		/* the PSN the next one should carry */
};

/*
 * The next packet of the message: the first sending of the next PSN; if
 * the capture holds none, the next request after this one that is ahead
 * of it (a requester that skipped a PSN). Returns false at the end.
 */
static bool walk_next(const struct rp_plan *p, struct walk *w)
{
	if (ib_of(p, w->at)->op->flags & (ROCE_OPF_LAST | ROCE_OPF_ONLY))
		return false;
	size_t from = w->at;
	w->psn = roce_psn_add(w->psn, 1);
	for (size_t j = from + 1; j < p->n; j++)
		if (rp_is_request(p, j) && ib_of(p, j)->bth.psn == w->psn) {
			w->at = j;
			return true;
		}
	for (size_t j = from + 1; j < p->n; j++)
		if (rp_is_request(p, j) &&
		    roce_psn_cmp(ib_of(p, j)->bth.psn, w->psn) > 0) {
			w->at = j;
			return true;
		}
	return false;
}

/* Bytes a message's packets carry (its RETH's for READ, 8 for atomics). */
static uint64_t msg_bytes(const struct rp_plan *p, size_t k)
{
	const struct roce_ib *ib = ib_of(p, k);
	struct walk w = { k, ib->bth.psn };
	uint64_t n = 0;

	if (ib->op->flags & ROCE_OPF_READ)
		return ib->reth.len;
	if (ib->op->flags & ROCE_OPF_ATOMIC)
		return 8;
	do
		n += ib_of(p, w.at)->payload_len;
	while (walk_next(p, &w));
	return n;
}

/* The packet data of a SEND or WRITE message into dst, as first sent. */
static void msg_data(const struct rp_plan *p, size_t k, uint8_t *dst,
		     uint32_t len)
{
	struct walk w = { k, ib_of(p, k)->bth.psn };
	uint32_t off = 0;

	do {
		const struct roce_ib *ib = ib_of(p, w.at);
		uint32_t n = ib->payload_avail;
		if (n > len - off)
			n = len - off;
		/* a malformed packet parses without a payload (NULL) */
		if (n)
			memcpy(dst + off, ib->payload, n);
		off += ib->payload_len;
	} while (off < len && walk_next(p, &w));
}

/* The last packet of the message starting at k (immediate, IETH). */
static const struct roce_ib *last_of(const struct rp_plan *p, size_t k)
{
	struct walk w = { k, ib_of(p, k)->bth.psn };

	while (walk_next(p, &w))
		;
	return ib_of(p, w.at);
}

static void fill_wr(struct req_run *r, size_t k, struct msg *m, size_t off,
		    uint32_t len)
{
	const struct rp_plan *p = r->p;
	const struct roce_ib *ib = ib_of(p, k), *last = last_of(p, k);

	m->sge = (struct ibv_sge){ .addr = (uintptr_t)(r->buf + off),
				   .length = len };
	m->wr.wr_id = k;
	m->wr.num_sge = len ? 1 : 0;
	m->wr.opcode = wr_opcode(ib, last);
	m->wr.send_flags = IBV_SEND_SIGNALED |
			   (last->bth.se ? IBV_SEND_SOLICITED : 0);
	m->wr.imm_data = htonl(last->imm);
	if (m->wr.opcode == IBV_WR_SEND_WITH_INV)
		m->wr.invalidate_rkey = last->ieth;
	if (p->fl->kind == ROCE_FLOW_UD) {
		m->wr.wr.ud.remote_qpn = ib->bth.dqpn;
		m->wr.wr.ud.remote_qkey = ib->deth.qkey;
		msg_data(p, k, r->buf + off, len);
	} else if (ib->exts & ROCE_EXT_RETH) {
		m->wr.wr.rdma.remote_addr = ib->reth.va;
		m->wr.wr.rdma.rkey = ib->reth.rkey;
	} else if (ib->exts & ROCE_EXT_ATMETH) {
		m->wr.wr.atomic.remote_addr = ib->atmeth.va;
		m->wr.wr.atomic.rkey = ib->atmeth.rkey;
		m->wr.wr.atomic.compare_add =
			m->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP
				? ib->atmeth.compare
				: ib->atmeth.swap_add;
		m->wr.wr.atomic.swap = ib->atmeth.swap_add;
	} else if (len) {
		msg_data(p, k, r->buf + off, len);
	}
	if (m->wr.opcode == IBV_WR_RDMA_WRITE ||
	    m->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		msg_data(p, k, r->buf + off, len);
}

/* True when request k is the first sending of a new message; *next is
 * the PSN after the messages seen so far. */
static bool new_message(const struct rp_plan *p, size_t k, uint32_t *next)
{
	const struct roce_ib *ib = ib_of(p, k);

	if (roce_psn_cmp(ib->bth.psn, *next) < 0)
		return false;	/* sent again */
	uint32_t n = 1;
	if (ib->op->flags & ROCE_OPF_READ)
		n = rp_read_packets(ib->reth.len, p->mtu_bytes);
	*next = roce_psn_add(ib->bth.psn, n);
	return ib->op->flags & (ROCE_OPF_FIRST | ROCE_OPF_ONLY);
}

/* The WQEs of every captured message, and one buffer for their data. */
static int plan_wqes(struct req_run *r)
{
	const struct rp_plan *p = r->p;
	uint32_t next = p->first_psn;
	uint64_t total = 0, off = 0;

	for (int pass = 0; pass < 2; pass++) {
		next = p->first_psn;
		for (size_t k = 0; k < p->n; k++) {
			if (!rp_is_request(p, k) || !new_message(p, k, &next))
				continue;
			uint64_t len = msg_bytes(p, k);
			if (pass == 0) {
				r->nmsgs++;
				/* a message's length is 32 bits on the wire:
				 * more makes the sum too big, as it is */
				total += len > UINT32_MAX ? UINT64_MAX / 2
							  : len + 8;
				continue;
			}
			fill_wr(r, k, &r->msgs[r->nmsgs++], off, (uint32_t)len);
			off += len + 8;
		}
		if (pass)
			break;
		/* the buffers stay within what the capture carries */
		if (total > rp_mem_limit(p)) {
			r->res->need = total;
			return -E2BIG;
		}
		r->msgs = calloc(r->nmsgs ? r->nmsgs : 1, sizeof(*r->msgs));
		r->buf_len = total ? total : 1;
		r->buf = calloc(1, r->buf_len);
		if (!r->msgs || !r->buf)
			return -ENOMEM;
		r->nmsgs = 0;
	}
	return 0;
}

static int setup(struct req_run *r)
{
	struct rocemu_rc_params cp = {
		.sq_psn = r->p->first_psn, .timeout = RQ_TIMEOUT,
		.retry_cnt = 7, .rnr_retry = rp_rnr_retry(r->p),
	};
	int rc = plan_wqes(r);

	if (!rc)
		rc = rp_dev_open(&r->d, r->p, r->p->req, &cp, RQ_MAX_WR);
	if (rc)
		return rc;
	r->mr = rocemu_mr_reg(r->d.pd, r->buf, r->buf_len,
			      IBV_ACCESS_LOCAL_WRITE);
	if (!r->mr)
		return -errno;
	if (r->p->fl->kind == ROCE_FLOW_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .sgid_index = 1,
						   .hop_limit = 64 } };
		memcpy(aa.grh.dgid.raw, r->p->fl->end[1 - r->p->req].gid, 16);
		r->ah = rocemu_ah_new(r->d.pd, &aa);
		if (!r->ah)
			return -errno;
	}
	for (size_t i = 0; i < r->nmsgs; i++) {
		r->msgs[i].sge.lkey = rocemu_mr_lkey(r->mr);
		r->msgs[i].wr.sg_list = &r->msgs[i].sge;
		if (r->ah)	/* wr.wr is a union: only for UD */
			r->msgs[i].wr.wr.ud.ah = (struct ibv_ah *)r->ah;
	}
	rp_collect_start(&r->col, &r->d, r->res);
	return 0;
}

static void teardown(struct req_run *r)
{
	if (r->d.qp)
		rocemu_qp_free(r->d.qp);
	r->d.qp = NULL;
	if (r->mr)
		rocemu_mr_dereg(r->mr);
	if (r->ah)
		rocemu_ah_free(r->ah);
	rp_dev_close(&r->d);
	free(r->buf);
	free(r->msgs);
}

/* Posts what the send queue has room for; completions are drained. */
static void post_more(struct req_run *r)
{
	struct ibv_wc wc[64];
	struct ibv_send_wr *bad;

	while (rocemu_cq_poll(r->d.cq, 64, wc) > 0)
		;
	while (r->posted < r->nmsgs &&
	       !rocemu_post_send(r->d.qp, &r->msgs[r->posted].wr, &bad))
		r->posted++;
}

/* Runs rocemu until it has sent frame i, moving the clock only when it
 * has nothing to do now (its timers then fire). True if it did. */
static bool wait_for(struct req_run *r, size_t i)
{
	uint64_t waited = 0, step = 10000;

	post_more(r);
	rocemu_world_run(r->d.w);
	while (r->res->nsent <= i && waited < RQ_WAIT_NS && !r->col.err) {
		rocemu_world_advance(r->d.w, step);
		waited += step;
		if (step < RQ_STEP_MAX_NS)
			step *= 2;
		post_more(r);
	}
	return r->res->nsent > i;
}

static void feed(struct req_run *r, size_t k)
{
	const struct roce_cap_pkt *c = rp_pkt(r->p, k);

	if (c->f.truncated)
		return;
	if (c->f.link == ROCE_LINK_ETH) {
		rocemu_world_inject(r->d.w, c->data, c->caplen);
	} else {
		uint8_t buf[ROCE_FRAME_MAX];
		struct roce_frame f = c->f;
		f.link = ROCE_LINK_ETH;
		int n = roce_frame_build(&f, buf, sizeof(buf));
		if (n > 0)
			rocemu_world_inject(r->d.w, buf, (size_t)n);
	}
	rocemu_world_run(r->d.w);
	post_more(r);
}

static int diverged(struct req_run *r, size_t k, size_t i, const char *what,
		    FILE *out)
{
	const struct rp_plan *p = r->p;

	rp_head(out, p);
	fprintf(out, ": request %zu diverges: %s\n", i + 1, what);
	if (k < p->n)
		rp_line(out, "captured", &rp_pkt(p, k)->f, rp_pkt(p, k)->no,
			rp_rel(p, k));
	else
		fprintf(out, "    captured  (nothing more)\n");
	if (i < r->res->nsent)
		rp_line(out, "rocemu", &r->res->sent[i].f, 0, 0);
	else
		fprintf(out, "    rocemu    (nothing within %llu s)\n",
			(unsigned long long)(RQ_WAIT_NS / 1000000000ull));
	char qp[512];
	rocemu_qp_describe(r->d.qp, qp, sizeof(qp));
	fprintf(out, "    rocemu's QP: %s\n", qp);
	rp_head(out, p);
	fprintf(out, ": as requester, %zu WQEs posted, diverges at request "
		     "%zu\n", r->nmsgs, i + 1);
	return 1;
}

/*
 * A capture taken at the responder lacks what the network lost before it:
 * the captured requests then jump over PSNs, and the lost ones come again
 * later (RC sends them again). rocemu's request i is such a one when its
 * PSN lies after the last request compared and before the captured one
 * at k, and a later captured request carries it.
 */
static bool lost_before_capture(const struct req_run *r, size_t i, size_t k,
				uint32_t last, bool have_last)
{
	const struct rp_plan *p = r->p;
	uint32_t psn = r->res->sent[i].f.ib.bth.psn;
	uint32_t cap = ib_of(p, k)->bth.psn;

	if (!have_last || roce_psn_cmp(psn, last) <= 0 ||
	    roce_psn_cmp(psn, cap) >= 0 || roce_psn_cmp(cap, last) <= 0)
		return false;
	for (size_t j = k + 1; j < p->n; j++)
		if (rp_is_request(p, j) && ib_of(p, j)->bth.psn == psn)
			return true;
	return false;
}

/* True for an answer that asks the requester to send again: a NAK or an
 * RNR NAK (IBTA 9.7.5.2). */
static bool asks_again(const struct roce_cap_pkt *c)
{
	return (c->f.ib.exts & ROCE_EXT_AETH) &&
	       roce_aeth_type(c->f.ib.aeth.syndrome) != ROCE_AETH_ACK;
}

/* What the requests compared so far say of sending again: the highest
 * PSN, and the last NAK or RNR NAK until the requester has gone back to
 * its PSN and on to that highest one again. */
struct resend {
	bool have;
	uint32_t highest;
	bool asked, going_back;
	uint32_t from;		/* the NAK's PSN */
};

/*
 * A captured request the captured requester sent again by its transport
 * timer (IBTA 9.7.6.1.3): its PSN is not past the highest compared, and
 * no NAK or RNR NAK asked for it. Whether that timer fires before the ACK
 * comes is timing (DUP-REQ in the list of differences); rocemu, fed the
 * ACK as soon as it has sent what it answers, does not send it again.
 */
static bool timer_resend(const struct resend *s, uint32_t psn)
{
	return s->have && roce_psn_cmp(psn, s->highest) <= 0 &&
	       !(s->asked && roce_psn_cmp(psn, s->from) >= 0);
}

static void resend_compared(struct resend *s, uint32_t psn)
{
	if (!s->have || roce_psn_cmp(psn, s->highest) > 0)
		s->highest = psn;
	s->have = true;
	if (s->asked && psn == s->from)
		s->going_back = true;
	if (s->going_back && psn == s->highest)
		s->asked = s->going_back = false;
}

static int compare_all(struct req_run *r, bool verbose, FILE *out)
{
	const struct rp_plan *p = r->p;
	char text[RP_DIFF_LEN];
	size_t i = 0, answers = 0, lost = 0, resent = 0;
	uint32_t last = 0;
	bool have_last = false;
	struct resend rs = { 0 };

	for (size_t k = 0; k < p->n; k++) {
		r->col.ts_ns = rp_pkt(p, k)->ts_ns;
		if (rp_is_answer(p, k)) {
			feed(r, k);
			answers++;
			if (asks_again(rp_pkt(p, k))) {
				rs.asked = true;
				rs.going_back = false;
				rs.from = ib_of(p, k)->bth.psn;
			}
			continue;
		}
		if (!rp_is_request(p, k))
			continue;
		if (p->fl->kind == ROCE_FLOW_RC &&
		    timer_resend(&rs, ib_of(p, k)->bth.psn)) {
			resent++;
			continue;
		}
		if (!wait_for(r, i))
			return diverged(r, k, i, "rocemu sent no such request",
					out);
		const struct roce_frame *cf = &rp_pkt(p, k)->f;
		while (lost_before_capture(r, i, k, last, have_last)) {
			lost++;
			if (!wait_for(r, ++i))
				return diverged(r, k, i, "rocemu sent no such "
						"request", out);
		}
		if (rp_frame_diff(cf, &r->res->sent[i].f, text))
			return diverged(r, k, i, text, out);
		last = cf->ib.bth.psn;
		have_last = true;
		resend_compared(&rs, last);
		if (verbose)
			rp_line(out, "same", &rp_pkt(p, k)->f,
				rp_pkt(p, k)->no, rp_rel(p, k));
		i++;
	}
	rocemu_world_run(r->d.w);
	if (r->res->nsent > i)
		return diverged(r, p->n, i, "rocemu sent more", out);
	rp_head(out, p);
	fprintf(out, ": as requester, %zu WQEs posted, %zu requests the same, "
		     "%zu answers fed", r->nmsgs, i - lost, answers);
	if (lost)
		fprintf(out, ", %zu not in the capture (a gap in its PSNs: lost "
			     "before it)", lost);
	if (resent)
		fprintf(out, ", %zu sent again by its timer (timing: DUP-REQ, "
			     "IBTA 9.7.6.1.3)", resent);
	fprintf(out, ", no divergence\n");
	return 0;
}

int rp_run_requester(const struct rp_plan *p, bool verbose, FILE *out,
		     struct rp_result *res)
{
	struct req_run r = { .p = p, .res = res };

	memset(res, 0, sizeof(*res));
	int rc = setup(&r);
	if (!rc)
		rc = compare_all(&r, verbose, out);
	if (!rc && r.col.err)
		rc = r.col.err;
	teardown(&r);
	if (rc < 0) {
		uint64_t need = res->need;
		rp_result_free(res);
		res->need = need;
	}
	return rc;
}
