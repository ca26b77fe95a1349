/* SPDX-License-Identifier: MIT */
/* QP1 and the CM engine: GSI MADs checked as rxe checks them, then the IBTA's CM state machines on the deterministic wire. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "rocemu/device.h"

/* ---- frames to QP1, injected from 10.0.0.1 ----------------------------- */

static struct rocemu_dev *dev_at(struct rocemu_world *w, uint8_t last)
{
	struct rocemu_dev_cfg cfg = { .name = last == 1 ? "devA" : "devB",
				      .mtu = IBV_MTU_4096 };

	cfg.gid[10] = cfg.gid[11] = 0xff;
	cfg.gid[12] = 10;
	cfg.gid[15] = last;
	struct rocemu_dev *d = rocemu_dev_new(w, &cfg);
	ck_assert_ptr_nonnull(d);
	return d;
}

/* A REQ for service 0x1234 as its MAD. */
static void req_mad(uint8_t mad[ROCE_MAD_LEN])
{
	struct roce_cm_msg m = { .attr_id = ROCE_CM_ATTR_REQ, .tid = 7 };

	m.req.local_comm_id = 0x1111;
	m.req.service_id = 0x1234;
	m.req.local_qpn = 0x22;
	m.req.pkey = 0xffff;
	m.req.path_mtu = 3;
	m.req.primary.local_gid[10] = m.req.primary.local_gid[11] = 0xff;
	m.req.primary.local_gid[12] = 10;
	m.req.primary.local_gid[15] = 1;
	ck_assert_int_eq(roce_cm_encode(&m, mad), ROCE_MAD_LEN);
}

/* Puts a packet to QP 1 of 10.0.0.2 on the wire: UD SEND Only with the
 * GSI Q_Key unless the caller changes f before building (edit). */
static void inject_gsi(struct rocemu_world *w, const uint8_t *payload,
		       uint32_t len, void (*edit)(struct roce_frame *))
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	uint8_t buf[ROCE_FRAME_MAX];
	struct roce_frame f;

	roce_frame_init(&f, 4);
	roce_gid_from_ipv4(f.src_gid, a4);
	roce_gid_from_ipv4(f.dst_gid, b4);
	f.eth_src[0] = f.eth_dst[0] = 0x02;
	f.ttl = 64;
	f.sport = 0xc001;
	f.ib.bth.opcode = ROCE_OP_UD_SEND_ONLY;
	f.ib.bth.pkey = 0xffff;
	f.ib.bth.dqpn = ROCE_CM_QPN;
	f.ib.deth.qkey = ROCE_CM_QP1_QKEY;
	f.ib.deth.src_qp = ROCE_CM_QPN;
	f.ib.payload = payload;
	f.ib.payload_len = len;
	f.ib.bth.pad = (uint8_t)roce_pad_len(len);
	if (edit)
		edit(&f);
	int n = roce_frame_build(&f, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	rocemu_world_inject(w, buf, (size_t)n);
	rocemu_world_settle(w, 1000000000ull);
}

static void wrong_qkey(struct roce_frame *f)
{
	f->ib.deth.qkey = 0x80010001u;
}

static void with_imm(struct roce_frame *f)
{
	f->ib.bth.opcode = ROCE_OP_UD_SEND_ONLY_IMM;
}

static void rc_send(struct roce_frame *f)
{
	f->ib.bth.opcode = ROCE_OP_RC_SEND_ONLY;
}

/* Each packet to QP1 that is no GSI MAD is dropped and counted as such,
 * not as a packet for an unknown QP, and nothing answers it. */
START_TEST(test_gsi_refuses_non_mads)
{
	struct rocemu_world *w = rocemu_world_new(1);
	struct rocemu_dev *a = dev_at(w, 1), *b = dev_at(w, 2);
	uint8_t mad[ROCE_MAD_LEN + 8];

	req_mad(mad);
	inject_gsi(w, mad, ROCE_MAD_LEN, wrong_qkey);
	inject_gsi(w, mad, ROCE_MAD_LEN, with_imm);
	inject_gsi(w, mad, ROCE_MAD_LEN, rc_send);
	inject_gsi(w, mad, ROCE_MAD_LEN - 4, NULL);	/* truncated MAD */
	inject_gsi(w, mad, ROCE_MAD_LEN + 8, NULL);	/* too long */
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_RX_DROP_GSI), 5);
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_RX_DROP_UNKNOWN_QP), 0);
	ck_assert_uint_eq(rocemu_dev_counter(b, ROCEMU_CNT_TX_PACKETS), 0);
	ck_assert_uint_eq(rocemu_dev_counter(a, ROCEMU_CNT_RX_PACKETS), 0);
	rocemu_world_free(w);
}
END_TEST

Suite *ibcm_suite(void)
{
	Suite *s = suite_create("ibcm");
	TCase *tc = tcase_create("gsi");

	tcase_add_test(tc, test_gsi_refuses_non_mads);
	suite_add_tcase(s, tc);
	return s;
}
