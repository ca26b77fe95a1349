/* SPDX-License-Identifier: MIT */
/* librdmacm.so.1: ids, event channels and the CM glue, behind librdmacm's public layout. */
#ifndef ROCEMU_EMU_RDMACM_LOCAL_H
#define ROCEMU_EMU_RDMACM_LOCAL_H

#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "rocemu/ibcm.h"

struct rc_id;

/* RDMA_UDP_QKEY: the Q_Key of the UDP and IB port spaces' UD QPs
 * (librdmacm; the kernel's cma_set_qkey). */
#define RC_UDP_QKEY 0x01234567u

/* One queued event: the public event first (rdma_ack_cm_event gets it
 * back), then the private data it points at. */
struct rc_event {
	struct rdma_cm_event ev;
	struct rc_id *owner;	/* the id the event is counted on */
	struct rc_event *next;
	/* work librdmacm does in the reader's thread when it takes the
	 * event (the CM's handler may not call the device): enum rc_fix */
	int fix;
	struct rocemu_cm_id *refuse;	/* RC_FIX_REFUSE's */
	uint8_t priv[ROCE_CM_PRIV_MAX];
};

enum rc_fix {
	RC_FIX_NONE,
	RC_FIX_REP,	/* a REP: with a QP on the id, RTR, RTS and the RTU */
	RC_FIX_QP_ERR,	/* the connection failed: the id's QP to ERR */
	RC_FIX_REFUSE,	/* not for the application: refuse the REQ of
			 * refuse (a REJ), free it, drop the event */
};

/* An event channel: the fd applications poll is a stream socket holding a
 * byte exactly while the queue is not empty (changed under lock). */
struct rc_channel {
	struct rdma_event_channel ch;
	int bell;	/* the socket's other end, written to ring */
	int wait_fd;	/* a dup of ch.fd, for the waiters and unring */
	pthread_mutex_t lock;
	struct rc_event *head, *tail;
	unsigned ids;		/* ids on the channel: destroy refuses till 0 */
	/* Threads inside rdma_get_cm_event: a channel destroyed under them
	 * is closed but not freed, and they stay blocked for good, as a
	 * reader of librdmacm's closed fd does (rping's CM thread). */
	unsigned waiters;
	bool dead;
	pthread_cond_t never;	/* what a dead channel's waiters wait on */
};

/* An id: librdmacm's public id first, so an rdma_cm_id * is an rc_id *. */
struct rc_id {
	struct rdma_cm_id id;
	struct rc_channel *chan;	/* where its events go (id.channel's) */
	bool sync;			/* created with no channel: chan is its own */
	bool bound, listening;
	uint16_t port;			/* host order, 0 before bind */
	struct rocemu_cm_id *cm;
	struct rc_id *listen;		/* a passive id's listener */
	/* events given to the application on the id, and acknowledged
	 * (rdma_destroy_id waits till they are equal, as librdmacm does;
	 * those never given are dropped with the id) */
	unsigned reported, acked;
	pthread_cond_t acked_cond;	/* under the channel's lock */
	/* connection state the CM's events need */
	struct rdma_conn_param conn;	/* initiator depth etc. asked for */
	uint32_t qpn, psn;		/* the QP the connection is for */
	/* established and not yet DISCONNECTED: written by the CM's
	 * handler and the reader's thread, so atomically */
	bool connected;
	uint8_t peer_gid[16];
	/* rdma_set_option's */
	uint8_t tos, ack_timeout;
	bool reuseaddr, afonly;
	/* rdma_create_ep of a passive id: what rdma_get_request makes */
	struct ibv_qp_init_attr *ep_qp;
	struct ibv_pd *ep_pd;
	struct rc_id *next_bound;	/* the bound ids (rc_ports) */
};

/* The rc_id of a public id. */
static inline struct rc_id *rc_of(struct rdma_cm_id *id)
{
	return (struct rc_id *)(void *)id;
}

/* librdmacm's convention: -1 and errno. */
int rc_err(int negerrno);

/* Queues ev on id's channel (the id's reported count grows), waking the
 * fd. ev was allocated with rc_event_new. Never fails. */
void rc_post(struct rc_id *id, struct rc_event *ev);
/* A zeroed event of type for id with status; NULL when out of memory. */
struct rc_event *rc_event_new(struct rc_id *id, enum rdma_cm_event_type type,
			      int status);
/* Makes a channel (fd a socket); NULL and errno. */
struct rc_channel *rc_channel_new(void);
/* Frees a channel with no ids and its queued events. */
void rc_channel_free(struct rc_channel *c);
/* Counts an id onto a channel (under its lock). Never fails. */
void rc_channel_attach(struct rc_channel *c);
/* Counts an id off a channel (under its lock). Never fails. */
void rc_channel_detach(struct rc_channel *c);
/* Takes off id's channel the events not yet given to the application
 * that are counted on id (and, with named_too, those that name it), and
 * returns them in order (a list through next). Never fails. */
struct rc_event *rc_purge(struct rc_id *id, bool named_too);
/* Discards an event the application never saw: what it holds of the CM
 * (a REQ to refuse, a new id) is freed with it. Never fails. */
void rc_discard(struct rc_event *e);
/* Waits till every event given to the application on id is
 * acknowledged. */
void rc_wait_acked(struct rc_id *id);

/* The one context and PD of the process, opened on first use after the
 * device exists; 0 or -errno. */
int rc_device(struct ibv_context **ctx, struct ibv_pd **pd);
/* The device's address as a GID; 0 or -errno (makes the device at gid
 * when there is none and ROCEMU_ADDR is unset; gid NULL: 127.0.0.1). */
int rc_dev_gid(const uint8_t *hint, uint8_t out[16]);
/* Gives id the context, PD and port 1. 0 or -errno. */
int rc_attach_device(struct rc_id *id);

/* Reserves addr's port in id's port space (0: an ephemeral one), and
 * sets id's source address. 0, -EADDRINUSE, -EADDRNOTAVAIL. */
int rc_port_bind(struct rc_id *id, const struct sockaddr *addr);
/* Releases id's port. */
void rc_port_release(struct rc_id *id);

/*
 * The CM glue (cm_glue.c): the only callers of rocemu_cm_*. Built without
 * the CM (RDMACM_CM=0), each returns -ENOSYS, except rc_cm_listen (0: the
 * listener takes no requests) and rc_cm_free (nothing to free). Each
 * returns 0 or -errno and changes nothing on failure.
 */
/* Whether the library was built with the CM. */
bool rc_cm_available(void);
/* Listens on the Annex A11 service ID of id's port space and port. */
int rc_cm_listen(struct rc_id *id);
/* Sends the REQ: the Annex A11 header, then p's private data (at most
 * 56 bytes); the QPN is id's QP's, or p->qp_num with no QP. */
int rc_cm_connect(struct rc_id *id, struct rdma_conn_param *p);
/* Sends the REP of a passive id, its QP (if any) to RTR before, RTS
 * after. */
int rc_cm_accept(struct rc_id *id, struct rdma_conn_param *p);
/* Sends a REJ, reason 28 (consumer defined), len <= 148 bytes. */
int rc_cm_reject(struct rc_id *id, const void *priv, uint8_t len);
/* Sends the RTU of an active id with no QP (after CONNECT_RESPONSE). */
int rc_cm_establish(struct rc_id *id);
/* Moves id's QP to ERR and sends a DREQ, or the DREP of a DREQ received. */
int rc_cm_disconnect(struct rc_id *id);
/* Tells the CM of COMM_EST on id's QP. */
int rc_cm_notify(struct rc_id *id, enum ibv_event_type ev);
/* The CM's attributes for id's QP in attr->qp_state; -EINVAL with no CM
 * id yet. */
int rc_cm_init_qp_attr(struct rc_id *id, struct ibv_qp_attr *attr, int *mask);
/* Frees id's CM id (a REJ or DREQ as the IBTA says), if it has one. */
void rc_cm_free(struct rc_id *id);
/* Moves id's QP (if any) to ERR. */
void rc_qp_to_err(struct rc_id *id);
/* Moves id's QP (if any) through the states the CM gives (INIT again,
 * RTR, RTS). */
int rc_qp_to_rts(struct rc_id *id);
/* Moves the id's QP (if it has one: 0 otherwise) to state with the
 * attributes the connection gives (rdma_init_qp_attr's), the id's
 * ACK timeout option applied at RTS; a negative errno on failure. */
int rc_qp_move(struct rc_id *id, enum ibv_qp_state state);

/* A synchronous id's work is done: waits for its event, keeps it in
 * id->event (acknowledged by the next call) and fails with its status.
 * Nothing for an id with a channel. 0 or -1 and errno. */
int rc_complete(struct rc_id *id);
/* Acknowledges a synchronous id's kept event. */
void rc_drop_event(struct rc_id *id);

/* The reader's work on an event it takes (enum rc_fix): false when the
 * event is not the application's (the reader drops it, rc_drop). A
 * failure turns the event into CONNECT_ERROR. */
bool rc_cm_fixup(struct rc_event *e);
/* Frees an event the application never saw, counted acknowledged. */
void rc_drop(struct rc_event *e);

/* Makes a new id (rdma_create_id's work) on channel c. NULL and errno. */
struct rc_id *rc_id_new(struct rc_channel *c, void *context,
			enum rdma_port_space ps, enum ibv_qp_type qpt);

#endif
