/*
 * Snapshot files on a volume (a PVC destination, or the staging area of a
 * restore), written so that a half-written snapshot is never visible under
 * its final name:
 *
 *   1. bytes go to a hidden temporary file in the target directory
 *      (".<name>.tmp-<pid>-<n>"), which is unlinked on any failure;
 *   2. commit: fsync the file; write the UID stamp "<name>.uid" the same way
 *      (temporary file, fsync, rename); rename the data file to <name>
 *      (refusing to replace an existing file unless told it is our own);
 *      fsync the directory.
 *
 * The stamp lands before the data, so a visible snapshot is always stamped
 * and a retry after a crash recognises its own work.
 */
#ifndef EO_SNAPSHOT_FILESTORE_H
#define EO_SNAPSHOT_FILESTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/guard.h"

#define EO_FILESTORE_UID_SUFFIX ".uid"

/*
 * Looks at <dir>/<name>: ABSENT, PRESENT (uid[cap] receives the stamp of
 * <name>.uid, "" when there is none) or ERROR with err.
 */
enum eo_guard_target eo_filestore_probe(const char *dir, const char *name, char *uid, size_t cap,
					char *err, size_t errcap);

struct eo_filestore_writer {
	int dirfd;
	int fd;
	char name[256];
	char tmp[300];
	char dir[2048];
	uint64_t written;
};

int eo_filestore_begin(struct eo_filestore_writer *w, const char *dir, const char *name, char *err,
		       size_t errcap);
int eo_filestore_write(struct eo_filestore_writer *w, const void *p, size_t n, char *err,
		       size_t errcap);
/*
 * Makes the file visible as <name>, stamped with uid when uid is not NULL.
 * With replace false an existing <name> makes the commit fail (EEXIST).
 * On failure the temporary file is removed.
 */
int eo_filestore_commit(struct eo_filestore_writer *w, const char *uid, bool replace, char *err,
			size_t errcap);
/* Removes the temporary file; safe after a commit and on a zeroed writer. */
void eo_filestore_abort(struct eo_filestore_writer *w);

/* Bytes available to an unprivileged writer on the filesystem of path. */
int eo_fs_free_bytes(const char *path, uint64_t *out, char *err, size_t errcap);

/* Writes all of p to fd (EINTR-safe); 0 or -1 with errno. */
int eo_write_all(int fd, const void *p, size_t n);
/* fsync of a directory (after a rename or unlink in it); 0 or -1 with errno. */
int eo_fsync_dir(const char *path);
/* snprintf for messages and bounded paths, where cutting a long text short is acceptable. */
__attribute__((format(printf, 3, 4))) void eo_errf(char *buf, size_t cap, const char *fmt, ...);

#endif
