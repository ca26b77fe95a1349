// SPDX-License-Identifier: MIT
/*
 * Preloaded into Debian's perftest by tests/verbs/rdmacm_perftest.sh, so
 * that its client connects only once its server listens. perftest -R
 * makes two rdma_cm connections on one port (one to trade keys, then the
 * test's), and its server listens for the second only after the first
 * has traded keys: a client that is quicker sends its REQ to no listener
 * and is rejected (REJ 8, as Linux's CM does), and perftest 4.5's retry
 * after a REJECTED uses the ids and node array it has just freed. That
 * race is perftest's own, on Linux too; the test takes it out without
 * timing: with PERFTEST_LISTENS=DIR, the server's Nth successful
 * rdma_listen makes DIR/listen.N, and the client's Nth rdma_resolve_addr
 * waits until DIR/listen.N exists (at most two minutes; then it goes on
 * and the REJ shows). Nothing else changes: the calls go on to the
 * drop-in unaltered.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

/* The directory the marks go in, or NULL when the test set none. */
static const char *mark_dir(void)
{
	return getenv("PERFTEST_LISTENS");
}

static void mark_path(char *buf, size_t len, int n)
{
	snprintf(buf, len, "%s/listen.%d", mark_dir(), n);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	static int (*real)(struct rdma_cm_id *, int);
	static int n;
	char path[4096];

	if (!real)
		real = (int (*)(struct rdma_cm_id *, int))dlsym(RTLD_NEXT,
							      "rdma_listen");
	if (!real)
		return -1;
	int rc = real(id, backlog);
	if (rc == 0 && mark_dir()) {
		mark_path(path, sizeof(path), ++n);
		int fd = open(path, O_WRONLY | O_CREAT, 0644);
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		      struct sockaddr *dst_addr, int timeout_ms)
{
	static int (*real)(struct rdma_cm_id *, struct sockaddr *,
			   struct sockaddr *, int);
	static int n;
	char path[4096];

	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct sockaddr *,
				struct sockaddr *, int))dlsym(RTLD_NEXT,
							      "rdma_resolve_addr");
	if (!real)
		return -1;
	if (mark_dir()) {
		const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };

		mark_path(path, sizeof(path), ++n);
		for (int i = 0; i < 12000 && access(path, F_OK); i++)
			nanosleep(&tick, NULL);
	}
	return real(id, src_addr, dst_addr, timeout_ms);
}
