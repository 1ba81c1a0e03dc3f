/*
 * Unit tests of archive/manifest: parse and dump round trip, malformed manifests refused,
 * the recoverable window (contiguous chains, holes, recorded gaps, overlapping bases) and
 * retention rows (what goes for a given cut, and never the base a kept segment needs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/manifest.h"

static void add_base(struct eo_archive_manifest *m, int64_t rev, int64_t t)
{
	struct eo_archive_base b = {.revision = rev, .time_ms = t};

	snprintf(b.name, sizeof(b.name), "base-%lld", (long long)rev);
	assert_int_equal(eo_archive_manifest_add_base(m, &b), 0);
}

static void add_seg(struct eo_archive_manifest *m, int64_t first, int64_t last, int64_t t0,
		    int64_t t1)
{
	struct eo_archive_seg s = {.first_revision = first,
				   .last_revision = last,
				   .first_received_ms = t0,
				   .last_received_ms = t1,
				   .size = 100,
				   .crc32 = 0xdeadbeef};

	eo_archive_seg_name(first, last, EO_ARCHIVE_CODEC_ZLIB, s.name, sizeof(s.name));
	assert_int_equal(eo_archive_manifest_add_seg(m, &s), 0);
}

static void add_gap(struct eo_archive_manifest *m, int64_t after, int64_t resumed)
{
	struct eo_archive_gap g = {after, resumed, 1};

	assert_int_equal(eo_archive_manifest_add_gap(m, &g), 0);
}

static void test_parse_dump_roundtrip(void **state)
{
	struct eo_archive_manifest m = {0}, back = {0};
	char err[256], *text, *again;

	(void)state;
	add_base(&m, 100, 5000);
	add_seg(&m, 151, 200, 5600, 6000); /* added out of order: kept sorted */
	add_seg(&m, 101, 150, 5100, 5500);
	add_gap(&m, 200, 300);
	add_base(&m, 300, 9000);
	text = eo_archive_manifest_dump(&m);
	assert_non_null(text);
	assert_int_equal(eo_archive_manifest_parse(text, strlen(text), &back, err, sizeof(err)), 0);
	assert_int_equal(back.n_bases, 2);
	assert_int_equal(back.n_segs, 2);
	assert_int_equal(back.n_gaps, 1);
	assert_int_equal(back.segs[0].first_revision, 101);
	assert_int_equal(back.segs[1].last_received_ms, 6000);
	assert_int_equal(back.segs[1].crc32, 0xdeadbeef);
	assert_string_equal(back.segs[0].name, m.segs[0].name);
	assert_int_equal(back.gaps[0].resumed_revision, 300);
	again = eo_archive_manifest_dump(&back);
	assert_string_equal(text, again);
	free(text);
	free(again);
	eo_archive_manifest_clear(&m);
	eo_archive_manifest_clear(&back);
}

static void test_parse_refusals(void **state)
{
	static const struct {
		const char *text;
		int rc;
	} rows[] = {
	    {"", EO_ARCHIVE_ECORRUPT},
	    {"[]", EO_ARCHIVE_ECORRUPT},
	    {"{}", EO_ARCHIVE_EVERSION},
	    {"{\"version\":2}", EO_ARCHIVE_EVERSION},
	    {"{\"version\":1,\"bases\":{}}", EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1,\"bases\":[{\"name\":\"a\",\"revision\":0,\"time_ms\":1}]}",
	     EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1,\"bases\":[{\"name\":\"a\",\"revision\":\"5\",\"time_ms\":1}]}",
	     EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1,\"bases\":[{\"name\":\"a\",\"revision\":5,\"time_ms\":1},"
	     "{\"name\":\"a\",\"revision\":6,\"time_ms\":1}]}",
	     EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1,\"segments\":[{\"name\":\"s\",\"first_revision\":9,"
	     "\"last_revision\":8,\"first_received_ms\":1,\"last_received_ms\":1,\"size\":1,"
	     "\"crc32\":\"00000000\"}]}",
	     EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1,\"segments\":[{\"name\":\"s\",\"first_revision\":1,"
	     "\"last_revision\":8,\"first_received_ms\":1,\"last_received_ms\":1,\"size\":1,"
	     "\"crc32\":\"0000000g\"}]}",
	     EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1,\"gaps\":[{\"after_revision\":5,\"resumed_revision\":5,"
	     "\"detected_ms\":1}]}",
	     EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1,\"version\":1}", EO_ARCHIVE_ECORRUPT},
	    {"{\"version\":1}", 0},
	};
	struct eo_archive_manifest m;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc = eo_archive_manifest_parse(rows[i].text, strlen(rows[i].text), &m, err,
						   sizeof(err));

		if (rc != rows[i].rc)
			fail_msg("row %zu: %d, want %d (%s)", i, rc, rows[i].rc, err);
		assert_int_equal(m.n_bases + m.n_segs + m.n_gaps, 0);
		eo_archive_manifest_clear(&m);
	}
}

/* The window's first and last revision. */
static void assert_revs(const struct eo_archive_window *w, int64_t from, int64_t to)
{
	assert_int_equal(w->from_revision, from);
	assert_int_equal(w->to_revision, to);
}

static void test_window_contiguous_and_holes(void **state)
{
	struct eo_archive_manifest m = {0};
	struct eo_archive_window w[4];

	(void)state;
	assert_int_equal(eo_archive_windows(&m, w, 4), 0);
	assert_false(eo_archive_window_latest(&m, &w[0]));
	add_base(&m, 100, 1000);
	assert_int_equal(eo_archive_windows(&m, w, 4), 1);
	assert_revs(&w[0], 100, 100);
	assert_int_equal(w[0].to_ms, 1000);
	/* A segment overlapping the base (started before it) still extends the chain. */
	add_seg(&m, 90, 120, 900, 1200);
	add_seg(&m, 121, 150, 1210, 1500);
	add_seg(&m, 152, 160, 1520, 1600); /* revision 151 is missing */
	assert_int_equal(eo_archive_windows(&m, w, 4), 1);
	assert_int_equal(w[0].from_revision, 100);
	assert_int_equal(w[0].from_ms, 1000);
	assert_int_equal(w[0].to_revision, 150);
	assert_int_equal(w[0].to_ms, 1500);
	/* A newer base after the hole opens a second window. */
	add_base(&m, 155, 1550);
	assert_int_equal(eo_archive_windows(&m, w, 4), 2);
	assert_revs(&w[1], 155, 160);
	assert_true(eo_archive_window_latest(&m, &w[2]));
	assert_revs(&w[2], 155, 160);
	assert_int_equal(w[2].to_ms, 1600);
	/* A base inside the first window merges with it. */
	add_base(&m, 130, 1300);
	assert_int_equal(eo_archive_windows(&m, w, 4), 2);
	assert_revs(&w[0], 100, 150);
	/* The count is returned even when cap is smaller. */
	assert_int_equal(eo_archive_windows(&m, w, 1), 2);
	eo_archive_manifest_clear(&m);
}

static void test_window_with_recorded_gap(void **state)
{
	struct eo_archive_manifest m = {0};
	struct eo_archive_window w[4];

	(void)state;
	/* Compacted away at 200: revisions 201..299 lost, new base at 300. */
	add_base(&m, 100, 1000);
	add_seg(&m, 101, 200, 1010, 2000);
	add_gap(&m, 200, 300);
	add_base(&m, 300, 3000);
	add_seg(&m, 301, 350, 3010, 3500);
	assert_int_equal(eo_archive_windows(&m, w, 4), 2);
	assert_revs(&w[0], 100, 200);
	assert_int_equal(w[0].to_ms, 2000);
	assert_int_equal(w[1].from_revision, 300);
	assert_int_equal(w[1].from_ms, 3000);
	assert_int_equal(w[1].to_revision, 350);
	assert_int_equal(w[1].to_ms, 3500);
	/* A recorded gap stops a chain even when segments look contiguous across it. */
	add_seg(&m, 201, 210, 2010, 2100);
	assert_int_equal(eo_archive_windows(&m, w, 4), 2);
	assert_int_equal(w[0].to_revision, 200);
	eo_archive_manifest_clear(&m);
}

/*
 * Retention rows on one archive: base A (rev 100, t=1000), segments 101-200 (t 1010..2000),
 * 201-300 (t 2010..3000); base B (rev 300, t=3000); 301-400 (t 3010..4000); gap after 400
 * to 500; base C (rev 500, t=5000); 501-600 (t 5010..6000).
 */
static void archive_abc(struct eo_archive_manifest *m)
{
	add_base(m, 100, 1000);
	add_seg(m, 101, 200, 1010, 2000);
	add_seg(m, 201, 300, 2010, 3000);
	add_base(m, 300, 3000);
	add_seg(m, 301, 400, 3010, 4000);
	add_gap(m, 400, 500);
	add_base(m, 500, 5000);
	add_seg(m, 501, 600, 5010, 6000);
}

static void test_retention_rows(void **state)
{
	static const struct {
		int64_t keep_from;
		const char *bases; /* '1' pruned, for A B C */
		const char *segs;  /* for the 4 segments */
		const char *gaps;
	} rows[] = {
	    {0, "000", "0000", "0"},	/* everything is in the window */
	    {1000, "000", "0000", "0"}, /* A taken exactly at the cut: kept */
	    {1500, "000", "0000", "0"}, /* inside A's first segment: all of A's chain */
	    {2500, "000", "0000", "0"}, /* B is newer than the cut: A still needed */
	    /* B taken at the cut, but A's last segment received at it too: kept, with A. */
	    {3000, "000", "0000", "0"},
	    {3001, "100", "1100", "0"}, /* B before the cut: A and its segments go */
	    {3500, "100", "1100", "0"},
	    {4500, "110", "1110", "1"}, /* in the gap: only C's chain is left to keep */
	    {6000, "110", "1110", "1"},
	    {7000, "110", "1110", "1"}, /* past everything: the newest base and chain stay */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct eo_archive_manifest m = {0};
		bool pb[3], ps[4], pg[1];

		archive_abc(&m);
		eo_archive_retention(&m, rows[i].keep_from, pb, ps, pg);
		for (size_t b = 0; b < 3; b++)
			if (pb[b] != (rows[i].bases[b] == '1'))
				fail_msg("row %zu: base %zu pruned=%d", i, b, pb[b]);
		for (size_t s = 0; s < 4; s++)
			if (ps[s] != (rows[i].segs[s] == '1'))
				fail_msg("row %zu: segment %zu pruned=%d", i, s, ps[s]);
		if (pg[0] != (rows[i].gaps[0] == '1'))
			fail_msg("row %zu: gap pruned=%d", i, pg[0]);
		eo_archive_manifest_clear(&m);
	}
}

static void test_retention_keeps_base_of_kept_segment(void **state)
{
	struct eo_archive_manifest m = {0};
	bool pb[2], ps[3];

	(void)state;
	/*
	 * The archiver lagged: segment 201-300 was received (t=3600) after base B (rev 300,
	 * t=3000) was taken. Cut at 3500: the segment is newer than the cut and stays; B
	 * supersedes A for every point, but a kept segment keeps the base its chain starts
	 * from, and the segments between.
	 */
	add_base(&m, 100, 1000);
	add_seg(&m, 101, 200, 1010, 2000);
	add_seg(&m, 201, 300, 2010, 3600);
	add_base(&m, 300, 3000);
	add_seg(&m, 301, 400, 3610, 4000);
	eo_archive_retention(&m, 3500, pb, ps, NULL);
	assert_false(pb[0]);
	assert_false(pb[1]);
	assert_false(ps[0]);
	assert_false(ps[1]);
	assert_false(ps[2]);
	eo_archive_manifest_clear(&m);
}

TU_MAIN(test_parse_dump_roundtrip, test_parse_refusals, test_window_contiguous_and_holes,
	test_window_with_recorded_gap, test_retention_rows,
	test_retention_keeps_base_of_kept_segment)
