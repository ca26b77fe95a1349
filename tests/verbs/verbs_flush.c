// SPDX-License-Identifier: MIT
/*
 * IBTA 1.5 FLUSH and ATOMIC WRITE through the verbs API, as a program
 * built with rdma-core 45's headers meets them: the device's capability
 * bits, the flush access rights of ibv_reg_mr and ibv_modify_qp, and
 * ibv_wr_atomic_write and ibv_wr_flush in one batch after a WRITE, each
 * completing in order with its own opcode and the data where it belongs;
 * then a FLUSH of memory without the right completing in error. The
 * system's headers may predate FLUSH: the numbers are rdma-core 45's,
 * and ibv_wr_flush's pointer is read where its struct ibv_qp_ex has it.
 * Built with plain cc -libverbs and examples/pair.c; run on rocemu's
 * libibverbs.so.1. Prints one line per failed check and a closing
 * "verbs_flush: N passed, M failed".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

/* rdma-core 45's names (libibverbs/verbs.h, rdma/ib_user_verbs.h) */
enum {
	WITH_FLUSH = 1 << 11,		/* IBV_QP_EX_WITH_FLUSH */
	ACCESS_FLUSH_GLOBAL = 1 << 8,	/* IBV_ACCESS_FLUSH_GLOBAL */
	ACCESS_FLUSH_PERSISTENT = 1 << 9,
	WC_FLUSH = 8,			/* IBV_WC_FLUSH */
	FLUSH_GLOBAL = 1,		/* IBV_FLUSH_GLOBAL */
	FLUSH_RANGE = 0, FLUSH_MR = 1,	/* IBV_FLUSH_RANGE, _MR */
};
#define CAP_FLUSH_GLOBAL (1ull << 38)	/* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define CAP_FLUSH_PERSISTENT (1ull << 39)
#define CAP_ATOMIC_WRITE (1ull << 40)

/* struct ibv_qp_ex as rdma-core 45 ends it: wr_flush after
 * wr_atomic_write, the last member of older headers. */
struct qp_ex45 {
	struct ibv_qp_ex x;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey,
			 uint64_t remote_addr, size_t len, uint8_t type,
			 uint8_t level);
};

static void wr_flush(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr,
		     size_t len, uint8_t type, uint8_t level)
{
	((struct qp_ex45 *)(void *)qx)->wr_flush(qx, rkey, addr, len, type,
						 level);
}

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

static void test_caps_and_rights(struct pair *p)
{
	struct ibv_device_attr_ex a;

	memset(&a, 0, sizeof(a));
	CHECK(ibv_query_device_ex(p->ctx, NULL, &a) == 0, "query_device_ex");
	CHECK((a.device_cap_flags_ex & CAP_FLUSH_GLOBAL) &&
		  (a.device_cap_flags_ex & CAP_FLUSH_PERSISTENT) &&
		  (a.device_cap_flags_ex & CAP_ATOMIC_WRITE),
	      "device_cap_flags_ex %#llx lacks FLUSH or ATOMIC WRITE",
	      (unsigned long long)a.device_cap_flags_ex);
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(p->pd, p->b.buf, 64,
				       IBV_ACCESS_LOCAL_WRITE |
					   ACCESS_FLUSH_PERSISTENT);
	CHECK(!mr && errno == EINVAL,
	      "FLUSH_PERSISTENT on memory that is not persistent: %s",
	      mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

static void test_batch(struct pair *p, struct ibv_qp_ex *qx)
{
	uint8_t *mem = (uint8_t *)p->b.buf + 2048;
	uint64_t value = 0x0102030405060708ull, got;
	struct ibv_wc wc[8];
	struct ibv_mr *fmr = ibv_reg_mr(p->pd, mem, 1024,
					IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    ACCESS_FLUSH_GLOBAL);
	struct ibv_qp_attr qa = {
	    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ |
			       IBV_ACCESS_REMOTE_ATOMIC | ACCESS_FLUSH_GLOBAL};

	CHECK(fmr, "an MR with FLUSH_GLOBAL: %s", strerror(errno));
	CHECK(ibv_modify_qp(p->b.qp, &qa, IBV_QP_ACCESS_FLAGS) == 0,
	      "the responder QP given FLUSH_GLOBAL in RTS");
	if (!fmr)
		return;
	memset(p->a.buf, 'w', 64);
	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, fmr->rkey, (uintptr_t)mem);
	ibv_wr_set_sge(qx, p->a.mr->lkey, (uintptr_t)p->a.buf, 64);
	qx->wr_id = 2;
	ibv_wr_atomic_write(qx, fmr->rkey, (uintptr_t)mem + 64, &value);
	qx->wr_id = 3;
	wr_flush(qx, fmr->rkey, (uintptr_t)mem, 72, FLUSH_GLOBAL, FLUSH_RANGE);
	qx->wr_id = 4; /* level MR: address and length are ignored */
	wr_flush(qx, fmr->rkey, 0, 0, FLUSH_GLOBAL, FLUSH_MR);
	int rc = ibv_wr_complete(qx);
	CHECK(rc == 0, "the batch: %s", strerror(rc));
	int n = drain(p->a.cq, wc, 4, 3000);
	CHECK(n == 4, "4 signaled WRs, %d completions", n);
	static const int want_op[] = {IBV_WC_RDMA_WRITE, IBV_WC_ATOMIC_WRITE,
				      WC_FLUSH, WC_FLUSH};
	for (int i = 0; i < n && i < 4; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS &&
			  wc[i].wr_id == (uint64_t)i + 1 &&
			  (int)wc[i].opcode == want_op[i],
		      "completion %d: wr_id %llu opcode %d %s", i,
		      (unsigned long long)wc[i].wr_id, wc[i].opcode,
		      ibv_wc_status_str(wc[i].status));
	/* the data was placed before the FLUSH after it completed */
	for (int i = 0; i < 64; i++)
		CHECK(mem[i] == 'w', "byte %d of the WRITE: %#x", i, mem[i]);
	memcpy(&got, mem + 64, 8);
	CHECK(got == value, "ATOMIC WRITE's word %#llx",
	      (unsigned long long)got);

	/* b's first MR has no flush right: a remote access error */
	ibv_wr_start(qx);
	qx->wr_id = 5;
	wr_flush(qx, p->b.mr->rkey, (uintptr_t)p->b.buf, 8, FLUSH_GLOBAL,
		 FLUSH_RANGE);
	rc = ibv_wr_complete(qx);
	CHECK(rc == 0, "the refused FLUSH posted: %s", strerror(rc));
	n = drain(p->a.cq, wc, 1, 3000);
	CHECK(n == 1 && wc[0].wr_id == 5 &&
		  wc[0].status == IBV_WC_REM_ACCESS_ERR,
	      "a FLUSH without the right: %d completions, %s", n,
	      n == 1 ? ibv_wc_status_str(wc[0].status) : "-");
	ibv_dereg_mr(fmr);
}

int main(void)
{
	struct pair p;

	if (pair_open(&p, 4096, 0)) {
		printf("verbs_flush: 0 passed, 1 failed (set-up)\n");
		return 1;
	}
	p.send_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_WRITE |
		     WITH_FLUSH;
	struct ibv_qp_ex *qx = NULL;
	if (!pair_add_qps(&p, IBV_QPT_RC, NULL))
		qx = ibv_qp_to_qp_ex(p.a.qp);
	CHECK(qx, "RC QPs with FLUSH in send_ops_flags: %s", strerror(errno));
	test_caps_and_rights(&p);
	if (qx)
		test_batch(&p, qx);
	pair_close(&p);
	printf("verbs_flush: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
