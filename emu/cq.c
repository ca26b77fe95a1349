/* SPDX-License-Identifier: MIT */
/* Completion queues as rings of ibv_wc, and completion channels as pipes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local.h"
#include "names.h"

int ring_init(struct ring *r, uint32_t n, uint32_t slot_size)
{
	uint32_t size = 1;

	while (size < n)
		size <<= 1;
	r->slots = calloc(size, slot_size);
	if (!r->slots)
		return -ENOMEM;
	r->mask = size - 1;
	r->slot_size = slot_size;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return 0;
}

void ring_fini(struct ring *r)
{
	free(r->slots);
	r->slots = NULL;
}

struct rocemu_channel *rocemu_channel_new(struct rocemu_dev *d)
{
	struct rocemu_channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	if (pipe2(ch->pipe, O_CLOEXEC)) {
		free(ch);
		return NULL;
	}
	ch->dev = d;
	return ch;
}

int rocemu_channel_free(struct rocemu_channel *ch)
{
	WORLD_GUARD(ch->dev->w);
	if (ch->users)
		return -EBUSY;
	close(ch->pipe[0]);
	close(ch->pipe[1]);
	free(ch);
	return 0;
}

int rocemu_channel_fd(const struct rocemu_channel *ch)
{
	return ch->pipe[0];
}

/* Each event is the CQ's address written to the pipe: a blocking read
 * waits for one, and poll() sees the pipe readable while any is queued. */
int rocemu_channel_get_event(struct rocemu_channel *ch, struct rocemu_cq **cq)
{
	ssize_t n = read(ch->pipe[0], cq, sizeof(*cq));

	if (n == sizeof(*cq))
		return 0;
	return n < 0 ? -errno : -EIO;
}

struct rocemu_cq *rocemu_cq_new(struct rocemu_dev *d, int cqe,
				struct rocemu_channel *ch)
{
	WORLD_GUARD(d->w);
	if (cqe < 1 || cqe > MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	struct rocemu_cq *cq = calloc(1, sizeof(*cq));
	if (!cq || ring_init(&cq->ring, (uint32_t)cqe, sizeof(struct ibv_wc))) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->dev = d;
	cq->ch = ch;
	if (ch)
		ch->users++;
	return cq;
}

int rocemu_cq_free(struct rocemu_cq *cq)
{
	WORLD_GUARD(cq->dev->w);
	if (cq->users)
		return -EBUSY;
	if (cq->ch)
		cq->ch->users--;
	ring_fini(&cq->ring);
	free(cq);
	return 0;
}

static void notify(struct rocemu_cq *cq)
{
	struct rocemu_cq *self = cq;

	cq->armed = cq->armed_solicited = false;
	cq->events++;
	ssize_t n = write(cq->ch->pipe[1], &self, sizeof(self));
	(void)n; /* a pipe holds thousands of events; more are coalesced */
}

void cq_push(struct rocemu_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	struct ibv_wc *slot = ring_prod_slot(&cq->ring);

	if (!slot) {
		/* IBTA 11.4.2.1: an overrun is an asynchronous error. */
		dev_count(cq->dev, ROCEMU_CNT_CQ_OVERRUNS);
		if (!cq->overrun)
			dev_async_event(cq->dev, IBV_EVENT_CQ_ERR, cq);
		cq->overrun = true;
		return;
	}
	*slot = *wc;
	world_trace(cq->dev->w, "%s CQE [%u] wr_id %llu %s %s len %u",
		    cq->dev->name, ring_tail(&cq->ring) & cq->ring.mask,
		    (unsigned long long)wc->wr_id,
		    wc_opcode_name(wc->opcode), wc_status_name(wc->status),
		    wc->byte_len);
	ring_produce(&cq->ring);
	/* Errors wake solicited-only waiters too (ibv_req_notify_cq(3)). */
	if (cq->ch && (cq->armed || (cq->armed_solicited &&
				     (solicited || wc->status))))
		notify(cq);
}

int rocemu_cq_poll(struct rocemu_cq *cq, int n, struct ibv_wc *wc)
{
	int got = 0;
	struct ibv_wc *slot;

	if (n < 0)
		return -EINVAL;
	while (got < n && (slot = ring_cons_slot(&cq->ring))) {
		wc[got++] = *slot;
		ring_consume(&cq->ring);
	}
	return got;
}

int rocemu_cq_req_notify(struct rocemu_cq *cq, bool solicited_only)
{
	WORLD_GUARD(cq->dev->w);
	if (!cq->ch)
		return -EINVAL;
	if (solicited_only)
		cq->armed_solicited = true;
	else
		cq->armed = true;
	return 0;
}

void rocemu_cq_ack_events(struct rocemu_cq *cq, unsigned n)
{
	cq->acked += n;
}
