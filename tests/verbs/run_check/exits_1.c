/* SPDX-License-Identifier: MIT */
/* Says 0 failed but exits 1: the exit status counts. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	printf("exits_1: 1 passed, 0 failed\n");
	return 1;
}
