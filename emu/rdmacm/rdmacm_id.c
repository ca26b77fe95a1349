/* SPDX-License-Identifier: MIT */
/* librdmacm.so.1: ids, the device they share, addresses, ports, routes. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdmacm_local.h"
#include "rocemu/dropin.h"
#include "rocemu/frame.h"

/* The one context and PD of the process, as librdmacm keeps one per
 * device (ucma_get_device), and the bound ids (ports), under lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context *the_ctx;
static struct ibv_pd *the_pd;
static struct rc_id *bound;

int rc_dev_gid(const uint8_t *hint, uint8_t out[16])
{
	return rocemu_dropin_make_dev(hint, out);
}

int rc_device(struct ibv_context **ctx, struct ibv_pd **pd)
{
	int rc = rc_dev_gid(NULL, NULL);

	if (rc)
		return rc;
	pthread_mutex_lock(&lock);
	if (!the_ctx) {
		struct ibv_device **l = ibv_get_device_list(NULL);
		the_ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;
		if (l)
			ibv_free_device_list(l);
		the_pd = the_ctx ? ibv_alloc_pd(the_ctx) : NULL;
		if (the_ctx && !the_pd) {
			ibv_close_device(the_ctx);
			the_ctx = NULL;
		}
		rc = the_ctx ? 0 : -(errno ? errno : ENODEV);
	}
	if (ctx)
		*ctx = the_ctx;
	if (pd)
		*pd = the_pd;
	pthread_mutex_unlock(&lock);
	return rc;
}

int rc_attach_device(struct rc_id *r)
{
	int rc = rc_device(&r->id.verbs, &r->id.pd);

	if (!rc)
		r->id.port_num = 1;
	return rc;
}

struct rc_id *rc_id_new(struct rc_channel *c, void *context,
			enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rc_id *r = calloc(1, sizeof(*r));
	bool sync = !c;

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	if (sync && !(c = rc_channel_new())) {
		free(r);
		return NULL;
	}
	r->chan = c;
	r->sync = sync;
	pthread_cond_init(&r->acked_cond, NULL);
	r->id.channel = &c->ch;
	r->id.context = context;
	r->id.ps = ps;
	r->id.qp_type = qpt;
	r->afonly = false;
	rc_channel_attach(c);
	return r;
}

/* librdmacm: TCP and IB ids are RC, UDP and IPoIB ids UD. */
int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps)
{
	enum ibv_qp_type qpt;

	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		qpt = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qpt = IBV_QPT_UD;
		break;
	default:
		return rc_err(-EINVAL);
	}
	if (!id)
		return rc_err(-EINVAL);
	struct rc_id *r = rc_id_new((struct rc_channel *)(void *)channel,
				    context, ps, qpt);
	if (!r)
		return -1;
	*id = &r->id;
	return 0;
}

void rc_drop_event(struct rc_id *r)
{
	if (r->id.event) {
		rdma_ack_cm_event(r->id.event);
		r->id.event = NULL;
	}
}

int rc_complete(struct rc_id *r)
{
	struct rdma_cm_event *ev;

	if (!r->sync)
		return 0;
	rc_drop_event(r);
	if (rdma_get_cm_event(&r->chan->ch, &ev))
		return -1;
	r->id.event = ev;
	if (ev->status)
		return rc_err(ev->status < 0 ? ev->status : -ECONNREFUSED);
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rc_id *r = rc_of(id);

	if (!r)
		return rc_err(-EINVAL);
	rc_cm_free(r);
	rc_port_release(r);
	rc_drop_event(r);
	/* no handler names r now: what is queued for it is all there is */
	for (struct rc_event *e = rc_purge(r, true), *n; e; e = n) {
		n = e->next;
		rc_discard(e);
	}
	rc_wait_acked(r);
	free(r->id.route.path_rec);
	free(r->ep_qp);
	rc_channel_detach(r->chan);
	if (r->sync)
		rc_channel_free(r->chan);
	pthread_cond_destroy(&r->acked_cond);
	free(r);
	return 0;
}

/* ---- addresses and ports ------------------------------------------- */

static bool is_wildcard(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(
		&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr);
}

static uint16_t port_of(const struct sockaddr *a)
{
	return ntohs(a->sa_family == AF_INET ?
		     ((const struct sockaddr_in *)(const void *)a)->sin_port :
		     ((const struct sockaddr_in6 *)(const void *)a)->sin6_port);
}

static void set_port(struct sockaddr *a, uint16_t port)
{
	if (a->sa_family == AF_INET)
		((struct sockaddr_in *)(void *)a)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)(void *)a)->sin6_port = htons(port);
}

static socklen_t sa_len(const struct sockaddr *a)
{
	return a->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					 sizeof(struct sockaddr_in6);
}

static int gid_of(const struct sockaddr *a, uint8_t gid[16])
{
	struct sockaddr_storage ss = { 0 };

	memcpy(&ss, a, sa_len(a));
	int rc = roce_gid_from_sockaddr(&ss, gid); /* the port, or -errno */
	return rc < 0 ? rc : 0;
}

/* Whether two bound ids' addresses overlap: either is the wildcard, or
 * they are the same address. */
static bool overlaps(const struct rc_id *a, const struct rc_id *b)
{
	const struct sockaddr *x = &a->id.route.addr.src_addr;
	const struct sockaddr *y = &b->id.route.addr.src_addr;
	uint8_t gx[16], gy[16];

	if (is_wildcard(x) || is_wildcard(y))
		return true;
	return !gid_of(x, gx) && !gid_of(y, gy) && !memcmp(gx, gy, 16);
}

/* Whether port is taken for r in r's port space (under lock). */
static bool taken(const struct rc_id *r, uint16_t port)
{
	for (const struct rc_id *b = bound; b; b = b->next_bound)
		if (b->id.ps == r->id.ps && b->port == port && overlaps(b, r) &&
		    !(b->reuseaddr && r->reuseaddr && !b->listening))
			return true;
	return false;
}

/* The kernel's default ephemeral range (ip_local_port_range). */
enum { EPH_LO = 32768, EPH_HI = 60999 };

int rc_port_bind(struct rc_id *r, const struct sockaddr *addr)
{
	int rc = 0;

	memset(&r->id.route.addr.src_storage, 0,
	       sizeof(r->id.route.addr.src_storage));
	memcpy(&r->id.route.addr.src_addr, addr, sa_len(addr));
	pthread_mutex_lock(&lock);
	uint16_t port = port_of(addr);
	if (!port) {
		unsigned span = EPH_HI - EPH_LO + 1, start = (unsigned)random();
		for (unsigned i = 0; i < span && !port; i++) {
			uint16_t p = (uint16_t)(EPH_LO + (start + i) % span);
			if (!taken(r, p))
				port = p;
		}
		if (!port)
			rc = -EADDRNOTAVAIL;
	} else if (taken(r, port)) {
		rc = -EADDRINUSE;
	}
	if (!rc) {
		r->port = port;
		set_port(&r->id.route.addr.src_addr, port);
		r->bound = true;
		r->next_bound = bound;
		bound = r;
	}
	pthread_mutex_unlock(&lock);
	if (rc)
		memset(&r->id.route.addr.src_storage, 0,
		       sizeof(r->id.route.addr.src_storage));
	return rc;
}

void rc_port_release(struct rc_id *r)
{
	pthread_mutex_lock(&lock);
	for (struct rc_id **p = &bound; *p; p = &(*p)->next_bound)
		if (*p == r) {
			*p = r->next_bound;
			break;
		}
	r->bound = false;
	pthread_mutex_unlock(&lock);
}

/* Whether two GIDs are both IPv4 loopback addresses (::ffff:127.x.y.z). */
static bool both_loopback4(const uint8_t a[16], const uint8_t b[16])
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, v4, 12) && !memcmp(b, v4, 12) && a[12] == 127 &&
	       b[12] == 127;
}

/*
 * The address rule: an id binds the device's address or the wildcard.
 * A device on a 127/8 address stands for the loopback interface, so any
 * 127/8 address binds it, under the device's address: libfabric's verbs
 * provider binds "localhost" when the application names no address.
 * With ROCEMU_ADDR unset and no device yet, the first address an id binds
 * (or resolves from) makes the device there.
 */
static int bind_checked(struct rc_id *r, const struct sockaddr *addr)
{
	uint8_t want[16], have[16];
	struct sockaddr_storage dev_addr;

	if (!addr)
		return -EINVAL;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (r->bound)
		return -EINVAL;
	if (!is_wildcard(addr)) {
		int rc = gid_of(addr, want);
		if (!rc)
			rc = rc_dev_gid(want, have);
		if (rc)
			return rc;
		if (memcmp(want, have, 16) && !both_loopback4(want, have))
			return -EADDRNOTAVAIL;
		if (memcmp(want, have, 16)) {
			/* named as the device, so that the name the id
			 * gives (rdma_get_local_addr) reaches it */
			roce_gid_to_sockaddr(have, port_of(addr), &dev_addr);
			addr = (const struct sockaddr *)&dev_addr;
		}
		rc = rc_attach_device(r);
		if (rc)
			return rc;
	}
	return rc_port_bind(r, addr);
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (!id)
		return rc_err(-EINVAL);
	int rc = bind_checked(rc_of(id), addr);
	return rc ? rc_err(rc) : 0;
}

/* The address the route to dst leaves from (a connected UDP socket's
 * name), as the kernel chooses a source. 0 or -errno. */
static int route_source(const struct sockaddr *dst, struct sockaddr_storage *src,
			int *ip_mtu)
{
	int s = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof(*src);
	int rc = 0;

	if (s < 0)
		return -errno;
	struct sockaddr_storage d = { 0 };
	memcpy(&d, dst, sa_len(dst));
	if (!port_of((struct sockaddr *)&d))
		set_port((struct sockaddr *)&d, 4791);
	if (connect(s, (struct sockaddr *)&d, sa_len(dst)) ||
	    getsockname(s, (struct sockaddr *)src, &len))
		rc = -errno;
	if (!rc && ip_mtu) {
		socklen_t ml = sizeof(*ip_mtu);
		if (getsockopt(s, dst->sa_family == AF_INET ? IPPROTO_IP :
			       IPPROTO_IPV6, dst->sa_family == AF_INET ?
			       IP_MTU : IPV6_MTU, ip_mtu, &ml))
			*ip_mtu = 1500;
	}
	close(s);
	return rc;
}

/* The source of a resolve with no source named: the device's address,
 * or (no device yet, ROCEMU_ADDR unset) the route's. */
/* 127.0.0.1 or ::1, the loopback address proper. */
static bool is_loopback_host(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
		       htonl(INADDR_LOOPBACK);
	return a->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr);
}

static int choose_source(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	struct sockaddr_storage rs = { 0 };
	uint8_t hint[16], have[16];
	const char *a = getenv("ROCEMU_ADDR");
	bool use_route = (!a || !*a) && !route_source(dst, &rs, NULL) &&
			 roce_gid_from_sockaddr(&rs, hint) >= 0;
	int rc = rc_dev_gid(use_route ? hint : NULL, have);

	if (rc)
		return rc;
	roce_gid_to_sockaddr(have, 0, src);
	if (src->ss_family != dst->sa_family)
		return -EADDRNOTAVAIL;
	return 0;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		      struct sockaddr *dst_addr, int timeout_ms)
{
	struct rc_id *r = rc_of(id);
	int rc = 0;

	(void)timeout_ms;
	if (!r || !dst_addr || (dst_addr->sa_family != AF_INET &&
				dst_addr->sa_family != AF_INET6))
		return rc_err(-EINVAL);
	if (!r->bound) {
		struct sockaddr_storage s = { 0 };
		if (src_addr && src_addr->sa_family)
			memcpy(&s, src_addr, sa_len(src_addr));
		else
			rc = choose_source(dst_addr, &s);
		if (!rc && is_wildcard((struct sockaddr *)&s)) {
			uint16_t port = port_of((struct sockaddr *)&s);
			rc = choose_source(dst_addr, &s);
			set_port((struct sockaddr *)&s, port);
		}
		if (!rc)
			rc = bind_checked(r, (struct sockaddr *)&s);
	} else if (is_wildcard(&r->id.route.addr.src_addr)) {
		/* a wildcard-bound id resolves from the device's address */
		struct sockaddr_storage s = { 0 };
		rc = choose_source(dst_addr, &s);
		if (!rc) {
			set_port((struct sockaddr *)&s, r->port);
			memcpy(&r->id.route.addr.src_storage, &s, sizeof(s));
		}
	}
	if (!rc && r->id.route.addr.src_addr.sa_family != dst_addr->sa_family)
		rc = -EADDRNOTAVAIL;
	if (!rc)
		rc = rc_attach_device(r);
	if (rc)
		return rc_err(rc);
	memset(&r->id.route.addr.dst_storage, 0,
	       sizeof(r->id.route.addr.dst_storage));
	memcpy(&r->id.route.addr.dst_addr, dst_addr, sa_len(dst_addr));
	gid_of(dst_addr, r->peer_gid);
	/* The loopback address itself is this host's own device, whatever
	 * its address (Linux's cma_resolve_loopback): a 127.0.0.1 listener
	 * is one bound on the device (bind_checked). Other 127/8 addresses
	 * stay devices of their own. */
	if (is_loopback_host(dst_addr) && rc_dev_gid(NULL, r->peer_gid))
		gid_of(dst_addr, r->peer_gid);
	rc_drop_event(r);
	struct rc_event *e = rc_event_new(r, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	if (!e)
		return rc_err(-ENOMEM);
	rc_post(r, e);
	return rc_complete(r);
}

/* The largest IB MTU whose packets fit an IP MTU (Linux's iboe_get_mtu:
 * the GRH, UDP, BTH, extended headers and ICRC taken off). */
static enum ibv_mtu ib_mtu_for(int ip_mtu)
{
	int room = ip_mtu - (40 + 8 + 12 + 4 + 28 + 4);

	for (enum ibv_mtu m = IBV_MTU_4096; m > IBV_MTU_256; m--)
		if (room >= (128 << m))
			return m;
	return IBV_MTU_256;
}

/*
 * The path record as Linux's cma builds it for RoCE (cma_resolve_iboe_route):
 * the GIDs are the addresses (IPv4-mapped), P_Key 0xffff, hop limit 64,
 * traffic class the ToS, packet life time 16, the MTU the route carries
 * clamped to the port's.
 */
int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rc_id *r = rc_of(id);
	struct ibv_port_attr pa;
	struct sockaddr_storage s;
	int ip_mtu = 1500;

	(void)timeout_ms;
	if (!r || !r->id.verbs || !r->id.route.addr.dst_addr.sa_family)
		return rc_err(-EINVAL);
	if (route_source(&r->id.route.addr.dst_addr, &s, &ip_mtu))
		ip_mtu = 1500;
	if (ibv_query_port(r->id.verbs, 1, &pa))
		return -1;
	struct ibv_sa_path_rec *p = r->id.route.path_rec;
	if (!p && !(p = calloc(1, sizeof(*p))))
		return rc_err(-ENOMEM);
	memset(p, 0, sizeof(*p));
	gid_of(&r->id.route.addr.src_addr, p->sgid.raw);
	memcpy(p->dgid.raw, r->peer_gid, 16); /* as rdma_resolve_addr found */
	p->pkey = htons(0xffff);
	p->hop_limit = 64;
	p->traffic_class = r->tos;
	p->sl = r->tos >> 5;
	p->reversible = 1;
	p->numb_path = 1;
	p->mtu_selector = 2;	/* exactly */
	enum ibv_mtu m = ib_mtu_for(ip_mtu);
	p->mtu = m < pa.active_mtu ? m : pa.active_mtu;
	p->rate_selector = 2;
	p->rate = 2;		/* 2.5 Gb/s, the port's 1X SDR */
	p->packet_life_time_selector = 2;
	p->packet_life_time = 16;
	r->id.route.path_rec = p;
	r->id.route.num_paths = 1;
	rc_drop_event(r);
	struct rc_event *e = rc_event_new(r, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	if (!e)
		return rc_err(-ENOMEM);
	rc_post(r, e);
	return rc_complete(r);
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id ? htons(port_of(&id->route.addr.src_addr)) : 0;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id ? htons(port_of(&id->route.addr.dst_addr)) : 0;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **l = calloc(2, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	if (!rc_device(&l[0], NULL)) {
		if (num_devices)
			*num_devices = 1;
		return l;
	}
	if (num_devices)
		*num_devices = 0;
	l[0] = NULL;
	return l;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* What librdmacm accepts (rdma_set_option(3)); the IB path option is
 * refused: a RoCE path is the route's. */
int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
		    void *optval, size_t optlen)
{
	struct rc_id *r = rc_of(id);

	if (!r || !optval)
		return rc_err(-EINVAL);
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_TOS &&
	    optlen == sizeof(uint8_t)) {
		r->tos = *(uint8_t *)optval;
		return 0;
	}
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_ACK_TIMEOUT &&
	    optlen == sizeof(uint8_t)) {
		r->ack_timeout = *(uint8_t *)optval;
		return 0;
	}
	if (level == RDMA_OPTION_ID && optlen == sizeof(int) &&
	    (optname == RDMA_OPTION_ID_REUSEADDR ||
	     optname == RDMA_OPTION_ID_AFONLY)) {
		if (r->bound)
			return rc_err(-EINVAL);
		bool on = *(int *)optval != 0;
		if (optname == RDMA_OPTION_ID_REUSEADDR)
			r->reuseaddr = on;
		else
			r->afonly = on;
		return 0;
	}
	return rc_err(level == RDMA_OPTION_IB ? -ENOSYS : -EINVAL);
}
