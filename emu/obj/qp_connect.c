/* SPDX-License-Identifier: MIT */
/* RESET to RTS in one call, for programs that are not verbs programs: the
 * one place that knows which attributes each transport's three transitions
 * take (IBTA 10.3.1; the table in qp_state.c refuses any other). */
#include <string.h>

#include "obj.h"

/* RESET to INIT: UD takes a Q_Key where RC and UC take access flags. */
static int to_init(struct rocemu_qp *qp, const struct rocemu_rc_params *p)
{
	bool ud = qp_is(qp, IBV_QPT_UD);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ud)
		a.qkey = p->qkey;
	else
		a.qp_access_flags = (unsigned)p->access;
	return rocemu_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						IBV_QP_PORT |
						(ud ? IBV_QP_QKEY
						    : IBV_QP_ACCESS_FLAGS));
}

/* INIT to RTR: the path to the peer for RC and UC, plus RC's responder
 * limits; a UD QP has no peer (each send names one), only a state. */
static int to_rtr(struct rocemu_qp *qp, const struct rocemu_rc_params *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (qp_is(qp, IBV_QPT_UD))
		return rocemu_qp_modify(qp, &a, mask);
	a.path_mtu = p->mtu;
	a.dest_qp_num = p->peer_qpn;
	a.rq_psn = p->rq_psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, p->peer_gid, 16);
	mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qp_is(qp, IBV_QPT_RC)) {
		a.max_dest_rd_atomic = p->max_rd_atomic;
		a.min_rnr_timer = p->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return rocemu_qp_modify(qp, &a, mask);
}

/* RTR to RTS: the send PSN, and for RC the requester's retry limits. */
static int to_rts(struct rocemu_qp *qp, const struct rocemu_rc_params *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = p->sq_psn };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp_is(qp, IBV_QPT_RC)) {
		a.timeout = p->timeout;
		a.retry_cnt = p->retry_cnt;
		a.rnr_retry = p->rnr_retry;
		a.max_rd_atomic = p->max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return rocemu_qp_modify(qp, &a, mask);
}

int rocemu_qp_connect(struct rocemu_qp *qp, const struct rocemu_rc_params *p)
{
	int rc = to_init(qp, p);

	if (!rc)
		rc = to_rtr(qp, p);
	if (!rc)
		rc = to_rts(qp, p);
	return rc;
}
