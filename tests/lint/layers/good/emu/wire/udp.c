/* SPDX-License-Identifier: MIT */
/* Fixture: EtherType and IP version bytes are no opcodes. */
#include "wire.h"
void ip_head(unsigned char *out, int v4)
{
	out[12] = v4 ? 0x08 : 0x86;
	out[14] = v4 ? 0x45 : 0x60;
}
