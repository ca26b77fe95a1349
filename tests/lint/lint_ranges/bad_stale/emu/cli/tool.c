/* SPDX-License-Identifier: MIT */
/* One listed site still there, one converted since, one never listed. */
int tool(uint64_t va, uint64_t len, uint64_t off, uint64_t size)
{
	if (off + len > size)
		return -1;
	return va + len > size;
}
