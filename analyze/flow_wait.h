/* SPDX-License-Identifier: MIT */
/* Flows waiting for their other half, found for an answer in constant time. */
#ifndef ROCEMU_FLOW_WAIT_H
#define ROCEMU_FLOW_WAIT_H

#include <stdint.h>

#include "rocemu/flow.h"

/* The key of the two addresses and the kind flows wait under. */
enum { FLOW_PAIR_KEY_LEN = 16 + 16 + 1 };

/* How many of the newest flows waiting between two addresses an answer
 * that matches no request PSN exactly is fitted against
 * (docs/capture-limits.md). */
enum { FLOW_WAIT_SCAN_MAX = 1024 };

struct flow_waits;

/* An empty set; NULL when out of memory. */
struct flow_waits *flow_waits_new(void);

/* Frees the set; NULL is ignored. */
void flow_waits_free(struct flow_waits *s);

/*
 * Sets key for flows from address a to address b of kind k.
 */
void flow_pair_key(uint8_t key[FLOW_PAIR_KEY_LEN], const uint8_t *a,
		   const uint8_t *b, enum roce_flow_kind k);

/*
 * Flow id (of v) starts waiting under key for its other half. 0, or
 * -ENOMEM with nothing changed.
 */
int flow_waits_push(struct flow_waits *s, const uint8_t *key, unsigned id);

/*
 * Flow id of v, waiting under key, sent a request with this PSN (it is
 * now v[id].last_req_psn[0]): an answer carrying it finds the flow at
 * once. 0, or -ENOMEM (the flow is then found by the bounded scan).
 * Does nothing for a flow that no longer waits.
 */
int flow_waits_note(struct flow_waits *s, const uint8_t *key, unsigned id,
		    uint32_t psn);

/*
 * The waiting flow under key that the first packet f of a new half
 * answers, taken off the set: one whose latest request carries f's PSN
 * (the oldest such), else the best fit among the FLOW_WAIT_SCAN_MAX
 * newest, else the oldest waiting. -1 if none waits. v is the flow
 * table the ids index; it is not changed.
 */
int flow_waits_take(struct flow_waits *s, const uint8_t *key,
		    const struct roce_flow *v, const struct roce_frame *f);

#endif
