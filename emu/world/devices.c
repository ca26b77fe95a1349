/* SPDX-License-Identifier: MIT */
/* Devices in a world: made, attached to its wire and found by GID; detached and freed. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

struct rocemu_dev *rocemu_dev_new(struct rocemu_world *w,
				  const struct rocemu_dev_cfg *cfg)
{
	WORLD_GUARD(w);
	struct rocemu_dev *d;
	int rc;

	HASH_FIND(hh, w->devs, cfg->gid, 16, d);
	if (d)
		return NULL; /* one device per address */
	d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	rc = dev_init(d, &w->core, cfg);
	if (rc == 0) {
		rc = w->wire->ops->attach(w->wire, d->gid, &d->port);
		if (rc == 0 && (rc = cm_attach(d)))
			w->wire->ops->detach(w->wire, d->port);
		if (rc)
			dev_fini(d);
	}
	if (rc) {
		free(d);
		errno = -rc;
		return NULL;
	}
	d->port->up = d;
	d->port->send_err = &d->cnt[ROCEMU_CNT_SEND_ERR];
	d->port->qpn_lo = d->qpns.lo;
	d->port->qpn_hi = d->qpns.hi;
	if (w->base->ops->claim) /* a wire other processes share */
		dev_qpn_slot(d, d->port->slot, &d->port->qpn_lo,
			     &d->port->qpn_hi);
	memcpy(d->port->mac, d->mac, 6);
	if (d->port->has_ll) { /* GID 0 is the interface's, as on rxe */
		memcpy(d->gid_ll, d->port->ll_gid, 16);
		d->ll_routed = true;
	}
	HASH_ADD(hh, w->devs, gid, 16, d);
	return d;
}

/* The world a device is in: the lock it shares is the world's core. */
static struct rocemu_world *world_of(const struct rocemu_dev *d)
{
	return (struct rocemu_world *)((char *)d->core -
				       offsetof(struct rocemu_world, core));
}

void rocemu_dev_free(struct rocemu_dev *d)
{
	if (!d)
		return;
	struct rocemu_world *w = world_of(d);
	WORLD_GUARD(w); /* the progress thread walks the device table */
	HASH_DELETE(hh, w->devs, d);
	cm_detach(d);
	w->wire->ops->detach(w->wire, d->port);
	dev_fini(d);
	free(d);
}
