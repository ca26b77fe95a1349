/* SPDX-License-Identifier: MIT */
/* What a captured flow implies for an emulated responder: MTU, memory, RNR timer, and which requests it accepted. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "rocemu/aeth.h"
#include "rocemu/dissect.h"
#include "rocemu/psn.h"
#include "rocemu/range.h"

static int ann_cmp(const void *a, const void *b)
{
	const struct rp_cm_ann *x = a, *y = b;

	if (x->qpn != y->qpn)
		return x->qpn < y->qpn ? -1 : 1;
	return memcmp(x->gid, y->gid, 16);
}

/* The CM REQs and REPs of the capture, what each announced for its
 * sender's QP, sorted for rp_plan_make's look-ups (one per flow). A
 * later announcement for the same QP adds to the list; the look-up
 * takes the largest. 0 or -ENOMEM. */
static int index_cm(struct rp_index *ix, const struct roce_capture *cap)
{
	struct roce_mad_view v;
	size_t cap_ann = 0;

	for (size_t k = 0; k < cap->n; k++) {
		const struct roce_frame *f = &cap->pkts[k].f;
		if (roce_frame_mad(f, &v) || v.kind != ROCE_MAD_CM ||
		    (v.cm.attr_id != ROCE_CM_ATTR_REQ &&
		     v.cm.attr_id != ROCE_CM_ATTR_REP))
			continue;
		if (ix->nann == cap_ann) {
			cap_ann = cap_ann ? 2 * cap_ann : 8;
			void *n = realloc(ix->ann, cap_ann * sizeof(*ix->ann));
			if (!n)
				return -ENOMEM;
			ix->ann = n;
		}
		struct rp_cm_ann *a = &ix->ann[ix->nann++];
		bool req = v.cm.attr_id == ROCE_CM_ATTR_REQ;
		memcpy(a->gid, f->src_gid, 16);
		a->qpn = req ? v.cm.req.local_qpn : v.cm.rep.local_qpn;
		a->responder_resources = req ? v.cm.req.responder_resources
					     : v.cm.rep.responder_resources;
		a->initiator_depth = req ? v.cm.req.initiator_depth
					 : v.cm.rep.initiator_depth;
	}
	if (ix->nann)
		qsort(ix->ann, ix->nann, sizeof(*ix->ann), ann_cmp);
	return 0;
}

int rp_index_make(struct rp_index *ix, const struct roce_capture *cap)
{
	unsigned nfl = roce_flows_count(cap->flows);

	memset(ix, 0, sizeof(*ix));
	ix->start = calloc((size_t)nfl + 1, sizeof(*ix->start));
	ix->pk = calloc(cap->n ? cap->n : 1, sizeof(*ix->pk));
	if (!ix->start || !ix->pk) {
		rp_index_free(ix);
		return -ENOMEM;
	}
	/* counts, then where each flow's run begins, then the packets */
	for (size_t k = 0; k < cap->n; k++)
		ix->start[cap->pkts[k].flow + 1]++;
	for (unsigned f = 0; f < nfl; f++)
		ix->start[f + 1] += ix->start[f];
	size_t *at = calloc(nfl ? nfl : 1, sizeof(*at));
	if (!at) {
		rp_index_free(ix);
		return -ENOMEM;
	}
	for (size_t k = 0; k < cap->n; k++) {
		unsigned f = cap->pkts[k].flow;
		ix->pk[ix->start[f] + at[f]++] = &cap->pkts[k];
	}
	free(at);
	ix->nflows = nfl;
	if (index_cm(ix, cap)) {
		rp_index_free(ix);
		return -ENOMEM;
	}
	return 0;
}

void rp_index_free(struct rp_index *ix)
{
	free(ix->start);
	free(ix->pk);
	free(ix->ann);
	memset(ix, 0, sizeof(*ix));
}

static unsigned op_flags(const struct roce_cap_pkt *c)
{
	return c->f.ib.op ? c->f.ib.op->flags : 0;
}

bool rp_is_request(const struct rp_plan *p, size_t k)
{
	const struct roce_cap_pkt *c = rp_pkt(p, k);

	return c->flow == p->fl->id && c->dir == p->req &&
	       (op_flags(c) & ROCE_OPF_REQ);
}

bool rp_is_answer(const struct rp_plan *p, size_t k)
{
	const struct roce_cap_pkt *c = rp_pkt(p, k);

	return c->flow == p->fl->id && c->dir != p->req &&
	       (op_flags(c) & ROCE_OPF_RESP);
}

static bool has_aeth(const struct roce_cap_pkt *c)
{
	return c->f.ib.exts & ROCE_EXT_AETH;
}

/* V_FAILED: refused with a NAK invalid request or remote operational
 * error, which a SEND gets when the receive cannot hold it */
enum { V_REFUSED, V_ACCEPTED, V_PENDING, V_FAILED };

bool rp_accepted(const struct rp_plan *p, size_t k)
{
	return !p->verdict || p->verdict[k] == V_ACCEPTED;
}

bool rp_failed(const struct rp_plan *p, size_t k)
{
	return p->verdict && p->verdict[k] == V_FAILED;
}
#define NONE SIZE_MAX

/*
 * The requests no answer has decided yet, in PSN order (at most one per
 * PSN: a request sent again decides the one before), and the newest
 * request of each PSN (open addressing, never deleted from: an entry
 * counts only while its request is pending).
 */
struct pending {
	struct rp_plan *p;
	size_t *prev, *next, head, tail;
	uint32_t *key;		/* PSN, or UINT32_MAX for an empty slot */
	size_t *val, mask;	/* val: the request of key's slot */
};

static uint32_t psn_of(const struct rp_plan *p, size_t k)
{
	return rp_pkt(p, k)->f.ib.bth.psn;
}

/* The slot of psn in the table: its own, or the empty one it would
 * take (the table is at most half full). */
static size_t slot(const struct pending *q, uint32_t psn)
{
	size_t h = (psn * 2654435761u) & q->mask;

	while (q->key[h] != UINT32_MAX && q->key[h] != psn)
		h = (h + 1) & q->mask;
	return h;
}

/* The pending request of PSN psn, or NONE. */
static size_t pending_of(const struct pending *q, uint32_t psn)
{
	size_t h = slot(q, psn), k = q->val[h];

	return q->key[h] == psn && q->p->verdict[k] == V_PENDING ? k : NONE;
}

static void unlink_req(struct pending *q, size_t k, uint8_t verdict)
{
	size_t a = q->prev[k], b = q->next[k];

	*(a == NONE ? &q->head : &q->next[a]) = b;
	*(b == NONE ? &q->tail : &q->prev[b]) = a;
	q->p->verdict[k] = verdict;
}

/* Links k in after a (NONE: first). */
static void link_after(struct pending *q, size_t a, size_t k)
{
	size_t b = a == NONE ? q->head : q->next[a];

	q->prev[k] = a;
	q->next[k] = b;
	*(a == NONE ? &q->head : &q->next[a]) = k;
	*(b == NONE ? &q->tail : &q->prev[b]) = k;
}

/* The last pending request before PSN psn, walking back from the
 * newest, or NONE. */
static size_t walk_back(struct pending *q, uint32_t psn)
{
	size_t a = q->tail;

	while (a != NONE && roce_psn_cmp(psn_of(q->p, a), psn) > 0)
		a = q->prev[a];
	return a;
}

/* Request k (PSN psn) is pending: in place among the others. Requests
 * come mostly in PSN order, and one sent again mostly after its
 * predecessor's PSN was sent again, so the walk is mostly none. */
static void add_req(struct pending *q, size_t k, uint32_t psn)
{
	size_t a = q->tail;

	if (a != NONE && roce_psn_cmp(psn, psn_of(q->p, a)) < 0) {
		size_t b = pending_of(q, roce_psn_add(psn, 1));
		a = pending_of(q, roce_psn_add(psn, ROCE_PSN_MASK));
		if (a == NONE)
			a = b != NONE ? q->prev[b] : walk_back(q, psn);
	}
	link_after(q, a, k);
	q->p->verdict[k] = V_PENDING;
	size_t h = slot(q, psn);
	q->key[h] = psn;	/* one key per request at most */
	q->val[h] = k;
}

/* Answer k decides every pending request at or before its PSN: the first
 * answer at or after a request's PSN covers it (answers come in PSN
 * order) unless it is a NAK of that very PSN. */
static void answer(struct pending *q, size_t k)
{
	const struct roce_cap_pkt *c = rp_pkt(q->p, k);
	uint32_t psn = c->f.ib.bth.psn;
	bool ack = !has_aeth(c) ||
		   roce_aeth_type(c->f.ib.aeth.syndrome) == ROCE_AETH_ACK;

	uint8_t no = V_REFUSED;

	if (has_aeth(c) && (c->f.ib.aeth.syndrome == ROCE_AETH_NAK_INV_REQ ||
			    c->f.ib.aeth.syndrome == ROCE_AETH_NAK_REM_OP))
		no = V_FAILED;
	while (q->head != NONE &&
	       roce_psn_cmp(psn, psn_of(q->p, q->head)) >= 0) {
		size_t r = q->head;
		bool ok = ack || psn_of(q->p, r) != psn;
		unlink_req(q, r, ok ? V_ACCEPTED : no);
	}
}

/*
 * Decides rp_accepted for every request in one pass over the flow, up to
 * its last answer (past it nothing decides): a request is decided by the
 * next sending of its PSN (accepted: judged there) or by the first answer
 * at or beyond its PSN, whichever comes first; one left pending is
 * accepted. Returns 0 or -ENOMEM.
 */
static int decide(struct rp_plan *p)
{
	struct pending q = { .p = p, .head = NONE, .tail = NONE };
	size_t cap = 2;
	int rc = -ENOMEM;

	if (!p->answers_end)
		return 0;
	while (cap < 2 * p->answers_end)
		cap *= 2;
	q.mask = cap - 1;
	p->verdict = malloc(p->n);
	q.prev = malloc(p->answers_end * sizeof(*q.prev));
	q.next = malloc(p->answers_end * sizeof(*q.next));
	q.key = malloc(cap * sizeof(*q.key));
	q.val = malloc(cap * sizeof(*q.val));
	if (!p->verdict || !q.prev || !q.next || !q.key || !q.val)
		goto out;
	memset(p->verdict, V_ACCEPTED, p->n);
	/* every key empty: no PSN is UINT32_MAX */
	memset(q.key, 0xff, cap * sizeof(*q.key));
	for (size_t k = 0; k < p->answers_end; k++) {
		if (rp_is_request(p, k)) {
			uint32_t psn = psn_of(p, k);
			size_t old = pending_of(&q, psn);
			if (old != NONE)	/* sent again: judged there */
				unlink_req(&q, old, V_ACCEPTED);
			add_req(&q, k, psn);
		} else if (rp_is_answer(p, k)) {
			answer(&q, k);
		}
	}
	for (size_t k = q.head; k != NONE; k = q.next[k])
		p->verdict[k] = V_ACCEPTED;
	rc = 0;
out:
	free(q.prev);
	free(q.next);
	free(q.key);
	free(q.val);
	return rc;
}

uint32_t rp_read_packets(uint32_t len, unsigned mtu)
{
	return len ? (uint32_t)(((uint64_t)len + mtu - 1) / mtu) : 1;
}

/* The first READ response with PSN want among packets [lo, hi), or
 * SIZE_MAX. */
static size_t read_response(const struct rp_plan *p, size_t lo, size_t hi,
			    uint32_t want)
{
	for (size_t j = lo; j < hi; j++) {
		const struct roce_cap_pkt *c = rp_pkt(p, j);
		if (rp_is_answer(p, j) && (op_flags(c) & ROCE_OPF_READ) &&
		    c->f.ib.bth.psn == want)
			return j;
	}
	return SIZE_MAX;
}

int rp_read_data(const struct rp_plan *p, size_t k, uint8_t *buf,
		 uint32_t len)
{
	uint32_t psn = rp_pkt(p, k)->f.ib.bth.psn;
	uint32_t n = rp_read_packets(len, p->mtu_bytes), got = 0;

	size_t from = k + 1;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t want = roce_psn_add(psn, i), off = i * p->mtu_bytes;
		/* responses come in PSN order: look on from the last one
		 * found, then (a response sent again) from k on */
		size_t j = read_response(p, from, p->answers_end, want);
		if (j == SIZE_MAX)
			j = read_response(p, k + 1, from, want);
		if (j == SIZE_MAX)
			return -ENOENT;
		from = j + 1;
		const struct roce_ib *ib = &rp_pkt(p, j)->f.ib;
		uint32_t take = ib->payload_avail;
		if (!roce_range_inside(off, take, 0, len))
			take = len > off ? len - off : 0;
		if (take)	/* a malformed one may have no payload (NULL) */
			memcpy(buf + off, ib->payload, take);
		got += take;
	}
	return got == len ? 0 : -ENOENT;
}

int rp_atomic_orig(const struct rp_plan *p, size_t k, uint64_t *v)
{
	uint32_t psn = rp_pkt(p, k)->f.ib.bth.psn;

	for (size_t j = k + 1; j < p->answers_end; j++) {
		const struct roce_cap_pkt *c = rp_pkt(p, j);
		if (rp_is_answer(p, j) && (c->f.ib.exts & ROCE_EXT_ATMACK) &&
		    c->f.ib.bth.psn == psn) {
			*v = c->f.ib.atmack;
			return 0;
		}
	}
	return -ENOENT;
}

struct rp_region *rp_region_of(const struct rp_plan *p, uint32_t rkey)
{
	for (size_t i = 0; i < p->nregions; i++)
		if (p->regions[i].rkey == rkey)
			return &p->regions[i];
	return NULL;
}

/* A region for rkey, reaching nothing yet, or NULL (-ENOMEM). */
static struct rp_region *new_region(struct rp_plan *p, uint32_t rkey)
{
	struct rp_region *r = realloc(p->regions,
				      (p->nregions + 1) * sizeof(*r));

	if (!r)
		return NULL;
	p->regions = r;
	r = &p->regions[p->nregions++];
	memset(r, 0, sizeof(*r));
	r->rkey = rkey;
	return r;
}

/*
 * What request k, accepted or refused as rp_accepted says, tells of the
 * keys a SEND with Invalidate named: an accepted one notes its key; a
 * request refused after that with such a key shows it was a type 2
 * window the SEND invalidated (IBTA 10.6.7.2: an MR's key stays valid,
 * and only a window bound through the QP may be invalidated by a peer).
 * 0 or -ENOMEM.
 */
static int note_invalidation(struct rp_plan *p, size_t k, bool has_range,
			     uint32_t rkey)
{
	const struct roce_ib *ib = &rp_pkt(p, k)->f.ib;
	struct rp_region *r;

	if ((ib->exts & ROCE_EXT_IETH) && rp_accepted(p, k)) {
		r = rp_region_of(p, ib->ieth);
		if (!r && !(r = new_region(p, ib->ieth)))
			return -ENOMEM;
		if (!r->invalidated) {
			r->invalidated = true;
			r->inv_at = k;
		}
	}
	if (has_range && !rp_accepted(p, k) &&
	    (r = rp_region_of(p, rkey)) && r->invalidated && !r->window &&
	    r->inv_at < k) {
		r->window = true;
		p->windows++;
	}
	return 0;
}

/* Widens rkey's region to [va, va + len), creating it: 0, -ERANGE when
 * the range wraps past 2^64 (nothing changed), or -ENOMEM. */
static int region_add(struct rp_plan *p, uint32_t rkey, uint64_t va,
		      uint64_t len)
{
	struct rp_region *r = rp_region_of(p, rkey);
	uint64_t end;

	if (!roce_range_end(va, len, &end))
		return -ERANGE;
	if (!r) {
		r = new_region(p, rkey);
		if (!r)
			return -ENOMEM;
	}
	if (!r->sized) {
		r->sized = true;
		r->lo = va;
		r->hi = end;
	}
	if (va < r->lo)
		r->lo = va;
	if (end > r->hi)
		r->hi = end;
	return 0;
}

/* The remote range request k names, if it names one. */
static bool remote_range(const struct roce_cap_pkt *c, uint32_t *rkey,
			 uint64_t *va, uint64_t *len)
{
	const struct roce_ib *ib = &c->f.ib;

	if (ib->exts & ROCE_EXT_RETH) {
		*rkey = ib->reth.rkey;
		*va = ib->reth.va;
		*len = ib->reth.len;
		return true;
	}
	if (ib->exts & ROCE_EXT_ATMETH) {
		*rkey = ib->atmeth.rkey;
		*va = ib->atmeth.va;
		*len = 8;
		return true;
	}
	return false;
}

/* The path MTU: a FIRST or MIDDLE packet carries exactly one (one of a
 * size that is no MTU breaks a rule and tells nothing); without them,
 * the smallest IBTA MTU that holds the largest payload. */
static unsigned infer_mtu(const struct rp_plan *p)
{
	uint32_t most = 0;

	for (size_t k = 0; k < p->n; k++) {
		const struct roce_cap_pkt *c = rp_pkt(p, k);
		uint32_t n = c->f.ib.payload_len;
		if (c->flow != p->fl->id)
			continue;
		if ((op_flags(c) & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE)) &&
		    roce_is_path_mtu(n))
			return n;
		if (c->f.ib.payload_len > most)
			most = c->f.ib.payload_len;
	}
	unsigned mtu = 256;
	while (mtu < most && mtu < 4096)
		mtu *= 2;
	return mtu < 1024 ? 1024 : mtu;
}

/* Sizes of SEND messages, for the receive buffers. */
static void count_send(struct rp_plan *p, const struct roce_cap_pkt *c,
		       uint32_t *msg)
{
	unsigned fl = op_flags(c);

	if (!(fl & ROCE_OPF_SEND))
		return;
	if (fl & (ROCE_OPF_FIRST | ROCE_OPF_ONLY))
		*msg = 0;
	*msg += c->f.ib.payload_len;
	if (*msg > p->max_send)
		p->max_send = *msg;
}

static int scan(struct rp_plan *p)
{
	uint32_t msg = 0;

	for (size_t k = 0; k < p->n; k++) {
		const struct roce_cap_pkt *c = rp_pkt(p, k);
		if (c->flow == p->fl->id)
			p->carried += c->f.ib.payload_avail;
		if (rp_is_answer(p, k)) {
			p->nresp++;
			if (has_aeth(c) && !p->rnr_code &&
			    roce_aeth_type(c->f.ib.aeth.syndrome) ==
				    ROCE_AETH_RNR_NAK)
				p->rnr_code = (uint8_t)roce_aeth_value(
					c->f.ib.aeth.syndrome);
			continue;
		}
		if (!rp_is_request(p, k))
			continue;
		if (!p->nreq++) {
			p->first_psn = c->f.ib.bth.psn;
			p->qkey = c->f.ib.deth.qkey;
		}
		count_send(p, c, &msg);
		if (op_flags(c) & ROCE_OPF_READ)
			p->read_bytes += c->f.ib.reth.len;
		uint32_t rkey = 0;
		uint64_t va = 0, len = 0;
		bool ranged = remote_range(c, &rkey, &va, &len);
		if (note_invalidation(p, k, ranged, rkey))
			return -ENOMEM;
		if (!ranged || !rp_accepted(p, k))
			continue;
		int rc = region_add(p, rkey, va, len);
		if (rc == -ENOMEM)
			return rc;
		if (rc && !p->wrapped++)	/* refused: rocemu will too */
			p->first_wrapped = k;
	}
	return p->nreq ? 0 : -ENOENT;
}

/* The largest Responder Resources (responder) or Initiator Depth the
 * CM announced for end e's QP, 0 when it announced none. */
static unsigned announced(const struct rp_index *ix,
			  const struct roce_flow_end *e, bool responder)
{
	struct rp_cm_ann key = { .qpn = e->qpn };
	unsigned most = 0;
	size_t lo = 0, hi = ix->nann;

	memcpy(key.gid, e->gid, 16);
	while (lo < hi) {	/* the first not below key */
		size_t mid = lo + (hi - lo) / 2;
		if (ann_cmp(&ix->ann[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ix->nann && !ann_cmp(&ix->ann[lo], &key); lo++) {
		unsigned v = responder ? ix->ann[lo].responder_resources
				       : ix->ann[lo].initiator_depth;
		if (v > most)
			most = v;
	}
	return most;
}

static bool fatal_nak(const struct roce_cap_pkt *c)
{
	uint8_t s = c->f.ib.aeth.syndrome;

	return has_aeth(c) && (s == ROCE_AETH_NAK_INV_REQ ||
			       s == ROCE_AETH_NAK_REM_ACCESS ||
			       s == ROCE_AETH_NAK_REM_OP);
}

/* READs and atomics outstanding, oldest first: the PSN each one's last
 * response carries. */
struct in_flight {
	uint32_t last[RP_RD_RING];
	unsigned head, n;
};

/* Answer c ends what it answers: a READ response or atomic ACK the
 * outstanding request whose last PSN it carries and all before it (they
 * come in order), any other answer those before its PSN, a fatal NAK
 * all (the requester's QP is in error after it). */
static void retire(struct in_flight *q, const struct roce_cap_pkt *c)
{
	uint32_t psn = c->f.ib.bth.psn;
	bool ends = (op_flags(c) & ROCE_OPF_READ) ||
		    (c->f.ib.exts & ROCE_EXT_ATMACK);

	if (fatal_nak(c))
		q->n = 0;
	while (q->n) {
		int32_t d = roce_psn_cmp(q->last[q->head], psn);
		if (d > 0 || (d == 0 && !ends))
			break;
		q->head = (q->head + 1) % RP_RD_RING;
		q->n--;
	}
}

/* The newest RP_RD_RING READs and atomics, answered or not: their first
 * and last PSNs, for requests sent again. */
struct history {
	uint32_t first[RP_RD_RING], last[RP_RD_RING];
	unsigned next;		/* where the next goes */
	size_t n;		/* ever added */
};

/*
 * A READ or atomic at psn sent again: the requester never had its answer
 * in full, so it was outstanding from its first sending until now, with
 * every READ and atomic sent after it. How many that is, counting it;
 * RP_RD_RING + 1 when it is older than the history holds; 0 when psn is
 * no READ's or atomic's.
 */
static unsigned resent_depth(const struct history *h, uint32_t psn)
{
	size_t held = h->n < RP_RD_RING ? h->n : RP_RD_RING;

	for (unsigned d = 1; d <= held; d++) {
		unsigned i = (h->next + RP_RD_RING - d) % RP_RD_RING;
		if (roce_psn_cmp(psn, h->first[i]) >= 0 &&
		    roce_psn_cmp(psn, h->last[i]) <= 0)
			return d;
		if (roce_psn_cmp(psn, h->first[i]) > 0)
			return 0;	/* between two: not one of them */
	}
	return h->n > RP_RD_RING ? RP_RD_RING + 1 : 0;
}

static void shown(struct rp_plan *p, unsigned n)
{
	if (n > p->rd_shown)
		p->rd_shown = n;
}

/*
 * p->rd_shown: the most READs and atomics the requester had outstanding
 * at once, each from its first sending (a request past every PSN before
 * it) to the answer that retire says ends it, or, for one sent again, to
 * that sending at least (resent_depth). Past RP_RD_RING, stops at
 * RP_RD_RING + 1.
 */
static void count_in_flight(struct rp_plan *p)
{
	struct in_flight q = { .n = 0 };
	struct history h = { .n = 0 };
	uint32_t next = 0;
	bool any = false;

	for (size_t k = 0; k < p->n && p->rd_shown <= RP_RD_RING; k++) {
		const struct roce_cap_pkt *c = rp_pkt(p, k);
		if (rp_is_answer(p, k)) {
			retire(&q, c);
			continue;
		}
		if (!rp_is_request(p, k))
			continue;
		uint32_t psn = c->f.ib.bth.psn, span = 1;
		unsigned fl = op_flags(c);
		bool rd = fl & (ROCE_OPF_READ | ROCE_OPF_ATOMIC);
		if (any && roce_psn_cmp(psn, next) < 0) {	/* sent again */
			if (rd)
				shown(p, resent_depth(&h, psn));
			continue;
		}
		if (fl & ROCE_OPF_READ)
			span = rp_read_packets(c->f.ib.reth.len, p->mtu_bytes);
		any = true;
		next = roce_psn_add(psn, span);
		if (!rd)
			continue;
		h.first[h.next] = psn;
		h.last[h.next] = roce_psn_add(psn, span - 1);
		h.next = (h.next + 1) % RP_RD_RING;
		h.n++;
		if (q.n == RP_RD_RING) {
			shown(p, RP_RD_RING + 1);
			return;
		}
		q.last[(q.head + q.n++) % RP_RD_RING] =
			roce_psn_add(psn, span - 1);
		shown(p, q.n);
	}
}

int rp_rd_atomic(const struct rp_plan *p, unsigned limit, unsigned *v,
		 bool *clamped)
{
	unsigned want = p->rd_shown > p->rd_announced ? p->rd_shown
						      : p->rd_announced;

	*clamped = false;
	if (p->rd_shown > limit)
		return -ERANGE;
	if (want > limit) {
		want = limit;
		*clamped = true;
	}
	*v = want ? want : 1;
	return 0;
}

int rp_plan_make(struct rp_plan *p, const struct roce_capture *cap,
		 const struct rp_index *ix, const struct roce_flow *fl,
		 unsigned req, uint64_t *visits)
{
	memset(p, 0, sizeof(*p));
	p->cap = cap;
	p->fl = fl;
	p->pk = ix->pk + ix->start[fl->id];
	p->n = ix->start[fl->id + 1] - ix->start[fl->id];
	p->visits = visits;
	p->req = req; /* first: which packets answer depends on it */
	for (size_t k = 0; k < p->n; k++)
		if (rp_is_answer(p, k))
			p->answers_end = k + 1;
	p->mtu_bytes = infer_mtu(p);
	int rc = decide(p);
	if (!rc)
		rc = scan(p);
	if (rc) {
		rp_plan_free(p);
		return rc;
	}
	count_in_flight(p);
	unsigned init = announced(ix, &fl->end[req], false);
	unsigned resp = announced(ix, &fl->end[1 - req], true);
	p->rd_announced = init > resp ? init : resp;
	return 0;
}

uint64_t rp_mem_limit(const struct rp_plan *p)
{
	return p->carried + RP_MEM_SLACK;
}

uint64_t rp_rbuf_len(const struct rp_plan *p)
{
	return (uint64_t)p->max_send + 40;
}

int rp_responder_fits(const struct rp_plan *p, uint64_t *need,
		      const char **what)
{
	uint64_t mem = rp_rbuf_len(p);

	/* each region as setup_memory allocates it: at least a byte, and
	 * 8 more for an atomic's alignment */
	for (size_t i = 0; i < p->nregions; i++)
		mem += (p->regions[i].hi - p->regions[i].lo) + 1 + 8;
	if (mem > rp_mem_limit(p)) {
		*need = mem;
		*what = "memory";
		return -E2BIG;
	}
	/* rocemu keeps every frame it sends: READ responses too */
	if (p->read_bytes > rp_mem_limit(p)) {
		*need = p->read_bytes;
		*what = "READ responses";
		return -E2BIG;
	}
	return 0;
}

void rp_plan_free(struct rp_plan *p)
{
	for (size_t i = 0; i < p->nregions; i++)
		free(p->regions[i].buf);
	free(p->regions);
	p->regions = NULL;
	p->nregions = 0;
	free(p->verdict);
	p->verdict = NULL;
}

unsigned rp_rnr_retry(const struct rp_plan *p)
{
	size_t last = p->n;

	for (size_t k = 0; k < p->n; k++) {
		const struct roce_cap_pkt *c = rp_pkt(p, k);
		if (rp_is_answer(p, k) && has_aeth(c) &&
		    roce_aeth_type(c->f.ib.aeth.syndrome) == ROCE_AETH_RNR_NAK)
			last = k;
	}
	if (last == p->n)
		return 7;
	uint32_t psn = rp_pkt(p, last)->f.ib.bth.psn;
	unsigned naks = 0;
	for (size_t k = 0; k < p->n; k++) {
		const struct roce_cap_pkt *c = rp_pkt(p, k);
		if (k > last && rp_is_request(p, k) && c->f.ib.bth.psn == psn)
			return 7;	/* it tried again: no sign of a limit */
		if (rp_is_answer(p, k) && has_aeth(c) &&
		    c->f.ib.bth.psn == psn &&
		    roce_aeth_type(c->f.ib.aeth.syndrome) == ROCE_AETH_RNR_NAK)
			naks++;
	}
	return naks - 1;
}
