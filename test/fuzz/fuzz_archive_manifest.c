/*
 * Fuzz target: the archive manifest (src/archive/manifest.c), read from object storage where
 * anyone with write access to the bucket can change it, and the window and retention math.
 *
 * Input: two bytes choosing the retention cut (in ms, 0..655350), then the manifest text.
 *
 * Invariants: a refused manifest leaves nothing behind; an accepted one dumps to JSON that
 * parses back to the same dump; windows are ordered, disjoint and each from <= to; retention
 * never prunes a base taken or a segment received at or after the cut, keeps the newest
 * recoverable revision recoverable, and leaves every segment some base's chain used with a
 * kept base whose chain still uses it.
 */
#include "archive/manifest.h"

#include "fuzz.h"

#define MAXW 64

static void check_windows(const struct eo_archive_manifest *m)
{
	struct eo_archive_window w[MAXW];
	size_t n = eo_archive_windows(m, w, MAXW);

	FUZZ_CHECK((n == 0) == (m->n_bases == 0), "%zu windows for %zu bases", n, m->n_bases);
	for (size_t i = 0; i < n && i < MAXW; i++) {
		FUZZ_CHECK(w[i].from_revision <= w[i].to_revision, "window %zu reversed", i);
		FUZZ_CHECK(i == 0 || w[i].from_revision > w[i - 1].to_revision + 1,
			   "windows %zu and %zu overlap or touch", i - 1, i);
	}
}

/* m without what was pruned (entries copied; the caller clears it). */
static bool kept(const struct eo_archive_manifest *m, const bool *pb, const bool *ps,
		 struct eo_archive_manifest *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < m->n_bases; i++)
		if (!pb[i] && eo_archive_manifest_add_base(out, &m->bases[i]) != 0)
			return false;
	for (size_t j = 0; j < m->n_segs; j++)
		if (!ps[j] && eo_archive_manifest_add_seg(out, &m->segs[j]) != 0)
			return false;
	for (size_t g = 0; g < m->n_gaps; g++)
		if (eo_archive_manifest_add_gap(out, &m->gaps[g]) != 0)
			return false;
	return true;
}

static bool used_by_some_base(const struct eo_archive_manifest *m, const char *name, bool *tmp)
{
	int64_t r, t;

	for (size_t b = 0; b < m->n_bases; b++) {
		eo_archive_chain(m, b, &r, &t, tmp);
		for (size_t j = 0; j < m->n_segs; j++)
			if (tmp[j] && strcmp(m->segs[j].name, name) == 0)
				return true;
	}
	return false;
}

static void check_retention(const struct eo_archive_manifest *m, int64_t cut)
{
	bool *pb = calloc(m->n_bases + 1, 1), *ps = calloc(m->n_segs + 1, 1);
	bool *pg = calloc(m->n_gaps + 1, 1), *tmp = calloc(m->n_segs + 1, 1);
	bool *tmp2 = NULL;
	struct eo_archive_manifest k = {0};
	struct eo_archive_window before, after;

	if (!pb || !ps || !pg || !tmp)
		goto out;
	eo_archive_retention(m, cut, pb, ps, pg);
	for (size_t i = 0; i < m->n_bases; i++)
		FUZZ_CHECK(!pb[i] || m->bases[i].time_ms < cut, "base %zu newer than the cut", i);
	for (size_t j = 0; j < m->n_segs; j++)
		FUZZ_CHECK(!ps[j] || m->segs[j].last_received_ms < cut,
			   "segment %zu newer than the cut", j);
	if (!kept(m, pb, ps, &k))
		goto out;
	if (eo_archive_window_latest(m, &before)) {
		FUZZ_CHECK(eo_archive_window_latest(&k, &after), "no window left");
		FUZZ_CHECK(after.to_revision == before.to_revision,
			   "newest point %lld lost (now %lld)", (long long)before.to_revision,
			   (long long)after.to_revision);
	}
	tmp2 = calloc(k.n_segs + 1, 1);
	if (tmp2 == NULL)
		goto out;
	for (size_t j = 0; j < k.n_segs; j++)
		FUZZ_CHECK(!used_by_some_base(m, k.segs[j].name, tmp) ||
			       used_by_some_base(&k, k.segs[j].name, tmp2),
			   "kept segment %s lost its base", k.segs[j].name);
out:
	eo_archive_manifest_clear(&k);
	free(pb);
	free(ps);
	free(pg);
	free(tmp);
	free(tmp2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eo_archive_manifest m, back;
	char err[256], *a, *b;
	int64_t cut;

	if (size < 2 || size > 64 * 1024)
		return 0;
	cut = ((int64_t)data[0] | (int64_t)data[1] << 8) * 10;
	if (eo_archive_manifest_parse((const char *)data + 2, size - 2, &m, err, sizeof(err)) !=
	    0) {
		FUZZ_CHECK(m.n_bases + m.n_segs + m.n_gaps == 0 && !m.bases && !m.segs && !m.gaps,
			   "refused manifest left entries");
		return 0;
	}
	a = eo_archive_manifest_dump(&m);
	if (a != NULL) {
		FUZZ_CHECK(eo_archive_manifest_parse(a, strlen(a), &back, err, sizeof(err)) == 0,
			   "dump does not parse back: %s", err);
		b = eo_archive_manifest_dump(&back);
		FUZZ_CHECK(b == NULL || strcmp(a, b) == 0, "dump changed:\n%s\n%s", a, b);
		free(b);
		eo_archive_manifest_clear(&back);
		free(a);
	}
	if (m.n_bases <= 16 && m.n_segs <= 32) {
		check_windows(&m);
		check_retention(&m, cut);
	}
	eo_archive_manifest_clear(&m);
	return 0;
}
