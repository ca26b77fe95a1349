/* SPDX-License-Identifier: MIT */
/* Ladders: trace events as text and back, the layout of a capture with events placed between its packets, the text width. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_suites.h"
#include "rocemu/frame.h"
#include "rocemu/ladder.h"
#include "rocemu/pcapio.h"

static struct rocemu_event event(enum rocemu_event_kind kind,
				 const uint8_t gid[16], uint32_t qpn,
				 uint64_t frames, const char *status)
{
	struct rocemu_event ev = {.kind = kind,
				  .frames = frames,
				  .time_ns = 1000 * frames,
				  .qpn = qpn,
				  .slot = 3,
				  .wr_id = 77,
				  .len = 64};

	memcpy(ev.gid, gid, 16);
	strcpy(ev.dev, "devX");
	strcpy(ev.op, "RDMA_WRITE");
	if (kind == ROCEMU_EV_CQE)
		strcpy(ev.status, status);
	return ev;
}

static void assert_events_eq(const struct rocemu_event *a,
			     const struct rocemu_event *b)
{
	ck_assert_int_eq(a->kind, b->kind);
	ck_assert_uint_eq(a->frames, b->frames);
	ck_assert_uint_eq(a->time_ns, b->time_ns);
	ck_assert_str_eq(a->dev, b->dev);
	ck_assert_mem_eq(a->gid, b->gid, 16);
	ck_assert_uint_eq(a->qpn, b->qpn);
	ck_assert_uint_eq(a->slot, b->slot);
	ck_assert_str_eq(a->op, b->op);
	ck_assert_str_eq(a->status, b->status);
	ck_assert_uint_eq(a->wr_id, b->wr_id);
	ck_assert_uint_eq(a->len, b->len);
	ck_assert_uint_eq(a->seen, b->seen);
	ck_assert_uint_eq(a->last_icrc, b->last_icrc);
	ck_assert_str_eq(a->rule, b->rule);
	ck_assert_str_eq(a->text, b->text);
}

/* Every kind, IPv4-mapped and IPv6 addresses, the largest values. */
START_TEST(test_event_round_trips)
{
	static const uint8_t v4[16] = {
	    [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 9};
	static const uint8_t v6[16] = {0xfd, [15] = 2};
	static const enum rocemu_event_kind kinds[] = {
	    ROCEMU_EV_WQE, ROCEMU_EV_CQE, ROCEMU_EV_RECV_WQE, ROCEMU_EV_WHY,
	    ROCEMU_EV_STATE};
	struct rocemu_event ev = event(kinds[_i % 5], _i / 5 ? v6 : v4,
				       0xffffff, UINT64_MAX, "REM_ACCESS_ERR"),
			    back;
	char line[ROCEMU_EV_LINE];

	ev.wr_id = UINT64_MAX;
	ev.len = UINT32_MAX;
	ev.slot = UINT32_MAX;
	ev.seen = UINT64_MAX;
	ev.last_icrc = UINT32_MAX;
	if (ev.kind == ROCEMU_EV_WHY) {
		memset(ev.rule, 'r', ROCEMU_EV_NAME - 1);
		memcpy(ev.rule, "IBTA 9.7", 8); /* its space goes out as '_' */
	}
	if (ev.kind == ROCEMU_EV_WHY || ev.kind == ROCEMU_EV_STATE) {
		/* the longest text, with the other keys' shapes in it */
		memset(ev.text, 'x', ROCEMU_EV_TEXT - 1);
		memcpy(ev.text, "rkey 0x1de len=4 text= ok", 25);
	}
	int n = rocemu_event_format(line, sizeof(line), &ev);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (int)sizeof(line));
	ck_assert_int_eq(line[n - 1], '\n');
	ck_assert_int_eq(rocemu_event_parse(line, &back), 0);
	assert_events_eq(&ev, &back);
}
END_TEST

static const char *const bad_lines[] = {
    "",
    "sqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len=1",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len=1 "
    "len=1",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len=1 "
    "x=1",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND status=SUCCESS "
    "wr_id=0 len=1",
    "cqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len=1",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x1000000 slot=0 op=SEND wr_id=0 "
    "len=1",
    "wqe frames=-1 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len=1",
    "wqe frames=0 t=0 dev=a gid=10.0.0.256 qp=0x11 slot=0 op=SEND wr_id=0 "
    "len=1",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 "
    "len=4294967296",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 "
    "op=SEND_LONGER_THAN_THIRTY_ONE_CHARS wr_id=0 len=1",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len 1",
    "rwqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=RECV "
    "status=SUCCESS wr_id=0 len=1",
    /* seen without last */
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len=1 "
    "seen=3",
    /* a why without its rule, a why or state without text, text on a wqe */
    "why frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=- wr_id=0 len=0 "
    "text=no rule",
    "why frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=- wr_id=0 len=0 "
    "rule=x",
    "state frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=- wr_id=0 len=0",
    "wqe frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=SEND wr_id=0 len=1 "
    "text=x",
    "state frames=0 t=0 dev=a gid=10.0.0.1 qp=0x11 slot=0 op=- wr_id=0 len=0 "
    "rule=x text=a state has no rule",
};

START_TEST(test_event_parse_rejects)
{
	struct rocemu_event ev;

	ck_assert_msg(rocemu_event_parse(bad_lines[_i], &ev) == -EINVAL,
		      "accepted: %s", bad_lines[_i]);
}
END_TEST

/* err_write_bad_rkey.pcap: a WRITE from the requester and the NAK back.
 * The ends are taken from the capture's own packets. */
struct two_ends {
	uint8_t req_gid[16], resp_gid[16];
	uint32_t req_qpn, resp_qpn;
};

static void load_bad_rkey(struct roce_capture *c, struct two_ends *e)
{
	char path[512], err[ROCE_PCAP_ERRLEN];

	snprintf(path, sizeof(path), "%s/rxe/err_write_bad_rkey.pcap",
		 t_pcap_dir());
	ck_assert_msg(roce_capture_load(path, c, err) == 0, "%s: %s", path,
		      err);
	ck_assert_uint_eq(c->n, 2);
	memcpy(e->req_gid, c->pkts[0].f.src_gid, 16);
	memcpy(e->resp_gid, c->pkts[0].f.dst_gid, 16);
	e->resp_qpn = c->pkts[0].f.ib.bth.dqpn;
	e->req_qpn = c->pkts[1].f.ib.bth.dqpn;
}

START_TEST(test_layout_places_events)
{
	struct roce_capture c;
	struct two_ends e;
	struct roce_ladder l;

	load_bad_rkey(&c, &e);
	struct rocemu_event evs[] = {
	    event(ROCEMU_EV_WQE, e.req_gid, e.req_qpn, 0, ""),
	    event(ROCEMU_EV_WQE, e.resp_gid, e.resp_qpn, 1, ""),
	    event(ROCEMU_EV_CQE, e.req_gid, e.req_qpn, 2, "REM_ACCESS_ERR"),
	    event(ROCEMU_EV_CQE, e.req_gid, e.req_qpn + 1, 2, "SUCCESS"),
	};
	ck_assert_int_eq(
	    roce_ladder_build(&c, evs, 4, ROCE_LADDER_ALL_FLOWS, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.events_unplaced, 1);
	const struct roce_ladder_chart *ch = &l.charts[0];
	ck_assert_uint_eq(ch->n, 5);
	ck_assert_uint_eq(ch->packets, 2);
	/* kind, column, frame, style, in time order */
	static const struct {
		int kind;
		unsigned col;
		uint64_t no;
		int style;
	} want[] = {
	    {ROCE_LADDER_WQE, 0, 0, ROCE_LADDER_NORMAL},
	    {ROCE_LADDER_PACKET, 0, 1, ROCE_LADDER_NORMAL},
	    {ROCE_LADDER_WQE, 1, 0, ROCE_LADDER_NORMAL},
	    {ROCE_LADDER_PACKET, 1, 2, ROCE_LADDER_ERROR},
	    {ROCE_LADDER_CQE, 0, 0, ROCE_LADDER_ERROR},
	};
	for (unsigned i = 0; i < 5; i++) {
		ck_assert_int_eq(ch->rows[i].kind, want[i].kind);
		ck_assert_uint_eq(ch->rows[i].col, want[i].col);
		ck_assert_uint_eq(ch->rows[i].frame_no, want[i].no);
		ck_assert_int_eq(ch->rows[i].style, want[i].style);
	}
	/* IBTA 9.7.5.2: the NAK's syndrome names its code; the label shows it
	 * and the MSN the capture carries. */
	const struct roce_aeth *a = &c.pkts[1].f.ib.aeth;
	ck_assert_uint_eq(roce_aeth_type(a->syndrome), ROCE_AETH_NAK);
	char want_aeth[64];
	snprintf(want_aeth, sizeof(want_aeth), " NAK %s msn %u",
		 roce_nak_code_name(roce_aeth_value(a->syndrome)), a->msn);
	ck_assert_ptr_nonnull(strstr(ch->rows[3].label, want_aeth));
	ck_assert_ptr_nonnull(strstr(ch->rows[0].label, "SQ[3]"));
	ck_assert_ptr_nonnull(strstr(ch->rows[4].label, "CQ[3]"));
	roce_ladder_free(&l);

	ck_assert_int_eq(roce_ladder_build(&c, evs, 4, 1, &l), -ENOENT);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_ptr_null(l.charts);
	roce_capture_free(&c);
}
END_TEST

/* srq.pcap: two connections between the same two addresses. An event
 * joins the chart of its own QP, whichever order the events come in. */
START_TEST(test_layout_events_find_their_flow)
{
	char path[512], err[ROCE_PCAP_ERRLEN];
	struct roce_capture c;
	struct roce_ladder l;
	struct rocemu_event evs[4];

	snprintf(path, sizeof(path), "%s/rxe/srq.pcap", t_pcap_dir());
	ck_assert_msg(roce_capture_load(path, &c, err) == 0, "%s", err);
	ck_assert_uint_eq(roce_flows_count(c.flows), 2);
	/* flow 1's two ends first, then flow 0's; slot i tells them apart */
	for (unsigned i = 0; i < 4; i++) {
		const struct roce_flow *f = roce_flows_get(c.flows, 1 - i / 2);
		const struct roce_flow_end *e = &f->end[i % 2];
		evs[i] = event(ROCEMU_EV_WQE, e->gid, e->qpn, 0, "");
		evs[i].slot = i;
	}
	ck_assert_int_eq(
	    roce_ladder_build(&c, evs, 4, ROCE_LADDER_ALL_FLOWS, &l), 0);
	ck_assert_uint_eq(l.events_unplaced, 0);
	for (unsigned k = 0; k < 2; k++) {
		const struct roce_ladder_chart *ch = &l.charts[k];
		unsigned notes = 0;
		for (size_t r = 0; r < ch->n; r++) {
			if (ch->rows[r].kind != ROCE_LADDER_WQE)
				continue;
			char want[16];
			unsigned i = (1 - k) * 2 + ch->rows[r].col;
			snprintf(want, sizeof(want), "SQ[%u]", i);
			ck_assert_msg(strstr(ch->rows[r].label, want),
				      "chart %u: %s", k, ch->rows[r].label);
			notes++;
		}
		ck_assert_uint_eq(notes, 2);
	}
	roce_ladder_free(&l);
	roce_capture_free(&c);
}
END_TEST

/*
 * Each chart's rows are allocated for what it holds and no more: srq.pcap
 * has flows of a few packets each, and a chart that reserved rows ahead
 * (32 at first) made a capture of 10^6 two-packet flows take 4 GB. A row
 * is 128 bytes; the allocator may round a block up by a few words.
 */
START_TEST(test_layout_rows_sized_to_fit)
{
	char path[512], err[ROCE_PCAP_ERRLEN];
	struct roce_capture c;
	struct roce_ladder l;
	struct rocemu_event ev;
	const struct roce_flow *f;

	snprintf(path, sizeof(path), "%s/rxe/srq.pcap", t_pcap_dir());
	ck_assert_msg(roce_capture_load(path, &c, err) == 0, "%s", err);
	f = roce_flows_get(c.flows, 1);
	ev = event(ROCEMU_EV_WQE, f->end[0].gid, f->end[0].qpn, 0, "");
	ck_assert_int_eq(
	    roce_ladder_build(&c, &ev, 1, ROCE_LADDER_ALL_FLOWS, &l), 0);
	for (size_t k = 0; k < l.n; k++) {
		const struct roce_ladder_chart *ch = &l.charts[k];
		size_t need = ch->n * sizeof(*ch->rows);
		size_t got = malloc_usable_size(ch->rows);
		ck_assert_uint_gt(ch->n, 0);
		ck_assert_msg(got >= need && got <= need + 32,
			      "chart %zu: %zu rows in a block of %zu bytes", k,
			      ch->n, got);
	}
	roce_ladder_free(&l);
	roce_capture_free(&c);
}
END_TEST

/* Labels as long as they get still give lines of 100 columns at most. */
START_TEST(test_text_fits_100_columns)
{
	struct roce_capture c;
	struct two_ends e;
	struct roce_ladder l;
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;

	load_bad_rkey(&c, &e);
	struct rocemu_event ev =
	    event(ROCEMU_EV_CQE, e.resp_gid, e.resp_qpn, UINT64_MAX,
		  "WR_FLUSH_ERR_BUT_MUCH_LONGER");
	memset(ev.op, 'X', ROCEMU_EV_NAME - 1);
	ev.wr_id = UINT64_MAX;
	ev.len = UINT32_MAX;
	ev.slot = UINT32_MAX;
	ck_assert_int_eq(roce_ladder_build(&c, &ev, 1, 0, &l), 0);
	ck_assert_uint_eq(l.charts[0].n, 3);
	FILE *f = open_memstream(&text, &len);
	ck_assert_int_eq(roce_ladder_write_text(f, &l), 0);
	fclose(f);
	unsigned lines = 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), lines++)
		ck_assert_msg(strlen(line) <= 100, "%zu columns: %s",
			      strlen(line), line);
	/* the title, the heads and their lifelines, three rows */
	ck_assert_uint_eq(lines, 1 + 2 + 3);
	free(text);
	roce_ladder_free(&l);
	roce_capture_free(&c);
}
END_TEST

/* What a renderer wrote holds no byte a terminal or an XML parser could
 * take for something else: printable ASCII and newlines only. */
static void assert_plain(const char *what, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)s[i];
		ck_assert_msg(b == '\n' || (b >= 0x20 && b < 0x7f),
			      "%s: byte 0x%02x at %zu", what, b, i);
	}
}

/*
 * A ladder taller than an SVG's int coordinates can say (about 80
 * million rows: 13 million two-packet flows, or one long flow) is refused
 * whole, before anything is drawn; its heights are never summed in an
 * int. The rows are not there: only the counts are read.
 */
START_TEST(test_svg_too_tall_refused)
{
	struct roce_ladder_chart ch[3] = {
		{ .n = 40000000 }, { .n = 40000000 }, { .n = 40000000 } };
	struct roce_ladder l = { .n = 3, .charts = ch };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	ck_assert_int_eq(roce_ladder_write_svg(out, &l), -EFBIG);
	fclose(out);
	ck_assert_uint_eq(len, 0);
	free(buf);
	l.n = 1;
	ch[0].n = (size_t)1 << 40;
	out = open_memstream(&buf, &len);
	ck_assert_int_eq(roce_ladder_write_svg(out, &l), -EFBIG);
	fclose(out);
	ck_assert_uint_eq(len, 0);
	free(buf);
}
END_TEST

/* Names from a trace with ESC, BEL, a byte above ASCII and XML's
 * special characters: the text shows them as \xNN, the SVG as well,
 * with &<>"' escaped. */
START_TEST(test_render_escapes_trace_names)
{
	struct roce_capture c;
	struct two_ends e;
	struct roce_ladder l;
	char *text = NULL, *svg = NULL;
	size_t tlen = 0, slen = 0;

	load_bad_rkey(&c, &e);
	struct rocemu_event evs[] = {
	    event(ROCEMU_EV_WQE, e.req_gid, e.req_qpn, 0, ""),
	    event(ROCEMU_EV_CQE, e.req_gid, e.req_qpn, 2, "\x07" "BAD\xff"),
	};
	strcpy(evs[0].op, "\x1b[2J<A&'B\">");
	strcpy(evs[1].op, "SEND\x1b]0;x\x07");
	ck_assert_int_eq(
	    roce_ladder_build(&c, evs, 2, ROCE_LADDER_ALL_FLOWS, &l), 0);
	FILE *f = open_memstream(&text, &tlen);
	ck_assert_int_eq(roce_ladder_write_text(f, &l), 0);
	fclose(f);
	f = open_memstream(&svg, &slen);
	ck_assert_int_eq(roce_ladder_write_svg(f, &l), 0);
	fclose(f);
	assert_plain("text", text, tlen);
	assert_plain("svg", svg, slen);
	ck_assert_ptr_nonnull(strstr(text, "\\x1b[2J<A&'B\">"));
	ck_assert_ptr_nonnull(strstr(text, "SEND\\x1b]0;x\\x07"));
	ck_assert_ptr_nonnull(strstr(text, "\\x07BAD\\xff"));
	ck_assert_ptr_nonnull(
	    strstr(svg, "\\x1b[2J&lt;A&amp;&#39;B&quot;&gt;"));
	ck_assert_ptr_nonnull(strstr(svg, "\\x07BAD\\xff"));
	free(text);
	free(svg);
	roce_ladder_free(&l);
	roce_capture_free(&c);
}
END_TEST

/* A trace file in memory, under a path the loader can open. */
static void trace_in_memory(const char *body, char *path, size_t len,
			    int *fd)
{
	*fd = memfd_create("trace", 0);
	ck_assert_int_ge(*fd, 0);
	ck_assert_int_eq(write(*fd, body, strlen(body)), (ssize_t)strlen(body));
	snprintf(path, len, "/proc/self/fd/%d", *fd);
}

/* A comment line longer than any event (610 bytes) whose end looks like
 * an event (the event's text, then blanks): the comment is skipped
 * whole, its tail is no event. */
START_TEST(test_trace_long_comment_is_one_line)
{
	static const char ev_line[] = "wqe frames=0 t=0 dev=d gid=10.0.0.1 "
				      "qp=0x000011 slot=0 op=SEND wr_id=0 "
				      "len=1";
	char body[2048], path[64], err[256];
	struct rocemu_event *evs = NULL;
	size_t n = 0;
	int fd;

	size_t at = (size_t)snprintf(body, sizeof(body), "%s\n#",
				     ROCEMU_TRACE_MAGIC);
	size_t start = at - 1;
	memset(body + at, 'x', 510);	/* 511 bytes with the '#' */
	at += 510;
	at += (size_t)snprintf(body + at, sizeof(body) - at, "%s", ev_line);
	memset(body + at, ' ', start + 610 - at);
	at = start + 610;
	snprintf(body + at, sizeof(body) - at, "\n%s\n", ev_line);
	trace_in_memory(body, path, sizeof(path), &fd);
	ck_assert_msg(rocemu_trace_load(path, &evs, &n, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_uint_eq(n, 1);
	free(evs);
	close(fd);
}
END_TEST

/* ---- several captures merged, events placed by seen/last, runs folded -- */

/* A packet of the hand-built captures: an RC SEND_ONLY from a (10.0.0.1,
 * QP 0x11) to b (10.0.0.2, QP 0x12), or back, with its PSN; the same
 * arguments make the same bytes (a retransmission). */
struct hand_pkt {
	bool back; /* from b to a */
	uint32_t psn;
	uint64_t ts;
};

static size_t hand_frame(const struct hand_pkt *h, uint8_t *buf,
			 uint32_t *icrc)
{
	static const uint8_t a4[4] = {10, 0, 0, 1}, b4[4] = {10, 0, 0, 2};
	static const uint8_t payload[8] = "payload";
	struct roce_frame f;

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(h->back ? f.dst_gid : f.src_gid, a4);
	roce_gid_from_ipv4(h->back ? f.src_gid : f.dst_gid, b4);
	f.sport = 0xc001;
	f.ib.bth.opcode = 0x04; /* RC SEND_ONLY */
	f.ib.bth.dqpn = h->back ? 0x11 : 0x12;
	f.ib.bth.psn = h->psn;
	f.ib.payload = payload;
	f.ib.payload_len = sizeof(payload);
	int n = roce_frame_build(&f, buf, ROCE_FRAME_MAX);
	ck_assert_int_gt(n, 0);
	if (icrc)
		*icrc = roce_frame_built_icrc(buf, (size_t)n);
	return (size_t)n;
}

/* A capture of the n packets, loaded; its file is a memfd (fd). */
static void hand_capture(const struct hand_pkt *h, size_t n,
			 struct roce_capture *c, int *fd)
{
	char path[64], err[ROCE_PCAP_ERRLEN];
	uint8_t buf[ROCE_FRAME_MAX];
	struct roce_pcap_writer *w;

	*fd = memfd_create("capture", 0);
	ck_assert_int_ge(*fd, 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	ck_assert_msg(roce_pcap_create(path, &w, err) == 0, "%s", err);
	for (size_t i = 0; i < n; i++) {
		size_t len = hand_frame(&h[i], buf, NULL);
		ck_assert_int_eq(roce_pcap_write(w, h[i].ts, buf, len), 0);
	}
	ck_assert_int_eq(roce_pcap_finish(w), 0);
	ck_assert_msg(roce_capture_load(path, c, err) == 0, "%s", err);
}

/* The packet rows of the ladder's one chart, as "psn@capture:frame". */
static void packet_rows(const struct roce_ladder *l, char *out, size_t len)
{
	size_t at = 0;

	ck_assert_uint_eq(l->n, 1);
	out[0] = '\0';
	for (size_t i = 0; i < l->charts[0].n; i++) {
		const struct roce_ladder_row *r = &l->charts[0].rows[i];
		const char *psn = strstr(r->label, "psn 0x");
		if (r->kind != ROCE_LADDER_PACKET)
			continue;
		ck_assert_ptr_nonnull(psn);
		at += (size_t)snprintf(out + at, len - at, "%s%lx@%c%llu",
				       at ? " " : "",
				       strtoul(psn + 4, NULL, 16),
				       'a' + r->cap,
				       (unsigned long long)r->frame_no);
	}
}

static const struct {
	const char *what;
	struct hand_pkt a[5], b[5];
	size_t na, nb;
	const char *rows; /* psn@capture:frame, in the merged order */
	size_t shared, out_of_order;
} merges[] = {
    /* both hold all three: each once, in their (common) order */
    {"the same three packets",
     {{false, 1, 10}, {true, 9, 20}, {false, 2, 30}},
     {{false, 1, 11}, {true, 9, 19}, {false, 2, 31}}, 3, 3,
     "1@a1 9@a2 2@a3", 3, 0},
    /* a holds 1 and 3, b holds 2 and 3: 1 and 2 are both free to go
     * first, the earlier stamp (2's) goes first */
    {"two heads, the earlier first",
     {{false, 1, 20}, {false, 3, 40}},
     {{true, 2, 10}, {false, 3, 41}}, 2, 2, "2@b1 1@a1 3@a2", 1, 0},
    /* a retransmission: identical bytes twice in a, once in b; the
     * first in b is the first in a */
    {"a repeat matches by its rank",
     {{false, 5, 10}, {true, 5, 20}, {false, 5, 30}, {true, 6, 40}},
     {{false, 5, 11}, {true, 5, 21}, {false, 5, 31}}, 4, 3,
     "5@a1 5@a2 5@a3 6@a4", 3, 0},
    /* what only one capture holds is drawn too */
    {"disjoint captures", {{false, 1, 10}}, {{true, 2, 20}}, 1, 1,
     "1@a1 2@b1", 0, 0},
    /* the captures disagree on the order: the earliest head goes, and
     * the conflict is counted */
    {"captures that disagree",
     {{false, 1, 10}, {false, 2, 20}},
     {{false, 2, 5}, {false, 1, 30}}, 2, 2, "2@a2 1@a1", 2, 1},
};

START_TEST(test_merge_captures)
{
	struct roce_capture c[2];
	struct roce_ladder l;
	char rows[256];
	int fd[2];

	hand_capture(merges[_i].a, merges[_i].na, &c[0], &fd[0]);
	hand_capture(merges[_i].b, merges[_i].nb, &c[1], &fd[1]);
	struct roce_ladder_input in = {.caps = c, .ncaps = 2,
				       .only_flow = ROCE_LADDER_ALL_FLOWS};
	ck_assert_int_eq(roce_ladder_build_many(&in, &l), 0);
	packet_rows(&l, rows, sizeof(rows));
	ck_assert_msg(!strcmp(rows, merges[_i].rows), "%s: rows %s, want %s",
		      merges[_i].what, rows, merges[_i].rows);
	ck_assert_uint_eq(l.shared, merges[_i].shared);
	ck_assert_uint_eq(l.out_of_order, merges[_i].out_of_order);
	roce_ladder_free(&l);
	for (int k = 0; k < 2; k++) {
		roce_capture_free(&c[k]);
		close(fd[k]);
	}
}
END_TEST

/* b's events, from a trace of a process whose own capture is not given:
 * placed by the ICRC of the last frame b saw, among the frames of a's
 * capture; an event after a frame no capture holds goes by time, counted. */
START_TEST(test_events_placed_by_last_frame)
{
	static const uint8_t b_gid[16] = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 2};
	static const struct hand_pkt a[] = {
	    {false, 1, 10}, {true, 7, 20}, {false, 1, 30}, {false, 2, 40}};
	struct hand_pkt lost = {true, 8, 35};
	uint8_t buf[ROCE_FRAME_MAX];
	uint32_t icrc[4], lost_icrc;
	struct roce_capture c;
	struct roce_ladder l;
	int fd;

	for (int i = 0; i < 4; i++)
		hand_frame(&a[i], buf, &icrc[i]);
	hand_frame(&lost, buf, &lost_icrc);
	hand_capture(a, 4, &c, &fd);
	/* b's CQE after the second copy of PSN 1 (its 3rd frame: same
	 * ICRC as its 1st), its WQE after its own send, one event after a
	 * frame of b's that a's capture does not hold */
	struct rocemu_event evs[3] = {
	    event(ROCEMU_EV_WQE, b_gid, 0x12, 0, NULL),
	    event(ROCEMU_EV_CQE, b_gid, 0x12, 0, "SUCCESS"),
	    event(ROCEMU_EV_CQE, b_gid, 0x12, 0, "SUCCESS")};
	evs[0].seen = 2, evs[0].last_icrc = icrc[1];
	evs[1].seen = 3, evs[1].last_icrc = icrc[2];
	evs[2].seen = 4, evs[2].last_icrc = lost_icrc, evs[2].time_ns = 36;
	struct roce_ladder_trace t = {.evs = evs, .n = 3};
	struct roce_ladder_input in = {.caps = &c, .ncaps = 1, .traces = &t,
				       .ntraces = 1,
				       .only_flow = ROCE_LADDER_ALL_FLOWS};
	ck_assert_int_eq(roce_ladder_build_many(&in, &l), 0);
	/* P1 P7 WQE P1 CQE CQE(by time: after 30, before 40) P2 */
	static const enum roce_ladder_row_kind want[] = {
	    ROCE_LADDER_PACKET, ROCE_LADDER_PACKET, ROCE_LADDER_WQE,
	    ROCE_LADDER_PACKET, ROCE_LADDER_CQE,    ROCE_LADDER_CQE,
	    ROCE_LADDER_PACKET};
	ck_assert_uint_eq(l.charts[0].n, 7);
	for (size_t i = 0; i < 7; i++)
		ck_assert_msg(l.charts[0].rows[i].kind == want[i], "row %zu: %s",
			      i, l.charts[0].rows[i].label);
	ck_assert_uint_eq(l.charts[0].rows[3].frame_no, 3);
	ck_assert_uint_eq(l.by_time[0], 1);
	roce_ladder_free(&l);
	/* the same events as an older trace would have them (frames, no
	 * seen/last) with two captures: refused */
	struct roce_capture two[2] = {c, c};
	for (int i = 0; i < 3; i++)
		evs[i].seen = evs[i].last_icrc = 0, evs[i].frames = 1;
	in.caps = two;
	in.ncaps = 2;
	ck_assert_int_eq(roce_ladder_build_many(&in, &l), -EDOM);
	roce_capture_free(&c);
	close(fd);
}
END_TEST

/* SEND psn 5 and its RNR NAK back (here: a SEND back) ten times, then
 * the SEND that gets through: one row for the run, counting 10, with its
 * first and last frames; nothing folded when collapse is off or a run is
 * too short: eight repeats (what 1 + retry_cnt 7 gives) stay whole. */
START_TEST(test_collapse_runs)
{
	struct hand_pkt h[22];
	struct roce_capture c;
	struct roce_ladder l;
	int fd;
	size_t n = 0;

	for (int i = 0; i < 10; i++) {
		h[n++] = (struct hand_pkt){false, 5, 10 * n};
		h[n++] = (struct hand_pkt){true, 9, 10 * n};
	}
	h[n++] = (struct hand_pkt){false, 5, 10 * n};
	h[n++] = (struct hand_pkt){true, 6, 10 * n};
	hand_capture(h, n, &c, &fd);
	struct roce_ladder_input in = {.caps = &c, .ncaps = 1,
				       .only_flow = ROCE_LADDER_ALL_FLOWS};
	ck_assert_int_eq(roce_ladder_build_many(&in, &l), 0);
	ck_assert_uint_eq(l.charts[0].n, 22);
	roce_ladder_free(&l);
	in.collapse = true;
	ck_assert_int_eq(roce_ladder_build_many(&in, &l), 0);
	ck_assert_uint_eq(l.charts[0].n, 5);
	const struct roce_ladder_row *r = &l.charts[0].rows[2];
	ck_assert_int_eq(r->kind, ROCE_LADDER_REPEAT);
	ck_assert_uint_eq(r->repeat, 10);
	ck_assert_uint_eq(r->period, 2);
	ck_assert_uint_eq(r->first_no, 1);
	ck_assert_uint_eq(r->frame_no, 20);
	ck_assert_uint_eq(l.collapsed, 17);
	ck_assert_uint_eq(l.charts[0].rows[3].frame_no, 21);
	roce_ladder_free(&l);
	roce_capture_free(&c);
	close(fd);
	/* eight repeats and the last pair: no run */
	hand_capture(h + 4, 18, &c, &fd);
	ck_assert_int_eq(roce_ladder_build_many(&in, &l), 0);
	ck_assert_uint_eq(l.charts[0].n, 18);
	roce_ladder_free(&l);
	roce_capture_free(&c);
	close(fd);
}
END_TEST

/* A why event is an error note with its rule, kept when the text is
 * cut to fit; a state event a plain note. */
START_TEST(test_why_and_state_notes)
{
	/* b's QP is the one the packet names (a's QPN is not in it) */
	static const uint8_t b_gid[16] = {[10] = 0xff, [11] = 0xff, 10, 0, 0, 2};
	static const struct hand_pkt h[] = {{false, 1, 10}};
	struct roce_capture c;
	struct roce_ladder l;
	char *text = NULL;
	size_t len = 0;
	int fd;

	hand_capture(h, 1, &c, &fd);
	struct rocemu_event evs[2] = {
	    event(ROCEMU_EV_WHY, b_gid, 0x12, 1, NULL),
	    event(ROCEMU_EV_STATE, b_gid, 0x12, 1, NULL)};
	strcpy(evs[0].rule, "IBTA_9.9.9");
	memset(evs[0].text, 'w', 200);
	memcpy(evs[0].text, "modify_qp RTR:", 14);
	strcpy(evs[1].text, "QP 0x11 RTS sq_psn 0x2");
	ck_assert_int_eq(roce_ladder_build(&c, evs, 2, ROCE_LADDER_ALL_FLOWS, &l),
			 0);
	ck_assert_uint_eq(l.charts[0].n, 3);
	const struct roce_ladder_row *why = &l.charts[0].rows[1];
	ck_assert_int_eq(why->kind, ROCE_LADDER_WHY);
	ck_assert_int_eq(why->style, ROCE_LADDER_ERROR);
	ck_assert_str_eq(why->rule, "IBTA_9.9.9");
	ck_assert_int_eq(l.charts[0].rows[2].kind, ROCE_LADDER_STATE);
	ck_assert_int_eq(l.charts[0].rows[2].style, ROCE_LADDER_NORMAL);
	FILE *out = open_memstream(&text, &len);
	ck_assert_int_eq(roce_ladder_write_text(out, &l), 0);
	fclose(out);
	/* the why note whole, over as many lines as it takes: its mark on
	 * the first, then every one of its 186 'w's, then its rule */
	char *why_at = strstr(text, " why: modify_qp RTR:www");
	ck_assert_msg(why_at, "%s", text);
	char *eol = strchr(why_at, '\n');
	ck_assert_ptr_nonnull(eol);
	char *mark = strstr(why_at, "!|");
	ck_assert_msg(mark && mark < eol, "the mark on the first line: %s",
		      text);
	char *state_at = strstr(why_at, " state: QP 0x11 RTS sq_psn 0x2 =|");
	ck_assert_msg(state_at, "%s", text);
	unsigned ws = 0;
	for (char *p = why_at; p < state_at; p++)
		ws += *p == 'w';
	ck_assert_uint_eq(ws, 1 + 186); /* "why" and the text's */
	char *rule_at = strstr(why_at, "[IBTA_9.9.9]");
	ck_assert_msg(rule_at && rule_at < state_at, "%s", text);
	for (char *line = text; line; line = strchr(line + 1, '\n'))
		ck_assert_uint_le(strcspn(line + 1, "\n"), 100);
	free(text);
	roce_ladder_free(&l);
	roce_capture_free(&c);
	close(fd);
}
END_TEST

/* A file cut in the middle of its third record: the two before it. */
START_TEST(test_partial_capture_kept)
{
	static const struct hand_pkt h[] = {
	    {false, 1, 10}, {true, 2, 20}, {false, 3, 30}};
	char path[64], err[ROCE_PCAP_ERRLEN];
	struct roce_capture c;
	bool partial;
	int fd;
	struct stat st;

	hand_capture(h, 3, &c, &fd);
	roce_capture_free(&c);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(ftruncate(fd, st.st_size - 5), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ck_assert_int_ne(roce_capture_load(path, &c, err), 0);
	ck_assert_int_eq(roce_ladder_capture_load(path, &c, err, &partial), 0);
	ck_assert(partial);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_ptr_nonnull(strstr(err, "truncated"));
	roce_capture_free(&c);
	close(fd);
}
END_TEST

Suite *ladder_suite(void)
{
	Suite *s = suite_create("ladder");
	TCase *tc = tcase_create("ladder");

	tcase_add_loop_test(tc, test_event_round_trips, 0, 10);
	tcase_add_loop_test(tc, test_event_parse_rejects, 0,
			    sizeof(bad_lines) / sizeof(bad_lines[0]));
	tcase_add_test(tc, test_layout_places_events);
	tcase_add_test(tc, test_layout_events_find_their_flow);
	tcase_add_test(tc, test_layout_rows_sized_to_fit);
	tcase_add_test(tc, test_text_fits_100_columns);
	tcase_add_test(tc, test_render_escapes_trace_names);
	tcase_add_test(tc, test_trace_long_comment_is_one_line);
	tcase_add_test(tc, test_svg_too_tall_refused);
	tcase_add_loop_test(tc, test_merge_captures, 0,
			    sizeof(merges) / sizeof(merges[0]));
	tcase_add_test(tc, test_events_placed_by_last_frame);
	tcase_add_test(tc, test_collapse_runs);
	tcase_add_test(tc, test_partial_capture_kept);
	tcase_add_test(tc, test_why_and_state_notes);
	suite_add_tcase(s, tc);
	return s;
}
