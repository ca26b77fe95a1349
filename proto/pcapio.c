/* SPDX-License-Identifier: MIT */
/* pcap/pcapng I/O: pcap records read and checked here, pcapng and writing through libpcap. */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rocemu/frame.h"
#include "rocemu/pcapio.h"
#include "pcapio_local.h"

/*
 * The pcap format (draft-ietf-opsawg-pcap): a 24-byte file header, then
 * records of a 16-byte header (seconds, fraction, incl_len, orig_len) and
 * incl_len bytes, all in the writer's byte order, which the magic tells.
 * pcap is read here rather than by libpcap so that each record is checked
 * and a broken one is reported by number and offset: libpcap cuts a record
 * longer than the snapshot length without a word, and lets an orig_len
 * below incl_len through.
 */
enum {
	PCAP_FILE_HDR = 24,
	PCAP_REC_HDR = 16,
	/* Kuznetsov's patched libpcap adds ifindex, protocol and type */
	PCAP_KUZNETSOV_REC_HDR = 24,
	READ_BUF = 1 << 20,
};
_Static_assert(READ_BUF >= PCAP_KUZNETSOV_REC_HDR + ROCE_PCAP_MAX_CAPLEN,
	       "the read buffer holds the largest record");

#define MAGIC_USEC 0xa1b2c3d4u
#define MAGIC_NSEC 0xa1b23c4du
#define MAGIC_KUZNETSOV 0xa1b2cd34u
#define MAGIC_PCAPNG 0x0a0d0d0au /* the section header's type, a palindrome */

struct roce_pcap_writer {
	pcap_t *pc;
	pcap_dumper_t *d;
	int fd; /* unbuffered: each record goes here in one write; else -1 */
};

int roce_pcap_link_of_dlt(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB: return ROCE_LINK_ETH;
	case DLT_LINUX_SLL: return ROCE_LINK_SLL;
#ifdef DLT_LINUX_SLL2
	case DLT_LINUX_SLL2: return ROCE_LINK_SLL2;
#endif
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6: return ROCE_LINK_RAW;
	}
	return -1;
}

/* LINKTYPE values, as pcap file headers hold them (tcpdump.org registry). */
static int link_of_linktype(uint32_t linktype)
{
	switch (linktype) {
	case 1: return ROCE_LINK_ETH;
	case 113: return ROCE_LINK_SLL;
	case 276: return ROCE_LINK_SLL2;
	case 101: /* RAW */
	case 228: /* IPV4 */
	case 229: /* IPV6 */
		return ROCE_LINK_RAW;
	}
	return -1;
}

/* Writes the message into err and returns code. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, int code,
						       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, ROCE_PCAP_ERRLEN, fmt, ap);
	va_end(ap);
	return code;
}

static uint32_t load32(const uint8_t *p, bool big_endian)
{
	if (big_endian)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		       (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[1] << 8 | p[0];
}

static uint32_t get32(const struct pcap_file *f, const uint8_t *p)
{
	return load32(p, f->big_endian);
}

static uint16_t get16(const struct pcap_file *f, const uint8_t *p)
{
	return f->big_endian ? (uint16_t)(p[0] << 8 | p[1])
			     : (uint16_t)(p[1] << 8 | p[0]);
}

/*
 * Makes at least need unread bytes available at buf + pos, moving the
 * unread ones to the front first. Returns how many are available (fewer
 * at the end of the file), or -errno.
 */
static ssize_t fill(struct pcap_file *f, size_t need)
{
	if (f->end - f->pos >= need)
		return (ssize_t)(f->end - f->pos);
	memmove(f->buf, f->buf + f->pos, f->end - f->pos);
	f->buf_off += f->pos;
	f->end -= f->pos;
	f->pos = 0;
	while (f->end < need) {
		ssize_t n = read(f->fd, f->buf + f->end, READ_BUF - f->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		f->end += (size_t)n;
	}
	return (ssize_t)f->end;
}

/* Reads the 24-byte file header whose magic says pcap; 0 or -errno. */
static int open_pcap(struct roce_pcap_reader *r, uint32_t magic, char *err)
{
	struct pcap_file *f = &r->f;

	if (f->end < PCAP_FILE_HDR)
		return fail(err, -EBADMSG,
			    "truncated pcap file header: %zu of %d bytes",
			    f->end, PCAP_FILE_HDR);
	f->nano = magic == MAGIC_NSEC;
	f->rec_hdr = magic == MAGIC_KUZNETSOV ? PCAP_KUZNETSOV_REC_HDR
					      : PCAP_REC_HDR;
	uint16_t major = get16(f, f->buf + 4), minor = get16(f, f->buf + 6);
	if (major != 2 || minor != 4)
		return fail(err, -EPROTONOSUPPORT,
			    "pcap version %u.%u is not supported (2.4 is)",
			    major, minor);
	/* libpcap reads 0 or an oversized snaplen as its maximum */
	f->snaplen = get32(f, f->buf + 16);
	if (f->snaplen == 0 || f->snaplen > ROCE_PCAP_MAX_CAPLEN)
		f->snaplen = ROCE_PCAP_MAX_CAPLEN;
	/* the upper bits of the field say whether frames end in an FCS */
	uint32_t linktype = get32(f, f->buf + 20) & 0xffff;
	int link = link_of_linktype(linktype);
	/* the name is the one libpcap gives the same number */
	if (link < 0)
		return fail(err, -EPROTONOSUPPORT,
			    "link type %u (%s) is not Ethernet, Linux cooked "
			    "or raw IP",
			    linktype,
			    pcap_datalink_val_to_name((int)linktype) ?: "?");
	r->link = (unsigned)link;
	f->pos = PCAP_FILE_HDR;
	return 0;
}

/* A stream that gives the bytes already read, then the rest of the file:
 * libpcap reads pcapng from the start, and a pipe cannot be rewound. */
struct replay {
	uint8_t *head;
	size_t len, pos;
	int fd;
};

static ssize_t replay_read(void *cookie, char *buf, size_t size)
{
	struct replay *rp = cookie;

	if (rp->pos < rp->len) {
		size_t n = rp->len - rp->pos < size ? rp->len - rp->pos : size;
		memcpy(buf, rp->head + rp->pos, n);
		rp->pos += n;
		return (ssize_t)n;
	}
	ssize_t n;
	do
		n = read(rp->fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n;
}

static int replay_close(void *cookie)
{
	struct replay *rp = cookie;
	int rc = close(rp->fd);

	free(rp->head);
	free(rp);
	return rc;
}

/* Hands the file, with the bytes read so far, to libpcap; 0 or -errno. */
static int open_pcapng(struct roce_pcap_reader *r, char *err)
{
	static const cookie_io_functions_t io = { .read = replay_read,
						  .close = replay_close };
	struct replay *rp = calloc(1, sizeof(*rp));
	char perr[PCAP_ERRBUF_SIZE];
	FILE *fp = rp ? fopencookie(rp, "rb", io) : NULL;

	if (!fp) {
		free(rp);
		return fail(err, -ENOMEM, "out of memory");
	}
	*rp = (struct replay){ r->f.buf, r->f.end, 0, r->f.fd };
	r->f.buf = NULL; /* the stream owns the bytes and the descriptor */
	r->f.fd = -1;
	r->pc = pcap_fopen_offline_with_tstamp_precision(
		fp, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!r->pc) {
		fclose(fp);
		return fail(err, -EBADMSG, "%s", perr);
	}
	r->pc_nano = pcap_get_tstamp_precision(r->pc) ==
		     PCAP_TSTAMP_PRECISION_NANO;
	int dlt = pcap_datalink(r->pc), link = roce_pcap_link_of_dlt(dlt);
	if (link < 0)
		return fail(err, -EPROTONOSUPPORT,
			    "link type %d (%s) is not Ethernet, Linux cooked "
			    "or raw IP",
			    dlt, pcap_datalink_val_to_name(dlt) ?: "?");
	r->link = (unsigned)link;
	return 0;
}

/* Reads the start of the file and picks the reader its magic calls for. */
static int open_by_magic(struct roce_pcap_reader *r, char *err)
{
	ssize_t n = fill(&r->f, PCAP_FILE_HDR);

	if (n < 0)
		return fail(err, (int)n, "%s", strerror((int)-n));
	if (n < 4)
		return fail(err, -EBADMSG,
			    "not a pcap or pcapng capture: only %zd bytes", n);
	uint32_t le = load32(r->f.buf, false), be = load32(r->f.buf, true);
	if (be == MAGIC_PCAPNG)
		return open_pcapng(r, err);
	r->f.big_endian = be == MAGIC_USEC || be == MAGIC_NSEC ||
			  be == MAGIC_KUZNETSOV;
	uint32_t magic = r->f.big_endian ? be : le;
	if (magic != MAGIC_USEC && magic != MAGIC_NSEC &&
	    magic != MAGIC_KUZNETSOV)
		return fail(err, -EBADMSG,
			    "not a pcap or pcapng capture (it starts with "
			    "0x%08x)",
			    be);
	return open_pcap(r, magic, err);
}

int roce_pcap_open(const char *path, struct roce_pcap_reader **out, char *err)
{
	struct roce_pcap_reader *r = calloc(1, sizeof(*r));

	if (!r || !(r->f.buf = malloc(READ_BUF))) {
		free(r);
		return fail(err, -ENOMEM, "out of memory");
	}
	r->f.fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC)
				    : dup(STDIN_FILENO);
	int e = errno;
	int rc = r->f.fd < 0 ? fail(err, -e, "%s", strerror(e))
			     : open_by_magic(r, err);
	if (rc) {
		roce_pcap_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

unsigned roce_pcap_link(const struct roce_pcap_reader *r)
{
	return r->link;
}

/* Records the failure of record records + 1, at byte at if known. */
__attribute__((format(printf, 4, 5))) static int
rec_fail(struct roce_pcap_reader *r, int code, const uint64_t *at,
	 const char *fmt, ...)
{
	int n = snprintf(r->msg, sizeof(r->msg), "record %llu",
			 (unsigned long long)r->records + 1);
	if (at)
		n += snprintf(r->msg + n, sizeof(r->msg) - (size_t)n,
			      " at byte %llu", (unsigned long long)*at);
	n += snprintf(r->msg + n, sizeof(r->msg) - (size_t)n, ": ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg + n, sizeof(r->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	r->failed = code;
	return code;
}

/* The checks a record header must pass; 0 or -EBADMSG. */
static int check_pcap_rec(struct roce_pcap_reader *r, uint64_t at,
			  uint32_t frac, uint32_t incl, uint32_t orig)
{
	uint32_t second = r->f.nano ? 1000000000u : 1000000u;

	if (incl > ROCE_PCAP_MAX_CAPLEN)
		return rec_fail(r, -EBADMSG, &at,
				"incl_len %u exceeds %u, the largest record a "
				"capture may hold",
				incl, ROCE_PCAP_MAX_CAPLEN);
	if (incl > r->f.snaplen)
		return rec_fail(r, -EBADMSG, &at,
				"incl_len %u exceeds the snapshot length %u "
				"of the file header",
				incl, r->f.snaplen);
	if (orig < incl)
		return rec_fail(r, -EBADMSG, &at,
				"orig_len %u is below incl_len %u", orig, incl);
	if (frac >= second)
		return rec_fail(r, -EBADMSG, &at,
				"timestamp fraction %u is not below one second "
				"(%u %s)",
				frac, second,
				r->f.nano ? "nanoseconds" : "microseconds");
	return 0;
}

static int next_pcap(struct roce_pcap_reader *r, struct roce_pcap_rec *rec)
{
	struct pcap_file *f = &r->f;
	uint64_t at = f->buf_off + f->pos;
	ssize_t n = fill(f, f->rec_hdr);

	if (n == 0)
		return 0;
	if (n < 0)
		return rec_fail(r, -EIO, &at, "%s", strerror((int)-n));
	if ((size_t)n < f->rec_hdr)
		return rec_fail(r, -EBADMSG, &at,
				"truncated record header: %zd of %u bytes", n,
				f->rec_hdr);
	const uint8_t *h = f->buf + f->pos;
	uint32_t sec = get32(f, h), frac = get32(f, h + 4);
	uint32_t incl = get32(f, h + 8), orig = get32(f, h + 12);
	int rc = check_pcap_rec(r, at, frac, incl, orig);
	if (rc)
		return rc;
	n = fill(f, f->rec_hdr + incl); /* moves the buffer: h is stale */
	if (n < 0)
		return rec_fail(r, -EIO, &at, "%s", strerror((int)-n));
	if ((size_t)n < f->rec_hdr + incl)
		return rec_fail(r, -EBADMSG, &at,
				"truncated record: incl_len %u, but the file "
				"ends %zu bytes into its data",
				incl, (size_t)n - f->rec_hdr);
	rec->ts_ns = sec * 1000000000ull + frac * (f->nano ? 1ull : 1000ull);
	rec->caplen = incl;
	rec->wire_len = orig;
	rec->data = f->buf + f->pos + f->rec_hdr;
	f->pos += f->rec_hdr + incl;
	return 1;
}

/* libpcap checks the blocks of a pcapng file; these are the checks it
 * leaves to its caller. */
static int next_pcapng(struct roce_pcap_reader *r, struct roce_pcap_rec *rec)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc;

	/* A live capture's buffer timeout gives 0: nothing arrived yet */
	while ((rc = pcap_next_ex(r->pc, &h, &data)) == 0 && r->live)
		;
	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1)
		return rec_fail(r, -EIO, NULL, "%s", pcap_geterr(r->pc));
	if (h->len < h->caplen)
		return rec_fail(r, -EBADMSG, NULL,
				"original packet length %u is below the "
				"captured length %u",
				h->len, h->caplen);
	/* nanoseconds since 1970 in 63 bits reach the year 2262 */
	if (h->ts.tv_sec < 0 || h->ts.tv_sec >= INT64_MAX / 1000000000)
		return rec_fail(r, -EBADMSG, NULL,
				"timestamp %lld s is out of range",
				(long long)h->ts.tv_sec);
	uint64_t frac = (uint64_t)h->ts.tv_usec * (r->pc_nano ? 1 : 1000);
	rec->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull + frac;
	rec->caplen = h->caplen;
	rec->wire_len = h->len;
	rec->data = data;
	return 1;
}

int roce_pcap_next(struct roce_pcap_reader *r, struct roce_pcap_rec *rec,
		   char *err)
{
	int rc = r->failed ? r->failed
			   : r->pc ? next_pcapng(r, rec) : next_pcap(r, rec);

	if (rc < 0)
		snprintf(err, ROCE_PCAP_ERRLEN, "%s", r->msg);
	else
		r->records += (unsigned)rc;
	return rc;
}

void roce_pcap_close(struct roce_pcap_reader *r)
{
	if (!r)
		return;
	if (r->pc)
		pcap_close(r->pc);
	if (r->f.fd >= 0)
		close(r->f.fd);
	free(r->f.buf);
	free(r);
}

int roce_pcap_create(const char *path, struct roce_pcap_writer **w, char *err)
{
	struct roce_pcap_writer *x = calloc(1, sizeof(*x));

	if (!x) {
		snprintf(err, ROCE_PCAP_ERRLEN, "out of memory");
		return -ENOMEM;
	}
	x->pc = pcap_open_dead_with_tstamp_precision(
		DLT_EN10MB, ROCE_PCAP_MAX_CAPLEN, PCAP_TSTAMP_PRECISION_NANO);
	x->d = x->pc ? pcap_dump_open(x->pc, path) : NULL;
	if (!x->d) {
		int e = errno ? -errno : -EIO;
		snprintf(err, ROCE_PCAP_ERRLEN, "%s: %s", path,
			 x->pc ? pcap_geterr(x->pc) : "libpcap failed");
		if (x->pc)
			pcap_close(x->pc);
		free(x);
		return e;
	}
	x->fd = -1;
	*w = x;
	return 0;
}

int roce_pcap_write(struct roce_pcap_writer *w, uint64_t ts_ns,
		    const uint8_t *frame, size_t len)
{
	return roce_pcap_write_cut(w, ts_ns, frame, len, len);
}

/*
 * One record, header and data, in one writev: a reader of the file sees
 * it whole as soon as it is there, and nothing is left in a buffer for
 * an exit that skips the destructors. The header is libpcap's own
 * (pcap_sf_pkthdr: four 32-bit fields in the writer's byte order, as
 * pcap_dump writes it). A short write (a full disk) goes on where it
 * stopped; a failed one is -EIO.
 */
static int write_record(int fd, const struct pcap_pkthdr *h,
			const uint8_t *frame)
{
	uint32_t hdr[4] = { (uint32_t)h->ts.tv_sec, (uint32_t)h->ts.tv_usec,
			    h->caplen, h->len };
	const uint8_t *head = (const uint8_t *)hdr;
	size_t done = 0, total = sizeof(hdr) + (size_t)h->caplen;

	while (done < total) {
		/* what is left of the header, then of the frame */
		size_t in_frame = done < sizeof(hdr) ? 0 : done - sizeof(hdr);
		struct iovec iov[2];
		int cnt = 0;

		if (done < sizeof(hdr))
			iov[cnt++] = (struct iovec){ (void *)&head[done],
						     sizeof(hdr) - done };
		iov[cnt++] = (struct iovec){ (void *)(uintptr_t)&frame[in_frame],
					     h->caplen - in_frame };
		ssize_t n = writev(fd, iov, cnt);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

int roce_pcap_write_cut(struct roce_pcap_writer *w, uint64_t ts_ns,
			const uint8_t *frame, size_t caplen, size_t wire_len)
{
	struct pcap_pkthdr h = {
		.ts.tv_sec = (time_t)(ts_ns / 1000000000ull),
		/* tv_usec holds nanoseconds in a nanosecond-precision file */
		.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000ull),
		.caplen = (bpf_u_int32)caplen,
		.len = (bpf_u_int32)wire_len,
	};

	if (w->fd >= 0)
		return write_record(w->fd, &h, frame);
	pcap_dump((u_char *)w->d, &h, frame);
	return ferror(pcap_dump_file(w->d)) ? -EIO : 0;
}

int roce_pcap_unbuffered(struct roce_pcap_writer *w)
{
	if (pcap_dump_flush(w->d))
		return -EIO;
	w->fd = fileno(pcap_dump_file(w->d));
	return 0;
}

int roce_pcap_flush(struct roce_pcap_writer *w)
{
	return w && pcap_dump_flush(w->d) ? -EIO : 0;
}

int roce_pcap_finish(struct roce_pcap_writer *w)
{
	if (!w)
		return 0;
	int rc = pcap_dump_flush(w->d) ? -EIO : 0;
	if (ferror(pcap_dump_file(w->d)))
		rc = -EIO;
	pcap_dump_close(w->d);
	pcap_close(w->pc);
	free(w);
	return rc;
}
