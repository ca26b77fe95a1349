/* SPDX-License-Identifier: MIT */
/* Fixture: a public header including another one and a system header. */
#include <stdint.h>
#include "rocemu/opcode.h"
