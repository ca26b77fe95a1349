/* SPDX-License-Identifier: MIT */
/* The libibverbs.so.1 front end: each verbs object wraps the device object it stands for. */
#ifndef ROCEMU_EMU_VERBS_LOCAL_H
#define ROCEMU_EMU_VERBS_LOCAL_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>

#include "rocemu/device.h"

/*
 * The verbs objects keep rdma-core's public layout first, so that the
 * header's inline functions (ibv_post_send, ibv_poll_cq, ...) work on
 * them, and the rocemu object behind.
 */
struct rv_context {
	struct verbs_context vctx;	/* ends with the ibv_context */
	unsigned gen;	/* the process it was opened in (rv_stale) */
	/* The device's attributes at open: fixed for its life, so a forked
	 * child can still be told them on an inherited context (docs/fork.md) */
	struct ibv_device_attr_ex attr;
};

struct rv_pd {
	struct ibv_pd pd;
	struct rocemu_pd *p;
};

struct rv_dm;

struct rv_mr {
	struct ibv_mr mr;
	struct rocemu_mr *m;
	struct rv_dm *dm;	/* the device memory it covers, or NULL */
};

/* Device memory: host memory of the library's, reached only through the
 * copy ops and MRs over it (rocemu has no memory of its own to map). */
struct rv_dm {
	struct ibv_dm dm;
	uint8_t *mem;
	size_t len;
	_Atomic unsigned mrs;	/* MRs over it: ibv_free_dm refuses till none */
	struct rv_dm *orig;	/* an import's original, else NULL */
	unsigned imports;	/* an original's imports not yet unimported */
	struct rv_dm *next;	/* originals, by handle (ibv_import_dm) */
	unsigned gen;	/* the process it was allocated in */
};

/*
 * Events handed to the application name these objects, so each counts
 * the events it was named in (under the lock that hands them out); its
 * destroy waits until the application has acknowledged as many, as
 * libibverbs does with the counts the kernel reports
 * (ibv_get_cq_event(3), ibv_get_async_event(3)).
 */
struct rv_cq {
	/* struct ibv_cq_ex begins with the fields of struct ibv_cq
	 * (ibv_cq_ex_to_cq is a cast): one object serves both. */
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx;
	};
	struct rocemu_cq *c;
	unsigned comp_reported, async_reported;
	/* An extended CQ's current completion, from ibv_start_poll or
	 * ibv_next_poll to the next of them or ibv_end_poll. */
	struct ibv_wc cur;
	uint64_t cur_ts;	/* its time on the device clock, ns */
};

/* A QP made with send_ops_flags (ibv_create_qp_ex) is an ibv_qp_ex, whose
 * first member is the ibv_qp: qp and qpx are one address. */
/* ibv_wr_flush's pointer: rdma-core 45 appended it to struct ibv_qp_ex
 * after wr_atomic_write; programs built with those headers read it just
 * past the older struct (verbs_qp_ex.c asserts where that ends). */
typedef void (*rv_wr_flush_fn)(struct ibv_qp_ex *qp, uint32_t rkey,
			       uint64_t remote_addr, size_t len, uint8_t type,
			       uint8_t level);

struct rv_qp {
	union {
		struct ibv_qp qp;
		struct {
			struct ibv_qp_ex qpx;
			rv_wr_flush_fn wr_flush;
		};
	};
	struct rocemu_qp *q;
	unsigned async_reported;
	/* The ibv_wr_* batch (verbs_qp_ex.c); NULL unless send_ops_flags
	 * were given. */
	struct rv_wr_batch *batch;
};

struct rv_srq {
	struct ibv_srq srq;
	struct rocemu_srq *s;
	unsigned async_reported;
};

struct rv_mw {
	struct ibv_mw mw;
	struct rocemu_mw *m;
};

struct rv_ah {
	struct ibv_ah ah;
	struct rocemu_ah *a;
};

struct rv_channel {
	struct ibv_comp_channel ch;
	struct rocemu_channel *c;
	/* Taking an event and counting it on its CQ is one step with
	 * respect to that CQ's destroy. */
	pthread_mutex_t lock;
};

/* The one device of this process, made on first use from ROCEMU_ADDR,
 * ROCEMU_MTU, ROCEMU_PCAP and ROCEMU_TRACE. NULL and errno if it cannot
 * be. */
struct rocemu_dev *rv_dev(void);
/* The world rv_dev made; NULL before it made one. */
struct rocemu_world *rv_world(void);

/* ROCEMU_STATE (verbs_state.c, docs/state.md): reads it and installs the
 * signal handler once; true when it is on (the progress thread's tick
 * must then call rv_state_tick); a bad value is said and ignored. */
bool rv_state_from_env(void);
/* From the progress thread's tick: dumps the queue state on stderr and
 * into the trace if the signal came since; nothing otherwise. */
void rv_state_tick(void);
/* At exit, after the progress thread stopped: the last dump, when
 * ROCEMU_STATE is on; nothing otherwise. */
void rv_state_at_exit(void);

/*
 * True, with errno set to EIO, when context was opened before this
 * process was forked from the one that opened it: the device behind it
 * is the parent's, and everything made on it is dead here (as a device
 * the kernel took away, whose verbs fail with EIO). Every verbs call on
 * an object checks this before anything of the device's is touched, lock
 * included. False, errno unchanged, for a context of this process's.
 */
bool rv_stale(const struct ibv_context *context);
/* Which process this is: a number that changes in each forked child
 * (what rv_stale compares). Never fails. */
unsigned rv_fork_gen(void);
/* The attributes of context's device as they were at its open: what
 * ibv_query_device(_ex) answers, in any process. Never fails. */
const struct ibv_device_attr_ex *rv_context_attr(
	const struct ibv_context *context);
/* In a forked child: the async event lock made anew (a thread of the
 * parent's may have held it). Never fails. */
void rv_events_fork_child(void);
/* In a forked child: the device-memory list and budget start empty (what
 * they held is the parent's), their lock made anew. Never fails. */
void rv_dm_fork_child(void);

/* ibv_query_port for attr of len bytes (older programs pass less). */
int rv_query_port(struct ibv_context *context, uint8_t port,
		  struct ibv_port_attr *attr, size_t len);

/* Fills the verbs ops the header's inline functions call. */
void rv_fill_ops(struct rv_context *ctx);
/* Fills the extended device query op (ibv_query_device_ex). */
void rv_fill_device_ex_ops(struct rv_context *ctx);
/* Fills the memory region ops (ibv_advise_mr). */
void rv_fill_mr_ex_ops(struct rv_context *ctx);

/* Fills the memory window ops (ibv_alloc_mw, ibv_dealloc_mw,
 * ibv_bind_mw). */
void rv_fill_mw_ops(struct rv_context *ctx);
/* A BIND_MW WR, copied for the device: its verbs MW and MR replaced by
 * the device's (true); any other WR is left as it is (false). */
bool rv_wr_to_dev(struct ibv_send_wr *wr);
/* Makes an ordinary CQ (ibv_create_cq's checks); NULL and errno. */
struct rv_cq *rv_cq_create(struct ibv_context *context, int cqe,
			   void *cq_context, struct ibv_comp_channel *channel,
			   int comp_vector);
/* Fills the extended CQ op (ibv_create_cq_ex). */
void rv_fill_cq_ex_ops(struct rv_context *ctx);
/* Fills the device memory ops (ibv_alloc_dm, ibv_free_dm, ibv_reg_dm_mr). */
void rv_fill_dm_ops(struct rv_context *ctx);

/* An MR over dm is gone (ibv_dereg_mr). */
void rv_dm_mr_gone(struct rv_dm *dm);

/* Destroy the device object behind a verbs object (0 or -errno, as the
 * device's free does), then wait until every event that named the object
 * has been acknowledged. The verbs object itself is left to the caller. */
int rv_cq_destroy(struct rv_cq *cq);
/* The same for a QP: its async events acknowledged. */
int rv_qp_destroy(struct rv_qp *qp);
/* The same for an SRQ: its async events acknowledged. */
int rv_srq_destroy(struct rv_srq *srq);

/* Makes the device QP behind a verbs QP for attr (its CQs and SRQ verbs
 * objects), with attr->cap set to what was given; NULL and errno on
 * failure. */
struct rv_qp *rv_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
/* Posts wr's list on qp, the verbs handles in it (UD AHs) taken for the
 * device's: with all, the whole list or none of it (ibv_wr_complete),
 * else up to the first refused one (ibv_post_send). 0 or -errno, *bad
 * naming the refused WR of wr's list. */
int rv_post_send(struct rv_qp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad, bool all);
/* Gives qp the ibv_wr_* operations for the opcodes in send_ops
 * (IBV_QP_EX_WITH_* bits); 0 or -ENOMEM. */
int rv_qp_ex_init(struct rv_qp *qp, uint64_t send_ops);
/* Frees what rv_qp_ex_init made (nothing if it made nothing). */
void rv_qp_ex_fini(struct rv_qp *qp);
/* Fills the extended QP creation op (ibv_create_qp_ex). */
void rv_fill_qp_ex_ops(struct rv_context *ctx);

/* verbs returns positive errno; rocemu negative. */
static inline int rv_err(int rc)
{
	return rc < 0 ? -rc : rc;
}

#endif
