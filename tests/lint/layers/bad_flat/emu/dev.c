/* SPDX-License-Identifier: MIT */
/* Fixture: a source left directly in emu/. */
#include "local.h"
