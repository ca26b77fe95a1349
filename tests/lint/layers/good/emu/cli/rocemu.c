/* SPDX-License-Identifier: MIT */
/* Fixture: the tool's own header. */
#include "cli.h"
