/* SPDX-License-Identifier: MIT */
/*
 * The librdmacm.so.1 drop-in without a peer: event channels, ids, the
 * address rule, bind and resolve, rdma_getaddrinfo, QPs on ids,
 * rdma_init_qp_attr for INIT, what is not built, and many threads making
 * and destroying ids. Built as a user builds one: plain cc against the
 * system's <rdma/rdma_cma.h>, -lrdmacm -libverbs.
 * usage: rdmacm_basic [THREADS]   (ROCEMU_ADDR: the address it owns)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "verbs_check.h"

static char addr[64];

static struct sockaddr_in sin4(const char *a, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

/* The next event on ch within 5 s of polling its fd; NULL on none. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (poll(&p, 1, 5000) != 1 || rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/* The device is made at the first address an id binds (ROCEMU_ADDR is
 * unset here), and the id gets its context and PD. */
static void address_rule(void)
{
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in a = sin4(addr, 0);
	union ibv_gid gid;

	CHECK(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == 0,
	      "create_id: %s", strerror(errno));
	if (!id)
		return;
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&a) == 0,
	      "bind to %s: %s", addr, strerror(errno));
	EXPECT(id->verbs != NULL && id->pd != NULL && id->port_num == 1);
	EXPECT(id->verbs && ibv_query_gid(id->verbs, 1, 1, &gid) == 0 &&
	       !memcmp(&gid.raw[12], &a.sin_addr, 4));
	EXPECT(rdma_get_src_port(id) != 0);
	EXPECT(rdma_destroy_id(id) == 0);
}

static void bind_rules(void)
{
	struct rdma_cm_id *a = NULL, *b = NULL, *c = NULL;
	struct sockaddr_in dev = sin4(addr, 7471), any = sin4("0.0.0.0", 7471);
	struct sockaddr_in foreign = sin4("192.0.2.1", 7471);

	EXPECT(rdma_create_id(NULL, &a, NULL, RDMA_PS_TCP) == 0);
	EXPECT(rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP) == 0);
	EXPECT(rdma_create_id(NULL, &c, NULL, RDMA_PS_UDP) == 0);
	if (!a || !b || !c)
		return;
	CHECK(rdma_bind_addr(a, (struct sockaddr *)&foreign) == -1 &&
	      errno == EADDRNOTAVAIL, "a foreign address: errno %d", errno);
	EXPECT(rdma_bind_addr(a, (struct sockaddr *)&dev) == 0);
	EXPECT(ntohs(rdma_get_src_port(a)) == 7471);
	CHECK(rdma_bind_addr(b, (struct sockaddr *)&any) == -1 &&
	      errno == EADDRINUSE, "the wildcard on a taken port: errno %d", errno);
	/* another port space has ports of its own */
	EXPECT(rdma_bind_addr(c, (struct sockaddr *)&dev) == 0);
	EXPECT(rdma_destroy_id(a) == 0);
	CHECK(rdma_bind_addr(b, (struct sockaddr *)&any) == 0,
	      "the wildcard once the port is free: %s", strerror(errno));
	EXPECT(rdma_destroy_id(b) == 0);
	EXPECT(rdma_destroy_id(c) == 0);
	/* a device on 127/8 stands for the loopback interface: another
	 * 127/8 address (libfabric binds "localhost") binds it, named by
	 * the device's own address so that peers reach it */
	struct sockaddr_in lo = sin4("127.0.0.1", 7479);
	struct rdma_cm_id *d = NULL;
	if (strncmp(addr, "127.", 4) || !strcmp(addr, "127.0.0.1") ||
	    rdma_create_id(NULL, &d, NULL, RDMA_PS_TCP))
		return;
	CHECK(rdma_bind_addr(d, (struct sockaddr *)&lo) == 0,
	      "bind 127.0.0.1 on a loopback device: %s", strerror(errno));
	struct sockaddr_in *got = (struct sockaddr_in *)rdma_get_local_addr(d);
	EXPECT(got->sin_addr.s_addr == dev.sin_addr.s_addr &&
	       ntohs(got->sin_port) == 7479);
	EXPECT(rdma_destroy_id(d) == 0);
}

/* ADDR_RESOLVED and ROUTE_RESOLVED on a polled channel; O_NONBLOCK gives
 * EAGAIN on an empty one; the path record is RoCE's. */
static void channel_and_resolve(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in dst = sin4("127.0.0.1", 7472);

	EXPECT(ch != NULL && ch->fd >= 0);
	if (!ch)
		return;
	EXPECT(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	CHECK(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN,
	      "empty non-blocking channel: errno %d", errno);
	EXPECT(rdma_create_id(ch, &id, (void *)0x1234, RDMA_PS_TCP) == 0);
	if (!id)
		return;
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) == 0,
	      "resolve_addr: %s", strerror(errno));
	ev = next_event(ch);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED && ev->status == 0 &&
	      ev->id == id && ev->id->context == (void *)0x1234,
	      "ADDR_RESOLVED: %s", ev ? rdma_event_str(ev->event) : "none");
	if (ev)
		EXPECT(rdma_ack_cm_event(ev) == 0);
	/* the source is the device's address, the id has the device */
	struct sockaddr_in *src = (struct sockaddr_in *)rdma_get_local_addr(id);
	char s[64] = "";
	inet_ntop(AF_INET, &src->sin_addr, s, sizeof(s));
	CHECK(!strcmp(s, addr), "source %s, want %s", s, addr);
	EXPECT(id->verbs != NULL && rdma_get_src_port(id) != 0);
	EXPECT(ntohs(rdma_get_dst_port(id)) == 7472);
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	EXPECT(poll(&p, 1, 0) == 0); /* not readable once empty */
	EXPECT(rdma_resolve_route(id, 2000) == 0);
	ev = next_event(ch);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "ROUTE_RESOLVED: %s", ev ? rdma_event_str(ev->event) : "none");
	if (ev)
		EXPECT(rdma_ack_cm_event(ev) == 0);
	struct ibv_sa_path_rec *pr = id->route.path_rec;
	EXPECT(id->route.num_paths == 1 && pr != NULL);
	if (pr) {
		static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
		/* 127.0.0.1 is the host's own device: its GID, as Linux's
		 * cma_resolve_loopback gives a loopback destination */
		EXPECT(!memcmp(pr->dgid.raw, mapped, 12) &&
		       !memcmp(&pr->dgid.raw[12], &src->sin_addr, 4));
		EXPECT(!memcmp(&pr->sgid.raw[12], &src->sin_addr, 4));
		EXPECT(pr->hop_limit == 64 && pr->pkey == htons(0xffff));
		/* the port's MTU (ROCEMU_MTU, 1024 by default) caps lo's */
		EXPECT(pr->mtu == IBV_MTU_1024);
	}
	/* a channel with an id on it is not destroyed */
	errno = 0;
	rdma_destroy_event_channel(ch);
	CHECK(errno == EBUSY, "destroying a busy channel: errno %d", errno);
	EXPECT(rdma_destroy_id(id) == 0);
	rdma_destroy_event_channel(ch);
}

/* An id destroyed with an event not yet taken: as with librdmacm (the
 * kernel drops what was never reported), the destroy does not wait for
 * it and the event goes with the id. */
static void destroy_with_pending_event(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = sin4("127.0.0.1", 7481);
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev = NULL;

	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		CHECK(0, "channel and id: %s", strerror(errno));
		return;
	}
	EXPECT(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) == 0);
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	EXPECT(poll(&p, 1, 5000) == 1);
	EXPECT(rdma_destroy_id(id) == 0);
	EXPECT(poll(&p, 1, 0) == 0);
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	int rc = rdma_get_cm_event(ch, &ev);
	CHECK(rc == -1 && errno == EAGAIN, "the destroyed id's event: %s",
	      rc ? strerror(errno) : rdma_event_str(ev->event));
	if (!rc)
		rdma_ack_cm_event(ev);
	rdma_destroy_event_channel(ch);
}

/* A QP with no PD or CQs named: the id's PD, CQs with completion
 * channels, and the QP in INIT as rdma_init_qp_attr says. */
static void qp_on_id(void)
{
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in a = sin4(addr, 0);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = { 0 }, want = { .qp_state = IBV_QPS_INIT };
	struct ibv_qp_init_attr got;
	int mask = 0;

	EXPECT(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) == 0);
	if (!id)
		return;
	EXPECT(rdma_bind_addr(id, (struct sockaddr *)&a) == 0);
	CHECK(rdma_create_qp(id, NULL, &init) == 0, "create_qp: %s",
	      strerror(errno));
	if (!id->qp) {
		rdma_destroy_id(id);
		return;
	}
	EXPECT(id->qp->pd == id->pd);
	EXPECT(id->send_cq && id->recv_cq && id->send_cq_channel &&
	       id->recv_cq_channel);
	EXPECT(id->qp->send_cq == id->send_cq && id->qp->recv_cq == id->recv_cq);
	EXPECT(ibv_query_qp(id->qp, &qa, IBV_QP_STATE | IBV_QP_PORT |
			    IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS, &got) == 0);
	CHECK(qa.qp_state == IBV_QPS_INIT && qa.port_num == 1 &&
	      qa.pkey_index == 0, "state %d port %d", qa.qp_state, qa.port_num);
	EXPECT(rdma_init_qp_attr(id, &want, &mask) == 0);
	EXPECT(want.port_num == 1 && want.pkey_index == 0 &&
	       (mask & IBV_QP_STATE) && (mask & IBV_QP_PORT) &&
	       (mask & IBV_QP_PKEY_INDEX));
	/* a second QP on the id is refused */
	CHECK(rdma_create_qp(id, NULL, &init) == -1 && errno == EINVAL,
	      "second QP: errno %d", errno);
	rdma_destroy_qp(id);
	EXPECT(id->qp == NULL && id->send_cq == NULL);
	EXPECT(rdma_destroy_id(id) == 0);
}

/* rdma_migrate_id: the id's next events go to the new channel. */
static void migrate(void)
{
	struct rdma_event_channel *c1 = rdma_create_event_channel();
	struct rdma_event_channel *c2 = rdma_create_event_channel();
	struct sockaddr_in dst = sin4("127.0.0.1", 7477);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id = NULL;

	if (!c1 || !c2 || rdma_create_id(c1, &id, NULL, RDMA_PS_TCP)) {
		CHECK(0, "channels and an id: %s", strerror(errno));
		return;
	}
	EXPECT(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) == 0);
	ev = next_event(c1);
	EXPECT(ev && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED);
	if (ev)
		rdma_ack_cm_event(ev);
	EXPECT(rdma_migrate_id(id, c2) == 0 && id->channel == c2);
	EXPECT(rdma_resolve_route(id, 2000) == 0);
	ev = next_event(c2);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "ROUTE_RESOLVED on the new channel");
	if (ev)
		rdma_ack_cm_event(ev);
	struct pollfd p = { .fd = c1->fd, .events = POLLIN };
	EXPECT(poll(&p, 1, 0) == 0);
	/* the old channel has no id left: it goes */
	errno = 0;
	rdma_destroy_event_channel(c1);
	EXPECT(errno == 0);
	/* an event not yet taken moves with the id, as the kernel moves it */
	struct rdma_event_channel *c3 = rdma_create_event_channel();
	EXPECT(c3 && rdma_resolve_route(id, 2000) == 0);
	struct pollfd p2 = { .fd = c2->fd, .events = POLLIN };
	EXPECT(poll(&p2, 1, 5000) == 1);
	EXPECT(c3 && rdma_migrate_id(id, c3) == 0);
	ev = c3 ? next_event(c3) : NULL;
	CHECK(ev && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "the pending event moved to the new channel");
	if (ev)
		rdma_ack_cm_event(ev);
	EXPECT(poll(&p2, 1, 0) == 0);
	/* to no channel: synchronous, the call waits for its own event */
	EXPECT(rdma_migrate_id(id, NULL) == 0);
	CHECK(rdma_resolve_route(id, 2000) == 0 && id->event &&
	      id->event->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "a synchronous resolve keeps its event: %s", strerror(errno));
	/* a synchronous id has no channel to leave for none: EINVAL, as
	 * librdmacm's rdma_migrate_id, and it stays as it was */
	errno = 0;
	CHECK(rdma_migrate_id(id, NULL) == -1 && errno == EINVAL &&
	      id->event && id->event->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "a synchronous id to no channel: %s", strerror(errno));
	/* and back to a channel, as libfabric's verbs provider moves the
	 * ids it resolves synchronously: the kept event is acknowledged
	 * on the way (else the move waits for it for ever) */
	struct rdma_event_channel *c4 = rdma_create_event_channel();
	CHECK(c4 && rdma_migrate_id(id, c4) == 0 && id->channel == c4 &&
	      !id->event, "a synchronous id to a channel: %s", strerror(errno));
	EXPECT(rdma_destroy_id(id) == 0);
	if (c4)
		rdma_destroy_event_channel(c4);
	rdma_destroy_event_channel(c2);
	if (c3)
		rdma_destroy_event_channel(c3);
}

/* IPv6: the wildcard binds; a family the device has not is refused. */
static void ipv6(void)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6 };
	struct sockaddr_in6 lo6 = { .sin6_family = AF_INET6,
				    .sin6_port = htons(7478) };
	struct rdma_cm_id *a = NULL, *b = NULL;

	lo6.sin6_addr = in6addr_loopback;
	EXPECT(rdma_create_id(NULL, &a, NULL, RDMA_PS_TCP) == 0);
	EXPECT(rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP) == 0);
	if (!a || !b)
		return;
	CHECK(rdma_bind_addr(a, (struct sockaddr *)&any) == 0, "bind [::]: %s",
	      strerror(errno));
	EXPECT(rdma_get_src_port(a) != 0);
	/* the device is IPv4 here: ::1 is not its address */
	CHECK(rdma_bind_addr(b, (struct sockaddr *)&lo6) == -1 &&
	      errno == EADDRNOTAVAIL, "bind [::1]: errno %d", errno);
	CHECK(rdma_resolve_addr(b, NULL, (struct sockaddr *)&lo6, 2000) == -1 &&
	      errno == EADDRNOTAVAIL, "resolve [::1] from IPv4: errno %d", errno);
	EXPECT(rdma_destroy_id(a) == 0);
	EXPECT(rdma_destroy_id(b) == 0);
}

/* A UD id's QP is ready to send at creation: librdmacm's ucma_init_ud_qp
 * takes it through INIT (the UDP port space's Q_Key) to RTS. */
static void ud_qp(void)
{
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in a = sin4(addr, 0);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = { 0 };
	struct ibv_qp_init_attr got;

	EXPECT(rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP) == 0);
	if (!id)
		return;
	EXPECT(id->qp_type == IBV_QPT_UD);
	EXPECT(rdma_bind_addr(id, (struct sockaddr *)&a) == 0);
	CHECK(rdma_create_qp(id, NULL, &init) == 0, "UD QP: %s", strerror(errno));
	if (id->qp) {
		EXPECT(ibv_query_qp(id->qp, &qa, IBV_QP_STATE | IBV_QP_QKEY,
				    &got) == 0);
		CHECK(qa.qp_state == IBV_QPS_RTS && qa.qkey == 0x01234567,
		      "UD QP state %d Q_Key %#x", qa.qp_state, qa.qkey);
	}
	rdma_destroy_qp(id);
	EXPECT(rdma_destroy_id(id) == 0);
}

static void getaddrinfo_results(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE | RAI_NUMERICHOST,
				       .ai_port_space = RDMA_PS_TCP }, *res;

	int rc = rdma_getaddrinfo(addr, "7473", &hints, &res);

	CHECK(rc == 0, "passive: %s", strerror(errno));
	if (!rc) {
		EXPECT(res->ai_src_addr && !res->ai_dst_addr &&
		       res->ai_family == AF_INET && res->ai_qp_type == IBV_QPT_RC &&
		       res->ai_port_space == RDMA_PS_TCP);
		EXPECT(res->ai_src_addr &&
		       ntohs(((struct sockaddr_in *)res->ai_src_addr)->sin_port) == 7473);
		rdma_freeaddrinfo(res);
	}
	struct rdma_addrinfo ud = { .ai_qp_type = IBV_QPT_UD };
	rc = rdma_getaddrinfo("127.0.0.1", "7474", &ud, &res);
	CHECK(rc == 0, "active: %s", strerror(errno));
	if (!rc) {
		EXPECT(res->ai_dst_addr && res->ai_port_space == RDMA_PS_UDP &&
		       res->ai_qp_type == IBV_QPT_UD);
		rdma_freeaddrinfo(res);
	}
	CHECK(rdma_getaddrinfo("no such host.invalid", "1", NULL, &res) == -1,
	      "an unknown host");
	/* no node nor service: the hints' own source (as libfabric asks) */
	struct sockaddr_in src = sin4(addr, 7479);
	struct rdma_addrinfo only = { .ai_flags = RAI_PASSIVE,
				      .ai_src_addr = (struct sockaddr *)&src,
				      .ai_src_len = sizeof(src) };
	rc = rdma_getaddrinfo(NULL, NULL, &only, &res);
	CHECK(rc == 0, "hints only: %s", strerror(errno));
	if (!rc) {
		EXPECT(res->ai_src_addr && res->ai_src_len == sizeof(src) &&
		       !memcmp(res->ai_src_addr, &src, sizeof(src)) &&
		       res->ai_port_space == RDMA_PS_TCP &&
		       res->ai_family == AF_INET);
		rdma_freeaddrinfo(res);
	}
	CHECK(rdma_getaddrinfo(NULL, NULL, NULL, &res) == -1 && errno == EINVAL,
	      "nothing asked: errno %d", errno);
}

/* rdma_create_ep: a synchronous active id, resolved inside the call. */
static void sync_ep(void)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *id = NULL;

	if (rdma_getaddrinfo("127.0.0.1", "7475", &hints, &res)) {
		CHECK(0, "getaddrinfo: %s", strerror(errno));
		return;
	}
	CHECK(rdma_create_ep(&id, res, NULL, NULL) == 0, "create_ep: %s",
	      strerror(errno));
	if (id) {
		EXPECT(id->route.num_paths == 1 && id->verbs != NULL);
		EXPECT(id->event && id->event->event == RDMA_CM_EVENT_ROUTE_RESOLVED);
		rdma_destroy_ep(id);
	}
	rdma_freeaddrinfo(res);
}

static void not_built(void)
{
	struct rdma_cm_id *id = NULL;
	struct sockaddr_in g = sin4("239.1.1.1", 0), a = sin4(addr, 0);

	EXPECT(rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP) == 0);
	if (!id)
		return;
	EXPECT(rdma_bind_addr(id, (struct sockaddr *)&a) == 0);
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&g, NULL) == -1 &&
	      errno == EOPNOTSUPP, "multicast: errno %d", errno);
	CHECK(rdma_leave_multicast(id, (struct sockaddr *)&g) == -1 &&
	      errno == EOPNOTSUPP, "leave: errno %d", errno);
	EXPECT(rdma_destroy_id(id) == 0);
	CHECK(rsocket(AF_INET, SOCK_STREAM, 0) == -1 && errno == ENOSYS,
	      "rsocket: errno %d", errno);
	struct pollfd p = { .fd = 0, .events = 0 };
	EXPECT(rpoll(&p, 1, 0) == 0);
	EXPECT(!strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED),
		       "RDMA_CM_EVENT_ESTABLISHED"));
}

static void *churn(void *arg)
{
	struct rdma_event_channel *ch = arg;
	long bad = 0;

	for (int i = 0; i < 200; i++) {
		struct rdma_cm_id *id;
		struct sockaddr_in a = sin4(addr, 0);
		if (rdma_create_id(i & 1 ? ch : NULL, &id, NULL, RDMA_PS_TCP)) {
			bad++;
			continue;
		}
		bad += rdma_bind_addr(id, (struct sockaddr *)&a) != 0;
		bad += rdma_destroy_id(id) != 0;
	}
	return (void *)bad;
}

/* Each resolves on an id of its own on the shared blocking channel, then
 * takes whichever event comes first (blocking until one does) and
 * acknowledges it: as many events as threads, each taken once. */
struct resolver {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	int got;	/* ADDR_RESOLVED events this thread took */
};

static void *resolve_one(void *arg)
{
	struct resolver *r = arg;
	struct sockaddr_in dst = sin4("127.0.0.1", 7476);
	struct rdma_cm_event *ev;

	if (rdma_resolve_addr(r->id, NULL, (struct sockaddr *)&dst, 2000))
		return NULL;
	if (rdma_get_cm_event(r->ch, &ev))
		return NULL;
	r->got = ev->event == RDMA_CM_EVENT_ADDR_RESOLVED;
	rdma_ack_cm_event(ev);
	return NULL;
}

static void resolvers(int n)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct resolver r[16];
	pthread_t t[16];
	int got = 0;

	if (!ch)
		return;
	for (int i = 0; i < n; i++) {
		r[i] = (struct resolver){ .ch = ch };
		EXPECT(rdma_create_id(ch, &r[i].id, NULL, RDMA_PS_TCP) == 0);
	}
	for (int i = 0; i < n; i++)
		EXPECT(pthread_create(&t[i], NULL, resolve_one, &r[i]) == 0);
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		got += r[i].got;
	}
	CHECK(got == n, "%d of %d threads got their ADDR_RESOLVED", got, n);
	for (int i = 0; i < n; i++)
		EXPECT(rdma_destroy_id(r[i].id) == 0);
	rdma_destroy_event_channel(ch);
}

static void threads(int n)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	pthread_t t[16];
	long bad = 0;

	CHECK(ch != NULL, "create_event_channel: %s", strerror(errno));
	if (!ch)
		return;
	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++)
		EXPECT(pthread_create(&t[i], NULL, churn, ch) == 0);
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	CHECK(bad == 0, "%ld failed calls in %d threads", bad, n);
	rdma_destroy_event_channel(ch);
	resolvers(n);
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct waiter {
	struct rdma_event_channel *ch;
	int tid, started, returned;	/* the flags: __atomic */
};

static void *wait_event(void *arg)
{
	struct waiter *w = arg;
	struct rdma_cm_event *ev;

	w->tid = (int)syscall(SYS_gettid);
	__atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
	rdma_get_cm_event(w->ch, &ev);
	__atomic_store_n(&w->returned, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The thread sleeps in its wait for the channel's fd (a peeking
 * recvfrom; poll, ppoll or read count too): its syscall file names it
 * (x86-64's numbers). */
static int in_wait(int tid)
{
	char path[64], line[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return !strncmp(line, "45 ", 3) || !strncmp(line, "7 ", 2) ||
	       !strncmp(line, "271 ", 4) || !strncmp(line, "0 ", 2);
}

/* A channel destroyed while another thread waits in rdma_get_cm_event
 * on it (rping's CM thread at its end): that thread stays blocked, as a
 * reader of librdmacm's closed fd does, even when a signal wakes its
 * wait; it neither returns an error nor touches freed memory. */
static void destroyed_under_waiter(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct waiter w = { .ch = rdma_create_event_channel() };
	pthread_t t;
	int n = 0;

	sigaction(SIGUSR1, &sa, NULL);
	if (!w.ch || pthread_create(&t, NULL, wait_event, &w)) {
		CHECK(0, "a channel and a waiting thread: %s", strerror(errno));
		return;
	}
	while (n++ < 10000 && !(__atomic_load_n(&w.started, __ATOMIC_SEQ_CST) &&
				in_wait(w.tid)))
		usleep(1000);
	CHECK(in_wait(w.tid), "the waiter never slept in its wait");
	rdma_destroy_event_channel(w.ch);
	pthread_kill(t, SIGUSR1);
	usleep(300000);
	CHECK(!__atomic_load_n(&w.returned, __ATOMIC_SEQ_CST),
	      "rdma_get_cm_event returned after its channel was destroyed under it");
	pthread_detach(t);	/* blocked for good, as on librdmacm */
}

int main(int argc, char **argv)
{
	const char *a = getenv("ROCEMU_ADDR");

	snprintf(addr, sizeof(addr), "%s", a && *a ? a : "127.0.0.71");
	/* the address rule: the first bind chooses */
	unsetenv("ROCEMU_ADDR");
	address_rule();
	bind_rules();
	channel_and_resolve();
	qp_on_id();
	destroy_with_pending_event();
	ud_qp();
	migrate();
	ipv6();
	getaddrinfo_results();
	sync_ep();
	not_built();
	threads(argc > 1 ? atoi(argv[1]) : 8);
	destroyed_under_waiter();
	printf("rdmacm_basic: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
