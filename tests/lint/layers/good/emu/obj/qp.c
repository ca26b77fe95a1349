/* SPDX-License-Identifier: MIT */
/* Fixture: bytes, masks and ranges that are no opcodes; opcode 0x0c named
 * in a comment only. */
#include "qp.h"
#include "core/heap.h"
#include "rocemu/device.h"
struct qp { unsigned char mac[6]; unsigned pkey, psn, qpn, qkey; };
void qp_init(struct qp *qp, unsigned psn)
{
	const char *what = "opcode 0x0c";
	qp->mac[0] = 0x02;
	qp->pkey = 0xffff & 0x7fff;
	qp->psn = psn & 0xffffff;
	qp->qpn = 0x11;
	qp->qkey = 0x80000000u;
	(void)what; (void)'\x0c';
}
