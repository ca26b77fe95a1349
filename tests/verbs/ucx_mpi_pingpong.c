// SPDX-License-Identifier: MIT
/*
 * MPI ping-pong with checked data: rank 0 and rank 1 (or rank 0 with
 * itself when it runs alone) exchange messages of 1 byte to 64 KiB, each
 * filled with a pattern of its round, size and sender that the receiver
 * checks byte by byte, and the echo checked again. Prints one summary
 * line on rank 0 and exits 0 when every byte matched; otherwise names the
 * first wrong byte and exits 1 (MPI_Abort).
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
	unsigned char *out = malloc(MAX), *in = malloc(MAX);

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (!out || !in || rounds < 1)
		MPI_Abort(MPI_COMM_WORLD, 2);
	int peer = nranks > 1 ? 1 - rank : 0;
	for (int r = 0; r < rounds && rank < 2; r++) {
		for (int size = 1; size <= MAX; size *= 4) {
			MPI_Request req;

			if (rank == 0) {
				fill(out, r, size, 0);
				MPI_Irecv(in, size, MPI_BYTE, peer, r, MPI_COMM_WORLD, &req);
				MPI_Send(out, size, MPI_BYTE, peer, r, MPI_COMM_WORLD);
				MPI_Wait(&req, MPI_STATUS_IGNORE);
				/* The echo is the peer's own pattern (itself alone). */
				check(in, r, size, peer, rank);
			} else {
				MPI_Recv(in, size, MPI_BYTE, 0, r, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				check(in, r, size, 0, rank);
				fill(out, r, size, 1);
				MPI_Send(out, size, MPI_BYTE, 0, r, MPI_COMM_WORLD);
			}
			n++;
		}
	}
	if (rank == 0)
		printf("ucx_mpi_pingpong: %d ranks, %d round trips of 1 B to 64 KiB, every byte checked\n",
		       nranks, n);
	free(out);
	free(in);
	MPI_Finalize();
	return 0;
}
