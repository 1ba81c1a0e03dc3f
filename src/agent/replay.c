/*
 * `etcd-operator archive-replay` (agent/archive.h): a snapshot file of an archived cluster
 * at a chosen revision or time (issue 20 item 2, the agent's part).
 *
 *   1. From the manifest (--archive-dir), the newest base whose chain of segments reaches
 *      the target without a hole or a gap (archive/manifest.h).
 *   2. `etcdutl snapshot restore` of that base into --work-dir, and a private etcd on it
 *      (127.0.0.1 only, on free ports, with room for large txns).
 *   3. Every archived revision after the restored one (etcd reports it: the base's recorded
 *      revision is a lower bound) up to the target, each as one txn of its puts and deletes,
 *      so etcd makes exactly one revision of it: after each, etcd's revision must be the
 *      archived one, or the replay stops ("diverged"). A put under a lease etcd does not
 *      know grants that lease again under its original ID with --lease-ttl (default 3600 s).
 *   4. etcd's HashKV at the point (the hash etcd compares between members: equal to the
 *      source cluster's HashKV at that revision when the history is the same), then a snapshot of
 * the private etcd (integrity hash checked) written to --out (temporary file, fsync, rename), then
 * the private etcd is stopped and its data removed.
 *
 * The file is an ordinary etcd snapshot: the restore path that exists (restore-rebuild
 * --file) takes it as it takes any other. Prints {"file","revision","sha256","sizeBytes",
 * "replayed","hashKV"} as the last line on stdout.
 *
 * Known limit: a lease of the base with a TTL shorter than the replay can expire during it;
 * its keys' deletion then makes a revision the archive does not have, and the replay stops
 * as diverged rather than produce a different state.
 */
#include "agent/archive.h"
#include "agent/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "archive/manifest.h"
#include "api/restorefail.h"
#include "api/timeutil.h"
#include "archive/segment.h"
#include "core/sleep.h"
#include "etcd/client.h"
#include "obs/log.h"
#include "snapshot/etcdsnap.h"
#include "snapshot/filestore.h"
#include "snapshot/integrity.h"

extern char **environ;

#define MAX_SEG_PATHS  100000
#define REPLAY_TXN_OPS "100000"

struct replay_opts {
	const char *archive_dir, *out, *work_dir, *etcd, *etcdutl;
	const char *data_dir, *termination_log; /* the seed's init container (desired/restore.h) */
	int64_t target_rev, target_ms;
	long lease_ttl;
};

struct replay {
	eo_etcd_client *c;
	struct eo_log_ctx lc;
	long lease_ttl;
	int64_t replayed, last_ms; /* last_ms: when the archiver received the last one */
	struct eo_etcd_txn_op *ops;
	size_t cap;
};

static const char usage[] =
    "usage: etcd-operator archive-replay --archive-dir DIR --out FILE --work-dir DIR\n"
    "         [--target-revision R | --target-time RFC3339] [--etcd PATH]\n"
    "         [--etcdutl PATH] [--lease-ttl SECONDS] [--data-dir DIR]\n"
    "         [--termination-log PATH]\n"
    "Writes FILE, an etcd snapshot of the archived cluster at revision R (or at the last\n"
    "revision received at or before the time; default: the newest archived point): the\n"
    "newest base snapshot that reaches it, restored into a private etcd under the work\n"
    "directory, with every later archived revision replayed as one txn. Refuses a point\n"
    "outside every recoverable window, and stops when etcd's revision does not follow the\n"
    "archive's. Prints {\"file\",\"revision\",\"sha256\",\"sizeBytes\",\"replayed\",\n"
    "\"hashKV\",\"time\"}: HashKV is etcd's hash of the history at the point (not on\n"
    "etcd 3.4); time, when the archiver received that revision. As a restore step:\n"
    "with --data-dir, does nothing when DIR/member exists, and reports again without\n"
    "replaying when FILE and FILE.result (written after it, for the same target) exist\n"
    "and FILE's integrity hash holds; refuses a\n"
    "work directory with less free space than about twice the base and segments; a\n"
    "failure leaves {\"reason\",\"message\"} in the termination log (api/restorefail.h).\n";

/* ---- choosing the base ------------------------------------------------------------ */

/*
 * The base to start from for the target: the newest base at or before it whose chain
 * reaches it. *target_rev receives the revision the replay stops at when it was given as
 * "latest" (0) or by time. -1 with err when no window holds the point.
 */
static int choose_base(const struct eo_archive_manifest *m, const struct replay_opts *o,
		       int64_t *target_rev, char *err, size_t errcap)
{
	int best = -1;
	size_t b;

	*target_rev = o->target_rev;
	for (b = 0; b < m->n_bases; b++) {
		int64_t to = 0, to_ms = 0;

		eo_archive_chain(m, b, &to, &to_ms, NULL);
		if (o->target_ms > 0) {
			if (m->bases[b].time_ms > o->target_ms)
				continue;
		} else if (o->target_rev > 0) {
			if (m->bases[b].revision > o->target_rev || to < o->target_rev)
				continue;
		}
		if (o->target_rev == 0 && o->target_ms == 0 && best >= 0) {
			int64_t bto = 0, bms = 0;

			eo_archive_chain(m, (size_t)best, &bto, &bms, NULL);
			if (to < bto)
				continue;
		}
		best = (int)b;
	}
	if (best < 0) {
		if (o->target_ms > 0)
			snprintf(err, errcap, "no base snapshot was taken at or before that time");
		else if (o->target_rev > 0)
			snprintf(err, errcap,
				 "revision %" PRId64 " is outside every recoverable window",
				 o->target_rev);
		else
			snprintf(err, errcap, "the archive holds no base snapshot");
		return -1;
	}
	if (o->target_rev == 0) {
		int64_t to = 0, to_ms = 0;

		eo_archive_chain(m, (size_t)best, &to, &to_ms, NULL);
		*target_rev = to; /* latest, or the chain's end when the time cuts it short */
	}
	return best;
}

/* ---- the private etcd --------------------------------------------------------------- */

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int run_wait(char **args, char *err, size_t errcap)
{
	pid_t pid;
	int status, e;

	fflush(NULL);
	e = posix_spawnp(&pid, args[0], NULL, NULL, args, environ);
	if (e != 0) {
		snprintf(err, errcap, "%s: %s", args[0], strerror(e));
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errcap, "waiting for %s: %s", args[0], strerror(errno));
			return -1;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errcap, "%s exited with %s %d", args[0],
			 WIFEXITED(status) ? "status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	return 0;
}

struct private_etcd {
	pid_t pid;
	char client_url[64], data[PATH_MAX];
};

/* Restores the base into work/replay and starts etcd on it. */
static int etcd_start(const struct replay_opts *o, const char *base, struct private_etcd *pe,
		      char *err, size_t errcap)
{
	char peer[64], cluster[96], logpath[PATH_MAX];
	char *rargs[16], *eargs[32];
	int cp = free_port(), pp = free_port(), n = 0, e;
	posix_spawn_file_actions_t fa;

	if (cp < 0 || pp < 0 || cp == pp) {
		snprintf(err, errcap, "no free local port for the replay's etcd");
		return -1;
	}
	snprintf(pe->data, sizeof(pe->data), "%s/replay-data", o->work_dir);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", pp);
	snprintf(pe->client_url, sizeof(pe->client_url), "http://127.0.0.1:%d", cp);
	snprintf(cluster, sizeof(cluster), "replay=%s", peer);
	eo__agent_rm_rf(pe->data);
	rargs[n++] = (char *)o->etcdutl;
	rargs[n++] = "snapshot";
	rargs[n++] = "restore";
	rargs[n++] = (char *)base;
	rargs[n++] = "--data-dir";
	rargs[n++] = pe->data;
	rargs[n++] = "--name";
	rargs[n++] = "replay";
	rargs[n++] = "--initial-cluster";
	rargs[n++] = cluster;
	rargs[n++] = "--initial-advertise-peer-urls";
	rargs[n++] = peer;
	rargs[n] = NULL;
	if (run_wait(rargs, err, errcap) != 0)
		return -1;
	n = 0;
	eargs[n++] = (char *)o->etcd;
	eargs[n++] = "--name";
	eargs[n++] = "replay";
	eargs[n++] = "--data-dir";
	eargs[n++] = pe->data;
	eargs[n++] = "--listen-client-urls";
	eargs[n++] = pe->client_url;
	eargs[n++] = "--advertise-client-urls";
	eargs[n++] = pe->client_url;
	eargs[n++] = "--listen-peer-urls";
	eargs[n++] = peer;
	eargs[n++] = "--initial-advertise-peer-urls";
	eargs[n++] = peer;
	eargs[n++] = "--initial-cluster";
	eargs[n++] = cluster;
	eargs[n++] = "--max-txn-ops";
	eargs[n++] = REPLAY_TXN_OPS;
	eargs[n++] = "--max-request-bytes";
	eargs[n++] = "33554432";
	eargs[n] = NULL;
	snprintf(logpath, sizeof(logpath), "%s/replay-etcd.log", o->work_dir);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	fflush(NULL);
	e = posix_spawnp(&pe->pid, o->etcd, &fa, NULL, eargs, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0) {
		snprintf(err, errcap, "%s: %s", o->etcd, strerror(e));
		pe->pid = 0;
		return -1;
	}
	return 0;
}

static void etcd_stop(struct private_etcd *pe)
{
	int status;

	if (pe->pid > 0) {
		kill(pe->pid, SIGTERM);
		while (waitpid(pe->pid, &status, 0) < 0 && errno == EINTR)
			;
		pe->pid = 0;
	}
	/* Also after a failed start: the restored data must not stay behind. */
	if (pe->data[0] != '\0')
		eo__agent_rm_rf(pe->data);
}

/* Waits until the private etcd answers Status; its revision lands in *rev. */
static int etcd_ready(struct replay *r, const struct private_etcd *pe, int64_t *rev, char *err,
		      size_t errcap)
{
	int64_t until = eo_mono_ms() + 60000;

	while (eo_mono_ms() < until) {
		struct eo_etcd_status st = {0};
		eo_etcd_err e = eo_etcd_status(r->c, pe->client_url, &st, NULL);

		*rev = st.revision;
		eo_etcd_status_clear(&st);
		if (e == EO_ETCD_OK)
			return 0;
		if (waitpid(pe->pid, NULL, WNOHANG) == pe->pid) {
			snprintf(err, errcap,
				 "the replay's etcd exited (see its log in the work dir)");
			return -1;
		}
		eo_sleep_ms(200);
	}
	snprintf(err, errcap, "the replay's etcd did not answer within 60 s");
	return -1;
}

/* ---- the replay ----------------------------------------------------------------------- */

static int apply_rev(void *ud, const struct eo_archive_rev *rev, char *err, size_t errcap)
{
	struct replay *r = ud;
	struct eo_etcd_detail d = {0};
	int64_t got = 0;
	eo_etcd_err e;
	size_t i;

	if (rev->n > r->cap) {
		free(r->ops);
		r->ops = calloc(rev->n, sizeof(*r->ops));
		r->cap = r->ops ? rev->n : 0;
		if (r->ops == NULL) {
			snprintf(err, errcap, "out of memory for %zu events", rev->n);
			return -1;
		}
	}
	for (i = 0; i < rev->n; i++) {
		const struct eo_archive_event *ev = &rev->events[i];

		r->ops[i] =
		    (struct eo_etcd_txn_op){.del = ev->type == EO_ARCHIVE_DELETE,
					    .key = ev->key,
					    .key_len = ev->key_len,
					    .value = ev->value,
					    .value_len = ev->value_len,
					    .lease = ev->type == EO_ARCHIVE_PUT ? ev->lease : 0};
	}
	e = eo_etcd_txn_apply(r->c, r->ops, rev->n, &got, &d);
	if (e != EO_ETCD_OK && strstr(d.message, "lease not found") != NULL) {
		for (i = 0; i < rev->n; i++) {
			if (r->ops[i].lease == 0)
				continue;
			/* Already granted (an earlier op of this revision): etcd says so; fine. */
			eo_etcd_lease_grant_id(r->c, r->ops[i].lease, r->lease_ttl, NULL);
		}
		e = eo_etcd_txn_apply(r->c, r->ops, rev->n, &got, &d);
	}
	if (e != EO_ETCD_OK) {
		snprintf(err, errcap, "revision %" PRId64 ": %s: %s", rev->revision,
			 eo_etcd_strerror(e), d.message);
		return -1;
	}
	if (got != rev->revision) {
		snprintf(err, errcap,
			 "diverged: archived revision %" PRId64 " became etcd revision %" PRId64,
			 rev->revision, got);
		return -1;
	}
	r->replayed++;
	r->last_ms = rev->received_ms;
	return 0;
}

static int fw_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	return eo_filestore_write(ud, p, n, err, errcap);
}

/* The snapshot of the private etcd into --out. */
static int write_out(const struct replay_opts *o, const struct private_etcd *pe,
		     struct eo_snapfetch_result *res, char *err, size_t errcap)
{
	struct eo_filestore_writer fw = {0};
	struct eo_snapfetch_opts fo = {.endpoint = pe->client_url};
	char dir[PATH_MAX];
	const char *slash = strrchr(o->out, '/');

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->out), o->out);
	if (eo_filestore_begin(&fw, dir, slash ? slash + 1 : o->out, err, errcap) != 0)
		return -1;
	if (eo_snapshot_fetch(&fo, fw_sink, &fw, res, err, errcap) != 0 ||
	    eo_filestore_commit(&fw, NULL, true, err, errcap) != 0) {
		eo_filestore_abort(&fw);
		return -1;
	}
	return 0;
}

/* The segment paths of base b's chain, in revision order (malloc'd strings). */
static char **chain_paths(const struct eo_archive_manifest *m, size_t b, const char *dir, size_t *n)
{
	bool *used = calloc(m->n_segs + 1, sizeof(bool));
	char **paths = calloc(m->n_segs + 1, sizeof(char *));
	int64_t to = 0, to_ms = 0;
	size_t i;

	*n = 0;
	if (used == NULL || paths == NULL) {
		free(used);
		free(paths);
		return NULL;
	}
	eo_archive_chain(m, b, &to, &to_ms, used);
	for (i = 0; i < m->n_segs; i++) {
		if (!used[i])
			continue;
		if (asprintf(&paths[*n], "%s/segments/%s", dir, m->segs[i].name) < 0) {
			paths[*n] = NULL;
			break;
		}
		(*n)++;
	}
	free(used);
	return paths;
}

/* ---- as a restore step: idempotence, free space, the result ------------------------ */

/* FILE.result: the result line, written after FILE is in place. */
static void result_path(const struct replay_opts *o, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s.result", o->out);
}

/* What was asked, as the result records it: "revision:R", "time:MS" or "latest". */
static void request_text(const struct replay_opts *o, char *buf, size_t cap)
{
	if (o->target_rev > 0)
		snprintf(buf, cap, "revision:%" PRId64, o->target_rev);
	else if (o->target_ms > 0)
		snprintf(buf, cap, "time:%" PRId64, o->target_ms);
	else
		snprintf(buf, cap, "latest");
}

/*
 * As a restore step (--data-dir), an earlier run for the same request finished (the
 * container restarted after it): FILE and its result are there and FILE's integrity hash
 * holds. Reports that result again; true. Otherwise removes what an interrupted run left
 * and returns false.
 */
static bool already_done(const struct replay_opts *o, const struct eo__agent_opts *ao,
			 const struct eo_log_ctx *lc)
{
	char rpath[PATH_MAX], err[512], req[64];
	const char *was;
	json_t *j;

	if (o->data_dir == NULL)
		return false;
	result_path(o, rpath, sizeof(rpath));
	request_text(o, req, sizeof(req));
	j = json_load_file(rpath, 0, NULL);
	was = json_string_value(json_object_get(j, "request"));
	if (j != NULL && json_is_object(j) && was != NULL && strcmp(was, req) == 0 &&
	    eo_snapcheck_file(o->out, NULL, NULL, err, sizeof(err)) == EO_SNAPCHECK_OK) {
		eo_log_kv(EO_LOG_INFO, lc, "the snapshot at the point is already written", "file",
			  o->out, NULL);
		eo__agent_report(ao, j, lc);
		json_decref(j);
		return true;
	}
	json_decref(j);
	unlink(rpath);
	unlink(o->out);
	return false;
}

/* Bytes of the base and of the chain's segment files (0 for a file that cannot be read). */
static uint64_t input_bytes(const char *base, char **paths, size_t n)
{
	struct stat st;
	uint64_t sum = 0;
	size_t i;

	if (stat(base, &st) == 0)
		sum += (uint64_t)st.st_size;
	for (i = 0; i < n; i++)
		if (stat(paths[i], &st) == 0)
			sum += (uint64_t)st.st_size;
	return sum;
}

/*
 * The private etcd's data (the base restored, then the replayed revisions) and the
 * snapshot written from it are each about the inputs' size; the rebuild step then needs
 * the snapshot's size again while the snapshot is still there.
 */
static int check_space(const struct replay_opts *o, uint64_t inputs, char *err, size_t errcap)
{
	uint64_t free_bytes = 0, need = 2 * inputs + ((uint64_t)64 << 20);

	if (eo_fs_free_bytes(o->work_dir, &free_bytes, err, errcap) != 0)
		return -1;
	if (free_bytes < need) {
		snprintf(err, errcap,
			 "the data volume has %llu bytes free; replaying %llu bytes of archive "
			 "needs about %llu: make spec.storage.size larger and recreate the cluster",
			 (unsigned long long)free_bytes, (unsigned long long)inputs,
			 (unsigned long long)need);
		return 1;
	}
	return 0;
}

/*
 * Writes FILE.result (temporary file, rename; not fsynced: a result lost in a crash only
 * makes the next run replay again, and already_done checks FILE's own integrity hash).
 */
static int write_result(const struct replay_opts *o, json_t *j, char *err, size_t errcap)
{
	char rpath[PATH_MAX], tmp[PATH_MAX + 8];

	result_path(o, rpath, sizeof(rpath));
	snprintf(tmp, sizeof(tmp), "%s.tmp", rpath);
	if (json_dump_file(j, tmp, JSON_COMPACT) != 0 || rename(tmp, rpath) != 0) {
		eo_errf(err, errcap, "write %s: %s", rpath, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static json_t *result_json(const struct replay_opts *o, const struct replay *r, int64_t last,
			   int64_t time_ms, const struct eo_snapfetch_result *res, bool have_hash,
			   uint32_t hash)
{
	char when[EO_TIME_BUF] = "", req[64];
	json_t *j = json_pack("{s:s, s:I, s:s, s:I, s:I}", "file", o->out, "revision",
			      (json_int_t)last, "sha256", res->sha256, "sizeBytes",
			      (json_int_t)res->size, "replayed", (json_int_t)r->replayed);

	request_text(o, req, sizeof(req));
	if (j != NULL)
		json_object_set_new(j, "request", json_string(req));
	if (j != NULL && have_hash)
		json_object_set_new(j, "hashKV", json_integer(hash));
	if (j != NULL && time_ms > 0 &&
	    eo_time_format((time_t)(time_ms / 1000), when, sizeof(when)) == 0)
		json_object_set_new(j, "time", json_string(when));
	return j;
}

static int run(const struct replay_opts *o)
{
	struct eo__agent_opts ao = {.termination_log = o->termination_log};
	struct eo_archive_manifest m = {0};
	struct private_etcd pe = {0};
	struct replay r = {.lease_ttl = o->lease_ttl};
	struct eo_snapfetch_result res = {0};
	struct eo_archive_target t = {.time_ms = o->target_ms};
	char err[2048] = "", base[PATH_MAX], revbuf[32];
	const char *reason = EO_REASON_RESTORE_REPLAY_FAILED, *what = "replay failed";
	char **paths = NULL;
	size_t n = 0, i;
	int64_t target = 0, restored = 0, last = 0;
	uint32_t hash = 0;
	bool have_hash = false;
	int b, rc = 1, sp;
	json_t *j;

	eo_log_ctx_init(&r.lc);
	eo_log_ctx_add(&r.lc, "component", "archive-replay");
	if (o->data_dir != NULL && eo__agent_data_dir_initialised(o->data_dir)) {
		eo_log_kv(EO_LOG_INFO, &r.lc, "the data dir is already initialised; nothing to do",
			  "data_dir", o->data_dir, NULL);
		return 0;
	}
	if (already_done(o, &ao, &r.lc))
		return 0;
	if (eo_agent_archive_load(o->archive_dir, &m, err, sizeof(err)) != 0 ||
	    (m.n_bases == 0 && snprintf(err, sizeof(err),
					"%s/manifest.json: no archive (no manifest, or no base "
					"snapshot in it)",
					o->archive_dir) > 0)) {
		reason = EO_REASON_RESTORE_ARCHIVE_UNREADABLE;
		what = "cannot read the archive";
		goto out;
	}
	b = choose_base(&m, o, &target, err, sizeof(err));
	if (b < 0) {
		reason = EO_REASON_RESTORE_TARGET_OUTSIDE_ARCHIVE;
		what = "the target is outside the archive";
		goto out;
	}
	t.revision = target;
	r.last_ms = m.bases[b].time_ms;
	snprintf(base, sizeof(base), "%s/bases/%s", o->archive_dir, m.bases[b].name);
	paths = chain_paths(&m, (size_t)b, o->archive_dir, &n);
	if (paths == NULL) {
		snprintf(err, sizeof(err), "out of memory for the segment list");
		goto out;
	}
	if (eo__agent_mkdir_p(o->work_dir, err, sizeof(err)) != 0)
		goto out;
	sp = check_space(o, input_bytes(base, paths, n), err, sizeof(err));
	if (sp != 0) {
		if (sp > 0)
			reason = EO_REASON_RESTORE_VOLUME_TOO_SMALL;
		what = sp > 0 ? "restore volume too small" : "free-space check failed";
		goto out;
	}
	snprintf(revbuf, sizeof(revbuf), "%" PRId64, target);
	eo_log_kv(EO_LOG_INFO, &r.lc, "replaying", "base", m.bases[b].name, "target_revision",
		  revbuf, NULL);
	if (etcd_start(o, base, &pe, err, sizeof(err)) != 0)
		goto out;
	{
		const char *eps[1] = {pe.client_url};
		struct eo_etcd_config cfg = {
		    .endpoints = eps, .n_endpoints = 1, .timeout_ms = 30000, .max_body = 64 << 20};

		if (eo_etcd_client_new(&cfg, &r.c, NULL) != EO_ETCD_OK) {
			snprintf(err, sizeof(err), "cannot make a client for the replay's etcd");
			goto out;
		}
	}
	if (etcd_ready(&r, &pe, &restored, err, sizeof(err)) != 0)
		goto out;
	if (restored > target) {
		snprintf(err, sizeof(err),
			 "the base already holds revision %" PRId64 ", past the target %" PRId64,
			 restored, target);
		reason = EO_REASON_RESTORE_TARGET_OUTSIDE_ARCHIVE;
		what = "the target is outside the archive";
		goto out;
	}
	if (eo_archive_replay((const char *const *)paths, n, restored, true, &t, apply_rev, &r,
			      &last, err, sizeof(err)) != 0)
		goto out;
	if (o->target_ms == 0 && last != target) {
		snprintf(err, sizeof(err), "the replay ended at %" PRId64 ", not at %" PRId64, last,
			 target);
		goto out;
	}
	{
		struct eo_etcd_detail d = {0};
		eo_etcd_err e = eo_etcd_hash_kv(r.c, last, &hash, NULL, &d);

		/* etcd 3.4's gateway has no HashKV: the result then has no hashKV. */
		have_hash = e == EO_ETCD_OK;
		if (!have_hash && strcmp(d.message, "Not Found") != 0) {
			snprintf(err, sizeof(err), "HashKV of the replay's etcd: %s", d.message);
			goto out;
		}
	}
	if (write_out(o, &pe, &res, err, sizeof(err)) != 0)
		goto out;
	j = result_json(o, &r, last, r.last_ms, &res, have_hash, hash);
	if (j == NULL || (o->data_dir != NULL && write_result(o, j, err, sizeof(err)) != 0)) {
		if (j == NULL)
			snprintf(err, sizeof(err), "out of memory for the result");
		json_decref(j);
		goto out;
	}
	eo__agent_report(&ao, j, &r.lc);
	json_decref(j);
	snprintf(revbuf, sizeof(revbuf), "%" PRId64, last);
	eo_log_kv(EO_LOG_INFO, &r.lc, "snapshot at the point written", "file", o->out, "revision",
		  revbuf, NULL);
	rc = 0;
out:
	if (rc != 0)
		eo__agent_restore_fail(&ao, &r.lc, reason, what, err);
	eo_etcd_client_free(r.c);
	etcd_stop(&pe);
	for (i = 0; paths != NULL && i < n; i++)
		free(paths[i]);
	free(paths);
	free(r.ops);
	eo_archive_manifest_clear(&m);
	return rc;
}

/* ---- flags -------------------------------------------------------------------------- */

/* "2026-11-28T01:02:03Z" (UTC, optional fraction) to Unix ms. */
static bool parse_time(const char *v, int64_t *ms)
{
	struct tm tm = {0};
	const char *p = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm);
	long frac = 0, scale = 1000;

	if (p == NULL)
		return false;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
	}
	if (strcmp(p, "Z") != 0)
		return false;
	*ms = (int64_t)timegm(&tm) * 1000 + frac;
	return *ms > 0;
}

int eo_agent_replay_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"archive-dir", required_argument, NULL, 'a'},
	    {"out", required_argument, NULL, 'o'},
	    {"work-dir", required_argument, NULL, 'w'},
	    {"etcd", required_argument, NULL, 'e'},
	    {"etcdutl", required_argument, NULL, 'u'},
	    {"target-revision", required_argument, NULL, 'r'},
	    {"target-time", required_argument, NULL, 't'},
	    {"lease-ttl", required_argument, NULL, 'l'},
	    {"data-dir", required_argument, NULL, 'd'},
	    {"termination-log", required_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct replay_opts o = {.etcd = "etcd", .etcdutl = "etcdutl", .lease_ttl = 3600};
	int64_t n = 0;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o.archive_dir = optarg;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'w':
			o.work_dir = optarg;
			break;
		case 'e':
			o.etcd = optarg;
			break;
		case 'u':
			o.etcdutl = optarg;
			break;
		case 'r':
			if (!eo__agent_parse_i64(optarg, 1, INT64_MAX, &o.target_rev)) {
				fprintf(stderr,
					"etcd-operator: --target-revision needs a revision\n");
				return 2;
			}
			break;
		case 't':
			if (!parse_time(optarg, &o.target_ms)) {
				fprintf(stderr,
					"etcd-operator: --target-time needs an RFC 3339 UTC "
					"time, e.g. 2026-11-28T01:02:03Z\n");
				return 2;
			}
			break;
		case 'l':
			if (!eo__agent_parse_i64(optarg, 1, 30L * 86400, &n)) {
				fprintf(stderr,
					"etcd-operator: --lease-ttl: 1 to 2592000 seconds\n");
				return 2;
			}
			o.lease_ttl = (long)n;
			break;
		case 'd':
			o.data_dir = optarg;
			break;
		case 'T':
			o.termination_log = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc || !o.archive_dir || !o.out || !o.work_dir ||
	    (o.target_rev > 0 && o.target_ms > 0)) {
		fputs(usage, stderr);
		return 2;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "etcd-operator: curl_global_init failed\n");
		return 1;
	}
	rc = run(&o);
	curl_global_cleanup();
	return rc;
}
