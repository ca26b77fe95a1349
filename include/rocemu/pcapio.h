/* SPDX-License-Identifier: MIT */
/* Reading pcap and pcapng captures, every record checked, and writing Ethernet pcaps. */
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

enum {
	ROCE_PCAP_ERRLEN = 512,
	/* libpcap's largest snapshot length: no legal record is longer */
	ROCE_PCAP_MAX_CAPLEN = 262144,
};

/*
 * Opens a pcap or pcapng file ("-" reads standard input). Returns 0; on
 * failure a negative errno and the reason in err (ROCE_PCAP_ERRLEN bytes),
 * without the path, for the caller to print after it: -ENOENT, -EACCES
 * etc. when the file cannot be opened or read, -EBADMSG for a file that is
 * not a capture or whose header is malformed, -EPROTONOSUPPORT for a pcap
 * version other than 2.4 or a link type other than Ethernet, Linux cooked
 * v1 or v2 or raw IP. *r is set only on success.
 */
int roce_pcap_open(const char *path, struct roce_pcap_reader **r, char *err);

/*
 * Opens a live capture on network interface iface ("any" for all) through
 * libpcap, keeping only UDP datagrams to port 4791, with nanosecond stamps;
 * roce_pcap_next then waits for each packet until roce_pcap_break. Returns
 * 0; on failure a negative errno with the reason in err, the interface
 * named: -EPERM without the capture privilege (err says what to run),
 * -ENODEV for no such interface, -ENETDOWN when it is down,
 * -EPROTONOSUPPORT for a link type rocemu does not read, -EIO else. *r
 * is set only on success.
 */
int roce_pcap_open_live(const char *iface, struct roce_pcap_reader **r,
			char *err);

/*
 * Makes the roce_pcap_next waiting on a live capture, or the next one,
 * return 0, the clean end: callable from a signal handler (Ctrl-C). For
 * a file it does nothing.
 */
void roce_pcap_break(struct roce_pcap_reader *r);

/* The enum roce_link of the capture. */
unsigned roce_pcap_link(const struct roce_pcap_reader *r);

/*
 * Reads the next record: 1, or 0 at the clean end of the file. A record
 * that breaks the format (cut short by the end of the file, longer than
 * the snapshot length or ROCE_PCAP_MAX_CAPLEN, an original length below
 * its captured length, a timestamp fraction of a second or more) gives
 * -EBADMSG; a failed read, or a pcapng block libpcap refuses, -EIO. err
 * then says which record, and for pcap at which byte, without the path.
 * After a failure every later call fails the same way: records after a
 * broken one are never guessed at.
 */
int roce_pcap_next(struct roce_pcap_reader *r, struct roce_pcap_rec *rec,
		   char *err);

/* Closes the file and frees r; NULL is ignored. */
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

/*
 * Makes w write each record to the file as it is given, header and data
 * in one write(2), as tcpdump -U does: the file is a valid capture at
 * every moment (whole records only), and one that ends without
 * roce_pcap_finish (an _exit) loses nothing. Writes out what is buffered
 * first; 0, or -EIO if that did not reach the file (w then stays
 * buffered). It costs a system call a record.
 */
int roce_pcap_unbuffered(struct roce_pcap_writer *w);

/* Writes out what is buffered; 0, or -EIO if it did not reach the file. */
int roce_pcap_flush(struct roce_pcap_writer *w);

/* Flushes and closes; 0, or -EIO if the data did not reach the file. */
int roce_pcap_finish(struct roce_pcap_writer *w);

#endif
