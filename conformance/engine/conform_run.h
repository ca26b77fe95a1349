/* SPDX-License-Identifier: MIT */
/* One scenario's run: its state, shared by the set-up, the wire steps and the agent steps. */
#ifndef ROCEMU_EMU_CLI_CONFORM_RUN_H
#define ROCEMU_EMU_CLI_CONFORM_RUN_H

#include "conform.h"

struct cf_run {
	struct cf_session *s;
	const struct cf_scenario *sc;
	struct cf_result *r;
	struct cf_env e;
	unsigned pd, pd2, cq, qp, ah, mw;	/* the agent's numbers; qp the
						 * step's QP's */
	unsigned qpno[CF_MAX_QPS];	/* each QP's (the scenario's order) */
	unsigned srq;			/* the agent's SRQ, 0: none */
	unsigned cur;			/* the step's QP, an index */
	unsigned conn;			/* the agent's CM connection, from cm-event */
	const struct cf_step *st;	/* the step being played */
	uint64_t last_ns;		/* when the step before ended */
	uint64_t step_end;		/* set by a step that ends before it
					 * returns: an expect's packet came */
	struct cf_packet pkt;
	bool held;			/* pkt came, unmatched by a maybe: the
					 * next step receives it first */
	bool replayed;			/* pkt is the held one, noted already */
};

/*
 * Sets the verdict (the first one set stands) with its reason and the
 * line of the step that decided it (0: the set-up). Returns -1, so a
 * step can end with return cf_verdict(...).
 */
int cf_verdict(struct cf_run *x, enum cf_verdict v, unsigned line,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Makes QP i (the scenario's order) the one the next steps concern:
 * x->qp and the expressions' qpn, myqpn, psn, mtu. */
void cf_use_qp(struct cf_run *x, unsigned i);

/* Makes the scenario's objects on the agent; 0, or -1 after a verdict. */
int cf_setup(struct cf_run *x);

/*
 * Plays one step that talks to the agent (recv, post, completion,
 * no-completion, memory, state, modify, bind, event, listen, cm-event,
 * accept, disconnect). 0, or -1 after a verdict.
 */
int cf_agent_step(struct cf_run *x, const struct cf_step *st);

#endif
