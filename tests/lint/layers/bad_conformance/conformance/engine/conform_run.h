/* SPDX-License-Identifier: MIT */
/* Inside the engine only. */
#include "conform.h"
