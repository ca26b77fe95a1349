/* SPDX-License-Identifier: MIT */
/* rocemu replay: one direction of a captured flow, what it implies, and rocemu's answer to it. */
#ifndef ROCEMU_EMU_CLI_REPLAY_H
#define ROCEMU_EMU_CLI_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rocemu/device.h"
#include "rocemu/flow.h"

/* Remote memory the captured responder let one rkey reach: the union of
 * the ranges of the requests it accepted with that key. */
struct rp_region {
	uint32_t rkey;		/* as captured */
	uint64_t lo, hi;	/* captured VAs, [lo, hi) */
	bool sized;		/* lo, hi set: some request reached it */
	/* a SEND with Invalidate the captured responder accepted named it
	 * (first such request: inv_at) */
	bool invalidated;
	size_t inv_at;
	/* a type 2 memory window (IBTA 10.6.7.2): invalidated, and a
	 * request naming it refused after that. Any other key the captured
	 * responder was asked to invalidate stays unknown to rocemu (an
	 * MR's key: SEND-INV-MR-KEY in conformance/differences.md). */
	bool window;
	uint8_t *buf;		/* rocemu's memory for it, hi - lo bytes */
	struct rocemu_mr *mr;
	struct rocemu_mw *mw;	/* the window bound over mr, or NULL */
	uint32_t key;		/* the R_Key rocemu gave it (mr's or mw's) */
};

/*
 * Memory a replay may plan beyond the payload bytes the flow's packets
 * carry in the capture (docs/capture-limits.md): so that a request of a
 * few bytes cannot ask for gigabytes.
 */
#define RP_MEM_SLACK (1ull << 20)

/* The capture's packets grouped by flow, each flow's in capture order:
 * flow f's are pk[start[f]] .. pk[start[f + 1] - 1]. Made in one pass,
 * so that each flow's replay walks its own packets only. */
struct rp_index {
	const struct roce_cap_pkt **pk;
	size_t *start;
	unsigned nflows;
	struct rp_cm_ann *ann;	/* sorted by rp_ann_cmp */
	size_t nann;
};

/* What a CM REQ or REP announced for its sender's QP (IBTA 12.7.29,
 * 12.7.30: the READs and atomics it takes in at once, and sends out). */
struct rp_cm_ann {
	uint8_t gid[16];		/* the sender's address */
	uint32_t qpn;			/* its Local QPN */
	uint8_t responder_resources, initiator_depth;
};

/* Indexes cap's packets by flow, and the CM REQs and REPs it holds: 0,
 * or -ENOMEM (ix empty). */
int rp_index_make(struct rp_index *ix, const struct roce_capture *cap);

/* Frees what rp_index_make allocated; ix is left empty. */
void rp_index_free(struct rp_index *ix);

/* One direction of a flow to replay: end[req] asks, end[1 - req] answers.
 * A packet index k below names the flow's k-th packet (rp_pkt). */
struct rp_plan {
	const struct roce_capture *cap;
	const struct roce_flow *fl;
	const struct roce_cap_pkt *const *pk;	/* the flow's packets */
	size_t n;
	uint64_t *visits;		/* rp_pkt calls counted here, or NULL */
	size_t answers_end;		/* past the flow's last answer */
	unsigned req;			/* the requester's end */
	unsigned mtu_bytes;		/* the path MTU the capture shows */
	uint8_t rnr_code;		/* of the first RNR NAK, else 0 */
	uint32_t first_psn;		/* of the first request */
	uint32_t max_send;		/* largest SEND message, bytes */
	uint32_t qkey;			/* UD: the first request's DETH Q_Key */
	size_t nreq, nresp;		/* requests to feed, answers captured */
	struct rp_region *regions;
	size_t nregions;
	size_t windows;			/* regions that are windows */
	/* accepted requests whose range wraps past 2^64: left out of the
	 * regions (rocemu refuses them); the first of them */
	size_t wrapped, first_wrapped;
	uint64_t carried;		/* payload bytes the flow's packets hold */
	uint64_t read_bytes;		/* the requests' READ lengths, summed */
	/* READs and atomics: the most the requester had outstanding at
	 * once (from a request's first sending to its last response
	 * packet or atomic ACK), RP_RD_RING + 1 for more than RP_RD_RING;
	 * and the larger of the requester's Initiator Depth and the
	 * responder's Responder Resources a CM REQ or REP announced (0:
	 * none in the capture) */
	unsigned rd_shown, rd_announced;
	/* per packet: 0 for a request the captured responder refused
	 * (rp_accepted); NULL when the flow has no answer */
	uint8_t *verdict;
};

/* The most READs and atomics outstanding at once that rp_plan_make
 * follows: beyond the device's limit (128), so that a capture showing
 * more is told apart. */
enum { RP_RD_RING = 256 };

/*
 * max_rd_atomic and max_dest_rd_atomic for rocemu's QP in the plan:
 * max(rd_shown, rd_announced, 1), at most limit (the device's). Returns
 * 0 with the value in *v; -ERANGE when the capture shows more
 * outstanding at once than limit (*v untouched): rocemu cannot be that
 * end. An announcement above limit alone is capped (the capture never
 * needed it): *clamped is then set.
 */
int rp_rd_atomic(const struct rp_plan *p, unsigned limit, unsigned *v,
		 bool *clamped);

/* What a replay of the plan may plan in memory: the payload bytes the
 * flow carries plus RP_MEM_SLACK. */
uint64_t rp_mem_limit(const struct rp_plan *p);

/*
 * Whether rocemu as the plan's responder stays within rp_mem_limit: the
 * bytes of its regions and receive buffer, and those of the READ
 * responses the requests ask of it. Returns 0; -E2BIG with the figure
 * in *need and what it counts in *what ("memory", "READ responses").
 */
int rp_responder_fits(const struct rp_plan *p, uint64_t *need,
		      const char **what);

/* The receive buffer rocemu's responder posts: the largest SEND and the
 * 40-byte GRH a UD receive starts with. */
uint64_t rp_rbuf_len(const struct rp_plan *p);

/* A frame rocemu sent, parsed, and the request it was answering. */
struct rp_sent {
	uint8_t *data;
	uint32_t len;
	struct roce_frame f;
	size_t after;		/* which request fed (0, 1, ...) it followed */
	uint64_t ts_ns;
};

/* The flow's packet k (k < p->n), counted in *p->visits: the work a
 * replay does is the packets it looks at. */
static inline const struct roce_cap_pkt *rp_pkt(const struct rp_plan *p,
						size_t k)
{
	if (p->visits)
		(*p->visits)++;
	return p->pk[k];
}

/*
 * Works out what the capture implies for direction req of flow fl (its
 * packets as ix holds them): MTU, the memory regions accepted requests
 * reached, the RNR timer. visits (or NULL) counts the packets looked at,
 * then and later. Returns 0; -ENOENT when end[req] sent no request;
 * -ENOMEM.
 */
int rp_plan_make(struct rp_plan *p, const struct roce_capture *cap,
		 const struct rp_index *ix, const struct roce_flow *fl,
		 unsigned req, uint64_t *visits);

/* The requester's rnr_retry the capture shows: when its last RNR NAK was
 * never followed by the PSN again, the requester gave up after one
 * retry fewer than the RNR NAKs of that PSN; 7 (for ever) otherwise. */
unsigned rp_rnr_retry(const struct rp_plan *p);

/* Frees what rp_plan_make allocated (the regions' buffers too). */
void rp_plan_free(struct rp_plan *p);

/* True when packet k is a request of the plan's requester. */
bool rp_is_request(const struct rp_plan *p, size_t k);

/* True when packet k is an answer (ACK, READ response, atomic ACK) of
 * the plan's responder. */
bool rp_is_answer(const struct rp_plan *p, size_t k);

/* The region of a captured rkey, or NULL when the captured responder
 * never accepted it. */
struct rp_region *rp_region_of(const struct rp_plan *p, uint32_t rkey);

/*
 * Whether the captured responder accepted request k: false when it
 * answered k's PSN with a NAK (any code) or an RNR NAK before the
 * requester sent that PSN again (and before any answer beyond it).
 * Constant time: rp_plan_make decided every request in one pass.
 */
bool rp_accepted(const struct rp_plan *p, size_t k);

/* Whether the captured responder refused request k with a NAK invalid
 * request or remote operational error (what a SEND longer than its
 * receive buffer gets: IBTA 9.7.5.2; rxe: RECV-TOO-SMALL). */
bool rp_failed(const struct rp_plan *p, size_t k);

/*
 * The bytes the captured responder returned for READ request k, in
 * order, into buf (len bytes): 0, or -ENOENT when the capture lacks some.
 */
int rp_read_data(const struct rp_plan *p, size_t k, uint8_t *buf,
		 uint32_t len);

/* Response packets a READ of len bytes takes at a path MTU of mtu. */
uint32_t rp_read_packets(uint32_t len, unsigned mtu);

/* The original value the captured atomic ACK for request k carried: 0,
 * or -ENOENT without one. */
int rp_atomic_orig(const struct rp_plan *p, size_t k, uint64_t *v);

/*
 * Puts captured request k on w's wire for rocemu's responder. A RETH or
 * AtomicETH is mapped onto rocemu's memory: an rkey the captured
 * responder accepted becomes its region's MR, its VA the same offset in
 * it; any other rkey stays one rocemu refuses. Such a packet is built
 * again (new ICRC); others, on Ethernet, go as captured. Returns 0;
 * -ENODATA for a frame the capture cut short (not fed); -EINVAL when the
 * frame cannot be built.
 */
int rp_inject(const struct rp_plan *p, size_t k, struct rocemu_world *w);

/* The emulated end: a deterministic world, a device with the captured
 * address, and its QP (of the flow's transport) with the captured
 * number. */
struct rp_dev {
	struct rocemu_world *w;
	struct rocemu_dev *dev;
	struct rocemu_pd *pd;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
};

/* QP0 and QP1 are special (IBTA: the SMI and GSI QPs): rocemu creates
 * none, so a flow whose emulated end is one of them is not replayed. */
enum { RP_MIN_QPN = 2 };

/* The ibv_mtu of a path MTU in bytes (1024 for one that is none). */
enum ibv_mtu rp_mtu_enum(unsigned bytes);

/*
 * Sets d up as end[side] of the plan's flow: the device at its address,
 * a QP of the flow's transport numbered as captured, connected to the
 * other end with cp (its peer, QPN and MTU filled in here; UC takes only
 * the PSNs of the rest, UD only sq_psn and the plan's Q_Key) and
 * max_send_wr send WQEs; cp->max_rd_atomic is set here from the
 * capture (rp_rd_atomic, the device's max_qp_rd_atom its limit).
 * Returns 0; -EPERM (nothing made) for a captured QPN below RP_MIN_QPN;
 * -ERANGE, said on stderr, when the capture shows more READs and atomics
 * outstanding than the device takes; -EADDRINUSE when the QPN cannot be
 * had, another -errno else (then rp_dev_close frees what was made).
 */
int rp_dev_open(struct rp_dev *d, const struct rp_plan *p, unsigned side,
		struct rocemu_rc_params *cp, uint32_t max_send_wr);

/* Frees what rp_dev_open made, the MRs excepted (deregister them
 * first); d is left empty. */
void rp_dev_close(struct rp_dev *d);

struct rp_result;

/* What rp_collect_start keeps: the frames an emulated end sends. */
struct rp_collect {
	struct rp_result *res;
	const uint8_t *gid;	/* the end's own address */
	size_t after;		/* tag for the frames to come (rp_sent.after) */
	uint64_t ts_ns;		/* their time in --write's capture */
	int err;		/* -ENOMEM once a frame could not be kept */
};

/* Appends every frame d's device sends from now on to res->sent, parsed,
 * tagged with c->after and c->ts_ns as they are then. Never fails; a
 * frame it cannot keep sets c->err. */
void rp_collect_start(struct rp_collect *c, struct rp_dev *d,
		      struct rp_result *res);

/* The result of replaying one direction. */
struct rp_result {
	struct rp_sent *sent;		/* what rocemu's responder sent */
	size_t nsent;
	/* counters that moved while rocemu handled each request fed:
	 * deltas[k * ROCEMU_CNT_COUNTER_MAX + c], k over those fed */
	uint64_t *deltas;
	size_t fed;
	size_t *fed_at;			/* the plan's index of each fed */
	char qp_state[512];		/* rocemu_qp_describe at the end */
	size_t receives;		/* receive WQEs posted */
	size_t cut;			/* requests cut by the capture, not fed */
	size_t messages;		/* fed messages that take a receive */
	size_t received;		/* receive completions, successful */
	uint64_t need;			/* -E2BIG: the bytes it would need */
};

/*
 * Runs rocemu as the plan's responder on a deterministic world: feeds
 * every request in captured order and keeps every frame it sends.
 * Returns 0; -E2BIG (nothing run) when rp_responder_fits says no; -errno
 * when the device cannot be set up (res empty).
 */
int rp_run_responder(const struct rp_plan *p, struct rp_result *res);

/* Frees what a run allocated. */
void rp_result_free(struct rp_result *res);

struct cf_diffs;

/*
 * Compares rocemu's answers with the captured ones, in order, field by
 * field; prints the first divergence (both packets, the fields, what
 * rocemu's counters say) and a summary line for the direction to out.
 * known (or NULL) is the list of differences: a divergence one of its
 * replay: matchers describes is printed with the entry's ID and its
 * IBTA sections (cf_diffs_ibta), the ID going into *known_id (else
 * NULL); so are ACKs coalesced otherwise. Returns 0
 * when they agree, 1 when they diverge.
 */
int rp_compare(const struct rp_plan *p, const struct rp_result *res,
	       const struct cf_diffs *known, bool verbose, FILE *out,
	       const char **known_id);

enum { RP_DIFF_LEN = 512 };

/*
 * Every transport field in which emu (rocemu's packet) differs from cap
 * (the captured one) as "field: captured X, rocemu Y; ..." into text:
 * true when they differ. Compared: BTH (opcode, PSN, QPN, SE, AckReq,
 * P_Key), AETH, AtomicAckETH, RETH, AtomicETH, ImmDt, IETH, payload.
 */
bool rp_frame_diff(const struct roce_frame *cap, const struct roce_frame *emu,
		   char text[RP_DIFF_LEN]);

/* Prints a packet in the dissector's one-line form after "    WHO ": a
 * captured one with its frame number and time since the capture began
 * (rp_rel), rocemu's with 0 for both. */
void rp_line(FILE *out, const char *who, const struct roce_frame *f,
	     uint64_t no, int64_t rel_ns);

/* Time of captured packet k since the capture's first RoCEv2 packet. */
int64_t rp_rel(const struct rp_plan *p, size_t k);

/* Prints "flow N RC requester > responder" (no newline). */
void rp_head(FILE *out, const struct rp_plan *p);

/*
 * rocemu as the plan's requester: posts a WQE per captured message,
 * compares each request it sends with the captured one, in order, and is
 * fed each captured answer once it has sent what that answers; the clock
 * moves on when the capture shows a request rocemu has not sent yet
 * (retries). Prints the first divergence and a summary line to out;
 * rocemu's frames go into res->sent. Returns 0 same, 1 diverged, or
 * -errno when rocemu cannot be set up (res empty): -E2BIG, with the bytes
 * in res->need, when its WQEs' buffers would pass rp_mem_limit.
 */
int rp_run_requester(const struct rp_plan *p, bool verbose, FILE *out,
		     struct rp_result *res);

#endif
