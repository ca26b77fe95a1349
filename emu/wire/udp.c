/* SPDX-License-Identifier: MIT */
/* The UDP wire: a socket per port at its address, port 4791, and a source socket per QP port. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

enum { RX_BATCH = 32, RX_BUF = 9216, HDR_ROOM = ROCE_ETH_HLEN + ROCE_IPV6_HLEN +
					      ROCE_UDP_HLEN };
/* Batches one pass takes from a socket: a stream of responses must not
 * keep the engines from sending (a retry among what they send). */
enum { RX_PASS = 8 };

struct tx_sock {
	UT_hash_handle hh;
	uint16_t port;
	int fd;
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
	uint8_t *frame[TX_RING];	/* owned until sent */
	struct iovec iov[TX_RING];
	struct sockaddr_storage to[TX_RING];
	struct mmsghdr msg[TX_RING];
};

/* A device's port on the UDP wire. */
struct udp_port {
	struct wire_port p;	/* first: a wire_port * is one of these */
	int fd;			/* bound to the GID's address, port 4791 */
	uint8_t *rx;		/* receive buffers */
	struct tx_batch *tx;	/* datagrams to send */
	struct tx_sock *socks;	/* one per source port */
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
static void tx_release(struct tx_batch *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(b->frame[(b->head + i) & (TX_RING - 1)]);
	b->head += n;
}

/* Sends from the head while the sockets take it; true if all went. */
static bool tx_flush(struct wire *w, struct tx_batch *b)
{
	b->blocked_fd = -1;
	while (tx_used(b)) {
		uint32_t i = b->head & (TX_RING - 1), k = 1;
		uint32_t run = TX_RING - i; /* to the end of the ring */
		if (run > tx_used(b))
			run = tx_used(b);
		while (k < run && b->fd[i + k] == b->fd[i])
			k++;
		int sent = sendmmsg(b->fd[i], b->msg + i, k, 0);
		if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			b->blocked_fd = b->fd[i]; /* wait for POLLOUT */
			return false;
		}
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0) {
			/* refused for good (no route, too big): that one
			 * datagram is lost, as on a wire */
			w->dropped++;
			sent = 1;
		}
		tx_release(b, (uint32_t)sent);
	}
	return true;
}

static bool udp_flush(struct wire *w)
{
	struct wire_port *p, *tmp;
	bool all = true;

	HASH_ITER(hh, w->ports, p, tmp)
		if (tx_used(udp_of(p)->tx))
			all &= tx_flush(w, udp_of(p)->tx);
	return all;
}

static bool udp_busy(const struct wire *w, const struct wire_port *p)
{
	(void)w;
	return tx_used(udp_of(p)->tx) >= TX_HIGH;
}

static socklen_t sockaddr_of(const uint8_t gid[16], uint16_t port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (roce_gid_is_ipv4(gid)) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		memcpy(&a->sin_addr, gid + 12, 4);
		return sizeof(*a);
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
	a->sin6_family = AF_INET6;
	a->sin6_port = htons(port);
	memcpy(&a->sin6_addr, gid, 16);
	return sizeof(*a);
}

/* A non-blocking socket bound to gid:port; -errno if it cannot be. */
static int bound_socket(const uint8_t gid[16], uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sockaddr_of(gid, port, &ss);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, pmtu = IP_PMTUDISC_DO;

	if (fd < 0)
		return -errno;
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	else /* DF on every datagram, as rxe sends them */
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	if (bind(fd, (struct sockaddr *)&ss, sl)) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/*
 * Fills in the IPv4 ID and DF the sender's ICRC covered. A kernel UDP
 * socket with DF set (every rocemu device) sends ID 0, so that is tried
 * first with one CRC; anything else (rxe numbers its packets) is solved
 * for. False if neither makes the ICRC verify.
 */
static bool ipv4_id_found(uint8_t *ip, size_t len)
{
	uint32_t icrc;
	const uint8_t *wire = ip + len - ROCE_ICRC_LEN;

	ip[6] = 0x40;
	if (roce_icrc_calc(ip, len, &icrc) == 0 &&
	    icrc == ((uint32_t)wire[0] << 24 | (uint32_t)wire[1] << 16 |
		     (uint32_t)wire[2] << 8 | wire[3]))
		return true;
	ip[6] = 0;
	return roce_icrc_solve_ipv4(ip, len) == 0;
}

/* Rebuilds the frame a datagram arrived in, as far as a socket shows it. */
/* The GID of a datagram's source address; returns its port. */
static uint16_t gid_of_sockaddr(const struct sockaddr_storage *src,
				uint8_t gid[16])
{
	if (src->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)src;
		roce_gid_from_ipv4(gid, (const uint8_t *)&a->sin_addr);
		return ntohs(a->sin_port);
	}
	const struct sockaddr_in6 *a = (const void *)src;
	memcpy(gid, &a->sin6_addr, 16);
	return ntohs(a->sin6_port);
}


static size_t rebuild(const struct wire_port *d, const struct sockaddr_storage *src,
		      const uint8_t *payload, size_t plen, uint8_t *out)
{
	struct roce_frame f;

	roce_frame_init(&f, roce_gid_is_ipv4(d->gid) ? 4 : 6);
	f.sport = gid_of_sockaddr(src, f.src_gid);
	memcpy(f.dst_gid, d->gid, 16);
	memcpy(f.eth_dst, d->mac, 6);
	f.ip_frag = 0; /* the ID and DF are solved for below */
	size_t hl = ROCE_ETH_HLEN + (f.ip_ver == 4 ? ROCE_IPV4_HLEN
						  : ROCE_IPV6_HLEN) + ROCE_UDP_HLEN;
	/* The transport bytes go in as they came; only the headers are ours. */
	memcpy(out + hl, payload, plen);
	uint8_t *ip = out + ROCE_ETH_HLEN;
	uint8_t *udp = ip + (f.ip_ver == 4 ? ROCE_IPV4_HLEN : ROCE_IPV6_HLEN);
	memset(out, 0, hl);
	memcpy(out, d->mac, 6);
	out[12] = f.ip_ver == 4 ? 0x08 : 0x86;
	out[13] = f.ip_ver == 4 ? 0x00 : 0xdd;
	size_t ulen = ROCE_UDP_HLEN + plen;
	if (f.ip_ver == 4) {
		ip[0] = 0x45;
		ip[2] = (uint8_t)((ulen + 20) >> 8);
		ip[3] = (uint8_t)(ulen + 20);
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, f.src_gid + 12, 4);
		memcpy(ip + 16, d->gid + 12, 4);
	} else {
		ip[0] = 0x60;
		ip[4] = (uint8_t)(ulen >> 8);
		ip[5] = (uint8_t)ulen;
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, f.src_gid, 16);
		memcpy(ip + 24, d->gid, 16);
	}
	udp[0] = (uint8_t)(f.sport >> 8);
	udp[1] = (uint8_t)f.sport;
	udp[2] = ROCE_UDP_PORT >> 8;
	udp[3] = ROCE_UDP_PORT & 0xff;
	udp[4] = (uint8_t)(ulen >> 8);
	udp[5] = (uint8_t)ulen;
	if (f.ip_ver == 4 && ipv4_id_found(ip, ulen + 20)) {
		uint16_t c = roce_inet_csum(ip, ROCE_IPV4_HLEN, 0);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	return hl + plen;
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
	u->fd = bound_socket(gid, ROCE_UDP_PORT);
	if (u->fd < 0) {
		int rc = u->fd;
		free(u);
		return rc;
	}
	u->rx = malloc((size_t)RX_BATCH * RX_BUF + HDR_ROOM + RX_BUF);
	u->tx = calloc(1, sizeof(*u->tx));
	if (!u->rx || !u->tx) {
		free(u->rx);
		free(u->tx);
		close(u->fd);
		free(u);
		return -ENOMEM;
	}
	u->tx->blocked_fd = -1;
	/* Bursts of a whole send window arrive at once; the kernel caps
	 * this at net.core.rmem_max. */
	setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	memcpy(u->p.gid, gid, 16);
	wire_port_add(w, &u->p);
	*port = &u->p;
	return 0;
}

static void udp_detach(struct wire *w, struct wire_port *p)
{
	struct udp_port *u = udp_of(p);
	struct tx_sock *t, *tmp;

	if (!tx_flush(w, u->tx)) {
		/* what the socket will not take now goes with the device */
		w->dropped += tx_used(u->tx);
		tx_release(u->tx, tx_used(u->tx));
	}
	HASH_ITER(hh, u->socks, t, tmp) {
		HASH_DEL(u->socks, t);
		if (t->fd != u->fd)
			close(t->fd);
		free(t);
	}
	wire_port_del(w, p);
	close(u->fd);
	free(u->rx);
	free(u->tx);
	free(u);
}

/* The socket that sends from port; the port's own (4791) if that port
 * cannot be had, in which case *port changes to 4791. */
static int tx_socket(struct udp_port *u, uint16_t *port)
{
	struct tx_sock *t;

	HASH_FIND(hh, u->socks, port, sizeof(*port), t);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return u->fd;
		t->port = *port;
		t->fd = bound_socket(u->p.gid, *port);
		if (t->fd < 0)
			t->fd = u->fd;
		HASH_ADD(hh, u->socks, port, sizeof(t->port), t);
	}
	if (t->fd == u->fd)
		*port = ROCE_UDP_PORT;
	return t->fd;
}

/* Queues a built frame's UDP payload to go from its source port to its
 * destination's port 4791; the queue frees the frame once sent. */
static void udp_send(struct wire *w, struct wire_port *from,
		     const struct wire_tx *tx)
{
	if (!from) { /* injected: only the loopback wire takes those */
		w->dropped++;
		free(tx->frame);
		return;
	}
	struct udp_port *u = udp_of(from);
	uint16_t port = tx->sport;
	int fd = tx_socket(u, &port);
	uint8_t *ip = tx->frame + ROCE_ETH_HLEN;
	size_t ihl = tx->ip_ver == 4 ? ROCE_IPV4_HLEN : ROCE_IPV6_HLEN;
	uint8_t *udp = ip + ihl;
	size_t ulen = tx->len - ROCE_ETH_HLEN - ihl;
	if (port != tx->sport) {
		/* sent from another port: the ICRC covers it, so redo it */
		uint32_t icrc;
		udp[0] = (uint8_t)(port >> 8);
		udp[1] = (uint8_t)port;
		roce_icrc_calc(ip, ihl + ulen, &icrc);
		for (int i = 0; i < 4; i++)
			udp[ulen - 4 + i] = (uint8_t)(icrc >> (24 - 8 * i));
	}
	struct tx_batch *b = u->tx;
	/* Sent a batch at a time; the world sends the rest after each pass. */
	if (b->blocked_fd < 0 && tx_used(b) >= TX_BATCH)
		tx_flush(w, b);
	if (tx_used(b) == TX_RING) {
		w->dropped++; /* a full ring: lost, and counted */
		free(tx->frame);
		return;
	}
	uint32_t i = b->tail & (TX_RING - 1);
	b->fd[i] = fd;
	b->frame[i] = tx->frame;
	b->iov[i] = (struct iovec){ udp + ROCE_UDP_HLEN, ulen - ROCE_UDP_HLEN };
	b->msg[i].msg_hdr = (struct msghdr){
		.msg_name = &b->to[i],
		.msg_namelen = sockaddr_of(tx->dst_gid, ROCE_UDP_PORT, &b->to[i]),
		.msg_iov = &b->iov[i], .msg_iovlen = 1 };
	b->tail++;
}

/* Takes in what the port's socket holds, up to RX_PASS batches, and hands
 * each datagram up; returns how many. */
static unsigned port_receive(struct wire *w, struct udp_port *u,
			     wire_deliver_fn fn, void *arg)
{
	uint8_t *bufs = u->rx, *frame = bufs + (size_t)RX_BATCH * RX_BUF;
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct sockaddr_storage from[RX_BATCH];
	unsigned total = 0, pass = 0;
	int n;

	do {
		for (int i = 0; i < RX_BATCH; i++) {
			iov[i] = (struct iovec){ bufs + (size_t)i * RX_BUF, RX_BUF };
			msgs[i].msg_hdr = (struct msghdr){
				.msg_name = &from[i], .msg_namelen = sizeof(from[i]),
				.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		n = recvmmsg(u->fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
		for (int i = 0; i < n; i++) {
			struct roce_frame f;
			struct wire_rx rx = { .f = &f, .why = "" };
			uint8_t src[16];
			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				rx.rc = -EBADMSG;
				rx.why = "datagram larger than any frame";
				fn(arg, &u->p, &rx);
				continue;
			}
			rx.len = rebuild(&u->p, &from[i],
					 bufs + (size_t)i * RX_BUF,
					 msgs[i].msg_len, frame);
			rx.bytes = frame;
			gid_of_sockaddr(&from[i], src);
			rx.from_outside = wire_port_find(w, src) == NULL;
			rx.rc = roce_frame_parse(ROCE_LINK_ETH, frame, rx.len,
						 rx.len, &f, &rx.why);
			fn(arg, &u->p, &rx);
		}
		total += n > 0 ? (unsigned)n : 0;
	} while (n == RX_BATCH && ++pass < RX_PASS);
	return total;
}

static unsigned udp_receive(struct wire *w, wire_deliver_fn fn, void *arg)
{
	struct wire_port *p, *tmp;
	unsigned n = 0;

	HASH_ITER(hh, w->ports, p, tmp)
		n += port_receive(w, udp_of(p), fn, arg);
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
		if (n == max)
			break;
		pfd[n++] = (struct pollfd){ u->fd, POLLIN, 0 };
		if (u->tx->blocked_fd >= 0 && n < max)
			pfd[n++] = (struct pollfd){ u->tx->blocked_fd, POLLOUT, 0 };
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

static const struct wire_ops udp_ops = {
	.attach = udp_attach, .detach = udp_detach, .send = udp_send,
	.receive = udp_receive, .flush = udp_flush, .busy = udp_busy,
	.next_due = udp_next_due, .pollfds = udp_pollfds, .free = udp_free,
};

struct wire *udp_wire_new(struct core *c)
{
	struct wire *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->ops = &udp_ops;
	w->core = c;
	w->ip_id_zero = true;	/* DF on every datagram: the kernel sends ID 0 */
	w->burst_gap_ns = 1;	/* on real time, pacing spaces the bursts */
	return w;
}
