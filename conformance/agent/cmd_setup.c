// SPDX-License-Identifier: MIT
/* rocemu-agent: hello, and the objects: PD, MR, CQ, QP, AH, MW, destroy. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

/* The lowest free number of a kind; 0 (with the answer written) if none. */
static unsigned next_num(unsigned *last, void *const *t, struct answer *a)
{
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		if (!t[i]) {
			*last = i;
			return i;
		}
	}
	ans_err(a, "ENOSPC", "at most %d objects of a kind", AGENT_MAX_OBJS);
	return 0;
}

static const char *mtu_name(enum ibv_mtu m)
{
	static const char *const n[] = { "?", "256", "512", "1024", "2048", "4096" };
	return (unsigned)m < 6 ? n[m] : "?";
}

/* Whether g is an IPv4-mapped GID (::ffff:a.b.c.d). */
static bool gid_v4(const uint8_t *g)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	return !memcmp(g, mapped, sizeof(mapped));
}

/*
 * Appends " gid4=GID gid4_index=N" and " gid6=GID gid6_index=N": the
 * lowest index of the port's RoCEv2 GIDs of each family that a peer on
 * another host can reach (IPv6: neither link-local, fe80::/10, nor zero).
 * A family the table has none of is left out; so is all of it when the
 * device cannot list its table (the client then knows gid= alone).
 */
static void family_gids(const struct agent_dev *d, struct answer *a)
{
	size_t cap = d->port_attr.gid_tbl_len ? (size_t)d->port_attr.gid_tbl_len : 1;
	struct ibv_gid_entry *e = calloc(cap, sizeof(*e));
	ssize_t n = e ? ibv_query_gid_table(d->ctx, e, cap, 0) : -1;
	static const uint8_t zero[16];
	int got[2] = { -1, -1 };	/* the entries of IPv4, IPv6 */
	char gid[64];

	for (ssize_t i = 0; i < n; i++) {
		const uint8_t *g = e[i].gid.raw;
		int fam = gid_v4(g) ? 0 : 1;
		if (e[i].port_num != d->port || e[i].gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    !memcmp(g, zero, 16) || (g[0] == 0xfe && (g[1] & 0xc0) == 0x80))
			continue;
		if (got[fam] < 0 || e[i].gid_index < e[got[fam]].gid_index)
			got[fam] = (int)i;
	}
	for (int f = 0; f < 2; f++) {
		if (got[f] < 0)
			continue;
		inet_ntop(AF_INET6, e[got[f]].gid.raw, gid, sizeof(gid));
		ans_add(a, " gid%c=%s gid%c_index=%u", f ? '6' : '4', gid, f ? '6' : '4',
			e[got[f]].gid_index);
	}
	free(e);
}

int req_sgid_index(const struct agent_dev *d, struct req *r, uint8_t *index)
{
	uint64_t v, max = d->port_attr.gid_tbl_len ? d->port_attr.gid_tbl_len - 1u : 0;

	if (req_num(r, "sgid_index", max > 255 ? 255 : max, true,
		    (uint64_t)d->gid_index, &v))
		return -1;
	*index = (uint8_t)v;
	return 0;
}

int cmd_hello(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	uint64_t proto;
	char gid[64];

	if (req_num(r, "proto", 255, false, 0, &proto))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (proto != AGENT_PROTO)
		return ans_err(a, "EPROTO", "this agent speaks protocol %d, not %llu",
			       AGENT_PROTO, (unsigned long long)proto);
	o->hello = true;
	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	/* the IBTA 1.5 operations the kernel says the device has */
	struct ibv_device_attr_ex ax;
	uint64_t cf = 0;
	memset(&ax, 0, sizeof(ax));
	if (!ibv_query_device_ex(d->ctx, NULL, &ax))
		cf = ax.device_cap_flags_ex;
	char caps[64] = "";
	if (cf & AGENT_CAP_ATOMIC_WRITE)
		strcat(caps, ",atomic_write");
	if (cf & AGENT_CAP_FLUSH_GLOBAL)
		strcat(caps, ",flush_global");
	if (cf & AGENT_CAP_FLUSH_PERSISTENT)
		strcat(caps, ",flush_persistent");
	const char *cap = d->attr.atomic_cap == IBV_ATOMIC_HCA ? "hca"
			  : d->attr.atomic_cap == IBV_ATOMIC_GLOB ? "glob" : "none";
	ans_add(a, "ok proto=%d device=%s gid=%s gid_index=%d port=%u active_mtu=%s "
		"vendor_id=%#x vendor_part_id=%u max_qp_rd_atom=%d max_qp_init_rd_atom=%d "
		"atomic_cap=%s caps=%s", AGENT_PROTO, d->name, gid, d->gid_index, d->port,
		mtu_name(d->port_attr.active_mtu), d->attr.vendor_id, d->attr.vendor_part_id,
		d->attr.max_qp_rd_atom, d->attr.max_qp_init_rd_atom, cap,
		caps[0] ? caps + 1 : "none");
	family_gids(d, a);
	return 0;
}

int cmd_pd(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	(void)r;
	unsigned i = next_num(&o->npd, (void *const *)o->pd, a);
	if (!i)
		return 0;
	o->pd[i] = ibv_alloc_pd(d->ctx);
	if (!o->pd[i])
		return ans_errno(a, errno ? errno : ENOMEM, "ibv_alloc_pd");
	ans_add(a, "ok pd=%u", i);
	return 0;
}

/* The MR's bytes as fill= says: a byte, or inc (byte i = i mod 256). */
static int fill_of(struct req *r, int *fill)
{
	const char *s = req_str(r, "fill");
	uint64_t v;

	*fill = 0;
	if (!s)
		return 0;
	if (!strcmp(s, "inc")) {
		*fill = -1;
		return 0;
	}
	if (req_num(r, "fill", 255, false, 0, &v))
		return -1;
	*fill = (int)v;
	return 0;
}

int cmd_mr(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned pd;
	uint64_t size;
	int access, fill;
	void *buf;
	(void)d;

	if (obj_lookup(r, a, "pd", (void *const *)o->pd, &pd))
		return 0;
	if (req_num(r, "size", 1u << 30, false, 0, &size) || !size ||
	    req_flags(r, "access", 0, &access) || fill_of(r, &fill))
		return ans_err(a, "EINVAL", "%s", size ? r->err : "size=0");
	struct agent_mr *slot = NULL;
	for (unsigned i = 1; i <= AGENT_MAX_OBJS && !slot; i++)
		if (!o->mr[i].mr)
			slot = &o->mr[i];
	if (!slot)
		return ans_err(a, "ENOSPC", "at most %d MRs", AGENT_MAX_OBJS);
	if (posix_memalign(&buf, 4096, size))
		return ans_errno(a, ENOMEM, "posix_memalign");
	for (uint64_t k = 0; k < size; k++)
		((uint8_t *)buf)[k] = fill < 0 ? (uint8_t)k : (uint8_t)fill;
	struct ibv_mr *mr = ibv_reg_mr(o->pd[pd], buf, size, access);
	if (!mr) {
		int e = errno ? errno : EINVAL;
		free(buf);
		return ans_errno(a, e, "ibv_reg_mr");
	}
	*slot = (struct agent_mr){ .mr = mr, .buf = buf, .size = size };
	o->nmr = (unsigned)(slot - o->mr);
	ans_add(a, "ok mr=%u addr=%#llx rkey=%#x lkey=%#x size=%llu", o->nmr,
		(unsigned long long)(uintptr_t)buf, mr->rkey, mr->lkey,
		(unsigned long long)size);
	return 0;
}

int cmd_cq(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	uint64_t depth;

	if (req_num(r, "depth", 65536, true, 64, &depth) || !depth)
		return ans_err(a, "EINVAL", "%s", depth ? r->err : "depth=0");
	unsigned i = next_num(&o->ncq, (void *const *)o->cq, a);
	if (!i)
		return 0;
	o->cq[i] = ibv_create_cq(d->ctx, (int)depth, NULL, NULL, 0);
	if (!o->cq[i])
		return ans_errno(a, errno ? errno : ENOMEM, "ibv_create_cq");
	ans_add(a, "ok cq=%u", i);
	return 0;
}

/* ops=atomic_write,flush: their send_ops_flags bits into *ex; -1 for a
 * word it does not know. */
static int extra_ops(const char *ops, uint64_t *ex)
{
	char buf[64], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", ops);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "atomic_write"))
			*ex |= AGENT_QP_EX_WITH_ATOMIC_WRITE;
		else if (!strcmp(w, "flush"))
			*ex |= AGENT_QP_EX_WITH_FLUSH;
		else
			return -1;
	}
	return 0;
}

int cmd_srq(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned pd;
	uint64_t wr, limit;
	struct ibv_srq_init_attr ia = { .attr = { .max_sge = 1 } };
	(void)d;

	if (obj_lookup(r, a, "pd", (void *const *)o->pd, &pd))
		return 0;
	if (req_num(r, "max_wr", 16384, true, 32, &wr) ||
	    req_num(r, "limit", 16384, true, 0, &limit))
		return ans_err(a, "EINVAL", "%s", r->err);
	ia.attr.max_wr = (uint32_t)wr;
	unsigned i = next_num(&o->nsrq, (void *const *)o->srq, a);
	if (!i)
		return 0;
	o->srq[i] = ibv_create_srq(o->pd[pd], &ia);
	if (!o->srq[i])
		return ans_errno(a, errno ? errno : ENOMEM, "ibv_create_srq");
	/* armed after it is made: ibv_create_srq ignores srq_limit */
	struct ibv_srq_attr at = { .srq_limit = (uint32_t)limit };
	int rc = limit ? ibv_modify_srq(o->srq[i], &at, IBV_SRQ_LIMIT) : 0;
	if (rc) {
		ibv_destroy_srq(o->srq[i]);
		o->srq[i] = NULL;
		return ans_errno(a, rc, "ibv_modify_srq");
	}
	ans_add(a, "ok srq=%u", i);
	return 0;
}

int cmd_qp(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned pd, scq, rcq, srq = 0;
	uint64_t sq, rq;
	const char *type = req_str(r, "type");
	struct ibv_qp_init_attr ia = { .sq_sig_all = 0 };

	if (obj_lookup(r, a, "pd", (void *const *)o->pd, &pd) ||
	    obj_lookup(r, a, "scq", (void *const *)o->cq, &scq) ||
	    obj_lookup(r, a, "rcq", (void *const *)o->cq, &rcq))
		return 0;
	if (req_str(r, "srq") && obj_lookup(r, a, "srq", (void *const *)o->srq, &srq))
		return 0;
	if (req_num(r, "sq", 16384, true, 32, &sq) || req_num(r, "rq", 16384, true, 32, &rq))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (!type || (strcmp(type, "rc") && strcmp(type, "uc") && strcmp(type, "ud")))
		return ans_err(a, "EINVAL", "qp needs type=rc, uc or ud");
	ia.qp_type = type[1] == 'c' ? (type[0] == 'r' ? IBV_QPT_RC : IBV_QPT_UC) : IBV_QPT_UD;
	ia.send_cq = o->cq[scq];
	ia.recv_cq = o->cq[rcq];
	ia.cap.max_send_wr = (uint32_t)sq;
	ia.cap.max_recv_wr = (uint32_t)rq;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	if (srq) {	/* its receives come from the SRQ; it has no RQ */
		ia.srq = o->srq[srq];
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
	}
	unsigned i = next_num(&o->nqp, (void *const *)o->qp, a);
	if (!i)
		return 0;
	const char *ops = req_str(r, "ops");
	uint64_t ex = 0;
	if (ops && extra_ops(ops, &ex))
		return ans_err(a, "EINVAL", "ops=%s: atomic_write and flush, "
			       "comma-separated", ops);
	if (ex) {
		/* ibv_wr_atomic_write and ibv_wr_flush exist only on a QP
		 * made with them in send_ops_flags; a library that does not
		 * know them refuses the QP (EOPNOTSUPP), so one that makes it
		 * has them in its struct ibv_qp_ex */
		struct ibv_qp_init_attr_ex ix = {
			.qp_type = ia.qp_type, .send_cq = ia.send_cq,
			.recv_cq = ia.recv_cq, .cap = ia.cap, .pd = o->pd[pd],
			.srq = ia.srq,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
					  IBV_QP_EX_WITH_SEND | ex,
		};
		o->qp[i] = ibv_create_qp_ex(d->ctx, &ix);
	} else {
		o->qp[i] = ibv_create_qp(o->pd[pd], &ia);
	}
	if (!o->qp[i])
		return ans_errno(a, errno ? errno : ENOMEM, "ibv_create_qp");
	ans_add(a, "ok qp=%u qpn=%#x", i, o->qp[i]->qp_num);
	return 0;
}

int cmd_ah(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned pd;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = d->port };

	if (obj_lookup(r, a, "pd", (void *const *)o->pd, &pd))
		return 0;
	if (req_gid(r, "dgid", &aa.grh.dgid) || req_sgid_index(d, r, &aa.grh.sgid_index))
		return ans_err(a, "EINVAL", "%s", r->err);
	aa.grh.hop_limit = 64;
	unsigned i = next_num(&o->nah, (void *const *)o->ah, a);
	if (!i)
		return 0;
	o->ah[i] = ibv_create_ah(o->pd[pd], &aa);
	if (!o->ah[i])
		return ans_errno(a, errno ? errno : EINVAL, "ibv_create_ah");
	ans_add(a, "ok ah=%u", i);
	return 0;
}

int cmd_mw(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned pd;
	uint64_t type;
	(void)d;

	if (obj_lookup(r, a, "pd", (void *const *)o->pd, &pd))
		return 0;
	if (req_num(r, "type", 2, false, 0, &type) || !type)
		return ans_err(a, "EINVAL", "mw needs type=1 or 2");
	unsigned i = next_num(&o->nmw, (void *const *)o->mw, a);
	if (!i)
		return 0;
	errno = 0;
	o->mw[i] = ibv_alloc_mw(o->pd[pd], type == 1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	if (!o->mw[i])
		return ans_errno(a, errno ? errno : EOPNOTSUPP, "ibv_alloc_mw");
	ans_add(a, "ok mw=%u rkey=%#x", i, o->mw[i]->rkey);
	return 0;
}

int cmd_destroy(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned i;
	int rc;
	(void)d;

	if (r->n != 1)
		return ans_err(a, "EINVAL", "destroy takes one of qp= mw= ah= mr= cq= pd= srq=");
	const char *k = r->key[0];
	if (!strcmp(k, "mr")) {
		if (mr_lookup(r, a, o, "mr", &i))
			return 0;
		if ((rc = ibv_dereg_mr(o->mr[i].mr)))
			return ans_errno(a, rc, "ibv_dereg_mr");
		free(o->mr[i].buf);
		memset(&o->mr[i], 0, sizeof(o->mr[i]));
		ans_add(a, "ok");
		return 0;
	}
	void **t = !strcmp(k, "qp") ? (void **)o->qp : !strcmp(k, "mw") ? (void **)o->mw :
		   !strcmp(k, "ah") ? (void **)o->ah : !strcmp(k, "cq") ? (void **)o->cq :
		   !strcmp(k, "pd") ? (void **)o->pd : !strcmp(k, "srq") ? (void **)o->srq : NULL;
	if (!t)
		return ans_err(a, "EINVAL", "destroy takes one of qp= mw= ah= mr= cq= pd= srq=");
	if (obj_lookup(r, a, k, t, &i))
		return 0;
	rc = t == (void **)o->qp ? ibv_destroy_qp(o->qp[i]) :
	     t == (void **)o->mw ? ibv_dealloc_mw(o->mw[i]) :
	     t == (void **)o->ah ? ibv_destroy_ah(o->ah[i]) :
	     t == (void **)o->cq ? ibv_destroy_cq(o->cq[i]) :
	     t == (void **)o->srq ? ibv_destroy_srq(o->srq[i]) : ibv_dealloc_pd(o->pd[i]);
	if (rc)
		return ans_errno(a, rc, "destroy");
	t[i] = NULL;
	ans_add(a, "ok");
	return 0;
}
