/* SPDX-License-Identifier: MIT */
/* The pcap reader's state, shared by the file reader and the live one. */
#ifndef ROCEMU_PROTO_PCAPIO_LOCAL_H
#define ROCEMU_PROTO_PCAPIO_LOCAL_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>

#include "rocemu/pcapio.h"

struct pcap_file {
	int fd;
	bool big_endian, nano;
	unsigned rec_hdr;
	uint32_t snaplen;
	uint8_t *buf;		/* READ_BUF bytes, unread from pos to end */
	size_t pos, end;
	uint64_t buf_off;	/* file offset of buf[0] */
};

struct roce_pcap_reader {
	unsigned link;
	uint64_t records;	/* records returned so far */
	int failed;		/* once a read failed, the error stays */
	char msg[ROCE_PCAP_ERRLEN];
	struct pcap_file f;	/* pcap, when pc is NULL */
	pcap_t *pc;		/* pcapng or live, read by libpcap */
	bool pc_nano;
	bool live;		/* an interface: timeouts are not the end */
};

/* The enum roce_link of a libpcap DLT value, or -1 for one rocemu does
 * not read. LINKTYPE_RAW (101) reads as DLT_RAW. */
int roce_pcap_link_of_dlt(int dlt);

#endif
