/* SPDX-License-Identifier: MIT */
/*
 * The world: devices on one wire, the clock, and the one place that runs
 * the engines: the step loop (step.c), the progress thread and busy
 * polling (progress.c). It implements the public rocemu_world_* calls and
 * makes and frees devices (devices.c).
 *
 * Layer rule: world/ includes cm/, engine/, obj/, wire/, core/ and the public
 * headers; nothing below includes world/.
 */
#ifndef ROCEMU_WORLD_WORLD_H
#define ROCEMU_WORLD_WORLD_H

#include <stdatomic.h>
#include <time.h>

#include "cm/cm.h"
#include "engine/engine.h"

struct rocemu_world {
	struct core core;
	struct wire *wire;		/* the tap, around base */
	struct wire *base;		/* the loopback or UDP wire */
	struct rocemu_dev *devs;	/* by gid */
	/* the progress thread's */
	_Atomic bool stop;
	/* When a busy-polling caller last ran the engines: while it keeps
	 * doing so, the thread stays off the CPU and the lock. */
	_Atomic uint64_t polled_at;
	_Atomic unsigned spin_streak;	/* polls close together, so far */
	int wake[2];
	/* rocemu_world_tick: the progress thread's own, set while it is
	 * not running */
	rocemu_tick_fn tick;
	void *tick_arg;
	uint64_t tick_period, tick_last;
	bool wake_open;		/* made at the first start, closed at free */
};

/* Holds w's lock until the end of the enclosing block. */
#define WORLD_GUARD(w) CORE_GUARD(&(w)->core)

/* Fills pfd with the wire's fds (at most max, *n of them) and returns
 * how long to wait for them, for ppoll: to the next timer or engine work,
 * max_ns at most (in ns, not poll's ms: a paced READ response is due
 * every few microseconds). Called under the lock. */
struct timespec world_poll_setup(struct rocemu_world *w, struct pollfd *pfd, unsigned max,
		     unsigned long *n, uint64_t max_ns);

#endif
