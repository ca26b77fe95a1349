// SPDX-License-Identifier: MIT
/*
 * Extended QPs through the verbs API, as a program written against
 * <infiniband/verbs.h> meets them: ibv_create_qp_ex's comp_mask and
 * send_ops_flags, ibv_qp_to_qp_ex, and the ibv_wr_* batch: per-WR wr_id
 * and wr_flags, SGE lists, inline data lists, atomics, ATOMIC WRITE, UD
 * addresses, wr_abort, and the misuses that make wr_complete fail with
 * nothing posted. Built with plain cc -libverbs and examples/pair.c; run
 * on rocemu's libibverbs.so.1. Prints one line per failed check and a
 * closing "verbs_qp_ex: N passed, M failed".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

#define RC_OPS                                                                 \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |      \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                  \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |        \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE)

/* Completions on cq within ms milliseconds, up to n of them. */
static int drain(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	int got = 0;

	for (int t = 0; t < ms && got < n; t++) {
		int r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return -1;
		got += r;
		if (got < n)
			usleep(1000);
	}
	return got;
}

static struct ibv_qp *create_ex(struct pair *p, enum ibv_qp_type t,
				uint32_t mask, uint64_t ops, uint32_t cflags)
{
	struct ibv_qp_init_attr_ex a = {
	    .send_cq = p->a.cq,
	    .recv_cq = p->a.cq,
	    .qp_type = t,
	    .cap = {.max_send_wr = 4,
		    .max_recv_wr = 4,
		    .max_send_sge = 1,
		    .max_recv_sge = 1},
	    .comp_mask = mask,
	    .pd = p->pd,
	    .send_ops_flags = ops,
	    .create_flags = cflags,
	};

	errno = 0;
	return ibv_create_qp_ex(p->ctx, &a);
}

/* What ibv_create_qp_ex takes and refuses (rxe's provider's rules). */
static void test_create(struct pair *p)
{
	struct ibv_qp *qp;

	CHECK(!ibv_qp_to_qp_ex(p->a.qp),
	      "a QP from ibv_create_qp has no ibv_qp_ex");
	qp = create_ex(p, IBV_QPT_RC,
		       IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS, 0,
		       0);
	CHECK(qp, "CREATE_FLAGS of 0: %s", strerror(errno));
	CHECK(!qp || !ibv_qp_to_qp_ex(qp), "no send_ops_flags, no ibv_qp_ex");
	if (qp)
		ibv_destroy_qp(qp);
	qp = create_ex(p, IBV_QPT_RC,
		       IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS, 0,
		       IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
	CHECK(!qp && errno == EOPNOTSUPP, "a create flag: %s", strerror(errno));
	qp = create_ex(p, IBV_QPT_RC,
		       IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER, 0,
		       0);
	CHECK(!qp && errno == EOPNOTSUPP, "MAX_TSO_HEADER: %s",
	      strerror(errno));
	qp = create_ex(p, IBV_QPT_UD,
		       IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		       IBV_QP_EX_WITH_RDMA_READ, 0);
	CHECK(!qp && errno == EOPNOTSUPP, "READ on UD: %s", strerror(errno));
	qp = create_ex(p, IBV_QPT_UC,
		       IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		       IBV_QP_EX_WITH_ATOMIC_WRITE, 0);
	CHECK(!qp && errno == EOPNOTSUPP, "ATOMIC_WRITE on UC: %s",
	      strerror(errno));
	qp = create_ex(p, IBV_QPT_RC, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		       IBV_QP_EX_WITH_SEND, 0);
	CHECK(!qp && errno == EINVAL, "no PD: %s", strerror(errno));
	qp = create_ex(p, IBV_QPT_UD,
		       IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		       IBV_QP_EX_WITH_SEND, 0);
	CHECK(qp && ibv_qp_to_qp_ex(qp) && &ibv_qp_to_qp_ex(qp)->qp_base == qp,
	      "UD with SEND: %s", strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
}

/* Misuses: each makes wr_complete fail and posts nothing. */
static void test_misuse(struct pair *p, struct ibv_qp_ex *qx)
{
	struct ibv_wc wc[4];
	int rc;

	memset(p->a.buf, 0x77, 64); /* what a misused WRITE would leave */
	rc = ibv_wr_complete(qx);
	CHECK(rc == EINVAL, "wr_complete without wr_start: %d", rc);
	ibv_wr_start(qx);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf, 8);
	ibv_wr_rdma_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 100);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf, 8);
	rc = ibv_wr_complete(qx);
	CHECK(rc == EINVAL, "set_sge before any WR: %d", rc);
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 100);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf, 8);
	ibv_wr_local_inv(qx, 0x1234); /* not in send_ops_flags */
	rc = ibv_wr_complete(qx);
	CHECK(rc == EINVAL, "LOCAL_INV outside send_ops_flags: %d", rc);
	/* the device refuses the second WR (3 SGEs, the QP takes 2): the
	 * first is not posted either */
	struct ibv_sge three[3] = {
	    {(uintptr_t)p->a.buf, 1, p->a.mr->lkey},
	    {(uintptr_t)p->a.buf, 1, p->a.mr->lkey},
	    {(uintptr_t)p->a.buf, 1, p->a.mr->lkey},
	};
	ibv_wr_start(qx);
	ibv_wr_rdma_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 100);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf, 8);
	ibv_wr_rdma_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 100);
	ibv_wr_set_sge_list(qx, 3, three);
	rc = ibv_wr_complete(qx);
	CHECK(rc == EINVAL, "a WR the device refuses: %d", rc);
	ibv_wr_start(qx);
	ibv_wr_rdma_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 100);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf, 8);
	ibv_wr_abort(qx);
	/* more WRs than the send queue holds: the batch is refused whole */
	ibv_wr_start(qx);
	for (int i = 0; i < 17; i++) {
		ibv_wr_rdma_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 100);
		ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf, 8);
	}
	rc = ibv_wr_complete(qx);
	CHECK(rc == ENOMEM, "17 WRs on a 16-deep queue: %d", rc);
	CHECK(drain(p->a.cq, wc, 4, 100) == 0, "a misused batch completed");
	CHECK(p->b.buf[100] == 0, "a misused batch wrote");
	CHECK(ibv_query_qp(p->a.qp, &(struct ibv_qp_attr){0}, IBV_QP_STATE,
			   &(struct ibv_qp_init_attr){0}) == 0,
	      "the QP answers after the misuses");
}

/* One batch of every RC operation; per-WR wr_id and wr_flags. */
static void test_batch(struct pair *p, struct ibv_qp_ex *qx)
{
	struct ibv_sge two[2] = {
	    {(uintptr_t)p->a.buf, 4, p->a.mr->lkey},
	    {(uintptr_t)p->a.buf + 8, 4, p->a.mr->lkey},
	};
	char x[] = "in", y[] = "line";
	struct ibv_data_buf parts[2] = {{x, 2}, {y, 4}};
	uint64_t word = 40, value = 0x1122334455667788ull, got;
	struct ibv_wc wc[8];
	int rc;

	memcpy(p->a.buf, "abcdXXXXefgh", 12);
	memcpy(p->b.buf + 256, &word, 8);
	pair_post_recv(&p->b, 50, p->b.buf + 1024, 64);
	ibv_wr_start(qx);
	qx->wr_id = 11;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf);
	ibv_wr_set_sge_list(qx, 2, two);
	qx->wr_id = 12;
	qx->wr_flags = 0; /* unsignaled: no completion */
	ibv_wr_send_imm(qx, htobe32(0xfeed));
	ibv_wr_set_inline_data_list(qx, 2, parts);
	memcpy(x, "XX", 2); /* copied already */
	qx->wr_id = 13;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 256,
				2);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf + 64, 8);
	qx->wr_id = 14;
	ibv_wr_atomic_cmp_swp(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 256, 42,
			      1000);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf + 72, 8);
	qx->wr_id = 15;
	ibv_wr_atomic_write(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 264,
			    &value);
	value = 0; /* copied already */
	qx->wr_id = 16;
	ibv_wr_rdma_read(qx, p->b.mr->rkey, (uintptr_t)p->b.buf + 256);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf + 80, 16);
	rc = ibv_wr_complete(qx);
	CHECK(rc == 0, "the batch: %s", strerror(rc));
	int n = drain(p->a.cq, wc, 8, 3000);
	CHECK(n == 5, "5 signaled WRs, %d completions", n);
	static const uint64_t want_id[] = {11, 13, 14, 15, 16};
	static const enum ibv_wc_opcode want_op[] = {
	    IBV_WC_RDMA_WRITE, IBV_WC_FETCH_ADD, IBV_WC_COMP_SWAP,
	    IBV_WC_ATOMIC_WRITE, IBV_WC_RDMA_READ};
	for (int i = 0; i < n && i < 5; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS &&
			  wc[i].wr_id == want_id[i] &&
			  wc[i].opcode == want_op[i],
		      "completion %d: wr_id %llu opcode %d %s", i,
		      (unsigned long long)wc[i].wr_id, wc[i].opcode,
		      ibv_wc_status_str(wc[i].status));
	CHECK(!memcmp(p->b.buf, "abcdefgh", 8), "the SGE list's WRITE");
	CHECK(drain(p->b.cq, wc, 1, 3000) == 1 && wc[0].byte_len == 6 &&
		  (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
		  be32toh(wc[0].imm_data) == 0xfeed &&
		  !memcmp(p->b.buf + 1024, "inline", 6),
	      "the inline SEND with immediate");
	memcpy(&got, p->a.buf + 64, 8);
	CHECK(got == 40, "fetch-add's old value %llu", (unsigned long long)got);
	memcpy(&got, p->a.buf + 72, 8);
	CHECK(got == 42, "cmp-swap's old value %llu", (unsigned long long)got);
	memcpy(&got, p->a.buf + 80, 8);
	CHECK(got == 1000, "the word after both %llu", (unsigned long long)got);
	memcpy(&got, p->a.buf + 88, 8);
	CHECK(got == 0x1122334455667788ull, "ATOMIC_WRITE's word %llx",
	      (unsigned long long)got);
}

static void test_ud(void)
{
	struct pair p;
	struct ibv_wc wc;

	if (pair_open(&p, 4096, 0)) {
		CHECK(0, "UD pair");
		return;
	}
	p.send_ops = IBV_QP_EX_WITH_SEND;
	if (pair_add_qps(&p, IBV_QPT_UD, NULL)) {
		CHECK(0, "UD QPs with send_ops_flags");
		pair_close(&p);
		return;
	}
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	aa.grh.dgid = p.gid;
	aa.grh.sgid_index = PAIR_GID_INDEX;
	aa.grh.hop_limit = 64;
	struct ibv_ah *ah = ibv_create_ah(p.pd, &aa);
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(p.a.qp);
	CHECK(ah && qx, "UD AH and ibv_qp_ex");
	if (ah && qx) {
		memcpy(p.a.buf, "datagram", 8);
		pair_post_recv(&p.b, 3, p.b.buf, 40 + 8);
		ibv_wr_start(qx);
		qx->wr_id = 21;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qx);
		ibv_wr_set_ud_addr(qx, ah, p.b.qp->qp_num, PAIR_QKEY);
		ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf, 8);
		CHECK(ibv_wr_complete(qx) == 0, "UD batch");
		CHECK(drain(p.b.cq, &wc, 1, 3000) == 1 &&
			  wc.status == IBV_WC_SUCCESS && wc.byte_len == 48 &&
			  !memcmp(p.b.buf + 40, "datagram", 8),
		      "the UD SEND arrived");
		CHECK(drain(p.a.cq, &wc, 1, 3000) == 1 && wc.wr_id == 21,
		      "the UD SEND completed");
		ibv_destroy_ah(ah);
	}
	pair_close(&p);
}

int main(void)
{
	struct pair p;

	if (pair_open(&p, 4096, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL)) {
		printf("verbs_qp_ex: 0 passed, 1 failed (set-up)\n");
		return 1;
	}
	test_create(&p);
	pair_close(&p);
	if (pair_open(&p, 4096, 0)) {
		printf("verbs_qp_ex: 0 passed, 1 failed (set-up)\n");
		return 1;
	}
	p.send_ops = RC_OPS;
	struct ibv_qp_ex *qx = NULL;
	if (!pair_add_qps(&p, IBV_QPT_RC, NULL))
		qx = ibv_qp_to_qp_ex(p.a.qp);
	CHECK(qx, "RC QPs with send_ops_flags: %s", strerror(errno));
	if (qx) {
		test_misuse(&p, qx);
		test_batch(&p, qx);
	}
	pair_close(&p);
	test_ud();
	printf("verbs_qp_ex: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
