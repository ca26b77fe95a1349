/* SPDX-License-Identifier: MIT */
/* The scheduler: which queue pairs have requester or responder work, and their timers. */
#ifndef ROCEMU_CORE_SCHED_H
#define ROCEMU_CORE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "heap.h"

/*
 * An object with work waiting embeds one link per kind of work. The
 * scheduler knows nothing of what owns a link: the world, which runs the
 * engines, takes links off and hands their owners to the engine that
 * does that kind of work. So a layer below the engines (a verbs call
 * posting a WQE) asks for work without calling an engine.
 */
struct sched_link {
	struct sched_link *next;
	void *owner;
	bool queued;
};

/*
 * A one-shot timer an object embeds. A heap entry is live while its
 * generation matches. A timer armed again for later (a retransmit timer
 * restarted by every ACK) keeps its entry and only moves due: when the
 * entry comes up early it goes back in for due, so the heap sees one
 * entry per period, not one per arming.
 */
struct sched_timer {
	void *owner;
	uint64_t due;		/* when it fires, while armed */
	uint64_t entry_when;	/* its live entry's time, while in_heap */
	uint32_t gen;
	uint32_t entries;	/* in the heap, stale ones included */
	uint8_t kind;		/* the owner's name for it */
	bool armed;
	bool in_heap;		/* an entry of this generation is queued */
};

struct sched {
	struct sched_link *ready;	/* requesters with work */
	struct sched_link *acks;	/* responders owing responses */
	struct heap timers;		/* struct sched_timer_ev */
	uint64_t seq;			/* keeps equal times in arming order */
	bool kick;			/* requester work added since the last look */
};

struct sched_timer_ev {
	uint64_t when;
	uint64_t seq;
	struct sched_timer *t;
	uint32_t gen;
};

/* Sets up an empty scheduler. */
void sched_init(struct sched *s);
/* Frees its timer heap; links stay with their owners. */
void sched_fini(struct sched *s);

/* Puts l on *list unless it is there already. Whoever adds work from
 * outside a world pass also sets kick (sched_kick). */
void sched_add(struct sched_link **list, struct sched_link *l);
/* Marks new work for the progress thread: the lock's holder wakes it on
 * the way out (core_unlock). */
static inline void sched_kick(struct sched *s)
{
	s->kick = true;
}
/* Takes the whole list, leaving *list empty; its links count as queued
 * until sched_pop takes each off (so adding one meanwhile is a no-op). */
struct sched_link *sched_take(struct sched_link **list);
/* Takes the first link off a taken list; NULL when it is empty. */
struct sched_link *sched_pop(struct sched_link **taken);
/* Takes l off *list if it is on it; the list is otherwise unchanged. */
void sched_remove(struct sched_link **list, struct sched_link *l);

/* Arms t to fire at when, replacing an earlier arming; t->armed is false
 * if memory ran out (the timer then never fires). */
void sched_timer_arm(struct sched *s, struct sched_timer *t, uint64_t when);
/* Disarms t; its heap entry goes stale. */
void sched_timer_cancel(struct sched_timer *t);
/* Drops every heap entry of t, which is about to be freed. */
void sched_timer_forget(struct sched *s, struct sched_timer *t);
/* The time of the earliest live timer (stale entries are dropped from
 * the top on the way); false if none is armed. */
bool sched_next_timer(struct sched *s, uint64_t *when);
/* Takes the earliest live timer due by now, disarmed; NULL if none. */
struct sched_timer *sched_due_timer(struct sched *s, uint64_t now);

#endif
