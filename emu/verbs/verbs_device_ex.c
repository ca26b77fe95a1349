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

/*
 * ibv_query_rt_values_ex: the device clock as it reads now, in cycles of
 * hca_core_clock (ns), in raw_clock.tv_nsec with tv_sec 0, where mlx5
 * and mlx4 put their cycle counter. Only what was asked and is known is
 * answered; comp_mask says which.
 */
static int op_query_rt_values(struct ibv_context *context,
			      struct ibv_values_ex *values)
{
	uint32_t asked = values->comp_mask;

	if (rv_stale(context))
		return EIO;
	values->comp_mask = 0;
	if (asked & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)rocemu_world_clock(rv_world());
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}

void rv_fill_device_ex_ops(struct rv_context *ctx)
{
	ctx->vctx.query_device_ex = op_query_device_ex;
	ctx->vctx.query_rt_values = op_query_rt_values;
}
