/* SPDX-License-Identifier: MIT */
/*
 * Connections through the librdmacm.so.1 drop-in, both ends in this
 * process on one device: a connection with QPs on the ids (connect,
 * CONNECT_REQUEST with the private data, accept, ESTABLISHED on both, a
 * SEND across, disconnect), a refused one (REJECTED, reason 28, private
 * data), one with no QP on the active id (CONNECT_RESPONSE, then
 * rdma_establish, as UCX does), a REQ no one listens for (REJECTED 8),
 * and UD ids (SIDR): the peer's QPN, Q_Key and address in ESTABLISHED, a
 * datagram sent with them, a refusal and no listener (UNREACHABLE).
 * Built as a user builds one: cc, -lrdmacm -libverbs.
 * usage: rdmacm_connect   (ROCEMU_ADDR: the address it owns)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_check.h"

static struct sockaddr_in self(uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };
	const char *a = getenv("ROCEMU_ADDR");

	inet_pton(AF_INET, a && *a ? a : "127.0.0.1", &s.sin_addr);
	return s;
}

/* The next event on ch, which must be of type t; NULL (a failure) else. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch,
				    enum rdma_cm_event_type t)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (poll(&p, 1, 10000) != 1 || rdma_get_cm_event(ch, &ev)) {
		CHECK(0, "no event (wanted %s)", rdma_event_str(t));
		return NULL;
	}
	CHECK(ev->event == t, "%s (status %d), wanted %s", rdma_event_str(ev->event),
	      ev->status, rdma_event_str(t));
	if (ev->event != t) {
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

static void ack(struct rdma_cm_event *ev)
{
	if (ev)
		rdma_ack_cm_event(ev);
}

static struct ibv_qp_init_attr qp_caps_of(enum ibv_qp_type t)
{
	return (struct ibv_qp_init_attr){
		.qp_type = t,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
}

static enum ibv_qp_state state_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? IBV_QPS_ERR : a.qp_state;
}

static struct ibv_qp_init_attr qp_caps(void)
{
	return qp_caps_of(IBV_QPT_RC);
}

/* A client id on ch, resolved to the listener at port, with a QP when
 * with_qp. NULL on a failure. */
static struct rdma_cm_id *client_ps(struct rdma_event_channel *ch,
				    uint16_t port, int with_qp,
				    enum rdma_port_space ps)
{
	struct sockaddr_in dst = self(port);
	struct rdma_cm_id *id = NULL;
	struct ibv_qp_init_attr caps = qp_caps_of(ps == RDMA_PS_UDP ?
						  IBV_QPT_UD : IBV_QPT_RC);

	if (rdma_create_id(ch, &id, NULL, ps) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000)) {
		CHECK(0, "client id: %s", strerror(errno));
		return id;
	}
	ack(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	EXPECT(rdma_resolve_route(id, 2000) == 0);
	ack(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	if (with_qp)
		CHECK(rdma_create_qp(id, NULL, &caps) == 0, "client QP: %s",
		      strerror(errno));
	return id;
}

static struct rdma_cm_id *client(struct rdma_event_channel *ch, uint16_t port,
				 int with_qp)
{
	return client_ps(ch, port, with_qp, RDMA_PS_TCP);
}

/* SIDR: the server's UD QP, Q_Key and address reach the client, which
 * sends it a datagram with them. */
static void ud_pair(struct rdma_event_channel *sch,
		    struct rdma_event_channel *cch, uint16_t port)
{
	static const char hi[] = "ud hello";
	struct rdma_cm_id *c = client_ps(cch, port, 1, RDMA_PS_UDP);
	struct rdma_conn_param cp = { .private_data = hi,
				      .private_data_len = sizeof(hi) };

	if (!c || !c->qp)
		return;
	CHECK(rdma_connect(c, &cp) == 0, "UD connect: %s", strerror(errno));
	struct rdma_cm_event *ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!ev)
		return;
	struct rdma_cm_id *s = ev->id;
	EXPECT(ev->param.ud.private_data_len == 180 &&
	       !memcmp(ev->param.ud.private_data, hi, sizeof(hi)));
	EXPECT(s->qp_type == IBV_QPT_UD);
	ack(ev);
	struct ibv_qp_init_attr caps = qp_caps_of(IBV_QPT_UD);
	EXPECT(rdma_create_qp(s, NULL, &caps) == 0);
	static char buf[40 + 64];
	struct ibv_mr *mr = ibv_reg_mr(s->pd, buf, sizeof(buf),
				       IBV_ACCESS_LOCAL_WRITE);
	if (s->qp && mr) {
		struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
		EXPECT(ibv_post_recv(s->qp, &wr, &bad) == 0);
	}
	EXPECT(rdma_accept(s, NULL) == 0);
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	if (ev && s->qp) {
		struct rdma_ud_param *u = &ev->param.ud;
		EXPECT(u->qp_num == s->qp->qp_num && u->qkey == 0x01234567);
		EXPECT(u->ah_attr.is_global && u->private_data_len == 136);
		struct ibv_ah *ah = ibv_create_ah(c->pd, &u->ah_attr);
		char msg[] = "datagram";
		struct ibv_mr *cmr = ibv_reg_mr(c->pd, msg, sizeof(msg), 0);
		struct ibv_sge sge = { (uintptr_t)msg, sizeof(msg), cmr ? cmr->lkey : 0 };
		struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = u->qp_num;
		wr.wr.ud.remote_qkey = u->qkey;
		CHECK(ah && cmr && ibv_post_send(c->qp, &wr, &bad) == 0,
		      "UD send: %s", strerror(errno));
		struct ibv_wc wc;
		int n = 0;
		for (int i = 0; i < 2000000 && n == 0; i++)
			n = ibv_poll_cq(s->recv_cq, 1, &wc);
		CHECK(n == 1 && wc.status == IBV_WC_SUCCESS &&
		      !strcmp(buf + 40, "datagram"), "the datagram arrived: n %d", n);
		n = 0;
		for (int i = 0; i < 2000000 && n == 0; i++)
			n = ibv_poll_cq(c->send_cq, 1, &wc);
		EXPECT(n == 1 && wc.status == IBV_WC_SUCCESS);
		if (ah)
			ibv_destroy_ah(ah);
		if (cmr)
			ibv_dereg_mr(cmr);
	}
	ack(ev);
	if (mr)
		ibv_dereg_mr(mr);
	rdma_destroy_qp(s);
	rdma_destroy_qp(c);
	EXPECT(rdma_destroy_id(s) == 0);
	EXPECT(rdma_destroy_id(c) == 0);
	/* refused, then no listener: UNREACHABLE with the SIDR status */
	c = client_ps(cch, port, 0, RDMA_PS_UDP);
	if (!c)
		return;
	EXPECT(rdma_connect(c, NULL) == 0);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (ev) {
		s = ev->id;
		ack(ev);
		EXPECT(rdma_reject(s, NULL, 0) == 0);
		EXPECT(rdma_destroy_id(s) == 0);
		ev = expect(cch, RDMA_CM_EVENT_UNREACHABLE);
		if (ev)
			EXPECT(ev->status == 2); /* REJECT */
		ack(ev);
	}
	EXPECT(rdma_destroy_id(c) == 0);
	c = client_ps(cch, port + 1, 0, RDMA_PS_UDP);
	if (!c)
		return;
	EXPECT(rdma_connect(c, NULL) == 0);
	ev = expect(cch, RDMA_CM_EVENT_UNREACHABLE);
	if (ev)
		EXPECT(ev->status == 1); /* unsupported: no listener */
	ack(ev);
	EXPECT(rdma_destroy_id(c) == 0);
}

static void connected_pair(struct rdma_event_channel *sch,
			   struct rdma_event_channel *cch, uint16_t port)
{
	static const char hello[] = "hello from the client";
	static const char welcome[] = "welcome";
	struct rdma_cm_id *c = client(cch, port, 1);
	struct rdma_conn_param cp = { .private_data = hello,
				      .private_data_len = sizeof(hello),
				      .responder_resources = 1,
				      .initiator_depth = 1, .retry_count = 7,
				      .rnr_retry_count = 7 };

	if (!c || !c->qp)
		return;
	CHECK(rdma_connect(c, &cp) == 0, "connect: %s", strerror(errno));
	struct rdma_cm_event *ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!ev)
		return;
	struct rdma_cm_id *s = ev->id;
	/* Linux's cma: all 56 bytes after the Annex A11 header */
	EXPECT(ev->param.conn.private_data_len == 56);
	EXPECT(!memcmp(ev->param.conn.private_data, hello, sizeof(hello)));
	EXPECT(ev->param.conn.qp_num == c->qp->qp_num);
	EXPECT(ev->param.conn.initiator_depth == 1 &&
	       ev->param.conn.responder_resources == 1);
	EXPECT(ev->listen_id != NULL && s->verbs == c->verbs);
	EXPECT(ntohs(rdma_get_dst_port(s)) == ntohs(rdma_get_src_port(c)));
	ack(ev);
	struct ibv_qp_init_attr caps = qp_caps();
	EXPECT(rdma_create_qp(s, NULL, &caps) == 0);
	struct ibv_mr *mr = NULL;
	char buf[64] = "";
	if (s->qp) {
		mr = ibv_reg_mr(s->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), mr ? mr->lkey : 0 };
		struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
		EXPECT(mr && ibv_post_recv(s->qp, &wr, &bad) == 0);
	}
	struct rdma_conn_param ap = { .private_data = welcome,
				      .private_data_len = sizeof(welcome),
				      .responder_resources = 1,
				      .initiator_depth = 1, .rnr_retry_count = 7 };
	CHECK(rdma_accept(s, &ap) == 0, "accept: %s", strerror(errno));
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	/* the REP's private data, as librdmacm's ESTABLISHED keeps it */
	CHECK(!ev || (ev->param.conn.private_data_len == 196 &&
		      ev->param.conn.private_data &&
		      !memcmp(ev->param.conn.private_data, welcome, sizeof(welcome))),
	      "ESTABLISHED private data: %u bytes",
	      ev ? ev->param.conn.private_data_len : 0);
	ack(ev);
	EXPECT(state_of(c->qp) == IBV_QPS_RTS);
	ack(expect(sch, RDMA_CM_EVENT_ESTABLISHED));
	if (s->qp)
		EXPECT(state_of(s->qp) == IBV_QPS_RTS);
	/* a SEND across the connection the CM set up */
	char msg[] = "data";
	struct ibv_mr *cmr = ibv_reg_mr(c->pd, msg, sizeof(msg), 0);
	struct ibv_sge sge = { (uintptr_t)msg, sizeof(msg), cmr ? cmr->lkey : 0 };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	EXPECT(cmr && ibv_post_send(c->qp, &wr, &bad) == 0);
	struct ibv_wc wc;
	int n = 0;
	for (int i = 0; i < 2000000 && s->recv_cq && n == 0; i++)
		n = ibv_poll_cq(s->recv_cq, 1, &wc);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS && !strcmp(buf, "data"),
	      "the SEND arrived: n %d status %d", n, n ? (int)wc.status : -1);
	n = 0;
	for (int i = 0; i < 2000000 && n == 0; i++)
		n = ibv_poll_cq(c->send_cq, 1, &wc);
	EXPECT(n == 1 && wc.status == IBV_WC_SUCCESS);
	/* disconnect: the peer hears DISCONNECTED, answers, both time out */
	EXPECT(rdma_disconnect(c) == 0);
	EXPECT(state_of(c->qp) == IBV_QPS_ERR);
	ack(expect(sch, RDMA_CM_EVENT_DISCONNECTED));
	EXPECT(rdma_disconnect(s) == 0);
	ack(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
	ack(expect(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT));
	ack(expect(sch, RDMA_CM_EVENT_TIMEWAIT_EXIT));
	if (mr)
		ibv_dereg_mr(mr);
	if (cmr)
		ibv_dereg_mr(cmr);
	rdma_destroy_qp(s);
	rdma_destroy_qp(c);
	EXPECT(rdma_destroy_id(s) == 0);
	EXPECT(rdma_destroy_id(c) == 0);
}

static void refused(struct rdma_event_channel *sch,
		    struct rdma_event_channel *cch, uint16_t port)
{
	static const char no[] = "go away";
	struct rdma_cm_id *c = client(cch, port, 1);
	struct rdma_conn_param cp = { .retry_count = 7 };

	if (!c || !c->qp)
		return;
	/* librdmacm's checks: more READs than the device takes is EINVAL,
	 * RDMA_MAX_RESP_RES and RDMA_MAX_INIT_DEPTH mean the device's most */
	struct ibv_device_attr da;
	EXPECT(ibv_query_device(c->verbs, &da) == 0);
	cp.responder_resources = (uint8_t)(da.max_qp_rd_atom + 1);
	CHECK(rdma_connect(c, &cp) == -1 && errno == EINVAL,
	      "responder resources past the device's: errno %d", errno);
	cp.responder_resources = RDMA_MAX_RESP_RES;
	cp.initiator_depth = RDMA_MAX_INIT_DEPTH;
	EXPECT(rdma_connect(c, &cp) == 0);
	struct rdma_cm_event *ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!ev)
		return;
	struct rdma_cm_id *s = ev->id;
	/* what the client sends out, the server takes in, and back */
	CHECK(ev->param.conn.responder_resources == da.max_qp_init_rd_atom &&
	      ev->param.conn.initiator_depth == da.max_qp_rd_atom,
	      "the device's most: %u %u", ev->param.conn.responder_resources,
	      ev->param.conn.initiator_depth);
	ack(ev);
	EXPECT(rdma_reject(s, no, sizeof(no)) == 0);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	if (ev) {
		EXPECT(ev->status == 28); /* consumer defined */
		EXPECT(ev->param.conn.private_data_len == 148 &&
		       !memcmp(ev->param.conn.private_data, no, sizeof(no)));
		ack(ev);
	}
	EXPECT(state_of(c->qp) == IBV_QPS_ERR);
	rdma_destroy_qp(c);
	EXPECT(rdma_destroy_id(s) == 0);
	EXPECT(rdma_destroy_id(c) == 0);
}

/* A REQ whose Annex A11 header lies (the stand-in CM breaks its version
 * byte when FAKE_CM_CORRUPT_REQ is set): refused, as Linux's cma does,
 * with no CONNECT_REQUEST for the application. */
static void lying_req(struct rdma_event_channel *sch,
		      struct rdma_event_channel *cch, uint16_t port)
{
	struct rdma_cm_id *c = client(cch, port, 1);
	struct rdma_cm_event *ev = NULL;

	if (!c || !c->qp)
		return;
	setenv("FAKE_CM_CORRUPT_REQ", "1", 1);
	EXPECT(rdma_connect(c, &(struct rdma_conn_param){ .retry_count = 7 }) == 0);
	unsetenv("FAKE_CM_CORRUPT_REQ");
	/* the listener's channel gives nothing to the application ... */
	int fl = fcntl(sch->fd, F_GETFL);
	fcntl(sch->fd, F_SETFL, fl | O_NONBLOCK);
	int rc = rdma_get_cm_event(sch, &ev);
	CHECK(rc == -1 && errno == EAGAIN, "a lying REQ gave %s",
	      rc ? strerror(errno) : rdma_event_str(ev->event));
	if (!rc)
		ack(ev);
	fcntl(sch->fd, F_SETFL, fl);
	/* ... and the client is refused */
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	ack(ev);
	rdma_destroy_qp(c);
	EXPECT(rdma_destroy_id(c) == 0);
}

/* UCX's way: no QP on the active id, its QPN in the parameters, RTR and
 * RTS from rdma_init_qp_attr, the RTU from rdma_establish. */
static void no_qp(struct rdma_event_channel *sch,
		  struct rdma_event_channel *cch, uint16_t port)
{
	struct rdma_cm_id *c = client(cch, port, 0);
	struct ibv_qp_init_attr caps = qp_caps();

	if (!c || !c->pd)
		return;
	struct ibv_cq *cq = ibv_create_cq(c->verbs, 4, NULL, NULL, 0);
	caps.send_cq = caps.recv_cq = cq;
	struct ibv_qp *qp = cq ? ibv_create_qp(c->pd, &caps) : NULL;
	EXPECT(qp != NULL);
	if (!qp)
		return;
	struct rdma_conn_param cp = { .qp_num = qp->qp_num, .retry_count = 7,
				      .rnr_retry_count = 7 };
	EXPECT(rdma_connect(c, &cp) == 0);
	struct rdma_cm_event *ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (!ev)
		return;
	struct rdma_cm_id *s = ev->id;
	EXPECT(ev->param.conn.qp_num == qp->qp_num);
	ack(ev);
	struct ibv_qp_init_attr scaps = qp_caps();
	EXPECT(rdma_create_qp(s, NULL, &scaps) == 0);
	EXPECT(rdma_accept(s, &(struct rdma_conn_param){ .rnr_retry_count = 7 }) == 0);
	ev = expect(cch, RDMA_CM_EVENT_CONNECT_RESPONSE);
	if (ev) {
		EXPECT(s->qp && ev->param.conn.qp_num == s->qp->qp_num);
		EXPECT(ev->param.conn.private_data_len == 196);
		ack(ev);
	}
	static const enum ibv_qp_state steps[] = { IBV_QPS_INIT, IBV_QPS_RTR,
						   IBV_QPS_RTS };
	for (int i = 0; i < 3; i++) {
		struct ibv_qp_attr a = { .qp_state = steps[i] };
		int mask = 0;
		CHECK(rdma_init_qp_attr(c, &a, &mask) == 0, "init_qp_attr %d: %s",
		      steps[i], strerror(errno));
		if (steps[i] == IBV_QPS_RTR)
			EXPECT(s->qp && a.dest_qp_num == s->qp->qp_num);
		CHECK(ibv_modify_qp(qp, &a, mask) == 0, "modify to %d", steps[i]);
	}
	EXPECT(state_of(qp) == IBV_QPS_RTS);
	EXPECT(rdma_establish(c) == 0);
	ack(expect(sch, RDMA_CM_EVENT_ESTABLISHED));
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	rdma_destroy_qp(s);
	EXPECT(rdma_destroy_id(s) == 0);
	EXPECT(rdma_destroy_id(c) == 0);
}

int main(void)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *l = NULL;
	struct sockaddr_in a = self(7480);

	if (!sch || !cch || rdma_create_id(sch, &l, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(l, (struct sockaddr *)&a) || rdma_listen(l, 4)) {
		printf("FAIL: a listener at port 7480: %s\n", strerror(errno));
		printf("rdmacm_connect: 0 passed, 1 failed\n");
		return 1;
	}
	connected_pair(sch, cch, 7480);
	refused(sch, cch, 7480);
	no_qp(sch, cch, 7480);
	lying_req(sch, cch, 7480);
	/* no listener on 7481: REJ 8 (invalid service ID) */
	struct rdma_cm_id *c = client(cch, 7481, 1);
	if (c && c->qp) {
		EXPECT(rdma_connect(c, &(struct rdma_conn_param){ .retry_count = 7 }) == 0);
		struct rdma_cm_event *ev = expect(cch, RDMA_CM_EVENT_REJECTED);
		if (ev)
			EXPECT(ev->status == 8);
		ack(ev);
		rdma_destroy_qp(c);
		EXPECT(rdma_destroy_id(c) == 0);
	}
	struct rdma_cm_id *ul = NULL;
	struct sockaddr_in ua = self(7482);
	if (rdma_create_id(sch, &ul, NULL, RDMA_PS_UDP) ||
	    rdma_bind_addr(ul, (struct sockaddr *)&ua) || rdma_listen(ul, 4))
		CHECK(0, "a UD listener at port 7482: %s", strerror(errno));
	else
		ud_pair(sch, cch, 7482);
	if (ul)
		EXPECT(rdma_destroy_id(ul) == 0);
	EXPECT(rdma_destroy_id(l) == 0);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
	printf("rdmacm_connect: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
