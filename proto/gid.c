/* SPDX-License-Identifier: MIT */
/* GIDs to and from address text and socket addresses: the one place that
 * knows an IPv4 address travels as the IPv4-mapped GID ::ffff:a.b.c.d. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "rocemu/frame.h"

int roce_gid_parse(const char *text, uint8_t gid[16])
{
	uint8_t v4[4], v6[16];

	if (!text)
		return -EINVAL;
	if (inet_pton(AF_INET, text, v4) == 1) {
		roce_gid_from_ipv4(gid, v4);
		return 0;
	}
	/* into a copy: gid is not touched unless the text is an address */
	if (inet_pton(AF_INET6, text, v6) != 1)
		return -EINVAL;
	memcpy(gid, v6, 16);
	return 0;
}

socklen_t roce_gid_to_sockaddr(const uint8_t gid[16], uint16_t port,
			       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (roce_gid_is_ipv4(gid)) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		memcpy(&a->sin_addr, gid + 12, 4);
		return sizeof(*a);
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
	a->sin6_family = AF_INET6;
	a->sin6_port = htons(port);
	memcpy(&a->sin6_addr, gid, 16);
	return sizeof(*a);
}

int roce_gid_from_sockaddr(const struct sockaddr_storage *ss, uint8_t gid[16])
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		roce_gid_from_ipv4(gid, (const uint8_t *)&a->sin_addr);
		return ntohs(a->sin_port);
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		memcpy(gid, &a->sin6_addr, 16);
		return ntohs(a->sin6_port);
	}
	return -EAFNOSUPPORT;
}
