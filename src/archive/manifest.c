/* The manifest of a continuous archive and its window and retention math (manifest.h). */
#include "archive/manifest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "archive/internal.h"

void eo_archive_manifest_clear(struct eo_archive_manifest *m)
{
	if (m == NULL)
		return;
	free(m->bases);
	free(m->segs);
	free(m->gaps);
	memset(m, 0, sizeof(*m));
}

/* ---- adding, kept sorted ----------------------------------------------------------- */

static int grow(void **v, size_t n, size_t size)
{
	void *p;

	if (n >= EO_ARCHIVE_MANIFEST_MAX)
		return EO_ARCHIVE_EINVAL;
	p = realloc(*v, (n + 1) * size);
	if (p == NULL)
		return EO_ARCHIVE_ENOMEM;
	*v = p;
	return 0;
}

/* Puts elem (size bytes) at index at (0..*n) of the array *v, one longer, the rest moved up. */
static int insert_at(void **v, size_t *n, size_t size, size_t at, const void *elem)
{
	int rc = grow(v, *n, size);
	char *p;

	if (rc != 0)
		return rc;
	p = *v;
	memmove(p + (at + 1) * size, p + at * size, (*n - at) * size);
	memcpy(p + at * size, elem, size);
	(*n)++;
	return 0;
}

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, EO_ARCHIVE_SEG_NAME_MAX);

	return n > 0 && n < EO_ARCHIVE_SEG_NAME_MAX;
}

int eo_archive_manifest_add_base(struct eo_archive_manifest *m, const struct eo_archive_base *b)
{
	size_t i;

	if (!name_ok(b->name) || b->revision < 1)
		return EO_ARCHIVE_EINVAL;
	for (i = 0; i < m->n_bases; i++)
		if (strcmp(m->bases[i].name, b->name) == 0)
			return EO_ARCHIVE_EINVAL;
	i = m->n_bases;
	while (i > 0 && m->bases[i - 1].revision > b->revision)
		i--;
	return insert_at((void **)&m->bases, &m->n_bases, sizeof(*b), i, b);
}

int eo_archive_manifest_add_seg(struct eo_archive_manifest *m, const struct eo_archive_seg *s)
{
	size_t i;

	if (!name_ok(s->name) || s->first_revision < 1 || s->last_revision < s->first_revision ||
	    s->last_received_ms < s->first_received_ms)
		return EO_ARCHIVE_EINVAL;
	for (i = 0; i < m->n_segs; i++)
		if (strcmp(m->segs[i].name, s->name) == 0)
			return EO_ARCHIVE_EINVAL;
	i = m->n_segs;
	while (i > 0 && m->segs[i - 1].first_revision > s->first_revision)
		i--;
	return insert_at((void **)&m->segs, &m->n_segs, sizeof(*s), i, s);
}

int eo_archive_manifest_add_gap(struct eo_archive_manifest *m, const struct eo_archive_gap *g)
{
	size_t i;

	if (g->after_revision < 0 || g->resumed_revision <= g->after_revision)
		return EO_ARCHIVE_EINVAL;
	i = m->n_gaps;
	while (i > 0 && m->gaps[i - 1].after_revision > g->after_revision)
		i--;
	return insert_at((void **)&m->gaps, &m->n_gaps, sizeof(*g), i, g);
}

/* ---- JSON ---------------------------------------------------------------------------- */

static bool get_i64(const json_t *o, const char *k, int64_t *out)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_integer(v))
		return false;
	*out = (int64_t)json_integer_value(v);
	return true;
}

static bool get_name(const json_t *o, char *out, size_t cap)
{
	const json_t *v = json_object_get(o, "name");

	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return false;
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return true;
}

static bool get_crc(const json_t *o, uint32_t *out)
{
	const json_t *v = json_object_get(o, "crc32");
	const char *s;
	char *end;
	unsigned long x;

	if (!json_is_string(v) || json_string_length(v) != 8)
		return false;
	s = json_string_value(v);
	for (size_t i = 0; i < 8; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	x = strtoul(s, &end, 16);
	*out = (uint32_t)x;
	return end == s + 8;
}

static int parse_bases(const json_t *a, struct eo_archive_manifest *m)
{
	size_t i;
	const json_t *e;
	int rc;

	json_array_foreach(a, i, e)
	{
		struct eo_archive_base b = {0};

		if (!json_is_object(e) || !get_name(e, b.name, sizeof(b.name)) ||
		    !get_i64(e, "revision", &b.revision) || !get_i64(e, "time_ms", &b.time_ms))
			return EO_ARCHIVE_ECORRUPT;
		rc = eo_archive_manifest_add_base(m, &b);
		if (rc != 0)
			return rc == EO_ARCHIVE_EINVAL ? EO_ARCHIVE_ECORRUPT : rc;
	}
	return 0;
}

static int parse_segs(const json_t *a, struct eo_archive_manifest *m)
{
	size_t i;
	const json_t *e;
	int rc;

	json_array_foreach(a, i, e)
	{
		struct eo_archive_seg s = {0};
		int64_t size;

		if (!json_is_object(e) || !get_name(e, s.name, sizeof(s.name)) ||
		    !get_i64(e, "first_revision", &s.first_revision) ||
		    !get_i64(e, "last_revision", &s.last_revision) ||
		    !get_i64(e, "first_received_ms", &s.first_received_ms) ||
		    !get_i64(e, "last_received_ms", &s.last_received_ms) ||
		    !get_i64(e, "size", &size) || size < 0 || !get_crc(e, &s.crc32))
			return EO_ARCHIVE_ECORRUPT;
		s.size = (uint64_t)size;
		rc = eo_archive_manifest_add_seg(m, &s);
		if (rc != 0)
			return rc == EO_ARCHIVE_EINVAL ? EO_ARCHIVE_ECORRUPT : rc;
	}
	return 0;
}

static int parse_gaps(const json_t *a, struct eo_archive_manifest *m)
{
	size_t i;
	const json_t *e;
	int rc;

	json_array_foreach(a, i, e)
	{
		struct eo_archive_gap g = {0};

		if (!json_is_object(e) || !get_i64(e, "after_revision", &g.after_revision) ||
		    !get_i64(e, "resumed_revision", &g.resumed_revision) ||
		    !get_i64(e, "detected_ms", &g.detected_ms))
			return EO_ARCHIVE_ECORRUPT;
		rc = eo_archive_manifest_add_gap(m, &g);
		if (rc != 0)
			return rc == EO_ARCHIVE_EINVAL ? EO_ARCHIVE_ECORRUPT : rc;
	}
	return 0;
}

/* An optional array member: absent is empty. */
static bool opt_array(const json_t *root, const char *k, const json_t **out)
{
	*out = json_object_get(root, k);
	return *out == NULL || json_is_array(*out);
}

int eo_archive_manifest_parse(const char *text, size_t len, struct eo_archive_manifest *m,
			      char *err, size_t errcap)
{
	json_t *root;
	const json_t *bases, *segs, *gaps;
	json_error_t je;
	int64_t version;
	int rc = EO_ARCHIVE_ECORRUPT;

	memset(m, 0, sizeof(*m));
	if (text == NULL || len > EO_ARCHIVE_MANIFEST_BYTES)
		return eo__archive_fail(EO_ARCHIVE_EINVAL, err, errcap,
					"manifest absent or over %zu bytes",
					EO_ARCHIVE_MANIFEST_BYTES);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(root)) {
		rc = eo__archive_fail(rc, err, errcap, "manifest: not a JSON object: %s",
				      root ? "" : je.text);
		goto out;
	}
	if (!get_i64(root, "version", &version) || version != EO_ARCHIVE_MANIFEST_VERSION) {
		rc = eo__archive_fail(EO_ARCHIVE_EVERSION, err, errcap,
				      "manifest: version not known");
		goto out;
	}
	if (!opt_array(root, "bases", &bases) || !opt_array(root, "segments", &segs) ||
	    !opt_array(root, "gaps", &gaps)) {
		rc = eo__archive_fail(rc, err, errcap,
				      "manifest: bases, segments and gaps must be arrays");
		goto out;
	}
	rc = bases ? parse_bases(bases, m) : 0;
	if (rc == 0)
		rc = segs ? parse_segs(segs, m) : 0;
	if (rc == 0)
		rc = gaps ? parse_gaps(gaps, m) : 0;
	if (rc != 0)
		eo__archive_fail(rc, err, errcap,
				 "manifest: %s entry (a field missing or out of range, a "
				 "duplicate name, or over %d entries)",
				 rc == EO_ARCHIVE_ENOMEM ? "out of memory at an" : "malformed",
				 EO_ARCHIVE_MANIFEST_MAX);
out:
	json_decref(root);
	if (rc != 0)
		eo_archive_manifest_clear(m);
	return rc;
}

static int dump_bases(const struct eo_archive_manifest *m, json_t *a)
{
	for (size_t i = 0; i < m->n_bases; i++) {
		const struct eo_archive_base *b = &m->bases[i];

		if (json_array_append_new(a, json_pack("{s:s,s:I,s:I}", "name", b->name, "revision",
						       (json_int_t)b->revision, "time_ms",
						       (json_int_t)b->time_ms)) != 0)
			return -1;
	}
	return 0;
}

static int dump_segs(const struct eo_archive_manifest *m, json_t *a)
{
	char crc[9];

	for (size_t i = 0; i < m->n_segs; i++) {
		const struct eo_archive_seg *s = &m->segs[i];

		snprintf(crc, sizeof(crc), "%08" PRIx32, s->crc32);
		if (json_array_append_new(
			a, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:s}", "name", s->name,
				     "first_revision", (json_int_t)s->first_revision,
				     "last_revision", (json_int_t)s->last_revision,
				     "first_received_ms", (json_int_t)s->first_received_ms,
				     "last_received_ms", (json_int_t)s->last_received_ms, "size",
				     (json_int_t)s->size, "crc32", crc)) != 0)
			return -1;
	}
	return 0;
}

static int dump_gaps(const struct eo_archive_manifest *m, json_t *a)
{
	for (size_t i = 0; i < m->n_gaps; i++) {
		const struct eo_archive_gap *g = &m->gaps[i];

		if (json_array_append_new(
			a,
			json_pack("{s:I,s:I,s:I}", "after_revision", (json_int_t)g->after_revision,
				  "resumed_revision", (json_int_t)g->resumed_revision,
				  "detected_ms", (json_int_t)g->detected_ms)) != 0)
			return -1;
	}
	return 0;
}

char *eo_archive_manifest_dump(const struct eo_archive_manifest *m)
{
	json_t *root = json_pack("{s:i,s:[],s:[],s:[]}", "version", EO_ARCHIVE_MANIFEST_VERSION,
				 "bases", "segments", "gaps");
	char *s = NULL;

	if (root == NULL)
		return NULL;
	if (dump_bases(m, json_object_get(root, "bases")) == 0 &&
	    dump_segs(m, json_object_get(root, "segments")) == 0 &&
	    dump_gaps(m, json_object_get(root, "gaps")) == 0)
		s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}

/* ---- window ------------------------------------------------------------------------------ */

/* A recorded gap the chain, now at cur, cannot cross. */
static bool in_gap(const struct eo_archive_manifest *m, int64_t cur)
{
	for (size_t i = 0; i < m->n_gaps; i++)
		if (cur >= m->gaps[i].after_revision && cur < m->gaps[i].resumed_revision)
			return true;
	return false;
}

void eo_archive_chain(const struct eo_archive_manifest *m, size_t b, int64_t *to_rev,
		      int64_t *to_ms, bool *used)
{
	int64_t cur = m->bases[b].revision, cur_ms = m->bases[b].time_ms;

	if (used != NULL)
		memset(used, 0, m->n_segs * sizeof(*used));
	for (size_t j = 0; j < m->n_segs; j++) {
		const struct eo_archive_seg *s = &m->segs[j];

		if (s->last_revision <= cur)
			continue; /* wholly in the base, or covered by an earlier segment */
		if (s->first_revision > cur + 1 || in_gap(m, cur))
			break; /* a hole: revisions cur+1 .. first-1 are missing */
		cur = s->last_revision;
		cur_ms = s->last_received_ms;
		if (used != NULL)
			used[j] = true;
	}
	*to_rev = cur;
	*to_ms = cur_ms;
}

size_t eo_archive_windows(const struct eo_archive_manifest *m, struct eo_archive_window *out,
			  size_t cap)
{
	struct eo_archive_window cur = {0};
	size_t n = 0;
	bool open = false;

	for (size_t b = 0; b < m->n_bases; b++) {
		struct eo_archive_window w = {.from_revision = m->bases[b].revision,
					      .from_ms = m->bases[b].time_ms,
					      .base = b};

		eo_archive_chain(m, b, &w.to_revision, &w.to_ms, NULL);
		if (open && w.from_revision <= cur.to_revision + 1) {
			if (w.to_revision > cur.to_revision) {
				cur.to_revision = w.to_revision;
				cur.to_ms = w.to_ms;
				cur.base = b;
			}
			continue;
		}
		if (open && n++ < cap)
			out[n - 1] = cur;
		cur = w;
		open = true;
	}
	if (open && n++ < cap)
		out[n - 1] = cur;
	return n;
}

bool eo_archive_window_latest(const struct eo_archive_manifest *m, struct eo_archive_window *w)
{
	struct eo_archive_window best = {0}, one;
	bool found = false;

	/* Windows are disjoint and come oldest first: the last reaches furthest. */
	for (size_t b = 0; b < m->n_bases; b++) {
		one.from_revision = m->bases[b].revision;
		one.from_ms = m->bases[b].time_ms;
		one.base = b;
		eo_archive_chain(m, b, &one.to_revision, &one.to_ms, NULL);
		if (found && one.from_revision <= best.to_revision + 1) {
			if (one.to_revision > best.to_revision) {
				best.to_revision = one.to_revision;
				best.to_ms = one.to_ms;
				best.base = b;
			}
		} else if (!found || one.to_revision > best.to_revision) {
			best = one;
		}
		found = true;
	}
	if (found)
		*w = best;
	return found;
}

/* ---- retention --------------------------------------------------------------------------- */

/* Marks every segment base b's chain uses as kept. */
static void keep_chain(const struct eo_archive_manifest *m, size_t b, bool *keep_seg, bool *tmp)
{
	int64_t r, t;

	eo_archive_chain(m, b, &r, &t, tmp);
	for (size_t j = 0; j < m->n_segs; j++)
		keep_seg[j] = keep_seg[j] || tmp[j];
}

/* Whether a newer base older than the cut covers at least as far as base i. */
static bool superseded(const struct eo_archive_manifest *m, size_t i, int64_t keep_from_ms,
		       const int64_t *to)
{
	for (size_t k = i + 1; k < m->n_bases; k++)
		if (m->bases[k].time_ms <= keep_from_ms &&
		    m->bases[k].revision > m->bases[i].revision && to[k] >= to[i])
			return true;
	return false;
}

static void choose_bases(const struct eo_archive_manifest *m, int64_t keep_from_ms, bool *keep_base,
			 int64_t *to)
{
	int64_t to_ms;

	for (size_t i = 0; i < m->n_bases; i++) {
		eo_archive_chain(m, i, &to[i], &to_ms, NULL);
		keep_base[i] = to_ms >= keep_from_ms;
	}
	for (size_t i = 0; i < m->n_bases; i++) {
		if (m->bases[i].time_ms >= keep_from_ms)
			keep_base[i] = true;
		else if (keep_base[i] && superseded(m, i, keep_from_ms, to))
			keep_base[i] = false;
	}
}

/* A kept segment no kept base's chain uses gets the newest base whose chain uses it. */
static void adopt_orphans(const struct eo_archive_manifest *m, bool *keep_base, bool *keep_seg,
			  bool *used_kept, bool *tmp)
{
	memset(used_kept, 0, m->n_segs * sizeof(*used_kept));
	for (size_t b = 0; b < m->n_bases; b++)
		if (keep_base[b])
			keep_chain(m, b, used_kept, tmp);
	for (size_t j = 0; j < m->n_segs; j++) {
		if (!keep_seg[j] || used_kept[j])
			continue;
		for (size_t b = m->n_bases; b-- > 0;) {
			int64_t r, t;

			eo_archive_chain(m, b, &r, &t, tmp);
			if (tmp[j]) {
				keep_base[b] = true;
				keep_chain(m, b, used_kept, tmp);
				break;
			}
		}
	}
	for (size_t j = 0; j < m->n_segs; j++)
		keep_seg[j] = keep_seg[j] || used_kept[j];
}

void eo_archive_retention(const struct eo_archive_manifest *m, int64_t keep_from_ms,
			  bool *prune_base, bool *prune_seg, bool *prune_gap)
{
	size_t nb = m->n_bases ? m->n_bases : 1, ns = m->n_segs ? m->n_segs : 1;
	bool *keep_base = calloc(nb, sizeof(bool)), *keep_seg = calloc(ns, sizeof(bool));
	bool *used = calloc(ns, sizeof(bool)), *tmp = calloc(ns, sizeof(bool));
	int64_t *to = calloc(nb, sizeof(int64_t));
	int64_t oldest = INT64_MAX;
	struct eo_archive_window latest;
	bool ok = keep_base && keep_seg && used && tmp && to;

	/* Out of memory: prune nothing (nothing is deleted that a check could not clear). */
	for (size_t i = 0; i < m->n_bases; i++)
		prune_base[i] = false;
	for (size_t j = 0; j < m->n_segs; j++)
		prune_seg[j] = false;
	for (size_t g = 0; prune_gap != NULL && g < m->n_gaps; g++)
		prune_gap[g] = false;
	/* The newest recoverable point always stays, even when it is older than the cut
	 * (an archiver that stopped): the cut never passes the end of the newest window. */
	if (eo_archive_window_latest(m, &latest) && latest.to_ms < keep_from_ms)
		keep_from_ms = latest.to_ms;
	if (ok) {
		choose_bases(m, keep_from_ms, keep_base, to);
		for (size_t j = 0; j < m->n_segs; j++)
			keep_seg[j] = m->segs[j].last_received_ms >= keep_from_ms;
		adopt_orphans(m, keep_base, keep_seg, used, tmp);
		for (size_t i = 0; i < m->n_bases; i++) {
			prune_base[i] = !keep_base[i];
			if (keep_base[i] && m->bases[i].revision < oldest)
				oldest = m->bases[i].revision;
		}
		for (size_t j = 0; j < m->n_segs; j++)
			prune_seg[j] = !keep_seg[j];
		for (size_t g = 0; prune_gap != NULL && g < m->n_gaps; g++)
			prune_gap[g] = oldest != INT64_MAX && m->gaps[g].resumed_revision <= oldest;
	}
	free(keep_base);
	free(keep_seg);
	free(used);
	free(tmp);
	free(to);
}
