/* SPDX-License-Identifier: MIT */
/* Fixture: obj reaches up into the engine. */
#include "qp.h"
#include "../engine/req.h"
