/* SPDX-License-Identifier: MIT */
/* Fixture: proto itself compares opcodes in hex. */
#include "byteorder.h"
#include <rocemu/opcode.h>
int is_read(unsigned opcode) { return opcode == 0x0c; }
