/* SPDX-License-Identifier: MIT */
/* Address handles: a checked copy of an address vector, tied to its PD. */
#include <errno.h>
#include <stdlib.h>

#include "obj.h"

struct rocemu_ah *rocemu_ah_new(struct rocemu_pd *pd,
				const struct ibv_ah_attr *attr)
{
	CORE_GUARD(pd->dev->core);
	if (!attr->is_global || attr->port_num != 1 ||
	    !dev_gid_index_ok(pd->dev, attr->grh.sgid_index)) {
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
	CORE_GUARD(ah->pd->dev->core);
	ah->pd->users--;
	free(ah);
	return 0;
}

void rocemu_ah_query(const struct rocemu_ah *ah, struct ibv_ah_attr *attr)
{
	*attr = ah->attr;
}
