// SPDX-License-Identifier: MIT
/*
 * SEND/RECV on a reliable connection: the receiver posts a buffer first, the
 * sender's message lands in it, and each side gets its own completion.
 *   cc -o send_recv send_recv.c pair.c -libverbs
 */
#include "pair.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	static const char msg[] = "hello over RoCEv2";
	struct pair p;
	struct ibv_wc wc;
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND };
	int ok = 0;

	if (pair_open(&p, 4096, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	/* A SEND consumes a receive the peer posted beforehand; without one
	 * the responder answers RNR NAK and the requester retries. */
	if (pair_post_recv(&p.b, 7, p.b.buf, p.len))
		goto out;
	memcpy(p.a.buf, msg, sizeof(msg));
	if (pair_post_send(&p.a, &wr, p.a.buf, sizeof(msg)))
		goto out;
	/* The sender's completion means the peer acknowledged the message. */
	if (pair_wait(p.a.cq, &wc) || wc.status != IBV_WC_SUCCESS)
		goto out;
	printf("a: %s for wr_id %lu\n", ibv_wc_status_str(wc.status),
	       (unsigned long)wc.wr_id);
	/* The receiver's completion carries the receive's wr_id and length. */
	if (pair_wait(p.b.cq, &wc) || wc.status != IBV_WC_SUCCESS)
		goto out;
	printf("b: received %u bytes for wr_id %lu: \"%s\"\n", wc.byte_len,
	       (unsigned long)wc.wr_id, p.b.buf);
	ok = wc.opcode == IBV_WC_RECV && wc.wr_id == 7 &&
	     wc.byte_len == sizeof(msg) && !strcmp(p.b.buf, msg);
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
