/* SPDX-License-Identifier: MIT */
/* The rule checker's state per flow and direction, shared by the analyze/check_*.c rule files. */
#ifndef ROCEMU_ANALYZE_CHECK_LOCAL_H
#define ROCEMU_ANALYZE_CHECK_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

#include "rocemu/check.h"
#include "rocemu/psn.h"

/* The operation a request message performs. */
enum chk_kind {
	CHK_SEND,
	CHK_WRITE,
	CHK_READ,
	CHK_ATOMIC,
	CHK_OTHER,	/* FLUSH, ATOMIC_WRITE */
};

/* One request message the requester sent, newest last. */
struct chk_msg {
	uint64_t no;		/* frame of its first packet seen */
	uint64_t seq;		/* messages the requester ended before it */
	uint32_t first_psn;
	uint32_t last_psn;	/* READ: first_psn + packets - 1 */
	uint32_t len;		/* READ: the RETH length */
	uint8_t kind;		/* enum chk_kind */
	bool needs_recv;	/* SEND or WRITE with immediate */
	bool inval;		/* SEND with Invalidate (IETH) */
	bool reth;		/* va, rkey, dma_len hold its RETH/AtomicETH */
	uint32_t rkey;
	uint32_t dma_len;
	uint64_t va;
	uint32_t rd_upto;	/* READs and atomics sent up to this one */
};

/* A remote access the responder granted (answered without a NAK): the
 * key and right were good for that range then (check_why.c). */
struct chk_grant {
	uint64_t no;		/* frame of the request */
	uint64_t va;
	uint32_t rkey, len;
	uint8_t kind;		/* enum chk_kind */
};

enum { CHK_GRANTS = 8 };

/* The ring of a direction's newest messages starts small and doubles
 * while its oldest message is still unanswered, up to CHK_RING_MAX: a
 * flow of a few packets costs little, a deep pipeline is followed. */
enum { CHK_RING_MIN = 4, CHK_RING_MAX = 256, CHK_GAPS = 8, CHK_REDO = 4 };

/* A PSN gap in the requests that nothing has explained yet. */
struct chk_gap {
	uint64_t no;		/* the frame after the gap */
	uint32_t lo, hi;	/* missing PSNs, lo..hi */
	uint64_t span_ns;	/* capture time from the request before it
				 * to frame no; 0 when the capture has none */
	uint32_t pkt_len;	/* the direction's smallest request frame */
	uint64_t prev_no;	/* the request before the gap, 0 */
};

/* Where the requester is inside a message. */
enum chk_pos {
	POS_UNKNOWN,	/* capture start, after a go-back or a UC gap */
	POS_OUT,	/* between messages */
	POS_IN,		/* after a FIRST or MIDDLE */
};

/* Requests sent by one end and the other end's answers to them. */
struct chk_dir {
	/* requests */
	bool started;
	uint32_t first_psn;	/* first request PSN seen */
	uint32_t next_psn;	/* after the latest request packet */
	uint32_t high_psn;	/* after the newest PSN ever sent */
	bool read_open;		/* the newest request is a READ whose PSN
				 * span the MTU, still unknown, decides */
	uint32_t read_req_psn, read_req_len;
	uint32_t mtu_guess;	/* the one MTU the READs' spans fitted */
	uint8_t pos;		/* enum chk_pos */
	uint8_t msg_kind;	/* of the message in progress */
	bool msg_counted;	/* its FIRST was seen: bytes are whole */
	uint64_t msg_no;	/* frame of its FIRST */
	uint32_t msg_first_psn;
	uint64_t msg_bytes;
	bool msg_has_reth;
	uint32_t msg_reth_len;
	uint64_t msg_va;	/* its RETH or AtomicETH */
	uint32_t msg_rkey;
	uint64_t noack_no;	/* latest message end without AckReq, 0 */
	uint32_t noack_psn;
	uint64_t msgs_done;	/* messages whose end was seen, new ones */
	struct chk_msg *ring;	/* message seq at ring[seq & (cap - 1)] */
	uint32_t cap;		/* 0 or a power of two */
	struct chk_gap gaps[CHK_GAPS];
	unsigned ngaps;
	struct chk_gap lost[4];	/* the latest gaps settled as loss */
	unsigned nlost;
	uint32_t redo_psn[CHK_REDO];	/* the latest READs sent again */
	unsigned nredo;
	bool had_loss;
	/* answers from the other end */
	bool answered;
	uint32_t acked_psn;	/* highest PSN an answer covered */
	/* MSNs unwrapped, and the range the responder's MSN minus our
	 * message count must lie in: every answer narrows it. */
	bool msn_known;
	uint32_t msn_raw;
	int64_t msn;
	int64_t off_lo, off_hi;
	uint64_t beyond_no;	/* an answer for a PSN not yet sent, 0 */
	uint32_t beyond_psn;
	bool in_read;		/* a READ response in progress */
	bool read_whole;	/* its FIRST was seen */
	bool read_flagged;	/* its opcode sequence or count is reported */
	uint64_t read_seq;	/* the READ's message number */
	uint32_t read_next_psn;
	uint64_t read_bytes;
	/* what the errors the capture shows mean (check_why.c) */
	uint32_t dqpn;		/* the responder's QP, from the requests */
	uint32_t last_req_psn;	/* the newest request packet seen */
	uint64_t last_req_no;
	bool rnr_on;		/* RNR NAKs for rnr_psn not yet settled */
	uint32_t rnr_psn, rnr_count;
	uint64_t rnr_no;
	uint8_t rnr_kind;
	bool wait_set;		/* wait_psn: the oldest request unanswered */
	uint32_t wait_psn, wait_sent;
	uint64_t wait_no;
	struct chk_grant grants[CHK_GRANTS];
	unsigned ngrants;
	/* what a packet obliges the two ends to do next (check_fatal.c,
	 * check_seqnak.c) */
	uint64_t acked_no;	/* the answer that raised acked_psn */
	uint64_t req_ts;	/* capture time of the newest request */
	uint32_t min_req_len;	/* its smallest request frame, 0 none */
	uint64_t fatal_no;	/* the responder's first fatal NAK, 0 */
	uint64_t fatal_ts;
	uint32_t fatal_psn, fatal_high;	/* its PSN; high_psn then */
	uint8_t fatal_syn;
	bool fatal_req_said, fatal_resp_said;	/* one finding each */
	uint64_t seqnak_no;	/* a PSN sequence NAK not yet followed */
	uint64_t seqnak_ts;
	uint32_t seqnak_psn;
	uint32_t seqnak_newest;	/* the newest request sent before it */
	bool ack_msn_set;	/* the newest ACKNOWLEDGE's MSN */
	uint32_t ack_msn;
	uint64_t ack_msn_no;
	/* RNR NAK timing and retries (check_rnr.c) */
	bool rnr_wait;		/* an RNR NAK's timer runs for rnr_wait_psn */
	uint32_t rnr_wait_psn, rnr_wait_us;
	uint64_t rnr_wait_ns, rnr_wait_no;
	uint32_t rnr_tries_psn;	/* the PSN rnr_tries counts retries of */
	uint32_t rnr_tries;
	bool rnr_told;		/* its count is reported */
	/* what a CM REQ/REP announced for this requester (check_cm.c) */
	bool cm_known;
	uint8_t cm_rnr_retry;	/* the peer's RNR Retry Count */
	uint8_t cm_depth;	/* its own Initiator Depth */
	/* READs and atomics in flight (check_atomic.c) */
	uint32_t rd_sent, rd_done;	/* fresh ones sent, answered */
	uint64_t rd_done_no;	/* the answer that set rd_done */
	uint32_t rd_resp;	/* answered by a response of their own */
	uint32_t rd_acked;	/* covered by a positive ACK, rd_resp not */
	uint64_t rd_acked_no;	/* that ACK */
	uint32_t rd_max;	/* the most in flight at once */
	uint64_t rd_max_no;	/* the request that made it */
	bool rd_told;		/* the bound's violation is reported */
	struct {
		uint32_t psn;
		uint64_t orig, no;
	} atm_saved[4];		/* the latest atomic ACKs' original values */
	unsigned natm;
	/* figures */
	uint64_t packets;
};

struct chk_flow {
	bool used;
	uint8_t kind;		/* enum roce_flow_kind */
	uint32_t mtu;		/* 0 until known */
	uint64_t errors, losses, retransmitted;
	struct chk_dir dir[2];
};

struct roce_check {
	uint32_t mtu;			/* given, or 0 */
	roce_check_cb cb;
	void *arg;
	struct chk_flow *flows;		/* by flow id */
	unsigned nflows;
	uint64_t errors, losses, reasons;
	bool finished;
	uint64_t now;			/* capture time of the packet, ns */
	bool timed;			/* roce_check_time gave it */
	struct chk_cm *cm;		/* CM connections seen, or NULL */
};

/* What a rule file is handed: the packet and where it belongs. */
struct chk_pkt {
	uint64_t no;
	const struct roce_frame *f;
	const struct roce_ib *ib;
	unsigned flags;		/* ib->op->flags */
	uint32_t psn;
	unsigned flow, dir;
	struct chk_flow *fl;
	struct chk_dir *req;	/* the requester whose stream this is */
};

/* Reports a finding about frame no of flow/dir, printf-style text.
 * Counts it in the flow (when there is one) and the checker. */
void chk_report(struct roce_check *c, uint64_t no, unsigned flow,
		unsigned dir, enum roce_check_class cls, const char *rule,
		const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* The same, naming also the earlier frame that makes the finding. */
void chk_report_also(struct roce_check *c, uint64_t no, uint64_t also,
		     unsigned flow, unsigned dir, enum roce_check_class cls,
		     const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

/* The same for capture loss of PSNs lo..hi (all counted). */
void chk_report_loss(struct roce_check *c, uint64_t no, unsigned flow,
		     unsigned dir, uint32_t lo, uint32_t hi, const char *rule,
		     const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* The message kind of an opcode table row (its RC operation). */
enum chk_kind chk_kind_of(unsigned flags);

/* The newest ring message holding psn, or NULL. */
struct chk_msg *chk_msg_find(struct chk_dir *d, uint32_t psn);

/* The newest ring message ending at or before psn, or NULL. */
struct chk_msg *chk_msg_ended_by(struct chk_dir *d, uint32_t psn);

/* The PSNs a READ of len bytes consumes at path MTU mtu (0: unknown,
 * taken as 4096). */
uint32_t chk_read_psns(uint32_t len, uint32_t mtu);

/* Message seq if the ring still holds it, else NULL. */
struct chk_msg *chk_msg_get(struct chk_dir *d, uint64_t seq);

/* True when the ring no longer holds the messages as old as psn. */
bool chk_msg_forgotten(struct chk_dir *d, uint32_t psn);

/* Frees d's ring. */
void chk_msgs_free(struct chk_dir *d);

/* Appends a message to d's ring, growing it while its oldest message is
 * unanswered, else overwriting that one. NULL when out of memory (the
 * message is then counted but not kept). */
struct chk_msg *chk_msg_add(struct chk_dir *d, uint64_t no, uint32_t psn,
			    enum chk_kind kind);

/* Request PSN rules (check_psn.c): order, go-back, gaps; sets p->req's
 * position to unknown on a go-back or UC gap. Returns true when the
 * packet is new (not a retransmission). */
bool chk_req_psn(struct roce_check *c, const struct chk_pkt *p);

/* An answer covered PSNs up to psn: settles gaps as loss and records
 * answers beyond what was sent (check_psn.c). */
void chk_answer_psn(struct roce_check *c, const struct chk_pkt *p,
		    uint32_t psn);

/* True when psn lies in a gap settled as capture loss: an answer there
 * answers a request the capture does not hold (check_psn.c). */
bool chk_psn_lost(const struct chk_dir *d, uint32_t psn);

/* Reports what is still open in d at the end (check_psn.c). */
void chk_psn_finish(struct roce_check *c, unsigned flow, unsigned dir);

/* Opcode sequence of a request packet (check_opseq.c). */
void chk_opseq(struct roce_check *c, const struct chk_pkt *p, bool fresh);

/* Payload length and MTU rules of a request or READ response packet
 * (check_len.c); the message byte count lives in p->req. */
void chk_len_req(struct roce_check *c, const struct chk_pkt *p);

/* Learns or checks the flow's MTU from a FIRST/MIDDLE payload; a LAST or
 * ONLY must fit in it (check_len.c). */
void chk_mtu(struct roce_check *c, const struct chk_pkt *p);

/* Sets the last PSN of every READ d's ring holds by path MTU mtu: the
 * MTU became known, or the READs' PSN spans showed it (check_len.c). */
void chk_read_spans(struct chk_dir *d, uint32_t mtu);

/* READ response rules: opcode sequence, PSNs and bytes against the READ
 * answered (check_read.c). */
void chk_read_resp(struct roce_check *c, const struct chk_pkt *p);

/* Notes a READ request the requester sent again (a retransmission): its
 * response may begin at its PSN, inside the original READ's (check_read.c). */
void chk_read_again(const struct chk_pkt *p);

/* AETH rules of an ACK, NAK or atomic ACK, and the AckReq rule on
 * requests (check_ack.c). */
void chk_aeth(struct roce_check *c, const struct chk_pkt *p);
void chk_ackreq(struct roce_check *c, const struct chk_pkt *p, bool fresh);

/* Atomic rules: alignment, and an atomic ACK answering an atomic
 * (check_atomic.c). */
void chk_atomic_req(struct roce_check *c, const struct chk_pkt *p);
void chk_atomic_ack(struct roce_check *c, const struct chk_pkt *p);

/* CM rules of a CM MAD on QP1: TIDs, comm IDs, message order; the
 * connection's announced QPNs and PSNs are kept (check_cm.c). Any other
 * frame is ignored. */
void chk_cm_mad(struct roce_check *c, uint64_t no, const struct roce_frame *f,
		unsigned flow, unsigned dir);

/* An RC request between two addresses a CM connection joined goes to the
 * QPN its REQ or REP announced, the first at the starting PSN
 * (check_cm.c). */
void chk_cm_data(struct roce_check *c, const struct chk_pkt *p);

/* Frees the CM connections (check_cm.c). */
void chk_cm_free(struct roce_check *c);

/* What the errors a capture shows mean, said as ROCE_CHECK_REASON
 * findings (check_why.c): a request seen (after the other rules), a
 * positive answer, a NAK of type/code, and the end of the capture. */
void chk_why_req(const struct chk_pkt *p);
void chk_why_answer(struct roce_check *c, const struct chk_pkt *p);
void chk_why_nak(struct roce_check *c, const struct chk_pkt *p,
		 unsigned type, unsigned code);
void chk_why_finish(struct roce_check *c, unsigned flow, unsigned dir);

/* Fatal NAKs (invalid request, remote access, remote operational
 * error) end the QP's work (check_fatal.c): a NAK seen, an answer of the
 * responder after its fatal NAK, a request of the requester after it. */
void chk_fatal_nak(struct roce_check *c, const struct chk_pkt *p,
		   unsigned code);
void chk_fatal_answer(struct roce_check *c, const struct chk_pkt *p);
void chk_fatal_req(struct roce_check *c, const struct chk_pkt *p, bool fresh);

/* PSN sequence error NAKs (check_seqnak.c): a NAK seen, a request (the
 * requester going back), an answer covering PSNs up to psn, the end. */
void chk_seqnak(struct roce_check *c, const struct chk_pkt *p);
void chk_seqnak_req(const struct chk_pkt *p, bool fresh);
void chk_seqnak_covered(struct roce_check *c, const struct chk_pkt *p,
			uint32_t psn);
void chk_seqnak_finish(struct roce_check *c, unsigned flow, unsigned dir);

/* Capture time the requester of d had after its newest request before
 * now, ns (0 when the capture has no time); the grace granted for a
 * reaction to a NAK (check_fatal.c). */
enum { CHK_GRACE_NS = 10 * 1000 * 1000 };
bool chk_after_grace(const struct roce_check *c, uint64_t since_ts);
/* RNR NAK rules (check_rnr.c): a request sent again after an RNR NAK
 * comes no earlier than its timer allows, and its retries stay within
 * what the QP could have; an RNR NAK starts the timer. */
void chk_rnr_req(struct roce_check *c, const struct chk_pkt *p, bool fresh);
void chk_rnr_nak(struct roce_check *c, const struct chk_pkt *p,
		 unsigned code);
void chk_rnr_finish(struct roce_check *c, unsigned flow, unsigned dir);

/* READs and atomics in flight (check_atomic.c): a fresh one counted,
 * any answer counted against them, the most in flight said at the end. */
void chk_rd_req(struct roce_check *c, const struct chk_pkt *p, bool fresh);
void chk_rd_answer(const struct chk_pkt *p);

/* A READ response or atomic ACK that opens the answer to m: it must not
 * come after an answer to a later READ or atomic (check_atomic.c). */
void chk_rd_order(struct roce_check *c, const struct chk_pkt *p,
		  const struct chk_msg *m);
void chk_rd_finish(struct roce_check *c, unsigned flow, unsigned dir);

/* The name of a message kind ("SEND", "RDMA WRITE", ...). */
const char *chk_kind_name(unsigned kind);

/* ICRC and the codec's own rules (check_engine.c is the caller). */
void chk_frame(struct roce_check *c, uint64_t no, const struct roce_frame *f,
	       int rc, const char *why, unsigned flow, unsigned dir);

#endif
