/* SPDX-License-Identifier: MIT */
/* Queue state on demand: a device's QPs, their WQEs and PSNs, and the CQs and SRQs they use, as lines of text. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "obj.h"

/* The CQs and SRQs the QPs use, numbered in the order first met (the
 * device keeps no list of them); more than MAX_SEEN are not listed. */
enum { MAX_SEEN = 64, LINE = 400 };

struct dump {
	rocemu_state_fn fn;
	void *arg;
	const void *cq[MAX_SEEN], *srq[MAX_SEEN];
	unsigned ncq, nsrq;
};

static void line(struct dump *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line(struct dump *o, const char *fmt, ...)
{
	char buf[LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	o->fn(o->arg, buf);
}

/* The number (from 1) of p among the seen, added if new; 0 for none. */
static unsigned seen_no(const void **seen, unsigned *n, const void *p)
{
	if (!p)
		return 0;
	for (unsigned i = 0; i < *n; i++)
		if (seen[i] == p)
			return i + 1;
	if (*n == MAX_SEEN)
		return 0;
	seen[(*n)++] = p;
	return *n;
}

static const char *qp_type_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	case IBV_QPT_XRC_SEND: return "XRC_SEND";
	case IBV_QPT_XRC_RECV: return "XRC_RECV";
	default: return "?";
	}
}

static const char *wqe_state_name(uint8_t s)
{
	switch (s) {
	case WQE_POSTED: return "posted, not sent yet";
	case WQE_SENDING: return "being sent";
	case WQE_SENT: return "sent, waiting for its answer";
	default: return "done, waiting for older WQEs";
	}
}

/* The QP's first line: what it is and where its PSNs stand. */
static void qp_head(struct dump *o, const struct rocemu_qp *qp)
{
	unsigned scq = seen_no(o->cq, &o->ncq, qp->scq);
	unsigned rcq = seen_no(o->cq, &o->ncq, qp->rcq);
	unsigned srq = seen_no(o->srq, &o->nsrq, qp->srq);
	char srq_text[24] = "";
	char rnr[16];

	if (srq)
		snprintf(srq_text, sizeof(srq_text), ", srq #%u", srq);
	if (qp->attr.rnr_retry == 7)
		snprintf(rnr, sizeof(rnr), "for ever");
	else
		snprintf(rnr, sizeof(rnr), "%u", qp->comp.rnr_left);
	if (qp_is(qp, IBV_QPT_UD)) {
		line(o, "qp 0x%06x UD %s: qkey 0x%x, send cq #%u, recv cq "
		     "#%u%s", qp->qpn, qp_state_name(qp->state),
		     qp->attr.qkey, scq, rcq, srq_text);
		return;
	}
	/* Under ROCEMU_EV_TEXT (the trace's limit); docs/state.md says
	 * what each field is. */
	line(o, "qp 0x%06x %s %s: dest qp 0x%06x, send psn 0x%06x, unacked "
	     "psn 0x%06x, expected psn 0x%06x, retries left %u, rnr retries "
	     "left %s, send cq #%u, recv cq #%u%s",
	     qp->qpn, qp_type_name(qp->init.qp_type),
	     qp_state_name(qp->state), qp->attr.dest_qp_num, qp->req.psn,
	     qp->comp.psn, qp->resp.psn, qp->comp.retry_left, rnr, scq, rcq,
	     srq_text);
}

/* The send WQEs not yet retired, oldest first, and the posted receives. */
static void qp_queues(struct dump *o, struct rocemu_qp *qp)
{
	uint32_t head = ring_head(&qp->sq), tail = ring_tail(&qp->sq);

	line(o, "qp 0x%06x sq: %u outstanding of %u", qp->qpn, tail - head,
	     qp->init.cap.max_send_wr);
	for (uint32_t i = head; i != tail; i++) {
		const struct swqe *w = ring_slot(&qp->sq, i);
		line(o, "qp 0x%06x sq slot %u: %s wr_id 0x%llx len %u psn "
		     "0x%06x..0x%06x: %s", qp->qpn, i & qp->sq.mask,
		     wr_opcode_name(w->opcode), (unsigned long long)w->wr_id,
		     w->length, w->first_psn, w->last_psn,
		     wqe_state_name(w->state));
	}
	if (qp->srq)
		return;	/* its receives are the SRQ's */
	head = ring_head(&qp->rq);
	tail = ring_tail(&qp->rq);
	line(o, "qp 0x%06x rq: %u posted of %u", qp->qpn, tail - head,
	     qp->init.cap.max_recv_wr);
	for (uint32_t i = head; i != tail; i++) {
		const struct rwqe *w = ring_slot(&qp->rq, i);
		line(o, "qp 0x%06x rq slot %u: wr_id 0x%llx len %u", qp->qpn,
		     i & qp->rq.mask, (unsigned long long)w->wr_id, w->length);
	}
}

static void gid_text(const uint8_t gid[16], char *buf, size_t len)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(gid, v4, sizeof(v4)))
		snprintf(buf, len, "%u.%u.%u.%u", gid[12], gid[13], gid[14],
			 gid[15]);
	else if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* The dump itself, under the world's lock (dev_dump_state's caller's). */
static void dump_dev(struct rocemu_dev *d, struct dump *o)
{
	struct rocemu_qp *qp, *tmp;
	char gid[64];

	gid_text(d->gid, gid, sizeof(gid));
	line(o, "device %s %s: %u QPs, %llu frames seen, clock %llu ns",
	     d->name, gid, HASH_COUNT(d->qps),
	     (unsigned long long)d->frames_seen,
	     (unsigned long long)d->core->now);
	HASH_ITER(hh, d->qps, qp, tmp) {
		qp_head(o, qp);
		qp_queues(o, qp);
	}
	for (unsigned i = 0; i < o->ncq; i++) {
		struct rocemu_cq *cq = (struct rocemu_cq *)o->cq[i];
		line(o, "cq #%u: %u completions waiting of %u slots%s", i + 1,
		     ring_used(&cq->ring), ring_size(&cq->ring),
		     cq->overrun ? ", overrun (completions were lost)" : "");
	}
	for (unsigned i = 0; i < o->nsrq; i++) {
		struct rocemu_srq *srq = (struct rocemu_srq *)o->srq[i];
		line(o, "srq #%u: %u receives posted of %u slots, limit %u%s",
		     i + 1, ring_used(&srq->rq), ring_size(&srq->rq),
		     srq->limit, srq->limit ? " (armed)" : " (not armed)");
	}
}

void dev_dump_state(struct rocemu_dev *d, rocemu_state_fn fn, void *arg)
{
	struct dump o = { .fn = fn, .arg = arg };

	dump_dev(d, &o);
}

void rocemu_dev_dump_state(struct rocemu_dev *d, rocemu_state_fn fn,
			   void *arg)
{
	CORE_GUARD(d->core);
	dev_dump_state(d, fn, arg);
}
