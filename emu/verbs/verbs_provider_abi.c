/* SPDX-License-Identifier: MIT */
/* Entry points that kernel-provider and rdma-cm libraries import from libibverbs.so.1. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Programs such as perftest link libmlx5, libefa and librdmacm, which are
 * bound at load time (BIND_NOW): every symbol they import from
 * libibverbs.so.1 must exist, or the program does not start. These are
 * rdma-core's internal interfaces to the kernel's uverbs; rocemu has no
 * kernel providers, so none of them is ever reached through its devices.
 * Should one be, it says so and fails with EOPNOTSUPP (NULL for those
 * that return a pointer, nothing for those that return nothing), rather
 * than doing anything. Each is defined with its rdma-core return type
 * (driver.h, marshall.h, cmd_ioctl.h): a caller that uses the value reads
 * what it expects.
 */
static int unsupported(const char *name)
{
	fprintf(stderr, "rocemu: %s is a kernel-provider entry point; rocemu "
			"has no kernel devices\n", name);
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

#define FAILS(name)                          \
	int name(void);                      \
	int name(void)                       \
	{                                    \
		return unsupported(#name);   \
	}

/* Returns nothing (rdma-core's void): says so, and does nothing. */
#define NOTHING(name)                        \
	void name(void);                     \
	void name(void)                      \
	{                                    \
		unsupported(#name);          \
	}

#define IGNORED(name)                        \
	void name(void);                     \
	void name(void)                      \
	{                                    \
	}

/* librdmacm (marshall.h) */
NOTHING(ibv_copy_path_rec_from_kern)
NOTHING(ibv_copy_path_rec_to_kern)
NOTHING(ibv_copy_qp_attr_from_kern)
NOTHING(ibv_copy_ah_attr_from_kern)
/* the providers' private interface (IBVERBS_PRIVATE_34) */
FAILS(execute_ioctl)
FAILS(ibv_cmd_advise_mr)
FAILS(ibv_cmd_alloc_dm)
FAILS(ibv_cmd_alloc_mw)
FAILS(ibv_cmd_alloc_pd)
FAILS(ibv_cmd_attach_mcast)
FAILS(ibv_cmd_close_xrcd)
FAILS(ibv_cmd_create_ah)
FAILS(ibv_cmd_create_counters)
FAILS(ibv_cmd_create_cq_ex)
FAILS(ibv_cmd_create_flow)
FAILS(ibv_cmd_create_flow_action_esp)
FAILS(ibv_cmd_create_qp_ex)
FAILS(ibv_cmd_create_qp_ex2)
FAILS(ibv_cmd_create_rwq_ind_table)
FAILS(ibv_cmd_create_srq)
FAILS(ibv_cmd_create_srq_ex)
FAILS(ibv_cmd_create_wq)
FAILS(ibv_cmd_dealloc_mw)
FAILS(ibv_cmd_dealloc_pd)
FAILS(ibv_cmd_dereg_mr)
FAILS(ibv_cmd_destroy_ah)
FAILS(ibv_cmd_destroy_counters)
FAILS(ibv_cmd_destroy_cq)
FAILS(ibv_cmd_destroy_flow)
FAILS(ibv_cmd_destroy_flow_action)
FAILS(ibv_cmd_destroy_qp)
FAILS(ibv_cmd_destroy_rwq_ind_table)
FAILS(ibv_cmd_destroy_srq)
FAILS(ibv_cmd_destroy_wq)
FAILS(ibv_cmd_detach_mcast)
FAILS(ibv_cmd_free_dm)
FAILS(ibv_cmd_get_context)
FAILS(ibv_cmd_modify_cq)
FAILS(ibv_cmd_modify_flow_action_esp)
FAILS(ibv_cmd_modify_qp)
FAILS(ibv_cmd_modify_qp_ex)
FAILS(ibv_cmd_modify_srq)
FAILS(ibv_cmd_modify_wq)
FAILS(ibv_cmd_open_qp)
FAILS(ibv_cmd_open_xrcd)
FAILS(ibv_cmd_query_context)
FAILS(ibv_cmd_query_device_any)
FAILS(ibv_cmd_query_mr)
FAILS(ibv_cmd_query_port)
FAILS(ibv_cmd_query_qp)
FAILS(ibv_cmd_query_srq)
FAILS(ibv_cmd_read_counters)
FAILS(ibv_cmd_reg_dm_mr)
FAILS(ibv_cmd_reg_dmabuf_mr)
FAILS(ibv_cmd_reg_mr)
FAILS(ibv_cmd_rereg_mr)
FAILS(ibv_cmd_resize_cq)

struct ibv_context;
struct ibv_context *verbs_open_device(void);
struct ibv_context *verbs_open_device(void)
{
	unsupported("verbs_open_device");
	return NULL;
}

void *_verbs_init_and_alloc_context(void);
void *_verbs_init_and_alloc_context(void)
{
	unsupported("_verbs_init_and_alloc_context");
	return NULL;
}

/* Called by each provider's constructor when it loads: nothing to do,
 * since rocemu lists only its own device. */
IGNORED(verbs_register_driver_34)
IGNORED(verbs_set_ops)
IGNORED(verbs_init_cq)
IGNORED(verbs_uninit_context)
IGNORED(__verbs_log)

/*
 * Data, not a function: providers read it (verbs_is_destroy_err) to tell
 * whether a destroy on a device the kernel took away may report success.
 * Off, rdma-core's default: rocemu has no kernel devices to lose.
 */
bool verbs_allow_disassociate_destroy;

/*
 * The sysfs root, as rdma-core gives it: $SYSFS_PATH without its trailing
 * slashes (not for a setuid program), else "/sys". Callers build paths
 * under it (<root>/class/infiniband/rocemu0/...); rocemu's device has no
 * sysfs directory, so they find no files there, which they handle as for
 * a device that does not publish them. Never NULL: the callers use the
 * string without a check (libibverbs' own start-up treats NULL as fatal).
 */
static char sysfs_path[256] = "/sys";
static pthread_once_t sysfs_once = PTHREAD_ONCE_INIT;

static void sysfs_from_env(void)
{
	const char *env = secure_getenv("SYSFS_PATH");
	size_t len = env ? strlen(env) : 0;

	if (!len || len >= sizeof(sysfs_path))
		return;
	memcpy(sysfs_path, env, len + 1);
	while (len > 1 && sysfs_path[len - 1] == '/')
		sysfs_path[--len] = '\0';
}

const char *ibv_get_sysfs_path(void);
const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sysfs_once, sysfs_from_env);
	return sysfs_path;
}

/*
 * Fork protection for a range (libmlx5 calls it on its queues): rocemu
 * pins nothing, the memory a forked child gets is its own copy, and the
 * parent's device keeps writing the parent's (ibv_is_fork_initialized
 * says IBV_FORK_UNNEEDED); rdma-core answers 0 when it has no protection
 * to apply, and so does this.
 */
int ibv_dontfork_range(void *base, size_t size);
int ibv_dontfork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}
