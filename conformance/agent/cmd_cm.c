// SPDX-License-Identifier: MIT
/*
 * rocemu-agent: connections through the device's connection manager, by
 * librdmacm (the system's on rxe or a NIC, rocemu's drop-in on rocemu):
 * a listener on a port, each connection request accepted with a QP of its
 * own that has receives posted, the CM's events reported.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"

enum { CM_RECVS = 16, CM_RECV_LEN = 1024, CM_BACKLOG = 8 };

/* The event channel of the connection, made at its first listen. */
static int channel(struct agent_objs *o, struct answer *a)
{
	if (o->cm.ch)
		return 0;
	o->cm.ch = rdma_create_event_channel();
	if (!o->cm.ch)
		return ans_errno(a, errno, "rdma_create_event_channel"), -1;
	int fl = fcntl(o->cm.ch->fd, F_GETFL);
	fcntl(o->cm.ch->fd, F_SETFL, fl | O_NONBLOCK);
	return 0;
}

/* An address of the device (a GID of its, IPv4-mapped or IPv6) and port. */
static void dev_addr(const uint8_t *g, uint16_t port, struct sockaddr_storage *ss)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(ss, 0, sizeof(*ss));
	if (!memcmp(g, v4mapped, sizeof(v4mapped))) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, g + 12, 4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, g, 16);
	}
}

int cmd_cm_listen(struct agent_dev *d, struct agent_objs *o, struct req *r,
		  struct answer *a)
{
	uint64_t port;
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	union ibv_gid gid = d->gid;
	uint8_t gi;

	if (req_num(r, "port", UINT16_MAX, false, 0, &port) || !port)
		return ans_err(a, "EINVAL", "cm_listen needs port=1..65535");
	/* the device's address at sgid_index= (a family's GID), else its own */
	if (req_sgid_index(d, r, &gi))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (gi != d->gid_index && ibv_query_gid(d->ctx, d->port, gi, &gid))
		return ans_errno(a, errno ? errno : EINVAL, "ibv_query_gid");
	if (o->cm.nlisten == AGENT_MAX_OBJS)
		return ans_err(a, "ENOSPC", "at most %d listeners", AGENT_MAX_OBJS);
	if (channel(o, a))
		return 0;
	if (rdma_create_id(o->cm.ch, &id, NULL, RDMA_PS_TCP))
		return ans_errno(a, errno, "rdma_create_id");
	dev_addr(gid.raw, (uint16_t)port, &ss);
	if (rdma_bind_addr(id, (struct sockaddr *)&ss) || rdma_listen(id, CM_BACKLOG)) {
		int e = errno;
		rdma_destroy_id(id);
		return ans_errno(a, e, "rdma_bind_addr/rdma_listen");
	}
	o->cm.listen[++o->cm.nlisten] = id;
	ans_add(a, "ok listen=%u", o->cm.nlisten);
	return 0;
}

/* The connection number of id, or 0. */
static unsigned conn_of(const struct agent_objs *o, const struct rdma_cm_id *id)
{
	for (unsigned i = 1; i <= o->cm.nconn; i++)
		if (o->cm.conn[i].id == id)
			return i;
	return 0;
}

static int conn_lookup(struct req *r, struct answer *a, struct agent_objs *o,
		       unsigned *c)
{
	uint64_t v;

	if (req_num(r, "conn", AGENT_MAX_OBJS, false, 0, &v))
		return ans_err(a, "EINVAL", "%s", r->err), -1;
	if (!v || v > o->cm.nconn || !o->cm.conn[v].id)
		return ans_err(a, "ENOENT", "no conn number %llu", (unsigned long long)v), -1;
	*c = (unsigned)v;
	return 0;
}

/* "RDMA_CM_EVENT_CONNECT_REQUEST" as "connect_request". */
static void add_event_name(struct answer *a, enum rdma_cm_event_type t)
{
	const char *s = rdma_event_str(t);

	if (!strncmp(s, "RDMA_CM_EVENT_", 14))
		s += 14;
	ans_add(a, "ok event=");
	for (; *s; s++)
		ans_add(a, "%c", *s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
}

/* A COMM_EST of a connection's QP (the first packet before any RTU): told
 * to the CM with rdma_notify, as librdmacm asks of its users. 1 when one
 * was taken and answered. */
static int comm_est(struct agent_objs *o, struct answer *a)
{
	for (unsigned i = 1; i <= o->cm.nconn; i++) {
		struct agent_conn *c = &o->cm.conn[i];
		struct ibv_async_event ev;
		struct pollfd p;
		if (!c->id || !c->id->qp)
			continue;
		p = (struct pollfd){ .fd = c->id->verbs->async_fd, .events = POLLIN };
		if (poll(&p, 1, 0) <= 0)
			continue;
		int fl = fcntl(p.fd, F_GETFL);
		fcntl(p.fd, F_SETFL, fl | O_NONBLOCK);
		if (ibv_get_async_event(c->id->verbs, &ev))
			continue;
		bool est = ev.event_type == IBV_EVENT_COMM_EST;
		unsigned n = 0;
		for (unsigned j = 1; j <= o->cm.nconn; j++)
			if (o->cm.conn[j].id && o->cm.conn[j].id->qp == ev.element.qp)
				n = j;
		ibv_ack_async_event(&ev);
		if (est && n)
			rdma_notify(o->cm.conn[n].id, IBV_EVENT_COMM_EST);
		if (est) {
			ans_add(a, "ok event=comm_est");
		} else {
			ans_add(a, "ok event=async_");
			for (const char *s = ibv_event_type_str(ev.event_type); *s; s++)
				ans_add(a, "%c", *s == ' ' ? '_' : *s);
		}
		if (n)
			ans_add(a, " conn=%u", n);
		return 1;
	}
	return 0;
}

/* One CM event taken: its connection numbered (a new one for a request). */
static void report(struct agent_objs *o, struct rdma_cm_event *ev, struct answer *a)
{
	unsigned n;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && o->cm.nconn < AGENT_MAX_OBJS) {
		n = ++o->cm.nconn;
		o->cm.conn[n].id = ev->id;
	} else {
		n = conn_of(o, ev->id);
	}
	add_event_name(a, ev->event);
	if (n)
		ans_add(a, " conn=%u", n);
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		ans_add(a, " status=%d", ev->status);
	/* The peer's DREQ is answered at once, as every librdmacm program
	 * answers DISCONNECTED. */
	if (ev->event == RDMA_CM_EVENT_DISCONNECTED && n)
		rdma_disconnect(ev->id);
}

int cmd_cm_event(struct agent_dev *d, struct agent_objs *o, struct req *r,
		 struct answer *a)
{
	uint64_t wait;
	struct rdma_cm_event *ev;
	struct timespec t0, now;
	(void)d;

	if (req_num(r, "wait_ms", 60000, true, 0, &wait))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (!o->cm.ch)
		return ans_err(a, "ENOENT", "no cm_listen on this connection");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (comm_est(o, a))
			return 0;
		if (!rdma_get_cm_event(o->cm.ch, &ev)) {
			report(o, ev, a);
			rdma_ack_cm_event(ev);
			return 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		uint64_t ms = (uint64_t)(now.tv_sec - t0.tv_sec) * 1000 +
			      (uint64_t)((now.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms >= wait)
			break;
		struct pollfd p = { .fd = o->cm.ch->fd, .events = POLLIN };
		poll(&p, 1, 5);
	}
	ans_add(a, "ok none");
	return 0;
}

/* The connection's PD, CQ, receive buffer and QP, with receives posted. */
static int make_qp(struct agent_conn *c, struct answer *a)
{
	struct ibv_context *ctx = c->id->verbs;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = CM_RECVS, .max_recv_wr = CM_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (!(c->pd = ibv_alloc_pd(ctx)))
		return ans_errno(a, errno, "ibv_alloc_pd"), -1;
	if (!(c->cq = ibv_create_cq(ctx, 2 * CM_RECVS, NULL, NULL, 0)))
		return ans_errno(a, errno, "ibv_create_cq"), -1;
	if (!(c->buf = calloc(CM_RECVS, CM_RECV_LEN)))
		return ans_err(a, "ENOMEM", "no memory"), -1;
	if (!(c->mr = ibv_reg_mr(c->pd, c->buf, CM_RECVS * CM_RECV_LEN,
				 IBV_ACCESS_LOCAL_WRITE)))
		return ans_errno(a, errno, "ibv_reg_mr"), -1;
	qa.send_cq = qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return ans_errno(a, errno, "rdma_create_qp"), -1;
	for (unsigned i = 0; i < CM_RECVS; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + i * CM_RECV_LEN),
				       .length = CM_RECV_LEN, .lkey = c->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
		int rc = ibv_post_recv(c->id->qp, &wr, &bad);
		if (rc)
			return ans_errno(a, rc, "ibv_post_recv"), -1;
	}
	return 0;
}

int cmd_cm_accept(struct agent_dev *d, struct agent_objs *o, struct req *r,
		  struct answer *a)
{
	unsigned n;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .rnr_retry_count = 7 };
	(void)d;

	if (conn_lookup(r, a, o, &n))
		return 0;
	struct agent_conn *c = &o->cm.conn[n];
	if (c->id->qp)
		return ans_err(a, "EALREADY", "conn %u has its QP already", n);
	if (make_qp(c, a))
		return 0;
	if (rdma_accept(c->id, &p))
		return ans_errno(a, errno, "rdma_accept");
	ans_add(a, "ok conn=%u qpn=%#x", n, c->id->qp->qp_num);
	return 0;
}

int cmd_cm_disconnect(struct agent_dev *d, struct agent_objs *o, struct req *r,
		      struct answer *a)
{
	unsigned n;
	(void)d;

	if (conn_lookup(r, a, o, &n))
		return 0;
	if (rdma_disconnect(o->cm.conn[n].id))
		return ans_errno(a, errno, "rdma_disconnect");
	ans_add(a, "ok");
	return 0;
}

int cmd_cm_poll(struct agent_dev *d, struct agent_objs *o, struct req *r,
		struct answer *a)
{
	unsigned n;
	uint64_t wait;
	(void)d;

	if (conn_lookup(r, a, o, &n))
		return 0;
	if (req_num(r, "wait_ms", 60000, true, 0, &wait))
		return ans_err(a, "EINVAL", "%s", r->err);
	if (!o->cm.conn[n].cq)
		return ans_err(a, "ENOENT", "conn %u has no QP (cm_accept)", n);
	poll_answer(o->cm.conn[n].cq, (unsigned)wait, a);
	return 0;
}

void agent_cm_free(struct agent_cm *cm)
{
	for (unsigned i = 1; i <= AGENT_MAX_OBJS; i++) {
		struct agent_conn *c = &cm->conn[i];
		if (c->id && c->id->qp)
			rdma_destroy_qp(c->id);
		if (c->id)
			rdma_destroy_id(c->id);
		if (c->mr)
			ibv_dereg_mr(c->mr);
		free(c->buf);
		if (c->cq)
			ibv_destroy_cq(c->cq);
		if (c->pd)
			ibv_dealloc_pd(c->pd);
		if (cm->listen[i])
			rdma_destroy_id(cm->listen[i]);
	}
	if (cm->ch)
		rdma_destroy_event_channel(cm->ch);
	memset(cm, 0, sizeof(*cm));
}
