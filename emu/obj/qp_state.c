/* SPDX-License-Identifier: MIT */
/* ibv_modify_qp: the IBTA transition table per QP type, attribute checks, and their effects. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "obj.h"
#include "rocemu/grh.h"

enum {
	M_PRIV = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	M_UD_PRIV = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
	M_UC_RTR = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		   IBV_QP_RQ_PSN,
	M_RTR = M_UC_RTR | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	M_RTR_OPT = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
	M_RTS = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
	M_UC_RTS_OPT = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
		       IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE,
	M_RTS_OPT = M_UC_RTS_OPT | IBV_QP_MIN_RNR_TIMER,
	M_UD_OPT = IBV_QP_CUR_STATE | IBV_QP_QKEY,
	M_SQD_OPT = IBV_QP_PKEY_INDEX | IBV_QP_AV | IBV_QP_ALT_PATH |
		    IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
		    IBV_QP_PATH_MIG_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
		    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PORT,
	M_UC_SQD_OPT = IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
		       IBV_QP_PATH_MIG_STATE,
	NO = -1,	/* the transition does not exist for this type */
};

enum { T_RC, T_UC, T_UD };

/* IBTA 10.3.1 and the ibv_modify_qp(3) table: per transition and QP type
 * (RC, UC, UD) what is required and what is also accepted. */
static const struct {
	uint8_t from, to;
	int req[3], opt[3];
} table[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT, { M_PRIV, M_PRIV, M_UD_PRIV }, { 0, 0, 0 } },
	{ IBV_QPS_INIT, IBV_QPS_INIT, { 0, 0, 0 }, { M_PRIV, M_PRIV, M_UD_PRIV } },
	{ IBV_QPS_INIT, IBV_QPS_RTR, { M_RTR, M_UC_RTR, 0 },
	  { M_RTR_OPT, M_RTR_OPT, IBV_QP_PKEY_INDEX | IBV_QP_QKEY } },
	{ IBV_QPS_RTR, IBV_QPS_RTS, { M_RTS, IBV_QP_SQ_PSN, IBV_QP_SQ_PSN },
	  { M_RTS_OPT, M_UC_RTS_OPT, M_UD_OPT } },
	{ IBV_QPS_RTS, IBV_QPS_RTS, { 0, 0, 0 },
	  { M_RTS_OPT, M_UC_RTS_OPT, M_UD_OPT } },
	{ IBV_QPS_RTS, IBV_QPS_SQD, { 0, 0, 0 },
	  { IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY,
	    IBV_QP_EN_SQD_ASYNC_NOTIFY } },
	{ IBV_QPS_SQD, IBV_QPS_RTS, { 0, 0, 0 },
	  { M_RTS_OPT, M_UC_RTS_OPT, M_UD_OPT } },
	{ IBV_QPS_SQD, IBV_QPS_SQD, { 0, 0, 0 },
	  { M_SQD_OPT, M_UC_SQD_OPT, IBV_QP_PKEY_INDEX | IBV_QP_QKEY } },
	{ IBV_QPS_SQE, IBV_QPS_RTS, { NO, 0, 0 },
	  { NO, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS, M_UD_OPT } },
};

static int type_index(const struct rocemu_qp *qp)
{
	return qp->init.qp_type == IBV_QPT_RC ? T_RC
	       : qp->init.qp_type == IBV_QPT_UC ? T_UC : T_UD;
}

/* Returns the optional mask for from -> to, or -1 if not allowed; *req
 * gets the required one. Any state may go to RESET or ERR. */
static int transition(const struct rocemu_qp *qp, int to, int *req)
{
	int t = type_index(qp), from = qp->state;

	*req = 0;
	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		return IBV_QP_CUR_STATE;
	if (from == IBV_QPS_RESET && to == IBV_QPS_RESET)
		return 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].from == from && table[i].to == to) {
			*req = table[i].req[t];
			return table[i].opt[t];
		}
	return -1;
}

/* Why the attribute values refuse (NULL: they are fine), in words with
 * the attribute named; a constant string. */
static const char *values_refused(const struct rocemu_qp *qp,
				  const struct ibv_qp_attr *a, int mask)
{
	/* IBV_ACCESS_ON_DEMAND is a memory region's, and means nothing for
	 * a QP; rdma-core's test_odp passes its MR's access to its QPs, and
	 * the kernel takes it there without a word. */
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			   IBV_ACCESS_ON_DEMAND | ROCEMU_ACCESS_FLUSH_GLOBAL |
			   ROCEMU_ACCESS_FLUSH_PERSISTENT;

	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != qp->state)
		return "IBV_QP_CUR_STATE: cur_qp_state is not the QP's state";
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return "IBV_QP_PORT: port_num must be 1 (one port)";
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return "IBV_QP_PKEY_INDEX: pkey_index must be 0 (one P_Key)";
	if ((mask & IBV_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~access))
		return "IBV_QP_ACCESS_FLAGS: a flag no QP takes";
	/* Up to the port's largest MTU (4096), as rxe checks; the active
	 * one bounds only what UD sends. */
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return "IBV_QP_PATH_MTU: path_mtu is not IBV_MTU_256..4096";
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > ROCE_PSN_MASK)
		return "IBV_QP_DEST_QPN: dest_qp_num has more than 24 bits";
	if ((mask & IBV_QP_RQ_PSN) && a->rq_psn > ROCE_PSN_MASK)
		return "IBV_QP_RQ_PSN: rq_psn has more than 24 bits";
	if ((mask & IBV_QP_SQ_PSN) && a->sq_psn > ROCE_PSN_MASK)
		return "IBV_QP_SQ_PSN: sq_psn has more than 24 bits";
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > MAX_RD_ATOMIC)
		return "IBV_QP_MAX_DEST_RD_ATOMIC: above the device's 128";
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > MAX_RD_ATOMIC)
		return "IBV_QP_MAX_QP_RD_ATOMIC: above the device's 128";
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return "IBV_QP_MIN_RNR_TIMER: min_rnr_timer is 5 bits (0..31)";
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return "IBV_QP_TIMEOUT: timeout is 5 bits (0..31)";
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return "IBV_QP_RETRY_CNT: retry_cnt is 3 bits (0..7)";
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return "IBV_QP_RNR_RETRY: rnr_retry is 3 bits (0..7)";
	if ((mask & IBV_QP_AV) && !a->ah_attr.is_global)
		return "RoCE needs ah_attr.is_global=1 and a GID index "
		       "(every RoCE packet carries a GRH or IP header)";
	if ((mask & IBV_QP_AV) && a->ah_attr.port_num != 1)
		return "ah_attr.port_num must be 1 (one port)";
	if ((mask & IBV_QP_AV) &&
	    !dev_gid_index_ok(qp->dev, a->ah_attr.grh.sgid_index))
		return "ah_attr.grh.sgid_index names no GID (the table has "
		       "0 and 1)";
	return NULL;
}

/* The rule a refusal by values_refused breaks. */
static const char *values_rule(const char *why)
{
	return !strncmp(why, "RoCE", 4) ? "IBTA A16, A17 (RoCE)"
	       : !strncmp(why, "ah_", 3) ? "IBTA 10.3.1, A17"
					 : "IBTA 10.3.1, 11.2.4.2";
}

static const char *mask_name(int bit)
{
	switch (bit) {
	case IBV_QP_STATE: return "IBV_QP_STATE";
	case IBV_QP_CUR_STATE: return "IBV_QP_CUR_STATE";
	case IBV_QP_EN_SQD_ASYNC_NOTIFY: return "IBV_QP_EN_SQD_ASYNC_NOTIFY";
	case IBV_QP_ACCESS_FLAGS: return "IBV_QP_ACCESS_FLAGS";
	case IBV_QP_PKEY_INDEX: return "IBV_QP_PKEY_INDEX";
	case IBV_QP_PORT: return "IBV_QP_PORT";
	case IBV_QP_QKEY: return "IBV_QP_QKEY";
	case IBV_QP_AV: return "IBV_QP_AV";
	case IBV_QP_PATH_MTU: return "IBV_QP_PATH_MTU";
	case IBV_QP_TIMEOUT: return "IBV_QP_TIMEOUT";
	case IBV_QP_RETRY_CNT: return "IBV_QP_RETRY_CNT";
	case IBV_QP_RNR_RETRY: return "IBV_QP_RNR_RETRY";
	case IBV_QP_RQ_PSN: return "IBV_QP_RQ_PSN";
	case IBV_QP_MAX_QP_RD_ATOMIC: return "IBV_QP_MAX_QP_RD_ATOMIC";
	case IBV_QP_ALT_PATH: return "IBV_QP_ALT_PATH";
	case IBV_QP_MIN_RNR_TIMER: return "IBV_QP_MIN_RNR_TIMER";
	case IBV_QP_SQ_PSN: return "IBV_QP_SQ_PSN";
	case IBV_QP_MAX_DEST_RD_ATOMIC: return "IBV_QP_MAX_DEST_RD_ATOMIC";
	case IBV_QP_PATH_MIG_STATE: return "IBV_QP_PATH_MIG_STATE";
	case IBV_QP_CAP: return "IBV_QP_CAP";
	case IBV_QP_DEST_QPN: return "IBV_QP_DEST_QPN";
	default: return "an unknown mask bit";
	}
}

static int lowest_bit(int m)
{
	return m & -m;
}

/* Explain mode: why modify_qp from the QP's state to to refuses. */
static void why_modify(struct rocemu_qp *qp, int to, int opt, int req,
		       int mask, const char *values)
{
	const char *f = qp_state_name(qp->state), *t = qp_state_name(to);
	struct rocemu_dev *d = qp->dev;

	if (opt < 0 || req < 0)
		dev_why(d, ROCEMU_WHY_VERB, qp->qpn, NULL, 0, "IBTA 10.3.1",
			"modify_qp qp 0x%x: %s->%s is not a transition (a %s "
			"QP goes RESET->INIT->RTR->RTS)", qp->qpn, f, t,
			qp_is(qp, IBV_QPT_UD) ? "UD" : "connected");
	else if ((mask & req) != req)
		dev_why(d, ROCEMU_WHY_VERB, qp->qpn, NULL, 0,
			"IBTA 10.3.1, 11.2.4.2",
			"modify_qp qp 0x%x %s->%s: missing %s (required for "
			"%s)", qp->qpn, f, t,
			mask_name(lowest_bit(req & ~mask)), t);
	else if (mask & ~(req | opt | IBV_QP_STATE))
		dev_why(d, ROCEMU_WHY_VERB, qp->qpn, NULL, 0,
			"IBTA 10.3.1, 11.2.4.2",
			"modify_qp qp 0x%x %s->%s: %s is not allowed in this "
			"transition", qp->qpn, f, t,
			mask_name(lowest_bit(mask & ~(req | opt | IBV_QP_STATE))));
	else
		dev_why(d, ROCEMU_WHY_VERB, qp->qpn, NULL, 0,
			values_rule(values), "modify_qp qp 0x%x %s->%s: %s",
			qp->qpn, f, t, values);
}

void qp_template_to(struct rocemu_qp *qp, const struct ibv_ah_attr *ah)
{
	struct roce_frame *f = &qp->tmpl;
	uint8_t dgid[16];

	dev_wire_gid(qp->dev, ah->grh.dgid.raw, dgid);
	roce_frame_address(f, dgid, ah->grh.traffic_class);
	/* The AH's flow label goes into the IPv6 header, as hardware sends
	 * it (rxe sends 0 there); IPv4 has no field for it. */
	f->flow_label = ah->grh.flow_label & 0xfffff;
	/* GID 0 of a device on an IPv6 interface is that interface's
	 * link-local address, and a send from it to a link-local GID carries
	 * it, an IPv6 header of link scope as rxe sends. To any other GID the
	 * device's address (GID 1) is the source the peer knows: programs and
	 * tools that leave sgid_index 0 mean it. */
	bool from_ll = qp->dev->ll_routed && ah->grh.sgid_index == 0 &&
		       dgid[0] == 0xfe && (dgid[1] & 0xc0) == 0x80;
	memcpy(f->src_gid, from_ll ? qp->dev->gid_ll : qp->dev->gid, 16);
	f->eth_dst[0] = 0x02; /* the peer's MAC, made as devices make theirs */
	memcpy(f->eth_dst + 2, dgid + 12, 4);
	/* The IP TTL is the route's hop limit, not the AH's: for a RoCEv2 GID
	 * Linux's ib_core resolves the destination through the IP stack and
	 * replaces grh.hop_limit with the route's (64 by default), so rxe and
	 * hardware on Linux send 64 whatever the program asked for
	 * (ibv_rc_pingpong asks for 1, perftest for 255). rocemu's UDP
	 * sockets send with the system's default TTL too: the capture
	 * records what the wire carries. */
	f->ttl = 64;
}

static void build_template(struct rocemu_qp *qp)
{
	struct roce_frame *f = &qp->tmpl;

	roce_frame_init(f, 4);
	memcpy(f->eth_src, qp->dev->mac, 6);
	qp_template_to(qp, &qp->attr.ah_attr);
	/* The source port rxe sends from once the QP's peer is known
	 * (rdma_get_udp_sport): from the AH's flow label, or without one
	 * from both QP numbers, so that rocemu's frames match rxe's byte
	 * for byte. */
	uint32_t fl = qp->attr.ah_attr.grh.flow_label & 0xfffff;
	if (!fl)
		fl = roce_flow_label_of_qpns(qp->qpn, qp->attr.dest_qp_num);
	f->sport = roce_udp_sport_of_flow_label(fl);
	f->ib.bth.dqpn = qp->attr.dest_qp_num;
}

static void copy_attrs(struct ibv_qp_attr *cur, const struct ibv_qp_attr *a,
		       int mask)
{
#define TAKE(m, f)            \
	if (mask & (m))       \
		cur->f = a->f
	TAKE(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	TAKE(IBV_QP_PKEY_INDEX, pkey_index);
	TAKE(IBV_QP_PORT, port_num);
	TAKE(IBV_QP_AV, ah_attr);
	TAKE(IBV_QP_ALT_PATH, alt_ah_attr);
	TAKE(IBV_QP_PATH_MTU, path_mtu);
	TAKE(IBV_QP_DEST_QPN, dest_qp_num);
	TAKE(IBV_QP_RQ_PSN, rq_psn);
	TAKE(IBV_QP_SQ_PSN, sq_psn);
	TAKE(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	TAKE(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	TAKE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	TAKE(IBV_QP_TIMEOUT, timeout);
	TAKE(IBV_QP_RETRY_CNT, retry_cnt);
	TAKE(IBV_QP_RNR_RETRY, rnr_retry);
	TAKE(IBV_QP_PATH_MIG_STATE, path_mig_state);
	TAKE(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
	TAKE(IBV_QP_QKEY, qkey);
#undef TAKE
}

/* Empties both queues without completions, as a move to RESET does; the
 * responder's resources stay allocated, emptied. */
static void qp_reset(struct rocemu_qp *qp)
{
	struct rd_res *res = qp->resp.res;
	unsigned nres = qp->resp.nres;

	atomic_store(&qp->sq.head, 0);
	atomic_store(&qp->sq.tail, 0);
	atomic_store(&qp->rq.head, 0);
	atomic_store(&qp->rq.tail, 0);
	timer_cancel(qp, TIMER_RETRY);
	timer_cancel(qp, TIMER_RNR);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	if (res)
		memset(res, 0, nres * sizeof(*res));
	qp->resp.res = res;
	qp->resp.nres = nres;
}

/* A new set of responder resources (READs and atomics executed, their
 * responses kept for duplicates) for max_dest_rd_atomic n, replacing the
 * old at once as rxe does. Returns 0, or -ENOMEM with the old set left as
 * it was. */
static int resize_resources(struct rocemu_qp *qp, unsigned n)
{
	struct rd_res *res;

	if (n < MIN_RD_RES)
		n = MIN_RD_RES;
	if (n == qp->resp.nres)
		return 0;
	if (!(res = calloc(n, sizeof(*res))))
		return -ENOMEM;
	free(qp->resp.res);
	qp->resp.res = res;
	qp->resp.nres = n;
	qp->resp.res_next = 0;
	return 0;
}

static void qp_forget_completions(struct rocemu_qp *qp)
{
	if (qp->scq)
		cq_forget_qp(qp->scq, qp->qpn);
	if (qp->rcq && qp->rcq != qp->scq)
		cq_forget_qp(qp->rcq, qp->qpn);
}

static void enter(struct rocemu_qp *qp, enum ibv_qp_state to, int mask)
{
	enum ibv_qp_state from = qp->state;

	qp->state = to;
	if (to == IBV_QPS_RESET) {
		qp_reset(qp);
		qp->err_cause = NULL;
		/* A QP reused from RESET must not hand the application the
		 * completions of its old life, e.g. the flushed receives of
		 * the ERROR it came from (rdma-core's test_mr_rereg_pd
		 * expects so, as mlx5's provider makes it). */
		if (from != IBV_QPS_RESET)
			qp_forget_completions(qp);
	} else if (to == IBV_QPS_ERR && from != IBV_QPS_ERR) {
		qp->err_cause = "by modify_qp to ERR";
		qp_flush(qp);
		if (qp->srq)
			dev_async_event(qp->dev, IBV_EVENT_QP_LAST_WQE_REACHED,
					qp);
	} else if (to == IBV_QPS_RTR && from == IBV_QPS_INIT) {
		qp->resp.psn = qp->attr.rq_psn;
		qp->heard = false;
		if (!qp_is(qp, IBV_QPT_UD))
			build_template(qp);
	} else if (to == IBV_QPS_RTS && from == IBV_QPS_RTR) {
		qp->req.psn = qp->comp.psn = qp->attr.sq_psn;
		qp->req.max_psn = qp->attr.sq_psn;
		qp->req.idx = ring_head(&qp->sq);
		qp->comp.retry_left = qp->attr.retry_cnt;
		qp->comp.rnr_left = qp->attr.rnr_retry;
	}
	if ((mask & IBV_QP_AV) && !qp_is(qp, IBV_QPT_UD))
		build_template(qp);
	if (to == IBV_QPS_RTS)
		qp_make_ready(qp);
}

int rocemu_qp_modify(struct rocemu_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	CORE_GUARD(qp->dev->core);
	int to = (mask & IBV_QP_STATE) ? (int)attr->qp_state : (int)qp->state;
	int req;
	int opt = transition(qp, to, &req);

	const char *values = NULL;

	if (opt < 0 || req < 0 || (mask & req) != req ||
	    (mask & ~(req | opt | IBV_QP_STATE)) ||
	    (values = values_refused(qp, attr, mask))) {
		why_modify(qp, to, opt, req, mask, values);
		return -EINVAL;
	}
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    resize_resources(qp, attr->max_dest_rd_atomic))
		return -ENOMEM;
	copy_attrs(&qp->attr, attr, mask);
	qp->attr.qp_state = (enum ibv_qp_state)to;
	enter(qp, (enum ibv_qp_state)to, mask);
	return 0;
}

int rocemu_qp_query(struct rocemu_qp *qp, struct ibv_qp_attr *attr,
		    struct ibv_qp_init_attr *init)
{
	CORE_GUARD(qp->dev->core);
	*attr = qp->attr;
	attr->qp_state = attr->cur_qp_state = qp->state;
	attr->cap = qp->init.cap;
	if (qp->state >= IBV_QPS_RTR && qp->state != IBV_QPS_ERR)
		attr->rq_psn = qp->resp.psn;
	if (qp->state >= IBV_QPS_RTS && qp->state != IBV_QPS_ERR)
		attr->sq_psn = qp->req.psn;
	attr->sq_draining = qp->state == IBV_QPS_SQD &&
			    ring_head(&qp->sq) != qp->req.idx;
	if (init)
		*init = qp->init;
	return 0;
}
