/* SPDX-License-Identifier: MIT */
/* The engine reaches past the codec, to the device. */
#include "conform_run.h"
#include "rocemu/device.h"
