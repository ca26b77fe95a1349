/* SPDX-License-Identifier: MIT */
/* Ports in a wire's table, by GID: one hash lookup per frame routed. */
#include <string.h>

#include "wire.h"

/* uthash's default (Jenkins, byte by byte) was a tenth of a 64-byte SEND's
 * routing cost; two multiplies over the GID's two halves spread the bits
 * that differ between GIDs (the IPv4 address of a mapped one, the
 * interface ID of a link-local one) as well. */
static unsigned gid_hash(const uint8_t gid[16])
{
	uint64_t hi, lo;

	memcpy(&hi, gid, 8);
	memcpy(&lo, gid + 8, 8);
	uint64_t h = (hi ^ (lo * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return (unsigned)(h >> 32);
}

struct wire_port *wire_port_find(const struct wire *w, const uint8_t gid[16])
{
	struct wire_port *p;

	HASH_FIND_BYHASHVALUE(hh, w->ports, gid, 16, gid_hash(gid), p);
	if (!p) /* a port's link-local GID 0: few ports have one */
		for (p = w->ports; p; p = p->hh.next)
			if (p->has_ll && !memcmp(p->ll_gid, gid, 16))
				break;
	return p;
}

void wire_port_add(struct wire *w, struct wire_port *p)
{
	p->top = p->home = w;
	HASH_ADD_BYHASHVALUE(hh, w->ports, gid, 16, gid_hash(p->gid), p);
}

void wire_port_del(struct wire *w, struct wire_port *p)
{
	HASH_DELETE(hh, w->ports, p);
}
