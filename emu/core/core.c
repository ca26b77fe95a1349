/* SPDX-License-Identifier: MIT */
/* The clock, the seeded generator, tracing and the lock. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/*
 * One lock per world, always taken, even with no progress thread: the
 * application may call into the device from any number of threads
 * (rdma-core's promise for every verbs entry point), and the engines run
 * under it. It is recursive because API calls nest (connect calls modify,
 * wait calls run). Only rocemu_cq_poll and the completion channel's
 * blocking wait run outside it; each CQ's consumer side has a lock of its
 * own (taken after this one when both are held, never before).
 */
int core_init(struct core *c, uint64_t seed, bool real_time)
{
	pthread_mutexattr_t ma;
	int rc;

	*c = (struct core){ .rng = seed, .real_time = real_time,
			    .wake_fd = -1 };
	sched_init(&c->sched);
	if (real_time)
		c->now = clock_ns();
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	rc = pthread_mutex_init(&c->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	return -rc;
}

void core_fini(struct core *c)
{
	sched_fini(&c->sched);
	frame_pool_fini(&c->frames);
	pthread_mutex_destroy(&c->lock);
}

struct core *core_lock(struct core *c)
{
	pthread_mutex_lock(&c->lock);
	return c;
}

void core_unlock(struct core **cp)
{
	struct core *c = *cp;
	bool kick = c->threaded && c->sched.kick &&
		    !pthread_equal(pthread_self(), c->thread);
	/* Read under the lock; the fd stays open until the world goes. */
	int fd = c->wake_fd;

	if (c->threaded)
		c->sched.kick = false;
	pthread_mutex_unlock(&c->lock);
	if (kick && clock_ns() >= atomic_load_explicit(&c->spinning_until,
						       memory_order_relaxed)) {
		ssize_t n = write(fd, "k", 1);
		(void)n; /* a full pipe is already a pending wake-up */
	}
}

uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t core_rand(struct core *c)
{
	/* splitmix64: one state word, reproducible from the seed */
	uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void core_trace_line(struct core *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!c->trace)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->trace(c->trace_arg, line);
}

void core_event(struct core *c, struct rocemu_event *ev)
{
	if (!c->event && !(ev->kind == ROCEMU_EV_WHY && c->explain))
		return;
	ev->time_ns = c->now;
	ev->frames = c->frames_recorded;
	if (c->event)
		c->event(c->event_arg, ev);
	if (ev->kind == ROCEMU_EV_WHY && c->explain)
		c->explain(c->explain_arg, ev);
}
