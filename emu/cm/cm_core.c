/* SPDX-License-Identifier: MIT */
/* The CM of a device: made with it, its ids, what it sends, its timers and its events. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cm_local.h"
#include "wire/wire.h"

static const struct gsi_ops cm_gsi_ops = {
	.receive = cm_receive,
	.comm_est = cm_comm_est,
};

/* splitmix64's finaliser: a well-mixed 64-bit number from any input. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The n-th random 32-bit number of d's CM. On a virtual clock it comes
 * from the world's seeded state and d's address, without drawing from
 * the world's sequence (which would move every key and PSN a seeded
 * world hands out after it): a test repeats. Otherwise from the system
 * (a new run is new to a peer that still remembers the last one).
 */
static uint32_t cm_random(const struct rocemu_dev *d, unsigned n)
{
	uint64_t h = d->core->rng + n;
	uint32_t r;

	if (d->core->real_time &&
	    getrandom(&r, sizeof(r), 0) == (ssize_t)sizeof(r))
		return r;
	for (int i = 0; i < 16; i++)
		h = mix64(h ^ d->gid[i]);
	return (uint32_t)(h >> 32);
}

int cm_attach(struct rocemu_dev *d)
{
	struct cm *cm = calloc(1, sizeof(*cm));

	if (!cm)
		return -ENOMEM;
	cm->d = d;
	cm->next_comm_id = cm_random(d, 0);
	cm->slot = d->port ? d->port->slot : 0;
	cm->tid_hi = cm_random(d, 1);
	/* The node GUID (rocemu_dev_attr): the MAC in its first bytes. */
	for (int i = 0; i < 6; i++)
		cm->guid |= (uint64_t)d->mac[i] << (56 - 8 * i);
	d->gsi_ops = &cm_gsi_ops;
	d->gsi_user = cm;
	return 0;
}

void cm_detach(struct rocemu_dev *d)
{
	struct cm *cm = d->gsi_user;

	if (!cm)
		return;
	while (cm->ids)
		cm_id_destroy(cm->ids);
	d->gsi_ops = NULL;
	d->gsi_user = NULL;
	free(cm);
}

uint64_t cm_time_ns(unsigned t)
{
	return 4096ull << (t > 31 ? 31 : t);
}

uint64_t cm_new_tid(struct cm *cm)
{
	return (uint64_t)cm->tid_hi << 32 | ++cm->tid_lo;
}

struct rocemu_cm_id *cm_id_alloc(struct cm *cm, rocemu_cm_handler fn,
				 void *user)
{
	struct rocemu_cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->cm = cm;
	id->fn = fn;
	id->user = user;
	id->timer = (struct sched_timer){ .owner = id, .kind = TIMER_CM };
	/* The slot in the top byte: a reply to this id comes back to this
	 * process among those sharing the address (docs/sharing.md); 0 is
	 * no comm ID (a REJ of an unknown REQ carries it). */
	do
		id->local_id = (uint32_t)cm->slot << 24 |
			       (cm->next_comm_id++ & 0xffffff);
	while (!id->local_id || !(id->local_id & 0xffffff));
	id->next = cm->ids;
	cm->ids = id;
	return id;
}

void cm_id_destroy(struct rocemu_cm_id *id)
{
	struct rocemu_cm_id **p = &id->cm->ids;

	while (*p && *p != id)
		p = &(*p)->next;
	if (*p)
		*p = id->next;
	sched_timer_cancel(&id->timer);
	if (id->state == CM_LISTEN && id->mask == ~0ull)
		wire_unclaim(id->cm->d->port, id->service_id);
	sched_timer_forget(&id->cm->d->core->sched, &id->timer);
	free(id);
}

void cm_send_to(struct cm *cm, const uint8_t gid[16], uint8_t tclass,
		const struct roce_cm_msg *m)
{
	uint8_t mad[ROCE_MAD_LEN];

	if (roce_cm_encode(m, mad) != ROCE_MAD_LEN)
		return;
	if (gsi_send(cm->d, gid, tclass, mad) == 0)
		dev_count(cm->d, ROCEMU_CNT_CM_TX_MSGS);
	core_trace(cm->d->core, "%s cm > %s", cm->d->name,
		   roce_cm_attr_name(m->attr_id));
}

int cm_send(struct rocemu_cm_id *id, struct roce_cm_msg *m, bool keep)
{
	uint8_t mad[ROCE_MAD_LEN];
	struct cm *cm = id->cm;

	m->tid = id->tid;
	if (roce_cm_encode(m, mad) != ROCE_MAD_LEN)
		return -EINVAL;
	int rc = gsi_send(cm->d, id->peer_gid, id->tclass, mad);
	if (rc)
		return rc;
	/* On the wire before the call returns, as a kernel's CM sends it: a
	 * program may leave by _exit() right after rdma_disconnect (Python's
	 * forked processes do), and the DREQ must not die with it. */
	if (cm->d->port)
		wire_port_flush(cm->d->port);
	dev_count(cm->d, ROCEMU_CNT_CM_TX_MSGS);
	core_trace(cm->d->core, "%s cm > %s", cm->d->name,
		   roce_cm_attr_name(m->attr_id));
	if (keep) {
		memcpy(id->out, mad, ROCE_MAD_LEN);
		id->have_out = true;
		id->retries_left = id->max_cm_retries;
		cm_arm(id, id->timeout_ns);
	}
	return 0;
}

void cm_resend(struct rocemu_cm_id *id)
{
	struct cm *cm = id->cm;

	if (id->have_out &&
	    gsi_send(cm->d, id->peer_gid, id->tclass, id->out) == 0)
		dev_count(cm->d, ROCEMU_CNT_CM_TX_MSGS);
}

void cm_arm(struct rocemu_cm_id *id, uint64_t ns)
{
	struct core *c = id->cm->d->core;

	sched_timer_arm(&c->sched, &id->timer, c->now + ns);
	/* Armed from a call outside a world pass: a progress thread
	 * waiting for the next timer must look again. */
	sched_kick(&c->sched);
}

void cm_disarm(struct rocemu_cm_id *id)
{
	sched_timer_cancel(&id->timer);
}

void cm_enter_timewait(struct rocemu_cm_id *id)
{
	id->state = CM_TIMEWAIT;
	id->have_out = false; /* a duplicate DREQ gets a DREP made anew */
	/* IBTA 12.9.8.2: timewait lasts the packet life time (Linux: its
	 * av.timeout, packet life time + 1). */
	cm_arm(id, cm_time_ns(id->packet_life_time + 1u));
}

void cm_event(struct rocemu_cm_id *id, enum rocemu_cm_event_type type,
	      int status, const struct cm_cause *c,
	      struct rocemu_cm_id *listen_id)
{
	struct rocemu_cm_event ev = { .type = type, .id = id,
				      .listen_id = listen_id,
				      .status = status };
	struct rocemu_cm_id *to = listen_id ? listen_id : id;

	if (to->freed || !to->fn)
		return;
	if (c && c->msg)
		ev.msg = *c->msg;
	if (c && c->from) {
		memcpy(ev.peer_gid, c->from->src_gid, 16);
		ev.hop_limit = c->from->hop_limit;
		ev.traffic_class = c->from->traffic_class;
	}
	to->fn(to->user, &ev);
}

/* The timer of an id that waits for an answer: send again while retries
 * are left, else give up as the state says. */
static void retry_or_give_up(struct rocemu_cm_id *id)
{
	struct cm *cm = id->cm;

	if (id->retries_left) {
		id->retries_left--;
		dev_count(cm->d, ROCEMU_CNT_CM_TX_RETRIES);
		cm_resend(id);
		cm_arm(id, id->timeout_ns);
		return;
	}
	core_trace(cm->d->core, "%s cm id %08x: no answer in %s", cm->d->name,
		   id->local_id, rocemu_cm_id_state(id));
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		id->state = CM_IDLE;
		cm_event(id, ROCEMU_CM_REQ_ERROR, 0, NULL, NULL);
		break;
	case CM_REP_SENT:
	case CM_MRA_REP_RCVD:
		id->state = CM_IDLE;
		cm_event(id, ROCEMU_CM_REP_ERROR, 0, NULL, NULL);
		break;
	case CM_DREQ_SENT:
		cm_enter_timewait(id);
		cm_event(id, ROCEMU_CM_DREQ_ERROR, 0, NULL, NULL);
		break;
	case CM_SIDR_REQ_SENT:
		id->state = CM_IDLE;
		cm_event(id, ROCEMU_CM_SIDR_REQ_ERROR, 0, NULL, NULL);
		break;
	default:
		break;
	}
	if (id->freed && id->state == CM_IDLE)
		cm_id_destroy(id);
}

void cm_timer(void *owner)
{
	struct rocemu_cm_id *id = owner;

	if (id->state != CM_TIMEWAIT) {
		retry_or_give_up(id);
		return;
	}
	id->state = CM_IDLE;
	id->have_out = false;
	if (id->freed) {
		cm_id_destroy(id);
		return;
	}
	cm_event(id, ROCEMU_CM_TIMEWAIT_EXIT, 0, NULL, NULL);
}

static const char *const state_names[CM_STATE_COUNT] = {
	[CM_IDLE] = "idle",
	[CM_LISTEN] = "listen",
	[CM_REQ_SENT] = "req_sent",
	[CM_MRA_REQ_RCVD] = "mra_req_rcvd",
	[CM_REQ_RCVD] = "req_rcvd",
	[CM_MRA_REQ_SENT] = "mra_req_sent",
	[CM_REP_SENT] = "rep_sent",
	[CM_MRA_REP_RCVD] = "mra_rep_rcvd",
	[CM_REP_RCVD] = "rep_rcvd",
	[CM_ESTABLISHED] = "established",
	[CM_DREQ_SENT] = "dreq_sent",
	[CM_DREQ_RCVD] = "dreq_rcvd",
	[CM_TIMEWAIT] = "timewait",
	[CM_SIDR_REQ_SENT] = "sidr_req_sent",
	[CM_SIDR_REQ_RCVD] = "sidr_req_rcvd",
};

const char *rocemu_cm_id_state(const struct rocemu_cm_id *id)
{
	if (!id)
		return "?";
	CORE_GUARD(id->cm->d->core);
	return id->state < CM_STATE_COUNT ? state_names[id->state] : "?";
}
