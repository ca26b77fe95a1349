/* SPDX-License-Identifier: MIT */
/* Fixture: wire includes its sibling obj. */
#include "wire.h"
#include "obj/mr.h"
