// SPDX-License-Identifier: MIT
/*
 * The small conversions libibverbs offers besides the device: names of
 * statuses, events and states, link rates; and the calls for features
 * rocemu does not have, which answer with the errno their man pages give
 * instead of being missing symbols.
 */
#include "verbs_local.h"

#include <errno.h>

/* The header turns these calls into inline wrappers; here are the symbols. */
#undef ibv_reg_mr_iova
#undef ibv_reg_mr_iova2

/* The names are rdma-core's own words: programs print them, and scripts and
 * users compare that output with what they see on other devices. */
#define NAME_OF(table, i)                                                  \
	((unsigned)(i) < sizeof(table) / sizeof(table[0]) && table[i] ? \
		 table[i] : "unknown")

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const s[] = {
		"success", "local length error", "local QP operation error",
		"local EE context operation error", "local protection error",
		"Work Request Flushed Error", "memory management operation error",
		"bad response error", "local access error",
		"remote invalid request error", "remote access error",
		"remote operation error", "transport retry counter exceeded",
		"RNR retry counter exceeded", "local RDD violation error",
		"remote invalid RD request", "aborted error",
		"invalid EE context number", "invalid EE context state",
		"fatal error", "response timeout error", "general error",
		"TM error", "TM software rendezvous",
	};

	return NAME_OF(s, status);
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const s[] = {
		"CQ error", "local work queue catastrophic error",
		"invalid request local work queue error",
		"local access violation work queue error", "communication established",
		"send queue drained", "path migrated", "path migration request error",
		"local catastrophic error", "port active", "port error",
		"LID change", "P_Key change", "SM change", "SRQ catastrophic error",
		"SRQ limit reached", "last WQE reached", "client reregistration",
		"GID table change", "WQ fatal",
	};

	return NAME_OF(s, event);
}

const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC", [IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return NAME_OF(s, t);
}

const char *ibv_port_state_str(enum ibv_port_state state)
{
	static const char *const s[] = {
		"no state change (NOP)", "down", "init", "armed", "active",
		"active defer",
	};

	return NAME_OF(s, state);
}

/* Data rate in Mb/s of each enum ibv_rate, indexed by its value; the newer
 * rates count their 64b/66b encoding, as rdma-core reports them. */
static const int rate_mbps[] = {
	[IBV_RATE_2_5_GBPS] = 2500,	[IBV_RATE_5_GBPS] = 5000,
	[IBV_RATE_10_GBPS] = 10000,	[IBV_RATE_20_GBPS] = 20000,
	[IBV_RATE_30_GBPS] = 30000,	[IBV_RATE_40_GBPS] = 40000,
	[IBV_RATE_60_GBPS] = 60000,	[IBV_RATE_80_GBPS] = 80000,
	[IBV_RATE_120_GBPS] = 120000,	[IBV_RATE_14_GBPS] = 14062,
	[IBV_RATE_56_GBPS] = 56250,	[IBV_RATE_112_GBPS] = 112500,
	[IBV_RATE_168_GBPS] = 168750,	[IBV_RATE_25_GBPS] = 25781,
	[IBV_RATE_100_GBPS] = 103125,	[IBV_RATE_200_GBPS] = 206250,
	[IBV_RATE_300_GBPS] = 309375,	[IBV_RATE_28_GBPS] = 28125,
	[IBV_RATE_50_GBPS] = 53125,	[IBV_RATE_400_GBPS] = 425000,
	[IBV_RATE_600_GBPS] = 637500,	[IBV_RATE_800_GBPS] = 850000,
	[IBV_RATE_1200_GBPS] = 1275000,
};

/* Multiples of 2.5 Gb/s of the nominal rate; rdma-core gives none for the
 * FDR and EDR rates, whose nominal figures are not such multiples either. */
static const int rate_mult[] = {
	[IBV_RATE_2_5_GBPS] = 1,	[IBV_RATE_5_GBPS] = 2,
	[IBV_RATE_10_GBPS] = 4,		[IBV_RATE_20_GBPS] = 8,
	[IBV_RATE_30_GBPS] = 12,	[IBV_RATE_40_GBPS] = 16,
	[IBV_RATE_60_GBPS] = 24,	[IBV_RATE_80_GBPS] = 32,
	[IBV_RATE_120_GBPS] = 48,	[IBV_RATE_28_GBPS] = 11,
	[IBV_RATE_50_GBPS] = 20,	[IBV_RATE_400_GBPS] = 160,
	[IBV_RATE_600_GBPS] = 240,	[IBV_RATE_800_GBPS] = 320,
	[IBV_RATE_1200_GBPS] = 480,
};

/* table[rate] if the rate has an entry there, else -1. */
static int rate_lookup(const int *table, int n, int rate)
{
	return rate > 0 && rate < n && table[rate] ? table[rate] : -1;
}

/* The rate whose table entry is @v, else IBV_RATE_MAX. */
static enum ibv_rate rate_find(const int *table, int n, int v)
{
	for (int r = 1; r < n; r++)
		if (table[r] && table[r] == v)
			return (enum ibv_rate)r;
	return IBV_RATE_MAX;
}

#define N_OF(t) ((int)(sizeof(t) / sizeof(t[0])))

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	return rate_lookup(rate_mbps, N_OF(rate_mbps), (int)rate);
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	return rate_find(rate_mbps, N_OF(rate_mbps), mbps);
}

int ibv_rate_to_mult(enum ibv_rate rate)
{
	return rate_lookup(rate_mult, N_OF(rate_mult), (int)rate);
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	return rate_find(rate_mult, N_OF(rate_mult), mult);
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED; /* nothing is pinned, fork is always safe */
}

/* Every rocemu QP places data in PSN order, for every operation. */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			       uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 1;
}

/* Provider libraries register here when loaded; rocemu serves its own
 * device and has no use for them. */
void ibv_register_driver(const char *name, void *init_func);
void ibv_register_driver(const char *name, void *init_func)
{
	(void)name, (void)init_func;
}

static void *no_such(int err)
{
	errno = err;
	return NULL;
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				 size_t length, uint64_t iova, int fd,
				 int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	return no_such(EOPNOTSUPP); /* no device memory to share a buffer with */
}

/* Sharing objects between processes needs a kernel device file. (DMs
 * import within the process: verbs_dm.c.) */
struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	return no_such(EOPNOTSUPP);
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context, (void)pd_handle;
	return no_such(EOPNOTSUPP);
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd, (void)mr_handle;
	return no_such(EOPNOTSUPP);
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}
