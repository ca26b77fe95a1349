/* SPDX-License-Identifier: MIT */
/* Fixture: obj includes its sibling wire. */
#include "mr.h"
#include "../wire/wire.h"
