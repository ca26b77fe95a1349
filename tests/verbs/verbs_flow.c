// SPDX-License-Identifier: MIT
/*
 * An address handle's traffic class and flow label through the verbs API:
 * a UD SEND through an AH that names both (the drop-in's wire is IPv4:
 * the traffic class is the TOS byte, IPv4 has no flow label), the IPv4
 * header that ends the receiver's GRH area carries the TOS, and
 * ibv_init_ah_from_wc gives it back for the reply: the TOS crossed a
 * real UDP socket (the capture shows frames as built, before it). Built
 * with plain cc -libverbs and examples/pair.c; prints one line per failed check and a closing
 * "verbs_flow: N passed, M failed".
 */
#include <stdio.h>
#include <string.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

enum { FL = 0x12345, TC = 0x68, LEN = 16, GRH = 40 };

static void check_ud_ah(struct pair *p)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = p->gid, .sgid_index = PAIR_GID_INDEX,
			 .flow_label = FL, .traffic_class = TC,
			 .hop_limit = 64 },
	};
	struct ibv_ah_attr back;
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND };
	struct ibv_wc wc;
	struct ibv_ah *ah = ibv_create_ah(p->pd, &aa);
	const uint8_t *g = (const uint8_t *)p->b.buf;

	CHECK(ah != NULL, "ibv_create_ah");
	if (!ah)
		return;
	memset(p->b.buf, 0, GRH + LEN);
	CHECK(pair_post_recv(&p->b, 2, p->b.buf, GRH + LEN) == 0, "post recv");
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = p->b.qp->qp_num;
	wr.wr.ud.remote_qkey = PAIR_QKEY;
	CHECK(pair_post_send(&p->a, &wr, p->a.buf, LEN) == 0, "post UD SEND");
	CHECK(pair_wait(p->b.cq, &wc) == 0 && wc.status == IBV_WC_SUCCESS &&
	      (wc.wc_flags & IBV_WC_GRH), "receive with a GRH");
	/* 20 zero bytes, then the IPv4 header: version 4, 5 words, TOS */
	CHECK(g[20] == 0x45 && g[21] == TC, "GRH's IPv4 header %02x %02x",
	      g[20], g[21]);
	CHECK(ibv_init_ah_from_wc(p->ctx, 1, &wc, (struct ibv_grh *)p->b.buf,
				  &back) == 0 &&
	      back.grh.traffic_class == TC && back.grh.flow_label == 0,
	      "ibv_init_ah_from_wc: traffic class %#x flow label %#x",
	      back.grh.traffic_class, back.grh.flow_label);
	CHECK(pair_wait(p->a.cq, &wc) == 0 && wc.status == IBV_WC_SUCCESS,
	      "send completion");
	ibv_destroy_ah(ah);
}

int main(void)
{
	struct pair p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pair_open(&p, 4096, 0) || pair_add_qps(&p, IBV_QPT_UD, NULL)) {
		printf("verbs_flow: 0 passed, 1 failed\n");
		return 1;
	}
	check_ud_ah(&p);
	pair_close(&p);
	printf("verbs_flow: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
