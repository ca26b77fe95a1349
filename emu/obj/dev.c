/* SPDX-License-Identifier: MIT */
/* Devices: identity, attributes, counters and asynchronous events. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "obj.h"
#include "rocemu/frame.h"
#include "core/names.h"

static const char *const counter_names[ROCEMU_CNT_COUNTER_MAX] = {
	[ROCEMU_CNT_TX_PACKETS] = "tx_packets",
	[ROCEMU_CNT_RX_PACKETS] = "rx_packets",
	[ROCEMU_CNT_RX_DROP_MALFORMED] = "rx_drop_malformed",
	[ROCEMU_CNT_RX_DROP_ICRC] = "rx_drop_icrc",
	[ROCEMU_CNT_RX_DROP_NOT_ROCE] = "rx_drop_not_roce",
	[ROCEMU_CNT_RX_DROP_UNKNOWN_QP] = "rx_drop_unknown_qp",
	[ROCEMU_CNT_RX_DROP_BAD_STATE] = "rx_drop_bad_state",
	[ROCEMU_CNT_RX_DROP_PKEY] = "rx_drop_pkey",
	[ROCEMU_CNT_RX_DROP_SEQ] = "rx_drop_out_of_sequence",
	[ROCEMU_CNT_RX_DROP_QKEY] = "rx_drop_qkey",
	[ROCEMU_CNT_RX_DROP_NO_RECV] = "rx_drop_no_receive_wqe",
	[ROCEMU_CNT_RX_DROP_UC_MESSAGE] = "rx_drop_uc_message",
	[ROCEMU_CNT_RETRANSMITS] = "retransmits",
	[ROCEMU_CNT_TIMEOUTS] = "timeouts",
	[ROCEMU_CNT_NAK_SENT_SEQ] = "nak_sent_psn_seq",
	[ROCEMU_CNT_NAK_SENT_RNR] = "nak_sent_rnr",
	[ROCEMU_CNT_NAK_SENT_INV_REQ] = "nak_sent_inv_req",
	[ROCEMU_CNT_NAK_SENT_REM_ACCESS] = "nak_sent_rem_access",
	[ROCEMU_CNT_NAK_SENT_REM_OP] = "nak_sent_rem_op",
	[ROCEMU_CNT_NAK_RCVD_SEQ] = "nak_rcvd_psn_seq",
	[ROCEMU_CNT_NAK_RCVD_RNR] = "nak_rcvd_rnr",
	[ROCEMU_CNT_NAK_RCVD_ERROR] = "nak_rcvd_error",
	[ROCEMU_CNT_ACKS_SENT] = "acks_sent",
	[ROCEMU_CNT_DUP_REQUESTS] = "duplicate_requests",
	[ROCEMU_CNT_CQ_OVERRUNS] = "cq_overruns",
	[ROCEMU_CNT_RX_DROP_GSI] = "rx_drop_gsi",
	[ROCEMU_CNT_RX_DROP_MAD] = "rx_drop_mad",
	[ROCEMU_CNT_CM_RX_MSGS] = "cm_rx_msgs",
	[ROCEMU_CNT_CM_TX_MSGS] = "cm_tx_msgs",
	[ROCEMU_CNT_CM_TX_RETRIES] = "cm_tx_retries",
	[ROCEMU_CNT_CM_RX_DUPLICATES] = "cm_rx_duplicates",
	[ROCEMU_CNT_CM_RX_UNMATCHED] = "cm_rx_unmatched",
	[ROCEMU_CNT_SEND_ERR] = "send_err",
};

const char *rocemu_counter_name(enum rocemu_counter c)
{
	return c < ROCEMU_CNT_COUNTER_MAX ? counter_names[c] : "?";
}

uint64_t rocemu_dev_counter(const struct rocemu_dev *d, enum rocemu_counter c)
{
	/* The engines count under the world lock, maybe on another thread. */
	CORE_GUARD(d->core);
	return c < ROCEMU_CNT_COUNTER_MAX ? d->cnt[c] : 0;
}

void rocemu_dev_print_counters(const struct rocemu_dev *d, FILE *f,
			       const char *prefix)
{
	uint64_t cnt[ROCEMU_CNT_COUNTER_MAX];

	{ /* one snapshot, and no stdio under the world lock */
		CORE_GUARD(d->core);
		memcpy(cnt, d->cnt, sizeof(cnt));
	}
	for (enum rocemu_counter k = 0; k < ROCEMU_CNT_COUNTER_MAX; k++)
		fprintf(f, "%scounter %s %llu\n", prefix, rocemu_counter_name(k),
			(unsigned long long)cnt[k]);
}

int dev_init(struct rocemu_dev *d, struct core *c,
	     const struct rocemu_dev_cfg *cfg)
{
	memset(d, 0, sizeof(*d));
	if (cfg->mtu < IBV_MTU_256 || cfg->mtu > IBV_MTU_4096)
		return -EINVAL;
	/* A socket pair, as for completion channels: the device's side never
	 * blocks, and the application may make its end blocking or not. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, d->async_sock))
		return -errno;
	d->core = c;
	snprintf(d->name, sizeof(d->name), "%s", cfg->name ? cfg->name : "rocemu");
	memcpy(d->gid, cfg->gid, 16);
	d->mac[0] = 0x02;
	memcpy(d->mac + 2, cfg->gid + 12, 4);
	roce_gid_link_local(d->gid_ll, d->mac);
	d->mtu = cfg->mtu;
	d->misbehave = cfg->misbehave < ROCEMU_MISBEHAVE_COUNT ? cfg->misbehave
							       : ROCEMU_MISBEHAVE_NONE;
	/* QPNs from 0x11 as rxe gives them (QP0 and QP1 are special, the
	 * rest of the first 16 rxe keeps back too) unless the caller asks
	 * for lower ones; MR indices from 1. */
	uint32_t lo = !cfg->min_qpn || cfg->min_qpn > 0x11 ? 0x11
		      : cfg->min_qpn < 2			? 2
								: cfg->min_qpn;
	idgen_init(&d->qpns, lo, ROCE_PSN_MASK, cfg->first_qpn);
	idgen_init(&d->mr_indices, 1, 0xffffff, 1);
	return 0;
}

void dev_qpn_slot(struct rocemu_dev *d, uint8_t slot, uint32_t *lo,
		  uint32_t *hi)
{
	enum { SLOT_QPNS = 0xffff };

	if (slot) {
		uint32_t base = (uint32_t)slot << 16;

		idgen_init(&d->qpns, base, base | SLOT_QPNS, base);
	} else if (d->qpns.next <= SLOT_QPNS) {
		idgen_init(&d->qpns, d->qpns.lo, SLOT_QPNS, d->qpns.next);
	}
	*lo = d->qpns.lo;
	*hi = d->qpns.hi;
}

void dev_wire_gid(const struct rocemu_dev *d, const uint8_t gid[16],
		  uint8_t out[16])
{
	uint8_t ip4[4];

	if (d->ll_routed) {	/* GID 0 is an address the wire reaches */
		memmove(out, gid, 16);
	} else if (!memcmp(gid, d->gid_ll, 16)) {
		memmove(out, d->gid, 16);
	} else if (roce_gid_is_ipv4(d->gid) &&
		   roce_gid_link_local_ipv4(gid, ip4)) {
		roce_gid_from_ipv4(out, ip4);
	} else {
		memmove(out, gid, 16);
	}
}

bool dev_gid_index_ok(const struct rocemu_dev *d, unsigned index)
{
	(void)d;
	return index < 2;
}

int rocemu_dev_gid_at(const struct rocemu_dev *d, unsigned index,
		      uint8_t gid[16])
{
	if (index >= ROCEMU_GID_TABLE_LEN)
		return -EINVAL;
	if (!dev_gid_index_ok(d, index))
		return -ENODATA;
	memcpy(gid, index ? d->gid : d->gid_ll, 16);
	return 0;
}

void dev_fini(struct rocemu_dev *d)
{
	close(d->async_sock[0]);
	close(d->async_sock[1]);
	free(d->async_q);
	free(d->gsi);
}

void rocemu_dev_attr(const struct rocemu_dev *d, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "0.1.0");
	memcpy(&a->node_guid, d->mac, 6);
	a->max_mr_size = MAX_MR_SIZE;
	a->page_size_cap = 4096;
	a->max_qp = 0xffff;
	a->max_qp_wr = MAX_QP_WR;
	a->max_sge = MAX_SGE;
	a->max_cq = 0xffff;
	a->max_cqe = MAX_CQE;
	a->max_mr = 0xffffff;
	a->max_pd = 0xffff;
	a->max_qp_rd_atom = MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = MAX_RD_ATOMIC;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
	a->vendor_id = 0x524f; /* "RO" */
	a->vendor_part_id = 1;
	a->hw_ver = 1;
	a->sys_image_guid = a->node_guid;
	a->max_srq = 0xffff;
	a->max_srq_wr = MAX_QP_WR;
	a->max_srq_sge = MAX_SGE;
	a->max_ah = 0xffff;
	a->max_sge_rd = MAX_SGE;
	a->max_res_rd_atom = MAX_RD_ATOMIC * a->max_qp;
	/* memory windows of type 1 and 2B, as rxe (emu/obj/mw.c) */
	a->max_mw = 0xffffff;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
}

/* The kernel's IB_UVERBS_DEVICE_ATOMIC_WRITE (rdma/ib_user_verbs.h), the
 * device_cap_flags_ex bit rdma-core passes through; older headers lack
 * the name. */
#define ROCEMU_DEVICE_ATOMIC_WRITE (1ull << 40)
/* IB_UVERBS_DEVICE_FLUSH_GLOBAL and _PERSISTENT, likewise. */
#define ROCEMU_DEVICE_FLUSH_GLOBAL (1ull << 38)
#define ROCEMU_DEVICE_FLUSH_PERSISTENT (1ull << 39)
/*
 * On-demand paging: every access to an on-demand MR checks its pages
 * (mem_get/mem_put), whatever the operation, so each transport offers it
 * for all it carries: RC everything, UC sends, receives and WRITEs, UD
 * sends and receives; receives from an SRQ too. No XRC, so no xrc caps.
 * Implicit ODP (the whole address space) as well.
 */
static void dev_odp_caps(struct ibv_odp_caps *c)
{
	const uint32_t recv = IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV;

	c->general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	c->per_transport_caps.rc_odp_caps =
		IBV_ODP_SUPPORT_SEND | recv | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC;
	c->per_transport_caps.uc_odp_caps =
		IBV_ODP_SUPPORT_SEND | recv | IBV_ODP_SUPPORT_WRITE;
	c->per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND | recv;
}

void rocemu_dev_attr_ex(const struct rocemu_dev *d,
			struct ibv_device_attr_ex *a)
{
	memset(a, 0, sizeof(*a));
	rocemu_dev_attr(d, &a->orig_attr);
	a->phys_port_cnt_ex = a->orig_attr.phys_port_cnt;
	/* IBTA 1.5 ATOMIC WRITE, as rxe reports it since Linux 6.2. */
	a->device_cap_flags_ex |= ROCEMU_DEVICE_ATOMIC_WRITE;
	/* and FLUSH, both placement types, as rxe reports them (a
	 * persistent FLUSH still needs an MR with that right, which no
	 * memory of rocemu's can have: mr.c) */
	a->device_cap_flags_ex |=
		ROCEMU_DEVICE_FLUSH_GLOBAL | ROCEMU_DEVICE_FLUSH_PERSISTENT;
	dev_odp_caps(&a->odp_caps);
	a->max_dm_size = MAX_DM_SIZE;
	/* Completions carry the world's clock, in ns: a 1 GHz clock (the
	 * unit is kHz) of 64 bits that does not wrap in practice. */
	a->completion_timestamp_mask = UINT64_MAX;
	a->hca_core_clock = 1000000;
}

void dev_event(struct rocemu_dev *d, struct rocemu_event *ev)
{
	snprintf(ev->dev, sizeof(ev->dev), "%s", d->name);
	memcpy(ev->gid, d->gid, 16);
	ev->seen = d->frames_seen;
	ev->last_icrc = d->last_icrc;
	core_event(d->core, ev);
}

void dev_async_event(struct rocemu_dev *d, enum ibv_event_type type,
		     void *element)
{
	if (d->async_n == d->async_cap) {
		unsigned cap = d->async_cap ? 2 * d->async_cap : 16;
		void *q = realloc(d->async_q, cap * sizeof(*d->async_q));
		if (!q)
			return;
		d->async_q = q;
		d->async_cap = cap;
	}
	struct ibv_async_event *ev = &d->async_q[d->async_n++];
	memset(ev, 0, sizeof(*ev));
	ev->event_type = type;
	/* The device's own handles stand in for the verbs objects. */
	if (type == IBV_EVENT_CQ_ERR)
		ev->element.cq = element;
	else if (type == IBV_EVENT_SRQ_LIMIT_REACHED || type == IBV_EVENT_SRQ_ERR)
		ev->element.srq = element;
	else
		ev->element.qp = element;
	/* The fd holds one byte while the queue is not empty. */
	if (d->async_n == 1) {
		ssize_t wr = send(d->async_sock[1], "e", 1,
				  MSG_DONTWAIT | MSG_NOSIGNAL);
		(void)wr; /* an empty socket always takes a byte */
	}
	core_trace(d->core, "%s async event %s", d->name,
		    event_name(type));
}

static void async_quiet(struct rocemu_dev *d)
{
	char buf[16];

	while (recv(d->async_sock[0], buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* Every element of the union is a pointer: compare any of them. */
static const void *event_element(const struct ibv_async_event *ev)
{
	return ev->element.qp;
}

void dev_forget_events(struct rocemu_dev *d, const void *element)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < d->async_n; i++)
		if (event_element(&d->async_q[i]) != element)
			d->async_q[kept++] = d->async_q[i];
	if (kept == d->async_n)
		return;
	d->async_n = kept;
	if (!kept)
		async_quiet(d);
}

int rocemu_dev_async_fd(const struct rocemu_dev *d)
{
	return d->async_sock[0];
}

/*
 * A blocking recv(2) that peeks, rather than poll(2): the kernel restarts
 * it after a signal whose handler has SA_RESTART (signal(7) never restarts
 * poll), and honours the fd's O_NONBLOCK itself. The byte stays for the
 * taker of the last event to drain. A stream socket wakes every thread
 * waiting on it, as the kernel's event files do; a datagram socket would
 * wake only one.
 */
int rocemu_fd_wait(int fd)
{
	char c;

	if (recv(fd, &c, 1, MSG_PEEK) >= 0)
		return 0; /* 0 bytes: the device's end is gone; callers look */
	return -errno;
}

int rocemu_dev_get_async_event(struct rocemu_dev *d, struct ibv_async_event *ev)
{
	CORE_GUARD(d->core);
	if (!d->async_n)
		return -EAGAIN;
	*ev = d->async_q[0];
	memmove(d->async_q, d->async_q + 1,
		--d->async_n * sizeof(*d->async_q));
	if (!d->async_n)
		async_quiet(d);
	return 0;
}
