/* SPDX-License-Identifier: MIT */
/* Entry points that kernel-provider and rdma-cm libraries import from libibverbs.so.1. */
#include <errno.h>
#include <stdio.h>

/*
 * Programs such as perftest link libmlx5, libefa and librdmacm, which are
 * bound at load time (BIND_NOW): every symbol they import from
 * libibverbs.so.1 must exist, or the program does not start. These are
 * rdma-core's internal interfaces to the kernel's uverbs; rocemu has no
 * kernel providers, so none of them is ever reached through its devices.
 * Should one be, it says so and fails with EOPNOTSUPP (NULL for the one
 * that returns a pointer), rather than doing anything.
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

#define IGNORED(name)                        \
	void name(void);                     \
	void name(void)                      \
	{                                    \
	}

/* librdmacm */
FAILS(ibv_copy_path_rec_from_kern)
FAILS(ibv_copy_qp_attr_from_kern)
FAILS(ibv_copy_ah_attr_from_kern)
FAILS(ibv_get_sysfs_path)
/* libmlx5 */
FAILS(ibv_dofork_range)
FAILS(ibv_dontfork_range)
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
FAILS(verbs_allow_disassociate_destroy)
FAILS(verbs_open_device)

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
