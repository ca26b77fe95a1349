/* SPDX-License-Identifier: MIT */
/* Fixture: the tool goes around the public API into obj. */
#include "rocemu/device.h"
#include "../obj/qp.h"
