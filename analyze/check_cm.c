/* SPDX-License-Identifier: MIT */
/* CM rules: TIDs echoed, comm IDs consistent, message order, and RC data on the QPNs and PSNs the CM announced. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/dissect.h"
#include "check_local.h"

/* Rule names (docs/check.md gives their IBTA sections). */
#define R_TID "CM-TID"
#define R_COMM "CM-COMM-ID"
#define R_ORDER "CM-ORDER"
#define R_QPN "CM-QPN"
#define R_PSN "CM-PSN"

/* Where a connection is: what the last message in order moved it to. */
enum cm_state {
	CM_REQ,		/* REQ sent (MRA changes nothing we judge) */
	CM_REP,		/* REP sent: data may flow (COMM_EST) */
	CM_RTU,		/* established */
	CM_REJ,		/* rejected: nothing follows */
};

/* One connection or SIDR exchange. Side 0 is the active side (it sent the
 * REQ or SIDR_REQ), side 1 the passive one. */
struct cm_conn {
	uint8_t gid[2][16];
	uint32_t comm[2];	/* local comm IDs; comm[1] valid after REP */
	uint64_t req_tid;	/* of the REQ or SIDR_REQ */
	uint32_t qpn[2], psn[2]; /* announced by the REQ (0) and REP (1) */
	uint8_t state;		/* enum cm_state */
	bool sidr;		/* comm[0] is the SIDR request ID */
	bool dreq[2];		/* side d sent a DREQ */
	uint64_t dreq_tid[2];	/* of side d's last DREQ */
	bool data_seen[2];	/* side d's first request packet was seen */
	bool qpn_flagged[2];	/* data from side d to a wrong QPN reported */
	uint8_t rnr_retry[2];	/* RNR Retry Count the REQ (0), REP (1) asked */
	uint8_t depth[2];	/* Initiator Depth they announced */
};

struct chk_cm {
	struct cm_conn *conns;
	size_t n, cap;
};

void chk_cm_free(struct roce_check *c)
{
	if (!c->cm)
		return;
	free(c->cm->conns);
	free(c->cm);
	c->cm = NULL;
}

/* A new connection, or NULL when out of memory (then it is not judged). */
static struct cm_conn *conn_add(struct roce_check *c)
{
	if (!c->cm && !(c->cm = calloc(1, sizeof(*c->cm))))
		return NULL;
	struct chk_cm *t = c->cm;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct cm_conn *n = realloc(t->conns, cap * sizeof(*n));
		if (!n)
			return NULL;
		t->conns = n;
		t->cap = cap;
	}
	struct cm_conn *k = &t->conns[t->n++];
	memset(k, 0, sizeof(*k));
	return k;
}

/*
 * The newest connection (or SIDR exchange, with sidr) whose active side
 * has address act and comm ID comm, passive side address pas; NULL if
 * none.
 */
static struct cm_conn *conn_find(struct roce_check *c, const uint8_t *act,
				 const uint8_t *pas, uint32_t comm, bool sidr)
{
	if (!c->cm)
		return NULL;
	for (size_t i = c->cm->n; i-- > 0;) {
		struct cm_conn *k = &c->cm->conns[i];
		if (k->sidr == sidr && k->comm[0] == comm &&
		    !memcmp(k->gid[0], act, 16) && !memcmp(k->gid[1], pas, 16))
			return k;
	}
	return NULL;
}

/*
 * The connection of a message from src to dst carrying the comm IDs
 * local and remote: src is its active side (the connection is found by
 * local) or its passive side (by remote). *side is the sender's side.
 */
static struct cm_conn *conn_of(struct roce_check *c, const uint8_t *src,
			       const uint8_t *dst, uint32_t local,
			       uint32_t remote, unsigned *side)
{
	struct cm_conn *k = conn_find(c, src, dst, local, false);

	*side = 0;
	if (!k) {
		k = conn_find(c, dst, src, remote, false);
		*side = 1;
	}
	return k;
}

/* What a rule file reports a CM message with. */
struct cm_pkt {
	struct roce_check *c;
	uint64_t no;
	unsigned flow, dir;
	const uint8_t *src, *dst;
	const struct roce_cm_msg *m;
};

#define ERR(p, rule, ...)                                              \
	chk_report((p)->c, (p)->no, (p)->flow, (p)->dir, ROCE_CHECK_ERROR, \
		   rule, __VA_ARGS__)

static const char *name(const struct cm_pkt *p)
{
	return roce_cm_attr_name(p->m->attr_id);
}

/* A REQ opens a connection; the same REQ again is a retry, not an error. */
static void on_req(const struct cm_pkt *p)
{
	const struct roce_cm_req *r = &p->m->req;

	if (conn_find(p->c, p->src, p->dst, r->local_comm_id, false))
		return;
	struct cm_conn *k = conn_add(p->c);
	if (!k)
		return;
	memcpy(k->gid[0], p->src, 16);
	memcpy(k->gid[1], p->dst, 16);
	k->comm[0] = r->local_comm_id;
	k->req_tid = p->m->tid;
	k->qpn[0] = r->local_qpn;
	k->psn[0] = r->starting_psn;
	k->rnr_retry[0] = r->rnr_retry_count & 7;
	k->depth[0] = r->initiator_depth;
}

/* A REP, REJ or MRA of a REQ echoes its TID. */
static void tid_echoed(const struct cm_pkt *p, const struct cm_conn *k)
{
	if (p->m->tid != k->req_tid)
		ERR(p, R_TID,
		    "%s carries TID 0x%016llx, but the %s it answers had "
		    "0x%016llx: a response echoes its request's TID (13.4, MAD TransactionID)",
		    name(p), (unsigned long long)p->m->tid,
		    k->sidr ? "SIDR_REQ" : "REQ",
		    (unsigned long long)k->req_tid);
}

/* The REQ a passive side's answer names by its remote comm ID. */
static struct cm_conn *answered_req(const struct cm_pkt *p, uint32_t remote)
{
	struct cm_conn *k = conn_find(p->c, p->dst, p->src, remote, false);

	if (!k)
		ERR(p, R_COMM,
		    "%s names remote comm ID 0x%08x, but no REQ in the capture "
		    "from its receiver had that local comm ID (12.6)",
		    name(p), remote);
	return k;
}

static void on_rep(const struct cm_pkt *p)
{
	const struct roce_cm_rep *r = &p->m->rep;
	struct cm_conn *k = answered_req(p, r->remote_comm_id);

	if (!k)
		return;
	tid_echoed(p, k);
	if (k->state == CM_REJ) {
		ERR(p, R_ORDER, "REP after a REJ ended the connection (ch. 12 state diagram)");
		return;
	}
	if (k->state != CM_REQ) {	/* a repeated REP is legal */
		if (r->local_comm_id != k->comm[1])
			ERR(p, R_COMM,
			    "REP again with local comm ID 0x%08x, the first "
			    "had 0x%08x (12.6)", r->local_comm_id, k->comm[1]);
		return;
	}
	k->comm[1] = r->local_comm_id;
	k->qpn[1] = r->local_qpn;
	k->psn[1] = r->starting_psn;
	k->rnr_retry[1] = r->rnr_retry_count & 7;
	k->depth[1] = r->initiator_depth;
	k->state = CM_REP;
}

static void on_mra(const struct cm_pkt *p)
{
	const struct roce_cm_mra *r = &p->m->mra;

	if (r->msg_mraed != ROCE_CM_MSG_REQ)
		return;	/* an MRA of a REP or LAP: not judged */
	struct cm_conn *k = answered_req(p, r->remote_comm_id);
	if (!k)
		return;
	tid_echoed(p, k);
	if (k->state != CM_REQ)
		ERR(p, R_ORDER, "MRA of a REQ after the REQ was %s (ch. 12 state diagram)",
		    k->state == CM_REJ ? "rejected" : "answered by a REP");
}

static void on_rej(const struct cm_pkt *p)
{
	const struct roce_cm_rej *r = &p->m->rej;

	if (r->msg_rejected == ROCE_CM_MSG_REQ) {
		struct cm_conn *k = answered_req(p, r->remote_comm_id);
		if (!k)
			return;
		tid_echoed(p, k);
		k->state = CM_REJ;
		return;
	}
	/* A REJ of a REP (from the active side) or of another message. */
	unsigned side;
	struct cm_conn *k = conn_of(p->c, p->src, p->dst, r->local_comm_id,
				    r->remote_comm_id, &side);
	if (k)
		k->state = CM_REJ;
}

/* RTU, DREQ and DREP carry both comm IDs of an answered REQ. */
static struct cm_conn *both_ids(const struct cm_pkt *p, uint32_t local,
				uint32_t remote, unsigned *side)
{
	struct cm_conn *k = conn_of(p->c, p->src, p->dst, local, remote, side);

	if (!k) {
		ERR(p, R_COMM,
		    "%s carries comm IDs 0x%08x/0x%08x that no REQ between "
		    "these addresses had (12.6)", name(p), local, remote);
		return NULL;
	}
	if (k->state == CM_REQ) {
		ERR(p, R_ORDER, "%s before the REP: the order is REQ, REP, "
				"RTU (ch. 12 state diagram)", name(p));
		return NULL;
	}
	if (k->state == CM_REJ) {
		ERR(p, R_ORDER, "%s after a REJ ended the connection (ch. 12 state diagram)",
		    name(p));
		return NULL;
	}
	uint32_t want_l = k->comm[*side], want_r = k->comm[1 - *side];
	if (local != want_l || remote != want_r)
		ERR(p, R_COMM,
		    "%s carries local/remote comm IDs 0x%08x/0x%08x, the REQ "
		    "and REP gave its sender 0x%08x and its peer 0x%08x (12.6)",
		    name(p), local, remote, want_l, want_r);
	return k;
}

static void on_rtu(const struct cm_pkt *p)
{
	unsigned side;
	struct cm_conn *k = both_ids(p, p->m->rtu.local_comm_id,
				     p->m->rtu.remote_comm_id, &side);

	if (!k)
		return;
	if (side != 0)
		ERR(p, R_ORDER, "RTU from the passive side: the side that sent "
				"the REQ sends it (ch. 12 state diagram)");
	else
		k->state = CM_RTU;
}

static void on_dreq(const struct cm_pkt *p)
{
	const struct roce_cm_dreq *r = &p->m->dreq;
	unsigned side;
	struct cm_conn *k = both_ids(p, r->local_comm_id, r->remote_comm_id,
				     &side);

	if (!k)
		return;
	k->dreq[side] = true;
	k->dreq_tid[side] = p->m->tid;
	if (r->remote_qpn != k->qpn[1 - side])
		ERR(p, R_QPN,
		    "DREQ names remote QPN 0x%06x, but the %s announced 0x%06x "
		    "(12.6)", r->remote_qpn, side ? "REQ" : "REP",
		    k->qpn[1 - side]);
}

static void on_drep(const struct cm_pkt *p)
{
	unsigned side;
	struct cm_conn *k = both_ids(p, p->m->drep.local_comm_id,
				     p->m->drep.remote_comm_id, &side);

	if (!k)
		return;
	if (!k->dreq[1 - side])
		ERR(p, R_ORDER, "DREP with no DREQ from its peer before it: "
				"a DREP answers a DREQ (ch. 12 state diagram)");
	else if (p->m->tid != k->dreq_tid[1 - side])
		ERR(p, R_TID,
		    "DREP carries TID 0x%016llx, but the DREQ it answers had "
		    "0x%016llx: a response echoes its request's TID (13.4, MAD "
		    "TransactionID)",
		    (unsigned long long)p->m->tid,
		    (unsigned long long)k->dreq_tid[1 - side]);
}

static void on_sidr_req(const struct cm_pkt *p)
{
	uint32_t id = p->m->sidr_req.request_id;

	if (conn_find(p->c, p->src, p->dst, id, true))
		return;	/* a retry */
	struct cm_conn *k = conn_add(p->c);
	if (!k)
		return;
	memcpy(k->gid[0], p->src, 16);
	memcpy(k->gid[1], p->dst, 16);
	k->comm[0] = id;
	k->req_tid = p->m->tid;
	k->sidr = true;
}

static void on_sidr_rep(const struct cm_pkt *p)
{
	uint32_t id = p->m->sidr_rep.request_id;
	struct cm_conn *k = conn_find(p->c, p->dst, p->src, id, true);

	if (!k)
		ERR(p, R_COMM,
		    "SIDR_REP answers request ID 0x%08x, but no SIDR_REQ in the "
		    "capture from its receiver had it (ch. 12, SIDR)", id);
	else
		tid_echoed(p, k);
}

void chk_cm_mad(struct roce_check *c, uint64_t no, const struct roce_frame *f,
		unsigned flow, unsigned dir)
{
	struct roce_mad_view v;

	if (roce_frame_mad(f, &v) || v.kind != ROCE_MAD_CM)
		return;
	const struct cm_pkt p = { c, no, flow, dir, f->src_gid, f->dst_gid,
				  &v.cm };
	switch (v.cm.attr_id) {
	case ROCE_CM_ATTR_REQ:
		on_req(&p);
		break;
	case ROCE_CM_ATTR_MRA:
		on_mra(&p);
		break;
	case ROCE_CM_ATTR_REJ:
		on_rej(&p);
		break;
	case ROCE_CM_ATTR_REP:
		on_rep(&p);
		break;
	case ROCE_CM_ATTR_RTU:
		on_rtu(&p);
		break;
	case ROCE_CM_ATTR_DREQ:
		on_dreq(&p);
		break;
	case ROCE_CM_ATTR_DREP:
		on_drep(&p);
		break;
	case ROCE_CM_ATTR_SIDR_REQ:
		on_sidr_req(&p);
		break;
	case ROCE_CM_ATTR_SIDR_REP:
		on_sidr_rep(&p);
		break;
	default:
		break;	/* LAP, APR: not judged */
	}
}

/* Side of a connection an address is on, or -1. */
static int side_of(const struct cm_conn *k, const uint8_t *gid)
{
	if (!memcmp(k->gid[0], gid, 16))
		return 0;
	return memcmp(k->gid[1], gid, 16) ? -1 : 1;
}

void chk_cm_data(struct roce_check *c, const struct chk_pkt *p)
{
	if (!c->cm)
		return;
	const uint8_t *src = p->f->src_gid, *dst = p->f->dst_gid;
	uint32_t qpn = p->ib->bth.dqpn;
	struct cm_conn *wrong = NULL;
	int wside = 0;

	/* The newest connection between these addresses to this QPN. */
	for (size_t i = c->cm->n; i-- > 0;) {
		struct cm_conn *k = &c->cm->conns[i];
		int s = side_of(k, src);
		if (k->sidr || k->state == CM_REQ || k->state == CM_REJ ||
		    s < 0 || side_of(k, dst) != 1 - s)
			continue;
		if (k->qpn[1 - s] != qpn) {
			if (!wrong) {
				wrong = k;
				wside = s;
			}
			continue;
		}
		if (k->data_seen[s])
			return;
		k->data_seen[s] = true;
		/* What side s's requester was told: the RNR retries its
		 * peer's message asked of it, the depth it announced
		 * itself (12.7, REQ and REP fields). */
		p->req->cm_known = true;
		p->req->cm_rnr_retry = k->rnr_retry[1 - s];
		p->req->cm_depth = k->depth[s];
		/* A REQ's or REP's starting PSN is the one its sender
		 * receives with: side s sends from its peer's (Linux's
		 * ib_cm, and rxe on the wire, read both messages so). */
		if (p->psn != k->psn[1 - s])
			chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR,
				   R_PSN,
				   "the first request to QPN 0x%06x has PSN "
				   "0x%06x, but the %s announced starting PSN "
				   "0x%06x (12.6)",
				   qpn, p->psn, s ? "REQ" : "REP",
				   k->psn[1 - s]);
		return;
	}
	if (wrong && !wrong->qpn_flagged[wside]) {
		wrong->qpn_flagged[wside] = true;
		chk_report(c, p->no, p->flow, p->dir, ROCE_CHECK_ERROR, R_QPN,
			   "RC request to QPN 0x%06x, but the %s of the "
			   "connection between these addresses announced QPN "
			   "0x%06x (12.6)",
			   qpn, wside ? "REQ" : "REP", wrong->qpn[1 - wside]);
	}
}
