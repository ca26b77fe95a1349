/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: contexts' cmd_fd; ibv_import_device within the process. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verbs_local.h"

/*
 * There is no kernel device file: every context's cmd_fd is a dup of one
 * memfd of the process's, so that ibv_import_device recognises a dup of
 * a context's cmd_fd (the way rdma-core's tests share a context) by the
 * file it refers to.
 */
static int cmd_file = -1;
static pthread_once_t cmd_once = PTHREAD_ONCE_INIT;

static void cmd_file_open(void)
{
	cmd_file = memfd_create("rocemu-verbs", MFD_CLOEXEC);
}

int rv_cmd_fd_new(void)
{
	pthread_once(&cmd_once, cmd_file_open);
	if (cmd_file < 0)
		return -1;
	return fcntl(cmd_file, F_DUPFD_CLOEXEC, 3);
}

/* True if fd is a dup of the contexts' file (not the file's own fd,
 * which no context owns). */
static bool cmd_fd_ours(int fd)
{
	struct stat a, b;

	pthread_once(&cmd_once, cmd_file_open);
	return cmd_file >= 0 && fd != cmd_file && !fstat(fd, &a) &&
	       !fstat(cmd_file, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* A context sharing the device with the one whose cmd_fd was duplicated
 * into cmd_fd (which it then owns); EOPNOTSUPP for any other fd, as
 * objects cannot be shared with another process. */
struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_device **list;
	struct ibv_context *c;

	if (!cmd_fd_ours(cmd_fd)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(list = ibv_get_device_list(NULL)))
		return NULL;
	c = list[0] ? rv_context_open(list[0], cmd_fd) : NULL;
	if (!list[0])
		errno = ENODEV;
	ibv_free_device_list(list);
	return c;
}
