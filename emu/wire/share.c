/* SPDX-License-Identifier: MIT */
/* One address shared by many processes: slots, inboxes, service claims and forwarding (docs/sharing.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "rocemu/proto.h"
#include "share.h"

/* Marks a forwarded datagram's header: "RSH" and a version. */
enum { SHARE_MAGIC = 0x52534801u };

struct share_hdr {
	uint32_t magic;
	struct share_meta m;
};

/* The abstract socket address "\0<prefix>.<what>"; its length. */
static socklen_t abstract_addr(struct sockaddr_un *a, const char *prefix,
			       const char *what)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s.%s",
			 prefix, what);
	if (n < 0 || (size_t)n >= sizeof(a->sun_path) - 1)
		n = (int)sizeof(a->sun_path) - 2; /* cannot be: prefix is short */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)n);
}

/* A non-blocking datagram socket bound to "\0<prefix>.<what>", taking
 * its senders' credentials; -errno (-EADDRINUSE: another holds it). */
static int bind_name(const char *prefix, const char *what)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, prefix, what);
	int one = 1, buf = 4 << 20;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, len)) {
		int e = -errno;
		close(fd);
		return e;
	}
	/* a sender's uid comes with each datagram: only the same user's
	 * processes share an address (as SO_REUSEPORT demands) */
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	/* a burst for this process may come through another */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	return fd;
}

int share_open(struct share *s, const uint8_t gid[16])
{
	char text[INET6_ADDRSTRLEN] = "";

	memset(s, 0, sizeof(*s));
	s->inbox = -1;
	if (roce_gid_is_ipv4(gid))
		inet_ntop(AF_INET, gid + 12, text, sizeof(text));
	else
		inet_ntop(AF_INET6, gid, text, sizeof(text));
	snprintf(s->prefix, sizeof(s->prefix), "rocemu.%u.%s",
		 (unsigned)getuid(), text);
	for (unsigned k = 0; k < SHARE_SLOTS; k++) {
		char what[8];

		snprintf(what, sizeof(what), "%u", k);
		int fd = bind_name(s->prefix, what);
		if (fd == -EADDRINUSE)
			continue;
		if (fd < 0)
			return fd;
		s->inbox = fd;
		s->slot = (uint8_t)k;
		return 0;
	}
	return -EUSERS;
}

void share_close(struct share *s)
{
	share_reap(s);
	while (s->claims) {
		struct share_claim *c = s->claims;

		s->claims = c->next;
		close(c->fd);
		free(c);
	}
	if (s->inbox >= 0)
		close(s->inbox);
	s->inbox = -1;
}

static void svc_name(char *what, size_t size, uint64_t svc)
{
	snprintf(what, size, "svc.%016llx", (unsigned long long)svc);
}

static bool claims(const struct share *s, uint64_t svc)
{
	for (const struct share_claim *c = s->claims; c; c = c->next)
		if (c->svc == svc)
			return true;
	return false;
}

int share_claim(struct share *s, uint64_t svc)
{
	char what[32];

	if (claims(s, svc))
		return 0;
	for (struct share_claim **p = &s->retired; *p; p = &(*p)->next) {
		struct share_claim *c = *p;

		if (c->svc == svc) { /* its socket still holds the name */
			*p = c->next;
			c->next = s->claims;
			s->claims = c;
			return 0;
		}
	}
	struct share_claim *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	svc_name(what, sizeof(what), svc);
	c->fd = bind_name(s->prefix, what);
	if (c->fd < 0) {
		int e = c->fd;
		free(c);
		return e;
	}
	c->svc = svc;
	c->next = s->claims;
	s->claims = c;
	return 0;
}

void share_unclaim(struct share *s, uint64_t svc)
{
	for (struct share_claim **p = &s->claims; *p; p = &(*p)->next) {
		struct share_claim *c = *p;

		if (c->svc == svc) {
			*p = c->next;
			c->next = s->retired;
			s->retired = c;
			return;
		}
	}
}

void share_reap(struct share *s)
{
	while (s->retired) {
		struct share_claim *c = s->retired;

		s->retired = c->next;
		close(c->fd);
		free(c);
	}
}

/* To the process whose comm ID (or SIDR request ID) id is: its top byte. */
static struct share_route by_id(const struct share *s, uint32_t id)
{
	struct share_route r = { .slot = (uint8_t)(id >> 24) };

	r.here = !id || r.slot == s->slot;
	return r;
}

/* A MAD on QP1: a request to its service's claimant, the rest by the
 * receiver's comm ID; here when it is none of those. */
static struct share_route route_mad(const struct share *s, const uint8_t *p,
				    size_t len)
{
	struct share_route here = { .here = true };
	struct roce_cm_msg m;
	size_t off = ROCE_BTH_LEN + ROCE_DETH_LEN;

	if (len < off + ROCE_MAD_LEN ||
	    roce_cm_decode(p + off, ROCE_MAD_LEN, &m))
		return here;
	switch (m.attr_id) {
	case ROCE_CM_ATTR_REQ:
	case ROCE_CM_ATTR_SIDR_REQ: {
		uint64_t svc = m.attr_id == ROCE_CM_ATTR_REQ
				       ? m.req.service_id
				       : m.sidr_req.service_id;
		if (claims(s, svc))
			return here;
		return (struct share_route){ .to_svc = true, .svc = svc };
	}
	case ROCE_CM_ATTR_MRA:
		return by_id(s, m.mra.remote_comm_id);
	case ROCE_CM_ATTR_REJ:
		return by_id(s, m.rej.remote_comm_id);
	case ROCE_CM_ATTR_REP:
		return by_id(s, m.rep.remote_comm_id);
	case ROCE_CM_ATTR_RTU:
		return by_id(s, m.rtu.remote_comm_id);
	case ROCE_CM_ATTR_DREQ:
		return by_id(s, m.dreq.remote_comm_id);
	case ROCE_CM_ATTR_DREP:
		return by_id(s, m.drep.remote_comm_id);
	case ROCE_CM_ATTR_SIDR_REP:
		return by_id(s, m.sidr_rep.request_id);
	case ROCE_CM_ATTR_LAP:
		return by_id(s, m.lap.remote_comm_id);
	case ROCE_CM_ATTR_APR:
		return by_id(s, m.apr.remote_comm_id);
	default:
		return here;
	}
}

struct share_route share_route_of(const struct share *s, const uint8_t *p,
				  size_t len, uint32_t qpn_lo, uint32_t qpn_hi)
{
	struct share_route here = { .here = true };

	if (len < ROCE_BTH_LEN)
		return here;
	/* the BTH's DestQP: bytes 5..7 of the payload */
	uint32_t qpn = (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
	if (qpn == 1)
		return route_mad(s, p, len);
	if (p[5] == s->slot || (qpn >= qpn_lo && qpn <= qpn_hi))
		return here;
	return (struct share_route){ .slot = p[5] };
}

int share_forward(const struct share *s, const struct share_route *r,
		  const struct share_meta *m, const uint8_t *payload,
		  size_t len)
{
	struct share_hdr h = { .magic = SHARE_MAGIC, .m = *m };
	struct sockaddr_un a;
	char what[32];

	if (r->to_svc)
		svc_name(what, sizeof(what), r->svc);
	else
		snprintf(what, sizeof(what), "%u", r->slot);
	struct iovec iov[2] = { { &h, sizeof(h) },
				{ (void *)(uintptr_t)payload, len } };
	struct msghdr msg = { .msg_name = &a,
			      .msg_namelen = abstract_addr(&a, s->prefix, what),
			      .msg_iov = iov, .msg_iovlen = 2 };
	if (sendmsg(s->inbox, &msg, MSG_DONTWAIT) >= 0)
		return 0;
	/* an abstract name nobody holds: ECONNREFUSED (ENOENT on others) */
	return errno == ENOENT ? -ECONNREFUSED : -errno;
}

int share_receive(int fd, struct share_meta *m, uint8_t *buf, size_t cap)
{
	struct share_hdr h;
	struct iovec iov[2] = { { &h, sizeof(h) }, { buf, cap } };
	char ctl[CMSG_SPACE(sizeof(struct ucred))];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2,
			      .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
	bool mine = false;

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
	     c = CMSG_NXTHDR(&msg, c)) {
		struct ucred cr;

		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS) {
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			mine = cr.uid == getuid();
		}
	}
	if (!mine || (msg.msg_flags & MSG_TRUNC) ||
	    (size_t)n < sizeof(h) || h.magic != SHARE_MAGIC)
		return -EBADMSG;
	*m = h.m;
	return (int)((size_t)n - sizeof(h));
}
