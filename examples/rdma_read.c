// SPDX-License-Identifier: MIT
/*
 * RDMA READ: the requester fetches bytes from the peer's memory. The peer's
 * CPU takes no part; its device answers with READ response packets, and the
 * requester's completion says the bytes are in the local buffer.
 *   cc -o rdma_read rdma_read.c pair.c -libverbs
 */
#include "pair.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	struct pair p;
	struct ibv_wc wc;
	int ok = 0;

	if (pair_open(&p, 16384, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	for (size_t i = 0; i < 10000; i++)
		p.b.buf[i] = (char)('a' + i % 26);
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { .remote_addr = (uintptr_t)p.b.buf,
			     .rkey = p.b.mr->rkey },
	};
	/* The local buffer must allow local write: the response lands there. */
	if (pair_post_send(&p.a, &wr, p.a.buf, 10000) || pair_wait(p.a.cq, &wc))
		goto out;
	printf("a: READ of %u bytes %s, first bytes \"%.10s\"\n", wc.byte_len,
	       ibv_wc_status_str(wc.status), p.a.buf);
	ok = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ &&
	     wc.byte_len == 10000 && !memcmp(p.a.buf, p.b.buf, 10000);
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
