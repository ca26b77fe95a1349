/* SPDX-License-Identifier: MIT */
/* The pcap tap: a wire around any wire that records each packet once, as a real wire's capture shows it. */
#include <errno.h>
#include <stdlib.h>

#include "rocemu/pcapio.h"
#include "wire.h"

struct tap_wire {
	struct wire w;		/* first: a struct wire * is one of these */
	struct wire *inner;
	struct roce_pcap_writer *pcap;
	tap_watch_fn watch;	/* every frame sent, or NULL */
	void *watch_arg;
	/* while receiving: where the inner wire's arrivals go next */
	wire_deliver_fn up;
	void *up_arg;
};

static struct tap_wire *tap_of(const struct wire *w)
{
	return (struct tap_wire *)(uintptr_t)w;
}

/* A port's frames pass through the tap only while it records: otherwise
 * they go straight to the inner wire, and a 64-byte SEND does not pay two
 * indirect calls for nothing. */
static void route_port(struct tap_wire *t, struct wire_port *p)
{
	p->top = t->pcap || t->watch ? &t->w : t->inner;
}

static int tap_attach(struct wire *w, const uint8_t gid[16],
		      struct wire_port **port)
{
	struct wire *in = tap_of(w)->inner;
	int rc = in->ops->attach(in, gid, port);

	if (rc == 0)
		route_port(tap_of(w), *port);
	return rc;
}

static void tap_detach(struct wire *w, struct wire_port *p)
{
	struct wire *in = tap_of(w)->inner;

	in->ops->detach(in, p);
}

/* One frame into the capture, counted: trace events carry the count. */
static void record(struct tap_wire *t, const uint8_t *frame, size_t len)
{
	roce_pcap_write(t->pcap, t->w.core->now, frame, len);
	t->w.core->frames_recorded++;
}

/* Everything sent is recorded as built, before the inner wire's faults
 * (a capture at the sender). */
static void tap_send(struct wire *w, struct wire_port *from, uint8_t *frame,
		     size_t len)
{
	struct tap_wire *t = tap_of(w);

	if (t->pcap)
		record(t, frame, len);
	if (t->watch)
		t->watch(t->watch_arg, frame, len);
	t->inner->ops->send(t->inner, from, frame, len);
}

/* What came from outside the wire's own ports was not seen at send: it is
 * recorded as it arrived, a datagram in the frame a wire would show. */
static void tap_deliver(void *arg, struct wire_port *to,
			const struct wire_rx *rx)
{
	struct tap_wire *t = arg;

	if (t->pcap && rx->from_outside && rx->bytes) {
		if (!rx->datagram) {
			record(t, rx->bytes, rx->len);
		} else {
			uint8_t frame[ROCE_FRAME_MAX];
			int n = roce_datagram_wrap(rx->f, rx->bytes, rx->len,
						   frame, sizeof(frame));
			if (n > 0)
				record(t, frame, (size_t)n);
		}
	}
	t->up(t->up_arg, to, rx);
}

static unsigned tap_receive(struct wire *w, wire_deliver_fn fn, void *arg)
{
	struct tap_wire *t = tap_of(w);

	if (!t->pcap)
		return t->inner->ops->receive(t->inner, fn, arg);
	t->up = fn;
	t->up_arg = arg;
	return t->inner->ops->receive(t->inner, tap_deliver, t);
}

static bool tap_flush(struct wire *w)
{
	struct wire *in = tap_of(w)->inner;

	return in->ops->flush(in);
}

static bool tap_busy(const struct wire *w, const struct wire_port *p)
{
	const struct wire *in = tap_of(w)->inner;

	return in->ops->busy(in, p);
}

static bool tap_next_due(const struct wire *w, uint64_t *when)
{
	const struct wire *in = tap_of(w)->inner;

	return in->ops->next_due(in, when);
}

static unsigned tap_pollfds(const struct wire *w, struct pollfd *pfd,
			    unsigned max)
{
	const struct wire *in = tap_of(w)->inner;

	return in->ops->pollfds(in, pfd, max);
}

static void tap_free(struct wire *w)
{
	struct tap_wire *t = tap_of(w);

	roce_pcap_finish(t->pcap);
	t->inner->ops->free(t->inner);
	free(t);
}

/* The capture's file is left open: nothing of it is buffered (each
 * record is written as it is made), so the child's exit writes nothing
 * into it. */
static void tap_forget(struct wire *w)
{
	struct wire *in = tap_of(w)->inner;

	in->ops->forget(in);
}

static const struct wire_ops tap_ops = {
	.attach = tap_attach, .detach = tap_detach, .send = tap_send,
	.receive = tap_receive, .flush = tap_flush, .busy = tap_busy,
	.next_due = tap_next_due, .pollfds = tap_pollfds, .free = tap_free,
	.forget = tap_forget,
};

struct wire *tap_wire_new(struct wire *inner)
{
	struct tap_wire *t = calloc(1, sizeof(*t));

	if (!t) {
		inner->ops->free(inner);
		return NULL;
	}
	t->w.ops = &tap_ops;
	t->w.core = inner->core;
	t->inner = inner;
	return &t->w;
}

int tap_wire_record(struct wire *w, const char *path)
{
	struct tap_wire *t = tap_of(w);
	char err[ROCE_PCAP_ERRLEN];

	struct wire_port *p, *tmp;
	int rc = t->pcap && roce_pcap_finish(t->pcap) ? -EIO : 0;

	t->pcap = NULL;
	if (rc == 0 && path) {
		rc = roce_pcap_create(path, &t->pcap, err);
		t->w.core->frames_recorded = 0;	/* a new capture's count */
	}
	/* Each record reaches the file as it is made: the capture is whole
	 * at every moment, also after an exit that runs no destructors (Go's
	 * os.Exit, _exit), at a write(2) a packet. */
	if (rc == 0 && t->pcap && roce_pcap_unbuffered(t->pcap)) {
		roce_pcap_finish(t->pcap);
		t->pcap = NULL;
		rc = -EIO;
	}

	HASH_ITER(hh, t->inner->ports, p, tmp)
		route_port(t, p);
	return rc;
}

void tap_wire_watch(struct wire *w, tap_watch_fn fn, void *arg)
{
	struct tap_wire *t = tap_of(w);
	struct wire_port *p, *tmp;

	t->watch = fn;
	t->watch_arg = arg;
	HASH_ITER(hh, t->inner->ports, p, tmp)
		route_port(t, p);
}

void tap_wire_flush(struct wire *w)
{
	roce_pcap_flush(tap_of(w)->pcap);
}
