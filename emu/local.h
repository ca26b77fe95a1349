/* SPDX-License-Identifier: MIT */
/* The device's internal objects and the prototypes its files share. */
#ifndef ROCEMU_EMU_LOCAL_H
#define ROCEMU_EMU_LOCAL_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

#include "idgen.h"
#include "ring.h"
#include "rocemu/device.h"
#include "rocemu/proto.h"

enum {
	MAX_SGE = 8,
	MAX_INLINE = 256,
	MAX_RD_ATOMIC = 16,	/* per QP, both directions */
	MAX_QP_WR = 16384,
	MAX_CQE = 1 << 20,
	MAX_MR_SIZE = 1u << 31,	/* RETH lengths above 2^31 are invalid */
	WINDOW_PKTS = 128,	/* requests outstanding before waiting */
	ACKREQ_EVERY = 64,	/* AckReq inside long messages, as rxe */
	DEFAULT_LATENCY_NS = 1000,
};

/* ---- the world --------------------------------------------------- */

struct inflight {
	uint64_t when;
	uint64_t seq;		/* keeps equal times in send order */
	uint32_t len;
	uint8_t *data;
};

enum timer_kind { TIMER_RETRY, TIMER_RNR };

struct timer_ev {
	uint64_t when;
	uint64_t seq;
	struct rocemu_qp *qp;
	uint32_t gen;
	uint8_t kind;
};

/* A binary heap ordered by (when, seq); elements of elem_size bytes
 * that start with those two fields. */
struct heap {
	uint8_t *v;
	size_t n, cap, elem_size;
};

struct rocemu_world {
	uint64_t now;
	uint64_t rng;
	uint64_t seq;
	struct rocemu_faults faults;
	struct heap frames;	/* struct inflight */
	struct heap timers;	/* struct timer_ev */
	struct rocemu_dev *devs;	/* linked through dev->next */
	struct rocemu_qp *ready;	/* QPs with requester work */
	struct rocemu_qp *acks;		/* QPs with responses owed */
	struct roce_pcap_writer *pcap;
	rocemu_trace_fn trace;
	void *trace_arg;
	uint64_t wire_dropped, wire_duplicated, wire_reordered, wire_corrupted;
	bool udp;		/* real UDP sockets and the monotonic clock */
	/* Payload gathered from several SGEs; one world's engines run one
	 * at a time, so one buffer serves them all. */
	uint8_t bounce[4096];
	/* Every public call holds the world lock (progress.c says why). The
	 * progress thread (UDP worlds) runs the engines under it too, and
	 * new work kicks the thread awake. */
	bool threaded, kick;
	_Atomic bool stop;
	/* When a busy-polling caller last ran the engines: while it keeps
	 * doing so, the thread stays off the CPU and the lock. */
	_Atomic uint64_t polled_at;
	pthread_t thread;
	pthread_mutex_t lock;
	int wake[2];
	bool wake_open;		/* wake made (first start); closed at free */
};

/* Sets up the world's lock (recursive): 0, or -errno. */
int world_lock_init(struct rocemu_world *w);
/* Take and release the world lock; releasing wakes the progress thread
 * when the holder left it new work. */
struct rocemu_world *world_lock(struct rocemu_world *w);
void world_unlock(struct rocemu_world **wp);

/* Holds the world lock until the end of the enclosing block. */
#define WORLD_GUARD(w)                                                   \
	struct rocemu_world *world_guard_                                 \
		__attribute__((cleanup(world_unlock), unused)) = world_lock(w)

uint64_t world_rand(struct rocemu_world *w);
bool world_chance(struct rocemu_world *w, double p);
void world_trace(struct rocemu_world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline bool world_tracing(const struct rocemu_world *w)
{
	return w->trace != NULL;
}

int heap_push(struct heap *h, const void *elem);
void heap_pop(struct heap *h, void *out);
static inline const void *heap_top(const struct heap *h)
{
	return h->n ? h->v : NULL;
}

/* Puts a frame on the wire (copying it), with the world's faults. */
void wire_send(struct rocemu_world *w, const uint8_t *frame, size_t len);
/* The same for a malloc'd frame, which the wire then owns. */
void wire_send_owned(struct rocemu_world *w, uint8_t *frame, size_t len);
/* Delivers every frame due by now; returns how many. */
unsigned wire_deliver_due(struct rocemu_world *w);

/* The UDP wire (wire_udp.c). */
struct tx_sock;
struct tx_batch;
uint64_t udp_clock_ns(void);
/* Sends what the devices have queued (sendmmsg, one call per socket run);
 * what a full socket buffer refuses stays queued. True if none is left. */
bool udp_flush_all(struct rocemu_world *w);
/* True while d's transmit queue is over its bound: the engines then make
 * no more packets that can wait. Never on the loopback wire. */
bool wire_busy(const struct rocemu_dev *d);
int udp_dev_open(struct rocemu_dev *d);
void udp_dev_close(struct rocemu_dev *d);
void udp_send(struct rocemu_world *w, uint8_t *frame, size_t len);
unsigned udp_receive_all(struct rocemu_world *w);
/* The time of the next live timer; false if none is armed. */
bool world_next_timer(struct rocemu_world *w, uint64_t *when);
/* Fills pfd with the device sockets (at most max, *n of them) and returns
 * the poll timeout in ms: to the next timer, max_ns at most. */
struct pollfd;
int world_poll_setup(struct rocemu_world *w, struct pollfd *pfd, unsigned max,
		     unsigned long *n, uint64_t max_ns);

void timer_arm(struct rocemu_qp *qp, enum timer_kind kind, uint64_t ns);
void timer_cancel(struct rocemu_qp *qp, enum timer_kind kind);

/* ---- devices and memory ------------------------------------------ */

struct rocemu_dev {
	struct rocemu_world *w;
	struct rocemu_dev *next;
	char name[32];
	uint8_t gid[16];
	uint8_t mac[6];
	enum ibv_mtu mtu;
	uint64_t cnt[ROCEMU_CNT_COUNTER_MAX];
	struct rocemu_qp *qps;		/* hash by qpn */
	struct rocemu_mr *mrs;		/* hash by index (key >> 8) */
	struct idgen qpns;
	struct idgen mr_indices;
	uint64_t mr_serial;		/* registrations so far */
	int async_sock[2];		/* [0] the application's fd */
	int udp_fd;			/* UDP wire: port 4791; else -1 */
	uint8_t *udp_rx;		/* UDP wire: receive buffers */
	struct tx_batch *udp_tx;	/* UDP wire: datagrams to send */
	struct tx_sock *tx_socks;	/* UDP wire: one per source port */
	struct ibv_async_event *async_q;
	unsigned async_n, async_cap;
};

static inline void dev_count(struct rocemu_dev *d, enum rocemu_counter c)
{
	d->cnt[c]++;
}

/* Queues an async event about element (a QP, CQ or SRQ, by type). */
void dev_async_event(struct rocemu_dev *d, enum ibv_event_type type,
		     void *element);
/* Drops the queued events about element, which is being destroyed. */
void dev_forget_events(struct rocemu_dev *d, const void *element);

/* Receives one frame that the wire routed to d. */
void dev_receive(struct rocemu_dev *d, const uint8_t *frame, size_t len);

struct rocemu_pd {
	struct rocemu_dev *dev;
	unsigned users;
};

struct rocemu_mr {
	UT_hash_handle hh;
	uint32_t index;		/* the key's top 24 bits, unique in the device */
	struct rocemu_pd *pd;
	uint8_t *addr;
	uint64_t len;
	int access;
	uint32_t key;		/* lkey and rkey */
	/* Which registration this is, never repeated in a device: an engine
	 * that must know a key still names the MR it checked at the start of
	 * a message compares this, not the key, which can be reused. */
	uint64_t serial;
};

/* 0 if [addr, addr+len) is mapped readable, and writable too when write
 * is asked for; -EFAULT if any byte of it is not. */
int mem_range_check(const void *addr, uint64_t len, bool write);

/*
 * Finds the MR with this key in pd covering [va, va+len) with all of the
 * access bits; NULL if any check fails. len 0 checks the key alone.
 * The result is good until the world lock is released: engines look an
 * MR up again for every packet and never keep the pointer.
 */
struct rocemu_mr *mr_check(struct rocemu_pd *pd, uint32_t key, uint64_t va,
			   uint64_t len, int access);
/* The same check for a message that began under registration serial:
 * true only if the key still names that very registration. */
bool mr_still(struct rocemu_pd *pd, uint32_t key, uint64_t va, uint64_t len,
	      int access, uint64_t serial);

/* Copies between an SGE list (local keys, checked with access) and a flat
 * buffer; offset is into the SGE list. 0, or -EFAULT on a key failure. */
int sge_copy_to(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
		uint64_t offset, const void *src, uint64_t len, int access);
int sge_copy_from(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
		  uint64_t offset, void *dst, uint64_t len);
/* Points *p at [offset, offset+len) of the SGE list when one SGE holds it
 * all (and its key allows reading): 0; -EAGAIN if it spans SGEs; -EFAULT
 * on a key failure. */
int sge_map(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
	    uint64_t offset, uint64_t len, const uint8_t **p);

struct rocemu_ah {
	struct rocemu_pd *pd;
	struct ibv_ah_attr attr;
};

struct rocemu_srq {
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct ring rq;		/* struct rwqe */
	uint32_t max_sge;
	uint32_t limit;		/* armed when non-zero */
	unsigned users;
	void *user;
};

/* ---- completion queues ------------------------------------------- */

/*
 * A completion channel queues the CQs that have an event to be read, each
 * at most once (events coalesce, as on hardware), so the device never
 * waits on the application. Its fd is one end of a socket pair that holds
 * a byte exactly while the queue is not empty.
 */
struct rocemu_channel {
	struct rocemu_dev *dev;
	int sock[2];		/* [0] the application's fd; [1] the device's */
	struct rocemu_cq *first, *last;
	unsigned users;
};

struct rocemu_cq {
	struct rocemu_dev *dev;
	struct rocemu_channel *ch;
	struct ring ring;	/* struct ibv_wc */
	/* The ring has one producer (the engines, under the world lock) and
	 * any number of pollers, who take turns under this lock. */
	pthread_spinlock_t poll_lock;
	bool armed, armed_solicited, overrun;
	bool event_queued;		/* on its channel's queue */
	struct rocemu_cq *event_next;
	unsigned users;
	void *user;
};

/* Adds a completion; an overrun raises IBV_EVENT_CQ_ERR and loses it. */
void cq_push(struct rocemu_cq *cq, const struct ibv_wc *wc, bool solicited);

/* ---- queue pairs ------------------------------------------------- */

enum swqe_state { WQE_POSTED, WQE_SENDING, WQE_SENT, WQE_DONE };

struct swqe {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned flags;
	uint32_t imm;		/* immediate data or rkey to invalidate */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add, swap;
	/* UD: where it goes, copied from the AH at post time (as rxe does),
	 * so the AH may be destroyed as soon as the post returns. */
	struct ibv_ah_attr av;
	uint32_t remote_qpn, remote_qkey;
	uint32_t num_sge;
	uint32_t length;
	struct ibv_sge sg[MAX_SGE];
	uint8_t inline_data[MAX_INLINE];
	bool is_inline;
	/* requester and completer progress */
	uint8_t state;
	uint32_t first_psn, last_psn;
	uint32_t sent;		/* bytes sent so far */
	enum ibv_wc_status status;
};

struct rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;
	struct ibv_sge sg[MAX_SGE];
};

/* What a READ or atomic asked for, kept to answer a duplicate of it, and
 * how much of its response is still owed. */
struct rd_res {
	bool valid;
	bool atomic;
	bool owed;		/* response packets not yet sent */
	bool answered;		/* its whole response went out once */
	uint32_t first_psn, last_psn;
	uint32_t next_psn;	/* the next response packet to send */
	uint64_t va;
	uint32_t rkey, len;
	uint64_t mr_serial;	/* READ: the registration it was checked in */
	uint32_t msn;		/* the MSN once it executed (C9-148) */
	uint64_t orig;		/* atomic result */
};

struct rocemu_qp {
	UT_hash_handle hh;
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	uint32_t qpn;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;	/* current attributes */
	enum ibv_qp_state state;
	struct rocemu_cq *scq, *rcq;
	struct rocemu_srq *srq;
	struct ring sq;		/* struct swqe; head = oldest not retired */
	struct ring rq;		/* struct rwqe; unused with an SRQ */
	uint16_t sport;
	struct roce_frame tmpl;	/* addresses and ports of every frame */
	struct rocemu_qp *ready_next, *ack_next;
	void *user;
	bool in_ready, in_acks;
	uint32_t timer_gen[2];
	bool timer_armed[2];

	struct {
		uint32_t psn;		/* next PSN to send */
		uint32_t max_psn;	/* one past the highest PSN sent */
		uint32_t idx;		/* next SQ slot to send from */
		unsigned noack;		/* packets since the last AckReq */
		unsigned rd_atomic;	/* READ/atomics outstanding */
		bool rnr_wait;		/* paused by an RNR NAK */
		bool went_back;		/* went back from back_psn, */
		uint32_t back_psn;
		uint32_t back_seen;	/* and saw responses up to this since */
	} req;
	struct {
		uint32_t psn;		/* oldest PSN not yet acknowledged */
		unsigned retry_left, rnr_left;
	} comp;
	struct {
		uint32_t psn;		/* next PSN expected */
		uint32_t msn;
		bool nak_sent;		/* one NAK-seq per gap (C9-110) */
		bool in_msg;		/* inside a multi-packet message */
		uint16_t msg_op;	/* ROCE_OPF_SEND or _WRITE */
		struct rwqe wqe;	/* receive WQE being filled */
		bool have_wqe;
		uint32_t recvd;		/* bytes placed in it */
		uint64_t va;		/* RDMA WRITE position */
		uint32_t rkey, resid;
		uint32_t write_len;	/* RETH length of this WRITE */
		uint64_t mr_serial;	/* the MR its first packet named */
		uint32_t ack_psn;	/* coalesced ACK (or NAK) owed */
		uint8_t ack_syn;	/* its AETH syndrome */
		bool ack_owed;
		bool fatal_owed;	/* that NAK then ends the QP (C9-129) */
		enum ibv_event_type fatal_ev;
		enum ibv_wc_status fatal_status; /* for the receive WQE */
		bool drop_msg;		/* UC: dropping the rest of a message */
		struct rd_res res[MAX_RD_ATOMIC];
		unsigned res_next;
		/* READ responses go out in bursts (resp_read.c) */
		uint64_t burst_at;	/* when this burst began */
		uint64_t next_burst;	/* when the next may begin */
		unsigned burst_sent;	/* its packets so far */
		uint64_t gap_ns;	/* UDP: between the last full bursts */
		uint64_t pace_ns;	/* UDP: per packet, since a loss */
	} resp;
};

static inline uint32_t qp_mtu(const struct rocemu_qp *qp)
{
	/* UD has no path: its messages are limited by the port MTU. */
	enum ibv_mtu m = qp->init.qp_type == IBV_QPT_UD ? qp->dev->mtu
							: qp->attr.path_mtu;
	return 128u << m;
}

static inline bool qp_is(const struct rocemu_qp *qp, enum ibv_qp_type t)
{
	return qp->init.qp_type == t;
}

void qp_make_ready(struct rocemu_qp *qp);
/* Takes the next receive WQE (from the SRQ if the QP has one) into out;
 * false if there is none. */
bool qp_take_recv(struct rocemu_qp *qp, struct rwqe *out);
/* Posts one receive to a ring: 0, -ENOMEM if full, -EINVAL if bad. */
int rwqe_post(struct ring *rq, uint32_t max_sge, const struct ibv_recv_wr *wr);
/* Moves qp to ERROR, raises the async event, flushes both queues. */
void qp_error(struct rocemu_qp *qp, enum ibv_event_type ev);
void qp_flush(struct rocemu_qp *qp);

/* Builds and sends a frame from qp's template and the given ib fields. */
void qp_send_packet(struct rocemu_qp *qp, struct roce_ib *ib);

/* Sends what the SQ holds, as far as window and wire allow; returns the
 * packets sent. */
unsigned req_run(struct rocemu_qp *qp);
/* A local error on wqe: it completes with status, the QP goes to ERROR. */
void fail_local(struct rocemu_qp *qp, struct swqe *wqe,
		enum ibv_wc_status status);
/* The payload of [off, off+n) of wqe: mapped in place, or gathered into
 * bounce; NULL after a local protection error (the QP is then failed). */
const uint8_t *req_payload(struct rocemu_qp *qp, struct swqe *wqe,
			   uint32_t off, uint32_t n, uint8_t *bounce);
void req_retry(struct rocemu_qp *qp);
/* Moves the send position past what ACKs have just covered. */
void req_follow_acks(struct rocemu_qp *qp);
void comp_receive(struct rocemu_qp *qp, const struct roce_frame *f);
void comp_timer(struct rocemu_qp *qp, enum timer_kind kind);
/* Retires finished WQEs from the head of the SQ, in order. */
void comp_retire(struct rocemu_qp *qp);
void resp_receive(struct rocemu_qp *qp, const struct roce_frame *f);
void uc_receive(struct rocemu_qp *qp, const struct roce_frame *f);
void ud_receive(struct rocemu_qp *qp, const struct roce_frame *f);
/* UD: sends wqe as one datagram to its address handle. */
void ud_send(struct rocemu_qp *qp, struct swqe *wqe);
/* Sets the template's destination to an address vector. */
void qp_template_to(struct rocemu_qp *qp, const struct ibv_ah_attr *ah);

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
/* Sends what qp owes, in PSN order, a bounded burst of it; returns the
 * packets sent. qp stays on the world's list while it owes more. */
unsigned resp_run(struct rocemu_qp *qp);
/* When qp may next send what it owes; false if it owes nothing. */
bool resp_due(struct rocemu_qp *qp, uint64_t *when);

#endif
