/* SPDX-License-Identifier: MIT */
/* The engine's one header for emu/cli: codec headers only. */
#include "rocemu/frame.h"
