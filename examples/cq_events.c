// SPDX-License-Identifier: MIT
/*
 * Completions by event instead of by busy polling: the CQ reports to a
 * completion channel, whose file descriptor becomes readable when a
 * completion arrives after ibv_req_notify_cq. Here poll(2) waits on it, as an
 * event loop would (epoll works the same way).
 *   cc -o cq_events cq_events.c pair.c -libverbs
 */
#include "pair.h"

#include <poll.h>
#include <stdio.h>

int main(void)
{
	struct pair p;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	void *cq_ctx;
	int ok = 0, received = 0;

	if (pair_open(&p, 4096, 1) || pair_add_qps(&p, IBV_QPT_RC, NULL))
		goto out;
	/* Ask for one event at the next completion: arm before posting. */
	if (ibv_req_notify_cq(p.b.cq, 0))
		goto out;
	for (int i = 0; i < 3; i++) {
		struct ibv_send_wr wr = { .wr_id = i, .opcode = IBV_WR_SEND };
		if (pair_post_recv(&p.b, i, p.b.buf + i * 64, 64) ||
		    pair_post_send(&p.a, &wr, p.a.buf, 32))
			goto out;
	}
	while (received < 3) {
		struct pollfd pfd = { .fd = p.channel->fd, .events = POLLIN };

		if (poll(&pfd, 1, 5000) != 1) {
			fprintf(stderr, "no completion event in 5 s\n");
			goto out;
		}
		if (ibv_get_cq_event(p.channel, &cq, &cq_ctx))
			goto out;
		/* Every event must be acknowledged before the CQ is destroyed;
		 * re-arm before draining, or a completion could slip between. */
		ibv_ack_cq_events(cq, 1);
		if (cq != p.b.cq || ibv_req_notify_cq(cq, 0))
			goto out;
		int n;
		while ((n = ibv_poll_cq(cq, 1, &wc)) == 1) {
			printf("event -> completion wr_id %lu %s\n",
			       (unsigned long)wc.wr_id,
			       ibv_wc_status_str(wc.status));
			received += wc.status == IBV_WC_SUCCESS;
		}
		if (n < 0)
			goto out;
	}
	ok = 1;
out:
	pair_close(&p);
	return ok ? 0 : 1;
}
