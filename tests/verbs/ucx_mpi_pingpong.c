// SPDX-License-Identifier: MIT
/*
 * MPI exchanges with checked data between every pair of ranks (rank 0
 * with itself when it runs alone): in each round, for each size from 1
 * byte to 64 KiB, every rank sends every other rank a message filled with
 * a pattern of its round, size and sender, and checks byte by byte what
 * each of the others sent it. Prints one summary line on rank 0 and exits
 * 0 when every byte matched; otherwise names the first wrong byte and
 * exits 1 (MPI_Abort).
 * usage: mpirun ... ucx_mpi_pingpong [ROUNDS]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX = 65536 };

static unsigned char pattern(int round, int size, int from, int i)
{
	return (unsigned char)(round * 131 + size * 7 + from * 29 + i * 13 + i / 251);
}

static void fill(unsigned char *b, int round, int size, int from)
{
	for (int i = 0; i < size; i++)
		b[i] = pattern(round, size, from, i);
}

static void check(const unsigned char *b, int round, int size, int from,
		  int rank)
{
	for (int i = 0; i < size; i++) {
		if (b[i] != pattern(round, size, from, i)) {
			fprintf(stderr, "ucx_mpi_pingpong: rank %d round %d size %d: "
					"byte %d is 0x%02x, wanted 0x%02x\n",
				rank, round, size, i, b[i],
				pattern(round, size, from, i));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
}

int main(int argc, char **argv)
{
	int rank, nranks, rounds = argc > 1 ? atoi(argv[1]) : 20, n = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	unsigned char *out = malloc(MAX), *in = malloc((size_t)MAX * nranks);
	MPI_Request *req = malloc(sizeof(*req) * 2 * (size_t)nranks);
	if (!out || !in || !req || rounds < 1)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int r = 0; r < rounds; r++) {
		for (int size = 1; size <= MAX; size *= 4) {
			int k = 0;

			fill(out, r, size, rank);
			/* alone, a rank sends to itself; else to every other */
			for (int p = 0; p < nranks; p++)
				if (p != rank || nranks == 1)
					MPI_Irecv(in + (size_t)p * MAX, size,
						  MPI_BYTE, p, r, MPI_COMM_WORLD,
						  &req[k++]);
			for (int p = 0; p < nranks; p++)
				if (p != rank || nranks == 1)
					MPI_Isend(out, size, MPI_BYTE, p, r,
						  MPI_COMM_WORLD, &req[k++]);
			MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
			for (int p = 0; p < nranks; p++)
				if (p != rank || nranks == 1)
					check(in + (size_t)p * MAX, r, size, p,
					      rank);
			n++;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ucx_mpi_pingpong: %d ranks, %d exchanges of 1 B to 64 KiB "
		       "between every pair, every byte checked\n", nranks, n);
	free(req);
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
