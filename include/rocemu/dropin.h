/* SPDX-License-Identifier: MIT */
/* What the librdmacm.so.1 drop-in asks of the libibverbs.so.1 drop-in (version node ROCEMU_PRIVATE_1.0). */
#ifndef ROCEMU_DROPIN_H
#define ROCEMU_DROPIN_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "rocemu/device.h"

/*
 * A process has one device, made by the libibverbs.so.1 drop-in on first
 * use. The librdmacm.so.1 drop-in reaches it through these calls (and the
 * CM through <rocemu/ibcm.h>), exported by libibverbs.so.1 so that there
 * is one copy of the device in a process.
 */

/*
 * Makes the process's device if there is none yet, at ROCEMU_ADDR, or
 * (ROCEMU_ADDR unset) at gid (an IPv4-mapped or IPv6 address; NULL:
 * 127.0.0.1). Returns 0 and copies the device's GID (its address) to out
 * when out is not NULL, whatever address it was made at; -errno when the
 * device cannot be made (out untouched).
 */
int rocemu_dropin_make_dev(const uint8_t *gid, uint8_t out[16]);

/*
 * The device behind a context of the libibverbs.so.1 drop-in: NULL and
 * errno EINVAL for NULL, EIO for a context inherited over fork.
 */
struct rocemu_dev *rocemu_dropin_dev(const struct ibv_context *context);

#endif
