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
 * S3 memory is two part buffers: bytes collect in one; the first time it
 * fills a multipart upload starts, and each full buffer becomes a part that a
 * worker thread uploads while the other buffer fills, so reading the snapshot
 * does not pause for the upload (at most one upload runs; the next full buffer
 * waits for it). A snapshot that never fills a buffer is sent with one
 * PutObject at commit. Nothing is
 * visible before commit (CompleteMultipartUpload, PutObject, rename), and
 * the caller commits only after the integrity hash verified.
 */
#ifndef EO_AGENT_STORE_H
#define EO_AGENT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "agent/filestore.h"
#include "agent/s3.h"

struct eo_store_target {
	eo_s3 *s3;	  /* S3 when not NULL (borrowed) */
	const char *key;  /* S3: the full object key */
	const char *dir;  /* file: the directory */
	const char *name; /* file: the file name */
};

struct eo_store_upload {
	const struct eo_store_target *t;
	const char *uid;
	bool replace;
	/* S3 */
	unsigned char *buf; /* filling */
	size_t len;
	unsigned char *spare; /* uploading (by the worker), or free */
	uint64_t part_size;
	struct eo_s3_mpu mpu;
	bool mpu_started;
	pthread_t worker;
	bool worker_running;
	size_t worker_len;
	int worker_rc;
	char worker_err[512];
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

/* part_size: S3 part size (eo_s3_part_size already applied); ignored for files. */
int eo_store_open(struct eo_store_upload *u, const struct eo_store_target *t, const char *uid,
		  bool replace, uint64_t part_size, char *err, size_t errcap);
/* An eo_snap_sink_fn; ud is the upload. */
int eo_store_write(void *ud, const void *p, size_t n, char *err, size_t errcap);
int eo_store_commit(struct eo_store_upload *u, char *err, size_t errcap);
/* Safe on an upload that failed or was committed. */
void eo_store_abort(struct eo_store_upload *u);

#endif
