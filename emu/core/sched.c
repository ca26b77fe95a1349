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

void sched_timer_arm(struct sched *s, struct sched_timer *t, uint64_t when)
{
	struct sched_timer_ev ev = { when, s->seq++, t, ++t->gen };

	t->armed = heap_push(&s->timers, &ev) == 0;
}

void sched_timer_cancel(struct sched_timer *t)
{
	t->gen++;
	t->armed = false;
}

void sched_timer_forget(struct sched *s, const struct sched_timer *t)
{
	struct heap keep = { .elem_size = s->timers.elem_size };
	struct sched_timer_ev ev;

	while (s->timers.n) {
		heap_pop(&s->timers, &ev);
		if (ev.t != t)
			heap_push(&keep, &ev);
	}
	heap_fini(&s->timers);
	s->timers = keep;
}

bool sched_next_timer(struct sched *s, uint64_t *when)
{
	const struct sched_timer_ev *top;

	while ((top = heap_top(&s->timers)) && top->gen != top->t->gen) {
		struct sched_timer_ev dead;
		heap_pop(&s->timers, &dead);
	}
	if (!top)
		return false;
	*when = top->when;
	return true;
}

struct sched_timer *sched_due_timer(struct sched *s, uint64_t now)
{
	uint64_t when;
	struct sched_timer_ev ev;

	if (!sched_next_timer(s, &when) || when > now)
		return NULL;
	heap_pop(&s->timers, &ev);
	ev.t->armed = false;
	return ev.t;
}
