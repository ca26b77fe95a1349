/* SPDX-License-Identifier: MIT */
/* Fixture: the same bytes under names that are no opcodes. */
void mac_set(unsigned char *mac, unsigned *range)
{
	mac[0] = 0x0c;
	range[0] = 0x12;
	range[1] = 0x1f;
}
