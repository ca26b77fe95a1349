/* SPDX-License-Identifier: MIT */
/* Fixture: the drop-in sees the public API only. */
#include "rocemu/device.h"
