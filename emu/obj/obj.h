/* SPDX-License-Identifier: MIT */
/*
 * The verbs objects: device, PD, MR, AH, SRQ, CQ and completion channel,
 * QP and its state table. Their semantics live here (what a verbs call
 * may do to them), no packets: the engines that move packets keep their
 * per-QP state in struct rocemu_qp, and run when the world tells them.
 *
 * Layer rule: obj/ includes core/ and the public headers (rocemu/), not
 * wire/, engine/ or world/. A device's wire port is an opaque pointer.
 */
#ifndef ROCEMU_OBJ_OBJ_H
#define ROCEMU_OBJ_OBJ_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

#include "core/core.h"
#include "core/idgen.h"
#include "core/ring.h"
#include "rocemu/device.h"
#include "rocemu/proto.h"
#include "wr_opcode.h"

struct wire_port;
struct rocemu_qp;
struct swqe;

enum {
	MAX_SGE = 8,
	MAX_INLINE = 256,
	/* READs and atomics in flight per QP, each direction: rxe's 128, so
	 * that a peer asking for what rxe advertises gets it. */
	MAX_RD_ATOMIC = 128,
	/* Responder resources a QP keeps at least: headroom for a requester
	 * that runs ahead of max_dest_rd_atomic (its READs are answered, not
	 * lost; test_reads_beyond_max_dest_rd_atomic). */
	MIN_RD_RES = 16,
	MAX_QP_WR = 16384,
	MAX_CQE = 1 << 20,
	MAX_MR_SIZE = 1u << 31,	/* RETH lengths above 2^31 are invalid */
	/* Device memory (ibv_alloc_dm), all allocations together: 128 KiB,
	 * the on-chip memory a ConnectX-5-class NIC offers. It is host
	 * memory here, but programs size their use by this number, and a
	 * small one keeps their tests of the limit quick. */
	MAX_DM_SIZE = 128 * 1024,
	WINDOW_PKTS = 512,	/* requests outstanding before waiting */
	ACKREQ_EVERY = 64,	/* AckReq inside long messages, as rxe */
};

/* What a sched_timer's kind says about its owner: a QP's retry or RNR
 * timer, or a CM id's (emu/cm), which the world hands to the CM. */
enum timer_kind { TIMER_RETRY, TIMER_RNR, TIMER_CM };

/* A MAD that reached QP1 as rxe takes one: UD SEND Only, the GSI Q_Key,
 * exactly ROCE_MAD_LEN bytes (engine/gsi.c checked that much). */
struct gsi_mad {
	const uint8_t *mad;		/* ROCE_MAD_LEN bytes */
	uint8_t src_gid[16];		/* where it came from */
	uint8_t hop_limit;		/* its IP TTL or hop limit */
	uint8_t traffic_class;
};

/* QP1's consumer, the CM: what the engine hands it. The world sets it up
 * when it makes a device (obj and engine cannot name the CM's layer). */
struct gsi_ops {
	/* a checked MAD; m is valid during the call */
	void (*receive)(void *cm, const struct gsi_mad *m);
	/* the first packet reached qp in RTR (IBV_EVENT_COMM_EST) */
	void (*comm_est)(void *cm, struct rocemu_qp *qp);
};

/* ---- devices and memory ------------------------------------------ */

struct rocemu_dev {
	struct core *core;
	struct wire_port *port;		/* its place on the wire */
	UT_hash_handle hh;		/* in the world's table, by gid */
	char name[32];
	uint8_t gid[16];		/* GID 1: its address */
	uint8_t gid_ll[16];		/* GID 0: the link-local one of its MAC */
	/* GID 0 is a link-local address of the interface the device's IPv6
	 * address is on: packets from GID 0 leave from it (IPv6 headers
	 * that carry it), and the wire takes packets to it. */
	bool ll_routed;
	uint8_t mac[6];
	enum ibv_mtu mtu;
	enum rocemu_misbehave misbehave; /* test-only (device.h) */
	uint64_t cnt[ROCEMU_CNT_COUNTER_MAX];
	struct rocemu_qp *qps;		/* hash by qpn */
	struct rocemu_mr *mrs;		/* hash by index (key >> 8) */
	struct rocemu_mw *mws;		/* hash by index, the MRs' key space */
	struct idgen qpns;
	struct idgen mr_indices;
	uint64_t mr_serial;		/* registrations and MW binds so far */
	unsigned odp_mrs;		/* on-demand MRs registered now */
	int async_sock[2];		/* [0] the application's fd */
	struct ibv_async_event *async_q;
	unsigned async_n, async_cap;
	/* QP1: its consumer (NULL: MADs are dropped, counted), and the QP
	 * state its packets are sent from, made at the first send. */
	const struct gsi_ops *gsi_ops;
	void *gsi_user;
	struct rocemu_qp *gsi;
	/* Frames it sent or took in, and the ICRC of the last: its trace
	 * events carry them, to be placed in a capture it did not write. */
	uint64_t frames_seen;
	uint32_t last_icrc;
	/* Explain mode (why.c): reasons given, per kind, and the last text
	 * and rule of each, kept while someone listens. */
	uint64_t why_cnt[ROCEMU_WHY_KINDS];
	char why_last[ROCEMU_WHY_KINDS][ROCEMU_EV_TEXT];
	char why_rule[ROCEMU_WHY_KINDS][ROCEMU_EV_NAME];
	uint32_t pds_made;		/* PDs allocated so far (their handles) */
};

/* Whether the device was told to break rule m (test-only). */
static inline bool dev_misbehaves(const struct rocemu_dev *d,
				  enum rocemu_misbehave m)
{
	return d->misbehave == m;
}

static inline void dev_count(struct rocemu_dev *d, enum rocemu_counter c)
{
	d->cnt[c]++;
}

/* A frame with ICRC icrc went out of d or came into it (see frames_seen). */
static inline void dev_saw_frame(struct rocemu_dev *d, uint32_t icrc)
{
	d->frames_seen++;
	d->last_icrc = icrc;
}

/*
 * Fills in ev's device (name, GID) and where it stands among the frames d
 * saw, and hands it to the world's event sink (core_event), if any. The
 * caller fills the rest; ev's other fields are unchanged.
 */
void dev_event(struct rocemu_dev *d, struct rocemu_event *ev);

/* rocemu_dev_dump_state without taking the lock: the caller holds it
 * (qp_dump.c). */
void dev_dump_state(struct rocemu_dev *d, rocemu_state_fn fn, void *arg);

/* Whether a reason's text is wanted (core_explaining): callers that must
 * work to find a reason's details ask first. */
static inline bool dev_explaining(const struct rocemu_dev *d)
{
	return core_explaining(d->core);
}

/*
 * Explain mode: counts a reason of kind k on d and, while someone
 * listens (dev_explaining), formats fmt into its text, keeps it as the
 * kind's last, writes it as a text trace line and hands it as a why
 * event (qpn; op and wr_id of the WQE concerned, op NULL for none; rule,
 * e.g. "IBTA 9.7.5.1.1") to dev_event. Nothing is formatted otherwise.
 */
void dev_why(struct rocemu_dev *d, enum rocemu_why k, uint32_t qpn,
	     const char *op, uint64_t wr_id, const char *rule,
	     const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* A QP state's name for reasons ("RTR"); "?" for no state. */
const char *qp_state_name(enum ibv_qp_state s);

/*
 * Sets up a device from cfg (name, GID, MTU, first QPN) with its async
 * event socket pair: 0, -EINVAL for a bad MTU, -errno. The world attaches
 * it to a wire and to its table; d is zeroed first.
 */
int dev_init(struct rocemu_dev *d, struct core *c,
	     const struct rocemu_dev_cfg *cfg);

/*
 * The address on the wire at which d reaches gid: gid itself, except for
 * a link-local GID no socket of an IPv4 device can reach. A device at an
 * IPv4 address has no interface holding its GID 0 (the link-local
 * address of its MAC); that GID, its own or another rocemu device's
 * (whose MAC carries its IPv4 address), is reached at the IPv4 address
 * behind it, as GID 1. Frames are built with this address, so the ICRC
 * covers what the wire carries. A device whose GID 0 is its interface's
 * link-local address (ll_routed) reaches every GID as it is. out may be
 * gid.
 */
void dev_wire_gid(const struct rocemu_dev *d, const uint8_t gid[16],
		  uint8_t out[16]);

/* True when index names a GID of d's port (not an empty entry). */
bool dev_gid_index_ok(const struct rocemu_dev *d, unsigned index);
/* Frees what dev_init made (not d itself). */
void dev_fini(struct rocemu_dev *d);

/*
 * Gives d the QPNs of slot (docs/sharing.md) when its port shares its
 * address with other processes: slot<<16 .. slot<<16|0xffff, their top
 * byte the slot the kernel steers by. Slot 0 keeps dev_init's start and
 * numbering and ends at 0xffff, unless the caller asked for a first QPN
 * above that (a replay's), which keeps the whole range. Its QPN range into
 * *lo and *hi. Never fails; call before any QP is made.
 */
void dev_qpn_slot(struct rocemu_dev *d, uint8_t slot, uint32_t *lo,
		  uint32_t *hi);

/* Queues an async event about element (a QP, CQ or SRQ, by type). */
void dev_async_event(struct rocemu_dev *d, enum ibv_event_type type,
		     void *element);
/* Drops the queued events about element, which is being destroyed. */
void dev_forget_events(struct rocemu_dev *d, const void *element);

struct rocemu_pd {
	struct rocemu_dev *dev;
	unsigned users;
	uint32_t handle;	/* its number on the device: 1, 2, ... */
};

struct rocemu_mr {
	UT_hash_handle hh;
	uint32_t index;		/* the key's top 24 bits, unique in the device */
	struct rocemu_pd *pd;
	uint8_t *addr;
	uint64_t len;
	/* The address the MR's first byte has on the wire and in SGEs: addr,
	 * or 0 for a zero-based MR (IBV_ACCESS_ZERO_BASED, DM MRs). */
	uint64_t iova;
	int access;
	uint32_t key;		/* lkey and rkey */
	unsigned windows;	/* memory windows bound to it */
	/* Which registration this is, never repeated in a device: an engine
	 * that must know a key still names the MR it checked at the start of
	 * a message compares this, not the key, which can be reused. */
	uint64_t serial;
	/* On-demand paging (IBV_ACCESS_ON_DEMAND): its pages may come and go
	 * after registration, so every access goes through mem_get/mem_put,
	 * which fail cleanly where a page is gone. */
	bool odp;
};

/* Whether a key index names an MR or an MW of dev (a struct rocemu_dev):
 * the two share one index space, so a key names exactly one object. */
bool key_index_in_use(void *dev, uint32_t index);

/*
 * A memory window (IBTA 10.6.7): remote access to part of an MR, granted
 * by a bind and withdrawn by a rebind (type 1), an invalidation or its
 * dealloc (type 2). The MR it is bound to cannot be deregistered
 * meanwhile (its windows count), so mr stays good while it is bound.
 */
struct rocemu_mw {
	UT_hash_handle hh;
	uint32_t index;		/* the rkey's top 24 bits */
	struct rocemu_pd *pd;
	enum ibv_mw_type type;
	uint32_t rkey;		/* the key byte is the last bind's */
	struct rocemu_mr *mr;	/* bound to; NULL when not bound */
	uint32_t qpn;		/* type 2: the QP it was bound through */
	uint64_t addr, len;	/* the window, in the MR's addresses */
	int access;		/* IBV_ACCESS_* granted */
	uint64_t serial;	/* which bind this is (as an MR's serial) */
};

/* The MW with this key index on d, or NULL. */
struct rocemu_mw *mw_find(struct rocemu_dev *d, uint32_t index);

/*
 * Checks a remote key of a request that arrived on qp: [va, va+len)
 * through the MR or the memory window it names, with all of access (the
 * window's rights, state, range, PD and, for type 2, QP). Returns the
 * serial of that registration or bind, never 0, and the address in
 * memory of va in *mem; 0 if any check fails. Engines call it for every
 * packet: a window invalidated or rebound since fails (other serial).
 */
uint64_t rkey_resolve(const struct rocemu_qp *qp, uint32_t rkey, uint64_t va,
		      uint64_t len, int access, uint8_t **mem);

/*
 * The whole range an R_Key opens on qp with all of access, whatever
 * address a request names (a FLUSH of selectivity level MR): the MR's, or
 * the window's (0-based if it is). true with *va and *len set; false,
 * both untouched, if the key names no MR or window qp may use so.
 */
bool rkey_extent(const struct rocemu_qp *qp, uint32_t rkey, int access,
		 uint64_t *va, uint64_t *len);

/*
 * Explain mode: why rkey_resolve refused [va, va+len) under rkey for
 * access on qp, in words, into buf (n bytes, NUL included): no such key
 * in the QP's PD, another PD, a right missing, a range outside, a window
 * unbound or bound through another QP. Changes nothing.
 */
void rkey_why(const struct rocemu_qp *qp, uint32_t rkey, uint64_t va,
	      uint64_t len, int access, char *buf, size_t n);

/*
 * Executes a BIND_MW WQE on qp (the requester reaches it in order):
 * 0, or -EINVAL when a bind rule fails (nothing changed).
 */
int mw_bind(struct rocemu_qp *qp, const struct swqe *wqe);
/*
 * Invalidates the type 2 window rkey names: for LOCAL_INV posted on qp
 * (remote false), or for a SEND with Invalidate that arrived on qp.
 * check_only tests the rules without invalidating. 0, or -EINVAL when
 * the key names no window that qp may invalidate (type 1, not bound,
 * other PD or, remotely, other QP), nothing changed.
 */
int mw_invalidate(struct rocemu_qp *qp, uint32_t rkey, bool remote,
		  bool check_only);
/* Unbinds the type 2 windows bound through qp, which is being destroyed:
 * a later QP given the same number reaches nothing through them. */
void mw_forget_qp(struct rocemu_qp *qp);

/* 0 if [addr, addr+len) is mapped readable, and writable too when write
 * is asked for; -EFAULT if any byte of it is not. */
int mem_range_check(const void *addr, uint64_t len, bool write);

/*
 * Copies between the application's memory at va and a buffer of the
 * device's own, for memory that may have been unmapped since it was
 * registered: 0, or -EFAULT when part of [va, va+n) is not mapped (or
 * not writable, for mem_put), never a fault. Direct copies when d holds
 * no on-demand MR (then all registered memory is the application's
 * promise to keep mapped). What mem_put wrote before a failure is
 * unspecified.
 */
int mem_put(const struct rocemu_dev *d, uint64_t va, const void *src,
	    uint64_t n);
/* The same for reading n bytes at va into dst. */
int mem_get(const struct rocemu_dev *d, void *dst, uint64_t va, uint64_t n);
/* The n bytes at va for reading: va itself when d has no on-demand MR,
 * else a copy in bounce (n bytes); NULL when a page is gone. */
const uint8_t *mem_view(const struct rocemu_dev *d, uint64_t va, uint64_t n,
			uint8_t *bounce);
/* The checked copies themselves, whatever the MR: the same results. */
int mem_put_checked(uint64_t va, const void *src, uint64_t n);
/* Reading, checked: 0, or -EFAULT where a page of [va, va+n) is gone. */
int mem_get_checked(void *dst, uint64_t va, uint64_t n);

/*
 * Finds the MR with this key in pd covering [va, va+len) with all of the
 * access bits; NULL if any check fails. len 0 checks the key alone.
 * The result is good until the world lock is released: engines look an
 * MR up again for every packet and never keep the pointer.
 */
struct rocemu_mr *mr_check(struct rocemu_pd *pd, uint32_t key, uint64_t va,
			   uint64_t len, int access);
/* The MR named by key in d, whatever its PD and range; NULL if none. */
struct rocemu_mr *mr_find(struct rocemu_dev *d, uint32_t key);
/*
 * The host address of va, an address inside mr (mr_check said so). Done
 * in uint64_t, not as mr->addr + offset: an implicit ODP MR's addr is
 * NULL and its range the whole address space, and NULL plus an offset
 * (a kernel-half one above all) is undefined pointer arithmetic.
 */
static inline uint8_t *mr_ptr(const struct rocemu_mr *mr, uint64_t va)
{
	return (uint8_t *)(uintptr_t)((uint64_t)(uintptr_t)mr->addr +
				      (va - mr->iova));
}

/* Copies len bytes of src into an SGE list from offset into the list,
 * each SGE's local key checked with access: 0, or -EFAULT on a key
 * failure, an on-demand page that is gone, or a list shorter than
 * offset + len (what came before the failing SGE is written). */
int sge_copy_to(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
		uint64_t offset, const void *src, uint64_t len, int access);
/* Copies len bytes from an SGE list at offset into dst, each key checked
 * (no access bit needed to read): 0, or -EFAULT on a key failure or an
 * on-demand page that is gone. */
int sge_copy_from(struct rocemu_pd *pd, const struct ibv_sge *sg, unsigned n,
		  uint64_t offset, void *dst, uint64_t len);
/* Points *p at [offset, offset+len) of the SGE list when one SGE holds it
 * all (and its key allows reading): 0; -EAGAIN if it spans SGEs or is
 * on-demand memory (to be copied, checked, by sge_copy_from); -EFAULT
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

/* A completion as the CQ holds it: with the device clock's time when it
 * was made (the completion timestamp of an extended CQ). */
struct cqe {
	struct ibv_wc wc;
	uint64_t ts;		/* ns, the world's clock (core.now) */
};

struct rocemu_cq {
	struct rocemu_dev *dev;
	struct rocemu_channel *ch;
	struct ring ring;	/* struct cqe */
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
/* Removes the completions of QP qpn from cq, keeping the others in order
 * (a QP moved to RESET: what libmlx5 and libmlx4 do then). Under the
 * world lock. */
void cq_forget_qp(struct rocemu_cq *cq, uint32_t qpn);

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
	/* BIND_MW: which window, onto which MR, at post time; executed when
	 * the requester reaches it, by key, so a window or MR gone since
	 * fails the bind instead of being touched. */
	struct {
		uint32_t mw_index, mr_key, new_rkey;
		int access;
		uint64_t addr, len;
	} bind;
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
	/* FLUSH or ATOMIC WRITE: its answer is a zero-length READ
	 * response (IBTA 1.5), len 0 */
	bool placement;
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
	unsigned windows;	/* type 2 MWs bound through it now */
	uint16_t sport;
	/* A packet of its peer has arrived since the QP entered RTR (the
	 * first one raises IBV_EVENT_COMM_EST in RTR, and tells the CM). */
	bool heard;
	/* Explain mode: why it is in ERR, in words (a constant string). */
	const char *err_cause;
	struct roce_frame tmpl;	/* addresses and ports of every frame */
	/* the scheduler's: requester work, responses owed, the timers */
	struct sched_link ready, acks;
	struct sched_timer timer[2];	/* by enum timer_kind */
	void *user;

	struct {
		uint32_t psn;		/* next PSN to send */
		uint32_t max_psn;	/* one past the highest PSN sent */
		uint32_t idx;		/* next SQ slot to send from */
		unsigned noack;		/* packets since the last AckReq */
		unsigned rd_atomic;	/* READ/atomics outstanding */
		bool rnr_wait;		/* paused by an RNR NAK */
		/* Asked for by the completer, done first thing on the
		 * requester's next run (as rxe's need_retry): */
		bool need_retry;	/* go back to comp.psn */
		bool need_follow;	/* ACKs passed the send position */
	} req;
	struct {
		uint32_t psn;		/* oldest PSN not yet acknowledged */
		unsigned retry_left, rnr_left;
		bool went_back;		/* asked to go back from back_psn, */
		uint32_t back_psn;
		uint32_t back_seen;	/* and saw responses up to this since */
	} comp;
	struct {
		uint32_t psn;		/* next PSN expected */
		uint32_t msn;
		bool nak_sent;		/* one NAK-seq per gap (9.7.5.1.1) */
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
		/* false only when no resource owes a response */
		bool res_owed;
		bool fatal_owed;	/* that NAK then ends the QP (C9-129) */
		enum ibv_event_type fatal_ev;
		enum ibv_wc_status fatal_status; /* for the receive WQE */
		bool drop_msg;		/* UC: dropping the rest of a message */
		struct rd_res *res;	/* max_dest_rd_atomic of them */
		unsigned nres;
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

/* The QP numbered qpn on d, or NULL. QPNs come from an idgen counter:
 * the number itself spreads them over uthash's buckets, so the lookup
 * every received packet makes skips hashing its key. */
static inline struct rocemu_qp *qp_find(const struct rocemu_dev *d,
					uint32_t qpn)
{
	struct rocemu_qp *qp;

	HASH_FIND_BYHASHVALUE(hh, d->qps, &qpn, sizeof(qpn), qpn, qp);
	return qp;
}

static inline bool qp_is(const struct rocemu_qp *qp, enum ibv_qp_type t)
{
	return qp->init.qp_type == t;
}

/* Puts qp's requester on the scheduler's list: it has WQEs to send. */
void qp_make_ready(struct rocemu_qp *qp);
/* Puts qp's responder on the scheduler's list: it owes responses. */
void qp_owe_responses(struct rocemu_qp *qp);
/* Takes qp off the scheduler's lists and timers, before it is freed. */
void qp_unschedule(struct rocemu_qp *qp);
/* Arms qp's timer of this kind to fire ns from now, replacing an earlier
 * arming; out of memory, it stays disarmed (the retry is then lost). */
void timer_arm(struct rocemu_qp *qp, enum timer_kind kind, uint64_t ns);
/* Disarms qp's timer of this kind; disarmed already is fine. */
void timer_cancel(struct rocemu_qp *qp, enum timer_kind kind);
static inline bool timer_armed(const struct rocemu_qp *qp,
			       enum timer_kind kind)
{
	return qp->timer[kind].armed;
}

/*
 * The oldest WQE the requester has started and not finished: the first
 * one not DONE from the SQ's head, if it has started; NULL if there is
 * none. *idx is that first slot not DONE (the tail if every one is).
 */
struct swqe *qp_oldest_unfinished(struct rocemu_qp *qp, uint32_t *idx);
/*
 * Retires the DONE WQEs at the head of the SQ, in order: a CQE for each
 * signaled or failed one. In SQD, raises SQ_DRAINED (once per drain, if
 * asked for) when the head has reached the requester's position. The
 * completer calls it as WQEs finish, the requester when it sends without
 * acknowledgements or its position moves; nothing else changes.
 */
void qp_retire_done(struct rocemu_qp *qp);

/* Takes the next receive WQE (from the SRQ if the QP has one) into out;
 * false if there is none. */
bool qp_take_recv(struct rocemu_qp *qp, struct rwqe *out);
/* Posts one receive to a ring: 0, -ENOMEM if full, -EINVAL if bad. */
int rwqe_post(struct ring *rq, uint32_t max_sge, const struct ibv_recv_wr *wr);
/* Moves qp to ERROR, raises the async event, flushes both queues; a QP
 * in ERROR already is left as it is. */
void qp_error(struct rocemu_qp *qp, enum ibv_event_type ev);
/* Cancels qp's timers and completes every WQE of its send and receive
 * queues (not an SRQ's) with FLUSH_ERR, or the status a WQE failed with;
 * the QP's state is the caller's. */
void qp_flush(struct rocemu_qp *qp);

/* Sets the template's destination to an address vector. */
void qp_template_to(struct rocemu_qp *qp, const struct ibv_ah_attr *ah);

#endif
