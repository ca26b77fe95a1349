/* SPDX-License-Identifier: MIT */
/* The progress thread: the engines run on their own, so completions arrive while the application sleeps. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "local.h"

/*
 * One lock per world, always taken, even with no progress thread: the
 * application may call into the device from any number of threads
 * (rdma-core's promise for every verbs entry point), and the engines run
 * under it. It is recursive because API calls nest (connect calls modify,
 * wait calls run). Only rocemu_cq_poll and the completion channel's
 * blocking wait run outside it; each CQ's consumer side has a lock of its
 * own (taken after the world lock when both are held, never before).
 */
int world_lock_init(struct rocemu_world *w)
{
	pthread_mutexattr_t ma;
	int rc;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	rc = pthread_mutex_init(&w->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	return -rc;
}

void rocemu_world_fork_prepare(struct rocemu_world *w)
{
	pthread_mutex_lock(&w->lock);
	roce_pcap_flush(w->pcap);
}

void rocemu_world_fork_done(struct rocemu_world *w)
{
	pthread_mutex_unlock(&w->lock);
}

struct rocemu_world *world_lock(struct rocemu_world *w)
{
	pthread_mutex_lock(&w->lock);
	return w;
}

void world_unlock(struct rocemu_world **wp)
{
	struct rocemu_world *w = *wp;
	bool kick = w->threaded && w->kick &&
		    !pthread_equal(pthread_self(), w->thread);
	/* Read under the lock; the pipe stays open until the world goes. */
	int fd = w->wake[1];

	if (w->threaded)
		w->kick = false;
	pthread_mutex_unlock(&w->lock);
	if (kick) {
		ssize_t n = write(fd, "k", 1);
		(void)n; /* a full pipe is already a pending wake-up */
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

static bool spinner_active(struct rocemu_world *w)
{
	return udp_clock_ns() - atomic_load(&w->polled_at) < SPINNER_NS;
}

static void *progress(void *arg)
{
	struct rocemu_world *w = arg;
	struct pollfd pfd[65];

	while (!atomic_load(&w->stop)) {
		nfds_t n = 0;
		int ms = 1;

		if (!spinner_active(w)) {
			pthread_mutex_lock(&w->lock);
			rocemu_world_run(w);
			ms = world_poll_setup(w, pfd + 1, 64, &n, 100000000);
			pthread_mutex_unlock(&w->lock);
		}
		pfd[0] = (struct pollfd){ w->wake[0], POLLIN, 0 };
		if (poll(pfd, n + 1, ms) > 0 && (pfd[0].revents & POLLIN))
			drain(w->wake[0]);
	}
	/* A last pass, so nothing that arrived is left unprocessed. */
	pthread_mutex_lock(&w->lock);
	rocemu_world_run(w);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

unsigned long rocemu_world_poll(struct rocemu_world *w)
{
	unsigned long n;

	if (pthread_mutex_trylock(&w->lock))
		return 0; /* someone is running the engines right now */
	atomic_store(&w->polled_at, udp_clock_ns());
	n = rocemu_world_run(w);
	pthread_mutex_unlock(&w->lock);
	return n;
}

int rocemu_world_start(struct rocemu_world *w)
{
	WORLD_GUARD(w);
	if (!w->udp || w->threaded)
		return -EINVAL;
	/* Made once and kept until rocemu_world_free: a thread that saw the
	 * progress thread running may still write to it after a stop. */
	if (!w->wake_open && pipe2(w->wake, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	w->wake_open = true;
	atomic_store(&w->stop, false);
	w->threaded = true;
	int rc = pthread_create(&w->thread, NULL, progress, w);
	if (rc) {
		w->threaded = false;
		return -rc;
	}
	return 0;
}

void rocemu_world_stop(struct rocemu_world *w)
{
	if (!w->threaded)
		return;
	atomic_store(&w->stop, true);
	ssize_t n = write(w->wake[1], "s", 1);
	(void)n;
	pthread_join(w->thread, NULL);
	pthread_mutex_lock(&w->lock);
	w->threaded = false;
	pthread_mutex_unlock(&w->lock);
}
