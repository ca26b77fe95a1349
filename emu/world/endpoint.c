/* SPDX-License-Identifier: MIT */
/* Endpoints: a device, PD, CQ, registered buffer and QP made and freed together. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/device.h"

enum {
	EVERY_ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
};

int rocemu_endpoint_new(struct rocemu_world *w, const struct rocemu_dev_cfg *cfg,
			enum ibv_qp_type type, size_t len, uint32_t depth,
			struct rocemu_endpoint *ep)
{
	struct rocemu_endpoint_attr a = { .type = type, .len = len,
					  .depth = depth, .max_inline = 64 };

	return rocemu_endpoint_new_attr(w, cfg, &a, ep);
}

/* The SRQ when a asks for one; true when it is there or not wanted. */
static bool make_srq(struct rocemu_endpoint *ep,
		     const struct rocemu_endpoint_attr *a)
{
	struct ibv_srq_init_attr sa = { .attr = { a->depth, 1, 0 } };

	if (!a->srq)
		return true;
	ep->srq = rocemu_srq_new(ep->pd, &sa);
	return ep->srq != NULL;
}

int rocemu_endpoint_new_attr(struct rocemu_world *w,
			     const struct rocemu_dev_cfg *cfg,
			     const struct rocemu_endpoint_attr *a,
			     struct rocemu_endpoint *ep)
{
	struct ibv_qp_init_attr init = {
		.qp_type = a->type,
		.cap = { a->depth, a->depth, 1, 1, a->max_inline },
	};

	memset(ep, 0, sizeof(*ep));
	ep->dev = rocemu_dev_new(w, cfg);
	if (!ep->dev)
		return -(errno ? errno : EINVAL);
	ep->len = a->len;
	ep->buf = calloc(1, a->len ? a->len : 1);
	ep->pd = rocemu_pd_alloc(ep->dev);
	ep->ch = ep->pd && a->channel ? rocemu_channel_new(ep->dev) : NULL;
	ep->cq = ep->pd && (ep->ch || !a->channel)
			 ? rocemu_cq_new(ep->dev, (int)(2 * a->depth), ep->ch)
			 : NULL;
	ep->mr = ep->cq && ep->buf ? rocemu_mr_reg(ep->pd, ep->buf, a->len,
						   EVERY_ACCESS)
				   : NULL;
	init.send_cq = init.recv_cq = (struct ibv_cq *)(void *)ep->cq;
	if (ep->mr && make_srq(ep, a)) {
		init.srq = (struct ibv_srq *)(void *)ep->srq;
		ep->qp = rocemu_qp_new(ep->pd, &init);
	}
	if (!ep->qp) {
		int e = errno ? errno : ENOMEM;
		rocemu_endpoint_free(ep);
		return -e;
	}
	return 0;
}

void rocemu_endpoint_free(struct rocemu_endpoint *ep)
{
	if (ep->qp)
		rocemu_qp_free(ep->qp);
	if (ep->srq)
		rocemu_srq_free(ep->srq);
	if (ep->mr)
		rocemu_mr_dereg(ep->mr);
	if (ep->cq)
		rocemu_cq_free(ep->cq);
	if (ep->ch)
		rocemu_channel_free(ep->ch);
	if (ep->pd)
		rocemu_pd_free(ep->pd);
	if (ep->dev)
		rocemu_dev_free(ep->dev);
	free(ep->buf);
	memset(ep, 0, sizeof(*ep));
}
