/* SPDX-License-Identifier: MIT */
/* Live capture from a network interface through libpcap, RoCEv2 only, as a pcap reader. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapio_local.h"
#include "rocemu/frame.h"

/* RoCEv2 is UDP to port 4791 (IBTA A17.2), over IPv4 or IPv6 */
static const char roce_filter[] = "udp dst port 4791";

enum {
	/* Long enough for a 9000-byte jumbo frame and its headers */
	LIVE_SNAPLEN = 10240,
	/* Packets are handed over within this time: a live dump is live */
	LIVE_TIMEOUT_MS = 100,
};

static int live_fail(pcap_t *pc, char *err, int code, const char *iface,
		     const char *what)
{
	snprintf(err, ROCE_PCAP_ERRLEN, "%.64s: %s", iface, what);
	pcap_close(pc);
	return code;
}

/* What pcap_activate's failure means for the user, and its errno. */
static int activate_fail(pcap_t *pc, int rc, const char *iface, char *err)
{
	char what[PCAP_ERRBUF_SIZE];

	switch (rc) {
	case PCAP_ERROR_PERM_DENIED:
		return live_fail(pc, err, -EPERM, iface,
				 "capturing needs the capture privilege "
				 "(CAP_NET_RAW)");
	case PCAP_ERROR_NO_SUCH_DEVICE:
		return live_fail(pc, err, -ENODEV, iface,
				 "no such interface (ip link lists them)");
	case PCAP_ERROR_IFACE_NOT_UP:
		return live_fail(pc, err, -ENETDOWN, iface,
				 "the interface is down");
	}
	snprintf(what, sizeof(what), "%s", pcap_geterr(pc));
	return live_fail(pc, err, -EIO, iface, what);
}

/* The RoCEv2 filter, compiled for pc and set on it. */
static int set_filter(pcap_t *pc, const char *iface, char *err)
{
	struct bpf_program prog;

	if (pcap_compile(pc, &prog, roce_filter, 1, PCAP_NETMASK_UNKNOWN) ||
	    pcap_setfilter(pc, &prog)) {
		char what[PCAP_ERRBUF_SIZE];
		snprintf(what, sizeof(what), "the filter '%s': %s",
			 roce_filter, pcap_geterr(pc));
		pcap_freecode(&prog);
		return live_fail(pc, err, -EIO, iface, what);
	}
	pcap_freecode(&prog);
	return 0;
}

int roce_pcap_open_live(const char *iface, struct roce_pcap_reader **out,
			char *err)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_create(iface, perr);

	if (!pc) {
		snprintf(err, ROCE_PCAP_ERRLEN, "%s: %s", iface, perr);
		return -ENODEV;
	}
	pcap_set_snaplen(pc, LIVE_SNAPLEN);
	pcap_set_timeout(pc, LIVE_TIMEOUT_MS);
	pcap_set_tstamp_precision(pc, PCAP_TSTAMP_PRECISION_NANO);
	int rc = pcap_activate(pc);
	if (rc < 0)
		return activate_fail(pc, rc, iface, err);
	int link = roce_pcap_link_of_dlt(pcap_datalink(pc));
	if (link < 0)
		return live_fail(pc, err, -EPROTONOSUPPORT, iface,
				 "its link type is not Ethernet, Linux "
				 "cooked or raw IP");
	rc = set_filter(pc, iface, err);
	if (rc)
		return rc;
	struct roce_pcap_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return live_fail(pc, err, -ENOMEM, iface, "out of memory");
	r->f.fd = -1;
	r->pc = pc;
	r->live = true;
	r->link = (unsigned)link;
	r->pc_nano = pcap_get_tstamp_precision(pc) ==
		     PCAP_TSTAMP_PRECISION_NANO;
	*out = r;
	return 0;
}

void roce_pcap_break(struct roce_pcap_reader *r)
{
	if (r && r->pc)
		pcap_breakloop(r->pc);
}
