/* Segment files of continuous archiving (segment.h). */
#include "archive/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "archive/internal.h"

#define HDR_MAGIC    "EOARSEG"
#define TRL_MAGIC    "EOARTRL1"
#define IO_CHUNK     (64 * 1024)
#define EVENT_FIXED  (1 + 8 * 4 + 4 + 4)
#define RECORD_FIXED (8 + 8 + 4)
#define PATH_MAX_LEN 4096

const char *eo_archive_strerror(int rc)
{
	switch (rc) {
	case EO_ARCHIVE_OK:
		return "ok";
	case EO_ARCHIVE_EIO:
		return "I/O error";
	case EO_ARCHIVE_ETRUNCATED:
		return "segment truncated";
	case EO_ARCHIVE_ECORRUPT:
		return "segment corrupted";
	case EO_ARCHIVE_EVERSION:
		return "not a segment of a known version";
	case EO_ARCHIVE_EORDER:
		return "revisions out of order";
	case EO_ARCHIVE_ETOOBIG:
		return "record too large";
	case EO_ARCHIVE_ENOMEM:
		return "out of memory";
	case EO_ARCHIVE_EINVAL:
		return "invalid argument";
	case EO_ARCHIVE_ECALLBACK:
		return "stopped by its callback";
	default:
		return "unknown error";
	}
}

int eo__archive_fail(int rc, char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && cap > 0) {
		va_start(ap, fmt);
		vsnprintf(err, cap, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Grows the record buffer *buf[*cap] to hold n bytes (its content need not be kept). */
static int reserve(unsigned char **buf, size_t *cap, size_t n, char *err, size_t errcap)
{
	unsigned char *p;

	if (n <= *cap)
		return 0;
	p = realloc(*buf, n);
	if (p == NULL)
		return eo__archive_fail(EO_ARCHIVE_ENOMEM, err, errcap, "out of memory");
	*buf = p;
	*cap = n;
	return 0;
}

static void put_u32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void eo_archive_seg_name(int64_t first, int64_t last, enum eo_archive_codec codec, char *out,
			 size_t cap)
{
	snprintf(out, cap, "%020" PRId64 "-%020" PRId64 ".seg%s", first, last,
		 codec == EO_ARCHIVE_CODEC_ZLIB ? ".z" : "");
}

/* ---- encoding ------------------------------------------------------------------- */

/* The encoded size of rev, or 0 when over the cap. */
static size_t record_size(const struct eo_archive_rev *rev)
{
	size_t n = 4 + RECORD_FIXED;

	for (size_t i = 0; i < rev->n; i++) {
		const struct eo_archive_event *e = &rev->events[i];

		if (e->key_len > EO_ARCHIVE_RECORD_MAX || e->value_len > EO_ARCHIVE_RECORD_MAX)
			return 0;
		n += EVENT_FIXED + e->key_len + e->value_len;
		if (n > EO_ARCHIVE_RECORD_MAX)
			return 0;
	}
	return n;
}

static void encode_record(const struct eo_archive_rev *rev, unsigned char *p, size_t n)
{
	put_u32(p, (uint32_t)(n - 4));
	put_u64(p + 4, (uint64_t)rev->revision);
	put_u64(p + 12, (uint64_t)rev->received_ms);
	put_u32(p + 20, (uint32_t)rev->n);
	p += 4 + RECORD_FIXED;
	for (size_t i = 0; i < rev->n; i++) {
		const struct eo_archive_event *e = &rev->events[i];

		*p++ = (unsigned char)e->type;
		put_u64(p, (uint64_t)e->create_revision);
		put_u64(p + 8, (uint64_t)e->mod_revision);
		put_u64(p + 16, (uint64_t)e->version);
		put_u64(p + 24, (uint64_t)e->lease);
		put_u32(p + 32, (uint32_t)e->key_len);
		p += 36;
		if (e->key_len > 0)
			memcpy(p, e->key, e->key_len);
		p += e->key_len;
		put_u32(p, (uint32_t)e->value_len);
		p += 4;
		if (e->value_len > 0)
			memcpy(p, e->value, e->value_len);
		p += e->value_len;
	}
}

/* ---- writer ---------------------------------------------------------------------- */

struct eo_archive_writer {
	char dir[PATH_MAX_LEN - 128];
	int64_t max_age_ms;
	size_t max_bytes;
	enum eo_archive_codec codec;
	int level;
	eo_archive_closed_fn closed;
	void *ud;
	int64_t last_rev; /* last revision written, any segment */
	/* the open segment */
	FILE *f;
	char partial[PATH_MAX_LEN];
	z_stream z;
	bool z_on;
	struct eo_archive_seg_info info;
	uint32_t raw_crc, file_crc;
	unsigned char *rec;
	size_t rec_cap;
	unsigned char out[IO_CHUNK];
};

static int file_write(struct eo_archive_writer *w, const void *p, size_t n, char *err, size_t cap)
{
	if (n == 0)
		return 0;
	if (fwrite(p, 1, n, w->f) != n)
		return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: write: %s", w->partial,
					strerror(errno));
	w->file_crc = (uint32_t)crc32(w->file_crc, p, (uInt)n);
	w->info.size += n;
	return 0;
}

/* Pushes raw bytes through the codec (finish: end the zlib stream). */
static int codec_write(struct eo_archive_writer *w, const unsigned char *p, size_t n, bool finish,
		       char *err, size_t cap)
{
	int zr, rc;

	if (w->codec == EO_ARCHIVE_CODEC_NONE)
		return file_write(w, p, n, err, cap);
	w->z.next_in = (Bytef *)p;
	w->z.avail_in = (uInt)n;
	do {
		w->z.next_out = w->out;
		w->z.avail_out = sizeof(w->out);
		zr = deflate(&w->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR)
			return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "deflate failed");
		rc = file_write(w, w->out, sizeof(w->out) - w->z.avail_out, err, cap);
		if (rc != 0)
			return rc;
	} while (w->z.avail_out == 0 || (finish && zr != Z_STREAM_END));
	return 0;
}

int eo_archive_writer_new(const struct eo_archive_writer_opts *o, eo_archive_closed_fn closed,
			  void *ud, struct eo_archive_writer **out, char *err, size_t errcap)
{
	struct eo_archive_writer *w;

	*out = NULL;
	if (o == NULL || o->dir == NULL ||
	    strlen(o->dir) >= sizeof(((struct eo_archive_writer *)0)->dir) ||
	    (o->codec != EO_ARCHIVE_CODEC_NONE && o->codec != EO_ARCHIVE_CODEC_ZLIB) ||
	    o->level < 0 || o->level > 9 || o->max_age_ms < 0)
		return eo__archive_fail(EO_ARCHIVE_EINVAL, err, errcap,
					"invalid segment writer options");
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return eo__archive_fail(EO_ARCHIVE_ENOMEM, err, errcap, "out of memory");
	snprintf(w->dir, sizeof(w->dir), "%s", o->dir);
	w->max_age_ms = o->max_age_ms > 0 ? o->max_age_ms : EO_ARCHIVE_SEG_MAX_AGE_MS;
	w->max_bytes = o->max_bytes > 0 ? o->max_bytes : EO_ARCHIVE_SEG_MAX_BYTES;
	w->codec = o->codec;
	w->level = o->level > 0 ? o->level : 1;
	w->closed = closed;
	w->ud = ud;
	*out = w;
	return 0;
}

static void drop_open(struct eo_archive_writer *w)
{
	if (w->z_on)
		deflateEnd(&w->z);
	w->z_on = false;
	if (w->f != NULL) {
		fclose(w->f);
		unlink(w->partial);
	}
	w->f = NULL;
	memset(&w->info, 0, sizeof(w->info));
}

static int open_segment(struct eo_archive_writer *w, const struct eo_archive_rev *first, char *err,
			size_t cap)
{
	unsigned char hdr[EO_ARCHIVE_SEG_HEADER_LEN] = {0};

	snprintf(w->partial, sizeof(w->partial), "%s/%020" PRId64 ".partial", w->dir,
		 first->revision);
	/* A .partial left by a writer that died is never a segment: start it again. */
	if (unlink(w->partial) != 0 && errno != ENOENT)
		return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: %s", w->partial,
					strerror(errno));
	w->f = fopen(w->partial, "wbx");
	if (w->f == NULL)
		return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: %s", w->partial,
					strerror(errno));
	memset(&w->info, 0, sizeof(w->info));
	w->info.codec = w->codec;
	w->info.first_revision = first->revision;
	w->info.first_received_ms = first->received_ms;
	w->raw_crc = (uint32_t)crc32(0, NULL, 0);
	w->file_crc = w->raw_crc;
	if (w->codec == EO_ARCHIVE_CODEC_ZLIB) {
		memset(&w->z, 0, sizeof(w->z));
		if (deflateInit(&w->z, w->level) != Z_OK) {
			drop_open(w);
			return eo__archive_fail(EO_ARCHIVE_ENOMEM, err, cap, "deflateInit failed");
		}
		w->z_on = true;
	}
	memcpy(hdr, HDR_MAGIC, 7);
	hdr[7] = EO_ARCHIVE_SEG_VERSION;
	hdr[8] = (unsigned char)w->codec;
	if (file_write(w, hdr, sizeof(hdr), err, cap) != 0) {
		drop_open(w);
		return EO_ARCHIVE_EIO;
	}
	return 0;
}

static int close_segment(struct eo_archive_writer *w, char *err, size_t cap)
{
	unsigned char t[EO_ARCHIVE_SEG_TRAILER_LEN];
	char final[PATH_MAX_LEN];
	int rc;

	if (w->f == NULL)
		return 0;
	if (w->codec == EO_ARCHIVE_CODEC_ZLIB) {
		rc = codec_write(w, NULL, 0, true, err, cap);
		if (rc != 0)
			goto bad;
	}
	memcpy(t, TRL_MAGIC, 8);
	put_u64(t + 8, w->info.records);
	put_u64(t + 16, (uint64_t)w->info.first_revision);
	put_u64(t + 24, (uint64_t)w->info.last_revision);
	put_u64(t + 32, w->info.raw_len);
	put_u32(t + 40, w->raw_crc);
	rc = file_write(w, t, 44, err, cap);
	if (rc != 0)
		goto bad;
	w->info.file_crc = w->file_crc;
	put_u32(t + 44, w->file_crc);
	rc = file_write(w, t + 44, 4, err, cap);
	if (rc != 0)
		goto bad;
	if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0) {
		rc = eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: flush: %s", w->partial,
				      strerror(errno));
		goto bad;
	}
	eo_archive_seg_name(w->info.first_revision, w->info.last_revision, w->codec, w->info.name,
			    sizeof(w->info.name));
	snprintf(final, sizeof(final), "%s/%s", w->dir, w->info.name);
	if (rename(w->partial, final) != 0) {
		rc = eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: rename: %s", final,
				      strerror(errno));
		goto bad;
	}
	fclose(w->f);
	w->f = NULL;
	if (w->z_on)
		deflateEnd(&w->z);
	w->z_on = false;
	if (w->closed != NULL && w->closed(w->ud, &w->info, err, cap) != 0)
		return EO_ARCHIVE_ECALLBACK;
	return 0;
bad:
	drop_open(w);
	return rc;
}

int eo_archive_writer_tick(struct eo_archive_writer *w, int64_t now_ms, char *err, size_t errcap)
{
	if (w->f == NULL || w->info.records == 0 ||
	    now_ms - w->info.first_received_ms < w->max_age_ms)
		return 0;
	return close_segment(w, err, errcap);
}

int eo_archive_writer_flush(struct eo_archive_writer *w, char *err, size_t errcap)
{
	return close_segment(w, err, errcap);
}

int eo_archive_writer_add(struct eo_archive_writer *w, const struct eo_archive_rev *rev, char *err,
			  size_t errcap)
{
	size_t n;
	int rc;

	if (rev == NULL || (rev->n > 0 && rev->events == NULL) || rev->n == 0)
		return eo__archive_fail(EO_ARCHIVE_EINVAL, err, errcap,
					"a revision needs its events");
	if (rev->revision <= w->last_rev)
		return eo__archive_fail(EO_ARCHIVE_EORDER, err, errcap,
					"revision %" PRId64 " after %" PRId64 ": not increasing",
					rev->revision, w->last_rev);
	n = record_size(rev);
	if (n == 0)
		return eo__archive_fail(EO_ARCHIVE_ETOOBIG, err, errcap,
					"revision %" PRId64 " is over %zu bytes", rev->revision,
					EO_ARCHIVE_RECORD_MAX);
	rc = eo_archive_writer_tick(w, rev->received_ms, err, errcap);
	if (rc != 0)
		return rc;
	rc = reserve(&w->rec, &w->rec_cap, n, err, errcap);
	if (rc != 0)
		return rc;
	encode_record(rev, w->rec, n);
	if (w->f == NULL && (rc = open_segment(w, rev, err, errcap)) != 0)
		return rc;
	rc = codec_write(w, w->rec, n, false, err, errcap);
	if (rc != 0) {
		drop_open(w);
		return rc;
	}
	w->raw_crc = (uint32_t)crc32(w->raw_crc, w->rec, (uInt)n);
	w->info.raw_len += n;
	w->info.records++;
	w->info.last_revision = rev->revision;
	w->info.last_received_ms = rev->received_ms;
	w->last_rev = rev->revision;
	if (w->info.raw_len >= w->max_bytes)
		return close_segment(w, err, errcap);
	return 0;
}

void eo_archive_writer_free(struct eo_archive_writer *w)
{
	if (w == NULL)
		return;
	drop_open(w);
	free(w->rec);
	free(w);
}

/* ---- reader ----------------------------------------------------------------------- */

struct eo_archive_reader {
	FILE *f;
	char path[PATH_MAX_LEN];
	struct eo_archive_seg_info info;
	uint32_t want_raw_crc;
	uint64_t body_left; /* body bytes not yet read from the file */
	z_stream z;
	bool z_on, z_end;
	unsigned char in[IO_CHUNK];
	/* progress */
	uint64_t records, raw_len;
	uint32_t raw_crc;
	int64_t last_rev;
	unsigned char *rec;
	size_t rec_cap;
	struct eo_archive_event *ev;
	size_t ev_cap;
};

static int crc_file(struct eo_archive_reader *r, uint64_t upto, uint32_t *crc, char *err,
		    size_t cap)
{
	uint32_t c = (uint32_t)crc32(0, NULL, 0);
	size_t got;

	if (fseeko(r->f, 0, SEEK_SET) != 0)
		return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: seek: %s", r->path,
					strerror(errno));
	while (upto > 0) {
		got = fread(r->in, 1, upto < sizeof(r->in) ? (size_t)upto : sizeof(r->in), r->f);
		if (got == 0)
			return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: read failed",
						r->path);
		c = (uint32_t)crc32(c, r->in, (uInt)got);
		upto -= got;
	}
	*crc = c;
	return 0;
}

static int check_frame(struct eo_archive_reader *r, uint64_t size, char *err, size_t cap)
{
	unsigned char h[EO_ARCHIVE_SEG_HEADER_LEN], t[EO_ARCHIVE_SEG_TRAILER_LEN];
	uint32_t crc = 0;
	int rc;

	if (size < EO_ARCHIVE_SEG_HEADER_LEN || fread(h, 1, sizeof(h), r->f) != sizeof(h))
		return eo__archive_fail(EO_ARCHIVE_ETRUNCATED, err, cap,
					"%s: shorter than a header", r->path);
	if (memcmp(h, HDR_MAGIC, 7) != 0)
		return eo__archive_fail(EO_ARCHIVE_EVERSION, err, cap, "%s: not a segment",
					r->path);
	if (h[7] != EO_ARCHIVE_SEG_VERSION || h[8] > EO_ARCHIVE_CODEC_ZLIB)
		return eo__archive_fail(EO_ARCHIVE_EVERSION, err, cap,
					"%s: version %u codec %u not known", r->path, h[7], h[8]);
	r->info.codec = (enum eo_archive_codec)h[8];
	if (size < EO_ARCHIVE_SEG_HEADER_LEN + EO_ARCHIVE_SEG_TRAILER_LEN ||
	    fseeko(r->f, (off_t)(size - sizeof(t)), SEEK_SET) != 0 ||
	    fread(t, 1, sizeof(t), r->f) != sizeof(t) || memcmp(t, TRL_MAGIC, 8) != 0)
		return eo__archive_fail(EO_ARCHIVE_ETRUNCATED, err, cap,
					"%s: no trailer: cut short", r->path);
	rc = crc_file(r, size - 4, &crc, err, cap);
	if (rc != 0)
		return rc;
	if (crc != get_u32(t + 44))
		return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
					"%s: file CRC %08x, trailer says %08x", r->path, crc,
					get_u32(t + 44));
	r->info.records = get_u64(t + 8);
	r->info.first_revision = (int64_t)get_u64(t + 16);
	r->info.last_revision = (int64_t)get_u64(t + 24);
	r->info.raw_len = get_u64(t + 32);
	r->want_raw_crc = get_u32(t + 40);
	r->info.file_crc = crc;
	r->info.size = size;
	r->body_left = size - EO_ARCHIVE_SEG_HEADER_LEN - EO_ARCHIVE_SEG_TRAILER_LEN;
	if (fseeko(r->f, EO_ARCHIVE_SEG_HEADER_LEN, SEEK_SET) != 0)
		return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: seek: %s", r->path,
					strerror(errno));
	return 0;
}

int eo_archive_reader_open(const char *path, struct eo_archive_reader **out,
			   struct eo_archive_seg_info *info, char *err, size_t errcap)
{
	struct eo_archive_reader *r;
	const char *base;
	off_t size;
	int rc;

	*out = NULL;
	if (path == NULL || strlen(path) >= PATH_MAX_LEN)
		return eo__archive_fail(EO_ARCHIVE_EINVAL, err, errcap, "invalid segment path");
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return eo__archive_fail(EO_ARCHIVE_ENOMEM, err, errcap, "out of memory");
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->f = fopen(path, "rb");
	if (r->f == NULL) {
		rc = eo__archive_fail(EO_ARCHIVE_EIO, err, errcap, "%s: %s", path, strerror(errno));
		goto bad;
	}
	if (fseeko(r->f, 0, SEEK_END) != 0 || (size = ftello(r->f)) < 0 ||
	    fseeko(r->f, 0, SEEK_SET) != 0) {
		rc = eo__archive_fail(EO_ARCHIVE_EIO, err, errcap, "%s: %s", path, strerror(errno));
		goto bad;
	}
	rc = check_frame(r, (uint64_t)size, err, errcap);
	if (rc != 0)
		goto bad;
	if (r->info.codec == EO_ARCHIVE_CODEC_ZLIB) {
		if (inflateInit(&r->z) != Z_OK) {
			rc = eo__archive_fail(EO_ARCHIVE_ENOMEM, err, errcap, "inflateInit failed");
			goto bad;
		}
		r->z_on = true;
	}
	r->raw_crc = (uint32_t)crc32(0, NULL, 0);
	base = strrchr(path, '/');
	snprintf(r->info.name, sizeof(r->info.name), "%s", base ? base + 1 : path);
	if (info != NULL)
		*info = r->info;
	*out = r;
	return 0;
bad:
	eo_archive_reader_free(r);
	return rc;
}

/* Reads exactly n raw bytes (1), none at a clean end of the body (0), or an error. */
static int raw_read(struct eo_archive_reader *r, unsigned char *p, size_t n, char *err, size_t cap)
{
	size_t got = 0, k;
	int zr;

	if (r->info.codec == EO_ARCHIVE_CODEC_NONE) {
		if (r->body_left == 0)
			return 0;
		if (r->body_left < n)
			return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
						"%s: record cut short", r->path);
		if (fread(p, 1, n, r->f) != n)
			return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: read failed",
						r->path);
		r->body_left -= n;
		return 1;
	}
	while (got < n) {
		if (r->z_end)
			break;
		if (r->z.avail_in == 0 && r->body_left > 0) {
			k = r->body_left < sizeof(r->in) ? (size_t)r->body_left : sizeof(r->in);
			if (fread(r->in, 1, k, r->f) != k)
				return eo__archive_fail(EO_ARCHIVE_EIO, err, cap, "%s: read failed",
							r->path);
			r->body_left -= k;
			r->z.next_in = r->in;
			r->z.avail_in = (uInt)k;
		}
		r->z.next_out = p + got;
		r->z.avail_out = (uInt)(n - got);
		zr = inflate(&r->z, Z_NO_FLUSH);
		got = n - r->z.avail_out;
		if (zr == Z_STREAM_END) {
			r->z_end = true;
		} else if (zr == Z_BUF_ERROR && r->body_left == 0 && r->z.avail_in == 0) {
			return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
						"%s: compressed body cut short", r->path);
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
						"%s: compressed body: %s", r->path,
						r->z.msg ? r->z.msg : "inflate failed");
		}
	}
	if (got == n)
		return 1;
	if (got == 0 && r->z.avail_in == 0 && r->body_left == 0)
		return 0;
	return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap, "%s: record cut short", r->path);
}

static int parse_events(struct eo_archive_reader *r, const unsigned char *p, size_t n,
			uint32_t count, char *err, size_t cap)
{
	const unsigned char *end = p + n;

	if (count > n / EVENT_FIXED)
		return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
					"%s: event count %u too large", r->path, count);
	if (count > r->ev_cap) {
		struct eo_archive_event *e = realloc(r->ev, (size_t)count * sizeof(*e));

		if (e == NULL)
			return eo__archive_fail(EO_ARCHIVE_ENOMEM, err, cap, "out of memory");
		r->ev = e;
		r->ev_cap = count;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct eo_archive_event *e = &r->ev[i];
		uint32_t kl, vl;

		if ((size_t)(end - p) < EVENT_FIXED || p[0] > EO_ARCHIVE_DELETE)
			goto bad;
		e->type = (enum eo_archive_event_type)p[0];
		e->create_revision = (int64_t)get_u64(p + 1);
		e->mod_revision = (int64_t)get_u64(p + 9);
		e->version = (int64_t)get_u64(p + 17);
		e->lease = (int64_t)get_u64(p + 25);
		kl = get_u32(p + 33);
		p += 37;
		if ((size_t)(end - p) < (size_t)kl + 4)
			goto bad;
		e->key = p;
		e->key_len = kl;
		p += kl;
		vl = get_u32(p);
		p += 4;
		if ((size_t)(end - p) < vl)
			goto bad;
		e->value = vl > 0 ? p : NULL;
		e->value_len = vl;
		p += vl;
	}
	if (p != end)
		goto bad;
	return 0;
bad:
	return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
				"%s: malformed event in record %" PRIu64, r->path, r->records + 1);
}

static int finish_check(struct eo_archive_reader *r, char *err, size_t cap)
{
	if (r->info.codec == EO_ARCHIVE_CODEC_ZLIB && (!r->z_end || r->z.avail_in != 0))
		return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
					"%s: compressed body does not end "
					"where the trailer starts",
					r->path);
	if (r->records != r->info.records || r->raw_len != r->info.raw_len ||
	    r->raw_crc != r->want_raw_crc ||
	    (r->records > 0 && r->last_rev != r->info.last_revision))
		return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
					"%s: %" PRIu64 " records, trailer says %" PRIu64
					" (or CRC mismatch)",
					r->path, r->records, r->info.records);
	return 0;
}

int eo_archive_reader_next(struct eo_archive_reader *r, struct eo_archive_rev *rev, char *err,
			   size_t errcap)
{
	unsigned char lb[4];
	uint32_t len;
	int rc;

	memset(rev, 0, sizeof(*rev));
	rc = raw_read(r, lb, 4, err, errcap);
	if (rc == 0)
		return finish_check(r, err, errcap);
	if (rc < 0)
		return rc;
	len = get_u32(lb);
	if (len > EO_ARCHIVE_RECORD_MAX - 4 || len < RECORD_FIXED)
		return eo__archive_fail(
		    len < RECORD_FIXED ? EO_ARCHIVE_ECORRUPT : EO_ARCHIVE_ETOOBIG, err, errcap,
		    "%s: record length %u out of bounds", r->path, len);
	rc = reserve(&r->rec, &r->rec_cap, len, err, errcap);
	if (rc != 0)
		return rc;
	rc = raw_read(r, r->rec, len, err, errcap);
	if (rc <= 0)
		return rc < 0 ? rc
			      : eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, errcap,
						 "%s: record cut short", r->path);
	r->raw_crc = (uint32_t)crc32(r->raw_crc, lb, 4);
	r->raw_crc = (uint32_t)crc32(r->raw_crc, r->rec, len);
	r->raw_len += 4 + (uint64_t)len;
	rev->revision = (int64_t)get_u64(r->rec);
	rev->received_ms = (int64_t)get_u64(r->rec + 8);
	if (r->records > 0 && rev->revision <= r->last_rev)
		return eo__archive_fail(EO_ARCHIVE_EORDER, err, errcap,
					"%s: revision %" PRId64 " after %" PRId64, r->path,
					rev->revision, r->last_rev);
	if (r->records == 0 && rev->revision != r->info.first_revision)
		return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, errcap,
					"%s: first revision %" PRId64 ", trailer says %" PRId64,
					r->path, rev->revision, r->info.first_revision);
	rc = parse_events(r, r->rec + RECORD_FIXED, len - RECORD_FIXED, get_u32(r->rec + 16), err,
			  errcap);
	if (rc != 0)
		return rc;
	rev->events = r->ev;
	rev->n = get_u32(r->rec + 16);
	r->records++;
	r->last_rev = rev->revision;
	if (r->records > r->info.records)
		return eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, errcap,
					"%s: more records than the trailer "
					"says",
					r->path);
	return 1;
}

void eo_archive_reader_free(struct eo_archive_reader *r)
{
	if (r == NULL)
		return;
	if (r->z_on)
		inflateEnd(&r->z);
	if (r->f != NULL)
		fclose(r->f);
	free(r->rec);
	free(r->ev);
	free(r);
}

/* ---- replay ----------------------------------------------------------------------- */

static bool past_target(const struct eo_archive_target *t, const struct eo_archive_rev *rev)
{
	if (t == NULL)
		return false;
	return (t->revision > 0 && rev->revision > t->revision) ||
	       (t->time_ms > 0 && rev->received_ms > t->time_ms);
}

static int replay_one(const char *path, int64_t *cur, bool contiguous,
		      const struct eo_archive_target *t, eo_archive_rev_fn fn, void *ud, bool *stop,
		      char *err, size_t cap)
{
	struct eo_archive_reader *r = NULL;
	struct eo_archive_rev rev;
	int rc;

	rc = eo_archive_reader_open(path, &r, NULL, err, cap);
	while (rc == 0 && (rc = eo_archive_reader_next(r, &rev, err, cap)) == 1) {
		rc = 0;
		if (rev.revision <= *cur)
			continue; /* in the base already, or replayed from an earlier segment */
		if (past_target(t, &rev)) {
			*stop = true;
			break;
		}
		if (contiguous && rev.revision != *cur + 1) {
			rc = eo__archive_fail(EO_ARCHIVE_ECORRUPT, err, cap,
					      "%s: revision %" PRId64 " follows %" PRId64
					      ": revisions %" PRId64 "-%" PRId64 " are missing",
					      path, rev.revision, *cur, *cur + 1, rev.revision - 1);
			break;
		}
		if (fn(ud, &rev, err, cap) != 0) {
			rc = EO_ARCHIVE_ECALLBACK;
			break;
		}
		*cur = rev.revision;
	}
	eo_archive_reader_free(r);
	return rc;
}

int eo_archive_replay(const char *const *paths, size_t n, int64_t after_revision, bool contiguous,
		      const struct eo_archive_target *target, eo_archive_rev_fn fn, void *ud,
		      int64_t *last, char *err, size_t errcap)
{
	int64_t cur = after_revision;
	bool stop = false;
	int rc = 0;

	if (fn == NULL || (n > 0 && paths == NULL))
		return eo__archive_fail(EO_ARCHIVE_EINVAL, err, errcap, "invalid replay arguments");
	for (size_t i = 0; i < n && !stop && rc == 0; i++)
		rc = replay_one(paths[i], &cur, contiguous, target, fn, ud, &stop, err, errcap);
	if (last != NULL)
		*last = cur;
	return rc;
}
