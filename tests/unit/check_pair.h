/* SPDX-License-Identifier: MIT */
/* A fixture for device tests: two devices on one deterministic wire, one RC QP each, connected. */
#ifndef ROCEMU_TESTS_CHECK_PAIR_H
#define ROCEMU_TESTS_CHECK_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rocemu/device.h"

struct side {
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
	uint8_t *buf;		/* registered, with guard bytes around it */
	size_t len;
	struct rocemu_mr *mr;
};

struct pair {
	struct rocemu_world *w;
	struct side a, b;	/* a is 10.0.0.1, b is 10.0.0.2 */
};

struct pair_opts {
	uint64_t seed;
	enum ibv_mtu mtu;	/* path MTU; default 1024 */
	size_t len;		/* buffer bytes per side; default 64 KiB */
	int mr_access;		/* default: every access */
	int qp_access;		/* default: remote read, write, atomic */
	uint32_t psn_a, psn_b;	/* first PSNs */
	int cq_size;		/* default 4096 */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	bool exact;		/* use the four above as given, 0 included */
	uint8_t rd_atomic;	/* default 16 */
	int max_wr;		/* default 1024 */
	enum rocemu_misbehave b_misbehave; /* b's test-only break; default none */
};

enum { GUARD = 64, CANARY = 0xc5 };

/* Builds the pair and takes both QPs to RTS; asserts on failure. */
void pair_up(struct pair *p, const struct pair_opts *o);
void pair_down(struct pair *p);
/* Moves both QPs to RESET and back to RTS towards each other (after an
 * error); asserts on failure. */
void pair_reconnect(struct pair *p, const struct pair_opts *o);

/* Moves one QP from RESET to RTS towards the peer. 0 or -errno. */
int qp_connect(struct rocemu_qp *qp, uint32_t peer_qpn, const uint8_t *peer_gid,
	       uint32_t sq_psn, uint32_t rq_psn, const struct pair_opts *o);

/* Posts one work request with one SGE over s->buf + off. */
int post_send1(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id,
	       size_t off, uint32_t len, uint64_t raddr, uint32_t rkey,
	       unsigned flags);
int post_recv1(struct side *s, uint64_t wr_id, size_t off, uint32_t len);

/* Polls one CQE, settling the world first; asserts that there is one. */
struct ibv_wc poll1(struct pair *p, struct side *s);
/* Number of CQEs waiting after settling. */
int cq_count(struct pair *p, struct side *s);

/* True when every guard byte around s->buf still holds CANARY. */
int guards_intact(const struct side *s);

static inline uint64_t addr_of(const struct side *s, size_t off)
{
	return (uint64_t)(uintptr_t)(s->buf + off);
}

#endif
