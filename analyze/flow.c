/* SPDX-License-Identifier: MIT */
/* The flow table: RoCEv2 packets grouped by the two QPs they travel between. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "rocemu/flow.h"
#include "rocemu/psn.h"
#include "flow_wait.h"

/*
 * A half flow is what one packet's headers name: sender address,
 * receiver address and QP, and for UD the sender's QP too. The key is a
 * byte string, so padding never takes part in hashing.
 */
enum { HALF_KEY_LEN = 16 + 16 + 4 + 4 + 1 };

struct half {
	uint8_t key[HALF_KEY_LEN];
	unsigned flow, dir;
	UT_hash_handle hh;
};

struct roce_flows {
	struct roce_flow *v;
	size_t n, cap;
	struct half *halves;
	struct flow_waits *waits;	/* RC and UC flows whose first end's
					 * QP is still unknown */
};

struct roce_flows *roce_flows_new(void)
{
	struct roce_flows *t = calloc(1, sizeof(*t));

	if (t && !(t->waits = flow_waits_new())) {
		free(t);
		t = NULL;
	}
	return t;
}

void roce_flows_free(struct roce_flows *t)
{
	struct half *h, *htmp;

	if (!t)
		return;
	HASH_ITER(hh, t->halves, h, htmp) {
		HASH_DEL(t->halves, h);
		free(h);
	}
	flow_waits_free(t->waits);
	free(t->v);
	free(t);
}

unsigned roce_flows_count(const struct roce_flows *t)
{
	return (unsigned)t->n;
}

const struct roce_flow *roce_flows_get(const struct roce_flows *t,
				       unsigned id)
{
	return id < t->n ? &t->v[id] : NULL;
}

const char *roce_flow_kind_name(enum roce_flow_kind k)
{
	static const char *const names[] = {
		[ROCE_FLOW_RC] = "RC", [ROCE_FLOW_UC] = "UC",
		[ROCE_FLOW_UD] = "UD", [ROCE_FLOW_OTHER] = "other",
	};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k]
							       : "?";
}

char *roce_flow_end_text(const struct roce_flow_end *e, char *buf,
			 size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	bool v4 = roce_gid_is_ipv4(e->gid);

	if (!inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? e->gid + 12 : e->gid,
		       addr, sizeof(addr)))
		strcpy(addr, "?");
	if (e->qpn_known)
		snprintf(buf, len, "%s qp 0x%x", addr, e->qpn);
	else
		snprintf(buf, len, "%s qp ?", addr);
	return buf;
}

static enum roce_flow_kind kind_of(const struct roce_opcode_info *op)
{
	switch (op->transport) {
	case ROCE_TR_RC: return ROCE_FLOW_RC;
	case ROCE_TR_UC: return ROCE_FLOW_UC;
	case ROCE_TR_UD: return ROCE_FLOW_UD;
	default: return ROCE_FLOW_OTHER;
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* The half flow a packet names: from, to, to's QP, from's QP (UD). */
static void half_key(uint8_t key[HALF_KEY_LEN], const uint8_t *from,
		     const uint8_t *to, uint32_t to_qpn, uint32_t from_qpn,
		     uint8_t tag)
{
	memcpy(key, from, 16);
	memcpy(key + 16, to, 16);
	put32(key + 32, to_qpn);
	put32(key + 36, from_qpn);
	key[40] = tag;
}

/* The key flow fl waits under: from its first end to its second. */
static const uint8_t *pair_of(const struct roce_flow *fl,
			      uint8_t key[FLOW_PAIR_KEY_LEN])
{
	flow_pair_key(key, fl->end[0].gid, fl->end[1].gid, fl->kind);
	return key;
}

static struct half *half_find(struct roce_flows *t,
			      const uint8_t key[HALF_KEY_LEN])
{
	struct half *h;

	HASH_FIND(hh, t->halves, key, HALF_KEY_LEN, h);
	return h;
}

static int half_add(struct roce_flows *t, const uint8_t key[HALF_KEY_LEN],
		    unsigned flow, unsigned dir)
{
	struct half *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	memcpy(h->key, key, HALF_KEY_LEN);
	h->flow = flow;
	h->dir = dir;
	HASH_ADD(hh, t->halves, key, HALF_KEY_LEN, h);
	return 0;
}

/* A new flow at the end of the table; its id, or -ENOMEM. */
static int flow_add(struct roce_flows *t, enum roce_flow_kind k,
		    const struct roce_frame *f, uint64_t no)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct roce_flow *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	struct roce_flow *fl = &t->v[t->n];
	memset(fl, 0, sizeof(*fl));
	fl->id = (unsigned)t->n;
	fl->kind = k;
	fl->first_no = no;
	memcpy(fl->end[0].gid, f->src_gid, 16);
	memcpy(fl->end[1].gid, f->dst_gid, 16);
	fl->end[1].qpn = f->ib.bth.dqpn;
	fl->end[1].qpn_known = true;
	if (k == ROCE_FLOW_UD && (f->ib.exts & ROCE_EXT_DETH)) {
		fl->end[0].qpn = f->ib.deth.src_qp;
		fl->end[0].qpn_known = true;
	}
	return (int)t->n++;
}

/* A half flow seen for the first time: joins or starts a flow. */
static int half_new(struct roce_flows *t, const uint8_t key[HALF_KEY_LEN],
		    enum roce_flow_kind k, const struct roce_frame *f,
		    uint64_t no, unsigned *dir)
{
	uint8_t pair[FLOW_PAIR_KEY_LEN];
	int id = -1;

	if (k == ROCE_FLOW_RC || k == ROCE_FLOW_UC) {
		flow_pair_key(pair, f->dst_gid, f->src_gid, k);
		id = flow_waits_take(t->waits, pair, t->v, f);
		if (id >= 0) {
			t->v[id].end[0].qpn = f->ib.bth.dqpn;
			t->v[id].end[0].qpn_known = true;
			*dir = 1;
		}
	}
	if (id < 0) {
		id = flow_add(t, k, f, no);
		if (id < 0)
			return id;
		*dir = 0;
		if ((k == ROCE_FLOW_RC || k == ROCE_FLOW_UC) &&
		    flow_waits_push(t->waits, pair_of(&t->v[id], pair),
				    (unsigned)id))
			return -ENOMEM;
	}
	int rc = half_add(t, key, (unsigned)id, *dir);
	return rc ? rc : id;
}

/* UD names both QPs: the reverse half of a known flow is that flow. */
static int ud_reverse(struct roce_flows *t, const struct roce_frame *f,
		      unsigned *dir)
{
	uint8_t rkey[HALF_KEY_LEN];
	struct half *h;

	half_key(rkey, f->dst_gid, f->src_gid, f->ib.deth.src_qp,
		 f->ib.bth.dqpn, ROCE_FLOW_UD);
	h = half_find(t, rkey);
	if (!h)
		return -1;
	*dir = 1 - h->dir;
	return (int)h->flow;
}

static int account(struct roce_flows *t, struct roce_flow *fl,
		   const struct roce_frame *f, uint64_t no, unsigned dir)
{
	uint8_t pair[FLOW_PAIR_KEY_LEN];

	fl->last_no = no;
	fl->packets[dir]++;
	if (!(f->ib.op->flags & ROCE_OPF_REQ))
		return 0;
	if (!fl->requests[dir]++)
		fl->first_req_psn[dir] = f->ib.bth.psn;
	fl->last_req_psn[dir] = f->ib.bth.psn;
	if (dir || (fl->kind != ROCE_FLOW_RC && fl->kind != ROCE_FLOW_UC))
		return 0;
	return flow_waits_note(t->waits, pair_of(fl, pair), fl->id,
			       f->ib.bth.psn);
}

int roce_flows_classify(struct roce_flows *t, const struct roce_frame *f,
			uint64_t no, unsigned *dir)
{
	const struct roce_opcode_info *op = f->ib.op;

	if (!f->ib.has_bth || !op)
		return -EINVAL;
	enum roce_flow_kind k = kind_of(op);
	bool ud = k == ROCE_FLOW_UD && (f->ib.exts & ROCE_EXT_DETH);
	uint8_t key[HALF_KEY_LEN];
	half_key(key, f->src_gid, f->dst_gid, f->ib.bth.dqpn,
		 ud ? f->ib.deth.src_qp : 0,
		 k == ROCE_FLOW_OTHER ? (uint8_t)(0x80 | op->transport)
				      : (uint8_t)k);

	int id;
	struct half *h = half_find(t, key);
	if (h) {
		id = (int)h->flow;
		*dir = h->dir;
	} else if (ud && (id = ud_reverse(t, f, dir)) >= 0) {
		int rc = half_add(t, key, (unsigned)id, *dir);
		if (rc)
			return rc;
	} else {
		id = half_new(t, key, k, f, no, dir);
		if (id < 0)
			return id;
	}
	int rc = account(t, &t->v[id], f, no, *dir);
	return rc ? rc : id;
}
