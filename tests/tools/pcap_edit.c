/* SPDX-License-Identifier: MIT */
/*
 * pcap_edit: copies a capture with one transport field of one frame
 * changed, the frame built again by rocemu's codec so that its ICRC and
 * lengths stay right: a capture whose sender misbehaved on purpose.
 * usage: pcap_edit IN OUT FRAME FIELD VALUE
 *   FIELD: opcode, psn, msn, syndrome, atmack, qkey, or payloadN (the
 *   payload's byte N: a MAD's header, say) (VALUE in C notation)
 * Exits 0, or 1 with the reason when the frame lacks the field.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/proto.h"

/* Sets the field; false when the frame has no such field. */
static bool set_field(struct roce_frame *f, const char *field, uint64_t v)
{
	static uint8_t pl[ROCE_FRAME_MAX];
	struct roce_ib *ib = &f->ib;
	char *end;

	if (!strncmp(field, "payload", 7)) {
		unsigned long i = strtoul(field + 7, &end, 10);
		if (end == field + 7 || *end || i >= ib->payload_len ||
		    ib->payload_len > sizeof(pl))
			return false;
		memcpy(pl, ib->payload, ib->payload_len);
		pl[i] = (uint8_t)v;
		ib->payload = pl;
	} else if (!strcmp(field, "opcode"))
		ib->bth.opcode = (uint8_t)v;
	else if (!strcmp(field, "psn"))
		ib->bth.psn = (uint32_t)v & ROCE_PSN_MASK;
	else if (!strcmp(field, "msn") && (ib->exts & ROCE_EXT_AETH))
		ib->aeth.msn = (uint32_t)v & ROCE_PSN_MASK;
	else if (!strcmp(field, "syndrome") && (ib->exts & ROCE_EXT_AETH))
		ib->aeth.syndrome = (uint8_t)v;
	else if (!strcmp(field, "atmack") && (ib->exts & ROCE_EXT_ATMACK))
		ib->atmack = v;
	else if (!strcmp(field, "qkey") && (ib->exts & ROCE_EXT_DETH))
		ib->deth.qkey = (uint32_t)v;
	else
		return false;
	return true;
}

static int edit(const struct roce_pcap_rec *rec, unsigned link,
		const char *field, uint64_t v, uint8_t *out)
{
	struct roce_frame f;
	const char *why;

	if (roce_frame_parse(link, rec->data, rec->caplen, rec->wire_len, &f,
			     &why) || f.truncated) {
		fprintf(stderr, "pcap_edit: the frame is no whole RoCEv2 "
				"packet: %s\n", why);
		return -EINVAL;
	}
	if (!set_field(&f, field, v)) {
		fprintf(stderr, "pcap_edit: the frame has no %s\n", field);
		return -EINVAL;
	}
	f.link = ROCE_LINK_ETH;
	return roce_frame_build(&f, out, ROCE_FRAME_MAX);
}

int main(int argc, char **argv)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_writer *w;
	struct roce_pcap_rec rec;
	char err[ROCE_PCAP_ERRLEN];
	static uint8_t buf[ROCE_FRAME_MAX];
	uint64_t no = 0;
	int rc, bad = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: pcap_edit IN OUT FRAME FIELD VALUE\n");
		return 2;
	}
	uint64_t target = strtoull(argv[3], NULL, 0);
	uint64_t value = strtoull(argv[5], NULL, 0);
	if (roce_pcap_open(argv[1], &r, err) ||
	    roce_pcap_create(argv[2], &w, err)) {
		fprintf(stderr, "pcap_edit: %s\n", err);
		return 2;
	}
	while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
		if (++no != target) {
			bad |= roce_pcap_write(w, rec.ts_ns, rec.data,
					       rec.caplen);
			continue;
		}
		int n = edit(&rec, roce_pcap_link(r), argv[4], value, buf);
		if (n < 0)
			bad = 1;
		else
			bad |= roce_pcap_write(w, rec.ts_ns, buf, (size_t)n);
	}
	if (rc < 0 || no < target) {
		fprintf(stderr, "pcap_edit: %s\n",
			rc < 0 ? err : "no such frame");
		bad = 1;
	}
	roce_pcap_close(r);
	bad |= roce_pcap_finish(w);
	return bad ? 1 : 0;
}
