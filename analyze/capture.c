/* SPDX-License-Identifier: MIT */
/* A whole capture in memory: its RoCEv2 packets, parsed and classified into flows. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocemu/flow.h"
#include "rocemu/ladder.h"
#include "rocemu/pcapio.h"

static int grow(struct roce_capture *c, size_t *cap)
{
	if (c->n < *cap)
		return 0;
	size_t ncap = *cap ? 2 * *cap : 256;
	struct roce_cap_pkt *p = realloc(c->pkts, ncap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->pkts = p;
	*cap = ncap;
	return 0;
}

/* Keeps one record if it is RoCEv2 with a BTH: 0, or -ENOMEM. The copy
 * is parsed, once, so that the frame's pointers point into it. */
static int keep(struct roce_capture *c, size_t *cap,
		const struct roce_pcap_rec *rec)
{
	if (grow(c, cap))
		return -ENOMEM;
	struct roce_cap_pkt *p = &c->pkts[c->n];
	memset(p, 0, sizeof(*p));
	p->data = malloc(rec->caplen ? rec->caplen : 1);
	if (!p->data)
		return -ENOMEM;
	memcpy(p->data, rec->data, rec->caplen);
	p->no = c->frames;
	p->ts_ns = rec->ts_ns;
	p->caplen = rec->caplen;
	p->wire_len = rec->wire_len;
	p->why = "";
	p->parse_rc = roce_frame_parse(c->link, p->data, p->caplen,
				       p->wire_len, &p->f, &p->why);
	int id = -EINVAL;
	if (!p->parse_rc || p->parse_rc == -EBADMSG)
		id = roce_flows_classify(c->flows, &p->f, p->no, &p->dir);
	if (id < 0) {
		free(p->data);
		return id == -ENOMEM ? -ENOMEM : 0;
	}
	p->flow = (unsigned)id;
	c->n++;
	return 0;
}

/* roce_capture_load; with partial, a record that fails to read after
 * the file header ends the capture there instead (*partial set, the
 * reason in err) and what came before it is kept. */
static int load(const char *path, struct roce_capture *c, char *err,
		bool *partial)
{
	struct roce_pcap_reader *r;
	struct roce_pcap_rec rec;
	size_t cap = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = roce_pcap_open(path, &r, err);
	if (rc < 0)
		return rc;
	c->link = roce_pcap_link(r);
	c->flows = roce_flows_new();
	if (!c->flows) {
		rc = -ENOMEM;
		goto fail;
	}
	while ((rc = roce_pcap_next(r, &rec, err)) == 1) {
		c->frames++;
		rc = keep(c, &cap, &rec);
		if (rc)
			goto fail;
	}
	if (rc < 0 && partial && rc != -ENOMEM) {
		*partial = true;
		rc = 0;
	}
	if (rc < 0)
		goto fail;
	roce_pcap_close(r);
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err, ROCE_PCAP_ERRLEN, "out of memory");
	roce_pcap_close(r);
	roce_capture_free(c);
	return rc;
}

int roce_capture_load(const char *path, struct roce_capture *c, char *err)
{
	return load(path, c, err, NULL);
}

int roce_ladder_capture_load(const char *path, struct roce_capture *c,
			     char *err, bool *partial)
{
	*partial = false;
	return load(path, c, err, partial);
}

void roce_capture_free(struct roce_capture *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->pkts[i].data);
	free(c->pkts);
	roce_flows_free(c->flows);
	memset(c, 0, sizeof(*c));
}
