// SPDX-License-Identifier: MIT
/*
 * Unreliable datagrams: no connection, each SEND names its destination with
 * an address handle, the remote QP number and its Q_Key. A message fits in
 * one MTU, and the receive buffer starts with 40 bytes for the GRH that the
 * device writes there (for RoCEv2 over IPv4 it holds the IPv4 header).
 *   cc -o ud_send ud_send.c pair.c -libverbs
 */
#include "pair.h"

#include <stdio.h>
#include <string.h>

#define GRH_BYTES 40

int main(void)
{
	static const char msg[] = "a datagram";
	struct pair p;
	struct ibv_wc wc;
	struct ibv_ah *ah = NULL;
	int ok = 0;

	if (pair_open(&p, 4096, 0) || pair_add_qps(&p, IBV_QPT_UD, NULL))
		goto out;
	struct ibv_ah_attr where = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = p.gid, .sgid_index = PAIR_GID_INDEX,
			 .hop_limit = 64 },
	};
	ah = ibv_create_ah(p.pd, &where);
	if (!ah) {
		perror("ibv_create_ah");
		goto out;
	}
	if (pair_post_recv(&p.b, 5, p.b.buf, GRH_BYTES + 1024))
		goto out;
	struct ibv_send_wr wr = {
		.wr_id = 4, .opcode = IBV_WR_SEND,
		.wr.ud = { .ah = ah, .remote_qpn = p.b.qp->qp_num,
			   .remote_qkey = PAIR_QKEY },
	};
	memcpy(p.a.buf, msg, sizeof(msg));
	/* UD completes locally once sent: nobody acknowledges a datagram. */
	if (pair_post_send(&p.a, &wr, p.a.buf, sizeof(msg)) ||
	    pair_wait(p.a.cq, &wc) || pair_wait(p.b.cq, &wc))
		goto out;
	printf("b: %u bytes (GRH + %zu) from QP %u: \"%s\"\n", wc.byte_len,
	       wc.byte_len - (size_t)GRH_BYTES, wc.src_qp, p.b.buf + GRH_BYTES);
	ok = wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_GRH) &&
	     wc.src_qp == p.a.qp->qp_num &&
	     wc.byte_len == GRH_BYTES + sizeof(msg) &&
	     !strcmp(p.b.buf + GRH_BYTES, msg);
out:
	if (ah) /* before its PD goes */
		ibv_destroy_ah(ah);
	pair_close(&p);
	return ok ? 0 : 1;
}
