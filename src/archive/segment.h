/*
 * archive/segment.h - the segment files of continuous archiving (issue 20). Groundwork: the
 * operator does not use them yet.
 *
 * A segment holds whole etcd revisions in increasing order: every event of one original
 * revision (a txn's several puts and deletes) is one record, so a replay can apply it as one
 * transaction and land on the same revision. Each record carries the time the archiver
 * received it, so a restore can stop at a time as well as at a revision.
 *
 * File layout (integers little-endian):
 *
 *   header   16 bytes  "EOARSEG" | version u8 (1) | codec u8 (0 none, 1 zlib) | 7 zero bytes
 *   body               the record stream, as the codec says (zlib: one zlib stream)
 *   trailer  48 bytes  "EOARTRL1" | records u64 | first_rev i64 | last_rev i64 |
 *                      raw_len u64 (record stream bytes before the codec) |
 *                      raw_crc u32 (CRC-32 of the record stream) |
 *                      file_crc u32 (CRC-32 of every byte before this field)
 *
 *   record   len u32 (bytes after this field) | revision i64 | received_ms i64 (Unix ms) |
 *            n_events u32 | events
 *   event    type u8 (0 PUT, 1 DELETE) | create_rev i64 | mod_rev i64 | version i64 |
 *            lease i64 | key_len u32 | key | value_len u32 | value
 *
 * Why binary, length-prefixed records and not NDJSON: keys and values are bytes; JSON would
 * need base64 (a third larger, before compression) and a JSON parse per revision on replay;
 * a length prefix lets the reader refuse an absurd record before allocating it. Why zlib
 * (deflate, level 1 by default) and not zstd: zlib is already linked into the operator (the S3
 * CRC-32), so segments need no new package; etcd values (protobuf and JSON of Kubernetes
 * objects) compress 3-10x with it, and deflate level 1 runs far above the 2,000 writes/s of
 * 1 KiB the archiver must keep up with. The codec byte leaves room for zstd later.
 *
 * A segment is written to "<first>.partial" and renamed to its final name only once the
 * trailer is on disk (fsync'd), so a crash leaves either a whole segment or a .partial one;
 * the writer owns its directory and replaces a .partial it finds (never a segment).
 * A reader checks the header, the trailer and the file CRC before yielding any revision, and
 * the record count, revisions and raw CRC as it goes: a truncated or corrupted file never
 * yields a revision.
 *
 * Every buffer is capped: one record (one revision) at most EO_ARCHIVE_RECORD_MAX bytes,
 * the same bound as a watch response line, since a record is the decoded form of one.
 */
#ifndef EO_ARCHIVE_SEGMENT_H
#define EO_ARCHIVE_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EO_ARCHIVE_SEG_VERSION	   1
#define EO_ARCHIVE_RECORD_MAX	   ((size_t)16 << 20)
#define EO_ARCHIVE_SEG_HEADER_LEN  16
#define EO_ARCHIVE_SEG_TRAILER_LEN 48
/* Defaults of the writer's limits (issue 20): a segment is closed after 5 s or 8 MiB. */
#define EO_ARCHIVE_SEG_MAX_AGE_MS 5000
#define EO_ARCHIVE_SEG_MAX_BYTES  ((size_t)8 << 20)
#define EO_ARCHIVE_SEG_NAME_MAX	  96

enum eo_archive_codec { EO_ARCHIVE_CODEC_NONE = 0, EO_ARCHIVE_CODEC_ZLIB = 1 };

/* Results: 0, or one of these (negative). */
enum {
	EO_ARCHIVE_OK = 0,
	EO_ARCHIVE_EIO = -1,	    /* a file could not be read or written */
	EO_ARCHIVE_ETRUNCATED = -2, /* the file ends early (no or short trailer, cut body) */
	EO_ARCHIVE_ECORRUPT = -3,   /* a CRC, a count or a field does not match */
	EO_ARCHIVE_EVERSION = -4,   /* not a segment, or a version or codec not known */
	EO_ARCHIVE_EORDER = -5,	    /* revisions not strictly increasing */
	EO_ARCHIVE_ETOOBIG = -6,    /* a record over EO_ARCHIVE_RECORD_MAX */
	EO_ARCHIVE_ENOMEM = -7,
	EO_ARCHIVE_EINVAL = -8,
	EO_ARCHIVE_ECALLBACK = -9, /* a callback refused */
};

const char *eo_archive_strerror(int rc);

enum eo_archive_event_type { EO_ARCHIVE_PUT = 0, EO_ARCHIVE_DELETE = 1 };

struct eo_archive_event {
	enum eo_archive_event_type type;
	const unsigned char *key;
	size_t key_len;
	const unsigned char *value; /* PUT only; NULL/0 for DELETE */
	size_t value_len;
	int64_t create_revision;
	int64_t mod_revision;
	int64_t version;
	int64_t lease;
};

/* One original etcd revision: every event it made, in etcd's order. */
struct eo_archive_rev {
	int64_t revision;
	int64_t received_ms; /* Unix ms at which the archiver received it */
	const struct eo_archive_event *events;
	size_t n;
};

/* What the manifest records of a closed segment. */
struct eo_archive_seg_info {
	char name[EO_ARCHIVE_SEG_NAME_MAX]; /* file name in the directory */
	enum eo_archive_codec codec;
	uint64_t records;
	int64_t first_revision, last_revision;
	int64_t first_received_ms, last_received_ms;
	uint64_t size;	   /* file bytes */
	uint64_t raw_len;  /* record stream bytes */
	uint32_t file_crc; /* the trailer's file CRC: the segment's checksum */
};

/* "<first>-<last>.seg" (".seg.z" with zlib), revisions as 20 digits: names sort by revision. */
void eo_archive_seg_name(int64_t first, int64_t last, enum eo_archive_codec codec, char *out,
			 size_t cap);

/* ---- writer ------------------------------------------------------------------- */

struct eo_archive_writer_opts {
	const char *dir;    /* where segments go (exists) */
	int64_t max_age_ms; /* close when the first record is this old; 0: default 5 s */
	size_t max_bytes;   /* close once the record stream reaches this; 0: default 8 MiB */
	enum eo_archive_codec codec;
	int level; /* zlib level 1-9; 0: 1 */
};

/* Called after each segment is closed and renamed; nonzero stops the writer (ECALLBACK). */
typedef int (*eo_archive_closed_fn)(void *ud, const struct eo_archive_seg_info *info, char *err,
				    size_t errcap);

struct eo_archive_writer;

int eo_archive_writer_new(const struct eo_archive_writer_opts *o, eo_archive_closed_fn closed,
			  void *ud, struct eo_archive_writer **out, char *err, size_t errcap);
/*
 * Appends one revision (revision above every one written before: EORDER otherwise). The open
 * segment is closed first when its age at rev->received_ms has reached max_age_ms, and after
 * the append when it has reached max_bytes.
 */
int eo_archive_writer_add(struct eo_archive_writer *w, const struct eo_archive_rev *rev, char *err,
			  size_t errcap);
/* Closes the open segment when its age at now_ms has reached max_age_ms (call when idle). */
int eo_archive_writer_tick(struct eo_archive_writer *w, int64_t now_ms, char *err, size_t errcap);
/* Closes the open segment now, if it holds anything. */
int eo_archive_writer_flush(struct eo_archive_writer *w, char *err, size_t errcap);
/* Frees; an open segment is not closed: its .partial file is removed. */
void eo_archive_writer_free(struct eo_archive_writer *w);

/* ---- reader and replay ------------------------------------------------------------ */

struct eo_archive_reader;

/*
 * Opens a segment file and checks header, trailer and file CRC (the whole file is read
 * once). info (may be NULL) receives what the trailer says; info->name is the path's last
 * component.
 */
int eo_archive_reader_open(const char *path, struct eo_archive_reader **out,
			   struct eo_archive_seg_info *info, char *err, size_t errcap);
/*
 * The next revision (pointing into the reader, valid until the next call): 1, 0 at the end
 * (record count, last revision and raw CRC checked), or an error.
 */
int eo_archive_reader_next(struct eo_archive_reader *r, struct eo_archive_rev *rev, char *err,
			   size_t errcap);
void eo_archive_reader_free(struct eo_archive_reader *r);

/* Where a replay stops: before the first revision above target_revision or received after
 * target_ms (each 0: no bound). The replay is always a prefix of the archive, even if the
 * archiver's clock stepped back. */
struct eo_archive_target {
	int64_t revision;
	int64_t time_ms;
};

typedef int (*eo_archive_rev_fn)(void *ud, const struct eo_archive_rev *rev, char *err,
				 size_t errcap);

/*
 * Replays segments (paths in revision order) from after_revision (the base snapshot's
 * revision: revisions up to it are skipped) to the target. With contiguous, each revision
 * must be the previous one plus one (etcd makes one revision per change, and the watch sees
 * them all): a missing segment or record is an ECORRUPT naming the hole. *last (may be NULL)
 * receives the last revision given to fn (after_revision when none). Every segment is
 * checked before its first revision is given.
 */
int eo_archive_replay(const char *const *paths, size_t n, int64_t after_revision, bool contiguous,
		      const struct eo_archive_target *target, eo_archive_rev_fn fn, void *ud,
		      int64_t *last, char *err, size_t errcap);

#endif
