/* SPDX-License-Identifier: MIT */
/* A device's IB connection manager (IBTA chapter 12) on its QP1: ids, messages, events. */
#ifndef ROCEMU_IBCM_H
#define ROCEMU_IBCM_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "rocemu/cm.h"
#include "rocemu/device.h"

/*
 * The CM of a device speaks for its QP1 (the GSI QP): a CM message goes
 * out as one UD SEND Only packet to QP 1 at the peer's address, with the
 * Q_Key ROCE_CM_QP1_QKEY, from the device's GID index 1; an answer goes
 * to the address the message it answers came from. An id is one end of
 * one connection, a listener, or one end of a SIDR exchange. The CM runs
 * the IBTA's state machines (12.9) with their timers on the world's
 * scheduler (so the deterministic wire runs them on its virtual clock),
 * sends again what the peer has not answered, answers duplicates the way
 * it answered the original, and reports what happens to an id as events
 * to the id's handler.
 *
 * The CM knows nothing of IP ports and port spaces: the private data of a
 * message is its caller's (an rdma_cm puts its Annex A11 header there,
 * <rocemu/cm.h> builds and parses it). Local comm IDs start at a random
 * value in each device, so a new run is not taken by a peer for an old
 * one still in its timewait.
 *
 * Threads: every function may be called from any thread, but not from a
 * handler, which may call only rocemu_cm_id_set_handler. Functions return
 * 0 or a negative errno and change nothing on failure, unless they say
 * otherwise.
 */

struct rocemu_cm_id;

/* What happened to an id; ib_cm's events, by the same names. */
enum rocemu_cm_event_type {
	ROCEMU_CM_REQ_RCVD,	/* a listener's: ev->id is a new passive id */
	ROCEMU_CM_REQ_ERROR,	/* no REP (or REJ) after every retry */
	ROCEMU_CM_REJ_RCVD,	/* status: the reason (enum roce_cm_rej_reason) */
	ROCEMU_CM_REP_RCVD,	/* active: the peer accepts; answer RTU or REJ */
	ROCEMU_CM_REP_ERROR,	/* passive: no RTU after every retry */
	ROCEMU_CM_RTU_RCVD,	/* passive: established */
	ROCEMU_CM_USER_ESTABLISHED, /* passive: established by data before the RTU */
	ROCEMU_CM_DREQ_RCVD,	/* the peer disconnects; answer DREP */
	ROCEMU_CM_DREQ_ERROR,	/* no DREP after every retry; in timewait now */
	ROCEMU_CM_DREP_RCVD,	/* in timewait now */
	ROCEMU_CM_TIMEWAIT_EXIT, /* the id may be freed or used again */
	ROCEMU_CM_SIDR_REQ_RCVD, /* a listener's: ev->id is a new SIDR id */
	ROCEMU_CM_SIDR_REP_RCVD, /* status: enum roce_cm_sidr_status */
	ROCEMU_CM_SIDR_REQ_ERROR, /* no SIDR_REP after every retry */
};

struct rocemu_cm_event {
	enum rocemu_cm_event_type type;
	struct rocemu_cm_id *id;	/* whose event (REQ_RCVD: the new one) */
	struct rocemu_cm_id *listen_id;	/* REQ_RCVD, SIDR_REQ_RCVD: the listener */
	int status;			/* see the types; 0 otherwise */
	/* The message that caused the event, decoded (its attr_id says
	 * which member holds it); attr_id 0 for an event of a timer. */
	struct roce_cm_msg msg;
	uint8_t peer_gid[16];		/* where the message came from */
	uint8_t hop_limit;		/* of the packet that carried it */
	uint8_t traffic_class;
};

/*
 * Called for each event of an id, in order, from the thread that runs the
 * world, with its lock held: a handler must not call rocemu functions
 * other than rocemu_cm_id_set_handler, and should only hand the event on
 * (copy it to a queue and wake a reader). ev is valid during the call.
 */
typedef void (*rocemu_cm_handler)(void *user, const struct rocemu_cm_event *ev);

/* A new idle id on device d whose events go to fn(user, ...); NULL and
 * errno ENOMEM or EINVAL (no fn) on failure. */
struct rocemu_cm_id *rocemu_cm_id_new(struct rocemu_dev *d,
				      rocemu_cm_handler fn, void *user);

/*
 * Ends what the id is doing as the IBTA says (a REJ for a REQ or REP not
 * yet answered, a DREQ for a connection still established; an id in
 * timewait is kept by the CM until its timewait ends, so a late duplicate
 * is still recognised) and frees it. Once it returns, no handler call names
 * the id. Returns 0; -EINVAL for NULL.
 */
int rocemu_cm_id_free(struct rocemu_cm_id *id);

/* Sends the id's later events to fn(user, ...) (an id made by REQ_RCVD
 * starts with its listener's handler). The one call a handler may make. */
void rocemu_cm_id_set_handler(struct rocemu_cm_id *id, rocemu_cm_handler fn,
			      void *user);

/* The id's state, for tests and traces (IBTA 12.9: "idle", "req_sent",
 * "rep_rcvd", "established", "timewait", ...). */
const char *rocemu_cm_id_state(const struct rocemu_cm_id *id);

/*
 * Makes an idle id a listener for the service IDs s with (s & mask) ==
 * (service_id & mask); a REQ or SIDR_REQ for one of them makes a new id
 * and a REQ_RCVD or SIDR_REQ_RCVD event on the listener. A REQ no
 * listener takes is answered REJ 8 (invalid service ID), a SIDR_REQ
 * SIDR_REP status 1 (unsupported). -EADDRINUSE when another listener
 * overlaps; -EINVAL when the id is not idle.
 */
int rocemu_cm_listen(struct rocemu_cm_id *id, uint64_t service_id,
		     uint64_t mask);

/* What a REQ asks for (the IBTA's REQ fields that are the caller's). */
struct rocemu_cm_req_param {
	uint8_t dgid[16];		/* the peer (its IP, IPv4-mapped) */
	uint64_t service_id;
	enum ibv_qp_type qp_type;	/* IBV_QPT_RC or IBV_QPT_UC */
	uint32_t qpn;			/* the local QP, 24 bits */
	/* The first PSN this side receives with, and the peer sends
	 * with (24 bits): Linux's ib_cm reads a REQ's and a REP's so. */
	uint32_t starting_psn;
	uint8_t responder_resources;	/* READs and atomics it takes in */
	uint8_t initiator_depth;	/* READs and atomics it sends out */
	uint8_t retry_count;		/* 3 bits */
	uint8_t rnr_retry_count;	/* 3 bits */
	bool srq;
	/* The path MTU asked for; 0: the device's. Either way clamped to
	 * what the route to dgid carries. */
	enum ibv_mtu mtu;
	uint8_t traffic_class;
	uint8_t hop_limit;		/* 0: 64 */
	uint8_t packet_life_time;	/* 5 bits; 0: 16, as Linux's cma for RoCE */
	uint8_t cm_response_timeout;	/* 5 bits, 4.096 us * 2^t; 0: 20 */
	uint8_t max_cm_retries;		/* 4 bits; 0: 15 */
	const void *private_data;
	uint8_t private_data_len;	/* at most ROCE_CM_REQ_PRIV_LEN */
};

/* Sends a REQ from an idle id; REP_RCVD, REJ_RCVD or REQ_ERROR follows.
 * -EINVAL for a bad parameter or an id that is not idle. */
int rocemu_cm_send_req(struct rocemu_cm_id *id,
		       const struct rocemu_cm_req_param *p);

/* What a REP answers (the IBTA's REP fields that are the caller's). */
struct rocemu_cm_rep_param {
	uint32_t qpn;			/* the local QP, 24 bits */
	/* The first PSN this side receives with, and the peer sends
	 * with (24 bits): Linux's ib_cm reads a REQ's and a REP's so. */
	uint32_t starting_psn;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t rnr_retry_count;	/* 3 bits */
	bool srq;
	const void *private_data;
	uint8_t private_data_len;	/* at most ROCE_CM_REP_PRIV_LEN */
};

/* Accepts the REQ of a passive id (after REQ_RCVD); RTU_RCVD,
 * USER_ESTABLISHED, REJ_RCVD or REP_ERROR follows. -EINVAL otherwise. */
int rocemu_cm_send_rep(struct rocemu_cm_id *id,
		       const struct rocemu_cm_rep_param *p);

/* Completes an active id's connection after REP_RCVD: established.
 * -EINVAL otherwise; len at most ROCE_CM_RTU_PRIV_LEN. */
int rocemu_cm_send_rtu(struct rocemu_cm_id *id, const void *priv,
		       uint8_t len);

/* Refuses a REQ (passive, after REQ_RCVD) or a REP (active, after
 * REP_RCVD) with reason and up to ROCE_CM_INFO_MAX bytes of additional
 * rejection information; the id goes idle. -EINVAL otherwise. */
int rocemu_cm_send_rej(struct rocemu_cm_id *id, uint16_t reason,
		       const void *ari, uint8_t ari_len, const void *priv,
		       uint8_t len);

/* Starts disconnecting an established id: DREP_RCVD or DREQ_ERROR
 * follows, then TIMEWAIT_EXIT. -EINVAL when not established. */
int rocemu_cm_send_dreq(struct rocemu_cm_id *id, const void *priv,
			uint8_t len);

/* Answers the DREQ of an id (after DREQ_RCVD): timewait, then
 * TIMEWAIT_EXIT. -EINVAL otherwise. */
int rocemu_cm_send_drep(struct rocemu_cm_id *id, const void *priv,
			uint8_t len);

/* Tells the CM of IBV_EVENT_COMM_EST on the id's QP (rdma_notify): a
 * passive id waiting for its RTU is established (USER_ESTABLISHED).
 * -EINVAL for another event. The device also finds this out itself. */
int rocemu_cm_notify(struct rocemu_cm_id *id, enum ibv_event_type ev);

/* What a SIDR_REQ asks (IBTA 12.11). */
struct rocemu_cm_sidr_req_param {
	uint8_t dgid[16];
	uint64_t service_id;
	uint8_t cm_response_timeout;	/* 5 bits; 0: 20 */
	uint8_t max_cm_retries;		/* 4 bits; 0: 15 */
	const void *private_data;
	uint8_t private_data_len;	/* at most ROCE_CM_SIDR_REQ_PRIV_LEN */
};

/* Sends a SIDR_REQ from an idle id; SIDR_REP_RCVD or SIDR_REQ_ERROR
 * follows. -EINVAL otherwise. */
int rocemu_cm_send_sidr_req(struct rocemu_cm_id *id,
			    const struct rocemu_cm_sidr_req_param *p);

/* Answers the SIDR_REQ of an id (after SIDR_REQ_RCVD) with status
 * (enum roce_cm_sidr_status), the UD QP and Q_Key to use; the id goes
 * idle. -EINVAL otherwise. */
int rocemu_cm_send_sidr_rep(struct rocemu_cm_id *id, uint8_t status,
			    uint32_t qpn, uint32_t qkey, const void *priv,
			    uint8_t len);

/*
 * The attributes that move the id's QP to attr->qp_state (INIT, RTR or
 * RTS) and the mask naming them, as the IBTA's connection parameters and
 * Linux's ib_cm_init_qp_attr give them: INIT: port 1, P_Key index 0,
 * access REMOTE_WRITE (with REMOTE_READ and REMOTE_ATOMIC when the
 * responder resources are not 0); RTR: the address of the peer (GID index
 * 1), path MTU, destination QPN, receive PSN, max_dest_rd_atomic,
 * min_rnr_timer (the receive PSN is this side's own REQ's or REP's
 * starting PSN: 0 on a passive id before its REP, which Linux's cma fills
 * in as the drop-in does); RTS: send PSN (the peer's starting PSN),
 * timeout (packet life time + 1), retry
 * counts, max_rd_atomic. -EINVAL when the id has not got that far (RTR
 * needs the peer's REQ or REP) or for another state.
 */
int rocemu_cm_init_qp_attr(struct rocemu_cm_id *id, struct ibv_qp_attr *attr,
			   int *mask);

#endif
