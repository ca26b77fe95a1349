/* SPDX-License-Identifier: MIT */
/* rocemu_world_watch: every frame the wire carries, once, as sent; injected frames too; off again. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_pair.h"
#include "check_suites.h"

struct seen {
	unsigned frames, from_a, from_b, other;
	uint8_t last_op;
};

static void watch(void *arg, const uint8_t *frame, size_t len)
{
	struct seen *s = arg;
	struct roce_frame f;
	const char *why;
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	uint8_t a[16], b[16];

	roce_gid_from_ipv4(a, a4);
	roce_gid_from_ipv4(b, b4);
	s->frames++;
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, frame, len, len, &f,
					  &why), 0);
	s->last_op = f.ib.bth.opcode;
	if (!memcmp(f.src_gid, a, 16))
		s->from_a++;
	else if (!memcmp(f.src_gid, b, 16))
		s->from_b++;
	else
		s->other++;
}

START_TEST(every_frame_once)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct seen s = { 0 };

	pair_up(&p, &o);
	rocemu_world_watch(p.w, watch, &s);
	ck_assert_int_eq(post_recv1(&p.b, 1, 0, 4096), 0);
	/* 3000 bytes at MTU 1024: three packets, then one ACK */
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 2, 0, 3000, 0, 0,
				    IBV_SEND_SIGNALED), 0);
	ck_assert(rocemu_world_settle(p.w, 1000000000ull));
	ck_assert_uint_eq(s.from_a, 3);
	ck_assert_uint_eq(s.from_b, 1);
	ck_assert_uint_eq(s.last_op, ROCE_OP_RC_ACK);
	ck_assert_uint_eq(s.frames,
			  rocemu_dev_counter(p.a.dev, ROCEMU_CNT_TX_PACKETS) +
			  rocemu_dev_counter(p.b.dev, ROCEMU_CNT_TX_PACKETS));

	/* an injected frame is seen as it goes on the wire */
	struct roce_frame f;
	uint8_t buf[ROCE_FRAME_MAX], pay[8] = { 0 };
	uint64_t rng = 1;
	t_make_frame(&f, 4, ROCE_OP_UD_SEND_ONLY, pay, sizeof(pay), &rng);
	static const uint8_t c4[4] = { 10, 0, 0, 9 };
	roce_gid_from_ipv4(f.src_gid, c4);
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p.w, buf, (size_t)n);
	rocemu_world_settle(p.w, 1000000000ull);
	ck_assert_uint_eq(s.other, 1);

	/* off: nothing more is seen */
	unsigned before = s.frames;
	rocemu_world_watch(p.w, NULL, NULL);
	ck_assert_int_eq(post_recv1(&p.b, 3, 0, 64), 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 4, 0, 64, 0, 0,
				    IBV_SEND_SIGNALED), 0);
	ck_assert(rocemu_world_settle(p.w, 1000000000ull));
	ck_assert_uint_eq(s.frames, before);
	pair_down(&p);
}
END_TEST

/* Watching and recording at once: the watcher sees what the capture
 * holds, frame for frame. */
START_TEST(watch_and_record)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct seen s = { 0 };
	char path[] = "/tmp/rocemu-watch-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	pair_up(&p, &o);
	ck_assert_int_eq(rocemu_world_record(p.w, path), 0);
	rocemu_world_watch(p.w, watch, &s);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(post_recv1(&p.b, 1, 0, 4096), 0);
		ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 2, 0, 100, 0, 0,
					    IBV_SEND_SIGNALED), 0);
	}
	ck_assert(rocemu_world_settle(p.w, 1000000000ull));
	ck_assert_int_eq(rocemu_world_record(p.w, NULL), 0);
	struct roce_pcap_reader *r;
	struct roce_pcap_rec rec;
	char err[ROCE_PCAP_ERRLEN];
	unsigned recorded = 0;
	ck_assert_int_eq(roce_pcap_open(path, &r, err), 0);
	while (roce_pcap_next(r, &rec, err) == 1)
		recorded++;
	roce_pcap_close(r);
	ck_assert_uint_gt(recorded, 5);
	ck_assert_uint_eq(s.frames, recorded);
	pair_down(&p);
	close(fd);
	unlink(path);
}
END_TEST

Suite *watch_suite(void)
{
	Suite *s = suite_create("watch");
	TCase *tc = tcase_create("watch");

	tcase_add_test(tc, every_frame_once);
	tcase_add_test(tc, watch_and_record);
	suite_add_tcase(s, tc);
	return s;
}
