/* SPDX-License-Identifier: MIT */
/* conform's side of the wire: one UDP socket at ADDR:4791, every frame recorded in the session's pcap. */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/in6.h> /* after netinet/in.h: IPV6_FLOWINFO */
#include <netinet/udp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rocemu/datagram.h"
#include "conform.h"

enum { ROCE_PORT = 4791, FLOW_LABEL = 0xfffff };	/* an IPv6 flow label: 20 bits */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cf_wire_now_ns(const struct cf_wire *w)
{
	return mono_ns() - w->t0_ns;
}

/* The TTL or hop limit the kernel sends this socket's datagrams with
 * (its default: net.ipv4.ip_default_ttl, the route's hop limit); 64
 * when it does not say. */
static uint8_t sent_ttl(int fd, int family)
{
	int v = -1;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
		       family == AF_INET6 ? IPV6_UNICAST_HOPS : IP_TTL, &v, &l) ||
	    v < 1 || v > 255)
		return 64;
	return (uint8_t)v;
}

int cf_wire_open(struct cf_wire *w, const char *local, const char *pcap,
		 char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	int one = 1, pmtu = IP_PMTUDISC_DO;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->t0_ns = mono_ns();
	if (roce_gid_parse(local, w->local_gid)) {
		snprintf(err, errlen, "--local %s is not an IPv4 or IPv6 address", local);
		return -1;
	}
	socklen_t sl = roce_gid_to_sockaddr(w->local_gid, ROCE_PORT, &ss);
	w->fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (w->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* the capture shows the IP header of each datagram received as the
	 * kernel says it came: TOS/traffic class, TTL/hop limit, flow label */
	if (ss.ss_family == AF_INET6) {
		setsockopt(w->fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		setsockopt(w->fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
		setsockopt(w->fd, IPPROTO_IPV6, IPV6_FLOWINFO, &one, sizeof(one));
	} else {
		setsockopt(w->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		setsockopt(w->fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	}
	w->ttl = sent_ttl(w->fd, ss.ss_family);
	if (ss.ss_family == AF_INET6) {
		setsockopt(w->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		/* rxe sends RoCEv2 over IPv6 with UDP checksum 0 */
		setsockopt(w->fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one));
	} else {
		/* DF and IP ID 0 on every datagram: the header the ICRC of
		 * a built frame was computed over */
		setsockopt(w->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	}
	/* each datagram then says how many the socket dropped (docs/icrc.md) */
	setsockopt(w->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (bind(w->fd, (struct sockaddr *)&ss, sl)) {
		snprintf(err, errlen, "bind %s port %d: %s%s", local, ROCE_PORT,
			 strerror(errno), errno == EADDRINUSE ?
			 " (another RoCEv2 device or rocemu uses it: pick another --local)" :
			 errno == EADDRNOTAVAIL ? " (no interface has this address)" : "");
		close(w->fd);
		w->fd = -1;
		return -1;
	}
	if (pcap) {
		char perr[256] = "";
		if (roce_pcap_create(pcap, &w->pcap, perr)) {
			snprintf(err, errlen, "%s: %s", pcap, perr);
			cf_wire_close(w);
			return -1;
		}
	}
	return 0;
}

void cf_wire_close(struct cf_wire *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->pcap)
		roce_pcap_finish(w->pcap);
	w->pcap = NULL;
}

int cf_wire_send(struct cf_wire *w, const uint8_t *frame, size_t len)
{
	struct roce_frame_udp u;
	struct sockaddr_storage ss;

	int rc = roce_frame_find_udp(frame, len, &u);
	if (rc)
		return rc;
	socklen_t sl = roce_gid_to_sockaddr(w->peer_gid, ROCE_PORT, &ss);
	if (sendto(w->fd, frame + roce_frame_udp_payload_off(&u), u.payload_len, 0,
		   (struct sockaddr *)&ss, sl) < 0)
		return -errno;
	w->sent++;
	if (w->pcap)
		roce_pcap_write(w->pcap, cf_wire_now_ns(w), frame, len);
	return 0;
}

/* Whether a datagram came from the device under test's address. */
static bool from_peer(const struct cf_wire *w, const struct sockaddr_storage *src)
{
	uint8_t gid[16];

	return roce_gid_from_sockaddr(src, gid) >= 0 &&
	       !memcmp(gid, w->peer_gid, 16);
}

/* f's TTL (hop limit) as the kernel said the datagram came with. The
 * parse wrote the default; an IPv4 header checksum it solved for is
 * mended as RFC 1624 does for one changed 16-bit word (TTL, protocol),
 * one it left 0 stays 0. The ICRC does not cover the TTL. */
static void set_ttl(struct roce_frame *f, uint8_t ttl)
{
	if (f->ip_ver == 4 && f->ip_csum) {
		uint32_t s = (uint16_t)~f->ip_csum + (uint16_t)~(f->ttl << 8 | 17u) +
			     (uint32_t)(ttl << 8 | 17u);
		s = (s & 0xffff) + (s >> 16);
		s = (s & 0xffff) + (s >> 16);
		f->ip_csum = (uint16_t)~s;
	}
	f->ttl = ttl;
}

/* Parses the datagram in p->buf from src and records it. */
static void take(struct cf_wire *w, struct cf_packet *p,
		 const struct sockaddr_storage *src)
{
	struct roce_datagram_addr a = { .sport = 0 };
	/* only from_peer()'s families get here; another leaves :: and 0 */
	int sport = roce_gid_from_sockaddr(src, a.src_gid);

	a.sport = sport > 0 ? (uint16_t)sport : 0;
	memcpy(a.dst_gid, w->local_gid, 16);
	a.when_ns = mono_ns();
	a.drops = w->drops;
	a.tos = w->rx_tos;
	a.flow_label = w->rx_flow;
	p->why = NULL;
	p->parse_rc = roce_datagram_parse(&a, &w->ids, p->buf, p->len, p->hdr,
					  &p->f, &p->why);
	if (w->rx_ttl >= 0)
		set_ttl(&p->f, (uint8_t)w->rx_ttl);
	p->icrc_ok = p->parse_rc == 0 && roce_frame_icrc_ok(&p->f);
	p->t_ns = cf_wire_now_ns(w);
	w->received++;
	if (w->pcap) {
		static uint8_t eth[ROCE_FRAME_MAX];
		int n = roce_datagram_wrap(&p->f, p->buf, p->len, eth, sizeof(eth));
		if (n > 0)
			roce_pcap_write(w->pcap, p->t_ns, eth, (size_t)n);
	}
}

/* One datagram into p->buf from *src, and the socket's drop count (what
 * the ICRC's IPv4 ID window widens by, docs/icrc.md) into w->drops. */
static ssize_t recv_one(struct cf_wire *w, struct cf_packet *p,
			struct sockaddr_storage *src)
{
	struct iovec iov = { p->buf, sizeof(p->buf) };
	char ctl[4 * CMSG_SPACE(sizeof(uint32_t))];
	struct msghdr m = { .msg_name = src, .msg_namelen = sizeof(*src),
			    .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(w->fd, &m, MSG_DONTWAIT);

	w->rx_tos = 0;
	w->rx_ttl = -1;
	w->rx_flow = 0;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c;
	     c = CMSG_NXTHDR(&m, c)) {
		int v;
		uint32_t fl;
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			memcpy(&w->drops, CMSG_DATA(c), sizeof(w->drops));
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			w->rx_tos = *CMSG_DATA(c);	/* one byte */
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			w->rx_ttl = v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			w->rx_tos = (uint8_t)v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			w->rx_ttl = v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_FLOWINFO) {
			memcpy(&fl, CMSG_DATA(c), sizeof(fl));
			w->rx_flow = ntohl(fl) & FLOW_LABEL;
		}
	}
	return n;
}

int cf_wire_recv(struct cf_wire *w, struct cf_packet *p, int timeout_ms)
{
	uint64_t until = mono_ns() + (uint64_t)timeout_ms * 1000000u;

	for (;;) {
		uint64_t now = mono_ns();
		int left = now >= until ? 0 : (int)((until - now + 999999) / 1000000);
		struct pollfd pf = { .fd = w->fd, .events = POLLIN };
		int rc = poll(&pf, 1, left);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc <= 0) {
			if (now >= until)
				return 0;
			continue;
		}
		struct sockaddr_storage src;
		ssize_t n = recv_one(w, p, &src);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if (!from_peer(w, &src)) {	/* not the device under test */
			w->foreign++;
			continue;
		}
		p->len = (size_t)n;
		take(w, p, &src);
		return 1;
	}
}
