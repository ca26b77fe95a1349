/* SPDX-License-Identifier: MIT */
/*
 * Many processes on one device address (docs/sharing.md): the parent forks
 * N children (argument, default 2) that each open the device on the SAME
 * ROCEMU_ADDR, make an RC QP to every other child and a UD QP, check that
 * every QPN is unique across them, and move checked data between all
 * pairs (RC) and between the first two (UD). Then the parent SIGKILLs the
 * last child; the rest move checked data among themselves again, and the
 * first one's send to the dead child's QP ends in IBV_WC_RETRY_EXC_ERR
 * (that QP has a short timeout and few retries). The parent never opens
 * the device: it stays single-threaded, so the children run under
 * ThreadSanitizer too. Every wait is guarded (60 s): nothing hangs.
 * usage: verbs_share [N]   (2 <= N <= 16)
 */
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "verbs_check.h"

enum { MAX_N = 16, MSG = 256, GUARD_S = 60, QKEY = 0x11111111 };

/* Made before fork, shared by all: the QPNs and the barriers. */
struct shared {
	uint32_t qpn[MAX_N][MAX_N];	/* [i][j]: i's RC QP to j */
	uint32_t psn[MAX_N][MAX_N];
	uint32_t ud_qpn[MAX_N];
	unsigned arrived[16];		/* barrier k's count */
	unsigned victim_dead;
};

static struct shared *sh;
static int n_children, me;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits until n have reached barrier k; false after the guard. */
static bool barrier(unsigned k, unsigned n)
{
	double end = now_s() + GUARD_S;

	__atomic_add_fetch(&sh->arrived[k], 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sh->arrived[k], __ATOMIC_SEQ_CST) < n) {
		/* a child that failed ends every wait */
		if (now_s() > end ||
		    __atomic_load_n(&sh->arrived[15], __ATOMIC_SEQ_CST))
			return false;
		usleep(1000);
	}
	return true;
}

struct child {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp[MAX_N], *ud;
	struct ibv_ah *ah;
	union ibv_gid gid;
	uint8_t *buf;	/* [0, MAX_N): receive areas; [MAX_N, 2 MAX_N): send */
};

static uint8_t *rx_area(struct child *c, int from)
{
	return c->buf + (size_t)from * MSG;
}

static uint8_t *tx_area(struct child *c, int to)
{
	return c->buf + (size_t)(MAX_N + to) * MSG;
}

/* Polls one completion (up to the guard); false if none came. */
static bool poll_one(struct child *c, struct ibv_wc *wc)
{
	double end = now_s() + GUARD_S;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, wc)) == 0 && now_s() < end)
		usleep(100);
	return n == 1;
}

static bool rc_connect(struct child *c, int j, bool to_victim)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };

	if (ibv_modify_qp(c->qp[j], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = sh->qpn[j][me], .rq_psn = sh->psn[j][me],
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = c->gid, .sgid_index = 1,
				      .hop_limit = 64 } } };
	if (ibv_modify_qp(c->qp[j], &a, IBV_QP_STATE | IBV_QP_AV |
				       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER))
		return false;
	/* to the one that will die: give up soon (4.096 us * 2^10, twice) */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
				  .sq_psn = sh->psn[me][j],
				  .timeout = to_victim ? 10 : 14,
				  .retry_cnt = to_victim ? 2 : 7, .rnr_retry = 7,
				  .max_rd_atomic = 1 };
	return !ibv_modify_qp(c->qp[j], &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static bool ud_ready(struct child *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };

	if (ibv_modify_qp(c->ud, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY))
		return false;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(c->ud, &a, IBV_QP_STATE))
		return false;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return !ibv_modify_qp(c->ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static bool post_recv(struct child *c, struct ibv_qp *qp, uint8_t *at,
		      uint32_t len, uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)at, len, c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;

	return !ibv_post_recv(qp, &wr, &bad);
}

static bool post_send(struct child *c, struct ibv_qp *qp, uint8_t *at,
		      uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)at, MSG, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (qp == c->ud) {
		wr.wr.ud.ah = c->ah;
		wr.wr.ud.remote_qpn = sh->ud_qpn[1];
		wr.wr.ud.remote_qkey = QKEY;
	}
	return !ibv_post_send(qp, &wr, &bad);
}

/* The bytes i sends j in a round: a pattern of all three. */
static void fill(uint8_t *p, int from, int to, int round)
{
	for (int k = 0; k < MSG; k++)
		p[k] = (uint8_t)(from * 31 + to * 7 + round * 13 + k);
}

static bool pattern_ok(const uint8_t *p, int from, int to, int round)
{
	uint8_t want[MSG];

	fill(want, from, to, round);
	return !memcmp(p, want, MSG);
}

/* One round: a SEND from every live child to every other, each checked;
 * live is how many of the first children take part. */
static void round_trip(struct child *c, int round, int live, unsigned bar)
{
	for (int j = 0; j < live; j++)
		if (j != me)
			CHECK(post_recv(c, c->qp[j], rx_area(c, j), MSG,
					(uint64_t)j),
			      "child %d: post_recv from %d", me, j);
	CHECK(barrier(bar, (unsigned)live), "child %d: barrier %u", me, bar);
	for (int j = 0; j < live; j++) {
		if (j == me)
			continue;
		fill(tx_area(c, j), me, j, round);
		CHECK(post_send(c, c->qp[j], tx_area(c, j), 1000u + (unsigned)j),
		      "child %d: post_send to %d", me, j);
	}
	int sends = 0, recvs = 0;
	for (int k = 0; k < 2 * (live - 1); k++) {
		struct ibv_wc wc;

		if (!poll_one(c, &wc)) {
			CHECK(0, "child %d round %d: a completion missing", me,
			      round);
			return;
		}
		CHECK(wc.status == IBV_WC_SUCCESS,
		      "child %d round %d: wr %llu status %s", me, round,
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status));
		if (wc.opcode == IBV_WC_RECV) {
			recvs++;
			CHECK(pattern_ok(rx_area(c, (int)wc.wr_id), (int)wc.wr_id,
					 me, round),
			      "child %d round %d: data from %llu", me, round,
			      (unsigned long long)wc.wr_id);
		} else {
			sends++;
		}
	}
	CHECK(sends == live - 1 && recvs == live - 1,
	      "child %d round %d: %d sends %d receives", me, round, sends,
	      recvs);
}

/* Every RC and UD QPN any child made is unique. */
static void check_unique(void)
{
	uint32_t all[MAX_N * MAX_N + MAX_N];
	int n = 0;

	for (int i = 0; i < n_children; i++) {
		all[n++] = sh->ud_qpn[i];
		for (int j = 0; j < n_children; j++)
			if (i != j)
				all[n++] = sh->qpn[i][j];
	}
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			CHECK(all[a] != all[b], "QPN 0x%x twice", all[a]);
}

static bool child_setup(struct child *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	c->ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (list)
		ibv_free_device_list(list);
	if (!c->ctx || ibv_query_gid(c->ctx, 1, 1, &c->gid))
		return false;
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = c->pd ? ibv_create_cq(c->ctx, 4 * MAX_N, NULL, NULL, 0) : NULL;
	c->buf = calloc(2 * MAX_N, MSG);
	c->mr = c->cq && c->buf ? ibv_reg_mr(c->pd, c->buf, 2 * MAX_N * MSG,
					     IBV_ACCESS_LOCAL_WRITE)
				: NULL;
	if (!c->mr)
		return false;
	struct ibv_qp_init_attr ia = { .send_cq = c->cq, .recv_cq = c->cq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { 4, 4, 1, 1, 0 } };
	for (int j = 0; j < n_children; j++) {
		if (j == me)
			continue;
		c->qp[j] = ibv_create_qp(c->pd, &ia);
		if (!c->qp[j])
			return false;
		sh->qpn[me][j] = c->qp[j]->qp_num;
		sh->psn[me][j] = (uint32_t)(me * 4096 + j) & 0xffffff;
	}
	ia.qp_type = IBV_QPT_UD;
	c->ud = ibv_create_qp(c->pd, &ia);
	if (!c->ud || !ud_ready(c))
		return false;
	sh->ud_qpn[me] = c->ud->qp_num;
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = c->gid, .sgid_index = 1,
					   .hop_limit = 64 } };
	c->ah = ibv_create_ah(c->pd, &ah);
	return c->ah != NULL;
}

/* UD from child 0 to child 1, checked (the GRH's 40 bytes first). */
static void ud_exchange(struct child *c)
{
	struct ibv_wc wc;

	if (me == 1)
		CHECK(post_recv(c, c->ud, rx_area(c, 0), 40 + MSG, 7),
		      "post_recv UD");
	CHECK(barrier(3, (unsigned)n_children), "child %d: barrier 3", me);
	if (me == 0) {
		fill(tx_area(c, 1), 0, 1, 99);
		CHECK(post_send(c, c->ud, tx_area(c, 1), 8), "post_send UD");
	}
	if (me > 1)
		return;
	CHECK(poll_one(c, &wc) && wc.status == IBV_WC_SUCCESS,
	      "child %d: UD completion", me);
	if (me == 1)
		CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == 40 + MSG &&
			      pattern_ok(rx_area(c, 0) + 40, 0, 1, 99),
		      "UD data from child 0 (%u bytes)", wc.byte_len);
}

static int child_main(void)
{
	struct child c = { 0 };
	int victim = n_children - 1;

	CHECK(child_setup(&c), "child %d: device, QPs on the shared address",
	      me);
	if (failed)
		goto out;
	CHECK(barrier(0, (unsigned)n_children), "child %d: barrier 0", me);
	for (int j = 0; j < n_children; j++)
		if (j != me)
			CHECK(rc_connect(&c, j, j == victim),
			      "child %d: connect to %d", me, j);
	if (me == 0)
		check_unique();
	CHECK(barrier(1, (unsigned)n_children), "child %d: barrier 1", me);
	if (failed)
		goto out;
	round_trip(&c, 1, n_children, 2);
	ud_exchange(&c);
	/* the parent kills the victim once all are here */
	CHECK(barrier(4, (unsigned)n_children), "child %d: barrier 4", me);
	if (me == victim) {
		pause(); /* until SIGKILL */
		return 1;
	}
	double end = now_s() + GUARD_S;
	while (!__atomic_load_n(&sh->victim_dead, __ATOMIC_SEQ_CST) &&
	       now_s() < end)
		usleep(1000);
	CHECK(sh->victim_dead, "child %d: the victim did not die", me);
	round_trip(&c, 2, n_children - 1, 5);
	if (me == 0) { /* to the dead child: the retries run out */
		struct ibv_wc wc = { 0 };

		fill(tx_area(&c, victim), 0, victim, 3);
		CHECK(post_send(&c, c.qp[victim], tx_area(&c, victim), 77),
		      "post_send to the dead child");
		CHECK(poll_one(&c, &wc) && wc.wr_id == 77 &&
			      wc.status == IBV_WC_RETRY_EXC_ERR,
		      "send to the dead child: %s (want %s)",
		      ibv_wc_status_str(wc.status),
		      ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
	}
	CHECK(barrier(6, (unsigned)n_children - 1), "child %d: barrier 6", me);
out:
	if (failed)
		__atomic_add_fetch(&sh->arrived[15], 1, __ATOMIC_SEQ_CST);
	printf("child %d: %d passed, %d failed\n", me, passed, failed);
	fflush(stdout);
	exit(failed ? 1 : 0);
}

int main(int argc, char **argv)
{
	pid_t pid[MAX_N];

	n_children = argc > 1 ? atoi(argv[1]) : 2;
	if (n_children < 2 || n_children > MAX_N) {
		fprintf(stderr, "usage: verbs_share [N], 2 <= N <= %d\n", MAX_N);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	for (int i = 0; i < n_children; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			me = i;
			return child_main();
		}
		CHECK(pid[i] > 0, "fork");
	}
	/* all at barrier 4 (or one failed): kill the last */
	double end = now_s() + GUARD_S * 2;
	while (__atomic_load_n(&sh->arrived[4], __ATOMIC_SEQ_CST) <
		       (unsigned)n_children &&
	       !sh->arrived[15] && now_s() < end)
		usleep(1000);
	kill(pid[n_children - 1], SIGKILL);
	int st;
	waitpid(pid[n_children - 1], &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "the last child died by SIGKILL (status 0x%x)", st);
	__atomic_store_n(&sh->victim_dead, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < n_children - 1; i++) {
		waitpid(pid[i], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child %d: status 0x%x", i, st);
	}
	printf("verbs_share: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
