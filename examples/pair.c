// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* dladdr */
#include "pair.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(err));
	return -1;
}

/* The first device is the one the program gets: on rocemu, rocemu0. */
static struct ibv_context *open_first_device(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = NULL;

	if (list && n > 0) {
		ctx = ibv_open_device(list[0]);
		if (ctx) /* named once it opened: the device is there */
			printf("device %s\n", ibv_get_device_name(list[0]));
	}
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

void pair_no_device(int err)
{
	Dl_info where = { 0 };
	const char *lib;

	/* Which libibverbs.so.1 did the dynamic loader pick? Only rocemu's
	 * has rocemu_dropin_make_dev. */
	dladdr((void *)ibv_open_device, &where);
	lib = where.dli_fname ? where.dli_fname : "libibverbs.so.1";
	if (!dlsym(RTLD_DEFAULT, "rocemu_dropin_make_dev"))
		fprintf(stderr,
			"no verbs device: %s; the libibverbs loaded is %s, the "
			"system's, not rocemu's: run with "
			"LD_LIBRARY_PATH=<rocemu>/build/lib to use rocemu\n",
			strerror(err), lib);
	else
		fprintf(stderr,
			"no verbs device: %s; rocemu's libibverbs (%s) could "
			"not make its device: the line above says why (set "
			"ROCEMU_ADDR to an address of this host, e.g. "
			"127.0.0.1)\n", strerror(err), lib);
}

static int open_side(struct pair *p, struct side *s,
		     struct ibv_comp_channel *channel)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	/* Atomics need 8-byte alignment of their target. */
	s->buf = aligned_alloc(64, p->len);
	if (!s->buf)
		return fail("buffer", ENOMEM);
	memset(s->buf, 0, p->len);
	s->cq = ibv_create_cq(p->ctx, 16, NULL, channel, 0);
	if (!s->cq)
		return fail("ibv_create_cq", errno);
	s->mr = ibv_reg_mr(p->pd, s->buf, p->len, access);
	if (!s->mr)
		return fail("ibv_reg_mr", errno);
	return 0;
}

int pair_open(struct pair *p, size_t len, int b_channel)
{
	memset(p, 0, sizeof(*p));
	p->len = len < 64 ? 64 : (len + 63) & ~(size_t)63;
	p->ctx = open_first_device();
	if (!p->ctx) {
		pair_no_device(errno ? errno : ENODEV);
		return -1;
	}
	if (ibv_query_gid(p->ctx, 1, PAIR_GID_INDEX, &p->gid))
		return fail("ibv_query_gid", errno);
	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		return fail("ibv_alloc_pd", errno);
	if (b_channel && !(p->channel = ibv_create_comp_channel(p->ctx)))
		return fail("ibv_create_comp_channel", errno);
	if (open_side(p, &p->a, NULL) || open_side(p, &p->b, p->channel))
		return -1;
	return 0;
}

static struct ibv_qp *create_qp(struct pair *p, struct side *s,
				enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.srq = srq,
		.qp_type = type,
		.sq_sig_all = 0,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr_ex ex = {
		.send_cq = s->cq, .recv_cq = s->cq, .srq = srq,
		.qp_type = type, .cap = init.cap, .pd = p->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = p->send_ops,
	};

	/* room for ibv_wr_set_inline_data's small messages, and for an
	 * ibv_wr_set_sge_list of two */
	ex.cap.max_inline_data = 64;
	ex.cap.max_send_sge = 2;
	if (p->send_ops)
		return ibv_create_qp_ex(p->ctx, &ex);
	return ibv_create_qp(p->pd, &init);
}

/* RESET -> INIT: which port, and what the remote side may do here. */
static int to_init(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (type == IBV_QPT_UD) {
		attr.qkey = PAIR_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &attr, mask);
}

/* INIT -> RTR: who the peer is (connected types) and its first PSN. */
static int to_rtr(struct pair *p, struct ibv_qp *qp, enum ibv_qp_type type,
		  uint32_t peer_qpn)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &attr, mask);
	if (ibv_query_port(p->ctx, 1, &port))
		return errno;
	attr.path_mtu = port.active_mtu;
	attr.dest_qp_num = peer_qpn;
	attr.rq_psn = 0;
	attr.ah_attr.is_global = 1; /* RoCE addresses by GID, never by LID */
	attr.ah_attr.grh.dgid = p->gid;
	attr.ah_attr.grh.sgid_index = PAIR_GID_INDEX;
	attr.ah_attr.grh.hop_limit = 64;
	attr.ah_attr.port_num = 1;
	mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (type == IBV_QPT_RC) {
		attr.max_dest_rd_atomic = 1;
		attr.min_rnr_timer = 12;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return ibv_modify_qp(qp, &attr, mask);
}

/* RTR -> RTS: the first PSN we send, and (RC) how hard to retry. */
static int to_rts(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (type == IBV_QPT_RC) {
		attr.timeout = 14;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &attr, mask);
}

int pair_add_qps(struct pair *p, enum ibv_qp_type type, struct ibv_srq *srq_b)
{
	struct ibv_qp *a = create_qp(p, &p->a, type, NULL);
	struct ibv_qp *b = create_qp(p, &p->b, type, srq_b);
	int rc;

	if (!a || !b)
		return fail("ibv_create_qp", errno);
	p->a.qp = a;
	p->b.qp = b;
	p->srq = srq_b;
	rc = to_init(a, type) ? errno : to_init(b, type) ? errno : 0;
	if (!rc)
		rc = to_rtr(p, a, type, b->qp_num) ? errno :
		     to_rtr(p, b, type, a->qp_num) ? errno : 0;
	if (!rc)
		rc = to_rts(a, type) ? errno : to_rts(b, type) ? errno : 0;
	if (rc)
		return fail("ibv_modify_qp", rc);
	printf("QP %u (a) and QP %u (b) ready\n", a->qp_num, b->qp_num);
	return 0;
}

int pair_wait(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return fail("ibv_poll_cq", EIO);
		if (n == 1)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > PAIR_WAIT_S)
			return fail("no completion", ETIMEDOUT);
		/* the completion comes from the device's threads: let them run
		 * (on a busy machine a spinning poller starves them) */
		sched_yield();
	}
}

int pair_post_send(struct side *s, struct ibv_send_wr *wr, void *addr,
		   size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = (uint32_t)len,
			       .lkey = s->mr->lkey };
	struct ibv_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(s->qp, wr, &bad);
}

int pair_post_recv(struct side *s, uint64_t wr_id, void *addr, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = (uint32_t)len,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static void close_side(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	free(s->buf);
}

void pair_close(struct pair *p)
{
	close_side(&p->a);
	close_side(&p->b);
	if (p->srq)
		ibv_destroy_srq(p->srq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->channel)
		ibv_destroy_comp_channel(p->channel);
	if (p->ctx)
		ibv_close_device(p->ctx);
}
