/* SPDX-License-Identifier: MIT */
/* Fixture: the drop-in's own header, the public API in angle brackets. */
#include "verbs_local.h"
#include <rocemu/device.h>
#include <stdio.h>
