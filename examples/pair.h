/* SPDX-License-Identifier: MIT */
/*
 * The set-up every example shares, kept out of their way: one verbs device,
 * a protection domain, and two sides "a" and "b", each with its own
 * completion queue, a registered buffer and a queue pair. For RC and UC the
 * two queue pairs are connected to each other through the device's own
 * address (GID index 1, the IPv4-mapped GID, as on rxe); for UD both are
 * simply ready to send. Only libibverbs is used: this file is an example too.
 */
#ifndef ROCEMU_EXAMPLE_PAIR_H
#define ROCEMU_EXAMPLE_PAIR_H

#include <infiniband/verbs.h>
#include <stddef.h>

#define PAIR_GID_INDEX 1
#define PAIR_QKEY 0x11111111

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid; /* ours, at PAIR_GID_INDEX: both sides share it */
	size_t len;	   /* bytes in each side's buffer */
	struct side a, b;
	struct ibv_srq *srq; /* b's shared receive queue, if it has one */
	struct ibv_comp_channel *channel; /* b's completion channel, if any */
	/* Set between pair_open and pair_add_qps: the queue pairs are made
	 * with ibv_create_qp_ex for these IBV_QP_EX_WITH_* operations, so
	 * that ibv_qp_to_qp_ex gives their ibv_wr_* interface. */
	uint64_t send_ops;
};

/*
 * Device, PD, CQs and buffers of @len bytes; with @b_channel set, b's CQ
 * reports to a completion channel of its own. Returns 0, or prints why and
 * returns -1.
 */
int pair_open(struct pair *p, size_t len, int b_channel);
/*
 * Queue pairs of @type on both sides; b's receives come from @srq_b if set,
 * and pair_close destroys it after the queue pairs that use it.
 */
int pair_add_qps(struct pair *p, enum ibv_qp_type type, struct ibv_srq *srq_b);
/*
 * Poll @cq until one completion arrives: 0, or -1 (ETIMEDOUT) after
 * PAIR_WAIT_S seconds, a hang guard generous enough for a loaded machine.
 */
enum { PAIR_WAIT_S = 60 };
int pair_wait(struct ibv_cq *cq, struct ibv_wc *wc);
/* Post one signalled work request of one scatter/gather element. */
int pair_post_send(struct side *s, struct ibv_send_wr *wr, void *addr,
		   size_t len);
int pair_post_recv(struct side *s, uint64_t wr_id, void *addr, size_t len);
void pair_close(struct pair *p);
/*
 * Print why no device opened (@err, errno of the failed open), naming the
 * libibverbs.so.1 the loader picked: the system's (then what to set) or
 * rocemu's (then its own message says why).
 */
void pair_no_device(int err);

#endif
