/* SPDX-License-Identifier: MIT */
/*
 * What every layer of the device shares: the clock, the seeded random
 * numbers, tracing, the scheduler, the gather buffer and the one lock.
 *
 * Layer rule: core/ includes only proto's public headers (rocemu/) and
 * its own; everything in emu/ may include it.
 */
#ifndef ROCEMU_CORE_CORE_H
#define ROCEMU_CORE_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rocemu/device.h"
#include "frames.h"
#include "sched.h"

struct core {
	/* ns; virtual, or CLOCK_MONOTONIC (real_time) */
	uint64_t now;
	bool real_time;
	uint64_t rng;
	rocemu_trace_fn trace;
	void *trace_arg;
	rocemu_event_fn event;		/* structured events, or NULL */
	void *event_arg;
	rocemu_event_fn explain;	/* why events only (explain mode) */
	void *explain_arg;
	bool why_keep;			/* devices keep each kind's last */
	/* Frames the world's capture holds: the tap counts them, events
	 * carry the count (rocemu/trace.h). */
	uint64_t frames_recorded;
	struct sched sched;
	/* Buffers for the frames the engines build (frames.h). */
	struct frame_pool frames;
	/* Payload gathered from several SGEs; one world's engines run one
	 * at a time, so one buffer serves them all. */
	uint8_t bounce[4096];
	/* Every public call holds this lock (core.c says why). When a
	 * progress thread runs, the holder that leaves it new work
	 * (sched.kick) writes a byte to wake_fd on the way out. */
	pthread_mutex_t lock;
	/* Until when a caller spinning on the engines (rocemu_world_poll,
	 * many times in a row) will run them again soon by itself: new
	 * work then wakes no thread, whose waking would take a CPU from
	 * the spinner (or from its peer on the same host). */
	_Atomic uint64_t spinning_until;
	bool threaded;
	pthread_t thread;
	int wake_fd;
	/* Threads in poll() on the wire's fds (world_poll_setup counts one
	 * in, the poller out once it returned): a socket closed meanwhile
	 * lives on until they return. Under the lock. */
	unsigned polls_under_way;
};

/* Sets up c with an empty scheduler and a recursive lock: 0, or -errno
 * (c is then unusable). */
int core_init(struct core *c, uint64_t seed, bool real_time);
/* Frees what core_init made. */
void core_fini(struct core *c);

/* Takes c's lock (recursive) and returns c, for CORE_GUARD. */
struct core *core_lock(struct core *c);
/* Releases the lock *cp names; wakes the progress thread when the holder
 * left it new work and is not that thread. */
void core_unlock(struct core **cp);

/* Holds c's lock until the end of the enclosing block. */
#define CORE_GUARD(c)                                                    \
	struct core *core_guard_                                          \
		__attribute__((cleanup(core_unlock), unused)) = core_lock(c)

/* CLOCK_MONOTONIC in ns. */
uint64_t clock_ns(void);

/* The next number of the seeded sequence (splitmix64). */
uint64_t core_rand(struct core *c);
/* True with probability p, from the seeded sequence; p <= 0 (every
 * packet asks whether a fault is due) draws no number. */
static inline bool core_chance(struct core *c, double p)
{
	return p > 0 && (double)(core_rand(c) >> 11) * 0x1.0p-53 < p;
}

/* Whether trace lines go anywhere. */
static inline bool core_tracing(const struct core *c)
{
	return c->trace != NULL;
}

/* One trace line to c's trace function (set: see core_tracing). */
void core_trace_line(struct core *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Whether structured events go anywhere. */
static inline bool core_eventing(const struct core *c)
{
	return c->event != NULL;
}

/* Whether a reason's text is wanted by anyone (explain mode, events,
 * kept for the counters): the only test on the way to building one. */
static inline bool core_explaining(const struct core *c)
{
	return c->event || c->explain || c->why_keep;
}

/* Stamps ev with the clock and the frames recorded so far and hands it to
 * c's event function (set: see core_eventing). */
void core_event(struct core *c, struct rocemu_event *ev);

/* One trace line, if a trace function is set; the arguments are not even
 * evaluated otherwise, which the packet path counts on. */
#define core_trace(c, ...)                                               \
	do {                                                             \
		struct core *core_trace_c_ = (c);                        \
		if (core_tracing(core_trace_c_))                         \
			core_trace_line(core_trace_c_, __VA_ARGS__);     \
	} while (0)

#endif
