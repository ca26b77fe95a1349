/* SPDX-License-Identifier: MIT */
/* Batches of frames split across two threads, output kept in capture order. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dump_batch.h"

enum {
	BATCH_FRAMES = 16384,
	/* Frames of any size fill it: the arena is BATCH_BYTES, and a frame
	 * that does not fit waits for the next batch, or has the empty
	 * arena grow to its size. */
	BATCH_BYTES = 8 << 20,
	/* Room one rendering may need; output grows below it. */
	RENDER_SLACK = 8192,
};

struct half {
	const struct batch *b;
	size_t from, to;
	char *out;
	size_t out_len, out_cap;
	struct dump_stats st;
	int err;
};

struct batch *batch_new(unsigned link, enum dump_style style)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->link = link;
	b->style = style;
	b->arena_cap = BATCH_BYTES;
	b->cap = BATCH_FRAMES;
	b->arena = malloc(b->arena_cap);
	b->recs = malloc(b->cap * sizeof(*b->recs));
	if (!b->arena || !b->recs) {
		batch_free(b);
		return NULL;
	}
	return b;
}

void batch_free(struct batch *b)
{
	if (!b)
		return;
	free(b->arena);
	free(b->recs);
	free(b);
}

bool batch_has_room(const struct batch *b, uint32_t caplen)
{
	if (b->n == 0)
		return true;
	return b->n < b->cap && caplen <= b->arena_cap - b->arena_len;
}

/* Makes the empty arena hold a frame larger than it; 0 or -ENOMEM. */
static int grow_arena(struct batch *b, size_t len)
{
	uint8_t *p = malloc(len);

	if (!p)
		return -ENOMEM;
	free(b->arena);
	b->arena = p;
	b->arena_cap = len;
	return 0;
}

int batch_add(struct batch *b, const uint8_t *data, uint32_t caplen,
	      uint32_t wire_len, uint64_t frame_no, int64_t rel_ns)
{
	if (!batch_has_room(b, caplen))
		return -ENOSPC;
	if (caplen > b->arena_cap && grow_arena(b, caplen))
		return -ENOMEM;
	memcpy(b->arena + b->arena_len, data, caplen);
	b->recs[b->n++] = (struct batch_rec){ frame_no, rel_ns, b->arena_len,
					      caplen, wire_len };
	b->arena_len += caplen;
	return 0;
}

void dump_render(struct roce_sb *sb, enum dump_style style,
		 const struct roce_dissect_in *in, const struct roce_frame *f)
{
	switch (style) {
	case STYLE_LINE: roce_fmt_line(sb, in, f); break;
	case STYLE_TREE: roce_fmt_tree(sb, in, f); break;
	case STYLE_JSON: roce_fmt_json(sb, in, f); break;
	}
}

static int grow(struct half *h)
{
	size_t cap = h->out_cap ? 2 * h->out_cap : 1 << 20;
	char *p = realloc(h->out, cap);

	if (!p)
		return -ENOMEM;
	h->out = p;
	h->out_cap = cap;
	return 0;
}

static void *run_half(void *arg)
{
	struct half *h = arg;
	const struct batch *b = h->b;
	struct roce_frame f;
	struct roce_sb sb;

	for (size_t i = h->from; i < h->to; i++) {
		const struct batch_rec *r = &b->recs[i];
		const char *why = "";
		int rc = roce_frame_parse(b->link, b->arena + r->off, r->caplen,
					  r->wire_len, &f, &why);
		dump_stats_add(&h->st, rc, why, &f);
		if (rc == -ENOMSG)
			continue;
		if (h->out_cap - h->out_len < RENDER_SLACK && grow(h)) {
			h->err = -ENOMEM;
			break;
		}
		struct roce_dissect_in in = { r->frame_no, r->rel_ns,
					      r->caplen, rc, why };
		roce_sb_init(&sb, h->out + h->out_len, h->out_cap - h->out_len);
		dump_render(&sb, b->style, &in, &f);
		h->out_len += sb.len;
	}
	return NULL;
}

int batch_process(struct batch *b, FILE *out, struct dump_stats *st)
{
	struct half h[2] = { { .b = b, .from = 0, .to = b->n / 2 },
			     { .b = b, .from = b->n / 2, .to = b->n } };
	pthread_t t;
	int rc = 0;

	if (pthread_create(&t, NULL, run_half, &h[0]))
		run_half(&h[0]); /* no second thread: do it here */
	else
		rc = 1;
	run_half(&h[1]);
	if (rc)
		pthread_join(t, NULL);
	rc = h[0].err ? h[0].err : h[1].err;
	for (int i = 0; i < 2 && !rc; i++) {
		if (h[i].out_len)
			fwrite(h[i].out, 1, h[i].out_len, out);
		dump_stats_merge(st, &h[i].st);
	}
	free(h[0].out);
	free(h[1].out);
	b->n = 0;
	b->arena_len = 0;
	return rc;
}
