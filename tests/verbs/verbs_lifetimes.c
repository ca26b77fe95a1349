// SPDX-License-Identifier: MIT
/*
 * Object lifetimes through the verbs API, as a program written against
 * <infiniband/verbs.h> meets them: events of destroyed CQs, destroys that
 * wait for acknowledgements, completion events nobody reads, an address
 * handle destroyed right after a post, and the arguments the man pages
 * call invalid. Built with plain cc -libverbs and examples/pair.c; run on
 * rocemu's libibverbs.so.1. Prints one line per failed check and a
 * closing "verbs_lifetimes: N passed, M failed".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

/* A UD QP on cq (and srq if not NULL), ready to send and receive. */
static struct ibv_qp *ud_qp_srq(struct pair *p, struct ibv_cq *cq,
				struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(p->pd, &init);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = PAIR_QKEY };

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					     IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

static struct ibv_qp *ud_qp(struct pair *p, struct ibv_cq *cq)
{
	return ud_qp_srq(p, cq, NULL);
}

/* An address handle for the device's own GID. */
static struct ibv_ah *self_ah(struct pair *p)
{
	struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1 };

	attr.grh.dgid = p->gid;
	attr.grh.sgid_index = PAIR_GID_INDEX;
	attr.grh.hop_limit = 64;
	return ibv_create_ah(p->pd, &attr);
}

/* One UD datagram of len bytes from s's buffer at off, to qpn. */
static int ud_send(struct pair *p, struct ibv_qp *from, struct ibv_ah *ah,
		   uint32_t qpn, size_t off, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)p->a.buf + off, (uint32_t)len,
			       p->a.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = PAIR_QKEY;
	return ibv_post_send(from, &wr, &bad);
}

static int ud_recv(struct pair *p, struct ibv_qp *qp, size_t off, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)p->b.buf + off, (uint32_t)len,
			       p->b.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* Polls cq until n completions are in wc (five seconds at most). */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0;

	for (int i = 0; i < n; i++)
		if (pair_wait(cq, wc + got++))
			return got - 1;
	return got;
}

static int set_nonblocking(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/*
 * An address handle destroyed as soon as the send is posted: the datagram
 * still goes where the handle said (the address is copied at post time),
 * even when a new handle to elsewhere takes the old one's memory.
 */
static void check_ah_destroyed_after_post(struct pair *p, struct ibv_qp *qx,
					  struct ibv_cq *x)
{
	struct ibv_wc wc[2];
	struct ibv_ah *ah = self_ah(p);
	struct ibv_ah_attr elsewhere = { .is_global = 1, .port_num = 1 };

	memset(p->a.buf, 0x3c, 64);
	CHECK(ud_recv(p, qx, 0, 40 + 64) == 0, "post receive");
	CHECK(ah && ud_send(p, qx, ah, qx->qp_num, 0, 64) == 0, "post UD send");
	CHECK(ibv_destroy_ah(ah) == 0, "destroy AH right after the post");
	elsewhere.grh.dgid.raw[10] = elsewhere.grh.dgid.raw[11] = 0xff;
	elsewhere.grh.dgid.raw[12] = 127;
	elsewhere.grh.dgid.raw[15] = 99;
	struct ibv_ah *other = ibv_create_ah(p->pd, &elsewhere);
	int n = poll_n(x, wc, 2);
	CHECK(n == 2, "UD send and receive complete (%d of 2)", n);
	for (int i = 0; i < n; i++)
		CHECK(wc[i].status == IBV_WC_SUCCESS, "completion %d: %s", i,
		      ibv_wc_status_str(wc[i].status));
	CHECK(p->b.buf[40] == 0x3c && p->b.buf[40 + 63] == 0x3c,
	      "the datagram arrived whole");
	if (other)
		ibv_destroy_ah(other);
}

struct destroyer {
	struct ibv_cq *cq;
	atomic_int done, rc;
};

static void *destroy_cq_thread(void *arg)
{
	struct destroyer *d = arg;

	atomic_store(&d->rc, ibv_destroy_cq(d->cq));
	atomic_store(&d->done, 1);
	return NULL;
}

/* ibv_destroy_cq waits until the events it handed out are acknowledged
 * (ibv_get_cq_event(3)). */
static void check_destroy_waits_for_ack(struct pair *p)
{
	struct ibv_cq *y = ibv_create_cq(p->ctx, 16, NULL, p->channel, 0);
	struct ibv_qp *qy = y ? ud_qp(p, y) : NULL;
	struct ibv_ah *ah = self_ah(p);
	struct ibv_cq *got = NULL;
	struct ibv_wc wc;
	void *ctx;
	pthread_t t;
	struct destroyer d = { .cq = y };

	CHECK(qy && ah, "CQ, QP and AH for the wait check");
	if (!qy || !ah)
		return;
	CHECK(ibv_req_notify_cq(y, 0) == 0, "arm");
	CHECK(ud_send(p, qy, ah, p->b.qp->qp_num, 0, 8) == 0, "send");
	CHECK(pair_wait(y, &wc) == 0, "send completion");
	CHECK(ibv_get_cq_event(p->channel, &got, &ctx) == 0 && got == y,
	      "the event names the CQ");
	CHECK(ibv_destroy_qp(qy) == 0, "destroy its QP");
	pthread_create(&t, NULL, destroy_cq_thread, &d);
	usleep(300000);
	CHECK(!atomic_load(&d.done),
	      "ibv_destroy_cq returned with an event not acknowledged");
	ibv_ack_cq_events(y, 1);
	pthread_join(t, NULL);
	CHECK(atomic_load(&d.done) && atomic_load(&d.rc) == 0,
	      "destroy finishes once acknowledged (rc %d)", atomic_load(&d.rc));
	ibv_destroy_ah(ah);
	/* b's receive of that datagram: none was posted, so none to drain */
}

/*
 * Two CQs on b's channel with an event each; the first is destroyed
 * before its event is read: the channel gives the other, then nothing.
 */
static void check_destroyed_cq_event_discarded(struct pair *p)
{
	struct ibv_cq *x = ibv_create_cq(p->ctx, 16, NULL, p->channel, 0);
	struct ibv_qp *qx = x ? ud_qp(p, x) : NULL;
	struct ibv_cq *got = NULL;
	struct ibv_wc wc;
	void *ctx;

	CHECK(qx != NULL, "a second CQ and UD QP on the channel");
	if (!qx)
		return;
	CHECK(ibv_req_notify_cq(x, 0) == 0, "arm x");
	check_ah_destroyed_after_post(p, qx, x);
	/* x has an event queued; now b's CQ gets one after it */
	struct ibv_ah *ah = self_ah(p);
	CHECK(ibv_req_notify_cq(p->b.cq, 0) == 0, "arm b");
	CHECK(ud_recv(p, p->b.qp, 256, 40 + 8) == 0, "b receive");
	CHECK(ud_send(p, p->a.qp, ah, p->b.qp->qp_num, 0, 8) == 0, "a sends");
	CHECK(pair_wait(p->a.cq, &wc) == 0, "a's send completes");
	CHECK(pair_wait(p->b.cq, &wc) == 0, "b's receive completes");
	ibv_destroy_ah(ah);
	struct pollfd pfd = { p->channel->fd, POLLIN, 0 };
	CHECK(poll(&pfd, 1, 5000) == 1, "the channel is readable");
	CHECK(ibv_destroy_qp(qx) == 0 && ibv_destroy_cq(x) == 0,
	      "destroy x with its event unread");
	CHECK(ibv_get_cq_event(p->channel, &got, &ctx) == 0, "get an event");
	CHECK(got == p->b.cq, "the event is b's CQ, not the destroyed one");
	if (got == p->b.cq)
		ibv_ack_cq_events(got, 1);
	set_nonblocking(p->channel->fd, 1);
	errno = 0;
	CHECK(ibv_get_cq_event(p->channel, &got, &ctx) == -1 &&
		      errno == EAGAIN,
	      "then nothing (EAGAIN on a non-blocking channel)");
	set_nonblocking(p->channel->fd, 0);
}

/* 20 000 events nobody reads: they coalesce, the device never waits on
 * the application, and one event is there to read. */
static void check_unread_events_coalesce(struct pair *p)
{
	struct ibv_ah *ah = self_ah(p);
	struct ibv_wc wc;
	struct ibv_cq *got;
	void *ctx;
	int ok = 1;

	for (int i = 0; i < 20000 && ok; i++) {
		ok = ibv_req_notify_cq(p->b.cq, 0) == 0 &&
		     ud_recv(p, p->b.qp, 0, 40 + 8) == 0 &&
		     ud_send(p, p->a.qp, ah, p->b.qp->qp_num, 0, 8) == 0 &&
		     pair_wait(p->a.cq, &wc) == 0 &&
		     pair_wait(p->b.cq, &wc) == 0 && wc.status == 0;
	}
	CHECK(ok, "20000 armed completions with no event read");
	set_nonblocking(p->channel->fd, 1);
	CHECK(ibv_get_cq_event(p->channel, &got, &ctx) == 0 && got == p->b.cq,
	      "one event to read");
	ibv_ack_cq_events(p->b.cq, 1);
	errno = 0;
	CHECK(ibv_get_cq_event(p->channel, &got, &ctx) == -1 &&
		      errno == EAGAIN,
	      "and only one");
	set_nonblocking(p->channel->fd, 0);
	ibv_destroy_ah(ah);
}

/* A child forked while the device runs, and exits: the capture the
 * parent is writing (ROCEMU_PCAP) must not get the buffered part twice.
 * The script reads the capture back with rocemu dump. */
static void check_fork_child_exits(void)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0)
		exit(0); /* flushes the child's copy of every stdio buffer */
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st),
	      "fork and a child that exits");
}

struct async_waiter {
	struct ibv_context *ctx;
	struct ibv_async_event ev;
	atomic_int done, rc;
};

static void *get_async_thread(void *arg)
{
	struct async_waiter *w = arg;

	atomic_store(&w->rc, ibv_get_async_event(w->ctx, &w->ev));
	atomic_store(&w->done, 1);
	return NULL;
}

/* ibv_get_async_event on a context left blocking waits for an event, as
 * a read(2) of the kernel's async fd would, and then names the object. */
static void check_async_event_waits(struct pair *p)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(p->pd, &sa);
	struct ibv_qp *qs = srq ? ud_qp_srq(p, p->b.cq, srq) : NULL;
	struct ibv_ah *ah = self_ah(p);
	struct ibv_srq_attr limit = { .srq_limit = 2 };
	struct async_waiter w = { .ctx = p->ctx };
	struct ibv_recv_wr *bad;
	struct ibv_wc wc;
	pthread_t t;

	CHECK(qs && ah, "an SRQ, a UD QP on it and an AH");
	if (!qs || !ah)
		return;
	for (int i = 0; i < 2; i++) {
		struct ibv_sge sge = { (uintptr_t)p->b.buf + 512 * i, 512,
				       p->b.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 20 + i, .sg_list = &sge,
					  .num_sge = 1 };
		CHECK(ibv_post_srq_recv(srq, &wr, &bad) == 0, "SRQ receive");
	}
	CHECK(ibv_modify_srq(srq, &limit, IBV_SRQ_LIMIT) == 0, "arm the limit");
	pthread_create(&t, NULL, get_async_thread, &w);
	usleep(200000);
	CHECK(!atomic_load(&w.done),
	      "ibv_get_async_event returned with no event (rc %d)",
	      atomic_load(&w.rc));
	CHECK(ud_send(p, p->a.qp, ah, qs->qp_num, 0, 8) == 0, "send");
	CHECK(pair_wait(p->a.cq, &wc) == 0 && pair_wait(p->b.cq, &wc) == 0,
	      "the datagram arrives");
	pthread_join(t, NULL);
	CHECK(atomic_load(&w.rc) == 0 &&
		      w.ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		      w.ev.element.srq == srq,
	      "the SRQ's limit event");
	if (atomic_load(&w.rc) == 0)
		ibv_ack_async_event(&w.ev);
	CHECK(ibv_destroy_qp(qs) == 0 && ibv_destroy_srq(srq) == 0,
	      "destroy them");
	ibv_destroy_ah(ah);
}

/* What the man pages call invalid is refused with their errno. */
static void check_arguments(struct pair *p)
{
	struct ibv_qp_init_attr init = {
		.send_cq = NULL, .recv_cq = p->a.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	long pg = sysconf(_SC_PAGESIZE);

	errno = 0;
	CHECK(!ibv_create_qp(p->pd, &init) && errno == EINVAL,
	      "a QP without a send CQ: EINVAL (errno %d)", errno);
	init.send_cq = p->a.cq;
	init.recv_cq = NULL;
	errno = 0;
	CHECK(!ibv_create_qp(p->pd, &init) && errno == EINVAL,
	      "a QP without a receive CQ: EINVAL (errno %d)", errno);
	errno = 0;
	CHECK(!ibv_create_cq(p->ctx, 4, NULL, NULL, 1) && errno == EINVAL,
	      "comp_vector past num_comp_vectors: EINVAL");
	errno = 0;
	CHECK(!ibv_create_cq(p->ctx, 4, NULL, NULL, -1) && errno == EINVAL,
	      "a negative comp_vector: EINVAL");
	CHECK(ibv_req_notify_cq(p->a.cq, 0) == 0,
	      "ibv_req_notify_cq without a channel answers 0");
	char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(m + pg, (size_t)pg);
	mprotect(m, (size_t)pg, PROT_READ);
	errno = 0;
	CHECK(!ibv_reg_mr(p->pd, m + pg, 64, IBV_ACCESS_LOCAL_WRITE) &&
		      errno == EFAULT,
	      "registering unmapped memory: EFAULT (errno %d)", errno);
	errno = 0;
	CHECK(!ibv_reg_mr(p->pd, m, 64, IBV_ACCESS_LOCAL_WRITE |
					     IBV_ACCESS_REMOTE_WRITE) &&
		      errno == EFAULT,
	      "read-only memory for writing: EFAULT (errno %d)", errno);
	struct ibv_mr *mr = ibv_reg_mr(p->pd, m, 64, IBV_ACCESS_REMOTE_READ);
	CHECK(mr != NULL, "read-only memory for remote reads: fine");
	if (mr)
		ibv_dereg_mr(mr);
	munmap(m, (size_t)pg);
}

int main(void)
{
	struct pair p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pair_open(&p, 4096, 1) || pair_add_qps(&p, IBV_QPT_UD, NULL)) {
		printf("verbs_lifetimes: 0 passed, 1 failed\n");
		return 1;
	}
	check_arguments(&p);
	check_destroyed_cq_event_discarded(&p);
	check_fork_child_exits();
	check_destroy_waits_for_ack(&p);
	check_unread_events_coalesce(&p);
	check_async_event_waits(&p);
	pair_close(&p);
	printf("verbs_lifetimes: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
