/* SPDX-License-Identifier: MIT */
/* Completion queues as rings of ibv_wc, and completion channels as queues of CQs with an event. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "obj.h"
#include "core/names.h"

/* ---- channels ------------------------------------------------------ */

struct rocemu_channel *rocemu_channel_new(struct rocemu_dev *d)
{
	struct rocemu_channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	/* A socket pair rather than a pipe: the device side never blocks,
	 * and the application may make its end non-blocking as it likes.
	 * A stream one, so that rocemu_fd_wait wakes every waiter. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ch->sock)) {
		free(ch);
		return NULL;
	}
	ch->dev = d;
	return ch;
}

int rocemu_channel_free(struct rocemu_channel *ch)
{
	CORE_GUARD(ch->dev->core);
	if (ch->users)
		return -EBUSY;
	close(ch->sock[0]);
	close(ch->sock[1]);
	free(ch);
	return 0;
}

int rocemu_channel_fd(const struct rocemu_channel *ch)
{
	return ch->sock[0];
}

/* The fd turns readable when the first CQ is queued... */
static void channel_signal(struct rocemu_channel *ch)
{
	ssize_t n = send(ch->sock[1], "e", 1, MSG_DONTWAIT | MSG_NOSIGNAL);

	(void)n; /* one byte in an empty socket always fits */
}

/* ...and stops being readable when the last one is taken. */
static void channel_quiet(struct rocemu_channel *ch)
{
	char buf[16];

	while (recv(ch->sock[0], buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static void channel_queue(struct rocemu_channel *ch, struct rocemu_cq *cq)
{
	if (cq->event_queued)
		return; /* coalesced with the event not yet read */
	cq->event_queued = true;
	cq->event_next = NULL;
	if (ch->last)
		ch->last->event_next = cq;
	else
		ch->first = cq;
	ch->last = cq;
	if (ch->first == cq)
		channel_signal(ch);
}

/* Takes cq off its channel's queue, if it is there. */
static void channel_unqueue(struct rocemu_channel *ch, struct rocemu_cq *cq)
{
	struct rocemu_cq **p, *prev = NULL;

	if (!cq->event_queued)
		return;
	for (p = &ch->first; *p != cq; prev = *p, p = &(*p)->event_next)
		;
	*p = cq->event_next;
	if (ch->last == cq)
		ch->last = prev;
	cq->event_queued = false;
	if (!ch->first)
		channel_quiet(ch);
}

int rocemu_channel_try_event(struct rocemu_channel *ch, struct rocemu_cq **cq)
{
	CORE_GUARD(ch->dev->core);
	if (!ch->first)
		return -EAGAIN;
	*cq = ch->first;
	channel_unqueue(ch, ch->first);
	return 0;
}

int rocemu_channel_get_event(struct rocemu_channel *ch, struct rocemu_cq **cq)
{
	int rc;

	while ((rc = rocemu_channel_try_event(ch, cq)) == -EAGAIN) {
		int w = rocemu_fd_wait(ch->sock[0]);
		if (w)
			return w;
	}
	return rc;
}

/* ---- completion queues ---------------------------------------------- */

struct rocemu_cq *rocemu_cq_new(struct rocemu_dev *d, int cqe,
				struct rocemu_channel *ch)
{
	CORE_GUARD(d->core);
	if (cqe < 1 || cqe > MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	struct rocemu_cq *cq = calloc(1, sizeof(*cq));
	if (!cq || ring_init(&cq->ring, (uint32_t)cqe, sizeof(struct cqe))) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&cq->poll_lock, PTHREAD_PROCESS_PRIVATE);
	cq->dev = d;
	cq->ch = ch;
	if (ch)
		ch->users++;
	return cq;
}

int rocemu_cq_free(struct rocemu_cq *cq)
{
	CORE_GUARD(cq->dev->core);
	if (cq->users)
		return -EBUSY;
	if (cq->ch) {
		channel_unqueue(cq->ch, cq); /* an unread event goes with it */
		cq->ch->users--;
	}
	dev_forget_events(cq->dev, cq);
	pthread_spin_destroy(&cq->poll_lock);
	ring_fini(&cq->ring);
	free(cq);
	return 0;
}

/* The CQE about to be published at the CQ's tail, as a trace line and as
 * an event. */
static void trace_cqe(struct rocemu_cq *cq, const struct ibv_wc *wc)
{
	struct core *c = cq->dev->core;
	uint32_t slot = ring_tail(&cq->ring) & cq->ring.mask;

	core_trace(c, "%s CQE [%u] wr_id %llu %s %s len %u", cq->dev->name,
		   slot, (unsigned long long)wc->wr_id,
		   wc_opcode_name(wc->opcode), wc_status_name(wc->status),
		   wc->byte_len);
	if (!core_eventing(c))
		return;
	struct rocemu_event ev = { .kind = ROCEMU_EV_CQE, .qpn = wc->qp_num,
				   .slot = slot, .wr_id = wc->wr_id,
				   .len = wc->byte_len };
	snprintf(ev.op, sizeof(ev.op), "%s", wc_opcode_name(wc->opcode));
	snprintf(ev.status, sizeof(ev.status), "%s",
		 wc_status_name(wc->status));
	dev_event(cq->dev, &ev);
}

void cq_push(struct rocemu_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	struct cqe *slot = ring_prod_slot(&cq->ring);

	if (!slot) {
		/* IBTA 11.4.2.1: an overrun is an asynchronous error. */
		dev_count(cq->dev, ROCEMU_CNT_CQ_OVERRUNS);
		if (!cq->overrun)
			dev_async_event(cq->dev, IBV_EVENT_CQ_ERR, cq);
		cq->overrun = true;
		return;
	}
	/* Stamped now: the time the completion is made, which on the
	 * deterministic wire is exact and on UDP the real time of this
	 * pass of the engines. */
	*slot = (struct cqe){ .wc = *wc, .ts = cq->dev->core->now };
	trace_cqe(cq, wc);
	ring_produce(&cq->ring);
	/* Errors wake solicited-only waiters too (ibv_req_notify_cq(3)). */
	if (cq->ch && (cq->armed || (cq->armed_solicited &&
				     (solicited || wc->status)))) {
		cq->armed = cq->armed_solicited = false;
		channel_queue(cq->ch, cq);
	}
}

/*
 * The kept completions slide towards the tail, in order, and the head
 * moves past the gap: the producer's tail is left alone (the engines are
 * held off by the world lock the caller holds, the pollers by poll_lock).
 */
void cq_forget_qp(struct rocemu_cq *cq, uint32_t qpn)
{
	pthread_spin_lock(&cq->poll_lock);
	uint32_t h = ring_head(&cq->ring), t = ring_tail(&cq->ring), to = t;
	for (uint32_t i = t; i != h;) {
		struct cqe *e = ring_slot(&cq->ring, --i);
		if (e->wc.qp_num == qpn)
			continue;
		if (--to != i)
			*(struct cqe *)ring_slot(&cq->ring, to) = *e;
	}
	atomic_store_explicit(&cq->ring.head, to, memory_order_release);
	pthread_spin_unlock(&cq->poll_lock);
}

/* Up to n completions into wc and, where ts is not NULL, their times. */
static int cq_poll_ts(struct rocemu_cq *cq, int n, struct ibv_wc *wc,
		      uint64_t *ts)
{
	int got = 0;
	struct cqe *slot;

	if (n < 0)
		return -EINVAL;
	pthread_spin_lock(&cq->poll_lock);
	while (got < n && (slot = ring_cons_slot(&cq->ring))) {
		if (ts)
			ts[got] = slot->ts;
		wc[got++] = slot->wc;
		ring_consume(&cq->ring);
	}
	pthread_spin_unlock(&cq->poll_lock);
	return got;
}

int rocemu_cq_poll(struct rocemu_cq *cq, int n, struct ibv_wc *wc)
{
	return cq_poll_ts(cq, n, wc, NULL);
}

int rocemu_cq_req_notify(struct rocemu_cq *cq, bool solicited_only)
{
	CORE_GUARD(cq->dev->core);
	/* Without a channel there is nobody to tell: accepted and ignored,
	 * as rxe and mlx5 do. */
	if (!cq->ch)
		return 0;
	if (solicited_only)
		cq->armed_solicited = true;
	else
		cq->armed = true;
	return 0;
}

int rocemu_cq_take(struct rocemu_cq *cq, struct ibv_wc *wc)
{
	return cq_poll_ts(cq, 1, wc, NULL) == 1 ? 0 : -ENOENT;
}

int rocemu_cq_take_ts(struct rocemu_cq *cq, struct ibv_wc *wc, uint64_t *ts)
{
	return cq_poll_ts(cq, 1, wc, ts) == 1 ? 0 : -ENOENT;
}

/* Moves the completions of cq's ring, oldest first, to the start of to. */
static void cq_move(struct rocemu_cq *cq, struct ring *to)
{
	struct cqe *slot;

	while ((slot = ring_cons_slot(&cq->ring))) {
		*(struct cqe *)ring_prod_slot(to) = *slot;
		ring_produce(to);
		ring_consume(&cq->ring);
	}
}

int rocemu_cq_resize(struct rocemu_cq *cq, int cqe)
{
	struct ring to, old;

	if (cqe < 1 || cqe > MAX_CQE)
		return -EINVAL;
	/* Under the world lock no engine produces; under the poll lock no
	 * poller consumes (the order core.c writes down). */
	CORE_GUARD(cq->dev->core);
	if (ring_init(&to, (uint32_t)cqe, sizeof(struct cqe)))
		return -ENOMEM;
	pthread_spin_lock(&cq->poll_lock);
	if (ring_used(&cq->ring) > (uint32_t)cqe) {
		pthread_spin_unlock(&cq->poll_lock);
		ring_fini(&to);
		return -EINVAL; /* the completions held would not fit */
	}
	cq_move(cq, &to);
	old = cq->ring;
	cq->ring = to;
	pthread_spin_unlock(&cq->poll_lock);
	ring_fini(&old);
	return 0;
}
