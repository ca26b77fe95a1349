/* SPDX-License-Identifier: MIT */
/* Fixture: core includes from the unknown folder. */
#include "misc/util.h"
