/* SPDX-License-Identifier: MIT */
/* Fixture: the drop-in includes the tool's header. */
#include "../cli/cli.h"
