/* SPDX-License-Identifier: MIT */
/*
 * librdmacm.so.1: what is not built. Multicast fails with EOPNOTSUPP (the
 * device has no multicast); the rsocket calls fail with ENOSYS, except
 * rpoll and rselect, which are poll and select (programs poll event
 * channel fds with rpoll); ECE carries no options.
 */
#include <errno.h>
#include <poll.h>
#include <rdma/rsocket.h>
#include <string.h>
#include <sys/select.h>

#include "rdmacm_local.h"

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
			void *context)
{
	(void)id, (void)addr, (void)context;
	return rc_err(-EOPNOTSUPP);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id,
			   struct rdma_cm_join_mc_attr_ex *mc_join_attr,
			   void *context)
{
	(void)id, (void)mc_join_attr, (void)context;
	return rc_err(-EOPNOTSUPP);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	return rc_err(-EOPNOTSUPP);
}

/* ECE (RDMACM_1.3): no options to offer; the local ones are taken and
 * not sent, the remote ones are none. */
int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return id && ece ? 0 : rc_err(-EINVAL);
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || !ece)
		return rc_err(-EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
		    uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

/* ---- rsockets: not built ------------------------------------------- */

/* The rsocket calls' answer: -1, errno ENOSYS. */
static int nosys(void)
{
	errno = ENOSYS;
	return -1;
}

int rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	return nosys();
}

int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int rlisten(int socket, int backlog)
{
	(void)socket, (void)backlog;
	return nosys();
}

int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int rshutdown(int socket, int how)
{
	(void)socket, (void)how;
	return nosys();
}

int rclose(int socket)
{
	(void)socket;
	return nosys();
}

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	return nosys();
}

ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
		  struct sockaddr *src_addr, socklen_t *addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)src_addr, (void)addrlen;
	return nosys();
}

ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	return nosys();
}

ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket, (void)buf, (void)len, (void)flags;
	return nosys();
}

ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	(void)socket, (void)buf, (void)len, (void)flags, (void)dest_addr, (void)addrlen;
	return nosys();
}

ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket, (void)msg, (void)flags;
	return nosys();
}

ssize_t rread(int socket, void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	return nosys();
}

ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	return nosys();
}

ssize_t rwrite(int socket, const void *buf, size_t count)
{
	(void)socket, (void)buf, (void)count;
	return nosys();
}

ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket, (void)iov, (void)iovcnt;
	return nosys();
}

int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket, (void)addr, (void)addrlen;
	return nosys();
}

int rsetsockopt(int socket, int level, int optname, const void *optval,
		socklen_t optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	return nosys();
}

int rgetsockopt(int socket, int level, int optname, void *optval,
		socklen_t *optlen)
{
	(void)socket, (void)level, (void)optname, (void)optval, (void)optlen;
	return nosys();
}

int rfcntl(int socket, int cmd, ...)
{
	(void)socket, (void)cmd;
	return nosys();
}

off_t riomap(int socket, void *buf, size_t len, int prot, int flags,
	     off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	return nosys();
}

int riounmap(int socket, void *buf, size_t len)
{
	(void)socket, (void)buf, (void)len;
	return nosys();
}

size_t riowrite(int socket, const void *buf, size_t count, off_t offset,
		int flags)
{
	(void)socket, (void)buf, (void)count, (void)offset, (void)flags;
	errno = ENOSYS;
	return 0;
}
