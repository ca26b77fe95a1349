/* SPDX-License-Identifier: MIT */
/* InfiniBand transport headers carried by RoCEv2: BTH and the extension headers. */
#ifndef ROCEMU_IBHDR_H
#define ROCEMU_IBHDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sizes on the wire, IBTA 1.4 chapter 9.2 and 9.3, and 1.5 for FETH. */
enum {
	ROCE_BTH_LEN = 12,
	ROCE_RDETH_LEN = 4,
	ROCE_DETH_LEN = 8,
	ROCE_RETH_LEN = 16,
	ROCE_ATMETH_LEN = 28,
	ROCE_AETH_LEN = 4,
	ROCE_ATMACK_LEN = 8,
	ROCE_IMMDT_LEN = 4,
	ROCE_IETH_LEN = 4,
	ROCE_FETH_LEN = 4,
	ROCE_CNP_RSVD_LEN = 16,
	ROCE_ICRC_LEN = 4,
	ROCE_UDP_PORT = 4791,
};

/* Base Transport Header, every field decoded (IBTA 9.2). */
struct roce_bth {
	uint8_t opcode;
	bool se;	/* solicited event */
	bool migreq;
	uint8_t pad;	/* pad count, 0..3 */
	uint8_t tver;	/* transport header version, 0 */
	uint16_t pkey;
	bool fecn;
	bool becn;
	uint8_t resv6;	/* 6 reserved bits after FECN/BECN */
	uint32_t dqpn;	/* 24 bits */
	bool ackreq;
	uint8_t resv7;	/* 7 reserved bits after AckReq */
	uint32_t psn;	/* 24 bits */
};

/* RDMA Extended Transport Header (9.3.3). */
struct roce_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

/* ACK Extended Transport Header (9.3.5): syndrome and 24-bit MSN. */
struct roce_aeth {
	uint8_t syndrome;
	uint32_t msn;
};

/* Atomic Extended Transport Header (9.3.4). */
struct roce_atmeth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
};

/* Datagram Extended Transport Header (9.3.2). */
struct roce_deth {
	uint32_t qkey;
	uint8_t resv;
	uint32_t src_qp;	/* 24 bits */
};

/* Reliable Datagram Extended Transport Header (9.3.1), decoded only. */
struct roce_rdeth {
	uint8_t resv;
	uint32_t een;	/* 24-bit EE context */
};

/*
 * Each reader checks that len covers the header and returns -EBADMSG if it
 * does not; each writer returns the header size, or -ENOSPC if cap is too
 * small, and writes nothing then.
 */
int roce_bth_get(const uint8_t *p, size_t len, struct roce_bth *h);
int roce_bth_put(uint8_t *p, size_t cap, const struct roce_bth *h);
int roce_reth_get(const uint8_t *p, size_t len, struct roce_reth *h);
int roce_reth_put(uint8_t *p, size_t cap, const struct roce_reth *h);
int roce_aeth_get(const uint8_t *p, size_t len, struct roce_aeth *h);
int roce_aeth_put(uint8_t *p, size_t cap, const struct roce_aeth *h);
int roce_atmeth_get(const uint8_t *p, size_t len, struct roce_atmeth *h);
int roce_atmeth_put(uint8_t *p, size_t cap, const struct roce_atmeth *h);
int roce_deth_get(const uint8_t *p, size_t len, struct roce_deth *h);
int roce_deth_put(uint8_t *p, size_t cap, const struct roce_deth *h);
int roce_rdeth_get(const uint8_t *p, size_t len, struct roce_rdeth *h);
int roce_rdeth_put(uint8_t *p, size_t cap, const struct roce_rdeth *h);
/* AtomicAckETH, ImmDt, IETH and FETH are one number each. */
int roce_u64_get(const uint8_t *p, size_t len, uint64_t *v);
int roce_u64_put(uint8_t *p, size_t cap, uint64_t v);
int roce_u32_get(const uint8_t *p, size_t len, uint32_t *v);
int roce_u32_put(uint8_t *p, size_t cap, uint32_t v);

#endif
