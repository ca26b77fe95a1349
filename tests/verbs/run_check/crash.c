/* SPDX-License-Identifier: MIT */
/* Dies on a signal before its closing line. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	printf("crash: started\n");
	fflush(stdout);
	abort();
}
