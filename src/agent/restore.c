/* `etcd-operator restore-agent` (agent/cli.h): stage a snapshot on the data volume. */
#include "agent/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/restorefail.h"
#include "api/snapshot.h"
#include "snapshot/store.h"
#include "snapshot/trust.h"

static int copy_file(const char *src, const char *dstdir, const char *name, char *err,
		     size_t errcap)
{
	struct eo_filestore_writer w;
	char buf[65536];
	ssize_t n;
	int fd;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errcap, "open %s: %s", src, strerror(errno));
		return -1;
	}
	if (eo_filestore_begin(&w, dstdir, name, err, errcap) != 0) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (eo_filestore_write(&w, buf, (size_t)n, err, errcap) != 0)
			goto bad;
	if (n < 0) {
		snprintf(err, errcap, "read %s: %s", src, strerror(errno));
		goto bad;
	}
	if (fchmod(w.fd, 0755) != 0) {
		snprintf(err, errcap, "chmod: %s", strerror(errno));
		goto bad;
	}
	close(fd);
	return eo_filestore_commit(&w, NULL, true, err, errcap);
bad:
	close(fd);
	eo_filestore_abort(&w);
	return -1;
}

/*
 * Copies this binary to DIR/bin and the libraries beside it (PREFIX/lib, as
 * the image lays them out) to DIR/lib, so a container of another image can
 * start it through DIR/lib/ld-linux-*.so.
 */
static int install_self(const char *dir, char *err, size_t errcap)
{
	char exe[PATH_MAX], tmp[PATH_MAX], prefix[PATH_MAX], sub[PATH_MAX], src[PATH_MAX * 2];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(err, errcap, "readlink /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	/* Not in place: snprintf from a buffer into itself is undefined (glibc empties it). */
	snprintf(tmp, sizeof(tmp), "%s", exe);
	snprintf(prefix, sizeof(prefix), "%s", dirname(dirname(tmp)));
	snprintf(sub, sizeof(sub), "%s/bin", dir);
	if (eo__agent_mkdir_p(sub, err, errcap) != 0 ||
	    copy_file(exe, sub, "etcd-operator", err, errcap) != 0)
		return -1;
	snprintf(src, sizeof(src), "%s/lib", prefix);
	d = opendir(src);
	if (!d)
		return 0; /* a development build: the system's libraries */
	snprintf(sub, sizeof(sub), "%s/lib", dir);
	if (eo__agent_mkdir_p(sub, err, errcap) != 0) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(src, sizeof(src), "%s/lib/%s", prefix, de->d_name);
		if (copy_file(src, sub, de->d_name, err, errcap) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

struct checked_sink {
	struct eo_snapcheck check;
	struct eo_store_upload *up;
	int write_errno; /* errno of a failed write to the staging file, 0 if none */
};

static int check_and_store(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct checked_sink *c = ud;

	eo_snapcheck_feed(&c->check, p, n);
	errno = 0;
	if (eo_store_write(c->up, p, n, err, errcap) != 0) {
		c->write_errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

static int need_space(const struct eo__agent_opts *o, const char *dir, uint64_t need,
		      const char *why, struct eo_log_ctx *lc)
{
	uint64_t free_bytes;
	char err[1024];

	if (eo_fs_free_bytes(dir, &free_bytes, err, sizeof(err)) != 0)
		return eo__agent_restore_fail(o, lc, EO_REASON_RESTORE_FAILED,
					      "free-space check failed", err);
	if (free_bytes < need) {
		snprintf(err, sizeof(err),
			 "the data volume has %llu bytes free; %s needs about %llu: make "
			 "spec.storage.size larger and recreate the cluster",
			 (unsigned long long)free_bytes, why, (unsigned long long)need);
		return eo__agent_restore_fail(o, lc, EO_REASON_RESTORE_VOLUME_TOO_SMALL,
					      "restore volume too small", err);
	}
	return 0;
}

int eo__agent_restore(const struct eo__agent_opts *o)
{
	struct eo_log_ctx lc;
	struct eo_store_target t = {0};
	struct eo_store_upload up = {0};
	struct checked_sink cs = {.up = &up};
	struct eo_s3_head h;
	enum eo_snapcheck_result v;
	eo_s3 *s3 = NULL;
	char err[2048], uri[2048], sha[EO_SNAP_SHA_HEX_LEN + 1], checksum[80], staged[PATH_MAX];
	char secs[32], rss[32], why[512];
	struct timespec t0;
	uint64_t size = 0, got;
	int rc = 1;
	bool install_only;
	json_t *j;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "component", "restore-agent");
	if (!o->data_dir || !o->staging_dir) {
		fputs(eo__agent_usage_restore, stderr);
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments",
					      "--data-dir and --staging-dir are required");
	}
	/* Neither: only --install-self, for an archive restore (archive-replay stages the file). */
	install_only = !o->file && !o->s3_endpoint && !o->s3_bucket && o->install_self;
	if ((!install_only && !!o->file == !!(o->s3_endpoint || o->s3_bucket)) ||
	    (o->s3_bucket && !o->s3_key)) {
		fputs(eo__agent_usage_restore, stderr);
		return eo__agent_restore_fail(
		    o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments",
		    "exactly one source: --s3-endpoint/--s3-bucket/--s3-key or --file");
	}
	if (o->member_id && o->member_id[0])
		return eo__agent_refuse_joined(o, &lc);
	if (o->expected_checksum && !eo_snapshot_checksum_well_formed(o->expected_checksum)) {
		eo_errf(err, sizeof(err),
			"--expected-checksum %.100s: want sha256:<64 lower-case hex>",
			o->expected_checksum);
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments",
					      err);
	}
	if (o->install_self && install_self(o->install_self, err, sizeof(err)) != 0)
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "cannot install the agent for the rebuild step", err);
	if (eo__agent_data_dir_initialised(o->data_dir)) {
		eo_log_kv(EO_LOG_INFO, &lc, "the data dir is already initialised; nothing to do",
			  "data_dir", o->data_dir, NULL);
		return 0;
	}
	if (install_only) {
		eo_log_kv(EO_LOG_INFO, &lc, "agent installed for the archive replay", "dir",
			  o->install_self, NULL);
		return 0;
	}
	if (eo__agent_mkdir_p(o->data_dir, err, sizeof(err)) != 0)
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "cannot create the data dir", err);
	snprintf(staged, sizeof(staged), "%s/%s", o->staging_dir, STAGED_NAME);
	if (o->file) {
		/* A PVC source: verify in place; only the rebuild takes data-volume space. */
		struct stat fst;
		bool have_stat = stat(o->file, &fst) == 0;

		eo_log_ctx_add(&lc, "source", o->file);

		if (!have_stat && (errno == ENOENT || errno == ENOTDIR)) {
			eo_errf(err, sizeof(err), "%s does not exist on the source claim", o->file);
			return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_OBJECT_MISSING,
						      "restore object missing", err);
		}
		/* Cheap check first: too small a volume fails before the file is hashed. */
		if (have_stat && need_space(o, o->data_dir, (uint64_t)fst.st_size + FREE_MARGIN,
					    "rebuilding the data dir", &lc) != 0)
			return 1;
		v = eo_snapcheck_file(o->file, &size, sha, err, sizeof(err));
		if (v == EO_SNAPCHECK_ERROR)
			return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
						      "cannot read the snapshot", err);
		if (v != EO_SNAPCHECK_OK) {
			eo_errf(err, sizeof(err), "%s: %s", o->file, eo_snapcheck_strerror(v));
			return eo__agent_restore_fail(
			    o, &lc, EO_REASON_RESTORE_SNAPSHOT_CORRUPT,
			    "the snapshot is not usable; etcd will not start on it", err);
		}
		if (eo_checksum_check(o->expected_checksum, sha, why, sizeof(why)) != 0) {
			eo_errf(err, sizeof(err), "%s: %s", o->file, why);
			return eo__agent_restore_fail(
			    o, &lc, EO_REASON_RESTORE_CHECKSUM_MISMATCH,
			    "the snapshot is not the expected one; etcd will not "
			    "start on it",
			    err);
		}
		snprintf(staged, sizeof(staged), "%s", o->file);
		snprintf(uri, sizeof(uri), "file://%s", o->file);
		goto done;
	}
	/* Unreadable credentials are the Secret's fault; a bad endpoint or bucket is not. */
	switch (eo__agent_make_s3(o, &s3, err, sizeof(err))) {
	case 0:
		break;
	case -1:
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_ACCESS_DENIED,
					      "cannot read the S3 credentials", err);
	default:
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "S3 setup failed",
					      err);
	}
	eo_s3_uri(s3, o->s3_key, uri, sizeof(uri));
	eo_log_ctx_add(&lc, "source", uri);
	if (eo_s3_head(s3, o->s3_key, &h, err, sizeof(err)) != 0) {
		eo__agent_restore_fail(o, &lc,
				       h.status == 401 || h.status == 403
					   ? EO_REASON_RESTORE_ACCESS_DENIED
					   : EO_REASON_RESTORE_SOURCE_UNREACHABLE,
				       "cannot look up the snapshot", err);
		goto out;
	}
	if (!h.exists) {
		eo_errf(err, sizeof(err), "%s does not exist (HeadObject answered 404)", uri);
		eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_OBJECT_MISSING,
				       "restore object missing", err);
		goto out;
	}
	if (eo__agent_mkdir_p(o->staging_dir, err, sizeof(err)) != 0) {
		eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
				       "cannot create the staging directory", err);
		goto out;
	}
	if (need_space(o, o->staging_dir, 2 * h.size + FREE_MARGIN,
		       "staging the snapshot and rebuilding the data dir (2x the snapshot)",
		       &lc) != 0)
		goto out;
	t.dir = o->staging_dir;
	t.name = STAGED_NAME;
	if (eo_snapcheck_init(&cs.check) != 0) {
		eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "cannot set up SHA-256",
				       "OpenSSL");
		goto out;
	}
	if (eo_store_open(&up, &t, NULL, true, 0, 0, err, sizeof(err)) != 0) {
		eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
				       "cannot stage the snapshot", err);
		goto out_check;
	}
	if (eo_s3_get(s3, o->s3_key, check_and_store, &cs, &got, err, sizeof(err)) != 0) {
		eo__agent_restore_fail(o, &lc,
				       cs.write_errno == ENOSPC || cs.write_errno == EDQUOT
					   ? EO_REASON_RESTORE_VOLUME_TOO_SMALL
				       : cs.write_errno != 0 ? EO_REASON_RESTORE_FAILED
							     : EO_REASON_RESTORE_SOURCE_UNREACHABLE,
				       "downloading the snapshot failed", err);
		goto out_abort;
	}
	v = eo_snapcheck_finish(&cs.check, sha);
	if (v != EO_SNAPCHECK_OK) {
		eo_errf(err, sizeof(err), "%s: %s", uri, eo_snapcheck_strerror(v));
		eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_SNAPSHOT_CORRUPT,
				       "the snapshot is not usable; etcd will not start on it",
				       err);
		goto out_abort;
	}
	if (eo_checksum_check(o->expected_checksum, sha, why, sizeof(why)) != 0) {
		eo_errf(err, sizeof(err), "%s: %s", uri, why);
		eo__agent_restore_fail(
		    o, &lc, EO_REASON_RESTORE_CHECKSUM_MISMATCH,
		    "the snapshot is not the expected one; etcd will not start on it", err);
		goto out_abort;
	}
	if (eo_store_commit(&up, err, sizeof(err)) != 0) {
		eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
				       "staging the snapshot failed", err);
		goto out_abort;
	}
	size = got;
	eo_store_abort(&up);
	eo_snapcheck_free(&cs.check);
done:
	snprintf(checksum, sizeof(checksum), "sha256:%s", sha);
	eo__agent_usage_fields(&t0, secs, sizeof(secs), rss, sizeof(rss));
	eo_log_kv(EO_LOG_INFO, &lc, "snapshot staged and verified", "staged", staged, "checksum",
		  checksum, "seconds", secs, "peak_rss_kb", rss, NULL);
	j = json_pack("{s:s, s:s, s:I, s:s}", "uri", uri, "staged", staged, "sizeBytes",
		      (json_int_t)size, "checksum", checksum);
	rc = j ? eo__agent_report(o, j, &lc)
	       : eo__agent_fail(&lc, "cannot format the result", "out of memory");
	json_decref(j);
	goto out;
out_abort:
	eo_store_abort(&up);
out_check:
	eo_snapcheck_free(&cs.check);
out:
	eo_s3_free(s3);
	return rc;
}
