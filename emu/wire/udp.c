/* SPDX-License-Identifier: MIT */
/* The UDP wire: a socket per port at its address, port 4791 (shared with the other processes there), and a source socket per QP port. */
#include <errno.h>
#include <ifaddrs.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/in6.h> /* after netinet/in.h: the flow label manager */
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "share.h"
#include "wire.h"

enum { RX_BATCH = 32, RX_BUF = 9216 };
/* A GRO batch is one datagram of up to 64 KiB. */
enum { RX_BUF_GRO = 65536 };
/* The kernel's limits on one GSO send: UDP_MAX_SEGMENTS, and the
 * datagram's 16-bit length. */
enum { GSO_MAX_SEGS = 64, GSO_MAX_BYTES = 65000 };
/* Batches one pass takes from a socket: a stream of responses must not
 * keep the engines from sending (a retry among what they send). */
enum { RX_PASS = 8 };

/* A source socket: its port, and whether it is bound to the port's
 * link-local address (GID 0) rather than its own. */
/* Datagrams to its own address a process remembers it sent (a power of
 * two): room for the ones in flight to itself. */
enum { SELF_SENT = 4096 };

struct tx_sock {
	UT_hash_handle hh;
	uint32_t key;		/* port | TX_KEY_LL */
	int fd;
};
enum { TX_KEY_LL = 1u << 16 };

/* An IPv6 flow label a socket may send with (the kernel's flow label
 * manager lends it per socket), or was refused. */
struct flow_grant {
	UT_hash_handle hh;
	uint64_t key;		/* fd << 32 | label */
	bool ok;
};

/*
 * A device's transmit queue: datagrams in the order the engines made
 * them, each with the socket of its source port. sendmmsg takes runs of
 * them from one socket; what a full socket buffer refuses stays queued
 * until the socket polls writable. Over TX_HIGH the engines make no more
 * packets that can wait (requests, READ responses); the rest of the ring
 * is room for the ACKs and NAKs that answer what arrives meanwhile.
 */
enum { TX_RING = 512, TX_HIGH = 128, TX_BATCH = 64 };

struct tx_batch {
	uint32_t head, tail;		/* free-running, as in ring.h */
	int blocked_fd;			/* refused the head; -1 if none */
	int fd[TX_RING];
	bool local[TX_RING];		/* to a loopback address */
	bool v6[TX_RING];		/* an IPv6 datagram */
	uint8_t tos[TX_RING];		/* its IPv4 TOS or IPv6 traffic class */
	uint8_t *frame[TX_RING];	/* owned until sent */
	struct iovec iov[TX_RING];
	struct sockaddr_storage to[TX_RING];
	struct mmsghdr msg[TX_RING];
	/* a GSO send's segment size and the TOS, at its first datagram's
	 * slot */
	char ctl[TX_RING][CMSG_SPACE(sizeof(uint16_t)) +
			  CMSG_SPACE(sizeof(int))];
};

/* A device's port on the UDP wire. */
struct udp_port {
	struct wire_port p;	/* first: a wire_port * is one of these */
	int fd;			/* bound to the GID's address, port 4791 */
	int ll_fd;		/* bound to p.ll_gid, port 4791; -1 if none */
	uint32_t scope;		/* the interface's index, for link-local peers */
	bool gso;		/* loopback sends go in GSO batches */
	size_t rx_buf;		/* bytes per receive buffer */
	/* The IPv4 IDs expected of each sender (docs/icrc.md); used on the
	 * receive path only, which the world's lock serialises */
	struct roce_ipid_table ids;
	uint32_t drops;		/* the socket's drop count, as last told */
	uint8_t rx_tos;		/* the TOS of the message being read */
	uint32_t rx_flow;	/* and its IPv6 flow label */
	struct flow_grant *grants;	/* flow labels asked of the kernel */
	uint8_t *rx;		/* receive buffers */
	struct tx_batch *tx;	/* datagrams to send */
	struct tx_sock *socks;	/* one per source port */
	struct share sh;	/* its slot, inbox and service claims */
	/* The ICRCs of the datagrams this process sent to its own address,
	 * by their low bits: what arrives from that address is another
	 * process's (one sharing it) unless its ICRC is here, and the tap
	 * records only those (it saw this process's own at send). */
	uint32_t self_sent[SELF_SENT];
};

static struct udp_port *udp_of(const struct wire_port *p)
{
	return (struct udp_port *)(uintptr_t)p;
}

static uint32_t tx_used(const struct tx_batch *b)
{
	return b->tail - b->head;
}

/* Frees the n oldest datagrams. */
static void tx_release(struct wire *w, struct tx_batch *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		frame_free(&w->core->frames,
			   b->frame[(b->head + i) & (TX_RING - 1)]);
	b->head += n;
}

/*
 * How many datagrams from ring slot i, of the run of k that share its
 * socket, go in one GSO send: all to the same loopback address, all of the
 * first one's length but a last that may be shorter, within the kernel's
 * limits. 1 when they cannot.
 */
static uint32_t gso_group(const struct tx_batch *b, uint32_t i, uint32_t k)
{
	size_t seg = b->iov[i].iov_len, total = seg;
	socklen_t alen = b->msg[i].msg_hdr.msg_namelen;
	uint32_t n = 1;

	if (!b->local[i])
		return 1;
	while (n < k && n < GSO_MAX_SEGS) {
		size_t len = b->iov[i + n].iov_len;
		if (len > seg || total + len > GSO_MAX_BYTES ||
		    b->tos[i + n] != b->tos[i] ||
		    b->msg[i + n].msg_hdr.msg_namelen != alen ||
		    memcmp(&b->to[i + n], &b->to[i], alen))
			break;
		total += len;
		n++;
		if (len < seg)	/* only the last may be shorter */
			break;
	}
	return n;
}

/* Appends a control message of len bytes to m's control buffer. */
static void add_cmsg(struct msghdr *m, int level, int type, const void *data,
		     size_t len)
{
	struct cmsghdr *c = (struct cmsghdr *)(void *)((char *)m->msg_control +
						       m->msg_controllen);

	memset(c, 0, CMSG_SPACE(len));
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	m->msg_controllen += CMSG_SPACE(len);
}

/*
 * The message of one send from slot i carrying n datagrams: the segment
 * size goes in a control message when there are several, and a TOS (the
 * address handle's traffic class) in another, so that the IP header the
 * kernel writes carries it as rxe's does.
 */
static struct msghdr send_msg(struct tx_batch *b, uint32_t i, uint32_t n)
{
	struct msghdr m = b->msg[i].msg_hdr;
	int tos = b->tos[i];

	m.msg_control = b->ctl[i];
	m.msg_controllen = 0;
	if (n > 1) {
		uint16_t seg = (uint16_t)b->iov[i].iov_len;

		m.msg_iovlen = n;
		add_cmsg(&m, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg));
	}
	if (tos)
		add_cmsg(&m, b->v6[i] ? IPPROTO_IPV6 : IPPROTO_IP,
			 b->v6[i] ? IPV6_TCLASS : IP_TOS, &tos, sizeof(tos));
	if (!m.msg_controllen)
		m.msg_control = NULL;
	return m;
}

/*
 * Sends the k datagrams from slot i (one socket) in as few sends as the
 * port's GSO allows; returns how many datagrams went, or -errno of the
 * first send. A GSO send the kernel refuses turns GSO off for the port
 * and nothing is lost: the datagrams go one by one on the next try.
 */
static int send_run(struct wire *w, struct udp_port *u, uint32_t i,
		    uint32_t k)
{
	struct tx_batch *b = u->tx;
	struct mmsghdr out[TX_BATCH];
	uint32_t segs[TX_BATCH], n = 0, j = 0;

	while (j < k && n < TX_BATCH) {
		segs[n] = u->gso ? gso_group(b, i + j, k - j) : 1;
		out[n].msg_hdr = send_msg(b, i + j, segs[n]);
		j += segs[n++];
	}
	int sent = sendmmsg(b->fd[i], out, n, 0);
	if (sent < 0 && segs[0] > 1 && errno != EAGAIN &&
	    errno != EWOULDBLOCK && errno != EINTR) {
		u->gso = false;
		return 0;
	}
	if (sent < 0)
		return -errno;
	uint32_t done = 0;
	for (int g = 0; g < sent; g++) {
		done += segs[g];
		w->gso_sends += segs[g] > 1;
	}
	return (int)done;
}

/* Sends from the head while the sockets take it; true if all went. */
static bool tx_flush(struct wire *w, struct udp_port *u)
{
	struct tx_batch *b = u->tx;

	b->blocked_fd = -1;
	while (tx_used(b)) {
		uint32_t i = b->head & (TX_RING - 1), k = 1;
		uint32_t run = TX_RING - i; /* to the end of the ring */
		if (run > tx_used(b))
			run = tx_used(b);
		while (k < run && b->fd[i + k] == b->fd[i])
			k++;
		int sent = send_run(w, u, i, k);
		if (sent == -EAGAIN || sent == -EWOULDBLOCK) {
			b->blocked_fd = b->fd[i]; /* wait for POLLOUT */
			return false;
		}
		if (sent == -EINTR)
			continue;
		if (sent < 0) {
			/* refused for good (no route, too big): that one
			 * datagram is lost, as on a wire, and counted as
			 * rxe counts it (send_err) */
			w->dropped++;
			if (u->p.send_err)
				(*u->p.send_err)++;
			sent = 1;
		}
		tx_release(w, b, (uint32_t)sent);
	}
	return true;
}

static bool udp_flush(struct wire *w)
{
	struct wire_port *p, *tmp;
	bool all = true;

	HASH_ITER(hh, w->ports, p, tmp)
		if (tx_used(udp_of(p)->tx))
			all &= tx_flush(w, udp_of(p));
	return all;
}

static bool udp_busy(const struct wire *w, const struct wire_port *p)
{
	(void)w;
	return tx_used(udp_of(p)->tx) >= TX_HIGH;
}

/* True for 127.0.0.0/8 and ::1: what goes there never leaves the host. */
static bool gid_is_loopback(const uint8_t gid[16])
{
	static const uint8_t one[16] = { [15] = 1 };

	if (roce_gid_is_ipv4(gid))
		return gid[12] == 127;
	return memcmp(gid, one, 16) == 0;
}

/* The index of the interface that holds the IPv6 address a, 0 if none
 * does: a link-local address is bound only with it (EINVAL without). */
static uint32_t scope_of(const struct in6_addr *a)
{
	struct ifaddrs *list, *i;
	uint32_t scope = 0;

	if (getifaddrs(&list))
		return 0;
	for (i = list; i && !scope; i = i->ifa_next) {
		const struct sockaddr_in6 *s = (const void *)i->ifa_addr;
		if (s && s->sin6_family == AF_INET6 &&
		    IN6_ARE_ADDR_EQUAL(&s->sin6_addr, a))
			scope = s->sin6_scope_id;
	}
	freeifaddrs(list);
	return scope;
}

/*
 * The kernel's steering among the sockets of one address (docs/sharing.md):
 * the destination QPN's top byte, the BTH's byte 5 (the program sees the
 * UDP payload), picks the group's socket of that number, which is the
 * process of that slot while none has left; one past the group's size
 * makes the kernel hash instead. Forwarding corrects what it misses.
 */
static void steer(int fd)
{
	static struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 5),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_fprog f = { .len = 2, .filter = prog };
	const char *v = getenv("ROCEMU_STEER");

	if (v && !strcmp(v, "0"))
		return; /* hashing only: to measure what steering saves */
	setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &f, sizeof(f));
}

/* A non-blocking socket bound to gid:port, shared with the same user's
 * other processes if share; -errno if it cannot be. */
static int bound_socket(const uint8_t gid[16], uint16_t port, bool share)
{
	struct sockaddr_storage ss;
	socklen_t sl = roce_gid_to_sockaddr(gid, port, &ss);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, zero = 0, pmtu = IP_PMTUDISC_DO;

	if (fd < 0)
		return -errno;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		/* Linux rxe sends RoCEv2 over IPv6 with UDP checksum 0, which
		 * a socket drops unless told to take it (RFC 6935, 6936: zero
		 * checksums for tunnels); the ICRC still covers the packet. */
		setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one));
		/* No flow label but the AH's (rxe sends 0): the kernel's
		 * automatic one would differ from the frame as built and
		 * captured. */
		setsockopt(fd, IPPROTO_IPV6, IPV6_AUTOFLOWLABEL, &zero,
			   sizeof(zero));
		/* Sends to link-local peers leave by the bound interface. */
		if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr))
			a->sin6_scope_id = scope_of(&a->sin6_addr);
	} else { /* DF on every datagram, as rxe sends them */
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	}
	if (share)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl)) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (share)
		steer(fd);
	return fd;
}

/*
 * The interface that holds the IPv6 address gid: its index into *scope
 * and a link-local address it has into ll: gid itself if link-local, else
 * the first (the kernel makes it from the MAC, EUI-64, as rxe makes GID
 * 0). False if no interface holds gid or it has no link-local address
 * (loopback).
 */
static bool find_link_local(const uint8_t gid[16], uint32_t *scope,
			    uint8_t ll[16])
{
	struct ifaddrs *list, *i;
	const char *name = NULL;
	bool found = false;

	if (getifaddrs(&list))
		return false;
	for (i = list; i && !name; i = i->ifa_next) {
		const struct sockaddr_in6 *s = (const void *)i->ifa_addr;
		if (s && s->sin6_family == AF_INET6 &&
		    !memcmp(&s->sin6_addr, gid, 16))
			name = i->ifa_name;
	}
	for (i = list; i && name && !found; i = i->ifa_next) {
		const struct sockaddr_in6 *s = (const void *)i->ifa_addr;
		if (s && s->sin6_family == AF_INET6 &&
		    !strcmp(i->ifa_name, name) &&
		    IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr)) {
			memcpy(ll, IN6_IS_ADDR_LINKLOCAL((const void *)gid)
					   ? gid : (const uint8_t *)&s->sin6_addr,
			       16);
			*scope = if_nametoindex(name);
			found = *scope != 0;
		}
	}
	freeifaddrs(list);
	return found;
}

/* Gives an IPv6 port its interface's link-local address as GID 0, with a
 * socket bound to it unless that is the port's own address. Without one
 * (IPv4, loopback, an address not bound yet) the port has none. */
static void attach_link_local(struct udp_port *u)
{
	u->ll_fd = -1;
	if (roce_gid_is_ipv4(u->p.gid) ||
	    !find_link_local(u->p.gid, &u->scope, u->p.ll_gid))
		return;
	if (memcmp(u->p.ll_gid, u->p.gid, 16)) {
		u->ll_fd = bound_socket(u->p.ll_gid, ROCE_UDP_PORT, true);
		if (u->ll_fd < 0) {
			u->ll_fd = -1;
			return;
		}
	}
	u->p.has_ll = true;
}

/* Asks fd's datagrams to carry their IPv4 TOS or IPv6 traffic class. */
static void recv_tos(int fd, const uint8_t gid[16])
{
	int one = 1;

	if (roce_gid_is_ipv4(gid)) {
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		/* and the flow label, for the receiver's GRH */
		setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO, &one, sizeof(one));
	}
}

static int udp_attach(struct wire *w, const uint8_t gid[16],
		      struct wire_port **port)
{
	int rcvbuf = 4 << 20;

	if (wire_port_find(w, gid))
		return -EEXIST;
	struct udp_port *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	/* The slot first, then the socket: while processes come one at a
	 * time, the group numbers their sockets as their slots. */
	int rc = share_open(&u->sh, gid);
	u->fd = rc ? rc : bound_socket(gid, ROCE_UDP_PORT, true);
	if (u->fd < 0) {
		rc = u->fd;
		share_close(&u->sh);
		free(u);
		return rc;
	}
	u->p.slot = u->sh.slot;
	memcpy(u->p.gid, gid, 16);
	attach_link_local(u);
	/* GRO is asked for only with GSO: what it merges is what a GSO
	 * send batched, which loopback delivers whole. */
	int one = 1;
	u->gso = w->offload;
	u->rx_buf = u->gso && !setsockopt(u->fd, SOL_UDP, UDP_GRO, &one,
					  sizeof(one)) ? RX_BUF_GRO : RX_BUF;
	u->rx = malloc((size_t)RX_BATCH * u->rx_buf);
	u->tx = calloc(1, sizeof(*u->tx));
	if (!u->rx || !u->tx) {
		free(u->rx);
		free(u->tx);
		if (u->ll_fd >= 0)
			close(u->ll_fd);
		close(u->fd);
		share_close(&u->sh);
		free(u);
		return -ENOMEM;
	}
	u->tx->blocked_fd = -1;
	/* Bursts of a whole send window arrive at once; the kernel caps
	 * this at net.core.rmem_max. */
	setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* Each datagram tells how many the socket dropped so far: a burst
	 * that overran it moved the sender's IPv4 ID that far (docs/icrc.md) */
	setsockopt(u->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* ...and its TOS or traffic class: the receiver's GRH shows the
	 * sender's (its AH's traffic class) */
	recv_tos(u->fd, gid);
	if (u->ll_fd >= 0) {
		setsockopt(u->ll_fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
		recv_tos(u->ll_fd, gid);
	}
	wire_port_add(w, &u->p);
	*port = &u->p;
	return 0;
}

static void udp_detach(struct wire *w, struct wire_port *p)
{
	struct udp_port *u = udp_of(p);
	struct tx_sock *t, *tmp;

	if (!tx_flush(w, u)) {
		/* what the socket will not take now goes with the device */
		w->dropped += tx_used(u->tx);
		tx_release(w, u->tx, tx_used(u->tx));
	}
	struct flow_grant *g, *gtmp;

	HASH_ITER(hh, u->socks, t, tmp) {
		HASH_DEL(u->socks, t);
		if (t->fd != u->fd && t->fd != u->ll_fd)
			close(t->fd);
		free(t);
	}
	HASH_ITER(hh, u->grants, g, gtmp) {
		HASH_DEL(u->grants, g);
		free(g);
	}
	wire_port_del(w, p);
	close(u->fd);
	if (u->ll_fd >= 0)
		close(u->ll_fd);
	share_close(&u->sh);
	free(u->rx);
	free(u->tx);
	free(u);
}

/* The socket that sends from src (GID 1 or the link-local GID 0) and
 * port: each QP's port of its own on either GID, as rxe sends; the
 * address's own socket (4791) if that port cannot be had, in which case
 * *port changes to 4791. */
static int tx_socket(struct udp_port *u, const uint8_t src[16], uint16_t *port)
{
	bool ll = u->ll_fd >= 0 && !memcmp(src, u->p.ll_gid, 16);
	int own = ll ? u->ll_fd : u->fd;
	uint32_t key = *port | (ll ? TX_KEY_LL : 0);
	struct tx_sock *t;

	if (*port == ROCE_UDP_PORT) /* another socket there would share
				     * the arrivals */
		return own;
	HASH_FIND(hh, u->socks, &key, sizeof(key), t);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return own;
		t->key = key;
		t->fd = bound_socket(ll ? u->p.ll_gid : u->p.gid, *port, false);
		if (t->fd < 0)
			t->fd = own;
		HASH_ADD(hh, u->socks, key, sizeof(t->key), t);
	}
	if (t->fd == own)
		*port = ROCE_UDP_PORT;
	return t->fd;
}

/*
 * True if socket fd may send with IPv6 flow label fl: the kernel sends
 * only labels its flow label manager has lent the socket (any user may
 * borrow one, shared with every socket). Asked once per socket and
 * label; a refusal (another user holds fl exclusively) is remembered.
 * The kernel wants a destination with the label (to show in
 * /proc/net/ip6_flowlabel; it routes by the datagram's own): dst's.
 */
static bool flow_label_lent(struct udp_port *u, int fd, uint32_t fl,
			    const uint8_t dst[16])
{
	uint64_t key = (uint64_t)(uint32_t)fd << 32 | fl;
	struct flow_grant *g;

	HASH_FIND(hh, u->grants, &key, sizeof(key), g);
	if (g)
		return g->ok;
	struct in6_flowlabel_req r = { .flr_label = htonl(fl),
				       .flr_action = IPV6_FL_A_GET,
				       .flr_flags = IPV6_FL_F_CREATE,
				       .flr_share = IPV6_FL_S_ANY };
	int one = 1;

	memcpy(&r.flr_dst, dst, 16);
	g = calloc(1, sizeof(*g));
	if (!g)
		return false;
	g->key = key;
	g->ok = !setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO_SEND, &one,
			    sizeof(one)) &&
		!setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &r, sizeof(r));
	HASH_ADD(hh, u->grants, key, sizeof(g->key), g);
	return g->ok;
}

/* The socket address of gid, port 4791, into ss; its length. A link-local
 * peer is reached through the port's interface, as rxe reaches one
 * through its netdev. */
static socklen_t to_sockaddr(const struct udp_port *u, const uint8_t gid[16],
			     struct sockaddr_storage *ss)
{
	socklen_t len = roce_gid_to_sockaddr(gid, ROCE_UDP_PORT, ss);
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr))
		a->sin6_scope_id = u->scope;
	return len;
}

/* The ICRC of a UDP payload (its last four bytes, an opaque key here). */
static uint32_t icrc_key(const uint8_t *payload, size_t len)
{
	uint32_t k = 0;

	if (len >= sizeof(k))
		memcpy(&k, payload + len - sizeof(k), sizeof(k));
	return k;
}

static void remember_self_sent(struct udp_port *u, const uint8_t *payload,
			       size_t len)
{
	uint32_t k = icrc_key(payload, len);

	u->self_sent[k & (SELF_SENT - 1)] = k;
}

/* True if this process sent the datagram (to its own address): told once,
 * as it arrives once. */
static bool self_sent(struct udp_port *u, const uint8_t *payload, size_t len)
{
	uint32_t k = icrc_key(payload, len), *slot = &u->self_sent[k & (SELF_SENT - 1)];

	if (*slot != k)
		return false;
	*slot = ~k; /* not k: taken */
	return true;
}

/* Queues a built frame's UDP payload to go from its source port to its
 * destination's port 4791; the queue frees the frame once sent. */
static void udp_send(struct wire *w, struct wire_port *from, uint8_t *frame,
		     size_t len)
{
	struct roce_frame_udp f;

	/* Injected frames need a port to go from, and every frame a UDP
	 * datagram to send: others are lost, and counted. */
	if (!from || roce_frame_find_udp(frame, len, &f)) {
		w->dropped++;
		frame_free(&w->core->frames, frame);
		return;
	}
	struct udp_port *u = udp_of(from);
	uint16_t port = f.sport;
	int fd = tx_socket(u, f.src_gid, &port);
	if (port != f.sport) /* sent from another port, which the ICRC covers */
		roce_frame_set_sport(frame, len, port);
	struct tx_batch *b = u->tx;
	/* Sent a batch at a time; the world sends the rest after each pass. */
	if (b->blocked_fd < 0 && tx_used(b) >= TX_BATCH)
		tx_flush(w, u);
	if (tx_used(b) == TX_RING) {
		w->dropped++; /* a full ring: lost, and counted */
		frame_free(&w->core->frames, frame);
		return;
	}
	uint32_t i = b->tail & (TX_RING - 1);
	b->fd[i] = fd;
	b->local[i] = gid_is_loopback(f.dst_gid);
	b->v6[i] = f.ip_ver == 6;
	b->tos[i] = f.tos;
	b->frame[i] = frame;
	b->iov[i] = (struct iovec){ frame + roce_frame_udp_payload_off(&f),
				    f.payload_len };
	b->msg[i].msg_hdr = (struct msghdr){
		.msg_name = &b->to[i],
		.msg_namelen = to_sockaddr(u, f.dst_gid, &b->to[i]),
		.msg_iov = &b->iov[i], .msg_iovlen = 1 };
	if (wire_port_find(w, f.dst_gid))
		remember_self_sent(u, frame + roce_frame_udp_payload_off(&f),
				   f.payload_len);
	/* The AH's flow label, where the kernel lends it; the frame (and a
	 * capture of it) says what the wire then carries. */
	if (f.flow_label && f.ip_ver == 6) {
		if (flow_label_lent(u, fd, f.flow_label, f.dst_gid))
			((struct sockaddr_in6 *)&b->to[i])->sin6_flowinfo =
				htonl(f.flow_label);
		else
			w->flow_labels_refused++;
	}
	b->tail++;
}

/*
 * Sends a datagram that arrived at u to the process that owns it, if that
 * is another (docs/sharing.md); true if it went (or was lost to a full
 * inbox, counted), false if this process is to take it.
 */
static bool forwarded(struct wire *w, struct udp_port *u,
		      const struct share_meta *m, const uint8_t *payload,
		      size_t len)
{
	struct share_route r = share_route_of(&u->sh, payload, len,
					      u->p.qpn_lo, u->p.qpn_hi);

	if (r.here)
		return false;
	int rc = share_forward(&u->sh, &r, m, payload, len);
	if (rc == -ECONNREFUSED) {
		/* No process holds it. A request for a service nobody
		 * claims: this one answers (REJ, no listener). To a slot
		 * whose process is gone (or noise): counted, and this device
		 * drops it as it drops any datagram to a QP it lacks, so a
		 * dead process's QPs answer nothing, as a dead NIC's. */
		w->fwd_no_owner += !r.to_svc;
		return false;
	}
	if (rc == 0)
		w->fwd_out++;
	else
		w->dropped++; /* its inbox is full: lost, as on a wire */
	return true;
}

/* Hands up one datagram that arrived at u (m: where from, when), parsed
 * once; one from the socket goes to its owner instead if that is another
 * process, one from the inbox (inbox true) never again. */
static void deliver_datagram(struct wire *w, struct udp_port *u,
			     const struct share_meta *m, bool inbox,
			     const uint8_t *payload, size_t len,
			     wire_deliver_fn fn, void *arg)
{
	struct roce_datagram_addr a = { .drops = u->drops, .tos = m->tos,
					.flow_label = m->flow_label };
	uint8_t hdr[ROCE_DATAGRAM_HDR_MAX]; /* the GRH of a UD receive */
	struct roce_frame f;
	struct wire_rx rx = { .f = &f, .why = "", .bytes = payload, .len = len,
			      .datagram = true };

	/* the sockets are AF_INET or AF_INET6, so src is too; another
	 * family would leave src_gid :: and the port 0, a stranger */
	if (!inbox && forwarded(w, u, m, payload, len))
		return;
	int sport = roce_gid_from_sockaddr(&m->src, a.src_gid);

	a.sport = sport > 0 ? (uint16_t)sport : 0;
	memcpy(a.dst_gid, m->dst_gid, 16);
	memcpy(a.dst_mac, u->p.mac, 6);
	a.when_ns = m->when_ns;
	/* What this process's own ports sent, the tap has seen at send;
	 * another process on the same address sends from it too. */
	rx.from_outside = wire_port_find(w, a.src_gid) == NULL ||
			  !self_sent(u, payload, len);
	rx.rc = roce_datagram_parse(&a, &u->ids, payload, len, hdr, &f,
				    &rx.why);
	fn(arg, &u->p, &rx);
}

/* The segment size of a GRO batch from its control message (0 if the
 * datagram is a single one); the socket's drop count (SO_RXQ_OVFL) into
 * u->drops where the message carries it, its TOS or traffic class into
 * u->rx_tos (0 without), an IPv6 flow label into u->rx_flow (0 without). */
static size_t read_cmsgs(struct udp_port *u, struct msghdr *m)
{
	size_t seg = 0;

	u->rx_tos = 0;
	u->rx_flow = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			seg = v > 0 ? (size_t)v : 0;
		} else if (c->cmsg_level == SOL_SOCKET &&
			   c->cmsg_type == SO_RXQ_OVFL) {
			memcpy(&u->drops, CMSG_DATA(c), sizeof(u->drops));
		} else if (c->cmsg_level == IPPROTO_IP &&
			   c->cmsg_type == IP_TOS) {
			u->rx_tos = *CMSG_DATA(c); /* one byte */
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_TCLASS) {
			int v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			u->rx_tos = (uint8_t)v;
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_FLOWINFO) {
			uint32_t v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			u->rx_flow = ntohl(v) & ROCE_FLOW_LABEL_MASK;
		}
	}
	return seg;
}

/* Hands up the datagrams of one received message: a GRO batch is cut at
 * its segment size, each piece being one datagram as sent. */
static void deliver_message(struct wire *w, struct udp_port *u,
			    const uint8_t dst_gid[16],
			    const struct sockaddr_storage *src,
			    struct msghdr *m, size_t len,
			    wire_deliver_fn fn, void *arg)
{
	const uint8_t *p = m->msg_iov->iov_base;
	size_t seg = read_cmsgs(u, m);
	/* real time: set as each pass begins */
	struct share_meta meta = { .src = *src, .when_ns = w->core->now,
				   .tos = u->rx_tos, .flow_label = u->rx_flow };

	memcpy(meta.dst_gid, dst_gid, 16);
	if (!seg || seg >= len)
		seg = len;
	else
		w->gro_batches++;
	for (size_t off = 0; off < len; off += seg)
		deliver_datagram(w, u, &meta, false, p + off,
				 len - off < seg ? len - off : seg, fn, arg);
}

/* Takes in what the port's socket fd (bound to dst_gid) holds, up to
 * RX_PASS batches, and hands each datagram up; returns how many messages. */
static unsigned port_receive(struct wire *w, struct udp_port *u, int fd,
			     const uint8_t dst_gid[16], wire_deliver_fn fn,
			     void *arg)
{
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct sockaddr_storage from[RX_BATCH];
	/* UDP_GRO's int, SO_RXQ_OVFL's count, the TOS (an int for IPv6)
	 * and IPv6's flow information */
	char ctl[RX_BATCH][CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint32_t)) +
			   CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint32_t))];
	unsigned total = 0, pass = 0;
	int n;

	do {
		for (int i = 0; i < RX_BATCH; i++) {
			iov[i] = (struct iovec){ u->rx + (size_t)i * u->rx_buf,
						 u->rx_buf };
			msgs[i].msg_hdr = (struct msghdr){
				.msg_name = &from[i], .msg_namelen = sizeof(from[i]),
				.msg_iov = &iov[i], .msg_iovlen = 1,
				.msg_control = ctl[i],
				.msg_controllen = sizeof(ctl[i]) };
		}
		n = recvmmsg(fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
		for (int i = 0; i < n; i++) {
			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				struct wire_rx rx = {
					.rc = -EBADMSG,
					.why = "datagram larger than any frame" };
				fn(arg, &u->p, &rx);
				continue;
			}
			deliver_message(w, u, dst_gid, &from[i], &msgs[i].msg_hdr,
					msgs[i].msg_len, fn, arg);
		}
		total += n > 0 ? (unsigned)n : 0;
	} while (n == RX_BATCH && ++pass < RX_PASS);
	return total;
}

/* Hands up what other processes on u's address forwarded to inbox fd,
 * up to a batch; returns how many. */
static unsigned inbox_receive(struct wire *w, struct udp_port *u, int fd,
			      wire_deliver_fn fn, void *arg)
{
	struct share_meta m;
	unsigned n = 0;
	int len;

	while (n < RX_BATCH &&
	       (len = share_receive(fd, &m, u->rx, u->rx_buf)) != -EAGAIN) {
		n++;
		if (len < 0) { /* not from this user, or malformed */
			w->dropped++;
			continue;
		}
		w->fwd_in++;
		deliver_datagram(w, u, &m, true, u->rx, (size_t)len, fn, arg);
	}
	return n;
}

static unsigned udp_receive(struct wire *w, wire_deliver_fn fn, void *arg)
{
	struct wire_port *p, *tmp;
	unsigned n = 0;

	HASH_ITER(hh, w->ports, p, tmp) {
		struct udp_port *u = udp_of(p);

		n += port_receive(w, u, u->fd, p->gid, fn, arg);
		if (u->ll_fd >= 0)
			n += port_receive(w, u, u->ll_fd, p->ll_gid, fn, arg);
		n += inbox_receive(w, u, u->sh.inbox, fn, arg);
		for (struct share_claim *c = u->sh.claims; c; c = c->next)
			n += inbox_receive(w, u, c->fd, fn, arg);
	}
	return n;
}

static bool udp_next_due(const struct wire *w, uint64_t *when)
{
	(void)w;
	(void)when;
	return false; /* what is in flight is the kernel's */
}

static unsigned udp_pollfds(const struct wire *w, struct pollfd *pfd,
			    unsigned max)
{
	struct wire_port *p, *tmp;
	unsigned n = 0;

	HASH_ITER(hh, w->ports, p, tmp) {
		struct udp_port *u = udp_of(p);
		/* No poll holds them now (the caller is the one poller, about
		 * to poll again): the claims given back go, and their names. */
		if (!w->core->polls_under_way)
			share_reap(&u->sh);
		if (n == max)
			break;
		pfd[n++] = (struct pollfd){ u->fd, POLLIN, 0 };
		if (u->ll_fd >= 0 && n < max)
			pfd[n++] = (struct pollfd){ u->ll_fd, POLLIN, 0 };
		if (u->tx->blocked_fd >= 0 && n < max)
			pfd[n++] = (struct pollfd){ u->tx->blocked_fd, POLLOUT, 0 };
		if (n < max)
			pfd[n++] = (struct pollfd){ u->sh.inbox, POLLIN, 0 };
		for (struct share_claim *c = u->sh.claims; c && n < max;
		     c = c->next)
			pfd[n++] = (struct pollfd){ c->fd, POLLIN, 0 };
	}
	return n;
}

static void udp_free(struct wire *w)
{
	struct wire_port *p, *tmp;

	HASH_ITER(hh, w->ports, p, tmp)
		udp_detach(w, p);
	free(w);
}

static void udp_forget(struct wire *w)
{
	struct wire_port *p, *tmp;
	struct tx_sock *t, *ttmp;

	HASH_ITER(hh, w->ports, p, tmp) {
		struct udp_port *u = udp_of(p);

		HASH_ITER(hh, u->socks, t, ttmp)
			if (t->fd != u->fd && t->fd != u->ll_fd)
				close(t->fd);
		close(u->fd);
		if (u->ll_fd >= 0)
			close(u->ll_fd);
		/* the names stay the parent's while it lives */
		for (struct share_claim *c = u->sh.claims; c; c = c->next)
			close(c->fd);
		for (struct share_claim *c = u->sh.retired; c; c = c->next)
			close(c->fd);
		close(u->sh.inbox);
	}
}

static int udp_claim(struct wire *w, struct wire_port *p, uint64_t svc)
{
	(void)w;
	return share_claim(&udp_of(p)->sh, svc);
}

static void udp_unclaim(struct wire *w, struct wire_port *p, uint64_t svc)
{
	share_unclaim(&udp_of(p)->sh, svc);
	/* Its name goes with its socket now if no thread polls it, else once
	 * the poller returns: woken now, so that another process may claim
	 * the service as soon as possible. */
	if (!w->core->polls_under_way)
		share_reap(&udp_of(p)->sh);
	else
		w->core->sched.kick = true;
}

static const struct wire_ops udp_ops = {
	.attach = udp_attach, .detach = udp_detach, .send = udp_send,
	.receive = udp_receive, .flush = udp_flush, .busy = udp_busy,
	.next_due = udp_next_due, .pollfds = udp_pollfds, .free = udp_free,
	.claim = udp_claim, .unclaim = udp_unclaim, .forget = udp_forget,
};

struct wire *udp_wire_new(struct core *c)
{
	struct wire *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->ops = &udp_ops;
	w->core = c;
	w->ip_id_zero = true;	/* DF on every datagram: the kernel sends ID 0 */
	w->offload = true;
	w->burst_gap_ns = 1;	/* on real time, pacing spaces the bursts */
	return w;
}
