/* SPDX-License-Identifier: MIT */
/* The UDP wire: devices on real sockets at port 4791, a source port per QP, frames rebuilt on receipt. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "local.h"

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
static bool tx_flush(struct rocemu_world *w, struct tx_batch *b)
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
			w->wire_dropped++;
			sent = 1;
		}
		tx_release(b, (uint32_t)sent);
	}
	return true;
}

bool udp_flush_all(struct rocemu_world *w)
{
	bool all = true;

	for (struct rocemu_dev *d = w->devs; d; d = d->next)
		if (d->udp_tx && tx_used(d->udp_tx))
			all &= tx_flush(w, d->udp_tx);
	return all;
}

bool wire_busy(const struct rocemu_dev *d)
{
	return d->udp_tx && tx_used(d->udp_tx) >= TX_HIGH;
}

uint64_t udp_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

int udp_dev_open(struct rocemu_dev *d)
{
	int fd = bound_socket(d->gid, ROCE_UDP_PORT);
	int rcvbuf = 4 << 20;

	if (fd < 0)
		return fd;
	d->udp_rx = malloc((size_t)RX_BATCH * RX_BUF + HDR_ROOM + RX_BUF);
	d->udp_tx = calloc(1, sizeof(*d->udp_tx));
	if (!d->udp_rx || !d->udp_tx) {
		free(d->udp_rx);
		free(d->udp_tx);
		d->udp_rx = NULL;
		d->udp_tx = NULL;
		close(fd);
		return -ENOMEM;
	}
	d->udp_tx->blocked_fd = -1;
	/* Bursts of a whole send window arrive at once; the kernel caps
	 * this at net.core.rmem_max. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	d->udp_fd = fd;
	return 0;
}

void udp_dev_close(struct rocemu_dev *d)
{
	struct tx_sock *t, *tmp;

	if (d->udp_tx && !tx_flush(d->w, d->udp_tx)) {
		/* what the socket will not take now goes with the device */
		d->w->wire_dropped += tx_used(d->udp_tx);
		tx_release(d->udp_tx, tx_used(d->udp_tx));
	}
	HASH_ITER(hh, d->tx_socks, t, tmp) {
		HASH_DEL(d->tx_socks, t);
		if (t->fd != d->udp_fd)
			close(t->fd);
		free(t);
	}
	if (d->udp_fd >= 0)
		close(d->udp_fd);
	d->udp_fd = -1;
	free(d->udp_rx);
	d->udp_rx = NULL;
	free(d->udp_tx);
	d->udp_tx = NULL;
}

/* The socket that sends from port; the device's own (port 4791) if that
 * port cannot be had, in which case *port changes to 4791. */
static int tx_socket(struct rocemu_dev *d, uint16_t *port)
{
	struct tx_sock *t;

	HASH_FIND(hh, d->tx_socks, port, sizeof(*port), t);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return d->udp_fd;
		t->port = *port;
		t->fd = bound_socket(d->gid, *port);
		if (t->fd < 0)
			t->fd = d->udp_fd;
		HASH_ADD(hh, d->tx_socks, port, sizeof(t->port), t);
	}
	if (t->fd == d->udp_fd)
		*port = ROCE_UDP_PORT;
	return t->fd;
}

static struct rocemu_dev *dev_by_gid(struct rocemu_world *w, const uint8_t *gid)
{
	for (struct rocemu_dev *d = w->devs; d; d = d->next)
		if (!memcmp(d->gid, gid, 16))
			return d;
	return NULL;
}

/* Queues a built frame's UDP payload to go from its source port to its
 * destination's port 4791; the queue frees the frame once sent. */
void udp_send(struct rocemu_world *w, uint8_t *frame, size_t len)
{
	struct roce_frame f;
	const char *why;

	if (roce_frame_parse(ROCE_LINK_ETH, frame, len, len, &f, &why))
		goto out;
	struct rocemu_dev *d = dev_by_gid(w, f.src_gid);
	if (!d)
		goto out;
	uint16_t port = f.sport;
	int fd = tx_socket(d, &port);
	uint8_t *ip = (uint8_t *)(uintptr_t)f.ip_hdr;
	size_t ihl = f.ip_ver == 4 ? ROCE_IPV4_HLEN : ROCE_IPV6_HLEN;
	uint8_t *udp = ip + ihl;
	if (port != f.sport) {
		/* sent from another port: the ICRC covers it, so redo it */
		uint32_t icrc;
		udp[0] = (uint8_t)(port >> 8);
		udp[1] = (uint8_t)port;
		roce_icrc_calc(ip, ihl + f.udp_len, &icrc);
		for (int i = 0; i < 4; i++)
			udp[f.udp_len - 4 + i] = (uint8_t)(icrc >> (24 - 8 * i));
	}
	struct tx_batch *b = d->udp_tx;
	/* Sent a batch at a time; the world sends the rest after each pass. */
	if (b->blocked_fd < 0 && tx_used(b) >= TX_BATCH)
		tx_flush(w, b);
	if (tx_used(b) == TX_RING) {
		w->wire_dropped++; /* a full ring: lost, and counted */
		goto out;
	}
	uint32_t i = b->tail & (TX_RING - 1);
	b->fd[i] = fd;
	b->frame[i] = frame;
	b->iov[i] = (struct iovec){ udp + ROCE_UDP_HLEN,
				    f.udp_len - ROCE_UDP_HLEN };
	b->msg[i].msg_hdr = (struct msghdr){
		.msg_name = &b->to[i],
		.msg_namelen = sockaddr_of(f.dst_gid, ROCE_UDP_PORT, &b->to[i]),
		.msg_iov = &b->iov[i], .msg_iovlen = 1 };
	b->tail++;
	return;
out:
	free(frame);
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

/* A datagram one of the world's own devices sent: the tap has it already. */
static bool sent_by_world(const struct rocemu_world *w,
			  const struct sockaddr_storage *src)
{
	uint8_t gid[16];

	gid_of_sockaddr(src, gid);
	for (const struct rocemu_dev *d = w->devs; d; d = d->next)
		if (d->udp_fd >= 0 && !memcmp(d->gid, gid, 16))
			return true;
	return false;
}

static size_t rebuild(const struct rocemu_dev *d, const struct sockaddr_storage *src,
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

/* Takes in what the device's socket holds, up to RX_PASS batches;
 * returns how many datagrams. */
static unsigned udp_receive(struct rocemu_dev *d)
{
	uint8_t *bufs = d->udp_rx, *frame = bufs + (size_t)RX_BATCH * RX_BUF;
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
		n = recvmmsg(d->udp_fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
		for (int i = 0; i < n; i++) {
			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				dev_count(d, ROCEMU_CNT_RX_DROP_MALFORMED);
				continue;
			}
			size_t len = rebuild(d, &from[i],
					     bufs + (size_t)i * RX_BUF,
					     msgs[i].msg_len, frame);
			/* The tap shows both directions of a real wire,
			 * each packet once. */
			if (d->w->pcap && !sent_by_world(d->w, &from[i]))
				roce_pcap_write(d->w->pcap, d->w->now, frame, len);
			dev_receive(d, frame, len);
		}
		total += n > 0 ? (unsigned)n : 0;
	} while (n == RX_BATCH && ++pass < RX_PASS);
	return total;
}

unsigned udp_receive_all(struct rocemu_world *w)
{
	unsigned n = 0;

	for (struct rocemu_dev *d = w->devs; d; d = d->next)
		if (d->udp_fd >= 0)
			n += udp_receive(d);
	return n;
}

/* When the engines have work: a requester or responder whose device's
 * queue has room (one whose queue is full waits for POLLOUT); a paced
 * responder at its next burst. Lowers *when, if any is sooner. */
static void engines_due(struct rocemu_world *w, uint64_t *when)
{
	uint64_t t;

	for (struct rocemu_qp *qp = w->ready; qp; qp = qp->ready_next)
		if (!wire_busy(qp->dev))
			*when = w->now;
	for (struct rocemu_qp *qp = w->acks; qp; qp = qp->ack_next)
		if (!wire_busy(qp->dev) && resp_due(qp, &t) && t < *when)
			*when = t;
}

int world_poll_setup(struct rocemu_world *w, struct pollfd *pfd, unsigned max,
		     unsigned long *n, uint64_t max_ns)
{
	uint64_t when, due = w->now + max_ns, wait;

	*n = 0;
	if (world_next_timer(w, &when) && when < due)
		due = when;
	engines_due(w, &due);
	wait = due <= w->now ? 0 : due - w->now;
	for (struct rocemu_dev *d = w->devs; d && *n < max; d = d->next) {
		if (d->udp_fd < 0)
			continue;
		pfd[(*n)++] = (struct pollfd){ d->udp_fd, POLLIN, 0 };
		if (d->udp_tx->blocked_fd >= 0 && *n < max)
			pfd[(*n)++] = (struct pollfd){ d->udp_tx->blocked_fd,
						       POLLOUT, 0 };
	}
	return (int)((wait + 999999) / 1000000);
}

void rocemu_world_wait(struct rocemu_world *w, uint64_t max_ns)
{
	struct pollfd pfd[64];
	unsigned long n;
	bool threaded;
	int ms;

	{
		WORLD_GUARD(w);
		threaded = w->threaded;
	}
	/* With a progress thread running, the thread does the work. */
	if (threaded) {
		struct timespec ts = { (time_t)(max_ns / 1000000000u),
				       (long)(max_ns % 1000000000u) };
		nanosleep(&ts, NULL);
		return;
	}
	rocemu_world_run(w);
	{
		WORLD_GUARD(w);
		ms = world_poll_setup(w, pfd, 64, &n, max_ns);
	}
	if (w->udp)
		poll(pfd, n, ms);
	rocemu_world_run(w);
}
