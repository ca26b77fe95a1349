/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1: ibv_query_device_ex, the device's extended attributes. */
#include <errno.h>
#include <string.h>

#include "verbs_local.h"

/*
 * The header's inline ibv_query_device_ex calls this with the size of the
 * structure the program was built with: older programs pass less, and
 * only that much is written. An input with a comp_mask asks for something
 * rocemu does not know: EINVAL, as rdma-core answers it. The answer is
 * the context's copy, as for ibv_query_device, so a forked child gets it
 * on an inherited context too.
 */
static int op_query_device_ex(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	const struct ibv_device_attr_ex *a = rv_context_attr(context);

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a->orig_attr))
		return EINVAL;
	memcpy(attr, a, attr_size < sizeof(*a) ? attr_size : sizeof(*a));
	return 0;
}

void rv_fill_device_ex_ops(struct rv_context *ctx)
{
	ctx->vctx.query_device_ex = op_query_device_ex;
}
