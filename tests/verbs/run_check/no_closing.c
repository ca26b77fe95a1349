/* SPDX-License-Identifier: MIT */
/* Exits 0 with no closing line (a program that stopped short). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	printf("no_closing: started\n");
	return 0;
}
