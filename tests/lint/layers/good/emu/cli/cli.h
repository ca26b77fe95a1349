/* SPDX-License-Identifier: MIT */
/* Fixture: the tool sees the public API only. */
#include "rocemu/device.h"
