// SPDX-License-Identifier: MIT
/*
 * The calls rdma-core added after IBVERBS_1.14 (1.15 ... 1.18), and the
 * IBVERBS_1.0 versions of the calls IBVERBS_1.1 replaced: without them a
 * program linked against a newer rdma-core does not load. Where rocemu
 * has the feature the call works; otherwise it fails as rdma-core's own
 * library fails on a device without it (libibverbs/dummy_ops.c): the
 * errno-returning calls return EOPNOTSUPP, the pointer ones return NULL
 * with errno EOPNOTSUPP, and nothing else happens.
 *
 * The system's <infiniband/verbs.h> may be older than these calls: the
 * types they take are declared here, opaque where rocemu never looks
 * inside, and ibv_mr_init_attr laid out as rdma-core's verbs.h lays it
 * out (it is read).
 */
#include "verbs_local.h"

#include <errno.h>
#include <string.h>

struct ibv_dmah;
struct ibv_dmah_init_attr;
struct ibv_buf;
struct ibv_comp_cntr;
struct ibv_comp_cntr_caps;
struct ibv_comp_cntr_init_attr;
struct ibv_qp_attach_comp_cntr_attr;

/* rdma-core's verbs.h (IBVERBS_1.15) */
struct ibv_mr_init_attr {
  size_t length;
  int access;
  uint64_t comp_mask;
  uint64_t iova;
  void *addr;
  int fd;
  uint64_t fd_offset;
  struct ibv_dmah *dmah;
  struct ibv_buf *buf;
};

enum {
  RV_REG_MR_MASK_IOVA = 1 << 0,
  RV_REG_MR_MASK_ADDR = 1 << 1,
};

static void *no_feature(void) {
  errno = EOPNOTSUPP;
  return NULL;
}

/* --- IBVERBS_1.15 --- */

/* DMA handles (TPH steering) need a PCI device: NULL, errno EOPNOTSUPP. */
struct ibv_dmah *ibv_alloc_dmah(struct ibv_context *context,
                                struct ibv_dmah_init_attr *attr);
struct ibv_dmah *ibv_alloc_dmah(struct ibv_context *context,
                                struct ibv_dmah_init_attr *attr) {
  (void)context, (void)attr;
  return no_feature();
}

/* No DMA handle is ever made: EOPNOTSUPP, dmah untouched. */
int ibv_dealloc_dmah(struct ibv_dmah *dmah);
int ibv_dealloc_dmah(struct ibv_dmah *dmah) {
  (void)dmah;
  return EOPNOTSUPP;
}

/*
 * Registers attr->addr (IBV_REG_MR_MASK_ADDR, needed) for attr->length
 * bytes with attr->access, at attr->iova when IBV_REG_MR_MASK_IOVA is set
 * (else at the address), as ibv_reg_mr_iova2 does. A dma-buf fd, a DMA
 * handle or an ibv_alloc_buf buffer (any other comp_mask bit) gives NULL
 * with errno EOPNOTSUPP; a NULL attr, or no address, EINVAL. attr is only
 * read.
 */
struct ibv_mr *ibv_reg_mr_ex(struct ibv_pd *pd, struct ibv_mr_init_attr *attr);
struct ibv_mr *ibv_reg_mr_ex(struct ibv_pd *pd, struct ibv_mr_init_attr *attr) {
  if (!pd || !attr || !(attr->comp_mask & RV_REG_MR_MASK_ADDR)) {
    errno = EINVAL;
    return NULL;
  }
  if (attr->comp_mask & ~(uint64_t)(RV_REG_MR_MASK_ADDR | RV_REG_MR_MASK_IOVA))
    return no_feature();
  uint64_t iova = attr->comp_mask & RV_REG_MR_MASK_IOVA
                      ? attr->iova
                      : (uint64_t)(uintptr_t)attr->addr;
  return ibv_reg_mr_iova2(pd, attr->addr, attr->length, iova,
                          (unsigned)attr->access);
}

/* --- IBVERBS_1.16 --- */

/* Device memory lives in the process (verbs_dm.c), not in a dma-buf:
 * -1 with errno EOPNOTSUPP. */
int ibv_dm_export_dmabuf_fd(struct ibv_dm *dm);
int ibv_dm_export_dmabuf_fd(struct ibv_dm *dm) {
  (void)dm;
  errno = EOPNOTSUPP;
  return -1;
}

/*
 * The port's effective speed in units of 100 Mb/s, as ibv_query_port
 * gives it (1X at 2.5 Gb/s, as rxe reports): 0 and *port_speed set;
 * EINVAL for a port other than 1 or a NULL argument, *port_speed
 * untouched.
 */
int ibv_query_port_speed(struct ibv_context *context, uint32_t port_num,
                         uint64_t *port_speed);
int ibv_query_port_speed(struct ibv_context *context, uint32_t port_num,
                         uint64_t *port_speed) {
  if (!context || port_num != 1 || !port_speed)
    return EINVAL;
  *port_speed = 25;
  return 0;
}

/* --- IBVERBS_1.17 --- */

/* Provider-allocated buffers are not offered (register ordinary memory
 * instead): NULL, errno EOPNOTSUPP, *buf untouched. */
void *ibv_alloc_buf(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
void *ibv_alloc_buf(struct ibv_pd *pd, size_t size, struct ibv_buf **buf) {
  (void)pd, (void)size, (void)buf;
  return no_feature();
}

/* No buffer is ever handed out, so there is none to free: does nothing. */
void ibv_free_buf(struct ibv_buf *buf);
void ibv_free_buf(struct ibv_buf *buf) { (void)buf; }

/* No buffer is ever handed out: NULL, errno EOPNOTSUPP. */
struct ibv_mr *ibv_reg_buf_mr(struct ibv_pd *pd, struct ibv_buf *buf,
                              void *addr, size_t length, int access);
struct ibv_mr *ibv_reg_buf_mr(struct ibv_pd *pd, struct ibv_buf *buf,
                              void *addr, size_t length, int access) {
  (void)pd, (void)buf, (void)addr, (void)length, (void)access;
  return no_feature();
}

/* --- IBVERBS_1.18 --- */

/* No buffer is ever handed out: -1, errno EOPNOTSUPP. */
int ibv_export_buf_dmabuf_fd(struct ibv_buf *buf);
int ibv_export_buf_dmabuf_fd(struct ibv_buf *buf) {
  (void)buf;
  errno = EOPNOTSUPP;
  return -1;
}

/*
 * Completion counters are not offered: caps (caps_size bytes) is zeroed,
 * as rdma-core does before asking the provider, so it says "none", and
 * the call returns EOPNOTSUPP.
 */
int _ibv_query_comp_cntr_caps(struct ibv_context *context,
                              struct ibv_comp_cntr_caps *caps,
                              size_t caps_size);
int _ibv_query_comp_cntr_caps(struct ibv_context *context,
                              struct ibv_comp_cntr_caps *caps,
                              size_t caps_size) {
  (void)context;
  if (caps)
    memset(caps, 0, caps_size);
  return EOPNOTSUPP;
}

/* No completion counters: NULL, errno EOPNOTSUPP. */
struct ibv_comp_cntr *
ibv_create_comp_cntr(struct ibv_context *context,
                     struct ibv_comp_cntr_init_attr *cc_attr);
struct ibv_comp_cntr *
ibv_create_comp_cntr(struct ibv_context *context,
                     struct ibv_comp_cntr_init_attr *cc_attr) {
  (void)context, (void)cc_attr;
  return no_feature();
}

/* No counter is ever made: each of these returns EOPNOTSUPP and changes
 * nothing (a value it would read is left as it was). */
#define NO_COUNTER(name, type)                                                 \
  int name(struct ibv_comp_cntr *comp_cntr, type v);                           \
  int name(struct ibv_comp_cntr *comp_cntr, type v) {                          \
    (void)comp_cntr, (void)v;                                                  \
    return EOPNOTSUPP;                                                         \
  }
NO_COUNTER(ibv_set_comp_cntr, uint64_t)
NO_COUNTER(ibv_set_err_comp_cntr, uint64_t)
NO_COUNTER(ibv_inc_comp_cntr, uint64_t)
NO_COUNTER(ibv_inc_err_comp_cntr, uint64_t)
NO_COUNTER(ibv_read_comp_cntr, uint64_t *)
NO_COUNTER(ibv_read_err_comp_cntr, uint64_t *)

/* No counter is ever made: EOPNOTSUPP. */
int ibv_destroy_comp_cntr(struct ibv_comp_cntr *comp_cntr);
int ibv_destroy_comp_cntr(struct ibv_comp_cntr *comp_cntr) {
  (void)comp_cntr;
  return EOPNOTSUPP;
}

/* No counter is ever made: EOPNOTSUPP, the QP unchanged. */
int ibv_qp_attach_comp_cntr(struct ibv_qp *qp, struct ibv_comp_cntr *comp_cntr,
                            struct ibv_qp_attach_comp_cntr_attr *attr);
int ibv_qp_attach_comp_cntr(struct ibv_qp *qp, struct ibv_comp_cntr *comp_cntr,
                            struct ibv_qp_attach_comp_cntr_attr *attr) {
  (void)qp, (void)comp_cntr, (void)attr;
  return EOPNOTSUPP;
}

/*
 * --- IBVERBS_1.0 (compat) ---
 * Programs linked before IBVERBS_1.1 (2006) pass the 1.0 structures
 * (ibv_device_1_0, ibv_context_1_0: rdma-core's compat-1_0.c), which
 * rocemu does not translate: each such call fails with ENOSYS, the
 * function not being implemented, and touches nothing. Those returning a
 * pointer (or a GUID) give NULL (0), those returning an int give ENOSYS,
 * the two event waits -1; all set errno to ENOSYS.
 */
#define COMPAT_1_0(name, type, fail)                                           \
  type rv_##name##_1_0(void);                                                  \
  __attribute__((used)) type rv_##name##_1_0(void) {                           \
    errno = ENOSYS;                                                            \
    return fail;                                                               \
  }                                                                            \
  __asm__(".symver rv_" #name "_1_0, " #name "@IBVERBS_1.0");
#define COMPAT_1_0_VOID(name)                                                  \
  void rv_##name##_1_0(void);                                                  \
  __attribute__((used)) void rv_##name##_1_0(void) { errno = ENOSYS; }         \
  __asm__(".symver rv_" #name "_1_0, " #name "@IBVERBS_1.0");

COMPAT_1_0(ibv_get_device_list, void *, NULL)
COMPAT_1_0_VOID(ibv_free_device_list)
COMPAT_1_0(ibv_get_device_name, void *, NULL)
COMPAT_1_0(ibv_get_device_guid, uint64_t, 0)
COMPAT_1_0(ibv_open_device, void *, NULL)
COMPAT_1_0(ibv_close_device, int, ENOSYS)
COMPAT_1_0(ibv_get_async_event, int, -1)
COMPAT_1_0_VOID(ibv_ack_async_event)
COMPAT_1_0(ibv_query_device, int, ENOSYS)
COMPAT_1_0(ibv_query_port, int, ENOSYS)
COMPAT_1_0(ibv_query_gid, int, ENOSYS)
COMPAT_1_0(ibv_query_pkey, int, ENOSYS)
COMPAT_1_0(ibv_alloc_pd, void *, NULL)
COMPAT_1_0(ibv_dealloc_pd, int, ENOSYS)
COMPAT_1_0(ibv_reg_mr, void *, NULL)
COMPAT_1_0(ibv_dereg_mr, int, ENOSYS)
COMPAT_1_0(ibv_create_cq, void *, NULL)
COMPAT_1_0(ibv_resize_cq, int, ENOSYS)
COMPAT_1_0(ibv_destroy_cq, int, ENOSYS)
COMPAT_1_0(ibv_get_cq_event, int, -1)
COMPAT_1_0_VOID(ibv_ack_cq_events)
COMPAT_1_0(ibv_create_srq, void *, NULL)
COMPAT_1_0(ibv_modify_srq, int, ENOSYS)
COMPAT_1_0(ibv_query_srq, int, ENOSYS)
COMPAT_1_0(ibv_destroy_srq, int, ENOSYS)
COMPAT_1_0(ibv_create_qp, void *, NULL)
COMPAT_1_0(ibv_query_qp, int, ENOSYS)
COMPAT_1_0(ibv_modify_qp, int, ENOSYS)
COMPAT_1_0(ibv_destroy_qp, int, ENOSYS)
COMPAT_1_0(ibv_create_ah, void *, NULL)
COMPAT_1_0(ibv_destroy_ah, int, ENOSYS)
COMPAT_1_0(ibv_attach_mcast, int, ENOSYS)
COMPAT_1_0(ibv_detach_mcast, int, ENOSYS)
