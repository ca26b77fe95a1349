/* SPDX-License-Identifier: MIT */
/* The step loop: the one place that runs the engines, on the virtual clock or on real time. */
#include <poll.h>
#include <time.h>

#include "world.h"

/* Runs each requester with work once; returns the packets they sent. A
 * QP the wire holds back puts itself on the list again, for a later pass. */
static unsigned run_requesters(struct rocemu_world *w)
{
	struct sched_link *list = sched_take(&w->core.sched.ready), *l;
	unsigned n = 0;

	while ((l = sched_pop(&list)))
		n += req_run(l->owner);
	return n;
}

/*
 * Sends a burst of what each responder owes (coalesced ACKs, NAKs, READ
 * responses, atomic ACKs); returns the packets sent. A QP that owes more
 * stays on the list for the next step.
 */
static unsigned run_responders(struct rocemu_world *w)
{
	struct sched_link *list = sched_take(&w->core.sched.acks), *l;
	unsigned n = 0;

	while ((l = sched_pop(&list)))
		n += resp_run(l->owner);
	return n;
}

static unsigned fire_timers(struct rocemu_world *w)
{
	struct sched_timer *t;
	unsigned n = 0;

	while ((t = sched_due_timer(&w->core.sched, w->core.now))) {
		if (t->kind == TIMER_CM)
			cm_timer(t->owner);
		else
			comp_timer(t->owner, (enum timer_kind)t->kind);
		n++;
	}
	return n;
}

/* Hands one arrival to its device's receive dispatch. */
static void deliver(void *arg, struct wire_port *to, const struct wire_rx *rx)
{
	(void)arg;
	engine_receive(to->up, rx);
}

enum { REAL_TIME_PASSES = 16 };

unsigned long rocemu_world_run(struct rocemu_world *w)
{
	WORLD_GUARD(w);
	struct core *c = &w->core;
	struct wire *wire = w->wire;
	unsigned long steps = 0;
	unsigned n, passes = 0;

	/* Responses owed go out a burst per pass, after the frames due have
	 * been taken in. They do not keep the loop going by themselves: the
	 * lock is given up between bursts, and resp_due tells the callers
	 * when the next may leave (next_event, world_poll_setup). */
	do {
		if (c->real_time) {
			c->now = clock_ns();
			wire->ops->flush(wire);
		}
		n = run_requesters(w);
		n += wire->ops->receive(wire, deliver, w);
		steps += run_responders(w);
		if (c->real_time)
			wire->ops->flush(wire);
		n += fire_timers(w);
		steps += n;
		/* On real time the clock moves while this loop runs, so work
		 * can come for ever (an RNR NAK and its retry every 10 us, a
		 * peer that keeps sending): a bounded number of passes, then
		 * the lock goes to whoever waits for it (an application
		 * posting the receive that ends the storm). */
	} while (n && (!c->real_time || ++passes < REAL_TIME_PASSES));
	/* Responses still owed (a burst left for later) are the progress
	 * thread's to send: it sleeps until their time only if it is told
	 * they exist. Owing them does not kick by itself, so a round trip
	 * whose ACK left in this pass wakes nobody. */
	if (c->sched.acks)
		sched_kick(&c->sched);
	return steps;
}

/* The time of the next frame, live timer or responder burst; false if
 * none. */
static bool next_event(struct rocemu_world *w, uint64_t *when)
{
	bool any = sched_next_timer(&w->core.sched, when);
	uint64_t t;

	if (w->wire->ops->next_due(w->wire, &t) && (!any || t < *when)) {
		*when = t;
		any = true;
	}
	for (struct sched_link *l = w->core.sched.acks; l; l = l->next)
		if (resp_due(l->owner, &t) && (!any || t < *when)) {
			*when = t;
			any = true;
		}
	return any;
}

static uint64_t rx_total(struct rocemu_world *w)
{
	WORLD_GUARD(w);
	struct rocemu_dev *d, *tmp;
	uint64_t rx = 0;

	HASH_ITER(hh, w->devs, d, tmp)
		rx += d->cnt[ROCEMU_CNT_RX_PACKETS];
	return rx;
}

/* On real time waiting is the only way forward. */
static bool real_settle(struct rocemu_world *w, uint64_t max_ns,
			bool until_idle)
{
	uint64_t end = clock_ns() + max_ns, when;

	for (;;) {
		uint64_t now = clock_ns();
		if (now >= end)
			return false;
		uint64_t rx = rx_total(w);
		rocemu_world_wait(w, end - now < 1000000 ? end - now : 1000000);
		WORLD_GUARD(w);
		struct sched *s = &w->core.sched;
		if (until_idle && rx_total(w) == rx && !s->ready && !s->acks &&
		    !sched_next_timer(s, &when) && w->wire->ops->flush(w->wire))
			return true;
	}
}

void rocemu_world_advance(struct rocemu_world *w, uint64_t ns)
{
	if (w->core.real_time) {
		real_settle(w, ns, false);
		return;
	}
	WORLD_GUARD(w);
	uint64_t end = w->core.now + ns, when;
	rocemu_world_run(w);
	while (next_event(w, &when) && when <= end) {
		if (when > w->core.now)
			w->core.now = when;
		rocemu_world_run(w);
	}
	w->core.now = end;
	rocemu_world_run(w);
}

bool rocemu_world_settle(struct rocemu_world *w, uint64_t max_ns)
{
	/* On real time the lock is taken piece by piece: a progress thread
	 * must be able to run meanwhile. */
	if (w->core.real_time)
		return real_settle(w, max_ns, true);
	WORLD_GUARD(w);
	uint64_t end = w->core.now + max_ns, when;
	rocemu_world_run(w);
	while (next_event(w, &when)) {
		if (when > end)
			return false;
		if (when > w->core.now)
			w->core.now = when;
		rocemu_world_run(w);
	}
	return true;
}

/* When the engines have work: a requester or responder whose port's
 * queue has room (one whose queue is full waits for POLLOUT); a paced
 * responder at its next burst. Lowers *when, if any is sooner. */
static void engines_due(struct rocemu_world *w, uint64_t *when)
{
	uint64_t t;

	for (struct sched_link *l = w->core.sched.ready; l; l = l->next) {
		struct rocemu_qp *qp = l->owner;
		if (!wire_busy(qp->dev->port))
			*when = w->core.now;
	}
	for (struct sched_link *l = w->core.sched.acks; l; l = l->next) {
		struct rocemu_qp *qp = l->owner;
		if (!wire_busy(qp->dev->port) && resp_due(qp, &t) && t < *when)
			*when = t;
	}
}

struct timespec world_poll_setup(struct rocemu_world *w, struct pollfd *pfd,
				 unsigned max, unsigned long *n, uint64_t max_ns)
{
	uint64_t when, now = w->core.now, due = now + max_ns, wait;

	if (sched_next_timer(&w->core.sched, &when) && when < due)
		due = when;
	engines_due(w, &due);
	wait = due <= now ? 0 : due - now;
	*n = w->wire->ops->pollfds(w->wire, pfd, max);
	w->core.polls_under_way++;
	return (struct timespec){ (time_t)(wait / 1000000000u),
				  (long)(wait % 1000000000u) };
}

void rocemu_world_wait(struct rocemu_world *w, uint64_t max_ns)
{
	struct pollfd pfd[64];
	unsigned long n;
	bool threaded, real_time;
	struct timespec ts;

	{
		WORLD_GUARD(w);
		threaded = w->core.threaded;
		real_time = w->core.real_time;
	}
	/* With a progress thread running, the thread does the work. */
	if (threaded) {
		struct timespec nap = { (time_t)(max_ns / 1000000000u),
					(long)(max_ns % 1000000000u) };
		nanosleep(&nap, NULL);
		return;
	}
	rocemu_world_run(w);
	{
		WORLD_GUARD(w);
		ts = world_poll_setup(w, pfd, 64, &n, max_ns);
	}
	if (real_time)
		ppoll(pfd, n, &ts, NULL);
	{
		WORLD_GUARD(w);
		w->core.polls_under_way--;
	}
	rocemu_world_run(w);
}
