/* SPDX-License-Identifier: MIT */
/* RESET to RTS in one call, for programs that are not verbs programs. */
#include <string.h>

#include "obj.h"

int rocemu_qp_connect(struct rocemu_qp *qp, const struct rocemu_rc_params *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = (unsigned)p->access };
	int rc = rocemu_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT |
						  IBV_QP_ACCESS_FLAGS);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = p->mtu;
	a.dest_qp_num = p->peer_qpn;
	a.rq_psn = p->rq_psn;
	a.max_dest_rd_atomic = p->max_rd_atomic;
	a.min_rnr_timer = p->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, p->peer_gid, 16);
	rc = rocemu_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV |
					      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					      IBV_QP_RQ_PSN |
					      IBV_QP_MAX_DEST_RD_ATOMIC |
					      IBV_QP_MIN_RNR_TIMER);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->sq_psn;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.max_rd_atomic = p->max_rd_atomic;
	return rocemu_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
						IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
						IBV_QP_RNR_RETRY |
						IBV_QP_MAX_QP_RD_ATOMIC);
}
