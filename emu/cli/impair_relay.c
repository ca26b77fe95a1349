/* SPDX-License-Identifier: MIT */
/* rocemu impair's relay: each packet through the rules, the queue of what waits (delayed, held back), the captures. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "impair.h"
#include "rocemu/datagram.h"
#include "rocemu/frame.h"
#include "rocemu/ipid.h"
#include "rocemu/pcapio.h"

enum { FRAME_CAP = 65536 + 64, QUEUE_MAX = 65536 };

/* A frame waiting to be sent. */
struct pending {
	uint64_t due_ns;	/* sent at or after this */
	uint32_t hold;		/* reorder: sent after this many more */
	uint8_t dir;
	size_t len;
	uint8_t *buf;
};

struct relay {
	const struct impair_cfg *c;
	const int *fds;
	struct impair_stats *st;
	struct roce_pcap_writer *in, *out;
	struct pending *q;
	size_t nq;
	uint8_t rx[FRAME_CAP], tx[FRAME_CAP];
	char *err;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int record(struct relay *r, struct roce_pcap_writer *w,
		  const uint8_t *frame, size_t len)
{
	if (w && roce_pcap_write(w, wall_ns(), frame, len)) {
		snprintf(r->err, IMP_ERR_MAX, "cannot write the capture");
		return -EIO;
	}
	return 0;
}

/* Sends a frame now and records it; a failed send is counted, not fatal.
 * One sent in a direction counts down the holds of those held back in it. */
static int send_now(struct relay *r, uint8_t dir, const uint8_t *frame,
		    size_t len)
{
	if (impair_send(r->c, r->fds, dir, frame, len)) {
		r->st->send_err++;
		return 0;
	}
	r->st->tx[dir]++;
	/* one more sent this way: the held back wait for one fewer */
	for (size_t k = 0; k < r->nq; k++)
		if (r->q[k].dir == dir && r->q[k].hold && !--r->q[k].hold)
			r->q[k].due_ns = 0; /* its turn: right after this one */
	return record(r, r->out, frame, len);
}

static int enqueue(struct relay *r, uint8_t dir, const uint8_t *frame,
		   size_t len, uint64_t due, uint32_t hold)
{
	if (r->nq == QUEUE_MAX)
		return send_now(r, dir, frame, len); /* bounded: no hold */
	struct pending *q = realloc(r->q, (r->nq + 1) * sizeof(*q));
	uint8_t *b = malloc(len);
	if (!q || !b) {
		free(b);
		if (q)
			r->q = q;
		snprintf(r->err, IMP_ERR_MAX, "out of memory");
		return -ENOMEM;
	}
	r->q = q;
	memcpy(b, frame, len);
	q[r->nq++] = (struct pending){ due, hold, dir, len, b };
	return 0;
}

/* Sends every queued frame that is due, oldest first. */
static int flush_due(struct relay *r)
{
	for (size_t i = 0; i < r->nq;) {
		struct pending p = r->q[i];
		if (p.hold || p.due_ns > mono_ns()) {
			i++;
			continue;
		}
		memmove(&r->q[i], &r->q[i + 1], (r->nq - i - 1) * sizeof(p));
		r->nq--;
		int rc = send_now(r, p.dir, p.buf, p.len);
		free(p.buf);
		if (rc)
			return rc;
		i = 0; /* a hold may have ended before i */
	}
	return 0;
}

/* What the rules decided for one packet. */
struct verdict {
	bool drop;
	uint32_t copies;	/* extra */
	uint64_t delay_ms;
	uint32_t hold;		/* reorder: after this many */
	uint64_t hold_ms;
};

static void apply(struct relay *r, struct impair_rule *rule, uint8_t *frame,
		  size_t len, struct verdict *v)
{
	r->st->acted[rule->action]++;
	switch (rule->action) {
	case IMP_DROP:
		v->drop = true;
		break;
	case IMP_DUP:
		v->copies += rule->copies;
		break;
	case IMP_DELAY:
		v->delay_ms += rule->ms;
		break;
	case IMP_REORDER:
		v->hold = rule->after;
		v->hold_ms = rule->ms;
		break;
	case IMP_CORRUPT:
		impair_corrupt(frame, len, rule->byte, rule->fix_icrc);
		break;
	case IMP_ECN:
		impair_mark_ce(frame, len);
		break;
	}
}

/* The frame to send for one received: readdressed in mode ip. */
static int outgoing(struct relay *r, uint8_t dir, size_t len)
{
	if (r->c->eth) {
		memcpy(r->tx, r->rx, len);
		return (int)len;
	}
	return impair_readdress(r->rx, len, r->c->relay_gid,
				dir == IMP_DIR_AB ? r->c->b_gid : r->c->a_gid,
				ROCE_UDP_PORT, r->tx, sizeof(r->tx));
}

static int relay_one(struct relay *r, uint8_t dir, size_t len)
{
	struct roce_frame f;
	struct verdict v = { 0 };
	const char *why;
	int n, prc;

	r->st->rx[dir]++;
	if (record(r, r->in, r->rx, len))
		return -EIO;
	prc = roce_frame_parse(ROCE_LINK_ETH, r->rx, len, len, &f, &why);
	if (prc) { /* not RoCEv2 (mode eth), or what the codec refuses */
		r->st->not_roce += prc == -ENOMSG;
		r->st->malformed += prc != -ENOMSG;
		return send_now(r, dir, r->rx, len);
	}
	r->st->bad_icrc += !roce_frame_icrc_ok(&f);
	n = outgoing(r, dir, len);
	if (n < 0) {
		r->st->malformed++;
		return 0;
	}
	struct impair_pkt p = { dir, f.ib.bth.opcode, f.ib.bth.dqpn,
				f.ib.bth.psn };
	for (size_t i = 0; i < r->c->nrules && !v.drop; i++)
		if (impair_rule_fires(&r->c->rules[i], &p))
			apply(r, &r->c->rules[i], r->tx, (size_t)n, &v);
	if (v.drop)
		return 0;
	uint64_t now = mono_ns();
	for (uint32_t k = 0; k <= v.copies; k++) {
		int rc;
		if (v.hold)
			rc = enqueue(r, dir, r->tx, (size_t)n,
				     now + (v.delay_ms + v.hold_ms) * 1000000,
				     v.hold);
		else if (v.delay_ms)
			rc = enqueue(r, dir, r->tx, (size_t)n,
				     now + v.delay_ms * 1000000, 0);
		else
			rc = send_now(r, dir, r->tx, (size_t)n);
		if (rc)
			return rc;
	}
	return 0;
}

/* Milliseconds until the next queued frame is due (-1: none waits). */
static int next_due_ms(const struct relay *r)
{
	uint64_t now = mono_ns(), best = UINT64_MAX;

	for (size_t i = 0; i < r->nq; i++)
		if (r->q[i].due_ns < best)
			best = r->q[i].due_ns;
	if (best == UINT64_MAX)
		return 200; /* to see *stop soon */
	return best <= now ? 0 : (int)((best - now) / 1000000 + 1);
}

/* When a held frame's time comes, its hold ends: it is due. */
static void expire_holds(struct relay *r)
{
	uint64_t now = mono_ns();

	for (size_t i = 0; i < r->nq; i++)
		if (r->q[i].hold && r->q[i].due_ns <= now)
			r->q[i].hold = 0;
}

static int take_all(struct relay *r, struct roce_ipid_table *ids,
		    struct pollfd *pfd, int nfd)
{
	for (int s = 0; s < nfd; s++) {
		if (!(pfd[s].revents & POLLIN))
			continue;
		for (int k = 0; k < 64; k++) { /* a batch, then the others */
			uint8_t dir;
			int n = impair_recv(r->c, r->fds, s, ids, r->rx,
					    sizeof(r->rx), &dir, r->st);
			if (n == -EAGAIN)
				break;
			if (n < 0) {
				snprintf(r->err, IMP_ERR_MAX, "receive: %s",
					 strerror(-n));
				return n;
			}
			if (n > 0 && relay_one(r, dir, (size_t)n))
				return -EIO;
			if (flush_due(r))
				return -EIO;
		}
	}
	return 0;
}

int impair_relay(const struct impair_cfg *c, const int fds[2],
		 volatile sig_atomic_t *stop, struct impair_stats *st,
		 char *err)
{
	static struct roce_ipid_table ids;
	struct relay *r = calloc(1, sizeof(*r));
	int rc, nfd = c->eth ? 2 : 1;

	if (!r) {
		snprintf(err, IMP_ERR_MAX, "out of memory");
		return -ENOMEM;
	}
	*r = (struct relay){ .c = c, .fds = fds, .st = st, .err = err,
			     .in = c->pcap_in, .out = c->pcap_out };
	roce_ipid_init(&ids);
	rc = 0;
	while (!rc && !*stop) {
		struct pollfd pfd[2] = { { fds[0], POLLIN, 0 },
					 { fds[1], POLLIN, 0 } };
		int got = poll(pfd, (nfds_t)nfd, next_due_ms(r));
		if (got < 0 && errno != EINTR) {
			snprintf(err, IMP_ERR_MAX, "poll: %s", strerror(errno));
			rc = -errno;
			break;
		}
		expire_holds(r);
		rc = flush_due(r);
		if (!rc && got > 0)
			rc = take_all(r, &ids, pfd, nfd);
	}
	/* what still waits goes out: a stop loses nothing it took in */
	for (size_t i = 0; i < r->nq; i++)
		r->q[i].hold = 0, r->q[i].due_ns = 0;
	if (!rc)
		rc = flush_due(r);
	for (size_t i = 0; i < r->nq; i++)
		free(r->q[i].buf);
	free(r->q);
	free(r);
	return rc;
}
