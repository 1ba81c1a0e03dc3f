/* Helpers the agent subcommands share (agent/internal.h). */
#include "agent/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/restorefail.h"
#include "core/json.h"
#include "snapshot/store.h"

int eo__agent_fail(const struct eo_log_ctx *lc, const char *msg, const char *err)
{
	eo_log_kv(EO_LOG_ERROR, lc, msg, "error", err, NULL);
	return 1;
}

void eo__agent_termination_log(const struct eo__agent_opts *o, const char *line,
			       const struct eo_log_ctx *lc)
{
	int fd;

	if (!o->termination_log)
		return;
	fd = open(o->termination_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || eo_write_all(fd, line, strlen(line)) != 0)
		eo_log_kv(EO_LOG_WARN, lc, "cannot write the termination log", "path",
			  o->termination_log, "error", strerror(errno), NULL);
	if (fd >= 0)
		close(fd);
}

/* Prints the result line and writes it to the termination log when asked. */
int eo__agent_report(const struct eo__agent_opts *o, json_t *j, const struct eo_log_ctx *lc)
{
	char *line = eo_json_dumps(j, JSON_COMPACT, NULL);

	if (!line)
		return eo__agent_fail(lc, "cannot format the result", "out of memory");
	printf("%s\n", line);
	fflush(stdout);
	eo__agent_termination_log(o, line, lc);
	free(line);
	return 0;
}

/*
 * A restore step failed: logs it and leaves {"reason","message"} in the termination log
 * (api/restorefail.h), from which the EtcdCluster's condition is made. Returns 1.
 */
int eo__agent_restore_fail(const struct eo__agent_opts *o, const struct eo_log_ctx *lc,
			   const char *reason, const char *what, const char *err)
{
	char msg[EO_RESTORE_MESSAGE_MAX], doc[EO_RESTORE_FAILURE_MAX];

	eo_log_kv(EO_LOG_ERROR, lc, what, "reason", reason, "error", err, NULL);
	snprintf(msg, sizeof(msg), "%s: %s", what, err);
	if (eo_restore_failure_format(doc, sizeof(doc), reason, msg) == 0)
		eo__agent_termination_log(o, doc, lc);
	return 1;
}

/* Seconds since t0 (CLOCK_MONOTONIC) and this process's peak resident memory, for the logs. */
void eo__agent_usage_fields(const struct timespec *t0, char *secs, size_t scap, char *rss,
			    size_t rcap)
{
	struct timespec t1;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	snprintf(secs, scap, "%.3f",
		 (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		snprintf(rss, rcap, "%ld", ru.ru_maxrss);
	else
		snprintf(rss, rcap, "unknown");
}

uint64_t eo__agent_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The S3 client: 0; -1 when the credentials cannot be read; -2 for bad S3 settings. */
int eo__agent_make_s3(const struct eo__agent_opts *o, eo_s3 **s3, char *err, size_t errcap)
{
	char ak[EO_S3_CRED_MAX], sk[EO_S3_CRED_MAX], tok[EO_S3_CRED_MAX];
	struct eo_s3_config c;
	int rc;

	if (eo_s3_load_credentials(o->cred_dir, ak, sk, tok, err, errcap) != 0) {
		explicit_bzero(sk, sizeof(sk));
		explicit_bzero(tok, sizeof(tok));
		return -1;
	}
	c = (struct eo_s3_config){
	    .endpoint = o->s3_endpoint,
	    .bucket = o->s3_bucket,
	    .region = o->s3_region,
	    .path_style = o->path_style,
	    .access_key = ak,
	    .secret_key = sk,
	    .session_token = tok,
	    .ca_file = o->s3_ca,
	    .stall_timeout_s = o->stall_s,
	    .insecure = o->s3_insecure,
	};
	rc = eo_s3_new(&c, s3, err, errcap) == 0 ? 0 : -2;
	explicit_bzero(sk, sizeof(sk));
	explicit_bzero(tok, sizeof(tok));
	return rc;
}

void eo__agent_take_password(const char *env, char *buf, size_t cap)
{
	char *v = getenv(env);

	buf[0] = '\0';
	if (v == NULL)
		return;
	snprintf(buf, cap, "%s", v);
	explicit_bzero(v, strlen(v));
}

bool eo__agent_data_dir_initialised(const char *data_dir)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/member", data_dir);
	return stat(path, &st) == 0;
}

int eo__agent_mkdir_p(const char *path, char *err, size_t errcap)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		snprintf(err, errcap, "path too long");
		return -1;
	}
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0750) != 0 && errno != EEXIST)
			goto bad;
		*p = '/';
	}
	if (mkdir(buf, 0750) != 0 && errno != EEXIST)
		goto bad;
	return 0;
bad:
	eo_errf(err, errcap, "mkdir %s: %s", buf, strerror(errno));
	return -1;
}

/*
 * A restore runs once, before the member joins: a Pod that names the member's etcd ID
 * (--member-id) is one of a member that already joined, and restoring the old snapshot there
 * would start a second cluster under the same IDs. Refuse (fail closed).
 */
int eo__agent_refuse_joined(const struct eo__agent_opts *o, const struct eo_log_ctx *lc)
{
	char err[256];

	snprintf(err, sizeof(err),
		 "the member already joined etcd as member %.64s; a restore never runs again "
		 "on it (its lost data is replaced by a new member, not by the old snapshot)",
		 o->member_id);
	return eo__agent_restore_fail(o, lc, EO_REASON_RESTORE_FAILED, "refusing to restore", err);
}

static const char **flag_slot(const char *arg, const struct eo__agent_flag *flags, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(arg, flags[i].name) == 0)
			return flags[i].slot;
	return NULL;
}

int eo__agent_flags(int argc, char **argv, const struct eo__agent_flag *flags, size_t n, bool help,
		    const char *usage)
{
	for (int i = 1; i < argc; i++) {
		const char **slot = flag_slot(argv[i], flags, n);

		if (help && strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		if (slot == NULL || i + 1 >= argc) {
			fputs(usage, stderr);
			return 2;
		}
		*slot = argv[++i];
	}
	return -1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int eo__agent_rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool eo__agent_parse_i64(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi)
		return false;
	*out = n;
	return true;
}
