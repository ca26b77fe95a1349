// SPDX-License-Identifier: MIT
/*
 * The calls that block for events, under signals, as rdma-core's read(2)
 * of the kernel's fd: ibv_get_cq_event, ibv_get_async_event and
 * rdma_get_cm_event survive signals whose handler has SA_RESTART (Go
 * installs all of its handlers so) and return the event that comes after
 * them; a signal without SA_RESTART makes them fail with EINTR; a
 * non-blocking fd gives EAGAIN. Built with plain cc -libverbs -lrdmacm and
 * examples/pair.c; run on rocemu's drop-ins. Prints one line per failed
 * check and a closing "verbs_signals: N passed, M failed".
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../examples/pair.h"
#include "verbs_check.h"

/* SA_RESTART signals sent to a thread blocked for an event. */
#define RESTARTED 300
/* At most this many signals without SA_RESTART before the call must have
 * failed with EINTR (the first that finds it blocked ends it). */
#define INTR_MAX 20000

static atomic_int handled;
/* Under ThreadSanitizer (VERBS_SIGNALS_NO_SIGNALS=1): its runtime holds a
 * signal for a thread blocked in recv(2) until the call returns, so no
 * handler runs to wait for; the waits and events are checked alone. */
static int no_signals;

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

enum call { CQ_EVENT, ASYNC_EVENT, CM_EVENT };

static const char *const call_name[] = { "ibv_get_cq_event",
					 "ibv_get_async_event",
					 "rdma_get_cm_event" };

struct waiter {
	enum call call;
	struct pair *p;
	struct rdma_event_channel *cm;
	atomic_int done, rc, err;
	struct ibv_cq *cq;
	struct ibv_async_event ev;
	struct rdma_cm_event *cm_ev;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	void *ctx;
	int rc;

	switch (w->call) {
	case CQ_EVENT:
		rc = ibv_get_cq_event(w->p->channel, &w->cq, &ctx);
		break;
	case ASYNC_EVENT:
		rc = ibv_get_async_event(w->p->ctx, &w->ev);
		break;
	default:
		rc = rdma_get_cm_event(w->cm, &w->cm_ev);
	}
	atomic_store(&w->err, rc ? errno : 0);
	atomic_store(&w->rc, rc);
	atomic_store(&w->done, 1);
	return NULL;
}

/* Sends sig to t and waits until its handler has run; 0, or -1 when the
 * signal could not be sent. */
/*
 * Sends sig to t and waits until a handler ran, or until t's call is
 * done: a thread that ends its call (after the previous signal) can exit
 * before this signal is delivered, and then no handler ever runs for it.
 */
static int signal_and_wait(pthread_t t, int sig, atomic_int *done)
{
	int before = atomic_load(&handled);

	if (pthread_kill(t, sig))
		return -1;
	while (atomic_load(&handled) == before && !atomic_load(done))
		sched_yield();
	return 0;
}

static void start(struct waiter *w, pthread_t *t)
{
	atomic_store(&w->done, 0);
	atomic_store(&w->rc, 0);
	atomic_store(&w->err, 0);
	if (pthread_create(t, NULL, wait_thread, w)) {
		perror("pthread_create");
		exit(1);
	}
	/* time for it to block; the checks hold whenever it does */
	usleep(100000);
}

/*
 * A thread blocked in w's call gets RESTARTED signals whose handler has
 * SA_RESTART and stays blocked; then the event comes (trigger) and the
 * call returns it.
 */
static void check_restarted(struct waiter *w, void (*trigger)(struct waiter *))
{
	const char *name = call_name[w->call];
	pthread_t t;
	int sent = 0;

	start(w, &t);
	while (!no_signals && sent < RESTARTED && !atomic_load(&w->done) &&
	       signal_and_wait(t, SIGUSR1, &w->done) == 0)
		sent++;
	CHECK((no_signals || sent == RESTARTED) && !atomic_load(&w->done),
	      "%s returned %d (errno %s) after %d SA_RESTART signals, with no event",
	      name, atomic_load(&w->rc), strerror(atomic_load(&w->err)), sent);
	trigger(w);
	pthread_join(t, NULL);
	if (atomic_load(&w->rc) != 0) {
		/* it failed under a signal: take the event here */
		wait_thread(w);
	}
	CHECK(atomic_load(&w->rc) == 0, "%s after the signals: %s", name,
	      strerror(atomic_load(&w->err)));
}

/* A signal without SA_RESTART ends a blocked call with EINTR. */
static void check_interrupted(struct waiter *w)
{
	const char *name = call_name[w->call];
	pthread_t t;
	int sent = 0;

	if (no_signals)
		return;
	start(w, &t);
	while (sent < INTR_MAX && !atomic_load(&w->done) &&
	       signal_and_wait(t, SIGUSR2, &w->done) == 0)
		sent++;
	if (!atomic_load(&w->done)) {
		CHECK(0, "%s still blocked after %d signals without SA_RESTART",
		      name, sent);
		/* the thread is left blocked; the process ends with it */
		pthread_detach(t);
		return;
	}
	pthread_join(t, NULL);
	CHECK(atomic_load(&w->rc) == -1 && atomic_load(&w->err) == EINTR,
	      "%s under a signal without SA_RESTART: rc %d, errno %s (want EINTR)",
	      name, atomic_load(&w->rc), strerror(atomic_load(&w->err)));
}

static int set_nonblocking(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* On a non-blocking fd with no event the call fails with EAGAIN. */
static void check_nonblocking(struct waiter *w, int fd)
{
	CHECK(set_nonblocking(fd, 1) == 0, "O_NONBLOCK on %d", fd);
	wait_thread(w);
	CHECK(atomic_load(&w->rc) == -1 && atomic_load(&w->err) == EAGAIN,
	      "%s on a non-blocking fd: rc %d, errno %s (want EAGAIN)",
	      call_name[w->call], atomic_load(&w->rc),
	      strerror(atomic_load(&w->err)));
	CHECK(set_nonblocking(fd, 0) == 0, "blocking again");
}

static void post_srq_recv(struct pair *p, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)p->b.buf, 64, p->b.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	CHECK(ibv_post_srq_recv(p->srq, &wr, &bad) == 0, "SRQ receive");
}

/* One SEND from a to b, both completions polled. */
static void send_one(struct pair *p)
{
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND };
	struct ibv_wc wc;

	CHECK(pair_post_send(&p->a, &wr, p->a.buf, 16) == 0, "post SEND");
	CHECK(pair_wait(p->a.cq, &wc) == 0 && wc.status == IBV_WC_SUCCESS,
	      "the SEND completes");
	CHECK(pair_wait(p->b.cq, &wc) == 0 && wc.status == IBV_WC_SUCCESS,
	      "its receive completes");
}

static void cq_trigger(struct waiter *w)
{
	post_srq_recv(w->p, 2);
	send_one(w->p);
}

static void check_cq_event(struct pair *p)
{
	struct waiter w = { .call = CQ_EVENT, .p = p };

	CHECK(ibv_req_notify_cq(p->b.cq, 0) == 0, "arm b's CQ");
	check_restarted(&w, cq_trigger);
	CHECK(w.cq == p->b.cq, "the event names b's CQ");
	if (atomic_load(&w.rc) == 0)
		ibv_ack_cq_events(p->b.cq, 1);
	check_interrupted(&w);
	check_nonblocking(&w, p->channel->fd);
}

/* The SRQ's limit (armed at 2 of 2 receives) fires on the next receive. */
static void async_trigger(struct waiter *w)
{
	send_one(w->p);
}

static void check_async_event(struct pair *p)
{
	struct waiter w = { .call = ASYNC_EVENT, .p = p };
	struct ibv_srq_attr limit = { .srq_limit = 2 };

	post_srq_recv(p, 3);
	post_srq_recv(p, 4);
	CHECK(ibv_modify_srq(p->srq, &limit, IBV_SRQ_LIMIT) == 0,
	      "arm the SRQ's limit");
	check_restarted(&w, async_trigger);
	CHECK(w.ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		      w.ev.element.srq == p->srq,
	      "the SRQ's limit event (type %d)", w.ev.event_type);
	if (atomic_load(&w.rc) == 0)
		ibv_ack_async_event(&w.ev);
	check_interrupted(&w);
	check_nonblocking(&w, p->ctx->async_fd);
}

static struct rdma_cm_id *cm_id;

static void cm_trigger(struct waiter *w)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(7472) };

	(void)w;
	inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
	CHECK(rdma_resolve_addr(cm_id, NULL, (struct sockaddr *)&dst, 2000) ==
		      0,
	      "rdma_resolve_addr: %s", strerror(errno));
}

static void check_cm_event(void)
{
	struct waiter w = { .call = CM_EVENT };

	w.cm = rdma_create_event_channel();
	CHECK(w.cm != NULL, "an event channel");
	if (!w.cm)
		return;
	CHECK(rdma_create_id(w.cm, &cm_id, NULL, RDMA_PS_TCP) == 0,
	      "an id on it");
	if (!cm_id)
		return;
	check_restarted(&w, cm_trigger);
	CHECK(atomic_load(&w.rc) == 0 && w.cm_ev &&
		      w.cm_ev->event == RDMA_CM_EVENT_ADDR_RESOLVED &&
		      w.cm_ev->id == cm_id,
	      "ADDR_RESOLVED: %s",
	      w.cm_ev ? rdma_event_str(w.cm_ev->event) : "none");
	if (atomic_load(&w.rc) == 0)
		rdma_ack_cm_event(w.cm_ev);
	check_interrupted(&w);
	if (!atomic_load(&w.done))
		return; /* a thread is still inside: keep the channel */
	check_nonblocking(&w, w.cm->fd);
	CHECK(rdma_destroy_id(cm_id) == 0, "destroy the id");
	rdma_destroy_event_channel(w.cm);
}

static void install(int sig, int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		perror("sigaction");
		exit(1);
	}
}

int main(void)
{
	struct pair p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	no_signals = getenv("VERBS_SIGNALS_NO_SIGNALS") != NULL;
	install(SIGUSR1, SA_RESTART);
	install(SIGUSR2, 0);
	if (pair_open(&p, 4096, 1))
		return 1;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(p.pd, &sa);
	if (!srq || pair_add_qps(&p, IBV_QPT_RC, srq)) {
		printf("FAIL: an SRQ and an RC pair on it\n");
		return 1;
	}
	check_cq_event(&p);
	check_async_event(&p);
	check_cm_event();
	pair_close(&p);
	printf("verbs_signals: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
