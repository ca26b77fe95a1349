// SPDX-License-Identifier: MIT
/* rocemu-agent: one connection's objects: looked up by number, freed in order. */
#include <stdlib.h>
#include <string.h>

#include "agent.h"

static int lookup(struct req *r, struct answer *a, const char *key, bool present,
		  uint64_t v, unsigned *i, int rc)
{
	if (rc)
		return ans_err(a, "EINVAL", "%s", r->err), -1;
	if (!present)
		return ans_err(a, "ENOENT", "no %s number %llu", key, (unsigned long long)v), -1;
	*i = (unsigned)v;
	return 0;
}

int obj_lookup(struct req *r, struct answer *a, const char *key,
	       void *const *t, unsigned *i)
{
	uint64_t v = 0;
	int rc = req_num(r, key, AGENT_MAX_OBJS, false, 0, &v);

	return lookup(r, a, key, !rc && v && t[v], v, i, rc);
}

int mr_lookup(struct req *r, struct answer *a, const struct agent_objs *o,
	      const char *key, unsigned *i)
{
	uint64_t v = 0;
	int rc = req_num(r, key, AGENT_MAX_OBJS, false, 0, &v);

	return lookup(r, a, key, !rc && v && o->mr[v].mr, v, i, rc);
}

void agent_objs_free(struct agent_objs *o)
{
	agent_cm_free(&o->cm);
	/* Windows first: a type 2 window bound through a QP holds that QP
	 * (rxe in Linux 6.1 waits a minute in ibv_destroy_qp for it). */
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		if (o->mw[i])
			ibv_dealloc_mw(o->mw[i]);
	}
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		if (o->qp[i])
			ibv_destroy_qp(o->qp[i]);
		if (o->ah[i])
			ibv_destroy_ah(o->ah[i]);
	}
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		if (o->srq[i])	/* after the QPs that take from it */
			ibv_destroy_srq(o->srq[i]);
	}
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		if (o->mr[i].mr)
			ibv_dereg_mr(o->mr[i].mr);
		free(o->mr[i].buf);
	}
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		if (o->cq[i])
			ibv_destroy_cq(o->cq[i]);
	}
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		if (o->pd[i])
			ibv_dealloc_pd(o->pd[i]);
	}
	memset(o, 0, sizeof(*o));
}
