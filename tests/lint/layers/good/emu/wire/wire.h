/* SPDX-License-Identifier: MIT */
/* Fixture: wire uses core in the "core/x.h" form (-Iemu). */
#include "core/heap.h"
