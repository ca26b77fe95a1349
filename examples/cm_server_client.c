// SPDX-License-Identifier: MIT
/*
 * rc_server_client.c again, with the connection manager (librdmacm) doing
 * what that program does by hand: finding the device from an IP address,
 * exchanging QP numbers, PSNs and GIDs, and moving the QPs through INIT,
 * RTR and RTS. Written the way the common rdma_cm tutorials write it: an
 * event channel, one loop over its events, one handler per event.
 *
 *   cc -o cm_server_client cm_server_client.c pair.c -lrdmacm -libverbs
 *   ROCEMU_ADDR=127.0.0.1 ./cm_server_client server 127.0.0.1 &
 *   ROCEMU_ADDR=127.0.0.2 ./cm_server_client client 127.0.0.1
 *
 * The server accepts with its buffer's address and rkey as private data;
 * the client RDMA WRITEs into that buffer, then SENDs a message into the
 * receive the server posted before accepting, then disconnects. A SEND
 * completes at the server after the WRITE before it on the same QP, so
 * when the receive completes both messages are there to check.
 */
#include "pair.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BUF_LEN = 4096, WRITE_AT = 1024, TIMEOUT_MS = 2000 };
static const char send_msg[] = "hello from the client, by SEND";
static const char write_msg[] = "and this, by RDMA WRITE";

/* What the server tells the client in its accept: where to WRITE. */
struct where {
	uint64_t addr; /* big-endian on the wire, as the rest */
	uint32_t rkey;
} __attribute__((packed));

struct conn {
	const char *role;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
	struct rdma_cm_id *id; /* the connection's id, with the QP */
	int done, failed;
};

static int fail(struct conn *c, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", c->role, what, strerror(err));
	c->failed = 1;
	return -1;
}

/* PD, CQ, buffer and QP on the device the id was bound to: id->verbs is
 * the context rdma_cm opened for the address. */
static int build(struct conn *c, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	c->pd = ibv_alloc_pd(id->verbs);
	c->cq = c->pd ? ibv_create_cq(id->verbs, 16, NULL, NULL, 0) : NULL;
	c->buf = calloc(1, BUF_LEN);
	if (!c->cq || !c->buf)
		return fail(c, "ibv_alloc_pd/ibv_create_cq", errno);
	c->mr = ibv_reg_mr(c->pd, c->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!c->mr)
		return fail(c, "ibv_reg_mr", errno);
	qa.send_cq = qa.recv_cq = c->cq;
	c->id = id;
	/* rdma_create_qp makes the QP and moves it to INIT; RTR and RTS
	 * follow in rdma_accept / rdma_connect. */
	if (rdma_create_qp(id, c->pd, &qa))
		return fail(c, "rdma_create_qp", errno);
	return 0;
}

static int post(struct conn *c, struct rdma_cm_id *id, enum ibv_wr_opcode op,
		uint64_t wr_id, size_t at, const char *msg, size_t len,
		const struct where *w)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf + at,
			       .length = (uint32_t)len, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int rc;

	memcpy(c->buf + at, msg, len);
	if (w) {
		wr.wr.rdma.remote_addr = be64toh(w->addr) + WRITE_AT;
		wr.wr.rdma.rkey = be32toh(w->rkey);
	}
	if ((rc = ibv_post_send(id->qp, &wr, &bad)))
		return fail(c, "ibv_post_send", rc);
	if (pair_wait(c->cq, &wc))
		return fail(c, "completion", ETIMEDOUT);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s: wr_id %" PRIu64 ": %s\n", c->role,
			wc.wr_id, ibv_wc_status_str(wc.status));
		c->failed = 1;
		return -1;
	}
	printf("%s: %s wr_id %" PRIu64 ": success\n", c->role,
	       op == IBV_WR_SEND ? "SEND" : "RDMA WRITE", wc.wr_id);
	return 0;
}

/* Server: a client asks to connect. Build its QP, post the receive, and
 * accept, telling it where it may write. */
static int on_connect_request(struct conn *c, struct rdma_cm_id *id)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 },
			   *bad;
	struct where w;
	struct rdma_conn_param cp = { .private_data = &w,
				      .private_data_len = sizeof(w),
				      .responder_resources = 1,
				      .initiator_depth = 1,
				      .rnr_retry_count = 3 };
	int rc;

	if (build(c, id))
		return -1;
	sge = (struct ibv_sge){ .addr = (uintptr_t)c->buf, .length = WRITE_AT,
				.lkey = c->mr->lkey };
	if ((rc = ibv_post_recv(id->qp, &wr, &bad)))
		return fail(c, "ibv_post_recv", rc);
	w.addr = htobe64((uintptr_t)c->buf);
	w.rkey = htobe32(c->mr->rkey);
	if (rdma_accept(id, &cp))
		return fail(c, "rdma_accept", errno);
	return 0;
}

/* Server: connected. The client's WRITE and SEND come; check them. */
static int on_server_established(struct conn *c)
{
	struct ibv_wc wc;

	printf("server: connected\n");
	if (pair_wait(c->cq, &wc) || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != sizeof(send_msg) || strcmp(c->buf, send_msg) ||
	    strcmp(c->buf + WRITE_AT, write_msg)) {
		fprintf(stderr, "server: the client's messages did not arrive\n");
		c->failed = 1;
		return -1;
	}
	printf("server: received \"%s\"\nserver: written \"%s\"\n", c->buf,
	       c->buf + WRITE_AT);
	return 0;
}

/* Client: connected; the server's accept carried its buffer's place. */
static int on_client_established(struct conn *c, struct rdma_cm_id *id,
				 const struct rdma_cm_event *ev)
{
	struct where w;

	printf("client: connected\n");
	if (ev->param.conn.private_data_len < sizeof(w)) {
		fprintf(stderr, "client: the server sent no address\n");
		c->failed = 1;
		return -1;
	}
	memcpy(&w, ev->param.conn.private_data, sizeof(w));
	if (post(c, id, IBV_WR_RDMA_WRITE, 2, WRITE_AT, write_msg,
		 sizeof(write_msg), &w) ||
	    post(c, id, IBV_WR_SEND, 1, 0, send_msg, sizeof(send_msg), NULL))
		return -1;
	return rdma_disconnect(id) ? fail(c, "rdma_disconnect", errno) : 0;
}

/* One event, by type; a non-zero return ends the loop. */
static int on_event(struct conn *c, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1, .retry_count = 7,
				      .rnr_retry_count = 3 };

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED: /* client: device found */
		if (build(c, id))
			return -1;
		return rdma_resolve_route(id, TIMEOUT_MS) ?
			       fail(c, "rdma_resolve_route", errno) : 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: /* client: path known */
		return rdma_connect(id, &cp) ? fail(c, "rdma_connect", errno)
					     : 0;
	case RDMA_CM_EVENT_CONNECT_REQUEST: /* server */
		return on_connect_request(c, id);
	case RDMA_CM_EVENT_ESTABLISHED:
		return !strcmp(c->role, "server") ? on_server_established(c)
			: on_client_established(c, id, ev);
	case RDMA_CM_EVENT_DISCONNECTED:
		printf("%s: disconnected\n", c->role);
		if (!strcmp(c->role, "server"))
			rdma_disconnect(id);
		c->done = 1;
		return 1;
	default:
		fprintf(stderr, "%s: unexpected event %s (status %d)\n",
			c->role, rdma_event_str(ev->event), ev->status);
		c->failed = 1;
		return -1;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct rdma_event_channel *ec = NULL;
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev;
	struct conn c = { 0 };
	int server, port = argc > 3 ? atoi(argv[3]) : 7471;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || argc > 4 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client")) ||
	    inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: cm_server_client server|client "
			"SERVER_IPV4 [PORT]\n");
		return 2;
	}
	c.role = argv[1];
	server = !strcmp(c.role, "server");
	sa.sin_port = htons((uint16_t)port);
	ec = rdma_create_event_channel();
	if (!ec || rdma_create_id(ec, &id, NULL, RDMA_PS_TCP)) {
		fail(&c, "rdma_create_id", errno);
		goto out;
	}
	if (server) {
		if (rdma_bind_addr(id, (struct sockaddr *)&sa) ||
		    rdma_listen(id, 1)) {
			fail(&c, "rdma_bind_addr/rdma_listen", errno);
			goto out;
		}
		printf("server: listening on %s port %d\n", argv[2], port);
	} else if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa,
				     TIMEOUT_MS)) {
		fail(&c, "rdma_resolve_addr", errno);
		goto out;
	}
	while (!rdma_get_cm_event(ec, &ev)) {
		/* handle, then ack: the ack frees the event and its private
		 * data */
		int end = on_event(&c, ev);

		rdma_ack_cm_event(ev);
		if (end)
			break;
	}
out:
	if (c.id && c.id->qp)
		rdma_destroy_qp(c.id);
	if (c.mr)
		ibv_dereg_mr(c.mr);
	if (c.cq)
		ibv_destroy_cq(c.cq);
	if (c.pd)
		ibv_dealloc_pd(c.pd);
	free(c.buf);
	if (c.id && c.id != id)
		rdma_destroy_id(c.id); /* the server's connection */
	if (id)
		rdma_destroy_id(id);
	if (ec)
		rdma_destroy_event_channel(ec);
	printf("%s: %s\n", c.role, c.failed || !c.done ? "failed" : "done");
	return c.failed || !c.done ? 1 : 0;
}
