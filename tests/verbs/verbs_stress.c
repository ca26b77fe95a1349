// SPDX-License-Identifier: MIT
/*
 * Many threads on shared verbs objects, which libibverbs allows: every verbs
 * call may be made from any number of threads at once. Send threads share
 * RC queue pairs (SENDs with immediate, WRITEs, READs, fetch-and-adds,
 * compare-and-swaps, alone or chained), several threads poll the same
 * completion queues, several threads post to one shared receive queue, and
 * one thread creates, uses and destroys queue pairs, memory regions and
 * completion queues while the traffic runs. Every byte carries its work
 * request's id and its offset, every work request must complete exactly once,
 * every SEND must be received exactly once, and the atomics must add up.
 *
 * Two variants. "poll": two threads per completion queue call ibv_poll_cq,
 * each kept on a CPU of its own so that they really run at once, and when
 * the queue is empty both nap to the same instant, so that they meet again
 * on a queue that has filled meanwhile. "events": both completion queues
 * report to one completion channel, which three threads wait on with
 * poll(2), ibv_get_cq_event, ibv_ack_cq_events and ibv_req_notify_cq.
 *
 * usage: verbs_stress [-n OPS_PER_THREAD] [-t SECONDS] [poll|events]...
 * Prints each failure and "verbs_stress: N passed, M failed"; exits 1 if
 * any check failed.
 */
#define _GNU_SOURCE /* CPU_SET, pthread_setaffinity_np */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	NQP = 2,     /* connected RC pairs a[i] -> b[i] */
	POSTERS = 4, /* send threads, POSTERS / NQP on each pair */
	SLOTS = 16,  /* work requests one send thread has in flight */
	SLOT_BYTES = 4096,
	CHAIN = 3,	 /* work requests posted in one call, at most */
	BATCH = 16,	 /* completions polled in one call, at most */
	RECVERS = 2,	 /* threads posting to the shared receive queue */
	RBUFS = 64,	 /* receive buffers of each of them */
	POLLERS = 2,	 /* threads polling each CQ (variant poll) */
	WAITERS = 3,	 /* threads waiting on the channel (variant events) */
	INLINE_MAX = 64, /* SENDs up to this size may go inline */
	GID_INDEX = 1,	 /* the IPv4-mapped GID, as on rxe */
	MAX_REPORTS = 20,
	ABORT_AFTER = 1000, /* failures before a variant gives up */
	STALL_S = 10,	    /* seconds without progress: called off */
};

#define SEND_TAG UINT64_C(0x5e00000000000000)
#define RECV_TAG UINT64_C(0x7e00000000000000)
#define TAG_MASK UINT64_C(0xff00000000000000)
#define FAA_INIT UINT64_C(0x10000000000)
#define CAS_INIT UINT64_C(0x20000000000)
#define POISON 0xee
#define GUARD 0x5a

/* What each failure is counted against: one check per kind. */
enum kind {
	K_SETUP,
	K_COMPLETION,
	K_RECEIPT,
	K_DATA,
	K_FAA,
	K_CAS,
	K_CALL,
	K_CHURN,
	K_TEARDOWN,
	K_COUNT
};

static const char *const check_names[K_COUNT] = {
    [K_SETUP] = "device, PD, MRs, CQs, SRQ and connected QPs set up",
    [K_COMPLETION] = "every work request completed exactly once",
    [K_RECEIPT] = "every SEND received exactly once, into one buffer",
    [K_DATA] = "every byte of every SEND, WRITE and READ in place",
    [K_FAA] = "fetch-and-adds from all threads add up",
    [K_CAS] = "compare-and-swaps from all threads chain up",
    [K_CALL] = "every post and poll call succeeded",
    [K_CHURN] = "QPs, MRs and CQs created and destroyed during traffic",
    [K_TEARDOWN] = "every object destroyed afterwards",
};

/* One send work request, written by its poster, checked by a poller. */
struct op {
	enum ibv_wr_opcode opcode;
	uint32_t len;
	uint64_t arg; /* fetch-and-add: the addend; compare-and-swap: compare */
	uint64_t old; /* atomics: the value fetched */
	_Atomic uint32_t completions;
	_Atomic uint32_t receipts; /* SENDs: receive completions naming it */
	bool ok;		   /* completed with success: old is valid */
};

/* A slot or receive buffer: free, posted, or being checked. */
enum { FREE, POSTED, CHECKING };

struct rbuf {
	_Atomic int state;
	_Atomic uint32_t gen; /* bumped at each post: in the receive's wr_id */
};

struct stress {
	const char *variant;
	unsigned nops; /* per send thread */
	struct timespec deadline;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	uint8_t port_mtu;
	struct ibv_comp_channel *channel; /* variant events */
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *a[NQP], *b[NQP];
	uint8_t *lmem, *rmem, *qmem; /* local, remote, receive buffers */
	struct ibv_mr *lmr, *rmr, *qmr;
	struct op *ops;
	_Atomic int slot_state[POSTERS][SLOTS];
	struct rbuf rbufs[RECVERS * RBUFS];
	_Atomic uint64_t cas_hint; /* what the word probably holds now */
	_Atomic unsigned posted, sends_posted, completed, received;
	_Atomic unsigned churns, posters_done;
	_Atomic bool stop, abort;
	_Atomic unsigned errors, kind_errors[K_COUNT];
	pthread_mutex_t print_lock;
};

struct worker {
	struct stress *s;
	pthread_t tid;
	unsigned index;
	struct ibv_cq *cq;
	int batch;
	uint64_t rng;
};

static void report(struct stress *s, enum kind k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report(struct stress *s, enum kind k, const char *fmt, ...)
{
	unsigned n = atomic_fetch_add(&s->errors, 1);
	va_list ap;

	atomic_fetch_add(&s->kind_errors[k], 1);
	if (n < MAX_REPORTS) {
		pthread_mutex_lock(&s->print_lock);
		printf("FAIL: %s: ", s->variant);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
		fflush(stdout);
		pthread_mutex_unlock(&s->print_lock);
	}
	if (n + 1 >= ABORT_AFTER)
		atomic_store(&s->abort, true);
}

static bool aborted(struct stress *s)
{
	return atomic_load(&s->abort);
}

static bool past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) +
	       (double)(now.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void nap(void)
{
	struct timespec t = {0, 20000};

	nanosleep(&t, NULL);
}

/* splitmix64's finalizer: every input bit changes about half the output. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t *state)
{
	return mix(*state += 0x9e3779b97f4a7c15ull);
}

/* ---- patterned data ------------------------------------------------ */

/* Byte @off of work request @id's data: a byte of the id and the offset
 * of its 8-byte word, mixed, so that a byte from another request or from
 * another place differs (but for one chance in 256). */
static uint8_t pattern_byte(uint64_t id, uint32_t off)
{
	uint64_t word = mix((id << 32) | (off & ~7u));

	return (uint8_t)(word >> ((off & 7) * 8));
}

static void fill(uint8_t *p, uint64_t id, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = pattern_byte(id, i);
}

/* The first offset where @p is not @id's data, or -1. */
static long mismatch(const uint8_t *p, uint64_t id, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != pattern_byte(id, i))
			return i;
	return -1;
}

/* Lengths spread over 1 B (inline), one packet and several packets. */
static uint32_t rnd_len(uint64_t *rng)
{
	uint64_t r = rnd(rng);

	switch (r % 3) {
	case 0: return 1 + (uint32_t)(r >> 8) % INLINE_MAX;
	case 1: return 1 + (uint32_t)(r >> 8) % 1024;
	default: return 1 + (uint32_t)(r >> 8) % SLOT_BYTES;
	}
}

/* ---- where each operation's bytes live ------------------------------- */

static unsigned op_thread(const struct stress *s, uint64_t id)
{
	return (unsigned)(id / s->nops);
}

static unsigned op_slot(const struct stress *s, uint64_t id)
{
	return (unsigned)(id % s->nops) % SLOTS;
}

static uint8_t *local_slot(struct stress *s, uint64_t id)
{
	return s->lmem +
	       ((size_t)op_thread(s, id) * SLOTS + op_slot(s, id)) * SLOT_BYTES;
}

static uint8_t *remote_slot(struct stress *s, uint64_t id)
{
	return s->rmem +
	       ((size_t)op_thread(s, id) * SLOTS + op_slot(s, id)) * SLOT_BYTES;
}

/* The two 64-bit words the atomics work on, after the remote slots. */
static uint64_t *faa_word(struct stress *s)
{
	return (uint64_t *)(void *)(s->rmem +
				    (size_t)POSTERS * SLOTS * SLOT_BYTES);
}

static uint64_t *cas_word(struct stress *s)
{
	return faa_word(s) + 1;
}

static struct ibv_qp *op_a(struct stress *s, uint64_t id)
{
	return s->a[op_thread(s, id) % NQP];
}

static struct ibv_qp *op_b(struct stress *s, uint64_t id)
{
	return s->b[op_thread(s, id) % NQP];
}

static uint8_t *rbuf_mem(struct stress *s, unsigned i)
{
	return s->qmem + (size_t)i * SLOT_BYTES;
}

static const char *op_name(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND_WITH_IMM: return "SEND";
	case IBV_WR_RDMA_WRITE: return "WRITE";
	case IBV_WR_RDMA_READ: return "READ";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "FETCH_ADD";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "CMP_SWAP";
	default: return "?";
	}
}

static enum ibv_wc_opcode wc_opcode_of(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_RDMA_WRITE: return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return IBV_WC_FETCH_ADD;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_WC_COMP_SWAP;
	default: return IBV_WC_SEND;
	}
}

/* ---- set-up ---------------------------------------------------------- */

static struct ibv_qp *new_qp(struct stress *s, struct ibv_cq *scq,
			     struct ibv_cq *rcq, struct ibv_srq *srq,
			     uint32_t send_wr)
{
	struct ibv_qp_init_attr init = {
	    .send_cq = scq,
	    .recv_cq = rcq,
	    .srq = srq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = send_wr,
		    .max_recv_wr = srq ? 0 : 1,
		    .max_send_sge = 1,
		    .max_recv_sge = 1,
		    .max_inline_data = INLINE_MAX},
	};

	return ibv_create_qp(s->pd, &init);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
	    .qp_state = IBV_QPS_INIT,
	    .port_num = 1,
	    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ |
			       IBV_ACCESS_REMOTE_ATOMIC,
	};

	return ibv_modify_qp(qp, &attr,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS);
}

/* RESET to RTS, connected to @peer on this same device (its own GID).
 * Returns 0 or the errno of the step that failed. */
static int connect_qp(struct stress *s, struct ibv_qp *qp, uint32_t peer)
{
	struct ibv_qp_attr rtr = {
	    .qp_state = IBV_QPS_RTR,
	    .path_mtu = s->port_mtu,
	    .dest_qp_num = peer,
	    .max_dest_rd_atomic = 4,
	    .min_rnr_timer = 1, /* 0.01 ms: an empty SRQ is tried again soon */
	    .ah_attr = {.is_global = 1,
			.port_num = 1,
			.grh = {.dgid = s->gid,
				.sgid_index = GID_INDEX,
				.hop_limit = 64}},
	};
	struct ibv_qp_attr rts = {.qp_state = IBV_QPS_RTS,
				  .timeout = 14,
				  .retry_cnt = 7,
				  .rnr_retry = 7,
				  .max_rd_atomic = 4};
	int rc = to_init(qp);

	if (!rc)
		rc = ibv_modify_qp(qp, &rtr,
				   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       IBV_QP_MAX_DEST_RD_ATOMIC |
				       IBV_QP_MIN_RNR_TIMER);
	if (!rc)
		rc = ibv_modify_qp(qp, &rts,
				   IBV_QP_STATE | IBV_QP_SQ_PSN |
				       IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				       IBV_QP_RNR_RETRY |
				       IBV_QP_MAX_QP_RD_ATOMIC);
	return rc;
}

static int setup_memory(struct stress *s)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	size_t slots = (size_t)POSTERS * SLOTS * SLOT_BYTES;
	size_t rbufs = (size_t)RECVERS * RBUFS * SLOT_BYTES;

	s->lmem = aligned_alloc(4096, slots);
	s->rmem = aligned_alloc(4096, slots + 4096);
	s->qmem = aligned_alloc(4096, rbufs);
	s->ops = calloc((size_t)POSTERS * s->nops, sizeof(*s->ops));
	if (!s->lmem || !s->rmem || !s->qmem || !s->ops)
		return ENOMEM;
	memset(s->lmem, 0, slots);
	memset(s->rmem, 0, slots + 4096);
	*faa_word(s) = FAA_INIT;
	*cas_word(s) = CAS_INIT;
	atomic_store(&s->cas_hint, CAS_INIT);
	s->lmr = ibv_reg_mr(s->pd, s->lmem, slots, access);
	s->rmr = ibv_reg_mr(s->pd, s->rmem, slots + 4096, access);
	s->qmr = ibv_reg_mr(s->pd, s->qmem, rbufs, access);
	return s->lmr && s->rmr && s->qmr ? 0 : errno;
}

/* Both CQs report to one channel when @events; its descriptor does not
 * block, so that several threads can wait on it with poll(2). */
static int setup_queues(struct stress *s, bool events)
{
	struct ibv_srq_init_attr sa = {
	    .attr = {.max_wr = RECVERS * RBUFS, .max_sge = 1},
	};

	if (events) {
		s->channel = ibv_create_comp_channel(s->ctx);
		if (!s->channel)
			return errno;
		int fl = fcntl(s->channel->fd, F_GETFL);
		if (fl < 0 || fcntl(s->channel->fd, F_SETFL, fl | O_NONBLOCK))
			return errno;
	}
	s->scq =
	    ibv_create_cq(s->ctx, 2 * POSTERS * SLOTS, &s->scq, s->channel, 0);
	s->rcq =
	    ibv_create_cq(s->ctx, 2 * RECVERS * RBUFS, &s->rcq, s->channel, 0);
	if (!s->scq || !s->rcq)
		return errno;
	s->srq = ibv_create_srq(s->pd, &sa);
	if (!s->srq)
		return errno;
	for (int i = 0; i < NQP; i++) {
		s->a[i] =
		    new_qp(s, s->scq, s->rcq, NULL, POSTERS / NQP * SLOTS);
		s->b[i] = new_qp(s, s->scq, s->rcq, s->srq, 1);
		if (!s->a[i] || !s->b[i])
			return errno;
	}
	for (int i = 0; i < NQP; i++) {
		int rc = connect_qp(s, s->a[i], s->b[i]->qp_num);
		if (rc || (rc = connect_qp(s, s->b[i], s->a[i]->qp_num)))
			return rc;
	}
	if (events &&
	    (ibv_req_notify_cq(s->scq, 0) || ibv_req_notify_cq(s->rcq, 0)))
		return EIO;
	return 0;
}

static int setup(struct stress *s, bool events)
{
	struct ibv_port_attr port;
	int rc = 0;

	if (ibv_query_gid(s->ctx, 1, GID_INDEX, &s->gid) ||
	    ibv_query_port(s->ctx, 1, &port))
		rc = errno ? errno : EIO;
	else if (!(s->pd = ibv_alloc_pd(s->ctx)))
		rc = errno;
	if (!rc) {
		s->port_mtu = port.active_mtu;
		rc = setup_memory(s);
	}
	if (!rc)
		rc = setup_queues(s, events);
	if (rc)
		report(s, K_SETUP, "set-up: %s", strerror(rc));
	return rc;
}

/* ---- send threads ------------------------------------------------------ */

/* Fills op @id and its work request: a SEND with the id as immediate, a
 * WRITE or READ of patterned data, or an atomic on the shared words. */
static void prepare(struct stress *s, struct worker *w, uint64_t id,
		    struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct op *op = &s->ops[id];
	uint8_t *l = local_slot(s, id), *r = remote_slot(s, id);
	uint64_t pick = rnd(&w->rng) % 100;

	*wr = (struct ibv_send_wr){.wr_id = SEND_TAG | id,
				   .sg_list = sge,
				   .num_sge = 1,
				   .send_flags = IBV_SEND_SIGNALED};
	op->len = pick < 75 ? rnd_len(&w->rng) : 8;
	if (pick < 30) {
		op->opcode = IBV_WR_SEND_WITH_IMM;
		wr->imm_data = htobe32((uint32_t)id);
		fill(l, id, op->len);
		if (op->len <= INLINE_MAX && (pick & 1))
			wr->send_flags |= IBV_SEND_INLINE;
	} else if (pick < 75) {
		op->opcode = pick < 55 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr->wr.rdma.remote_addr = (uintptr_t)r;
		wr->wr.rdma.rkey = s->rmr->rkey;
		/* the source patterned, a guard just past the destination */
		fill(op->opcode == IBV_WR_RDMA_WRITE ? l : r, id, op->len);
		if (op->len < SLOT_BYTES)
			(op->opcode == IBV_WR_RDMA_WRITE ? r : l)[op->len] =
			    GUARD;
	} else {
		bool add = pick < 90;
		op->opcode = add ? IBV_WR_ATOMIC_FETCH_AND_ADD
				 : IBV_WR_ATOMIC_CMP_AND_SWP;
		op->arg = add ? id % 1000 + 1 : atomic_load(&s->cas_hint);
		wr->wr.atomic.remote_addr =
		    (uintptr_t)(add ? faa_word(s) : cas_word(s));
		wr->wr.atomic.compare_add = op->arg;
		wr->wr.atomic.swap = op->arg + 1;
		wr->wr.atomic.rkey = s->rmr->rkey;
	}
	wr->opcode = op->opcode;
	*sge = (struct ibv_sge){
	    .addr = (uintptr_t)l, .length = op->len, .lkey = s->lmr->lkey};
}

/* Waits until the poller has checked the slot's last operation. */
static bool claim_slot(struct stress *s, unsigned t, unsigned slot)
{
	int want = FREE;

	while (!atomic_compare_exchange_weak(&s->slot_state[t][slot], &want,
					     POSTED)) {
		want = FREE;
		if (aborted(s) || past(&s->deadline))
			return false;
		nap();
	}
	return true;
}

/* Posts nops operations on its thread's QP, shared with another thread,
 * one to CHAIN of them per ibv_post_send. */
static void *poster(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	unsigned t = w->index, k = 0;
	struct ibv_qp *qp = s->a[t % NQP];

	while (k < s->nops && !aborted(s)) {
		struct ibv_send_wr wr[CHAIN], *bad = NULL;
		struct ibv_sge sge[CHAIN];
		unsigned n = 1 + (unsigned)(rnd(&w->rng) % CHAIN), sends = 0;

		if (n > s->nops - k)
			n = s->nops - k;
		for (unsigned i = 0; i < n; i++) {
			uint64_t id = (uint64_t)t * s->nops + k + i;
			if (!claim_slot(s, t, op_slot(s, id)))
				return NULL;
			prepare(s, w, id, &wr[i], &sge[i]);
			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
			sends += wr[i].opcode == IBV_WR_SEND_WITH_IMM;
		}
		atomic_fetch_add(&s->posted, n);
		atomic_fetch_add(&s->sends_posted, sends);
		int rc = ibv_post_send(qp, wr, &bad);
		if (rc) {
			report(s, K_CALL, "thread %u: ibv_post_send of %u: %s",
			       t, n, strerror(rc));
			atomic_store(&s->abort, true);
			return NULL;
		}
		k += n;
	}
	atomic_fetch_add(&s->posters_done, 1);
	return NULL;
}

/* ---- checking completions ---------------------------------------------- */

/* @p must hold @id's @len bytes, and @guard just past them. */
static void check_bytes(struct stress *s, uint64_t id, const char *what,
			const uint8_t *p, uint32_t len, uint8_t guard)
{
	long at = mismatch(p, id, len);

	if (at >= 0)
		report(s, K_DATA,
		       "%s %" PRIu64 " of %u bytes: byte %ld is %#x, want %#x",
		       what, id, len, at, p[at],
		       pattern_byte(id, (uint32_t)at));
	else if (len < SLOT_BYTES && p[len] != guard)
		report(s, K_DATA,
		       "%s %" PRIu64 " of %u bytes: the byte after it changed",
		       what, id, len);
}

static void check_send(struct stress *s, uint64_t id, struct op *op,
		       const struct ibv_wc *wc)
{
	const char *name = op_name(op->opcode);

	if (wc->status != IBV_WC_SUCCESS) {
		report(s, K_COMPLETION, "%s %" PRIu64 " of %u bytes: %s", name,
		       id, op->len, ibv_wc_status_str(wc->status));
		return;
	}
	if (wc->opcode != wc_opcode_of(op->opcode) ||
	    wc->qp_num != op_a(s, id)->qp_num)
		report(s, K_COMPLETION,
		       "%s %" PRIu64
		       ": completed as opcode %d on QP %u, posted "
		       "on QP %u",
		       name, id, wc->opcode, wc->qp_num, op_a(s, id)->qp_num);
	switch (op->opcode) {
	case IBV_WR_RDMA_WRITE:
		check_bytes(s, id, name, remote_slot(s, id), op->len, GUARD);
		break;
	case IBV_WR_RDMA_READ:
		check_bytes(s, id, name, local_slot(s, id), op->len, GUARD);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		memcpy(&op->old, local_slot(s, id), 8);
		if (op->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
			atomic_store(&s->cas_hint, op->old == op->arg
						       ? op->old + 1
						       : op->old);
		break;
	default: break;
	}
	op->ok = true;
}

/* A completion on the send CQ: its operation's first, then its slot is
 * free again. A second one for the same work request is a failure. */
static void on_send(struct stress *s, const struct ibv_wc *wc)
{
	uint64_t id = wc->wr_id & ~TAG_MASK;

	if ((wc->wr_id & TAG_MASK) != SEND_TAG ||
	    id >= (uint64_t)POSTERS * s->nops) {
		report(s, K_COMPLETION,
		       "send CQ: completion for wr_id %#" PRIx64
		       " that was never posted (%s)",
		       wc->wr_id, ibv_wc_status_str(wc->status));
		return;
	}
	struct op *op = &s->ops[id];
	unsigned seen = atomic_fetch_add(&op->completions, 1);
	if (seen) {
		report(s, K_COMPLETION, "%s %" PRIu64 " completed %u times",
		       op_name(op->opcode), id, seen + 1);
		return;
	}
	check_send(s, id, op, wc);
	atomic_store(&s->slot_state[op_thread(s, id)][op_slot(s, id)], FREE);
	atomic_fetch_add(&s->completed, 1);
}

/* A receive that completed: which SEND it got (the immediate names it),
 * and that SEND's bytes, nothing after them. */
static void check_recv(struct stress *s, const struct ibv_wc *wc,
		       const uint8_t *buf)
{
	uint64_t id = be32toh(wc->imm_data);

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM)) {
		report(s, K_RECEIPT, "receive: %s, opcode %d, flags %#x",
		       ibv_wc_status_str(wc->status), wc->opcode, wc->wc_flags);
		return;
	}
	struct op *op = id < (uint64_t)POSTERS * s->nops ? &s->ops[id] : NULL;
	if (!op || op->opcode != IBV_WR_SEND_WITH_IMM) {
		report(s, K_RECEIPT,
		       "receive: immediate %" PRIu64 " names no SEND", id);
		return;
	}
	unsigned seen = atomic_fetch_add(&op->receipts, 1);
	if (seen)
		report(s, K_RECEIPT, "SEND %" PRIu64 " received %u times", id,
		       seen + 1);
	if (wc->qp_num != op_b(s, id)->qp_num)
		report(s, K_RECEIPT,
		       "SEND %" PRIu64 " arrived on QP %u, not %u", id,
		       wc->qp_num, op_b(s, id)->qp_num);
	if (wc->byte_len != op->len)
		report(s, K_DATA, "SEND %" PRIu64 " of %u bytes arrived as %u",
		       id, op->len, wc->byte_len);
	else
		check_bytes(s, id, "SEND", buf, op->len, POISON);
}

static void on_recv(struct stress *s, const struct ibv_wc *wc)
{
	unsigned i = (unsigned)(wc->wr_id & 0xffff);
	uint32_t gen = (uint32_t)(wc->wr_id >> 16);
	int want = POSTED;

	if ((wc->wr_id & TAG_MASK) != RECV_TAG || i >= RECVERS * RBUFS) {
		report(s, K_RECEIPT,
		       "receive CQ: completion for wr_id %#" PRIx64
		       " that was never posted (%s)",
		       wc->wr_id, ibv_wc_status_str(wc->status));
		return;
	}
	struct rbuf *b = &s->rbufs[i];
	if (atomic_load(&b->gen) != gen ||
	    !atomic_compare_exchange_strong(&b->state, &want, CHECKING)) {
		report(s, K_RECEIPT,
		       "receive buffer %u, post %u: completed twice or late", i,
		       gen);
		return;
	}
	check_recv(s, wc, rbuf_mem(s, i));
	atomic_store(&b->state, FREE);
	atomic_fetch_add(&s->received, 1);
}

/* Polls @cq until it is empty (or the run is abandoned); returns how many
 * completions it handled, or -1. */
static int drain(struct stress *s, struct ibv_cq *cq, int batch)
{
	struct ibv_wc wc[BATCH];
	int total = 0, n;

	while (!aborted(s) && (n = ibv_poll_cq(cq, batch, wc)) != 0) {
		if (n < 0) {
			report(s, K_CALL, "ibv_poll_cq: %d", n);
			atomic_store(&s->abort, true);
			return -1;
		}
		for (int i = 0; i < n; i++)
			(cq == s->scq ? on_send : on_recv)(s, &wc[i]);
		total += n;
	}
	return total;
}

/* ---- receive, poll and event threads -------------------------------- */

static bool post_recvs(struct stress *s, struct ibv_recv_wr *wr, unsigned n)
{
	struct ibv_recv_wr *bad = NULL;
	int rc;

	if (!n)
		return true;
	wr[n - 1].next = NULL;
	rc = ibv_post_srq_recv(s->srq, wr, &bad);
	if (rc) {
		report(s, K_CALL, "ibv_post_srq_recv of %u: %s", n,
		       strerror(rc));
		atomic_store(&s->abort, true);
	}
	return !rc;
}

/* Keeps its receive buffers posted to the shared receive queue, poisoned,
 * up to four per ibv_post_srq_recv. */
static void *recver(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;

	while (!atomic_load(&s->stop) && !aborted(s)) {
		struct ibv_recv_wr wr[4];
		struct ibv_sge sge[4];
		unsigned n = 0, posted = 0;

		for (unsigned j = 0; j < RBUFS; j++) {
			unsigned i = w->index * RBUFS + j;
			struct rbuf *b = &s->rbufs[i];

			if (atomic_load(&b->state) != FREE)
				continue;
			memset(rbuf_mem(s, i), POISON, SLOT_BYTES);
			uint64_t gen = atomic_fetch_add(&b->gen, 1) + 1;
			atomic_store(&b->state, POSTED);
			sge[n] = (struct ibv_sge){(uintptr_t)rbuf_mem(s, i),
						  SLOT_BYTES, s->qmr->lkey};
			wr[n] = (struct ibv_recv_wr){
			    .wr_id = RECV_TAG | gen << 16 | i,
			    .sg_list = &sge[n],
			    .num_sge = 1,
			    .next = wr + n + 1}; /* the last: NULL */
			if (++n == 4) {
				if (!post_recvs(s, wr, n))
					return NULL;
				posted += n;
				n = 0;
			}
		}
		if (!post_recvs(s, wr, n))
			return NULL;
		if (!posted && !n)
			nap();
	}
	return NULL;
}

/* Sleeps until the next multiple of @ns on the monotonic clock: threads
 * that nap together wake together. */
static void nap_aligned(long ns, long phase)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec = (t.tv_nsec / ns + 1) * ns + phase;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
}

/* Keeps the calling thread on the @k-th CPU it may use (modulo their
 * number): the threads that share a CQ then really run at the same time,
 * as they would on a machine with a core each, instead of taking turns. */
static void pin(unsigned k)
{
	cpu_set_t allowed, one;
	unsigned n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	k %= (unsigned)CPU_COUNT(&allowed);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || n++ != k)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
		return;
	}
}

/* Polls one CQ that other threads poll too. When it is empty, all its
 * pollers nap to the same instant, so that completions pile up meanwhile
 * and they drain them side by side. */
static void *poller(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;

	pin(w->index / 2);
	while (!atomic_load(&s->stop) && !aborted(s))
		if (drain(s, w->cq, w->batch) == 0)
			nap_aligned(200000, w->cq == s->scq ? 0 : 100000);
	return NULL;
}

/* Waits on the channel both CQs share, with the other waiters: an event,
 * its acknowledgement, the CQ re-armed, then drained. Another waiter may
 * take the event first (EAGAIN). */
static void *waiter(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	struct ibv_cq *cq;
	void *cq_ctx;

	pin(w->index);
	while (!atomic_load(&s->stop) && !aborted(s)) {
		struct pollfd pfd = {s->channel->fd, POLLIN, 0};
		int n = poll(&pfd, 1, 20), rc;

		if (n <= 0)
			continue;
		if (ibv_get_cq_event(s->channel, &cq, &cq_ctx)) {
			if (errno == EAGAIN)
				continue;
			report(s, K_CALL, "ibv_get_cq_event: %s",
			       strerror(errno));
			break;
		}
		if ((cq != s->scq && cq != s->rcq) ||
		    cq_ctx != (cq == s->scq ? &s->scq : &s->rcq)) {
			report(s, K_CALL, "an event for CQ %p, context %p",
			       (void *)cq, cq_ctx);
			continue;
		}
		ibv_ack_cq_events(cq, 1);
		if ((rc = ibv_req_notify_cq(cq, 0)))
			report(s, K_CALL, "ibv_req_notify_cq: %s",
			       strerror(rc));
		drain(s, cq, w->batch);
	}
	return NULL;
}

/* ---- the thread that creates and destroys objects ------------------- */

/* A WRITE between two new QPs on a new CQ and MR, polled to completion. */
static int churn_write(struct stress *s, unsigned n, struct ibv_qp *x,
		       struct ibv_qp *y, struct ibv_mr *mr)
{
	uint8_t *mem = mr->addr;
	uint64_t id = 0xc0000000ull + n;
	uint32_t len = 1 + (n * 997) % (SLOT_BYTES - 1);
	struct ibv_sge sge = {(uintptr_t)mem, len, mr->lkey};
	struct ibv_send_wr wr = {.wr_id = id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct timespec limit;
	struct ibv_wc wc;
	int rc, got = 0;

	wr.wr.rdma.remote_addr = (uintptr_t)(mem + SLOT_BYTES);
	wr.wr.rdma.rkey = mr->rkey;
	fill(mem, id, len);
	if ((rc = connect_qp(s, x, y->qp_num)) ||
	    (rc = connect_qp(s, y, x->qp_num)) ||
	    (rc = ibv_post_send(x, &wr, &bad)))
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &limit);
	limit.tv_sec += 10;
	while (!aborted(s) && !past(&limit) &&
	       (got = ibv_poll_cq(x->send_cq, 1, &wc)) == 0)
		sched_yield();
	if (got != 1 || wc.wr_id != id || wc.status != IBV_WC_SUCCESS)
		return got < 0 ? EIO : got == 0 ? ETIMEDOUT : EPROTO;
	return mismatch(mem + SLOT_BYTES, id, len) < 0 ? 0 : EILSEQ;
}

/* One round: a CQ, an MR and three QPs, one of them on the shared CQs and
 * SRQ, made, used and destroyed. Returns 0 or an errno. */
static int churn_once(struct stress *s, unsigned n, uint8_t *mem)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_cq *cq = ibv_create_cq(s->ctx, 4, NULL, NULL, 0);
	struct ibv_mr *mr = ibv_reg_mr(s->pd, mem, 2 * SLOT_BYTES, access);
	struct ibv_qp *x = cq ? new_qp(s, cq, cq, NULL, 4) : NULL;
	struct ibv_qp *y = cq ? new_qp(s, cq, cq, NULL, 4) : NULL;
	struct ibv_qp *z = new_qp(s, s->scq, s->rcq, s->srq, 4);
	int rc = cq && mr && x && y && z ? 0 : errno ? errno : EIO;

	if (!rc && !(rc = to_init(z)))
		rc = churn_write(s, n, x, y, mr);
	struct ibv_qp *qps[] = {z, y, x};
	for (unsigned i = 0; i < 3; i++)
		if (qps[i] && ibv_destroy_qp(qps[i]) && !rc)
			rc = EBUSY;
	if (mr && ibv_dereg_mr(mr) && !rc)
		rc = EBUSY;
	if (cq && ibv_destroy_cq(cq) && !rc)
		rc = EBUSY;
	return rc;
}

/* Rounds of churn_once until the traffic is over: at least one. */
static void *churner(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	uint8_t *mem = aligned_alloc(4096, 2 * SLOT_BYTES);

	if (!mem) {
		report(s, K_CHURN, "no memory");
		return NULL;
	}
	do {
		unsigned n = atomic_load(&s->churns);
		int rc = churn_once(s, n, mem);
		if (rc) {
			report(s, K_CHURN, "round %u: %s", n, strerror(rc));
			break;
		}
		atomic_fetch_add(&s->churns, 1);
		nap();
	} while (!atomic_load(&s->stop) && !aborted(s));
	free(mem);
	return NULL;
}

/* ---- after the traffic ---------------------------------------------- */

struct pair64 {
	uint64_t old, arg;
};

static int by_old(const void *x, const void *y)
{
	const struct pair64 *a = x, *b = y;

	return a->old < b->old ? -1 : a->old > b->old;
}

/* The values the fetch-and-adds fetched, in order, must each be the sum
 * of the ones before: none lost, none done twice, none torn. */
static void check_faa(struct stress *s, struct pair64 *v)
{
	unsigned n = 0, missing = 0;
	uint64_t sum = FAA_INIT;

	for (uint64_t id = 0; id < (uint64_t)POSTERS * s->nops; id++) {
		struct op *op = &s->ops[id];
		if (op->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD || !op->len)
			continue;
		if (op->ok)
			v[n++] = (struct pair64){op->old, op->arg};
		else
			missing++;
	}
	qsort(v, n, sizeof(*v), by_old);
	for (unsigned i = 0; i < n; sum += v[i++].arg)
		if (v[i].old != sum) {
			report(s, K_FAA,
			       "fetch-and-add %u of %u fetched %#" PRIx64
			       ", want %#" PRIx64,
			       i, n, v[i].old, sum);
			return;
		}
	if (missing)
		report(s, K_FAA, "%u fetch-and-adds did not complete", missing);
	else if (*faa_word(s) != sum)
		report(s, K_FAA,
		       "after %u fetch-and-adds the word is %#" PRIx64
		       ", want %#" PRIx64,
		       n, *faa_word(s), sum);
}

/* A compare-and-swap that found its compare value added one: those that
 * succeeded fetched CAS_INIT, CAS_INIT + 1, ... each once. */
static void check_cas(struct stress *s, struct pair64 *v)
{
	unsigned n = 0, missing = 0;
	uint64_t end = *cas_word(s);

	for (uint64_t id = 0; id < (uint64_t)POSTERS * s->nops; id++) {
		struct op *op = &s->ops[id];
		if (op->opcode != IBV_WR_ATOMIC_CMP_AND_SWP || !op->len)
			continue;
		if (!op->ok)
			missing++;
		else if (op->old == op->arg)
			v[n++] = (struct pair64){op->old, op->arg};
		else if (op->old < CAS_INIT || op->old > end)
			report(s, K_CAS,
			       "compare-and-swap %" PRIu64 " fetched %#" PRIx64
			       ", never the word's value",
			       id, op->old);
	}
	qsort(v, n, sizeof(*v), by_old);
	for (unsigned i = 0; i < n; i++)
		if (v[i].old != CAS_INIT + i) {
			report(s, K_CAS,
			       "successful compare-and-swap %u of %u fetched "
			       "%#" PRIx64 ", want %#" PRIx64,
			       i, n, v[i].old, CAS_INIT + i);
			return;
		}
	if (missing)
		report(s, K_CAS, "%u compare-and-swaps did not complete",
		       missing);
	else if (end != CAS_INIT + n)
		report(s, K_CAS,
		       "after %u successful compare-and-swaps the word is "
		       "%#" PRIx64 ", want %#" PRIx64,
		       n, end, CAS_INIT + n);
}

/* Work requests never completed, SENDs never received. */
static void check_counts(struct stress *s)
{
	unsigned total = POSTERS * s->nops, posted = atomic_load(&s->posted);
	unsigned lost = 0, unreceived = 0;

	if (posted < total)
		report(s, K_CALL, "only %u of %u work requests were posted",
		       posted, total);
	for (uint64_t id = 0; id < total; id++) {
		struct op *op = &s->ops[id];
		if (!op->len)
			continue;
		lost += !atomic_load(&op->completions);
		unreceived += op->opcode == IBV_WR_SEND_WITH_IMM &&
			      !atomic_load(&op->receipts);
	}
	if (lost)
		report(s, K_COMPLETION,
		       "%u of %u work requests never completed", lost, posted);
	if (unreceived)
		report(s, K_RECEIPT, "%u of %u SENDs never received",
		       unreceived, atomic_load(&s->sends_posted));
	if (!atomic_load(&s->churns) && !atomic_load(&s->kind_errors[K_CHURN]))
		report(s, K_CHURN, "no round finished while the traffic ran");
}

static void final_checks(struct stress *s)
{
	struct pair64 *v = calloc((size_t)POSTERS * s->nops, sizeof(*v));

	/* Nothing more may come: a late or doubled completion fails. */
	drain(s, s->scq, BATCH);
	drain(s, s->rcq, BATCH);
	check_counts(s);
	if (v) {
		check_faa(s, v);
		check_cas(s, v);
	}
	free(v);
}

static void destroyed(struct stress *s, const char *what, int rc)
{
	if (rc)
		report(s, K_TEARDOWN, "%s: %s", what, strerror(rc));
}

static void teardown(struct stress *s)
{
	for (int i = 0; i < NQP; i++) {
		if (s->a[i])
			destroyed(s, "ibv_destroy_qp", ibv_destroy_qp(s->a[i]));
		if (s->b[i])
			destroyed(s, "ibv_destroy_qp", ibv_destroy_qp(s->b[i]));
	}
	if (s->srq)
		destroyed(s, "ibv_destroy_srq", ibv_destroy_srq(s->srq));
	if (s->scq)
		destroyed(s, "ibv_destroy_cq", ibv_destroy_cq(s->scq));
	if (s->rcq)
		destroyed(s, "ibv_destroy_cq", ibv_destroy_cq(s->rcq));
	if (s->channel)
		destroyed(s, "ibv_destroy_comp_channel",
			  ibv_destroy_comp_channel(s->channel));
	struct ibv_mr *mrs[] = {s->lmr, s->rmr, s->qmr};
	for (unsigned i = 0; i < 3; i++)
		if (mrs[i])
			destroyed(s, "ibv_dereg_mr", ibv_dereg_mr(mrs[i]));
	if (s->pd)
		destroyed(s, "ibv_dealloc_pd", ibv_dealloc_pd(s->pd));
	free(s->lmem);
	free(s->rmem);
	free(s->qmem);
	free(s->ops);
}

/* ---- running a variant ---------------------------------------------- */

static void start(struct stress *s, struct worker *w, unsigned index,
		  void *(*fn)(void *), struct ibv_cq *cq, int batch)
{
	int rc;

	*w = (struct worker){.s = s,
			     .index = index,
			     .cq = cq,
			     .batch = batch,
			     .rng = 7919ull * index + 1};
	rc = pthread_create(&w->tid, NULL, fn, w);
	if (rc) {
		report(s, K_SETUP, "pthread_create: %s", strerror(rc));
		atomic_store(&s->abort, true);
		w->s = NULL; /* not running: not joined */
	}
}

static void join(struct worker *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (w[i].s)
			pthread_join(w[i].tid, NULL);
}

static bool traffic_done(struct stress *s)
{
	return atomic_load(&s->posters_done) == POSTERS &&
	       atomic_load(&s->completed) >= atomic_load(&s->posted) &&
	       atomic_load(&s->received) >= atomic_load(&s->sends_posted);
}

static void call_off(struct stress *s, const char *why)
{
	report(s, K_COMPLETION,
	       "%s: %u of %u work requests completed, %u of %u SENDs received",
	       why, atomic_load(&s->completed), atomic_load(&s->posted),
	       atomic_load(&s->received), atomic_load(&s->sends_posted));
	atomic_store(&s->abort, true);
}

/* Until the send threads posted everything, every request completed and
 * every SEND was received; a run that stops moving for STALL_S seconds
 * (a lost completion), or passes its deadline, is called off. */
static void wait_traffic(struct stress *s)
{
	struct timespec ms = {0, 1000000}, moved;
	unsigned seen = 0;
	char why[64];

	clock_gettime(CLOCK_MONOTONIC, &moved);
	while (!aborted(s) && !traffic_done(s)) {
		unsigned now = atomic_load(&s->posted) +
			       atomic_load(&s->completed) +
			       atomic_load(&s->received);
		if (now != seen) {
			seen = now;
			clock_gettime(CLOCK_MONOTONIC, &moved);
		} else if (seconds_since(&moved) > STALL_S) {
			snprintf(why, sizeof(why), "no progress for %d s",
				 STALL_S);
			call_off(s, why);
		} else if (past(&s->deadline)) {
			call_off(s, "out of time");
		}
		nanosleep(&ms, NULL);
	}
}

/* Receivers first, so that the first SENDs find buffers; then pollers or
 * waiters, the churner and the send threads. */
static void traffic(struct stress *s, bool events)
{
	struct worker w[RECVERS + 2 * POLLERS + 1 + POSTERS];
	unsigned n = 0;

	for (unsigned i = 0; i < RECVERS; i++)
		start(s, &w[n++], i, recver, NULL, 0);
	for (unsigned i = 0; i < (events ? WAITERS : 2 * POLLERS); i++)
		start(s, &w[n++], i, events ? waiter : poller,
		      i % 2 ? s->rcq : s->scq, i < 2 ? 1 : BATCH);
	start(s, &w[n++], 0, churner, NULL, 0);
	for (unsigned i = 0; i < POSTERS; i++)
		start(s, &w[n++], i, poster, NULL, 0);
	wait_traffic(s);
	atomic_store(&s->stop, true);
	join(w, n);
}

/* Runs one variant; adds its checks to *passed and *failed. */
static void run_variant(struct ibv_context *ctx, const char *variant,
			unsigned nops, int secs, unsigned *passed,
			unsigned *failed)
{
	bool events = !strcmp(variant, "events");
	struct stress *s = calloc(1, sizeof(*s));
	struct timespec t0;

	if (!s) {
		printf("FAIL: %s: out of memory\n", variant);
		++*failed;
		return;
	}
	s->variant = variant;
	s->nops = nops;
	s->ctx = ctx;
	pthread_mutex_init(&s->print_lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s->deadline = t0;
	s->deadline.tv_sec += secs;
	if (!setup(s, events)) {
		traffic(s, events);
		final_checks(s);
	}
	teardown(s);
	printf("%s: %u work requests (%u SENDs), %u churn rounds, %.1f s\n",
	       variant, atomic_load(&s->posted), atomic_load(&s->sends_posted),
	       atomic_load(&s->churns), seconds_since(&t0));
	for (int k = 0; k < K_COUNT; k++) {
		bool ok = !atomic_load(&s->kind_errors[k]);
		printf("%s %s: %s\n", ok ? "ok  " : "FAIL", variant,
		       check_names[k]);
		++*(ok ? passed : failed);
		if (k == K_SETUP && !ok)
			break;
	}
	if (atomic_load(&s->errors) > MAX_REPORTS)
		printf("%s: %u failures, the first %d shown\n", variant,
		       atomic_load(&s->errors), MAX_REPORTS);
	pthread_mutex_destroy(&s->print_lock);
	free(s);
}

/* ---- main ------------------------------------------------------------ */

static char stuck_msg[160];

/* A call that never returns (a deadlock) must still end the run. */
static void on_alarm(int sig)
{
	ssize_t n = write(STDOUT_FILENO, stuck_msg, strlen(stuck_msg));

	(void)sig, (void)n;
	_exit(1);
}

static int usage(void)
{
	fprintf(stderr, "usage: verbs_stress [-n OPS_PER_THREAD] [-t SECONDS]"
			" [poll|events]...\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned nops = 3000, passed = 0, failed = 0;
	int secs = 60, opt, ndev = 0;

	while ((opt = getopt(argc, argv, "n:t:")) != -1) {
		if (opt == 'n')
			nops = (unsigned)atoi(optarg);
		else if (opt == 't')
			secs = atoi(optarg);
		else
			return usage();
	}
	if (nops < 1 || nops > 1000000 || secs < 1)
		return usage();
	for (int i = optind; i < argc; i++)
		if (strcmp(argv[i], "poll") && strcmp(argv[i], "events"))
			return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);

	struct ibv_device **list = ibv_get_device_list(&ndev);
	struct ibv_context *ctx = ndev > 0 ? ibv_open_device(list[0]) : NULL;
	if (!ctx) {
		printf("FAIL: no verbs device to open\n");
		failed++;
	}
	static const char *const all[] = {"poll", "events"};
	int nvar = optind < argc ? argc - optind : 2;
	for (int i = 0; ctx && i < nvar; i++) {
		const char *v = optind < argc ? argv[optind + i] : all[i];
		snprintf(stuck_msg, sizeof(stuck_msg),
			 "FAIL: %s: a verbs call did not return in %d s\n"
			 "verbs_stress: %u passed, %u failed\n",
			 v, secs + 30, passed, failed + 1);
		alarm((unsigned)secs + 30);
		run_variant(ctx, v, nops, secs, &passed, &failed);
		alarm(0);
	}
	if (ctx)
		ibv_close_device(ctx);
	if (list)
		ibv_free_device_list(list);
	printf("verbs_stress: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
