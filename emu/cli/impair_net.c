/* SPDX-License-Identifier: MIT */
/* rocemu impair's sockets: bind each mode's, take a datagram in as a frame, send a frame on. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "impair.h"
#include "rocemu/datagram.h"
#include "rocemu/frame.h"
#include "rocemu/dissect.h"
#include "rocemu/ibhdr.h"

#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif

static void addr_text(const struct sockaddr_storage *ss, char *buf, size_t cap)
{
	uint8_t gid[16];
	char t[64];
	struct roce_sb sb;
	int port = roce_gid_from_sockaddr(ss, gid);

	roce_sb_init(&sb, t, sizeof(t));
	if (port < 0) {
		snprintf(buf, cap, "?");
		return;
	}
	roce_fmt_gid(&sb, gid);
	snprintf(buf, cap, "%.*s UDP port %d", (int)sb.len, t, port);
}

/* A non-blocking UDP socket bound to ss, set up as rocemu's own are:
 * DF on IPv4 (so the kernel sends ID 0, which the ICRC was computed
 * with), zero-checksum IPv6 taken (rxe sends it), no automatic flow
 * label, the TOS or traffic class of each datagram reported. */
static int bound(const struct sockaddr_storage *ss, char *err)
{
	int one = 1, zero = 0, pmtu = IP_PMTUDISC_DO;
	bool v6 = ss->ss_family == AF_INET6;
	socklen_t sl = v6 ? sizeof(struct sockaddr_in6)
			  : sizeof(struct sockaddr_in);
	char where[96];
	int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);

	addr_text(ss, where, sizeof(where));
	if (fd < 0) {
		snprintf(err, IMP_ERR_MAX, "socket for %s: %s", where,
			 strerror(errno));
		return -errno;
	}
	if (v6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_AUTOFLOWLABEL, &zero,
			   sizeof(zero));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)ss, sl)) {
		int e = errno;
		snprintf(err, IMP_ERR_MAX, "cannot bind %s: %s (%s)", where,
			 strerror(e), e == EADDRINUSE
			 ? "another rocemu, impair or rxe binds it: stop it or "
			   "pick another address"
			 : "use an address of this host");
		close(fd);
		return -e;
	}
	return fd;
}

int impair_bind(const struct impair_cfg *c, int fds[2], char *err)
{
	struct sockaddr_storage ss;

	fds[0] = fds[1] = -1;
	if (!c->eth) {
		roce_gid_to_sockaddr(c->relay_gid, ROCE_UDP_PORT, &ss);
		fds[0] = bound(&ss, err);
		return fds[0] < 0 ? fds[0] : 0;
	}
	fds[0] = bound(c->a_local, err);
	if (fds[0] < 0)
		return fds[0];
	fds[1] = bound(c->b_local, err);
	if (fds[1] < 0) {
		int e = fds[1];
		close(fds[0]);
		fds[0] = -1;
		return e;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t tos_of(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
			return *CMSG_DATA(c);
		if (c->cmsg_level == IPPROTO_IPV6 &&
		    c->cmsg_type == IPV6_TCLASS) {
			int v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return (uint8_t)v;
		}
	}
	return 0;
}

/* Mode ip: which endpoint sent it, as the direction it goes. */
static uint8_t dir_from(const struct impair_cfg *c, const uint8_t gid[16])
{
	if (!memcmp(gid, c->a_gid, 16))
		return IMP_DIR_AB;
	if (!memcmp(gid, c->b_gid, 16))
		return IMP_DIR_BA;
	return IMP_DIR_ANY;
}

/* Mode ip: the datagram in pay (n bytes) from ss as its frame. */
static int as_frame(const struct impair_cfg *c, struct roce_ipid_table *ids,
		    const struct sockaddr_storage *ss, uint8_t tos,
		    const uint8_t *pay, size_t n, uint8_t *frame, size_t cap,
		    uint8_t *dir, struct impair_stats *st)
{
	struct roce_datagram_addr a = { .tos = tos, .when_ns = now_ns() };
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX];
	struct roce_frame f;
	const char *why;
	int port = roce_gid_from_sockaddr(ss, a.src_gid);

	*dir = port < 0 ? IMP_DIR_ANY : dir_from(c, a.src_gid);
	if (!*dir) {
		st->stranger++;
		return 0;
	}
	a.sport = (uint16_t)port;
	memcpy(a.dst_gid, c->relay_gid, 16);
	if (roce_datagram_parse(&a, ids, pay, n, hdr, &f, &why)) {
		st->malformed++;
		return 0;
	}
	int len = roce_datagram_wrap(&f, pay, n, frame, cap);
	if (len <= 0) {
		st->malformed++;
		return 0;
	}
	return len;
}

int impair_recv(const struct impair_cfg *c, const int fds[2], int side,
		struct roce_ipid_table *ids, uint8_t *frame, size_t cap,
		uint8_t *dir, struct impair_stats *st)
{
	static uint8_t pay[65536];
	struct sockaddr_storage ss;
	char ctl[128];
	struct iovec iov = { c->eth ? frame : pay, c->eth ? cap : sizeof(pay) };
	struct msghdr m = { .msg_name = &ss, .msg_namelen = sizeof(ss),
			    .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(fds[side], &m, MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (c->eth) {
		*dir = side == 0 ? IMP_DIR_AB : IMP_DIR_BA;
		return (int)n;
	}
	return as_frame(c, ids, &ss, tos_of(&m), pay, (size_t)n, frame, cap,
			dir, st);
}

static int send_ip(const struct impair_cfg *c, int fd, uint8_t dir,
		   const uint8_t *frame, size_t len)
{
	struct roce_frame_udp u;
	struct sockaddr_storage ss;
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	int tos;

	if (roce_frame_find_udp(frame, len, &u))
		return -EINVAL;
	tos = u.tos;
	socklen_t sl = roce_gid_to_sockaddr(dir == IMP_DIR_AB ? c->b_gid
							      : c->a_gid,
					    ROCE_UDP_PORT, &ss);
	struct iovec iov = { (void *)(frame + roce_frame_udp_payload_off(&u)),
			     u.payload_len };
	struct msghdr m = { .msg_name = &ss, .msg_namelen = sl,
			    .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = u.ip_ver == 4 ? IPPROTO_IP : IPPROTO_IPV6;
	cm->cmsg_type = u.ip_ver == 4 ? IP_TOS : IPV6_TCLASS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &tos, sizeof(tos));
	return sendmsg(fd, &m, 0) < 0 ? -errno : 0;
}

int impair_send(const struct impair_cfg *c, const int fds[2], uint8_t dir,
		const uint8_t *frame, size_t len)
{
	if (!c->eth)
		return send_ip(c, fds[0], dir, frame, len);
	const struct sockaddr_storage *to = dir == IMP_DIR_AB ? c->b_peer
							      : c->a_peer;
	int fd = fds[dir == IMP_DIR_AB ? 1 : 0];
	socklen_t sl = to->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);
	return sendto(fd, frame, len, 0, (const struct sockaddr *)to, sl) < 0
		       ? -errno : 0;
}
