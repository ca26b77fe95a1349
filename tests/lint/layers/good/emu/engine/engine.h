/* SPDX-License-Identifier: MIT */
/* Fixture: the engine sees obj and wire, both below it. */
#include "../obj/qp.h"
#include "wire/wire.h"
