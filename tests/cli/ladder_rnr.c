// SPDX-License-Identifier: MIT
/*
 * A receiver not ready, retried for ever: side a SENDs to side b (RC,
 * rnr_retry 7, which is "for ever") before b has posted a receive, so b
 * answers each try with an RNR NAK; after SLEEP_MS b posts its receive
 * and the next try completes. The capture holds a long run of identical
 * SEND / RNR NAK pairs, for rocemu ladder to fold into one row.
 *   cc -o ladder_rnr ladder_rnr.c examples/pair.c -Iexamples -libverbs
 */
#include "pair.h"

#include <stdio.h>
#include <time.h>

enum { SLEEP_MS = 60 };

int main(void)
{
	struct pair p;
	struct ibv_send_wr wr = {.opcode = IBV_WR_SEND};
	struct ibv_wc wc;
	struct timespec ts = {0, SLEEP_MS * 1000000L};
	int ok = 0;

	if (pair_open(&p, 64, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		return 1;
	if (!pair_post_send(&p.a, &wr, p.a.buf, 16)) {
		nanosleep(&ts, NULL);
		ok = !pair_post_recv(&p.b, 7, p.b.buf, 64) &&
		     !pair_wait(p.b.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		     !pair_wait(p.a.cq, &wc) && wc.status == IBV_WC_SUCCESS;
	}
	printf("SEND after RNR NAKs: %s\n", ok ? "completed" : "failed");
	pair_close(&p);
	return !ok;
}
