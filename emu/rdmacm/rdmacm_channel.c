/* SPDX-License-Identifier: MIT */
/* librdmacm.so.1: event channels (a pollable socket and a queue), events, acknowledgements. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdmacm_local.h"

int rc_err(int negerrno)
{
	errno = negerrno < 0 ? -negerrno : negerrno;
	return -1;
}

struct rc_channel *rc_channel_new(void)
{
	struct rc_channel *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	/* A stream socket pair, as the device's channels: a peeking recv
	 * waits as the kernel's read(2) does and wakes every waiter. */
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		free(c);
		return NULL;
	}
	c->wait_fd = fcntl(sv[0], F_DUPFD_CLOEXEC, 0);
	if (c->wait_fd < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		free(c);
		errno = e;
		return NULL;
	}
	c->ch.fd = sv[0];
	c->bell = sv[1];
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->never, NULL);
	return c;
}

void rc_channel_free(struct rc_channel *c)
{
	while (c->head) {
		struct rc_event *e = c->head;
		c->head = e->next;
		free(e);
	}
	close(c->ch.fd);
	close(c->bell);
	close(c->wait_fd);
	pthread_cond_destroy(&c->never);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void rc_channel_attach(struct rc_channel *c)
{
	pthread_mutex_lock(&c->lock);
	c->ids++;
	pthread_mutex_unlock(&c->lock);
}

void rc_channel_detach(struct rc_channel *c)
{
	pthread_mutex_lock(&c->lock);
	c->ids--;
	pthread_mutex_unlock(&c->lock);
}

/* The doorbell: rung when the queue stops being empty, cleared when it
 * becomes empty again, so the socket holds one byte exactly while events
 * wait and neither send nor recv can block (under c->lock). */
static void ring(struct rc_channel *c)
{
	if (send(c->bell, "e", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		abort(); /* an empty socket always takes a byte */
}

static void unring(struct rc_channel *c)
{
	char b;

	if (recv(c->wait_fd, &b, 1, MSG_DONTWAIT) != 1)
		abort(); /* the byte is there */
}

struct rc_event *rc_event_new(struct rc_id *id, enum rdma_cm_event_type type,
			      int status)
{
	struct rc_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = id;
	return e;
}

void rc_post(struct rc_id *id, struct rc_event *e)
{
	struct rc_channel *c;

	/* the id's channel, held: rdma_migrate_id changes it under the
	 * old channel's lock */
	for (;;) {
		c = __atomic_load_n(&id->chan, __ATOMIC_ACQUIRE);
		pthread_mutex_lock(&c->lock);
		if (c == __atomic_load_n(&id->chan, __ATOMIC_ACQUIRE))
			break;
		pthread_mutex_unlock(&c->lock);
	}
	e->owner = id;
	if (e->ev.param.conn.private_data_len)
		e->ev.param.conn.private_data = e->priv;
	if (!c->head) {
		c->head = e;
		ring(c);
	} else {
		c->tail->next = e;
	}
	c->tail = e;
	pthread_mutex_unlock(&c->lock);
}

void rc_wait_acked(struct rc_id *id)
{
	struct rc_channel *c = id->chan;

	pthread_mutex_lock(&c->lock);
	while (id->acked != id->reported)
		pthread_cond_wait(&id->acked_cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

/* rc_purge's work, c->lock held. */
static struct rc_event *purge_locked(struct rc_channel *c, struct rc_id *id,
				     bool named_too)
{
	struct rc_event *gone = NULL, **end = &gone, **p, *last = NULL;

	for (p = &c->head; *p;) {
		struct rc_event *e = *p;
		if (e->owner == id || (named_too && e->ev.id == &id->id)) {
			*p = e->next;
			e->next = NULL;
			*end = e;	/* in the order they came */
			end = &e->next;
		} else {
			last = e;
			p = &e->next;
		}
	}
	c->tail = last;
	if (gone && !c->head)
		unring(c);
	return gone;
}

struct rc_event *rc_purge(struct rc_id *id, bool named_too)
{
	struct rc_channel *c = id->chan;

	pthread_mutex_lock(&c->lock);
	struct rc_event *gone = purge_locked(c, id, named_too);
	pthread_mutex_unlock(&c->lock);
	return gone;
}

/* The first event, taken off the queue; NULL when there is none. */
static struct rc_event *take(struct rc_channel *c)
{
	struct rc_event *e;

	pthread_mutex_lock(&c->lock);
	e = c->head;
	if (e) {
		/* reported now: rdma_destroy_id waits for what the
		 * application was given, as librdmacm */
		e->owner->reported++;
		c->head = e->next;
		if (!c->head) {
			c->tail = NULL;
			unring(c);
		}
		e->next = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rc_channel *c = rc_channel_new();

	return c ? &c->ch : NULL;
}

/* librdmacm closes the fd whatever is on it; here a channel that ids
 * still use is kept and errno set to EBUSY (freeing it would leave the
 * ids posting to freed memory). */
void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rc_channel *c = (struct rc_channel *)(void *)channel;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->ids) {
		pthread_mutex_unlock(&c->lock);
		errno = EBUSY;
		return;
	}
	if (c->waiters) {
		/* a thread waits in rdma_get_cm_event: it never returns, so
		 * the channel stays (its fd closed) for it to block on */
		c->dead = true;
		close(c->ch.fd);
		close(c->bell); /* their recv sees the end, then parks */
		pthread_mutex_unlock(&c->lock);
		return;
	}
	pthread_mutex_unlock(&c->lock);
	rc_channel_free(c);
}

/* Blocks for good in a channel destroyed while this thread waited on
 * it; called and never returning with c->lock held. */
static void park(struct rc_channel *c)
{
	for (;;)
		pthread_cond_wait(&c->never, &c->lock);
}

/*
 * Waits until the channel's fd is readable, as librdmacm's read(2) of the
 * kernel's fd: 0, or a negative errno: -EAGAIN for a non-blocking fd,
 * -EINTR after a signal whose handler lacks SA_RESTART (the kernel
 * restarts the peeking recv after one that has it; poll(2) it never
 * restarts). It waits on wait_fd, a dup that shares the application's
 * O_NONBLOCK and stays open while the channel is dead. Never returns once
 * the channel is destroyed under it.
 */
static int wait_readable(struct rc_channel *c)
{
	char b;

	pthread_mutex_lock(&c->lock);
	if (c->dead)
		park(c);
	pthread_mutex_unlock(&c->lock);
	int rc = recv(c->wait_fd, &b, 1, MSG_PEEK) < 0 ? -errno : 0;
	pthread_mutex_lock(&c->lock);
	if (c->dead)
		park(c);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* The next event, or a negative errno; counted as a waiter throughout,
 * so rdma_destroy_event_channel never frees the channel under it. */
static int next_event(struct rc_channel *c, struct rdma_cm_event **event)
{
	for (;;) {
		struct rc_event *e = take(c);
		if (e && !rc_cm_fixup(e)) {
			rc_drop(e);
			continue;
		}
		if (e) {
			*event = &e->ev;
			return 0;
		}
		int rc = wait_readable(c);
		if (rc)
			return rc;
	}
}

int rdma_get_cm_event(struct rdma_event_channel *channel,
		      struct rdma_cm_event **event)
{
	struct rc_channel *c = (struct rc_channel *)(void *)channel;

	if (!c || !event)
		return rc_err(-EINVAL);
	pthread_mutex_lock(&c->lock);
	if (c->dead)
		park(c);
	c->waiters++;
	pthread_mutex_unlock(&c->lock);
	int rc = next_event(c, event);
	pthread_mutex_lock(&c->lock);
	c->waiters--;
	pthread_mutex_unlock(&c->lock);
	return rc ? rc_err(rc) : 0;
}

void rc_drop(struct rc_event *e)
{
	rdma_ack_cm_event(&e->ev);
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rc_event *e = (struct rc_event *)(void *)event;

	if (!e)
		return rc_err(-EINVAL);
	struct rc_id *id = e->owner;
	struct rc_channel *c = id->chan;
	pthread_mutex_lock(&c->lock);
	id->acked++;
	pthread_cond_broadcast(&id->acked_cond);
	pthread_mutex_unlock(&c->lock);
	free(e);
	return 0;
}

/*
 * Moves id to channel (NULL: a private one, synchronous), as librdmacm:
 * waits till the events reported on its old channel are acknowledged, so
 * no event of the id is left behind there. A synchronous id to NULL is
 * -1/EINVAL, the id unchanged.
 */
int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct rc_id *r = rc_of(id);
	struct rc_channel *to = (struct rc_channel *)(void *)channel;
	bool sync = false;

	/* a synchronous id to no channel would only change its private
	 * channel for another: refused, as librdmacm does */
	if (!r || (r->sync && !to))
		return rc_err(-EINVAL);
	if (!to) {
		to = rc_channel_new();
		if (!to)
			return -1;
		sync = true;
	}
	/* a synchronous id's last event, kept for it, is acknowledged
	 * first, as librdmacm does: else the wait below never ends */
	if (r->sync)
		rc_drop_event(r);
	rc_wait_acked(r);
	/* The events not yet taken go with the id, in order, ahead of any
	 * the CM posts meanwhile (the kernel's ucma_migrate_id): both
	 * channels held, in address order. The counts restart. */
	struct rc_channel *from = r->chan;
	bool was_sync = r->sync;
	rc_channel_attach(to);
	struct rc_channel *first = from < to ? from : to;
	struct rc_channel *second = from < to ? to : from;
	pthread_mutex_lock(&first->lock);
	if (second != first)
		pthread_mutex_lock(&second->lock);
	struct rc_event *moving = purge_locked(from, r, false);
	if (moving) {
		struct rc_event *end = moving;
		while (end->next)
			end = end->next;
		if (!to->head) {
			to->head = moving;
			ring(to);
		} else {
			to->tail->next = moving;
		}
		to->tail = end;
	}
	__atomic_store_n(&r->chan, to, __ATOMIC_RELEASE);
	r->sync = sync;
	r->id.channel = &to->ch;
	r->reported = r->acked = 0;
	if (second != first)
		pthread_mutex_unlock(&second->lock);
	pthread_mutex_unlock(&first->lock);
	rc_channel_detach(from);
	if (was_sync)
		rc_channel_free(from);
	return 0;
}

/* librdmacm's names (rdma_event_str(3)). */
const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned)event < sizeof(names) / sizeof(names[0]) && names[event])
		return names[event];
	return "UNKNOWN EVENT";
}
