/* SPDX-License-Identifier: MIT */
/* The emulated end of a replayed flow: a device with the captured address and QPN, an RC, UC or UD QP connected to the other end. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

enum { RP_CQE = 4096 };

enum ibv_mtu rp_mtu_enum(unsigned bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return IBV_MTU_1024;
	}
}

static enum ibv_qp_type qp_type(enum roce_flow_kind k)
{
	return k == ROCE_FLOW_UC ? IBV_QPT_UC
	       : k == ROCE_FLOW_UD ? IBV_QPT_UD : IBV_QPT_RC;
}

static int open_qp(struct rp_dev *d, const struct rp_plan *p, unsigned side,
		   struct rocemu_rc_params *cp, uint32_t max_send_wr)
{
	const struct roce_flow_end *me = &p->fl->end[side];
	const struct roce_flow_end *peer = &p->fl->end[1 - side];
	struct ibv_qp_init_attr ia = {
		.qp_type = qp_type(p->fl->kind),
		.cap = { .max_send_wr = max_send_wr, .max_recv_wr = 1024,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	d->cq = rocemu_cq_new(d->dev, RP_CQE, NULL);
	if (!d->cq)
		return -errno;
	ia.send_cq = ia.recv_cq = (struct ibv_cq *)d->cq;
	d->qp = rocemu_qp_new(d->pd, &ia);
	if (!d->qp)
		return -errno;
	if (rocemu_qp_num(d->qp) != me->qpn)
		return -EADDRINUSE;
	cp->peer_qpn = peer->qpn;
	cp->mtu = rp_mtu_enum(p->mtu_bytes);
	memcpy(cp->peer_gid, peer->gid, 16);
	cp->qkey = p->qkey;
	if (p->fl->kind == ROCE_FLOW_RC)
		return rocemu_qp_connect(d->qp, cp);
	/* UC and UD allow remote writes only (UD not even those) */
	struct rocemu_rc_params u = *cp;
	u.access = IBV_ACCESS_REMOTE_WRITE;
	return rocemu_qp_connect(d->qp, &u);
}

/*
 * cp->max_rd_atomic as the capture shows and announces it (rp_rd_atomic),
 * within what d's device takes. 0; -ERANGE, said on stderr, when the
 * capture shows more outstanding than the device takes.
 */
static int rd_atomic(struct rp_dev *d, const struct rp_plan *p,
		     struct rocemu_rc_params *cp)
{
	struct ibv_device_attr a;
	unsigned v;
	bool clamped;

	rocemu_dev_attr(d->dev, &a);
	/* cp's value is both directions': the smaller limit of the two */
	int limit = a.max_qp_rd_atom < a.max_qp_init_rd_atom
			    ? a.max_qp_rd_atom : a.max_qp_init_rd_atom;
	if (limit > UINT8_MAX)
		limit = UINT8_MAX;
	if (rp_rd_atomic(p, (unsigned)limit, &v, &clamped)) {
		fprintf(stderr, "rocemu replay: flow %u: the capture shows %s%u "
				"READs and atomics outstanding at once, rocemu's "
				"device takes at most %d (max_qp_rd_atom): not "
				"replayed\n", p->fl->id,
			p->rd_shown > RP_RD_RING ? "more than " : "",
			p->rd_shown > RP_RD_RING ? RP_RD_RING : p->rd_shown,
			limit);
		return -ERANGE;
	}
	if (clamped) {
		rp_head(stdout, p);
		printf(": the CM announced %u READs and atomics at once, "
		       "rocemu's device takes at most %d: set to %d (the "
		       "capture shows at most %u outstanding)\n",
		       p->rd_announced, limit, limit, p->rd_shown);
	}
	cp->max_rd_atomic = (uint8_t)v;
	return 0;
}

int rp_dev_open(struct rp_dev *d, const struct rp_plan *p, unsigned side,
		struct rocemu_rc_params *cp, uint32_t max_send_wr)
{
	const struct roce_flow_end *me = &p->fl->end[side];
	struct rocemu_dev_cfg cfg = { .name = "replay",
				      .mtu = rp_mtu_enum(p->mtu_bytes),
				      .first_qpn = me->qpn,
				      .min_qpn = me->qpn };

	memset(d, 0, sizeof(*d));
	if (me->qpn < RP_MIN_QPN)
		return -EPERM;
	memcpy(cfg.gid, me->gid, 16);
	d->w = rocemu_world_new(1);
	if (!d->w)
		return -ENOMEM;
	d->dev = rocemu_dev_new(d->w, &cfg);
	if (!d->dev)
		return -errno;
	d->pd = rocemu_pd_alloc(d->dev);
	if (!d->pd)
		return -errno;
	int rc = rd_atomic(d, p, cp);
	return rc ? rc : open_qp(d, p, side, cp, max_send_wr);
}

void rp_dev_close(struct rp_dev *d)
{
	if (d->w)
		rocemu_world_watch(d->w, NULL, NULL);
	if (d->qp)
		rocemu_qp_free(d->qp);
	if (d->cq)
		rocemu_cq_free(d->cq);
	if (d->pd)
		rocemu_pd_free(d->pd);
	if (d->dev)
		rocemu_dev_free(d->dev);
	if (d->w)
		rocemu_world_free(d->w);
	memset(d, 0, sizeof(*d));
}

/* Keeps each frame the emulated end sends (runs under the world's lock:
 * copies and parses only). */
static void on_frame(void *arg, const uint8_t *frame, size_t len)
{
	struct rp_collect *c = arg;
	struct rp_result *res = c->res;
	uint8_t gid[16];

	if (c->err || roce_frame_dst_gid(frame, len, gid) ||
	    !memcmp(gid, c->gid, 16))
		return;		/* what is injected travels to the end */
	struct rp_sent *v = realloc(res->sent, (res->nsent + 1) * sizeof(*v));
	uint8_t *copy = malloc(len);
	if (v)
		res->sent = v;
	if (!v || !copy) {
		free(copy);
		c->err = -ENOMEM;
		return;
	}
	struct rp_sent *s = &v[res->nsent];
	const char *why;
	memcpy(copy, frame, len);
	s->data = copy;
	s->len = (uint32_t)len;
	s->after = c->after;
	s->ts_ns = c->ts_ns;
	if (roce_frame_parse(ROCE_LINK_ETH, copy, len, len, &s->f, &why) &&
	    !s->f.ib.op) {
		free(copy);
		return;
	}
	res->nsent++;
}

void rp_collect_start(struct rp_collect *c, struct rp_dev *d,
		      struct rp_result *res)
{
	c->res = res;
	c->gid = rocemu_dev_gid(d->dev);
	c->err = 0;
	rocemu_world_watch(d->w, on_frame, c);
}
