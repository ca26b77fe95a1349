/* SPDX-License-Identifier: MIT */
/* libFuzzer target: packets interleaved with verbs calls on one device; unregistered memory is never touched. */
#include <errno.h>
#include <fcntl.h>
#include <sanitizer/asan_interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/device.h"
#include "rocemu/proto.h"
#include "sequence_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
				 const uint8_t *data2, size_t size2,
				 uint8_t *out, size_t max_out_size,
				 unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

enum {
	WINDOWS = 4,
	WINDOW = 8192,
	GUARD = 512,
	ARENA = GUARD + WINDOWS * (WINDOW + GUARD),
	CANARY = 0x5a,
	UNIT = 32,		/* MR and SGE offsets: whole ASan granules */
	NMR = 4,
	NQP = 2,
	NCQ = 2,
	NAH = 2,
	MAX_STEPS = 256,	/* per input: every input ends */
	MAX_PACKET = 8192,
	MAX_EVENTS = 1024,
	QP_DEPTH = 16,
	QP_SGE = 2,
	QP_INLINE = 64,
	PEER_QPN = 0x11,
	QKEY = 0x11111111,
	WR_TAG = 0x5e9a,	/* top 16 bits of every wr_id posted */
	LATENCY = 1000,		/* ns on the wire */
	TX_BUDGET = 2000,	/* packets the device sends per input */
	MAX_QPNS = 64,		/* QP numbers an input may create */
};

static const uint8_t dev_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
				     [15] = 2 };
static const uint8_t peer_gid[16] = { [10] = 0xff, [11] = 0xff, [12] = 10,
				      [15] = 1 };

struct mr_slot {
	struct rocemu_mr *mr;	/* NULL while not registered */
	unsigned window;
	uint32_t off, len;	/* the registered part of the window */
	uint32_t key;		/* the last key it had, kept after dereg */
};

struct qp_slot {
	struct rocemu_qp *qp;
	enum ibv_qp_type type;
	unsigned scq, rcq;	/* CQ slots */
	bool srq;
};

struct rig {
	struct rocemu_world *w;
	struct rocemu_dev *dev;
	struct rocemu_pd *pd[2];
	struct rocemu_cq *cq[NCQ];
	bool cq_ch[NCQ];		/* the CQ has the channel */
	struct rocemu_channel *ch;	/* non-blocking */
	struct rocemu_srq *srq;
	struct rocemu_ah *ah[NAH];
	struct qp_slot qp[NQP];
	struct mr_slot mr[NMR];
	uint64_t next_wr;
	uint32_t qpns[MAX_QPNS];	/* every QP this input created */
	unsigned nqpns;
};

struct input {
	const uint8_t *p;
	size_t left;
};

/* Windows an MR may cover, with guards between them that none covers. */
static uint8_t arena[ARENA] __attribute__((aligned(64)));
/* Inline send data comes from here: it needs no MR. */
static uint8_t scratch[QP_INLINE];

static uint8_t take(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static uint16_t take16(struct input *in)
{
	uint16_t hi = take(in);

	return (uint16_t)(hi << 8 | take(in));
}

static uint8_t *window(unsigned i)
{
	return arena + GUARD + i * (WINDOW + GUARD);
}

static uint64_t mr_base(const struct mr_slot *m)
{
	return (uint64_t)(uintptr_t)(window(m->window) + m->off);
}

/*
 * The oracle: every arena byte that no live MR covers is poisoned, so an
 * access by the engine to it (a window after its MR was deregistered, a
 * guard) is an AddressSanitizer report at the faulting instruction.
 */
static void repoison(const struct rig *r)
{
	ASAN_POISON_MEMORY_REGION(arena, sizeof(arena));
	for (int i = 0; i < NMR; i++)
		if (r->mr[i].mr && r->mr[i].len)
			ASAN_UNPOISON_MEMORY_REGION((void *)(uintptr_t)mr_base(
							    &r->mr[i]),
						    r->mr[i].len);
}

/* The guards keep their canary (a second check of the same rule). */
static void check_guards(void)
{
	static uint8_t canary[GUARD];

	if (!canary[0])
		memset(canary, CANARY, sizeof(canary));
	for (unsigned g = 0; g <= WINDOWS; g++) {
		uint8_t *p = arena + g * (WINDOW + GUARD);
		ASAN_UNPOISON_MEMORY_REGION(p, GUARD);
		if (memcmp(p, canary, GUARD))
			abort(); /* written outside every MR */
		ASAN_POISON_MEMORY_REGION(p, GUARD);
	}
}

static uint64_t new_wr_id(struct rig *r)
{
	return (uint64_t)WR_TAG << 48 | r->next_wr++;
}

/* ---- memory regions ------------------------------------------------ */

static const int access_table[8] = {
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	IBV_ACCESS_REMOTE_READ,
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	IBV_ACCESS_LOCAL_WRITE,
	IBV_ACCESS_REMOTE_WRITE, /* invalid: needs local write */
	IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ,
};

static void mr_dereg(struct rig *r, unsigned slot)
{
	struct mr_slot *m = &r->mr[slot];

	if (!m->mr)
		return;
	int rc = rocemu_mr_dereg(m->mr);
	if (rc == -EBUSY)
		return; /* refused: still registered */
	if (rc)
		abort();
	m->mr = NULL;
	repoison(r); /* from the moment dereg returns */
}

/* ibv_reg_mr(3): NULL exactly for the invalid combination. */
static void mr_reg(struct rig *r, unsigned slot, unsigned pd, unsigned win,
		   unsigned acc, uint32_t off, uint32_t len)
{
	struct mr_slot *m = &r->mr[slot];

	mr_dereg(r, slot);
	if (m->mr)
		return;
	off %= WINDOW;
	if (!len || len > WINDOW - off)
		len = WINDOW - off;
	/* The memory is the application's: registration may look at it. */
	ASAN_UNPOISON_MEMORY_REGION(window(win) + off, len);
	struct rocemu_mr *mr = rocemu_mr_reg(r->pd[pd], window(win) + off,
					     len, access_table[acc]);
	if (!mr != (acc == 6))
		abort();
	if (mr)
		*m = (struct mr_slot){ mr, win, off, len, rocemu_mr_rkey(mr) };
	repoison(r);
}

static void step_mr_reg(struct rig *r, struct input *in)
{
	uint8_t b = take(in), off = take(in), len = take(in);

	mr_reg(r, b & 3, (b >> 2) & 1, (b >> 3) & 3, b >> 5, off * UNIT,
	       len * UNIT);
}

static void step_mr_dereg(struct rig *r, struct input *in)
{
	mr_dereg(r, take(in) % NMR);
}

/* An SGE in (or just past) an MR slot's range: slot and key mode, offset
 * in units, length (2 bytes). Keys: the slot's, the next index's, or 0. */
static struct ibv_sge take_sge(struct rig *r, struct input *in)
{
	uint8_t b = take(in), off = take(in);
	uint32_t len = take16(in) & 0x3fff;
	const struct mr_slot *m = &r->mr[b & 3];
	uint32_t at = (m->off + off * UNIT) % (WINDOW + GUARD);
	uint32_t keys[4] = { m->key, m->key, m->key + 0x100, 0 };

	return (struct ibv_sge){ (uint64_t)(uintptr_t)(window(m->window) + at),
				 len, keys[(b >> 2) & 3] };
}

/* ---- completion queues, SRQ, address handles ----------------------- */

static unsigned cq_users(const struct rig *r, unsigned slot)
{
	unsigned n = 0;

	for (int i = 0; i < NQP; i++)
		if (r->qp[i].qp)
			n += (r->qp[i].scq == slot) + (r->qp[i].rcq == slot);
	return n;
}

static unsigned srq_users(const struct rig *r)
{
	unsigned n = 0;

	for (int i = 0; i < NQP; i++)
		n += r->qp[i].qp && r->qp[i].srq;
	return n;
}

static bool created_qpn(const struct rig *r, uint32_t qpn)
{
	for (unsigned i = 0; i < r->nqpns; i++)
		if (r->qpns[i] == qpn)
			return true;
	return false;
}

/* Every completion names a work request that was posted, on a QP of
 * this input. */
static void step_cq_poll(struct rig *r, struct input *in)
{
	uint8_t b = take(in);
	struct rocemu_cq *cq = r->cq[b & 1];
	struct ibv_wc wc[16];

	if (!cq)
		return;
	int n = rocemu_cq_poll(cq, 1 + ((b >> 1) & 15), wc);
	if (n < 0 || n > 1 + ((b >> 1) & 15))
		abort();
	for (int i = 0; i < n; i++)
		if (wc[i].wr_id >> 48 != WR_TAG ||
		    !created_qpn(r, wc[i].qp_num))
			abort();
}

/* A CQ that a QP uses cannot be destroyed (ibv_destroy_cq(3): EBUSY). */
static void cq_destroy(struct rig *r, unsigned slot)
{
	if (!r->cq[slot])
		return;
	int rc = rocemu_cq_free(r->cq[slot]);
	if (cq_users(r, slot)) {
		if (rc != -EBUSY)
			abort();
		return;
	}
	if (rc)
		abort();
	r->cq[slot] = NULL;
}

static void step_cq_destroy(struct rig *r, struct input *in)
{
	cq_destroy(r, take(in) % NCQ);
}

static void step_cq_create(struct rig *r, struct input *in)
{
	unsigned slot = take(in) % NCQ;
	uint8_t b = take(in);

	if (r->cq[slot])
		return;
	r->cq[slot] = rocemu_cq_new(r->dev, 1 + (b & 63),
				    b & 0x80 ? r->ch : NULL);
	if (!r->cq[slot])
		abort();
	r->cq_ch[slot] = b & 0x80;
}

static bool live_cq(const struct rig *r, const void *cq)
{
	for (int i = 0; i < NCQ; i++)
		if (r->cq[i] && (const void *)r->cq[i] == cq)
			return true;
	return false;
}

/* Arms a CQ, or takes an event from the channel: it names a live CQ of
 * the channel (rocemu_cq_free takes a destroyed CQ's event with it). */
static void step_channel(struct rig *r, struct input *in)
{
	uint8_t b = take(in);
	struct rocemu_cq *cq = r->cq[b & 1];

	if (!(b & 2)) {
		int rc = cq ? rocemu_cq_req_notify(cq, b & 4) : 0;
		if (rc && rc != -EINVAL)
			abort();
		return;
	}
	int rc = rocemu_channel_get_event(r->ch, &cq);
	if (rc == -EAGAIN)
		return;
	if (rc || !live_cq(r, cq) || !r->cq_ch[cq == r->cq[1]])
		abort();
}

static void step_srq_create(struct rig *r, struct input *in)
{
	uint8_t max = take(in), limit = take(in);
	struct ibv_srq_init_attr a = { .attr = { 1 + max % 32, QP_SGE, 0 } };

	a.attr.srq_limit = limit % (a.attr.max_wr + 1);
	if (r->srq)
		return;
	r->srq = rocemu_srq_new(r->pd[0], &a);
	if (!r->srq)
		abort();
}

static void srq_destroy(struct rig *r)
{
	if (!r->srq)
		return;
	int rc = rocemu_srq_free(r->srq);
	if (srq_users(r) ? rc != -EBUSY : rc != 0)
		abort();
	if (!rc)
		r->srq = NULL;
}

static void step_srq_destroy(struct rig *r, struct input *in)
{
	(void)in;
	srq_destroy(r);
}

/* Towards the peer, or (bit 1) this device itself. */
static void step_ah_create(struct rig *r, struct input *in)
{
	uint8_t b = take(in);
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	a.grh.sgid_index = 1;
	a.grh.hop_limit = 64;
	memcpy(a.grh.dgid.raw, b & 2 ? dev_gid : peer_gid, 16);
	if (r->ah[b & 1])
		return;
	r->ah[b & 1] = rocemu_ah_new(r->pd[0], &a);
	if (!r->ah[b & 1])
		abort();
}

static void ah_destroy(struct rig *r, unsigned slot)
{
	if (!r->ah[slot])
		return;
	int rc = rocemu_ah_free(r->ah[slot]);
	if (rc == -EBUSY)
		return;
	if (rc)
		abort();
	r->ah[slot] = NULL;
}

static void step_ah_destroy(struct rig *r, struct input *in)
{
	ah_destroy(r, take(in) % NAH);
}

/* The object an asynchronous event names is alive: a destroy takes the
 * events still queued about its object with it. */
static bool event_live(const struct rig *r, const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return live_cq(r, ev->element.cq);
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return r->srq && (void *)ev->element.srq == (void *)r->srq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		for (int i = 0; i < NQP; i++)
			if (r->qp[i].qp &&
			    (void *)ev->element.qp == (void *)r->qp[i].qp)
				return true;
		return false;
	default:
		return true; /* about the device or its port */
	}
}

static void step_async(struct rig *r, struct input *in)
{
	struct ibv_async_event ev;

	(void)in;
	for (int i = 0; i < MAX_EVENTS; i++) {
		if (rocemu_dev_get_async_event(r->dev, &ev))
			break;
		if (!event_live(r, &ev))
			abort(); /* names a destroyed object */
	}
}

/* ---- queue pairs ---------------------------------------------------- */

static enum ibv_qp_state qp_state(struct rocemu_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	rocemu_qp_query(qp, &a, &init);
	return a.qp_state;
}

/* Where a QP connects: the peer, or this device's QP in slot 0 or 1. */
static uint32_t dest_qpn(const struct rig *r, unsigned how)
{
	const struct qp_slot *s = &r->qp[how & 1];

	return how < 2 || !s->qp ? PEER_QPN : rocemu_qp_num(s->qp);
}

static int modify(struct rocemu_qp *qp, struct ibv_qp_attr *a,
		  enum ibv_qp_state to, int mask)
{
	a->qp_state = to;
	return rocemu_qp_modify(qp, a, mask | IBV_QP_STATE);
}

static int up_init(struct qp_slot *s, uint8_t b1)
{
	struct ibv_qp_attr a = { .port_num = 1, .qkey = QKEY };

	if (s->type == IBV_QPT_UD)
		return modify(s->qp, &a, IBV_QPS_INIT,
			      IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_access_flags = b1 & 0x80 ? access_table[7] : access_table[0];
	return modify(s->qp, &a, IBV_QPS_INIT,
		      IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int up_rtr(const struct rig *r, struct qp_slot *s, uint8_t b1,
		  uint8_t b2, uint8_t b3)
{
	struct ibv_qp_attr a = { 0 };
	int mask = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		   IBV_QP_RQ_PSN;

	if (s->type == IBV_QPT_UD)
		return modify(s->qp, &a, IBV_QPS_RTR, 0);
	a.path_mtu = (enum ibv_mtu)(IBV_MTU_256 + (b1 & 7) % 5);
	a.dest_qp_num = dest_qpn(r, b3 >> 6);
	a.rq_psn = (0xfffff0u + (b3 & 0x3f) * 0x0305u) & 0xffffff;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, b3 & 0x80 ? dev_gid : peer_gid, 16);
	if (s->type == IBV_QPT_RC) {
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		a.max_dest_rd_atomic = b2 & 15;
		a.min_rnr_timer = b2 & 0x10 ? 12 : 1;
	}
	return modify(s->qp, &a, IBV_QPS_RTR, mask);
}

static int up_rts(struct qp_slot *s, uint8_t b1, uint8_t b2, uint8_t b3)
{
	static const uint8_t timeouts[8] = { 0, 1, 2, 8, 12, 14, 18, 31 };
	struct ibv_qp_attr a = { .sq_psn = (b3 & 0x3f) * 0x010203u };
	int mask = IBV_QP_SQ_PSN;

	if (s->type == IBV_QPT_RC) {
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
		a.timeout = timeouts[(b1 >> 3) & 7];
		a.retry_cnt = (b2 >> 5) & 7;
		a.rnr_retry = b1 & 0x40 ? 7 : 1;
		a.max_rd_atomic = b2 & 15;
	}
	return modify(s->qp, &a, IBV_QPS_RTS, mask);
}

/*
 * RESET to RTS, as a verbs program does it; a refusal is -EINVAL. b1:
 * path MTU, timeout, rnr_retry 7 or 1, access; b2: max_rd_atomic both
 * ways, min_rnr_timer, retry_cnt; b3: PSNs, and the destination: the
 * peer, or this device's QP in slot 0 or 1.
 */
static void qp_up(const struct rig *r, struct qp_slot *s, uint8_t b1,
		  uint8_t b2, uint8_t b3)
{
	if (qp_state(s->qp) != IBV_QPS_RESET)
		return;
	int rc = up_init(s, b1);
	if (!rc)
		rc = up_rtr(r, s, b1, b2, b3);
	if (!rc)
		rc = up_rts(s, b1, b2, b3);
	if (rc && rc != -EINVAL)
		abort();
}

/* ERROR, RESET, up, SQD, SQD to RTS; -EINVAL is a valid answer. */
static void step_qp_state(struct rig *r, struct input *in)
{
	uint8_t b0 = take(in), b1 = take(in), b2 = take(in), b3 = take(in);
	struct qp_slot *s = &r->qp[(b0 >> 3) & 1];
	struct ibv_qp_attr a = { 0 };
	int rc = 0;

	if (!s->qp)
		return;
	switch (b0 & 7) {
	case 0: rc = modify(s->qp, &a, IBV_QPS_ERR, 0); break;
	case 1: rc = modify(s->qp, &a, IBV_QPS_RESET, 0); break;
	case 2: rc = modify(s->qp, &a, IBV_QPS_SQD, 0); break;
	case 3: rc = modify(s->qp, &a, IBV_QPS_RTS, 0); break;
	default: qp_up(r, s, b1, b2, b3); break;
	}
	if (rc && rc != -EINVAL)
		abort();
}

static void qp_create(struct rig *r, unsigned slot, enum ibv_qp_type type,
		      bool srq, unsigned scq, unsigned rcq)
{
	struct qp_slot *s = &r->qp[slot];
	struct ibv_qp_init_attr init = {
		.qp_type = type,
		.cap = { QP_DEPTH, QP_DEPTH, QP_SGE, QP_SGE, QP_INLINE },
	};

	if (s->qp || !r->cq[scq] || !r->cq[rcq] || r->nqpns == MAX_QPNS)
		return;
	init.send_cq = (struct ibv_cq *)(void *)r->cq[scq];
	init.recv_cq = (struct ibv_cq *)(void *)r->cq[rcq];
	init.srq = srq && r->srq ? (struct ibv_srq *)(void *)r->srq : NULL;
	s->qp = rocemu_qp_new(r->pd[0], &init);
	if (!s->qp)
		abort();
	r->qpns[r->nqpns++] = rocemu_qp_num(s->qp);
	s->type = type;
	s->scq = scq;
	s->rcq = rcq;
	s->srq = init.srq != NULL;
}

static void step_qp_create(struct rig *r, struct input *in)
{
	static const enum ibv_qp_type types[4] = { IBV_QPT_RC, IBV_QPT_UC,
						   IBV_QPT_UD, IBV_QPT_RC };
	uint8_t b = take(in);

	qp_create(r, b & 1, types[(b >> 1) & 3], b & 8, (b >> 4) & 1,
		  (b >> 5) & 1);
}

static void qp_destroy(struct rig *r, unsigned slot)
{
	struct qp_slot *s = &r->qp[slot];

	if (!s->qp)
		return;
	int rc = rocemu_qp_free(s->qp);
	if (rc == -EBUSY)
		return;
	if (rc)
		abort();
	s->qp = NULL;
}

static void step_qp_destroy(struct rig *r, struct input *in)
{
	qp_destroy(r, take(in) % NQP);
}

/* ---- posting -------------------------------------------------------- */

static int take_recv(struct rig *r, struct input *in, struct ibv_recv_wr *wr,
		     struct ibv_sge *sg)
{
	unsigned n = take(in) % (QP_SGE + 1);

	for (unsigned i = 0; i < n; i++)
		sg[i] = take_sge(r, in);
	*wr = (struct ibv_recv_wr){ .wr_id = new_wr_id(r), .sg_list = sg,
				    .num_sge = (int)n };
	return 0;
}

static void step_post_recv(struct rig *r, struct input *in)
{
	uint8_t b = take(in);
	struct rocemu_qp *qp = r->qp[b & 1].qp;

	for (unsigned i = 0; i < 1 + ((b >> 1) & 7); i++) {
		struct ibv_recv_wr wr, *bad;
		struct ibv_sge sg[QP_SGE];
		take_recv(r, in, &wr, sg);
		if (!qp)
			continue;
		int rc = rocemu_post_recv(qp, &wr, &bad);
		if (rc && rc != -EINVAL && rc != -ENOMEM)
			abort();
	}
}

static void step_srq_post(struct rig *r, struct input *in)
{
	uint8_t b = take(in);

	for (unsigned i = 0; i < 1 + (b & 7); i++) {
		struct ibv_recv_wr wr, *bad;
		struct ibv_sge sg[QP_SGE];
		take_recv(r, in, &wr, sg);
		if (!r->srq)
			continue;
		int rc = rocemu_post_srq_recv(r->srq, &wr, &bad);
		if (rc && rc != -EINVAL && rc != -ENOMEM)
			abort();
	}
}

static const enum ibv_wr_opcode send_ops[8] = {
	IBV_WR_SEND,		    IBV_WR_SEND_WITH_IMM,
	IBV_WR_RDMA_WRITE,	    IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_RDMA_READ,	    IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND_WITH_INV,
};

/* Inline data is read at post time from scratch; an atomic has one
 * 8-byte operand. */
static void shape_sges(struct ibv_send_wr *wr, struct ibv_sge *sg)
{
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint32_t each = QP_INLINE / QP_SGE;
		for (int i = 0; i < wr->num_sge; i++) {
			sg[i].addr = (uint64_t)(uintptr_t)(scratch + i * each);
			sg[i].length %= each + 1;
		}
	}
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->num_sge = 1;
		sg[0].length = 8;
	}
}

/*
 * Operands: opcode/qp/signaled/inline/fence/solicited; nsge/remote MR
 * slot/AH slot/UD destination; remote offset in units; compare-add; swap;
 * then the SGEs. The remote side is the MR slot's range and key.
 */
static void post_send(struct rig *r, struct input *in)
{
	uint8_t b0 = take(in), b1 = take(in), off = take(in);
	uint8_t add = take(in), swap = take(in);
	const struct mr_slot *m = &r->mr[(b1 >> 2) & 3];
	struct qp_slot *s = &r->qp[(b0 >> 3) & 1];
	struct ibv_sge sg[QP_SGE];
	struct ibv_send_wr wr = { .wr_id = new_wr_id(r), .sg_list = sg,
				  .opcode = send_ops[b0 & 7] }, *bad;

	wr.num_sge = (b1 & 3) % (QP_SGE + 1);
	for (int i = 0; i < wr.num_sge; i++)
		sg[i] = take_sge(r, in);
	wr.send_flags = (b0 & 0x10 ? IBV_SEND_SIGNALED : 0) |
			(b0 & 0x20 ? IBV_SEND_INLINE : 0) |
			(b0 & 0x40 ? IBV_SEND_FENCE : 0) |
			(b0 & 0x80 ? IBV_SEND_SOLICITED : 0);
	wr.imm_data = htobe32((uint32_t)r->next_wr);
	wr.invalidate_rkey = m->key;
	shape_sges(&wr, sg);
	if (!s->qp)
		return;
	if (s->type == IBV_QPT_UD) {
		wr.wr.ud.ah = (struct ibv_ah *)(void *)r->ah[(b1 >> 4) & 1];
		wr.wr.ud.remote_qpn = dest_qpn(r, b1 >> 6);
		wr.wr.ud.remote_qkey = QKEY;
		if (!wr.wr.ud.ah)
			return; /* a UD send needs a live AH */
	} else if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic = (typeof(wr.wr.atomic)){
			mr_base(m) + off * UNIT, m->key, add, swap };
	} else {
		wr.wr.rdma.remote_addr = mr_base(m) + off * UNIT;
		wr.wr.rdma.rkey = m->key;
	}
	int rc = rocemu_post_send(s->qp, &wr, &bad);
	if (rc && rc != -EINVAL && rc != -ENOMEM)
		abort();
}

/* ---- packets from the peer ------------------------------------------ */

static void put_be(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* A field of rocemu_qp_describe's line ("comp psn 0x..."); def if absent. */
static uint32_t described(struct rocemu_qp *qp, const char *field,
			  uint32_t def)
{
	char line[512];

	rocemu_qp_describe(qp, line, sizeof(line));
	const char *at = strstr(line, field);
	return at ? (uint32_t)strtoul(at + strlen(field), NULL, 16) : def;
}

/*
 * The PSN the QP takes next: a request's is the responder's expected
 * PSN; a response's the oldest unacknowledged one, except that a plain
 * ACK acknowledges everything sent (a coalesced ACK).
 */
static uint32_t expected_psn(struct rocemu_qp *qp, const uint8_t *bth,
			     const struct roce_opcode_info *op)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	if (!(op->flags & ROCE_OPF_RESP)) {
		rocemu_qp_query(qp, &a, &init);
		return a.rq_psn;
	}
	uint32_t comp = described(qp, "comp psn 0x", get_be(bth + 9, 3));
	unsigned aeth = roce_ext_offset(op->exts, ROCE_EXT_AETH);
	if ((op->flags & ROCE_OPF_ACK) && !(op->flags & ROCE_OPF_ATOMIC) &&
	    !(bth[aeth] & 0x60))
		return (described(qp, " max 0x", comp + 1) - 1) & 0xffffff;
	return comp;
}

/* Points the packet's RETH or AtomicETH (and IETH) at MR slot m: the
 * offset its own address gives, 8-aligned, kept whole inside if fit. */
static void aim_addr(const struct mr_slot *m, uint8_t *tp,
		     const struct roce_opcode_info *op, bool fit)
{
	unsigned ext = op->exts & ROCE_EXT_RETH	   ? ROCE_EXT_RETH
		       : op->exts & ROCE_EXT_ATMETH ? ROCE_EXT_ATMETH
						    : 0;

	if (op->exts & ROCE_EXT_IETH)
		put_be(tp + roce_ext_offset(op->exts, ROCE_EXT_IETH), m->key,
		       4);
	if (!ext)
		return;
	uint8_t *h = tp + roce_ext_offset(op->exts, ext);
	uint64_t off = get_be(h, 8) % (m->len ? m->len : 1);
	uint64_t len = ext == ROCE_EXT_RETH ? get_be(h + 12, 4) : 8;
	if (fit && len <= m->len && off > m->len - len)
		off = m->len - len;
	put_be(h, mr_base(m) + (off & ~7ull), 8);
	put_be(h + 8, m->key, 4);
}

/* Ethernet, IPv4 and UDP from the peer around the transport packet
 * (tl bytes after them), and a valid ICRC in its last 4 bytes. */
static void frame_around(uint8_t *frame, size_t tl)
{
	uint8_t *ip = frame + ROCE_ETH_HLEN, *udp = ip + ROCE_IPV4_HLEN;
	size_t iplen = ROCE_IPV4_HLEN + ROCE_UDP_HLEN + tl;
	uint32_t icrc;

	memset(frame, 0, ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN);
	frame[12] = 0x08;
	ip[0] = 0x45;
	put_be(ip + 2, iplen, 2);
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, peer_gid + 12, 4);
	memcpy(ip + 16, dev_gid + 12, 4);
	put_be(ip + 10, roce_inet_csum(ip, ROCE_IPV4_HLEN, 0), 2);
	put_be(udp, 0xc000, 2);
	put_be(udp + 2, ROCE_UDP_PORT, 2);
	put_be(udp + 4, tl + ROCE_UDP_HLEN, 2);
	if (roce_icrc_calc(ip, iplen, &icrc) == 0)
		put_be(udp + ROCE_UDP_HLEN + tl - ROCE_ICRC_LEN, icrc, 4);
}

/* A transport packet (BTH onwards, ICRC last) from the peer, with the
 * fields the flags name set from the rig's state. */
static void inject(struct rig *r, uint8_t flags, const uint8_t *p, size_t tl)
{
	static uint8_t frame[ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN +
			     MAX_PACKET];
	uint8_t *tp = frame + ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN;
	struct rocemu_qp *qp = r->qp[flags & PK_QP1 ? 1 : 0].qp;
	const struct roce_opcode_info *op = roce_opcode(p[0]);

	memcpy(tp, p, tl);
	if ((flags & PK_AIM) && qp)
		put_be(tp + 5, rocemu_qp_num(qp), 3);
	if (op && tl >= op->hdr_len + ROCE_ICRC_LEN) {
		if (flags & PK_ADDR)
			aim_addr(&r->mr[(flags >> PK_MR_SHIFT) & 3], tp, op,
				 flags & PK_FIT);
		if ((flags & PK_PSN) && qp)
			put_be(tp + 9, expected_psn(qp, tp, op), 3);
		if ((flags & PK_QKEY) && (op->exts & ROCE_EXT_DETH))
			put_be(tp + roce_ext_offset(op->exts, ROCE_EXT_DETH),
			       QKEY, 4);
	}
	frame_around(frame, tl);
	rocemu_world_inject(r->w, frame, (size_t)(tp - frame) + tl);
}

/* ---- time ------------------------------------------------------------ */

static bool over_budget(const struct rig *r)
{
	return rocemu_dev_counter(r->dev, ROCEMU_CNT_TX_PACKETS) >
	       TX_BUDGET;
}

/*
 * Moves the clock by ns in doubling slices, stopping once the input has
 * made the device send TX_BUDGET packets: a QP that talks to itself with
 * rnr_retry 7 retries for ever, as the IBTA says it may.
 */
static void advance(struct rig *r, uint64_t ns)
{
	for (uint64_t slice = LATENCY; ns && !over_budget(r); slice *= 2) {
		uint64_t t = slice < ns ? slice : ns;
		rocemu_world_advance(r->w, t);
		ns -= t;
	}
}

static void packet(struct rig *r, struct input *in, bool deliver)
{
	uint8_t flags = take(in);
	size_t len = take16(in);

	if (len > in->left)
		len = in->left;
	const uint8_t *p = in->p;
	in->p += len;
	in->left -= len;
	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN || len > MAX_PACKET)
		return;
	inject(r, flags, p, len);
	if (deliver)
		advance(r, LATENCY);
}

static void step_packet(struct rig *r, struct input *in)
{
	packet(r, in, true);
}

static void step_packet_queued(struct rig *r, struct input *in)
{
	packet(r, in, false);
}

static void step_run(struct rig *r, struct input *in)
{
	(void)in;
	rocemu_world_run(r->w);
}

static void step_advance(struct rig *r, struct input *in)
{
	advance(r, 1ull << (take(in) % 41));
}

static void step_post_send(struct rig *r, struct input *in)
{
	post_send(r, in);
}

/* ---- the rig ---------------------------------------------------------- */

static void trace_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "%s\n", line);
}

/* An RC QP connected to the peer over an MR of window 0 with four
 * receives: the shape most inputs start from. FUZZ_TRACE=1 in the
 * environment prints the device's trace, to read what an input does. */
static void rig_up(struct rig *r)
{
	struct rocemu_dev_cfg cfg = { .name = "fuzz", .mtu = IBV_MTU_4096 };
	struct rocemu_faults faults = { .latency_ns = LATENCY };

	memset(r, 0, sizeof(*r));
	memcpy(cfg.gid, dev_gid, 16);
	ASAN_UNPOISON_MEMORY_REGION(arena, sizeof(arena));
	memset(arena, CANARY, sizeof(arena));
	repoison(r);
	r->w = rocemu_world_new(1);
	rocemu_world_set_faults(r->w, &faults);
	if (getenv("FUZZ_TRACE"))
		rocemu_world_trace(r->w, trace_line, NULL);
	r->dev = rocemu_dev_new(r->w, &cfg);
	r->pd[0] = rocemu_pd_alloc(r->dev);
	r->pd[1] = rocemu_pd_alloc(r->dev);
	r->ch = rocemu_channel_new(r->dev);
	r->cq[0] = rocemu_cq_new(r->dev, 32, NULL);
	r->cq[1] = rocemu_cq_new(r->dev, 8, r->ch);
	if (!r->pd[0] || !r->pd[1] || !r->ch || !r->cq[0] || !r->cq[1] ||
	    fcntl(rocemu_channel_fd(r->ch), F_SETFL, O_NONBLOCK))
		abort();
	r->cq_ch[1] = true;
	mr_reg(r, 0, 0, 0, 0, 0, WINDOW);
	qp_create(r, 0, IBV_QPT_RC, false, 0, 0);
	qp_up(r, &r->qp[0], 0x6a, 0xe4, 0);
	for (int i = 0; i < 4; i++) {
		struct ibv_sge sg = { mr_base(&r->mr[0]) + i * 2048u, 2048,
				      r->mr[0].key };
		struct ibv_recv_wr wr = { .wr_id = new_wr_id(r), .sg_list = &sg,
					  .num_sge = 1 }, *bad;
		if (rocemu_post_recv(r->qp[0].qp, &wr, &bad))
			abort();
	}
}

/* Destroys everything; each destroy must succeed once its users are
 * gone, and the PD must refuse while a QP is in it. */
static void rig_down(struct rig *r)
{
	if (r->qp[0].qp && rocemu_pd_free(r->pd[0]) != -EBUSY)
		abort();
	step_async(r, NULL);
	for (int i = 0; i < NQP; i++)
		qp_destroy(r, i);
	srq_destroy(r);
	for (int i = 0; i < NAH; i++)
		ah_destroy(r, i);
	for (int i = 0; i < NMR; i++)
		mr_dereg(r, i);
	for (int i = 0; i < NCQ; i++)
		cq_destroy(r, i);
	bool left = r->srq;
	for (int i = 0; i < NQP; i++)
		left |= r->qp[i].qp != NULL;
	for (int i = 0; i < NAH; i++)
		left |= r->ah[i] != NULL;
	for (int i = 0; i < NMR; i++)
		left |= r->mr[i].mr != NULL;
	for (int i = 0; i < NCQ; i++)
		left |= r->cq[i] != NULL;
	if (left)
		abort(); /* a destroy refused with no user left */
	if (rocemu_pd_free(r->pd[0]) || rocemu_pd_free(r->pd[1]) ||
	    rocemu_channel_free(r->ch))
		abort();
	rocemu_dev_free(r->dev);
	rocemu_world_free(r->w);
	ASAN_UNPOISON_MEMORY_REGION(arena, sizeof(arena));
}

static void (*const steps[STEP_COUNT])(struct rig *, struct input *) = {
	[STEP_PACKET] = step_packet,
	[STEP_PACKET_QUEUED] = step_packet_queued,
	[STEP_RUN] = step_run,
	[STEP_ADVANCE] = step_advance,
	[STEP_MR_REG] = step_mr_reg,
	[STEP_MR_DEREG] = step_mr_dereg,
	[STEP_POST_RECV] = step_post_recv,
	[STEP_POST_SEND] = step_post_send,
	[STEP_QP_STATE] = step_qp_state,
	[STEP_QP_CREATE] = step_qp_create,
	[STEP_QP_DESTROY] = step_qp_destroy,
	[STEP_CQ_POLL] = step_cq_poll,
	[STEP_CQ_DESTROY] = step_cq_destroy,
	[STEP_CQ_CREATE] = step_cq_create,
	[STEP_SRQ_CREATE] = step_srq_create,
	[STEP_SRQ_DESTROY] = step_srq_destroy,
	[STEP_SRQ_POST] = step_srq_post,
	[STEP_AH_CREATE] = step_ah_create,
	[STEP_AH_DESTROY] = step_ah_destroy,
	[STEP_ASYNC] = step_async,
	[STEP_CHANNEL] = step_channel,
};

/* ---- the format, step by step ---------------------------------------- */

/* Operand bytes of the steps whose size is fixed. */
static const uint8_t fixed_operands[STEP_COUNT] = {
	[STEP_ADVANCE] = 1,  [STEP_MR_REG] = 3,	    [STEP_MR_DEREG] = 1,
	[STEP_QP_STATE] = 4, [STEP_QP_CREATE] = 1,  [STEP_QP_DESTROY] = 1,
	[STEP_CQ_POLL] = 1,  [STEP_CQ_DESTROY] = 1, [STEP_CQ_CREATE] = 2,
	[STEP_SRQ_CREATE] = 2, [STEP_AH_CREATE] = 1, [STEP_AH_DESTROY] = 1,
	[STEP_CHANNEL] = 1,
};

static void skip(struct input *in, size_t n)
{
	if (n > in->left)
		n = in->left;
	in->p += n;
	in->left -= n;
}

static void skip_wrs(struct input *in, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		skip(in, 4 * (take(in) % (QP_SGE + 1)));
}

/* The bytes the step at p takes, as the step functions above read them
 * (the fuzz loop checks that they agree). */
static size_t step_size(const uint8_t *p, size_t left)
{
	struct input in = { p, left };
	unsigned kind = take(&in) % STEP_COUNT;
	uint8_t b;

	switch (kind) {
	case STEP_PACKET:
	case STEP_PACKET_QUEUED:
		take(&in);
		skip(&in, take16(&in));
		break;
	case STEP_POST_RECV:
		b = take(&in);
		skip_wrs(&in, 1 + ((b >> 1) & 7));
		break;
	case STEP_SRQ_POST:
		skip_wrs(&in, 1 + (take(&in) & 7));
		break;
	case STEP_POST_SEND:
		take(&in);
		b = take(&in);
		skip(&in, 3 + 4 * ((b & 3) % (QP_SGE + 1)));
		break;
	default:
		skip(&in, fixed_operands[kind]);
	}
	return left - in.left;
}

/* ---- mutations of whole steps ----------------------------------------- */

enum { MAX_SPLIT = 4096, GEN_MAX = 96 };

/* Offsets of the steps of an input, and its size after the last. */
static size_t split(const uint8_t *data, size_t size, size_t *at)
{
	size_t n = 0, off = 0;

	while (off < size && n < MAX_SPLIT) {
		at[n++] = off;
		off += step_size(data + off, size - off);
	}
	at[n] = off;
	return n;
}

static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Puts n bytes of src at data[at], moving the rest up; the new size. */
static size_t splice_in(uint8_t *data, size_t size, size_t at,
			const uint8_t *src, size_t n)
{
	memmove(data + at + n, data + at, size - at);
	memcpy(data + at, src, n);
	return size + n;
}

/* A verbs step (any but a packet) with random operands, into gen. */
static size_t gen_step(uint8_t *gen, uint32_t *x)
{
	for (size_t i = 0; i < GEN_MAX; i++)
		gen[i] = (uint8_t)next_rand(x);
	gen[0] = (uint8_t)(STEP_RUN + next_rand(x) % (STEP_COUNT - STEP_RUN));
	return step_size(gen, GEN_MAX);
}

/*
 * libFuzzer's byte mutations rarely put a whole verbs call between two
 * packets of a message; these act on whole steps: insert a new verbs
 * step, delete, repeat or move one, or mutate the bytes of one step.
 * Half of the time libFuzzer mutates the input as bytes.
 */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	static size_t at[MAX_SPLIT + 1];
	static uint8_t buf[MAX_PACKET + 16];
	uint32_t x = seed | 1;
	size_t n = split(data, size, at);
	unsigned how = next_rand(&x) % 10;

	if (how < 5 || !n)
		return LLVMFuzzerMutate(data, size, max_size);
	size_t k = next_rand(&x) % n, to = at[next_rand(&x) % (n + 1)];
	size_t len = at[k + 1] - at[k];
	if (how == 5) { /* insert a verbs call */
		len = gen_step(buf, &x);
		if (size + len > max_size)
			return size;
		return splice_in(data, size, to, buf, len);
	}
	if (how == 6) { /* delete */
		memmove(data + at[k], data + at[k + 1], size - at[k + 1]);
		return size - len;
	}
	if (len > sizeof(buf) || size + len > max_size)
		return LLVMFuzzerMutate(data, size, max_size);
	memcpy(buf, data + at[k], len);
	if (how == 7) /* repeat: a retransmission, a second call */
		return splice_in(data, size, to, buf, len);
	if (how == 8) { /* move */
		memmove(data + at[k], data + at[k + 1], size - at[k + 1]);
		to -= to > at[k] ? (to >= at[k + 1] ? len : to - at[k]) : 0;
		return splice_in(data, size - len, to, buf, len);
	}
	/* the bytes of one step, which may change its size */
	size_t m = LLVMFuzzerMutate(buf, len, sizeof(buf) - 16);
	if (size - len + m > max_size)
		return size;
	memmove(data + at[k] + m, data + at[k + 1], size - at[k + 1]);
	memcpy(data + at[k], buf, m);
	return size - len + m;
}

/* The steps of data1 up to one, then those of data2 from one. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
				 const uint8_t *data2, size_t size2,
				 uint8_t *out, size_t max_out_size,
				 unsigned int seed)
{
	static size_t at[MAX_SPLIT + 1];
	uint32_t x = seed | 1;
	size_t a = at[next_rand(&x) % (split(data1, size1, at) + 1)];
	size_t b = at[next_rand(&x) % (split(data2, size2, at) + 1)];

	if (a > max_out_size)
		a = max_out_size;
	if (size2 - b > max_out_size - a)
		size2 = b + (max_out_size - a);
	memcpy(out, data1, a);
	memcpy(out + a, data2 + b, size2 - b);
	return a + size2 - b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rig r;
	struct input in = { data, size };

	rig_up(&r);
	for (unsigned n = 0; in.left && n < MAX_STEPS && !over_budget(&r);
	     n++) {
		size_t left = in.left, want = step_size(in.p, in.left);
		steps[take(&in) % STEP_COUNT](&r, &in);
		if (left - in.left != want)
			abort(); /* step_size() and the step disagree */
		check_guards();
	}
	rig_down(&r);
	return 0;
}
