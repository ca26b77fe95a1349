// SPDX-License-Identifier: MIT
/*
 * RDMA WRITE, with and without immediate data. A plain WRITE puts bytes into
 * the peer's registered memory and the peer's CPU hears nothing of it; WRITE
 * with immediate also consumes a receive at the peer, whose completion
 * carries the 32-bit immediate: the usual way to say "the data is there".
 *   cc -o rdma_write rdma_write.c pair.c -libverbs
 */
#include "pair.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	struct pair p;
	struct ibv_wc wc;
	int ok = 0;

	if (pair_open(&p, 8192, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	memset(p.a.buf, 'w', 5000);
	/* The target is named by the peer's virtual address and rkey, which a
	 * real program learns out of band (perftest exchanges them over TCP). */
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)p.b.buf,
			     .rkey = p.b.mr->rkey },
	};
	if (pair_post_send(&p.a, &wr, p.a.buf, 5000) || pair_wait(p.a.cq, &wc) ||
	    wc.status != IBV_WC_SUCCESS)
		goto out;
	/* 5000 bytes are more than one MTU: the wire saw FIRST, MIDDLE, LAST. */
	printf("a: WRITE of 5000 bytes %s; b's buffer now starts \"%.8s\"\n",
	       ibv_wc_status_str(wc.status), p.b.buf);
	if (memcmp(p.a.buf, p.b.buf, 5000))
		goto out;

	if (pair_post_recv(&p.b, 9, NULL, 0))
		goto out;
	struct ibv_send_wr imm = {
		.wr_id = 2, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.imm_data = htonl(0xC0FFEE),
		.wr.rdma = { .remote_addr = (uintptr_t)p.b.buf + 6000,
			     .rkey = p.b.mr->rkey },
	};
	strcpy(p.a.buf + 6000, "tail");
	if (pair_post_send(&p.a, &imm, p.a.buf + 6000, 5) ||
	    pair_wait(p.a.cq, &wc) || pair_wait(p.b.cq, &wc))
		goto out;
	/* imm_data stays in network byte order, as the verbs API defines it. */
	printf("b: %s, immediate 0x%x, %u bytes, buffer \"%s\"\n",
	       wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM ? "RECV_RDMA_WITH_IMM" : "?",
	       ntohl(wc.imm_data), wc.byte_len, p.b.buf + 6000);
	ok = wc.status == IBV_WC_SUCCESS &&
	     wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	     (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0xC0FFEE &&
	     wc.byte_len == 5 && !strcmp(p.b.buf + 6000, "tail");
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
