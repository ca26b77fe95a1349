/* SPDX-License-Identifier: MIT */
/* Endpoints: a device, PD, CQ, registered buffer and QP made and freed together. */
#include <errno.h>
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
	struct ibv_qp_init_attr init = { .qp_type = type,
					 .cap = { depth, depth, 1, 1, 64 } };

	memset(ep, 0, sizeof(*ep));
	ep->dev = rocemu_dev_new(w, cfg);
	if (!ep->dev)
		return -(errno ? errno : EINVAL);
	ep->len = len;
	ep->buf = calloc(1, len ? len : 1);
	ep->pd = rocemu_pd_alloc(ep->dev);
	ep->cq = ep->pd ? rocemu_cq_new(ep->dev, (int)(2 * depth), NULL) : NULL;
	ep->mr = ep->cq && ep->buf ? rocemu_mr_reg(ep->pd, ep->buf, len,
						   EVERY_ACCESS)
				   : NULL;
	init.send_cq = init.recv_cq = (struct ibv_cq *)(void *)ep->cq;
	ep->qp = ep->mr ? rocemu_qp_new(ep->pd, &init) : NULL;
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
	if (ep->mr)
		rocemu_mr_dereg(ep->mr);
	if (ep->cq)
		rocemu_cq_free(ep->cq);
	if (ep->pd)
		rocemu_pd_free(ep->pd);
	if (ep->dev)
		rocemu_dev_free(ep->dev);
	free(ep->buf);
	memset(ep, 0, sizeof(*ep));
}
