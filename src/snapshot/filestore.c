/* Snapshot files on a volume (filestore.h). */
#include "snapshot/filestore.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int eo_fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc, e;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

void eo_errf(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
}

int eo_write_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static bool name_valid(const char *name)
{
	return name && name[0] && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0 && strlen(name) < 200;
}

enum eo_guard_target eo_filestore_probe(const char *dir, const char *name, char *uid, size_t cap,
					char *err, size_t errcap)
{
	char path[4096];
	struct stat st;
	ssize_t n;
	int fd;

	uid[0] = '\0';
	if (!name_valid(name)) {
		snprintf(err, errcap, "invalid snapshot file name");
		return EO_TARGET_ERROR;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return EO_TARGET_ABSENT;
		snprintf(err, errcap, "stat %s: %s", path, strerror(errno));
		return EO_TARGET_ERROR;
	}
	snprintf(path, sizeof(path), "%s/%s" EO_FILESTORE_UID_SUFFIX, dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return EO_TARGET_PRESENT;
		snprintf(err, errcap, "open %s: %s", path, strerror(errno));
		return EO_TARGET_ERROR;
	}
	n = read(fd, uid, cap - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errcap, "read %s: %s", path, strerror(errno));
		uid[0] = '\0';
		return EO_TARGET_ERROR;
	}
	uid[n] = '\0';
	while (n > 0 && (uid[n - 1] == '\n' || uid[n - 1] == '\r'))
		uid[--n] = '\0';
	return EO_TARGET_PRESENT;
}

static int open_tmp(int dirfd, const char *name, char *tmp, size_t cap)
{
	static unsigned counter;
	int fd, i;

	for (i = 0; i < 100; i++) {
		snprintf(tmp, cap, ".%s.tmp-%ld-%u", name, (long)getpid(), counter++);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int eo_filestore_begin(struct eo_filestore_writer *w, const char *dir, const char *name, char *err,
		       size_t errcap)
{
	memset(w, 0, sizeof(*w));
	w->dirfd = w->fd = -1;
	if (!name_valid(name)) {
		snprintf(err, errcap, "invalid snapshot file name");
		return -1;
	}
	snprintf(w->name, sizeof(w->name), "%s", name);
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0) {
		snprintf(err, errcap, "open directory %s: %s", dir, strerror(errno));
		return -1;
	}
	w->fd = open_tmp(w->dirfd, name, w->tmp, sizeof(w->tmp));
	if (w->fd < 0) {
		snprintf(err, errcap, "create a temporary file in %s: %s", dir, strerror(errno));
		close(w->dirfd);
		w->dirfd = -1;
		w->tmp[0] = '\0';
		return -1;
	}
	return 0;
}

int eo_filestore_write(struct eo_filestore_writer *w, const void *p, size_t n, char *err,
		       size_t errcap)
{
	if (eo_write_all(w->fd, p, n) != 0) {
		if (errno == ENOSPC || errno == EDQUOT)
			snprintf(
			    err, errcap,
			    "%s: no space left on the volume after %llu bytes: give the volume "
			    "more room",
			    w->dir, (unsigned long long)w->written);
		else
			snprintf(err, errcap, "write %s/%s: %s", w->dir, w->tmp, strerror(errno));
		return -1;
	}
	w->written += n;
	return 0;
}

/* Writes the stamp through its own temporary file. */
static int write_stamp(struct eo_filestore_writer *w, const char *uid, char *err, size_t errcap)
{
	char tmp[320], final[300];
	int fd;

	snprintf(final, sizeof(final), "%s" EO_FILESTORE_UID_SUFFIX, w->name);
	fd = open_tmp(w->dirfd, final, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(err, errcap, "create stamp in %s: %s", w->dir, strerror(errno));
		return -1;
	}
	if (eo_write_all(fd, uid, strlen(uid)) != 0 || eo_write_all(fd, "\n", 1) != 0 ||
	    fsync(fd) != 0) {
		snprintf(err, errcap, "write stamp %s/%s: %s", w->dir, final, strerror(errno));
		close(fd);
		unlinkat(w->dirfd, tmp, 0);
		return -1;
	}
	close(fd);
	if (renameat(w->dirfd, tmp, w->dirfd, final) != 0) {
		snprintf(err, errcap, "rename stamp to %s/%s: %s", w->dir, final, strerror(errno));
		unlinkat(w->dirfd, tmp, 0);
		return -1;
	}
	return 0;
}

int eo_filestore_commit(struct eo_filestore_writer *w, const char *uid, bool replace, char *err,
			size_t errcap)
{
	int rc;

	if (fsync(w->fd) != 0) {
		snprintf(err, errcap, "fsync %s/%s: %s", w->dir, w->tmp,
			 errno == ENOSPC ? "no space left on the volume" : strerror(errno));
		goto fail;
	}
	if (close(w->fd) != 0) {
		w->fd = -1;
		snprintf(err, errcap, "close %s/%s: %s", w->dir, w->tmp, strerror(errno));
		goto fail;
	}
	w->fd = -1;
	if (uid && write_stamp(w, uid, err, errcap) != 0)
		goto fail;
	if (replace)
		rc = renameat(w->dirfd, w->tmp, w->dirfd, w->name);
	else
		rc = renameat2(w->dirfd, w->tmp, w->dirfd, w->name, RENAME_NOREPLACE);
	if (rc != 0) {
		snprintf(err, errcap, "rename to %s/%s: %s", w->dir, w->name,
			 errno == EEXIST ? "a file of that name appeared meanwhile"
					 : strerror(errno));
		goto fail;
	}
	w->tmp[0] = '\0';
	if (fsync(w->dirfd) != 0) {
		snprintf(err, errcap, "fsync directory %s: %s", w->dir, strerror(errno));
		eo_filestore_abort(w);
		return -1;
	}
	eo_filestore_abort(w);
	return 0;
fail:
	eo_filestore_abort(w);
	return -1;
}

void eo_filestore_abort(struct eo_filestore_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->dirfd >= 0) {
		if (w->tmp[0])
			unlinkat(w->dirfd, w->tmp, 0);
		close(w->dirfd);
	}
	w->dirfd = -1;
	w->tmp[0] = '\0';
}

int eo_fs_free_bytes(const char *path, uint64_t *out, char *err, size_t errcap)
{
	struct statvfs sv;

	if (statvfs(path, &sv) != 0) {
		snprintf(err, errcap, "statvfs %s: %s", path, strerror(errno));
		return -1;
	}
	*out = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	return 0;
}
