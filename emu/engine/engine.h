/* SPDX-License-Identifier: MIT */
/*
 * The engines, as rxe has them: receive dispatch (recv.c), transmit
 * (xmit.c), the requester (req.c), the completer (comp.c), the responder
 * (resp.c, resp_read.c) and UD (ud.c). They run under the world lock
 * when the world calls them, on the QP state in obj/; they hand work to
 * one another through that state and the scheduler.
 *
 * Layer rule: engine/ includes obj/, wire/, core/ and the public headers,
 * never world/.
 */
#ifndef ROCEMU_ENGINE_ENGINE_H
#define ROCEMU_ENGINE_ENGINE_H

#include "obj/obj.h"
#include "wire/wire.h"

/* Receive dispatch (recv.c): one arrival at d, handed up by its wire
 * parsed once; checked, counted and passed to the engine it is for. */
void engine_receive(struct rocemu_dev *d, const struct wire_rx *rx);

/* Transmit (xmit.c): builds a frame from qp's template and the given
 * transport fields, counts and traces it, and hands it to the device's
 * wire port. A frame that cannot be had (no memory) is lost, as on a
 * wire: the retry timer covers it. */
void qp_send_packet(struct rocemu_qp *qp, struct roce_ib *ib);

/* Sends what the SQ holds, as far as window and wire allow; returns the
 * packets sent. */
unsigned req_run(struct rocemu_qp *qp);
/* The opcode of wqe's packet at this place in its message (a READ or
 * atomic is one packet, first and last), in qp's transport, from the
 * work-request table; -EINVAL if the transport has no such packet. */
int req_opcode(const struct rocemu_qp *qp, const struct swqe *wqe,
	       bool first, bool last);
/* A local error on wqe: it completes with status, the QP goes to ERROR. */
void fail_local(struct rocemu_qp *qp, struct swqe *wqe,
		enum ibv_wc_status status);
/* The payload of [off, off+n) of wqe: mapped in place, or gathered into
 * bounce; NULL after a local protection error (the QP is then failed).
 * UD's sender (ud.c) is part of the requester and uses it too. */
const uint8_t *req_payload(struct rocemu_qp *qp, struct swqe *wqe,
			   uint32_t off, uint32_t n, uint8_t *bounce);
/*
 * The completer hands the requester its work through qp->req (need_retry,
 * need_follow) and qp_make_ready, as rxe's completer does, and retires
 * WQEs through obj (qp_retire_done): the two engines never call each
 * other.
 */

/* The completer, for an RC response packet (ACK, NAK, READ response,
 * atomic ACK) at qp: WQEs complete, the requester is asked to go back,
 * or the QP fails; a response with a PSN outside the outstanding ones is
 * counted and dropped. */
void comp_receive(struct rocemu_qp *qp, const struct roce_frame *f);
/* qp's retry or RNR timer fired: the requester is asked to send again
 * from the oldest PSN not acknowledged, or the WQE fails when its retries
 * are spent. A QP that is no longer in RTS or SQD is left alone. */
void comp_timer(struct rocemu_qp *qp, enum timer_kind kind);
/* The RC responder, for a request packet at qp: checks the PSN, the
 * opcode sequence, keys, bounds and access, places or answers it, and
 * owes the ACK or NAK that follows (IBTA 9.7.5); nothing is written to
 * memory a check refused. */
void resp_receive(struct rocemu_qp *qp, const struct roce_frame *f);
/* The UC receiver (IBTA 9.8.3): no ACKs, no retries; a PSN gap drops
 * the rest of the message being received, counted, and the next FIRST or
 * ONLY starts clean. */
void uc_receive(struct rocemu_qp *qp, const struct roce_frame *f);
/* The UD receiver: a datagram with the QP's Q_Key goes with its GRH into
 * the next receive WQE; a wrong Q_Key or no WQE drops it, counted; a WQE
 * too short completes with LOC_LEN_ERR. */
void ud_receive(struct rocemu_qp *qp, const struct roce_frame *f);
/* UD: sends wqe as one datagram to its address handle. */
void ud_send(struct rocemu_qp *qp, struct swqe *wqe);

/* QP1 (gsi.c). A packet to QPN 1: a GSI MAD (UD SEND Only, Q_Key
 * ROCE_CM_QP1_QKEY, exactly ROCE_MAD_LEN bytes) goes to the device's
 * gsi_ops; anything else, or any MAD on a device without them, is
 * dropped and counted (rx_drop_gsi). */
void gsi_receive(struct rocemu_dev *d, const struct roce_frame *f);
/* Sends one MAD from QP1 to QP1 at dgid (the device's GID 1 to it) with
 * traffic class tclass, through the transmit path every packet takes:
 * 0, or -ENOMEM when QP1's state cannot be had (then nothing is sent).
 * A frame lost for memory is lost as on a wire. */
int gsi_send(struct rocemu_dev *d, const uint8_t dgid[16], uint8_t tclass,
	     const uint8_t mad[ROCE_MAD_LEN]);

/* The first packet a connected QP takes after entering RTR: raises
 * IBV_EVENT_COMM_EST if the QP is still in RTR, and tells the CM (whose
 * passive id waiting for an RTU on qp is then established). */
void gsi_first_packet(struct rocemu_dev *d, struct rocemu_qp *qp);

/* The RC responder's owed responses (resp_read.c). */
/* Owes an ACK, NAK or RNR NAK (AETH syndrome syn) at psn: sent after the
 * READ responses and atomic ACKs owed before it, merged with the one
 * owed already (ACKs coalesce, a NAK covers the ACKs before it). */
void resp_owe_aeth(struct rocemu_qp *qp, uint32_t psn, uint8_t syn);
/* The same for a NAK after which the QP goes to ERROR with event ev, the
 * receive WQE in use completing with recv_status (unless WR_FLUSH_ERR). */
void resp_owe_fatal(struct rocemu_qp *qp, uint32_t psn, uint8_t syn,
		    enum ibv_event_type ev, enum ibv_wc_status recv_status);
/* A new resource for the READ or atomic executing now, its response
 * owed; the caller fills in what it asked for. It takes a free slot, or
 * one whose response went out in full once (a retry of that one is given
 * up); NULL when every slot still owes a response never sent in full (the
 * requester is further ahead than any responder keeps: invalid request). */
struct rd_res *resp_new_res(struct rocemu_qp *qp);
/* A duplicate READ or atomic (IBTA 9.7.5.1.1): its response owed again
 * from the PSN it asks for. False if no resource holds it. */
bool resp_replay(struct rocemu_qp *qp, const struct roce_ib *ib);
/*
 * IBTA 1.5 FLUSH and ATOMIC WRITE (resp_flush.c): the request at psn
 * executed; its answer, a zero-length READ response, owed in PSN order
 * with the MSN counted and the expected PSN moved on. false (nothing
 * changed) if no resource is free.
 */
bool resp_owe_placement(struct rocemu_qp *qp, uint32_t psn);
/*
 * The FLUSH ib checked (the QP's and the memory's rights for its
 * placement type, the range or, at level MR, the key alone) and
 * executed, its answer owed: 0. Else the NAK syndrome it earns, nothing
 * changed, with *why (NULL when the reason was given already) for
 * explain mode.
 */
uint8_t resp_flush(struct rocemu_qp *qp, const struct roce_ib *ib,
		   const char **why);
/* The MSN an AETH of qp carries for count msn: its low 24 bits (0 under
 * the test-only msn_frozen misbehaviour). Changes nothing. */
uint32_t resp_msn(const struct rocemu_qp *qp, uint32_t msn);
/* Sends what qp owes, in PSN order, a bounded burst of it; returns the
 * packets sent. qp stays on the world's list while it owes more. */
unsigned resp_run(struct rocemu_qp *qp);
/* When qp may next send what it owes; false if it owes nothing. */
bool resp_due(struct rocemu_qp *qp, uint64_t *when);

/* ---- explain mode (why.c) ------------------------------------------ */

/* A GID as its IP address ("10.0.0.1", IPv4-mapped shown as IPv4). */
void why_gid(const uint8_t gid[16], char *buf, size_t n);
/*
 * The reason for the NAK with syndrome syn qp owes at psn, as "NAK ...
 * (sent to PEER qp 0xDQPN psn 0xPSN): " and fmt's words (dev_why); on
 * UC, where nothing is NAKed, a drop. Counted always, formatted only
 * while someone listens.
 */
void why_nak(struct rocemu_qp *qp, uint8_t syn, uint32_t psn,
	     const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The reason for a NAK remote access error on ib: which part of the
 * R_Key check of [va, va+len) for access failed (rkey_why). */
void why_rkey_nak(struct rocemu_qp *qp, const struct roce_ib *ib,
		  uint32_t rkey, uint64_t va, uint64_t len, int access);
/* The reason wqe (NULL: none known) of qp completes with status, as
 * "STATUS: qp 0xQPN OP wr_id N: " and fmt's words. */
void why_wqe_error(struct rocemu_qp *qp, const struct swqe *wqe,
		   enum ibv_wc_status status, const char *rule,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
