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
	uint8_t *buf;		/* rocemu's memory for it, hi - lo bytes */
	struct rocemu_mr *mr;
};

/* One direction of a flow to replay: end[req] asks, end[1 - req] answers. */
struct rp_plan {
	const struct roce_capture *cap;
	const struct roce_flow *fl;
	unsigned req;			/* the requester's end */
	unsigned mtu_bytes;		/* the path MTU the capture shows */
	uint8_t rnr_code;		/* of the first RNR NAK, else 0 */
	uint32_t first_psn;		/* of the first request */
	uint32_t max_send;		/* largest SEND message, bytes */
	size_t nreq, nresp;		/* requests to feed, answers captured */
	struct rp_region *regions;
	size_t nregions;
};

/* A frame rocemu sent, parsed, and the request it was answering. */
struct rp_sent {
	uint8_t *data;
	uint32_t len;
	struct roce_frame f;
	size_t after;		/* index in cap->pkts of the request fed last */
	uint64_t ts_ns;
};

/*
 * Works out what the capture implies for direction req of flow fl: MTU,
 * the memory regions accepted requests reached, the RNR timer. Returns 0;
 * -ENOENT when end[req] sent no request; -ENOMEM.
 */
int rp_plan_make(struct rp_plan *p, const struct roce_capture *cap,
		 const struct roce_flow *fl, unsigned req);

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
 * requester sent that PSN again.
 */
bool rp_accepted(const struct rp_plan *p, size_t k);

/*
 * The bytes the captured responder returned for READ request k, in
 * order, into buf (len bytes): 0, or -ENOENT when the capture lacks some.
 */
int rp_read_data(const struct rp_plan *p, size_t k, uint8_t *buf,
		 uint32_t len);

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

/* The result of replaying one direction. */
struct rp_result {
	struct rp_sent *sent;		/* what rocemu's responder sent */
	size_t nsent;
	/* counters that moved while rocemu handled each request fed:
	 * deltas[k * ROCEMU_CNT_COUNTER_MAX + c], k over cap->pkts */
	uint64_t *deltas;
	size_t fed;
	size_t *fed_at;			/* cap->pkts index of each fed */
	char qp_state[512];		/* rocemu_qp_describe at the end */
	size_t receives;		/* receive WQEs posted */
	size_t cut;			/* requests cut by the capture, not fed */
};

/*
 * Runs rocemu as the plan's responder on a deterministic world: feeds
 * every request in captured order and keeps every frame it sends.
 * Returns 0; -errno when the device cannot be set up (res empty).
 */
int rp_run_responder(const struct rp_plan *p, struct rp_result *res);

/* Frees what a run allocated. */
void rp_result_free(struct rp_result *res);

/*
 * Compares rocemu's answers with the captured ones, in order, field by
 * field; prints the first divergence (both packets, the fields, what
 * rocemu's counters say) and a summary line for the direction to out.
 * Returns 0 when they agree, 1 when they diverge.
 */
int rp_compare(const struct rp_plan *p, const struct rp_result *res,
	       bool verbose, FILE *out);

#endif
