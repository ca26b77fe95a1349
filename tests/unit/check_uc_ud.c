/* SPDX-License-Identifier: MIT */
/* Unreliable Connected and Unreliable Datagram transports between two devices. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_pair.h"
#include "check_suites.h"

static const uint8_t gid_a[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };
static const uint8_t gid_b[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 2 };

/* Replaces a side's RC QP by one of another type. */
static void retype(struct side *s, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr init = {
		.send_cq = (struct ibv_cq *)(void *)s->cq,
		.recv_cq = (struct ibv_cq *)(void *)s->cq, .qp_type = t,
		.cap = { 64, 64, 2, 2, 64 },
	};

	ck_assert_int_eq(rocemu_qp_free(s->qp), 0);
	s->qp = rocemu_qp_new(s->pd, &init);
	ck_assert_ptr_nonnull(s->qp);
}

static void uc_connect(struct pair *p)
{
	struct pair_opts o = { .psn_a = 0, .psn_b = 0 };
	int m = IBV_QP_STATE;
	struct ibv_qp_attr a;

	retype(&p->a, IBV_QPT_UC);
	retype(&p->b, IBV_QPT_UC);
	for (int i = 0; i < 2; i++) {
		struct side *s = i ? &p->b : &p->a, *peer = i ? &p->a : &p->b;
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, m | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = rocemu_qp_num(peer->qp);
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		memcpy(a.ah_attr.grh.dgid.raw, i ? gid_a : gid_b, 16);
		/* UC needs no rd_atomic, RNR or retry attributes */
		ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, m | IBV_QP_AV |
						  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						  IBV_QP_RQ_PSN), 0);
		a.qp_state = IBV_QPS_RTS;
		ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, m | IBV_QP_SQ_PSN |
						  IBV_QP_TIMEOUT), -EINVAL);
		ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, m | IBV_QP_SQ_PSN), 0);
	}
	(void)o;
}

START_TEST(test_uc_send_write_no_acks)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(7) }, *bad;

	pair_up(&p, &o);
	uc_connect(&p);
	for (int i = 0; i < 5000; i++)
		p.a.buf[i] = (uint8_t)(i * 3);
	post_recv1(&p.b, 1, 10000, 8000);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_SEND, 1, 0, 5000, 0, 0, 0), 0);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 2, 0, 3000,
				    addr_of(&p.b, 20000), rocemu_mr_rkey(p.b.mr), 0), 0);
	sge = (struct ibv_sge){ addr_of(&p.a, 0), 100, rocemu_mr_lkey(p.a.mr) };
	wr.wr.rdma.remote_addr = addr_of(&p.b, 30000);
	wr.wr.rdma.rkey = rocemu_mr_rkey(p.b.mr);
	post_recv1(&p.b, 2, 0, 0);
	ck_assert_int_eq(rocemu_post_send(p.a.qp, &wr, &bad), 0);
	for (uint64_t k = 1; k <= 3; k++)
		ck_assert_uint_eq(poll1(&p, &p.a).wr_id, k);
	struct ibv_wc r = poll1(&p, &p.b);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.byte_len, 5000);
	r = poll1(&p, &p.b);
	ck_assert_int_eq(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(be32toh(r.imm_data), 7);
	ck_assert(!memcmp(p.b.buf + 10000, p.a.buf, 5000));
	ck_assert(!memcmp(p.b.buf + 20000, p.a.buf, 3000));
	ck_assert(!memcmp(p.b.buf + 30000, p.a.buf, 100));
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_TX_PACKETS), 0);
	pair_down(&p);
}
END_TEST

/* Injects a UC SEND packet from a to b. */
static void inject_uc(struct pair *p, uint8_t op, uint32_t psn, uint32_t len,
		      uint8_t fillc)
{
	static uint8_t payload[1024];
	struct roce_frame f;
	uint8_t buf[1200];

	memset(payload, fillc, sizeof(payload));
	roce_frame_init(&f, 4);
	memcpy(f.src_gid, gid_a, 16);
	memcpy(f.dst_gid, gid_b, 16);
	f.ib.bth.opcode = op;
	f.ib.bth.dqpn = rocemu_qp_num(p->b.qp);
	f.ib.bth.psn = psn;
	f.ib.payload = payload;
	f.ib.payload_len = len;
	f.ib.bth.pad = (uint8_t)roce_pad_len(len);
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(p->w, buf, (size_t)n);
	rocemu_world_settle(p->w, 1000000);
}

/* A gap drops the rest of the message; the next message starts clean and
 * takes the same receive WQE (IBTA 9.8.3). */
START_TEST(test_uc_gap_drops_message)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	uc_connect(&p);
	post_recv1(&p.b, 1, 0, 4096);
	inject_uc(&p, 0x20, 0, 1024, 'x');	/* SEND_FIRST */
	inject_uc(&p, 0x22, 2, 100, 'x');	/* SEND_LAST; MIDDLE 1 lost */
	inject_uc(&p, 0x21, 3, 1024, 'x');	/* a stray MIDDLE: dropped */
	ck_assert_int_eq(cq_count(&p, &p.b), 0);
	inject_uc(&p, 0x24, 4, 10, 'y');	/* SEND_ONLY */
	struct ibv_wc r = poll1(&p, &p.b);
	ck_assert_uint_eq(r.wr_id, 1);
	ck_assert_uint_eq(r.byte_len, 10);
	ck_assert_uint_eq(p.b.buf[0], 'y');
	ck_assert_uint_ge(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_RX_DROP_UC_MESSAGE), 2);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_TX_PACKETS), 0);
	pair_down(&p);
}
END_TEST

/* No receive WQE on UC: the message is lost, not RNR-NAKed. */
START_TEST(test_uc_without_receive_is_lost)
{
	struct pair p;
	struct pair_opts o = { 0 };

	pair_up(&p, &o);
	uc_connect(&p);
	post_send1(&p.a, IBV_WR_SEND, 1, 0, 64, 0, 0, 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert_int_eq(cq_count(&p, &p.b), 0);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_RX_DROP_NO_RECV), 1);
	pair_down(&p);
}
END_TEST

static void ud_up(struct side *s, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	retype(s, IBV_QPT_UD);
	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE), -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE |
					  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(rocemu_qp_modify(s->qp, &a, IBV_QP_STATE |
					  IBV_QP_SQ_PSN), 0);
}

static int ud_send1(struct pair *p, struct rocemu_ah *ah, uint32_t len,
		    uint32_t qkey, enum ibv_wr_opcode op)
{
	struct ibv_sge sge = { addr_of(&p->a, 0), len, rocemu_mr_lkey(p->a.mr) };
	struct ibv_send_wr wr = { .wr_id = len, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(0xabcd) }, *bad;

	wr.wr.ud.ah = (struct ibv_ah *)(void *)ah;
	wr.wr.ud.remote_qpn = rocemu_qp_num(p->b.qp);
	wr.wr.ud.remote_qkey = qkey;
	return rocemu_post_send(p->a.qp, &wr, &bad);
}

START_TEST(test_ud_send_grh_and_fields)
{
	struct pair p;
	struct pair_opts o = { .mtu = IBV_MTU_1024 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	char path[] = "/tmp/rocemu-ud-XXXXXX";

	pair_up(&p, &o);
	ud_up(&p.a, 0x11111111);
	ud_up(&p.b, 0x11111111);
	memcpy(aa.grh.dgid.raw, gid_b, 16);
	aa.grh.hop_limit = 1; /* the wire's TTL is the route's: 64 (below) */
	struct rocemu_ah *ah = rocemu_ah_new(p.a.pd, &aa);
	int fd = mkstemp(path);
	close(fd);
	ck_assert_int_eq(rocemu_world_record(p.w, path), 0);
	for (int i = 0; i < 100; i++)
		p.a.buf[i] = (uint8_t)(i + 1);
	post_recv1(&p.b, 1, 0, 40 + 100);
	post_recv1(&p.b, 2, 1000, 40 + 4096);
	post_recv1(&p.b, 3, 6000, 40 + 8);
	ck_assert_int_eq(ud_send1(&p, ah, 100, 0x11111111, IBV_WR_SEND), 0);
	struct ibv_wc r = poll1(&p, &p.b);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(r.byte_len, 140);
	ck_assert(r.wc_flags & IBV_WC_GRH);
	ck_assert_uint_eq(r.src_qp, rocemu_qp_num(p.a.qp));
	/* the GRH area: 20 zero bytes, then the IPv4 header from 10.0.0.1 */
	for (int i = 0; i < 20; i++)
		ck_assert_uint_eq(p.b.buf[i], 0);
	ck_assert_uint_eq(p.b.buf[20], 0x45);
	ck_assert(!memcmp(p.b.buf + 20 + 12, gid_a + 12, 4));
	ck_assert(!memcmp(p.b.buf + 40, p.a.buf, 100));
	ck_assert_uint_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);

	/* wrong Q_Key: dropped and counted; the high bit means "the QP's" */
	ck_assert_int_eq(ud_send1(&p, ah, 8, 0x22222222, IBV_WR_SEND), 0);
	ck_assert_int_eq(cq_count(&p, &p.b), 0);
	ck_assert_uint_eq(rocemu_dev_counter(p.b.dev, ROCEMU_CNT_RX_DROP_QKEY), 1);
	ck_assert_int_eq(cq_count(&p, &p.a), 1);
	/* larger than the port MTU (4096): nothing sent, yet a success */
	uint64_t tx = rocemu_dev_counter(p.a.dev, ROCEMU_CNT_TX_PACKETS);
	ck_assert_int_eq(ud_send1(&p, ah, 4097, 0x11111111, IBV_WR_SEND), 0);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(rocemu_dev_counter(p.a.dev, ROCEMU_CNT_TX_PACKETS), tx);
	/* with immediate, Q_Key from the QP by the high bit */
	struct ibv_qp_attr qa = { .qkey = 0x11111111 };
	ck_assert_int_eq(rocemu_qp_modify(p.a.qp, &qa, IBV_QP_QKEY), 0);
	ck_assert_int_eq(ud_send1(&p, ah, 8, 0x80000000, IBV_WR_SEND_WITH_IMM), 0);
	r = poll1(&p, &p.b);
	ck_assert_int_eq(r.status, IBV_WC_SUCCESS);
	ck_assert(r.wc_flags & IBV_WC_WITH_IMM);
	ck_assert_uint_eq(be32toh(r.imm_data), 0xabcd);
	ck_assert_uint_eq(r.wr_id, 2);
	rocemu_world_record(p.w, NULL);

	/* on the wire: UD_SEND_ONLY, DETH, and rxe's source port for 0x11 */
	char err[ROCE_PCAP_ERRLEN];
	struct roce_pcap_reader *rd;
	struct roce_pcap_rec rec;
	struct roce_frame f;
	const char *why;
	ck_assert_int_eq(roce_pcap_open(path, &rd, err), 0);
	ck_assert_int_eq(roce_pcap_next(rd, &rec, err), 1);
	ck_assert_int_eq(roce_frame_parse(ROCE_LINK_ETH, rec.data, rec.caplen,
					  rec.wire_len, &f, &why), 0);
	ck_assert_uint_eq(f.ib.bth.opcode, 0x64);
	/* Linux's ib_core gives a RoCEv2 AH the route's hop limit: rxe's
	 * captures (pcaps/rxe/ud_send.pcap, hop_limit 1 asked) show TTL 64 */
	ck_assert_uint_eq(f.ttl, 64);
	ck_assert(!f.ib.bth.ackreq);
	ck_assert_uint_eq(f.ib.deth.qkey, 0x11111111);
	ck_assert_uint_eq(f.ib.deth.src_qp, rocemu_qp_num(p.a.qp));
	if (rocemu_qp_num(p.a.qp) == 0x11)
		ck_assert_uint_eq(f.sport, 0xdf94);
	roce_pcap_close(rd);
	unlink(path);
	rocemu_ah_free(ah);
	pair_down(&p);
}
END_TEST

START_TEST(test_ud_refuses_rdma)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };

	pair_up(&p, &o);
	ud_up(&p.a, 1);
	struct rocemu_ah *ah = rocemu_ah_new(p.a.pd, &aa);
	ck_assert_int_eq(ud_send1(&p, ah, 8, 1, IBV_WR_RDMA_WRITE), -EINVAL);
	ck_assert_int_eq(ud_send1(&p, NULL, 8, 1, IBV_WR_SEND), -EINVAL);
	rocemu_ah_free(ah);
	pair_down(&p);
}
END_TEST

/* An AH destroyed right after a send was posted to it: the address was
 * copied at post time (as rxe does), so the datagram still goes there,
 * even when a new AH to elsewhere takes the old one's memory. */
START_TEST(test_ud_ah_destroyed_after_post)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };

	pair_up(&p, &o);
	ud_up(&p.a, 5);
	ud_up(&p.b, 5);
	memcpy(aa.grh.dgid.raw, gid_b, 16);
	struct rocemu_ah *ah = rocemu_ah_new(p.a.pd, &aa);
	post_recv1(&p.b, 1, 0, 40 + 8);
	ck_assert_int_eq(ud_send1(&p, ah, 8, 5, IBV_WR_SEND), 0);
	ck_assert_int_eq(rocemu_ah_free(ah), 0);
	aa.grh.dgid.raw[15] = 77; /* nobody */
	struct rocemu_ah *other = rocemu_ah_new(p.a.pd, &aa);
	ck_assert_int_eq(poll1(&p, &p.b).status, IBV_WC_SUCCESS);
	ck_assert_int_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	rocemu_ah_free(other);
	pair_down(&p);
}
END_TEST

/* rocemu_qp_connect takes a UC QP from RESET to RTS with UC's attributes
 * (no RNR, retry or rd_atomic ones, which UC refuses), and data flows. */
START_TEST(test_connect_uc)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct rocemu_rc_params cp = { .mtu = IBV_MTU_1024,
				       .access = IBV_ACCESS_REMOTE_WRITE,
				       .timeout = 14, .retry_cnt = 7,
				       .rnr_retry = 7, .min_rnr_timer = 12,
				       .max_rd_atomic = 16 };
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;

	pair_up(&p, &o);
	retype(&p.a, IBV_QPT_UC);
	retype(&p.b, IBV_QPT_UC);
	for (int i = 0; i < 2; i++) {
		struct side *s = i ? &p.b : &p.a, *peer = i ? &p.a : &p.b;
		cp.peer_qpn = rocemu_qp_num(peer->qp);
		cp.sq_psn = i ? 0x200 : 0x100;
		cp.rq_psn = i ? 0x100 : 0x200;
		memcpy(cp.peer_gid, i ? gid_a : gid_b, 16);
		ck_assert_int_eq(rocemu_qp_connect(s->qp, &cp), 0);
		ck_assert_int_eq(rocemu_qp_query(s->qp, &q, &qi), 0);
		ck_assert_int_eq(q.qp_state, IBV_QPS_RTS);
		ck_assert_uint_eq(q.dest_qp_num, cp.peer_qpn);
		ck_assert_uint_eq(q.sq_psn, cp.sq_psn);
		ck_assert_uint_eq(q.rq_psn, cp.rq_psn);
		ck_assert_int_eq(q.path_mtu, IBV_MTU_1024);
		ck_assert_int_eq(q.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
	}
	for (int i = 0; i < 300; i++)
		p.a.buf[i] = (uint8_t)(i * 7);
	ck_assert_int_eq(post_send1(&p.a, IBV_WR_RDMA_WRITE, 1, 0, 300,
				    addr_of(&p.b, 4000), rocemu_mr_rkey(p.b.mr), 0), 0);
	ck_assert_uint_eq(poll1(&p, &p.a).status, IBV_WC_SUCCESS);
	ck_assert(!memcmp(p.b.buf + 4000, p.a.buf, 300));
	pair_down(&p);
}
END_TEST

/* ... and a UD QP with its Q_Key and send PSN, the peer's address being
 * the address handle's business, not the QP's. */
START_TEST(test_connect_ud)
{
	struct pair p;
	struct pair_opts o = { 0 };
	struct rocemu_rc_params cp = { .mtu = IBV_MTU_1024, .sq_psn = 0x345,
				       .qkey = 0x11111111, .peer_qpn = 77,
				       .access = IBV_ACCESS_REMOTE_WRITE,
				       .max_rd_atomic = 16 };
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;

	pair_up(&p, &o);
	retype(&p.a, IBV_QPT_UD);
	memcpy(cp.peer_gid, gid_b, 16);
	ck_assert_int_eq(rocemu_qp_connect(p.a.qp, &cp), 0);
	ck_assert_int_eq(rocemu_qp_query(p.a.qp, &q, &qi), 0);
	ck_assert_int_eq(q.qp_state, IBV_QPS_RTS);
	ck_assert_uint_eq(q.qkey, 0x11111111);
	ck_assert_uint_eq(q.sq_psn, 0x345);
	pair_down(&p);
}
END_TEST

Suite *uc_ud_suite(void)
{
	Suite *s = suite_create("uc_ud");
	TCase *tc = tcase_create("transports");

	tcase_add_test(tc, test_uc_send_write_no_acks);
	tcase_add_test(tc, test_uc_gap_drops_message);
	tcase_add_test(tc, test_uc_without_receive_is_lost);
	tcase_add_test(tc, test_ud_send_grh_and_fields);
	tcase_add_test(tc, test_ud_refuses_rdma);
	tcase_add_test(tc, test_ud_ah_destroyed_after_post);
	tcase_add_test(tc, test_connect_uc);
	tcase_add_test(tc, test_connect_ud);
	suite_add_tcase(s, tc);
	return s;
}
