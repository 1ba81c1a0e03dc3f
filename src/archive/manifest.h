/*
 * archive/manifest.h - the manifest of a continuous archive (issue 20), and the pure window
 * and retention math over it. Groundwork: the operator does not use it yet.
 *
 * The manifest lists the base snapshots, the segments (segment.h) and the gaps:
 *
 *   {"version":1,
 *    "bases":[{"name":"<object>","revision":<n>,"time_ms":<Unix ms>}],
 *    "segments":[{"name":..,"first_revision":..,"last_revision":..,
 *                 "first_received_ms":..,"last_received_ms":..,"size":..,"crc32":"<8 hex>"}],
 *    "gaps":[{"after_revision":<last archived>,"resumed_revision":<next base>,
 *             "detected_ms":..}]}
 *
 * A gap is recorded when the watch was compacted away under the archiver: revisions after
 * after_revision and before resumed_revision (the new base) were never archived.
 *
 * A point (revision P) is recoverable from base B when B.revision <= P and segments cover
 * every revision in (B.revision, P] with no hole (etcd makes one revision per change and the
 * watch sees each, so "no hole" means each segment starts at most one past where the chain
 * got to) and no recorded gap inside. The recoverable windows are the union of those chains.
 *
 * Limits: at most EO_ARCHIVE_MANIFEST_MAX entries of each kind, names of at most
 * EO_ARCHIVE_SEG_NAME_MAX - 1 bytes, a manifest text of at most EO_ARCHIVE_MANIFEST_BYTES.
 */
#ifndef EO_ARCHIVE_MANIFEST_H
#define EO_ARCHIVE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archive/segment.h"

#define EO_ARCHIVE_MANIFEST_VERSION 1
#define EO_ARCHIVE_MANIFEST_MAX	    100000
#define EO_ARCHIVE_MANIFEST_BYTES   ((size_t)64 << 20)

struct eo_archive_base {
	char name[EO_ARCHIVE_SEG_NAME_MAX];
	int64_t revision;
	int64_t time_ms;
};

struct eo_archive_seg {
	char name[EO_ARCHIVE_SEG_NAME_MAX];
	int64_t first_revision, last_revision;
	int64_t first_received_ms, last_received_ms;
	uint64_t size;
	uint32_t crc32;
};

struct eo_archive_gap {
	int64_t after_revision;	  /* last revision archived before the gap */
	int64_t resumed_revision; /* revision of the base taken after it */
	int64_t detected_ms;
};

struct eo_archive_manifest {
	struct eo_archive_base *bases; /* sorted by revision */
	size_t n_bases;
	struct eo_archive_seg *segs; /* sorted by first revision */
	size_t n_segs;
	struct eo_archive_gap *gaps;
	size_t n_gaps;
};

void eo_archive_manifest_clear(struct eo_archive_manifest *m);

/*
 * Parses a manifest (the JSON above); entries are sorted on the way in. 0, or EINVAL /
 * ECORRUPT (malformed, a segment whose last revision is below its first, duplicate
 * names or an entry over a limit) / EVERSION / ENOMEM with err. On failure *m is cleared.
 */
int eo_archive_manifest_parse(const char *text, size_t len, struct eo_archive_manifest *m,
			      char *err, size_t errcap);
/* Compact JSON of m (malloc'd), or NULL when out of memory. */
char *eo_archive_manifest_dump(const struct eo_archive_manifest *m);

/* Appends entries (kept sorted): 0, EINVAL (a limit, a bad range) or ENOMEM. */
int eo_archive_manifest_add_base(struct eo_archive_manifest *m, const struct eo_archive_base *b);
int eo_archive_manifest_add_seg(struct eo_archive_manifest *m, const struct eo_archive_seg *s);
int eo_archive_manifest_add_gap(struct eo_archive_manifest *m, const struct eo_archive_gap *g);

/* A recoverable interval: every revision in [from_revision, to_revision]. */
struct eo_archive_window {
	int64_t from_revision, from_ms; /* the base's revision and time */
	int64_t to_revision, to_ms;	/* the chain's last revision and its receive time */
	size_t base;			/* index of the newest base the interval starts from */
};

/*
 * The end of base b's chain: *to_rev / *to_ms (the base's own when no segment follows it).
 * used (may be NULL; n_segs entries) receives true for each segment the chain uses.
 */
void eo_archive_chain(const struct eo_archive_manifest *m, size_t b, int64_t *to_rev,
		      int64_t *to_ms, bool *used);

/*
 * The recoverable windows, oldest first, overlapping chains merged: writes up to cap into
 * out and returns how many there are. 0 when there is no base.
 */
size_t eo_archive_windows(const struct eo_archive_manifest *m, struct eo_archive_window *out,
			  size_t cap);
/* The newest window (the one that reaches furthest); false when there is none. */
bool eo_archive_window_latest(const struct eo_archive_manifest *m, struct eo_archive_window *w);

/*
 * Retention: what to prune so that every point received at or after keep_from_ms (now minus
 * the retention window) stays recoverable, with as few objects as possible. Conservative:
 *   - an object newer than keep_from_ms (a base taken, or a segment's last revision received,
 *     at or after it) is never pruned;
 *   - the bases kept are, for each window, the newest base taken at or before keep_from_ms
 *     whose chain reaches as far as the window (so points from keep_from_ms on stay
 *     recoverable), and every newer base;
 *   - a segment is kept when a kept base's chain uses it, and then that base is kept too:
 *     a kept segment never loses the base it needs;
 *   - the newest recoverable point always stays: a cut later than the end of the newest
 *     window (an archiver that stopped) is moved back to it.
 * prune_base[n_bases] and prune_seg[n_segs] receive true for what goes; gaps wholly before
 * the oldest kept base go too (prune_gap[n_gaps], may be NULL).
 */
void eo_archive_retention(const struct eo_archive_manifest *m, int64_t keep_from_ms,
			  bool *prune_base, bool *prune_seg, bool *prune_gap);

#endif
