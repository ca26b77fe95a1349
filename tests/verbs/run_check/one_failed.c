/* SPDX-License-Identifier: MIT */
/* Exits 0 but its closing line counts a failure. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	printf("one_failed: 1 passed, 1 failed\n");
	return 0;
}
