/* SPDX-License-Identifier: MIT */
/* Fixture: the engine includes a header that is in no layer. */
#include "../local.h"
