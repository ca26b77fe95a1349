/* SPDX-License-Identifier: MIT */
/* Never ends: the runner kills it after its timeout. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	for (;;)
		pause();
}
