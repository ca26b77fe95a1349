// SPDX-License-Identifier: MIT
/*
 * The libibverbs calls besides the data path, checked against what the
 * verbs man pages and the IBTA say, through the system header as a user
 * program sees them. Prints each failure; exits with how many failed.
 * With --tables, prints every name and rate conversion instead; with
 * --driver, checks only the calls that need no device.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_check.h"

/* Every name and conversion, one per line: the test compares this output
 * with the same program's on the system's own libibverbs. */
static void print_tables(void)
{
	for (int i = 0; i <= IBV_WC_TM_RNDV_INCOMPLETE + 1; i++)
		printf("wc_status %d %s\n", i, ibv_wc_status_str(i));
	for (int i = 0; i <= IBV_EVENT_WQ_FATAL + 1; i++)
		printf("event %d %s\n", i, ibv_event_type_str(i));
	for (int i = 0; i <= IBV_PORT_ACTIVE_DEFER + 1; i++)
		printf("port_state %d %s\n", i, ibv_port_state_str(i));
	for (int i = IBV_NODE_UNKNOWN; i <= IBV_NODE_UNSPECIFIED + 1; i++)
		printf("node_type %d %s\n", i, ibv_node_type_str(i));
	for (int r = 0; r <= IBV_RATE_1200_GBPS + 1; r++)
		printf("rate %d mbps %d mult %d\n", r, ibv_rate_to_mbps(r),
		       ibv_rate_to_mult(r));
	for (int m = 0; m <= 500; m++)
		printf("mult %d rate %d\n", m, mult_to_ibv_rate(m));
	for (int r = 0; r <= IBV_RATE_1200_GBPS + 1; r++) {
		int mbps = ibv_rate_to_mbps(r);
		printf("mbps %d rate %d\n", mbps, mbps_to_ibv_rate(mbps));
	}
}

/* rxe's layout: the link-local GID first, then the IPv4-mapped one. */
static void gid_table(struct ibv_context *ctx)
{
	struct ibv_gid_entry e[4];
	ssize_t n = ibv_query_gid_table(ctx, e, 4, 0);

	EXPECT(n == 2);
	if (n != 2)
		return;
	EXPECT(e[0].gid_index == 0 && e[0].gid.raw[0] == 0xfe &&
	      e[0].gid.raw[1] == 0x80);
	EXPECT(e[1].gid_index == 1 && e[1].gid.raw[10] == 0xff &&
	      e[1].gid.raw[11] == 0xff);
	EXPECT(e[1].gid_type == IBV_GID_TYPE_ROCE_V2);
	/* too small a buffer: EINVAL, as the kernel answers rdma-core */
	EXPECT(ibv_query_gid_table(ctx, e, 1, 0) == -EINVAL);

	/* a table as long as rxe's, empty after GID 1 */
	struct ibv_port_attr pa;
	union ibv_gid g;
	EXPECT(ibv_query_port(ctx, 1, &pa) == 0 && pa.gid_tbl_len == 1024);
	memset(&g, 0x5a, sizeof(g));
	EXPECT(ibv_query_gid(ctx, 1, 2, &g) == 0 && g.global.interface_id == 0 &&
	      g.global.subnet_prefix == 0);
	EXPECT(ibv_query_gid(ctx, 1, 1024, &g) == -1);
	EXPECT(ibv_query_gid_ex(ctx, 1, 2, &e[0], 0) == ENODATA);
	EXPECT(ibv_query_gid_ex(ctx, 1, 1023, &e[0], 0) == ENODATA);
	EXPECT(ibv_query_gid_ex(ctx, 1, 1024, &e[0], 0) == EINVAL);
	EXPECT(ibv_query_gid_ex(ctx, 1, 0, &e[0], 0) == 0 &&
	      e[0].gid.raw[0] == 0xfe);
}

static void unsupported(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);

	EXPECT(pd && cq);
	if (!pd || !cq)
		return;
	errno = 0;
	EXPECT(!ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, 0) && errno == EOPNOTSUPP);
	errno = 0;
	EXPECT(!ibv_import_device(3) && errno == EOPNOTSUPP);
	EXPECT(ibv_attach_mcast(NULL, NULL, 0) == EOPNOTSUPP);
	EXPECT(ibv_destroy_cq(cq) == 0);
	EXPECT(ibv_dealloc_pd(pd) == 0);
}

/* rdma-core's own declarations (driver.h, not installed with the headers
 * programs use): what providers, librdmacm and MPI libraries call. */
const char *ibv_get_sysfs_path(void);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
extern bool verbs_allow_disassociate_destroy;

/*
 * The entry points outside verbs.h, called as their callers declare them:
 * the sysfs root is a string ("/sys" unless SYSFS_PATH says otherwise, its
 * trailing slashes dropped, as rdma-core answers); the fork ranges succeed,
 * fork protection being unneeded (ibv_is_fork_initialized); the destroy
 * flag is data, and off.
 */
static void driver_calls(void)
{
	const char *sysfs = ibv_get_sysfs_path();
	char buf[64];

	EXPECT(sysfs && strlen(sysfs) > 0);
	EXPECT(sysfs && !strcmp(sysfs, getenv("SYSFS_PATH") ? "/tmp/sysfs" : "/sys"));
	EXPECT(ibv_dontfork_range(buf, sizeof(buf)) == 0);
	EXPECT(ibv_dofork_range(buf, sizeof(buf)) == 0);
	EXPECT(!verbs_allow_disassociate_destroy);
}

int main(int argc, char **argv)
{
	int n = 0;

	if (argc > 1 && !strcmp(argv[1], "--tables")) {
		print_tables();
		return 0;
	}
	driver_calls();
	if (argc > 1 && !strcmp(argv[1], "--driver")) {
		printf("verbs_calls --driver: %d failed\n", failed);
		return failed;
	}
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = n > 0 ? ibv_open_device(list[0]) : NULL;

	EXPECT(ctx);
	if (ctx) {
		gid_table(ctx);
		unsupported(ctx);
		ibv_close_device(ctx);
	}
	if (list)
		ibv_free_device_list(list);
	printf("verbs_calls: %d failed\n", failed);
	return failed;
}
