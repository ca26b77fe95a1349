/* SPDX-License-Identifier: MIT */
/* pcap/pcapng I/O on top of libpcap, with link types mapped to enum roce_link. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/frame.h"
#include "rocemu/pcapio.h"

struct roce_pcap_reader {
	pcap_t *pc;
	unsigned link;
	int nano;
};

struct roce_pcap_writer {
	pcap_t *pc;
	pcap_dumper_t *d;
};

/* DLT values as libpcap reports them; LINKTYPE_RAW (101) reads as DLT_RAW. */
static int link_of_dlt(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB: return ROCE_LINK_ETH;
	case DLT_LINUX_SLL: return ROCE_LINK_SLL;
#ifdef DLT_LINUX_SLL2
	case DLT_LINUX_SLL2: return ROCE_LINK_SLL2;
#endif
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6: return ROCE_LINK_RAW;
	}
	return -1;
}

/* libpcap says "No such file or directory" in its message; keep errno too. */
static int open_errno(const char *path)
{
	FILE *fp = fopen(path, "rb");

	if (!fp)
		return -errno;
	fclose(fp);
	return -EIO;
}

int roce_pcap_open(const char *path, struct roce_pcap_reader **r, char *err)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(
		path, PCAP_TSTAMP_PRECISION_NANO, perr);

	if (!pc) {
		snprintf(err, ROCE_PCAP_ERRLEN, "%s", perr);
		return open_errno(path);
	}
	int link = link_of_dlt(pcap_datalink(pc));
	if (link < 0) {
		snprintf(err, ROCE_PCAP_ERRLEN,
			 "%s: link type %s is not Ethernet, Linux cooked or "
			 "raw IP", path,
			 pcap_datalink_val_to_name(pcap_datalink(pc)) ?: "?");
		pcap_close(pc);
		return -EPROTONOSUPPORT;
	}
	*r = calloc(1, sizeof(**r));
	if (!*r) {
		pcap_close(pc);
		snprintf(err, ROCE_PCAP_ERRLEN, "out of memory");
		return -ENOMEM;
	}
	(*r)->pc = pc;
	(*r)->link = (unsigned)link;
	(*r)->nano = pcap_get_tstamp_precision(pc) == PCAP_TSTAMP_PRECISION_NANO;
	return 0;
}

unsigned roce_pcap_link(const struct roce_pcap_reader *r)
{
	return r->link;
}

int roce_pcap_next(struct roce_pcap_reader *r, struct roce_pcap_rec *rec,
		   char *err)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc = pcap_next_ex(r->pc, &h, &data);

	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		snprintf(err, ROCE_PCAP_ERRLEN, "%s", pcap_geterr(r->pc));
		return -EIO;
	}
	uint64_t frac = (uint64_t)h->ts.tv_usec * (r->nano ? 1 : 1000);
	rec->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull + frac;
	rec->caplen = h->caplen;
	rec->wire_len = h->len;
	rec->data = data;
	return 1;
}

void roce_pcap_close(struct roce_pcap_reader *r)
{
	if (!r)
		return;
	pcap_close(r->pc);
	free(r);
}

int roce_pcap_create(const char *path, struct roce_pcap_writer **w, char *err)
{
	struct roce_pcap_writer *x = calloc(1, sizeof(*x));

	if (!x) {
		snprintf(err, ROCE_PCAP_ERRLEN, "out of memory");
		return -ENOMEM;
	}
	x->pc = pcap_open_dead_with_tstamp_precision(
		DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	x->d = x->pc ? pcap_dump_open(x->pc, path) : NULL;
	if (!x->d) {
		int e = errno ? -errno : -EIO;
		snprintf(err, ROCE_PCAP_ERRLEN, "%s: %s", path,
			 x->pc ? pcap_geterr(x->pc) : "libpcap failed");
		if (x->pc)
			pcap_close(x->pc);
		free(x);
		return e;
	}
	*w = x;
	return 0;
}

int roce_pcap_write(struct roce_pcap_writer *w, uint64_t ts_ns,
		    const uint8_t *frame, size_t len)
{
	return roce_pcap_write_cut(w, ts_ns, frame, len, len);
}

int roce_pcap_write_cut(struct roce_pcap_writer *w, uint64_t ts_ns,
			const uint8_t *frame, size_t caplen, size_t wire_len)
{
	struct pcap_pkthdr h = {
		.ts.tv_sec = (time_t)(ts_ns / 1000000000ull),
		/* tv_usec holds nanoseconds in a nanosecond-precision file */
		.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000ull),
		.caplen = (bpf_u_int32)caplen,
		.len = (bpf_u_int32)wire_len,
	};

	pcap_dump((u_char *)w->d, &h, frame);
	return ferror(pcap_dump_file(w->d)) ? -EIO : 0;
}

int roce_pcap_finish(struct roce_pcap_writer *w)
{
	if (!w)
		return 0;
	int rc = pcap_dump_flush(w->d) ? -EIO : 0;
	if (ferror(pcap_dump_file(w->d)))
		rc = -EIO;
	pcap_dump_close(w->d);
	pcap_close(w->pc);
	free(w);
	return rc;
}
