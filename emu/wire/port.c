/* SPDX-License-Identifier: MIT */
/* Ports in a wire's table, by GID: one hash lookup per frame routed. */
#include "wire.h"

struct wire_port *wire_port_find(const struct wire *w, const uint8_t gid[16])
{
	struct wire_port *p;

	HASH_FIND(hh, w->ports, gid, 16, p);
	return p;
}

void wire_port_add(struct wire *w, struct wire_port *p)
{
	p->top = p->home = w;
	HASH_ADD(hh, w->ports, gid, 16, p);
}

void wire_port_del(struct wire *w, struct wire_port *p)
{
	HASH_DELETE(hh, w->ports, p);
}
