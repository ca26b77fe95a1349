// SPDX-License-Identifier: MIT
/*
 * The ibv_wr_* interface: instead of filling struct ibv_send_wr, a program
 * opens a batch with ibv_wr_start, adds work requests with one call per
 * opcode (ibv_wr_rdma_write, ibv_wr_send, ibv_wr_atomic_write, ...) each
 * followed by the calls that give its data (ibv_wr_set_sge,
 * ibv_wr_set_inline_data), and posts the whole batch with ibv_wr_complete.
 * The queue pair must be made with ibv_create_qp_ex naming, in
 * send_ops_flags, every operation it will use; ibv_qp_to_qp_ex gives its
 * ibv_qp_ex. wr_id and wr_flags are fields of the ibv_qp_ex, read by each
 * opcode call.
 *   cc -o wr_api wr_api.c pair.c -libverbs
 */
#include "pair.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Waits for n completions on cq, each successful; their wr_ids in order. */
static int wait_n(struct ibv_cq *cq, int n, uint64_t *ids)
{
	struct ibv_wc wc;

	for (int i = 0; i < n; i++) {
		if (pair_wait(cq, &wc) || wc.status != IBV_WC_SUCCESS) {
			printf("completion %d: %s\n", i,
			       ibv_wc_status_str(wc.status));
			return -1;
		}
		ids[i] = wc.wr_id;
	}
	return 0;
}

int main(void)
{
	struct pair p;
	uint64_t ids[3], word = 0x0123456789abcdefull;
	char hello[] = "hello, inline";
	int ok = 0, rc;

	if (pair_open(&p, 4096, 0))
		goto out;
	/* What a's QP will post; anything else makes wr_complete fail. */
	p.send_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
		     IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_READ;
	if (pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(p.a.qp);
	if (!qx) {
		printf("ibv_qp_to_qp_ex: no extended QP\n");
		goto out;
	}
	memset(p.a.buf, 'w', 100);
	if (pair_post_recv(&p.b, 70, p.b.buf + 1024, 64))
		goto out;

	/* One batch, three work requests, one post. */
	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, p.b.mr->rkey, (uintptr_t)p.b.buf);
	ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf, 100);
	qx->wr_id = 2;
	ibv_wr_send(qx);
	/* Inline: copied now, the buffer is free again at once. */
	ibv_wr_set_inline_data(qx, hello, sizeof(hello));
	qx->wr_id = 3;
	/* ATOMIC WRITE (IBTA 1.5): 8 bytes that land at once, aligned. */
	ibv_wr_atomic_write(qx, p.b.mr->rkey, (uintptr_t)p.b.buf + 512, &word);
	rc = ibv_wr_complete(qx);
	if (rc) {
		printf("ibv_wr_complete: %s\n", strerror(rc));
		goto out;
	}
	if (wait_n(p.a.cq, 3, ids))
		goto out;
	printf("completions for wr_id %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n",
	       ids[0], ids[1], ids[2]);

	/* A batch with an operation the QP was not made for is refused
	 * whole: the WRITE before it is not posted either. */
	ibv_wr_start(qx);
	qx->wr_id = 4;
	ibv_wr_rdma_write(qx, p.b.mr->rkey, (uintptr_t)p.b.buf + 2048);
	ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf, 8);
	ibv_wr_atomic_fetch_add(qx, p.b.mr->rkey, (uintptr_t)p.b.buf, 1);
	ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf, 8);
	rc = ibv_wr_complete(qx);
	printf("batch with FETCH_AND_ADD: %s\n", rc ? strerror(rc) : "posted");

	/* Read b's word back to see what the ATOMIC WRITE left. */
	uint64_t back = 0;
	ibv_wr_start(qx);
	qx->wr_id = 5;
	ibv_wr_rdma_read(qx, p.b.mr->rkey, (uintptr_t)p.b.buf + 512);
	ibv_wr_set_sge(qx, p.a.mr->lkey, (uintptr_t)p.a.buf + 512, 8);
	if (ibv_wr_complete(qx) || wait_n(p.a.cq, 1, ids))
		goto out;
	memcpy(&back, p.a.buf + 512, 8);
	printf("b's word read back: %#" PRIx64 "\n", back);

	struct ibv_wc wc;
	if (pair_wait(p.b.cq, &wc) || wc.status != IBV_WC_SUCCESS)
		goto out;
	printf("b received \"%s\"\n", p.b.buf + 1024);
	ok = ids[0] == 5 && rc == EINVAL && back == word &&
	     !memcmp(p.b.buf, p.a.buf, 100) && p.b.buf[2048] == 0 &&
	     !strcmp(p.b.buf + 1024, hello);
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
