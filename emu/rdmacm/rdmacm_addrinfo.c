/* SPDX-License-Identifier: MIT */
/* librdmacm.so.1: rdma_getaddrinfo, getaddrinfo with a port space and a QP type. */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_local.h"

static struct sockaddr *dup_addr(const struct sockaddr *a, socklen_t len)
{
	struct sockaddr *d = malloc(len);

	if (d)
		memcpy(d, a, len);
	return d;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = n;
	}
}

/* No node nor service: librdmacm answers with the hints' own addresses
 * (libfabric asks so with a source address alone). */
static int from_hints(const struct rdma_addrinfo *h, struct rdma_addrinfo **res)
{
	if (!h || (!h->ai_src_addr && !h->ai_dst_addr))
		return rc_err(-EINVAL);
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	if (!r)
		return rc_err(-ENOMEM);
	r->ai_flags = h->ai_flags;
	r->ai_qp_type = h->ai_qp_type ? h->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = h->ai_port_space ? h->ai_port_space :
			   r->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP;
	if (h->ai_src_addr) {
		r->ai_src_addr = dup_addr(h->ai_src_addr, h->ai_src_len);
		r->ai_src_len = h->ai_src_len;
		r->ai_family = h->ai_src_addr->sa_family;
	}
	if (h->ai_dst_addr) {
		r->ai_dst_addr = dup_addr(h->ai_dst_addr, h->ai_dst_len);
		r->ai_dst_len = h->ai_dst_len;
		r->ai_family = h->ai_dst_addr->sa_family;
	}
	if ((h->ai_src_addr && !r->ai_src_addr) ||
	    (h->ai_dst_addr && !r->ai_dst_addr)) {
		rdma_freeaddrinfo(r);
		return rc_err(-ENOMEM);
	}
	*res = r;
	return 0;
}

/* getaddrinfo's error as librdmacm reports it: -1 and errno. */
static int gai_errno(int rc)
{
	switch (rc) {
	case EAI_MEMORY:
		return ENOMEM;
	case EAI_SYSTEM:
		return errno;
	case EAI_FAMILY:
		return EAFNOSUPPORT;
	case EAI_NONAME:
	case EAI_NODATA:
		return ENOENT; /* unresolvable, as librdmacm's ucma_getaddrinfo */
	default:
		return EINVAL;
	}
}

/*
 * As librdmacm without ibacm: the first address getaddrinfo gives, as the
 * source (RAI_PASSIVE) or destination; port space and QP type from the
 * hints (default TCP and RC; UD means the UDP port space); a source from
 * the hints copied for an active lookup.
 */
int rdma_getaddrinfo(const char *node, const char *service,
		     const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h = { 0 }, *ai = NULL;
	struct rdma_addrinfo *r;

	if (!res)
		return rc_err(-EINVAL);
	if (!node && !service)
		return from_hints(hints, res);
	int flags = hints ? hints->ai_flags : 0;
	int qpt = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	int ps = hints && hints->ai_port_space ? hints->ai_port_space :
		 qpt == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP;
	if (hints && hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET &&
	    hints->ai_family != AF_INET6)
		return rc_err(-EAFNOSUPPORT);
	h.ai_family = hints ? hints->ai_family : AF_UNSPEC;
	h.ai_socktype = qpt == IBV_QPT_UD ? SOCK_DGRAM : SOCK_STREAM;
	if (flags & RAI_PASSIVE)
		h.ai_flags |= AI_PASSIVE;
	if (flags & RAI_NUMERICHOST)
		h.ai_flags |= AI_NUMERICHOST;
	int rc = getaddrinfo(node, service, &h, &ai);
	if (rc)
		return rc_err(-gai_errno(rc));
	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->ai_flags = flags;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = qpt;
	r->ai_port_space = ps;
	if (flags & RAI_PASSIVE) {
		r->ai_src_addr = dup_addr(ai->ai_addr, ai->ai_addrlen);
		r->ai_src_len = ai->ai_addrlen;
		if (!r->ai_src_addr)
			goto nomem;
	} else {
		r->ai_dst_addr = dup_addr(ai->ai_addr, ai->ai_addrlen);
		r->ai_dst_len = ai->ai_addrlen;
		if (!r->ai_dst_addr)
			goto nomem;
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			r->ai_src_addr = dup_addr(hints->ai_src_addr,
						  hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
			if (!r->ai_src_addr)
				goto nomem;
		}
	}
	freeaddrinfo(ai);
	*res = r;
	return 0;
nomem:
	freeaddrinfo(ai);
	rdma_freeaddrinfo(r);
	return rc_err(-ENOMEM);
}
