// SPDX-License-Identifier: MIT
/*
 * fork() on rocemu's libibverbs.so.1, as a pre-forking server does it: the
 * parent opens the device and moves traffic, then forks children while it
 * keeps going. Each child finds the context it inherited dead (EIO, at
 * once: alarm() turns a hang into a failure), and opens a device of its
 * own on its parent's address (each process its own slot there,
 * docs/sharing.md) and moves its own traffic.
 * usage: verbs_fork CHILDREN [PCAP_DIR]
 *   with PCAP_DIR, child 0 records to PCAP_DIR/child0.pcap. VERBS_FORK_INHERITED_ONLY=1 in the
 *   environment: the children check only what they inherited, and make no
 *   device (ThreadSanitizer cannot follow a thread started in the child of
 *   a multi-threaded process).
 * Prints each failure and "verbs_fork: P passed, F failed"; exits 1 if any
 * failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

enum { MSG = 512, HANG_GUARD_S = 300, MAX_CHILDREN = 32 };

/* One SEND from a to b and both completions: 0, or -1. */
static int round_trip(struct pair *p, unsigned seq)
{
	struct ibv_send_wr wr = { .wr_id = seq, .opcode = IBV_WR_SEND };
	struct ibv_wc wc;

	memset(p->a.buf, (int)(seq & 0xff), MSG);
	if (pair_post_recv(&p->b, seq, p->b.buf, MSG) ||
	    pair_post_send(&p->a, &wr, p->a.buf, MSG) ||
	    pair_wait(p->a.cq, &wc) || wc.status != IBV_WC_SUCCESS ||
	    pair_wait(p->b.cq, &wc) || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != seq || wc.byte_len != MSG)
		return -1;
	return memcmp(p->a.buf, p->b.buf, MSG) ? -1 : 0;
}

/* Device memory the parent allocated before the fork. */
static struct ibv_dm *parent_dm;

/*
 * Device memory lives in the process, so a child may allocate it on the
 * inherited context (rdma-core's suite does, from several children at
 * once); the parent's DM is the parent's: EIO.
 */
static void device_memory(struct pair *p)
{
	struct ibv_alloc_dm_attr at = { .length = 256 };
	uint8_t out[64], in[64];
	struct ibv_dm *dm;

	memset(out, 0x5a, sizeof(out));
	if (parent_dm)
		EXPECT(ibv_memcpy_to_dm(parent_dm, 0, out, sizeof(out)) == EIO);
	dm = ibv_alloc_dm(p->ctx, &at);
	CHECK(dm != NULL, "child: ibv_alloc_dm on the inherited context: %s",
	      strerror(errno));
	if (!dm)
		return;
	EXPECT(ibv_memcpy_to_dm(dm, 64, out, sizeof(out)) == 0);
	EXPECT(ibv_memcpy_from_dm(in, dm, 64, sizeof(in)) == 0);
	EXPECT(!memcmp(in, out, sizeof(in)));
	EXPECT(ibv_free_dm(dm) == 0);
}

/* Every kind of call on what the parent made: EIO, promptly. */
static void inherited_is_dead(struct pair *p)
{
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad = NULL;
	struct ibv_recv_wr rwr = { 0 }, *rbad = NULL;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr qi;
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	struct ibv_wc wc;
	union ibv_gid gid;

	errno = 0;
	EXPECT(!ibv_alloc_pd(p->ctx) && errno == EIO);
	errno = 0;
	EXPECT(!ibv_create_cq(p->ctx, 4, NULL, NULL, 0) && errno == EIO);
	errno = 0;
	EXPECT(!ibv_reg_mr(p->pd, p->a.buf, MSG, IBV_ACCESS_LOCAL_WRITE) &&
	       errno == EIO);
	/* the device's fixed attributes are still told (rdma-core's suite
	 * asks before it allocates device memory in children) */
	EXPECT(ibv_query_device(p->ctx, &da) == 0 && da.max_qp > 0);
	EXPECT(ibv_query_port(p->ctx, 1, &pa) == EIO);
	EXPECT(ibv_query_gid(p->ctx, 1, 1, &gid) == -1);
	EXPECT(ibv_post_send(p->a.qp, &swr, &sbad) == EIO && sbad == &swr);
	EXPECT(ibv_post_recv(p->b.qp, &rwr, &rbad) == EIO && rbad == &rwr);
	EXPECT(ibv_poll_cq(p->a.cq, 1, &wc) < 0);
	EXPECT(ibv_req_notify_cq(p->b.cq, 0) == EIO);
	EXPECT(ibv_query_qp(p->a.qp, &qa, IBV_QP_STATE, &qi) == EIO);
	EXPECT(ibv_modify_qp(p->a.qp, &qa, IBV_QP_STATE) == EIO);
	EXPECT(ibv_destroy_qp(p->a.qp) == EIO);
	EXPECT(ibv_dereg_mr(p->a.mr) == EIO);
	EXPECT(ibv_destroy_cq(p->a.cq) == EIO);
	EXPECT(ibv_dealloc_pd(p->pd) == EIO);
	device_memory(p);
	/* What is the child's own (its copy of the context) it can let go. */
	EXPECT(ibv_close_device(p->ctx) == 0);
}

/* A device of its own on the parent's address, which processes share
 * (recording to pcap, if set). */
static void own_device(const char *addr, const char *pcap)
{
	struct pair c;

	if (pcap)
		setenv("ROCEMU_PCAP", pcap, 1);
	if (pair_open(&c, MSG, 0) || pair_add_qps(&c, IBV_QPT_RC, NULL)) {
		CHECK(0, "child on %s: no device of its own", addr);
		return;
	}
	for (unsigned i = 0; i < 20; i++)
		CHECK(!round_trip(&c, i), "child on %s: round trip %u", addr, i);
	pair_close(&c);
}

static void child(struct pair *p, const char *addr, const char *pcap)
{
	alarm(HANG_GUARD_S); /* a hang dies of SIGALRM, which the parent sees */
	EXPECT(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	inherited_is_dead(p);
	if (!getenv("VERBS_FORK_INHERITED_ONLY"))
		own_device(addr, pcap);
	/* exit, not _exit: the library's destructor runs in the child. */
	exit(failed ? 1 : 0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	pid_t pids[MAX_CHILDREN];
	struct pair p;
	unsigned seq = 0;

	if (n < 1 || n > MAX_CHILDREN) {
		fprintf(stderr, "usage: verbs_fork CHILDREN(1-%d) [PCAP_DIR]\n",
			MAX_CHILDREN);
		return 2;
	}
	/* Fork protection is not needed (nothing is pinned; a child's memory
	 * is its own copy), before and after asking for it. */
	EXPECT(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	EXPECT(ibv_fork_init() == 0);
	EXPECT(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	if (pair_open(&p, MSG, 0) || pair_add_qps(&p, IBV_QPT_RC, NULL)) {
		printf("verbs_fork: 0 passed, 1 failed (no device)\n");
		return 1;
	}
	CHECK(!round_trip(&p, seq++), "parent before the fork");
	struct ibv_alloc_dm_attr at = { .length = 256 };
	parent_dm = ibv_alloc_dm(p.ctx, &at);
	CHECK(parent_dm != NULL, "parent: ibv_alloc_dm");
	for (int i = 0; i < n; i++) {
		char addr[64], pcap[4096];

		snprintf(addr, sizeof(addr), "%s", getenv("ROCEMU_ADDR") ?
			 getenv("ROCEMU_ADDR") : "127.0.0.1");
		snprintf(pcap, sizeof(pcap), "%s/child0.pcap",
			 argc > 2 ? argv[2] : ".");
		fflush(stdout); /* the child's copy of the buffer is empty */
		pids[i] = fork();
		if (pids[i] == 0)
			child(&p, addr, i == 0 && argc > 2 ? pcap : NULL);
		CHECK(pids[i] > 0, "fork: %s", strerror(errno));
		/* the parent keeps working while its children do */
		CHECK(!round_trip(&p, seq++), "parent after fork %d", i);
	}
	for (int i = 0; i < n; i++) {
		int st = 0;

		if (pids[i] <= 0)
			continue;
		CHECK(!round_trip(&p, seq++), "parent while children run");
		CHECK(waitpid(pids[i], &st, 0) == pids[i], "waitpid");
		if (WIFSIGNALED(st))
			CHECK(0, "child %d killed by signal %d%s", i,
			      WTERMSIG(st),
			      WTERMSIG(st) == SIGALRM ? " (hung)" : "");
		else
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "child %d exit status %d", i, WEXITSTATUS(st));
	}
	for (unsigned i = 0; i < 20; i++)
		CHECK(!round_trip(&p, seq++), "parent after its children");
	if (parent_dm)
		EXPECT(ibv_free_dm(parent_dm) == 0);
	pair_close(&p);
	printf("verbs_fork: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
