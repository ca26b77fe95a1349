/* SPDX-License-Identifier: MIT */
/* CM MADs written out byte by byte from the IBTA's field offsets: the codec's known answers. */
#ifndef ROCEMU_TESTS_CM_KNOWN_H
#define ROCEMU_TESTS_CM_KNOWN_H

#include <stdint.h>

/*
 * Each image is a whole 256-byte MAD. Indexes are MAD offsets: the CM
 * tables' attribute offsets plus 24 for the common header. Every byte
 * not listed is zero, reserved bits included. The values are the ones
 * check_cm.c expects field by field; they were not produced by the
 * encoder.
 */

/* The common header: base version 1, class CM, version 2, Send. */
#define KA_HDR(attr, t0, t1, t2, t3, t4, t5, t6, t7)                        \
	[0] = 0x01, [1] = 0x07, [2] = 0x02, [3] = 0x03,                      \
	[8] = t0, t1, t2, t3, t4, t5, t6, t7, [16] = 0x00, [17] = attr

/* REQ: RC, TCP port 20001, 10.0.0.1:50000 -> 10.0.0.2, as rdma_cm sends. */
static const uint8_t ka_req[256] = {
	KA_HDR(0x10, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0),
	[24] = 0xde, 0xad, 0xbe, 0xef,		/* local comm ID */
	[29] = 0x00, 0x02, 0xc9,		/* ECE vendor ID, byte 4 rsvd */
	[32] = 0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x4e, 0x21, /* service ID */
	[40] = 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* CA GUID */
	[52] = 0x00, 0x00, 0x00, 0x00,		/* local Q_Key (RC) */
	[56] = 0x00, 0x01, 0x23, 0x10,		/* QPN 0x123, resp. res. 16 */
	[60] = 0x00, 0x00, 0x00, 0x08,		/* EECN 0, initiator depth 8 */
	[64] = 0x00, 0x00, 0x00, 0xa1,		/* rem. timeout 20, RC, e2e 1 */
	[68] = 0xab, 0xcd, 0xef, 0xa7,		/* PSN, loc. timeout 20, retry 7 */
	[72] = 0xff, 0xff,			/* P_Key */
	[74] = 0x37,				/* MTU 1024 (3), RDC 0, RNR 7 */
	[75] = 0xf8,				/* max CM retries 15, SRQ 1 */
	/* primary path at attribute offset 52 */
	[76] = 0xff, 0xff, 0xff, 0xff,		/* local and remote LID */
	[90] = 0xff, 0xff, 10, 0, 0, 1,		/* local GID ::ffff:10.0.0.1 */
	[106] = 0xff, 0xff, 10, 0, 0, 2,	/* remote GID ::ffff:10.0.0.2 */
	[112] = 0x12, 0x34, 0x50, 0x07,		/* flow label 0x12345, rate 7 */
	[116] = 0x68, 0x40,			/* traffic class, hop limit 64 */
	[118] = 0x58,				/* SL 5, subnet local */
	[119] = 0x90,				/* local ACK timeout 18 */
	/* alternate path 120..163 all zero; private data at 164 */
	[164] = 0x00, 0x40, 0xc3, 0x50,		/* A11: version 0, IPv4, port */
	[180] = 10, 0, 0, 1,			/* source 10.0.0.1 */
	[196] = 10, 0, 0, 2,			/* destination 10.0.0.2 */
	[200] = 'h', 'i',			/* the user's private data */
	[255] = 0x5a,				/* the last private byte */
};

/* REP answering ka_req (its TID echoed). */
static const uint8_t ka_rep[256] = {
	KA_HDR(0x13, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0),
	[24] = 0x11, 0x22, 0x33, 0x44,		/* local comm ID */
	[28] = 0xde, 0xad, 0xbe, 0xef,		/* remote comm ID */
	[32] = 0x01, 0x23, 0x45, 0x67,		/* local Q_Key */
	[36] = 0x00, 0x04, 0x56, 0x00,		/* QPN 0x456, vendor ID high */
	[40] = 0x00, 0x00, 0x00, 0x02,		/* EECN 0, vendor ID middle */
	[44] = 0x12, 0x34, 0x56, 0xc9,		/* PSN 0x123456, vendor low */
	[48] = 0x10, 0x04,			/* resp. res. 16, init. depth 4 */
	[50] = 0x7b,		/* ACK delay 15, failover 1, e2e 1 */
	[51] = 0xf0,		/* RNR retry 7, SRQ 1 */
	[52] = 0x02, 0x02, 0xc0, 0xff, 0xfe, 0x00, 0x00, 0x02, /* CA GUID */
	[60] = 'o', 'k',			/* private data, 196 bytes */
	[255] = 0xa5,
};

/* REJ of a REP, consumer defined, with 4 bytes of ARI. */
static const uint8_t ka_rej[256] = {
	KA_HDR(0x12, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x2a),
	[24] = 0x11, 0x22, 0x33, 0x44,		/* local comm ID */
	[28] = 0xde, 0xad, 0xbe, 0xef,		/* remote comm ID */
	[32] = 0x40,				/* message rejected: REP */
	[33] = 0x08,				/* ARI length 4 */
	[34] = 0x00, 0x1c,			/* reason 28 */
	[36] = 0xa1, 0xa2, 0xa3, 0xa4,		/* ARI (72 bytes) */
	[107] = 0xee,				/* the ARI's last byte */
	[108] = 0x55, 0x66,			/* private data, 148 bytes */
};

/* DREQ carrying the peer's QPN. */
static const uint8_t ka_dreq[256] = {
	KA_HDR(0x15, 0x00, 0x00, 0x00, 0x02, 0xde, 0xad, 0xbe, 0xef),
	[20] = 0x00, 0x00, 0x00, 0x00,		/* attribute modifier */
	[24] = 0xde, 0xad, 0xbe, 0xef,		/* local comm ID */
	[28] = 0x11, 0x22, 0x33, 0x44,		/* remote comm ID */
	[32] = 0x00, 0x04, 0x56,		/* remote QPN 0x456 */
	[36] = 0x99,				/* private data, 220 bytes */
};

/* SIDR_REQ for UDP port 4791 from fd00::1:0x1234 to fd00::2. */
static const uint8_t ka_sidr_req[256] = {
	KA_HDR(0x17, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10),
	[20] = 0x00, 0x00, 0x00, 0x07,		/* attribute modifier 7 */
	[24] = 0xca, 0xfe, 0xf0, 0x0d,		/* request ID */
	[28] = 0x80, 0x01,			/* P_Key 0x8001 */
	[32] = 0x00, 0x00, 0x00, 0x00, 0x01, 0x11, 0x12, 0xb7, /* service ID */
	[40] = 0x00, 0x60, 0x12, 0x34,		/* A11: version 0, IPv6, port */
	[44] = 0xfd, [59] = 0x01,		/* source fd00::1 */
	[60] = 0xfd, [75] = 0x02,		/* destination fd00::2 */
	[76] = 0x42,				/* the user's private data */
};

#endif
