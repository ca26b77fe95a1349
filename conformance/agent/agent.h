/* SPDX-License-Identifier: MIT */
/* rocemu-agent: what its parts share (conformance/PROTOCOL.md is the protocol). */
#ifndef ROCEMU_AGENT_H
#define ROCEMU_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

enum {
	AGENT_PROTO = 1,
	AGENT_LINE_MAX = 4096,
	AGENT_MAX_ARGS = 32,
	AGENT_MAX_OBJS = 64,	/* of each kind, per connection */
	AGENT_READ_MAX = 1024,	/* bytes one read request returns */
	AGENT_TOKEN_MAX = 256,	/* bytes of a shared token */
	AGENT_IDLE_S = 60,	/* default: a client silent this long is dropped */
};

/* One request line, split: the command and its key=value words. */
struct req {
	char *cmd;
	unsigned n;
	char *key[AGENT_MAX_ARGS];
	char *val[AGENT_MAX_ARGS];
	char err[256];		/* set by the getters on failure */
};

/* The device, opened once for the agent's life, and what every
 * connection must show before it may use it. */
/* IBTA 1.5 FLUSH and ATOMIC WRITE as rdma-core 45 numbers them (older
 * headers lack some of the names): access rights, send_ops_flags bits,
 * completion opcodes, and the device_cap_flags_ex bits the kernel
 * reports (rdma/ib_user_verbs.h). */
#define AGENT_ACCESS_FLUSH_GLOBAL (1 << 8)
#define AGENT_ACCESS_FLUSH_PERSISTENT (1 << 9)
#define AGENT_QP_EX_WITH_FLUSH (1ull << 11)
#define AGENT_QP_EX_WITH_ATOMIC_WRITE (1ull << 12)
#define AGENT_WC_FLUSH 8
#define AGENT_WC_ATOMIC_WRITE 9
#define AGENT_CAP_FLUSH_GLOBAL (1ull << 38)
#define AGENT_CAP_FLUSH_PERSISTENT (1ull << 39)
#define AGENT_CAP_ATOMIC_WRITE (1ull << 40)

struct agent_dev {
	const char *token;	/* auth token= asked for first; NULL: none */
	struct ibv_context *ctx;
	const char *name;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	struct ibv_port_attr port_attr;
	struct ibv_device_attr attr;
};

struct agent_mr {
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t size;
};

/* A connection the device's CM took on a listener: its id, and once
 * accepted the QP's PD, CQ and receive buffer (on the id's context). */
struct agent_conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* The CM objects of one control connection, numbered from 1. */
struct agent_cm {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen[AGENT_MAX_OBJS + 1];
	struct agent_conn conn[AGENT_MAX_OBJS + 1];
	unsigned nlisten, nconn;
};

/* What one connection made; numbered from 1 per kind, 0 a free slot. */
struct agent_objs {
	struct agent_cm cm;
	struct ibv_pd *pd[AGENT_MAX_OBJS + 1];
	struct agent_mr mr[AGENT_MAX_OBJS + 1];
	struct ibv_cq *cq[AGENT_MAX_OBJS + 1];
	struct ibv_qp *qp[AGENT_MAX_OBJS + 1];
	struct ibv_ah *ah[AGENT_MAX_OBJS + 1];
	struct ibv_mw *mw[AGENT_MAX_OBJS + 1];
	struct ibv_srq *srq[AGENT_MAX_OBJS + 1];
	unsigned npd, nmr, ncq, nqp, nah, nmw, nsrq;	/* the last number given */
	bool hello;
	bool authed;		/* gave the token (when one is asked for) */
};

/* An answer being written: "ok ..." or "err CODE text". */
struct answer {
	char text[2 * AGENT_READ_MAX + 512];
	size_t len;
};

/*
 * Splits line (changed in place) into r. Returns 0; -1 with r->err set
 * for an empty line, a word that is not key=value, a repeated key or
 * more than AGENT_MAX_ARGS words.
 */
int req_split(char *line, struct req *r);
/* True when every key of r is in keys (NULL-terminated); else false
 * with r->err naming the first unknown key. */
bool req_keys_ok(struct req *r, const char *const *keys);
/* The value of key, or NULL. */
const char *req_str(const struct req *r, const char *key);
/*
 * The number (decimal or 0x hex) of key, def when absent and def_ok.
 * Returns 0; -1 with r->err set when it is missing, not a number or
 * above max.
 */
int req_num(struct req *r, const char *key, uint64_t max, bool def_ok,
	    uint64_t def, uint64_t *v);
/* Access flags of key (lw,rw,rr,ra,mw or 0) into *flags; 0 or -1 with
 * r->err set. An absent key gives def. */
int req_flags(struct req *r, const char *key, int def, int *flags);
/* A GID (an IPv6 literal, ::ffff:a.b.c.d for IPv4) of key; 0 or -1. */
int req_gid(struct req *r, const char *key, union ibv_gid *gid);
/*
 * The source GID index a QP or AH is to use: sgid_index= when given,
 * else the agent's own (-g). 0 with *index set; -1 with r->err set when
 * it is not a number or past the port's GID table.
 */
int req_sgid_index(const struct agent_dev *d, struct req *r, uint8_t *index);

/*
 * The object number key names in table t (AGENT_MAX_OBJS + 1 pointers,
 * NULL a free slot): 0 with *i set; -1 with the answer written (err
 * EINVAL for a missing or bad number, ENOENT for no such object).
 */
int obj_lookup(struct req *r, struct answer *a, const char *key,
	       void *const *t, unsigned *i);
/* The same for an MR number. */
int mr_lookup(struct req *r, struct answer *a, const struct agent_objs *o,
	      const char *key, unsigned *i);

/* Appends printf-style text to an answer (truncating, never overflowing). */
void ans_add(struct answer *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Sets the answer to "err CODE text". Returns 0 (handlers return it). */
int ans_err(struct answer *a, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "err <errno name> <what> failed: <strerror>" for a verbs call; 0. */
int ans_errno(struct answer *a, int err, const char *what);

/*
 * Runs one request against the connection's objects and writes its
 * answer. Returns 1 when the connection is to close after the answer
 * (bye, a missing or wrong token where one is asked for), else 0.
 */
int agent_dispatch(struct agent_dev *d, struct agent_objs *o, struct req *r,
		   struct answer *a);
/*
 * Answers one request line of len bytes (line[len] is writable; the line
 * is changed in place): bytes other than printable ASCII, tab and CR, a
 * line longer than AGENT_LINE_MAX or one that does not split are
 * err EINVAL; then agent_dispatch. While d asks for a token the
 * connection has not given, anything but a right auth is err EACCES.
 * Returns 1 when the connection is to close after the answer (bye, a
 * refused token), else 0. o changes only as the command says.
 */
int agent_line(struct agent_dev *d, struct agent_objs *o, char *line,
	       size_t len, struct answer *a);
/* The answer to a line longer than AGENT_LINE_MAX, already discarded;
 * returns as agent_line. */
int agent_line_overlong(struct agent_dev *d, struct agent_objs *o,
			struct answer *a);
/* True when t can be a token: 1 to AGENT_TOKEN_MAX printable ASCII bytes,
 * no spaces (it travels as one word). */
bool agent_token_ok(const char *t);
/* want == got, in a time that does not depend on where they differ. */
bool agent_token_equal(const char *want, const char *got);
/* Destroys every CM id, connection QP and its resources, and the event
 * channel of cm; cm is then empty. */
void agent_cm_free(struct agent_cm *cm);
/* Answers a poll of cq ("ok none" or "ok id=... status=..."), waiting
 * up to wait_ms for a completion. */
void poll_answer(struct ibv_cq *cq, unsigned wait_ms, struct answer *a);
/* Destroys everything o holds, CM connections first, windows next, PDs
 * last; o is then empty. */
void agent_objs_free(struct agent_objs *o);

/* The setup commands (hello pd mr cq srq qp modify query ah mw destroy) and
 * the work commands (recv send bind poll event read write); each returns
 * 0 with the answer written. */
int cmd_hello(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_pd(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_mr(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_cq(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_srq(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_qp(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_modify(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_query(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_ah(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_mw(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_destroy(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_recv(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_send(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_bind(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_poll(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_event(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_read(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_write(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
/* The CM commands (cmd_cm.c): cm_listen cm_event cm_accept cm_disconnect cm_poll. */
int cmd_cm_listen(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_cm_event(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_cm_accept(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);
int cmd_cm_disconnect(struct agent_dev *d, struct agent_objs *o, struct req *r,
		      struct answer *a);
int cmd_cm_poll(struct agent_dev *d, struct agent_objs *o, struct req *r, struct answer *a);

#endif
