// SPDX-License-Identifier: MIT
/*
 * ud_grh: one UD datagram each way between two sides, each sent through an
 * address handle with a chosen traffic class and flow label, and the GRH
 * each receiver finds in the first 40 bytes of its receive buffer printed
 * field by field. Written with plain verbs so that the same binary runs on
 * Linux rxe and on rocemu's drop-in (the rxe lab's part "gid",
 * tests/rxe/gid_guest.sh). No stock program sets an AH's traffic class or
 * flow label on UD and shows the receiver's GRH.
 *
 *   ud_grh server [-d DEV] [-g GID] [-p PORT] [-t TCLASS] [-f FLOW] [-l HOPS]
 *   ud_grh client [-d DEV] [-g GID] [-p PORT] [-t TCLASS] [-f FLOW] [-l HOPS]
 *          SERVER
 *
 * The QP numbers and GIDs cross a TCP connection to SERVER:PORT (default
 * 18515); -l is the AH's hop limit (default 64). The client sends first; the
 * server, once it received, answers through its own AH. Each side prints, one
 * line each: SENT gid=SGID->DGID tclass=0xTT flow=0xFFFFF hop=H wc=STATUS RECV
 * wc=STATUS grh=0|1 ip=4|6 tclass=0xTT flow=0xFFFFF hop=H sgid=GID dgid=GID
 * len=N data=ok|bad (for an IPv4 GRH area, 20 zero bytes then the IPv4 header
 * as rxe writes it: tclass is the TOS, hop the TTL, the GIDs the IPv4-mapped
 * addresses, flow 0). Exit 0 when its send and its receive completed
 * successfully with the peer's data; 1 otherwise, with the reason on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { GRH = 40, MSG = 64, QKEY = 0x11111111, WAIT_MS = 10000 };

struct opts {
  const char *dev, *server;
  int gidx, port, tclass, flow, hops, is_server;
};

struct side {
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  struct ibv_mr *mr;
  uint8_t buf[GRH + MSG + MSG];
  union ibv_gid gid;
};

struct wire_peer {
  uint32_t qpn;
  uint8_t gid[16];
};

static int fail(const char *what) {
  fprintf(stderr, "ud_grh: %s: %s\n", what, errno ? strerror(errno) : "failed");
  return -1;
}

static void gid_str(const uint8_t gid[16], char *s) {
  inet_ntop(AF_INET6, gid, s, INET6_ADDRSTRLEN);
}

static struct ibv_context *open_dev(const char *name) {
  int n = 0;
  struct ibv_device **l = ibv_get_device_list(&n);
  struct ibv_context *c = NULL;

  for (int i = 0; l && i < n && !c; i++)
    if (!name || !strcmp(ibv_get_device_name(l[i]), name))
      c = ibv_open_device(l[i]);
  if (l)
    ibv_free_device_list(l);
  return c;
}

static int setup(struct side *s, const struct opts *o) {
  struct ibv_qp_init_attr ia = {
      .qp_type = IBV_QPT_UD,
      .cap = {.max_send_wr = 4,
              .max_recv_wr = 4,
              .max_send_sge = 1,
              .max_recv_sge = 1},
  };
  struct ibv_qp_attr a = {
      .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY};

  s->ctx = open_dev(o->dev);
  if (!s->ctx)
    return fail("no such device");
  if (ibv_query_gid(s->ctx, 1, o->gidx, &s->gid))
    return fail("ibv_query_gid");
  s->pd = ibv_alloc_pd(s->ctx);
  s->cq = s->pd ? ibv_create_cq(s->ctx, 8, NULL, NULL, 0) : NULL;
  if (!s->cq)
    return fail("ibv_alloc_pd/ibv_create_cq");
  s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE);
  if (!s->mr)
    return fail("ibv_reg_mr");
  ia.send_cq = ia.recv_cq = s->cq;
  s->qp = ibv_create_qp(s->pd, &ia);
  if (!s->qp)
    return fail("ibv_create_qp");
  if (ibv_modify_qp(s->qp, &a,
                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                        IBV_QP_QKEY))
    return fail("modify to INIT");
  a.qp_state = IBV_QPS_RTR;
  if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE))
    return fail("modify to RTR");
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
    return fail("modify to RTS");

  struct ibv_sge sge = {(uintptr_t)s->buf, GRH + MSG, s->mr->lkey};
  struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad;
  memset(s->buf, 0xee, GRH + MSG);
  if (ibv_post_recv(s->qp, &wr, &bad))
    return fail("ibv_post_recv");
  return 0;
}

/* The TCP connection to the peer: accepted (server) or made (client). */
static int connect_peer(const struct opts *o) {
  struct addrinfo h = {.ai_family = AF_INET,
                       .ai_socktype = SOCK_STREAM,
                       .ai_flags = AI_PASSIVE},
                  *r;
  char port[16];
  int fd = -1, one = 1;

  snprintf(port, sizeof(port), "%d", o->port);
  if (getaddrinfo(o->server, port, &h, &r))
    return fail("getaddrinfo");
  fd = socket(r->ai_family, r->ai_socktype, 0);
  if (fd < 0)
    goto out;
  if (o->is_server) {
    int l = fd;

    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(l, r->ai_addr, r->ai_addrlen) || listen(l, 1))
      fd = -1;
    else
      fd = accept(l, NULL, NULL);
    close(l);
  } else {
    for (int i = 0; i < 100; i++) {
      if (!connect(fd, r->ai_addr, r->ai_addrlen))
        goto out;
      close(fd);
      usleep(100000);
      fd = socket(r->ai_family, r->ai_socktype, 0);
    }
    close(fd);
    fd = -1;
  }
out:
  freeaddrinfo(r);
  if (fd < 0)
    fail("TCP connection");
  return fd;
}

static int exchange(int fd, struct side *s, struct wire_peer *p) {
  struct wire_peer me = {htonl(s->qp->qp_num), {0}};
  size_t got = 0;

  memcpy(me.gid, s->gid.raw, 16);
  if (write(fd, &me, sizeof(me)) != sizeof(me))
    return fail("write to the peer");
  while (got < sizeof(*p)) {
    ssize_t n = read(fd, (char *)p + got, sizeof(*p) - got);
    if (n <= 0)
      return fail("read from the peer");
    got += (size_t)n;
  }
  p->qpn = ntohl(p->qpn);
  return 0;
}

/* Polls one completion for up to WAIT_MS; 0 and *wc, or -1. */
static int poll_one(struct side *s, struct ibv_wc *wc, const char *what) {
  for (int ms = 0; ms < WAIT_MS; ms++) {
    int n = ibv_poll_cq(s->cq, 1, wc);
    if (n < 0)
      return fail("ibv_poll_cq");
    if (n)
      return 0;
    usleep(1000);
  }
  errno = ETIMEDOUT;
  return fail(what);
}

static int send_one(struct side *s, const struct opts *o,
                    const struct wire_peer *p) {
  struct ibv_ah_attr aa = {
      .is_global = 1,
      .port_num = 1,
      .grh = {.sgid_index = (uint8_t)o->gidx,
              .hop_limit = (uint8_t)o->hops,
              .traffic_class = (uint8_t)o->tclass,
              .flow_label = (uint32_t)o->flow},
  };
  struct ibv_wc wc;
  char sg[INET6_ADDRSTRLEN], dg[INET6_ADDRSTRLEN];

  memcpy(aa.grh.dgid.raw, p->gid, 16);
  struct ibv_ah *ah = ibv_create_ah(s->pd, &aa);
  if (!ah)
    return fail("ibv_create_ah");
  uint8_t *m = s->buf + GRH + MSG;
  snprintf((char *)m, MSG, "ud_grh %s", o->is_server ? "server" : "client");
  struct ibv_sge sge = {(uintptr_t)m, MSG, s->mr->lkey};
  struct ibv_send_wr wr =
                         {
                             .wr_id = 2,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED,
                             .wr.ud = {.ah = ah,
                                       .remote_qpn = p->qpn,
                                       .remote_qkey = QKEY},
                         },
                     *bad;
  if (ibv_post_send(s->qp, &wr, &bad))
    return fail("ibv_post_send");
  if (poll_one(s, &wc, "no send completion"))
    return -1;
  gid_str(s->gid.raw, sg);
  gid_str(p->gid, dg);
  printf("SENT gid=%s->%s tclass=0x%02x flow=0x%05x hop=%d wc=%s\n", sg, dg,
         o->tclass, o->flow, o->hops, ibv_wc_status_str(wc.status));
  fflush(stdout);
  ibv_destroy_ah(ah);
  return wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 ? 0 : -1;
}

/* Prints the GRH area of the received datagram, either layout. */
static void print_grh(const uint8_t *g, const struct ibv_wc *wc, int ok) {
  uint8_t sgid[16] = {0}, dgid[16] = {0};
  char sg[INET6_ADDRSTRLEN], dg[INET6_ADDRSTRLEN];
  unsigned tclass, flow = 0, hop, ipv = 6;
  static const uint8_t zero[20];

  if (!memcmp(g, zero, 20) && g[20] >> 4 == 4) {
    ipv = 4;
    tclass = g[21];
    hop = g[28];
    sgid[10] = sgid[11] = dgid[10] = dgid[11] = 0xff;
    memcpy(sgid + 12, g + 32, 4);
    memcpy(dgid + 12, g + 36, 4);
  } else {
    uint32_t w = (uint32_t)g[0] << 24 | (uint32_t)g[1] << 16 |
                 (uint32_t)g[2] << 8 | g[3];
    ipv = w >> 28;
    tclass = (w >> 20) & 0xff;
    flow = w & 0xfffff;
    hop = g[7];
    memcpy(sgid, g + 8, 16);
    memcpy(dgid, g + 24, 16);
  }
  gid_str(sgid, sg);
  gid_str(dgid, dg);
  printf("RECV wc=%s grh=%d ip=%u tclass=0x%02x flow=0x%05x hop=%u "
         "sgid=%s dgid=%s len=%u data=%s\n",
         ibv_wc_status_str(wc->status), !!(wc->wc_flags & IBV_WC_GRH), ipv,
         tclass, flow, hop, sg, dg, wc->byte_len, ok ? "ok" : "bad");
  fflush(stdout);
}

static int recv_one(struct side *s, const struct opts *o) {
  struct ibv_wc wc;
  const char *want = o->is_server ? "ud_grh client" : "ud_grh server";

  if (poll_one(s, &wc, "no receive completion"))
    return -1;
  if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 1) {
    fprintf(stderr, "ud_grh: receive completion %s (wr_id %lu)\n",
            ibv_wc_status_str(wc.status), (unsigned long)wc.wr_id);
    return -1;
  }
  int ok =
      wc.byte_len == GRH + MSG && !strcmp((const char *)s->buf + GRH, want);
  print_grh(s->buf, &wc, ok);
  return ok ? 0 : -1;
}

static int parse(int argc, char **argv, struct opts *o) {
  int c;

  *o = (struct opts){.port = 18515, .hops = 64};
  if (argc < 2)
    return -1;
  o->is_server = !strcmp(argv[1], "server");
  if (!o->is_server && strcmp(argv[1], "client"))
    return -1;
  optind = 2;
  while ((c = getopt(argc, argv, "d:g:p:t:f:l:")) != -1) {
    switch (c) {
    case 'd':
      o->dev = optarg;
      break;
    case 'g':
      o->gidx = atoi(optarg);
      break;
    case 'p':
      o->port = atoi(optarg);
      break;
    case 't':
      o->tclass = (int)strtol(optarg, NULL, 0) & 0xff;
      break;
    case 'f':
      o->flow = (int)strtol(optarg, NULL, 0) & 0xfffff;
      break;
    case 'l':
      o->hops = atoi(optarg) & 0xff;
      break;
    default:
      return -1;
    }
  }
  if (!o->is_server) {
    if (optind != argc - 1)
      return -1;
    o->server = argv[optind];
  } else if (optind != argc) {
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  struct opts o;
  struct side s = {0};
  struct wire_peer p;
  int fd, rc;

  if (parse(argc, argv, &o)) {
    fprintf(stderr, "usage: ud_grh server|client [-d DEV] [-g GID] "
                    "[-p PORT] [-t TCLASS] [-f FLOW] [-l HOPS] [SERVER]\n");
    return 2;
  }
  if (setup(&s, &o))
    return 1;
  fd = connect_peer(&o);
  if (fd < 0 || exchange(fd, &s, &p))
    return 1;
  if (o.is_server)
    rc = recv_one(&s, &o) || send_one(&s, &o, &p);
  else
    rc = send_one(&s, &o, &p) || recv_one(&s, &o);
  close(fd);
  return rc ? 1 : 0;
}
