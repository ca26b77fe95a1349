/* SPDX-License-Identifier: MIT */
/* The capture rule checker: IBTA transport rules judged packet by packet, per flow and direction. */
#ifndef ROCEMU_CHECK_H
#define ROCEMU_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "rocemu/flow.h"
#include "rocemu/frame.h"

/*
 * What a finding is. An error is a packet that breaks a rule; a loss is a
 * packet the capture does not hold although the other direction shows it
 * was sent (an ACK covering its PSN, a retransmission filling the gap),
 * or a UC gap, which no answer can explain either way. A reason breaks
 * no rule: it says what an error the capture shows (a NAK, requests
 * never answered) means, from what the capture holds; it counts neither
 * as an error nor as a loss.
 */
enum roce_check_class {
	ROCE_CHECK_ERROR,
	ROCE_CHECK_LOSS,
	ROCE_CHECK_REASON,
};

enum { ROCE_CHECK_TEXT = 400, ROCE_CHECK_NO_FLOW = ~0u };

struct roce_violation {
	uint64_t no;		/* frame number, from 1 */
	unsigned flow;		/* roce_flows id, or ROCE_CHECK_NO_FLOW */
	unsigned dir;		/* sent by the flow's end[dir] */
	enum roce_check_class cls;
	const char *rule;	/* the IBTA section: "9.7.1", "A17.3.3" ... */
	const char *id;		/* an error: its rule book ID (rocemu/rules.h,
				 * "PSN-ORDER"); else NULL */
	uint32_t packets;	/* a loss: the packets missing; else 1 */
	uint64_t also;		/* the earlier frame that makes the finding
				 * with this one (the NAK a later request
				 * breaks, the ACK a NAK contradicts), 0 */
	char text[ROCE_CHECK_TEXT];	/* one sentence, the rule named */
};

/* Called for each finding; v is valid during the call only. */
typedef void (*roce_check_cb)(const struct roce_violation *v, void *arg);

/* Per flow figures, for the summary. */
struct roce_check_flow_stats {
	uint64_t packets;
	uint64_t errors;
	uint64_t losses;	/* packets lost by the capture */
	uint64_t retransmitted;	/* request packets sent again (legal) */
	uint32_t mtu;		/* path MTU given or inferred, 0 unknown */
};

struct roce_check;

/*
 * A checker. mtu is the path MTU every RC/UC flow uses (256..4096), or 0
 * to infer each flow's from its FIRST and MIDDLE packets. Findings go to
 * cb with arg. Returns NULL when out of memory or for an mtu that is not
 * an IB MTU.
 */
struct roce_check *roce_check_new(uint32_t mtu, roce_check_cb cb, void *arg);

/* Frees the checker; NULL is ignored. */
void roce_check_free(struct roce_check *c);

/*
 * Judges one packet, in capture order. f is what roce_frame_parse gave
 * (rc 0, or -EBADMSG with why), flow and dir what roce_flows_classify gave
 * (flow ROCE_CHECK_NO_FLOW when it refused the frame), kind the flow's
 * kind. Returns 0, or -ENOMEM (the packet is then not judged). Findings
 * about earlier packets may be reported now, when this one settles them.
 */
int roce_check_packet(struct roce_check *c, uint64_t no,
		      const struct roce_frame *f, int rc, const char *why,
		      unsigned flow, unsigned dir, enum roce_flow_kind kind);

/*
 * The capture time, ns, of the packets roce_check_packet judges from now
 * on (call it before each; a pcap record's time). Without it the rules
 * that weigh time (capture loss a link could carry, a reaction to a NAK,
 * the RNR NAK timer) give no finding.
 */
void roce_check_time(struct roce_check *c, uint64_t ts_ns);

/*
 * The end of the capture: reports what was still open (a PSN gap nothing
 * explained, an ACK for a PSN never sent, a last request that asked for
 * no acknowledgement). Call once; later packets are not judged.
 */
void roce_check_finish(struct roce_check *c);

/* Figures of flow id; false (s untouched) for a flow never judged. */
bool roce_check_flow_stats(const struct roce_check *c, unsigned flow,
			   struct roce_check_flow_stats *s);

/* Findings so far: errors, and packets lost, over every flow. */
uint64_t roce_check_errors(const struct roce_check *c);
uint64_t roce_check_losses(const struct roce_check *c);

/* Reasons given so far (ROCE_CHECK_REASON findings). */
uint64_t roce_check_reasons(const struct roce_check *c);

#endif
