/* SPDX-License-Identifier: MIT */
/* Reading pcap and pcapng captures and writing Ethernet pcaps, through libpcap. */
#ifndef ROCEMU_PCAPIO_H
#define ROCEMU_PCAPIO_H

#include <stddef.h>
#include <stdint.h>

struct roce_pcap_reader;
struct roce_pcap_writer;

struct roce_pcap_rec {
	uint64_t ts_ns;		/* capture time, nanoseconds since the epoch */
	uint32_t caplen;	/* bytes present in data */
	uint32_t wire_len;	/* bytes the frame had on the wire */
	const uint8_t *data;	/* valid until the next call */
};

enum { ROCE_PCAP_ERRLEN = 512 };

/*
 * Opens a pcap or pcapng file. Returns 0; -ENOENT/-EACCES/-EIO etc. with a
 * message in err (ROCE_PCAP_ERRLEN bytes) for a file libpcap cannot open;
 * -EPROTONOSUPPORT for a link type other than Ethernet, Linux cooked v1 or
 * v2 or raw IP.
 */
int roce_pcap_open(const char *path, struct roce_pcap_reader **r, char *err);

/* The enum roce_link of the capture. */
unsigned roce_pcap_link(const struct roce_pcap_reader *r);

/* Reads the next record: 1, 0 at the end, -EIO with a message in err. */
int roce_pcap_next(struct roce_pcap_reader *r, struct roce_pcap_rec *rec,
		   char *err);

void roce_pcap_close(struct roce_pcap_reader *r);

/* Creates an Ethernet pcap with nanosecond timestamps; 0 or -errno, err. */
int roce_pcap_create(const char *path, struct roce_pcap_writer **w,
		     char *err);

/* Appends one frame; 0, or -EIO if the write failed. */
int roce_pcap_write(struct roce_pcap_writer *w, uint64_t ts_ns,
		    const uint8_t *frame, size_t len);

/* Appends a frame cut to caplen bytes, as a short snaplen records it. */
int roce_pcap_write_cut(struct roce_pcap_writer *w, uint64_t ts_ns,
			const uint8_t *frame, size_t caplen, size_t wire_len);

/* Flushes and closes; 0, or -EIO if the data did not reach the file. */
int roce_pcap_finish(struct roce_pcap_writer *w);

#endif
