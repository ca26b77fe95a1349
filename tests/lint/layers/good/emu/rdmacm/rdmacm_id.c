/* SPDX-License-Identifier: MIT */
/* Fixture: the rdma_cm drop-in: the public API and system headers. */
#include <rdma/rdma_cma.h>
#include <rocemu/device.h>
