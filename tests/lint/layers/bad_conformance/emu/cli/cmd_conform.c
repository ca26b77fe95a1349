/* SPDX-License-Identifier: MIT */
/* emu/cli may include conform.h, not the engine's inside. */
#include "conform.h"
#include "conform_run.h"
