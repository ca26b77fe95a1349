/* SPDX-License-Identifier: MIT */
/*
 * ROCEMU_STATE: the queue state on a signal and at exit. b WRITEs twice
 * into a's buffer (waited for through b's completion channel, never
 * polled: b's CQ keeps 2 completions); then a SENDs to b, which posts no
 * receive (RNR NAKs, retried for ever: the SEND stays outstanding) and
 * posts a WRITE behind it. The program, which installed its own SIGUSR2
 * handler before any verbs call, raises SIGUSR2 and waits until its
 * stderr (a file: run.sh's) shows the dump. It prints what the dump must
 * show, for verbs_state_check.sh: "qpn a 0x..", "qpn b 0x..", the two
 * wr_ids, and the completions it left in each CQ.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

enum { SEND_ID = 0x5e5d, WRITE_ID = 0x3717, B_WRITES = 2 };

static volatile sig_atomic_t own_handler_ran;

static void own_handler(int sig)
{
	(void)sig;
	own_handler_ran++;
}

/* One signalled WRITE of 8 bytes from b into a's buffer, waited for on
 * b's channel (its CQE stays in b's CQ). 0 or -1. */
static int b_write(struct pair *p, uint64_t wr_id)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_cq *cq;
	void *ctx;

	wr.wr.rdma.remote_addr = (uintptr_t)p->a.buf;
	wr.wr.rdma.rkey = p->a.mr->rkey;
	if (ibv_req_notify_cq(p->b.cq, 0) ||
	    pair_post_send(&p->b, &wr, p->b.buf, 8) ||
	    ibv_get_cq_event(p->channel, &cq, &ctx))
		return -1;
	ibv_ack_cq_events(cq, 1);
	return 0;
}

/* Whether this process's stderr (a regular file) holds s yet. */
static int stderr_has(const char *s)
{
	static char buf[1 << 16];
	int fd = open("/proc/self/fd/2", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, s) != NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = own_handler,
				.sa_flags = SA_RESTART };
	struct pair p;

	sigemptyset(&sa.sa_mask);
	setenv("ROCEMU_STATE", "1", 1);
	EXPECT(sigaction(SIGUSR2, &sa, NULL) == 0);
	if (pair_open(&p, 4096, 1) || pair_add_qps(&p, IBV_QPT_RC, NULL)) {
		printf("verbs_state: 0 passed, 1 failed\n");
		return 1;
	}
	for (int i = 0; i < B_WRITES; i++)
		EXPECT(b_write(&p, 0xb0 + i) == 0);

	struct ibv_send_wr send = { .wr_id = SEND_ID, .opcode = IBV_WR_SEND };
	struct ibv_send_wr write = { .wr_id = WRITE_ID,
				     .opcode = IBV_WR_RDMA_WRITE };
	write.wr.rdma.remote_addr = (uintptr_t)p.b.buf;
	write.wr.rdma.rkey = p.b.mr->rkey;
	EXPECT(pair_post_send(&p.a, &send, p.a.buf, 64) == 0);
	EXPECT(pair_post_send(&p.a, &write, p.a.buf + 64, 64) == 0);
	printf("qpn a 0x%06x\nqpn b 0x%06x\nsend wr_id 0x%x\nwrite wr_id "
	       "0x%x\nleft in a's cq 0\nleft in b's cq %d\n", p.a.qp->qp_num,
	       p.b.qp->qp_num, SEND_ID, WRITE_ID, B_WRITES);
	fflush(stdout);

	EXPECT(raise(SIGUSR2) == 0);
	/* the handler the program had before the drop-in's still runs */
	EXPECT(own_handler_ran == 1);
	/* The progress thread dumps within about 100 ms; 60 s is a hang
	 * guard for a loaded machine, no timing claim. */
	int seen = 0;
	for (int i = 0; i < 6000 && !seen; i++) {
		seen = stderr_has("rocemu: state: dump on signal SIGUSR2");
		if (!seen)
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	CHECK(seen, "no state dump on stderr after SIGUSR2");
	/* a second signal: the program's handler again, and a second dump
	 * is asked for (not waited for) */
	EXPECT(raise(SIGUSR2) == 0);
	EXPECT(own_handler_ran == 2);
	/* a's SEND and WRITE stay outstanding; destroying the QPs would
	 * flush them, so the exit dump is taken with them still there:
	 * the pair is left for the process's end to clean up */
	printf("verbs_state: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
