/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: completion channels, completion and asynchronous events, and destroys that wait for their acknowledgement. */
#include <errno.h>
#include <stdlib.h>

#include "verbs_local.h"

#define WRAP(type, obj) ((struct type *)(void *)(obj))

/* Taking an async event and counting it on its object is one step with
 * respect to that object's destroy (the device has one event queue). */
static pthread_mutex_t async_lock = PTHREAD_MUTEX_INITIALIZER;

void rv_events_fork_child(void)
{
	pthread_mutex_init(&async_lock, NULL);
}

/* Waits for fd to be readable, as rdma-core's read(2) of the kernel's fd
 * does: restarted after a signal whose handler has SA_RESTART (Go installs
 * every handler so); 0, or -1 with errno EINTR after a signal without it,
 * or EAGAIN when the application made the fd non-blocking. */
static int wait_readable(int fd)
{
	int rc = rocemu_fd_wait(fd);

	if (rc)
		errno = -rc;
	return rc ? -1 : 0;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct rv_channel *ch;
	struct rocemu_dev *d;

	if (rv_stale(context))
		return NULL;
	ch = calloc(1, sizeof(*ch));
	d = rv_dev();
	if (!ch || !d || !(ch->c = rocemu_channel_new(d))) {
		int e = !ch ? ENOMEM : errno; /* rv_dev's, or the channel's */
		free(ch);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	ch->ch = (struct ibv_comp_channel){ .context = context,
					    .fd = rocemu_channel_fd(ch->c) };
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct rv_channel *ch = WRAP(rv_channel, channel);
	int rc = rv_stale(channel->context) ? -EIO : rocemu_channel_free(ch->c);

	if (rc)
		return rv_err(rc);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		     void **cq_context)
{
	struct rv_channel *ch = WRAP(rv_channel, channel);

	if (rv_stale(channel->context))
		return -1;
	for (;;) {
		struct rocemu_cq *c;

		pthread_mutex_lock(&ch->lock);
		if (rocemu_channel_try_event(ch->c, &c) == 0) {
			struct rv_cq *rcq = rocemu_cq_user(c);
			rcq->comp_reported++;
			pthread_mutex_unlock(&ch->lock);
			*cq = &rcq->cq;
			*cq_context = rcq->cq.cq_context;
			return 0;
		}
		pthread_mutex_unlock(&ch->lock);
		if (wait_readable(channel->fd))
			return -1;
	}
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (rv_stale(cq->context))
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* Names the verbs object behind the device's in ev, and counts the event
 * on it. Called with async_lock held. */
static void name_verbs_object(struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct rv_cq *cq = rocemu_cq_user(WRAP(rocemu_cq, ev->element.cq));
		cq->async_reported++;
		ev->element.cq = &cq->cq;
		break;
	}
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_SRQ_ERR: {
		struct rv_srq *srq =
			rocemu_srq_user(WRAP(rocemu_srq, ev->element.srq));
		srq->async_reported++;
		ev->element.srq = &srq->srq;
		break;
	}
	default: {
		struct rv_qp *qp = rocemu_qp_user(WRAP(rocemu_qp, ev->element.qp));
		qp->async_reported++;
		ev->element.qp = &qp->qp;
	}
	}
}

int ibv_get_async_event(struct ibv_context *context,
			struct ibv_async_event *event)
{
	struct rocemu_dev *d = rv_stale(context) ? NULL : rv_dev();

	if (!d)
		return -1;
	for (;;) {
		pthread_mutex_lock(&async_lock);
		if (rocemu_dev_get_async_event(d, event) == 0) {
			name_verbs_object(event);
			pthread_mutex_unlock(&async_lock);
			return 0;
		}
		pthread_mutex_unlock(&async_lock);
		if (wait_readable(context->async_fd))
			return -1;
	}
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct ibv_context *ctx;
	pthread_mutex_t *m;
	pthread_cond_t *c;
	uint32_t *done;

	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		ctx = event->element.cq->context;
		m = &event->element.cq->mutex;
		c = &event->element.cq->cond;
		done = &event->element.cq->async_events_completed;
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_SRQ_ERR:
		ctx = event->element.srq->context;
		m = &event->element.srq->mutex;
		c = &event->element.srq->cond;
		done = &event->element.srq->events_completed;
		break;
	default:
		ctx = event->element.qp->context;
		m = &event->element.qp->mutex;
		c = &event->element.qp->cond;
		done = &event->element.qp->events_completed;
	}
	if (rv_stale(ctx))
		return; /* the parent's event: its parent acknowledges it */
	pthread_mutex_lock(m);
	++*done;
	pthread_cond_signal(c);
	pthread_mutex_unlock(m);
}

/* Waits, under the object's mutex, until *done reaches want. */
static void wait_acked(pthread_mutex_t *m, pthread_cond_t *c,
		       const uint32_t *done, unsigned want)
{
	pthread_mutex_lock(m);
	while (*done < want)
		pthread_cond_wait(c, m);
	pthread_mutex_unlock(m);
}

int rv_cq_destroy(struct rv_cq *cq)
{
	struct rv_channel *ch = cq->cq.channel
					? WRAP(rv_channel, cq->cq.channel) : NULL;

	if (ch)
		pthread_mutex_lock(&ch->lock);
	pthread_mutex_lock(&async_lock);
	int rc = rocemu_cq_free(cq->c);
	pthread_mutex_unlock(&async_lock);
	if (ch)
		pthread_mutex_unlock(&ch->lock);
	if (rc)
		return rc;
	wait_acked(&cq->cq.mutex, &cq->cq.cond, &cq->cq.comp_events_completed,
		   cq->comp_reported);
	wait_acked(&cq->cq.mutex, &cq->cq.cond, &cq->cq.async_events_completed,
		   cq->async_reported);
	return 0;
}

int rv_qp_destroy(struct rv_qp *qp)
{
	pthread_mutex_lock(&async_lock);
	int rc = rocemu_qp_free(qp->q);
	pthread_mutex_unlock(&async_lock);
	if (rc)
		return rc;
	wait_acked(&qp->qp.mutex, &qp->qp.cond, &qp->qp.events_completed,
		   qp->async_reported);
	return 0;
}

int rv_srq_destroy(struct rv_srq *srq)
{
	pthread_mutex_lock(&async_lock);
	int rc = rocemu_srq_free(srq->s);
	pthread_mutex_unlock(&async_lock);
	if (rc)
		return rc;
	wait_acked(&srq->srq.mutex, &srq->srq.cond, &srq->srq.events_completed,
		   srq->async_reported);
	return 0;
}
