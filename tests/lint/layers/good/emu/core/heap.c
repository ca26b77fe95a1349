/* SPDX-License-Identifier: MIT */
/* Fixture: core's own header, found beside the file. */
#include "heap.h"
#include "../../proto/byteorder.h"
unsigned long long mix(unsigned long long z)
{
	return z * 0x9e3779b97f4a7c15ull;
}
double op_share(unsigned long long r) { return (double)r * 0x1.0p-53; }
