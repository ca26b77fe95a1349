/* SPDX-License-Identifier: MIT */
/* RC responder's owed responses: READ responses, atomic ACKs, ACKs and NAKs, sent in PSN order and in bounded bursts. */
#include "engine.h"
#include "rocemu/range.h"

static const enum rocemu_counter nak_counter[] = {
	[ROCE_NAK_PSN_SEQ] = ROCEMU_CNT_NAK_SENT_SEQ,
	[ROCE_NAK_INV_REQ] = ROCEMU_CNT_NAK_SENT_INV_REQ,
	[ROCE_NAK_REM_ACCESS] = ROCEMU_CNT_NAK_SENT_REM_ACCESS,
	[ROCE_NAK_REM_OP] = ROCEMU_CNT_NAK_SENT_REM_OP,
};

static void send_aeth(struct rocemu_qp *qp, uint32_t psn, uint8_t syn)
{
	struct roce_ib ib = { 0 };
	unsigned type = roce_aeth_type(syn), code = roce_aeth_value(syn);

	if (type == ROCE_AETH_ACK)
		dev_count(qp->dev, ROCEMU_CNT_ACKS_SENT);
	else if (type == ROCE_AETH_RNR_NAK)
		dev_count(qp->dev, ROCEMU_CNT_NAK_SENT_RNR);
	else if (code <= ROCE_NAK_REM_OP)
		dev_count(qp->dev, nak_counter[code]);
	ib.bth.opcode = ROCE_OP_RC_ACK;
	ib.bth.psn = psn;
	ib.aeth.syndrome = syn;
	ib.aeth.msn = resp_msn(qp, qp->resp.msn);
	qp_send_packet(qp, &ib);
}

/* Puts qp on the world's list of QPs with responses owed. Only the
 * engines owe responses, and look at the list before they rest. */
static void schedule(struct rocemu_qp *qp)
{
	qp_owe_responses(qp);
}

/* The resource whose response is owed first: the lowest PSN. */
static struct rd_res *oldest_owed(struct rocemu_qp *qp)
{
	struct rd_res *best = NULL;

	/* Most responders owe only ACKs: no scan of every resource then. */
	if (!qp->resp.res_owed)
		return NULL;
	for (unsigned i = 0; i < qp->resp.nres; i++) {
		struct rd_res *r = &qp->resp.res[i];
		if (r->valid && r->owed &&
		    (!best || roce_psn_cmp(r->next_psn, best->next_psn) < 0))
			best = r;
	}
	qp->resp.res_owed = best != NULL;
	return best;
}

static void drop_owed(struct rocemu_qp *qp)
{
	for (unsigned i = 0; i < qp->resp.nres; i++)
		qp->resp.res[i].owed = false;
	qp->resp.ack_owed = false;
	qp->resp.fatal_owed = false;
}

/* A fatal NAK: sent, the receive WQE in use completed, the QP to ERROR. */
static void end_with_nak(struct rocemu_qp *qp, uint32_t psn, uint8_t syn,
			 enum ibv_event_type ev, enum ibv_wc_status recv_status)
{
	drop_owed(qp);
	send_aeth(qp, psn, syn);
	if (qp->resp.have_wqe && recv_status != IBV_WC_WR_FLUSH_ERR) {
		struct ibv_wc wc = { .wr_id = qp->resp.wqe.wr_id,
				     .status = recv_status,
				     .opcode = IBV_WC_RECV, .qp_num = qp->qpn };
		cq_push(qp->rcq, &wc, false);
		qp->resp.have_wqe = false;
	}
	qp_error(qp, ev);
}

/* Sends the owed ACK or NAK; false if it ended the QP. */
static bool send_owed_aeth(struct rocemu_qp *qp)
{
	if (qp->resp.fatal_owed) {
		end_with_nak(qp, qp->resp.ack_psn, qp->resp.ack_syn,
			     qp->resp.fatal_ev, qp->resp.fatal_status);
		return false;
	}
	qp->resp.ack_owed = false;
	send_aeth(qp, qp->resp.ack_psn, qp->resp.ack_syn);
	return true;
}

/*
 * Whether syn at psn may stand for the response owed: a later one covers
 * what the earlier said (C9-116: a NAK acknowledges what came before it),
 * an ACK at a NAK's PSN means that request got in after all, and a
 * NAK-sequence never hides an RNR NAK at the same PSN, whose timer the
 * requester must wait out.
 */
static bool supersedes(const struct rocemu_qp *qp, uint32_t psn, uint8_t syn)
{
	int32_t d = roce_psn_cmp(psn, qp->resp.ack_psn);

	if (d)
		return d > 0;
	return !(roce_aeth_type(qp->resp.ack_syn) == ROCE_AETH_RNR_NAK &&
		 roce_aeth_type(syn) == ROCE_AETH_NAK);
}

void resp_owe_aeth(struct rocemu_qp *qp, uint32_t psn, uint8_t syn)
{
	if (qp->resp.fatal_owed)
		return; /* nothing goes out after the end */
	/* With nothing owed ahead of it a NAK goes now, after the ACK
	 * coalesced so far; an ACK waits for the end of the step. */
	if (roce_aeth_type(syn) != ROCE_AETH_ACK && !oldest_owed(qp)) {
		if (qp->resp.ack_owed)
			send_owed_aeth(qp);
		send_aeth(qp, psn, syn);
		return;
	}
	if (!qp->resp.ack_owed || supersedes(qp, psn, syn)) {
		qp->resp.ack_psn = psn;
		qp->resp.ack_syn = syn;
	}
	qp->resp.ack_owed = true;
	schedule(qp);
}

void resp_owe_fatal(struct rocemu_qp *qp, uint32_t psn, uint8_t syn,
		    enum ibv_event_type ev, enum ibv_wc_status recv_status)
{
	if (qp->resp.fatal_owed)
		return;
	if (!oldest_owed(qp)) {
		if (qp->resp.ack_owed)
			send_owed_aeth(qp);
		end_with_nak(qp, psn, syn, ev, recv_status);
		return;
	}
	/* READ responses and atomic ACKs before it go first: the requester
	 * then completes those, and fails the request this NAK names. */
	qp->resp.ack_psn = psn;
	qp->resp.ack_syn = syn;
	qp->resp.ack_owed = qp->resp.fatal_owed = true;
	qp->resp.fatal_ev = ev;
	qp->resp.fatal_status = recv_status;
	schedule(qp);
}

/*
 * A READ may ask for 2 GiB. Its response packets go out in bursts, the
 * rest waiting in its resource, so that the wire's queue and the
 * requester's receive buffer get what they can take, and the responder
 * reads the requests arriving meanwhile (a retry among them). rxe sends
 * one packet per step and pauses while 64 of a QP's packets wait in the
 * NIC's queue.
 *
 * On the loopback wire a burst of RESP_BURST leaves once the one before
 * has crossed the wire (one latency). Over UDP a burst leaves per pass of
 * the engines, and a full socket holds them back (wire_busy). But a
 * socket on the same host never fills: what the requester has no room
 * for is lost at its end, and the sign of it is the requester asking for
 * a READ again from a PSN already sent. Then the response pauses, to let
 * the requester take in what it holds, and goes on paced: one packet per
 * pace_ns, PACE_BUCKET at most at once (a rate limiter as in DCQCN, with
 * the retry for the congestion notice), twice the time per packet it had
 * taken so far, shrinking by 1/2^PACE_DECAY per packet until it is no
 * longer needed.
 */
enum {
	RESP_BURST = 16,
	/* Over UDP a pass's burst goes as one GSO send where it can: up to
	 * 62 packets at MTU 1024 (16 had READ at half WRITE's bandwidth). */
	RESP_BURST_UDP = 64,
	PACE_BUCKET = 64,	/* a millisecond's worth at the usual paces */
	PACE_DECAY = 12,	/* halves in some 2800 packets */
	PACE_MIN_NS = 500,
	PACE_MAX_NS = 250000,	/* 4000 packets a second */
};

/* Packets of one burst: a latency's worth on the loopback wire, a
 * pass's over UDP. */
static unsigned burst_size(const struct rocemu_qp *qp)
{
	return qp->dev->core->real_time ? RESP_BURST_UDP : RESP_BURST;
}

static bool paced(const struct rocemu_qp *qp)
{
	return qp->dev->core->real_time && qp->resp.pace_ns;
}

/* The slack of the paced rate: the bucket's depth, in time. */
static uint64_t pace_slack(const struct rocemu_qp *qp)
{
	return (PACE_BUCKET - 1) * qp->resp.pace_ns;
}

/*
 * READ response packets qp may send now. Unpaced, the bursts begin
 * next_burst apart: one latency on the loopback wire, one pass (a new
 * reading of the clock) over UDP. Paced, next_burst is when the next
 * packet is due at the rate, and as many go as the slack allows.
 */
static unsigned burst_left(const struct rocemu_qp *qp)
{
	const struct core *c = qp->dev->core;
	uint64_t ahead = c->now + (paced(qp) ? pace_slack(qp) : 0);

	if (paced(qp)) {
		if (ahead < qp->resp.next_burst)
			return 0;
		uint64_t n = (ahead - qp->resp.next_burst) / qp->resp.pace_ns;
		n++;
		return n < PACE_BUCKET ? (unsigned)n : PACE_BUCKET;
	}
	if (c->now >= qp->resp.next_burst)
		return burst_size(qp); /* a new burst may begin */
	return qp->resp.burst_sent >= burst_size(qp)
		       ? 0 : burst_size(qp) - qp->resp.burst_sent;
}

/* When burst_left will be more than 0 (over UDP unpaced: the next pass). */
static uint64_t burst_due(const struct rocemu_qp *qp)
{
	if (paced(qp))
		return qp->resp.next_burst > pace_slack(qp)
			       ? qp->resp.next_burst - pace_slack(qp) : 0;
	return qp->dev->core->real_time ? qp->dev->core->now
					 : qp->resp.next_burst;
}

/* Counts one READ response packet sent now. */
static void burst_count(struct rocemu_qp *qp)
{
	struct core *c = qp->dev->core;

	if (paced(qp)) {
		uint64_t t = qp->resp.next_burst > c->now ? qp->resp.next_burst
							 : c->now;
		qp->resp.next_burst = t + qp->resp.pace_ns;
		qp->resp.pace_ns -= qp->resp.pace_ns >> PACE_DECAY;
		if (qp->resp.pace_ns < PACE_MIN_NS)
			qp->resp.pace_ns = 0;
		return;
	}
	if (c->now >= qp->resp.next_burst) {
		if (qp->resp.burst_sent == burst_size(qp))
			qp->resp.gap_ns = c->now - qp->resp.burst_at;
		qp->resp.burst_at = c->now;
		qp->resp.burst_sent = 0;
		qp->resp.next_burst = c->now + wire_burst_gap(qp->dev->port);
	}
	qp->resp.burst_sent++;
}

/* The requester lost READ responses for want of room (UDP only: the
 * loopback wire loses at random, not for want of room). */
static void slow_down(struct rocemu_qp *qp)
{
	struct core *c = qp->dev->core;
	uint64_t was = qp->resp.gap_ns / burst_size(qp);

	if (!c->real_time)
		return;
	if (qp->resp.pace_ns > was)
		was = qp->resp.pace_ns;
	qp->resp.pace_ns = 2 * was < PACE_MIN_NS   ? PACE_MIN_NS
			   : 2 * was > PACE_MAX_NS ? PACE_MAX_NS
						   : 2 * was;
	/* nothing for the time a full bucket takes */
	qp->resp.next_burst = c->now + 2 * pace_slack(qp);
}

/* Whether slot r may take a new READ or atomic: free, or answered in
 * full once (what a retry of it still asks for is then given up, as rxe
 * gives up its oldest resource). A response never sent in full is kept:
 * a requester that runs ahead of max_dest_rd_atomic must not lose it. */
static bool reusable(const struct rd_res *r)
{
	return !r->valid || r->answered || !r->owed;
}

struct rd_res *resp_new_res(struct rocemu_qp *qp)
{
	for (unsigned k = 0; k < qp->resp.nres; k++) {
		struct rd_res *r =
			&qp->resp.res[(qp->resp.res_next + k) % qp->resp.nres];
		if (!reusable(r))
			continue;
		qp->resp.res_next = (qp->resp.res_next + k + 1) % qp->resp.nres;
		*r = (struct rd_res){ .valid = true, .owed = true };
		qp->resp.res_owed = true;
		schedule(qp);
		return r;
	}
	return NULL;
}

/* The memory a response packet reads: the MR or window the READ
 * executed against, looked up again (it may have been deregistered,
 * invalidated or rebound since); where va is in memory into *mem. */
static bool read_source_ok(const struct rocemu_qp *qp, const struct rd_res *r,
			   uint64_t va, uint32_t n, uint8_t **mem)
{
	return rkey_resolve(qp, r->rkey, va, n, IBV_ACCESS_REMOTE_READ, mem) ==
	       r->mr_serial;
}

uint32_t resp_msn(const struct rocemu_qp *qp, uint32_t msn)
{
	/* test-only (device.h): the MSN stays 0 */
	if (dev_misbehaves(qp->dev, ROCEMU_MISBEHAVE_MSN_FROZEN))
		return 0;
	return msn & ROCE_PSN_MASK;
}

bool resp_replay(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn;
	unsigned fl = ib->op->flags;

	for (unsigned i = 0; i < qp->resp.nres; i++) {
		struct rd_res *r = &qp->resp.res[i];
		if (!r->valid || roce_psn_cmp(psn, r->first_psn) < 0 ||
		    roce_psn_cmp(psn, r->last_psn) > 0)
			continue;
		uint64_t off = (uint64_t)roce_psn_diff(psn, r->first_psn) *
			       qp_mtu(qp);
		uint64_t at;
		bool same_atomic = r->atomic && (fl & ROCE_OPF_ATOMIC) &&
				   psn == r->first_psn;
		/* A READ must ask for a tail of the original: same key, the
		 * address and length its PSN implies. */
		bool same_read = !r->atomic && (fl & ROCE_OPF_READ) &&
				 ib->reth.rkey == r->rkey && off <= r->len &&
				 roce_range_end(r->va, off, &at) &&
				 ib->reth.va == at &&
				 ib->reth.len == r->len - off;
		/* FLUSH, ATOMIC WRITE: the answer again, nothing redone */
		bool same_placement = r->placement && psn == r->first_psn &&
				      (ib->bth.opcode == ROCE_OP_RC_FLUSH ||
				       ib->bth.opcode ==
					       ROCE_OP_RC_ATOMIC_WRITE);
		if (same_placement) {
			r->next_psn = psn;
			r->owed = true;
			qp->resp.res_owed = true;
			schedule(qp);
			return true;
		}
		if (!same_atomic && !same_read)
			continue;
		/* A late retry of a READ whose MR has gone since is answered
		 * with nothing, as before the response was paced: the QP
		 * itself did nothing wrong. */
		uint8_t *mem;
		if (same_read && ib->reth.len &&
		    !read_source_ok(qp, r, ib->reth.va, ib->reth.len, &mem))
			return false;
		/* Restarted from there, not sent a second time beside what is
		 * still owed: the requester took nothing after that PSN. */
		if (same_read && (!r->owed ||
				  roce_psn_cmp(psn, r->next_psn) < 0))
			slow_down(qp);
		r->next_psn = psn;
		r->owed = true;
		qp->resp.res_owed = true;
		schedule(qp);
		return true;
	}
	return false;
}

static void send_atomic_ack(struct rocemu_qp *qp, struct rd_res *r)
{
	struct roce_ib ib = { 0 };

	ib.bth.opcode = ROCE_OP_RC_ATOMIC_ACK;
	ib.bth.psn = r->first_psn;
	ib.aeth.syndrome = ROCE_AETH_ACK_NO_CREDITS;
	ib.aeth.msn = resp_msn(qp, r->msn);
	ib.atmack = r->orig;
	qp_send_packet(qp, &ib);
	r->owed = false;
	r->answered = true;
}

/*
 * The next response packet of a READ; false if it ended the QP. A
 * response restarted inside the READ begins with MIDDLE (or LAST), as
 * rxe does. If the MR went away since the READ executed, the rest of the
 * response becomes a NAK remote access error at this PSN and the QP goes
 * to ERROR, as for a WRITE: nothing is read from memory given back.
 */
static bool send_read_packet(struct rocemu_qp *qp, struct rd_res *r)
{
	uint32_t mtu = qp_mtu(qp), psn = r->next_psn;
	uint64_t off = (uint64_t)roce_psn_diff(psn, r->first_psn) * mtu;
	uint32_t n = r->len - off < mtu ? (uint32_t)(r->len - off) : mtu;
	bool first = psn == r->first_psn, last = psn == r->last_psn;
	struct roce_ib ib = { 0 };
	uint8_t bounce[4096];	/* the largest MTU */
	const uint8_t *data = NULL;

	uint8_t *mem = NULL;
	uint64_t at;
	/* A page of on-demand memory may be gone since the READ executed:
	 * ended as if its MR were. */
	if (n && (!roce_range_end(r->va, off, &at) ||
		  !read_source_ok(qp, r, at, n, &mem) ||
		  !(data = mem_view(qp->pd->dev, (uint64_t)(uintptr_t)mem, n,
				    bounce)))) {
		if (r->answered) {
			r->owed = false; /* a replay stops short */
			return true;
		}
		end_with_nak(qp, psn, ROCE_AETH_NAK_REM_ACCESS,
			     IBV_EVENT_QP_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR);
		return false;
	}
	ib.bth.opcode = first ? (last ? ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY
				      : ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST)
			      : (last ? ROCE_OP_RC_RDMA_READ_RESPONSE_LAST
				      : ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	ib.bth.psn = psn;
	ib.aeth.syndrome = ROCE_AETH_ACK_NO_CREDITS;
	ib.aeth.msn = resp_msn(qp, r->msn);
	ib.payload = data;
	ib.payload_len = n;
	qp_send_packet(qp, &ib);
	r->next_psn = roce_psn_add(psn, 1);
	r->owed = !last;
	r->answered |= last;
	return true;
}

static bool owes(struct rocemu_qp *qp)
{
	return qp->resp.ack_owed || oldest_owed(qp);
}

/* A QP that cannot answer (RESET, INIT, ERROR) owes nothing any more. */
static bool can_respond(const struct rocemu_qp *qp)
{
	return qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS ||
	       qp->state == IBV_QPS_SQD;
}

/* What qp owes first: the owed ACK or NAK (r NULL), or r's response. */
static bool next_owed(struct rocemu_qp *qp, struct rd_res **r)
{
	*r = oldest_owed(qp);
	if (qp->resp.ack_owed &&
	    (!*r || roce_psn_cmp(qp->resp.ack_psn, (*r)->next_psn) < 0))
		*r = NULL;
	return *r || qp->resp.ack_owed;
}

/*
 * next_owed, knowing that prev was the oldest owed response a packet ago:
 * a READ response still owed stays the oldest (the READs after it begin
 * at higher PSNs), so the scan of every resource is left out.
 */
static bool next_owed_after(struct rocemu_qp *qp, struct rd_res *prev,
			    struct rd_res **r)
{
	if (prev && !prev->atomic && prev->owed &&
	    (!qp->resp.ack_owed ||
	     roce_psn_cmp(qp->resp.ack_psn, prev->next_psn) >= 0)) {
		*r = prev;
		return true;
	}
	return next_owed(qp, r);
}

unsigned resp_run(struct rocemu_qp *qp)
{
	unsigned sent = 0;
	struct rd_res *r = NULL;

	if (!can_respond(qp)) {
		drop_owed(qp);
		return 0;
	}
	while (!wire_busy(qp->dev->port) && next_owed_after(qp, r, &r)) {
		bool more = true;
		if (!r) {
			more = send_owed_aeth(qp);
		} else if (r->atomic) {
			send_atomic_ack(qp, r);
		} else if (burst_left(qp)) {
			burst_count(qp);
			more = send_read_packet(qp, r);
		} else {
			break; /* the next burst waits for its time */
		}
		sent++;
		if (!more)
			return sent; /* the QP has ended */
	}
	if (owes(qp))
		schedule(qp);
	return sent;
}

bool resp_due(struct rocemu_qp *qp, uint64_t *when)
{
	struct rd_res *r;

	if (!can_respond(qp) || !next_owed(qp, &r))
		return false;
	*when = qp->dev->core->now;
	if (r && !r->atomic && !burst_left(qp))
		*when = burst_due(qp);
	return true;
}
