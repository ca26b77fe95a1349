/* SPDX-License-Identifier: MIT */
/* Work lists and timers on the (when, seq) heap. */
#include <stdlib.h>

#include "sched.h"

void sched_init(struct sched *s)
{
	*s = (struct sched){ .timers.elem_size = sizeof(struct sched_timer_ev) };
}

void sched_fini(struct sched *s)
{
	heap_fini(&s->timers);
}

void sched_add(struct sched_link **list, struct sched_link *l)
{
	if (l->queued)
		return;
	l->queued = true;
	l->next = *list;
	*list = l;
}

struct sched_link *sched_take(struct sched_link **list)
{
	struct sched_link *all = *list;

	*list = NULL;
	return all;
}

struct sched_link *sched_pop(struct sched_link **taken)
{
	struct sched_link *l = *taken;

	if (l) {
		*taken = l->next;
		l->next = NULL;
		l->queued = false;
	}
	return l;
}

void sched_remove(struct sched_link **list, struct sched_link *l)
{
	for (struct sched_link **p = list; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			l->queued = false;
			return;
		}
}

/* Queues a new entry for t at when; the older ones go stale. */
static void push_entry(struct sched *s, struct sched_timer *t, uint64_t when)
{
	struct sched_timer_ev ev = { when, s->seq++, t, ++t->gen };

	t->in_heap = heap_push(&s->timers, &ev) == 0;
	t->entries += t->in_heap;
	t->entry_when = when;
	if (!t->in_heap)
		t->armed = false;
}

void sched_timer_arm(struct sched *s, struct sched_timer *t, uint64_t when)
{
	t->due = when;
	t->armed = true;
	if (!t->in_heap || t->entry_when > when)
		push_entry(s, t, when);
}

void sched_timer_cancel(struct sched_timer *t)
{
	t->armed = false;	/* its entry, if any, is dropped when it comes up */
}

static bool entry_of(const void *elem, const void *t)
{
	return ((const struct sched_timer_ev *)elem)->t == t;
}

void sched_timer_forget(struct sched *s, struct sched_timer *t)
{
	/* Only a timer with entries queued costs a pass over the heap. */
	if (t->entries)
		heap_remove_if(&s->timers, entry_of, t);
	t->entries = 0;
	t->in_heap = false;
	t->armed = false;
}

/*
 * Brings the heap's top to a live entry of an armed timer at its due
 * time: stale entries and those of cancelled timers are dropped, and one
 * that comes up before its timer's due goes back in for due.
 */
static const struct sched_timer_ev *live_top(struct sched *s)
{
	const struct sched_timer_ev *top;

	while ((top = heap_top(&s->timers))) {
		struct sched_timer_ev ev;
		struct sched_timer *t = top->t;
		if (top->gen == t->gen && t->armed && t->due <= top->when)
			return top;
		heap_pop(&s->timers, &ev);
		t->entries--;
		if (ev.gen != t->gen)
			continue;	/* an older entry of t */
		t->in_heap = false;
		if (t->armed)
			push_entry(s, t, t->due);
	}
	return NULL;
}

bool sched_next_timer(struct sched *s, uint64_t *when)
{
	const struct sched_timer_ev *top = live_top(s);

	if (!top)
		return false;
	*when = top->when;
	return true;
}

struct sched_timer *sched_due_timer(struct sched *s, uint64_t now)
{
	const struct sched_timer_ev *top = live_top(s);
	struct sched_timer_ev ev;

	if (!top || top->when > now)
		return NULL;
	heap_pop(&s->timers, &ev);
	ev.t->entries--;
	ev.t->armed = false;
	ev.t->in_heap = false;
	return ev.t;
}
