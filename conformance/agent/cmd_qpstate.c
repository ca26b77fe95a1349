// SPDX-License-Identifier: MIT
/* rocemu-agent: a QP's state: modify (INIT, RTR, RTS, ERR, RESET with their attributes) and query. */
#include <errno.h>
#include <string.h>

#include "agent.h"

static const struct { const char *name; enum ibv_qp_state s; } states[] = {
	{ "reset", IBV_QPS_RESET }, { "init", IBV_QPS_INIT }, { "rtr", IBV_QPS_RTR },
	{ "rts", IBV_QPS_RTS }, { "sqd", IBV_QPS_SQD }, { "sqe", IBV_QPS_SQE },
	{ "err", IBV_QPS_ERR },
};

static const char *state_name(enum ibv_qp_state s)
{
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (states[i].s == s)
			return states[i].name;
	return "unknown";
}

static int mtu_enum(uint64_t bytes, enum ibv_mtu *m)
{
	switch (bytes) {
	case 256: *m = IBV_MTU_256; return 0;
	case 512: *m = IBV_MTU_512; return 0;
	case 1024: *m = IBV_MTU_1024; return 0;
	case 2048: *m = IBV_MTU_2048; return 0;
	case 4096: *m = IBV_MTU_4096; return 0;
	default: return -1;
	}
}

static int to_init(struct agent_dev *d, struct req *r, struct ibv_qp *qp,
		   struct ibv_qp_attr *at, int *mask)
{
	static const char *const keys[] = { "qp", "state", "access", "qkey", NULL };
	uint64_t qkey;

	if (!req_keys_ok(r, keys))
		return -1;
	at->pkey_index = 0;
	at->port_num = d->port;
	*mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qp->qp_type == IBV_QPT_UD) {
		if (req_num(r, "qkey", UINT32_MAX, true, 0x11111111, &qkey))
			return -1;
		at->qkey = (uint32_t)qkey;
		*mask |= IBV_QP_QKEY;
		return 0;
	}
	*mask |= IBV_QP_ACCESS_FLAGS;
	return req_flags(r, "access", 0, (int *)&at->qp_access_flags);
}

static int to_rtr(struct agent_dev *d, struct req *r, struct ibv_qp *qp,
		  struct ibv_qp_attr *at, int *mask)
{
	static const char *const keys[] = { "qp", "state", "dgid", "dqpn", "rq_psn", "mtu",
		"max_dest_rd_atomic", "min_rnr_timer", "sgid_index", NULL };
	uint64_t dqpn, psn, mtu, rd, rnr;

	if (!req_keys_ok(r, keys))
		return -1;
	if (qp->qp_type == IBV_QPT_UD)
		return 0;
	if (req_gid(r, "dgid", &at->ah_attr.grh.dgid) ||
	    req_num(r, "dqpn", 0xffffff, false, 0, &dqpn) ||
	    req_num(r, "rq_psn", 0xffffff, false, 0, &psn) ||
	    req_num(r, "mtu", 4096, true, 1024, &mtu) ||
	    req_sgid_index(d, r, &at->ah_attr.grh.sgid_index))
		return -1;
	if (mtu_enum(mtu, &at->path_mtu)) {
		snprintf(r->err, sizeof(r->err), "mtu is 256, 512, 1024, 2048 or 4096");
		return -1;
	}
	at->ah_attr.is_global = 1;
	at->ah_attr.grh.hop_limit = 64;
	at->ah_attr.port_num = d->port;
	at->dest_qp_num = (uint32_t)dqpn;
	at->rq_psn = (uint32_t)psn;
	*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qp->qp_type != IBV_QPT_RC)
		return 0;
	if (req_num(r, "max_dest_rd_atomic", 255, true, 1, &rd) ||
	    req_num(r, "min_rnr_timer", 31, true, 1, &rnr))
		return -1;
	at->max_dest_rd_atomic = (uint8_t)rd;
	at->min_rnr_timer = (uint8_t)rnr;
	*mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return 0;
}

static int to_rts(struct req *r, struct ibv_qp *qp, struct ibv_qp_attr *at, int *mask)
{
	static const char *const keys[] = { "qp", "state", "sq_psn", "timeout", "retry_cnt",
		"rnr_retry", "max_rd_atomic", NULL };
	uint64_t psn, to, rc, rnr, rd;

	if (!req_keys_ok(r, keys) || req_num(r, "sq_psn", 0xffffff, false, 0, &psn))
		return -1;
	at->sq_psn = (uint32_t)psn;
	*mask |= IBV_QP_SQ_PSN;
	if (qp->qp_type != IBV_QPT_RC)
		return 0;
	if (req_num(r, "timeout", 31, true, 14, &to) ||
	    req_num(r, "retry_cnt", 7, true, 7, &rc) ||
	    req_num(r, "rnr_retry", 7, true, 7, &rnr) ||
	    req_num(r, "max_rd_atomic", 255, true, 1, &rd))
		return -1;
	at->timeout = (uint8_t)to;
	at->retry_cnt = (uint8_t)rc;
	at->rnr_retry = (uint8_t)rnr;
	at->max_rd_atomic = (uint8_t)rd;
	*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

int cmd_modify(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned q;
	struct ibv_qp_attr at;
	int mask = IBV_QP_STATE, rc = -1;
	const char *s = req_str(r, "state");
	size_t k = 0;

	if (obj_lookup(r, a, "qp", (void *const *)o->qp, &q))
		return 0;
	while (s && k < sizeof(states) / sizeof(states[0]) && strcmp(states[k].name, s))
		k++;
	if (!s || k == sizeof(states) / sizeof(states[0]))
		return ans_err(a, "EINVAL", "modify needs state=init, rtr, rts, err or reset");
	memset(&at, 0, sizeof(at));
	at.qp_state = states[k].s;
	if (at.qp_state == IBV_QPS_INIT)
		rc = to_init(d, r, o->qp[q], &at, &mask);
	else if (at.qp_state == IBV_QPS_RTR)
		rc = to_rtr(d, r, o->qp[q], &at, &mask);
	else if (at.qp_state == IBV_QPS_RTS)
		rc = to_rts(r, o->qp[q], &at, &mask);
	else if (at.qp_state == IBV_QPS_ERR || at.qp_state == IBV_QPS_RESET) {
		static const char *const keys[] = { "qp", "state", NULL };
		rc = req_keys_ok(r, keys) ? 0 : -1;
	} else
		snprintf(r->err, sizeof(r->err), "state=%s cannot be asked for", s);
	if (rc)
		return ans_err(a, "EINVAL", "%s", r->err);
	rc = ibv_modify_qp(o->qp[q], &at, mask);
	if (rc)
		return ans_errno(a, rc, "ibv_modify_qp");
	ans_add(a, "ok qp=%u state=%s", q, s);
	return 0;
}

int cmd_query(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a)
{
	unsigned q;
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	(void)d;

	if (obj_lookup(r, a, "qp", (void *const *)o->qp, &q))
		return 0;
	int rc = ibv_query_qp(o->qp[q], &at, IBV_QP_STATE, &ia);
	if (rc)
		return ans_errno(a, rc, "ibv_query_qp");
	ans_add(a, "ok qp=%u state=%s", q, state_name(at.qp_state));
	return 0;
}
