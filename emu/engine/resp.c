/* SPDX-License-Identifier: MIT */
/* RC and UC responder: request packets into memory effects, and the responses they owe. */
#include <errno.h>
#include <string.h>

#include "engine.h"
#include "rocemu/range.h"

/*
 * ACKs are coalesced: every packet that asks for one moves the PSN owed,
 * and one ACK goes out when the frames due now have all been taken in,
 * after the READ responses and atomic ACKs owed before it.
 */
static void owe_ack(struct rocemu_qp *qp, uint32_t psn)
{
	resp_owe_aeth(qp, psn, ROCE_AETH_ACK_NO_CREDITS);
}

/* UC answers nothing: what RC would NAK, it drops with the rest of the
 * message, and the receive WQE waits for the next one (IBTA 9.7.5.1.x). */
static void uc_drop_message(struct rocemu_qp *qp)
{
	dev_count(qp->dev, ROCEMU_CNT_RX_DROP_UC_MESSAGE);
	qp->resp.in_msg = false;
	qp->resp.drop_msg = true;
	qp->resp.recvd = 0;
}

/* A fatal NAK (syndrome syn): the responder QP goes to ERROR after
 * sending it (C9-129). why (NULL: the caller gave the reason) says why,
 * under rule, in explain mode. */
static void nak_fatal(struct rocemu_qp *qp, uint8_t syn, uint32_t psn,
		      enum ibv_wc_status recv_status, const char *rule,
		      const char *why)
{
	if (why)
		why_nak(qp, syn, psn, rule, "%s", why);
	if (qp_is(qp, IBV_QPT_UC) && recv_status != IBV_WC_LOC_LEN_ERR) {
		uc_drop_message(qp);
		return;
	}
	if (qp_is(qp, IBV_QPT_UC)) {
		/* a receive too small still completes in error */
		struct ibv_wc wc = { .wr_id = qp->resp.wqe.wr_id,
				     .status = recv_status,
				     .opcode = IBV_WC_RECV, .qp_num = qp->qpn };
		cq_push(qp->rcq, &wc, false);
		qp->resp.have_wqe = false;
		uc_drop_message(qp);
		return;
	}
	enum ibv_event_type ev =
		syn == ROCE_AETH_NAK_REM_ACCESS ? IBV_EVENT_QP_ACCESS_ERR
		: syn == ROCE_AETH_NAK_INV_REQ	? IBV_EVENT_QP_REQ_ERR
						: IBV_EVENT_QP_FATAL;
	/* test-only (device.h): the wrong NAK code on the wire for an
	 * R_Key error; the local event stays the access error it is */
	if (syn == ROCE_AETH_NAK_REM_ACCESS &&
	    dev_misbehaves(qp->dev, ROCEMU_MISBEHAVE_RKEY_NAK_INVALID))
		syn = ROCE_AETH_NAK_INV_REQ;
	resp_owe_fatal(qp, psn, syn, ev, recv_status);
}

static void send_rnr(struct rocemu_qp *qp, uint32_t psn)
{
	if (qp_is(qp, IBV_QPT_UC)) { /* no RNR on UC: the message is lost */
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_NO_RECV);
		dev_why(qp->dev, ROCEMU_WHY_DROP, qp->qpn, NULL, 0, "IBTA 9.8.3",
			"drop: UC qp 0x%x has no receive WQE posted (%s empty): "
			"the message at psn 0x%x is lost (UC has no RNR NAK)",
			qp->qpn, qp->srq ? "its SRQ" : "RQ", psn);
		uc_drop_message(qp);
		return;
	}
	why_nak(qp, ROCE_AETH_RNR_NAK << 5, psn, "IBTA 9.7.5.2.8",
		"qp 0x%x has no receive WQE posted (%s empty)", qp->qpn,
		qp->srq ? "its SRQ" : "RQ");
	/* test-only (device.h): timer code 0 whatever the QP says */
	bool zero = dev_misbehaves(qp->dev, ROCEMU_MISBEHAVE_RNR_TIMER_ZERO);
	resp_owe_aeth(qp, psn,
		      roce_aeth_syndrome(ROCE_AETH_RNR_NAK,
					 zero ? 0 : qp->attr.min_rnr_timer));
}

/*
 * SEND with Invalidate: only a type 2 memory window (bound through this
 * QP) or a fast-registration MR may be invalidated by the peer (the
 * IBTA's invalidation rules, 10.6.7.2.x); rocemu has no fast-registration
 * MRs, so any other R_Key, an ordinary MR's included, is refused and
 * stays valid. The request is then an invalid request (rxe refuses it
 * too, though it still ACKs the packet; see conformance/differences.md). check_only
 * tests it before the payload is placed; the window goes once the
 * message is.
 */
static int invalidate_rkey(struct rocemu_qp *qp, uint32_t rkey,
			   bool check_only)
{
	return mw_invalidate(qp, rkey, true, check_only);
}

/* Takes the next receive WQE; false (an RNR NAK is due) if none. */
static bool take_rwqe(struct rocemu_qp *qp)
{
	if (qp->resp.have_wqe)
		return true;
	if (!qp_take_recv(qp, &qp->resp.wqe))
		return false;
	qp->resp.have_wqe = true;
	qp->resp.recvd = 0;
	return true;
}

static void complete_recv(struct rocemu_qp *qp, const struct roce_ib *ib,
			  enum ibv_wc_opcode opcode, uint32_t len)
{
	struct ibv_wc wc = { .wr_id = qp->resp.wqe.wr_id,
			     .status = IBV_WC_SUCCESS, .opcode = opcode,
			     .byte_len = len, .qp_num = qp->qpn,
			     .src_qp = qp->attr.dest_qp_num };

	if (ib->exts & ROCE_EXT_IMMDT) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = htobe32(ib->imm);
	}
	if (ib->exts & ROCE_EXT_IETH) {
		wc.wc_flags |= IBV_WC_WITH_INV;
		wc.invalidated_rkey = ib->ieth;
	}
	qp->resp.have_wqe = false;
	cq_push(qp->rcq, &wc, ib->bth.se);
}

/* Payload size rules that need the path MTU (IBTA 9.7.5.1): FIRST and
 * MIDDLE exactly it, LAST 1 byte up to it, ONLY up to it. */
static bool length_ok(const struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t n = ib->payload_len, mtu = qp_mtu(qp);
	unsigned fl = ib->op->flags;

	if (fl & (ROCE_OPF_FIRST | ROCE_OPF_MIDDLE))
		return n == mtu;
	if (fl & ROCE_OPF_LAST)
		return n >= 1 && n <= mtu;
	return n <= mtu;
}

/* In a multi-packet message only its MIDDLE or LAST may come next. */
static bool sequence_ok(const struct rocemu_qp *qp, const struct roce_ib *ib)
{
	unsigned fl = ib->op->flags;
	unsigned kind = fl & (ROCE_OPF_SEND | ROCE_OPF_WRITE);
	bool cont = fl & (ROCE_OPF_MIDDLE | ROCE_OPF_LAST);

	if (qp->resp.in_msg)
		return cont && kind == qp->resp.msg_op;
	return !cont;
}

/* Each handler returns true when the packet was accepted, so that the
 * expected PSN moves on; an RNR NAK or an error leaves it. */
static bool do_send(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	unsigned fl = ib->op->flags;
	uint32_t psn = ib->bth.psn;

	if (!take_rwqe(qp)) {
		send_rnr(qp, psn);
		return false;
	}
	if (!roce_range_inside(qp->resp.recvd, ib->payload_len, 0,
			       qp->resp.wqe.length)) {
		why_nak(qp, ROCE_AETH_NAK_INV_REQ, psn, "IBTA 9.7.5.1",
			"%s of %u bytes so far does not fit receive WQE wr_id "
			"%llu of %u bytes", ib->op->name,
			qp->resp.recvd + ib->payload_len,
			(unsigned long long)qp->resp.wqe.wr_id,
			qp->resp.wqe.length);
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_LOC_LEN_ERR,
			  NULL, NULL);
		return false;
	}
	/* Refused before its payload is placed: a receive buffer is not
	 * written for a message that fails. */
	if ((ib->exts & ROCE_EXT_IETH) && invalidate_rkey(qp, ib->ieth, true)) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn,
			  IBV_WC_REM_INV_REQ_ERR, "IBTA 10.6.7.2",
			  "SEND with Invalidate names no type 2 memory window "
			  "bound through this QP");
		return false;
	}
	if (sge_copy_to(qp->pd, qp->resp.wqe.sg, qp->resp.wqe.num_sge,
			qp->resp.recvd, ib->payload, ib->payload_len,
			IBV_ACCESS_LOCAL_WRITE)) {
		nak_fatal(qp, ROCE_AETH_NAK_REM_OP, psn, IBV_WC_LOC_PROT_ERR,
			  "IBTA 9.7.5.1",
			  "a local key (lkey) of the receive WQE is not good "
			  "for the bytes that arrived");
		return false;
	}
	qp->resp.recvd += ib->payload_len;
	qp->resp.in_msg = !(fl & (ROCE_OPF_LAST | ROCE_OPF_ONLY));
	qp->resp.msg_op = ROCE_OPF_SEND;
	if (qp->resp.in_msg)
		return true;
	qp->resp.msn++;
	if (ib->exts & ROCE_EXT_IETH) /* checked above, before placing */
		invalidate_rkey(qp, ib->ieth, false);
	complete_recv(qp, ib, IBV_WC_RECV, qp->resp.recvd);
	return true;
}

static bool qp_allows(const struct rocemu_qp *qp, int access)
{
	return (qp->attr.qp_access_flags & access) == (unsigned)access;
}

/*
 * Every packet of a WRITE looks its MR or window up again: one
 * deregistered, invalidated or bound anew (even under the same key) since
 * the first packet ends the message with a NAK, and nothing is written
 * into memory the application may already have freed. Where its payload
 * goes into *mem.
 */
static bool write_target_ok(const struct rocemu_qp *qp, uint32_t n,
			    uint8_t **mem)
{
	return rkey_resolve(qp, qp->resp.rkey, qp->resp.va, n,
			    IBV_ACCESS_REMOTE_WRITE, mem) == qp->resp.mr_serial;
}

static bool do_write(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	unsigned fl = ib->op->flags;
	uint32_t psn = ib->bth.psn;
	bool starts = fl & (ROCE_OPF_FIRST | ROCE_OPF_ONLY);
	bool ends = fl & (ROCE_OPF_LAST | ROCE_OPF_ONLY);

	/* rxe answers a QP without remote write with Invalid Request. */
	if (!qp_allows(qp, IBV_ACCESS_REMOTE_WRITE)) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1, as rxe",
			  "the QP's qp_access_flags lack "
			  "IBV_ACCESS_REMOTE_WRITE");
		return false;
	}
	/* WRITE with immediate consumes a receive WQE: check before writing. */
	if ((ib->exts & ROCE_EXT_IMMDT) && !take_rwqe(qp)) {
		send_rnr(qp, psn);
		return false;
	}
	if (starts) {
		qp->resp.va = ib->reth.va;
		qp->resp.rkey = ib->reth.rkey;
		qp->resp.resid = qp->resp.write_len = ib->reth.len;
		qp->resp.mr_serial = 0;
		if (ib->reth.len > MAX_MR_SIZE) {
			nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn,
				  IBV_WC_WR_FLUSH_ERR, "IBTA 9.7.5.1",
				  "RETH length is above 2^31");
			return false;
		}
		uint8_t *mem;
		if (ib->reth.len &&
		    !(qp->resp.mr_serial = rkey_resolve(qp, ib->reth.rkey,
							ib->reth.va,
							ib->reth.len,
							IBV_ACCESS_REMOTE_WRITE,
							&mem))) {
			why_rkey_nak(qp, ib, ib->reth.rkey, ib->reth.va,
				     ib->reth.len, IBV_ACCESS_REMOTE_WRITE);
			nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
				  IBV_WC_WR_FLUSH_ERR, NULL, NULL);
			return false;
		}
	}
	/* The packets must add up to the RETH length exactly. */
	if (ib->payload_len > qp->resp.resid ||
	    (ends && ib->payload_len != qp->resp.resid)) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1",
			  "the WRITE's packets do not add up to its RETH "
			  "length");
		return false;
	}
	uint8_t *mem = NULL;
	if (ib->payload_len && !write_target_ok(qp, ib->payload_len, &mem)) {
		why_rkey_nak(qp, ib, qp->resp.rkey, qp->resp.va,
			     ib->payload_len, IBV_ACCESS_REMOTE_WRITE);
		nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
			  IBV_WC_WR_FLUSH_ERR, NULL, NULL);
		return false;
	}
	/* A page of on-demand memory may be gone: a NAK, not a fault. A
	 * zero-length WRITE may name address 0: nothing is touched. */
	if (ib->payload_len && mem_put(qp->pd->dev, (uint64_t)(uintptr_t)mem,
				       ib->payload, ib->payload_len)) {
		nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
			  IBV_WC_WR_FLUSH_ERR, "IBTA 9.7.5.1, 10.6",
			  "a page of the on-demand MR written to is not "
			  "mapped writable");
		return false;
	}
	qp->resp.va += ib->payload_len;
	qp->resp.resid -= ib->payload_len;
	qp->resp.in_msg = !ends;
	qp->resp.msg_op = ROCE_OPF_WRITE;
	if (!ends)
		return true;
	qp->resp.msn++;
	if (ib->exts & ROCE_EXT_IMMDT)
		complete_recv(qp, ib, IBV_WC_RECV_RDMA_WITH_IMM,
			      qp->resp.write_len);
	return true;
}

static void do_read(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn, len = ib->reth.len, mtu = qp_mtu(qp);

	if (!qp_allows(qp, IBV_ACCESS_REMOTE_READ) ||
	    !qp->attr.max_dest_rd_atomic || len > MAX_MR_SIZE) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1, as rxe",
			  !qp_allows(qp, IBV_ACCESS_REMOTE_READ)
				  ? "the QP's qp_access_flags lack "
				    "IBV_ACCESS_REMOTE_READ"
			  : !qp->attr.max_dest_rd_atomic
				  ? "the QP has max_dest_rd_atomic 0"
				  : "RETH length is above 2^31");
		return;
	}
	/* A zero-length READ skips the key check (IBTA 9.4.3). */
	uint64_t serial = 0;
	uint8_t *mem;
	if (len && !(serial = rkey_resolve(qp, ib->reth.rkey, ib->reth.va, len,
					   IBV_ACCESS_REMOTE_READ, &mem))) {
		why_rkey_nak(qp, ib, ib->reth.rkey, ib->reth.va, len,
			     IBV_ACCESS_REMOTE_READ);
		nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
			  IBV_WC_WR_FLUSH_ERR, NULL, NULL);
		return;
	}
	uint32_t n = len ? (len + mtu - 1) / mtu : 1;
	struct rd_res *r = resp_new_res(qp);
	if (!r) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1",
			  "no responder resource free for the READ "
			  "(max_dest_rd_atomic)");
		return;
	}
	r->first_psn = r->next_psn = psn;
	r->last_psn = roce_psn_add(psn, n - 1);
	r->va = ib->reth.va;
	r->rkey = ib->reth.rkey;
	r->len = len;
	r->mr_serial = serial;
	r->msn = ++qp->resp.msn; /* C9-148: a READ counts when it executes */
	/* The responses go out from the world's step, a burst at a time. */
	qp->resp.psn = roce_psn_add(psn, n);
}

/* Applies the atomic ib asks for and keeps its result in a new responder
 * resource, its ACK owed; NULL after a NAK (memory then unchanged). The
 * caller gives the resource its MSN and moves the expected PSN. */
static struct rd_res *atomic_apply(struct rocemu_qp *qp,
				   const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn;
	const struct roce_atmeth *a = &ib->atmeth;
	uint64_t orig, v;

	if (!qp_allows(qp, IBV_ACCESS_REMOTE_ATOMIC) ||
	    !qp->attr.max_dest_rd_atomic || (a->va & 7)) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1, 9.4.5",
			  (a->va & 7) ? "the atomic's va is not 8-byte aligned"
			  : !qp->attr.max_dest_rd_atomic
				  ? "the QP has max_dest_rd_atomic 0"
				  : "the QP's qp_access_flags lack "
				    "IBV_ACCESS_REMOTE_ATOMIC");
		return NULL;
	}
	uint8_t *mem;
	if (!rkey_resolve(qp, a->rkey, a->va, 8, IBV_ACCESS_REMOTE_ATOMIC,
			  &mem)) {
		why_rkey_nak(qp, ib, a->rkey, a->va, 8,
			     IBV_ACCESS_REMOTE_ATOMIC);
		nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
			  IBV_WC_WR_FLUSH_ERR, NULL, NULL);
		return NULL;
	}
	/* The operand is a host-order 64-bit value, as on rxe. A page of
	 * on-demand memory may be gone, or read-only: a NAK, not a fault. */
	struct rocemu_dev *d = qp->pd->dev;
	uint64_t at = (uint64_t)(uintptr_t)mem; /* a window's may differ */
	if (mem_get(d, &orig, at, 8)) {
		nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
			  IBV_WC_WR_FLUSH_ERR, "IBTA 9.7.5.1, 10.6",
			  "a page of the on-demand MR is not mapped as the "
			  "atomic needs");
		return NULL;
	}
	if (ib->bth.opcode == ROCE_OP_RC_CMP_SWAP)
		v = orig == a->compare ? a->swap_add : orig;
	else
		v = orig + a->swap_add;
	if (mem_put(d, at, &v, 8)) {
		nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
			  IBV_WC_WR_FLUSH_ERR, "IBTA 9.7.5.1, 10.6",
			  "a page of the on-demand MR is not mapped as the "
			  "atomic needs");
		return NULL;
	}
	/* Its ACK is owed, in order after the responses before it. */
	struct rd_res *r = resp_new_res(qp);
	if (!r) {
		mem_put(d, at, &orig, 8); /* undone: it is refused */
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1",
			  "no responder resource free for the atomic "
			  "(max_dest_rd_atomic)");
		return NULL;
	}
	r->atomic = true;
	r->first_psn = r->last_psn = r->next_psn = psn;
	r->va = a->va;
	r->rkey = a->rkey;
	r->len = 8;
	r->orig = orig;
	return r;
}

static void do_atomic(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	struct rd_res *r = atomic_apply(qp, ib);

	if (!r)
		return;
	r->msn = ++qp->resp.msn;
	qp->resp.psn = roce_psn_add(ib->bth.psn, 1);
}

/* Test-only (device.h, dup_atomic_reexec): a duplicate atomic whose
 * result is saved is applied to the memory again and its new original
 * value answered. Only that: its ACK carries the saved MSN, the expected
 * PSN and the message count stay. False if no result is saved (it is
 * then dropped as the rule has it). */
static bool atomic_again(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	const struct rd_res *saved = NULL;

	for (unsigned i = 0; i < qp->resp.nres && !saved; i++)
		if (qp->resp.res[i].valid && qp->resp.res[i].atomic &&
		    qp->resp.res[i].first_psn == ib->bth.psn)
			saved = &qp->resp.res[i];
	if (!saved)
		return false;
	uint32_t msn = saved->msn; /* its slot may be taken next */
	struct rd_res *r = atomic_apply(qp, ib);
	if (r)
		r->msn = msn;
	return true;
}

/*
 * IBTA 1.5 ATOMIC WRITE: the 8-byte payload stored at the RETH's address
 * as one aligned 64-bit store, answered as rxe does by a zero-length READ
 * response (resp_flush.c) that also moves the expected PSN. As rxe: the QP
 * needs remote write (else Invalid Request), the R_Key remote write over
 * the 8 bytes (else Remote Access Error), and the address 8-byte aligned
 * (else Invalid Request, rxe's misaligned-atomic class C error). The
 * payload is exactly 8 bytes (packet.c) and the RETH length is checked
 * here. True when it was applied.
 */
static bool do_atomic_write(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	uint32_t psn = ib->bth.psn;
	uint64_t v;

	if (!qp_allows(qp, IBV_ACCESS_REMOTE_WRITE) || (ib->reth.va & 7) ||
	    ib->reth.len != 8 || ib->payload_len != 8) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 1.5 ATOMIC WRITE, as rxe",
			  !qp_allows(qp, IBV_ACCESS_REMOTE_WRITE)
				  ? "the QP's qp_access_flags lack "
				    "IBV_ACCESS_REMOTE_WRITE"
				  : "ATOMIC WRITE needs an 8-byte aligned va "
				    "and length 8");
		return false;
	}
	uint8_t *mem;
	if (!rkey_resolve(qp, ib->reth.rkey, ib->reth.va, 8,
			  IBV_ACCESS_REMOTE_WRITE, &mem)) {
		why_rkey_nak(qp, ib, ib->reth.rkey, ib->reth.va, 8,
			     IBV_ACCESS_REMOTE_WRITE);
		nak_fatal(qp, ROCE_AETH_NAK_REM_ACCESS, psn,
			  IBV_WC_WR_FLUSH_ERR, NULL, NULL);
		return false;
	}
	/* A zero-based window over unaligned memory: no aligned store. */
	if ((uintptr_t)mem & 7) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 1.5 ATOMIC WRITE, as rxe",
			  "the zero-based window maps the va to memory not "
			  "8-byte aligned");
		return false;
	}
	/* The bytes as they came (rxe stores them unchanged), in one store
	 * that a concurrent reader sees whole. */
	/* Its answer needs a resource; checked before the store, so that
	 * a refused one leaves memory as it was. */
	if (!resp_owe_placement(qp, psn)) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1",
			  "no responder resource free for the ATOMIC WRITE's "
			  "answer");
		return false;
	}
	memcpy(&v, ib->payload, 8);
	__atomic_store_n((uint64_t *)(void *)mem, v, __ATOMIC_RELEASE);
	return true;
}

/* IBTA 9.7.5.1.1: a duplicate SEND or WRITE is acknowledged again, a
 * duplicate READ executed again (its response restarted from the PSN it
 * asks for), a duplicate atomic answered from its saved result and not
 * applied twice. */
static void duplicate(struct rocemu_qp *qp, const struct roce_ib *ib)
{
	unsigned fl = ib->op->flags;

	dev_count(qp->dev, ROCEMU_CNT_DUP_REQUESTS);
	if (fl & (ROCE_OPF_SEND | ROCE_OPF_WRITE)) {
		uint32_t last = roce_psn_add(qp->resp.psn, ROCE_PSN_MASK);
		/* what a sender that numbers its packets wrong sees */
		dev_why(qp->dev, ROCEMU_WHY_DROP, qp->qpn, NULL, 0,
			"IBTA 9.7.5.1.1",
			"duplicate: %s psn 0x%x is behind the expected psn 0x%x, "
			"a repeat of a packet taken before: acknowledged again "
			"(psn 0x%x), its payload not delivered",
			ib->op->name, ib->bth.psn, qp->resp.psn, last);
		owe_ack(qp, last);
		return;
	}
	/* test-only (device.h): a duplicate READ dropped, a duplicate
	 * atomic executed again */
	if ((fl & ROCE_OPF_READ) &&
	    dev_misbehaves(qp->dev, ROCEMU_MISBEHAVE_DUP_READ_IGNORED))
		return;
	if ((fl & ROCE_OPF_ATOMIC) &&
	    dev_misbehaves(qp->dev, ROCEMU_MISBEHAVE_DUP_ATOMIC_REEXEC) &&
	    atomic_again(qp, ib))
		return;
	/* A duplicate FLUSH or ATOMIC WRITE is answered again from its
	 * resource, not executed again (a later WRITE may have changed
	 * those bytes since); with its resource gone it is dropped (rxe:
	 * class D). */
	if (resp_replay(qp, ib))
		return;
	dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ); /* nothing to answer */
}

/*
 * UC (IBTA 9.8.3): no ACKs, no retries. A PSN gap ends the message being
 * received, whose rest is dropped; the next FIRST or ONLY starts clean,
 * and the expected PSN follows whatever arrives.
 */
void uc_receive(struct rocemu_qp *qp, const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;
	unsigned fl = ib->op->flags;
	bool starts = fl & (ROCE_OPF_FIRST | ROCE_OPF_ONLY);

	if (ib->bth.psn != qp->resp.psn || (qp->resp.in_msg && starts)) {
		if (qp->resp.in_msg)
			uc_drop_message(qp);
		qp->resp.in_msg = false;
		qp->resp.recvd = 0;
		qp->resp.drop_msg = !starts;
	}
	qp->resp.psn = roce_psn_add(ib->bth.psn, 1);
	if (qp->resp.drop_msg && !starts) {
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_UC_MESSAGE);
		return;
	}
	qp->resp.drop_msg = false;
	if (!sequence_ok(qp, ib) || !length_ok(qp, ib)) {
		uc_drop_message(qp);
		return;
	}
	if (fl & ROCE_OPF_SEND)
		do_send(qp, ib);
	else
		do_write(qp, ib);
}

void resp_receive(struct rocemu_qp *qp, const struct roce_frame *f)
{
	const struct roce_ib *ib = &f->ib;
	uint32_t psn = ib->bth.psn;
	int32_t d = roce_psn_cmp(psn, qp->resp.psn);
	unsigned fl = ib->op->flags;

	if (qp->resp.fatal_owed && d >= 0) {
		/* a fatal NAK waits behind READ responses: the QP takes
		 * nothing new meanwhile */
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_BAD_STATE);
		return;
	}
	if (d > 0) {
		/* 9.7.5.1.1: one NAK per gap, then silence until it closes. */
		if (!qp->resp.nak_sent ||
		    dev_misbehaves(qp->dev, ROCEMU_MISBEHAVE_SEQ_NAK_EVERY)) {
			qp->resp.nak_sent = true;
			why_nak(qp, ROCE_AETH_NAK_PSN_SEQ, qp->resp.psn,
				"IBTA 9.7.5.1.1",
				"expected psn 0x%x, got 0x%x (a packet before "
				"it was lost or never sent)", qp->resp.psn,
				psn);
			resp_owe_aeth(qp, qp->resp.psn,
				      ROCE_AETH_NAK_PSN_SEQ);
		}
		dev_count(qp->dev, ROCEMU_CNT_RX_DROP_SEQ);
		return;
	}
	if (d < 0) {
		duplicate(qp, ib);
		return;
	}
	qp->resp.nak_sent = false;
	if (!sequence_ok(qp, ib) || !length_ok(qp, ib)) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1",
			  !sequence_ok(qp, ib)
				  ? "opcode out of sequence inside a message"
				  : "payload length breaks the path MTU rule "
				    "(FIRST/MIDDLE exactly it, LAST/ONLY at "
				    "most it)");
		return;
	}
	if (fl & ROCE_OPF_READ) {
		do_read(qp, ib);
		return;
	}
	if ((fl & ROCE_OPF_ATOMIC) && (ib->exts & ROCE_EXT_ATMETH)) {
		do_atomic(qp, ib);
		return;
	}
	/* IBTA 1.5: both answered by a zero-length READ response, as rxe
	 * (resp_flush.c), which also moves the expected PSN */
	if (ib->bth.opcode == ROCE_OP_RC_ATOMIC_WRITE) {
		do_atomic_write(qp, ib);
		return;
	}
	if (ib->bth.opcode == ROCE_OP_RC_FLUSH) {
		const char *why;
		uint8_t syn = resp_flush(qp, ib, &why);
		if (syn)
			nak_fatal(qp, syn, psn, IBV_WC_WR_FLUSH_ERR,
				  "IBTA 1.5 FLUSH, as rxe", why);
		return;
	}
	/* An opcode the responder does not implement is an invalid
	 * request (9.7.5.1.3). */
	if (!(fl & (ROCE_OPF_SEND | ROCE_OPF_WRITE))) {
		nak_fatal(qp, ROCE_AETH_NAK_INV_REQ, psn, IBV_WC_WR_FLUSH_ERR,
			  "IBTA 9.7.5.1.3",
			  "an opcode the responder does not implement");
		return;
	}
	if (!((fl & ROCE_OPF_SEND) ? do_send(qp, ib) : do_write(qp, ib)))
		return;
	qp->resp.psn = roce_psn_add(psn, 1);
	if (ib->bth.ackreq)
		owe_ack(qp, psn);
}
