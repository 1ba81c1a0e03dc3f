/* Deleting what one snapshot stored (prune.h). */
#include "snapshot/prune.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/filestore.h"
#include "snapshot/s3.h"
#include "api/snapshot.h"

#define PATH_CAP 4096
#define NAME_CAP 256
#define UID_CAP	 EO_S3_UID_MAX
#define LINE_CAP 2048

/* The stamp <dir>/<file>.uid into uid ("" when absent). 0, or -1 with msg. */
static int read_stamp(const char *dir, const char *file, char *uid, size_t cap, char *msg,
		      size_t mcap)
{
	char path[PATH_CAP];
	ssize_t n;
	int fd;

	uid[0] = '\0';
	eo_errf(path, sizeof(path), "%s/%s" EO_FILESTORE_UID_SUFFIX, dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		eo_errf(msg, mcap, "open %s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, uid, cap - 1);
	close(fd);
	if (n < 0) {
		eo_errf(msg, mcap, "read %s: %s", path, strerror(errno));
		uid[0] = '\0';
		return -1;
	}
	uid[n] = '\0';
	while (n > 0 && (uid[n - 1] == '\n' || uid[n - 1] == '\r'))
		uid[--n] = '\0';
	return 0;
}

static int unlink_synced(const char *dir, const char *file, char *msg, size_t cap)
{
	char path[PATH_CAP];

	eo_errf(path, sizeof(path), "%s/%s", dir, file);
	if (unlink(path) != 0 && errno != ENOENT) {
		eo_errf(msg, cap, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	if (eo_fsync_dir(dir) != 0) {
		eo_errf(msg, cap, "fsync %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int eo_prune_file(const char *dir, const char *name, const char *uid, char *msg, size_t cap)
{
	char file[NAME_CAP], stamp_file[NAME_CAP + 8], stamp[UID_CAP], path[PATH_CAP];
	struct stat st;

	if (dir == NULL || name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
	    strlen(name) > 200 || uid == NULL || uid[0] == '\0') {
		eo_errf(msg, cap, "invalid arguments");
		return -1;
	}
	eo_errf(file, sizeof(file), "%s%s", name, EO_SNAPSHOT_FILE_SUFFIX);
	eo_errf(stamp_file, sizeof(stamp_file), "%s" EO_FILESTORE_UID_SUFFIX, file);
	if (read_stamp(dir, file, stamp, sizeof(stamp), msg, cap) != 0)
		return -1;
	eo_errf(path, sizeof(path), "%s/%s", dir, file);
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT) {
			eo_errf(msg, cap, "stat %s: %s", path, strerror(errno));
			return -1;
		}
		if (strcmp(stamp, uid) == 0) {
			/* An earlier prune removed the file and stopped before the stamp. */
			if (unlink_synced(dir, stamp_file, msg, cap) != 0)
				return -1;
			eo_errf(msg, cap, "nothing stored at file://%s (its stamp removed)", path);
			return 0;
		}
		eo_errf(msg, cap, "nothing stored at file://%s", path);
		return 0;
	}
	if (strcmp(stamp, uid) != 0) {
		eo_errf(msg, cap, "kept file://%s: %s", path,
			stamp[0] ? "stamped with another snapshot's UID" : "it has no UID stamp");
		return 0;
	}
	/* The file before its stamp: a crash in between leaves a stamp the next run removes. */
	if (unlink_synced(dir, file, msg, cap) != 0 ||
	    unlink_synced(dir, stamp_file, msg, cap) != 0)
		return -1;
	eo_errf(msg, cap, "deleted file://%s", path);
	return 0;
}

int eo_prune_s3(eo_s3 *s3, const char *key, const char *uid, char *msg, size_t cap)
{
	char uri[LINE_CAP], err[1024];
	struct eo_s3_head h;

	if (eo_s3_uri(s3, key, uri, sizeof(uri)) != 0)
		snprintf(uri, sizeof(uri), "%s", key);
	if (eo_s3_head(s3, key, &h, err, sizeof(err)) != 0) {
		eo_errf(msg, cap, "cannot tell whether %s is ours, so nothing is deleted: %s", uri,
			err);
		return -1;
	}
	if (!h.exists) {
		eo_errf(msg, cap, "nothing stored at %s", uri);
		return 0;
	}
	if (strcmp(h.uid, uid) != 0) {
		eo_errf(msg, cap, "kept %s: %s", uri,
			h.uid[0] ? "stamped with another snapshot's UID" : "it has no UID stamp");
		return 0;
	}
	if (eo_s3_delete(s3, key, err, sizeof(err)) != 0) {
		eo_errf(msg, cap, "deleting %s failed: %s", uri, err);
		return -1;
	}
	eo_errf(msg, cap, "deleted %s", uri);
	return 0;
}
