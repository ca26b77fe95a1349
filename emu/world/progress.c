/* SPDX-License-Identifier: MIT */
/* The progress thread: the engines run on their own, so completions arrive while the application sleeps. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "world.h"

void rocemu_world_fork_prepare(struct rocemu_world *w)
{
	pthread_mutex_lock(&w->core.lock);
	tap_wire_flush(w->wire);
}

void rocemu_world_fork_parent(struct rocemu_world *w)
{
	pthread_mutex_unlock(&w->core.lock);
}

/* The lock is recursive and owned by the thread that forked: in the child
 * that thread has another id, and the unlock would fail (EPERM), leaving
 * every later caller blocked. The world's threads are not in the child
 * either, so it is left as it is, and only its descriptors go. */
void rocemu_world_fork_child(struct rocemu_world *w)
{
	w->wire->ops->forget(w->wire);
	if (w->wake_open) {
		close(w->wake[0]);
		close(w->wake[1]);
	}
}

static void drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* A caller spinning on rocemu_world_poll does all the work the thread would;
 * competing with it for a CPU and the lock only delays both. */
enum { SPINNER_NS = 1000000 };

/*
 * A spinner for the wake-ups (core.spinning_until): SPIN_STREAK calls in
 * a row, each within SPIN_GAP_NS of the one before, counts as one for
 * SPIN_HOLD_NS. A program that polls its CQ empty once and then sleeps
 * on a completion channel is no spinner: work it posts wakes the thread.
 */
enum { SPIN_STREAK = 8, SPIN_GAP_NS = 20000, SPIN_HOLD_NS = 50000 };

static void note_poll(struct rocemu_world *w, uint64_t now)
{
	uint64_t last = atomic_exchange(&w->polled_at, now);
	unsigned streak = now - last < SPIN_GAP_NS ? w->spin_streak + 1 : 0;

	w->spin_streak = streak;
	if (streak >= SPIN_STREAK)
		atomic_store_explicit(&w->core.spinning_until,
				      now + SPIN_HOLD_NS, memory_order_relaxed);
}

static bool spinner_active(struct rocemu_world *w)
{
	return clock_ns() - atomic_load(&w->polled_at) < SPINNER_NS;
}

/* rocemu_world_tick's call, when its period has passed: outside the
 * lock, so a slow file does not hold up the engines. */
static void tick(struct rocemu_world *w)
{
	uint64_t now;

	if (!w->tick)
		return;
	now = clock_ns();
	if (now - w->tick_last < w->tick_period)
		return;
	w->tick_last = now;
	w->tick(w->tick_arg);
}

void rocemu_world_tick(struct rocemu_world *w, rocemu_tick_fn fn, void *arg,
		       uint64_t period_ns)
{
	WORLD_GUARD(w);
	w->tick = fn;
	w->tick_arg = arg;
	w->tick_period = period_ns;
	w->tick_last = 0;
}

static void *progress(void *arg)
{
	struct rocemu_world *w = arg;
	struct pollfd pfd[65];
	bool polled = false; /* the wire's fds, in the last ppoll */

	while (!atomic_load(&w->stop)) {
		nfds_t n = 0;
		struct timespec ts = { 0, 1000000 }; /* a spinner's check */

		if (!spinner_active(w) || polled) {
			pthread_mutex_lock(&w->core.lock);
			if (polled)
				w->core.polls_under_way--;
			polled = !spinner_active(w);
			if (polled) {
				rocemu_world_run(w);
				ts = world_poll_setup(w, pfd + 1, 64, &n,
						      100000000);
			}
			pthread_mutex_unlock(&w->core.lock);
		}
		pfd[0] = (struct pollfd){ w->wake[0], POLLIN, 0 };
		if (ppoll(pfd, n + 1, &ts, NULL) > 0 && (pfd[0].revents & POLLIN))
			drain(w->wake[0]);
		tick(w);
	}
	/* A last pass, so nothing that arrived is left unprocessed. */
	pthread_mutex_lock(&w->core.lock);
	if (polled)
		w->core.polls_under_way--;
	rocemu_world_run(w);
	pthread_mutex_unlock(&w->core.lock);
	return NULL;
}

unsigned long rocemu_world_poll(struct rocemu_world *w)
{
	unsigned long n;

	/* Marked before the lock is tried: a spinner that finds the thread
	 * running the engines makes it stop after this pass, instead of
	 * the two taking turns. */
	note_poll(w, clock_ns());
	if (pthread_mutex_trylock(&w->core.lock))
		return 0; /* someone is running the engines right now */
	n = rocemu_world_run(w);
	pthread_mutex_unlock(&w->core.lock);
	return n;
}

int rocemu_world_start(struct rocemu_world *w)
{
	WORLD_GUARD(w);
	if (!w->core.real_time || w->core.threaded)
		return -EINVAL;
	/* Made once and kept until rocemu_world_free: a thread that saw the
	 * progress thread running may still write to it after a stop. */
	if (!w->wake_open && pipe2(w->wake, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	w->wake_open = true;
	w->core.wake_fd = w->wake[1];
	atomic_store(&w->stop, false);
	w->core.threaded = true;
	int rc = pthread_create(&w->core.thread, NULL, progress, w);
	if (rc) {
		w->core.threaded = false;
		return -rc;
	}
	/* Named so that top -H and perf tell it from the program's threads. */
	pthread_setname_np(w->core.thread, "rocemu-progress");
	return 0;
}

void rocemu_world_stop(struct rocemu_world *w)
{
	bool threaded;
	{
		WORLD_GUARD(w);
		threaded = w->core.threaded;
	}
	if (!threaded)
		return;
	atomic_store(&w->stop, true);
	ssize_t n = write(w->wake[1], "s", 1);
	(void)n;
	pthread_join(w->core.thread, NULL);
	pthread_mutex_lock(&w->core.lock);
	w->core.threaded = false;
	pthread_mutex_unlock(&w->core.lock);
}
