/* SPDX-License-Identifier: MIT */
/* Fixture: obj uses core in the "../core/x.h" form. */
#include "../core/heap.h"
