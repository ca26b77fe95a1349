/* SPDX-License-Identifier: MIT */
/* make check's flood: 10^7 corrupted datagrams at an established IPv4 flow, which the receiver must all refuse. */
#include <stdio.h>
#include <stdlib.h>

#include "icrc_flood.h"

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20240601;
	static struct roce_ipid_table ids;
	struct flood f;

	if (argc > 3 || !n) {
		fprintf(stderr, "usage: icrc_flood [COUNT [SEED]]\n");
		return 2;
	}
	flood_run(&ids, n, seed, &f);
	printf("icrc_flood: %llu corrupted datagrams (seed %llu), %llu "
	       "accepted; %llu malformed, %llu explained by an IPv4 ID and "
	       "refused; %llu of 3 valid accepted\n",
	       (unsigned long long)f.sent, (unsigned long long)seed,
	       (unsigned long long)f.accepted,
	       (unsigned long long)f.malformed,
	       (unsigned long long)ids.refused,
	       (unsigned long long)f.valid_ok);
	return f.accepted || f.valid_ok != 3 ? 1 : 0;
}
