/*
 * Where a snapshot goes: an S3 object or a file in a directory (a mounted
 * PVC), behind one streaming interface with the overwrite guard in front.
 *
 *   eo_store_guard   looks at the target and applies guard.h (HeadObject or
 *                    stat plus the UID stamp)
 *   eo_store_open    starts writing
 *   eo_store_write   takes bytes in order (an eo_snap_sink_fn)
 *   eo_store_commit  makes the snapshot visible under its final name
 *   eo_store_abort   drops everything written so far
 *
 * S3 memory is (parallel + 1) part buffers: bytes collect in one; the first
 * time it fills a multipart upload starts, and each full buffer becomes a part
 * that a worker thread uploads through its own connection while the reader
 * fills another, so reading the snapshot does not pause for the upload. At
 * most `parallel` parts upload at once; the next full buffer waits for the
 * oldest of them. A snapshot that never fills a buffer is sent with one
 * PutObject at commit. Nothing is visible before commit
 * (CompleteMultipartUpload, PutObject, rename), and the caller commits only
 * after the integrity hash verified.
 */
#ifndef EO_SNAPSHOT_STORE_H
#define EO_SNAPSHOT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "snapshot/filestore.h"
#include "snapshot/s3.h"

struct eo_store_target {
	eo_s3 *s3;	  /* S3 when not NULL (borrowed) */
	const char *key;  /* S3: the full object key */
	const char *dir;  /* file: the directory */
	const char *name; /* file: the file name */
};

/* Part uploads in parallel to S3; each holds one part buffer. */
#define EO_STORE_MAX_PARALLEL	  4
#define EO_STORE_DEFAULT_PARALLEL 2

struct eo_store_upload;

/* One part upload slot: a worker thread with its own S3 client and buffer. */
struct eo_store_part {
	struct eo_store_upload *u;
	eo_s3 *s3; /* a clone of the target's client, made at first use */
	unsigned char *buf;
	size_t len, number;
	pthread_t thread;
	bool running;
	int rc;
	char etag[256];
	char crc[EO_S3_CRC32_LEN + 1];
	char err[512];
};

struct eo_store_upload {
	const struct eo_store_target *t;
	const char *uid;
	bool replace;
	/* S3 */
	unsigned char *buf; /* filling */
	size_t len;
	uint64_t part_size;
	struct eo_s3_mpu mpu;
	bool mpu_started;
	struct eo_store_part parts[EO_STORE_MAX_PARALLEL];
	unsigned parallel, next; /* slots in use; the next (the oldest) to reuse */
	uint64_t wait_ms;	 /* time the reader waited for a slot (store-bound) */
	/* file */
	struct eo_filestore_writer fw;
	bool fw_open;
	uint64_t written;
};

/* "s3://bucket/key" or "file://<dir>/<name>". */
int eo_store_uri(const struct eo_store_target *t, char *buf, size_t cap);

/*
 * The overwrite guard: 0 when writing may go ahead (*replace true when the
 * target is our own earlier write), -1 with err otherwise.
 */
int eo_store_guard(const struct eo_store_target *t, const char *uid, bool *replace, char *err,
		   size_t errcap);

/*
 * part_size: S3 part size (eo_s3_part_size already applied); parallel: parts uploading at
 * once, 0 for the default, capped at EO_STORE_MAX_PARALLEL. Both ignored for files.
 */
int eo_store_open(struct eo_store_upload *u, const struct eo_store_target *t, const char *uid,
		  bool replace, uint64_t part_size, unsigned parallel, char *err, size_t errcap);
/* An eo_snap_sink_fn; ud is the upload. */
int eo_store_write(void *ud, const void *p, size_t n, char *err, size_t errcap);
int eo_store_commit(struct eo_store_upload *u, char *err, size_t errcap);
/* Safe on an upload that failed or was committed. */
void eo_store_abort(struct eo_store_upload *u);

#endif
