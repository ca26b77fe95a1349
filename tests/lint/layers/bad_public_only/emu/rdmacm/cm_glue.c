/* SPDX-License-Identifier: MIT */
/* Fixture: the rdma_cm drop-in reaches past the public API into a device layer. */
#include "obj/qp.h"
