// SPDX-License-Identifier: MIT
/* rocemu-agent: work requests (receives, sends, window binds) and what comes back (completions, events, memory). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

/* The SGE of mr= off= len= (none when len is 0); 0, or -1 answered. */
/* Whether [off, off + len) lies in size bytes, the end never summed (the
 * agent builds alone on a device's host, without rocemu's range.h). */
static bool within(uint64_t off, uint64_t len, uint64_t size)
{
	return len <= size && off <= size - len;
}

static int sge_of(struct req *r, struct answer *a, struct agent_objs *o,
		  struct ibv_sge *sge, int *nsge)
{
	uint64_t off, len;
	unsigned m;

	if (req_num(r, "len", UINT32_MAX, true, 0, &len) ||
	    req_num(r, "off", UINT32_MAX, true, 0, &off))
		return ans_err(a, "EINVAL", "%s", r->err), -1;
	*nsge = 0;
	if (!len)
		return 0;
	if (mr_lookup(r, a, o, "mr", &m))
		return -1;
	if (!within(off, len, o->mr[m].size))
		return ans_err(a, "EINVAL", "off=%llu len=%llu is past mr %u's %zu bytes",
			       (unsigned long long)off, (unsigned long long)len,
			       m, o->mr[m].size), -1;
	sge->addr = (uintptr_t)o->mr[m].buf + off;
	sge->length = (uint32_t)len;
	sge->lkey = o->mr[m].mr->lkey;
	*nsge = 1;
	return 0;
}

int cmd_recv(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned q;
	uint64_t id;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge }, *bad;
	int n;
	bool srq = req_str(r, "srq") != NULL;	/* srq=N instead of qp=N */
	(void)d;

	if (srq && req_str(r, "qp"))
		return ans_err(a, "EINVAL", "recv takes qp= or srq=, not both");
	if (obj_lookup(r, a, srq ? "srq" : "qp", srq ? (void *const *)o->srq :
		       (void *const *)o->qp, &q) || sge_of(r, a, o, &sge, &n))
		return 0;
	if (req_num(r, "id", UINT64_MAX, true, 0, &id))
		return ans_err(a, "EINVAL", "%s", r->err);
	wr.wr_id = id;
	wr.num_sge = n;
	int rc = srq ? ibv_post_srq_recv(o->srq[q], &wr, &bad) :
		 ibv_post_recv(o->qp[q], &wr, &bad);
	if (rc)
		return ans_errno(a, rc, srq ? "ibv_post_srq_recv" : "ibv_post_recv");
	ans_add(a, "ok");
	return 0;
}

static const struct { const char *name; enum ibv_wr_opcode op; } ops[] = {
	{ "send", IBV_WR_SEND }, { "send_imm", IBV_WR_SEND_WITH_IMM },
	{ "send_inv", IBV_WR_SEND_WITH_INV }, { "write", IBV_WR_RDMA_WRITE },
	{ "write_imm", IBV_WR_RDMA_WRITE_WITH_IMM }, { "read", IBV_WR_RDMA_READ },
	{ "cas", IBV_WR_ATOMIC_CMP_AND_SWP }, { "faa", IBV_WR_ATOMIC_FETCH_AND_ADD },
};

/* The op's own words: remote address and key, immediate, operands, UD. */
static int op_words(struct req *r, struct agent_objs *o, struct ibv_send_wr *wr)
{
	uint64_t raddr = 0, rkey = 0, imm, inv, cmp, swap, add, dqpn, qkey, v;
	bool remote = wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM &&
		      wr->opcode != IBV_WR_SEND_WITH_INV;

	if ((remote && (req_num(r, "raddr", UINT64_MAX, false, 0, &raddr) ||
			req_num(r, "rkey", UINT32_MAX, false, 0, &rkey))) ||
	    req_num(r, "imm", UINT32_MAX, true, 0, &imm) ||
	    req_num(r, "inv_rkey", UINT32_MAX, true, 0, &inv) ||
	    req_num(r, "compare", UINT64_MAX, true, 0, &cmp) ||
	    req_num(r, "swap", UINT64_MAX, true, 0, &swap) ||
	    req_num(r, "add", UINT64_MAX, true, 0, &add))
		return -1;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.rkey = (uint32_t)rkey;
		wr->wr.atomic.compare_add = wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? add : cmp;
		wr->wr.atomic.swap = swap;
	} else if (remote) {
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = (uint32_t)rkey;
	}
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		wr->invalidate_rkey = (uint32_t)inv;
	else
		wr->imm_data = htonl((uint32_t)imm);
	if (!req_str(r, "ah"))
		return 0;
	unsigned ah;
	if (req_num(r, "ah", AGENT_MAX_OBJS, false, 0, &v) || !v || !o->ah[v] ||
	    req_num(r, "dqpn", 0xffffff, false, 0, &dqpn) ||
	    req_num(r, "qkey", UINT32_MAX, false, 0, &qkey)) {
		if (!r->err[0])
			snprintf(r->err, sizeof(r->err), "no ah number %llu", (unsigned long long)v);
		return -1;
	}
	ah = (unsigned)v;
	wr->wr.ud.ah = o->ah[ah];
	wr->wr.ud.remote_qpn = (uint32_t)dqpn;
	wr->wr.ud.remote_qkey = (uint32_t)qkey;
	return 0;
}

/* struct ibv_qp_ex as rdma-core 45 ends it: wr_flush after
 * wr_atomic_write, the last member of older headers. Read only on a QP
 * the library made with IBV_QP_EX_WITH_FLUSH (cmd_qp), which a library
 * without it refuses. */
struct qp_ex45 {
	struct ibv_qp_ex x;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			 size_t len, uint8_t type, uint8_t level);
};

/* op=atomic_write (its 8 bytes the SGE's) and op=flush (flush_len=,
 * type=, level=): the extended API's ibv_wr_* calls, the only way to post
 * them. 0, the answer given. */
static int post_ex(struct agent_objs *o, unsigned q, struct req *r, struct answer *a,
		   bool flush, const struct ibv_sge *sge, int nsge)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(o->qp[q]);
	uint64_t id, raddr, rkey, flen, type, level;

	if (!qx)
		return ans_err(a, "EOPNOTSUPP", "qp %u was made without ops=%s", q,
			       flush ? "flush" : "atomic_write");
	r->err[0] = 0;
	if (req_num(r, "id", UINT64_MAX, true, 0, &id) ||
	    req_num(r, "raddr", UINT64_MAX, false, 0, &raddr) ||
	    req_num(r, "rkey", UINT32_MAX, false, 0, &rkey) ||
	    req_num(r, "flush_len", UINT32_MAX, true, 0, &flen) ||
	    req_num(r, "type", 0xf, true, 1, &type) || req_num(r, "level", 3, true, 0, &level))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (!flush && (nsge != 1 || sge->length != 8))
		return ans_err(a, "EINVAL", "atomic_write takes mr= off= len=8: its value");
	ibv_wr_start(qx);
	qx->wr_id = id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	if (flush)
		((struct qp_ex45 *)(void *)qx)->wr_flush(qx, (uint32_t)rkey, raddr, flen,
							 (uint8_t)type, (uint8_t)level);
	else
		ibv_wr_atomic_write(qx, (uint32_t)rkey, raddr,
				    (const void *)(uintptr_t)sge->addr);
	int rc = ibv_wr_complete(qx);
	if (rc)
		return ans_errno(a, rc, "ibv_wr_complete");
	ans_add(a, "ok");
	return 0;
}

int cmd_send(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned q;
	uint64_t id, inl, fence, se;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge }, *bad;
	const char *op = req_str(r, "op");
	size_t k = 0;
	(void)d;

	if (obj_lookup(r, a, "qp", (void *const *)o->qp, &q) ||
	    sge_of(r, a, o, &sge, &wr.num_sge))
		return 0;
	if (op && (!strcmp(op, "flush") || !strcmp(op, "atomic_write")))
		return post_ex(o, q, r, a, op[0] == 'f', &sge, wr.num_sge);
	while (op && k < sizeof(ops) / sizeof(ops[0]) && strcmp(ops[k].name, op))
		k++;
	if (!op || k == sizeof(ops) / sizeof(ops[0]))
		return ans_err(a, "EINVAL", "send needs op=send, send_imm, send_inv, write, "
			       "write_imm, read, cas, faa, atomic_write or flush");
	wr.opcode = ops[k].op;
	r->err[0] = 0;
	if (req_num(r, "id", UINT64_MAX, true, 0, &id) ||
	    req_num(r, "inline", 1, true, 0, &inl) || req_num(r, "fence", 1, true, 0, &fence) ||
	    req_num(r, "se", 1, true, 0, &se) || op_words(r, o, &wr))
		return ans_err(a, r->err[0] ? "EINVAL" : "ENOENT", "%s",
			       r->err[0] ? r->err : "no such ah");
	wr.wr_id = id;
	wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0) |
			(fence ? IBV_SEND_FENCE : 0) | (se ? IBV_SEND_SOLICITED : 0);
	int rc = ibv_post_send(o->qp[q], &wr, &bad);
	if (rc)
		return ans_errno(a, rc, "ibv_post_send");
	ans_add(a, "ok");
	return 0;
}

int cmd_bind(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned q, w, m;
	uint64_t off, len, id;
	int access;
	(void)d;

	if (obj_lookup(r, a, "qp", (void *const *)o->qp, &q) ||
	    obj_lookup(r, a, "mw", (void *const *)o->mw, &w) || mr_lookup(r, a, o, "mr", &m))
		return 0;
	if (req_num(r, "off", UINT32_MAX, false, 0, &off) ||
	    req_num(r, "len", UINT32_MAX, false, 0, &len) ||
	    req_num(r, "id", UINT64_MAX, true, 0, &id) || req_flags(r, "access", 0, &access))
		return ans_err(a, "EINVAL", "%s", r->err);
	struct ibv_mw_bind_info bi = {
		.mr = o->mr[m].mr, .addr = (uintptr_t)o->mr[m].buf + off, .length = len,
		.mw_access_flags = (unsigned)access,
	};
	struct ibv_mw *mw = o->mw[w];
	if (mw->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED, .bind_info = bi };
		int rc = ibv_bind_mw(o->qp[q], mw, &b);
		if (rc)
			return ans_errno(a, rc, "ibv_bind_mw");
		ans_add(a, "ok mw=%u rkey=%#x", w, mw->rkey);
		return 0;
	}
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = bi;
	int rc = ibv_post_send(o->qp[q], &wr, &bad);
	if (rc)
		return ans_errno(a, rc, "ibv_post_send (bind)");
	ans_add(a, "ok mw=%u rkey=%#x", w, rkey);
	return 0;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static const char *wc_opcode(enum ibv_wc_opcode op)
{
	/* not in every header's enum: compared as numbers */
	if ((int)op == AGENT_WC_FLUSH)
		return "flush";
	if ((int)op == AGENT_WC_ATOMIC_WRITE)
		return "atomic_write";
	switch (op) {
	case IBV_WC_SEND: return "send";
	case IBV_WC_RDMA_WRITE: return "write";
	case IBV_WC_RDMA_READ: return "read";
	case IBV_WC_COMP_SWAP: return "cas";
	case IBV_WC_FETCH_ADD: return "faa";
	case IBV_WC_BIND_MW: return "bind_mw";
	case IBV_WC_LOCAL_INV: return "local_inv";
	case IBV_WC_RECV: return "recv";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "recv_imm";
	default: return "other";
	}
}

/* A library string with its spaces as '_': one word on the line. */
static void add_word(struct answer *a, const char *key, const char *s)
{
	ans_add(a, " %s=", key);
	for (; *s; s++)
		ans_add(a, "%c", *s == ' ' ? '_' : *s);
}

void poll_answer(struct ibv_cq *cq, unsigned wait_ms, struct answer *a)
{
	struct ibv_wc wc;
	int n;

	for (unsigned waited = 0; (n = ibv_poll_cq(cq, 1, &wc)) == 0 && waited < wait_ms;
	     waited++)
		sleep_ms(1);
	if (n < 0) {
		ans_err(a, "EIO", "ibv_poll_cq failed");
		return;
	}
	if (n == 0) {
		ans_add(a, "ok none");
		return;
	}
	ans_add(a, "ok id=%llu", (unsigned long long)wc.wr_id);
	add_word(a, "status", ibv_wc_status_str(wc.status));
	ans_add(a, " opcode=%s byte_len=%u", wc.status == IBV_WC_SUCCESS ?
		wc_opcode(wc.opcode) : "unknown", wc.byte_len);
	if (wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_IMM))
		ans_add(a, " imm=%#x", ntohl(wc.imm_data));
	if (wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV))
		ans_add(a, " inv_rkey=%#x", wc.invalidated_rkey);
	if (wc.status == IBV_WC_SUCCESS && (wc.opcode & IBV_WC_RECV))
		ans_add(a, " src_qp=%#x", wc.src_qp);
	ans_add(a, " qpn=%#x", wc.qp_num);
}

int cmd_poll(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned c;
	uint64_t wait;
	(void)d;

	if (obj_lookup(r, a, "cq", (void *const *)o->cq, &c))
		return 0;
	if (req_num(r, "wait_ms", 60000, true, 0, &wait))
		return ans_err(a, "EINVAL", "%s", r->err);
	poll_answer(o->cq[c], (unsigned)wait, a);
	return 0;
}

int cmd_event(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	uint64_t wait;
	struct ibv_async_event ev;
	struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };

	if (req_num(r, "wait_ms", 60000, true, 0, &wait))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (poll(&p, 1, (int)wait) <= 0 || ibv_get_async_event(d->ctx, &ev)) {
		ans_add(a, "ok none");
		return 0;
	}
	ans_add(a, "ok");
	add_word(a, "event", ibv_event_type_str(ev.event_type));
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++)
		if (o->qp[i] && o->qp[i] == ev.element.qp &&
		    ev.event_type != IBV_EVENT_CQ_ERR && ev.event_type != IBV_EVENT_PORT_ACTIVE &&
		    ev.event_type != IBV_EVENT_PORT_ERR)
			ans_add(a, " qp=%u", i);
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++)
		if (o->srq[i] && o->srq[i] == ev.element.srq &&
		    (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED ||
		     ev.event_type == IBV_EVENT_SRQ_ERR))
			ans_add(a, " srq=%u", i);
	ibv_ack_async_event(&ev);
	return 0;
}

/* off= len= inside mr=: 0 with *m set, or -1 answered. */
static int range_of(struct req *r, struct answer *a, struct agent_objs *o, unsigned *m,
		    uint64_t *off, uint64_t *len, uint64_t maxlen)
{
	if (mr_lookup(r, a, o, "mr", m))
		return -1;
	if (req_num(r, "off", UINT32_MAX, false, 0, off) ||
	    req_num(r, "len", maxlen, false, 0, len))
		return ans_err(a, "EINVAL", "%s", r->err), -1;
	if (*off + *len > o->mr[*m].size)
		return ans_err(a, "EINVAL", "off+len %llu is past mr %u's %zu bytes",
			       (unsigned long long)(*off + *len), *m, o->mr[*m].size), -1;
	return 0;
}

int cmd_read(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned m;
	uint64_t off, len;
	(void)d;

	if (range_of(r, a, o, &m, &off, &len, AGENT_READ_MAX))
		return 0;
	ans_add(a, "ok data=");
	for (uint64_t i = 0; i < len; i++)
		ans_add(a, "%02x", o->mr[m].buf[off + i]);
	return 0;
}

int cmd_write(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned m;
	uint64_t off;
	const char *hex = req_str(r, "data");
	(void)d;

	if (mr_lookup(r, a, o, "mr", &m))
		return 0;
	size_t n = hex ? strlen(hex) : 0;
	if (req_num(r, "off", UINT32_MAX, false, 0, &off) || !hex || n % 2 ||
	    strspn(hex, "0123456789abcdefABCDEF") != n)
		return ans_err(a, "EINVAL", "write needs off= and data= an even number of hex digits");
	if (!within(off, n / 2, o->mr[m].size))
		return ans_err(a, "EINVAL", "the data runs past mr %u's %zu bytes", m, o->mr[m].size);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
		o->mr[m].buf[off + i] = (uint8_t)v;
	}
	ans_add(a, "ok");
	return 0;
}
