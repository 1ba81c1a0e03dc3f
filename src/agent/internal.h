/*
 * agent/internal.h - what the agent subcommands (agent/cli.h) share: the parsed flags, the
 * usage texts, and the helpers for logs, results, termination logs and S3 set-up. Only
 * the files of src/agent include it.
 *
 *   cli.c       the option table, the usage texts, parsing and dispatch
 *   common.c    the shared helpers below
 *   snapshot.c  snapshot-agent
 *   restore.c   restore-agent
 *   rebuild.c   restore-rebuild
 *   prune.c     snapshot-prune
 *
 * adopt-data (adopt.c), data-guard (dataguard.c) and wait-peers (waitpeers.c) parse their
 * few "--flag VALUE" pairs with eo__agent_flags (common.c).
 */
#ifndef EO_AGENT_INTERNAL_H
#define EO_AGENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "obs/log.h"
#include "snapshot/s3.h"

#define MAX_ENDPOINTS 32
#define STAGED_NAME   "snapshot.db"
#define REBUILD_NAME  "rebuild"
#define FREE_MARGIN   (16ull * 1024 * 1024)

struct eo__agent_opts {
	const char *endpoints[MAX_ENDPOINTS];
	size_t nendpoints;
	const char *cacert, *cert, *key;
	const char *name, *uid;
	const char *s3_endpoint, *s3_bucket, *s3_key, *s3_region, *s3_ca, *cred_dir;
	bool path_style, s3_insecure;
	const char *expected_checksum;
	uint64_t part_size;
	unsigned parallel;
	const char *pvc_dir;
	const char *termination_log;
	long stall_s;
	const char *data_dir, *staging_dir, *file, *install_self;
	const char *etcdutl, *member_name, *initial_cluster, *cluster_token, *peer_url;
	const char *member_id; /* restore: refuse when set (the member already joined) */
};

/* The usage texts (cli.c), printed by --help and on a usage error. */
extern const char eo__agent_usage_snapshot[];
extern const char eo__agent_usage_restore[];
extern const char eo__agent_usage_rebuild[];
extern const char eo__agent_usage_prune[];

/* The subcommands: the process exit code. */
int eo__agent_snapshot(const struct eo__agent_opts *o);
int eo__agent_restore(const struct eo__agent_opts *o);
int eo__agent_rebuild(const struct eo__agent_opts *o);
int eo__agent_prune(const struct eo__agent_opts *o);

/* common.c */
int eo__agent_fail(const struct eo_log_ctx *lc, const char *msg, const char *err);
void eo__agent_termination_log(const struct eo__agent_opts *o, const char *line,
			       const struct eo_log_ctx *lc);
int eo__agent_report(const struct eo__agent_opts *o, json_t *j, const struct eo_log_ctx *lc);
int eo__agent_restore_fail(const struct eo__agent_opts *o, const struct eo_log_ctx *lc,
			   const char *reason, const char *what, const char *err);
void eo__agent_usage_fields(const struct timespec *t0, char *secs, size_t scap, char *rss,
			    size_t rcap);
uint64_t eo__agent_mono_ms(void);
int eo__agent_make_s3(const struct eo__agent_opts *o, eo_s3 **s3, char *err, size_t errcap);
bool eo__agent_data_dir_initialised(const char *data_dir);
/*
 * The etcd root password (spec.auth) from environment variable env, copied into buf and
 * cleansed in the environment at once; "" when not set. Never logged.
 */
void eo__agent_take_password(const char *env, char *buf, size_t cap);
int eo__agent_mkdir_p(const char *path, char *err, size_t errcap);
int eo__agent_refuse_joined(const struct eo__agent_opts *o, const struct eo_log_ctx *lc);

/* One "--flag VALUE" of a small subcommand: where its value goes. */
struct eo__agent_flag {
	const char *name;
	const char **slot;
};

/*
 * Parses argv[1..] as "--flag VALUE" pairs of flags[0..n). Returns -1 when all parsed, else
 * the exit code after printing usage: 0 for --help (to stdout, when help is true), 2 for an
 * unknown flag or a flag without its value (to stderr).
 */
int eo__agent_flags(int argc, char **argv, const struct eo__agent_flag *flags, size_t n, bool help,
		    const char *usage);

/* Removes path and everything below it (no link followed); 0 when gone or never there. */
int eo__agent_rm_rf(const char *path);

/* A whole decimal number in [lo, hi]: true and *out, false for anything else. */
bool eo__agent_parse_i64(const char *v, int64_t lo, int64_t hi, int64_t *out);

#endif
