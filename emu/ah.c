/* SPDX-License-Identifier: MIT */
/* Address handles: a checked copy of an address vector, tied to its PD. */
#include <errno.h>
#include <stdlib.h>

#include "local.h"

struct rocemu_ah *rocemu_ah_new(struct rocemu_pd *pd,
				const struct ibv_ah_attr *attr)
{
	WORLD_GUARD(pd->dev->w);
	if (!attr->is_global || attr->port_num != 1 ||
	    attr->grh.sgid_index > 1) {
		errno = EINVAL;
		return NULL;
	}
	struct rocemu_ah *ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->pd = pd;
	ah->attr = *attr;
	pd->users++;
	return ah;
}

int rocemu_ah_free(struct rocemu_ah *ah)
{
	WORLD_GUARD(ah->pd->dev->w);
	ah->pd->users--;
	free(ah);
	return 0;
}

void rocemu_ah_query(const struct rocemu_ah *ah, struct ibv_ah_attr *attr)
{
	*attr = ah->attr;
}
