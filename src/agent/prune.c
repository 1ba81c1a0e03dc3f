/* `etcd-operator snapshot-prune` (prune.h). */
#include "agent/prune.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/filestore.h"
#include "agent/s3.h"
#include "api/snapshot.h"
#include "obs/log.h"

#define PATH_CAP  4096
#define NAME_CAP  256
#define UID_CAP	  EO_S3_UID_MAX
#define LINE_CAP  2048
#define ARG_LIMIT 1024

struct popts {
	const char *name, *uid;
	const char *s3_endpoint, *s3_bucket, *s3_key, *s3_region, *s3_ca, *cred_dir;
	bool path_style;
	const char *pvc_dir, *termination_log;
};

enum {
	P_NAME = 256,
	P_UID,
	P_S3_ENDPOINT,
	P_S3_BUCKET,
	P_S3_KEY,
	P_S3_REGION,
	P_S3_CA,
	P_S3_PATH_STYLE,
	P_CRED_DIR,
	P_PVC_DIR,
	P_TERMLOG,
	P_HELP,
};

static const struct option prune_options[] = {
    {"snapshot-name", required_argument, NULL, P_NAME},
    {"snapshot-uid", required_argument, NULL, P_UID},
    {"s3-endpoint", required_argument, NULL, P_S3_ENDPOINT},
    {"s3-bucket", required_argument, NULL, P_S3_BUCKET},
    {"s3-key", required_argument, NULL, P_S3_KEY},
    {"s3-region", required_argument, NULL, P_S3_REGION},
    {"s3-ca-file", required_argument, NULL, P_S3_CA},
    {"s3-force-path-style", no_argument, NULL, P_S3_PATH_STYLE},
    {"credentials-dir", required_argument, NULL, P_CRED_DIR},
    {"pvc-dir", required_argument, NULL, P_PVC_DIR},
    {"termination-log", required_argument, NULL, P_TERMLOG},
    {"help", no_argument, NULL, P_HELP},
    {NULL, 0, NULL, 0},
};

static const char usage_prune[] =
    "usage: etcd-operator snapshot-prune --snapshot-name NAME --snapshot-uid UID\n"
    "         (--s3-endpoint URL --s3-bucket B [--s3-key PREFIX] [--s3-region R]\n"
    "          [--s3-force-path-style] [--s3-ca-file F] [--credentials-dir DIR]\n"
    "          | --pvc-dir DIR) [--termination-log PATH]\n"
    "Deletes <prefix>/<name>.db (S3) or <dir>/<name>.db and its .uid stamp, only when\n"
    "the stored snapshot is stamped with UID. Anything else is left in place.\n";

__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t cap, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, cap, f, ap);
	va_end(ap);
}

static int parse(int argc, char **argv, struct popts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "", prune_options, NULL)) != -1) {
		switch (c) {
		case P_NAME:
			o->name = optarg;
			break;
		case P_UID:
			o->uid = optarg;
			break;
		case P_S3_ENDPOINT:
			o->s3_endpoint = optarg;
			break;
		case P_S3_BUCKET:
			o->s3_bucket = optarg;
			break;
		case P_S3_KEY:
			o->s3_key = optarg;
			break;
		case P_S3_REGION:
			o->s3_region = optarg;
			break;
		case P_S3_CA:
			o->s3_ca = optarg;
			break;
		case P_S3_PATH_STYLE:
			o->path_style = true;
			break;
		case P_CRED_DIR:
			o->cred_dir = optarg;
			break;
		case P_PVC_DIR:
			o->pvc_dir = optarg;
			break;
		case P_TERMLOG:
			o->termination_log = optarg;
			break;
		case P_HELP:
			fputs(usage_prune, stdout);
			return 0;
		default:
			fputs(usage_prune, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "etcd-operator: unexpected argument '%s'\n%s", argv[optind],
			usage_prune);
		return 2;
	}
	if (!o->name || !o->name[0] || strchr(o->name, '/') || strlen(o->name) > 200 || !o->uid ||
	    !o->uid[0] || strlen(o->uid) >= UID_CAP) {
		fprintf(stderr,
			"etcd-operator: --snapshot-name and --snapshot-uid are required\n%s",
			usage_prune);
		return 2;
	}
	if (!!o->pvc_dir == !!(o->s3_endpoint || o->s3_bucket) ||
	    (o->s3_bucket && !o->s3_endpoint) || (o->s3_endpoint && !o->s3_bucket)) {
		fprintf(stderr, "etcd-operator: exactly one destination: --s3-endpoint and "
				"--s3-bucket, or --pvc-dir\n");
		return 2;
	}
	if ((o->pvc_dir && strlen(o->pvc_dir) > ARG_LIMIT) ||
	    (o->s3_key && strlen(o->s3_key) > ARG_LIMIT)) {
		fprintf(stderr, "etcd-operator: paths and keys must be at most %d bytes long\n",
			ARG_LIMIT);
		return 2;
	}
	return -1;
}

/* The stamp <dir>/<file>.uid into uid ("" when absent). 0, or -1 with msg. */
static int read_stamp(const char *dir, const char *file, char *uid, size_t cap, char *msg,
		      size_t mcap)
{
	char path[PATH_CAP];
	ssize_t n;
	int fd;

	uid[0] = '\0';
	fmt(path, sizeof(path), "%s/%s" EO_FILESTORE_UID_SUFFIX, dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		fmt(msg, mcap, "open %s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, uid, cap - 1);
	close(fd);
	if (n < 0) {
		fmt(msg, mcap, "read %s: %s", path, strerror(errno));
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
	int fd;

	fmt(path, sizeof(path), "%s/%s", dir, file);
	if (unlink(path) != 0 && errno != ENOENT) {
		fmt(msg, cap, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		fmt(msg, cap, "fsync %s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int eo_prune_file(const char *dir, const char *name, const char *uid, char *msg, size_t cap)
{
	char file[NAME_CAP], stamp_file[NAME_CAP + 8], stamp[UID_CAP], path[PATH_CAP];
	struct stat st;

	if (dir == NULL || name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
	    strlen(name) > 200 || uid == NULL || uid[0] == '\0') {
		fmt(msg, cap, "invalid arguments");
		return -1;
	}
	fmt(file, sizeof(file), "%s%s", name, EO_SNAPSHOT_FILE_SUFFIX);
	fmt(stamp_file, sizeof(stamp_file), "%s" EO_FILESTORE_UID_SUFFIX, file);
	if (read_stamp(dir, file, stamp, sizeof(stamp), msg, cap) != 0)
		return -1;
	fmt(path, sizeof(path), "%s/%s", dir, file);
	if (lstat(path, &st) != 0) {
		if (errno != ENOENT) {
			fmt(msg, cap, "stat %s: %s", path, strerror(errno));
			return -1;
		}
		if (strcmp(stamp, uid) == 0) {
			/* An earlier prune removed the file and stopped before the stamp. */
			if (unlink_synced(dir, stamp_file, msg, cap) != 0)
				return -1;
			fmt(msg, cap, "nothing stored at file://%s (its stamp removed)", path);
			return 0;
		}
		fmt(msg, cap, "nothing stored at file://%s", path);
		return 0;
	}
	if (strcmp(stamp, uid) != 0) {
		fmt(msg, cap, "kept file://%s: %s", path,
		    stamp[0] ? "stamped with another snapshot's UID" : "it has no UID stamp");
		return 0;
	}
	/* The file before its stamp: a crash in between leaves a stamp the next run removes. */
	if (unlink_synced(dir, file, msg, cap) != 0 ||
	    unlink_synced(dir, stamp_file, msg, cap) != 0)
		return -1;
	fmt(msg, cap, "deleted file://%s", path);
	return 0;
}

static int prune_s3(const struct popts *o, char *msg, size_t cap)
{
	char ak[EO_S3_CRED_MAX], sk[EO_S3_CRED_MAX], tok[EO_S3_CRED_MAX], key[ARG_LIMIT + 300];
	char uri[LINE_CAP], err[1024];
	struct eo_s3_config c;
	struct eo_s3_head h;
	eo_s3 *s3 = NULL;
	int rc = -1;

	if (eo_snapshot_s3_key(key, sizeof(key), o->s3_key ? o->s3_key : "", o->name) != 0) {
		fmt(msg, cap, "S3 key too long");
		return -1;
	}
	if (eo_s3_load_credentials(o->cred_dir, ak, sk, tok, err, sizeof(err)) != 0) {
		fmt(msg, cap, "S3 credentials: %s", err);
		return -1;
	}
	c = (struct eo_s3_config){.endpoint = o->s3_endpoint,
				  .bucket = o->s3_bucket,
				  .region = o->s3_region,
				  .path_style = o->path_style,
				  .access_key = ak,
				  .secret_key = sk,
				  .session_token = tok,
				  .ca_file = o->s3_ca};
	rc = eo_s3_new(&c, &s3, err, sizeof(err));
	memset(sk, 0, sizeof(sk));
	memset(tok, 0, sizeof(tok));
	if (rc != 0) {
		fmt(msg, cap, "S3 setup: %s", err);
		return -1;
	}
	rc = -1;
	if (eo_s3_uri(s3, key, uri, sizeof(uri)) != 0)
		snprintf(uri, sizeof(uri), "%s", key);
	if (eo_s3_head(s3, key, &h, err, sizeof(err)) != 0) {
		fmt(msg, cap, "cannot tell whether %s is ours, so nothing is deleted: %s", uri,
		    err);
		goto out;
	}
	if (!h.exists) {
		fmt(msg, cap, "nothing stored at %s", uri);
		rc = 0;
		goto out;
	}
	if (strcmp(h.uid, o->uid) != 0) {
		fmt(msg, cap, "kept %s: %s", uri,
		    h.uid[0] ? "stamped with another snapshot's UID" : "it has no UID stamp");
		rc = 0;
		goto out;
	}
	if (eo_s3_delete(s3, key, err, sizeof(err)) != 0) {
		fmt(msg, cap, "deleting %s failed: %s", uri, err);
		goto out;
	}
	fmt(msg, cap, "deleted %s", uri);
	rc = 0;
out:
	eo_s3_free(s3);
	return rc;
}

static void write_termination(const char *path, const char *line)
{
	int fd;

	if (path == NULL)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (eo_write_all(fd, line, strlen(line)) != 0)
			eo_log_kv(EO_LOG_WARN, NULL, "cannot write the termination log", "path",
				  path, "error", strerror(errno), NULL);
		close(fd);
	}
}

int eo_agent_prune_main(int argc, char **argv)
{
	struct eo_log_ctx lc;
	char msg[LINE_CAP];
	struct popts o;
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "component", "snapshot-prune");
	eo_log_ctx_add(&lc, "snapshot", o.name);
	msg[0] = '\0';
	rc = o.pvc_dir ? eo_prune_file(o.pvc_dir, o.name, o.uid, msg, sizeof(msg))
		       : prune_s3(&o, msg, sizeof(msg));
	if (rc != 0) {
		eo_log_kv(EO_LOG_ERROR, &lc, "prune failed", "error", msg, NULL);
		write_termination(o.termination_log, msg);
		return 1;
	}
	eo_log_kv(EO_LOG_INFO, &lc, "prune done", "result", msg, NULL);
	printf("%s\n", msg);
	fflush(stdout);
	write_termination(o.termination_log, msg);
	return 0;
}
