/*
 * Unit tests of archive/segment: round trips with both codecs, a txn's several events kept as
 * one revision, the age and size limits closing segments, revisions out of order refused,
 * truncated and corrupted files refused before any revision is yielded, and replay to a
 * target revision or time across segments, with a missing segment found.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/segment.h"

struct closed {
	struct eo_archive_seg_info info[64];
	size_t n;
};

static int on_closed(void *ud, const struct eo_archive_seg_info *info, char *err, size_t cap)
{
	struct closed *c = ud;

	(void)err, (void)cap;
	assert_true(c->n < 64);
	c->info[c->n++] = *info;
	return 0;
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/eo-archive-seg.XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void rmdir_all(char *d)
{
	DIR *dir = opendir(d);
	struct dirent *e;
	char p[4096];

	while (dir != NULL && (e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", d, e->d_name);
		unlink(p);
	}
	if (dir != NULL)
		closedir(dir);
	rmdir(d);
	free(d);
}

static size_t count_files(const char *d, const char *suffix)
{
	DIR *dir = opendir(d);
	struct dirent *e;
	size_t n = 0, k = strlen(suffix);

	while ((e = readdir(dir)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l >= k && strcmp(e->d_name + l - k, suffix) == 0)
			n++;
	}
	closedir(dir);
	return n;
}

/* Revision rev: a put of "k<rev>" = "v<rev>" (plus a put and a delete when txn). */
static void make_rev(int64_t rev, int64_t ms, bool txn, struct eo_archive_event *ev, char *k,
		     char *v, struct eo_archive_rev *out)
{
	snprintf(k, 32, "k%lld", (long long)rev);
	snprintf(v, 32, "v%lld", (long long)rev);
	ev[0] = (struct eo_archive_event){EO_ARCHIVE_PUT,
					  (unsigned char *)k,
					  strlen(k),
					  (unsigned char *)v,
					  strlen(v),
					  rev,
					  rev,
					  1,
					  0};
	ev[1] = (struct eo_archive_event){EO_ARCHIVE_PUT,
					  (const unsigned char *)"t\0x",
					  3,
					  (const unsigned char *)"",
					  0,
					  2,
					  rev,
					  7,
					  0x1234};
	ev[2] = (struct eo_archive_event){
	    EO_ARCHIVE_DELETE, (const unsigned char *)"gone", 4, NULL, 0, 0, rev, 0, 0};
	*out = (struct eo_archive_rev){rev, ms, ev, txn ? 3 : 1};
}

static void write_revs(struct eo_archive_writer *w, int64_t from, int64_t to, int64_t ms0,
		       int64_t step_ms)
{
	struct eo_archive_event ev[3];
	struct eo_archive_rev r;
	char k[32], v[32], err[256];

	for (int64_t rev = from; rev <= to; rev++) {
		make_rev(rev, ms0 + (rev - from) * step_ms, rev % 3 == 0, ev, k, v, &r);
		assert_int_equal(eo_archive_writer_add(w, &r, err, sizeof(err)), 0);
	}
}

static void check_rev(const struct eo_archive_rev *r)
{
	char k[32], v[32];

	snprintf(k, sizeof(k), "k%lld", (long long)r->revision);
	snprintf(v, sizeof(v), "v%lld", (long long)r->revision);
	assert_int_equal(r->n, r->revision % 3 == 0 ? 3 : 1);
	assert_int_equal(r->events[0].type, EO_ARCHIVE_PUT);
	assert_memory_equal(r->events[0].key, k, strlen(k));
	assert_int_equal(r->events[0].key_len, strlen(k));
	assert_memory_equal(r->events[0].value, v, strlen(v));
	assert_int_equal(r->events[0].mod_revision, r->revision);
	if (r->n == 3) {
		assert_int_equal(r->events[1].key_len, 3);
		assert_memory_equal(r->events[1].key, "t\0x", 3);
		assert_int_equal(r->events[1].value_len, 0);
		assert_int_equal(r->events[1].version, 7);
		assert_int_equal(r->events[1].lease, 0x1234);
		assert_int_equal(r->events[2].type, EO_ARCHIVE_DELETE);
		assert_memory_equal(r->events[2].key, "gone", 4);
		assert_null(r->events[2].value);
	}
}

static void roundtrip(enum eo_archive_codec codec)
{
	char *d = tmpdir(), path[4096], err[256];
	struct closed c = {0};
	struct eo_archive_writer_opts o = {.dir = d, .codec = codec};
	struct eo_archive_writer *w;
	struct eo_archive_reader *r;
	struct eo_archive_seg_info info;
	struct eo_archive_rev rev;
	int64_t want = 10;
	int rc;

	/* A .partial a dead writer left for the same first revision is replaced. */
	snprintf(path, sizeof(path), "%s/00000000000000000010.partial", d);
	fclose(fopen(path, "w"));
	assert_int_equal(eo_archive_writer_new(&o, on_closed, &c, &w, err, sizeof(err)), 0);
	write_revs(w, 10, 200, 1000, 1);
	assert_int_equal(c.n, 0);
	assert_int_equal(count_files(d, ".partial"), 1);
	assert_int_equal(eo_archive_writer_flush(w, err, sizeof(err)), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(count_files(d, ".partial"), 0);
	assert_int_equal(c.info[0].first_revision, 10);
	assert_int_equal(c.info[0].last_revision, 200);
	assert_int_equal(c.info[0].first_received_ms, 1000);
	assert_int_equal(c.info[0].last_received_ms, 1190);
	assert_int_equal(c.info[0].records, 191);
	assert_string_equal(c.info[0].name, codec == EO_ARCHIVE_CODEC_ZLIB
						? "00000000000000000010-00000000000000000200.seg.z"
						: "00000000000000000010-00000000000000000200.seg");
	snprintf(path, sizeof(path), "%s/%s", d, c.info[0].name);
	assert_int_equal(eo_archive_reader_open(path, &r, &info, err, sizeof(err)), 0);
	assert_int_equal(info.file_crc, c.info[0].file_crc);
	assert_int_equal(info.size, c.info[0].size);
	if (codec == EO_ARCHIVE_CODEC_ZLIB)
		assert_true(info.size < info.raw_len);
	while ((rc = eo_archive_reader_next(r, &rev, err, sizeof(err))) == 1) {
		assert_int_equal(rev.revision, want);
		assert_int_equal(rev.received_ms, 1000 + want - 10);
		check_rev(&rev);
		want++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(want, 201);
	eo_archive_reader_free(r);
	eo_archive_writer_free(w);
	rmdir_all(d);
}

static void test_roundtrip_plain(void **state)
{
	(void)state;
	roundtrip(EO_ARCHIVE_CODEC_NONE);
}

static void test_roundtrip_zlib(void **state)
{
	(void)state;
	roundtrip(EO_ARCHIVE_CODEC_ZLIB);
}

static void test_limits_close_segments(void **state)
{
	char *d = tmpdir(), err[256];
	struct closed c = {0};
	struct eo_archive_writer_opts o = {.dir = d, .max_age_ms = 100, .max_bytes = 1 << 20};
	struct eo_archive_writer *w;

	(void)state;
	assert_int_equal(eo_archive_writer_new(&o, on_closed, &c, &w, err, sizeof(err)), 0);
	/* 10 ms apart: the revision arriving 100 ms after a segment's first opens the next. */
	write_revs(w, 1, 25, 0, 10);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.info[0].first_revision, 1);
	assert_int_equal(c.info[0].last_revision, 10);
	assert_int_equal(c.info[1].first_revision, 11);
	assert_int_equal(c.info[1].last_revision, 20);
	/* Idle: a tick before the age keeps it open, at the age closes it. */
	assert_int_equal(eo_archive_writer_tick(w, 299, err, sizeof(err)), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(eo_archive_writer_tick(w, 300, err, sizeof(err)), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.info[2].last_revision, 25);
	/* Nothing open: flush and tick are no-ops. */
	assert_int_equal(eo_archive_writer_flush(w, err, sizeof(err)), 0);
	assert_int_equal(c.n, 3);
	eo_archive_writer_free(w);

	/* Size: records of 52 or 82 bytes, closed once 200 bytes of records are in. */
	c.n = 0;
	o.max_age_ms = 0;
	o.max_bytes = 200;
	assert_int_equal(eo_archive_writer_new(&o, on_closed, &c, &w, err, sizeof(err)), 0);
	write_revs(w, 100, 110, 0, 0);
	assert_true(c.n >= 2);
	for (size_t i = 0; i < c.n; i++) {
		assert_true(c.info[i].raw_len >= 200);
		assert_true(c.info[i].raw_len < 200 + 120);
	}
	eo_archive_writer_free(w);
	/* The open segment was not closed by free: its partial file is gone, no new segment. */
	assert_int_equal(count_files(d, ".partial"), 0);
	rmdir_all(d);
}

static void test_order_and_size_refused(void **state)
{
	char *d = tmpdir(), err[256];
	struct eo_archive_writer_opts o = {.dir = d};
	struct eo_archive_writer *w;
	struct eo_archive_event ev[3];
	struct eo_archive_rev r;
	char k[32], v[32];
	unsigned char *big = calloc(1, EO_ARCHIVE_RECORD_MAX);

	(void)state;
	assert_int_equal(eo_archive_writer_new(&o, NULL, NULL, &w, err, sizeof(err)), 0);
	write_revs(w, 5, 6, 0, 0);
	make_rev(6, 0, false, ev, k, v, &r);
	assert_int_equal(eo_archive_writer_add(w, &r, err, sizeof(err)), EO_ARCHIVE_EORDER);
	assert_non_null(strstr(err, "not increasing"));
	make_rev(7, 0, false, ev, k, v, &r);
	ev[0].value = big;
	ev[0].value_len = EO_ARCHIVE_RECORD_MAX;
	assert_int_equal(eo_archive_writer_add(w, &r, err, sizeof(err)), EO_ARCHIVE_ETOOBIG);
	r.n = 0;
	assert_int_equal(eo_archive_writer_add(w, &r, err, sizeof(err)), EO_ARCHIVE_EINVAL);
	free(big);
	eo_archive_writer_free(w);
	rmdir_all(d);
}

/* One segment of revisions 1..50 in dir; its path in path. */
static void one_segment(const char *d, enum eo_archive_codec codec, char *path, size_t cap)
{
	struct closed c = {0};
	struct eo_archive_writer_opts o = {.dir = d, .codec = codec};
	struct eo_archive_writer *w;
	char err[256];

	assert_int_equal(eo_archive_writer_new(&o, on_closed, &c, &w, err, sizeof(err)), 0);
	write_revs(w, 1, 50, 0, 1);
	assert_int_equal(eo_archive_writer_flush(w, err, sizeof(err)), 0);
	eo_archive_writer_free(w);
	snprintf(path, cap, "%s/%s", d, c.info[0].name);
}

static long file_size(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return (long)st.st_size;
}

static void flip_byte(const char *p, long off)
{
	FILE *f = fopen(p, "r+b");
	int ch;

	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	ch = fgetc(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	fputc(ch ^ 0x40, f);
	fclose(f);
}

/* Runs check on one segment of revisions 1..50 written with each codec, then removes it. */
static void on_each_codec(void (*check)(const char *path))
{
	static const enum eo_archive_codec codecs[] = {EO_ARCHIVE_CODEC_NONE,
						       EO_ARCHIVE_CODEC_ZLIB};
	char *d = tmpdir(), path[4096];

	for (size_t i = 0; i < 2; i++) {
		one_segment(d, codecs[i], path, sizeof(path));
		check(path);
		unlink(path);
	}
	rmdir_all(d);
}

static void truncation_detected(const char *path)
{
	struct eo_archive_reader *r = NULL;
	char err[256];

	/* Cut at several places: the trailer, the middle, inside the header. */
	for (long cut = file_size(path) - 1; cut > 0; cut = cut * 2 / 3) {
		assert_int_equal(truncate(path, cut), 0);
		assert_int_equal(eo_archive_reader_open(path, &r, NULL, err, sizeof(err)),
				 EO_ARCHIVE_ETRUNCATED);
		assert_null(r);
	}
}

static void test_truncation_detected(void **state)
{
	(void)state;
	on_each_codec(truncation_detected);
}

static void crc_mismatch_detected(const char *path)
{
	struct eo_archive_reader *r = NULL;
	char err[256];
	long size = file_size(path);

	/* A bit flipped in the body, in the trailer's counts, in its CRC. */
	flip_byte(path, EO_ARCHIVE_SEG_HEADER_LEN + 20);
	assert_int_equal(eo_archive_reader_open(path, &r, NULL, err, sizeof(err)),
			 EO_ARCHIVE_ECORRUPT);
	assert_non_null(strstr(err, "CRC"));
	flip_byte(path, EO_ARCHIVE_SEG_HEADER_LEN + 20);
	assert_int_equal(eo_archive_reader_open(path, &r, NULL, err, sizeof(err)), 0);
	eo_archive_reader_free(r);
	flip_byte(path, size - EO_ARCHIVE_SEG_TRAILER_LEN + 8);
	assert_int_equal(eo_archive_reader_open(path, &r, NULL, err, sizeof(err)),
			 EO_ARCHIVE_ECORRUPT);
	flip_byte(path, size - EO_ARCHIVE_SEG_TRAILER_LEN + 8);
	flip_byte(path, size - 1);
	assert_int_equal(eo_archive_reader_open(path, &r, NULL, err, sizeof(err)),
			 EO_ARCHIVE_ECORRUPT);
	flip_byte(path, size - 1);
	/* Not a segment at all. */
	flip_byte(path, 0);
	assert_int_equal(eo_archive_reader_open(path, &r, NULL, err, sizeof(err)),
			 EO_ARCHIVE_EVERSION);
}

static void test_crc_mismatch_detected(void **state)
{
	(void)state;
	on_each_codec(crc_mismatch_detected);
}

struct got {
	int64_t revs[512];
	size_t n;
};

static int on_rev(void *ud, const struct eo_archive_rev *rev, char *err, size_t cap)
{
	struct got *g = ud;

	(void)err, (void)cap;
	check_rev(rev);
	g->revs[g->n++] = rev->revision;
	return 0;
}

/* Segments of revisions 1..100, 10 ms apart from t=1000, closed every 250 ms. */
static size_t three_segments(const char *d, char paths[][4096])
{
	struct closed c = {0};
	struct eo_archive_writer_opts o = {
	    .dir = d, .max_age_ms = 250, .codec = EO_ARCHIVE_CODEC_ZLIB};
	struct eo_archive_writer *w;
	char err[256];

	assert_int_equal(eo_archive_writer_new(&o, on_closed, &c, &w, err, sizeof(err)), 0);
	write_revs(w, 1, 100, 1000, 10);
	assert_int_equal(eo_archive_writer_flush(w, err, sizeof(err)), 0);
	eo_archive_writer_free(w);
	for (size_t i = 0; i < c.n; i++)
		snprintf(paths[i], 4096, "%s/%s", d, c.info[i].name);
	return c.n;
}

static void test_replay_targets(void **state)
{
	static const struct {
		int64_t after, rev, time_ms;
		int64_t first, last;
	} rows[] = {
	    {0, 0, 0, 1, 100},	  /* everything */
	    {0, 42, 0, 1, 42},	  /* to a revision */
	    {30, 42, 0, 31, 42},  /* from a base at 30 */
	    {0, 0, 1555, 1, 56},  /* to a time: revision 56 came at 1550, 57 at 1560 */
	    {0, 60, 1555, 1, 56}, /* both: the earlier bound wins */
	    {0, 50, 1900, 1, 50}, {100, 0, 0, 0, 0}, /* the base is the newest: nothing to replay */
	};
	char *d = tmpdir(), paths[8][4096], err[256];
	const char *pp[8];
	size_t n = three_segments(d, paths);

	(void)state;
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		pp[i] = paths[i];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct got g = {0};
		struct eo_archive_target t = {rows[i].rev, rows[i].time_ms};
		int64_t last = -1;

		assert_int_equal(eo_archive_replay(pp, n, rows[i].after, true, &t, on_rev, &g,
						   &last, err, sizeof(err)),
				 0);
		if (rows[i].first == 0) {
			assert_int_equal(g.n, 0);
			assert_int_equal(last, rows[i].after);
			continue;
		}
		assert_int_equal(g.n, rows[i].last - rows[i].first + 1);
		assert_int_equal(g.revs[0], rows[i].first);
		assert_int_equal(g.revs[g.n - 1], rows[i].last);
		assert_int_equal(last, rows[i].last);
	}
	rmdir_all(d);
}

static void test_replay_finds_missing_segment(void **state)
{
	char *d = tmpdir(), paths[8][4096], err[256];
	const char *pp[8];
	struct got g = {0};
	int64_t last;
	size_t n = three_segments(d, paths);

	(void)state;
	pp[0] = paths[0];
	pp[1] = paths[2]; /* the second segment is lost */
	assert_int_equal(
	    eo_archive_replay(pp, 2, 0, true, NULL, on_rev, &g, &last, err, sizeof(err)),
	    EO_ARCHIVE_ECORRUPT);
	assert_non_null(strstr(err, "missing"));
	assert_int_equal(last, g.revs[g.n - 1]);
	/* Without the contiguity check the same files replay (revisions still increase). */
	g.n = 0;
	assert_int_equal(
	    eo_archive_replay(pp, 2, 0, false, NULL, on_rev, &g, &last, err, sizeof(err)), 0);
	/* A corrupted later segment stops the replay before any of its revisions. */
	g.n = 0;
	for (size_t i = 0; i < n; i++)
		pp[i] = paths[i];
	flip_byte(paths[2], EO_ARCHIVE_SEG_HEADER_LEN + 3);
	assert_int_equal(
	    eo_archive_replay(pp, n, 0, true, NULL, on_rev, &g, &last, err, sizeof(err)),
	    EO_ARCHIVE_ECORRUPT);
	assert_int_equal(last, g.revs[g.n - 1]);
	rmdir_all(d);
}

TU_MAIN(test_roundtrip_plain, test_roundtrip_zlib, test_limits_close_segments,
	test_order_and_size_refused, test_truncation_detected, test_crc_mismatch_detected,
	test_replay_targets, test_replay_finds_missing_segment)
