/* SPDX-License-Identifier: MIT */
/* The CM's own state: a device's CM, its ids and what the three files of cm/ share. */
#ifndef ROCEMU_CM_CM_LOCAL_H
#define ROCEMU_CM_CM_LOCAL_H

#include "cm.h"

/* IBTA 12.9's states; cm_core.c names them. */
enum cm_state {
	CM_IDLE,
	CM_LISTEN,
	CM_REQ_SENT,
	CM_MRA_REQ_RCVD,
	CM_REQ_RCVD,
	CM_MRA_REQ_SENT,
	CM_REP_SENT,
	CM_MRA_REP_RCVD,
	CM_REP_RCVD,
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_TIMEWAIT,
	CM_SIDR_REQ_SENT,
	CM_SIDR_REQ_RCVD,
	CM_STATE_COUNT,
};

/* Defaults, as Linux's cma for RoCE (docs/cm.md). */
enum {
	CM_DEF_RESPONSE_TIMEOUT = 20,	/* 4.096 us * 2^20: 4.3 s */
	CM_DEF_MAX_RETRIES = 15,
	CM_DEF_PACKET_LIFE_TIME = 16,	/* 0.27 s */
	CM_DEF_HOP_LIMIT = 64,
	CM_MRA_SERVICE_TIMEOUT = 24,	/* CMA_CM_MRA_SETTING: 69 s */
	CM_MIN_RNR_TIMER = 12,		/* 0.64 ms */
};

struct cm {
	struct rocemu_dev *d;
	struct rocemu_cm_id *ids;	/* every id, listeners and timewait too */
	uint32_t next_comm_id;		/* random start, never 0 */
	uint8_t slot;			/* the port's: comm IDs' top byte */
	uint32_t tid_hi;		/* random: TIDs of new requests */
	uint32_t tid_lo;
	uint64_t guid;			/* the local CA GUID: its node GUID */
};

struct rocemu_cm_id {
	struct rocemu_cm_id *next;	/* in its CM's list */
	struct cm *cm;
	rocemu_cm_handler fn;
	void *user;
	enum cm_state state;
	bool freed;	/* the user is done with it: kept for its timewait */
	bool passive;
	bool sidr;
	uint64_t service_id, mask;	/* listen mask; the REQ's service */
	uint32_t local_id, remote_id;	/* comm IDs (SIDR: request ID) */
	uint64_t remote_guid;
	uint8_t peer_gid[16];		/* where its messages go */
	uint8_t tclass, hop_limit;
	uint64_t tid;		/* of the exchange in progress */
	/* The last message sent that a timer resends or a duplicate
	 * repeats, as built. */
	uint8_t out[ROCE_MAD_LEN];
	bool have_out;
	uint64_t timeout_ns;	/* between retries */
	unsigned retries_left;
	struct sched_timer timer;
	/* The connection, for rocemu_cm_init_qp_attr. */
	enum ibv_qp_type qp_type;
	uint32_t local_qpn, remote_qpn;
	uint32_t sq_psn, rq_psn;
	enum ibv_mtu mtu;
	uint8_t max_dest_rd_atomic, max_rd_atomic;
	uint8_t retry_count, rnr_retry;
	uint8_t packet_life_time;
	uint8_t local_cm_timeout, remote_cm_timeout, max_cm_retries;
	bool srq;
	bool have_peer;		/* the REQ or REP that gives RTR is in */
};

/* 4.096 us * 2^t in ns (IBTA's time encoding), t at most 31. */
uint64_t cm_time_ns(unsigned t);
/* A fresh TID for a new request of cm. */
uint64_t cm_new_tid(struct cm *cm);
/* A new id in cm's list, idle, with fn and user; NULL without memory. */
struct rocemu_cm_id *cm_id_alloc(struct cm *cm, rocemu_cm_handler fn,
				 void *user);
/* Takes id off its CM's list, disarms its timer and frees it. */
void cm_id_destroy(struct rocemu_cm_id *id);

/* Encodes m, with id's TID, and sends it to id's peer; keep makes it the
 * message the timer resends (retries from now on: max_cm_retries, every
 * timeout_ns). 0, or -EINVAL/-ENOMEM with nothing sent. */
int cm_send(struct rocemu_cm_id *id, struct roce_cm_msg *m, bool keep);
/* Sends the kept message again (a retry or the answer to a duplicate). */
void cm_resend(struct rocemu_cm_id *id);
/* Sends m, encoded, to gid on cm's device (answers that no id keeps). */
void cm_send_to(struct cm *cm, const uint8_t gid[16], uint8_t tclass,
		const struct roce_cm_msg *m);
/* Arms id's timer ns from now, replacing an earlier arming. */
void cm_arm(struct rocemu_cm_id *id, uint64_t ns);
/* Disarms id's timer; disarmed already is fine. */
void cm_disarm(struct rocemu_cm_id *id);
/* Enters timewait: the timer ends it after the packet life time + 1. */
void cm_enter_timewait(struct rocemu_cm_id *id);
/* Sends a DREQ on an established id: DREQ_SENT; 0 or negative errno. */
int cm_send_dreq(struct rocemu_cm_id *id, const void *priv, uint8_t len);

/* What caused an event: a message (with where it came from) or NULL for
 * a timer or a local call. */
struct cm_cause {
	const struct roce_cm_msg *msg;
	const struct gsi_mad *from;
};
/* Calls id's handler (unless it was freed or has none). */
void cm_event(struct rocemu_cm_id *id, enum rocemu_cm_event_type type,
	      int status, const struct cm_cause *c,
	      struct rocemu_cm_id *listen_id);

/* One received MAD, checked by the engine (cm_recv.c). */
void cm_receive(void *cm, const struct gsi_mad *m);
/* The first packet reached qp (cm_recv.c). */
void cm_comm_est(void *cm, struct rocemu_qp *qp);
/* A passive id waiting for its RTU is established by the peer's data:
 * USER_ESTABLISHED. False if it was not waiting. */
bool cm_user_established(struct rocemu_cm_id *id);

#endif
