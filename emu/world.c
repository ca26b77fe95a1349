/* SPDX-License-Identifier: MIT */
/* The world: virtual clock, seeded generator, event heaps and the step loop. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local.h"

struct rocemu_world *rocemu_world_new_udp(void)
{
	struct rocemu_world *w = rocemu_world_new(udp_clock_ns());

	if (w) {
		w->udp = true;
		w->now = udp_clock_ns();
	}
	return w;
}

struct rocemu_world *rocemu_world_new(uint64_t seed)
{
	struct rocemu_world *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (world_lock_init(w)) {
		free(w);
		return NULL;
	}
	w->rng = seed;
	w->faults.latency_ns = DEFAULT_LATENCY_NS;
	w->frames.elem_size = sizeof(struct inflight);
	w->timers.elem_size = sizeof(struct timer_ev);
	return w;
}

void rocemu_world_free(struct rocemu_world *w)
{
	struct inflight f;

	if (!w)
		return;
	while (w->frames.n) {
		heap_pop(&w->frames, &f);
		free(f.data);
	}
	free(w->frames.v);
	free(w->timers.v);
	roce_pcap_finish(w->pcap);
	if (w->wake_open) {
		close(w->wake[0]);
		close(w->wake[1]);
	}
	pthread_mutex_destroy(&w->lock);
	free(w);
}

uint64_t rocemu_world_now(const struct rocemu_world *w)
{
	/* The progress thread moves the clock under the lock. */
	WORLD_GUARD((struct rocemu_world *)(uintptr_t)w);
	return w->now;
}

void rocemu_world_set_faults(struct rocemu_world *w,
			     const struct rocemu_faults *f)
{
	WORLD_GUARD(w);
	w->faults = *f;
	if (!w->faults.latency_ns)
		w->faults.latency_ns = DEFAULT_LATENCY_NS;
}

int rocemu_world_record(struct rocemu_world *w, const char *path)
{
	WORLD_GUARD(w);
	char err[ROCE_PCAP_ERRLEN];

	if (w->pcap && roce_pcap_finish(w->pcap))
		return -EIO;
	w->pcap = NULL;
	return path ? roce_pcap_create(path, &w->pcap, err) : 0;
}

void rocemu_world_trace(struct rocemu_world *w, rocemu_trace_fn fn, void *arg)
{
	WORLD_GUARD(w);
	w->trace = fn;
	w->trace_arg = arg;
}

void world_trace(struct rocemu_world *w, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!w->trace)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	w->trace(w->trace_arg, line);
}

uint64_t world_rand(struct rocemu_world *w)
{
	/* splitmix64: one state word, reproducible from the seed */
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

bool world_chance(struct rocemu_world *w, double p)
{
	return p > 0 && (double)(world_rand(w) >> 11) * 0x1.0p-53 < p;
}

/* ---- heaps ------------------------------------------------------- */

struct key {
	uint64_t when, seq;
};

static bool before(const struct heap *h, size_t a, size_t b)
{
	const struct key *x = (const void *)(h->v + a * h->elem_size);
	const struct key *y = (const void *)(h->v + b * h->elem_size);

	return x->when < y->when || (x->when == y->when && x->seq < y->seq);
}

static void swap(struct heap *h, size_t a, size_t b)
{
	uint8_t t[64];
	size_t s = h->elem_size;

	memcpy(t, h->v + a * s, s);
	memcpy(h->v + a * s, h->v + b * s, s);
	memcpy(h->v + b * s, t, s);
}

int heap_push(struct heap *h, const void *elem)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		uint8_t *v = realloc(h->v, cap * h->elem_size);
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	size_t i = h->n++;
	memcpy(h->v + i * h->elem_size, elem, h->elem_size);
	while (i && before(h, i, (i - 1) / 2)) {
		swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return 0;
}

void heap_pop(struct heap *h, void *out)
{
	memcpy(out, h->v, h->elem_size);
	if (--h->n == 0)
		return;
	memcpy(h->v, h->v + h->n * h->elem_size, h->elem_size);
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && before(h, l, m))
			m = l;
		if (r < h->n && before(h, r, m))
			m = r;
		if (m == i)
			break;
		swap(h, i, m);
		i = m;
	}
}

/* ---- timers ------------------------------------------------------ */

void timer_arm(struct rocemu_qp *qp, enum timer_kind kind, uint64_t ns)
{
	struct rocemu_world *w = qp->dev->w;
	struct timer_ev ev = { w->now + ns, w->seq++, qp,
			       ++qp->timer_gen[kind], (uint8_t)kind };

	qp->timer_armed[kind] = heap_push(&w->timers, &ev) == 0;
}

void timer_cancel(struct rocemu_qp *qp, enum timer_kind kind)
{
	qp->timer_gen[kind]++; /* the heap entry goes stale */
	qp->timer_armed[kind] = false;
}

/* Drops cancelled timers from the top; true if a live one is armed. */
bool world_next_timer(struct rocemu_world *w, uint64_t *when)
{
	const struct timer_ev *t;

	while ((t = heap_top(&w->timers)) &&
	       t->gen != t->qp->timer_gen[t->kind]) {
		struct timer_ev dead;
		heap_pop(&w->timers, &dead);
	}
	if (!t)
		return false;
	*when = t->when;
	return true;
}

static unsigned fire_timers(struct rocemu_world *w)
{
	uint64_t when;
	unsigned n = 0;

	while (world_next_timer(w, &when) && when <= w->now) {
		struct timer_ev ev;
		heap_pop(&w->timers, &ev);
		ev.qp->timer_armed[ev.kind] = false;
		comp_timer(ev.qp, (enum timer_kind)ev.kind);
		n++;
	}
	return n;
}

/* ---- stepping ---------------------------------------------------- */

/* Runs each requester with work once; returns the packets they sent. A
 * QP the wire holds back puts itself on the list again, for a later pass. */
static unsigned run_ready(struct rocemu_world *w)
{
	struct rocemu_qp *list = w->ready;
	unsigned n = 0;

	w->ready = NULL;
	while (list) {
		struct rocemu_qp *qp = list;
		list = qp->ready_next;
		qp->in_ready = false;
		n += req_run(qp);
	}
	return n;
}

/*
 * Sends a burst of what each responder owes (coalesced ACKs, NAKs, READ
 * responses, atomic ACKs); returns the packets sent. A QP that owes more
 * stays on the list for the next step.
 */
static unsigned run_responders(struct rocemu_world *w)
{
	struct rocemu_qp *list = w->acks;
	unsigned n = 0;

	w->acks = NULL;
	while (list) {
		struct rocemu_qp *qp = list;
		list = qp->ack_next;
		qp->in_acks = false;
		n += resp_run(qp);
	}
	return n;
}

enum { UDP_PASSES = 16 };

unsigned long rocemu_world_run(struct rocemu_world *w)
{
	WORLD_GUARD(w);
	unsigned long steps = 0;
	unsigned n;

	/* Responses owed go out a burst per pass, after the frames due have
	 * been taken in. They do not keep the loop going by themselves: the
	 * lock is given up between bursts, and resp_due tells the callers
	 * when the next may leave (next_event, world_poll_setup). */
	unsigned passes = 0;
	do {
		if (w->udp) {
			w->now = udp_clock_ns();
			udp_flush_all(w);
		}
		n = run_ready(w);
		n += w->udp ? udp_receive_all(w) : wire_deliver_due(w);
		steps += run_responders(w);
		if (w->udp)
			udp_flush_all(w);
		n += fire_timers(w);
		steps += n;
		/* On the UDP wire the clock moves while this loop runs, so
		 * work can come for ever (an RNR NAK and its retry every
		 * 10 us, a peer that keeps sending): a bounded number of
		 * passes, then the lock goes to whoever waits for it (an
		 * application posting the receive that ends the storm). */
	} while (n && (!w->udp || ++passes < UDP_PASSES));
	return steps;
}

/* The time of the next frame, live timer or responder burst; false if
 * none. */
static bool next_event(struct rocemu_world *w, uint64_t *when)
{
	bool any = world_next_timer(w, when);
	const struct inflight *f = heap_top(&w->frames);
	uint64_t t;

	if (f && (!any || f->when < *when)) {
		*when = f->when;
		any = true;
	}
	for (struct rocemu_qp *qp = w->acks; qp; qp = qp->ack_next)
		if (resp_due(qp, &t) && (!any || t < *when)) {
			*when = t;
			any = true;
		}
	return any;
}

static uint64_t rx_total(struct rocemu_world *w)
{
	WORLD_GUARD(w);
	uint64_t rx = 0;

	for (struct rocemu_dev *d = w->devs; d; d = d->next)
		rx += d->cnt[ROCEMU_CNT_RX_PACKETS];
	return rx;
}

/* On the UDP wire time is real: waiting is the only way forward. */
static bool udp_settle(struct rocemu_world *w, uint64_t max_ns, bool until_idle)
{
	uint64_t end = udp_clock_ns() + max_ns, when;

	for (;;) {
		uint64_t now = udp_clock_ns();
		if (now >= end)
			return false;
		uint64_t rx = rx_total(w);
		rocemu_world_wait(w, end - now < 1000000 ? end - now : 1000000);
		WORLD_GUARD(w);
		if (until_idle && rx_total(w) == rx && !w->ready &&
		    !w->acks && !world_next_timer(w, &when) &&
		    udp_flush_all(w))
			return true;
	}
}

void rocemu_world_advance(struct rocemu_world *w, uint64_t ns)
{
	if (w->udp) {
		udp_settle(w, ns, false);
		return;
	}
	WORLD_GUARD(w);
	uint64_t end = w->now + ns, when;
	rocemu_world_run(w);
	while (next_event(w, &when) && when <= end) {
		if (when > w->now)
			w->now = when;
		rocemu_world_run(w);
	}
	w->now = end;
	rocemu_world_run(w);
}

bool rocemu_world_settle(struct rocemu_world *w, uint64_t max_ns)
{
	/* On the UDP wire the lock is taken piece by piece: a progress
	 * thread must be able to run meanwhile. */
	if (w->udp)
		return udp_settle(w, max_ns, true);
	WORLD_GUARD(w);
	uint64_t end = w->now + max_ns, when;
	rocemu_world_run(w);
	while (next_event(w, &when)) {
		if (when > end)
			return false;
		if (when > w->now)
			w->now = when;
		rocemu_world_run(w);
	}
	return true;
}
